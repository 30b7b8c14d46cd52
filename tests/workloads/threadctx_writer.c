/* threadctx_writer.c - ground truth for OpenTelemetry thread context (OTEP
 * 4947): threads that burn CPU while their `otel_thread_ctx_v1` names known
 * spans, each timing its own CPU time under each span.
 *
 * threadctx_writer defines the TLS pointer `otel_thread_ctx_v1` itself and
 * exports it in .dynsym (linked with --export-dynamic-symbol, see
 * workloads.mk); the linker relaxes its accesses to local-exec, the static
 * TLS block of the executable. The library variants leave the variable to
 * an SDK-like library (lib/otelctx_lib.c): threadctx_writer_desc and
 * threadctx_writer_gd are linked with libotelctx_desc.so (TLSDESC) and
 * libotelctx_gd.so (general dynamic); threadctx_writer_dl dlopen()s the
 * library named by -L before it starts its threads.
 *
 * Good threads (burn_t0, burn_t1, ...): thread i owns one record (trace id
 * bytes 0x10 * (i + 1) + k, three spans). It cycles: span 0 for 1 slice, span 1 for 2 slices,
 * span 2 for 3 slices, then 1 slice with no context (pointer NULL), a slice
 * being SLICE_MS of its own CPU time. Span changes follow the OTEP's fixed-
 * record protocol: valid 0, compiler fence, new ids, fence, valid 1.
 * Each span's record also carries attributes (attrs-data): key 0
 * "http.route" = "/t<i>/s<s>", key 1 "http.method" = "GET"/"POST"/"PUT"
 * by span, then an entry with key index 9, which the key map does not
 * have (a reader drops it). The key map is published as the process
 * context's threadlocal.attribute_key_map (with threadlocal.schema_version
 * "tlsdesc_v1_dev", OTEP 4947) in a memfd mapping named OTEL_CTX (OTEP 4719).
 * With -m, three more threads (each on the CPU about a quarter of the
 * time) publish malformed contexts a reader must
 * ignore: burn_invalid (valid 0 with ids set), burn_unmapped (the pointer
 * names unmapped memory) and burn_garbage (valid 0xa5 and random bytes).
 *
 * Usage: threadctx_writer -g GOFILE -d SECONDS -o TRUTH.json [-t THREADS] [-m] [-w]
 *        threadctx_writer -T  (prints the variable's offset from the thread pointer)
 *        threadctx_writer_dl -L LIB ...
 * Prints "ready PID", waits until GOFILE exists, runs SECONDS, writes
 * {"threads": [{"tid": T, "func": "burn_t0", "trace_id": "hex",
 *   "spans": {"span hex": cpu_s, ...}, "none": cpu_s,
 *   "attrs": {"span hex": {"http.route": "/t0/s0", "http.method": "GET"}, ...}}, ...],
 *  "malformed": [{"tid": T, "func": "burn_invalid", "cpu": s}, ...],
 *  "waiter": {"tid": T, "trace_id": "hex", "span_id": "hex", "sleeps": N}}
 * With -w, one more thread (wait_in_span) keeps a span attached while it
 * sleeps 10 ms at a time: an off-CPU capture must link its waits to it.
 * prints "done", then waits to be killed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/burn.h"

#define MAX_THREADS 8
#define NSPANS 3
#define SLICE_MS 5 /* short: many cycles, so load bursts average out */

/* OTEP 4947 Thread-Local Context Record: byte-packed, host endian. */
struct otel_thread_ctx_record {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t trace_flags;
	uint16_t attrs_data_size;
	uint8_t attrs_data[36];
} __attribute__((packed, aligned(8)));

#if defined(CTX_LINKED)
/* In the library this is linked with. */
void otelctx_set(void *rec);
static void (*ctx_set)(void *) = otelctx_set;
#elif defined(CTX_DLOPEN)
#include <dlfcn.h>
static void (*ctx_set)(void *); /* from the library -L names */
#else
/* The variable readers look up in .dynsym (STT_TLS). */
__attribute__((visibility("default"))) __thread void *otel_thread_ctx_v1;

static void set_own(void *rec)
{
	otel_thread_ctx_v1 = rec;
}
static void (*ctx_set)(void *) = set_own;
#endif

struct thread_truth {
	int tid;
	const char *func;
	uint8_t trace_id[16];
	uint8_t span_ids[NSPANS][8];
	double span_cpu[NSPANS];
	uint8_t attrs[NSPANS][36]; /* attrs-data of each span */
	uint16_t attrs_size[NSPANS];
	char route[NSPANS][16];
	double none_cpu;
	double cpu; /* malformed threads: all their CPU time */
};

static const char *const methods[NSPANS] = {"GET", "POST", "PUT"};
static volatile int stop;
static struct thread_truth good[MAX_THREADS], bad[3];
static int ngood = 2;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fence(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Point the record at span @s of @t (the fixed-record update protocol). */
static void set_span(volatile struct otel_thread_ctx_record *r, const struct thread_truth *t,
		     int s)
{
	r->valid = 0;
	fence();
	for (int i = 0; i < 16; i++)
		r->trace_id[i] = t->trace_id[i];
	for (int i = 0; i < 8; i++)
		r->span_id[i] = t->span_ids[s][i];
	r->trace_flags = 1; /* sampled */
	for (int i = 0; i < t->attrs_size[s]; i++)
		r->attrs_data[i] = t->attrs[s][i];
	r->attrs_data_size = t->attrs_size[s];
	fence();
	r->valid = 1;
}

/* Burn @secs of this thread's CPU time in the caller's function. */
#define BURN_FOR(secs)                                  \
	do {                                            \
		double end_ = cpu_now() + (secs);       \
		while (cpu_now() < end_ && !stop)       \
			BURN(1);                        \
	} while (0)

static void run_good(struct thread_truth *t, void (*burn)(double))
{
	static const int slices[NSPANS] = {1, 2, 3};
	struct otel_thread_ctx_record rec;
	double t0;
	int s;

	memset(&rec, 0, sizeof(rec));
	ctx_set(NULL);
	while (!stop) {
		for (s = 0; s < NSPANS && !stop; s++) {
			set_span(&rec, t, s);
			fence();
			ctx_set(&rec);
			fence();
			t0 = cpu_now();
			burn(slices[s] * SLICE_MS / 1e3);
			t->span_cpu[s] += cpu_now() - t0;
		}
		fence();
		ctx_set(NULL); /* detached: no context */
		fence();
		t0 = cpu_now();
		burn(SLICE_MS / 1e3);
		t->none_cpu += cpu_now() - t0;
	}
}

/* Distinct functions per thread, so the stacks tell threads apart too. */
NOINLINE static void burn_t0(double s) { BURN_FOR(s); }
NOINLINE static void burn_t1(double s) { BURN_FOR(s); }
NOINLINE static void burn_t2(double s) { BURN_FOR(s); }
NOINLINE static void burn_t3(double s) { BURN_FOR(s); }
NOINLINE static void burn_t4(double s) { BURN_FOR(s); }
NOINLINE static void burn_t5(double s) { BURN_FOR(s); }
NOINLINE static void burn_t6(double s) { BURN_FOR(s); }
NOINLINE static void burn_t7(double s) { BURN_FOR(s); }
static void (*const burners[MAX_THREADS])(double) = {burn_t0, burn_t1, burn_t2, burn_t3,
						     burn_t4, burn_t5, burn_t6, burn_t7};
static const char *const burner_names[MAX_THREADS] = {"burn_t0", "burn_t1", "burn_t2", "burn_t3",
						      "burn_t4", "burn_t5", "burn_t6", "burn_t7"};

static void *good_main(void *arg)
{
	struct thread_truth *t = arg;
	int i = (int)(t - good);

	t->tid = (int)syscall(SYS_gettid);
	run_good(t, burners[i]);
	return NULL;
}

NOINLINE static void burn_invalid(double s) { BURN_FOR(s); }
NOINLINE static void burn_unmapped(double s) { BURN_FOR(s); }
NOINLINE static void burn_garbage(double s) { BURN_FOR(s); }

/* A quarter of the time on the CPU: the good threads keep most of it. */
static void duty(void (*burn)(double))
{
	struct timespec nap = {0, 15 * 1000 * 1000};

	burn(0.005);
	nanosleep(&nap, NULL);
}

static void *bad_main(void *arg)
{
	struct thread_truth *t = arg;
	struct otel_thread_ctx_record rec;
	double t0;
	void *hole;

	t->tid = (int)syscall(SYS_gettid);
	memset(&rec, 0, sizeof(rec));
	memset(rec.trace_id, 0x77, sizeof(rec.trace_id));
	memset(rec.span_id, 0x66, sizeof(rec.span_id));
	t0 = cpu_now();
	if (t == &bad[0]) {
		rec.valid = 0; /* ids set but not valid: "being changed" */
		ctx_set(&rec);
		while (!stop)
			duty(burn_invalid);
	} else if (t == &bad[1]) {
		/* A page mapped then unmapped: nothing there now. */
		hole = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (hole != MAP_FAILED)
			munmap(hole, 4096);
		ctx_set(hole == MAP_FAILED ? (void *)0x10 : hole);
		while (!stop)
			duty(burn_unmapped);
	} else {
		unsigned long x = 0x9e3779b97f4a7c15ul;

		for (size_t i = 0; i < sizeof(rec); i++) {
			x = x * 6364136223846793005ul + 1442695040888963407ul;
			((uint8_t *)&rec)[i] = (uint8_t)(x >> 56);
		}
		rec.valid = 0xa5; /* reserved: not 1 */
		ctx_set(&rec);
		while (!stop)
			duty(burn_garbage);
	}
	t->cpu = cpu_now() - t0;
	ctx_set(NULL);
	return NULL;
}

static void hex(FILE *f, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
}

/* -w: a thread that waits, not burns, inside one span. */
static struct {
	int tid;
	long sleeps;
	struct otel_thread_ctx_record rec;
} waiter;

NOINLINE static void wait_in_span(void)
{
	struct timespec nap = {0, 10 * 1000 * 1000};

	while (!stop) {
		nanosleep(&nap, NULL);
		waiter.sleeps++;
	}
}

static void *waiter_main(void *arg)
{
	(void)arg;
	waiter.tid = (int)syscall(SYS_gettid);
	memset(waiter.rec.trace_id, 0xee, sizeof(waiter.rec.trace_id));
	memset(waiter.rec.span_id, 0xdd, sizeof(waiter.rec.span_id));
	waiter.rec.trace_flags = 1;
	waiter.rec.valid = 1;
	ctx_set(&waiter.rec);
	wait_in_span();
	ctx_set(NULL);
	return NULL;
}

static int write_truth(const char *path, int malformed)
{
	FILE *f = fopen(path, "w");
	int i, s;

	if (!f)
		return -1;
	fprintf(f, "{\"threads\": [");
	for (i = 0; i < ngood; i++) {
		struct thread_truth *t = &good[i];

		fprintf(f, "%s{\"tid\": %d, \"func\": \"%s\", \"trace_id\": \"", i ? ", " : "",
			t->tid, t->func);
		hex(f, t->trace_id, 16);
		fprintf(f, "\", \"spans\": {");
		for (s = 0; s < NSPANS; s++) {
			fprintf(f, "%s\"", s ? ", " : "");
			hex(f, t->span_ids[s], 8);
			fprintf(f, "\": %.6f", t->span_cpu[s]);
		}
		fprintf(f, "}, \"none\": %.6f, \"attrs\": {", t->none_cpu);
		for (s = 0; s < NSPANS; s++) {
			fprintf(f, "%s\"", s ? ", " : "");
			hex(f, t->span_ids[s], 8);
			fprintf(f, "\": {\"http.route\": \"%s\", \"http.method\": \"%s\"}",
				t->route[s], methods[s]);
		}
		fprintf(f, "}}");
	}
	fprintf(f, "], \"malformed\": [");
	for (i = 0; malformed && i < 3; i++)
		fprintf(f, "%s{\"tid\": %d, \"func\": \"%s\", \"cpu\": %.6f}", i ? ", " : "",
			bad[i].tid, bad[i].func, bad[i].cpu);
	fprintf(f, "]");
	if (waiter.tid) {
		fprintf(f, ", \"waiter\": {\"tid\": %d, \"trace_id\": \"", waiter.tid);
		hex(f, waiter.rec.trace_id, 16);
		fprintf(f, "\", \"span_id\": \"");
		hex(f, waiter.rec.span_id, 8);
		fprintf(f, "\", \"sleeps\": %ld}", waiter.sleeps);
	}
	fprintf(f, "}\n");
	return fclose(f);
}

/* Append attrs-data entry (@key, @val) to span @s of @t. */
static void add_attr(struct thread_truth *t, int s, uint8_t key, const char *val)
{
	size_t len = strlen(val), at = t->attrs_size[s];

	t->attrs[s][at] = key;
	t->attrs[s][at + 1] = (uint8_t)len;
	memcpy(&t->attrs[s][at + 2], val, len);
	t->attrs_size[s] = (uint16_t)(at + 2 + len);
}

/* ---- the process context (OTEP 4719) holding the key map ---- */

static size_t varint(uint8_t *b, uint64_t v)
{
	size_t n = 0;

	do {
		b[n] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
		v >>= 7;
		n++;
	} while (v);
	return n;
}

static size_t field(uint8_t *b, int f, const void *data, size_t len)
{
	size_t n = varint(b, (uint64_t)f << 3 | 2);

	n += varint(b + n, len);
	memcpy(b + n, data, len);
	return n + len;
}

/* KeyValue{@k, AnyValue bytes @any} as field @f. */
static size_t kv(uint8_t *b, int f, const char *k, const uint8_t *any, size_t nany)
{
	uint8_t tmp[512];
	size_t n = field(tmp, 1, k, strlen(k));

	n += field(tmp + n, 2, any, nany);
	return field(b, f, tmp, n);
}

static size_t str_kv(uint8_t *b, int f, const char *k, const char *v)
{
	uint8_t any[128];

	return kv(b, f, k, any, field(any, 1, v, strlen(v)));
}

static int publish_key_map(void)
{
	static const char *const keys[] = {"http.route", "http.method"};
	struct {
		char signature[8];
		uint32_t version, payload_size;
		uint64_t published_at_ns, payload;
	} *h;
	uint8_t res[256], arr[256], any[256], *pl;
	size_t n, na = 0, i;
	struct timespec ts;
	int fd = memfd_create("OTEL_CTX", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, 4096))
		return -1;
	h = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED)
		return -1;
	pl = (uint8_t *)(h + 1);
	n = str_kv(res, 1, "service.name", "threadctx_writer");
	n = field(pl, 1, res, n); /* ProcessContext.resource */
	n += str_kv(pl + n, 2, "threadlocal.schema_version", "tlsdesc_v1_dev");
	for (i = 0; i < 2; i++) {
		uint8_t s1[64];

		na += field(arr + na, 1, s1, field(s1, 1, keys[i], strlen(keys[i])));
	}
	n += kv(pl + n, 2, "threadlocal.attribute_key_map", any, field(any, 5, arr, na));
	h->version = 2;
	h->payload_size = (uint32_t)n;
	h->payload = (uint64_t)(uintptr_t)pl;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	h->published_at_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(h->signature, "OTEL_CTX", 8);
	return 0;
}

int main(int argc, char **argv)
{
	const char *go = NULL, *out = NULL;
	pthread_t th[MAX_THREADS + 4];
	int opt, i, s, n = 0, malformed = 0, wait = 0;
	double secs = 3;

#ifdef CTX_DLOPEN
	void *lib = NULL;
#endif

	while ((opt = getopt(argc, argv, "g:d:o:t:mwTL:")) != -1) {
		switch (opt) {
#if !defined(CTX_LINKED) && !defined(CTX_DLOPEN)
		case 'T': /* where the variable really is, for the reader's tests */
			printf("%ld\n", (long)((char *)&otel_thread_ctx_v1 -
					       (char *)__builtin_thread_pointer()));
			return 0;
#endif
#ifdef CTX_DLOPEN
		case 'L':
			lib = dlopen(optarg, RTLD_NOW);
			ctx_set = lib ? (void (*)(void *))dlsym(lib, "otelctx_set") : NULL;
			if (!ctx_set) {
				fprintf(stderr, "threadctx_writer: %s: %s\n", optarg, dlerror());
				return 1;
			}
			break;
#endif
		case 'g': go = optarg; break;
		case 'd': secs = atof(optarg); break;
		case 'o': out = optarg; break;
		case 't': ngood = atoi(optarg); break;
		case 'm': malformed = 1; break;
		case 'w': wait = 1; break;
		default: return 2;
		}
	}
	if (!go || !out || ngood < 1 || ngood > MAX_THREADS || !ctx_set) {
		fprintf(stderr, "usage: threadctx_writer -g GOFILE -d SECONDS -o TRUTH.json "
				"[-t 1..8] [-m] [-w] [-L LIB]\n");
		return 2;
	}
	for (i = 0; i < ngood; i++) {
		good[i].func = burner_names[i];
		for (int b = 0; b < 16; b++)
			good[i].trace_id[b] = (uint8_t)(0x10 * (i + 1) + b);
		for (s = 0; s < NSPANS; s++)
			for (int b = 0; b < 8; b++)
				good[i].span_ids[s][b] = (uint8_t)(0xa0 + 0x10 * s + i + (b == 7));
		for (s = 0; s < NSPANS; s++) {
			snprintf(good[i].route[s], sizeof(good[i].route[s]), "/t%d/s%d", i, s);
			add_attr(&good[i], s, 0, good[i].route[s]);
			add_attr(&good[i], s, 1, methods[s]);
			add_attr(&good[i], s, 9, "x"); /* not in the key map */
		}
	}
	if (publish_key_map()) {
		perror("threadctx_writer: process context");
		return 1;
	}
	bad[0].func = "burn_invalid";
	bad[1].func = "burn_unmapped";
	bad[2].func = "burn_garbage";
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (access(go, F_OK))
		usleep(10000);
	for (i = 0; i < ngood; i++)
		pthread_create(&th[n++], NULL, good_main, &good[i]);
	for (i = 0; malformed && i < 3; i++)
		pthread_create(&th[n++], NULL, bad_main, &bad[i]);
	if (wait)
		pthread_create(&th[n++], NULL, waiter_main, NULL);
	usleep((useconds_t)(secs * 1e6));
	stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	if (write_truth(out, malformed))
		return 1;
	printf("done\n");
	fflush(stdout);
	pause();
	return 0;
}
