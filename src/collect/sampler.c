#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <poll.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/btf.h>

#include "cpu_sampler.h"
#include "offcpu_types.h"
#include "cpu_sampler.skel.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/fdio.h"
#include "util/log.h"
#include "collect/forkhook.h"
#include "collect/kbtf.h"
#include "collect/kver.h"
#include "proc/status.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/threadctx.h"
#include "collect/sampler.h"
#include "collect/unwind_table.h"
#include "collect/offcpu.h"
#include "collect/sideband.h"
#include "proc/mapev.h"
#include "collect/fileidx.h"
#include "collect/late.h"

/* Distinct keys (and stacks) one generation can hold. Sized from the sample
 * rate so that a drain interval's worth of samples always fits. */
#define SAMPLER_MIN_ENTRIES 1024u
#define SAMPLER_MAX_ENTRIES 65536u

/* Time for programs that read the old generation number to finish. A
 * perf_event program runs for microseconds with preemption disabled. */
#define SAMPLER_GEN_SETTLE_NS 2000000L

/* Announced processes waiting for their unwind tables. */
#define SAMPLER_PENDING_MAX 4096u
/* Files late walks asked for, waiting for the builder. */
#define SAMPLER_WANT_MAX 64u
/* A new process the BPF walker serves alone (walks_alone()) is described
 * by the builder this long after its notice if it is still alive: one that
 * lives on gets entries of its own (no VMA lookup or late walk per sample),
 * the short-lived majority is gone by then and costs a kill(pid, 0). */
#define SAMPLER_LATER_NS 1000000000ull
/* Notices wake the main thread only once this many wait: it takes them at
 * its next drain (at most a second away), before the samples they describe.
 * Their snapshots were taken when they came, so waiting loses nothing, and
 * a host starting 50 processes a second does not cost 50 wake-ups (a
 * futex or eventfd wake-up and a context switch each, ~20-40 us of CPU on
 * a VM). */
#define SAMPLER_NOTICE_WAKE 256u

struct sampler_later {
	__u32 tgid;
	__u64 due_ns; /* CLOCK_MONOTONIC */
};

struct sampler_want {
	__u32 tgid;
	__u64 start, dev, ino; /* dev: major << 32 | minor (unwind_table.h) */
};

/* A process's snapshot younger than this when the table builder gets to it
 * stands for its maps file (read again otherwise: it may have mapped more).
 * Where the walker finds unlisted mappings itself (bpf_find_vma(), Linux
 * >= 5.17 with BTF), any snapshot does: a library mapped since is found
 * from its VMA (a read of the maps file per process fewer; the builder is
 * often more than 2 ms behind, queued after the parse of a new binary). */
#define SAMPLER_SNAP_FRESH_NS 2000000ull

/* Exited processes and unused file tables are reclaimed this often. */
#define SAMPLER_GC_NS 5000000000ull
/* Entries a drain takes per bpf() call (room kept free in its arrays). */
#define SAMPLER_BATCH 256u
/* Stack entries dropped per bpf() call: a 16 KiB (kernel and user stacks)
 * or 48 KiB (the rest of deep user stacks) buffer. */
#define SAMPLER_STACK_BATCH 16u
/* Late-walking ring (struct late_sample, 2-19 KiB each; the notice thread
 * drains it as records come). Its pages are mapped into profcap, so they
 * count in its RSS: 1 MiB cost 3 MB. */
#define SAMPLER_LATE_RING (256u << 10)

/* The maps the table builder writes, by fd: the full object's, or with a
 * quick start created by table_maps_create() and shared (-1: none yet). */
struct sampler_tfd {
	int maps, procs, files, file_idx, seen;
	bool vma; /* fill file_idx */
	bool own; /* created here: closed by sampler__free() */
};

/* A new process announced, with its snapshot (NULL: gone when announced). */
struct sampler_notice {
	__u32 tgid;
	struct procsnap *snap;
};

struct sampler {
	struct cpu_sampler *skel;
	int *pfds;
	struct bpf_link **links;
	struct bpf_link *fork_link;	       /* fork following, when asked */
	struct bpf_link *exec_link;	       /* exec: announce the new program */
	struct bpf_link *offcpu[OFFCPU_LINKS]; /* off-CPU programs, when asked */
	__u32 ncpus;			       /* size of pfds/links: highest online CPU + 1 */
	__u32 nonline;
	struct ring_buffer *rb; /* notices (events) */
	/* The notice thread: polls the ring buffers (notices, late samples) so
	 * a new process is snapshotted (proc/procsnap.h) the moment it is
	 * announced, whatever the main thread is doing (a drain, the parse of
	 * a new binary). What the BPF programs send lazily (lazy_start()) does
	 * not wake it: sampler__poll() reads that on the main thread. Notices
	 * then wait in nq for sampler__poll(), which wakes on nfd when
	 * SAMPLER_NOTICE_WAKE of them wait (else the caller's next drain takes
	 * them). Stopped by sampler__stop(); after that the main thread
	 * consumes the rings itself. Under nmu: nq, nq_n, norseq. */
	pthread_t nthread;
	bool nthread_on;
	int nepoll, nquit, nfd;
	pthread_mutex_t nmu;
	/* Held while a thread consumes the rings: the notice thread as records
	 * wake it, the main thread at each sampler__poll() while the BPF
	 * programs send what can wait without a wake-up (lazy). */
	pthread_mutex_t ring_mu;
	__u64 pass_ns; /* under ring_mu: when the current reading of the rings began */
	bool lazy;
	struct sampler_notice *nq;
	__u32 nq_n;
	bool norseq;
	__u64 notices_lost;
	/* CPU in take_snapshot(): the notice thread's, and the main thread's
	 * (for notices sent lazily). Atomic; -v only. */
	__u64 snap_cpu_ns, snap_main_cpu_ns;
	/* The kernel's records of execs, forks, exits and executable mappings
	 * (NULL: not available): a new process's mappings from there, not
	 * from its maps file. Read by the thread that takes the notices. */
	struct sideband *sb;
	struct mapev *mev;
	pthread_mutex_t sb_mu;		    /* sb and mev: the notice thread and the symbolizer's */
	struct procmaps_source maps_src;    /* sampler__process_maps() as a source */
	__u64 snaps_ev, snaps_proc;	    /* snapshots with mappings from each (atomic) */
	__u64 walked_alone; /* new processes the BPF walker serves from its VMAs alone (atomic) */
	struct procsnap_cgroups cgroups;    /* the notice thread's: containers by cgroup */
	__u64 notice_cpu_ns, worker_cpu_ns; /* their CPU when they ended (atomic) */
	__u64 stacks_missing;
	__u64 drains;
	/* table unwinding (issue 4) */
	struct unwind_table *unwind;
	int rows_fd; /* the file table being written (rows_begin .. rows_end) */
	size_t rows_len;
	__u32 unwind_rows;		  /* row store cap */
	__u64 *slot_mem;		  /* kernel memory of each file table */
	__u64 *slot_seen;		  /* when a process walked alone last mapped it (atomic) */
	struct fileidx *fidx;		  /* copy of unwind_file_idx and unwind_files' map ids */
	__u64 rows_mem;			  /* ... all of them */
	__u64 bpf_peak;
	__u64 fixed_mem; /* memlock of skel's maps allocated whole (0: not read yet) */
	/* The table builder thread (from sampler__start() on): processes
	 * announced whose tables are still to build, oldest first; bit 31 of
	 * an entry asks for a rate-limited refresh. Under mu: the queue,
	 * stopped, quit and ut_stats; the unwind table is the worker's. */
	pthread_t worker;
	bool worker_on, stopped, quit, busy;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	__u32 pending[SAMPLER_PENDING_MAX];
	struct procsnap *pend_snap[SAMPLER_PENDING_MAX]; /* its snapshot (a reference) or NULL */
	__u32 pend_head, pend_n;
	/* Files a late walk needs whose tables are not built (lazy tables:
	 * unwind_table__set_lazy()), built before the queue above. */
	struct sampler_want want[SAMPLER_WANT_MAX];
	/* New processes left to the BPF walker alone, oldest first: described
	 * when due if still alive (SAMPLER_LATER_NS). */
	struct sampler_later later[SAMPLER_PENDING_MAX];
	__u32 later_head, later_n;
	__u32 want_n;
	struct unwind_table_stats ut_stats;
	__u32 refreshed[256]; /* tgids asked to refresh lately (main thread) */
	__u64 refreshed_ns;
	bool no_prealloc; /* hash maps allocate on use (Linux >= 6.1) */
	__u64 uips[PROFCAP_MAX_USTACK];
	/* drain scratch */
	struct stack_trace ust, kst;
	__u64 *stack_keys; /* clear_stacks(): the keys and values of one batch */
	void *stack_vals;
	__u32 stack_room, stack_vals_size; /* entries; bytes of a value */
	struct sample_key *keys;
	__u64 *vals;
	__u32 cap;
	struct offcpu_key *okeys;
	struct offcpu_val *ovals;
	__u32 ocap;
	struct sampler_tfd tfd; /* the table maps the builder writes */
	/* thread context (OTEP 4947) */
	bool tctx_warned;
	__u32 tctx_procs; /* entries in threadctx_procs (upper bound) */
	/* Quick start (issue 13, see profcap_quick in the BPF program): the
	 * start-up object samples from sampler__start() on while the loader
	 * thread loads the full one (s->skel) with kernel BTF; it is handed
	 * over in full_wait(). While loader_on, this thread touches neither
	 * s->skel nor the table builder: only s->quick (the sample maps are
	 * the same). */
	bool halted;		   /* sampler__stop() was called */
	bool quick_mode;	   /* s->skel is the start-up object until sampler__start() */
	struct cpu_sampler *quick; /* the start-up object, or NULL */
	int qhandover;		   /* its prog array */
	struct sampler_opts qopts; /* the options, for the loader (no lists) */
	pthread_t loader;
	bool loader_on;	  /* started, not joined yet */
	bool loader_done; /* under lmu */
	int loader_err;	  /* the loader's result, then the hand-over's */
	pthread_mutex_t lmu;
	pthread_cond_t lcv;
	__u64 loader_t0, loader_ns, btf_ns;
	__u64 loader_cpu_ns; /* the loader thread's CPU, once it is done (atomic) */
	/* Late walking (issue 13): samples the BPF walker could not finish,
	 * from the full object's `late` ring (added to rb once it is loaded). */
	struct late *late;
	bool late_on;
	struct ring_buffer *lrb; /* its ring: the notice thread pushes, drains flush */
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || log__level() < LOG_VERBOSE)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Does this process have what sampling needs? 1 yes, 0 no, -1 cannot tell. */
static int have_privileges(void)
{
	const int cap_sys_admin = 21, cap_perfmon = 38, cap_bpf = 39;
	unsigned long long eff = 0;

	if (proc_status__self("CapEff:", 0, 16, &eff))
		return -1;
	if (eff & (1ull << cap_sys_admin))
		return 1;
	return (eff & (1ull << cap_bpf)) && (eff & (1ull << cap_perfmon));
}

int sampler__check_privileges(void)
{
	if (have_privileges())
		return 0; /* or cannot tell: let the load itself fail clearly */
	pr_err("sampling needs CAP_BPF and CAP_PERFMON (or root): run profcap as root, or grant "
	       "them with 'setcap cap_bpf,cap_perfmon+ep profcap' (kernel >= 5.8)");
	return -EPERM;
}

/* Parse a kernel CPU list ("0-3,5,7-8") into @online[0..*n). */
static int parse_cpu_list(const char *str, bool **online, __u32 *n)
{
	unsigned long a, b, max = 0;
	const char *p = str;
	char *end;
	bool *set;

	/* First pass: the highest CPU number. */
	while (*p && *p != '\n') {
		a = strtoul(p, &end, 10);
		if (end == p)
			return -EINVAL;
		b = a;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		if (b < a || b >= 65536)
			return -EINVAL;
		if (b + 1 > max)
			max = b + 1;
		p = *end == ',' ? end + 1 : end;
	}
	if (!max)
		return -EINVAL;
	set = calloc(max, sizeof(*set));
	if (!set)
		return -ENOMEM;
	for (p = str; *p && *p != '\n';) {
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		while (a <= b)
			set[a++] = true;
		p = *end == ',' ? end + 1 : end;
	}
	*online = set;
	*n = (__u32)max;
	return 0;
}

static int online_cpus(bool **online, __u32 *n)
{
	char buf[4096];
	ssize_t len;
	int fd, err;

	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	err = len < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[len] = '\0';
	return parse_cpu_list(buf, online, n);
}

static __u32 clamp_entries(__u64 want)
{
	if (want < SAMPLER_MIN_ENTRIES)
		return SAMPLER_MIN_ENTRIES;
	if (want > SAMPLER_MAX_ENTRIES)
		return SAMPLER_MAX_ENTRIES;
	return (__u32)want;
}

static int perf_open_cpu(int cpu, __u32 hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000000ull / hz,
		.disabled = 1,
	};

	return (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

#define SAMPLER_REFRESH_BIT 0x80000000u

/* A late walk's request for a file's table (late_tables.want): queued for
 * the builder, once per file. */
static void want_file(void *ctx, __u32 tgid, __u64 start, __u64 dev, __u64 ino)
{
	struct sampler *s = ctx;
	__u32 i;

	pthread_mutex_lock(&s->mu);
	for (i = 0; i < s->want_n; i++)
		if (s->want[i].dev == dev && s->want[i].ino == ino)
			break; /* asked already: one build serves every process */
	/* Stopped too: the last drain's late walks wait for these. */
	if (i == s->want_n && s->want_n < SAMPLER_WANT_MAX && !s->quit) {
		s->want[s->want_n++] = (struct sampler_want){tgid, start, dev, ino};
		pthread_cond_signal(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
}

/* Queue @entry for the table builder, with @snap (a new process's snapshot,
 * or NULL), of which the queue takes a reference. */
static void enqueue_snap(struct sampler *s, __u32 entry, struct procsnap *snap)
{
	__u32 at;

	pthread_mutex_lock(&s->mu);
	if (!s->stopped && s->pend_n < SAMPLER_PENDING_MAX) {
		at = (s->pend_head + s->pend_n) % SAMPLER_PENDING_MAX;
		s->pending[at] = entry;
		s->pend_snap[at] = procsnap__get(snap);
		s->pend_n++;
		pthread_cond_signal(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
}

static void enqueue(struct sampler *s, __u32 entry)
{
	enqueue_snap(s, entry, NULL);
}

/* Empty the builder's queue (under mu). */
static void pending_clear(struct sampler *s)
{
	for (; s->pend_n; s->pend_n--) {
		procsnap__free(s->pend_snap[s->pend_head]);
		s->pend_head = (s->pend_head + 1) % SAMPLER_PENDING_MAX;
	}
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* Describe @tgid (left to the BPF walker alone) in SAMPLER_LATER_NS if it
 * still runs then. No wake-up: the builder looks when it wakes, at the
 * latest a second after. A full queue drops its oldest. */
static void later_add(struct sampler *s, __u32 tgid)
{
	__u64 due = mono_ns() + SAMPLER_LATER_NS;

	pthread_mutex_lock(&s->mu);
	if (!s->stopped) {
		if (s->later_n == SAMPLER_PENDING_MAX) {
			s->later_head = (s->later_head + 1) % SAMPLER_PENDING_MAX;
			s->later_n--;
		}
		s->later[(s->later_head + s->later_n) % SAMPLER_PENDING_MAX] =
			(struct sampler_later){.tgid = tgid, .due_ns = due};
		s->later_n++;
	}
	pthread_mutex_unlock(&s->mu);
}

/* The table builder: parses files and writes the maps off the thread that
 * takes notices and drains samples, so a new binary's parse (hundreds of
 * ms on a busy host) delays neither the snapshot of a short-lived process
 * nor a drain. Also the periodic reclaim. */
static void *worker_main(void *arg)
{
	struct sampler *s = arg;
	__u64 last_gc = mono_ns(), now;

	pthread_mutex_lock(&s->mu);
	while (!s->quit) {
		struct procsnap *snap = NULL;
		__u32 entry;

		if (s->want_n) {
			struct sampler_want w = s->want[0];

			memmove(s->want, s->want + 1, --s->want_n * sizeof(*s->want));
			s->busy = true;
			pthread_mutex_unlock(&s->mu);
			unwind_table__add_file(s->unwind, (int)w.tgid, w.start, w.dev, w.ino);
			pthread_mutex_lock(&s->mu);
			s->busy = false;
			unwind_table__stats(s->unwind, &s->ut_stats);
			continue;
		}
		/* Libraries' tables wait for a walk that needs them once late
		 * walking (which asks for them) is on. */
		unwind_table__set_lazy(
			s->unwind, s->tfd.vma && __atomic_load_n(&s->late_on, __ATOMIC_ACQUIRE));
		now = mono_ns();
		if (!s->pend_n && s->later_n && s->later[s->later_head].due_ns <= now) {
			/* as a refresh: described unless gone or described since */
			entry = s->later[s->later_head].tgid | SAMPLER_REFRESH_BIT;
			s->later_head = (s->later_head + 1) % SAMPLER_PENDING_MAX;
			s->later_n--;
		} else if (!s->pend_n) {
			/* Due ones wait for this wake-up (at most a second):
			 * a wake-up per due time would be one per process. */
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&s->cv, &s->mu, &ts);
			if (s->quit || s->pend_n || s->want_n ||
			    mono_ns() - last_gc < SAMPLER_GC_NS)
				continue;
			entry = 0; /* time for the reclaim */
		} else {
			/* Oldest first (one that exited meanwhile costs a
			 * failed open of its maps, nothing more). */
			entry = s->pending[s->pend_head];
			snap = s->pend_snap[s->pend_head];
			s->pend_head = (s->pend_head + 1) % SAMPLER_PENDING_MAX;
			s->pend_n--;
		}
		s->busy = true;
		pthread_mutex_unlock(&s->mu);
		if (entry & SAMPLER_REFRESH_BIT) {
			/* Partial stacks of a process gone by the drain (most,
			 * under churn) ask for entries no sample would use. */
			if (!kill((int)(entry & ~SAMPLER_REFRESH_BIT), 0) || errno != ESRCH)
				unwind_table__refresh(s->unwind,
						      (int)(entry & ~SAMPLER_REFRESH_BIT));
		} else if (entry && snap && snap->maps &&
			   (s->tfd.vma || mono_ns() - snap->at_ns <= SAMPLER_SNAP_FRESH_NS)) {
			/* The notice thread's snapshot when just taken (the
			 * builder was idle): a read of the maps would say the same. */
			unwind_table__add_process_maps(s->unwind, (int)entry, snap->maps,
						       snap->start);
		} else if (entry) {
			unwind_table__add_process(s->unwind, (int)entry);
		}
		procsnap__free(snap);
		if (mono_ns() - last_gc >= SAMPLER_GC_NS) {
			unwind_table__gc(s->unwind, UNWIND_TABLE_FILE_TTL_NS);
			last_gc = mono_ns();
		}
		pthread_mutex_lock(&s->mu);
		s->busy = false;
		unwind_table__stats(s->unwind, &s->ut_stats);
	}
	pthread_mutex_unlock(&s->mu);
	procmaps__thread_done();
	__atomic_store_n(&s->worker_cpu_ns, clock__thread_cpu_ns(), __ATOMIC_RELAXED);
	return NULL;
}

static int on_late(void *ctx, void *data, size_t len)
{
	struct sampler *s = ctx;
	struct late_tables t = {.procs = s->tfd.procs,
				.maps = s->tfd.maps,
				.files = s->tfd.files,
				.file_idx = s->tfd.file_idx,
				.idx = s->fidx,
				.want = want_file,
				.ctx = s};

	late__push(s->late, &t, data, len, s->pass_ns); /* a failure is counted */
	return 0;
}

/* Once the full object is loaded: its late-walking ring joins the notice
 * thread's poll. */
static int late_open(struct sampler *s)
{
	struct epoll_event ev = {.events = EPOLLIN};

	if (!s->skel->rodata->want_late || s->late_on || !s->rb)
		return 0;
	if (!s->late) {
		s->late = late__new("/proc");
		if (s->late && s->sb)
			late__set_maps_source(s->late, &s->maps_src);
	}
	if (!s->late)
		return -ENOMEM;
	s->lrb = ring_buffer__new(bpf_map__fd(s->skel->maps.late), on_late, s, NULL);
	ev.data.ptr = s->lrb;
	if (!s->lrb || (s->nepoll >= 0 &&
			epoll_ctl(s->nepoll, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->lrb), &ev))) {
		pr_warn("late walking is off: cannot poll its ring buffer: %s", strerror(errno));
		return 0;
	}
	__atomic_store_n(&s->late_on, true, __ATOMIC_RELEASE); /* read by the notice thread */
	return 0;
}

/* Let the BPF programs send what can wait for the next sampler__poll()
 * without waking the notice thread (lazy_wake, bpf/cpu_sampler.bpf.c):
 * with the side-band records running, which hold the mappings of a process
 * exec()ed since, and the full object's exec hook, which tells such a
 * process by its start time. PROFCAP_NO_LAZY=1 keeps every wake-up. */
static void lazy_start(struct sampler *s)
{
	const char *env = env__get(env__process(), "PROFCAP_NO_LAZY");

	if (!s->sb || !s->exec_link || !s->skel->rodata->task_start_off ||
	    !s->skel->rodata->task_leader_off || (env && strcmp(env, "0")))
		return;
	s->skel->bss->lazy_wake = 1;
	s->lazy = true;
}

/* Side-band records lost: a process exec()ed since may be missing from
 * them, and its notice must be read at once again. The main thread goes
 * on taking the rings at each poll (a record sent lazily as the flag
 * changed would otherwise wait for the ring to fill). */
static void lazy_check(struct sampler *s)
{
	struct sideband_stats st;

	if (!s->lazy || !s->skel || !s->skel->bss->lazy_wake)
		return;
	sideband__stats(s->sb, &st);
	if (!st.lost)
		return;
	s->skel->bss->lazy_wake = 0;
	pr_debug("side-band records lost: every notice wakes the notice thread again");
}

/* A new process (its snapshot, or NULL when already gone) for the next
 * sampler__poll(). */
static void notice(struct sampler *s, __u32 tgid, struct procsnap *snap)
{
	const __u64 one = 1;
	bool kept = false, wake;

	pthread_mutex_lock(&s->nmu);
	if (s->nq_n < SAMPLER_PENDING_MAX) {
		s->nq[s->nq_n++] = (struct sampler_notice){.tgid = tgid, .snap = snap};
		kept = true;
	} else {
		s->notices_lost++;
	}
	wake = !tgid || s->nq_n >= SAMPLER_NOTICE_WAKE;
	pthread_mutex_unlock(&s->nmu);
	if (!kept)
		procsnap__free(snap);
	if (wake && write(s->nfd, &one, sizeof(one)) < 0) {
		/* the counter is full: the main thread has a wake-up pending */
	}
}

/* The snapshot of the process of notice @e (@len bytes): its mappings,
 * name and program from the side-band records when they know it
 * (exec()ed while profcap runs), else from /proc; its command line from
 * the notice when it carries it. */
static int take_snapshot(struct sampler *s, const struct proc_event *e, size_t len,
			 struct procsnap **out)
{
	static __thread struct mapev_desc d; /* 4 KiB: not on the stack */
	struct procsnap_given g = {0};

	if (e->cmdline_len && e->cmdline_len <= len - sizeof(*e)) {
		g.cmdline = (const char *)(e + 1);
		g.cmdline_len = e->cmdline_len;
	}
	if (s->sb) {
		pthread_mutex_lock(&s->sb_mu);
		sideband__drain(s->sb, s->mev, clock__mono_ns());
		if (!mapev__maps(s->mev, e->tgid, &g.maps, &d)) {
			g.comm = d.comm;
			g.exe = d.exe;
		}
		pthread_mutex_unlock(&s->sb_mu);
	}
	__atomic_fetch_add(g.maps ? &s->snaps_ev : &s->snaps_proc, 1, __ATOMIC_RELAXED);
	return procsnap__read_given("/proc", (int)e->tgid, e->cgroup, e->css, &s->cgroups, &g, out);
}

/* Can the BPF walker unwind new process @snap without entries of its own
 * (bpf_find_vma() and late walking on, its program's table built)? Then
 * the table builder has nothing to do for it now: the walker finds its
 * mappings from the kernel's VMAs, and a late walk asks for a library's
 * table. Most such processes (a compiler's) are gone within a second; one
 * still running then is described (later_add()). Marks the program's table
 * seen now, which keeps it from the reclaim of unused tables. */
static bool walks_alone(struct sampler *s, const struct procsnap *snap)
{
	const struct procmaps_entry *e = NULL;
	struct unwind_file_key k;
	struct unwind_file f;
	size_t i, n;

	if (!s->tfd.vma || !s->fidx || !snap || !snap->maps || !s->slot_seen ||
	    !__atomic_load_n(&s->late_on, __ATOMIC_ACQUIRE))
		return false;
	n = procmaps__count(snap->maps);
	for (i = 0; i < n && !e; i++) {
		e = procmaps__entry(snap->maps, i);
		if (!(e->perms & PROCMAPS_EXEC))
			e = NULL;
	}
	if (!e || e->anonymous || e->path[0] != '/' || !e->inode)
		return false;
	k = (struct unwind_file_key){.dev = UNWIND_KDEV((__u64)e->dev_major << 32 | e->dev_minor),
				     .ino = e->inode};
	if (fileidx__find(s->fidx, &k, &f) || f.slot >= SAMPLER_UNWIND_FILES || !f.nrows)
		return false;
	__atomic_store_n(&s->slot_seen[f.slot], mono_ns(), __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->walked_alone, 1, __ATOMIC_RELAXED);
	return true;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct sampler *s = ctx;
	const struct proc_event *e = data;
	struct procsnap *snap = NULL;
	__u64 cpu;
	bool timed;
	int err;

	if (len < sizeof(*e))
		return 0;
	if (e->pad == PROFCAP_EVENT_NORSEQ) {
		/* sys_exit is attached by the main thread (it owns the links) */
		pthread_mutex_lock(&s->nmu);
		s->norseq = true;
		pthread_mutex_unlock(&s->nmu);
		notice(s, 0, NULL);
		return 0;
	}
	/* Its snapshot now, while a short-lived process is still there; the
	 * caller describes it from there (or from /proc, when still alive)
	 * in sampler__poll(), and its tables are built by the builder. */
	/* timed for -v only: a thread CPU clock is a system call */
	timed = log__level() >= LOG_VERBOSE;
	cpu = timed ? clock__thread_cpu_ns() : 0;
	err = take_snapshot(s, e, len, &snap);
	if (timed)
		__atomic_fetch_add(s->nthread_on && pthread_equal(pthread_self(), s->nthread)
					   ? &s->snap_cpu_ns
					   : &s->snap_main_cpu_ns,
				   clock__thread_cpu_ns() - cpu, __ATOMIC_RELAXED);
	if (err)
		snap = NULL;
	else
		snap->start = e->start; /* before another thread sees it */
	if (snap && __atomic_load_n(&s->late_on, __ATOMIC_ACQUIRE))
		/* its first samples' late walks need these maps too */
		late__offer_maps(s->late, e->tgid, snap->comm, snap->maps, snap->at_ns);
	/* Queued until the builder starts, when it has not yet. */
	if (s->unwind && walks_alone(s, snap))
		later_add(s, e->tgid);
	else if (s->unwind)
		enqueue_snap(s, e->tgid, snap);
	notice(s, e->tgid, snap);
	return 0;
}

/* Read the notices' ring, then with @late the late samples' (new processes
 * before late walks: a process's first sample sends both, and its snapshot
 * serves both), on whichever thread calls: the notice thread when a record
 * woke it, the main thread at its polls. */
static void read_rings(struct sampler *s, bool late)
{
	pthread_mutex_lock(&s->ring_mu);
	s->pass_ns = mono_ns();
	ring_buffer__consume(s->rb);
	if (late)
		ring_buffer__consume(s->lrb);
	pthread_mutex_unlock(&s->ring_mu);
}

static void *notice_main(void *arg)
{
	struct sampler *s = arg;
	struct epoll_event evs[4];
	int n, i;

	for (;;) {
		n = epoll_wait(s->nepoll, evs, 4, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (i = 0; i < n; i++) {
			if (!evs[i].data.ptr)
				goto out; /* nquit */
			if (evs[i].data.ptr == s->sb) { /* a side-band ring half full */
				pthread_mutex_lock(&s->sb_mu);
				sideband__drain(s->sb, s->mev, clock__mono_ns());
				pthread_mutex_unlock(&s->sb_mu);
				continue;
			}
			read_rings(s, evs[i].data.ptr == s->lrb);
		}
	}
out:
	procmaps__thread_done();
	__atomic_store_n(&s->notice_cpu_ns, clock__thread_cpu_ns(), __ATOMIC_RELAXED);
	return NULL;
}

/* The notice thread, with every signal blocked (they go to the main
 * thread, whose poll they interrupt). 0 or -errno (logged). */
static int notice_start(struct sampler *s)
{
	struct epoll_event ev = {.events = EPOLLIN};
	sigset_t all, old;
	int err;

	s->nepoll = epoll_create1(EPOLL_CLOEXEC);
	s->nquit = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->nfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->nq = calloc(SAMPLER_PENDING_MAX, sizeof(*s->nq));
	if (s->nepoll < 0 || s->nquit < 0 || s->nfd < 0 || !s->nq)
		goto fail;
	ev.data.ptr = NULL;
	if (epoll_ctl(s->nepoll, EPOLL_CTL_ADD, s->nquit, &ev))
		goto fail;
	ev.data.ptr = s->rb;
	if (epoll_ctl(s->nepoll, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->rb), &ev))
		goto fail;
	ev.data.ptr = s->sb;
	for (__u32 i = 0; s->sb && i < sideband__count(s->sb); i++)
		if (sideband__fd(s->sb, i) >= 0 &&
		    epoll_ctl(s->nepoll, EPOLL_CTL_ADD, sideband__fd(s->sb, i), &ev))
			goto fail;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&s->nthread, NULL, notice_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		errno = err;
		goto fail;
	}
	s->nthread_on = true;
	return 0;
fail:
	err = -errno;
	pr_err("cannot start the notice thread: %s", strerror(errno));
	return err ? err : -ENOMEM;
}

/* Stop the notice thread: from here on the main thread consumes the rings. */
static void notice_stop(struct sampler *s)
{
	const __u64 one = 1;

	if (!s->nthread_on)
		return;
	if (write(s->nquit, &one, sizeof(one)) == sizeof(one))
		pthread_join(s->nthread, NULL);
	s->nthread_on = false;
}

/* The initial PID namespace's inode number (PROC_PID_INIT_INO). */
#define PID_NS_INIT_INO 0xEFFFFFFCull

static int own_pid_ns(__u64 *dev, __u64 *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st))
		return -errno;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

static int fill_filter(struct bpf_map *map, const void *key, __u32 key_size, const char *what)
{
	__u8 one = 1;
	int err;

	err = bpf_map__update_elem(map, key, key_size, &one, sizeof(one), BPF_ANY);
	if (err)
		pr_err("cannot set the %s filter: %s", what, strerror(-err));
	return err;
}

static int set_filters(struct sampler *s, const struct sampler_opts *o)
{
	struct comm_key ck;
	size_t i;
	int err = 0;

	for (i = 0; i < o->npids && !err; i++) {
		__u32 pid = (__u32)o->pids[i];

		err = fill_filter(s->skel->maps.pids, &pid, sizeof(pid), "PID");
	}
	for (i = 0; i < o->ntids && !err; i++) {
		__u32 tid = (__u32)o->tids[i];

		err = fill_filter(s->skel->maps.tids, &tid, sizeof(tid), "thread");
	}
	for (i = 0; i < o->ncomms && !err; i++) {
		memset(&ck, 0, sizeof(ck));
		strncpy((char *)ck.w, o->comms[i], PROFCAP_COMM_LEN - 1);
		err = fill_filter(s->skel->maps.comms, &ck, sizeof(ck), "command name");
	}
	for (i = 0; i < o->ncgroups && !err; i++) {
		__u32 k = (__u32)i, fd = (__u32)o->cgroup_fds[i];

		err = bpf_map__update_elem(s->skel->maps.cgroups, &k, sizeof(k), &fd, sizeof(fd),
					   BPF_ANY);
		if (err)
			pr_err("cannot set the cgroup filter: %s (needs a cgroup v2 directory)",
			       strerror(-err));
	}
	return err;
}

static void explain_load_error(int err)
{
	bool privileged = have_privileges() == 1;

	if (err == -EACCES && privileged) /* the verifier's "invalid access" */
		pr_err("the kernel's BPF verifier rejected profcap's program (%s): this kernel "
		       "lacks something it needs; rerun with -v for the verifier log and report it "
		       "with the kernel version (uname -r)",
		       strerror(-err));
	else if (err == -EPERM && privileged)
		pr_err("the kernel refused to load the BPF program (%s) although profcap has "
		       "CAP_BPF/CAP_SYS_ADMIN: kernel lockdown or a security policy (SELinux, "
		       "AppArmor, BPF LSM) forbids it; rerun with -v for the details",
		       strerror(-err));
	else if (err == -EPERM || err == -EACCES)
		pr_err("the kernel refused to load the BPF program (%s): run as root or grant "
		       "CAP_BPF + CAP_PERFMON; check kernel.unprivileged_bpf_disabled and any LSM "
		       "policy",
		       strerror(-err));
	else if (err == -EINVAL || err == -E2BIG || err == -ENOTSUP || err == -EOPNOTSUPP)
		pr_err("the kernel rejected the BPF program (%s): profcap needs Linux >= 5.8 with "
		       "CONFIG_BPF_SYSCALL and BPF ring buffers; rerun with -v for the verifier "
		       "log",
		       strerror(-err));
	else
		pr_err("loading the BPF program failed: %s; rerun with -v for details",
		       strerror(-err));
}

/* ---- table unwinding (issue 4) ---------------------------------------------------- */

/* A process's mapping entries in one bpf() call (BPF_MAP_UPDATE_BATCH:
 * Linux >= 5.6, below the 5.8 profcap needs). */
static int unwind_set_maps(void *ctx, const struct unwind_map_key *k, const struct unwind_map *m,
			   __u32 n)
{
	struct sampler *s = ctx;

	return bpf_map_update_batch(s->tfd.maps, k, m, &n, NULL);
}

static int unwind_set_proc(void *ctx, __u32 tgid, __u32 nmaps)
{
	struct sampler *s = ctx;

	return bpf_map_update_elem(s->tfd.procs, &tgid, &nmaps, BPF_ANY) ? -errno : 0;
}

/* An exited process's mapping entries: one bpf() call (BPF_MAP_DELETE_BATCH
 * stops at the first key it cannot delete: the rest one by one). */
static int unwind_del_maps(void *ctx, const struct unwind_map_key *k, __u32 n)
{
	struct sampler *s = ctx;
	__u32 done = n, i;
	int err = 0;

	if (!bpf_map_delete_batch(s->tfd.maps, k, &done, NULL) || done >= n)
		return 0;
	for (i = done; i < n; i++)
		if (bpf_map_delete_elem(s->tfd.maps, &k[i]) && errno != ENOENT)
			err = -errno;
	return err;
}

static int unwind_del_proc(void *ctx, __u32 tgid)
{
	struct sampler *s = ctx;

	/* Its next sample (a reused PID's first) announces it again. */
	bpf_map_delete_elem(s->tfd.seen, &tgid);
	return bpf_map_delete_elem(s->tfd.procs, &tgid) ? -errno : 0;
}

static int unwind_set_file(void *ctx, __u32 slot, __u64 dev, __u64 ino, const __u64 (*seg)[3],
			   unsigned int nseg, __u32 nrows)
{
	struct sampler *s = ctx;
	struct unwind_file f = {.slot = slot, .nrows = nrows};
	struct unwind_file_key k = {.dev = UNWIND_KDEV(dev), .ino = ino};
	unsigned int i;

	if (!s->tfd.vma || slot >= SAMPLER_UNWIND_FILES)
		return 0;
	for (i = 0; i < nseg && i < UNWIND_FILE_SEGS; i++)
		memcpy(f.seg[i], seg[i], sizeof(f.seg[i]));
	f.nseg = i;
	if (bpf_map_update_elem(s->tfd.file_idx, &k, &f, BPF_ANY))
		return -errno;
	fileidx__set(s->fidx, &k, &f); /* slot checked above */
	return 0;
}

static __u64 unwind_seen_ns(void *ctx, __u32 slot)
{
	struct sampler *s = ctx;

	return slot < SAMPLER_UNWIND_FILES ? __atomic_load_n(&s->slot_seen[slot], __ATOMIC_RELAXED)
					   : 0;
}

/* Let the BPF walker find mappings from the kernel's VMAs (Linux >= 5.17
 * with BTF): the offsets of the fields it reads. Off when any is missing. */
static void unwind_vma_configure(struct sampler *s, const struct btf *btf)
{
	struct cpu_sampler__rodata *r = s->skel->rodata;

	if (!kver__at_least(5, 17) || !btf)
		return;
	if (!kbtf__member_off(btf, "vm_area_struct", "vm_start", (__u32 *)&r->vma_start_off) &&
	    !kbtf__member_off(btf, "vm_area_struct", "vm_end", (__u32 *)&r->vma_end_off) &&
	    !kbtf__member_off(btf, "vm_area_struct", "vm_pgoff", (__u32 *)&r->vma_pgoff_off) &&
	    !kbtf__member_off(btf, "vm_area_struct", "vm_file", (__u32 *)&r->vma_file_off) &&
	    !kbtf__member_off(btf, "file", "f_inode", (__u32 *)&r->file_inode_off) &&
	    !kbtf__member_off(btf, "inode", "i_ino", (__u32 *)&r->inode_ino_off) &&
	    !kbtf__member_off(btf, "inode", "i_sb", (__u32 *)&r->inode_sb_off) &&
	    !kbtf__member_off(btf, "super_block", "s_dev", (__u32 *)&r->sb_dev_off))
		r->unwind_vma = 1;
	/* The VMAs found, kept per process: see bpf/unwind_bpf.h. */
	if (r->unwind_vma && !kbtf__member_off(btf, "task_struct", "mm", (__u32 *)&r->task_mm_off))
		bpf_map__set_max_entries(s->skel->maps.unwind_vcache, SAMPLER_VCACHE_PROCS);
	/* ... and programs' text mappings, found at their exec */
	if (r->task_mm_off &&
	    !kbtf__member_off(btf, "mm_struct", "start_code", (__u32 *)&r->mm_start_code_off))
		bpf_map__set_max_entries(s->skel->maps.unwind_exec_map, SAMPLER_VCACHE_PROCS);
	/* Walks that need a mapping the VMA lookup could not give finish in
	 * user space (collect/late.h). */
	if (r->unwind_vma && !env__get(env__process(), "PROFCAP_NO_LATE")) {
		r->want_late = 1;
		bpf_map__set_max_entries(s->skel->maps.late, SAMPLER_LATE_RING);
	}
}

/* Kernel memory charged for BPF map @fd (memlock in its fdinfo), 0 if unknown. */
static __u64 fd_memlock(int fd)
{
	char path[64], text[1024], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	n = fdio__read_proc(path, text, sizeof(text) - 1);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	for (p = text; p; p = strchr(p, '\n')) {
		p += *p == '\n';
		if (!strncmp(p, "memlock:", 8))
			return strtoull(p + 8, NULL, 10);
	}
	return 0;
}

/* Kernel memory of all our maps: the skeleton's and the file tables. A map
 * allocated whole at its creation keeps its memlock: with @fixed (a cache
 * of their sum, 0 = not read yet) those are read once, and at every call
 * only the maps allocated as used (BPF_F_NO_PREALLOC: hashes, task
 * storage). A fdinfo read per map at every drain was ~300 file reads in a
 * 5 s capture. */
static __u64 bpf_memory(const struct sampler *s, const struct cpu_sampler *skel, __u64 *fixed)
{
	const struct bpf_map *m;
	__u64 sum = __atomic_load_n(&s->rows_mem, __ATOMIC_RELAXED), whole = 0;
	bool cached = fixed && *fixed;

	bpf_object__for_each_map(m, skel->obj)
	{
		int fd = bpf_map__fd(m);

		if (fd < 0)
			continue;
		if (bpf_map__map_flags(m) & BPF_F_NO_PREALLOC)
			sum += fd_memlock(fd);
		else if (!cached)
			whole += fd_memlock(fd);
	}
	if (cached)
		return sum + *fixed;
	if (fixed)
		*fixed = whole;
	return sum + whole;
}

/* A file table: an array map sized to its rows, mapped here only while it
 * is written, then put in its slot of unwind_files. */
static __u64 *unwind_rows_begin(void *ctx, __u32 slot, __u32 n)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	struct sampler *s = ctx;
	long page = sysconf(_SC_PAGESIZE);
	void *mem;

	(void)slot;
	s->rows_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", sizeof(__u32), sizeof(__u64),
				    n, &opts);
	if (s->rows_fd < 0)
		return NULL;
	s->rows_len = ((size_t)n * sizeof(__u64) + (size_t)page - 1) & ~((size_t)page - 1);
	mem = mmap(NULL, s->rows_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->rows_fd, 0);
	if (mem == MAP_FAILED) {
		close(s->rows_fd);
		s->rows_fd = -1;
		return NULL;
	}
	return mem;
}

static int unwind_rows_end(void *ctx, __u32 slot, __u64 *rows, __u32 n, bool ok)
{
	struct sampler *s = ctx;
	int err = 0;

	(void)n;
	munmap(rows, s->rows_len);
	if (ok && bpf_map_update_elem(s->tfd.files, &slot, &s->rows_fd, BPF_ANY))
		err = -errno;
	if (ok && !err && slot < SAMPLER_UNWIND_FILES) {
		struct bpf_map_info info = {0};
		__u32 len = sizeof(info);

		s->rows_mem -= s->slot_mem[slot];
		s->slot_mem[slot] = fd_memlock(s->rows_fd);
		s->rows_mem += s->slot_mem[slot];
		/* Late walks map the table by this id: 0 (unknown) makes
		 * them treat the slot as empty, as a failed lookup did. */
		fileidx__set_id(s->fidx, slot,
				bpf_obj_get_info_by_fd(s->rows_fd, &info, &len) ? 0 : info.id);
	}
	close(s->rows_fd); /* unwind_files holds the map now */
	s->rows_fd = -1;
	return err;
}

static int unwind_rows_del(void *ctx, __u32 slot)
{
	struct sampler *s = ctx;
	struct unwind_file_key k;

	if (slot < SAMPLER_UNWIND_FILES) {
		s->rows_mem -= s->slot_mem[slot];
		s->slot_mem[slot] = 0;
		/* the file its table was found by, in both indexes */
		if (!fileidx__drop(s->fidx, slot, &k))
			bpf_map_delete_elem(s->tfd.file_idx, &k);
	}
	return bpf_map_delete_elem(s->tfd.files, &slot) ? -errno : 0;
}

/* After load: the table maps the builder writes, by fd (with a quick start
 * the start-up object's, which the full object shares: the builder runs
 * while the full object loads). */
static void table_fds(struct sampler *s)
{
	s->tfd.seen = bpf_map__fd(s->skel->maps.seen);
	s->tfd.vma = s->quick_mode ? kver__at_least(5, 17) && !access(KBTF_VMLINUX, R_OK)
				   : s->skel->rodata->unwind_vma;
	if (s->quick_mode) { /* made once sampling runs: table_maps_create() */
		s->tfd.maps = s->tfd.procs = s->tfd.files = s->tfd.file_idx = -1;
		s->tfd.own = true;
		return;
	}
	s->tfd.maps = bpf_map__fd(s->skel->maps.unwind_maps);
	s->tfd.procs = bpf_map__fd(s->skel->maps.unwind_procs);
	s->tfd.files = bpf_map__fd(s->skel->maps.unwind_files);
	s->tfd.file_idx = bpf_map__fd(s->skel->maps.unwind_file_idx);
}

static void no_prealloc(struct bpf_map *m)
{
	bpf_map__set_map_flags(m, bpf_map__map_flags(m) | BPF_F_NO_PREALLOC);
}

/* Before load: size the unwinder's maps and switch it on. Its hash maps
 * take memory as entries are added where the kernel lets perf_event
 * programs use them so (Linux >= 6.1; the program only writes the deep-stack
 * tails, rarely); before, they are preallocated, the deep-stack maps sized
 * from the sample rate (@entries: distinct stacks of one drain interval). */
static void unwind_configure(struct sampler *s, const struct sampler_opts *o, __u32 entries,
			     const struct btf *btf)
{
	__u32 rows = o->unwind_rows ? o->unwind_rows : SAMPLER_UNWIND_ROWS;
	/* benchmarks: store pressure */
	const char *env = env__get(env__process(), "PROFCAP_UNWIND_ROWS");

	if (!o->unwind_rows && env && strtoul(env, NULL, 10) > 0 &&
	    strtoul(env, NULL, 10) < SAMPLER_UNWIND_ROWS)
		rows = (__u32)strtoul(env, NULL, 10);
	__u32 ext = s->no_prealloc ? SAMPLER_USTACK_EXT_MAX : entries / 4;

	if (!o->unwind || !o->user)
		return;
	s->skel->rodata->want_unwind = 1;
	/* Kernel-mode samples need the task's user registers: kernel BTF and
	 * bpf_task_pt_regs() (Linux >= 5.15); without, they use frame pointers
	 * and are flagged partial. */
	s->skel->rodata->unwind_task_regs =
		!access("/sys/kernel/btf/vmlinux", R_OK) && kver__at_least(5, 15);
	s->unwind_rows = rows;
	unwind_vma_configure(s, btf);
	/* A new process's start time with its notice (bpf/cpu_sampler.bpf.c). */
	if (btf && kbtf__member_off(btf, "task_struct", "group_leader",
				    (__u32 *)&s->skel->rodata->task_leader_off))
		s->skel->rodata->task_leader_off = 0;
	if (btf && kbtf__member_off(btf, "task_struct", "start_boottime",
				    (__u32 *)&s->skel->rodata->task_start_off))
		s->skel->rodata->task_start_off = 0;
	if (btf && kbtf__member_off(btf, "task_struct", "cgroups",
				    (__u32 *)&s->skel->rodata->task_cgroups_off))
		s->skel->rodata->task_cgroups_off = 0;
	/* ... and its command line (with task_struct.mm, set with the VMA cache). */
	if (btf && s->skel->rodata->task_mm_off &&
	    (kbtf__member_off(btf, "mm_struct", "arg_start",
			      (__u32 *)&s->skel->rodata->mm_arg_start_off) ||
	     kbtf__member_off(btf, "mm_struct", "arg_end",
			      (__u32 *)&s->skel->rodata->mm_arg_end_off)))
		s->skel->rodata->mm_arg_start_off = s->skel->rodata->mm_arg_end_off = 0;
	bpf_map__set_max_entries(s->skel->maps.unwind_file_idx, SAMPLER_UNWIND_FILES);
	bpf_map__set_max_entries(s->skel->maps.unwind_files, SAMPLER_UNWIND_FILES);
	bpf_map__set_max_entries(s->skel->maps.unwind_maps, SAMPLER_UNWIND_MAPS);
	bpf_map__set_max_entries(s->skel->maps.unwind_procs, UNWIND_TABLE_MAX_PROCS);
	bpf_map__set_max_entries(s->skel->maps.ustack_ext0, ext);
	bpf_map__set_max_entries(s->skel->maps.ustack_ext1, ext);
	if (s->no_prealloc) {
		no_prealloc(s->skel->maps.unwind_maps);
		no_prealloc(s->skel->maps.unwind_file_idx);
		no_prealloc(s->skel->maps.unwind_procs);
		no_prealloc(s->skel->maps.ustack_ext0);
		no_prealloc(s->skel->maps.ustack_ext1);
	}
}

/* After load: create the table builder (file tables are added as found). */
static int unwind_open(struct sampler *s)
{
	struct unwind_table_sink sink = {
		.set_maps = unwind_set_maps,
		.set_proc = unwind_set_proc,
		.del_maps = unwind_del_maps,
		.del_proc = unwind_del_proc,
		.ctx = s,
	};

	if (!s->skel->rodata->want_unwind)
		return 0;
	sink.max_rows = s->unwind_rows;
	sink.max_files = SAMPLER_UNWIND_FILES;
	sink.max_maps = SAMPLER_UNWIND_MAPS;
	sink.rows_begin = unwind_rows_begin;
	sink.rows_end = unwind_rows_end;
	sink.rows_del = unwind_rows_del;
	sink.set_file = unwind_set_file;
	sink.seen_ns = unwind_seen_ns;
	s->slot_mem = calloc(SAMPLER_UNWIND_FILES, sizeof(*s->slot_mem));
	s->slot_seen = calloc(SAMPLER_UNWIND_FILES, sizeof(*s->slot_seen));
	s->fidx = fileidx__new(SAMPLER_UNWIND_FILES);
	s->unwind =
		s->slot_mem && s->slot_seen && s->fidx ? unwind_table__new(&sink, "/proc") : NULL;
	if (s->unwind && s->sb)
		unwind_table__set_maps_source(s->unwind, &s->maps_src);
	if (!s->unwind)
		return -ENOMEM;
	return 0;
}

_Static_assert(SAMPLER_MAX_KSTACK == PROFCAP_MAX_STACK, "kernel stack depth");
_Static_assert(SAMPLER_MAX_USTACK == PROFCAP_MAX_USTACK, "user stack depth");
_Static_assert(SAMPLER_TCTX_ATTRS == PROFCAP_TCTX_ATTRS, "thread-context attrs bytes");
_Static_assert(SAMPLER_REC_USTACK_ERR == PROFCAP_F_USTACK_ERR &&
		       SAMPLER_REC_USTACK_TRUNC == PROFCAP_F_USTACK_TRUNC &&
		       SAMPLER_REC_KSTACK_TRUNC == PROFCAP_F_KSTACK_TRUNC &&
		       SAMPLER_REC_USTACK_PARTIAL == PROFCAP_F_USTACK_PARTIAL,
	       "record flags are the BPF program's");

static int full_wait(struct sampler *s, int timeout_ms);

int sampler__add_process(struct sampler *s, int pid)
{
	if (!s->unwind)
		return 0;
	if (!s->worker_on)
		return unwind_table__add_process(s->unwind, pid);
	enqueue(s, (__u32)pid);
	return 0;
}

int sampler__refresh_process(struct sampler *s, int pid)
{
	__u32 *last;
	__u64 now;

	if (!s->unwind)
		return 0;
	if (!s->worker_on)
		return unwind_table__refresh(s->unwind, pid);
	/* One request per process and second is plenty (the builder rate-
	 * limits too): partial records come by the thousand. */
	now = mono_ns();
	if (now - s->refreshed_ns > UNWIND_TABLE_REFRESH_NS) {
		memset(s->refreshed, 0, sizeof(s->refreshed));
		s->refreshed_ns = now;
	}
	last = &s->refreshed[(__u32)pid % 256];
	if (*last == (__u32)pid)
		return 0;
	*last = (__u32)pid;
	enqueue(s, (__u32)pid | SAMPLER_REFRESH_BIT);
	return 0;
}

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

bool sampler__unwind_stats(const struct sampler *s, struct sampler_unwind_stats *st)
{
	int ncpu = libbpf_num_possible_cpus(), fd;
	__u64 out[USTAT__COUNT] = {0};
	__u64 *vals;
	__u32 k;

	memset(st, 0, sizeof(*st));
	if (!s->unwind || s->loader_on)
		return false;
	if (s->worker_on) {
		pthread_mutex_lock((pthread_mutex_t *)&s->mu);
		st->tables = s->ut_stats;
		pthread_mutex_unlock((pthread_mutex_t *)&s->mu);
	} else {
		unwind_table__stats(s->unwind, &st->tables);
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

/* The frames of a deep user stack past PROFCAP_MAX_STACK, from @ext. */
static __u32 unwind_join(struct sampler *s, int ext_fd, __u64 hash, __u64 nr, __u32 *flags)
{
	__u32 n = PROFCAP_MAX_STACK;

	memcpy(s->uips, s->ust.ips, sizeof(s->ust.ips));
	if (nr > PROFCAP_MAX_USTACK)
		nr = PROFCAP_MAX_USTACK;
	if (nr > PROFCAP_MAX_STACK && ext_fd >= 0 &&
	    !bpf_map_lookup_elem(ext_fd, &hash, &s->uips[PROFCAP_MAX_STACK]))
		n = (__u32)nr;
	else if (nr > PROFCAP_MAX_STACK)
		*flags |= PROFCAP_F_USTACK_PARTIAL; /* tail not stored */
	return n;
}

static struct bpf_program *fork_prog(struct cpu_sampler *skel, enum forkhook_kind kind)
{
	switch (kind) {
	case FORKHOOK_TP_BTF:
		return skel->progs.profcap_fork_btf;
	case FORKHOOK_RAW_TP:
		return skel->progs.profcap_fork_raw;
	default:
		return skel->progs.profcap_fork_tp;
	}
}

/* After load: the exec hook and the ring buffer (the fork hook is attached
 * by load_following()). 0, or -errno after logging why. */
static int attach_events(struct sampler *s)
{
	int err;

	/* Without it (a kernel lacking the tracepoint), a process that
	 * exec()s keeps the tables of its first program until a refresh. */
	s->exec_link = bpf_program__attach(s->skel->progs.profcap_exec);
	if (!s->exec_link)
		pr_debug("exec tracepoint not attached: %s", strerror(errno));
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_event, s, NULL);
	if (!s->rb) {
		err = -errno;
		pr_err("cannot open the BPF ring buffer: %s (needs Linux >= 5.8)", strerror(-err));
		return err;
	}
	return 0;
}

/* One cpu-clock perf event per online CPU (@online, s->ncpus entries). 0,
 * or -errno after logging why, with a hint for each usual cause. */
static int open_perf_events(struct sampler *s, const bool *online, __u32 freq_hz)
{
	__u32 i;
	int err;

	for (i = 0; i < s->ncpus; i++) {
		if (!online[i])
			continue;
		s->pfds[i] = perf_open_cpu((int)i, freq_hz);
		if (s->pfds[i] >= 0)
			continue;
		err = -errno;
		if (err == -EACCES || err == -EPERM)
			pr_err("perf events are not permitted (%s): run as root or grant "
			       "CAP_PERFMON, or lower kernel.perf_event_paranoid "
			       "(sysctl -w kernel.perf_event_paranoid=-1)",
			       strerror(-err));
		else if (err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP)
			pr_err("the cpu-clock perf event is unavailable on CPU %u (%s): the "
			       "kernel needs CONFIG_PERF_EVENTS",
			       i, strerror(-err));
		else if (err == -EMFILE)
			pr_err("out of file descriptors opening perf events for %u CPUs: "
			       "raise the limit with 'ulimit -n'",
			       s->ncpus);
		else
			pr_err("perf_event_open on CPU %u failed: %s", i, strerror(-err));
		return err;
	}
	return 0;
}

/* Open, configure and load the BPF object, with fork hook @fh (NULL: no
 * fork following). On failure the skeleton is gone again; logs nothing. */
/* Thread context: on where kernel BTF can give the thread pointer's place
 * (looked up on first use, sampler__set_thread_ctx()); then each sample of
 * a process without an entry costs one map lookup. */
/* Thread context needs user stacks and task_struct.thread.fsbase (x86_64:
 * the user thread pointer as saved for the task) from kernel BTF @btf. */
static void threadctx_configure(struct sampler *s, const struct sampler_opts *o,
				const struct btf *btf)
{
	/* benchmarks: the baseline */
	const char *env = env__get(env__process(), "PROFCAP_NO_THREAD_CTX");
	__u32 thread = 0, fsbase = 0;

	if (!o->user || (env && *env && strcmp(env, "0")))
		return;
	s->skel->rodata->want_threadctx = btf != NULL;
	if (!btf)
		return;
	if (!kbtf__member_off(btf, "task_struct", "thread", &thread) &&
	    !kbtf__member_off(btf, "thread_struct", "fsbase", &fsbase) && thread + fsbase)
		s->skel->bss->tctx_fsbase_off = (__u64)thread + fsbase;
	bpf_map__set_max_entries(s->skel->maps.threadctx_procs, PROFCAP_THREADCTX_PROCS);
	if (s->no_prealloc)
		no_prealloc(s->skel->maps.threadctx_procs);
}

int sampler__set_thread_ctx(struct sampler *s, int pid, const struct threadctx_loc *loc)
{
	struct threadctx_proc val = {0};
	__u32 key = (__u32)pid;
	int err;

	if (!loc) {
		if (s->tctx_procs)
			bpf_map__delete_elem(s->skel->maps.threadctx_procs, &key, sizeof(key), 0);
		return 0;
	}
	if (!s->skel->rodata->want_threadctx || !s->skel->bss->tctx_fsbase_off) {
		if (!s->tctx_warned)
			pr_warn("process %d publishes OpenTelemetry thread context but this kernel "
				"has no BTF with task_struct.thread.fsbase "
				"(/sys/kernel/btf/vmlinux, "
				"CONFIG_DEBUG_INFO_BTF) to find its threads' TLS: its samples "
				"carry no "
				"trace/span links",
				pid);
		s->tctx_warned = true;
		return -EOPNOTSUPP;
	}
	val.off = (__u64)loc->off;
	val.modid = loc->modid;
	val.flags = loc->musl ? PROFCAP_TCTX_DTV_MUSL : 0;
	err = bpf_map__update_elem(s->skel->maps.threadctx_procs, &key, sizeof(key), &val,
				   sizeof(val), BPF_ANY);
	if (err) {
		pr_debug("thread context of process %d not read: %s (at most %u processes)", pid,
			 strerror(-err), PROFCAP_THREADCTX_PROCS);
		return err;
	}
	s->tctx_procs++;
	__atomic_store_n(&s->skel->bss->tctx_nprocs, s->tctx_procs, __ATOMIC_RELEASE);
	return 0;
}

/* Before load: what both objects (the full one and the start-up one) are
 * configured alike with: filters, PID namespace, fork hook @fh (NULL: none),
 * sizes of the sample maps. Returns the sample maps' size. */
static __u32 configure_common(struct sampler *s, struct cpu_sampler *skel,
			      const struct sampler_opts *o, const struct forkhook *fh)
{
	__u64 pidns_dev = 0, pidns_ino = 0;
	__u32 entries;
	int k;

	skel->rodata->want_user = o->user;
	skel->rodata->want_kernel = o->kernel;
	skel->rodata->skip_idle = !o->idle;
	skel->rodata->filter_pids = o->npids > 0;
	skel->rodata->filter_tids = o->ntids > 0;
	skel->rodata->filter_comms = o->ncomms > 0;
	skel->rodata->filter_cgroups = (__u32)o->ncgroups;
	if (!own_pid_ns(&pidns_dev, &pidns_ino) && pidns_ino != PID_NS_INIT_INO) {
		/* Not the initial PID namespace: report PIDs as seen in ours. */
		skel->rodata->pidns_dev = pidns_dev;
		skel->rodata->pidns_ino = pidns_ino;
	}
	/* Exactly one fork program, or none, is loaded. */
	for (k = 0; k < FORKHOOK__COUNT; k++)
		bpf_program__set_autoload(fork_prog(skel, (enum forkhook_kind)k),
					  fh && fh->kind == (enum forkhook_kind)k);
	if (fh) {
		skel->rodata->follow_forks = 1;
		if (fh->kind == FORKHOOK_TRACEPOINT)
			skel->rodata->fork_child_off = fh->off;
		else
			skel->rodata->fork_pid_off = fh->off;
		bpf_map__set_max_entries(skel->maps.followed, SAMPLER_FOLLOWED_MAX);
	}
	/* One drain interval (about a second) of samples from every CPU must
	 * fit in one generation, with room for two stacks per sample. */
	entries = clamp_entries(2ull * o->freq_hz * s->nonline + 1024);
	bpf_map__set_max_entries(skel->maps.counts0, entries);
	bpf_map__set_max_entries(skel->maps.counts1, entries);
	bpf_map__set_max_entries(skel->maps.stacks0, entries);
	bpf_map__set_max_entries(skel->maps.stacks1, entries);
	/* Where the kernel allows it (Linux >= 6.1), the four sample maps
	 * take memory as stacks are added: preallocated (1 KiB per stack
	 * entry, each put on a free list), they were half of a 1 s capture's
	 * map memory (6.4 MiB in all, 3.0 without) and of the maps' creation
	 * time at every start. */
	if (s->no_prealloc) {
		no_prealloc(skel->maps.counts0);
		no_prealloc(skel->maps.counts1);
		no_prealloc(skel->maps.stacks0);
		no_prealloc(skel->maps.stacks1);
	}
	if (o->npids)
		bpf_map__set_max_entries(skel->maps.pids, (__u32)o->npids);
	if (o->ntids)
		bpf_map__set_max_entries(skel->maps.tids, (__u32)o->ntids);
	if (o->ncomms)
		bpf_map__set_max_entries(skel->maps.comms, (__u32)o->ncomms);
	if (o->ncgroups)
		bpf_map__set_max_entries(skel->maps.cgroups, (__u32)o->ncgroups);
	return entries;
}

/* With -v: the verifier's work on @prog (kernel >= 5.16 counts it) and
 * the load's wall time, @ns. */
static void verifier_report(const struct bpf_program *prog, __u64 ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	if (log__level() < LOG_VERBOSE)
		return;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		info.verified_insns = 0;
	pr_debug("%s: %u instructions, %u verified, loaded in %.1f ms", bpf_program__name(prog),
		 info.xlated_prog_len / 8, info.verified_insns, ns / 1e6);
}

static int skel_load(struct sampler *s, const struct sampler_opts *o, const struct forkhook *fh);

/* The sampling program of the full object: the one loaded. */
static struct bpf_program *sample_prog(const struct cpu_sampler *skel)
{
	return bpf_program__autoload(skel->progs.profcap_sample)
		       ? skel->progs.profcap_sample
		       : skel->progs.profcap_sample_bounded;
}

/* ---- quick start (issue 13) ------------------------------------------------------- */

/* The maps the start-up program fills (generation 0 only: nothing is
 * drained before the hand-over): the full object uses the start-up
 * object's (the same kernel maps). The table maps are made by
 * table_maps_create() once sampling runs (the tables are built from the
 * first notices on, while the full object loads) and shared too. The rest
 * (generation 1, thread context, .rodata, .bss) is the full object's own,
 * created in the background. */
static const char *const shared_maps[] = {
	"counts0", "stacks0", "seen",  "events", "stats",	 "scratch",	   "pids",
	"tids",	   "cgroups", "comms", "late",	 "late_scratch", "notice_scratch", "execd",
};

static bool is_shared(const struct bpf_map *m)
{
	size_t i;

	for (i = 0; i < sizeof(shared_maps) / sizeof(shared_maps[0]); i++)
		if (!strcmp(bpf_map__name(m), shared_maps[i]))
			return true;
	return false;
}

/* Before load: @full uses the shared maps of the loaded @quick. Its exec
 * hook replaces the start-up object's once loaded (full_wait()). 0 or
 * -errno. */
static int share_maps(struct cpu_sampler *full, const struct cpu_sampler *quick,
		      const struct sampler_tfd *tfd)
{
	struct bpf_map *m;
	int err;

	bpf_object__for_each_map(m, full->obj)
	{
		const struct bpf_map *q;

		if (!is_shared(m))
			continue;
		q = bpf_object__find_map_by_name(quick->obj, bpf_map__name(m));
		err = q ? bpf_map__reuse_fd(m, bpf_map__fd(q)) : -ENOENT;
		if (err)
			return err;
	}
	if (tfd->files < 0)
		return 0; /* no table unwinding */
	err = bpf_map__reuse_fd(full->maps.unwind_files, tfd->files);
	err = err ?: bpf_map__reuse_fd(full->maps.unwind_file_idx, tfd->file_idx);
	err = err ?: bpf_map__reuse_fd(full->maps.unwind_maps, tfd->maps);
	return err ?: bpf_map__reuse_fd(full->maps.unwind_procs, tfd->procs);
}

/* One map as @m (of the start-up object, configured, not created) says. */
static int map_create(const struct bpf_map *m, int inner_fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = bpf_map__map_flags(m),
		    .inner_map_fd = (__u32)inner_fd);
	int fd = bpf_map_create(bpf_map__type(m), bpf_map__name(m), bpf_map__key_size(m),
				bpf_map__value_size(m), bpf_map__max_entries(m), &opts);

	return fd < 0 ? -errno : fd;
}

/* Quick start, sampling: the table maps (s->tfd), off the start-up path.
 * 0 or -errno (logged). */
static int table_maps_create(struct sampler *s)
{
	LIBBPF_OPTS(bpf_map_create_opts, iopts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	const struct cpu_sampler *q = s->skel;
	int inner, err = 0;

	if (!s->unwind)
		return 0;
	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", sizeof(__u32), sizeof(__u64), 1,
			       &iopts);
	if (inner < 0)
		err = -errno;
	if (!err && (s->tfd.files = map_create(q->maps.unwind_files, inner)) < 0)
		err = s->tfd.files;
	if (!err && (s->tfd.file_idx = map_create(q->maps.unwind_file_idx, 0)) < 0)
		err = s->tfd.file_idx;
	if (!err && (s->tfd.maps = map_create(q->maps.unwind_maps, 0)) < 0)
		err = s->tfd.maps;
	if (!err && (s->tfd.procs = map_create(q->maps.unwind_procs, 0)) < 0)
		err = s->tfd.procs;
	if (inner >= 0)
		close(inner);
	if (err)
		pr_err("cannot create the unwind table maps: %s", strerror(-err));
	return err;
}

/* Quick start unless targets get tables before sampling (-p, -t, --
 * CMD: their first samples are table-unwound) or off-CPU time is wanted
 * (its programs need the BTF; the window would start without them).
 * PROFCAP_QUICK_START=0 turns it off (benchmarks: the baseline). */
static bool want_quick(const struct sampler_opts *o)
{
	const char *env = env__get(env__process(), "PROFCAP_QUICK_START");

	if (env && !strcmp(env, "0"))
		return false;
	return !o->npids && !o->ntids && !o->follow_forks && !o->off_cpu;
}

/* Load the start-up object into s->skel: profcap_quick and the exec hook
 * only, the sample maps, nothing that needs kernel BTF. */
static int quick_load(struct sampler *s, const struct sampler_opts *o)
{
	struct bpf_map *m;
	struct bpf_program *p;
	__u64 t0;
	int err;

	s->skel = cpu_sampler__open();
	if (!s->skel)
		return -errno;
	/* Table unwinding on: its stacks are flagged partial, and walked late
	 * when the full program will have kernel BTF and bpf_find_vma(). */
	unwind_configure(s, o, configure_common(s, s->skel, o, NULL), NULL);
	if (s->skel->rodata->want_unwind && kver__at_least(5, 17) && !access(KBTF_VMLINUX, R_OK) &&
	    !env__get(env__process(), "PROFCAP_NO_LATE")) {
		s->skel->rodata->want_late = 1;
		bpf_map__set_max_entries(s->skel->maps.late, SAMPLER_LATE_RING);
	}
	bpf_object__for_each_program(p, s->skel->obj) bpf_program__set_autoload(
		p, p == s->skel->progs.profcap_quick || p == s->skel->progs.profcap_exec);
	bpf_object__for_each_map(m, s->skel->obj) if (!bpf_map__is_internal(m) && !is_shared(m) &&
						      m != s->skel->maps.handover)
		bpf_map__set_autocreate(m, false);
	t0 = mono_ns();
	err = cpu_sampler__load(s->skel);
	if (err) {
		cpu_sampler__destroy(s->skel);
		s->skel = NULL;
		return err;
	}
	verifier_report(s->skel->progs.profcap_quick, mono_ns() - t0);
	return 0;
}

static void *loader_main(void *arg)
{
	struct sampler *s = arg;
	int err = skel_load(s, &s->qopts, NULL), fd;
	__u32 zero = 0;

	/* The hand-over, at once: from this update on, profcap_quick tail-
	 * calls profcap_sample first thing on every tick. */
	if (!err) {
		fd = bpf_program__fd(sample_prog(s->skel));
		if (bpf_map_update_elem(s->qhandover, &zero, &fd, BPF_ANY))
			err = -errno;
	}

	pthread_mutex_lock(&s->lmu);
	s->loader_err = err;
	s->loader_ns = mono_ns() - s->loader_t0;
	__atomic_store_n(&s->loader_cpu_ns, clock__thread_cpu_ns(), __ATOMIC_RELAXED);
	s->loader_done = true;
	pthread_cond_broadcast(&s->lcv);
	pthread_mutex_unlock(&s->lmu);
	return NULL;
}

/* Sampling has started with the start-up object: load the full one on a
 * thread, with every signal blocked there (they would interrupt the
 * verifier). 0 or -errno (logged). */
static int loader_start(struct sampler *s)
{
	sigset_t all, old;
	int err;

	s->quick = s->skel;
	s->qhandover = bpf_map__fd(s->quick->maps.handover);
	s->skel = NULL;
	s->loader_t0 = mono_ns();
	if (pthread_mutex_init(&s->lmu, NULL) || pthread_cond_init(&s->lcv, NULL)) {
		pr_err("cannot start the BPF loader thread");
		return -EAGAIN;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&s->loader, NULL, loader_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_err("cannot start the BPF loader thread: %s", strerror(-err));
		return err;
	}
	s->loader_on = true;
	return 0;
}

/* Wait up to @timeout_ms (-1: as long as it takes) for the loader, which
 * handed sampling over to the full object, and take the full object as
 * s->skel. 0 when done (or no quick start), -EAGAIN on timeout, else
 * -errno (logged once). */
static int full_wait(struct sampler *s, int timeout_ms)
{
	struct bpf_link *link;
	int err;

	if (!s->loader_on)
		return s->loader_err;
	pthread_mutex_lock(&s->lmu);
	if (!s->loader_done && timeout_ms >= 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += timeout_ms / 1000;
		ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->lcv, &s->lmu, &ts);
	}
	while (!s->loader_done && timeout_ms < 0)
		pthread_cond_wait(&s->lcv, &s->lmu);
	err = s->loader_done ? 0 : -EAGAIN;
	pthread_mutex_unlock(&s->lmu);
	if (err)
		return err;
	pthread_join(s->loader, NULL);
	s->loader_on = false;
	err = s->loader_err;
	if (err)
		explain_load_error(err);
	if (err) {
		/* Sampling stops (it would go on without tables nor thread
		 * context); drains and stats read the start-up object. */
		__u32 i;

		for (i = 0; i < s->ncpus; i++)
			if (s->pfds[i] >= 0)
				ioctl(s->pfds[i], PERF_EVENT_IOC_DISABLE, 0);
		pr_err("sampling stopped: the table unwinder could not be loaded");
		if (s->skel) /* loaded, the hand-over failed */
			cpu_sampler__destroy(s->skel);
		s->skel = s->quick;
		s->quick = NULL;
		s->loader_err = err;
		return err;
	}
	/* Its first sample, when it took one, is the capture's. */
	if (s->quick->bss->first_sample_ns)
		s->skel->bss->first_sample_ns = s->quick->bss->first_sample_ns;
	/* Its exec hook, which keeps the start time of a process exec()ed
	 * (the start-up object's has no kernel BTF): then lazy notices. */
	link = bpf_program__attach(s->skel->progs.profcap_exec);
	if (link) {
		bpf_link__destroy(s->exec_link);
		s->exec_link = link;
		lazy_start(s);
	}
	err = late_open(s);
	if (err)
		return err;
	pr_debug("table unwinder loaded in the background and handed over after %.1f ms "
		 "(kernel BTF %.1f ms)",
		 s->loader_ns / 1e6, s->btf_ns / 1e6);
	return 0;
}

/* The kernel structs whose members the programs read (unwind_vma_configure(),
 * threadctx_configure(), offcpu__configure()): a configure function that
 * reads another struct needs it added here. */
static const char *const kernel_structs[] = {
	"task_struct", "thread_struct", "vm_area_struct", "file",
	"inode",       "super_block",	"sched_entity",	  "cfs_rq",
	"rq",	       "bpf_task_work", "mm_struct",
};

/* Kernel BTF of those structs (collect/kbtf.h: ~10x faster than libbpf's
 * parse of it all), NULL without BTF. The caller frees it. */
static struct btf *kernel_btf(void)
{
	struct btf *btf;

	if (access(KBTF_VMLINUX, R_OK))
		return NULL;
	btf = kbtf__load(KBTF_VMLINUX, kernel_structs,
			 sizeof(kernel_structs) / sizeof(kernel_structs[0]));
	if (btf)
		return btf;
	pr_debug("fast read of %s failed (%s): parsing all of it", KBTF_VMLINUX, strerror(errno));
	return btf__load_vmlinux_btf();
}

/* Open, configure and load the full BPF object into s->skel, with fork
 * hook @fh (NULL: no fork following). With a start-up object (s->quick),
 * its sample maps are shared and it keeps the exec hook. On failure the
 * skeleton is gone again; logs nothing. */
static int skel_load(struct sampler *s, const struct sampler_opts *o, const struct forkhook *fh)
{
	struct btf *btf;
	__u32 entries;
	__u64 t0;
	int err;

	t0 = mono_ns();
	btf = o->user || o->off_cpu ? kernel_btf() : NULL;
	s->btf_ns = mono_ns() - t0;
	s->skel = cpu_sampler__open();
	if (!s->skel) {
		err = -errno;
		btf__free(btf);
		return err;
	}
	entries = configure_common(s, s->skel, o, fh);
	bpf_program__set_autoload(s->skel->progs.profcap_quick, false);
	/* bpf_loop() (Linux >= 5.17): the verifier checks one frame of the
	 * walk instead of every one of them, 3x less work in all. */
	bpf_program__set_autoload(s->skel->progs.profcap_sample, kver__at_least(5, 17));
	bpf_program__set_autoload(s->skel->progs.profcap_sample_bounded, !kver__at_least(5, 17));
	bpf_map__set_autocreate(s->skel->maps.handover, false);
	err = s->quick ? share_maps(s->skel, s->quick, &s->tfd) : 0;
	unwind_configure(s, o, entries, btf);
	threadctx_configure(s, o, btf);
	if (!err)
		err = offcpu__configure(s->skel, o, entries, btf);
	btf__free(btf);
	t0 = mono_ns();
	if (!err)
		err = cpu_sampler__load(s->skel);
	if (err) {
		cpu_sampler__destroy(s->skel);
		s->skel = NULL;
		return err;
	}
	verifier_report(sample_prog(s->skel), mono_ns() - t0);
	return 0;
}

/* Load the BPF object with the first fork hook that works here (see
 * collect/forkhook.h; PROFCAP_FORK_HOOK names one) and attach it. Logs. */
static int load_following(struct sampler *s, const struct sampler_opts *o)
{
	enum forkhook_kind first = FORKHOOK_RAW_TP, last = FORKHOOK_TRACEPOINT, k;
	const char *env = env__get(env__process(), FORKHOOK_ENV), *why = "";
	char reasons[512] = "";
	struct forkhook fh;
	size_t used = 0;
	int err = -ENOENT;

	if (env) {
		if (forkhook__parse(env, &first)) {
			pr_err("%s=%s names no fork hook: use tp_btf, raw_tp or tracepoint, or "
			       "unset "
			       "it",
			       FORKHOOK_ENV, env);
			return -EINVAL;
		}
		last = first;
	}
	for (k = first; k <= last; k++) {
		if (k == FORKHOOK_TP_BTF && !kver__at_least(5, 5)) {
			err = -EOPNOTSUPP;
			why = "needs Linux >= 5.5";
		} else if (!(err = forkhook__prepare(&fh, k, NULL, &why))) {
			err = skel_load(s, o, &fh);
			if (err == -EPERM || err == -EACCES) {
				forkhook__release(&fh);
				explain_load_error(err);
				return err;
			}
			if (err) {
				why = "the kernel refused the program";
			} else {
				s->fork_link = bpf_program__attach(fork_prog(s->skel, k));
				if (!s->fork_link) {
					err = -errno;
					why = "attaching failed";
					cpu_sampler__destroy(s->skel);
					s->skel = NULL;
				}
			}
			forkhook__release(&fh);
		}
		if (!err) {
			pr_debug("following new processes through %s/sched_process_fork (%s)",
				 forkhook__name(k),
				 k == FORKHOOK_TRACEPOINT ? "tracefs format" : "kernel BTF");
			return 0;
		}
		pr_debug("fork hook %s unusable: %s (%s)", forkhook__name(k), why, strerror(-err));
		used += (size_t)snprintf(reasons + used, sizeof(reasons) - used, "%s%s: %s (%s)",
					 used ? "; " : "", forkhook__name(k), why, strerror(-err));
		if (used >= sizeof(reasons))
			used = sizeof(reasons) - 1;
	}
	pr_err("cannot follow new processes: %s; needs kernel BTF (CONFIG_DEBUG_INFO_BTF) or "
	       "tracefs: run as root so profcap can mount it, or mount it (mount -t tracefs "
	       "nodev /sys/kernel/tracing)",
	       reasons);
	return err;
}

int sampler__process_maps(struct sampler *s, int pid, struct procmaps **out)
{
	int err;

	*out = NULL;
	if (!s->sb || pid <= 0)
		return -ENOENT;
	pthread_mutex_lock(&s->sb_mu);
	sideband__drain(s->sb, s->mev, clock__mono_ns());
	err = mapev__maps(s->mev, (__u32)pid, out, NULL);
	pthread_mutex_unlock(&s->sb_mu);
	return err;
}

static int maps_of(void *ctx, int pid, struct procmaps **out)
{
	return sampler__process_maps(ctx, pid, out);
}

/* The side-band records, before any sampling: every process exec()ed from
 * then on is known by them. Best effort: without them, maps files. */
static void sideband_open(struct sampler *s, const bool *online)
{
	int err;

	s->maps_src = (struct procmaps_source){.fn = maps_of, .ctx = s};
	s->mev = mapev__new();
	err = s->mev ? sideband__open(online, s->ncpus, &s->sb) : -ENOMEM;
	if (err) {
		pr_debug("no side-band records (%s): new processes' mappings are read from /proc",
			 strerror(-err));
		mapev__free(s->mev);
		s->mev = NULL;
		s->sb = NULL;
	}
}

struct sampler *sampler__new(const struct sampler_opts *o)
{
	struct sampler *s = NULL;
	bool *online = NULL;
	__u32 ncpus = 0, i;
	int err;

	libbpf_set_print(libbpf_print);
	if (!o->freq_hz || o->freq_hz > 100000) {
		pr_err("sampling frequency %u Hz is out of range (1..100000)", o->freq_hz);
		return NULL;
	}
	err = online_cpus(&online, &ncpus);
	if (err) {
		pr_err("cannot read the online CPU list: %s", strerror(-err));
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto err_nomem;
	s->ncpus = ncpus;
	s->rows_fd = -1;
	s->nepoll = s->nquit = s->nfd = -1;
	pthread_mutex_init(&s->nmu, NULL);
	pthread_mutex_init(&s->ring_mu, NULL);
	pthread_mutex_init(&s->sb_mu, NULL);
	/* the builder's queue: notices may come before it starts */
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->no_prealloc = kver__at_least(6, 1);
	s->pfds = malloc(ncpus * sizeof(*s->pfds));
	s->links = calloc(ncpus, sizeof(*s->links));
	if (!s->pfds || !s->links)
		goto err_nomem;
	for (i = 0; i < ncpus; i++) {
		s->pfds[i] = -1;
		s->nonline += online[i];
	}

	if (o->ncgroups > PROFCAP_MAX_CGROUPS) {
		pr_err("too many cgroups to filter on (%zu, at most %d)", o->ncgroups,
		       PROFCAP_MAX_CGROUPS);
		goto err_out;
	}
	if (o->follow_forks && o->npids) {
		err = load_following(s, o);
	} else {
		s->quick_mode = want_quick(o);
		err = s->quick_mode ? quick_load(s, o) : skel_load(s, o, NULL);
		if (err && s->quick_mode && err != -EPERM && err != -EACCES) {
			/* Tail calls from a program with a sub-program need
			 * Linux >= 5.10 (x86_64): the full program first. */
			pr_debug("quick start unavailable (%s): loading the table unwinder first",
				 strerror(-err));
			s->quick_mode = false;
			err = skel_load(s, o, NULL);
		}
		if (err)
			explain_load_error(err);
		/* The loader's copy: no lists (they are not used after this). */
		s->qopts = *o;
		s->qopts.pids = s->qopts.tids = s->qopts.cgroup_fds = NULL;
		s->qopts.comms = NULL;
	}
	if (err)
		goto err_out;
	table_fds(s);
	sideband_open(s, online);
	err = unwind_open(s);
	if (!err)
		err = set_filters(s, o);
	if (!err)
		err = attach_events(s);
	if (!err)
		err = notice_start(s);
	if (!err && !s->quick_mode)
		lazy_start(s); /* with a quick start: once the full object runs */
	if (!err)
		err = late_open(s); /* with a quick start: the start-up object's ring, shared */
	if (!err)
		err = open_perf_events(s, online, o->freq_hz);
	if (err)
		goto err_out;
	free(online);
	return s;

err_nomem:
	pr_err("out of memory setting up the sampler");
err_out:
	free(online);
	sampler__free(s);
	return NULL;
}

/* The table builder thread. 0 or -EAGAIN (logged). */
static int worker_start(struct sampler *s)
{
	if (!s->unwind || s->worker_on)
		return 0;
	unwind_table__stats(s->unwind, &s->ut_stats);
	if (pthread_create(&s->worker, NULL, worker_main, s)) {
		pr_err("cannot start the unwind table builder thread");
		return -EAGAIN;
	}
	s->worker_on = true;
	return 0;
}

/* Linux >= 6.1 (s->no_prealloc): the sample maps take an entry from a
 * per-CPU cache that the kernel fills with one entry at creation for the
 * 1 KiB stack entries (four for small ones) and refills, from irq_work,
 * once it runs low. A CPU's first sample needs up to two new stacks in NMI
 * context, where an empty cache cannot wait for the refill: in about one 1 s
 * capture in four, one stack was lost and reported as "stack table full".
 * So before sampling starts, each CPU's caches are primed: on each CPU in
 * turn, an entry is added to each map (running its cache low, which queues
 * the refill on that CPU, done as the call returns) and deleted again.
 * Best effort: a CPU this thread may not run on is left as it was. */
static void prime_maps(struct sampler *s)
{
	struct bpf_map *maps[] = {s->skel->maps.stacks0,     s->skel->maps.stacks1,
				  s->skel->maps.counts0,     s->skel->maps.counts1,
				  s->skel->maps.ustack_ext0, s->skel->maps.ustack_ext1};
	size_t setsize = CPU_ALLOC_SIZE(s->ncpus), i, kmax = 0, vmax = 0;
	cpu_set_t *old = NULL, *one = NULL;
	void *key = NULL, *val = NULL;
	__u32 cpu;
	int fd;

	if (!s->no_prealloc)
		return;
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		if (bpf_map__key_size(maps[i]) > kmax)
			kmax = bpf_map__key_size(maps[i]);
		if (bpf_map__value_size(maps[i]) > vmax)
			vmax = bpf_map__value_size(maps[i]);
	}
	old = CPU_ALLOC(s->ncpus);
	one = CPU_ALLOC(s->ncpus);
	key = calloc(1, kmax);
	val = calloc(1, vmax);
	if (!old || !one || !key || !val || sched_getaffinity(0, setsize, old))
		goto out;
	for (cpu = 0; cpu < s->ncpus; cpu++) {
		if (s->pfds[cpu] < 0 || !CPU_ISSET_S(cpu, setsize, old))
			continue;
		CPU_ZERO_S(setsize, one);
		CPU_SET_S(cpu, setsize, one);
		if (sched_setaffinity(0, setsize, one))
			continue;
		for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
			fd = bpf_map__fd(maps[i]);
			/* all-zero key: no sample has been stored yet */
			if (fd >= 0 && !bpf_map_update_elem(fd, key, val, BPF_NOEXIST))
				bpf_map_delete_elem(fd, key);
		}
	}
	sched_setaffinity(0, setsize, old);
out:
	free(val);
	free(key);
	if (one)
		CPU_FREE(one);
	if (old)
		CPU_FREE(old);
}

int sampler__start(struct sampler *s)
{
	struct bpf_program *prog;
	__u32 i;
	int err;

	if (s->quick || s->loader_on)
		return 0; /* started already */
	err = s->quick_mode ? 0 : offcpu__attach(s->skel, s->offcpu);
	if (err)
		return err;
	prog = s->quick_mode ? s->skel->progs.profcap_quick : sample_prog(s->skel);
	prime_maps(s);
	/* Attaching also enables each event, so sampling starts here. */
	for (i = 0; i < s->ncpus; i++) {
		if (s->pfds[i] < 0)
			continue;
		s->links[i] = bpf_program__attach_perf_event(prog, s->pfds[i]);
		if (!s->links[i]) {
			err = -errno;
			pr_err("cannot attach the BPF program to CPU %u: %s", i, strerror(-err));
			return err;
		}
	}
	if (s->quick_mode)
		err = table_maps_create(s);
	err = err ?: worker_start(s);
	return err || !s->quick_mode ? err : loader_start(s);
}

void sampler__stop(struct sampler *s)
{
	__u32 i;

	if (!s)
		return;
	s->halted = true;
	for (i = 0; i < s->ncpus; i++)
		if (s->pfds[i] >= 0)
			ioctl(s->pfds[i], PERF_EVENT_IOC_DISABLE, 0);
	/* Waits that end after this are not counted. */
	for (i = 0; i < OFFCPU_LINKS; i++) {
		bpf_link__destroy(s->offcpu[i]);
		s->offcpu[i] = NULL;
	}
	/* Notices and late samples still in the rings: this thread's now. */
	notice_stop(s);
	/* No sample will use tables now: do not build them. */
	if (s->worker_on) {
		pthread_mutex_lock(&s->mu);
		s->stopped = true;
		pending_clear(s);
		pthread_mutex_unlock(&s->mu);
	}
}

/* Hand the notices waiting to @fn (not before the hand-over of a quick
 * start: the caller's handler uses the full object). The count. */
static int take_notices(struct sampler *s, sampler_proc_fn fn, void *ctx)
{
	struct sampler_notice *q;
	__u32 n, i;
	bool norseq;
	int got = 0;

	if (s->loader_on)
		return 0;
	/* The queue's length as it is now: only that many are copied (a copy
	 * of the whole queue per poll cost an allocation of 64 KiB and its
	 * munmap). More may come meanwhile: they stay for the next call. */
	pthread_mutex_lock(&s->nmu);
	n = s->nq_n;
	pthread_mutex_unlock(&s->nmu);
	q = malloc((n ? n : 1) * sizeof(*q));
	if (!q)
		return -ENOMEM;
	pthread_mutex_lock(&s->nmu);
	memcpy(q, s->nq, n * sizeof(*q));
	memmove(s->nq, s->nq + n, (s->nq_n - n) * sizeof(*q));
	s->nq_n -= n;
	norseq = s->norseq;
	s->norseq = false;
	pthread_mutex_unlock(&s->nmu);
	if (norseq)
		offcpu__poll(s->skel, s->offcpu); /* a failure is warned, not fatal */
	for (i = 0; i < n; i++) {
		if (q[i].tgid) {
			if (fn)
				fn(ctx, q[i].tgid, q[i].snap);
			got++;
		}
		procsnap__free(q[i].snap);
	}
	free(q);
	return got;
}

int sampler__poll(struct sampler *s, int timeout_ms, sampler_proc_fn fn, void *ctx)
{
	struct pollfd pfd = {.fd = s->nfd, .events = POLLIN};
	__u64 cnt;
	int n;

	/* Until the hand-over, notices wait; stopped, the rest of the load is
	 * waited for. */
	if (s->loader_on) {
		n = full_wait(s, s->halted ? -1 : 0);
		if (n && n != -EAGAIN)
			return n;
	}
	if (!s->nthread_on || s->lazy) {
		/* Stopped, or records that did not wake the notice thread:
		 * what the rings hold, on this thread (notices first). */
		lazy_check(s);
		read_rings(s, s->lrb != NULL);
	}
	n = take_notices(s, fn, ctx);
	if (n || !timeout_ms)
		return n;
	if (poll(&pfd, 1, timeout_ms) < 0)
		return -errno; /* -EINTR: a signal */
	if (read(s->nfd, &cnt, sizeof(cnt)) < 0) {
		/* nothing pending (EAGAIN) */
	}
	return take_notices(s, fn, ctx);
}

/* Double two parallel scratch arrays, *@a and *@b (elements of @asize and
 * @bsize bytes), that share the capacity *@cap (1024 the first time).
 * *@cap changes only when both grew; 0 or -ENOMEM. */
static int grow_scratch_pair(void **a, size_t asize, void **b, size_t bsize, __u32 *cap)
{
	__u32 ncap = *cap ? *cap * 2 : 1024;
	void *p;

	p = realloc(*a, ncap * asize);
	if (!p)
		return -ENOMEM;
	*a = p;
	p = realloc(*b, ncap * bsize);
	if (!p)
		return -ENOMEM;
	*b = p;
	*cap = ncap;
	return 0;
}

static int grow_scratch(struct sampler *s)
{
	return grow_scratch_pair((void **)&s->keys, sizeof(*s->keys), (void **)&s->vals,
				 sizeof(*s->vals), &s->cap);
}

/* A hash map taken apart in batches: BPF_MAP_LOOKUP_AND_DELETE_BATCH (Linux
 * >= 5.6, below the 5.8 profcap needs) reads and deletes a buffer's worth
 * of entries per bpf() call, where walking it cost three calls an entry
 * (get_next_key, lookup, delete; ~1.1 us each on a VM whose system calls
 * trap to the host). */
struct take {
	int fd;
	bool started; /* @cursor holds the next bucket */
	bool done;    /* the map is empty */
	__u32 cursor;
};

/* Read and delete the next entries of @t's map: up to *@count keys and
 * values into @keys and @vals; *@count gets how many. 0 (t->done set once
 * the last entries are taken), -ENOSPC when one bucket holds more entries
 * than *@count (nothing taken: call again with more room), or -errno. */
static int take_next(struct take *t, void *keys, void *vals, __u32 *count)
{
	__u32 next = 0;
	int err;

	err = bpf_map_lookup_and_delete_batch(t->fd, t->started ? &t->cursor : NULL, &next, keys,
					      vals, count, NULL);
	if (err == -ENOENT) {
		t->done = true; /* *count: the last entries */
		return 0;
	}
	if (err) {
		*count = 0;
		return err;
	}
	t->cursor = next;
	t->started = true;
	return 0;
}

/* Every entry of hash map @fd read and deleted into the arrays *@keys and
 * *@vals (@ksz and @vsz bytes an entry), which @grow enlarges (*@cap
 * entries; it doubles them, so the map's size bounds them); *@n gets the
 * count. 0 or -errno. */
static int take_all(struct sampler *s, int fd, void *const *keys, size_t ksz, void *const *vals,
		    size_t vsz, const __u32 *cap, int (*grow)(struct sampler *), __u32 *n)
{
	struct take t = {.fd = fd};
	__u32 count;
	int err;

	*n = 0;
	while (!t.done) {
		if (*cap - *n < SAMPLER_BATCH && (err = grow(s)))
			return err;
		count = *cap - *n;
		err = take_next(&t, (char *)*keys + (size_t)*n * ksz,
				(char *)*vals + (size_t)*n * vsz, &count);
		if (err == -ENOSPC) {
			err = grow(s);
			if (err)
				return err;
			continue;
		}
		if (err)
			return err;
		*n += count;
	}
	return 0;
}

/* Room in clear_stacks()' buffer for @room entries of values of @vsz bytes
 * (it only grows). 0 or -ENOMEM. */
static int stack_buf_grow(struct sampler *s, __u32 room, __u32 vsz)
{
	__u64 *k;
	void *v;

	if (room <= s->stack_room && vsz <= s->stack_vals_size)
		return 0;
	room = room > s->stack_room ? room : s->stack_room;
	vsz = vsz > s->stack_vals_size ? vsz : s->stack_vals_size;
	k = realloc(s->stack_keys, room * sizeof(*k));
	if (!k)
		return -ENOMEM;
	s->stack_keys = k;
	v = realloc(s->stack_vals, (size_t)room * vsz);
	if (!v)
		return -ENOMEM;
	s->stack_vals = v;
	s->stack_room = room;
	s->stack_vals_size = vsz;
	return 0;
}

/* Empty the idle generation's stack table @m in batches of
 * SAMPLER_STACK_BATCH, the values read only to be dropped (a copy is
 * cheaper than a system call); the buffer doubles for a hash bucket that
 * holds more (the map's size bounds it). 0 or -errno. */
static int clear_stacks(struct sampler *s, const struct bpf_map *m)
{
	struct take t = {.fd = bpf_map__fd(m)};
	__u32 count, vsz = bpf_map__value_size(m);
	int err = stack_buf_grow(s, SAMPLER_STACK_BATCH, vsz);

	while (!err && !t.done) {
		count = s->stack_room;
		err = take_next(&t, s->stack_keys, s->stack_vals, &count);
		if (err == -ENOSPC) /* a bucket longer than the buffer */
			err = stack_buf_grow(s, 2 * s->stack_room, vsz);
	}
	return err;
}

/* Look up the stacks of @r by hash and hand it to @fn. */
static int emit_record(struct sampler *s, struct sampler_record *r, __u64 ustack, __u64 kstack,
		       int sfd, int efd, sampler_record_fn fn, void *ctx)
{
	__u64 lost = r->kind == SAMPLER_KIND_CPU ? r->count : r->switches;

	r->comm[16] = '\0';
	if (ustack) {
		if (!bpf_map_lookup_elem(sfd, &ustack, &s->ust)) {
			r->ustack = s->ust.ips;
			r->nustack = (__u32)(s->ust.nr < PROFCAP_MAX_STACK ? s->ust.nr
									   : PROFCAP_MAX_STACK);
			if (s->ust.nr > PROFCAP_MAX_STACK && s->unwind) {
				r->ustack = s->uips;
				r->nustack = unwind_join(s, efd, ustack, s->ust.nr, &r->flags);
			}
		} else {
			s->stacks_missing += lost;
			r->flags |= PROFCAP_F_USTACK_LOST;
		}
	}
	if (kstack) {
		if (!bpf_map_lookup_elem(sfd, &kstack, &s->kst)) {
			r->kstack = s->kst.ips;
			r->nkstack = (__u32)(s->kst.nr < PROFCAP_MAX_STACK ? s->kst.nr
									   : PROFCAP_MAX_STACK);
		} else {
			s->stacks_missing += lost;
			r->flags |= PROFCAP_F_KSTACK_LOST;
		}
	}
	return fn(ctx, r);
}

static int grow_offcpu_scratch(struct sampler *s)
{
	return grow_scratch_pair((void **)&s->okeys, sizeof(*s->okeys), (void **)&s->ovals,
				 sizeof(*s->ovals), &s->ocap);
}

/* The off-CPU counters of the idle generation: take (read and delete), emit. */
static int drain_offcpu(struct sampler *s, __u32 idle, int sfd, int efd, sampler_record_fn fn,
			void *ctx)
{
	int cfd = bpf_map__fd(idle ? s->skel->maps.offcpu_counts1 : s->skel->maps.offcpu_counts0);
	__u32 n = 0, i;
	int err;

	err = take_all(s, cfd, (void *const *)&s->okeys, sizeof(*s->okeys),
		       (void *const *)&s->ovals, sizeof(*s->ovals), &s->ocap, grow_offcpu_scratch,
		       &n);
	for (i = 0; i < n && !err; i++) {
		const struct offcpu_key *k = &s->okeys[i];
		struct sampler_record r = {
			.kind = SAMPLER_KIND_OFF_CPU,
			.state = (enum sampler_state)k->state,
			.switches = s->ovals[i].switches,
			.tgid = k->tgid,
			.tid = k->tid,
			.flags = k->flags,
			.count = s->ovals[i].ns,
		};

		memcpy(r.comm, k->comm, 16);
		memcpy(r.trace_id, k->trace_id, sizeof(r.trace_id));
		memcpy(r.span_id, &k->span_id, sizeof(r.span_id));
		err = emit_record(s, &r, k->ustack, k->kstack, sfd, efd, fn, ctx);
	}
	return err;
}

/* The late-walking queue: what has tables, and everything once stopped
 * (after what the ring still holds, and the table build under way). */
static int drain_late(struct sampler *s, sampler_record_fn fn, void *ctx)
{
	struct late_tables t = {.procs = s->tfd.procs,
				.maps = s->tfd.maps,
				.files = s->tfd.files,
				.file_idx = s->tfd.file_idx,
				.idx = s->fidx,
				.want = want_file,
				.ctx = s};
	const struct timespec tick = {0, 5000000};
	int i;

	if (!s->late_on)
		return 0;
	if (s->halted) {
		if (!s->nthread_on)
			ring_buffer__consume(s->lrb);
		for (i = 0; i < 100 && s->worker_on && late__pending(s->late); i++) {
			bool busy;

			pthread_mutex_lock(&s->mu);
			busy = s->busy || s->want_n; /* tables the queue waits for */
			pthread_mutex_unlock(&s->mu);
			if (!busy)
				break;
			nanosleep(&tick, NULL);
		}
	}
	return late__pending(s->late) ? late__flush(s->late, &t, mono_ns(), s->halted, fn, ctx) : 0;
}

int sampler__drain(struct sampler *s, sampler_record_fn fn, void *ctx)
{
	/* A failed hand-over is logged; the start-up object's samples are
	 * still drained. */
	if (s->loader_on)
		full_wait(s, -1);
	const struct timespec settle = {0, SAMPLER_GEN_SETTLE_NS};
	int cfd, sfd, efd, err = 0;
	__u32 n = 0, i, idle;

	idle = s->skel->bss->gen & 1;
	__atomic_store_n(&s->skel->bss->gen, idle ^ 1, __ATOMIC_SEQ_CST);
	nanosleep(&settle, NULL);
	s->drains++;

	cfd = bpf_map__fd(idle ? s->skel->maps.counts1 : s->skel->maps.counts0);
	sfd = bpf_map__fd(idle ? s->skel->maps.stacks1 : s->skel->maps.stacks0);
	efd = bpf_map__fd(idle ? s->skel->maps.ustack_ext1 : s->skel->maps.ustack_ext0);

	{ /* the full generation is the high-water mark (before it is taken) */
		__u64 mem = bpf_memory(s, s->skel, &s->fixed_mem);

		if (mem > s->bpf_peak)
			s->bpf_peak = mem;
	}
	/* Take every key and count first: the generation is idle, so nothing
	 * changes under us. */
	err = take_all(s, cfd, (void *const *)&s->keys, sizeof(*s->keys), (void *const *)&s->vals,
		       sizeof(*s->vals), &s->cap, grow_scratch, &n);
	if (err)
		goto out;
	for (i = 0; i < n && !err; i++) {
		const struct sample_key *k = &s->keys[i];
		struct sampler_record r = {
			.tgid = k->tgid,
			.tid = k->tid,
			.flags = k->flags,
			.count = s->vals[i],
		};

		memcpy(r.comm, k->comm, 16);
		memcpy(r.trace_id, k->trace_id, sizeof(r.trace_id));
		memcpy(r.span_id, &k->span_id, sizeof(r.span_id));
		r.attrs_size = k->attrs_size;
		memcpy(r.attrs, k->attrs, sizeof(r.attrs));
		err = emit_record(s, &r, k->ustack, k->kstack, sfd, efd, fn, ctx);
	}
	if (!err && offcpu__enabled(s->skel)) {
		offcpu__poll(s->skel, s->offcpu); /* a failure is warned, not fatal */
		err = drain_offcpu(s, idle, sfd, efd, fn, ctx);
	}
	if (!err)
		err = clear_stacks(s, idle ? s->skel->maps.stacks1 : s->skel->maps.stacks0);
	if (!err && s->unwind)
		err = clear_stacks(s, idle ? s->skel->maps.ustack_ext1 : s->skel->maps.ustack_ext0);
	if (!err)
		err = drain_late(s, fn, ctx);
out:
	return err;
}

/* CPU of live thread @t so far, ns; 0 if unreadable. */
static __u64 thread_cpu(pthread_t t)
{
	clockid_t clk;

	return pthread_getcpuclockid(t, &clk) ? 0 : clock__ns(clk);
}

/* The CPU of the sampler's threads so far into @st. */
static void cpu_by_thread(const struct sampler *s, struct sampler_stats *st)
{
	/* a thread that ended left its figure */
	st->cpu_notice_ns = s->nthread_on ? thread_cpu(s->nthread)
					  : __atomic_load_n(&s->notice_cpu_ns, __ATOMIC_RELAXED);
	st->cpu_snap_ns = __atomic_load_n(&s->snap_cpu_ns, __ATOMIC_RELAXED);
	st->cpu_snap_main_ns = __atomic_load_n(&s->snap_main_cpu_ns, __ATOMIC_RELAXED);
	st->cpu_builder_ns = s->worker_on ? thread_cpu(s->worker)
					  : __atomic_load_n(&s->worker_cpu_ns, __ATOMIC_RELAXED);
	st->cpu_loader_ns = __atomic_load_n(&s->loader_cpu_ns, __ATOMIC_RELAXED);
	st->snaps_sideband = __atomic_load_n(&s->snaps_ev, __ATOMIC_RELAXED);
	st->snaps_proc = __atomic_load_n(&s->snaps_proc, __ATOMIC_RELAXED);
	st->walked_alone = __atomic_load_n(&s->walked_alone, __ATOMIC_RELAXED);
	st->sideband = s->sb != NULL;
	if (s->sb) {
		struct sideband_stats sst;

		sideband__stats(s->sb, &sst);
		st->sideband_records = sst.records;
		st->sideband_lost = sst.lost;
	}
}

void sampler__stats(const struct sampler *s, struct sampler_stats *st)
{
	/* Before the hand-over, the start-up object: the loader has the other. */
	const struct cpu_sampler *skel = s->loader_on ? s->quick : s->skel;
	__u64 *vals = NULL;
	int ncpu = libbpf_num_possible_cpus(), fd;
	__u32 k;

	memset(st, 0, sizeof(*st));
	cpu_by_thread(s, st);
	st->ncpus = s->nonline;
	st->drains = s->drains;
	st->stacks_missing = s->stacks_missing;
	st->bpf_bytes = bpf_memory(s, skel, NULL);
	st->first_sample_ns = skel->bss->first_sample_ns;
	st->bpf_peak_bytes = st->bpf_bytes > s->bpf_peak ? st->bpf_bytes : s->bpf_peak;
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
		}
	}
	free(vals);
	if (!s->loader_on)
		offcpu__stats(s->skel, st);
}

void sampler__free(struct sampler *s)
{
	__u32 i;

	if (!s)
		return;
	if (s->loader_on) /* the verifier cannot be interrupted */
		pthread_join(s->loader, NULL);
	if (s->worker_on) {
		bool busy;

		pthread_mutex_lock(&s->mu);
		s->quit = true;
		busy = s->busy;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		if (busy) {
			/* In a parse (a large binary on a busy host can take
			 * seconds): nothing needs it any more, and the process
			 * is about to exit. Leave it what it uses. */
			pthread_detach(s->worker);
			return;
		}
		pthread_join(s->worker, NULL);
	}
	notice_stop(s);
	pending_clear(s); /* no thread left that takes or gives */
	sideband__free(s->sb);
	mapev__free(s->mev);
	ring_buffer__free(s->lrb);
	ring_buffer__free(s->rb);
	late__free(s->late);
	if (s->nq)
		for (__u32 i = 0; i < s->nq_n; i++)
			procsnap__free(s->nq[i].snap);
	free(s->nq);
	if (s->nepoll >= 0)
		close(s->nepoll);
	if (s->nquit >= 0)
		close(s->nquit);
	if (s->nfd >= 0)
		close(s->nfd);
	bpf_link__destroy(s->fork_link);
	bpf_link__destroy(s->exec_link);
	for (i = 0; i < OFFCPU_LINKS; i++)
		bpf_link__destroy(s->offcpu[i]);
	for (i = 0; s->links && i < s->ncpus; i++)
		bpf_link__destroy(s->links[i]);
	for (i = 0; s->pfds && i < s->ncpus; i++)
		if (s->pfds[i] >= 0)
			close(s->pfds[i]);
	unwind_table__free(s->unwind);
	if (s->tfd.own) {
		int *fds[] = {&s->tfd.maps, &s->tfd.procs, &s->tfd.files, &s->tfd.file_idx};

		for (i = 0; i < 4; i++)
			if (*fds[i] >= 0)
				close(*fds[i]);
	}
	free(s->slot_mem);
	free(s->slot_seen);
	fileidx__free(s->fidx);
	cpu_sampler__destroy(s->skel);
	cpu_sampler__destroy(s->quick);
	free(s->links);
	free(s->pfds);
	free(s->keys);
	free(s->vals);
	free(s->okeys);
	free(s->ovals);
	free(s->stack_keys);
	free(s->stack_vals);
	free(s);
}
