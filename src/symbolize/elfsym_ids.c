/* elfsym_ids.c - an ELF file's identity: GNU and Go build-ids from its
 * notes, its .gnu_debuglink and its loadable segments (see elfsym.h). */
#include "symbolize/elfsym_int.h"

static size_t align4(size_t v)
{
	return (v + 3) & ~(size_t)3;
}

int elfsym__note_build_id(const void *notes, size_t len, char *hex, size_t size)
{
	const unsigned char *p = notes;
	size_t off = 0;

	if (!notes || size < ELFSYM_BUILD_ID_HEX)
		return -EINVAL;
	while (len - off >= 12) {
		__u32 hdr[3];
		size_t namesz, descsz, name_off, desc_off;

		memcpy(hdr, p + off, sizeof(hdr));
		namesz = hdr[0];
		descsz = hdr[1];
		name_off = off + 12;
		if (namesz > len - name_off || align4(namesz) > len - name_off)
			return -ENOENT;
		desc_off = name_off + align4(namesz);
		if (descsz > len - desc_off)
			return -ENOENT;
		if (hdr[2] == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name_off, "GNU", 4) &&
		    descsz > 0 && descsz <= ELFSYM_MAX_BUILD_ID) {
			hex__encode(hex, p + desc_off, descsz);
			return 0;
		}
		if (align4(descsz) > len - desc_off)
			return -ENOENT;
		off = desc_off + align4(descsz);
	}
	return -ENOENT;
}

/* Scan one Elf_Data of notes for the GNU build-id. */
static bool notes_build_id(Elf_Data *data, char *hex)
{
	GElf_Nhdr nhdr;
	size_t off = 0, next, name_off, desc_off;

	if (!data || !data->d_buf)
		return false;
	while ((next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) && nhdr.n_descsz > 0 &&
		    nhdr.n_descsz <= ELFSYM_MAX_BUILD_ID) {
			hex__encode(hex, (const __u8 *)data->d_buf + desc_off, nhdr.n_descsz);
			return true;
		}
		off = next;
	}
	return false;
}

/* Find the build-id in SHT_NOTE sections, else in PT_NOTE segments. */
bool elfsym__find_build_id(Elf *elf, char *hex)
{
	Elf_Scn *scn = NULL;
	size_t i, nph;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if (notes_build_id(elf_getdata(scn, NULL), hex))
			return true;
	}
	if (elf_getphdrnum(elf, &nph))
		return false;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		if (notes_build_id(elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
							ELF_T_NHDR),
				   hex))
			return true;
	}
	return false;
}

/* Go's build-id ("Go" note of type 4 in .note.go.buildid) into @out. */
void elfsym__find_go_build_id(Elf *elf, char *out)
{
	Elf_Scn *scn = NULL;
	GElf_Nhdr nhdr;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t off = 0, next, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		while ((next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
			if (nhdr.n_type == NT_GO_BUILD_ID &&
			    (nhdr.n_namesz == 3 || nhdr.n_namesz == 4) &&
			    !memcmp((const char *)data->d_buf + name_off, "Go", 3) &&
			    nhdr.n_descsz > 0 && nhdr.n_descsz < ELFSYM_BUILD_ID_HEX) {
				memcpy(out, (const char *)data->d_buf + desc_off, nhdr.n_descsz);
				out[nhdr.n_descsz] = '\0';
				if (strlen(out) == nhdr.n_descsz)
					return;
			}
			off = next;
		}
	}
	out[0] = '\0';
}

/* The section named @name, or NULL. */
Elf_Scn *elfsym__find_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* .gnu_debuglink (see debuglink__parse()); a malformed one
 * counts as none. */
int elfsym__read_debuglink(Elf *elf, struct elfsym *e)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elfsym__find_section(elf, ".gnu_debuglink", &sh);
	Elf_Data *data;
	char name[DEBUGLINK_MAX_NAME];
	bool swap;

	if (!scn || sh.sh_type == SHT_NOBITS)
		return 0;
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf)
		return 0;
	swap = elf_getident(elf, NULL)[EI_DATA] !=
	       (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB);
	if (debuglink__parse(data->d_buf, data->d_size, swap, name, sizeof(name),
			     &e->debuglink_crc))
		return 0;
	e->debuglink = strdup(name);
	return e->debuglink ? 0 : -ENOMEM;
}

/* The PT_LOAD segments; *@interp: the file has PT_INTERP. */
int elfsym__read_segments(Elf *elf, struct elfsym *e, bool *interp)
{
	size_t i, nph;

	if (elf_getphdrnum(elf, &nph))
		return -ENOEXEC;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return -ENOEXEC;
		if (ph.p_type == PT_INTERP)
			*interp = true;
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		if (e->nsegs == ELFSYM_MAX_SEGMENTS) {
			e->truncated = true;
			break;
		}
		e->segs[e->nsegs].offset = ph.p_offset;
		e->segs[e->nsegs].filesz = ph.p_filesz;
		e->segs[e->nsegs].vaddr = ph.p_vaddr;
		e->nsegs++;
	}
	return 0;
}
