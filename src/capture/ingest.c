/* ingest.c - drained records into a window's profile (see ingest.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/ingest.h"
#include "collect/sampler.h"
#include "proc/threadctx.h"
#include "proc/jvmproc.h"
#include "symbolize/jvmframes.h"
#include "symbolize/phpframes.h"
#include "symbolize/pyframes.h"
#include "symbolize/rubyframes.h"
#include "symbolize/symbolizer.h"
#include "symbolize/v8frames.h"
#include "capture/perl.h"
#include "symbolize/perlframes.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/log.h"

void ingest__window(struct ingest *in, struct profile *prof)
{
	in->prof = prof;
	in->c = (struct ingest_counts){0};
	in->nrefreshed = 0;
	in->warned_full = false;
}

size_t ingest__deferred_bytes(const struct ingest *in)
{
	return in->ndefer * sizeof(*in->defer) + in->ndstacks * sizeof(*in->dstacks) +
	       in->ndtimes * sizeof(*in->dtimes);
}

void ingest__release(struct ingest *in)
{
	free(in->defer);
	free(in->dstacks);
	free(in->dtimes);
	in->defer = NULL;
	in->dstacks = NULL;
	in->dtimes = NULL;
	in->ndefer = in->defer_cap = in->ndstacks = in->dstacks_cap = 0;
	in->ndtimes = in->dtimes_cap = 0;
}

/* The process of record @r as the model knows it. */
static const struct profile_process_desc *
describe(struct ingest *in, const struct sampler_record *r, struct profile_process_desc *desc)
{
	const struct profile_process_desc *known;

	known = symbolizer__process(in->sym, (int)r->tgid);
	if (!known && r->tgid && !symbolizer__tried(in->sym, (int)r->tgid)) {
		/* Not announced yet (or the notice was lost): try now, once (a
		 * short-lived process has many records). A process whose maps
		 * are unreadable is still added with its name. */
		symbolizer__add_process(in->sym, (int)r->tgid);
		known = symbolizer__process(in->sym, (int)r->tgid);
	}
	memset(desc, 0, sizeof(*desc));
	desc->pid = r->tgid;
	if (known)
		*desc = *known;
	else /* Gone before we saw it, or the idle task: name it by its comm. */
		desc->exe_name = r->tgid ? r->comm : "swapper";
	return known;
}

/* The name of @r's thread: its Java name where the kernel's 15 bytes are
 * the first of it, else the kernel's. */
static const char *thread_name(struct ingest *in, const struct sampler_record *r)
{
	const char *java = in->jvm && r->tgid ? jvmframes__thread_name(in->jvm, (int)r->tgid,
								       (int)r->tid, r->comm)
					      : NULL;

	return java ? java : r->comm;
}

/* The timed occurrences of @r into sample type @type (frames in
 * in->frames, @n of them), each under its CPU, with labels @lab; the value
 * they added goes to *@added. Those the model cannot hold (its cap on times,
 * or a full profile) stay for the caller's untimed sample; *@nocc gets
 * how many were added. 0 or -errno. */
static int add_occurrences(struct ingest *in, __u32 type, const struct profile_process_desc *desc,
			   const struct sampler_record *r, const struct profile_labels *lab,
			   size_t n, __u64 *added, __u64 *nocc)
{
	struct profile_labels tl = *lab;
	struct profile_num_attr lost = {.key = PROFILE_ATTR_TIME_LOST, .value = 1};
	__u32 stack, i;
	int err;

	*added = *nocc = 0;
	if (!r->ntimes)
		return 0;
	err = profile__add_stack(in->prof, in->frames, n, &stack);
	tl.has_cpu = true;
	tl.switches = 0; /* each occurrence is one wait: its time carries it */
	for (i = 0; i < r->ntimes && !err; i++) {
		const struct sampler_time *t = &r->times[i];

		if (!t->value || *added + t->value > r->count)
			continue; /* never more than the record counts */
		tl.cpu = t->cpu;
		if (t->flags & SAMPLER_TIME_LOST) { /* the last: what lost its time */
			tl.has_cpu = false;
			tl.num = &lost;
			tl.nnum = 1;
			tl.switches = r->kind == SAMPLER_KIND_OFF_CPU && r->switches > *nocc
					      ? r->switches - *nocc
					      : 0;
		}
		err = profile__add_timed_stack_sample(in->prof, type, desc, r->tid,
						      thread_name(in, r), &tl, stack, t->value,
						      t->time_ns);
		if (!err && (t->flags & SAMPLER_TIME_LOST))
			in->c.untimed += tl.switches ? tl.switches : t->value;
		if (!err)
			*added += t->value;
		if (!err && !(t->flags & SAMPLER_TIME_LOST))
			(*nocc)++;
	}
	return err == -E2BIG || err == -ENOMEM ? 0 : err;
}

/* @timed occurrences of a record were added with their time, @untimed
 * without. */
static void time_counts(struct ingest *in, __u64 timed, __u64 untimed)
{
	in->c.timed += timed;
	if (in->timestamps)
		in->c.untimed += untimed;
}

/* An off-CPU record (@n frames resolved in in->frames) into the off_cpu
 * profile of its process. */
static int add_off_cpu(struct ingest *in, const struct sampler_record *r,
		       const struct profile_process_desc *desc, size_t n)
{
	struct profile_labels lab = {.state = sampler__state_name(r->state),
				     .switches = r->switches};
	struct profile_link link;
	__u32 type;
	int err;

	/* The span the thread waited in (thread context), when it had one. */
	memcpy(link.trace_id, r->trace_id, sizeof(link.trace_id));
	memcpy(link.span_id, r->span_id, sizeof(link.span_id));
	lab.link = &link;
	__u64 timed = 0, nocc = 0;

	err = profile__add_value_type(in->prof, "off_cpu", "nanoseconds", "context_switch", "count",
				      1, &type);
	err = err ?: add_occurrences(in, type, desc, r, &lab, n, &timed, &nocc);
	/* A wait's event carries every switch its time sums: waits are left
	 * without time only when time is. */
	lab.switches = r->count > timed ? (r->switches > nocc ? r->switches - nocc : 1) : 0;
	time_counts(in, nocc, lab.switches);
	if (!err && r->count > timed)
		err = profile__add_typed_sample(in->prof, type, desc, r->tid, thread_name(in, r),
						&lab, in->frames, n, r->count - timed);
	if (err == -E2BIG || err == -ENOMEM) {
		in->c.off_cpu_dropped += r->switches;
		return 0;
	}
	return err;
}

/* The thread-context attributes of @r (OTEP 4947 attrs-data, decoded
 * against its process's key map; an unknown key index refreshes that map
 * once) into @lab, with @ctx and @vals as storage. */
static void thread_attrs(struct ingest *in, const struct sampler_record *r,
			 struct profile_labels *lab, struct profile_ctx_attr *ctx,
			 char (*vals)[SAMPLER_TCTX_ATTRS])
{
	size_t len = r->attrs_size < SAMPLER_TCTX_ATTRS ? r->attrs_size : SAMPLER_TCTX_ATTRS;
	const char *const *keys;
	struct threadctx_attrs a;
	size_t nkeys = symbolizer__thread_keys(in->sym, (int)r->tgid, &keys);
	unsigned i;

	threadctx__decode_attrs(r->attrs, len, nkeys, &a);
	for (i = 0; a.unknown && i < in->nrefreshed && in->refreshed[i] != r->tgid; i++)
		;
	if (a.unknown && i == in->nrefreshed &&
	    i < sizeof(in->refreshed) / sizeof(in->refreshed[0])) {
		in->refreshed[in->nrefreshed++] = r->tgid;
		symbolizer__refresh_context(in->sym, (int)r->tgid);
		nkeys = symbolizer__thread_keys(in->sym, (int)r->tgid, &keys);
		threadctx__decode_attrs(r->attrs, len, nkeys, &a);
	}
	in->c.attrs_unknown += (__u64)(a.unknown + a.overflow) * r->count;
	if (a.malformed || r->attrs_size > SAMPLER_TCTX_ATTRS)
		in->c.attrs_bad += r->count;
	for (i = 0; i < a.n && lab->nctx < PROFILE_MAX_CTX_ATTRS; i++) {
		if (!keys[a.attr[i].key] || a.attr[i].len >= SAMPLER_TCTX_ATTRS) {
			in->c.attrs_unknown += r->count;
			continue;
		}
		memcpy(vals[lab->nctx], a.attr[i].value, a.attr[i].len);
		vals[lab->nctx][a.attr[i].len] = '\0';
		ctx[lab->nctx].key = keys[a.attr[i].key];
		ctx[lab->nctx].value = vals[lab->nctx];
		lab->nctx++;
	}
	lab->ctx = ctx;
	if (lab->nctx)
		in->c.attrs_kept += r->count;
}

/* The Python stack of @r (resolved last) in the window's counters. */
static void python_counts(struct ingest *in, const struct sampler_record *r)
{
	__u64 n = r->kind == SAMPLER_KIND_CPU ? r->count : r->switches;

	if (!r->npystack && !(r->flags & SAMPLER_REC_PY_LOST))
		return;
	in->c.py_samples += n;
	if (r->flags & (SAMPLER_REC_PY_TRUNC | SAMPLER_REC_PY_PARTIAL | SAMPLER_REC_PY_LOST))
		in->c.py_partial += n;
	if (in->npy_named < in->npy || (r->npystack && !in->npy))
		in->c.py_unknown += n;
}

/* Record @r into the profile; its frames are in in->frames already. */
static int add_record(struct ingest *in, const struct sampler_record *r)
{
	const struct profile_process_desc *known;
	struct profile_process_desc desc;
	struct profile_labels lab = {0};
	struct profile_ctx_attr cattrs[PROFILE_MAX_CTX_ATTRS];
	char vals[PROFILE_MAX_CTX_ATTRS][SAMPLER_TCTX_ATTRS];
	struct profile_link link;
	size_t n = in->nframes;
	__u64 timed = 0, nocc = 0;
	int err;

	known = describe(in, r, &desc);
	python_counts(in, r);
	/* Sample counters count CPU samples; off-CPU records carry nanoseconds. */
	if (r->kind == SAMPLER_KIND_OFF_CPU)
		return add_off_cpu(in, r, &desc, n);
	if ((r->flags & SAMPLER_REC_USTACK_ERR) && known && known->exe_path && *known->exe_path)
		in->c.ustack_missing += r->count;
	if (r->flags & (SAMPLER_REC_USTACK_LOST | SAMPLER_REC_KSTACK_LOST))
		in->c.stack_lost += r->count;
	/* A user stack the unwinder could not finish is cut at the root end,
	 * like one at the depth limit: counted as truncated, never complete. */
	if (r->flags &
	    (SAMPLER_REC_USTACK_TRUNC | SAMPLER_REC_KSTACK_TRUNC | SAMPLER_REC_USTACK_PARTIAL))
		in->c.truncated += r->count;
	if (r->flags & (SAMPLER_REC_USTACK_TRUNC | SAMPLER_REC_KSTACK_TRUNC))
		in->c.depth_cut += r->count;
	if (r->flags & SAMPLER_REC_USTACK_PARTIAL) {
		in->c.partial += r->count;
		/* Code mapped after the tables were loaded (dlopen)? */
		if (r->tgid && in->smp)
			sampler__refresh_process(in->smp, (int)r->tgid);
	}

	/* The span of the samples (thread context), when the record had one. */
	memcpy(link.trace_id, r->trace_id, sizeof(link.trace_id));
	memcpy(link.span_id, r->span_id, sizeof(link.span_id));
	lab.link = &link;
	if (r->attrs_size)
		thread_attrs(in, r, &lab, cattrs, vals);
	err = add_occurrences(in, 0, &desc, r, &lab, n, &timed, &nocc);
	time_counts(in, nocc, r->count - timed);
	if (!err && r->count > timed)
		err = profile__add_typed_sample(in->prof, 0, &desc, r->tid, thread_name(in, r),
						&lab, in->frames, n, r->count - timed);
	if (err == -E2BIG || err == -ENOMEM) {
		in->c.model_dropped += r->count - timed;
		if (!in->warned_full) {
			pr_warn("the profile is full (%s): later samples are counted as dropped; "
				"use a shorter --seconds or a lower -F",
				strerror(-err));
			in->warned_full = true;
		}
		return 0;
	}
	return err;
}

/* The Python frames of @r (process @pp) named, merged with its user
 * frames in in->ufr into in->frames after the @r->nkstack kernel ones.
 * Returns the frames written there. Code objects are read (and cached) as
 * soon as a record comes: the process may be gone when it is added. */
static size_t merge_python(struct ingest *in, const struct sampler_record *r,
			   const struct pyproc *pp)
{
	struct pyframes_raw raw[SAMPLER_MAX_PYFRAMES];
	size_t npy = pyframes__decode(r->pystack, r->npystack, raw, SAMPLER_MAX_PYFRAMES);

	in->npy = npy;
	in->npy_named = pyframes__resolve(in->py, (int)r->tgid, raw, npy, in->pyfr);
	return pyframes__merge(pp, r->ustack, in->ufr, r->nustack, in->pyfr, raw, npy,
			       in->frames + r->nkstack, INGEST_MAX_FRAMES - r->nkstack);
}

/* The JavaScript frames of @r named, merged with its user frames in
 * in->ufr into in->frames after the @r->nkstack kernel ones (perf map
 * names kept). Returns the frames written there. Functions are read (and
 * cached) as soon as a record comes, as Python's code objects. */
static size_t merge_v8(struct ingest *in, const struct sampler_record *r)
{
	struct v8frames_raw raw[SAMPLER_MAX_JSFRAMES];
	struct profile_frame js[SAMPLER_MAX_JSFRAMES];
	size_t n = v8frames__decode(r->rtstack, r->nrtstack, raw, SAMPLER_MAX_JSFRAMES);

	v8frames__resolve(in->v8, (int)r->tgid, raw, n, js);
	return v8frames__merge(r->ustack, in->ufr, r->nustack, js, raw, n, in->frames + r->nkstack,
			       INGEST_MAX_FRAMES - r->nkstack);
}

/* The Java frames of @r (JVM @jp) named, merged with its user frames in
 * in->ufr into in->frames after the @r->nkstack kernel ones: each frame of
 * the code cache takes its Java frame. Methods are read (and cached) as
 * soon as a record comes, as Python's code objects. */
static size_t merge_jvm(struct ingest *in, const struct sampler_record *r, const struct jvmproc *jp)
{
	struct jvmframes_raw raw[JVMPROC_MAX_FRAMES];
	struct profile_frame java[JVMPROC_MAX_FRAMES];
	size_t n = jvmframes__decode(r->rtstack, r->nrtstack, raw, JVMPROC_MAX_FRAMES);

	/* every frame is named, "<unknown java>" at worst */
	jvmframes__resolve(in->jvm, (int)r->tgid, raw, n, java);
	return jvmframes__merge(jp, r->ustack, in->ufr, r->nustack, java, n,
				in->frames + r->nkstack, INGEST_MAX_FRAMES - r->nkstack);
}

/* The PHP frames of @r (process @pp) named, merged with its user frames
 * in in->ufr into in->frames after the @r->nkstack kernel ones. Returns the
 * frames written there. Functions are read (and cached) as soon as a
 * record comes, as Python's code objects. */
static size_t merge_php(struct ingest *in, const struct sampler_record *r,
			const struct phpproc *pp)
{
	struct phpframes_raw raw[SAMPLER_MAX_JSFRAMES];
	struct profile_frame php[SAMPLER_MAX_JSFRAMES];
	size_t n = phpframes__decode(r->rtstack, r->nrtstack, raw, SAMPLER_MAX_JSFRAMES);

	phpframes__resolve(in->php, (int)r->tgid, raw, n, php);
	return phpframes__merge(pp, r->ustack, in->ufr, r->nustack, php, raw, n,
				in->frames + r->nkstack, INGEST_MAX_FRAMES - r->nkstack);
}

/* The Ruby frames of @r (process @rp) named, merged with its user frames
 * in in->ufr into in->frames after the @r->nkstack kernel ones: each
 * native frame that ran the VM loop gives way to the Ruby frames it ran.
 * Iseqs are read (and cached) as soon as a record comes. */
static size_t merge_ruby(struct ingest *in, const struct sampler_record *r,
			 const struct rubyproc *rp)
{
	struct rubyframes_raw raw[SAMPLER_MAX_JSFRAMES];
	struct profile_frame rb[SAMPLER_MAX_JSFRAMES];
	size_t n = rubyframes__decode(r->rtstack, r->nrtstack, raw, SAMPLER_MAX_JSFRAMES);

	rubyframes__resolve(in->rb, (int)r->tgid, raw, n, rb);
	return rubyframes__merge(rp, r->ustack, in->ufr, r->nustack, rb, raw, n,
				 in->frames + r->nkstack, INGEST_MAX_FRAMES - r->nkstack);
}

/* The Perl frames of @r named by @pl, merged with its user frames in
 * in->ufr into in->frames after the @r->nkstack kernel ones: each runops
 * frame replaced by the Perl frames it ran. */
static size_t merge_perl(struct ingest *in, const struct sampler_record *r, struct perlframes *pl)
{
	struct perlframes_raw raw[SAMPLER_MAX_JSFRAMES];
	struct profile_frame fr[SAMPLER_MAX_JSFRAMES];
	size_t n = perlframes__decode(r->rtstack, r->nrtstack, raw, SAMPLER_MAX_JSFRAMES);

	perlframes__resolve(pl, (int)r->tgid, raw, n, fr);
	return perlframes__merge(perlframes__process(pl, (int)r->tgid), r->ustack, in->ufr,
				 r->nustack, fr, raw, n, in->frames + r->nkstack,
				 INGEST_MAX_FRAMES - r->nkstack);
}

/* The frames of @r into in->frames: kernel then user, leaf first. With
 * @batch, kernel names and DWARF lines only from what the symbolizer
 * knows, queuing the rest: false when something was queued (then resolve
 * again after ingest__flush()'s batches). */
static bool resolve_frames(struct ingest *in, const struct sampler_record *r, bool batch)
{
	const struct pyproc *pp = NULL;
	const struct jvmproc *jp = NULL;
	const struct phpproc *php;
	const struct rubyproc *rp = NULL;
	struct perlframes *pl = NULL;
	struct profile_frame *uf;
	bool done = true, js;
	__u32 i;

	for (i = 0; i < r->nkstack; i++)
		done &= symbolizer__resolve_kernel(in->sym, r->kstack[i], &in->frames[i]);
	in->npy = in->npy_named = 0;
	if (r->npystack && in->py)
		pp = pyframes__process(in->py, (int)r->tgid);
	/* A Python or V8 process's user frames are merged with its own. */
	js = !pp && r->nrtstack && in->v8 && v8frames__process(in->v8, (int)r->tgid);
	if (!pp && !js && r->nrtstack && in->jvm)
		jp = jvmframes__process(in->jvm, (int)r->tgid);
	php = !pp && !js && !jp && r->nrtstack ? phpframes__process(in->php, (int)r->tgid) : NULL;
	if (!pp && !js && !jp && !php && r->nrtstack && in->rb)
		rp = rubyframes__process(in->rb, (int)r->tgid);
	if (!pp && !js && !jp && !php && !rp && r->nrtstack) /* Perl's too */
		pl = capture_perl__frames_of(in->smp, (int)r->tgid);
	uf = pp || js || jp || php || rp || pl ? in->ufr : in->frames + r->nkstack;
	/* The first user address is an exact PC (the saved user registers':
	 * the interrupted instruction, or the one after a syscall) even below
	 * kernel frames; the others are return addresses. Taking it for a
	 * return address named a PC at a function's first byte by the byte
	 * before it: alignment padding, with a line but no function. */
	for (i = 0; i < r->nustack; i++) {
		if (batch)
			done &= symbolizer__resolve_user_batched(in->sym, (int)r->tgid,
								 r->ustack[i], i == 0, &uf[i]);
		else
			symbolizer__resolve_user(in->sym, (int)r->tgid, r->ustack[i], i == 0,
						 &uf[i]);
	}
	in->nframes = r->nkstack + (pp    ? merge_python(in, r, pp)
				    : js  ? merge_v8(in, r)
				    : jp  ? merge_jvm(in, r, jp)
				    : php ? merge_php(in, r, php)
				    : rp  ? merge_ruby(in, r, rp)
				    : pl  ? merge_perl(in, r, pl)
					  : r->nustack);
	return done;
}

/* Keep a copy of @r until ingest__flush(). */
static int defer_record(struct ingest *in, const struct sampler_record *r)
{
	size_t nst = in->ndstacks + r->nkstack + r->nustack + r->npystack + r->nrtstack;
	struct deferred *d;

	int err;

	err = array__grow((void **)&in->defer, &in->defer_cap, in->ndefer, sizeof(*in->defer), 64,
			  INGEST_DEFER_MAX);
	if (!err && nst)
		err = array__grow((void **)&in->dstacks, &in->dstacks_cap, nst - 1,
				  sizeof(*in->dstacks), 64,
				  INGEST_DEFER_MAX * (SAMPLER_MAX_KSTACK + SAMPLER_MAX_USTACK +
						      2 * SAMPLER_MAX_PYFRAMES +
						      3 * SAMPLER_MAX_JSFRAMES));
	/* Times are bounded by the samples a drain holds (one per count). */
	if (!err && r->ntimes)
		err = array__grow((void **)&in->dtimes, &in->dtimes_cap,
				  in->ndtimes + r->ntimes - 1, sizeof(*in->dtimes), 64,
				  (size_t)INGEST_DEFER_MAX * 64);
	if (err)
		return err;
	d = &in->defer[in->ndefer++];
	d->r = *r;
	d->kstack = in->ndstacks;
	if (r->nkstack)
		memcpy(in->dstacks + in->ndstacks, r->kstack, r->nkstack * sizeof(*r->kstack));
	in->ndstacks += r->nkstack;
	d->ustack = in->ndstacks;
	if (r->nustack)
		memcpy(in->dstacks + in->ndstacks, r->ustack, r->nustack * sizeof(*r->ustack));
	in->ndstacks += r->nustack;
	d->pystack = in->ndstacks;
	if (r->npystack)
		memcpy(in->dstacks + in->ndstacks, r->pystack, r->npystack * sizeof(*r->pystack));
	in->ndstacks += r->npystack;
	/* the JavaScript words right after the Python ones */
	if (r->nrtstack)
		memcpy(in->dstacks + in->ndstacks, r->rtstack, r->nrtstack * sizeof(*r->rtstack));
	in->ndstacks += r->nrtstack;
	d->times = in->ndtimes;
	if (r->ntimes)
		memcpy(in->dtimes + in->ndtimes, r->times, r->ntimes * sizeof(*r->times));
	in->ndtimes += r->ntimes;
	return 0;
}

/* Name the kernel addresses the deferred records wait for: one pass over
 * kallsyms (nothing when none waits). */
void ingest__kernel_pass(struct ingest *in)
{
	bool queued = symbolizer__kernel_queue_room(in->sym) < SYMBOLIZER_KERNEL_BATCH;
	struct symbolizer_stats before, after;
	__s64 t0 = (__s64)clock__mono_ns();
	int err;

	symbolizer__stats(in->sym, &before);
	err = symbolizer__resolve_kernel_batch(in->sym);
	symbolizer__stats(in->sym, &after);
	in->last_kpass = t0;
	if (queued)
		pr_debug("kernel symbols of %zu records named in %.1f ms (%s)", in->ndefer,
			 ((__s64)clock__mono_ns() - t0) / 1e6,
			 after.kernel_named > before.kernel_named ? "by the kernel"
								  : "from /proc/kallsyms");
	if (err && !in->warned_kallsyms) {
		pr_warn("cannot read /proc/kallsyms (%s): some kernel frames keep addresses only",
			strerror(-err));
		in->warned_kallsyms = true;
	}
}

/* Name the kernel addresses the deferred records wait for (kernel_pass())
 * and look up their DWARF lines (file by file), then add those records. 0
 * or the first error of adding. */
int ingest__flush(struct ingest *in)
{
	struct profile_process_desc desc;
	__u64 cpu;
	size_t k;
	int ret = 0;

	ingest__kernel_pass(in);
	/* Queue every line still missing before the batch, which begins each
	 * file's DWARF once (or finds it kept from the last batch), including
	 * those of a record whose process was described only since it was
	 * deferred (its frames found no mapping then): looked up one by one
	 * below, they would begin a file again. */
	for (k = 0; k < in->ndefer; k++) {
		struct sampler_record *r = &in->defer[k].r;

		r->kstack = in->dstacks + in->defer[k].kstack;
		r->ustack = in->dstacks + in->defer[k].ustack;
		r->pystack = in->dstacks + in->defer[k].pystack;
		r->times = r->ntimes ? in->dtimes + in->defer[k].times : NULL;
		r->rtstack = r->pystack + r->npystack;
		describe(in, r, &desc);
		resolve_frames(in, r, true);
	}
	cpu = clock__thread_cpu_ns();
	symbolizer__resolve_lines_batch(in->sym);
	in->cpu_lines_ns += clock__thread_cpu_ns() - cpu;
	for (k = 0; k < in->ndefer && !ret; k++) {
		struct sampler_record *r = &in->defer[k].r;

		resolve_frames(in, r, false);
		ret = add_record(in, r);
	}
	/* Their size follows one drain: give it back. */
	ingest__release(in);
	return ret;
}

int ingest__record(void *ctx, const struct sampler_record *r)
{
	struct ingest *in = ctx;
	int err;

	if (resolve_frames(in, r, true))
		return add_record(in, r);
	err = defer_record(in, r);
	if (err)
		return err;
	/* The queue could not take another record's frames: pass now. */
	if (symbolizer__kernel_queue_room(in->sym) < SAMPLER_MAX_KSTACK)
		return ingest__flush(in);
	return 0;
}
