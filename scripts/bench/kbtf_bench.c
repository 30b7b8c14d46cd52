/* kbtf_bench.c - CPU time of kbtf__load() on the running kernel's BTF, for
 * the structs the sampler reads (collect/sampler.c kernel_structs), and a
 * checksum of the member offsets found, so that two builds can be compared
 * (scripts/bench/kbtf_bench.sh). Usage: kbtf_bench ROUNDS. Prints one line
 * per round: "<ms> <checksum>". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <bpf/btf.h>

#include "collect/kbtf.h"

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	static const char *const structs[] = {
		"task_struct", "thread_struct", "vm_area_struct", "file", "inode",
		"super_block", "sched_entity",	"cfs_rq",	  "rq",	  "bpf_task_work",
	};
	size_t n = sizeof(structs) / sizeof(structs[0]);
	int rounds = argc > 1 ? atoi(argv[1]) : 20, i;

	for (i = 0; i < rounds; i++) {
		double t0 = cpu_ms(), t1;
		struct btf *b = kbtf__load(KBTF_VMLINUX, structs, n);
		unsigned long long sum = 0;
		__u32 id, nt;

		t1 = cpu_ms();
		if (!b) {
			perror("kbtf__load");
			return 1;
		}
		nt = btf__type_cnt(b);
		for (id = 1; id < nt; id++) {
			const struct btf_type *t = btf__type_by_id(b, id);
			const struct btf_member *m = btf_members(t);
			__u16 k;

			if (!btf_is_struct(t))
				continue;
			for (k = 0; k < btf_vlen(t); k++, m++)
				sum = sum * 31 + btf_member_bit_offset(t, k) +
				      (unsigned long long)m->name_off * 7;
		}
		printf("%.3f %llx\n", t1 - t0, sum);
		btf__free(b);
	}
	return 0;
}
