/* threadctx.h - where a process keeps its OpenTelemetry thread context (OTEP
 * 4947): the offset from a thread's thread pointer of the TLS variable
 * `otel_thread_ctx_v1`, a pointer to the thread's context record.
 *
 * Where the variable lives (x86_64, TLS variant II: blocks below the thread
 * pointer):
 * - In the executable: its block is static TLS ending at the thread
 *   pointer, so the variable is at
 *     tp - (round_up(p_memsz - firstbyte, p_align) + firstbyte) + st_value
 *   (firstbyte = -(p_vaddr mod p_align) mod p_align; glibc's
 *   _dl_determine_tlsoffset() places the first module so, musl the same),
 *   whatever access model the writer compiled with: the linker relaxes
 *   them all to static access.
 * - In a shared library: the loader chooses the block at run time, and the
 *   library's own relocations against the variable say where, once the
 *   loader has applied them. Read from the process's GOT:
 *     R_X86_64_TPOFF64 (initial-exec): the offset from the thread pointer;
 *     R_X86_64_TLSDESC (the OTEP's recommended model): {resolver, arg}, arg
 *       the offset from the thread pointer when the loader gave the
 *       library static TLS (loaded at start, or dlopen()ed into glibc's
 *       surplus), else a pointer to {module id, offset};
 *     R_X86_64_DTPMOD64 (general dynamic): the module id; the variable is
 *       at st_value in the module's block.
 *   With a module id the sampler finds the block per thread in the
 *   dynamic thread vector (dtv, whose address both glibc and musl keep at
 *   tp + 8): glibc's slots are 16 bytes (the pointer first) and slot -1
 *   holds their count; musl's are 8 bytes and slot 0 holds the count. A
 *   slot that is past the count, 0, or -1 (glibc: not allocated yet, the
 *   thread never touched the variable) means no context.
 * Not handled: the local-dynamic model (the OTEP excludes it), other
 * architectures.
 *
 * The executable is read with pread (headers, section headers, one symbol
 * table and its strings, each size-capped); everything in it is untrusted.
 */
#ifndef PROFCAP_THREADCTX_H
#define PROFCAP_THREADCTX_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct procsnap;

#define THREADCTX_SYMBOL "otel_thread_ctx_v1"
#define THREADCTX_RECORD_HEAD 28       /* trace id, span id, valid, flags, attrs size */
#define THREADCTX_MAX_SYMTAB (16u << 20) /* larger symbol tables are refused */

#define THREADCTX_MAX_MODID 65536 /* larger module ids are not believed */

/* What an ELF file says about its `otel_thread_ctx_v1`. */
struct threadctx_module {
	__u64 value;	   /* st_value: the offset in the module's TLS block */
	__s64 exe_off;	   /* as an executable: the offset from the thread pointer */
	__u64 load_base;   /* page-aligned vaddr of file offset 0 (lowest PT_LOAD) */
	__u64 tpoff_got;   /* vaddr of an R_X86_64_TPOFF64 against it, 0 none */
	__u64 desc_got;	   /* ... of an R_X86_64_TLSDESC, 0 none */
	__s64 desc_addend; /* its addend */
	__u64 mod_got;	   /* ... of an R_X86_64_DTPMOD64, 0 none */
};

/* Where a process's threads keep the variable. */
struct threadctx_loc {
	__s64 off;   /* modid 0: from the thread pointer; else in the module's block */
	__u32 modid; /* 0: static TLS; else the module's dtv slot */
	bool musl;   /* dtv layout: musl's, else glibc's */
};

/* Read the ELF file open at @fd (x86_64, 64-bit little-endian, executable
 * or shared object) into *@m: the STT_TLS symbol THREADCTX_SYMBOL from
 * .dynsym only (where the OTEP says it must be), PT_TLS, and the
 * relocations against the symbol. 0; -ENOENT (no such symbol, or no
 * PT_TLS); -ENOEXEC (not such an ELF, or malformed: sizes past the file, a
 * symbol outside the TLS segment); -EFBIG (a table over
 * THREADCTX_MAX_SYMTAB); or -errno of a read. Untrusted input: every size
 * is checked against the file. */
int threadctx__elf_module(int fd, struct threadctx_module *m);

/* threadctx__elf_module()'s exe_off into *@off: where the variable is
 * when the file at @fd is the process's executable. Same returns. */
int threadctx__elf_offset(int fd, __s64 *off);

/* Reads @len bytes of the process's memory at @addr into @buf: 0 or
 * -errno. */
typedef int (*threadctx_read_fn)(void *ctx, __u64 addr, void *buf, size_t len);

/* Where the variable of library @m, loaded at bias @bias (its file offset
 * 0 is mapped at @bias + load_base), is for the process whose memory @rd
 * reads (@ctx passed on): from its GOT, see above. 0 and *@loc (musl
 * false: the caller knows the C library); -EAGAIN when the relocations are
 * there but their GOT words are not (yet) what a loader writes; -ENOENT
 * when the library has no relocation against the variable. Never trusts
 * what it reads: offsets, module ids and pointers are range-checked. */
int threadctx__module_locate(const struct threadctx_module *m, __u64 bias,
			     threadctx_read_fn rd, void *ctx, struct threadctx_loc *loc);

/* Files known not to define the variable (by device and inode), so a host
 * starting processes of the same binaries reads each file once. At most
 * 768 files; forgotten all at once when full. */
struct threadctx_files;
struct threadctx_files *threadctx_files__new(void); /* NULL: -ENOMEM */
void threadctx_files__free(struct threadctx_files *f); /* accepts NULL */

/* Where process @pid (under @proc_root, NULL = "/proc") keeps the variable:
 * its executable, then, with @libraries (the process's context says it
 * publishes thread context, as the OTEP asks readers to check first), each
 * mapped file, opened through map_files (proc/pfile.h). Files in @seen
 * (may be NULL) are skipped; files without the variable are added. @snap
 * (borrowed, may be NULL), a snapshot of @pid just taken: the executable's
 * device and inode come from its mapping there, so an executable already
 * in @seen is not opened (a compile loop opened /proc/PID/exe once per
 * process for nothing). 0 and *@loc; -ENOENT (none), -EAGAIN (see above),
 * or -errno (process gone: -ENOENT/-ESRCH). */
int threadctx__process_locate(const char *proc_root, int pid, bool libraries,
			      const struct procsnap *snap, struct threadctx_files *seen,
			      struct threadctx_loc *loc);

/* ---- attrs-data: the record's attributes ----
 * After the 28-byte head come attrs-data-size bytes of entries packed with
 * no padding: key index (uint8, into the process context's
 * threadlocal.attribute_key_map), value length (uint8), then that many
 * UTF-8 bytes. A reader stops at an entry that does not fit; the last
 * occurrence of a key index wins. */
#define THREADCTX_MAX_ATTRS 8 /* distinct attributes kept per record */

struct threadctx_attr {
	__u8 key;	    /* key index */
	__u8 len;	    /* value bytes */
	const char *value; /* borrowed from the decoded buffer, not NUL-terminated */
};

struct threadctx_attrs {
	unsigned n;	   /* entries in attr[] */
	unsigned unknown;  /* entries dropped: key index >= the key map's size */
	unsigned overflow; /* entries dropped: more than THREADCTX_MAX_ATTRS keys */
	bool malformed;	   /* decoding stopped early: a truncated entry, or a value
			    * that is not UTF-8 or holds NUL */
	struct threadctx_attr attr[THREADCTX_MAX_ATTRS];
};

/* Decode the @len attrs-data bytes at @buf (untrusted; may be NULL when
 * @len is 0) against a key map of @nkeys keys into *@out (zeroed first).
 * Entries whose index is >= @nkeys are dropped and counted; a malformed or
 * incomplete entry ends decoding (the entries before it are kept). Never
 * reads outside [@buf, @buf + @len); values point into @buf. */
void threadctx__decode_attrs(const void *buf, size_t len, size_t nkeys,
			     struct threadctx_attrs *out);

#endif
