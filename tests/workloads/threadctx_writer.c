/* threadctx_writer.c - ground truth for OpenTelemetry thread context (OTEP
 * 4947): threads that burn CPU while their `otel_thread_ctx_v1` names known
 * spans, each timing its own CPU time under each span.
 *
 * The executable defines the TLS pointer `otel_thread_ctx_v1` itself and
 * exports it in .dynsym (linked with --export-dynamic-symbol, see
 * workloads.mk); the linker relaxes its accesses to local-exec, the static
 * TLS block of the executable.
 *
 * Good threads (burn_t0, burn_t1, ...): thread i owns one record (trace id
 * bytes 0x10 * (i + 1) + k, three spans). It cycles: span 0 for 1 slice, span 1 for 2 slices,
 * span 2 for 3 slices, then 1 slice with no context (pointer NULL), a slice
 * being SLICE_MS of its own CPU time. Span changes follow the OTEP's fixed-
 * record protocol: valid 0, compiler fence, new ids, fence, valid 1.
 * With -m, three more threads (each on the CPU about a quarter of the
 * time) publish malformed contexts a reader must
 * ignore: burn_invalid (valid 0 with ids set), burn_unmapped (the pointer
 * names unmapped memory) and burn_garbage (valid 0xa5 and random bytes).
 *
 * Usage: threadctx_writer -g GOFILE -d SECONDS -o TRUTH.json [-t THREADS] [-m]
 *        threadctx_writer -T  (prints the variable's offset from the thread pointer)
 * Prints "ready PID", waits until GOFILE exists, runs SECONDS, writes
 * {"threads": [{"tid": T, "func": "burn_t0", "trace_id": "hex",
 *   "spans": {"span hex": cpu_s, ...}, "none": cpu_s}, ...],
 *  "malformed": [{"tid": T, "func": "burn_invalid", "cpu": s}, ...]}
 * prints "done", then waits to be killed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* The variable readers look up in .dynsym (STT_TLS). */
__attribute__((visibility("default"))) __thread void *otel_thread_ctx_v1;

struct thread_truth {
	int tid;
	const char *func;
	uint8_t trace_id[16];
	uint8_t span_ids[NSPANS][8];
	double span_cpu[NSPANS];
	double none_cpu;
	double cpu; /* malformed threads: all their CPU time */
};

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
	r->attrs_data_size = 0;
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
	otel_thread_ctx_v1 = NULL;
	while (!stop) {
		for (s = 0; s < NSPANS && !stop; s++) {
			set_span(&rec, t, s);
			fence();
			otel_thread_ctx_v1 = &rec;
			fence();
			t0 = cpu_now();
			burn(slices[s] * SLICE_MS / 1e3);
			t->span_cpu[s] += cpu_now() - t0;
		}
		fence();
		otel_thread_ctx_v1 = NULL; /* detached: no context */
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
		otel_thread_ctx_v1 = &rec;
		while (!stop)
			duty(burn_invalid);
	} else if (t == &bad[1]) {
		/* A page mapped then unmapped: nothing there now. */
		hole = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (hole != MAP_FAILED)
			munmap(hole, 4096);
		otel_thread_ctx_v1 = hole == MAP_FAILED ? (void *)0x10 : hole;
		while (!stop)
			duty(burn_unmapped);
	} else {
		unsigned long x = 0x9e3779b97f4a7c15ul;

		for (size_t i = 0; i < sizeof(rec); i++) {
			x = x * 6364136223846793005ul + 1442695040888963407ul;
			((uint8_t *)&rec)[i] = (uint8_t)(x >> 56);
		}
		rec.valid = 0xa5; /* reserved: not 1 */
		otel_thread_ctx_v1 = &rec;
		while (!stop)
			duty(burn_garbage);
	}
	t->cpu = cpu_now() - t0;
	otel_thread_ctx_v1 = NULL;
	return NULL;
}

static void hex(FILE *f, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
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
		fprintf(f, "}, \"none\": %.6f}", t->none_cpu);
	}
	fprintf(f, "], \"malformed\": [");
	for (i = 0; malformed && i < 3; i++)
		fprintf(f, "%s{\"tid\": %d, \"func\": \"%s\", \"cpu\": %.6f}", i ? ", " : "",
			bad[i].tid, bad[i].func, bad[i].cpu);
	fprintf(f, "]}\n");
	return fclose(f);
}

int main(int argc, char **argv)
{
	const char *go = NULL, *out = NULL;
	pthread_t th[MAX_THREADS + 3];
	int opt, i, s, n = 0, malformed = 0;
	double secs = 3;

	while ((opt = getopt(argc, argv, "g:d:o:t:mT")) != -1) {
		switch (opt) {
		case 'T': /* where the variable really is, for the reader's tests */
			printf("%ld\n", (long)((char *)&otel_thread_ctx_v1 -
					       (char *)__builtin_thread_pointer()));
			return 0;
		case 'g': go = optarg; break;
		case 'd': secs = atof(optarg); break;
		case 'o': out = optarg; break;
		case 't': ngood = atoi(optarg); break;
		case 'm': malformed = 1; break;
		default: return 2;
		}
	}
	if (!go || !out || ngood < 1 || ngood > MAX_THREADS) {
		fprintf(stderr, "usage: threadctx_writer -g GOFILE -d SECONDS -o TRUTH.json "
				"[-t 1..8] [-m]\n");
		return 2;
	}
	for (i = 0; i < ngood; i++) {
		good[i].func = burner_names[i];
		for (int b = 0; b < 16; b++)
			good[i].trace_id[b] = (uint8_t)(0x10 * (i + 1) + b);
		for (s = 0; s < NSPANS; s++)
			for (int b = 0; b < 8; b++)
				good[i].span_ids[s][b] = (uint8_t)(0xa0 + 0x10 * s + i + (b == 7));
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
