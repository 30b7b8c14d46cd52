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

#endif
