/* delivery.h - where a finished capture goes, one policy for every output.
 *
 * `capture` and `agent` both hand each encoded capture (one per window) to
 * delivery__deliver(): the file (-o, the default name, or one file per
 * window in --output-dir, kept under --max-dir-size), then the OTLP
 * endpoint. A capture is never thrown away: when the export fails it is kept
 * in the file or the spool directory (for `profcap upload`), and when no
 * place the user asked for takes it, it is rescued to $TMPDIR. Every outcome
 * is counted (delivery__stats()).
 *
 * Outputs are opened by delivery__open() before sampling starts, so a bad
 * path or endpoint fails fast; stale temporary files of dead profcap
 * processes are removed there. Agent windows are exported on a worker
 * thread (windows keep their length while an endpoint is down); when its
 * queue is full a window is spooled at once. The export step is injectable
 * (delivery_opts.export_fn) for tests.
 */
#ifndef PROFCAP_DELIVERY_H
#define PROFCAP_DELIVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "export/exporter.h"
#include "export/otlp_config.h"
#include "formats/format.h"
#include "model/profile.h"
#include "util/buf.h"
#include "util/env.h"

/* Export @len bytes within @bound_ms (0: the configured deadline); 0 or
 * -errno with @r->error set. May run on the export thread. */
typedef int (*delivery_export_fn)(void *ctx, const void *data, size_t len, __u64 bound_ms,
				  struct export_result *r);

/* delivery__deliver() flags. */
enum {
	DELIVERY_LAST = 1,   /* the run's last capture */
	DELIVERY_URGENT = 2, /* stopping on a signal: spool first, bounded export */
};

/* How long the last capture's export may take when stopping on a signal
 * (a container's grace period is often 10 s). */
#define DELIVERY_LAST_EXPORT_MS 2000

struct delivery_opts {
	const char *output;	 /* -o FILE, or NULL */
	const char *output_dir;	 /* agent: one file per capture, or NULL */
	__u64 max_dir_bytes;	 /* with @output_dir: oldest files go beyond this */
	enum format format;	 /* of the files; exports are always OTLP */
	const struct otlp_flags *export; /* --endpoint & co (merged with OTEL_*) */
	const struct env *env;		 /* NULL: the process's environment */
	const char *host;		 /* for file names */
	bool per_window; /* agent: "wrote"/"delivered" lines at debug level, and
			  * exports on a worker thread */
	bool quiet;
	delivery_export_fn export_fn; /* NULL: the real exporter */
	void *export_ctx;
};

/* Where each capture went, counted since delivery__open(). */
struct delivery_stats {
	__u64 files;	     /* written where the user asked (-o, --output-dir) */
	__u64 exported;	     /* accepted by the endpoint */
	__u64 export_failed; /* exports that failed (the capture kept on disk) */
	__u64 spooled;	     /* saved in the spool directory */
	__u64 rescued;	     /* saved in $TMPDIR because nothing else took it */
	__u64 lost;	     /* saved nowhere */
	__u64 pending;	     /* waiting for the export thread */
};

struct delivery;

/* Check and open the outputs of @o (borrowed for the delivery's life): the
 * -o file (or the default name when not only exporting), --output-dir, the
 * endpoint and the spool directory. Returns 0 with *@out set, or the
 * process exit code (1 failure, 2 bad export configuration) after one
 * error line. */
int delivery__open(const struct delivery_opts *o, struct delivery **out);

/* Does the file output want a payload in a format other than OTLP? */
bool delivery__wants_file_format(const struct delivery *d);

/* Deliver one capture: @otlp (the OTLP encoding, always given) and @file
 * (the file payload in delivery_opts.format, or NULL to write @otlp);
 * @t_unix (ns) names window files. Returns the exit code: 0 delivered, 1 not
 * written where asked (rescued to $TMPDIR or lost), 3 written but not
 * exported (kept in an OTLP -o file or spooled). With the export thread
 * the export happens later (delivery__finish()). Logs each failure once
 * with what to do. */
int delivery__deliver(struct delivery *d, const struct buf *otlp, const struct buf *file,
		      __s64 t_unix, unsigned int flags);

/* delivery__deliver() for profile @p, encoded as OTLP in @otlp: the file
 * payload is encoded here in the file format (OTLP, with an error line,
 * when that encoding fails). */
int delivery__deliver_profile(struct delivery *d, const struct profile *p,
			      const struct buf *otlp, __s64 t_unix, unsigned int flags);

/* End of the run: wait for the export thread (agent) to send what waits.
 * @urgent (a signal): spool every waiting capture first and give the
 * endpoint DELIVERY_LAST_EXPORT_MS. Returns the exit code of the last
 * capture's export (0, 3 kept on disk, 1 rescued or lost); 0 without an
 * export thread. */
int delivery__finish(struct delivery *d, bool urgent);

/* SIGHUP: re-create --output-dir if it was removed. */
void delivery__reopen(struct delivery *d);

/* A snapshot of the counters (the export thread updates them). */
void delivery__stats(struct delivery *d, struct delivery_stats *st);

/* Did delivery__finish() leave the export thread inside an export (the
 * endpoint did not answer in time)? The process must then end with
 * _exit(): exit() would run the TLS library's clean-up under that thread. */
bool delivery__worker_busy(const struct delivery *d);

/* Free @d; an undelivered -o file leaves no partial output. Accepts NULL. */
void delivery__free(struct delivery *d);

#endif
