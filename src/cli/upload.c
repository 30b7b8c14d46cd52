/* upload.c - `profcap upload` (see upload.h).
 *
 * Every file is read, checked to be a ProfilesData (so a truncated or
 * foreign file is never sent), then exported with one exporter, whose
 * connection is reused across files. A file is removed (--remove-sent) only
 * after the endpoint accepted it. All files are tried, whatever happens to
 * one of them.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pb_decode.h>

#include "cli/args.h"
#include "formats/otlp_read.h"
#include "opentelemetry/proto/profiles/v1development/profiles.pb.h"

#include "util/buf.h"
#include "export/exporter.h"
#include "util/log.h"
#include "export/otlp_config.h"
#include "cli/upload.h"

#define PF(x) opentelemetry_proto_profiles_v1development_##x

/* ---- validation ----------------------------------------------------------------- */

struct check {
	size_t resources, scopes, profiles, samples;
};

/* Walk a message of unknown type: every field must be well-formed; nested
 * messages are not looked into beyond their length. Used for attribute
 * table entries, whose AnyValue holds callback oneofs nanopb must not fill
 * from untrusted bytes. */
static bool walk_raw(pb_istream_t *s)
{
	pb_wire_type_t wt;
	uint32_t tag;
	bool eof;

	while (pb_decode_tag(s, &wt, &tag, &eof))
		if (!pb_skip_field(s, wt))
			return false;
	return eof;
}

static bool cb_raw(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	(void)f;
	(void)arg;
	return walk_raw(s);
}

/* A dictionary table entry of the message type in *@arg. */
static bool cb_entry(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	union {
		PF(Mapping) mapping;
		PF(Location) location;
		PF(Function) function;
		PF(Link) link;
		PF(Stack) stack;
	} u;

	(void)f;
	memset(&u, 0, sizeof(u));
	return pb_decode(s, (const pb_msgdesc_t *)*arg, &u);
}

static bool cb_sample(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	PF(Sample) m = PF(Sample_init_zero);
	struct check *c = *arg;

	(void)f;
	c->samples++;
	return pb_decode(s, PF(Sample_fields), &m);
}

static bool cb_profile(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	PF(Profile) m = PF(Profile_init_zero);
	struct check *c = *arg;

	(void)f;
	m.samples.funcs.decode = cb_sample;
	m.samples.arg = c;
	c->profiles++;
	return pb_decode(s, PF(Profile_fields), &m);
}

static bool cb_scope(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	PF(ScopeProfiles) m = PF(ScopeProfiles_init_zero);
	struct check *c = *arg;

	(void)f;
	m.profiles.funcs.decode = cb_profile;
	m.profiles.arg = c;
	c->scopes++;
	return pb_decode(s, PF(ScopeProfiles_fields), &m);
}

static bool cb_resource(pb_istream_t *s, const pb_field_t *f, void **arg)
{
	PF(ResourceProfiles) m = PF(ResourceProfiles_init_zero);
	struct check *c = *arg;

	(void)f;
	m.scope_profiles.funcs.decode = cb_scope;
	m.scope_profiles.arg = c;
	c->resources++;
	return pb_decode(s, PF(ResourceProfiles_fields), &m);
}

static void set_entry(pb_callback_t *cb, const pb_msgdesc_t *desc)
{
	cb->funcs.decode = cb_entry;
	cb->arg = (void *)desc;
}

int upload__check(const void *data, size_t len, size_t *nprofiles, char *why, size_t whylen)
{
	PF(ProfilesData) m = PF(ProfilesData_init_zero);
	pb_istream_t s = pb_istream_from_buffer(data, len);
	struct check c = {0};

	if (nprofiles)
		*nprofiles = 0;
	if (!len) {
		snprintf(why, whylen, "the file is empty");
		return -EBADMSG;
	}
	m.resource_profiles.funcs.decode = cb_resource;
	m.resource_profiles.arg = &c;
	set_entry(&m.dictionary.mapping_table, PF(Mapping_fields));
	set_entry(&m.dictionary.location_table, PF(Location_fields));
	set_entry(&m.dictionary.function_table, PF(Function_fields));
	set_entry(&m.dictionary.link_table, PF(Link_fields));
	set_entry(&m.dictionary.stack_table, PF(Stack_fields));
	m.dictionary.attribute_table.funcs.decode = cb_raw;
	/* string_table entries stay unread: any bytes are a string here. */
	if (!pb_decode(&s, PF(ProfilesData_fields), &m)) {
		snprintf(why, whylen, "protobuf decoding failed at byte %zu: %s",
			 len - s.bytes_left, PB_GET_ERROR(&s));
		return -EBADMSG;
	}
	if (!c.resources && !m.has_dictionary) {
		snprintf(why, whylen, "no resource profiles and no dictionary");
		return -EBADMSG;
	}
	if (nprofiles)
		*nprofiles = c.profiles;
	return 0;
}

/* ---- the command ---------------------------------------------------------------- */

struct upload_opts {
	struct otlp_flags export;
	bool remove_sent, quiet, verbose;
	char **files;
	int nfiles;
};

void upload__usage(void)
{
	printf("Usage: profcap upload FILE|DIR... [options]\n"
	       "\n"
	       "Send captures written by 'profcap capture' (-o files, or files spooled after a\n"
	       "failed export) to an OTLP endpoint. Files may be binary OTLP, gzip'd OTLP or\n"
	       "OTLP/JSON (sent as binary OTLP); a directory (the spool) sends its *.pb files.\n"
	       "Each file is checked to be an OTLP ProfilesData first; a file that is not is\n"
	       "left in place and not sent.\n"
	       "\n"
	       "Options:\n"
	       "      --remove-sent          delete each file once the endpoint accepted it\n"
	       "  -q, --quiet                no line per delivered file\n"
	       "  -v, --verbose              more detail\n"
	       "  -h, --help                 this help\n"
	       "\n"
	       "Export (flags win over OTEL_EXPORTER_OTLP_* variables; an endpoint is required):\n"
	       "%s"
	       "\n"
	       "Exit status: 0 every file delivered, 1 a file was unreadable or not a capture,\n"
	       "2 bad usage, 3 a delivery failed (those files are left in place).\n",
	       otlp_config__usage);
}

#define usage_error(...) log__usage_error("upload", __VA_ARGS__)

/* 0, 1 when --help was printed, or -EINVAL after one error line. */
static int parse_args(int argc, char **argv, struct upload_opts *o)
{
	enum { OPT_REMOVE_SENT = 256 };
	static const struct option longopts[] = {
		{"remove-sent", no_argument, NULL, OPT_REMOVE_SENT},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		OTLP_CONFIG_LONGOPTS,
		{0},
	};
	int c, err;

	memset(o, 0, sizeof(*o));
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qvh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_REMOVE_SENT:
			o->remove_sent = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			upload__usage();
			return 1;
		default:
			err = c == ':' ? -ENOENT : otlp_config__flag(&o->export, c, optarg);
			if (err == -ENOENT)
				return args__bad_option("upload", c, argv);
			if (err)
				return err;
			break;
		}
	}
	o->files = argv + optind;
	o->nfiles = argc - optind;
	if (!o->nfiles)
		return usage_error("no file to upload: give one or more capture files");
	return 0;
}

/* A file read for sending: its bytes, and the binary OTLP they hold. */
struct upload_file {
	struct buf raw, plain, wire;
	const void *otlp;
	size_t len;
};

/* Read @path into @f and check it: binary OTLP, gzip'd or OTLP/JSON, sent
 * as binary OTLP. 0 or 1 (the exit code for this file). */
static int load(const char *path, struct upload_file *f)
{
	char why[256];
	size_t nprof;
	int err;

	err = buf__read_file(&f->raw, path);
	if (err == -E2BIG) {
		pr_err("%s is larger than %lu MiB: not a profcap capture; left in place", path,
		       UPLOAD_MAX_BYTES >> 20);
		return 1;
	}
	if (err) {
		pr_err("cannot read %s: %s; check the path and its permissions", path,
		       strerror(-err));
		return 1;
	}
	f->otlp = f->raw.data;
	f->len = f->raw.len;
	err = otlp_read__wire(&f->otlp, &f->len, UPLOAD_MAX_BYTES, &f->plain, &f->wire, why,
			      sizeof(why));
	if (err || upload__check(f->otlp, f->len, &nprof, why, sizeof(why))) {
		pr_err("%s is not an OTLP ProfilesData capture (%s); left in place", path, why);
		return 1;
	}
	pr_debug("%s: %zu bytes, %zu profiles", path, f->len, nprof);
	return 0;
}

/* Spool files in directory @dir: regular "*.pb" files, not hidden. */
static int spool_entry(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return e->d_name[0] != '.' && n > 3 && !strcmp(e->d_name + n - 3, ".pb") &&
	       (e->d_type == DT_REG || e->d_type == DT_UNKNOWN);
}

static int send_file(struct exporter *exp, const struct otlp_config *cfg,
		     const struct upload_opts *o, const char *path, const struct upload_file *f)
{
	struct export_result r;
	char where[64] = "";
	int err;

	err = exporter__export(exp, f->otlp, f->len, &r);
	if (err) {
		pr_err("cannot deliver %s to %s: %s; the file is left in place: run 'profcap "
		       "upload %s' again later",
		       path, cfg->url, r.error[0] ? r.error : strerror(-err), path);
		return 3;
	}
	if (o->remove_sent) {
		if (unlink(path))
			pr_warn("delivered %s but cannot remove it: %s; delete it by hand so it is "
				"not sent again",
				path, strerror(errno));
		else
			snprintf(where, sizeof(where), ", removed");
	}
	if (r.rejected > 0)
		pr_warn("sent %s (%zu bytes, %zu on the wire) to %s in %.0f ms (%u attempt%s%s); "
			"the endpoint rejected %lld profiles: %s",
			path, f->len, r.bytes_sent, cfg->url, r.seconds * 1e3, r.attempts,
			r.attempts == 1 ? "" : "s", where, (long long)r.rejected,
			r.partial_message[0] ? r.partial_message : "(no message)");
	else if (r.partial_message[0])
		pr_info("sent %s (%zu bytes, %zu on the wire) to %s in %.0f ms (%u attempt%s%s); "
			"the endpoint said: %s",
			path, f->len, r.bytes_sent, cfg->url, r.seconds * 1e3, r.attempts,
			r.attempts == 1 ? "" : "s", where, r.partial_message);
	else
		pr_info("sent %s (%zu bytes, %zu on the wire) to %s in %.0f ms (%u attempt%s%s)",
			path, f->len, r.bytes_sent, cfg->url, r.seconds * 1e3, r.attempts,
			r.attempts == 1 ? "" : "s", where);
	return 0;
}

/* Load and send one file: 0, or the file's exit code (1 bad, 3 undelivered). */
static int upload_one(struct exporter *exp, const struct otlp_config *cfg,
		      const struct upload_opts *o, const char *path)
{
	struct upload_file f;
	int ret;

	buf__init(&f.raw, UPLOAD_MAX_BYTES);
	buf__init(&f.plain, UPLOAD_MAX_BYTES);
	buf__init(&f.wire, UPLOAD_MAX_BYTES);
	ret = load(path, &f) ?: send_file(exp, cfg, o, path, &f);
	buf__release(&f.raw);
	buf__release(&f.plain);
	buf__release(&f.wire);
	return ret;
}

/* Send every spool file of directory @dir, oldest name first. The worst
 * exit code of its files. */
static int upload_dir(struct exporter *exp, const struct otlp_config *cfg,
		      const struct upload_opts *o, const char *dir)
{
	struct dirent **names = NULL;
	char path[4096];
	int n, i, ret = 0, r;

	n = scandir(dir, &names, spool_entry, alphasort);
	if (n < 0) {
		pr_err("cannot read directory %s: %s; check the path and its permissions", dir,
		       strerror(errno));
		return 1;
	}
	if (!n)
		pr_info("%s holds no capture (*.pb) to send", dir);
	for (i = 0; i < n; i++) {
		if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name) <
		    (int)sizeof(path)) {
			r = upload_one(exp, cfg, o, path);
			ret = r > ret ? r : ret;
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

int upload__main(int argc, char **argv)
{
	struct otlp_config *cfg = NULL;
	struct exporter *exp = NULL;
	bool bad = false, undelivered = false;
	struct upload_opts o;
	struct stat st;
	int ret, i;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	log__set_level(o.verbose ? LOG_VERBOSE : o.quiet ? LOG_QUIET : LOG_NORMAL);
	if (otlp_config__resolve(&o.export, env__process(), &cfg))
		return 2;
	if (!cfg) {
		pr_err("upload needs an endpoint: give --endpoint URL or set "
		       "OTEL_EXPORTER_OTLP_ENDPOINT");
		return 2;
	}
	exp = exporter__new(cfg);
	if (!exp) {
		otlp_config__free(cfg);
		return 2;
	}
	for (i = 0; i < o.nfiles; i++) {
		if (!stat(o.files[i], &st) && S_ISDIR(st.st_mode))
			ret = upload_dir(exp, cfg, &o, o.files[i]);
		else
			ret = upload_one(exp, cfg, &o, o.files[i]);
		bad |= ret == 1;
		undelivered |= ret == 3;
	}
	exporter__free(exp);
	otlp_config__free(cfg);
	return bad ? 1 : undelivered ? 3 : 0;
}
