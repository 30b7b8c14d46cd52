/* perfmap.h - names of JIT-compiled code from perf map files.
 *
 * JIT runtimes (node --perf-basic-prof, Java perf-map agents, python -X perf,
 * .NET, BEAM) append one line per code blob to /tmp/perf-<pid>.map:
 * "START SIZE NAME", START and SIZE in hex (an optional 0x is accepted), NAME
 * to the end of the line. Code is rewritten in place, so a later line wins
 * over earlier ones wherever their ranges overlap: the table holds flattened,
 * non-overlapping segments, each naming the newest line that covers it.
 *
 * The file grows while the process runs. perfmap__update_fd() reads only what
 * was appended since the last call (complete lines; a half-written last line
 * waits for the next call) and overlays it on the table. A file that shrank
 * or was replaced (another inode) is read again from the start.
 *
 * Bounded: PERFMAP_MAX_BYTES bytes read per table over its lifetime
 * (re-reads included; names are never freed before the table, so they
 * stay valid even across a re-read),
 * PERFMAP_MAX_LINE bytes per line (longer lines are skipped), at most
 * PERFMAP_MAX_SEGMENTS segments. Past a cap the table stops growing and says
 * so (perfmap__stats().capped); what it holds stays valid. Lines that do not
 * parse are skipped and counted. Names are stored as valid UTF-8: invalid
 * bytes and control characters become '?'.
 *
 * perfmap__open() opens a process's map file through its own root directory
 * without letting the process's file system redirect the open elsewhere.
 */
#ifndef PROFCAP_PERFMAP_H
#define PROFCAP_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define PERFMAP_MAX_BYTES (128u << 20)
#define PERFMAP_MAX_LINE 4096
#define PERFMAP_MAX_SEGMENTS (2u << 20)

/* One named address range [start, end). */
struct perfmap_sym {
	__u64 start;
	__u64 end;
	const char *name; /* owned by the table, never freed before it */
};

struct perfmap_stats {
	__u64 lines;	 /* lines parsed into entries */
	__u64 bad_lines; /* lines skipped: malformed, empty range, too long */
	__u64 bytes;	 /* bytes consumed over the table's life */
	__u64 segments;	 /* flattened segments held now */
	__u64 rereads;	 /* restarts from offset 0 (file shrank or was replaced) */
	bool capped;	 /* a cap was reached: later lines are ignored */
};

struct perfmap;

/* An empty table. NULL on allocation failure. Free with perfmap__free(). */
struct perfmap *perfmap__new(void);

/* Same, with lower caps (bytes read, segments held), e.g. for tests. The
 * PERFMAP_MAX_* values still bound them. */
struct perfmap *perfmap__new_limited(__u64 max_bytes, size_t max_segments);

/* Free @m and every name it handed out. Accepts NULL. */
void perfmap__free(struct perfmap *m);

/* Parse the complete lines of @text[0, @len) as newer than everything
 * already in @m and overlay them. *@consumed gets the bytes used: up to and
 * including the last newline, so a trailing partial line is left for the
 * caller to pass again with more text (a partial line longer than
 * PERFMAP_MAX_LINE is consumed and skipped up to its newline). Returns 0,
 * -E2BIG when the segment cap was reached (@m keeps what it held before this
 * text, or this text's first lines when those alone reached the cap, and
 * ignores all later text; *@consumed covers everything), or -ENOMEM. */
int perfmap__add_text(struct perfmap *m, const char *text, size_t len, size_t *consumed);

/* Read what was appended to the map file open at @fd (a regular file; the
 * caller keeps the fd) since the last update and add it. Restarts from the
 * beginning if the file is not the one read before (device, inode) or is
 * shorter than the offset reached. Returns 0, -E2BIG (capped, see
 * perfmap__add_text), -ENOMEM or the -errno of fstat/pread. */
int perfmap__update_fd(struct perfmap *m, int fd);

/* The segment containing @addr, or NULL. Borrowed, valid until the next
 * update of @m (the name stays valid until perfmap__free()). */
const struct perfmap_sym *perfmap__lookup(const struct perfmap *m, __u64 addr);

/* Number of segments and segment @i (< count), by ascending start. */
size_t perfmap__count(const struct perfmap *m);
const struct perfmap_sym *perfmap__sym(const struct perfmap *m, size_t i);

void perfmap__stats(const struct perfmap *m, struct perfmap_stats *st);

/* Open "tmp/perf-<@nspid>.map" under directory @root (e.g. "/proc/42/root",
 * the process's own root, so containers and private /tmp mounts work), for
 * reading, into *@fd (the caller closes it). Symlinks are resolved inside
 * @root (openat2 RESOLVE_IN_ROOT, no magic links); where openat2 is missing
 * "tmp" must be a real directory. The file itself must not be a symlink,
 * must be a regular file, and must be owned by root or by @uid (the
 * process's uid), as perf requires. Never blocks on a FIFO. Returns 0,
 * -ENOENT (no map: the normal case), -ELOOP (a symlink), -EPERM (wrong
 * owner), -EINVAL (not a regular file) or another -errno. */
int perfmap__open(const char *root, int nspid, unsigned int uid, int *fd);

#endif
