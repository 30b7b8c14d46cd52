/* sampler_cpus.c - what sampling needs of the machine: privileges, the
 * online CPUs, and one cpu-clock perf event per online CPU. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "collect/sampler_int.h"
#include "proc/status.h"
#include "util/log.h"

/* Does this process have what sampling needs? 1 yes, 0 no, -1 cannot tell. */
int cpus__privileged(void)
{
	const int cap_sys_admin = 21, cap_perfmon = 38, cap_bpf = 39;
	unsigned long long eff = 0;

	if (proc_status__self("CapEff:", 0, 16, &eff))
		return -1;
	if (eff & (1ull << cap_sys_admin))
		return 1;
	return (eff & (1ull << cap_bpf)) && (eff & (1ull << cap_perfmon));
}

int sampler__check_privileges(void)
{
	if (cpus__privileged())
		return 0; /* or cannot tell: let the load itself fail clearly */
	pr_err("sampling needs CAP_BPF and CAP_PERFMON (or root): run profcap as root, or grant "
	       "them with 'setcap cap_bpf,cap_perfmon+ep profcap' (kernel >= 5.8)");
	return -EPERM;
}

/* Parse a kernel CPU list ("0-3,5,7-8") into @online[0..*n). */
static int parse_cpu_list(const char *str, bool **online, __u32 *n)
{
	unsigned long a, b, max = 0;
	const char *p = str;
	char *end;
	bool *set;

	/* First pass: the highest CPU number. */
	while (*p && *p != '\n') {
		a = strtoul(p, &end, 10);
		if (end == p)
			return -EINVAL;
		b = a;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		if (b < a || b >= 65536)
			return -EINVAL;
		if (b + 1 > max)
			max = b + 1;
		p = *end == ',' ? end + 1 : end;
	}
	if (!max)
		return -EINVAL;
	set = calloc(max, sizeof(*set));
	if (!set)
		return -ENOMEM;
	for (p = str; *p && *p != '\n';) {
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		while (a <= b)
			set[a++] = true;
		p = *end == ',' ? end + 1 : end;
	}
	*online = set;
	*n = (__u32)max;
	return 0;
}

/* The online CPUs: (*@online)[0..*@n) (the caller frees it). 0 or -errno. */
int cpus__online(bool **online, __u32 *n)
{
	char buf[4096];
	ssize_t len;
	int fd, err;

	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	err = len < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[len] = '\0';
	return parse_cpu_list(buf, online, n);
}

static int perf_open_cpu(int cpu, __u32 hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000000ull / hz,
		.disabled = 1,
	};

	return (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* One cpu-clock perf event per online CPU (@online, s->ncpus entries). 0,
 * or -errno after logging why, with a hint for each usual cause. */
int cpus__open_events(struct sampler *s, const bool *online, __u32 freq_hz)
{
	__u32 i;
	int err;

	for (i = 0; i < s->ncpus; i++) {
		if (!online[i])
			continue;
		s->pfds[i] = perf_open_cpu((int)i, freq_hz);
		if (s->pfds[i] >= 0)
			continue;
		err = -errno;
		if (err == -EACCES || err == -EPERM)
			pr_err("perf events are not permitted (%s): run as root or grant "
			       "CAP_PERFMON, or lower kernel.perf_event_paranoid "
			       "(sysctl -w kernel.perf_event_paranoid=-1)",
			       strerror(-err));
		else if (err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP)
			pr_err("the cpu-clock perf event is unavailable on CPU %u (%s): the "
			       "kernel needs CONFIG_PERF_EVENTS",
			       i, strerror(-err));
		else if (err == -EMFILE)
			pr_err("out of file descriptors opening perf events for %u CPUs: "
			       "raise the limit with 'ulimit -n'",
			       s->ncpus);
		else
			pr_err("perf_event_open on CPU %u failed: %s", i, strerror(-err));
		return err;
	}
	return 0;
}
