// SPDX-License-Identifier: GPL-2.0
/* unwind.bpf.c - the BPF half of table unwinding: walk the user stack of
 * the sampled thread with the rows user space compiled from .eh_frame (see
 * unwind.h). Hybrid: a PC with no row (code without CFI such as V8's
 * builtins, a mapping without a table, JIT code) is crossed with frame
 * pointers when the chain is plausible, and the next PC that has a row goes
 * back to the tables.
 *
 * One call of the global function unwind_step() per frame (bounded loop or
 * bpf_loop(), see unwind_user() in unwind.bpf.h), so the verifier checks
 * the step once, not PROFCAP_MAX_USTACK times. Each step finds the mapping
 * of the PC (cached from the previous frame, else a binary search of the
 * process's sorted mappings), binary-searches the mapping's rows, computes
 * the CFA and reads the return address and the saved rbp with
 * bpf_probe_read_user(). A walk that ends anywhere but an outermost frame
 * (undefined return address, return address 0), i.e. where neither a row
 * nor a plausible frame pointer goes on, is flagged
 * PROFCAP_F_USTACK_PARTIAL. Samples taken in kernel mode get the user
 * registers from bpf_task_pt_regs() (kernel BTF, Linux >= 5.15), enabled
 * through unwind_task_regs.
 */
#include "jvm.bpf.h"
#include "unwind.bpf.h"
#include "v8.bpf.h"

const volatile __u32 want_unwind = 0;
const volatile __u32 unwind_task_regs = 0;
const volatile __u32 want_late = 0;
/* Kernel BTF and bpf_find_vma() (Linux >= 5.17): mappings user space has not
 * read yet are found from the VMA, with these field offsets (from BTF). */
const volatile __u32 unwind_vma = 0;
const volatile __u32 vma_start_off = 0, vma_end_off = 0, vma_pgoff_off = 0, vma_file_off = 0;
const volatile __u32 file_inode_off = 0, inode_ino_off = 0, inode_sb_off = 0, sb_dev_off = 0;
const volatile __u32 mm_start_code_off = 0; /* mm_struct.start_code: see unwind_exec_map */

struct unwind_procs_map unwind_procs SEC(".maps");
struct unwind_scratch_map unwind_scratch SEC(".maps");

/* From a perf event (NMI or IRQ context) the kernel takes the mm lock for
 * bpf_find_vma() once per interrupt: the unlock is deferred to an irq_work
 * that runs after the program, and a second call in the same sample fails
 * (-EBUSY). So a walk looks up at most one VMA, and what it finds is kept
 * per process (per CPU, no locking) for the samples after it: a new
 * process's stack that crosses from its executable into libraries becomes
 * complete after a few samples, before user space has read its mappings.
 * The key is (tgid, mm): a program exec()ed in the process has another
 * mm, a reused PID another process. */
#define UNWIND_VCACHE 8

struct unwind_vcache_key {
	__u64 mm;
	__u32 tgid;
	__u32 pad;
};

struct unwind_vcache {
	__u32 n;
	__u32 pad;
	struct unwind_map m[UNWIND_VCACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__type(key, struct unwind_vcache_key);
	__type(value, struct unwind_vcache);
	__uint(max_entries, 1); /* sized by user space when unwind_vma is on */
} unwind_vcache SEC(".maps");

/* The text mapping of a program exec()ed while profcap runs, found at the
 * exec (in the task's own context, where a VMA lookup is not the sample's
 * one), under the VMA cache's key: a new process's first sample then looks
 * up a library's VMA only, and a stack through the program and one library
 * (a compiler's) is walked whole, not late. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct unwind_vcache_key);
	__type(value, struct unwind_map);
	__uint(max_entries, 1); /* sized by user space with the VMA cache */
} unwind_exec_map SEC(".maps");

static struct unwind_vcache unwind_vcache_zero; /* an empty entry to insert */

#define UNWIND_MAP_STEPS 17 /* 2^16 mappings per process */
#define UNWIND_ROW_STEPS 24 /* 2^23 rows per file (CFI_MAX_ROWS is 2^22) */
/* Frame pointers followed only this far above the sampled sp. */
#define UNWIND_FP_MAX_STACK (512ull << 20)

/* The rows of one file: an array sized to them, created by user space when
 * the file is added (BPF_F_INNER_MAP: each its own size, Linux >= 5.10). */
struct unwind_rows_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
};

/* File tables by slot (unwind_map.first); an empty slot has no map. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__type(key, __u32);
	__uint(max_entries, 1); /* sized by user space */
	__array(values, struct unwind_rows_map);
} unwind_files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct unwind_file_key);
	__type(value, struct unwind_file);
	__uint(max_entries, 1); /* sized by user space */
} unwind_file_idx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct unwind_map_key);
	__type(value, struct unwind_map);
	__uint(max_entries, 1); /* sized by user space */
} unwind_maps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, USTAT__COUNT);
} unwind_stats SEC(".maps");

__attribute__((noinline)) int ustat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&unwind_stats, &which);

	if (v)
		(*v)++;
	return 0;
}

static __always_inline int unwind_partial(struct unwind_state *st, __u32 why)
{
	st->done = 2;
	st->why = why;
	return 1;
}

/* Find the mapping of @addr in st->m. 0 or -1. */
static __always_inline int unwind_find_map(struct unwind_state *st, __u64 addr)
{
	struct unwind_map_key k = {.tgid = st->tgid};
	struct unwind_map *e;
	__u32 lo = 0, hi = st->nmaps, i;

	if (st->have_map && addr >= st->m.start && addr < st->m.end)
		return 0;
	for (i = 0; i < UNWIND_MAP_STEPS; i++) {
		__u32 mid;

		if (lo >= hi)
			break;
		mid = lo + (hi - lo) / 2;
		k.index = mid;
		e = bpf_map_lookup_elem(&unwind_maps, &k);
		if (!e)
			return -1;
		if (e->start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	k.index = lo - 1;
	e = bpf_map_lookup_elem(&unwind_maps, &k);
	if (!e || addr >= e->end)
		return -1;
	st->m = *e;
	st->have_map = 1;
	return 0;
}

struct unwind_vma {
	__u64 start, end, pgoff;
	struct unwind_file_key key;
	__u32 found;
};

static long unwind_vma_cb(void *task, void *vma, void *data)
{
	struct unwind_vma *v = data;
	__u64 p = 0; /* the file, then its inode */

	/* One word of stack: the off-CPU task work calls the walk that calls
	 * this with little of its 512 bytes left. v->key.ino holds the
	 * superblock until the inode number replaces it; s_dev is 4 bytes. */
	v->key.dev = 0;
	if (bpf_probe_read_kernel(&v->start, 8, (char *)vma + vma_start_off) ||
	    bpf_probe_read_kernel(&v->end, 8, (char *)vma + vma_end_off) ||
	    bpf_probe_read_kernel(&v->pgoff, 8, (char *)vma + vma_pgoff_off) ||
	    bpf_probe_read_kernel(&p, 8, (char *)vma + vma_file_off) || !p ||
	    bpf_probe_read_kernel(&p, 8, (char *)p + file_inode_off) || !p ||
	    bpf_probe_read_kernel(&v->key.ino, 8, (char *)p + inode_sb_off) || !v->key.ino ||
	    bpf_probe_read_kernel(&v->key.dev, 4, (char *)v->key.ino + sb_dev_off) ||
	    bpf_probe_read_kernel(&v->key.ino, 8, (char *)p + inode_ino_off))
		return 0;
	v->found = 1;
	return 0;
}

/* The mapping of VMA @v in the table of its file, into *@m: 0, or -1 when
 * the file has no table (yet) or the VMA lies in none of its segments. */
static __always_inline int unwind_vma_map(const struct unwind_vma *v, struct unwind_map *m)
{
	struct unwind_file *f = bpf_map_lookup_elem(&unwind_file_idx, &v->key);
	__u64 off = v->pgoff << 12;
	__u32 i;

	if (!f)
		return -1;
	for (i = 0; i < UNWIND_FILE_SEGS; i++) {
		if (i >= f->nseg)
			break;
		if (off >= f->seg[i][0] && off - f->seg[i][0] < f->seg[i][2]) {
			m->start = v->start;
			m->end = v->end;
			m->bias = v->start - (f->seg[i][1] + (off - f->seg[i][0]));
			m->first = f->slot;
			m->nrows = f->nrows;
			return 0;
		}
	}
	return -1;
}

/* The mapping of @addr from the kernel's VMA and the file's table, for code
 * user space has not described yet (a new process, a library just loaded):
 * from the VMA cache, else one bpf_find_vma() per sample. 0 or -1. */
static __always_inline int unwind_find_vma(struct unwind_state *st, __u64 addr)
{
	struct unwind_vcache_key k = {.tgid = st->tgid};
	struct unwind_vma v = {};
	struct unwind_vcache *vc = NULL;
	struct unwind_map *em;
	__u32 i, n;
	long err;

	if (!unwind_vma)
		return -1;
	if (task_mm_off &&
	    !bpf_probe_read_kernel(&k.mm, 8, (char *)bpf_get_current_task() + task_mm_off) &&
	    k.mm) {
		vc = bpf_map_lookup_elem(&unwind_vcache, &k);
		for (i = 0; vc && i < UNWIND_VCACHE; i++) {
			if (i >= vc->n)
				break;
			if (addr >= vc->m[i].start && addr < vc->m[i].end) {
				st->m = vc->m[i];
				st->have_map = 1;
				return 0;
			}
		}
		em = mm_start_code_off ? bpf_map_lookup_elem(&unwind_exec_map, &k) : NULL;
		if (em && addr >= em->start && addr < em->end) {
			st->m = *em;
			st->have_map = 1;
			return 0;
		}
	}
	if (st->vma_tried) {
		st->late_ok = 1;
		return -1;
	}
	st->vma_tried = 1;
	err = bpf_find_vma(bpf_get_current_task_btf(), addr, unwind_vma_cb, &v, 0);
	if (err == -2 /* ENOENT: no VMA holds it */ && st->nr == 1)
		st->stale_regs = 1;
	if (err || !v.found)
		return -1;
	if (unwind_vma_map(&v, &st->m)) {
		st->late_ok = 1; /* a file, without a table yet */
		st->no_table = 1;
		return -1;
	}
	st->have_map = 1;
	ustat_inc(USTAT_VMA);
	if (!k.mm)
		return 0;
	if (!vc) {
		bpf_map_update_elem(&unwind_vcache, &k, &unwind_vcache_zero, BPF_NOEXIST);
		vc = bpf_map_lookup_elem(&unwind_vcache, &k);
	}
	if (vc) {
		n = vc->n;
		if (n < UNWIND_VCACHE) {
			vc->m[n & (UNWIND_VCACHE - 1)] = st->m;
			vc->n = n + 1;
		}
	}
	return 0;
}

__attribute__((noinline)) int unwind_exec_seed(__u32 tgid)
{
	struct unwind_vcache_key k = {.tgid = tgid};
	struct unwind_vma v = {};
	struct unwind_map m = {};
	__u64 code = 0;

	if (!want_unwind || !unwind_vma || !task_mm_off || !mm_start_code_off)
		return 0;
	if (bpf_probe_read_kernel(&k.mm, 8, (char *)bpf_get_current_task() + task_mm_off) ||
	    !k.mm || bpf_probe_read_kernel(&code, 8, (char *)k.mm + mm_start_code_off) || !code)
		return 0;
	if (bpf_find_vma(bpf_get_current_task_btf(), code, unwind_vma_cb, &v, 0) || !v.found ||
	    unwind_vma_map(&v, &m))
		return 0;
	bpf_map_update_elem(&unwind_exec_map, &k, &m, BPF_ANY);
	ustat_inc(USTAT_VMA_EXEC);
	return 0;
}

/* The row of ELF address @vaddr in the current mapping's table, 0 if none. */
static __always_inline __u64 unwind_find_row(struct unwind_state *st, __u64 vaddr)
{
	__u32 lo = 0, hi = st->m.nrows, i;
	void *rows;
	__u64 *r;

	if (vaddr > 0xffffffffull)
		return 0;
	rows = bpf_map_lookup_elem(&unwind_files, &st->m.first);
	if (!rows)
		return 0; /* reclaimed meanwhile */
	for (i = 0; i < UNWIND_ROW_STEPS; i++) {
		__u32 mid;

		if (lo >= hi)
			break;
		mid = lo + (hi - lo) / 2;
		r = bpf_map_lookup_elem(rows, &mid);
		if (!r)
			return 0;
		if (UNWIND_ROW_PC(*r) <= (__u32)vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	lo--;
	r = bpf_map_lookup_elem(rows, &lo);
	return r ? *r : 0;
}

/* Hybrid walking: one frame with frame pointers, for a PC that has no row
 * (code without CFI, a mapping without a table, JIT code mapped after the
 * tables were read). Taken only when the chain is plausible: rbp is known,
 * 8-byte aligned, inside the stack (at or above sp, within
 * UNWIND_FP_MAX_STACK of the sampled sp) and the saved rbp grows (or is 0,
 * the outermost frame's). The next PC that has a row goes back to the
 * tables. Otherwise the walk stops, partial for @why. 0 to go on, 1 when
 * over. */
static __always_inline int unwind_fp_step(struct unwind_state *st, __u32 why)
{
	__u64 bp = st->bp, ra = 0, next = 0;

	if (!st->bp_ok || !bp || (bp & 7) || bp < st->sp || bp - st->stack_lo > UNWIND_FP_MAX_STACK)
		return unwind_partial(st, why);
	v8_note(st); /* a JavaScript frame? (checked after the walk) */
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(bp + 8)) ||
	    bpf_probe_read_user(&next, sizeof(next), (void *)bp))
		return unwind_partial(st, USTAT_READ_ERR);
	st->sp = bp + 16;
	st->bp = next;
	/* A saved rbp below this frame is not a frame pointer: the next frame
	 * needs a row (bp_ok = 0), the return address is still good. */
	st->bp_ok = next > bp;
	st->exact = 0;
	st->pc = ra;
	ustat_inc(USTAT_FP_FRAMES);
	if (!ra) {
		st->done = 1; /* outermost frame (return address 0) */
		return 1;
	}
	return 0;
}

/* A global function: the verifier checks it once, whatever the number of
 * calls. */
__attribute__((noinline)) int unwind_step(__u32 slot)
{
	struct unwind_state *st = bpf_map_lookup_elem(&unwind_scratch, &slot);
	__u32 n;
	__u64 pc, addr, row, cfa, ra = 0, bp = 0;
	long off;

	if (!st)
		return 1;
	n = (__u32)st->nr;
	if (n >= PROFCAP_MAX_USTACK)
		return unwind_partial(st, USTAT_DEPTH);
	pc = st->pc;
	st->ips[n & (PROFCAP_MAX_USTACK - 1)] = pc;
	st->nr = n + 1;
	st->hash = (st->hash ^ pc) * 0xc4ceb9fe1a85ec53ull;
	st->hash ^= st->hash >> 29;
	/* A Java frame of a walked JVM's code cache (jvm.bpf.h)? */
	off = jvm_hook(st, slot);
	if (off >= 0)
		return (int)off;

	addr = st->exact ? pc : pc - 1;
	if (unwind_find_map(st, addr) && unwind_find_vma(st, addr)) {
		/* A file this sample could not map (a second VMA, a table not
		 * built yet) is walked late, with its table: frame pointers
		 * through code built without them would invent frames. */
		if (st->late_ok && want_late)
			return unwind_partial(st, USTAT_NO_MAPPING);
		return unwind_fp_step(st, USTAT_NO_MAPPING); /* JIT code? */
	}

	if (!st->m.nrows) /* no table: frame pointers */
		return unwind_fp_step(st, USTAT_NO_ROW);

	row = unwind_find_row(st, addr - st->m.bias);
	switch (UNWIND_ROW_CFA(row)) {
	case UNWIND_CFA_RSP:
		cfa = st->sp + UNWIND_ROW_CFA_OFF(row);
		break;
	case UNWIND_CFA_RBP:
		if (!st->bp_ok)
			return unwind_partial(st, USTAT_NO_ROW);
		cfa = st->bp + UNWIND_ROW_CFA_OFF(row);
		break;
	case UNWIND_CFA_PLT:
		cfa = st->sp + 8 + ((pc & 15) >= (__u64)UNWIND_ROW_CFA_OFF(row) ? 8 : 0);
		break;
	case UNWIND_CFA_DEREF_RBP:
		if (!st->bp_ok)
			return unwind_partial(st, USTAT_NO_ROW);
		if (bpf_probe_read_user(&cfa, sizeof(cfa),
					(void *)(st->bp + UNWIND_ROW_CFA_OFF(row))))
			return unwind_partial(st, USTAT_READ_ERR);
		break;
	case UNWIND_CFA_SIGNAL:
		/* __restore_rt: the interrupted registers are in the ucontext. */
		if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(st->sp + UNWIND_SIGNAL_RIP)) ||
		    bpf_probe_read_user(&bp, sizeof(bp), (void *)(st->sp + UNWIND_SIGNAL_RBP)) ||
		    bpf_probe_read_user(&cfa, sizeof(cfa), (void *)(st->sp + UNWIND_SIGNAL_RSP)))
			return unwind_partial(st, USTAT_READ_ERR);
		st->sp = cfa;
		st->bp = bp;
		st->bp_ok = 1;
		st->pc = ra;
		st->exact = 1;
		ustat_inc(USTAT_FRAMES);
		return ra ? 0 : unwind_partial(st, USTAT_NO_ROW);
	case UNWIND_CFA_END:
		st->done = 1;
		return 1;
	default: /* NONE (code without CFI, e.g. V8 builtins), UNSUPPORTED */
		return unwind_fp_step(st, USTAT_NO_ROW);
	}
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8)))
		return unwind_partial(st, USTAT_READ_ERR);
	if (UNWIND_ROW_RBP(row) == UNWIND_RBP_AT_CFA) {
		off = UNWIND_ROW_RBP_OFF(row);
		if (bpf_probe_read_user(&bp, sizeof(bp), (void *)(cfa + off)))
			return unwind_partial(st, USTAT_READ_ERR);
		st->bp = bp;
		st->bp_ok = 1;
	} else if (UNWIND_ROW_RBP(row) == UNWIND_RBP_UNKNOWN) {
		st->bp_ok = 0;
	}
	st->sp = cfa;
	ustat_inc(USTAT_FRAMES);
	st->exact = 0;
	st->pc = ra;
	if (!ra) {
		st->done = 1; /* outermost frame (return address 0) */
		return 1;
	}
	return 0;
}
