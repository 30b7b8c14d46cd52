/* test_phpframes.c - PHP frames: the BPF words decoded, the fingerprint
 * and flags the walker shares, names, oplines, the merge with native
 * frames, and a live php8.2's frames read as the walker reads them and
 * named (function, class-less name, file, lines). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "php.h"
#include "proc/phpproc.h"
#include "proc/pyproc.h"
#include "symbolize/phpframes.h"
#include "phpfixture.h"
#include "test.h"

_Static_assert(PHPFRAMES_FRAME_ENTRY == PROFCAP_PHP_FRAME_ENTRY &&
		       PHPFRAMES_FRAME_NOFUNC == PROFCAP_PHP_FRAME_NOFUNC &&
		       PHPFRAMES_FRAME_REGLINE == PROFCAP_PHP_FRAME_REGLINE,
	       "frame flags are the walker's");

TEST(decode)
{
	__u64 w[7] = {
		0x1234000055aa0010ull,
		0x55aa1000ull,
		(__u64)(1u << 17 | 8) | ((__u64)PROFCAP_PHP_FRAME_ENTRY << 32) | (2ull << 40),
		0xffff7f0000000100ull,
		0,
		(1ull << 40),
		0x99, /* a partial frame: ignored */
	};
	struct phpframes_raw r[4];

	CHECK_EQ_U64(phpframes__decode(w, 7, r, 4), 2);
	CHECK_EQ_U64(r[0].func, 0x55aa0010ull);
	CHECK_EQ_U64(r[0].fingerprint, 0x1234);
	CHECK_EQ_U64(r[0].opline, 0x55aa1000ull);
	CHECK_EQ_U64(r[0].call_info, 1u << 17 | 8);
	CHECK_EQ_U64(r[0].flags, PHPFRAMES_FRAME_ENTRY);
	CHECK_EQ_U64(r[0].type, 2);
	CHECK_EQ_U64(r[1].func, 0x7f0000000100ull);
	CHECK_EQ_U64(r[1].fingerprint, 0xffff);
	CHECK_EQ_U64(r[1].type, 1);
	CHECK_EQ_U64(phpframes__decode(w, 6, r, 1), 1); /* capped */
}

TEST(fingerprint_is_the_walkers)
{
	__u64 x = 0x9e3779b97f4a7c15ull;
	int i;

	for (i = 0; i < 1000; i++) {
		__u64 a = x, b = x * 3, c = x ^ (x >> 7);
		__u32 d = (__u32)(x >> 11);

		CHECK_EQ_U64(phpframes__fingerprint(a, b, c, d),
			     profcap_php_fingerprint(a, b, c, d));
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	}
	/* each field counts */
	CHECK(phpframes__fingerprint(0x1000, 0, 0x2000, 7) !=
	      phpframes__fingerprint(0x1000, 0, 0x2000, 8));
	CHECK(phpframes__fingerprint(0x1000, 0, 0x2000, 7) !=
	      phpframes__fingerprint(0x1000, 0x40, 0x2000, 7));
}

TEST(names_and_oplines)
{
	char buf[32];

	phpframes__name(NULL, NULL, buf, sizeof(buf));
	CHECK_STR(buf, "{main}");
	phpframes__name("", "hot", buf, sizeof(buf));
	CHECK_STR(buf, "hot");
	phpframes__name("Worker", "method", buf, sizeof(buf));
	CHECK_STR(buf, "Worker::method");
	phpframes__name("AVeryLongClassNameIndeed", "andAMethod", buf, 8);
	CHECK_STR(buf, "AVeryLo");
	CHECK_EQ_U64(phpframes__op_index(0x1000, 4, 32, 0x1000), 0);
	CHECK_EQ_U64(phpframes__op_index(0x1000, 4, 32, 0x1060), 3);
	CHECK(phpframes__op_index(0x1000, 4, 32, 0x1080) == -1); /* past the end */
	CHECK(phpframes__op_index(0x1000, 4, 32, 0x1008) == -1); /* inside an op */
	CHECK(phpframes__op_index(0x1000, 4, 32, 0xfe0) == -1);
	CHECK(phpframes__op_index(0, 4, 32, 0x20) == -1);
	CHECK(phpframes__op_index(0x1000, 4, 0, 0x1000) == -1);
}

static struct profile_frame fr(const char *name)
{
	return (struct profile_frame){.function = name};
}

/* The names of @n frames joined with ';'. */
static const char *joined(const struct profile_frame *f, size_t n)
{
	static char buf[512];
	size_t i, len = 0;

	buf[0] = 0;
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ";" : "",
					f[i].function);
	return buf;
}

TEST(merge)
{
	struct phpproc pp = {.exec_lo = 0x1000, .exec_hi = 0x2000};
	/* leaf first: nanosleep <- zif_usleep <- execute_ex (B) <- zend_call_function
	 * <- zif_array_map <- execute_ex (A) <- zend_execute <- main */
	__u64 pcs[] = {0x9000, 0x8000, 0x1100, 0x7000, 0x6000, 0x1200, 0x5000, 0x4000};
	struct profile_frame native[] = {
		fr("nanosleep"),     fr("zif_usleep"), fr("execute_ex"),   fr("zend_call_function"),
		fr("zif_array_map"), fr("execute_ex"), fr("zend_execute"), fr("main")};
	struct profile_frame php[] = {fr("usleep"), fr("f"), fr("array_map"), fr("g"),
				      fr("{main}")};
	struct phpframes_raw raw[5] = {{.type = 1},
				       {.type = 2, .flags = PHPFRAMES_FRAME_ENTRY},
				       {.type = 1},
				       {.type = 2},
				       {.type = 2, .flags = PHPFRAMES_FRAME_ENTRY}};
	struct profile_frame out[32];
	size_t n;

	n = phpframes__merge(&pp, pcs, native, 8, php, raw, 5, out, 32);
	CHECK_STR(joined(out, n), "nanosleep;zif_usleep;usleep;f;zend_call_function;"
				  "zif_array_map;array_map;g;{main};zend_execute;main");
	/* the native stack cut before the outer executor: the rest at its end */
	n = phpframes__merge(&pp, pcs, native, 4, php, raw, 5, out, 32);
	CHECK_STR(joined(out, n),
		  "nanosleep;zif_usleep;usleep;f;zend_call_function;array_map;g;{main}");
	/* no PHP frames, or no interpreter: native as it is */
	n = phpframes__merge(&pp, pcs, native, 8, php, raw, 0, out, 32);
	CHECK_STR(joined(out, n), joined(native, 8));
	n = phpframes__merge(NULL, pcs, native, 8, php, raw, 5, out, 32);
	CHECK_STR(joined(out, 8), joined(native, 8));
	CHECK_EQ_U64(n, 13);
	/* bounded by the room */
	CHECK_EQ_U64(phpframes__merge(&pp, pcs, native, 8, php, raw, 5, out, 3), 3);
	CHECK_STR(joined(out, 3), "nanosleep;zif_usleep;usleep");
}

/* Read process @pid's frames as the BPF walker does, into @w (3 words a
 * frame): 0, or -1. */
static int walk(int pid, const struct phpproc *pp, __u64 *w, size_t cap, size_t *n)
{
	const struct phpproc_layout *l = &pp->layout;
	unsigned char ex[80], fn[256];
	__u64 cur = 0, f, name, scope, file;
	__u32 info, line;

	*n = 0;
	if (pyproc__read_mem(NULL, pid, pp->current_execute_data, &cur, 8))
		return -1;
	while (cur && *n + 3 <= cap) {
		if (pyproc__read_mem(NULL, pid, cur, ex, l->ex_size))
			return -1;
		memcpy(&f, ex + l->ex_func, 8);
		memcpy(&info, ex + l->ex_call_info, 4);
		memcpy(&cur, ex + l->ex_prev, 8);
		if (!f)
			continue;
		if (pyproc__read_mem(NULL, pid, f, fn, 24))
			return -1;
		memcpy(&name, fn + l->fn_name, 8);
		memcpy(&scope, fn + l->fn_scope, 8);
		file = line = 0;
		if (fn[0] != 1 && (pyproc__read_mem(NULL, pid, f, fn, l->op_size) ||
				   (memcpy(&file, fn + l->op_filename, 8), 0) ||
				   (memcpy(&line, fn + l->op_line_start, 4), 0)))
			return -1;
		w[*n] = f | (__u64)profcap_php_fingerprint(name, scope, file, line) << 48;
		memcpy(&w[*n + 1], ex + l->ex_opline, 8);
		if (fn[0] == 1)
			w[*n + 1] = 0;
		w[*n + 2] = info | (__u64)(fn[0] != 1 && (info & l->call_top) ? 1 : 0) << 32 |
			    (__u64)fn[0] << 40;
		*n += 3;
	}
	return 0;
}

TEST(live_frames_named)
{
	struct phpframes_raw raw[8];
	struct profile_frame out[8];
	struct phpframes_stats st;
	struct phpframes *pf;
	struct phpproc pp;
	struct phpfx fx;
	__u64 w[24];
	size_t nw = 0, n, named;
	int err;

	if (phpfx__start(&fx))
		SKIP("needs %s (php8.2-cli)", PHPFX_PHP);
	pf = phpframes__new(NULL);
	err = phpproc__locate(NULL, fx.pid, NULL, &pp);
	if (!err)
		err = walk(fx.pid, &pp, w, 24, &nw);
	n = phpframes__decode(w, nw, raw, 8);
	if (!err && pf)
		phpframes__set_process(pf, fx.pid, &pp);
	named = err || !pf ? 0 : phpframes__resolve(pf, fx.pid, raw, n, out);
	/* a changed fingerprint names nothing */
	raw[1].fingerprint ^= 1;
	if (!err && pf)
		phpframes__resolve(pf, fx.pid, raw + 1, 1, out + 4);
	phpfx__stop(&fx);
	CHECK(pf);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(named, 3);
	CHECK_STR(out[0].function, "usleep");
	CHECK_EQ_U64(out[0].nlines, 0);
	CHECK_STR(out[1].function, "sleeper");
	CHECK_STR(out[1].type_name, "php");
	CHECK_EQ_U64(out[1].nlines, 1);
	CHECK_STR(out[1].lines[0].filename, fx.path);
	CHECK_EQ_U64(out[1].lines[0].line, 4);
	CHECK_EQ_U64(out[1].lines[0].start_line, 2);
	CHECK_STR(out[2].function, "{main}");
	CHECK_EQ_U64(out[2].lines[0].line, 8);
	CHECK(raw[2].flags & PHPFRAMES_FRAME_ENTRY);
	CHECK(!(raw[1].flags & PHPFRAMES_FRAME_ENTRY));
	CHECK_STR(out[4].function, "<unknown php>");
	phpframes__stats(pf, &st);
	CHECK_EQ_U64(st.changed, 1);
	/* a forgotten process names nothing */
	phpframes__forget(pf, fx.pid);
	CHECK(!phpframes__process(pf, fx.pid));
	CHECK_EQ_U64(phpframes__resolve(pf, fx.pid, raw, n, out), 0);
	CHECK_STR(out[0].function, "<unknown php>");
	phpframes__free(pf);
}

/* A php whose program exists only in its own mount namespace (a
 * container): found through /proc/PID, its frames named. */
TEST(other_mount_namespace)
{
	struct phpframes_raw raw[8];
	struct profile_frame out[8];
	struct phpframes *pf = NULL;
	struct phpproc pp;
	struct phpfx fx;
	__u64 w[24];
	size_t nw = 0, n = 0;
	bool named = false;
	int err;

	if (geteuid())
		SKIP("needs root (a mount namespace)");
	err = phpfx__start_in(&fx, true);
	if (err == -ENOENT)
		SKIP("needs %s (php8.2-cli)", PHPFX_PHP);
	if (err == -EPERM)
		SKIP("mount namespaces refused here");
	CHECK_EQ_U64(err, 0);
	/* the path the process runs from is not there for profcap */
	err = access(fx.hidden, F_OK) ? phpproc__locate(NULL, fx.pid, NULL, &pp) : -EEXIST;
	if (!err)
		err = walk(fx.pid, &pp, w, 24, &nw);
	pf = err ? NULL : phpframes__new(NULL);
	if (pf) {
		phpframes__set_process(pf, fx.pid, &pp);
		n = phpframes__decode(w, nw, raw, 8);
		phpframes__resolve(pf, fx.pid, raw, n, out);
	}
	named = n == 3 && !strcmp(out[1].function, "sleeper") && out[1].nlines == 1 &&
		!strcmp(out[1].lines[0].filename, fx.path) && !strcmp(out[2].function, "{main}");
	phpfx__stop(&fx);
	phpframes__free(pf);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(n, 3);
	CHECK(named);
}

int main(void)
{
	RUN(decode);
	RUN(fingerprint_is_the_walkers);
	RUN(names_and_oplines);
	RUN(merge);
	RUN(live_frames_named);
	RUN(other_mount_namespace);
	return TEST_DONE();
}
