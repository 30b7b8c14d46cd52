/* comm_hint.h - why a capture with --comm matched nothing: --comm NAME
 * that is the name of a running program. The BPF filter sees the kernel's
 * task name only, which is the name exec() was given (a link: python3 for
 * /usr/bin/python3.11) or one the program set.
 */
#ifndef PROFCAP_CAPTURE_COMM_HINT_H
#define PROFCAP_CAPTURE_COMM_HINT_H

struct target_opts;

/* Say which name the threads of the first process running a program named
 * in @t's --comm have, once (a scan of /proc, at most 65536 processes). */
void comm_hint__warn(const struct target_opts *t);

#endif
