/* sampler_perl.c - which processes' Perl frames the BPF walker reads
 * (bpf/cpu_sampler/perl.bpf.c), and the offsets it reads them with. */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "collect/sampler_int.h"
#include "collect/sampler_perl.h"
#include "perl.h"
#include "proc/perlproc.h"
#include "util/env.h"
#include "util/log.h"

#define PERL_ENV "PROFCAP_PERL" /* 0: no Perl walk (benchmarks) */

/* A full table is warned about once per run. */
static bool perl_warned;

/* A word at @off within a read of @span bytes. */
static bool word_in(__u16 off, unsigned span)
{
	return off + 8u <= span;
}

int sampler__perl_proc(const struct perlproc *pp, struct perl_proc *out)
{
	const struct perlproc_layout *l = &pp->layout;

	memset(out, 0, sizeof(*out));
	if (!pp->curinterp || !l->cx_size || !word_in(l->cx_oldcop, PROFCAP_PERL_CX_READ) ||
	    !word_in(l->cx_retop, PROFCAP_PERL_CX_READ) || !word_in(l->cx_cv, PROFCAP_PERL_CX_READ) ||
	    !word_in(l->si_cxstack, PROFCAP_PERL_SI_READ) ||
	    !word_in(l->si_stack, PROFCAP_PERL_SI_READ) ||
	    !word_in(l->si_cxix, PROFCAP_PERL_SI_READ) ||
	    !word_in(l->si_type, PROFCAP_PERL_SI_READ) || !l->type_mask)
		return -EINVAL;
	*out = (struct perl_proc){
		.curinterp = pp->curinterp,
		.tls_interp = pp->tls_interp,
		.interp_curstackinfo = l->interp_curstackinfo,
		.interp_curcop = l->interp_curcop,
		.interp_curstack = l->interp_curstack,
		.si_stack = l->si_stack,
		.si_cxstack = l->si_cxstack,
		.si_cxix = l->si_cxix,
		.si_prev = l->si_prev,
		.si_type = l->si_type,
		.cx_size = l->cx_size,
		.cx_oldcop = l->cx_oldcop,
		.cx_retop = l->cx_retop,
		.cx_cv = l->cx_cv,
		.cop_line = l->cop_line,
		.cv_gv = l->cv_gv,
		.type_mask = l->type_mask,
		.type_sub = l->type_sub,
		.type_eval = l->type_eval,
		.si_main = l->si_main,
	};
	return 0;
}

void perl__configure(struct sampler *s, const struct sampler_opts *o)
{
	const char *env = env__get(env__process(), PERL_ENV);

	s->skel->rodata->want_perl = o->user && !(env && !strcmp(env, "0"));
}

int sampler__set_perl(struct sampler *s, int pid, const struct perlproc *pp)
{
	struct perl_proc val;
	__u32 key = (__u32)pid;
	int err;

	if (!s || !s->skel || !s->skel->rodata->want_perl)
		return -EOPNOTSUPP;
	if (!pp) {
		if (s->skel->bss->perl_nprocs)
			bpf_map__delete_elem(s->skel->maps.perl_procs, &key, sizeof(key), 0);
		return 0;
	}
	err = sampler__perl_proc(pp, &val);
	if (err) {
		pr_debug("process %d: Perl %s not walked: its layout does not fit the walker", pid,
			 pp->version);
		return err;
	}
	err = bpf_map__update_elem(s->skel->maps.perl_procs, &key, sizeof(key), &val, sizeof(val),
				   BPF_ANY);
	if (err) {
		if (!__atomic_exchange_n(&perl_warned, true, __ATOMIC_RELAXED))
			pr_warn("Perl frames of process %d not read: %s (at most %u Perl processes "
				"at once)",
				pid, strerror(-err), PROFCAP_PERL_PROCS);
		return err;
	}
	/* The programs skip the map while nothing was ever added: a count
	 * that only grows (the map holds the truth). */
	__atomic_add_fetch(&s->skel->bss->perl_nprocs, 1, __ATOMIC_RELEASE);
	return 0;
}
