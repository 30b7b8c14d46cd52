/* test_pyproc.c - CPython detection and layouts: the tables against each
 * installed version's own headers, the interpreters found in live
 * children (shared libpython, Debian's static stripped python3.11), the
 * debug offsets of 3.13, and processes that are not Python. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/pyproc.h"
#include "test.h"
#include "pyfixture.h"

/* tests/unit/fixtures/py_offsets.c, from this binary's folder two up
 * (build/tests/, build/asan-tests/), else from the working directory. */
static void offsets_source(char *out, size_t size)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *s;
	int i;

	if (n > 0) {
		self[n] = 0;
		for (i = 0; i < 3 && (s = strrchr(self, '/')); i++)
			*s = 0;
		snprintf(out, size, "%s/tests/unit/fixtures/py_offsets.c", self);
		if (!access(out, R_OK))
			return;
	}
	snprintf(out, size, "tests/unit/fixtures/py_offsets.c");
}

/* The include directory of interpreter @in's installation, "" if none. */
static void include_dir(const struct pyfx_interp *in, char *out, size_t size)
{
	char base[256];
	char *s;

	snprintf(base, sizeof(base), "%s", in->path);
	out[0] = 0;
	if (!(s = strstr(base, "/bin/")))
		return;
	*s = 0;
	snprintf(out, size, "%s/include/python%u.%u%s", base, in->major, in->minor,
		 in->major == 3 && in->minor < 8 ? "m" : "");
	if (access(out, R_OK))
		out[0] = 0;
}

static unsigned long field(const char *text, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\n%s ", name);
	p = strstr(text, key);
	return p ? strtoul(p + strlen(key), NULL, 10) : ~0ul;
}

static void check_layout(const struct pyfx_interp *in)
{
	const struct pyproc_layout *l = pyproc__layout(in->major, in->minor);
	char src[4200], inc[300], cmd[9000], text[4096] = "\n", bin[64];
	size_t len = 1, n;
	FILE *p;

	include_dir(in, inc, sizeof(inc));
	if (!inc[0])
		SKIP("no headers of %s installed", in->path);
	if (system("cc --version >/dev/null 2>&1"))
		SKIP("no system cc");
	offsets_source(src, sizeof(src));
	snprintf(bin, sizeof(bin), "/tmp/profcap_pyoff_%d_%s", getpid(), in->name);
	snprintf(cmd, sizeof(cmd),
		 "cc -w -DPy_BUILD_CORE -I%s -I%s/internal -o %s %s && %s; rm -f %s", inc, inc,
		 bin, src, bin, bin);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	while (len < sizeof(text) - 1 && (n = fread(text + len, 1, sizeof(text) - 1 - len, p)))
		len += n;
	text[len] = 0;
	CHECK(pclose(p) == 0);
	CHECK(l != NULL);
	CHECK_EQ_U64(field(text, "version"), l->version);
#define F(name) CHECK_EQ_U64(field(text, #name), l->name)
	F(runtime_interp_head);
	F(interp_tstate_head);
	F(tstate_next);
	F(tstate_thread_id);
	F(tstate_native_tid);
	F(tstate_frame);
	F(cframe_current_frame);
	F(frame_back);
	F(frame_code);
	F(frame_instr);
	F(frame_owner);
	F(frame_entry);
	F(owner_cstack);
	F(code_firstlineno);
	F(code_name);
	F(code_qualname);
	F(code_filename);
	F(code_linetable);
	F(code_bytecode);
	F(str_state);
	F(str_length);
	F(str_ascii_data);
	F(str_compact_data);
	F(bytes_size);
	F(bytes_data);
#undef F
}

/* Locate a live child of @in and walk its main thread to leaf(). */
static void check_locate(const struct pyfx_interp *in)
{
	struct pyfx_child c;
	struct pyproc pp;
	__u64 words[64];
	char want[16];
	int err, n;

	err = pyfx__start(in, &c);
	if (err == -ENOENT)
		SKIP("%s not installed", in->path);
	if (err) {
		pyfx__stop(&c);
		CHECK_EQ_U64(err, 0);
	}
	err = pyproc__locate(NULL, c.pid, NULL, &pp);
	n = err ? 0 : pyfx__walk(c.pid, &pp, words, 64);
	pyfx__stop(&c);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(pp.layout.version, (in->major << 8) | in->minor);
	snprintf(want, sizeof(want), "%u.%u", in->major, in->minor);
	CHECK(!strncmp(pp.version, want, strlen(want)));
	CHECK(pp.interp_head != 0);
	CHECK_EQ_U64(pp.neval, 1);
	CHECK(pp.eval[0].hi > pp.eval[0].lo);
	CHECK(pp.code_type != 0);
	/* <module>, middle, leaf: three frames, leaf sleeping */
	CHECK_EQ_U64(n, 6);
	CHECK(((words[1] >> 32) & 1) == ((pp.layout.flags & PYPROC_ONE_PER_CALL) ? 1 : 0));
	CHECK((words[5] >> 32) & 1); /* <module> is the first frame of its call */
	if (in->major == 3 && in->minor >= 13) {
		/* the debug offsets the interpreter publishes agree with the table */
		const struct pyproc_layout *t = pyproc__layout(3, in->minor);

		CHECK(pp.debug_offsets);
		CHECK(!memcmp(&pp.layout, t, sizeof(*t)));
	}
}

#define VERSION_TESTS(X)                                                              \
	X(0, 2_7) X(1, 3_6) X(2, 3_7) X(3, 3_8) X(4, 3_9) X(5, 3_10) X(6, 3_11) X(7, 3_12) \
		X(8, 3_13) X(9, debian_3_11)
#define DEFINE(i, name)                               \
	TEST(layout_##name)                           \
	{                                             \
		check_layout(&pyfx_interps[i]);       \
	}                                             \
	TEST(locate_##name)                           \
	{                                             \
		check_locate(&pyfx_interps[i]);       \
	}
VERSION_TESTS(DEFINE)

TEST(not_python)
{
	struct pyproc pp;

	CHECK_EQ_U64(pyproc__locate(NULL, getpid(), NULL, &pp), -ENOENT);
	CHECK(pyproc__locate(NULL, 0x3ffffff0, NULL, &pp) < 0);
	CHECK(pyproc__layout(3, 5) == NULL);
	CHECK(pyproc__layout(4, 0) == NULL);
	CHECK(pyproc__layout(3, 14) != NULL);
}

/* A hand-made _Py_DebugOffsets of 3.13: fields land where the structure
 * puts them; a bad cookie, another version, an offset past its structure
 * or a free-threaded build are refused. */
TEST(debug_offsets)
{
	struct pyproc_layout l = *pyproc__layout(3, 13), r;
	__u64 w[128] = {0};

	memcpy(w, "xdebugpy", 8);
	w[1] = 0x030d01f0;
	w[3] = 1000, w[5] = 600;		     /* runtime: size, interpreters.head */
	w[6] = 9000, w[9] = 7000;		     /* interpreter: size, threads.head */
	w[19] = 300, w[21] = 8, w[23] = 80, w[24] = 160, w[25] = 168; /* thread state */
	w[28] = 80, w[29] = 8, w[30] = 0, w[31] = 56, w[33] = 71;    /* frame */
	w[34] = 220, w[35] = 112, w[36] = 120, w[37] = 128, w[38] = 136, w[39] = 68,
	w[43] = 208;					/* code */
	w[64] = 40, w[65] = 16, w[66] = 32;		/* bytes */
	w[67] = 80, w[68] = 32, w[69] = 16, w[70] = 40; /* str */
	r = l;
	CHECK_EQ_U64(pyproc__debug_offsets(w, sizeof(w), 3, 13, &r), 0);
	CHECK_EQ_U64(r.runtime_interp_head, 600);
	CHECK_EQ_U64(r.interp_tstate_head, 7000);
	CHECK_EQ_U64(r.tstate_frame, 80);
	CHECK_EQ_U64(r.tstate_native_tid, 168);
	CHECK_EQ_U64(r.frame_owner, 71);
	CHECK_EQ_U64(r.code_bytecode, 208);
	CHECK_EQ_U64(r.str_ascii_data, 40);
	CHECK_EQ_U64(r.str_compact_data, 56);
	CHECK_EQ_U64(r.flags, l.flags);
	r = l;
	CHECK_EQ_U64(pyproc__debug_offsets(w, sizeof(w), 3, 12, &r), -EINVAL);
	CHECK_EQ_U64(pyproc__debug_offsets(w, 100, 3, 13, &r), -EINVAL);
	w[33] = 90; /* owner past the frame */
	CHECK_EQ_U64(pyproc__debug_offsets(w, sizeof(w), 3, 13, &r), -EINVAL);
	CHECK(!memcmp(&r, &l, sizeof(l))); /* untouched */
	w[33] = 71;
	w[2] = 1;
	CHECK_EQ_U64(pyproc__debug_offsets(w, sizeof(w), 3, 13, &r), -ENOTSUP);
	w[2] = 0;
	w[0] = 0;
	CHECK_EQ_U64(pyproc__debug_offsets(w, sizeof(w), 3, 13, &r), -EINVAL);
}

int main(void)
{
#define RUN_BOTH(i, name) RUN(layout_##name); RUN(locate_##name);
	VERSION_TESTS(RUN_BOTH)
	RUN(not_python);
	RUN(debug_offsets);
	return TEST_DONE();
}
