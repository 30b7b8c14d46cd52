/* id.c - random identifiers (see id.h). */
#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>

#include "util/id.h"

void id__random(__u8 id[16])
{
	bool nonzero = false;
	size_t i;

	if (getrandom(id, 16, 0) != 16) {
		__u64 x = (__u64)time(NULL) ^ ((__u64)getpid() << 32);

		for (i = 0; i < 16; i++, x = x * 6364136223846793005ull + 1442695040888963407ull)
			id[i] = (__u8)(x >> 56);
	}
	for (i = 0; i < 16; i++)
		nonzero |= id[i] != 0;
	if (!nonzero)
		id[0] = 1;
}
