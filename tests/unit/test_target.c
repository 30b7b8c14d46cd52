/* test_target.c - resolving targeting flags against a fake /proc: a thread
 * given to -p stands for its process. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/target.h"
#include "test.h"

static char root[128];

static void put_status(int pid, int tgid)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/status", root, pid);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f,
		"Name:\tworker\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nNgid:\t0\n"
		"Pid:\t%d\nPPid:\t1\n",
		tgid, pid);
	fclose(f);
}

TEST(thread_as_pid_is_its_process)
{
	struct target_opts o = {0};
	struct target t;

	put_status(100, 100);
	put_status(101, 100); /* a thread of 100 */
	put_status(200, 200);
	o.pids[o.npids++] = 101;
	o.pids[o.npids++] = 200;
	o.pids[o.npids++] = 100; /* the same process again: kept once */
	CHECK(!target__resolve(&t, &o, root));
	CHECK_EQ_U64(t.npids, 2);
	CHECK_EQ_U64(t.pids[0], 100);
	CHECK_EQ_U64(t.pids[1], 200);
	target__release(&t);
}

TEST(missing_pid_is_an_error)
{
	struct target_opts o = {0};
	struct target t;

	o.pids[o.npids++] = 999;
	CHECK(target__resolve(&t, &o, root) == -ESRCH);
	target__release(&t);
}

int main(void)
{
	char cmd[300];
	int ret;

	snprintf(root, sizeof(root), "/tmp/profcap-test-target-%d", (int)getpid());
	mkdir(root, 0755);
	RUN(thread_as_pid_is_its_process);
	RUN(missing_pid_is_an_error);
	ret = TEST_DONE();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		ret = 1;
	return ret;
}
