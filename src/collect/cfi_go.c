/* cfi_go.c - unwind rows for Go code from the pclntab's pcsp tables (see
 * cfi.h).
 *
 * Go code has no .eh_frame; its .debug_frame is gone with -w (and
 * compressed otherwise), and a leaf without a frame keeps its caller's rbp,
 * so a frame-pointer walk skips that caller. The pcsp table gives the exact
 * SP offset at every PC instead: CFA = rsp + offset + 8, the return address
 * at CFA - 8, and the caller's rbp saved at CFA - 16 once the function has
 * a frame (the compiler saves rbp first thing in every frame it makes).
 * Functions the runtime marks as the top of a stack (goexit, mstart) end
 * the walk; those that switch stacks are handled by func_rows(). The rows
 * replace those of .eh_frame/.debug_frame inside each Go function; C code
 * of a cgo binary keeps its .eh_frame rows.
 */
#include "collect/gopcln.h"
#include "collect/cfi_int.h"

struct rows {
	struct cfi_row *v;
	size_t n, cap;
};

static int add(struct rows *r, const struct cfi_row *row)
{
	struct cfi_row *last = r->n ? &r->v[r->n - 1] : NULL;
	int err;

	if (last && last->pc == row->pc) {
		*last = *row; /* a function starting where the previous ended */
		if (r->n > 1 && cfi__same_rule(&r->v[r->n - 2], last))
			r->n--;
		return 0;
	}
	if (last && cfi__same_rule(last, row))
		return 0;
	err = array__grow((void **)&r->v, &r->cap, r->n, sizeof(*r->v), 1024, CFI_MAX_ROWS);
	if (err)
		return err;
	r->v[r->n++] = *row;
	return 0;
}

/* The row of a range whose SP lies @sp bytes below its value at entry.
 * With @by_rbp (a function that moves SP to another stack, after its
 * frame is made) the CFA comes from its frame pointer instead. */
static void sp_row(__u64 pc, __s64 sp, bool by_rbp, struct cfi_row *row)
{
	memset(row, 0, sizeof(*row));
	row->pc = pc;
	row->rbp_type = UNWIND_RBP_UNKNOWN;
	if (sp < 0 || sp + 8 > UNWIND_CFA_OFF_MAX || (sp & 7)) {
		row->cfa_type = UNWIND_CFA_UNSUPPORTED;
		return;
	}
	row->cfa_type = UNWIND_CFA_RSP;
	row->cfa_off = (__s32)(sp + 8);
	if (!sp) {
		row->rbp_type = UNWIND_RBP_SAME;
		return;
	}
	row->rbp_type = UNWIND_RBP_AT_CFA;
	row->rbp_off = -16;
	if (by_rbp) {
		row->cfa_type = UNWIND_CFA_RBP;
		row->cfa_off = 16;
	}
}

/* Does @f ever make a frame (an SP offset above 0)? */
static bool has_frame(const struct gopcln *g, const struct gopcln_func *f)
{
	struct gopcln_pcsp it;
	__u64 start, end;
	__s64 sp;

	if (gopcln__pcsp(g, f, &it))
		return false;
	while (gopcln__pcsp_next(&it, &start, &end, &sp))
		if (sp > 0)
			return true;
	return false;
}

/* A row of rule @type alone for all of @f. */
static int whole(struct rows *r, const struct gopcln_func *f, __u8 type)
{
	struct cfi_row row = {.pc = f->entry, .cfa_type = type, .rbp_type = UNWIND_RBP_UNKNOWN};

	return add(r, &row);
}

/* The rows of function @f. 0, or -E2BIG / -ENOMEM.
 * - the top of a stack: the walk ends there;
 * - a stack switch with a frame of its own (time.now, nanotime1 calling
 *   the vdso on the system stack; cgocallback): CFA = rbp + 16 once the
 *   frame is made, as SP may be on the other stack;
 * - a stack switch without a frame (systemstack, mcall, asmcgocall): no
 *   row, so frame pointers are tried, when plausible, as before;
 * - no pcsp table: not Go code (below). */
static int func_rows(const struct gopcln *g, const struct gopcln_func *f, struct rows *r,
		     struct cfi_stats *st)
{
	unsigned int flags = gopcln__flags(g, f);
	bool by_rbp = false;
	struct gopcln_pcsp it;
	struct cfi_row row;
	__u64 start, end = f->entry;
	__s64 sp;
	int err;

	if (flags & GOPCLN_TOPFRAME) {
		st->go_funcs++;
		return whole(r, f, UNWIND_CFA_END);
	}
	if (flags & GOPCLN_SPWRITE) {
		by_rbp = has_frame(g, f);
		if (!by_rbp) {
			st->go_funcs++;
			return whole(r, f, UNWIND_CFA_NONE);
		}
	}
	/* No table: C code the Go linker lists (cgo linked internally), which
	 * keeps what .eh_frame says of it, if anything. */
	if (gopcln__pcsp(g, f, &it))
		return whole(r, f, UNWIND_CFA_NONE);
	while (gopcln__pcsp_next(&it, &start, &end, &sp)) {
		sp_row(start, sp, by_rbp, &row);
		err = add(r, &row);
		if (err)
			return err;
	}
	if (it.bad || end == f->entry) {
		/* Malformed: the rest of the function is marked, never guessed. */
		memset(&row, 0, sizeof(row));
		row.pc = end;
		row.cfa_type = UNWIND_CFA_UNSUPPORTED;
		row.rbp_type = UNWIND_RBP_UNKNOWN;
		st->bad_entries++;
		return add(r, &row);
	}
	st->go_funcs++;
	return 0;
}

/* Rows of every function of @g into @r, in address order, each run of
 * adjacent functions closed by a NONE row. */
static int go_rows(const struct gopcln *g, struct rows *r, struct cfi_stats *st)
{
	struct cfi_row none = {.cfa_type = UNWIND_CFA_NONE, .rbp_type = UNWIND_RBP_UNKNOWN};
	struct gopcln_func f;
	__u64 i, prev_end = 0;
	int err;

	for (i = 0; i < g->nfunc; i++) {
		/* The table is sorted and its functions do not overlap; an entry
		 * that breaks that, or lies outside the data, ends the reading
		 * (rows stay sorted). */
		if (gopcln__func(g, i, &f) || f.end <= f.entry || f.entry < prev_end ||
		    f.end >= 1ull << 63)
			break;
		if (i && f.entry != prev_end) {
			none.pc = prev_end;
			err = add(r, &none);
			if (err)
				return err;
		}
		err = func_rows(g, &f, r, st);
		if (err)
			return err;
		prev_end = f.end;
	}
	if (!r->n)
		return -ENOENT;
	none.pc = prev_end;
	return add(r, &none);
}

/* Merge the Go rows @g into the table's (sorted, compact) rows: inside a
 * run of Go functions only Go rows count; where a run ends, the row of the
 * table in effect there resumes. */
static int merge(struct cfi_table *t, const struct rows *g)
{
	struct rows out = {0};
	const struct cfi_row *c = t->rows, *cur = NULL;
	size_t i = 0, j = 0, nc = t->n;
	bool in_go = false;
	struct cfi_row row;
	int err = 0;

	err = array__grow((void **)&out.v, &out.cap, nc + g->n, sizeof(*out.v), 1024,
			  CFI_MAX_ROWS + 1ull);
	if (err)
		return err;
	while (!err && (i < nc || j < g->n)) {
		if (j < g->n && (i == nc || g->v[j].pc <= c[i].pc)) {
			row = g->v[j++];
			in_go = row.cfa_type != UNWIND_CFA_NONE;
			if (!in_go) {
				while (i < nc && c[i].pc <= row.pc)
					cur = &c[i++];
				if (cur) {
					row = *cur;
					row.pc = g->v[j - 1].pc;
				}
			}
			err = add(&out, &row);
		} else {
			cur = &c[i++];
			if (!in_go)
				err = add(&out, cur);
		}
	}
	if (err) {
		free(out.v);
		return err;
	}
	free(t->rows);
	t->rows = out.v;
	t->n = out.n;
	t->cap = out.cap;
	return 0;
}

int cfi__add_go(struct cfi_table *t, const struct section *sec, __u64 text_addr)
{
	struct rows g = {0};
	struct gopcln pcln;
	int err;

	err = gopcln__init(&pcln, sec->data, sec->size, text_addr);
	if (err)
		return -ENOENT;
	err = go_rows(&pcln, &g, &t->st);
	if (!err)
		err = merge(t, &g);
	free(g.v);
	return err;
}

int cfi__find_go(struct cfi_sections *s)
{
	const struct section *ro = &s->rodata;
	size_t off;
	__u64 text;

	if (!s->go_note || ro->found != 1 ||
	    gopcln__find_in_data(ro->data, ro->size, ro->addr,
				 s->rela.found == 1 ? s->rela.data : NULL, s->rela.size, &off,
				 &text))
		return -ENOENT;
	s->go = (struct section){
		.data = ro->data + off, .size = ro->size - off, .addr = ro->addr + off, .found = 1};
	s->go_text = text;
	return 0;
}
