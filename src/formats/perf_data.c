/* perf_data.c - perf.data file header, events and feature sections, and the
 * driver of the reader (see perf_data.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/perf_data_int.h"
#include "model/profile.h"
#include "util/array.h"
#include "util/hex.h"
#include "util/intern.h"
#include "util/log.h"
#include "util/sort.h"

#define PD_MAGIC 0x32454c4946524550ull /* "PERFILE2" */
#define PD_MAGIC_SWAPPED 0x50455246494c4532ull
#define PD_FILE_HEADER 104
#define PD_PIPE_HEADER 16
#define PD_FEAT_BITS 256
#define PD_ATTR_MIN 64 /* PERF_ATTR_SIZE_VER0 */
#define PD_MAX_IDS (1u << 16)

/* Feature section numbers (perf's HEADER_*). */
enum {
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_ARCH = 6,
	FEAT_NRCPUS = 7,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
	FEAT_SAMPLE_TIME = 21,
	FEAT_CLOCK_DATA = 29,
};

int pd__fail(struct pd *pd, __u64 off, const char *what)
{
	if (pd->errlen && !pd->err[0])
		snprintf(pd->err, pd->errlen, "%s at offset %llu", what, (unsigned long long)off);
	return -EBADMSG;
}

int pd__str(struct pd *pd, const char *s, size_t len, __u32 *idx)
{
	char tmp[4096];

	len = strnlen(s, len);
	if (len >= sizeof(tmp))
		len = sizeof(tmp) - 1;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	return intern__put(pd->strs, tmp, len + 1, idx, NULL);
}

const char *pd__get(const struct pd *pd, __u32 idx)
{
	return intern__get(pd->strs, idx, NULL);
}

const char *pd__build_id(const struct pd *pd, __u32 path)
{
	return path < pd->bid_cap && pd->bid_of[path] ? pd__get(pd, pd->bid_of[path] - 1) : NULL;
}

int pd__set_build_id(struct pd *pd, __u32 path, const char *hex)
{
	size_t old = pd->bid_cap;
	__u32 b;
	int err;

	err = array__grow((void **)&pd->bid_of, &pd->bid_cap, path, sizeof(*pd->bid_of), 256,
			  PROFILE_MAX_ENTRIES);
	if (err)
		return err;
	if (pd->bid_cap > old)
		memset(pd->bid_of + old, 0, (pd->bid_cap - old) * sizeof(*pd->bid_of));
	err = pd__str(pd, hex, strlen(hex), &b);
	if (!err)
		pd->bid_of[path] = b + 1;
	return err;
}

/* perf's name of a hardware or software event without a description. */
static void default_name(const struct pd_attr *a, char *out, size_t len)
{
	static const char *const hw[] = {"cycles", "instructions", "cache-references",
					  "cache-misses", "branches", "branch-misses"};
	static const char *const sw[] = {"cpu-clock",	  "task-clock",	  "page-faults",
					 "context-switches", "cpu-migrations", "minor-faults",
					 "major-faults"};

	if (a->type == 0 && a->config < sizeof(hw) / sizeof(hw[0]))
		snprintf(out, len, "%s", hw[a->config]);
	else if (a->type == 1 && a->config < sizeof(sw) / sizeof(sw[0]))
		snprintf(out, len, "%s", sw[a->config]);
	else
		snprintf(out, len, "event-%u-%llu", a->type, (unsigned long long)a->config);
}

int pd__add_attr(struct pd *pd, const __u8 *a, size_t size, const __u8 *idv, size_t nids,
		 __u64 off)
{
	struct pd_attr *e;
	__u64 flags;
	size_t i;
	int err;

	if (size < PD_ATTR_MIN)
		return pd__fail(pd, off, "event attribute shorter than 64 bytes");
	if (pd->nattrs >= PERF_DATA_MAX_ATTRS)
		return pd__fail(pd, off, "more than 64 events");
	e = &pd->attrs[pd->nattrs];
	memset(e, 0, sizeof(*e));
	e->type = rd32(a);
	e->config = rd64(a + 8);
	e->period = rd64(a + 16);
	e->sample_type = rd64(a + 24);
	e->read_format = rd64(a + 32);
	flags = rd64(a + 40);
	e->freq = flags & (1ull << 10);
	e->sample_id_all = flags & (1ull << 18);
	if (size >= 80)
		e->branch_sample_type = rd64(a + 72);
	if (size >= 88)
		e->regs_user = rd64(a + 80);
	default_name(e, e->name, sizeof(e->name));
	for (i = 0; i < nids; i++) {
		err = array__grow((void **)&pd->ids, &pd->ids_cap, pd->nids, sizeof(*pd->ids), 64,
				  PD_MAX_IDS);
		if (err)
			return err == -E2BIG ? pd__fail(pd, off, "too many event ids") : err;
		pd->ids[pd->nids++] = (struct pd_id){.id = rd64(idv + 8 * i), .attr = pd->nattrs};
		pd->ids_sorted = false;
	}
	pd->nattrs++;
	return 0;
}

/* Event attributes of a file-mode header: @n entries of @esize bytes. */
static int read_attrs(struct pd *pd, __u64 off, __u64 size, __u64 esize)
{
	__u64 i, n;
	int err;

	if (esize < PD_ATTR_MIN + 16 || esize > 4096 || off > pd->len || size > pd->len - off ||
	    size % esize)
		return pd__fail(pd, 24, "bad event attribute section");
	n = size / esize;
	if (!n)
		return pd__fail(pd, 24, "no event attribute");
	for (i = 0; i < n; i++) {
		const __u8 *a = pd->data + off + i * esize;
		__u64 ids_off = rd64(a + esize - 16), ids_size = rd64(a + esize - 8);

		if (ids_off > pd->len || ids_size > pd->len - ids_off || ids_size % 8)
			return pd__fail(pd, off + i * esize + esize - 16, "bad event id section");
		err = pd__add_attr(pd, a, esize - 16, pd->data + ids_off, ids_size / 8,
				   off + i * esize);
		if (err)
			return err;
	}
	return 0;
}

/* A feature string (u32 length, then the bytes) at *@p of @end: copied into
 * @out (@len bytes, cut). 0 or -1 past @end. */
static int feat_str(const __u8 **p, const __u8 *end, char *out, size_t len)
{
	__u32 n;

	if (end - *p < 4)
		return -1;
	n = rd32(*p);
	if ((size_t)(end - *p - 4) < n)
		return -1;
	if (out && len) {
		size_t k = strnlen((const char *)*p + 4, n);

		k = k < len - 1 ? k : len - 1;
		memcpy(out, *p + 4, k);
		out[k] = '\0';
	}
	*p += 4 + (size_t)n;
	return 0;
}

int pd__build_id_rec(struct pd *pd, const __u8 *r, size_t size)
{
	char hex[2 * 20 + 1];
	size_t bsize = 20;
	__u16 misc;
	__u32 path;
	int err;

	if (size < 8 + 4 + 24 + 1)
		return 0;
	misc = (__u16)(rd32(r + 4) & 0xffff);
	if (misc & PD_MISC_BUILD_ID_SIZE)
		bsize = r[12 + 20] <= 20 ? r[12 + 20] : 20;
	if (!bsize)
		return 0;
	hex__encode(hex, r + 12, bsize);
	hex[2 * bsize] = '\0';
	err = pd__str(pd, (const char *)r + 36, size - 36, &path);
	return err ?: pd__set_build_id(pd, path, hex);
}

/* HEADER_BUILD_ID: entries, each with an event header giving its size. */
static int feat_build_ids(struct pd *pd, const __u8 *p, const __u8 *end)
{
	int err;

	while (end - p >= 8) {
		__u16 size = (__u16)(rd32(p + 4) >> 16);

		if (size < 8 || size > end - p)
			break;
		err = pd__build_id_rec(pd, p, size);
		if (err)
			return err;
		p += size;
	}
	return 0;
}

/* HEADER_EVENT_DESC: each event's name, matched to its attribute by id
 * (else by position). */
static void feat_event_desc(struct pd *pd, const __u8 *p, const __u8 *end)
{
	__u32 n, asize, i, j, nids;
	char name[64];

	if (end - p < 8)
		return;
	n = rd32(p);
	asize = rd32(p + 4);
	p += 8;
	for (i = 0; i < n && i < PERF_DATA_MAX_ATTRS; i++) {
		unsigned int which = i;

		if ((size_t)(end - p) < (size_t)asize + 4)
			return;
		p += asize;
		nids = rd32(p);
		p += 4;
		if (feat_str(&p, end, name, sizeof(name)) || (size_t)(end - p) / 8 < nids)
			return;
		for (j = 0; nids && j < pd->nids; j++)
			if (pd->ids[j].id == rd64(p)) {
				which = pd->ids[j].attr;
				break;
			}
		p += (size_t)nids * 8;
		if (which < pd->nattrs && name[0])
			snprintf(pd->attrs[which].name, sizeof(pd->attrs[which].name), "%s", name);
	}
}

static void feat_cmdline(struct pd *pd, const __u8 *p, const __u8 *end)
{
	char *out = pd->st->cmdline, arg[256];
	size_t used = 0, cap = sizeof(pd->st->cmdline);
	__u32 n, i;

	if (end - p < 4)
		return;
	n = rd32(p);
	p += 4;
	for (i = 0; i < n && used + 1 < cap && !feat_str(&p, end, arg, sizeof(arg)); i++) {
		int k = snprintf(out + used, cap - used, "%s%s", i ? " " : "", arg);

		used += k > 0 && (size_t)k < cap - used ? (size_t)k : cap - used - 1;
	}
}

/* HEADER_CLOCK_DATA (perf record -k/--clockid): version, clock id, then one
 * reading of the wall clock and of the samples' clock taken together, which
 * places every sample time on the epoch whichever host or boot recorded it. */
static void feat_clock_data(struct pd *pd, const __u8 *p, size_t size)
{
	__u64 wall, clk;

	if (size < 24 || rd32(p) < 1)
		return;
	wall = rd64(p + 8);
	clk = rd64(p + 16);
	if (!wall)
		return;
	pd->clock_off = (__s64)(wall - clk);
	pd->have_clock = true;
	pd->st->clock_data = true;
	pd->st->clockid = (__s32)rd32(p + 4);
}

int pd__feature(struct pd *pd, unsigned int bit, const __u8 *p, size_t size)
{
	const __u8 *end = p + size;
	struct perf_data_stats *st = pd->st;

	switch (bit) {
	case FEAT_BUILD_ID:
		return feat_build_ids(pd, p, end);
	case FEAT_HOSTNAME:
		feat_str(&p, end, st->hostname, sizeof(st->hostname));
		break;
	case FEAT_OSRELEASE:
		feat_str(&p, end, st->osrelease, sizeof(st->osrelease));
		break;
	case FEAT_ARCH:
		feat_str(&p, end, st->arch, sizeof(st->arch));
		break;
	case FEAT_NRCPUS:
		if (size >= 8)
			st->nr_cpus = rd32(p + 4);
		break;
	case FEAT_CMDLINE:
		feat_cmdline(pd, p, end);
		break;
	case FEAT_EVENT_DESC:
		feat_event_desc(pd, p, end);
		break;
	case FEAT_SAMPLE_TIME:
		if (size >= 16 && rd64(p + 8) > rd64(p)) {
			pd->t_first = rd64(p);
			pd->t_last = rd64(p + 8);
			pd->have_time = true;
		}
		break;
	case FEAT_CLOCK_DATA:
		feat_clock_data(pd, p, size);
		break;
	}
	return 0;
}

/* The feature sections after the data section, one per bit set in the
 * header's bitmap at offset 72. */
static int read_features(struct pd *pd)
{
	__u64 at = pd->data_off + pd->data_size;
	unsigned int bit;
	int err;

	for (bit = 0; bit < PD_FEAT_BITS; bit++) {
		__u64 off, size;

		if (!(rd64(pd->data + 72 + 8 * (bit / 64)) & (1ull << (bit % 64))))
			continue;
		if (at > pd->len || pd->len - at < 16)
			return pd__fail(pd, at, "truncated file: feature section table cut");
		off = rd64(pd->data + at);
		size = rd64(pd->data + at + 8);
		if (off > pd->len || size > pd->len - off)
			return pd__fail(pd, at, "truncated file: feature section past the end");
		err = pd__feature(pd, bit, pd->data + off, size);
		if (err)
			return err;
		at += 16;
	}
	return 0;
}

static int read_header(struct pd *pd)
{
	__u64 magic, hsize;
	int err;

	if (pd->len < PD_PIPE_HEADER)
		return pd__fail(pd, 0, "truncated file: no perf.data header");
	magic = rd64(pd->data);
	if (magic == PD_MAGIC_SWAPPED)
		return pd__fail(pd, 0, "big-endian perf.data is not supported");
	if (magic != PD_MAGIC)
		return pd__fail(pd, 0, "no perf.data magic (PERFILE2)");
	hsize = rd64(pd->data + 8);
	if (hsize == PD_PIPE_HEADER) {
		pd->st->pipe = true;
		pd->data_off = PD_PIPE_HEADER;
		pd->data_size = pd->len - PD_PIPE_HEADER;
		return 0;
	}
	if (hsize != PD_FILE_HEADER)
		return pd__fail(pd, 8, "bad perf.data header size");
	if (pd->len < PD_FILE_HEADER)
		return pd__fail(pd, pd->len, "truncated file: perf.data header cut");
	pd->data_off = rd64(pd->data + 40);
	pd->data_size = rd64(pd->data + 48);
	if (pd->data_off > pd->len || pd->data_size > pd->len - pd->data_off)
		return pd__fail(pd, pd->len,
				"truncated file: the data section goes past the end of the file");
	err = read_attrs(pd, rd64(pd->data + 24), rd64(pd->data + 32), rd64(pd->data + 16));
	return err ?: read_features(pd);
}

bool perf_data__looks_like(const void *data, size_t len)
{
	return len >= 8 && rd64(data) == PD_MAGIC;
}

static void pd_free(struct pd *pd)
{
	intern__free(pd->strs);
	free(pd->bid_of);
	free(pd->ids);
	free(pd->maps);
	free(pd->comms);
	free(pd->forks);
	free(pd->ips);
	free(pd->frames);
	free(pd->mdesc);
	profile__free(pd->p);
}

int perf_data__parse(const void *data, size_t len, const struct perf_data_unwind_ops *uw,
		     struct profile **out, struct perf_data_stats *st, char *errbuf, size_t errlen)
{
	struct pd pd = {.data = data, .len = len, .uw = uw, .st = st, .err = errbuf,
			.errlen = errlen};
	int err = -ENOMEM;

	*out = NULL;
	memset(st, 0, sizeof(*st));
	if (errlen)
		errbuf[0] = '\0';
	pd.strs = intern__new(PROFILE_MAX_ENTRIES);
	pd.ips = calloc(PERF_DATA_MAX_FRAMES, sizeof(*pd.ips));
	pd.frames = calloc(PERF_DATA_MAX_FRAMES, sizeof(*pd.frames));
	pd.mdesc = calloc(PERF_DATA_MAX_FRAMES, sizeof(*pd.mdesc));
	pd.p = profile__new();
	if (!pd.strs || !pd.ips || !pd.frames || !pd.mdesc || !pd.p)
		goto out;
	err = read_header(&pd);
	if (!err)
		err = pd__records(&pd);
	if (!err && !st->samples)
		err = pd__fail(&pd, pd.data_off + pd.data_size, "no sample record before the end");
	if (!err)
		err = profile__prune(pd.p);
	if (err)
		goto out;
	if (pd.have_time && pd.t_last > pd.t_first)
		st->duration_ns = pd.t_last - pd.t_first + (st->cpu_clock ? st->period : 0);
	else
		st->duration_ns = st->cpu_clock ? st->period * st->samples : 0;
	if (!st->duration_ns)
		st->duration_ns = 1;
	if (pd.have_time && !pd.have_clock)
		pr_info("perf.data without clock data: sample times placed with this host's "
			"clocks, right for a recording made here since boot (record with perf "
			"record -k monotonic for exact wall-clock times)");
	*out = pd.p;
	pd.p = NULL;
out:
	pd_free(&pd);
	return err;
}
