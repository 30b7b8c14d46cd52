/* sampler_quick.c - quick start: a small start-up object samples from
 * sampler__start() on (no kernel BTF, no table unwinding: stacks flagged
 * partial, walked late) while the loader thread loads the full object,
 * which then takes over through a tail call (see profcap_quick in the BPF
 * program). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "collect/kbtf.h"
#include "collect/kver.h"
#include "collect/sampler_int.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/log.h"

/* The maps the start-up program fills (generation 0 only: nothing is
 * drained before the hand-over): the full object uses the start-up
 * object's (the same kernel maps). The table maps are made by
 * quick__table_maps() once sampling runs (the tables are built from the
 * first notices on, while the full object loads) and shared too. The rest
 * (generation 1, thread context, .rodata, .bss) is the full object's own,
 * created in the background. */
static const char *const shared_maps[] = {
	"counts0", "stacks0", "seen",  "events", "stats",	 "scratch",	   "pids",
	"tids",	   "cgroups", "comms", "late",	 "late_scratch", "notice_scratch", "execd",
	"times",
};

bool quick__is_shared(const struct bpf_map *m)
{
	size_t i;

	for (i = 0; i < sizeof(shared_maps) / sizeof(shared_maps[0]); i++)
		if (!strcmp(bpf_map__name(m), shared_maps[i]))
			return true;
	return false;
}

/* Before load: @full uses the shared maps of the loaded @quick. Its exec
 * hook replaces the start-up object's once loaded (quick__wait()). 0 or
 * -errno. */
int quick__share_maps(struct cpu_sampler *full, const struct cpu_sampler *quick,
		      const struct sampler_tfd *tfd)
{
	struct bpf_map *m;
	int err;

	bpf_object__for_each_map(m, full->obj)
	{
		const struct bpf_map *q;

		if (!quick__is_shared(m))
			continue;
		q = bpf_object__find_map_by_name(quick->obj, bpf_map__name(m));
		err = q ? bpf_map__reuse_fd(m, bpf_map__fd(q)) : -ENOENT;
		if (err)
			return err;
	}
	if (tfd->files < 0)
		return 0; /* no table unwinding */
	err = bpf_map__reuse_fd(full->maps.unwind_files, tfd->files);
	err = err ?: bpf_map__reuse_fd(full->maps.unwind_file_idx, tfd->file_idx);
	err = err ?: bpf_map__reuse_fd(full->maps.unwind_maps, tfd->maps);
	return err ?: bpf_map__reuse_fd(full->maps.unwind_procs, tfd->procs);
}

/* One map as @m (of the start-up object, configured, not created) says. */
static int map_create(const struct bpf_map *m, int inner_fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = bpf_map__map_flags(m),
		    .inner_map_fd = (__u32)inner_fd);
	int fd = bpf_map_create(bpf_map__type(m), bpf_map__name(m), bpf_map__key_size(m),
				bpf_map__value_size(m), bpf_map__max_entries(m), &opts);

	return fd < 0 ? -errno : fd;
}

/* Quick start, sampling: the table maps (s->tfd), off the start-up path.
 * 0 or -errno (logged). */
int quick__table_maps(struct sampler *s)
{
	LIBBPF_OPTS(bpf_map_create_opts, iopts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	const struct cpu_sampler *q = s->skel;
	int inner, err = 0;

	if (!s->t.unwind)
		return 0;
	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", sizeof(__u32), sizeof(__u64), 1,
			       &iopts);
	if (inner < 0)
		err = -errno;
	if (!err && (s->tfd.files = map_create(q->maps.unwind_files, inner)) < 0)
		err = s->tfd.files;
	if (!err && (s->tfd.file_idx = map_create(q->maps.unwind_file_idx, 0)) < 0)
		err = s->tfd.file_idx;
	if (!err && (s->tfd.maps = map_create(q->maps.unwind_maps, 0)) < 0)
		err = s->tfd.maps;
	if (!err && (s->tfd.procs = map_create(q->maps.unwind_procs, 0)) < 0)
		err = s->tfd.procs;
	if (inner >= 0)
		close(inner);
	if (err)
		pr_err("cannot create the unwind table maps: %s", strerror(-err));
	return err;
}

/* Quick start unless targets get tables before sampling (-p, -t, --
 * CMD: their first samples are table-unwound) or off-CPU time is wanted
 * (its programs need the BTF; the window would start without them).
 * PROFCAP_QUICK_START=0 turns it off (tests of a system-wide capture
 * loaded the slow way, as where the quick start is unavailable). */
bool quick__wanted(const struct sampler_opts *o)
{
	const char *env = env__get(env__process(), "PROFCAP_QUICK_START");

	if (env && !strcmp(env, "0"))
		return false;
	return !o->npids && !o->ntids && !o->follow_forks && !o->off_cpu;
}

/* Load the start-up object into s->skel: profcap_quick and the exec hook
 * only, the sample maps, nothing that needs kernel BTF. */
int quick__load(struct sampler *s, const struct sampler_opts *o)
{
	struct bpf_map *m;
	struct bpf_program *p;
	__u64 t0;
	int err;

	s->skel = loader__open();
	if (!s->skel)
		return -errno;
	/* Table unwinding on: its stacks are flagged partial, and walked late
	 * when the full program will have kernel BTF and bpf_find_vma(). */
	loader__configure_unwind(s, o, loader__configure_common(s, s->skel, o, NULL), NULL);
	if (s->skel->rodata->want_unwind && kver__at_least(5, 17) && !access(KBTF_VMLINUX, R_OK)) {
		s->skel->rodata->want_late = 1;
		bpf_map__set_max_entries(s->skel->maps.late, SAMPLER_LATE_RING);
	}
	bpf_object__for_each_program(p, s->skel->obj) bpf_program__set_autoload(
		p, p == s->skel->progs.profcap_quick || p == s->skel->progs.profcap_exec);
	bpf_object__for_each_map(m, s->skel->obj) if (!bpf_map__is_internal(m) && !quick__is_shared(m) &&
						      m != s->skel->maps.handover)
		bpf_map__set_autocreate(m, false);
	t0 = clock__mono_ns();
	err = cpu_sampler__load(s->skel);
	if (err) {
		cpu_sampler__destroy(s->skel);
		s->skel = NULL;
		return err;
	}
	loader__verifier_report(s->skel->progs.profcap_quick, clock__mono_ns() - t0);
	return 0;
}

static void *loader_main(void *arg)
{
	struct sampler *s = arg;
	int err = loader__load(s, &s->l.opts, NULL), fd;
	__u32 zero = 0;

	/* The hand-over, at once: from this update on, profcap_quick tail-
	 * calls profcap_sample first thing on every tick. */
	if (!err) {
		fd = bpf_program__fd(loader__sample_prog(s->skel));
		if (bpf_map_update_elem(s->l.handover, &zero, &fd, BPF_ANY))
			err = -errno;
	}

	pthread_mutex_lock(&s->l.mu);
	s->l.err = err;
	s->l.ns = clock__mono_ns() - s->l.t0;
	__atomic_store_n(&s->l.cpu_ns, clock__thread_cpu_ns(), __ATOMIC_RELAXED);
	s->l.done = true;
	pthread_cond_broadcast(&s->l.cv);
	pthread_mutex_unlock(&s->l.mu);
	return NULL;
}

/* Sampling has started with the start-up object: load the full one on a
 * thread, with every signal blocked there (they would interrupt the
 * verifier). 0 or -errno (logged). */
int quick__start(struct sampler *s)
{
	sigset_t all, old;
	int err;

	s->l.quick = s->skel;
	s->l.handover = bpf_map__fd(s->l.quick->maps.handover);
	s->skel = NULL;
	s->l.t0 = clock__mono_ns();
	if (pthread_mutex_init(&s->l.mu, NULL) || pthread_cond_init(&s->l.cv, NULL)) {
		pr_err("cannot start the BPF loader thread");
		return -EAGAIN;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&s->l.thread, NULL, loader_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_err("cannot start the BPF loader thread: %s", strerror(-err));
		return err;
	}
	s->l.on = true;
	return 0;
}

/* Wait up to @timeout_ms (-1: as long as it takes) for the loader, which
 * handed sampling over to the full object, and take the full object as
 * s->skel. 0 when done (or no quick start), -EAGAIN on timeout, else
 * -errno (logged once). */
int quick__wait(struct sampler *s, int timeout_ms)
{
	struct bpf_link *link;
	int err;

	if (!s->l.on)
		return s->l.err;
	pthread_mutex_lock(&s->l.mu);
	if (!s->l.done && timeout_ms >= 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += timeout_ms / 1000;
		ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->l.cv, &s->l.mu, &ts);
	}
	while (!s->l.done && timeout_ms < 0)
		pthread_cond_wait(&s->l.cv, &s->l.mu);
	err = s->l.done ? 0 : -EAGAIN;
	pthread_mutex_unlock(&s->l.mu);
	if (err)
		return err;
	pthread_join(s->l.thread, NULL);
	s->l.on = false;
	err = s->l.err;
	if (err)
		loader__explain(err);
	if (err) {
		/* Sampling stops (it would go on without tables nor thread
		 * context); drains and stats read the start-up object. */
		__u32 i;

		for (i = 0; i < s->ncpus; i++)
			if (s->pfds[i] >= 0)
				ioctl(s->pfds[i], PERF_EVENT_IOC_DISABLE, 0);
		pr_err("sampling stopped: the table unwinder could not be loaded");
		if (s->skel) /* loaded, the hand-over failed */
			cpu_sampler__destroy(s->skel);
		s->skel = s->l.quick;
		s->l.quick = NULL;
		s->l.err = err;
		return err;
	}
	/* Its first sample, when it took one, is the capture's. */
	if (s->l.quick->bss->first_sample_ns)
		s->skel->bss->first_sample_ns = s->l.quick->bss->first_sample_ns;
	/* Its exec hook, which keeps the start time of a process exec()ed
	 * (the start-up object's has no kernel BTF): then lazy notices. */
	link = bpf_program__attach(s->skel->progs.profcap_exec);
	if (link) {
		bpf_link__destroy(s->exec_link);
		s->exec_link = link;
		notice__lazy_start(s);
	}
	err = notice__late_open(s);
	if (err)
		return err;
	pr_debug("table unwinder loaded in the background and handed over after %.1f ms "
		 "(kernel BTF %.1f ms)",
		 s->l.ns / 1e6, s->l.btf_ns / 1e6);
	return 0;
}
