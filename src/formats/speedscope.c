/* speedscope.c - speedscope's JSON file format (see speedscope.h).
 *
 * Each location's frames (its lines, outermost first) are named once into
 * a shared frame table; the events (occurrences in time order) are then
 * grouped by thread, keeping their order, and written as one sampled
 * profile per thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/speedscope.h"
#include "model/profile.h"
#include "model/view.h"
#include "util/array.h"
#include "util/intern.h"

#define NAME_LEN 1024

struct thread_key {
	__s64 pid, tid;
};

struct ss {
	const struct profile *p;
	struct buf_out o;
	struct intern *frames;	/* "name\0file" -> frame index */
	__u32 *loc_off, *loc_n; /* per location: its frames in @lf */
	__u32 *lf;		/* frame indices, outermost line first */
	size_t nlf, lf_cap;
	struct intern *threads; /* struct thread_key -> thread index */
	struct profile_event *ev;
	__u32 *ev_thread; /* per event */
	size_t *ev_next;  /* per event: the next one of its thread, SIZE_MAX: none */
	size_t *first;	  /* per thread: its first event */
	size_t nev;
	bool counts; /* values count samples of one period each */
	__u64 period;
	const char *unit;
};

static void put_str(struct buf_out *o, const char *s)
{
	char esc[8];

	buf__puts(o, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			buf__put(o, esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			buf__puts(o, esc);
		} else {
			buf__put(o, s, 1);
		}
	}
	buf__puts(o, "\"");
}

static void put_u64(struct buf_out *o, __u64 v)
{
	char n[24];

	snprintf(n, sizeof(n), "%" PRIu64, (uint64_t)v);
	buf__puts(o, n);
}

/* The frames of every location, into the shared table. */
static int name_locations(struct ss *s)
{
	size_t nloc = profile__location_count(s->p), loc, k, nl, len;
	char scratch[NAME_LEN], key[2 * NAME_LEN + 2];
	__u32 idx;
	int err = 0;

	s->loc_off = calloc(nloc, sizeof(*s->loc_off));
	s->loc_n = calloc(nloc, sizeof(*s->loc_n));
	if (!s->loc_off || !s->loc_n)
		return -ENOMEM;
	for (loc = 1; loc < nloc && !err; loc++) {
		nl = view__line_count(s->p, (__u32)loc);
		s->loc_off[loc] = (__u32)s->nlf;
		for (k = nl; k-- > 0 && !err;) {
			const char *name =
				view__line_name(s->p, (__u32)loc, k, scratch, sizeof(scratch));
			__s64 line;
			const char *file = view__line_source(s->p, (__u32)loc, k, &line);

			len = (size_t)snprintf(key, sizeof(key), "%.*s%c%.*s", NAME_LEN - 1, name,
					       0, NAME_LEN - 1, file);
			err = intern__put(s->frames, key, len + 1, &idx, NULL);
			if (!err)
				err = array__grow((void **)&s->lf, &s->lf_cap, s->nlf,
						  sizeof(*s->lf), 256, PROFILE_MAX_ENTRIES);
			if (!err)
				s->lf[s->nlf++] = idx;
		}
		s->loc_n[loc] = (__u32)(s->nlf - s->loc_off[loc]);
	}
	return err;
}

/* Chain the events of each thread, in time order. */
static int link_threads(struct ss *s)
{
	size_t n = intern__count(s->threads), i;
	size_t *last;

	s->ev_next = malloc((s->nev ? s->nev : 1) * sizeof(*s->ev_next));
	s->first = malloc((n ? n : 1) * sizeof(*s->first));
	last = malloc((n ? n : 1) * sizeof(*last));
	if (!s->ev_next || !s->first || !last) {
		free(last);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		s->first[i] = last[i] = SIZE_MAX;
	for (i = 0; i < s->nev; i++) {
		__u32 t = s->ev_thread[i];

		s->ev_next[i] = SIZE_MAX;
		if (t == UINT32_MAX)
			continue;
		if (last[t] == SIZE_MAX)
			s->first[t] = i;
		else
			s->ev_next[last[t]] = i;
		last[t] = i;
	}
	free(last);
	return 0;
}

/* The thread of every event; events of threads past the cap are dropped. */
static int group_threads(struct ss *s)
{
	size_t i;
	int err = 0;

	s->ev_thread = calloc(s->nev ? s->nev : 1, sizeof(*s->ev_thread));
	if (!s->ev_thread)
		return -ENOMEM;
	for (i = 0; i < s->nev && !err; i++) {
		const struct profile_sample_entry *e =
			profile__sample(s->p, s->ev[i].proc, s->ev[i].sample);
		struct thread_key k = {profile__process(s->p, s->ev[i].proc)->pid, 0};
		const char *name;

		view__sample_thread(s->p, e, &k.tid, &name);
		err = intern__put(s->threads, &k, sizeof(k), &s->ev_thread[i], NULL);
		if (err == -E2BIG) {
			s->ev_thread[i] = UINT32_MAX;
			err = 0;
		}
	}
	return err ?: link_threads(s);
}

static void put_frames(struct ss *s)
{
	size_t i, n = intern__count(s->frames), len;

	buf__puts(&s->o, "\"shared\":{\"frames\":[");
	for (i = 0; i < n; i++) {
		const char *name = intern__get(s->frames, (__u32)i, &len);
		const char *file = name + strlen(name) + 1;

		buf__puts(&s->o, i ? ",{\"name\":" : "{\"name\":");
		put_str(&s->o, name);
		if (*file) {
			buf__puts(&s->o, ",\"file\":");
			put_str(&s->o, file);
		}
		buf__puts(&s->o, "}");
	}
	buf__puts(&s->o, "]}");
}

/* Weight of event @i, whose thread's next event is @next (SIZE_MAX: none). */
static __u64 weight(const struct ss *s, size_t i, size_t next)
{
	const struct profile_event *e = &s->ev[i];
	__u64 w = s->counts ? e->value * s->period : e->value;

	if (s->counts && e->time_ns && next != SIZE_MAX && s->ev[next].time_ns - e->time_ns < w)
		w = s->ev[next].time_ns - e->time_ns;
	return w ? w : 1;
}

static void put_stack(struct ss *s, __u32 stack)
{
	const __u32 *locs;
	size_t n, i, k;
	bool first = true;

	locs = profile__stack(s->p, stack, &n);
	buf__puts(&s->o, "[");
	for (i = n; i-- > 0;)
		for (k = 0; k < s->loc_n[locs[i]]; k++) {
			buf__puts(&s->o, first ? "" : ",");
			put_u64(&s->o, s->lf[s->loc_off[locs[i]] + k]);
			first = false;
		}
	buf__puts(&s->o, "]");
}

/* The sampled profile of thread @t: its events, in time order. */
static void put_thread(struct ss *s, __u32 t, __u64 t0)
{
	const struct thread_key *k = intern__get(s->threads, t, NULL);
	size_t i, first = s->first[t];
	__u64 total = 0, start, w;
	const char *tname = "";
	char name[NAME_LEN + 64];
	bool any = false;

	if (first == SIZE_MAX)
		return;
	view__sample_thread(s->p, profile__sample(s->p, s->ev[first].proc, s->ev[first].sample),
			    &(__s64){0}, &tname);
	if (!*tname)
		tname = profile__process(s->p, s->ev[first].proc)->exe_name ?: "";
	snprintf(name, sizeof(name), "%.*s (%lld/%lld)", NAME_LEN, *tname ? tname : "[unknown]",
		 (long long)k->pid, (long long)k->tid);
	start = s->ev[first].time_ns > t0 ? s->ev[first].time_ns - t0 : 0;
	buf__puts(&s->o,
		  t ? ",{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":");
	put_str(&s->o, name);
	buf__puts(&s->o, ",\"unit\":");
	put_str(&s->o, s->unit);
	buf__puts(&s->o, ",\"samples\":[");
	for (i = first; i != SIZE_MAX; i = s->ev_next[i]) {
		buf__puts(&s->o, any ? "," : "");
		put_stack(s, profile__sample(s->p, s->ev[i].proc, s->ev[i].sample)->stack);
		any = true;
	}
	buf__puts(&s->o, "],\"weights\":[");
	for (i = first, any = false; i != SIZE_MAX; i = s->ev_next[i]) {
		w = weight(s, i, s->ev_next[i]);
		buf__puts(&s->o, any ? "," : "");
		put_u64(&s->o, w);
		total += w;
		any = true;
	}
	buf__puts(&s->o, "],\"startValue\":");
	put_u64(&s->o, start);
	buf__puts(&s->o, ",\"endValue\":");
	put_u64(&s->o, start + total);
	buf__puts(&s->o, "}");
}

static void units(struct ss *s)
{
	__u32 st, su, pt, pu;

	profile__value_type(s->p, 0, &st, &su, &pt, &pu);
	s->counts = !strcmp(profile__string(s->p, su, NULL), "count");
	s->period = (__u64)profile__period(s->p, 0);
	if (s->counts && s->period && !strcmp(profile__string(s->p, pu, NULL), "nanoseconds")) {
		s->unit = "nanoseconds";
	} else if (s->counts) {
		s->counts = false; /* weights: the counts themselves */
		s->unit = "none";
	} else {
		s->unit = !strcmp(profile__string(s->p, su, NULL), "nanoseconds") ? "nanoseconds"
										  : "none";
	}
}

/* Keep the events of value type 0 only. */
static void only_type0(struct ss *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->nev; i++)
		if (profile__process_type(s->p, s->ev[i].proc) == 0)
			s->ev[n++] = s->ev[i];
	s->nev = n;
}

static int write_doc(struct ss *s)
{
	__u64 t0 = 0;
	size_t i, n;

	for (i = 0; i < s->nev && !t0; i++)
		t0 = s->ev[i].time_ns;
	buf__puts(&s->o, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
			 "\"exporter\":\"profcap\",\"name\":\"profcap\",\"activeProfileIndex\":0,");
	put_frames(s);
	buf__puts(&s->o, ",\"profiles\":[");
	n = intern__count(s->threads);
	for (i = 0; i < n; i++)
		put_thread(s, (__u32)i, t0);
	buf__puts(&s->o, "]}\n");
	return s->o.err;
}

int speedscope__encode(const struct profile *p, struct buf *out)
{
	struct ss s = {.p = p, .o = {out, 0}};
	size_t start = out->len;
	int err;

	units(&s);
	s.frames = intern__new(PROFILE_MAX_ENTRIES);
	s.threads = intern__new(SPEEDSCOPE_MAX_THREADS);
	err = s.frames && s.threads ? 0 : -ENOMEM;
	err = err ?: profile__events(p, &s.ev, &s.nev);
	if (!err)
		only_type0(&s);
	err = err ?: name_locations(&s);
	err = err ?: group_threads(&s);
	err = err ?: write_doc(&s);
	if (err)
		out->len = start;
	intern__free(s.frames);
	intern__free(s.threads);
	free(s.loc_off);
	free(s.loc_n);
	free(s.lf);
	free(s.ev);
	free(s.ev_thread);
	free(s.ev_next);
	free(s.first);
	return err;
}
