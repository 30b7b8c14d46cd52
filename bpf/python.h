/* python.h - CPython frames: what user space tells the BPF walker about a
 * process's interpreter, and how the walker stores the frames it read.
 * Shared by the BPF programs and user space: __u32/__u64 only.
 *
 * A sample of a thread that has a Python thread state gets a second stack,
 * stored like the native ones (stacks0/1, struct stack_trace) under its
 * hash in sample_key.pystack / offcpu_key.pystack (0 = none). Frame i
 * (0 = innermost, the frame running) takes two words:
 *   ips[2i]     code object address (low 48 bits) | fingerprint << 48
 *   ips[2i + 1] instruction offset (low 32 bits) | PROFCAP_PY_FRAME_* << 32
 * and nr = 2 * frames. The instruction offset is f_lasti as stored for
 * versions up to 3.10; from 3.11 on, the frame's instruction pointer
 * (prev_instr or instr_ptr) minus the code object's address, in bytes.
 * The fingerprint is (co_firstlineno & 0xffff), read with the code object:
 * user space never names a frame whose code object no longer matches it.
 */
#ifndef PROFCAP_BPF_PYTHON_H
#define PROFCAP_BPF_PYTHON_H

#define PROFCAP_PY_PROCS 4096	  /* processes whose Python frames are walked */
#define PROFCAP_PY_MAX_FRAMES 63  /* frames a Python stack carries (2 words each) */
#define PROFCAP_PY_FP_SHIFT 48	  /* fingerprint bits in the code word */
#define PROFCAP_PY_ADDR_MASK ((1ull << PROFCAP_PY_FP_SHIFT) - 1)

/* Frame flags (high half of the second word). */
#define PROFCAP_PY_FRAME_ENTRY 0x1  /* outermost frame of its eval-loop call */
#define PROFCAP_PY_FRAME_NOCODE 0x2 /* code object unreadable: name unknown */

/* sample_key.flags / offcpu_key.flags */
#define PROFCAP_F_PY_TRUNC 0x80	 /* Python stack cut at PROFCAP_PY_MAX_FRAMES */
#define PROFCAP_F_PY_PARTIAL 0x100 /* a read failed mid-walk: root end missing */
#define PROFCAP_F_PY_LOST 0x200	   /* Python stack walked but its table was full */

/* struct py_proc.flags */
#define PROFCAP_PY_INSTR_PTR 0x1   /* frame_instr is a pointer (3.11+), else an int */
#define PROFCAP_PY_CODE_TAGGED 0x2 /* frame_code is a tagged _PyStackRef (3.14): clear low bits */
#define PROFCAP_PY_OWNER 0x4	   /* frame_owner valid: frames owned by the C stack are shims */
#define PROFCAP_PY_IS_ENTRY 0x8	   /* frame_entry valid: a bool is_entry (3.11) */
#define PROFCAP_PY_ONE_PER_CALL 0x10 /* every frame is its own eval call (up to 3.10) */
#define PROFCAP_PY_CFRAME 0x20	   /* tstate_frame points to a _PyCFrame (3.11, 3.12) */

/* Per process (map py_procs, key tgid): where the interpreter's thread
 * states are and the offsets, in bytes, the walker reads. */
struct py_proc {
	__u64 interp_head; /* address of the pointer to the first PyInterpreterState */
	__u32 version;	   /* major << 8 | minor: 0x0207, 0x030b */
	__u32 flags;	   /* PROFCAP_PY_* */
	__u16 interp_tstate_head;    /* PyInterpreterState: first PyThreadState * */
	__u16 tstate_next;	     /* PyThreadState.next */
	__u16 tstate_thread_id;	     /* .thread_id: pthread_self(), the thread pointer */
	__u16 tstate_native_tid;     /* .native_thread_id (3.8+), 0xffff none */
	__u16 tstate_frame;	     /* .frame / .cframe / .current_frame */
	__u16 cframe_current_frame;  /* _PyCFrame.current_frame (PROFCAP_PY_CFRAME) */
	__u16 frame_back;	     /* f_back / previous */
	__u16 frame_code;	     /* f_code / f_executable */
	__u16 frame_instr;	     /* f_lasti (int) / prev_instr / instr_ptr */
	__u16 frame_owner;	     /* owner (char), with PROFCAP_PY_OWNER */
	__u16 frame_entry;	     /* is_entry (bool), with PROFCAP_PY_IS_ENTRY */
	__u16 code_firstlineno;	     /* PyCodeObject.co_firstlineno (int) */
	__u8 owner_cstack;	     /* owner of a C-stack shim frame (and above: shims too) */
	/* Bytes read from a frame at once: the end of the last field the
	 * walker reads in it (at most PROFCAP_PY_FRAME_READ). */
	__u8 frame_read;
	__u8 pad[6];
};

#define PROFCAP_PY_FRAME_READ 128 /* the most struct py_proc.frame_read says */
/* Thread states looked at to find a thread's own, per interpreter. */
#define PROFCAP_PY_MAX_THREADS 64
/* Threads whose thread state address is kept (py_tstates, an LRU). */
#define PROFCAP_PY_TSTATES 8192

#endif
