/* perfmap_bench.c - driver for perfmap_bench.sh: writes a large synthetic
 * perf map and times src/perfmap.c on it.
 *
 *   perfmap_bench gen FILE ENTRIES BASE    write a node-like map: ENTRIES lines
 *                                          at addresses from hex BASE up, 1 in 10
 *                                          rewriting an earlier range
 *   perfmap_bench parse FILE [ROUNDS]      full read (open, parse, flatten):
 *                                          median and best ms, segments, memory
 *                                          kept and peak RSS (in a child each
 *                                          round); lookup ns; append cost
 *
 * Memory is measured per round in a forked child: resident set before and
 * after the read (what the table keeps) and ru_maxrss (the peak).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/perfmap.h"

#define MAX_ROUNDS 64
#define LOOKUPS 10000000u

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static unsigned long long next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int gen(const char *path, unsigned long n, unsigned long long base)
{
	unsigned long long addr = base, *starts;
	unsigned long i;
	FILE *f = fopen(path, "w");

	starts = malloc(n * sizeof(*starts));
	if (!f || !starts) {
		perror(path);
		return 1;
	}
	for (i = 0; i < n; i++) {
		unsigned long long start = addr, size = 0x40 + (next_rand() % 0x7c0);
		unsigned long fn = (unsigned long)(next_rand() % 50000);

		if (i > 10 && next_rand() % 10 == 0) {
			start = starts[next_rand() % i]; /* recompiled in place */
		} else {
			addr += (size + 0x3f) & ~0x3full;
		}
		starts[i] = start;
		fprintf(f, "%llx %llx %s:*fn_%lu /srv/app/node_modules/pkg%lu/lib/mod.js:%lu:%lu\n",
			start, size, i % 3 ? "JS" : "LazyCompile", fn, fn % 700, fn % 2000 + 1,
			fn % 80 + 1);
	}
	free(starts);
	return fclose(f) ? 1 : 0;
}

static long rss_kb(void)
{
	long pages = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &res) != 2)
		res = -1;
	fclose(f);
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct round_result {
	double ms, cpu;
	long kept_kb, peak_kb;
	unsigned long long segments, lines;
};

/* One full read in a child, results through a pipe. */
static int one_round(const char *path, struct round_result *r)
{
	int pfd[2], status;
	pid_t pid;

	if (pipe(pfd))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		struct perfmap *m = perfmap__new();
		struct perfmap_stats st;
		struct rusage ru;
		long before = rss_kb();
		double t0 = now_ms(), c0 = cpu_ms();
		int fd = open(path, O_RDONLY), err;

		err = fd < 0 ? -errno : perfmap__update_fd(m, fd);
		r->ms = now_ms() - t0;
		r->cpu = cpu_ms() - c0;
		r->kept_kb = rss_kb() - before;
		getrusage(RUSAGE_SELF, &ru);
		r->peak_kb = ru.ru_maxrss;
		perfmap__stats(m, &st);
		r->segments = st.segments;
		r->lines = st.lines;
		if (err)
			fprintf(stderr, "perfmap_bench: read: %s\n", strerror(-err));
		if (write(pfd[1], r, sizeof(*r)) != sizeof(*r))
			_exit(1);
		_exit(err ? 1 : 0);
	}
	close(pfd[1]);
	if (read(pfd[0], r, sizeof(*r)) != sizeof(*r)) {
		close(pfd[0]);
		waitpid(pid, &status, 0);
		return -EIO;
	}
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

static int parse(const char *path, int rounds)
{
	double ms[MAX_ROUNDS], cpu[MAX_ROUNDS], t0, lookup_ns, append_ms;
	struct round_result r = {0};
	unsigned long long *addrs = NULL, found = 0;
	struct perfmap *m = NULL;
	struct perfmap_stats st;
	size_t i, n;
	int fd, err = 0, k;
	FILE *f;

	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 5;
	for (k = 0; k < rounds; k++) {
		if (one_round(path, &r)) {
			fprintf(stderr, "perfmap_bench: round %d failed\n", k);
			return 1;
		}
		ms[k] = r.ms;
		cpu[k] = r.cpu;
	}
	qsort(ms, (size_t)rounds, sizeof(ms[0]), cmp_double);
	qsort(cpu, (size_t)rounds, sizeof(cpu[0]), cmp_double);
	printf("full read: median %.1f ms wall, %.1f ms CPU, best %.1f ms wall (%d rounds); "
	       "%llu lines -> %llu segments; kept %.1f MB, peak RSS %.1f MB\n",
	       ms[rounds / 2], cpu[rounds / 2], ms[0], rounds, r.lines, r.segments,
	       (double)r.kept_kb / 1024, (double)r.peak_kb / 1024);

	/* Lookups: random addresses inside known segments (all hits) and just
	 * around them. */
	m = perfmap__new();
	fd = open(path, O_RDONLY);
	if (!m || fd < 0 || perfmap__update_fd(m, fd)) {
		fprintf(stderr, "perfmap_bench: cannot read %s\n", path);
		return 1;
	}
	n = perfmap__count(m);
	addrs = malloc(4096 * sizeof(*addrs));
	if (!addrs || !n)
		return 1;
	for (i = 0; i < 4096; i++) {
		const struct perfmap_sym *s = perfmap__sym(m, next_rand() % n);

		addrs[i] = s->start + next_rand() % (s->end - s->start + 8);
	}
	t0 = now_ms();
	for (i = 0; i < LOOKUPS; i++)
		found += perfmap__lookup(m, addrs[i & 4095]) != NULL;
	lookup_ns = (now_ms() - t0) * 1e6 / LOOKUPS;
	printf("lookup: %.1f ns each (%u lookups over %zu segments, %.0f%% hits)\n", lookup_ns,
	       LOOKUPS, n, 100.0 * (double)found / LOOKUPS);

	/* Incremental: 1000 new lines appended to the big map. */
	f = fopen(path, "a");
	if (!f)
		return 1;
	for (i = 0; i < 1000; i++)
		fprintf(f, "%llx 40 JS:*appended_%zu /srv/app/late.js:1:1\n",
			perfmap__sym(m, next_rand() % n)->start, i);
	fclose(f);
	t0 = now_ms();
	err = perfmap__update_fd(m, fd);
	append_ms = now_ms() - t0;
	perfmap__stats(m, &st);
	printf("append: 1000 lines read in %.2f ms with %zu segments held (%s)\n", append_ms,
	       perfmap__count(m), err ? strerror(-err) : "ok");
	close(fd);
	free(addrs);
	perfmap__free(m);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "gen"))
		return gen(argv[2], strtoul(argv[3], NULL, 10), strtoull(argv[4], NULL, 16));
	if (argc >= 3 && !strcmp(argv[1], "parse"))
		return parse(argv[2], argc > 3 ? atoi(argv[3]) : 5);
	fprintf(stderr, "usage: perfmap_bench gen FILE ENTRIES HEXBASE | parse FILE [ROUNDS]\n");
	return 2;
}
