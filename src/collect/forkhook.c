#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "util/log.h"
#include "collect/forkhook.h"

#define KERNEL_BTF "/sys/kernel/btf/vmlinux"
#define TRACEFS_DIR "/sys/kernel/tracing"
#define DEBUGFS_DIR "/sys/kernel/debug"
#define FORK_FORMAT "/events/sched/sched_process_fork/format"

static const char *const names[FORKHOOK__COUNT] = {
	[FORKHOOK_TP_BTF] = "tp_btf",
	[FORKHOOK_RAW_TP] = "raw_tp",
	[FORKHOOK_TRACEPOINT] = "tracepoint",
};

const char *forkhook__name(enum forkhook_kind kind)
{
	return kind < FORKHOOK__COUNT ? names[kind] : "?";
}

int forkhook__parse(const char *name, enum forkhook_kind *kind)
{
	int k;

	for (k = 0; k < FORKHOOK__COUNT; k++) {
		if (!strcmp(name, names[k])) {
			*kind = (enum forkhook_kind)k;
			return 0;
		}
	}
	return -EINVAL;
}

/* Bit offset of member @name in struct/union @id, searching anonymous
 * members too; -1 when absent. @depth bounds malformed BTF. */
static long member_bits(const struct btf *btf, __u32 id, const char *name, __u32 *size, int depth)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m;
	__u16 i, n;

	if (!t || depth > 8 || !(btf_is_struct(t) || btf_is_union(t)))
		return -1;
	m = btf_members(t);
	n = btf_vlen(t);
	for (i = 0; i < n; i++, m++) {
		const char *mname = btf__name_by_offset(btf, m->name_off);
		int rid = btf__resolve_type(btf, m->type);
		long inner;

		if (mname && *mname) {
			if (strcmp(mname, name))
				continue;
			if (btf_member_bitfield_size(t, i))
				return -2; /* a bit field: not a pid */
			*size = (__u32)btf__resolve_size(btf, m->type);
			return (long)btf_member_bit_offset(t, i);
		}
		if (rid < 0)
			continue;
		inner = member_bits(btf, (__u32)rid, name, size, depth + 1);
		if (inner == -2)
			return -2;
		if (inner >= 0)
			return (long)btf_member_bit_offset(t, i) + inner;
	}
	return -1;
}

int forkhook__btf_pid_offset(const struct btf *btf, __u32 *off)
{
	__u32 size = 0;
	__s32 id;
	long bits;

	id = btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT);
	if (id < 0)
		return -ENOENT;
	bits = member_bits(btf, (__u32)id, "pid", &size, 0);
	if (bits == -1)
		return -ENOENT;
	if (bits < 0 || bits % 8 || size != 4)
		return -EOPNOTSUPP;
	*off = (__u32)(bits / 8);
	return 0;
}

int forkhook__format_child_offset(const char *text, __u32 *off)
{
	const char *p;
	unsigned int o, sz;

	/* "\tfield:pid_t child_pid;\toffset:44;\tsize:4;\tsigned:1;" */
	for (p = strstr(text, " child_pid;"); p; p = strstr(p + 1, " child_pid;")) {
		const char *eol = strchr(p, '\n');
		const char *q = strstr(p, "offset:");

		if (!q || (eol && q > eol))
			continue;
		if (sscanf(q, "offset:%u;%*[ \t]size:%u;", &o, &sz) != 2)
			return -EOPNOTSUPP;
		if (sz != 4 || (o != 20 && o != 44))
			return -EOPNOTSUPP;
		*off = o;
		return 0;
	}
	return -ENOENT;
}

static int prepare_btf(struct forkhook *h, const char *btf_path, const char **why)
{
	struct btf *btf;
	int err;

	btf = btf__parse(btf_path ? btf_path : KERNEL_BTF, NULL);
	if (!btf) {
		err = -errno;
		*why = err == -ENOENT ? "no kernel BTF (" KERNEL_BTF ")"
				      : "the kernel BTF (" KERNEL_BTF ") is unreadable";
		return err;
	}
	err = forkhook__btf_pid_offset(btf, &h->off);
	if (err)
		*why = "the kernel BTF has no usable task_struct.pid";
	btf__free(btf);
	return err;
}

/* The format file's text into @buf; 0 or -errno of the open/read. */
static int read_format(const char *dir, char *buf, size_t len)
{
	char path[128];
	ssize_t n, got = 0;
	int fd;

	snprintf(path, sizeof(path), "%s%s", dir, FORK_FORMAT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1 && (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got > 0 ? 0 : -EIO;
}

/* Mount tracefs where libbpf and the kernel expect it (as perf does):
 * /sys/kernel/tracing, or, on kernels without that directory, debugfs at
 * /sys/kernel/debug, whose tracing/ directory then mounts tracefs. */
static int mount_tracefs(struct forkhook *h, const char **dir)
{
	struct stat st;

	if (!stat(TRACEFS_DIR, &st)) {
		if (mount("nodev", TRACEFS_DIR, "tracefs", 0, NULL))
			return -errno;
		snprintf(h->mounted, sizeof(h->mounted), "%s", TRACEFS_DIR);
		*dir = TRACEFS_DIR;
		return 0;
	}
	if (mount("nodev", DEBUGFS_DIR, "debugfs", 0, NULL))
		return -errno;
	snprintf(h->mounted, sizeof(h->mounted), "%s", DEBUGFS_DIR);
	*dir = DEBUGFS_DIR "/tracing";
	return 0;
}

static int prepare_tracepoint(struct forkhook *h, const char **why)
{
	static const char *const dirs[] = {TRACEFS_DIR, DEBUGFS_DIR "/tracing"};
	const char *dir = NULL;
	char text[4096];
	size_t i;
	int err = -ENOENT;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && err; i++)
		err = read_format(dirs[i], text, sizeof(text));
	if (err) {
		err = mount_tracefs(h, &dir);
		if (err) {
			*why = "tracefs is not mounted and mounting it failed";
			return err;
		}
		pr_debug("mounted %s on %s to read the fork tracepoint (unmounted once attached)",
			 strcmp(h->mounted, TRACEFS_DIR) ? "debugfs" : "tracefs", h->mounted);
		err = read_format(dir, text, sizeof(text));
		if (err) {
			*why = "the sched_process_fork tracepoint format is not readable";
			forkhook__release(h);
			return err;
		}
	}
	err = forkhook__format_child_offset(text, &h->off);
	if (err) {
		*why = "the sched_process_fork tracepoint format is unknown";
		forkhook__release(h);
	}
	return err;
}

int forkhook__prepare(struct forkhook *h, enum forkhook_kind kind, const char *btf_path,
		      const char **why)
{
	memset(h, 0, sizeof(*h));
	h->kind = kind;
	*why = "";
	switch (kind) {
	case FORKHOOK_TP_BTF:
	case FORKHOOK_RAW_TP:
		return prepare_btf(h, btf_path, why);
	case FORKHOOK_TRACEPOINT:
		return prepare_tracepoint(h, why);
	default:
		*why = "unknown hook";
		return -EINVAL;
	}
}

void forkhook__release(struct forkhook *h)
{
	if (!h || !h->mounted[0])
		return;
	/* Lazily: libbpf may still hold a directory of it open. */
	umount2(h->mounted, MNT_DETACH);
	h->mounted[0] = '\0';
}
