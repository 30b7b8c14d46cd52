// SPDX-License-Identifier: GPL-2.0
/* jvm.bpf.c - the HotSpot walker's maps and globals. The walk itself is
 * inline in jvm.bpf.h (it runs inside unwind_step(), whose callers have no
 * stack left for another call): one Java frame per jvm_step(), as
 * docs/jvm.md "Per Java frame" says (x86-64).
 *
 * - A pc in the template interpreter: the frame is rbp-based; its Method*
 *   and bcp lie in slots below fp, the caller's pc, sender sp and fp at
 *   fp + 8, fp - 8 and fp.
 * - A pc in another blob of a code heap: the blob's start is found with
 *   the heap's segment map (bounded hops back), its head gives the frame
 *   size in words; the caller's pc and fp are the two words below the
 *   caller's sp. A leaf before its frame is complete takes its return
 *   address from the top of the stack.
 * - The call stub's return address: the last Java frame; the call stub's
 *   own rbp frame leads back into libjvm, where the native walk goes on.
 * Only values are recorded and user space checks each object before it
 * names it; nothing is written to the process.
 */
#include "jvm.bpf.h"

const volatile __u32 want_jvm = 0;
__u32 jvm_nprocs = 0;
const volatile __u32 jvm_slot_key[SCRATCH_SLOTS] = {SCRATCH_SAMPLE, SCRATCH_OFFCPU, SCRATCH_MEMORY};

struct jvm_procs_map jvm_procs SEC(".maps");
struct jvm_scratch_map jvm_scratch SEC(".maps");
