#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "capture/capture.h"
#include "export/exporter.h"
#include "util/log.h"
#include "formats/otlp.h"
#include "model/profile.h"
#include "collect/sampler.h"
#include "export/sink.h"
#include "export/spool.h"
#include "symbolize/symbolizer.h"
#include "util/version.h"

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
	struct profile_frame frames[SAMPLER_MAX_KSTACK + SAMPLER_MAX_USTACK];
	/* counters for the summary */
	__u64 model_dropped;  /* samples the model could not hold */
	__u64 ustack_missing; /* samples of user processes without a user stack */
	__u64 truncated;      /* samples whose stack was cut short (any cause) */
	__u64 depth_cut;      /* ... of those, at the depth limit */
	__u64 partial;	      /* samples whose user stack the unwinder did not finish */
	bool warned_full;
	bool warned_rows; /* agent: the unwind row store filled up */
	struct target tgt;
	/* -- CMD */
	pid_t child;	  /* 0 = none */
	int child_status; /* wait status, once reaped */
	bool child_done;
	/* agent: whole-run counters for the status line */
	__u64 windows, exported, export_failed, spooled, files_written, samples_total;
	__u64 dropped_total;
};

static volatile sig_atomic_t stop_requested, hup_requested;
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	if (sig == SIGHUP) {
		hup_requested = 1;
		return;
	}
	if (sig == SIGCHLD)
		return; /* only to wake the poll */
	stop_signal = sig;
	stop_requested = 1;
}

void capture__usage(void)
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
	       "                     decimals allowed)\n"
	       "  -F, --freq HZ      samples per second per CPU (default 99, max 100000)\n"
	       "  -a, --all-cpus     sample every process on every CPU (the default)\n"
	       "%s"
	       "      --no-kernel    do not collect kernel stacks\n"
	       "      --no-user      do not collect user stacks\n"
	       "      --no-idle      drop samples of the idle task (pid 0)\n"
	       "      --no-unwind    user stacks from frame pointers only (no .eh_frame\n"
	       "                     tables)\n"
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
	       "CMD's own exit status is printed, not returned.\n"
	       "Needs root, or CAP_BPF + CAP_PERFMON.\n",
	       target__usage, otlp_config__usage);
}

#define usage_error(...) log__usage_error("capture", __VA_ARGS__)

int capture__parse_seconds(const char *arg, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(arg, &end);
	if (end == arg || *end || errno || !isfinite(d) || d <= 0 || d > MAX_SECONDS)
		return -EINVAL;
	*out = d;
	return 0;
}

/* Is @name runnable: a path to an executable, or found in $PATH? */
static bool runnable(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;
	char full[4096];

	if (strchr(name, '/'))
		return !access(name, X_OK);
	if (!path || !*path)
		path = "/usr/local/bin:/bin:/usr/bin";
	for (p = path; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		snprintf(full, sizeof(full), "%.*s/%s", (int)(end - p), end > p ? p : ".", name);
		if (!access(full, X_OK))
			return true;
	}
	return false;
}

void capture__default_opts(struct capture_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->seconds = 10;
	o->freq_hz = 99;
	o->user = o->kernel = o->idle = o->unwind = true;
}

int capture__common_flag(struct capture_opts *o, int c, const char *arg, const char *opt,
			 const char *cmd)
{
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
	case CAPTURE_OPT_FORMAT:
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
		return log__usage_error(cmd, "option '%s' needs a value", opt);
	default:
		err = target__flag(&o->target, c, arg, cmd);
		if (err == -ENOENT)
			err = otlp_config__flag(&o->export, c, arg);
		if (err == -ENOENT)
			return log__usage_error(cmd, "unknown option '%s'", opt);
		return err ? -EINVAL : 0;
	}
}

int capture__parse_args(int argc, char **argv, struct capture_opts *o)
{
	enum { OPT_SECONDS = 256 };
	static const struct option longopts[] = {
		{"seconds", required_argument, NULL, OPT_SECONDS},
		{"all-cpus", no_argument, NULL, 'a'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		CAPTURE_COMMON_LONGOPTS,
		{0},
	};
	bool all = false, seconds_set = false;
	int c, err;

	capture__default_opts(o);
	optind = 0;
	opterr = 0;
	/* '+': stop at the first non-option, so CMD's own flags stay its own. */
	while ((c = getopt_long(argc, argv, "+:F:ap:o:qvh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SECONDS:
			if (capture__parse_seconds(optarg, &o->seconds))
				return usage_error("invalid --seconds '%s': expected a number of "
						   "seconds above 0 (at most 604800)",
						   optarg);
			seconds_set = true;
			break;
		case 'a':
			all = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'h':
			capture__usage();
			return 1;
		default:
			err = capture__common_flag(o, c, optarg, argv[optind - 1], "capture");
			if (err)
				return err;
			break;
		}
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--"))
			return usage_error("unexpected argument '%s'; to profile a command, put it "
					   "after --: profcap capture [options] -- %s ...",
					   argv[optind], argv[optind]);
		o->cmd = argv + optind;
		if (!runnable(o->cmd[0]))
			return usage_error("cannot run '%s': no such executable file (check the "
					   "path or $PATH)",
					   o->cmd[0]);
		if (!seconds_set)
			o->seconds = 0;
	} else if (optind > 0 && optind == argc && !strcmp(argv[optind - 1], "--")) {
		return usage_error("nothing after --: give the command to profile");
	}
	if (all && (target__any(&o->target) || o->cmd))
		return usage_error("-a excludes -p/--tid/--comm/--cgroup/--container and -- CMD: "
				   "pick all processes or a filter");
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

	/* Unwind tables first: its samples already wait for them. */
	sampler__add_process(c->smp, (int)tgid);
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

	if ((r->flags & SAMPLER_REC_USTACK_ERR) && known && known->exe_path && *known->exe_path)
		c->ustack_missing += r->count;
	/* A user stack the unwinder could not finish is cut at the root end,
	 * like one at the depth limit: counted as truncated, never complete. */
	if (r->flags & (SAMPLER_REC_USTACK_TRUNC | SAMPLER_REC_KSTACK_TRUNC | SAMPLER_REC_USTACK_PARTIAL))
		c->truncated += r->count;
	if (r->flags & (SAMPLER_REC_USTACK_TRUNC | SAMPLER_REC_KSTACK_TRUNC))
		c->depth_cut += r->count;
	if (r->flags & SAMPLER_REC_USTACK_PARTIAL) {
		c->partial += r->count;
		/* Code mapped after the tables were loaded (dlopen)? */
		if (r->tgid)
			sampler__refresh_process(c->smp, (int)r->tgid);
	}

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

/* Kubernetes downward-API variables, as a sidecar's pod spec sets them
 * (fieldRef: metadata.name, ...): the semconv key and the variable names
 * used for it, the OpenTelemetry Operator's first. OTEL_RESOURCE_ATTRIBUTES
 * wins when it names the same key. */
static const struct {
	const char *key;
	const char *vars[3];
} k8s_env[] = {
	{"k8s.pod.name", {"OTEL_RESOURCE_ATTRIBUTES_POD_NAME", "K8S_POD_NAME", "POD_NAME"}},
	{"k8s.pod.uid", {"OTEL_RESOURCE_ATTRIBUTES_POD_UID", "K8S_POD_UID", "POD_UID"}},
	{"k8s.namespace.name", {"K8S_NAMESPACE_NAME", "POD_NAMESPACE", NULL}},
	{"k8s.node.name", {"OTEL_RESOURCE_ATTRIBUTES_NODE_NAME", "K8S_NODE_NAME", NULL}},
	{"k8s.container.name", {"K8S_CONTAINER_NAME", NULL, NULL}},
};

static void add_k8s_env(struct capture *c)
{
	const char *val;
	size_t i, j, k;
	bool have;

	for (i = 0; i < sizeof(k8s_env) / sizeof(k8s_env[0]); i++) {
		for (k = 0, have = false; k < c->nenv_kv && !have; k++)
			have = !strcmp(c->env_kv[k].key, k8s_env[i].key);
		for (j = 0, val = NULL; !have && j < 3 && k8s_env[i].vars[j] && !val; j++) {
			val = getenv(k8s_env[i].vars[j]);
			if (val && !*val)
				val = NULL;
		}
		if (have || !val || c->nenv_kv == OTLP_MAX_RESOURCE_ATTRS)
			continue;
		c->env_kv[c->nenv_kv].key = strdup(k8s_env[i].key);
		c->env_kv[c->nenv_kv].value = strdup(val);
		if (!c->env_kv[c->nenv_kv].key || !c->env_kv[c->nenv_kv].value) {
			free(c->env_kv[c->nenv_kv].key);
			free(c->env_kv[c->nenv_kv].value);
			continue;
		}
		c->nenv_kv++;
	}
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
	add_k8s_env(c);
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
	if (o->agent) {
		/* One file per window, created when the window ends. */
		if (o->output_dir && spool__prepare(o->output_dir))
			return 1;
	} else if (o->output || !c->cfg) {
		c->sink = open_output(o, host, time(NULL));
		if (!c->sink)
			return 1;
	}
	load_resource_env(c);
	return 0;
}

/* Agent: keep the window files in --output-dir under --max-dir-size by
 * removing the oldest ones (only files this naming scheme made). */
static void trim_output_dir(const struct capture *c, const char *keep)
{
	struct wfile {
		char name[256];
		__s64 mtime;
		__u64 size;
	} *v = NULL, *nv;
	size_t n = 0, cap = 0, i, oldest;
	__u64 total = 0;
	struct dirent *de;
	struct stat st;
	char path[4096];
	DIR *d;

	d = opendir(c->o->output_dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "profcap-", 8) || strlen(de->d_name) >= sizeof(v->name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", c->o->output_dir, de->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		v[n].mtime = (__s64)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
		v[n].size = (__u64)st.st_size;
		total += v[n].size;
		n++;
	}
	closedir(d);
	while (total > c->o->max_dir_bytes && n > 1) {
		oldest = n;
		for (i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/%s", c->o->output_dir, v[i].name);
			if (keep && !strcmp(path, keep))
				continue;
			if (oldest == n || v[i].mtime < v[oldest].mtime)
				oldest = i;
		}
		if (oldest == n)
			break;
		snprintf(path, sizeof(path), "%s/%s", c->o->output_dir, v[oldest].name);
		if (unlink(path) && errno != ENOENT) {
			pr_warn("cannot remove %s to stay under --max-dir-size: %s", path,
				strerror(errno));
			break;
		}
		pr_debug("removed %s (--max-dir-size)", path);
		total -= v[oldest].size;
		v[oldest] = v[--n];
	}
	free(v);
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
		c->files_written++;
		if (o->agent)
			pr_debug("wrote %s (%zu bytes)", kept, file->len);
		else if (!o->quiet)
			pr_info("wrote %s (%zu bytes, %s)", kept, file->len,
				format__name(file == out ? FORMAT_OTLP : o->format));
		buf__release(&other);
	}
	if (!c->exp)
		return 0;
	memset(&r, 0, sizeof(r));
	err = exporter__export(c->exp, out->data, out->len, &r);
	if (!err) {
		c->exported++;
		if (!o->quiet && !o->agent)
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
	c->export_failed++;
	if (!kept) {
		if (spool__save(c->spool_dir, host, out->data, out->len, spooled,
				sizeof(spooled))) {
			rescue(out);
			return 1;
		}
		c->spooled++;
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
	struct sampler_unwind_stats us;
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
	if (c->truncated > c->partial)
		pr_warn("%llu samples hit the depth limit (%d kernel, %d user frames): their "
			"stacks "
			"are truncated at the root end",
			(unsigned long long)(c->truncated - c->partial), SAMPLER_MAX_KSTACK,
			c->o->unwind ? SAMPLER_MAX_USTACK : SAMPLER_MAX_KSTACK);
	if (c->partial)
		pr_warn("%llu samples (%.1f%%) have user stacks not unwound to the outermost frame "
			"(no unwind row, unreadable stack, tables not loaded yet, or the %d-frame "
			"depth limit): counted as truncated",
			(unsigned long long)c->partial, total ? 100.0 * c->partial / total : 0.0,
			SAMPLER_MAX_USTACK);
	if (sampler__unwind_stats(c->smp, &us)) {
		const struct unwind_table_stats *ut = &us.tables;

		pr_info("unwind tables: %llu files (%llu without CFI, %llu unreadable, %llu no "
			"room), "
			"%llu rows = %.1f of %.1f MiB, %llu processes, built in %.0f ms; stacks: "
			"%llu complete, %llu partial",
			(unsigned long long)ut->files_parsed, (unsigned long long)ut->files_no_cfi,
			(unsigned long long)ut->files_failed, (unsigned long long)ut->files_no_room,
			(unsigned long long)ut->rows, ut->rows * 8 / 1048576.0,
			ut->max_rows * 8 / 1048576.0, (unsigned long long)ut->processes,
			ut->parse_ns / 1e6, (unsigned long long)us.complete,
			(unsigned long long)us.partial);
		pr_debug("unwinder: %llu table frames, %llu frame-pointer frames; partial: %llu no "
			 "mapping, %llu no row, %llu read errors, %llu depth, %llu ext full, %llu "
			 "no tables yet; %llu kernel-mode samples",
			 (unsigned long long)us.frames, (unsigned long long)us.fp_frames,
			 (unsigned long long)us.no_mapping, (unsigned long long)us.no_row,
			 (unsigned long long)us.read_err, (unsigned long long)us.depth,
			 (unsigned long long)us.ext_full, (unsigned long long)us.no_proc,
			 (unsigned long long)us.kernel_regs);
	}
	if (st->foreign)
		pr_info("%llu samples of tasks outside profcap's PID namespace were skipped; to "
			"profile them, run profcap in the host PID namespace (hostPID: true)",
			(unsigned long long)st->foreign);
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

/* -- CMD: fork now, exec once the sampler is ready (the child waits on a
 * pipe), so the command's first instructions are profiled. */
static int start_child(struct capture *c, int *go_fd)
{
	int fds[2];
	pid_t pid;
	char b;

	if (pipe2(fds, O_CLOEXEC)) {
		pr_err("cannot start '%s': pipe: %s", c->o->cmd[0], strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		pr_err("cannot start '%s': fork: %s", c->o->cmd[0], strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -EAGAIN;
	}
	if (pid == 0) {
		close(fds[1]);
		/* EOF without a byte: profcap failed before sampling began. */
		if (read(fds[0], &b, 1) != 1)
			_exit(127);
		close(fds[0]);
		execvp(c->o->cmd[0], c->o->cmd);
		fprintf(stderr, "profcap: error: cannot run '%s': %s\n", c->o->cmd[0],
			strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	c->child = pid;
	*go_fd = fds[1];
	return 0;
}

static void reap_child(struct capture *c, bool block)
{
	int st;
	pid_t r;

	if (!c->child || c->child_done)
		return;
	do
		r = waitpid(c->child, &st, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == c->child) {
		c->child_status = st;
		c->child_done = true;
	}
}

static void report_child(const struct capture *c)
{
	const char *name = c->o->cmd[0];

	if (!c->child_done)
		return;
	if (WIFEXITED(c->child_status))
		pr_info("'%s' (pid %d) exited with status %d", name, (int)c->child,
			WEXITSTATUS(c->child_status));
	else if (WIFSIGNALED(c->child_status))
		pr_info("'%s' (pid %d) was killed by signal %d (%s)", name, (int)c->child,
			WTERMSIG(c->child_status), strsignal(WTERMSIG(c->child_status)));
}

static __u64 rss_kb(void)
{
	char line[256];
	__u64 kb = 0;
	FILE *f;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6)) {
			kb = strtoull(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

/* Agent: one status line per window, for people or (--json) machines. */
static void status_line(const struct capture *c, __u64 samples, __u64 dropped, size_t nproc,
			__u64 kernel_samples, int ret)
{
	__u64 rss = rss_kb();

	unsigned long long v[] = {c->windows,	    samples,	      dropped,
				  c->samples_total, c->files_written, c->exported,
				  c->export_failed, c->spooled,	      c->dropped_total};

	if (c->o->json) {
		fprintf(stderr,
			"{\"event\":\"window\",\"window\":%llu,\"samples\":%llu,\"dropped\":%llu,"
			"\"samples_total\":%llu,\"files\":%llu,\"exported\":%llu,"
			"\"export_failed\":%llu,\"spooled\":%llu,\"dropped_total\":%llu,"
			"\"processes\":%zu,\"kernel_samples\":%llu,\"rss_kb\":%llu,\"status\":%d}"
			"\n",
			v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], nproc,
			(unsigned long long)kernel_samples, (unsigned long long)rss, ret);
		return;
	}
	if (c->o->quiet)
		return;
	fprintf(stderr,
		"profcap: agent window %llu: %llu samples, %llu dropped, %zu processes; total: "
		"%llu samples, %llu files, %llu exported, %llu export failures (%llu spooled), "
		"%llu dropped; rss %.1f MB\n",
		v[0], v[1], v[2], nproc, v[3], v[4], v[5], v[6], v[7], v[8], rss / 1024.0);
}

/* Close the current window: its profile (already drained) becomes a file
 * and/or an export. @base holds the sampler stats at the window's start.
 * Returns the exit code of the delivery. */
static int end_window(struct capture *c, const struct utsname *u, __s64 t_unix, __s64 dur,
		      const struct sampler_stats *st, const struct sampler_stats *base)
{
	const struct capture_opts *o = c->o;
	char name[4096];
	struct profile_meta meta;
	__u64 total, dropped;
	struct buf out;
	size_t nproc;
	int err, ret;
	__s64 t0 = now_ns(CLOCK_MONOTONIC);

	buf__init(&out, OUTPUT_MAX_BYTES);
	fill_meta(&meta, u, t_unix, dur, o->freq_hz);
	meta.resource = c->resource;
	meta.nresource = c->nresource;
	dropped = st->counts_full - base->counts_full + c->model_dropped;
	meta.samples_dropped = dropped;
	meta.samples_truncated = c->truncated;
	meta.samples_truncated_depth = c->depth_cut;
	meta.samples_stack_missing = st->stacks_missing - base->stacks_missing + c->ustack_missing;
	total = profile__total(c->prof);
	nproc = profile__process_count(c->prof);
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
	if (!o->agent) {
		if (!o->quiet)
			summary(c, st, dur);
		ret = deliver(c, &out, u->nodename);
		buf__release(&out);
		return ret;
	}
	c->windows++;
	c->samples_total += total;
	c->dropped_total += dropped;
	if (o->output_dir) {
		/* Never clobber: window files of one second get -1, -2, ... */
		for (int i = 0; i < 1000; i++) {
			if (file_sink__default_name(name, sizeof(name), o->output_dir, u->nodename,
						    t_unix / 1000000000ll,
						    format__extension(o->format), i) ||
			    access(name, F_OK))
				break;
		}
		c->sink = file_sink__new(name);
	}
	ret = (o->output_dir && !c->sink) ? 1 : deliver(c, &out, u->nodename);
	if (c->sink) {
		trim_output_dir(c, sink__describe(c->sink));
		sink__free(c->sink);
		c->sink = NULL;
	}
	status_line(c, total, dropped, nproc, st->samples, ret);
	buf__release(&out);
	return ret;
}

/* Agent: unwind rows are never reused, so a long run on a host that keeps
 * starting new binaries can fill the store; later files then fall back to
 * frame pointers. Say so once. */
static void warn_row_store_full(struct capture *c)
{
	struct sampler_unwind_stats us;

	if (c->warned_rows || !sampler__unwind_stats(c->smp, &us) || !us.tables.files_no_room)
		return;
	c->warned_rows = true;
	pr_warn("the unwind row store is full (%llu rows): binaries seen from now on are "
		"walked with frame pointers and their stacks may be partial; restart the agent "
		"to start over",
		(unsigned long long)us.tables.rows);
}

static int new_window(struct capture *c)
{
	profile__free(c->prof);
	c->prof = profile__new();
	c->model_dropped = c->ustack_missing = c->truncated = c->partial = c->depth_cut = 0;
	c->warned_full = false;
	if (!c->prof) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	return 0;
}

static void check_target_matches(struct capture *c, const struct sampler_stats *st)
{
	char msg[512];

	if (st->samples || c->o->cmd || !target__any(&c->o->target))
		return;
	if (target__explain_empty(&c->tgt, "/proc", msg, sizeof(msg)))
		pr_warn("%s", msg);
	else
		pr_info("%s", msg);
}

static int run(struct capture *c)
{
	const struct capture_opts *o = c->o;
	struct sampler_opts so = {
		.freq_hz = o->freq_hz,
		.user = o->user,
		.kernel = o->kernel,
		.idle = o->idle,
		.unwind = o->unwind,
	};
	struct sigaction sa = {.sa_handler = on_signal};
	__s64 start, t_unix, deadline, next_drain, next_progress, now, end, t0, wstart, wdeadline;
	__s64 wunix, window_ns;
	bool tty = isatty(STDERR_FILENO) && !o->quiet && !o->agent, matched_checked = false;
	struct sampler_stats st, base;
	struct utsname u;
	int err, n, ret = 0, go_fd = -1;
	size_t i;

	uname(&u);
	if (target__resolve(&c->tgt, &o->target, "/proc"))
		return 2;
	if (sampler__check_privileges())
		return 1;

	/* Fail on a bad output or endpoint before sampling, not after. */
	err = open_outputs(c, u.nodename);
	if (err)
		return err;
	c->sym = symbolizer__new("/proc");
	if (new_window(c) || !c->sym) {
		pr_err("out of memory");
		return 1;
	}
	for (i = 0; i < c->tgt.npids; i++)
		symbolizer__add_process(c->sym, c->tgt.pids[i]);
	if (o->cmd) {
		if (start_child(c, &go_fd))
			return 1;
		if (target__add_followed_pid(&c->tgt, (int)c->child)) {
			pr_err("out of memory");
			close(go_fd);
			return 1;
		}
	}
	target__sampler_opts(&c->tgt, &so);

	t0 = now_ns(CLOCK_MONOTONIC);
	c->smp = sampler__new(&so);
	if (!c->smp) {
		if (go_fd >= 0)
			close(go_fd); /* the child exits 127 without running CMD */
		reap_child(c, true);
		return 1;
	}
	pr_debug("BPF program loaded and perf events opened in %.1f ms",
		 (now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	/* Targeted processes get their unwind tables before the first sample;
	 * system-wide, each process gets them at its first sample's notice. */
	if (c->o->unwind) {
		t0 = now_ns(CLOCK_MONOTONIC);
		/* Not CMD: it has not run exec yet; its first sample's notice
		 * builds its tables. */
		for (i = 0; i < c->tgt.npids; i++)
			if (c->tgt.pids[i] != (int)c->child)
				sampler__add_process(c->smp, c->tgt.pids[i]);
		pr_debug("unwind tables of %zu processes built in %.1f ms", c->tgt.npids,
			 (now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	}

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (o->cmd)
		sigaction(SIGCHLD, &sa, NULL);

	err = sampler__start(c->smp);
	if (err) {
		if (go_fd >= 0)
			close(go_fd);
		reap_child(c, true);
		return 1;
	}
	start = now_ns(CLOCK_MONOTONIC);
	t_unix = now_ns(CLOCK_REALTIME);
	if (go_fd >= 0) {
		if (write(go_fd, "g", 1) != 1)
			pr_warn("cannot start '%s': %s", o->cmd[0], strerror(errno));
		close(go_fd);
		go_fd = -1;
	}
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

	/* capture: one window of --seconds (or until CMD exits); agent: windows
	 * of --interval until a signal. */
	deadline = o->agent || !o->seconds ? INT64_MAX : start + (__s64)llround(o->seconds * 1e9);
	window_ns = o->agent ? (__s64)llround(o->interval * 1e9) : INT64_MAX;
	wstart = start;
	wunix = t_unix;
	wdeadline = o->agent ? wstart + window_ns : deadline;
	next_drain = start + DRAIN_INTERVAL_NS;
	next_progress = start;
	memset(&base, 0, sizeof(base));

	while (!stop_requested) {
		reap_child(c, false);
		if (c->child_done)
			break;
		now = now_ns(CLOCK_MONOTONIC);
		if (now >= deadline)
			break;
		if (hup_requested) {
			hup_requested = 0;
			if (o->output_dir && !spool__prepare(o->output_dir))
				pr_info("SIGHUP: output directory %s reopened", o->output_dir);
		}
		if (tty && now >= next_progress) {
			progress(c, now - start, false);
			next_progress = now + PROGRESS_INTERVAL_NS;
		}
		if (o->agent && now >= wdeadline) {
			/* The swap puts later samples in the next window: none is
			 * lost or counted twice at the edge. */
			err = sampler__drain(c->smp, on_record, c);
			if (err)
				pr_err("reading samples failed: %s", strerror(-err));
			sampler__stats(c->smp, &st);
			if (!matched_checked) {
				matched_checked = true;
				check_target_matches(c, &st);
			}
			end_window(c, &u, wunix, now - wstart, &st, &base);
			base = st;
			symbolizer__forget_gone(c->sym);
			warn_row_store_full(c);
			if (new_window(c))
				break;
			wunix += now - wstart;
			wstart = now;
			wdeadline += window_ns;
			if (wdeadline <= now) /* a slow export: do not try to catch up */
				wdeadline = now + window_ns;
			next_drain = now + DRAIN_INTERVAL_NS;
			continue;
		}
		if (now >= next_drain) {
			err = sampler__drain(c->smp, on_record, c);
			if (err) {
				pr_err("reading samples failed: %s", strerror(-err));
				break;
			}
			next_drain = now + DRAIN_INTERVAL_NS;
			if (!matched_checked) {
				matched_checked = true;
				sampler__stats(c->smp, &st);
				check_target_matches(c, &st);
			}
		}
		{
			__s64 wake = deadline < next_drain ? deadline : next_drain;

			if (wdeadline < wake)
				wake = wdeadline;
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
	if (o->agent && stop_requested)
		pr_info("signal %d: flushing the current window", (int)stop_signal);
	if (c->child && !c->child_done && stop_signal == SIGTERM)
		kill(c->child, SIGTERM);
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
	ret = end_window(c, &u, o->agent ? wunix : t_unix, end - (o->agent ? wstart : start), &st,
			 &base);
	if (c->child && !c->child_done) {
		if (!o->quiet)
			pr_info("waiting for '%s' (pid %d) to exit", o->cmd[0], (int)c->child);
		reap_child(c, true);
	}
	if (c->child)
		report_child(c);
	return ret;
}

int capture__run(const struct capture_opts *o)
{
	struct capture *c;
	int ret;

	log__set_level(o->verbose ? LOG_VERBOSE : o->quiet ? LOG_QUIET : LOG_NORMAL);
	c = calloc(1, sizeof(*c));
	if (!c) {
		pr_err("out of memory");
		return 1;
	}
	c->o = o;
	ret = run(c);
	sampler__free(c->smp);
	target__release(&c->tgt);
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

int capture__main(int argc, char **argv)
{
	struct capture_opts o;
	int ret;

	ret = capture__parse_args(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	return capture__run(&o);
}
