#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/htab.h"
#include "util/fdio.h"
#include "util/utf8.h"
#include "proc/elfsyms.h"
#include "proc/pfile.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/threadctx.h"

/* The PT_TLS header of @f into *@tls: 0 or -ENOENT. */
static int find_tls(const struct elfsyms_file *f, Elf64_Phdr *tls)
{
	int i;

	for (i = 0; i < f->eh.e_phnum; i++)
		if (f->ph[i].p_type == PT_TLS) {
			*tls = f->ph[i];
			return 0;
		}
	return -ENOENT;
}

static __u64 round_up(__u64 v, __u64 align)
{
	return align > 1 ? (v + align - 1) / align * align : v;
}

/* Note in @m the first relocation of each TLS kind against symbol @index
 * of the symbol table @dynsym in the SHT_RELA section @rela (.rela.dyn, and
 * .rela.plt where TLSDESC entries go). Read in chunks: no allocation. */
static int scan_relocs(const struct elfsyms_file *f, const Elf64_Shdr *rela, __u32 dynsym,
		       __u32 index, struct threadctx_module *m)
{
	Elf64_Rela r[128];
	__u64 n, i;
	size_t k, chunk;
	int err;

	if (rela->sh_link != dynsym || rela->sh_entsize != sizeof(Elf64_Rela))
		return 0; /* relocations against another symbol table */
	n = rela->sh_size / sizeof(Elf64_Rela);
	if (n > THREADCTX_MAX_SYMTAB / sizeof(Elf64_Rela))
		return -EFBIG;
	for (i = 0; i < n; i += chunk) {
		chunk = n - i < 128 ? (size_t)(n - i) : 128;
		err = elfsyms__read(f, r, chunk * sizeof(*r), rela->sh_offset + i * sizeof(*r));
		if (err)
			return err;
		for (k = 0; k < chunk; k++) {
			__u32 type = (__u32)ELF64_R_TYPE(r[k].r_info);
			__u32 sym = (__u32)ELF64_R_SYM(r[k].r_info);

			/* a TLSDESC against the section (symbol 0) names the
			 * variable by its offset: -Bsymbolic or protected */
			if (sym != index && !(sym == 0 && type == R_X86_64_TLSDESC &&
					      (__u64)r[k].r_addend == m->value))
				continue;
			if (type == R_X86_64_TPOFF64 && !m->tpoff_got)
				m->tpoff_got = r[k].r_offset;
			else if (type == R_X86_64_TLSDESC && !m->desc_got) {
				m->desc_got = r[k].r_offset;
				m->desc_addend = r[k].r_addend;
			} else if (type == R_X86_64_DTPMOD64 && !m->mod_got) {
				m->mod_got = r[k].r_offset;
			}
		}
	}
	return 0;
}

/* THREADCTX_SYMBOL from .dynsym (SHT_DYNSYM): where the OTEP says it must
 * be, even in static binaries; then the relocations against it. .symtab is
 * not searched: it can be tens of MiB in an unstripped binary and this runs
 * for every new process. */
static int read_sections(const struct elfsyms_file *f, struct threadctx_module *m)
{
	struct elfsyms_query q = {.name = THREADCTX_SYMBOL, .types = 1u << STT_TLS};
	__u32 dynsym = 0;
	int err, i;

	err = elfsyms__dynsym(f, &q, 1, &dynsym);
	if (!err)
		m->value = q.value;
	for (i = 0; !err && i < f->eh.e_shnum; i++)
		if (f->sh[i].sh_type == SHT_RELA)
			err = scan_relocs(f, &f->sh[i], dynsym, q.index, m);
	return err;
}

int threadctx__elf_module(int fd, struct threadctx_module *m)
{
	struct elfsyms_file f;
	Elf64_Phdr tls = {0};
	__u64 align, firstbyte, block;
	int err;

	memset(m, 0, sizeof(*m));
	err = elfsyms__open(fd, &f);
	if (err)
		return err;
	m->load_base = f.load_base;
	err = find_tls(&f, &tls);
	err = err ?: read_sections(&f, m);
	elfsyms__close(&f);
	if (err)
		return err == -EIO ? -ENOEXEC : err;
	align = tls.p_align ? tls.p_align : 1;
	if ((align & (align - 1)) || align > (1u << 20) || tls.p_memsz > (1u << 30) ||
	    m->value + 8 > tls.p_memsz)
		return -ENOEXEC;
	/* As the executable, variant II: the block ends at the thread pointer
	 * (glibc's _dl_determine_tlsoffset for the first module; musl
	 * likewise). */
	firstbyte = (-(tls.p_vaddr & (align - 1))) & (align - 1);
	block = round_up(tls.p_memsz - firstbyte, align) + firstbyte;
	m->exe_off = (__s64)m->value - (__s64)block;
	return 0;
}

int threadctx__elf_offset(int fd, __s64 *off)
{
	struct threadctx_module m;
	int err = threadctx__elf_module(fd, &m);

	if (!err)
		*off = m.exe_off;
	return err;
}

/* A static TLS offset: the block below the thread pointer, within 1 GiB. */
static bool static_offset(__u64 v)
{
	return (__s64)v < 0 && (__s64)v >= -(1ll << 30);
}

int threadctx__module_locate(const struct threadctx_module *m, __u64 bias,
			     threadctx_read_fn rd, void *ctx, struct threadctx_loc *loc)
{
	__u64 w[2];
	int err;

	memset(loc, 0, sizeof(*loc));
	/* initial-exec: the GOT holds the offset from the thread pointer */
	if (m->tpoff_got && !rd(ctx, bias + m->tpoff_got, w, 8) && static_offset(w[0])) {
		loc->off = (__s64)w[0];
		return 0;
	}
	/* TLSDESC: {resolver, argument}; the argument is the offset from the
	 * thread pointer for static TLS (glibc _dl_tlsdesc_return, musl
	 * __tlsdesc_static), else points at {module id, offset} (glibc's
	 * tlsdesc_dynamic_arg starts with its tls_index; musl likewise) */
	if (m->desc_got && !rd(ctx, bias + m->desc_got, w, 16)) {
		if (static_offset(w[1])) {
			loc->off = (__s64)w[1];
			return 0;
		}
		if (!rd(ctx, w[1], w, 16) && w[0] >= 1 && w[0] <= THREADCTX_MAX_MODID &&
		    w[1] == m->value + (__u64)m->desc_addend) {
			loc->modid = (__u32)w[0];
			loc->off = (__s64)w[1];
			return 0;
		}
	}
	/* general dynamic: the GOT holds the module id (and its DTPOFF64
	 * neighbour the symbol's offset in the block, i.e. st_value) */
	if (m->mod_got) {
		err = rd(ctx, bias + m->mod_got, w, 8);
		if (!err && w[0] >= 1 && w[0] <= THREADCTX_MAX_MODID) {
			loc->modid = (__u32)w[0];
			loc->off = (__s64)m->value;
			return 0;
		}
	}
	return m->tpoff_got || m->desc_got || m->mod_got ? -EAGAIN : -ENOENT;
}

/* ---- per process ---- */

#define FILES_MAX 768 /* forgotten all at once past this many */

struct file_key {
	__u64 dev, ino;
};

struct threadctx_files {
	struct htab set; /* struct file_key */
};

struct threadctx_files *threadctx_files__new(void)
{
	struct threadctx_files *f = calloc(1, sizeof(*f));

	if (f)
		htab__init(&f->set, sizeof(struct file_key), FILES_MAX);
	return f;
}

void threadctx_files__free(struct threadctx_files *f)
{
	if (!f)
		return;
	htab__release(&f->set);
	free(f);
}

static bool file_eq(const void *elem, const void *key, void *ctx)
{
	const struct file_key *a = elem, *b = key;

	(void)ctx;
	return a->dev == b->dev && a->ino == b->ino;
}

static bool files_known(const struct threadctx_files *f, __u64 dev, __u64 ino)
{
	struct file_key k = {.dev = dev, .ino = ino};

	return f && ino && htab__find(&f->set, htab__hash_u64(dev, ino), &k, file_eq, NULL);
}

static void files_add(struct threadctx_files *f, __u64 dev, __u64 ino)
{
	struct file_key *e;

	if (!f || !ino || files_known(f, dev, ino))
		return;
	if (htab__count(&f->set) >= FILES_MAX)
		htab__clear(&f->set); /* a host that keeps loading new files */
	if (!htab__add(&f->set, htab__hash_u64(dev, ino), (void **)&e))
		*e = (struct file_key){.dev = dev, .ino = ino};
}

/* Reads process memory for threadctx__module_locate(): ctx is the
 * /proc/PID/mem descriptor. */
static int mem_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	int fd = *(int *)ctx;

	if (addr > (__u64)INT64_MAX - len)
		return -EFAULT;
	return pfile__pread(fd, buf, len, (off_t)addr);
}

/* The variable in the library mapped by @e (its file open at @fd) of
 * process @pid: 0 and *@loc, -ENOENT (not there), or an error. */
static int locate_in_library(const char *root, int pid, const struct procmaps_entry *e, int fd,
			     struct threadctx_loc *loc)
{
	struct threadctx_module m;
	char path[96];
	int mem = -1, err;

	err = threadctx__elf_module(fd, &m);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%d/mem", root, pid);
	mem = fdio__open(path, O_RDONLY);
	if (mem < 0)
		return -errno;
	err = threadctx__module_locate(&m, e->start - m.load_base, mem_read, &mem, loc);
	close(mem);
	return err;
}

/* The libraries of process @pid, for the variable. */
static int locate_in_libraries(const char *root, int pid, struct threadctx_files *seen,
			       struct threadctx_loc *loc)
{
	struct procmaps *maps = NULL;
	char path[96];
	bool musl = false;
	size_t i, n;
	int err, fd;

	snprintf(path, sizeof(path), "%s/%d/maps", root, pid);
	err = procmaps__read(path, &maps);
	if (err)
		return err;
	n = procmaps__count(maps);
	for (i = 0; i < n; i++)
		musl |= strstr(procmaps__entry(maps, i)->path, "/ld-musl-") != NULL;
	err = -ENOENT;
	for (i = 0; i < n && err == -ENOENT; i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);
		__u64 dev = ((__u64)e->dev_major << 32) | e->dev_minor;

		if (e->anonymous || !e->inode || e->offset || e->path[0] != '/' ||
		    files_known(seen, dev, e->inode))
			continue;
		if (pfile__open_mapped(root, pid, e, &fd)) {
			files_add(seen, dev, e->inode); /* unreadable: do not retry */
			continue;
		}
		err = locate_in_library(root, pid, e, fd, loc);
		close(fd);
		if (err == -ENOENT || err == -ENOEXEC) {
			files_add(seen, dev, e->inode);
			err = -ENOENT;
		}
	}
	loc->musl = musl;
	procmaps__free(maps);
	return err;
}

/* The mapping of @snap's executable (its path, " (deleted)" aside), or
 * NULL. */
static const struct procmaps_entry *exe_mapping(const struct procsnap *snap)
{
	size_t i, n, len;

	if (!snap->exe || !snap->maps)
		return NULL;
	n = procmaps__count(snap->maps);
	for (i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(snap->maps, i);

		if (e->anonymous || !e->inode || e->path[0] != '/')
			continue;
		len = strlen(e->path);
		if (!strncmp(snap->exe, e->path, len) &&
		    (!snap->exe[len] || !strcmp(snap->exe + len, PROCMAPS_DELETED_SUFFIX)))
			return e;
	}
	return NULL;
}

/* The executable of @pid (its mapping @me in a snapshot, or NULL): 0 and
 * loc->off, -ENOENT (no variable: added to @seen), or -errno. */
static int locate_in_exe(const char *root, int pid, const struct procmaps_entry *me,
			 struct threadctx_files *seen, struct threadctx_loc *loc)
{
	__u64 mdev = me ? ((__u64)me->dev_major << 32) | me->dev_minor : 0, dev;
	char path[96];
	struct stat st;
	int fd, err;

	if (me && files_known(seen, mdev, me->inode))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%d/exe", root, pid);
	fd = fdio__open(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	err = fstat(fd, &st) ? -errno : 0;
	if (!err) {
		dev = ((__u64)major(st.st_dev) << 32) | minor(st.st_dev);
		err = files_known(seen, dev, st.st_ino) ? -ENOENT
							: threadctx__elf_offset(fd, &loc->off);
		if (err == -ENOENT) {
			files_add(seen, dev, st.st_ino);
			/* maps may name another device (btrfs, overlayfs) */
			if (me)
				files_add(seen, mdev, me->inode);
		}
	}
	close(fd);
	return err;
}

int threadctx__process_locate(const char *proc_root, int pid, bool libraries,
			      const struct procsnap *snap, struct threadctx_files *seen,
			      struct threadctx_loc *loc)
{
	const char *root = proc_root ? proc_root : "/proc";
	int err;

	memset(loc, 0, sizeof(*loc));
	err = locate_in_exe(root, pid, snap && snap->pid == pid ? exe_mapping(snap) : NULL, seen,
			    loc);
	if (err == -ENOENT && libraries)
		err = locate_in_libraries(root, pid, seen, loc);
	return err;
}

/* True when @len bytes at @s are UTF-8 without NUL. */
static bool value_ok(const char *s, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		if (!s[i])
			return false;
		n = utf8__decode(s + i, len - i, NULL);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

void threadctx__decode_attrs(const void *buf, size_t len, size_t nkeys,
			     struct threadctx_attrs *out)
{
	const unsigned char *p = buf;
	size_t i = 0;
	unsigned k;

	memset(out, 0, sizeof(*out));
	if (!p)
		len = 0;
	while (i < len) {
		__u8 key, vlen;

		if (len - i < 2) {
			out->malformed = true; /* cannot hold a complete entry */
			break;
		}
		key = p[i];
		vlen = p[i + 1];
		if (vlen > len - i - 2 || !value_ok((const char *)p + i + 2, vlen)) {
			out->malformed = true;
			break;
		}
		i += 2;
		if (key >= nkeys) {
			out->unknown++;
		} else {
			for (k = 0; k < out->n && out->attr[k].key != key; k++)
				;
			if (k == out->n && out->n == THREADCTX_MAX_ATTRS) {
				out->overflow++;
			} else {
				out->attr[k].key = key; /* the last occurrence wins */
				out->attr[k].len = vlen;
				out->attr[k].value = (const char *)p + i;
				out->n += k == out->n;
			}
		}
		i += vlen;
	}
}
