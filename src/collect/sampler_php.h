/* sampler_php.h - which processes' PHP frames the BPF walker reads
 * (bpf/cpu_sampler/php.bpf.c), with which offsets. The walker's stacks
 * are drained as the managed runtime's (drain__rtstack()). docs/php.md.
 */
#ifndef PROFCAP_SAMPLER_PHP_H
#define PROFCAP_SAMPLER_PHP_H

struct phpproc;
struct php_proc;
struct sampler;

/* Walk the PHP frames of process @pid's samples with what @pp says
 * (proc/phpproc.h; copied), or stop (@pp NULL: it exec()ed or exited). 0;
 * -EOPNOTSUPP when the walker is off (no table unwinding, or the
 * environment's PROFCAP_PHP=0); -EINVAL when @pp's layout does not fit
 * the walker; -errno of the map update (PROFCAP_PHP_PROCS processes at
 * once, warned once). */
int sampler__set_php(struct sampler *s, int pid, const struct phpproc *pp);

/* @pp as the BPF walker's map entry (bpf/php.h), checked: the frame's
 * fields within PROFCAP_PHP_EX_READ bytes, the function's within
 * PROFCAP_PHP_FUNC_READ. 0 or -EINVAL. Pure. */
int sampler__php_proc(const struct phpproc *pp, struct php_proc *out);

#endif
