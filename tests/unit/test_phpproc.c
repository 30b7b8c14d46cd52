/* test_phpproc.c - finding PHP in a process: file names, the version in
 * the binary, the code check of the layout, the walker's map entry, and
 * the live php8.2 located (its addresses equal what nm -D reads). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "php.h"
#include "collect/sampler_php.h"
#include "proc/phpproc.h"
#include "phpfixture.h"
#include "test.h"

TEST(names)
{
	unsigned a = 0, b = 0;

	CHECK(phpproc__is_php_name("php"));
	CHECK(phpproc__is_php_name("php8.2"));
	CHECK(phpproc__is_php_name("php-fpm8.2"));
	CHECK(phpproc__is_php_name("php-cgi"));
	CHECK(phpproc__is_php_name("libphp8.2.so"));
	CHECK(phpproc__is_php_name("libphp.so"));
	CHECK(!phpproc__is_php_name("phpunit"));
	CHECK(!phpproc__is_php_name("libphpx.so"));
	CHECK(!phpproc__is_php_name("python3"));
	CHECK(!phpproc__is_php_name("libphp8.2.a"));
	CHECK(!phpproc__name_version("php8.2", &a, &b));
	CHECK(a == 8 && b == 2);
	CHECK(!phpproc__name_version("php-fpm7.4", &a, &b));
	CHECK(a == 7 && b == 4);
	CHECK(!phpproc__name_version("libphp8.3.so", &a, &b));
	CHECK(a == 8 && b == 3);
	CHECK(phpproc__name_version("php", &a, &b) == -ENOENT);
	CHECK(phpproc__name_version("libphp.so", &a, &b) == -ENOENT);
	CHECK(phpproc__name_version("phpx8.2", &a, &b) == -ENOENT);
}

TEST(version_string)
{
	static const char data[] = "\0\0junk X-Powered-By: PHP/\0 X-Powered-By: PHP/8.2.36\0tail";
	char v[16];
	unsigned a = 0, b = 0;

	CHECK(!phpproc__find_version(data, sizeof(data), v, sizeof(v), &a, &b));
	CHECK_STR(v, "8.2.36");
	CHECK(a == 8 && b == 2);
	CHECK(phpproc__find_version(data, 30, v, sizeof(v), &a, &b) == -ENOENT);
	CHECK(phpproc__find_version("", 0, v, sizeof(v), &a, &b) == -ENOENT);
}

TEST(code_check)
{
	/* zend_get_executed_lineno() of Debian's 8.2.36: lea EG(%rip),%rcx;
	 * mov 0x6b8(%rcx),%rax; ...; mov 0x1e8(%rcx),%rax */
	static const unsigned char code[] = {0x48, 0x8d, 0x0d, 0xd9, 0x83, 0x29, 0x00, 0x48, 0x8b,
					     0x81, 0xb8, 0x06, 0x00, 0x00, 0x48, 0x83, 0xf8, 0xff,
					     0x75, 0x34, 0x48, 0x8b, 0x81, 0xe8, 0x01, 0x00, 0x00};
	/* rip-relative (mod 00) and rsp-based (SIB) loads are not it */
	static const unsigned char other[] = {0x48, 0x8b, 0x05, 0xe8, 0x01, 0x00, 0x00,
					      0x48, 0x8b, 0x84, 0xe8, 0x01, 0x00, 0x00};

	CHECK(phpproc__code_reads(code, sizeof(code), 0x1e8));
	CHECK(phpproc__code_reads(code, sizeof(code), 0x6b8));
	CHECK(!phpproc__code_reads(code, sizeof(code), 0x1f0));
	CHECK(!phpproc__code_reads(code, sizeof(code) - 1, 0x1e8)); /* cut */
	CHECK(!phpproc__code_reads(other, sizeof(other), 0x1e8));
}

TEST(layouts)
{
	const struct phpproc_layout *l = phpproc__layout(8, 2);

	CHECK(l);
	CHECK(!phpproc__layout(8, 3));
	CHECK(!phpproc__layout(7, 4));
	/* zend_execute_data: opline first, prev after func and This */
	CHECK(l->ex_opline == 0 && l->ex_func < l->ex_call_info && l->ex_call_info < l->ex_prev);
	CHECK(l->ex_prev + 8 <= l->ex_size);
	CHECK(l->op_line_start + 4 <= l->op_size && l->op_filename + 8 <= l->op_size);
	CHECK(l->zop_lineno + 4 <= l->zop_size);
}

TEST(walker_entry)
{
	struct phpproc pp = {.layout = *phpproc__layout(8, 2),
			     .current_execute_data = 0x55550000011e8ull,
			     .exec_lo = 0x1000,
			     .exec_hi = 0x2000};
	struct php_proc e;

	CHECK(!sampler__php_proc(&pp, &e));
	CHECK_EQ_U64(e.current_execute_data, pp.current_execute_data);
	CHECK_EQ_U64(e.ex_prev, 0x30);
	CHECK_EQ_U64(e.call_top, 1u << 17);
	CHECK(e.ex_read >= 0x38 && e.ex_read <= PROFCAP_PHP_EX_READ && !(e.ex_read & 7));
	CHECK(e.func_read >= 0xa4 && e.func_read <= PROFCAP_PHP_FUNC_READ);
	pp.layout.op_line_start = PROFCAP_PHP_FUNC_READ; /* past the read */
	CHECK(sampler__php_proc(&pp, &e) == -EINVAL);
	pp.layout = *phpproc__layout(8, 2);
	pp.layout.fn_scope = 32; /* an internal function's head is 24 bytes */
	CHECK(sampler__php_proc(&pp, &e) == -EINVAL);
	pp.layout = *phpproc__layout(8, 2);
	pp.layout.ex_prev = PROFCAP_PHP_EX_READ;
	CHECK(sampler__php_proc(&pp, &e) == -EINVAL);
	pp.layout = *phpproc__layout(8, 2);
	pp.current_execute_data = 0;
	CHECK(sampler__php_proc(&pp, &e) == -EINVAL);
}

/* Value and size of exported symbol @name of @path (nm -D -S). */
static int nm_sym(const char *path, const char *name, unsigned long long *value,
		  unsigned long long *size)
{
	char cmd[256], line[512], t, n[256];
	unsigned long long v, sz;
	int found = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -D -S --defined-only %s 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %llx %c %255s", &v, &sz, &t, n) == 4 && !strcmp(n, name)) {
			*value = v;
			*size = sz;
			found = 0;
		}
	pclose(f);
	return found;
}

TEST(live_php)
{
	unsigned long long eg, egsz, ex, exsz;
	struct phpfx fx;
	struct phpproc pp;
	int err;

	if (phpfx__start(&fx))
		SKIP("needs %s (php8.2-cli)", PHPFX_PHP);
	err = phpproc__locate(NULL, fx.pid, NULL, &pp);
	phpfx__stop(&fx);
	CHECK_EQ_U64(err, 0);
	CHECK(!strncmp(pp.version, "8.2.", 4));
	CHECK_EQ_U64(pp.layout.version, 0x0802);
	if (nm_sym(PHPFX_PHP, "executor_globals", &eg, &egsz) ||
	    nm_sym(PHPFX_PHP, "execute_ex", &ex, &exsz))
		SKIP("nm cannot read %s", PHPFX_PHP);
	CHECK_EQ_U64(pp.exec_hi - pp.exec_lo, exsz);
	CHECK_EQ_U64(pp.current_execute_data - pp.exec_lo, eg + 0x1e8 - ex);
	CHECK(pp.layout.eg_current_execute_data + 8ull <= egsz);
}

TEST(not_php)
{
	struct phpproc pp;

	CHECK(phpproc__locate(NULL, getpid(), NULL, &pp) == -ENOENT);
	CHECK_EQ_U64(pp.current_execute_data, 0);
}

int main(void)
{
	RUN(names);
	RUN(version_string);
	RUN(code_check);
	RUN(layouts);
	RUN(walker_entry);
	RUN(live_php);
	RUN(not_php);
	return TEST_DONE();
}
