/* lines_bench.c - symbolize ELF virtual addresses of one file with
 * profcap's elfsym + dwarf modules, as addr2line -fi does.
 *
 *   lines_bench FILE ADDRS [--print]
 * ADDRS holds one hex address per line. Prints the wall time of the whole
 * run (open + index + lookups) and the lookup count on stderr; --print writes
 * each address's frames, innermost first, as addr2line -fi -a would:
 *   0x<addr>\n<function>\n<file>:<line>\n...
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/dwarf.h"
#include "symbolize/elfsym.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const struct profile_line *l;
	struct dwarf_lines *dw = NULL;
	struct elfsym *e = NULL;
	unsigned long long *addrs = NULL;
	size_t n = 0, cap = 0, i, k, nl, found = 0;
	bool print = argc > 3 && !strcmp(argv[3], "--print");
	char buf[64];
	double t0, t1;
	FILE *f;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: lines_bench FILE ADDRS [--print]\n");
		return 2;
	}
	f = fopen(argv[2], "r");
	if (!f) {
		perror(argv[2]);
		return 2;
	}
	while (fgets(buf, sizeof(buf), f)) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			addrs = realloc(addrs, cap * sizeof(*addrs));
			if (!addrs)
				return 1;
		}
		addrs[n++] = strtoull(buf, NULL, 16);
	}
	fclose(f);
	t0 = now();
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || elfsym__open_fd(fd, &e)) {
		fprintf(stderr, "lines_bench: cannot read %s\n", argv[1]);
		return 2;
	}
	if (dwarf_lines__open_fd(fd, &dw))
		fprintf(stderr, "lines_bench: no DWARF in %s\n", argv[1]);
	close(fd);
	for (i = 0; i < n; i++) {
		const char *sym = elfsym__lookup(e, addrs[i], NULL);

		nl = 0;
		l = NULL;
		if (dw)
			dwarf_lines__lookup(dw, addrs[i], sym, &l, &nl);
		found += nl > 0;
		if (!print)
			continue;
		printf("0x%016llx\n", addrs[i]);
		if (!nl)
			printf("%s\n??:0\n", sym ? sym : "??");
		for (k = 0; k < nl; k++)
			printf("%s\n%s:%lld\n", l[k].function ? l[k].function : "??",
			       l[k].filename ? l[k].filename : "??", (long long)l[k].line);
	}
	t1 = now();
	fprintf(stderr, "lines_bench: %zu addresses, %zu with lines, %.3f s\n", n, found, t1 - t0);
	dwarf_lines__free(dw);
	elfsym__free(e);
	free(addrs);
	return 0;
}
