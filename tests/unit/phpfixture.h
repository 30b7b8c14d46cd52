/* phpfixture.h - a PHP process for the unit tests: /usr/bin/php8.2 -n
 * running a script that sleeps in usleep() inside sleeper(), started and
 * stopped by the test. */
#ifndef PROFCAP_PHPFIXTURE_H
#define PROFCAP_PHPFIXTURE_H

#include <signal.h>
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
	char path[64];
};

/* Start the fixture: 0, or -1 (then the caller skips). */
static inline int phpfx__start(struct phpfx *fx)
{
	char line[16] = {0};
	int fd, p[2];
	FILE *f;

	if (access(PHPFX_PHP, X_OK))
		return -1;
	snprintf(fx->path, sizeof(fx->path), "/tmp/profcap_phpfx_XXXXXX");
	fd = mkstemp(fx->path);
	if (fd < 0)
		return -1;
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
		execl(PHPFX_PHP, PHPFX_PHP, "-n", fx->path, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	if (fx->pid < 0 || !f || !fgets(line, sizeof(line), f) || strcmp(line, "ready\n")) {
		if (f)
			fclose(f);
		if (fx->pid > 0) {
			kill(fx->pid, SIGKILL);
			waitpid(fx->pid, NULL, 0);
		}
		unlink(fx->path);
		return -1;
	}
	fclose(f);
	usleep(50000); /* into the first usleep() */
	return 0;
}

static inline void phpfx__stop(struct phpfx *fx)
{
	kill(fx->pid, SIGKILL);
	waitpid(fx->pid, NULL, 0);
	unlink(fx->path);
}

#endif
