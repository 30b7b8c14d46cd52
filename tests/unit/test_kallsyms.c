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
		int n = snprintf(text + len, cap - len, "ffffffff8%07zx %c fn_%zu_%.*s\n",
				 i * 16, i % 3 ? 't' : 'T', i, (int)(i % 40), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");

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

int main(void)
{
	RUN(core_lookup);
	RUN(modules);
	RUN(kptr_restrict_zeroes);
	RUN(no_stext_uses_symbol_range);
	RUN(long_names_and_no_newline);
	RUN(real_kallsyms_if_readable);
	RUN(load_in_chunks_matches_parse);
	kallsyms__free(NULL);
	return TEST_DONE();
}
