// SPDX-License-Identifier: GPL-2.0
/* memory.bpf.c - memory profiles: uprobes on the allocator entry points of
 * the profiled processes (user space attaches them with --memory only,
 * each with the entry point's enum mem_kind as its cookie).
 *
 *  - profcap_mem_alloc, at the entry of an allocation: samples it by bytes
 *    (memory_types.h: probability 1 - exp(-S/R)), walks the user stack with
 *    the table unwinder of CPU samples, adds the weights to the counter of
 *    (process, thread, stack) and keeps the call in mem_pending for its
 *    return. Unsampled calls cost the probability and one random number.
 *  - profcap_mem_ret, at its return: the pointer of a sampled call goes
 *    into the live table, within the global and per-process caps.
 *  - profcap_mem_free, at a free (and realloc's old pointer): a live
 *    sampled allocation leaves the table.
 *  - profcap_mem_usdt_alloc and _free, where a process fires the
 *    OpenTelemetry contract's probes otel_memory:alloc(ptr, size,
 *    weighted_bytes) and otel_memory:free(ptr) (its own sampler chose
 *    and weighed the allocation): the same, without the allocator probes.
 * What is live at a window's end is the in-use heap of sampled
 * allocations made since the capture began.
 */
#include "memory.bpf.h"
#include "notice.bpf.h"
#include "target.bpf.h"
#include "timestamps.bpf.h"
#include "unwind.bpf.h"
/* libbpf's USDT argument reader; after the UAPI types it needs */
#include <stdbool.h>
#include <bpf/usdt.bpf.h>

#define MEM_MAP_ANONYMOUS 0x20
#define MEM_MAP_FAILED (~0ull)

struct mem_counts_map mem_counts SEC(".maps");
struct mem_stacks_map mem_stacks SEC(".maps");
struct mem_ext_map mem_ustack_ext SEC(".maps");
struct mem_live_map mem_live SEC(".maps");
struct mem_live_procs_map mem_live_procs SEC(".maps");
struct mem_pending_map mem_pending SEC(".maps");
struct mem_usdt_procs_map mem_usdt_procs SEC(".maps");
struct mem_config_map mem_config SEC(".maps");
struct mem_stats_map mem_stats SEC(".maps");
struct mem_walking_map mem_walking SEC(".maps");

static __always_inline void mem_stat(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&mem_stats, &which);

	if (v)
		(*v)++;
}

#define mem_arg(ctx, reg) unwind_ctx_reg(ctx, offsetof(struct pt_regs, reg))

/* A live sampled allocation of @tgid at @ptr is freed. */
static __always_inline void mem_forget(__u32 tgid, __u64 ptr)
{
	struct mem_live_key lk = {.tgid = tgid, .ptr = ptr};
	__u64 *n;

	if (!ptr || bpf_map_delete_elem(&mem_live, &lk))
		return;
	mem_stat(MEM_STAT_FREED);
	n = bpf_map_lookup_elem(&mem_live_procs, &tgid);
	if (n && *n)
		__sync_fetch_and_add(n, -1);
}

/* The targeting filters of CPU samples (uprobes attached to one process
 * pass them; system-wide ones are narrowed here). */
static __always_inline int mem_kept(__u32 tgid, __u32 tid, struct comm_key *comm)
{
	if (filter_pids && !bpf_map_lookup_elem(&pids, &tgid) && !is_followed())
		return 0;
	if (filter_tids && !bpf_map_lookup_elem(&tids, &tid))
		return 0;
	bpf_get_current_comm(comm->w, sizeof(comm->w));
	if (filter_comms && !bpf_map_lookup_elem(&comms, comm))
		return 0;
	if (filter_cgroups && !under_cgroups())
		return 0;
	return 1;
}

/* Add @w to the counter of @key. */
static __always_inline void mem_count(const struct mem_key *key, const struct mem_val *w)
{
	struct mem_val *v = bpf_map_lookup_elem(&mem_counts, key);

	if (!v && bpf_map_update_elem(&mem_counts, key, w, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(&mem_counts, key); /* another CPU's */
		if (!v)
			mem_stat(MEM_STAT_COUNTS_FULL);
	} else if (!v) {
		return;
	}
	if (v) {
		__sync_fetch_and_add(&v->bytes, w->bytes);
		__sync_fetch_and_add(&v->objs, w->objs);
	}
}

/* Sampled allocation @val of @tgid at @ptr into the live table, within
 * the caps of @cfg. */
static __always_inline void mem_live_add(__u32 tgid, __u64 ptr, const struct mem_live_val *val,
					 const struct mem_config *cfg)
{
	struct mem_live_key lk = {.tgid = tgid, .ptr = ptr};
	__u64 *n, one = 1;

	if (bpf_map_lookup_elem(&mem_live, &lk)) { /* a free we did not see */
		bpf_map_update_elem(&mem_live, &lk, val, BPF_EXIST);
		return;
	}
	n = bpf_map_lookup_elem(&mem_live_procs, &tgid);
	if (n && *n >= cfg->live_per_proc) {
		/* a process's share, or the whole table when it is alone */
		mem_stat(cfg->live_per_proc < cfg->live_max ? MEM_STAT_LIVE_PROC
							    : MEM_STAT_LIVE_FULL);
		return;
	}
	if (bpf_map_update_elem(&mem_live, &lk, val, BPF_NOEXIST)) {
		mem_stat(MEM_STAT_LIVE_FULL);
		return;
	}
	if (n)
		__sync_fetch_and_add(n, 1);
	else if (bpf_map_update_elem(&mem_live_procs, &tgid, &one, BPF_NOEXIST) &&
		 (n = bpf_map_lookup_elem(&mem_live_procs, &tgid)))
		__sync_fetch_and_add(n, 1);
}

/* The stacks of a sampled call into @key, in slot SCRATCH_MEMORY of the
 * walk states: CPU samples (interrupts) and off-CPU programs walk in
 * slots of their own. The slot is taken with one atomic add and a read
 * back (any kernel): a call that finds it taken (a preempted walk on this
 * CPU) is counted without a stack. */
static __always_inline void mem_stacks_of(struct pt_regs *ctx, struct mem_key *key)
{
	__u32 zero = 0, *busy = bpf_map_lookup_elem(&mem_walking, &zero);

	if (!busy)
		return;
	__sync_fetch_and_add(busy, 1);
	if (*busy == 1)
		fill_stacks_in(SCRATCH_MEMORY, ctx, ctx, &mem_stacks, &mem_ustack_ext, key->tgid,
			       &key->ustack, NULL, &key->flags, 2);
	else
		mem_stat(MEM_STAT_WALK_BUSY);
	__sync_fetch_and_add(busy, -1);
}

/* Back-pressure: false when the sampled call is dropped; else *@q (the
 * probability it was sampled with) includes the share kept. */
static __always_inline int mem_keep(const struct mem_config *cfg, __u64 *q)
{
	if (cfg->keep >= MEM_FP_ONE)
		return 1;
	if (!cfg->keep || (bpf_get_prandom_u32() >> (32 - MEM_FP_BITS)) >= cfg->keep) {
		mem_stat(MEM_STAT_THROTTLED);
		return 0;
	}
	*q = *q * cfg->keep / MEM_FP_ONE ?: 1;
	return 1;
}

SEC("?uprobe")
int profcap_mem_alloc(struct pt_regs *ctx)
{
	__u32 kind = (__u32)bpf_get_attach_cookie(ctx), zero = 0, tgid, tid;
	struct mem_pending p = {.kind = kind};
	struct mem_config *cfg;
	struct comm_key comm = {};
	__u64 size, q;

	switch (kind) {
	case MEM_MALLOC:
		size = mem_arg(ctx, rdi);
		break;
	case MEM_CALLOC:
		size = mem_arg(ctx, rdi) * mem_arg(ctx, rsi);
		break;
	case MEM_REALLOC:
	case MEM_MEMALIGN:
		size = mem_arg(ctx, rsi);
		break;
	case MEM_POSIX_MEMALIGN:
		size = mem_arg(ctx, rdx);
		p.outp = mem_arg(ctx, rdi);
		break;
	case MEM_MMAP:
		size = mem_arg(ctx, rsi);
		break;
	default:
		return 0;
	}
	if (current_ids(&tgid, &tid))
		return 0;
	/* The process's own sampler fires the contract's probes: not these. */
	if (bpf_map_lookup_elem(&mem_usdt_procs, &tgid))
		return 0;
	if (kind == MEM_REALLOC)
		mem_forget(tgid, mem_arg(ctx, rdi));
	cfg = bpf_map_lookup_elem(&mem_config, &zero);
	if (!cfg || !size)
		return 0;
	if (kind == MEM_MMAP && (!cfg->anon_mmap || !(mem_arg(ctx, rcx) & MEM_MAP_ANONYMOUS)))
		return 0;
	mem_stat(MEM_STAT_CALLS);
	/* At its first call, so the process has unwind tables by the time its
	 * first allocation is sampled (one lookup once announced). */
	notice_process(tgid);
	/* A call inside a sampled one (realloc(NULL, n) entering malloc) is
	 * the same allocation. */
	if (bpf_map_lookup_elem(&mem_pending, &tid))
		return 0;
	q = mem__prob(size, cfg->rate);
	if ((bpf_get_prandom_u32() >> (32 - MEM_FP_BITS)) >= q)
		return 0;
	if (!mem_kept(tgid, tid, &comm))
		return 0;
	if (!mem_keep(cfg, &q))
		return 0;
	mem_stat(MEM_STAT_SAMPLED);
	p.key.tgid = tgid;
	p.key.tid = tid;
	p.key.comm[0] = comm.w[0];
	p.key.comm[1] = comm.w[1];
	p.w.bytes = mem__weight_bytes(size, q);
	p.w.objs = mem__weight_objs(q);
	mem_stacks_of(ctx, &p.key);
	if (!times_note_mem(&p.key, &p.w)) /* with its time, else counted */
		mem_count(&p.key, &p.w);
	bpf_map_update_elem(&mem_pending, &tid, &p, BPF_ANY);
	return 0;
}

/* The returned pointer of a sampled call into the live table. */
SEC("?uretprobe")
int profcap_mem_ret(struct pt_regs *ctx)
{
	struct mem_live_val val;
	struct mem_pending *p;
	struct mem_config *cfg;
	__u32 tgid, tid, zero = 0;
	__u64 ptr = mem_arg(ctx, rax);

	if (current_ids(&tgid, &tid))
		return 0;
	p = bpf_map_lookup_elem(&mem_pending, &tid);
	if (!p)
		return 0;
	if (p->kind == MEM_POSIX_MEMALIGN) {
		if (ptr || bpf_probe_read_user(&ptr, sizeof(ptr), (void *)p->outp))
			ptr = 0;
	} else if (p->kind == MEM_MMAP && ptr == MEM_MAP_FAILED) {
		ptr = 0;
	}
	val.key = p->key;
	val.w = p->w;
	bpf_map_delete_elem(&mem_pending, &tid);
	cfg = bpf_map_lookup_elem(&mem_config, &zero);
	if (ptr && cfg)
		mem_live_add(tgid, ptr, &val, cfg);
	return 0;
}

SEC("?uprobe")
int profcap_mem_free(struct pt_regs *ctx)
{
	__u32 tgid, tid;

	if (current_ids(&tgid, &tid))
		return 0;
	mem_stat(MEM_STAT_FREES);
	mem_forget(tgid, mem_arg(ctx, rdi));
	return 0;
}

/* otel_memory:alloc(ptr, size, weighted_bytes): an allocation the process's
 * own sampler chose, with its weight. */
SEC("?usdt")
int profcap_mem_usdt_alloc(struct pt_regs *ctx)
{
	long ptr = 0, size = 0, weighted = 0;
	struct mem_live_val val = {};
	struct comm_key comm = {};
	struct mem_config *cfg;
	__u32 tgid, tid, zero = 0;
	__u64 q = MEM_FP_ONE;

	if (bpf_usdt_arg(ctx, 0, &ptr) || bpf_usdt_arg(ctx, 1, &size) ||
	    bpf_usdt_arg(ctx, 2, &weighted) || !ptr || size <= 0 || weighted < size)
		return 0;
	if (current_ids(&tgid, &tid))
		return 0;
	cfg = bpf_map_lookup_elem(&mem_config, &zero);
	if (!cfg || !mem_kept(tgid, tid, &comm))
		return 0;
	mem_stat(MEM_STAT_CALLS);
	notice_process(tgid);
	if (!mem_keep(cfg, &q))
		return 0;
	mem_stat(MEM_STAT_SAMPLED);
	val.key.tgid = tgid;
	val.key.tid = tid;
	val.key.comm[0] = comm.w[0];
	val.key.comm[1] = comm.w[1];
	/* weighted / size objects, and the share kept */
	val.w.bytes = mem__weight_bytes((__u64)weighted, q);
	val.w.objs = ((__u64)weighted << MEM_OBJ_BITS) / (__u64)size;
	val.w.objs = mem__weight_bytes(val.w.objs, q);
	mem_stacks_of(ctx, &val.key);
	if (!times_note_mem(&val.key, &val.w))
		mem_count(&val.key, &val.w);
	mem_live_add(tgid, (__u64)ptr, &val, cfg);
	return 0;
}

/* otel_memory:free(ptr) */
SEC("?usdt")
int profcap_mem_usdt_free(struct pt_regs *ctx)
{
	__u32 tgid, tid;
	long ptr = 0;

	if (bpf_usdt_arg(ctx, 0, &ptr) || current_ids(&tgid, &tid))
		return 0;
	mem_stat(MEM_STAT_FREES);
	mem_forget(tgid, (__u64)ptr);
	return 0;
}

/* A process followed from a target (a child of -- CMD) runs a new
 * program: announce it now, not at its first CPU sample, so user space
 * probes the new program's allocator (children are not probed with their
 * parent's uprobes; the targets themselves are probed from the start).
 * Attached only with -p or -- CMD. */
SEC("?raw_tp/sched_process_exec")
int profcap_mem_exec(void *ctx)
{
	__u32 tgid, tid;

	(void)ctx;
	if (current_ids(&tgid, &tid) || !tgid || !filter_pids)
		return 0;
	if (bpf_map_lookup_elem(&pids, &tgid) || !is_followed())
		return 0;
	bpf_map_delete_elem(&seen, &tgid); /* announced again, whichever exec hook runs first */
	notice_process(tgid);
	return 0;
}
