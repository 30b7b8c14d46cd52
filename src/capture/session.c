/* session.c - a sampling session in windows (see session.h). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "capture/child.h"
#include "capture/comm_hint.h"
#include "capture/execsplit.h"
#include "capture/ingest.h"
#include "capture/memory.h"
#include "capture/python.h"
#include "capture/jvm.h"
#include "capture/php.h"
#include "capture/ruby.h"
#include "capture/v8.h"
#include "capture/perl.h"
#include "capture/session.h"
#include "collect/kname.h"
#include "collect/sampler.h"
#include "formats/otlp.h"
#include "proc/procmaps.h"
#include "proc/privs.h"
#include "proc/threadctx.h"
#include "symbolize/debuginfod.h"
#include "symbolize/symbolizer.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/fdio.h"
#include "util/id.h"
#include "util/heap.h"
#include "util/log.h"
#include "util/pages.h"
#include "util/version.h"

#define DRAIN_INTERVAL_NS 1000000000ll
/* Records waiting for kernel names or DWARF lines are kept across drains
 * of a window until one of these is reached (or the window ends), so that
 * a pass over /proc/kallsyms and beginning a file's DWARF again (both
 * dear) are not paid every second for the few new addresses a busy
 * machine shows. */
#define KERNEL_PASS_INTERVAL_NS 10000000000ll
#define KERNEL_DEFER_MAX_BYTES (1u << 20)
#define PROGRESS_INTERVAL_NS 500000000ll
/* How long a capture may run past its end naming the samples it drains
 * (PROFCAP_DRAIN_OVERRUN_MS for tests): a machine too busy to keep up does
 * not stretch a capture without bound. Records drained after it are
 * counted as lost, not named. */
#define DRAIN_OVERRUN_NS 5000000000ll
/* Records between two looks at the clock while draining. */
#define DRAIN_CLOCK_EVERY 64u
/* How often a capture of -p processes looks whether they all exited. */
#define TARGET_CHECK_NS 250000000ll
#define OUTPUT_MAX_BYTES (1ull << 30)

struct session {
	const struct capture_opts *o;
	struct session_hooks hooks;
	struct utsname uts;
	struct profile *prof;
	struct symbolizer *sym;
	struct debuginfod *dinfod; /* DEBUGINFOD_URLS set; used before sampling only */
	struct sampler *smp;
	struct threadctx_files *tctx_files; /* files without a thread-context variable */
	struct target tgt;
	struct child *child; /* -- CMD, or NULL */
	struct memory *mem;  /* --memory, or NULL */
	__u64 procs_gone;    /* notices of processes that had exited before their snapshot */
	__u64 cpu_procs_ns;  /* main thread CPU describing new processes (-v only) */
	struct env_kv env_kv[PROFILE_MAX_RESOURCE_ATTRS];	/* owned */
	struct profile_kv resource[PROFILE_MAX_RESOURCE_ATTRS]; /* views of env_kv */
	size_t nresource;
	struct ingest in;    /* records into the window's profile */
	struct execsplit ex; /* processes that exec()ed: their old program's samples */
	struct capture_python *py; /* Python processes (capture/python.h) */
	struct capture_v8 *v8;	   /* V8 processes (capture/v8.h) */
	struct capture_jvm *jvm;   /* HotSpot JVMs (capture/jvm.h) */
	struct capture_php *php;   /* PHP processes (capture/php.h) */
	struct capture_ruby *rb;   /* Ruby processes (capture/ruby.h) */
	struct kname *kname; /* the kernel namer, loaded at the first pass */
	bool kname_failed;   /* ... or it could not be: /proc/kallsyms only */
	bool matched_checked, tty, over, warned_gone;
	/* CMD was sent the signal that stopped the capture (or needed not be),
	 * when stop_count was stops_seen */
	bool forwarded;
	sig_atomic_t stops_seen;
	/* clocks (CLOCK_MONOTONIC ns unless _unix) */
	__s64 start, deadline, window_ns, wstart, wunix, wdeadline, next_drain, next_progress;
	__s64 next_target_check;
	/* capture: past this, drained records are counted (overrun_lost, and
	 * the window's off-CPU drops), not named */
	__s64 overrun_ns, overrun_at;
	__u64 overrun_lost;
	unsigned drain_tick;
	bool overrun;
	struct sampler_stats base; /* sampler counters at the window's start */
	struct sampler_times_stats times; /* the times ring's, last read */
};

static volatile sig_atomic_t stop_requested, hup_requested;
static volatile sig_atomic_t stop_signal;
/* SIGINT/SIGTERM received, and whether the last was sent by a process
 * (kill(), a supervisor) rather than by the kernel for the terminal, which
 * sends it to CMD as well: CMD shares profcap's process group. */
static volatile sig_atomic_t stop_count, stop_from_process;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGHUP) {
		hup_requested = 1;
		return;
	}
	if (sig == SIGCHLD)
		return; /* only to wake the poll */
	stop_signal = sig;
	stop_from_process = si && si->si_code <= 0; /* SI_USER, SI_QUEUE, SI_TKILL */
	stop_count++;
	stop_requested = 1;
}

static __s64 now_ns(clockid_t clk)
{
	return (__s64)clock__ns(clk);
}

static const char *host_arch(const char *machine)
{
	if (!strcmp(machine, "x86_64"))
		return "amd64";
	if (!strcmp(machine, "aarch64"))
		return "arm64";
	if (!strncmp(machine, "arm", 3))
		return "arm32";
	if (!strcmp(machine, "ppc64le") || !strcmp(machine, "ppc64"))
		return "ppc64";
	if (!strcmp(machine, "s390x"))
		return "s390x";
	if (!strcmp(machine, "i686") || !strcmp(machine, "i386"))
		return "x86";
	return machine;
}

/* OpenTelemetry thread context (OTEP 4947): tell the sampler where process
 * @pid's threads keep it (its executable, or a library when its process
 * context announces thread context: proc/threadctx.h), or that they do not
 * (a new program after exec). @snap: its snapshot just taken, or NULL. */
static void find_thread_ctx(struct session *s, int pid, const struct procsnap *snap)
{
	struct threadctx_loc loc;
	int err;

	if (pid <= 0)
		return;
	err = threadctx__process_locate(NULL, pid, symbolizer__thread_ctx(s->sym, pid), snap,
					s->tctx_files, &loc);
	if (err && err != -ENOENT)
		pr_debug("thread context of process %d not looked up: %s", pid, strerror(-err));
	if (!sampler__set_thread_ctx(s->smp, pid, err ? NULL : &loc) && !err)
		pr_debug("process %d: thread context at %lld %s%.0u", pid, (long long)loc.off,
			 loc.modid ? "in the TLS block of module " : "from the thread pointer",
			 loc.modid);
}

static void on_new_process(void *ctx, __u32 tgid, const struct procsnap *snap)
{
	struct session *s = ctx;
	/* -v only: a thread CPU clock is a system call, two per process */
	bool timed = log__level() >= LOG_VERBOSE;
	__u64 cpu = timed ? clock__thread_cpu_ns() : 0;

	if (execsplit__hold(&s->ex, tgid, snap))
		return;
	/* Snapshot maps and binaries while the process is alive (the sampler
	 * builds its unwind tables on its own thread). Stopping: the final
	 * drain still names the process (describe()); a snapshot now only
	 * delays the exit. A new program after an exec is described anyway. */
	if ((!stop_requested || s->ex.applying) &&
	    symbolizer__add_process_snap(s->sym, (int)tgid, snap) == -ESRCH)
		s->procs_gone++;
	/* After the snapshot: it read the process context, which says whether
	 * the thread-context variable may be in a library. */
	find_thread_ctx(s, (int)tgid, snap);
	memory__on_process(s->mem, (int)tgid);
	capture_v8__process(s->v8, (int)tgid, snap);
	capture_jvm__process(s->jvm, (int)tgid, snap);
	capture_php__process(s->php, (int)tgid, snap);
	capture_ruby__process(s->rb, (int)tgid, snap);
	capture_perl__process(s->smp, (int)tgid, snap);
	if (capture_python__process(s->py, (int)tgid, snap, now_ns(CLOCK_MONOTONIC)))
		s->next_drain = capture_python__next_drain(s->py, now_ns(CLOCK_MONOTONIC),
							   s->next_drain);
	if (timed)
		s->cpu_procs_ns += clock__thread_cpu_ns() - cpu;
}

/* How a drain ends: records still waiting for names stay (a drain within a
 * window), are added unless they may wait longer, or are added. */
enum settle {
	SETTLE_NONE,  /* another drain follows at once */
	SETTLE_LAZY,  /* a drain within a window */
	SETTLE_FLUSH, /* the window ends */
};

/* Name what the deferred records wait for and add them, then free the
 * DWARF begun for it but what the batch keeps for the next. 0 or the first
 * error of adding. */
static int settle(struct session *s)
{
	int err = ingest__flush(&s->in);

	/* Its addresses are named: DWARF is not needed until the next. */
	symbolizer__release_dwarf(s->sym);
	return err;
}

/* The drain's record callback: into the window's profile, unless the
 * capture is past its end by more than it may take to drain (then counted
 * as lost: a drain that fell behind ends all the same). */
static int drain_record(void *ctx, const struct sampler_record *r)
{
	struct session *s = ctx;

	if (!s->overrun && !(s->drain_tick++ % DRAIN_CLOCK_EVERY) &&
	    now_ns(CLOCK_MONOTONIC) >= s->overrun_at) {
		s->overrun = true;
		pr_warn("naming samples went on %.1f s past the end of the capture: the samples "
			"still waiting are counted as lost",
			s->overrun_ns / 1e9);
	}
	if (!s->overrun) {
		capture_python__record(s->py, r);
		capture_jvm__record(s->jvm, r);
		return ingest__record(&s->in, r);
	}
	if (r->kind == SAMPLER_KIND_OFF_CPU)
		s->in.c.off_cpu_dropped += r->switches;
	else
		s->overrun_lost += r->count;
	return 0;
}

/* Drain the sampler into the profile, then per @how name what waits and
 * add those records, and free the DWARF still begun (within a window, but
 * what the last lines batch keeps). 0 or -errno (logged). */
static int drain(struct session *s, enum settle how)
{
	int err, ferr = 0;
	size_t bytes;

	/* Processes announced since the last poll first: their snapshots
	 * describe them before their samples are named. */
	sampler__poll(s->smp, 0, on_new_process, s);
	err = execsplit__settle(&s->ex);
	err = sampler__drain(s->smp, drain_record, s) ?: err;
	err = err ?: memory__drain(s->mem, how == SETTLE_FLUSH, &s->in);
	bytes = ingest__deferred_bytes(&s->in);

	if (how == SETTLE_FLUSH ||
	    (how == SETTLE_LAZY && s->in.ndefer &&
	     (bytes >= KERNEL_DEFER_MAX_BYTES ||
	      now_ns(CLOCK_MONOTONIC) - s->in.last_kpass >= KERNEL_PASS_INTERVAL_NS)))
		ferr = ingest__flush(&s->in);
	/* Within a window, DWARF the last batch used is kept for the next
	 * pass; a window's end (an agent's next window is a minute away by
	 * default) frees it all. */
	if (how == SETTLE_FLUSH)
		symbolizer__release_all_dwarf(s->sym);
	else if (how != SETTLE_NONE)
		symbolizer__release_dwarf(s->sym);
	err = err ?: ferr;
	if (err)
		pr_err("reading samples failed: %s", strerror(-err));
	return err;
}

static void fill_meta(struct profile_meta *m, const struct utsname *u, __s64 t_unix_ns,
		      __s64 dur_ns, __u32 hz)
{
	memset(m, 0, sizeof(*m));
	m->time_unix_nano = (__u64)t_unix_ns;
	m->duration_nano = dur_ns > 0 ? (__u64)dur_ns : 1;
	m->period_ns = 1000000000ull / hz;
	m->host_name = u->nodename;
	m->host_arch = host_arch(u->machine);
	m->os_type = "linux";
	m->scope_name = "profcap";
	m->scope_version = PROFCAP_VERSION;
	id__random(m->profile_id);
}

static int new_window(struct session *s)
{
	profile__free(s->prof);
	s->prof = profile__new();
	ingest__window(&s->in, s->prof);
	if (!s->prof) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int cmp_s64(const void *a, const void *b)
{
	__s64 x = *(const __s64 *)a, y = *(const __s64 *)b;

	return x < y ? -1 : x > y;
}

/* Processes in @p: its entries are per (process, value type), so a process
 * with CPU and off-CPU samples is one entry of each. */
static size_t distinct_pids(const struct profile *p)
{
	size_t n = profile__process_count(p), i, k = 0;
	__s64 *pids = n ? malloc(n * sizeof(*pids)) : NULL;

	if (!pids)
		return n; /* none, or no memory: count entries */
	for (i = 0; i < n; i++)
		pids[i] = profile__process(p, i)->pid;
	qsort(pids, n, sizeof(*pids), cmp_s64);
	for (i = 0; i < n; i++)
		k += !i || pids[i] != pids[i - 1];
	free(pids);
	return k;
}

/* Close the current window (already drained): encode it and hand it to
 * the window hook. @st holds the sampler counters now, @us the unwinder's
 * (NULL: none). Returns the hook's exit code, or 1 when encoding failed. */
static int end_window(struct session *s, __s64 dur, const struct sampler_stats *st,
		      const struct sampler_unwind_stats *us, bool final)
{
	struct session_window w = {
		.t_unix_ns = s->wunix, .final = final, .signalled = final && stop_requested};
	struct profile_meta meta;
	struct buf out;
	__u64 py_depth;
	int err, ret;
	__s64 t0 = now_ns(CLOCK_MONOTONIC);

	buf__init(&out, OUTPUT_MAX_BYTES);
	fill_meta(&meta, &s->uts, s->wunix, dur, s->o->freq_hz);
	meta.resource = s->resource;
	meta.nresource = s->nresource;
	meta.samples_dropped = st->counts_full - s->base.counts_full + s->in.c.model_dropped +
			       s->overrun_lost + memory__window_lost(s->mem);
	/* a cut Python stack is a truncated sample too */
	meta.samples_truncated = s->in.c.truncated + capture_python__take_cut(s->py, &py_depth);
	meta.samples_truncated_depth = s->in.c.depth_cut + py_depth;
	meta.samples_stack_missing = s->in.c.stack_lost + s->in.c.ustack_missing;
	meta.samples_throttled = memory__window_throttled(s->mem);
	meta.samples_untimed = s->in.c.untimed;
	w.status = (struct status_window){
		.samples = profile__type_total(s->prof, 0),
		.off_cpu = s->o->off_cpu,
		.off_cpu_min_ns = s->o->off_cpu_min_ns,
		.off_cpu_runnable = s->o->off_cpu_runnable,
		.off_cpu_dropped = s->in.c.off_cpu_dropped,
		.links_capped = profile__links_capped(s->prof),
		.links_cap = profile__link_cap(s->prof),
		.attrs_kept = s->in.c.attrs_kept,
		.attrs_unknown = s->in.c.attrs_unknown,
		.attrs_bad = s->in.c.attrs_bad,
		.dropped = meta.samples_dropped,
		.model_dropped = s->in.c.model_dropped,
		.overrun_lost = s->overrun_lost,
		.ustack_missing = s->in.c.ustack_missing,
		.stack_lost = s->in.c.stack_lost,
		.truncated = s->in.c.truncated,
		.partial = s->in.c.partial,
		.py_samples = s->in.c.py_samples,
		.py_partial = s->in.c.py_partial,
		.py_unknown = s->in.c.py_unknown,
		.late_transit = (st->late_sent - s->base.late_sent) -
				(st->late_emitted - s->base.late_emitted),
		.nproc = distinct_pids(s->prof),
		.nstacks = profile__stack_count(s->prof) - 1,
		.timestamps = s->o->timestamps,
		.timed = s->in.c.timed,
		.untimed = s->in.c.untimed,
		.dur_ns = dur,
		.freq_hz = s->o->freq_hz,
		.unwind = s->o->unwind,
		.st = st,
		.us = us,
	};
	if (s->smp) /* else read before it went */
		sampler__times_stats(s->smp, &s->times);
	w.status.times = s->times;
	err = profile__set_meta(s->prof, &meta);
	if (!err)
		err = profile__prune(s->prof);
	if (!err)
		err = otlp__encode(s->prof, &out);
	if (err) {
		pr_err("encoding the profile failed: %s", strerror(-err));
		buf__release(&out);
		return 1;
	}
	pr_debug("profile encoded in %.1f ms", (now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	w.prof = s->prof;
	w.otlp = &out;
	ret = s->hooks.window(s->hooks.ctx, &w);
	buf__release(&out);
	return ret;
}

static void check_target_matches(struct session *s)
{
	struct sampler_stats st;
	char msg[512];

	if (s->matched_checked)
		return;
	s->matched_checked = true;
	sampler__stats(s->smp, &st);
	if (st.samples || s->o->cmd || !target__any(&s->o->target))
		return;
	if (target__explain_empty(&s->tgt, "/proc", msg, sizeof(msg)))
		pr_warn("%s", msg);
	else
		pr_info("%s", msg);
	comm_hint__warn(&s->o->target);
}

int session__open(const struct capture_opts *o, const struct session_hooks *hooks,
		  struct session **out)
{
	struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO};
	struct session *s;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		pr_err("out of memory");
		return 1;
	}
	s->o = o;
	s->hooks = *hooks;
	uname(&s->uts);
	*out = s;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (o->cmd)
		sigaction(SIGCHLD, &sa, NULL);
	if (target__resolve(&s->tgt, &o->target, "/proc"))
		return 2;
	if (sampler__check_privileges())
		return 1;
	return 0;
}

const char *session__host(const struct session *s)
{
	return s->uts.nodename;
}

static int process_maps(void *ctx, int pid, struct procmaps **out);

/* The symbolizer, the first window, the resource labels and CMD. */
static int prepare(struct session *s)
{
	size_t i;

	s->sym = symbolizer__new("/proc");
	s->in.sym = s->sym;
	execsplit__init(&s->ex, &s->in, drain_record, on_new_process, s);
	s->tctx_files = threadctx_files__new();
	if (new_window(s) || !s->sym || !s->tctx_files) {
		pr_err("out of memory");
		return 1;
	}
	{
		const struct procmaps_source src = {.fn = process_maps, .ctx = s};

		symbolizer__set_maps_source(s->sym, &src);
	}
	s->nresource = env__resource(env__process(), s->env_kv, PROFILE_MAX_RESOURCE_ATTRS);
	for (i = 0; i < s->nresource; i++) {
		s->resource[i].key = s->env_kv[i].key;
		s->resource[i].value = s->env_kv[i].value;
	}
	for (i = 0; i < s->o->ndebug_dirs; i++)
		symbolizer__add_debug_dir(s->sym, s->o->debug_dirs[i]);
	/* Downloads block: only for the targets known before sampling starts. */
	s->dinfod = debuginfod__new_from_env(env__process());
	symbolizer__set_debuginfod(s->sym, s->dinfod);
	for (i = 0; i < s->tgt.npids; i++)
		symbolizer__add_process(s->sym, s->tgt.pids[i]);
	symbolizer__set_debuginfod(s->sym, NULL);
	if (s->o->cmd) {
		if (child__spawn(s->o->cmd, &s->child))
			return 1;
		if (target__add_followed_pid(&s->tgt, (int)child__pid(s->child))) {
			pr_err("out of memory");
			return 1;
		}
	}
	return 0;
}

/* Load the BPF program; targeted processes get their unwind tables before
 * the first sample (system-wide, each gets them at its first notice). */
static int load_sampler(struct session *s)
{
	const struct capture_opts *o = s->o;
	struct sampler_opts so = {
		.freq_hz = o->freq_hz,
		.user = o->user,
		.kernel = o->kernel,
		.idle = o->idle,
		.unwind = o->unwind,
		.off_cpu = o->off_cpu,
		.off_cpu_min_ns = o->off_cpu_min_ns,
		.off_cpu_runnable = o->off_cpu_runnable,
		.timestamps = o->timestamps,
	};
	pid_t cmd = s->child ? child__pid(s->child) : 0;
	__s64 t0;
	size_t i;

	target__sampler_opts(&s->tgt, &so);
	target__warn_privileges(&s->tgt, "/proc");
	t0 = now_ns(CLOCK_MONOTONIC);
	s->smp = sampler__new(&so);
	if (!s->smp)
		return 1;
	s->in.smp = s->smp;
	s->in.timestamps = o->timestamps;
	s->py = capture_python__new(s->smp);
	s->in.py = capture_python__frames(s->py);
	s->v8 = capture_v8__new(s->smp);
	s->in.v8 = capture_v8__frames(s->v8);
	s->jvm = capture_jvm__new(s->smp);
	s->in.jvm = capture_jvm__frames(s->jvm);
	s->php = capture_php__new(s->smp);
	s->in.php = capture_php__frames(s->php);
	s->rb = capture_ruby__new(s->smp);
	s->in.rb = capture_ruby__frames(s->rb);
	pr_debug("BPF program loaded and perf events opened in %.1f ms",
		 (now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	for (i = 0; i < s->tgt.npids; i++)
		if (s->tgt.pids[i] != (int)cmd) {
			find_thread_ctx(s, s->tgt.pids[i], NULL);
			capture_python__process(s->py, s->tgt.pids[i], NULL, t0);
			capture_v8__process(s->v8, s->tgt.pids[i], NULL);
			capture_jvm__process(s->jvm, s->tgt.pids[i], NULL);
			capture_php__process(s->php, s->tgt.pids[i], NULL);
			capture_ruby__process(s->rb, s->tgt.pids[i], NULL);
			capture_perl__process(s->smp, s->tgt.pids[i], NULL);
		}
	if (o->unwind) {
		t0 = now_ns(CLOCK_MONOTONIC);
		/* Not CMD: it has not run exec yet; its first sample's notice
		 * builds its tables. */
		for (i = 0; i < s->tgt.npids; i++)
			if (s->tgt.pids[i] != (int)cmd)
				sampler__add_process(s->smp, s->tgt.pids[i]);
		pr_debug("unwind tables of %zu processes built in %.1f ms", s->tgt.npids,
			 (now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	}
	return 0;
}

/* The symbolizer's kernel namer (collect/kname.h): the kernel names the
 * addresses itself instead of printing all of /proc/kallsyms. Loaded at
 * the first pass; a load that fails is not tried again (passes read
 * /proc/kallsyms). */
static int name_kernel(void *ctx, const __u64 *addrs, size_t n, const char **names, __u64 *stext,
		       __u64 *etext)
{
	struct session *s = ctx;
	__s64 t0 = now_ns(CLOCK_MONOTONIC);
	int err;

	if (!s->kname && !s->kname_failed) {
		err = kname__new(&s->kname);
		if (err) {
			s->kname_failed = true;
			pr_debug("the kernel namer did not load (%s): kernel frames named from "
				 "/proc/kallsyms",
				 strerror(-err));
			return err;
		}
		pr_debug("kernel namer loaded in %.1f ms", (now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	}
	if (!s->kname)
		return -ENOTSUP;
	return kname__name(s->kname, addrs, n, names, stext, etext);
}

/* The symbolizer's maps source: the sampler's side-band records, while the
 * sampler lives (its final drain and after: maps files and snapshots). */
static int process_maps(void *ctx, int pid, struct procmaps **out)
{
	struct session *s = ctx;

	*out = NULL;
	return s->smp ? sampler__process_maps(s->smp, pid, out) : -ENOENT;
}

static void load_kernel_symbols(struct session *s)
{
	__s64 t0 = now_ns(CLOCK_MONOTONIC);
	int err = symbolizer__load_kernel(s->sym);
	const char *env;

	if (err == -EPERM) {
		struct privs pv;
		char why[400];

		privs__read("/proc", &pv);
		privs__kallsyms_hidden(&pv, why, sizeof(why));
		pr_warn("kernel symbols are hidden: kernel frames keep addresses only; %s", why);
	} else if (err)
		pr_warn("cannot read /proc/kallsyms (%s): kernel frames keep addresses "
			"only",
			strerror(-err));
	pr_debug("kernel symbols checked in %.1f ms", (now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	/* PROFCAP_KALLSYMS_FILE=1: /proc/kallsyms only (benchmarks, tests). */
	env = env__get(env__process(), "PROFCAP_KALLSYMS_FILE");
	if (!err && !(env && strcmp(env, "0")))
		symbolizer__set_kernel_namer(s->sym, name_kernel, s);
}

int session__start(struct session *s)
{
	const struct capture_opts *o = s->o;
	const char *env;
	sigset_t stop, old;
	int ret;

	ret = prepare(s);
	/* A signal interrupts the verifier (EAGAIN, and libbpf's retries give
	 * up under a stream of signals): hold them until the program is
	 * loaded; the handlers only set flags, so nothing is lost. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, &old);
	if (!ret)
		ret = load_sampler(s);
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* Agent: before the first window, so that windows keep their length
	 * (a capture overlaps it with sampling: see below). */
	if (!ret && o->agent && o->kernel)
		load_kernel_symbols(s);
	if (!ret && sampler__start(s->smp))
		ret = 1;
	if (!ret && o->memory &&
	    memory__start(&o->memory_opts, s->smp, s->tgt.pids, s->tgt.npids,
			  s->child ? child__pid(s->child) : 0, o->cmd ? o->cmd[0] : NULL, &s->mem))
		ret = 1;
	if (ret)
		return ret; /* session__free() lets a held CMD go */
	s->start = now_ns(CLOCK_MONOTONIC);
	s->in.last_kpass = s->start;
	s->wunix = now_ns(CLOCK_REALTIME);
	/* CMD that cannot run ends the capture with a shell's status. */
	if (s->child && (ret = child__release(s->child)))
		return child__shell_status(ret);
	if (s->hooks.started)
		s->hooks.started(s->hooks.ctx);
	/* Kernel symbols are first needed at the first drain: read them while
	 * the CPUs are already being sampled. */
	if (o->kernel && !o->agent)
		load_kernel_symbols(s);
	/* capture: one window of --seconds (or until CMD exits); agent: windows
	 * of --interval until a signal. */
	s->deadline =
		o->agent || !o->seconds ? INT64_MAX : s->start + (__s64)llround(o->seconds * 1e9);
	env = env__get(env__process(), "PROFCAP_DRAIN_OVERRUN_MS");
	s->overrun_ns = env ? (__s64)strtoul(env, NULL, 10) * 1000000ll : DRAIN_OVERRUN_NS;
	s->overrun_at = s->deadline == INT64_MAX ? INT64_MAX : s->deadline + s->overrun_ns;
	s->window_ns = o->agent ? (__s64)llround(o->interval * 1e9) : INT64_MAX;
	s->wstart = s->start;
	s->wdeadline = o->agent ? s->wstart + s->window_ns : s->deadline;
	s->next_drain = s->start + DRAIN_INTERVAL_NS;
	s->next_progress = s->start;
	s->tty = isatty(STDERR_FILENO) && !o->quiet && !o->agent;
	pr_debug("allocator %s; large buffers in %s pages", heap__name(),
		 pages__huge_pays() ? "huge" : "small");
	return 0;
}

/* Agent: a window without samples whose -p processes have all exited:
 * every later window will be empty too. Say so once. */
static void check_targets_alive(struct session *s)
{
	const struct target_opts *t = &s->o->target;

	if (s->warned_gone || !t->npids || profile__total(s->prof))
		return;
	for (size_t i = 0; i < t->npids; i++)
		if (!kill(t->pids[i], 0) || errno != ESRCH)
			return;
	s->warned_gone = true;
	pr_warn("every process given with -p has exited: the next windows will be empty; stop "
		"the agent, or restart it with the new process IDs");
}

/* Agent: the window ends at @now. The swap puts later samples in the next
 * window: none is lost or counted twice at the edge. */
static void window_edge(struct session *s, __s64 now)
{
	struct sampler_unwind_stats us;
	struct sampler_stats st;

	drain(s, SETTLE_FLUSH);
	check_target_matches(s);
	check_targets_alive(s);
	symbolizer__check_contexts(s->sym);
	sampler__stats(s->smp, &st);
	end_window(s, now - s->wstart, &st, sampler__unwind_stats(s->smp, &us) ? &us : NULL, false);
	s->base = st;
	symbolizer__forget_gone(s->sym);
	capture_python__forget_gone(s->py);
	capture_v8__forget_gone(s->v8);
	capture_jvm__forget_gone(s->jvm);
	capture_php__forget_gone(s->php);
	capture_ruby__forget_gone(s->rb);
	capture_perl__forget_gone();
	symbolizer__refresh_contexts(s->sym);
	if (new_window(s)) {
		s->over = true;
		return;
	}
	s->wunix += now - s->wstart;
	s->wstart = now;
	s->wdeadline += s->window_ns;
	if (s->wdeadline <= now) /* a slow delivery: do not try to catch up */
		s->wdeadline = now + s->window_ns;
	s->next_drain = now + DRAIN_INTERVAL_NS;
}

/* Has process @pid exited: gone, or a zombie its parent has not reaped? */
static bool process_exited(int pid)
{
	char path[64], st[512], *p;
	ssize_t n;

	if (kill(pid, 0) && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = fdio__read_proc(path, st, sizeof(st) - 1);
	if (n <= 0)
		return n == -ENOENT || n == -ESRCH;
	st[n] = '\0';
	p = strrchr(st, ')'); /* the name may hold anything */
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* capture -p: have all the processes it profiles exited? Then it ends, and
 * says so (their samples are kept). Looked at every TARGET_CHECK_NS. */
static bool targets_exited(struct session *s, __s64 now)
{
	const struct target_opts *t = &s->o->target;
	size_t i;

	if (s->o->agent || s->child || !t->npids || t->ncontainers || now < s->next_target_check)
		return false;
	s->next_target_check = now + TARGET_CHECK_NS;
	for (i = 0; i < s->tgt.npids; i++)
		if (!process_exited(s->tgt.pids[i]))
			return false;
	if (s->tgt.npids == 1)
		pr_info("process %d has exited: the capture ends", s->tgt.pids[0]);
	else
		pr_info("the %zu processes given with -p have exited: the capture ends",
			s->tgt.npids);
	return true;
}

static __s64 next_wake(const struct session *s)
{
	__s64 wake = s->deadline < s->next_drain ? s->deadline : s->next_drain;

	if (s->wdeadline < wake)
		wake = s->wdeadline;
	if (s->tty && s->next_progress < wake)
		wake = s->next_progress;
	if (!s->o->agent && !s->child && s->o->target.npids && s->next_target_check < wake)
		wake = s->next_target_check;
	return capture_python__next_wake(s->py, wake);
}

__s64 session__step(struct session *s)
{
	struct sampler_stats st;
	__s64 now;

	if (s->over || stop_requested || (s->child && child__done(s->child)))
		return -1;
	now = now_ns(CLOCK_MONOTONIC);
	if (now >= s->deadline || targets_exited(s, now))
		return -1;
	if (hup_requested) {
		hup_requested = 0;
		if (s->hooks.hup)
			s->hooks.hup(s->hooks.ctx);
	}
	if (s->tty && now >= s->next_progress) {
		sampler__stats(s->smp, &st);
		status__progress(now - s->start, s->o->seconds, st.samples, false);
		s->next_progress = now + PROGRESS_INTERVAL_NS;
	}
	if (s->o->agent && now >= s->wdeadline) {
		window_edge(s, now);
		return s->over ? -1 : now;
	}
	if (capture_python__notices_due(s->py, now)) { /* Python code objects read in time */
		sampler__poll(s->smp, 0, on_new_process, s);
		capture_python__retry(s->py, now);
		s->next_drain = capture_python__next_drain(s->py, now, s->next_drain);
	}
	if (now >= s->next_drain) {
		if (drain(s, SETTLE_LAZY))
			return -1;
		s->next_drain = capture_python__next_drain(s->py, now, now + DRAIN_INTERVAL_NS);
		capture_ruby__retry(s->rb);
		check_target_matches(s);
		symbolizer__check_contexts(s->sym);
	}
	return next_wake(s);
}

void session__wait(struct session *s, __s64 wake)
{
	__s64 now = now_ns(CLOCK_MONOTONIC);
	int n;

	if (wake <= now && wake >= 0)
		return;
	n = sampler__poll(s->smp, (int)((wake - now) / 1000000 + 1), on_new_process, s);
	if (n < 0 && n != -EINTR) {
		pr_err("polling the ring buffer failed: %s", strerror(-n));
		s->over = true;
	} else if (execsplit__settle(&s->ex)) {
		pr_err("reading samples failed");
		s->over = true;
	}
}

/* CMD gets the signal that stopped profcap, unless the terminal sent it to
 * CMD too (Ctrl-C reaches the whole foreground process group): SIGTERM, and
 * SIGINT from a process (kill, a supervisor), as perf record passes its
 * stop on to its workload. */
static void forward_stop(struct session *s)
{
	int sig = stop_signal;

	s->stops_seen = stop_count;
	s->forwarded = true;
	if (sig == SIGTERM || stop_from_process)
		child__signal(s->child, sig);
}

/* While profcap waits for CMD (its output written): a first SIGINT/SIGTERM
 * (the capture ended by --seconds) goes on to CMD as during the capture;
 * one after that ends the wait. */
static bool give_up_cmd(void *ctx)
{
	struct session *s = ctx;

	if (stop_count == s->stops_seen)
		return false;
	if (s->forwarded)
		return true;
	forward_stop(s);
	return false;
}

/* -v: where profcap's own CPU went, by thread, from the sampler's figures
 * @st and @us (NULL: no tables) taken before its threads stopped. */
static void log_cpu_by_thread(const struct session *s, const struct sampler_stats *st,
			      const struct sampler_unwind_stats *us)
{
	capture_python__log(s->py, st, &s->in.c);
	capture_v8__log(s->v8);
	capture_jvm__log(s->jvm);
	capture_php__log(s->php);
	capture_ruby__log(s->rb);
	capture_perl__log();
	pr_debug("CPU by thread: main %.1f ms (new processes %.1f, DWARF lines %.1f, snapshots "
		 "%.1f), notices %.1f ms (snapshots %.1f), table builder %.1f ms (new files %.1f), "
		 "unwinder loader %.1f ms",
		 clock__thread_cpu_ns() / 1e6, s->cpu_procs_ns / 1e6, s->in.cpu_lines_ns / 1e6,
		 st->cpu_snap_main_ns / 1e6, st->cpu_notice_ns / 1e6, st->cpu_snap_ns / 1e6,
		 st->cpu_builder_ns / 1e6, us ? us->tables.parse_cpu_ns / 1e6 : 0.0,
		 st->cpu_loader_ns / 1e6);
	if (st->sideband)
		pr_debug("new processes' mappings: %llu from side-band records, %llu from "
			 "/proc/PID/maps (side-band: %llu records read, %llu lost); %llu processes "
			 "walked without entries of their own; %llu notices and late samples sent "
			 "without a wake-up",
			 (unsigned long long)st->snaps_sideband, (unsigned long long)st->snaps_proc,
			 (unsigned long long)st->sideband_records,
			 (unsigned long long)st->sideband_lost,
			 (unsigned long long)st->walked_alone, (unsigned long long)st->quiet);
}

int session__close(struct session *s)
{
	const struct capture_opts *o = s->o;
	struct sampler_unwind_stats us;
	struct sampler_stats st;
	bool have_us;
	__s64 end, cpu;
	int ret, err;

	sampler__stop(s->smp);
	end = now_ns(CLOCK_MONOTONIC);
	if (!o->agent && end + s->overrun_ns < s->overrun_at)
		s->overrun_at = end + s->overrun_ns; /* ended early, or by CMD */
	cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (s->tty)
		status__progress(0, 0, 0, true);
	if (o->agent && stop_requested)
		pr_info("signal %d: flushing the current window", (int)stop_signal);
	if (s->child && stop_requested)
		forward_stop(s);
	/* Both generations: the active one and anything left in the other. */
	sampler__poll(s->smp, 0, on_new_process, s);
	for (int i = 0; i < 2; i++)
		drain(s, SETTLE_NONE);
	sampler__stats(s->smp, &st);
	have_us = sampler__unwind_stats(s->smp, &us);
	/* Kernel names while profcap's BPF programs are still loaded (a
	 * frame in one is named from kallsyms). Then, every sample read, the
	 * BPF object, its rings and mapped maps, the unwind tables and the
	 * threads go before the DWARF lines are looked up, so that their
	 * memory and the decompressed DWARF (libc's debug file: 6-8 MB) are
	 * not resident at once. */
	ingest__kernel_pass(&s->in);
	memory__finish(s->mem, &s->in, o->quiet);
	sampler__times_stats(s->smp, &s->times);
	sampler__free(s->smp);
	s->smp = NULL;
	s->in.smp = NULL;
	heap__trim(); /* what capturing kept for reuse */
	err = settle(s);
	if (err)
		pr_err("reading samples failed: %s", strerror(-err));
	pr_debug("final drain and symbolization took %.1f ms (CPU %.1f ms of %.1f ms in all)",
		 (now_ns(CLOCK_MONOTONIC) - end) / 1e6,
		 (now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu) / 1e6,
		 now_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e6);
	log_cpu_by_thread(s, &st, have_us ? &us : NULL);
	{
		struct symbolizer_stats ss;

		symbolizer__stats(s->sym, &ss);
		pr_debug("symbolizer: %llu kernel passes, DWARF of %llu files freed %llu times "
			 "(each begins again at its next lookup), kept begun for the next batch "
			 "%llu times; processes described from a "
			 "snapshot just taken %llu, from one of a process gone %llu; mappings "
			 "read again %llu times; mappings from the side-band records %llu times",
			 (unsigned long long)ss.kernel_passes, (unsigned long long)ss.dwarf_files,
			 (unsigned long long)ss.dwarf_releases, (unsigned long long)ss.dwarf_kept,
			 (unsigned long long)ss.snapshots_fresh,
			 (unsigned long long)ss.snapshots_used,
			 (unsigned long long)ss.maps_refreshes,
			 (unsigned long long)ss.maps_from_source);
	}
	if (s->procs_gone)
		pr_debug("%llu processes exited before profcap read their mappings: their frames "
			 "are unnamed",
			 (unsigned long long)s->procs_gone);
	ret = end_window(s, end - s->wstart, &st, have_us ? &us : NULL, true);
	if (s->child)
		child__finish(s->child, o->quiet, give_up_cmd, s);
	return ret;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	child__free(s->child);
	memory__free(s->mem);
	sampler__free(s->smp);
	target__release(&s->tgt);
	env__kv_free(s->env_kv, s->nresource);
	symbolizer__free(s->sym);
	kname__free(s->kname);
	threadctx_files__free(s->tctx_files);
	capture_python__free(s->py);
	capture_v8__free(s->v8);
	capture_jvm__free(s->jvm);
	capture_php__free(s->php);
	capture_ruby__free(s->rb);
	ingest__release(&s->in);
	execsplit__release(&s->ex);
	debuginfod__free(s->dinfod);
	profile__free(s->prof);
	free(s);
}
