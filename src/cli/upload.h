/* upload.h - the `profcap upload` command: send captures written by
 * `capture` (with -o, or spooled after a failed export) to an OTLP endpoint,
 * with the same export flags and OTEL_* variables as `capture`.
 */
#ifndef PROFCAP_UPLOAD_H
#define PROFCAP_UPLOAD_H

#include <stddef.h>

/* Largest file `upload` reads. */
#define UPLOAD_MAX_BYTES (512UL << 20)

/* Check that @len bytes of @data are a well-formed OTLP ProfilesData: the
 * top level, every dictionary table entry and the resource / scope /
 * profile / sample messages must parse. Sets *@nprofiles (may be NULL).
 * Returns 0, or -EBADMSG with the reason in @why (@whylen bytes). Pure. */
int upload__check(const void *data, size_t len, size_t *nprofiles, char *why, size_t whylen);

/* Run `profcap upload FILE... [export flags] [--remove-sent] [-q] [-v]`;
 * @argv[0] is "upload". Returns the exit code: 0 every file delivered, 1 a
 * file was unreadable or not a capture, 2 bad usage or configuration, 3 a
 * delivery failed (the files stay in place). */
int upload__main(int argc, char **argv);

void upload__usage(void);

#endif
