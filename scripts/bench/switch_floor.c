/* switch_floor.c - load build/bench/switch_floor.bpf.o, attach its empty
 * sched_switch program, print "attached", hold it until SIGINT/SIGTERM.
 * Built by switch_floor.sh; used by offcpu_bench.py (`floor`). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj = NULL;
	struct bpf_program *prog;
	struct bpf_link *link = NULL;
	int err = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: switch_floor OBJECT\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "switch_floor: cannot load %s: %s\n", argv[1], strerror(errno));
		goto out;
	}
	prog = bpf_object__find_program_by_name(obj, "floor_switch");
	link = prog ? bpf_program__attach(prog) : NULL;
	if (!link) {
		fprintf(stderr, "switch_floor: cannot attach: %s\n", strerror(errno));
		goto out;
	}
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	err = 0;
out:
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return err;
}
