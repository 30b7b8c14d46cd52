/* procctx_writer.c - a publisher of the OpenTelemetry process context
 * (OTEP 4719), written from the OTEP text, for the end-to-end tests.
 *
 * Usage: procctx_writer memfd|anon SERVICE_NAME
 *   memfd: memfd_create("OTEL_CTX") + ftruncate + mmap, then close the fd
 *          (maps shows "/memfd:OTEL_CTX (deleted)").
 *   anon:  an anonymous mapping named with prctl(PR_SET_VMA,
 *          PR_SET_VMA_ANON_NAME, "OTEL_CTX") (Linux >= 5.17 with
 *          CONFIG_ANON_VMA_NAME; exits 3 when the kernel refuses).
 * Resource attributes published: service.name=SERVICE_NAME,
 * service.instance.id=<mode>-<pid>, deployment.environment.name=e2e, and
 * process.pid="1" (a wrong value the reader must not let win over the pid
 * it detects). Prints "ready <addr>" and burns CPU for up to 60 s.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

struct ctx_header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t published_at_ns;
	uint64_t payload;
};

/* ---- protobuf writing (just what ProcessContext needs) ---- */

static size_t varint(uint8_t *b, uint64_t v)
{
	size_t n = 0;

	do {
		b[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

/* Field @f, wire type 2, @len bytes at @data. */
static size_t bytes_field(uint8_t *b, int f, const void *data, size_t len)
{
	size_t n = varint(b, (uint64_t)f << 3 | 2);

	n += varint(b + n, len);
	memcpy(b + n, data, len);
	return n + len;
}

/* KeyValue{key, value: AnyValue{string_value}} as attribute field 1. */
static size_t attr(uint8_t *b, const char *k, const char *v)
{
	uint8_t any[512], kv[1024];
	size_t na = bytes_field(any, 1, v, strlen(v));
	size_t nk = bytes_field(kv, 1, k, strlen(k));

	nk += bytes_field(kv + nk, 2, any, na);
	return bytes_field(b, 1, kv, nk);
}

static size_t encode(uint8_t *out, const char *service, const char *instance)
{
	uint8_t res[4096];
	size_t n = 0;

	n += attr(res + n, "service.name", service);
	n += attr(res + n, "service.instance.id", instance);
	n += attr(res + n, "deployment.environment.name", "e2e");
	n += attr(res + n, "process.pid", "1");
	return bytes_field(out, 1, res, n); /* ProcessContext.resource */
}

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *map_region(const char *mode, size_t len)
{
	void *p;
	int fd;

	if (!strcmp(mode, "memfd")) {
		fd = memfd_create("OTEL_CTX", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, (off_t)len))
			return NULL;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		return p == MAP_FAILED ? NULL : p;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static volatile uint64_t sink;

int main(int argc, char **argv)
{
	const size_t len = 4096;
	struct ctx_header *h;
	char instance[64];
	uint8_t *payload;
	size_t plen;
	time_t end;

	if (argc != 3 || (strcmp(argv[1], "memfd") && strcmp(argv[1], "anon"))) {
		fprintf(stderr, "usage: procctx_writer memfd|anon SERVICE_NAME\n");
		return 2;
	}
	h = map_region(argv[1], len);
	if (!h) {
		perror("procctx_writer: mapping");
		return 1;
	}
	madvise(h, len, MADV_DONTFORK);
	snprintf(instance, sizeof(instance), "%s-%d", argv[1], (int)getpid());
	payload = (uint8_t *)(h + 1);
	plen = encode(payload, argv[2], instance);
	h->version = 2;
	h->payload_size = (uint32_t)plen;
	h->payload = (uint64_t)(uintptr_t)payload;
	h->published_at_ns = boottime_ns();
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(h->signature, "OTEL_CTX", 8);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)h, len, "OTEL_CTX") &&
	    !strcmp(argv[1], "anon")) {
		perror("procctx_writer: naming the mapping (needs Linux 5.17+)");
		return 3;
	}
	printf("ready %p\n", (void *)h);
	fflush(stdout);
	end = time(NULL) + 60;
	while (time(NULL) < end)
		for (int i = 0; i < 1000000; i++)
			sink += (uint64_t)i * 7;
	return 0;
}
