/* drain.c - a drain's record assembly (see drain.h). */
#include <string.h>

#include "collect/drain.h"
#include "collect/sampler_v8.h"

_Static_assert(SAMPLER_MAX_KSTACK == PROFCAP_MAX_STACK, "kernel stack depth");
_Static_assert(SAMPLER_MAX_USTACK == PROFCAP_MAX_USTACK, "user stack depth");
_Static_assert(SAMPLER_TCTX_ATTRS == PROFCAP_TCTX_ATTRS, "thread-context attrs bytes");
_Static_assert(SAMPLER_MAX_PYFRAMES == PROFCAP_PY_MAX_FRAMES, "Python stack depth");
_Static_assert(SAMPLER_REC_USTACK_ERR == PROFCAP_F_USTACK_ERR &&
		       SAMPLER_REC_USTACK_LOST == PROFCAP_F_USTACK_LOST &&
		       SAMPLER_REC_KSTACK_LOST == PROFCAP_F_KSTACK_LOST &&
		       SAMPLER_REC_USTACK_TRUNC == PROFCAP_F_USTACK_TRUNC &&
		       SAMPLER_REC_KSTACK_TRUNC == PROFCAP_F_KSTACK_TRUNC &&
		       SAMPLER_REC_USTACK_PARTIAL == PROFCAP_F_USTACK_PARTIAL &&
		       SAMPLER_REC_PY_TRUNC == PROFCAP_F_PY_TRUNC &&
		       SAMPLER_REC_PY_PARTIAL == PROFCAP_F_PY_PARTIAL &&
		       SAMPLER_REC_PY_LOST == PROFCAP_F_PY_LOST,
	       "record flags are the BPF program's");
_Static_assert(SAMPLER_MAX_JSFRAMES == PROFCAP_V8_MAX_FRAMES &&
		       SAMPLER_REC_V8_TRUNC == PROFCAP_F_V8_TRUNC &&
		       SAMPLER_REC_V8_PARTIAL == PROFCAP_F_V8_PARTIAL &&
		       SAMPLER_REC_V8_LOST == PROFCAP_F_V8_LOST,
	       "JavaScript record flags are the BPF program's");

void drain__cpu_record(const struct sample_key *k, __u64 count, struct sampler_record *r)
{
	*r = (struct sampler_record){
		.kind = SAMPLER_KIND_CPU,
		.tgid = k->tgid,
		.tid = k->tid,
		.flags = k->flags,
		.count = count,
		.attrs_size = k->attrs_size,
	};
	memcpy(r->comm, k->comm, 16);
	memcpy(r->trace_id, k->trace_id, sizeof(r->trace_id));
	memcpy(r->span_id, &k->span_id, sizeof(r->span_id));
	memcpy(r->attrs, k->attrs, sizeof(r->attrs));
}

void drain__offcpu_record(const struct offcpu_key *k, const struct offcpu_val *v,
			  struct sampler_record *r)
{
	*r = (struct sampler_record){
		.kind = SAMPLER_KIND_OFF_CPU,
		.state = (enum sampler_state)k->state,
		.switches = v->switches,
		.tgid = k->tgid,
		.tid = k->tid,
		.flags = k->flags,
		.count = v->ns,
	};
	memcpy(r->comm, k->comm, 16);
	memcpy(r->trace_id, k->trace_id, sizeof(r->trace_id));
	memcpy(r->span_id, &k->span_id, sizeof(r->span_id));
}

/* A deep user stack (@d->ust holds its first PROFCAP_MAX_STACK frames)
 * joined to its tail in @d->uips: the frame count. */
static __u32 join_tail(struct drain_scratch *d, const struct drain_stacks *src, __u64 hash,
		       __u32 *flags)
{
	__u64 nr = d->ust.nr < PROFCAP_MAX_USTACK ? d->ust.nr : PROFCAP_MAX_USTACK;

	memcpy(d->uips, d->ust.ips, sizeof(d->ust.ips));
	if (!src->tail(src->ctx, hash, &d->uips[PROFCAP_MAX_STACK]))
		return (__u32)nr;
	*flags |= PROFCAP_F_USTACK_PARTIAL; /* tail not stored */
	return PROFCAP_MAX_STACK;
}

static __u32 depth(const struct stack_trace *st)
{
	return (__u32)(st->nr < PROFCAP_MAX_STACK ? st->nr : PROFCAP_MAX_STACK);
}

__u64 drain__stacks(struct drain_scratch *d, const struct drain_stacks *src,
		    struct sampler_record *r, __u64 ustack, __u64 kstack)
{
	__u64 lost = r->kind == SAMPLER_KIND_CPU ? r->count : r->switches, missing = 0;

	r->comm[16] = '\0';
	if (ustack && !src->stack(src->ctx, ustack, &d->ust)) {
		r->ustack = d->ust.ips;
		r->nustack = depth(&d->ust);
		if (d->ust.nr > PROFCAP_MAX_STACK && src->tail) {
			r->ustack = d->uips;
			r->nustack = join_tail(d, src, ustack, &r->flags);
		}
	} else if (ustack) {
		missing += lost;
		r->flags |= PROFCAP_F_USTACK_LOST;
	}
	if (kstack && !src->stack(src->ctx, kstack, &d->kst)) {
		r->kstack = d->kst.ips;
		r->nkstack = depth(&d->kst);
	} else if (kstack) {
		missing += lost;
		r->flags |= PROFCAP_F_KSTACK_LOST;
	}
	return missing;
}

__u64 drain__pystack(struct drain_scratch *d, const struct drain_stacks *src,
		     struct sampler_record *r, __u64 pystack)
{
	__u64 nr;

	if (!pystack)
		return 0;
	if (src->stack(src->ctx, pystack, &d->pyst)) {
		r->flags |= SAMPLER_REC_PY_LOST;
		return r->kind == SAMPLER_KIND_CPU ? r->count : r->switches;
	}
	nr = d->pyst.nr < 2 * PROFCAP_PY_MAX_FRAMES ? d->pyst.nr : 2 * PROFCAP_PY_MAX_FRAMES;
	r->pystack = d->pyst.ips;
	r->npystack = (__u32)(nr & ~1ull);
	return 0;
}

__u64 drain__rtstack(struct stack_trace *buf, const struct drain_stacks *src,
		     struct sampler_record *r, __u64 rtstack)
{
	__u64 nr;

	if (!rtstack)
		return 0;
	if (src->stack(src->ctx, rtstack, buf)) {
		r->flags |= SAMPLER_REC_V8_LOST;
		return r->kind == SAMPLER_KIND_CPU ? r->count : r->switches;
	}
	nr = buf->nr < PROFCAP_V8_WORDS * PROFCAP_V8_MAX_FRAMES
		     ? buf->nr
		     : PROFCAP_V8_WORDS * PROFCAP_V8_MAX_FRAMES;
	r->rtstack = buf->ips;
	r->nrtstack = (__u32)(nr - nr % PROFCAP_V8_WORDS);
	return 0;
}
