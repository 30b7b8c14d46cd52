/* test_offcpu.c - the off-CPU loader's pure parts: the rewrites of the
 * switch programs' placeholders (task-work calls into kfunc calls, offset
 * immediates into kernel offsets), on instructions written here and on the
 * sampler's BPF object as built (opened, never loaded). */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "offcpu_types.h"
#include "cpu_sampler.skel.h"
#include "collect/offcpu.h"
#include "test.h"

static struct bpf_insn call(__u8 src, __s32 imm)
{
	struct bpf_insn i = {.code = BPF_JMP | BPF_CALL, .src_reg = src, .imm = imm};

	return i;
}

TEST(rewrites_only_placeholder_calls)
{
	struct bpf_insn insns[5] = {
		call(0, BPF_FUNC_map_lookup_elem),
		call(0, OFFCPU_TASK_WORK_CALL),
		call(BPF_PSEUDO_CALL, OFFCPU_TASK_WORK_CALL), /* a subprogram call */
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .imm = OFFCPU_TASK_WORK_CALL},
		call(0, OFFCPU_TASK_WORK_CALL),
	};

	CHECK(offcpu__link_task_work(insns, 5, 4242) == 2);
	CHECK(insns[0].src_reg == 0 && insns[0].imm == BPF_FUNC_map_lookup_elem);
	CHECK(insns[1].src_reg == BPF_PSEUDO_KFUNC_CALL && insns[1].imm == 4242);
	CHECK(insns[1].off == 0);
	CHECK(insns[2].src_reg == BPF_PSEUDO_CALL && insns[2].imm == OFFCPU_TASK_WORK_CALL);
	CHECK(insns[3].imm == OFFCPU_TASK_WORK_CALL);
	CHECK(insns[4].src_reg == BPF_PSEUDO_KFUNC_CALL && insns[4].imm == 4242);
	CHECK(offcpu__link_task_work(insns, 5, 4242) == 0); /* nothing left */
}

static struct bpf_insn mov(__s32 imm)
{
	struct bpf_insn i = {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 1, .imm = imm};

	return i;
}

TEST(rewrites_only_offset_placeholders)
{
	static const __u32 off[OFFCPU_OFF__COUNT] = {
		[OFFCPU_OFF_STACK] = 24,  [OFFCPU_OFF_FLAGS] = 44, [OFFCPU_OFF_CFS_RQ] = 296,
		[OFFCPU_OFF_RQ] = 312,	  [OFFCPU_OFF_CLOCK] = 2776,
	};
	struct bpf_insn insns[6] = {
		mov(OFFCPU_OFF_IMM + OFFCPU_OFF_CLOCK),
		mov(OFFCPU_OFF_IMM + OFFCPU_OFF__COUNT), /* past the last: not one */
		mov(OFFCPU_OFF_IMM - 1),
		call(0, OFFCPU_OFF_IMM + OFFCPU_OFF_STACK), /* not a move */
		mov(OFFCPU_OFF_IMM + OFFCPU_OFF_STACK),
		{.code = BPF_ALU | BPF_MOV | BPF_K, .imm = OFFCPU_OFF_IMM}, /* 32-bit */
	};

	CHECK(offcpu__link_offsets(insns, 6, off) == 2);
	CHECK(insns[0].imm == 2776 && insns[0].dst_reg == 1);
	CHECK(insns[1].imm == OFFCPU_OFF_IMM + OFFCPU_OFF__COUNT);
	CHECK(insns[2].imm == OFFCPU_OFF_IMM - 1);
	CHECK(insns[3].imm == OFFCPU_OFF_IMM + OFFCPU_OFF_STACK);
	CHECK(insns[4].imm == 24);
	CHECK(insns[5].imm == OFFCPU_OFF_IMM);
}

/* Task-work calls in @prog's instructions; offset placeholders in *@offs. */
static size_t placeholders(const struct bpf_program *prog, size_t *offs)
{
	size_t n = bpf_program__insn_cnt(prog), i, k = 0;
	const struct bpf_insn *p = bpf_program__insns(prog);

	*offs = 0;
	for (i = 0; i < n; i++) {
		k += p[i].code == (BPF_JMP | BPF_CALL) && !p[i].src_reg &&
		     p[i].imm == OFFCPU_TASK_WORK_CALL;
		*offs += p[i].code == (BPF_ALU64 | BPF_MOV | BPF_K) && !p[i].src_reg &&
			 p[i].imm >= OFFCPU_OFF_IMM &&
			 p[i].imm < OFFCPU_OFF_IMM + OFFCPU_OFF__COUNT;
	}
	return k;
}

/* The one object: only profcap_switch_tw calls the task-work kfunc, only
 * the two switch programs have offset placeholders, and nothing in the
 * object names a kfunc for libbpf to resolve. */
TEST(object_placeholders_only_in_switch_programs)
{
	struct cpu_sampler *skel = cpu_sampler__open();
	size_t tw = 0, other = 0, offs, sw_short = 0, other_offs = 0;
	const struct btf *btf;
	struct bpf_program *p;
	__u32 id, externs = 0;

	CHECK(skel);
	bpf_object__for_each_program(p, skel->obj)
	{
		bool sw = p == skel->progs.profcap_switch || p == skel->progs.profcap_switch_tw;

		if (p == skel->progs.profcap_switch_tw)
			tw += placeholders(p, &offs);
		else
			other += placeholders(p, &offs);
		if (sw)
			sw_short += offs < OFFCPU_OFF__COUNT; /* each reads all five */
		else
			other_offs += offs;
	}
	btf = bpf_object__btf(skel->obj);
	for (id = 1; btf && id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		/* a FUNC's vlen is its linkage */
		externs += btf_is_func(t) && btf_vlen(t) == BTF_FUNC_EXTERN;
	}
	cpu_sampler__destroy(skel);
	CHECK(btf);
	CHECK(tw > 0); /* one per entry tried: the loop is unrolled */
	CHECK(other == 0);
	CHECK(sw_short == 0);
	CHECK(other_offs == 0);
	CHECK(externs == 0);
}

int main(void)
{
	libbpf_set_print(NULL);
	RUN(rewrites_only_placeholder_calls);
	RUN(rewrites_only_offset_placeholders);
	RUN(object_placeholders_only_in_switch_programs);
	return TEST_DONE();
}
