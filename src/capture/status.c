/* status.c - progress, summary and agent status lines (see status.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "capture/status.h"
#include "collect/stackwalk.h"
#include "proc/status.h"
#include "util/log.h"

const char *status__noun(unsigned long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* "%llu %s" arguments: a count and its noun ("1 sample", "2 samples"). */
#define NOUN_S(n, one) (unsigned long long)(n), status__noun((n), one, one "s")
#define NOUN_ES(n, one) (unsigned long long)(n), status__noun((n), one, one "es")

int status__progress_text(char *buf, size_t len, __s64 elapsed_ns, double seconds, __u64 samples)
{
	if (seconds > 0)
		return snprintf(buf, len, "capturing %.1fs / %gs, %llu %s", elapsed_ns / 1e9,
				seconds, NOUN_S(samples, "sample"));
	return snprintf(buf, len, "capturing %.1fs, %llu %s", elapsed_ns / 1e9,
			NOUN_S(samples, "sample"));
}

void status__progress(__s64 elapsed_ns, double seconds, __u64 samples, bool final)
{
	char line[128];

	if (final) {
		fputs("\r\033[K", stderr);
		return;
	}
	status__progress_text(line, sizeof(line), elapsed_ns, seconds, samples);
	fprintf(stderr, "\r\033[Kprofcap: %s", line);
}

static void summary_losses(const struct status_window *w)
{
	const struct sampler_stats *st = w->st;
	__u64 total = w->samples, lost = st->counts_full + w->model_dropped + w->overrun_lost;

	/* Every sample the kernel took is in the profile, counted as lost, or
	 * on its way through late walking (the next window's, or lost at the
	 * queue's cap: -v says how many). */
	if (st->samples != total + lost + w->late_transit)
		pr_warn("the kernel took %llu samples but %llu are accounted for (%llu in the "
			"profile, "
			"%llu lost); please report this",
			(unsigned long long)st->samples, (unsigned long long)(total + lost),
			(unsigned long long)total, (unsigned long long)lost);
	if (lost)
		pr_warn("%llu %s lost (aggregation table full: %llu, profile full: %llu, drained "
			"too late: %llu)",
			NOUN_S(lost, "sample"), (unsigned long long)st->counts_full,
			(unsigned long long)w->model_dropped, (unsigned long long)w->overrun_lost);
	if (w->stack_lost || st->stacks_full)
		pr_warn("%llu %s kept without (part of) their stack: %llu %s not "
			"stored (no room in the kernel's stack table at that moment), %llu gone "
			"at drain time",
			NOUN_S(w->stack_lost, "sample"), NOUN_S(st->stacks_full, "stack"),
			(unsigned long long)st->stacks_missing);
	if (w->ustack_missing)
		pr_warn("%llu %s of user processes %s no user stack (unreadable user "
			"memory); kept with their kernel frames only",
			NOUN_S(w->ustack_missing, "sample"),
			status__noun(w->ustack_missing, "has", "have"));
	if (w->truncated > w->partial)
		pr_warn("%llu %s the depth limit (%d kernel, %d user frames): truncated at "
			"the root end",
			(unsigned long long)(w->truncated - w->partial),
			status__noun(w->truncated - w->partial, "sample hit", "samples hit"),
			SAMPLER_MAX_KSTACK, w->unwind ? SAMPLER_MAX_USTACK : SAMPLER_MAX_KSTACK);
	if (w->partial)
		pr_warn("%llu %s (%.1f%%) %s not unwound to the outermost frame "
			"(no unwind row, unreadable stack, tables not loaded yet, or the %d-frame "
			"depth limit): counted as truncated",
			NOUN_S(w->partial, "sample"), total ? 100.0 * w->partial / total : 0.0,
			status__noun(w->partial, "has a user stack", "have user stacks"),
			SAMPLER_MAX_USTACK);
}

/* Python frames: how many samples had them, and how many of those lost
 * some (cut, or not named). */
static void summary_python(const struct status_window *w)
{
	if (!w->py_samples)
		return;
	pr_info("Python: %llu %s with Python frames", NOUN_S(w->py_samples, "sample"));
	if (w->py_partial)
		pr_warn("%llu %s with Python frames %s a cut Python stack (a frame unreadable "
			"while the interpreter changed it, the %d-frame depth limit, or no room "
			"in the kernel's stack table): counted as truncated",
			NOUN_S(w->py_partial, "sample"), status__noun(w->py_partial, "has", "have"),
			SAMPLER_MAX_PYFRAMES);
	if (w->py_unknown)
		pr_warn("%llu %s with Python frames %s frames not named (the process exited "
			"before its code objects were read, or a code object changed or was "
			"unreadable): shown as <unknown python>",
			NOUN_S(w->py_unknown, "sample"),
			status__noun(w->py_unknown, "has", "have"));
}

static void summary_unwind(const struct sampler_unwind_stats *us)
{
	const struct unwind_table_stats *ut = &us->tables;

	pr_info("unwind tables: %llu %s (%llu without CFI, %llu unreadable, %llu no "
		"room, %llu evicted), "
		"%llu %s = %.1f of %.1f MiB, %llu %s, built in %.0f ms; stacks: "
		"%llu complete, %llu partial",
		NOUN_S(ut->files_parsed, "file"), (unsigned long long)ut->files_no_cfi,
		(unsigned long long)ut->files_failed, (unsigned long long)ut->files_no_room,
		(unsigned long long)ut->files_evicted, NOUN_S(ut->rows, "row"),
		ut->rows * 8 / 1048576.0, ut->max_rows * 8 / 1048576.0,
		NOUN_ES(ut->processes, "process"), ut->parse_ns / 1e6,
		(unsigned long long)us->complete, (unsigned long long)us->partial);
	pr_debug("unwinder: %llu table frames, %llu frame-pointer frames; partial: %llu no "
		 "mapping, %llu no row, %llu read errors, %llu depth, %llu ext full, %llu "
		 "no tables yet; %llu kernel-mode samples; %llu mappings from VMAs, %llu programs' "
		 "text at their exec",
		 (unsigned long long)us->frames, (unsigned long long)us->fp_frames,
		 (unsigned long long)us->no_mapping, (unsigned long long)us->no_row,
		 (unsigned long long)us->read_err, (unsigned long long)us->depth,
		 (unsigned long long)us->ext_full, (unsigned long long)us->no_proc,
		 (unsigned long long)us->kernel_regs, (unsigned long long)us->vma,
		 (unsigned long long)us->vma_exec);
	if (ut->maps_deferred)
		pr_debug("lazy tables: %llu library mappings described without their table, "
			 "%llu tables built when a walk needed them",
			 (unsigned long long)ut->maps_deferred,
			 (unsigned long long)ut->files_on_demand);
	if (us->late_sent || us->late_lost)
		pr_debug("late walking: %llu samples sent (%llu not: ring full), %llu completed, "
			 "%llu partial (%llu without tables; walks ended: %llu no mapping, %llu no "
			 "row, "
			 "%llu outside the copy, %llu depth), %llu dropped; maps read %llu times, "
			 "%llu from the notice's snapshot",
			 (unsigned long long)us->late_sent, (unsigned long long)us->late_lost,
			 (unsigned long long)us->late_complete,
			 (unsigned long long)us->late_partial,
			 (unsigned long long)us->late_no_tables,
			 (unsigned long long)us->late_ends[STACKWALK_NO_MAPPING],
			 (unsigned long long)us->late_ends[STACKWALK_NO_ROW],
			 (unsigned long long)us->late_ends[STACKWALK_READ],
			 (unsigned long long)us->late_ends[STACKWALK_DEPTH],
			 (unsigned long long)us->late_dropped,
			 (unsigned long long)us->late_maps_read,
			 (unsigned long long)us->late_maps_offered);
}

static void summary_off_cpu(const struct status_window *w)
{
	const struct sampler_stats *st = w->st;

	pr_info("off-CPU: %llu %s of kept threads, %llu (%.3f s) of at least %.3g ms in the "
		"profile, %llu (%.3f s) shorter only counted%s",
		NOUN_S(st->off_cpu_waits, "wait"),
		(unsigned long long)(st->off_cpu_waits - st->off_cpu_short),
		st->off_cpu_long_ns / 1e9, w->off_cpu_min_ns / 1e6,
		(unsigned long long)st->off_cpu_short, st->off_cpu_short_ns / 1e9,
		w->off_cpu_runnable ? "" : "; preemption (waiting for a CPU) not counted");
	if (st->off_cpu_work_busy)
		pr_debug("off-CPU: %llu long waits found no free task work entry and stayed "
			 "pending until the thread's next long wait",
			 (unsigned long long)st->off_cpu_work_busy);
	if (st->off_cpu_work_late)
		pr_debug("off-CPU: %llu long waits completed after their thread had left the "
			 "call they blocked in: user stack is the blocked PC alone",
			 (unsigned long long)st->off_cpu_work_late);
	if (st->off_cpu_counts_full || w->off_cpu_dropped)
		pr_warn("%llu off-CPU %s lost (aggregation table full: %llu, profile full: "
			"%llu)",
			NOUN_S(st->off_cpu_counts_full + w->off_cpu_dropped, "wait"),
			(unsigned long long)st->off_cpu_counts_full,
			(unsigned long long)w->off_cpu_dropped);
}

/* --timestamps: what kept its time, and what the times ring could not take. */
static void summary_times(const struct status_window *w)
{
	const struct sampler_times_stats *t = &w->times;

	if (!w->timestamps)
		return;
	pr_info("timestamps: %llu %s kept with their time and CPU", NOUN_S(w->timed, "sample"));
	if (w->untimed || t->ring_lost || t->dropped)
		pr_warn("timestamps: %llu %s lost their time (timed when drained, up to a second "
			"late): the times ring was full %llu times (%llu of them sampled "
			"allocations), %llu events over profcap's cap (docs/time_capture.md)",
			NOUN_S(w->untimed, "sample"), (unsigned long long)t->ring_lost,
			(unsigned long long)t->ring_mem_lost, (unsigned long long)t->dropped);
}

void status__summary(const struct status_window *w)
{
	const struct sampler_stats *st = w->st;

	pr_info("captured %llu %s, %llu %s, %llu %s; %.2f s at %u Hz on %u %s",
		NOUN_S(w->samples, "sample"), NOUN_ES(w->nproc, "process"),
		NOUN_S(w->nstacks, "stack"), w->dur_ns / 1e9, w->freq_hz, st->ncpus,
		status__noun(st->ncpus, "CPU", "CPUs"));
	summary_losses(w);
	summary_times(w);
	summary_python(w);
	if (w->off_cpu)
		summary_off_cpu(w);
	if (w->us)
		summary_unwind(w->us);
	if (st->tctx_linked || st->tctx_none || st->tctx_bad || w->links_capped)
		pr_info("thread context: %llu %s linked to a span, %llu without a span, %llu "
			"with an unreadable or invalid record; %llu over the cap of %u distinct "
			"links per window kept without a link",
			NOUN_S(st->tctx_linked, "sample"), (unsigned long long)st->tctx_none,
			(unsigned long long)st->tctx_bad, (unsigned long long)w->links_capped,
			w->links_cap);
	if (w->attrs_kept || w->attrs_unknown || w->attrs_bad)
		pr_info("thread-context attributes: %llu %s with attributes, %llu attributes "
			"dropped (key index not in the process context's key map), %llu samples "
			"with attrs-data cut at %u bytes or malformed",
			NOUN_S(w->attrs_kept, "sample"), (unsigned long long)w->attrs_unknown,
			(unsigned long long)w->attrs_bad, SAMPLER_TCTX_ATTRS);
	{
		struct rusage ru = {0};

		getrusage(RUSAGE_SELF, &ru);
		pr_info("memory: peak rss %.1f MB, BPF maps %.1f MiB (peak %.1f MiB)",
			ru.ru_maxrss / 1024.0, st->bpf_bytes / 1048576.0,
			st->bpf_peak_bytes / 1048576.0);
		pr_debug("first sample at CLOCK_MONOTONIC %llu ns",
			 (unsigned long long)st->first_sample_ns);
	}
	if (st->foreign)
		pr_info("%llu %s of tasks outside profcap's PID namespace %s skipped; to "
			"profile them, run profcap in the host PID namespace (hostPID: true)",
			NOUN_S(st->foreign, "sample"), status__noun(st->foreign, "was", "were"));
	if (st->events_lost || st->notices_lost)
		pr_warn("%llu new-process %s lost (%llu ring buffer full, %llu queue "
			"full): some short-lived processes may lack symbols",
			NOUN_S(st->events_lost + st->notices_lost, "notice"),
			(unsigned long long)st->events_lost, (unsigned long long)st->notices_lost);
}

static __u64 rss_kb(void)
{
	unsigned long long kb;

	return proc_status__self("VmRSS:", 0, 10, &kb) ? 0 : kb;
}

void status__window(const struct status_window *w, const struct status_totals *t, int ret,
		    bool json, bool quiet)
{
	const struct delivery_stats *d = &t->delivery;
	__u64 rss = rss_kb();
	unsigned long long v[] = {t->windows, w->samples,  w->dropped,	     t->samples,
				  d->files,   d->exported, d->export_failed, d->spooled,
				  t->dropped, d->rescued,  d->lost,	     d->pending};

	if (json) {
		fprintf(stderr,
			"{\"event\":\"window\",\"window\":%llu,\"samples\":%llu,\"dropped\":%llu,"
			"\"samples_total\":%llu,\"files\":%llu,\"exported\":%llu,"
			"\"export_failed\":%llu,\"spooled\":%llu,\"dropped_total\":%llu,"
			"\"rescued\":%llu,\"lost\":%llu,\"export_pending\":%llu,"
			"\"processes\":%zu,\"kernel_samples\":%llu,\"rss_kb\":%llu,\"bpf_kb\":%llu,"
			"\"status\":%d}\n",
			v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11],
			w->nproc, (unsigned long long)w->st->samples, (unsigned long long)rss,
			(unsigned long long)(w->st->bpf_bytes / 1024), ret);
		return;
	}
	if (quiet)
		return;
	fprintf(stderr,
		"profcap: agent window %llu: %llu %s, %llu dropped, %llu %s; total: "
		"%llu %s, %llu %s, %llu exported, %llu export %s (%llu spooled), "
		"%llu dropped, %llu rescued, %llu lost; rss %.1f MB, bpf %.1f MiB\n",
		v[0], NOUN_S(v[1], "sample"), v[2], NOUN_ES(w->nproc, "process"),
		NOUN_S(v[3], "sample"), NOUN_S(v[4], "file"), v[5], v[6],
		status__noun(v[6], "failure", "failures"), v[7], v[8], v[9], v[10], rss / 1024.0,
		w->st->bpf_bytes / 1048576.0);
}

void status__totals(const struct status_totals *t, int ret)
{
	const struct delivery_stats *d = &t->delivery;

	fprintf(stderr,
		"{\"event\":\"exit\",\"windows\":%llu,\"samples_total\":%llu,"
		"\"dropped_total\":%llu,\"files\":%llu,\"exported\":%llu,"
		"\"export_failed\":%llu,\"spooled\":%llu,\"rescued\":%llu,\"lost\":%llu,"
		"\"status\":%d}\n",
		(unsigned long long)t->windows, (unsigned long long)t->samples,
		(unsigned long long)t->dropped, (unsigned long long)d->files,
		(unsigned long long)d->exported, (unsigned long long)d->export_failed,
		(unsigned long long)d->spooled, (unsigned long long)d->rescued,
		(unsigned long long)d->lost, ret);
}

void status__start(double interval, bool json, bool quiet)
{
	if (json)
		fprintf(stderr, "{\"event\":\"start\",\"interval_s\":%g}\n", interval);
	else if (!quiet)
		fprintf(stderr, "profcap: agent sampling, windows of %g s\n", interval);
}
