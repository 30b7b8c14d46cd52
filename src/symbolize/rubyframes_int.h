/* rubyframes_int.h - what rubyframes.c (cache, naming, merge) and
 * rubyframes_read.c (reading iseqs from the live process) share. */
#ifndef PROFCAP_RUBYFRAMES_INT_H
#define PROFCAP_RUBYFRAMES_INT_H

#include <stdbool.h>
#include <linux/types.h>

#include "proc/rubyproc.h"
#include "symbolize/rubyframes.h"

#define RUBYFRAMES_NO_STR 0xffffffffu

/* An iseq read (or found unreadable: ok false), per (process, address,
 * fingerprint); a C method's entry likewise, by RF_CFUNC_FP. */
struct rf_iseq {
	__u64 addr;
	__u32 pid;
	__u32 fp;
	__u64 body;
	__u32 label, path; /* string indices, RUBYFRAMES_NO_STR none */
	__s64 first_line;
	__u32 iseq_size; /* instruction words */
	__u32 nlines;	 /* entries of @lines */
	__s32 *lines;	 /* line of each insns_info entry, owned */
	__u64 *succ;	 /* the succinct index table, owned */
	__u32 nsucc;	 /* its words */
	__u32 ok;
	__u32 memo_pc; /* the last pc asked and its line */
	__s64 memo_line;
};

/* Where reads go: the process, its layout, the namer's string table. */
struct rf_reader {
	const char *proc_root;
	int pid;
	const struct rubyproc_layout *l;
	/* put a string, its index into *@idx: 0, or -errno (cap) */
	int (*put_str)(void *ctx, const char *s, size_t len, __u32 *idx);
	void *ctx;
	size_t *table_bytes; /* line table bytes kept, against the cap */
	bool *changed;	     /* set when the object no longer matches */
};

/* Read iseq @e->addr (recorded with @body and fingerprint @e->fp) into @e:
 * e->ok when its label was read; its lines when they fit the caps. */
void rf__read_iseq(const struct rf_reader *r, __u64 body, struct rf_iseq *e);

/* Read C method entry @e->addr (recorded with definition @def) into @e:
 * its name (e->label) from the VM's symbol table, whose array of names is
 * at @id_table; e->ok when read. */
void rf__read_cfunc(const struct rf_reader *r, __u64 id_table, __u64 def, struct rf_iseq *e);

/* The key fingerprint of a C method's entry (outside an iseq's 16 bits). */
#define RF_CFUNC_FP 0x10000u

#endif
