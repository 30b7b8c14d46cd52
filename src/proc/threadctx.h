/* threadctx.h - where a process keeps its OpenTelemetry thread context (OTEP
 * 4947): the offset from a thread's thread pointer of the TLS variable
 * `otel_thread_ctx_v1`, a pointer to the thread's context record.
 *
 * Handled: the variable defined in the process's executable (the main
 * program's own TLS block, module 1), x86_64 TLS variant II: the block ends
 * at the thread pointer, so the variable is at
 *   tp - (round_up(p_memsz - firstbyte, p_align) + firstbyte) + st_value
 * (firstbyte = -(p_vaddr mod p_align) mod p_align, 0 for every linker we
 * know; glibc's _dl_determine_tlsoffset() places the first module so, musl
 * the same when p_vaddr is aligned). Whatever access model the writer compiled with
 * (TLSDESC, GNU general dynamic, initial-exec, local-exec), the executable's
 * block is static TLS at that fixed offset, so all of them read the same.
 * NOT handled: the variable defined in a shared library. Its block offset
 * (initial-exec/static TLS of libraries loaded at start) is chosen by the
 * dynamic loader at run time, and a dlopen()ed library's block lives in the
 * dynamic thread vector (dtv), allocated lazily per thread; both need the
 * loader's private layout (glibc's link_map/_rtld_global offsets), which
 * this reader does not decode. Such processes get no thread context.
 *
 * The executable is read with pread (headers, section headers, one symbol
 * table and its strings, each size-capped); everything in it is untrusted.
 */
#ifndef PROFCAP_THREADCTX_H
#define PROFCAP_THREADCTX_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define THREADCTX_SYMBOL "otel_thread_ctx_v1"
#define THREADCTX_RECORD_HEAD 28       /* trace id, span id, valid, flags, attrs size */
#define THREADCTX_MAX_SYMTAB (16u << 20) /* larger symbol tables are refused */

/* Offset (negative) from the thread pointer of `otel_thread_ctx_v1` in the
 * ELF file open at @fd (an x86_64 executable, PIE or not, static or not),
 * into *@off. Looks in .dynsym only (where the OTEP says it must be). 0, -ENOENT (no such STT_TLS symbol, or no PT_TLS), -ENOEXEC (not
 * a 64-bit little-endian x86_64 ELF, or malformed: sizes past the file, a
 * symbol outside the TLS segment), -EFBIG (symbol table over the cap), or
 * -errno of a read. */
int threadctx__elf_offset(int fd, __s64 *off);

/* threadctx__elf_offset() of the executable of process @pid, opened through
 * @proc_root/PID/exe (@proc_root NULL = "/proc"). Same returns, and -errno
 * of the open (-ENOENT: process gone). */
int threadctx__process_offset(const char *proc_root, int pid, __s64 *off);

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
