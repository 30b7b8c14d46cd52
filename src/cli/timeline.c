/* timeline.c - `profcap report --timeline` (see timeline.h).
 *
 * Every occurrence becomes a cell (interval, row, value); consecutive
 * occurrences of a sample mostly fall in one interval and merge as they come.
 * The cells are sorted by interval and row, merged, and printed interval by
 * interval, rows largest first.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/timeline.h"
#include "cli/timeslice.h"
#include "model/profile.h"
#include "util/array.h"
#include "util/intern.h"
#include "util/json.h"
#include "util/sort.h"

/* Rows and cells a timeline keeps at most. */
#define MAX_ROWS (1u << 20)
#define MAX_CELLS (PROFILE_MAX_TIMES)

struct row_key {
	__s64 pid;
	__u32 tid; /* 0 by process */
	__u32 pad;
};

struct cell {
	__u32 bucket, row;
	__u64 value;
	__u64 lost; /* of which samples whose time was lost (PROFILE_ATTR_TIME_LOST) */
};

struct tl {
	const struct profile *p;
	const struct timeline_opts *o;
	__u64 first, last;
	struct intern *rows; /* struct row_key -> row */
	const char **names;  /* per row, borrowed from the profile */
	size_t names_cap;
	struct cell *cells;
	size_t ncells, cells_cap;
	__u64 untimed; /* value of the samples without time: in no interval */
};

static const char *sample_thread_name(const struct profile *p, const struct profile_sample_entry *s)
{
	__u32 i;

	for (i = 0; i < s->nattrs && i < PROFILE_SAMPLE_MAX_ATTRS; i++) {
		const struct profile_attr_entry *a = profile__attr(p, s->attrs[i]);

		if (a->kind == PROFILE_ATTR_STR &&
		    !strcmp(profile__string(p, a->key, NULL), "thread.name"))
			return a->str_value;
	}
	return NULL;
}

static __u32 sample_tid(const struct profile *p, const struct profile_sample_entry *s)
{
	__u32 i;

	for (i = 0; i < s->nattrs && i < PROFILE_SAMPLE_MAX_ATTRS; i++) {
		const struct profile_attr_entry *a = profile__attr(p, s->attrs[i]);

		if (a->kind == PROFILE_ATTR_INT &&
		    !strcmp(profile__string(p, a->key, NULL), "thread.id"))
			return (__u32)a->int_value;
	}
	return 0;
}

/* The row of sample @s of process entry @proc in *@row. */
static int row_of(struct tl *t, size_t proc, const struct profile_sample_entry *s, __u32 *row)
{
	const struct profile_process_desc *d = profile__process(t->p, proc);
	struct row_key k = {.pid = d->pid};
	const char *name = d->exe_name;
	bool added;
	int err;

	if (t->o->by_thread) {
		k.tid = sample_tid(t->p, s);
		name = sample_thread_name(t->p, s) ?: name;
	}
	err = intern__put(t->rows, &k, sizeof(k), row, &added);
	if (!err && added)
		err = array__grow((void **)&t->names, &t->names_cap, *row, sizeof(*t->names), 64,
				  MAX_ROWS);
	if (!err && added)
		t->names[*row] = name && *name ? name : "?";
	return err;
}

static int add_cell(struct tl *t, __u32 bucket, __u32 row, __u64 value, bool lost)
{
	struct cell *c = t->ncells ? &t->cells[t->ncells - 1] : NULL;
	int err;

	if (c && c->bucket == bucket && c->row == row) {
		c->value += value;
		c->lost += lost ? value : 0;
		return 0;
	}
	err = array__grow((void **)&t->cells, &t->cells_cap, t->ncells, sizeof(*t->cells), 256,
			  MAX_CELLS);
	if (err)
		return err;
	t->cells[t->ncells++] = (struct cell){bucket, row, value, lost ? value : 0};
	return 0;
}

/* Whether sample @s's own times were lost: its time is its drain's. */
static bool time_lost(const struct profile *p, const struct profile_sample_entry *s)
{
	__u32 i;

	for (i = 0; i < s->nattrs && i < PROFILE_SAMPLE_MAX_ATTRS; i++)
		if (!strcmp(profile__string(p, profile__attr(p, s->attrs[i])->key, NULL),
			    PROFILE_ATTR_TIME_LOST))
			return true;
	return false;
}

static int collect(struct tl *t)
{
	size_t i, j, k, n;
	__u32 row;
	bool lost;
	int err = 0;

	for (i = 0; i < profile__process_count(t->p) && !err; i++)
		for (j = 0; j < profile__sample_count(t->p, i) && !err; j++) {
			const struct profile_occurrence *o = profile__sample_times(t->p, i, j, &n);

			if (!n) {
				t->untimed += profile__sample(t->p, i, j)->value;
				continue;
			}
			err = row_of(t, i, profile__sample(t->p, i, j), &row);
			lost = time_lost(t->p, profile__sample(t->p, i, j));
			for (k = 0; k < n && !err; k++)
				err = add_cell(
					t, (__u32)((o[k].time_ns - t->first) / t->o->interval_ns),
					row, o[k].value, lost);
		}
	return err;
}

static int cmp_cell(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;

	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return 0;
}

/* Within one interval: largest value first. */
static int cmp_value(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* Sort the cells and merge those of one interval and row. */
static void merge(struct tl *t)
{
	size_t i, n = 0;

	qsort(t->cells, t->ncells, sizeof(*t->cells), cmp_cell);
	for (i = 0; i < t->ncells; i++) {
		if (n && t->cells[n - 1].bucket == t->cells[i].bucket &&
		    t->cells[n - 1].row == t->cells[i].row) {
			t->cells[n - 1].value += t->cells[i].value;
			t->cells[n - 1].lost += t->cells[i].lost;
		} else
			t->cells[n++] = t->cells[i];
	}
	t->ncells = n;
}

static void print_row_json(FILE *f, const struct tl *t, const struct cell *c, __u64 total)
{
	const struct row_key *k = intern__get(t->rows, c->row, NULL);

	fprintf(f, "{\"pid\":%lld,", (long long)k->pid);
	if (t->o->by_thread)
		fprintf(f, "\"tid\":%u,", k->tid);
	fputs("\"name\":", f);
	json__fput_str(f, t->names[c->row]);
	fprintf(f, ",\"value\":%llu,\"share\":%.6f}", (unsigned long long)c->value,
		(double)c->value / (double)total);
}

static void print_row_text(FILE *f, const struct tl *t, const struct cell *c, __u64 total)
{
	const struct row_key *k = intern__get(t->rows, c->row, NULL);

	fprintf(f, "  %s (%lld", t->names[c->row], (long long)k->pid);
	if (t->o->by_thread)
		fprintf(f, "/%u", k->tid);
	fprintf(f, ") %.1f%%", 100.0 * (double)c->value / (double)total);
}

/* One interval: cells [@from, @to). */
static void print_interval(FILE *f, const struct tl *t, size_t from, size_t to, bool first)
{
	__u64 start = t->first + (__u64)t->cells[from].bucket * t->o->interval_ns, total = 0;
	__u64 lost = 0;
	size_t i;
	char clk[32];

	for (i = from; i < to; i++) {
		total += t->cells[i].value;
		lost += t->cells[i].lost;
	}
	qsort(t->cells + from, to - from, sizeof(*t->cells), cmp_value);
	if (t->o->json) {
		fprintf(f,
			"%s{\"start_unix_nano\":%llu,\"offset_seconds\":%.3f,\"total\":%llu,"
			"\"time_lost\":%llu,\"rows\":[",
			first ? "" : ",", (unsigned long long)start,
			(double)(start - t->first) / 1e9, (unsigned long long)total,
			(unsigned long long)lost);
		for (i = from; i < to; i++) {
			fputs(i > from ? "," : "", f);
			print_row_json(f, t, &t->cells[i], total);
		}
		fputs("]}", f);
		return;
	}
	timeslice__fmt_clock(start, clk, sizeof(clk));
	fprintf(f, "%+9.3fs  %s  %8llu ", (double)(start - t->first) / 1e9, clk,
		(unsigned long long)total);
	for (i = from; i < to && (!t->o->top || i - from < t->o->top); i++)
		print_row_text(f, t, &t->cells[i], total);
	/* their times lost (ring full): counted here, at the drain that read them */
	if (lost)
		fprintf(f, "  [%llu with time lost]", (unsigned long long)lost);
	fputc('\n', f);
}

static void print(FILE *f, struct tl *t)
{
	const char *by = t->o->by_thread ? "thread" : "process";
	size_t i, start;
	char a[32], b[32];

	timeslice__fmt_clock(t->first, a, sizeof(a));
	timeslice__fmt_clock(t->last, b, sizeof(b));
	if (t->o->json) {
		fputs("{\"file\":", f);
		json__fput_str(f, t->o->file);
		fprintf(f,
			",\"start_unix_nano\":%llu,\"end_unix_nano\":%llu,\"interval_ns\":%llu,"
			"\"by\":\"%s\",\"untimed\":%llu,\"intervals\":[",
			(unsigned long long)t->first, (unsigned long long)t->last,
			(unsigned long long)t->o->interval_ns, by, (unsigned long long)t->untimed);
	} else {
		fprintf(f, "Timeline of %s: %s to %s, intervals of %.3f s, value by %s\n",
			t->o->file, a, b, (double)t->o->interval_ns / 1e9, by);
		if (t->untimed)
			fprintf(f, "%llu samples without their time are in no interval\n",
				(unsigned long long)t->untimed);
		fprintf(f, "%10s  %-12s  %8s  %s\n", "offset", "clock", "total", "shares");
	}
	for (i = 0, start = 0; i <= t->ncells; i++) {
		if (i < t->ncells && t->cells[i].bucket == t->cells[start].bucket)
			continue;
		if (i > start)
			print_interval(f, t, start, i, !start);
		start = i;
	}
	if (t->o->json)
		fputs("]}\n", f);
}

int timeline__print(FILE *f, const struct profile *p, const struct timeline_opts *o)
{
	struct tl t = {.p = p, .o = o};
	int err;

	if (!o->interval_ns)
		return -EINVAL;
	if (profile__time_span(p, &t.first, &t.last))
		return -ENODATA;
	if ((t.last - t.first) / o->interval_ns >= TIMELINE_MAX_INTERVALS)
		return -E2BIG;
	t.rows = intern__new(MAX_ROWS);
	err = t.rows ? collect(&t) : -ENOMEM;
	if (!err) {
		merge(&t);
		print(f, &t);
	}
	intern__free(t.rows);
	free(t.names);
	free(t.cells);
	return err;
}
