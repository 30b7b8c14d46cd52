#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/btf.h>
#include <bpf/bpf.h>

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

/* A raw BTF blob (uapi linux/btf.h layout), scanned in place: no index
 * of all of the kernel's types, as libbpf's parse builds. */
struct raw_btf {
	const __u8 *types; /* type section */
	const char *strs;  /* string section */
	__u32 types_len, strs_len;
	__u32 *at; /* offset in types of type id i (1-based), ntypes + 1 entries */
	__u32 ntypes;
};

/* Bytes that follow a struct btf_type of @kind with @vlen entries; -1 for a
 * kind this code does not know. */
static long kind_extra(__u32 kind, __u32 vlen)
{
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_ARRAY:
		return 12;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_DATASEC:
	case BTF_KIND_ENUM64:
		return 12l * vlen;
	case BTF_KIND_ENUM:
	case BTF_KIND_FUNC_PROTO:
		return 8l * vlen;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	default:
		return -1;
	}
}

static int raw_open(struct raw_btf *r, const void *data, size_t len)
{
	const struct btf_header *h = data;
	__u32 off, cap = 0, *at;
	long extra;

	memset(r, 0, sizeof(*r));
	if (len < sizeof(*h) || h->magic != BTF_MAGIC || h->hdr_len > len ||
	    h->type_off > len - h->hdr_len || h->type_len > len - h->hdr_len - h->type_off ||
	    h->str_off > len - h->hdr_len || h->str_len > len - h->hdr_len - h->str_off ||
	    !h->str_len)
		return -ENOEXEC;
	r->types = (const __u8 *)data + h->hdr_len + h->type_off;
	r->types_len = h->type_len;
	r->strs = (const char *)data + h->hdr_len + h->str_off;
	r->strs_len = h->str_len;
	if (r->strs[r->strs_len - 1])
		return -ENOEXEC;
	for (off = 0; off < r->types_len;) {
		const struct btf_type *t = (const void *)(r->types + off);

		if (r->types_len - off < sizeof(*t))
			return -ENOEXEC;
		if (r->ntypes + 2 > cap) {
			cap = cap ? cap * 2 : 65536;
			at = realloc(r->at, cap * sizeof(*at));
			if (!at)
				return -ENOMEM;
			r->at = at;
		}
		r->at[++r->ntypes] = off;
		extra = kind_extra(BTF_INFO_KIND(t->info), BTF_INFO_VLEN(t->info));
		if (extra < 0 || (__u64)extra > r->types_len - off - sizeof(*t))
			return -EOPNOTSUPP;
		off += (__u32)(sizeof(*t) + (size_t)extra);
	}
	return 0;
}

static const struct btf_type *raw_type(const struct raw_btf *r, __u32 id)
{
	return id && id <= r->ntypes ? (const void *)(r->types + r->at[id]) : NULL;
}

static const char *raw_name(const struct raw_btf *r, __u32 off)
{
	return off < r->strs_len ? r->strs + off : "";
}

/* @id with typedefs and qualifiers peeled off; NULL for void or bad ids. */
static const struct btf_type *raw_resolve(const struct raw_btf *r, __u32 id)
{
	const struct btf_type *t = raw_type(r, id);
	int depth = 0;

	while (t && depth++ < 32) {
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			t = raw_type(r, t->type);
			break;
		default:
			return t;
		}
	}
	return NULL;
}

/* Bit offset of member @name in struct/union @t, searching anonymous
 * members too: >= 0, -1 when absent, -2 when a bit field or not 4 bytes. */
static long member_bits(const struct raw_btf *r, const struct btf_type *t, const char *name,
			int depth)
{
	const struct btf_member *m = (const void *)(t + 1);
	bool kflag = BTF_INFO_KFLAG(t->info);
	__u32 i, n = BTF_INFO_VLEN(t->info);

	if (depth > 8)
		return -1;
	for (i = 0; i < n; i++, m++) {
		const struct btf_type *mt = raw_resolve(r, m->type);
		__u32 bits = kflag ? BTF_MEMBER_BIT_OFFSET(m->offset) : m->offset;
		long inner;

		if (m->name_off) {
			if (strcmp(raw_name(r, m->name_off), name))
				continue;
			if ((kflag && BTF_MEMBER_BITFIELD_SIZE(m->offset)) || !mt ||
			    BTF_INFO_KIND(mt->info) != BTF_KIND_INT || mt->size != 4)
				return -2;
			return (long)bits;
		}
		if (!mt || (BTF_INFO_KIND(mt->info) != BTF_KIND_STRUCT &&
			    BTF_INFO_KIND(mt->info) != BTF_KIND_UNION))
			continue;
		inner = member_bits(r, mt, name, depth + 1);
		if (inner != -1)
			return inner < 0 ? inner : (long)bits + inner;
	}
	return -1;
}

int forkhook__btf_pid_offset(const void *data, size_t len, __u32 *off)
{
	struct raw_btf r;
	long bits = -1;
	__u32 id;
	int err;

	err = raw_open(&r, data, len);
	for (id = 1; !err && id <= r.ntypes && bits == -1; id++) {
		const struct btf_type *t = raw_type(&r, id);

		if (BTF_INFO_KIND(t->info) == BTF_KIND_STRUCT && BTF_INFO_VLEN(t->info) &&
		    !strcmp(raw_name(&r, t->name_off), "task_struct"))
			bits = member_bits(&r, t, "pid", 0);
	}
	free(r.at);
	if (err)
		return err;
	if (bits == -1)
		return -ENOENT;
	if (bits < 0 || bits % 8)
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

/* The kernel's own BTF copied out in one bpf() call (needs CAP_SYS_ADMIN):
 * sysfs hands it out 4 KiB a read(). */
static int offset_from_bpf(__u32 *off)
{
	struct bpf_btf_info info;
	__u32 id = 0, len;
	char name[16];
	void *buf;
	int fd, err = -ENOENT;

	while (err == -ENOENT && !bpf_btf_get_next_id(id, &id)) {
		fd = bpf_btf_get_fd_by_id(id);
		if (fd < 0)
			return -errno;
		memset(&info, 0, sizeof(info));
		info.name = (__u64)(unsigned long)name;
		info.name_len = sizeof(name);
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.kernel_btf ||
		    strcmp(name, "vmlinux")) {
			close(fd);
			continue;
		}
		/* Populated up front: page faults one by one cost more than
		 * the copy itself in a VM. */
		len = info.btf_size;
		buf = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (buf == MAP_FAILED)
			buf = NULL;
		memset(&info, 0, sizeof(info));
		info.btf = (__u64)(unsigned long)buf;
		info.btf_size = len;
		err = -ENOMEM;
		if (buf) {
			__u32 ilen = sizeof(info);

			err = bpf_obj_get_info_by_fd(fd, &info, &ilen) ? -errno : 0;
			if (!err)
				err = forkhook__btf_pid_offset(buf, info.btf_size, off);
		}
		if (buf)
			munmap(buf, len ? len : 1);
		close(fd);
		if (err == -ENOENT)
			err = -EINVAL; /* found vmlinux: do not look further */
	}
	return err;
}

static int prepare_btf(struct forkhook *h, const char *btf_path, const char **why)
{
	const char *path = btf_path ? btf_path : KERNEL_BTF;
	size_t len = 0, cap = 8u << 20;
	char *buf = NULL, *nb;
	struct stat st;
	void *map;
	ssize_t n;
	int fd, err = 0;

	if (!btf_path && !access(KERNEL_BTF, F_OK) && !offset_from_bpf(&h->off))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		*why = err == -ENOENT ? "no kernel BTF (" KERNEL_BTF ")"
				      : "the kernel BTF (" KERNEL_BTF ") is unreadable";
		return err;
	}
	/* Linux >= 6.16 maps the kernel's BTF directly (no copy); else read
	 * it (4 KiB a read()). */
	if (!fstat(fd, &st) && st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (map != MAP_FAILED) {
			close(fd);
			err = forkhook__btf_pid_offset(map, (size_t)st.st_size, &h->off);
			munmap(map, (size_t)st.st_size);
			if (err)
				*why = "the kernel BTF has no usable task_struct.pid";
			return err;
		}
		if ((size_t)st.st_size > cap)
			cap = (size_t)st.st_size;
	}
	for (;;) {
		if (len == cap || !buf) {
			cap = buf ? cap * 2 : cap;
			nb = cap <= (256u << 20) ? realloc(buf, cap) : NULL;
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	if (!err)
		err = forkhook__btf_pid_offset(buf, len, &h->off);
	if (err)
		*why = "the kernel BTF has no usable task_struct.pid";
	free(buf);
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
