/* sampler_ruby.c - which processes' Ruby frames the BPF walker reads
 * (bpf/cpu_sampler/ruby.bpf.c), and the offsets it reads them with. */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "ruby.h"
#include "collect/sampler_int.h"
#include "collect/sampler_ruby.h"
#include "proc/rubyproc.h"
#include "util/env.h"
#include "util/log.h"

#define RUBY_ENV "PROFCAP_RUBY" /* 0: no Ruby walk (benchmarks) */

_Static_assert(PROFCAP_F_RUBY_TRUNC == PROFCAP_F_V8_TRUNC &&
		       PROFCAP_F_RUBY_PARTIAL == PROFCAP_F_V8_PARTIAL &&
		       PROFCAP_F_RUBY_LOST == PROFCAP_F_V8_LOST &&
		       PROFCAP_RUBY_WORDS == PROFCAP_V8_WORDS &&
		       PROFCAP_RUBY_MAX_FRAMES <= PROFCAP_V8_MAX_FRAMES,
	       "Ruby's stack shares the managed runtime slot and its flags");

/* A full table is warned about once per run. */
static bool ruby_warned;

/* A word read at @off of a block of @size bytes. */
static bool word_in(unsigned off, unsigned size)
{
	return !(off & 7) && off + 8 <= size;
}

int sampler__ruby_proc(const struct rubyproc *rp, struct ruby_proc *out)
{
	const struct rubyproc_layout *l = &rp->layout;

	memset(out, 0, sizeof(*out));
	if (!rp->vm_ptr || !word_in(l->cfp_pc, PROFCAP_RUBY_CFP_READ) ||
	    !word_in(l->cfp_iseq, PROFCAP_RUBY_CFP_READ) ||
	    !word_in(l->cfp_ep, PROFCAP_RUBY_CFP_READ) || l->cfp_size < PROFCAP_RUBY_CFP_READ ||
	    l->cfp_size & 7 || !word_in(l->body_encoded, PROFCAP_RUBY_BODY_READ) ||
	    !word_in(l->body_first_lineno, PROFCAP_RUBY_BODY_READ) ||
	    !word_in(l->ec_vm_stack, 24) || !word_in(l->ec_vm_stack_size, 24) ||
	    !word_in(l->ec_cfp, 24) || l->ep_me >= 0 || l->ep_me & 7)
		return -EINVAL;
	*out = (struct ruby_proc){
		.vm_ptr = rp->vm_ptr,
		.vm_main_ractor = l->vm_main_ractor,
		.ractor_threads = l->ractor_threads,
		.thread_node = l->thread_node,
		.thread_ec = l->thread_ec,
		.thread_id = l->thread_id,
		.thread_tid = l->thread_tid,
		.ec_vm_stack = l->ec_vm_stack,
		.ec_vm_stack_size = l->ec_vm_stack_size,
		.ec_cfp = l->ec_cfp,
		.cfp_size = l->cfp_size,
		.cfp_pc = l->cfp_pc,
		.cfp_iseq = l->cfp_iseq,
		.cfp_ep = l->cfp_ep,
		.iseq_body = l->iseq_body,
		.body_encoded = l->body_encoded,
		.body_first_lineno = l->body_first_lineno,
		.ep_me = l->ep_me,
		.me_def = l->me_def,
	};
	return 0;
}

void ruby__configure(struct sampler *s, const struct sampler_opts *o)
{
	const char *env = env__get(env__process(), RUBY_ENV);

	s->skel->rodata->want_ruby = o->user && !(env && !strcmp(env, "0"));
}

int sampler__set_ruby(struct sampler *s, int pid, const struct rubyproc *rp)
{
	struct ruby_proc val;
	__u32 key = (__u32)pid;
	int err;

	if (!s || !s->skel || !s->skel->rodata->want_unwind || !s->skel->rodata->want_ruby)
		return -EOPNOTSUPP;
	if (!rp) {
		if (s->skel->bss->ruby_nprocs)
			bpf_map__delete_elem(s->skel->maps.ruby_procs, &key, sizeof(key), 0);
		return 0;
	}
	err = sampler__ruby_proc(rp, &val);
	if (err) {
		pr_debug("process %d: Ruby %s not walked: its layout does not fit the walker", pid,
			 rp->version);
		return err;
	}
	err = bpf_map__update_elem(s->skel->maps.ruby_procs, &key, sizeof(key), &val, sizeof(val),
				   BPF_ANY);
	if (err) {
		if (!__atomic_exchange_n(&ruby_warned, true, __ATOMIC_RELAXED))
			pr_warn("Ruby frames of process %d not read: %s (at most %u Ruby "
				"processes at once)",
				pid, strerror(-err), PROFCAP_RUBY_PROCS);
		return err;
	}
	/* The programs skip the map while nothing was ever added: a count
	 * that only grows (the map holds the truth). */
	__atomic_add_fetch(&s->skel->bss->ruby_nprocs, 1, __ATOMIC_RELEASE);
	return 0;
}
