/* jvmframes_threads.h - Java thread names (java.lang.Thread.name) of the
 * JVMs a jvmframes names frames of, by kernel thread id, read from the
 * live process (proc/jvmproc.h) and cached. Used by jvmframes.c only;
 * callers ask jvmframes__thread_name(). */
#ifndef PROFCAP_JVMFRAMES_THREADS_H
#define PROFCAP_JVMFRAMES_THREADS_H

#include <linux/types.h>

struct jvmproc;
struct jvmthreads;

#define JVMTHREADS_MAX 65536		  /* thread names kept (all processes) */
#define JVMTHREADS_READ 4096		  /* Java threads of a process read at once */
#define JVMTHREADS_MAX_BYTES (16u << 20)  /* bytes of names kept: past it, no new names */
#define JVMTHREADS_EVERY_NS 1000000000ull /* a process's threads read at most this often */

/* @proc_root as for jvmproc__locate() (NULL = "/proc"; borrowed). NULL on
 * ENOMEM. */
struct jvmthreads *jvmthreads__new(const char *proc_root);
void jvmthreads__free(struct jvmthreads *jt);

/* Forget what is known of process @pid (it exited, exec()ed, or its JVM
 * was located again). */
void jvmthreads__forget(struct jvmthreads *jt, int pid);

/* The Java name of thread @tid of process @pid (JVM @jp) when the kernel's
 * name @comm is its first bytes (the JVM gives its threads their Java
 * name cut to 15 bytes), else NULL. A thread not known yet reads the
 * process's thread list and the names not known (at most JVMTHREADS_READ,
 * once per JVMTHREADS_EVERY_NS per process, @now_ns CLOCK_MONOTONIC). The
 * string stays valid until jvmthreads__free(). */
const char *jvmthreads__name(struct jvmthreads *jt, const struct jvmproc *jp, int pid, int tid,
			     const char *comm, __u64 now_ns);

#endif
