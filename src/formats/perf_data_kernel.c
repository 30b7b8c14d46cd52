/* perf_data_kernel.c - kernel frame names for perf.data input (see
 * perf_data_kernel.h). */
#include <errno.h>
#include <string.h>

#include "formats/perf_data_kernel.h"
#include "model/profile.h"
#include "symbolize/elfsym.h"
#include "symbolize/kallsyms.h"
#include "util/buf.h"

#define KASLR_ALIGN (2ull << 20)

/* The kernel mapping of @p: its index, 0 when none. */
static __u32 kernel_mapping(const struct profile *p)
{
	size_t i;

	for (i = 1; i < profile__mapping_count(p); i++) {
		const struct profile_mapping_entry *m = profile__mapping(p, (__u32)i);

		if (!strcmp(profile__string(p, m->filename, NULL), "[kernel.kallsyms]"))
			return (__u32)i;
	}
	return 0;
}

/* Whether the running kernel is the recording's: same build-id, same text
 * address. */
static bool same_kernel(const struct profile *p, __u32 map, const struct perf_data_kernel_src *src,
			const struct kallsyms *k)
{
	const struct profile_mapping_entry *m = profile__mapping(p, map);
	char hex[ELFSYM_BUILD_ID_HEX];
	__u64 stext, etext;
	struct buf notes;
	bool same;

	if (!m->attr)
		return false;
	buf__init(&notes, 1u << 20);
	same = !buf__read_file(&notes, src->notes) &&
	       !elfsym__note_build_id(notes.data, notes.len, hex, sizeof(hex)) &&
	       !strcmp(hex, profile__attr(p, m->attr)->str_value);
	buf__release(&notes);
	kallsyms__text_range(k, &stext, &etext);
	return same && stext >= m->start && stext - m->start < KASLR_ALIGN;
}

static void edit(void *arg, __u32 loc, size_t pos, struct profile_frame *f,
		 struct profile_mapping_desc *map)
{
	const struct kallsyms *k = arg;

	(void)loc, (void)pos, (void)map;
	/* A rebuilt frame's type is its profile.frame.type attribute. */
	if (f->type_name && !strcmp(f->type_name, "kernel") && (!f->function || !*f->function) &&
	    !f->nlines)
		f->function = kallsyms__lookup(k, f->address, NULL, NULL);
}

int perf_data_kernel__name(struct profile **p, const struct perf_data_kernel_src *src,
			   bool *named)
{
	struct kallsyms *k = NULL;
	struct profile *out = NULL;
	__u32 map = kernel_mapping(*p);
	int err = 0;

	*named = false;
	if (!map || kallsyms__load(src->kallsyms, &k))
		return 0;
	if (same_kernel(*p, map, src, k)) {
		err = profile__rebuild(*p, edit, k, &out);
		if (!err) {
			profile__free(*p);
			*p = out;
			*named = true;
		}
	}
	kallsyms__free(k);
	return err;
}
