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

#include <stdbool.h>
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
 * process started meanwhile is walked from then on. While Python
 * processes keep starting (one found in the last CAPTURE_PY_BUSY_NS),
 * every CAPTURE_PY_NOTICES_BUSY_NS: short runs lose less of their start. */
#define CAPTURE_PY_NOTICES_NS 200000000ll
#define CAPTURE_PY_NOTICES_BUSY_NS 50000000ll
#define CAPTURE_PY_BUSY_NS 10000000000ll
/* Python processes a session keeps at once (the BPF walker's own cap). */
#define CAPTURE_PY_PROCS 4096
/* A process named python* that does not run Python yet (sampled while
 * ld.so maps libpython) is looked at again at each notice poll for this
 * long, CAPTURE_PY_PENDING of them at once. */
#define CAPTURE_PY_RETRY_NS 2000000000ll
#define CAPTURE_PY_PENDING 64

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

/* Are new processes' notices due at @now_ns (then the next poll is
 * planned)? The session polls its sampler then, and calls
 * capture_python__retry(). With @cp NULL: never. */
bool capture_python__notices_due(struct capture_python *cp, __s64 now_ns);

/* @wake, or the next notice poll when sooner. */
__s64 capture_python__next_wake(const struct capture_python *cp, __s64 wake);

/* Look again at the processes named python* not found running Python
 * yet, with their mappings now (from the sampler's side-band records,
 * else /proc/PID/maps); forget those older than CAPTURE_PY_RETRY_NS. */
void capture_python__retry(struct capture_python *cp, __s64 now_ns);

/* Forget the Python processes that have exited (after their last records). */
void capture_python__forget_gone(struct capture_python *cp);

struct ingest_counts;
struct sampler_record;
struct sampler_stats;

/* Record @r is about to be added to the window: its Python stack cut
 * where its native stacks are whole is counted, for the file's truncated
 * samples (native cuts are counted by ingest). */
void capture_python__record(struct capture_python *cp, const struct sampler_record *r);

/* The window's samples counted so (*@depth: of them, at the Python depth
 * limit), since the last call. */
__u64 capture_python__take_cut(struct capture_python *cp, __u64 *depth);

/* -v: how many Python processes were found, walked, not walked; the
 * Python stacks the walker read (@st) and the window's (@c). */
void capture_python__log(const struct capture_python *cp, const struct sampler_stats *st,
			 const struct ingest_counts *c);

#endif
