/* php.h - PHP (Zend Engine) frames: what user space tells the BPF walker
 * (bpf/cpu_sampler/php.bpf.c) about a process's interpreter, and how the
 * walker stores the frames it read (docs/php.md). Shared by the BPF
 * programs and user space: __u32/__u64 only.
 *
 * A sample of a PHP process's main thread while it runs PHP code gets a
 * second stack, stored like the native ones (stacks0/1, struct
 * stack_trace) under its hash in sample_key.rtstack / offcpu_key.rtstack
 * (0 = none). Frame i (0 = innermost) takes three words:
 *   ips[3i]     zend_function address (low 48 bits) | fingerprint << 48
 *   ips[3i + 1] the frame's opline (a zend_op pointer, 0 = none)
 *   ips[3i + 2] call info (low 32 bits: the frame's This.u1.type_info)
 *               | PROFCAP_PHP_FRAME_* << 32 | function type << 40
 * and nr = 3 * frames. The fingerprint (profcap_php_fingerprint()) is
 * read with the function: user space never names a frame whose function
 * no longer matches it.
 */
#ifndef PROFCAP_BPF_PHP_H
#define PROFCAP_BPF_PHP_H

#include <linux/types.h>

#define PROFCAP_PHP_PROCS 4096	  /* processes whose PHP frames are walked */
#define PROFCAP_PHP_MAX_FRAMES 42 /* frames a PHP stack carries (3 words each) */
#define PROFCAP_PHP_WORDS 3
#define PROFCAP_PHP_FP_SHIFT 48
#define PROFCAP_PHP_ADDR_MASK ((1ull << PROFCAP_PHP_FP_SHIFT) - 1)

/* Frame flags (bits 32..39 of the third word). */
#define PROFCAP_PHP_FRAME_ENTRY 0x1   /* user frame that began its executor call (ZEND_CALL_TOP) */
#define PROFCAP_PHP_FRAME_NOFUNC 0x2  /* function unreadable: name unknown */
#define PROFCAP_PHP_FRAME_REGLINE 0x4 /* opline from the executor's register, not the frame */

/* zend_function.type values the walker accepts. */
#define PROFCAP_PHP_INTERNAL 1 /* ZEND_INTERNAL_FUNCTION */
#define PROFCAP_PHP_USER 2     /* ZEND_USER_FUNCTION */
#define PROFCAP_PHP_EVAL 4     /* ZEND_EVAL_CODE */

/* sample_key.flags / offcpu_key.flags: the runtime stack's bits */
#define PROFCAP_F_PHP_TRUNC 0x400   /* PHP stack cut at PROFCAP_PHP_MAX_FRAMES */
#define PROFCAP_F_PHP_PARTIAL 0x800 /* a read failed mid-walk, or a frame did not check */
#define PROFCAP_F_PHP_LOST 0x1000   /* PHP stack walked but its table was full */

#define PROFCAP_PHP_EX_READ 64	  /* bytes of a zend_execute_data read at most */
#define PROFCAP_PHP_FUNC_READ 192 /* bytes of a zend_function read at most */

/* Per process (map php_procs, key tgid): where the executor's current
 * frame is and the offsets, in bytes, the walker reads. */
struct php_proc {
	__u64 current_execute_data; /* address of executor_globals.current_execute_data */
	__u64 exec_lo, exec_hi;	    /* execute_ex's code, [lo, hi); 0 = unknown */
	__u32 version;		    /* major << 8 | minor */
	__u32 pad0;
	__u16 ex_opline;     /* zend_execute_data.opline */
	__u16 ex_func;	     /* .func */
	__u16 ex_call_info;  /* .This.u1.type_info: call info in its upper bits */
	__u16 ex_prev;	     /* .prev_execute_data */
	__u16 fn_name;	     /* zend_function.common.function_name */
	__u16 fn_scope;	     /* .common.scope */
	__u16 op_filename;   /* zend_op_array.filename */
	__u16 op_line_start; /* .line_start */
	__u32 call_top;	     /* the call info bit of a frame that began its executor call */
	__u8 ex_read;	     /* bytes of a frame read: the end of its fields */
	__u8 func_read;	     /* bytes of a user function read: the end of its fields */
	__u8 pad[2];
};

/* The fingerprint of a function: its name, class and, for user code, its
 * file and first line, as the function holds them. A function freed and
 * its address reused almost never keeps all four. */
static inline __u16 profcap_php_fingerprint(__u64 name, __u64 scope, __u64 file, __u32 line)
{
	__u64 h = (name >> 3) ^ (scope << 7) ^ (file >> 2) ^ ((__u64)line << 21);

	h ^= h >> 16;
	h ^= h >> 32;
	return (__u16)h;
}

#endif
