/* test_container.c - container IDs from cgroup paths, container lookup and the
 * cgroup2 mount, against a fake /proc tree. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/container.h"
#include "test.h"

#define ID1 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID2 "0123456789abcdeffedcba98765432100123456789abcdef0123456789abcdef"
#define ID3 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static char root[256];

static void put(const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

TEST(id_from_path)
{
	char id[CONTAINER_ID_LEN + 1];

	CHECK(!container__id_from_path("/system.slice/docker-" ID1 ".scope", id, sizeof(id)));
	CHECK_STR(id, ID1);
	CHECK(!container__id_from_path("/docker/" ID1, id, sizeof(id)));
	CHECK_STR(id, ID1);
	CHECK(!container__id_from_path("/kubepods.slice/kubepods-burstable.slice/"
				       "kubepods-burstable-pod1234_5678.slice/cri-containerd-" ID2
				       ".scope",
				       id, sizeof(id)));
	CHECK_STR(id, ID2);
	CHECK(!container__id_from_path("/kubepods/besteffort/pod1234-5678/" ID3, id, sizeof(id)));
	CHECK_STR(id, ID3);
	CHECK(!container__id_from_path("/machine.slice/libpod-" ID1 ".scope/container", id,
				       sizeof(id)));
	CHECK_STR(id, ID1);
	CHECK(!container__id_from_path("/kubepods.slice/crio-" ID2 ".scope", id, sizeof(id)));
	CHECK_STR(id, ID2);
	/* conmon is the runtime's monitor, not the container */
	CHECK(container__id_from_path("/machine.slice/libpod-conmon-" ID1 ".scope", id,
				      sizeof(id)) == -ENOENT);
	CHECK(container__id_from_path("/user.slice/user-1000.slice/session-2.scope", id,
				      sizeof(id)) == -ENOENT);
	CHECK(container__id_from_path("/", id, sizeof(id)) == -ENOENT);
	CHECK(container__id_from_path("", id, sizeof(id)) == -ENOENT);
	/* 63 digits, upper case, a non-hex letter: not IDs */
	CHECK(container__id_from_path("/docker/" ID1 "0", id, sizeof(id)) == -ENOENT);
	CHECK(container__id_from_path("/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef"
				      "0123456789abcdef",
				      id, sizeof(id)) == -ENOENT);
	CHECK(container__id_from_path("/docker/g123456789abcdef0123456789abcdef0123456789abcdef"
				      "0123456789abcdef",
				      id, sizeof(id)) == -ENOENT);
	CHECK(container__id_from_path("/docker/" ID1, id, 10) == -EINVAL);
	CHECK(container__id_from_path(NULL, id, sizeof(id)) == -EINVAL);
}

TEST(cgroup_of_and_find)
{
	char id[CONTAINER_ID_LEN + 1], cg[256];
	int pid = 0;

	put("10/cgroup", "0::/system.slice/docker-" ID1 ".scope\n");
	put("11/cgroup", "0::/system.slice/docker-" ID1 ".scope/sub\n");
	put("12/cgroup", "0::/system.slice/docker-" ID2 ".scope\n");
	/* cgroup v1 host: the ID is only in a v1 hierarchy, v2 is the root */
	put("13/cgroup", "12:memory:/docker/" ID3 "\n1:name=systemd:/docker/" ID3 "\n0::/\n");
	put("14/cgroup", "0::/user.slice\n");
	put("15/cgroup", "4:cpu:/\n");
	put("self/mountinfo",
	    "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
	    "30 25 0:26 / /sys/fs/cgroup/unified\\040x rw,nosuid shared:4 - cgroup2 cgroup2 "
	    "rw,nsdelegate\n"
	    "31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");

	CHECK(!container__cgroup_of(root, 11, cg, sizeof(cg)));
	CHECK_STR(cg, "/system.slice/docker-" ID1 ".scope/sub");
	CHECK(container__cgroup_of(root, 15, cg, sizeof(cg)) == -ENOENT);
	CHECK(container__cgroup_of(root, 99, cg, sizeof(cg)) == -ENOENT);
	CHECK(container__cgroup_of(root, 11, cg, 8) == -ENAMETOOLONG);

	CHECK(!container__id_of(root, 13, id, sizeof(id)));
	CHECK_STR(id, ID3);
	CHECK(container__id_of(root, 14, id, sizeof(id)) == -ENOENT);

	CHECK(!container__find(root, "fedcba98", id, sizeof(id), cg, sizeof(cg), &pid));
	CHECK_STR(id, ID3);
	CHECK_STR(cg, "/");
	CHECK_EQ_U64(pid, 13);
	CHECK(!container__find(root, ID2, id, sizeof(id), cg, sizeof(cg), &pid));
	CHECK_EQ_U64(pid, 12);
	CHECK_STR(cg, "/system.slice/docker-" ID2 ".scope");
	/* ID1 and ID2 share their first 16 digits */
	CHECK(container__find(root, "0123456789abcdef", id, sizeof(id), cg, sizeof(cg), &pid) ==
	      -EEXIST);
	CHECK(!container__find(root, "0123456789abcdef0", id, sizeof(id), cg, sizeof(cg), &pid));
	CHECK_STR(id, ID1);
	CHECK(container__find(root, "abc", id, sizeof(id), cg, sizeof(cg), &pid) == -EINVAL);
	CHECK(container__find(root, "xyz12", id, sizeof(id), cg, sizeof(cg), &pid) == -EINVAL);
	CHECK(container__find(root, "aaaa", id, sizeof(id), cg, sizeof(cg), &pid) == -ENOENT);

	CHECK(!container__cgroup2_mount(root, cg, sizeof(cg)));
	CHECK_STR(cg, "/sys/fs/cgroup/unified x");
	put("self/mountinfo", "22 1 0:21 / /proc rw,nosuid - proc proc rw\n");
	CHECK(container__cgroup2_mount(root, cg, sizeof(cg)) == -ENOENT);
}

int main(void)
{
	char cmd[300];
	int ret;

	snprintf(root, sizeof(root), "/tmp/profcap-test-container-%d", (int)getpid());
	mkdir(root, 0755);
	RUN(id_from_path);
	RUN(cgroup_of_and_find);
	ret = TEST_DONE();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		ret = 1;
	return ret;
}
