/* gofixture.h - build the Go fixture (tests/unit/fixtures/goleaf) with the
 * installed go, once per variant: cgo off or on, stripped (-s -w) or not, a
 * PIE or not (Go's own linker without cgo, the system linker's with it).
 * Cached in <fixture dir>/go/ and built again when a source is newer.
 * Header-only, as fixtures.h: each test is one binary.
 */
#ifndef PROFCAP_TEST_GOFIXTURE_H
#define PROFCAP_TEST_GOFIXTURE_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GOFIXTURE_GO "/usr/bin/go"

static time_t gofixture__mtime(const char *path)
{
	struct stat stb;

	return stat(path, &stb) ? 0 : stb.st_mtime;
}

/* Build (or find up to date) goleaf into *@out (@size bytes), next to the
 * fixtures in @fixture_dir (build/tests/fixtures, whose sources are three
 * levels up). 0, -ENOENT (no go), -ENODATA (no sources), -EIO (the build
 * failed: its log is @out.log), -ENAMETOOLONG. */
static int gofixture__build(const char *fixture_dir, bool cgo, bool strip, bool pie, char *out,
			    size_t size)
{
	static const char *const srcs[] = {"goleaf.go", "cgo.go", "nocgo.go", "go.mod", NULL};
	char src[1200], dir[1200], cmd[8192], path[1300];
	time_t built, newest = 0;
	int n;

	if (access(GOFIXTURE_GO, X_OK))
		return -ENOENT;
	if (snprintf(src, sizeof(src), "%s/../../../tests/unit/fixtures/goleaf", fixture_dir) >=
		    (int)sizeof(src) ||
	    snprintf(dir, sizeof(dir), "%s/go", fixture_dir) >= (int)sizeof(dir) ||
	    snprintf(out, size, "%s/goleaf_%s%s%s", dir, cgo ? "cgo" : "go", pie ? "_pie" : "",
		     strip ? "_s" : "") >= (int)size)
		return -ENAMETOOLONG;
	for (int i = 0; srcs[i]; i++) {
		if (snprintf(path, sizeof(path), "%s/%s", src, srcs[i]) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		if (gofixture__mtime(path) > newest)
			newest = gofixture__mtime(path);
	}
	if (!newest)
		return -ENODATA;
	built = gofixture__mtime(out);
	if (built && built >= newest)
		return 0;
	n = snprintf(cmd, sizeof(cmd),
		     "mkdir -p '%s' && cd '%s' && GOCACHE='%s/cache' GOPATH='%s/gopath' "
		     "GOFLAGS=-mod=mod CGO_ENABLED=%d '%s' build %s %s -o '%s' . > '%s.log' 2>&1",
		     dir, src, dir, dir, (int)cgo, GOFIXTURE_GO, strip ? "-ldflags='-s -w'" : "",
		     pie ? "-buildmode=pie" : "", out, out);
	if (n >= (int)sizeof(cmd))
		return -ENAMETOOLONG;
	return system(cmd) ? -EIO : 0;
}

/* Build fixture variant (@cgo, @strip, @pie) into the char array @path, or
 * SKIP the calling test when go (or, for cgo, a C compiler) is missing. */
#define GOFIXTURE(fixture_dir, path, cgo, strip, pie)                                            \
	do {                                                                                     \
		int err__ = gofixture__build(fixture_dir, cgo, strip, pie, path, sizeof(path));  \
		if (err__ == -ENOENT)                                                            \
			SKIP("no go toolchain (" GOFIXTURE_GO "): Go fixtures cannot be built"); \
		if (err__ == -EIO && (cgo))                                                      \
			SKIP("the cgo build failed (see %s.log): no C compiler?", path);         \
		CHECK_EQ_U64(err__, 0);                                                          \
	} while (0)

#endif
