/* v8.h - V8 (Node.js) JavaScript frames: what user space tells the BPF
 * walker (bpf/cpu_sampler/v8.bpf.c) about a process's V8, and how the
 * walker stores the frames it read (docs/v8.md). Shared by the BPF
 * programs and user space: __u32/__u64 only.
 *
 * A sample of a V8 process whose user stack runs JavaScript gets a second
 * stack, stored like the native ones (stacks0/1, struct stack_trace) under
 * its hash in sample_key.rtstack / offcpu_key.rtstack (0 = none). Frame i
 * (0 = innermost) takes three words:
 *   ips[3i]     SharedFunctionInfo address, untagged (low 48 bits)
 *               | fingerprint << 48
 *   ips[3i + 1] the frame's pc, as the native walk has it (the sampled
 *               ip for the leaf, the return address for the others)
 *   ips[3i + 2] offset (low 32 bits) | PROFCAP_V8_KIND_* << 32
 *               | PROFCAP_V8_FRAME_* << 40
 * and nr = 3 * frames. The offset is, by kind: INTERPRETED the bytecode
 * offset from the first bytecode (PROFCAP_V8_NO_OFFSET before the
 * frame's first call); JIT and BUILTIN none (PROFCAP_V8_NO_OFFSET). The fingerprint (profcap_v8_fingerprint()) is read with
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
#define PROFCAP_F_V8_TRUNC 0x400   /* JavaScript stack cut at PROFCAP_V8_MAX_FRAMES */
#define PROFCAP_F_V8_PARTIAL 0x800 /* a read failed mid-walk */
#define PROFCAP_F_V8_LOST 0x1000   /* JavaScript stack walked but its table was full */

/* The frame slots the walker reads lie in [fp - PROFCAP_V8_SLOTS_BELOW, fp). */
#define PROFCAP_V8_SLOTS_BELOW 48
#define PROFCAP_V8_SFI_READ 64 /* bytes of a SharedFunctionInfo read at most */
#define PROFCAP_V8_TEXT 4      /* executable mappings of the V8 file */

/* Per process (map v8_procs, key tgid): the slots and offsets the walker
 * reads, from the process's v8dbg_* constants (proc/v8proc.h). */
struct v8_proc {
	/* executable mappings of the file holding V8, [lo, hi): a pc there
	 * runs a builtin, elsewhere JIT code; lo 0 = unused */
	__u64 text[PROFCAP_V8_TEXT][2];
	__s16 fp_marker;	  /* context, or a StackFrame::Type << 1 marker */
	__s16 fp_function;	  /* JSFunction */
	__s16 fp_bytecode_array;  /* BytecodeArray (interpreted frames) */
	__s16 fp_bytecode_offset; /* Smi, from the tagged BytecodeArray */
	__u16 obj_map;		  /* HeapObject::map */
	__u16 map_instance_type;  /* Map::instance_type */
	__u16 jsfunc_shared;	  /* JSFunction::shared */
	__u16 sfi_script;	  /* SharedFunctionInfo::script_or_debug_info */
	__u16 sfi_length;	  /* the fingerprint's fields: uint16 */
	__u16 sfi_param_count;	  /* uint16 */
	__u16 sfi_token_offset;	  /* int16 */
	__u16 bytecode_data;	  /* BytecodeArray header size */
	__u16 type_sfi;		  /* SHARED_FUNCTION_INFO_TYPE */
	__u16 type_bytecode;	  /* BYTECODE_ARRAY_TYPE */
	__u8 heap_tag_mask;	  /* a heap object pointer: (v & mask) == tag */
	__u8 heap_tag;
	__u8 smi_shift;	/* a Smi's value: (__s64)v >> smi_shift */
	__u8 sfi_read;	/* bytes of a SharedFunctionInfo read: the end of its fields */
	__u8 pad[4];
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
