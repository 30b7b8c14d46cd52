/* test_forkhook.c - finding how to follow new processes: task_struct.pid in
 * BTF (synthetic and the running kernel's), the tracepoint format, names. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "collect/forkhook.h"
#include "test.h"

/* struct task_struct { long state; struct { int prio; pid_t pid; }; ... } */
static struct btf *task_btf(bool anon, bool bitfield, bool with_pid)
{
	struct btf *btf = btf__new_empty();
	int i32, i64, pidt, inner = 0, task;

	if (!btf)
		return NULL;
	i32 = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	i64 = btf__add_int(btf, "long", 8, BTF_INT_SIGNED);
	pidt = btf__add_typedef(btf, "pid_t", i32);
	if (anon) {
		inner = btf__add_struct(btf, NULL, 8);
		btf__add_field(btf, "prio", i32, 0, 0);
		if (with_pid)
			btf__add_field(btf, "pid", pidt, 32, bitfield ? 20 : 0);
	}
	task = btf__add_struct(btf, "task_struct", 32);
	btf__add_field(btf, "state", i64, 0, 0);
	if (anon)
		btf__add_field(btf, NULL, inner, 64, 0);
	else if (with_pid)
		btf__add_field(btf, "pid", pidt, 128, bitfield ? 20 : 0);
	btf__add_field(btf, "tgid", pidt, 192, 0);
	if (task < 0) {
		btf__free(btf);
		return NULL;
	}
	return btf;
}

/* The offset in @btf's raw form, as profcap reads it from sysfs. */
static int offset_of(struct btf *btf, __u32 *off)
{
	__u32 size = 0;
	const void *raw = btf__raw_data(btf, &size);

	return raw ? forkhook__btf_pid_offset(raw, size, off) : -ENOMEM;
}

TEST(btf_pid_offset)
{
	struct btf *btf;
	__u32 off = 0;
	const void *raw;
	__u32 size;

	btf = task_btf(false, false, true);
	CHECK(btf);
	CHECK(!offset_of(btf, &off));
	CHECK_EQ_U64(off, 16);
	/* a truncated or corrupt blob is refused, not read past its end */
	raw = btf__raw_data(btf, &size);
	CHECK(forkhook__btf_pid_offset(raw, size - 3, &off) == -ENOEXEC);
	CHECK(forkhook__btf_pid_offset(raw, 10, &off) == -ENOEXEC);
	btf__free(btf);

	/* randomized layouts put pid inside an anonymous struct */
	btf = task_btf(true, false, true);
	CHECK(btf);
	CHECK(!offset_of(btf, &off));
	CHECK_EQ_U64(off, 12);
	btf__free(btf);

	btf = task_btf(true, false, false);
	CHECK(offset_of(btf, &off) == -ENOENT);
	btf__free(btf);

	btf = task_btf(false, true, true);
	CHECK(offset_of(btf, &off) == -EOPNOTSUPP);
	btf__free(btf);

	btf = btf__new_empty();
	btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	CHECK(offset_of(btf, &off) == -ENOENT);
	btf__free(btf);
}

TEST(prepare_from_btf_file)
{
	char path[64];
	struct btf *btf = task_btf(true, false, true);
	struct forkhook h;
	const char *why = NULL;
	const void *raw;
	__u32 size;
	FILE *f;

	CHECK(btf);
	raw = btf__raw_data(btf, &size);
	snprintf(path, sizeof(path), "/tmp/profcap-test-forkhook-%d", (int)getpid());
	f = fopen(path, "w");
	CHECK(f);
	CHECK(fwrite(raw, 1, size, f) == size);
	fclose(f);
	btf__free(btf);

	CHECK(!forkhook__prepare(&h, FORKHOOK_RAW_TP, path, &why));
	CHECK(h.kind == FORKHOOK_RAW_TP);
	CHECK_EQ_U64(h.off, 12);
	CHECK(!h.mounted[0]);
	forkhook__release(&h);
	unlink(path);

	CHECK(forkhook__prepare(&h, FORKHOOK_TP_BTF, path, &why) == -ENOENT);
	CHECK(strstr(why, "no kernel BTF"));
}

/* The running kernel's BTF, where it has one (what profcap uses): the
 * in-place scan agrees with libbpf's parser. */
TEST(kernel_btf)
{
	struct forkhook h;
	const char *why = NULL;
	const struct btf_member *m;
	const struct btf_type *t;
	struct btf *btf;
	__s32 id;
	int i;

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		SKIP("no /sys/kernel/btf/vmlinux");
	CHECK(!forkhook__prepare(&h, FORKHOOK_TP_BTF, NULL, &why));
	CHECK(h.off > 64 && h.off < 16384 && h.off % 4 == 0);
	btf = btf__parse("/sys/kernel/btf/vmlinux", NULL);
	CHECK(btf);
	id = btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT);
	t = btf__type_by_id(btf, id);
	CHECK(t);
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), "pid"))
			break;
	if (i == btf_vlen(t)) {
		btf__free(btf);
		SKIP("no cross-check: pid is not a direct member of task_struct here");
	}
	CHECK_EQ_U64(h.off, btf_member_bit_offset(t, i) / 8);
	btf__free(btf);
}

TEST(format_child_offset)
{
	static const char new_fmt[] =
		"name: sched_process_fork\nID: 318\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:__data_loc char[] parent_comm;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:pid_t parent_pid;\toffset:12;\tsize:4;\tsigned:1;\n"
		"\tfield:__data_loc char[] child_comm;\toffset:16;\tsize:4;\tsigned:0;\n"
		"\tfield:pid_t child_pid;\toffset:20;\tsize:4;\tsigned:1;\n";
	static const char old_fmt[] =
		"\tfield:char parent_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
		"\tfield:pid_t parent_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
		"\tfield:char child_comm[16];\toffset:28;\tsize:16;\tsigned:0;\n"
		"\tfield:pid_t child_pid;\toffset:44;\tsize:4;\tsigned:1;\n";
	__u32 off = 0;

	CHECK(!forkhook__format_child_offset(new_fmt, &off));
	CHECK_EQ_U64(off, 20);
	CHECK(!forkhook__format_child_offset(old_fmt, &off));
	CHECK_EQ_U64(off, 44);
	CHECK(forkhook__format_child_offset("\tfield:pid_t child_pid;\toffset:32;\tsize:4;\n",
					    &off) == -EOPNOTSUPP);
	CHECK(forkhook__format_child_offset("\tfield:u64 child_pid;\toffset:20;\tsize:8;\n",
					    &off) == -EOPNOTSUPP);
	CHECK(forkhook__format_child_offset("\tfield:pid_t parent_pid;\toffset:20;\tsize:4;\n",
					    &off) == -ENOENT);
	CHECK(forkhook__format_child_offset("", &off) == -ENOENT);
}

TEST(names)
{
	enum forkhook_kind k;
	int i;

	for (i = 0; i < FORKHOOK__COUNT; i++) {
		CHECK(!forkhook__parse(forkhook__name((enum forkhook_kind)i), &k));
		CHECK(k == (enum forkhook_kind)i);
	}
	CHECK(forkhook__parse("tracefs", &k) == -EINVAL);
	CHECK(forkhook__parse("", &k) == -EINVAL);
}

int main(void)
{
	RUN(btf_pid_offset);
	RUN(prepare_from_btf_file);
	RUN(kernel_btf);
	RUN(format_child_offset);
	RUN(names);
	return TEST_DONE();
}
