/* test_offcpu.c - the off-CPU loader's pure parts: the rewrite of the
 * task-work placeholder calls into kfunc calls, on instructions written
 * here and on the sampler's BPF object as built (opened, never loaded). */
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

/* Placeholders in @prog's instructions, rewritten in a copy. */
static size_t placeholders(const struct bpf_program *prog)
{
	size_t n = bpf_program__insn_cnt(prog), i, k = 0;
	const struct bpf_insn *p = bpf_program__insns(prog);

	for (i = 0; i < n; i++)
		k += p[i].code == (BPF_JMP | BPF_CALL) && !p[i].src_reg &&
		     p[i].imm == OFFCPU_TASK_WORK_CALL;
	return k;
}

/* The one object: only profcap_switch_tw calls the task-work kfunc, and
 * nothing in the object names a kfunc for libbpf to resolve. */
TEST(object_has_placeholder_only_in_switch_tw)
{
	struct cpu_sampler *skel = cpu_sampler__open();
	const struct btf *btf;
	struct bpf_program *p;
	size_t tw = 0, other = 0;
	__u32 id, externs = 0;

	CHECK(skel);
	bpf_object__for_each_program(p, skel->obj)
	{
		if (p == skel->progs.profcap_switch_tw)
			tw += placeholders(p);
		else
			other += placeholders(p);
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
	CHECK(externs == 0);
}

int main(void)
{
	libbpf_set_print(NULL);
	RUN(rewrites_only_placeholder_calls);
	RUN(object_has_placeholder_only_in_switch_tw);
	return TEST_DONE();
}
