/* privs.h - what profcap may see with the privileges it runs with, and what
 * a missing one costs, in words an operator can act on.
 *
 * Sampling itself needs CAP_BPF + CAP_PERFMON (collect/sampler.h checks
 * that). Beyond it:
 *   - kernel symbols: /proc/kallsyms shows addresses when
 *     kernel.kptr_restrict is 0 and kernel.perf_event_paranoid <= 1, or
 *     when kptr_restrict <= 1 and the reader has CAP_SYSLOG;
 *   - processes of other users: their /proc/PID/maps and /proc/PID/root
 *     need CAP_SYS_PTRACE (without it they get no symbols and no table
 *     unwinding), their files that are not world-readable need
 *     CAP_DAC_READ_SEARCH (or CAP_DAC_OVERRIDE);
 *   - /proc/PID/map_files (deleted or replaced binaries) needs CAP_SYS_ADMIN
 *     or CAP_CHECKPOINT_RESTORE.
 * The decisions are pure functions of struct privs, so they are unit tested
 * without changing the test's own privileges.
 */
#ifndef PROFCAP_PRIVS_H
#define PROFCAP_PRIVS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Capability numbers (linux/capability.h), for privs.eff. */
#define PRIVS_CAP_DAC_OVERRIDE 1
#define PRIVS_CAP_DAC_READ_SEARCH 2
#define PRIVS_CAP_SYS_PTRACE 19
#define PRIVS_CAP_SYS_ADMIN 21
#define PRIVS_CAP_SYSLOG 34
#define PRIVS_CAP_PERFMON 38
#define PRIVS_CAP_BPF 39
#define PRIVS_CAP_CHECKPOINT_RESTORE 40

struct privs {
	__u64 eff;	   /* effective capability set (bit N = capability N) */
	unsigned int euid; /* effective uid */
	int kptr_restrict; /* kernel.kptr_restrict, -1 unknown */
	int perf_paranoid; /* kernel.perf_event_paranoid, -99 unknown */
};

/* This process's effective capabilities (capget) and uid, and the two
 * sysctls read under @proc_root ("/proc"). 0, or -errno of capget (the
 * sysctls stay unknown when unreadable). */
int privs__read(const char *proc_root, struct privs *p);

bool privs__has(const struct privs *p, int cap);

/* Why /proc/kallsyms shows zero addresses to @p, with what to do, into
 * @msg (one clause, no trailing period). */
void privs__kallsyms_hidden(const struct privs *p, char *msg, size_t len);

/* When @p lacks what other users' processes need, one warning into @msg
 * naming each missing capability and its cost, and true; false (and @msg
 * empty) when nothing is missing. */
bool privs__foreign_cost(const struct privs *p, char *msg, size_t len);

#endif
