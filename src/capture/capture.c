/* capture.c - run a capture or an agent: a session and a delivery (see
 * capture.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/agent.h"
#include "capture/capture.h"
#include "capture/delivery.h"
#include "capture/session.h"
#include "capture/status.h"
#include "collect/sampler.h"
#include "util/log.h"

struct run {
	const struct capture_opts *o;
	struct delivery *d;
	struct agent *agent;
	bool closed; /* the session ran to its end (session__close()) */
};

void capture__default_opts(struct capture_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->seconds = 10;
	o->freq_hz = 99;
	o->user = o->kernel = o->idle = o->unwind = true;
	o->off_cpu_min_ns = SAMPLER_OFFCPU_MIN_NS;
}

/* `capture`: its one window gets a summary, then goes to the outputs. */
static int capture_window(void *ctx, const struct session_window *w)
{
	struct run *r = ctx;

	if (!r->o->quiet)
		status__summary(&w->status);
	return delivery__deliver_profile(r->d, w->prof, w->otlp, w->t_unix_ns,
					 DELIVERY_LAST | (w->signalled ? DELIVERY_URGENT : 0));
}

static int run_window(void *ctx, const struct session_window *w)
{
	struct run *r = ctx;

	return r->agent ? agent__window(r->agent, w) : capture_window(r, w);
}

static void run_hup(void *ctx)
{
	struct run *r = ctx;

	if (r->d)
		delivery__reopen(r->d);
}

static void run_started(void *ctx)
{
	struct run *r = ctx;

	if (r->o->agent)
		status__start(r->o->interval, r->o->json, r->o->quiet);
}

static int run(struct run *r, struct session **sp)
{
	const struct capture_opts *o = r->o;
	struct session_hooks hooks = {
		.window = run_window, .hup = run_hup, .started = run_started, .ctx = r};
	struct delivery_opts dopts;
	__s64 wake;
	int ret;

	ret = session__open(o, &hooks, sp);
	if (ret)
		return ret;
	/* Fail on a bad output or endpoint before sampling, not after. */
	dopts = (struct delivery_opts){
		.output = o->output,
		.output_dir = o->output_dir,
		.max_dir_bytes = o->max_dir_bytes,
		.format = o->format,
		.export = &o->export,
		.host = session__host(*sp),
		.per_window = o->agent,
		.quiet = o->quiet,
	};
	ret = delivery__open(&dopts, &r->d);
	if (ret)
		return ret;
	if (o->agent) {
		r->agent = agent__new(o, r->d);
		if (!r->agent)
			return 1;
	}
	ret = session__start(*sp);
	if (ret)
		return ret;
	while ((wake = session__step(*sp)) >= 0)
		session__wait(*sp, wake);
	ret = session__close(*sp);
	r->closed = true;
	return o->agent ? agent__finish(r->agent, ret) : ret;
}

int capture__run(const struct capture_opts *o)
{
	struct run r = {.o = o};
	struct session *s = NULL;
	int ret;

	log__set_level(o->verbose ? LOG_VERBOSE : o->quiet ? LOG_QUIET : LOG_NORMAL);
	ret = run(&r, &s);
	if (delivery__worker_busy(r.d)) {
		/* Everything waiting is spooled; the export thread is still in
		 * libcurl, where exit()'s clean-up must not run. */
		fflush(NULL);
		_exit(ret);
	}
	/* A capture that ran to its end has handed its profile to the
	 * delivery: the session holds only memory, descriptors and BPF links
	 * now, which the exit that follows gives back at once. Freed one by
	 * one they cost tens of ms (an munmap each, with a TLB shootdown). */
	if (o->agent || !r.closed)
		session__free(s);
	agent__free(r.agent);
	delivery__free(r.d);
	return ret;
}
