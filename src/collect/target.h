/* target.h - what to profile: the targeting flags shared by `capture` and
 * `agent` (-p, --tid, --comm, --cgroup, --container), their resolution into
 * BPF filters (cgroup v2 directories opened, container IDs found through
 * /proc), and the check that a filter matches something.
 *
 * Filters combine as a conjunction: a sample is kept when it passes every
 * kind of filter given; within one kind (several PIDs, several names) any
 * entry matches. --container is a --cgroup on the container's cgroup.
 */
#ifndef PROFCAP_TARGET_H
#define PROFCAP_TARGET_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "cpu_sampler.h"
#include "collect/record.h"

#define TARGET_MAX_PIDS 1024
#define TARGET_MAX_COMMS 64

/* Targeting flags as parsed; strings are borrowed from argv. */
struct target_opts {
	int pids[TARGET_MAX_PIDS];
	size_t npids;
	int tids[TARGET_MAX_PIDS];
	size_t ntids;
	const char *comms[TARGET_MAX_COMMS];
	size_t ncomms;
	const char *cgroups[PROFCAP_MAX_CGROUPS];
	size_t ncgroups;
	const char *containers[PROFCAP_MAX_CGROUPS];
	size_t ncontainers;
};

enum {
	TARGET_OPT_TID = 0x1000,
	TARGET_OPT_COMM,
	TARGET_OPT_CGROUP,
	TARGET_OPT_CONTAINER,
};

/* clang-format off */
#define TARGET_LONGOPTS                                                   \
	{ "pid", required_argument, NULL, 'p' },                          \
	{ "tid", required_argument, NULL, TARGET_OPT_TID },               \
	{ "comm", required_argument, NULL, TARGET_OPT_COMM },             \
	{ "cgroup", required_argument, NULL, TARGET_OPT_CGROUP },         \
	{ "container", required_argument, NULL, TARGET_OPT_CONTAINER }
/* clang-format on */

/* Help text of the targeting flags, for the commands' usage. */
extern const char target__usage[];

/* Take one targeting flag (getopt code @c, value @arg) into @t; @cmd names
 * the command in error lines. 0, -ENOENT when @c is not a targeting flag,
 * -EINVAL after printing one usage error line. */
int target__flag(struct target_opts *t, int c, const char *arg, const char *cmd);

/* True when any filter is set. */
bool target__any(const struct target_opts *t);

/* Filters ready for the sampler. Owns the cgroup directory descriptors. */
struct target {
	const struct target_opts *o;
	int cgroup_fds[PROFCAP_MAX_CGROUPS];
	char *cgroup_paths[PROFCAP_MAX_CGROUPS]; /* as opened, for messages */
	size_t ncgroups;
	int *pids; /* o->pids plus the processes of cgroup-less containers */
	size_t npids;
	bool follow_forks;
};

/* Resolve @o (borrowed; must outlive @t) against the running system under
 * @proc_root: PIDs must exist (a thread given as a PID stands for its
 * process, with a note), cgroups are opened, containers are found.
 * Returns 0, or -errno after printing one error line that says what to do
 * (the caller exits 2). Free with target__release() either way. */
int target__resolve(struct target *t, const struct target_opts *o, const char *proc_root);

/* Add a process to keep (e.g. a command profcap started) and ask for its
 * children to be followed. 0 or -ENOMEM. */
int target__add_followed_pid(struct target *t, int pid);

/* Point @so's filter fields at @t (borrowed). */
void target__sampler_opts(const struct target *t, struct sampler_opts *so);

/* When a filtered capture has kept no sample after its first second: write
 * into @msg (@len bytes) why, looking at what runs under @proc_root now: no
 * matching process at all, or matching processes that used no CPU. Returns
 * true when there is nothing matching at all. */
bool target__explain_empty(const struct target *t, const char *proc_root, char *msg, size_t len);

/* Warn once (one line) when profcap lacks what processes of other users
 * need (proc/privs.h) and the targets may include such processes: a
 * system-wide capture, --tid/--comm/--cgroup/--container, or a -p process
 * owned by another uid. */
void target__warn_privileges(const struct target *t, const char *proc_root);

void target__release(struct target *t);

#endif
