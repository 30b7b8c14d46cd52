#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "proc/privs.h"

static int read_int(const char *proc_root, const char *rel, int *v)
{
	char path[256], buf[32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", proc_root, rel);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*v = atoi(buf);
	return 0;
}

int privs__read(const char *proc_root, struct privs *p)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(p, 0, sizeof(*p));
	p->euid = (unsigned int)geteuid();
	p->kptr_restrict = -1;
	p->perf_paranoid = -99;
	read_int(proc_root, "sys/kernel/kptr_restrict", &p->kptr_restrict);
	read_int(proc_root, "sys/kernel/perf_event_paranoid", &p->perf_paranoid);
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	p->eff = (__u64)data[0].effective | (__u64)data[1].effective << 32;
	return 0;
}

bool privs__has(const struct privs *p, int cap)
{
	return cap >= 0 && cap < 64 && (p->eff >> cap & 1);
}

void privs__kallsyms_hidden(const struct privs *p, char *msg, size_t len)
{
	bool syslog = privs__has(p, PRIVS_CAP_SYSLOG);

	if (p->kptr_restrict >= 2)
		snprintf(msg, len,
			 "kernel.kptr_restrict is %d, which hides them from everyone; set "
			 "kernel.kptr_restrict=1 and grant CAP_SYSLOG, or set it to 0",
			 p->kptr_restrict);
	else if (p->kptr_restrict == 1 && !syslog)
		snprintf(msg, len,
			 "kernel.kptr_restrict is 1 and profcap lacks CAP_SYSLOG; grant it "
			 "('setcap cap_bpf,cap_perfmon,cap_syslog+ep profcap') or run as root");
	else if (p->kptr_restrict == 0 && !syslog && p->perf_paranoid > 1)
		snprintf(msg, len,
			 "kernel.perf_event_paranoid is %d (above 1) and profcap lacks "
			 "CAP_SYSLOG; grant it ('setcap cap_bpf,cap_perfmon,cap_syslog+ep "
			 "profcap'), run as root, or set kernel.perf_event_paranoid=1",
			 p->perf_paranoid);
	else
		snprintf(msg, len,
			 "kernel.kptr_restrict is %d, kernel.perf_event_paranoid %d, CAP_SYSLOG "
			 "%s; run as root",
			 p->kptr_restrict, p->perf_paranoid, syslog ? "held" : "missing");
}

bool privs__foreign_cost(const struct privs *p, char *msg, size_t len)
{
	bool ptrace = privs__has(p, PRIVS_CAP_SYS_PTRACE);
	bool dac =
		privs__has(p, PRIVS_CAP_DAC_READ_SEARCH) || privs__has(p, PRIVS_CAP_DAC_OVERRIDE);
	size_t n = 0;

	msg[0] = '\0';
	if (ptrace && dac)
		return false;
	n += (size_t)snprintf(msg, len, "running as uid %u without %s%s%s:", p->euid,
			      ptrace ? "" : "CAP_SYS_PTRACE", !ptrace && !dac ? " and " : "",
			      dac ? "" : "CAP_DAC_READ_SEARCH");
	if (!ptrace && n < len)
		n += (size_t)snprintf(msg + n, len - n,
				      " processes of other users get no symbols and no table "
				      "unwinding (their /proc/PID/maps and root are closed; "
				      "frame pointers only)%s",
				      dac ? "" : ";");
	if (!dac && n < len)
		n += (size_t)snprintf(msg + n, len - n,
				      " binaries and libraries uid %u cannot read stay "
				      "unsymbolized",
				      p->euid);
	if (n < len)
		snprintf(msg + n, len - n,
			 "; grant %s%s%s ('setcap cap_bpf,cap_perfmon,cap_syslog%s%s+ep "
			 "profcap') or run as root",
			 ptrace ? "" : "CAP_SYS_PTRACE", !ptrace && !dac ? " and " : "",
			 dac ? "" : "CAP_DAC_READ_SEARCH", ptrace ? "" : ",cap_sys_ptrace",
			 dac ? "" : ",cap_dac_read_search");
	return true;
}
