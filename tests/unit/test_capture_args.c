/* test_capture_args.c - `profcap capture` option parsing (no sampling). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "capture.h"
#include "test.h"

static int parse(struct capture_opts *o, int argc, char **argv)
{
	return capture__parse_args(argc, argv, o);
}

#define ARGS(...) ((char *[]){"capture", __VA_ARGS__, NULL})
#define NARGS(...) ((int)(sizeof((char *[]){"capture", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(o, ...) parse(o, NARGS(__VA_ARGS__), ARGS(__VA_ARGS__))

TEST(defaults)
{
	struct capture_opts o;
	char *argv[] = {"capture", NULL};

	CHECK(!parse(&o, 1, argv));
	CHECK(o.seconds == 10);
	CHECK_EQ_U64(o.freq_hz, 99);
	CHECK_EQ_U64(o.target.npids, 0);
	CHECK(o.user && o.kernel && o.idle);
	CHECK(!o.output && !o.quiet && !o.verbose);
}

TEST(all_flags)
{
	struct capture_opts o;

	CHECK(!PARSE(&o, "--seconds", "2.5", "-F", "999", "-p", "12,34", "--no-kernel", "--no-idle",
		     "-o", "x.pb", "-q", "-v"));
	CHECK(o.seconds == 2.5);
	CHECK_EQ_U64(o.freq_hz, 999);
	CHECK_EQ_U64(o.target.npids, 2);
	CHECK_EQ_U64(o.target.pids[0], 12);
	CHECK_EQ_U64(o.target.pids[1], 34);
	CHECK(!o.kernel && o.user && !o.idle);
	CHECK_STR(o.output, "x.pb");
	CHECK(o.quiet && o.verbose);
	CHECK(!PARSE(&o, "-p", "7", "-p", "8"));
	CHECK_EQ_U64(o.target.npids, 2);
	CHECK(!PARSE(&o, "-a", "--freq=49", "--output=y.pb"));
	CHECK_EQ_U64(o.freq_hz, 49);
	CHECK_STR(o.output, "y.pb");
}

TEST(rejects_bad_input)
{
	struct capture_opts o;

	CHECK(PARSE(&o, "--seconds", "0") == -EINVAL);
	CHECK(PARSE(&o, "--seconds", "1e9") == -EINVAL);
	CHECK(PARSE(&o, "--seconds", "inf") == -EINVAL);
	CHECK(PARSE(&o, "--seconds", "3s") == -EINVAL);
	CHECK(PARSE(&o, "-F", "100001") == -EINVAL);
	CHECK(PARSE(&o, "-F", "-5") == -EINVAL);
	CHECK(PARSE(&o, "-p", "0") == -EINVAL);
	CHECK(PARSE(&o, "-p", ",1") == -EINVAL);
	CHECK(PARSE(&o, "-p", "1,,2") == -EINVAL);
	CHECK(PARSE(&o, "-p", "99999999999") == -EINVAL);
	CHECK(PARSE(&o, "-a", "-p", "1") == -EINVAL);
	CHECK(PARSE(&o, "--no-user", "--no-kernel") == -EINVAL);
	CHECK(PARSE(&o, "--what") == -EINVAL);
	CHECK(PARSE(&o, "stray") == -EINVAL);
	CHECK(PARSE(&o, "-o", "") == -EINVAL);
	CHECK(PARSE(&o, "-o") == -EINVAL);
}

TEST(help)
{
	struct capture_opts o;
	int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY), r1, r2;

	/* The usage text goes to stdout, which carries the test results. */
	CHECK(saved >= 0 && null >= 0);
	dup2(null, STDOUT_FILENO);
	r1 = PARSE(&o, "--help");
	r2 = PARSE(&o, "-h");
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(null);
	CHECK(r1 == 1);
	CHECK(r2 == 1);
}

int main(void)
{
	/* Parsing errors and --help print to the terminal: keep test output clean. */
	if (!freopen("/dev/null", "w", stderr))
		return 1;
	setvbuf(stdout, NULL, _IONBF, 0);
	RUN(defaults);
	RUN(all_flags);
	RUN(rejects_bad_input);
	RUN(help);
	return TEST_DONE();
}
