#include <errno.h>
#include <string.h>

#include "collect/stackwalk.h"

/* Frame pointers followed only this far above the first sp (as in BPF). */
#define STACKWALK_FP_MAX_STACK (512ull << 20)

struct walk {
	const struct stackwalk_mem *mem;
	__u64 pc, sp, bp, stack_lo;
	bool bp_ok, exact;
};

/* The 8 bytes at @addr of the copy: 0, or -EFAULT outside it. */
static int read_u64(const struct stackwalk_mem *mem, __u64 addr, __u64 *out)
{
	if (addr < mem->base || addr - mem->base > mem->len || mem->len - (addr - mem->base) < 8)
		return -EFAULT;
	memcpy(out, (const char *)mem->data + (addr - mem->base), sizeof(*out));
	return 0;
}

__u64 stackwalk__find_row(const __u64 *rows, __u32 nrows, __u64 vaddr)
{
	__u32 lo = 0, hi = nrows;

	if (!rows || vaddr > 0xffffffffull)
		return 0;
	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (UNWIND_ROW_PC(rows[mid]) <= (__u32)vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? rows[lo - 1] : 0;
}

/* One frame with frame pointers when the chain is plausible (rbp known,
 * aligned, inside the stack, the saved rbp growing). 1 to go on, else the
 * end (@why when implausible). */
static int fp_step(struct walk *w, enum stackwalk_end why, enum stackwalk_end *end)
{
	__u64 bp = w->bp, ra, next;

	if (!w->bp_ok || !bp || (bp & 7) || bp < w->sp ||
	    bp - w->stack_lo > STACKWALK_FP_MAX_STACK) {
		*end = why;
		return 0;
	}
	if (read_u64(w->mem, bp + 8, &ra) || read_u64(w->mem, bp, &next)) {
		*end = STACKWALK_READ;
		return 0;
	}
	w->sp = bp + 16;
	w->bp = next;
	w->bp_ok = next > bp;
	w->exact = false;
	w->pc = ra;
	if (!ra) {
		*end = STACKWALK_COMPLETE;
		return 0;
	}
	return 1;
}

/* One frame with the row of the current PC. 1 to go on, else the end. */
static int row_step(struct walk *w, __u64 row, enum stackwalk_end *end)
{
	__u64 cfa, ra, bp;

	switch (UNWIND_ROW_CFA(row)) {
	case UNWIND_CFA_RSP:
		cfa = w->sp + (__u64)UNWIND_ROW_CFA_OFF(row);
		break;
	case UNWIND_CFA_RBP:
		if (!w->bp_ok) {
			*end = STACKWALK_NO_ROW;
			return 0;
		}
		cfa = w->bp + (__u64)UNWIND_ROW_CFA_OFF(row);
		break;
	case UNWIND_CFA_PLT:
		cfa = w->sp + 8 + ((w->pc & 15) >= (__u64)UNWIND_ROW_CFA_OFF(row) ? 8 : 0);
		break;
	case UNWIND_CFA_DEREF_RBP:
		if (!w->bp_ok) {
			*end = STACKWALK_NO_ROW;
			return 0;
		}
		if (read_u64(w->mem, w->bp + (__u64)UNWIND_ROW_CFA_OFF(row), &cfa)) {
			*end = STACKWALK_READ;
			return 0;
		}
		break;
	case UNWIND_CFA_SIGNAL:
		if (read_u64(w->mem, w->sp + UNWIND_SIGNAL_RIP, &ra) ||
		    read_u64(w->mem, w->sp + UNWIND_SIGNAL_RBP, &bp) ||
		    read_u64(w->mem, w->sp + UNWIND_SIGNAL_RSP, &cfa)) {
			*end = STACKWALK_READ;
			return 0;
		}
		w->sp = cfa;
		w->bp = bp;
		w->bp_ok = true;
		w->pc = ra;
		w->exact = true;
		if (!ra) {
			*end = STACKWALK_NO_ROW;
			return 0;
		}
		return 1;
	case UNWIND_CFA_END:
		*end = STACKWALK_COMPLETE;
		return 0;
	default: /* NONE (code without CFI), UNSUPPORTED */
		return fp_step(w, STACKWALK_NO_ROW, end);
	}
	if (read_u64(w->mem, cfa - 8, &ra)) {
		*end = STACKWALK_READ;
		return 0;
	}
	if (UNWIND_ROW_RBP(row) == UNWIND_RBP_AT_CFA) {
		if (read_u64(w->mem, cfa + (__u64)UNWIND_ROW_RBP_OFF(row), &bp)) {
			*end = STACKWALK_READ;
			return 0;
		}
		w->bp = bp;
		w->bp_ok = true;
	} else if (UNWIND_ROW_RBP(row) == UNWIND_RBP_UNKNOWN) {
		w->bp_ok = false;
	}
	w->sp = cfa;
	w->exact = false;
	w->pc = ra;
	if (!ra) {
		*end = STACKWALK_COMPLETE;
		return 0;
	}
	return 1;
}

enum stackwalk_end stackwalk__run(const struct stackwalk_ops *ops,
				  const struct stackwalk_regs *regs,
				  const struct stackwalk_mem *mem, __u64 *ips, __u32 *n, __u32 cap)
{
	struct walk w = {.mem = mem,
			 .pc = regs->pc,
			 .sp = regs->sp,
			 .bp = regs->bp,
			 .stack_lo = regs->sp,
			 .bp_ok = regs->bp_ok,
			 .exact = regs->exact};
	enum stackwalk_end end = STACKWALK_DEPTH;
	struct stackwalk_map m;
	bool have = false;

	while (*n < cap) {
		__u64 addr = w.exact ? w.pc : w.pc - 1;
		int more;

		ips[(*n)++] = w.pc;
		if (!have || addr < m.m.start || addr >= m.m.end) {
			have = !ops->find_map(ops->ctx, addr, &m);
			if (!have) {
				if (!fp_step(&w, STACKWALK_NO_MAPPING, &end))
					return end;
				continue;
			}
		}
		if (!m.m.nrows || !m.rows)
			more = fp_step(&w, STACKWALK_NO_ROW, &end);
		else
			more = row_step(&w, stackwalk__find_row(m.rows, m.m.nrows, addr - m.m.bias),
					&end);
		if (!more)
			return end;
	}
	return STACKWALK_DEPTH;
}
