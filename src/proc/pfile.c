#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "proc/procmaps.h"
#include "proc/pfile.h"
#include "util/fdio.h"
#include "util/pages.h"

#define OVERLAYFS_MAGIC 0x794c7630
#define BTRFS_MAGIC 0x9123683e
/* A section read of this size or more gets huge pages (read_range()). */
#define PFILE_HUGE_MIN (1u << 20)
#define PFILE_READ_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/* Walk @path under @dirfd one component at a time, following no symlink
 * (for hosts where openat2 is missing or filtered). O_PATH descriptor. */
static int walk_nofollow(int dirfd, const char *path)
{
	char comp[NAME_MAX + 1];
	const char *p = path, *end;
	int cur = dirfd, next;
	size_t len;

	for (;;) {
		while (*p == '/')
			p++;
		end = strchrnul(p, '/');
		len = (size_t)(end - p);
		if (!len || len > NAME_MAX || (len == 2 && !memcmp(p, "..", 2))) {
			if (cur != dirfd)
				close(cur);
			return len > NAME_MAX ? -ENAMETOOLONG : -EINVAL;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		while (*end == '/')
			end++;
		next = fdio__openat(cur, comp, O_PATH | O_NOFOLLOW | (*end ? O_DIRECTORY : 0));
		if (next < 0)
			next = errno == ENOTDIR ? -ELOOP : -errno;
		if (cur != dirfd)
			close(cur);
		if (next < 0 || !*end)
			return next;
		cur = next;
		p = end;
	}
}

/* O_PATH descriptor of @path inside @rootfd; a symlink as last component
 * is followed (inside the root) only when @follow. */
static int path_in_root(int rootfd, const char *path, bool follow)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long r;

	while (*path == '/')
		path++;
	if (!*path)
		return -EINVAL;
	r = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (r >= 0)
		return (int)r;
	if (errno != ENOSYS && errno != EPERM)
		return -errno;
	return walk_nofollow(rootfd, path);
}

/* Turn O_PATH descriptor @pfd (consumed) into a read-only one when it is a
 * regular file: only then is the file opened for reading at all. */
static int reopen_regular(int pfd, struct stat *st)
{
	char self[64];
	int fd;

	if (fstat(pfd, st)) {
		fd = -errno;
		goto out;
	}
	if (S_ISLNK(st->st_mode)) {
		fd = -ELOOP;
		goto out;
	}
	if (!S_ISREG(st->st_mode)) {
		fd = -EINVAL;
		goto out;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = fdio__open(self, PFILE_READ_FLAGS);
	if (fd < 0)
		fd = -errno;
out:
	close(pfd);
	return fd;
}

static int open_in_root(const char *root, const char *path, bool follow, int *fd, struct stat *st)
{
	struct stat tmp;
	int rootfd, pfd;

	*fd = -1;
	/* The magic link of PROC/PID/root is followed here, on purpose. */
	rootfd = fdio__open(root, O_PATH | O_DIRECTORY);
	if (rootfd < 0)
		return -errno;
	pfd = path_in_root(rootfd, path, follow);
	close(rootfd);
	if (pfd < 0)
		return pfd;
	pfd = reopen_regular(pfd, st ? st : &tmp);
	if (pfd < 0)
		return pfd;
	*fd = pfd;
	return 0;
}

int pfile__open_in_root(const char *root, const char *path, int *fd, struct stat *st)
{
	return open_in_root(root, path, false, fd, st);
}

int pfile__open_in_root_follow(const char *root, const char *path, int *fd, struct stat *st)
{
	return open_in_root(root, path, true, fd, st);
}

/* Is @st the file of mapping @e? maps shows the inode's superblock device;
 * btrfs stat()s report the subvolume's, overlayfs (opened by path) its own
 * inode: there only what can be compared is. */
static bool same_file(int fd, const struct stat *st, const struct procmaps_entry *e, bool by_path)
{
	struct statfs sfs;
	bool dev_ok = major(st->st_dev) == e->dev_major && minor(st->st_dev) == e->dev_minor;

	if (dev_ok && (__u64)st->st_ino == e->inode)
		return true;
	if (fstatfs(fd, &sfs))
		return false;
	if ((unsigned long)sfs.f_type == BTRFS_MAGIC)
		return (__u64)st->st_ino == e->inode;
	return by_path && (unsigned long)sfs.f_type == OVERLAYFS_MAGIC;
}

int pfile__open_mapped(const char *proc_root, int pid, const struct procmaps_entry *e, int *fd)
{
	char path[PATH_MAX + 64];
	struct stat st;
	bool by_path = false;
	int pfd, f, err;

	*fd = -1;
	if (e->anonymous || !e->inode)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%d/map_files/%llx-%llx", proc_root, pid,
		 (unsigned long long)e->start, (unsigned long long)e->end);
	pfd = fdio__open(path, O_PATH);
	if (pfd >= 0) {
		f = reopen_regular(pfd, &st);
	} else {
		/* A deleted file's path now names another file or nothing. */
		if (e->deleted || e->path[0] != '/')
			return -ENOENT;
		if ((size_t)snprintf(path, sizeof(path), "%s/%d/root", proc_root, pid) >=
		    sizeof(path))
			return -ENAMETOOLONG;
		err = pfile__open_in_root(path, e->path, &f, &st);
		if (err)
			return err;
		by_path = true;
	}
	if (f < 0)
		return f;
	if (!same_file(f, &st, e, by_path)) {
		close(f);
		return -ESTALE;
	}
	*fd = f;
	return 0;
}

int pfile__open_host(const struct procmaps_entry *e, int *fd)
{
	struct stat st;
	int f, err;

	*fd = -1;
	if (e->anonymous || !e->inode || e->deleted || e->path[0] != '/')
		return -ENOENT;
	err = pfile__open_in_root("/", e->path, &f, &st);
	if (err)
		return err;
	if (!same_file(f, &st, e, false)) {
		close(f);
		return -ESTALE;
	}
	*fd = f;
	return 0;
}

int pfile__pread(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = pread(fd, (char *)buf + got, len - got, off + (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* the file ends here now: truncated */
		got += (size_t)n;
	}
	return 0;
}

static __u64 get_le(const __u8 *p, int n)
{
	__u64 v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* Huge pages for the 2 MiB blocks a large section @off, @len (a big
 * program's .eh_frame and its header) touches, edges included: the image
 * starts on a 2 MiB boundary, so they are the file's blocks. Up to 2 MiB
 * more is resident while the image lives; where small-page faults are
 * dear (shadow paging: pages__huge_pays()) a huge page costs far less
 * than the small ones it replaces. Smaller sections, and the rest of the
 * image, stay in small pages. Before any
 * page of the block is touched: a block with one small page stays small. */
static void advise_range(struct pfile_image *img, __u64 off, __u64 len)
{
	uintptr_t base = (uintptr_t)img->data, a, b;

	if (off > img->size || len > img->size - off || len < PFILE_HUGE_MIN)
		return;
	a = (base + off) & ~(uintptr_t)(PAGES_HUGE - 1);
	b = (base + off + len + PAGES_HUGE - 1) & ~(uintptr_t)(PAGES_HUGE - 1);
	if (b > base + img->map_len)
		b = base + img->map_len;
	if (b > a)
		pages__huge((void *)a, b - a);
}

/* Read [@off, @off + @len) of the file into the image, when in range. */
static int read_range(int fd, struct pfile_image *img, __u64 off, __u64 len)
{
	if (off > img->size || len > img->size - off)
		return -ENOEXEC;
	if (!len)
		return 0;
	/* its pages faulted in with one call, not one fault per page */
	pages__populate((char *)img->data + off, (size_t)len);
	return pfile__pread(fd, (char *)img->data + off, (size_t)len, (off_t)off);
}

static bool wanted(const char *name, const char *const *sections)
{
	for (; *sections; sections++)
		if (!strcmp(name, *sections))
			return true;
	return false;
}

/* Section headers, their name table and the wanted sections. The headers
 * and names are read into a buffer of ours first and copied into the image
 * last: a large section's blocks may then be huge pages (read_range()) even
 * where they lie (e.g. at the end of the file, in .eh_frame's last block). */
static int read_sections(int fd, struct pfile_image *img, const char *const *sections)
{
	const __u8 *h = img->data, *sh;
	__u64 shoff = get_le(h + 40, 8), shnum = get_le(h + 60, 2), strndx = get_le(h + 62, 2);
	__u64 stroff, strsize, i;
	__u8 first[64], *meta = NULL;
	char *names = NULL;
	int err, pass;

	if (!shoff || get_le(h + 58, 2) != 64)
		return 0; /* no section headers: nothing more to read */
	if (shoff > img->size || img->size - shoff < 64)
		return -ENOEXEC;
	err = pfile__pread(fd, first, sizeof(first), (off_t)shoff);
	if (err)
		return err;
	if (!shnum)
		shnum = get_le(first + 32, 8);
	if (strndx == 0xffff)
		strndx = get_le(first + 40, 4);
	if (shnum > (img->size - shoff) / 64 || strndx >= shnum)
		return -ENOEXEC;
	meta = malloc(shnum * 64);
	if (!meta)
		return -ENOMEM;
	err = pfile__pread(fd, meta, shnum * 64, (off_t)shoff);
	if (err)
		goto out;
	sh = meta + strndx * 64;
	stroff = get_le(sh + 24, 8);
	strsize = get_le(sh + 32, 8);
	if (stroff > img->size || strsize > img->size - stroff) {
		err = -ENOEXEC;
		goto out;
	}
	names = malloc(strsize + 1);
	if (!names) {
		err = -ENOMEM;
		goto out;
	}
	err = pfile__pread(fd, names, strsize, (off_t)stroff);
	/* Pass 0 advises the blocks of large sections, pass 1 reads. */
	for (pass = 0; pass < 2 && !err; pass++) {
		for (i = 0; i < shnum && !err; i++) {
			__u64 name, off, size;

			sh = meta + i * 64;
			name = get_le(sh, 4);
			off = get_le(sh + 24, 8);
			size = get_le(sh + 32, 8);
			if (name >= strsize || get_le(sh + 4, 4) == 8 /* SHT_NOBITS */ ||
			    strnlen(names + name, strsize - name) == strsize - name ||
			    !wanted(names + name, sections))
				continue;
			if (pass)
				err = read_range(fd, img, off, size);
			else
				advise_range(img, off, size);
		}
	}
	if (!err) { /* last: their pages wherever the sections left them */
		memcpy((__u8 *)img->data + stroff, names, strsize);
		memcpy((__u8 *)img->data + shoff, meta, shnum * 64);
	}
out:
	free(names);
	free(meta);
	return err;
}

int pfile__read_elf(int fd, size_t size, const char *const *sections, struct pfile_image *img)
{
	const __u8 *h;
	__u64 phoff, phnum;
	int err;

	img->data = NULL;
	img->size = 0;
	if (size < 64)
		return -ENOEXEC;
	/* Untouched pages of an anonymous mapping are never allocated. Where
	 * huge pages pay, the mapping of a file that may hold a large section
	 * starts on a 2 MiB boundary and spans whole blocks (read_range()). */
	img->map_len = size;
	if (size >= PFILE_HUGE_MIN && pages__huge_pays()) {
		img->map_len = (size + PAGES_HUGE - 1) & ~(size_t)(PAGES_HUGE - 1);
		img->data = pages__map_aligned(img->map_len); /* advised by read_range() */
	} else {
		img->data = mmap(NULL, size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (img->data == MAP_FAILED)
			img->data = NULL;
	}
	if (!img->data) {
		img->map_len = 0;
		return -ENOMEM;
	}
	img->size = size;
	err = read_range(fd, img, 0, 64);
	if (err)
		goto fail;
	h = img->data;
	if (memcmp(h, "\177ELF", 4) || h[4] != 2 /* ELFCLASS64 */ || h[5] != 1 /* LSB */) {
		err = -ENOEXEC;
		goto fail;
	}
	phoff = get_le(h + 32, 8);
	phnum = get_le(h + 56, 2);
	if (phoff && get_le(h + 54, 2) == 56) {
		err = read_range(fd, img, phoff, phnum * 56);
		if (err)
			goto fail;
	}
	err = read_sections(fd, img, sections);
	if (err)
		goto fail;
	return 0;
fail:
	pfile__image_free(img);
	return err;
}

void pfile__image_free(struct pfile_image *img)
{
	if (!img || !img->data)
		return;
	munmap(img->data, img->map_len);
	img->data = NULL;
	img->size = img->map_len = 0;
}
