/* test_folded.c - folded-stack encoder: exact lines for a small model
 * (aggregation across threads, sorting, naming of frames without a
 * function, unknown process names, ';' in names), and the empty profile. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "formats/folded.h"
#include "model/profile.h"
#include "test.h"

static const struct profile_mapping_desc app_map = {0x1000, 0x2000, 0, "/usr/bin/app", NULL, 0};
static const struct profile_mapping_desc libc_map = {0x7f0000, 0x800000, 0x1000,
						     "/lib/x86_64-linux-gnu/libc.so.6", NULL, 0};

static struct profile *small_model(void)
{
	const struct profile_process_desc app = {100, "app", "/usr/bin/app", "app -x", NULL};
	const struct profile_process_desc anon = {200, NULL, NULL, NULL, NULL};
	const struct profile_frame work_main[] = {
		{0x1234, &app_map, "work", PROFILE_FRAME_NATIVE, NULL, NULL, 0},
		{0x1100, &app_map, "main", PROFILE_FRAME_NATIVE, NULL, NULL, 0},
	};
	const struct profile_frame libc_main[] = {
		{0x7f1f00, &libc_map, NULL, PROFILE_FRAME_NATIVE, NULL, NULL, 0},
		{0x1100, &app_map, "main", PROFILE_FRAME_NATIVE, NULL, NULL, 0},
	};
	const struct profile_frame odd[] = {
		{0xdead, NULL, NULL, PROFILE_FRAME_NATIVE, NULL, NULL, 0},
		{0, NULL, NULL, PROFILE_FRAME_NATIVE, NULL, NULL, 0},
		{0xffffffff81000010ull, NULL, "do_sys;call\n", PROFILE_FRAME_KERNEL, NULL, NULL, 0},
	};
	struct profile *p = profile__new();

	if (!p)
		return NULL;
	if (profile__add_sample(p, &app, 101, "worker", work_main, 2, 3) ||
	    profile__add_sample(p, &app, 102, "other", work_main, 2, 4) ||
	    profile__add_sample(p, &app, 101, "worker", libc_main, 2, 2) ||
	    profile__add_sample(p, &anon, 200, NULL, odd, 3, 1)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

TEST(exact_lines)
{
	struct profile *p = small_model();
	struct buf out;
	char *text;
	int err;

	CHECK(p);
	buf__init(&out, 1 << 20);
	err = folded__encode(p, &out);
	text = strndup((const char *)out.data, out.len);
	buf__release(&out);
	profile__free(p);
	CHECK_EQ_U64(err, 0);
	CHECK_STR(text, "[pid 200];do_sys_call_;[unknown];[unknown]+0xdead 1\n"
			"app;main;libc.so.6+0x2f00 2\n"
			"app;main;work 7\n");
	free(text);
}

TEST(frame_names)
{
	struct profile *p = small_model();
	char name[64];
	size_t i, n = 0;
	int seen = 0;

	CHECK(p);
	for (i = 1; i < profile__location_count(p); i++) {
		const char *s = folded__frame_name(p, (__u32)i, name, sizeof(name));

		seen |= !strcmp(s, "work") << 0 | !strcmp(s, "libc.so.6+0x2f00") << 1 |
			!strcmp(s, "[unknown]+0xdead") << 2 | !strcmp(s, "[unknown]") << 3;
		n++;
	}
	/* Truncation keeps a NUL. */
	folded__frame_name(p, 1, name, 3);
	profile__free(p);
	CHECK_EQ_U64(seen, 15);
	CHECK_EQ_U64(strlen(name), 2);
	CHECK(n >= 4);
}

TEST(empty_profile)
{
	struct profile *p = profile__new();
	struct buf out;

	CHECK(p);
	buf__init(&out, 1024);
	CHECK_EQ_U64(folded__encode(p, &out), 0);
	CHECK_EQ_U64(out.len, 0);
	buf__release(&out);
	profile__free(p);
}

TEST(cap_keeps_buffer)
{
	struct profile *p = small_model();
	struct buf out;
	int err;

	CHECK(p);
	buf__init(&out, 20);
	CHECK_EQ_U64(buf__append(&out, "keep", 4), 0);
	err = folded__encode(p, &out);
	profile__free(p);
	CHECK_EQ_U64(err, (unsigned long long)-E2BIG);
	CHECK_EQ_U64(out.len, 4);
	buf__release(&out);
}

/* Python frames (no mapping, no address): their function, else their
 * source line; never "0x0" or "[unknown]". */
TEST(interpreter_frames)
{
	static const struct profile_line l_handle = {"handle", NULL, "/srv/app.py", 10, 42, 0};
	static const struct profile_line l_anon = {NULL, NULL, "/srv/lib.py", 0, 9, 0};
	const struct profile_process_desc py = {300, "python3", "/usr/bin/python3", NULL, NULL};
	struct profile *p = profile__new();
	struct profile_frame s[] = {
		{0, NULL, NULL, PROFILE_FRAME_NATIVE, "cpython", NULL, &l_anon, 1},
		{0, NULL, "handle", PROFILE_FRAME_NATIVE, "cpython", NULL, &l_handle, 1},
		{0x1100, &app_map, "main", PROFILE_FRAME_NATIVE, NULL, NULL, 0},
	};
	struct buf out;

	CHECK(p);
	CHECK(!profile__add_sample(p, &py, 301, "t", s, 3, 2));
	buf__init(&out, 1 << 16);
	CHECK_EQ_U64(folded__encode(p, &out), 0);
	CHECK_EQ_U64(buf__append(&out, "", 1), 0);
	CHECK_STR((const char *)out.data, "python3;main;handle;/srv/lib.py:9 2\n");
	buf__release(&out);
	profile__free(p);
}

int main(void)
{
	RUN(exact_lines);
	RUN(frame_names);
	RUN(empty_profile);
	RUN(cap_keeps_buffer);
	RUN(interpreter_frames);
	return TEST_DONE();
}
