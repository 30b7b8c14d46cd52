/* jvm.h - HotSpot frames: what user space tells the BPF walker
 * (bpf/cpu_sampler/jvm.bpf.c) about a JVM (struct jvm_proc, from
 * proc/jvmproc.h) and how the walker stores the Java frames it walked.
 * Shared by the BPF programs and user space: __u32/__u64 only.
 * docs/jvm.md describes the walk.
 *
 * A sample whose native walk reached a pc inside the JVM's code cache gets
 * a second stack, stored like the native ones (stacks0/1, struct
 * stack_trace) under its hash in the managed runtime's slot,
 * sample_key.rtstack / offcpu_key.rtstack (0 = none). Frame i (0 =
 * innermost) is one physical frame of the code cache, in the order the
 * native stack meets them, in two words:
 *   ips[2i]     object address (low 48 bits) | fingerprint << 48
 *   ips[2i + 1] position (low 32 bits) | kind << 32 | PROFCAP_JVM_FRAME_* << 40
 * and nr = 2 * frames rounded up to a multiple of PROFCAP_JVM_NR_ALIGN
 * with zero words (kind 0: no frame), as the drain keeps whole V8 frames
 * of three words. Per kind:
 *   INTERP    object Method*, position the bci (bcp - ConstMethod* -
 *             sizeof(ConstMethod)), fingerprint (ConstMethod* >> 3) & 0xffff
 *   BLOB      object the CodeBlob (an nmethod, or a stub), position
 *             pc - blob, fingerprint the 16 low bits of the int at
 *             nmethod::_compile_id (user space tells nmethods from stubs
 *             and checks the fingerprint of nmethods only)
 * Inlined methods are not walked in BPF: user space expands a BLOB
 * frame from the nmethod's pc descriptors and scopes.
 */
#ifndef PROFCAP_BPF_JVM_H
#define PROFCAP_BPF_JVM_H

#define PROFCAP_JVM_PROCS 1024	    /* processes whose Java frames are walked */
#define PROFCAP_JVM_MAX_FRAMES 63   /* physical Java frames a stack carries (2 words each) */
#define PROFCAP_JVM_NR_ALIGN 6	    /* words of a stack: a multiple of this */
#define PROFCAP_JVM_BLOB_READ 128   /* a CodeBlob's head read: fewer bytes than this */
#define PROFCAP_JVM_MAX_HEAPS 4	    /* code heaps */
#define PROFCAP_JVM_SEGMAP_STEPS 32 /* segment map steps to a blob's start */
#define PROFCAP_JVM_FP_SHIFT 48
#define PROFCAP_JVM_ADDR_MASK ((1ull << PROFCAP_JVM_FP_SHIFT) - 1)

/* Frame kinds (bits 32-39 of the second word). */
#define PROFCAP_JVM_KIND_INTERP 1
#define PROFCAP_JVM_KIND_BLOB 2

/* Frame flags (bits 40-47 of the second word). */
#define PROFCAP_JVM_FRAME_LEAF 0x1     /* the sampled pc, not a return address */
#define PROFCAP_JVM_FRAME_PROLOGUE 0x2 /* pc before the frame was complete */
#define PROFCAP_JVM_FRAME_NOREAD 0x4   /* the object could not be read: name unknown */

/* sample_key.flags / offcpu_key.flags: the managed runtime's bits, the
 * values of PROFCAP_F_V8_* (bpf/v8.h) */
#define PROFCAP_F_JVM_TRUNC 0x400   /* Java stack cut at PROFCAP_JVM_MAX_FRAMES */
#define PROFCAP_F_JVM_PARTIAL 0x800 /* a read failed or a frame did not check: root end missing */
#define PROFCAP_F_JVM_LOST 0x1000   /* Java stack walked but its table was full */

/* struct jvm_proc.flags: JVMPROC_* of proc/jvmproc.h, the same values */
#define PROFCAP_JVM_BLOB_OFFSETS 0x1 /* CodeBlob code begin is an int offset (JDK 23+) */
#define PROFCAP_JVM_FCO_S16 0x10     /* CodeBlob frame complete offset is 2 bytes */

struct jvm_heap {
	__u64 lo, hi; /* the heap's range */
	__u64 segmap; /* its segment map, one byte per segment */
	__u32 log2_seg;
	__u32 pad;
};

/* Per process (map jvm_procs, key tgid): the code cache and the offsets,
 * in bytes, the walker reads. */
struct jvm_proc {
	__u64 code_lo, code_hi;	    /* CodeCache bounds */
	__u64 interp_lo, interp_hi; /* the template interpreter */
	__u64 call_stub_ret;	    /* return address into the call stub: the walk ends */
	struct jvm_heap heaps[PROFCAP_JVM_MAX_HEAPS];
	__u32 nheaps;
	__u32 flags;		   /* PROFCAP_JVM_* */
	__u16 heapblock_size;	   /* the blob follows its HeapBlock */
	__u16 blob_size;	   /* CodeBlob::_size (int) */
	__u16 blob_frame_complete; /* _frame_complete_offset (int, or s16) */
	__u16 blob_frame_size;	   /* _frame_size (int, words) */
	__u16 blob_code_begin;	   /* _code_begin (pointer) / _code_offset (int) */
	__u16 nm_compile_id;	   /* nmethod::_compile_id (int) */
	__u16 nm_size;		   /* sizeof(nmethod) */
	__u16 blob_read;      /* bytes of the CodeBlob's head read: its fields above end there */
	__u16 m_const_method; /* Method::_constMethod */
	__u16 cm_size;	      /* sizeof(ConstMethod): bytecodes follow */
	__s16 interp_method;  /* interpreter frame: Method* slot from rbp */
	__s16 interp_bcp;     /* interpreter frame: bcp slot from rbp */
};

/* The interpreter's frame slots the walker reads lie in
 * [fp - PROFCAP_JVM_SLOTS_BELOW, fp + 16). */
#define PROFCAP_JVM_SLOTS_BELOW 128

#endif
