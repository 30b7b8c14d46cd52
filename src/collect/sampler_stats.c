/* sampler_stats.c - the sampler's counters: the BPF programs' per-CPU
 * ones summed, the drain's, the late walks', the threads' CPU. Main
 * thread (sampler__stats() reads what other threads count under their
 * locks or atomically). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "collect/late.h"
#include "collect/sampler_int.h"
#include "collect/sideband.h"
#include "util/clock.h"

/* Entry @key of per-CPU counter map @fd, summed over CPUs; 0 on failure. */
static __u64 percpu_sum(int fd, __u32 key)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *vals = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*vals)) : NULL, sum = 0;

	if (vals && !bpf_map_lookup_elem(fd, &key, vals))
		for (int c = 0; c < ncpu; c++)
			sum += vals[c];
	free(vals);
	return sum;
}

bool sampler__unwind_stats(struct sampler *s, struct sampler_unwind_stats *st)
{
	int ncpu = libbpf_num_possible_cpus(), fd;
	__u64 out[USTAT__COUNT] = {0};
	__u64 *vals;
	__u32 k;

	memset(st, 0, sizeof(*st));
	if (!s->t.unwind || s->l.on)
		return false;
	if (s->b.on) {
		pthread_mutex_lock(&s->b.mu);
		st->tables = s->b.ut_stats;
		pthread_mutex_unlock(&s->b.mu);
	} else {
		unwind_table__stats(s->t.unwind, &st->tables);
	}
	vals = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*vals)) : NULL;
	if (vals) {
		fd = bpf_map__fd(s->skel->maps.unwind_stats);
		for (k = 0; k < USTAT__COUNT; k++) {
			if (bpf_map_lookup_elem(fd, &k, vals))
				continue;
			for (int c = 0; c < ncpu; c++)
				out[k] += vals[c];
		}
		free(vals);
	}
	st->frames = out[USTAT_FRAMES];
	st->fp_frames = out[USTAT_FP_FRAMES];
	st->complete = out[USTAT_COMPLETE];
	st->partial = out[USTAT_PARTIAL];
	st->no_mapping = out[USTAT_NO_MAPPING];
	st->no_row = out[USTAT_NO_ROW];
	st->read_err = out[USTAT_READ_ERR];
	st->depth = out[USTAT_DEPTH];
	st->ext_full = out[USTAT_EXT_FULL];
	st->kernel_regs = out[USTAT_KERNEL_REGS];
	st->no_proc = out[USTAT_NO_PROC];
	st->vma = out[USTAT_VMA];
	st->vma_exec = out[USTAT_VMA_EXEC];
	if (s->late) {
		struct late_stats ls;

		late__stats(s->late, &ls);
		st->late_sent = percpu_sum(bpf_map__fd(s->skel->maps.stats), STAT_LATE);
		st->late_lost = percpu_sum(bpf_map__fd(s->skel->maps.stats), STAT_LATE_LOST);
		st->late_complete = ls.complete;
		st->late_partial = ls.partial;
		st->late_dropped = ls.dropped;
		st->late_maps_read = ls.maps_read;
		st->late_maps_offered = ls.maps_offered;
		st->late_no_tables = ls.no_tables;
		memcpy(st->late_ends, ls.ends, sizeof(st->late_ends));
		st->complete += ls.complete;
		st->partial -= ls.complete < st->partial ? ls.complete : st->partial;
	}
	return true;
}

/* CPU of live thread @t so far, ns; 0 if unreadable. */
static __u64 thread_cpu(pthread_t t)
{
	clockid_t clk;

	return pthread_getcpuclockid(t, &clk) ? 0 : clock__ns(clk);
}

/* The CPU of the sampler's threads so far into @st. */
static void cpu_by_thread(struct sampler *s, struct sampler_stats *st)
{
	/* a thread that ended left its figure */
	st->cpu_notice_ns = s->nt.on ? thread_cpu(s->nt.thread)
					  : __atomic_load_n(&s->nt.cpu_ns, __ATOMIC_RELAXED);
	st->cpu_snap_ns = __atomic_load_n(&s->nt.snap_cpu_ns, __ATOMIC_RELAXED);
	st->cpu_snap_main_ns = __atomic_load_n(&s->nt.snap_main_cpu_ns, __ATOMIC_RELAXED);
	st->cpu_builder_ns = s->b.on ? thread_cpu(s->b.thread)
					  : __atomic_load_n(&s->b.cpu_ns, __ATOMIC_RELAXED);
	st->cpu_loader_ns = __atomic_load_n(&s->l.cpu_ns, __ATOMIC_RELAXED);
	st->snaps_sideband = __atomic_load_n(&s->nt.snaps_ev, __ATOMIC_RELAXED);
	st->snaps_proc = __atomic_load_n(&s->nt.snaps_proc, __ATOMIC_RELAXED);
	st->walked_alone = __atomic_load_n(&s->nt.walked_alone, __ATOMIC_RELAXED);
	st->sideband = s->sb != NULL;
	if (s->sb) {
		struct sideband_stats sst;

		sideband__stats(s->sb, &sst);
		st->sideband_records = sst.records;
		st->sideband_lost = sst.lost;
	}
}

void sampler__stats(struct sampler *s, struct sampler_stats *st)
{
	/* Before the hand-over, the start-up object: the loader has the other. */
	const struct cpu_sampler *skel = s->l.on ? s->l.quick : s->skel;
	__u64 *vals = NULL;
	int ncpu = libbpf_num_possible_cpus(), fd;
	__u32 k;

	memset(st, 0, sizeof(*st));
	cpu_by_thread(s, st);
	st->ncpus = s->nonline;
	st->drains = s->d.drains;
	st->stacks_missing = s->d.stacks_missing;
	pthread_mutex_lock(&s->nt.mu);
	st->notices_lost = s->nt.lost;
	pthread_mutex_unlock(&s->nt.mu);
	st->bpf_bytes = tables__bpf_memory(s, skel, NULL);
	st->first_sample_ns = skel->bss->first_sample_ns;
	st->bpf_peak_bytes = st->bpf_bytes > s->d.bpf_peak ? st->bpf_bytes : s->d.bpf_peak;
	if (s->late) {
		struct late_stats ls;

		late__stats(s->late, &ls);
		st->late_emitted = ls.complete + ls.partial;
	}
	if (ncpu <= 0)
		return;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return;
	fd = bpf_map__fd(skel->maps.stats);
	for (k = 0; k < STAT__COUNT; k++) {
		__u64 sum = 0;
		int c;

		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (c = 0; c < ncpu; c++)
			sum += vals[c];
		switch (k) {
		case STAT_SAMPLES:
			st->samples = sum;
			break;
		case STAT_COUNTS_FULL:
			st->counts_full = sum;
			break;
		case STAT_USTACK_ERR:
			st->ustack_err = sum;
			break;
		case STAT_KSTACK_ERR:
			st->kstack_err = sum;
			break;
		case STAT_STACKS_FULL:
			st->stacks_full = sum;
			break;
		case STAT_EVENTS_LOST:
			st->events_lost = sum;
			break;
		case STAT_FOREIGN:
			st->foreign = sum;
			break;
		case STAT_TCTX_LINKED:
			st->tctx_linked = sum;
			break;
		case STAT_TCTX_NONE:
			st->tctx_none = sum;
			break;
		case STAT_TCTX_BAD:
			st->tctx_bad = sum;
			break;
		case STAT_LATE:
			st->late_sent = sum;
			break;
		case STAT_QUIET:
			st->quiet = sum;
			break;
		case STAT_PY_STACKS:
			st->py_stacks = sum;
			break;
		case STAT_PY_PARTIAL:
			st->py_partial = sum;
			break;
		case STAT_PY_TRUNC:
			st->py_trunc = sum;
			break;
		}
	}
	free(vals);
	if (!s->l.on)
		offcpu__stats(s->skel, st);
}
