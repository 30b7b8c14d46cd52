/* capture_cmd.c - `profcap capture`: options, then capture__run() (see
 * capture_cmd.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "capture/child.h"
#include "cli/args.h"
#include "cli/capture_cmd.h"
#include "util/env.h"
#include "util/fdio.h"
#include "util/log.h"

void capture_cmd__usage(void)
{
	printf("Usage: profcap capture [options] [-- CMD [ARGS...]]\n"
	       "\n"
	       "Sample CPU stacks (user and kernel) with eBPF and write an OpenTelemetry\n"
	       "OTLP Profiles file (one serialized ProfilesData message).\n"
	       "With -- CMD, start CMD (it keeps the terminal) and profile it and every\n"
	       "process it starts until it exits (or --seconds ends).\n"
	       "\n"
	       "Options:\n"
	       "  --seconds N        capture length in seconds (default 10, or until CMD exits;\n"
	       "                     decimals allowed)\n" CAPTURE_CMD_SAMPLING_HELP
	       "      --off-cpu      also profile where threads wait: an off_cpu profile\n"
	       "                     (nanoseconds blocked) per process beside the CPU one\n"
	       "      --off-cpu-threshold DUR  waits shorter than DUR are only counted, not\n"
	       "                     walked (default 100us; 0 = every wait)\n"
	       "      --off-cpu-runnable  also count time preempted threads wait for a CPU\n"
	       "      --timestamps   keep each sample's time and CPU (and each kept wait's\n"
	       "                     start and length) in the profile (docs/time_capture.md)\n"
	       "      --memory       also memory profiles of -p PID or -- CMD (-a --memory: every\n"
	       "                     process): uprobes on their allocators, sampled by bytes;\n"
	       "                     alloc_space, alloc_objects, inuse_space, inuse_objects.\n"
	       "                     Every malloc and free then traps to the kernel, sampled\n"
	       "                     or not: measured ~13 us a call on a 2-CPU VM, of which\n"
	       "                     BPF 0.1-0.3 us; xz -9 ran 1.23x slower (docs/memory.md)\n"
	       "      --memory-rate BYTES  mean bytes between sampled allocations (default\n"
	       "                     512KiB; suffixes KiB, MiB)\n"
	       "      --memory-mmap  also count anonymous mmap()s (glibc's own, for a large\n"
	       "                     malloc, then count twice)\n"
	       "      --no-unwind    user stacks from frame pointers only (no .eh_frame\n"
	       "                     tables)\n"
	       "      --debug-dir DIR  also find debug files in DIR (DIR/.build-id/xx/\n"
	       "                     rest.debug, DIR/<binary dir>/<debuglink>); repeatable.\n"
	       "                     With DEBUGINFOD_URLS set, debug files missing for the\n"
	       "                     target processes are downloaded before sampling\n"
	       "  -o, --output FILE  output file (default profcap-<host>-<UTC time>.pb; with\n"
	       "                     --endpoint and no -o, no file is written)\n"
	       "      --format F     file format: otlp, otlp-json, pprof, folded, svg (default:\n"
	       "                     from -o's name: .json, .pb.gz or .pprof, .folded, .svg;\n"
	       "                     otherwise otlp)\n"
	       "  -q, --quiet        no progress line and no summary\n"
	       "  -v, --verbose      debug detail (libbpf messages, per-step timings)\n"
	       "  -h, --help         this help\n"
	       "\n"
	       "Export to an OTLP endpoint (flags win over OTEL_EXPORTER_OTLP_* variables):\n"
	       "%s"
	       "\n"
	       "--comm matches the kernel's name of a thread (what exec() was given, or a\n"
	       "name the program set), not its program's: the kernel filter sees only that.\n"
	       "Ctrl-C (SIGINT) or SIGTERM ends the capture early; the output is still written.\n"
	       "With -- CMD, the signal goes on to CMD unless the terminal sent it to CMD too;\n"
	       "a second one stops waiting for CMD. -p: the capture ends when they all exit.\n"
	       "Exit status: 0 ok, 1 capture failed, 2 bad usage, 3 captured but not delivered\n"
	       "(kept in the -o file or the spool directory; send it later with 'profcap "
	       "upload').\n"
	       "CMD's own exit status is printed, not returned; a CMD that cannot be run\n"
	       "ends profcap with 127 (not found) or 126 (not executable), as a shell does.\n"
	       "Needs root, or CAP_BPF + CAP_PERFMON.\n",
	       target__usage, otlp_config__usage);
}

#define usage_error(...) log__usage_error("capture", __VA_ARGS__)

int capture_cmd__parse_seconds(const char *arg, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(arg, &end);
	if (end == arg || *end || errno || !isfinite(d) || d <= 0 || d > CAPTURE_MAX_SECONDS)
		return -EINVAL;
	*out = d;
	return 0;
}

int capture_cmd__parse_duration_ns(const char *arg, __u64 *ns)
{
	static const struct {
		const char *suffix;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"", 1e3}};
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || errno || !(v >= 0))
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		v *= units[i].ns;
		if (v > 10e9)
			return -EINVAL;
		*ns = (__u64)(v + 0.5);
		return 0;
	}
	return -EINVAL;
}

/* Take one shared flag (getopt code @c, value @arg) into @o. Any other code,
 * getopt's ':' (missing value) included, is a usage error naming @opt (the
 * argument getopt just read). 0, or -EINVAL after one usage error line. */
static int common_flag(struct capture_opts *o, int c, const char *arg, char **argv,
		       const struct capture_cmd_syntax *sx)
{
	const char *cmd = sx->cmd;
	char *end;
	long v;
	int err;

	switch (c) {
	case 'F':
		errno = 0;
		v = strtol(arg, &end, 10);
		if (end == arg || *end || errno || v < 1 || v > 100000)
			return log__usage_error(
				cmd,
				"invalid -F '%s': expected a frequency in Hz from 1 "
				"to 100000",
				arg);
		o->freq_hz = (__u32)v;
		return 0;
	case CAPTURE_OPT_NO_KERNEL:
		o->kernel = false;
		return 0;
	case CAPTURE_OPT_NO_USER:
		o->user = false;
		return 0;
	case CAPTURE_OPT_NO_IDLE:
		o->idle = false;
		return 0;
	case CAPTURE_OPT_NO_UNWIND:
		o->unwind = false;
		return 0;
	case CAPTURE_OPT_OFF_CPU:
		o->off_cpu = true;
		return 0;
	case CAPTURE_OPT_OFF_CPU_RUNNABLE:
		o->off_cpu = o->off_cpu_runnable = true;
		return 0;
	case CAPTURE_OPT_OFF_CPU_THRESHOLD:
		if (capture_cmd__parse_duration_ns(arg, &o->off_cpu_min_ns))
			return log__usage_error(cmd,
						"invalid --off-cpu-threshold '%s': expected a "
						"duration such as 100us, 1ms or 0 (at most 10s)",
						arg);
		o->off_cpu = true;
		return 0;
	case CAPTURE_OPT_DEBUG_DIR: {
		struct stat st;

		if (stat(arg, &st) || !S_ISDIR(st.st_mode))
			return log__usage_error(cmd,
						"invalid --debug-dir '%s': not a directory; give "
						"a directory laid out like /usr/lib/debug",
						arg);
		if (o->ndebug_dirs == CAPTURE_MAX_DEBUG_DIRS)
			return log__usage_error(cmd, "at most %d --debug-dir options",
						CAPTURE_MAX_DEBUG_DIRS);
		o->debug_dirs[o->ndebug_dirs++] = arg;
		return 0;
	}
	case CAPTURE_OPT_FORMAT:
		o->format_set = true;
		if (format__parse(arg, &o->format))
			return log__usage_error(cmd,
						"invalid --format '%s': expected otlp, otlp-json, "
						"pprof, folded or svg",
						arg);
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'v':
		o->verbose = true;
		return 0;
	case ':':
		return args__bad_option_in(cmd, c, argv, sx->longopts);
	default:
		err = target__flag(&o->target, c, arg, cmd);
		if (err == -ENOENT)
			err = otlp_config__flag(&o->export, c, arg);
		if (err == -ENOENT)
			return args__bad_option_in(cmd, c, argv, sx->longopts);
		return err ? -EINVAL : 0;
	}
}

int capture_cmd__options(const struct capture_cmd_syntax *sx, int argc, char **argv,
			 struct capture_opts *o, bool *all)
{
	int c, err;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, sx->shortopts, sx->longopts, NULL)) != -1) {
		if (c == 'h') {
			sx->usage();
			return 1;
		}
		err = sx->own(c, optarg, sx->ctx);
		if (err == -ENOENT && c == 'a') {
			*all = true;
			err = 0;
		} else if (err == -ENOENT) {
			err = common_flag(o, c, optarg, argv, sx);
		}
		if (err)
			return err;
	}
	return 0;
}

enum { OPT_SECONDS = 256, OPT_MEMORY, OPT_MEMORY_RATE, OPT_MEMORY_MMAP, OPT_TIMESTAMPS };

/* "524288", "512KiB", "512k", "1MiB", "1m" into *@out (1 .. 4 GiB). */
static int parse_bytes(const char *arg, __u64 *out)
{
	static const struct {
		const char *suffix;
		__u64 mul;
	} units[] = {{"", 1},	   {"B", 1},	     {"k", 1024}, {"K", 1024}, {"KiB", 1024},
		     {"m", 1u << 20}, {"M", 1u << 20}, {"MiB", 1u << 20}};
	unsigned long long v;
	char *end;
	size_t i;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (end == arg || errno || *arg == '-')
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (!v || v > (4ull << 30) / units[i].mul)
			return -EINVAL;
		*out = v * units[i].mul;
		return 0;
	}
	return -EINVAL;
}

struct capture_args {
	struct capture_opts *o;
	bool seconds_set;
};

static int capture_opt(int c, const char *arg, void *ctx)
{
	struct capture_args *a = ctx;

	switch (c) {
	case OPT_SECONDS:
		if (capture_cmd__parse_seconds(arg, &a->o->seconds))
			return usage_error("invalid --seconds '%s': expected a number of "
					   "seconds above 0 (at most 604800)",
					   arg);
		a->seconds_set = true;
		return 0;
	case 'o':
		a->o->output = arg;
		return 0;
	case OPT_MEMORY:
		a->o->memory = true;
		return 0;
	case OPT_MEMORY_MMAP:
		a->o->memory = a->o->memory_opts.anon_mmap = true;
		return 0;
	case OPT_TIMESTAMPS:
		a->o->timestamps = true;
		return 0;
	case OPT_MEMORY_RATE:
		if (parse_bytes(arg, &a->o->memory_opts.rate))
			return usage_error("invalid --memory-rate '%s': expected bytes from 1 to "
					   "4GiB, e.g. 524288 or 512KiB",
					   arg);
		a->o->memory = true;
		return 0;
	default:
		return -ENOENT;
	}
}

int capture_cmd__parse_args(int argc, char **argv, struct capture_opts *o)
{
	static const struct option longopts[] = {
		{"seconds", required_argument, NULL, OPT_SECONDS},
		{"output", required_argument, NULL, 'o'},
		{"memory", no_argument, NULL, OPT_MEMORY},
		{"memory-rate", required_argument, NULL, OPT_MEMORY_RATE},
		{"memory-mmap", no_argument, NULL, OPT_MEMORY_MMAP},
		{"timestamps", no_argument, NULL, OPT_TIMESTAMPS},
		CAPTURE_COMMON_LONGOPTS,
		{0},
	};
	struct capture_args a = {o, false};
	const struct capture_cmd_syntax sx = {
		.cmd = "capture",
		/* '+': stop at the first non-option, so CMD's own flags stay its own. */
		.shortopts = "+:F:ap:o:qvh",
		.longopts = longopts,
		.usage = capture_cmd__usage,
		.own = capture_opt,
		.ctx = &a,
	};
	bool all = false;
	int err;

	capture__default_opts(o);
	err = capture_cmd__options(&sx, argc, argv, o, &all);
	if (err)
		return err;
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--"))
			return usage_error("unexpected argument '%s'; to profile a command, put it "
					   "after --: profcap capture [options] -- %s ...",
					   argv[optind], argv[optind]);
		o->cmd = argv + optind;
		if (!a.seconds_set)
			o->seconds = 0;
	} else if (optind > 0 && optind == argc && !strcmp(argv[optind - 1], "--")) {
		return usage_error("nothing after --: give the command to profile");
	}
	if (all && (target__any(&o->target) || o->cmd))
		return usage_error("-a excludes -p/--tid/--comm/--cgroup/--container and -- CMD: "
				   "pick all processes or a filter");
	if (o->memory && !all && !o->cmd && !target__any(&o->target))
		return usage_error("--memory needs -p PID or -- CMD (or a filter); every process "
				   "(-a --memory) makes each allocation on the host trap to the "
				   "kernel: give -a to mean it");
	o->memory_opts.system_wide = o->memory && (all || (!o->cmd && !o->target.npids));
	if (!o->user && !o->kernel)
		return usage_error("--no-user and --no-kernel together leave nothing to sample");
	if (o->output && !*o->output)
		return usage_error("-o needs a file name");
	if (o->output && !o->format_set) /* as convert: -o cpu.svg writes SVG */
		format__from_filename(o->output, &o->format);
	if (o->format != FORMAT_OTLP && o->export.endpoint && !o->output)
		return usage_error("--format %s applies to the file output: add -o FILE (the "
				   "endpoint always gets OTLP)",
				   format__name(o->format));
	return 0;
}

/* Highest sampling rate per CPU profcap runs at: every sample runs the BPF
 * program on the sampled CPU (several microseconds with user unwinding), so
 * the rate bounds the CPU the capture takes from the host. */
#define CAPTURE_MAX_FREQ_HZ 10000u
/* Samples per second over all CPUs above which the cost is worth a warning. */
#define CAPTURE_WARN_TOTAL_HZ 20000u

/* Lower @o->freq_hz to what the kernel allows and profcap runs at, saying
 * so; warn when the rate over all CPUs is high. */
static void limit_rate(struct capture_opts *o)
{
	char buf[32] = "";
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long kmax = 0;

	if (fdio__read_file("/proc/sys/kernel/perf_event_max_sample_rate", buf, sizeof(buf) - 1) >
	    0)
		kmax = strtoul(buf, NULL, 10);
	if (kmax && o->freq_hz > kmax) {
		pr_warn("-F %u is above kernel.perf_event_max_sample_rate: sampling at %lu Hz "
			"(the kernel lowers that limit itself when sampling takes too long)",
			o->freq_hz, kmax);
		o->freq_hz = (__u32)kmax;
	}
	if (o->freq_hz > CAPTURE_MAX_FREQ_HZ) {
		pr_warn("-F %u: sampling at %u Hz, the most profcap runs at (each sample runs "
			"a BPF program on its CPU; higher rates would take the host's CPUs)",
			o->freq_hz, CAPTURE_MAX_FREQ_HZ);
		o->freq_hz = CAPTURE_MAX_FREQ_HZ;
	}
	if (cpus > 0 && (__u64)o->freq_hz * (__u64)cpus > CAPTURE_WARN_TOTAL_HZ)
		pr_warn("-F %u on %ld CPUs is %llu samples/s: each costs a few microseconds "
			"of the sampled CPU; lower -F on a busy host",
			o->freq_hz, cpus,
			(unsigned long long)o->freq_hz * (unsigned long long)cpus);
}

int capture_cmd__run(int (*parse)(int, char **, struct capture_opts *), int argc, char **argv)
{
	struct capture_opts o;
	int ret;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (o.json)
		log__set_json(true); /* one stream of JSON events */
	limit_rate(&o);
	/* As a shell: 127 for a command not found, 126 for one not runnable. */
	if (o.cmd && (ret = child__check(o.cmd[0])))
		return child__shell_status(ret);
	return capture__run(&o);
}

int capture_cmd__main(int argc, char **argv)
{
	return capture_cmd__run(capture_cmd__parse_args, argc, argv);
}
