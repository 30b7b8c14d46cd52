/* php.h - the PHP processes of a session (main thread): found when they
 * are announced (or named with -p), handed to the BPF walker
 * (sampler__set_php()) and to the namer of PHP frames
 * (symbolize/phpframes.h), forgotten when they exec() something else or
 * exit. docs/php.md.
 */
#ifndef PROFCAP_CAPTURE_PHP_H
#define PROFCAP_CAPTURE_PHP_H

#include <linux/types.h>

struct capture_php;
struct phpframes;
struct procsnap;
struct sampler;

/* PHP processes a session keeps at once (the BPF walker's own cap). */
#define CAPTURE_PHP_PROCS 4096

/* For the sessions of sampler @smp (borrowed). NULL on ENOMEM. */
struct capture_php *capture_php__new(struct sampler *smp);
void capture_php__free(struct capture_php *cp);

/* The frame namer, for ingest (NULL with @cp NULL). */
struct phpframes *capture_php__frames(struct capture_php *cp);

/* Process @pid was announced, or exec()ed (@snap: its snapshot, or NULL).
 * 1 when it runs PHP (now), 0 when not. */
int capture_php__process(struct capture_php *cp, int pid, const struct procsnap *snap);

/* Forget the PHP processes that have exited (after their last records). */
void capture_php__forget_gone(struct capture_php *cp);

/* -v: PHP processes found, walked, not walked; what the namer did. */
void capture_php__log(const struct capture_php *cp);

#endif
