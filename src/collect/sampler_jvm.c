/* sampler_jvm.c - which processes' Java frames the BPF walker reads
 * (bpf/cpu_sampler/jvm.bpf.h), and the offsets it reads them with. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "jvm.h"
#include "collect/sampler_int.h"
#include "collect/sampler_jvm.h"
#include "proc/jvmproc.h"
#include "util/env.h"
#include "util/log.h"

#define JVM_ENV "PROFCAP_JVM" /* 0: no Java walk (benchmarks) */

_Static_assert(PROFCAP_JVM_BLOB_OFFSETS == JVMPROC_BLOB_OFFSETS &&
		       PROFCAP_JVM_FCO_S16 == JVMPROC_FCO_S16 &&
		       PROFCAP_JVM_MAX_HEAPS == JVMPROC_MAX_HEAPS &&
		       PROFCAP_JVM_MAX_FRAMES == JVMPROC_MAX_FRAMES &&
		       PROFCAP_F_JVM_TRUNC == PROFCAP_F_V8_TRUNC &&
		       PROFCAP_F_JVM_PARTIAL == PROFCAP_F_V8_PARTIAL &&
		       PROFCAP_F_JVM_LOST == PROFCAP_F_V8_LOST &&
		       2 * PROFCAP_JVM_MAX_FRAMES <= PROFCAP_V8_WORDS * PROFCAP_V8_MAX_FRAMES,
	       "the JVM walker's words must be those user space decodes");

/* A full table is warned about once per run. */
static bool jvm_warned;

static bool env_off(void)
{
	const char *env = env__get(env__process(), JVM_ENV);

	return env && !strcmp(env, "0");
}

void jvm__configure(struct sampler *s, const struct sampler_opts *o)
{
	s->skel->rodata->want_jvm = o->user && !env_off();
}

/* An interpreter slot the walker reads: a word in [fp - SLOTS_BELOW, fp]. */
static bool slot_ok(__s16 off)
{
	return off >= -PROFCAP_JVM_SLOTS_BELOW && off <= 0 && !(off & 7);
}

/* The end of field @off (@size bytes) of a CodeBlob's head, 0 when it
 * does not fit the walker's read. */
static unsigned head_end(__u16 off, unsigned size)
{
	return off == JVMPROC_NONE || off + size >= PROFCAP_JVM_BLOB_READ ? 0 : off + size;
}

int sampler__jvm_proc(const struct jvmproc *jp, struct jvm_proc *out)
{
	const struct jvmproc_layout *l = &jp->layout;
	unsigned ends[3], end = 0, i;

	memset(out, 0, sizeof(*out));
	if (!slot_ok(l->interp_method) || !slot_ok(l->interp_bcp) ||
	    l->heapblock_size == JVMPROC_NONE || l->nm_compile_id == JVMPROC_NONE ||
	    l->m_const_method == JVMPROC_NONE || l->cm_size == JVMPROC_NONE || !jp->nheaps ||
	    jp->nheaps > PROFCAP_JVM_MAX_HEAPS || jp->code_lo >= jp->code_hi || !jp->call_stub_ret)
		return -EINVAL;
	ends[0] = head_end(l->blob_frame_size, 4);
	ends[1] = head_end(l->blob_frame_complete, l->flags & JVMPROC_FCO_S16 ? 2 : 4);
	ends[2] = head_end(l->blob_code_begin, l->flags & JVMPROC_BLOB_OFFSETS ? 4 : 8);
	for (i = 0; i < 3; i++) {
		if (!ends[i])
			return -EINVAL;
		end = ends[i] > end ? ends[i] : end;
	}
	*out = (struct jvm_proc){
		.code_lo = jp->code_lo,
		.code_hi = jp->code_hi,
		.interp_lo = jp->interp_lo,
		.interp_hi = jp->interp_hi,
		.call_stub_ret = jp->call_stub_ret,
		.nheaps = jp->nheaps,
		.flags = l->flags & (JVMPROC_BLOB_OFFSETS | JVMPROC_FCO_S16),
		.heapblock_size = l->heapblock_size,
		.blob_size = l->blob_size,
		.blob_frame_complete = l->blob_frame_complete,
		.blob_frame_size = l->blob_frame_size,
		.blob_code_begin = l->blob_code_begin,
		.nm_compile_id = l->nm_compile_id,
		.nm_size = l->nm_size,
		.blob_read = (__u16)((end + 7) & ~7u),
		.m_const_method = l->m_const_method,
		.cm_size = l->cm_size,
		.interp_method = l->interp_method,
		.interp_bcp = l->interp_bcp,
	};
	if (out->blob_read >= PROFCAP_JVM_BLOB_READ)
		return -EINVAL;
	for (i = 0; i < jp->nheaps; i++) {
		const struct jvmproc_heap *h = &jp->heaps[i];

		if (h->lo >= h->hi || !h->segmap || h->log2_seg < 4 || h->log2_seg > 20)
			return -EINVAL;
		out->heaps[i] = (struct jvm_heap){
			.lo = h->lo, .hi = h->hi, .segmap = h->segmap, .log2_seg = h->log2_seg};
	}
	return 0;
}

int sampler__set_jvm(struct sampler *s, int pid, const struct jvmproc *jp)
{
	struct jvm_proc val;
	__u32 key = (__u32)pid;
	int err;

	if (!s->skel || !s->skel->rodata->want_unwind || !s->skel->rodata->want_jvm)
		return -EOPNOTSUPP;
	if (!jp) {
		if (s->skel->bss->jvm_nprocs)
			bpf_map__delete_elem(s->skel->maps.jvm_procs, &key, sizeof(key), 0);
		return 0;
	}
	err = sampler__jvm_proc(jp, &val);
	if (err) {
		pr_debug("process %d: JVM %u not walked: its layout does not fit the walker", pid,
			 jp->major);
		return err;
	}
	err = bpf_map__update_elem(s->skel->maps.jvm_procs, &key, sizeof(key), &val, sizeof(val),
				   BPF_ANY);
	if (err) {
		if (!__atomic_exchange_n(&jvm_warned, true, __ATOMIC_RELAXED))
			pr_warn("Java frames of process %d not read: %s (at most %u JVMs at once)",
				pid, strerror(-err), PROFCAP_JVM_PROCS);
		return err;
	}
	/* The programs skip the map while nothing was ever added: a count
	 * that only grows (the map holds the truth). */
	__atomic_add_fetch(&s->skel->bss->jvm_nprocs, 1, __ATOMIC_RELEASE);
	return 0;
}
