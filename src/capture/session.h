/* session.h - one sampling session: the BPF sampler, the symbolizer and the
 * profile model, from start to the last drained sample.
 *
 * A session runs in windows. `capture` has one window, closed by
 * session__close(); `agent` sets an interval and gets a window-edge callback
 * for each window (session_hooks.window), the BPF program loaded once. The
 * caller drives it:
 *
 *	session__open()     resolve targets, check privileges
 *	session__start()    load BPF, start CMD, begin sampling
 *	while ((wake = session__step(s)) >= 0)
 *		session__wait(s, wake);
 *	session__close()    final drain, the last window, CMD's exit status
 *
 * SIGINT/SIGTERM end the session (the last window is still delivered);
 * SIGHUP calls session_hooks.hup.
 */
#ifndef PROFCAP_SESSION_H
#define PROFCAP_SESSION_H

#include <stdbool.h>
#include <linux/types.h>

#include "capture/capture.h"
#include "capture/status.h"
#include "model/profile.h"
#include "util/buf.h"

/* A finished window, handed to session_hooks.window. Everything borrowed
 * for the call. */
struct session_window {
	const struct profile *prof; /* the window's profile (meta set, pruned) */
	const struct buf *otlp;	    /* its OTLP encoding */
	__s64 t_unix_ns;	    /* when the window started */
	struct status_window status;
	bool final;	/* the session's last window */
	bool signalled; /* ...ended by SIGINT/SIGTERM: deliver it quickly */
};

struct session_hooks {
	/* A window ended; returns its delivery's exit code (0, 1, 3). */
	int (*window)(void *ctx, const struct session_window *w);
	/* SIGHUP arrived (may be NULL). */
	void (*hup)(void *ctx);
	/* Sampling has begun: the first window starts now (may be NULL). */
	void (*started)(void *ctx);
	void *ctx;
};

struct session;

/* Install the signal handlers, resolve @o's targets (borrowed for the
 * session's life) and check privileges. 0 with *@out set, or an exit code
 * (1 failure, 2 bad target) after one error line. */
int session__open(const struct capture_opts *o, const struct session_hooks *hooks,
		  struct session **out);

/* The host name (uname) windows are labelled with. */
const char *session__host(const struct session *s);

/* Load the BPF program, start CMD (held until sampling is attached), begin
 * sampling. 0 or an exit code after one error line. */
int session__start(struct session *s);

/* Do what is due now (drain, progress, window edge, SIGHUP). Returns the
 * next wake time (CLOCK_MONOTONIC ns), or -1 when the session is over
 * (deadline, signal, CMD exited, or a fatal error). */
__s64 session__step(struct session *s);

/* Wait for new-process notices until @wake (or a signal). */
void session__wait(struct session *s, __s64 wake);

/* Stop sampling, drain everything, hand over the last window, wait for CMD.
 * Returns the last window's exit code. */
int session__close(struct session *s);

/* Free @s. Accepts NULL. */
void session__free(struct session *s);

#endif
