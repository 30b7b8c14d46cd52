/* execsplit.c - samples before an exec stay with the old program (see
 * execsplit.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/execsplit.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "symbolize/symbolizer.h"
#include "util/array.h"
#include "util/log.h"

void execsplit__init(struct execsplit *x, struct ingest *in, sampler_record_fn add,
		     sampler_proc_fn describe, void *ctx)
{
	x->in = in;
	x->add = add;
	x->describe = describe;
	x->ctx = ctx;
}

/* Does @snap show another program than the one the symbolizer describes
 * process @tgid as (it exec()ed since)? */
static bool execd_since(const struct execsplit *x, __u32 tgid, const struct procsnap *snap)
{
	const struct profile_process_desc *d = symbolizer__process(x->in->sym, (int)tgid);
	size_t n;

	if (!d || !d->exe_path || !*d->exe_path || !snap || !snap->exe)
		return false;
	n = strlen(d->exe_path);
	return strncmp(snap->exe, d->exe_path, n) ||
	       (snap->exe[n] && strcmp(snap->exe + n, PROCMAPS_DELETED_SUFFIX));
}

static const struct execsplit_note *note_of(const struct execsplit *x, __u32 tgid)
{
	for (size_t i = 0; i < x->nnotes; i++)
		if (x->notes[i].tgid == tgid)
			return &x->notes[i];
	return NULL;
}

bool execsplit__of_new_program(const struct sampler_record *r, const struct procsnap *snap)
{
	const struct procmaps_entry *e;
	__u32 i;

	if (r->nustack && snap->maps) {
		for (i = 0; i < r->nustack && i < EXECSPLIT_PROBE_FRAMES; i++) {
			e = procmaps__find(snap->maps, r->ustack[i]);
			if (e && (e->perms & PROCMAPS_EXEC))
				return true;
		}
		return false;
	}
	return snap->comm[0] && !strncmp(r->comm, snap->comm, sizeof(snap->comm));
}

/* Keep a copy of @r until its process is described again. 0, or -E2BIG /
 * -ENOMEM (then it is added now). */
static int keep(struct execsplit *x, const struct sampler_record *r)
{
	size_t nst = x->nstacks + r->nkstack + r->nustack;
	struct execsplit_held *h;
	int err;

	err = array__grow((void **)&x->held, &x->held_cap, x->nheld, sizeof(*x->held), 16,
			  EXECSPLIT_HELD);
	if (!err && nst > x->nstacks)
		err = array__grow((void **)&x->stacks, &x->stacks_cap, nst - 1, sizeof(*x->stacks),
				  256, EXECSPLIT_HELD_FRAMES);
	if (err)
		return err;
	h = &x->held[x->nheld++];
	h->r = *r;
	h->kstack = x->nstacks;
	if (r->nkstack)
		memcpy(x->stacks + x->nstacks, r->kstack, r->nkstack * sizeof(*r->kstack));
	x->nstacks += r->nkstack;
	h->ustack = x->nstacks;
	if (r->nustack)
		memcpy(x->stacks + x->nstacks, r->ustack, r->nustack * sizeof(*r->ustack));
	x->nstacks += r->nustack;
	return 0;
}

/* The drain callback of execsplit__settle(): a record of a new program
 * waits, any other is added with its process as described now. */
static int split_record(void *ctx, const struct sampler_record *r)
{
	struct execsplit *x = ctx;
	const struct execsplit_note *n = note_of(x, r->tgid);

	if (n && n->snap && execsplit__of_new_program(r, n->snap) && !keep(x, r))
		return 0;
	return x->add(x->ctx, r);
}

int execsplit__settle(struct execsplit *x)
{
	struct ingest *in = x->in;
	int err = 0, e2;
	size_t i;

	if (!x->nnotes)
		return 0;
	if (in->smp)
		err = sampler__drain(in->smp, split_record, x);
	for (i = 0; i < in->ndefer && !note_of(x, in->defer[i].r.tgid); i++)
		;
	if (i < in->ndefer) {
		e2 = ingest__flush(in);
		err = err ?: e2;
	}
	x->applying = true;
	for (i = 0; i < x->nnotes; i++) {
		x->describe(x->ctx, x->notes[i].tgid, x->notes[i].snap);
		procsnap__free(x->notes[i].snap);
	}
	x->applying = false;
	x->nnotes = 0;
	for (i = 0; i < x->nheld; i++) {
		struct sampler_record *r = &x->held[i].r;

		r->kstack = x->stacks + x->held[i].kstack;
		r->ustack = x->stacks + x->held[i].ustack;
		e2 = x->add(x->ctx, r);
		err = err ?: e2;
	}
	x->nheld = x->nstacks = 0;
	return err;
}

bool execsplit__hold(struct execsplit *x, __u32 tgid, const struct procsnap *snap)
{
	if (x->applying || !execd_since(x, tgid, snap))
		return false;
	/* Another exec of a process waiting, or no room: those first. */
	if (note_of(x, tgid) || x->nnotes == EXECSPLIT_NOTES) {
		if (execsplit__settle(x))
			pr_debug("naming the samples before an exec failed");
		if (!execd_since(x, tgid, snap))
			return false;
	}
	/* A reference to the borrowed snapshot: its count is atomic. */
	x->notes[x->nnotes++] = (struct execsplit_note){
		.tgid = tgid, .snap = procsnap__get((struct procsnap *)snap)};
	return true;
}

void execsplit__release(struct execsplit *x)
{
	for (size_t i = 0; i < x->nnotes; i++)
		procsnap__free(x->notes[i].snap);
	x->nnotes = 0;
	free(x->held);
	free(x->stacks);
	x->held = NULL;
	x->stacks = NULL;
	x->nheld = x->held_cap = x->nstacks = x->stacks_cap = 0;
}
