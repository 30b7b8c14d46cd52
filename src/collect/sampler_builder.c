/* sampler_builder.c - the table builder thread: parses files and writes the
 * unwind table maps off the thread that takes notices and drains samples,
 * so a new binary's parse delays neither the snapshot of a short-lived
 * process nor a drain; and the periodic reclaim. Its work comes from three
 * queues under b.mu: files late walks wait for (first), new processes and
 * refreshes (oldest first), and processes left to the BPF walker alone,
 * described when due if still alive. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "collect/sampler_int.h"
#include "util/clock.h"
#include "util/log.h"

/* A new process the BPF walker serves alone (walks_alone()) is described
 * by the builder this long after its notice if it is still alive: one that
 * lives on gets entries of its own (no VMA lookup or late walk per sample),
 * the short-lived majority is gone by then and costs a kill(pid, 0). */
#define SAMPLER_LATER_NS 1000000000ull
/* A process's snapshot younger than this when the table builder gets to it
 * stands for its maps file (read again otherwise: it may have mapped more).
 * Where the walker finds unlisted mappings itself (bpf_find_vma(), Linux
 * >= 5.17 with BTF), any snapshot does: a library mapped since is found
 * from its VMA (the builder is often behind, queued after the parse of a
 * new binary). */
#define SAMPLER_SNAP_FRESH_NS 2000000ull
/* Exited processes and unused file tables are reclaimed this often. */
#define SAMPLER_GC_NS 5000000000ull

int builder__init(struct sampler *s)
{
	if (pthread_mutex_init(&s->b.mu, NULL) || pthread_cond_init(&s->b.cv, NULL))
		return -EAGAIN;
	s->b.pending = queue__new(SAMPLER_PENDING_MAX, sizeof(struct sampler_pending));
	s->b.later = queue__new(SAMPLER_PENDING_MAX, sizeof(struct sampler_later));
	s->b.want = queue__new(SAMPLER_WANT_MAX, sizeof(struct sampler_want));
	return s->b.pending && s->b.later && s->b.want ? 0 : -ENOMEM;
}

void builder__want_file(void *ctx, __u32 tgid, __u64 start, __u64 dev, __u64 ino)
{
	struct sampler *s = ctx;
	const struct sampler_want *w;
	size_t i;

	pthread_mutex_lock(&s->b.mu);
	for (i = 0; (w = queue__at(s->b.want, i)); i++)
		if (w->dev == dev && w->ino == ino)
			break; /* asked already: one build serves every process */
	/* Stopped too: the last drain's late walks wait for these. */
	if (!w && !s->b.quit &&
	    !queue__push(s->b.want, &(struct sampler_want){tgid, start, dev, ino}))
		pthread_cond_signal(&s->b.cv);
	pthread_mutex_unlock(&s->b.mu);
}

void builder__enqueue(struct sampler *s, __u32 entry, struct procsnap *snap)
{
	struct sampler_pending p = {.entry = entry, .snap = snap};

	pthread_mutex_lock(&s->b.mu);
	if (!s->b.stopped && !queue__push(s->b.pending, &p)) {
		procsnap__get(snap); /* the queue's reference */
		pthread_cond_signal(&s->b.cv);
	}
	pthread_mutex_unlock(&s->b.mu);
}

/* Empty the builder's queue of processes (under b.mu). */
static void pending_clear(struct sampler *s)
{
	struct sampler_pending p;

	while (s->b.pending && !queue__pop(s->b.pending, &p))
		procsnap__free(p.snap);
}

void builder__later(struct sampler *s, __u32 tgid)
{
	struct sampler_later l = {.tgid = tgid, .due_ns = clock__mono_ns() + SAMPLER_LATER_NS};

	/* No wake-up: the builder looks when it wakes, at the latest a
	 * second after. A full queue drops its oldest. */
	pthread_mutex_lock(&s->b.mu);
	if (!s->b.stopped)
		queue__push_evict(s->b.later, &l, NULL);
	pthread_mutex_unlock(&s->b.mu);
}

/* The next job, under b.mu: a file (*@want set, true), else a process in
 * *@p (entry 0: time for the reclaim). False: nothing yet, or quit. */
static bool next_job(struct sampler *s, __u64 last_gc, struct sampler_want *want, bool *is_want,
		     struct sampler_pending *p)
{
	const struct sampler_later *l;
	struct timespec ts;

	*is_want = !queue__pop(s->b.want, want);
	if (*is_want)
		return true;
	*p = (struct sampler_pending){0};
	if (!queue__pop(s->b.pending, p))
		return true; /* oldest first: one that exited costs a failed open */
	l = queue__at(s->b.later, 0);
	if (l && l->due_ns <= clock__mono_ns()) {
		/* as a refresh: described unless gone or described since */
		p->entry = l->tgid | SAMPLER_REFRESH_BIT;
		queue__pop(s->b.later, NULL);
		return true;
	}
	/* Due ones wait for this wake-up (at most a second): a wake-up per
	 * due time would be one per process. */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	pthread_cond_timedwait(&s->b.cv, &s->b.mu, &ts);
	if (s->b.quit || queue__len(s->b.pending) || queue__len(s->b.want) ||
	    clock__mono_ns() - last_gc < SAMPLER_GC_NS)
		return false;
	return true; /* entry 0: the reclaim */
}

/* Build what @p asks for (outside b.mu). */
static void build(struct sampler *s, const struct sampler_pending *p)
{
	const struct procsnap *snap = p->snap;
	int pid = (int)(p->entry & ~SAMPLER_REFRESH_BIT);

	if (p->entry & SAMPLER_REFRESH_BIT) {
		/* Partial stacks of a process gone by the drain (most, under
		 * churn) ask for entries no sample would use. */
		if (!kill(pid, 0) || errno != ESRCH)
			unwind_table__refresh(s->t.unwind, pid);
	} else if (p->entry && snap && snap->maps &&
		   (s->tfd.vma || clock__mono_ns() - snap->at_ns <= SAMPLER_SNAP_FRESH_NS)) {
		/* The notice thread's snapshot when just taken (the builder
		 * was idle): a read of the maps would say the same. */
		unwind_table__add_process_maps(s->t.unwind, pid, snap->maps, snap->start);
	} else if (p->entry) {
		unwind_table__add_process(s->t.unwind, pid);
	}
}

static void *builder_main(void *arg)
{
	struct sampler *s = arg;
	__u64 last_gc = clock__mono_ns();
	struct sampler_pending p;
	struct sampler_want w;
	bool is_want;

	pthread_mutex_lock(&s->b.mu);
	while (!s->b.quit) {
		/* Libraries' tables wait for a walk that needs them once late
		 * walking (which asks for them) is on. */
		unwind_table__set_lazy(s->t.unwind,
				       s->tfd.vma && __atomic_load_n(&s->late_on, __ATOMIC_ACQUIRE));
		if (!next_job(s, last_gc, &w, &is_want, &p))
			continue;
		s->b.busy = true;
		pthread_mutex_unlock(&s->b.mu);
		if (is_want) {
			unwind_table__add_file(s->t.unwind, (int)w.tgid, w.start, w.dev, w.ino);
		} else {
			build(s, &p);
			procsnap__free(p.snap);
			if (clock__mono_ns() - last_gc >= SAMPLER_GC_NS) {
				unwind_table__gc(s->t.unwind, UNWIND_TABLE_FILE_TTL_NS);
				last_gc = clock__mono_ns();
			}
		}
		pthread_mutex_lock(&s->b.mu);
		s->b.busy = false;
		unwind_table__stats(s->t.unwind, &s->b.ut_stats);
	}
	pthread_mutex_unlock(&s->b.mu);
	procmaps__thread_done();
	__atomic_store_n(&s->b.cpu_ns, clock__thread_cpu_ns(), __ATOMIC_RELAXED);
	return NULL;
}

int builder__start(struct sampler *s)
{
	if (!s->t.unwind || s->b.on)
		return 0;
	unwind_table__stats(s->t.unwind, &s->b.ut_stats);
	if (pthread_create(&s->b.thread, NULL, builder_main, s)) {
		pr_err("cannot start the unwind table builder thread");
		return -EAGAIN;
	}
	s->b.on = true;
	return 0;
}

void builder__stop(struct sampler *s)
{
	if (!s->b.on)
		return;
	pthread_mutex_lock(&s->b.mu);
	s->b.stopped = true;
	pending_clear(s);
	pthread_mutex_unlock(&s->b.mu);
}

bool builder__busy(struct sampler *s)
{
	bool busy;

	pthread_mutex_lock(&s->b.mu);
	busy = s->b.busy || queue__len(s->b.want); /* tables the late queue waits for */
	pthread_mutex_unlock(&s->b.mu);
	return busy;
}

bool builder__quit(struct sampler *s)
{
	bool busy;

	if (!s->b.on)
		return true;
	pthread_mutex_lock(&s->b.mu);
	s->b.quit = true;
	busy = s->b.busy;
	pthread_cond_signal(&s->b.cv);
	pthread_mutex_unlock(&s->b.mu);
	if (busy) {
		/* In a parse (a large binary on a busy host can take seconds):
		 * nothing needs it any more, and the process is about to
		 * exit. Leave it what it uses. */
		pthread_detach(s->b.thread);
		return false;
	}
	pthread_join(s->b.thread, NULL);
	s->b.on = false;
	return true;
}

void builder__free(struct sampler *s)
{
	pending_clear(s); /* no thread left that takes or gives */
	queue__free(s->b.pending);
	queue__free(s->b.later);
	queue__free(s->b.want);
	s->b.pending = s->b.later = s->b.want = NULL;
}

int sampler__add_process(struct sampler *s, int pid)
{
	if (!s->t.unwind)
		return 0;
	if (!s->b.on)
		return unwind_table__add_process(s->t.unwind, pid);
	builder__enqueue(s, (__u32)pid, NULL);
	return 0;
}

int sampler__refresh_process(struct sampler *s, int pid)
{
	__u32 *last;
	__u64 now;

	if (!s->t.unwind)
		return 0;
	if (!s->b.on)
		return unwind_table__refresh(s->t.unwind, pid);
	/* One request per process and second is plenty (the builder rate-
	 * limits too): partial records come by the thousand. */
	now = clock__mono_ns();
	if (now - s->b.refreshed_ns > UNWIND_TABLE_REFRESH_NS) {
		memset(s->b.refreshed, 0, sizeof(s->b.refreshed));
		s->b.refreshed_ns = now;
	}
	last = &s->b.refreshed[(__u32)pid % 256];
	if (*last == (__u32)pid)
		return 0;
	*last = (__u32)pid;
	builder__enqueue(s, (__u32)pid | SAMPLER_REFRESH_BIT, NULL);
	return 0;
}
