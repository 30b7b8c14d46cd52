/* kname.c - kernel addresses named by the kernel (see kname.h): the
 * skeleton of bpf/kname_prog.bpf.c, run once per batch of KNAME_BATCH
 * addresses through its mapped .bss. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kname_prog.h"
#include "kname_prog.skel.h"
#include "collect/kname.h"

struct kname {
	struct kname_prog *skel;
	char *out;  /* the names of the last call, KNAME_LEN bytes each */
	size_t cap; /* names @out holds */
};

int kname__new(struct kname **out)
{
	struct kname *k;
	int err;

	*out = NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->skel = kname_prog__open_and_load();
	if (!k->skel) {
		err = errno ? -errno : -EINVAL;
		kname__free(k);
		return err;
	}
	*out = k;
	return 0;
}

void kname__free(struct kname *k)
{
	if (!k)
		return;
	kname_prog__destroy(k->skel);
	free(k->out);
	free(k);
}

/* Room for @n names in k->out, growing by doubling up to KNAME_MAX_ADDRS. */
static int reserve(struct kname *k, size_t n)
{
	size_t cap = k->cap ? k->cap : KNAME_BATCH;
	char *t;

	if (n <= k->cap)
		return 0;
	while (cap < n)
		cap *= 2;
	if (cap > KNAME_MAX_ADDRS)
		cap = KNAME_MAX_ADDRS;
	t = realloc(k->out, cap * KNAME_LEN);
	if (!t)
		return -ENOMEM;
	k->out = t;
	k->cap = cap;
	return 0;
}

int kname__name(struct kname *k, const __u64 *addrs, size_t n, const char **names, __u64 *stext,
		__u64 *etext)
{
	struct kname_prog__bss *bss = k->skel->bss;
	int fd = bpf_program__fd(k->skel->progs.kname_run);
	size_t done, i, m;
	int err;

	*stext = *etext = 0;
	if (n > KNAME_MAX_ADDRS)
		return -E2BIG;
	err = reserve(k, n);
	if (err)
		return err;
	done = 0;
	do { /* once with no address: the text range */
		LIBBPF_OPTS(bpf_test_run_opts, opts);

		m = n - done < KNAME_BATCH ? n - done : KNAME_BATCH;
		memcpy(bss->kname_addrs, addrs + done, m * sizeof(*addrs));
		bss->kname_n = (__u32)m;
		if (bpf_prog_test_run_opts(fd, &opts))
			return -errno;
		for (i = 0; i < m; i++) {
			char *dst = k->out + (done + i) * KNAME_LEN;

			memcpy(dst, bss->kname_out[i], KNAME_LEN);
			dst[KNAME_LEN - 1] = '\0';
			names[done + i] = dst;
		}
		*stext = bss->kname_stext;
		*etext = bss->kname_etext;
		done += m;
	} while (done < n);
	return 0;
}
