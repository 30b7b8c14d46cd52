/* sampler_v8.c - which processes' JavaScript frames the BPF walker reads
 * (bpf/cpu_sampler/v8.bpf.c), and the offsets it reads them with. */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "collect/sampler_int.h"
#include "collect/sampler_v8.h"
#include "proc/v8proc.h"
#include "util/env.h"
#include "util/log.h"

#define V8_ENV "PROFCAP_V8" /* 0: no JavaScript walk (benchmarks) */

/* A full table is warned about once per run. */
static bool v8_warned;

/* A frame slot the walker reads: a word in [fp - SLOTS_BELOW, fp). */
static bool slot_ok(__s16 off)
{
	return off < 0 && off >= -PROFCAP_V8_SLOTS_BELOW && !(off & 7);
}

/* The end of field @off (@size bytes) of the function's head, 0 when it
 * does not fit the read. */
static unsigned head_end(__u16 off, unsigned size)
{
	return off == V8PROC_NONE || off + size > PROFCAP_V8_SFI_READ ? 0 : off + size;
}

int sampler__v8_proc(const struct v8proc *vp, struct v8_proc *out)
{
	const struct v8proc_layout *l = &vp->layout;
	unsigned ends[4], end = 0, i;

	memset(out, 0, sizeof(*out));
	if (!slot_ok(l->fp_marker) || !slot_ok(l->fp_function) ||
	    !slot_ok(l->fp_bytecode_array) || !slot_ok(l->fp_bytecode_offset) ||
	    l->obj_map == V8PROC_NONE || l->map_instance_type == V8PROC_NONE ||
	    l->jsfunc_shared == V8PROC_NONE || l->bytecode_data == V8PROC_NONE ||
	    l->smi_shift > 63 || l->tagged_size != 8)
		return -EINVAL;
	ends[0] = head_end(l->sfi_script, 8);
	ends[1] = head_end(l->sfi_length, 2);
	ends[2] = head_end(l->sfi_param_count, 2);
	ends[3] = head_end(l->sfi_token_offset, 2);
	for (i = 0; i < 4; i++) {
		if (!ends[i])
			return -EINVAL;
		end = ends[i] > end ? ends[i] : end;
	}
	*out = (struct v8_proc){
		.fp_marker = l->fp_marker,
		.fp_function = l->fp_function,
		.fp_bytecode_array = l->fp_bytecode_array,
		.fp_bytecode_offset = l->fp_bytecode_offset,
		.obj_map = l->obj_map,
		.map_instance_type = l->map_instance_type,
		.jsfunc_shared = l->jsfunc_shared,
		.sfi_script = l->sfi_script,
		.sfi_length = l->sfi_length,
		.sfi_param_count = l->sfi_param_count,
		.sfi_token_offset = l->sfi_token_offset,
		.bytecode_data = l->bytecode_data,
		.type_sfi = l->type_sfi,
		.type_bytecode = l->type_bytecode,
		.heap_tag_mask = l->heap_tag_mask,
		.heap_tag = l->heap_tag,
		.smi_shift = l->smi_shift,
		.sfi_read = (__u8)((end + 7) & ~7u),
	};
	for (i = 0; i < vp->ntext && i < PROFCAP_V8_TEXT; i++) {
		out->text[i][0] = vp->text[i].lo;
		out->text[i][1] = vp->text[i].hi;
	}
	return 0;
}

int sampler__set_v8(struct sampler *s, int pid, const struct v8proc *vp)
{
	const char *env = env__get(env__process(), V8_ENV);
	struct v8_proc val;
	__u32 key = (__u32)pid;
	int err;

	if (!s->skel || !s->skel->rodata->want_unwind || (env && !strcmp(env, "0")))
		return -EOPNOTSUPP;
	if (!vp) {
		if (s->skel->bss->v8_nprocs)
			bpf_map__delete_elem(s->skel->maps.v8_procs, &key, sizeof(key), 0);
		return 0;
	}
	err = sampler__v8_proc(vp, &val);
	if (err) {
		pr_debug("process %d: V8 %s not walked: its layout does not fit the walker", pid,
			 vp->version);
		return err;
	}
	err = bpf_map__update_elem(s->skel->maps.v8_procs, &key, sizeof(key), &val, sizeof(val),
				   BPF_ANY);
	if (err) {
		if (!__atomic_exchange_n(&v8_warned, true, __ATOMIC_RELAXED))
			pr_warn("JavaScript frames of process %d not read: %s (at most %u Node.js "
				"processes at once)",
				pid, strerror(-err), PROFCAP_V8_PROCS);
		return err;
	}
	/* The programs skip the map while nothing was ever added: a count
	 * that only grows (the map holds the truth). */
	__atomic_add_fetch(&s->skel->bss->v8_nprocs, 1, __ATOMIC_RELEASE);
	return 0;
}
