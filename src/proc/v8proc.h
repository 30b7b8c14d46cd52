/* v8proc.h - is a process running V8 (Node.js), and how are its frames and
 * objects laid out: what the V8 frame walker (bpf/v8.h) and the namer of
 * JavaScript frames (symbolize/v8frames.h) need to know of it.
 *
 * Found from outside, without flags: the `node` executable or a mapped
 * libnode.so exports V8's postmortem description of itself, several
 * hundred `v8dbg_*` integers (frame slot offsets, frame type markers,
 * instance types, field offsets, tagging constants) whose values are read
 * from the file's data, plus V8's version (v8::internal::Version). The
 * few fields the description lacks are derived from neighbouring fields
 * (see v8proc__layout()) and checked on live objects by the namer.
 * Works through /proc/PID/root for other mount namespaces.
 */
#ifndef PROFCAP_V8PROC_H
#define PROFCAP_V8PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct procsnap;

#define V8PROC_NONE 0xffff /* a field offset the description does not give */
#define V8PROC_MAX_JIT 16  /* code-space ranges kept */

/* Frame type markers (StackFrame::Type) profcap tells apart. */
enum v8proc_frametype {
	V8PROC_FT_ENTRY,
	V8PROC_FT_CONSTRUCT_ENTRY,
	V8PROC_FT_EXIT,
	V8PROC_FT_BUILTIN_EXIT,
	V8PROC_FT_INTERPRETED,
	V8PROC_FT_BASELINE,
	V8PROC_FT_MAGLEV,
	V8PROC_FT_TURBOFAN,
	V8PROC_FT_STUB,
	V8PROC_FT_INTERNAL,
	V8PROC_FT_CONSTRUCT,
	V8PROC_FT_BUILTIN,
	V8PROC_FT_N
};

/* Offsets (bytes) and constants of one V8 build, from its v8dbg_*. */
struct v8proc_layout {
	__u32 version; /* V8 major << 24 | minor << 16 | build (0: unknown) */
	/* tagging: a Smi has tag bit 0 clear and its value in the upper
	 * 32 bits (smi_shift); a heap object pointer is address | 1 */
	__u8 tagged_size;   /* 8: profcap does not read pointer-compressed heaps */
	__u8 smi_shift;	    /* SmiShiftSize + SmiTagSize */
	__u8 heap_tag_mask; /* HeapObjectTagMask */
	__u8 heap_tag;	    /* HeapObjectTag */
	/* frame slots, relative to the frame pointer */
	__s16 fp_marker;	  /* context (JS frames) or Smi frame type marker */
	__s16 fp_function;	  /* JSFunction of a JS frame */
	__s16 fp_bytecode_array;  /* BytecodeArray of an interpreted frame */
	__s16 fp_bytecode_offset; /* Smi: header-relative bytecode offset */
	__u8 frametype[V8PROC_FT_N]; /* StackFrame::Type values, 0xff unknown */
	/* objects */
	__u16 obj_map;		 /* HeapObject::map */
	__u16 map_instance_type; /* Map::instance_type (uint16) */
	__u16 jsfunc_shared;	 /* JSFunction::shared */
	__u16 jsfunc_code;	 /* JSFunction::code (derived, see v8proc__layout) */
	__u16 sfi_function_data;
	__u16 sfi_name_or_scope_info;
	__u16 sfi_script;	 /* script_or_debug_info */
	__u16 sfi_length;	 /* uint16 */
	__u16 sfi_param_count;	 /* internal_formal_parameter_count (uint16) */
	__u16 sfi_token_offset;	 /* raw_function_token_offset (int16) */
	__u16 script_name;
	__u16 script_source;
	__u16 script_line_ends;
	__u16 fixed_length;	 /* FixedArrayBase::length (Smi) */
	__u16 fixed_data;	 /* FixedArray / ByteArray elements */
	__u16 bytecode_data;	 /* BytecodeArray bytecodes */
	__u16 bytecode_positions; /* BytecodeArray::source_position_table */
	__u16 str_length;	 /* String::length (int32) */
	__u16 seq_chars;	 /* SeqOneByteString / SeqTwoByteString chars */
	__u16 cons_first, cons_second;
	__u16 thin_actual;
	__u16 sliced_parent, sliced_offset;
	__u16 code_bytecode; /* Code::bytecode_or_interpreter_data (baseline code) */
	__u8 scope_first_vars;	  /* ScopeInfo slot of the first variable */
	__u8 scope_ncontextlocals; /* ScopeInfo slot of the context local count */
	/* instance types */
	__u16 type_sfi, type_script, type_bytecode, type_fixed_array, type_byte_array;
	__u16 type_scope_info, type_code, type_first_nonstring;
	/* string instance type bits */
	__u8 str_repr_mask, str_enc_mask, str_seq, str_cons, str_sliced, str_thin, str_onebyte;
};

/* One address range of the process, absolute. */
struct v8proc_range {
	__u64 lo, hi;
};

/* A process running V8. */
struct v8proc {
	struct v8proc_layout layout;
	char version[48]; /* "11.3.244.8" */
	/* executable mappings of the file that holds V8 (the embedded
	 * builtins run there or from a remapped copy of its bytes) */
	struct v8proc_range text[4];
	__u32 ntext;
	/* anonymous executable mappings: V8's code space (JIT code) */
	struct v8proc_range jit[V8PROC_MAX_JIT];
	__u32 njit;
};

/* Find out whether process @pid (seen from @proc_root, NULL = "/proc")
 * runs V8, from its snapshot @snap (NULL: read /proc/PID/maps). 0 and
 * *@out filled; -ENOENT not V8 (or a build without v8dbg_* symbols);
 * -ENOTSUP a V8 whose description lacks what profcap needs or that
 * compresses pointers (logged once); other -errno when the process or its
 * files could not be read. */
int v8proc__locate(const char *proc_root, int pid, const struct procsnap *snap,
		   struct v8proc *out);

/* One v8dbg_* constant: its name without the prefix and its value. */
struct v8proc_const {
	const char *name;
	__s32 value;
	bool found;
};

/* The constants profcap asks a file for, in the order v8proc__layout()
 * wants them: @n gets their number. The table is static. */
const struct v8proc_const *v8proc__wanted(size_t *n);

/* Fill @out from @n constants @c (as v8proc__wanted() lists them, with
 * values). Derived where the description has no symbol:
 *   JSFunction::code       the slot between raw_feedback_cell and
 *                          prototype_or_initial_map, when one slot apart;
 *   BytecodeArray::source_position_table  the third tagged field after
 *                          the FixedArrayBase header (V8 8 to 11).
 * 0; -ENOTSUP when a constant without which frames cannot be read is
 * missing or out of range, or pointers are compressed. Pure. */
int v8proc__layout(const struct v8proc_const *c, size_t n, struct v8proc_layout *out);

/* Whether @pc is in V8's code space (an anonymous executable mapping) or
 * in the file's text (builtins). */
bool v8proc__in_jit(const struct v8proc *vp, __u64 pc);
bool v8proc__in_text(const struct v8proc *vp, __u64 pc);

#endif
