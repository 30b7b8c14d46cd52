#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/elfsyms.h"

#define SYM_CHUNK 1024 /* symbols read at a time */
#define MAX_CHAIN 4096 /* hash chain entries followed: real chains have a few */

int elfsyms__read(const struct elfsyms_file *f, void *buf, size_t len, __u64 off)
{
	size_t done = 0;
	ssize_t n;

	if (off > f->fsize || len > f->fsize - off)
		return -ENOEXEC;
	while (done < len) {
		n = pread(f->fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

void elfsyms__close(struct elfsyms_file *f)
{
	if (!f)
		return;
	free(f->ph);
	free(f->sh);
	f->ph = NULL;
	f->sh = NULL;
}

static int read_table(const struct elfsyms_file *f, void **out, size_t n, size_t each, __u64 off)
{
	void *p = calloc(n ? n : 1, each);
	int err;

	if (!p)
		return -ENOMEM;
	err = elfsyms__read(f, p, n * each, off);
	if (err) {
		free(p);
		return err == -EIO ? -ENOEXEC : err;
	}
	*out = p;
	return 0;
}

int elfsyms__open(int fd, struct elfsyms_file *f)
{
	struct stat st;
	bool load = false;
	int err, i;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	f->fsize = (__u64)st.st_size;
	err = elfsyms__read(f, &f->eh, sizeof(f->eh), 0);
	if (err)
		return err == -EIO ? -ENOEXEC : err;
	if (memcmp(f->eh.e_ident, ELFMAG, SELFMAG) || f->eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    f->eh.e_ident[EI_DATA] != ELFDATA2LSB || f->eh.e_machine != EM_X86_64 ||
	    (f->eh.e_type != ET_EXEC && f->eh.e_type != ET_DYN))
		return -ENOEXEC;
	if (f->eh.e_phentsize != sizeof(Elf64_Phdr) || f->eh.e_phnum > ELFSYMS_MAX_PHDRS ||
	    (f->eh.e_shnum && (f->eh.e_shentsize != sizeof(Elf64_Shdr) ||
			       f->eh.e_shnum > ELFSYMS_MAX_SHDRS)))
		return -ENOEXEC;
	err = read_table(f, (void **)&f->ph, f->eh.e_phnum, sizeof(Elf64_Phdr), f->eh.e_phoff);
	if (!err && f->eh.e_shnum)
		err = read_table(f, (void **)&f->sh, f->eh.e_shnum, sizeof(Elf64_Shdr),
				 f->eh.e_shoff);
	for (i = 0; !err && i < f->eh.e_phnum && !load; i++) {
		/* program headers list PT_LOAD in ascending p_vaddr */
		if (f->ph[i].p_type != PT_LOAD)
			continue;
		f->load_base = (f->ph[i].p_vaddr - f->ph[i].p_offset) & ~(__u64)4095;
		load = true;
	}
	if (err)
		elfsyms__close(f);
	return err;
}

int elfsyms__read_vaddr(const struct elfsyms_file *f, void *buf, size_t len, __u64 vaddr)
{
	int i;

	for (i = 0; i < f->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &f->ph[i];

		if (p->p_type != PT_LOAD || vaddr < p->p_vaddr || vaddr - p->p_vaddr > p->p_filesz ||
		    len > p->p_filesz - (vaddr - p->p_vaddr))
			continue;
		return elfsyms__read(f, buf, len, p->p_offset + (vaddr - p->p_vaddr));
	}
	return -ENOENT;
}

/* Match symbol @y (index @index) against the queries not found yet,
 * reading its name from string table @str only when its type is asked
 * for. */
static int match(const struct elfsyms_file *f, const Elf64_Shdr *str, const Elf64_Sym *y,
		 __u32 index, struct elfsyms_query *q, size_t n, size_t *found)
{
	char name[ELFSYMS_MAX_NAME + 1];
	unsigned int types = 0;
	size_t i, len;
	int err;

	for (i = 0; i < n; i++)
		if (!q[i].found)
			types |= q[i].types;
	if (!(types & (1u << ELF64_ST_TYPE(y->st_info))) || y->st_shndx == SHN_UNDEF ||
	    y->st_name >= str->sh_size)
		return 0;
	len = str->sh_size - y->st_name;
	len = len < sizeof(name) ? (size_t)len : sizeof(name);
	err = elfsyms__read(f, name, len, str->sh_offset + y->st_name);
	if (err)
		return err == -EIO ? -ENOEXEC : err;
	if (!memchr(name, 0, len))
		return 0; /* longer than any name asked for */
	for (i = 0; i < n; i++) {
		if (q[i].found || !(q[i].types & (1u << ELF64_ST_TYPE(y->st_info))) ||
		    strcmp(q[i].name, name))
			continue;
		q[i].found = true;
		q[i].value = y->st_value;
		q[i].size = y->st_size;
		q[i].index = index;
		(*found)++;
	}
	return 0;
}

static int search(const struct elfsyms_file *f, const Elf64_Shdr *sym, struct elfsyms_query *q,
		  size_t nq, size_t *found)
{
	const Elf64_Shdr *str;
	Elf64_Sym *syms;
	size_t n, i, k, chunk;
	int err = 0;

	if (sym->sh_link >= f->eh.e_shnum || sym->sh_entsize != sizeof(Elf64_Sym))
		return -ENOEXEC;
	str = &f->sh[sym->sh_link];
	if (sym->sh_size > ELFSYMS_MAX_TABLE || str->sh_size > ELFSYMS_MAX_TABLE)
		return -EFBIG;
	n = (size_t)(sym->sh_size / sizeof(Elf64_Sym));
	syms = malloc(SYM_CHUNK * sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	for (i = 0; !err && i < n && *found < nq; i += chunk) {
		chunk = n - i < SYM_CHUNK ? n - i : SYM_CHUNK;
		err = elfsyms__read(f, syms, chunk * sizeof(*syms),
				    sym->sh_offset + i * sizeof(*syms));
		if (err == -EIO)
			err = -ENOEXEC;
		for (k = 0; !err && k < chunk && *found < nq; k++)
			err = match(f, str, &syms[k], (__u32)(i + k), q, nq, found);
	}
	free(syms);
	return err;
}

/* ---- .gnu.hash: a few reads per name instead of one per symbol ---- */

static __u32 gnu_hash(const char *s)
{
	__u32 h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* Query @q through GNU hash section @hs of symbol table @sym: found or
 * not (0), or an error. The chain is followed while it stays inside the
 * table. */
static int hash_one(const struct elfsyms_file *f, const Elf64_Shdr *hs, const Elf64_Shdr *sym,
		    const __u32 hdr[4], struct elfsyms_query *q, size_t *found)
{
	const Elf64_Shdr *str = &f->sh[sym->sh_link];
	__u64 nsyms = sym->sh_size / sizeof(Elf64_Sym);
	__u64 buckets = hs->sh_offset + 16 + (__u64)hdr[2] * 8, chains;
	__u32 h = gnu_hash(q->name), idx, c, steps;
	Elf64_Sym y;
	int err;

	chains = buckets + (__u64)hdr[0] * 4;
	err = elfsyms__read(f, &idx, 4, buckets + (h % hdr[0]) * 4);
	if (err || idx < hdr[1])
		return err;
	for (steps = 0; idx < nsyms && steps < MAX_CHAIN; idx++, steps++) {
		err = elfsyms__read(f, &c, 4, chains + (__u64)(idx - hdr[1]) * 4);
		if (err)
			return err;
		if ((c | 1) == (h | 1)) {
			err = elfsyms__read(f, &y, sizeof(y), sym->sh_offset + idx * sizeof(y));
			err = err ?: match(f, str, &y, idx, q, 1, found);
			if (err || q->found)
				return err;
		}
		if (c & 1)
			break;
	}
	return 0;
}

static int hash_search(const struct elfsyms_file *f, const Elf64_Shdr *hs, const Elf64_Shdr *sym,
		       struct elfsyms_query *q, size_t n, size_t *found)
{
	__u32 hdr[4];
	size_t i;
	int err;

	if (sym->sh_link >= f->eh.e_shnum || sym->sh_entsize != sizeof(Elf64_Sym))
		return -ENOEXEC;
	err = elfsyms__read(f, hdr, sizeof(hdr), hs->sh_offset);
	if (err || !hdr[0] || hdr[0] > ELFSYMS_MAX_TABLE / 4 || hdr[2] > ELFSYMS_MAX_TABLE / 8)
		return err ?: -ENOEXEC;
	for (i = 0; !err && i < n; i++)
		err = hash_one(f, hs, sym, hdr, &q[i], found);
	return err == -EIO ? -ENOEXEC : err;
}

int elfsyms__dynsym(const struct elfsyms_file *f, struct elfsyms_query *q, size_t n,
		    __u32 *dynsym)
{
	size_t found = 0, i;
	int err = 0, s, h;

	for (i = 0; i < n; i++)
		q[i].found = false;
	for (s = 0; s < f->eh.e_shnum; s++) {
		if (f->sh[s].sh_type != SHT_DYNSYM)
			continue;
		if (dynsym)
			*dynsym = (__u32)s;
		for (h = 0; h < f->eh.e_shnum; h++)
			if (f->sh[h].sh_type == SHT_GNU_HASH && f->sh[h].sh_link == (__u32)s)
				break;
		if (h < f->eh.e_shnum)
			err = hash_search(f, &f->sh[h], &f->sh[s], q, n, &found);
		else
			err = search(f, &f->sh[s], q, n, &found);
		break;
	}
	if (err)
		return err;
	return found ? 0 : -ENOENT;
}
