#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.h"
#include "cpu_sampler.skel.h"
#include "util/env.h"
#include "util/log.h"
#include "collect/forkhook.h"
#include "collect/sampler.h"
#include "collect/unwind_table.h"

/* Distinct keys (and stacks) one generation can hold. Sized from the sample
 * rate so that a drain interval's worth of samples always fits. */
#define SAMPLER_MIN_ENTRIES 4096u
#define SAMPLER_MAX_ENTRIES 65536u

/* Time for programs that read the old generation number to finish. A
 * perf_event program runs for microseconds with preemption disabled. */
#define SAMPLER_GEN_SETTLE_NS 2000000L

struct sampler {
	struct cpu_sampler *skel;
	int *pfds;
	struct bpf_link **links;
	struct bpf_link *fork_link; /* fork following, when asked */
	__u32 ncpus;		    /* size of pfds/links: highest online CPU + 1 */
	__u32 nonline;
	struct ring_buffer *rb;
	sampler_proc_fn proc_fn;
	void *proc_ctx;
	__u64 stacks_missing;
	__u64 drains;
	/* table unwinding (issue 4) */
	struct unwind_table *unwind;
	void *rows_mem;
	size_t rows_len;
	__u64 uips[PROFCAP_MAX_USTACK];
	/* drain scratch */
	struct stack_trace ust, kst;
	__u64 *stack_keys;
	__u32 nstack_keys_cap;
	struct sample_key *keys;
	__u64 *vals;
	__u32 cap;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || log__level() < LOG_VERBOSE)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int read_caps(__u64 *eff)
{
	char line[256];
	FILE *f;
	int err = -ENOENT;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "CapEff:", 7)) {
			*eff = strtoull(line + 7, NULL, 16);
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

int sampler__check_privileges(void)
{
	const int cap_sys_admin = 21, cap_perfmon = 38, cap_bpf = 39;
	__u64 eff = 0;

	if (read_caps(&eff))
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

static int on_event(void *ctx, void *data, size_t len)
{
	struct sampler *s = ctx;
	const struct proc_event *e = data;

	if (len >= sizeof(*e) && s->proc_fn)
		s->proc_fn(s->proc_ctx, e->tgid);
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

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

static int unwind_del_map(void *ctx, const struct unwind_map_key *k)
{
	struct sampler *s = ctx;

	return bpf_map__delete_elem(s->skel->maps.unwind_maps, k, sizeof(*k), 0);
}

static int unwind_del_proc(void *ctx, __u32 tgid)
{
	struct sampler *s = ctx;

	return bpf_map__delete_elem(s->skel->maps.unwind_procs, &tgid, sizeof(tgid), 0);
}

/* Before load: size the unwinder's maps and switch it on. */
static void unwind_configure(struct sampler *s, const struct sampler_opts *o)
{
	__u32 rows = o->unwind_rows ? o->unwind_rows : SAMPLER_UNWIND_ROWS;

	if (!o->unwind || !o->user)
		return;
	s->skel->rodata->want_unwind = 1;
	/* Kernel-mode samples need the task's user registers: kernel BTF and
	 * bpf_task_pt_regs() (Linux >= 5.15); without, they use frame pointers
	 * and are flagged partial. */
	s->skel->rodata->unwind_task_regs =
		!access("/sys/kernel/btf/vmlinux", R_OK) && kernel_at_least(5, 15);
	bpf_map__set_max_entries(s->skel->maps.unwind_rows, rows);
	bpf_map__set_map_flags(s->skel->maps.unwind_rows,
			       bpf_map__map_flags(s->skel->maps.unwind_rows) | BPF_F_MMAPABLE);
	bpf_map__set_max_entries(s->skel->maps.unwind_maps, SAMPLER_UNWIND_MAPS);
	bpf_map__set_max_entries(s->skel->maps.unwind_procs, UNWIND_TABLE_MAX_PROCS);
	bpf_map__set_max_entries(s->skel->maps.ustack_ext0, SAMPLER_USTACK_EXT_MAX);
	bpf_map__set_max_entries(s->skel->maps.ustack_ext1, SAMPLER_USTACK_EXT_MAX);
}

/* After load: map the row store and create the table builder. */
static int unwind_open(struct sampler *s)
{
	struct unwind_table_sink sink = {
		.set_map = unwind_set_map,
		.set_proc = unwind_set_proc,
		.del_map = unwind_del_map,
		.del_proc = unwind_del_proc,
		.ctx = s,
	};
	int err;

	if (!s->skel->rodata->want_unwind)
		return 0;
	sink.max_rows = bpf_map__max_entries(s->skel->maps.unwind_rows);
	sink.max_maps = SAMPLER_UNWIND_MAPS;
	s->rows_len = (size_t)sink.max_rows * sizeof(__u64);
	s->rows_mem = mmap(NULL, s->rows_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			   bpf_map__fd(s->skel->maps.unwind_rows), 0);
	if (s->rows_mem == MAP_FAILED) {
		err = -errno;
		s->rows_mem = NULL;
		pr_err("cannot map the unwind row store (%s): needs Linux >= 5.5; use "
		       "--no-unwind for frame pointers only",
		       strerror(-err));
		return err;
	}
	sink.rows = s->rows_mem;
	s->unwind = unwind_table__new(&sink, "/proc");
	if (!s->unwind)
		return -ENOMEM;
	return 0;
}

_Static_assert(SAMPLER_MAX_KSTACK == PROFCAP_MAX_STACK, "kernel stack depth");
_Static_assert(SAMPLER_MAX_USTACK == PROFCAP_MAX_USTACK, "user stack depth");
_Static_assert(SAMPLER_REC_USTACK_ERR == PROFCAP_F_USTACK_ERR &&
		       SAMPLER_REC_USTACK_TRUNC == PROFCAP_F_USTACK_TRUNC &&
		       SAMPLER_REC_KSTACK_TRUNC == PROFCAP_F_KSTACK_TRUNC &&
		       SAMPLER_REC_USTACK_PARTIAL == PROFCAP_F_USTACK_PARTIAL,
	       "record flags are the BPF program's");

int sampler__add_process(struct sampler *s, int pid)
{
	return s->unwind ? unwind_table__add_process(s->unwind, pid) : 0;
}

int sampler__refresh_process(struct sampler *s, int pid)
{
	return s->unwind ? unwind_table__refresh(s->unwind, pid) : 0;
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
	unwind_table__stats(s->unwind, &st->tables);
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

/* Open, configure and load the BPF object, with fork hook @fh (NULL: no
 * fork following). On failure the skeleton is gone again; logs nothing. */
static int skel_load(struct sampler *s, const struct sampler_opts *o, const struct forkhook *fh)
{
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
	unwind_configure(s, o);

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
		if (k == FORKHOOK_TP_BTF && !kernel_at_least(5, 5)) {
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
	if (err)
		goto err_out;
	err = set_filters(s, o);
	if (err)
		goto err_out;
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_event, s, NULL);
	if (!s->rb) {
		err = -errno;
		pr_err("cannot open the BPF ring buffer: %s (needs Linux >= 5.8)", strerror(-err));
		goto err_out;
	}

	for (i = 0; i < ncpus; i++) {
		if (!online[i])
			continue;
		s->pfds[i] = perf_open_cpu((int)i, o->freq_hz);
		if (s->pfds[i] < 0) {
			err = -errno;
			if (err == -EACCES || err == -EPERM)
				pr_err("perf events are not permitted (%s): run as root or grant "
				       "CAP_PERFMON, or lower kernel.perf_event_paranoid "
				       "(sysctl -w kernel.perf_event_paranoid=-1)",
				       strerror(-err));
			else if (err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP)
				pr_err("the cpu-clock perf event is unavailable on CPU %u (%s): "
				       "the "
				       "kernel needs CONFIG_PERF_EVENTS",
				       i, strerror(-err));
			else if (err == -EMFILE)
				pr_err("out of file descriptors opening perf events for %u CPUs: "
				       "raise the limit with 'ulimit -n'",
				       ncpus);
			else
				pr_err("perf_event_open on CPU %u failed: %s", i, strerror(-err));
			goto err_out;
		}
	}
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

	/* Attaching also enables each event, so sampling starts here. */
	for (i = 0; i < s->ncpus; i++) {
		if (s->pfds[i] < 0)
			continue;
		s->links[i] =
			bpf_program__attach_perf_event(s->skel->progs.profcap_sample, s->pfds[i]);
		if (!s->links[i]) {
			int err = -errno;

			pr_err("cannot attach the BPF program to CPU %u: %s", i, strerror(-err));
			return err;
		}
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

static int grow_scratch(struct sampler *s)
{
	__u32 ncap = s->cap ? s->cap * 2 : 1024;
	struct sample_key *k;
	__u64 *v;

	k = realloc(s->keys, ncap * sizeof(*k));
	if (!k)
		return -ENOMEM;
	s->keys = k;
	v = realloc(s->vals, ncap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->vals = v;
	s->cap = ncap;
	return 0;
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
	for (i = 0; i < n; i++) {
		const struct sample_key *k = &s->keys[i];
		struct sampler_record r = {
			.tgid = k->tgid,
			.tid = k->tid,
			.flags = k->flags,
			.count = s->vals[i],
		};

		memcpy(r.comm, k->comm, 16);
		r.comm[16] = '\0';
		if (k->ustack) {
			if (!bpf_map_lookup_elem(sfd, &k->ustack, &s->ust)) {
				r.ustack = s->ust.ips;
				r.nustack =
					(__u32)(s->ust.nr < PROFCAP_MAX_STACK ? s->ust.nr
									      : PROFCAP_MAX_STACK);
				if (s->ust.nr > PROFCAP_MAX_STACK && s->unwind) {
					r.ustack = s->uips;
					r.nustack =
						unwind_join(s, efd, k->ustack, s->ust.nr, &r.flags);
				}
			} else {
				s->stacks_missing += r.count;
				r.flags |= PROFCAP_F_USTACK_LOST;
			}
		}
		if (k->kstack) {
			if (!bpf_map_lookup_elem(sfd, &k->kstack, &s->kst)) {
				r.kstack = s->kst.ips;
				r.nkstack =
					(__u32)(s->kst.nr < PROFCAP_MAX_STACK ? s->kst.nr
									      : PROFCAP_MAX_STACK);
			} else {
				s->stacks_missing += r.count;
				r.flags |= PROFCAP_F_KSTACK_LOST;
			}
		}
		err = fn(ctx, &r);
		if (err)
			break;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(cfd, &s->keys[i]);
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
		}
	}
	free(vals);
}

void sampler__free(struct sampler *s)
{
	__u32 i;

	if (!s)
		return;
	ring_buffer__free(s->rb);
	bpf_link__destroy(s->fork_link);
	for (i = 0; s->links && i < s->ncpus; i++)
		bpf_link__destroy(s->links[i]);
	for (i = 0; s->pfds && i < s->ncpus; i++)
		if (s->pfds[i] >= 0)
			close(s->pfds[i]);
	unwind_table__free(s->unwind);
	if (s->rows_mem)
		munmap(s->rows_mem, s->rows_len);
	cpu_sampler__destroy(s->skel);
	free(s->links);
	free(s->pfds);
	free(s->keys);
	free(s->vals);
	free(s->stack_keys);
	free(s);
}
