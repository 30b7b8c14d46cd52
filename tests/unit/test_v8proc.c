/* test_v8proc.c - finding V8 in a process and reading its postmortem
 * description: the layout from hand-made constants (what is derived, what
 * is refused) and from the live node of this system (its v8dbg_* values
 * as the file holds them). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "v8fixture.h"
#include "proc/v8proc.h"
#include "symbolize/v8frames.h"

/* Constants of V8 11.3 (node 20) by name: the values of the file. */
static const struct {
	const char *name;
	__s32 value;
} v113[] = {
	{"TaggedSize", 8},
	{"SmiShiftSize", 31},
	{"SmiTagMask", 1},
	{"HeapObjectTag", 1},
	{"HeapObjectTagMask", 3},
	{"off_fp_context_or_frame_type", -8},
	{"off_fp_function", -16},
	{"off_fp_bytecode_array", -32},
	{"off_fp_bytecode_offset", -40},
	{"frametype_EntryFrame", 1},
	{"frametype_ConstructEntryFrame", 2},
	{"frametype_ExitFrame", 3},
	{"frametype_InterpretedFrame", 13},
	{"frametype_BaselineFrame", 14},
	{"frametype_TurbofanFrame", 16},
	{"class_HeapObject__map__Map", 0},
	{"class_Map__instance_type__uint16_t", 12},
	{"class_JSFunction__shared__SharedFunctionInfo", 24},
	{"class_JSFunction__raw_feedback_cell__FeedbackCell", 40},
	{"class_JSFunction__prototype_or_initial_map__HeapObject", 56},
	{"class_SharedFunctionInfo__function_data__Object", 8},
	{"class_SharedFunctionInfo__name_or_scope_info__Object", 16},
	{"class_SharedFunctionInfo__script_or_debug_info__HeapObject", 32},
	{"class_SharedFunctionInfo__length__uint16_t", 40},
	{"class_SharedFunctionInfo__internal_formal_parameter_count__uint16_t", 42},
	{"class_SharedFunctionInfo__raw_function_token_offset__int16_t", 44},
	{"class_Script__name__Object", 16},
	{"class_Script__source__Object", 8},
	{"class_Script__line_ends__Object", 56},
	{"class_FixedArrayBase__length__SMI", 8},
	{"class_FixedArray__data__uintptr_t", 16},
	{"class_BytecodeArray__data__uintptr_t", 54},
	{"class_String__length__int32_t", 12},
	{"class_SeqOneByteString__chars__char", 16},
	{"class_SeqTwoByteString__chars__char", 16},
	{"class_ConsString__first__String", 16},
	{"class_ConsString__second__String", 24},
	{"class_ThinString__actual__String", 16},
	{"class_SlicedString__parent__String", 16},
	{"class_SlicedString__offset__SMI", 24},
	{"class_Code__bytecode_or_interpreter_data__HeapObject", 16},
	{"scopeinfo_idx_first_vars", 3},
	{"scopeinfo_idx_ncontextlocals", 2},
	{"type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", 262},
	{"type_Script__SCRIPT_TYPE", 167},
	{"type_BytecodeArray__BYTECODE_ARRAY_TYPE", 191},
	{"type_FixedArray__FIXED_ARRAY_TYPE", 175},
	{"type_ScopeInfo__SCOPE_INFO_TYPE", 261},
	{"type_Code__CODE_TYPE", 245},
	{"FirstNonstringType", 128},
	{"StringRepresentationMask", 7},
	{"StringEncodingMask", 8},
	{"SeqStringTag", 0},
	{"ConsStringTag", 1},
	{"SlicedStringTag", 3},
	{"ThinStringTag", 5},
	{"OneByteStringTag", 8},
};

/* The wanted table filled from v113[], @skip (a name) left out. */
static struct v8proc_const *consts(const char *skip, size_t *n)
{
	const struct v8proc_const *w = v8proc__wanted(n);
	struct v8proc_const *c = calloc(*n, sizeof(*c));
	size_t i, j;

	if (!c)
		return NULL;
	for (i = 0; i < *n; i++) {
		c[i] = w[i];
		for (j = 0; j < sizeof(v113) / sizeof(v113[0]); j++)
			if (!strcmp(w[i].name, v113[j].name) && (!skip || strcmp(skip, w[i].name))) {
				c[i].value = v113[j].value;
				c[i].found = true;
			}
	}
	return c;
}

static struct v8proc_const *find(struct v8proc_const *c, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(c[i].name, name))
			return &c[i];
	return NULL;
}

TEST(layout_v8_11)
{
	struct v8proc_layout l;
	size_t n;
	struct v8proc_const *c = consts(NULL, &n);
	int err;

	CHECK(c);
	err = v8proc__layout(c, n, &l);
	free(c);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(l.tagged_size, 8);
	CHECK_EQ_U64(l.smi_shift, 32);
	CHECK(l.fp_marker == -8 && l.fp_function == -16);
	CHECK(l.fp_bytecode_array == -32 && l.fp_bytecode_offset == -40);
	CHECK_EQ_U64(l.frametype[V8PROC_FT_ENTRY], 1);
	CHECK_EQ_U64(l.frametype[V8PROC_FT_TURBOFAN], 16);
	CHECK_EQ_U64(l.frametype[V8PROC_FT_MAGLEV], 0xff); /* not given: unknown */
	/* derived: the code slot between feedback cell and prototype */
	CHECK_EQ_U64(l.jsfunc_code, 48);
	/* derived: the third field after the FixedArrayBase header */
	CHECK_EQ_U64(l.bytecode_positions, 32);
	CHECK_EQ_U64(l.seq_chars, 16);
	CHECK_EQ_U64(l.type_sfi, 262);
}

TEST(layout_refused)
{
	static const char *const needed[] = {"off_fp_function", "type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE",
					     "class_Script__name__Object", "frametype_EntryFrame"};
	struct v8proc_layout l;
	struct v8proc_const *c, *t;
	size_t n, i;

	for (i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		c = consts(needed[i], &n);
		CHECK(c);
		CHECK_EQ_U64(v8proc__layout(c, n, &l), (__u64)-ENOTSUP);
		free(c);
	}
	/* pointer compression: 4-byte tagged values */
	c = consts(NULL, &n);
	CHECK(c);
	t = find(c, n, "TaggedSize");
	CHECK(t);
	t->value = 4;
	CHECK_EQ_U64(v8proc__layout(c, n, &l), (__u64)-ENOTSUP);
	/* 31-bit Smis (32-bit builds, compression) */
	t->value = 8;
	t = find(c, n, "SmiShiftSize");
	t->value = 0;
	CHECK_EQ_U64(v8proc__layout(c, n, &l), (__u64)-ENOTSUP);
	t->value = 31;
	/* a frame slot that is no word below the frame pointer */
	t = find(c, n, "off_fp_function");
	t->value = 12;
	CHECK_EQ_U64(v8proc__layout(c, n, &l), (__u64)-ENOTSUP);
	/* the code slot is not derived when the neighbours are not one slot apart */
	t->value = -16;
	find(c, n, "class_JSFunction__prototype_or_initial_map__HeapObject")->value = 64;
	CHECK_EQ_U64(v8proc__layout(c, n, &l), 0);
	CHECK_EQ_U64(l.jsfunc_code, V8PROC_NONE);
	/* a wrong wanted-table size */
	CHECK_EQ_U64(v8proc__layout(c, n - 1, &l), (__u64)-EINVAL);
	free(c);
}

TEST(not_node)
{
	struct v8proc vp;

	/* this test program exports no v8dbg_*: not V8 */
	CHECK_EQ_U64(v8proc__locate(NULL, getpid(), NULL, &vp), (__u64)-ENOENT);
	CHECK_EQ_U64(v8proc__locate(NULL, 0x7ffffff0, NULL, &vp) < 0, 1);
}

/* The live node: located, its description read, its code ranges found,
 * and a JavaScript frame found with the layout read. */
TEST(live_node)
{
	struct v8fx_child c;
	struct v8proc vp;
	struct v8fx_walk w;
	int err, tries;

	err = v8fx__start(&c);
	if (err == -ENOENT)
		SKIP("%s not installed", V8FX_NODE);
	CHECK_EQ_U64(err, 0);
	err = v8proc__locate(NULL, c.pid, NULL, &vp);
	if (err) {
		v8fx__stop(&c);
		CHECK_EQ_U64(err, 0);
	}
	CHECK(!strncmp(vp.version, "11.3.", 5) || !strncmp(vp.version, "1", 1));
	CHECK(vp.layout.version >> 24 >= 8);
	CHECK(vp.layout.fp_function == -16 && vp.layout.fp_marker == -8);
	CHECK_EQ_U64(vp.layout.frametype[V8PROC_FT_ENTRY], 1);
	CHECK(vp.layout.type_sfi != V8PROC_NONE && vp.layout.type_script != V8PROC_NONE);
	CHECK(vp.ntext >= 1);
	CHECK(vp.njit >= 1); /* the code space of a running node */
	/* the walker finds a JS frame whose function is a SharedFunctionInfo
	 * by the layout read (the frame slots and types are right) */
	for (tries = 0; tries < 50 && !w.nwords; tries++) {
		if (v8fx__walk(c.pid, &vp, &w))
			w.nwords = 0;
		v8fx__sleep_ms(10);
	}
	v8fx__stop(&c);
	CHECK(w.nwords >= 3);
}

/* The values read equal what the file holds, read independently here
 * with nm and objdump. */
TEST(values_as_nm)
{
	static const char *const names[] = {"off_fp_bytecode_offset", "frametype_InterpretedFrame",
					    "type_BytecodeArray__BYTECODE_ARRAY_TYPE",
					    "class_BytecodeArray__data__uintptr_t"};
	struct v8fx_child c;
	struct v8proc vp;
	char cmd[512];
	long vals[4];
	char hex[16];
	size_t i;
	int err;
	FILE *p;

	if (access(V8FX_NODE, X_OK))
		SKIP("%s not installed", V8FX_NODE);
	for (i = 0; i < 4; i++) {
		/* address in .dynsym, then its 4 bytes as objdump dumps them */
		snprintf(cmd, sizeof(cmd),
			 "a=$(nm -D %s | awk '$3==\"v8dbg_%s\"{print $1}'); [ -n \"$a\" ] && "
			 "objdump -s --start-address=0x$a --stop-address=$(printf '0x%%x' $((0x$a + 4))) %s "
			 "| awk 'NF>=2 && length($2)==8 {w=$2} END {print w}'",
			 V8FX_NODE, names[i], V8FX_NODE);
		p = popen(cmd, "r");
		CHECK(p);
		vals[i] = 0x7fffffff;
		if (fscanf(p, "%8s", hex) == 1 && strlen(hex) == 8) {
			unsigned b[4];

			if (sscanf(hex, "%2x%2x%2x%2x", &b[0], &b[1], &b[2], &b[3]) == 4)
				vals[i] = (__s32)(b[0] | b[1] << 8 | b[2] << 16 | (__u32)b[3] << 24);
		}
		pclose(p);
	}
	if (vals[0] == 0x7fffffff)
		SKIP("binutils missing");
	err = v8fx__start(&c);
	CHECK_EQ_U64(err, 0);
	err = v8proc__locate(NULL, c.pid, NULL, &vp);
	v8fx__stop(&c);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64((__s64)vp.layout.fp_bytecode_offset, (__s64)vals[0]);
	CHECK_EQ_U64(vp.layout.frametype[V8PROC_FT_INTERPRETED], vals[1]);
	CHECK_EQ_U64(vp.layout.type_bytecode, vals[2]);
	CHECK_EQ_U64(vp.layout.bytecode_data, vals[3]);
}

/* A node whose program exists only in its own mount namespace (a
 * container): found and described through /proc/PID, its frames named. */
TEST(other_mount_namespace)
{
	struct v8frames *vf;
	struct v8fx_child c;
	struct v8fx_walk w = {0};
	struct v8frames_raw raw[64];
	struct profile_frame f[64];
	struct v8proc vp;
	size_t n = 0, i, method = 0;
	int err, tries;

	if (geteuid())
		SKIP("needs root (a mount namespace)");
	err = v8fx__start_in(&c, true);
	if (err == -ENOENT)
		SKIP("%s not installed", V8FX_NODE);
	if (err == -EPERM) {
		v8fx__stop(&c);
		SKIP("mount namespaces refused here");
	}
	CHECK_EQ_U64(err, 0);
	/* the path the process runs from is not there for profcap */
	err = access(c.hidden, F_OK) ? v8proc__locate(NULL, c.pid, NULL, &vp) : -EEXIST;
	vf = v8frames__new(NULL);
	if (!err)
		err = vf ? v8frames__set_process(vf, c.pid, &vp) : -ENOMEM;
	for (tries = 0; !err && tries < 100 && !method; tries++) {
		v8fx__sleep_ms(5);
		if (v8fx__walk(c.pid, &vp, &w) || !w.nwords)
			continue;
		n = v8frames__decode(w.words, w.nwords, raw, 64);
		v8frames__resolve(vf, c.pid, raw, n, f);
		for (i = 0; i < n; i++)
			method += !strcmp(f[i].function, "method");
	}
	v8fx__stop(&c);
	v8frames__free(vf);
	CHECK_EQ_U64(err, 0);
	CHECK(method > 0);
}

int main(void)
{
	RUN(layout_v8_11);
	RUN(layout_refused);
	RUN(not_node);
	RUN(live_node);
	RUN(values_as_nm);
	RUN(other_mount_namespace);
	return TEST_DONE();
}
