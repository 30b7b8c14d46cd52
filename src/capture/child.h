/* child.h - the `-- CMD` child of `profcap capture`.
 *
 * The child is forked at once but held on a pipe until sampling is attached
 * (child__release()), so CMD's first instructions are profiled. If profcap
 * fails before that, child__free() closes the pipe: the held child exits
 * 127 without running CMD and is reaped. The clean-up lives here only.
 */
#ifndef PROFCAP_CHILD_H
#define PROFCAP_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

struct child;

/* Fork the child for @argv (NULL-terminated, borrowed until exec). *@out
 * is set on success; 0 or -errno after logging one line. */
int child__spawn(char *const *argv, struct child **out);

/* The child's pid. */
pid_t child__pid(const struct child *c);

/* Let the held child exec CMD and wait until it has: 0 once CMD runs, or
 * execvp()'s -errno after logging one line with the cause (the child then
 * exits with child__shell_status()). */
int child__release(struct child *c);

/* The exit status a shell gives a command that could not be run for
 * -errno @err: 127 when it was not found, 126 otherwise. */
int child__shell_status(int err);

/* Before any work: can @name (a path, or a name looked up in $PATH) be
 * executed? 0, or -errno after logging one line with the cause and a
 * hint (-ENOENT: not found; -EACCES: found but not executable). */
int child__check(const char *name);

/* Reap without blocking; true once the child has exited. */
bool child__done(struct child *c);

/* Send @sig to a child that still runs (SIGTERM forwarding). */
void child__signal(struct child *c, int sig);

/* Stop waiting for the child? Asked while child__finish() waits: every
 * CHILD_WAIT_STEP_MS and at each signal. */
typedef bool (*child_give_up_fn)(void *ctx);

#define CHILD_WAIT_STEP_MS 50

/* Wait for the child to exit (saying so unless @quiet), then print its exit
 * status line ("'CMD' (pid N) exited with status S" or "was killed by
 * signal"). @give_up (NULL: never) ends the wait early: the child is left
 * running, and one line says so. */
void child__finish(struct child *c, bool quiet, child_give_up_fn give_up, void *ctx);

/* Free @c; a child still held on the pipe is let go (exits 127 without
 * running CMD) and reaped. Accepts NULL. */
void child__free(struct child *c);

#endif
