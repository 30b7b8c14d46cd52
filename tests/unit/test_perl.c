/* test_perl.c - Perl frames from outside the process: the version table
 * against Perl's own headers, the file name and version checks, the
 * walker's map entry (sampler__perl_proc()), the BPF words decoded, the
 * merge with native frames, and a live /usr/bin/perl child located, its
 * context stack walked from user space as the BPF walker does and every
 * frame named (subs, a package's method, files, lines), the fingerprint
 * refusing a changed sub. Live parts are skipped (counted) without
 * /usr/bin/perl, the header check without Perl's CORE headers or cc. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/types.h>

#include "perl.h"
#include "capture/perl.h"
#include "collect/sampler_perl.h"
#include "proc/perlproc.h"
#include "proc/pyproc.h"
#include "symbolize/perlframes.h"
#include "test.h"

#define PERL "/usr/bin/perl"
#define CORE "/usr/lib/x86_64-linux-gnu/perl/5.36/CORE"

/* ---- the table against the headers ---- */

static const char offsets_src[] =
	"#include <EXTERN.h>\n#include <perl.h>\n#include <stdio.h>\n#include <stddef.h>\n"
	"#define P(x) printf(\"%lu\\n\", (unsigned long)(x))\n"
	"int main(void){\n"
	"P(offsetof(struct interpreter, Icurstackinfo)); P(offsetof(struct interpreter, Icurcop));\n"
	"P(offsetof(struct interpreter, Ipatchlevel)); P(offsetof(struct interpreter, Icurstack));\n"
	"P(offsetof(struct stackinfo, si_stack));\n"
	"P(offsetof(struct stackinfo, si_cxstack)); P(offsetof(struct stackinfo, si_cxix));\n"
	"P(offsetof(struct stackinfo, si_prev)); P(offsetof(struct stackinfo, si_type));\n"
	"P(sizeof(PERL_CONTEXT)); P(offsetof(PERL_CONTEXT, cx_u.cx_blk.blku_oldcop));\n"
	"P(offsetof(PERL_CONTEXT, cx_u.cx_blk.blk_u.blku_sub.retop));\n"
	"P(offsetof(PERL_CONTEXT, cx_u.cx_blk.blk_u.blku_eval.retop));\n"
	"P(offsetof(PERL_CONTEXT, cx_u.cx_blk.blk_u.blku_sub.cv));\n"
	"P(offsetof(struct cop, cop_line)); P(offsetof(struct cop, cop_file));\n"
	"P(offsetof(struct sv, sv_any)); P(offsetof(struct sv, sv_flags)); P(offsetof(struct sv, sv_u));\n"
	"P(offsetof(struct xpvcv, xcv_stash)); P(offsetof(struct xpvcv, xcv_gv_u));\n"
	"P(offsetof(struct xpvcv, xcv_flags));\n"
	"P(offsetof(XPVGV, xiv_u)); P(offsetof(XPVGV, xnv_u));\n"
	"P(offsetof(XPVHV, xhv_max)); P(offsetof(struct xpvhv_with_aux, xhv_aux));\n"
	"P(offsetof(struct xpvhv_aux, xhv_name_u)); P(offsetof(struct xpvhv_aux, xhv_name_count));\n"
	"P(offsetof(struct hek, hek_len)); P(offsetof(struct hek, hek_key));\n"
	"P(CXTYPEMASK); P(CXt_SUB); P(CXt_EVAL); P(PERLSI_MAIN); P(CVf_NAMED); P(SVf_OOK);\n"
	"P(SVf_ROK); P(SVf_POK); P(offsetof(struct he, hent_next)); P(offsetof(struct he, hent_hek));\n"
	"P(offsetof(struct he, he_valu));\n"
	"return 0; }\n";

TEST(layout_5_36_matches_headers)
{
	const struct perlproc_layout *l = perlproc__layout(5, 36);
	char dir[] = "/tmp/profcap-perl-XXXXXX", path[96], cmd[512];
	unsigned long v[48];
	size_t n = 0;
	FILE *f;

	CHECK(l != NULL);
	if (access(CORE "/perl.h", R_OK) || access(PERL, X_OK))
		SKIP("no Perl 5.36 headers (" CORE ")");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/off.c", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	fputs(offsets_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && cc $(" PERL " -MExtUtils::Embed -e ccopts) off.c -o off 2>/dev/null "
		 "&& ./off",
		 dir);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (n < 48 && fscanf(f, "%lu", &v[n]) == 1)
		n++;
	pclose(f);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
		/* a temporary directory left behind: harmless */
	}
	if (n == 0)
		SKIP("no C compiler for Perl's headers");
	CHECK_EQ_U64(n, 41);
	CHECK(v[0] == l->interp_curstackinfo && v[1] == l->interp_curcop &&
	      v[2] == l->interp_patchlevel && v[3] == l->interp_curstack && v[4] == l->si_stack);
	memmove(v, v + 2, sizeof(v) - 2 * sizeof(v[0])); /* the rest as they were */
	CHECK(v[3] == l->si_cxstack && v[4] == l->si_cxix && v[5] == l->si_prev &&
	      v[6] == l->si_type);
	CHECK(v[7] == l->cx_size && v[8] == l->cx_oldcop && v[9] == l->cx_retop &&
	      v[10] == l->cx_retop && v[11] == l->cx_cv);
	CHECK(v[12] == l->cop_line && v[13] == l->cop_file);
	CHECK(v[14] == l->sv_any && v[15] == l->sv_flags && v[16] == l->sv_u);
	CHECK(v[17] == l->cv_stash && v[18] == l->cv_gv && v[19] == l->cv_flags);
	CHECK(v[20] == l->gv_namehek && v[21] == l->gv_stash);
	CHECK(v[22] == l->hv_max && v[23] == l->hv_aux && v[24] == l->aux_name &&
	      v[25] == l->aux_name_count);
	CHECK(v[26] == l->hek_len && v[27] == l->hek_key);
	CHECK(v[28] == l->type_mask && v[29] == l->type_sub && v[30] == l->type_eval &&
	      v[31] == l->si_main);
	CHECK(v[32] == l->cvf_named && v[33] == l->svf_ook && v[34] == l->svf_rok &&
	      v[35] == l->svf_pok);
	CHECK(v[36] == l->he_next && v[37] == l->he_hek && v[38] == l->he_val);
}

TEST(versions_from_names)
{
	unsigned a = 0, b = 0;

	CHECK(!perlproc__name_version("/usr/lib/x86_64-linux-gnu/libperl.so.5.36", &a, &b));
	CHECK(a == 5 && b == 36);
	CHECK(!perlproc__name_version("/usr/bin/perl5.34.1", &a, &b) && a == 5 && b == 34);
	CHECK(perlproc__name_version("/usr/bin/perl", &a, &b) == -ENOENT);
	CHECK(perlproc__name_version("/usr/lib/libperl.so", &a, &b) == -ENOENT);
	CHECK(perlproc__name_version("/usr/bin/perlbug", &a, &b) == -ENOENT);
	CHECK(perlproc__layout(5, 36) && !perlproc__layout(5, 38) && !perlproc__layout(5, 34));
	CHECK(perlproc__patchlevel_is("v5.36.0", 5, 36));
	{
		/* Debian's perl: 8 bytes of TLS aligned to 8, the variable at 0 */
		Elf64_Phdr t = {.p_type = PT_TLS, .p_vaddr = 0x390f28, .p_memsz = 8, .p_align = 8};

		CHECK_EQ_U64(perlproc__tls_below(&t, 0), 8);
		t.p_memsz = 20; /* rounded up to the alignment */
		CHECK_EQ_U64(perlproc__tls_below(&t, 8), 16);
		CHECK_EQ_U64(perlproc__tls_below(&t, 16), 0); /* past the segment */
		t.p_vaddr += 4; /* a misaligned block: offset not known */
		CHECK_EQ_U64(perlproc__tls_below(&t, 0), 0);
		t.p_vaddr -= 4;
		t.p_align = 24;
		CHECK_EQ_U64(perlproc__tls_below(&t, 0), 0);
	}
	CHECK(!perlproc__patchlevel_is("v5.36", 5, 36));
	CHECK(!perlproc__patchlevel_is("v5.361.0", 5, 36));
	CHECK(!perlproc__patchlevel_is("v5.38.2", 5, 36));
	CHECK(!perlproc__patchlevel_is("", 5, 36));
}

static void fake_proc(struct perlproc *pp)
{
	memset(pp, 0, sizeof(*pp));
	pp->layout = *perlproc__layout(5, 36);
	pp->curinterp = 0x5555557a66d8ull;
	pp->tls_interp = 8;
	pp->runops[0] = (struct perlproc_range){0x555555600000ull, 0x555555600050ull};
	pp->nrunops = 1;
	strcpy(pp->version, "5.36");
}

TEST(map_entry)
{
	struct perlproc pp;
	struct perl_proc e;

	fake_proc(&pp);
	CHECK_EQ_U64(sampler__perl_proc(&pp, &e), 0);
	CHECK(e.curinterp == pp.curinterp && e.interp_curstackinfo == 224 &&
	      e.interp_curcop == 208);
	CHECK(e.si_cxstack == 8 && e.si_cxix == 32 && e.si_prev == 16 && e.si_type == 44);
	CHECK(e.interp_curstack == 216 && e.si_stack == 0 && e.tls_interp == 8);
	CHECK(e.cx_size == 104 && e.cx_oldcop == 16 && e.cx_retop == 48 && e.cx_cv == 72);
	CHECK(e.cop_line == 36 && e.cv_gv == 56 && e.type_mask == 15 && e.type_sub == 9 &&
	      e.type_eval == 11 && e.si_main == 1);
	pp.layout.cx_cv = PROFCAP_PERL_CX_READ - 4; /* past the context's read */
	CHECK_EQ_U64(sampler__perl_proc(&pp, &e), -EINVAL);
	fake_proc(&pp);
	pp.layout.si_type = PROFCAP_PERL_SI_READ;
	CHECK_EQ_U64(sampler__perl_proc(&pp, &e), -EINVAL);
	fake_proc(&pp);
	pp.curinterp = 0;
	CHECK_EQ_U64(sampler__perl_proc(&pp, &e), -EINVAL);
}

/* ---- words and merge ---- */

TEST(words_decoded)
{
	__u64 w[7] = {
		0x123456789abcull | (0xbeefull << 48), 0x5555aaaa0000ull,
		42 | (__u64)PROFCAP_PERL_KIND_SUB << 32 | (__u64)PROFCAP_PERL_FRAME_ENTRY << 40,
		0, 0x5555aaaa1000ull, 7 | (__u64)PROFCAP_PERL_KIND_MAIN << 32, 99,
	};
	struct perlframes_raw r[4];

	CHECK(PERLFRAMES_KIND_SUB == PROFCAP_PERL_KIND_SUB &&
	      PERLFRAMES_KIND_EVAL == PROFCAP_PERL_KIND_EVAL &&
	      PERLFRAMES_KIND_MAIN == PROFCAP_PERL_KIND_MAIN &&
	      PERLFRAMES_FRAME_ENTRY == PROFCAP_PERL_FRAME_ENTRY &&
	      PERLFRAMES_FRAME_NOCV == PROFCAP_PERL_FRAME_NOCV &&
	      PERLFRAMES_WORDS == PROFCAP_PERL_WORDS);
	CHECK(PROFCAP_F_PERL_TRUNC == 0x400 && PROFCAP_F_PERL_PARTIAL == 0x800 &&
	      PROFCAP_F_PERL_LOST == 0x1000);
	/* a trailing partial frame is not decoded */
	CHECK_EQ_U64(perlframes__decode(w, 7, r, 4), 2);
	CHECK(r[0].cv == 0x123456789abcull && r[0].fingerprint == 0xbeef &&
	      r[0].cop == 0x5555aaaa0000ull && r[0].line == 42);
	CHECK(r[0].kind == PERLFRAMES_KIND_SUB && r[0].flags == PERLFRAMES_FRAME_ENTRY);
	CHECK(r[1].cv == 0 && r[1].kind == PERLFRAMES_KIND_MAIN && r[1].line == 7);
	CHECK_EQ_U64(perlframes__decode(w, 7, r, 1), 1);
	/* the BPF fingerprint and user space's agree, and are never 0 */
	CHECK(perlframes__fingerprint(0x55555abc1230ull) ==
	      profcap_perl_fingerprint(0x55555abc1230ull));
	CHECK(perlframes__fingerprint(0) != 0);
}

static struct profile_frame nat(const char *name)
{
	return (struct profile_frame){.function = name};
}

TEST(merge)
{
	struct perlproc pp;
	const __u64 runops = 0x555555600010ull;
	/* leaf first: pp_add, runops (inner: a sort block's sub), pp_sort,
	 * runops (outer), perl_run, main */
	__u64 pcs[6] = {0x1000, runops, 0x2000, runops + 8, 0x3000, 0x4000};
	struct profile_frame n[6] = {nat("Perl_pp_add"), nat("Perl_runops_standard"),
				     nat("Perl_pp_sort"), nat("Perl_runops_standard"),
				     nat("perl_run"), nat("main")};
	struct profile_frame p[4] = {nat("main::cmp"), nat("main::sorter"), nat("main::run"),
				     nat("<main>")};
	struct perlframes_raw raw[4] = {{.flags = PERLFRAMES_FRAME_ENTRY}, {0}, {0},
					{.flags = PERLFRAMES_FRAME_ENTRY}};
	struct profile_frame out[16];
	const char *want[] = {"Perl_pp_add", "main::cmp",    "Perl_pp_sort", "main::sorter",
			      "main::run",   "<main>",	     "perl_run",     "main"};
	size_t k, m;

	fake_proc(&pp);
	m = perlframes__merge(&pp, pcs, n, 6, p, raw, 4, out, 16);
	CHECK_EQ_U64(m, 8);
	for (k = 0; k < m; k++)
		CHECK_STR(out[k].function, want[k]);
	/* the native stack cut before the outer runops: the rest at the root end */
	m = perlframes__merge(&pp, pcs, n, 3, p, raw, 4, out, 16);
	CHECK_EQ_U64(m, 6);
	CHECK_STR(out[1].function, "main::cmp");
	CHECK_STR(out[2].function, "Perl_pp_sort");
	CHECK_STR(out[5].function, "<main>");
	/* no Perl frames: the native stack as it is; no room: bounded */
	m = perlframes__merge(&pp, pcs, n, 6, p, raw, 0, out, 16);
	CHECK_EQ_U64(m, 6);
	CHECK_STR(out[1].function, "Perl_runops_standard");
	CHECK_EQ_U64(perlframes__merge(&pp, pcs, n, 6, p, raw, 4, out, 3), 3);
	/* not known as Perl: nothing replaced */
	m = perlframes__merge(NULL, pcs, n, 6, p, raw, 4, out, 16);
	CHECK_EQ_U64(m, 10);
	CHECK_STR(out[1].function, "Perl_runops_standard");
}

/* ---- a live perl ---- */

/* The child's script: sub lines are checked below. Its first line gets
 * a prefix: "use Time::HiRes;" (an XS module's version check makes
 * PL_patchlevel a version object) or nothing (it stays a string). */
static const char script[] =
	"package Worker;\n"					/* 1 */
	"sub new { return bless {}, shift }\n"			/* 2 */
	"sub method { my $s = shift; main::inner(); }\n"	/* 3 */
	"package main;\n"					/* 4 */
	"sub inner {\n"						/* 5 */
	"  $| = 1; print \"ready\\n\"; sleep 30;\n"		/* 6 */
	"}\n"							/* 7 */
	"sub outer { for my $i (1) { Worker->new->method(); } }\n" /* 8 */
	"outer();\n";						/* 9 */

struct child {
	pid_t pid;
	char path[64];
};

static int child_start(struct child *c, const char *prefix)
{
	int fds[2], fd;
	char buf[8] = {0};
	ssize_t n;

	strcpy(c->path, "/tmp/profcap-perl-test-XXXXXX");
	fd = mkstemp(c->path);
	if (fd < 0)
		return -errno;
	n = write(fd, prefix, strlen(prefix)) + write(fd, script, sizeof(script) - 1);
	close(fd);
	if (n != (ssize_t)(strlen(prefix) + sizeof(script) - 1) || pipe(fds))
		return -EIO;
	c->pid = fork();
	if (c->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(PERL, "perl", c->path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	n = c->pid > 0 ? read(fds[0], buf, 6) : -1;
	close(fds[0]);
	return n == 6 && !strcmp(buf, "ready\n") ? 0 : -EIO;
}

static void child_stop(struct child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	unlink(c->path);
}

static int rd64(int pid, __u64 a, __u64 *v)
{
	return pyproc__read_mem(NULL, pid, a, v, sizeof(*v));
}

/* The BPF walker's walk (perl.bpf.c), from user space: words into @w
 * (room for @cap frames); the frames walked. */
static size_t walk(int pid, const struct perl_proc *p, __u64 *w, size_t cap)
{
	__u64 interp = 0, si = 0, cop = 0, cx[PROFCAP_PERL_CX_READ / 8], cxstack = 0, prev = 0;
	__u64 body = 0, gv = 0, stack = 0, sistack = 0;
	__s32 ix = 0, type = 0, sitype = 0;
	__u32 line, fl, kind;
	size_t n = 0;

	if (rd64(pid, p->curinterp, &interp) || rd64(pid, interp + p->interp_curstackinfo, &si) ||
	    rd64(pid, interp + p->interp_curcop, &cop) ||
	    rd64(pid, interp + p->interp_curstack, &stack) || rd64(pid, si + p->si_stack, &sistack) ||
	    stack != sistack)
		return 0;
	while (si && n < cap) {
		if (rd64(pid, si + p->si_cxstack, &cxstack) ||
		    pyproc__read_mem(NULL, pid, si + p->si_cxix, &ix, 4) ||
		    pyproc__read_mem(NULL, pid, si + p->si_type, &sitype, 4) ||
		    rd64(pid, si + p->si_prev, &prev))
			return 0;
		for (; ix >= 0 && n < cap; ix--) {
			if (pyproc__read_mem(NULL, pid, cxstack + (__u64)ix * p->cx_size, cx,
					     sizeof(cx)))
				return 0;
			type = (__s32)(cx[0] & p->type_mask);
			kind = type == p->type_sub    ? PROFCAP_PERL_KIND_SUB
			       : type == p->type_eval ? PROFCAP_PERL_KIND_EVAL
						      : 0;
			if (!kind)
				continue;
			line = 0;
			pyproc__read_mem(NULL, pid, cop + p->cop_line, &line, 4);
			fl = cx[p->cx_retop / 8] ? 0 : PROFCAP_PERL_FRAME_ENTRY;
			w[3 * n] = 0;
			if (kind == PROFCAP_PERL_KIND_SUB) {
				__u64 cv = cx[p->cx_cv / 8];

				if (rd64(pid, cv, &body) || rd64(pid, body + p->cv_gv, &gv))
					return 0;
				w[3 * n] = cv | (__u64)profcap_perl_fingerprint(gv) << 48;
			}
			w[3 * n + 1] = cop;
			w[3 * n + 2] = line | (__u64)kind << 32 | (__u64)fl << 40;
			cop = cx[p->cx_oldcop / 8];
			n++;
		}
		if (!prev && sitype == (__s32)p->si_main && n < cap) {
			line = 0;
			pyproc__read_mem(NULL, pid, cop + p->cop_line, &line, 4);
			w[3 * n] = 0;
			w[3 * n + 1] = cop;
			w[3 * n + 2] = line | (__u64)PROFCAP_PERL_KIND_MAIN << 32 |
				       (__u64)PROFCAP_PERL_FRAME_ENTRY << 40;
			n++;
		}
		si = prev;
	}
	return n;
}

static void live(const char *prefix)
{
	struct perlframes_raw raw[16];
	struct profile_frame fr[16];
	struct perlframes_stats st;
	struct perlframes *pf = NULL;
	struct perlproc pp;
	struct perl_proc e;
	struct child c = {0};
	__u64 w[3 * 16];
	size_t n, i;
	const char *names[] = {"main::inner", "Worker::method", "main::outer", "<main>"};
	const __u32 lines[] = {6, 3, 8, 9};

	if (access(PERL, X_OK))
		SKIP("no " PERL);
	CHECK(!child_start(&c, prefix));
	CHECK_EQ_U64(perlproc__locate(NULL, c.pid, NULL, &pp), 0);
	CHECK_STR(pp.version, "5.36");
	CHECK(pp.curinterp && pp.nrunops >= 1 && pp.runops[0].lo < pp.runops[0].hi);
	/* Debian's perl exports PL_current_context (static TLS) */
	CHECK(pp.tls_interp && !(pp.tls_interp % 8));
	CHECK_EQ_U64(perlproc__check_live(NULL, c.pid, &pp), 0);
	CHECK_EQ_U64(sampler__perl_proc(&pp, &e), 0);
	n = walk(c.pid, &e, w, 16);
	CHECK_EQ_U64(n, 4);
	CHECK_EQ_U64(perlframes__decode(w, 3 * n, raw, 16), 4);
	pf = perlframes__new(NULL);
	CHECK(pf != NULL);
	/* not known yet: nothing named */
	CHECK_EQ_U64(perlframes__resolve(pf, c.pid, raw, n, fr), 0);
	CHECK_STR(fr[0].function, PERLFRAMES_UNKNOWN);
	CHECK(!perlframes__set_process(pf, c.pid, &pp));
	CHECK_EQ_U64(perlframes__resolve(pf, c.pid, raw, n, fr), 4);
	for (i = 0; i < n; i++) {
		CHECK_STR(fr[i].function, names[i]);
		CHECK_STR(fr[i].type_name, "perl");
		CHECK(fr[i].nlines == 1);
		CHECK_STR(fr[i].lines[0].filename, c.path);
		CHECK_EQ_U64(fr[i].lines[0].line, lines[i]);
	}
	CHECK(raw[3].flags & PERLFRAMES_FRAME_ENTRY);
	/* again: from the cache */
	CHECK_EQ_U64(perlframes__resolve(pf, c.pid, raw, n, fr), 4);
	perlframes__stats(pf, &st);
	CHECK(st.hits >= 3 && st.misses == 3 && st.unknown == 4);
	/* a sub whose fingerprint does not match, a statement whose line
	 * does not: no name, no file */
	raw[0].fingerprint ^= 0x10;
	raw[1].line += 1;
	CHECK_EQ_U64(perlframes__resolve(pf, c.pid, raw, 2, fr), 1);
	CHECK_STR(fr[0].function, PERLFRAMES_UNKNOWN);
	CHECK_STR(fr[1].function, "Worker::method");
	CHECK(fr[1].lines[0].filename == NULL);
	perlframes__stats(pf, &st);
	CHECK(st.changed == 1);
	/* forgotten: nothing named */
	perlframes__forget(pf, c.pid);
	raw[0].fingerprint ^= 0x10;
	CHECK_EQ_U64(perlframes__resolve(pf, c.pid, raw, 1, fr), 0);
	perlframes__free(pf);
	child_stop(&c);
}

TEST(live_perl_located_and_named)
{
	live("");
}

TEST(live_perl_version_object)
{
	live("use Time::HiRes; ");
}

/* A perl stopped at its exec: /usr/bin/perl mapped, no interpreter yet.
 * The registry keeps it pending; records ingested while no sampler runs
 * (@smp NULL: the final settle, after the sampler is freed) never reach
 * the registry's sampler, here a poisoned one that must not be touched.
 * Once constructed and announced again it is named. */
TEST(pending_until_constructed)
{
	static unsigned char poison[65536];
	struct sampler *bogus = (struct sampler *)poison;
	struct child c = {0};
	int fds[2], st;
	char buf[8] = {0};

	if (access(PERL, X_OK))
		SKIP("no " PERL);
	memset(poison, 0xa5, sizeof(poison));
	strcpy(c.path, "/tmp/profcap-perl-test-XXXXXX");
	st = mkstemp(c.path);
	CHECK(st >= 0);
	CHECK(write(st, script, sizeof(script) - 1) == (ssize_t)sizeof(script) - 1);
	close(st);
	CHECK(!pipe(fds));
	c.pid = fork();
	if (c.pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(PERL, "perl", c.path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	CHECK(c.pid > 0);
	CHECK(waitpid(c.pid, &st, 0) == c.pid && WIFSTOPPED(st)); /* at the exec */
	CHECK_EQ_U64(capture_perl__process(bogus, c.pid, NULL), 1);
	CHECK(capture_perl__frames_of(NULL, c.pid) == NULL);
	CHECK(!ptrace(PTRACE_DETACH, c.pid, NULL, NULL));
	CHECK(read(fds[0], buf, 6) == 6 && !strcmp(buf, "ready\n"));
	close(fds[0]);
	usleep(60000); /* past the retry interval */
	CHECK(capture_perl__frames_of(NULL, c.pid) == NULL);
	/* announced again under a session without a sampler: named */
	CHECK_EQ_U64(capture_perl__process(NULL, c.pid, NULL), 1);
	CHECK(capture_perl__frames_of(NULL, c.pid) != NULL);
	capture_perl__release();
	CHECK(capture_perl__frames_of(NULL, c.pid) == NULL);
	child_stop(&c);
}

/* A Perl process that exec()s something else is forgotten when announced
 * again; one that exits, at an announcement a second later. */
TEST(forgotten_on_exec_and_exit)
{
	struct child a = {0}, b = {0};
	char path[64], exe[256];
	ssize_t n;
	int i;

	if (access(PERL, X_OK) || access("/bin/sleep", X_OK))
		SKIP("no " PERL " or /bin/sleep");
	/* a: perl, then exec sleep at once after "ready" (its sleep line
	 * exec()s instead) */
	CHECK(!child_start(&a, "BEGIN { *CORE::GLOBAL::sleep = sub { exec '/bin/sleep', 30 } } "));
	CHECK(!child_start(&b, ""));
	capture_perl__release();
	/* a may have exec()ed already: announced when it was still perl */
	CHECK_EQ_U64(capture_perl__process(NULL, b.pid, NULL), 1);
	CHECK(capture_perl__frames_of(NULL, b.pid) != NULL);
	for (i = 0; i < 100; i++) { /* a runs sleep now */
		snprintf(path, sizeof(path), "/proc/%d/exe", a.pid);
		n = readlink(path, exe, sizeof(exe) - 1);
		if (n > 0 && (exe[n] = 0, strstr(exe, "sleep")))
			break;
		usleep(20000);
	}
	CHECK(i < 100);
	CHECK_EQ_U64(capture_perl__process(NULL, a.pid, NULL), 0);
	CHECK(capture_perl__frames_of(NULL, a.pid) == NULL);
	/* b exits: named until the window's edge forgets it, after its last
	 * records were ingested */
	child_stop(&b);
	capture_perl__process(NULL, a.pid, NULL);
	CHECK(capture_perl__frames_of(NULL, b.pid) != NULL); /* its last records */
	capture_perl__forget_gone();
	CHECK(capture_perl__frames_of(NULL, b.pid) == NULL);
	capture_perl__release();
	child_stop(&a);
}

TEST(not_perl)
{
	struct perlproc pp;

	CHECK_EQ_U64(perlproc__locate(NULL, getpid(), NULL, &pp), -ENOENT);
	CHECK(!perlproc__in_runops(&pp, 0x1000));
	CHECK(!perlproc__in_runops(NULL, 0x1000));
}

int main(void)
{
	RUN(layout_5_36_matches_headers);
	RUN(versions_from_names);
	RUN(map_entry);
	RUN(words_decoded);
	RUN(merge);
	RUN(live_perl_located_and_named);
	RUN(live_perl_version_object);
	RUN(pending_until_constructed);
	RUN(forgotten_on_exec_and_exit);
	RUN(not_perl);
	return TEST_DONE();
}
