/* perl.h - Perl 5 frames: what user space tells the BPF walker
 * (bpf/cpu_sampler/perl.bpf.c) about a process's interpreter, and how the
 * walker stores the frames it read (docs/perl.md). Shared by the BPF
 * programs and user space: __u32/__u64 only.
 *
 * A sample of a Perl process's thread gets a second stack, stored
 * like the native ones (stacks0/1, struct stack_trace) under its hash in
 * sample_key.rtstack / offcpu_key.rtstack (0 = none): the managed runtime
 * slot V8's walker uses too (a process runs one runtime). Frame i
 * (0 = innermost) takes three words:
 *   ips[3i]     the sub's CV address (low 48 bits) | fingerprint << 48;
 *               0 for an eval and for the main program
 *   ips[3i + 1] the COP (statement) the frame runs: PL_curcop for the
 *               innermost, the call site saved by the frame above for
 *               the others
 *   ips[3i + 2] that COP's line (low 32 bits) | PROFCAP_PERL_KIND_* << 32
 *               | PROFCAP_PERL_FRAME_* << 40
 * and nr = 3 * frames. The fingerprint (profcap_perl_fingerprint()) is
 * folded from the CV's glob pointer, read with it; the line is read with
 * the COP: user space names neither a CV nor a COP that no longer reads
 * the same.
 */
#ifndef PROFCAP_BPF_PERL_H
#define PROFCAP_BPF_PERL_H

#define PROFCAP_PERL_PROCS 4096	   /* processes whose Perl frames are walked */
#define PROFCAP_PERL_MAX_FRAMES 42 /* frames a Perl stack carries (3 words each) */
#define PROFCAP_PERL_WORDS 3
#define PROFCAP_PERL_FP_SHIFT 48
#define PROFCAP_PERL_ADDR_MASK ((1ull << PROFCAP_PERL_FP_SHIFT) - 1)

/* What the frame is (bits 32..39 of the third word). */
#define PROFCAP_PERL_KIND_SUB 1	 /* a sub call (CXt_SUB) */
#define PROFCAP_PERL_KIND_EVAL 2 /* an eval or a require (CXt_EVAL) */
#define PROFCAP_PERL_KIND_MAIN 3 /* the main program, outermost */

/* Frame flags (bits 40..47). */
#define PROFCAP_PERL_FRAME_ENTRY 0x1 /* outermost frame of its runops call */
#define PROFCAP_PERL_FRAME_NOCV 0x2  /* the sub's CV unreadable: name unknown */

/* sample_key.flags / offcpu_key.flags: the runtime stack's bits (the
 * values of PROFCAP_F_V8_*) */
#define PROFCAP_F_PERL_TRUNC 0x400   /* Perl stack cut at PROFCAP_PERL_MAX_FRAMES */
#define PROFCAP_F_PERL_PARTIAL 0x800 /* a read failed mid-walk: root end missing */
#define PROFCAP_F_PERL_LOST 0x1000   /* Perl stack walked but its table was full */

/* Bytes of a context (PERL_CONTEXT) read: the fields the walker uses lie
 * below (user space checks). */
#define PROFCAP_PERL_CX_READ 96
/* Bytes of a stackinfo read. */
#define PROFCAP_PERL_SI_READ 64

/* Per process (map perl_procs, key tgid): where the interpreter is and
 * the offsets, in bytes, the walker reads (proc/perlproc.h). */
struct perl_proc {
	__u64 curinterp;	  /* address of PL_curinterp: the main interpreter */
	/* a thread's own interpreter lies this many bytes below its thread
	 * pointer (PL_current_context in the executable's static TLS), 0:
	 * unknown, only the main thread is walked */
	__u64 tls_interp;
	__u16 interp_curstackinfo; /* interpreter: PL_curstackinfo */
	__u16 interp_curcop;	  /* interpreter: PL_curcop */
	__u16 interp_curstack;	  /* interpreter: PL_curstack, = its stackinfo's si_stack */
	__u16 si_stack;		  /* stackinfo: its argument stack (AV *) */
	__u16 si_cxstack;	  /* stackinfo: the context array */
	__u16 si_cxix;		  /* stackinfo: index of the innermost context (I32) */
	__u16 si_prev;		  /* stackinfo: the one below */
	__u16 si_type;		  /* stackinfo: PERLSI_* (I32) */
	__u16 cx_size;		  /* sizeof(PERL_CONTEXT) */
	__u16 cx_oldcop;	  /* context: blk_oldcop, the caller's statement */
	__u16 cx_retop;		  /* context: blk_sub.retop / blk_eval.retop */
	__u16 cx_cv;		  /* context: blk_sub.cv */
	__u16 cop_line;		  /* COP: cop_line (u32) */
	__u16 cv_gv;		  /* CV body: xcv_gv_u (the fingerprint) */
	__u8 type_mask;		  /* CxTYPE(): cx_type & type_mask */
	__u8 type_sub, type_eval; /* CXt_SUB, CXt_EVAL */
	__u8 si_main;		  /* PERLSI_MAIN */
};

/* The fingerprint of a sub: its glob (or name HEK) pointer, folded. A
 * freed CV whose address another sub took almost never keeps it; one
 * that does has the same name. */
static inline __u16 profcap_perl_fingerprint(__u64 gv)
{
	__u64 h = gv >> 3;

	h ^= h >> 16;
	h ^= h >> 32;
	return (__u16)(h | 1); /* never 0: 0 means no CV */
}

#endif
