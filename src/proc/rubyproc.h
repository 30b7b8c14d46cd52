/* rubyproc.h - is a process running CRuby, which version, and where is
 * its VM: what the BPF walker (bpf/ruby.h) and the user-space frame namer
 * (symbolize/rubyframes.h) need to know of it.
 *
 * Found from outside, without the symbols a distribution strips: the
 * mapped libruby (or a ruby executable built static) and its .dynsym
 * (ruby_current_vm_ptr, ruby_version, rb_vm_exec). CRuby publishes no
 * description of its structures, so their offsets come from a table per
 * version (3.1 here), checked on the live process where its VM is up: a
 * layout that does not read right walks nothing. Works through
 * /proc/PID/root for other mount namespaces.
 */
#ifndef PROFCAP_RUBYPROC_H
#define PROFCAP_RUBYPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct procsnap;

/* Offsets (bytes) of one CRuby version on x86-64. The first part is what
 * struct ruby_proc (bpf/ruby.h) carries; the rest names frames. */
struct rubyproc_layout {
	__u32 version; /* major << 8 | minor */
	/* the VM, threads, control frames: as struct ruby_proc */
	__u16 vm_main_ractor, vm_main_thread;
	__u16 ractor_threads, ractor_threads_main;
	__u16 thread_node, thread_ractor, thread_vm, thread_ec, thread_id, thread_tid;
	__u16 ec_vm_stack, ec_vm_stack_size, ec_cfp, ec_thread;
	__u16 cfp_size, cfp_pc, cfp_iseq, cfp_ep;
	__s16 ep_me;
	__u16 iseq_body;
	/* iseq bodies */
	__u16 body_iseq_size;	 /* unsigned int: instruction words */
	__u16 body_encoded;	 /* VALUE *iseq_encoded */
	__u16 body_pathobj;	 /* location.pathobj: a String, or [path, realpath] */
	__u16 body_label;	 /* location.label (String) */
	__u16 body_first_lineno; /* location.first_lineno (Fixnum) */
	__u16 body_insns_info;	 /* insns_info.body: entries of insn_info_size */
	__u16 body_insns_size;	 /* insns_info.size (unsigned int) */
	__u16 body_succ_table;	 /* insns_info.succ_index_table */
	__u16 body_read;	 /* bytes of the body read to name a frame */
	__u16 insn_info_size;	 /* sizeof(struct iseq_insn_info_entry) */
	__u16 insn_info_line;	 /* its line_no (int) */
	/* method entries (C functions): rb_method_entry_t, definitions, and
	 * how an ID's name is found in the VM's symbol table (symbol.c) */
	__u16 me_def, def_original_id;
	__u16 id_last_op;     /* IDs up to it are operators: their own serial */
	__u16 id_scope_shift; /* others: serial = ID >> it */
	__u16 id_entry_unit;  /* serials per array of the table */
	__u16 id_entry_size;  /* slots per serial (the String first) */
	/* strings and arrays (struct RString / RArray) */
	__u16 str_heap_len, str_heap_ptr, str_embed;
	__u16 ary_heap_len, ary_heap_ptr, ary_embed;
};

/* A process running CRuby. */
struct rubyproc {
	struct rubyproc_layout layout;
	char version[16]; /* "3.1.2" */
	__u64 vm_ptr;	  /* address of ruby_current_vm_ptr */
	/* rb_vm_exec(): a native frame it called ran the VM loop (the loop
	 * itself when @exec_is_loop: a build that inlines it) */
	__u64 exec_lo, exec_hi;
	bool exec_is_loop;
	bool checked; /* the layout read right on the live VM */
	/* address of ruby_global_symbols.ids (the names of IDs), 0 unknown:
	 * C methods are then not named */
	__u64 id_table;
};

/* Find out whether process @pid (seen from @proc_root, NULL = "/proc")
 * runs CRuby, from its snapshot @snap (NULL: read /proc/PID/maps). The VM
 * is a mapped libruby*.so*, else an executable named ruby* that exports
 * it. 0 and *@out filled; -ENOENT not Ruby; -ENOTSUP a version profcap
 * has no layout for (logged once), or whose layout does not read right on
 * the live VM (rubyproc__check(), not logged); other -errno when the
 * process or its files could not be read. */
int rubyproc__locate(const char *proc_root, int pid, const struct procsnap *snap,
		     struct rubyproc *out);

/* Check @rp's layout against process @pid's live VM: 0 (and @rp->checked)
 * when it reads right, 0 alone while the VM is not up (a field read is not
 * set yet), -ENOTSUP when a field holds something else (a VM starting may
 * do that for a moment: the caller tries again before giving up). */
int rubyproc__check(const char *proc_root, int pid, struct rubyproc *rp);

/* "3.1.2" at the start of @s (the ruby_version string, @n bytes): 0 and
 * *@major, *@minor; -EINVAL otherwise. Pure. */
int rubyproc__parse_version(const char *s, unsigned n, unsigned *major, unsigned *minor);

/* Where the symbol table's array of names is, decoded from x86-64 code:
 * @fn (@n bytes at link address @at) is rb_id2str(), which tail-jumps to
 * the lookup; @lookup (@m bytes at @lookup_at) its code, which compares
 * the ID with last_id and loads ids, the word 16 bytes after it (both
 * RIP-relative). rubyproc__decode_jmp(): the jump's target; 0 or
 * -ENOENT. rubyproc__decode_ids(): ids' link address; 0 or -ENOENT. Pure. */
int rubyproc__decode_jmp(const unsigned char *fn, size_t n, __u64 at, __u64 *target);
int rubyproc__decode_ids(const unsigned char *lookup, size_t m, __u64 lookup_at, __u64 *ids);

/* The layout of CRuby @major.@minor from the built-in tables, NULL when
 * unknown. */
const struct rubyproc_layout *rubyproc__layout(unsigned major, unsigned minor);

#endif
