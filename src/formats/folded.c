/* folded.c - folded-stack text encoder (see folded.h).
 *
 * Each sample's line is built in a scratch buffer and interned, so equal
 * lines (threads of one process with the same stack) share one counter;
 * the distinct lines are then sorted and written with their totals.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "formats/folded.h"
#include "util/intern.h"
#include "model/profile.h"
#include "model/view.h"

#define NAME_MAX_LEN 1024

struct folded {
	struct intern *lines; /* NUL-terminated line text (no count) */
	__u64 *counts;	      /* per line index */
	size_t cap;
};

/* Replace the characters that would break the line format. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if (*s == ';' || *s == '\n' || *s == '\r')
			*s = '_';
}

const char *folded__frame_name(const struct profile *p, __u32 loc, char *name, size_t len)
{
	return folded__line_name(p, loc, 0, name, len);
}

const char *folded__line_name(const struct profile *p, __u32 loc, size_t i, char *name,
			      size_t len)
{
	char scratch[NAME_MAX_LEN];
	size_t nl;
	const char *fn = view__line_function(p, loc, i, &nl);

	if (!fn)
		fn = view__line_name(p, loc, i, scratch, sizeof(scratch));
	snprintf(name, len, "%s%s", fn, i + 1 < nl ? FOLDED_INLINE_MARK : "");
	sanitize(name);
	return name;
}

static int add_str(struct buf *b, const char *s)
{
	return buf__append(b, s, strlen(s));
}

/* Build the line of sample @s of process @proc into @line (replacing it). */
static int build_line(const struct profile *p, size_t proc, const struct profile_sample_entry *s,
		      struct buf *line)
{
	const struct profile_process_desc *d = profile__process(p, proc);
	char name[NAME_MAX_LEN];
	const __u32 *locs;
	size_t n, i;
	int err;

	buf__reset(line);
	if (d->exe_name && *d->exe_name) {
		snprintf(name, sizeof(name), "%s", d->exe_name);
		sanitize(name);
	} else {
		snprintf(name, sizeof(name), "[pid %lld]", (long long)d->pid);
	}
	err = add_str(line, name);
	locs = profile__stack(p, s->stack, &n);
	/* The model is leaf first; folded lines go root first. */
	for (i = n; i-- > 0 && !err;) {
		size_t k, nl;

		/* Inlined frames root first too: the caller, then what it inlined. */
		profile__lines(p, profile__location(p, locs[i])->lines, &nl);
		for (k = nl ? nl : 1; k-- > 0 && !err;) {
			err = buf__append(line, ";", 1);
			if (!err)
				err = add_str(line, folded__line_name(p, locs[i], k, name,
								      sizeof(name)));
		}
	}
	if (!err)
		err = buf__append(line, "", 1);
	return err;
}

static int count_line(struct folded *fo, const struct buf *line, __u64 value)
{
	__u32 idx;
	bool added;
	int err;

	err = array__grow((void **)&fo->counts, &fo->cap, intern__count(fo->lines),
			  sizeof(*fo->counts), 256, SIZE_MAX / sizeof(*fo->counts));
	if (err)
		return err;
	err = intern__put(fo->lines, line->data, line->len, &idx, &added);
	if (err)
		return err;
	if (added)
		fo->counts[idx] = 0;
	fo->counts[idx] += value;
	return 0;
}

struct line_ref {
	const char *text;
	size_t len; /* without the NUL */
	__u64 count;
};

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(((const struct line_ref *)a)->text, ((const struct line_ref *)b)->text);
}

static int write_lines(struct folded *fo, struct buf *out)
{
	size_t i, n = intern__count(fo->lines);
	struct line_ref *refs;
	char num[32];
	int err = 0;

	refs = malloc((n ? n : 1) * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		refs[i].text = intern__get(fo->lines, (__u32)i, &refs[i].len);
		refs[i].len--;
		refs[i].count = fo->counts[i];
	}
	qsort(refs, n, sizeof(*refs), cmp_lines);
	for (i = 0; i < n && !err; i++) {
		snprintf(num, sizeof(num), " %" PRIu64 "\n", (uint64_t)refs[i].count);
		err = buf__append(out, refs[i].text, refs[i].len);
		if (!err)
			err = add_str(out, num);
	}
	free(refs);
	return err;
}

int folded__encode(const struct profile *p, struct buf *out)
{
	struct folded fo = {0};
	size_t start = out->len, proc, i;
	struct buf line;
	int err = 0;

	buf__init(&line, 1u << 20);
	fo.lines = intern__new(PROFILE_MAX_ENTRIES);
	if (!fo.lines) {
		err = -ENOMEM;
		goto out;
	}
	for (proc = 0; proc < profile__process_count(p) && !err; proc++) {
		for (i = 0; i < profile__sample_count(p, proc) && !err; i++) {
			const struct profile_sample_entry *s = profile__sample(p, proc, i);

			err = build_line(p, proc, s, &line);
			if (!err)
				err = count_line(&fo, &line, s->value);
		}
	}
	if (!err)
		err = write_lines(&fo, out);
out:
	if (err)
		out->len = start;
	free(fo.counts);
	intern__free(fo.lines);
	buf__release(&line);
	return err;
}
