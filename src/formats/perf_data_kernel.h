/* perf_data_kernel.h - name the kernel frames of a profile read from
 * perf.data with this machine's /proc/kallsyms, when the recording was made
 * by this very kernel and boot: the recorded kernel build-id equals the one
 * in /sys/kernel/notes, and the recorded kernel text address equals this
 * boot's (KASLR moves it by at least 2 MiB across boots). Otherwise the
 * frames keep their addresses. Modules are named the same way.
 */
#ifndef PROFCAP_PERF_DATA_KERNEL_H
#define PROFCAP_PERF_DATA_KERNEL_H

#include <stdbool.h>

struct profile;

/* Paths read: normally "/sys/kernel/notes" and "/proc/kallsyms". */
struct perf_data_kernel_src {
	const char *notes;
	const char *kallsyms;
};

/* When @src matches @p's kernel mapping, replace *@p by a copy whose
 * unnamed kernel frames are named. *@named says whether it did. 0, or
 * -ENOMEM / -E2BIG (*@p unchanged). */
int perf_data_kernel__name(struct profile **p, const struct perf_data_kernel_src *src,
			   bool *named);

#endif
