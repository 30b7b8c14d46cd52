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
};

/* Read process @pid under @proc_root ("/proc"). *@out gets a snapshot owned
 * by the caller (procsnap__free()). 0; -ESRCH when it is gone (its maps
 * unreadable); -ENOMEM. */
int procsnap__read(const char *proc_root, int pid, struct procsnap **out);

/* Another reference to @p, for another thread (a snapshot is read-only
 * once taken): @p, freed by the last procsnap__free(). Accepts NULL. */
struct procsnap *procsnap__get(struct procsnap *p);

/* Drop a reference to @p: the last one frees it. Accepts NULL. */
void procsnap__free(struct procsnap *p);

#endif
