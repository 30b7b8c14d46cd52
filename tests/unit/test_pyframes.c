/* test_pyframes.c - Python frames: the line tables of each format, the
 * decode of the BPF words, the merge with native frames, and names, files
 * and lines resolved from live children of every installed interpreter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/otlp.h"
#include "model/profile.h"
#include "proc/pyproc.h"
#include "symbolize/pyframes.h"
#include "util/buf.h"
#include "test.h"
#include "pyfixture.h"

TEST(lnotab)
{
	static const unsigned char t[] = {6, 1, 8, 2, 4, 0xff};
	static const unsigned char big[] = {2, 0xff};

	CHECK_EQ_U64(pyframes__line(0x0306, PYPROC_NONE, t, sizeof(t), 10, 0), 10);
	CHECK_EQ_U64(pyframes__line(0x0306, PYPROC_NONE, t, sizeof(t), 10, 6), 11);
	CHECK_EQ_U64(pyframes__line(0x0306, PYPROC_NONE, t, sizeof(t), 10, 13), 11);
	CHECK_EQ_U64(pyframes__line(0x0306, PYPROC_NONE, t, sizeof(t), 10, 14), 13);
	CHECK_EQ_U64(pyframes__line(0x0306, PYPROC_NONE, t, sizeof(t), 10, 18), 12);
	CHECK_EQ_U64(pyframes__line(0x0309, PYPROC_NONE, t, sizeof(t), 10, 1000), 12);
	CHECK_EQ_U64(pyframes__line(0x0309, PYPROC_NONE, t, sizeof(t), 10, 0xffffffffu), 10);
	/* 2.7's line increments are unsigned */
	CHECK_EQ_U64(pyframes__line(0x0207, PYPROC_NONE, big, sizeof(big), 10, 5), 265);
	CHECK_EQ_U64(pyframes__line(0x0306, PYPROC_NONE, big, sizeof(big), 10, 5), 9);
	CHECK_EQ_U64(pyframes__line(0x0306, PYPROC_NONE, t, 1, 10, 50), 10); /* odd byte */
	CHECK_EQ_U64(pyframes__line(0x0306, PYPROC_NONE, NULL, 0, 7, 50), 7);
	/* a table that goes below line 1 gives no line */
	CHECK_EQ_U64(pyframes__line(0x0306, PYPROC_NONE, big, sizeof(big), 1, 5), 0);
}

TEST(linetable_310)
{
	/* [0,6) +1, [6,10) no line, [10,18) +2; offsets in code units */
	static const unsigned char t[] = {6, 1, 4, 0x80, 8, 2};

	CHECK_EQ_U64(pyframes__line(0x030a, PYPROC_NONE, t, sizeof(t), 10, 0), 11);
	CHECK_EQ_U64(pyframes__line(0x030a, PYPROC_NONE, t, sizeof(t), 10, 2), 11);
	CHECK_EQ_U64(pyframes__line(0x030a, PYPROC_NONE, t, sizeof(t), 10, 3), 0);
	CHECK_EQ_U64(pyframes__line(0x030a, PYPROC_NONE, t, sizeof(t), 10, 5), 13);
	CHECK_EQ_U64(pyframes__line(0x030a, PYPROC_NONE, t, sizeof(t), 10, 9), 0);
	CHECK_EQ_U64(pyframes__line(0x030a, PYPROC_NONE, t, sizeof(t), 10, 0xffffffffu), 10);
}

TEST(locations_311)
{
	static const unsigned char t[] = {
		0xe9, 0x02,		  /* no column, 2 units, +1 */
		0xf8,			  /* no location, 1 unit */
		0xda, 0x01, 0x05,	  /* one line (+1), 3 units */
		0xf0, 0x07, 0x00, 0x01, 0x02, /* long form, 1 unit, -3 */
		0x80, 0x00,		  /* short form, 1 unit, +0 */
		0xe8, 0x48, 0x03,	  /* no column, 1 unit, +100 (two chunks) */
	};
	static const unsigned char bad[] = {0x00};
	static const unsigned char cut[] = {0xe8, 0x48};
	const __u16 bc = 200;

	CHECK_EQ_U64(pyframes__line(0x030b, bc, t, sizeof(t), 10, 200), 11);
	CHECK_EQ_U64(pyframes__line(0x030b, bc, t, sizeof(t), 10, 202), 11);
	CHECK_EQ_U64(pyframes__line(0x030b, bc, t, sizeof(t), 10, 204), 0);
	CHECK_EQ_U64(pyframes__line(0x030c, bc, t, sizeof(t), 10, 208), 12);
	CHECK_EQ_U64(pyframes__line(0x030c, bc, t, sizeof(t), 10, 209), 12);
	CHECK_EQ_U64(pyframes__line(0x030d, bc, t, sizeof(t), 10, 212), 9);
	CHECK_EQ_U64(pyframes__line(0x030d, bc, t, sizeof(t), 10, 214), 9);
	CHECK_EQ_U64(pyframes__line(0x030e, bc, t, sizeof(t), 10, 216), 109);
	CHECK_EQ_U64(pyframes__line(0x030e, bc, t, sizeof(t), 10, 218), 0);
	CHECK_EQ_U64(pyframes__line(0x030b, bc, t, sizeof(t), 10, 198), 10); /* frame set up */
	CHECK_EQ_U64(pyframes__line(0x030b, bc, bad, sizeof(bad), 10, 200), 0);
	CHECK_EQ_U64(pyframes__line(0x030b, bc, cut, sizeof(cut), 10, 200), 0);
}

/* Random bytes as tables of every format: reads stay inside the table
 * (the sanitizer build checks), and no line is below 1. */
TEST(line_tables_random)
{
	static const __u32 versions[] = {0x0207, 0x0306, 0x0309, 0x030a, 0x030b, 0x030d};
	unsigned char *t;
	unsigned int seed = 12345;
	size_t len, i, k;
	__s64 line;

	for (k = 0; k < 20000; k++) {
		len = (size_t)(rand_r(&seed) % 256);
		t = malloc(len ? len : 1);
		CHECK(t != NULL);
		for (i = 0; i < len; i++)
			t[i] = (unsigned char)rand_r(&seed);
		line = pyframes__line(versions[k % 6], 16, t, len, 1000,
				      (__u32)(rand_r(&seed) % 300));
		free(t);
		CHECK(line >= 0);
	}
}

TEST(decode)
{
	__u64 w[5] = {0x0007123456789abcull, 0x00000001000000f0ull, 0xffff00000000abcdull,
		      0x0000000200000004ull, 0x42};
	struct pyframes_raw r[4];

	CHECK_EQ_U64(pyframes__decode(w, 5, r, 4), 2); /* the odd word is ignored */
	CHECK_EQ_U64(r[0].code, 0x123456789abcull);
	CHECK_EQ_U64(r[0].fingerprint, 7);
	CHECK_EQ_U64(r[0].offset, 0xf0);
	CHECK_EQ_U64(r[0].flags, PYFRAMES_FRAME_ENTRY);
	CHECK_EQ_U64(r[1].code, 0xabcd);
	CHECK_EQ_U64(r[1].fingerprint, 0xffff);
	CHECK_EQ_U64(r[1].flags, PYFRAMES_FRAME_NOCODE);
	CHECK_EQ_U64(pyframes__decode(w, 4, r, 1), 1);
}

/* ---- merge ---- */

#define EVAL_LO 0x1000
#define EVAL_HI 0x2000

static struct profile_frame fr(const char *name)
{
	struct profile_frame f = {.function = name};

	return f;
}

static void names_of(const struct profile_frame *f, size_t n, char *out, size_t size)
{
	size_t i, len = 0;

	out[0] = 0;
	for (i = 0; i < n && len + 1 < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", i ? " " : "",
					f[i].function);
}

static struct pyproc proc_of(__u32 version, __u32 flags)
{
	struct pyproc pp;

	memset(&pp, 0, sizeof(pp));
	pp.layout.version = version;
	pp.layout.flags = flags;
	pp.eval[0].lo = EVAL_LO;
	pp.eval[0].hi = EVAL_HI;
	pp.neval = 1;
	return pp;
}

/* native: leaf first; 'E' marks an eval-loop frame */
static size_t merge(const struct pyproc *pp, const char *nat, const char *pyn,
		    const char *entries, char *out, size_t size, size_t cap)
{
	struct profile_frame nf[32], pf[32], o[64];
	struct pyframes_raw raw[32];
	static char nbuf[32][8], pbuf[32][8];
	__u64 pcs[32];
	size_t nn = 0, np = 0, i, n;

	for (i = 0; nat[i]; i++, nn++) {
		snprintf(nbuf[nn], 8, "%c%zu", nat[i], nn);
		nf[nn] = fr(nbuf[nn]);
		pcs[nn] = nat[i] == 'E' ? EVAL_LO + 16 : 0x9000;
	}
	for (i = 0; pyn[i]; i++, np++) {
		snprintf(pbuf[np], 8, "p%c", pyn[i]);
		pf[np] = fr(pbuf[np]);
		memset(&raw[np], 0, sizeof(raw[np]));
		raw[np].flags = entries[i] == '1' ? PYFRAMES_FRAME_ENTRY : 0;
	}
	n = pyframes__merge(pp, pcs, nf, nn, pf, raw, np, o, cap);
	names_of(o, n, out, size);
	return n;
}

TEST(merge_one_per_call)
{
	struct pyproc pp = proc_of(0x0309, PYPROC_ONE_PER_CALL);
	char s[512];

	/* leaf native (zlib) called from Python c, called by b, by a */
	merge(&pp, "nnEEEm", "cba", "111", s, sizeof(s), 64);
	CHECK_STR(s, "n0 n1 pc pb pa m5");
	/* Python -> native -> Python callback: cb inside ext inside b */
	merge(&pp, "EnnEEm", "xba", "111", s, sizeof(s), 64);
	CHECK_STR(s, "px n1 n2 pb pa m5");
}

TEST(merge_entries_311)
{
	struct pyproc pp = proc_of(0x030b, PYPROC_IS_ENTRY);
	char s[512];

	/* one eval call ran d, c (c entered from C); another b, a */
	merge(&pp, "nEnEm", "dcba", "0101", s, sizeof(s), 64);
	CHECK_STR(s, "n0 pd pc n2 pb pa m4");
	/* the native stack cut before the second eval frame: the rest of
	 * the Python stack goes at the root end */
	merge(&pp, "nE", "dcba", "0101", s, sizeof(s), 64);
	CHECK_STR(s, "n0 pd pc pb pa");
	/* no entry flag seen (a partial walk): the eval frame takes all */
	merge(&pp, "nEm", "dc", "00", s, sizeof(s), 64);
	CHECK_STR(s, "n0 pd pc m2");
	/* more eval frames than Python calls: the extra ones stay native */
	merge(&pp, "EEm", "a", "1", s, sizeof(s), 64);
	CHECK_STR(s, "pa E1 m2");
	/* no Python stack, no interpreter: native as it was */
	merge(&pp, "nEm", "", "", s, sizeof(s), 64);
	CHECK_STR(s, "n0 E1 m2");
	merge(NULL, "nEm", "ab", "11", s, sizeof(s), 64);
	CHECK_STR(s, "n0 E1 m2 pa pb");
	/* bounded by the room given */
	CHECK_EQ_U64(merge(&pp, "nEnEm", "dcba", "0101", s, sizeof(s), 3), 3);
	CHECK_STR(s, "n0 pd pc");
}

/* ---- live interpreters ---- */

static const struct profile_frame *find_fn(const struct profile_frame *f, size_t n,
					   const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (f[i].function && !strcmp(f[i].function, name))
			return &f[i];
	return NULL;
}

static void check_resolve(const struct pyfx_interp *in)
{
	struct pyframes *pf = NULL;
	struct pyframes_raw raw[32];
	struct profile_frame out[32];
	struct pyframes_stats st;
	struct pyfx_child c;
	struct pyproc pp;
	const struct profile_frame *f;
	__u64 words[64];
	char file[128];
	bool qual = in->major == 3 && in->minor >= 11;
	struct pyframes_raw wraw[16];
	struct profile_frame wout[16];
	char wleaf[64] = "", wroot[64] = "";
	__u64 ts[8];
	__s64 wline = 0;
	struct profile_line keep[8];
	size_t nwk = 0, i;
	int err, nw = 0, pid;
	size_t n = 0, named = 0, named2 = 0;

	err = pyfx__start(in, &c);
	if (err == -ENOENT)
		SKIP("%s not installed", in->path);
	if (!err)
		err = pyproc__locate(NULL, c.pid, NULL, NULL, &pp);
	if (!err)
		nw = pyfx__walk(c.pid, &pp, words, 64);
	pf = pyframes__new(NULL);
	if (!err && nw > 0 && pf && !pyframes__set_process(pf, c.pid, &pp)) {
		n = pyframes__decode(words, (size_t)nw, raw, 32);
		named = pyframes__resolve(pf, c.pid, raw, n, out);
		named2 = pyframes__resolve(pf, c.pid, raw, n, out); /* from the cache */
		pyframes__stats(pf, &st);
		/* lines last until the next resolve: keep the main thread's */
		for (i = 0; i < n && i < 8; i++)
			if (out[i].nlines) {
				keep[i] = out[i].lines[0];
				out[i].lines = &keep[i];
			}
		/* another fingerprint: the address holds another code object */
		raw[0].fingerprint ^= 1;
		pyframes__resolve(pf, c.pid, raw, 1, &out[8]);
		raw[0].fingerprint ^= 1;
		/* the worker thread: worker <- Thread.run <- ... <- _bootstrap */
		if (pyfx__tstates(c.pid, &pp, ts, 8) == 2 &&
		    (nw = pyfx__walk_ts(c.pid, &pp, ts[0], words, 64)) > 0) {
			nwk = pyframes__decode(words, (size_t)nw, wraw, 16);
			pyframes__resolve(pf, c.pid, wraw, nwk, wout);
			if (nwk) {
				snprintf(wleaf, sizeof(wleaf), "%s", wout[0].function);
				wline = wout[0].nlines ? wout[0].lines[0].line : -1;
				snprintf(wroot, sizeof(wroot), "%s", wout[nwk - 1].function);
			}
		}
	}
	snprintf(file, sizeof(file), "%s", c.script);
	pid = c.pid;
	pyfx__stop(&c);
	CHECK_EQ_U64(err, 0);
	CHECK(pf != NULL);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(named, 3);
	CHECK_EQ_U64(named2, 3);
	CHECK_EQ_U64(st.misses, 3);
	CHECK_EQ_U64(st.hits, 3);
	CHECK_STR(out[8].function, "<unknown python>");
	CHECK_EQ_U64(out[8].nlines, 0);
	f = find_fn(out, n, "leaf");
	CHECK(f == &out[0]);
	CHECK_STR(f->type_name, PYFRAMES_TYPE);
	CHECK_EQ_U64(f->address, 0);
	CHECK(f->mapping == NULL);
	CHECK_EQ_U64(f->nlines, 1);
	CHECK_STR(f->lines[0].filename, file);
	CHECK_EQ_U64(f->lines[0].line, PYFX_LEAF_LINE);
	CHECK_EQ_U64(f->lines[0].start_line, 5);
	CHECK(f->system_name == NULL);
	f = find_fn(out, n, qual ? "Outer.middle" : "middle");
	CHECK(f == &out[1]);
	CHECK_EQ_U64(f->lines[0].line, 4);
	CHECK_EQ_U64(f->lines[0].start_line, 3);
	if (qual)
		CHECK_STR(f->system_name, "middle");
	f = find_fn(out, n, "<module>");
	CHECK(f == &out[2]);
	CHECK_EQ_U64(f->lines[0].line, PYFX_MODULE_LINE);
	CHECK(nwk >= 3);
	CHECK_STR(wleaf, "worker");
	CHECK_EQ_U64(wline, PYFX_WORKER_LINE);
	CHECK_STR(wroot, qual ? "Thread._bootstrap" : in->major == 2 ? "__bootstrap" : "_bootstrap");
	pyframes__forget(pf, pid);
	CHECK(pyframes__process(pf, pid) == NULL);
	pyframes__stats(pf, &st);
	CHECK_EQ_U64(st.cached, 0);
	CHECK_EQ_U64(pyframes__resolve(pf, pid, raw, n, out), 0);
	CHECK_STR(out[0].function, "<unknown python>");
	pyframes__free(pf);
}

#define VERSION_TESTS(X)                                                              \
	X(0, 2_7) X(1, 3_6) X(2, 3_7) X(3, 3_8) X(4, 3_9) X(5, 3_10) X(6, 3_11) X(7, 3_12) \
		X(8, 3_13) X(9, debian_3_11)
#define DEFINE(i, name)                               \
	TEST(resolve_##name)                          \
	{                                             \
		check_resolve(&pyfx_interps[i]);      \
	}
VERSION_TESTS(DEFINE)

/* Function names of 1-byte (Latin-1) and 4-byte characters: compact
 * non-ASCII str of each kind, in the PyASCIIObject of 3.6 to 3.11 and the
 * smaller one from 3.12. */
static void check_wide_names(const struct pyfx_interp *in)
{
	static const char script[] = "import sys, time\n"
				     "def caf\xc3\xa9():\n"
				     "    \xf0\xa0\x80\x80()\n"
				     "def \xf0\xa0\x80\x80():\n"
				     "    sys.stdout.write('ready 0 0\\n')\n"
				     "    sys.stdout.flush()\n"
				     "    while True:\n"
				     "        time.sleep(0.05)\n"
				     "caf\xc3\xa9()\n";
	struct pyframes *pf = pyframes__new(NULL);
	struct pyframes_raw raw[8];
	struct profile_frame out[8];
	struct pyfx_child c;
	struct pyproc pp;
	__u64 words[16];
	char leaf[32] = "", mid[32] = "";
	int err, nw = 0;
	size_t n = 0;

	CHECK(pf != NULL);
	err = pyfx__start_script(in, script, &c);
	if (err == -ENOENT) {
		pyframes__free(pf);
		SKIP("%s not installed", in->path);
	}
	err = err ?: pyproc__locate(NULL, c.pid, NULL, NULL, &pp);
	if (!err)
		nw = pyfx__walk(c.pid, &pp, words, 16);
	if (!err && nw > 0 && !pyframes__set_process(pf, c.pid, &pp)) {
		n = pyframes__decode(words, (size_t)nw, raw, 8);
		if (pyframes__resolve(pf, c.pid, raw, n, out) == 3) {
			snprintf(leaf, sizeof(leaf), "%s", out[0].function);
			snprintf(mid, sizeof(mid), "%s", out[1].function);
		}
	}
	pyfx__stop(&c);
	pyframes__free(pf);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(n, 3);
	CHECK_STR(leaf, "\xf0\xa0\x80\x80");
	CHECK_STR(mid, "caf\xc3\xa9");
}

TEST(wide_names_3_6)
{
	check_wide_names(&pyfx_interps[1]);
}

TEST(wide_names_3_11)
{
	check_wide_names(&pyfx_interps[6]);
}

TEST(wide_names_3_12)
{
	check_wide_names(&pyfx_interps[7]);
}

/* The cache holds at most PYFRAMES_MAX_CODES code objects. */
TEST(cache_bounded)
{
	struct pyframes *pf = pyframes__new(NULL);
	struct pyproc pp = proc_of(0x030b, PYPROC_IS_ENTRY);
	static struct pyframes_raw raw[1024];
	static struct profile_frame out[1024];
	struct pyframes_stats st;
	size_t i, k;

	CHECK(pf != NULL);
	pp.layout = *pyproc__layout(3, 11);
	CHECK_EQ_U64(pyframes__set_process(pf, 0x3ffffff0, &pp), 0);
	for (k = 0; k <= PYFRAMES_MAX_CODES / 1024; k++) {
		for (i = 0; i < 1024; i++)
			raw[i] = (struct pyframes_raw){.code = 0x10000 + (k * 1024 + i) * 64};
		pyframes__resolve(pf, 0x3ffffff0, raw, 1024, out);
	}
	pyframes__stats(pf, &st);
	pyframes__free(pf);
	CHECK_EQ_U64(st.misses, (PYFRAMES_MAX_CODES / 1024 + 1) * 1024);
	CHECK_EQ_U64(st.evictions, 1);
	CHECK(st.cached <= PYFRAMES_MAX_CODES);
	CHECK_EQ_U64(st.cached, 1024);
}

TEST(gone_process)
{
	struct pyframes *pf = pyframes__new("/proc");
	struct pyproc pp = proc_of(0x030b, PYPROC_IS_ENTRY);
	struct pyframes_raw raw = {.code = 0x1000, .fingerprint = 3};
	struct profile_frame out;
	struct pyframes_stats st;

	CHECK(pf != NULL);
	pp.layout = *pyproc__layout(3, 11);
	CHECK_EQ_U64(pyframes__set_process(pf, 0x3ffffff0, &pp), 0);
	CHECK_EQ_U64(pyframes__resolve(pf, 0x3ffffff0, &raw, 1, &out), 0);
	CHECK_STR(out.function, "<unknown python>");
	CHECK_STR(out.type_name, "cpython");
	raw.flags = PYFRAMES_FRAME_NOCODE;
	CHECK_EQ_U64(pyframes__resolve(pf, 0x3ffffff0, &raw, 1, &out), 0);
	pyframes__stats(pf, &st);
	CHECK_EQ_U64(st.unknown, 2);
	CHECK_EQ_U64(st.misses, 1); /* the unreadable one is cached, NOCODE never read */
	CHECK_EQ_U64(st.cached, 1);
	/* told again of the same interpreter: the cache stays; of another
	 * (an exec): it goes */
	CHECK_EQ_U64(pyframes__set_process(pf, 0x3ffffff0, &pp), 0);
	pyframes__stats(pf, &st);
	CHECK_EQ_U64(st.cached, 1);
	pp.interp_head += 8;
	CHECK_EQ_U64(pyframes__set_process(pf, 0x3ffffff0, &pp), 0);
	pyframes__stats(pf, &st);
	CHECK_EQ_U64(st.cached, 0);
	CHECK_EQ_U64(pyframes__set_process(pf, 0x3ffffff0, NULL), 0);
	CHECK(pyframes__process(pf, 0x3ffffff0) == NULL);
	pyframes__free(pf);
	pyframes__free(NULL);
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

/* Python frames in OTLP: locations without mapping or address, one per
 * (function, file, line) however often they come, typed cpython, next to
 * native ones; the official checker finds no duplicate and no orphan. */
TEST(otlp_conformance)
{
	static const struct profile_line l1 = {.function = "Outer.middle", .system_name = "middle",
					       .filename = "/app/m.py", .start_line = 3, .line = 4};
	static const struct profile_line l2 = {.function = "leaf", .filename = "/app/m.py",
					       .start_line = 5, .line = 9};
	static const struct profile_line l3 = {.function = "leaf", .filename = "/app/m.py",
					       .start_line = 5, .line = 8};
	static const struct profile_mapping_desc m = {.start = 0x400000, .limit = 0x500000,
						      .path = "/usr/bin/python3.11"};
	struct profile_frame a[3] = {
		{.function = "leaf", .type_name = PYFRAMES_TYPE, .lines = &l2, .nlines = 1},
		{.function = "Outer.middle", .system_name = "middle", .type_name = PYFRAMES_TYPE,
		 .lines = &l1, .nlines = 1},
		{.address = 0x401000, .mapping = &m, .function = "main"},
	};
	struct profile_process_desc proc = {.pid = 42, .exe_name = "python3.11"};
	struct profile *p = profile__new();
	const char *pc = profcheck();
	char path[] = "/tmp/profcap_pyotlp_XXXXXX", cmd[512];
	struct buf b;
	FILE *f;
	int fd, rc;

	CHECK(p != NULL);
	CHECK_EQ_U64(profile__add_sample(p, &proc, 42, "python3.11", a, 3, 1), 0);
	CHECK_EQ_U64(profile__add_sample(p, &proc, 43, "worker", a, 3, 2), 0);
	a[0].lines = &l3; /* another line of leaf: another location */
	CHECK_EQ_U64(profile__add_sample(p, &proc, 42, "python3.11", a, 3, 1), 0);
	CHECK_EQ_U64(profile__add_sample(p, &proc, 42, "python3.11", &a[1], 2, 1), 0);
	buf__init(&b, 1u << 24);
	rc = otlp__encode(p, &b);
	profile__free(p);
	if (rc)
		buf__release(&b);
	CHECK_EQ_U64(rc, 0);
	/* "cpython" is written once, as the attribute value */
	CHECK(memmem(b.data, b.len, "cpython", 7) != NULL);
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
	/* its findings go to the test's output */
	snprintf(cmd, sizeof(cmd), "%s -check-dupes -check-orphans %s >&2", pc, path);
	rc = system(cmd);
	unlink(path);
	CHECK_EQ_U64(rc, 0);
}

int main(void)
{
	RUN(lnotab);
	RUN(linetable_310);
	RUN(locations_311);
	RUN(line_tables_random);
	RUN(decode);
	RUN(merge_one_per_call);
	RUN(merge_entries_311);
#define RUN_ONE(i, name) RUN(resolve_##name);
	VERSION_TESTS(RUN_ONE)
	RUN(wide_names_3_6);
	RUN(wide_names_3_11);
	RUN(wide_names_3_12);
	RUN(cache_bounded);
	RUN(gone_process);
	RUN(otlp_conformance);
	return TEST_DONE();
}
