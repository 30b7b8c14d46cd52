#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "proc/elfsyms.h"
#include "proc/jvmproc.h"
#include "proc/pfile.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/pyproc.h"

/* ---- reading the live process through a few cached pages ---- */

#define MC_PAGES 8
#define MC_PAGE 4096u
#define NAME_MAX_LEN 128 /* longer names are none of those profcap wants */

struct memcache {
	const char *root;
	int pid;
	unsigned next;
	__u64 page[MC_PAGES]; /* page address + 1, 0 empty */
	__u8 data[MC_PAGES][MC_PAGE];
};

static const __u8 *mc_page(struct memcache *mc, __u64 addr)
{
	__u64 pg = addr & ~(__u64)(MC_PAGE - 1);
	unsigned i;

	for (i = 0; i < MC_PAGES; i++)
		if (mc->page[i] == pg + 1)
			return mc->data[i];
	i = mc->next++ % MC_PAGES;
	if (pyproc__read_mem(mc->root, mc->pid, pg, mc->data[i], MC_PAGE)) {
		mc->page[i] = 0;
		return NULL;
	}
	mc->page[i] = pg + 1;
	return mc->data[i];
}

static int mc_read(struct memcache *mc, __u64 addr, void *buf, size_t len)
{
	__u8 *out = buf;

	while (len) {
		const __u8 *p = mc_page(mc, addr);
		size_t in = MC_PAGE - (addr & (MC_PAGE - 1)), n = len < in ? len : in;

		if (!p)
			return -EFAULT;
		memcpy(out, p + (addr & (MC_PAGE - 1)), n);
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

static int mc_u64(struct memcache *mc, __u64 addr, __u64 *v)
{
	return mc_read(mc, addr, v, sizeof(*v));
}

/* A NUL-terminated name at @addr, at most NAME_MAX_LEN - 1 bytes. */
static int mc_str(struct memcache *mc, __u64 addr, char *buf)
{
	size_t i;

	for (i = 0; i < NAME_MAX_LEN; i++) {
		const __u8 *p = mc_page(mc, addr + i);

		if (!p)
			return -EFAULT;
		buf[i] = (char)p[(addr + i) & (MC_PAGE - 1)];
		if (!buf[i])
			return 0;
	}
	return -E2BIG;
}

/* ---- the exported description symbols ---- */

enum {
	S_STRUCTS,
	S_ST_STRIDE,
	S_ST_TYPE,
	S_ST_FIELD,
	S_ST_TSTR,
	S_ST_STATIC,
	S_ST_OFFSET,
	S_ST_ADDRESS,
	S_TYPES,
	S_TY_STRIDE,
	S_TY_NAME,
	S_TY_SIZE,
	S_INTS,
	S_IN_STRIDE,
	S_IN_NAME,
	S_IN_VALUE,
	S_N
};

static const char *const sym_names[S_N] = {
	"gHotSpotVMStructs",
	"gHotSpotVMStructEntryArrayStride",
	"gHotSpotVMStructEntryTypeNameOffset",
	"gHotSpotVMStructEntryFieldNameOffset",
	"gHotSpotVMStructEntryTypeStringOffset",
	"gHotSpotVMStructEntryIsStaticOffset",
	"gHotSpotVMStructEntryOffsetOffset",
	"gHotSpotVMStructEntryAddressOffset",
	"gHotSpotVMTypes",
	"gHotSpotVMTypeEntryArrayStride",
	"gHotSpotVMTypeEntryTypeNameOffset",
	"gHotSpotVMTypeEntrySizeOffset",
	"gHotSpotVMIntConstants",
	"gHotSpotVMIntConstantEntryArrayStride",
	"gHotSpotVMIntConstantEntryNameOffset",
	"gHotSpotVMIntConstantEntryValueOffset",
};

/* The values of the symbols (each a 64-bit variable of libjvm), read from
 * the live process: the tables' addresses, strides and member offsets. */
static int read_symbols(int fd, struct memcache *mc, __u64 start, __u64 v[S_N], __u64 *bias)
{
	struct elfsyms_query q[S_N];
	struct elfsyms_file f;
	int err, i;

	for (i = 0; i < S_N; i++)
		q[i] = (struct elfsyms_query){.name = sym_names[i], .types = 1u << STT_OBJECT};
	err = elfsyms__open(fd, &f);
	if (err)
		return err;
	*bias = start - f.load_base;
	err = elfsyms__dynsym(&f, q, S_N, NULL);
	elfsyms__close(&f);
	if (err)
		return err;
	for (i = 0; i < S_N; i++) {
		if (!q[i].found)
			return -ENOENT;
		err = mc_u64(mc, q[i].value + *bias, &v[i]);
		if (err)
			return err;
	}
	/* an entry is a few words, each member inside it: anything else is
	 * not HotSpot's table */
	for (i = 0; i < S_N; i++) {
		__u64 stride = i < S_TYPES  ? v[S_ST_STRIDE]
			       : i < S_INTS ? v[S_TY_STRIDE]
					    : v[S_IN_STRIDE];

		if (!stride || stride > 256)
			return -ENOTSUP;
		if (i != S_STRUCTS && i != S_TYPES && i != S_INTS && i != S_ST_STRIDE &&
		    i != S_TY_STRIDE && i != S_IN_STRIDE &&
		    v[i] + (i == S_ST_STATIC || i == S_IN_VALUE ? 4 : 8) > stride)
			return -ENOTSUP;
	}
	return 0;
}

static __u64 ent_u64(const __u8 *e, __u64 off)
{
	__u64 v;

	memcpy(&v, e + off, sizeof(v));
	return v;
}

static int read_structs(struct memcache *mc, const __u64 v[S_N], struct jvmproc_layout *l)
{
	char type[NAME_MAX_LEN], field[NAME_MAX_LEN], tstr[NAME_MAX_LEN];
	__u8 e[256];
	__u32 i;
	int err;

	for (i = 0; i < JVMPROC_MAX_ENTRIES; i++) {
		__u64 tp, fp, sp;
		__s32 is_static;

		err = mc_read(mc, v[S_STRUCTS] + (__u64)i * v[S_ST_STRIDE], e, v[S_ST_STRIDE]);
		if (err)
			return err;
		tp = ent_u64(e, v[S_ST_TYPE]);
		if (!tp)
			return 0; /* the table ends with a null type name */
		fp = ent_u64(e, v[S_ST_FIELD]);
		sp = ent_u64(e, v[S_ST_TSTR]);
		memcpy(&is_static, e + v[S_ST_STATIC], sizeof(is_static));
		if (mc_str(mc, tp, type) || !fp || mc_str(mc, fp, field))
			continue; /* too long: none profcap wants */
		if (!sp || mc_str(mc, sp, tstr))
			tstr[0] = 0;
		jvmproc__field(l, type, field, tstr, is_static ? 0 : ent_u64(e, v[S_ST_OFFSET]),
			       is_static ? ent_u64(e, v[S_ST_ADDRESS]) : 0);
	}
	return -E2BIG;
}

static int read_types_consts(struct memcache *mc, const __u64 v[S_N], struct jvmproc_layout *l)
{
	char name[NAME_MAX_LEN];
	__u8 e[256];
	__u32 i;
	int err;

	for (i = 0; i < JVMPROC_MAX_ENTRIES; i++) {
		err = mc_read(mc, v[S_TYPES] + (__u64)i * v[S_TY_STRIDE], e, v[S_TY_STRIDE]);
		if (err)
			return err;
		if (!ent_u64(e, v[S_TY_NAME]))
			break;
		if (!mc_str(mc, ent_u64(e, v[S_TY_NAME]), name))
			jvmproc__type(l, name, ent_u64(e, v[S_TY_SIZE]));
	}
	for (i = 0; i < JVMPROC_MAX_ENTRIES; i++) {
		__s32 val;

		err = mc_read(mc, v[S_INTS] + (__u64)i * v[S_IN_STRIDE], e, v[S_IN_STRIDE]);
		if (err)
			return err;
		if (!ent_u64(e, v[S_IN_NAME]))
			return 0;
		memcpy(&val, e + v[S_IN_VALUE], sizeof(val));
		if (!mc_str(mc, ent_u64(e, v[S_IN_NAME]), name))
			jvmproc__constant(l, name, val);
	}
	return -E2BIG;
}

/* ---- what the running JVM has set up ---- */

static int read_heaps(struct memcache *mc, struct jvmproc *jp)
{
	const struct jvmproc_layout *l = &jp->layout;
	__u64 arr, data, heap;
	__s32 len;
	int i, err;

	err = mc_u64(mc, l->a_heaps, &arr);
	if (err || !arr)
		return err ?: -EAGAIN;
	err = mc_read(mc, arr + l->garray_len, &len, sizeof(len));
	err = err ?: mc_u64(mc, arr + l->garray_data, &data);
	if (err)
		return err;
	if (len <= 0)
		return -EAGAIN;
	for (i = 0; i < len && jp->nheaps < JVMPROC_MAX_HEAPS; i++) {
		struct jvmproc_heap *h = &jp->heaps[jp->nheaps];
		__s32 log2;

		err = mc_u64(mc, data + (__u64)i * 8, &heap);
		err = err ?: mc_u64(mc, heap + l->heap_memory + l->vs_low_boundary, &h->lo);
		err = err ?: mc_u64(mc, heap + l->heap_memory + l->vs_high_boundary, &h->hi);
		err = err ?: mc_u64(mc, heap + l->heap_segmap + l->vs_low_boundary, &h->segmap);
		err = err ?: mc_read(mc, heap + l->heap_log2_seg, &log2, sizeof(log2));
		if (err)
			return err;
		if (h->hi <= h->lo || log2 < 4 || log2 > 16 || !h->segmap)
			return -ENOTSUP;
		h->log2_seg = (__u32)log2;
		jp->nheaps++;
	}
	return 0;
}

static int read_runtime(struct memcache *mc, struct jvmproc *jp)
{
	const struct jvmproc_layout *l = &jp->layout;
	__u64 sq = 0;
	__s32 limit = 0;
	int err;

	err = mc_u64(mc, l->a_low_bound, &jp->code_lo);
	err = err ?: mc_u64(mc, l->a_high_bound, &jp->code_hi);
	if (err)
		return err;
	if (!jp->code_lo || jp->code_hi <= jp->code_lo)
		return -EAGAIN;
	err = read_heaps(mc, jp);
	if (err)
		return err;
	err = mc_u64(mc, l->a_interp_code, &sq);
	if (err || !sq)
		return err ?: -EAGAIN;
	err = mc_u64(mc, sq + l->sq_buffer, &jp->interp_lo);
	err = err ?: mc_read(mc, sq + l->sq_limit, &limit, sizeof(limit));
	if (err)
		return err;
	if (!jp->interp_lo || limit <= 0)
		return -EAGAIN;
	jp->interp_hi = jp->interp_lo + (__u64)limit;
	if (l->a_call_stub_ret)
		mc_u64(mc, l->a_call_stub_ret, &jp->call_stub_ret);
	if (l->a_thread_list)
		jp->thread_list = l->a_thread_list;
	return 0;
}

/* ---- Java thread names: can they be read? ---- */

/* The values of the bool flags UseCompressedOops and
 * UseCompressedClassPointers from the JVM's flag table. */
static int read_flags(struct memcache *mc, const struct jvmproc_layout *l, bool *coops,
		      bool *cklass)
{
	char name[NAME_MAX_LEN];
	__u64 arr, n, i, np, addr;
	int found = 0;
	__u8 v;

	if (!l->a_flags || !l->a_num_flags || l->flag_size == JVMPROC_NONE ||
	    l->flag_name == JVMPROC_NONE || l->flag_addr == JVMPROC_NONE ||
	    mc_u64(mc, l->a_flags, &arr) || mc_u64(mc, l->a_num_flags, &n) || !arr)
		return -ENOTSUP;
	for (i = 0; i < n && i < JVMPROC_MAX_ENTRIES && found < 2; i++) {
		__u64 e = arr + i * l->flag_size;
		bool *dst;

		if (mc_u64(mc, e + l->flag_name, &np) || !np || mc_str(mc, np, name))
			continue;
		dst = !strcmp(name, "UseCompressedOops")	    ? coops
		      : !strcmp(name, "UseCompressedClassPointers") ? cklass
								    : NULL;
		if (!dst || mc_u64(mc, e + l->flag_addr, &addr) || mc_read(mc, addr, &v, 1))
			continue;
		*dst = v != 0;
		found++;
	}
	return found == 2 ? 0 : -ENOENT;
}

/* Names need the thread object's class, its fields and the String. */
static void check_names(struct memcache *mc, struct jvmproc *jp)
{
	const struct jvmproc_layout *l = &jp->layout;
	bool cklass = false;

	if (l->jt_thread_obj == JVMPROC_NONE || l->oh_obj == JVMPROC_NONE ||
	    l->oop_klass == JVMPROC_NONE || l->klass_super == JVMPROC_NONE ||
	    l->ik_constants == JVMPROC_NONE || l->array_data == JVMPROC_NONE || !l->a_oop_base ||
	    !l->a_oop_shift || !l->a_klass_base || !l->a_klass_shift)
		return;
	if (l->ik_fieldinfo_stream == JVMPROC_NONE &&
	    (l->ik_fields == JVMPROC_NONE || l->ik_java_fields == JVMPROC_NONE || !l->fi_slots ||
	     !l->fi_tag_size || l->fi_name >= l->fi_slots || l->fi_low >= l->fi_slots ||
	     l->fi_high >= l->fi_slots))
		return;
	/* a class pointer in each object header is what profcap decodes */
	if (read_flags(mc, l, &jp->compressed_oops, &cklass) || !cklass)
		return;
	jp->names = true;
}

/* ---- locate ---- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* libjvm.so's first mapping (offset 0), and its executable range. */
static const struct procmaps_entry *find_jvm(const struct procmaps *maps, struct jvmproc *jp)
{
	const struct procmaps_entry *first = NULL;
	size_t i, n = procmaps__count(maps);

	for (i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);

		if (e->anonymous || strcmp(base_name(e->path), "libjvm.so"))
			continue;
		if (!first && !e->offset)
			first = e;
		if (first && !strcmp(e->path, first->path) && (e->perms & PROCMAPS_EXEC) &&
		    !jp->jvm_lo) {
			jp->jvm_lo = e->start;
			jp->jvm_hi = e->end;
		}
	}
	return first;
}

/* Log once that a JVM lacks a field (a release profcap does not know). */
static void warn_missing(const char *path, const char *what)
{
	static int warned;

	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	pr_warn("jvm: %s does not describe %s; its processes show native frames only\n", path,
		what);
}

static int locate_in(const char *root, int pid, const struct procmaps *maps, struct memcache *mc,
		     struct jvmproc *out)
{
	const struct procmaps_entry *e;
	const char *missing = NULL;
	__u64 v[S_N];
	__s32 major = 0;
	int fd, err;

	e = find_jvm(maps, out);
	if (!e)
		return -ENOENT;
	err = pfile__open_mapped(root, pid, e, &fd);
	if (err)
		return err;
	err = read_symbols(fd, mc, e->start, v, &out->bias);
	close(fd);
	if (err)
		return err == -EFAULT ? -EAGAIN : err;
	if (!v[S_STRUCTS] || !v[S_TYPES] || !v[S_INTS])
		return -EAGAIN; /* set by libjvm's initialisation */
	jvmproc__layout_init(&out->layout);
	err = read_structs(mc, v, &out->layout);
	err = err ?: read_types_consts(mc, v, &out->layout);
	if (err)
		return err;
	if (out->layout.a_vm_major)
		mc_read(mc, out->layout.a_vm_major, &major, sizeof(major));
	if (major < 8 || major > 99)
		return -ENOTSUP;
	out->major = (unsigned)major;
	err = jvmproc__layout_finish(&out->layout, out->major, &missing);
	if (err) {
		warn_missing(e->path, missing);
		return err;
	}
	err = read_runtime(mc, out);
	if (!err)
		check_names(mc, out);
	return err;
}

int jvmproc__locate(const char *proc_root, int pid, const struct procsnap *snap,
		    struct jvmproc *out)
{
	const char *root = proc_root ? proc_root : "/proc";
	struct procmaps *own = NULL;
	const struct procmaps *maps;
	struct memcache *mc;
	int err;

	memset(out, 0, sizeof(*out));
	err = procsnap__maps_of(root, pid, snap, &maps, &own, NULL);
	if (err)
		return err;
	mc = calloc(1, sizeof(*mc));
	if (!mc) {
		procmaps__free(own);
		return -ENOMEM;
	}
	mc->root = proc_root;
	mc->pid = pid;
	err = locate_in(root, pid, maps, mc, out);
	if (err)
		memset(out, 0, sizeof(*out));
	free(mc);
	procmaps__free(own);
	return err;
}

/* ---- code blobs ---- */

const struct jvmproc_heap *jvmproc__heap(const struct jvmproc *jp, __u64 pc)
{
	__u32 i;

	for (i = 0; i < jp->nheaps; i++)
		if (pc >= jp->heaps[i].lo && pc < jp->heaps[i].hi)
			return &jp->heaps[i];
	return NULL;
}

int jvmproc__segmap_walk(const __u8 *win, __u64 first, size_t n, __u64 *idx)
{
	__u64 i = *idx;
	size_t steps;

	for (steps = 0; steps <= n; steps++) {
		__u8 b;

		if (i < first) {
			*idx = i;
			return -ERANGE;
		}
		if (i - first >= n)
			return -ENOENT;
		b = win[i - first];
		if (b == 0xff)
			return -ENOENT;
		if (!b) {
			*idx = i;
			return 0;
		}
		if (b > i)
			return -ENOENT;
		i -= b;
	}
	return -ENOENT;
}

#define SEGMAP_WINDOW 4096    /* segment map bytes read at a time */
#define SEGMAP_MAX_WINDOWS 64 /* blobs spanning more segments are not looked up */

int jvmproc__find_blob(const char *proc_root, int pid, const struct jvmproc *jp, __u64 pc,
		       __u64 *blob)
{
	const struct jvmproc_heap *h = jvmproc__heap(jp, pc);
	__u8 win[SEGMAP_WINDOW];
	__u64 idx, first;
	int i, err;

	*blob = 0;
	if (!h)
		return 0;
	idx = (pc - h->lo) >> h->log2_seg;
	for (i = 0; i < SEGMAP_MAX_WINDOWS; i++) {
		first = idx + 1 > SEGMAP_WINDOW ? idx + 1 - SEGMAP_WINDOW : 0;
		err = pyproc__read_mem(proc_root, pid, h->segmap + first, win, idx + 1 - first);
		if (err)
			return err;
		err = jvmproc__segmap_walk(win, first, idx + 1 - first, &idx);
		if (err == -ENOENT)
			return 0;
		if (!err) {
			*blob = h->lo + (idx << h->log2_seg) + jp->layout.heapblock_size;
			return 0;
		}
	}
	return -E2BIG;
}

/* ---- threads ---- */

int jvmproc__threads(const char *proc_root, int pid, const struct jvmproc *jp, int *tids,
		     __u64 *threads, size_t cap)
{
	const struct jvmproc_layout *l = &jp->layout;
	__u64 list, arr, t, os;
	__u32 len, i, n = 0;
	int err;

	if (!jp->thread_list || l->tl_length == JVMPROC_NONE || l->tl_threads == JVMPROC_NONE ||
	    l->jt_osthread == JVMPROC_NONE || l->os_thread_id == JVMPROC_NONE)
		return -ENOTSUP;
	err = pyproc__read_mem(proc_root, pid, jp->thread_list, &list, sizeof(list));
	err = err ?: pyproc__read_mem(proc_root, pid, list + l->tl_length, &len, sizeof(len));
	err = err ?: pyproc__read_mem(proc_root, pid, list + l->tl_threads, &arr, sizeof(arr));
	if (err)
		return err;
	for (i = 0; i < len && n < cap && i < JVMPROC_MAX_ENTRIES; i++) {
		__s32 tid;

		if (pyproc__read_mem(proc_root, pid, arr + (__u64)i * 8, &t, sizeof(t)) ||
		    pyproc__read_mem(proc_root, pid, t + l->jt_osthread, &os, sizeof(os)) || !os ||
		    pyproc__read_mem(proc_root, pid, os + l->os_thread_id, &tid, sizeof(tid)))
			continue; /* exiting meanwhile */
		tids[n] = tid;
		if (threads)
			threads[n] = t;
		n++;
	}
	return (int)n;
}
