/* jvmframes_threads.c - Java thread names by kernel thread id (see
 * jvmframes_threads.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proc/jvmproc.h"
#include "symbolize/jvmframes_threads.h"
#include "util/htab.h"
#include "util/intern.h"

#define NO_NAME 0xffffffffu
#define MAX_PROCS 1024

/* A thread: its name's index in the strings, NO_NAME when it has none
 * (not a Java thread when the list was read, a name not readable). */
struct jt_thread {
	__u32 pid, tid;
	__u32 name;
	__u32 pad;
};

/* A process: when its thread list may be read next. */
struct jt_proc {
	__u32 pid;
	__u32 pad;
	__u64 next_ns;
};

struct jvmthreads {
	const char *proc_root;
	struct htab threads; /* struct jt_thread */
	struct htab procs;   /* struct jt_proc */
	struct intern *strings;
	size_t bytes;
	int *tids;    /* JVMTHREADS_READ: one read of a thread list */
	__u64 *addrs; /* ... their JavaThreads */
};

struct jt_key {
	__u32 pid, tid;
};

static bool thread_eq(const void *elem, const void *key, void *ctx)
{
	const struct jt_thread *t = elem;
	const struct jt_key *k = key;

	(void)ctx;
	return t->pid == k->pid && t->tid == k->tid;
}

static bool proc_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct jt_proc *)elem)->pid == *(const __u32 *)key;
}

struct jvmthreads *jvmthreads__new(const char *proc_root)
{
	struct jvmthreads *jt = calloc(1, sizeof(*jt));

	if (!jt)
		return NULL;
	jt->proc_root = proc_root;
	jt->strings = intern__new(JVMTHREADS_MAX);
	jt->tids = calloc(JVMTHREADS_READ, sizeof(*jt->tids));
	jt->addrs = calloc(JVMTHREADS_READ, sizeof(*jt->addrs));
	if (!jt->strings || !jt->tids || !jt->addrs ||
	    htab__init(&jt->threads, sizeof(struct jt_thread), JVMTHREADS_MAX) ||
	    htab__init(&jt->procs, sizeof(struct jt_proc), MAX_PROCS)) {
		jvmthreads__free(jt);
		return NULL;
	}
	return jt;
}

void jvmthreads__free(struct jvmthreads *jt)
{
	if (!jt)
		return;
	htab__release(&jt->threads);
	htab__release(&jt->procs);
	intern__free(jt->strings);
	free(jt->tids);
	free(jt->addrs);
	free(jt);
}

void jvmthreads__forget(struct jvmthreads *jt, int pid)
{
	struct jt_thread *t;
	struct jt_proc *p;
	__u32 key = (__u32)pid;
	size_t it = 0;

	if (!jt)
		return;
	p = htab__find(&jt->procs, htab__hash_u64(key, 0), &key, proc_eq, NULL);
	if (p)
		htab__remove(&jt->procs, p);
	while ((t = htab__next(&jt->threads, &it)))
		if (t->pid == key)
			htab__remove(&jt->threads, t);
}

static struct jt_thread *find(const struct jvmthreads *jt, int pid, int tid)
{
	struct jt_key k = {(__u32)pid, (__u32)tid};

	return htab__find(&jt->threads, htab__hash_u64(k.pid, k.tid), &k, thread_eq, NULL);
}

/* Thread @tid of @pid named @name (NULL: none). */
static void remember(struct jvmthreads *jt, int pid, int tid, const char *name)
{
	struct jt_thread *t;
	__u32 idx = NO_NAME;
	size_t len = name ? strlen(name) + 1 : 0;

	if (name && jt->bytes + len <= JVMTHREADS_MAX_BYTES &&
	    !intern__put(jt->strings, name, len, &idx, NULL))
		jt->bytes += len;
	if (htab__add(&jt->threads, htab__hash_u64((__u32)pid, (__u32)tid), (void **)&t))
		return; /* full: asked again, read again when due */
	*t = (struct jt_thread){.pid = (__u32)pid, .tid = (__u32)tid, .name = idx};
}

/* Read process @pid's Java threads not known yet, when due: false when
 * not due. */
static bool read_threads(struct jvmthreads *jt, const struct jvmproc *jp, int pid, __u64 now_ns)
{
	char name[JVMPROC_MAX_NAME * 3 + 1];
	__u32 key = (__u32)pid;
	struct jt_proc *p;
	int n, i;

	p = htab__find(&jt->procs, htab__hash_u64(key, 0), &key, proc_eq, NULL);
	if (p && now_ns < p->next_ns)
		return false;
	if (!p && htab__add(&jt->procs, htab__hash_u64(key, 0), (void **)&p))
		return false;
	p->pid = key;
	p->next_ns = now_ns + JVMTHREADS_EVERY_NS;
	n = jvmproc__threads(jt->proc_root, pid, jp, jt->tids, jt->addrs, JVMTHREADS_READ);
	for (i = 0; i < n; i++) {
		if (find(jt, pid, jt->tids[i]))
			continue;
		if (jvmproc__thread_name(jt->proc_root, pid, jp, jt->addrs[i], name, sizeof(name)))
			continue; /* no Thread object yet: read again next time */
		remember(jt, pid, jt->tids[i], name);
	}
	return true;
}

const char *jvmthreads__name(struct jvmthreads *jt, const struct jvmproc *jp, int pid, int tid,
			     const char *comm, __u64 now_ns)
{
	struct jt_thread *t;
	const char *name;

	if (!jt || !jp || !jp->names || !comm || !*comm)
		return NULL;
	t = find(jt, pid, tid);
	if (!t && read_threads(jt, jp, pid, now_ns)) {
		t = find(jt, pid, tid);
		if (!t) /* not a Java thread (a GC worker, a native one) */
			remember(jt, pid, tid, NULL);
	}
	if (!t || t->name == NO_NAME)
		return NULL;
	name = intern__get(jt->strings, t->name, NULL);
	return name && !strncmp(name, comm, strlen(comm)) ? name : NULL;
}
