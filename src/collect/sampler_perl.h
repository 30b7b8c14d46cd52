/* sampler_perl.h - which processes' Perl frames the BPF walker reads
 * (bpf/cpu_sampler/perl.bpf.c), and the offsets it reads them with. Its
 * stacks come back in the runtime stack slot (drain__rtstack(),
 * collect/sampler_v8.h), three words a frame like V8's. */
#ifndef PROFCAP_SAMPLER_PERL_H
#define PROFCAP_SAMPLER_PERL_H

struct perl_proc;
struct perlproc;
struct sampler;

/* Walk the Perl frames of process @pid's samples with what @pp says
 * (proc/perlproc.h; copied), or stop (@pp NULL: it exec()ed or exited).
 * 0; -EOPNOTSUPP when the walker is off (no BPF objects, or the
 * environment's PROFCAP_PERL=0); -EINVAL when @pp's layout does not fit
 * the walker; -errno of the map update (PROFCAP_PERL_PROCS processes at
 * once, warned once). */
int sampler__set_perl(struct sampler *s, int pid, const struct perlproc *pp);

/* @pp as the BPF walker's map entry (bpf/perl.h), checked: the context's
 * fields within PROFCAP_PERL_CX_READ bytes, the stackinfo's within
 * PROFCAP_PERL_SI_READ. 0 or -EINVAL. Pure. */
int sampler__perl_proc(const struct perlproc *pp, struct perl_proc *out);

#endif
