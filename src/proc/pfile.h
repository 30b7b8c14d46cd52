/* pfile.h - the one way profcap (often root) opens and reads files of the
 * processes it profiles: their binaries, libraries and perf maps.
 *
 * Those files belong to whoever controls the profiled process, possibly a
 * container. Opening: a mapped file through PROC/PID/map_files (the very
 * file mapped), else its path resolved with openat2(RESOLVE_IN_ROOT) under
 * PROC/PID/root, so absolute symlinks stay inside the process's root; the
 * last component is never a symlink. Files are first opened O_PATH and only
 * reopened for reading when they are regular files (a FIFO or device is
 * never opened for reading: no hang, no side effects), and, for a mapping,
 * when device and inode are those /proc/PID/maps gives. Reading is pread
 * based, never mmap: a file truncated meanwhile gives a short read (an
 * error), not SIGBUS.
 */
#ifndef PROFCAP_PFILE_H
#define PROFCAP_PFILE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <linux/types.h>

struct procmaps_entry;

/* Open regular file @path (absolute or relative to @root; "tmp/x" and
 * "/tmp/x" are the same) inside directory @root, typically "/proc/PID/root"
 * (whose magic link is followed on purpose): symlinks are resolved inside
 * @root, magic links and a symlink as last component are refused. Where
 * openat2 is missing or filtered, each component is walked without
 * following any symlink. *@fd gets a read-only O_CLOEXEC|O_NONBLOCK
 * descriptor owned by the caller; @st (may be NULL) the file's stat.
 * 0, -EINVAL when not a regular file, -ELOOP on a refused link, or -errno. */
int pfile__open_in_root(const char *root, const char *path, int *fd, struct stat *st);

/* As pfile__open_in_root(), but a symlink as last component is followed
 * (resolved inside @root too): for debug files, which distributions reach
 * through .build-id/xx/yyyy.debug symlinks. */
int pfile__open_in_root_follow(const char *root, const char *path, int *fd, struct stat *st);

/* Open the file of mapping @e by its path in profcap's own root, only when
 * it is the very file (device and inode): for a process that has exited,
 * whose /proc/PID is gone. Same returns as pfile__open_mapped(), -ESTALE
 * when the path now names another file. */
int pfile__open_host(const struct procmaps_entry *e, int *fd);

/* Open the file behind mapping @e of process @pid under @proc_root: through
 * PROC/PID/map_files/START-END, else (no access to map_files) @e's path
 * inside PROC/PID/root as pfile__open_in_root() does. The file must be
 * regular and have @e's device and inode; on overlayfs, where maps shows
 * the underlying file, a path-opened file is accepted on its size.
 * *@fd as pfile__open_in_root(). 0, -ENOENT (anonymous or deleted with no
 * map_files access), -ESTALE (another file has the path now), -EINVAL (not
 * a regular file), or -errno. */
int pfile__open_mapped(const char *proc_root, int pid, const struct procmaps_entry *e, int *fd);

/* Read exactly @len bytes at @off (retrying short reads and EINTR). 0,
 * -EIO when the file ends first (truncated), or -errno. */
int pfile__pread(int fd, void *buf, size_t len, off_t off);

/* An ELF file's bytes laid out as in the file, @size long, with only the
 * headers and some sections read; the rest reads as zeros and costs no
 * memory (an anonymous mapping, @map_len bytes: of a file of a megabyte or
 * more where huge pages pay, whole 2 MiB blocks, huge pages where a large
 * section was read). */
struct pfile_image {
	void *data;
	size_t size;
	size_t map_len;
};

/* Read into @img the ELF header, program and section headers, section name
 * table and the sections named in @sections (NULL-terminated) of 64-bit ELF
 * file @fd, @size bytes long, by pread. Free with pfile__image_free().
 * 0, -ENOEXEC (not a well-formed 64-bit ELF), -EIO (truncated), -ENOMEM,
 * or -errno. */
int pfile__read_elf(int fd, size_t size, const char *const *sections, struct pfile_image *img);

/* Unmap @img; accepts a zeroed one. */
void pfile__image_free(struct pfile_image *img);

#endif
