/* symbolizer.h - turn sampled addresses into mappings and function names.
 *
 * The glue between the capture loop and procmaps/elfsym/kallsyms. It keeps a
 * snapshot of each process it was told about (executable mappings, exe path,
 * comm, cmdline) and a per-FILE cache of parsed ELF files keyed by
 * (device, inode) and by GNU build-id, so N processes of one binary parse it
 * once. Kernel addresses resolve through /proc/kallsyms, in batches (see
 * symbolizer__resolve_kernel()). JIT code in
 * anonymous memory is named by the process's perf map (perfmap.h), read
 * through its own root under its namespace pid, with the runtime's frame
 * type (v8js, jvm, cpython, dotnet, beam).
 *
 * Everything handed out (mapping descs, function names, process descs) is
 * owned by the symbolizer and stays valid until symbolizer__free(), except
 * what belongs to a process dropped with symbolizer__forget_process() and
 * kernel function names (valid until the next
 * symbolizer__resolve_kernel_batch(); the profile copies names). A maps
 * refresh never frees a mapping desc: unchanged mappings keep their desc,
 * replaced ones are retired but kept.
 *
 * Bounded: SYMBOLIZER_MAX_PROCESSES processes (including ones found gone),
 * SYMBOLIZER_MAX_FILES distinct files, SYMBOLIZER_MAX_PROC_MAPS mapping descs
 * per process over its lifetime, SYMBOLIZER_KERNEL_CACHE kernel symbols
 * remembered. Not thread-safe.
 */
#ifndef PROFCAP_SYMBOLIZER_H
#define PROFCAP_SYMBOLIZER_H

#include <stdbool.h>
#include <linux/types.h>

#include "model/profile.h"

#define SYMBOLIZER_MAX_PROCESSES (1u << 16)
#define SYMBOLIZER_MAX_FILES (1u << 14)
#define SYMBOLIZER_MAX_PROC_MAPS (1u << 16)
#define SYMBOLIZER_MAX_CMDLINE 4096
/* A resolve that misses every mapping re-reads maps at most this often. */
#define SYMBOLIZER_REFRESH_NS 1000000000ull
/* A snapshot (symbolizer__add_process_snap()) read this recently stands
 * for /proc: its maps, executable and command line are not read again
 * (the sampler's builder uses it alike). */
#define SYMBOLIZER_SNAP_FRESH_NS 2000000ull
/* A parsed file no process maps is freed after this long unused. */
#define SYMBOLIZER_FILE_GRACE_NS 30000000000ull
/* A JIT address its perf map does not name re-reads the map (only what was
 * appended) at most this often. */
#define SYMBOLIZER_PERFMAP_REFRESH_NS 250000000ull
/* Process-context updates read per process over its lifetime (each one kept
 * until the process is dropped, see the top of this file). */
#define SYMBOLIZER_MAX_CTX_UPDATES 16
/* Kernel addresses one pass over /proc/kallsyms names at most, and kernel
 * symbol extents (or ranges without a symbol) kept between passes. */
#define SYMBOLIZER_KERNEL_BATCH 8192u
#define SYMBOLIZER_KERNEL_CACHE 16384u
/* DWARF lookups symbolizer__resolve_user_batched() queues at most. */
#define SYMBOLIZER_LINES_BATCH (1u << 16)
/* Decompressed DWARF (dwarf_lines__held()) kept begun between lines
 * batches, at most: libc's debug file and a few small ones. */
#define SYMBOLIZER_DWARF_KEEP (16u << 20)
/* ... and for this long after the batch that last looked up in them: a
 * capture passes every 10 s, an agent window is 60 s by default (its
 * DWARF would be held between windows for one begin a minute). */
#define SYMBOLIZER_DWARF_KEEP_NS (30ull * 1000000000ull)

struct symbolizer;
struct clock;
struct procmaps;

struct symbolizer_stats {
	__u64 processes;	 /* processes added and found alive */
	__u64 elf_files_parsed;	 /* full ELF parses (the vdso included) */
	__u64 elf_cache_hits;	 /* mappings served by an already parsed file */
	__u64 elf_errors;	 /* files that could not be opened or parsed */
	__u64 maps_refreshes;	 /* maps re-reads of known processes */
	__u64 maps_from_source;	 /* mappings from the maps source, not /proc */
	__u64 ctx_looks;	 /* maps files read for a process context only */
	__u64 execs;		 /* ... that found another program (exec): described again */
	__u64 snapshots_used;	 /* processes gone, described from their early snapshot */
	__u64 snapshots_fresh;	 /* processes described from a snapshot just read */
	__u64 elf_files_evicted; /* parsed files freed: no known process maps them */
	__u64 perfmaps;		 /* processes with a perf map found */
	__u64 perfmap_reads;	 /* perf map reads (each reads only new lines) */
	__u64 perfmap_errors;	 /* perf maps refused (symlink, owner, type) or unreadable */
	__u64 dwarf_files;	 /* files whose DWARF gives lines and inlined frames */
	__u64 debug_files;	 /* files named from a separate debug file */
	__u64 debug_embedded;	 /* files named from MiniDebugInfo or Go's pclntab */
	__u64 process_contexts;	 /* OpenTelemetry process contexts read (updates included) */
	__u64 process_context_errors; /* contexts refused as malformed or unreadable */
	__u64 kernel_passes;	 /* kernel naming passes */
	__u64 kernel_named;	 /* ... answered by the kernel namer (the rest: /proc/kallsyms) */
	__u64 dwarf_releases;	 /* DWARF freed by symbolizer__release_dwarf() */
	__u64 dwarf_kept;	 /* ... kept begun after a lines batch for the next */
};

struct debuginfod;

/* New symbolizer reading processes under @proc_root ("/proc"; tests pass a
 * fake directory laid out like /proc). Kernel build-ids are read from
 * "@proc_root/../sys". @proc_root is copied. NULL on allocation failure. */
struct symbolizer *symbolizer__new(const char *proc_root);

/* Free @s and everything it handed out. Accepts NULL. */
void symbolizer__free(struct symbolizer *s);

/* Enable kernel symbols from @proc_root/kallsyms (once; later calls return
 * 0): checks that it shows addresses and reads the kernel's build-id; the
 * symbols themselves are read by symbolizer__resolve_kernel_batch().
 * Returns 0, -EPERM when kernel.kptr_restrict hides the addresses (the
 * caller should tell the operator to run as root or set
 * kernel.kptr_restrict=0), or another -errno. Without it kernel frames get
 * no names. */
int symbolizer__load_kernel(struct symbolizer *s);

/* A kernel namer: names @n kernel addresses (ascending) as the kernel's
 * "%pS" prints them into @names[i] (borrowed until its next call) and gives
 * the core text range [*@stext, *@etext) (0 when unknown). 0 or -errno. */
typedef int (*symbolizer_kname_fn)(void *ctx, const __u64 *addrs, size_t n, const char **names,
				   __u64 *stext, __u64 *etext);

/* Name kernel addresses with @fn (@ctx passed along, both borrowed for the
 * symbolizer's life; NULL: /proc/kallsyms only) before reading
 * /proc/kallsyms: a pass falls back to the file when @fn fails or leaves an
 * address unnamed (an ftrace trampoline, say). */
void symbolizer__set_kernel_namer(struct symbolizer *s, symbolizer_kname_fn fn, void *ctx);

/* Ask @src (copied; its function and context borrowed for the
 * symbolizer's life; NULL: none) for a process's mappings before reading
 * its maps file (proc/procmaps.h): those of a process gone since are
 * still there, and one that mapped more since its snapshot costs no read
 * of /proc. */
struct procmaps_source;
void symbolizer__set_maps_source(struct symbolizer *s, const struct procmaps_source *src);

/* Snapshot process @pid now: executable mappings, exe path, comm, cmdline,
 * and its perf map PROC/PID/root/tmp/perf-<NSpid>.map when there is one
 * (see perfmap__open() for what is refused; a refused map is warned about
 * once per process and otherwise ignored), and its OpenTelemetry process
 * context when maps show one (procctx.h): its resource attributes become
 * the desc's attrs; one that fails to read is left out and counted.
 * Each mapped file is opened through PROC/PID/map_files/<start>-<end> (works
 * for deleted files and other mount namespaces), falling back to
 * PROC/PID/root/<path> for files not marked deleted, and parsed into the
 * file cache unless a file with the same (dev, inode) or build-id is there.
 * A second call only refreshes the maps (e.g. after dlopen) and reads new
 * perf map lines. pid 0 (idle) gets a "swapper" desc and no mappings.
 * Returns 0, -ESRCH if the process is gone (remembered, so resolves do not
 * retry it), -E2BIG at a cap, -ENOMEM or -errno. When only the maps are
 * unreadable (e.g. -EACCES without root) the process is still added, with
 * its metadata and no mappings, and that error is returned. Files that fail
 * to open/parse only count in elf_errors. */
int symbolizer__add_process(struct symbolizer *s, int pid);

struct procsnap;

/* symbolizer__add_process() with the process's early snapshot @snap
 * (proc/procsnap.h; borrowed for the call, may be NULL): where /proc no
 * longer answers (the process exited after its snapshot), or when @snap is
 * younger than SYMBOLIZER_SNAP_FRESH_NS, its mappings, executable, name
 * and command line come from @snap, and its files are opened by path on
 * the host when they are the very files it mapped. */
int symbolizer__add_process_snap(struct symbolizer *s, int pid, const struct procsnap *snap);

/* Drop process @pid and its mapping descs (their pointers become invalid;
 * cached files stay). For long-running captures. No-op if unknown. */
void symbolizer__forget_process(struct symbolizer *s, int pid);

/* Forget every process whose PROC/PID directory is gone (as
 * symbolizer__forget_process()), then free the parsed files no remaining
 * process has mapped for SYMBOLIZER_FILE_GRACE_NS: what a long-running capture calls between
 * windows so memory stays flat under process churn. Returns how many processes. */
size_t symbolizer__forget_gone(struct symbolizer *s);

/* Re-check the publish timestamp of every known process that has an
 * OpenTelemetry process context (one 32-byte read each) and re-read the
 * ones that changed, so the next profile gets the new attributes. Processes
 * without a context cost nothing. What a capture calls between windows. */
void symbolizer__refresh_contexts(struct symbolizer *s);

/* The same for process @pid only (e.g. when a thread-context record names a
 * key index its key map does not have yet: the OTEP says to refresh). */
void symbolizer__refresh_context(struct symbolizer *s, int pid);

/* Processes described from the kernel's records (executable mappings
 * only) have their maps file read once for an OpenTelemetry process
 * context mapping, SYMBOLIZER_CTX_LOOK_NS after it is described, when still alive: a
 * service started during a capture gets its context, a compiler that lives
 * 100 ms costs no read. What a capture calls as it drains. */
#define SYMBOLIZER_CTX_LOOK_NS 1000000000ull
#define SYMBOLIZER_CTX_LOOKS 4096u
void symbolizer__check_contexts(struct symbolizer *s);

/* The thread-context key map (OTEP 4947, threadlocal.attribute_key_map) of
 * process @pid's current process context: *@keys[i] names key index i
 * (NULL: unusable entry). Returns the number of keys, 0 (and *@keys NULL)
 * when the process has no context or no key map. Borrowed: valid until
 * @pid is forgotten. */
size_t symbolizer__thread_keys(const struct symbolizer *s, int pid, const char *const **keys);

/* True when process @pid's process context (read when it was added, or
 * refreshed since) says it publishes OTEP 4947 thread context: where the
 * thread-context variable may be is then worth looking up in its
 * libraries. */
bool symbolizer__thread_ctx(const struct symbolizer *s, int pid);

/* Lines and inlined frames from DWARF (dwarf.h) for files parsed from now
 * on: on by default. A resolved user frame then carries out->lines. */
void symbolizer__set_lines(struct symbolizer *s, bool on);

/* Free the DWARF of every file (dwarf_lines__release(): the decompressed
 * debug sections, 8 MB for libc's debug file), keeping the lines already
 * found, but of the files the last symbolizer__resolve_lines_batch() kept
 * when it ran less than SYMBOLIZER_DWARF_KEEP_NS ago (by the symbolizer's
 * clock): what a capture calls after each drain, so DWARF no recent batch
 * needed is not resident in between. A later address the cached lines do
 * not cover begins that file's DWARF again. */
void symbolizer__release_dwarf(struct symbolizer *s);

/* symbolizer__release_dwarf() for every file, kept ones included. */
void symbolizer__release_all_dwarf(struct symbolizer *s);

/* Change SYMBOLIZER_FILE_GRACE_NS (tests use 0: free at once). */
void symbolizer__set_file_grace(struct symbolizer *s, __u64 ns);

/* Read time from @c (borrowed; it must outlive @s) instead of the system
 * clock: the refresh rate limits and the file grace then follow it, so tests
 * step time instead of sleeping. NULL restores the system clock. */
void symbolizer__set_clock(struct symbolizer *s, const struct clock *c);

/* Fill *@out for user address @addr of @pid (type PROFILE_FRAME_NATIVE).
 * An address in anonymous executable memory ([anon], [anon:x], /memfd:) or
 * in no mapping is looked up in the process's perf map; a hit sets the
 * function and type_name (the runtime's frame type, NULL = native). A miss
 * re-reads the lines appended to the map, at most once per
 * SYMBOLIZER_PERFMAP_REFRESH_NS per process.
 * @leaf=false means a return address: the lookup uses @addr - 1, while
 * out->address stays @addr. Never fails: unknown parts are left NULL. A pid
 * never added is added first. If @addr is in no known mapping, the maps are
 * re-read (at most once per SYMBOLIZER_REFRESH_NS per process) and the lookup
 * retried. Pointers in *@out are borrowed (see the top of this file). */
void symbolizer__resolve_user(struct symbolizer *s, int pid, __u64 addr, bool leaf,
			      struct profile_frame *out);

/* Fill *@out for kernel address @addr (type PROFILE_FRAME_KERNEL): function
 * from kallsyms, mapping "[kernel.kallsyms]" for the core kernel or "[name]"
 * for a module. Answers from the symbols found by earlier passes; an
 * address none of them covers is queued for the next
 * symbolizer__resolve_kernel_batch() and false returned (*@out then has the
 * address and type only): resolve it again after the pass. True when *@out
 * is final: named, known to be in no symbol, kernel symbols not loaded, or
 * the queue full (unnamed: see symbolizer__kernel_queue_room()). */
bool symbolizer__resolve_kernel(struct symbolizer *s, __u64 addr, struct profile_frame *out);

/* Name the queued kernel addresses in one pass over @proc_root/kallsyms
 * (read 64 KiB at a time: memory follows the addresses, not the kernel)
 * and remember their symbols, so symbolizer__resolve_kernel() answers for
 * them (and for any address in those symbols) until at least the next
 * pass. Kernel names handed out before are invalid from here on. No pass
 * when nothing is queued. 0 or -errno (the queue is dropped either way;
 * those addresses are asked again when resolved again). */
int symbolizer__resolve_kernel_batch(struct symbolizer *s);

/* Free slots in the kernel queue: a caller that resolves more frames than
 * that passes first (SIZE_MAX when kernel symbols are not loaded). */
size_t symbolizer__kernel_queue_room(const struct symbolizer *s);

/* symbolizer__resolve_user() for a caller that resolves in batches (one
 * drain): DWARF lines come only from what earlier lookups cached; an
 * address whose lines are not known yet is queued for
 * symbolizer__resolve_lines_batch() and false returned (*@out then has all
 * but its lines: resolve it again after the batch). True when *@out is
 * final (also when the queue is full: the lines are then looked up at
 * once). Files begin their DWARF only in the batch, one after another. */
bool symbolizer__resolve_user_batched(struct symbolizer *s, int pid, __u64 addr, bool leaf,
				      struct profile_frame *out);

/* Look up the queued DWARF lines file by file. The DWARF of files looked
 * up in stays begun for the next batch (a compile loop's libc is needed at
 * every batch, and beginning it again inflates 8.4 MB of debug sections)
 * while the kept ones hold at most SYMBOLIZER_DWARF_KEEP bytes
 * (dwarf_lines__held()); past that, a file's DWARF is freed once its
 * addresses are done, before the next file's begins. DWARF kept from the
 * previous batch that this one does not need is freed first. The lines
 * stay cached for the resolves that follow. */
void symbolizer__resolve_lines_batch(struct symbolizer *s);

/* Process metadata captured by symbolizer__add_process(); NULL if @pid was
 * never added or was gone when added. Borrowed. */
const struct profile_process_desc *symbolizer__process(const struct symbolizer *s, int pid);

/* Was @pid added (symbolizer__add_process*()), whether or not it was
 * there then? A process found gone stays tried until it is forgotten or
 * added again (its next exec notice): callers that add on demand ask this
 * first, so a gone process is not looked for in /proc once per record. */
bool symbolizer__tried(const struct symbolizer *s, int pid);

/* The kernel mapping desc, or NULL before the first pass of
 * symbolizer__resolve_kernel_batch(). */
const struct profile_mapping_desc *symbolizer__kernel_mapping(const struct symbolizer *s);

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st);

/* Also look for debug files under @dir (a host path, copied): build-id
 * files DIR/.build-id/xx/rest.debug and debuglink files DIR/<binary dir>/
 * NAME, before the process's own /usr/lib/debug. Files without a .symtab
 * get their names from the first debug file found (see debugfile.h).
 * 0, -E2BIG (DEBUGFILE_MAX_DIRS reached) or -ENOMEM. */
int symbolizer__add_debug_dir(struct symbolizer *s, const char *dir);

/* Download debug files missing locally from @d (borrowed; NULL = never).
 * Downloads block the caller: a capture sets it only while it is not
 * sampling (see debuginfod.h). */
void symbolizer__set_debuginfod(struct symbolizer *s, struct debuginfod *d);

#endif
