/* sampler_ruby.h - which processes' Ruby frames the BPF walker reads
 * (bpf/cpu_sampler/ruby.bpf.c). Their stacks come out of the drain in the
 * managed runtime's slot (drain__rtstack(), sampler_v8.h). */
#ifndef PROFCAP_SAMPLER_RUBY_H
#define PROFCAP_SAMPLER_RUBY_H

struct ruby_proc;
struct rubyproc;
struct sampler;

/* Walk the Ruby frames of process @pid's samples with what @rp says
 * (proc/rubyproc.h; copied), or stop (@rp NULL: it exec()ed or exited). 0;
 * -EOPNOTSUPP when the walker is off (no table unwinding, or the
 * environment's PROFCAP_RUBY=0); -EINVAL when @rp's layout does not fit the
 * walker; -errno of the map update (PROFCAP_RUBY_PROCS processes at once,
 * warned once). */
int sampler__set_ruby(struct sampler *s, int pid, const struct rubyproc *rp);

/* @rp as the BPF walker's map entry (bpf/ruby.h), checked: the control
 * frame's fields within PROFCAP_RUBY_CFP_READ bytes, the body's within
 * PROFCAP_RUBY_BODY_READ, every read a whole word. 0 or -EINVAL. Pure. */
int sampler__ruby_proc(const struct rubyproc *rp, struct ruby_proc *out);

#endif
