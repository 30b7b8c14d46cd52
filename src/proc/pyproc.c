#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/fdio.h"
#include "util/htab.h"
#include "util/log.h"
#include "proc/elfsyms.h"
#include "proc/pfile.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/pyproc.h"

int pyproc__read_mem(const char *proc_root, int pid, __u64 addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(unsigned long)addr, .iov_len = len};
	char path[96];
	ssize_t n;
	int fd, err;

	if (!len)
		return 0;
	if (addr > (__u64)INT64_MAX - len)
		return -EFAULT;
	if (!proc_root || !strcmp(proc_root, "/proc")) {
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0 || errno == EFAULT)
			return -EFAULT;
		if (errno == ESRCH)
			return -ESRCH;
		/* EPERM (a seccomp filter, a stricter LSM), ENOSYS: try mem */
	}
	snprintf(path, sizeof(path), "%s/%d/mem", proc_root ? proc_root : "/proc", pid);
	fd = fdio__open(path, O_RDONLY);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = pfile__pread(fd, buf, len, (off_t)addr);
	close(fd);
	return err == -EIO ? -EFAULT : err;
}

/* ---- which file runs Python, which version ---- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* "X.Y" right after @prefix at the start of @name: 0 and the numbers. */
static int name_version(const char *name, const char *prefix, unsigned *major, unsigned *minor)
{
	size_t n = strlen(prefix);
	unsigned a, b;
	char dot;

	if (strncmp(name, prefix, n))
		return -ENOENT;
	if (sscanf(name + n, "%1u%c%2u", &a, &dot, &b) != 3 || dot != '.')
		return -ENOENT;
	*major = a;
	*minor = b;
	return 0;
}

/* The mapping of the file that runs the interpreter, any of its mappings
 * (a snapshot from the kernel's records has the executable ones only): a
 * libpython, else the executable, *@named when its name starts with python;
 * the version from the name when it carries one (0.0 when not). NULL when
 * neither is mapped. */
static const struct procmaps_entry *find_file(const struct procmaps *maps, const char *exe,
					      unsigned *major, unsigned *minor, bool *named)
{
	const struct procmaps_entry *prog = NULL;
	size_t i, n = procmaps__count(maps), len;

	*named = false;
	for (i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);
		const char *b = base_name(e->path);

		if (e->anonymous || e->path[0] != '/')
			continue;
		/* libpython3.so (the stable ABI's forwarder) runs nothing */
		if (!strncmp(b, "libpython", 9) && strstr(b, ".so") &&
		    !name_version(b, "libpython", major, minor)) {
			*named = true;
			return e;
		}
		len = strlen(e->path);
		if (!prog && exe && !strncmp(exe, e->path, len) &&
		    (!exe[len] || !strcmp(exe + len, PROCMAPS_DELETED_SUFFIX)))
			prog = e;
	}
	if (prog && !strncmp(base_name(prog->path), "python", 6)) {
		*named = true;
		name_version(base_name(prog->path), "python", major, minor);
	}
	return prog;
}

enum {
	SYM_RUNTIME,
	SYM_INTERP_HEAD_FN,
	SYM_EVAL_DEFAULT,
	SYM_EVAL_EX,
	SYM_VERSION,
	SYM_CODE_TYPE,
	SYM_INIT,
	/* what a version added, for a file whose name says none */
	SYM_STRING_27, /* PyString_FromString: 2.x only */
	SYM_CONFIG_38,
	SYM_FRAME_39,
	SYM_ADDREF_310,
	SYM_N
};

static void queries(struct elfsyms_query *q)
{
	const unsigned obj = 1u << STT_OBJECT, fn = 1u << STT_FUNC;

	q[SYM_RUNTIME] = (struct elfsyms_query){.name = "_PyRuntime", .types = obj};
	q[SYM_INTERP_HEAD_FN] =
		(struct elfsyms_query){.name = "PyInterpreterState_Head", .types = fn};
	q[SYM_EVAL_DEFAULT] =
		(struct elfsyms_query){.name = "_PyEval_EvalFrameDefault", .types = fn};
	q[SYM_EVAL_EX] = (struct elfsyms_query){.name = "PyEval_EvalFrameEx", .types = fn};
	q[SYM_VERSION] = (struct elfsyms_query){.name = "Py_Version", .types = obj};
	q[SYM_CODE_TYPE] = (struct elfsyms_query){.name = "PyCode_Type", .types = obj};
	q[SYM_INIT] = (struct elfsyms_query){.name = "Py_Initialize", .types = fn};
	q[SYM_STRING_27] = (struct elfsyms_query){.name = "PyString_FromString", .types = fn};
	q[SYM_CONFIG_38] = (struct elfsyms_query){.name = "PyConfig_Clear", .types = fn};
	q[SYM_FRAME_39] = (struct elfsyms_query){.name = "PyFrame_GetCode", .types = fn};
	q[SYM_ADDREF_310] = (struct elfsyms_query){.name = "PyModule_AddObjectRef", .types = fn};
}

/* What the file tells of its interpreter. */
struct pyfile {
	struct elfsyms_query q[SYM_N];
	__u64 head_target; /* link address PyInterpreterState_Head loads from, 0 unknown */
	__u32 hexversion;  /* Py_Version (3.11+), 0 unknown */
};

int pyproc__decode_head(const unsigned char *code, size_t n, __u64 at, __u64 *target)
{
	static const unsigned char endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t i = 0;
	__s32 disp;

	/* builds with control-flow protection start functions with endbr64 */
	if (n >= sizeof(endbr64) && !memcmp(code, endbr64, sizeof(endbr64)))
		i = sizeof(endbr64);
	/* mov disp32(%rip), %rax */
	if (n < i + 7 || code[i] != 0x48 || code[i + 1] != 0x8b || code[i + 2] != 0x05)
		return -ENOENT;
	memcpy(&disp, code + i + 3, 4);
	*target = at + i + 7 + (__u64)(__s64)disp;
	return 0;
}

/* Where PyInterpreterState_Head() loads the head pointer from
 * (interp_head, or _PyRuntime.interpreters.head), when it decodes. */
static void decode_head(const struct elfsyms_file *f, struct pyfile *pf)
{
	const struct elfsyms_query *q = &pf->q[SYM_INTERP_HEAD_FN];
	unsigned char code[11];

	if (!q->found || elfsyms__read_vaddr(f, code, sizeof(code), q->value))
		return;
	if (pyproc__decode_head(code, sizeof(code), q->value, &pf->head_target))
		pf->head_target = 0;
}

/* Does the file export an interpreter: Py_Initialize and an eval loop. */
static bool interpreter(const struct pyfile *pf)
{
	return pf->q[SYM_INIT].found && (pf->q[SYM_EVAL_DEFAULT].found || pf->q[SYM_EVAL_EX].found);
}

/* The version from what the file exports, for a file whose name says none:
 * Py_Version from 3.11, else the newest of the functions each version
 * added (checked against the installed 2.7 to 3.13). 0 and *@major,
 * *@minor; -ENOENT when no supported version fits. */
static int symbols_version(const struct pyfile *pf, unsigned *major, unsigned *minor)
{
	const struct elfsyms_query *q = pf->q;

	*major = 3;
	if (pf->hexversion)
		*major = pf->hexversion >> 24, *minor = (pf->hexversion >> 16) & 0xff;
	else if (q[SYM_ADDREF_310].found)
		*minor = 10;
	else if (q[SYM_FRAME_39].found)
		*minor = 9;
	else if (q[SYM_CONFIG_38].found)
		*minor = 8;
	else if (q[SYM_RUNTIME].found)
		*minor = 7;
	else if (q[SYM_EVAL_DEFAULT].found)
		*minor = 6;
	else if (q[SYM_STRING_27].found && q[SYM_EVAL_EX].found)
		*major = 2, *minor = 7;
	else
		return -ENOENT; /* 3.0 to 3.5 */
	return 0;
}

static int read_file(int fd, struct pyfile *pf, struct elfsyms_file *f)
{
	__u32 v;
	int err;

	memset(pf, 0, sizeof(*pf));
	err = elfsyms__open(fd, f);
	if (err)
		return err;
	queries(pf->q);
	err = elfsyms__dynsym(f, pf->q, SYM_N, NULL);
	if (!err) {
		decode_head(f, pf);
		if (pf->q[SYM_VERSION].found &&
		    !elfsyms__read_vaddr(f, &v, sizeof(v), pf->q[SYM_VERSION].value))
			pf->hexversion = v;
	}
	if (err)
		elfsyms__close(f);
	return err;
}

int pyproc__file_version(int fd, unsigned *major, unsigned *minor)
{
	struct elfsyms_file f;
	struct pyfile pf;
	int err = read_file(fd, &pf, &f);

	if (err)
		return err;
	elfsyms__close(&f);
	if (!interpreter(&pf))
		return -ENOENT;
	return symbols_version(&pf, major, minor);
}

/* The load bias of the file mapped by @e: the PT_LOAD its offset falls in
 * (one the mapping begins, and executable like it, first) gives the link
 * address of the mapping's start. 0, or -ENOEXEC when none does. */
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

/* ---- _Py_DebugOffsets ---- */

/* Word indices (8 bytes each) of the fields profcap reads, per layout of
 * the structure: 3.13's, and 3.14's (threads_main, code object
 * generations, the frame's stackpointer and tlbc_index inserted). */
struct dbg_words {
	unsigned char runtime_size, interp_head, interp_size, threads_head;
	unsigned char ts_size, ts_next, ts_frame, ts_thread_id, ts_native_tid;
	unsigned char fr_size, fr_previous, fr_executable, fr_instr, fr_owner;
	unsigned char co_size, co_filename, co_name, co_qualname, co_linetable, co_firstlineno,
		co_adaptive;
	unsigned char by_size, by_ob_size, by_sval;
	unsigned char un_size, un_state, un_length, un_ascii_size;
	unsigned char count;
};

static const struct dbg_words dbg313 = {
	3, 5, 6, 9, 19, 21, 23, 24, 25, 28, 29, 30, 31, 33,
	34, 35, 36, 37, 38, 39, 43, 64, 65, 66, 67, 68, 69, 70, 71,
};
static const struct dbg_words dbg314 = {
	3, 5, 6, 9, 22, 24, 26, 27, 28, 31, 32, 33, 34, 36,
	39, 40, 41, 42, 43, 44, 48, 74, 75, 76, 77, 78, 79, 80, 81,
};

/* Offset word @off of a structure whose size is word @size: 0 and *@out
 * when it lies inside and fits 16 bits. */
static int dbg_off(const __u64 *w, unsigned off, unsigned size, __u16 *out)
{
	if (w[size] == 0 || w[size] > (1u << 20) || w[off] >= w[size] || w[off] >= PYPROC_NONE)
		return -EINVAL;
	*out = (__u16)w[off];
	return 0;
}

int pyproc__debug_offsets(const void *raw, size_t n, unsigned major, unsigned minor,
			  struct pyproc_layout *out)
{
	const struct dbg_words *d = minor == 13 ? &dbg313 : &dbg314;
	struct pyproc_layout l = *out;
	__u64 w[96];
	__u16 ascii;
	int err = 0;

	if (major != 3 || minor < 13 || n < (size_t)d->count * 8 || d->count > 96)
		return -EINVAL;
	memcpy(w, raw, (size_t)d->count * 8);
	if (memcmp(w, "xdebugpy", 8) || (w[1] >> 24) != major || ((w[1] >> 16) & 0xff) != minor)
		return -EINVAL;
	if (w[2])
		return -ENOTSUP; /* free-threaded: another object layout */
	err = err ?: dbg_off(w, d->interp_head, d->runtime_size, &l.runtime_interp_head);
	err = err ?: dbg_off(w, d->threads_head, d->interp_size, &l.interp_tstate_head);
	err = err ?: dbg_off(w, d->ts_next, d->ts_size, &l.tstate_next);
	err = err ?: dbg_off(w, d->ts_frame, d->ts_size, &l.tstate_frame);
	err = err ?: dbg_off(w, d->ts_thread_id, d->ts_size, &l.tstate_thread_id);
	err = err ?: dbg_off(w, d->ts_native_tid, d->ts_size, &l.tstate_native_tid);
	err = err ?: dbg_off(w, d->fr_previous, d->fr_size, &l.frame_back);
	err = err ?: dbg_off(w, d->fr_executable, d->fr_size, &l.frame_code);
	err = err ?: dbg_off(w, d->fr_instr, d->fr_size, &l.frame_instr);
	err = err ?: dbg_off(w, d->fr_owner, d->fr_size, &l.frame_owner);
	err = err ?: dbg_off(w, d->co_filename, d->co_size, &l.code_filename);
	err = err ?: dbg_off(w, d->co_name, d->co_size, &l.code_name);
	err = err ?: dbg_off(w, d->co_qualname, d->co_size, &l.code_qualname);
	err = err ?: dbg_off(w, d->co_linetable, d->co_size, &l.code_linetable);
	err = err ?: dbg_off(w, d->co_firstlineno, d->co_size, &l.code_firstlineno);
	err = err ?: dbg_off(w, d->co_adaptive, d->co_size, &l.code_bytecode);
	err = err ?: dbg_off(w, d->by_ob_size, d->by_size, &l.bytes_size);
	err = err ?: dbg_off(w, d->by_sval, d->by_size, &l.bytes_data);
	err = err ?: dbg_off(w, d->un_state, d->un_size, &l.str_state);
	err = err ?: dbg_off(w, d->un_length, d->un_size, &l.str_length);
	err = err ?: dbg_off(w, d->un_ascii_size, d->un_size, &ascii);
	if (err)
		return -EINVAL;
	/* fields every version from 3.12 keeps in place: a structure read
	 * with the wrong word indices does not pass */
	if (l.tstate_next != 8 || l.frame_back != 8 || l.frame_code != 0 || l.bytes_size != 16 ||
	    l.bytes_data != 32 || l.str_length != 16 || l.str_state != 32)
		return -EINVAL;
	/* a compact non-ASCII str adds utf8_length and utf8 to PyASCIIObject */
	l.str_ascii_data = ascii;
	l.str_compact_data = (__u16)(ascii + 16);
	l.version = (major << 8) | minor;
	*out = l;
	return 0;
}

/* ---- locate ---- */

/* Log once per version that profcap does not know it. */
static void warn_unknown(unsigned major, unsigned minor, const char *path)
{
	static unsigned char warned[4][64];
	unsigned char *w = &warned[major & 3][minor & 63];

	if (__atomic_exchange_n(w, 1, __ATOMIC_RELAXED))
		return;
	pr_warn("python: %s is CPython %u.%u, whose frames profcap cannot read; its processes "
		"show native frames only (known: 2.7, 3.6 to 3.14)\n",
		path, major, minor);
}

/* Check the version against what the file says of itself, then pick the
 * layout: 0, -ENOTSUP (unknown, or not what the name said). */
static int pick_layout(struct pyproc *out, const struct pyfile *pf, unsigned major,
		       unsigned minor, const char *path)
{
	const struct pyproc_layout *l;
	bool runtime = pf->q[SYM_RUNTIME].found;

	if (pf->hexversion) {
		unsigned ma = pf->hexversion >> 24, mi = (pf->hexversion >> 16) & 0xff;

		if (major && (ma != major || mi != minor))
			return -ENOTSUP; /* the name lies: trust neither */
		major = ma;
		minor = mi;
		snprintf(out->version, sizeof(out->version), "%u.%u.%u", ma, mi,
			 (pf->hexversion >> 8) & 0xff);
	} else {
		if (!major && symbols_version(pf, &major, &minor))
			return -ENOENT; /* nothing says which Python */
		snprintf(out->version, sizeof(out->version), "%u.%u", major, minor);
	}
	l = pyproc__layout(major, minor);
	if (!l) {
		warn_unknown(major, minor, path);
		return -ENOTSUP;
	}
	/* _PyRuntime from 3.7, the eval loop split from 3.6 */
	if (runtime != (l->version >= 0x0307) ||
	    pf->q[SYM_EVAL_DEFAULT].found != (l->version >= 0x0306))
		return -ENOTSUP;
	out->layout = *l;
	return 0;
}

/* interp_head and the eval range, absolute with load bias @bias. */
static int set_addresses(struct pyproc *out, const struct pyfile *pf, __u64 bias)
{
	const struct elfsyms_query *rt = &pf->q[SYM_RUNTIME];
	const struct elfsyms_query *ev =
		&pf->q[out->layout.version >= 0x0306 ? SYM_EVAL_DEFAULT : SYM_EVAL_EX];

	if (out->layout.version >= 0x0307) {
		/* where PyInterpreterState_Head() loads from, when decoded
		 * and inside _PyRuntime (not a GOT slot), must be the
		 * table's field */
		if (pf->head_target >= rt->value && pf->head_target - rt->value < rt->size &&
		    out->layout.runtime_interp_head != PYPROC_NONE &&
		    pf->head_target != rt->value + out->layout.runtime_interp_head)
			return -ENOTSUP;
		if (out->layout.runtime_interp_head == PYPROC_NONE)
			return -ENOTSUP;
		out->interp_head = rt->value + bias + out->layout.runtime_interp_head;
	} else {
		if (!pf->head_target)
			return -ENOTSUP; /* a build whose function we cannot decode */
		out->interp_head = pf->head_target + bias;
	}
	if (!ev->found || !ev->size)
		return -ENOTSUP;
	out->eval[0] = (struct pyproc_range){.lo = ev->value + bias, .hi = ev->value + bias + ev->size};
	out->neval = 1;
	if (pf->q[SYM_CODE_TYPE].found)
		out->code_type = pf->q[SYM_CODE_TYPE].value + bias;
	return 0;
}

/* 3.13+: the layout from the _Py_DebugOffsets at the start of _PyRuntime
 * when they read right; the table's otherwise. */
static int use_debug_offsets(const char *root, int pid, struct pyproc *out, __u64 runtime)
{
	unsigned char raw[PYPROC_DEBUG_OFFSETS_MAX];
	struct pyproc_layout l = out->layout;
	int err;

	if (out->layout.version < 0x030d)
		return 0;
	err = pyproc__read_mem(root, pid, runtime, raw, sizeof(raw));
	if (!err)
		err = pyproc__debug_offsets(raw, sizeof(raw), 3, out->layout.version & 0xff, &l);
	if (err == -ENOTSUP) {
		pr_debug("python: process %d runs a free-threaded CPython: not walked\n", pid);
		return -ENOTSUP;
	}
	if (err)
		return out->layout.runtime_interp_head == PYPROC_NONE ? -ENOTSUP : 0;
	out->layout = l;
	out->debug_offsets = true;
	out->interp_head = runtime + l.runtime_interp_head;
	return 0;
}

/* ---- executables known not to run Python ---- */

#define FILES_MAX 4096 /* forgotten all at once past this many */

struct file_key {
	__u64 dev, ino;
};

struct pyproc_files {
	struct htab set; /* struct file_key */
	__u64 read, known;
};

struct pyproc_files *pyproc_files__new(void)
{
	struct pyproc_files *f = calloc(1, sizeof(*f));

	if (f && htab__init(&f->set, sizeof(struct file_key), FILES_MAX)) {
		free(f);
		return NULL;
	}
	return f;
}

void pyproc_files__free(struct pyproc_files *f)
{
	if (!f)
		return;
	htab__release(&f->set);
	free(f);
}

void pyproc_files__stats(const struct pyproc_files *f, __u64 *read, __u64 *known)
{
	*read = f ? f->read : 0;
	*known = f ? f->known : 0;
}

static bool file_eq(const void *elem, const void *key, void *ctx)
{
	const struct file_key *a = elem, *b = key;

	(void)ctx;
	return a->dev == b->dev && a->ino == b->ino;
}

static struct file_key file_key(const struct procmaps_entry *e)
{
	return (struct file_key){.dev = ((__u64)e->dev_major << 32) | e->dev_minor,
				 .ino = e->inode};
}

static bool files_known(struct pyproc_files *f, const struct procmaps_entry *e)
{
	struct file_key k = file_key(e);

	if (!f || !k.ino || !htab__find(&f->set, htab__hash_u64(k.dev, k.ino), &k, file_eq, NULL))
		return false;
	f->known++;
	return true;
}

static void files_add(struct pyproc_files *f, const struct procmaps_entry *e)
{
	struct file_key k = file_key(e), *slot;

	if (!f || !k.ino)
		return;
	if (htab__count(&f->set) >= FILES_MAX)
		htab__clear(&f->set); /* a host that keeps starting new programs */
	if (!htab__add(&f->set, htab__hash_u64(k.dev, k.ino), (void **)&slot))
		*slot = k;
}

/* The file of mapping @e (the interpreter by its name when @named, else
 * an executable looked into for one) read into @pf, and its load bias. */
static int read_mapped(const char *root, int pid, const struct procmaps_entry *e, bool named,
		       struct pyproc_files *files, struct pyfile *pf, __u64 *bias)
{
	struct elfsyms_file f;
	int fd, err;

	if (!named && files_known(files, e))
		return -ENOENT;
	err = pfile__open_mapped(root, pid, e, &fd);
	if (err)
		return err;
	if (!named && files)
		files->read++;
	err = read_file(fd, pf, &f);
	if (!err) {
		err = interpreter(pf) ? load_bias(&f, e, bias) : -ENOENT;
		elfsyms__close(&f);
	}
	close(fd);
	if (named)
		return err;
	/* not an ELF file of this machine, or one without an interpreter */
	if (err == -ENOENT || err == -ENOEXEC || err == -EFBIG) {
		files_add(files, e);
		return -ENOENT;
	}
	return err;
}

static int locate_in(const char *root, int pid, const struct procmaps *maps, const char *exe,
		     struct pyproc_files *files, struct pyproc *out)
{
	const struct procmaps_entry *e;
	struct pyfile pf;
	unsigned major = 0, minor = 0;
	__u64 bias = 0;
	bool named;
	int err;

	e = find_file(maps, exe, &major, &minor, &named);
	if (!e)
		return -ENOENT;
	err = read_mapped(root, pid, e, named, files, &pf, &bias);
	if (err)
		return err;
	err = pick_layout(out, &pf, major, minor, e->path);
	if (err && !named)
		files_add(files, e); /* an interpreter profcap cannot walk: read once */
	if (err)
		return err;
	err = set_addresses(out, &pf, bias);
	if (!err && pf.q[SYM_RUNTIME].found)
		err = use_debug_offsets(root, pid, out, pf.q[SYM_RUNTIME].value + bias);
	return err;
}

int pyproc__locate(const char *proc_root, int pid, const struct procsnap *snap,
		   struct pyproc_files *files, struct pyproc *out)
{
	const char *root = proc_root ? proc_root : "/proc";
	struct procmaps *own = NULL;
	const struct procmaps *maps;
	char *exe = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	err = procsnap__maps_of(root, pid, snap, &maps, &own, &exe);
	if (err)
		return err;
	err = locate_in(root, pid, maps, exe, files, out);
	if (err)
		memset(out, 0, sizeof(*out));
	free(exe);
	procmaps__free(own);
	return err;
}
