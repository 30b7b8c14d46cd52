/* test_privs.c - what a missing privilege costs, decided from capabilities
 * and sysctls: the kernel-symbol reason and the other-users warning. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc/privs.h"
#include "test.h"

#define CAP(n) (1ull << (n))

TEST(kallsyms_reason)
{
	struct privs p = {.eff = CAP(PRIVS_CAP_BPF) | CAP(PRIVS_CAP_PERFMON), .euid = 1000};
	char msg[400];

	/* kptr_restrict 0 is not the cause: perf_event_paranoid is */
	p.kptr_restrict = 0;
	p.perf_paranoid = 2;
	privs__kallsyms_hidden(&p, msg, sizeof(msg));
	CHECK(strstr(msg,
		     "kernel.perf_event_paranoid is 2 (above 1) and profcap lacks CAP_SYSLOG"));
	CHECK(!strstr(msg, "kptr_restrict"));

	p.kptr_restrict = 1;
	privs__kallsyms_hidden(&p, msg, sizeof(msg));
	CHECK(strstr(msg, "kernel.kptr_restrict is 1 and profcap lacks CAP_SYSLOG"));

	/* 2 hides them even from CAP_SYSLOG */
	p.kptr_restrict = 2;
	p.eff |= CAP(PRIVS_CAP_SYSLOG);
	privs__kallsyms_hidden(&p, msg, sizeof(msg));
	CHECK(strstr(msg, "kernel.kptr_restrict is 2, which hides them from everyone"));
}

TEST(foreign_cost)
{
	struct privs p = {.eff = CAP(PRIVS_CAP_BPF) | CAP(PRIVS_CAP_PERFMON), .euid = 1000};
	char msg[700];

	CHECK(privs__foreign_cost(&p, msg, sizeof(msg)));
	CHECK(strstr(msg, "running as uid 1000 without CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH: "));
	CHECK(strstr(msg, "processes of other users get no symbols and no table unwinding"));
	CHECK(strstr(msg, "binaries and libraries uid 1000 cannot read stay unsymbolized"));
	CHECK(strstr(msg, "cap_sys_ptrace,cap_dac_read_search+ep"));

	p.eff |= CAP(PRIVS_CAP_SYS_PTRACE);
	CHECK(privs__foreign_cost(&p, msg, sizeof(msg)));
	CHECK(strstr(msg, "without CAP_DAC_READ_SEARCH: binaries"));
	CHECK(!strstr(msg, "CAP_SYS_PTRACE"));

	p.eff = CAP(PRIVS_CAP_BPF) | CAP(PRIVS_CAP_PERFMON) | CAP(PRIVS_CAP_DAC_OVERRIDE);
	CHECK(privs__foreign_cost(&p, msg, sizeof(msg)));
	CHECK(strstr(msg, "without CAP_SYS_PTRACE: processes of other users"));
	CHECK(!strstr(msg, "cannot read"));

	p.eff |= CAP(PRIVS_CAP_SYS_PTRACE);
	CHECK(!privs__foreign_cost(&p, msg, sizeof(msg)));
	CHECK(!msg[0]);
}

/* This process: capget agrees with /proc/self/status. */
TEST(read_self)
{
	unsigned long long eff = 0;
	char line[256];
	struct privs p;
	FILE *f;

	CHECK(!privs__read("/proc", &p));
	CHECK(p.euid == (unsigned int)geteuid());
	f = fopen("/proc/self/status", "r");
	CHECK(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	CHECK_EQ_U64(p.eff, eff);
	CHECK(p.kptr_restrict >= 0 && p.perf_paranoid > -99);
}

int main(void)
{
	RUN(kallsyms_reason);
	RUN(foreign_cost);
	RUN(read_self);
	return TEST_DONE();
}
