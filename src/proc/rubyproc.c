/* rubyproc.c - CRuby found in a process (see rubyproc.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/elfsyms.h"
#include "proc/pfile.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/pyproc.h"
#include "proc/rubyproc.h"
#include "util/log.h"

/* CRuby 3.1 on x86-64 (Debian's ruby3.1): offsets from its vm_core.h,
 * ractor_core.h, iseq.h and method.h as built with glibc's pthread types. */
static const struct rubyproc_layout ruby31 = {
	.version = 0x0301,
	.vm_main_ractor = 32,
	.vm_main_thread = 40,
	.ractor_threads = 304,
	.ractor_threads_main = 528,
	.thread_node = 0,
	.thread_ractor = 24,
	.thread_vm = 32,
	.thread_ec = 40,
	.thread_id = 80,
	.thread_tid = 88,
	.ec_vm_stack = 0,
	.ec_vm_stack_size = 8,
	.ec_cfp = 16,
	.ec_thread = 48,
	.cfp_size = 64,
	.cfp_pc = 0,
	.cfp_iseq = 16,
	.cfp_ep = 32,
	.ep_me = -16,
	.iseq_body = 16,
	.body_iseq_size = 4,
	.body_encoded = 8,
	.body_pathobj = 64,
	.body_label = 80,
	.body_first_lineno = 88,
	.body_insns_info = 120,
	.body_insns_size = 136,
	.body_succ_table = 144,
	.body_read = 152,
	.insn_info_size = 12,
	.insn_info_line = 0,
	.me_def = 16,
	.def_original_id = 32,
	.id_last_op = 0xa9,
	.id_scope_shift = 4,
	.id_entry_unit = 512,
	.id_entry_size = 2,
	.str_heap_len = 16,
	.str_heap_ptr = 24,
	.str_embed = 16,
	.ary_heap_len = 16,
	.ary_heap_ptr = 32,
	.ary_embed = 16,
};

const struct rubyproc_layout *rubyproc__layout(unsigned major, unsigned minor)
{
	if (major == 3 && minor == 1)
		return &ruby31;
	return NULL;
}

int rubyproc__parse_version(const char *s, unsigned n, unsigned *major, unsigned *minor)
{
	unsigned i = 0, v[2] = {0, 0}, k;

	for (k = 0; k < 2; k++) {
		if (i >= n || s[i] < '0' || s[i] > '9')
			return -EINVAL;
		while (i < n && s[i] >= '0' && s[i] <= '9' && v[k] < 1000)
			v[k] = v[k] * 10 + (unsigned)(s[i++] - '0');
		if (i >= n || s[i] != '.')
			return -EINVAL;
		i++;
	}
	if (i >= n || s[i] < '0' || s[i] > '9')
		return -EINVAL;
	*major = v[0];
	*minor = v[1];
	return 0;
}

/* Each kind of refusal is logged once per run. */
static bool warned_version;

static bool first_time(bool *flag)
{
	return !__atomic_exchange_n(flag, true, __ATOMIC_RELAXED);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The mapping of the file holding the VM: a libruby*.so*, else the
 * executable when named ruby* (a static build). */
static const struct procmaps_entry *find_file(const struct procmaps *maps, const char *exe)
{
	const struct procmaps_entry *prog = NULL;
	size_t i, n = procmaps__count(maps), len;

	for (i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);
		const char *b = base_name(e->path);

		if (e->anonymous || e->path[0] != '/')
			continue;
		if (!strncmp(b, "libruby", 7) && strstr(b, ".so"))
			return e;
		len = strlen(e->path);
		if (!prog && exe && !strncmp(exe, e->path, len) &&
		    (!exe[len] || !strcmp(exe + len, PROCMAPS_DELETED_SUFFIX)))
			prog = e;
	}
	return prog && !strncmp(base_name(prog->path), "ruby", 4) ? prog : NULL;
}

/* The load bias of the file of mapping @e: its start less the link address
 * of its file offset, from the PT_LOAD segment that offset falls in. */
static int load_bias(const struct elfsyms_file *f, const struct procmaps_entry *e, __u64 *bias)
{
	int i;

	for (i = 0; i < f->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &f->ph[i];
		__u64 first = p->p_offset & ~4095ull;

		if (p->p_type != PT_LOAD || e->offset < first ||
		    e->offset >= p->p_offset + p->p_filesz)
			continue;
		*bias = e->start - (e->offset - first) - (p->p_vaddr & ~4095ull);
		return 0;
	}
	return -ENOEXEC;
}

int rubyproc__decode_jmp(const unsigned char *fn, size_t n, __u64 at, __u64 *target)
{
	__s32 rel;
	size_t i;

	for (i = 0; i + 5 <= n; i++) {
		if (fn[i] != 0xe9)
			continue;
		memcpy(&rel, fn + i + 1, sizeof(rel));
		*target = at + i + 5 + (__s64)rel;
		return 0;
	}
	return -ENOENT;
}

/* A RIP-relative operand (ModRM mod 00, r/m 101) at @code[@i] (the ModRM
 * byte): its target, the instruction ending @tail bytes after the disp32. */
static __u64 rip_target(const unsigned char *code, size_t i, __u64 at, size_t tail)
{
	__s32 disp;

	memcpy(&disp, code + i + 1, sizeof(disp));
	return at + i + 5 + tail + (__s64)disp;
}

int rubyproc__decode_ids(const unsigned char *lookup, size_t m, __u64 lookup_at, __u64 *ids)
{
	__u64 last_id = 0, cand;
	size_t i;

	for (i = 0; i + 6 <= m; i++) {
		/* cmp %r32, disp32(%rip): the ID against last_id */
		if (!last_id && lookup[i] == 0x39 && (lookup[i + 1] & 0xc7) == 0x05) {
			last_id = rip_target(lookup, i + 1, lookup_at, 0);
			continue;
		}
		/* mov disp32(%rip), %r64: ids, the word 16 bytes after last_id */
		if (i + 7 <= m && (lookup[i] == 0x48 || lookup[i] == 0x4c) &&
		    lookup[i + 1] == 0x8b && (lookup[i + 2] & 0xc7) == 0x05) {
			cand = rip_target(lookup, i + 2, lookup_at, 0);
			if (last_id && cand == last_id + 16) {
				*ids = cand;
				return 0;
			}
		}
	}
	return -ENOENT;
}

enum { SYM_VM_PTR, SYM_VERSION, SYM_EXEC, SYM_ID2STR, SYM_N };

/* The address of the symbol table's names (rb_id2str's code), 0 unknown. */
static __u64 id_table(const struct elfsyms_file *f, const struct elfsyms_query *q)
{
	unsigned char fn[32], lookup[160];
	__u64 target, ids;

	if (!q->found || elfsyms__read_vaddr(f, fn, sizeof(fn), q->value) ||
	    rubyproc__decode_jmp(fn, q->size < sizeof(fn) ? q->size : sizeof(fn), q->value,
				 &target) ||
	    elfsyms__read_vaddr(f, lookup, sizeof(lookup), target) ||
	    rubyproc__decode_ids(lookup, sizeof(lookup), target, &ids))
		return 0;
	return ids;
}

/* The version and addresses from the file open at @fd, mapped as @e. */
static int read_file(int fd, const struct procmaps_entry *e, struct rubyproc *out)
{
	struct elfsyms_query q[SYM_N] = {
		[SYM_VM_PTR] = {"ruby_current_vm_ptr", 1u << STT_OBJECT},
		[SYM_VERSION] = {"ruby_version", 1u << STT_OBJECT},
		[SYM_EXEC] = {"rb_vm_exec", 1u << STT_FUNC},
		[SYM_ID2STR] = {"rb_id2str", 1u << STT_FUNC},
	};
	const struct rubyproc_layout *l;
	struct elfsyms_file f;
	unsigned major, minor;
	__u64 bias = 0;
	int err;

	err = elfsyms__open(fd, &f);
	if (err)
		return err == -ENOEXEC ? -ENOENT : err;
	err = elfsyms__dynsym(&f, q, SYM_N, NULL);
	if (!err && (!q[SYM_VM_PTR].found || !q[SYM_VERSION].found || !q[SYM_EXEC].found))
		err = -ENOENT;
	if (!err)
		err = elfsyms__read_vaddr(&f, out->version, sizeof(out->version) - 1,
					  q[SYM_VERSION].value);
	if (!err)
		err = load_bias(&f, e, &bias);
	if (!err)
		out->id_table = id_table(&f, &q[SYM_ID2STR]);
	elfsyms__close(&f);
	if (err)
		return err == -ENOEXEC ? -ENOENT : err;
	out->version[sizeof(out->version) - 1] = 0;
	if (rubyproc__parse_version(out->version, (unsigned)strlen(out->version), &major, &minor))
		return -ENOENT;
	l = rubyproc__layout(major, minor);
	if (!l) {
		if (first_time(&warned_version))
			pr_warn("Ruby %s (%s): no layout for this version, its Ruby frames are "
				"not read (native frames only)",
				out->version, e->path);
		return -ENOTSUP;
	}
	out->layout = *l;
	out->vm_ptr = q[SYM_VM_PTR].value + bias;
	if (out->id_table)
		out->id_table += bias;
	out->exec_lo = q[SYM_EXEC].value + bias;
	out->exec_hi = out->exec_lo + q[SYM_EXEC].size;
	/* The loop is a function of its own, far larger than its caller. */
	out->exec_is_loop = q[SYM_EXEC].size > 16384;
	return 0;
}

/* Read a word of process @pid at @addr. */
static int word(const char *root, int pid, __u64 addr, __u64 *v)
{
	return pyproc__read_mem(root, pid, addr, v, sizeof(*v));
}

/* Does word @off of process @pid's object @obj read as @want? 1 yes, 0 not
 * set yet (zero), -1 another value or unreadable. */
static int holds(const char *root, int pid, __u64 obj, unsigned off, __u64 want, __u64 *got)
{
	__u64 v = 0;

	if (word(root, pid, obj + off, &v))
		return -1;
	if (got)
		*got = v;
	if (!v)
		return 0;
	return !want || v == want ? 1 : -1;
}

int rubyproc__check(const char *proc_root, int pid, struct rubyproc *rp)
{
	const struct rubyproc_layout *l = &rp->layout;
	__u64 vm = 0, ractor = 0, th = 0, ec = 0, w[3], end;
	int r[6], i;

	if (word(proc_root, pid, rp->vm_ptr, &vm))
		return -ENOTSUP;
	if (!vm)
		return 0; /* not up yet: the walker finds nothing until it is */
	/* While the VM starts, fields are set one by one: a zero is a field
	 * not set yet (checked later), another value must be right. */
	r[0] = holds(proc_root, pid, vm, l->vm_main_ractor, 0, &ractor);
	r[1] = holds(proc_root, pid, vm, l->vm_main_thread, 0, &th);
	if (r[0] < 0 || r[1] < 0)
		return -ENOTSUP;
	if (!ractor || !th)
		return 0;
	r[2] = holds(proc_root, pid, th, l->thread_vm, vm, NULL);
	r[3] = holds(proc_root, pid, th, l->thread_ractor, ractor, NULL);
	r[4] = holds(proc_root, pid, ractor, l->ractor_threads_main, th, NULL);
	r[5] = holds(proc_root, pid, th, l->thread_ec, 0, &ec);
	for (i = 0; i < 6; i++)
		if (r[i] < 0)
			return -ENOTSUP;
	for (i = 2; i < 6; i++)
		if (!r[i])
			return 0;
	/* The main thread's context: its control frames inside its VM stack,
	 * a whole number of frames below the end. */
	if (pyproc__read_mem(proc_root, pid, ec, w, sizeof(w)))
		return -ENOTSUP;
	if (!w[l->ec_vm_stack / 8] || !w[l->ec_cfp / 8])
		return 0;
	end = w[l->ec_vm_stack / 8] + 8 * w[l->ec_vm_stack_size / 8];
	if (w[l->ec_vm_stack_size / 8] > (1u << 28) || w[l->ec_cfp / 8] < w[l->ec_vm_stack / 8] ||
	    w[l->ec_cfp / 8] >= end || (end - w[l->ec_cfp / 8]) % l->cfp_size ||
	    holds(proc_root, pid, ec, l->ec_thread, th, NULL) < 0)
		return -ENOTSUP;
	rp->checked = true;
	return 0;
}

static int locate_in(const char *root, int pid, const struct procmaps *maps, const char *exe,
		     void *arg)
{
	struct rubyproc *out = arg;
	const struct procmaps_entry *e = find_file(maps, exe);
	int fd, err;

	if (!e)
		return -ENOENT;
	err = pfile__open_mapped(root, pid, e, &fd);
	if (err)
		return err;
	err = read_file(fd, e, out);
	close(fd);
	if (err)
		return err;
	return rubyproc__check(root, pid, out);
}

int rubyproc__locate(const char *proc_root, int pid, const struct procsnap *snap,
		     struct rubyproc *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	err = procsnap__with_maps(proc_root, pid, snap, locate_in, out);
	if (err)
		memset(out, 0, sizeof(*out));
	return err;
}
