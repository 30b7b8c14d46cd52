/* fileidx.h - profcap's own copy of the BPF walker's file index.
 *
 * The BPF walker finds a file's unwind table by (device, inode) in
 * unwind_file_idx, and a table's rows by slot in unwind_files. Two threads
 * look these up per sample in user space: the notice thread (is a new
 * process's program known?) and late walking (every file a walk enters).
 * A bpf() lookup is a system call, dear on a VM whose system calls trap to
 * the host, and a compile loop makes thousands. The table builder
 * writes this copy where it writes the maps, and readers take it from
 * here, with no system call.
 *
 * Thread-safe: one writer at a time (the builder), any number of readers.
 * Bounded: @nslots tables (the slots of unwind_files), one file each.
 */
#ifndef PROFCAP_COLLECT_FILEIDX_H
#define PROFCAP_COLLECT_FILEIDX_H

#include <linux/types.h>

#include "unwind.h"

struct fileidx;

/* New empty index of @nslots table slots (> 0). NULL on allocation failure
 * or a bad size. */
struct fileidx *fileidx__new(__u32 nslots);

/* Free @x. Accepts NULL. */
void fileidx__free(struct fileidx *x);

/* File @k's table is in slot @f->slot (@f copied): replaces what that slot
 * held, and where @k pointed before. 0, or -EINVAL for a slot out of
 * range. */
int fileidx__set(struct fileidx *x, const struct unwind_file_key *k, const struct unwind_file *f);

/* The map in slot @slot now has id @id (0: none). Out of range: ignored. */
void fileidx__set_id(struct fileidx *x, __u32 slot, __u32 id);

/* Slot @slot emptied: its file and map id forgotten. The file it held goes
 * to *@key (NULL: not wanted): 0, or -ENOENT when it held none (or @slot
 * is out of range). */
int fileidx__drop(struct fileidx *x, __u32 slot, struct unwind_file_key *key);

/* The table of file @k into *@out: 0, or -ENOENT when none. */
int fileidx__find(struct fileidx *x, const struct unwind_file_key *k, struct unwind_file *out);

/* The id of the map in slot @slot, 0 when none (or out of range). */
__u32 fileidx__id(struct fileidx *x, __u32 slot);

#endif
