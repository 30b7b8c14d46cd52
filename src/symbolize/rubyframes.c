/* rubyframes.c - naming Ruby frames from their iseqs, read from the live
 * process, cached per process; their merge with the native stack (see
 * rubyframes.h). A frame whose iseq does not check out (type, body,
 * fingerprint) is "<unknown ruby>", never a guess. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/htab.h"
#include "util/intern.h"
#include "symbolize/rubyframes.h"
#include "symbolize/rubyframes_int.h"

#define MAX_PROCS 4096
#define SUCC_IMM 54	    /* positions the immediate part of the table ranks */
#define SUCC_IMM_WORDS 6    /* its words (9 ranks of 7 bits each) */
#define SUCC_BLOCK_WORDS 10 /* a block: rank, small ranks, 8 words of bits */

struct rf_proc {
	int pid;
	struct rubyproc rp;
};

struct iseq_key {
	__u64 addr;
	__u32 pid;
	__u32 fp;
};

struct rubyframes {
	char *proc_root;
	struct htab procs; /* struct rf_proc */
	struct htab iseqs; /* struct rf_iseq */
	struct intern *strings;
	size_t string_bytes, table_bytes;
	__u32 unknown;
	struct profile_line *lines;
	size_t lines_cap;
	struct rubyframes_stats st;
};

static bool proc_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return ((const struct rf_proc *)elem)->pid == *(const int *)key;
}

static bool iseq_eq(const void *elem, const void *key, void *ctx)
{
	const struct rf_iseq *e = elem;
	const struct iseq_key *k = key;

	(void)ctx;
	return e->addr == k->addr && e->pid == k->pid && e->fp == k->fp;
}

static __u64 key_hash(const struct iseq_key *k)
{
	return htab__hash_u64(k->addr, ((__u64)k->pid << 32) | k->fp);
}

__u16 rubyframes__fingerprint(__u64 body, __u64 first_lineno)
{
	__u64 h = (body >> 3) ^ (first_lineno << 17) ^ (first_lineno >> 1);

	h ^= h >> 16;
	h ^= h >> 32;
	return (__u16)h;
}

size_t rubyframes__decode(const __u64 *words, size_t nwords, struct rubyframes_raw *out, size_t cap)
{
	size_t n = 0, i;

	for (i = 0; i + RUBYFRAMES_WORDS <= nwords && n < cap; i += RUBYFRAMES_WORDS, n++) {
		out[n].addr = words[i] & ((1ull << 48) - 1);
		out[n].fingerprint = (__u16)(words[i] >> 48);
		out[n].pc = (__u32)words[i + 1];
		out[n].kind = (__u8)(words[i + 1] >> 32);
		out[n].flags = (__u8)(words[i + 1] >> 40);
		out[n].body = words[i + 2];
	}
	return n;
}

size_t rubyframes__succ_bytes(__u32 iseq_size)
{
	if (iseq_size < SUCC_IMM)
		return (size_t)(iseq_size + 8) / 9 * 8;
	return SUCC_IMM_WORDS * 8 +
	       (size_t)(iseq_size - SUCC_IMM + 511) / 512 * SUCC_BLOCK_WORDS * 8;
}

int rubyframes__succ_rank(const __u64 *table, size_t nwords, __u32 pos)
{
	__u32 y, blk, bit, small;
	size_t base;
	__u64 bits, ranks;

	if (pos < SUCC_IMM) {
		if (pos / 9 >= nwords)
			return -1;
		return (int)((table[pos / 9] >> (7 * (pos % 9))) & 0x7f);
	}
	y = pos - SUCC_IMM;
	blk = y / 512;
	bit = y % 512;
	base = SUCC_IMM_WORDS + (size_t)blk * SUCC_BLOCK_WORDS;
	if (base + SUCC_BLOCK_WORDS > nwords)
		return -1;
	ranks = table[base + 1];
	small = bit / 64 ? (__u32)((ranks >> (9 * (bit / 64 - 1))) & 0x1ff) : 0;
	/* the bits at and below this position in its word */
	bits = table[base + 2 + bit / 64] << (63 - bit % 64);
	return (int)((__u32)table[base] + small + (__u32)__builtin_popcountll(bits));
}

struct rubyframes *rubyframes__new(const char *proc_root)
{
	struct rubyframes *rf = calloc(1, sizeof(*rf));

	if (!rf)
		return NULL;
	rf->proc_root = proc_root ? strdup(proc_root) : NULL;
	rf->strings = intern__new(1u << 20);
	if ((proc_root && !rf->proc_root) || !rf->strings ||
	    intern__put(rf->strings, RUBYFRAMES_UNKNOWN, sizeof(RUBYFRAMES_UNKNOWN), &rf->unknown,
			NULL) ||
	    htab__init(&rf->procs, sizeof(struct rf_proc), MAX_PROCS) ||
	    htab__init(&rf->iseqs, sizeof(struct rf_iseq), RUBYFRAMES_MAX_ISEQS)) {
		rubyframes__free(rf);
		return NULL;
	}
	return rf;
}

static void drop_iseqs(struct rubyframes *rf, int pid, bool all)
{
	struct rf_iseq *e;
	size_t it = 0;

	while ((e = htab__next(&rf->iseqs, &it))) {
		if (!all && e->pid != (__u32)pid)
			continue;
		rf->table_bytes -= e->nlines * sizeof(*e->lines) + e->nsucc * sizeof(*e->succ);
		free(e->lines);
		free(e->succ);
		htab__remove(&rf->iseqs, e);
	}
}

void rubyframes__free(struct rubyframes *rf)
{
	if (!rf)
		return;
	drop_iseqs(rf, 0, true);
	htab__release(&rf->iseqs);
	htab__release(&rf->procs);
	intern__free(rf->strings);
	free(rf->lines);
	free(rf->proc_root);
	free(rf);
}

const struct rubyproc *rubyframes__process(const struct rubyframes *rf, int pid)
{
	const struct rf_proc *p;

	if (!rf)
		return NULL;
	p = htab__find(&rf->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
	return p ? &p->rp : NULL;
}

void rubyframes__forget(struct rubyframes *rf, int pid)
{
	struct rf_proc *p;

	if (!rf)
		return;
	p = htab__find(&rf->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
	if (p)
		htab__remove(&rf->procs, p);
	drop_iseqs(rf, pid, false);
}

int rubyframes__set_process(struct rubyframes *rf, int pid, const struct rubyproc *rp)
{
	const struct rubyproc *old;
	struct rf_proc *p;
	int err;

	if (!rf)
		return -EINVAL;
	old = rubyframes__process(rf, pid);
	if (old && rp && old->vm_ptr == rp->vm_ptr &&
	    !memcmp(&old->layout, &rp->layout, sizeof(rp->layout))) {
		p = (struct rf_proc *)((char *)old - offsetof(struct rf_proc, rp));
		p->rp = *rp; /* the same VM: what was read stays */
		return 0;
	}
	rubyframes__forget(rf, pid);
	if (!rp)
		return 0;
	err = htab__add(&rf->procs, htab__hash_u64((__u64)pid, 0), (void **)&p);
	if (err)
		return err;
	p->pid = pid;
	p->rp = *rp;
	return 0;
}

void rubyframes__stats(const struct rubyframes *rf, struct rubyframes_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!rf)
		return;
	*out = rf->st;
	out->cached = htab__count(&rf->iseqs);
}

static int put_str(void *ctx, const char *s, size_t len, __u32 *idx)
{
	struct rubyframes *rf = ctx;
	bool added = false;
	int err;

	if (!intern__find(rf->strings, s, len + 1, idx))
		return 0;
	if (rf->string_bytes + len + 1 > RUBYFRAMES_MAX_STRINGS)
		return -E2BIG;
	err = intern__put(rf->strings, s, len + 1, idx, &added);
	if (!err && added)
		rf->string_bytes += len + 1;
	return err;
}

static const char *str_of(const struct rubyframes *rf, __u32 idx)
{
	return idx == RUBYFRAMES_NO_STR ? NULL : intern__get(rf->strings, idx, NULL);
}

static struct rf_iseq *lookup(struct rubyframes *rf, int pid, const struct rubyproc *rp,
			      const struct rubyframes_raw *raw)
{
	bool cfunc = raw->kind == RUBYFRAMES_KIND_CFUNC;
	struct iseq_key k = {
		.addr = raw->addr, .pid = (__u32)pid, .fp = cfunc ? RF_CFUNC_FP : raw->fingerprint};
	bool changed = false;
	struct rf_reader r = {
		.proc_root = rf->proc_root,
		.pid = pid,
		.l = &rp->layout,
		.put_str = put_str,
		.ctx = rf,
		.table_bytes = &rf->table_bytes,
		.changed = &changed,
	};
	struct rf_iseq *e, tmp;
	__u64 h = key_hash(&k);

	e = htab__find(&rf->iseqs, h, &k, iseq_eq, NULL);
	if (e && e->body == raw->body) {
		rf->st.hits++;
		return e;
	}
	if (e) /* the same address and fingerprint, another body: not this one */
		return NULL;
	rf->st.misses++;
	memset(&tmp, 0, sizeof(tmp));
	tmp.addr = k.addr;
	tmp.pid = k.pid;
	tmp.fp = k.fp;
	tmp.memo_pc = RUBYFRAMES_NO_PC;
	if (cfunc)
		rf__read_cfunc(&r, rp->id_table, raw->body, &tmp);
	else
		rf__read_iseq(&r, raw->body, &tmp);
	if (changed)
		rf->st.changed++;
	if (htab__count(&rf->iseqs) >= RUBYFRAMES_MAX_ISEQS) {
		drop_iseqs(rf, 0, true);
		rf->st.evictions++;
	}
	if (htab__add(&rf->iseqs, h, (void **)&e)) {
		free(tmp.lines);
		free(tmp.succ);
		return NULL;
	}
	*e = tmp;
	if (!e->ok)
		e->body = raw->body; /* unreadable: remembered as such */
	return e;
}

/* The line pc index @pc of iseq @e runs (the instruction before the pc,
 * as CRuby's own backtraces count it). */
static __s64 line_of(struct rf_iseq *e, __u32 pc)
{
	__u32 asked = pc;
	int rank;

	if (pc == RUBYFRAMES_NO_PC || !e->nlines)
		return e->first_line;
	if (e->memo_pc == pc)
		return e->memo_line;
	if (pc)
		pc--;
	if (e->nlines == 1) {
		rank = 1;
	} else {
		rank = pc < e->iseq_size ? rubyframes__succ_rank(e->succ, e->nsucc, pc) : -1;
	}
	e->memo_pc = asked;
	e->memo_line = rank >= 1 && (__u32)rank <= e->nlines ? e->lines[rank - 1] : e->first_line;
	return e->memo_line;
}

size_t rubyframes__resolve(struct rubyframes *rf, int pid, const struct rubyframes_raw *raw,
			   size_t n, struct profile_frame *out)
{
	const struct rubyproc *rp = rubyframes__process(rf, pid);
	struct rf_iseq *e;
	size_t i, named = 0;

	if (!rf || !n)
		return 0;
	if (array__grow((void **)&rf->lines, &rf->lines_cap, n - 1, sizeof(*rf->lines), 64,
			PROFILE_MAX_ENTRIES))
		rp = NULL; /* no room for lines: every frame unknown */
	for (i = 0; i < n; i++) {
		struct profile_frame *f = &out[i];
		struct profile_line *ln;

		memset(f, 0, sizeof(*f));
		f->type_name = RUBYFRAMES_TYPE;
		if (raw[i].kind == RUBYFRAMES_KIND_CFUNC) {
			/* named from the VM's symbol table, else left out: its
			 * native frames stand for it */
			e = rp && rp->id_table ? lookup(rf, pid, rp, &raw[i]) : NULL;
			if (e && e->ok) {
				ln = &rf->lines[i];
				memset(ln, 0, sizeof(*ln));
				ln->function = str_of(rf, e->label);
				f->function = ln->function;
				f->lines = ln;
				f->nlines = 1;
			}
			continue;
		}
		f->function = str_of(rf, rf->unknown);
		e = rp && raw[i].kind == RUBYFRAMES_KIND_ISEQ &&
				    !(raw[i].flags & RUBYFRAMES_FRAME_NOBODY)
			    ? lookup(rf, pid, rp, &raw[i])
			    : NULL;
		if (!e || !e->ok) {
			rf->st.unknown++;
			continue;
		}
		ln = &rf->lines[i];
		memset(ln, 0, sizeof(*ln));
		ln->function = str_of(rf, e->label);
		ln->filename = str_of(rf, e->path);
		ln->start_line = e->first_line;
		ln->line = line_of(e, raw[i].pc);
		f->function = ln->function;
		f->lines = ln;
		f->nlines = 1;
		named++;
	}
	return named;
}

/* ---- merge ---- */

/* Did native frame @i (of @n, pcs leaf first) run the VM loop? */
static bool loop_frame(const struct rubyproc *rp, const __u64 *pcs, size_t i, size_t n)
{
	__u64 pc;

	if (rp->exec_is_loop) {
		pc = i ? pcs[i] - 1 : pcs[i]; /* a return address: its call */
		return pc >= rp->exec_lo && pc < rp->exec_hi;
	}
	if (i + 1 >= n)
		return false;
	pc = pcs[i + 1] - 1;
	return pc >= rp->exec_lo && pc < rp->exec_hi;
}

size_t rubyframes__merge(const struct rubyproc *rp, const __u64 *pcs,
			 const struct profile_frame *native, size_t nnative,
			 const struct profile_frame *rb, const struct rubyframes_raw *raw,
			 size_t nrb, struct profile_frame *out, size_t cap)
{
	size_t i, j = 0, n = 0;
	bool last;

	for (i = 0; i < nnative && n < cap; i++) {
		if (j >= nrb || !loop_frame(rp, pcs, i, nnative)) {
			out[n++] = native[i];
			continue;
		}
		/* the Ruby frames this loop call ran, innermost first */
		do {
			last = raw[j].flags & RUBYFRAMES_FRAME_FINISH;
			if (rb[j].function && n < cap)
				out[n++] = rb[j];
			j++;
		} while (!last && j < nrb);
	}
	for (; j < nrb && n < cap; j++)
		if (rb[j].function)
			out[n++] = rb[j];
	return n;
}
