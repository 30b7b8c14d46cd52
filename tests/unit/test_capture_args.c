/* test_capture_args.c - `profcap capture` option parsing (no sampling),
 * and the words of its status lines. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "capture/agent.h"
#include "capture/child.h"
#include "capture/status.h"
#include "cli/args.h"
#include "cli/agent_cmd.h"
#include "cli/capture_cmd.h"
#include "test.h"

static int parse(struct capture_opts *o, int argc, char **argv)
{
	return capture_cmd__parse_args(argc, argv, o);
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
	CHECK(o.unwind);
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
	CHECK(o.unwind);
	CHECK_STR(o.output, "x.pb");
	CHECK(o.quiet && o.verbose);
	CHECK(!PARSE(&o, "--no-unwind"));
	CHECK(!o.unwind && o.user);
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

TEST(targeting_flags)
{
	struct capture_opts o;

	CHECK(!PARSE(&o, "--tid", "5,6", "--comm", "nginx,averyveryverylongname", "--comm", "x",
		     "--cgroup", "/system.slice", "--container", "abcd1234", "-p", "1"));
	CHECK_EQ_U64(o.target.ntids, 2);
	CHECK_EQ_U64(o.target.tids[1], 6);
	CHECK_EQ_U64(o.target.ncomms, 3);
	CHECK_STR(o.target.comms[0], "nginx");
	CHECK_STR(o.target.comms[1], "averyveryverylo"); /* the kernel's 15 characters */
	CHECK_STR(o.target.comms[2], "x");
	CHECK_EQ_U64(o.target.ncgroups, 1);
	CHECK_STR(o.target.cgroups[0], "/system.slice");
	CHECK_EQ_U64(o.target.ncontainers, 1);
	CHECK(!o.cmd);
	CHECK(PARSE(&o, "--comm", "a,,b") == -EINVAL);
	CHECK(PARSE(&o, "--comm", "") == -EINVAL);
	CHECK(PARSE(&o, "--tid", "x") == -EINVAL);
	CHECK(PARSE(&o, "--cgroup", "") == -EINVAL);
	CHECK(PARSE(&o, "-a", "--container", "abcd") == -EINVAL);
}

TEST(command)
{
	struct capture_opts o;

	CHECK(!PARSE(&o, "-F", "49", "--", "sh", "-c", "exit 3"));
	CHECK(o.cmd != NULL);
	CHECK_STR(o.cmd[0], "sh");
	CHECK_STR(o.cmd[1], "-c");
	CHECK_STR(o.cmd[2], "exit 3");
	CHECK(o.cmd[3] == NULL);
	CHECK(o.seconds == 0); /* until the command exits */
	CHECK_EQ_U64(o.freq_hz, 49);
	/* The command's own options are not profcap's. */
	CHECK(!PARSE(&o, "--seconds", "2", "--", "ls", "-F", "--what"));
	CHECK(o.seconds == 2);
	CHECK_STR(o.cmd[1], "-F");
	CHECK(PARSE(&o, "--") == -EINVAL);
	CHECK(!PARSE(&o, "--", "/no/such/program")); /* checked before the run */
	CHECK(PARSE(&o, "-a", "--", "true") == -EINVAL);
	CHECK(PARSE(&o, "sh") == -EINVAL); /* a command needs -- */
}

/* A command that cannot run is found before any work, with the shell's
 * status: 127 not found, 126 not executable. */
TEST(command_check)
{
	char dir[] = "/tmp/profcap-test-cmd-XXXXXX", path[128];
	int fd;

	CHECK(mkdtemp(dir));
	CHECK(child__check("/no/such/program") == -ENOENT);
	CHECK(child__check("no-such-program-profcap") == -ENOENT);
	CHECK_EQ_U64(child__shell_status(-ENOENT), 127);
	CHECK(child__check(dir) == -EISDIR);
	CHECK_EQ_U64(child__shell_status(-EISDIR), 126);
	snprintf(path, sizeof(path), "%s/script.sh", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, "echo\n", 5) == 5);
	close(fd);
	CHECK(child__check(path) == -EACCES);
	CHECK_EQ_U64(child__shell_status(-EACCES), 126);
	CHECK(!chmod(path, 0755));
	CHECK(!child__check(path));
	CHECK(!child__check("sh"));
	unlink(path);
	rmdir(dir);
}

/* The long word users type, and the nearest flag for a typo. */
TEST(frequency_and_typos)
{
	static const struct option opts[] = {
		{"seconds", required_argument, NULL, 's'},
		{"freq", required_argument, NULL, 'F'},
		{"frequency", required_argument, NULL, 'F'},
		{"output", required_argument, NULL, 'o'},
		{NULL, 0, NULL, 0},
	};
	struct capture_opts o;

	CHECK(!PARSE(&o, "--frequency", "499"));
	CHECK_EQ_U64(o.freq_hz, 499);
	CHECK(!PARSE(&o, "--freq=299"));
	CHECK_EQ_U64(o.freq_hz, 299);
	CHECK_STR(args__nearest(opts, "--sekonds"), "seconds");
	CHECK_STR(args__nearest(opts, "--frequncy"), "frequency");
	CHECK_STR(args__nearest(opts, "--outptu=x"), "output");
	CHECK(!args__nearest(opts, "--zz"));
	CHECK(!args__nearest(opts, "--completely-else"));
	CHECK(!args__nearest(opts, "-x"));
	CHECK(PARSE(&o, "--sekonds", "1") == -EINVAL);
}

#define AARGS(...) ((char *[]){"agent", __VA_ARGS__, NULL})
#define ANARGS(...) ((int)(sizeof((char *[]){"agent", __VA_ARGS__}) / sizeof(char *)))
#define APARSE(o, ...) agent_cmd__parse_args(ANARGS(__VA_ARGS__), AARGS(__VA_ARGS__), o)

TEST(agent_flags)
{
	struct capture_opts o;

	CHECK(!APARSE(&o, "--output-dir", "/tmp/x"));
	CHECK(o.agent && o.interval == 60);
	CHECK(o.unwind);
	CHECK(!APARSE(&o, "--output-dir", "d", "--no-unwind"));
	CHECK(!o.unwind);
	CHECK_EQ_U64(o.max_dir_bytes, 256ull << 20);
	CHECK(!APARSE(&o, "--output-dir", "d", "--interval", "500ms", "--max-dir-size", "64M",
		      "--json", "--comm", "java", "-F", "19"));
	CHECK(o.interval == 0.5);
	CHECK_EQ_U64(o.max_dir_bytes, 64ull << 20);
	CHECK(o.json);
	CHECK_EQ_U64(o.target.ncomms, 1);
	CHECK(!APARSE(&o, "--output-dir", "d", "--interval", "5m"));
	CHECK(o.interval == 300);
	CHECK(!APARSE(&o, "--output-dir", "d", "--interval", "2"));
	CHECK(o.interval == 2);
	CHECK(!APARSE(&o, "--endpoint", "http://127.0.0.1:4318"));
	CHECK(!o.output_dir);
	CHECK(APARSE(&o, "--interval", "10s") == -EINVAL); /* nowhere to deliver */
	CHECK(APARSE(&o, "--output-dir", "d", "--interval", "0") == -EINVAL);
	CHECK(APARSE(&o, "--output-dir", "d", "--interval", "1d") == -EINVAL);
	CHECK(APARSE(&o, "--output-dir", "d", "--max-dir-size", "1") == -EINVAL);
	CHECK(APARSE(&o, "--output-dir", "d", "--max-dir-size", "5MB") == -EINVAL);
	CHECK(APARSE(&o, "--output-dir", "d", "stray") == -EINVAL);
	CHECK(APARSE(&o, "--endpoint", "http://h", "--format", "svg") == -EINVAL);
	/* Capture's targeting flags, -a included. */
	CHECK(!APARSE(&o, "--output-dir", "d", "-a"));
	CHECK(!APARSE(&o, "--output-dir", "d", "--all-cpus"));
	CHECK(APARSE(&o, "--output-dir", "d", "-a", "-p", "1") == -EINVAL);
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

/* The progress line of `-- CMD` without --seconds has no length to show;
 * counts take the noun's singular for one. */
TEST(status_words)
{
	char line[128];

	status__progress_text(line, sizeof(line), 500000000, 0, 1);
	CHECK_STR(line, "capturing 0.5s, 1 sample");
	status__progress_text(line, sizeof(line), 2500000000ll, 10, 0);
	CHECK_STR(line, "capturing 2.5s / 10s, 0 samples");
	status__progress_text(line, sizeof(line), 1000000000, 0.5, 7);
	CHECK_STR(line, "capturing 1.0s / 0.5s, 7 samples");
	CHECK_STR(status__noun(1, "process", "processes"), "process");
	CHECK_STR(status__noun(0, "process", "processes"), "processes");
	CHECK_STR(status__noun(2, "stack", "stacks"), "stacks");
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
	RUN(targeting_flags);
	RUN(command);
	RUN(command_check);
	RUN(frequency_and_typos);
	RUN(agent_flags);
	RUN(help);
	RUN(status_words);
	return TEST_DONE();
}
