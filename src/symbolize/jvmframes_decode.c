/* jvmframes_decode.c - the pure parts of naming Java frames: the BPF
 * words, HotSpot's compressed streams (line number tables, scopes) and
 * the merge with native frames. */
#include <errno.h>
#include <string.h>

#include "proc/jvmproc.h"
#include "symbolize/jvmframes.h"

void jvmframes__encode(const struct jvmframes_raw *r, __u64 words[2])
{
	words[0] = (r->addr & ((1ull << 48) - 1)) | (__u64)r->fingerprint << 48;
	words[1] = (__u64)r->pos | (__u64)r->kind << 32 | (__u64)r->flags << 40;
}

size_t jvmframes__decode(const __u64 *words, size_t nwords, struct jvmframes_raw *out, size_t cap)
{
	size_t n = 0, i;

	for (i = 0; i + 1 < nwords && n < cap; i += 2) {
		if (!(__u8)(words[i + 1] >> 32))
			continue; /* kind 0: padding, no frame */
		out[n].addr = words[i] & ((1ull << 48) - 1);
		out[n].fingerprint = (__u16)(words[i] >> 48);
		out[n].pos = (__u32)words[i + 1];
		out[n].kind = (__u8)(words[i + 1] >> 32);
		out[n].flags = (__u8)(words[i + 1] >> 40);
		n++;
	}
	return n;
}

/* ---- HotSpot's compressed streams ----
 * An unsigned int in 1 to 5 bytes (Pack200's UNSIGNED5, 64 high codes):
 * a byte below L ends the number; from JDK 21 byte values are offset by
 * one so that no byte is 0. Signed ints are zigzag coded. */

struct cstream {
	const __u8 *p;
	size_t len, pos;
	int x1;
};

static int cs_uint(struct cstream *s, __u32 *out)
{
	const unsigned x = s->x1 ? 1 : 0, l = 256 - 64 - x;
	__u32 sum = 0;
	unsigned shift = 0, i;

	for (i = 0; i < 5; i++) {
		unsigned b;

		if (s->pos >= s->len)
			return -EINVAL;
		b = s->p[s->pos++];
		if (b < x)
			return -EINVAL;
		b -= x;
		sum += (__u32)b << shift;
		if (b < l || i == 4) {
			*out = sum;
			return 0;
		}
		shift += 6; /* each later byte weighs 64 times more */
	}
	return -EINVAL;
}

static int cs_sint(struct cstream *s, __s32 *out)
{
	__u32 v;
	int err = cs_uint(s, &v);

	if (!err)
		*out = (__s32)((v >> 1) ^ (0u - (v & 1)));
	return err;
}

__s64 jvmframes__line(const __u8 *t, size_t len, __s32 bci, int x1)
{
	struct cstream s = {.p = t, .len = len, .x1 = x1};
	__s32 cur_bci = 0, cur_line = 0, best_bci = 0;
	__s64 best = 0;

	if (bci < 0)
		bci = 0; /* a method being entered: its first line */
	while (s.pos < s.len) {
		__u8 b = t[s.pos++];

		if (!b)
			break;
		if (b == 0xff) {
			__s32 db, dl;

			if (cs_sint(&s, &db) || cs_sint(&s, &dl))
				break;
			cur_bci += db;
			cur_line += dl;
		} else {
			cur_bci += b >> 3;
			cur_line += b & 7;
		}
		if (cur_bci == bci)
			return cur_line;
		if (cur_bci < bci && cur_bci >= best_bci) {
			best_bci = cur_bci;
			best = cur_line;
		}
	}
	return best > 0 ? best : 0;
}

/* A zero in a stream with runs of zeros (JDK 22+) is a 0 byte and a count;
 * only the first ints of a scope are read, so a run there is a zero. */
static int cs_uint_rle(struct cstream *s, __u32 *out)
{
	if (s->x1 && s->pos < s->len && !s->p[s->pos]) {
		*out = 0;
		s->pos = s->len; /* nothing after it is read */
		return 0;
	}
	return cs_uint(s, out);
}

int jvmframes__scope(const __u8 *p, size_t len, int x1, __u32 *sender, __u32 *method_index,
		     __s32 *bci)
{
	struct cstream s = {.p = p, .len = len, .x1 = x1};
	__u32 b;
	int err;

	err = cs_uint_rle(&s, sender);
	err = err ?: cs_uint_rle(&s, method_index);
	err = err ?: cs_uint_rle(&s, &b);
	if (err)
		return err;
	*bci = (__s32)b - 1; /* stored plus one: InvocationEntryBci is -1 */
	return 0;
}

/* ---- merge ---- */

size_t jvmframes__merge(const struct jvmproc *jp, const __u64 *pcs,
			const struct profile_frame *native, size_t nnative,
			const struct profile_frame *java, size_t njava, struct profile_frame *out,
			size_t cap)
{
	size_t i, j = 0, n = 0;

	for (i = 0; i < nnative && n < cap; i++) {
		if (!jp || j >= njava || pcs[i] < jp->code_lo || pcs[i] >= jp->code_hi)
			out[n++] = native[i];
		else
			out[n++] = java[j++];
	}
	for (; j < njava && n < cap; j++)
		out[n++] = java[j];
	return n;
}
