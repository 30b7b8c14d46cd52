/* sampler_v8.h - which processes' JavaScript frames the BPF walker reads
 * (bpf/cpu_sampler/v8.bpf.c), and the drain of the stacks it stored. */
#ifndef PROFCAP_SAMPLER_V8_H
#define PROFCAP_SAMPLER_V8_H

#include <linux/types.h>

struct drain_stacks;
struct sampler;
struct sampler_record;
struct stack_trace;
struct v8proc;
struct v8_proc;

/* Walk the JavaScript frames of process @pid's samples with what @vp says
 * (proc/v8proc.h; copied), or stop (@vp NULL: it exec()ed or exited). 0;
 * -EOPNOTSUPP when the walker is off (no table unwinding, or the
 * environment's PROFCAP_V8=0); -EINVAL when @vp's layout does not fit the
 * walker; -errno of the map update (PROFCAP_V8_PROCS processes at once,
 * warned once). */
int sampler__set_v8(struct sampler *s, int pid, const struct v8proc *vp);

/* @vp as the BPF walker's map entry (bpf/v8.h), checked: frame slots
 * within the PROFCAP_V8_SLOTS_BELOW bytes below fp, the function's fields
 * within PROFCAP_V8_SFI_READ bytes. 0 or -EINVAL. Pure. */
int sampler__v8_proc(const struct v8proc *vp, struct v8_proc *out);

/* Look up @r's managed runtime stack @rtstack (hash; 0 = none) into @buf (which
 * @r borrows) and point @r at its words (a multiple of PROFCAP_V8_WORDS,
 * at most SAMPLER_MAX_JSFRAMES frames). One that is not there flags @r
 * SAMPLER_REC_V8_LOST. Returns the samples or waits whose stack was
 * missing (drain.c). */
__u64 drain__rtstack(struct stack_trace *buf, const struct drain_stacks *src,
		     struct sampler_record *r, __u64 rtstack);

#endif
