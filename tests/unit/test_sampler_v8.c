/* test_sampler_v8.c - the V8 walker's map entry from a located V8
 * (sampler__v8_proc()) and the drain of the JavaScript stacks it stores
 * (drain__rtstack()). Pure code, no BPF. */
#include <errno.h>
#include <string.h>

#include "collect/drain.h"
#include "collect/sampler_v8.h"
#include "proc/v8proc.h"
#include "test.h"

/* Node 20 (V8 11.3) as v8proc__layout() reads it (docs/v8.md). */
static void node20(struct v8proc *vp)
{
	memset(vp, 0, sizeof(*vp));
	vp->layout = (struct v8proc_layout){
		.tagged_size = 8,
		.smi_shift = 32,
		.heap_tag_mask = 3,
		.heap_tag = 1,
		.fp_marker = -8,
		.fp_function = -16,
		.fp_bytecode_array = -32,
		.fp_bytecode_offset = -40,
		.obj_map = 0,
		.map_instance_type = 12,
		.jsfunc_shared = 24,
		.jsfunc_code = 48,
		.sfi_script = 32,
		.sfi_length = 40,
		.sfi_param_count = 42,
		.sfi_token_offset = 44,
		.bytecode_data = 54,
		.type_sfi = 180,
		.type_bytecode = 140,
	};
	strcpy(vp->version, "11.3.244.8");
	vp->text[0] = (struct v8proc_range){0x555500000000ull, 0x555502000000ull};
	vp->text[1] = (struct v8proc_range){0x7f0000000000ull, 0x7f0000100000ull};
	vp->ntext = 2;
}

TEST(map_entry_from_node20)
{
	struct v8proc vp;
	struct v8_proc e;

	node20(&vp);
	CHECK_EQ_U64(sampler__v8_proc(&vp, &e), 0);
	CHECK(e.fp_marker == -8 && e.fp_function == -16 && e.fp_bytecode_array == -32 &&
	      e.fp_bytecode_offset == -40);
	CHECK(e.jsfunc_shared == 24 && e.map_instance_type == 12 && e.bytecode_data == 54);
	CHECK(e.sfi_script == 32 && e.sfi_length == 40 && e.sfi_token_offset == 44);
	CHECK(e.type_sfi == 180 && e.type_bytecode == 140);
	CHECK(e.heap_tag_mask == 3 && e.heap_tag == 1 && e.smi_shift == 32);
	/* the function's head read up to its last field (token offset), in words */
	CHECK_EQ_U64(e.sfi_read, 48);
	CHECK(e.text[0][0] == 0x555500000000ull && e.text[1][1] == 0x7f0000100000ull);
	CHECK(!e.text[2][0] && !e.text[3][1]);
}

TEST(map_entry_refused)
{
	struct v8proc vp;
	struct v8_proc e;

	/* a slot outside the read below fp, or not a word */
	node20(&vp);
	vp.layout.fp_bytecode_offset = -56;
	CHECK_EQ_U64(sampler__v8_proc(&vp, &e), (__u64)-EINVAL);
	node20(&vp);
	vp.layout.fp_function = -12;
	CHECK_EQ_U64(sampler__v8_proc(&vp, &e), (__u64)-EINVAL);
	node20(&vp);
	vp.layout.fp_marker = 8;
	CHECK_EQ_U64(sampler__v8_proc(&vp, &e), (__u64)-EINVAL);
	/* a fingerprint field past the head's read, or missing */
	node20(&vp);
	vp.layout.sfi_token_offset = PROFCAP_V8_SFI_READ - 1;
	CHECK_EQ_U64(sampler__v8_proc(&vp, &e), (__u64)-EINVAL);
	node20(&vp);
	vp.layout.sfi_script = V8PROC_NONE;
	CHECK_EQ_U64(sampler__v8_proc(&vp, &e), (__u64)-EINVAL);
	/* compressed pointers */
	node20(&vp);
	vp.layout.tagged_size = 4;
	CHECK_EQ_U64(sampler__v8_proc(&vp, &e), (__u64)-EINVAL);
}

/* One stack under hash 0xaa: @n words, word i = 1000 + i. */
struct one_stack {
	struct stack_trace st;
};

static int one_stack(void *ctx, __u64 hash, struct stack_trace *out)
{
	const struct one_stack *m = ctx;

	if (hash != 0xaa)
		return -ENOENT;
	*out = m->st;
	return 0;
}

static void fill(struct one_stack *m, __u64 n)
{
	memset(m, 0, sizeof(*m));
	m->st.nr = n;
	for (__u64 i = 0; i < PROFCAP_MAX_STACK; i++)
		m->st.ips[i] = 1000 + i;
}

TEST(js_stack_found_lost_and_whole_frames)
{
	static struct one_stack m;
	static struct stack_trace buf;
	struct drain_stacks src = {.stack = one_stack, .ctx = &m};
	struct sample_key k;
	struct offcpu_key ok;
	struct offcpu_val ov = {.ns = 1, .switches = 6};
	struct sampler_record r;

	memset(&k, 0, sizeof(k));
	k.flags = PROFCAP_F_V8_TRUNC | PROFCAP_F_V8_PARTIAL;
	k.rtstack = 0xaa;
	fill(&m, 9);
	drain__cpu_record(&k, 4, &r);
	CHECK(r.flags == (SAMPLER_REC_V8_TRUNC | SAMPLER_REC_V8_PARTIAL));
	CHECK(!r.rtstack && !r.nrtstack);
	CHECK_EQ_U64(drain__rtstack(&buf, &src, &r, k.rtstack), 0);
	CHECK(r.nrtstack == 9 && r.rtstack[0] == 1000 && r.rtstack[8] == 1008);
	/* a word short of a frame: whole frames only */
	fill(&m, 8);
	CHECK_EQ_U64(drain__rtstack(&buf, &src, &r, 0xaa), 0);
	CHECK_EQ_U64(r.nrtstack, 6);
	/* more than the walker writes: its bound */
	fill(&m, PROFCAP_MAX_STACK);
	CHECK_EQ_U64(drain__rtstack(&buf, &src, &r, 0xaa), 0);
	CHECK_EQ_U64(r.nrtstack, PROFCAP_V8_WORDS * PROFCAP_V8_MAX_FRAMES);
	/* none: nothing changes */
	drain__cpu_record(&k, 4, &r);
	CHECK_EQ_U64(drain__rtstack(&buf, &src, &r, 0), 0);
	CHECK(!r.rtstack && !(r.flags & SAMPLER_REC_V8_LOST));
	/* gone: flagged, its samples (CPU) or waits (off-CPU) counted */
	CHECK_EQ_U64(drain__rtstack(&buf, &src, &r, 0x77), 4);
	CHECK(!r.rtstack && (r.flags & SAMPLER_REC_V8_LOST));
	memset(&ok, 0, sizeof(ok));
	ok.rtstack = 0x77;
	drain__offcpu_record(&ok, &ov, &r);
	CHECK_EQ_U64(drain__rtstack(&buf, &src, &r, ok.rtstack), 6);
}

int main(void)
{
	RUN(map_entry_from_node20);
	RUN(map_entry_refused);
	RUN(js_stack_found_lost_and_whole_frames);
	return TEST_DONE();
}
