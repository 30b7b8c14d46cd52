/* pylayout.c - the offsets of each CPython version profcap knows, as its
 * own headers give them for x86-64 (tests/unit/test_pyproc.c compiles
 * tests/unit/fixtures/py_offsets.c against each installed version and
 * compares). 3.14 comes from its source (pycore_interpframe_structs.h,
 * pycore_tstate.h); 3.13 and later also publish _Py_DebugOffsets, which
 * pyproc.c prefers when they read right. */
#include <stddef.h>

#include "proc/pyproc.h"

#define N PYPROC_NONE

/* Strings and bytes of Python 3 up to 3.11 (PyASCIIObject with wstr) and
 * from 3.12 (without). */
#define STR_OLD                                                                                 \
	.str_state = 32, .str_length = 16, .str_ascii_data = 48, .str_compact_data = 72,       \
	.bytes_size = 16, .bytes_data = 32
#define STR_NEW                                                                                 \
	.str_state = 32, .str_length = 16, .str_ascii_data = 40, .str_compact_data = 56,       \
	.bytes_size = 16, .bytes_data = 32

/* PyFrameObject: one per call, f_lasti an int (2.7 to 3.10). */
#define FRAMEOBJ(lasti)                                                                         \
	.flags = PYPROC_ONE_PER_CALL, .cframe_current_frame = N, .frame_back = 24,           \
	.frame_code = 32, .frame_instr = (lasti), .frame_owner = N, .frame_entry = N,            \
	.code_qualname = N, .code_bytecode = N

static const struct pyproc_layout layouts[] = {
	{
		.version = 0x0207, FRAMEOBJ(120),
		.runtime_interp_head = N, .interp_tstate_head = 8, .tstate_next = 0,
		.tstate_thread_id = 144, .tstate_native_tid = N, .tstate_frame = 16,
		.code_firstlineno = 96, .code_name = 88, .code_filename = 80,
		.code_linetable = 104,
		/* str is PyStringObject: bytes */
		.str_state = N, .str_length = 16, .str_ascii_data = 36, .str_compact_data = N,
		.bytes_size = 16, .bytes_data = 36,
	},
	{
		.version = 0x0306, FRAMEOBJ(120),
		.runtime_interp_head = N, .interp_tstate_head = 8, .tstate_next = 8,
		.tstate_thread_id = 152, .tstate_native_tid = N, .tstate_frame = 24,
		.code_firstlineno = 36, .code_name = 104, .code_filename = 96,
		.code_linetable = 112, STR_OLD,
	},
	{
		.version = 0x0307, FRAMEOBJ(104),
		.runtime_interp_head = 24, .interp_tstate_head = 8, .tstate_next = 8,
		.tstate_thread_id = 176, .tstate_native_tid = N, .tstate_frame = 24,
		.code_firstlineno = 36, .code_name = 104, .code_filename = 96,
		.code_linetable = 112, STR_OLD,
	},
	{
		.version = 0x0308, FRAMEOBJ(104),
		.runtime_interp_head = 32, .interp_tstate_head = 8, .tstate_next = 8,
		.tstate_thread_id = 176, .tstate_native_tid = N, .tstate_frame = 24,
		.code_firstlineno = 40, .code_name = 112, .code_filename = 104,
		.code_linetable = 120, STR_OLD,
	},
	{
		.version = 0x0309, FRAMEOBJ(104),
		.runtime_interp_head = 32, .interp_tstate_head = 8, .tstate_next = 8,
		.tstate_thread_id = 176, .tstate_native_tid = N, .tstate_frame = 24,
		.code_firstlineno = 40, .code_name = 112, .code_filename = 104,
		.code_linetable = 120, STR_OLD,
	},
	{
		/* f_lasti counts code units from here on */
		.version = 0x030a, FRAMEOBJ(96),
		.runtime_interp_head = 32, .interp_tstate_head = 8, .tstate_next = 8,
		.tstate_thread_id = 176, .tstate_native_tid = N, .tstate_frame = 24,
		.code_firstlineno = 40, .code_name = 112, .code_filename = 104,
		.code_linetable = 120, STR_OLD,
	},
	{
		/* _PyInterpreterFrame behind tstate->cframe->current_frame;
		 * is_entry marks the first frame of each eval-loop call */
		.version = 0x030b,
		.flags = PYPROC_INSTR_PTR | PYPROC_IS_ENTRY | PYPROC_CFRAME,
		.runtime_interp_head = 40, .interp_tstate_head = 16, .tstate_next = 8,
		.tstate_thread_id = 152, .tstate_native_tid = 160, .tstate_frame = 56,
		.cframe_current_frame = 8, .frame_back = 48, .frame_code = 32,
		.frame_instr = 56, .frame_owner = N, .frame_entry = 68,
		.code_firstlineno = 72, .code_name = 120, .code_qualname = 128,
		.code_filename = 112, .code_linetable = 136, .code_bytecode = 184, STR_OLD,
	},
	{
		/* each eval-loop call pushes a shim frame owned by the C stack */
		.version = 0x030c,
		.flags = PYPROC_INSTR_PTR | PYPROC_OWNER | PYPROC_CFRAME,
		.runtime_interp_head = 40, .interp_tstate_head = 72, .tstate_next = 8,
		.tstate_thread_id = 136, .tstate_native_tid = 144, .tstate_frame = 56,
		.cframe_current_frame = 0, .frame_back = 8, .frame_code = 0,
		.frame_instr = 56, .frame_owner = 70, .frame_entry = N, .owner_cstack = 3,
		.code_firstlineno = 68, .code_name = 120, .code_qualname = 128,
		.code_filename = 112, .code_linetable = 136, .code_bytecode = 192, STR_NEW,
	},
	{
		/* tstate->current_frame; f_executable, instr_ptr */
		.version = 0x030d, .flags = PYPROC_INSTR_PTR | PYPROC_OWNER,
		.runtime_interp_head = 632, .interp_tstate_head = 7344, .tstate_next = 8,
		.tstate_thread_id = 152, .tstate_native_tid = 160, .tstate_frame = 72,
		.cframe_current_frame = N, .frame_back = 8, .frame_code = 0,
		.frame_instr = 56, .frame_owner = 70, .frame_entry = N, .owner_cstack = 3,
		.code_firstlineno = 68, .code_name = 120, .code_qualname = 128,
		.code_filename = 112, .code_linetable = 136, .code_bytecode = 200, STR_NEW,
	},
	{
		/* f_executable a tagged _PyStackRef; the frame's stackpointer
		 * (a pointer) moves return_offset and owner; the thread state
		 * lost c_recursion_remaining. Owners from 3 up (the
		 * interpreter's, the C stack's) are shims. The runtime and
		 * interpreter offsets exist in _Py_DebugOffsets only. */
		.version = 0x030e,
		.flags = PYPROC_INSTR_PTR | PYPROC_OWNER | PYPROC_CODE_TAGGED,
		.runtime_interp_head = N, .interp_tstate_head = N, .tstate_next = 8,
		.tstate_thread_id = 144, .tstate_native_tid = 152, .tstate_frame = 64,
		.cframe_current_frame = N, .frame_back = 8, .frame_code = 0,
		.frame_instr = 56, .frame_owner = 74, .frame_entry = N, .owner_cstack = 3,
		.code_firstlineno = 68, .code_name = 120, .code_qualname = 128,
		.code_filename = 112, .code_linetable = 136, .code_bytecode = 200, STR_NEW,
	},
};

const struct pyproc_layout *pyproc__layout(unsigned major, unsigned minor)
{
	__u32 v = (major << 8) | minor;
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == v)
			return &layouts[i];
	return NULL;
}
