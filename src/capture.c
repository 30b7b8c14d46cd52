#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "capture.h"
#include "cpu_sampler.h"
#include "exporter.h"
#include "log.h"
#include "otlp.h"
#include "profile.h"
#include "sampler.h"
#include "sink.h"
#include "spool.h"
#include "symbolizer.h"
#include "version.h"

#define DRAIN_INTERVAL_NS 1000000000ll
#define PROGRESS_INTERVAL_NS 500000000ll
#define OUTPUT_MAX_BYTES (1ull << 30)
#define MAX_SECONDS (7.0 * 24 * 3600)

struct capture {
	const struct capture_opts *o;
	struct profile *prof;
	struct symbolizer *sym;
	struct sampler *smp;
	struct sink *sink;	 /* the -o file (or default name); NULL when only exporting */
	struct otlp_config *cfg; /* the endpoint; NULL when not exporting */
	struct exporter *exp;
	char spool_dir[4096];
	struct otlp_kv env_kv[OTLP_MAX_RESOURCE_ATTRS]; /* owned */
	size_t nenv_kv;
	struct profile_kv resource[OTLP_MAX_RESOURCE_ATTRS]; /* views of env_kv */
	size_t nresource;
	/* per-record frame buffer: kernel then user frames, leaf first */
	struct profile_frame frames[2 * PROFCAP_MAX_STACK];
	/* counters for the summary */
	__u64 model_dropped;  /* samples the model could not hold */
	__u64 ustack_missing; /* samples of user processes without a user stack */
	__u64 truncated;      /* samples whose stack hit the depth limit */
	bool warned_full;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

void capture__usage(void)
{
	printf("Usage: profcap capture [options]\n"
	       "\n"
	       "Sample CPU stacks (user and kernel) with eBPF and write an OpenTelemetry\n"
	       "OTLP Profiles file (one serialized ProfilesData message).\n"
	       "\n"
	       "Options:\n"
	       "  --seconds N        capture length in seconds (default 10; decimals allowed)\n"
	       "  -F, --freq HZ      samples per second per CPU (default 99, max 100000)\n"
	       "  -a, --all-cpus     sample every process on every CPU (the default)\n"
	       "  -p, --pid PID[,PID...]  only these processes (all their threads)\n"
	       "      --no-kernel    do not collect kernel stacks\n"
	       "      --no-user      do not collect user stacks\n"
	       "      --no-idle      drop samples of the idle task (pid 0)\n"
	       "  -o, --output FILE  output file (default profcap-<host>-<UTC time>.pb; with\n"
	       "                     --endpoint and no -o, no file is written)\n"
	       "      --format F     file format: otlp (default), otlp-json, pprof, folded, svg\n"
	       "  -q, --quiet        no progress line and no summary\n"
	       "  -v, --verbose      debug detail (libbpf messages, per-step timings)\n"
	       "  -h, --help         this help\n"
	       "\n"
	       "Export to an OTLP endpoint (flags win over OTEL_EXPORTER_OTLP_* variables):\n"
	       "%s"
	       "\n"
	       "Ctrl-C (SIGINT) or SIGTERM ends the capture early; the output is still written.\n"
	       "Exit status: 0 ok, 1 capture failed, 2 bad usage, 3 captured but not delivered\n"
	       "(kept in the -o file or the spool directory; send it later with 'profcap "
	       "upload').\n"
	       "Needs root, or CAP_BPF + CAP_PERFMON.\n",
	       otlp_config__usage);
}

#define usage_error(...) log__usage_error("capture", __VA_ARGS__)

static int parse_pids(const char *arg, struct capture_opts *o)
{
	const char *p = arg;
	char *end;
	long v;

	while (*p) {
		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || v <= 0 || v > 0x3fffffff || (*end && *end != ','))
			return usage_error("invalid PID list '%s': expected PID[,PID...] with "
					   "positive numbers",
					   arg);
		if (o->npids == CAPTURE_MAX_PIDS)
			return usage_error("too many PIDs in '%s' (at most 1024)", arg);
		o->pids[o->npids++] = (int)v;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return usage_error("invalid PID list '%s': trailing comma", arg);
	}
	if (!o->npids)
		return usage_error("empty PID list '%s'", arg);
	return 0;
}

int capture__parse_args(int argc, char **argv, struct capture_opts *o)
{
	enum { OPT_SECONDS = 256, OPT_NO_KERNEL, OPT_NO_USER, OPT_NO_IDLE, OPT_FORMAT };
	static const struct option longopts[] = {
		{"seconds", required_argument, NULL, OPT_SECONDS},
		{"freq", required_argument, NULL, 'F'},
		{"all-cpus", no_argument, NULL, 'a'},
		{"pid", required_argument, NULL, 'p'},
		{"no-kernel", no_argument, NULL, OPT_NO_KERNEL},
		{"no-user", no_argument, NULL, OPT_NO_USER},
		{"no-idle", no_argument, NULL, OPT_NO_IDLE},
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		OTLP_CONFIG_LONGOPTS,
		{0},
	};
	bool all = false;
	char *end;
	double d;
	long v;
	int c, err;

	memset(o, 0, sizeof(*o));
	o->seconds = 10;
	o->freq_hz = 99;
	o->user = o->kernel = o->idle = true;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":F:ap:o:qvh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SECONDS:
			errno = 0;
			d = strtod(optarg, &end);
			if (end == optarg || *end || errno || !isfinite(d) || d <= 0 ||
			    d > MAX_SECONDS)
				return usage_error("invalid --seconds '%s': expected a number of "
						   "seconds above 0 (at most 604800)",
						   optarg);
			o->seconds = d;
			break;
		case 'F':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || v < 1 || v > 100000)
				return usage_error("invalid -F '%s': expected a frequency in Hz "
						   "from 1 to 100000",
						   optarg);
			o->freq_hz = (__u32)v;
			break;
		case 'a':
			all = true;
			break;
		case 'p':
			if (parse_pids(optarg, o))
				return -EINVAL;
			break;
		case OPT_NO_KERNEL:
			o->kernel = false;
			break;
		case OPT_NO_USER:
			o->user = false;
			break;
		case OPT_NO_IDLE:
			o->idle = false;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			if (format__parse(optarg, &o->format))
				return usage_error(
					"invalid --format '%s': expected otlp, otlp-json, "
					"pprof, folded or svg",
					optarg);
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			capture__usage();
			return 1;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			err = otlp_config__flag(&o->export, c, optarg);
			if (err == -ENOENT)
				return usage_error("unknown option '%s'", argv[optind - 1]);
			if (err)
				return err;
			break;
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (all && o->npids)
		return usage_error(
			"-a and -p exclude each other: pick all processes or a PID list");
	if (!o->user && !o->kernel)
		return usage_error("--no-user and --no-kernel together leave nothing to sample");
	if (o->output && !*o->output)
		return usage_error("-o needs a file name");
	if (o->format != FORMAT_OTLP && o->export.endpoint && !o->output)
		return usage_error("--format %s applies to the file output: add -o FILE (the "
				   "endpoint always gets OTLP)",
				   format__name(o->format));
	return 0;
}

static __s64 now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__s64)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static const char *host_arch(const char *machine)
{
	if (!strcmp(machine, "x86_64"))
		return "amd64";
	if (!strcmp(machine, "aarch64"))
		return "arm64";
	if (!strncmp(machine, "arm", 3))
		return "arm32";
	if (!strcmp(machine, "ppc64le") || !strcmp(machine, "ppc64"))
		return "ppc64";
	if (!strcmp(machine, "s390x"))
		return "s390x";
	if (!strcmp(machine, "i686") || !strcmp(machine, "i386"))
		return "x86";
	return machine;
}

static void on_new_process(void *ctx, __u32 tgid)
{
	struct capture *c = ctx;

	/* Snapshot maps and binaries while the process is alive. */
	symbolizer__add_process(c->sym, (int)tgid);
}

static int on_record(void *ctx, const struct sampler_record *r)
{
	struct capture *c = ctx;
	const struct profile_process_desc *known;
	struct profile_process_desc desc = {.pid = r->tgid};
	size_t n = 0;
	__u32 i;
	int err;

	known = symbolizer__process(c->sym, (int)r->tgid);
	if (!known && r->tgid) {
		/* Not announced yet (or the notice was lost): try now. A process
		 * whose maps are unreadable is still added with its name. */
		symbolizer__add_process(c->sym, (int)r->tgid);
		known = symbolizer__process(c->sym, (int)r->tgid);
	}
	if (known) {
		desc = *known;
	} else {
		/* Gone before we saw it, or the idle task: name it by its comm. */
		desc.exe_name = r->tgid ? r->comm : "swapper";
	}

	for (i = 0; i < r->nkstack; i++, n++)
		symbolizer__resolve_kernel(c->sym, r->kstack[i], &c->frames[n]);
	/* Only a user leaf without kernel frames is an exact PC; the others
	 * are return addresses. */
	for (i = 0; i < r->nustack; i++, n++)
		symbolizer__resolve_user(c->sym, (int)r->tgid, r->ustack[i], n == 0, &c->frames[n]);

	if ((r->flags & PROFCAP_F_USTACK_ERR) && known && known->exe_path && *known->exe_path)
		c->ustack_missing += r->count;
	if (r->flags & (PROFCAP_F_USTACK_TRUNC | PROFCAP_F_KSTACK_TRUNC))
		c->truncated += r->count;

	err = profile__add_sample(c->prof, &desc, r->tid, r->comm, c->frames, n, r->count);
	if (err == -E2BIG || err == -ENOMEM) {
		c->model_dropped += r->count;
		if (!c->warned_full) {
			pr_warn("the profile is full (%s): later samples are counted as dropped; "
				"use a shorter --seconds or a lower -F",
				strerror(-err));
			c->warned_full = true;
		}
		return 0;
	}
	return err;
}

static int check_pids(const struct capture_opts *o)
{
	char path[64];
	size_t i;

	for (i = 0; i < o->npids; i++) {
		snprintf(path, sizeof(path), "/proc/%d", o->pids[i]);
		if (access(path, F_OK)) {
			fprintf(stderr,
				"profcap: error: no process with PID %d; check it with 'ps -p "
				"%d'\n",
				o->pids[i], o->pids[i]);
			return -ESRCH;
		}
	}
	return 0;
}

static struct sink *open_output(const struct capture_opts *o, const char *host, __s64 t_unix)
{
	char name[512];
	int i;

	if (o->output)
		return file_sink__new(o->output);
	/* Never clobber an earlier capture from the same second. */
	for (i = 0; i < 1000; i++) {
		if (file_sink__default_name(name, sizeof(name), NULL, host, t_unix,
					    format__extension(o->format), i))
			return file_sink__new("profcap.pb");
		if (access(name, F_OK))
			break;
	}
	return file_sink__new(name);
}

static void progress(const struct capture *c, __s64 elapsed_ns, bool final)
{
	struct sampler_stats st;

	sampler__stats(c->smp, &st);
	if (final) {
		fputs("\r\033[K", stderr);
		return;
	}
	fprintf(stderr, "\r\033[Kprofcap: capturing %.1fs / %gs, %llu samples", elapsed_ns / 1e9,
		c->o->seconds, (unsigned long long)st.samples);
}

/* Save a payload that could not be delivered where the user asked. */
static void rescue(const struct buf *out)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	struct sink *s;

	snprintf(path, sizeof(path), "%s/profcap-rescued-%d-%lld.pb", dir && *dir ? dir : "/tmp",
		 (int)getpid(), (long long)time(NULL));
	s = file_sink__new(path);
	if (s && !sink__deliver(s, out->data, out->len))
		pr_err("the capture was saved to %s instead", path);
	else
		pr_err("the capture could not be saved anywhere");
	sink__free(s);
}

/* OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES label every resource, for
 * files as for exports. A malformed list is ignored with a warning, as the
 * OpenTelemetry SDKs do. */
static void load_resource_env(struct capture *c)
{
	const char *svc = getenv("OTEL_SERVICE_NAME"), *list = getenv("OTEL_RESOURCE_ATTRIBUTES");
	int n;

	c->nresource = 0;
	if (svc && *svc) {
		c->env_kv[0].key = strdup("service.name");
		c->env_kv[0].value = strdup(svc);
		if (c->env_kv[0].key && c->env_kv[0].value)
			c->nenv_kv = 1;
	}
	if (list && *list) {
		n = otlp_config__parse_kv_list(list, c->env_kv + c->nenv_kv,
					       OTLP_MAX_RESOURCE_ATTRS - c->nenv_kv);
		if (n < 0)
			pr_warn("ignoring OTEL_RESOURCE_ATTRIBUTES: expected key=value,key=value "
				"with percent-encoded values");
		else
			c->nenv_kv += (size_t)n;
	}
	for (size_t i = 0; i < c->nenv_kv; i++) {
		c->resource[i].key = c->env_kv[i].key;
		c->resource[i].value = c->env_kv[i].value;
	}
	c->nresource = c->nenv_kv;
}

static const char *env_get(const char *name)
{
	return getenv(name);
}

/* The file output (-o, or the default name when not exporting) and the
 * endpoint, both checked now. Returns 0 or an exit code. */
static int open_outputs(struct capture *c, const char *host)
{
	const struct capture_opts *o = c->o;
	const char *dir = getenv("PROFCAP_SPOOL_DIR");
	int err;

	err = otlp_config__resolve(&o->export, env_get, &c->cfg);
	if (err)
		return 2;
	if (c->cfg) {
		if (c->cfg->spool_dir)
			snprintf(c->spool_dir, sizeof(c->spool_dir), "%s", c->cfg->spool_dir);
		else if (dir && *dir)
			snprintf(c->spool_dir, sizeof(c->spool_dir), "%s", dir);
		else
			spool__default_dir(c->spool_dir, sizeof(c->spool_dir));
		/* Without -o the spool directory is where an undelivered capture
		 * goes: it must take files before we sample. */
		if (!o->output && spool__prepare(c->spool_dir))
			return 1;
		c->exp = exporter__new(c->cfg);
		if (!c->exp)
			return 1;
	}
	if (o->output || !c->cfg) {
		c->sink = open_output(o, host, time(NULL));
		if (!c->sink)
			return 1;
	}
	load_resource_env(c);
	return 0;
}

/* Write the file, then export. Never loses the capture: an export that
 * fails leaves it in the -o file or the spool directory. Returns the exit
 * code. */
static int deliver(struct capture *c, const struct buf *out, const char *host)
{
	const struct capture_opts *o = c->o;
	struct export_result r;
	char spooled[4096];
	const char *kept = NULL;
	int err;

	if (c->sink) {
		const struct buf *file = out;
		struct buf other;

		buf__init(&other, OUTPUT_MAX_BYTES);
		if (o->format != FORMAT_OTLP) {
			err = format__encode(c->prof, o->format, NULL, &other);
			if (err) {
				pr_err("encoding the capture as %s failed: %s; writing OTLP "
				       "instead",
				       format__name(o->format), strerror(-err));
				buf__release(&other);
			} else {
				file = &other;
			}
		}
		err = sink__deliver(c->sink, file->data, file->len);
		if (err) {
			rescue(out);
			buf__release(&other);
			return 1;
		}
		kept = sink__describe(c->sink);
		if (!o->quiet)
			pr_info("wrote %s (%zu bytes, %s)", kept, file->len,
				format__name(file == out ? FORMAT_OTLP : o->format));
		buf__release(&other);
	}
	if (!c->exp)
		return 0;
	memset(&r, 0, sizeof(r));
	err = exporter__export(c->exp, out->data, out->len, &r);
	if (!err) {
		if (!o->quiet)
			pr_info("delivered %zu bytes (%zu on the wire) to %s in %.0f ms (%u "
				"attempt%s)",
				out->len, r.bytes_sent, c->cfg->url, r.seconds * 1e3, r.attempts,
				r.attempts == 1 ? "" : "s");
		if (r.rejected)
			pr_warn("the endpoint rejected %lld profiles: %s", (long long)r.rejected,
				r.partial_message[0] ? r.partial_message : "(no message)");
		else if (r.partial_message[0])
			pr_warn("the endpoint said: %s", r.partial_message);
		return 0;
	}
	if (!kept) {
		if (spool__save(c->spool_dir, host, out->data, out->len, spooled,
				sizeof(spooled))) {
			rescue(out);
			return 1;
		}
		kept = spooled;
	}
	pr_err("export to %s failed: %s; the capture is kept in %s: send it later with "
	       "'profcap upload %s' (same endpoint flags)",
	       c->cfg->url, r.error[0] ? r.error : strerror(-err), kept, kept);
	return 3;
}

static void summary(const struct capture *c, const struct sampler_stats *st, __s64 dur_ns)
{
	__u64 total = profile__total(c->prof);
	__u64 lost = st->counts_full + c->model_dropped;

	pr_info("captured %llu samples, %zu processes, %zu stacks; %.2f s at %u Hz on %u CPUs",
		(unsigned long long)total, profile__process_count(c->prof),
		profile__stack_count(c->prof) - 1, dur_ns / 1e9, c->o->freq_hz, st->ncpus);
	/* Every sample the kernel took is in the profile or counted as lost. */
	if (st->samples != total + lost)
		pr_warn("the kernel took %llu samples but %llu are accounted for (%llu in the "
			"profile, "
			"%llu lost); please report this",
			(unsigned long long)st->samples, (unsigned long long)(total + lost),
			(unsigned long long)total, (unsigned long long)lost);
	if (lost)
		pr_warn("%llu samples lost (aggregation table full: %llu, profile full: %llu)",
			(unsigned long long)lost, (unsigned long long)st->counts_full,
			(unsigned long long)c->model_dropped);
	if (st->stacks_full || st->stacks_missing)
		pr_warn("%llu stacks not stored (stack table full) and %llu samples whose stack "
			"was "
			"missing at drain time: those samples are kept without that stack",
			(unsigned long long)st->stacks_full,
			(unsigned long long)st->stacks_missing);
	if (c->ustack_missing)
		pr_warn("%llu samples of user processes have no user stack (unreadable user "
			"memory); they are kept with their kernel frames only",
			(unsigned long long)c->ustack_missing);
	if (c->truncated)
		pr_warn("%llu samples hit the %d-frame depth limit: their stacks are truncated at "
			"the root end",
			(unsigned long long)c->truncated, PROFCAP_MAX_STACK);
	if (st->events_lost)
		pr_warn("%llu new-process notices were lost: some short-lived processes may lack "
			"symbols",
			(unsigned long long)st->events_lost);
}

static void fill_meta(struct profile_meta *m, const struct utsname *u, __s64 t_unix_ns,
		      __s64 dur_ns, __u32 hz)
{
	size_t i;
	bool nonzero = false;

	memset(m, 0, sizeof(*m));
	m->time_unix_nano = (__u64)t_unix_ns;
	m->duration_nano = dur_ns > 0 ? (__u64)dur_ns : 1;
	m->period_ns = 1000000000ull / hz;
	m->host_name = u->nodename;
	m->host_arch = host_arch(u->machine);
	m->os_type = "linux";
	m->scope_name = "profcap";
	m->scope_version = PROFCAP_VERSION;
	if (getrandom(m->profile_id, sizeof(m->profile_id), 0) != sizeof(m->profile_id)) {
		__u64 x = (__u64)t_unix_ns ^ ((__u64)getpid() << 32);

		for (i = 0; i < sizeof(m->profile_id); i++, x = x * 6364136223846793005ull + 1)
			m->profile_id[i] = (__u8)(x >> 56);
	}
	for (i = 0; i < sizeof(m->profile_id); i++)
		nonzero |= m->profile_id[i] != 0;
	if (!nonzero)
		m->profile_id[0] = 1;
}

static int run(struct capture *c)
{
	const struct capture_opts *o = c->o;
	struct sampler_opts so = {
		.freq_hz = o->freq_hz,
		.pids = o->pids,
		.npids = o->npids,
		.user = o->user,
		.kernel = o->kernel,
		.idle = o->idle,
	};
	struct sigaction sa = {.sa_handler = on_signal};
	__s64 start, t_unix, deadline, next_drain, next_progress, now, end, t0;
	bool tty = isatty(STDERR_FILENO) && !o->quiet;
	struct profile_meta meta;
	struct sampler_stats st;
	struct utsname u;
	struct buf out;
	size_t i;
	int err, n, ret;

	buf__init(&out, OUTPUT_MAX_BYTES);
	uname(&u);
	if (check_pids(o))
		return 2;
	if (sampler__check_privileges())
		return 1;

	/* Fail on a bad output or endpoint before sampling, not after. */
	err = open_outputs(c, u.nodename);
	if (err)
		return err;
	c->prof = profile__new();
	c->sym = symbolizer__new("/proc");
	if (!c->prof || !c->sym) {
		pr_err("out of memory");
		return 1;
	}
	for (i = 0; i < o->npids; i++)
		symbolizer__add_process(c->sym, o->pids[i]);

	t0 = now_ns(CLOCK_MONOTONIC);
	c->smp = sampler__new(&so);
	if (!c->smp)
		return 1;
	pr_debug("BPF program loaded and perf events opened in %.1f ms",
		 (now_ns(CLOCK_MONOTONIC) - t0) / 1e6);

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	err = sampler__start(c->smp);
	if (err)
		return 1;
	start = now_ns(CLOCK_MONOTONIC);
	t_unix = now_ns(CLOCK_REALTIME);
	/* Kernel symbols are first needed at the first drain: read them while
	 * the CPUs are already being sampled. */
	if (o->kernel) {
		err = symbolizer__load_kernel(c->sym);
		if (err == -EPERM)
			pr_warn("kernel symbols are hidden (kernel.kptr_restrict): kernel frames "
				"keep "
				"addresses only; run as root or set kernel.kptr_restrict=0");
		else if (err)
			pr_warn("cannot read /proc/kallsyms (%s): kernel frames keep addresses "
				"only",
				strerror(-err));
	}
	pr_debug("kernel symbols loaded in %.1f ms", (now_ns(CLOCK_MONOTONIC) - start) / 1e6);

	deadline = start + (__s64)llround(o->seconds * 1e9);
	next_drain = start + DRAIN_INTERVAL_NS;
	next_progress = start;

	while (!stop_requested) {
		now = now_ns(CLOCK_MONOTONIC);
		if (now >= deadline)
			break;
		if (tty && now >= next_progress) {
			progress(c, now - start, false);
			next_progress = now + PROGRESS_INTERVAL_NS;
		}
		if (now >= next_drain) {
			err = sampler__drain(c->smp, on_record, c);
			if (err) {
				pr_err("reading samples failed: %s", strerror(-err));
				break;
			}
			next_drain = now + DRAIN_INTERVAL_NS;
		}
		{
			__s64 wake = deadline < next_drain ? deadline : next_drain;

			if (tty && next_progress < wake)
				wake = next_progress;
			n = sampler__poll(c->smp, (int)((wake - now) / 1000000 + 1), on_new_process,
					  c);
			if (n < 0 && n != -EINTR) {
				pr_err("polling the ring buffer failed: %s", strerror(-n));
				break;
			}
		}
	}
	sampler__stop(c->smp);
	end = now_ns(CLOCK_MONOTONIC);
	if (tty)
		progress(c, end - start, true);
	/* Both generations: the active one and anything left in the other. */
	sampler__poll(c->smp, 0, on_new_process, c);
	for (i = 0; i < 2; i++) {
		err = sampler__drain(c->smp, on_record, c);
		if (err)
			pr_err("reading samples failed: %s", strerror(-err));
	}
	sampler__stats(c->smp, &st);
	pr_debug("final drain and symbolization took %.1f ms",
		 (now_ns(CLOCK_MONOTONIC) - end) / 1e6);
	t0 = now_ns(CLOCK_MONOTONIC);

	fill_meta(&meta, &u, t_unix, end - start, o->freq_hz);
	meta.resource = c->resource;
	meta.nresource = c->nresource;
	meta.samples_dropped = st.counts_full + c->model_dropped;
	meta.samples_truncated = c->truncated;
	meta.samples_stack_missing = st.stacks_missing + c->ustack_missing;
	err = profile__set_meta(c->prof, &meta);
	if (!err)
		err = profile__prune(c->prof);
	if (!err)
		err = otlp__encode(c->prof, &out);
	if (err) {
		pr_err("encoding the profile failed: %s", strerror(-err));
		buf__release(&out);
		return 1;
	}
	pr_debug("profile encoded in %.1f ms", (now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	if (!o->quiet)
		summary(c, &st, end - start);
	ret = deliver(c, &out, u.nodename);
	buf__release(&out);
	return ret;
}

int capture__main(int argc, char **argv)
{
	struct capture_opts o;
	struct capture *c;
	int ret;

	ret = capture__parse_args(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	log__set_level(o.verbose ? LOG_VERBOSE : o.quiet ? LOG_QUIET : LOG_NORMAL);

	c = calloc(1, sizeof(*c));
	if (!c) {
		pr_err("out of memory");
		return 1;
	}
	c->o = &o;
	ret = run(c);
	sampler__free(c->smp);
	sink__free(c->sink);
	exporter__free(c->exp);
	otlp_config__free(c->cfg);
	for (size_t i = 0; i < c->nenv_kv; i++) {
		free(c->env_kv[i].key);
		free(c->env_kv[i].value);
	}
	symbolizer__free(c->sym);
	profile__free(c->prof);
	free(c);
	return ret;
}
