/* agent_cmd.c - `profcap agent`: options, then capture__run() in agent
 * mode (see agent_cmd.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/agent.h"
#include "cli/agent_cmd.h"
#include "cli/capture_cmd.h"
#include "util/env.h"
#include "util/log.h"

#define usage_error(...) log__usage_error("agent", __VA_ARGS__)

void agent_cmd__usage(void)
{
	printf("Usage: profcap agent [--interval 60s] [--output-dir DIR] [--endpoint URL] "
	       "[options]\n"
	       "\n"
	       "Profile continuously in back-to-back windows with the BPF program loaded\n"
	       "once. Each window becomes one OTLP Profiles file in --output-dir and/or one\n"
	       "export to the endpoint (an export that fails is retried, then spooled).\n"
	       "\n"
	       "Options:\n"
	       "      --interval T   window length: 60s (default), 500ms, 5m, or seconds\n"
	       "      --output-dir DIR  one file per window, profcap-<host>-<UTC time>.pb\n"
	       "      --max-dir-size N  keep the window files in DIR under N bytes (K, M, G\n"
	       "                     suffixes; default 256M): the oldest go first\n"
	       "      --format F     file format: otlp (default), otlp-json, pprof, folded, svg\n"
	       "      --json         status lines on stderr as JSON objects\n"
	       CAPTURE_CMD_SAMPLING_HELP
	       "      --off-cpu      also an off_cpu profile (nanoseconds blocked) per\n"
	       "                     process and window\n"
	       "      --off-cpu-threshold DUR  shorter waits are only counted (default 100us)\n"
	       "      --off-cpu-runnable  also count time preempted threads wait for a CPU\n"
	       "      --timestamps   keep each sample's time and CPU in the profiles\n"
	       "      --memory       also memory profiles of -p PID (-a --memory: every\n"
	       "                     process) per window: alloc_space, alloc_objects, and the\n"
	       "                     heap live at each window's end, inuse_space and\n"
	       "                     inuse_objects. Every malloc and free traps to the kernel:\n"
	       "                     ~13 us a call measured on a VM (docs/memory.md)\n"
	       "      --memory-rate N  mean bytes between sampled allocations (default 512K;\n"
	       "                     K, M suffixes)\n"
	       "      --no-unwind    user stacks from frame pointers only (no .eh_frame\n"
	       "                     tables)\n"
	       "      --debug-dir DIR  also find debug files in DIR (like /usr/lib/debug);\n"
	       "                     repeatable\n"
	       "  -q, --quiet        no status lines (errors only)\n"
	       "  -v, --verbose      debug detail\n"
	       "  -h, --help         this help\n"
	       "\n"
	       "Export to an OTLP endpoint (flags win over OTEL_EXPORTER_OTLP_* variables):\n"
	       "%s"
	       "\n"
	       "SIGTERM or SIGINT ends the agent after delivering the current window;\n"
	       "SIGHUP re-creates --output-dir if it was removed. One status line per window\n"
	       "goes to stderr (samples, files, exports, failures, spooled, dropped, RSS).\n",
	       target__usage, otlp_config__usage);
}

/* "60s", "500ms", "5m", "1h" or a plain number of seconds. */
static int parse_interval(const char *arg, double *out)
{
	char *end;
	double d, mult = 1;

	errno = 0;
	d = strtod(arg, &end);
	if (end == arg || errno)
		return -EINVAL;
	if (!strcmp(end, "ms"))
		mult = 1e-3;
	else if (!strcmp(end, "m"))
		mult = 60;
	else if (!strcmp(end, "h"))
		mult = 3600;
	else if (*end && strcmp(end, "s"))
		return -EINVAL;
	d *= mult;
	if (!(d >= 0.2) || d > 24 * 3600)
		return -EINVAL;
	*out = d;
	return 0;
}

static int parse_size(const char *arg, __u64 *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (end == arg || errno || *arg == '-')
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M')
		shift = 20;
	else if (*end == 'G')
		shift = 30;
	else if (*end)
		return -EINVAL;
	if (shift && end[1])
		return -EINVAL;
	if (!v || v > (~0ull >> shift) || (v << shift) < 4096)
		return -EINVAL;
	*out = v << shift;
	return 0;
}

enum {
	OPT_INTERVAL = 256,
	OPT_OUTPUT_DIR,
	OPT_MAX_DIR,
	OPT_JSON,
	OPT_MEMORY,
	OPT_MEMORY_RATE,
	OPT_TIMESTAMPS,
};

static int agent_opt(int c, const char *arg, void *ctx)
{
	struct capture_opts *o = ctx;

	switch (c) {
	case OPT_INTERVAL:
		if (parse_interval(arg, &o->interval))
			return usage_error("invalid --interval '%s': expected a duration "
					   "from 200ms to 24h, like 60s, 500ms or 5m",
					   arg);
		return 0;
	case OPT_OUTPUT_DIR:
		if (!*arg)
			return usage_error("--output-dir needs a directory");
		o->output_dir = arg;
		return 0;
	case OPT_MAX_DIR:
		if (parse_size(arg, &o->max_dir_bytes))
			return usage_error("invalid --max-dir-size '%s': expected bytes "
					   "(at least 4096) with an optional K, M or G "
					   "suffix",
					   arg);
		return 0;
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_MEMORY:
		o->memory = true;
		return 0;
	case OPT_TIMESTAMPS:
		o->timestamps = true;
		return 0;
	case OPT_MEMORY_RATE:
		if (parse_size(arg, &o->memory_opts.rate) || o->memory_opts.rate > (4ull << 30))
			return usage_error("invalid --memory-rate '%s': expected bytes from 4096 to "
					   "4G with an optional K, M or G suffix",
					   arg);
		o->memory = true;
		return 0;
	default:
		return -ENOENT;
	}
}

int agent_cmd__parse_args(int argc, char **argv, struct capture_opts *o)
{
	static const struct option longopts[] = {
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"output-dir", required_argument, NULL, OPT_OUTPUT_DIR},
		{"max-dir-size", required_argument, NULL, OPT_MAX_DIR},
		{"json", no_argument, NULL, OPT_JSON},
		{"memory", no_argument, NULL, OPT_MEMORY},
		{"memory-rate", required_argument, NULL, OPT_MEMORY_RATE},
		{"timestamps", no_argument, NULL, OPT_TIMESTAMPS},
		CAPTURE_COMMON_LONGOPTS,
		{0},
	};
	const struct capture_cmd_syntax sx = {
		.cmd = "agent",
		.shortopts = ":F:ap:qvh",
		.longopts = longopts,
		.usage = agent_cmd__usage,
		.own = agent_opt,
		.ctx = o,
	};
	const char *env_ep;
	bool all = false;
	int err;

	capture__default_opts(o);
	o->agent = true;
	o->seconds = 0; /* no end: windows until a signal */
	o->interval = 60;
	o->max_dir_bytes = AGENT_DEFAULT_MAX_DIR_BYTES;

	err = capture_cmd__options(&sx, argc, argv, o, &all);
	if (err)
		return err;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (all && target__any(&o->target))
		return usage_error("-a excludes -p/--tid/--comm/--cgroup/--container: pick all "
				   "processes or a filter");
	if (o->memory && !all && !target__any(&o->target))
		return usage_error("--memory needs -p PID (or a filter); every process (-a "
				   "--memory) makes each allocation on the host trap to the kernel: "
				   "give -a to mean it");
	o->memory_opts.system_wide = o->memory && !o->target.npids;
	if (!o->user && !o->kernel)
		return usage_error("--no-user and --no-kernel together leave nothing to sample");
	env_ep = env__get(env__process(), "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT");
	if (!env_ep)
		env_ep = env__get(env__process(), "OTEL_EXPORTER_OTLP_ENDPOINT");
	if (!o->output_dir && !o->export.endpoint && !env_ep)
		return usage_error("nowhere to deliver: give --output-dir DIR and/or --endpoint "
				   "URL (or set OTEL_EXPORTER_OTLP_ENDPOINT)");
	if (o->format != FORMAT_OTLP && !o->output_dir)
		return usage_error("--format applies to the --output-dir files: add --output-dir");
	return 0;
}

int agent_cmd__main(int argc, char **argv)
{
	return capture_cmd__run(agent_cmd__parse_args, argc, argv);
}
