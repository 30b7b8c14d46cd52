/* test_pfile.c - the hardened opener and reader of profiled processes'
 * files: a FIFO where a library should be (no hang), a file truncated while
 * being read (an error, no SIGBUS), symlinks that try to leave the process's
 * root, a path that now names another file (inode mismatch), map_files; a
 * large section read exactly, into huge pages where they pay. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc/pfile.h"
#include "proc/procmaps.h"
#include "symbolize/elfsym.h"
#include "util/pages.h"
#include "test.h"

static char base[128]; /* /tmp/profcap-test-pfile-PID */
static char fake_proc[200];

static int put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

static int mk(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	return mkdir(path, 0755) ? -errno : 0;
}

static int read_fd(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	return (int)n;
}

/* A maps entry for file @rel under base/ (its real device and inode). */
static int entry_for(const char *rel, const char *path_in_root, struct procmaps_entry *e)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	if (stat(path, &st))
		return -errno;
	memset(e, 0, sizeof(*e));
	e->start = 0x10000;
	e->end = 0x11000;
	e->inode = st.st_ino;
	e->dev_major = major(st.st_dev);
	e->dev_minor = minor(st.st_dev);
	e->path = path_in_root;
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
	printf("FAIL: opening a FIFO hung\n");
	_exit(1);
}

TEST(fifo_is_refused_without_hanging)
{
	char root[256], path[512];
	struct procmaps_entry e;
	int fd = -1;

	snprintf(path, sizeof(path), "%s/proc/7/root/lib/libfifo.so", base);
	CHECK(!mkfifo(path, 0644));
	snprintf(root, sizeof(root), "%s/proc/7/root", base);
	signal(SIGALRM, on_alarm);
	alarm(5);
	CHECK(pfile__open_in_root(root, "/lib/libfifo.so", &fd, NULL) == -EINVAL);
	CHECK(fd == -1);
	CHECK(!entry_for("proc/7/root/lib/libfifo.so", "/lib/libfifo.so", &e));
	CHECK(pfile__open_mapped(fake_proc, 7, &e, &fd) == -EINVAL);
	alarm(0);
	/* a device is not opened either */
	CHECK(pfile__open_in_root("/", "/dev/null", &fd, NULL) == -EINVAL);
}

TEST(symlinks_stay_inside_the_root)
{
	char root[256], outside[512], buf[64];
	struct stat st;
	int fd = -1;

	snprintf(root, sizeof(root), "%s/proc/7/root", base);
	/* The same absolute path outside (the host) and inside the root. */
	snprintf(outside, sizeof(outside), "%s/host/secret", base);
	CHECK(!put("host/secret", "outside\n"));
	CHECK(!mk("proc/7/root/data"));
	CHECK(!put("proc/7/root/data/secret", "inside\n"));

	/* a directory symlink with an absolute target: resolved in the root */
	{
		char link[512], target[512];

		snprintf(link, sizeof(link), "%s/proc/7/root/lib/abs", base);
		CHECK(!symlink("/data", link));
		CHECK(!pfile__open_in_root(root, "/lib/abs/secret", &fd, &st));
		CHECK(read_fd(fd, buf, sizeof(buf)) > 0);
		CHECK_STR(buf, "inside\n");
		close(fd);

		/* absolute target naming the host file: not found inside */
		snprintf(link, sizeof(link), "%s/proc/7/root/lib/hostdir", base);
		snprintf(target, sizeof(target), "%s/host", base);
		CHECK(!symlink(target, link));
		CHECK(pfile__open_in_root(root, "/lib/hostdir/secret", &fd, NULL) == -ENOENT);

		/* ".." cannot climb out of the root */
		snprintf(link, sizeof(link), "%s/proc/7/root/lib/up", base);
		CHECK(!symlink("../../../../../../../../host", link));
		CHECK(pfile__open_in_root(root, "/lib/up/secret", &fd, NULL) == -ENOENT);
		CHECK(pfile__open_in_root(root, "/../../../host/secret", &fd, NULL) == -ENOENT);

		/* the last component is never a symlink */
		snprintf(link, sizeof(link), "%s/proc/7/root/lib/last.so", base);
		CHECK(!symlink("/data/secret", link));
		CHECK(pfile__open_in_root(root, "/lib/last.so", &fd, NULL) == -ELOOP);
	}
}

TEST(inode_mismatch_is_refused)
{
	struct procmaps_entry e;
	char path[512], path2[520];
	int fd = -1;

	CHECK(!put("proc/8/root/lib/liba.so", "first version\n"));
	CHECK(!entry_for("proc/8/root/lib/liba.so", "/lib/liba.so", &e));
	CHECK(!pfile__open_mapped(fake_proc, 8, &e, &fd));
	close(fd);
	/* Replaced on disk (an upgrade writes a new file and renames it over
	 * the old): the path names another inode now. */
	CHECK(!put("proc/8/root/lib/liba.so.new", "second version\n"));
	snprintf(path, sizeof(path), "%s/proc/8/root/lib/liba.so", base);
	snprintf(path2, sizeof(path2), "%s.new", path);
	CHECK(!rename(path2, path));
	CHECK(pfile__open_mapped(fake_proc, 8, &e, &fd) == -ESTALE);
	CHECK(fd == -1);
	/* deleted and anonymous mappings have no path to fall back on */
	e.deleted = true;
	CHECK(pfile__open_mapped(fake_proc, 8, &e, &fd) == -ENOENT);
	e.deleted = false;
	e.anonymous = true;
	CHECK(pfile__open_mapped(fake_proc, 8, &e, &fd) == -ENOENT);
}

/* The real /proc: this process's own mapping, through map_files. */
TEST(map_files_of_a_live_mapping)
{
	struct procmaps *m = NULL;
	const struct procmaps_entry *e;
	struct stat st, fst;
	char path[512];
	void *p;
	int fd, mfd = -1;

	snprintf(path, sizeof(path), "%s/mapped.bin", base);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(!ftruncate(fd, 4096));
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(p != MAP_FAILED);
	CHECK(!fstat(fd, &st));
	CHECK(!procmaps__read("/proc/self/maps", &m));
	e = procmaps__find(m, (__u64)(unsigned long)p);
	CHECK(e && e->inode == st.st_ino);
	CHECK(!pfile__open_mapped("/proc", getpid(), e, &mfd));
	CHECK(!fstat(mfd, &fst));
	CHECK(fst.st_ino == st.st_ino);
	close(mfd);
	procmaps__free(m);
	munmap(p, 4096);
	close(fd);
}

TEST(truncated_while_reading)
{
	static const char *const secs[] = {".eh_frame", NULL};
	struct pfile_image img;
	struct elfsym *elf = NULL;
	char path[512], cmd[1200];
	struct stat st;
	int fd;

	/* A copy of this test binary (an ELF file with .eh_frame). */
	snprintf(path, sizeof(path), "%s/victim", base);
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe '%s'", (int)getpid(), path);
	CHECK(!system(cmd));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(!fstat(fd, &st));
	CHECK(!pfile__read_elf(fd, (size_t)st.st_size, secs, &img));
	CHECK(img.size == (size_t)st.st_size);
	CHECK(!memcmp(img.data, "\177ELF", 4));
	pfile__image_free(&img);

	/* The owner truncates it after profcap took its size: mmap would
	 * raise SIGBUS on the missing pages; pread reports it. */
	CHECK(!truncate(path, 4096));
	CHECK(pfile__read_elf(fd, (size_t)st.st_size, secs, &img) == -EIO);
	CHECK(!img.data);
	/* libelf reads by pread too (ELF_C_READ): whatever it makes of the
	 * rest, it returns */
	if (!elfsym__open_fd(fd, &elf))
		elfsym__free(elf);
	CHECK(!truncate(path, 0));
	CHECK(pfile__read_elf(fd, (size_t)st.st_size, secs, &img) == -EIO);
	close(fd);
}

TEST(pread_exact)
{
	char buf[16];
	int fd;

	CHECK(!put("short", "12345"));
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/short", base);
		fd = open(path, O_RDONLY);
	}
	CHECK(fd >= 0);
	CHECK(!pfile__pread(fd, buf, 5, 0));
	CHECK(!memcmp(buf, "12345", 5));
	CHECK(!pfile__pread(fd, buf, 2, 3));
	CHECK(pfile__pread(fd, buf, 6, 0) == -EIO);
	close(fd);
}

/* Huge pages (kB) backing [@p, @p + 4 KiB) in /proc/self/smaps, -1 if
 * its mapping is not found. */
static long anon_huge_kb(const void *p)
{
	char line[512];
	unsigned long lo, hi, a = (unsigned long)p;
	long kb = -1;
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = a >= lo && a < hi;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	if (f)
		fclose(f);
	return kb;
}

/* Transparent huge pages available here (THP "madvise" or "always")? */
static bool thp_on(void)
{
	char thp[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f) {
		if (!fgets(thp, sizeof(thp), f))
			thp[0] = '\0';
		fclose(f);
	}
	return thp[0] && !strstr(thp, "[never]");
}

/* Is the page at @p resident (mincore())? */
static bool resident(const void *p)
{
	unsigned char v = 0;
	long page = sysconf(_SC_PAGESIZE);

	if (mincore((void *)((unsigned long)p & ~(unsigned long)(page - 1)), 1, &v))
		return true;
	return v & 1;
}

/* A section of 1.5 MiB across a 2 MiB boundary of the file, with the
 * section headers and names after it in the same block, read with huge
 * pages paying (@huge) or not: whole and exact, headers included. With
 * them and transparent huge pages available (THP "madvise" or "always"),
 * into huge pages, edges included (*@thp_off says when THP is off here and
 * that part went unchecked); without, the bytes before the section, never
 * read, take no memory. */
static void large_section(bool huge, bool *thp_off)
{
	static const char *const secs[] = {".big", NULL};
	static const char names[] = "\0.big\0.shstrtab\0";
	const size_t big_off = 0x1f0000, big_len = 0x180000;
	const size_t str_off = big_off + big_len, sh_off = (str_off + sizeof(names) + 7) & ~7ul;
	size_t size = sh_off + 3 * 64, i;
	unsigned char *file = calloc(1, size), *sh;
	struct pfile_image img;
	char path[512];
	FILE *f;
	int fd;

	pages__set_huge(huge);
	CHECK(file != NULL);
	memcpy(file, "\177ELF\2\1\1", 7);
	file[16] = 1;  /* ET_REL */
	file[18] = 62; /* EM_X86_64 */
	file[20] = 1;  /* EV_CURRENT */
	memcpy(file + 40, &sh_off, 8);
	file[52] = 64; /* e_ehsize */
	file[58] = 64; /* e_shentsize */
	file[60] = 3;  /* e_shnum */
	file[62] = 2;  /* e_shstrndx */
	for (i = 0; i < big_len; i++)
		file[big_off + i] = (unsigned char)(i * 7 + (i >> 12));
	memcpy(file + str_off, names, sizeof(names));
	sh = file + sh_off + 64; /* [1] .big */
	sh[0] = 1;
	sh[4] = 1; /* SHT_PROGBITS */
	memcpy(sh + 24, &big_off, 8);
	memcpy(sh + 32, &big_len, 8);
	sh += 64; /* [2] .shstrtab */
	sh[0] = 6;
	sh[4] = 3; /* SHT_STRTAB */
	memcpy(sh + 24, &str_off, 8);
	i = sizeof(names);
	memcpy(sh + 32, &i, 8);
	snprintf(path, sizeof(path), "%s/big.o", base);
	f = fopen(path, "w");
	CHECK(f && fwrite(file, 1, size, f) == size);
	if (f)
		fclose(f);

	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(!pfile__read_elf(fd, size, secs, &img));
	CHECK(img.size == size);
	CHECK(!memcmp((char *)img.data + big_off, file + big_off, big_len));
	CHECK(!memcmp((char *)img.data + str_off, names, sizeof(names)));
	CHECK(!memcmp((char *)img.data + sh_off, file + sh_off, 3 * 64));
	if (huge) {
		CHECK(!((unsigned long)img.data & ((2ul << 20) - 1))); /* a 2 MiB boundary */
		*thp_off = !thp_on();
		if (!*thp_off) {
			/* both blocks the section touches, the headers' one too */
			CHECK(anon_huge_kb((char *)img.data + big_off) >= 2048);
			CHECK(anon_huge_kb((char *)img.data + sh_off) >= 2048);
		}
	} else {
		CHECK(resident((char *)img.data + big_off));
		CHECK(!resident((char *)img.data + 0x10000)); /* between header and section */
	}
	pfile__image_free(&img);
	close(fd);
	unlink(path);
	free(file);
}

TEST(large_section_in_huge_pages)
{
	bool thp_off = false;

	large_section(true, &thp_off);
	if (thp_off)
		SKIP("transparent huge pages are off here: read, but huge pages not checked");
}

TEST(large_section_in_small_pages)
{
	bool thp_off = false;

	large_section(false, &thp_off);
}

int main(void)
{
	char cmd[300];
	int ret;

	snprintf(base, sizeof(base), "/tmp/profcap-test-pfile-%d", (int)getpid());
	snprintf(fake_proc, sizeof(fake_proc), "%s/proc", base);
	if (mkdir(base, 0755) || mk("host") || mk("proc") || mk("proc/7") || mk("proc/7/root") ||
	    mk("proc/7/root/lib") || mk("proc/8") || mk("proc/8/root") || mk("proc/8/root/lib")) {
		printf("FAIL: cannot create %s\n", base);
		return 1;
	}
	RUN(fifo_is_refused_without_hanging);
	RUN(symlinks_stay_inside_the_root);
	RUN(inode_mismatch_is_refused);
	RUN(map_files_of_a_live_mapping);
	RUN(truncated_while_reading);
	RUN(pread_exact);
	RUN(large_section_in_huge_pages);
	RUN(large_section_in_small_pages);
	ret = TEST_DONE();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	if (system(cmd))
		ret = 1;
	return ret;
}
