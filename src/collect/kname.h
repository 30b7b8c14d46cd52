/* kname.h - kernel text addresses named by the kernel (bpf/kname_prog.bpf.c).
 *
 * Naming the kernel frames of a profile from /proc/kallsyms makes the
 * kernel format all of its 100k+ symbols as text for a few hundred
 * lookups, at every pass. This module loads a small BPF syscall program
 * that asks the kernel's own kallsyms lookup instead ("%pS":
 * "name+0xoff/0xsize [module]"), in batches of KNAME_BATCH addresses. It needs Linux >= 5.16 and the right
 * to load BPF programs; kname__new() fails otherwise, and callers read
 * /proc/kallsyms instead.
 */
#ifndef PROFCAP_COLLECT_KNAME_H
#define PROFCAP_COLLECT_KNAME_H

#include <stddef.h>
#include <linux/types.h>

/* At most this many addresses per kname__name() call. */
#define KNAME_MAX_ADDRS 65536u

struct kname;

/* Load the program. *@out gets a namer the caller frees with
 * kname__free(). Returns 0 or -errno: -EPERM/-EINVAL/-ENOENT when the
 * kernel refuses the program (too old, no rights), -ENOMEM. Logs nothing:
 * the caller has the fallback. */
int kname__new(struct kname **out);

/* Free @k. Accepts NULL. */
void kname__free(struct kname *k);

/* Name the @n addresses @addrs (@n <= KNAME_MAX_ADDRS): @names[i] gets the
 * kernel's "%pS" text for addrs[i] ("" when it printed nothing), borrowed
 * from @k until the next call or kname__free(); *@stext and *@etext the
 * core kernel text range (0 when not found). Returns 0, -E2BIG (too many
 * addresses), -ENOMEM, or -errno from running the program. */
int kname__name(struct kname *k, const __u64 *addrs, size_t n, const char **names, __u64 *stext,
		__u64 *etext);

#endif
