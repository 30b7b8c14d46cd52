/* offcpu.h - the off-CPU half of the sampler (collect/ internal): sets up
 * the sched_switch raw tracepoint and the finish_task_switch kprobe of
 * bpf/offcpu_bpf.h, which live in the sampler's BPF object and share its
 * filters, stack tables and generations. No tracefs, no BTF needed (kernel
 * BTF only tells the wait state apart on kernels older than 5.18).
 */
#ifndef PROFCAP_OFFCPU_H
#define PROFCAP_OFFCPU_H

#include <linux/types.h>

#include "collect/sampler.h"

struct cpu_sampler;
struct bpf_link;
struct btf;

/* Before load: enable (size the maps, @entries counters per generation, set
 * the rodata, task_struct offsets from kernel BTF @btf, borrowed; NULL =
 * none) or disable (no autoload) the off-CPU programs. 0 or -errno
 * (logged). */
int offcpu__configure(struct cpu_sampler *skel, const struct sampler_opts *o, __u32 entries,
		      const struct btf *btf);

#define OFFCPU_LINKS 3

/* After load: attach the programs; @links get them (NULLs when off-CPU is
 * disabled), the caller destroys them. 0 or -errno (logged with a hint). */
int offcpu__attach(struct cpu_sampler *skel, struct bpf_link *links[OFFCPU_LINKS]);

/* Add the BPF counters to @st (summed over CPUs). */
void offcpu__stats(const struct cpu_sampler *skel, struct sampler_stats *st);

#endif
