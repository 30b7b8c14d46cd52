/* container.h - containers as the kernel shows them to a profiler.
 *
 * A container is a cgroup: its ID is the 64-hex-digit name that Docker,
 * containerd, CRI-O and Podman give to the process's cgroup directory
 * ("/system.slice/docker-<id>.scope", "/kubepods/.../cri-containerd-<id>.scope",
 * "/machine.slice/libpod-<id>.scope/container", "/docker/<id>"). This module
 * reads those paths from PROC/PID/cgroup, finds a container's cgroup v2
 * directory from an ID prefix, and locates the cgroup v2 mount. Reads only
 * under the proc root it is given, so tests run against a fake /proc.
 */
#ifndef PROFCAP_CONTAINER_H
#define PROFCAP_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

#define CONTAINER_ID_LEN 64 /* hex digits; buffers need one more byte */

/* Copy into @id (@len >= CONTAINER_ID_LEN + 1) the container ID named by the
 * cgroup path @cgpath: the last path component that is 64 hex digits once a
 * runtime prefix ("docker-", "cri-containerd-", "crio-", "libpod-") and a
 * ".scope" suffix are removed (conmon scopes are not containers). 0, or
 * -ENOENT when the path names no container, -EINVAL on bad arguments. */
int container__id_from_path(const char *cgpath, char *id, size_t len);

/* The cgroup v2 path of process @pid ("0::<path>" in @proc_root/PID/cgroup)
 * into @path. 0, -ENOENT without a v2 line (cgroup v1 only), -ENAMETOOLONG,
 * or -errno of the read (-ENOENT: no such process). */
int container__cgroup_of(const char *proc_root, int pid, char *path, size_t len);

/* Container ID of process @pid into @id (as container__id_from_path()),
 * looking at every hierarchy of its cgroup file (v1 systems name containers
 * only there). 0 or -ENOENT (not in a container / no such process). */
int container__id_of(const char *proc_root, int pid, char *id, size_t len);

/* container__id_of(), telling apart a process gone (-ESRCH: its cgroup
 * file unreadable; -ENOMEM) from one in no container (-ENOENT). *@v2_only
 * is set when the file was read and has the cgroup v2 line alone: then
 * the container follows from the process's v2 cgroup, and every process
 * of that cgroup is in the same one. */
int container__id_in(const char *proc_root, int pid, char *id, size_t len, bool *v2_only);

/* Scan the processes under @proc_root for the container whose ID starts with
 * @prefix (at least 4 hex digits; a full ID also matches). On success *@id
 * gets the full ID, *@cgpath the cgroup v2 path of one of its processes
 * (-ENOENT there is not an error: *@cgpath is then "") and *@pid that
 * process. Returns 0, -EINVAL (prefix too short or not hex), -ENOENT (no
 * such container), -EEXIST (the prefix matches several containers; @id gets
 * one of them). */
int container__find(const char *proc_root, const char *prefix, char *id, size_t idlen, char *cgpath,
		    size_t cglen, int *pid);

/* Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
 * /sys/fs/cgroup/unified on hybrid systems), from @proc_root/self/mountinfo.
 * 0, -ENOENT (no cgroup2 mount), -ENAMETOOLONG or -errno. */
int container__cgroup2_mount(const char *proc_root, char *out, size_t len);

#endif
