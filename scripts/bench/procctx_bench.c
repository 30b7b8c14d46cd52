/* procctx_bench.c - what the OpenTelemetry process-context reader costs.
 *
 * 1. A process WITHOUT a context pays only the name check of each maps
 *    entry, inside the maps read the symbolizer does anyway: procmaps__parse()
 *    of a synthetic N-line maps text alone vs. parse + procctx__is_mapping()
 *    over every entry, interleaved round by round; medians.
 * 2. A process WITH a context: the per-window timestamp check
 *    (procctx__published_at(), one 32-byte pread of /proc/self/mem) and a
 *    full read + decode (procctx__read()) of a context this process
 *    publishes through a memfd; medians.
 * Usage: procctx_bench [LINES] [ROUNDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "proc/procctx.h"
#include "proc/procmaps.h"

static unsigned long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static unsigned long long median(unsigned long long *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return v[n / 2];
}

static size_t put_attr(unsigned char *b, const char *k, const char *v)
{
	size_t kl = strlen(k), vl = strlen(v), n = 0;
	size_t any = 2 + vl, kv = 2 + kl + 2 + any;

	b[n++] = 0x0a, b[n++] = (unsigned char)kv;
	b[n++] = 0x0a, b[n++] = (unsigned char)kl;
	memcpy(b + n, k, kl), n += kl;
	b[n++] = 0x12, b[n++] = (unsigned char)any;
	b[n++] = 0x0a, b[n++] = (unsigned char)vl;
	memcpy(b + n, v, vl), n += vl;
	return n;
}

int main(int argc, char **argv)
{
	int lines = argc > 1 ? atoi(argv[1]) : 2000, rounds = argc > 2 ? atoi(argv[2]) : 21;
	unsigned long long *a = calloc(rounds, sizeof(*a)), *b = calloc(rounds, sizeof(*b));
	char *text = malloc((size_t)lines * 128);
	size_t len = 0, i, hits = 0;
	struct procmaps *pm;
	unsigned char res[512];
	unsigned char *h;
	struct procctx c;
	size_t rl = 0;
	int r, fd;

	for (int l = 0; l < lines; l++)
		len += (size_t)sprintf(text + len,
				       "7f%08x000-7f%08x000 r-xp 00001000 fd:01 %d /usr/lib/x86_64-linux-gnu/lib%d.so\n",
				       l, l + 1, 1000 + l, l % 50);
	for (r = 0; r < rounds; r++) {
		/* Alternate which variant goes first: neither gets the warm heap. */
		for (int k = 0; k < 2; k++) {
			bool check = (k ^ r) & 1;
			unsigned long long t0 = now();

			procmaps__parse(text, len, &pm);
			for (i = 0; check && i < procmaps__count(pm); i++)
				hits += procctx__is_mapping(procmaps__entry(pm, i));
			procmaps__free(pm);
			(check ? b : a)[r] = now() - t0;
		}
	}
	printf("maps of %d lines: parse %llu us, parse + OTEL_CTX check %llu us (+%.2f%%, %.1f ns/entry), %zu hits\n",
	       lines, median(a, rounds) / 1000, median(b, rounds) / 1000,
	       100.0 * ((double)median(b, rounds) - (double)median(a, rounds)) / (double)median(a, rounds),
	       ((double)median(b, rounds) - (double)median(a, rounds)) / lines, hits);

	/* A context of this process, through a memfd. */
	fd = memfd_create("OTEL_CTX", 0);
	if (fd < 0 || ftruncate(fd, 4096))
		return 1;
	h = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED)
		return 1;
	rl += put_attr(res + rl, "service.name", "bench");
	rl += put_attr(res + rl, "service.instance.id", "0123456789abcdef");
	rl += put_attr(res + rl, "deployment.environment.name", "prod");
	h[32] = 0x0a, h[33] = (unsigned char)rl;
	memcpy(h + 34, res, rl);
	unsigned long long ts = 1, pay = (unsigned long long)(uintptr_t)(h + 32);
	unsigned int ver = 2, size = (unsigned int)(rl + 2);
	memcpy(h + 8, &ver, 4), memcpy(h + 12, &size, 4), memcpy(h + 16, &ts, 8);
	memcpy(h + 24, &pay, 8), memcpy(h, "OTEL_CTX", 8);
	fd = open("/proc/self/mem", O_RDONLY);
	if (fd < 0)
		return 1;
	for (r = 0; r < rounds; r++) {
		unsigned long long t0 = now();

		if (procctx__published_at(fd, (unsigned long)h, (unsigned long)h + 4096) != 1)
			return 1;
		unsigned long long t1 = now();

		if (procctx__read(fd, (unsigned long)h, (unsigned long)h + 4096, &c) || c.n != 3)
			return 1;
		procctx__clear(&c);
		unsigned long long t2 = now();

		a[r] = t1 - t0;
		b[r] = t2 - t1;
	}
	printf("context of %u payload bytes: timestamp check %llu ns, full read + decode %llu ns (medians of %d)\n",
	       size, median(a, rounds), median(b, rounds), rounds);
	return 0;
}
