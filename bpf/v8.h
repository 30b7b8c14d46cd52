/* v8.h - V8 (Node.js) JavaScript frames: what user space tells the BPF
 * walker about a process's V8, and how the walker stores the frames it
 * read. A proposal: no BPF program includes it yet (docs/v8.md). Shared by
 * the BPF programs and user space: __u32/__u64 only.
 *
 * A sample of a V8 process whose user stack runs JavaScript gets a second
 * stack, stored like the native ones (stacks0/1, struct stack_trace) under
 * its hash in sample_key.jsstack / offcpu_key.jsstack (0 = none). Frame i
 * (0 = innermost) takes three words:
 *   ips[3i]     SharedFunctionInfo address, untagged (low 48 bits)
 *               | fingerprint << 48
 *   ips[3i + 1] the frame's pc, as the native walk has it (the sampled
 *               ip for the leaf, the return address for the others)
 *   ips[3i + 2] offset (low 32 bits) | PROFCAP_V8_KIND_* << 32
 *               | PROFCAP_V8_FRAME_* << 40
 * and nr = 3 * frames. The offset is, by kind: INTERPRETED the bytecode
 * offset from the first bytecode; JIT the pc minus the code object's
 * instruction start (PROFCAP_V8_NO_OFFSET when that was not read);
 * BUILTIN none. The fingerprint (profcap_v8_fingerprint()) is read with
 * the SharedFunctionInfo: user space never names a frame whose object no
 * longer matches it.
 */
#ifndef PROFCAP_BPF_V8_H
#define PROFCAP_BPF_V8_H

#define PROFCAP_V8_PROCS 4096	  /* processes whose JavaScript frames are walked */
#define PROFCAP_V8_MAX_FRAMES 42  /* frames a JavaScript stack carries (3 words each) */
#define PROFCAP_V8_WORDS 3
#define PROFCAP_V8_FP_SHIFT 48
#define PROFCAP_V8_ADDR_MASK ((1ull << PROFCAP_V8_FP_SHIFT) - 1)
#define PROFCAP_V8_NO_OFFSET 0xffffffffu

/* What ran in the frame (bits 32..39 of the third word). */
#define PROFCAP_V8_KIND_INTERPRETED 1 /* Ignition: bytecode offset */
#define PROFCAP_V8_KIND_JIT 2	      /* Sparkplug, Maglev, TurboFan code */
#define PROFCAP_V8_KIND_BUILTIN 3     /* a JS function whose code is a builtin */

/* Frame flags (bits 40..47). */
#define PROFCAP_V8_FRAME_NOSFI 0x1 /* function unreadable: name unknown */

/* sample_key.flags / offcpu_key.flags */
#define PROFCAP_F_V8_TRUNC 0x200   /* JavaScript stack cut at PROFCAP_V8_MAX_FRAMES */
#define PROFCAP_F_V8_PARTIAL 0x400 /* a read failed mid-walk */

/* Per process (map v8_procs, key tgid): the slots and offsets the walker
 * reads, from the process's v8dbg_* constants (proc/v8proc.h). */
struct v8_proc {
	__s16 fp_marker;	  /* context, or a Smi StackFrame::Type marker */
	__s16 fp_function;	  /* JSFunction */
	__s16 fp_bytecode_array;  /* BytecodeArray (interpreted frames) */
	__s16 fp_bytecode_offset; /* Smi, from the tagged BytecodeArray */
	__u16 obj_map;		  /* HeapObject::map */
	__u16 map_instance_type;  /* Map::instance_type */
	__u16 jsfunc_shared;	  /* JSFunction::shared */
	__u16 jsfunc_code;	  /* JSFunction::code, 0xffff unknown */
	__u16 sfi_script;	  /* SharedFunctionInfo::script_or_debug_info */
	__u16 sfi_length;	  /* the fingerprint's fields: uint16 */
	__u16 sfi_param_count;	  /* uint16 */
	__u16 sfi_token_offset;	  /* int16 */
	__u16 code_instruction_start; /* Code::instruction_start, 0xffff unknown */
	__u16 bytecode_data;	  /* BytecodeArray header size */
	__u16 type_sfi;		  /* SHARED_FUNCTION_INFO_TYPE */
	__u16 type_bytecode;	  /* BYTECODE_ARRAY_TYPE */
	__u8 marker_entry;	  /* EntryFrame: the walk's end */
	__u8 marker_construct_entry;
	__u8 pad[6];
};

/* The fingerprint of a SharedFunctionInfo: its immutable declared length,
 * parameter count and function token offset, and the address of its
 * script. A collected and reused address almost never keeps all four. */
static inline __u16 profcap_v8_fingerprint(__u16 length, __u16 params, __u16 token, __u64 script)
{
	__u64 h = length ^ ((__u64)params << 5) ^ ((__u64)token << 10) ^ (script >> 3);

	h ^= h >> 16;
	h ^= h >> 32;
	return (__u16)h;
}

#endif
