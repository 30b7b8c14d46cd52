/* test_procsnap.c - a snapshot of this process: maps, executable, name,
 * command line; references. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "test.h"

TEST(self)
{
	char exe[4096], comm[32];
	struct procsnap *p = NULL;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	exe[n] = '\0';
	CHECK(!prctl(PR_GET_NAME, comm));
	CHECK(!procsnap__read("/proc", (int)getpid(), &p));
	CHECK(p && p->pid == (int)getpid());
	CHECK(p->refs == 1);
	CHECK(p->at_ns > 0);
	CHECK(procmaps__find(p->maps, (__u64)(unsigned long)&test_self));
	CHECK(p->exe);
	CHECK_STR(p->exe, exe);
	CHECK_STR(p->comm, comm);
	/* the raw command line, kept at its length: argv[0] and its NUL */
	CHECK(p->cmdline && p->cmdline_len > 1);
	CHECK(p->cmdline[p->cmdline_len - 1] == '\0');
	CHECK(strstr(exe, strrchr(p->cmdline, '/') ? strrchr(p->cmdline, '/') : p->cmdline));
	procsnap__free(p);
}

TEST(references)
{
	struct procsnap *p = NULL;

	CHECK(!procsnap__read("/proc", (int)getpid(), &p));
	CHECK(procsnap__get(p) == p);
	CHECK(p->refs == 2);
	procsnap__free(p); /* one left: still readable */
	CHECK(p->refs == 1 && procmaps__count(p->maps) > 0);
	procsnap__free(p);
	CHECK(!procsnap__get(NULL));
	procsnap__free(NULL);
}

TEST(gone)
{
	struct procsnap *p = (struct procsnap *)1;

	CHECK_EQ_U64(procsnap__read("/proc", 0x7ffffff0, &p), -ESRCH);
	CHECK(!p);
	CHECK_EQ_U64(procsnap__read("/nonexistent", (int)getpid(), &p), -ESRCH);
}

int main(void)
{
	RUN(self);
	RUN(references);
	RUN(gone);
	return TEST_DONE();
}
