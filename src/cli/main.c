/* main.c - command dispatch: `profcap COMMAND [options]`. */
#include <stdio.h>
#include <string.h>

#include "cli/agent_cmd.h"
#include "cli/capture_cmd.h"
#include "cli/convert.h"
#include "cli/flamegraph_cmd.h"
#include "cli/report.h"
#include "cli/upload.h"
#include "util/version.h"

struct command {
	const char *name;
	int (*main)(int argc, char **argv);
	void (*usage)(void);
	const char *summary;
};

static const struct command commands[] = {
	{"capture", capture_cmd__main, capture_cmd__usage,
	 "sample CPU stacks and write an OTLP Profiles file"},
	{"agent", agent_cmd__main, agent_cmd__usage,
	 "profile continuously: one capture per window, to files and/or an endpoint"},
	{"upload", upload__main, upload__usage,
	 "send capture files (e.g. spooled ones) to an OTLP endpoint"},
	{"report", report__main, report__usage,
	 "show the hottest functions, processes and threads of a capture"},
	{"flamegraph", flamegraph__main, flamegraph__usage,
	 "write a capture as an interactive SVG flame graph"},
	{"convert", convert__main, convert__usage,
	 "convert a capture or perf script text to another format"},
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: profcap COMMAND [options]\n\nCommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "  %-10s %s\n", "help", "show help for a command (profcap help capture)");
	fprintf(f, "  %-10s %s\n", "version", "print the version");
	fprintf(f, "\nRun 'profcap COMMAND --help' for the options of a command.\n");
}

static const struct command *find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("profcap %s\n", PROFCAP_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		cmd = find(argv[2]);
		if (!cmd) {
			fprintf(stderr,
				"profcap: error: unknown command '%s'; run 'profcap --help'\n",
				argv[2]);
			return 2;
		}
		cmd->usage();
		return 0;
	}
	cmd = find(argv[1]);
	if (!cmd) {
		fprintf(stderr, "profcap: error: unknown command '%s'; run 'profcap --help'\n",
			argv[1]);
		return 2;
	}
	return cmd->main(argc - 1, argv + 1);
}
