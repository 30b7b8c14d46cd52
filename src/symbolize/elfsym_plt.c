/* elfsym_plt.c - names of PLT stubs ("memcmp@plt"), as perf and objdump
 * give them.
 *
 * A PLT stub has no symbol of its own: it jumps through a GOT slot, and the
 * dynamic relocation that fills that slot names the function. Each stub of
 * .plt, .plt.sec and .plt.got is decoded to the slot it reads (x86-64:
 * "jmp *disp(%rip)", after an optional endbr64 and bnd prefix; AArch64:
 * "adrp x16; ldr x17, [x16, #off]"), and the slot is looked up among the
 * relocations that reference a dynamic symbol. A slot filled by an
 * IRELATIVE relocation (an ifunc called inside its own library, as in
 * libc) is named after the symbol at its resolver's address, as perf does.
 * Stubs that read no relocated slot (the lazy-binding header) stay
 * unnamed. Other architectures get no stub names.
 */
#include <stdio.h>

#include "symbolize/elfsym_int.h"

/* Relocations kept (16 bytes each); a library with more PLT slots keeps
 * its stubs unnamed past the cap. */
#define PLT_MAX_RELOCS (1u << 17)
/* Bytes of stub names kept. */
#define PLT_MAX_NAMES (16u << 20)

struct slot {
	__u64 got;	  /* address of the GOT slot */
	const char *name; /* dynamic symbol, borrowed from libelf; NULL: ifunc */
	__u64 resolver;	  /* IRELATIVE: the ifunc resolver's address */
};

struct slots {
	struct slot *v;
	size_t n, cap;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/* The slot at @got, or NULL. */
static const struct slot *find_slot(const struct slots *s, __u64 got)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].got < got)
			lo = mid + 1;
		else if (s->v[mid].got > got)
			hi = mid;
		else
			return &s->v[mid];
	}
	return NULL;
}

/* Whether @type is the IRELATIVE relocation of @machine. */
static bool irelative(int machine, __u64 type)
{
	return (machine == EM_X86_64 && type == 37) || (machine == EM_AARCH64 && type == 1032);
}

/* The relocations of section @scn (REL or RELA against a .dynsym) that
 * name a symbol. 0, -ENOMEM, or -E2BIG at the cap (those kept stay). */
static int read_relocs(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, int machine, struct slots *s)
{
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	Elf_Data *data = elf_getdata(scn, NULL), *syms;
	GElf_Shdr symsh;
	size_t i, n;

	if (!symscn || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM || !data ||
	    !sh->sh_entsize)
		return 0;
	syms = elf_getdata(symscn, NULL);
	if (!syms)
		return 0;
	n = (size_t)(sh->sh_size / sh->sh_entsize);
	for (i = 0; i < n; i++) {
		__u64 off, info, addend = 0;
		const char *name = NULL;
		GElf_Sym sym;

		if (sh->sh_type == SHT_RELA) {
			GElf_Rela r;

			if (!gelf_getrela(data, (int)i, &r))
				break;
			off = r.r_offset;
			info = r.r_info;
			addend = (__u64)r.r_addend;
		} else {
			GElf_Rel r;

			if (!gelf_getrel(data, (int)i, &r))
				break;
			off = r.r_offset;
			info = r.r_info;
		}
		if (!GELF_R_SYM(info)) {
			if (!irelative(machine, GELF_R_TYPE(info)) || !addend)
				continue;
		} else {
			if (!gelf_getsym(syms, (int)GELF_R_SYM(info), &sym))
				continue;
			name = elf_strptr(elf, symsh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
		}
		if (s->n == PLT_MAX_RELOCS)
			return -E2BIG;
		if (array__grow((void **)&s->v, &s->cap, s->n, sizeof(*s->v), 64, PLT_MAX_RELOCS))
			return -ENOMEM;
		s->v[s->n++] = (struct slot){off, name, addend};
	}
	return 0;
}

static __u32 le32(const unsigned char *p)
{
	return (__u32)p[0] | (__u32)p[1] << 8 | (__u32)p[2] << 16 | (__u32)p[3] << 24;
}

/* The GOT slot the x86-64 stub of @len bytes at @p (address @addr) jumps
 * through, or 0. */
static __u64 x86_64_slot(const unsigned char *p, size_t len, __u64 addr)
{
	static const unsigned char endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t k = 0;

	if (len >= 4 && !memcmp(p, endbr64, 4))
		k = 4;
	if (k < len && p[k] == 0xf2) /* bnd */
		k++;
	if (k + 6 > len || p[k] != 0xff || p[k + 1] != 0x25)
		return 0;
	return addr + k + 6 + (__u64)(__s64)(__s32)le32(p + k + 2);
}

/* The same for AArch64: adrp x16, PAGE; ldr x17, [x16, #OFF]. */
static __u64 aarch64_slot(const unsigned char *p, size_t len, __u64 addr)
{
	__u32 adrp, ldr;
	__s64 imm;

	for (size_t k = 0; k + 8 <= len; k += 4) {
		adrp = le32(p + k);
		ldr = le32(p + k + 4);
		/* adrp x16 (op=1, bits 28..24 = 10000, rd = 16) */
		if ((adrp & 0x9f00001f) != 0x90000010)
			continue;
		/* ldr x17, [x16, #imm12 * 8] (64-bit unsigned offset) */
		if ((ldr & 0xffc003ff) != 0xf9400211)
			return 0;
		imm = (__s64)(((adrp >> 29) & 3) | ((adrp >> 5) & 0x7ffff) << 2);
		if (imm & (1 << 20))
			imm -= 1 << 21;
		return (((addr + k) & ~0xfffull) + (__u64)(imm << 12)) + ((ldr >> 10) & 0xfff) * 8;
	}
	return 0;
}

/* A named stub, kept until every stub is named: naming an ifunc's stub
 * looks up the file's symbols, which must not grow meanwhile. */
struct stub {
	__u64 vaddr, size, sec_end;
	size_t name; /* offset in the names buffer */
};

struct stubs {
	struct stub *v;
	size_t n, cap;
	struct buf names;
};

/* Name the stubs of PLT section @scn into @out. 0, -ENOMEM or -E2BIG. */
static int section_stubs(Elf_Scn *scn, const GElf_Shdr *sh, int machine, const struct slots *s,
			 elfsym_plt_resolve_fn resolve, void *arg, struct stubs *out)
{
	Elf_Data *data = elf_rawdata(scn, NULL);
	size_t ent = sh->sh_entsize == 8 || sh->sh_entsize == 16 ? sh->sh_entsize : 16, off;

	if (!data || !data->d_buf || sh->sh_type == SHT_NOBITS)
		return 0;
	for (off = 0; off + ent <= data->d_size; off += ent) {
		const unsigned char *p = (const unsigned char *)data->d_buf + off;
		__u64 addr = sh->sh_addr + off, got;
		const struct slot *sl;
		const char *name;
		size_t start = out->names.len;

		got = machine == EM_X86_64 ? x86_64_slot(p, ent, addr) : aarch64_slot(p, ent, addr);
		sl = got ? find_slot(s, got) : NULL;
		name = !sl ? NULL : sl->name ? sl->name : resolve(arg, sl->resolver);
		if (!name)
			continue;
		if (out->n == PLT_MAX_RELOCS)
			return -E2BIG;
		if (array__grow((void **)&out->v, &out->cap, out->n, sizeof(*out->v), 64,
				PLT_MAX_RELOCS))
			return -ENOMEM;
		if (buf__append(&out->names, name, strnlen(name, ELFSYM_MAX_NAME - 5)) ||
		    buf__append(&out->names, "@plt", 5)) {
			out->names.len = start;
			return -E2BIG;
		}
		out->v[out->n++] = (struct stub){addr, ent, sh->sh_addr + sh->sh_size, start};
	}
	return 0;
}

int elfsym__plt_stubs(Elf *elf, elfsym_plt_resolve_fn resolve, elfsym_plt_fn add, void *arg)
{
	static const char *const plts[] = {".plt", ".plt.sec", ".plt.got"};
	static const char *const relocs[] = {".rela.plt", ".rel.plt", ".rela.dyn", ".rel.dyn"};
	struct slots s = {0};
	struct stubs st = {0};
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	size_t i;
	int err = 0;

	if (!gelf_getehdr(elf, &eh) || (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64))
		return 0;
	buf__init(&st.names, PLT_MAX_NAMES);
	/* The slots of .plt and .plt.sec are relocated in .rela.plt; those of
	 * .plt.got in .rela.dyn, read only when there is one. */
	for (i = 0; i < sizeof(relocs) / sizeof(relocs[0]) && (!err || err == -E2BIG); i++) {
		if (i >= 2 && !elfsym__find_section(elf, ".plt.got", &sh))
			break;
		scn = elfsym__find_section(elf, relocs[i], &sh);
		if (scn && (sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL))
			err = read_relocs(elf, scn, &sh, eh.e_machine, &s);
	}
	if (err && err != -E2BIG)
		goto out;
	err = 0;
	if (s.n)
		qsort(s.v, s.n, sizeof(*s.v), cmp_slot);
	for (i = 0; s.n && i < sizeof(plts) / sizeof(plts[0]) && !err; i++) {
		scn = elfsym__find_section(elf, plts[i], &sh);
		if (scn && sh.sh_flags & SHF_EXECINSTR)
			err = section_stubs(scn, &sh, eh.e_machine, &s, resolve, arg, &st);
	}
	if (err && err != -E2BIG)
		goto out;
	err = 0;
	for (i = 0; i < st.n && !err; i++)
		err = add(arg, st.v[i].vaddr, st.v[i].size,
			  (const char *)st.names.data + st.v[i].name, st.v[i].sec_end);
out:
	free(s.v);
	free(st.v);
	buf__release(&st.names);
	return err;
}
