/* stackwalk.h - the table unwinder's walk, in user space, over a copy of a
 * thread's stack.
 *
 * The BPF walker (bpf/cpu_sampler/unwind.bpf.c) stops at a PC in no mapping it knows: a
 * process user space has not described yet whose walk needs a second file,
 * or a binary whose table is still being built. Such a sample arrives as the
 * registers where the walk stopped and a bounded copy of the stack above
 * them (bpf/cpu_sampler.h struct late_sample); once the process's tables
 * exist, this walk finishes it with the same rows and the same rules (CFA
 * from rsp/rbp/PLT/dereferenced rbp, signal frames, frame pointers where a
 * PC has no row and the chain is plausible). Memory reads outside the copy
 * end the walk, partial. Pure code: mappings and rows come from callbacks
 * (the BPF maps in production, plain memory in tests).
 */
#ifndef PROFCAP_STACKWALK_H
#define PROFCAP_STACKWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "unwind.h"

/* Where one PC's code is: the mapping and its file's rows (NULL/0 when the
 * file has no table: frame pointers). */
struct stackwalk_map {
	struct unwind_map m;
	const __u64 *rows; /* m.nrows rows sorted by ELF address, borrowed */
};

struct stackwalk_ops {
	/* Fill *@out with the mapping of @addr: 0, or -ENOENT when no mapping
	 * holds it. What *@out points to stays valid during the walk. */
	int (*find_map)(void *ctx, __u64 addr, struct stackwalk_map *out);
	void *ctx;
};

/* The registers of the frame to walk from. */
struct stackwalk_regs {
	__u64 pc, sp, bp;
	bool bp_ok; /* bp holds the frame's real rbp */
	bool exact; /* pc is an exact PC (leaf, signal frame), not a return address */
};

/* The copied stack: @len bytes that were at address @base. */
struct stackwalk_mem {
	__u64 base;
	const void *data;
	size_t len;
};

enum stackwalk_end {
	STACKWALK_COMPLETE = 0, /* reached the outermost frame */
	STACKWALK_NO_MAPPING,	/* a PC in no mapping, no plausible frame pointer */
	STACKWALK_NO_ROW,	/* no row (or an unsupported rule), no frame pointer */
	STACKWALK_READ,		/* stack memory outside the copy */
	STACKWALK_DEPTH,	/* @cap frames */
};

/* Walk from @regs, appending PCs (each frame's, the first being @regs->pc)
 * to @ips from index *@n up to @cap; *@n is updated. Returns how the walk
 * ended. Never fails otherwise; reads only @mem. */
enum stackwalk_end stackwalk__run(const struct stackwalk_ops *ops,
				  const struct stackwalk_regs *regs,
				  const struct stackwalk_mem *mem, __u64 *ips, __u32 *n, __u32 cap);

/* The row of ELF address @vaddr in @rows[@nrows] (sorted), 0 when none. */
__u64 stackwalk__find_row(const __u64 *rows, __u32 nrows, __u64 vaddr);

#endif
