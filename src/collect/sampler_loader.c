/* sampler_loader.c - configure and load the sampler's BPF object: filters,
 * map sizes, the kernel offsets its programs read (from kernel BTF), the
 * fork hook; and the operator's explanation when the kernel refuses it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "collect/forkhook.h"
#include "collect/kbtf.h"
#include "collect/kver.h"
#include "collect/sampler_int.h"
#include "collect/sampler_times.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/log.h"

/* Distinct keys (and stacks) one generation can hold. Sized from the sample
 * rate so that a drain interval's worth of samples always fits. */
#define SAMPLER_MIN_ENTRIES 1024u
#define SAMPLER_MAX_ENTRIES 65536u

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

int loader__set_filters(struct sampler *s, const struct sampler_opts *o)
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

void loader__explain(int err)
{
	bool privileged = cpus__privileged() == 1;

	if (err == -EACCES && privileged) /* the verifier's "invalid access" */
		pr_err("the kernel's BPF verifier rejected profcap's program (%s): this kernel "
		       "lacks something it needs; rerun with -v for the verifier log and report it "
		       "with the kernel version (uname -r)",
		       strerror(-err));
	else if (err == -EPERM && privileged)
		pr_err("the kernel refused to load the BPF program (%s) although profcap has "
		       "CAP_BPF/CAP_SYS_ADMIN: kernel lockdown or a security policy (SELinux, "
		       "AppArmor, BPF LSM) forbids it; rerun with -v for the details",
		       strerror(-err));
	else if (err == -EPERM || err == -EACCES)
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

static __u32 clamp_entries(__u64 want)
{
	if (want < SAMPLER_MIN_ENTRIES)
		return SAMPLER_MIN_ENTRIES;
	if (want > SAMPLER_MAX_ENTRIES)
		return SAMPLER_MAX_ENTRIES;
	return (__u32)want;
}

/* Let the BPF walker find mappings from the kernel's VMAs (Linux >= 5.17
 * with BTF): the offsets of the fields it reads. Off when any is missing. */
static void unwind_vma_configure(struct sampler *s, const struct btf *btf)
{
	struct cpu_sampler__rodata *r = s->skel->rodata;

	if (!kver__at_least(5, 17) || !btf)
		return;
	if (!kbtf__member_off(btf, "vm_area_struct", "vm_start", (__u32 *)&r->vma_start_off) &&
	    !kbtf__member_off(btf, "vm_area_struct", "vm_end", (__u32 *)&r->vma_end_off) &&
	    !kbtf__member_off(btf, "vm_area_struct", "vm_pgoff", (__u32 *)&r->vma_pgoff_off) &&
	    !kbtf__member_off(btf, "vm_area_struct", "vm_file", (__u32 *)&r->vma_file_off) &&
	    !kbtf__member_off(btf, "file", "f_inode", (__u32 *)&r->file_inode_off) &&
	    !kbtf__member_off(btf, "inode", "i_ino", (__u32 *)&r->inode_ino_off) &&
	    !kbtf__member_off(btf, "inode", "i_sb", (__u32 *)&r->inode_sb_off) &&
	    !kbtf__member_off(btf, "super_block", "s_dev", (__u32 *)&r->sb_dev_off))
		r->unwind_vma = 1;
	/* The VMAs found, kept per process: see bpf/cpu_sampler/unwind.bpf.c. */
	if (r->unwind_vma && !kbtf__member_off(btf, "task_struct", "mm", (__u32 *)&r->task_mm_off))
		bpf_map__set_max_entries(s->skel->maps.unwind_vcache, SAMPLER_VCACHE_PROCS);
	/* ... and programs' text mappings, found at their exec */
	if (r->task_mm_off &&
	    !kbtf__member_off(btf, "mm_struct", "start_code", (__u32 *)&r->mm_start_code_off))
		bpf_map__set_max_entries(s->skel->maps.unwind_exec_map, SAMPLER_VCACHE_PROCS);
	/* Walks that need a mapping the VMA lookup could not give finish in
	 * user space (collect/late.h). */
	if (r->unwind_vma) {
		r->want_late = 1;
		bpf_map__set_max_entries(s->skel->maps.late, SAMPLER_LATE_RING);
	}
}

static void no_prealloc(struct bpf_map *m)
{
	bpf_map__set_map_flags(m, bpf_map__map_flags(m) | BPF_F_NO_PREALLOC);
}

/* The row store's cap: @o's, else PROFCAP_UNWIND_ROWS when smaller than
 * the default (a soak test fills a small store to see tables reclaimed). */
static __u32 row_cap(const struct sampler_opts *o)
{
	const char *env = env__get(env__process(), "PROFCAP_UNWIND_ROWS");
	unsigned long rows = env ? strtoul(env, NULL, 10) : 0;

	if (o->unwind_rows)
		return o->unwind_rows;
	return rows > 0 && rows < SAMPLER_UNWIND_ROWS ? (__u32)rows : SAMPLER_UNWIND_ROWS;
}

/* Before load: size the unwinder's maps and switch it on. Its hash maps
 * take memory as entries are added where the kernel lets perf_event
 * programs use them so (Linux >= 6.1; the program only writes the deep-stack
 * tails, rarely); before, they are preallocated, the deep-stack maps sized
 * from the sample rate (@entries: distinct stacks of one drain interval). */
void loader__configure_unwind(struct sampler *s, const struct sampler_opts *o, __u32 entries,
			     const struct btf *btf)
{
	__u32 ext = s->no_prealloc ? SAMPLER_USTACK_EXT_MAX : entries / 4;

	if (!o->unwind || !o->user)
		return;
	s->skel->rodata->want_unwind = 1;
	/* Kernel-mode samples need the task's user registers: kernel BTF and
	 * bpf_task_pt_regs() (Linux >= 5.15); without, they use frame pointers
	 * and are flagged partial. */
	s->skel->rodata->unwind_task_regs =
		!access("/sys/kernel/btf/vmlinux", R_OK) && kver__at_least(5, 15);
	s->t.max_rows = row_cap(o);
	unwind_vma_configure(s, btf);
	/* A new process's start time with its notice (bpf/cpu_sampler/notice.bpf.h). */
	if (btf && kbtf__member_off(btf, "task_struct", "group_leader",
				    (__u32 *)&s->skel->rodata->task_leader_off))
		s->skel->rodata->task_leader_off = 0;
	if (btf && kbtf__member_off(btf, "task_struct", "start_boottime",
				    (__u32 *)&s->skel->rodata->task_start_off))
		s->skel->rodata->task_start_off = 0;
	if (btf && kbtf__member_off(btf, "task_struct", "cgroups",
				    (__u32 *)&s->skel->rodata->task_cgroups_off))
		s->skel->rodata->task_cgroups_off = 0;
	/* ... and its command line (with task_struct.mm, set with the VMA cache). */
	if (btf && s->skel->rodata->task_mm_off &&
	    (kbtf__member_off(btf, "mm_struct", "arg_start",
			      (__u32 *)&s->skel->rodata->mm_arg_start_off) ||
	     kbtf__member_off(btf, "mm_struct", "arg_end",
			      (__u32 *)&s->skel->rodata->mm_arg_end_off)))
		s->skel->rodata->mm_arg_start_off = s->skel->rodata->mm_arg_end_off = 0;
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

static struct bpf_program *fork_prog(struct cpu_sampler *skel, enum forkhook_kind kind)
{
	switch (kind) {
	case FORKHOOK_TP_BTF:
		return skel->progs.profcap_fork_btf;
	case FORKHOOK_RAW_TP:
		return skel->progs.profcap_fork_raw;
	default:
		return skel->progs.profcap_fork_tp;
	}
}

/* Thread context needs user stacks and task_struct.thread.fsbase (x86_64:
 * the user thread pointer as saved for the task) from kernel BTF @btf;
 * then each sample of a process without an entry costs one map lookup. */
static void threadctx_configure(struct sampler *s, const struct sampler_opts *o,
				const struct btf *btf)
{
	__u32 thread = 0, fsbase = 0;

	if (!o->user)
		return;
	s->skel->rodata->want_threadctx = btf != NULL;
	if (!btf)
		return;
	if (!kbtf__member_off(btf, "task_struct", "thread", &thread) &&
	    !kbtf__member_off(btf, "thread_struct", "fsbase", &fsbase) && thread + fsbase)
		s->skel->bss->tctx_fsbase_off = (__u64)thread + fsbase;
	bpf_map__set_max_entries(s->skel->maps.threadctx_procs, PROFCAP_THREADCTX_PROCS);
	if (s->no_prealloc)
		no_prealloc(s->skel->maps.threadctx_procs);
}

/* Before load: what both objects (the full one and the start-up one) are
 * configured alike with: filters, PID namespace, fork hook @fh (NULL: none),
 * sizes of the sample maps. Returns the sample maps' size. */
__u32 loader__configure_common(struct sampler *s, struct cpu_sampler *skel,
			      const struct sampler_opts *o, const struct forkhook *fh)
{
	__u64 pidns_dev = 0, pidns_ino = 0;
	__u32 entries;
	int k;

	skel->rodata->want_user = o->user;
	skel->rodata->want_kernel = o->kernel;
	skel->rodata->skip_idle = !o->idle;
	skel->rodata->filter_pids = o->npids > 0;
	skel->rodata->filter_tids = o->ntids > 0;
	skel->rodata->filter_comms = o->ncomms > 0;
	skel->rodata->filter_cgroups = (__u32)o->ncgroups;
	if (!own_pid_ns(&pidns_dev, &pidns_ino) && pidns_ino != PID_NS_INIT_INO) {
		/* Not the initial PID namespace: report PIDs as seen in ours. */
		skel->rodata->pidns_dev = pidns_dev;
		skel->rodata->pidns_ino = pidns_ino;
	}
	/* Exactly one fork program, or none, is loaded. */
	for (k = 0; k < FORKHOOK__COUNT; k++)
		bpf_program__set_autoload(fork_prog(skel, (enum forkhook_kind)k),
					  fh && fh->kind == (enum forkhook_kind)k);
	if (fh) {
		skel->rodata->follow_forks = 1;
		if (fh->kind == FORKHOOK_TRACEPOINT)
			skel->rodata->fork_child_off = fh->off;
		else
			skel->rodata->fork_pid_off = fh->off;
		bpf_map__set_max_entries(skel->maps.followed, SAMPLER_FOLLOWED_MAX);
	}
	/* One drain interval (about a second) of samples from every CPU must
	 * fit in one generation, with room for two stacks per sample. */
	entries = clamp_entries(2ull * o->freq_hz * s->nonline + 1024);
	bpf_map__set_max_entries(skel->maps.counts0, entries);
	bpf_map__set_max_entries(skel->maps.counts1, entries);
	bpf_map__set_max_entries(skel->maps.stacks0, entries);
	bpf_map__set_max_entries(skel->maps.stacks1, entries);
	times__configure(skel, o);
	/* Where the kernel allows it (Linux >= 6.1), the four sample maps
	 * take memory as stacks are added: preallocated (1 KiB per stack
	 * entry, each put on a free list), they would be most of a short
	 * capture's map memory and of the maps' creation time. */
	if (s->no_prealloc) {
		no_prealloc(skel->maps.counts0);
		no_prealloc(skel->maps.counts1);
		no_prealloc(skel->maps.stacks0);
		no_prealloc(skel->maps.stacks1);
	}
	if (o->npids)
		bpf_map__set_max_entries(skel->maps.pids, (__u32)o->npids);
	if (o->ntids)
		bpf_map__set_max_entries(skel->maps.tids, (__u32)o->ntids);
	if (o->ncomms)
		bpf_map__set_max_entries(skel->maps.comms, (__u32)o->ncomms);
	if (o->ncgroups)
		bpf_map__set_max_entries(skel->maps.cgroups, (__u32)o->ncgroups);
	return entries;
}

/* With -v: the verifier's work on @prog (kernel >= 5.16 counts it) and
 * the load's wall time, @ns. */
void loader__verifier_report(const struct bpf_program *prog, __u64 ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	if (log__level() < LOG_VERBOSE)
		return;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		info.verified_insns = 0;
	pr_debug("%s: %u instructions, %u verified, loaded in %.1f ms", bpf_program__name(prog),
		 info.xlated_prog_len / 8, info.verified_insns, ns / 1e6);
}

/* The sampling program of the full object: the one loaded. */
struct bpf_program *loader__sample_prog(const struct cpu_sampler *skel)
{
	return bpf_program__autoload(skel->progs.profcap_sample)
		       ? skel->progs.profcap_sample
		       : skel->progs.profcap_sample_bounded;
}

/* The kernel structs whose members the programs read (unwind_vma_configure(),
 * threadctx_configure(), offcpu__configure()): a configure function that
 * reads another struct needs it added here. */
static const char *const kernel_structs[] = {
	"task_struct", "thread_struct", "vm_area_struct", "file",
	"inode",       "super_block",	"sched_entity",	  "cfs_rq",
	"rq",	       "bpf_task_work", "mm_struct",
};

/* Kernel BTF of those structs (collect/kbtf.h: much faster than libbpf's
 * parse of it all), NULL without BTF. The caller frees it. */
static struct btf *kernel_btf(void)
{
	struct btf *btf;

	if (access(KBTF_VMLINUX, R_OK))
		return NULL;
	btf = kbtf__load(KBTF_VMLINUX, kernel_structs,
			 sizeof(kernel_structs) / sizeof(kernel_structs[0]));
	if (btf)
		return btf;
	pr_debug("fast read of %s failed (%s): parsing all of it", KBTF_VMLINUX, strerror(errno));
	return btf__load_vmlinux_btf();
}

/* Open the sampler's BPF object: one object for every kernel, its
 * variants chosen before load (autoload, rodata, offcpu.c's links). NULL
 * with errno on failure. */
struct cpu_sampler *loader__open(void)
{
	return cpu_sampler__open();
}

/* Open, configure and load the full BPF object into s->skel, with fork
 * hook @fh (NULL: no fork following). With a start-up object (s->l.quick),
 * its sample maps are shared and it keeps the exec hook. On failure the
 * skeleton is gone again; logs nothing. */
int loader__load(struct sampler *s, const struct sampler_opts *o, const struct forkhook *fh)
{
	struct btf *btf;
	__u32 entries;
	__u64 t0;
	int err;

	t0 = clock__mono_ns();
	btf = o->user || o->off_cpu ? kernel_btf() : NULL;
	s->l.btf_ns = clock__mono_ns() - t0;
	s->skel = loader__open();
	if (!s->skel) {
		err = -errno;
		btf__free(btf);
		return err;
	}
	entries = loader__configure_common(s, s->skel, o, fh);
	bpf_program__set_autoload(s->skel->progs.profcap_quick, false);
	/* bpf_loop() (Linux >= 5.17): the verifier checks one frame of the
	 * walk instead of every one of them. */
	bpf_program__set_autoload(s->skel->progs.profcap_sample, kver__at_least(5, 17));
	bpf_program__set_autoload(s->skel->progs.profcap_sample_bounded, !kver__at_least(5, 17));
	bpf_map__set_autocreate(s->skel->maps.handover, false);
	err = s->l.quick ? quick__share_maps(s->skel, s->l.quick, &s->tfd) : 0;
	loader__configure_unwind(s, o, entries, btf);
	threadctx_configure(s, o, btf);
	python__configure(s, o);
	php__configure(s, o);
	ruby__configure(s, o);
	perl__configure(s, o);
	jvm__configure(s, o);
	if (!err)
		err = offcpu__configure(s->skel, o, entries, btf);
	btf__free(btf);
	t0 = clock__mono_ns();
	if (!err)
		err = cpu_sampler__load(s->skel);
	if (err) {
		cpu_sampler__destroy(s->skel);
		s->skel = NULL;
		return err;
	}
	loader__verifier_report(loader__sample_prog(s->skel), clock__mono_ns() - t0);
	return 0;
}

/* Load the BPF object with the first fork hook that works here (see
 * collect/forkhook.h; PROFCAP_FORK_HOOK names one) and attach it. Logs. */
int loader__load_following(struct sampler *s, const struct sampler_opts *o)
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
			err = loader__load(s, o, &fh);
			if (err == -EPERM || err == -EACCES) {
				forkhook__release(&fh);
				loader__explain(err);
				return err;
			}
			if (err) {
				why = "the kernel refused the program";
			} else {
				s->fork_link = bpf_program__attach(fork_prog(s->skel, k));
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
