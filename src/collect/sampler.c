/* sampler.c - the sampler's life cycle: new, start, stop, free, and the
 * side-band records (see sampler.h; its parts: sampler_int.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "collect/kver.h"
#include "collect/late.h"
#include "collect/sampler_int.h"
#include "collect/sideband.h"
#include "proc/mapev.h"
#include "proc/threadctx.h"
#include "util/clock.h"
#include "util/log.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || log__level() < LOG_VERBOSE)
		return 0;
	return vfprintf(stderr, fmt, ap);
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
				"has no BTF with task_struct.thread.fsbase "
				"(/sys/kernel/btf/vmlinux, "
				"CONFIG_DEBUG_INFO_BTF) to find its threads' TLS: its samples "
				"carry no "
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

int sampler__process_maps(struct sampler *s, int pid, struct procmaps **out)
{
	int err;

	*out = NULL;
	if (!s->sb || pid <= 0)
		return -ENOENT;
	pthread_mutex_lock(&s->sb_mu);
	sideband__drain(s->sb, s->mev, clock__mono_ns());
	err = mapev__maps(s->mev, (__u32)pid, out, NULL);
	pthread_mutex_unlock(&s->sb_mu);
	return err;
}

static int maps_of(void *ctx, int pid, struct procmaps **out)
{
	return sampler__process_maps(ctx, pid, out);
}

/* The side-band records, before any sampling: every process exec()ed from
 * then on is known by them. Best effort: without them, maps files. */
static void sideband_open(struct sampler *s, const bool *online)
{
	int err;

	s->maps_src = (struct procmaps_source){.fn = maps_of, .ctx = s};
	s->mev = mapev__new();
	err = s->mev ? sideband__open(online, s->ncpus, &s->sb) : -ENOMEM;
	if (err) {
		pr_debug("no side-band records (%s): new processes' mappings are read from /proc",
			 strerror(-err));
		mapev__free(s->mev);
		s->mev = NULL;
		s->sb = NULL;
	}
}

/* Load the BPF object @o asks for: the start-up object of a quick start,
 * else the full one (following forks when asked). 0 or -errno (logged). */
static int load(struct sampler *s, const struct sampler_opts *o)
{
	int err;

	if (o->follow_forks && o->npids)
		return loader__load_following(s, o);
	s->quick_mode = quick__wanted(o);
	err = s->quick_mode ? quick__load(s, o) : loader__load(s, o, NULL);
	if (err && s->quick_mode && err != -EPERM && err != -EACCES) {
		/* Tail calls from a program with a sub-program need
		 * Linux >= 5.10 (x86_64): the full program first. */
		pr_debug("quick start unavailable (%s): loading the table unwinder first",
			 strerror(-err));
		s->quick_mode = false;
		err = loader__load(s, o, NULL);
	}
	if (err)
		loader__explain(err);
	/* The loader's copy: no lists (they are not used after this). */
	s->l.opts = *o;
	s->l.opts.pids = s->l.opts.tids = s->l.opts.cgroup_fds = NULL;
	s->l.opts.comms = NULL;
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
	err = cpus__online(&online, &ncpus);
	if (err) {
		pr_err("cannot read the online CPU list: %s", strerror(-err));
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto err_nomem;
	s->ncpus = ncpus;
	s->t.rows_fd = -1;
	s->nt.epoll = s->nt.quit_fd = s->nt.wake_fd = -1;
	pthread_mutex_init(&s->nt.mu, NULL);
	pthread_mutex_init(&s->nt.ring_mu, NULL);
	pthread_mutex_init(&s->sb_mu, NULL);
	/* the builder's queues: notices may come before it starts */
	if (builder__init(s))
		goto err_nomem;
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
	err = load(s, o);
	if (err)
		goto err_out;
	tables__fds(s);
	sideband_open(s, online);
	err = tables__open(s);
	if (!err)
		err = loader__set_filters(s, o);
	if (!err)
		err = notice__attach(s);
	if (!err)
		err = notice__start(s);
	if (!err && !s->quick_mode)
		notice__lazy_start(s); /* with a quick start: once the full object runs */
	if (!err)
		err = notice__late_open(s); /* with a quick start: the start-up object's ring, shared */
	if (!err)
		err = cpus__open_events(s, online, o->freq_hz);
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

/* Linux >= 6.1 (s->no_prealloc): the sample maps take an entry from a
 * per-CPU cache that the kernel fills with one entry at creation for the
 * 1 KiB stack entries (four for small ones) and refills, from irq_work,
 * once it runs low. A CPU's first sample needs up to two new stacks in NMI
 * context, where an empty cache cannot wait for the refill: the stack is
 * lost and reported as "stack table full". So before sampling starts, each CPU's caches are primed: on each CPU in
 * turn, an entry is added to each map (running its cache low, which queues
 * the refill on that CPU, done as the call returns) and deleted again.
 * Best effort: a CPU this thread may not run on is left as it was. */
static void prime_maps(struct sampler *s)
{
	struct bpf_map *maps[] = {s->skel->maps.stacks0,     s->skel->maps.stacks1,
				  s->skel->maps.counts0,     s->skel->maps.counts1,
				  s->skel->maps.ustack_ext0, s->skel->maps.ustack_ext1};
	size_t setsize = CPU_ALLOC_SIZE(s->ncpus), i, kmax = 0, vmax = 0;
	cpu_set_t *old = NULL, *one = NULL;
	void *key = NULL, *val = NULL;
	__u32 cpu;
	int fd;

	if (!s->no_prealloc)
		return;
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		if (bpf_map__key_size(maps[i]) > kmax)
			kmax = bpf_map__key_size(maps[i]);
		if (bpf_map__value_size(maps[i]) > vmax)
			vmax = bpf_map__value_size(maps[i]);
	}
	old = CPU_ALLOC(s->ncpus);
	one = CPU_ALLOC(s->ncpus);
	key = calloc(1, kmax);
	val = calloc(1, vmax);
	if (!old || !one || !key || !val || sched_getaffinity(0, setsize, old))
		goto out;
	for (cpu = 0; cpu < s->ncpus; cpu++) {
		if (s->pfds[cpu] < 0 || !CPU_ISSET_S(cpu, setsize, old))
			continue;
		CPU_ZERO_S(setsize, one);
		CPU_SET_S(cpu, setsize, one);
		if (sched_setaffinity(0, setsize, one))
			continue;
		for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
			fd = bpf_map__fd(maps[i]);
			/* all-zero key: no sample has been stored yet */
			if (fd >= 0 && !bpf_map_update_elem(fd, key, val, BPF_NOEXIST))
				bpf_map_delete_elem(fd, key);
		}
	}
	sched_setaffinity(0, setsize, old);
out:
	free(val);
	free(key);
	if (one)
		CPU_FREE(one);
	if (old)
		CPU_FREE(old);
}

int sampler__start(struct sampler *s)
{
	struct bpf_program *prog;
	__u32 i;
	int err;

	if (s->l.quick || s->l.on)
		return 0; /* started already */
	err = s->quick_mode ? 0 : offcpu__attach(s->skel, s->offcpu);
	if (err)
		return err;
	prog = s->quick_mode ? s->skel->progs.profcap_quick : loader__sample_prog(s->skel);
	prime_maps(s);
	/* Attaching also enables each event, so sampling starts here. */
	for (i = 0; i < s->ncpus; i++) {
		if (s->pfds[i] < 0)
			continue;
		s->links[i] = bpf_program__attach_perf_event(prog, s->pfds[i]);
		if (!s->links[i]) {
			err = -errno;
			pr_err("cannot attach the BPF program to CPU %u: %s", i, strerror(-err));
			return err;
		}
	}
	if (s->quick_mode)
		err = quick__table_maps(s);
	err = err ?: builder__start(s);
	return err || !s->quick_mode ? err : quick__start(s);
}

void sampler__stop(struct sampler *s)
{
	__u32 i;

	if (!s)
		return;
	s->halted = true;
	for (i = 0; i < s->ncpus; i++)
		if (s->pfds[i] >= 0)
			ioctl(s->pfds[i], PERF_EVENT_IOC_DISABLE, 0);
	/* Waits that end after this are not counted. */
	for (i = 0; i < OFFCPU_LINKS; i++) {
		bpf_link__destroy(s->offcpu[i]);
		s->offcpu[i] = NULL;
	}
	/* Notices and late samples still in the rings: this thread's now. */
	notice__stop(s);
	/* No sample will use tables now: do not build them. */
	builder__stop(s);
}

void sampler__free(struct sampler *s)
{
	__u32 i;

	if (!s)
		return;
	if (s->l.on) /* the verifier cannot be interrupted */
		pthread_join(s->l.thread, NULL);
	if (!builder__quit(s))
		return; /* in a parse: left what it uses */
	notice__free(s);
	builder__free(s);
	sideband__free(s->sb);
	mapev__free(s->mev);
	late__free(s->late);
	bpf_link__destroy(s->fork_link);
	bpf_link__destroy(s->exec_link);
	for (i = 0; i < OFFCPU_LINKS; i++)
		bpf_link__destroy(s->offcpu[i]);
	for (i = 0; s->links && i < s->ncpus; i++)
		bpf_link__destroy(s->links[i]);
	for (i = 0; s->pfds && i < s->ncpus; i++)
		if (s->pfds[i] >= 0)
			close(s->pfds[i]);
	tables__free(s);
	cpu_sampler__destroy(s->skel);
	cpu_sampler__destroy(s->l.quick);
	free(s->links);
	free(s->pfds);
	drainer__free(s);
	free(s);
}
