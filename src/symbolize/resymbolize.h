/* resymbolize.h - symbolize a capture later, elsewhere: name what a profile
 * left unnamed and add source lines and inlined frames, from files found by
 * the mappings' GNU build-ids.
 *
 * A capture taken where no debug files were installed keeps each native
 * frame's address, its mapping (start, limit, file offset, path) and the
 * mapping's build-id. For each such mapping the ELF file is looked for, in
 * order, at
 *   DIR/.build-id/xx/rest.debug   for each @dirs, then /usr/lib/debug
 *   DIR/PATH                       for each @dirs (the mapping's path under
 *                                  a copy of the host's root, as perf --symfs)
 *   PATH                           the mapping's own path on this machine
 * and used only when its build-id equals the mapping's (a mapping without a
 * build-id is never matched: another version of a file would give wrong
 * names). Frames of a matched file get names from its symbol table and
 * lines from its DWARF (dwarf.h); frames it cannot name keep what they had.
 * Pure file reading; no network.
 */
#ifndef PROFCAP_RESYMBOLIZE_H
#define PROFCAP_RESYMBOLIZE_H

#include <stddef.h>
#include <linux/types.h>

#include "model/profile.h"

struct resymbolize_stats {
	__u64 mappings;	    /* mappings with a build-id */
	__u64 files_found;  /* of those, whose file was found and matched */
	__u64 frames_named; /* frames that had no name and got one */
	__u64 frames_lined; /* frames that got source lines */
};

/* Build *@out (the caller's) from @p with names and lines added as above.
 * @dirs (@ndirs entries, may be 0) are extra debug directories. *@st (may be
 * NULL) gets counts. 0, -ENOMEM or -E2BIG (*@out NULL). */
int resymbolize__profile(const struct profile *p, const char *const *dirs, size_t ndirs,
			 struct profile **out, struct resymbolize_stats *st);

#endif
