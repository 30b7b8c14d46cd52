/* test_sideband.c - the kernel's side-band records against /proc: a
 * program exec()ed after the events are opened is known with the same
 * executable mappings as its maps file lists (its fork and exec often come
 * on two CPUs' rings: they must be put back in order), and a process that
 * exited before the drain is still known. Needs perf events (root here);
 * skipped where they cannot be opened. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "collect/sideband.h"
#include "proc/mapev.h"
#include "proc/procmaps.h"
#include "util/clock.h"
#include "test.h"

static bool online[1024];

static int open_all(struct sideband **sb)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	if (n <= 0 || n > 1024)
		n = 1024;
	for (long i = 0; i < n; i++)
		online[i] = true;
	/* a CPU that is not online: its event fails; try the online ones */
	if (!sideband__open(online, (__u32)n, sb))
		return 0;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return sideband__open(online, (__u32)(n > 0 ? n : 1), sb);
}

/* The executable mappings of @pid's maps file and of @m agree. */
static bool same_as_proc(struct mapev *m, pid_t pid)
{
	struct procmaps *ev = NULL, *pm = NULL;
	static struct mapev_desc d;
	char path[64], exe[4096];
	size_t i, k = 0;
	ssize_t n;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (mapev__maps(m, (__u32)pid, &ev, &d) || procmaps__read(path, &pm)) {
		procmaps__free(ev);
		return false;
	}
	ok = !strcmp(d.comm, "sleep") && !strcmp(d.exe, exe);
	if (!ok)
		printf("  %s: comm %s exe %s from records, exe %s read\n", path, d.comm, d.exe,
		       exe);
	for (i = 0; i < procmaps__count(pm) && ok; i++) {
		const struct procmaps_entry *p = procmaps__entry(pm, i), *e;

		if (!(p->perms & PROCMAPS_EXEC) || !strcmp(p->path, "[vsyscall]"))
			continue;
		e = procmaps__entry(ev, k++);
		ok = e && e->start == p->start && e->end == p->end && e->offset == p->offset &&
		     e->inode == p->inode && e->dev_major == p->dev_major &&
		     e->dev_minor == p->dev_minor && !strcmp(e->path, p->path);
		if (!ok)
			printf("  %s: %llx-%llx %s from records, %llx-%llx %s in maps\n", path,
			       e ? (unsigned long long)e->start : 0ull,
			       e ? (unsigned long long)e->end : 0ull, e ? e->path : "(none)",
			       (unsigned long long)p->start, (unsigned long long)p->end, p->path);
	}
	ok = ok && k == procmaps__count(ev);
	procmaps__free(ev);
	procmaps__free(pm);
	return ok;
}

/* Until @pid runs sleep and has mapped its libc (its loader is done; a
 * dynamically linked test binary maps a libc too, before the exec), at
 * most 2 s. */
static void wait_loaded(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	for (int i = 0; i < 200; i++) {
		struct procmaps *pm = NULL;
		bool done = false;

		if (test__runs(pid, "sleep") && !procmaps__read(path, &pm))
			for (size_t k = 0; k < procmaps__count(pm) && !done; k++)
				done = strstr(procmaps__entry(pm, k)->path, "libc") != NULL;
		procmaps__free(pm);
		if (done)
			return;
		usleep(10000);
	}
}

/* Run on CPU @cpu only (-1: any). */
static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (cpu < 0) {
		for (int i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &set);
	} else {
		CPU_SET(cpu, &set);
	}
	sched_setaffinity(0, sizeof(set), &set);
}

/* sleep @secs, forked on the last CPU and exec()ed on CPU 0 (with two CPUs
 * or more): its fork comes on the last CPU's ring, its exec and mappings
 * on the first's, read first. */
static pid_t spawn_sleep(const char *secs)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	pid_t pid;

	if (n > 1)
		pin((int)n - 1);
	pid = fork();
	if (!pid) {
		if (n > 1)
			pin(0);
		execl("/bin/sleep", "sleep", secs, (char *)NULL);
		_exit(127);
	}
	pin(-1);
	return pid;
}

TEST(exec_known_as_proc_says)
{
	struct sideband *sb = NULL;
	struct mapev *m = mapev__new();
	struct sideband_stats st;
	int err, round, status, good = 0;

	CHECK(m);
	err = open_all(&sb);
	if (err == -EACCES || err == -EPERM || err == -ENOENT || err == -ENOSYS) {
		mapev__free(m);
		SKIP("no perf events for this user here (%s)", strerror(-err));
	}
	CHECK(!err);
	for (round = 0; round < 20; round++) {
		pid_t pid = spawn_sleep("5");

		CHECK(pid > 0);
		wait_loaded(pid);
		usleep(1000); /* past the drain's settling time */
		sideband__drain(sb, m, clock__mono_ns());
		good += same_as_proc(m, pid);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	CHECK_EQ_U64(good, 20);
	sideband__stats(sb, &st);
	CHECK(st.records > 0);
	CHECK_EQ_U64(st.lost, 0);
	sideband__free(sb);
	mapev__free(m);
}

TEST(exited_still_known)
{
	struct sideband *sb = NULL;
	struct mapev *m = mapev__new();
	struct procmaps *pm = NULL;
	pid_t pid;
	int err, status;
	size_t i;
	bool libc = false;

	CHECK(m);
	err = open_all(&sb);
	if (err) {
		mapev__free(m);
		SKIP("no perf events for this user here (%s)", strerror(-err));
	}
	pid = spawn_sleep("0");
	CHECK(pid > 0);
	waitpid(pid, &status, 0); /* gone: /proc has nothing of it */
	usleep(1000);
	sideband__drain(sb, m, clock__mono_ns());
	CHECK(!mapev__maps(m, (__u32)pid, &pm, NULL));
	for (i = 0; i < procmaps__count(pm); i++)
		libc = libc || strstr(procmaps__entry(pm, i)->path, "libc");
	CHECK(libc);
	procmaps__free(pm);
	sideband__free(sb);
	mapev__free(m);
}

int main(void)
{
	RUN(exec_known_as_proc_says);
	RUN(exited_still_known);
	return TEST_DONE();
}
