/* jvmproc_names.c - Java thread names, read from outside: the JavaThread's
 * java.lang.Thread object, its "name" String, found through the classes'
 * own field descriptions (JDK 17's FieldInfo array, JDK 21+'s field info
 * stream). Everything read is untrusted and bounded. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/jvmproc.h"
#include "proc/pyproc.h"

#define MAX_SUPERS 16	      /* classes walked up to the one declaring a field */
#define MAX_FIELDS_BYTES 8192 /* bytes of a class's field descriptions read */

struct nctx {
	const char *root;
	int pid;
	const struct jvmproc_layout *l;
	bool coops;
	__u64 oop_base, klass_base;
	__u32 oop_shift, klass_shift;
};

static int rd(const struct nctx *c, __u64 addr, void *buf, size_t len)
{
	return pyproc__read_mem(c->root, c->pid, addr, buf, len);
}

/* The object a reference field at @obj + @off points to. */
static int ref_at(const struct nctx *c, __u64 obj, __u32 off, __u64 *out)
{
	__u32 n;

	if (!c->coops)
		return rd(c, obj + off, out, sizeof(*out));
	if (rd(c, obj + off, &n, sizeof(n)))
		return -EFAULT;
	*out = n ? c->oop_base + ((__u64)n << c->oop_shift) : 0;
	return 0;
}

static int klass_of(const struct nctx *c, __u64 obj, __u64 *k)
{
	__u32 n;

	if (rd(c, obj + c->l->oop_klass, &n, sizeof(n)) || !n)
		return -EFAULT;
	*k = c->klass_base + ((__u64)n << c->klass_shift);
	return 0;
}

/* Is Symbol @sym the string @name? */
static bool symbol_is(const struct nctx *c, __u64 sym, const char *name)
{
	size_t n = strlen(name);
	char body[64];
	__u16 len;

	if (!sym || n > sizeof(body) || rd(c, sym + c->l->sym_length, &len, sizeof(len)) ||
	    len != n || rd(c, sym + c->l->sym_body, body, n))
		return false;
	return !memcmp(body, name, n);
}

static bool cp_name_is(const struct nctx *c, __u64 cp, __u32 idx, const char *name)
{
	__u64 sym;

	return idx && !rd(c, cp + c->l->cp_size + (__u64)idx * 8, &sym, sizeof(sym)) &&
	       symbol_is(c, sym, name);
}

/* JDK 17: Array<u2> of FieldInfo, fi_slots u2 each, the first
 * _java_fields_count of them Java fields. */
static int fields17(const struct nctx *c, __u64 ik, __u64 cp, const char *name, __u32 *off)
{
	const struct jvmproc_layout *l = c->l;
	__u16 d[MAX_FIELDS_BYTES / 2], count;
	__u64 arr;
	__s32 len;
	__u32 i;

	if (rd(c, ik + l->ik_fields, &arr, sizeof(arr)) || !arr ||
	    rd(c, ik + l->ik_java_fields, &count, sizeof(count)) || rd(c, arr, &len, sizeof(len)))
		return -EFAULT;
	if (len < 0 || (size_t)len > MAX_FIELDS_BYTES / 2 ||
	    (__u32)count * l->fi_slots > (__u32)len ||
	    rd(c, arr + l->array_data, d, (size_t)len * 2))
		return -EINVAL;
	for (i = 0; i < count; i++) {
		const __u16 *f = d + i * l->fi_slots;
		__u32 packed = (__u32)f[l->fi_low] | (__u32)f[l->fi_high] << 16;

		if ((f[0] & l->acc_internal) ||
		    (packed & ((1u << l->fi_tag_size) - 1)) != l->fi_tag_offset)
			continue;
		if (cp_name_is(c, cp, f[l->fi_name], name)) {
			*off = packed >> l->fi_tag_size;
			return 0;
		}
	}
	return -ENOENT;
}

/* An UNSIGNED5 int of JDK 21+ (no byte 0; bytes from 192 on continue). */
static int u5(const __u8 *p, size_t n, size_t *pos, __u32 *out)
{
	__u32 sum = 0, shift = 0, i;

	for (i = 0; i < 5; i++) {
		__u32 b;

		if (*pos >= n || !p[*pos])
			return -EINVAL;
		b = p[(*pos)++] - 1u;
		sum += b << shift;
		if (b < 191 || i == 4) {
			*out = sum;
			return 0;
		}
		shift += 6;
	}
	return -EINVAL;
}

/* JDK 21+: the field info stream: the counts of Java and injected fields,
 * then per field its name and signature indices, offset, access flags,
 * field flags and the optional initializer, generic signature and
 * contention group the flags announce. */
static int fields21(const struct nctx *c, __u64 ik, __u64 cp, const char *name, __u32 *off)
{
	__u8 d[MAX_FIELDS_BYTES];
	__u32 count, injected, i, v[5], extra;
	size_t pos = 0, n;
	__u64 arr;
	__s32 len;

	if (rd(c, ik + c->l->ik_fieldinfo_stream, &arr, sizeof(arr)) || !arr ||
	    rd(c, arr, &len, sizeof(len)) || len < 0)
		return -EFAULT;
	n = (size_t)len < sizeof(d) ? (size_t)len : sizeof(d);
	if (rd(c, arr + c->l->array_data, d, n) || u5(d, n, &pos, &count) ||
	    u5(d, n, &pos, &injected))
		return -EINVAL;
	for (i = 0; i < count; i++) {
		int k;

		for (k = 0; k < 5; k++)
			if (u5(d, n, &pos, &v[k]))
				return -EINVAL;
		/* initialized (bit 0), generic (bit 2), contended (bit 4) */
		for (k = 0; k < 5; k += 2)
			if ((v[4] >> k) & 1 && u5(d, n, &pos, &extra))
				return -EINVAL;
		if (cp_name_is(c, cp, v[0], name)) {
			*off = v[2];
			return 0;
		}
	}
	return -ENOENT;
}

/* The offset of field @name declared by class @k or one of its supers. */
static int field_offset(const struct nctx *c, __u64 k, const char *name, __u32 *off)
{
	int i, err = -ENOENT;

	for (i = 0; i < MAX_SUPERS && k; i++) {
		__u64 cp;

		if (rd(c, k + c->l->ik_constants, &cp, sizeof(cp)) || !cp)
			return -EFAULT;
		err = c->l->ik_fieldinfo_stream != JVMPROC_NONE ? fields21(c, k, cp, name, off)
								: fields17(c, k, cp, name, off);
		if (err != -ENOENT)
			return err;
		if (rd(c, k + c->l->klass_super, &k, sizeof(k)))
			return -EFAULT;
	}
	return err;
}

static size_t put_utf8(__u32 ch, char *o)
{
	if (ch < 0x80) {
		o[0] = (char)ch;
		return 1;
	}
	if (ch < 0x800) {
		o[0] = (char)(0xc0 | ch >> 6);
		o[1] = (char)(0x80 | (ch & 63));
		return 2;
	}
	if (ch >= 0xd800 && ch < 0xe000)
		ch = 0xfffd; /* half a surrogate pair: not kept */
	o[0] = (char)(0xe0 | ch >> 12);
	o[1] = (char)(0x80 | ((ch >> 6) & 63));
	o[2] = (char)(0x80 | (ch & 63));
	return 3;
}

/* String @s (a byte[] "value", Latin-1 or UTF-16 by "coder") as UTF-8. */
static int string_utf8(const struct nctx *c, __u64 s, char *out, size_t cap)
{
	__u8 raw[2 * JVMPROC_MAX_NAME];
	__u32 voff, coff, i, units;
	size_t o = 0, ulen;
	__u64 k, value;
	__s32 len;
	__u8 coder;

	if (klass_of(c, s, &k) || field_offset(c, k, "value", &voff) ||
	    field_offset(c, k, "coder", &coff) || ref_at(c, s, voff, &value) || !value ||
	    rd(c, s + coff, &coder, 1) || coder > 1)
		return -EINVAL;
	/* byte[]: mark word, narrow class, length, then the bytes */
	if (rd(c, value + 12, &len, sizeof(len)) || len < 0)
		return -EFAULT;
	units = (__u32)len >> coder;
	if (units > JVMPROC_MAX_NAME)
		units = JVMPROC_MAX_NAME;
	if (rd(c, value + 16, raw, (size_t)units << coder))
		return -EFAULT;
	for (i = 0; i < units; i++) {
		__u32 ch = coder ? (__u32)raw[2 * i] | (__u32)raw[2 * i + 1] << 8 : raw[i];
		char u[3];

		ulen = put_utf8(ch ? ch : '?', u);
		if (o + ulen >= cap)
			break;
		memcpy(out + o, u, ulen);
		o += ulen;
	}
	out[o] = 0;
	return 0;
}

int jvmproc__thread_name(const char *proc_root, int pid, const struct jvmproc *jp, __u64 thread,
			 char *out, size_t cap)
{
	const struct jvmproc_layout *l = &jp->layout;
	struct nctx c = {.root = proc_root, .pid = pid, .l = l, .coops = jp->compressed_oops};
	__u64 handle, tobj, k, name;
	__s32 shift;
	__u32 noff;

	if (!cap)
		return -EINVAL;
	out[0] = 0;
	if (!jp->names)
		return -ENOTSUP;
	if (rd(&c, l->a_oop_base, &c.oop_base, 8) || rd(&c, l->a_oop_shift, &shift, 4) ||
	    shift < 0 || shift > 8)
		return -EFAULT;
	c.oop_shift = (__u32)shift;
	if (rd(&c, l->a_klass_base, &c.klass_base, 8) || rd(&c, l->a_klass_shift, &shift, 4) ||
	    shift < 0 || shift > 10)
		return -EFAULT;
	c.klass_shift = (__u32)shift;
	if (rd(&c, thread + l->jt_thread_obj + l->oh_obj, &handle, 8))
		return -EFAULT;
	if (!handle || rd(&c, handle, &tobj, 8) || !tobj)
		return -ENOENT;
	if (klass_of(&c, tobj, &k) || field_offset(&c, k, "name", &noff) ||
	    ref_at(&c, tobj, noff, &name))
		return -EINVAL;
	if (!name)
		return -ENOENT;
	return string_utf8(&c, name, out, cap);
}
