/* sampler_notice.c - the notice thread: polls the ring buffers (notices of
 * new processes, late samples, side-band records) so a new process is
 * snapshotted (proc/procsnap.h) the moment it is announced, whatever the
 * main thread is doing (a drain, the parse of a new binary); and the main
 * thread's side: sampler__poll() takes the notices it queued. Stopped by
 * sampler__stop(); from then on the main thread reads the rings itself. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "collect/fileidx.h"
#include "collect/late.h"
#include "collect/sampler_int.h"
#include "collect/sideband.h"
#include "proc/mapev.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/log.h"

/* Notices wake the main thread only once this many wait: it takes them at
 * its next drain (at most a second away), before the samples they describe.
 * Their snapshots were taken when they came, so waiting loses nothing, and
 * a host starting many processes a second does not pay a wake-up (and a
 * context switch) for each. */
#define SAMPLER_NOTICE_WAKE 256u

static int on_late(void *ctx, void *data, size_t len)
{
	struct sampler *s = ctx;
	struct late_tables t;

	tables__late(s, &t);
	late__push(s->late, &t, data, len, s->nt.pass_ns); /* a failure is counted */
	return 0;
}

/* Once the full object is loaded: its late-walking ring joins the notice
 * thread's poll. */
int notice__late_open(struct sampler *s)
{
	struct epoll_event ev = {.events = EPOLLIN};

	if (!s->skel->rodata->want_late || s->late_on || !s->nt.rb)
		return 0;
	if (!s->late) {
		s->late = late__new("/proc");
		if (s->late && s->sb)
			late__set_maps_source(s->late, &s->maps_src);
	}
	if (!s->late)
		return -ENOMEM;
	s->nt.lrb = ring_buffer__new(bpf_map__fd(s->skel->maps.late), on_late, s, NULL);
	ev.data.ptr = s->nt.lrb;
	if (!s->nt.lrb || (s->nt.epoll >= 0 &&
			epoll_ctl(s->nt.epoll, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->nt.lrb), &ev))) {
		pr_warn("late walking is off: cannot poll its ring buffer: %s", strerror(errno));
		return 0;
	}
	__atomic_store_n(&s->late_on, true, __ATOMIC_RELEASE); /* read by the notice thread */
	return 0;
}

/* Let the BPF programs send what can wait for the next sampler__poll()
 * without waking the notice thread (lazy_wake, bpf/cpu_sampler/notice.bpf.h):
 * with the side-band records running, which hold the mappings of a process
 * exec()ed since, and the full object's exec hook, which tells such a
 * process by its start time. PROFCAP_NO_LAZY=1 keeps every wake-up. */
void notice__lazy_start(struct sampler *s)
{
	const char *env = env__get(env__process(), "PROFCAP_NO_LAZY");

	if (!s->sb || !s->exec_link || !s->skel->rodata->task_start_off ||
	    !s->skel->rodata->task_leader_off || (env && strcmp(env, "0")))
		return;
	s->skel->bss->lazy_wake = 1;
	s->nt.lazy = true;
}

/* Side-band records lost: a process exec()ed since may be missing from
 * them, and its notice must be read at once again. The main thread goes
 * on taking the rings at each poll (a record sent lazily as the flag
 * changed would otherwise wait for the ring to fill). */
static void lazy_check(struct sampler *s)
{
	struct sideband_stats st;

	if (!s->nt.lazy || !s->skel || !s->skel->bss->lazy_wake)
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

	pthread_mutex_lock(&s->nt.mu);
	kept = !queue__push(s->nt.queue, &(struct sampler_notice){.tgid = tgid, .snap = snap});
	if (!kept)
		s->nt.lost++;
	wake = !tgid || queue__len(s->nt.queue) >= SAMPLER_NOTICE_WAKE;
	pthread_mutex_unlock(&s->nt.mu);
	if (!kept)
		procsnap__free(snap);
	if (wake && write(s->nt.wake_fd, &one, sizeof(one)) < 0) {
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
	__atomic_fetch_add(g.maps ? &s->nt.snaps_ev : &s->nt.snaps_proc, 1, __ATOMIC_RELAXED);
	return procsnap__read_given("/proc", (int)e->tgid, e->cgroup, e->css, &s->nt.cgroups, &g, out);
}

/* Can the BPF walker unwind new process @snap without entries of its own
 * (bpf_find_vma() and late walking on, its program's table built)? Then
 * the table builder has nothing to do for it now: the walker finds its
 * mappings from the kernel's VMAs, and a late walk asks for a library's
 * table. Most such processes (a compiler's) are gone within a second; one
 * still running then is described (builder__later()). Marks the program's table
 * seen now, which keeps it from the reclaim of unused tables. */
static bool walks_alone(struct sampler *s, const struct procsnap *snap)
{
	const struct procmaps_entry *e = NULL;
	struct unwind_file_key k;
	struct unwind_file f;
	size_t i, n;

	if (!s->tfd.vma || !s->t.fidx || !snap || !snap->maps || !s->t.slot_seen ||
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
	if (fileidx__find(s->t.fidx, &k, &f) || f.slot >= SAMPLER_UNWIND_FILES || !f.nrows)
		return false;
	__atomic_store_n(&s->t.slot_seen[f.slot], clock__mono_ns(), __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->nt.walked_alone, 1, __ATOMIC_RELAXED);
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
		pthread_mutex_lock(&s->nt.mu);
		s->nt.norseq = true;
		pthread_mutex_unlock(&s->nt.mu);
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
		__atomic_fetch_add(s->nt.on && pthread_equal(pthread_self(), s->nt.thread)
					   ? &s->nt.snap_cpu_ns
					   : &s->nt.snap_main_cpu_ns,
				   clock__thread_cpu_ns() - cpu, __ATOMIC_RELAXED);
	if (err)
		snap = NULL;
	else
		snap->start = e->start; /* before another thread sees it */
	if (snap && __atomic_load_n(&s->late_on, __ATOMIC_ACQUIRE))
		/* its first samples' late walks need these maps too */
		late__offer_maps(s->late, e->tgid, snap->comm, snap->maps, snap->at_ns);
	/* Queued until the builder starts, when it has not yet. */
	if (s->t.unwind && walks_alone(s, snap))
		builder__later(s, e->tgid);
	else if (s->t.unwind)
		builder__enqueue(s, e->tgid, snap);
	notice(s, e->tgid, snap);
	return 0;
}

/* Read the notices' ring, then with @late the late samples' (new processes
 * before late walks: a process's first sample sends both, and its snapshot
 * serves both), on whichever thread calls: the notice thread when a record
 * woke it, the main thread at its polls. */
static void read_rings(struct sampler *s, bool late)
{
	pthread_mutex_lock(&s->nt.ring_mu);
	s->nt.pass_ns = clock__mono_ns();
	ring_buffer__consume(s->nt.rb);
	if (late)
		ring_buffer__consume(s->nt.lrb);
	pthread_mutex_unlock(&s->nt.ring_mu);
}

static void *notice_main(void *arg)
{
	struct sampler *s = arg;
	struct epoll_event evs[4];
	int n, i;

	for (;;) {
		n = epoll_wait(s->nt.epoll, evs, 4, -1);
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
			read_rings(s, evs[i].data.ptr == s->nt.lrb);
		}
	}
out:
	procmaps__thread_done();
	__atomic_store_n(&s->nt.cpu_ns, clock__thread_cpu_ns(), __ATOMIC_RELAXED);
	return NULL;
}

/* The notice thread, with every signal blocked (they go to the main
 * thread, whose poll they interrupt). 0 or -errno (logged). */
int notice__start(struct sampler *s)
{
	struct epoll_event ev = {.events = EPOLLIN};
	sigset_t all, old;
	int err;

	s->nt.epoll = epoll_create1(EPOLL_CLOEXEC);
	s->nt.quit_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->nt.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->nt.queue = queue__new(SAMPLER_PENDING_MAX, sizeof(struct sampler_notice));
	if (s->nt.epoll < 0 || s->nt.quit_fd < 0 || s->nt.wake_fd < 0 || !s->nt.queue)
		goto fail;
	ev.data.ptr = NULL;
	if (epoll_ctl(s->nt.epoll, EPOLL_CTL_ADD, s->nt.quit_fd, &ev))
		goto fail;
	ev.data.ptr = s->nt.rb;
	if (epoll_ctl(s->nt.epoll, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->nt.rb), &ev))
		goto fail;
	ev.data.ptr = s->sb;
	for (__u32 i = 0; s->sb && i < sideband__count(s->sb); i++)
		if (sideband__fd(s->sb, i) >= 0 &&
		    epoll_ctl(s->nt.epoll, EPOLL_CTL_ADD, sideband__fd(s->sb, i), &ev))
			goto fail;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&s->nt.thread, NULL, notice_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		errno = err;
		goto fail;
	}
	s->nt.on = true;
	return 0;
fail:
	err = -errno;
	pr_err("cannot start the notice thread: %s", strerror(errno));
	return err ? err : -ENOMEM;
}

/* Stop the notice thread: from here on the main thread consumes the rings. */
void notice__stop(struct sampler *s)
{
	const __u64 one = 1;

	if (!s->nt.on)
		return;
	if (write(s->nt.quit_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(s->nt.thread, NULL);
	s->nt.on = false;
}

/* After load: the exec hook and the ring buffer (the fork hook is attached
 * by load_following()). 0, or -errno after logging why. */
int notice__attach(struct sampler *s)
{
	int err;

	/* Without it (a kernel lacking the tracepoint), a process that
	 * exec()s keeps the tables of its first program until a refresh. */
	s->exec_link = bpf_program__attach(s->skel->progs.profcap_exec);
	if (!s->exec_link)
		pr_debug("exec tracepoint not attached: %s", strerror(errno));
	s->nt.rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_event, s, NULL);
	if (!s->nt.rb) {
		err = -errno;
		pr_err("cannot open the BPF ring buffer: %s (needs Linux >= 5.8)", strerror(-err));
		return err;
	}
	return 0;
}

/* Hand the notices waiting to @fn (not before the hand-over of a quick
 * start: the caller's handler uses the full object). The count. */
static int take_notices(struct sampler *s, sampler_proc_fn fn, void *ctx)
{
	struct sampler_notice *q;
	size_t n, i;
	bool norseq;
	int got = 0;

	if (s->l.on)
		return 0;
	/* The queue's length as it is now: only that many are taken (more
	 * may come meanwhile: they stay for the next call). */
	pthread_mutex_lock(&s->nt.mu);
	n = queue__len(s->nt.queue);
	pthread_mutex_unlock(&s->nt.mu);
	q = malloc((n ? n : 1) * sizeof(*q));
	if (!q)
		return -ENOMEM;
	pthread_mutex_lock(&s->nt.mu);
	n = queue__take(s->nt.queue, q, n);
	norseq = s->nt.norseq;
	s->nt.norseq = false;
	pthread_mutex_unlock(&s->nt.mu);
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
	struct pollfd pfd = {.fd = s->nt.wake_fd, .events = POLLIN};
	__u64 cnt;
	int n;

	/* Until the hand-over, notices wait; stopped, the rest of the load is
	 * waited for. */
	if (s->l.on) {
		n = quick__wait(s, s->halted ? -1 : 0);
		if (n && n != -EAGAIN)
			return n;
	}
	if (!s->nt.on || s->nt.lazy) {
		/* Stopped, or records that did not wake the notice thread:
		 * what the rings hold, on this thread (notices first). */
		lazy_check(s);
		read_rings(s, s->nt.lrb != NULL);
	}
	n = take_notices(s, fn, ctx);
	if (n || !timeout_ms)
		return n;
	if (poll(&pfd, 1, timeout_ms) < 0)
		return -errno; /* -EINTR: a signal */
	if (read(s->nt.wake_fd, &cnt, sizeof(cnt)) < 0) {
		/* nothing pending (EAGAIN) */
	}
	return take_notices(s, fn, ctx);
}

void notice__free(struct sampler *s)
{
	struct sampler_notice n;

	notice__stop(s);
	ring_buffer__free(s->nt.lrb);
	ring_buffer__free(s->nt.rb);
	s->nt.lrb = s->nt.rb = NULL;
	while (s->nt.queue && !queue__pop(s->nt.queue, &n))
		procsnap__free(n.snap);
	queue__free(s->nt.queue);
	s->nt.queue = NULL;
	if (s->nt.epoll >= 0)
		close(s->nt.epoll);
	if (s->nt.quit_fd >= 0)
		close(s->nt.quit_fd);
	if (s->nt.wake_fd >= 0)
		close(s->nt.wake_fd);
	s->nt.epoll = s->nt.quit_fd = s->nt.wake_fd = -1;
}
