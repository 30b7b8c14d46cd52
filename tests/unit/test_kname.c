/* test_kname.c - kernel addresses named by the kernel (collect/kname.h)
 * against /proc/kallsyms, where this user may load BPF: every address
 * across the core text (and module text, when modules are loaded) gets a
 * symbol the file has at that start, and the same text range. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/kname.h"
#include "symbolize/kallsyms.h"
#include "test.h"

#define NADDR 600

/* Is "@name" a text symbol at @addr in /proc/kallsyms (an alias counts)? */
static int file_has(__u64 addr, const char *name)
{
	char line[768], want[32];
	FILE *f = fopen("/proc/kallsyms", "r");
	int found = 0;

	if (!f)
		return 0;
	snprintf(want, sizeof(want), "%016llx ", (unsigned long long)addr);
	while (!found && fgets(line, sizeof(line), f)) {
		char *nm;

		if (strncmp(line, want, 17))
			continue;
		nm = line + 19;
		nm[strcspn(nm, "\t\n")] = '\0';
		found = !strcmp(nm, name);
	}
	fclose(f);
	return found;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

TEST(matches_kallsyms)
{
	static __u64 addrs[NADDR];
	static const char *names[NADDR];
	struct kallsyms *k = NULL;
	struct kallsyms_query *q = NULL;
	struct kname *kn = NULL;
	__u64 start, end, ts, te, stext, etext;
	size_t i, n = 0, named = 0, checked = 0;
	int err = kallsyms__load("/proc/kallsyms", &k);

	if (err)
		SKIP("/proc/kallsyms not readable here: %s", strerror(-err));
	err = kname__new(&kn);
	if (err) {
		kallsyms__free(k);
		SKIP("cannot load the kernel namer here (%s): needs root and Linux >= 5.16",
		     strerror(-err));
	}
	kallsyms__text_range(k, &start, &end);
	for (i = 0; i < NADDR - 64; i++)
		addrs[n++] = start + (end - start) / (NADDR - 64) * i + 0x21;
	for (i = 0; i < kallsyms__module_count(k) && n < NADDR; i++) {
		const struct kallsyms_module *m = kallsyms__module(k, i);

		if (m->end > m->start + 0x40 && strcmp(m->name, "bpf"))
			addrs[n++] = m->start + 0x10;
	}
	/* ascending, unique */
	qsort(addrs, n, sizeof(*addrs), cmp_u64);
	{
		size_t j = 0;

		for (i = 0; i < n; i++)
			if (!j || addrs[i] > addrs[j - 1])
				addrs[j++] = addrs[i];
		n = j;
	}
	CHECK(!kname__name(kn, addrs, n, names, &stext, &etext));
	CHECK(stext == start);
	CHECK(!kallsyms__query_names(addrs, n, names, stext, etext, &q));
	for (i = 0; i < n; i++) {
		const struct kallsyms_hit *h = kallsyms__query_hit(q, i);
		__u64 sym = 0;
		int mod = -1;
		const char *name = kallsyms__lookup(k, addrs[i], &sym, &mod);

		/* In a gap, or past the end of core or init text, where the
		 * file's table stretches the end marker: the kernel names
		 * nothing there (no sample is taken there either). */
		if (!name || !strcmp(name, "_etext") || !strcmp(name, "_einittext"))
			continue;
		/* ftrace trampolines: not in the kernel's lookup, so the
		 * symbolizer's pass falls back to the file for them. */
		if (mod >= 0 && !strcmp(kallsyms__module(k, (size_t)mod)->name, "__builtin__ftrace")) {
			CHECK(!h->name);
			continue;
		}
		if (!h->name)
			printf("  unnamed %llx: the file says %s, the kernel \"%s\"\n",
			       (unsigned long long)addrs[i], name, names[i]);
		CHECK(h->name != NULL);
		if (!h->name)
			continue;
		named++;
		CHECK_EQ_U64(h->start, sym);
		CHECK(h->end > addrs[i]);
		CHECK((h->module >= 0) == (mod >= 0));
		/* Aliases: the kernel may pick another name at the same start. */
		if (strcmp(name, h->name) && checked < 40) {
			CHECK(file_has(h->start, h->name));
			checked++;
		}
	}
	printf("  %zu addresses, %zu named, %zu aliases checked in the file\n", n, named, checked);
	CHECK(named > 200); /* about half the range is data between text and init text */
	kallsyms__query_text_range(q, &ts, &te);
	CHECK(ts == start);
	CHECK(te >= etext);
	CHECK(kname__name(kn, addrs, KNAME_MAX_ADDRS + 1, names, &stext, &etext) == -E2BIG);
	kallsyms__query_free(q);
	kname__free(kn);
	kallsyms__free(k);
	kname__free(NULL);
}

int main(void)
{
	RUN(matches_kallsyms);
	return TEST_DONE();
}
