/* perf_data_unwind.h - unwind rows for the perf.data reader's dwarf-mode
 * samples, read from the mapped files on this machine: each file (by path)
 * is opened once, used only when its GNU build-id equals the recorded one
 * (when the recording has one), and its .eh_frame compiled with
 * collect/cfi.h. At most PERF_DATA_UNWIND_FILES files and
 * PERF_DATA_UNWIND_ROWS rows are kept; past that, frame pointers.
 */
#ifndef PROFCAP_PERF_DATA_UNWIND_H
#define PROFCAP_PERF_DATA_UNWIND_H

#include "formats/perf_data.h"

#define PERF_DATA_UNWIND_FILES 1024
#define PERF_DATA_UNWIND_ROWS (16u << 20)
#define PERF_DATA_UNWIND_FILE_MAX (1ull << 30) /* larger files are not read */

struct perf_data_unwinder;

/* New empty cache, NULL on allocation failure. The build-id of a file the
 * recording gave none is read from the file when it was last changed no
 * later than @not_after (seconds since the epoch: when the recording
 * ended; 0 = never): a file replaced since would give wrong names. */
struct perf_data_unwinder *perf_data_unwinder__new(__s64 not_after);

/* Free @u and its tables. Accepts NULL. */
void perf_data_unwinder__free(struct perf_data_unwinder *u);

/* The callbacks for perf_data__parse(), bound to @u. */
struct perf_data_unwind_ops perf_data_unwinder__ops(struct perf_data_unwinder *u);

/* Files whose tables were read, and those that could not be used. */
void perf_data_unwinder__stats(const struct perf_data_unwinder *u, size_t *files,
			       size_t *unusable);

#endif
