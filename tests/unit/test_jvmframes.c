/* test_jvmframes.c - Java frames: the BPF words, HotSpot's compressed
 * line tables and scopes, the merge with native frames, and names, files
 * and lines of a live JVM's thread walked from user space as the BPF
 * walker will (jvmfixture.h), interpreted (-Xint) and C2-compiled with
 * inlining, against the workload's known methods and lines; Java thread
 * names by kernel thread id. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/otlp.h"
#include "model/profile.h"
#include "proc/jvmproc.h"
#include "symbolize/jvmframes.h"
#include "util/buf.h"
#include "test.h"
#include "jvmfixture.h"

TEST(words)
{
	struct jvmframes_raw in = {.addr = 0x7f0012345678ull,
				   .pos = 0x1234,
				   .fingerprint = 0xbeef,
				   .kind = JVMFRAMES_KIND_BLOB,
				   .flags = JVMFRAMES_FRAME_LEAF},
			     out[2];
	__u64 w[4];

	jvmframes__encode(&in, w);
	CHECK_EQ_U64(w[0], 0xbeef7f0012345678ull);
	jvmframes__encode(&in, w + 2);
	w[2] |= 0; /* same frame twice */
	CHECK_EQ_U64(jvmframes__decode(w, 4, out, 2), 2);
	CHECK_EQ_U64(out[1].addr, in.addr);
	CHECK_EQ_U64(out[1].pos, in.pos);
	CHECK_EQ_U64(out[1].fingerprint, in.fingerprint);
	CHECK_EQ_U64(out[1].kind, in.kind);
	CHECK_EQ_U64(out[1].flags, in.flags);
	/* an odd word count: the half frame is dropped; the cap holds */
	CHECK_EQ_U64(jvmframes__decode(w, 3, out, 2), 1);
	CHECK_EQ_U64(jvmframes__decode(w, 4, out, 1), 1);
	/* zero words (kind 0) pad a stack: no frame */
	{
		__u64 p[6] = {0};

		jvmframes__encode(&in, p + 2);
		CHECK_EQ_U64(jvmframes__decode(p, 6, out, 3), 1);
		CHECK_EQ_U64(out[0].addr, in.addr);
	}
}

TEST(line_table)
{
	/* (bci, line) from (0, 0): (0, 2) (4, 3) (9, 5) in one byte each
	 * (bci delta << 3 | line delta), then an escape to (300, 1): bci
	 * +291 and line -4, zigzag coded 582 (198 + 6 * 64) and 7 */
	static const __u8 t17[] = {0x02, 0x21, 0x2a, 0xff, 198, 6, 7, 0};
	/* JDK 21+: every byte of an int is one more (0 never appears) */
	static const __u8 t21[] = {0x02, 0x21, 0x2a, 0xff, 199, 7, 8, 0};

	CHECK_EQ_U64(jvmframes__line(t17, sizeof(t17), 0, 0), 2);
	CHECK_EQ_U64(jvmframes__line(t17, sizeof(t17), 3, 0), 2);
	CHECK_EQ_U64(jvmframes__line(t17, sizeof(t17), 4, 0), 3);
	CHECK_EQ_U64(jvmframes__line(t17, sizeof(t17), 9, 0), 5);
	CHECK_EQ_U64(jvmframes__line(t17, sizeof(t17), 299, 0), 5);
	CHECK_EQ_U64(jvmframes__line(t17, sizeof(t17), 300, 0), 1);
	CHECK_EQ_U64(jvmframes__line(t17, sizeof(t17), 1000, 0), 1);
	/* a method being entered (bci -1) is at its first line */
	CHECK_EQ_U64(jvmframes__line(t17, sizeof(t17), -1, 0), 2);
	CHECK_EQ_U64(jvmframes__line(t21, sizeof(t21), 300, 1), 1);
	CHECK_EQ_U64(jvmframes__line(t21, sizeof(t21), 9, 1), 5);
	/* read with the other coding, the escape gives another pair */
	CHECK(jvmframes__line(t21, sizeof(t21), 300, 0) != 1);
	/* cut short: what was read counts, nothing past the buffer */
	CHECK_EQ_U64(jvmframes__line(t17, 5, 300, 0), 5);
	CHECK_EQ_U64(jvmframes__line(t17, 0, 4, 0), 0);
}

TEST(scope_header)
{
	/* sender 700 (= 252 + 7 * 64), method 3, bci 41 (stored 42) */
	static const __u8 s17[] = {252, 7, 3, 42, 99};
	static const __u8 s21[] = {253, 8, 4, 43, 99};
	/* a root scope (sender 0), bci -1 stored as 0, then a run of zeros */
	static const __u8 rle[] = {1, 5, 0, 3};
	__u32 sender, midx;
	__s32 bci;

	CHECK_EQ_U64(jvmframes__scope(s17, sizeof(s17), 0, &sender, &midx, &bci), 0);
	CHECK_EQ_U64(sender, 700);
	CHECK_EQ_U64(midx, 3);
	CHECK_EQ_U64(bci, 41);
	CHECK_EQ_U64(jvmframes__scope(s21, sizeof(s21), 1, &sender, &midx, &bci), 0);
	CHECK_EQ_U64(sender, 700);
	CHECK_EQ_U64(midx, 3);
	CHECK_EQ_U64(bci, 41);
	CHECK_EQ_U64(jvmframes__scope(rle, sizeof(rle), 1, &sender, &midx, &bci), 0);
	CHECK_EQ_U64(sender, 0);
	CHECK_EQ_U64(midx, 4);
	CHECK_EQ_U64((__u64)(__s64)bci, (__u64)-1);
	CHECK_EQ_U64(jvmframes__scope(s17, 2, 0, &sender, &midx, &bci), (__u64)-EINVAL);
	/* truncated after the first int */
	CHECK_EQ_U64(jvmframes__scope(rle + 1, 1, 1, &sender, &midx, &bci), (__u64)-EINVAL);
}

TEST(merge)
{
	struct jvmproc jp = {.code_lo = 0x1000, .code_hi = 0x2000};
	struct profile_frame native[5], java[3], out[8];
	const __u64 pcs[5] = {0x500, 0x1100, 0x1200, 0x700, 0x800};
	size_t i, n;

	memset(native, 0, sizeof(native));
	memset(java, 0, sizeof(java));
	for (i = 0; i < 5; i++)
		native[i].address = pcs[i];
	java[0].function = "A.leaf";
	java[1].function = "A.main";
	java[2].function = "StubRoutines (1)";
	/* native leaf, two code cache frames, then libjvm below */
	n = jvmframes__merge(&jp, pcs, native, 5, java, 2, out, 8);
	CHECK_EQ_U64(n, 5);
	CHECK_EQ_U64(out[0].address, 0x500);
	CHECK_STR(out[1].function, "A.leaf");
	CHECK_STR(out[2].function, "A.main");
	CHECK_EQ_U64(out[3].address, 0x700);
	/* the native walk stopped inside the code cache: the rest at the root */
	n = jvmframes__merge(&jp, pcs, native, 2, java, 3, out, 8);
	CHECK_EQ_U64(n, 4);
	CHECK_STR(out[1].function, "A.leaf");
	CHECK_STR(out[3].function, "StubRoutines (1)");
	/* no Java frames recorded: native frames as they are; the cap holds */
	n = jvmframes__merge(&jp, pcs, native, 5, java, 0, out, 8);
	CHECK_EQ_U64(n, 5);
	CHECK_EQ_U64(out[1].address, 0x1100);
	CHECK_EQ_U64(jvmframes__merge(&jp, pcs, native, 5, java, 3, out, 2), 2);
	CHECK_EQ_U64(jvmframes__merge(NULL, pcs, native, 5, java, 3, out, 8), 8);
}

/* Processes come and go; a frame of a process without a JVM, or of a
 * kind no walker records, is unknown, never named. */
TEST(lifecycle)
{
	struct jvmframes *jf = jvmframes__new(NULL);
	struct jvmproc jp = {.code_lo = 0x1000, .code_hi = 0x2000};
	struct jvmframes_raw r = {.addr = 0x1234, .kind = JVMFRAMES_KIND_INTERP};
	struct jvmframes_stats st;
	struct profile_frame f;

	CHECK(jf != NULL);
	CHECK_EQ_U64(jvmframes__resolve(jf, 0x3ffffff0, &r, 1, &f), 0);
	CHECK_STR(f.function, "<unknown java>");
	CHECK_STR(f.type_name, JVMFRAMES_TYPE);
	CHECK_EQ_U64(f.nlines, 0);
	CHECK_EQ_U64(jvmframes__set_process(jf, 0x3ffffff0, &jp), 0);
	CHECK(jvmframes__process(jf, 0x3ffffff0) != NULL);
	/* no such process: its Method cannot be read */
	CHECK_EQ_U64(jvmframes__resolve(jf, 0x3ffffff0, &r, 1, &f), 0);
	r.kind = 7;
	CHECK_EQ_U64(jvmframes__resolve(jf, 0x3ffffff0, &r, 1, &f), 0);
	jvmframes__stats(jf, &st);
	CHECK_EQ_U64(st.unknown, 3);
	CHECK_EQ_U64(jvmframes__set_process(jf, 0x3ffffff0, NULL), 0);
	CHECK(jvmframes__process(jf, 0x3ffffff0) == NULL);
	jvmframes__stats(jf, &st);
	CHECK_EQ_U64(st.cached, 0);
	jvmframes__forget(jf, 1);
	jvmframes__free(jf);
	jvmframes__free(NULL);
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

/* Java frames in OTLP: an interpreted one, a compiled one with an inlined
 * method (one location, two lines, innermost first), a stub, typed jvm,
 * next to native ones; the official checker finds no duplicate and no
 * orphan. */
TEST(otlp_conformance)
{
	static const struct profile_line inl[2] = {
		{.function = "JvmWork.step", .filename = "JvmWork.java", .line = 20},
		{.function = "JvmWork.middle", .filename = "JvmWork.java", .line = 15},
	};
	static const struct profile_line work = {
		.function = "JvmWork.work", .filename = "JvmWork.java", .line = 24};
	static const struct profile_line stub = {.function = "StubRoutines (1)"};
	static const struct profile_mapping_desc m = {
		.start = 0x400000, .limit = 0x500000, .path = "/usr/lib/jvm/lib/server/libjvm.so"};
	struct profile_frame a[4] = {
		{.function = "JvmWork.work",
		 .type_name = JVMFRAMES_TYPE,
		 .lines = &work,
		 .nlines = 1},
		{.function = "JvmWork.middle",
		 .type_name = JVMFRAMES_TYPE,
		 .lines = inl,
		 .nlines = 2},
		{.function = "StubRoutines (1)",
		 .type_name = JVMFRAMES_TYPE,
		 .lines = &stub,
		 .nlines = 1},
		{.address = 0x401000, .mapping = &m, .function = "JavaCalls::call_helper"},
	};
	struct profile_process_desc proc = {.pid = 42, .exe_name = "java"};
	struct profile *p = profile__new();
	const char *pc = profcheck();
	char path[] = "/tmp/profcap_jvmotlp_XXXXXX", cmd[512];
	struct buf b;
	FILE *f;
	int fd, rc;

	CHECK(p != NULL);
	CHECK_EQ_U64(profile__add_sample(p, &proc, 42, "jvmfx-worker", a, 4, 1), 0);
	CHECK_EQ_U64(profile__add_sample(p, &proc, 43, "main", a, 4, 2), 0);
	CHECK_EQ_U64(profile__add_sample(p, &proc, 42, "jvmfx-worker", &a[1], 3, 1), 0);
	buf__init(&b, 1u << 24);
	rc = otlp__encode(p, &b);
	profile__free(p);
	if (rc)
		buf__release(&b);
	CHECK_EQ_U64(rc, 0);
	CHECK(memmem(b.data, b.len, "JvmWork.step", 12) != NULL);
	if (!pc) {
		buf__release(&b);
		SKIP("no profcheck (PROFCHECK, ../shared/tools/profcheck/profcheck)");
	}
	fd = mkstemp(path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	rc = f && fwrite(b.data, 1, b.len, f) == b.len ? 0 : -1;
	if (f)
		fclose(f);
	buf__release(&b);
	CHECK_EQ_U64(rc, 0);
	snprintf(cmd, sizeof(cmd), "%s -check-dupes -check-orphans %s >&2", pc, path);
	rc = system(cmd);
	unlink(path);
	CHECK_EQ_U64(rc, 0);
}

/* ---- live ---- */

struct tally {
	int good, interp, compiled, inlined, lines_checked;
	int last_n; /* frames of the last stack that matched */
};

static bool is(const char *s, const char *want)
{
	return s && !strcmp(s, want);
}

/* The lines of one walked stack (leaf first) against the workload. */
static bool check_stack(const struct profile_frame *f, size_t n, const struct jvmframes_raw *raw,
			struct tally *t)
{
	const struct profile_line *ln[256];
	size_t nl = 0, i, j, outer = 0;

	for (i = 0; i < n; i++) {
		if (!f[i].nlines || !f[i].lines)
			return false; /* every frame named */
		for (j = 0; j < f[i].nlines && nl < 256; j++)
			ln[nl++] = &f[i].lines[j];
	}
	/* the walk ends in the call stub, below Thread.run */
	if (nl < 4 || raw[n - 1].kind != JVMFRAMES_KIND_BLOB ||
	    !is(ln[nl - 2]->function, "java.lang.Thread.run"))
		return false;
	for (i = 0; i < nl && !is(ln[i]->function, "JvmWork.outer"); i++)
		;
	if (i == nl || i + 1 >= nl || !strstr(ln[i + 1]->function, "Lambda"))
		return false;
	outer = i;
	if (ln[outer]->line < JVMFX_OUTER_FIRST || ln[outer]->line > JVMFX_OUTER_LAST ||
	    !is(ln[outer]->filename, "JvmWork.java"))
		return false;
	if (outer > 0) {
		const struct profile_line *m = ln[outer - 1];

		if (!is(m->function, "JvmWork.middle") ||
		    !is(m->system_name, "JvmWork.middle(LJvmWork$Shape;J)J") ||
		    m->line < JVMFX_MIDDLE_FIRST || m->line > JVMFX_MIDDLE_LAST)
			return false;
		t->lines_checked++;
	}
	for (i = 0; i + 1 < outer; i++) { /* above middle: its callees */
		const struct profile_line *c = ln[i];

		if (!((is(c->function, "JvmWork.leaf") && c->line == JVMFX_LEAF_LINE) ||
		      (is(c->function, "JvmWork.step") && c->line == JVMFX_STEP_LINE) ||
		      (is(c->function, "JvmWork.work") && c->line >= JVMFX_WORK_FIRST &&
		       c->line <= JVMFX_WORK_LAST) ||
		      (is(c->function, "JvmWork$Square.area") && c->line == JVMFX_AREA_SQ_LINE) ||
		      (is(c->function, "JvmWork$Circle.area") && c->line == JVMFX_AREA_CI_LINE)))
			return false;
		t->lines_checked++;
	}
	for (i = 0; i < n; i++) {
		t->interp += raw[i].kind == JVMFRAMES_KIND_INTERP;
		t->compiled += raw[i].kind == JVMFRAMES_KIND_BLOB && i + 1 < n;
		t->inlined += f[i].nlines > 1;
	}
	return true;
}

/* Walk the worker once and name its frames into @f: 1 a stack that
 * matches the workload (tallied in @t), 0 none this time (not in Java),
 * -1 a stack that does not match (printed). */
static int walk_one(const struct jvmfx_child *c, const struct jvmproc *jp, struct jvmframes *jf,
		    struct jvmframes_raw *raw, struct profile_frame *f, struct tally *t)
{
	int n = jvmfx__walk(c->pid, c->worker, jp, raw, 64), k;
	struct jvmframes_stats st;

	if (n == -EAGAIN)
		return 0;
	if (n > 0 && jvmframes__resolve(jf, c->pid, raw, (size_t)n, f) == (size_t)n &&
	    check_stack(f, (size_t)n, raw, t)) {
		t->last_n = n;
		return 1;
	}
	jvmframes__stats(jf, &st);
	printf("  walk %d, changed %llu unknown %llu\n", n, (unsigned long long)st.changed,
	       (unsigned long long)st.unknown);
	for (k = 0; k < n; k++)
		printf("  frame %d kind %u %s nlines %zu line %lld\n", k, raw[k].kind,
		       f[k].function, f[k].nlines, f[k].nlines ? (long long)f[k].lines[0].line : 0);
	return -1;
}

/* Walk and name the worker thread of a live JVM 25 times; fails on the
 * first stack that does not match the workload. With @want_inline, first
 * waits (at most 30 s: the machine may be busy) for compiled code with an
 * inlined frame, every stack on the way checked too. */
static void run_live(const struct jvmfx_jdk *jdk, const char *const *opts, bool want_inline,
		     struct tally *t)
{
	struct jvmframes_raw raw[64], bad;
	struct profile_frame f[64];
	struct jvmfx_child c;
	struct jvmframes *jf;
	struct jvmproc jp;
	int tries, err, r = 0, bad_stack = 0;
	size_t named;

	memset(t, 0, sizeof(*t));
	err = jvmfx__start(jdk, opts, &c);
	if (err == -ENOENT) {
		jvmfx__stop(&c);
		SKIP("%s or javac not installed", jdk->java);
	}
	CHECK_EQ_U64(err, 0);
	usleep(300000);
	err = jvmproc__locate(NULL, c.pid, NULL, &jp);
	jf = jvmframes__new(NULL);
	if (err || !jf || jvmframes__set_process(jf, c.pid, &jp)) {
		jvmfx__stop(&c);
		jvmframes__free(jf);
		CHECK_EQ_U64(err, 0);
		CHECK(0);
	}
	for (tries = 0; want_inline && tries < 300 && r >= 0; tries++) {
		struct tally warm = {0};

		r = walk_one(&c, &jp, jf, raw, f, &warm);
		if (r > 0 && warm.inlined)
			break;
		usleep(100000);
	}
	bad_stack = r < 0;
	for (tries = 0; tries < 400 && t->good < 25 && !bad_stack; tries++) {
		r = walk_one(&c, &jp, jf, raw, f, t);
		bad_stack = r < 0;
		t->good += r > 0;
	}
	/* the same stack again is all cache hits, its stubs too */
	if (!bad_stack && t->good) {
		struct jvmframes_stats before, after;

		jvmframes__stats(jf, &before);
		named = jvmframes__resolve(jf, c.pid, raw, (size_t)t->last_n, f);
		jvmframes__stats(jf, &after);
		bad_stack = named != (size_t)t->last_n || after.misses != before.misses ? 3 : 0;
	}
	/* a changed object is never named: a wrong fingerprint */
	if (!bad_stack && t->good) {
		bad = raw[0];
		bad.fingerprint ^= 0x5a5a;
		named = jvmframes__resolve(jf, c.pid, &bad, 1, f);
		bad_stack = named != 0 || !is(f[0].function, "<unknown java>") ? 2 : 0;
	}
	jvmfx__stop(&c);
	jvmframes__free(jf);
	CHECK_EQ_U64(bad_stack, 0);
	CHECK(t->good >= 20);
}

static void live_interpreted(const struct jvmfx_jdk *jdk)
{
	static const char *const opts[] = {"-Xint", NULL};
	struct tally t;

	run_live(jdk, opts, false, &t);
	if (test__cur_failed || test__cur_skipped)
		return;
	CHECK(t.interp >= 3 * t.good);
	CHECK_EQ_U64(t.inlined, 0);
	CHECK(t.lines_checked >= t.good);
}

static void live_compiled(const struct jvmfx_jdk *jdk)
{
	static const char *const opts[] = {"-XX:-TieredCompilation", "-XX:CompileCommand=quiet",
					   "-XX:CompileCommand=dontinline,JvmWork::work", NULL};
	struct tally t;

	run_live(jdk, opts, true, &t);
	if (test__cur_failed || test__cur_skipped)
		return;
	printf("  %s: %d stacks, %d interpreted, %d compiled, %d with inlining\n", jdk->name,
	       t.good, t.interp, t.compiled, t.inlined);
	/* C2 code: step() inlined into middle(), on the stack below work() */
	CHECK(t.compiled >= t.good);
	CHECK(t.inlined >= t.good / 2);
	CHECK(t.lines_checked >= t.good);
}

/* The default tiered compilation: C1 and C2 frames mixed. */
static void live_tiered(const struct jvmfx_jdk *jdk)
{
	static const char *const opts[] = {"-XX:CompileCommand=quiet",
					   "-XX:CompileCommand=dontinline,JvmWork::work", NULL};
	struct tally t;

	run_live(jdk, opts, true, &t);
	if (test__cur_failed || test__cur_skipped)
		return;
	printf("  %s tiered: %d stacks, %d interpreted, %d compiled, %d with inlining\n", jdk->name,
	       t.good, t.interp, t.compiled, t.inlined);
	CHECK(t.compiled >= t.good);
}

TEST(live_jdk17_tiered)
{
	live_tiered(&jvmfx_jdks[0]);
}

TEST(live_temurin25_tiered)
{
	live_tiered(&jvmfx_jdks[1]);
}

/* The main thread sleeps in a native method: its Java frames from the
 * JavaThread's frame anchor (the path for samples outside Java code and
 * off-CPU stacks), found through the JVM's thread list. */
static void live_anchor(const struct jvmfx_jdk *jdk)
{
	static const char *const opts[] = {NULL};
	struct jvmframes_raw raw[64];
	struct profile_frame f[64];
	struct jvmfx_child c;
	struct jvmframes *jf;
	struct jvmproc jp;
	__u64 threads[64];
	int tids[64], nt, i, n, found = 0, err;

	err = jvmfx__start(jdk, opts, &c);
	if (err == -ENOENT) {
		jvmfx__stop(&c);
		SKIP("%s or javac not installed", jdk->java);
	}
	CHECK_EQ_U64(err, 0);
	usleep(300000);
	err = jvmproc__locate(NULL, c.pid, NULL, &jp);
	jf = jvmframes__new(NULL);
	nt = err ? err : jvmproc__threads(NULL, c.pid, &jp, tids, threads, 64);
	for (i = 0; jf && i < nt && !found; i++) {
		size_t k, last;

		n = jvmfx__walk_anchor(c.pid, &jp, threads[i], raw, 64);
		if (n < 2 || jvmframes__set_process(jf, c.pid, &jp) ||
		    jvmframes__resolve(jf, c.pid, raw, (size_t)n, f) != (size_t)n)
			continue;
		/* leaf first: Thread.sleep (a native method, or sleep0 /
		 * sleepNanos above it), ..., JvmWork.main on its line, the
		 * call stub */
		last = (size_t)n - 2;
		for (k = 0; k < (size_t)n; k++)
			if (!f[k].nlines)
				break;
		if (k == (size_t)n &&
		    is(f[last].lines[f[last].nlines - 1].function, "JvmWork.main") &&
		    f[last].lines[f[last].nlines - 1].line == JVMFX_SLEEP_LINE &&
		    !strncmp(f[0].lines[0].function, "java.lang.Thread.sleep", 22))
			found = tids[i];
	}
	jvmfx__stop(&c);
	jvmframes__free(jf);
	CHECK_EQ_U64(err, 0);
	CHECK(nt >= 2);
	CHECK(found != 0);
}

TEST(live_jdk17_anchor)
{
	live_anchor(&jvmfx_jdks[0]);
}

TEST(live_temurin25_anchor)
{
	live_anchor(&jvmfx_jdks[1]);
}

/* Java thread names of a live JVM: the worker's, the long UTF-16 one
 * whose kernel name is its first 15 bytes; none where the kernel's name
 * is another, or the process no JVM. */
static void live_thread_names(const struct jvmfx_jdk *jdk)
{
	static const char *const opts[] = {NULL};
	char cut[16];
	const char *worker = NULL, *longer = NULL, *other = NULL, *none = NULL;
	struct jvmfx_child c;
	struct jvmframes *jf;
	struct jvmproc jp;
	int err, tid = 0;

	err = jvmfx__start(jdk, opts, &c);
	if (err == -ENOENT) {
		jvmfx__stop(&c);
		SKIP("%s or javac not installed", jdk->java);
	}
	CHECK_EQ_U64(err, 0);
	memcpy(cut, JVMFX_LONG_NAME_UTF8, sizeof(cut) - 1); /* the kernel's 15 bytes */
	cut[sizeof(cut) - 1] = 0;
	err = jvmproc__locate(NULL, c.pid, NULL, &jp);
	jf = jvmframes__new(NULL);
	if (!err && jf && !jvmframes__set_process(jf, c.pid, &jp)) {
		tid = jvmfx__tid(c.pid, cut);
		worker = jvmframes__thread_name(jf, c.pid, c.worker, "jvmfx-worker");
		longer = jvmframes__thread_name(jf, c.pid, tid, cut);
		other = jvmframes__thread_name(jf, c.pid, c.worker, "renamed");
		none = jvmframes__thread_name(jf, c.pid + 0x10000000, c.worker, "jvmfx-worker");
	}
	jvmfx__stop(&c);
	CHECK_EQ_U64(err, 0);
	CHECK(tid != 0);
	CHECK_STR(worker ? worker : "(none)", "jvmfx-worker");
	CHECK_STR(longer ? longer : "(none)", JVMFX_LONG_NAME_UTF8);
	CHECK(other == NULL);
	CHECK(none == NULL);
	jvmframes__free(jf);
}

TEST(live_jdk17_thread_names)
{
	live_thread_names(&jvmfx_jdks[0]);
}

TEST(live_temurin25_thread_names)
{
	live_thread_names(&jvmfx_jdks[1]);
}

TEST(live_jdk17_interpreted)
{
	live_interpreted(&jvmfx_jdks[0]);
}

TEST(live_jdk17_compiled)
{
	live_compiled(&jvmfx_jdks[0]);
}

TEST(live_temurin25_interpreted)
{
	live_interpreted(&jvmfx_jdks[1]);
}

TEST(live_temurin25_compiled)
{
	live_compiled(&jvmfx_jdks[1]);
}

int main(void)
{
	/* a JVM that never says ready must not hang the suite */
	alarm(600);
	RUN(words);
	RUN(line_table);
	RUN(scope_header);
	RUN(merge);
	RUN(lifecycle);
	RUN(otlp_conformance);
	RUN(live_jdk17_thread_names);
	RUN(live_temurin25_thread_names);
	RUN(live_jdk17_interpreted);
	RUN(live_jdk17_compiled);
	RUN(live_temurin25_interpreted);
	RUN(live_temurin25_compiled);
	RUN(live_jdk17_tiered);
	RUN(live_jdk17_anchor);
	RUN(live_temurin25_anchor);
	RUN(live_temurin25_tiered);
	printf("unit: %d passed, %d failed, %d skipped\n", test__passed, test__failed,
	       test__skipped);
	return test__failed ? 1 : 0;
}
