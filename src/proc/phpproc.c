/* phpproc.c - PHP interpreters found from outside (see phpproc.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "proc/elfsyms.h"
#include "proc/pfile.h"
#include "proc/phpproc.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/pyproc.h"

/* PHP 8.2, non-ZTS, x86-64: offsetof() against php8.2-dev's headers
 * (Zend/zend_globals.h, zend_compile.h, zend_types.h). */
static const struct phpproc_layout layouts[] = {
	{
		.version = 0x0802,
		.call_top = 1u << 17,
		.eg_current_execute_data = 0x1e8,
		.ex_opline = 0,
		.ex_func = 0x18,
		.ex_call_info = 0x28,
		.ex_prev = 0x30,
		.ex_size = 0x50,
		.fn_name = 0x08,
		.fn_scope = 0x10,
		.op_last = 0x50,
		.op_opcodes = 0x58,
		.op_filename = 0x98,
		.op_line_start = 0xa0,
		.op_line_end = 0xa4,
		.op_size = 0xf8,
		.internal_size = 0x88,
		.zop_size = 32,
		.zop_lineno = 24,
		.str_len = 16,
		.str_val = 24,
		.ce_name = 8,
	},
};

const struct phpproc_layout *phpproc__layout(unsigned major, unsigned minor)
{
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == ((major << 8) | minor))
			return &layouts[i];
	return NULL;
}

static const char *const prefixes[] = {"php-fpm", "php-cgi", "libphp", "php"};

/* The length of the PHP prefix @base starts with, 0 when none. */
static size_t php_prefix(const char *base)
{
	size_t i, n;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		n = strlen(prefixes[i]);
		if (!strncmp(base, prefixes[i], n))
			return n;
	}
	return 0;
}

bool phpproc__is_php_name(const char *base)
{
	size_t n = php_prefix(base);

	if (!n)
		return false;
	/* libphp8.2.so, libphp.so; not libphpx.so.1 of something else */
	if (!strncmp(base, "libphp", 6))
		return strstr(base, ".so") &&
		       (base[n] == '.' || (base[n] >= '0' && base[n] <= '9'));
	/* php, php8.2, php-fpm8.2: a digit or the end after the prefix */
	return !base[n] || (base[n] >= '0' && base[n] <= '9');
}

int phpproc__name_version(const char *base, unsigned *major, unsigned *minor)
{
	size_t n = php_prefix(base);
	unsigned a, b;
	char dot;

	if (!n || !phpproc__is_php_name(base))
		return -ENOENT;
	if (sscanf(base + n, "%2u%c%2u", &a, &dot, &b) != 3 || dot != '.')
		return -ENOENT;
	*major = a;
	*minor = b;
	return 0;
}

int phpproc__find_version(const char *buf, size_t n, char *out, size_t cap, unsigned *major,
			  unsigned *minor)
{
	static const char key[] = "X-Powered-By: PHP/";
	const size_t klen = sizeof(key) - 1;
	const char *p = buf, *end = buf + n, *v;
	unsigned a, b, c;
	size_t len;

	while (n >= klen && (p = memmem(p, (size_t)(end - p), key, klen))) {
		v = p + klen;
		len = 0;
		while (v + len < end && len < 15 &&
		       ((v[len] >= '0' && v[len] <= '9') || v[len] == '.'))
			len++;
		p += klen;
		if (!len || len >= cap)
			continue;
		memcpy(out, v, len);
		out[len] = 0;
		if (sscanf(out, "%u.%u.%u", &a, &b, &c) < 2)
			continue;
		*major = a;
		*minor = b;
		return 0;
	}
	return -ENOENT;
}

bool phpproc__code_reads(const unsigned char *code, size_t n, __u32 off)
{
	size_t i;
	__u32 d;

	/* REX.W 8b /r with mod 10 (disp32), any registers but rsp/rip bases */
	for (i = 0; i + 7 <= n; i++) {
		if ((code[i] & 0xf8) != 0x48 || code[i + 1] != 0x8b ||
		    (code[i + 2] & 0xc0) != 0x80 || (code[i + 2] & 7) == 4)
			continue;
		memcpy(&d, code + i + 3, 4);
		if (d == off)
			return true;
	}
	return false;
}

/* ---- the file ---- */

enum {
	SYM_EG,	    /* executor_globals (non-ZTS) */
	SYM_EG_ZTS, /* executor_globals_offset (ZTS: the globals are per thread) */
	SYM_EXEC,   /* execute_ex */
	SYM_LINENO, /* zend_get_executed_lineno */
	SYM_N
};

static void queries(struct elfsyms_query *q)
{
	const unsigned obj = 1u << STT_OBJECT, fn = 1u << STT_FUNC;

	q[SYM_EG] = (struct elfsyms_query){.name = "executor_globals", .types = obj};
	q[SYM_EG_ZTS] = (struct elfsyms_query){.name = "executor_globals_offset", .types = obj};
	q[SYM_EXEC] = (struct elfsyms_query){.name = "execute_ex", .types = fn};
	q[SYM_LINENO] = (struct elfsyms_query){.name = "zend_get_executed_lineno", .types = fn};
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The mapping of the file that runs PHP: a libphp*.so, else the
 * executable named php*. NULL when neither is mapped. */
static const struct procmaps_entry *find_file(const struct procmaps *maps, const char *exe)
{
	const struct procmaps_entry *prog = NULL;
	size_t i, n = procmaps__count(maps), len;

	for (i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);
		const char *b = base_name(e->path);

		if (e->anonymous || e->path[0] != '/' || !phpproc__is_php_name(b))
			continue;
		if (!strncmp(b, "libphp", 6))
			return e;
		len = strlen(e->path);
		if (!prog && exe && !strncmp(exe, e->path, len) &&
		    (!exe[len] || !strcmp(exe + len, PROCMAPS_DELETED_SUFFIX)))
			prog = e;
	}
	return prog;
}

/* The load bias of the file mapped by @e: from the PT_LOAD its offset
 * falls in (the one the mapping begins, and executable like it, first).
 * 0, or -ENOEXEC when none does. */
static int load_bias(const struct elfsyms_file *f, const struct procmaps_entry *e, __u64 *bias)
{
	const Elf64_Phdr *best = NULL;
	int i, score, best_score = -1;

	for (i = 0; i < f->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &f->ph[i];
		__u64 first = p->p_offset & ~(__u64)4095;

		if (p->p_type != PT_LOAD || !p->p_filesz || e->offset < first ||
		    e->offset >= p->p_offset + p->p_filesz)
			continue;
		score = (e->offset == first) * 2 +
			(!(p->p_flags & PF_X) == !(e->perms & PROCMAPS_EXEC));
		if (score > best_score)
			best = p, best_score = score;
	}
	if (!best)
		return -ENOEXEC;
	*bias = e->start - (e->offset - (best->p_offset & ~(__u64)4095)) -
		(best->p_vaddr & ~(__u64)4095);
	return 0;
}

#define SCAN_CHUNK 65536
#define SCAN_MAX (64u << 20) /* bytes of read-only data looked through at most */

/* The version string in the file's read-only, non-executable segments. */
static int scan_version(const struct elfsyms_file *f, char *out, size_t cap, unsigned *major,
			unsigned *minor)
{
	char *buf = malloc(SCAN_CHUNK);
	__u64 seen = 0, off, end, len;
	int i, err = -ENOENT;

	if (!buf)
		return -ENOMEM;
	for (i = 0; i < f->eh.e_phnum && err == -ENOENT; i++) {
		const Elf64_Phdr *p = &f->ph[i];

		if (p->p_type != PT_LOAD || (p->p_flags & (PF_X | PF_W)))
			continue;
		end = p->p_offset + p->p_filesz;
		for (off = p->p_offset; off < end && seen < SCAN_MAX && err == -ENOENT;) {
			len = end - off < SCAN_CHUNK ? end - off : SCAN_CHUNK;
			if (elfsyms__read(f, buf, len, off))
				break;
			seen += len;
			err = phpproc__find_version(buf, len, out, cap, major, minor);
			/* overlap: a string across two chunks */
			off += len > 64 && off + len < end ? len - 64 : len;
		}
	}
	free(buf);
	return err;
}

/* Why a PHP is not walked is logged once per kind (enum warn). */
enum warn { WARN_ZTS, WARN_VERSION, WARN_LAYOUT, WARN_LIVE, WARN_N };

static bool warn_first(enum warn kind)
{
	static unsigned char warned[WARN_N];

	return !__atomic_exchange_n(&warned[kind], 1, __ATOMIC_RELAXED);
}

/* Version, layout, addresses of the file at @fd mapped by @e. */
static int read_php(int fd, const struct procmaps_entry *e, struct phpproc *out)
{
	struct elfsyms_query q[SYM_N];
	struct elfsyms_file f = {0};
	const struct phpproc_layout *l;
	unsigned char code[64];
	unsigned major = 0, minor = 0, a, b;
	__u64 bias = 0;
	int err;

	err = elfsyms__open(fd, &f);
	if (err)
		return err == -ENOEXEC ? -ENOENT : err;
	queries(q);
	err = elfsyms__dynsym(&f, q, SYM_N, NULL);
	if (err)
		goto cleanup;
	if (q[SYM_EG_ZTS].found && !q[SYM_EG].found) {
		if (warn_first(WARN_ZTS))
			pr_warn("php: %s is a thread-safe (ZTS) PHP build, whose frames profcap "
				"cannot read; its processes show native frames only",
				e->path);
		err = -ENOTSUP;
		goto cleanup;
	}
	if (!q[SYM_EG].found || !q[SYM_EXEC].found || !q[SYM_LINENO].found) {
		err = -ENOENT; /* not the engine */
		goto cleanup;
	}
	phpproc__name_version(base_name(e->path), &major, &minor);
	if (!scan_version(&f, out->version, sizeof(out->version), &a, &b)) {
		if (major && (a != major || b != minor)) {
			err = -ENOTSUP; /* the name lies: trust neither */
			goto cleanup;
		}
		major = a, minor = b;
	} else if (major) {
		snprintf(out->version, sizeof(out->version), "%u.%u", major, minor);
	}
	l = phpproc__layout(major, minor);
	if (!l) {
		if (warn_first(WARN_VERSION))
			pr_warn("php: %s is PHP %u.%u, whose frames profcap cannot read; its "
				"processes show native frames only (known: 8.2)",
				e->path, major, minor);
		err = -ENOTSUP;
		goto cleanup;
	}
	/* the build's own code reads the current frame where the table says */
	if (elfsyms__read_vaddr(&f, code, sizeof(code), q[SYM_LINENO].value) ||
	    !phpproc__code_reads(code, sizeof(code), l->eg_current_execute_data)) {
		if (warn_first(WARN_LAYOUT))
			pr_warn("php: %s (PHP %u.%u) is laid out unlike the build profcap knows; "
				"its processes show native frames only",
				e->path, major, minor);
		err = -ENOTSUP;
		goto cleanup;
	}
	err = load_bias(&f, e, &bias);
	if (err)
		goto cleanup;
	out->layout = *l;
	out->current_execute_data = q[SYM_EG].value + bias + l->eg_current_execute_data;
	out->exec_lo = q[SYM_EXEC].value + bias;
	out->exec_hi = out->exec_lo + q[SYM_EXEC].size;
cleanup:
	elfsyms__close(&f);
	return err;
}

int phpproc__check_frame(const char *proc_root, int pid, const struct phpproc_layout *l, __u64 ex)
{
	unsigned char frame[128];
	__u64 fn;
	__u8 type;
	int err;

	if (l->ex_size > sizeof(frame) || l->ex_func + 8 > l->ex_size)
		return -EINVAL;
	err = pyproc__read_mem(proc_root, pid, ex, frame, l->ex_size);
	if (err)
		return err;
	memcpy(&fn, frame + l->ex_func, 8);
	if (!fn)
		return 0;
	err = pyproc__read_mem(proc_root, pid, fn, &type, 1);
	if (err)
		return err;
	return type == 1 || type == 2 || type == 4 ? 0 : -EINVAL;
}

/* The live process agrees: its current frame pointer reads, and the frame
 * it points to (when it runs PHP code now) checks out. */
static int check_live(const char *root, int pid, const struct phpproc *pp)
{
	__u64 ex = 0;
	int err;

	err = pyproc__read_mem(root, pid, pp->current_execute_data, &ex, sizeof(ex));
	if (err)
		return err;
	if (!ex)
		return 0;
	err = phpproc__check_frame(root, pid, &pp->layout, ex);
	if (err == -EINVAL && warn_first(WARN_LIVE))
		pr_warn("php: the frames of process %d do not read as PHP %s's: not walked", pid,
			pp->version);
	return err == -EINVAL ? -ENOTSUP : err;
}

int phpproc__locate(const char *proc_root, int pid, const struct procsnap *snap,
		    struct phpproc *out)
{
	const char *root = proc_root ? proc_root : "/proc";
	const struct procmaps_entry *e;
	struct procmaps *own = NULL;
	const struct procmaps *maps;
	char *exe = NULL;
	int fd = -1, err;

	memset(out, 0, sizeof(*out));
	err = procsnap__maps_of(root, pid, snap, &maps, &own, &exe);
	if (err)
		return err;
	e = find_file(maps, exe);
	if (!e) {
		err = -ENOENT;
		goto cleanup;
	}
	err = pfile__open_mapped(root, pid, e, &fd);
	if (err)
		goto cleanup;
	err = read_php(fd, e, out);
	if (!err)
		err = check_live(root, pid, out);
cleanup:
	if (fd >= 0)
		close(fd);
	if (err)
		memset(out, 0, sizeof(*out));
	free(exe);
	procmaps__free(own);
	return err;
}
