// SPDX-License-Identifier: GPL-2.0
/* sample.bpf.c - CPU sampling: on each cpu-clock tick, read the user and
 * kernel stacks of the running thread and count them in a hash map of the
 * current generation (`gen`, stacks.bpf.h). Samples whose walk stopped at a
 * PC this sample could not map go to user space whole, to be walked late.
 *
 * This unit holds the object's license: the sampler's units are linked into
 * one object (bpftool gen object), the skeleton cpu_sampler.
 */
#include "jvm.bpf.h"
#include "notice.bpf.h"
#include "php.bpf.h"
#include "python.bpf.h"
#include "ruby.bpf.h"
#include "target.bpf.h"
#include "threadctx.bpf.h"
#include "timestamps.bpf.h"
#include "unwind.bpf.h"
#include "v8.bpf.h"
#include "perl.bpf.h"

__u64 first_sample_ns = 0; /* CLOCK_MONOTONIC of the first sample (start-up bench) */

struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct sample_key);
	__type(value, __u64);
	__uint(max_entries, 8192);
};

struct counts_map counts0 SEC(".maps");
struct counts_map counts1 SEC(".maps");

/* ---- late walking: see struct late_sample ---- */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* sized by user space when late walking is on */
} late SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct late_sample);
	__uint(max_entries, 1);
} late_scratch SEC(".maps");

/* The words of stack @h (0 = none) of this generation's @stacks into @dst
 * (@size bytes, within a stack_trace's): a late sample is named after the
 * generation's stacks are gone. Whichever walker stored it, Python's or a
 * managed runtime's. Returns the words copied, 0 = none. */
static __always_inline __u32 late_words(void *stacks, __u64 h, __u64 *dst, __u32 size)
{
	struct stack_trace *st;

	if (!stacks || !h)
		return 0;
	st = bpf_map_lookup_elem(stacks, &h);
	if (!st || st->nr > size / sizeof(*dst))
		return 0;
	bpf_probe_read_kernel(dst, size, st->ips);
	return (__u32)st->nr;
}

/* Fill @ls with the sample of @key (its kernel stack in the scratch when it
 * has one, its interpreter stacks from @stacks, NULL = none) and a copy of
 * the user stack above @sp, and send it. 0 when sent, -1 otherwise. */
static __always_inline int late_output(struct late_sample *ls, const struct sample_key *key,
				       void *stacks, __u64 sp, int lazy)
{
	__u32 zero = 0, first, len = 0, i;
	struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);

	if (!s)
		return -1;
	bpf_probe_read_kernel(&ls->key, sizeof(ls->key), key); /* as the stacks below */
	ls->key.ustack = 0;
	ls->key.kstack = 0;
	ls->sp = sp;
	ls->nkern = 0;
	if (key->kstack && s->kern.nr <= PROFCAP_MAX_STACK) {
		ls->nkern = (__u32)s->kern.nr;
		/* One helper call: the builtin would be hundreds of
		 * instructions the verifier walks on every path here. */
		bpf_probe_read_kernel(ls->kips, sizeof(ls->kips), s->kern.ips);
	}
	/* The stack above sp, a page at a time: the first read ends at a page
	 * boundary, so a copy stops at the top of the stack's mapping, not
	 * before it. */
	first = 4096 - (__u32)(sp & 4095);
	if (first > 4096)
		return -1;
	if (!bpf_probe_read_user(ls->stack, first, (void *)sp)) {
		len = first;
		for (i = 0; i < PROFCAP_LATE_STACK / 4096 - 1; i++) {
			__u32 off = len;

			if (len > PROFCAP_LATE_STACK - 4096)
				break;
			/* A bound the verifier sees (the array has a page of slack). */
			asm volatile("%0 &= 0x3fff" : "+r"(off));
			if (bpf_probe_read_user(ls->stack + off, 4096, (void *)(sp + off)))
				break;
			len += 4096;
		}
	}
	if (len > PROFCAP_LATE_STACK)
		return -1;
	ls->len = len;
	ls->timed = want_timestamps;
	ls->time = want_timestamps ? bpf_ktime_get_ns() : 0;
	ls->cpu = want_timestamps ? bpf_get_smp_processor_id() : 0;
	ls->npy = late_words(stacks, key->pystack, ls->pyips, sizeof(ls->pyips));
	ls->nrt = late_words(stacks, key->rtstack, ls->rtips, sizeof(ls->rtips));
	if (bpf_ringbuf_output(&late, ls, offsetof(struct late_sample, stack) + len,
			       wake_flags(&late, lazy))) {
		stat_inc(STAT_LATE_LOST);
		return -1;
	}
	stat_inc(STAT_LATE);
	return 0;
}

/* Send the sample of @key to user space to be walked late, when its walk
 * stopped at a PC whose mapping this sample could not get (see late_ok).
 * 0 when sent (the sample is not counted here), -1 otherwise. */
static __always_inline int late_send(const struct sample_key *key, void *stacks)
{
	struct unwind_state *st;
	struct late_sample *ls;
	__u32 zero = 0, tgid = key->tgid;
	__u8 *seen_as;

	if (!want_late || !(key->flags & PROFCAP_F_USTACK_PARTIAL))
		return -1;
	st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!st || st->done != 2 || st->why != USTAT_NO_MAPPING || !st->late_ok || !st->nr ||
	    st->nr > PROFCAP_LATE_PREFIX)
		return -1;
	ls = bpf_map_lookup_elem(&late_scratch, &zero);
	if (!ls)
		return -1;
	ls->pc = st->pc;
	ls->bp = st->bp;
	ls->bp_ok = st->bp_ok;
	ls->exact = st->exact;
	ls->nuser = (__u32)st->nr;
	bpf_probe_read_kernel(ls->uips, sizeof(ls->uips), st->ips); /* see late_output() */
	/* It may wait for a drain unless a file it stopped in has no table:
	 * user space builds that from the live process's files. */
	seen_as = bpf_map_lookup_elem(&seen, &tgid);
	return late_output(ls, key, stacks, st->sp,
			   seen_as && *seen_as == SEEN_LAZY && !st->no_table);
}

/* The start-up program (frame pointers only, see profcap_quick): a sample
 * taken in user mode goes to user space whole, its registers and stack,
 * to be walked with the tables once they exist. 0 when sent. */
static __always_inline int late_send_quick(struct bpf_perf_event_data *ctx,
					   const struct sample_key *key)
{
	struct late_sample *ls;
	__u32 zero = 0;

	if (!want_late || !key->tgid || !(key->flags & PROFCAP_F_USTACK_PARTIAL) ||
	    (unwind_ctx_reg(ctx, offsetof(struct pt_regs, cs)) & 3) != 3)
		return -1;
	ls = bpf_map_lookup_elem(&late_scratch, &zero);
	if (!ls)
		return -1;
	ls->pc = unwind_ctx_reg(ctx, offsetof(struct pt_regs, rip));
	ls->bp = unwind_ctx_reg(ctx, offsetof(struct pt_regs, rbp));
	ls->bp_ok = 1;
	ls->exact = 1;
	ls->nuser = 1;
	ls->uips[0] = ls->pc;
	return late_output(ls, key, NULL, unwind_ctx_reg(ctx, offsetof(struct pt_regs, rsp)), 0);
}

static __always_inline void read_threadctx(__u32 tgid, struct sample_key *key)
{
	__u32 asz = 0, n;
	__u64 rec = threadctx_ids(tgid, key->trace_id, &key->span_id, &asz, 1);

	if (!rec)
		return;
	n = asz;
	if (n > PROFCAP_TCTX_ATTRS)
		n = PROFCAP_TCTX_ATTRS;
	/* A failed read leaves no attributes (size 0), the ids still count. */
	if (n && !bpf_probe_read_user(key->attrs, n & 0x3f, (void *)(rec + 28)))
		key->attrs_size = asz;
	else if (n)
		__builtin_memset(key->attrs, 0, sizeof(key->attrs));
}

/* The interpreter's and the managed runtime's stacks of @key's thread,
 * once the native walk is done (V8's frames were noted during it), stored
 * in @stacks. @loop (a constant) as for unwind_user(). */
static __always_inline void rt_stacks(struct bpf_perf_event_data *ctx, struct sample_key *key,
				      void *stacks, const int loop)
{
	key->pystack = py_stack(stacks, key->tgid, key->tid, &key->flags, loop);
	key->rtstack = v8_stack(stacks, &key->flags, loop)
			       ?: jvm_stack(stacks, &key->flags, SCRATCH_SAMPLE);
	if (!key->rtstack)
		key->rtstack = php_stack(ctx, stacks, key->tgid, key->tid, &key->flags, loop);
	if (!key->rtstack)
		key->rtstack = ruby_stack(stacks, key->tgid, key->tid, &key->flags, loop);
	if (!key->rtstack)
		key->rtstack = perl_stack_in(SCRATCH_SAMPLE, stacks, key->tgid, key->tid, &key->flags,
					     loop);
}

/* rt_stacks() into generation @g1's table. Global functions: the verifier
 * checks the walkers once, not once per path out of the native walk. */
__attribute__((noinline)) int rt_stacks_loop(struct bpf_perf_event_data *ctx,
					     struct sample_key *key, __u32 g1)
{
	if (!key)
		return 0;
	rt_stacks(ctx, key, g1 ? (void *)&stacks1 : (void *)&stacks0, 1);
	return 0;
}

__attribute__((noinline)) int rt_stacks_bounded(struct bpf_perf_event_data *ctx,
						struct sample_key *key, __u32 g1)
{
	if (!key)
		return 0;
	rt_stacks(ctx, key, g1 ? (void *)&stacks1 : (void *)&stacks0, 0);
	return 0;
}

/* Count one sample. @full (a constant) 0: the start-up program's record,
 * without the table unwinder and thread context (see profcap_quick); else
 * fill_stacks()'s @tables. */
static __always_inline int record(void *ctx, void *counts, void *stacks, void *ext, __u32 tgid,
				  __u32 tid, const struct comm_key *comm, int full)
{
	struct sample_key key = {.tgid = tgid, .tid = tid};
	__u64 one = 1, *cnt;

	key.comm[0] = comm->w[0];
	key.comm[1] = comm->w[1];
	if (full) {
		read_threadctx(tgid, &key);
		v8_walk_begin(tgid); /* the walk below notes V8's frames */
		jvm_walk_begin(&key.tgid, SCRATCH_SAMPLE); /* ... and walks the JVM's */
	}
	fill_stacks(ctx, ctx, stacks, ext, tgid, &key.ustack, &key.kstack, &key.flags, full);
	if (full == 2)
		rt_stacks_loop(ctx, &key, stacks == (void *)&stacks1);
	else if (full)
		rt_stacks_bounded(ctx, &key, stacks == (void *)&stacks1);
	if (full ? !late_send(&key, stacks) : !late_send_quick(ctx, &key))
		return 0;

	cnt = bpf_map_lookup_elem(counts, &key);
	if (cnt) {
		__sync_fetch_and_add(cnt, 1);
	} else if (bpf_map_update_elem(counts, &key, &one, BPF_NOEXIST)) {
		/* Another CPU may have inserted it meanwhile. */
		cnt = bpf_map_lookup_elem(counts, &key);
		if (!cnt) {
			stat_inc(STAT_COUNTS_FULL);
			return 0;
		}
		__sync_fetch_and_add(cnt, 1);
	}
	times_note_sample(&key, counts == (void *)&counts1);
	return 0;
}

/* One cpu-clock tick: filter, announce, count. @full as for record(). */
static __always_inline int sample(struct bpf_perf_event_data *ctx, int full)
{
	struct comm_key comm = {};
	__u32 tgid, tid;

	__builtin_assume(ctx != NULL); /* no task-context stack reads (read_stack()) */
	if (current_ids(&tgid, &tid)) {
		stat_inc(STAT_FOREIGN);
		return 0;
	}
	if (skip_idle && !tgid)
		return 0;
	if (filter_pids && !bpf_map_lookup_elem(&pids, &tgid) && !is_followed())
		return 0;
	if (filter_tids && !bpf_map_lookup_elem(&tids, &tid))
		return 0;
	bpf_get_current_comm(comm.w, sizeof(comm.w));
	if (filter_comms && !bpf_map_lookup_elem(&comms, &comm))
		return 0;
	if (filter_cgroups && !under_cgroups())
		return 0;
	stat_inc(STAT_SAMPLES);
	if (!first_sample_ns)
		first_sample_ns = bpf_ktime_get_ns();

	notice_process(tgid);

	/* The start-up program counts into generation 0: user space drains
	 * (and swaps generations) only after the hand-over. */
	if (full && (gen & 1))
		return record(ctx, &counts1, &stacks1, &ustack_ext1, tgid, tid, &comm, full);
	return record(ctx, &counts0, &stacks0, &ustack_ext0, tgid, tid, &comm, full);
}

/* User space loads one of these two: the first on Linux >= 5.17. */
SEC("perf_event")
int profcap_sample(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, 2);
}

SEC("perf_event")
int profcap_sample_bounded(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, 1);
}

/* Quick start: verifying profcap_sample (the table unwinder) and reading
 * the kernel BTF its configuration needs take a while. So user space first loads
 * profcap_quick alone, in a second object whose maps are the sample maps of
 * the first (counts, stacks, seen, events, stats, filters), and samples with
 * it at once: frame-pointer user stacks, flagged partial when tables were
 * wanted, exactly what profcap_sample records for a process whose tables are
 * not loaded yet, into generation 0 (nothing is drained before the
 * hand-over). profcap_sample is then loaded in the background and put
 * into `handover`: from that update on, every tick of profcap_quick tail-
 * calls it before doing anything, so a tick is counted by one program or
 * the other, never both and never neither (same perf events, no gap). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} handover SEC(".maps");

SEC("perf_event")
int profcap_quick(struct bpf_perf_event_data *ctx)
{
	bpf_tail_call(ctx, &handover, 0);
	return sample(ctx, 0); /* not handed over yet */
}

char LICENSE[] SEC("license") = "GPL";
