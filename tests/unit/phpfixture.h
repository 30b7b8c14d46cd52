/* phpfixture.h - a PHP process for the unit tests: /usr/bin/php8.2 -n
 * running a script that sleeps in usleep() inside sleeper(), started and
 * stopped by the test. */
#ifndef PROFCAP_PHPFIXTURE_H
#define PROFCAP_PHPFIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PHPFX_PHP "/usr/bin/php8.2"
/* Lines: sleeper() is declared on 2, calls usleep() on 4; the top level
 * calls sleeper() on 8. */
#define PHPFX_SCRIPT                     \
	"<?php\n"                        \
	"function sleeper()\n"           \
	"{\n"                            \
	"    usleep(200000);\n"          \
	"}\n"                            \
	"echo \"ready\\n\"; flush();\n"  \
	"for ($i = 0; $i < 300; $i++)\n" \
	"    sleeper();\n"

struct phpfx {
	pid_t pid;
	char path[64];	 /* the script */
	char dir[64];	 /* with a hidden php: its tmpfs, "" when none */
	char hidden[80]; /* ... the php, a path only its mount namespace has */
};

/* In the child: a mount namespace of its own with a tmpfs on fx->dir and
 * a copy of the php in it, then run it. Exits 126 when refused. */
static inline void phpfx__exec_hidden(const struct phpfx *fx)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", fx->dir, "tmpfs", 0, "size=64m"))
		_exit(126);
	in = open(PHPFX_PHP, O_RDONLY);
	out = open(fx->hidden, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (in < 0 || out < 0)
		_exit(126);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			_exit(126);
	close(in);
	close(out);
	execl(fx->hidden, fx->hidden, "-n", fx->path, (char *)NULL);
	_exit(127);
}

/* Start the fixture (@hidden: from a copy of the php only its own mount
 * namespace has, as in a container): 0; -ENOENT (no php), -EPERM (no
 * mount namespace here) or -1; then the caller skips or fails. */
static inline int phpfx__start_in(struct phpfx *fx, bool hidden)
{
	char line[16] = {0};
	int fd, p[2], st;
	FILE *f;

	memset(fx, 0, sizeof(*fx));
	if (access(PHPFX_PHP, X_OK))
		return -ENOENT;
	snprintf(fx->path, sizeof(fx->path), "/tmp/profcap_phpfx_XXXXXX");
	fd = mkstemp(fx->path);
	if (fd < 0)
		return -1;
	if (hidden) {
		snprintf(fx->dir, sizeof(fx->dir), "/tmp/profcap_phpns_XXXXXX");
		if (!mkdtemp(fx->dir)) {
			close(fd);
			unlink(fx->path);
			return -1;
		}
		snprintf(fx->hidden, sizeof(fx->hidden), "%s/php8.2", fx->dir);
	}
	if (write(fd, PHPFX_SCRIPT, strlen(PHPFX_SCRIPT)) != (ssize_t)strlen(PHPFX_SCRIPT) ||
	    pipe(p)) {
		close(fd);
		unlink(fx->path);
		return -1;
	}
	close(fd);
	fx->pid = fork();
	if (fx->pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		if (hidden)
			phpfx__exec_hidden(fx);
		execl(PHPFX_PHP, PHPFX_PHP, "-n", fx->path, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	if (fx->pid < 0 || !f || !fgets(line, sizeof(line), f) || strcmp(line, "ready\n")) {
		int err = -1;

		if (f)
			fclose(f);
		if (fx->pid > 0) {
			kill(fx->pid, SIGKILL);
			if (waitpid(fx->pid, &st, 0) > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 126)
				err = -EPERM;
		}
		unlink(fx->path);
		if (fx->dir[0])
			rmdir(fx->dir);
		return err;
	}
	fclose(f);
	usleep(50000); /* into the first usleep() */
	return 0;
}

/* Start the fixture from the installed php: 0, or -1 (then the caller
 * skips). */
static inline int phpfx__start(struct phpfx *fx)
{
	return phpfx__start_in(fx, false) ? -1 : 0;
}

static inline void phpfx__stop(struct phpfx *fx)
{
	kill(fx->pid, SIGKILL);
	waitpid(fx->pid, NULL, 0);
	unlink(fx->path);
	if (fx->dir[0])
		rmdir(fx->dir);
}

#endif
