/* jvmproc.h - is a process a HotSpot JVM, and how are its code cache,
 * compiled methods, methods and threads laid out: what a walker of Java
 * frames (docs/jvm.md, bpf/jvm.h) and the namer (symbolize/jvmframes.h)
 * need to know of it.
 *
 * Found from outside, without agents or flags: libjvm.so exports the
 * structure descriptions HotSpot publishes for its serviceability agent
 * (gHotSpotVMStructs, gHotSpotVMTypes, gHotSpotVMIntConstants,
 * gHotSpotVMLongConstants and the stride and offset of their entries) in
 * .dynsym. The tables are read from the live process, bounded; every
 * field profcap needs comes from them, so one reader serves JDK 17 to 25.
 * Java thread names come from the threads' java.lang.Thread objects.
 * Works through /proc/PID/root for other mount namespaces.
 */
#ifndef PROFCAP_JVMPROC_H
#define PROFCAP_JVMPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct procsnap;

#define JVMPROC_NONE 0xffff	  /* a field the JVM does not describe */
#define JVMPROC_MAX_HEAPS 4	  /* code heaps (non-nmethods, profiled, non-profiled) */
#define JVMPROC_MAX_ENTRIES 16384 /* entries read from one description table */
#define JVMPROC_MAX_FRAMES 63	  /* physical Java frames a walked stack carries */

/* jvmproc_layout.flags */
#define JVMPROC_BLOB_OFFSETS 0x1 /* CodeBlob code/data: int offsets (JDK 23+), not pointers */
#define JVMPROC_IMMUTABLE 0x2	 /* nmethod scopes in _immutable_data (JDK 23+), else in the blob */
#define JVMPROC_UNSIGNED5_X1 0x4 /* compressed streams exclude byte 0 (JDK 21+) */
#define JVMPROC_CMFLAGS_U32 0x8	 /* ConstMethod::_flags is 4 bytes (JDK 21+), else 2 */
#define JVMPROC_FCO_S16 0x10	 /* CodeBlob::_frame_complete_offset is 2 bytes */

/* Offsets (bytes) inside HotSpot's objects, from its own descriptions. */
struct jvmproc_layout {
	__u32 flags; /* JVMPROC_* */
	/* CodeHeap, VirtualSpace, GrowableArray, HeapBlock */
	__u16 heap_memory, heap_segmap, heap_log2_seg;
	__u16 vs_low_boundary, vs_high_boundary;
	__u16 garray_len, garray_data;
	__u16 heapblock_size; /* sizeof(HeapBlock): the blob follows it */
	/* CodeBlob */
	__u16 blob_name, blob_size, blob_frame_complete, blob_frame_size;
	__u16 blob_code_begin; /* address (pointer) or int offset (JVMPROC_BLOB_OFFSETS) */
	__u16 blob_code_end;   /* address, or JVMPROC_NONE */
	__u16 blob_data_offset;
	__u16 blob_kind;		       /* CodeBlobKind (JDK 23+), JVMPROC_NONE before */
	__u16 blob_mutable, blob_mutable_size; /* _mutable_data and its size (JDK 25+) */
	__u16 blob_reloc_size; /* _relocation_size (int): first in the mutable data */
	/* nmethod (CompiledMethod's fields included) */
	__u16 nm_method, nm_compile_id, nm_entry_bci, nm_comp_level;
	__u16 nm_scopes_pcs;	 /* int offset: from the blob, or from _immutable_data */
	__u16 nm_scopes_pcs_end; /* their end: _dependencies_offset or _scopes_data_offset */
	__u16 nm_scopes_data; /* pointer (_scopes_data_begin) or int offset from _immutable_data */
	__u16 nm_metadata;    /* int (from the blob) or u16 (from the data section) offset */
	__u16 nm_immutable;   /* _immutable_data pointer (JVMPROC_IMMUTABLE) */
	__u16 nm_immutable_size; /* _immutable_data_size (int) */
	__u16 nm_nul_chk;	 /* _nul_chk_table_offset (JDK 23+: locates nm_metadata) */
	__u16 nm_size;		 /* sizeof(nmethod): a blob smaller than it is no nmethod */
	/* StubQueue (the interpreter's codelets) */
	__u16 sq_buffer, sq_limit;
	/* PcDesc */
	__u16 pcd_pc_offset, pcd_scope_decode, pcd_size;
	/* Method, ConstMethod, ConstantPool, Klass, Symbol */
	__u16 m_const_method, m_size;
	__u16 cm_constants, cm_flags, cm_code_size, cm_name_index, cm_signature_index, cm_size;
	__u16 cm_const_size;	  /* _constMethod_size (int, words): bounds the line table */
	__u32 cm_has_linenumbers; /* bit of ConstMethod's flags */
	__u16 cp_holder, cp_source_file, cp_size;
	__u16 klass_name;
	__u16 sym_length, sym_body;
	/* threads */
	__u16 tl_length, tl_threads;	       /* ThreadsList */
	__u16 jt_osthread;		       /* JavaThread (or Thread) _osthread */
	__u16 jt_anchor, jt_state;	       /* JavaThread _anchor, _thread_state */
	__u16 anchor_sp, anchor_pc, anchor_fp; /* JavaFrameAnchor _last_Java_* */
	__u16 os_thread_id;		       /* OSThread _thread_id (kernel tid) */
	/* Java thread names (optional): java.lang.Thread.name through the
	 * thread's oop, its class's fields and the String */
	__u16 jt_thread_obj, oh_obj;	 /* JavaThread _threadObj (OopHandle), its oop* */
	__u16 oop_klass;		 /* oopDesc _metadata._compressed_klass */
	__u16 klass_super, ik_constants; /* Klass _super, InstanceKlass _constants */
	__u16 ik_fields, ik_java_fields; /* JDK 17: _fields (Array<u2>), _java_fields_count */
	__u16 ik_fieldinfo_stream;	 /* JDK 21+: _fieldinfo_stream (Array<u1>) */
	__u16 array_data;		 /* Array<T> _data */
	__u16 flag_name, flag_addr, flag_size; /* JVMFlag */
	__u32 fi_slots, fi_name, fi_low, fi_high, fi_tag_size, fi_tag_offset, acc_internal;
	__u64 a_oop_base, a_oop_shift, a_klass_base, a_klass_shift, a_flags, a_num_flags;
	/* x86-64 interpreter frames: slots relative to rbp, in bytes */
	__s16 interp_method, interp_bcp;
	/* static fields, absolute (the tables hold relocated addresses) */
	__u64 a_heaps, a_low_bound, a_high_bound, a_interp_code, a_call_stub_ret;
	__u64 a_thread_list, a_vm_major;
	__s32 invocation_entry_bci;
	__u32 have_jvmci;  /* INCLUDE_JVMCI */
	__s32 int_last_sp; /* frame::interpreter_frame_last_sp_offset (words) */
};

/* One code heap, absolute. */
struct jvmproc_heap {
	__u64 lo, hi;	/* the heap's reserved range */
	__u64 segmap;	/* its segment map: one byte per segment */
	__u32 log2_seg; /* segment size */
};

/* A process running HotSpot. */
struct jvmproc {
	struct jvmproc_layout layout;
	unsigned major;		/* Java feature release: 17, 25 */
	__u64 bias;		/* load bias of libjvm.so */
	__u64 code_lo, code_hi; /* CodeCache bounds: every compiled or interpreted pc */
	struct jvmproc_heap heaps[JVMPROC_MAX_HEAPS];
	__u32 nheaps;
	__u64 interp_lo, interp_hi; /* the template interpreter's code */
	__u64 call_stub_ret;	    /* StubRoutines::_call_stub_return_address */
	__u64 thread_list;	    /* address of ThreadsSMRSupport::_java_thread_list */
	__u64 jvm_lo, jvm_hi;	    /* libjvm.so's executable mapping */
	bool compressed_oops;	    /* -XX:+UseCompressedOops (the flag's value) */
	bool names;		    /* Java thread names can be read */
};

/* Find out whether process @pid (seen from @proc_root, NULL = "/proc")
 * runs HotSpot, from its snapshot @snap (NULL: read /proc/PID/maps).
 * 0 and *@out filled; -ENOENT not a JVM; -EAGAIN a JVM still starting
 * (no code cache yet: try again later); -ENOTSUP a JVM whose descriptions
 * lack a field profcap needs (logged once); other -errno when the process
 * or its files could not be read. */
int jvmproc__locate(const char *proc_root, int pid, const struct procsnap *snap,
		    struct jvmproc *out);

/* The descriptions, entry by entry, into a layout (pure, for tests and
 * the reader): a field of @type with C type @tstr (may be NULL; offset, or
 * address when static), a type's size, an int or long constant. Names not
 * needed are ignored. */
void jvmproc__field(struct jvmproc_layout *l, const char *type, const char *field, const char *tstr,
		    __u64 offset, __u64 address);
void jvmproc__type(struct jvmproc_layout *l, const char *type, __u64 size);
void jvmproc__constant(struct jvmproc_layout *l, const char *name, __s64 value);
/* Start a layout (every field JVMPROC_NONE), and after the entries derive
 * what is implied (flags, interpreter slots, JDK 23+ offsets) for a JVM
 * of release @major. 0, or -ENOTSUP naming the first missing field in
 * *@missing (may be NULL). */
void jvmproc__layout_init(struct jvmproc_layout *l);
int jvmproc__layout_finish(struct jvmproc_layout *l, unsigned major, const char **missing);

/* The heap holding @pc, NULL when none. */
const struct jvmproc_heap *jvmproc__heap(const struct jvmproc *jp, __u64 pc);

/* Walk a code heap's segment map back from segment *@idx to the first
 * segment of its block, within the @n bytes at @win, those of segments
 * @first to @first + @n - 1: HotSpot marks a block's first segment 0 and
 * each later one with its distance back (at most 254 a step; 0xff is
 * free space). 0 and *@idx the block's first segment; -ENOENT (free
 * space, a bad map); -ERANGE with *@idx where to go on below @first.
 * Pure; at most @n steps. */
int jvmproc__segmap_walk(const __u8 *win, __u64 first, size_t n, __u64 *idx);

/* The CodeBlob holding @pc in process @pid (0 when @pc is in no heap or
 * in free space): its address into *@blob. 0 or -errno. */
int jvmproc__find_blob(const char *proc_root, int pid, const struct jvmproc *jp, __u64 pc,
		       __u64 *blob);

/* Java thread ids: for each JavaThread of the process (at most @cap),
 * its kernel thread id into @tids and its JavaThread address into @threads
 * (may be NULL). Returns how many, or -errno. */
int jvmproc__threads(const char *proc_root, int pid, const struct jvmproc *jp, int *tids,
		     __u64 *threads, size_t cap);

/* The name of JavaThread @thread (java.lang.Thread.name) as UTF-8 into
 * @out (@cap bytes, NUL-terminated, cut at a character). 0, -ENOTSUP when
 * this JVM's names cannot be read, -ENOENT (no Thread object yet), or a
 * read error. At most JVMPROC_MAX_NAME characters. */
int jvmproc__thread_name(const char *proc_root, int pid, const struct jvmproc *jp, __u64 thread,
			 char *out, size_t cap);
#define JVMPROC_MAX_NAME 256

#endif
