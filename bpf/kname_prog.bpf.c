// SPDX-License-Identifier: GPL-2.0
/* kname_prog.bpf.c - kernel text addresses named by the kernel itself.
 *
 * Naming a few hundred kernel frames from /proc/kallsyms means the kernel
 * formats all of its 100k+ symbols as text for
 * profcap to parse and throw nearly all away. This program, run on demand
 * by user space (BPF_PROG_TEST_RUN of a syscall program with bpf_loop(),
 * Linux >= 5.17),
 * prints each address of kname_addrs with bpf_snprintf("%pS"): the
 * kernel's own kallsyms lookup (a binary search), as
 * "name+0xoff/0xsize", " [module]" appended for module text, or "0x..."
 * when no symbol covers the address. It also looks up the core text
 * range (_stext, _etext). Input and output are globals (.bss), mapped by
 * user space.
 */
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include "kname_prog.h"

__u32 kname_n;			       /* addresses in kname_addrs */
__u64 kname_addrs[KNAME_BATCH];	       /* in */
char kname_out[KNAME_BATCH][KNAME_LEN]; /* out: "%pS" of each */
__u64 kname_stext, kname_etext;	       /* out: 0 when not found (yet) */

static const char fmt[] = "%pS";
static const char stext[] = "_stext";
static const char etext[] = "_etext";

/* bpf_loop() callback: name address @i. The verifier checks it once, not
 * once per iteration as it would a bounded loop of KNAME_BATCH. */
static long name_one(__u32 i, void *ctx)
{
	__u64 arg;

	if (i >= KNAME_BATCH)
		return 1;
	arg = kname_addrs[i];
	if (bpf_snprintf(kname_out[i], sizeof(kname_out[i]), fmt, &arg, sizeof(arg)) < 0)
		kname_out[i][0] = '\0';
	return 0;
}

SEC("syscall")
int kname_run(void *ctx)
{
	__u32 n = kname_n;

	bpf_loop(n < KNAME_BATCH ? n : KNAME_BATCH, name_one, NULL, 0);
	/* Once per load: the globals keep them between runs. */
	if (!kname_stext && bpf_kallsyms_lookup_name(stext, sizeof(stext), 0, &kname_stext))
		kname_stext = 0;
	if (!kname_etext && bpf_kallsyms_lookup_name(etext, sizeof(etext), 0, &kname_etext))
		kname_etext = 0;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
