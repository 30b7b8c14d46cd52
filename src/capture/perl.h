/* perl.h - the Perl processes of the capture (main thread): found when
 * they are announced, handed to the BPF walker (sampler__set_perl()) and
 * to the namer of Perl frames (symbolize/perlframes.h), forgotten when
 * they exec() something else or exit. docs/perl.md.
 *
 * One registry per profcap process, made at the first announcement: the
 * session calls capture_perl__process() for each announced process and
 * ingest asks capture_perl__frames_of() for each record, so the session
 * and ingest carry no Perl state of their own.
 */
#ifndef PROFCAP_CAPTURE_PERL_H
#define PROFCAP_CAPTURE_PERL_H

struct perlframes;
struct procsnap;
struct sampler;

/* Perl processes kept at once (the BPF walker's own cap). */
#define CAPTURE_PERL_PROCS 4096
/* A Perl process whose interpreter is not constructed yet is looked at
 * again when its records come, at most every RETRY_NS for PENDING_NS. */
#define CAPTURE_PERL_RETRY_NS 50000000ll
#define CAPTURE_PERL_PENDING_NS 5000000000ll

/* Process @pid of sampler @smp (borrowed; a new sampler starts afresh) was
 * announced, or exec()ed (@snap: its snapshot, or NULL). 1 when it runs
 * Perl (now, or once its interpreter is up), 0 when not. */
int capture_perl__process(struct sampler *smp, int pid, const struct procsnap *snap);

/* The namer when process @pid runs Perl, NULL otherwise. A pending one
 * is looked at again first while @smp (ingest's, NULL once freed) is the
 * registry's sampler. */
struct perlframes *capture_perl__frames_of(struct sampler *smp, int pid);

/* Forget the processes that exited: at a window's edge, once their
 * records are ingested. */
void capture_perl__forget_gone(void);

/* -v: Perl processes found, walked, not walked; what the namer did. */
void capture_perl__log(void);

/* Free the registry (tests; end of the program). */
void capture_perl__release(void);

#endif
