/* test.h - a minimal unit-test harness for profcap's pure modules.
 *
 * Each test binary defines test functions with TEST(name) and lists them in
 * main() with RUN(name). A failing CHECK marks the current test failed and
 * returns from it. A test that truly cannot run here (no such file on this
 * system, kallsyms unreadable) says so with SKIP("reason"), which returns
 * from it too. Output: one line per test ("ok NAME", "FAIL NAME: why",
 * "skip NAME: reason") and a closing "unit: N passed, N failed, N skipped"
 * line that tests/run.sh adds up.
 */
#ifndef PROFCAP_TEST_H
#define PROFCAP_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int test__passed, test__failed, test__skipped, test__cur_failed, test__cur_skipped;
/* The test RUN() runs now, for SKIP called from a test's helpers. */
static const char *test__cur_name = "";

#define TEST(name) static void test_##name(void)

#define RUN(name)                                 \
	do {                                      \
		test__cur_failed = 0;             \
		test__cur_skipped = 0;            \
		test__cur_name = #name;           \
		test_##name();                    \
		if (test__cur_failed) {           \
			test__failed++;           \
		} else if (test__cur_skipped) {   \
			test__skipped++;          \
		} else {                          \
			test__passed++;           \
			printf("ok %s\n", #name); \
		}                                 \
	} while (0)

/* Skip the current test: print "skip NAME: reason", count it, return
 * (from a helper too: the test counts as skipped unless a CHECK failed). Only
 * for what cannot run on this system, never to hide a failure. */
#define SKIP(...)                                   \
	do {                                        \
		printf("skip %s: ", test__cur_name); \
		printf(__VA_ARGS__);                \
		printf("\n");                       \
		test__cur_skipped = 1;              \
		return;                             \
	} while (0)

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			printf("FAIL %s: %s:%d: %s\n", __func__, __FILE__, __LINE__, #cond); \
			test__cur_failed = 1;                                                \
			return;                                                              \
		}                                                                            \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                                      \
	do {                                                                                    \
		unsigned long long a__ = (unsigned long long)(a);                               \
		unsigned long long b__ = (unsigned long long)(b);                               \
		if (a__ != b__) {                                                               \
			printf("FAIL %s: %s:%d: %s == %s (%llu != %llu)\n", __func__, __FILE__, \
			       __LINE__, #a, #b, a__, b__);                                     \
			test__cur_failed = 1;                                                   \
			return;                                                                 \
		}                                                                               \
	} while (0)

#define CHECK_STR(a, b)                                                                   \
	do {                                                                              \
		const char *a__ = (a), *b__ = (b);                                        \
		if (!a__ || !b__ || strcmp(a__, b__)) {                                   \
			printf("FAIL %s: %s:%d: %s == %s (\"%s\" != \"%s\")\n", __func__, \
			       __FILE__, __LINE__, #a, #b, a__ ? a__ : "(null)",          \
			       b__ ? b__ : "(null)");                                     \
			test__cur_failed = 1;                                             \
			return;                                                           \
		}                                                                         \
	} while (0)

/* Whether process @pid runs the program named @comm now (/proc/PID/comm):
 * a child forked to exec() it has done so. For tests that wait on one. */
static inline bool test__runs(int pid, const char *comm)
{
	char path[64], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return !strcmp(buf, comm);
}

#define TEST_DONE()                                                                      \
	(printf("unit: %d passed, %d failed, %d skipped\n", test__passed, test__failed, \
		test__skipped),                                                          \
	 test__failed ? 1 : 0)

/* In main(), when the whole binary cannot run here (a fixture missing):
 * say why, count one skip and close as TEST_DONE() does:
 * `return SKIP_ALL("%s missing (run make)", path);` */
#define SKIP_ALL(...)                                                      \
	(printf("skip all: "), printf(__VA_ARGS__), printf("\n"), test__skipped++, \
	 TEST_DONE())

#endif
