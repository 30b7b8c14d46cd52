/* capture.h - what `profcap capture` and `profcap agent` run: the options
 * both commands fill in (cli/capture_cmd.c, cli/agent_cmd.c) and the run
 * itself, which ties a sampling session (session.c) to one delivery policy
 * (delivery.c). `capture` is one window; `agent` (agent.c) is back-to-back
 * windows with the BPF program loaded once.
 */
#ifndef PROFCAP_CAPTURE_H
#define PROFCAP_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "collect/sampler_memory.h"
#include "collect/target.h"
#include "export/otlp_config.h"
#include "formats/format.h"

#define CAPTURE_MAX_SECONDS (7.0 * 24 * 3600)

#define CAPTURE_MAX_DEBUG_DIRS 8

struct capture_opts {
	double seconds;		   /* capture length, > 0; 0 = until CMD exits (with @cmd) */
	__u32 freq_hz;		   /* samples per second per CPU */
	struct target_opts target; /* what to profile; nothing set = every process */
	char **cmd;		   /* `-- CMD ARGS...` (NULL-terminated, from argv) or NULL */
	bool user, kernel, idle;
	bool unwind;	    /* table unwinding of user stacks (default; --no-unwind) */
	/* off-CPU profiles */
	bool off_cpu;	       /* also an off-CPU profile per process */
	__u64 off_cpu_min_ns;  /* --off-cpu-threshold: shorter waits are only counted */
	bool off_cpu_runnable; /* --off-cpu-runnable: also time spent waiting for a CPU */
	bool timestamps;       /* --timestamps: each sample's time and CPU (docs/time_capture.md) */
	bool memory;		      /* --memory: memory profiles (capture/memory.h) */
	struct memory_opts memory_opts; /* ... and their options */
	const char *output; /* NULL = default name, unless exporting only */
	bool quiet, verbose;
	enum format format;	  /* of the file output; exports are always OTLP */
	bool format_set;	  /* --format given (else capture infers it from -o) */
	struct otlp_flags export; /* --endpoint & co, merged with OTEL_* later */
	/* agent mode (agent.c) */
	bool agent;
	double interval;	/* window length in seconds */
	const char *output_dir; /* one file per window; NULL = none */
	__u64 max_dir_bytes;	/* oldest window files go beyond this */
	bool json;		/* status lines as JSON objects */
	/* --debug-dir: more directories to find debug files in (host paths) */
	const char *debug_dirs[CAPTURE_MAX_DEBUG_DIRS];
	size_t ndebug_dirs;
};

/* Reset @o to the defaults both `capture` and `agent` start from: 99 Hz,
 * user and kernel stacks, idle samples, table unwinding, 10 s, no off-CPU
 * (threshold 100 us when asked). Cannot fail. */
void capture__default_opts(struct capture_opts *o);

/* Run the capture (or, with @o->agent, the agent) for @o; returns the
 * process exit code: 0 captured and delivered, 1 capture failure, 2 bad
 * target or export configuration, 3 captured but not delivered to the
 * endpoint (kept in the file or the spool directory). A capture (not the
 * agent) that ran to its end leaves its session's memory, descriptors and
 * BPF programs to the exit that is to follow: call it once per process. */
int capture__run(const struct capture_opts *o);

#endif
