#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "proc/elfsyms.h"
#include "proc/pfile.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/v8proc.h"

/* ---- the constants asked for (names without "v8dbg_") ---- */

enum {
	C_TAGGED_SIZE,
	C_SMI_SHIFT,
	C_SMI_TAG_MASK,
	C_HEAP_TAG,
	C_HEAP_TAG_MASK,
	C_FP_MARKER,
	C_FP_FUNCTION,
	C_FP_BYTECODE_ARRAY,
	C_FP_BYTECODE_OFFSET,
	C_FT_ENTRY,
	C_FT_CONSTRUCT_ENTRY,
	C_FT_EXIT,
	C_FT_BUILTIN_EXIT,
	C_FT_INTERPRETED,
	C_FT_BASELINE,
	C_FT_MAGLEV,
	C_FT_TURBOFAN,
	C_FT_OPTIMIZED, /* the name of TurbofanFrame before V8 11 */
	C_FT_STUB,
	C_FT_INTERNAL,
	C_FT_CONSTRUCT,
	C_FT_BUILTIN,
	C_OBJ_MAP,
	C_MAP_TYPE,
	C_JSF_SHARED,
	C_JSF_CODE,
	C_JSF_FEEDBACK,
	C_JSF_PROTO,
	C_SFI_DATA,
	C_SFI_NAME,
	C_SFI_SCRIPT,
	C_SFI_SCRIPT_OBJ, /* script_or_debug_info__Object in older builds */
	C_SFI_LENGTH,
	C_SFI_PARAMS,
	C_SFI_TOKEN,
	C_SCRIPT_NAME,
	C_SCRIPT_SOURCE,
	C_SCRIPT_LINE_ENDS,
	C_FIXED_LENGTH,
	C_FIXED_DATA,
	C_BYTECODE_DATA,
	C_BYTECODE_POSITIONS,
	C_STR_LENGTH,
	C_SEQ1_CHARS,
	C_SEQ2_CHARS,
	C_CONS_FIRST,
	C_CONS_SECOND,
	C_THIN_ACTUAL,
	C_SLICED_PARENT,
	C_SLICED_OFFSET,
	C_SCOPE_FIRST_VARS,
	C_SCOPE_NCONTEXTLOCALS,
	C_CODE_BYTECODE,
	C_T_SFI,
	C_T_SCRIPT,
	C_T_BYTECODE,
	C_T_FIXED,
	C_T_BYTE_ARRAY,
	C_T_SCOPE_INFO,
	C_T_CODE,
	C_FIRST_NONSTRING,
	C_STR_REPR_MASK,
	C_STR_ENC_MASK,
	C_STR_SEQ,
	C_STR_CONS,
	C_STR_SLICED,
	C_STR_THIN,
	C_STR_ONEBYTE,
	C_N
};

/* Values of symbols in .bss are 0: the description marks them found. */
static const struct v8proc_const wanted[C_N] = {
	[C_TAGGED_SIZE] = {"TaggedSize"},
	[C_SMI_SHIFT] = {"SmiShiftSize"},
	[C_SMI_TAG_MASK] = {"SmiTagMask"},
	[C_HEAP_TAG] = {"HeapObjectTag"},
	[C_HEAP_TAG_MASK] = {"HeapObjectTagMask"},
	[C_FP_MARKER] = {"off_fp_context_or_frame_type"},
	[C_FP_FUNCTION] = {"off_fp_function"},
	[C_FP_BYTECODE_ARRAY] = {"off_fp_bytecode_array"},
	[C_FP_BYTECODE_OFFSET] = {"off_fp_bytecode_offset"},
	[C_FT_ENTRY] = {"frametype_EntryFrame"},
	[C_FT_CONSTRUCT_ENTRY] = {"frametype_ConstructEntryFrame"},
	[C_FT_EXIT] = {"frametype_ExitFrame"},
	[C_FT_BUILTIN_EXIT] = {"frametype_BuiltinExitFrame"},
	[C_FT_INTERPRETED] = {"frametype_InterpretedFrame"},
	[C_FT_BASELINE] = {"frametype_BaselineFrame"},
	[C_FT_MAGLEV] = {"frametype_MaglevFrame"},
	[C_FT_TURBOFAN] = {"frametype_TurbofanFrame"},
	[C_FT_OPTIMIZED] = {"frametype_OptimizedFrame"},
	[C_FT_STUB] = {"frametype_StubFrame"},
	[C_FT_INTERNAL] = {"frametype_InternalFrame"},
	[C_FT_CONSTRUCT] = {"frametype_ConstructFrame"},
	[C_FT_BUILTIN] = {"frametype_BuiltinFrame"},
	[C_OBJ_MAP] = {"class_HeapObject__map__Map"},
	[C_MAP_TYPE] = {"class_Map__instance_type__uint16_t"},
	[C_JSF_SHARED] = {"class_JSFunction__shared__SharedFunctionInfo"},
	[C_JSF_CODE] = {"class_JSFunction__code__Code"},
	[C_JSF_FEEDBACK] = {"class_JSFunction__raw_feedback_cell__FeedbackCell"},
	[C_JSF_PROTO] = {"class_JSFunction__prototype_or_initial_map__HeapObject"},
	[C_SFI_DATA] = {"class_SharedFunctionInfo__function_data__Object"},
	[C_SFI_NAME] = {"class_SharedFunctionInfo__name_or_scope_info__Object"},
	[C_SFI_SCRIPT] = {"class_SharedFunctionInfo__script_or_debug_info__HeapObject"},
	[C_SFI_SCRIPT_OBJ] = {"class_SharedFunctionInfo__script_or_debug_info__Object"},
	[C_SFI_LENGTH] = {"class_SharedFunctionInfo__length__uint16_t"},
	[C_SFI_PARAMS] = {"class_SharedFunctionInfo__internal_formal_parameter_count__uint16_t"},
	[C_SFI_TOKEN] = {"class_SharedFunctionInfo__raw_function_token_offset__int16_t"},
	[C_SCRIPT_NAME] = {"class_Script__name__Object"},
	[C_SCRIPT_SOURCE] = {"class_Script__source__Object"},
	[C_SCRIPT_LINE_ENDS] = {"class_Script__line_ends__Object"},
	[C_FIXED_LENGTH] = {"class_FixedArrayBase__length__SMI"},
	[C_FIXED_DATA] = {"class_FixedArray__data__uintptr_t"},
	[C_BYTECODE_DATA] = {"class_BytecodeArray__data__uintptr_t"},
	[C_BYTECODE_POSITIONS] = {"class_BytecodeArray__source_position_table__Object"},
	[C_STR_LENGTH] = {"class_String__length__int32_t"},
	[C_SEQ1_CHARS] = {"class_SeqOneByteString__chars__char"},
	[C_SEQ2_CHARS] = {"class_SeqTwoByteString__chars__char"},
	[C_CONS_FIRST] = {"class_ConsString__first__String"},
	[C_CONS_SECOND] = {"class_ConsString__second__String"},
	[C_THIN_ACTUAL] = {"class_ThinString__actual__String"},
	[C_SLICED_PARENT] = {"class_SlicedString__parent__String"},
	[C_SLICED_OFFSET] = {"class_SlicedString__offset__SMI"},
	[C_SCOPE_FIRST_VARS] = {"scopeinfo_idx_first_vars"},
	[C_SCOPE_NCONTEXTLOCALS] = {"scopeinfo_idx_ncontextlocals"},
	[C_CODE_BYTECODE] = {"class_Code__bytecode_or_interpreter_data__HeapObject"},
	[C_T_SFI] = {"type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE"},
	[C_T_SCRIPT] = {"type_Script__SCRIPT_TYPE"},
	[C_T_BYTECODE] = {"type_BytecodeArray__BYTECODE_ARRAY_TYPE"},
	[C_T_FIXED] = {"type_FixedArray__FIXED_ARRAY_TYPE"},
	[C_T_BYTE_ARRAY] = {"type_ByteArray__BYTE_ARRAY_TYPE"},
	[C_T_SCOPE_INFO] = {"type_ScopeInfo__SCOPE_INFO_TYPE"},
	[C_T_CODE] = {"type_Code__CODE_TYPE"},
	[C_FIRST_NONSTRING] = {"FirstNonstringType"},
	[C_STR_REPR_MASK] = {"StringRepresentationMask"},
	[C_STR_ENC_MASK] = {"StringEncodingMask"},
	[C_STR_SEQ] = {"SeqStringTag"},
	[C_STR_CONS] = {"ConsStringTag"},
	[C_STR_SLICED] = {"SlicedStringTag"},
	[C_STR_THIN] = {"ThinStringTag"},
	[C_STR_ONEBYTE] = {"OneByteStringTag"},
};

const struct v8proc_const *v8proc__wanted(size_t *n)
{
	*n = C_N;
	return wanted;
}

/* ---- the layout (pure) ---- */

/* A field offset: a constant in 0..limit, else V8PROC_NONE. */
static __u16 off(const struct v8proc_const *c, int i, int limit)
{
	if (!c[i].found || c[i].value < 0 || c[i].value > limit)
		return V8PROC_NONE;
	return (__u16)c[i].value;
}

static __u8 small(const struct v8proc_const *c, int i)
{
	return c[i].found && c[i].value >= 0 && c[i].value < 0xff ? (__u8)c[i].value : 0xff;
}

static __s16 fp_slot(const struct v8proc_const *c, int i)
{
	/* frame slots are words below the frame pointer */
	if (!c[i].found || c[i].value >= 0 || c[i].value < -256 || c[i].value % 8)
		return 0;
	return (__s16)c[i].value;
}

static void frame_types(const struct v8proc_const *c, struct v8proc_layout *l)
{
	static const int map[V8PROC_FT_N] = {
		[V8PROC_FT_ENTRY] = C_FT_ENTRY,
		[V8PROC_FT_CONSTRUCT_ENTRY] = C_FT_CONSTRUCT_ENTRY,
		[V8PROC_FT_EXIT] = C_FT_EXIT,
		[V8PROC_FT_BUILTIN_EXIT] = C_FT_BUILTIN_EXIT,
		[V8PROC_FT_INTERPRETED] = C_FT_INTERPRETED,
		[V8PROC_FT_BASELINE] = C_FT_BASELINE,
		[V8PROC_FT_MAGLEV] = C_FT_MAGLEV,
		[V8PROC_FT_TURBOFAN] = C_FT_TURBOFAN,
		[V8PROC_FT_STUB] = C_FT_STUB,
		[V8PROC_FT_INTERNAL] = C_FT_INTERNAL,
		[V8PROC_FT_CONSTRUCT] = C_FT_CONSTRUCT,
		[V8PROC_FT_BUILTIN] = C_FT_BUILTIN,
	};
	int t;

	for (t = 0; t < V8PROC_FT_N; t++)
		l->frametype[t] = small(c, map[t]);
	if (l->frametype[V8PROC_FT_TURBOFAN] == 0xff)
		l->frametype[V8PROC_FT_TURBOFAN] = small(c, C_FT_OPTIMIZED);
}

static void objects(const struct v8proc_const *c, struct v8proc_layout *l)
{
	const int lim = 512;

	l->obj_map = off(c, C_OBJ_MAP, lim);
	l->map_instance_type = off(c, C_MAP_TYPE, lim);
	l->jsfunc_shared = off(c, C_JSF_SHARED, lim);
	l->jsfunc_code = off(c, C_JSF_CODE, lim);
	if (l->jsfunc_code == V8PROC_NONE && c[C_JSF_FEEDBACK].found && c[C_JSF_PROTO].found &&
	    c[C_JSF_PROTO].value - c[C_JSF_FEEDBACK].value == 2 * l->tagged_size)
		l->jsfunc_code = (__u16)(c[C_JSF_FEEDBACK].value + l->tagged_size);
	l->sfi_function_data = off(c, C_SFI_DATA, lim);
	l->sfi_name_or_scope_info = off(c, C_SFI_NAME, lim);
	l->sfi_script = off(c, C_SFI_SCRIPT, lim);
	if (l->sfi_script == V8PROC_NONE)
		l->sfi_script = off(c, C_SFI_SCRIPT_OBJ, lim);
	l->sfi_length = off(c, C_SFI_LENGTH, lim);
	l->sfi_param_count = off(c, C_SFI_PARAMS, lim);
	l->sfi_token_offset = off(c, C_SFI_TOKEN, lim);
	l->script_name = off(c, C_SCRIPT_NAME, lim);
	l->script_source = off(c, C_SCRIPT_SOURCE, lim);
	l->script_line_ends = off(c, C_SCRIPT_LINE_ENDS, lim);
	l->fixed_length = off(c, C_FIXED_LENGTH, lim);
	l->fixed_data = off(c, C_FIXED_DATA, lim);
	l->bytecode_data = off(c, C_BYTECODE_DATA, lim);
	l->bytecode_positions = off(c, C_BYTECODE_POSITIONS, lim);
	/* constant_pool, handler_table, source_position_table follow the
	 * FixedArrayBase header */
	if (l->bytecode_positions == V8PROC_NONE && l->fixed_length != V8PROC_NONE)
		l->bytecode_positions = (__u16)(l->fixed_length + 3 * l->tagged_size);
	l->str_length = off(c, C_STR_LENGTH, lim);
	l->seq_chars = off(c, C_SEQ1_CHARS, lim);
	if (off(c, C_SEQ2_CHARS, lim) != l->seq_chars)
		l->seq_chars = V8PROC_NONE; /* one offset for both widths */
	l->cons_first = off(c, C_CONS_FIRST, lim);
	l->cons_second = off(c, C_CONS_SECOND, lim);
	l->thin_actual = off(c, C_THIN_ACTUAL, lim);
	l->sliced_parent = off(c, C_SLICED_PARENT, lim);
	l->sliced_offset = off(c, C_SLICED_OFFSET, lim);
	l->code_bytecode = off(c, C_CODE_BYTECODE, lim);
	l->scope_first_vars = small(c, C_SCOPE_FIRST_VARS);
	l->scope_ncontextlocals = small(c, C_SCOPE_NCONTEXTLOCALS);
}

static void types(const struct v8proc_const *c, struct v8proc_layout *l)
{
	const int lim = 0xfffe;

	l->type_sfi = off(c, C_T_SFI, lim);
	l->type_script = off(c, C_T_SCRIPT, lim);
	l->type_bytecode = off(c, C_T_BYTECODE, lim);
	l->type_fixed_array = off(c, C_T_FIXED, lim);
	l->type_byte_array = off(c, C_T_BYTE_ARRAY, lim);
	l->type_scope_info = off(c, C_T_SCOPE_INFO, lim);
	l->type_code = off(c, C_T_CODE, lim);
	l->type_first_nonstring = off(c, C_FIRST_NONSTRING, lim);
	l->str_repr_mask = small(c, C_STR_REPR_MASK);
	l->str_enc_mask = small(c, C_STR_ENC_MASK);
	l->str_seq = small(c, C_STR_SEQ);
	l->str_cons = small(c, C_STR_CONS);
	l->str_sliced = small(c, C_STR_SLICED);
	l->str_thin = small(c, C_STR_THIN);
	l->str_onebyte = small(c, C_STR_ONEBYTE);
}

int v8proc__layout(const struct v8proc_const *c, size_t n, struct v8proc_layout *out)
{
	struct v8proc_layout l;

	memset(&l, 0, sizeof(l));
	if (n != C_N)
		return -EINVAL;
	/* 64-bit tagged values, Smis in the upper half */
	if (!c[C_TAGGED_SIZE].found || c[C_TAGGED_SIZE].value != 8)
		return -ENOTSUP;
	if (!c[C_SMI_SHIFT].found || c[C_SMI_SHIFT].value != 31 || !c[C_SMI_TAG_MASK].found ||
	    c[C_SMI_TAG_MASK].value != 1)
		return -ENOTSUP;
	if (!c[C_HEAP_TAG].found || c[C_HEAP_TAG].value != 1 || !c[C_HEAP_TAG_MASK].found ||
	    c[C_HEAP_TAG_MASK].value != 3)
		return -ENOTSUP;
	l.tagged_size = 8;
	l.smi_shift = 32;
	l.heap_tag = 1;
	l.heap_tag_mask = 3;
	l.fp_marker = fp_slot(c, C_FP_MARKER);
	l.fp_function = fp_slot(c, C_FP_FUNCTION);
	l.fp_bytecode_array = fp_slot(c, C_FP_BYTECODE_ARRAY);
	l.fp_bytecode_offset = fp_slot(c, C_FP_BYTECODE_OFFSET);
	frame_types(c, &l);
	objects(c, &l);
	types(c, &l);
	/* what a frame cannot be named without */
	if (!l.fp_marker || !l.fp_function || !l.fp_bytecode_array || !l.fp_bytecode_offset)
		return -ENOTSUP;
	if (l.frametype[V8PROC_FT_ENTRY] == 0xff || l.frametype[V8PROC_FT_INTERPRETED] == 0xff)
		return -ENOTSUP;
	if (l.obj_map == V8PROC_NONE || l.map_instance_type == V8PROC_NONE ||
	    l.jsfunc_shared == V8PROC_NONE || l.sfi_name_or_scope_info == V8PROC_NONE ||
	    l.sfi_script == V8PROC_NONE || l.type_sfi == V8PROC_NONE ||
	    l.type_script == V8PROC_NONE || l.type_first_nonstring == V8PROC_NONE ||
	    l.str_length == V8PROC_NONE || l.seq_chars == V8PROC_NONE ||
	    l.script_name == V8PROC_NONE || l.str_repr_mask == 0xff || l.str_enc_mask == 0xff)
		return -ENOTSUP;
	*out = l;
	return 0;
}

bool v8proc__in_jit(const struct v8proc *vp, __u64 pc)
{
	__u32 i;

	for (i = 0; i < vp->njit && i < V8PROC_MAX_JIT; i++)
		if (pc >= vp->jit[i].lo && pc < vp->jit[i].hi)
			return true;
	return false;
}

bool v8proc__in_text(const struct v8proc *vp, __u64 pc)
{
	__u32 i;

	for (i = 0; i < vp->ntext && i < 4; i++)
		if (pc >= vp->text[i].lo && pc < vp->text[i].hi)
			return true;
	return false;
}

/* ---- reading a file ---- */

/* The 4-byte value of a symbol at @vaddr: from the file's bytes, or 0 when
 * it lies in a segment's zero-filled part (.bss). */
static int read_s32(const struct elfsyms_file *f, __u64 vaddr, __s32 *v)
{
	unsigned i;

	for (i = 0; i < f->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &f->ph[i];

		if (p->p_type != PT_LOAD || vaddr < p->p_vaddr || vaddr - p->p_vaddr >= p->p_memsz ||
		    p->p_memsz - (vaddr - p->p_vaddr) < 4)
			continue;
		if (vaddr - p->p_vaddr + 4 <= p->p_filesz)
			return elfsyms__read(f, v, 4, p->p_offset + (vaddr - p->p_vaddr));
		if (vaddr - p->p_vaddr >= p->p_filesz) {
			*v = 0;
			return 0;
		}
		return -ENOEXEC; /* straddles the end of the file bytes */
	}
	return -ENOEXEC;
}

#define NAME_MAX_V8 (ELFSYMS_MAX_NAME)

enum { VER_MAJOR, VER_MINOR, VER_BUILD, VER_PATCH, VER_N };

/* The constants and V8's version from the .dynsym of file @fd. */
static int read_consts(int fd, struct v8proc_const *c, struct v8proc *out)
{
	static const char *const vnames[VER_N] = {
		"_ZN2v88internal7Version6major_E", "_ZN2v88internal7Version6minor_E",
		"_ZN2v88internal7Version6build_E", "_ZN2v88internal7Version6patch_E"};
	struct elfsyms_query q[C_N + VER_N];
	char (*names)[NAME_MAX_V8] = NULL;
	struct elfsyms_file f = {0};
	__s32 ver[VER_N] = {0};
	int i, err;

	names = calloc(C_N, sizeof(*names));
	if (!names)
		return -ENOMEM;
	err = elfsyms__open(fd, &f);
	if (err)
		goto cleanup;
	memset(q, 0, sizeof(q));
	for (i = 0; i < C_N; i++) {
		snprintf(names[i], sizeof(names[i]), "v8dbg_%s", wanted[i].name);
		q[i].name = names[i];
		q[i].types = 1u << STT_OBJECT;
	}
	for (i = 0; i < VER_N; i++) {
		q[C_N + i].name = vnames[i];
		q[C_N + i].types = 1u << STT_OBJECT;
	}
	err = elfsyms__dynsym(&f, q, C_N + VER_N, NULL);
	if (err)
		goto cleanup;
	for (i = 0; i < C_N; i++) {
		c[i] = wanted[i];
		if (q[i].found && q[i].size == 4 && !read_s32(&f, q[i].value, &c[i].value))
			c[i].found = true;
	}
	if (!c[C_TAGGED_SIZE].found || !c[C_FP_FUNCTION].found) {
		err = -ENOENT; /* no postmortem description: not V8, or built without */
		goto cleanup;
	}
	for (i = 0; i < VER_N; i++)
		if (!q[C_N + i].found || read_s32(&f, q[C_N + i].value, &ver[i]) || ver[i] < 0)
			ver[i] = -1;
	if (ver[VER_MAJOR] > 0 && ver[VER_MINOR] >= 0 && ver[VER_BUILD] >= 0) {
		snprintf(out->version, sizeof(out->version), "%d.%d.%d.%d", ver[VER_MAJOR],
			 ver[VER_MINOR], ver[VER_BUILD], ver[VER_PATCH] < 0 ? 0 : ver[VER_PATCH]);
		out->layout.version = ((__u32)(ver[VER_MAJOR] & 0xff) << 24) |
				      ((__u32)(ver[VER_MINOR] & 0xff) << 16) |
				      (__u32)(ver[VER_BUILD] & 0xffff);
	}
cleanup:
	elfsyms__close(&f);
	free(names);
	return err;
}

/* ---- locate ---- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* A file that may hold V8: libnode.so*, or the executable named node*. */
static bool candidate(const struct procmaps_entry *e, const char *exe)
{
	const char *b = base_name(e->path);
	size_t len = strlen(e->path);

	if (e->anonymous || e->path[0] != '/')
		return false;
	if (!strncmp(b, "libnode.so", 10))
		return true;
	return exe && !strncmp(b, "node", 4) && !strncmp(exe, e->path, len) &&
	       (!exe[len] || !strcmp(exe + len, PROCMAPS_DELETED_SUFFIX));
}

static void warn_unsupported(const char *path, const char *version)
{
	static int warned;

	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	pr_warn("v8: %s (V8 %s) describes itself in a way profcap cannot read (pointer "
		"compression, or v8dbg_* symbols missing): its JavaScript frames stay [anon]; "
		"start it with --perf-basic-prof for named frames\n",
		path, version[0] ? version : "unknown");
}

/* The executable mappings of the V8 file (by device and inode, so a
 * remapped copy of the builtins counts) and the anonymous ones. */
static void ranges(const struct procmaps *maps, const struct procmaps_entry *file,
		   struct v8proc *out)
{
	size_t i, n = procmaps__count(maps);

	for (i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);

		if (!(e->perms & PROCMAPS_EXEC))
			continue;
		if (e->anonymous && out->njit < V8PROC_MAX_JIT)
			out->jit[out->njit++] = (struct v8proc_range){e->start, e->end};
		else if (!e->anonymous && e->inode == file->inode &&
			 e->dev_major == file->dev_major && e->dev_minor == file->dev_minor &&
			 out->ntext < 4)
			out->text[out->ntext++] = (struct v8proc_range){e->start, e->end};
	}
}

static int locate_in(const char *root, int pid, const struct procmaps *maps, const char *exe,
		     void *arg)
{
	struct v8proc *out = arg;
	struct v8proc_const c[C_N];
	const struct procmaps_entry *e = NULL;
	size_t i, n = procmaps__count(maps);
	__u32 version;
	int fd, err;

	for (i = 0; i < n && !e; i++)
		if (candidate(procmaps__entry(maps, i), exe))
			e = procmaps__entry(maps, i);
	if (!e)
		return -ENOENT;
	err = pfile__open_mapped(root, pid, e, &fd);
	if (err)
		return err;
	err = read_consts(fd, c, out);
	close(fd);
	if (err)
		return err;
	version = out->layout.version;
	err = v8proc__layout(c, C_N, &out->layout);
	if (err == -ENOTSUP)
		warn_unsupported(e->path, out->version);
	if (err)
		return err;
	out->layout.version = version;
	ranges(maps, e, out);
	return 0;
}

int v8proc__locate(const char *proc_root, int pid, const struct procsnap *snap,
		   struct v8proc *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	err = procsnap__with_maps(proc_root, pid, snap, locate_in, out);
	if (err)
		memset(out, 0, sizeof(*out));
	return err;
}
