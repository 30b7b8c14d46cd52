/* test_drain.c - a drain's record assembly without the kernel: records
 * from injected keys, stacks found through fake maps, deep user stacks
 * joined to their tails, the flags and missing counts of stacks that are
 * gone, the generation a drain takes; and two drains at once on their own
 * scratch (one per thread, as the sampler keeps it), sharing the maps.
 * Python stacks: found or flagged lost, their words whole frames; a
 * process's layout as the BPF walker's entry. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "collect/drain.h"
#include "collect/sampler.h"
#include "proc/pyproc.h"
#include "test.h"

#define NSTACKS 8

/* A fake stack map: hash -> frames (hash i + 1 holds i + 1 .. frames). */
struct fake_maps {
	struct stack_trace st[NSTACKS];
	__u64 hashes[NSTACKS];
	__u64 deep_hash; /* the stack whose tail is stored, 0 = none */
	__u64 tail[PROFCAP_MAX_USTACK - PROFCAP_MAX_STACK];
};

static int fake_stack(void *ctx, __u64 hash, struct stack_trace *out)
{
	const struct fake_maps *m = ctx;

	for (int i = 0; i < NSTACKS; i++)
		if (m->hashes[i] == hash) {
			*out = m->st[i];
			return 0;
		}
	return -ENOENT;
}

static int fake_tail(void *ctx, __u64 hash, __u64 *tail)
{
	const struct fake_maps *m = ctx;

	if (!m->deep_hash || hash != m->deep_hash)
		return -ENOENT;
	memcpy(tail, m->tail, sizeof(m->tail));
	return 0;
}

/* Stack @i of @m: @nr frames (the map keeps PROFCAP_MAX_STACK), frame f = base + f. */
static void put_stack(struct fake_maps *m, int i, __u64 hash, __u64 nr, __u64 base)
{
	m->hashes[i] = hash;
	m->st[i].nr = nr;
	for (__u64 f = 0; f < PROFCAP_MAX_STACK; f++)
		m->st[i].ips[f] = base + f;
}

static struct sample_key key(__u32 tgid, __u64 ustack, __u64 kstack, __u32 flags)
{
	struct sample_key k;

	memset(&k, 0, sizeof(k));
	k.tgid = tgid;
	k.tid = tgid + 1;
	k.ustack = ustack;
	k.kstack = kstack;
	k.flags = flags;
	memcpy(k.comm, "a-very-long-name-for-comm", 16);
	k.trace_id[0] = 0x1122334455667788ull;
	k.span_id = 0x99;
	k.attrs_size = 3;
	memcpy(k.attrs, "abc", 3);
	return k;
}

TEST(cpu_record_fields)
{
	struct sample_key k = key(100, 0, 0, PROFCAP_F_USTACK_ERR);
	struct sampler_record r;

	drain__cpu_record(&k, 7, &r);
	CHECK(r.kind == SAMPLER_KIND_CPU);
	CHECK(r.tgid == 100 && r.tid == 101 && r.count == 7);
	CHECK(r.flags == SAMPLER_REC_USTACK_ERR);
	CHECK(!memcmp(r.trace_id, k.trace_id, 16));
	CHECK(!memcmp(r.span_id, &k.span_id, 8));
	CHECK(r.attrs_size == 3 && !memcmp(r.attrs, "abc", 3));
	CHECK(!r.ustack && !r.kstack);
}

TEST(offcpu_record_fields)
{
	struct offcpu_key k;
	struct offcpu_val v = {.ns = 5000, .switches = 3};
	struct sampler_record r;

	memset(&k, 0, sizeof(k));
	k.tgid = 9;
	k.tid = 10;
	k.state = SAMPLER_STATE_UNINTERRUPTIBLE;
	memcpy(k.comm, "sleeper", 8);
	drain__offcpu_record(&k, &v, &r);
	CHECK(r.kind == SAMPLER_KIND_OFF_CPU);
	CHECK(r.state == SAMPLER_STATE_UNINTERRUPTIBLE);
	CHECK(r.count == 5000 && r.switches == 3);
	CHECK(!strcmp(r.comm, "sleeper"));
	CHECK(r.attrs_size == 0);
}

TEST(stacks_found_and_comm_ended)
{
	static struct fake_maps m;
	static struct drain_scratch d;
	struct drain_stacks src = {.stack = fake_stack, .tail = fake_tail, .ctx = &m};
	struct sample_key k = key(1, 0xaa, 0xbb, 0);
	struct sampler_record r;

	memset(&m, 0, sizeof(m));
	put_stack(&m, 0, 0xaa, 5, 1000);
	put_stack(&m, 1, 0xbb, 3, 2000);
	drain__cpu_record(&k, 4, &r);
	CHECK_EQ_U64(drain__stacks(&d, &src, &r, k.ustack, k.kstack), 0);
	CHECK(r.nustack == 5 && r.ustack[0] == 1000 && r.ustack[4] == 1004);
	CHECK(r.nkstack == 3 && r.kstack[2] == 2002);
	CHECK(r.comm[16] == '\0' && strlen(r.comm) == 16);
	CHECK(r.flags == 0);
}

TEST(missing_stacks_flagged_and_counted)
{
	static struct fake_maps m;
	static struct drain_scratch d;
	struct drain_stacks src = {.stack = fake_stack, .ctx = &m};
	struct sample_key k = key(1, 0xaa, 0xbb, 0);
	struct offcpu_key ok;
	struct offcpu_val ov = {.ns = 1, .switches = 6};
	struct sampler_record r;

	memset(&m, 0, sizeof(m));
	put_stack(&m, 0, 0xbb, 2, 10);
	drain__cpu_record(&k, 4, &r);
	CHECK_EQ_U64(drain__stacks(&d, &src, &r, k.ustack, k.kstack), 4);
	CHECK(r.flags == PROFCAP_F_USTACK_LOST);
	CHECK(!r.ustack && r.nkstack == 2);
	/* both gone: counted once per stack; a wait counts its switches */
	memset(&ok, 0, sizeof(ok));
	drain__offcpu_record(&ok, &ov, &r);
	CHECK_EQ_U64(drain__stacks(&d, &src, &r, 0x1, 0x2), 12);
	CHECK(r.flags == (PROFCAP_F_USTACK_LOST | PROFCAP_F_KSTACK_LOST));
	/* no stacks asked for: nothing missing */
	drain__cpu_record(&k, 4, &r);
	CHECK_EQ_U64(drain__stacks(&d, &src, &r, 0, 0), 0);
	CHECK(!r.flags && !r.nustack && !r.nkstack);
}

TEST(deep_stack_joined_or_partial)
{
	static struct fake_maps m;
	static struct drain_scratch d;
	struct drain_stacks src = {.stack = fake_stack, .tail = fake_tail, .ctx = &m};
	struct sample_key k = key(1, 0xdee9, 0, PROFCAP_F_USTACK_TRUNC);
	struct sampler_record r;
	__u64 nr = PROFCAP_MAX_STACK + 40;

	memset(&m, 0, sizeof(m));
	put_stack(&m, 0, 0xdee9, nr, 0);
	for (size_t i = 0; i < sizeof(m.tail) / sizeof(m.tail[0]); i++)
		m.tail[i] = PROFCAP_MAX_STACK + i;
	m.deep_hash = 0xdee9;
	drain__cpu_record(&k, 1, &r);
	drain__stacks(&d, &src, &r, k.ustack, 0);
	CHECK(r.nustack == nr);
	for (__u32 f = 0; f < r.nustack; f++)
		CHECK(r.ustack[f] == f);
	CHECK(r.flags == PROFCAP_F_USTACK_TRUNC);
	/* deeper than a record carries: cut at PROFCAP_MAX_USTACK */
	m.st[0].nr = PROFCAP_MAX_USTACK + 100;
	drain__cpu_record(&k, 1, &r);
	drain__stacks(&d, &src, &r, k.ustack, 0);
	CHECK(r.nustack == PROFCAP_MAX_USTACK);
	/* tail not stored: the first PROFCAP_MAX_STACK frames, partial */
	m.deep_hash = 0;
	drain__cpu_record(&k, 1, &r);
	drain__stacks(&d, &src, &r, k.ustack, 0);
	CHECK(r.nustack == PROFCAP_MAX_STACK);
	CHECK(r.flags & PROFCAP_F_USTACK_PARTIAL);
	/* no table unwinding (no tail source): the first frames, not partial */
	src.tail = NULL;
	drain__cpu_record(&k, 1, &r);
	drain__stacks(&d, &src, &r, k.ustack, 0);
	CHECK(r.nustack == PROFCAP_MAX_STACK);
	CHECK(!(r.flags & PROFCAP_F_USTACK_PARTIAL));
}

TEST(idle_generation)
{
	CHECK(drain__idle(0) == 0);
	CHECK(drain__idle(1) == 1);
	CHECK(drain__idle(2) == 0);
	CHECK(drain__idle(0xffffffffu) == 1);
}

/* Two threads drain records at once, each with its own scratch, over the
 * same (read-only) maps: a record's stacks stay its own. */
struct drainer {
	struct fake_maps *m;
	struct drain_scratch d;
	__u64 hash, base;
	int bad;
};

static void *drain_many(void *arg)
{
	struct drainer *t = arg;
	struct drain_stacks src = {.stack = fake_stack, .ctx = t->m};
	struct sample_key k = key(1, t->hash, 0, 0);
	struct sampler_record r;

	for (int i = 0; i < 20000; i++) {
		drain__cpu_record(&k, 1, &r);
		drain__stacks(&t->d, &src, &r, k.ustack, 0);
		t->bad += r.nustack != 6 || r.ustack[0] != t->base || r.ustack[5] != t->base + 5;
	}
	return NULL;
}

TEST(two_threads_own_scratch)
{
	static struct fake_maps m;
	static struct drainer a, b;
	pthread_t ta, tb;

	memset(&m, 0, sizeof(m));
	put_stack(&m, 0, 0x1, 6, 100);
	put_stack(&m, 1, 0x2, 6, 200);
	a = (struct drainer){.m = &m, .hash = 0x1, .base = 100};
	b = (struct drainer){.m = &m, .hash = 0x2, .base = 200};
	CHECK(!pthread_create(&ta, NULL, drain_many, &a));
	CHECK(!pthread_create(&tb, NULL, drain_many, &b));
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK(a.bad == 0 && b.bad == 0);
}

TEST(python_stack_found_lost_and_whole_frames)
{
	static struct fake_maps m;
	static struct drain_scratch d;
	struct drain_stacks src = {.stack = fake_stack, .ctx = &m};
	struct sample_key k = key(1, 0, 0, PROFCAP_F_PY_TRUNC | PROFCAP_F_PY_PARTIAL);
	struct offcpu_key ok;
	struct offcpu_val ov = {.ns = 1, .switches = 6};
	struct sampler_record r;

	memset(&m, 0, sizeof(m));
	put_stack(&m, 0, 0xcc, 6, 300);
	put_stack(&m, 1, 0xdd, 7, 400);			/* odd: the last word is no frame */
	put_stack(&m, 2, 0xee, PROFCAP_MAX_STACK, 500); /* more than the walker writes */
	k.pystack = 0xcc;
	drain__cpu_record(&k, 4, &r);
	CHECK(r.flags == (SAMPLER_REC_PY_TRUNC | SAMPLER_REC_PY_PARTIAL));
	CHECK(!r.pystack && !r.npystack);
	CHECK_EQ_U64(drain__pystack(&d, &src, &r, k.pystack), 0);
	CHECK(r.npystack == 6 && r.pystack[0] == 300 && r.pystack[5] == 305);
	CHECK_EQ_U64(drain__pystack(&d, &src, &r, 0xdd), 0);
	CHECK(r.npystack == 6 && r.pystack[0] == 400);
	CHECK_EQ_U64(drain__pystack(&d, &src, &r, 0xee), 0);
	CHECK(r.npystack == 2 * PROFCAP_PY_MAX_FRAMES);
	/* none: nothing changes */
	drain__cpu_record(&k, 4, &r);
	CHECK_EQ_U64(drain__pystack(&d, &src, &r, 0), 0);
	CHECK(!r.pystack && !(r.flags & SAMPLER_REC_PY_LOST));
	/* gone: flagged, its samples (CPU) or waits (off-CPU) counted */
	CHECK_EQ_U64(drain__pystack(&d, &src, &r, 0x77), 4);
	CHECK(!r.pystack && (r.flags & SAMPLER_REC_PY_LOST));
	memset(&ok, 0, sizeof(ok));
	ok.pystack = 0x77;
	drain__offcpu_record(&ok, &ov, &r);
	CHECK_EQ_U64(drain__pystack(&d, &src, &r, ok.pystack), 6);
}

/* A 3.11-like layout: frame fields within 72 bytes. */
static void layout311(struct pyproc *pp)
{
	memset(pp, 0, sizeof(*pp));
	pp->interp_head = 0x7f0000001000ull;
	pp->layout = (struct pyproc_layout){
		.version = 0x030b,
		.flags = PROFCAP_PY_INSTR_PTR | PROFCAP_PY_IS_ENTRY | PROFCAP_PY_CFRAME,
		.interp_tstate_head = 8,
		.tstate_next = 8,
		.tstate_thread_id = 152,
		.tstate_native_tid = 160,
		.tstate_frame = 56,
		.cframe_current_frame = 8,
		.frame_back = 48,
		.frame_code = 32,
		.frame_instr = 56,
		.frame_owner = 69,
		.frame_entry = 70,
		.code_firstlineno = 72,
	};
	strcpy(pp->version, "3.11.2");
}

TEST(python_layout_as_walker_entry)
{
	struct pyproc pp;
	struct py_proc v;

	layout311(&pp);
	CHECK(sampler__py_proc(&pp, &v) == 0);
	CHECK(v.interp_head == pp.interp_head && v.version == 0x030b);
	CHECK(v.tstate_thread_id == 152 && v.frame_instr == 56 && v.code_firstlineno == 72);
	CHECK(v.frame_read == 71); /* is_entry, one byte at 70 */
	/* without is_entry, the owner byte is not read either unless flagged */
	pp.layout.flags &= ~PROFCAP_PY_IS_ENTRY;
	CHECK(sampler__py_proc(&pp, &v) == 0 && v.frame_read == 64);
	/* an int f_lasti: 4 bytes */
	pp.layout.flags &= ~PROFCAP_PY_INSTR_PTR;
	CHECK(sampler__py_proc(&pp, &v) == 0 && v.frame_read == 60);
	/* a field past what one read takes */
	layout311(&pp);
	pp.layout.frame_instr = PROFCAP_PY_FRAME_READ - 4;
	CHECK(sampler__py_proc(&pp, &v) == -ERANGE);
	/* missing what the walker needs */
	layout311(&pp);
	pp.layout.cframe_current_frame = PYPROC_NONE;
	CHECK(sampler__py_proc(&pp, &v) == -EINVAL);
	layout311(&pp);
	pp.interp_head = 0;
	CHECK(sampler__py_proc(&pp, &v) == -EINVAL);
	layout311(&pp);
	pp.layout.frame_entry = PYPROC_NONE;
	CHECK(sampler__py_proc(&pp, &v) == -EINVAL);
}

int main(void)
{
	RUN(cpu_record_fields);
	RUN(offcpu_record_fields);
	RUN(stacks_found_and_comm_ended);
	RUN(missing_stacks_flagged_and_counted);
	RUN(deep_stack_joined_or_partial);
	RUN(idle_generation);
	RUN(two_threads_own_scratch);
	RUN(python_stack_found_lost_and_whole_frames);
	RUN(python_layout_as_walker_entry);
	return TEST_DONE();
}
