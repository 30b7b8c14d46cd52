/* test_perf_script.c - perf script reader on hand-written fixtures: the
 * default output, -F comm,pid,tid,time,ip,sym,dso, commands with spaces,
 * other events, one-line samples without a callchain, C++ symbols and
 * "(deleted)" dsos, kernel frames, [unknown] symbols, skipped lines with
 * their line number, and inputs that must be rejected; real output of a
 * two-threaded process with perf's default fields (no pids), with task
 * events and with pid/tid. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/perf_script.h"
#include "model/profile.h"
#include "test.h"

static const char default_fixture[] =
	"# ========\n"
	"# captured on    : Sat Nov 22 02:58:00 2025\n"
	"gt-main  2925 [000]  4591.394030:    1001001 cpu-clock:pppH: \n"
	"\t           ffffffff81a0b2c5 _raw_spin_unlock_irqrestore+0x15 ([kernel.kallsyms])\n"
	"\t            1424 burn_b+0x34 (/opt/gt/groundtruth)\n"
	"\t            15ce middle_b+0xe (/opt/gt/groundtruth)\n"
	"\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
	"\n"
	"gt-worker  2926 [001]  4591.396032:    1001001 cpu-clock:pppH: \n"
	"\t            14e4 burn_w+0x34 (/opt/gt/groundtruth)\n"
	"\t               0 [unknown] ([unknown])\n"
	"\n"
	"gt-main  2925 [000]  4591.395031:    1001001 cpu-clock:pppH: \n"
	"\t            1424 burn_b+0x34 (/opt/gt/groundtruth)\n"
	"\t            15ce middle_b+0xe (/opt/gt/groundtruth)\n"
	"\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
	"\n";

/* Function names of sample @i of process @proc, leaf first, joined by ';'
 * ("?" for no function), into @out. */
static const char *stack_names(const struct profile *p, size_t proc, size_t i, char *out,
			       size_t len)
{
	const struct profile_sample_entry *s = profile__sample(p, proc, i);
	size_t n, k, used = 0;
	const __u32 *locs = profile__stack(p, s->stack, &n);

	out[0] = '\0';
	for (k = 0; k < n; k++) {
		const struct profile_location_entry *l = profile__location(p, locs[k]);
		const char *name = "?";

		if (profile__location_function(p, l))
			name = profile__string(p, profile__function(p, profile__location_function(p, l))->name, NULL);
		used += (size_t)snprintf(out + used, len - used, "%s%s", k ? ";" : "", name);
		if (used >= len)
			break;
	}
	return out;
}

static const char *type_of(const struct profile *p, __u32 loc)
{
	const struct profile_location_entry *l = profile__location(p, loc);

	return l->attr ? profile__attr(p, l->attr)->str_value : "";
}

static size_t find_proc(const struct profile *p, __s64 pid)
{
	size_t i;

	for (i = 0; i < profile__process_count(p); i++)
		if (profile__process(p, i)->pid == pid)
			return i;
	return (size_t)-1;
}

TEST(default_output)
{
	struct perf_script_stats st;
	struct profile *p = NULL;
	__u32 st_i, su, pt, pu;
	char why[128], names[256];
	size_t proc, n, i;
	const __u32 *locs;
	const struct profile_location_entry *l;
	const struct profile_mapping_entry *m;
	int err;

	err = perf_script__parse(default_fixture, strlen(default_fixture), &p, &st, why,
				 sizeof(why));
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(st.samples, 3);
	CHECK_EQ_U64(st.skipped, 0);
	CHECK_EQ_U64(st.period, 1001001);
	CHECK(st.cpu_clock);
	/* 4591.394030 .. 4591.396032 plus one period */
	CHECK_EQ_U64(st.duration_ns, 2002000 + 1001001);
	CHECK_EQ_U64(profile__total(p), 3);
	profile__value_types(p, &st_i, &su, &pt, &pu);
	CHECK_STR(profile__string(p, pt, NULL), "cpu");
	CHECK_STR(profile__string(p, pu, NULL), "nanoseconds");

	/* Only tids are printed and no task event says more: the process is
	 * unknown, not one invented per thread. */
	CHECK_EQ_U64(profile__process_count(p), 1);
	proc = find_proc(p, -1);
	CHECK(proc != (size_t)-1);
	CHECK(!profile__process(p, proc)->exe_name);
	CHECK_EQ_U64(st.threads_without_pid, 2);
	CHECK_EQ_U64(st.samples_without_pid, 3);
	CHECK_EQ_U64(profile__sample_count(p, proc), 3); /* different stacks or threads */
	for (i = 0; i < 3; i++) {
		stack_names(p, proc, i, names, sizeof(names));
		if (profile__sample(p, proc, i)->value == 1 && names[0] == '_')
			break;
	}
	CHECK(i < 3);
	CHECK_STR(names, "_raw_spin_unlock_irqrestore;burn_b;middle_b;__libc_start_call_main");
	locs = profile__stack(p, profile__sample(p, proc, i)->stack, &n);
	CHECK_EQ_U64(n, 4);
	CHECK_STR(type_of(p, locs[0]), "kernel");
	CHECK_STR(type_of(p, locs[1]), "native");
	l = profile__location(p, locs[0]);
	CHECK_EQ_U64(l->address, 0xffffffff81a0b2c5ull);
	m = profile__mapping(p, l->mapping);
	CHECK_STR(profile__string(p, m->filename, NULL), "[kernel.kallsyms]");
	/* The groundtruth mapping spans the addresses seen in it. */
	m = profile__mapping(p, profile__location(p, locs[1])->mapping);
	CHECK_STR(profile__string(p, m->filename, NULL), "/opt/gt/groundtruth");
	CHECK_EQ_U64(m->start, 0x1424);
	CHECK_EQ_U64(m->limit, 0x15cf);
	CHECK_EQ_U64(m->file_offset, 0x1424);

	for (i = 0; i < 3; i++)
		if (!strcmp(stack_names(p, proc, i, names, sizeof(names)), "burn_w;?"))
			break;
	CHECK(i < 3);
	locs = profile__stack(p, profile__sample(p, proc, i)->stack, &n);
	CHECK_EQ_U64(profile__location(p, locs[1])->mapping, 0);
	profile__free(p);
}

/* Real `perf script` output of a process with two threads (perf 6.1,
 * `perf record -g ./thr`), cut to a few samples: the default fields, the
 * same with --show-task-events, and with -F comm,pid,tid,... */
static const char thr_default[] =
	"thr  9881  9684.418662:    5025125 cpu-clock:ppp: \n"
	"\t            117e spin+0x25 (/tmp/rt/thr)\n"
	"\n"
	"thr  9883  9684.429461:    5025125 cpu-clock:ppp: \n"
	"\t            1188 spin+0x2f (/tmp/rt/thr)\n"
	"\n"
	"thr  9883  9684.492434:    5025125 cpu-clock:ppp: \n"
	"\tffffffff813a2413 finish_task_switch.isra.0+0x93 ([kernel.kallsyms])\n"
	"\tffffffff821f8914 __schedule+0x3d4 ([kernel.kallsyms])\n"
	"\t            1188 spin+0x2f (/tmp/rt/thr)\n"
	"\n"
	"thr  9881  9684.507375:    5025125 cpu-clock:ppp: \n"
	"\t            117e spin+0x25 (/tmp/rt/thr)\n"
	"\n";

static const char thr_task_events[] =
	"perf-exec     0     0.000000: PERF_RECORD_COMM: perf-exec:9881/9881\n"
	"thr  9881  9684.393630: PERF_RECORD_COMM exec: thr:9881/9881\n"
	"thr  9881  9684.394258: PERF_RECORD_FORK(9881:9883):(9881:9881)\n"
	"thr  9881  9684.418662:    5025125 cpu-clock:ppp: \n"
	"\t            117e spin+0x25 (/tmp/rt/thr)\n"
	"\n"
	"thr  9883  9684.429461:    5025125 cpu-clock:ppp: \n"
	"\t            1188 spin+0x2f (/tmp/rt/thr)\n"
	"\n"
	"thr  9883  9684.492434:    5025125 cpu-clock:ppp: \n"
	"\tffffffff813a2413 finish_task_switch.isra.0+0x93 ([kernel.kallsyms])\n"
	"\tffffffff821f8914 __schedule+0x3d4 ([kernel.kallsyms])\n"
	"\t            1188 spin+0x2f (/tmp/rt/thr)\n"
	"\n"
	"thr  9881  9684.507375:    5025125 cpu-clock:ppp: \n"
	"\t            117e spin+0x25 (/tmp/rt/thr)\n"
	"\n"
	"thr  9883  9684.706541: PERF_RECORD_EXIT(9881:9883):(9879:9879)\n"
	"thr  9881  9684.706617: PERF_RECORD_EXIT(9881:9881):(9879:9879)\n";

static const char thr_pid_tid[] =
	"thr  9881/9881   9684.418662: cpu-clock:ppp: \n"
	"\t            117e spin (/tmp/rt/thr)\n"
	"\n"
	"thr  9881/9883   9684.429461: cpu-clock:ppp: \n"
	"\t            1188 spin (/tmp/rt/thr)\n"
	"\n"
	"thr  9881/9883   9684.447344: cpu-clock:ppp: \n"
	"\t            118c spin (/tmp/rt/thr)\n"
	"\n"
	"thr  9881/9881   9684.458534: cpu-clock:ppp: \n"
	"\t            118c spin (/tmp/rt/thr)\n"
	"\n";

/* The thread ids of process entry @proc's samples, as a bit per tid in
 * {9881, 9883}. */
static unsigned thread_bits(const struct profile *p, size_t proc)
{
	unsigned bits = 0;
	size_t i, k;

	for (i = 0; i < profile__sample_count(p, proc); i++) {
		const struct profile_sample_entry *s = profile__sample(p, proc, i);

		for (k = 0; k < s->nattrs; k++) {
			const struct profile_attr_entry *a = profile__attr(p, s->attrs[k]);

			if (!strcmp(profile__string(p, a->key, NULL), "thread.id"))
				bits |= a->int_value == 9881 ? 1u : a->int_value == 9883 ? 2u : 4u;
		}
	}
	return bits;
}

/* Two threads of one process are never two processes: without pids the
 * process is unknown (and said so), with task events or pid/tid fields it
 * is the right one. */
TEST(threads_are_not_processes)
{
	struct perf_script_stats st;
	struct profile *p = NULL;
	char why[128], note[512];
	size_t proc;

	CHECK_EQ_U64(perf_script__parse(thr_default, strlen(thr_default), &p, &st, why,
					sizeof(why)),
		     0);
	CHECK_EQ_U64(profile__process_count(p), 1);
	proc = find_proc(p, -1);
	CHECK(proc != (size_t)-1);
	CHECK_EQ_U64(thread_bits(p, proc), 3);
	CHECK_EQ_U64(st.threads_without_pid, 2);
	CHECK_EQ_U64(st.samples_without_pid, 4);
	CHECK(perf_script__pid_note(&st, note, sizeof(note)));
	CHECK(strstr(note, "no pids: 2 threads (4 samples)"));
	CHECK(strstr(note, "perf script -F comm,pid,tid"));
	profile__free(p);

	CHECK_EQ_U64(perf_script__parse(thr_task_events, strlen(thr_task_events), &p, &st, why,
					sizeof(why)),
		     0);
	CHECK_EQ_U64(st.samples, 4); /* task events are no samples */
	CHECK_EQ_U64(st.skipped, 0);
	CHECK_EQ_U64(st.threads_without_pid, 0);
	CHECK(!perf_script__pid_note(&st, note, sizeof(note)));
	CHECK_EQ_U64(profile__process_count(p), 1);
	proc = find_proc(p, 9881);
	CHECK(proc != (size_t)-1);
	CHECK_STR(profile__process(p, proc)->exe_name, "thr");
	CHECK_EQ_U64(thread_bits(p, proc), 3);
	CHECK_EQ_U64(profile__total(p), 4);
	profile__free(p);

	CHECK_EQ_U64(perf_script__parse(thr_pid_tid, strlen(thr_pid_tid), &p, &st, why,
					sizeof(why)),
		     0);
	CHECK_EQ_U64(st.threads_without_pid, 0);
	CHECK_EQ_U64(profile__process_count(p), 1);
	proc = find_proc(p, 9881);
	CHECK(proc != (size_t)-1);
	CHECK_EQ_U64(thread_bits(p, proc), 3);
	profile__free(p);
}

TEST(fields_with_pid_and_tid)
{
	static const char text[] = "gt-worker  2925/2926   4591.386158: \n"
				   "\t            14e4 burn_w (/opt/gt/groundtruth)\n"
				   "\t            1552 worker_loop (/opt/gt/groundtruth)\n"
				   "\n"
				   "gt-main  2925/2925   4591.394030: \n"
				   "\t            1424 burn_b (/opt/gt/groundtruth)\n"
				   "\n"
				   "gt-main  2925/2925   4591.394031: \n"
				   "\t            1424 burn_b (/opt/gt/groundtruth)\n"
				   "\n";
	struct perf_script_stats st;
	struct profile *p = NULL;
	char why[128], names[128];
	size_t i;
	int found = 0;

	CHECK_EQ_U64(perf_script__parse(text, strlen(text), &p, &st, why, sizeof(why)), 0);
	CHECK_EQ_U64(st.samples, 3);
	CHECK_EQ_U64(st.period, 0);
	CHECK_EQ_U64(profile__process_count(p), 1);
	/* Named after the main thread even though the worker came first. */
	CHECK_STR(profile__process(p, 0)->exe_name, "gt-main");
	CHECK_EQ_U64(profile__sample_count(p, 0), 2);
	for (i = 0; i < 2; i++) {
		const struct profile_sample_entry *s = profile__sample(p, 0, i);

		stack_names(p, 0, i, names, sizeof(names));
		found |= (!strcmp(names, "burn_w;worker_loop") && s->value == 1) << 0;
		found |= (!strcmp(names, "burn_b") && s->value == 2) << 1;
	}
	CHECK_EQ_U64(found, 3);
	profile__free(p);
}

TEST(spaces_events_one_line_cpp)
{
	static const char text[] =
		"Web Content 1234/1240 [002] 5.000000: 250000 cycles:u: \n"
		"\t4011 foo(int, char const*)+0x1c (/usr/lib/app (deleted))\n"
		"\t4000 std::vector<int>::operator[](unsigned long) (/usr/lib/app (deleted))\n"
		"\n"
		"app 10/10 6.000000: 4004d6 main+0x6 (/usr/bin/app)\n"
		"app 10/10 6.500000: 4004d6 main+0x6 (/usr/bin/app)\n";
	struct perf_script_stats st;
	struct profile *p = NULL;
	char why[128], names[256];
	__u32 s, su, pt, pu;
	size_t proc;
	const __u32 *locs;
	size_t n;

	CHECK_EQ_U64(perf_script__parse(text, strlen(text), &p, &st, why, sizeof(why)), 0);
	CHECK_EQ_U64(st.samples, 3);
	CHECK(!st.cpu_clock);
	CHECK_EQ_U64(st.period, 250000);
	CHECK_EQ_U64(st.duration_ns, 1500000000ull);
	profile__value_types(p, &s, &su, &pt, &pu);
	CHECK_STR(profile__string(p, pt, NULL), "cycles");
	CHECK_STR(profile__string(p, pu, NULL), "count");
	proc = find_proc(p, 1234);
	CHECK(proc != (size_t)-1);
	CHECK_STR(profile__process(p, proc)->exe_name, "Web Content");
	CHECK_STR(stack_names(p, proc, 0, names, sizeof(names)),
		  "foo(int, char const*);std::vector<int>::operator[](unsigned long)");
	locs = profile__stack(p, profile__sample(p, proc, 0)->stack, &n);
	CHECK_STR(profile__string(
			  p, profile__mapping(p, profile__location(p, locs[0])->mapping)->filename,
			  NULL),
		  "/usr/lib/app (deleted)");
	proc = find_proc(p, 10);
	CHECK(proc != (size_t)-1);
	CHECK_STR(stack_names(p, proc, 0, names, sizeof(names)), "main");
	CHECK_EQ_U64(profile__sample(p, proc, 0)->value, 2);
	profile__free(p);
}

TEST(skipped_lines_are_counted)
{
	static const char text[] = "app 10/10 1.000000: 1000 cpu-clock:\n"
				   "\t1234 work (/usr/bin/app)\n"
				   "\tnot a frame line\n"
				   "garbage without numbers\n"
				   "\t5678 orphan (/usr/bin/app)\n"
				   "\n"
				   "app 10/10 1.001000: 1000 cpu-clock:\r\n"
				   "\t1234 work (/usr/bin/app)\r\n";
	struct perf_script_stats st;
	struct profile *p = NULL;
	char why[128];

	CHECK_EQ_U64(perf_script__parse(text, strlen(text), &p, &st, why, sizeof(why)), 0);
	CHECK_EQ_U64(st.samples, 2);
	CHECK_EQ_U64(st.skipped, 3);
	CHECK_EQ_U64(st.first_skipped_line, 3);
	CHECK_EQ_U64(profile__total(p), 2);
	CHECK_EQ_U64(profile__sample_count(p, 0), 1);
	profile__free(p);
}

TEST(rejected_inputs)
{
	static const char binary[] = "app 10/10 1.0: x\n\0\x01\x02";
	struct perf_script_stats st;
	struct profile *p = (struct profile *)1;
	char why[128];

	CHECK_EQ_U64(perf_script__parse("", 0, &p, &st, why, sizeof(why)),
		     (unsigned long long)-EBADMSG);
	CHECK(p == NULL);
	CHECK(strstr(why, "no perf script sample"));
	CHECK_EQ_U64(perf_script__parse("hello\nworld\n", 12, &p, &st, why, sizeof(why)),
		     (unsigned long long)-EBADMSG);
	CHECK(strstr(why, "line 1"));
	CHECK_EQ_U64(perf_script__parse(binary, sizeof(binary), &p, &st, why, sizeof(why)),
		     (unsigned long long)-EBADMSG);
	CHECK(strstr(why, "binary"));
	CHECK(p == NULL);
}

TEST(looks_like)
{
	static const char otlp[] = "\x0a\x10\x0a\x0e\x12\x0c";

	CHECK(perf_script__looks_like(default_fixture, strlen(default_fixture)));
	CHECK(perf_script__looks_like("\n\nx 1/1 2.5: \n", 13));
	CHECK(!perf_script__looks_like(otlp, sizeof(otlp)));
	CHECK(!perf_script__looks_like("\x1f\x8b\x08", 3));
	CHECK(!perf_script__looks_like("hello world\n", 12));
	CHECK(!perf_script__looks_like("", 0));
}

TEST(deep_callchain_is_cut)
{
	struct perf_script_stats st;
	struct profile *p = NULL;
	size_t i, len, cap = 5000 * 32 + 64;
	const __u32 *locs;
	char why[128];
	char *text;
	size_t n;

	text = malloc(cap);
	CHECK(text);
	len = (size_t)snprintf(text, cap, "app 10/10 1.0: \n");
	for (i = 0; i < 5000; i++)
		len += (size_t)snprintf(text + len, cap - len, "\t%zx f%zu (/a)\n", i + 1, i);
	CHECK_EQ_U64(perf_script__parse(text, len, &p, &st, why, sizeof(why)), 0);
	free(text);
	CHECK_EQ_U64(st.truncated, 1);
	locs = profile__stack(p, profile__sample(p, 0, 0)->stack, &n);
	CHECK_EQ_U64(n, 4096);
	CHECK(locs);
	profile__free(p);
}

/* Each sample keeps its time (perf's seconds since boot, mapped to the
 * epoch with this host's clocks) and its CPU. */
TEST(times_and_cpus)
{
	struct perf_script_stats st;
	struct profile *p = NULL;
	struct timespec wall, mono;
	const struct profile_occurrence *o;
	__u64 first, last, off;
	__u32 cpu;
	size_t i, n, seen = 0;
	char err[256];

	clock_gettime(CLOCK_REALTIME, &wall);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	off = (__u64)(wall.tv_sec - mono.tv_sec) * 1000000000ull + (__u64)wall.tv_nsec -
	      (__u64)mono.tv_nsec;
	CHECK_EQ_U64(perf_script__parse(default_fixture, sizeof(default_fixture) - 1, &p, &st, err,
					sizeof(err)),
		     0);
	CHECK_EQ_U64(profile__time_count(p), profile__total(p));
	CHECK_EQ_U64(profile__time_span(p, &first, &last), 0);
	CHECK_EQ_U64(last - first, 4591396032000ull - 4591394030000ull);
	/* within a second of this host's mapping (the clocks move on) */
	CHECK(first > off + 4591394030000ull - 1000000000ull);
	CHECK(first < off + 4591394030000ull + 1000000000ull);
	for (i = 0; i < profile__process_count(p); i++)
		for (n = 0; n < profile__sample_count(p, i); n++) {
			const struct profile_sample_entry *e = profile__sample(p, i, n);
			size_t k;

			o = profile__sample_times(p, i, n, &k);
			CHECK(o && k == e->value);
			CHECK_EQ_U64(profile__sample_cpu(p, e, &cpu), 0);
			CHECK(cpu <= 1);
			seen += cpu;
		}
	CHECK(seen > 0); /* gt-worker ran on CPU 1 */
	profile__free(p);
}

int main(void)
{
	RUN(default_output);
	RUN(fields_with_pid_and_tid);
	RUN(threads_are_not_processes);
	RUN(spaces_events_one_line_cpp);
	RUN(skipped_lines_are_counted);
	RUN(rejected_inputs);
	RUN(looks_like);
	RUN(deep_callchain_is_cut);
	RUN(times_and_cpus);
	return TEST_DONE();
}
