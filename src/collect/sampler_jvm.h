/* sampler_jvm.h - which processes' Java frames the BPF walker reads
 * (bpf/cpu_sampler/jvm.bpf.h), and the layout it reads them with. */
#ifndef PROFCAP_SAMPLER_JVM_H
#define PROFCAP_SAMPLER_JVM_H

#include <stdbool.h>

struct jvmproc;
struct jvm_proc;
struct sampler;

/* Walk the Java frames of process @pid's samples with what @jp says
 * (proc/jvmproc.h; copied), or stop (@jp NULL: it exec()ed or exited). 0;
 * -EOPNOTSUPP when the walker is off (no table unwinding, or the
 * environment's PROFCAP_JVM=0); -EINVAL when @jp's layout does not fit
 * the walker; -errno of the map update (PROFCAP_JVM_PROCS processes at
 * once, warned once). */
int sampler__set_jvm(struct sampler *s, int pid, const struct jvmproc *jp);

/* @jp as the BPF walker's map entry (bpf/jvm.h), checked: interpreter
 * slots within the words the walker reads, the CodeBlob fields within its
 * head read, the code heaps and segment sizes in range. 0 or -EINVAL.
 * Pure. */
int sampler__jvm_proc(const struct jvmproc *jp, struct jvm_proc *out);

#endif
