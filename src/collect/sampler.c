#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/btf.h>

#include "cpu_sampler.h"
#include "offcpu_types.h"
#include "cpu_sampler.skel.h"
#include "util/env.h"
#include "util/log.h"
#include "collect/forkhook.h"
#include "collect/kver.h"
#include "proc/status.h"
#include "proc/threadctx.h"
#include "collect/sampler.h"
#include "collect/unwind_table.h"
#include "collect/offcpu.h"

/* Distinct keys (and stacks) one generation can hold. Sized from the sample
 * rate so that a drain interval's worth of samples always fits. */
#define SAMPLER_MIN_ENTRIES 1024u
#define SAMPLER_MAX_ENTRIES 65536u

/* Time for programs that read the old generation number to finish. A
 * perf_event program runs for microseconds with preemption disabled. */
#define SAMPLER_GEN_SETTLE_NS 2000000L

/* Announced processes waiting for their unwind tables. */
#define SAMPLER_PENDING_MAX 4096u

/* Exited processes and unused file tables are reclaimed this often. */
#define SAMPLER_GC_NS 5000000000ull

struct sampler {
	struct cpu_sampler *skel;
	int *pfds;
	struct bpf_link **links;
	struct bpf_link *fork_link; /* fork following, when asked */
	struct bpf_link *exec_link; /* exec: announce the new program */
	struct bpf_link *offcpu[OFFCPU_LINKS]; /* off-CPU programs, when asked */
	__u32 ncpus;		    /* size of pfds/links: highest online CPU + 1 */
	__u32 nonline;
	struct ring_buffer *rb;
	sampler_proc_fn proc_fn;
	void *proc_ctx;
	__u64 stacks_missing;
	__u64 drains;
	/* table unwinding (issue 4) */
	struct unwind_table *unwind;
	int rows_fd; /* the file table being written (rows_begin .. rows_end) */
	size_t rows_len;
	__u32 unwind_rows; /* row store cap */
	__u64 *slot_mem;   /* kernel memory of each file table */
	struct unwind_file_key *slot_key; /* its file, in unwind_file_idx */
	__u64 rows_mem;	   /* ... all of them */
	__u64 bpf_peak;
	/* The table builder thread (from sampler__start() on): processes
	 * announced whose tables are still to build, oldest first; bit 31 of
	 * an entry asks for a rate-limited refresh. Under mu: the queue,
	 * stopped, quit and ut_stats; the unwind table is the worker's. */
	pthread_t worker;
	bool worker_on, stopped, quit, busy;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	__u32 pending[SAMPLER_PENDING_MAX];
	__u32 pend_head, pend_n;
	struct unwind_table_stats ut_stats;
	__u32 refreshed[256]; /* tgids asked to refresh lately (main thread) */
	__u64 refreshed_ns;
	bool no_prealloc;  /* hash maps allocate on use (Linux >= 6.1) */
	__u64 uips[PROFCAP_MAX_USTACK];
	/* drain scratch */
	struct stack_trace ust, kst;
	__u64 *stack_keys;
	__u32 nstack_keys_cap;
	struct sample_key *keys;
	__u64 *vals;
	__u32 cap;
	struct offcpu_key *okeys;
	struct offcpu_val *ovals;
	__u32 ocap;
	/* thread context (OTEP 4947) */
	bool tctx_warned;
	__u32 tctx_procs;    /* entries in threadctx_procs (upper bound) */
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || log__level() < LOG_VERBOSE)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int sampler__check_privileges(void)
{
	const int cap_sys_admin = 21, cap_perfmon = 38, cap_bpf = 39;
	unsigned long long eff = 0;

	if (proc_status__self("CapEff:", 0, 16, &eff))
		return 0; /* cannot tell: let the load itself fail clearly */
	if (eff & (1ull << cap_sys_admin))
		return 0;
	if ((eff & (1ull << cap_bpf)) && (eff & (1ull << cap_perfmon)))
		return 0;
	pr_err("sampling needs CAP_BPF and CAP_PERFMON (or root): run profcap as root, or grant "
	       "them with 'setcap cap_bpf,cap_perfmon+ep profcap' (kernel >= 5.8)");
	return -EPERM;
}

/* Parse a kernel CPU list ("0-3,5,7-8") into @online[0..*n). */
static int parse_cpu_list(const char *str, bool **online, __u32 *n)
{
	unsigned long a, b, max = 0;
	const char *p = str;
	char *end;
	bool *set;

	/* First pass: the highest CPU number. */
	while (*p && *p != '\n') {
		a = strtoul(p, &end, 10);
		if (end == p)
			return -EINVAL;
		b = a;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		if (b < a || b >= 65536)
			return -EINVAL;
		if (b + 1 > max)
			max = b + 1;
		p = *end == ',' ? end + 1 : end;
	}
	if (!max)
		return -EINVAL;
	set = calloc(max, sizeof(*set));
	if (!set)
		return -ENOMEM;
	for (p = str; *p && *p != '\n';) {
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		while (a <= b)
			set[a++] = true;
		p = *end == ',' ? end + 1 : end;
	}
	*online = set;
	*n = (__u32)max;
	return 0;
}

static int online_cpus(bool **online, __u32 *n)
{
	char buf[4096];
	ssize_t len;
	int fd, err;

	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	err = len < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[len] = '\0';
	return parse_cpu_list(buf, online, n);
}

static __u32 clamp_entries(__u64 want)
{
	if (want < SAMPLER_MIN_ENTRIES)
		return SAMPLER_MIN_ENTRIES;
	if (want > SAMPLER_MAX_ENTRIES)
		return SAMPLER_MAX_ENTRIES;
	return (__u32)want;
}

static int perf_open_cpu(int cpu, __u32 hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000000ull / hz,
		.disabled = 1,
	};

	return (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

#define SAMPLER_REFRESH_BIT 0x80000000u

static void enqueue(struct sampler *s, __u32 entry)
{
	pthread_mutex_lock(&s->mu);
	if (!s->stopped && s->pend_n < SAMPLER_PENDING_MAX) {
		s->pending[(s->pend_head + s->pend_n) % SAMPLER_PENDING_MAX] = entry;
		s->pend_n++;
		pthread_cond_signal(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* The table builder: parses files and writes the maps off the thread that
 * takes notices and drains samples, so a new binary's parse (hundreds of
 * ms on a busy host) delays neither the snapshot of a short-lived process
 * nor a drain. Also the periodic reclaim. */
static void *worker_main(void *arg)
{
	struct sampler *s = arg;
	__u64 last_gc = mono_ns();

	pthread_mutex_lock(&s->mu);
	while (!s->quit) {
		__u32 entry;

		if (!s->pend_n) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&s->cv, &s->mu, &ts);
			if (s->quit || s->pend_n || mono_ns() - last_gc < SAMPLER_GC_NS)
				continue;
			entry = 0; /* time for the reclaim */
		} else {
			/* Oldest first (one that exited meanwhile costs a
			 * failed open of its maps, nothing more). */
			entry = s->pending[s->pend_head];
			s->pend_head = (s->pend_head + 1) % SAMPLER_PENDING_MAX;
			s->pend_n--;
		}
		s->busy = true;
		pthread_mutex_unlock(&s->mu);
		if (entry & SAMPLER_REFRESH_BIT)
			unwind_table__refresh(s->unwind, (int)(entry & ~SAMPLER_REFRESH_BIT));
		else if (entry)
			unwind_table__add_process(s->unwind, (int)entry);
		if (mono_ns() - last_gc >= SAMPLER_GC_NS) {
			unwind_table__gc(s->unwind, UNWIND_TABLE_FILE_TTL_NS);
			last_gc = mono_ns();
		}
		pthread_mutex_lock(&s->mu);
		s->busy = false;
		unwind_table__stats(s->unwind, &s->ut_stats);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct sampler *s = ctx;
	const struct proc_event *e = data;

	if (len < sizeof(*e))
		return 0;
	if (e->pad == PROFCAP_EVENT_NORSEQ) {
		offcpu__poll(s->skel, s->offcpu); /* a failure is warned, not fatal */
		return 0;
	}
	/* The caller's snapshot (cheap) now, while a short-lived process is
	 * still there; its tables (a parse for a new binary) after every
	 * notice waiting has had its snapshot: see sampler__poll(). */
	if (s->proc_fn)
		s->proc_fn(s->proc_ctx, e->tgid);
	if (s->worker_on)
		enqueue(s, e->tgid);
	return 0;
}

/* The initial PID namespace's inode number (PROC_PID_INIT_INO). */
#define PID_NS_INIT_INO 0xEFFFFFFCull

static int own_pid_ns(__u64 *dev, __u64 *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st))
		return -errno;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

static int fill_filter(struct bpf_map *map, const void *key, __u32 key_size, const char *what)
{
	__u8 one = 1;
	int err;

	err = bpf_map__update_elem(map, key, key_size, &one, sizeof(one), BPF_ANY);
	if (err)
		pr_err("cannot set the %s filter: %s", what, strerror(-err));
	return err;
}

static int set_filters(struct sampler *s, const struct sampler_opts *o)
{
	struct comm_key ck;
	size_t i;
	int err = 0;

	for (i = 0; i < o->npids && !err; i++) {
		__u32 pid = (__u32)o->pids[i];

		err = fill_filter(s->skel->maps.pids, &pid, sizeof(pid), "PID");
	}
	for (i = 0; i < o->ntids && !err; i++) {
		__u32 tid = (__u32)o->tids[i];

		err = fill_filter(s->skel->maps.tids, &tid, sizeof(tid), "thread");
	}
	for (i = 0; i < o->ncomms && !err; i++) {
		memset(&ck, 0, sizeof(ck));
		strncpy((char *)ck.w, o->comms[i], PROFCAP_COMM_LEN - 1);
		err = fill_filter(s->skel->maps.comms, &ck, sizeof(ck), "command name");
	}
	for (i = 0; i < o->ncgroups && !err; i++) {
		__u32 k = (__u32)i, fd = (__u32)o->cgroup_fds[i];

		err = bpf_map__update_elem(s->skel->maps.cgroups, &k, sizeof(k), &fd, sizeof(fd),
					   BPF_ANY);
		if (err)
			pr_err("cannot set the cgroup filter: %s (needs a cgroup v2 directory)",
			       strerror(-err));
	}
	return err;
}

static void explain_load_error(int err)
{
	if (err == -EPERM || err == -EACCES)
		pr_err("the kernel refused to load the BPF program (%s): run as root or grant "
		       "CAP_BPF + CAP_PERFMON; check kernel.unprivileged_bpf_disabled and any LSM "
		       "policy",
		       strerror(-err));
	else if (err == -EINVAL || err == -E2BIG || err == -ENOTSUP || err == -EOPNOTSUPP)
		pr_err("the kernel rejected the BPF program (%s): profcap needs Linux >= 5.8 with "
		       "CONFIG_BPF_SYSCALL and BPF ring buffers; rerun with -v for the verifier "
		       "log",
		       strerror(-err));
	else
		pr_err("loading the BPF program failed: %s; rerun with -v for details",
		       strerror(-err));
}

/* ---- table unwinding (issue 4) ---------------------------------------------------- */

static int unwind_set_map(void *ctx, const struct unwind_map_key *k, const struct unwind_map *m)
{
	struct sampler *s = ctx;

	return bpf_map__update_elem(s->skel->maps.unwind_maps, k, sizeof(*k), m, sizeof(*m),
				    BPF_ANY);
}

static int unwind_set_proc(void *ctx, __u32 tgid, __u32 nmaps)
{
	struct sampler *s = ctx;

	return bpf_map__update_elem(s->skel->maps.unwind_procs, &tgid, sizeof(tgid), &nmaps,
				    sizeof(nmaps), BPF_ANY);
}

static int unwind_del_map(void *ctx, const struct unwind_map_key *k)
{
	struct sampler *s = ctx;

	return bpf_map__delete_elem(s->skel->maps.unwind_maps, k, sizeof(*k), 0);
}

static int unwind_del_proc(void *ctx, __u32 tgid)
{
	struct sampler *s = ctx;

	/* Its next sample (a reused PID's first) announces it again. */
	bpf_map__delete_elem(s->skel->maps.seen, &tgid, sizeof(tgid), 0);
	return bpf_map__delete_elem(s->skel->maps.unwind_procs, &tgid, sizeof(tgid), 0);
}

static int unwind_set_file(void *ctx, __u32 slot, __u64 dev, __u64 ino, const __u64 (*seg)[3],
			   unsigned int nseg, __u32 nrows)
{
	struct sampler *s = ctx;
	struct unwind_file f = {.slot = slot, .nrows = nrows};
	struct unwind_file_key k = {.dev = (dev >> 32) << 20 | (dev & 0xfffff), .ino = ino};
	unsigned int i;

	if (!s->skel->rodata->unwind_vma || slot >= SAMPLER_UNWIND_FILES)
		return 0;
	for (i = 0; i < nseg && i < UNWIND_FILE_SEGS; i++)
		memcpy(f.seg[i], seg[i], sizeof(f.seg[i]));
	f.nseg = i;
	if (bpf_map__update_elem(s->skel->maps.unwind_file_idx, &k, sizeof(k), &f, sizeof(f),
				 BPF_ANY))
		return -errno;
	s->slot_key[slot] = k;
	return 0;
}

/* Byte offset of member @name of struct @sname in kernel BTF (inside
 * anonymous structs and unions too), -1 if absent. */
static long btf_member_off(const struct btf *btf, __u32 id, const char *name, int depth)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m;
	__u16 i;

	while (t && (btf_is_mod(t) || btf_is_typedef(t)))
		t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_composite(t) || depth > 4)
		return -1;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		const char *mn = btf__name_by_offset(btf, m->name_off);
		long off;

		if (mn && *mn) {
			if (!strcmp(mn, name))
				return (long)(btf_member_bit_offset(t, i) / 8);
			continue;
		}
		off = btf_member_off(btf, m->type, name, depth + 1);
		if (off >= 0)
			return (long)(btf_member_bit_offset(t, i) / 8) + off;
	}
	return -1;
}

static int btf_off(const struct btf *btf, const char *sname, const char *name, __u32 *out)
{
	__s32 id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	long off = id > 0 ? btf_member_off(btf, (__u32)id, name, 0) : -1;

	if (off < 0)
		return -ENOENT;
	*out = (__u32)off;
	return 0;
}

/* Let the BPF walker find mappings from the kernel's VMAs (Linux >= 5.17
 * with BTF): the offsets of the fields it reads. Off when any is missing. */
static void unwind_vma_configure(struct sampler *s, const struct btf *btf)
{
	struct cpu_sampler__rodata *r = s->skel->rodata;

	if (!kver__at_least(5, 17) || !btf)
		return;
	if (!btf_off(btf, "vm_area_struct", "vm_start", (__u32 *)&r->vma_start_off) &&
	    !btf_off(btf, "vm_area_struct", "vm_end", (__u32 *)&r->vma_end_off) &&
	    !btf_off(btf, "vm_area_struct", "vm_pgoff", (__u32 *)&r->vma_pgoff_off) &&
	    !btf_off(btf, "vm_area_struct", "vm_file", (__u32 *)&r->vma_file_off) &&
	    !btf_off(btf, "file", "f_inode", (__u32 *)&r->file_inode_off) &&
	    !btf_off(btf, "inode", "i_ino", (__u32 *)&r->inode_ino_off) &&
	    !btf_off(btf, "inode", "i_sb", (__u32 *)&r->inode_sb_off) &&
	    !btf_off(btf, "super_block", "s_dev", (__u32 *)&r->sb_dev_off))
		r->unwind_vma = 1;
	/* The VMAs found, kept per process: see bpf/unwind_bpf.h. */
	if (r->unwind_vma && !btf_off(btf, "task_struct", "mm", (__u32 *)&r->task_mm_off))
		bpf_map__set_max_entries(s->skel->maps.unwind_vcache, SAMPLER_VCACHE_PROCS);
}

/* Kernel memory charged for BPF map @fd (memlock in its fdinfo), 0 if unknown. */
static __u64 fd_memlock(int fd)
{
	char path[64], line[128];
	__u64 v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "memlock:", 8)) {
			v = strtoull(line + 8, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* Kernel memory of all our maps: the skeleton's and the file tables. */
static __u64 bpf_memory(const struct sampler *s)
{
	const struct bpf_map *m;
	__u64 sum = __atomic_load_n(&s->rows_mem, __ATOMIC_RELAXED);

	bpf_object__for_each_map(m, s->skel->obj)
		if (bpf_map__fd(m) >= 0)
			sum += fd_memlock(bpf_map__fd(m));
	return sum;
}

/* A file table: an array map sized to its rows, mapped here only while it
 * is written, then put in its slot of unwind_files. */
static __u64 *unwind_rows_begin(void *ctx, __u32 slot, __u32 n)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	struct sampler *s = ctx;
	long page = sysconf(_SC_PAGESIZE);
	void *mem;

	(void)slot;
	s->rows_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", sizeof(__u32),
				    sizeof(__u64), n, &opts);
	if (s->rows_fd < 0)
		return NULL;
	s->rows_len = ((size_t)n * sizeof(__u64) + (size_t)page - 1) & ~((size_t)page - 1);
	mem = mmap(NULL, s->rows_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->rows_fd, 0);
	if (mem == MAP_FAILED) {
		close(s->rows_fd);
		s->rows_fd = -1;
		return NULL;
	}
	return mem;
}

static int unwind_rows_end(void *ctx, __u32 slot, __u64 *rows, __u32 n, bool ok)
{
	struct sampler *s = ctx;
	int err = 0;

	(void)n;
	munmap(rows, s->rows_len);
	if (ok && bpf_map__update_elem(s->skel->maps.unwind_files, &slot, sizeof(slot),
				       &s->rows_fd, sizeof(s->rows_fd), BPF_ANY))
		err = -errno;
	if (ok && !err && slot < SAMPLER_UNWIND_FILES) {
		s->rows_mem -= s->slot_mem[slot];
		s->slot_mem[slot] = fd_memlock(s->rows_fd);
		s->rows_mem += s->slot_mem[slot];
	}
	close(s->rows_fd); /* unwind_files holds the map now */
	s->rows_fd = -1;
	return err;
}

static int unwind_rows_del(void *ctx, __u32 slot)
{
	struct sampler *s = ctx;

	if (slot < SAMPLER_UNWIND_FILES) {
		s->rows_mem -= s->slot_mem[slot];
		s->slot_mem[slot] = 0;
		if (s->slot_key[slot].dev || s->slot_key[slot].ino)
			bpf_map__delete_elem(s->skel->maps.unwind_file_idx, &s->slot_key[slot],
					     sizeof(s->slot_key[slot]), 0);
		memset(&s->slot_key[slot], 0, sizeof(s->slot_key[slot]));
	}
	return bpf_map__delete_elem(s->skel->maps.unwind_files, &slot, sizeof(slot), 0);
}

static void no_prealloc(struct bpf_map *m)
{
	bpf_map__set_map_flags(m, bpf_map__map_flags(m) | BPF_F_NO_PREALLOC);
}

/* Before load: size the unwinder's maps and switch it on. Its hash maps
 * take memory as entries are added where the kernel lets perf_event
 * programs use them so (Linux >= 6.1; the program only writes the deep-stack
 * tails, rarely); before, they are preallocated, the deep-stack maps sized
 * from the sample rate (@entries: distinct stacks of one drain interval). */
static void unwind_configure(struct sampler *s, const struct sampler_opts *o, __u32 entries,
			     const struct btf *btf)
{
	__u32 rows = o->unwind_rows ? o->unwind_rows : SAMPLER_UNWIND_ROWS;
	/* benchmarks: store pressure */
	const char *env = env__get(env__process(), "PROFCAP_UNWIND_ROWS");

	if (!o->unwind_rows && env && strtoul(env, NULL, 10) > 0 &&
	    strtoul(env, NULL, 10) < SAMPLER_UNWIND_ROWS)
		rows = (__u32)strtoul(env, NULL, 10);
	__u32 ext = s->no_prealloc ? SAMPLER_USTACK_EXT_MAX : entries / 4;

	if (!o->unwind || !o->user)
		return;
	s->skel->rodata->want_unwind = 1;
	/* Kernel-mode samples need the task's user registers: kernel BTF and
	 * bpf_task_pt_regs() (Linux >= 5.15); without, they use frame pointers
	 * and are flagged partial. */
	s->skel->rodata->unwind_task_regs =
		!access("/sys/kernel/btf/vmlinux", R_OK) && kver__at_least(5, 15);
	s->unwind_rows = rows;
	unwind_vma_configure(s, btf);
	bpf_map__set_max_entries(s->skel->maps.unwind_file_idx, SAMPLER_UNWIND_FILES);
	bpf_map__set_max_entries(s->skel->maps.unwind_files, SAMPLER_UNWIND_FILES);
	bpf_map__set_max_entries(s->skel->maps.unwind_maps, SAMPLER_UNWIND_MAPS);
	bpf_map__set_max_entries(s->skel->maps.unwind_procs, UNWIND_TABLE_MAX_PROCS);
	bpf_map__set_max_entries(s->skel->maps.ustack_ext0, ext);
	bpf_map__set_max_entries(s->skel->maps.ustack_ext1, ext);
	if (s->no_prealloc) {
		no_prealloc(s->skel->maps.unwind_maps);
		no_prealloc(s->skel->maps.unwind_file_idx);
		no_prealloc(s->skel->maps.unwind_procs);
		no_prealloc(s->skel->maps.ustack_ext0);
		no_prealloc(s->skel->maps.ustack_ext1);
	}
}

/* After load: create the table builder (file tables are added as found). */
static int unwind_open(struct sampler *s)
{
	struct unwind_table_sink sink = {
		.set_map = unwind_set_map,
		.set_proc = unwind_set_proc,
		.del_map = unwind_del_map,
		.del_proc = unwind_del_proc,
		.ctx = s,
	};

	if (!s->skel->rodata->want_unwind)
		return 0;
	sink.max_rows = s->unwind_rows;
	sink.max_files = SAMPLER_UNWIND_FILES;
	sink.max_maps = SAMPLER_UNWIND_MAPS;
	sink.rows_begin = unwind_rows_begin;
	sink.rows_end = unwind_rows_end;
	sink.rows_del = unwind_rows_del;
	sink.set_file = unwind_set_file;
	s->slot_mem = calloc(SAMPLER_UNWIND_FILES, sizeof(*s->slot_mem));
	s->slot_key = calloc(SAMPLER_UNWIND_FILES, sizeof(*s->slot_key));
	s->unwind = s->slot_mem && s->slot_key ? unwind_table__new(&sink, "/proc") : NULL;
	if (!s->unwind)
		return -ENOMEM;
	return 0;
}

_Static_assert(SAMPLER_MAX_KSTACK == PROFCAP_MAX_STACK, "kernel stack depth");
_Static_assert(SAMPLER_MAX_USTACK == PROFCAP_MAX_USTACK, "user stack depth");
_Static_assert(SAMPLER_TCTX_ATTRS == PROFCAP_TCTX_ATTRS, "thread-context attrs bytes");
_Static_assert(SAMPLER_REC_USTACK_ERR == PROFCAP_F_USTACK_ERR &&
		       SAMPLER_REC_USTACK_TRUNC == PROFCAP_F_USTACK_TRUNC &&
		       SAMPLER_REC_KSTACK_TRUNC == PROFCAP_F_KSTACK_TRUNC &&
		       SAMPLER_REC_USTACK_PARTIAL == PROFCAP_F_USTACK_PARTIAL,
	       "record flags are the BPF program's");

int sampler__add_process(struct sampler *s, int pid)
{
	if (!s->unwind)
		return 0;
	if (!s->worker_on)
		return unwind_table__add_process(s->unwind, pid);
	enqueue(s, (__u32)pid);
	return 0;
}

int sampler__refresh_process(struct sampler *s, int pid)
{
	__u32 *last;
	__u64 now;

	if (!s->unwind)
		return 0;
	if (!s->worker_on)
		return unwind_table__refresh(s->unwind, pid);
	/* One request per process and second is plenty (the builder rate-
	 * limits too): partial records come by the thousand. */
	now = mono_ns();
	if (now - s->refreshed_ns > UNWIND_TABLE_REFRESH_NS) {
		memset(s->refreshed, 0, sizeof(s->refreshed));
		s->refreshed_ns = now;
	}
	last = &s->refreshed[(__u32)pid % 256];
	if (*last == (__u32)pid)
		return 0;
	*last = (__u32)pid;
	enqueue(s, (__u32)pid | SAMPLER_REFRESH_BIT);
	return 0;
}

bool sampler__unwind_stats(const struct sampler *s, struct sampler_unwind_stats *st)
{
	int ncpu = libbpf_num_possible_cpus(), fd;
	__u64 out[USTAT__COUNT] = {0};
	__u64 *vals;
	__u32 k;

	memset(st, 0, sizeof(*st));
	if (!s->unwind)
		return false;
	if (s->worker_on) {
		pthread_mutex_lock((pthread_mutex_t *)&s->mu);
		st->tables = s->ut_stats;
		pthread_mutex_unlock((pthread_mutex_t *)&s->mu);
	} else {
		unwind_table__stats(s->unwind, &st->tables);
	}
	vals = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*vals)) : NULL;
	if (vals) {
		fd = bpf_map__fd(s->skel->maps.unwind_stats);
		for (k = 0; k < USTAT__COUNT; k++) {
			if (bpf_map_lookup_elem(fd, &k, vals))
				continue;
			for (int c = 0; c < ncpu; c++)
				out[k] += vals[c];
		}
		free(vals);
	}
	st->frames = out[USTAT_FRAMES];
	st->fp_frames = out[USTAT_FP_FRAMES];
	st->complete = out[USTAT_COMPLETE];
	st->partial = out[USTAT_PARTIAL];
	st->no_mapping = out[USTAT_NO_MAPPING];
	st->no_row = out[USTAT_NO_ROW];
	st->read_err = out[USTAT_READ_ERR];
	st->depth = out[USTAT_DEPTH];
	st->ext_full = out[USTAT_EXT_FULL];
	st->kernel_regs = out[USTAT_KERNEL_REGS];
	st->no_proc = out[USTAT_NO_PROC];
	st->vma = out[USTAT_VMA];
	return true;
}

/* The frames of a deep user stack past PROFCAP_MAX_STACK, from @ext. */
static __u32 unwind_join(struct sampler *s, int ext_fd, __u64 hash, __u64 nr, __u32 *flags)
{
	__u32 n = PROFCAP_MAX_STACK;

	memcpy(s->uips, s->ust.ips, sizeof(s->ust.ips));
	if (nr > PROFCAP_MAX_USTACK)
		nr = PROFCAP_MAX_USTACK;
	if (nr > PROFCAP_MAX_STACK && ext_fd >= 0 &&
	    !bpf_map_lookup_elem(ext_fd, &hash, &s->uips[PROFCAP_MAX_STACK]))
		n = (__u32)nr;
	else if (nr > PROFCAP_MAX_STACK)
		*flags |= PROFCAP_F_USTACK_PARTIAL; /* tail not stored */
	return n;
}

static struct bpf_program *fork_prog(struct sampler *s, enum forkhook_kind kind)
{
	switch (kind) {
	case FORKHOOK_TP_BTF:
		return s->skel->progs.profcap_fork_btf;
	case FORKHOOK_RAW_TP:
		return s->skel->progs.profcap_fork_raw;
	default:
		return s->skel->progs.profcap_fork_tp;
	}
}

/* After load: the exec hook and the ring buffer (the fork hook is attached
 * by load_following()). 0, or -errno after logging why. */
static int attach_events(struct sampler *s)
{
	int err;

	/* Without it (a kernel lacking the tracepoint), a process that
	 * exec()s keeps the tables of its first program until a refresh. */
	s->exec_link = bpf_program__attach(s->skel->progs.profcap_exec);
	if (!s->exec_link)
		pr_debug("exec tracepoint not attached: %s", strerror(errno));
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_event, s, NULL);
	if (!s->rb) {
		err = -errno;
		pr_err("cannot open the BPF ring buffer: %s (needs Linux >= 5.8)", strerror(-err));
		return err;
	}
	return 0;
}

/* One cpu-clock perf event per online CPU (@online, s->ncpus entries). 0,
 * or -errno after logging why, with a hint for each usual cause. */
static int open_perf_events(struct sampler *s, const bool *online, __u32 freq_hz)
{
	__u32 i;
	int err;

	for (i = 0; i < s->ncpus; i++) {
		if (!online[i])
			continue;
		s->pfds[i] = perf_open_cpu((int)i, freq_hz);
		if (s->pfds[i] >= 0)
			continue;
		err = -errno;
		if (err == -EACCES || err == -EPERM)
			pr_err("perf events are not permitted (%s): run as root or grant "
			       "CAP_PERFMON, or lower kernel.perf_event_paranoid "
			       "(sysctl -w kernel.perf_event_paranoid=-1)",
			       strerror(-err));
		else if (err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP)
			pr_err("the cpu-clock perf event is unavailable on CPU %u (%s): the "
			       "kernel needs CONFIG_PERF_EVENTS",
			       i, strerror(-err));
		else if (err == -EMFILE)
			pr_err("out of file descriptors opening perf events for %u CPUs: "
			       "raise the limit with 'ulimit -n'",
			       s->ncpus);
		else
			pr_err("perf_event_open on CPU %u failed: %s", i, strerror(-err));
		return err;
	}
	return 0;
}


/* Open, configure and load the BPF object, with fork hook @fh (NULL: no
 * fork following). On failure the skeleton is gone again; logs nothing. */
/* Thread context: on where kernel BTF can give the thread pointer's place
 * (looked up on first use, sampler__set_thread_ctx()); then each sample of
 * a process without an entry costs one map lookup. */
/* Thread context needs user stacks and task_struct.thread.fsbase (x86_64:
 * the user thread pointer as saved for the task) from kernel BTF @btf. */
static void threadctx_configure(struct sampler *s, const struct sampler_opts *o,
				const struct btf *btf)
{
	/* benchmarks: the baseline */
	const char *env = env__get(env__process(), "PROFCAP_NO_THREAD_CTX");
	__u32 thread = 0, fsbase = 0;

	if (!o->user || (env && *env && strcmp(env, "0")))
		return;
	s->skel->rodata->want_threadctx = btf != NULL;
	if (!btf)
		return;
	if (!btf_off(btf, "task_struct", "thread", &thread) &&
	    !btf_off(btf, "thread_struct", "fsbase", &fsbase) && thread + fsbase)
		s->skel->bss->tctx_fsbase_off = (__u64)thread + fsbase;
	bpf_map__set_max_entries(s->skel->maps.threadctx_procs, PROFCAP_THREADCTX_PROCS);
	if (s->no_prealloc)
		no_prealloc(s->skel->maps.threadctx_procs);
}

int sampler__set_thread_ctx(struct sampler *s, int pid, const struct threadctx_loc *loc)
{
	struct threadctx_proc val = {0};
	__u32 key = (__u32)pid;
	int err;

	if (!loc) {
		if (s->tctx_procs)
			bpf_map__delete_elem(s->skel->maps.threadctx_procs, &key, sizeof(key), 0);
		return 0;
	}
	if (!s->skel->rodata->want_threadctx || !s->skel->bss->tctx_fsbase_off) {
		if (!s->tctx_warned)
			pr_warn("process %d publishes OpenTelemetry thread context but this kernel "
				"has no BTF with task_struct.thread.fsbase (/sys/kernel/btf/vmlinux, "
				"CONFIG_DEBUG_INFO_BTF) to find its threads' TLS: its samples carry no "
				"trace/span links",
				pid);
		s->tctx_warned = true;
		return -EOPNOTSUPP;
	}
	val.off = (__u64)loc->off;
	val.modid = loc->modid;
	val.flags = loc->musl ? PROFCAP_TCTX_DTV_MUSL : 0;
	err = bpf_map__update_elem(s->skel->maps.threadctx_procs, &key, sizeof(key), &val,
				   sizeof(val), BPF_ANY);
	if (err) {
		pr_debug("thread context of process %d not read: %s (at most %u processes)", pid,
			 strerror(-err), PROFCAP_THREADCTX_PROCS);
		return err;
	}
	s->tctx_procs++;
	__atomic_store_n(&s->skel->bss->tctx_nprocs, s->tctx_procs, __ATOMIC_RELEASE);
	return 0;
}

static int skel_load(struct sampler *s, const struct sampler_opts *o, const struct forkhook *fh)
{
	struct btf *btf;
	__u64 pidns_dev = 0, pidns_ino = 0;
	__u32 entries;
	int k, err;

	s->skel = cpu_sampler__open();
	if (!s->skel)
		return -errno;
	s->skel->rodata->want_user = o->user;
	s->skel->rodata->want_kernel = o->kernel;
	s->skel->rodata->skip_idle = !o->idle;
	s->skel->rodata->filter_pids = o->npids > 0;
	s->skel->rodata->filter_tids = o->ntids > 0;
	s->skel->rodata->filter_comms = o->ncomms > 0;
	s->skel->rodata->filter_cgroups = (__u32)o->ncgroups;
	if (!own_pid_ns(&pidns_dev, &pidns_ino) && pidns_ino != PID_NS_INIT_INO) {
		/* Not the initial PID namespace: report PIDs as seen in ours. */
		s->skel->rodata->pidns_dev = pidns_dev;
		s->skel->rodata->pidns_ino = pidns_ino;
	}
	/* Exactly one fork program, or none, is loaded. */
	for (k = 0; k < FORKHOOK__COUNT; k++)
		bpf_program__set_autoload(fork_prog(s, (enum forkhook_kind)k),
					  fh && fh->kind == (enum forkhook_kind)k);
	if (fh) {
		s->skel->rodata->follow_forks = 1;
		if (fh->kind == FORKHOOK_TRACEPOINT)
			s->skel->rodata->fork_child_off = fh->off;
		else
			s->skel->rodata->fork_pid_off = fh->off;
		bpf_map__set_max_entries(s->skel->maps.followed, SAMPLER_FOLLOWED_MAX);
	}
	/* One drain interval (about a second) of samples from every CPU must
	 * fit in one generation, with room for two stacks per sample. */
	entries = clamp_entries(2ull * o->freq_hz * s->nonline + 1024);
	bpf_map__set_max_entries(s->skel->maps.counts0, entries);
	bpf_map__set_max_entries(s->skel->maps.counts1, entries);
	bpf_map__set_max_entries(s->skel->maps.stacks0, entries);
	bpf_map__set_max_entries(s->skel->maps.stacks1, entries);
	if (o->npids)
		bpf_map__set_max_entries(s->skel->maps.pids, (__u32)o->npids);
	if (o->ntids)
		bpf_map__set_max_entries(s->skel->maps.tids, (__u32)o->ntids);
	if (o->ncomms)
		bpf_map__set_max_entries(s->skel->maps.comms, (__u32)o->ncomms);
	if (o->ncgroups)
		bpf_map__set_max_entries(s->skel->maps.cgroups, (__u32)o->ncgroups);
	/* Kernel BTF, parsed once (5+ MB) for every offset the programs read. */
	btf = (o->user || o->off_cpu) && !access("/sys/kernel/btf/vmlinux", R_OK)
		      ? btf__load_vmlinux_btf()
		      : NULL;
	unwind_configure(s, o, entries, btf);
	threadctx_configure(s, o, btf);
	err = offcpu__configure(s->skel, o, entries, btf);
	btf__free(btf);
	if (!err)
		err = cpu_sampler__load(s->skel);
	if (err) {
		cpu_sampler__destroy(s->skel);
		s->skel = NULL;
	}
	return err;
}

/* Load the BPF object with the first fork hook that works here (see
 * collect/forkhook.h; PROFCAP_FORK_HOOK names one) and attach it. Logs. */
static int load_following(struct sampler *s, const struct sampler_opts *o)
{
	enum forkhook_kind first = FORKHOOK_RAW_TP, last = FORKHOOK_TRACEPOINT, k;
	const char *env = env__get(env__process(), FORKHOOK_ENV), *why = "";
	char reasons[512] = "";
	struct forkhook fh;
	size_t used = 0;
	int err = -ENOENT;

	if (env) {
		if (forkhook__parse(env, &first)) {
			pr_err("%s=%s names no fork hook: use tp_btf, raw_tp or tracepoint, or "
			       "unset "
			       "it",
			       FORKHOOK_ENV, env);
			return -EINVAL;
		}
		last = first;
	}
	for (k = first; k <= last; k++) {
		if (k == FORKHOOK_TP_BTF && !kver__at_least(5, 5)) {
			err = -EOPNOTSUPP;
			why = "needs Linux >= 5.5";
		} else if (!(err = forkhook__prepare(&fh, k, NULL, &why))) {
			err = skel_load(s, o, &fh);
			if (err == -EPERM || err == -EACCES) {
				forkhook__release(&fh);
				explain_load_error(err);
				return err;
			}
			if (err) {
				why = "the kernel refused the program";
			} else {
				s->fork_link = bpf_program__attach(fork_prog(s, k));
				if (!s->fork_link) {
					err = -errno;
					why = "attaching failed";
					cpu_sampler__destroy(s->skel);
					s->skel = NULL;
				}
			}
			forkhook__release(&fh);
		}
		if (!err) {
			pr_debug("following new processes through %s/sched_process_fork (%s)",
				 forkhook__name(k),
				 k == FORKHOOK_TRACEPOINT ? "tracefs format" : "kernel BTF");
			return 0;
		}
		pr_debug("fork hook %s unusable: %s (%s)", forkhook__name(k), why, strerror(-err));
		used += (size_t)snprintf(reasons + used, sizeof(reasons) - used, "%s%s: %s (%s)",
					 used ? "; " : "", forkhook__name(k), why, strerror(-err));
		if (used >= sizeof(reasons))
			used = sizeof(reasons) - 1;
	}
	pr_err("cannot follow new processes: %s; needs kernel BTF (CONFIG_DEBUG_INFO_BTF) or "
	       "tracefs: run as root so profcap can mount it, or mount it (mount -t tracefs "
	       "nodev /sys/kernel/tracing)",
	       reasons);
	return err;
}

struct sampler *sampler__new(const struct sampler_opts *o)
{
	struct sampler *s = NULL;
	bool *online = NULL;
	__u32 ncpus = 0, i;
	int err;

	libbpf_set_print(libbpf_print);
	if (!o->freq_hz || o->freq_hz > 100000) {
		pr_err("sampling frequency %u Hz is out of range (1..100000)", o->freq_hz);
		return NULL;
	}
	err = online_cpus(&online, &ncpus);
	if (err) {
		pr_err("cannot read the online CPU list: %s", strerror(-err));
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto err_nomem;
	s->ncpus = ncpus;
	s->rows_fd = -1;
	s->no_prealloc = kver__at_least(6, 1);
	s->pfds = malloc(ncpus * sizeof(*s->pfds));
	s->links = calloc(ncpus, sizeof(*s->links));
	if (!s->pfds || !s->links)
		goto err_nomem;
	for (i = 0; i < ncpus; i++) {
		s->pfds[i] = -1;
		s->nonline += online[i];
	}

	if (o->ncgroups > PROFCAP_MAX_CGROUPS) {
		pr_err("too many cgroups to filter on (%zu, at most %d)", o->ncgroups,
		       PROFCAP_MAX_CGROUPS);
		goto err_out;
	}
	if (o->follow_forks && o->npids) {
		err = load_following(s, o);
	} else {
		err = skel_load(s, o, NULL);
		if (err)
			explain_load_error(err);
	}
	if (err)
		goto err_out;
	err = unwind_open(s);
	if (!err)
		err = set_filters(s, o);
	if (!err)
		err = attach_events(s);
	if (!err)
		err = open_perf_events(s, online, o->freq_hz);
	if (err)
		goto err_out;
	free(online);
	return s;

err_nomem:
	pr_err("out of memory setting up the sampler");
err_out:
	free(online);
	sampler__free(s);
	return NULL;
}

int sampler__start(struct sampler *s)
{
	__u32 i;

	int err = offcpu__attach(s->skel, s->offcpu);

	if (err)
		return err;
	/* Attaching also enables each event, so sampling starts here. */
	for (i = 0; i < s->ncpus; i++) {
		if (s->pfds[i] < 0)
			continue;
		s->links[i] =
			bpf_program__attach_perf_event(s->skel->progs.profcap_sample, s->pfds[i]);
		if (!s->links[i]) {
			err = -errno;
			pr_err("cannot attach the BPF program to CPU %u: %s", i, strerror(-err));
			return err;
		}
	}
	if (s->unwind && !s->worker_on) {
		unwind_table__stats(s->unwind, &s->ut_stats);
		if (pthread_mutex_init(&s->mu, NULL) || pthread_cond_init(&s->cv, NULL) ||
		    pthread_create(&s->worker, NULL, worker_main, s)) {
			pr_err("cannot start the unwind table builder thread");
			return -EAGAIN;
		}
		s->worker_on = true;
	}
	return 0;
}

void sampler__stop(struct sampler *s)
{
	__u32 i;

	if (!s)
		return;
	for (i = 0; i < s->ncpus; i++)
		if (s->pfds[i] >= 0)
			ioctl(s->pfds[i], PERF_EVENT_IOC_DISABLE, 0);
	/* Waits that end after this are not counted. */
	for (i = 0; i < OFFCPU_LINKS; i++) {
		bpf_link__destroy(s->offcpu[i]);
		s->offcpu[i] = NULL;
	}
	/* No sample will use tables now: do not build them. */
	if (s->worker_on) {
		pthread_mutex_lock(&s->mu);
		s->stopped = true;
		s->pend_n = 0;
		pthread_mutex_unlock(&s->mu);
	}
}

int sampler__poll(struct sampler *s, int timeout_ms, sampler_proc_fn fn, void *ctx)
{
	int n;

	s->proc_fn = fn;
	s->proc_ctx = ctx;
	n = ring_buffer__poll(s->rb, timeout_ms);
	s->proc_fn = NULL;
	return n;
}

/* Double two parallel scratch arrays, *@a and *@b (elements of @asize and
 * @bsize bytes), that share the capacity *@cap (1024 the first time).
 * *@cap changes only when both grew; 0 or -ENOMEM. */
static int grow_scratch_pair(void **a, size_t asize, void **b, size_t bsize, __u32 *cap)
{
	__u32 ncap = *cap ? *cap * 2 : 1024;
	void *p;

	p = realloc(*a, ncap * asize);
	if (!p)
		return -ENOMEM;
	*a = p;
	p = realloc(*b, ncap * bsize);
	if (!p)
		return -ENOMEM;
	*b = p;
	*cap = ncap;
	return 0;
}

static int grow_scratch(struct sampler *s)
{
	return grow_scratch_pair((void **)&s->keys, sizeof(*s->keys), (void **)&s->vals,
				 sizeof(*s->vals), &s->cap);
}

/* Empty the idle generation's stack table. Keys are collected first: a
 * deleted key cannot serve as the iteration cursor, and restarting from the
 * first bucket after every delete would cost O(buckets) per entry. */
static int clear_stacks(struct sampler *s, int fd)
{
	__u64 next, *cur = NULL;
	__u32 n = 0, i;
	int err;

	while (!bpf_map_get_next_key(fd, cur, &next)) {
		if (n == s->nstack_keys_cap) {
			__u32 ncap = s->nstack_keys_cap ? s->nstack_keys_cap * 2 : 1024;
			__u64 *k = realloc(s->stack_keys, ncap * sizeof(*k));

			if (!k)
				return -ENOMEM;
			s->stack_keys = k;
			s->nstack_keys_cap = ncap;
		}
		s->stack_keys[n] = next;
		cur = &s->stack_keys[n++];
	}
	for (i = 0; i < n; i++) {
		err = bpf_map_delete_elem(fd, &s->stack_keys[i]);
		if (err && err != -ENOENT)
			return err;
	}
	return 0;
}

/* Look up the stacks of @r by hash and hand it to @fn. */
static int emit_record(struct sampler *s, struct sampler_record *r, __u64 ustack, __u64 kstack,
		       int sfd, int efd, sampler_record_fn fn, void *ctx)
{
	__u64 lost = r->kind == SAMPLER_KIND_CPU ? r->count : r->switches;

	r->comm[16] = '\0';
	if (ustack) {
		if (!bpf_map_lookup_elem(sfd, &ustack, &s->ust)) {
			r->ustack = s->ust.ips;
			r->nustack = (__u32)(s->ust.nr < PROFCAP_MAX_STACK ? s->ust.nr
									   : PROFCAP_MAX_STACK);
			if (s->ust.nr > PROFCAP_MAX_STACK && s->unwind) {
				r->ustack = s->uips;
				r->nustack = unwind_join(s, efd, ustack, s->ust.nr, &r->flags);
			}
		} else {
			s->stacks_missing += lost;
			r->flags |= PROFCAP_F_USTACK_LOST;
		}
	}
	if (kstack) {
		if (!bpf_map_lookup_elem(sfd, &kstack, &s->kst)) {
			r->kstack = s->kst.ips;
			r->nkstack = (__u32)(s->kst.nr < PROFCAP_MAX_STACK ? s->kst.nr
									   : PROFCAP_MAX_STACK);
		} else {
			s->stacks_missing += lost;
			r->flags |= PROFCAP_F_KSTACK_LOST;
		}
	}
	return fn(ctx, r);
}

static int grow_offcpu_scratch(struct sampler *s)
{
	return grow_scratch_pair((void **)&s->okeys, sizeof(*s->okeys), (void **)&s->ovals,
				 sizeof(*s->ovals), &s->ocap);
}

/* The off-CPU counters of the idle generation: snapshot, emit, delete. */
static int drain_offcpu(struct sampler *s, __u32 idle, int sfd, int efd, sampler_record_fn fn,
			void *ctx)
{
	int cfd = bpf_map__fd(idle ? s->skel->maps.offcpu_counts1 : s->skel->maps.offcpu_counts0);
	struct offcpu_key key, next;
	__u32 n = 0, i;
	bool have = false;
	int err = 0;

	while (!bpf_map_get_next_key(cfd, have ? &key : NULL, &next)) {
		if (n == s->ocap) {
			err = grow_offcpu_scratch(s);
			if (err)
				return err;
		}
		if (!bpf_map_lookup_elem(cfd, &next, &s->ovals[n]))
			s->okeys[n++] = next;
		key = next;
		have = true;
	}
	for (i = 0; i < n && !err; i++) {
		const struct offcpu_key *k = &s->okeys[i];
		struct sampler_record r = {
			.kind = SAMPLER_KIND_OFF_CPU,
			.state = (enum sampler_state)k->state,
			.switches = s->ovals[i].switches,
			.tgid = k->tgid,
			.tid = k->tid,
			.flags = k->flags,
			.count = s->ovals[i].ns,
		};

		memcpy(r.comm, k->comm, 16);
		memcpy(r.trace_id, k->trace_id, sizeof(r.trace_id));
		memcpy(r.span_id, &k->span_id, sizeof(r.span_id));
		err = emit_record(s, &r, k->ustack, k->kstack, sfd, efd, fn, ctx);
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(cfd, &s->okeys[i]);
	return err;
}

int sampler__drain(struct sampler *s, sampler_record_fn fn, void *ctx)
{
	const struct timespec settle = {0, SAMPLER_GEN_SETTLE_NS};
	struct sample_key key, next;
	int cfd, sfd, efd, err = 0;
	__u32 n = 0, i, idle;
	bool have = false;

	idle = s->skel->bss->gen & 1;
	__atomic_store_n(&s->skel->bss->gen, idle ^ 1, __ATOMIC_SEQ_CST);
	nanosleep(&settle, NULL);
	s->drains++;

	cfd = bpf_map__fd(idle ? s->skel->maps.counts1 : s->skel->maps.counts0);
	sfd = bpf_map__fd(idle ? s->skel->maps.stacks1 : s->skel->maps.stacks0);
	efd = bpf_map__fd(idle ? s->skel->maps.ustack_ext1 : s->skel->maps.ustack_ext0);

	/* Snapshot every key and count first: the generation is idle, so
	 * nothing changes under us. */
	while (!bpf_map_get_next_key(cfd, have ? &key : NULL, &next)) {
		if (n == s->cap) {
			err = grow_scratch(s);
			if (err)
				goto out;
		}
		if (!bpf_map_lookup_elem(cfd, &next, &s->vals[n]))
			s->keys[n++] = next;
		key = next;
		have = true;
	}
	for (i = 0; i < n && !err; i++) {
		const struct sample_key *k = &s->keys[i];
		struct sampler_record r = {
			.tgid = k->tgid,
			.tid = k->tid,
			.flags = k->flags,
			.count = s->vals[i],
		};

		memcpy(r.comm, k->comm, 16);
		memcpy(r.trace_id, k->trace_id, sizeof(r.trace_id));
		memcpy(r.span_id, &k->span_id, sizeof(r.span_id));
		r.attrs_size = k->attrs_size;
		memcpy(r.attrs, k->attrs, sizeof(r.attrs));
		err = emit_record(s, &r, k->ustack, k->kstack, sfd, efd, fn, ctx);
	}
	{ /* the full generation is the high-water mark */
		__u64 mem = bpf_memory(s);

		if (mem > s->bpf_peak)
			s->bpf_peak = mem;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(cfd, &s->keys[i]);
	if (!err && bpf_program__autoload(s->skel->progs.profcap_sys_exit)) {
		offcpu__poll(s->skel, s->offcpu); /* a failure is warned, not fatal */
		err = drain_offcpu(s, idle, sfd, efd, fn, ctx);
	}
	if (!err)
		err = clear_stacks(s, sfd);
	if (!err && s->unwind)
		err = clear_stacks(s, efd);
out:
	return err;
}

void sampler__stats(const struct sampler *s, struct sampler_stats *st)
{
	__u64 *vals = NULL;
	int ncpu = libbpf_num_possible_cpus(), fd;
	__u32 k;

	memset(st, 0, sizeof(*st));
	st->ncpus = s->nonline;
	st->drains = s->drains;
	st->stacks_missing = s->stacks_missing;
	st->bpf_bytes = bpf_memory(s);
	st->first_sample_ns = s->skel->bss->first_sample_ns;
	st->bpf_peak_bytes = st->bpf_bytes > s->bpf_peak ? st->bpf_bytes : s->bpf_peak;
	if (ncpu <= 0)
		return;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return;
	fd = bpf_map__fd(s->skel->maps.stats);
	for (k = 0; k < STAT__COUNT; k++) {
		__u64 sum = 0;
		int c;

		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (c = 0; c < ncpu; c++)
			sum += vals[c];
		switch (k) {
		case STAT_SAMPLES:
			st->samples = sum;
			break;
		case STAT_COUNTS_FULL:
			st->counts_full = sum;
			break;
		case STAT_USTACK_ERR:
			st->ustack_err = sum;
			break;
		case STAT_KSTACK_ERR:
			st->kstack_err = sum;
			break;
		case STAT_STACKS_FULL:
			st->stacks_full = sum;
			break;
		case STAT_EVENTS_LOST:
			st->events_lost = sum;
			break;
		case STAT_FOREIGN:
			st->foreign = sum;
			break;
		case STAT_TCTX_LINKED:
			st->tctx_linked = sum;
			break;
		case STAT_TCTX_NONE:
			st->tctx_none = sum;
			break;
		case STAT_TCTX_BAD:
			st->tctx_bad = sum;
			break;
		}
	}
	free(vals);
	offcpu__stats(s->skel, st);
}

void sampler__free(struct sampler *s)
{
	__u32 i;

	if (!s)
		return;
	if (s->worker_on) {
		bool busy;

		pthread_mutex_lock(&s->mu);
		s->quit = true;
		busy = s->busy;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		if (busy) {
			/* In a parse (a large binary on a busy host can take
			 * seconds): nothing needs it any more, and the process
			 * is about to exit. Leave it what it uses. */
			pthread_detach(s->worker);
			return;
		}
		pthread_join(s->worker, NULL);
	}
	ring_buffer__free(s->rb);
	bpf_link__destroy(s->fork_link);
	bpf_link__destroy(s->exec_link);
	for (i = 0; i < OFFCPU_LINKS; i++)
		bpf_link__destroy(s->offcpu[i]);
	for (i = 0; s->links && i < s->ncpus; i++)
		bpf_link__destroy(s->links[i]);
	for (i = 0; s->pfds && i < s->ncpus; i++)
		if (s->pfds[i] >= 0)
			close(s->pfds[i]);
	unwind_table__free(s->unwind);
	free(s->slot_mem);
	free(s->slot_key);
	cpu_sampler__destroy(s->skel);
	free(s->links);
	free(s->pfds);
	free(s->keys);
	free(s->vals);
	free(s->okeys);
	free(s->ovals);
	free(s->stack_keys);
	free(s);
}
