/* test_late.c - the late-walking queue without BPF maps (no root): records
 * are checked, wait for tables until a deadline, and are never lost: what
 * cannot be walked comes out with the frames the BPF walker found, flagged
 * partial, with its kernel stack and key. A missing table is asked for
 * (with a BPF map for the file index: root only). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>

#include "cpu_sampler.h"
#include "collect/late.h"
#include "proc/procmaps.h"
#include "test.h"

static struct sampler_record got[8];
static __u64 got_ips[8][8];
static __u64 got_kips[8][8]; /* the record's stacks live only in the callback */
static int ngot;

static int collect(void *ctx, const struct sampler_record *r)
{
	(void)ctx;
	if (ngot < 8) {
		got[ngot] = *r;
		memcpy(got_ips[ngot], r->ustack, (r->nustack < 8 ? r->nustack : 8) * sizeof(__u64));
		if (r->nkstack)
			memcpy(got_kips[ngot], r->kstack,
			       (r->nkstack < 8 ? r->nkstack : 8) * sizeof(__u64));
		ngot++;
	}
	return 0;
}

static struct late_sample *sample(__u32 tgid, size_t *len)
{
	struct late_sample *ls = calloc(1, sizeof(*ls));

	ls->key.tgid = tgid;
	ls->key.tid = tgid + 1;
	memcpy(ls->key.comm, "worker", 7);
	ls->nuser = 2;
	ls->uips[0] = 0x401000;
	ls->uips[1] = 0x7f0000001000;
	ls->pc = ls->uips[1];
	ls->nkern = 1;
	ls->kips[0] = 0xffffffff81000000ull;
	ls->len = 64;
	*len = offsetof(struct late_sample, stack) + ls->len;
	return ls;
}

TEST(malformed_records_are_refused)
{
	struct late *l = late__new("/nonexistent");
	struct late_sample *ls;
	size_t len;

	CHECK(l);
	ls = sample(1, &len);
	CHECK_EQ_U64(late__push(l, NULL, ls, 10, 0), -EINVAL);	    /* shorter than its head */
	CHECK_EQ_U64(late__push(l, NULL, ls, len - 1, 0), -EINVAL); /* copy cut */
	ls->nuser = 0;
	CHECK_EQ_U64(late__push(l, NULL, ls, len, 0), -EINVAL);
	ls->nuser = PROFCAP_LATE_PREFIX + 1;
	CHECK_EQ_U64(late__push(l, NULL, ls, len, 0), -EINVAL);
	ls->nuser = 2;
	ls->len = PROFCAP_LATE_STACK + 1;
	CHECK_EQ_U64(late__push(l, NULL, ls, len, 0), -EINVAL);
	CHECK_EQ_U64(late__pending(l), 0);
	free(ls);
	late__free(l);
}

/* No tables (no maps to read, no BPF maps): the sample waits, then comes
 * out as the BPF walker left it, partial. */
TEST(waits_then_emits_what_it_has)
{
	struct late_tables t = {.procs = -1, .maps = -1, .files = -1, .file_idx = -1};
	struct late *l = late__new("/nonexistent");
	struct late_stats st;
	struct late_sample *ls;
	size_t len;

	CHECK(l);
	ls = sample(4242, &len);
	CHECK_EQ_U64(late__push(l, &t, ls, len, 1000), 0);
	free(ls);
	ngot = 0;
	CHECK_EQ_U64(late__flush(l, &t, 1000 + LATE_WAIT_NS / 2, false, collect, NULL), 0);
	CHECK_EQ_U64(ngot, 0);
	CHECK_EQ_U64(late__pending(l), 1);
	CHECK_EQ_U64(late__flush(l, &t, 1000 + LATE_WAIT_NS, false, collect, NULL), 0);
	CHECK_EQ_U64(ngot, 1);
	CHECK_EQ_U64(late__pending(l), 0);
	CHECK_EQ_U64(got[0].tgid, 4242);
	CHECK_EQ_U64(got[0].tid, 4243);
	CHECK_EQ_U64(got[0].count, 1);
	CHECK_STR(got[0].comm, "worker");
	CHECK(got[0].flags & SAMPLER_REC_USTACK_PARTIAL);
	CHECK_EQ_U64(got[0].nustack, 2);
	CHECK_EQ_U64(got_ips[0][0], 0x401000);
	CHECK_EQ_U64(got_ips[0][1], 0x7f0000001000);
	CHECK_EQ_U64(got[0].nkstack, 1);
	CHECK_EQ_U64(got_kips[0][0], 0xffffffff81000000ull);
	late__stats(l, &st);
	CHECK_EQ_U64(st.received, 1);
	CHECK_EQ_U64(st.partial, 1);
	CHECK_EQ_U64(st.no_tables, 1);
	late__free(l);
}

/* Maps offered by the notice's snapshot serve the process's next samples
 * (same thread name, within LATE_SNAP_SHARE_NS): no read of its maps
 * (under a root where none exists, a read would find nothing). Another
 * name (an exec since) or an older offer reads them. */
TEST(offered_maps_spare_a_read)
{
	static const char text[] =
		"00400000-00452000 r-xp 00000000 08:01 1234 /usr/bin/worker\n"
		"7f0000000000-7f0000100000 r-xp 00000000 08:01 99 /usr/lib/libc.so.6\n";
	struct late_tables t = {.procs = -1, .maps = -1, .files = -1, .file_idx = -1};
	struct late *l = late__new("/nonexistent");
	struct procmaps *pm = NULL;
	struct late_sample *ls;
	struct late_stats st;
	size_t len;

	CHECK(l);
	CHECK(!procmaps__parse(text, sizeof(text) - 1, &pm));
	ls = sample(77, &len);
	late__offer_maps(l, 77, "worker", pm, 1000);
	late__offer_maps(NULL, 77, "worker", pm, 1000); /* nothing */
	late__offer_maps(l, 77, "worker", NULL, 1000);	/* nothing */
	CHECK_EQ_U64(late__push(l, NULL, ls, len, 1000 + LATE_SNAP_SHARE_NS / 2), 0);
	CHECK_EQ_U64(late__push(l, NULL, ls, len, 1000 + LATE_SNAP_SHARE_NS), 0);
	late__stats(l, &st);
	CHECK_EQ_U64(st.maps_offered, 1);
	CHECK_EQ_U64(st.maps_read, 0);
	/* exec'd since: another name */
	late__offer_maps(l, 77, "bash", pm, 5000);
	CHECK_EQ_U64(late__push(l, NULL, ls, len, 5000), 0);
	late__stats(l, &st);
	CHECK_EQ_U64(st.maps_read, 1);
	/* too old */
	late__offer_maps(l, 77, "worker", pm, 9000);
	CHECK_EQ_U64(late__push(l, NULL, ls, len, 9000 + 2 * LATE_SNAP_SHARE_NS), 0);
	late__stats(l, &st);
	CHECK_EQ_U64(st.maps_read, 2);
	CHECK_EQ_U64(st.maps_offered, 3);
	ngot = 0;
	CHECK_EQ_U64(late__flush(l, &t, 0, true, collect, NULL), 0);
	CHECK_EQ_U64(ngot, 4);
	free(ls);
	procmaps__free(pm);
	late__free(l);
}

/* A batch of notices taken before its samples (the main thread reads the
 * rings at a drain): each process's offered maps still serve its sample,
 * for the LATE_RECENT newest processes; an older one's are read again. */
TEST(offered_maps_of_a_batch_serve_its_samples)
{
	static const char text[] = "00400000-00452000 r-xp 00000000 08:01 1234 /usr/bin/worker\n";
	struct late *l = late__new("/nonexistent");
	struct late_sample *ls[LATE_RECENT + 1];
	struct procmaps *pm = NULL;
	struct late_stats st;
	size_t len;
	__u32 i;

	CHECK(l);
	CHECK(!procmaps__parse(text, sizeof(text) - 1, &pm));
	for (i = 0; i <= LATE_RECENT; i++) {
		ls[i] = sample(100 + i, &len);
		late__offer_maps(l, 100 + i, "worker", pm, 1000 + i);
	}
	/* pushed with the batch's start: before the offers */
	for (i = LATE_RECENT; i >= 1; i--)
		CHECK_EQ_U64(late__push(l, NULL, ls[i], len, 1000), 0);
	late__stats(l, &st);
	CHECK_EQ_U64(st.maps_offered, LATE_RECENT + 1);
	CHECK_EQ_U64(st.maps_read, 0);
	/* the first offer was pushed out by the LATE_RECENT after it */
	CHECK_EQ_U64(late__push(l, NULL, ls[0], len, 1000), 0);
	late__stats(l, &st);
	CHECK_EQ_U64(st.maps_read, 1);
	for (i = 0; i <= LATE_RECENT; i++)
		free(ls[i]);
	procmaps__free(pm);
	late__free(l);
}

static int wants;
static __u64 want_args[4];

static void want(void *ctx, __u32 tgid, __u64 start, __u64 dev, __u64 ino)
{
	(void)ctx;
	wants++;
	want_args[0] = tgid;
	want_args[1] = start;
	want_args[2] = dev;
	want_args[3] = ino;
}

/* A walk that reaches a file with no table (lazy tables: a library no walk
 * needed before) asks for it, by the mapping and the file the sample saw,
 * and waits for it. Needs a BPF hash map for the file index (root). */
TEST(missing_table_is_asked_for)
{
	static const char text[] = "7f0000000000-7f0000100000 r-xp 00000000 08:01 99 "
				   "/usr/lib/libc.so.6\n";
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	struct late_tables t = {.procs = -1, .maps = -1, .files = -1, .want = want};
	struct late *l = late__new("/nonexistent");
	struct procmaps *pm = NULL;
	struct late_sample *ls;
	size_t len;

	CHECK(l);
	t.file_idx =
		bpf_map_create(BPF_MAP_TYPE_HASH, "test_file_idx", sizeof(struct unwind_file_key),
			       sizeof(struct unwind_file), 4, &opts);
	if (t.file_idx < 0) {
		late__free(l);
		SKIP("cannot create a BPF map here (%s): needs root", strerror(errno));
	}
	CHECK(!procmaps__parse(text, sizeof(text) - 1, &pm));
	ls = sample(77, &len);
	late__offer_maps(l, 77, "worker", pm, 1000);
	wants = 0;
	CHECK_EQ_U64(late__push(l, &t, ls, len, 1000), 0);
	CHECK_EQ_U64(wants, 1);
	CHECK_EQ_U64(want_args[0], 77);
	CHECK_EQ_U64(want_args[1], 0x7f0000000000ull);
	CHECK_EQ_U64(want_args[2], (__u64)8 << 32 | 1); /* 08:01 */
	CHECK_EQ_U64(want_args[3], 99);
	CHECK_EQ_U64(late__pending(l), 1); /* waits for it */
	ngot = 0;
	CHECK_EQ_U64(late__flush(l, &t, 0, true, collect, NULL), 0);
	CHECK_EQ_U64(ngot, 1);
	close(t.file_idx);
	free(ls);
	procmaps__free(pm);
	late__free(l);
}

/* At the end of a capture nothing waits; the queue has a cap. */
TEST(final_flush_and_cap)
{
	struct late_tables t = {.procs = -1, .maps = -1, .files = -1, .file_idx = -1};
	struct late *l = late__new("/nonexistent");
	struct late_stats st;
	struct late_sample *ls;
	size_t len, i;
	int full = 0;

	CHECK(l);
	ls = sample(7, &len);
	for (i = 0; i < LATE_QUEUE_MAX + 3; i++)
		full += late__push(l, NULL, ls, len, 0) == -ENOSPC;
	free(ls);
	CHECK_EQ_U64(full, 3);
	CHECK_EQ_U64(late__pending(l), LATE_QUEUE_MAX);
	ngot = 0;
	CHECK_EQ_U64(late__flush(l, &t, 0, true, collect, NULL), 0);
	CHECK_EQ_U64(late__pending(l), 0);
	late__stats(l, &st);
	CHECK_EQ_U64(st.partial, LATE_QUEUE_MAX);
	CHECK_EQ_U64(st.dropped, 3);
	late__free(l);
	late__free(NULL);
}

int main(void)
{
	RUN(malformed_records_are_refused);
	RUN(waits_then_emits_what_it_has);
	RUN(offered_maps_spare_a_read);
	RUN(offered_maps_of_a_batch_serve_its_samples);
	RUN(final_flush_and_cap);
	RUN(missing_table_is_asked_for);
	return TEST_DONE();
}
