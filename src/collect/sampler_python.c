/* sampler_python.c - which processes' CPython frames the BPF walker reads
 * (bpf/cpu_sampler/python.bpf.c), and the offsets it reads them with. */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "collect/sampler.h"
#include "collect/sampler_int.h"
#include "proc/pyproc.h"
#include "util/env.h"
#include "util/log.h"

#define PYTHON_ENV "PROFCAP_PYTHON" /* 0: no Python walk (benchmarks) */

_Static_assert(PYPROC_INSTR_PTR == PROFCAP_PY_INSTR_PTR &&
		       PYPROC_CODE_TAGGED == PROFCAP_PY_CODE_TAGGED &&
		       PYPROC_OWNER == PROFCAP_PY_OWNER && PYPROC_IS_ENTRY == PROFCAP_PY_IS_ENTRY &&
		       PYPROC_ONE_PER_CALL == PROFCAP_PY_ONE_PER_CALL &&
		       PYPROC_CFRAME == PROFCAP_PY_CFRAME,
	       "layout flags are the walker's");

/* The end of field @off (@size bytes) of a frame, 0 when it is not there. */
static unsigned field_end(__u16 off, unsigned size)
{
	return off == PYPROC_NONE ? 0 : (unsigned)off + size;
}

int sampler__py_proc(const struct pyproc *pp, struct py_proc *out)
{
	const struct pyproc_layout *l = &pp->layout;
	unsigned end = 0, e, i;
	unsigned ends[5];

	memset(out, 0, sizeof(*out));
	if (!pp->interp_head || l->interp_tstate_head == PYPROC_NONE ||
	    l->tstate_next == PYPROC_NONE || l->tstate_thread_id == PYPROC_NONE ||
	    l->tstate_frame == PYPROC_NONE || l->code_firstlineno == PYPROC_NONE ||
	    l->frame_back == PYPROC_NONE || l->frame_code == PYPROC_NONE ||
	    l->frame_instr == PYPROC_NONE)
		return -EINVAL;
	if ((l->flags & PROFCAP_PY_CFRAME) && l->cframe_current_frame == PYPROC_NONE)
		return -EINVAL;
	if ((l->flags & PROFCAP_PY_OWNER) && l->frame_owner == PYPROC_NONE)
		return -EINVAL;
	if ((l->flags & PROFCAP_PY_IS_ENTRY) && l->frame_entry == PYPROC_NONE)
		return -EINVAL;
	/* Everything the walker reads of a frame comes from one read of its
	 * first frame_read bytes. */
	ends[0] = field_end(l->frame_back, 8);
	ends[1] = field_end(l->frame_code, 8);
	ends[2] = field_end(l->frame_instr, l->flags & PROFCAP_PY_INSTR_PTR ? 8 : 4);
	ends[3] = l->flags & PROFCAP_PY_OWNER ? field_end(l->frame_owner, 1) : 0;
	ends[4] = l->flags & PROFCAP_PY_IS_ENTRY ? field_end(l->frame_entry, 1) : 0;
	for (i = 0; i < 5; i++) {
		e = ends[i];
		end = e > end ? e : end;
	}
	if (end > PROFCAP_PY_FRAME_READ)
		return -ERANGE;
	*out = (struct py_proc){
		.interp_head = pp->interp_head,
		.version = l->version,
		.flags = l->flags,
		.interp_tstate_head = l->interp_tstate_head,
		.tstate_next = l->tstate_next,
		.tstate_thread_id = l->tstate_thread_id,
		.tstate_native_tid = l->tstate_native_tid,
		.tstate_frame = l->tstate_frame,
		.cframe_current_frame = l->cframe_current_frame,
		.frame_back = l->frame_back,
		.frame_code = l->frame_code,
		.frame_instr = l->frame_instr,
		.frame_owner = l->frame_owner,
		.frame_entry = l->frame_entry,
		.code_firstlineno = l->code_firstlineno,
		.owner_cstack = l->owner_cstack,
		.frame_read = (__u8)end,
	};
	return 0;
}

void python__configure(struct sampler *s, const struct sampler_opts *o)
{
	const char *env = env__get(env__process(), PYTHON_ENV);

	if (!o->user || (env && !strcmp(env, "0")))
		return;
	s->skel->rodata->want_python = 1;
	bpf_map__set_max_entries(s->skel->maps.py_procs, PROFCAP_PY_PROCS);
	bpf_map__set_max_entries(s->skel->maps.py_tstates, PROFCAP_PY_TSTATES);
	if (s->no_prealloc)
		bpf_map__set_map_flags(s->skel->maps.py_procs,
				       bpf_map__map_flags(s->skel->maps.py_procs) |
					       BPF_F_NO_PREALLOC);
}

int sampler__set_python(struct sampler *s, int pid, const struct pyproc *pp)
{
	struct py_proc val;
	__u32 key = (__u32)pid;
	int err;

	if (!s->skel || !s->skel->rodata->want_python)
		return -EOPNOTSUPP;
	if (!pp) {
		if (s->py_procs)
			bpf_map__delete_elem(s->skel->maps.py_procs, &key, sizeof(key), 0);
		return 0;
	}
	err = sampler__py_proc(pp, &val);
	if (err) {
		pr_debug(
			"process %d: Python %s not walked: its layout does not fit the walker (%s)",
			pid, pp->version, strerror(-err));
		return err;
	}
	err = bpf_map__update_elem(s->skel->maps.py_procs, &key, sizeof(key), &val, sizeof(val),
				   BPF_ANY);
	if (err) {
		if (!s->py_warned)
			pr_warn("Python frames of process %d not read: %s (at most %u Python "
				"processes at once)",
				pid, strerror(-err), PROFCAP_PY_PROCS);
		s->py_warned = true;
		return err;
	}
	s->py_procs++;
	__atomic_store_n(&s->skel->bss->py_nprocs, s->py_procs, __ATOMIC_RELEASE);
	return 0;
}
