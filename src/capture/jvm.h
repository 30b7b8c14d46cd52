/* jvm.h - the HotSpot JVMs of a session (main thread): found when they are
 * announced (or named with -p), handed to the BPF walker
 * (sampler__set_jvm()) and to the namer of Java frames
 * (symbolize/jvmframes.h), forgotten when they exec() something else or
 * exit. A JVM still starting (libjvm not mapped or not initialised yet) is
 * looked at again when its samples come, a bounded number of times.
 * docs/jvm.md.
 */
#ifndef PROFCAP_CAPTURE_JVM_H
#define PROFCAP_CAPTURE_JVM_H

#include <linux/types.h>

struct capture_jvm;
struct jvmframes;
struct procsnap;
struct sampler;
struct sampler_record;

#define CAPTURE_JVM_PROCS 1024	       /* JVMs a session keeps at once (the BPF walker's cap) */
#define CAPTURE_JVM_PENDING 64	       /* starting JVMs looked at again, at once */
#define CAPTURE_JVM_RETRY_NS 200000000 /* between two looks at a starting JVM */
#define CAPTURE_JVM_TRIES 150	       /* looks at a starting JVM before giving up */

/* For the sessions of sampler @smp (borrowed). NULL on ENOMEM. */
struct capture_jvm *capture_jvm__new(struct sampler *smp);
void capture_jvm__free(struct capture_jvm *cj);

/* The frame namer, for ingest (NULL with @cj NULL). */
struct jvmframes *capture_jvm__frames(struct capture_jvm *cj);

/* Process @pid was announced, or exec()ed (@snap: its snapshot, or NULL).
 * 1 when it runs HotSpot (now), 0 when not (yet). */
int capture_jvm__process(struct capture_jvm *cj, int pid, const struct procsnap *snap);

/* A drained record: a sample of a starting JVM looks at it again (at most
 * once per CAPTURE_JVM_RETRY_NS). */
void capture_jvm__record(struct capture_jvm *cj, const struct sampler_record *r);

/* Forget the JVMs that have exited (after their last records). */
void capture_jvm__forget_gone(struct capture_jvm *cj);

/* -v: JVMs found, walked, not walked; what the namer did. */
void capture_jvm__log(const struct capture_jvm *cj);

#endif
