/* forkhook.h - how the sampler sees new processes (sched_process_fork) on
 * this host, without asking anybody to mount anything.
 *
 * Three hooks, tried in this order:
 *   raw_tp      raw_tracepoint/sched_process_fork: needs kernel BTF
 *               (/sys/kernel/btf/vmlinux) for the offset of task_struct.pid
 *   tp_btf      tp_btf/sched_process_fork: the same, and Linux >= 5.5; second
 *               because libbpf then parses the whole kernel BTF again for
 *               the attach point
 *               while the program does exactly what the raw one does
 *   tracepoint  tracepoint/sched/sched_process_fork: needs the tracepoint's
 *               format and id from tracefs; when tracefs is not mounted,
 *               profcap mounts it (as perf does, needs CAP_SYS_ADMIN) and
 *               unmounts it again once the program is attached
 * The BTF hooks read the child's pid from the task pointer at the offset of
 * task_struct.pid found in the kernel's BTF; the tracepoint reads child_pid
 * from its record at the offset its format file gives.
 */
#ifndef PROFCAP_FORKHOOK_H
#define PROFCAP_FORKHOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum forkhook_kind {
	FORKHOOK_RAW_TP = 0,
	FORKHOOK_TP_BTF,
	FORKHOOK_TRACEPOINT,
	FORKHOOK__COUNT,
};

/* Environment variable naming the one hook to use ("raw_tp", "tp_btf",
 * "tracepoint"), with no fallback: for tests and troubleshooting. */
#define FORKHOOK_ENV "PROFCAP_FORK_HOOK"

struct forkhook {
	enum forkhook_kind kind;
	__u32 off;	  /* task_struct.pid (BTF hooks) or child_pid in the record */
	char mounted[64]; /* where prepare mounted tracefs/debugfs; "" = nothing */
};

/* "tp_btf", "raw_tp", "tracepoint". */
const char *forkhook__name(enum forkhook_kind kind);

/* @name as a hook into @kind: 0, or -EINVAL for an unknown name. */
int forkhook__parse(const char *name, enum forkhook_kind *kind);

/* Byte offset of task_struct.pid in the raw BTF blob @data of @len bytes
 * (as /sys/kernel/btf/vmlinux holds it), looking through anonymous
 * struct/union members (randomized layouts). 0, -ENOEXEC for a malformed
 * blob, -ENOENT when there is no task_struct or no pid member, -EOPNOTSUPP
 * for an unknown type kind or a pid that is not a 4-byte int on a byte
 * boundary. */
int forkhook__btf_pid_offset(const void *data, size_t len, __u32 *off);

/* Offset of child_pid from the text of the sched_process_fork format file
 * into @off. 0, -ENOENT without a child_pid field, -EOPNOTSUPP when the
 * field is not the 4-byte pid_t at offset 20 or 44 the BPF program knows. */
int forkhook__format_child_offset(const char *text, __u32 *off);

/* Make hook @kind usable on this host: find its offset in the kernel BTF
 * at @btf_path (NULL = /sys/kernel/btf/vmlinux), or read the tracepoint
 * format, mounting tracefs first when it is nowhere mounted. Fills @h;
 * release it with forkhook__release(). 0, or -errno with @why (a static
 * string) saying what was missing. */
int forkhook__prepare(struct forkhook *h, enum forkhook_kind kind, const char *btf_path,
		      const char **why);

/* Unmount what forkhook__prepare() mounted (once the tracepoint is attached
 * it no longer needs tracefs). Accepts a zeroed @h. */
void forkhook__release(struct forkhook *h);

#endif
