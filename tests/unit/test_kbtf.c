/* test_kbtf.c - the fast kernel-struct and function-ID reader against
 * libbpf's full parse: a BTF written here (anonymous members before and
 * after their parent, nested, behind a typedef, bitfield offsets; functions
 * and a struct of the same name) and, where readable, the running
 * kernel's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "collect/kbtf.h"
#include "test.h"

static long off_in(const struct btf *btf, const char *sname, const char *name)
{
	__u32 off;

	return kbtf__member_off(btf, sname, name, &off) ? -1 : (long)off;
}

static int write_file(const char *path, const void *data, __u32 len)
{
	FILE *f = fopen(path, "w");
	int ok = f && fwrite(data, 1, len, f) == len;

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* kbtf__load() of the structs @want (@n) of BTF @w, written to a file. */
static struct btf *load_written(struct btf *w, const char *const *want, size_t n)
{
	char path[] = "/tmp/test_kbtf.XXXXXX";
	const void *raw;
	struct btf *r;
	__u32 len;
	int fd;

	raw = btf__raw_data(w, &len);
	fd = raw ? mkstemp(path) : -1;
	if (fd < 0)
		return NULL;
	close(fd);
	r = write_file(path, raw, len) ? NULL : kbtf__load(path, want, n);
	unlink(path);
	return r;
}

TEST(written_btf)
{
	static const char *const want[] = {"outer", "other", "missing"};
	struct btf *w = btf__new_empty(), *r;
	int l, early, u, anon2, td, outer;

	CHECK(w);
	l = btf__add_int(w, "long", 8, BTF_INT_SIGNED);
	/* an anonymous struct declared before the struct that holds it */
	early = btf__add_struct(w, NULL, 16);
	CHECK(early > 0);
	CHECK(!btf__add_field(w, "e1", l, 0, 0) && !btf__add_field(w, "e2", l, 64, 0));
	td = btf__add_typedef(w, "early_t", early);
	CHECK(td > 0);
	outer = btf__add_struct(w, "outer", 64);
	CHECK(outer > 0);
	CHECK(!btf__add_field(w, "a", l, 0, 0));
	CHECK(!btf__add_field(w, NULL, td, 64, 0));	    /* e1 at 8, e2 at 16 */
	CHECK(!btf__add_field(w, NULL, outer + 1, 192, 0)); /* the union below */
	CHECK(!btf__add_field(w, "b", l, 448, 0));
	u = btf__add_union(w, NULL, 24);
	CHECK(u == outer + 1);
	CHECK(!btf__add_field(w, "z", l, 0, 0));
	CHECK(!btf__add_field(w, NULL, u + 1, 0, 0)); /* nested: x at 24, y at 32 */
	anon2 = btf__add_struct(w, NULL, 16);
	CHECK(anon2 == u + 1);
	CHECK(!btf__add_field(w, "x", l, 0, 0) && !btf__add_field(w, "y", l, 64, 0));
	CHECK(btf__add_struct(w, "other", 8) > 0);
	CHECK(!btf__add_field(w, "bits", l, 3, 5)); /* a bitfield: kind_flag offsets */
	CHECK(btf__add_struct(w, "outer_not", 8) > 0);

	r = load_written(w, want, 3);
	CHECK(r);
	CHECK_EQ_U64(off_in(r, "outer", "a"), 0);
	CHECK_EQ_U64(off_in(r, "outer", "e1"), 8);
	CHECK_EQ_U64(off_in(r, "outer", "e2"), 16);
	CHECK_EQ_U64(off_in(r, "outer", "z"), 24);
	CHECK_EQ_U64(off_in(r, "outer", "x"), 24);
	CHECK_EQ_U64(off_in(r, "outer", "y"), 32);
	CHECK_EQ_U64(off_in(r, "outer", "b"), 56);
	CHECK(off_in(r, "other", "bits") == 0); /* bit 3: byte 0 */
	CHECK(off_in(r, "outer", "bits") == -1);
	CHECK(btf__find_by_name_kind(r, "missing", BTF_KIND_STRUCT) < 0);
	CHECK(btf__find_by_name_kind(r, "outer_not", BTF_KIND_STRUCT) < 0);
	btf__free(r);
	btf__free(w);
}

/* Over a hundred types between an anonymous member's type and its struct,
 * behind two typedefs declared in reverse: the passes after the first start
 * from the checkpoint below each wanted type (collect/kbtf.c), and one
 * anonymous member of a type past the last one ends them too. */
TEST(written_btf_far_back)
{
	static const char *const want[] = {"far"};
	struct btf *w = btf__new_empty(), *r;
	int l, i, early, td1, td2, far;

	CHECK(w);
	l = btf__add_int(w, "long", 8, BTF_INT_SIGNED);
	for (i = 0; i < 150; i++)
		CHECK(btf__add_int(w, "pad", 4, 0) > 0);
	early = btf__add_struct(w, NULL, 16); /* id 152: past the first checkpoint */
	CHECK(early == 152);
	CHECK(!btf__add_field(w, "p", l, 0, 0) && !btf__add_field(w, "q", l, 64, 0));
	for (i = 0; i < 100; i++)
		CHECK(btf__add_int(w, "pad", 4, 0) > 0);
	td1 = btf__add_typedef(w, "early_t", early); /* 253 */
	for (i = 0; i < 100; i++)
		CHECK(btf__add_int(w, "pad", 4, 0) > 0);
	td2 = btf__add_typedef(w, "early2_t", td1); /* 354 */
	CHECK(td1 > early && td2 > td1);
	for (i = 0; i < 100; i++)
		CHECK(btf__add_int(w, "pad", 4, 0) > 0);
	far = btf__add_struct(w, "far", 48);
	CHECK(far > td2);
	CHECK(!btf__add_field(w, "a", l, 0, 0));
	CHECK(!btf__add_field(w, NULL, td2, 64, 0));	  /* p at 8, q at 16 */
	CHECK(!btf__add_field(w, NULL, far + 1, 192, 0)); /* no such type */
	CHECK(!btf__add_field(w, "b", l, 320, 0));

	r = load_written(w, want, 1);
	CHECK(r);
	CHECK_EQ_U64(off_in(r, "far", "a"), 0);
	CHECK_EQ_U64(off_in(r, "far", "p"), 8);
	CHECK_EQ_U64(off_in(r, "far", "q"), 16);
	CHECK_EQ_U64(off_in(r, "far", "b"), 40);
	btf__free(r);
	btf__free(w);
}

/* @raw (@len bytes) written to a file: its path in @path, 0 or -1. */
static int written(char *path, const void *raw, __u32 len)
{
	int fd = raw ? mkstemp(path) : -1;

	if (fd < 0)
		return -1;
	close(fd);
	return write_file(path, raw, len);
}

TEST(func_id_written)
{
	char path[] = "/tmp/test_kbtf.XXXXXX";
	struct btf *w = btf__new_empty();
	int l, proto, f1, f2, st;
	const void *raw;
	__u32 len, id = 0;

	CHECK(w);
	l = btf__add_int(w, "long", 8, BTF_INT_SIGNED);
	/* a struct named like the function, before it: not a match */
	st = btf__add_struct(w, "work_fn", 8);
	CHECK(st > 0 && !btf__add_field(w, "a", l, 0, 0));
	proto = btf__add_func_proto(w, l);
	CHECK(proto > 0 && !btf__add_func_param(w, "x", l));
	f1 = btf__add_func(w, "other_fn", BTF_FUNC_STATIC, proto);
	f2 = btf__add_func(w, "work_fn", BTF_FUNC_GLOBAL, proto);
	CHECK(f1 > 0 && f2 > 0);
	raw = btf__raw_data(w, &len);
	CHECK(!written(path, raw, len));
	CHECK(!kbtf__func_id(path, "work_fn", &id));
	CHECK(id == (__u32)f2);
	CHECK(!kbtf__func_id(path, "other_fn", &id));
	CHECK(id == (__u32)f1);
	CHECK(kbtf__func_id(path, "absent_fn", &id) == -ENOENT);
	CHECK(kbtf__func_id(path, "long", &id) == -ENOENT); /* a name, not a function */
	unlink(path);
	CHECK(kbtf__func_id("/nonexistent/btf", "work_fn", &id) == -ENOENT);
	btf__free(w);
}

TEST(not_btf)
{
	static const char *const want[] = {"task_struct"};
	char path[] = "/tmp/test_kbtf.XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write(fd, "not btf at all, not at all", 26) == 26);
	close(fd);
	errno = 0;
	CHECK(!kbtf__load(path, want, 1));
	CHECK(errno == EINVAL);
	unlink(path);
	CHECK(!kbtf__load("/nonexistent/btf", want, 1));
	CHECK(errno == ENOENT);
}

/* Every member the sampler reads, as libbpf's full parse finds it. */
TEST(kernel_btf_matches_libbpf)
{
	static const char *const want[] = {"vm_area_struct", "file",	    "inode",
					   "super_block",    "task_struct", "thread_struct",
					   "sched_entity",   "cfs_rq",	    "rq"};
	static const char *const members[][2] = {
		{"vm_area_struct", "vm_start"},
		{"vm_area_struct", "vm_end"},
		{"vm_area_struct", "vm_pgoff"},
		{"vm_area_struct", "vm_file"},
		{"file", "f_inode"},
		{"inode", "i_ino"},
		{"inode", "i_sb"},
		{"super_block", "s_dev"},
		{"task_struct", "thread"},
		{"thread_struct", "fsbase"},
		{"task_struct", "pid"},
		{"task_struct", "tgid"},
		{"task_struct", "comm"},
		{"task_struct", "__state"},
		{"task_struct", "mm"},
		{"task_struct", "stack"},
		{"task_struct", "se"},
		{"task_struct", "start_time"},
		{"sched_entity", "cfs_rq"},
		{"cfs_rq", "rq"},
		{"rq", "clock"},
	};
	struct btf *full, *fast;
	size_t i;

	if (access(KBTF_VMLINUX, R_OK))
		SKIP("%s is not readable here", KBTF_VMLINUX);
	full = btf__load_vmlinux_btf();
	fast = kbtf__load(KBTF_VMLINUX, want, sizeof(want) / sizeof(want[0]));
	CHECK(full);
	CHECK(fast);
	for (i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		long a = off_in(full, members[i][0], members[i][1]);
		long b = off_in(fast, members[i][0], members[i][1]);

		if (a != b)
			printf("  %s.%s: libbpf %ld, kbtf %ld\n", members[i][0], members[i][1], a,
			       b);
		CHECK(a == b);
	}
	btf__free(full);
	btf__free(fast);
}

/* A kernel function's ID, as libbpf's full parse finds it. */
TEST(kernel_func_id_matches_libbpf)
{
	struct btf *full;
	__u32 id = 0;
	int want;

	if (access(KBTF_VMLINUX, R_OK))
		SKIP("%s is not readable here", KBTF_VMLINUX);
	full = btf__load_vmlinux_btf();
	CHECK(full);
	want = btf__find_by_name_kind(full, "schedule", BTF_KIND_FUNC);
	CHECK(want > 0);
	CHECK(!kbtf__func_id(KBTF_VMLINUX, "schedule", &id));
	CHECK(id == (__u32)want);
	btf__free(full);
}

int main(void)
{
	RUN(written_btf);
	RUN(written_btf_far_back);
	RUN(func_id_written);
	RUN(not_btf);
	RUN(kernel_btf_matches_libbpf);
	RUN(kernel_func_id_matches_libbpf);
	return TEST_DONE();
}
