/* perf_data_rec.c - the data section of a perf.data file: side-band
 * records (mappings, names, forks, losses), then samples into the profile
 * (see perf_data.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/stackwalk.h"
#include "formats/perf_data_int.h"
#include "model/profile.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/hex.h"
#include "util/sort.h"

#define CONTEXT_MAX ((__u64)-4095) /* callchain entries above: context markers */
#define CONTEXT_KERNEL ((__u64)-128)
#define CONTEXT_USER ((__u64)-512)
#define CPUMODE_MASK 7u
#define CPUMODE_KERNEL 1u
#define CPUMODE_GUEST_KERNEL 4u
#define SCAN_MAX 64	  /* overlapping mappings looked at per address */
#define FORK_DEPTH 4	  /* parents asked for a forked child's mappings */
#define REG_BP 6	  /* x86_64 perf register numbers */
#define REG_SP 7
#define REG_IP 8
#define STACK_USER_MAX (1u << 20)

/* What a sample record holds (the fields this reader uses). */
struct pd_sample {
	unsigned int attr;
	__u64 ip, time, period;
	__s32 pid, tid;
	__u32 cpu;
	bool have_cpu;
	const __u8 *chain; /* callchain entries, @nchain of them */
	__u64 nchain;
	__u64 regs[3]; /* bp, sp, ip of the user registers */
	bool have_regs;
	const __u8 *stack; /* user stack copy, @stack_len valid bytes */
	__u64 stack_len;
	__u16 misc;
};

/* ---- event of a record -------------------------------------------------- */

static int cmp_id(const void *x, const void *y)
{
	const struct pd_id *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id;
}

/* The event of sample id @id (ids sorted at their first lookup). */
static int find_id(struct pd *pd, __u64 id, unsigned int *attr)
{
	size_t lo = 0, hi = pd->nids;

	if (!pd->ids_sorted && pd->nids) {
		qsort(pd->ids, pd->nids, sizeof(*pd->ids), cmp_id);
		pd->ids_sorted = true;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pd->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == pd->nids || pd->ids[lo].id != id)
		return -ENOENT;
	*attr = pd->ids[lo].attr;
	return 0;
}

/* Event of sample record @r (@size bytes): by its IDENTIFIER or ID field
 * (at the position of the first event's layout, as perf finds it). */
static int sample_attr(struct pd *pd, const __u8 *r, size_t size, unsigned int *attr)
{
	__u64 st = pd->attrs[0].sample_type;
	size_t pos = 8;

	*attr = 0;
	if (pd->nattrs == 1)
		return 0;
	if (!(st & (PD_S_IDENTIFIER | PD_S_ID)))
		return 0;
	if (!(st & PD_S_IDENTIFIER)) {
		pos += 8 * (!!(st & PD_S_IP) + !!(st & PD_S_TID) + !!(st & PD_S_TIME) +
			    !!(st & PD_S_ADDR));
	}
	if (pos + 8 > size)
		return -EBADMSG;
	return find_id(pd, rd64(r + pos), attr) ? -EBADMSG : 0;
}

/* Time of a non-sample record from its sample_id trailer, else the record
 * number. */
static __u64 side_time(struct pd *pd, const __u8 *r, size_t size)
{
	const struct pd_attr *a = &pd->attrs[0];
	unsigned int after;
	__u64 st;

	if (!pd->use_time)
		return pd->seq;
	st = a->sample_type;
	if ((st & PD_S_IDENTIFIER) && size >= 16) {
		unsigned int i;

		if (!find_id(pd, rd64(r + size - 8), &i))
			st = pd->attrs[i].sample_type;
	}
	after = !!(st & PD_S_ID) + !!(st & PD_S_STREAM_ID) + !!(st & PD_S_CPU) +
		!!(st & PD_S_IDENTIFIER);
	if (size < 8 + 8 * (after + 1))
		return 0;
	return rd64(r + size - 8 * (after + 1));
}

/* ---- side-band pass ------------------------------------------------------ */

static int add_map(struct pd *pd, const __u8 *r, size_t size, bool v2, __u64 t)
{
	size_t fixed = v2 ? 8 + 64 : 8 + 32;
	__u16 misc = (__u16)(rd32(r + 4) & 0xffff);
	const char *name;
	struct pd_map m = {0};
	char hex[41];
	int err;

	if (size <= fixed)
		return -EBADMSG;
	if (v2 ? !(rd32(r + 64) & 4) /* PROT_EXEC */ : (misc & PD_MISC_MMAP_DATA))
		return 0;
	m.pid = (__s32)rd32(r + 8);
	m.start = rd64(r + 16);
	m.end = m.start + rd64(r + 24) < m.start ? (__u64)-1 : m.start + rd64(r + 24);
	m.pgoff = rd64(r + 32);
	m.time = t;
	if (m.end <= m.start)
		return 0;
	name = (const char *)r + fixed;
	if (!strncmp(name, "[kernel.kallsyms]", 17))
		err = pd__str(pd, "[kernel.kallsyms]", 17, &m.path);
	else
		err = pd__str(pd, name, size - fixed, &m.path);
	if (!err && v2 && (misc & PD_MISC_MMAP_BUILD_ID) && r[40] && r[40] <= 20) {
		hex__encode(hex, r + 44, r[40]);
		hex[2 * r[40]] = '\0';
		err = pd__str(pd, hex, strlen(hex), &m.bid);
		m.bid++;
	}
	if (!err)
		err = array__grow((void **)&pd->maps, &pd->maps_cap, pd->nmaps, sizeof(m), 256,
				  PERF_DATA_MAX_MAPS);
	if (!err)
		pd->maps[pd->nmaps++] = m;
	return err;
}

static int add_comm(struct pd *pd, const __u8 *r, size_t size, __u64 t)
{
	struct pd_comm c = {0};
	int err;

	if (size <= 16)
		return -EBADMSG;
	c.pid = (__s32)rd32(r + 8);
	c.tid = (__s32)rd32(r + 12);
	c.time = t;
	c.exec = rd32(r + 4) & PD_MISC_COMM_EXEC;
	err = pd__str(pd, (const char *)r + 16, size - 16 < 16 ? size - 16 : 16, &c.name);
	if (!err)
		err = array__grow((void **)&pd->comms, &pd->comms_cap, pd->ncomms, sizeof(c), 256,
				  PERF_DATA_MAX_MAPS);
	if (!err)
		pd->comms[pd->ncomms++] = c;
	return err;
}

static int add_fork(struct pd *pd, const __u8 *r, size_t size, __u64 t)
{
	struct pd_fork f;
	int err;

	if (size < 8 + 24)
		return -EBADMSG;
	f.pid = (__s32)rd32(r + 8);
	f.ppid = (__s32)rd32(r + 12);
	f.time = t;
	if (f.pid == f.ppid) /* a new thread: same process */
		return 0;
	err = array__grow((void **)&pd->forks, &pd->forks_cap, pd->nforks, sizeof(f), 256,
			  PERF_DATA_MAX_MAPS);
	if (!err)
		pd->forks[pd->nforks++] = f;
	return err;
}

/* Pipe mode's HEADER_ATTR: the attribute, then its ids. */
static int header_attr(struct pd *pd, const __u8 *r, size_t size, __u64 off)
{
	__u32 asize;

	if (size < 8 + 8)
		return pd__fail(pd, off, "bad HEADER_ATTR record");
	asize = rd32(r + 12);
	if (asize < 64 || asize > size - 8)
		return pd__fail(pd, off, "bad HEADER_ATTR record");
	return pd__add_attr(pd, r + 8, asize, r + 8 + asize, (size - 8 - asize) / 8, off);
}

/* One record of the first pass. */
static int side_record(struct pd *pd, const __u8 *r, __u32 type, size_t size, __u64 off,
		       bool *has_samples)
{
	unsigned int a;
	__u64 t;
	int err = 0;

	if (type == PD_REC_HEADER_ATTR)
		return header_attr(pd, r, size, off);
	if (type == PD_REC_HEADER_BUILD_ID)
		return pd__build_id_rec(pd, r, size);
	if (type == PD_REC_HEADER_FEATURE) /* pipe mode: a feature section */
		return size < 16 || rd64(r + 8) > 255 ? 0
						     : pd__feature(pd, (unsigned int)rd64(r + 8),
								   r + 16, size - 16);
	if (type == PD_REC_COMPRESSED || type == PD_REC_COMPRESSED2)
		return pd__fail(pd, off,
				"compressed records (perf record -z) are not read: record "
				"without -z, or 'perf inject -i IN -o OUT' first");
	if (!pd->nattrs)
		return pd__fail(pd, off, "a record before any event attribute");
	if (!pd->time_set) { /* match by time only when every record has one */
		unsigned int i;

		pd->use_time = true;
		for (i = 0; i < pd->nattrs; i++)
			pd->use_time &= (pd->attrs[i].sample_type & PD_S_TIME) &&
					pd->attrs[i].sample_id_all;
		pd->time_set = true;
	}
	t = side_time(pd, r, size);
	switch (type) {
	case PD_REC_MMAP:
	case PD_REC_MMAP2:
		err = add_map(pd, r, size, type == PD_REC_MMAP2, t);
		break;
	case PD_REC_COMM:
		err = add_comm(pd, r, size, t);
		break;
	case PD_REC_FORK:
		err = add_fork(pd, r, size, t);
		break;
	case PD_REC_LOST:
		pd->st->lost += size >= 24 ? rd64(r + 16) : 0;
		break;
	case PD_REC_LOST_SAMPLES:
		pd->st->lost += size >= 16 ? rd64(r + 8) : 0;
		break;
	case PD_REC_SAMPLE:
		if (!sample_attr(pd, r, size, &a))
			has_samples[a] = true;
		break;
	case PD_REC_EXIT:
	case PD_REC_FINISHED_ROUND:
		break;
	default:
		pd->st->unknown_records++;
	}
	return err == -EBADMSG ? 0 : err; /* a short side-band record is skipped */
}

/* ---- lookups ----------------------------------------------------------------- */

static int cmp_map(const void *x, const void *y)
{
	const struct pd_map *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->time < b->time ? -1 : a->time > b->time;
}

static int cmp_comm(const void *x, const void *y)
{
	const struct pd_comm *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->time < b->time ? -1 : a->time > b->time;
}

/* First index of @tid's comms. */
static size_t comm_first(const struct pd *pd, __s32 tid)
{
	size_t lo = 0, hi = pd->ncomms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pd->comms[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Name of thread @tid at @t (the newest before, else its first), or NULL. */
static const char *comm_at(const struct pd *pd, __s32 tid, __u64 t)
{
	size_t i = comm_first(pd, tid), best = SIZE_MAX;

	for (; i < pd->ncomms && pd->comms[i].tid == tid; i++) {
		if (best != SIZE_MAX && pd->comms[i].time > t)
			break;
		best = i;
	}
	return best == SIZE_MAX ? NULL : pd__get(pd, pd->comms[best].name);
}

/* Generation of process @pid at @t: the execs it did up to then. */
static __u32 gen_at(const struct pd *pd, __s32 pid, __u64 t)
{
	size_t i = comm_first(pd, pid);
	__u32 g = 0;

	for (; i < pd->ncomms && pd->comms[i].tid == pid && pd->comms[i].time <= t; i++)
		g += pd->comms[i].exec;
	return g;
}

/* The mapping of @addr in process @pid, generation @gen, at @t. */
static const struct pd_map *map_in(const struct pd *pd, __s32 pid, __u32 gen, __u64 t,
				   __u64 addr)
{
	size_t lo = 0, hi = pd->nmaps, n;
	const struct pd_map *best = NULL;

	/* last mapping of @pid starting at or below @addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct pd_map *m = &pd->maps[mid];

		if (m->pid < pid || (m->pid == pid && m->start <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (n = 0; lo > 0 && n < SCAN_MAX; lo--, n++) {
		const struct pd_map *m = &pd->maps[lo - 1];

		if (m->pid != pid)
			break;
		if (addr < m->end && m->gen == gen && m->time <= t &&
		    (!best || m->time > best->time))
			best = m;
	}
	return best;
}

static int cmp_fork(const void *x, const void *y)
{
	const struct pd_fork *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->time < b->time ? -1 : a->time > b->time;
}

/* First index of @pid's forks (sorted by pid, time). */
static size_t fork_first(const struct pd *pd, __s32 pid)
{
	size_t lo = 0, hi = pd->nforks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pd->forks[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The mapping of @addr for a sample of @pid at @t, through the parents of
 * a forked process that has not exec()ed. */
static const struct pd_map *map_of(const struct pd *pd, __s32 pid, __u64 t, __u64 addr)
{
	unsigned int depth;

	for (depth = 0; depth <= FORK_DEPTH; depth++) {
		__u32 gen = pid < 0 ? 0 : gen_at(pd, pid, t);
		const struct pd_map *m = map_in(pd, pid, gen, t, addr);
		const struct pd_fork *f = NULL;
		size_t i;

		if (m || pid < 0 || gen)
			return m;
		for (i = fork_first(pd, pid); i < pd->nforks && pd->forks[i].pid == pid &&
					      pd->forks[i].time <= t;
		     i++)
			f = &pd->forks[i];
		if (!f)
			return NULL;
		pid = f->ppid;
		t = f->time;
	}
	return NULL;
}

/* The name of thread @tid of @pid at @t: its own, else its process's (a new
 * thread keeps the name it was cloned with), else that of the parent the
 * process was forked from. */
static const char *name_of(const struct pd *pd, __s32 tid, __s32 pid, __u64 t)
{
	const char *name = comm_at(pd, tid, t);
	unsigned int depth;
	size_t i;

	for (depth = 0; !name && depth <= FORK_DEPTH; depth++) {
		const struct pd_fork *f = NULL;

		name = comm_at(pd, pid, t);
		for (i = fork_first(pd, pid);
		     !name && i < pd->nforks && pd->forks[i].pid == pid && pd->forks[i].time <= t;
		     i++)
			f = &pd->forks[i];
		if (name || !f)
			break;
		pid = f->ppid;
		t = f->time;
	}
	return name;
}

/* ---- samples ---------------------------------------------------------------- */

/* Bytes of the READ field for @a. */
static int read_size(const struct pd_attr *a, const __u8 *p, const __u8 *end, size_t *n)
{
	__u64 rf = a->read_format;
	size_t per = 8 + 8 * (!!(rf & 4) + !!(rf & 16)), head = 8 * (!!(rf & 1) + !!(rf & 2));

	if (!(rf & 8)) { /* one value */
		*n = per + head;
		return 0;
	}
	if (end - p < 8 || rd64(p) > 4096)
		return -EBADMSG;
	*n = 8 + head + rd64(p) * per;
	return 0;
}

/* Take @n bytes at *@p of @end: the start, or NULL past the end. */
static const __u8 *take(const __u8 **p, const __u8 *end, __u64 n)
{
	const __u8 *at = *p;

	if (!at || (__u64)(end - at) < n) {
		*p = NULL;
		return NULL;
	}
	*p += n;
	return at;
}

/* The fields of sample record @r (@size bytes) of event @attr. */
static int parse_sample(const struct pd *pd, const __u8 *r, size_t size, struct pd_sample *s)
{
	const struct pd_attr *a = &pd->attrs[s->attr];
	const __u8 *p = r + 8, *end = r + size, *q;
	__u64 st = a->sample_type, n;
	size_t rs;

	s->misc = (__u16)(rd32(r + 4) & 0xffff);
	take(&p, end, st & PD_S_IDENTIFIER ? 8 : 0);
	if ((st & PD_S_IP) && (q = take(&p, end, 8)))
		s->ip = rd64(q);
	if ((st & PD_S_TID) && (q = take(&p, end, 8))) {
		s->pid = (__s32)rd32(q);
		s->tid = (__s32)rd32(q + 4);
	}
	if ((st & PD_S_TIME) && (q = take(&p, end, 8)))
		s->time = rd64(q);
	take(&p, end, 8 * (!!(st & PD_S_ADDR) + !!(st & PD_S_ID) + !!(st & PD_S_STREAM_ID)));
	if ((st & PD_S_CPU) && (q = take(&p, end, 8))) {
		s->cpu = rd32(q);
		s->have_cpu = true;
	}
	if ((st & PD_S_PERIOD) && (q = take(&p, end, 8)))
		s->period = rd64(q);
	if ((st & PD_S_READ) && p && !read_size(a, p, end, &rs))
		take(&p, end, rs);
	else if (st & PD_S_READ)
		p = NULL;
	if ((st & PD_S_CALLCHAIN) && (q = take(&p, end, 8))) {
		s->nchain = rd64(q);
		if (s->nchain > (size / 8))
			return -EBADMSG;
		s->chain = take(&p, end, s->nchain * 8);
	}
	if ((st & PD_S_RAW) && (q = take(&p, end, 4)))
		take(&p, end, rd32(q)); /* with its size, padded to 8 bytes */
	if ((st & PD_S_BRANCH_STACK) && (q = take(&p, end, 8)))
		take(&p, end, rd64(q) * 24 + (a->branch_sample_type & (1u << 17) ? 8 : 0));
	if ((st & PD_S_REGS_USER) && (q = take(&p, end, 8)) && rd64(q)) {
		__u64 mask = a->regs_user, nr = (__u64)__builtin_popcountll(mask);
		const __u8 *regs = take(&p, end, nr * 8);
		static const unsigned int want[3] = {REG_BP, REG_SP, REG_IP};
		unsigned int i;

		s->have_regs = regs && (mask >> REG_IP & 1) && (mask >> REG_SP & 1);
		for (i = 0; s->have_regs && i < 3; i++)
			s->regs[i] = mask >> want[i] & 1
					     ? rd64(regs + 8 * __builtin_popcountll(
								    mask & ((1ull << want[i]) - 1)))
					     : 0;
	}
	if ((st & PD_S_STACK_USER) && (q = take(&p, end, 8)) && (n = rd64(q))) {
		const __u8 *data = take(&p, end, n), *dyn = take(&p, end, 8);

		s->stack = data;
		s->stack_len = dyn ? rd64(dyn) : 0;
		if (s->stack_len > n || n > STACK_USER_MAX)
			s->stack = NULL;
	}
	return p ? 0 : -EBADMSG;
}

struct walk_ctx {
	const struct pd *pd;
	__s32 pid;
	__u64 t;
};

static int walk_find_map(void *arg, __u64 addr, struct stackwalk_map *out)
{
	const struct walk_ctx *w = arg;
	const struct pd *pd = w->pd;
	const struct pd_map *m = map_of(pd, w->pid, w->t, addr);
	const char *bid;
	__u64 vaddr = 0;

	if (!m)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->m.start = m->start;
	out->m.end = m->end;
	out->m.bias = m->start - m->pgoff;
	bid = m->bid ? pd__get(pd, m->bid - 1) : pd__build_id(pd, m->path);
	if (bid && !bid[0])
		bid = NULL;
	if (!pd->uw->rows(pd->uw->ctx, pd__get(pd, m->path), bid, m->pgoff, &out->rows,
			  &out->m.nrows, &vaddr))
		out->m.bias = m->start - vaddr;
	else
		out->rows = NULL, out->m.nrows = 0;
	return 0;
}

/* Walk the user stack copy of @s, appending to pd->ips from *@n. */
static void unwind_user(struct pd *pd, const struct pd_sample *s, __u32 *n)
{
	struct walk_ctx w = {.pd = pd, .pid = s->pid, .t = s->time};
	struct stackwalk_ops ops = {.find_map = walk_find_map, .ctx = &w};
	struct stackwalk_regs regs = {.pc = s->regs[2], .sp = s->regs[1], .bp = s->regs[0],
				      .bp_ok = true, .exact = true};
	struct stackwalk_mem mem = {.base = s->regs[1], .data = s->stack, .len = s->stack_len};

	pd->st->unwound++;
	if (stackwalk__run(&ops, &regs, &mem, pd->ips, n, PERF_DATA_MAX_FRAMES) !=
	    STACKWALK_COMPLETE)
		pd->st->unwind_partial++;
}

/* The addresses of @s into pd->ips; *@nk gets how many are kernel ones
 * (they come first). */
static __u32 collect_ips(struct pd *pd, const struct pd_sample *s, __u32 *nk)
{
	bool dwarf = pd->uw && s->have_regs && s->stack && s->stack_len;
	bool kernel = (s->misc & CPUMODE_MASK) == CPUMODE_KERNEL ||
		      (s->misc & CPUMODE_MASK) == CPUMODE_GUEST_KERNEL;
	__u32 n = 0;
	__u64 i;

	*nk = 0;
	if (!s->chain && !(dwarf && !kernel)) {
		pd->ips[n++] = s->ip;
		*nk = kernel;
	}
	for (i = 0; s->chain && i < s->nchain; i++) {
		__u64 ip = rd64(s->chain + 8 * i);

		if (ip >= CONTEXT_MAX) {
			kernel = ip != CONTEXT_USER;
			continue;
		}
		if (!kernel && dwarf)
			continue; /* the walk below gives the user frames */
		if (n >= PERF_DATA_MAX_FRAMES) {
			pd->st->truncated++;
			break;
		}
		if (kernel && n == *nk)
			(*nk)++;
		pd->ips[n++] = ip;
	}
	if (dwarf && n < PERF_DATA_MAX_FRAMES)
		unwind_user(pd, s, &n);
	return n;
}

/* The build-id of mapping @m: MMAP2's, the header's, else the file's as
 * the unwind callbacks read it (remembered per path, "" for none). */
static const char *map_build_id(struct pd *pd, const struct pd_map *m)
{
	const char *bid = m->bid ? pd__get(pd, m->bid - 1) : pd__build_id(pd, m->path);
	char hex[256] = "";

	if (!bid && pd->uw && pd->uw->build_id) {
		if (pd->uw->build_id(pd->uw->ctx, pd__get(pd, m->path), hex, sizeof(hex)))
			hex[0] = '\0';
		if (!pd__set_build_id(pd, m->path, hex))
			bid = pd__build_id(pd, m->path);
	}
	return bid && bid[0] ? bid : NULL;
}

/* Wall-clock minus sample-clock nanoseconds (added modulo 2^64: a damaged
 * file gives a wrong time, never an overflow): the file's clock data when
 * it has some; else perf stamped samples with the kernel's monotonic clock,
 * which this host's clocks tell apart from the epoch (right for files
 * recorded since this boot; read once). */
static __s64 wall_offset(const struct pd *pd)
{
	static __u64 off;

	if (pd->have_clock)
		return pd->clock_off;
	if (!off) {
		__u64 wall = clock__ns(CLOCK_REALTIME), mono = clock__mono_ns();

		off = wall > mono ? wall - mono : 1;
	}
	return (__s64)off;
}

static int add_sample(struct pd *pd, const struct pd_sample *s)
{
	struct profile_process_desc proc = {.pid = s->pid};
	struct profile_labels lab = {.has_cpu = s->have_cpu, .cpu = s->cpu};
	__u32 type = pd->attrs[s->attr].value_type;
	__u64 t = pd->use_time ? s->time : pd->seq;
	__u32 n, nk, i;

	n = collect_ips(pd, s, &nk);
	proc.generation = s->pid > 0 ? gen_at(pd, s->pid, t) : 0;
	proc.exe_name = name_of(pd, s->pid, s->pid, t);
	for (i = 0; i < n; i++) {
		const struct pd_map *m = map_of(pd, i < nk ? -1 : s->pid, t, pd->ips[i]);
		struct profile_frame *f = &pd->frames[i];

		memset(f, 0, sizeof(*f));
		f->address = pd->ips[i];
		f->type = i < nk ? PROFILE_FRAME_KERNEL : PROFILE_FRAME_NATIVE;
		if (m) {
			struct profile_mapping_desc *d = &pd->mdesc[i];

			memset(d, 0, sizeof(*d));
			d->start = m->start;
			d->limit = m->end;
			d->file_offset = m->pgoff;
			d->path = pd__get(pd, m->path);
			d->build_id = i < nk ? pd__build_id(pd, m->path) : map_build_id(pd, m);
			f->mapping = d;
		}
	}
	pd->st->samples++;
	if (s->time)
		return profile__add_timed_sample(pd->p, type, &proc, (__u32)s->tid,
						 name_of(pd, s->tid, s->pid, t), &lab, pd->frames,
						 n, 1, s->time + (__u64)wall_offset(pd));
	return profile__add_typed_sample(pd->p, type, &proc, (__u32)s->tid,
					 name_of(pd, s->tid, s->pid, t), &lab, pd->frames, n, 1);
}

static int sample_record(struct pd *pd, const __u8 *r, size_t size)
{
	struct pd_sample s = {0};

	if (sample_attr(pd, r, size, &s.attr) || parse_sample(pd, r, size, &s)) {
		pd->st->unreadable++;
		return 0;
	}
	if (pd->use_time && s.time) {
		if (!pd->have_time || s.time < pd->t_first)
			pd->t_first = s.time;
		if (!pd->have_time || s.time > pd->t_last)
			pd->t_last = s.time;
		pd->have_time = true;
	}
	if (!pd->st->period && s.period)
		pd->st->period = s.period;
	return add_sample(pd, &s);
}

/* ---- driver ------------------------------------------------------------------ */

/* Walk the records of the data section, calling the pass's handler. */
static int each_record(struct pd *pd, int pass, bool *has_samples)
{
	__u64 off = pd->data_off, end = pd->data_off + pd->data_size;
	int err = 0;

	pd->seq = 0;
	while (!err && off < end) {
		const __u8 *r = pd->data + off;
		__u32 type;
		__u16 size;

		if (end - off < 8)
			return pd__fail(pd, off, "truncated record header");
		type = rd32(r);
		size = (__u16)(rd32(r + 4) >> 16);
		if (size < 8 || size > end - off)
			return pd__fail(pd, off, size < 8 ? "record shorter than its header"
							  : "truncated file: record past the end");
		if (type < 64 && size % 8)
			return pd__fail(pd, off, "record size not a multiple of 8 (corrupt data)");
		pd->seq++;
		if (pass == 0)
			err = side_record(pd, r, type, size, off, has_samples);
		else if (type == PD_REC_SAMPLE)
			err = sample_record(pd, r, size);
		off += size;
	}
	return err;
}

/* Each event with samples gets its value type, the first type 0. */
static int value_types(struct pd *pd, const bool *has_samples)
{
	bool first = true;
	unsigned int i;
	int err = 0;

	for (i = 0; i < pd->nattrs && !err; i++) {
		struct pd_attr *a = &pd->attrs[i];
		bool clock = a->type == 1 && a->config <= 1;

		if (!has_samples[i])
			continue;
		pd->st->events++;
		if (!first) {
			err = profile__add_value_type(pd->p, a->name, "count", a->name, "count",
						      a->freq ? 0 : (__s64)a->period,
						      &a->value_type);
			continue;
		}
		first = false;
		a->value_type = 0;
		snprintf(pd->st->event, sizeof(pd->st->event), "%s", a->name);
		pd->st->cpu_clock = clock;
		if (clock)
			pd->st->period = a->freq ? (a->period ? 1000000000ull / a->period : 0)
						 : a->period;
		else
			err = profile__set_value_types(pd->p, NULL, NULL, a->name, "count");
	}
	return err;
}

int pd__records(struct pd *pd)
{
	bool has_samples[PERF_DATA_MAX_ATTRS] = {0};
	size_t k;
	int err;

	err = each_record(pd, 0, has_samples);
	if (err)
		return err;
	if (!pd->nattrs)
		return pd__fail(pd, pd->data_off, "no event attribute");
	if (pd->ncomms) /* (qsort wants a valid pointer even for none) */
		qsort(pd->comms, pd->ncomms, sizeof(*pd->comms), cmp_comm);
	if (pd->nforks)
		qsort(pd->forks, pd->nforks, sizeof(*pd->forks), cmp_fork);
	for (k = 0; k < pd->nmaps; k++)
		pd->maps[k].gen = pd->maps[k].pid > 0
					  ? gen_at(pd, pd->maps[k].pid, pd->maps[k].time)
					  : 0;
	if (pd->nmaps)
		qsort(pd->maps, pd->nmaps, sizeof(*pd->maps), cmp_map);
	err = value_types(pd, has_samples);
	return err ?: each_record(pd, 1, has_samples);
}
