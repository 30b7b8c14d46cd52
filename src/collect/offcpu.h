/* offcpu.h - the off-CPU half of the sampler (collect/ internal): sets up
 * the sched_switch, rseq_update and sys_exit tracepoint programs of
 * bpf/cpu_sampler/offcpu.bpf.c (sched_switch alone with task works, Linux
 * >= 6.18, chosen at load time), which live in the sampler's BPF object and
 * share its filters, stack tables and generations. No tracefs; without
 * kernel BTF waits end at sys_exit, without kernel stacks.
 */
#ifndef PROFCAP_OFFCPU_H
#define PROFCAP_OFFCPU_H

#include <stdbool.h>
#include <linux/types.h>

#include "offcpu_types.h"
#include "collect/record.h"

struct cpu_sampler;
struct bpf_insn;
struct bpf_link;
struct btf;

/* Before load: enable (size the maps, @entries counters per generation, set
 * the rodata, task_struct offsets from kernel BTF @btf, borrowed; NULL =
 * none; choose the programs for this kernel) or disable (no autoload) the
 * off-CPU programs. 0 or -errno (logged). */
int offcpu__configure(struct cpu_sampler *skel, const struct sampler_opts *o, __u32 entries,
		      const struct btf *btf);

/* Rewrite the placeholder helper calls of @insns (@n of them;
 * OFFCPU_TASK_WORK_CALL, see bpf/cpu_sampler/offcpu.bpf.c) into calls of
 * the task-work kfunc, kernel BTF type @id. Returns how many there were. */
size_t offcpu__link_task_work(struct bpf_insn *insns, size_t n, __u32 id);

/* Write the kernel offsets @off (by enum offcpu_off) over their placeholder
 * immediates in @insns (@n of them; OFFCPU_OFF_IMM + index). Returns how
 * many there were. */
size_t offcpu__link_offsets(struct bpf_insn *insns, size_t n, const __u32 off[OFFCPU_OFF__COUNT]);

/* After configure: are the off-CPU programs on? */
bool offcpu__enabled(const struct cpu_sampler *skel);

/* The off-CPU links, by role. */
enum {
	OFFCPU_RESUME,	   /* rseq_update: back to user space after a wait */
	OFFCPU_SWITCH,	   /* sched_switch BTF tracepoint, both sides (and task works) */
	OFFCPU_SWITCH_OUT, /* sched_switch raw tracepoint, switch-out side (no BTF) */
	OFFCPU_SYSEXIT,	   /* sys_exit: threads without rseq, or no rseq tracepoint */
	OFFCPU_LINKS
};

/* After load: attach the programs; @links get them (NULLs when off-CPU is
 * disabled), the caller destroys them. 0 or -errno (logged with a hint). */
int offcpu__attach(struct cpu_sampler *skel, struct bpf_link *links[OFFCPU_LINKS]);

/* Between drains: attach sys_exit (links[OFFCPU_SYSEXIT]) once the BPF
 * side has seen a long wait of a thread without rseq. 0, or -errno of the
 * attach (warned once; not retried). */
int offcpu__poll(struct cpu_sampler *skel, struct bpf_link *links[OFFCPU_LINKS]);

/* Add the BPF counters to @st (summed over CPUs). */
void offcpu__stats(const struct cpu_sampler *skel, struct sampler_stats *st);

#endif
