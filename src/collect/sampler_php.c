/* sampler_php.c - which processes' PHP frames the BPF walker reads
 * (bpf/cpu_sampler/php.bpf.c), and the offsets it reads them with. */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "php.h"
#include "collect/sampler_int.h"
#include "collect/sampler_php.h"
#include "proc/phpproc.h"
#include "util/env.h"
#include "util/log.h"

#define PHP_ENV "PROFCAP_PHP" /* 0: no PHP walk (benchmarks) */

/* A full table is warned about once per run. */
static bool php_warned;

/* The larger of @end and the end of field @off (@size bytes). */
static unsigned field_end(unsigned end, __u16 off, unsigned size)
{
	return off + size > end ? off + size : end;
}

int sampler__php_proc(const struct phpproc *pp, struct php_proc *out)
{
	const struct phpproc_layout *l = &pp->layout;
	unsigned ex = 0, fn = 0;

	memset(out, 0, sizeof(*out));
	if (!pp->current_execute_data || !l->call_top)
		return -EINVAL;
	ex = field_end(ex, l->ex_opline, 8);
	ex = field_end(ex, l->ex_func, 8);
	ex = field_end(ex, l->ex_call_info, 4);
	ex = field_end(ex, l->ex_prev, 8);
	fn = field_end(fn, l->fn_name, 8);
	fn = field_end(fn, l->fn_scope, 8);
	/* an internal function's head is read on its own when the user
	 * function's span is not readable: its name and class in 24 bytes */
	if (fn > 24)
		return -EINVAL;
	fn = field_end(fn, l->op_filename, 8);
	fn = field_end(fn, l->op_line_start, 4);
	if (ex > PROFCAP_PHP_EX_READ || fn > PROFCAP_PHP_FUNC_READ)
		return -EINVAL;
	*out = (struct php_proc){
		.current_execute_data = pp->current_execute_data,
		.exec_lo = pp->exec_lo,
		.exec_hi = pp->exec_hi,
		.version = l->version,
		.ex_opline = l->ex_opline,
		.ex_func = l->ex_func,
		.ex_call_info = l->ex_call_info,
		.ex_prev = l->ex_prev,
		.fn_name = l->fn_name,
		.fn_scope = l->fn_scope,
		.op_filename = l->op_filename,
		.op_line_start = l->op_line_start,
		.call_top = l->call_top,
		.ex_read = (__u8)((ex + 7) & ~7u),
		.func_read = (__u8)((fn + 7) & ~7u),
	};
	return 0;
}

void php__configure(struct sampler *s, const struct sampler_opts *o)
{
	const char *env = env__get(env__process(), PHP_ENV);

	s->skel->rodata->want_php = o->user && !(env && !strcmp(env, "0"));
}

int sampler__set_php(struct sampler *s, int pid, const struct phpproc *pp)
{
	struct php_proc val;
	__u32 key = (__u32)pid;
	int err;

	if (!s->skel || !s->skel->rodata->want_unwind || !s->skel->rodata->want_php)
		return -EOPNOTSUPP;
	if (!pp) {
		if (s->skel->bss->php_nprocs)
			bpf_map__delete_elem(s->skel->maps.php_procs, &key, sizeof(key), 0);
		return 0;
	}
	err = sampler__php_proc(pp, &val);
	if (err) {
		pr_debug("process %d: PHP %s not walked: its layout does not fit the walker", pid,
			 pp->version);
		return err;
	}
	err = bpf_map__update_elem(s->skel->maps.php_procs, &key, sizeof(key), &val, sizeof(val),
				   BPF_ANY);
	if (err) {
		if (!__atomic_exchange_n(&php_warned, true, __ATOMIC_RELAXED))
			pr_warn("PHP frames of process %d not read: %s (at most %u PHP processes "
				"at once)",
				pid, strerror(-err), PROFCAP_PHP_PROCS);
		return err;
	}
	/* The programs skip the map while nothing was ever added: a count
	 * that only grows (the map holds the truth). */
	__atomic_add_fetch(&s->skel->bss->php_nprocs, 1, __ATOMIC_RELEASE);
	return 0;
}
