/* test_v8frames.c - naming V8 JavaScript frames and merging them with
 * native ones: the source position table and line lookup on hand-made
 * tables, the BPF words, the merge; then a live node stopped and walked
 * as the BPF walker will (v8fixture.h), its frames named against the
 * workload's ground truth (an optimized function, an interpreted one, a
 * class method, an anonymous function; script and lines). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/otlp.h"
#include "model/profile.h"
#include "util/buf.h"
#include "test.h"
#include "v8fixture.h"
#include "v8.h"
#include "proc/v8proc.h"
#include "symbolize/v8frames.h"

/* ---- hand-made source position tables (V8's encoding) ---- */

static size_t put_varint(unsigned char *p, __s64 v)
{
	__u64 z = ((__u64)v << 1) ^ (__u64)(v >> 63);
	size_t n = 0;

	do {
		p[n] = (unsigned char)(z & 0x7f);
		z >>= 7;
		if (z)
			p[n] |= 0x80;
		n++;
	} while (z);
	return n;
}

/* Entries (code offset, script offset, statement), ascending. */
static size_t table(unsigned char *buf, const __s64 (*e)[3], size_t n)
{
	__s64 code = 0, pos = 0;
	size_t len = 0, i;

	for (i = 0; i < n; i++) {
		__s64 raw = (e[i][1] + 1) << 1; /* SourcePosition: offset + 1 above the external bit */
		__s64 d = e[i][0] - code;

		len += put_varint(buf + len, e[i][2] ? d : -d - 1);
		len += put_varint(buf + len, raw - pos);
		code = e[i][0];
		pos = raw;
	}
	return len;
}

TEST(positions)
{
	static const __s64 e[][3] = {{0, 40, 1}, {3, 52, 0}, {9, 200, 1}, {300, 70000, 1}};
	unsigned char buf[64];
	size_t len = table(buf, e, 4);

	CHECK_EQ_U64(v8frames__position(buf, len, 0), 40);
	CHECK_EQ_U64(v8frames__position(buf, len, 2), 40);
	CHECK_EQ_U64(v8frames__position(buf, len, 3), 52); /* not a statement: still a position */
	CHECK_EQ_U64(v8frames__position(buf, len, 8), 52);
	CHECK_EQ_U64(v8frames__position(buf, len, 9), 200);
	CHECK_EQ_U64(v8frames__position(buf, len, 299), 200);
	CHECK_EQ_U64(v8frames__position(buf, len, 5000), 70000); /* multi-byte varints */
	CHECK_EQ_U64(v8frames__first_position(buf, len), 40);
	/* empty, cut in the middle of a varint */
	CHECK_EQ_U64(v8frames__position(buf, 0, 3), (__u64)-1);
	CHECK_EQ_U64(v8frames__first_position(buf, 0), (__u64)-1);
	CHECK_EQ_U64(v8frames__position(buf, len - 1, 5000), 200);
	/* random bytes: bounded, no crash */
	for (int i = 0; i < 2000; i++) {
		unsigned char r[32];

		for (size_t k = 0; k < sizeof(r); k++)
			r[k] = (unsigned char)rand();
		(void)v8frames__position(r, sizeof(r), (__u32)rand());
	}
}

TEST(lines)
{
	/* "a\nbc\n\nd": line ends at 1, 4, 5 */
	static const __u32 ends[] = {1, 4, 5};

	CHECK_EQ_U64(v8frames__line(ends, 3, 0), 1);
	CHECK_EQ_U64(v8frames__line(ends, 3, 1), 1); /* the newline ends its line */
	CHECK_EQ_U64(v8frames__line(ends, 3, 2), 2);
	CHECK_EQ_U64(v8frames__line(ends, 3, 4), 2);
	CHECK_EQ_U64(v8frames__line(ends, 3, 5), 3);
	CHECK_EQ_U64(v8frames__line(ends, 3, 6), 4); /* last line, no newline */
	CHECK_EQ_U64(v8frames__line(ends, 3, -1), 0);
	CHECK_EQ_U64(v8frames__line(ends, 0, 7), 1);
}

TEST(words_and_abi)
{
	__u64 w[7] = {0x1234567890ull | (0xbeefull << 48), 0x7f0000001000ull,
		      0x2aull | (__u64)V8FRAMES_KIND_INTERPRETED << 32 | (__u64)V8FRAMES_FRAME_NOSFI << 40,
		      0x5555ull, 0x6666ull, 0xffffffffull | (__u64)V8FRAMES_KIND_JIT << 32, 0x9};
	struct v8frames_raw r[4];

	/* the namer's constants are the BPF record's */
	CHECK_EQ_U64(V8FRAMES_KIND_INTERPRETED, PROFCAP_V8_KIND_INTERPRETED);
	CHECK_EQ_U64(V8FRAMES_KIND_JIT, PROFCAP_V8_KIND_JIT);
	CHECK_EQ_U64(V8FRAMES_KIND_BUILTIN, PROFCAP_V8_KIND_BUILTIN);
	CHECK_EQ_U64(V8FRAMES_FRAME_NOSFI, PROFCAP_V8_FRAME_NOSFI);
	CHECK_EQ_U64(V8FRAMES_NO_OFFSET, PROFCAP_V8_NO_OFFSET);
	CHECK_EQ_U64(V8FRAMES_WORDS, PROFCAP_V8_WORDS);
	CHECK_EQ_U64(v8frames__fingerprint(3, 2, 17, 0x3f568b61d531ull),
		     profcap_v8_fingerprint(3, 2, 17, 0x3f568b61d531ull));
	CHECK_EQ_U64(v8frames__decode(w, 7, r, 4), 2); /* the odd word is dropped */
	CHECK_EQ_U64(r[0].sfi, 0x1234567890ull);
	CHECK_EQ_U64(r[0].fingerprint, 0xbeef);
	CHECK_EQ_U64(r[0].pc, 0x7f0000001000ull);
	CHECK_EQ_U64(r[0].offset, 0x2a);
	CHECK_EQ_U64(r[0].kind, V8FRAMES_KIND_INTERPRETED);
	CHECK_EQ_U64(r[0].flags, V8FRAMES_FRAME_NOSFI);
	CHECK_EQ_U64(r[1].offset, V8FRAMES_NO_OFFSET);
	CHECK_EQ_U64(v8frames__decode(w, 6, r, 1), 1); /* the cap */
}

static struct profile_frame named(const char *name)
{
	struct profile_frame f = {.function = name};

	return f;
}

TEST(merge)
{
	/* native: leaf [anon] JIT frame 0x100, InterpreterEntryTrampoline
	 * 0x200, native C++ 0x300, trampoline 0x400, node::Start 0x500 */
	const __u64 pcs[] = {0x100, 0x200, 0x300, 0x400, 0x500};
	struct profile_frame nat[5] = {named("[anon]"), named("Builtins_InterpreterEntryTrampoline"),
				       named("v8::internal::Invoke"),
				       named("Builtins_InterpreterEntryTrampoline"), named("node::Start")};
	struct profile_frame js[4] = {named("hot"), named("method"), named("main"), named("extra")};
	struct v8frames_raw raw[4] = {{.pc = 0x100}, {.pc = 0x200}, {.pc = 0x400}, {.pc = 0x999}};
	struct profile_frame out[16];
	size_t n;

	n = v8frames__merge(pcs, nat, 5, js, raw, 3, out, 16);
	CHECK_EQ_U64(n, 5);
	CHECK_STR(out[0].function, "hot");
	CHECK_STR(out[1].function, "method");
	CHECK_STR(out[2].function, "v8::internal::Invoke"); /* native between JS frames stays */
	CHECK_STR(out[3].function, "main");
	CHECK_STR(out[4].function, "node::Start");
	/* a JS frame the native walk missed (a leaf in a prologue) goes
	 * before the one that matches */
	raw[0].pc = 0x42;
	n = v8frames__merge(pcs, nat, 5, js, raw, 3, out, 16);
	CHECK_EQ_U64(n, 6);
	CHECK_STR(out[0].function, "[anon]");
	CHECK_STR(out[1].function, "hot");
	CHECK_STR(out[2].function, "method");
	/* the native stack cut short: the JS frames left go at the root end */
	raw[0].pc = 0x100;
	n = v8frames__merge(pcs, nat, 2, js, raw, 4, out, 16);
	CHECK_EQ_U64(n, 4);
	CHECK_STR(out[2].function, "main");
	CHECK_STR(out[3].function, "extra");
	/* bounded by the room */
	CHECK_EQ_U64(v8frames__merge(pcs, nat, 5, js, raw, 4, out, 3), 3);
	/* a frame a perf map named (--perf-basic-prof) keeps its name */
	nat[0].type_name = V8FRAMES_TYPE;
	nat[0].function = "LazyCompile:*hot /app.js:8";
	n = v8frames__merge(pcs, nat, 5, js, raw, 3, out, 16);
	CHECK_EQ_U64(n, 5);
	CHECK_STR(out[0].function, "LazyCompile:*hot /app.js:8");
	CHECK_STR(out[1].function, "method");
	nat[0] = named("[anon]");
	/* no JS frames: the native stack as it is */
	n = v8frames__merge(pcs, nat, 5, js, raw, 0, out, 16);
	CHECK_EQ_U64(n, 5);
	CHECK_STR(out[0].function, "[anon]");
}

/* The function cache is bounded: past V8FRAMES_MAX_FUNCS entries it is
 * cleared (counted); every unreadable frame is unknown. */
TEST(cache_bounded)
{
	struct v8frames *vf = v8frames__new(NULL);
	struct v8frames_stats st;
	struct profile_frame f[64];
	struct v8frames_raw raw[64];
	struct v8proc vp;
	size_t i, k;

	CHECK(vf);
	memset(&vp, 0, sizeof(vp));
	vp.layout.tagged_size = 8;
	vp.layout.smi_shift = 32;
	vp.layout.heap_tag = 1;
	vp.layout.heap_tag_mask = 3;
	vp.layout.map_instance_type = 12;
	vp.layout.type_sfi = 262;
	CHECK_EQ_U64(v8frames__set_process(vf, getpid(), &vp), 0);
	/* addresses nothing is mapped at, in this very process */
	for (i = 0; i < V8FRAMES_MAX_FUNCS + 64 * 4; i += 64) {
		for (k = 0; k < 64; k++)
			raw[k] = (struct v8frames_raw){.sfi = 0x100000000000ull + 16 * (i + k),
						       .kind = V8FRAMES_KIND_JIT};
		CHECK_EQ_U64(v8frames__resolve(vf, getpid(), raw, 64, f), 0);
	}
	v8frames__stats(vf, &st);
	CHECK_STR(f[63].function, V8FRAMES_UNKNOWN);
	CHECK(st.evictions >= 1);
	CHECK(st.cached <= V8FRAMES_MAX_FUNCS);
	CHECK_EQ_U64(st.unknown, V8FRAMES_MAX_FUNCS + 64 * 4);
	/* the same frames again: cached (as unreadable), not read again */
	CHECK_EQ_U64(v8frames__resolve(vf, getpid(), raw, 64, f), 0);
	v8frames__stats(vf, &st);
	CHECK(st.hits >= 64);
	v8frames__free(vf);
	v8frames__free(NULL);
}

/* ---- a live node ---- */

struct truth {
	size_t samples, hot, interp, method, loop, unknown, merged_ok, compile;
};

static const char *file_of(const struct profile_frame *f)
{
	return f->nlines && f->lines->filename ? f->lines->filename : "";
}

/* Check one walked sample against the workload: 0 when right. */
static int check_sample(const struct v8fx_child *c, const struct v8fx_walk *w,
			const struct v8frames_raw *raw, const struct profile_frame *f, size_t n,
			struct truth *t)
{
	struct profile_frame nat[64], out[128];
	size_t i, m;

	t->samples++;
	for (i = 0; i < n; i++) {
		const char *fn = f[i].function;
		__s64 line = f[i].nlines ? f[i].lines->line : -1;

		if (!strcmp(fn, V8FRAMES_UNKNOWN)) {
			t->unknown++;
			continue;
		}
		if (strcmp(f[i].type_name, V8FRAMES_TYPE))
			return -1;
		if (!strcmp(fn, "hot")) {
			if (raw[i].kind != V8FRAMES_KIND_JIT || line != V8FX_HOT_START ||
			    f[i].lines->start_line != V8FX_HOT_START || strcmp(file_of(&f[i]), c->script))
				return -2;
			t->hot++;
		} else if (!strcmp(fn, "interp")) {
			if (raw[i].kind != V8FRAMES_KIND_INTERPRETED || line != V8FX_INTERP_LINE ||
			    f[i].lines->start_line != V8FX_INTERP_START)
				return -3;
			t->interp++;
		} else if (!strcmp(fn, "method")) {
			if (line != V8FX_METHOD_LINE || i + 1 >= n || strcmp(f[i + 1].function, "(anonymous)"))
				return -4;
			t->method++;
		} else if (!strcmp(fn, "Module._compile")) {
			/* node's loader: an inferred name, an external source */
			if (strcmp(file_of(&f[i]), "node:internal/modules/cjs/loader"))
				return -5;
			t->compile++;
		} else if (!strcmp(fn, "(anonymous)") && !strcmp(file_of(&f[i]), c->script) &&
			   line == V8FX_LOOP_LINE) {
			t->loop++;
		}
	}
	/* each JS frame replaces the native frame of its pc */
	for (i = 0; i < w->npcs; i++)
		nat[i] = named("native");
	m = v8frames__merge(w->pcs, nat, w->npcs, f, raw, n, out, 128);
	if (m == w->npcs)
		t->merged_ok++;
	return 0;
}

TEST(live_names)
{
	struct v8frames *vf = v8frames__new(NULL);
	struct v8frames_stats st;
	struct v8fx_child c;
	struct v8proc vp;
	struct truth t = {0};
	int err, tries, bad = 0;

	CHECK(vf);
	err = v8fx__start(&c);
	if (err == -ENOENT) {
		v8frames__free(vf);
		SKIP("%s not installed", V8FX_NODE);
	}
	CHECK_EQ_U64(err, 0);
	err = v8proc__locate(NULL, c.pid, NULL, &vp);
	if (!err)
		err = v8frames__set_process(vf, c.pid, &vp);
	for (tries = 0; !err && tries < 200 && (t.samples < 30 || !t.interp || !t.hot); tries++) {
		struct v8fx_walk w;
		struct v8frames_raw raw[64];
		struct profile_frame f[64];
		size_t n;

		v8fx__sleep_ms(7);
		if (v8fx__walk(c.pid, &vp, &w) || !w.nwords)
			continue;
		n = v8frames__decode(w.words, w.nwords, raw, 64);
		v8frames__resolve(vf, c.pid, raw, n, f);
		if (!bad)
			bad = check_sample(&c, &w, raw, f, n, &t);
	}
	v8fx__stop(&c);
	v8frames__stats(vf, &st);
	v8frames__free(vf);
	CHECK_EQ_U64(err, 0);
	if (bad)
		printf("# sample %zu wrong (%d)\n", t.samples, bad);
	CHECK_EQ_U64(bad, 0);
	CHECK(t.samples >= 30);
	CHECK(t.hot > 0 && t.interp > 0); /* both tiers seen and named */
	CHECK(t.method + 1 >= t.samples / 2); /* every JS stack goes through method */
	CHECK(t.loop > 0);
	CHECK_EQ_U64(t.compile, t.samples); /* the script runs in Module._compile */
	CHECK_EQ_U64(t.unknown, 0);
	CHECK_EQ_U64(t.merged_ok, t.samples);
	CHECK(st.hits > st.misses); /* functions are read once */
}

/* A fingerprint that does not match (a collected and reused address)
 * names nothing; a process forgotten names nothing. */
TEST(live_refusals)
{
	struct v8frames *vf = v8frames__new(NULL);
	struct v8frames_stats st;
	struct v8fx_child c;
	struct v8fx_walk w = {0};
	struct v8frames_raw raw[64];
	struct profile_frame f[64];
	struct v8proc vp;
	size_t n = 0;
	int err, tries;

	CHECK(vf);
	err = v8fx__start(&c);
	if (err == -ENOENT) {
		v8frames__free(vf);
		SKIP("%s not installed", V8FX_NODE);
	}
	CHECK_EQ_U64(err, 0);
	err = v8proc__locate(NULL, c.pid, NULL, &vp);
	if (!err)
		err = v8frames__set_process(vf, c.pid, &vp);
	for (tries = 0; !err && tries < 50 && !w.nwords; tries++) {
		v8fx__sleep_ms(5);
		if (v8fx__walk(c.pid, &vp, &w))
			w.nwords = 0;
	}
	if (!err && w.nwords) {
		n = v8frames__decode(w.words, w.nwords, raw, 64);
		raw[0].fingerprint ^= 0x5a5a;
		raw[1].flags |= V8FRAMES_FRAME_NOSFI;
		raw[2].sfi += 8; /* not an object's start */
		v8frames__resolve(vf, c.pid, raw, 3, f);
	}
	v8fx__stop(&c);
	v8frames__stats(vf, &st);
	CHECK_EQ_U64(err, 0);
	CHECK(n >= 3);
	CHECK_STR(f[0].function, V8FRAMES_UNKNOWN);
	CHECK_EQ_U64(f[0].nlines, 0);
	CHECK_STR(f[1].function, V8FRAMES_UNKNOWN);
	CHECK_STR(f[2].function, V8FRAMES_UNKNOWN);
	CHECK_STR(f[0].type_name, V8FRAMES_TYPE);
	CHECK(st.changed >= 1);
	CHECK_EQ_U64(st.unknown, 3);
	/* gone: nothing cached or read names it */
	v8frames__forget(vf, c.pid);
	CHECK_EQ_U64(v8frames__resolve(vf, c.pid, raw, 1, f), 0);
	CHECK(v8frames__process(vf, c.pid) == NULL);
	v8frames__free(vf);
}

/* The official checker, as tests/e2e/otlp_check.py finds it: PROFCHECK,
 * else ../shared/tools/profcheck/profcheck from the working directory. */
static const char *profcheck(void)
{
	const char *p = getenv("PROFCHECK");

	if (p && *p && !access(p, X_OK))
		return p;
	p = "../shared/tools/profcheck/profcheck";
	return access(p, X_OK) ? NULL : p;
}

/* Write @b to a file and run the checker on it: its exit status. */
static int run_profcheck(const char *pc, const struct buf *b)
{
	char path[] = "/tmp/profcap_v8otlp_XXXXXX", cmd[512];
	int fd = mkstemp(path), rc;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	rc = f && fwrite(b->data, 1, b->len, f) == b->len ? 0 : -1;
	if (f)
		fclose(f);
	if (!rc) {
		/* its findings go to the test's output */
		snprintf(cmd, sizeof(cmd), "%s -check-dupes -check-orphans %s >&2", pc, path);
		rc = system(cmd);
	}
	unlink(path);
	return rc;
}

/* Live-named JavaScript frames merged with native ones, in OTLP: typed
 * v8js, no mapping or address, the official checker finds no duplicate
 * and no orphan. */
TEST(otlp_conformance)
{
	static const struct profile_mapping_desc m = {.start = 0x400000, .limit = 0x500000,
						      .path = "/usr/bin/node"};
	struct v8frames *vf = v8frames__new(NULL);
	struct profile_process_desc proc = {.pid = 42, .exe_name = "node"};
	struct profile *p = profile__new();
	const char *pc = profcheck();
	struct v8fx_child c;
	struct v8proc vp;
	struct buf b;
	int err, tries, added = 0, rc;

	CHECK(vf && p);
	err = v8fx__start(&c);
	if (err == -ENOENT) {
		v8frames__free(vf);
		profile__free(p);
		SKIP("%s not installed", V8FX_NODE);
	}
	err = err ?: v8proc__locate(NULL, c.pid, NULL, &vp);
	err = err ?: v8frames__set_process(vf, c.pid, &vp);
	for (tries = 0; !err && tries < 100 && added < 10; tries++) {
		struct v8fx_walk w;
		struct v8frames_raw raw[64];
		struct profile_frame f[64], nat[64], out[128];
		size_t n, i;

		v8fx__sleep_ms(5);
		if (v8fx__walk(c.pid, &vp, &w) || !w.nwords)
			continue;
		n = v8frames__decode(w.words, w.nwords, raw, 64);
		v8frames__resolve(vf, c.pid, raw, n, f);
		for (i = 0; i < w.npcs; i++)
			nat[i] = (struct profile_frame){.address = 0x401000 + 16 * i, .mapping = &m,
							.function = "native"};
		n = v8frames__merge(w.pcs, nat, w.npcs, f, raw, n, out, 128);
		err = profile__add_sample(p, &proc, 42, "node", out, n, 1);
		added++;
	}
	v8fx__stop(&c);
	if (!err) {
		buf__init(&b, 1u << 24);
		err = otlp__encode(p, &b);
	}
	profile__free(p);
	v8frames__free(vf);
	CHECK_EQ_U64(err, 0);
	CHECK(added >= 10);
	/* "v8js" is written once, as the attribute value */
	rc = memmem(b.data, b.len, "v8js", 4) != NULL;
	if (!rc || !pc)
		buf__release(&b);
	CHECK(rc);
	if (!pc)
		SKIP("no profcheck (PROFCHECK, ../shared/tools/profcheck/profcheck)");
	rc = run_profcheck(pc, &b);
	buf__release(&b);
	CHECK_EQ_U64(rc, 0);
}

int main(void)
{
	RUN(positions);
	RUN(lines);
	RUN(words_and_abi);
	RUN(merge);
	RUN(cache_bounded);
	RUN(live_names);
	RUN(live_refusals);
	RUN(otlp_conformance);
	return TEST_DONE();
}
