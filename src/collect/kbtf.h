/* kbtf.h - the layout of a few kernel structs (and the type ID of a kernel
 * function), read fast from kernel BTF.
 *
 * libbpf's btf__load_vmlinux_btf() indexes every one of the kernel's 100k+
 * types, all of it before the table unwinder can be configured. The
 * sampler needs a few member offsets of a few structs; this module streams
 * the raw BTF (a small buffer, one pass and short walks back for types
 * named before their struct, no index) and returns a small struct btf
 * holding just those structs, each with all its members, those of
 * anonymous struct/union members flattened in at their full offset. Code
 * written against btf__find_by_name_kind() and btf_members() works on it
 * unchanged (every member's type is a 64-bit int: only names and offsets
 * are kept).
 */
#ifndef PROFCAP_COLLECT_KBTF_H
#define PROFCAP_COLLECT_KBTF_H

#include <stddef.h>
#include <linux/types.h>

struct btf;

/* The kernel's BTF, where the sampler reads it. */
#define KBTF_VMLINUX "/sys/kernel/btf/vmlinux"

/* Read the structs named @structs (@n of them) from the raw BTF file @path.
 * Structs not found are absent from the result. Returns a struct btf the
 * caller frees with btf__free(), or NULL with errno set (unreadable file,
 * not BTF, truncated, out of memory). */
struct btf *kbtf__load(const char *path, const char *const *structs, size_t n);

/* The type ID of function @name (shorter than 64 bytes) in the raw BTF
 * file @path (the kernel's: what a kfunc call names) into *@id: 0, -ENOENT
 * when absent, or another -errno (unreadable file, not BTF). */
int kbtf__func_id(const char *path, const char *name, __u32 *id);

/* Byte offset of member @name of struct @sname in @btf (kbtf__load()'s or
 * libbpf's; inside anonymous structs and unions too) into *@out: 0, or
 * -ENOENT when the struct or the member is absent. */
int kbtf__member_off(const struct btf *btf, const char *sname, const char *name, __u32 *out);

#endif
