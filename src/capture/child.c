/* child.c - the `-- CMD` child (see child.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/child.h"
#include "util/log.h"

struct child {
	char *const *argv;
	pid_t pid;
	int go_fd;  /* write end of the hold pipe; -1 once released */
	int status; /* wait status, once reaped */
	bool done;
};

int child__spawn(char *const *argv, struct child **out)
{
	struct child *c;
	int fds[2];
	char b;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	c->argv = argv;
	if (pipe2(fds, O_CLOEXEC)) {
		pr_err("cannot start '%s': pipe: %s", argv[0], strerror(errno));
		free(c);
		return -EMFILE;
	}
	c->pid = fork();
	if (c->pid < 0) {
		pr_err("cannot start '%s': fork: %s", argv[0], strerror(errno));
		close(fds[0]);
		close(fds[1]);
		free(c);
		return -EAGAIN;
	}
	if (c->pid == 0) {
		close(fds[1]);
		/* EOF without a byte: profcap failed before sampling began. */
		if (read(fds[0], &b, 1) != 1)
			_exit(127);
		close(fds[0]);
		execvp(argv[0], argv);
		fprintf(stderr, "profcap: error: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	c->go_fd = fds[1];
	*out = c;
	return 0;
}

pid_t child__pid(const struct child *c)
{
	return c->pid;
}

void child__release(struct child *c)
{
	if (c->go_fd < 0)
		return;
	if (write(c->go_fd, "g", 1) != 1)
		pr_warn("cannot start '%s': %s", c->argv[0], strerror(errno));
	close(c->go_fd);
	c->go_fd = -1;
}

static void reap(struct child *c, bool block)
{
	int st;
	pid_t r;

	if (c->done)
		return;
	do
		r = waitpid(c->pid, &st, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == c->pid) {
		c->status = st;
		c->done = true;
	}
}

bool child__done(struct child *c)
{
	reap(c, false);
	return c->done;
}

void child__signal(struct child *c, int sig)
{
	if (!child__done(c))
		kill(c->pid, sig);
}

void child__finish(struct child *c, bool quiet)
{
	const char *name = c->argv[0];

	if (!child__done(c)) {
		if (!quiet)
			pr_info("waiting for '%s' (pid %d) to exit", name, (int)c->pid);
		reap(c, true);
	}
	if (!c->done)
		return;
	if (WIFEXITED(c->status))
		pr_info("'%s' (pid %d) exited with status %d", name, (int)c->pid,
			WEXITSTATUS(c->status));
	else if (WIFSIGNALED(c->status))
		pr_info("'%s' (pid %d) was killed by signal %d (%s)", name, (int)c->pid,
			WTERMSIG(c->status), strsignal(WTERMSIG(c->status)));
}

void child__free(struct child *c)
{
	if (!c)
		return;
	if (c->go_fd >= 0) {
		close(c->go_fd); /* the held child exits 127 without running CMD */
		c->go_fd = -1;
		reap(c, true);
	}
	free(c);
}
