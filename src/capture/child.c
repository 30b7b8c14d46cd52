/* child.c - the `-- CMD` child (see child.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/child.h"
#include "util/env.h"
#include "util/log.h"

struct child {
	char *const *argv;
	pid_t pid;
	int go_fd;  /* write end of the hold pipe; -1 once released */
	int err_fd; /* read end of the exec-error pipe; -1 once read */
	int status; /* wait status, once reaped */
	bool done;
};

int child__spawn(char *const *argv, struct child **out)
{
	struct child *c;
	int fds[2], efds[2];
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
	/* The exec-error pipe closes at a successful exec (close-on-exec):
	 * EOF means CMD runs, an int is execvp()'s errno. */
	if (pipe2(efds, O_CLOEXEC)) {
		pr_err("cannot start '%s': pipe: %s", argv[0], strerror(errno));
		close(fds[0]);
		close(fds[1]);
		free(c);
		return -EMFILE;
	}
	c->pid = fork();
	if (c->pid < 0) {
		pr_err("cannot start '%s': fork: %s", argv[0], strerror(errno));
		close(fds[0]);
		close(fds[1]);
		close(efds[0]);
		close(efds[1]);
		free(c);
		return -EAGAIN;
	}
	if (c->pid == 0) {
		int e;

		close(fds[1]);
		close(efds[0]);
		/* EOF without a byte: profcap failed before sampling began. */
		if (read(fds[0], &b, 1) != 1)
			_exit(127);
		close(fds[0]);
		execvp(argv[0], argv);
		e = errno;
		if (write(efds[1], &e, sizeof(e)) != sizeof(e))
			_exit(127);
		_exit(child__shell_status(-e));
	}
	close(fds[0]);
	close(efds[1]);
	c->go_fd = fds[1];
	c->err_fd = efds[0];
	*out = c;
	return 0;
}

pid_t child__pid(const struct child *c)
{
	return c->pid;
}

int child__shell_status(int err)
{
	return err == -ENOENT || err == -ENOTDIR ? 127 : 126;
}

/* Why CMD could not be run, in words for the operator. */
static const char *exec_hint(int err)
{
	switch (err) {
	case -ENOENT:
		return "check the path, $PATH, or a script's #! interpreter";
	case -EACCES:
		return "no execute permission (chmod +x), or a directory on the way";
	case -EISDIR:
		return "a directory, not a program";
	case -ENOEXEC:
		return "not a program for this machine, nor a script with a #! line";
	default:
		return "check the command";
	}
}

int child__release(struct child *c)
{
	int e = 0, err = 0;
	ssize_t n;

	if (c->go_fd < 0)
		return 0;
	if (write(c->go_fd, "g", 1) != 1)
		pr_warn("cannot start '%s': %s", c->argv[0], strerror(errno));
	close(c->go_fd);
	c->go_fd = -1;
	do
		n = read(c->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (n == sizeof(e) && e > 0) {
		err = -e;
		pr_err("cannot run '%s': %s: %s", c->argv[0], strerror(e), exec_hint(err));
	}
	return err;
}

/* Is @path executable: 0, or -errno (-EISDIR for a directory). */
static int executable(const char *path)
{
	struct stat st;

	if (access(path, X_OK))
		return -errno;
	return !stat(path, &st) && S_ISDIR(st.st_mode) ? -EISDIR : 0;
}

int child__check(const char *name)
{
	const char *path = env__get(env__process(), "PATH"), *p, *end;
	char full[4096];
	int err = -ENOENT, e;

	if (strchr(name, '/')) {
		err = executable(name);
	} else {
		if (!path || !*path)
			path = "/usr/local/bin:/bin:/usr/bin";
		for (p = path; *p && err; p = *end ? end + 1 : end) {
			end = strchrnul(p, ':');
			snprintf(full, sizeof(full), "%.*s/%s", (int)(end - p), end > p ? p : ".",
				 name);
			e = executable(full);
			if (e != -ENOENT && e != -ENOTDIR)
				err = e; /* found: runnable, or why not (unless found later) */
		}
	}
	if (err)
		pr_err("cannot run '%s': %s: %s", name, strerror(-err), exec_hint(err));
	return err;
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

void child__finish(struct child *c, bool quiet, child_give_up_fn give_up, void *ctx)
{
	const struct timespec step = {0, CHILD_WAIT_STEP_MS * 1000000L};
	const char *name = c->argv[0];

	if (!child__done(c)) {
		if (!quiet)
			pr_info("waiting for '%s' (pid %d) to exit", name, (int)c->pid);
		if (!give_up)
			reap(c, true);
		/* A signal (SIGCHLD among them) cuts the sleep short. */
		while (give_up && !child__done(c) && !give_up(ctx))
			nanosleep(&step, NULL);
	}
	if (!c->done) {
		pr_info("not waiting for '%s' (pid %d): it still runs", name, (int)c->pid);
		return;
	}
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
	if (c->err_fd >= 0)
		close(c->err_fd);
	free(c);
}
