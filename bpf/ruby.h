/* ruby.h - CRuby frames: what user space tells the BPF walker
 * (bpf/cpu_sampler/ruby.bpf.c) about a process's Ruby VM, and how the
 * walker stores the frames it read (docs/ruby.md). Shared by the BPF
 * programs and user space: __u32/__u64 only.
 *
 * A sample of a thread that runs Ruby gets a second stack, stored like the
 * native ones (stacks0/1, struct stack_trace) under its hash in
 * sample_key.rtstack / offcpu_key.rtstack (0 = none), the slot every
 * managed runtime shares (a process runs one). Frame i (0 = innermost, the
 * control frame running) takes three words:
 *   ips[3i]     ISeq frame: the rb_iseq_t address (low 48 bits)
 *               | fingerprint << 48;
 *               C function frame: its method entry's address
 *   ips[3i + 1] ISeq frame: the pc's index in the iseq's encoded
 *               instructions (low 32 bits, PROFCAP_RUBY_NO_PC none)
 *               | PROFCAP_RUBY_KIND_* << 32 | PROFCAP_RUBY_FRAME_* << 40
 *   ips[3i + 2] ISeq frame: the iseq's body address; C function frame:
 *               its method entry's definition (0 unread)
 * and nr = 3 * frames. The fingerprint (profcap_ruby_fingerprint()) folds
 * the body address with the iseq's first line, both read with it: user
 * space never names a frame whose iseq no longer matches.
 */
#ifndef PROFCAP_BPF_RUBY_H
#define PROFCAP_BPF_RUBY_H

#define PROFCAP_RUBY_PROCS 4096	   /* processes whose Ruby frames are walked */
#define PROFCAP_RUBY_MAX_FRAMES 42 /* frames a Ruby stack carries (3 words each) */
#define PROFCAP_RUBY_WORDS 3
#define PROFCAP_RUBY_FP_SHIFT 48
#define PROFCAP_RUBY_ADDR_MASK ((1ull << PROFCAP_RUBY_FP_SHIFT) - 1)
#define PROFCAP_RUBY_NO_PC 0xffffffffu

/* What ran in the frame (bits 32..39 of the second word). */
#define PROFCAP_RUBY_KIND_ISEQ 1  /* Ruby code: an instruction sequence */
#define PROFCAP_RUBY_KIND_CFUNC 2 /* a method written in C */

/* Frame flags (bits 40..47). */
#define PROFCAP_RUBY_FRAME_FINISH 0x1 /* outermost frame of its VM loop call */
#define PROFCAP_RUBY_FRAME_NOBODY 0x2 /* iseq unreadable: name unknown */

/* sample_key.flags / offcpu_key.flags: the runtime stack's bits, the
 * values of PROFCAP_F_V8_* (one runtime per process). */
#define PROFCAP_F_RUBY_TRUNC 0x400   /* Ruby stack cut at PROFCAP_RUBY_MAX_FRAMES */
#define PROFCAP_F_RUBY_PARTIAL 0x800 /* a read failed mid-walk */
#define PROFCAP_F_RUBY_LOST 0x1000   /* Ruby stack walked but its table was full */

/* The VM's own frame flags (ep[0]) the walker tests. */
#define PROFCAP_RUBY_VM_MAGIC_MASK 0x7fff0001u
#define PROFCAP_RUBY_VM_MAGIC_CFUNC 0x55550001u
#define PROFCAP_RUBY_VM_MAGIC_DUMMY 0x79990001u
#define PROFCAP_RUBY_VM_FLAG_FINISH 0x0020u
#define PROFCAP_RUBY_VM_FLAG_CFRAME 0x0080u

/* Bytes of a control frame and of an iseq body read at most. */
#define PROFCAP_RUBY_CFP_READ 64
#define PROFCAP_RUBY_BODY_READ 128
/* Threads of a ractor looked at to find the sampled one. */
#define PROFCAP_RUBY_MAX_THREADS 64
/* Threads whose rb_thread_t address is kept (ruby_threads, an LRU). */
#define PROFCAP_RUBY_THREADS 2048

/* Per process (map ruby_procs, key tgid): where the VM is and the offsets,
 * in bytes, the walker reads (proc/rubyproc.h, checked on the process). */
struct ruby_proc {
	__u64 vm_ptr;		 /* address of ruby_current_vm_ptr (rb_vm_t *) */
	__u16 vm_main_ractor;	 /* rb_vm_t.ractor.main_ractor */
	__u16 ractor_threads;	 /* rb_ractor_t.threads.set: list of rb_thread_t */
	__u16 thread_node;	 /* rb_thread_t.lt_node: its link in that list */
	__u16 thread_ec;	 /* rb_thread_t.ec */
	__u16 thread_id;	 /* .thread_id: pthread_self(), the thread pointer */
	__u16 thread_tid;	 /* .tid: the kernel's thread ID */
	__u16 ec_vm_stack;	 /* rb_execution_context_t.vm_stack */
	__u16 ec_vm_stack_size;	 /* .vm_stack_size, in words */
	__u16 ec_cfp;		 /* .cfp: the running control frame */
	__u16 cfp_size;		 /* sizeof(rb_control_frame_t) */
	__u16 cfp_pc;		 /* rb_control_frame_t.pc */
	__u16 cfp_iseq;		 /* .iseq */
	__u16 cfp_ep;		 /* .ep: ep[0] the frame's flags, ep[-1] ... */
	__u16 iseq_body;	 /* rb_iseq_t.body */
	__u16 body_encoded;	 /* rb_iseq_constant_body.iseq_encoded */
	__u16 body_first_lineno; /* .location.first_lineno (a Fixnum) */
	__s16 ep_me;		 /* ep's index of the method entry, in bytes (-16) */
	__u16 me_def;		 /* rb_method_entry_t.def */
	__u16 pad[2];
};

/* The fingerprint of an iseq: its body's address and first line (a
 * Fixnum), read with it. An iseq collected and its address reused almost
 * never keeps both. */
static inline __u16 profcap_ruby_fingerprint(__u64 body, __u64 first_lineno)
{
	__u64 h = (body >> 3) ^ (first_lineno << 17) ^ (first_lineno >> 1);

	h ^= h >> 16;
	h ^= h >> 32;
	return (__u16)h;
}

#endif
