/* speedscope.h - a profile as speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json): one "sampled"
 * profile per thread, its samples in time order, each a stack of indices
 * into the shared frame list from the root to the leaf.
 *
 * A sample's weight is the time to the thread's next sample, at most one
 * period (nanoseconds), so the time-order view places each sample where it
 * ran and the weights add up to the thread's CPU time; the last sample of
 * a thread weighs one period. Samples without times weigh value × period
 * and come first. Value types other than CPU (off-CPU) use their values as
 * weights, in their unit. Frames are the functions (inlined ones each a
 * frame) named as the flame graph names them, with their file and line.
 * Pure code.
 */
#ifndef PROFCAP_SPEEDSCOPE_H
#define PROFCAP_SPEEDSCOPE_H

#include "util/buf.h"

struct profile;

/* Threads (speedscope profiles) written at most; the rest are counted in
 * the file's name. */
#define SPEEDSCOPE_MAX_THREADS 4096u

/* Append value type 0 of @p to @out. On failure @out keeps its previous
 * length. 0, -E2BIG or -ENOMEM. */
int speedscope__encode(const struct profile *p, struct buf *out);

#endif
