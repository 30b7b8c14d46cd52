/* cfi.c - .eh_frame and .debug_frame to unwind rows (see cfi.h). */
#include "collect/cfi_int.h"

/* DWARF registers of x86_64. */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

/* Pointer encodings (DW_EH_PE_*). */
#define PE_OMIT 0xff
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_INDIRECT 0x80

/* Read a pointer in encoding @enc; @vaddr is the address of the field. */
static __u64 rd_encoded(struct cursor *r, __u8 enc, __u64 vaddr)
{
	__u64 v;

	switch (enc & 0x0f) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		v = cursor__fixed(r, 8);
		break;
	case PE_ULEB128:
		v = cursor__uleb(r);
		break;
	case PE_SLEB128:
		v = (__u64)cursor__sleb(r);
		break;
	case PE_UDATA2:
	case PE_UDATA4:
		v = cursor__fixed(r, (enc & 0x0f) == PE_UDATA2 ? 2 : 4);
		break;
	case PE_SDATA2:
		v = (__u64)(__s64)(__s16)cursor__fixed(r, 2);
		break;
	case PE_SDATA4:
		v = (__u64)(__s64)(__s32)cursor__fixed(r, 4);
		break;
	default:
		r->bad = true;
		return 0;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		v += vaddr;
		break;
	default: /* textrel, datarel, funcrel, aligned: not in x86_64 FDEs */
		r->bad = true;
	}
	return v;
}

enum cfa_kind { CFA_UNDEF, CFA_REG, CFA_PLT, CFA_DEREF_RBP, CFA_BAD };
enum reg_rule { RULE_SAME, RULE_OFFSET, RULE_UNDEF, RULE_BAD };

struct cfa_state {
	int cfa_kind;
	__u64 cfa_reg;
	__s64 cfa_off;
	int rbp_rule, ra_rule;
	__s64 rbp_off, ra_off;
};

struct cie {
	size_t off; /* section offset, for the one-entry cache */
	__u64 code_align;
	__s64 data_align;
	__u64 ra_reg;
	__u8 fde_enc;
	bool has_z, signal;
	const __u8 *insns, *insns_end;
	/* The state its initial instructions build, once known: the same for
	 * every FDE of it (a file has a few CIEs for thousands of FDEs). */
	struct cfa_state init;
	bool init_known;
};

struct parse {
	struct cfi_table *t;
	const __u8 *sec;
	size_t size;
	__u64 vaddr; /* sh_addr of the section */
	bool debug_frame;
	struct cie cie;
	bool have_cie;
	__u64 fde_begin;  /* the address the last FDE parsed starts at */
	size_t fde_first; /* its first row */
	int err;	  /* fatal: -ENOMEM or -E2BIG */
};

/* Append @row, unless compact() would drop it: a row of the same FDE
 * with the rule of the one before it goes, and a function start replaces
 * the previous function's end at the same address (FDEs in address order:
 * a large binary had a fifth fewer rows to hold and sort). */
static int push_row(struct parse *ps, const struct cfi_row *row)
{
	struct cfi_table *t = ps->t;
	struct cfi_row *last = t->n ? &t->rows[t->n - 1] : NULL;
	int err;

	if (last && t->n > ps->fde_first && cfi__same_rule(last, row))
		return 0;
	if (last && t->n <= ps->fde_first && last->pc == row->pc &&
	    last->cfa_type == UNWIND_CFA_NONE && row->cfa_type != UNWIND_CFA_NONE) {
		*last = *row;
		return 0;
	}
	if (t->n < t->cap && !array__new_window(t->n, sizeof(*t->rows))) {
		t->rows[t->n++] = *row; /* room, and no new window to populate */
		return 0;
	}
	err = array__grow((void **)&t->rows, &t->cap, t->n, sizeof(*t->rows), 1024, CFI_MAX_ROWS);
	if (err)
		return err;
	array__populate(t->rows, t->n, sizeof(*t->rows), t->cap);
	t->rows[t->n++] = *row;
	return 0;
}

/* Recognise the two expressions real x86_64 code uses for the CFA. */
static void cfa_expression(struct cfa_state *s, const __u8 *e, __u64 len)
{
	/* PLT: DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and;
	 * DW_OP_lit10|11; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus */
	static const __u8 plt[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a,
				   0x00, 0x2a, 0x33, 0x24, 0x22};
	struct cursor r = {e, e + len, false};
	__s64 off;

	if (len == sizeof(plt) && !memcmp(e, plt, 6) && !memcmp(e + 7, plt + 7, 4) &&
	    (e[6] == 0x3a || e[6] == 0x3b)) {
		s->cfa_kind = CFA_PLT;
		s->cfa_off = e[6] - 0x30; /* lit10 / lit11 */
		return;
	}
	/* Realigned frame (main, start_thread): DW_OP_breg6 OFF; DW_OP_deref */
	if (len >= 3 && e[0] == 0x76) {
		r.p++;
		off = cursor__sleb(&r);
		if (!r.bad && r.p + 1 == r.end && *r.p == 0x06) {
			s->cfa_kind = CFA_DEREF_RBP;
			s->cfa_off = off;
			return;
		}
	}
	s->cfa_kind = CFA_BAD;
}

/* Factored offsets wrap instead of overflowing (hostile input). */
static __s64 mul(__u64 a, __s64 b)
{
	return (__s64)(a * (__u64)b);
}

static void set_rule(struct cfa_state *s, __u64 reg, __u64 ra_reg, int rule, __s64 off)
{
	if (reg == REG_RBP) {
		s->rbp_rule = rule;
		s->rbp_off = off;
	} else if (reg == ra_reg) {
		s->ra_rule = rule;
		s->ra_off = off;
	}
}

static void restore_rule(struct cfa_state *s, const struct cfa_state *init, __u64 reg, __u64 ra_reg)
{
	if (reg == REG_RBP) {
		s->rbp_rule = init->rbp_rule;
		s->rbp_off = init->rbp_off;
	} else if (reg == ra_reg) {
		s->ra_rule = init->ra_rule;
		s->ra_off = init->ra_off;
	}
}

static void state_to_row(const struct cfa_state *s, const struct cie *c, __u64 pc,
			 struct cfi_row *row)
{
	memset(row, 0, sizeof(*row));
	row->pc = pc;
	row->rbp_type = UNWIND_RBP_UNKNOWN;
	if (c->signal) {
		row->cfa_type = UNWIND_CFA_SIGNAL;
		return;
	}
	if (s->ra_rule == RULE_UNDEF) {
		row->cfa_type = UNWIND_CFA_END;
		return;
	}
	row->cfa_type = UNWIND_CFA_UNSUPPORTED;
	if (c->ra_reg != REG_RA || s->ra_rule != RULE_OFFSET || s->ra_off != -8)
		return;
	switch (s->cfa_kind) {
	case CFA_REG:
		if (s->cfa_reg != REG_RSP && s->cfa_reg != REG_RBP)
			return;
		if (s->cfa_off < UNWIND_CFA_OFF_MIN || s->cfa_off > UNWIND_CFA_OFF_MAX)
			return;
		row->cfa_type = s->cfa_reg == REG_RSP ? UNWIND_CFA_RSP : UNWIND_CFA_RBP;
		break;
	case CFA_PLT:
		row->cfa_type = UNWIND_CFA_PLT;
		break;
	case CFA_DEREF_RBP:
		if (s->cfa_off < UNWIND_CFA_OFF_MIN || s->cfa_off > UNWIND_CFA_OFF_MAX)
			return;
		row->cfa_type = UNWIND_CFA_DEREF_RBP;
		break;
	default:
		return;
	}
	row->cfa_off = (__s32)s->cfa_off;
	if (s->rbp_rule == RULE_SAME) {
		row->rbp_type = UNWIND_RBP_SAME;
	} else if (s->rbp_rule == RULE_OFFSET && !(s->rbp_off & 7) && s->rbp_off >= -1024 &&
		   s->rbp_off <= 1016) {
		row->rbp_type = UNWIND_RBP_AT_CFA;
		row->rbp_off = (__s16)s->rbp_off;
	}
}

/* Run the CFA program [p, end). With @emit, rows go to the table for
 * addresses [*loc, pc_end); without, it only builds the CIE's initial state.
 * Returns false when the program is malformed. */
static bool run_program(struct parse *ps, const __u8 *p, const __u8 *end, struct cfa_state *s,
			const struct cfa_state *init, __u64 *loc, __u64 pc_end, bool emit)
{
	const struct cie *c = &ps->cie;
	struct cfa_state stack[CFI_MAX_STATES];
	struct cursor r = {p, end, false};
	unsigned int depth = 0;
	struct cfi_row row;
	__u64 reg, len, nloc;
	__s64 off;

	while (r.p < r.end && !r.bad) {
		__u8 op = *r.p++, low = op & 0x3f;

		nloc = *loc;
		switch (op >> 6) {
		case 1: /* DW_CFA_advance_loc */
			nloc = *loc + low * c->code_align;
			goto advance;
		case 2: /* DW_CFA_offset */
			off = mul(cursor__uleb(&r), c->data_align);
			set_rule(s, low, c->ra_reg, RULE_OFFSET, off);
			continue;
		case 3: /* DW_CFA_restore */
			if (!init)
				return false;
			restore_rule(s, init, low, c->ra_reg);
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: /* set_loc */
			nloc = rd_encoded(&r, ps->debug_frame ? PE_ABSPTR : c->fde_enc,
					  ps->vaddr + (__u64)(r.p - ps->sec));
			goto advance;
		case 0x02:
			nloc = *loc + cursor__fixed(&r, 1) * c->code_align;
			goto advance;
		case 0x03:
			nloc = *loc + cursor__fixed(&r, 2) * c->code_align;
			goto advance;
		case 0x04:
			nloc = *loc + cursor__fixed(&r, 4) * c->code_align;
			goto advance;
		case 0x05: /* offset_extended */
			reg = cursor__uleb(&r);
			off = mul(cursor__uleb(&r), c->data_align);
			set_rule(s, reg, c->ra_reg, RULE_OFFSET, off);
			break;
		case 0x06: /* restore_extended */
			reg = cursor__uleb(&r);
			if (!init)
				return false;
			restore_rule(s, init, reg, c->ra_reg);
			break;
		case 0x07: /* undefined */
			set_rule(s, cursor__uleb(&r), c->ra_reg, RULE_UNDEF, 0);
			break;
		case 0x08: /* same_value */
			set_rule(s, cursor__uleb(&r), c->ra_reg, RULE_SAME, 0);
			break;
		case 0x09: /* register */
			reg = cursor__uleb(&r);
			cursor__uleb(&r);
			set_rule(s, reg, c->ra_reg, RULE_BAD, 0);
			break;
		case 0x0a: /* remember_state */
			if (depth == CFI_MAX_STATES)
				return false;
			stack[depth++] = *s;
			break;
		case 0x0b: /* restore_state: every rule, CFA included */
			if (!depth)
				return false;
			*s = stack[--depth];
			break;
		case 0x0c: /* def_cfa */
			s->cfa_kind = CFA_REG;
			s->cfa_reg = cursor__uleb(&r);
			s->cfa_off = (__s64)cursor__uleb(&r);
			break;
		case 0x0d: /* def_cfa_register */
			if (s->cfa_kind != CFA_REG)
				s->cfa_kind = CFA_BAD;
			s->cfa_reg = cursor__uleb(&r);
			break;
		case 0x0e: /* def_cfa_offset */
			if (s->cfa_kind != CFA_REG)
				s->cfa_kind = CFA_BAD;
			s->cfa_off = (__s64)cursor__uleb(&r);
			break;
		case 0x0f: /* def_cfa_expression */
			len = cursor__uleb(&r);
			if (r.bad || len > (__u64)(r.end - r.p))
				return false;
			cfa_expression(s, r.p, len);
			r.p += len;
			break;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = cursor__uleb(&r);
			len = cursor__uleb(&r);
			if (r.bad || len > (__u64)(r.end - r.p))
				return false;
			r.p += len;
			set_rule(s, reg, c->ra_reg, RULE_BAD, 0);
			break;
		case 0x11: /* offset_extended_sf */
			reg = cursor__uleb(&r);
			off = mul((__u64)cursor__sleb(&r), c->data_align);
			set_rule(s, reg, c->ra_reg, RULE_OFFSET, off);
			break;
		case 0x12: /* def_cfa_sf */
			s->cfa_kind = CFA_REG;
			s->cfa_reg = cursor__uleb(&r);
			s->cfa_off = mul((__u64)cursor__sleb(&r), c->data_align);
			break;
		case 0x13: /* def_cfa_offset_sf */
			if (s->cfa_kind != CFA_REG)
				s->cfa_kind = CFA_BAD;
			s->cfa_off = mul((__u64)cursor__sleb(&r), c->data_align);
			break;
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf */
			reg = cursor__uleb(&r);
			if (op == 0x14)
				cursor__uleb(&r);
			else
				cursor__sleb(&r);
			set_rule(s, reg, c->ra_reg, RULE_BAD, 0);
			break;
		case 0x2e: /* GNU_args_size */
			cursor__uleb(&r);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = cursor__uleb(&r);
			off = mul(0 - cursor__uleb(&r), c->data_align);
			set_rule(s, reg, c->ra_reg, RULE_OFFSET, off);
			break;
		default:
			return false; /* unknown opcode: operands unknown */
		}
		continue;
	advance:
		if (r.bad)
			return false;
		if (!emit)
			continue; /* advance in a CIE: ignore */
		if (nloc < *loc || nloc > pc_end)
			return false;
		if (nloc > *loc) {
			state_to_row(s, c, *loc, &row);
			ps->err = push_row(ps, &row);
			if (ps->err)
				return false;
			*loc = nloc;
		}
	}
	return !r.bad;
}

/* Parse the CIE at section offset @off (cached: most FDEs share one). */
static bool parse_cie(struct parse *ps, size_t off)
{
	struct cie *c = &ps->cie;
	struct cursor r;
	const char *aug;
	size_t auglen;
	__u64 len, id, alen;
	__u8 version;
	bool is64 = false;

	if (ps->have_cie && c->off == off)
		return true;
	ps->have_cie = false;
	c->init_known = false;
	if (off >= ps->size)
		return false;
	r.p = ps->sec + off;
	r.end = ps->sec + ps->size;
	r.bad = false;
	len = cursor__fixed(&r, 4);
	if (len == 0xffffffffu) {
		len = cursor__fixed(&r, 8);
		is64 = true;
	}
	if (r.bad || len > (__u64)(r.end - r.p))
		return false;
	r.end = r.p + len;
	id = cursor__fixed(&r, is64 ? 8 : 4);
	if (ps->debug_frame ? id != (is64 ? ~0ull : 0xffffffffu) : id != 0)
		return false;
	memset(c, 0, sizeof(*c));
	c->off = off;
	c->fde_enc = PE_ABSPTR;
	version = (__u8)cursor__fixed(&r, 1);
	if (r.bad || (version != 1 && version != 3 && version != 4))
		return false;
	aug = (const char *)r.p;
	auglen = strnlen(aug, (size_t)(r.end - r.p));
	if (auglen == (size_t)(r.end - r.p))
		return false;
	r.p += auglen + 1;
	if (version == 4) {
		if (cursor__fixed(&r, 1) != 8) /* address size */
			return false;
		cursor__fixed(&r, 1); /* segment selector size */
	}
	c->code_align = cursor__uleb(&r);
	c->data_align = cursor__sleb(&r);
	c->ra_reg = version == 1 ? cursor__fixed(&r, 1) : cursor__uleb(&r);
	if (auglen && aug[0] == 'z') {
		const __u8 *aend;

		c->has_z = true;
		alen = cursor__uleb(&r);
		if (r.bad || alen > (__u64)(r.end - r.p))
			return false;
		aend = r.p + alen;
		for (size_t i = 1; i < auglen && !r.bad; i++) {
			struct cursor ar = {r.p, aend, false};
			__u8 enc;

			if (aug[i] == 'R') {
				c->fde_enc = (__u8)cursor__fixed(&ar, 1);
			} else if (aug[i] == 'P') {
				enc = (__u8)cursor__fixed(&ar, 1);
				/* The personality pointer: read to skip it. */
				rd_encoded(&ar, enc & (__u8)~PE_INDIRECT, 0);
			} else if (aug[i] == 'L') {
				cursor__fixed(&ar, 1);
			} else if (aug[i] == 'S') {
				c->signal = true;
			} else if (aug[i] == 'B' || aug[i] == 'G') {
				/* AArch64 / MTE markers: no data */
			} else {
				break; /* unknown: the rest is skipped via the length */
			}
			if (ar.bad)
				return false;
			r.p = ar.p;
		}
		r.p = aend;
	} else if (auglen) {
		return false; /* "eh" and other pre-'z' augmentations */
	}
	if (r.bad || !c->code_align)
		return false;
	c->insns = r.p;
	c->insns_end = r.end;
	ps->have_cie = true;
	return true;
}

/* Parse the FDE whose body (after the CIE pointer) is [p, end). */
static bool parse_fde(struct parse *ps, const __u8 *p, const __u8 *end)
{
	struct cie *c = &ps->cie;
	struct cfa_state init = {.cfa_kind = CFA_UNDEF, .rbp_rule = RULE_SAME, .ra_rule = RULE_BAD};
	struct cursor r = {p, end, false};
	struct cfa_state s;
	struct cfi_row row;
	__u64 begin, range, loc;
	__u8 enc = ps->debug_frame ? PE_ABSPTR : c->fde_enc;

	begin = rd_encoded(&r, enc, ps->vaddr + (__u64)(r.p - ps->sec));
	range = rd_encoded(&r, enc & 0x0f, 0);
	if (c->has_z) {
		__u64 alen = cursor__uleb(&r);

		if (r.bad || alen > (__u64)(r.end - r.p))
			return false;
		r.p += alen;
	}
	/* Rows sort by pc << 1 (cfi__row_key()): addresses from 2^63 on are no
	 * code's, and would wrap. */
	if (r.bad || !range || begin + range < begin || begin + range >= 1ull << 63)
		return false;
	ps->fde_begin = begin;
	ps->fde_first = ps->t->n;
	/* The CIE's program runs once, not once per FDE (a large program
	 * has thousands of FDEs of a few CIEs), unless it moved the location
	 * (an advance or set_loc there, which compilers do not emit): then
	 * once per FDE. */
	if (c->init_known) {
		init = c->init;
	} else {
		loc = begin;
		if (!run_program(ps, c->insns, c->insns_end, &init, NULL, &loc, begin, false))
			return false;
		if (loc == begin) {
			c->init = init;
			c->init_known = true;
		}
		begin = loc;
	}
	s = init;
	loc = begin;
	if (!run_program(ps, r.p, r.end, &s, &init, &loc, begin + range, true))
		return false;
	state_to_row(&s, c, loc, &row);
	if (loc < begin + range)
		ps->err = push_row(ps, &row);
	if (!ps->err) {
		memset(&row, 0, sizeof(row));
		row.pc = begin + range;
		row.cfa_type = UNWIND_CFA_NONE;
		row.rbp_type = UNWIND_RBP_UNKNOWN;
		ps->err = push_row(ps, &row);
	}
	if (c->signal)
		ps->t->st.signal_fdes++;
	return !ps->err;
}

/* What parse_entry() found. */
enum entry_kind { ENTRY_END, ENTRY_BAD, ENTRY_CIE, ENTRY_FDE };

/* Read the CIE or FDE at section offset @off, pushing an FDE's rows (a
 * malformed FDE's are dropped and counted). *@next gets the offset past
 * it. ENTRY_END at the .eh_frame terminator or a length past the section
 * (counted bad); ps->err set on a fatal error. */
static enum entry_kind parse_entry(struct parse *ps, size_t off, size_t *next)
{
	struct cursor r = {ps->sec + off, ps->sec + ps->size, false};
	size_t cie_off, before = ps->t->n;
	struct cfi_row keep = {0};
	const __u8 *body, *idp;
	bool is64 = false;
	__u64 len, id;

	len = cursor__fixed(&r, 4);
	if (len == 0)
		return ENTRY_END; /* .eh_frame terminator */
	if (len == 0xffffffffu) {
		len = cursor__fixed(&r, 8);
		is64 = true;
	}
	if (r.bad || len > (__u64)(r.end - r.p)) {
		ps->t->st.bad_entries++;
		return ENTRY_END;
	}
	*next = (size_t)(r.p - ps->sec) + (size_t)len;
	r.end = r.p + len;
	idp = r.p;
	id = cursor__fixed(&r, is64 ? 8 : 4);
	body = r.p;
	if (r.bad) {
		ps->t->st.bad_entries++;
		return ENTRY_BAD;
	}
	if (ps->debug_frame ? id == (is64 ? ~0ull : 0xffffffffu) : id == 0) {
		ps->t->st.cies++;
		return ENTRY_CIE;
	}
	if (ps->debug_frame)
		cie_off = (size_t)id;
	else
		cie_off = id <= (__u64)(idp - ps->sec) ? (size_t)(idp - ps->sec - id) : ps->size;
	ps->t->st.fdes++;
	if (before)
		keep = ps->t->rows[before - 1]; /* its first row may replace it */
	if (!parse_cie(ps, cie_off) || !parse_fde(ps, body, r.end)) {
		if (!ps->err) {
			ps->t->st.bad_entries++;
			ps->t->n = before; /* drop the rows of a malformed FDE */
			if (before)
				ps->t->rows[before - 1] = keep;
		}
		return ENTRY_BAD;
	}
	return ENTRY_FDE;
}

static void parse_section(struct parse *ps)
{
	size_t off = 0, next = 0;

	while (!ps->err && ps->size - off >= 4 && parse_entry(ps, off, &next) != ENTRY_END)
		off = next;
}

/* The number of FDEs in .eh_frame, and of CIEs in *@ncies, read from the
 * entry headers alone; 0 when an entry's length runs past the section. */
static __u64 count_fdes(const struct parse *ps, __u64 *ncies)
{
	size_t off = 0;
	__u64 n = 0;

	*ncies = 0;
	while (ps->size - off >= 8) {
		struct cursor r = {ps->sec + off, ps->sec + ps->size, false};
		__u64 len = cursor__fixed(&r, 4);

		if (!len)
			break;
		if (len == 0xffffffffu)
			return 0; /* 64-bit entries: not in .eh_frame_hdr's 4-byte table */
		if (len > (__u64)(r.end - r.p) || len < 4)
			return 0;
		if (cursor__fixed(&r, 4))
			n++;
		else
			(*ncies)++;
		off = (size_t)(r.p - ps->sec) - 4 + (size_t)len;
	}
	return n;
}

/* Walk the FDEs of .eh_frame in the order of .eh_frame_hdr's search table
 * @hdr (the linker's --eh-frame-hdr: every FDE once, by the address it
 * starts at), so that their rows come out sorted and compact() has no sort
 * to do (it was half of a large binary's parse). False, with nothing
 * pushed, when the table is not the common form (version 1, a 4-byte
 * count, 4-byte entries relative to the table) or does not list each FDE
 * of the section once in strictly ascending order (counted, and each
 * entry's address checked against its FDE's): then the section is parsed
 * in its own order. */
static bool parse_by_hdr(struct parse *ps, const struct section *hdr)
{
	const struct cfi_stats st0 = ps->t->st;
	const __u8 *h = hdr->data;
	__u64 count, i, prev = 0, ncies;
	struct cursor r;
	size_t next;

	if (hdr->size < 12 || h[0] != 1 || h[2] != PE_UDATA4 || h[3] != (PE_DATAREL | PE_SDATA4))
		return false;
	r = (struct cursor){h + 4, h + hdr->size, false};
	rd_encoded(&r, h[1], hdr->addr + 4); /* eh_frame_ptr: the section is known */
	count = cursor__fixed(&r, 4);
	if (r.bad || !count || count > (__u64)(r.end - r.p) / 8 || count != count_fdes(ps, &ncies))
		return false;
	for (i = 0; i < count && !ps->err; i++) {
		__u64 loc = hdr->addr + (__u64)(__s64)(__s32)cursor__fixed(&r, 4);
		__u64 fde = hdr->addr + (__u64)(__s64)(__s32)cursor__fixed(&r, 4);
		enum entry_kind k;

		if ((i && loc <= prev) || fde < ps->vaddr || fde - ps->vaddr >= ps->size)
			goto fallback;
		prev = loc;
		ps->fde_begin = ~0ull;
		k = parse_entry(ps, (size_t)(fde - ps->vaddr), &next);
		if (k == ENTRY_END || k == ENTRY_CIE || (k == ENTRY_FDE && ps->fde_begin != loc))
			goto fallback;
	}
	ps->t->st.cies = ncies; /* not visited: counted by count_fdes() */
	ps->t->st.hdr_order = 1;
	return true; /* or a fatal ps->err: cfi__parse() fails the file */
fallback:
	ps->t->n = 0;
	ps->t->st = st0;
	return false;
}

/* Sort (unless in order already), keep one row per address, merge runs of
 * equal rules. */
static void compact(struct cfi_table *t)
{
	size_t i, o = 0;

	if (!t->n)
		return;
	if (!cfi__rows_sorted(t->rows, t->n))
		cfi__sort_rows(t->rows, t->n);
	for (i = 0; i < t->n; i++) {
		const struct cfi_row *r = &t->rows[i];

		if (i && t->rows[i - 1].pc == r->pc)
			continue; /* first of the address wins (see cmp_row) */
		if (o && cfi__same_rule(&t->rows[o - 1], r))
			continue;
		t->rows[o++] = *r;
	}
	t->n = o;
}

/* Bytes of a section per row reserved up front (cfi__parse()). */
#define CFI_BYTES_PER_ROW 4

/* Parse .eh_frame (else .debug_frame) of @s into @t, if there is one. */
static int parse_cfi(struct cfi_table *t, const struct cfi_sections *s)
{
	const struct section *use = s->eh.found == 1 ? &s->eh : s->dbg.found == 1 ? &s->dbg : NULL;
	struct parse ps;
	size_t want;

	if (!use)
		return 0;
	memset(&ps, 0, sizeof(ps));
	ps.t = t;
	ps.sec = use->data;
	ps.size = use->size;
	ps.vaddr = use->addr;
	ps.debug_frame = use == &s->dbg;
	t->st.from_debug_frame = ps.debug_frame;
	/* Room for the rows at once (a failure leaves it to growth): a row
	 * takes a few bytes of CFA instructions, and doubling from 1024 would
	 * copy a large table, into freshly faulted pages, many times. Room
	 * never written is never resident. */
	want = ps.size / CFI_BYTES_PER_ROW < CFI_MAX_ROWS ? ps.size / CFI_BYTES_PER_ROW
							  : CFI_MAX_ROWS - 1;
	if (want > 1024)
		array__grow((void **)&t->rows, &t->cap, want, sizeof(*t->rows), 1024, CFI_MAX_ROWS);
	if (ps.debug_frame || s->hdr.found != 1 || !parse_by_hdr(&ps, &s->hdr))
		parse_section(&ps);
	if (ps.err)
		return ps.err;
	compact(t);
	return 0;
}

int cfi__parse(const void *image, size_t size, struct cfi_table **out)
{
	struct cfi_sections s = {0};
	struct cfi_table *t = NULL;
	bool cfi, go;
	int err;

	*out = NULL;
	err = cfi__find_sections(image, size, &s);
	if (err)
		return err;
	if (s.go.found != 1)
		cfi__find_go(&s);
	cfi = s.eh.found == 1 || s.dbg.found == 1;
	go = s.go.found == 1;
	if (!cfi && !go)
		return s.eh.found < 0 || s.dbg.found < 0 || s.go.found < 0 ? -E2BIG : -ENOENT;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	cfi__read_segments(image, size, t);
	err = parse_cfi(t, &s);
	if (!err && go) {
		err = cfi__add_go(t, &s.go, s.go_text ? s.go_text : s.text.addr);
		if (err == -ENOENT && cfi)
			err = 0; /* not a pclntab this reads: the CFI alone */
	}
	if (err) {
		cfi__free(t);
		return err;
	}
	for (size_t i = 0; i < t->n; i++)
		t->st.unsupported += t->rows[i].cfa_type == UNWIND_CFA_UNSUPPORTED;
	*out = t;
	return 0;
}

bool cfi__needs_go_data(const void *image, size_t size)
{
	struct cfi_sections s = {0};

	return !cfi__find_sections(image, size, &s) && s.go_note && s.go.found != 1 &&
	       s.rodata.found == 1;
}

void cfi__free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

const struct cfi_row *cfi__rows(const struct cfi_table *t, size_t *n)
{
	*n = t->n;
	return t->rows;
}

const struct cfi_row *cfi__find(const struct cfi_table *t, __u64 pc)
{
	size_t lo = search__upto(t->rows, t->n, sizeof(*t->rows), offsetof(struct cfi_row, pc), pc);

	return lo ? &t->rows[lo - 1] : NULL;
}

int cfi__offset_to_vaddr(const struct cfi_table *t, __u64 off, __u64 *vaddr)
{
	for (unsigned int i = 0; i < t->nseg; i++) {
		const struct cfi_segment *g = &t->seg[i];

		if (off >= g->offset && off - g->offset < g->filesz) {
			*vaddr = g->vaddr + (off - g->offset);
			return 0;
		}
	}
	return -ENOENT;
}

int cfi__segment(const struct cfi_table *t, unsigned int i, __u64 *offset, __u64 *vaddr,
		 __u64 *filesz)
{
	if (i >= t->nseg)
		return -ENOENT;
	*offset = t->seg[i].offset;
	*vaddr = t->seg[i].vaddr;
	*filesz = t->seg[i].filesz;
	return 0;
}

void cfi__stats(const struct cfi_table *t, struct cfi_stats *st)
{
	*st = t->st;
}

__u64 cfi__pack(const struct cfi_row *r)
{
	__u64 cfa = (__u64)r->cfa_type & 7, rbp = (__u64)r->rbp_type & 3;
	__u64 rbp_off = 0, cfa_off = 0;

	if (r->cfa_off < UNWIND_CFA_OFF_MIN || r->cfa_off > UNWIND_CFA_OFF_MAX)
		cfa = UNWIND_CFA_UNSUPPORTED;
	else
		cfa_off = (__u64)(__s64)r->cfa_off & ((1ull << 19) - 1);
	if (rbp == UNWIND_RBP_AT_CFA) {
		if ((r->rbp_off & 7) || r->rbp_off < -1024 || r->rbp_off > 1016)
			rbp = UNWIND_RBP_UNKNOWN;
		else
			rbp_off = (__u64)(__s64)(r->rbp_off / 8) & 0xff;
	}
	return (r->pc & 0xffffffffull) | cfa << 32 | rbp << 35 | rbp_off << 37 | cfa_off << 45;
}
