/* perf_script.h - read the text that `perf script` prints into the profile
 * model, so perf.data recordings can be converted and sent to OTLP.
 *
 * Understands the default output and -F variants with comm, pid/tid, cpu,
 * time, period, event, ip, sym[+off] and dso: one header line per sample
 * ("comm pid/tid [cpu] secs.usecs: period event:"), then the callchain,
 * one indented "addr sym+0xoff (dso)" line per frame, leaf first, and a
 * blank line; without a callchain the single frame may end the header line.
 * Each sample counts 1, with its time (perf's seconds since boot mapped to
 * the epoch with this host's clocks; 10-digit seconds taken as epoch times:
 * docs/time.md) and its CPU when printed. Threads are grouped by pid. When only a tid is
 * printed (perf's default "comm tid [cpu] time:"), the thread's process
 * comes from the task events of the same text (--show-task-events: COMM,
 * FORK, EXIT lines give pid/tid pairs; --show-mmap-events lines too), else
 * it is unknown: every such thread goes to one process of pid -1 with no
 * name, and @st counts them (perf_script__pid_note()). Not evidence: the
 * dso set or addresses of a thread, as perf prints dso-relative addresses
 * that every process of a program shares. Task event lines are no samples.
 * A process is named after its main thread (tid == pid), else its first
 * thread's comm.
 * Frames whose dso is [kernel.*] (or with a kernel address and no dso) are
 * kernel frames; "[unknown]" symbols have no function; "+0x..." offsets are
 * stripped. Each dso becomes one mapping spanning the addresses seen in it,
 * with file_offset = start (perf prints dso-relative addresses for user
 * code). cpu-clock/task-clock samples keep ("samples","count") over
 * ("cpu","nanoseconds"); other events use (event, "count") as period type.
 *
 * Lines that are neither a header, a frame nor a comment are skipped and
 * counted; input with no sample at all is an error. Pure code but for
 * reading the clocks once.
 */
#ifndef PROFCAP_PERF_SCRIPT_H
#define PROFCAP_PERF_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct profile;

struct perf_script_stats {
	size_t samples;		   /* sample records read */
	size_t skipped;		   /* lines not understood */
	size_t first_skipped_line; /* 1-based line number of the first one, 0 = none */
	size_t truncated;	   /* samples whose callchain was cut to the model's limit */
	__u64 period;		   /* period of the first sample that shows one, 0 = none */
	__u64 duration_ns;	   /* last - first sample time (+ one period), > 0 */
	bool cpu_clock;		   /* the event is a CPU clock (period in ns) */
	size_t threads_without_pid; /* threads whose process the input does not show */
	size_t samples_without_pid; /* their samples */
};

/* The one line to tell the user when @st has threads without a pid (@buf,
 * @len bytes), or NULL when every thread has its process. */
const char *perf_script__pid_note(const struct perf_script_stats *st, char *buf, size_t len);

/* Whether @len bytes at @data look like perf script text: no NUL byte in
 * the first 4 KiB and the first line that is not blank or a '#' comment
 * parses as a sample header. */
bool perf_script__looks_like(const void *data, size_t len);

/* Parse @len bytes of perf script text at @data into a new profile (*@out,
 * freed by the caller with profile__free()); the profile's meta is left for
 * the caller to set (with @st's period and duration). Fills @st. Returns 0,
 * -EBADMSG with @err (@errlen bytes) saying why (binary data, no sample
 * found), -E2BIG (a model table is full) or -ENOMEM. */
int perf_script__parse(const void *data, size_t len, struct profile **out,
		       struct perf_script_stats *st, char *err, size_t errlen);

#endif
