/* sampler.h - the kernel half of a capture: the CPU-sampling BPF program and
 * one software cpu-clock perf event per online CPU.
 *
 * Samples are counted in BPF maps (two generations); sampler__drain() swaps
 * generations and hands every aggregated record of the idle one to a
 * callback, so a capture of any length runs in bounded kernel memory. Needs
 * CAP_BPF + CAP_PERFMON (or root); every failure is logged with a hint.
 */
#ifndef PROFCAP_SAMPLER_H
#define PROFCAP_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "collect/record.h"

#define SAMPLER_UNWIND_FILES 4096u /* file tables at once */
/* Processes whose VMAs found by the BPF walker are kept, per CPU (LRU):
 * only those user space has not described yet need it. */
#define SAMPLER_VCACHE_PROCS 128u
#define SAMPLER_UNWIND_MAPS (1u << 16) /* mapping entries, all processes */
/* Stacks deeper than PROFCAP_MAX_STACK per generation (their extra frames). */
#define SAMPLER_USTACK_EXT_MAX 1024u
/* Processes followed through forks (an LRU: a fork storm cannot fill it). */
#define SAMPLER_FOLLOWED_MAX 65536u

/* The executable mappings of process @pid as the side-band records know
 * them (collect/sideband.h; processes exec()ed while the sampler runs, and
 * for a while after they exit): *@out gets a table the caller frees
 * (procmaps__free()). 0; -ENOENT when they do not know it (or there are
 * none); -ENOMEM. Any thread. */
struct sampler;
struct procmaps;
int sampler__process_maps(struct sampler *s, int pid, struct procmaps **out);

struct procsnap;
/* A new process @tgid and its snapshot taken when it was announced
 * (borrowed for the call; NULL when it was already gone). */
typedef void (*sampler_proc_fn)(void *ctx, __u32 tgid, const struct procsnap *snap);

struct sampler;

/* Load the BPF program configured by @opts (borrowed for the call only) and open (but do not
 * enable) one perf event per online CPU. NULL on failure, after logging one line that says what is
 * missing (capability, sysctl, kernel feature) and what to do. */
struct sampler *sampler__new(const struct sampler_opts *opts);

/* Enable sampling on every CPU. 0 or -errno (logged). With a quick start
 * (system-wide, no off-CPU: see the BPF program's profcap_quick), a small
 * program samples from here on and the table unwinder is loaded on a
 * thread, then takes over; PROFCAP_QUICK_START=0 loads it in
 * sampler__new() instead. */
int sampler__start(struct sampler *s);

/* Wait up to @timeout_ms for new-process notices and call @fn for each
 * (tgid first seen by the BPF program; a notice's snapshot is taken when
 * it comes, and the wait ends early only when many are queued: a caller
 * takes them before each drain), then build the unwind tables of
 * those processes (until sampler__stop()), calling @fn for notices that
 * arrive meanwhile before the next build. Before a quick start's hand-over,
 * @fn is called later (at the first call after it); after sampler__stop()
 * this waits for the hand-over. Returns the number of notices, 0 on
 * timeout, -EINTR when a signal arrived, other -errno on failure (a table
 * unwinder the kernel refused in the background: logged, sampling stopped). */
int sampler__poll(struct sampler *s, int timeout_ms, sampler_proc_fn fn, void *ctx);

/* Swap map generations and pass every record of the now idle generation to
 * @fn, then empty it. A non-zero return from @fn stops the drain and is
 * returned. 0 or -errno. */
int sampler__drain(struct sampler *s, sampler_record_fn fn, void *ctx);

/* Disable sampling on every CPU (records already counted stay drainable). */
void sampler__stop(struct sampler *s);

/* The counters so far into @st (main thread). */
void sampler__stats(struct sampler *s, struct sampler_stats *st);

/* ---- thread context (OTEP 4947) ---- */

struct threadctx_loc;

/* Read the thread context of process @pid's samples from where @loc says
 * its threads keep otel_thread_ctx_v1 (proc/threadctx.h; copied), or stop
 * reading it (@loc NULL: a process that exec()ed something else). 0;
 * -EOPNOTSUPP without kernel BTF for the thread pointer (warned once: its
 * samples carry no links), or -errno of the map update (table full). */
int sampler__set_thread_ctx(struct sampler *s, int pid, const struct threadctx_loc *loc);

/* ---- CPython frames ---- */

struct pyproc;
struct py_proc;

/* Walk the CPython frames of process @pid's samples with what @pp says
 * (proc/pyproc.h; copied), or stop (@pp NULL: it exec()ed or exited).
 * 0; -EOPNOTSUPP when the walker is off (no user stacks, or the
 * environment's PROFCAP_PYTHON=0); -EINVAL/-ERANGE when @pp's layout does
 * not fit the walker; -errno of the map update (PROFCAP_PY_PROCS
 * processes at once, warned once). */
int sampler__set_python(struct sampler *s, int pid, const struct pyproc *pp);

/* @pp as the BPF walker's map entry (bpf/python.h), checked: every frame
 * field within the PROFCAP_PY_FRAME_READ bytes read at once. 0, -EINVAL
 * (a field the walker needs is missing), -ERANGE. Pure. */
int sampler__py_proc(const struct pyproc *pp, struct py_proc *out);

/* ---- table unwinding ---- */

/* Load (or reload) the unwind tables of process @pid, before its samples
 * need them. 0 when unwinding is off; else unwind_table__add_process(). */
int sampler__add_process(struct sampler *s, int pid);

/* Reload @pid's tables if they are older than a second (code mapped after
 * they were built, e.g. dlopen). 0 when off or too early, 1 reloaded, or
 * an error of sampler__add_process(). */
int sampler__refresh_process(struct sampler *s, int pid);

/* Fill @st; false (and zeros) when table unwinding is off. */
bool sampler__unwind_stats(struct sampler *s, struct sampler_unwind_stats *st);

/* Detach and free everything. Accepts NULL. When the table builder thread
 * is in the middle of a parse, it is left running with what it uses (not
 * freed): call this only on the way out of the process. */
void sampler__free(struct sampler *s);

/* Check, before any work, that this process may load BPF programs and open
 * system-wide perf events. 0, or -EPERM after logging what is missing. */
int sampler__check_privileges(void);

#endif
