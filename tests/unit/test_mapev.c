/* test_mapev.c - processes' executable mappings from side-band records:
 * exec, fork, exit, mappings over older ones, lost records, the caps. */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>

#include "proc/mapev.h"
#include "proc/procmaps.h"
#include "test.h"

static struct mapev_map map_of(__u64 start, __u64 len, __u64 pgoff, __u64 ino, const char *path)
{
	return (struct mapev_map){.start = start,
				  .len = len,
				  .pgoff = pgoff,
				  .ino = ino,
				  .maj = 8,
				  .min = 1,
				  .prot = PROT_READ | PROT_EXEC,
				  .flags = MAP_PRIVATE,
				  .path = path};
}

static void add(struct mapev *m, __u32 pid, __u64 start, __u64 len, __u64 pgoff, __u64 ino,
		const char *path)
{
	struct mapev_map mm = map_of(start, len, pgoff, ino, path);

	mapev__mmap(m, pid, &mm);
}

TEST(exec_then_mmaps)
{
	struct mapev *m = mapev__new();
	struct procmaps *pm = NULL;
	const struct procmaps_entry *e;
	struct mapev_desc d;

	CHECK(m);
	CHECK(mapev__maps(m, 100, &pm, NULL) == -ENOENT); /* running before: not known */
	add(m, 100, 0x1000, 0x1000, 0, 1, "/bin/x");	  /* ignored: not known */
	mapev__exec(m, 100, "p");
	CHECK(!mapev__maps(m, 100, &pm, NULL));
	CHECK_EQ_U64(procmaps__count(pm), 0);
	procmaps__free(pm);
	add(m, 100, 0x401000, 0x2000, 0x1000, 42, "/usr/bin/cc1"); /* the program first */
	add(m, 100, 0x7f0000002000, 0x3000, 0x2000, 77, "/usr/lib/libc.so.6");
	add(m, 100, 0x7fff0000, 0x1000, 0, 0, "[vdso]");
	add(m, 100, 0x7e0000000000, 0x10000, 0, 0, "//anon");
	add(m, 100, 0x500000, 0x1000, 0, 43, "/tmp/gone (deleted)");
	CHECK(!mapev__maps(m, 100, &pm, &d));
	CHECK_EQ_U64(procmaps__count(pm), 5);
	CHECK(!strcmp(d.exe, "/usr/bin/cc1") && !strcmp(d.comm, "p"));
	e = procmaps__entry(pm, 0); /* sorted by address */
	CHECK_EQ_U64(e->start, 0x401000);
	CHECK_EQ_U64(e->end, 0x403000);
	CHECK_EQ_U64(e->offset, 0x1000);
	CHECK_EQ_U64(e->inode, 42);
	CHECK(e->dev_major == 8 && e->dev_minor == 1);
	CHECK(e->perms == (PROCMAPS_READ | PROCMAPS_EXEC));
	CHECK(!strcmp(e->path, "/usr/bin/cc1") && !e->anonymous && !e->deleted);
	e = procmaps__entry(pm, 1);
	CHECK(!strcmp(e->path, "/tmp/gone") && e->deleted);
	e = procmaps__find(pm, 0x7e0000000100);
	CHECK(e && e->anonymous && !strcmp(e->path, ""));
	e = procmaps__find(pm, 0x7fff0010);
	CHECK(e && !strcmp(e->path, "[vdso]"));
	e = procmaps__find(pm, 0x7f0000004fff);
	CHECK(e && !strcmp(e->path, "/usr/lib/libc.so.6") && e->offset == 0x2000);
	procmaps__free(pm);
	/* exec again: another program, nothing of the old one */
	mapev__exec(m, 100, "q");
	CHECK(!mapev__maps(m, 100, &pm, &d));
	CHECK_EQ_U64(procmaps__count(pm), 0);
	CHECK(!strcmp(d.exe, "") && !strcmp(d.comm, "q"));
	procmaps__free(pm);
	add(m, 100, 0x500000, 0x1000, 0, 43, "/tmp/gone (deleted)");
	CHECK(!mapev__maps(m, 100, &pm, &d));
	CHECK(!strcmp(d.exe, "/tmp/gone (deleted)"));
	procmaps__free(pm);
	mapev__free(m);
}

TEST(mapping_over_older_ones)
{
	struct mapev *m = mapev__new();
	struct procmaps *pm = NULL;
	const struct procmaps_entry *e;

	CHECK(m);
	mapev__exec(m, 7, "p");
	add(m, 7, 0x10000, 0x10000, 0, 1, "/a"); /* [0x10000, 0x20000) */
	add(m, 7, 0x14000, 0x4000, 0, 2, "/b");	 /* inside: splits /a */
	add(m, 7, 0x1e000, 0x4000, 0, 3, "/c");	 /* over /a's tail and past it */
	CHECK(!mapev__maps(m, 7, &pm, NULL));
	CHECK_EQ_U64(procmaps__count(pm), 4);
	e = procmaps__entry(pm, 0);
	CHECK(!strcmp(e->path, "/a") && e->start == 0x10000 && e->end == 0x14000 && !e->offset);
	e = procmaps__entry(pm, 1);
	CHECK(!strcmp(e->path, "/b") && e->start == 0x14000 && e->end == 0x18000);
	e = procmaps__entry(pm, 2); /* /a's right part keeps its file offset */
	CHECK(!strcmp(e->path, "/a") && e->start == 0x18000 && e->end == 0x1e000 &&
	      e->offset == 0x8000);
	e = procmaps__entry(pm, 3);
	CHECK(!strcmp(e->path, "/c") && e->start == 0x1e000 && e->end == 0x22000);
	procmaps__free(pm);
	/* one covering them all replaces them */
	add(m, 7, 0x8000, 0x20000, 0, 4, "/d");
	CHECK(!mapev__maps(m, 7, &pm, NULL));
	CHECK_EQ_U64(procmaps__count(pm), 1);
	CHECK(!strcmp(procmaps__entry(pm, 0)->path, "/d"));
	procmaps__free(pm);
	mapev__free(m);
}

TEST(fork_and_exit)
{
	struct mapev *m = mapev__new();
	struct procmaps *pm = NULL;
	struct mapev_stats st;
	struct mapev_desc d;

	CHECK(m);
	mapev__exec(m, 10, "sh");
	add(m, 10, 0x1000, 0x1000, 0, 1, "/bin/sh");
	mapev__fork(m, 11, 10); /* a child: the parent's mappings and name */
	mapev__fork(m, 10, 10); /* a thread: nothing */
	add(m, 11, 0x3000, 0x1000, 0, 2, "/lib/x.so");
	CHECK(!mapev__maps(m, 11, &pm, &d));
	CHECK_EQ_U64(procmaps__count(pm), 2);
	CHECK(!strcmp(d.comm, "sh") && !strcmp(d.exe, "/bin/sh"));
	procmaps__free(pm);
	mapev__rename(m, 11, "a-very-long-thread-name"); /* cut at 15 bytes */
	CHECK(!mapev__maps(m, 11, &pm, &d));
	CHECK(!strcmp(d.comm, "a-very-long-thr"));
	procmaps__free(pm);
	CHECK(!mapev__maps(m, 10, &pm, NULL)); /* the parent has not changed */
	CHECK_EQ_U64(procmaps__count(pm), 1);
	procmaps__free(pm);
	mapev__fork(m, 12, 99); /* of a process not known */
	CHECK(mapev__maps(m, 12, &pm, NULL) == -ENOENT);
	/* exited: still answered, mappings after it ignored, gone once expired */
	mapev__exit(m, 11, 1000);
	add(m, 11, 0x9000, 0x1000, 0, 3, "/late");
	CHECK(!mapev__maps(m, 11, &pm, NULL));
	CHECK_EQ_U64(procmaps__count(pm), 2);
	procmaps__free(pm);
	mapev__expire(m, 1000 + MAPEV_KEEP_EXITED_NS);
	CHECK(!mapev__maps(m, 11, &pm, NULL));
	procmaps__free(pm);
	mapev__expire(m, 1001 + MAPEV_KEEP_EXITED_NS);
	CHECK(mapev__maps(m, 11, &pm, NULL) == -ENOENT);
	CHECK(!mapev__maps(m, 10, &pm, NULL)); /* alive: kept */
	procmaps__free(pm);
	/* a reused PID forked from a process not known forgets the old one */
	mapev__fork(m, 10, 98);
	CHECK(mapev__maps(m, 10, &pm, NULL) == -ENOENT);
	mapev__stats(m, &st);
	CHECK_EQ_U64(st.procs, 0);
	mapev__free(m);
}

TEST(lost_records)
{
	struct mapev *m = mapev__new();
	struct procmaps *pm = NULL;
	struct mapev_stats st;

	CHECK(m);
	mapev__exec(m, 5, "p");
	mapev__exec(m, 6, "p");
	mapev__lost(m);
	CHECK(mapev__maps(m, 5, &pm, NULL) == -ENOENT);
	CHECK(mapev__maps(m, 6, &pm, NULL) == -ENOENT);
	mapev__exec(m, 6, "p"); /* known again from its next exec */
	CHECK(!mapev__maps(m, 6, &pm, NULL));
	procmaps__free(pm);
	mapev__stats(m, &st);
	CHECK_EQ_U64(st.lost, 1);
	CHECK_EQ_U64(st.procs, 1);
	mapev__free(m);
}

/* The table holds MAPEV_MAX_PROCS processes: an exited one makes room (the
 * oldest exit first), live ones do not; many PIDs in and out of the table
 * (removals move entries back) keep every lookup right. */
TEST(caps)
{
	struct mapev *m = mapev__new();
	struct procmaps *pm = NULL;
	struct mapev_stats st;
	__u32 pid, i;
	int ok = 1;

	CHECK(m);
	for (pid = 1; pid <= MAPEV_MAX_PROCS; pid++) {
		mapev__exec(m, pid, "p");
		add(m, pid, 0x1000 * (__u64)pid, 0x1000, 0, pid, "/bin/p");
	}
	mapev__exec(m, MAPEV_MAX_PROCS + 1, "p"); /* full of live ones */
	CHECK(mapev__maps(m, MAPEV_MAX_PROCS + 1, &pm, NULL) == -ENOENT);
	mapev__exit(m, 300, 20);
	mapev__exit(m, 200, 10);
	mapev__exec(m, MAPEV_MAX_PROCS + 2, "p"); /* takes 200's place */
	CHECK(!mapev__maps(m, MAPEV_MAX_PROCS + 2, &pm, NULL));
	procmaps__free(pm);
	CHECK(mapev__maps(m, 200, &pm, NULL) == -ENOENT);
	CHECK(!mapev__maps(m, 300, &pm, NULL));
	procmaps__free(pm);
	/* remove every third, then check all the others */
	for (pid = 3; pid <= MAPEV_MAX_PROCS; pid += 3)
		mapev__exit(m, pid, 100);
	mapev__expire(m, 101 + MAPEV_KEEP_EXITED_NS);
	for (pid = 1; pid <= MAPEV_MAX_PROCS && ok; pid++) {
		int err = mapev__maps(m, pid, &pm, NULL);
		bool want = pid % 3 && pid != 200;

		ok = want ? !err && procmaps__entry(pm, 0)->start == 0x1000 * (__u64)pid
			  : err == -ENOENT;
		procmaps__free(pm);
		pm = NULL;
	}
	CHECK(ok);
	/* mappings: past MAPEV_MAX_MAPS the process is no longer known */
	mapev__exec(m, 1, "p");
	for (i = 0; i <= MAPEV_MAX_MAPS; i++)
		add(m, 1, 0x100000 + 0x2000 * (__u64)i, 0x1000, 0, 1, "/bin/many");
	CHECK(mapev__maps(m, 1, &pm, NULL) == -ENOENT);
	mapev__stats(m, &st);
	CHECK(st.full == 1 && st.dropped >= 2);
	CHECK_EQ_U64(st.path_bytes, sizeof("/bin/p") + sizeof("/bin/many"));
	mapev__free(m);
}

int main(void)
{
	RUN(exec_then_mmaps);
	RUN(mapping_over_older_ones);
	RUN(fork_and_exit);
	RUN(lost_records);
	RUN(caps);
	return TEST_DONE();
}
