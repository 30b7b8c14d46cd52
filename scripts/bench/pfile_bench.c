/* pfile_bench.c - cost of reading the files of profiled processes: for every
 * file in a list, open it and read what
 * the symbolizer (ELF symbols) and the unwinder (.eh_frame rows) need.
 * The files: those listed in argv[1], mapped into the bench itself.
 * Built twice by pfile_bench.sh: -DPFILE (proc/pfile.h: O_PATH + reopen,
 * dev/inode check, pread into a sparse image; libelf ELF_C_READ inside
 * elfsym) and without (the old way: open(), mmap of the whole file, libelf
 * ELF_C_READ_MMAP), each against its own tree's archives. Prints the CPU
 * time of the best of 5 rounds, files, symbols and rows. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/cfi.h"
#include "proc/procmaps.h"
#include "symbolize/elfsym.h"
#ifdef PFILE
#include "proc/pfile.h"
#endif

struct file {
	int pid;
	struct procmaps_entry e;
	char path[4096];
};

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Map every file named in @list (one path a line) into this process, then
 * one entry per mapping from /proc/self/maps: a fixed set of files reached
 * the way profcap reaches a profiled process's. */
static size_t collect(const char *list, struct file **out)
{
	struct procmaps *m = NULL;
	struct file *v = NULL;
	size_t n = 0, cap = 0, i;
	char line[4096];
	FILE *f = fopen(list, "r");

	while (f && fgets(line, sizeof(line), f)) {
		struct stat st;
		int fd;

		line[strcspn(line, "\n")] = '\0';
		fd = open(line, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && st.st_size > 0)
			mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
	}
	if (f)
		fclose(f);
	if (procmaps__read("/proc/self/maps", &m))
		return 0;
	for (i = 0; i < procmaps__count(m); i++) {
		const struct procmaps_entry *e = procmaps__entry(m, i);

		if (e->anonymous || !e->inode || e->path[0] != '/' || e->offset)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			v = realloc(v, cap * sizeof(*v));
		}
		v[n].pid = getpid();
		v[n].e = *e;
		snprintf(v[n].path, sizeof(v[n].path), "%s", e->path);
		v[n].e.path = v[n].path;
		n++;
	}
	procmaps__free(m);
	*out = v;
	return n;
}

static void one(const struct file *f, size_t *nsyms, size_t *nrows)
{
	struct cfi_table *t = NULL;
	struct elfsym *elf = NULL;
	struct stat st;
	size_t n = 0;
	int fd = -1;
#ifdef PFILE
	static const char *const secs[] = {".eh_frame", ".debug_frame", NULL};
	struct pfile_image img;

	if (pfile__open_mapped("/proc", f->pid, &f->e, &fd))
		return;
	if (!elfsym__open_fd(fd, &elf)) {
		*nsyms += elfsym__symbol_count(elf);
		elfsym__free(elf);
	}
	if (!fstat(fd, &st) && !pfile__read_elf(fd, (size_t)st.st_size, secs, &img)) {
		if (!cfi__parse(img.data, img.size, &t)) {
			cfi__rows(t, &n);
			*nrows += n;
			cfi__free(t);
		}
		pfile__image_free(&img);
	}
#else
	char path[4200];
	void *img;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", f->pid,
		 (unsigned long long)f->e.start, (unsigned long long)f->e.end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!elfsym__open_fd(fd, &elf)) {
		*nsyms += elfsym__symbol_count(elf);
		elfsym__free(elf);
	}
	if (!fstat(fd, &st) && st.st_size > 0) {
		img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (img != MAP_FAILED) {
			if (!cfi__parse(img, (size_t)st.st_size, &t)) {
				cfi__rows(t, &n);
				*nrows += n;
				cfi__free(t);
			}
			munmap(img, (size_t)st.st_size);
		}
	}
#endif
	close(fd);
}

int main(int argc, char **argv)
{
	struct file *v = NULL;
	size_t n = argc > 1 ? collect(argv[1], &v) : 0, i, syms = 0, rows = 0;
	double best = 1e18;
	int r;

	for (r = 0; r < 5; r++) {
		double t0 = cpu_ms();

		syms = rows = 0;
		for (i = 0; i < n; i++)
			one(&v[i], &syms, &rows);
		if (cpu_ms() - t0 < best)
			best = cpu_ms() - t0;
	}
	printf("%s: %zu files, %zu symbols, %zu rows, best CPU %.1f ms\n",
#ifdef PFILE
	       "pfile (pread)",
#else
	       "old (mmap)",
#endif
	       n, syms, rows, best);
	free(v);
	return 0;
}
