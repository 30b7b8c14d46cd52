#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"
#include "cli/report.h"
#include "util/utf8.h"
#include "report_text.h"
#include "test.h"

static const struct profile_mapping_desc map_app = {0x400000, 0x500000, 0, "/usr/bin/app", NULL, 0};
static const struct profile_mapping_desc map_z = {0x7f0000, 0x7f8000, 0, "/lib/libz.so.1", NULL, 0};
static const struct profile_mapping_desc map_k = {0xffffffff81000000ull, 0xffffffff82000000ull, 0,
						  "[kernel.kallsyms]", NULL, 0};
static const struct profile_process_desc app = {100, "app", "/usr/bin/app", "app -x", NULL};
static const struct profile_process_desc other = {200, "other", "/usr/bin/other", NULL, NULL};

static struct profile_frame fr(const char *fn, __u64 addr)
{
	struct profile_frame f = {addr, &map_app, fn, PROFILE_FRAME_NATIVE, NULL, NULL, 0};

	return f;
}

/* app (pid 100): [f f g main] x3 tid 101, [h main] x1 tid 102, [k_func f main]
 * x2 tid 101; other (pid 200): [x] x4, [?libz main] x2 tid 200. Total 12. */
static struct profile *model(void)
{
	struct profile *p = profile__new();
	struct profile_frame s1[] = {fr("f", 0x400010), fr("f", 0x400014), fr("g", 0x400020),
				     fr("main", 0x400030)};
	struct profile_frame s2[] = {fr("h", 0x400040), fr("main", 0x400034)};
	struct profile_frame s3[] = {
		{0xffffffff81000100ull, &map_k, "k_func", PROFILE_FRAME_KERNEL, NULL, NULL, 0},
		fr("f", 0x400018),
		fr("main", 0x400038)};
	struct profile_frame s4[] = {fr("x", 0x400050)};
	struct profile_frame s5[] = {{0x7f0010, &map_z, NULL, PROFILE_FRAME_NATIVE, NULL, NULL, 0},
				     fr("main", 0x400030)};

	if (!p)
		return NULL;
	if (profile__add_sample(p, &app, 101, "main-t", s1, 4, 3) ||
	    profile__add_sample(p, &app, 102, "work-t", s2, 2, 1) ||
	    profile__add_sample(p, &app, 101, "main-t", s3, 3, 2) ||
	    profile__add_sample(p, &other, 200, "other", s4, 1, 4) ||
	    profile__add_sample(p, &other, 200, "other", s5, 2, 2)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

static struct report_opts json_opts(void)
{
	struct report_opts o;

	report__default_opts(&o);
	o.json = true;
	o.file = "t.pb";
	return o;
}

TEST(self_and_inclusive_count_recursion_once)
{
	struct profile *p = model();
	struct report_opts o = json_opts();
	char *out;

	CHECK(p);
	out = report_text(p, &o);
	CHECK(out);
	/* f is on two stacks (3 + 2 samples) and twice on one of them. */
	CHECK(strstr(out, "{\"name\":\"f\",\"type\":\"native\",\"self\":3,\"self_share\":0.250000,"
			  "\"inclusive\":5,\"inclusive_share\":0.416667}"));
	CHECK(strstr(out,
		     "{\"name\":\"main\",\"type\":\"native\",\"self\":0,\"self_share\":0.000000,"
		     "\"inclusive\":8,"));
	CHECK(strstr(out, "{\"name\":\"k_func\",\"type\":\"kernel\",\"self\":2,"));
	/* An unnamed frame: its mapping and file offset, as folded and flame
	 * graphs name it. */
	CHECK(strstr(out, "{\"name\":\"libz.so.1+0x10\",\"type\":\"native\",\"self\":2,"));
	CHECK(strstr(out, "\"total\":12,\"by\":\"function\",\"sort\":\"self\""));
	/* Sorted by self, ties by inclusive then name. */
	CHECK(strstr(out, "\"x\"") < strstr(out, "\"f\""));
	CHECK(strstr(out, "\"f\"") < strstr(out, "\"libz.so.1+0x10\""));
	CHECK(strstr(out, "\"k_func\"") < strstr(out, "\"libz.so.1+0x10\""));
	CHECK(strstr(out, "\"main\"") < strstr(out, "\"g\""));
	free(out);
	profile__free(p);
}

TEST(inclusive_sort_and_top)
{
	struct profile *p = model();
	struct report_opts o = json_opts();
	char *out;

	CHECK(p);
	o.inclusive = true;
	o.top = 2;
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "\"sort\":\"inclusive\""));
	CHECK(strstr(out, "\"top\":[\n {\"name\":\"main\""));
	CHECK(strstr(out, "\n {\"name\":\"f\""));
	CHECK(!strstr(out, "\"name\":\"x\"")); /* third by inclusive: cut by --top 2 */
	free(out);
	profile__free(p);
}

TEST(processes_and_threads)
{
	struct profile *p = model();
	struct report_opts o = json_opts();
	char *out;

	CHECK(p);
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "\"processes\":[\n {\"pid\":100,\"exe\":\"app\",\"value\":6,"
			  "\"share\":0.500000},\n {\"pid\":200,\"exe\":\"other\",\"value\":6,"));
	CHECK(strstr(out, "{\"pid\":100,\"tid\":101,\"name\":\"main-t\",\"value\":5,"));
	CHECK(strstr(out, "{\"pid\":100,\"tid\":102,\"name\":\"work-t\",\"value\":1,"));
	CHECK(strstr(out, "{\"pid\":200,\"tid\":200,\"name\":\"other\",\"value\":6,"));
	free(out);
	o.by = BY_THREAD;
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "\"top\":[\n {\"name\":\"other\",\"pid\":200,\"tid\":200,\"self\":6,"));
	free(out);
	o.by = BY_PROCESS;
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "\"top\":[\n {\"name\":\"app\",\"pid\":100,\"self\":6,"));
	free(out);
	profile__free(p);
}

TEST(by_mapping)
{
	struct profile *p = model();
	struct report_opts o = json_opts();
	char *out;

	CHECK(p);
	o.by = BY_MAPPING;
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "{\"name\":\"/usr/bin/app\",\"self\":8,\"self_share\":0.666667,"
			  "\"inclusive\":12,"));
	CHECK(strstr(out, "{\"name\":\"[kernel.kallsyms]\",\"self\":2,"));
	CHECK(strstr(out, "{\"name\":\"/lib/libz.so.1\",\"self\":2,"));
	free(out);
	profile__free(p);
}

TEST(filters)
{
	struct profile *p = model();
	struct report_opts o = json_opts();
	char *out;

	CHECK(p);
	o.filter_pid = true;
	o.pid = 200;
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "\"filter\":{\"pid\":200,\"comm\":null}"));
	CHECK(strstr(out, "\"total\":6,"));
	CHECK(!strstr(out, "\"name\":\"f\""));
	CHECK(strstr(out, "\"self_share\":0.666667")); /* x: 4 of 6 */
	free(out);

	o.filter_pid = false;
	o.comm = "main-t"; /* a thread name */
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "\"total\":5,"));
	CHECK(strstr(out, "{\"name\":\"f\",\"type\":\"native\",\"self\":3,\"self_share\":0.600000,"
			  "\"inclusive\":5,\"inclusive_share\":1.000000}"));
	free(out);

	o.comm = "app"; /* an executable name: all its threads */
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "\"total\":6,"));
	CHECK(strstr(out, "\"name\":\"work-t\""));
	free(out);

	o.comm = "nothing";
	o.json = false;
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "No samples match the filter"));
	free(out);
	profile__free(p);
}

TEST(text_output)
{
	struct profile *p = model();
	struct report_opts o;
	char *out;

	CHECK(p);
	report__default_opts(&o);
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "Capture: (standard input)\n"));
	CHECK(strstr(out, "  total       12 samples\n"));
	CHECK(strstr(out, "  processes   2\n"));
	CHECK(strstr(out, "   25.00%           3      41.67%           5  native   f\n"));
	CHECK(strstr(out, "   16.67%           2      16.67%           2  kernel   k_func\n"));
	CHECK(strstr(out, "Processes (2):\n"));
	CHECK(strstr(out, "   50.00%           6         100  app\n"));
	CHECK(strstr(out, "Threads (3):\n"));
	CHECK(strstr(out, "   41.67%           5         100         101  main-t\n"));
	free(out);
	o.top = 1;
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "Top 1 functions by self value:"));
	CHECK(strstr(out, "  ... 6 more (--top 0 shows all)\n"));
	CHECK(!strstr(out, "dropped"));
	free(out);
	profile__free(p);
}

TEST(loss_counts)
{
	struct profile *p = model();
	struct profile_meta meta;
	struct report_opts o;
	char *out;

	CHECK(p);
	meta = *profile__meta(p);
	meta.samples_dropped = 4;
	meta.samples_truncated = 9;
	meta.samples_truncated_depth = 2;
	CHECK(!profile__set_meta(p, &meta));
	report__default_opts(&o);
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "  dropped     4 samples (not in this capture: tables full, lost while "
			  "recording, or drained too late)\n"));
	/* By cause: not every truncated sample hit the depth limit. */
	CHECK(strstr(out, "  truncated   9 samples (2 cut at the stack depth limit; 7 not unwound "
			  "to the outermost frame: no unwind row, unreadable stack or unwind "
			  "tables not loaded yet)\n"));
	CHECK(!strstr(out, "no stack"));
	free(out);
	o = json_opts();
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "\"dropped_samples\":4,\"truncated_samples\":9,"
			  "\"truncated_depth_limit_samples\":2,\"truncated_unwind_samples\":7,"
			  "\"stack_missing_samples\":0,\"untimed_samples\":0}"));
	free(out);
	/* Only unwinder stops: no depth-limit wording at all. (A fresh copy:
	 * set_meta freed the strings the old one pointed to.) */
	meta = *profile__meta(p);
	meta.samples_truncated_depth = 0;
	CHECK(!profile__set_meta(p, &meta));
	report__default_opts(&o);
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "  truncated   9 samples (9 not unwound"));
	CHECK(!strstr(out, "depth limit"));
	free(out);
	profile__free(p);
}

TEST(escaping)
{
	struct profile *p = profile__new();
	struct report_opts o = json_opts();
	struct profile_frame f[] = {fr("we\"ird\\name<\x01>\xff", 0x400100)};
	char *out;

	CHECK(p);
	CHECK(!profile__add_sample(p, &app, 7, "t\nname", f, 1, 1));
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "\"name\":\"we\\\"ird\\\\name<\\u0001>\\ufffd\""));
	CHECK(strstr(out, "\"name\":\"t\\u000aname\""));
	free(out);
	o.json = false;
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "we\"ird\\name<?>?\n"));
	CHECK(strstr(out, "t?name\n"));
	free(out);
	profile__free(p);
}

TEST(empty_stack_and_foreign_value_type)
{
	struct profile *p = profile__new();
	struct report_opts o;
	char *out;

	CHECK(p);
	CHECK(!profile__set_value_types(p, "cpu", "nanoseconds", "cpu", "nanoseconds"));
	CHECK(!profile__add_sample(p, &app, 1, NULL, NULL, 0, 5000));
	report__default_opts(&o);
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "  value       cpu/nanoseconds\n"));
	CHECK(strstr(out, "  total       5000 nanoseconds\n"));
	CHECK(strstr(out, "[no stack]\n"));
	CHECK(strstr(out, "(unknown)\n")); /* the thread has no name */
	free(out);
	profile__free(p);
}

TEST(utf8)
{
	CHECK_EQ_U64(utf8__seq("a"), 1);
	CHECK_EQ_U64(utf8__seq("\xc3\xa9"), 2);
	CHECK_EQ_U64(utf8__seq("\xe2\x82\xac"), 3);
	CHECK_EQ_U64(utf8__seq("\xf0\x9f\x94\xa5"), 4);
	CHECK_EQ_U64(utf8__seq("\xc0\xaf"), 0);	       /* overlong */
	CHECK_EQ_U64(utf8__seq("\xe0\x80\xaf"), 0);     /* overlong */
	CHECK_EQ_U64(utf8__seq("\xed\xa0\x80"), 0);     /* surrogate */
	CHECK_EQ_U64(utf8__seq("\xf4\x90\x80\x80"), 0); /* past U+10FFFF */
	CHECK_EQ_U64(utf8__seq("\xe2\x82"), 0);	       /* truncated */
	CHECK_EQ_U64(utf8__seq("\x80"), 0);
}

/* Off-CPU values are nanoseconds: text tables print them in s, ms or us
 * (as the total suits), the unit in the column headers. */
TEST(off_cpu_times_in_units)
{
	struct profile *p = profile__new();
	struct profile_frame a[] = {fr("wait_a", 0x400010), fr("main", 0x400030)};
	struct profile_frame b[] = {fr("wait_b", 0x400020), fr("main", 0x400034)};
	struct report_opts o;
	char *out;

	CHECK(p);
	CHECK(!profile__set_value_types(p, "off_cpu", "nanoseconds", "context_switch", "count"));
	CHECK(!profile__add_sample(p, &app, 101, "t", a, 2, 1500000000ull));
	CHECK(!profile__add_sample(p, &app, 101, "t", b, 2, 500000000ull));
	report__default_opts(&o);
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "   SELF%       SELF(s)  INCLUSIVE%  INCLUSIVE(s)  TYPE     FUNCTION\n"));
	CHECK(strstr(out, "   75.00%         1.500      75.00%         1.500  native   wait_a\n"));
	CHECK(strstr(out, "    0.00%         0.000     100.00%         2.000  native   main\n"));
	CHECK(strstr(out, "    SHARE    VALUE(s)         PID  EXE\n"));
	CHECK(strstr(out, "  100.00%       2.000         100  app\n"));
	CHECK(!strstr(out, "1500000000"));
	free(out);
	profile__free(p);
	/* 3 ms in all: milliseconds */
	p = profile__new();
	CHECK(p);
	CHECK(!profile__set_value_types(p, "off_cpu", "nanoseconds", "context_switch", "count"));
	CHECK(!profile__add_sample(p, &app, 101, "t", a, 2, 2000000));
	CHECK(!profile__add_sample(p, &app, 101, "t", b, 2, 1000000));
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "SELF(ms)  INCLUSIVE% INCLUSIVE(ms)  TYPE"));
	CHECK(strstr(out, "   66.67%         2.000      66.67%         2.000  native   wait_a\n"));
	CHECK(strstr(out, "    SHARE   VALUE(ms)         PID         TID  NAME\n"));
	free(out);
	profile__free(p);
}

/* Memory values are bytes: text tables print them in KiB, MiB or GiB. */
TEST(memory_sizes_in_units)
{
	struct profile *p = profile__new();
	struct profile_frame a[] = {fr("alloc_a", 0x400010), fr("main", 0x400030)};
	struct profile_frame b[] = {fr("alloc_b", 0x400020), fr("main", 0x400034)};
	struct report_opts o;
	char *out;

	CHECK(p);
	CHECK(!profile__set_value_types(p, "inuse_space", "bytes", "space", "bytes"));
	CHECK(!profile__add_sample(p, &app, 101, "t", a, 2, 3ull << 20));
	CHECK(!profile__add_sample(p, &app, 101, "t", b, 2, 1ull << 20));
	report__default_opts(&o);
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "SELF(MiB)"));
	CHECK(strstr(out, "  native   alloc_a\n"));
	CHECK(strstr(out, "3.000"));
	CHECK(strstr(out, "VALUE(MiB)"));
	CHECK(!strstr(out, "3145728"));
	free(out);
	profile__free(p);
	p = profile__new();
	CHECK(p);
	CHECK(!profile__set_value_types(p, "alloc_space", "bytes", "space", "bytes"));
	CHECK(!profile__add_sample(p, &app, 101, "t", a, 2, 2048));
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "SELF(KiB)"));
	CHECK(strstr(out, "2.000"));
	free(out);
	profile__free(p);
}

/* Python frames: no mapping, no address; a function, a file and a line. */
TEST(interpreter_frames)
{
	static const struct profile_line l_handle = {"handle", NULL, "/srv/app.py", 10, 42, 0};
	static const struct profile_line l_anon = {NULL, NULL, "/srv/lib.py", 0, 9, 0};
	struct profile *p = profile__new();
	struct profile_frame s[] = {
		{0, NULL, NULL, PROFILE_FRAME_NATIVE, "cpython", NULL, &l_anon, 1},
		{0, NULL, "handle", PROFILE_FRAME_NATIVE, "cpython", NULL, &l_handle, 1},
		fr("main", 0x400030),
	};
	struct report_opts o;
	char *out;

	CHECK(p);
	CHECK(!profile__add_sample(p, &app, 101, "t", s, 3, 4));
	report__default_opts(&o);
	out = report_text(p, &o);
	CHECK(out);
	/* the type column tells interpreted code from native */
	CHECK(strstr(out, "  cpython  handle\n"));
	CHECK(strstr(out, "  cpython  /srv/lib.py:9\n"));
	CHECK(strstr(out, "  native   main\n"));
	CHECK(!strstr(out, "0x0") && !strstr(out, "[unknown]"));
	free(out);
	o.lines = true;
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "  cpython  handle /srv/app.py:42\n"));
	CHECK(strstr(out, "  cpython  /srv/lib.py:9\n")); /* named by its line: not twice */
	CHECK(!strstr(out, "0x0") && !strstr(out, "[unknown]"));
	free(out);
	o.lines = false;
	o.by = BY_MAPPING;
	out = report_text(p, &o);
	CHECK(out);
	CHECK(strstr(out, "  [cpython]\n"));
	free(out);
	profile__free(p);
}

int main(void)
{
	RUN(self_and_inclusive_count_recursion_once);
	RUN(inclusive_sort_and_top);
	RUN(processes_and_threads);
	RUN(by_mapping);
	RUN(filters);
	RUN(text_output);
	RUN(escaping);
	RUN(empty_stack_and_foreign_value_type);
	RUN(utf8);
	RUN(loss_counts);
	RUN(off_cpu_times_in_units);
	RUN(memory_sizes_in_units);
	RUN(interpreter_frames);
	return TEST_DONE();
}
