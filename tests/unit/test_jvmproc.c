/* test_jvmproc.c - HotSpot found from outside: descriptions applied to a
 * layout by hand (JDK 17 and JDK 25 shapes), the code heap's segment map
 * walk, the BPF walker's entry made from a layout (and what it refuses),
 * and each installed JDK located in a live child (code cache, interpreter,
 * Java threads against the kernel's). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>

#include "jvm.h"
#include "collect/sampler_jvm.h"
#include "proc/jvmproc.h"
#include "test.h"
#include "jvmfixture.h"

/* The entries every layout needs, as JDK 17 describes them. */
static void feed17(struct jvmproc_layout *l)
{
	static const struct {
		const char *t, *f;
		unsigned off;
	} f[] = {
		{"CodeHeap", "_memory", 8},
		{"CodeHeap", "_segmap", 120},
		{"CodeHeap", "_log2_segment_size", 256},
		{"VirtualSpace", "_low_boundary", 0},
		{"VirtualSpace", "_high_boundary", 8},
		{"GrowableArrayBase", "_len", 0},
		{"GrowableArray<int>", "_data", 8},
		{"CodeBlob", "_name", 96},
		{"CodeBlob", "_size", 12},
		{"CodeBlob", "_frame_complete_offset", 20},
		{"CodeBlob", "_frame_size", 28},
		{"CodeBlob", "_code_begin", 32},
		{"CodeBlob", "_data_offset", 24},
		{"CompiledMethod", "_method", 112},
		{"CompiledMethod", "_scopes_data_begin", 120},
		{"nmethod", "_compile_id", 304},
		{"nmethod", "_scopes_pcs_offset", 268},
		{"nmethod", "_dependencies_offset", 272},
		{"nmethod", "_metadata_offset", 260},
		{"StubQueue", "_stub_buffer", 8},
		{"StubQueue", "_buffer_limit", 20},
		{"PcDesc", "_pc_offset", 0},
		{"PcDesc", "_scope_decode_offset", 4},
		{"Method", "_constMethod", 8},
		{"ConstMethod", "_constants", 8},
		{"ConstMethod", "_constMethod_size", 24},
		{"ConstMethod", "_flags", 28},
		{"ConstMethod", "_code_size", 32},
		{"ConstMethod", "_name_index", 34},
		{"ConstMethod", "_signature_index", 36},
		{"ConstantPool", "_pool_holder", 24},
		{"ConstantPool", "_source_file_name_index", 54},
		{"Klass", "_name", 24},
		{"Symbol", "_length", 4},
		{"Symbol", "_body", 6},
		{"Unwanted", "_field", 4},
	};
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		jvmproc__field(l, f[i].t, f[i].f, "int", f[i].off, 0);
	jvmproc__field(l, "CodeCache", "_heaps", NULL, 0, 0x1000);
	jvmproc__field(l, "CodeCache", "_low_bound", NULL, 0, 0x1008);
	jvmproc__field(l, "CodeCache", "_high_bound", NULL, 0, 0x1010);
	jvmproc__field(l, "AbstractInterpreter", "_code", NULL, 0, 0x1018);
	jvmproc__type(l, "HeapBlock", 16);
	jvmproc__type(l, "nmethod", 352);
	jvmproc__type(l, "PcDesc", 16);
	jvmproc__type(l, "Method", 88);
	jvmproc__type(l, "ConstMethod", 48);
	jvmproc__type(l, "ConstantPool", 72);
	jvmproc__constant(l, "ConstMethod::_has_linenumber_table", 1);
	jvmproc__constant(l, "frame::interpreter_frame_last_sp_offset", -2);
}

TEST(layout_jdk17)
{
	struct jvmproc_layout l;
	const char *missing = NULL;

	jvmproc__layout_init(&l);
	CHECK_EQ_U64(l.nm_method, JVMPROC_NONE);
	feed17(&l);
	CHECK_EQ_U64(jvmproc__layout_finish(&l, 17, &missing), 0);
	CHECK_EQ_U64(l.nm_method, 112);
	CHECK_EQ_U64(l.a_heaps, 0x1000);
	CHECK_EQ_U64(l.heapblock_size, 16);
	CHECK_EQ_U64(l.flags & (JVMPROC_BLOB_OFFSETS | JVMPROC_IMMUTABLE | JVMPROC_UNSIGNED5_X1 |
				JVMPROC_CMFLAGS_U32 | JVMPROC_FCO_S16),
		     0);
	/* x86-64: Method* 3 words, bcp 8 words below the saved rbp */
	CHECK_EQ_U64((__u64)(__s64)l.interp_method, (__u64)-24);
	CHECK_EQ_U64((__u64)(__s64)l.interp_bcp, (__u64)-64);
}

/* A JVM in JDK 17's shape with one code heap, as the walker's entry. */
static void jvm17(struct jvmproc *jp)
{
	memset(jp, 0, sizeof(*jp));
	jvmproc__layout_init(&jp->layout);
	feed17(&jp->layout);
	CHECK_EQ_U64(jvmproc__layout_finish(&jp->layout, 17, NULL), 0);
	jp->major = 17;
	jp->code_lo = 0x7f0000000000ull;
	jp->code_hi = 0x7f0010000000ull;
	jp->nheaps = 1;
	jp->heaps[0] = (struct jvmproc_heap){
		.lo = jp->code_lo, .hi = jp->code_hi, .segmap = 0x7f1000000000ull, .log2_seg = 7};
	jp->interp_lo = jp->code_lo + 0x1000;
	jp->interp_hi = jp->code_lo + 0x40000;
	jp->call_stub_ret = jp->code_lo + 0x50000;
}

TEST(walker_entry)
{
	struct jvmproc jp;
	struct jvm_proc e;

	jvm17(&jp);
	CHECK_EQ_U64(sampler__jvm_proc(&jp, &e), 0);
	CHECK_EQ_U64(e.code_lo, jp.code_lo);
	CHECK_EQ_U64(e.call_stub_ret, jp.call_stub_ret);
	CHECK_EQ_U64(e.nheaps, 1);
	CHECK_EQ_U64(e.heaps[0].segmap, jp.heaps[0].segmap);
	CHECK_EQ_U64(e.heaps[0].log2_seg, 7);
	CHECK_EQ_U64((__u64)(__s64)e.interp_method, (__u64)-24);
	CHECK_EQ_U64((__u64)(__s64)e.interp_bcp, (__u64)-64);
	CHECK_EQ_U64(e.heapblock_size, 16);
	CHECK_EQ_U64(e.nm_compile_id, 304);
	/* the head read ends after the last field the walker reads: the code
	 * begin pointer at 32 */
	CHECK_EQ_U64(e.blob_read, 40);
	CHECK_EQ_U64(e.flags, 0);
	/* what does not fit the walker is refused, not walked wrongly */
	jvm17(&jp);
	jp.layout.interp_bcp = -136; /* below the slots it reads */
	CHECK_EQ_U64(sampler__jvm_proc(&jp, &e), (__u64)-EINVAL);
	jvm17(&jp);
	jp.layout.interp_method = -20; /* not a word */
	CHECK_EQ_U64(sampler__jvm_proc(&jp, &e), (__u64)-EINVAL);
	jvm17(&jp);
	jp.layout.blob_code_begin = 124; /* past the head read */
	CHECK_EQ_U64(sampler__jvm_proc(&jp, &e), (__u64)-EINVAL);
	jvm17(&jp);
	jp.layout.nm_compile_id = JVMPROC_NONE;
	CHECK_EQ_U64(sampler__jvm_proc(&jp, &e), (__u64)-EINVAL);
	jvm17(&jp);
	jp.heaps[0].log2_seg = 40;
	CHECK_EQ_U64(sampler__jvm_proc(&jp, &e), (__u64)-EINVAL);
	jvm17(&jp);
	jp.nheaps = JVMPROC_MAX_HEAPS + 1;
	CHECK_EQ_U64(sampler__jvm_proc(&jp, &e), (__u64)-EINVAL);
	jvm17(&jp);
	jp.call_stub_ret = 0;
	CHECK_EQ_U64(sampler__jvm_proc(&jp, &e), (__u64)-EINVAL);
}

TEST(layout_jdk25_shape)
{
	struct jvmproc_layout l;

	jvmproc__layout_init(&l);
	feed17(&l);
	/* JDK 23+: offsets instead of pointers, scopes in immutable data,
	 * u4 ConstMethod flags, a 2-byte frame complete offset */
	jvmproc__field(&l, "CodeBlob", "_code_offset", "int", 36, 0);
	jvmproc__field(&l, "CodeBlob", "_frame_complete_offset", "int16_t", 54, 0);
	jvmproc__field(&l, "nmethod", "_immutable_data", "address", 96, 0);
	jvmproc__field(&l, "nmethod", "_immutable_data_size", "int", 160, 0);
	jvmproc__field(&l, "nmethod", "_scopes_data_offset", "int", 200, 0);
	jvmproc__field(&l, "nmethod", "_nul_chk_table_offset", "u2", 192, 0);
	jvmproc__field(&l, "ConstMethod", "_flags._flags", "u4", 28, 0);
	l.nm_metadata = JVMPROC_NONE; /* JDK 25 does not describe it */
	l.nm_scopes_pcs_end = JVMPROC_NONE;
	jvmproc__constant(&l, "INCLUDE_JVMCI", 1);
	CHECK_EQ_U64(jvmproc__layout_finish(&l, 25, NULL), 0);
	CHECK(l.flags & JVMPROC_BLOB_OFFSETS);
	CHECK(l.flags & JVMPROC_IMMUTABLE);
	CHECK(l.flags & JVMPROC_CMFLAGS_U32);
	CHECK(l.flags & JVMPROC_FCO_S16);
	CHECK(l.flags & JVMPROC_UNSIGNED5_X1);
	CHECK_EQ_U64(l.blob_code_begin, 36);
	CHECK_EQ_U64(l.blob_frame_complete, 54);
	/* before the null-check table's u16: _jvmci_data_offset, then
	 * _metadata_offset */
	CHECK_EQ_U64(l.nm_metadata, 188);
	CHECK_EQ_U64(l.nm_scopes_pcs_end, 200);
	/* without JVMCI it is the one right before */
	l.nm_metadata = JVMPROC_NONE;
	l.have_jvmci = 0;
	CHECK_EQ_U64(jvmproc__layout_finish(&l, 25, NULL), 0);
	CHECK_EQ_U64(l.nm_metadata, 190);
}

TEST(layout_missing)
{
	struct jvmproc_layout l;
	const char *missing = NULL;

	jvmproc__layout_init(&l);
	feed17(&l);
	l.nm_method = JVMPROC_NONE;
	CHECK_EQ_U64(jvmproc__layout_finish(&l, 17, &missing), (__u64)-ENOTSUP);
	CHECK_STR(missing, "nm_method");
	jvmproc__layout_init(&l);
	CHECK_EQ_U64(jvmproc__layout_finish(&l, 17, &missing), (__u64)-ENOTSUP);
	/* an offset no object of ours has is not taken */
	jvmproc__layout_init(&l);
	jvmproc__field(&l, "nmethod", "_method", NULL, 1u << 20, 0);
	CHECK_EQ_U64(l.nm_method, JVMPROC_NONE);
}

TEST(segmap_walk)
{
	/* blocks at segments 0 (3 long), 3 (1), 4 (600: hops of 254), free
	 * space after */
	static __u8 map[700];
	__u64 idx;
	size_t i;

	memset(map, 0xff, sizeof(map));
	map[0] = 0, map[1] = 1, map[2] = 2, map[3] = 0;
	for (i = 0; i < 600; i++)
		map[4 + i] = (__u8)(i <= 254 ? i : 1 + (i - 1) % 254);
	idx = 2;
	CHECK_EQ_U64(jvmproc__segmap_walk(map, 0, sizeof(map), &idx), 0);
	CHECK_EQ_U64(idx, 0);
	idx = 3;
	CHECK_EQ_U64(jvmproc__segmap_walk(map, 0, sizeof(map), &idx), 0);
	CHECK_EQ_U64(idx, 3);
	idx = 603;
	CHECK_EQ_U64(jvmproc__segmap_walk(map, 0, sizeof(map), &idx), 0);
	CHECK_EQ_U64(idx, 4);
	idx = 650;
	CHECK_EQ_U64(jvmproc__segmap_walk(map, 0, sizeof(map), &idx), (__u64)-ENOENT);
	/* a window that starts above the block: where to go on */
	idx = 603;
	CHECK_EQ_U64(jvmproc__segmap_walk(map + 500, 500, 200, &idx), (__u64)-ERANGE);
	CHECK(idx < 500 && idx >= 4);
	CHECK_EQ_U64(jvmproc__segmap_walk(map, 0, 500, &idx), 0);
	CHECK_EQ_U64(idx, 4);
	/* a distance pointing before the heap is a bad map, not a loop */
	map[1] = 5;
	idx = 1;
	CHECK_EQ_U64(jvmproc__segmap_walk(map, 0, sizeof(map), &idx), (__u64)-ENOENT);
}

/* Locate each installed JDK in a live child. */
static void check_live(const struct jvmfx_jdk *jdk)
{
	static const char *const opts[] = {NULL};
	struct jvmfx_child c;
	struct jvmproc jp;
	int tids[256], n, i, err, found = 0, named = 0, mains = 0, worker_named = 0, longs = 0;
	__u64 threads[256];
	char name[JVMPROC_MAX_NAME * 3 + 1];
	__u32 h;

	err = jvmfx__start(jdk, opts, &c);
	if (err == -ENOENT) {
		jvmfx__stop(&c);
		SKIP("%s or javac not installed", jdk->java);
	}
	CHECK_EQ_U64(err, 0);
	err = jvmproc__locate(NULL, c.pid, NULL, &jp);
	n = err ? err : jvmproc__threads(NULL, c.pid, &jp, tids, threads, 256);
	for (i = 0; i < n; i++) {
		char path[64];

		found += tids[i] == c.worker;
		/* Java thread names: the worker's own, one "main" */
		if (!jvmproc__thread_name(NULL, c.pid, &jp, threads[i], name, sizeof(name))) {
			named++;
			mains += !strcmp(name, "main");
			longs += !strcmp(name, JVMFX_LONG_NAME_UTF8);
			worker_named += tids[i] == c.worker && !strcmp(name, "jvmfx-worker");
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%d", c.pid, tids[i]);
		if (access(path, F_OK))
			found = -1000; /* a thread id the kernel does not know */
	}
	/* the child goes before any check can return */
	jvmfx__stop(&c);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(jp.major, jdk->major);
	CHECK(jp.code_lo && jp.code_hi > jp.code_lo);
	CHECK(jp.nheaps >= 1);
	for (h = 0; h < jp.nheaps; h++) {
		CHECK(jp.heaps[h].lo >= jp.code_lo && jp.heaps[h].hi <= jp.code_hi);
		CHECK(jp.heaps[h].log2_seg >= 5);
	}
	CHECK(jp.interp_lo >= jp.code_lo && jp.interp_hi <= jp.code_hi);
	CHECK(jvmproc__heap(&jp, jp.interp_lo));
	CHECK(jp.call_stub_ret >= jp.code_lo && jp.call_stub_ret < jp.code_hi);
	/* the worker among the Java threads (main, the JVM's own) */
	CHECK(n >= 2);
	CHECK_EQ_U64(found, 1);
	CHECK(jp.names);
	CHECK_EQ_U64(named, n);
	CHECK_EQ_U64(mains, 1);
	CHECK_EQ_U64(worker_named, 1);
	CHECK_EQ_U64(longs, 1);
	/* the live layout fits the BPF walker */
	{
		struct jvm_proc e;

		CHECK_EQ_U64(sampler__jvm_proc(&jp, &e), 0);
		CHECK(e.blob_read >= 8 && e.blob_read < PROFCAP_JVM_BLOB_READ);
	}
	/* a process without libjvm is none */
	CHECK_EQ_U64(jvmproc__locate(NULL, getpid(), NULL, &jp), (__u64)-ENOENT);
}

TEST(live_jdk17)
{
	check_live(&jvmfx_jdks[0]);
}

TEST(live_temurin25)
{
	check_live(&jvmfx_jdks[1]);
}

int main(void)
{
	/* a JVM that never says ready must not hang the suite */
	alarm(600);
	RUN(layout_jdk17);
	RUN(walker_entry);
	RUN(layout_jdk25_shape);
	RUN(layout_missing);
	RUN(segmap_walk);
	RUN(live_jdk17);
	RUN(live_temurin25);
	printf("unit: %d passed, %d failed, %d skipped\n", test__passed, test__failed,
	       test__skipped);
	return test__failed ? 1 : 0;
}
