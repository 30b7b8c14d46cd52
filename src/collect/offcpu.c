#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.h"
#include "offcpu_types.h"
#include "cpu_sampler.skel.h"
#include "util/env.h"
#include "util/log.h"
#include "collect/kbtf.h"
#include "collect/kver.h"
#include "collect/offcpu.h"

static const char *const state_names[SAMPLER_STATE__COUNT] = {
	[SAMPLER_STATE_RUNNABLE] = "runnable",
	[SAMPLER_STATE_INTERRUPTIBLE] = "interruptible",
	[SAMPLER_STATE_UNINTERRUPTIBLE] = "uninterruptible",
	[SAMPLER_STATE_IDLE] = "idle",
	[SAMPLER_STATE_OTHER] = "other",
	[SAMPLER_STATE_UNKNOWN] = "unknown",
};

_Static_assert(SAMPLER_STATE_RUNNABLE == OFFCPU_STATE_RUNNABLE &&
		       SAMPLER_STATE_INTERRUPTIBLE == OFFCPU_STATE_INTERRUPTIBLE &&
		       SAMPLER_STATE_UNINTERRUPTIBLE == OFFCPU_STATE_UNINTERRUPTIBLE &&
		       SAMPLER_STATE_IDLE == OFFCPU_STATE_IDLE &&
		       SAMPLER_STATE_OTHER == OFFCPU_STATE_OTHER &&
		       SAMPLER_STATE_UNKNOWN == OFFCPU_STATE_UNKNOWN &&
		       SAMPLER_STATE__COUNT == OFFCPU_STATE__COUNT,
	       "wait states are the BPF program's");

const char *sampler__state_name(enum sampler_state st)
{
	return (unsigned)st < SAMPLER_STATE__COUNT ? state_names[st] : "unknown";
}

/* Byte offset of the first of @names that is a member of task_struct in
 * kernel BTF @btf; 0 when none is. */
static __u32 task_offset(const struct btf *btf, const char *const *names)
{
	__u32 off = 0;
	int j;

	for (j = 0; names[j]; j++)
		if (!kbtf__member_off(btf, "task_struct", names[j], &off))
			return off;
	return 0;
}

/* The switch program's clock, rq->clock reached from the task leaving the
 * CPU (prev->se.cfs_rq->rq->clock, CONFIG_FAIR_GROUP_SCHED), when kernel
 * BTF names all of it; else bpf_ktime_get_ns(). */
static void clock_offsets(struct cpu_sampler *skel, const struct btf *btf)
{
	__u32 se = 0, cfs_rq = 0, rq = 0, clock = 0;

	if (kbtf__member_off(btf, "task_struct", "se", &se) ||
	    kbtf__member_off(btf, "sched_entity", "cfs_rq", &cfs_rq) ||
	    kbtf__member_off(btf, "cfs_rq", "rq", &rq) ||
	    kbtf__member_off(btf, "rq", "clock", &clock) || !cfs_rq || !rq || !clock)
		return;
	skel->rodata->offcpu_clk_cfs_rq_off = se + cfs_rq;
	skel->rodata->offcpu_clk_rq_off = rq;
	skel->rodata->offcpu_clk_off = clock;
	pr_debug("off-CPU waits timed with the runqueue clock (rq->clock at +%u)", clock);
}

/* Read task_struct offsets from kernel BTF; false without BTF. */
static bool task_offsets(struct cpu_sampler *skel, const struct btf *btf)
{
	static const char *const state[] = {"__state", "state", NULL};
	static const char *const pid[] = {"pid", NULL}, *const tgid[] = {"tgid", NULL};
	static const char *const comm[] = {"comm", NULL}, *const rseq[] = {"rseq", NULL};
	static const char *const stack[] = {"stack", NULL}, *const flags[] = {"flags", NULL};
	bool ok;

	if (!btf)
		return false;
	if (!skel->rodata->offcpu_state_arg)
		skel->rodata->offcpu_state_off = task_offset(btf, state);
	skel->rodata->offcpu_pid_off = task_offset(btf, pid);
	skel->rodata->offcpu_tgid_off = task_offset(btf, tgid);
	skel->rodata->offcpu_rseq_off = task_offset(btf, rseq);
	skel->rodata->offcpu_comm_off = task_offset(btf, comm);
	skel->rodata->offcpu_stack_off = task_offset(btf, stack);
	skel->rodata->offcpu_flags_off = task_offset(btf, flags);
	clock_offsets(skel, btf);
	ok = skel->rodata->offcpu_pid_off && skel->rodata->offcpu_tgid_off &&
	     skel->rodata->offcpu_comm_off;
	return ok;
}

#define TASK_WORK_KFUNC "bpf_task_work_schedule_resume_impl"

/* Can waits be completed by task works here (Linux >= 6.18: kernel BTF
 * @btf has struct bpf_task_work)? PROFCAP_OFFCPU_TASKWORK=0 says no, to
 * test the route of older kernels on a new one. */
static bool task_work_usable(const struct btf *btf)
{
	const char *env = env__get(env__process(), "PROFCAP_OFFCPU_TASKWORK");

	if ((env && !strcmp(env, "0")) || !btf)
		return false;
	return btf__find_by_name_kind(btf, "bpf_task_work", BTF_KIND_STRUCT) > 0;
}

size_t offcpu__link_task_work(struct bpf_insn *insns, size_t n, __u32 id)
{
	size_t i, calls = 0;

	for (i = 0; i < n; i++) {
		if (insns[i].code != (BPF_JMP | BPF_CALL) || insns[i].src_reg ||
		    insns[i].imm != OFFCPU_TASK_WORK_CALL)
			continue;
		insns[i].src_reg = BPF_PSEUDO_KFUNC_CALL;
		insns[i].off = 0; /* the kfunc is the kernel's own (vmlinux BTF) */
		insns[i].imm = (__s32)id;
		calls++;
	}
	return calls;
}

size_t offcpu__link_offsets(struct bpf_insn *insns, size_t n, const __u32 off[OFFCPU_OFF__COUNT])
{
	size_t i, done = 0;

	for (i = 0; i < n; i++) {
		__u32 k = (__u32)insns[i].imm - OFFCPU_OFF_IMM;

		if (insns[i].code != (BPF_ALU64 | BPF_MOV | BPF_K) || insns[i].src_reg ||
		    insns[i].imm < OFFCPU_OFF_IMM || k >= OFFCPU_OFF__COUNT)
			continue;
		insns[i].imm = (__s32)off[k];
		done++;
	}
	return done;
}

/* Write the kernel's offsets (from the rodata @r, set from kernel BTF) into
 * switch program @prog, and with @kfunc_id (0: none) link its task-work
 * calls to that kfunc. Before load: libbpf's relocations index
 * instructions, and none moves. 0 or -errno. */
static int link_switch(struct bpf_program *prog, const struct cpu_sampler__rodata *r,
		       __u32 kfunc_id)
{
	const __u32 off[OFFCPU_OFF__COUNT] = {
		[OFFCPU_OFF_STACK] = r->offcpu_stack_off,
		[OFFCPU_OFF_FLAGS] = r->offcpu_flags_off,
		[OFFCPU_OFF_CFS_RQ] = r->offcpu_clk_cfs_rq_off,
		[OFFCPU_OFF_RQ] = r->offcpu_clk_rq_off,
		[OFFCPU_OFF_CLOCK] = r->offcpu_clk_off,
	};
	size_t n = bpf_program__insn_cnt(prog);
	struct bpf_insn *insns = malloc(n * sizeof(*insns));
	int err;

	if (!insns)
		return -ENOMEM;
	memcpy(insns, bpf_program__insns(prog), n * sizeof(*insns));
	offcpu__link_offsets(insns, n, off);
	if (kfunc_id && !offcpu__link_task_work(insns, n, kfunc_id))
		err = -ENOENT;
	else
		err = bpf_program__set_insns(prog, insns, n);
	free(insns);
	return err;
}

bool offcpu__enabled(const struct cpu_sampler *skel)
{
	return bpf_program__autoload(skel->progs.profcap_sys_exit) ||
	       bpf_program__autoload(skel->progs.profcap_switch_tw);
}

/* Complete waits with task works: profcap_switch_tw alone, linked to the
 * kernel's kfunc, instead of profcap_switch with rseq_update and sys_exit. */
static void task_work_configure(struct cpu_sampler *skel)
{
	__u32 id = 0;
	int err;

	err = kbtf__func_id(KBTF_VMLINUX, TASK_WORK_KFUNC, &id);
	if (!err)
		err = link_switch(skel->progs.profcap_switch_tw, skel->rodata, id);
	if (err) {
		pr_debug("off-CPU task works unusable (%s): waits end at rseq_update",
			 strerror(-err));
		return;
	}
	bpf_program__set_autoload(skel->progs.profcap_switch, false);
	bpf_program__set_autoload(skel->progs.profcap_sys_exit, false);
	bpf_program__set_autoload(skel->progs.profcap_switch_tw, true);
	skel->rodata->offcpu_work_mask = SAMPLER_OFFCPU_THREADS - 1;
	bpf_map__set_max_entries(skel->maps.offcpu_work, SAMPLER_OFFCPU_THREADS);
	pr_debug("off-CPU waits completed by task works on return to user space");
}

int offcpu__configure(struct cpu_sampler *skel, const struct sampler_opts *o, __u32 entries,
		      const struct btf *btf)
{
	bool offsets;
	int err;

	bpf_program__set_autoload(skel->progs.profcap_switch_tw, false);
	if (!o->off_cpu) {
		bpf_program__set_autoload(skel->progs.profcap_switch_out, false);
		bpf_program__set_autoload(skel->progs.profcap_switch, false);
		bpf_program__set_autoload(skel->progs.profcap_sys_exit, false);
		bpf_map__set_autocreate(skel->maps.offcpu_task, false);
		return 0;
	}
	skel->rodata->offcpu_min_ns = o->off_cpu_min_ns;
	skel->rodata->offcpu_runnable = o->off_cpu_runnable;
	skel->rodata->offcpu_self = (__u32)getpid();
	/* prev_state is the tracepoint's 4th argument since Linux 5.18. */
	skel->rodata->offcpu_state_arg = kver__at_least(5, 18);
	offsets = task_offsets(skel, btf);
	skel->rodata->offcpu_btf = offsets;
	if (offsets) {
		/* sys_exit walks user stacks from the task's registers. */
		skel->rodata->unwind_task_regs = 1;
		bpf_program__set_autoload(skel->progs.profcap_switch_out, false);
		/* Thread entries live in slots and task storage. */
		bpf_map__set_autocreate(skel->maps.offcpu_start, false);
		/* A slot is freed at its task's last switch (TASK_DEAD in
		 * prev_state), before its task_struct can be reused. */
		if ((skel->rodata->offcpu_state_arg || skel->rodata->offcpu_state_off) &&
		    skel->rodata->offcpu_stack_off) {
			skel->rodata->offcpu_slot_mask = SAMPLER_OFFCPU_THREADS - 1;
			bpf_map__set_max_entries(skel->maps.offcpu_slots, SAMPLER_OFFCPU_THREADS);
		}
		if (task_work_usable(btf))
			task_work_configure(skel);
		if (bpf_program__autoload(skel->progs.profcap_switch) &&
		    (err = link_switch(skel->progs.profcap_switch, skel->rodata, 0))) {
			pr_err("cannot prepare the off-CPU switch program (%s)", strerror(-err));
			return err;
		}
	} else {
		bpf_program__set_autoload(skel->progs.profcap_switch, false);
		bpf_map__set_autocreate(skel->maps.offcpu_task, false);
		pr_warn("no kernel BTF: off-CPU waits end when their system call returns, "
			"without kernel stacks%s",
			skel->rodata->offcpu_state_arg ? "" : " nor wait states");
	}
	/* A counter per (thread, stacks, state): a host starting threads all
	 * the time (thread pools, short-lived workers) needs one per thread,
	 * far more than the CPU samples of a window. Allocated as used where
	 * the kernel allows it in tracing programs (Linux >= 6.1, BPF memory
	 * allocator), else preallocated at a quarter of that. */
	if (kver__at_least(6, 1)) {
		entries = entries > SAMPLER_OFFCPU_KEYS ? entries : SAMPLER_OFFCPU_KEYS;
		bpf_map__set_map_flags(skel->maps.offcpu_counts0, BPF_F_NO_PREALLOC);
		bpf_map__set_map_flags(skel->maps.offcpu_counts1, BPF_F_NO_PREALLOC);
	} else if (entries < SAMPLER_OFFCPU_KEYS / 4) {
		entries = SAMPLER_OFFCPU_KEYS / 4;
	}
	bpf_map__set_max_entries(skel->maps.offcpu_counts0, entries);
	bpf_map__set_max_entries(skel->maps.offcpu_counts1, entries);
	bpf_map__set_max_entries(skel->maps.offcpu_start, SAMPLER_OFFCPU_THREADS);
	return 0;
}

static struct bpf_link *attach_raw(struct bpf_program *prog, const char *tp)
{
	/* Attached by name through bpf(): no tracefs needed. */
	struct bpf_link *l = bpf_program__attach_raw_tracepoint(prog, tp);
	int err;

	if (!l) {
		err = -errno;
		pr_err("cannot attach to the %s raw tracepoint (%s): off-CPU profiling needs "
		       "Linux >= 5.8 with CONFIG_BPF_EVENTS; run without --off-cpu",
		       tp, strerror(-err));
		errno = -err;
	}
	return l;
}

/* Where waits end: rseq_update (links[OFFCPU_RESUME]) with sys_exit
 * (links[OFFCPU_SYSEXIT]) added when a thread without rseq waits, else
 * sys_exit alone (no BTF, or no rseq tracepoint). */
static int attach_resume(struct cpu_sampler *skel, struct bpf_link *links[OFFCPU_LINKS])
{
	if (skel->rodata->offcpu_btf && skel->rodata->offcpu_rseq_off) {
		links[OFFCPU_RESUME] = bpf_program__attach_raw_tracepoint(
			skel->progs.profcap_sys_exit, "rseq_update");
		if (links[OFFCPU_RESUME])
			return 0;
		pr_debug("no rseq_update tracepoint (%s): off-CPU waits end at sys_exit",
			 strerror(errno));
	}
	skel->bss->offcpu_sysexit = 1;
	links[OFFCPU_SYSEXIT] = attach_raw(skel->progs.profcap_sys_exit, "sys_exit");
	return links[OFFCPU_SYSEXIT] ? 0 : -errno;
}

/* Attach the BTF sched_switch program @prog into links[OFFCPU_SWITCH]. */
static int attach_switch(struct bpf_program *prog, struct bpf_link *links[OFFCPU_LINKS])
{
	int err;

	links[OFFCPU_SWITCH] = bpf_program__attach_trace(prog);
	if (!links[OFFCPU_SWITCH]) {
		err = -errno;
		pr_err("cannot attach to the sched_switch BTF tracepoint (%s): needs Linux >= 5.5; "
		       "run without --off-cpu",
		       strerror(-err));
		return err;
	}
	return 0;
}

int offcpu__attach(struct cpu_sampler *skel, struct bpf_link *links[OFFCPU_LINKS])
{
	int i, err;

	for (i = 0; i < OFFCPU_LINKS; i++)
		links[i] = NULL;
	if (bpf_program__autoload(skel->progs.profcap_switch_tw))
		return attach_switch(skel->progs.profcap_switch_tw, links);
	if (!bpf_program__autoload(skel->progs.profcap_sys_exit))
		return 0;
	/* Consumers first: a wait noted before they run would be lost. */
	err = attach_resume(skel, links);
	if (err)
		return err;
	if (bpf_program__autoload(skel->progs.profcap_switch))
		return attach_switch(skel->progs.profcap_switch, links);
	links[OFFCPU_SWITCH_OUT] = attach_raw(skel->progs.profcap_switch_out, "sched_switch");
	return links[OFFCPU_SWITCH_OUT] ? 0 : -errno;
}

int offcpu__poll(struct cpu_sampler *skel, struct bpf_link *links[OFFCPU_LINKS])
{
	int err;

	if (!links[OFFCPU_RESUME] || skel->bss->offcpu_sysexit ||
	    !__atomic_load_n(&skel->bss->offcpu_norseq, __ATOMIC_RELAXED))
		return 0;
	/* Set first: the switch-in side stops counting, and a failed attach
	 * is not retried at every drain. */
	__atomic_store_n(&skel->bss->offcpu_sysexit, 1, __ATOMIC_RELAXED);
	links[OFFCPU_SYSEXIT] =
		bpf_program__attach_raw_tracepoint(skel->progs.profcap_sys_exit, "sys_exit");
	if (!links[OFFCPU_SYSEXIT]) {
		err = -errno;
		pr_warn("cannot attach to the sys_exit raw tracepoint (%s): off-CPU waits of "
			"threads without rseq (not glibc >= 2.35, or rseq disabled) are not "
			"counted",
			strerror(-err));
		return err;
	}
	pr_debug("a thread without rseq waited: off-CPU waits also end at sys_exit");
	return 0;
}

/* Add the short waits the slots counted to @st: read in batches of
 * SLOT_BATCH (a 16 KiB buffer), not the whole array at once. */
#define SLOT_BATCH 256u
static void slot_stats(const struct cpu_sampler *skel, struct sampler_stats *st)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 n = bpf_map__max_entries(skel->maps.offcpu_slots), batch = 0, count;
	int fd = bpf_map__fd(skel->maps.offcpu_slots);
	struct offcpu_slot *v = NULL;
	__u32 *keys = NULL;
	bool first = true;
	int err;

	if (!skel->rodata->offcpu_slot_mask || fd < 0)
		return;
	v = calloc(SLOT_BATCH, sizeof(*v));
	keys = calloc(SLOT_BATCH, sizeof(*keys));
	if (!v || !keys)
		goto out;
	for (__u32 done = 0; done < n; done += count) {
		count = SLOT_BATCH;
		err = bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch, keys, v, &count,
					   &opts);
		first = false;
		for (__u32 i = 0; i < count; i++) {
			st->off_cpu_waits += v[i].short_waits;
			st->off_cpu_short += v[i].short_waits;
			st->off_cpu_short_ns += v[i].short_ns;
		}
		if (err || !count)
			break;
	}
out:
	free(keys);
	free(v);
}

void offcpu__stats(const struct cpu_sampler *skel, struct sampler_stats *st)
{
	int ncpu = libbpf_num_possible_cpus();
	struct offcpu_stats *v;
	__u32 zero = 0;

	if (!offcpu__enabled(skel) || ncpu <= 0)
		return;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return;
	if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.offcpu_stats), &zero, v)) {
		for (int c = 0; c < ncpu; c++) {
			st->off_cpu_waits += v[c].waits;
			st->off_cpu_short += v[c].short_waits;
			st->off_cpu_short_ns += v[c].short_ns;
			st->off_cpu_long_ns += v[c].long_ns;
			st->off_cpu_counts_full += v[c].counts_full;
			st->off_cpu_work_busy += v[c].work_busy;
			st->off_cpu_work_late += v[c].work_late;
		}
	}
	free(v);
	slot_stats(skel, st);
}
