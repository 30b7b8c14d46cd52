/* test_elfsyms.c - the small .dynsym reader of proc/: every exported
 * symbol of the fixture program found with nm's value and size (through
 * .gnu.hash), types filtered, absent names and malformed files refused,
 * and bytes read at a link-time address. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/elfsyms.h"
#include "test.h"
#include "fixtures.h"

static int open_fixture(const char *name)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", fixture_dir, name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static unsigned int type_bit(char t)
{
	switch (t) {
	case 'T': case 't':
		return 1u << STT_FUNC;
	case 'W':
		return 1u << STT_FUNC | 1u << STT_OBJECT | 1u << STT_NOTYPE;
	case 'D': case 'd': case 'B': case 'b': case 'R': case 'r': case 'V':
		return 1u << STT_OBJECT | 1u << STT_NOTYPE;
	default:
		return 0;
	}
}

TEST(every_exported_symbol)
{
	struct elfsyms_file f;
	struct elfsyms_query q[2];
	char path[4200], line[512], name[256], type;
	unsigned long long value, size;
	int fd = open_fixture("fx_stripped"), checked = 0, fields;
	FILE *nm;

	CHECK(fd >= 0);
	CHECK_EQ_U64(elfsyms__open(fd, &f), 0);
	snprintf(path, sizeof(path), "%s/fx_stripped.nm", fixture_dir);
	nm = fopen(path, "r");
	CHECK(nm != NULL);
	while (fgets(line, sizeof(line), nm)) {
		size = 0;
		fields = sscanf(line, "%llx %llx %c %255s", &value, &size, &type, name);
		if (fields != 4) {
			size = 0;
			fields = sscanf(line, "%llx %c %255s", &value, &type, name);
			if (fields != 3)
				continue;
		}
		if (!type_bit(type))
			continue;
		name[strcspn(name, "@")] = 0; /* nm adds the symbol version */
		memset(q, 0, sizeof(q));
		q[0] = (struct elfsyms_query){.name = name, .types = type_bit(type)};
		q[1] = (struct elfsyms_query){.name = "no_such_symbol_here", .types = ~0u};
		if (elfsyms__dynsym(&f, q, 2, NULL) || !q[0].found || q[0].value != value ||
		    q[0].size != size || q[1].found) {
			printf("  %s: found %d value %llx size %llu\n", name, q[0].found,
			       (unsigned long long)q[0].value, (unsigned long long)q[0].size);
			fclose(nm);
			elfsyms__close(&f);
			close(fd);
			CHECK(!"symbol as nm -D says");
		}
		checked++;
	}
	fclose(nm);
	/* the wrong type is not a match */
	q[0] = (struct elfsyms_query){.name = "fx_alpha", .types = 1u << STT_TLS};
	CHECK_EQ_U64(elfsyms__dynsym(&f, q, 1, NULL), -ENOENT);
	elfsyms__close(&f);
	close(fd);
	CHECK(checked >= 5);
}

TEST(read_vaddr)
{
	struct elfsyms_file f;
	unsigned char a[16], b[16];
	int fd = open_fixture("fx_nopie"), i;
	Elf64_Ehdr eh;

	CHECK(fd >= 0);
	CHECK_EQ_U64(elfsyms__open(fd, &f), 0);
	CHECK(f.load_base == 0x400000);
	/* the ELF header is at the start of the first segment */
	CHECK_EQ_U64(elfsyms__read_vaddr(&f, a, sizeof(a), f.load_base), 0);
	CHECK(pread(fd, b, sizeof(b), 0) == (ssize_t)sizeof(b));
	CHECK(!memcmp(a, b, sizeof(a)));
	CHECK_EQ_U64(elfsyms__read_vaddr(&f, a, sizeof(a), 0x10), -ENOENT);
	CHECK_EQ_U64(elfsyms__read_vaddr(&f, a, sizeof(a), ~0ull - 4), -ENOENT);
	elfsyms__close(&f);
	/* not ELF, truncated headers */
	CHECK(pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh));
	close(fd);
	{
		char path[] = "/tmp/test_elfsyms.XXXXXX";
		int t = mkstemp(path);

		CHECK(t >= 0);
		unlink(path);
		CHECK(write(t, "not an elf file at all, just text of some length....", 52) == 52);
		CHECK_EQ_U64(elfsyms__open(t, &f), -ENOEXEC);
		CHECK(ftruncate(t, 0) == 0);
		eh.e_phoff = 1u << 30; /* program headers past the end */
		CHECK(pwrite(t, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh));
		CHECK_EQ_U64(elfsyms__open(t, &f), -ENOEXEC);
		for (i = 0; i < 2; i++)
			elfsyms__close(i ? NULL : &f);
		close(t);
	}
}

int main(void)
{
	char line[512];

	fixtures__init();
	if (fixtures__read_line("fx_stripped", "nm", line, sizeof(line)))
		return SKIP_ALL("%s/fx_stripped.nm missing (run make)", fixture_dir);
	RUN(every_exported_symbol);
	RUN(read_vaddr);
	return TEST_DONE();
}
