/* test_kallsyms.c - /proc/kallsyms parsing on fixture text. */
#include <errno.h>
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

int main(void)
{
	RUN(core_lookup);
	RUN(modules);
	RUN(kptr_restrict_zeroes);
	RUN(no_stext_uses_symbol_range);
	RUN(long_names_and_no_newline);
	RUN(real_kallsyms_if_readable);
	kallsyms__free(NULL);
	return TEST_DONE();
}
