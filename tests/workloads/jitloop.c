/* jitloop.c - a JIT-like workload: machine code in anonymous memory, named
 * only by a perf map.
 *
 * It maps an anonymous page, copies two tiny x86_64 functions into it
 * (jit_hot at +0x00, jit_cold at +0x40; each a counted loop with a frame),
 * makes it read+exec, and writes /tmp/perf-<getpid()>.map (getpid() is the
 * pid in its own PID namespace, as runtimes do) with a stale entry for the
 * whole page first and the two functions after it, so only a reader that
 * lets later lines win names the code right. Then it spends its time in the
 * page: jit_hot 3 calls for each jit_cold one, same work per call, called
 * from run_jit(), which main() calls. Prints "ready <pid> <page address>"
 * once the map is written.
 *   -y       Python -X perf style names (py::hot:/jit/loop.py, py::cold:...)
 *   -d SECS  exit after SECS seconds (default: run until killed)
 * x86_64 only. Removes its map file on a clean exit.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* A function(rdi = iterations) with a frame pointer:
 *   push rbp; mov rbp, rsp; xor eax, eax
 *   .l: add rax, 1; cmp rax, rdi; jne .l
 *   pop rbp; ret */
static const unsigned char loop_code[] = {
	0x55,			/* push %rbp */
	0x48, 0x89, 0xe5,	/* mov %rsp,%rbp */
	0x31, 0xc0,		/* xor %eax,%eax */
	0x48, 0x83, 0xc0, 0x01, /* .l (+6): add $1,%rax */
	0x48, 0x39, 0xf8,	/* cmp %rdi,%rax */
	0x75, 0xf7,		/* jne .l (+15 - 9 = +6) */
	0x5d,			/* pop %rbp */
	0xc3,			/* ret */
};

#define HOT_OFF 0x00
#define COLD_OFF 0x40
#define FUNC_SIZE 0x40

typedef unsigned long (*jit_fn)(unsigned long);

static char map_path[64];
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

NOINLINE static unsigned long run_jit(jit_fn fn, unsigned long n)
{
	unsigned long r = fn(n);

	__asm__ volatile("" ::: "memory");
	return r;
}

static int write_map(unsigned char *page, long pagesz, int python)
{
	FILE *f = fopen(map_path, "w");

	if (!f)
		return -1;
	/* Stale: an earlier blob at the same place, rewritten since. */
	fprintf(f, "%lx %lx stale_blob\n", (unsigned long)page, (unsigned long)pagesz);
	fprintf(f, "%lx %x %s\n", (unsigned long)(page + HOT_OFF), FUNC_SIZE,
		python ? "py::hot:/jit/loop.py" : "jit_hot");
	fprintf(f, "%lx %x %s\n", (unsigned long)(page + COLD_OFF), FUNC_SIZE,
		python ? "py::cold:/jit/loop.py" : "jit_cold");
	return fclose(f);
}

int main(int argc, char **argv)
{
	long pagesz = sysconf(_SC_PAGESIZE);
	double secs = 0;
	struct timespec t0, t;
	unsigned char *page;
	unsigned long sink = 0;
	int python = 0, opt;

	while ((opt = getopt(argc, argv, "yd:")) != -1) {
		if (opt == 'y')
			python = 1;
		else if (opt == 'd')
			secs = atof(optarg);
		else
			return 2;
	}
	page = mmap(NULL, (size_t)pagesz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	if (page == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(page, 0xcc, (size_t)pagesz); /* int3 between the functions */
	memcpy(page + HOT_OFF, loop_code, sizeof(loop_code));
	memcpy(page + COLD_OFF, loop_code, sizeof(loop_code));
	if (mprotect(page, (size_t)pagesz, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		return 1;
	}
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
	if (write_map(page, pagesz, python)) {
		perror(map_path);
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("ready %d %lx\n", (int)getpid(), (unsigned long)page);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop) {
		for (int i = 0; i < 3; i++)
			sink += run_jit((jit_fn)(void *)(page + HOT_OFF), 200000);
		sink += run_jit((jit_fn)(void *)(page + COLD_OFF), 200000);
		if (secs > 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((double)(t.tv_sec - t0.tv_sec) +
				    (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >=
			    secs)
				break;
		}
	}
	unlink(map_path);
	return sink == 42 ? 3 : 0;
}
