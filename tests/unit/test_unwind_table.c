/* test_unwind_table.c - the table builder on this very process (no root):
 * its mappings and rows land in an in-memory sink, and a user-space copy of
 * the BPF walk (bpf/cpu_sampler/unwind.bpf.c) unwinds this test's own stack with them;
 * the return addresses it finds must be the ones the functions saw. Also:
 * files shared between processes are parsed once, caps are honoured. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/stackwalk.h"
#include "collect/unwind_table.h"
#include "proc/procmaps.h"
#include "util/clock.h"
#include "test.h"

#define MAX_MAPS 512

#define MAX_FILES 64

static __u64 *rows[MAX_FILES]; /* file tables by slot */
static int rows_dels;
static struct unwind_map maps[MAX_MAPS];
static __u32 nmaps_of_self;
static int set_map_calls;

static int mem_set_maps(void *ctx, const struct unwind_map_key *k, const struct unwind_map *m,
			__u32 n)
{
	(void)ctx;
	for (__u32 i = 0; i < n; i++) {
		if (k[i].index >= MAX_MAPS || k[i].index != i)
			return -E2BIG;
		maps[k[i].index] = m[i];
		set_map_calls++;
	}
	return 0;
}

static int mem_set_proc(void *ctx, __u32 tgid, __u32 n)
{
	(void)ctx;
	(void)tgid;
	nmaps_of_self = n;
	return 0;
}

static int del_maps, del_procs;

static int mem_del_maps(void *ctx, const struct unwind_map_key *k, __u32 n)
{
	(void)ctx;
	for (__u32 i = 0; i < n; i++)
		del_maps += k[i].index == i;
	return 0;
}

static int mem_del_proc(void *ctx, __u32 tgid)
{
	(void)ctx;
	(void)tgid;
	del_procs++;
	return 0;
}

static __u64 *mem_rows_begin(void *ctx, __u32 slot, __u32 n)
{
	(void)ctx;
	(void)slot;
	return malloc(n * sizeof(__u64));
}

static int mem_rows_end(void *ctx, __u32 slot, __u64 *r, __u32 n, bool ok)
{
	(void)ctx;
	(void)n;
	if (!ok || slot >= MAX_FILES) {
		free(r);
		return ok ? -E2BIG : 0;
	}
	free(rows[slot]);
	rows[slot] = r;
	return 0;
}

static int mem_rows_del(void *ctx, __u32 slot)
{
	(void)ctx;
	free(rows[slot]);
	rows[slot] = NULL;
	rows_dels++;
	return 0;
}

/* What the sink says of table slots seen in use by processes the table was
 * not told about (sink.seen_ns): 0 = never. */
static __u64 seen_at;

static __u64 mem_seen_ns(void *ctx, __u32 slot)
{
	(void)ctx;
	(void)slot;
	return seen_at;
}

static struct unwind_table *new_table(__u32 max_rows, __u32 max_maps)
{
	struct unwind_table_sink sink = {
		.seen_ns = mem_seen_ns,
		.max_rows = max_rows,
		.max_files = MAX_FILES,
		.rows_begin = mem_rows_begin,
		.rows_end = mem_rows_end,
		.rows_del = mem_rows_del,
		.max_maps = max_maps,
		.set_maps = mem_set_maps,
		.set_proc = mem_set_proc,
		.del_maps = mem_del_maps,
		.del_proc = mem_del_proc,
	};

	return unwind_table__new(&sink, "/proc");
}

static const struct unwind_map *find_map(__u64 addr)
{
	for (__u32 i = 0; i < nmaps_of_self; i++)
		if (addr >= maps[i].start && addr < maps[i].end)
			return &maps[i];
	return NULL;
}

static int walk_find_map(void *ctx, __u64 addr, struct stackwalk_map *out)
{
	const struct unwind_map *m = find_map(addr);

	(void)ctx;
	if (!m)
		return -ENOENT;
	out->m = *m;
	out->rows = m->nrows ? rows[m->first] : NULL;
	return 0;
}

/* End of this thread's stack mapping ([stack] in /proc/self/maps), 0 if
 * not found. */
static __u64 stack_end(void)
{
	char line[512];
	__u64 lo, hi, end = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			end = hi;
	if (f)
		fclose(f);
	return end;
}

static unsigned char stack_copy[16384];
static size_t copy_cap = sizeof(stack_copy); /* how much a test lets the copy hold */
static enum stackwalk_end walk_end;

/* Copy @len bytes of this thread's stack at @sp, as the BPF program does:
 * whole, redzones of other frames included (so not instrumented). */
__attribute__((no_sanitize("address"))) static void copy_stack(unsigned char *dst, __u64 sp,
							       size_t len)
{
	const volatile unsigned char *src = (const volatile unsigned char *)(unsigned long)sp;

	for (size_t i = 0; i < len; i++)
		dst[i] = src[i];
}

/* The production user-space walk (collect/stackwalk) over a copy of our own
 * stack, as the BPF program sends it. Returns frames found. */
static int walk(__u64 pc, __u64 sp, __u64 bp, __u64 *out, int max, int *complete)
{
	struct stackwalk_ops ops = {.find_map = walk_find_map};
	struct stackwalk_regs regs = {.pc = pc, .sp = sp, .bp = bp, .bp_ok = true, .exact = true};
	struct stackwalk_mem mem = {.base = sp, .data = stack_copy};
	__u64 top = stack_end();
	__u32 n = 0;

	mem.len = top > sp && top - sp < copy_cap ? top - sp : copy_cap;
	copy_stack(stack_copy, sp, mem.len);
	walk_end = stackwalk__run(&ops, &regs, &mem, out, &n, (__u32)max);
	*complete = walk_end == STACKWALK_COMPLETE;
	return (int)n;
}

static __u64 seen_ra[3];
static __u64 frames[64];
static int nframes, walk_complete;

__attribute__((noinline)) static void leaf(void)
{
	__u64 pc, sp, bp;

	seen_ra[0] = (__u64)__builtin_return_address(0);
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(pc), "=r"(sp), "=r"(bp));
	nframes = walk(pc, sp, bp, frames, 64, &walk_complete);
}

__attribute__((noinline)) static void middle(void)
{
	seen_ra[1] = (__u64)__builtin_return_address(0);
	leaf();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void outer(void)
{
	seen_ra[2] = (__u64)__builtin_return_address(0);
	middle();
	__asm__ volatile("" ::: "memory");
}

TEST(own_stack_unwinds_through_tables)
{
	struct unwind_table *u = new_table(1u << 20, 4096);
	struct unwind_table_stats st;

	CHECK(u != NULL);
	CHECK_EQ_U64(unwind_table__add_process(u, getpid()), 0);
	unwind_table__stats(u, &st);
	CHECK(nmaps_of_self >= 1);
	CHECK(st.files_parsed >= 1);
	CHECK(st.rows > 10);
	CHECK(find_map((__u64)(unsigned long)&outer) != NULL);
	CHECK(find_map((__u64)(unsigned long)&outer)->nrows > 0);
	outer();
	unwind_table__free(u);
	printf("  walked %d frames, complete %d\n", nframes, walk_complete);
	CHECK(nframes >= 4);
	CHECK_EQ_U64(frames[1], seen_ra[0]);
	CHECK_EQ_U64(frames[2], seen_ra[1]);
	CHECK_EQ_U64(frames[3], seen_ra[2]);
}

/* Mappings the caller read (a snapshot): the same tables as from the maps
 * file; ones the snapshot lacks get none. */
TEST(mappings_from_the_caller)
{
	struct unwind_table *u = new_table(1u << 20, 4096);
	struct procmaps *m = NULL;
	char path[64];

	CHECK(u != NULL);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)getpid());
	CHECK(!procmaps__read(path, &m));
	CHECK_EQ_U64(unwind_table__add_process_maps(u, getpid(), m, 0), 0);
	procmaps__free(m);
	CHECK(find_map((__u64)(unsigned long)&outer) != NULL);
	CHECK(find_map((__u64)(unsigned long)&outer)->nrows > 0);
	m = NULL;
	CHECK(!procmaps__parse("", 0, &m));
	CHECK_EQ_U64(unwind_table__add_process_maps(u, getpid(), m, 0), 0);
	CHECK(nmaps_of_self == 0);
	procmaps__free(m);
	unwind_table__free(u);
}

/* Field 22 of /proc/self/stat: this process's start time. */
static __u64 own_start(void)
{
	char buf[1024], *p;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	int i;

	if (f)
		fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	for (i = 0; i < 20 && p; i++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* A start time the caller knows (the sampler's notice has it from the
 * task) is checked against /proc/PID/stat once, then taken as given; after
 * a wrong one, none is. */
TEST(start_time_from_the_caller)
{
	struct unwind_table *u = new_table(1u << 20, 4096);
	struct unwind_table_stats st;
	struct procmaps *m = NULL;
	__u64 start = own_start();
	char path[64];

	CHECK(u != NULL && start > 0);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)getpid());
	CHECK(!procmaps__read(path, &m));
	CHECK_EQ_U64(unwind_table__add_process_maps(u, getpid(), m, start), 0);
	unwind_table__stats(u, &st);
	CHECK_EQ_U64(st.start_reads, 1); /* checked */
	CHECK_EQ_U64(unwind_table__add_process_maps(u, getpid(), m, start), 0);
	unwind_table__stats(u, &st);
	CHECK_EQ_U64(st.start_reads, 1); /* taken as given */
	CHECK_EQ_U64(unwind_table__add_process_maps(u, getpid(), m, 0), 0);
	unwind_table__stats(u, &st);
	CHECK_EQ_U64(st.start_reads, 2); /* unknown: read */
	unwind_table__free(u);

	u = new_table(1u << 20, 4096);
	CHECK(u != NULL);
	CHECK_EQ_U64(unwind_table__add_process_maps(u, getpid(), m, start + 1), 0);
	CHECK_EQ_U64(unwind_table__add_process_maps(u, getpid(), m, start), 0);
	unwind_table__stats(u, &st);
	CHECK_EQ_U64(st.start_reads, 2); /* a wrong one: never trusted again */
	procmaps__free(m);
	unwind_table__free(u);
}

/* A copy that ends early (the BPF program copies a bounded part of the
 * stack): the walk stops there, partial, with the frames before it. */
TEST(short_copy_ends_the_walk)
{
	struct unwind_table *u = new_table(1u << 20, 4096);

	CHECK(u != NULL);
	CHECK_EQ_U64(unwind_table__add_process(u, getpid()), 0);
	copy_cap = 8;
	outer();
	copy_cap = sizeof(stack_copy);
	unwind_table__free(u);
	CHECK(nframes >= 1);
	CHECK_EQ_U64(walk_complete, 0);
	CHECK_EQ_U64(walk_end, STACKWALK_READ);
}

static int one_fp_map(void *ctx, __u64 addr, struct stackwalk_map *out)
{
	(void)ctx;
	if (addr < 0x1000 || addr >= 0x2000)
		return -ENOENT;
	*out = (struct stackwalk_map){.m = {.start = 0x1000, .end = 0x2000}};
	return 0;
}

/* Code without a table: frame pointers, while the chain is plausible. */
TEST(frame_pointers_where_no_table)
{
	struct stackwalk_ops ops = {.find_map = one_fp_map};
	__u64 mem_words[16] = {0}, ips[8];
	const __u64 base = 0x7f0000000000ull;
	struct stackwalk_mem mem = {.base = base, .data = mem_words, .len = sizeof(mem_words)};
	struct stackwalk_regs regs = {
		.pc = 0x1500, .sp = base, .bp = base + 0x20, .bp_ok = true, .exact = true};
	__u32 n = 0;

	mem_words[4] = base + 0x60; /* frame at base + 0x20: saved rbp, return address */
	mem_words[5] = 0x1800;
	mem_words[12] = 0; /* frame at base + 0x60: outermost */
	mem_words[13] = 0;
	CHECK_EQ_U64(stackwalk__run(&ops, &regs, &mem, ips, &n, 8), STACKWALK_COMPLETE);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(ips[0], 0x1500);
	CHECK_EQ_U64(ips[1], 0x1800);

	/* rbp below sp is no frame pointer: stop there. */
	n = 0;
	regs.bp = base - 0x100;
	CHECK_EQ_U64(stackwalk__run(&ops, &regs, &mem, ips, &n, 8), STACKWALK_NO_ROW);
	CHECK_EQ_U64(n, 1);

	/* A PC in no mapping with no frame pointer either. */
	n = 0;
	regs.pc = 0x9000;
	CHECK_EQ_U64(stackwalk__run(&ops, &regs, &mem, ips, &n, 8), STACKWALK_NO_MAPPING);

	/* The depth cap. */
	n = 0;
	regs = (struct stackwalk_regs){.pc = 0x1500, .sp = base, .bp = base + 0x20, .bp_ok = true};
	CHECK_EQ_U64(stackwalk__run(&ops, &regs, &mem, ips, &n, 1), STACKWALK_DEPTH);
	CHECK_EQ_U64(n, 1);
}

TEST(shared_file_parsed_once_and_refresh_rate_limited)
{
	struct unwind_table *u = new_table(1u << 20, 4096);
	struct unwind_table_stats a, b;
	pid_t child;
	int status;

	CHECK(u != NULL);
	child = fork();
	if (!child) {
		pause();
		_exit(0);
	}
	CHECK_EQ_U64(unwind_table__add_process(u, getpid()), 0);
	unwind_table__stats(u, &a);
	CHECK_EQ_U64(unwind_table__add_process(u, child), 0);
	unwind_table__stats(u, &b);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	/* Same binary: no new file, no new row. */
	CHECK_EQ_U64(b.files_parsed, a.files_parsed);
	CHECK_EQ_U64(b.rows, a.rows);
	CHECK_EQ_U64(b.processes, 2);
	CHECK_EQ_U64(unwind_table__refresh(u, getpid()), 0); /* just loaded */
	unwind_table__free(u);
}

TEST(gone_process_and_caps)
{
	struct unwind_table *u = new_table(4, 4096);
	struct unwind_table_stats st;

	CHECK(u != NULL);
	CHECK_EQ_U64(unwind_table__add_process(u, 0x3ffffff0), -ESRCH);
	/* A 4-row store: the file gets no table, the process still loads
	 * (frame pointers there). */
	CHECK_EQ_U64(unwind_table__add_process(u, getpid()), 0);
	unwind_table__stats(u, &st);
	CHECK(st.files_no_room >= 1);
	CHECK(st.rows <= 4);
	unwind_table__free(u);
	u = new_table(1u << 20, 0); /* no room for any mapping entry */
	CHECK(u != NULL);
	CHECK_EQ_U64(unwind_table__add_process(u, getpid()), -E2BIG);
	unwind_table__stats(u, &st);
	CHECK_EQ_U64(st.procs_skipped, 1);
	unwind_table__free(u);
}

/* The mapping of the first library (a file other than the program) of
 * @pid whose path contains @name, into *@e (path not kept); 0 or -ENOENT. */
static int library_of(int pid, const char *name, struct procmaps_entry *e)
{
	struct procmaps *m = NULL;
	char path[64];
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (procmaps__read(path, &m))
		return -ENOENT;
	for (size_t i = 0; i < procmaps__count(m) && err; i++) {
		const struct procmaps_entry *c = procmaps__entry(m, i);

		if ((c->perms & PROCMAPS_EXEC) && strstr(c->path, name)) {
			*e = *c;
			e->path = NULL;
			err = 0;
		}
	}
	procmaps__free(m);
	return err;
}

/* Lazy tables: a dynamically linked program (sleep) gets its own table at
 * once, its libraries none and no mapping entry, until a walk asks for one
 * (unwind_table__add_file()): then that file is parsed and the process
 * described again with it. Eager, every file is parsed. */
TEST(library_tables_built_when_needed)
{
	struct unwind_table *u = NULL;
	struct unwind_table_stats st;
	struct procmaps_entry libc = {0};
	__u64 dev;
	pid_t pid;
	int status, i;

	pid = fork();
	if (!pid) {
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	CHECK(pid > 0);
	/* Until it runs sleep (a dynamically linked test binary maps a libc
	 * of its own: the child's before its exec) and the loader has mapped
	 * sleep's libc. */
	for (i = 0; i < 200 && (!test__runs(pid, "sleep") || library_of(pid, "libc", &libc)); i++)
		usleep(10000);
	if (!test__runs(pid, "sleep") || library_of(pid, "libc", &libc)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		SKIP("/bin/sleep maps no libc here (not dynamically linked?)");
	}
	dev = (__u64)libc.dev_major << 32 | libc.dev_minor;

	u = new_table(1u << 22, 4096);
	CHECK(u != NULL);
	unwind_table__set_lazy(u, true);
	CHECK_EQ_U64(unwind_table__add_process(u, pid), 0);
	unwind_table__stats(u, &st);
	CHECK_EQ_U64(st.files_parsed, 2); /* sleep itself and the vdso */
	CHECK(st.maps_deferred >= 2);	  /* libc, ld.so */
	CHECK(find_map(libc.start) == NULL);
	/* A walk needs libc: its table, and an entry for it. */
	CHECK_EQ_U64(unwind_table__add_file(u, pid, libc.start, dev, libc.inode), 0);
	unwind_table__stats(u, &st);
	CHECK_EQ_U64(st.files_parsed, 3);
	CHECK_EQ_U64(st.files_on_demand, 1);
	CHECK(find_map(libc.start) != NULL);
	CHECK(find_map(libc.start)->nrows > 0);
	/* Nothing of that file at another address: refused. */
	CHECK_EQ_U64(unwind_table__add_file(u, pid, libc.start + 4096, dev, libc.inode), -ESRCH);
	/* Described again later, libc is known: its entry stays. */
	CHECK_EQ_U64(unwind_table__add_process(u, pid), 0);
	CHECK(find_map(libc.start) != NULL && find_map(libc.start)->nrows > 0);
	unwind_table__free(u);

	u = new_table(1u << 22, 4096); /* eager: every file at once */
	CHECK(u != NULL);
	CHECK_EQ_U64(unwind_table__add_process(u, pid), 0);
	unwind_table__stats(u, &st);
	CHECK(st.files_parsed >= 4);
	CHECK_EQ_U64(st.maps_deferred, 0);
	CHECK(find_map(libc.start) != NULL && find_map(libc.start)->nrows > 0);
	unwind_table__free(u);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* Room for one process's mappings only: a second process fits once the
 * first has exited and its entries are reclaimed. */
TEST(exited_processes_are_reclaimed)
{
	struct unwind_table *u = NULL;
	struct unwind_table_stats st;
	pid_t a, b;
	int status;

	a = fork();
	if (!a) {
		pause();
		_exit(0);
	}
	b = fork();
	if (!b) {
		pause();
		_exit(0);
	}
	u = new_table(1u << 20, 4096);
	CHECK(u != NULL);
	CHECK_EQ_U64(unwind_table__add_process(u, a), 0);
	unwind_table__free(u);
	/* max_maps = exactly the child's mapping count */
	u = new_table(1u << 20, nmaps_of_self);
	CHECK_EQ_U64(unwind_table__add_process(u, a), 0);
	CHECK_EQ_U64(unwind_table__add_process(u, b), -E2BIG); /* a still alive */
	kill(a, SIGKILL);
	waitpid(a, &status, 0);
	del_maps = del_procs = 0;
	CHECK_EQ_U64(unwind_table__add_process(u, b), 0);
	unwind_table__stats(u, &st);
	kill(b, SIGKILL);
	waitpid(b, &status, 0);
	unwind_table__free(u);
	CHECK_EQ_U64(st.procs_reclaimed, 1);
	CHECK(del_maps >= 1);
	CHECK_EQ_U64(del_procs, 1);
}

/* @u given the tables of a child process that has exited since (its stats
 * then into *@a, at least one table); rows_dels reset. false on failure. */
static bool tables_of_exited_child(struct unwind_table *u, struct unwind_table_stats *a)
{
	pid_t child;
	int status, err;

	if (!u)
		return false;
	child = fork();
	if (!child) {
		pause();
		_exit(0);
	}
	err = unwind_table__add_process(u, child);
	unwind_table__stats(u, a);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	rows_dels = 0;
	return !err && a->tables >= 1;
}

/* Tables of files no live process maps stay for the next process of the
 * same binary, and go at gc once unused long enough; a later process of
 * that binary gets them parsed again, and unwinds. */
TEST(unused_file_tables_are_kept_then_evicted)
{
	struct unwind_table *u = new_table(1u << 20, 4096);
	struct unwind_table_stats a, b, c;

	CHECK(tables_of_exited_child(u, &a));
	CHECK_EQ_U64(unwind_table__gc(u, UNWIND_TABLE_FILE_TTL_NS), 1); /* the child */
	unwind_table__stats(u, &b);
	CHECK_EQ_U64(b.tables, a.tables); /* unused, kept for a while */
	CHECK_EQ_U64(rows_dels, 0);
	CHECK_EQ_U64(unwind_table__gc(u, 0), 0);
	unwind_table__stats(u, &b);
	CHECK_EQ_U64(b.tables, 0);
	CHECK_EQ_U64(b.rows, 0);
	CHECK_EQ_U64(b.files_evicted, a.tables);
	CHECK_EQ_U64(rows_dels, a.tables);
	/* This process maps the same files: parsed again, then it unwinds. */
	CHECK_EQ_U64(unwind_table__add_process(u, getpid()), 0);
	unwind_table__stats(u, &c);
	CHECK_EQ_U64(c.files_parsed, a.files_parsed * 2);
	CHECK(c.tables >= 1);
	/* Live: not evicted however old. */
	CHECK_EQ_U64(unwind_table__gc(u, 0), 0);
	unwind_table__stats(u, &b);
	CHECK_EQ_U64(b.tables, c.tables);
	outer();
	CHECK(nframes >= 4);
	CHECK_EQ_U64(frames[1], seen_ra[0]);
	unwind_table__free(u);
}

/* A table no described process maps, but which the sink saw in use (a
 * process the BPF walker walks from its VMAs alone), is not evicted until
 * it has been unused that long since; then it is. */
TEST(tables_seen_in_use_by_the_sink_are_kept)
{
	struct unwind_table *u = new_table(1u << 20, 4096);
	struct unwind_table_stats a, b;

	CHECK(tables_of_exited_child(u, &a));
	seen_at = clock__mono_ns() + 1000000000ull; /* seen "later than now": in use */
	CHECK_EQ_U64(unwind_table__gc(u, 0), 1);    /* the child's entries go ... */
	unwind_table__stats(u, &b);
	CHECK_EQ_U64(b.tables, a.tables); /* ... its tables stay */
	CHECK_EQ_U64(rows_dels, 0);
	usleep(20000); /* unreferenced for 20 ms ... */
	seen_at = clock__mono_ns();
	CHECK_EQ_U64(unwind_table__gc(u, 10000000ull), 0); /* ... but seen just now */
	unwind_table__stats(u, &b);
	CHECK_EQ_U64(b.tables, a.tables);
	seen_at = 1; /* long ago: unused for 20 ms */
	CHECK_EQ_U64(unwind_table__gc(u, 10000000ull), 0);
	unwind_table__stats(u, &b);
	CHECK_EQ_U64(b.tables, 0);
	CHECK_EQ_U64(rows_dels, a.tables);
	seen_at = 0;
	unwind_table__free(u);
}

/* A process gone before the builder got to it (its notice taken at a
 * drain): its files' tables come from the host's files, the same device
 * and inode as its mappings said. */
TEST(files_of_a_process_gone_are_read_from_the_host)
{
	struct unwind_table *u = new_table(1u << 20, 4096);
	struct unwind_table_stats a;
	struct procmaps *maps = NULL;
	char path[64];
	pid_t child;
	int status;

	CHECK(u);
	child = fork();
	if (!child) {
		pause();
		_exit(0);
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)child);
	CHECK_EQ_U64(procmaps__read(path, &maps), 0);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	CHECK(unwind_table__add_process_maps(u, child, maps, 0) != -E2BIG);
	unwind_table__stats(u, &a);
	CHECK(a.tables >= 1);
	CHECK_EQ_U64(a.files_failed, 0);
	procmaps__free(maps);
	unwind_table__free(u);
}

int main(void)
{
	RUN(own_stack_unwinds_through_tables);
	RUN(files_of_a_process_gone_are_read_from_the_host);
	RUN(tables_seen_in_use_by_the_sink_are_kept);
	RUN(short_copy_ends_the_walk);
	RUN(mappings_from_the_caller);
	RUN(start_time_from_the_caller);
	RUN(frame_pointers_where_no_table);
	RUN(shared_file_parsed_once_and_refresh_rate_limited);
	RUN(gone_process_and_caps);
	RUN(exited_processes_are_reclaimed);
	RUN(library_tables_built_when_needed);
	RUN(unused_file_tables_are_kept_then_evicted);
	return TEST_DONE();
}
