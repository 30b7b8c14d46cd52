/* unwind.h - types shared by the BPF table unwinder (bpf/cpu_sampler/unwind.bpf.c) and
 * user space (src/cfi.c builds rows, src/unwind_table.c loads them).
 *
 * The unwind rows of each file are one BPF array sized to them, in slot
 * `first` of the array of maps `unwind_files`, sorted by address
 * [0, nrows). A row is one __u64:
 *   bits  0..31  ELF virtual address where the row starts (files whose code
 *                lies above 4 GiB get no table and use frame pointers)
 *   bits 32..34  CFA rule (UNWIND_CFA_*)
 *   bits 35..36  rbp rule (UNWIND_RBP_*)
 *   bits 37..44  rbp offset from the CFA / 8, signed
 *   bits 45..63  CFA offset, signed (+-256 KiB)
 * The return address is always at CFA - 8 (x86_64); rows where it is not
 * are UNWIND_CFA_UNSUPPORTED.
 *
 * The executable mappings of a process are in `unwind_maps`, keyed by
 * (tgid, index) and sorted by address; `unwind_procs` holds their count.
 * Only __u32/__u64 here, so both sides agree on layout.
 */
#ifndef PROFCAP_BPF_UNWIND_H
#define PROFCAP_BPF_UNWIND_H

#define PROFCAP_MAX_USTACK 512 /* user frames walked by the table unwinder */
/* Frames past PROFCAP_MAX_STACK are kept in a separate, smaller map. */
#define PROFCAP_USTACK_EXT (PROFCAP_MAX_USTACK - PROFCAP_MAX_STACK)

#define UNWIND_CFA_NONE 0	 /* no row covers the PC: cannot unwind */
#define UNWIND_CFA_RSP 1	 /* CFA = rsp + off */
#define UNWIND_CFA_RBP 2	 /* CFA = rbp + off */
#define UNWIND_CFA_PLT 3	 /* PLT entry: CFA = rsp + 8 + ((pc & 15) >= off ? 8 : 0) */
#define UNWIND_CFA_DEREF_RBP 4	 /* CFA = *(rbp + off) (realigned stack, e.g. main) */
#define UNWIND_CFA_SIGNAL 5	 /* signal trampoline: registers in the ucontext at rsp */
#define UNWIND_CFA_END 6	 /* return address undefined: outermost frame */
#define UNWIND_CFA_UNSUPPORTED 7 /* a rule we cannot represent: stop, marked */

#define UNWIND_RBP_SAME 0    /* rbp unchanged in the caller */
#define UNWIND_RBP_AT_CFA 1  /* caller's rbp = *(CFA + off) */
#define UNWIND_RBP_UNKNOWN 2 /* caller's rbp cannot be recovered */

#define UNWIND_ROW_PC(r) ((__u32)(r))
#define UNWIND_ROW_CFA(r) ((__u32)((r) >> 32) & 7)
#define UNWIND_ROW_RBP(r) ((__u32)((r) >> 35) & 3)
#define UNWIND_ROW_RBP_OFF(r) ((long long)((__s64)((r) << 19) >> 56) * 8)
#define UNWIND_ROW_CFA_OFF(r) ((long long)((__s64)(r) >> 45))
#define UNWIND_CFA_OFF_MAX ((1 << 18) - 1)
#define UNWIND_CFA_OFF_MIN (-(1 << 18))

/* Offsets into the x86_64 ucontext that __restore_rt finds at rsp. */
#define UNWIND_SIGNAL_RBP 0x78
#define UNWIND_SIGNAL_RSP 0xa0
#define UNWIND_SIGNAL_RIP 0xa8

struct unwind_map_key {
	__u32 tgid;
	__u32 index;
};

/* One executable mapping: [start, end), ELF vaddr = address - bias. */
struct unwind_map {
	__u64 start;
	__u64 end;
	__u64 bias;
	__u32 first; /* slot of the file's rows in unwind_files */
	__u32 nrows; /* 0: no table, unwind with frame pointers */
};

/* Files with a table, by what the kernel knows of a mapping (Linux >= 5.17,
 * bpf_find_vma): a process of a known binary unwinds from its first sample,
 * before user space has read its mappings. dev is the kernel's s_dev
 * (major << 20 | minor). */
struct unwind_file_key {
	__u64 dev;
	__u64 ino;
};

/* The kernel's s_dev from user space's major << 32 | minor (the form of
 * /proc/PID/maps and unwind_table.h), and back. */
#define UNWIND_KDEV(udev) (((udev) >> 32) << 20 | ((udev)&0xfffff))
#define UNWIND_UDEV(kdev) (((kdev) >> 20) << 32 | ((kdev)&0xfffff))

#define UNWIND_FILE_SEGS 8

struct unwind_file {
	__u32 slot; /* in unwind_files */
	__u32 nrows;
	__u32 nseg;
	__u32 pad;
	__u64 seg[UNWIND_FILE_SEGS][3]; /* PT_LOAD: file offset, vaddr, file size */
};

/* sample_key.flags: the unwinder stopped before the outermost frame. */
#define PROFCAP_F_USTACK_PARTIAL 0x40

enum unwind_stat {
	USTAT_FRAMES = 0,  /* frames unwound from tables */
	USTAT_FP_FRAMES,   /* frames unwound with frame pointers */
	USTAT_COMPLETE,	   /* stacks walked to the outermost frame */
	USTAT_PARTIAL,	   /* stacks stopped early (see below) */
	USTAT_NO_MAPPING,  /* ... a PC in no known mapping */
	USTAT_NO_ROW,	   /* ... no row or an unsupported rule */
	USTAT_READ_ERR,	   /* ... stack memory could not be read */
	USTAT_DEPTH,	   /* ... PROFCAP_MAX_USTACK frames */
	USTAT_EXT_FULL,	   /* deep stacks whose tail could not be stored */
	USTAT_KERNEL_REGS, /* samples in kernel mode (user regs from the task) */
	USTAT_NO_PROC,	   /* samples of processes without tables yet: FP */
	USTAT_VMA,	   /* mappings found by the kernel's VMA (bpf_find_vma) */
	USTAT_VMA_EXEC,	   /* programs' text mappings found at their exec */
	USTAT__COUNT,
};

#endif
