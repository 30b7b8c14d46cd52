/* debuginfod.h - download missing debug files from debuginfod servers.
 *
 * Opt-in: only when DEBUGINFOD_URLS is set (space-separated server URLs),
 * as for elfutils' client; an air-gapped host with it unset never touches
 * the network. A debug file is fetched by GNU build-id from
 * URL/buildid/<hex>/debuginfo with the linked libcurl (http/https only, no
 * redirects to other protocols) into the client cache shared with elfutils'
 * tools: $DEBUGINFOD_CACHE_PATH, else $HOME/.cache/debuginfod_client, as
 * <cache>/<hex>/debuginfo (written to a temporary file, renamed when
 * complete). A cached file is used without asking the servers again.
 * Bounded: connect timeout 5 s, DEBUGINFOD_TIMEOUT (default 90 s) without
 * progress, 10 min in all, and DEBUGINFOD_MAXSIZE bytes (default 1 GiB).
 * A download whose build-id is not the requested one is deleted and not
 * used. Each build-id is tried once per run. Downloads block the caller:
 * never call this on the sampling path.
 */
#ifndef PROFCAP_DEBUGINFOD_H
#define PROFCAP_DEBUGINFOD_H

struct debuginfod;
struct env;

/* A client configured from the environment @e (util/env.h), or NULL when
 * DEBUGINFOD_URLS is unset or empty (or on allocation failure). Owned by
 * the caller. */
struct debuginfod *debuginfod__new_from_env(const struct env *e);

/* Free @d. Accepts NULL. */
void debuginfod__free(struct debuginfod *d);

/* Open the debug file with GNU build-id @build_id (hex) from the cache,
 * downloading it first when missing. fd (the caller's) or -ENOENT (no
 * server has it, or it was already tried), -EINVAL (bad build-id), -errno.
 * A failure is warned about once, with the server's answer. */
int debuginfod__open(struct debuginfod *d, const char *build_id);

#endif
