/* python.h - the CPython processes of a session (main thread): found when
 * they are announced (proc/pyproc.h), given to the BPF walker
 * (sampler__set_python()) and to the frame namer (symbolize/pyframes.h),
 * forgotten when they exec something else or exit.
 *
 * The namer reads code objects from the live process, so a Python process
 * is drained more often while it is young: a short `python3 -c` run gets
 * names for what it ran before it exits.
 */
#ifndef PROFCAP_CAPTURE_PYTHON_H
#define PROFCAP_CAPTURE_PYTHON_H

#include <linux/types.h>

struct capture_python;
struct procsnap;
struct pyframes;
struct sampler;

/* Drains while a Python process is younger than CAPTURE_PY_YOUNG_NS come
 * at most this far apart. */
#define CAPTURE_PY_DRAIN_NS 200000000ll
#define CAPTURE_PY_YOUNG_NS 3000000000ll
/* A session takes new processes' notices at least this often: a Python
 * process started meanwhile is walked from then on. */
#define CAPTURE_PY_NOTICES_NS 200000000ll
/* Python processes a session keeps at once (the BPF walker's own cap). */
#define CAPTURE_PY_PROCS 4096

/* For the sessions of sampler @smp (borrowed). NULL on ENOMEM. */
struct capture_python *capture_python__new(struct sampler *smp);
void capture_python__free(struct capture_python *cp);

/* The frame namer, for ingest (NULL with @cp NULL). */
struct pyframes *capture_python__frames(struct capture_python *cp);

/* Process @pid was announced, or exec()ed (@snap: its snapshot, or NULL).
 * @now_ns: CLOCK_MONOTONIC. 1 when it runs Python (now), 0 when not. */
int capture_python__process(struct capture_python *cp, int pid, const struct procsnap *snap,
			    __s64 now_ns);

/* When the next drain is due for the young Python processes, at most
 * @next (a drain planned then): CAPTURE_PY_DRAIN_NS after @now_ns while
 * one is young. */
__s64 capture_python__next_drain(const struct capture_python *cp, __s64 now_ns, __s64 next);

/* Forget the Python processes that have exited (after their last records). */
void capture_python__forget_gone(struct capture_python *cp);

struct ingest_counts;
struct sampler_stats;

/* -v: how many Python processes were found, walked, not walked; the
 * Python stacks the walker read (@st) and the window's (@c). */
void capture_python__log(const struct capture_python *cp, const struct sampler_stats *st,
			 const struct ingest_counts *c);

#endif
