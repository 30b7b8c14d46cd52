/* perlproc.h - is a process running Perl 5, and how are its interpreter,
 * contexts and objects laid out: what the Perl frame walker (bpf/perl.h)
 * and the namer of Perl frames (symbolize/perlframes.h) need to know.
 *
 * Found from outside, without flags: a mapped libperl.so*, or an
 * executable named perl* (Debian's /usr/bin/perl links the interpreter
 * in), exporting PL_curinterp and the runops loops in .dynsym. Perl
 * publishes no description of its structures, so the offsets come from a
 * table per version, checked on the live process: the interpreter's
 * PL_patchlevel must read as the version ("v5.36.0") through the table's
 * offsets (the string itself, or once a module asked for the version, a
 * version object: a reference to a hash whose "original" is that string)
 * before the process is walked. docs/perl.md.
 */
#ifndef PROFCAP_PERLPROC_H
#define PROFCAP_PERLPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <elf.h>
#include <linux/types.h>

struct procsnap;

/* Offsets (bytes) and constants of one Perl version's threaded
 * (MULTIPLICITY) x86-64 build. */
struct perlproc_layout {
	__u16 major, minor; /* 5, 36 */
	/* struct interpreter */
	__u16 interp_curstackinfo, interp_curcop, interp_curstack, interp_patchlevel;
	/* struct stackinfo */
	__u16 si_stack, si_cxstack, si_cxix, si_prev, si_type;
	/* PERL_CONTEXT */
	__u16 cx_size, cx_oldcop, cx_retop, cx_cv;
	/* struct cop */
	__u16 cop_line, cop_file;
	/* SV head: body pointer, flags, the union (a PV's characters) */
	__u16 sv_any, sv_flags, sv_u;
	/* CV body: stash, glob (or name HEK with CVf_NAMED), flags */
	__u16 cv_stash, cv_gv, cv_flags;
	/* GV body: name HEK, stash */
	__u16 gv_namehek, gv_stash;
	/* HV body: the bucket count less one, where a stash's aux part
	 * begins (in the body, struct xpvhv_with_aux); the aux: name, name
	 * count */
	__u16 hv_max, hv_aux, aux_name, aux_name_count;
	/* HEK: length (I32), characters */
	__u16 hek_len, hek_key;
	__u8 type_mask, type_sub, type_eval, si_main; /* CXTYPEMASK, CXt_SUB, CXt_EVAL, PERLSI_MAIN */
	__u32 cvf_named, svf_ook, svf_rok, svf_pok;
	/* HE (a hash entry): next, key HEK, value SV */
	__u16 he_next, he_hek, he_val;
};

struct perlproc_range {
	__u64 lo, hi;
};

#define PERLPROC_MAX_RUNOPS 2 /* Perl_runops_standard, Perl_runops_debug */

/* A process running Perl. */
struct perlproc {
	struct perlproc_layout layout;
	char version[16]; /* "5.36" */
	__u64 curinterp;  /* address of PL_curinterp (the main interpreter) */
	/* how far below a thread's thread pointer its interpreter pointer
	 * (PL_current_context, static TLS of the executable) lies; 0 unknown */
	__u64 tls_interp;
	/* the runops loops: a native frame there runs Perl code */
	struct perlproc_range runops[PERLPROC_MAX_RUNOPS];
	__u32 nrunops;
};

/* Find out whether process @pid (seen from @proc_root, NULL = "/proc")
 * runs Perl, from its snapshot @snap (NULL: read /proc/PID/maps). 0 and
 * *@out filled, the layout checked on the live interpreter; -EAGAIN Perl,
 * but its interpreter is not constructed yet (look again later); -ENOENT
 * not Perl; -ENOTSUP a Perl whose version profcap has no layout for, or
 * whose interpreter does not read as the layout says (logged once); other
 * -errno when the process or its files could not be read. */
int perlproc__locate(const char *proc_root, int pid, const struct procsnap *snap,
		     struct perlproc *out);

/* The layout of Perl @major.@minor, NULL when profcap has none. Pure. */
const struct perlproc_layout *perlproc__layout(unsigned major, unsigned minor);

/* "X.Y" from a file name libperl.so.X.Y[.Z] or perlX.Y[.Z]: 0 and the
 * numbers, -ENOENT when the name says no version. Pure. */
int perlproc__name_version(const char *name, unsigned *major, unsigned *minor);

/* Whether @patchlevel (the characters of PL_patchlevel, NUL-terminated)
 * is version @major.@minor ("v5.36.0"). Pure. */
bool perlproc__patchlevel_is(const char *patchlevel, unsigned major, unsigned minor);

/* Check @pp's layout on process @pid's live interpreter: 0 when its
 * PL_patchlevel reads as the version, -EAGAIN when no interpreter is
 * constructed yet, -ENOTSUP when it reads otherwise, -errno (-ESRCH gone). */
int perlproc__check_live(const char *proc_root, int pid, const struct perlproc *pp);

/* The distance below the thread pointer of a variable at @value in the
 * TLS segment @tls (PT_TLS) of the executable on x86-64 (its static block
 * is the first, ending at the thread pointer): 0 when the segment's
 * alignment does not allow saying. Pure. */
__u64 perlproc__tls_below(const Elf64_Phdr *tls, __u64 value);

/* Whether @pc runs in one of @pp's runops loops. */
bool perlproc__in_runops(const struct perlproc *pp, __u64 pc);

#endif
