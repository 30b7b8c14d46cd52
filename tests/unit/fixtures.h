/* fixtures.h - locate and read the fixture binaries that fixtures.mk builds
 * into build/tests/fixtures/ (next to the test binaries), with their truth
 * files (<bin>.nm, <bin>.buildid, <bin>.load). Shared by the ELF and
 * symbolizer tests; header-only because each test is one binary.
 */
#ifndef PROFCAP_TEST_FIXTURES_H
#define PROFCAP_TEST_FIXTURES_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char fixture_dir[4096];
static char self_exe[4096];

/* Find build/tests/fixtures from this test binary's own path. */
static void fixtures__init(void)
{
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 32);
	char *slash;

	if (n <= 0) {
		strcpy(fixture_dir, "build/tests/fixtures");
		return;
	}
	self_exe[n] = '\0';
	strcpy(fixture_dir, self_exe);
	slash = strrchr(fixture_dir, '/');
	strcpy(slash ? slash + 1 : fixture_dir, "fixtures");
}

/* First line of truth file <fixture_dir>/<bin>.<ext>, newline stripped.
 * 0, -errno when missing, -EINVAL when empty. */
static int fixtures__read_line(const char *bin, const char *ext, char *dst, size_t size)
{
	char path[4200];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s.%s", fixture_dir, bin, ext);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fgets(dst, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return -EINVAL;
	dst[strcspn(dst, "\n")] = '\0';
	return 0;
}

#endif
