/* three_sites.c - allocates known volumes from three call sites, for
 * test_memory.py: 50 % of the bytes from site_a (4 KiB objects, a tenth
 * kept), 30 % from site_b (256-byte objects, all freed), 20 % from site_c
 * (64 KiB objects, half kept). Prints the truth as one JSON line at exit.
 * Arguments: total MiB (default 300), milliseconds to wait before
 * allocating, seconds to stay after. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Built with -DOTEL_SAMPLER: the allocations go through the test sampler
 * library (otel_sampler.c), which fires the otel_memory probes. */
#ifdef OTEL_SAMPLER
void *otel_sampler_malloc(size_t n);
void otel_sampler_free(void *p);
#define malloc otel_sampler_malloc
#define free otel_sampler_free
#endif

static void **kept;
static size_t nkept;
static unsigned long long kept_bytes;

static __attribute__((noinline, noipa)) void *site_a(void)
{
	char *p = malloc(4096);

	if (p) /* not a tail call: the site stays on the stack */
		p[1] = 1;
	return p;
}

static __attribute__((noinline, noipa)) void *site_b(void)
{
	char *p = malloc(256);

	if (p) /* not a tail call: the site stays on the stack */
		p[1] = 1;
	return p;
}

static __attribute__((noinline, noipa)) void *site_c(void)
{
	char *p = malloc(65536);

	if (p) /* not a tail call: the site stays on the stack */
		p[1] = 1;
	return p;
}

/* @n objects of @size from @site, every @keep_every-th kept (0: none). */
static __attribute__((noinline, noipa)) void run(void *(*site)(void), size_t size, size_t n,
					  size_t keep_every)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char *p = site();

		if (!p)
			exit(1);
		p[0] = (char)i; /* touched: not optimized away */
		if (keep_every && i % keep_every == 0) {
			kept[nkept++] = p;
			kept_bytes += size;
		} else {
			free(p);
		}
	}
}

int main(int argc, char **argv)
{
	unsigned long long total = (argc > 1 ? strtoull(argv[1], NULL, 10) : 300) << 20;
	size_t na = total / 2 / 4096, nb = total * 3 / 10 / 256, nc = total / 5 / 65536;

	kept = calloc(na / 10 + nc / 2 + 16, sizeof(*kept));
	if (!kept)
		return 1;
	/* time for the profiler to describe this process (unwind tables) */
	usleep(argc > 2 ? atoi(argv[2]) * 1000 : 500000);
	run(site_a, 4096, na, 10);
	run(site_b, 256, nb, 0);
	run(site_c, 65536, nc, 2);
	printf("{\"a_bytes\": %llu, \"b_bytes\": %llu, \"c_bytes\": %llu, \"a_objs\": %zu, "
	       "\"b_objs\": %zu, \"c_objs\": %zu, \"kept_bytes\": %llu, \"kept_objs\": %zu}\n",
	       (unsigned long long)na * 4096, (unsigned long long)nb * 256,
	       (unsigned long long)nc * 65536, na, nb, nc, kept_bytes, nkept);
	fflush(stdout);
	/* the kept objects stay live until the capture ends */
	if (argc > 3)
		sleep((unsigned)atoi(argv[3]));
	return 0;
}
