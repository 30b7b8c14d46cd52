/* test_session.c - the session's record path without root: injected
 * sampler records into a window's profile (capture/ingest.h) with a real
 * symbolizer on this process: CPU and off-CPU records, the window's
 * counters by record flags, kernel frames deferred until a flush, a new
 * window; records handed from a draining thread to the main thread
 * through a queue, as the sampler's threads hand notices over; and a
 * record's Python frames merged in place of the eval loop's native frame,
 * counted when cut or not named. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "capture/ingest.h"
#include "collect/queue.h"
#include "model/profile.h"
#include "proc/pyproc.h"
#include "symbolize/pyframes.h"
#include "symbolize/symbolizer.h"
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
	RUN(python_frames_merged_and_counted);
	return TEST_DONE();
}
