/* ruby.h - the CRuby processes of a session: found when they are announced
 * (or named with -p), handed to the BPF walker (sampler__set_ruby()) and to
 * the namer of Ruby frames (symbolize/rubyframes.h), forgotten when they
 * exec() something else or exit. docs/ruby.md.
 */
#ifndef PROFCAP_CAPTURE_RUBY_H
#define PROFCAP_CAPTURE_RUBY_H

#include <linux/types.h>

struct capture_ruby;
struct procsnap;
struct rubyframes;
struct sampler;

/* Ruby processes a session keeps at once (the BPF walker's own cap). */
#define CAPTURE_RUBY_PROCS 4096

/* For the sessions of sampler @smp (borrowed). NULL on ENOMEM. */
struct capture_ruby *capture_ruby__new(struct sampler *smp);
void capture_ruby__free(struct capture_ruby *cr);

/* The frame namer, for ingest (NULL with @cr NULL). */
struct rubyframes *capture_ruby__frames(struct capture_ruby *cr);

/* Process @pid was announced, or exec()ed (@snap: its snapshot, or NULL).
 * 1 when it runs CRuby (now), 0 when not. */
int capture_ruby__process(struct capture_ruby *cr, int pid, const struct procsnap *snap);

/* Look again at processes that map a ruby* file but showed no VM, or one
 * not readable yet (a VM starting), for 2 s after their notice. Cheap when
 * there are none; also run at each capture_ruby__process(). */
void capture_ruby__retry(struct capture_ruby *cr);

/* Forget the Ruby processes that have exited (after their last records). */
void capture_ruby__forget_gone(struct capture_ruby *cr);

/* -v: Ruby processes found, walked, not walked; what the namer did. */
void capture_ruby__log(const struct capture_ruby *cr);

#endif
