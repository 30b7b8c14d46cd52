/* sampler_int.h - the sampler's private state, shared by its parts
 * (collect/sampler*.c only; users include collect/sampler.h).
 *
 * Files: sampler.c (life cycle: new, start, stop, free), sampler_cpus.c
 * (privileges, online CPUs, perf events), sampler_loader.c (configure and
 * load the BPF object), sampler_quick.c (quick start: the start-up object,
 * the loader thread, the hand-over), sampler_notice.c (the notice thread),
 * sampler_builder.c (the table builder thread), sampler_tables.c (the
 * builder's writes to the table maps, kernel memory), sampler_drain.c (the
 * drain), sampler_stats.c (counters).
 *
 * Threads, and what each owns:
 *   main     the caller's: every sampler__*() call. Owns the BPF objects
 *            (skel; links, perf fds), the drain's state (d) and the late
 *            queue's flush; reads the rings itself while lazy (nt.lazy)
 *            and after sampler__stop().
 *   notice   sampler__new() to sampler__stop(): waits on the notice, late
 *            and side-band rings; snapshots new processes; feeds the
 *            notice queue (nt.queue) and the builder's queues (b.*).
 *   builder  sampler__start() to sampler__free(): owns the unwind table
 *            (t.unwind) and writes the table maps (tfd) and t.*; takes
 *            b.pending, b.later and b.want.
 *   loader   quick start only, sampler__start() to the hand-over
 *            (quick__wait()): loads the full object into skel. While l.on,
 *            the main thread uses l.quick and touches neither skel nor
 *            the builder's maps' fds.
 * The side-band records have no thread: the notice thread reads their
 * rings as they fill, and any thread reads them under sb_mu.
 *
 * Locks, and what each guards. Order, outer first: nt.ring_mu, then the
 * late queue's own lock (collect/late.c: pushes and flushes ask the
 * builder for files and read side-band maps under it), then one of the
 * rest, which are never nested in each other:
 *   nt.ring_mu  consuming the notice and late rings, nt.pass_ns
 *   sb_mu       sb and mev (notice thread, main thread, symbolizer's maps)
 *   b.mu        b.pending, b.later, b.want, b.stopped, b.quit, b.busy,
 *               b.ut_stats; b.cv wakes the builder
 *   nt.mu       nt.queue, nt.norseq, nt.lost
 *   l.mu        l.done, l.err, l.ns; l.cv wakes the main thread
 * Counters any thread adds to and sampler__stats() reads are __atomic
 * (nt.snap*_ns, nt.snaps_*, nt.walked_alone, *.cpu_ns, t.slot_seen[],
 * late_on).
 */
#ifndef PROFCAP_SAMPLER_INT_H
#define PROFCAP_SAMPLER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <linux/types.h>

#include "cpu_sampler.h"
#include "offcpu_types.h"
#include "collect/drain.h"
#include "collect/late.h"
#include "collect/offcpu.h"
#include "collect/queue.h"
#include "collect/sampler.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"

struct cpu_sampler;
struct bpf_link;
struct bpf_map;
struct btf;
struct ring_buffer;
struct sideband;
struct mapev;
struct late;
struct fileidx;
struct forkhook;

/* Announced processes waiting for their unwind tables; notices waiting for
 * the main thread; processes to describe later. */
#define SAMPLER_PENDING_MAX 4096u
/* Files late walks asked for, waiting for the builder. */
#define SAMPLER_WANT_MAX 64u
/* Late-walking ring (struct late_sample, 2-19 KiB each; the notice thread
 * drains it as records come). Its pages are mapped into profcap, so they
 * count in its RSS. */
#define SAMPLER_LATE_RING (256u << 10)
/* b.pending entry: a refresh (rate-limited) rather than a new process. */
#define SAMPLER_REFRESH_BIT 0x80000000u

/* The maps the table builder writes, by fd: the full object's, or with a
 * quick start created by quick__table_maps() and shared (-1: none yet). */
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

/* An entry of the builder's queue: a pid (| SAMPLER_REFRESH_BIT), with the
 * snapshot of a new process (a reference) or NULL. */
struct sampler_pending {
	__u32 entry;
	struct procsnap *snap;
};

struct sampler_later {
	__u32 tgid;
	__u64 due_ns; /* CLOCK_MONOTONIC */
};

struct sampler_want {
	__u32 tgid;
	__u64 start, dev, ino; /* dev: major << 32 | minor (unwind_table.h) */
};

/* The notice thread and the rings it reads. What the BPF programs send
 * lazily does not wake it: sampler__poll() reads that on the main thread.
 * Notices wait in queue for sampler__poll(), which wakes on wake_fd when
 * SAMPLER_NOTICE_WAKE of them wait (else the next drain takes them). */
struct sampler_notices {
	pthread_t thread;
	bool on;
	int epoll, quit_fd, wake_fd;
	struct ring_buffer *rb;	 /* notices */
	struct ring_buffer *lrb; /* late samples (the full object's `late` ring) */
	pthread_mutex_t ring_mu;
	__u64 pass_ns; /* when the current reading of the rings began */
	bool lazy;     /* the programs send without a wake-up */
	pthread_mutex_t mu;
	struct queue *queue; /* struct sampler_notice */
	bool norseq;	     /* a thread without rseq waited: attach sys_exit */
	__u64 lost;	     /* notices dropped: queue full */
	struct procsnap_cgroups cgroups; /* containers by cgroup */
	__u64 snap_cpu_ns, snap_main_cpu_ns; /* CPU in snapshots, by thread (-v only) */
	__u64 snaps_ev, snaps_proc; /* snapshots with mappings from side-band, /proc */
	__u64 walked_alone; /* new processes left to the BPF walker alone */
	__u64 cpu_ns;	    /* the thread's CPU when it ended */
};

/* The table builder thread and its queues. */
struct sampler_builder {
	pthread_t thread;
	bool on, stopped, quit, busy;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct queue *pending; /* struct sampler_pending, oldest first */
	struct queue *later;   /* struct sampler_later, oldest first */
	struct queue *want;    /* struct sampler_want: built before pending */
	struct unwind_table_stats ut_stats;
	__u64 cpu_ns; /* the thread's CPU when it ended */
	/* main thread: tgids asked to refresh lately */
	__u32 refreshed[256];
	__u64 refreshed_ns;
};

/* The unwind tables and what the builder writes for them. */
struct sampler_tables {
	struct unwind_table *unwind;
	int rows_fd; /* the file table being written (rows_begin .. rows_end) */
	size_t rows_len;
	__u32 max_rows;	      /* row store cap */
	__u64 *slot_mem;      /* kernel memory of each file table */
	__u64 *slot_seen;     /* when a process walked alone last mapped it (atomic) */
	struct fileidx *fidx; /* copy of unwind_file_idx and unwind_files' map ids */
	__u64 rows_mem;	      /* ... all of them */
};

/* Quick start: the start-up object samples from sampler__start() on while
 * the loader thread loads the full one (skel), handed over in quick__wait(). */
struct sampler_loader {
	struct cpu_sampler *quick; /* the start-up object, or NULL */
	int handover;		   /* its prog array */
	struct sampler_opts opts;  /* the options, for the loader (no lists) */
	pthread_t thread;
	bool on;   /* started, not joined yet */
	bool done; /* under mu */
	int err;   /* the loader's result, then the hand-over's */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	__u64 t0, ns, btf_ns;
	__u64 cpu_ns; /* the loader thread's CPU, once it is done (atomic) */
};

/* Keys and values taken from a map, in two arrays grown together. */
struct sampler_take_buf {
	void *keys, *vals;
	size_t kcap, vcap; /* entries (keys), bytes (values) */
};

/* The drain's scratch and counters (main thread). */
struct sampler_drainer {
	struct drain_scratch scratch;
	struct sampler_take_buf counts;	 /* struct sample_key, __u64 */
	struct sampler_take_buf ocounts; /* struct offcpu_key, struct offcpu_val */
	struct sampler_take_buf stacks;	 /* a batch of stack entries, dropped */
	__u64 stacks_missing;
	__u64 drains;
	__u64 bpf_peak;
	__u64 fixed_mem; /* memlock of skel's maps allocated whole (0: not read yet) */
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
	bool no_prealloc; /* hash maps allocate on use (Linux >= 6.1) */
	bool halted;	  /* sampler__stop() was called */
	bool quick_mode;  /* skel is the start-up object until sampler__start() */
	/* The kernel's records of execs, forks, exits and executable mappings
	 * (NULL: not available): a new process's mappings from there. */
	struct sideband *sb;
	struct mapev *mev;
	pthread_mutex_t sb_mu;
	struct procmaps_source maps_src; /* sampler__process_maps() as a source */
	struct sampler_notices nt;
	struct sampler_builder b;
	struct sampler_tables t;
	struct sampler_tfd tfd; /* the table maps the builder writes */
	struct sampler_loader l;
	struct sampler_drainer d;
	/* thread context (OTEP 4947) */
	bool tctx_warned;
	__u32 tctx_procs; /* entries in threadctx_procs (upper bound) */
	/* CPython frames (sampler_python.c) */
	bool py_warned;
	__u32 py_procs; /* entries in py_procs (upper bound) */
	/* Late walking: samples the BPF walker could not finish. */
	struct late *late;
	bool late_on;
};

/* sampler_cpus.c */
int cpus__privileged(void); /* 1 yes, 0 no, -1 cannot tell */
int cpus__online(bool **online, __u32 *n);
int cpus__open_events(struct sampler *s, const bool *online, __u32 freq_hz); /* logs */

/* sampler_loader.c (the only file that embeds the BPF objects' ELF) */
struct cpu_sampler *loader__open(void);
void loader__explain(int err);		    /* log why a load failed, with a hint */
__u32 loader__configure_common(struct sampler *s, struct cpu_sampler *skel,
			       const struct sampler_opts *o, const struct forkhook *fh);
void loader__configure_unwind(struct sampler *s, const struct sampler_opts *o, __u32 entries,
			      const struct btf *btf);
int loader__set_filters(struct sampler *s, const struct sampler_opts *o);
int loader__load(struct sampler *s, const struct sampler_opts *o, const struct forkhook *fh);
int loader__load_following(struct sampler *s, const struct sampler_opts *o);
struct bpf_program *loader__sample_prog(const struct cpu_sampler *skel);
void loader__verifier_report(const struct bpf_program *prog, __u64 ns);

/* sampler_python.c: before load, the Python walker's switch and maps */
void python__configure(struct sampler *s, const struct sampler_opts *o);
/* sampler_php.c, sampler_ruby.c, sampler_perl.c: before load, the walkers'
 * switches (on with user stacks, unless PROFCAP_PHP / _RUBY / _PERL is 0) */
void php__configure(struct sampler *s, const struct sampler_opts *o);
void ruby__configure(struct sampler *s, const struct sampler_opts *o);
void perl__configure(struct sampler *s, const struct sampler_opts *o);
/* sampler_jvm.c: likewise (PROFCAP_JVM) */
void jvm__configure(struct sampler *s, const struct sampler_opts *o);

/* sampler_quick.c */
bool quick__wanted(const struct sampler_opts *o);
int quick__load(struct sampler *s, const struct sampler_opts *o);	/* the start-up object */
bool quick__is_shared(const struct bpf_map *m); /* a map both objects use */
int quick__share_maps(struct cpu_sampler *full, const struct cpu_sampler *quick,
		      const struct sampler_tfd *tfd);
int quick__table_maps(struct sampler *s); /* create tfd's maps */
int quick__start(struct sampler *s);	  /* the loader thread */
int quick__wait(struct sampler *s, int timeout_ms); /* the hand-over */

/* sampler_notice.c */
int notice__attach(struct sampler *s); /* the exec hook and the notice ring */
int notice__start(struct sampler *s);  /* the thread */
void notice__stop(struct sampler *s);  /* ... joined: the main thread reads the rings */
void notice__lazy_start(struct sampler *s);
int notice__late_open(struct sampler *s); /* the late ring joins the poll */
void notice__free(struct sampler *s);	  /* rings, queue, fds */

/* sampler_builder.c */
int builder__init(struct sampler *s); /* lock and queues, before any notice */
int builder__start(struct sampler *s);
/* Queue pid @entry (| SAMPLER_REFRESH_BIT) with @snap (NULL: none), of
 * which the queue takes a reference. Dropped once stopped or full. */
void builder__enqueue(struct sampler *s, __u32 entry, struct procsnap *snap);
/* Describe @tgid, left to the BPF walker alone, in a second if it lives. */
void builder__later(struct sampler *s, __u32 tgid);
/* late_tables.want: a file a late walk needs, built first, once. */
void builder__want_file(void *ctx, __u32 tgid, __u64 start, __u64 dev, __u64 ino);
void builder__stop(struct sampler *s); /* no more processes: queue emptied */
/* Ask the thread to quit and join it: false when it is in a parse, left
 * running (detached) with what it uses. */
bool builder__quit(struct sampler *s);
void builder__free(struct sampler *s);
bool builder__busy(struct sampler *s); /* building, or files wanted */

/* sampler_drain.c */
void drainer__free(struct sampler *s);

/* sampler_tables.c */
void tables__fds(struct sampler *s);  /* after load: tfd */
int tables__open(struct sampler *s);  /* the unwind table and its sink */
void tables__free(struct sampler *s);
/* Kernel memory of @skel's maps and the file tables (@fixed: a cache of
 * the maps allocated whole, 0 = not read yet; NULL: read them). */
__u64 tables__bpf_memory(const struct sampler *s, const struct cpu_sampler *skel, __u64 *fixed);
void tables__late(struct sampler *s, struct late_tables *t); /* for late walks */

#endif
