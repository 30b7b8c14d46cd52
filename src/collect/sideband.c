/* sideband.c - perf side-band records into proc/mapev.h (see sideband.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#include "collect/sideband.h"
#include "proc/mapev.h"

/* Records not applied yet are kept up to this many bytes; past it (the
 * reader fell far behind), the table forgets every process, as for lost
 * records. */
#define SIDEBAND_MAX_PENDING (1u << 20)
/* A record is applied once it is this much older than the drain: one of
 * the same process on another CPU's ring, older still, is written by
 * then. Later ones wait for the next drain. */
#define SIDEBAND_SETTLE_NS 100000ull
/* Expired exits are looked for at most this often. */
#define SIDEBAND_EXPIRE_NS 1000000000ull
/* The longest record: an MMAP2 with a PATH_MAX name. */
#define SIDEBAND_MAX_RECORD (sizeof(struct perf_event_header) + 64 + 4096)

struct sideband_ring {
	int fd;
	struct perf_event_mmap_page *page; /* NULL: no event on this CPU */
};

struct sideband {
	struct sideband_ring *rings;
	__u32 n;
	size_t map_len, data_len;
	__u64 next_expire_ns;
	struct sideband_stats st;
	/* Records read but not applied yet, in the order read (each ring's
	 * own order): applied in time order once older than the horizon. */
	unsigned char *pend;
	size_t plen, pcap;
	struct sb_pending *idx;
	size_t nidx, icap;
	/* a record that wraps around the ring's end, copied whole */
	_Alignas(8) unsigned char copy[SIDEBAND_MAX_RECORD];
};

struct sb_pending {
	__u64 time;
	size_t off; /* in pend */
};

struct rec_task { /* PERF_RECORD_FORK, PERF_RECORD_EXIT */
	__u32 pid, ppid, tid, ptid;
	__u64 time;
};

struct rec_comm {
	__u32 pid, tid;
	char comm[];
};

struct rec_mmap2 {
	__u32 pid, tid;
	__u64 addr, len, pgoff;
	__u32 maj, min;
	__u64 ino, ino_generation;
	__u32 prot, flags;
	char filename[];
};

struct rec_lost {
	__u64 id, lost;
};

static int open_cpu(int cpu, size_t data_len)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		/* each record ends with its time (CLOCK_MONOTONIC): records of
		 * one process come on the rings of the CPUs it ran on, and are
		 * put back in order */
		.sample_type = PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.watermark = 1,
		.wakeup_watermark = (__u32)(data_len / 2),
	};

	return (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

int sideband__open(const bool *online, __u32 n, struct sideband **out)
{
	long page = sysconf(_SC_PAGESIZE);
	struct sideband *sb;
	__u32 i;
	int err = 0;

	*out = NULL;
	if (page <= 0)
		return -EINVAL;
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	sb->rings = calloc(n ? n : 1, sizeof(*sb->rings));
	if (!sb->rings) {
		free(sb);
		return -ENOMEM;
	}
	sb->n = n;
	sb->data_len = (size_t)page * SIDEBAND_PAGES;
	sb->map_len = sb->data_len + (size_t)page;
	for (i = 0; i < n; i++)
		sb->rings[i].fd = -1;
	for (i = 0; i < n && !err; i++) {
		void *p;

		if (!online[i])
			continue;
		sb->rings[i].fd = open_cpu((int)i, sb->data_len);
		if (sb->rings[i].fd < 0) {
			err = -errno;
			break;
		}
		p = mmap(NULL, sb->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, sb->rings[i].fd, 0);
		if (p == MAP_FAILED) {
			err = -errno;
			break;
		}
		sb->rings[i].page = p;
	}
	if (err) {
		sideband__free(sb);
		return err;
	}
	*out = sb;
	return 0;
}

void sideband__free(struct sideband *sb)
{
	__u32 i;

	if (!sb)
		return;
	for (i = 0; i < sb->n; i++) {
		if (sb->rings[i].page)
			munmap(sb->rings[i].page, sb->map_len);
		if (sb->rings[i].fd >= 0)
			close(sb->rings[i].fd);
	}
	free(sb->rings);
	free(sb->pend);
	free(sb->idx);
	free(sb);
}

__u32 sideband__count(const struct sideband *sb)
{
	return sb->n;
}

int sideband__fd(const struct sideband *sb, __u32 i)
{
	return i < sb->n ? sb->rings[i].fd : -1;
}

/* One record @h (its whole @h->size bytes readable), of time @time, into @m. */
static void take(struct sideband *sb, struct mapev *m, const struct perf_event_header *h,
		 __u64 time)
{
	const void *body = h + 1;
	size_t len = h->size - sizeof(*h);

	switch (h->type) {
	case PERF_RECORD_MMAP2: {
		const struct rec_mmap2 *r = body;
		struct mapev_map mm;
		size_t name;

		if (len <= sizeof(*r) || (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
			break;
		name = len - sizeof(*r);
		if (!memchr(r->filename, '\0', name))
			break; /* not NUL-terminated in the record: malformed */
		mm = (struct mapev_map){.start = r->addr,
					.len = r->len,
					.pgoff = r->pgoff,
					.ino = r->ino,
					.maj = r->maj,
					.min = r->min,
					.prot = r->prot,
					.flags = r->flags,
					.path = r->filename};
		mapev__mmap(m, r->pid, &mm);
		break;
	}
	case PERF_RECORD_COMM: {
		const struct rec_comm *r = body;

		if (len <= sizeof(*r) || r->pid != r->tid)
			break;
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			mapev__exec(m, r->pid, r->comm);
		else
			mapev__rename(m, r->pid, r->comm);
		break;
	}
	case PERF_RECORD_FORK: {
		const struct rec_task *r = body;

		if (len >= sizeof(*r) && r->pid == r->tid)
			mapev__fork(m, r->pid, r->ppid);
		break;
	}
	case PERF_RECORD_EXIT: {
		const struct rec_task *r = body;

		if (len >= sizeof(*r) && r->pid == r->tid)
			mapev__exit(m, r->pid, time);
		break;
	}
	case PERF_RECORD_LOST: {
		const struct rec_lost *r = body;

		if (len >= sizeof(*r))
			__atomic_fetch_add(&sb->st.lost, r->lost, __ATOMIC_RELAXED);
		mapev__lost(m);
		break;
	}
	default:
		break;
	}
}

/* Keep record @rec (whole, @rec->size bytes) for sideband__drain(). 0,
 * -ENOSPC past SIDEBAND_MAX_PENDING bytes, -ENOMEM. */
static int pend_add(struct sideband *sb, const struct perf_event_header *rec)
{
	__u64 time;

	if (rec->size < sizeof(*rec) + sizeof(time))
		return 0; /* no time: not one this reads */
	memcpy(&time, (const unsigned char *)rec + rec->size - sizeof(time), sizeof(time));
	if (sb->plen + rec->size > SIDEBAND_MAX_PENDING)
		return -ENOSPC;
	if (sb->plen + rec->size > sb->pcap) {
		size_t cap = sb->pcap ? 2 * sb->pcap : 16384;
		unsigned char *p;

		while (cap < sb->plen + rec->size)
			cap *= 2;
		p = realloc(sb->pend, cap);
		if (!p)
			return -ENOMEM;
		sb->pend = p;
		sb->pcap = cap;
	}
	if (sb->nidx == sb->icap) {
		size_t cap = sb->icap ? 2 * sb->icap : 256;
		struct sb_pending *p = realloc(sb->idx, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		sb->idx = p;
		sb->icap = cap;
	}
	memcpy(sb->pend + sb->plen, rec, rec->size);
	sb->idx[sb->nidx++] = (struct sb_pending){.time = time, .off = sb->plen};
	sb->plen += rec->size;
	return 0;
}

/* The records of ring @r into the pending ones. Returns how many; *@full
 * set when some did not fit. */
static __u64 drain_ring(struct sideband *sb, struct sideband_ring *r, bool *full)
{
	const unsigned char *data = (const unsigned char *)r->page + (sb->map_len - sb->data_len);
	__u64 head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = r->page->data_tail, got = 0;
	size_t mask = sb->data_len - 1;

	while (tail < head) {
		struct perf_event_header h;
		size_t at = (size_t)(tail & mask), first;
		const struct perf_event_header *rec;

		if (head - tail < sizeof(h))
			break;
		first = sb->data_len - at;
		if (first >= sizeof(h)) {
			memcpy(&h, data + at, sizeof(h));
		} else {
			memcpy(&h, data + at, first);
			memcpy((unsigned char *)&h + first, data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || h.size > head - tail)
			break; /* torn: the kernel never writes it so */
		if (h.size <= first) {
			rec = (const struct perf_event_header *)(data + at);
		} else if (h.size <= sizeof(sb->copy)) {
			memcpy(sb->copy, data + at, first);
			memcpy(sb->copy + first, data, h.size - first);
			rec = (const struct perf_event_header *)sb->copy;
		} else {
			rec = NULL; /* longer than any record this reads */
		}
		if (rec && pend_add(sb, rec))
			*full = true;
		tail += h.size;
		got++;
	}
	__atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
	return got;
}

static int by_time(const void *a, const void *b)
{
	const struct sb_pending *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off; /* read order */
}

static int by_offset(const void *a, const void *b)
{
	const struct sb_pending *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

__u64 sideband__drain(struct sideband *sb, struct mapev *m, __u64 now_ns)
{
	__u64 got = 0, horizon = now_ns > SIDEBAND_SETTLE_NS ? now_ns - SIDEBAND_SETTLE_NS : 0;
	bool full = false;
	size_t i, keep = 0, at = 0;
	__u32 k;

	for (k = 0; k < sb->n; k++)
		if (sb->rings[k].page)
			got += drain_ring(sb, &sb->rings[k], &full);
	__atomic_fetch_add(&sb->st.records, got, __ATOMIC_RELAXED);
	if (full) {
		/* Fell behind by more than the pending cap: start over. */
		__atomic_fetch_add(&sb->st.lost, 1, __ATOMIC_RELAXED);
		mapev__lost(m);
		sb->plen = sb->nidx = 0;
		return got;
	}
	qsort(sb->idx, sb->nidx, sizeof(*sb->idx), by_time);
	for (i = 0; i < sb->nidx && sb->idx[i].time <= horizon; i++)
		take(sb, m, (const struct perf_event_header *)(sb->pend + sb->idx[i].off),
		     sb->idx[i].time);
	/* The rest (records of the last SIDEBAND_SETTLE_NS) waits for the
	 * next drain, moved to the front. */
	if (i == sb->nidx) {
		sb->plen = sb->nidx = 0;
	} else if (i) {
		/* In place, in offset order: each record moves down, over
		 * bytes already moved or taken (the next drain sorts by time). */
		keep = sb->nidx - i;
		memmove(sb->idx, sb->idx + i, keep * sizeof(*sb->idx));
		qsort(sb->idx, keep, sizeof(*sb->idx), by_offset);
		for (i = 0; i < keep; i++) {
			const struct perf_event_header *h =
				(const void *)(sb->pend + sb->idx[i].off);
			size_t size = h->size;

			memmove(sb->pend + at, h, size);
			sb->idx[i].off = at;
			at += size;
		}
		sb->plen = at;
		sb->nidx = keep;
	}
	if (now_ns >= sb->next_expire_ns) {
		mapev__expire(m, now_ns);
		sb->next_expire_ns = now_ns + SIDEBAND_EXPIRE_NS;
	}
	return got;
}

void sideband__stats(const struct sideband *sb, struct sideband_stats *st)
{
	/* from another thread than the reader's: each field whole */
	st->records = __atomic_load_n(&sb->st.records, __ATOMIC_RELAXED);
	st->lost = __atomic_load_n(&sb->st.lost, __ATOMIC_RELAXED);
}
