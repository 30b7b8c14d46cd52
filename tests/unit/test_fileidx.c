/* test_fileidx.c - the user-space copy of the BPF walker's file index:
 * set, find, replace, drop, map ids, and removals inside probe runs. */
#include <errno.h>
#include <stdbool.h>

#include "collect/fileidx.h"
#include "test.h"

static struct unwind_file_key key_of(__u64 dev, __u64 ino)
{
	return (struct unwind_file_key){.dev = dev, .ino = ino};
}

static int set(struct fileidx *x, __u64 dev, __u64 ino, __u32 slot, __u32 nrows)
{
	struct unwind_file_key k = key_of(dev, ino);
	struct unwind_file f = {.slot = slot, .nrows = nrows, .nseg = 1};

	f.seg[0][0] = ino;
	return fileidx__set(x, &k, &f);
}

static int find(struct fileidx *x, __u64 dev, __u64 ino, struct unwind_file *f)
{
	struct unwind_file_key k = key_of(dev, ino);

	return fileidx__find(x, &k, f);
}

TEST(set_find_drop)
{
	struct fileidx *x = fileidx__new(8);
	struct unwind_file_key k;
	struct unwind_file f;

	CHECK(x);
	CHECK(!fileidx__new(0));
	CHECK(find(x, 1, 2, &f) == -ENOENT);
	CHECK(!set(x, 1, 2, 3, 100));
	CHECK(!find(x, 1, 2, &f));
	CHECK_EQ_U64(f.slot, 3);
	CHECK_EQ_U64(f.nrows, 100);
	CHECK_EQ_U64(f.seg[0][0], 2);
	CHECK(find(x, 1, 3, &f) == -ENOENT);
	CHECK(set(x, 1, 2, 8, 1) == -EINVAL); /* slot out of range */
	CHECK(set(x, 0, 0, 1, 1) == -EINVAL); /* no file */
	fileidx__set_id(x, 3, 77);
	CHECK_EQ_U64(fileidx__id(x, 3), 77);
	CHECK_EQ_U64(fileidx__id(x, 4), 0);
	CHECK_EQ_U64(fileidx__id(x, 99), 0);
	CHECK(!fileidx__drop(x, 3, &k) && k.dev == 1 && k.ino == 2); /* the file it held */
	CHECK(find(x, 1, 2, &f) == -ENOENT);
	CHECK_EQ_U64(fileidx__id(x, 3), 0);
	CHECK(fileidx__drop(x, 3, NULL) == -ENOENT);  /* twice: nothing */
	CHECK(fileidx__drop(x, 99, NULL) == -ENOENT); /* out of range: nothing */
	fileidx__free(x);
	fileidx__free(NULL);
}

TEST(slot_reused_and_file_moved)
{
	struct fileidx *x = fileidx__new(4);
	struct unwind_file f;

	CHECK(x);
	CHECK(!set(x, 1, 10, 0, 5));
	CHECK(!set(x, 1, 11, 0, 6)); /* slot 0 given to another file */
	CHECK(find(x, 1, 10, &f) == -ENOENT);
	CHECK(!find(x, 1, 11, &f) && f.nrows == 6);
	CHECK(!set(x, 1, 11, 2, 7)); /* the file's table rebuilt in slot 2 */
	CHECK(!find(x, 1, 11, &f) && f.slot == 2 && f.nrows == 7);
	fileidx__drop(x, 0, NULL); /* the old slot emptied: the file stays in slot 2 */
	CHECK(!find(x, 1, 11, &f) && f.slot == 2);
	fileidx__drop(x, 2, NULL);
	CHECK(find(x, 1, 11, &f) == -ENOENT);
	fileidx__free(x);
}

/* Full indexes (8 files in 16 buckets: probe runs are the rule), each
 * file dropped in turn, in 50 different sets of files: after each drop
 * every remaining file must still be found and the dropped ones not. A
 * drop that left a hole inside a run would lose the files after it. */
TEST(removals_keep_runs)
{
	const __u32 n = 8;
	struct unwind_file f;
	__u32 set_i, i, j, order[8] = {3, 0, 6, 1, 7, 4, 2, 5};

	for (set_i = 0; set_i < 50; set_i++) {
		struct fileidx *x = fileidx__new(n);
		bool gone[8] = {false};

		CHECK(x);
		for (i = 0; i < n; i++)
			CHECK(!set(x, 8, 1000 * set_i + i, i, i + 1));
		for (i = 0; i < n; i++) {
			__u32 d = order[(i + set_i) % n];

			fileidx__drop(x, d, NULL);
			gone[d] = true;
			for (j = 0; j < n; j++) {
				int err = find(x, 8, 1000 * set_i + j, &f);

				CHECK(gone[j] ? err == -ENOENT
					      : !err && f.slot == j && f.nrows == j + 1);
			}
		}
		for (i = 0; i < n; i++) /* back, and all found again */
			CHECK(!set(x, 8, 1000 * set_i + i, n - 1 - i, 50 + i));
		for (j = 0; j < n; j++)
			CHECK(!find(x, 8, 1000 * set_i + j, &f) && f.slot == n - 1 - j);
		fileidx__free(x);
	}
}

int main(void)
{
	RUN(set_find_drop);
	RUN(slot_reused_and_file_moved);
	RUN(removals_keep_runs);
	return TEST_DONE();
}
