/* test_procsnap.c - a snapshot of this process: maps, executable, name,
 * command line; references. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "test.h"

TEST(self)
{
	char exe[4096], comm[32];
	struct procsnap *p = NULL;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	exe[n] = '\0';
	CHECK(!prctl(PR_GET_NAME, comm));
	CHECK(!procsnap__read("/proc", (int)getpid(), &p));
	CHECK(p && p->pid == (int)getpid());
	CHECK(p->refs == 1);
	CHECK(p->at_ns > 0);
	CHECK(procmaps__find(p->maps, (__u64)(unsigned long)&test_self));
	CHECK(p->exe);
	CHECK_STR(p->exe, exe);
	CHECK_STR(p->comm, comm);
	/* the raw command line, kept at its length: argv[0] and its NUL */
	CHECK(p->cmdline && p->cmdline_len > 1);
	CHECK(p->cmdline[p->cmdline_len - 1] == '\0');
	CHECK(strstr(exe, strrchr(p->cmdline, '/') ? strrchr(p->cmdline, '/') : p->cmdline));
	procsnap__free(p);
}

/* A snapshot's maps and exe are borrowed; without one they are read. */
TEST(maps_of)
{
	const struct procmaps *maps = NULL;
	struct procmaps *own = NULL;
	struct procsnap *p = NULL;
	char exe[4096], *got = NULL;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	exe[n] = '\0';
	CHECK(!procsnap__read("/proc", (int)getpid(), &p));
	CHECK(!procsnap__maps_of(NULL, (int)getpid(), p, &maps, &own, &got));
	CHECK(maps == p->maps && !own);
	CHECK(got && got != p->exe);
	CHECK_STR(got, exe);
	free(got);
	got = NULL;
	/* a snapshot of another process is not used */
	CHECK(!procsnap__maps_of("/proc", (int)getppid(), p, &maps, &own, NULL));
	CHECK(own && maps == own && maps != p->maps);
	procmaps__free(own);
	CHECK(!procsnap__maps_of(NULL, (int)getpid(), NULL, &maps, &own, &got));
	CHECK(own && maps == own);
	CHECK(procmaps__find(maps, (__u64)(unsigned long)&test_maps_of));
	CHECK_STR(got, exe);
	free(got);
	procmaps__free(own);
	CHECK(procsnap__maps_of(NULL, 0x7ffffff0, NULL, &maps, &own, &got) < 0);
	CHECK(!own && !got);
	procsnap__free(p);
}

TEST(references)
{
	struct procsnap *p = NULL;

	CHECK(!procsnap__read("/proc", (int)getpid(), &p));
	CHECK(procsnap__get(p) == p);
	CHECK(p->refs == 2);
	procsnap__free(p); /* one left: still readable */
	CHECK(p->refs == 1 && procmaps__count(p->maps) > 0);
	procsnap__free(p);
	CHECK(!procsnap__get(NULL));
	procsnap__free(NULL);
}

TEST(gone)
{
	struct procsnap *p = (struct procsnap *)1;

	CHECK_EQ_U64(procsnap__read("/proc", 0x7ffffff0, &p), -ESRCH);
	CHECK(!p);
	CHECK_EQ_U64(procsnap__read("/nonexistent", (int)getpid(), &p), -ESRCH);
}

/* Mappings given (from the side-band records): the maps file is not read,
 * and a process gone has its snapshot with them and the name given. */
TEST(with_maps)
{
	struct procmaps_entry e = {.start = 0x1000,
				   .end = 0x2000,
				   .perms = PROCMAPS_EXEC,
				   .inode = 5,
				   .path = "/bin/given"};
	struct procsnap_given g = {
		.comm = "given", .exe = "/bin/given", .cmdline = "a\0b", .cmdline_len = 4};
	struct procsnap *p = NULL;

	CHECK(!procmaps__from_entries(&e, 1, &g.maps));
	CHECK_EQ_U64(procsnap__read_given("/nonexistent", 4242, 0, 0, NULL, &g, &p), 0);
	CHECK(p && p->maps == g.maps && p->pid == 4242 && p->lasting);
	CHECK(!strcmp(p->comm, "given") && !strcmp(p->exe, "/bin/given"));
	CHECK(p->cmdline_len == 4 && !memcmp(p->cmdline, "a\0b", 4));
	procsnap__free(p);
	/* not given: read (alive) or left empty (gone); not lasting */
	g = (struct procsnap_given){.comm = ""};
	CHECK(!procmaps__from_entries(&e, 1, &g.maps));
	CHECK_EQ_U64(procsnap__read_given("/proc", (int)getpid(), 0, 0, NULL, &g, &p), 0);
	CHECK(p && procmaps__count(p->maps) == 1 && p->comm[0] && p->exe && p->cmdline);
	CHECK(!p->lasting);
	procsnap__free(p);
	g = (struct procsnap_given){0};
	CHECK(!procmaps__from_entries(&e, 1, &g.maps));
	CHECK_EQ_U64(procsnap__read_given("/nonexistent", 4242, 0, 0, NULL, &g, &p), 0);
	CHECK(p && !p->comm[0] && !p->exe && !p->cmdline);
	procsnap__free(p);
	/* maps not given: read, and a process gone has none */
	g = (struct procsnap_given){.comm = "x", .exe = "/x"};
	CHECK_EQ_U64(procsnap__read_given("/nonexistent", 4242, 0, 0, NULL, &g, &p), -ESRCH);
	CHECK(!p);
}

/* PROC/PID/@name of a fake proc root, holding @text. */
static void put(const char *root, int pid, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/%s", root, pid, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A fake PROC/PID: an empty maps file and the cgroup file @cgroup. */
static void fake_pid(const char *root, int pid, const char *cgroup)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/%d", root, pid);
	mkdir(dir, 0755);
	put(root, pid, "maps", "");
	put(root, pid, "cgroup", cgroup);
}

#define ID_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define ID_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

/* The container of a process is read once per set of cgroups: a second
 * process of the same css_set (or, unknown, of the same v2 cgroup on a
 * v2-only host) takes it from the cache without reading its file (the fake
 * files say otherwise, to tell), within the TTL only; a v2 ID alone on a
 * hybrid host, or a process gone, is not kept. */
TEST(container_read_once_per_cgroup)
{
	char root[] = "/tmp/profcap-procsnap-XXXXXX";
	struct procsnap_cgroups cache = {0};
	struct procsnap *p = NULL;

	CHECK(mkdtemp(root) != NULL);
	fake_pid(root, 100, "0::/system.slice/docker-" ID_A ".scope\n");
	fake_pid(root, 101, "0::/system.slice/docker-" ID_B ".scope\n");
	fake_pid(root, 102, "4:memory:/docker/" ID_C "\n0::/\n");
	fake_pid(root, 103, "4:memory:/docker/" ID_B "\n0::/\n");

	/* v2 only, css_set unknown: kept by the v2 ID */
	CHECK(!procsnap__read_cached(root, 100, 5, 0, &cache, &p));
	CHECK_STR(p->container_id, ID_A);
	procsnap__free(p);
	CHECK(!procsnap__read_cached(root, 101, 5, 0, &cache, &p));
	CHECK_STR(p->container_id, ID_A); /* from the cache */
	CHECK_EQ_U64(cache.hits, 1);
	procsnap__free(p);
	/* Past the TTL: read again. */
	cache.e[0].at_ns -= PROCSNAP_CGROUP_TTL_NS + 1;
	CHECK(!procsnap__read_cached(root, 101, 5, 0, &cache, &p));
	CHECK_STR(p->container_id, ID_B);
	CHECK_EQ_U64(cache.hits, 1);
	procsnap__free(p);

	/* Hybrid (v1 lines): the v2 ID tells nothing, the css_set does. */
	CHECK(!procsnap__read_cached(root, 102, 1, 0, &cache, &p));
	CHECK_STR(p->container_id, ID_C);
	procsnap__free(p);
	CHECK(!procsnap__read_cached(root, 103, 1, 0, &cache, &p));
	CHECK_STR(p->container_id, ID_B); /* read: not kept */
	procsnap__free(p);
	CHECK(!procsnap__read_cached(root, 102, 1, 0x1234, &cache, &p));
	procsnap__free(p);
	CHECK(!procsnap__read_cached(root, 103, 1, 0x1234, &cache, &p));
	CHECK_STR(p->container_id, ID_C); /* 102's, by its css_set */
	procsnap__free(p);
	CHECK_EQ_U64(cache.hits, 2);

	/* A process gone (no cgroup file): nothing kept for its set. */
	fake_pid(root, 104, "");
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/104/cgroup", root);
		unlink(path);
	}
	CHECK(!procsnap__read_cached(root, 104, 9, 0x9999, &cache, &p));
	CHECK_STR(p->container_id, "");
	procsnap__free(p);
	fake_pid(root, 105, "4:memory:/docker/" ID_C "\n0::/\n");
	CHECK(!procsnap__read_cached(root, 105, 9, 0x9999, &cache, &p));
	CHECK_STR(p->container_id, ID_C); /* read, not "" from the cache */
	procsnap__free(p);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		CHECK(!system(cmd));
	}
}

int main(void)
{
	RUN(self);
	RUN(container_read_once_per_cgroup);
	RUN(references);
	RUN(maps_of);
	RUN(gone);
	RUN(with_maps);
	return TEST_DONE();
}
