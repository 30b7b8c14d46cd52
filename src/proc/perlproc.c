/* perlproc.c - Perl 5 found in a process (see perlproc.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/elfsyms.h"
#include "proc/perlproc.h"
#include "proc/pfile.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/pyproc.h"
#include "util/log.h"

/* Perl 5.36, threaded (Debian's x86_64-linux-gnu-thread-multi), from its
 * own headers (tests/unit/test_perlproc.c compiles them against
 * perl/5.36/CORE when installed and compares). */
static const struct perlproc_layout layout_5_36 = {
	.major = 5,
	.minor = 36,
	.interp_curstackinfo = 224,
	.interp_curcop = 208,
	.interp_curstack = 216,
	.interp_patchlevel = 1504,
	.si_stack = 0,
	.si_cxstack = 8,
	.si_cxix = 32,
	.si_prev = 16,
	.si_type = 44,
	.cx_size = 104,
	.cx_oldcop = 16,
	.cx_retop = 48,
	.cx_cv = 72,
	.cop_line = 36,
	.cop_file = 48,
	.sv_any = 0,
	.sv_flags = 12,
	.sv_u = 16,
	.cv_stash = 32,
	.cv_gv = 56,
	.cv_flags = 92,
	.gv_namehek = 32,
	.gv_stash = 40,
	.hv_max = 24,
	.hv_aux = 32,
	.aux_name = 0,
	.aux_name_count = 28,
	.hek_len = 4,
	.hek_key = 8,
	.type_mask = 0xf,
	.type_sub = 9,
	.type_eval = 11,
	.si_main = 1,
	.cvf_named = 0x8000,
	.svf_ook = 0x02000000,
	.svf_rok = 0x0800,
	.svf_pok = 0x0400,
	.he_next = 0,
	.he_hek = 8,
	.he_val = 16,
};

const struct perlproc_layout *perlproc__layout(unsigned major, unsigned minor)
{
	return major == 5 && minor == 36 ? &layout_5_36 : NULL;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* "X.Y" at @s: 0 and the numbers. */
static int parse_xy(const char *s, unsigned *major, unsigned *minor)
{
	char *end;
	unsigned long a, b;

	if (*s < '0' || *s > '9')
		return -ENOENT;
	a = strtoul(s, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return -ENOENT;
	b = strtoul(end + 1, &end, 10);
	if (a > 99 || b > 999 || (*end && *end != '.'))
		return -ENOENT;
	*major = (unsigned)a;
	*minor = (unsigned)b;
	return 0;
}

int perlproc__name_version(const char *name, unsigned *major, unsigned *minor)
{
	const char *b = base_name(name);

	if (!strncmp(b, "libperl.so.", 11))
		return parse_xy(b + 11, major, minor);
	if (!strncmp(b, "perl", 4))
		return parse_xy(b + 4, major, minor);
	return -ENOENT;
}

bool perlproc__patchlevel_is(const char *patchlevel, unsigned major, unsigned minor)
{
	char want[32];
	int n = snprintf(want, sizeof(want), "v%u.%u.", major, minor);

	return n > 0 && (size_t)n < sizeof(want) && !strncmp(patchlevel, want, (size_t)n) &&
	       patchlevel[n] >= '0' && patchlevel[n] <= '9';
}

bool perlproc__in_runops(const struct perlproc *pp, __u64 pc)
{
	__u32 i;

	for (i = 0; pp && i < pp->nrunops && i < PERLPROC_MAX_RUNOPS; i++)
		if (pc >= pp->runops[i].lo && pc < pp->runops[i].hi)
			return true;
	return false;
}

/* The version string PL_patchlevel @sv holds into @out (@len bytes,
 * NUL-terminated): a string, or the "original" of a version object (a
 * reference to a hash) once upg_version() made it one. 0, or -ENOTSUP
 * when it does not read as either, -ESRCH. */
static int version_string(const char *root, int pid, const struct perlproc_layout *l, __u64 sv,
			  char *out, size_t len)
{
	__u64 hv = 0, body = 0, array = 0, max = 0, he = 0, hek = 0, val = 0, pv = 0;
	__u32 flags = 0, b, depth;
	__s32 klen = 0;
	char key[9];
	int err;

	err = pyproc__read_mem(root, pid, sv + l->sv_flags, &flags, sizeof(flags));
	if (!err && (flags & l->svf_pok) && !(flags & l->svf_rok)) {
		err = pyproc__read_mem(root, pid, sv + l->sv_u, &pv, sizeof(pv));
		if (!err)
			err = pyproc__read_mem(root, pid, pv, out, len - 1);
		out[len - 1] = 0;
		return err == -ESRCH ? err : err ? -ENOTSUP : 0;
	}
	if (!err && !(flags & l->svf_rok))
		return -ENOTSUP;
	if (!err)
		err = pyproc__read_mem(root, pid, sv + l->sv_u, &hv, sizeof(hv));
	if (!err)
		err = pyproc__read_mem(root, pid, hv + l->sv_any, &body, sizeof(body));
	if (!err)
		err = pyproc__read_mem(root, pid, hv + l->sv_u, &array, sizeof(array));
	if (!err)
		err = pyproc__read_mem(root, pid, body + l->hv_max, &max, sizeof(max));
	if (err)
		return err == -ESRCH ? err : -ENOTSUP;
	/* a version object has three keys: a few buckets, short chains */
	for (b = 0; b <= max && b < 64; b++) {
		if (pyproc__read_mem(root, pid, array + 8ull * b, &he, sizeof(he)))
			return -ENOTSUP;
		for (depth = 0; he && depth < 8; depth++) {
			if (pyproc__read_mem(root, pid, he + l->he_hek, &hek, sizeof(hek)) ||
			    pyproc__read_mem(root, pid, hek + l->hek_len, &klen, sizeof(klen)))
				return -ENOTSUP;
			if (klen == 8 && !pyproc__read_mem(root, pid, hek + l->hek_key, key, 8) &&
			    !memcmp(key, "original", 8)) {
				if (pyproc__read_mem(root, pid, he + l->he_val, &val, sizeof(val)) ||
				    pyproc__read_mem(root, pid, val + l->sv_u, &pv, sizeof(pv)) ||
				    pyproc__read_mem(root, pid, pv, out, len - 1))
					return -ENOTSUP;
				out[len - 1] = 0;
				return 0;
			}
			if (pyproc__read_mem(root, pid, he + l->he_next, &he, sizeof(he)))
				return -ENOTSUP;
		}
	}
	return -ENOTSUP;
}

int perlproc__check_live(const char *proc_root, int pid, const struct perlproc *pp)
{
	const struct perlproc_layout *l = &pp->layout;
	__u64 interp = 0, sv = 0;
	char text[16];
	int err;

	err = pyproc__read_mem(proc_root, pid, pp->curinterp, &interp, sizeof(interp));
	if (err)
		return err;
	if (!interp)
		return -EAGAIN;
	err = pyproc__read_mem(proc_root, pid, interp + l->interp_patchlevel, &sv, sizeof(sv));
	if (!err && !sv)
		return -EAGAIN; /* perl_construct() has not got there yet */
	if (!err)
		err = version_string(proc_root, pid, l, sv, text, sizeof(text));
	if (err == -ESRCH)
		return err;
	if (err)
		return -ENOTSUP;
	return perlproc__patchlevel_is(text, l->major, l->minor) ? 0 : -ENOTSUP;
}

/* ---- locate ---- */

/* A file that may hold Perl: libperl.so*, or the executable named perl*. */
static bool candidate(const struct procmaps_entry *e, const char *exe)
{
	const char *b = base_name(e->path);
	size_t len = strlen(e->path);

	if (e->anonymous || e->path[0] != '/')
		return false;
	if (!strncmp(b, "libperl.so", 10))
		return true;
	return exe && !strncmp(b, "perl", 4) && !strncmp(exe, e->path, len) &&
	       (!exe[len] || !strcmp(exe + len, PROCMAPS_DELETED_SUFFIX));
}

/* The load bias of the file mapped by @e: the PT_LOAD its offset falls in
 * (the one the mapping begins, executable like it, first) gives the link
 * address of the mapping's start. 0, or -ENOEXEC. */
static int load_bias(const struct elfsyms_file *f, const struct procmaps_entry *e, __u64 *bias)
{
	const Elf64_Phdr *best = NULL;
	int i, score, best_score = -1;

	for (i = 0; i < f->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &f->ph[i];
		__u64 page = p->p_offset & ~(__u64)4095;

		if (p->p_type != PT_LOAD || !p->p_filesz || e->offset < page ||
		    e->offset >= p->p_offset + p->p_filesz)
			continue;
		score = 2 * (e->offset == page) + (!(p->p_flags & PF_X) == !(e->perms & PROCMAPS_EXEC));
		if (score > best_score) {
			best = p;
			best_score = score;
		}
	}
	if (!best)
		return -ENOEXEC;
	*bias = e->start - (e->offset - (best->p_offset & ~(__u64)4095)) -
		(best->p_vaddr & ~(__u64)4095);
	return 0;
}

enum { SYM_CURINTERP, SYM_RUNOPS_STD, SYM_RUNOPS_DBG, SYM_CONTEXT, SYM_N };

__u64 perlproc__tls_below(const Elf64_Phdr *tls, __u64 value)
{
	__u64 align = tls->p_align ? tls->p_align : 1, size;

	if ((align & (align - 1)) || tls->p_vaddr % align || tls->p_memsz > (1u << 20) ||
	    value + 8 > tls->p_memsz)
		return 0;
	size = (tls->p_memsz + align - 1) & ~(align - 1);
	return size - value;
}

/* The TLS segment of @f, NULL when none. */
static const Elf64_Phdr *tls_segment(const struct elfsyms_file *f)
{
	int i;

	for (i = 0; i < f->eh.e_phnum; i++)
		if (f->ph[i].p_type == PT_TLS)
			return &f->ph[i];
	return NULL;
}

/* PL_curinterp and the runops loops of the file open at @fd, absolute for
 * mapping @e; with @exe (the file is the executable), where a thread's
 * PL_current_context lies. */
static int read_symbols(int fd, const struct procmaps_entry *e, bool exe, struct perlproc *out)
{
	struct elfsyms_query q[SYM_N] = {
		[SYM_CURINTERP] = {.name = "PL_curinterp", .types = 1u << STT_OBJECT},
		[SYM_RUNOPS_STD] = {.name = "Perl_runops_standard", .types = 1u << STT_FUNC},
		[SYM_RUNOPS_DBG] = {.name = "Perl_runops_debug", .types = 1u << STT_FUNC},
		[SYM_CONTEXT] = {.name = "PL_current_context", .types = 1u << STT_TLS},
	};
	const Elf64_Phdr *tls;
	struct elfsyms_file f = {0};
	__u64 bias = 0;
	int i, err;

	err = elfsyms__open(fd, &f);
	if (!err)
		err = elfsyms__dynsym(&f, q, SYM_N, NULL);
	if (!err && (!q[SYM_CURINTERP].found || !q[SYM_RUNOPS_STD].found))
		err = -ENOENT;
	if (!err)
		err = load_bias(&f, e, &bias);
	tls = !err && exe && q[SYM_CONTEXT].found ? tls_segment(&f) : NULL;
	if (tls)
		out->tls_interp = perlproc__tls_below(tls, q[SYM_CONTEXT].value);
	elfsyms__close(&f);
	if (err)
		return err == -ENOEXEC ? -ENOENT : err;
	out->curinterp = q[SYM_CURINTERP].value + bias;
	for (i = SYM_RUNOPS_STD; i <= SYM_RUNOPS_DBG; i++)
		if (q[i].found && q[i].size && out->nrunops < PERLPROC_MAX_RUNOPS)
			out->runops[out->nrunops++] = (struct perlproc_range){
				.lo = q[i].value + bias, .hi = q[i].value + bias + q[i].size};
	return 0;
}

static void warn_unsupported(const char *path, const char *why)
{
	static int warned;

	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	pr_warn("perl: %s %s: its Perl frames are not named (profcap reads Perl 5.36 "
		"threaded builds)\n",
		path, why);
}

static int locate_in(const char *root, int pid, const struct procmaps *maps, const char *exe,
		     void *arg)
{
	struct perlproc *out = arg;
	const struct procmaps_entry *e = NULL;
	const struct perlproc_layout *l;
	size_t i, n = procmaps__count(maps);
	unsigned major = 5, minor = 36;
	int fd, err;

	for (i = 0; i < n && !e; i++)
		if (candidate(procmaps__entry(maps, i), exe))
			e = procmaps__entry(maps, i);
	if (!e)
		return -ENOENT;
	err = pfile__open_mapped(root, pid, e, &fd);
	if (err)
		return err;
	err = read_symbols(fd, e, strncmp(base_name(e->path), "libperl", 7) != 0, out);
	close(fd);
	if (err)
		return err;
	/* A name without a version (perl) is tried with the one table; the
	 * live check below decides. */
	perlproc__name_version(e->path, &major, &minor);
	l = perlproc__layout(major, minor);
	if (!l) {
		warn_unsupported(e->path, "is a version without a layout");
		return -ENOTSUP;
	}
	out->layout = *l;
	snprintf(out->version, sizeof(out->version), "%u.%u", major, minor);
	err = perlproc__check_live(root, pid, out);
	if (err == -ENOTSUP)
		warn_unsupported(e->path, "does not read as its version's layout (a build "
					  "without threads, or another version)");
	return err;
}

int perlproc__locate(const char *proc_root, int pid, const struct procsnap *snap,
		     struct perlproc *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	err = procsnap__with_maps(proc_root, pid, snap, locate_in, out);
	if (err)
		memset(out, 0, sizeof(*out));
	return err;
}
