/* pyproc.h - is a process a CPython interpreter, which version, and where
 * are its thread states: what the BPF walker (bpf/python.h) and the
 * user-space frame namer (symbolize/pyframes.h) need to know of it.
 *
 * Found from outside, without symbols a distribution strips: the mapped
 * executable or libpython's .dynsym (_PyRuntime, PyInterpreterState_Head,
 * _PyEval_EvalFrameDefault, ...), the version from the file and its data,
 * and from 3.13 on the _Py_DebugOffsets the interpreter publishes at the
 * start of _PyRuntime. Offsets of older versions come from tables in
 * pylayout.c. Works through /proc/PID/root for other mount namespaces.
 */
#ifndef PROFCAP_PYPROC_H
#define PROFCAP_PYPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct procsnap;

#define PYPROC_NONE 0xffff /* an offset the version does not have */

/* pyproc_layout.flags: the PROFCAP_PY_* bits of bpf/python.h, the same
 * values (proc/ does not include the BPF ABI; collect/ checks they match). */
#define PYPROC_INSTR_PTR 0x1	/* frame_instr is a pointer (3.11+), else an int */
#define PYPROC_CODE_TAGGED 0x2	/* frame_code is a tagged _PyStackRef (3.14) */
#define PYPROC_OWNER 0x4	/* frame_owner valid: owners >= owner_cstack are shims */
#define PYPROC_IS_ENTRY 0x8	/* frame_entry valid (3.11) */
#define PYPROC_ONE_PER_CALL 0x10 /* every frame is its own eval call (up to 3.10) */
#define PYPROC_CFRAME 0x20	/* tstate_frame points to a _PyCFrame (3.11, 3.12) */
#define PYPROC_EVAL_RANGES 4

/* Offsets (bytes) of one CPython version. The thread-state and frame part
 * is what struct py_proc (bpf/python.h) carries; the rest names frames. */
struct pyproc_layout {
	__u32 version; /* major << 8 | minor */
	__u32 flags;   /* PROFCAP_PY_* of bpf/python.h (same bits) */
	/* thread states and frames: as struct py_proc */
	__u16 runtime_interp_head; /* _PyRuntime.interpreters.head (3.7+) */
	__u16 interp_tstate_head;
	__u16 tstate_next;
	__u16 tstate_thread_id;
	__u16 tstate_native_tid;
	__u16 tstate_frame;
	__u16 cframe_current_frame;
	__u16 frame_back;
	__u16 frame_code;
	__u16 frame_instr;
	__u16 frame_owner;
	__u16 frame_entry;
	__u8 owner_cstack;
	/* code objects */
	__u16 code_firstlineno;
	__u16 code_name;     /* co_name (str) */
	__u16 code_qualname; /* co_qualname (3.11+), PYPROC_NONE before */
	__u16 code_filename; /* co_filename (str) */
	__u16 code_linetable; /* co_lnotab (bytes, up to 3.9) / co_linetable (3.10+) */
	__u16 code_bytecode;  /* 3.11+: offset of co_code_adaptive in the code object */
	/* strings: str (3.x: compact ASCII or compact unicode), bytes */
	__u16 str_state;	 /* PyASCIIObject.state (kind, compact, ascii bits) */
	__u16 str_length;	 /* PyASCIIObject.length / PyStringObject.ob_size (2.7) */
	__u16 str_ascii_data;	 /* sizeof(PyASCIIObject): data of a compact ASCII str */
	__u16 str_compact_data;	 /* sizeof(PyCompactUnicodeObject) */
	__u16 bytes_size;	 /* PyBytesObject.ob_size (2.7: PyStringObject) */
	__u16 bytes_data;	 /* PyBytesObject.ob_sval */
};

/* One address range of the process's code, absolute. */
struct pyproc_range {
	__u64 lo, hi;
};

/* A process running CPython. */
struct pyproc {
	struct pyproc_layout layout;
	char version[16];  /* "3.11.2" when known, else "3.11" */
	__u64 interp_head; /* address of the pointer to the first PyInterpreterState */
	/* The eval loop: each native frame in these ranges ran one eval-loop
	 * call, whose Python frames replace it when stacks are merged. */
	struct pyproc_range eval[PYPROC_EVAL_RANGES];
	__u32 neval;
	bool debug_offsets; /* the layout came from _Py_DebugOffsets */
	__u64 code_type; /* address of PyCode_Type (0 unknown): checks a code object */
};

/* Executables known not to run Python (by device and inode): an
 * executable whose name does not say Python is looked into once (its
 * .dynsym, a few reads), not once per process. At most 4096 files,
 * forgotten all at once past that. One thread at a time. */
struct pyproc_files;
struct pyproc_files *pyproc_files__new(void); /* NULL: -ENOMEM */
void pyproc_files__free(struct pyproc_files *f); /* accepts NULL */
/* Executables looked into (*@read) and found in @f (*@known); 0 for NULL. */
void pyproc_files__stats(const struct pyproc_files *f, __u64 *read, __u64 *known);

/* Find out whether process @pid (seen from @proc_root, NULL = "/proc")
 * runs CPython, from its snapshot @snap (NULL: read /proc/PID/maps; any
 * snapshot, also one with the executable mappings only). The interpreter
 * is a mapped libpython*, else the executable: by its name python*, or by
 * what it exports (Py_Initialize and an eval loop: a renamed copy, a
 * program linking CPython in), which @files (may be NULL: looked into each
 * time) remembers for executables that have none.
 * 0 and *@out filled; -ENOENT not Python; -ENOTSUP a Python whose version
 * profcap does not know (logged once per version, with the version);
 * other -errno when the process or its files could not be read. */
int pyproc__locate(const char *proc_root, int pid, const struct procsnap *snap,
		   struct pyproc_files *files, struct pyproc *out);

/* The CPython version of ELF file @fd from its exported symbols alone
 * (Py_Version, else the functions each version added): 0 and *@major,
 * *@minor; -ENOENT when it exports no interpreter or one before 3.6 but
 * 2.7; -ENOEXEC (not an x86-64 ELF file) or -errno. */
int pyproc__file_version(int fd, unsigned *major, unsigned *minor);

/* Read @len bytes at @addr of process @pid: process_vm_readv() (with
 * @proc_root NULL or "/proc"), else PROC/PID/mem. 0, -EFAULT (not
 * mapped, short), -ESRCH (gone) or -errno. */
int pyproc__read_mem(const char *proc_root, int pid, __u64 addr, void *buf, size_t len);

/* Fill @out (a copy of the table's layout for the same version, or zeros)
 * from the @n bytes of _Py_DebugOffsets at @raw: 0, -EINVAL when the
 * cookie, version or an offset does not read right (the caller keeps the
 * table), -ENOTSUP for a free-threaded build. Pure. */
int pyproc__debug_offsets(const void *raw, size_t n, unsigned major, unsigned minor,
			  struct pyproc_layout *out);
#define PYPROC_DEBUG_OFFSETS_MAX 1024 /* bytes of _Py_DebugOffsets read */

/* The address PyInterpreterState_Head() at link address @at loads from,
 * decoded from its first @n bytes of x86-64 code at @code ("mov
 * disp32(%rip),%rax", after an endbr64): 0 and *@target, or -ENOENT
 * when the code is not that. Pure. */
int pyproc__decode_head(const unsigned char *code, size_t n, __u64 at, __u64 *target);

/* The layout of CPython @major.@minor from the built-in tables, NULL when
 * unknown. */
const struct pyproc_layout *pyproc__layout(unsigned major, unsigned minor);

#endif
