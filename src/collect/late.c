#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "cpu_sampler.h"
#include "collect/fileidx.h"
#include "collect/late.h"
#include "collect/sampler_times.h"
#include "collect/stackwalk.h"
#include "collect/unwind_table.h"
#include "proc/procmaps.h"

/* An executable file mapping of a process when its sample arrived. */
struct late_vma {
	__u64 start, end, off;
	struct unwind_file_key key; /* the kernel's dev (major << 20 | minor), inode */
};

/* The executable file mappings of one process, read when a sample of it
 * arrived (shared by its samples that arrive together). */
struct late_snap {
	unsigned int refs;
	__u32 tgid;
	__u64 comm[2]; /* thread name of the sample it was read for (an exec changes it) */
	__u64 at_ns;
	__u32 n;
	struct late_vma v[];
};

struct late_item {
	__u64 received_ns;
	size_t size;
	struct late_snap *snap; /* NULL: the process was gone (use the described mappings) */
	struct late_sample *ls; /* @size bytes: the record up to its stack copy */
	/* Settled (walked as far as it goes, or given up): the user stack, and
	 * the record shrunk to its head (the stack copy is not needed). */
	bool settled;
	__u32 flags;
	__u32 nips;
	__u64 *ips;
};

/* A file table mapped read-only, from a push to the end of the next flush. */
struct late_rows {
	__u32 slot;
	__u32 id;    /* the BPF map mapped */
	__u64 round; /* late.round when last checked to be @slot's table */
	const __u64 *rows;
	size_t len; /* mapped bytes, 0: no table */
};

#define LATE_ROWS_CACHE 16

struct late {
	struct late_item *q;
	size_t n;
	size_t bytes;
	char *proc_root;
	struct procmaps_source maps_src; /* fn NULL: maps files only */
	/* The newest snapshots (references), LATE_RECENT of them in a ring at
	 * @recent_at: a batch of notices is taken before its late samples. */
	struct late_snap *recent[LATE_RECENT];
	__u32 recent_at;
	struct late_stats st;
	pthread_mutex_t mu; /* everything here: late__push() and late__flush() run on two threads */
	/* during a flush: the process being walked and its tables */
	const struct late_tables *t;
	__u32 tgid;
	struct unwind_map *maps;
	__u32 nmaps, maps_cap;
	struct late_rows rows[LATE_ROWS_CACHE];
	__u32 nrows;
	__u64 round; /* pushes and flushes begun: a mapping is checked once in each */
	const struct late_snap *snap; /* of the sample being walked, or NULL */
	bool missing;		      /* its walk met a file whose table is not built (yet) */
	__u64 ips[PROFCAP_MAX_USTACK];
};

struct late *late__new(const char *proc_root)
{
	struct late *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	pthread_mutex_init(&l->mu, NULL);
	l->q = calloc(LATE_QUEUE_MAX, sizeof(*l->q));
	l->proc_root = strdup(proc_root);
	if (!l->q || !l->proc_root) {
		late__free(l);
		return NULL;
	}
	return l;
}

static void snap_put(struct late_snap *sn)
{
	if (sn && !--sn->refs)
		free(sn);
}

/* The executable file mappings of @pm, read at @at_ns for a sample of
 * thread name @comm of @tgid; NULL without memory. */
static struct late_snap *snap_of(const struct procmaps *pm, __u32 tgid, const __u64 *comm,
				 __u64 at_ns)
{
	size_t i, n = procmaps__count(pm);
	struct late_snap *sn = malloc(sizeof(*sn) + n * sizeof(sn->v[0]));

	if (!sn)
		return NULL;
	*sn = (struct late_snap){.refs = 1, .tgid = tgid, .at_ns = at_ns};
	memcpy(sn->comm, comm, sizeof(sn->comm));
	for (i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(pm, i);

		if (!(e->perms & PROCMAPS_EXEC) || !e->inode || e->anonymous)
			continue;
		sn->v[sn->n++] = (struct late_vma){
			.start = e->start,
			.end = e->end,
			.off = e->offset,
			.key = {.dev = UNWIND_KDEV((__u64)e->dev_major << 32 | e->dev_minor),
				.ino = e->inode},
		};
	}
	return sn;
}

/* The executable file mappings of @tgid now, NULL when it is gone. */
static struct late_snap *snap_read(struct late *l, __u32 tgid, const __u64 *comm, __u64 now_ns)
{
	struct procmaps *pm = NULL;
	struct late_snap *sn;

	l->st.maps_read++;
	if (procmaps__read_pid(&l->maps_src, l->proc_root, (int)tgid, &pm))
		return NULL;
	sn = snap_of(pm, tgid, comm, now_ns);
	procmaps__free(pm);
	return sn;
}

/* Keep snapshot @sn (its reference) among the newest, in place of the
 * oldest. */
static void keep_recent(struct late *l, struct late_snap *sn)
{
	snap_put(l->recent[l->recent_at]);
	l->recent[l->recent_at] = sn;
	l->recent_at = (l->recent_at + 1) % LATE_RECENT;
}

/* The newest snapshot of @tgid kept, borrowed, when it is for thread name
 * @comm and taken at most LATE_SNAP_SHARE_NS before @now_ns (or after it);
 * else NULL (an older one may predate an exec). */
static struct late_snap *find_recent(struct late *l, __u32 tgid, const __u64 *comm, __u64 now_ns)
{
	struct late_snap *sn;
	__u32 i;

	for (i = 1; i <= LATE_RECENT; i++) {
		sn = l->recent[(l->recent_at + LATE_RECENT - i) % LATE_RECENT];
		if (!sn || sn->tgid != tgid)
			continue;
		if (sn->at_ns + LATE_SNAP_SHARE_NS >= now_ns &&
		    !memcmp(sn->comm, comm, sizeof(sn->comm)))
			return sn;
		return NULL;
	}
	return NULL;
}

void late__set_maps_source(struct late *l, const struct procmaps_source *src)
{
	procmaps__source_set(&l->maps_src, src);
}

void late__offer_maps(struct late *l, __u32 tgid, const char *comm, const struct procmaps *pm,
		      __u64 at_ns)
{
	__u64 c[2] = {0, 0};
	struct late_snap *sn;

	if (!l || !pm)
		return;
	strncpy((char *)c, comm, sizeof(c) - 1); /* as the kernel pads a task name */
	sn = snap_of(pm, tgid, c, at_ns);
	if (!sn)
		return;
	pthread_mutex_lock(&l->mu);
	keep_recent(l, sn);
	l->st.maps_offered++;
	pthread_mutex_unlock(&l->mu);
}

static void rows_unmap(struct late *l)
{
	for (__u32 i = 0; i < l->nrows; i++)
		if (l->rows[i].len)
			munmap((void *)l->rows[i].rows, l->rows[i].len);
	l->nrows = 0;
}

void late__free(struct late *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->q[i].ls);
		free(l->q[i].ips);
		snap_put(l->q[i].snap);
	}
	for (size_t i = 0; i < LATE_RECENT; i++)
		snap_put(l->recent[i]);
	free(l->proc_root);
	rows_unmap(l);
	pthread_mutex_destroy(&l->mu);
	free(l->maps);
	free(l->q);
	free(l);
}

static int settle_now(struct late *l, struct late_item *it, bool may_wait);

static int push(struct late *l, const struct late_tables *t, const void *data, size_t len,
		__u64 now_ns);

int late__push(struct late *l, const struct late_tables *t, const void *data, size_t len,
	       __u64 now_ns)
{
	int err;

	pthread_mutex_lock(&l->mu);
	err = push(l, t, data, len, now_ns);
	pthread_mutex_unlock(&l->mu);
	return err;
}

static int push(struct late *l, const struct late_tables *t, const void *data, size_t len,
		__u64 now_ns)
{
	const size_t head = offsetof(struct late_sample, stack);
	const struct late_sample *in = data;
	struct late_snap *sn;
	struct late_sample *ls;

	if (len < head || in->len > PROFCAP_LATE_STACK || len < head + in->len || !in->nuser ||
	    in->nuser > PROFCAP_LATE_PREFIX || in->nkern > PROFCAP_MAX_STACK) {
		l->st.dropped++;
		return -EINVAL;
	}
	if (l->n == LATE_QUEUE_MAX || l->bytes + head + in->len > LATE_QUEUE_BYTES) {
		l->st.dropped++;
		return -ENOSPC;
	}
	ls = malloc(head + in->len);
	if (!ls) {
		l->st.dropped++;
		return -ENOSPC;
	}
	memcpy(ls, data, head + in->len);
	/* Its mappings now, while it lives: they may differ from what the
	 * table builder described (a library loaded since) and a short-lived
	 * process is gone by the flush. */
	sn = find_recent(l, in->key.tgid, in->key.comm, now_ns);
	if (!sn) {
		sn = snap_read(l, in->key.tgid, in->key.comm, now_ns);
		if (sn)
			keep_recent(l, sn);
	}
	if (sn)
		sn->refs++;
	l->q[l->n] = (struct late_item){
		.received_ns = now_ns, .size = head + in->len, .snap = sn, .ls = ls};
	l->bytes += head + in->len;
	l->st.received++;
	/* Walked now when its tables exist: only the frames wait for the drain. */
	if (t) {
		l->t = t;
		l->tgid = 0;
		l->nmaps = 0;
		l->round++;
		settle_now(l, &l->q[l->n], true); /* 1 or -ENOMEM: at the flush */
		l->t = NULL; /* the tables stay mapped for the next pushes */
	}
	l->n++;
	return 0;
}

size_t late__pending(struct late *l)
{
	size_t n;

	pthread_mutex_lock(&l->mu);
	n = l->n;
	pthread_mutex_unlock(&l->mu);
	return n;
}

void late__stats(struct late *l, struct late_stats *st)
{
	pthread_mutex_lock(&l->mu);
	*st = l->st;
	pthread_mutex_unlock(&l->mu);
}

/* The mappings of @tgid from unwind_procs/unwind_maps into l->maps: 0, or
 * -ENOENT when the process is not described. */
static int load_maps(struct late *l, __u32 tgid)
{
	__u32 n = 0, i;

	if (l->tgid == tgid && l->nmaps)
		return 0;
	l->tgid = 0;
	l->nmaps = 0;
	if (bpf_map_lookup_elem(l->t->procs, &tgid, &n) || !n)
		return -ENOENT;
	if (n > UNWIND_TABLE_MAX_PROC_MAPS)
		n = UNWIND_TABLE_MAX_PROC_MAPS;
	if (n > l->maps_cap) {
		struct unwind_map *m = realloc(l->maps, n * sizeof(*m));

		if (!m)
			return -ENOMEM;
		l->maps = m;
		l->maps_cap = n;
	}
	for (i = 0; i < n; i++) {
		struct unwind_map_key k = {.tgid = tgid, .index = i};

		if (bpf_map_lookup_elem(l->t->maps, &k, &l->maps[i]))
			return -ENOENT; /* being rewritten: next flush */
	}
	l->tgid = tgid;
	l->nmaps = n;
	return 0;
}

/* The id of the map in table slot @slot into *@id: 0, or -ENOENT. */
static int slot_id(const struct late_tables *t, __u32 slot, __u32 *id)
{
	if (t->idx) {
		*id = fileidx__id(t->idx, slot);
		return *id ? 0 : -ENOENT;
	}
	return bpf_map_lookup_elem(t->files, &slot, id) ? -ENOENT : 0;
}

/* At the end of a flush: unmap the rows of tables no longer in their slot
 * (the builder dropped or replaced them: a mapping would keep their memory
 * from the kernel); the others stay mapped for the next pushes and flushes
 * (an munmap is a TLB flush on every CPU the process runs on, dear in a
 * VM). */
static void rows_prune(struct late *l)
{
	__u32 i, kept = 0, id;

	for (i = 0; i < l->nrows; i++) {
		struct late_rows *r = &l->rows[i];

		if (r->len && (slot_id(l->t, r->slot, &id) || id != r->id))
			munmap((void *)r->rows, r->len);
		else if (r->len)
			l->rows[kept++] = *r;
	}
	l->nrows = kept;
}

/* The rows of file table @slot (@nrows of them), mapped read-only; NULL
 * when it cannot be. Mappings stay across pushes and flushes while their
 * slot holds the same table (rows_prune()); the first use of one in a
 * round (a push, a flush) checks that @slot still holds the same map (the
 * builder may have given it to another file). */
static const __u64 *slot_rows(struct late *l, __u32 slot, __u32 nrows)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = ((size_t)nrows * sizeof(__u64) + (size_t)page - 1) & ~((size_t)page - 1);
	struct late_rows *r = NULL;
	__u32 id = 0, i;
	void *mem;
	int fd;

	for (i = 0; i < l->nrows && !r; i++)
		if (l->rows[i].slot == slot)
			r = &l->rows[i];
	if (r && r->round == l->round)
		return r->rows;
	if (slot_id(l->t, slot, &id))
		id = 0;
	if (r && r->len && id && id == r->id && len <= r->len) {
		r->round = l->round;
		return r->rows;
	}
	if (r && r->len)
		munmap((void *)r->rows, r->len);
	if (!r && l->nrows == LATE_ROWS_CACHE)
		rows_unmap(l);
	if (!r)
		r = &l->rows[l->nrows++];
	*r = (struct late_rows){.slot = slot, .id = id, .round = l->round};
	fd = id ? bpf_map_get_fd_by_id(id) : -1;
	if (fd < 0)
		return NULL;
	mem = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (mem == MAP_FAILED)
		return NULL;
	r->len = len;
	r->rows = mem;
	return r->rows;
}

/* @addr in the snapshot of the sample being walked, with its file's table
 * found by (dev, inode) as the BPF walker does from a VMA. */
static int snap_find_map(struct late *l, __u64 addr, struct stackwalk_map *out)
{
	const struct late_snap *sn = l->snap;
	const struct late_vma *v;
	struct unwind_file f;
	__u32 lo = 0, hi = sn->n, i;

	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (sn->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= sn->v[lo - 1].end)
		return -ENOENT;
	v = &sn->v[lo - 1];
	if (l->t->idx ? fileidx__find(l->t->idx, &v->key, &f)
		      : l->t->file_idx < 0 || bpf_map_lookup_elem(l->t->file_idx, &v->key, &f)) {
		l->missing = true;
		/* Not built (a library no walk needed before): ask for it. */
		if (l->t->want && (l->t->idx || l->t->file_idx >= 0))
			l->t->want(l->t->ctx, sn->tgid, v->start, UNWIND_UDEV(v->key.dev),
				   v->key.ino);
		return -ENOENT;
	}
	for (i = 0; i < f.nseg && i < UNWIND_FILE_SEGS; i++) {
		if (v->off >= f.seg[i][0] && v->off - f.seg[i][0] < f.seg[i][2]) {
			out->m = (struct unwind_map){
				.start = v->start,
				.end = v->end,
				.bias = v->start - (f.seg[i][1] + (v->off - f.seg[i][0])),
				.first = f.slot,
				.nrows = f.nrows,
			};
			out->rows = f.nrows ? slot_rows(l, f.slot, f.nrows) : NULL;
			return 0;
		}
	}
	return -ENOENT;
}

static int find_map(void *ctx, __u64 addr, struct stackwalk_map *out)
{
	struct late *l = ctx;
	__u32 lo = 0, hi = l->nmaps;

	if (l->snap)
		return snap_find_map(l, addr, out);

	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (l->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= l->maps[lo - 1].end)
		return -ENOENT;
	out->m = l->maps[lo - 1];
	out->rows = out->m.nrows ? slot_rows(l, out->m.first, out->m.nrows) : NULL;
	return 0;
}

/* Settle @it: walk it as far as the tables go (@have: its process has
 * mappings) into it->ips, or give up. 1 when it should rather wait for a
 * table still being built (@may_wait; nothing changed), 0 once settled,
 * -ENOMEM. Its stack copy is freed when settled. */
static int settle(struct late *l, struct late_item *it, bool have, bool may_wait)
{
	const size_t head = offsetof(struct late_sample, stack);
	struct late_sample *ls = it->ls, *small;
	__u32 n = ls->nuser, flags = ls->key.flags | SAMPLER_REC_USTACK_PARTIAL;
	__u64 *ips;

	memcpy(l->ips, ls->uips, ls->nuser * sizeof(__u64));
	if (have) {
		struct stackwalk_ops ops = {.find_map = find_map, .ctx = l};
		struct stackwalk_regs regs = {.pc = ls->pc,
					      .sp = ls->sp,
					      .bp = ls->bp,
					      .bp_ok = ls->bp_ok,
					      .exact = ls->exact};
		struct stackwalk_mem mem = {.base = ls->sp, .data = ls->stack, .len = ls->len};
		enum stackwalk_end end;

		n = ls->nuser - 1; /* the stop's PC is walked again */
		l->missing = false;
		end = stackwalk__run(&ops, &regs, &mem, l->ips, &n, PROFCAP_MAX_USTACK);
		if (end != STACKWALK_COMPLETE && l->missing && may_wait)
			return 1;
		if (end == STACKWALK_COMPLETE)
			flags &= ~SAMPLER_REC_USTACK_PARTIAL;
		else if (end == STACKWALK_DEPTH)
			flags |= SAMPLER_REC_USTACK_TRUNC;
		if (end != STACKWALK_COMPLETE)
			l->st.ends[end]++;
	} else {
		l->st.no_tables++;
	}
	ips = malloc(n * sizeof(*ips));
	if (!ips)
		return -ENOMEM;
	memcpy(ips, l->ips, n * sizeof(*ips));
	it->ips = ips;
	it->nips = n;
	it->flags = flags;
	it->settled = true;
	if (flags & SAMPLER_REC_USTACK_PARTIAL)
		l->st.partial++;
	else
		l->st.complete++;
	small = realloc(ls, head); /* shrinking: failure keeps the larger block */
	if (small)
		it->ls = small;
	l->bytes -= it->size - head;
	it->size = head;
	return 0;
}

/* Settle @it with the mappings of its arrival, else those described. */
static int settle_now(struct late *l, struct late_item *it, bool may_wait)
{
	bool have;
	int ret;

	l->snap = it->snap;
	have = it->snap || (l->t->procs >= 0 && !load_maps(l, it->ls->key.tgid));
	ret = !have && may_wait ? 1 : settle(l, it, have, may_wait);
	l->snap = NULL;
	return ret;
}

/* @it (settled) as one CPU sample. */
static int emit(const struct late_item *it, sampler_record_fn fn, void *ctx)
{
	const struct late_sample *ls = it->ls;
	struct sampler_time when;
	struct sampler_record r = {
		.kind = SAMPLER_KIND_CPU,
		.tgid = ls->key.tgid,
		.tid = ls->key.tid,
		.flags = it->flags,
		.count = 1,
		.ustack = it->ips,
		.nustack = it->nips,
		.kstack = ls->nkern ? ls->kips : NULL,
		.nkstack = ls->nkern,
		.pystack = ls->npy ? ls->pyips : NULL,
		.npystack = ls->npy <= 2 * PROFCAP_PY_MAX_FRAMES ? ls->npy & ~1u : 0,
		.rtstack = ls->nrt ? ls->rtips : NULL,
		.nrtstack = ls->nrt <= PROFCAP_V8_WORDS * PROFCAP_V8_MAX_FRAMES
				    ? ls->nrt - ls->nrt % PROFCAP_V8_WORDS
				    : 0,
		.attrs_size = ls->key.attrs_size,
	};

	memcpy(r.comm, ls->key.comm, 16);
	memcpy(r.trace_id, ls->key.trace_id, sizeof(r.trace_id));
	memcpy(r.span_id, &ls->key.span_id, sizeof(r.span_id));
	memcpy(r.attrs, ls->key.attrs, sizeof(r.attrs));
	if (ls->timed)
		times__one(&r, &when, ls->time, ls->cpu);
	return fn(ctx, &r);
}

int late__flush(struct late *l, const struct late_tables *t, __u64 now_ns, bool final,
		sampler_record_fn fn, void *ctx)
{
	struct late_item *ready = NULL;
	size_t i, kept = 0, n = 0;
	int err = 0;

	/* Under the lock: settle what can be, take out what is ready. */
	pthread_mutex_lock(&l->mu);
	if (l->n)
		ready = malloc(l->n * sizeof(*ready));
	l->t = t;
	l->tgid = 0;
	l->nmaps = 0;
	l->round++;
	for (i = 0; i < l->n; i++) {
		struct late_item *it = &l->q[i];
		bool may_wait = !final && now_ns - it->received_ns < LATE_WAIT_NS;
		int ret = !ready ? 1 : it->settled ? 0 : settle_now(l, it, may_wait);

		if (ret) {
			l->q[kept++] = *it; /* its tables may come (or no memory now) */
			continue;
		}
		l->bytes -= it->size;
		ready[n++] = *it;
	}
	l->n = kept;
	rows_prune(l);
	l->t = NULL;
	pthread_mutex_unlock(&l->mu);
	/* Outside it: the caller's work (symbolization) does not hold up the
	 * thread that pushes. */
	for (i = 0; i < n; i++) {
		if (!err)
			err = emit(&ready[i], fn, ctx);
		free(ready[i].ls);
		free(ready[i].ips);
		snap_put(ready[i].snap);
	}
	free(ready);
	return err;
}
