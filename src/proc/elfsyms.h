/* elfsyms.h - a profiled program's ELF file read for a few named symbols:
 * its headers, its exported symbols (.dynsym) and bytes at a link-time
 * address. The one small ELF reader of proc/ (thread context variables,
 * Python interpreters); symbolize/ has the full symbolizer.
 *
 * The file is untrusted: every offset and size is checked against the
 * file, tables are capped (ELFSYMS_MAX_TABLE) and read in chunks by pread,
 * and a symbol's name is read only when its type is asked for, so a
 * program that exports everything costs a few small reads, not megabytes.
 * .symtab is never read: distributions strip it, .dynsym stays.
 */
#ifndef PROFCAP_ELFSYMS_H
#define PROFCAP_ELFSYMS_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define ELFSYMS_MAX_TABLE (16u << 20) /* larger symbol or relocation tables are refused */
#define ELFSYMS_MAX_PHDRS 256
#define ELFSYMS_MAX_SHDRS 4096
#define ELFSYMS_MAX_NAME 128 /* longer names are never asked for */

/* An open 64-bit little-endian x86-64 ELF file (ET_EXEC or ET_DYN). */
struct elfsyms_file {
	int fd;	      /* borrowed */
	__u64 fsize;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph; /* eh.e_phnum program headers */
	Elf64_Shdr *sh; /* eh.e_shnum section headers (NULL when none) */
	__u64 load_base; /* page-aligned p_vaddr - p_offset of the first PT_LOAD */
};

/* Read the headers of the file open at @fd into @f (elfsyms__close()).
 * 0, -ENOEXEC (not such an ELF file, or malformed), -ENOMEM, -errno. */
int elfsyms__open(int fd, struct elfsyms_file *f);
/* Free what elfsyms__open() read (not the descriptor). Accepts a zeroed @f. */
void elfsyms__close(struct elfsyms_file *f);

/* Exactly @len bytes at file offset @off: 0, -ENOEXEC when outside the
 * file, -EIO (short read) or -errno. */
int elfsyms__read(const struct elfsyms_file *f, void *buf, size_t len, __u64 off);

/* @len bytes at link-time address @vaddr, from the PT_LOAD segment whose
 * file bytes hold them: 0, -ENOENT (not in the file), or as above. */
int elfsyms__read_vaddr(const struct elfsyms_file *f, void *buf, size_t len, __u64 vaddr);

/* A symbol asked for: @name, of one of @types (bits 1 << STT_*). */
struct elfsyms_query {
	const char *name;
	unsigned int types;
	bool found; /* the rest set when found: the first defined one */
	__u64 value;
	__u64 size;
	__u32 index; /* in .dynsym */
};

/* Look the @n queries up in .dynsym (defined symbols only). *@dynsym (may
 * be NULL) gets the section index of .dynsym. 0 when at least one was
 * found, -ENOENT when none (or no .dynsym), -EFBIG (table over the cap),
 * -ENOEXEC (malformed) or a read error. */
int elfsyms__dynsym(const struct elfsyms_file *f, struct elfsyms_query *q, size_t n,
		    __u32 *dynsym);

#endif
