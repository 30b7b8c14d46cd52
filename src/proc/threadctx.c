#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/utf8.h"
#include "proc/threadctx.h"

#define MAX_PHDRS 256
#define MAX_SHDRS 4096

/* Exactly @len bytes at @off, else -EIO (short: truncated file) or -errno. */
static int read_at(int fd, void *buf, size_t len, __u64 off, __u64 fsize)
{
	size_t done = 0;
	ssize_t n;

	if (off > fsize || len > fsize - off)
		return -ENOEXEC;
	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
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

static __u64 round_up(__u64 v, __u64 align)
{
	return align > 1 ? (v + align - 1) / align * align : v;
}

/* The PT_TLS header of the file into *@tls: 0, -ENOENT, or an error. */
static int find_tls(int fd, const Elf64_Ehdr *eh, __u64 fsize, Elf64_Phdr *tls)
{
	Elf64_Phdr *ph = NULL;
	int err, i;

	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum > MAX_PHDRS)
		return -ENOEXEC;
	ph = calloc(eh->e_phnum ? eh->e_phnum : 1, sizeof(*ph));
	if (!ph)
		return -ENOMEM;
	err = read_at(fd, ph, (size_t)eh->e_phnum * sizeof(*ph), eh->e_phoff, fsize);
	for (i = 0; !err && i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_TLS) {
			*tls = ph[i];
			break;
		}
	if (!err && i == eh->e_phnum)
		err = -ENOENT;
	free(ph);
	return err;
}

/* st_value of STT_TLS symbol THREADCTX_SYMBOL in symbol section @sym (its
 * strings in section sym->sh_link) into *@value: 0, -ENOENT, or an error. */
static int find_symbol(int fd, const Elf64_Shdr *sh, __u32 nsh, const Elf64_Shdr *sym,
		       __u64 fsize, __u64 *value)
{
	const size_t want = sizeof(THREADCTX_SYMBOL);
	const Elf64_Shdr *str;
	Elf64_Sym *syms = NULL;
	char *strs = NULL;
	size_t n, i;
	int err;

	if (sym->sh_link >= nsh || sym->sh_entsize != sizeof(Elf64_Sym))
		return -ENOEXEC;
	str = &sh[sym->sh_link];
	if (sym->sh_size > THREADCTX_MAX_SYMTAB || str->sh_size > THREADCTX_MAX_SYMTAB)
		return -EFBIG;
	n = (size_t)(sym->sh_size / sizeof(Elf64_Sym));
	syms = malloc(n ? n * sizeof(*syms) : 1);
	strs = malloc(str->sh_size ? str->sh_size : 1);
	err = syms && strs ? 0 : -ENOMEM;
	err = err ?: read_at(fd, syms, n * sizeof(*syms), sym->sh_offset, fsize);
	err = err ?: read_at(fd, strs, (size_t)str->sh_size, str->sh_offset, fsize);
	if (!err)
		err = -ENOENT;
	for (i = 0; err == -ENOENT && i < n; i++) {
		if (ELF64_ST_TYPE(syms[i].st_info) != STT_TLS || syms[i].st_shndx == SHN_UNDEF)
			continue;
		if (syms[i].st_name >= str->sh_size || str->sh_size - syms[i].st_name < want ||
		    memcmp(strs + syms[i].st_name, THREADCTX_SYMBOL, want))
			continue;
		*value = syms[i].st_value;
		err = 0;
	}
	free(strs);
	free(syms);
	return err;
}

/* st_value of the symbol, from .dynsym (SHT_DYNSYM): where the OTEP says
 * it must be, even in static binaries. .symtab is not searched: it can be
 * tens of MiB in an unstripped binary and this runs for every new process. */
static int symbol_value(int fd, const Elf64_Ehdr *eh, __u64 fsize, __u64 *value)
{
	Elf64_Shdr *sh = NULL;
	int err, i;

	if (!eh->e_shnum)
		return -ENOENT; /* stripped of section headers: no table to look in */
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum > MAX_SHDRS)
		return -ENOEXEC;
	sh = calloc(eh->e_shnum, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	err = read_at(fd, sh, (size_t)eh->e_shnum * sizeof(*sh), eh->e_shoff, fsize);
	if (!err)
		err = -ENOENT;
	for (i = 0; i < eh->e_shnum && err == -ENOENT; i++)
		if (sh[i].sh_type == SHT_DYNSYM)
			err = find_symbol(fd, sh, eh->e_shnum, &sh[i], fsize, value);
	free(sh);
	return err;
}

int threadctx__elf_offset(int fd, __s64 *off)
{
	Elf64_Ehdr eh;
	Elf64_Phdr tls;
	struct stat st;
	__u64 value = 0, align, firstbyte, block;
	int err;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	err = read_at(fd, &eh, sizeof(eh), 0, (__u64)st.st_size);
	if (err)
		return err == -EIO ? -ENOEXEC : err;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return -ENOEXEC;
	err = find_tls(fd, &eh, (__u64)st.st_size, &tls);
	err = err ?: symbol_value(fd, &eh, (__u64)st.st_size, &value);
	if (err)
		return err == -EIO ? -ENOEXEC : err;
	align = tls.p_align ? tls.p_align : 1;
	if ((align & (align - 1)) || align > (1u << 20) || tls.p_memsz > (1u << 30) ||
	    value + 8 > tls.p_memsz)
		return -ENOEXEC;
	/* Variant II: the block ends at the thread pointer (glibc's
	 * _dl_determine_tlsoffset for the first module; musl likewise). */
	firstbyte = (-(tls.p_vaddr & (align - 1))) & (align - 1);
	block = round_up(tls.p_memsz - firstbyte, align) + firstbyte;
	*off = (__s64)value - (__s64)block;
	return 0;
}

int threadctx__process_offset(const char *proc_root, int pid, __s64 *off)
{
	char path[96];
	int fd, err;

	snprintf(path, sizeof(path), "%s/%d/exe", proc_root ? proc_root : "/proc", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	err = threadctx__elf_offset(fd, off);
	close(fd);
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
