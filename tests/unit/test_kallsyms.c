/* test_kallsyms.c - /proc/kallsyms parsing on fixture text. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/kallsyms.h"
#include "test.h"

static const char ktext[] = "0000000000000000 A fixed_percpu_data\n"
			    "ffffffff81000000 T srso_alias_untrain_ret\n"
			    "ffffffff81000000 T _stext\n"
			    "ffffffff81000000 T _text\n"
			    "ffffffff81001000 t do_one_initcall\n"
			    "ffffffff81001200 T __x64_sys_read\n"
			    "ffffffff81001200 W sys_read_alias\n"
			    "ffffffff81001400 D some_data\n"
			    "ffffffff81001500 b some_bss\n"
			    "ffffffff81001800 W weak_func\n"
			    "ffffffff81002000 T _etext\n"
			    "ffffffffc0200000 t ext4_file_read_iter\t[ext4]\n"
			    "ffffffffc0200400 t ext4_readdir\t[ext4]\n"
			    "ffffffffc0200500 d ext4_data\t[ext4]\n"
			    "ffffffffc0300000 T xfs_vn_getattr\t[xfs]\n"
			    "ffffffffc0210000 t bpf_prog_6deef7357e7b4530_sd_fw_ingress\t[bpf]\n"
			    "ffffffffc0200800 t ext4_last\t[ext4]\n";

TEST(core_lookup)
{
	struct kallsyms *k = NULL;
	__u64 start = 0, end = 0, sa = 0;
	int mod = 7;

	CHECK(!kallsyms__parse(ktext, sizeof(ktext) - 1, &k));
	/* Aliases at one address collapse to the most telling name. */
	CHECK_STR(kallsyms__lookup(k, 0xffffffff81000000ull, &sa, &mod), "srso_alias_untrain_ret");
	CHECK_EQ_U64(mod, (unsigned long long)-1);
	CHECK_STR(kallsyms__lookup(k, 0xffffffff81000abcull, NULL, NULL), "srso_alias_untrain_ret");
	CHECK_STR(kallsyms__lookup(k, 0xffffffff81001010ull, &sa, NULL), "do_one_initcall");
	CHECK_EQ_U64(sa, 0xffffffff81001000ull);
	CHECK_STR(kallsyms__lookup(k, 0xffffffff81001200ull, NULL, NULL), "__x64_sys_read");
	/* Data symbols are dropped: the text symbol before them extends. */
	CHECK_STR(kallsyms__lookup(k, 0xffffffff81001450ull, NULL, NULL), "__x64_sys_read");
	CHECK_STR(kallsyms__lookup(k, 0xffffffff81001900ull, NULL, NULL), "weak_func");
	CHECK(!kallsyms__lookup(k, 0xffffffff80000000ull, NULL, NULL));
	CHECK(!kallsyms__lookup(k, 0, NULL, NULL));
	kallsyms__text_range(k, &start, &end);
	CHECK_EQ_U64(start, 0xffffffff81000000ull);
	/* The range covers every core symbol, not just _stext.._etext: the
	 * last core symbol spans up to 256 KiB past _etext (init text). */
	CHECK_EQ_U64(end, 0xffffffff81042000ull); /* _etext + 256 KiB */
	kallsyms__free(k);
}

TEST(modules)
{
	const struct kallsyms_module *m;
	struct kallsyms *k = NULL;
	int mod = -1;

	CHECK(!kallsyms__parse(ktext, sizeof(ktext) - 1, &k));
	CHECK_EQ_U64(kallsyms__module_count(k), 3);
	CHECK_STR(kallsyms__lookup(k, 0xffffffffc0200010ull, NULL, &mod), "ext4_file_read_iter");
	CHECK(mod >= 0);
	m = kallsyms__module(k, (size_t)mod);
	CHECK(m);
	CHECK_STR(m->name, "ext4");
	CHECK_EQ_U64(m->start, 0xffffffffc0200000ull);
	CHECK(m->end > 0xffffffffc0200800ull);
	CHECK_STR(kallsyms__lookup(k, 0xffffffffc0200510ull, NULL, NULL), "ext4_readdir");
	/* Out of order input (ext4_last after bpf) is sorted. */
	CHECK_STR(kallsyms__lookup(k, 0xffffffffc0200900ull, NULL, &mod), "ext4_last");
	CHECK_STR(kallsyms__module(k, (size_t)mod)->name, "ext4");
	CHECK_STR(kallsyms__lookup(k, 0xffffffffc0210004ull, NULL, &mod),
		  "bpf_prog_6deef7357e7b4530_sd_fw_ingress");
	CHECK_STR(kallsyms__module(k, (size_t)mod)->name, "bpf");
	CHECK_STR(kallsyms__lookup(k, 0xffffffffc0300004ull, NULL, &mod), "xfs_vn_getattr");
	CHECK_STR(kallsyms__module(k, (size_t)mod)->name, "xfs");
	/* The last symbol of an owner covers a bounded span only. */
	CHECK(!kallsyms__lookup(k, 0xffffffffc0300000ull + KALLSYMS_MAX_SPAN, NULL, NULL));
	CHECK(!kallsyms__module(k, 3));
	kallsyms__free(k);
}

TEST(kptr_restrict_zeroes)
{
	static const char zeroed[] = "0000000000000000 T _stext\n"
				     "0000000000000000 t do_one_initcall\n"
				     "0000000000000000 t ext4_file_read_iter\t[ext4]\n";
	struct kallsyms *k = NULL;

	CHECK(kallsyms__parse(zeroed, sizeof(zeroed) - 1, &k) == -EPERM);
	CHECK(!k);
	CHECK(kallsyms__parse("", 0, &k) == -ENOENT);
	CHECK(kallsyms__parse("ffffffff81001400 D some_data\n", 29, &k) == -ENOENT);
	CHECK(kallsyms__parse("garbage\n\n\n x y z\n", 17, &k) == -ENOENT);
}

TEST(no_stext_uses_symbol_range)
{
	static const char text[] = "ffffffff81000100 T a_func\n"
				   "ffffffff81000300 t b_func\n"
				   "ffffffffc0000000 t m_func\t[mod]\n";
	struct kallsyms *k = NULL;
	__u64 start, end;

	CHECK(!kallsyms__parse(text, sizeof(text) - 1, &k));
	kallsyms__text_range(k, &start, &end);
	CHECK_EQ_U64(start, 0xffffffff81000100ull);
	CHECK(end > 0xffffffff81000300ull && end < 0xffffffffc0000000ull);
	CHECK_EQ_U64(kallsyms__count(k), 3);
	kallsyms__free(k);
}

TEST(long_names_and_no_newline)
{
	size_t n = KALLSYMS_MAX_NAME + 100, off;
	char *text = malloc(n + 64);
	struct kallsyms *k = NULL;
	const char *name;

	CHECK(text);
	off = (size_t)sprintf(text, "ffffffff81000100 T ");
	memset(text + off, 'x', n);
	off += n;
	off += (size_t)sprintf(text + off, "\nffffffff81000200 t tail");
	CHECK(!kallsyms__parse(text, off, &k));
	free(text);
	name = kallsyms__lookup(k, 0xffffffff81000100ull, NULL, NULL);
	CHECK(name);
	CHECK_EQ_U64(strlen(name), KALLSYMS_MAX_NAME);
	CHECK_STR(kallsyms__lookup(k, 0xffffffff81000201ull, NULL, NULL), "tail");
	kallsyms__free(k);
}

TEST(real_kallsyms_if_readable)
{
	struct kallsyms *k = NULL;
	__u64 start, end;
	int err = kallsyms__load("/proc/kallsyms", &k);

	if (err == -EPERM || err == -ENOENT || err == -EACCES) {
		SKIP("/proc/kallsyms not readable here: %s", strerror(-err));
	}
	CHECK(!err);
	kallsyms__text_range(k, &start, &end);
	CHECK(start && end > start);
	CHECK(kallsyms__count(k) > 1000);
	kallsyms__free(k);
}

/* The file is read 64 KiB at a time: lines across chunk edges, a line
 * longer than a chunk (skipped) and no final newline give the same table
 * as parsing the text whole (minus the over-long line). */
TEST(load_in_chunks_matches_parse)
{
	char path[] = "/tmp/test_kallsyms_XXXXXX";
	struct kallsyms *a = NULL, *b = NULL;
	size_t cap = 1u << 20, len = 0, i;
	char *text = malloc(cap), *whole = malloc(cap);
	size_t wlen = 0;
	FILE *f;
	int fd;

	CHECK(text && whole);
	for (i = 0; i < 6000; i++) {
		int n = snprintf(text + len, cap - len, "ffffffff8%07zx %c fn_%zu_%.*s\n", i * 16,
				 i % 3 ? 't' : 'T', i, (int)(i % 40),
				 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");

		len += (size_t)n;
		if (i == 3000) { /* a 100 KiB line */
			memcpy(text + len, "ffffffff8fffff00 t ", 19);
			len += 19;
			memset(text + len, 'y', 100 << 10);
			len += 100 << 10;
			text[len++] = '\n';
		}
	}
	memcpy(text + len, "ffffffff8ffffff0 T last_no_newline", 34);
	len += 34;
	/* The same text without the over-long line. */
	for (i = 0; i < len;) {
		char *nl = memchr(text + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - text - i) + 1 : len - i;

		if (l < 4096) {
			memcpy(whole + wlen, text + i, l);
			wlen += l;
		}
		i += l;
	}
	fd = mkstemp(path);
	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	CHECK(f && fwrite(text, 1, len, f) == len);
	fclose(f);
	CHECK(!kallsyms__load(path, &a));
	CHECK(!kallsyms__parse(whole, wlen, &b));
	unlink(path);
	CHECK_EQ_U64(kallsyms__count(a), kallsyms__count(b));
	CHECK_EQ_U64(kallsyms__count(a), 6001);
	for (i = 0; i < 6000; i += 7) {
		__u64 x = 0xffffffff80000000ull + i * 16 + 3, sa = 0, sb = 0;
		const char *na = kallsyms__lookup(a, x, &sa, NULL);
		const char *nb = kallsyms__lookup(b, x, &sb, NULL);

		CHECK(na && nb);
		CHECK_STR(na, nb);
		CHECK_EQ_U64(sa, sb);
	}
	CHECK_STR(kallsyms__lookup(a, 0xffffffff8ffffff4ull, NULL, NULL), "last_no_newline");
	kallsyms__free(a);
	kallsyms__free(b);
	free(text);
	free(whole);
}

/* Name @n sorted addresses with a query over @text and with the table of
 * the same text: the same name, start and module for each. */
static void check_query_matches(const char *text, size_t len, const __u64 *addrs, size_t n)
{
	struct kallsyms *k = NULL;
	struct kallsyms_query *q = NULL;
	size_t i;

	CHECK(!kallsyms__parse(text, len, &k));
	CHECK(!kallsyms__query_text(text, len, addrs, n, &q));
	for (i = 0; i < n; i++) {
		const struct kallsyms_hit *h = kallsyms__query_hit(q, i);
		__u64 sa = 0;
		int mod = -2;
		const char *name = kallsyms__lookup(k, addrs[i], &sa, &mod);

		CHECK(h);
		CHECK_EQ_U64(h->addr, addrs[i]);
		CHECK(h->start <= addrs[i] && addrs[i] < h->end);
		if (!name) {
			if (h->name)
				printf("  0x%llx: query %s, table none\n",
				       (unsigned long long)addrs[i], h->name);
			CHECK(!h->name);
			/* Nothing in the range the query says is empty. */
			CHECK(!kallsyms__lookup(k, h->start, NULL, NULL));
			CHECK(!kallsyms__lookup(k, h->end - 1, NULL, NULL));
			continue;
		}
		CHECK(h->name);
		if (!h->name)
			continue;
		CHECK_STR(h->name, name);
		CHECK_EQ_U64(h->start, sa);
		/* The extent is the symbol's, as far as the table tells. */
		CHECK_STR(kallsyms__lookup(k, h->end - 1, NULL, NULL), name);
		if (h->end != ~0ull) {
			const char *after = kallsyms__lookup(k, h->end, &sa, NULL);

			CHECK(!after || sa == h->end);
		}
		if (mod < 0)
			CHECK_EQ_U64(h->module, (unsigned long long)-1);
		else
			CHECK_STR(kallsyms__query_module(q, (size_t)h->module)->name,
				  kallsyms__module(k, (size_t)mod)->name);
	}
	CHECK(!kallsyms__query_hit(q, n));
	kallsyms__query_free(q);
	kallsyms__free(k);
}

TEST(query_fixture)
{
	static const __u64 addrs[] = {
		0,
		0xffffffff80000000ull,
		0xffffffff81000000ull, /* aliases: the most telling name */
		0xffffffff81000abcull,
		0xffffffff81001010ull,
		0xffffffff81001200ull,
		0xffffffff81001450ull, /* after a data symbol */
		0xffffffff81001900ull,
		0xffffffff81002000ull,
		0xffffffff81041fffull, /* the last core symbol's span ... */
		0xffffffff81042000ull, /* ... ends here */
		0xffffffffc0200010ull,
		0xffffffffc0200510ull,
		0xffffffffc0200900ull, /* listed last, out of order */
		0xffffffffc0210004ull,
		0xffffffffc0300004ull,
		0xffffffffc0300000ull + KALLSYMS_MAX_SPAN,
		0xffffffffffffff00ull,
	};
	struct kallsyms_query *q = NULL;
	struct kallsyms *k = NULL;
	__u64 s1, e1, s2, e2;
	size_t i;

	check_query_matches(ktext, sizeof(ktext) - 1, addrs, sizeof(addrs) / sizeof(addrs[0]));
	/* No address: only the text range and the modules. */
	CHECK(!kallsyms__query_text(ktext, sizeof(ktext) - 1, NULL, 0, &q));
	CHECK(!kallsyms__parse(ktext, sizeof(ktext) - 1, &k));
	kallsyms__query_text_range(q, &s1, &e1);
	kallsyms__text_range(k, &s2, &e2);
	CHECK_EQ_U64(s1, s2);
	CHECK_EQ_U64(e1, e2);
	CHECK_EQ_U64(kallsyms__query_module_count(q), kallsyms__module_count(k));
	for (i = 0; i < kallsyms__module_count(k); i++) {
		const struct kallsyms_module *a = kallsyms__query_module(q, i);
		const struct kallsyms_module *b = kallsyms__module(k, i);

		CHECK_STR(a->name, b->name);
		CHECK_EQ_U64(a->start, b->start);
		CHECK(a->end > a->start);
	}
	/* ext4 ends with ext4_last's span: bpf starts inside it, xfs does not. */
	CHECK_EQ_U64(kallsyms__query_module(q, 0)->end, 0xffffffffc0210000ull);
	CHECK(!kallsyms__query_module(q, 3));
	CHECK(!kallsyms__query_hit(q, 0));
	kallsyms__query_free(q);
	kallsyms__free(k);
	kallsyms__query_free(NULL);
}

TEST(query_errors)
{
	static const __u64 unsorted[] = {2, 1}, dup[] = {5, 5}, one[] = {0xffffffff81000010ull};
	static const char zeroed[] = "0000000000000000 T _stext\n0000000000000000 t x\n";
	struct kallsyms_query *q = (struct kallsyms_query *)1;

	CHECK(kallsyms__query_text(ktext, sizeof(ktext) - 1, unsorted, 2, &q) == -EINVAL);
	CHECK(!q);
	CHECK(kallsyms__query_text(ktext, sizeof(ktext) - 1, dup, 2, &q) == -EINVAL);
	CHECK(kallsyms__query_text(zeroed, sizeof(zeroed) - 1, one, 1, &q) == -EPERM);
	CHECK(kallsyms__query_text("", 0, one, 1, &q) == -ENOENT);
	CHECK(kallsyms__query_text("ffffffff81001400 D some_data\n", 29, one, 1, &q) == -ENOENT);
	CHECK(kallsyms__query_file("/nonexistent/kallsyms", one, 1, &q) == -ENOENT);
	CHECK(!q);
}

/* Names the kernel printed itself ("%pS"): symbols, modules (ranges from
 * what was named), unnamed addresses, malformed texts, the text range. */
TEST(query_names)
{
	static const __u64 addrs[] = {0xffffffff81000010ull, 0xffffffff81001234ull,
				      0xffffffff81003000ull, 0xffffffff81004000ull,
				      0xffffffffc0200010ull, 0xffffffffc0200420ull,
				      0xffffffffc0210008ull, 0xffffffffc0300000ull};
	static const char *const names[] = {
		"srso_alias_untrain_ret+0x10/0x1000",
		"__x64_sys_read+0x34/0x200",
		"0xffffffff81003000", /* no symbol covers it */
		"late_core+0x0/0x40", /* a core symbol past _etext */
		"ext4_file_read_iter+0x10/0x400 [ext4]",
		"ext4_readdir+0x20/0x100 [ext4]",
		"bad+0x8/zz [ext4]",
		"xfs_vn_getattr+0x0/0x80 [xfs]",
	};
	struct kallsyms_query *q = NULL;
	const struct kallsyms_hit *h;
	const struct kallsyms_module *m;
	__u64 start, end;

	CHECK(!kallsyms__query_names(addrs, 8, names, 0xffffffff81000000ull,
				     0xffffffff81002000ull, &q));
	h = kallsyms__query_hit(q, 0);
	CHECK_STR(h->name, "srso_alias_untrain_ret");
	CHECK(h->start == 0xffffffff81000000ull && h->end == 0xffffffff81001000ull);
	CHECK(h->module == -1);
	h = kallsyms__query_hit(q, 1);
	CHECK_STR(h->name, "__x64_sys_read");
	CHECK(h->start == 0xffffffff81001200ull && h->end == 0xffffffff81001400ull);
	h = kallsyms__query_hit(q, 2);
	CHECK(!h->name && h->start == addrs[2] && h->end == addrs[2] + 1);
	h = kallsyms__query_hit(q, 4);
	CHECK_STR(h->name, "ext4_file_read_iter");
	CHECK(h->module >= 0);
	m = kallsyms__query_module(q, (size_t)h->module);
	CHECK_STR(m->name, "ext4");
	/* The module's range: its symbols named here. */
	CHECK(m->start == 0xffffffffc0200000ull && m->end == 0xffffffffc0200500ull);
	CHECK(kallsyms__query_hit(q, 5)->module == h->module);
	CHECK(!kallsyms__query_hit(q, 6)->name); /* malformed */
	h = kallsyms__query_hit(q, 7);
	CHECK_STR(h->name, "xfs_vn_getattr");
	CHECK(h->end == 0xffffffffc0300080ull);
	CHECK(kallsyms__query_module_count(q) == 2);
	kallsyms__query_text_range(q, &start, &end);
	CHECK(start == 0xffffffff81000000ull && end == 0xffffffff81004040ull);
	CHECK(!kallsyms__query_hit(q, 8));
	kallsyms__query_free(q);

	/* Nothing named and no text range: nothing to go on. */
	CHECK(kallsyms__query_names(addrs, 1, &names[2], 0, 0, &q) == -ENOENT);
	CHECK(!q);
	CHECK(kallsyms__query_names(addrs + 1, 2, names, 0, 0, &q) == 0); /* sorted */
	kallsyms__query_free(q);
	{
		static const __u64 unsorted[] = {2, 1};

		CHECK(kallsyms__query_names(unsorted, 2, names, 1, 2, &q) == -EINVAL);
	}
}

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;

static unsigned long long rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int cmp_addr(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* Random kernels: core symbols in order with aliases, data and gaps wider
 * than the span, modules out of order and interleaved with [bpf]; random
 * addresses around them. The query agrees with the table on every one. */
TEST(query_random_matches_table)
{
	static const char types[] = "tTWwdDbr";
	static const char *const mods[] = {"ext4", "bpf", "xfs", "nf_tables"};
	size_t cap = 4u << 20, round;

	for (round = 0; round < 20; round++) {
		char *text = malloc(cap);
		__u64 *syms = malloc(4000 * sizeof(*syms)), *addrs = malloc(3000 * sizeof(*addrs));
		size_t len = 0, nsyms = 0, n = 0, i, j;
		__u64 a = 0xffffffff81000000ull;

		CHECK(text && syms && addrs);
		for (i = 0; i < 1500; i++) { /* core */
			a += rnd() % 4 == 0
				     ? 0
				     : (rnd() % 8 == 0 ? KALLSYMS_MAX_SPAN * 2 : rnd() % 0x400);
			len += (size_t)snprintf(text + len, cap - len, "%016llx %c c%zu_%llu\n",
						(unsigned long long)a, types[rnd() % 8], i,
						rnd() % 1000);
			syms[nsyms++] = a;
		}
		for (j = 0; j < 6; j++) { /* modules, each at a random base, in any order */
			const char *m = mods[rnd() % 4];
			__u64 b = 0xffffffffc0000000ull + (rnd() % 64) * 0x10000;

			for (i = 0; i < 300; i++) {
				__u64 x = b + rnd() % 0x20000;

				len += (size_t)snprintf(
					text + len, cap - len, "%016llx %c m%zu_%zu\t[%s]\n",
					(unsigned long long)x, types[rnd() % 5], j, i, m);
				syms[nsyms++] = x;
			}
		}
		for (i = 0; i < nsyms && n < 2500; i++) { /* at, just before, after symbols */
			__u64 x = syms[rnd() % nsyms];

			addrs[n++] = x + (rnd() % 3 == 0 ? 0 : rnd() % 0x800) - (rnd() % 5 == 0);
		}
		for (i = 0; i < 200; i++)
			addrs[n++] = 0xffffffff80000000ull + rnd() % 0x50000000ull;
		qsort(addrs, n, sizeof(*addrs), cmp_addr);
		for (i = j = 0; i < n; i++)
			if (!j || addrs[i] != addrs[j - 1])
				addrs[j++] = addrs[i];
		check_query_matches(text, len, addrs, j);
		free(text);
		free(syms);
		free(addrs);
	}
}

/* From a file, 64 KiB at a time: the same results as from the text whole
 * (lines across chunk edges, a line longer than a chunk skipped). */
TEST(query_file_matches_text)
{
	char path[] = "/tmp/test_kallsyms_q_XXXXXX";
	size_t cap = 1u << 20, len = 0, wlen = 0, i;
	char *text = malloc(cap), *whole = malloc(cap);
	__u64 addrs[600];
	struct kallsyms_query *a = NULL, *b = NULL;
	FILE *f;
	int fd;

	CHECK(text && whole);
	for (i = 0; i < 6000; i++) {
		len += (size_t)snprintf(text + len, cap - len, "ffffffff8%07zx %c fn_%zu\n", i * 16,
					i % 3 ? 't' : 'T', i);
		if (i == 3000) {
			memcpy(text + len, "ffffffff8fffff00 t ", 19);
			len += 19;
			memset(text + len, 'y', 100 << 10);
			len += 100 << 10;
			text[len++] = '\n';
		}
	}
	memcpy(text + len, "ffffffff8ffffff0 T last_no_newline", 34);
	len += 34;
	for (i = 0; i < len;) {
		char *nl = memchr(text + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - text - i) + 1 : len - i;

		if (l < 4096) {
			memcpy(whole + wlen, text + i, l);
			wlen += l;
		}
		i += l;
	}
	for (i = 0; i < 599; i++)
		addrs[i] = 0xffffffff80000000ull + i * 160 + 3;
	addrs[599] = 0xffffffff8ffffff4ull;
	fd = mkstemp(path);
	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	CHECK(f && fwrite(text, 1, len, f) == len);
	fclose(f);
	CHECK(!kallsyms__query_file(path, addrs, 600, &a));
	CHECK(!kallsyms__query_text(whole, wlen, addrs, 600, &b));
	unlink(path);
	for (i = 0; i < 600; i++) {
		const struct kallsyms_hit *x = kallsyms__query_hit(a, i);
		const struct kallsyms_hit *y = kallsyms__query_hit(b, i);

		CHECK(x->name && y->name);
		if (x->name && y->name)
			CHECK_STR(x->name, y->name);
		CHECK_EQ_U64(x->start, y->start);
		CHECK_EQ_U64(x->end, y->end);
	}
	CHECK_STR(kallsyms__query_hit(a, 10)->name, "fn_100");
	CHECK_STR(kallsyms__query_hit(a, 599)->name, "last_no_newline");
	kallsyms__query_free(a);
	kallsyms__query_free(b);
	free(text);
	free(whole);
}

TEST(check_file)
{
	char path[] = "/tmp/test_kallsyms_c_XXXXXX";
	static const char zeroed[] = "0000000000000000 A fixed\n0000000000000000 T _stext\n";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write(fd, zeroed, sizeof(zeroed) - 1) == (ssize_t)(sizeof(zeroed) - 1));
	CHECK(kallsyms__check(path) == -EPERM);
	CHECK(!ftruncate(fd, 0));
	CHECK(kallsyms__check(path) == -ENOENT);
	CHECK(pwrite(fd, ktext, sizeof(ktext) - 1, 0) == (ssize_t)(sizeof(ktext) - 1));
	CHECK(!kallsyms__check(path));
	close(fd);
	unlink(path);
	CHECK(kallsyms__check("/nonexistent/kallsyms") == -ENOENT);
}

/* The real file, if readable: a query agrees with the table. */
TEST(real_query_if_readable)
{
	struct kallsyms *k = NULL;
	struct kallsyms_query *q = NULL;
	__u64 addrs[64], start, end;
	size_t i;
	int err = kallsyms__load("/proc/kallsyms", &k);

	if (err == -EPERM || err == -ENOENT || err == -EACCES) {
		SKIP("/proc/kallsyms not readable here: %s", strerror(-err));
	}
	CHECK(!err);
	kallsyms__text_range(k, &start, &end);
	for (i = 0; i < 64; i++)
		addrs[i] = start + (end - start) / 64 * i + 0x123;
	CHECK(!kallsyms__query_file("/proc/kallsyms", addrs, 64, &q));
	for (i = 0; i < 64; i++) {
		const char *name = kallsyms__lookup(k, addrs[i], NULL, NULL);
		const struct kallsyms_hit *h = kallsyms__query_hit(q, i);

		CHECK(!name == !h->name);
		if (name && h->name)
			CHECK_STR(name, h->name);
	}
	kallsyms__query_free(q);
	kallsyms__free(k);
}

int main(void)
{
	RUN(core_lookup);
	RUN(modules);
	RUN(kptr_restrict_zeroes);
	RUN(no_stext_uses_symbol_range);
	RUN(long_names_and_no_newline);
	RUN(real_kallsyms_if_readable);
	RUN(load_in_chunks_matches_parse);
	RUN(query_fixture);
	RUN(query_errors);
	RUN(query_names);
	RUN(query_random_matches_table);
	RUN(query_file_matches_text);
	RUN(check_file);
	RUN(real_query_if_readable);
	kallsyms__free(NULL);
	return TEST_DONE();
}
