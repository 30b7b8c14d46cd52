/* agent.h - continuous profiling: the window-edge hook of a session that
 * runs back-to-back windows (one BPF load). Each window is delivered (a
 * file in --output-dir under a size cap and/or an export), and one status
 * line per window says where every window went.
 */
#ifndef PROFCAP_AGENT_H
#define PROFCAP_AGENT_H

#include "capture/capture.h"
#include "capture/delivery.h"
#include "capture/session.h"

#define AGENT_DEFAULT_MAX_DIR_BYTES (256ull << 20)

struct agent;

/* An agent delivering through @d (borrowed), options @o (borrowed). NULL
 * when out of memory (logged). */
struct agent *agent__new(const struct capture_opts *o, struct delivery *d);

/* The session's window hook (@ctx is the agent): deliver the window, print
 * its status line. Returns the delivery's exit code. */
int agent__window(void *ctx, const struct session_window *w);

/* The run ended, its last window's delivery returned @ret: wait for the
 * exports still under way (bounded), print the closing status line.
 * Returns the agent's exit code: 1 when any window was rescued or lost,
 * else 3 when the last window is kept on disk, else 0. */
int agent__finish(struct agent *a, int ret);

/* Free @a. Accepts NULL. */
void agent__free(struct agent *a);

#endif
