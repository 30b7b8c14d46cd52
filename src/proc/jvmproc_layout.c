/* jvmproc_layout.c - HotSpot's structure descriptions, entry by entry,
 * into the offsets profcap reads (pure: the tests feed it by hand). */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "proc/jvmproc.h"

/* A described field profcap reads: a u16 offset in the layout, or (static
 * fields) a u64 address. */
struct want {
	const char *type, *field;
	unsigned short member; /* offsetof(struct jvmproc_layout, ...) */
	unsigned char is_addr;
	unsigned char flag; /* JVMPROC_* set when the entry is present */
};

#define OFF(t, f, m) {t, f, offsetof(struct jvmproc_layout, m), 0, 0}
#define OFF_F(t, f, m, fl) {t, f, offsetof(struct jvmproc_layout, m), 0, fl}
#define ADDR(t, f, m) {t, f, offsetof(struct jvmproc_layout, m), 1, 0}

static const struct want wants[] = {
	OFF("CodeHeap", "_memory", heap_memory),
	OFF("CodeHeap", "_segmap", heap_segmap),
	OFF("CodeHeap", "_log2_segment_size", heap_log2_seg),
	OFF("VirtualSpace", "_low_boundary", vs_low_boundary),
	OFF("VirtualSpace", "_high_boundary", vs_high_boundary),
	OFF("GrowableArrayBase", "_len", garray_len),
	OFF("GrowableArray<int>", "_data", garray_data),
	OFF("CodeBlob", "_name", blob_name),
	OFF("CodeBlob", "_size", blob_size),
	OFF("CodeBlob", "_frame_complete_offset", blob_frame_complete),
	OFF("CodeBlob", "_frame_size", blob_frame_size),
	OFF("CodeBlob", "_code_begin", blob_code_begin),
	OFF_F("CodeBlob", "_code_offset", blob_code_begin, JVMPROC_BLOB_OFFSETS),
	OFF("CodeBlob", "_code_end", blob_code_end),
	OFF("CodeBlob", "_data_offset", blob_data_offset),
	OFF("CodeBlob", "_kind", blob_kind),
	OFF("CodeBlob", "_mutable_data", blob_mutable),
	OFF("CodeBlob", "_mutable_data_size", blob_mutable_size),
	OFF("CodeBlob", "_relocation_size", blob_reloc_size),
	OFF("CompiledMethod", "_method", nm_method),
	OFF("nmethod", "_method", nm_method),
	OFF("nmethod", "_compile_id", nm_compile_id),
	OFF("nmethod", "_entry_bci", nm_entry_bci),
	OFF("nmethod", "_comp_level", nm_comp_level),
	OFF("nmethod", "_scopes_pcs_offset", nm_scopes_pcs),
	OFF("nmethod", "_dependencies_offset", nm_scopes_pcs_end),
	OFF("CompiledMethod", "_scopes_data_begin", nm_scopes_data),
	OFF("nmethod", "_scopes_data_offset", nm_scopes_data),
	OFF("nmethod", "_metadata_offset", nm_metadata),
	OFF_F("nmethod", "_immutable_data", nm_immutable, JVMPROC_IMMUTABLE),
	OFF("nmethod", "_immutable_data_size", nm_immutable_size),
	OFF("nmethod", "_nul_chk_table_offset", nm_nul_chk),
	OFF("StubQueue", "_stub_buffer", sq_buffer),
	OFF("StubQueue", "_buffer_limit", sq_limit),
	OFF("PcDesc", "_pc_offset", pcd_pc_offset),
	OFF("PcDesc", "_scope_decode_offset", pcd_scope_decode),
	OFF("Method", "_constMethod", m_const_method),
	OFF("ConstMethod", "_constants", cm_constants),
	OFF("ConstMethod", "_flags", cm_flags),
	OFF_F("ConstMethod", "_flags._flags", cm_flags, JVMPROC_CMFLAGS_U32),
	OFF("ConstMethod", "_code_size", cm_code_size),
	OFF("ConstMethod", "_constMethod_size", cm_const_size),
	OFF("ConstMethod", "_name_index", cm_name_index),
	OFF("ConstMethod", "_signature_index", cm_signature_index),
	OFF("ConstantPool", "_pool_holder", cp_holder),
	OFF("ConstantPool", "_source_file_name_index", cp_source_file),
	OFF("Klass", "_name", klass_name),
	OFF("Symbol", "_length", sym_length),
	OFF("Symbol", "_body", sym_body),
	OFF("ThreadsList", "_length", tl_length),
	OFF("ThreadsList", "_threads", tl_threads),
	OFF("Thread", "_osthread", jt_osthread),
	OFF("JavaThread", "_osthread", jt_osthread),
	OFF("JavaThread", "_anchor", jt_anchor),
	OFF("JavaThread", "_thread_state", jt_state),
	OFF("JavaFrameAnchor", "_last_Java_sp", anchor_sp),
	OFF("JavaFrameAnchor", "_last_Java_pc", anchor_pc),
	OFF("JavaFrameAnchor", "_last_Java_fp", anchor_fp),
	OFF("OSThread", "_thread_id", os_thread_id),
	OFF("JavaThread", "_threadObj", jt_thread_obj),
	OFF("OopHandle", "_obj", oh_obj),
	OFF("oopDesc", "_metadata._compressed_klass", oop_klass),
	OFF("Klass", "_super", klass_super),
	OFF("InstanceKlass", "_constants", ik_constants),
	OFF("InstanceKlass", "_fields", ik_fields),
	OFF("InstanceKlass", "_java_fields_count", ik_java_fields),
	OFF("InstanceKlass", "_fieldinfo_stream", ik_fieldinfo_stream),
	OFF("Array<u2>", "_data", array_data),
	OFF("JVMFlag", "_name", flag_name),
	OFF("JVMFlag", "_addr", flag_addr),
	ADDR("CompressedOops", "_narrow_oop._base", a_oop_base),
	ADDR("CompressedOops", "_base", a_oop_base),
	ADDR("CompressedOops", "_narrow_oop._shift", a_oop_shift),
	ADDR("CompressedOops", "_shift", a_oop_shift),
	ADDR("CompressedKlassPointers", "_narrow_klass._base", a_klass_base),
	ADDR("CompressedKlassPointers", "_base", a_klass_base),
	ADDR("CompressedKlassPointers", "_narrow_klass._shift", a_klass_shift),
	ADDR("CompressedKlassPointers", "_shift", a_klass_shift),
	ADDR("JVMFlag", "flags", a_flags),
	ADDR("JVMFlag", "numFlags", a_num_flags),
	ADDR("CodeCache", "_heaps", a_heaps),
	ADDR("CodeCache", "_low_bound", a_low_bound),
	ADDR("CodeCache", "_high_bound", a_high_bound),
	ADDR("AbstractInterpreter", "_code", a_interp_code),
	ADDR("StubRoutines", "_call_stub_return_address", a_call_stub_ret),
	ADDR("ThreadsSMRSupport", "_java_thread_list", a_thread_list),
	ADDR("Abstract_VM_Version", "_vm_major_version", a_vm_major),
};

void jvmproc__layout_init(struct jvmproc_layout *l)
{
	size_t i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
		if (!wants[i].is_addr)
			*(__u16 *)((char *)l + wants[i].member) = JVMPROC_NONE;
	l->heapblock_size = l->nm_size = l->pcd_size = JVMPROC_NONE;
	l->m_size = l->cm_size = l->cp_size = l->flag_size = JVMPROC_NONE;
	l->fi_slots = 6; /* JDK 17's FieldInfo: six u2 (described where it applies) */
	l->invocation_entry_bci = -1;
	l->int_last_sp = 0;
}

void jvmproc__field(struct jvmproc_layout *l, const char *type, const char *field,
		    const char *tstr, __u64 offset, __u64 address)
{
	size_t i;

	/* the one field whose width changed */
	if (tstr && !strcmp(type, "CodeBlob") && !strcmp(field, "_frame_complete_offset") &&
	    !strcmp(tstr, "int16_t"))
		l->flags |= JVMPROC_FCO_S16;

	for (i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];

		if (strcmp(w->type, type) || strcmp(w->field, field))
			continue;
		if (w->is_addr) {
			*(__u64 *)((char *)l + w->member) = address;
		} else {
			if (offset >= JVMPROC_NONE)
				return; /* no object of ours is that large */
			*(__u16 *)((char *)l + w->member) = (__u16)offset;
		}
		l->flags |= w->flag;
		return;
	}
}

void jvmproc__type(struct jvmproc_layout *l, const char *type, __u64 size)
{
	static const struct {
		const char *type;
		unsigned short member;
	} sizes[] = {
		{"HeapBlock", offsetof(struct jvmproc_layout, heapblock_size)},
		{"nmethod", offsetof(struct jvmproc_layout, nm_size)},
		{"PcDesc", offsetof(struct jvmproc_layout, pcd_size)},
		{"Method", offsetof(struct jvmproc_layout, m_size)},
		{"ConstMethod", offsetof(struct jvmproc_layout, cm_size)},
		{"ConstantPool", offsetof(struct jvmproc_layout, cp_size)},
		{"JVMFlag", offsetof(struct jvmproc_layout, flag_size)},
	};
	size_t i;

	if (size >= JVMPROC_NONE)
		return;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(sizes[i].type, type))
			*(__u16 *)((char *)l + sizes[i].member) = (__u16)size;
}

void jvmproc__constant(struct jvmproc_layout *l, const char *name, __s64 value)
{
	if (!strcmp(name, "ConstMethod::_has_linenumber_table") ||
	    !strcmp(name, "ConstMethodFlags::_misc_has_linenumber_table"))
		l->cm_has_linenumbers = (__u32)value;
	else if (!strcmp(name, "InvocationEntryBci"))
		l->invocation_entry_bci = (__s32)value;
	else if (!strcmp(name, "INCLUDE_JVMCI"))
		l->have_jvmci = value != 0;
	else if (!strcmp(name, "frame::interpreter_frame_last_sp_offset"))
		l->int_last_sp = (__s32)value;
	else if (!strcmp(name, "FieldInfo::field_slots"))
		l->fi_slots = (__u32)value;
	else if (!strcmp(name, "FieldInfo::name_index_offset"))
		l->fi_name = (__u32)value;
	else if (!strcmp(name, "FieldInfo::low_packed_offset"))
		l->fi_low = (__u32)value;
	else if (!strcmp(name, "FieldInfo::high_packed_offset"))
		l->fi_high = (__u32)value;
	else if (!strcmp(name, "FIELDINFO_TAG_SIZE"))
		l->fi_tag_size = (__u32)value;
	else if (!strcmp(name, "FIELDINFO_TAG_OFFSET"))
		l->fi_tag_offset = (__u32)value;
	else if (!strcmp(name, "JVM_ACC_FIELD_INTERNAL"))
		l->acc_internal = (__u32)value;
}

/* The first required field still missing, NULL when all are there. */
static const char *first_missing(const struct jvmproc_layout *l)
{
	static const struct {
		const char *name;
		unsigned short member;
	} need[] = {
#define NEED(m) {#m, offsetof(struct jvmproc_layout, m)}
		NEED(heap_memory), NEED(heap_segmap), NEED(heap_log2_seg), NEED(vs_low_boundary),
		NEED(vs_high_boundary), NEED(garray_len), NEED(garray_data), NEED(heapblock_size),
		NEED(blob_name), NEED(blob_size), NEED(blob_frame_complete), NEED(blob_frame_size),
		NEED(blob_code_begin), NEED(blob_data_offset), NEED(nm_method), NEED(nm_compile_id),
		NEED(nm_scopes_pcs), NEED(nm_scopes_pcs_end), NEED(nm_scopes_data), NEED(nm_metadata),
		NEED(nm_size), NEED(sq_buffer), NEED(sq_limit), NEED(pcd_pc_offset),
		NEED(pcd_scope_decode), NEED(pcd_size), NEED(m_const_method), NEED(cm_constants),
		NEED(cm_flags), NEED(cm_code_size), NEED(cm_name_index), NEED(cm_signature_index),
		NEED(cm_size), NEED(cm_const_size), NEED(cp_holder), NEED(cp_source_file), NEED(cp_size),
		NEED(klass_name), NEED(sym_length), NEED(sym_body),
#undef NEED
	};
	size_t i;

	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (*(const __u16 *)((const char *)l + need[i].member) == JVMPROC_NONE)
			return need[i].name;
	if (!l->a_heaps || !l->a_low_bound || !l->a_high_bound)
		return "CodeCache statics";
	if ((l->flags & JVMPROC_IMMUTABLE) && l->nm_immutable_size == JVMPROC_NONE)
		return "nm_immutable_size";
	if (!l->a_interp_code)
		return "AbstractInterpreter::_code";
	if (!l->cm_has_linenumbers)
		return "has_linenumber_table";
	if (l->int_last_sp >= 0)
		return "frame::interpreter_frame_last_sp_offset";
	return NULL;
}

int jvmproc__layout_finish(struct jvmproc_layout *l, unsigned major, const char **missing)
{
	const char *m;

	/* JDK 23+ keeps the metadata table's u16 offset just before the
	 * null-check table's, after _jvmci_data_offset in JVMCI builds; it is
	 * not described, so it is placed from its neighbour (checked at each
	 * use: the outermost scope read must be the nmethod's own method). */
	if ((l->flags & JVMPROC_IMMUTABLE) && l->nm_metadata == JVMPROC_NONE &&
	    l->nm_nul_chk != JVMPROC_NONE && l->nm_nul_chk >= 4)
		l->nm_metadata = (__u16)(l->nm_nul_chk - (l->have_jvmci ? 4 : 2));
	/* with immutable data, the pcs end where the scopes data begin */
	if ((l->flags & JVMPROC_IMMUTABLE) && l->nm_scopes_pcs_end == JVMPROC_NONE)
		l->nm_scopes_pcs_end = l->nm_scopes_data;
	if (major >= 21)
		l->flags |= JVMPROC_UNSIGNED5_X1;
	m = first_missing(l);
	if (m) {
		if (missing)
			*missing = m;
		return -ENOTSUP;
	}
	/* x86-64 interpreter frames: below the saved rbp come sender_sp,
	 * last_sp, method, mirror, mdp, cache, locals, bcp (one word each) */
	l->interp_method = (__s16)((l->int_last_sp - 1) * 8);
	l->interp_bcp = (__s16)((l->int_last_sp - 6) * 8);
	return 0;
}
