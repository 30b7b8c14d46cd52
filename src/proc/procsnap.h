/* procsnap.h - what profcap must know of a process before it exits: its
 * mappings, executable, name, command line and container, read in one go.
 *
 * A process is announced by its first sample; a short-lived one (a
 * compiler, a health check) may be gone before the thread that symbolizes
 * gets to it, behind a drain or the parse of a new binary. The sampler's
 * notice thread reads this snapshot at once; the symbolizer uses it where
 * /proc no longer answers. Bounded: PROCMAPS_MAX_FILE bytes of maps,
 * PROCSNAP_MAX_CMDLINE of command line.
 */
#ifndef PROFCAP_PROCSNAP_H
#define PROFCAP_PROCSNAP_H

#include <stddef.h>
#include <linux/types.h>

#include "proc/container.h"

#define PROCSNAP_MAX_CMDLINE 4096

struct procmaps;

struct procsnap {
	int pid;
	__u64 at_ns;	       /* CLOCK_MONOTONIC when read */
	struct procmaps *maps; /* its mappings */
	char *exe;	       /* /proc/PID/exe's target (" (deleted)" kept), NULL if unreadable */
	char comm[16];	       /* "" if unreadable */
	char *cmdline; /* raw: arguments separated by NULs, @cmdline_len bytes (NULL: none) */
	size_t cmdline_len;
	/* container__id_of(): "" when not in a container (or gone by then) */
	char container_id[CONTAINER_ID_LEN + 1];
	/* start time, as field 22 of PID/stat, when the reader was told it
	 * (the sampler's notice); 0 = unknown (procsnap__read() leaves 0) */
	__u64 start;
	int refs; /* procsnap__get() / procsnap__free() (atomic) */
	/* maps, exe and comm from the kernel's records of the process
	 * (procsnap__read_with_maps()): as true later as when taken */
	bool lasting;
};

/* Read process @pid under @proc_root ("/proc"). *@out gets a snapshot owned
 * by the caller (procsnap__free()). 0; -ESRCH when it is gone (its maps
 * unreadable); -ENOMEM. */
int procsnap__read(const char *proc_root, int pid, struct procsnap **out);

/* The containers of the last few sets of cgroups seen, for a caller that
 * knows each process's (the sampler's notices): a compile loop's hundreds
 * of processes share one, and its container is read once, not once per
 * process (a read of /proc/PID/cgroup each). A set is the
 * process's css_set (its cgroup in every hierarchy, as the kernel shares
 * them) with its cgroup v2 ID: the same pair, the same cgroup file. Where
 * the css_set is unknown, the v2 ID alone, for processes whose file lists
 * the v2 hierarchy alone. A css_set's address may be reused once it is
 * freed: entries are trusted for PROCSNAP_CGROUP_TTL_NS. Zero it to start;
 * used by one thread. */
#define PROCSNAP_CGROUPS 16
#define PROCSNAP_CGROUP_TTL_NS 2000000000ull
struct procsnap_cgroups {
	struct {
		__u64 cgroup, css; /* cgroup 0: empty */
		__u64 at_ns;	   /* CLOCK_MONOTONIC when read */
		char container_id[CONTAINER_ID_LEN + 1];
	} e[PROCSNAP_CGROUPS];
	unsigned int next; /* the slot replaced next */
	__u64 hits;
};

/* procsnap__read() of @pid, whose cgroup v2 ID is @cgroup and css_set @css
 * (0: unknown): its container from @cache when known there, else read and,
 * when it may be, kept there. Same returns. */
int procsnap__read_cached(const char *proc_root, int pid, __u64 cgroup, __u64 css,
			  struct procsnap_cgroups *cache, struct procsnap **out);

/* What is already known of a process (from the kernel's records and the
 * sampler's notice) when its snapshot is taken: not read again. */
struct procsnap_given {
	struct procmaps *maps; /* its mappings (proc/mapev.h), taken over; NULL: read */
	const char *comm;      /* its name; NULL or "": read */
	const char *exe;       /* its program, as /proc/PID/exe reads; NULL or "": read */
	const char *cmdline;   /* its command line, @cmdline_len bytes; NULL: read */
	size_t cmdline_len;
};

/* procsnap__read_cached() with what @g gives (NULL: nothing) not read
 * again. @g->maps is taken over whatever happens. With maps given, a
 * process gone by then still has its snapshot (with what was given), and
 * one with maps, name and program given is lasting. Same returns (-ESRCH
 * only with the maps read). */
int procsnap__read_given(const char *proc_root, int pid, __u64 cgroup, __u64 css,
			 struct procsnap_cgroups *cache, const struct procsnap_given *g,
			 struct procsnap **out);

/* Another reference to @p, for another thread (a snapshot is read-only
 * once taken): @p, freed by the last procsnap__free(). Accepts NULL. */
struct procsnap *procsnap__get(struct procsnap *p);

/* Drop a reference to @p: the last one frees it. Accepts NULL. */
void procsnap__free(struct procsnap *p);

/* The mappings of process @pid: @snap's when it is a snapshot of @pid
 * with maps, else read from @proc_root ("/proc" when NULL). *@maps points
 * at them, *@own gets what the caller frees (procmaps__free(); NULL when
 * they are @snap's). With @exe, *@exe gets a copy of the path of its
 * executable (@snap's, else /proc/PID/exe's target; NULL when unknown),
 * which the caller frees. 0 or the -errno of reading the maps. */
int procsnap__maps_of(const char *proc_root, int pid, const struct procsnap *snap,
		      const struct procmaps **maps, struct procmaps **own, char **exe);

/* Call @fn with process @pid's maps and executable path as
 * procsnap__maps_of() gets them (@proc_root NULL: /proc, passed on as
 * @root), then free what was read: @fn's result, or the -errno of reading
 * the maps. */
typedef int (*procsnap_maps_fn)(const char *root, int pid, const struct procmaps *maps,
				const char *exe, void *ctx);
int procsnap__with_maps(const char *proc_root, int pid, const struct procsnap *snap,
			procsnap_maps_fn fn, void *ctx);

#endif
