/* perf_script.c - `perf script` text reader (see perf_script.h).
 *
 * Two passes over the text with the same line parser. The first checks the
 * input, counts, and learns what the model needs before any sample is added:
 * the address range seen in each dso (its mapping), each pid's name (from
 * its main thread), the time span, the event and period. The second adds
 * the samples. Fields are slices of the input until a sample is added;
 * they are then copied NUL-terminated into a scratch arena.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/array.h"
#include "util/htab.h"
#include "util/clock.h"
#include "util/intern.h"
#include "formats/perf_script.h"
#include "model/profile.h"

#define MAX_FRAMES 4096 /* the model keeps at most this many per stack */
#define KERNEL_MIN_ADDR 0xffff800000000000ull

struct slice {
	const char *s;
	size_t n;
};

struct frame {
	__u64 addr;
	struct slice sym; /* n == 0: unknown */
	struct slice dso; /* n == 0: unknown */
};

struct header {
	struct slice comm;
	__s64 pid;
	__u32 tid;
	bool has_time;
	bool cpu;   /* a "[cpu]" field was printed */
	__u32 cpu_nr;
	bool slash; /* the "pid/tid" form */
	__u64 time_ns;
	__u64 period;
	struct slice event;
	struct slice rest; /* text after the fields, maybe a frame */
	struct slice task; /* "PERF_RECORD_..." of a task event line, else empty */
};

struct dso_range {
	__u64 lo, hi;
};

struct pid_name {
	char *comm;
	bool main; /* taken from the main thread */
};

/* The process of a thread, as the input shows it. */
struct tid_pid {
	__u32 tid, pad;
	__s64 pid;
};

struct ps {
	struct profile *p;
	struct perf_script_stats *st;
	int pass;
	size_t lineno;
	/* pass 1 results */
	struct intern *dsos; /* dso name bytes -> index in ranges */
	struct dso_range *ranges;
	size_t ranges_cap;
	struct intern *pids; /* __s64 -> index in names */
	struct pid_name *names;
	size_t names_cap;
	bool have_time;
	__u64 t_first, t_last;
	/* pass 0: the process of each thread, from task events and pid/tid
	 * headers (struct tid_pid) */
	struct htab tids;
	struct htab unknown; /* struct tid_pid: threads with no known pid */
	char event[128];
	/* the sample being read */
	bool in_sample;
	struct header cur;
	size_t nframes;
	bool cut; /* frames past MAX_FRAMES were dropped */
	struct frame *frames;
	/* pass 2 scratch, MAX_FRAMES entries each */
	struct profile_frame *pf;
	struct profile_mapping_desc *maps;
	size_t *sym_off, *dso_off; /* arena offsets of each frame's strings */
	struct buf arena;
};

/* ---- lexing helpers ------------------------------------------------------ */

static bool is_digits(struct slice t)
{
	size_t i;

	if (!t.n)
		return false;
	for (i = 0; i < t.n; i++)
		if (!isdigit((unsigned char)t.s[i]))
			return false;
	return true;
}

static __u64 to_u64(struct slice t)
{
	__u64 v = 0;
	size_t i;

	for (i = 0; i < t.n && isdigit((unsigned char)t.s[i]); i++)
		v = v * 10 + (__u64)(t.s[i] - '0');
	return v;
}

/* "123" or "123/456". */
static bool parse_pidtid(struct slice t, __s64 *pid, __u32 *tid)
{
	const char *slash = memchr(t.s, '/', t.n);
	struct slice a = t, b;

	if (slash) {
		a.n = (size_t)(slash - t.s);
		b.s = slash + 1;
		b.n = t.n - a.n - 1;
		if (!is_digits(a) || !is_digits(b) || a.n > 10 || b.n > 10)
			return false;
		*pid = (__s64)to_u64(a);
		*tid = (__u32)to_u64(b);
		return true;
	}
	if (!is_digits(t) || t.n > 10)
		return false;
	*tid = (__u32)to_u64(t);
	*pid = *tid;
	return true;
}

/* "[003]" */
static bool is_cpu(struct slice t)
{
	struct slice in = {t.s + 1, t.n - 2};

	return t.n >= 3 && t.s[0] == '[' && t.s[t.n - 1] == ']' && is_digits(in);
}

/* "4591.386158:" -> nanoseconds */
static bool parse_time(struct slice t, __u64 *ns)
{
	const char *dot = memchr(t.s, '.', t.n);
	struct slice secs, frac;
	__u64 f;
	size_t i;

	if (!dot || t.n < 4 || t.s[t.n - 1] != ':')
		return false;
	secs.s = t.s;
	secs.n = (size_t)(dot - t.s);
	frac.s = dot + 1;
	frac.n = t.n - secs.n - 2;
	if (!is_digits(secs) || !is_digits(frac) || secs.n > 10 || frac.n > 9)
		return false;
	f = to_u64(frac);
	for (i = frac.n; i < 9; i++)
		f *= 10;
	*ns = to_u64(secs) * 1000000000ull + f;
	return true;
}

/* "cpu-clock:ppp:" - a word ending with ':' that is not a number. */
static bool is_event(struct slice t)
{
	return t.n >= 2 && t.s[t.n - 1] == ':' && !isdigit((unsigned char)t.s[0]);
}

static struct slice next_token(const char **pos, const char *end)
{
	struct slice t;
	const char *s = *pos;

	while (s < end && isspace((unsigned char)*s))
		s++;
	t.s = s;
	while (s < end && !isspace((unsigned char)*s))
		s++;
	t.n = (size_t)(s - t.s);
	*pos = s;
	return t;
}

static struct slice trim(struct slice t)
{
	while (t.n && isspace((unsigned char)t.s[0])) {
		t.s++;
		t.n--;
	}
	while (t.n && isspace((unsigned char)t.s[t.n - 1]))
		t.n--;
	return t;
}

static bool slice_is(struct slice t, const char *s)
{
	return t.n == strlen(s) && !memcmp(t.s, s, t.n);
}

/* ---- line parsers -------------------------------------------------------- */

/* "addr [sym[+0xoff]] [(dso)]" */
static bool parse_frame(struct slice line, struct frame *f)
{
	const char *pos = line.s, *end = line.s + line.n;
	struct slice t = next_token(&pos, end), rest;
	size_t i, h = 0;

	memset(f, 0, sizeof(*f));
	if (t.n > 2 && t.s[0] == '0' && (t.s[1] == 'x' || t.s[1] == 'X'))
		h = 2;
	if (t.n <= h || t.n - h > 16)
		return false;
	for (i = h; i < t.n; i++) {
		int c = (unsigned char)t.s[i];

		if (!isxdigit(c))
			return false;
		f->addr = f->addr << 4 | (__u64)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
	}
	rest = trim((struct slice){pos, (size_t)(end - pos)});
	/* The dso is the last parenthesised group; symbols may hold parens. */
	if (rest.n && rest.s[rest.n - 1] == ')') {
		size_t k = rest.n - 1;
		int depth = 0;

		do {
			if (rest.s[k] == ')')
				depth++;
			else if (rest.s[k] == '(')
				depth--;
		} while (depth && k-- > 0);
		if (!depth && (k == 0 || isspace((unsigned char)rest.s[k - 1]))) {
			f->dso = (struct slice){rest.s + k + 1, rest.n - k - 2};
			rest.n = k;
			rest = trim(rest);
		}
	}
	/* Strip a "+0x1a" offset. */
	for (i = rest.n; i-- > 0;) {
		if (rest.s[i] != '+')
			continue;
		if (i + 3 <= rest.n && rest.s[i + 1] == '0' && rest.s[i + 2] == 'x') {
			size_t k = i + 3;

			while (k < rest.n && isxdigit((unsigned char)rest.s[k]))
				k++;
			if (k == rest.n && k > i + 3)
				rest.n = i;
		}
		break;
	}
	if (!slice_is(rest, "[unknown]"))
		f->sym = rest;
	if (slice_is(f->dso, "[unknown]"))
		f->dso.n = 0;
	return true;
}

/* "comm pid[/tid] [cpu] time: [period] [event:] [rest]"; comm may hold
 * spaces, so the pid is the first number followed by a cpu, a time or the
 * end of the line. */
static bool parse_header(struct slice line, struct header *h)
{
	const char *pos = line.s, *end = line.s + line.n, *after;
	struct slice t, nx;
	size_t ntok = 0;

	memset(h, 0, sizeof(*h));
	if (!line.n || isspace((unsigned char)line.s[0]))
		return false;
	for (;;) {
		t = next_token(&pos, end);
		if (!t.n)
			return false;
		after = pos;
		nx = next_token(&after, end);
		if (ntok++ && parse_pidtid(t, &h->pid, &h->tid) &&
		    (!nx.n || is_cpu(nx) || parse_time(nx, &h->time_ns)))
			break;
	}
	h->comm = trim((struct slice){line.s, (size_t)(t.s - line.s)});
	if (!h->comm.n)
		return false;
	h->slash = memchr(t.s, '/', t.n) != NULL;
	t = next_token(&pos, end);
	if (is_cpu(t)) {
		h->cpu = true;
		h->cpu_nr = (__u32)to_u64((struct slice){t.s + 1, t.n - 2});
		t = next_token(&pos, end);
	}
	if (parse_time(t, &h->time_ns)) {
		h->has_time = true;
		t = next_token(&pos, end);
	}
	if (is_digits(t) && t.n <= 19) {
		h->period = to_u64(t);
		t = next_token(&pos, end);
	}
	if (is_event(t)) {
		h->event = t;
		t = next_token(&pos, end);
	}
	h->rest = trim((struct slice){t.s, (size_t)(end - t.s)});
	/* A task event (--show-task-events, --show-mmap-events): perf prints
	 * it with a sample's fields, but it is no sample. */
	if (h->event.n > 12 && !memcmp(h->event.s, "PERF_RECORD_", 12))
		h->task = (struct slice){h->event.s, (size_t)(end - h->event.s)};
	else if (h->rest.n > 12 && !memcmp(h->rest.s, "PERF_RECORD_", 12))
		h->task = h->rest;
	/* Strict: a bare "words NUMBER" line (folded stacks, prose) is no header.
	 * perf always prints a pid/tid pair, a [cpu], a time or an event. */
	return h->has_time || h->event.n || h->cpu || h->slash;
}

/* ---- pass 0: which process each thread is in ------------------------------- */

static bool tid_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct tid_pid *)elem)->tid == *(const __u32 *)key;
}

static __u64 tid_hash(__u32 tid)
{
	return htab__hash_u64(tid, 0);
}

/* Remember that thread @tid is in process @pid (the first word wins). */
static int note_tid(struct htab *m, __u32 tid, __s64 pid)
{
	struct tid_pid *e;
	int err;

	if (htab__find(m, tid_hash(tid), &tid, tid_eq, NULL))
		return 0;
	err = htab__add(m, tid_hash(tid), (void **)&e);
	if (err)
		return err == -E2BIG ? 0 : err; /* past the cap: that thread stays unknown */
	e->tid = tid;
	e->pid = pid;
	return 0;
}

/* The pid/tid pairs of task event text @t: "comm:PID/TID" and "PID/TID:"
 * tokens (COMM, MMAP) and "(PID:TID)" groups (FORK, EXIT). */
static int learn_task(struct ps *ps, struct slice t)
{
	const char *pos = t.s, *end = t.s + t.n;
	struct slice tok;
	__s64 pid;
	__u32 tid;
	int err = 0;

	while (!err && (tok = next_token(&pos, end)).n) {
		const char *c = tok.s, *e = tok.s + tok.n;

		while (!err && (c = memchr(c, '(', (size_t)(e - c)))) {
			const char *colon = memchr(c, ':', (size_t)(e - c));
			const char *close = memchr(c, ')', (size_t)(e - c));
			struct slice a = {c + 1, colon ? (size_t)(colon - c - 1) : 0}, b;

			c++;
			if (!colon || !close || close < colon)
				continue;
			b = (struct slice){colon + 1, (size_t)(close - colon - 1)};
			if (is_digits(a) && is_digits(b) && a.n <= 10 && b.n <= 10)
				err = note_tid(&ps->tids, (__u32)to_u64(b), (__s64)to_u64(a));
		}
		if (tok.n && tok.s[tok.n - 1] == ':')
			tok.n--;
		c = memrchr(tok.s, ':', tok.n);
		if (c) {
			tok.n -= (size_t)(c + 1 - tok.s);
			tok.s = c + 1;
		}
		if (!err && memchr(tok.s, '/', tok.n) && parse_pidtid(tok, &pid, &tid))
			err = note_tid(&ps->tids, tid, pid);
	}
	return err;
}

/* The process of header @h when it shows a tid only: from the task events
 * or another header, else -1 (unknown), counted in pass 1. */
static int resolve_pid(struct ps *ps, struct header *h)
{
	const struct tid_pid *e;

	if (h->slash)
		return 0;
	e = htab__find(&ps->tids, tid_hash(h->tid), &h->tid, tid_eq, NULL);
	h->pid = e ? e->pid : -1;
	if (e || ps->pass != 1)
		return 0;
	ps->st->samples_without_pid++;
	if (!htab__find(&ps->unknown, tid_hash(h->tid), &h->tid, tid_eq, NULL)) {
		ps->st->threads_without_pid++;
		return note_tid(&ps->unknown, h->tid, -1);
	}
	return 0;
}

/* ---- pass 1: facts ------------------------------------------------------- */

static void note_event(struct ps *ps, struct slice ev)
{
	struct slice name = ev;
	const char *colon;
	size_t i;

	name.n--; /* the final ':' */
	/* Drop a ":ppp"-style modifier suffix. */
	colon = name.n ? memrchr(name.s, ':', name.n) : NULL;
	if (colon) {
		for (i = (size_t)(colon - name.s) + 1; i < name.n; i++)
			if (!strchr("ukhIGHpPSDWe", name.s[i]))
				break;
		if (i == name.n)
			name.n = (size_t)(colon - name.s);
	}
	if (!name.n || name.n >= sizeof(ps->event))
		return;
	memcpy(ps->event, name.s, name.n);
	ps->event[name.n] = '\0';
	ps->st->cpu_clock = !strcmp(ps->event, "cpu-clock") || !strcmp(ps->event, "task-clock");
}

static int learn_sample(struct ps *ps)
{
	const struct header *h = &ps->cur;
	__u32 idx;
	bool added;
	size_t i;
	int err;

	ps->st->samples++;
	if (h->has_time) {
		if (!ps->have_time || h->time_ns < ps->t_first)
			ps->t_first = h->time_ns;
		if (!ps->have_time || h->time_ns > ps->t_last)
			ps->t_last = h->time_ns;
		ps->have_time = true;
	}
	if (h->period && !ps->st->period)
		ps->st->period = h->period;
	if (h->event.n && !ps->event[0])
		note_event(ps, h->event);
	for (i = 0; i < ps->nframes; i++) {
		const struct frame *f = &ps->frames[i];

		if (!f->dso.n)
			continue;
		/* Room for the dso's index, an existing one or the next. */
		err = array__grow((void **)&ps->ranges, &ps->ranges_cap, intern__count(ps->dsos),
				  sizeof(*ps->ranges), 64, (size_t)PROFILE_MAX_ENTRIES + 1);
		if (!err)
			err = intern__put(ps->dsos, f->dso.s, f->dso.n, &idx, &added);
		if (err)
			return err;
		if (added) {
			ps->ranges[idx].lo = f->addr;
			ps->ranges[idx].hi = f->addr;
		} else if (f->addr < ps->ranges[idx].lo) {
			ps->ranges[idx].lo = f->addr;
		} else if (f->addr > ps->ranges[idx].hi) {
			ps->ranges[idx].hi = f->addr;
		}
	}
	err = array__grow((void **)&ps->names, &ps->names_cap, intern__count(ps->pids),
			  sizeof(*ps->names), 64, (size_t)PROFILE_MAX_ENTRIES + 1);
	if (!err)
		err = intern__put(ps->pids, &h->pid, sizeof(h->pid), &idx, &added);
	if (err)
		return err;
	if (added)
		memset(&ps->names[idx], 0, sizeof(ps->names[idx]));
	if (!ps->names[idx].comm || (!ps->names[idx].main && (__s64)h->tid == h->pid)) {
		char *c = strndup(h->comm.s, h->comm.n);

		if (!c)
			return -ENOMEM;
		free(ps->names[idx].comm);
		ps->names[idx].comm = c;
		ps->names[idx].main = (__s64)h->tid == h->pid;
	}
	return 0;
}

/* ---- pass 2: samples ------------------------------------------------------ */

/* Copy @t NUL-terminated into the arena; its offset goes to *@off. */
static int arena_put(struct buf *a, struct slice t, size_t *off)
{
	int err;

	*off = a->len;
	err = buf__append(a, t.s, t.n);
	if (!err)
		err = buf__append(a, "", 1);
	return err;
}

/* Times since the epoch of a sample time: perf prints the kernel's
 * monotonic clock (seconds since boot), which this host's clocks map to the
 * epoch (right for recordings since this boot); times past 2001 already
 * are epoch times (no host is up for 30 years), as `convert --to
 * perf-script` writes them. */
static __u64 wall_time(__u64 t)
{
	static __u64 off;

	if (t >= 1000000000ull * 1000000000ull)
		return t;
	if (!off) {
		__u64 wall = clock__ns(CLOCK_REALTIME), mono = clock__mono_ns();

		off = wall > mono ? wall - mono : 1;
	}
	return t + off;
}

static int add_sample(struct ps *ps)
{
	const struct header *h = &ps->cur;
	struct profile_process_desc proc = {.pid = h->pid};
	struct profile_labels lab = {.has_cpu = h->cpu, .cpu = h->cpu_nr};
	size_t i, comm_off, *sym_off = ps->sym_off, *dso_off = ps->dso_off;
	__u32 idx;
	int err;

	buf__reset(&ps->arena);
	err = arena_put(&ps->arena, h->comm, &comm_off);
	for (i = 0; i < ps->nframes && !err; i++) {
		const struct frame *f = &ps->frames[i];

		if (f->sym.n)
			err = arena_put(&ps->arena, f->sym, &sym_off[i]);
		if (!err && f->dso.n)
			err = arena_put(&ps->arena, f->dso, &dso_off[i]);
	}
	if (err)
		return err;
	/* The arena no longer moves: turn offsets into pointers. */
	for (i = 0; i < ps->nframes; i++) {
		const struct frame *f = &ps->frames[i];
		struct profile_frame *pf = &ps->pf[i];
		const char *dso = f->dso.n ? (const char *)ps->arena.data + dso_off[i] : NULL;

		memset(pf, 0, sizeof(*pf));
		pf->address = f->addr;
		pf->function = f->sym.n ? (const char *)ps->arena.data + sym_off[i] : NULL;
		pf->type =
			(dso && !strncmp(dso, "[kernel", 7)) || (!dso && f->addr >= KERNEL_MIN_ADDR)
				? PROFILE_FRAME_KERNEL
				: PROFILE_FRAME_NATIVE;
		if (dso && !intern__find(ps->dsos, f->dso.s, f->dso.n, &idx) &&
		    ps->ranges[idx].hi + 1 != 0) {
			struct profile_mapping_desc *m = &ps->maps[i];

			memset(m, 0, sizeof(*m));
			m->start = ps->ranges[idx].lo;
			m->limit = ps->ranges[idx].hi + 1;
			m->file_offset = m->start;
			m->path = dso;
			pf->mapping = m;
		}
	}
	if (h->pid >= 0 && !intern__find(ps->pids, &h->pid, sizeof(h->pid), &idx))
		proc.exe_name = ps->names[idx].comm;
	if (h->has_time)
		return profile__add_timed_sample(ps->p, 0, &proc, h->tid,
						 (const char *)ps->arena.data + comm_off, &lab,
						 ps->pf, ps->nframes, 1, wall_time(h->time_ns));
	return profile__add_typed_sample(ps->p, 0, &proc, h->tid,
					 (const char *)ps->arena.data + comm_off, &lab, ps->pf,
					 ps->nframes, 1);
}

/* ---- driver ------------------------------------------------------------------ */

static int end_sample(struct ps *ps)
{
	int err;

	if (!ps->in_sample)
		return 0;
	ps->in_sample = false;
	err = ps->pass == 1 ? learn_sample(ps) : add_sample(ps);
	ps->nframes = 0;
	ps->cut = false;
	return err;
}

static void skip_line(struct ps *ps)
{
	if (ps->pass != 1)
		return;
	if (!ps->st->skipped)
		ps->st->first_skipped_line = ps->lineno;
	ps->st->skipped++;
}

static void push_frame(struct ps *ps, const struct frame *f)
{
	if (ps->nframes < MAX_FRAMES) {
		ps->frames[ps->nframes++] = *f;
		return;
	}
	/* Root-most frames are dropped; the sample is counted once. */
	if (ps->pass == 1 && !ps->cut)
		ps->st->truncated++;
	ps->cut = true;
}

static int do_line(struct ps *ps, struct slice line)
{
	struct slice t = trim(line);
	struct frame f;
	int err;

	if (!t.n)
		return end_sample(ps);
	if (line.s[0] == '#')
		return 0; /* perf script --header comments */
	if (isspace((unsigned char)line.s[0])) {
		if (ps->pass == 0)
			return 0;
		if (ps->in_sample && parse_frame(t, &f))
			push_frame(ps, &f);
		else
			skip_line(ps);
		return 0;
	}
	err = end_sample(ps);
	if (err)
		return err;
	if (!parse_header(line, &ps->cur)) {
		skip_line(ps);
		return 0;
	}
	if (ps->cur.task.n)
		return ps->pass == 0 ? learn_task(ps, ps->cur.task) : 0;
	if (ps->pass == 0)
		return ps->cur.slash ? note_tid(&ps->tids, ps->cur.tid, ps->cur.pid) : 0;
	err = resolve_pid(ps, &ps->cur);
	if (err)
		return err;
	ps->in_sample = true;
	ps->nframes = 0;
	ps->cut = false;
	if (ps->cur.rest.n && parse_frame(ps->cur.rest, &f))
		push_frame(ps, &f);
	return 0;
}

static int run_pass(struct ps *ps, const char *text, size_t len)
{
	size_t pos = 0;
	int err = 0;

	ps->lineno = 0;
	ps->in_sample = false;
	ps->nframes = 0;
	while (pos < len && !err) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - text) - pos : len - pos;
		struct slice line = {text + pos, n};

		if (line.n && line.s[line.n - 1] == '\r')
			line.n--;
		ps->lineno++;
		err = do_line(ps, line);
		pos += n + 1;
	}
	return err ?: end_sample(ps);
}

const char *perf_script__pid_note(const struct perf_script_stats *st, char *buf, size_t len)
{
	if (!st->threads_without_pid || !len)
		return NULL;
	snprintf(buf, len,
		 "the input has no pids: %zu thread%s (%zu sample%s) put in one process of unknown "
		 "pid; print them with 'perf script -F comm,pid,tid,time,event,ip,sym,dso' (or "
		 "--show-task-events)",
		 st->threads_without_pid, st->threads_without_pid == 1 ? "" : "s",
		 st->samples_without_pid, st->samples_without_pid == 1 ? "" : "s");
	return buf;
}

bool perf_script__looks_like(const void *data, size_t len)
{
	const char *text = data;
	size_t pos = 0, head = len < 4096 ? len : 4096;
	struct header h;

	if (!len || memchr(text, '\0', head))
		return false;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - text) - pos : len - pos;
		struct slice line = {text + pos, n};

		if (trim(line).n && line.s[0] != '#')
			return parse_header(line, &h);
		pos += n + 1;
	}
	return false;
}

static void ps_free(struct ps *ps)
{
	size_t i;

	for (i = 0; ps->pids && i < intern__count(ps->pids); i++)
		free(ps->names[i].comm);
	free(ps->names);
	free(ps->ranges);
	intern__free(ps->pids);
	intern__free(ps->dsos);
	htab__release(&ps->tids);
	htab__release(&ps->unknown);
	free(ps->frames);
	free(ps->pf);
	free(ps->maps);
	free(ps->sym_off);
	free(ps->dso_off);
	buf__release(&ps->arena);
}

int perf_script__parse(const void *data, size_t len, struct profile **out,
		       struct perf_script_stats *st, char *errbuf, size_t errlen)
{
	struct ps ps = {0};
	int err = -ENOMEM;

	*out = NULL;
	memset(st, 0, sizeof(*st));
	if (memchr(data, '\0', len)) {
		snprintf(errbuf, errlen,
			 "binary data (a NUL byte at offset %zu), not perf script "
			 "text",
			 (size_t)((const char *)memchr(data, '\0', len) - (const char *)data));
		return -EBADMSG;
	}
	ps.st = st;
	buf__init(&ps.arena, 64u << 20);
	ps.dsos = intern__new(PROFILE_MAX_ENTRIES);
	ps.pids = intern__new(PROFILE_MAX_ENTRIES);
	ps.frames = calloc(MAX_FRAMES, sizeof(*ps.frames));
	ps.pf = calloc(MAX_FRAMES, sizeof(*ps.pf));
	ps.maps = calloc(MAX_FRAMES, sizeof(*ps.maps));
	ps.sym_off = calloc(MAX_FRAMES, sizeof(*ps.sym_off));
	ps.dso_off = calloc(MAX_FRAMES, sizeof(*ps.dso_off));
	ps.p = profile__new();
	if (!ps.dsos || !ps.pids || !ps.frames || !ps.pf || !ps.maps || !ps.sym_off ||
	    !ps.dso_off || !ps.p)
		goto err_out;
	htab__init(&ps.tids, sizeof(struct tid_pid), PROFILE_MAX_ENTRIES);
	htab__init(&ps.unknown, sizeof(struct tid_pid), PROFILE_MAX_ENTRIES);
	ps.pass = 0;
	err = run_pass(&ps, data, len);
	ps.pass = 1;
	err = err ?: run_pass(&ps, data, len);
	if (err)
		goto err_out;
	if (!st->samples) {
		if (st->first_skipped_line)
			snprintf(errbuf, errlen,
				 "no perf script sample found (line %zu is not a "
				 "sample header)",
				 st->first_skipped_line);
		else
			snprintf(errbuf, errlen, "no perf script sample found (empty input)");
		err = -EBADMSG;
		goto err_out;
	}
	ps.pass = 2;
	err = run_pass(&ps, data, len);
	if (!err && ps.event[0] && !st->cpu_clock)
		err = profile__set_value_types(ps.p, NULL, NULL, ps.event, "count");
	if (!err)
		err = profile__prune(ps.p);
	if (err)
		goto err_out;
	st->duration_ns = ps.have_time ? ps.t_last - ps.t_first : 0;
	if (st->cpu_clock)
		st->duration_ns += ps.have_time ? st->period : st->period * st->samples;
	if (!st->duration_ns)
		st->duration_ns = 1;
	*out = ps.p;
	ps.p = NULL;
err_out:
	profile__free(ps.p);
	ps_free(&ps);
	return err;
}
