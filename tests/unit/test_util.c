/* test_util.c - the shared helpers of util/ and proc/status: UTF-8
 * decoding and sanitizing, the "last start <= key" search, whole-file reads
 * and writes, random ids, the clock, /proc status fields, array population.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/types.h>

#include "test.h"
#include "proc/status.h"
#include "util/array.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fdio.h"
#include "util/id.h"
#include "util/json.h"
#include "util/log.h"
#include "util/search.h"
#include "util/utf8.h"

TEST(utf8_decode)
{
	__u32 cp = 0;

	CHECK_EQ_U64(utf8__decode("a", 1, &cp), 1);
	CHECK_EQ_U64(cp, 'a');
	CHECK_EQ_U64(utf8__decode("\xc3\xa9", 2, &cp), 2);
	CHECK_EQ_U64(cp, 0xe9);
	CHECK_EQ_U64(utf8__decode("\xe2\x82\xac", 3, &cp), 3);
	CHECK_EQ_U64(cp, 0x20ac);
	CHECK_EQ_U64(utf8__decode("\xf0\x9f\x94\xa5", 4, &cp), 4);
	CHECK_EQ_U64(cp, 0x1f525);
	/* Truncated by the length, though the bytes are there. */
	CHECK_EQ_U64(utf8__decode("\xe2\x82\xac", 2, &cp), 0);
	/* Overlong, surrogate, past U+10FFFF, bare continuation, bad lead. */
	CHECK_EQ_U64(utf8__decode("\xc0\xaf", 2, NULL), 0);
	CHECK_EQ_U64(utf8__decode("\xe0\x80\xaf", 3, NULL), 0);
	CHECK_EQ_U64(utf8__decode("\xed\xa0\x80", 3, NULL), 0);
	CHECK_EQ_U64(utf8__decode("\xf4\x90\x80\x80", 4, NULL), 0);
	CHECK_EQ_U64(utf8__decode("\x80", 1, NULL), 0);
	CHECK_EQ_U64(utf8__decode("\xff", 1, NULL), 0);
	/* NUL-terminated: the NUL ends a truncated sequence. */
	CHECK_EQ_U64(utf8__seq("\xe2\x82"), 0);
	CHECK_EQ_U64(utf8__seq("\xe2\x82\xac"), 3);
}

TEST(utf8_printable_and_sanitize)
{
	char in[] = "ok\x01\xc3\xa9\x7f\xe2\x82|\xff\tz";
	char out[sizeof(in)];

	CHECK_EQ_U64(utf8__printable("a", 1), 1);
	CHECK_EQ_U64(utf8__printable("\n", 1), 0);
	CHECK_EQ_U64(utf8__printable("\x7f", 1), 0);
	CHECK_EQ_U64(utf8__printable("\xc3\xa9", 2), 2);
	utf8__sanitize(out, in, sizeof(in) - 1, '?');
	out[sizeof(in) - 1] = '\0';
	CHECK_STR(out, "ok?\xc3\xa9???|??z");
	/* In place. */
	utf8__sanitize(in, in, sizeof(in) - 1, '_');
	CHECK_STR(in, "ok_\xc3\xa9___|__z");
}

struct range {
	__u32 pad;
	__u64 start;
};

TEST(search_upto)
{
	static const struct range r[] = {{0, 10}, {0, 20}, {0, 20}, {0, 40}};
	static const __u64 keys[] = {5, 7, 9};
	const size_t off = offsetof(struct range, start);

	CHECK_EQ_U64(search__upto(r, 4, sizeof(r[0]), off, 9), 0);
	CHECK_EQ_U64(search__upto(r, 4, sizeof(r[0]), off, 10), 1);
	CHECK_EQ_U64(search__upto(r, 4, sizeof(r[0]), off, 19), 1);
	CHECK_EQ_U64(search__upto(r, 4, sizeof(r[0]), off, 20), 3);
	CHECK_EQ_U64(search__upto(r, 4, sizeof(r[0]), off, 39), 3);
	CHECK_EQ_U64(search__upto(r, 4, sizeof(r[0]), off, UINT64_MAX), 4);
	CHECK_EQ_U64(search__upto(r, 0, sizeof(r[0]), off, 100), 0);
	CHECK_EQ_U64(search__upto(keys, 3, sizeof(keys[0]), 0, 8), 2);
}

TEST(fdio_round_trip)
{
	char path[] = "/tmp/profcap-test-fdio-XXXXXX", back[64];
	static const char text[] = "two lines\nof text\n";
	ssize_t n;
	int fd;

	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_EQ_U64(fdio__write_all(fd, text, sizeof(text) - 1), 0);
	close(fd);
	n = fdio__read_file(path, back, sizeof(back));
	CHECK_EQ_U64(n, sizeof(text) - 1);
	CHECK(!memcmp(back, text, sizeof(text) - 1));
	/* Capped. */
	CHECK_EQ_U64(fdio__read_file(path, back, 3), 3);
	unlink(path);
	CHECK(fdio__read_file(path, back, sizeof(back)) == -ENOENT);
	CHECK(fdio__write_all(-1, text, 1) == -EBADF);
}

/* fdio__open(): close-on-exec in one system call, relative opens, no
 * O_CREAT (it passes no mode). */
TEST(fdio_open_cloexec)
{
	int fd, dir, rel;

	fd = fdio__open("/proc/self/stat", O_RDONLY);
	CHECK(fd >= 0);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	dir = fdio__open("/proc/self", O_PATH | O_DIRECTORY);
	CHECK(dir >= 0);
	CHECK(fcntl(dir, F_GETFD) & FD_CLOEXEC);
	rel = fdio__openat(dir, "stat", O_RDONLY);
	CHECK(rel >= 0);
	CHECK(fcntl(rel, F_GETFD) & FD_CLOEXEC);
	close(rel);
	close(dir);
	errno = 0;
	CHECK(fdio__open("/proc/self/no-such-file", O_RDONLY) == -1 && errno == ENOENT);
	errno = 0;
	CHECK(fdio__open("/tmp/profcap-test-fdio-creat", O_WRONLY | O_CREAT) == -1 &&
	      errno == EINVAL);
	CHECK(access("/tmp/profcap-test-fdio-creat", F_OK) != 0);
}

/* fdio__read_proc(): what fdio__read_file() reads, of /proc files the
 * kernel answers in one read, in one read; a cap still caps. */
TEST(fdio_read_proc)
{
	static const char *const files[] = {"/proc/self/comm", "/proc/self/cmdline",
					    "/proc/self/stat", "/proc/self/cgroup"};
	char a[4096], b[4096];
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		ssize_t na = fdio__read_proc(files[i], a, sizeof(a));
		ssize_t nb = fdio__read_file(files[i], b, sizeof(b));

		CHECK(na > 0 && na == nb);
		if (na > 0 && na == nb && strncmp(files[i], "/proc/self/stat", 15))
			CHECK(!memcmp(a, b, (size_t)na)); /* stat's CPU times move */
	}
	CHECK_EQ_U64(fdio__read_proc("/proc/self/comm", a, 2), 2);
	CHECK(fdio__read_proc("/proc/self/no-such-file", a, sizeof(a)) == -ENOENT);
}

TEST(random_ids_differ_and_are_nonzero)
{
	__u8 a[16], b[16], zero[16] = {0};

	id__random(a);
	id__random(b);
	CHECK(memcmp(a, zero, 16));
	CHECK(memcmp(a, b, 16));
}

TEST(system_clock_moves)
{
	__u64 t0 = clock__system.now_ns(clock__system.ctx), t1;

	CHECK(t0 > 0);
	clock__system.sleep_ns(clock__system.ctx, 2000000);
	t1 = clock__mono_ns();
	CHECK(t1 >= t0 + 2000000);
	CHECK(clock__ns(CLOCK_REALTIME) > 1600000000ull * 1000000000ull);
}

TEST(proc_status_fields)
{
	static const char text[] = "Name:\tcat\nUid:\t1000\t1001\t1002\t1003\n"
				   "NSpid:\t4242\t17\nCapEff:\t000001ffffffffff\nVmRSS:\t  2048 kB\n";
	unsigned long long v = 0;

	CHECK(proc_status__field(text, "Uid:", 1, 10, &v));
	CHECK_EQ_U64(v, 1001);
	CHECK(proc_status__field(text, "NSpid:", -1, 10, &v));
	CHECK_EQ_U64(v, 17);
	CHECK(proc_status__field(text, "CapEff:", 0, 16, &v));
	CHECK_EQ_U64(v, 0x1ffffffffffull);
	CHECK(proc_status__field(text, "VmRSS:", 0, 10, &v));
	CHECK_EQ_U64(v, 2048);
	CHECK(!proc_status__field(text, "Uid:", 4, 10, &v));
	CHECK(!proc_status__field(text, "Gid:", 0, 10, &v));
	CHECK(!proc_status__field(text, "Name:", 0, 10, &v));
	/* Our own status: VmRSS is there and not zero. */
	CHECK_EQ_U64(proc_status__self("VmRSS:", 0, 10, &v), 0);
	CHECK(v > 0);
	CHECK(proc_status__self("NoSuchField:", 0, 10, &v) == -ENOENT);
}

TEST(sticky_writer)
{
	struct buf b;
	struct buf_out o = {&b, 0};

	buf__init(&b, 8);
	buf__puts(&o, "abc");
	buf__put(&o, "de", 2);
	CHECK_EQ_U64(o.err, 0);
	buf__puts(&o, "toolong"); /* past the 8-byte cap: the error sticks */
	CHECK(o.err == -E2BIG);
	buf__puts(&o, "f");
	CHECK(o.err == -E2BIG);
	CHECK_EQ_U64(b.len, 5);
	CHECK(!memcmp(b.data, "abcde", 5));
	buf__release(&b);
}

/* A large array written in order gets its pages populated a window ahead
 * (resident before they are written); contents and small arrays are left
 * alone. */
TEST(array_populate)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), cap = (4u << 20) / sizeof(__u64), i;
	unsigned char vec[ARRAY_POPULATE_BYTES / 4096];
	__u64 *v = NULL, small[4] = {1, 2, 3, 4};
	size_t n = 0;

	v = mmap(NULL, cap * sizeof(*v), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0);
	CHECK(v != MAP_FAILED);
	CHECK(!mincore(v, ARRAY_POPULATE_BYTES, vec));
	CHECK(!(vec[1] & 1)); /* untouched */
	for (i = 0; i < cap; i++) {
		array__populate(v, i, sizeof(*v), cap);
		if (i == 1) {
			/* the first window is resident before it is written */
			CHECK(!mincore(v, ARRAY_POPULATE_BYTES, vec));
			for (n = 0; n < ARRAY_POPULATE_BYTES / page && vec[n] & 1; n++)
				;
		}
		v[i] = i;
	}
	CHECK(page != 4096 || n == ARRAY_POPULATE_BYTES / page);
	for (i = 0; i < cap; i++)
		if (v[i] != i)
			break;
	CHECK_EQ_U64(i, cap);
	array__populate(v, cap, sizeof(*v), cap); /* past the end: nothing */
	munmap(v, cap * sizeof(*v));
	array__populate(small, 0, sizeof(small[0]), 4); /* small: nothing */
	array__populate(NULL, 0, 8, 1u << 20);
	CHECK_EQ_U64(small[3], 4);
}

/* JSON string literals, and log lines as JSON events. */
TEST(json_strings_and_log_events)
{
	char buf[256] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	CHECK(f);
	json__fput_str(f, "a\"b\\c\n\x01\xff\xc3\xa9");
	fputc(' ', f);
	json__fput_str(f, NULL);
	fclose(f);
	CHECK_STR(buf, "\"a\\\"b\\\\c\\u000a\\u0001\\ufffd\xc3\xa9\" null");
}

int main(void)
{
	RUN(json_strings_and_log_events);
	RUN(utf8_decode);
	RUN(utf8_printable_and_sanitize);
	RUN(search_upto);
	RUN(fdio_round_trip);
	RUN(fdio_open_cloexec);
	RUN(fdio_read_proc);
	RUN(random_ids_differ_and_are_nonzero);
	RUN(system_clock_moves);
	RUN(proc_status_fields);
	RUN(sticky_writer);
	RUN(array_populate);
	return TEST_DONE();
}
