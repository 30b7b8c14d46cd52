/* input.c - read a capture in any form profcap takes (see input.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/input.h"
#include "formats/otlp_json_read.h"
#include "formats/otlp_read.h"
#include "formats/perf_data.h"
#include "formats/perf_data_kernel.h"
#include "formats/perf_data_unwind.h"
#include "formats/perf_script.h"
#include "formats/pprof_read.h"
#include "model/profile.h"
#include "symbolize/resymbolize.h"
#include "util/buf.h"
#include "util/gz.h"
#include "util/id.h"
#include "util/log.h"
#include "util/version.h"
#include "util/wire.h"

/* Parse perf script text into *@out and give it capture metadata. 0 or 1
 * (logged). */
static int read_perf_script(const struct input_opts *o, const char *name, const struct buf *in,
			    struct profile **out)
{
	struct perf_script_stats st;
	struct profile_meta m = {0};
	struct timespec now;
	char why[256] = "", note[256];
	int err;

	err = perf_script__parse(in->data, in->len, out, &st, why, sizeof(why));
	if (err) {
		if (err == -EBADMSG)
			pr_err("%s: %s (expected the text output of 'perf script')", name, why);
		else
			pr_err("%s: cannot convert the perf script text: %s", name, strerror(-err));
		return 1;
	}
	if (st.skipped)
		pr_warn("%s: skipped %zu line%s that are not perf script samples (first: line "
			"%zu)",
			name, st.skipped, st.skipped == 1 ? "" : "s", st.first_skipped_line);
	if (st.truncated)
		pr_warn("%s: %zu callchain%s longer than the model's limit were cut", name,
			st.truncated, st.truncated == 1 ? "" : "s");
	if (perf_script__pid_note(&st, note, sizeof(note)))
		pr_warn("%s: %s", name, note);
	clock_gettime(CLOCK_REALTIME, &now);
	m.duration_nano = st.duration_ns;
	m.time_unix_nano = (__u64)now.tv_sec * 1000000000ull + (__u64)now.tv_nsec;
	m.time_unix_nano =
		m.time_unix_nano > m.duration_nano ? m.time_unix_nano - m.duration_nano : 0;
	m.period_ns = st.period;
	m.os_type = "linux";
	m.scope_name = "profcap";
	m.scope_version = PROFCAP_VERSION;
	id__random(m.profile_id);
	if (o->embed_original) {
		m.original_payload = in->data;
		m.original_payload_len = in->len;
		m.original_payload_format = PERF_PAYLOAD_FORMAT;
	}
	if (profile__set_meta(*out, &m)) {
		pr_err("out of memory converting %s", name);
		profile__free(*out);
		*out = NULL;
		return 1;
	}
	pr_debug("%s: %zu perf script samples", name, st.samples);
	return 0;
}

/* The semconv host.arch of perf's architecture name (uname -m). */
static const char *host_arch(const char *arch)
{
	if (!strcmp(arch, "x86_64"))
		return "amd64";
	if (!strcmp(arch, "aarch64"))
		return "arm64";
	return arch[0] ? arch : NULL;
}

/* Say once what the perf.data reader could not keep. */
static void perf_data_warn(const char *name, const struct perf_data_stats *st)
{
	if (st->lost || st->unreadable)
		pr_warn("%s: %llu sample%s lost by the kernel while recording, %zu unreadable "
			"sample record%s skipped",
			name, (unsigned long long)st->lost, st->lost == 1 ? "" : "s",
			st->unreadable, st->unreadable == 1 ? "" : "s");
	if (st->unwound)
		pr_debug("%s: %zu dwarf-mode user stacks walked, %zu stopped early", name,
			 st->unwound, st->unwind_partial);
	pr_debug("%s: perf.data of '%s' on %s (%s, %s), %u event%s, first %s, %zu samples", name,
		 st->cmdline, st->hostname, st->osrelease, st->arch, st->events,
		 st->events == 1 ? "" : "s", st->event, st->samples);
}

/* Symbolize @p's native frames from the mapped files found by build-id,
 * as a capture is named, and give it its meta. 0 or -errno (logged). */
static int perf_data_finish(const char *name, const char *path, const struct perf_data_stats *st,
			    struct profile **p)
{
	static const struct perf_data_kernel_src kernel = {.notes = "/sys/kernel/notes",
							   .kallsyms = "/proc/kallsyms"};
	struct profile_meta m = {0};
	struct profile *named = NULL;
	struct timespec now;
	struct stat sb;
	bool knamed;
	int err;

	err = resymbolize__profile(*p, NULL, 0, &named, NULL);
	if (err) {
		pr_err("%s: cannot name the perf.data frames: %s", name, strerror(-err));
		return err;
	}
	profile__free(*p);
	*p = named;
	err = perf_data_kernel__name(p, &kernel, &knamed);
	if (err) {
		pr_err("%s: cannot name the kernel frames: %s", name, strerror(-err));
		return err;
	}
	if (!knamed)
		pr_debug("%s: kernel frames keep their addresses (recorded by another kernel "
			 "or boot, or /proc/kallsyms unreadable)",
			 name);
	clock_gettime(CLOCK_REALTIME, &now);
	/* perf.data has no wall-clock start: the file was written at the end */
	if (strcmp(path, "-") && !stat(path, &sb))
		now = sb.st_mtim;
	m.duration_nano = st->duration_ns;
	m.time_unix_nano = (__u64)now.tv_sec * 1000000000ull + (__u64)now.tv_nsec;
	m.time_unix_nano =
		m.time_unix_nano > m.duration_nano ? m.time_unix_nano - m.duration_nano : 0;
	m.period_ns = st->period;
	m.host_name = st->hostname[0] ? st->hostname : NULL;
	m.host_arch = host_arch(st->arch);
	m.os_type = "linux";
	m.scope_name = "profcap";
	m.scope_version = PROFCAP_VERSION;
	m.samples_dropped = st->lost + st->unreadable;
	m.samples_truncated = st->unwind_partial + st->truncated;
	m.samples_truncated_depth = st->truncated;
	id__random(m.profile_id);
	err = profile__set_meta(*p, &m);
	if (err)
		pr_err("out of memory converting %s", name);
	return err;
}

/* Parse perf.data into *@out with symbols and capture metadata. 0 or 1
 * (logged). */
static int read_perf_data(const char *name, const char *path, const struct buf *in,
			  struct profile **out)
{
	struct perf_data_unwinder *u;
	struct perf_data_unwind_ops ops;
	struct perf_data_stats st;
	char why[256] = "";
	struct stat sb;
	int err;

	/* Files changed after the recording ended are not trusted for it. */
	u = perf_data_unwinder__new(strcmp(path, "-") && !stat(path, &sb) ? sb.st_mtime : 0);
	if (!u) {
		pr_err("out of memory reading %s", name);
		return 1;
	}
	ops = perf_data_unwinder__ops(u);
	err = perf_data__parse(in->data, in->len, &ops, out, &st, why, sizeof(why));
	perf_data_unwinder__free(u);
	if (err) {
		if (err == -EBADMSG)
			pr_err("%s: %s (a perf.data file cut short or damaged?)", name, why);
		else
			pr_err("%s: cannot read the perf.data file: %s", name, strerror(-err));
		return 1;
	}
	perf_data_warn(name, &st);
	if (perf_data_finish(name, path, &st, out)) {
		profile__free(*out);
		*out = NULL;
		return 1;
	}
	return 0;
}

/* Whether @in reads whole as protobuf whose top-level fields are only
 * ProfilesData's (1 resource_profiles, 2 dictionary, both messages): an
 * OTLP file whose first strings make its start look like text. */
static bool looks_like_otlp(const struct buf *in)
{
	struct wire w = wire__from(in->data, in->len);
	struct wire_field f;
	size_t fields = 0;
	int r;

	while ((r = wire__next(&w, &f)) == 1) {
		if ((f.num != 1 && f.num != 2) || f.wt != WIRE_LEN)
			return false;
		fields++;
	}
	return !r && fields;
}

/* Whether @in starts like text: no NUL and mostly printable in 4 KiB, and
 * not a well-formed OTLP message. */
static bool looks_like_text(const struct buf *in)
{
	size_t i, n = in->len < 4096 ? in->len : 4096, bad = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = in->data[i];

		if (!c)
			return false;
		bad += c < 0x20 && c != '\n' && c != '\t' && c != '\r';
	}
	return bad * 20 < n && !looks_like_otlp(in);
}

/* The kind of @in: perf.data (its magic), pprof (gunzipped first, within what the file can
 * plausibly hold), perf script text, other text, else OTLP. */
static enum input_kind detect(const struct buf *in)
{
	enum input_kind kind = INPUT_OTLP;

	if (perf_data__looks_like(in->data, in->len))
		return INPUT_PERF_DATA;
	if (gz__is_gzip(in->data, in->len)) {
		size_t size = 0;
		struct buf plain;

		if (gz__inflated_size(in->data, in->len,
				      gz__plausible_size(in->len, INPUT_MAX_BYTES), &size))
			return INPUT_OTLP; /* its reader says what is wrong */
		buf__init(&plain, size);
		if (!gz__decompress(in->data, in->len, &plain) &&
		    pprof_read__looks_like(plain.data, plain.len))
			kind = INPUT_PPROF;
		buf__release(&plain);
		return kind;
	}
	if (pprof_read__looks_like(in->data, in->len))
		return INPUT_PPROF;
	if (perf_script__looks_like(in->data, in->len))
		return INPUT_PERF_SCRIPT;
	if (otlp_json_read__looks_like(in->data, in->len))
		return INPUT_OTLP; /* OTLP/JSON: the OTLP reader transcodes it */
	return looks_like_text(in) ? INPUT_TEXT : INPUT_OTLP;
}

/* Parse pprof data into *@out with capture metadata. 0 or 1 (logged). */
static int read_pprof(const char *name, const struct buf *in, struct profile **out)
{
	struct profile_meta m;
	char why[256] = "";
	int err;

	err = pprof_read__parse(in->data, in->len, INPUT_MAX_BYTES, out, why, sizeof(why));
	if (err) {
		pr_err("%s: %s (is it a pprof profile, gzip'd or not?)", name,
		       why[0] ? why : strerror(-err));
		return 1;
	}
	m = *profile__meta(*out);
	m.os_type = "linux";
	m.scope_name = "profcap";
	m.scope_version = PROFCAP_VERSION;
	id__random(m.profile_id);
	if (!m.duration_nano)
		m.duration_nano = 1; /* pprof without a duration: the model wants one */
	if (profile__set_meta(*out, &m)) {
		pr_err("out of memory converting %s", name);
		profile__free(*out);
		*out = NULL;
		return 1;
	}
	return 0;
}

int input__load(const char *path, const struct input_opts *o, struct profile **out)
{
	const char *name = strcmp(path, "-") ? path : "standard input";
	enum input_kind kind = o->from;
	char why[256] = "";
	struct stat st;
	struct buf in;
	int err, ret = 1;

	*out = NULL;
	/* A file over the limit is refused before a byte of it is read. */
	if (strcmp(path, "-") && !stat(path, &st) && S_ISREG(st.st_mode) &&
	    (unsigned long long)st.st_size > INPUT_MAX_BYTES) {
		pr_err("%s is %llu MiB, over the %llu MiB a capture may have: not a profcap "
		       "capture, or split it",
		       name, (unsigned long long)st.st_size >> 20, INPUT_MAX_BYTES >> 20);
		return -E2BIG;
	}
	buf__init(&in, INPUT_MAX_BYTES);
	err = buf__read_file(&in, strcmp(path, "-") ? path : "/dev/stdin");
	if (err == -E2BIG) {
		pr_err("%s is larger than %llu MiB, the most a capture may have", name,
		       INPUT_MAX_BYTES >> 20);
		goto out;
	}
	if (err) {
		pr_err("cannot read %s: %s; check the path and its permissions", name,
		       strerror(-err));
		goto out;
	}
	if (!in.len) {
		pr_err("%s: empty input (0 bytes): not a capture", name);
		goto out;
	}
	if (kind == INPUT_AUTO)
		kind = detect(&in);
	if (kind == INPUT_PERF_SCRIPT) {
		ret = read_perf_script(o, name, &in, out);
		goto out;
	}
	if (kind == INPUT_PERF_DATA) {
		ret = read_perf_data(name, path, &in, out);
		goto out;
	}
	if (kind == INPUT_PPROF) {
		ret = read_pprof(name, &in, out);
		goto out;
	}
	if (kind == INPUT_TEXT) {
		pr_err("%s is text but not 'perf script' output (its first record is no perf "
		       "script sample header); profcap reads OTLP, pprof, 'perf script' text or "
		       "a perf.data file",
		       name);
		goto out;
	}
	err = otlp_read__parse(in.data, in.len, out, why, sizeof(why));
	if (err) {
		pr_err("%s: %s (is it an OTLP Profiles file, 'perf script' text with --from "
		       "perf-script, or a perf.data file?)",
		       name, why);
		goto out;
	}
	ret = 0;
out:
	buf__release(&in);
	return ret ? -EBADMSG : 0;
}
