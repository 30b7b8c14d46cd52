/* dwline.c - one unit's DWARF line table as compact rows (see dwline.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/cursor.h"
#include "util/pages.h"
#include "util/search.h"
#include "symbolize/dwline.h"

_Static_assert(sizeof(struct dwline_row) == 16, "a row is 16 bytes");

/* Standard opcodes (DWARF 5, 6.2.5.2) and extended ones (6.2.5.3). */
enum {
	LNS_COPY = 1,
	LNS_ADVANCE_PC,
	LNS_ADVANCE_LINE,
	LNS_SET_FILE,
	LNS_SET_COLUMN,
	LNS_NEGATE_STMT,
	LNS_SET_BASIC_BLOCK,
	LNS_CONST_ADD_PC,
	LNS_FIXED_ADVANCE_PC,
	LNS_SET_PROLOGUE_END,
	LNS_SET_EPILOGUE_BEGIN,
	LNS_SET_ISA,
};

enum {
	LNE_END_SEQUENCE = 1,
	LNE_SET_ADDRESS = 2,
};

struct header {
	unsigned int version, addr_size;
	unsigned int min_inst, max_ops, opcode_base, line_range;
	int line_base;
	unsigned char std_len[256];
	const unsigned char *prog, *end;
};

static int read_header(const unsigned char *sec, size_t len, __u64 off, unsigned int addr_size,
		       struct header *h)
{
	struct cursor r = {sec + off, sec + len, false};
	__u64 unit_len, hdr_len;
	unsigned int offsz = 4, i;
	const unsigned char *hdr_start;

	if (off >= len)
		return -EINVAL;
	unit_len = cursor__fixed(&r, 4);
	if (unit_len == 0xffffffffu) {
		unit_len = cursor__fixed(&r, 8);
		offsz = 8;
	} else if (unit_len >= 0xfffffff0u) {
		return -EINVAL; /* reserved */
	}
	if (r.bad || unit_len > (size_t)(r.end - r.p))
		return -EINVAL;
	h->end = r.p + unit_len;
	r.end = h->end;
	h->version = (unsigned int)cursor__fixed(&r, 2);
	if (h->version < 2 || h->version > 5)
		return -EINVAL;
	h->addr_size = addr_size;
	if (h->version >= 5) {
		h->addr_size = (unsigned int)cursor__fixed(&r, 1);
		if (cursor__fixed(&r, 1)) /* segment selectors: none on x86_64 */
			return -EINVAL;
	}
	hdr_len = cursor__fixed(&r, offsz);
	hdr_start = r.p;
	h->min_inst = (unsigned int)cursor__fixed(&r, 1);
	h->max_ops = h->version >= 4 ? (unsigned int)cursor__fixed(&r, 1) : 1;
	cursor__fixed(&r, 1); /* default_is_stmt: rows keep no is_stmt */
	h->line_base = (int)(signed char)cursor__fixed(&r, 1);
	h->line_range = (unsigned int)cursor__fixed(&r, 1);
	h->opcode_base = (unsigned int)cursor__fixed(&r, 1);
	if (r.bad || !h->max_ops || !h->line_range || !h->opcode_base ||
	    (h->addr_size != 4 && h->addr_size != 8))
		return -EINVAL;
	memset(h->std_len, 0, sizeof(h->std_len));
	for (i = 1; i < h->opcode_base; i++)
		h->std_len[i] = (unsigned char)cursor__fixed(&r, 1);
	if (r.bad || hdr_len > (size_t)(h->end - hdr_start))
		return -EINVAL;
	h->prog = hdr_start + hdr_len;
	return 0;
}

struct state {
	__u64 addr;
	__u64 op_index;
	__u64 file;
	__s64 line;
	__u64 column;
};

static void state_reset(struct state *s)
{
	memset(s, 0, sizeof(*s));
	s->file = 1;
	s->line = 1;
}

static void advance(struct state *s, const struct header *h, __u64 op_advance)
{
	s->addr += h->min_inst * ((s->op_index + op_advance) / h->max_ops);
	s->op_index = (s->op_index + op_advance) % h->max_ops;
}

static int emit(struct dwline_table *t, size_t *cap, const struct state *s, bool end)
{
	int err;

	/* The widths libdw keeps (it refuses the unit when these overflow). */
	if (s->file > UINT32_MAX || s->line > INT32_MAX || s->line < INT32_MIN ||
	    s->column > UINT16_MAX)
		return -EINVAL;
	if (s->file > UINT16_MAX)
		return -E2BIG; /* libdw's then (DWLINE_MAX_ROWS too: array__grow()) */
	err = array__grow((void **)&t->rows, cap, t->n, sizeof(*t->rows), 256, DWLINE_MAX_ROWS);
	if (err)
		return err;
	array__populate(t->rows, t->n, sizeof(*t->rows), *cap);
	t->rows[t->n++] = (struct dwline_row){
		.addr = s->addr,
		.line = s->line > 0 ? (__u32)s->line : 0,
		.end = end,
		.file = (__u16)s->file,
		.column = (__u16)s->column,
	};
	return 0;
}

/* libdw's order: by address; at one address an end of sequence first,
 * program order otherwise. */
static bool before(const struct dwline_row *a, size_t ia, const struct dwline_row *b, size_t ib)
{
	if (a->addr != b->addr)
		return a->addr < b->addr;
	if (a->end != b->end)
		return a->end;
	return ia < ib;
}

struct keyed {
	struct dwline_row row;
	size_t seq;
};

static int cmp_keyed(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;

	return before(&a->row, a->seq, &b->row, b->seq) ? -1 : 1;
}

/* Sort @t in libdw's order: already sorted (one pass) in the usual case. */
static int sort_rows(struct dwline_table *t)
{
	struct keyed *k;
	size_t i;

	for (i = 1; i < t->n && before(&t->rows[i - 1], i - 1, &t->rows[i], i); i++)
		;
	if (i >= t->n)
		return 0;
	k = malloc(t->n * sizeof(*k));
	if (!k)
		return -ENOMEM;
	if (t->n * sizeof(*k) >= ARRAY_POPULATE_MIN)
		pages__populate(k, t->n * sizeof(*k)); /* written whole: one call */
	for (i = 0; i < t->n; i++)
		k[i] = (struct keyed){t->rows[i], i};
	qsort(k, t->n, sizeof(*k), cmp_keyed);
	for (i = 0; i < t->n; i++)
		t->rows[i] = k[i].row;
	free(k);
	return 0;
}

static int run(const struct header *h, struct dwline_table *t)
{
	struct cursor r = {h->prog, h->end, false};
	struct state s;
	size_t cap = 0, room = (size_t)(h->end - h->prog);
	int err = 0;

	/* Room for the most rows the program can make, at once: no copy as
	 * it grows (what is not written is not resident). */
	if (room > DWLINE_MAX_ROWS)
		room = DWLINE_MAX_ROWS;
	if (room > 256 &&
	    array__grow((void **)&t->rows, &cap, room - 1, sizeof(*t->rows), 256, DWLINE_MAX_ROWS))
		cap = 0; /* left to growth */
	state_reset(&s);
	while (!err && !r.bad && r.p < r.end) {
		unsigned int op = *r.p++;

		if (op >= h->opcode_base) { /* special */
			unsigned int adj = op - h->opcode_base;

			s.line += h->line_base + (int)(adj % h->line_range);
			advance(&s, h, adj / h->line_range);
			err = emit(t, &cap, &s, false);
		} else if (op == 0) { /* extended */
			__u64 n = cursor__uleb(&r);
			const unsigned char *next;
			unsigned int sub;

			if (r.bad || !n || n > (size_t)(r.end - r.p))
				return -EINVAL;
			next = r.p + n;
			sub = *r.p++;
			if (sub == LNE_END_SEQUENCE) {
				err = emit(t, &cap, &s, true);
				state_reset(&s);
			} else if (sub == LNE_SET_ADDRESS) {
				if (n - 1 != h->addr_size)
					return -EINVAL;
				s.addr = cursor__fixed(&r, h->addr_size);
				s.op_index = 0;
			}
			/* define_file, discriminators, vendor ones: skipped */
			r.p = next;
		} else if (op <= LNS_SET_ISA) {
			/* libdw refuses a unit whose header gives a known
			 * opcode another operand count */
			static const unsigned char nargs[] = {0, 0, 1, 1, 1, 1, 0,
							      0, 0, 1, 0, 0, 1};

			if (h->std_len[op] != nargs[op])
				return -EINVAL;
			switch (op) {
			case LNS_COPY:
				err = emit(t, &cap, &s, false);
				break;
			case LNS_ADVANCE_PC:
				advance(&s, h, cursor__uleb(&r));
				break;
			case LNS_ADVANCE_LINE:
				s.line += cursor__sleb(&r);
				break;
			case LNS_SET_FILE:
				s.file = cursor__uleb(&r);
				break;
			case LNS_SET_COLUMN:
				s.column = cursor__uleb(&r);
				break;
			case LNS_CONST_ADD_PC:
				advance(&s, h, (255 - h->opcode_base) / h->line_range);
				break;
			case LNS_FIXED_ADVANCE_PC:
				s.addr += cursor__fixed(&r, 2);
				s.op_index = 0;
				break;
			case LNS_SET_ISA:
				cursor__uleb(&r);
				break;
			default: /* is_stmt, basic block, prologue and epilogue flags */
				break;
			}
		} else { /* unknown standard opcode: skip its operands */
			unsigned int i;

			for (i = 0; i < h->std_len[op]; i++)
				cursor__uleb(&r);
		}
	}
	return err ? err : r.bad ? -EINVAL : 0;
}

int dwline__read(const void *sec, size_t len, __u64 off, unsigned int addr_size,
		 struct dwline_table *out)
{
	struct header h;
	int err;

	memset(out, 0, sizeof(*out));
	if (!sec)
		return -EINVAL;
	err = read_header(sec, len, off, addr_size, &h);
	err = err ?: run(&h, out);
	err = err ?: sort_rows(out);
	if (err) {
		dwline__release(out);
		return err;
	}
	/* The highest row ends its sequence, even where a compiler forgot. */
	if (out->n)
		out->rows[out->n - 1].end = 1;
	return 0;
}

const struct dwline_row *dwline__find(const struct dwline_table *t, __u64 addr)
{
	const struct dwline_row *r;
	size_t k;

	if (!t || !t->n)
		return NULL;
	/* the last row at or below @addr, unless it ends its sequence */
	k = search__upto(t->rows, t->n, sizeof(*r), offsetof(struct dwline_row, addr), addr);
	if (!k)
		return NULL;
	r = &t->rows[k - 1];
	return r->end ? NULL : r;
}

void dwline__release(struct dwline_table *t)
{
	if (!t)
		return;
	free(t->rows);
	t->rows = NULL;
	t->n = 0;
}
