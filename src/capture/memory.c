/* memory.c - the memory side of a session (see memory.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "capture/ingest.h"
#include "capture/memory.h"
#include "collect/sampler.h"
#include "model/view.h"
#include "symbolize/symbolizer.h"
#include "util/array.h"
#include "util/env.h"
#include "util/clock.h"
#include "util/htab.h"
#include "util/log.h"

struct memory {
	struct memsampler *ms;
	struct sampler *smp; /* borrowed; NULL once it stops */
	struct memory_opts o;
	int *pids; /* targets (with -- CMD, its pid), unless system-wide */
	size_t npids;
	struct memory_stats st;	  /* at the end */
	__u64 dropped;		  /* records the profile could not hold */
	__u64 lost_reported;	  /* losses memory__window_lost() gave so far */
	__u64 throttled_reported; /* ... memory__window_throttled() */
	__u64 untimed_reported;	  /* sampled allocations without time counted so far */
	struct profile_frame frames[SAMPLER_MAX_USTACK];
};

int memory__find_program(const char *argv0, const char *path, char *out, size_t len)
{
	const char *p = path, *end;
	int n;

	if (strchr(argv0, '/')) {
		n = snprintf(out, len, "%s", argv0);
		return n > 0 && (size_t)n < len && !access(out, X_OK) ? 0 : -ENOENT;
	}
	while (p && *p) {
		end = strchr(p, ':');
		n = end ? (int)(end - p) : (int)strlen(p);
		if (n) {
			int k = snprintf(out, len, "%.*s/%s", n, p, argv0);

			if (k > 0 && (size_t)k < len && !access(out, X_OK))
				return 0;
		}
		p = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

void memory__human_bytes(__u64 bytes, char *out, size_t len)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(out, len, "%llu B", (unsigned long long)bytes);
		return;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(out, len, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, units[u]);
}

int memory__start(const struct memory_opts *o, struct sampler *smp, const int *pids, size_t n,
		  pid_t cmd, const char *argv0, struct memory **out)
{
	const char *path = env__get(env__process(), "PATH");
	char exe[4096];
	struct memory *m;
	size_t i;
	int err;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->o = *o;
	m->pids = calloc(n + 1, sizeof(*m->pids));
	if (!m->pids) {
		free(m);
		return -ENOMEM;
	}
	m->smp = smp;
	err = memsampler__new(smp, o, &m->ms);
	for (i = 0; !err && i < n; i++) {
		m->pids[m->npids++] = pids[i];
		if (pids[i] != cmd)
			err = memsampler__attach_pid(m->ms, pids[i]);
	}
	if (!err && cmd) {
		if (n == 0)
			m->pids[m->npids++] = cmd;
		if (memory__find_program(argv0, path ? path : "/usr/bin:/bin", exe, sizeof(exe)))
			pr_warn("--memory: cannot find '%s' before it runs: its allocations are "
				"seen "
				"from its first CPU sample on",
				argv0);
		else
			err = memsampler__attach_exec(m->ms, cmd, exe);
	}
	if (!err && o->system_wide) {
		pr_warn("--memory on every process: each allocation and free on the host traps "
			"to the kernel (measured ~13 us each on a VM, docs/memory.md); prefer -p "
			"PID "
			"or -- CMD");
	}
	if (err) {
		memory__free(m);
		return err;
	}
	*out = m;
	return 0;
}

void memory__on_process(struct memory *m, int pid)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; !m->o.system_wide && i < m->npids && m->pids[i] != pid; i++)
		;
	if (m->o.system_wide || i < m->npids)
		memsampler__attach_pid(m->ms, pid);
	else if (memsampler__followed(m->ms, pid))
		memsampler__attach_child(m->ms, pid); /* a child of a target */
	else
		return;
	/* A target's tables now, all its files: its allocations are walked
	 * from its first calls (an exec()ed process is otherwise described
	 * lazily, file by file). */
	if (!m->o.system_wide && m->smp)
		sampler__add_process(m->smp, pid);
}

/* The process of @r as the symbolizer knows it, into @desc. */
static void describe(struct ingest *in, const struct sampler_record *r,
		     struct profile_process_desc *desc)
{
	const struct profile_process_desc *known = symbolizer__process(in->sym, (int)r->tgid);

	if (!known && !symbolizer__tried(in->sym, (int)r->tgid)) {
		symbolizer__add_process(in->sym, (int)r->tgid);
		known = symbolizer__process(in->sym, (int)r->tgid);
	}
	memset(desc, 0, sizeof(*desc));
	desc->pid = r->tgid;
	if (known)
		*desc = *known;
	else
		desc->exe_name = r->comm;
}

struct memory_ctx {
	struct memory *m;
	struct ingest *in;
	bool window_end;
	__u32 refreshed[16]; /* processes whose mappings this drain read again */
	unsigned nrefreshed;
};

/* The frames of @r into m->frames: false when one fell in no mapping the
 * symbolizer knows. */
static bool resolve(struct memory_ctx *c, const struct sampler_record *r)
{
	bool unmapped = false;
	__u32 i;

	for (i = 0; i < r->nustack; i++) {
		symbolizer__resolve_user(c->in->sym, (int)r->tgid, r->ustack[i], i == 0,
					 &c->m->frames[i]);
		unmapped |= !c->m->frames[i].mapping;
	}
	return unmapped;
}

/* Read @pid's mappings again, once per drain (a library mapped since it
 * was described): true when done now. */
static bool refresh_once(struct memory_ctx *c, __u32 pid)
{
	unsigned i;

	for (i = 0; i < c->nrefreshed && c->refreshed[i] != pid; i++)
		;
	if (i < c->nrefreshed || i == sizeof(c->refreshed) / sizeof(c->refreshed[0]))
		return false;
	c->refreshed[c->nrefreshed++] = pid;
	symbolizer__add_process(c->in->sym, (int)pid);
	return true;
}

/* The sampled allocations of @mr with their time into alloc_space and
 * alloc_objects (types @types[0..1]), each under its CPU. 0 or -errno. */
static int add_timed(struct memory_ctx *c, const struct memory_record *mr,
		     const struct profile_process_desc *desc, const __u32 *types)
{
	struct profile_labels lab = {.has_cpu = true};
	__u32 stack, i, k;
	int err;

	err = profile__add_stack(c->in->prof, c->m->frames, mr->r.nustack, &stack);
	for (i = 0; i < mr->ntimes && !err; i++) {
		const struct memory_time *t = &mr->times[i];
		const __u64 v[2] = {t->bytes, t->objs};

		lab.cpu = t->cpu;
		for (k = 0; k < 2 && !err; k++)
			if (v[k])
				err = profile__add_timed_stack_sample(c->in->prof, types[k], desc,
								      mr->r.tid, mr->r.comm, &lab,
								      stack, v[k], t->time_ns);
		if (!err)
			c->in->c.timed++;
	}
	return err;
}

/* Allocations of @mr counted without their time (the times ring was
 * full), @value in sample type @type: at the drain's time, marked
 * PROFILE_ATTR_TIME_LOST, as a profile with times needs one on every
 * sample. 0 or -errno. */
static int add_lost(struct memory_ctx *c, const struct memory_record *mr,
		    const struct profile_process_desc *desc, __u32 type, __u64 value)
{
	struct profile_num_attr lost = {.key = PROFILE_ATTR_TIME_LOST, .value = 1};
	struct profile_labels lab = {.num = &lost, .nnum = 1};
	__u32 stack;
	int err;

	err = profile__add_stack(c->in->prof, c->m->frames, mr->r.nustack, &stack);
	return err ?: profile__add_timed_stack_sample(c->in->prof, type, desc, mr->r.tid,
						      mr->r.comm, &lab, stack, value,
						      clock__ns(CLOCK_REALTIME));
}

/* One record into the profile: up to four samples of the same stack. */
static int add_record(void *arg, const struct memory_record *mr)
{
	const char *const names[4] = {MEMORY_TYPE_ALLOC_SPACE, MEMORY_TYPE_ALLOC_OBJECTS,
				      MEMORY_TYPE_INUSE_SPACE, MEMORY_TYPE_INUSE_OBJECTS};
	const __u64 vals[4] = {mr->alloc_bytes, mr->alloc_objects, mr->inuse_bytes,
			       mr->inuse_objects};
	struct memory_ctx *c = arg;
	struct memory *m = c->m;
	const struct sampler_record *r = &mr->r;
	struct profile_process_desc desc;
	__u32 i, type, types[2];
	int err = 0;

	describe(c->in, r, &desc);
	/* Its tables may miss a file (not built yet, or mapped since): ask
	 * for them, as for a partial CPU sample. */
	if ((r->flags & SAMPLER_REC_USTACK_PARTIAL) && m->smp)
		sampler__refresh_process(m->smp, (int)r->tgid);
	if (resolve(c, r) && refresh_once(c, r->tgid))
		resolve(c, r);
	for (i = 0; i < 2 && mr->ntimes && !err; i++)
		err = profile__add_value_type(c->in->prof, names[i], i & 1 ? "count" : "bytes",
					      "space", "bytes", (__s64)m->o.rate, &types[i]);
	err = err ?: add_timed(c, mr, &desc, types);
	for (i = 0; i < 4 && !err; i++) {
		if (!vals[i])
			continue;
		err = profile__add_value_type(c->in->prof, names[i], i & 1 ? "count" : "bytes",
					      "space", "bytes", (__s64)m->o.rate, &type);
		if (i < 2 && c->in->timestamps) /* with timestamps all have one */
			err = err ?: add_lost(c, mr, &desc, type, vals[i]);
		else
			err = err ?: profile__add_typed_sample(c->in->prof, type, &desc, r->tid,
							       r->comm, NULL, m->frames,
							       r->nustack, vals[i]);
	}
	if (err == -E2BIG || err == -ENOMEM) {
		m->dropped++;
		err = 0;
	}
	return err;
}

int memory__drain(struct memory *m, bool window_end, struct ingest *in)
{
	struct memory_ctx c = {.m = m, .in = in, .window_end = window_end};
	int err;

	if (!m)
		return 0;
	err = memsampler__drain(m->ms, window_end, add_record, &c);
	if (err)
		pr_err("reading memory samples failed: %s", strerror(-err));
	if (in->timestamps) { /* the times ring was full: counted without time */
		struct memory_stats st;

		memsampler__stats(m->ms, &st);
		if (st.untimed > m->untimed_reported)
			in->c.untimed += st.untimed - m->untimed_reported;
		m->untimed_reported = st.untimed;
	}
	return err;
}

int memory__finish(struct memory *m, struct ingest *in, bool quiet)
{
	char rate[32];
	int err;

	if (!m)
		return 0;
	memsampler__stop(m->ms);
	m->smp = NULL; /* no tables are built any more */
	err = memory__drain(m, true, in);
	memsampler__stats(m->ms, &m->st);
	memsampler__free(m->ms);
	m->ms = NULL;
	memory__human_bytes(m->o.rate ? m->o.rate : MEMORY_RATE_DEFAULT, rate, sizeof(rate));
	if (!quiet && m->st.usdt)
		pr_info("memory: otel_memory probes in %u files: those processes sample their "
			"allocations themselves",
			m->st.usdt);
	if (!quiet)
		pr_info("memory: %llu allocation calls, %llu sampled (one per %s on average), "
			"%llu frees; %llu sampled allocations still live (allocations made before "
			"the capture started are unknown)",
			(unsigned long long)m->st.calls, (unsigned long long)m->st.sampled, rate,
			(unsigned long long)m->st.frees, (unsigned long long)m->st.live);
	if (m->st.live_full || m->st.live_proc || m->st.counts_full || m->st.throttled ||
	    m->dropped)
		pr_warn("memory: samples lost: %llu live table full, %llu over a process's share, "
			"%llu counter table full, %llu profile full; %llu dropped by the rate "
			"limit "
			"(weighed into those kept)",
			(unsigned long long)m->st.live_full, (unsigned long long)m->st.live_proc,
			(unsigned long long)m->st.counts_full, (unsigned long long)m->dropped,
			(unsigned long long)m->st.throttled);
	if (m->st.walk_busy)
		pr_warn("memory: %llu sampled allocations counted without a stack: a preempted "
			"allocation's walk held the CPU's walk state",
			(unsigned long long)m->st.walk_busy);
	if (!m->st.probes && !m->st.usdt)
		pr_warn("memory: no allocator found to probe in the target processes (glibc, "
			"musl, jemalloc, tcmalloc, mimalloc, or a program defining malloc)");
	return err;
}

__u64 memory__window_lost(struct memory *m)
{
	struct memory_stats st;
	__u64 lost;

	if (!m)
		return 0;
	if (m->ms)
		memsampler__stats(m->ms, &st);
	else
		st = m->st; /* finished */
	lost = st.counts_full + st.live_full + st.live_proc + st.times_lost + m->dropped;
	if (lost < m->lost_reported)
		return 0;
	lost -= m->lost_reported;
	m->lost_reported += lost;
	return lost;
}

__u64 memory__window_throttled(struct memory *m)
{
	struct memory_stats st;
	__u64 n;

	if (!m)
		return 0;
	if (m->ms)
		memsampler__stats(m->ms, &st);
	else
		st = m->st; /* finished */
	n = st.throttled > m->throttled_reported ? st.throttled - m->throttled_reported : 0;
	m->throttled_reported += n;
	return n;
}

void memory__free(struct memory *m)
{
	if (!m)
		return;
	memsampler__free(m->ms);
	free(m->pids);
	free(m);
}

/* ---- growth ---- */

#define GROWTH_STACK_MAX 8192 /* bytes of a folded stack kept */

struct growth {
	struct memory_growth_row *rows;
	size_t n, cap;
	struct htab idx; /* __u32 row index */
	char key[GROWTH_STACK_MAX];
};

static bool growth_eq(const void *elem, const void *key, void *ctx)
{
	const struct growth *g = ctx;

	return !strcmp(g->rows[*(const __u32 *)elem].stack, key);
}

/* Sample @s of process entry @proc of @p as a folded stack into @out. */
static void fold(const struct profile *p, size_t proc, const struct profile_sample_entry *s,
		 char *out, size_t len)
{
	const struct profile_process_desc *d = profile__process(p, proc);
	size_t n, used, k;
	const __u32 *locs = profile__stack(p, s->stack, &n);
	char scratch[256];

	used = (size_t)snprintf(out, len, "%s", d && d->exe_name ? d->exe_name : "?");
	for (k = n; k-- > 0 && used < len;) /* root first */
		used += (size_t)snprintf(
			out + used, len - used, ";%s",
			view__frame_name(p, locs[k], scratch, sizeof(scratch)));
}

/* Add the samples of @p (type 0) to @g, into before (@later false) or
 * after. */
static int growth_add(struct growth *g, const struct profile *p, bool later)
{
	char *key = g->key;
	size_t proc, i;
	__u32 *slot;
	__u64 h;
	int err;

	for (proc = 0; proc < profile__process_count(p); proc++) {
		if (profile__process_type(p, proc) != 0)
			continue;
		for (i = 0; i < profile__sample_count(p, proc); i++) {
			const struct profile_sample_entry *s = profile__sample(p, proc, i);
			struct memory_growth_row *r;

			fold(p, proc, s, key, GROWTH_STACK_MAX);
			h = htab__hash_str(key);
			slot = htab__find(&g->idx, h, key, growth_eq, g);
			if (!slot) {
				err = array__grow((void **)&g->rows, &g->cap, g->n,
						  sizeof(*g->rows), 64, MEMORY_GROWTH_MAX);
				err = err ?: htab__add(&g->idx, h, (void **)&slot);
				if (err)
					return err;
				g->rows[g->n] = (struct memory_growth_row){.stack = strdup(key)};
				if (!g->rows[g->n].stack)
					return -ENOMEM;
				*slot = (__u32)g->n++;
			}
			r = &g->rows[*slot];
			if (later)
				r->after += s->value;
			else
				r->before += s->value;
		}
	}
	return 0;
}

static __s64 growth_of(const struct memory_growth_row *r)
{
	return (__s64)r->after - (__s64)r->before;
}

static int growth_cmp(const void *a, const void *b)
{
	__s64 x = growth_of(a), y = growth_of(b);

	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(((const struct memory_growth_row *)a)->stack,
		      ((const struct memory_growth_row *)b)->stack);
}

int memory__growth(const struct profile *before, const struct profile *after,
		   struct memory_growth_row **rows, size_t *n)
{
	struct growth g = {0};
	int err;

	*rows = NULL;
	*n = 0;
	err = htab__init(&g.idx, sizeof(__u32), MEMORY_GROWTH_MAX);
	err = err ?: growth_add(&g, before, false);
	err = err ?: growth_add(&g, after, true);
	htab__release(&g.idx);
	if (err) {
		memory__growth_free(g.rows, g.n);
		return err;
	}
	if (g.n)
		qsort(g.rows, g.n, sizeof(*g.rows), growth_cmp);
	*rows = g.rows;
	*n = g.n;
	return 0;
}

void memory__growth_free(struct memory_growth_row *rows, size_t n)
{
	size_t i;

	for (i = 0; rows && i < n; i++)
		free(rows[i].stack);
	free(rows);
}

/* @v in @unit: human units for bytes, else the count. */
static void put_value(char *out, size_t len, __u64 v, const char *unit)
{
	if (!strcmp(unit, "bytes"))
		memory__human_bytes(v, out, len);
	else
		snprintf(out, len, "%llu", (unsigned long long)v);
}

void memory__growth_print(FILE *f, const struct memory_growth_row *rows, size_t n, size_t top,
			  const char *unit)
{
	char g[32], b[32], a[32];
	size_t i, k = top && top < n ? top : n;

	fprintf(f, "Growth by stack (%zu stacks; later minus earlier):\n", n);
	fprintf(f, "  %12s %12s %12s  STACK\n", "GROWTH", "BEFORE", "AFTER");
	for (i = 0; i < k; i++) {
		__s64 d = growth_of(&rows[i]);

		put_value(g + 1, sizeof(g) - 1, (__u64)(d < 0 ? -d : d), unit);
		g[0] = d < 0 ? '-' : '+';
		put_value(b, sizeof(b), rows[i].before, unit);
		put_value(a, sizeof(a), rows[i].after, unit);
		fprintf(f, "  %12s %12s %12s  %s\n", g, b, a, rows[i].stack);
	}
	if (k < n)
		fprintf(f, "  ... %zu more (--top 0 shows all)\n", n - k);
}
