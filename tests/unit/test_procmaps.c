/* test_procmaps.c - /proc/PID/maps parsing on fixture text. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/procmaps.h"
#include "test.h"

static const char maps_text[] =
	"55c2d4119000-55c2d411b000 r--p 00000000 fe:00 247134                     /usr/bin/cat\n"
	"55c2d411b000-55c2d4120000 r-xp 00002000 fe:00 247134                     /usr/bin/cat\n"
	"55c3008a3000-55c3008c4000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f9c3b442000-7f9c3b464000 rw-p 00000000 00:00 0 \n"
	"7f9c3b4eb000-7f9c3b641000 r-xp 00026000 fe:00 332835                     "
	"/usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f9c3b650000-7f9c3b660000 r-xp 00001000 08:11 99                         /opt/my app/lib "
	"x.so (deleted)\n"
	"7f9c3b6aa000-7f9c3b6b1000 r--s 00000000 fe:00 332280                     "
	"/usr/lib/gconv/gconv-modules.cache\n"
	"7f9c3b6b4000-7f9c3b6b8000 r--p 00000000 00:00 0                          [vvar]\n"
	"7f9c3b6ba000-7f9c3b6bc000 r-xp 00000000 00:00 0                          [vdso]\n"
	"7f9c3b6c0000-7f9c3b6c1000 rwxp 00000000 00:00 0                          [anon:jit code]\n"
	"7fffcdef8000-7fffcdf19000 rw-p 00000000 00:00 0                          [stack]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

TEST(parse_basic)
{
	const struct procmaps_entry *e;
	struct procmaps *m = NULL;

	CHECK(!procmaps__parse(maps_text, sizeof(maps_text) - 1, &m));
	CHECK_EQ_U64(procmaps__count(m), 12);
	e = procmaps__entry(m, 1);
	CHECK_EQ_U64(e->start, 0x55c2d411b000ull);
	CHECK_EQ_U64(e->end, 0x55c2d4120000ull);
	CHECK_EQ_U64(e->offset, 0x2000);
	CHECK_EQ_U64(e->perms, PROCMAPS_READ | PROCMAPS_EXEC);
	CHECK_EQ_U64(e->dev_major, 0xfe);
	CHECK_EQ_U64(e->dev_minor, 0);
	CHECK_EQ_U64(e->inode, 247134);
	CHECK_STR(e->path, "/usr/bin/cat");
	CHECK(!e->deleted && !e->anonymous);
	procmaps__free(m);
}

TEST(parse_special)
{
	const struct procmaps_entry *e;
	struct procmaps *m = NULL;

	CHECK(!procmaps__parse(maps_text, sizeof(maps_text) - 1, &m));
	e = procmaps__entry(m, 3);
	CHECK(e->anonymous);
	CHECK_STR(e->path, "");
	e = procmaps__entry(m, 5);
	CHECK(e->deleted);
	CHECK_STR(e->path, "/opt/my app/lib x.so");
	CHECK_EQ_U64(e->dev_major, 8);
	CHECK_EQ_U64(e->dev_minor, 0x11);
	e = procmaps__entry(m, 6);
	CHECK_EQ_U64(e->perms, PROCMAPS_READ | PROCMAPS_SHARED);
	e = procmaps__entry(m, 8);
	CHECK_STR(e->path, "[vdso]");
	CHECK(!e->anonymous);
	e = procmaps__entry(m, 9);
	CHECK_STR(e->path, "[anon:jit code]");
	CHECK_EQ_U64(e->perms, PROCMAPS_READ | PROCMAPS_WRITE | PROCMAPS_EXEC);
	e = procmaps__entry(m, 11);
	CHECK_STR(e->path, "[vsyscall]");
	CHECK_EQ_U64(e->end, 0xffffffffff601000ull);
	CHECK_EQ_U64(e->perms, PROCMAPS_EXEC);
	procmaps__free(m);
}

TEST(find)
{
	struct procmaps *m = NULL;
	const struct procmaps_entry *e;

	CHECK(!procmaps__parse(maps_text, sizeof(maps_text) - 1, &m));
	e = procmaps__find(m, 0x7f9c3b4eb000ull + 0x1234);
	CHECK(e);
	CHECK_STR(e->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	e = procmaps__find(m, 0x7f9c3b641000ull); /* end is exclusive */
	CHECK(!e);
	CHECK(!procmaps__find(m, 0x1000));
	CHECK(!procmaps__find(m, 0xfffffffffffff000ull));
	CHECK(procmaps__find(m, 0x55c2d4119000ull) == procmaps__entry(m, 0));
	procmaps__free(m);
}

TEST(malformed_lines_skipped)
{
	static const char text[] = "garbage line\n"
				   "\n"
				   "1000-2000 r-xp 00000000 08:01 12 /bin/a\n"
				   "3000-2000 r-xp 00000000 08:01 12 /bin/backwards\n"
				   "4000-5000 r-xp zz 08:01 12 /bin/badoff\n"
				   "4000-5000 r-x\n"
				   "12345678901234567-5000 r-xp 00000000 08:01 12 /bin/toolong\n"
				   "6000-7000 r-xp 00000010 08:01 13 /bin/b";
	struct procmaps *m = NULL;

	CHECK(!procmaps__parse(text, sizeof(text) - 1, &m));
	CHECK_EQ_U64(procmaps__count(m), 2);
	CHECK_STR(procmaps__entry(m, 0)->path, "/bin/a");
	CHECK_STR(procmaps__entry(m, 1)->path, "/bin/b");
	CHECK_EQ_U64(procmaps__entry(m, 1)->offset, 0x10);
	procmaps__free(m);
}

TEST(unsorted_input_is_sorted)
{
	static const char text[] = "6000-7000 r-xp 00000000 08:01 13 /bin/b\n"
				   "1000-2000 r-xp 00000000 08:01 12 /bin/a\n";
	struct procmaps *m = NULL;

	CHECK(!procmaps__parse(text, sizeof(text) - 1, &m));
	CHECK_STR(procmaps__entry(m, 0)->path, "/bin/a");
	CHECK_STR(procmaps__find(m, 0x6500)->path, "/bin/b");
	procmaps__free(m);
}

TEST(long_line_skipped)
{
	size_t len = PROCMAPS_MAX_LINE + 200, i;
	char *text = malloc(len + 64);
	struct procmaps *m = NULL;
	int n;

	CHECK(text);
	n = snprintf(text, 64, "1000-2000 r-xp 00000000 08:01 12 /");
	for (i = (size_t)n; i < len; i++)
		text[i] = 'a';
	memcpy(text + len, "\n3000-4000 r-xp 0 0:0 1 /x\n", 28);
	CHECK(!procmaps__parse(text, strlen(text), &m));
	free(text);
	CHECK_EQ_U64(procmaps__count(m), 1);
	CHECK_STR(procmaps__entry(m, 0)->path, "/x");
	procmaps__free(m);
}

TEST(entry_cap)
{
	size_t n = PROCMAPS_MAX_ENTRIES + 1, i, off = 0;
	char *text = malloc(n * 48);
	struct procmaps *m = NULL;

	CHECK(text);
	for (i = 0; i < n; i++)
		off += (size_t)sprintf(text + off, "%zx-%zx r--p 0 0:0 0\n", (i + 1) * 0x1000,
				       (i + 2) * 0x1000);
	CHECK_EQ_U64(procmaps__parse(text, off, &m), (unsigned long long)-E2BIG);
	CHECK(!m);
	/* One less fits. */
	off = (size_t)(strrchr(text, '\n') - text);
	off = (size_t)((char *)memrchr(text, '\n', off) - text) + 1;
	CHECK(!procmaps__parse(text, off, &m));
	CHECK_EQ_U64(procmaps__count(m), PROCMAPS_MAX_ENTRIES);
	procmaps__free(m);
	free(text);
}

TEST(empty_and_self)
{
	struct procmaps *m = NULL;
	char path[64];

	CHECK(!procmaps__parse("", 0, &m));
	CHECK_EQ_U64(procmaps__count(m), 0);
	CHECK(!procmaps__find(m, 0x1000));
	procmaps__free(m);
	m = NULL;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)getpid());
	CHECK(!procmaps__read(path, &m));
	CHECK(procmaps__find(m, (__u64)(unsigned long)&test_empty_and_self));
	CHECK(procmaps__find(m, (__u64)(unsigned long)&test_empty_and_self)->perms & PROCMAPS_EXEC);
	procmaps__free(m);
	m = NULL;
	CHECK(procmaps__read("/nonexistent/maps", &m) == -ENOENT);
	CHECK(!m);
}

/* A table from entries: sorted, paths copied (anonymous when ""), and
 * entries without a path or with an empty range refused. */
TEST(from_entries)
{
	char p1[] = "/lib/b.so", p2[] = "";
	struct procmaps_entry e[3] = {
		{.start = 0x5000, .end = 0x6000, .perms = PROCMAPS_EXEC, .inode = 2, .path = p1},
		{.start = 0x1000,
		 .end = 0x2000,
		 .perms = PROCMAPS_EXEC,
		 .anonymous = false,
		 .path = p2},
		{.start = 0x3000, .end = 0x4000, .perms = PROCMAPS_READ, .inode = 3, .path = "/x"},
	};
	struct procmaps *m = NULL;

	CHECK(!procmaps__from_entries(e, 3, &m));
	p1[1] = 'X'; /* copied: the caller's strings change nothing */
	CHECK_EQ_U64(procmaps__count(m), 3);
	CHECK(procmaps__entry(m, 0)->start == 0x1000 && procmaps__entry(m, 0)->anonymous);
	CHECK(!strcmp(procmaps__entry(m, 2)->path, "/lib/b.so"));
	CHECK(procmaps__entry(m, 2)->inode == 2 && !procmaps__entry(m, 2)->anonymous);
	CHECK(procmaps__find(m, 0x3800) && procmaps__find(m, 0x3800)->inode == 3);
	procmaps__free(m);
	e[0].path = NULL;
	CHECK_EQ_U64(procmaps__from_entries(e, 3, &m), -EINVAL);
	e[0].path = p1;
	e[1].end = e[1].start;
	CHECK_EQ_U64(procmaps__from_entries(e, 3, &m), -EINVAL);
	CHECK(!m);
	CHECK(!procmaps__from_entries(e, 0, &m));
	CHECK_EQ_U64(procmaps__count(m), 0);
	procmaps__free(m);
}

static int calls;

static int source_knows_7(void *ctx, int pid, struct procmaps **out)
{
	const struct procmaps_entry e = {.start = 0x7000, .end = 0x8000, .path = (char *)ctx};

	calls++;
	return pid == 7 ? procmaps__from_entries(&e, 1, out) : -ENOENT;
}

/* A source first, the maps file for what it does not know. */
TEST(read_pid_from_source)
{
	const struct procmaps_source src = {.fn = source_knows_7, .ctx = "/from/source"};
	struct procmaps_source kept;
	struct procmaps *m = NULL;

	CHECK(!procmaps__read_pid(&src, "/nonexistent", 7, &m));
	CHECK(!strcmp(procmaps__entry(m, 0)->path, "/from/source"));
	procmaps__free(m);
	CHECK(!procmaps__read_pid(&src, "/proc", (int)getpid(), &m)); /* its maps file */
	CHECK(procmaps__find(m, (__u64)(unsigned long)&test_read_pid_from_source));
	procmaps__free(m);
	CHECK_EQ_U64(procmaps__read_pid(&src, "/nonexistent", 8, &m), -ENOENT);
	CHECK(!procmaps__read_pid(NULL, "/proc", (int)getpid(), &m));
	procmaps__free(m);
	CHECK_EQ_U64(calls, 3);
	procmaps__source_set(&kept, &src); /* a module's copy, set then cleared */
	CHECK(kept.fn == src.fn && kept.ctx == src.ctx);
	procmaps__source_set(&kept, NULL);
	CHECK(!kept.fn && !kept.ctx);
	CHECK_EQ_U64(procmaps__read_pid(&kept, "/nonexistent", 7, &m), -ENOENT);
}

/* The read buffer is kept per thread: reads after a large file, and after
 * procmaps__thread_done(), give the same as a first read. */
TEST(read_buffer_reuse)
{
	char path[64], tmp[] = "/tmp/profcap_test_mapsXXXXXX";
	struct procmaps *m = NULL;
	size_t i;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)getpid());
	CHECK(!procmaps__read(path, &m));
	CHECK(procmaps__count(m) > 3);
	procmaps__free(m);
	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	CHECK(f);
	for (i = 0; i < 3000; i++) /* ~250 KiB: past the buffer kept */
		fprintf(f, "%llx-%llx r-xp 00000000 fe:00 %zu  /usr/lib/x%zu.so\n",
			0x10000ull + i * 0x2000, 0x11000ull + i * 0x2000, i + 1, i);
	fclose(f);
	CHECK(!procmaps__read(tmp, &m));
	CHECK_EQ_U64(procmaps__count(m), 3000);
	CHECK_STR(procmaps__entry(m, 2999)->path, "/usr/lib/x2999.so");
	procmaps__free(m);
	unlink(tmp);
	CHECK(!procmaps__read(path, &m)); /* not what the large file left */
	CHECK(procmaps__count(m) > 3 && procmaps__count(m) < 1000);
	CHECK(procmaps__find(m, (__u64)(unsigned long)&test_read_buffer_reuse));
	procmaps__free(m);
	procmaps__thread_done();
	procmaps__thread_done(); /* twice: nothing held */
	CHECK(!procmaps__read(path, &m));
	CHECK(procmaps__find(m, (__u64)(unsigned long)&test_read_buffer_reuse));
	procmaps__free(m);
	procmaps__thread_done();
}

/* Blocks of freed tables are reused: many tables at once, of sizes large
 * and small, freed and parsed again in any order, each intact. */
TEST(blocks_reused)
{
	struct procmaps *m[12] = {0};
	char *big = NULL, line[128];
	size_t blen = 0, i, k;

	for (i = 0; i < 400; i++) {
		int n = snprintf(line, sizeof(line),
				 "%llx-%llx r-xp 00000000 fe:00 %zu  /lib/b%zu.so\n",
				 0x10000ull + i * 0x2000, 0x11000ull + i * 0x2000, i + 1, i);

		big = realloc(big, blen + (size_t)n);
		CHECK(big);
		memcpy(big + blen, line, (size_t)n);
		blen += (size_t)n;
	}
	for (k = 0; k < 3; k++) {
		for (i = 0; i < 12; i++) {
			bool large = (i + k) % 3 == 0;

			CHECK(!procmaps__parse(large ? big : maps_text,
					       large ? blen : sizeof(maps_text) - 1, &m[i]));
		}
		for (i = 0; i < 12; i++) {
			bool large = (i + k) % 3 == 0;

			CHECK_EQ_U64(procmaps__count(m[i]), large ? 400 : 12);
			CHECK_STR(procmaps__entry(m[i], large ? 399 : 4)->path,
				  large ? "/lib/b399.so" : "/usr/lib/x86_64-linux-gnu/libc.so.6");
			if (i % 2 == k % 2) {
				procmaps__free(m[i]);
				m[i] = NULL;
			}
		}
		for (i = 0; i < 12; i++)
			procmaps__free(m[i]);
	}
	free(big);
}

int main(void)
{
	RUN(parse_basic);
	RUN(parse_special);
	RUN(find);
	RUN(malformed_lines_skipped);
	RUN(unsorted_input_is_sorted);
	RUN(long_line_skipped);
	RUN(entry_cap);
	RUN(empty_and_self);
	RUN(read_buffer_reuse);
	RUN(blocks_reused);
	RUN(from_entries);
	RUN(read_pid_from_source);
	procmaps__free(NULL);
	return TEST_DONE();
}
