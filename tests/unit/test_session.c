/* test_session.c - the session's record path without root: injected
 * sampler records into a window's profile (capture/ingest.h) with a real
 * symbolizer on this process: CPU and off-CPU records, the window's
 * counters by record flags, kernel frames deferred until a flush, a new
 * window; records handed from a draining thread to the main thread
 * through a queue, as the sampler's threads hand notices over; and a
 * process that exec()s, described from its notices' snapshots while the
 * kernel's records (the maps source) already show its next program; a
 * record's Python frames merged in place of the eval loop's native frame,
 * counted when cut or not named. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/execsplit.h"
#include "capture/ingest.h"
#include "collect/queue.h"
#include "model/profile.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/pyproc.h"
#include "symbolize/pyframes.h"
#include "symbolize/symbolizer.h"
#include "util/clock.h"
#include "test.h"

__attribute__((noinline)) static int leaf_fn(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int caller_fn(int x)
{
	return leaf_fn(x) + 2;
}

static __u64 ustack[2];

static struct sampler_record cpu_record(__u64 count, __u32 flags)
{
	struct sampler_record r = {
		.kind = SAMPLER_KIND_CPU,
		.tgid = (__u32)getpid(),
		.tid = (__u32)getpid(),
		.flags = flags,
		.ustack = ustack,
		.nustack = 2,
		.count = count,
	};

	ustack[0] = (__u64)(uintptr_t)&leaf_fn + 4;   /* the PC */
	ustack[1] = (__u64)(uintptr_t)&caller_fn + 8; /* a return address */
	strcpy(r.comm, "test_session");
	return r;
}

struct fixture {
	struct symbolizer *sym;
	struct profile *prof;
	struct ingest *in;
};

static bool setup(struct fixture *f)
{
	static struct ingest in;

	memset(&in, 0, sizeof(in));
	f->sym = symbolizer__new("/proc");
	f->prof = profile__new();
	f->in = &in;
	if (!f->sym || !f->prof)
		return false;
	in.sym = f->sym;
	ingest__window(&in, f->prof);
	return !symbolizer__add_process(f->sym, getpid());
}

static void teardown(struct fixture *f)
{
	ingest__release(f->in);
	profile__free(f->prof);
	symbolizer__free(f->sym);
}

TEST(cpu_records_into_profile)
{
	struct fixture f;
	struct sampler_record r;

	CHECK(caller_fn(1) == 6);
	CHECK(setup(&f));
	r = cpu_record(5, 0);
	CHECK(!ingest__record(f.in, &r));
	r = cpu_record(3, 0);
	CHECK(!ingest__record(f.in, &r));
	CHECK(!ingest__flush(f.in));
	CHECK_EQ_U64(profile__type_total(f.prof, 0), 8);
	CHECK_EQ_U64(profile__stack_count(f.prof) - 1, 1); /* one distinct stack */
	CHECK_EQ_U64(f.in->c.truncated + f.in->c.partial + f.in->c.model_dropped, 0);
	teardown(&f);
}

TEST(flags_counted)
{
	struct fixture f;
	struct sampler_record r;

	CHECK(setup(&f));
	r = cpu_record(2, SAMPLER_REC_USTACK_TRUNC);
	CHECK(!ingest__record(f.in, &r));
	r = cpu_record(4, SAMPLER_REC_USTACK_PARTIAL);
	CHECK(!ingest__record(f.in, &r));
	r = cpu_record(1, SAMPLER_REC_USTACK_ERR);
	r.nustack = 0;
	CHECK(!ingest__record(f.in, &r));
	/* stacks the kernel did not store: kept without them, and counted */
	r = cpu_record(5, SAMPLER_REC_USTACK_LOST);
	r.nustack = 0;
	CHECK(!ingest__record(f.in, &r));
	r = cpu_record(3, SAMPLER_REC_KSTACK_LOST);
	CHECK(!ingest__record(f.in, &r));
	CHECK(!ingest__flush(f.in));
	CHECK_EQ_U64(f.in->c.stack_lost, 8);
	CHECK_EQ_U64(f.in->c.truncated, 6);
	CHECK_EQ_U64(f.in->c.depth_cut, 2);
	CHECK_EQ_U64(f.in->c.partial, 4);
	CHECK_EQ_U64(f.in->c.ustack_missing, 1); /* a process with a program */
	CHECK_EQ_U64(profile__type_total(f.prof, 0), 15);
	/* a new window starts from zero */
	profile__free(f.prof);
	f.prof = profile__new();
	CHECK(f.prof);
	ingest__window(f.in, f.prof);
	CHECK_EQ_U64(f.in->c.truncated + f.in->c.partial + f.in->c.ustack_missing, 0);
	CHECK_EQ_U64(f.in->c.stack_lost, 0);
	CHECK_EQ_U64(profile__total(f.prof), 0);
	teardown(&f);
}

TEST(off_cpu_record_own_type)
{
	struct fixture f;
	struct sampler_record r;
	__u32 type;

	CHECK(setup(&f));
	r = cpu_record(1, 0);
	CHECK(!ingest__record(f.in, &r));
	r = cpu_record(0, 0);
	r.kind = SAMPLER_KIND_OFF_CPU;
	r.state = SAMPLER_STATE_INTERRUPTIBLE;
	r.count = 250000;
	r.switches = 5;
	CHECK(!ingest__record(f.in, &r));
	CHECK(!ingest__flush(f.in));
	CHECK(!profile__find_value_type(f.prof, "off_cpu", &type));
	CHECK(type != 0);
	CHECK_EQ_U64(profile__type_total(f.prof, type), 250000);
	CHECK_EQ_U64(profile__type_total(f.prof, 0), 1);
	teardown(&f);
}

TEST(kernel_frames_deferred_until_flush)
{
	struct fixture f;
	struct sampler_record r;
	__u64 kstack[2] = {0xffffffff81000010ull, 0xffffffff81000020ull};

	CHECK(setup(&f));
	r = cpu_record(3, 0);
	r.kstack = kstack;
	r.nkstack = 2;
	CHECK(!ingest__record(f.in, &r));
	/* named at the next pass over kallsyms: kept (with a copy of its
	 * stacks) until then */
	CHECK(f.in->ndefer == 1);
	CHECK(ingest__deferred_bytes(f.in) > 0);
	kstack[0] = kstack[1] = 0; /* the drain's buffers are reused */
	CHECK_EQ_U64(profile__type_total(f.prof, 0), 0);
	CHECK(!ingest__flush(f.in));
	CHECK(f.in->ndefer == 0 && ingest__deferred_bytes(f.in) == 0);
	CHECK_EQ_U64(profile__type_total(f.prof, 0), 3);
	teardown(&f);
}

/* A draining thread hands records to the main thread through a bounded
 * queue under a lock; the main thread adds them. */
#define NRECORDS 5000u

struct handover {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct queue *q;
	bool done;
};

static void *drainer(void *arg)
{
	struct handover *h = arg;
	__u32 i = 0;

	while (i < NRECORDS) {
		__u64 count = 1 + i % 3;

		pthread_mutex_lock(&h->mu);
		if (!queue__push(h->q, &count))
			i++;
		else
			pthread_cond_wait(&h->cv, &h->mu); /* full: wait for room */
		pthread_cond_broadcast(&h->cv);
		pthread_mutex_unlock(&h->mu);
	}
	pthread_mutex_lock(&h->mu);
	h->done = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

TEST(records_from_another_thread)
{
	struct handover h = {.q = queue__new(32, sizeof(__u64))};
	struct fixture f;
	__u64 want = 0, counts[8];
	pthread_t t;
	int err = 0;

	for (__u32 i = 0; i < NRECORDS; i++)
		want += 1 + i % 3;
	CHECK(h.q);
	CHECK(setup(&f));
	pthread_mutex_init(&h.mu, NULL);
	pthread_cond_init(&h.cv, NULL);
	CHECK(!pthread_create(&t, NULL, drainer, &h));
	pthread_mutex_lock(&h.mu);
	for (;;) {
		size_t n = queue__take(h.q, counts, 8);

		pthread_cond_broadcast(&h.cv);
		if (!n && h.done)
			break;
		if (!n) {
			pthread_cond_wait(&h.cv, &h.mu);
			continue;
		}
		pthread_mutex_unlock(&h.mu);
		for (size_t i = 0; i < n && !err; i++) {
			struct sampler_record r = cpu_record(counts[i], 0);

			err = ingest__record(f.in, &r);
		}
		pthread_mutex_lock(&h.mu);
	}
	pthread_mutex_unlock(&h.mu);
	pthread_join(t, NULL);
	CHECK(!err);
	CHECK(!ingest__flush(f.in));
	CHECK_EQ_U64(profile__type_total(f.prof, 0), want);
	queue__free(h.q);
	teardown(&f);
}

/* ---- exec: the old program's mappings until the new one is described ---- */

#define EXEC_PID 31337

/* One executable mapping of program @path at @start (a file that does not
 * exist: the mapping is known, not its symbols). */
static struct procmaps *one_mapping(const char *path, __u64 start)
{
	struct procmaps_entry e = {.start = start,
				   .end = start + 0x1000,
				   .inode = 7,
				   .dev_major = 8,
				   .perms = PROCMAPS_READ | PROCMAPS_EXEC,
				   .path = path};
	struct procmaps *pm = NULL;

	return procmaps__from_entries(&e, 1, &pm) ? NULL : pm;
}

/* A notice's snapshot: program @exe mapped at @start, from the kernel's
 * records (lasting). */
static struct procsnap *exec_snap(const char *exe, __u64 start)
{
	struct procsnap *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = EXEC_PID;
	p->refs = 1;
	p->lasting = true;
	p->maps = one_mapping(exe, start);
	p->exe = strdup(exe);
	strcpy(p->comm, strrchr(exe, '/') + 1);
	p->at_ns = clock__mono_ns();
	if (!p->maps || !p->exe) {
		procsnap__free(p);
		return NULL;
	}
	return p;
}

/* The kernel's records as the maps source: the program it runs now. */
struct exec_source {
	const char *exe;
	__u64 start;
};

static int exec_source_maps(void *ctx, int pid, struct procmaps **out)
{
	const struct exec_source *src = ctx;

	*out = pid == EXEC_PID ? one_mapping(src->exe, src->start) : NULL;
	return *out ? 0 : -ENOENT;
}

static __u64 exec_now = 1000000000ull;

static __u64 exec_now_ns(void *ctx)
{
	return *(__u64 *)ctx;
}

static void exec_sleep_ns(void *ctx, __u64 ns)
{
	*(__u64 *)ctx += ns;
}

static const char *mapping_at(struct symbolizer *sym, __u64 addr)
{
	struct profile_frame f;

	symbolizer__resolve_user(sym, EXEC_PID, addr, true, &f);
	return f.mapping ? f.mapping->path : NULL;
}

TEST(exec_keeps_old_program_until_described)
{
	static const struct clock clk = {exec_now_ns, exec_sleep_ns, &exec_now};
	struct exec_source src = {"/opt/exec-test/next", 0x700000};
	const struct procmaps_source ms = {.fn = exec_source_maps, .ctx = &src};
	const struct profile_process_desc *d;
	struct procsnap *old = exec_snap("/opt/exec-test/first", 0x400000);
	struct procsnap *next = exec_snap("/opt/exec-test/next", 0x700000);
	struct symbolizer *sym = symbolizer__new("/nonexistent-proc-root");
	const char *m;

	CHECK(old && next && sym);
	symbolizer__set_clock(sym, &clk);
	symbolizer__set_maps_source(sym, &ms);
	/* Its first notice came before the exec, the records after it: the
	 * process is the snapshot's program, with the snapshot's mappings. */
	CHECK(!symbolizer__add_process_snap(sym, EXEC_PID, old));
	d = symbolizer__process(sym, EXEC_PID);
	CHECK(d && d->exe_name);
	CHECK_STR(d->exe_name, "first");
	m = mapping_at(sym, 0x400100);
	CHECK(m);
	CHECK_STR(m, "/opt/exec-test/first");
	/* A miss a while later reads the maps again: the new program's are
	 * not taken before the process is described as it. */
	exec_now += 5000000000ull;
	CHECK(!mapping_at(sym, 0x700100));
	m = mapping_at(sym, 0x400100);
	CHECK(m);
	CHECK_STR(m, "/opt/exec-test/first");
	/* Its notice after the exec: the next generation, its mappings. */
	CHECK(!symbolizer__add_process_snap(sym, EXEC_PID, next));
	d = symbolizer__process(sym, EXEC_PID);
	CHECK(d && d->exe_name);
	CHECK_STR(d->exe_name, "next");
	CHECK_EQ_U64(d->generation, 1);
	m = mapping_at(sym, 0x700100);
	CHECK(m);
	CHECK_STR(m, "/opt/exec-test/next");
	symbolizer__free(sym);
	procsnap__free(old);
	procsnap__free(next);
}

/* Records of a process that exec()ed: by their first user frames when
 * they have them, else by the thread name exec() gave. */
TEST(exec_records_split_by_program)
{
	struct procsnap *next = exec_snap("/opt/exec-test/next", 0x700000);
	__u64 old_pcs[5] = {0x400100, 0x400200, 0x400300, 0x400400, 0x700100};
	__u64 vdso_then_new[2] = {0x7fff0000, 0x700200};
	__u64 new_pc[1] = {0x700300};
	struct sampler_record r = {.kind = SAMPLER_KIND_CPU, .tgid = EXEC_PID, .count = 1};

	CHECK(next);
	strcpy(r.comm, "next");
	r.ustack = old_pcs; /* the old program's frames, whatever its name */
	r.nustack = 5;	    /* a fifth in the new program's range: not probed */
	CHECK(!execsplit__of_new_program(&r, next));
	r.ustack = new_pc;
	r.nustack = 1;
	strcpy(r.comm, "sh");
	CHECK(execsplit__of_new_program(&r, next));
	r.ustack = vdso_then_new; /* a leaf outside its mappings, a caller in them */
	r.nustack = 2;
	CHECK(execsplit__of_new_program(&r, next));
	r.nustack = 0; /* kernel frames only: the thread name decides */
	CHECK(!execsplit__of_new_program(&r, next));
	strcpy(r.comm, "next");
	CHECK(execsplit__of_new_program(&r, next));
	procsnap__free(next);
}

/* This process as a Python 3.11 whose eval loop is caller_fn(). */
static struct pyframes *fake_python(void)
{
	const struct pyproc_layout *l = pyproc__layout(3, 11);
	struct pyframes *pf = pyframes__new(NULL);
	struct pyproc pp;

	if (!l || !pf) {
		pyframes__free(pf);
		return NULL;
	}
	memset(&pp, 0, sizeof(pp));
	pp.layout = *l;
	strcpy(pp.version, "3.11");
	pp.interp_head = 0x1000;
	pp.eval[0].lo = (__u64)(uintptr_t)&caller_fn;
	pp.eval[0].hi = pp.eval[0].lo + 16;
	pp.neval = 1;
	if (pyframes__set_process(pf, getpid(), &pp)) {
		pyframes__free(pf);
		return NULL;
	}
	return pf;
}

TEST(python_frames_merged_and_counted)
{
	/* two frames whose code objects cannot be read: named unknown, the
	 * outer one the entry frame of its eval-loop call */
	static const __u64 py[4] = {0x5000 | 7ull << 48, 2ull << 32, 0x6000 | 9ull << 48,
				    3ull << 32};
	struct fixture f;
	struct sampler_record r;

	CHECK(setup(&f));
	f.in->py = fake_python();
	CHECK(f.in->py);
	r = cpu_record(4, 0);
	r.pystack = py;
	r.npystack = 4;
	CHECK(!ingest__record(f.in, &r));
	/* leaf_fn, then the two Python frames in place of caller_fn */
	CHECK_EQ_U64(f.in->nframes, 3);
	CHECK(f.in->frames[0].type_name == NULL);
	CHECK(f.in->frames[1].type_name && !strcmp(f.in->frames[1].type_name, PYFRAMES_TYPE));
	CHECK(f.in->frames[2].type_name && !strcmp(f.in->frames[2].type_name, PYFRAMES_TYPE));
	/* a cut stack */
	r = cpu_record(2, SAMPLER_REC_PY_PARTIAL);
	r.pystack = py;
	r.npystack = 4;
	CHECK(!ingest__record(f.in, &r));
	/* no Python stack: native frames only, nothing counted */
	r = cpu_record(1, 0);
	CHECK(!ingest__record(f.in, &r));
	CHECK_EQ_U64(f.in->nframes, 2);
	CHECK(!ingest__flush(f.in));
	CHECK_EQ_U64(f.in->c.py_samples, 6);
	CHECK_EQ_U64(f.in->c.py_partial, 2);
	CHECK_EQ_U64(f.in->c.py_unknown, 6);
	CHECK_EQ_U64(profile__type_total(f.prof, 0), 7);
	/* a process not known as Python: its native frames, counted unknown */
	pyframes__set_process(f.in->py, getpid(), NULL);
	r = cpu_record(5, 0);
	r.pystack = py;
	r.npystack = 4;
	CHECK(!ingest__record(f.in, &r));
	CHECK_EQ_U64(f.in->nframes, 2);
	CHECK_EQ_U64(f.in->c.py_unknown, 11);
	pyframes__free(f.in->py);
	f.in->py = NULL;
	teardown(&f);
}

int main(void)
{
	RUN(cpu_records_into_profile);
	RUN(flags_counted);
	RUN(off_cpu_record_own_type);
	RUN(kernel_frames_deferred_until_flush);
	RUN(records_from_another_thread);
	RUN(exec_keeps_old_program_until_described);
	RUN(exec_records_split_by_program);
	RUN(python_frames_merged_and_counted);
	return TEST_DONE();
}
