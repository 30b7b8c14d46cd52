/* threadctx.bpf.h - OpenTelemetry thread context (OTEP 4947), maps in
 * threadctx.bpf.c.
 *
 * For a process user space found `otel_thread_ctx_v1` in (threadctx_procs:
 * tgid -> where the variable is: at an offset from the thread pointer, or
 * in a module's block of the dynamic thread vector), read the thread
 * pointer (task_struct.thread.fsbase, at tctx_fsbase_off, from kernel BTF
 * found by user space: 0 = unknown, read nothing), the record pointer there,
 * then the record's 28-byte head. Only a record whose valid byte is 1 and
 * whose ids are not all zero gives ids; everything else (no pointer,
 * unmapped memory, a page not resident, valid 0 while the writer changes
 * it, garbage, zero ids) gives none. One map lookup for every other process,
 * none while no process has an entry.
 */
#ifndef PROFCAP_BPF_THREADCTX_BPF_H
#define PROFCAP_BPF_THREADCTX_BPF_H

#include "stacks.bpf.h"

extern const volatile __u32 want_threadctx;
extern __u64 tctx_fsbase_off;
extern __u32 tctx_nprocs; /* entries user space added: 0 = skip the lookup */

struct threadctx_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct threadctx_proc);
	__uint(max_entries, 1); /* PROFCAP_THREADCTX_PROCS when on */
};

extern struct threadctx_procs_map threadctx_procs SEC(".maps");

struct threadctx_head {
	__u64 trace_id[2];
	__u64 span_id;
	__u8 valid;
	__u8 trace_flags;
	__u16 attrs_size;
};

/* Where the thread whose thread pointer is @fsbase keeps the variable of
 * process entry @p: 0 and *@addr, 1 when the thread has no block for the
 * module (not allocated, or its dtv predates the module), -1 on a read
 * error. */
static __always_inline int threadctx_addr(const struct threadctx_proc *p, __u64 fsbase,
					  __u64 *addr)
{
	__u64 dtv = 0, count = 0, block = 0;
	__u32 musl = p->flags & PROFCAP_TCTX_DTV_MUSL;

	if (!p->modid) {
		*addr = fsbase + p->off;
		return 0;
	}
	if (bpf_probe_read_user(&dtv, sizeof(dtv), (void *)(fsbase + 8)) || !dtv ||
	    bpf_probe_read_user(&count, sizeof(count), (void *)(musl ? dtv : dtv - 16)))
		return -1;
	if (p->modid > count)
		return 1;
	if (bpf_probe_read_user(&block, sizeof(block),
				(void *)(dtv + (__u64)p->modid * (musl ? 8 : 16))))
		return -1;
	if (!block || block == ~0ull)
		return 1;
	*addr = block + p->off;
	return 0;
}

/* The current thread's context record of process @tgid: its address (0:
 * none), its ids into @trace_id (2 words) and @span_id, its attrs-data-size
 * into *@attrs_size. @count: add to the STAT_TCTX_* counters (CPU samples
 * only; the off-CPU path passes 0). */
static __always_inline __u64 threadctx_ids(__u32 tgid, __u64 *trace_id, __u64 *span_id,
					   __u32 *attrs_size, const __u32 count)
{
	struct threadctx_head h;
	__u64 fsbase = 0, rec = 0, off, addr = 0;
	const struct threadctx_proc *p;
	int err;

	if (!want_threadctx || !tctx_nprocs)
		return 0;
	p = bpf_map_lookup_elem(&threadctx_procs, &tgid);
	if (!p)
		return 0;
	off = tctx_fsbase_off;
	err = !off || bpf_probe_read_kernel(&fsbase, sizeof(fsbase),
					    (void *)(bpf_get_current_task() + off)) || !fsbase;
	err = err ? -1 : threadctx_addr(p, fsbase, &addr);
	if (!err && bpf_probe_read_user(&rec, sizeof(rec), (void *)addr))
		err = -1;
	if (!err && rec && (bpf_probe_read_user(&h, 28, (void *)rec) || h.valid != 1))
		err = -1;
	if (err < 0) {
		if (count)
			stat_inc(STAT_TCTX_BAD);
		return 0;
	}
	if (err || !rec || !(h.trace_id[0] | h.trace_id[1]) || !h.span_id) {
		if (count)
			stat_inc(STAT_TCTX_NONE); /* no record, no block, or zero ids */
		return 0;
	}
	trace_id[0] = h.trace_id[0];
	trace_id[1] = h.trace_id[1];
	*span_id = h.span_id;
	*attrs_size = h.attrs_size;
	if (count)
		stat_inc(STAT_TCTX_LINKED);
	return rec;
}

#endif
