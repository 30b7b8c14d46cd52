/* test_view.c - the read-side policies of model/view: one frame-naming
 * rule for every reader (interpreted frames included) and the resource attributes every OTLP writer
 * emits, with their precedence (process, then operator, then host; first key wins).
 */
#include <stdint.h>
#include <string.h>

#include "model/profile.h"
#include "model/view.h"
#include "test.h"

static const struct profile_mapping_desc app_map = {0x1000, 0x2000, 0, "/usr/bin/app", NULL};
static const struct profile_mapping_desc libc_map = {0x7f0000, 0x800000, 0x1000,
						     "/lib/x86_64-linux-gnu/libc.so.6", NULL};
static const struct profile_mapping_desc vdso_map = {0x9000, 0xa000, 0, "[vdso]", NULL};

static const struct profile_line py_line = {"handler", NULL, "/srv/app.py", 10, 42, 0};
static const struct profile_line py_anon = {"", NULL, "/srv/lib.py", 0, 7, 0};

/* Locations, in the order added: work, libc+0x2f00, 0xdead, [unknown],
 * [vdso], a Python frame and a Python frame without a function name. */
static struct profile *model(void)
{
	const struct profile_process_desc app = {100, "app", "/usr/bin/app", "app -x", NULL};
	const struct profile_frame frames[] = {
		{0x1234, &app_map, "work", PROFILE_FRAME_NATIVE, NULL},
		{0x7f1f00, &libc_map, NULL, PROFILE_FRAME_NATIVE, NULL},
		{0xdead, NULL, NULL, PROFILE_FRAME_NATIVE, NULL},
		{0, NULL, NULL, PROFILE_FRAME_NATIVE, NULL},
		{0x9010, &vdso_map, NULL, PROFILE_FRAME_NATIVE, NULL},
		{0, NULL, "handler", PROFILE_FRAME_NATIVE, "cpython", NULL, &py_line, 1},
		{0, NULL, NULL, PROFILE_FRAME_NATIVE, "cpython", NULL, &py_anon, 1},
	};
	struct profile *p = profile__new();

	if (p && profile__add_sample(p, &app, 101, "worker", frames, 7, 1)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

static int has(const struct profile *p, const char *want)
{
	char scratch[64];
	size_t i;

	for (i = 1; i < profile__location_count(p); i++)
		if (!strcmp(view__frame_name(p, (__u32)i, scratch, sizeof(scratch)), want))
			return 1;
	return 0;
}

/* Index of the location named @name, 0 when none. */
static __u32 loc_of(const struct profile *p, const char *name)
{
	char scratch[64];
	size_t i;

	for (i = 1; i < profile__location_count(p); i++)
		if (!strcmp(view__frame_name(p, (__u32)i, scratch, sizeof(scratch)), name))
			return (__u32)i;
	return 0;
}

TEST(frame_names_one_format)
{
	struct profile *p = model();
	char tiny[4], name[64];
	size_t i;

	CHECK(p);
	CHECK(has(p, "work"));
	CHECK(has(p, "libc.so.6+0x2f00"));
	CHECK(has(p, "[unknown]+0xdead"));
	CHECK(has(p, "[unknown]"));
	CHECK(has(p, "[vdso]+0x10"));
	/* Interpreted frames: no address, so never "0x0"; by source line
	 * when they have no function name. */
	CHECK(has(p, "handler"));
	CHECK(has(p, "/srv/lib.py:7"));
	for (i = 1; i < profile__location_count(p); i++) {
		const char *n = view__frame_name(p, (__u32)i, name, sizeof(name));

		CHECK(!strstr(n, "0x0") && strncmp(n, "0x", 2));
		/* one name everywhere: the brief name is the frame name */
		CHECK_STR(view__location_name(p, (__u32)i, name, sizeof(name)), n);
	}
	/* Truncated, NUL kept. */
	CHECK_EQ_U64(strlen(view__frame_name(p, 2, tiny, sizeof(tiny))), 3);
	profile__free(p);
}

TEST(mapping_names)
{
	struct profile *p = model();
	char scratch[64];

	CHECK(p);
	CHECK_STR(view__mapping_name(p, loc_of(p, "work"), scratch, sizeof(scratch)), "app");
	CHECK_STR(view__mapping_name(p, loc_of(p, "handler"), scratch, sizeof(scratch)),
		  "[cpython]");
	CHECK_STR(view__mapping_name(p, loc_of(p, "[unknown]+0xdead"), scratch, sizeof(scratch)),
		  "[unknown]");
	CHECK_STR(view__location_type(p, loc_of(p, "handler")), "cpython");
	profile__free(p);
}

static const char *find(const struct view_resource_attr *a, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(a[i].key, key))
			return a[i].str ? a[i].str : "(int)";
	return NULL;
}

TEST(resource_attr_precedence)
{
	const struct profile_kv op[] = {
		{"service.name", "checkout"},	 {"host.name", "from-operator"},
		{"process.pid", "1"},		 {"process.executable.name", "fake"},
		{"service.name", "second-loses"}, {"deployment.environment", ""},
	};
	struct profile_meta meta = {.host_name = "box", .host_arch = "amd64", .os_type = "linux"};
	struct view_resource_attr a[VIEW_MAX_RESOURCE_ATTRS];
	struct profile *p = model();
	size_t n;

	CHECK(p);
	meta.resource = op;
	meta.nresource = sizeof(op) / sizeof(op[0]);
	CHECK_EQ_U64(profile__set_meta(p, &meta), 0);
	n = view__resource_attrs(p, 0, a);
	CHECK_STR(a[0].key, "process.pid");
	CHECK(!a[0].str);
	CHECK_EQ_U64(a[0].num, 100);
	CHECK_STR(find(a, n, "process.executable.name"), "app");
	CHECK_STR(find(a, n, "process.command_line"), "app -x");
	CHECK(!find(a, n, "container.id"));
	CHECK_STR(find(a, n, "service.name"), "checkout");
	CHECK_STR(find(a, n, "host.name"), "from-operator");
	CHECK_STR(find(a, n, "os.type"), "linux");
	CHECK(!find(a, n, "deployment.environment"));
	CHECK_EQ_U64(n, 8);
	/* The host-only resource of a profile without processes. */
	n = view__resource_attrs(p, SIZE_MAX, a);
	CHECK_EQ_U64(n, 4);
	CHECK_STR(a[0].key, "service.name");
	CHECK(!find(a, n, "process.pid"));
	profile__free(p);
}

int main(void)
{
	RUN(frame_names_one_format);
	RUN(mapping_names);
	RUN(resource_attr_precedence);
	return TEST_DONE();
}
