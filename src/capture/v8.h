/* v8.h - the V8 (Node.js) processes of a session (main thread): found when
 * they are announced (or named with -p), handed to the BPF walker
 * (sampler__set_v8()) and to the namer of JavaScript frames
 * (symbolize/v8frames.h), forgotten when they exec() something else or
 * exit. docs/v8.md.
 */
#ifndef PROFCAP_CAPTURE_V8_H
#define PROFCAP_CAPTURE_V8_H

#include <linux/types.h>

struct capture_v8;
struct procsnap;
struct sampler;
struct v8frames;

/* V8 processes a session keeps at once (the BPF walker's own cap). */
#define CAPTURE_V8_PROCS 4096

/* For the sessions of sampler @smp (borrowed). NULL on ENOMEM. */
struct capture_v8 *capture_v8__new(struct sampler *smp);
void capture_v8__free(struct capture_v8 *cv);

/* The frame namer, for ingest (NULL with @cv NULL). */
struct v8frames *capture_v8__frames(struct capture_v8 *cv);

/* Process @pid was announced, or exec()ed (@snap: its snapshot, or NULL).
 * 1 when it runs V8 (now), 0 when not. */
int capture_v8__process(struct capture_v8 *cv, int pid, const struct procsnap *snap);

/* Forget the V8 processes that have exited (after their last records). */
void capture_v8__forget_gone(struct capture_v8 *cv);

/* -v: V8 processes found, walked, not walked; what the namer did. */
void capture_v8__log(const struct capture_v8 *cv);

#endif
