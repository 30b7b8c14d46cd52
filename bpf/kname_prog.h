/* kname_prog.h - shared by the kernel namer's BPF program (kname_prog.bpf.c) and
 * user space (src/collect/kname.c): the batch it names per run. Only
 * __u32/__u64 here. */
#ifndef PROFCAP_BPF_KNAME_PROG_H
#define PROFCAP_BPF_KNAME_PROG_H

#define KNAME_BATCH 256 /* addresses per run */
#define KNAME_LEN 128	/* bytes per name, NUL included ("%pS" is cut there) */

#endif
