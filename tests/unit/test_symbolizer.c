/* test_symbolizer.c - the symbolizer on live processes (this test, fixture
 * programs it starts) and on a fake proc_root laid out like /proc. No root
 * needed: without CAP_SYS_ADMIN map_files is closed and the PROC/PID/root
 * fallback is used. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/elfsym.h"
#include "symbolize/symbolizer.h"
#include "fixtures.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "util/clock.h"
#include "test.h"

/* Address of a text symbol in `nm` output of fixture @bin, 0 if absent. */
static unsigned long long nm_addr(const char *bin, const char *name)
{
	char path[4200], line[512], sym[256], type;
	unsigned long long addr, size, res = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.nm", fixture_dir, bin);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (!res && fgets(line, sizeof(line), f)) {
		if ((sscanf(line, "%llx %llx %c %255s", &addr, &size, &type, sym) == 4 ||
		     sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3) &&
		    !strcmp(sym, name))
			res = addr;
	}
	fclose(f);
	return res;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

/* ---- a live fixture process ---------------------------------------------------- */

#define MAX_FX_SYMS 16

struct fx_proc {
	pid_t pid;
	int in_fd; /* the child's stdin; closing it ends the child */
	size_t n;
	char names[MAX_FX_SYMS][32];
	unsigned long long addrs[MAX_FX_SYMS];
};

/* Start fixture @path with "serve" and read its "name addr" lines. */
static int fx_start(const char *path, struct fx_proc *fx)
{
	int in[2], out[2];
	char line[256];
	FILE *f;

	memset(fx, 0, sizeof(*fx));
	/* Close-on-exec, so later children do not hold this one's stdin open. */
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -errno;
	fx->pid = fork();
	if (fx->pid < 0)
		return -errno;
	if (!fx->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, "serve", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	fx->in_fd = in[1];
	f = fdopen(out[0], "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "ready", 5)) {
			fclose(f);
			return 0;
		}
		if (fx->n < MAX_FX_SYMS &&
		    sscanf(line, "%31s %llx", fx->names[fx->n], &fx->addrs[fx->n]) == 2)
			fx->n++;
	}
	fclose(f);
	return -EIO;
}

static void fx_stop(struct fx_proc *fx)
{
	if (fx->pid <= 0)
		return;
	close(fx->in_fd);
	waitpid(fx->pid, NULL, 0);
	fx->pid = 0;
}

static unsigned long long fx_addr(const struct fx_proc *fx, const char *name)
{
	size_t i;

	for (i = 0; i < fx->n; i++)
		if (!strcmp(fx->names[i], name))
			return fx->addrs[i];
	return 0;
}

/* ---- tests ------------------------------------------------------------------------ */

__attribute__((noinline)) int symbolizer_test_target(int x)
{
	__asm__ volatile("" : : : "memory");
	return x * 7;
}

TEST(self_process)
{
	struct symbolizer *s = symbolizer__new("/proc");
	const struct profile_process_desc *pd;
	struct profile_frame fr;
	__u64 addr = (__u64)(unsigned long)&symbolizer_test_target;

	CHECK(s);
	CHECK(!symbolizer__add_process(s, getpid()));
	symbolizer__resolve_user(s, getpid(), addr, true, &fr);
	CHECK_STR(fr.function, "symbolizer_test_target");
	CHECK(fr.mapping);
	CHECK_STR(fr.mapping->path, self_exe);
	CHECK(fr.mapping->start <= addr && addr < fr.mapping->limit);
	CHECK(fr.type == PROFILE_FRAME_NATIVE);
	CHECK_EQ_U64(fr.address, addr);
	/* A return address just past the function start looks up addr - 1. */
	symbolizer__resolve_user(s, getpid(), addr + 1, false, &fr);
	CHECK_STR(fr.function, "symbolizer_test_target");
	CHECK_EQ_U64(fr.address, addr + 1);
	pd = symbolizer__process(s, getpid());
	CHECK(pd);
	CHECK_EQ_U64(pd->pid, getpid());
	CHECK_STR(pd->exe_name, "test_symbolizer");
	CHECK_STR(pd->exe_path, self_exe);
	CHECK(pd->cmdline && strstr(pd->cmdline, "test_symbolizer"));
	/* Unknown address: no mapping, no function, no crash. */
	symbolizer__resolve_user(s, getpid(), 0x10, true, &fr);
	CHECK(!fr.mapping && !fr.function);
	symbolizer__free(s);
}

TEST(self_vdso)
{
	struct symbolizer *s = symbolizer__new("/proc");
	unsigned long long start = 0, end = 0;
	struct elfsym *vdso = NULL;
	struct profile_frame fr;
	char line[512];
	FILE *f;

	CHECK(s);
	f = fopen("/proc/self/maps", "r");
	CHECK(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%llx-%llx", &start, &end);
	fclose(f);
	if (!start) {
		symbolizer__free(s);
		SKIP("no vdso in this process");
	}
	CHECK(!symbolizer__add_process(s, getpid()));
	symbolizer__resolve_user(s, getpid(), start + 16, true, &fr);
	CHECK(fr.mapping);
	CHECK_STR(fr.mapping->path, "[vdso]");
	CHECK(!elfsym__open_self_vdso(&vdso));
	if (elfsym__build_id(vdso))
		CHECK_STR(fr.mapping->build_id, elfsym__build_id(vdso));
	elfsym__free(vdso);
	symbolizer__free(s);
}

TEST(same_binary_parsed_once)
{
	struct symbolizer *s = symbolizer__new("/proc");
	struct symbolizer_stats a, b;
	struct profile_frame fr;
	pid_t child;

	CHECK(s);
	child = fork();
	CHECK(child >= 0);
	if (!child) {
		alarm(30);
		pause();
		_exit(0);
	}
	CHECK(!symbolizer__add_process(s, getpid()));
	symbolizer__stats(s, &a);
	CHECK(a.elf_files_parsed >= 1);
	CHECK(!symbolizer__add_process(s, child));
	symbolizer__stats(s, &b);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	CHECK_EQ_U64(b.elf_files_parsed, a.elf_files_parsed);
	CHECK(b.elf_cache_hits > a.elf_cache_hits);
	CHECK_EQ_U64(b.processes, 2);
	/* The child, now gone, still resolves from its snapshot. */
	symbolizer__resolve_user(s, child, (__u64)(unsigned long)&symbolizer_test_target, true,
				 &fr);
	CHECK_STR(fr.function, "symbolizer_test_target");
	/* A second add only refreshes the maps. */
	CHECK(!symbolizer__add_process(s, getpid()));
	symbolizer__stats(s, &b);
	CHECK_EQ_U64(b.maps_refreshes, 1);
	CHECK_EQ_U64(b.elf_files_parsed, a.elf_files_parsed);
	symbolizer__free(s);
}

/* Resolve every function @fx printed and compare names. */
static int check_fx(struct symbolizer *s, const struct fx_proc *fx, int *checked)
{
	struct profile_frame fr;
	size_t i;
	int bad = 0;

	for (i = 0; i < fx->n; i++) {
		symbolizer__resolve_user(s, fx->pid, fx->addrs[i], true, &fr);
		if (!fr.function || strcmp(fr.function, fx->names[i])) {
			printf("  pid %d: %s at %llx -> %s\n", (int)fx->pid, fx->names[i],
			       fx->addrs[i], fr.function ? fr.function : "(null)");
			bad = 1;
		}
		symbolizer__resolve_user(s, fx->pid, fx->addrs[i] + 1, false, &fr);
		if (!fr.function || strcmp(fr.function, fx->names[i]))
			bad = 1;
		(*checked)++;
	}
	return bad;
}

/* A process that exec()s another program is described again, as a new
 * generation (its own resource), and its new code resolves. */
TEST(exec_is_a_new_program)
{
	struct symbolizer *s = symbolizer__new("/proc");
	const struct profile_process_desc *pd;
	struct symbolizer_stats st;
	struct fx_proc fx = {0};
	int go[2], out[2], checked = 0;
	char path[4200], line[256];
	FILE *f = NULL;

	CHECK(s);
	CHECK(!pipe2(go, O_CLOEXEC) && !pipe2(out, O_CLOEXEC));
	snprintf(path, sizeof(path), "%s/fx_pie", fixture_dir);
	fx.pid = fork();
	CHECK(fx.pid >= 0);
	if (!fx.pid) {
		char c;

		alarm(30);
		dup2(go[0], 0); /* fx_pie serves until its stdin closes */
		dup2(out[1], 1);
		if (read(go[0], &c, 1) == 1)
			execl(path, path, "serve", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	close(out[1]);
	fx.in_fd = go[1];
	CHECK(!symbolizer__add_process(s, fx.pid));
	pd = symbolizer__process(s, fx.pid);
	CHECK(pd && pd->exe_name);
	CHECK_STR(pd->exe_name, "test_symbolizer");
	CHECK_EQ_U64(pd->generation, 0);
	CHECK(write(go[1], "x", 1) == 1);
	f = fdopen(out[0], "r");
	CHECK(f);
	while (fgets(line, sizeof(line), f) && strncmp(line, "ready", 5))
		if (fx.n < MAX_FX_SYMS &&
		    sscanf(line, "%31s %llx", fx.names[fx.n], &fx.addrs[fx.n]) == 2)
			fx.n++;
	fclose(f);
	CHECK(!symbolizer__add_process(s, fx.pid));
	pd = symbolizer__process(s, fx.pid);
	CHECK(pd && pd->exe_name);
	CHECK_STR(pd->exe_name, "fx_pie");
	CHECK_EQ_U64(pd->generation, 1);
	CHECK(ends_with(pd->cmdline, "/fx_pie serve"));
	CHECK(!check_fx(s, &fx, &checked));
	CHECK(checked >= 3);
	/* Nothing changed: no new generation. */
	CHECK(!symbolizer__add_process(s, fx.pid));
	CHECK_EQ_U64(symbolizer__process(s, fx.pid)->generation, 1);
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.execs, 1);
	fx_stop(&fx);
	symbolizer__free(s);
}

/* fx_pie started into @fx and its snapshot read into *@snap: 0, or -1. */
static int snapped_fixture(struct fx_proc *fx, struct procsnap **snap)
{
	char path[4200];

	*snap = NULL;
	snprintf(path, sizeof(path), "%s/fx_pie", fixture_dir);
	if (fx_start(path, fx))
		return -1;
	if (procsnap__read("/proc", fx->pid, snap)) {
		fx_stop(fx);
		return -1;
	}
	return 0;
}

/* fx_pie's process @fx as @s describes it: its executable, its command
 * line, its functions named (at least 3 checked). */
static void check_described(struct symbolizer *s, struct fx_proc *fx)
{
	const struct profile_process_desc *pd = symbolizer__process(s, fx->pid);
	int checked = 0;

	CHECK(pd && pd->exe_name && pd->exe_path);
	CHECK_STR(pd->exe_name, "fx_pie");
	CHECK(ends_with(pd->exe_path, "/fx_pie"));
	CHECK(ends_with(pd->cmdline, "/fx_pie serve"));
	CHECK(!check_fx(s, fx, &checked));
	CHECK(checked >= 3);
}

/* A process announced, snapshotted at once, and gone before the
 * symbolizer got to it: described and symbolized from its snapshot. */
TEST(gone_process_from_its_snapshot)
{
	struct symbolizer *s = symbolizer__new("/proc");
	struct symbolizer_stats st;
	struct procsnap *snap = NULL;
	struct fx_proc fx;
	pid_t pid;

	CHECK(s);
	CHECK(!snapped_fixture(&fx, &snap));
	CHECK_STR(snap->comm, "fx_pie");
	CHECK(ends_with(snap->exe, "/fx_pie"));
	pid = fx.pid;
	fx_stop(&fx); /* exits and is reaped: /proc/PID is gone */
	fx.pid = pid;
	CHECK_EQ_U64(procsnap__read("/proc", pid, &(struct procsnap *){NULL}), -ESRCH);
	CHECK_EQ_U64(symbolizer__add_process(s, pid), -ESRCH);
	snap->at_ns -= 2 * SYMBOLIZER_SNAP_FRESH_NS; /* not fresh: /proc is asked first */
	CHECK(!symbolizer__add_process_snap(s, pid, snap));
	check_described(s, &fx); /* its files reopened on the host */
	if (test__cur_failed)
		return;
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.snapshots_used, 1);
	CHECK_EQ_U64(st.snapshots_fresh, 0);
	procsnap__free(snap);
	procsnap__free(NULL);
	symbolizer__free(s);
}

/* A snapshot just read stands for /proc: the same description and names
 * as from /proc, without reading it again; an older one does not. */
TEST(fresh_snapshot_stands_for_proc)
{
	struct symbolizer *s = symbolizer__new("/proc");
	struct procsnap *snap = NULL;
	struct symbolizer_stats st;
	struct fx_proc fx;

	CHECK(s);
	CHECK(!snapped_fixture(&fx, &snap));
	snap->at_ns = clock__mono_ns(); /* as if read now, however slow this host */
	CHECK(!symbolizer__add_process_snap(s, fx.pid, snap));
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.snapshots_fresh, 1);
	check_described(s, &fx);
	if (test__cur_failed)
		return;
	CHECK_EQ_U64(st.snapshots_used, 0);
	/* aged: the maps come from /proc again */
	snap->at_ns -= 2 * SYMBOLIZER_SNAP_FRESH_NS;
	CHECK(!symbolizer__add_process_snap(s, fx.pid, snap));
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.snapshots_fresh, 1);
	procsnap__free(snap);
	fx_stop(&fx);
	symbolizer__free(s);
}

TEST(live_pie_nopie_and_library)
{
	struct symbolizer *s = symbolizer__new("/proc");
	struct fx_proc pie, nopie, pie2;
	const struct profile_process_desc *pd;
	struct symbolizer_stats a, b;
	struct profile_frame fr;
	char path[4200], want[128];
	int checked = 0, bad = 0;

	CHECK(s);
	snprintf(path, sizeof(path), "%s/fx_pie", fixture_dir);
	CHECK(!fx_start(path, &pie));
	snprintf(path, sizeof(path), "%s/fx_nopie", fixture_dir);
	CHECK(!fx_start(path, &nopie));
	CHECK(fx_addr(&pie, "fx_lib_func") && fx_addr(&pie, "fx_alpha"));
	CHECK(!symbolizer__add_process(s, pie.pid));
	CHECK(!symbolizer__add_process(s, nopie.pid));
	bad |= check_fx(s, &pie, &checked);
	bad |= check_fx(s, &nopie, &checked);
	CHECK(checked >= 10);
	symbolizer__resolve_user(s, pie.pid, fx_addr(&pie, "fx_lib_func"), true, &fr);
	CHECK(ends_with(fr.mapping ? fr.mapping->path : NULL, "/libfx.so"));
	CHECK(!fixtures__read_line("libfx.so", "buildid", want, sizeof(want)));
	CHECK_STR(fr.mapping->build_id, want);
	symbolizer__resolve_user(s, pie.pid, fx_addr(&pie, "fx_alpha"), true, &fr);
	CHECK(!fixtures__read_line("fx_pie", "buildid", want, sizeof(want)));
	CHECK_STR(fr.mapping->build_id, want);
	CHECK(ends_with(fr.mapping->path, "/fx_pie"));
	pd = symbolizer__process(s, pie.pid);
	CHECK(pd);
	CHECK_STR(pd->exe_name, "fx_pie");
	CHECK(ends_with(pd->cmdline, "/fx_pie serve"));
	/* Another process of the same binaries parses nothing new. */
	symbolizer__stats(s, &a);
	snprintf(path, sizeof(path), "%s/fx_pie", fixture_dir);
	CHECK(!fx_start(path, &pie2));
	CHECK(!symbolizer__add_process(s, pie2.pid));
	symbolizer__stats(s, &b);
	bad |= check_fx(s, &pie2, &checked);
	fx_stop(&pie);
	fx_stop(&nopie);
	fx_stop(&pie2);
	CHECK(!bad);
	CHECK_EQ_U64(b.elf_files_parsed, a.elf_files_parsed);
	CHECK(b.elf_cache_hits >= a.elf_cache_hits + 3); /* exe, libfx, libc, ld.so */
	symbolizer__free(s);
}

TEST(live_stripped_dynsym)
{
	struct symbolizer *s = symbolizer__new("/proc");
	struct profile_frame fr;
	struct fx_proc fx;
	char path[4200];

	CHECK(s);
	snprintf(path, sizeof(path), "%s/fx_stripped", fixture_dir);
	CHECK(!fx_start(path, &fx));
	CHECK(!symbolizer__add_process(s, fx.pid));
	symbolizer__resolve_user(s, fx.pid, fx_addr(&fx, "fx_alpha"), true, &fr);
	fx_stop(&fx);
	CHECK_STR(fr.function, "fx_alpha");
	symbolizer__free(s);
}

TEST(live_deleted_binary)
{
	struct symbolizer *s = symbolizer__new("/proc");
	char dir[] = "/tmp/profcap-sym-XXXXXX", src[4200], dst[256], lib[256], cmd[9000];
	struct profile_frame fr;
	struct fx_proc fx;

	CHECK(s);
	CHECK(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/fx_pie", fixture_dir);
	snprintf(dst, sizeof(dst), "%s/fx_copy", dir);
	snprintf(lib, sizeof(lib), "%s/libfx.so", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && cp '%s/libfx.so' '%s'", src, dst, fixture_dir,
		 lib);
	CHECK(!system(cmd));
	CHECK(!fx_start(dst, &fx));
	unlink(dst);
	unlink(lib);
	rmdir(dir);
	CHECK(!symbolizer__add_process(s, fx.pid));
	symbolizer__resolve_user(s, fx.pid, fx_addr(&fx, "fx_alpha"), true, &fr);
	fx_stop(&fx);
	CHECK(fr.mapping);
	CHECK_STR(fr.mapping->path, dst); /* " (deleted)" stripped */
	if (geteuid() == 0)		  /* map_files reaches the deleted file */
		CHECK_STR(fr.function, "fx_alpha");
	else
		CHECK(!fr.function);
	symbolizer__free(s);
}

/* ---- a clock stepped by hand --------------------------------------------------------- */

/* The symbolizer's rate limits read this instead of the system clock: tests
 * step it past a limit instead of sleeping, and can check both sides of it. */
static __u64 fake_now = 1000000000ull;

static __u64 fake_now_ns(void *ctx)
{
	return *(__u64 *)ctx;
}

static void fake_sleep_ns(void *ctx, __u64 ns)
{
	*(__u64 *)ctx += ns;
}

static const struct clock fake_clock = {fake_now_ns, fake_sleep_ns, &fake_now};

/* ---- a fake proc_root --------------------------------------------------------------- */

static int write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, data, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

static char fake_root[64];
static char fake_proc[128];

static int make_dir(const char *fmt, const char *arg)
{
	char path[4200];

	snprintf(path, sizeof(path), fmt, fake_root, arg);
	return mkdir(path, 0755) && errno != EEXIST ? -errno : 0;
}

static int fake_file(const char *rel, const void *data, size_t len)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", fake_root, rel);
	return write_file(path, data, len);
}

/* /tmp/X/proc/4242: maps of fx_pie at a chosen bias plus libfx.so copied to a
 * path with spaces; 4243: a kernel thread; sys/ notes for the kernel. */
static int build_fake_root(unsigned long long pie_bias, unsigned long long lib_bias)
{
	unsigned long long off = 0, vaddr = 0, loff = 0, lvaddr = 0;
	static const unsigned char knotes[] = {4, 0, 0,	  0,   4,   0, 0,    0,	   3,	 0,
					       0, 0, 'G', 'N', 'U', 0, 0xca, 0xfe, 0xba, 0xbe};
	static const unsigned char mnotes[] = {4, 0, 0,	  0,   2,   0, 0,    0,	   3, 0,
					       0, 0, 'G', 'N', 'U', 0, 0xe4, 0x04, 0, 0};
	char maps[16384], path[4200], line[4300], libpath[4200], cmd[9000];
	struct stat pst, lst;
	static const char kallsyms[] = "ffffffff81000000 T _stext\n"
				       "ffffffff81000100 T vfs_read\n"
				       "ffffffff81100000 T _etext\n"
				       "ffffffffc0200000 t ext4_file_read_iter\t[ext4]\n";
	FILE *f;
	int n;

	strcpy(fake_root, "/tmp/profcap-fake-XXXXXX");
	if (!mkdtemp(fake_root))
		return -errno;
	snprintf(fake_proc, sizeof(fake_proc), "%s/proc", fake_root);
	if (make_dir("%s/proc", "") || make_dir("%s/proc/4242", "") ||
	    make_dir("%s/proc/4243", "") || make_dir("%s/with space", "") ||
	    make_dir("%s/sys", "") || make_dir("%s/sys/kernel", "") ||
	    make_dir("%s/sys/module", "") || make_dir("%s/sys/module/ext4", "") ||
	    make_dir("%s/sys/module/ext4/notes", ""))
		return -EIO;
	/* Executable segments from readelf. */
	snprintf(path, sizeof(path), "%s/fx_pie.load", fixture_dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " E "))
			sscanf(line, " LOAD %llx %llx", &off, &vaddr);
	fclose(f);
	snprintf(path, sizeof(path), "%s/libfx.so.load", fixture_dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " E "))
			sscanf(line, " LOAD %llx %llx", &loff, &lvaddr);
	fclose(f);
	snprintf(libpath, sizeof(libpath), "%s/with space/lib fx.so", fake_root);
	snprintf(cmd, sizeof(cmd), "cp '%s/libfx.so' '%s'", fixture_dir, libpath);
	if (system(cmd))
		return -EIO;
	/* The files' real device and inode: profcap opens only the file mapped. */
	snprintf(path, sizeof(path), "%s/fx_pie", fixture_dir);
	if (stat(path, &pst) || stat(libpath, &lst))
		return -errno;
	n = snprintf(maps, sizeof(maps),
		     "%llx-%llx r-xp %08llx %02x:%02x %llu                     %s/fx_pie\n"
		     "%llx-%llx r-xp %08llx %02x:%02x %llu                     %s\n"
		     "7f0000100000-7f0000101000 r-xp 00001000 fd:01 777003     "
		     "/nonexistent/gone.so (deleted)\n"
		     "7f0000200000-7f0000201000 rwxp 00000000 00:00 0 \n"
		     "7f0000300000-7f0000301000 r--p 00000000 fd:01 777004     /etc/hostname\n",
		     pie_bias + (vaddr & ~0xfffull), pie_bias + (vaddr & ~0xfffull) + 0x1000,
		     off & ~0xfffull, major(pst.st_dev), minor(pst.st_dev),
		     (unsigned long long)pst.st_ino, fixture_dir, lib_bias + (lvaddr & ~0xfffull),
		     lib_bias + (lvaddr & ~0xfffull) + 0x1000, loff & ~0xfffull, major(lst.st_dev),
		     minor(lst.st_dev), (unsigned long long)lst.st_ino, libpath);
	if (fake_file("proc/4242/maps", maps, (size_t)n) ||
	    fake_file("proc/4242/comm", "fakecomm\n", 9) ||
	    fake_file("proc/4242/cmdline", "a\0b c\0d\0", 8) ||
	    fake_file("proc/4243/maps", "", 0) ||
	    fake_file("proc/4243/comm", "kworker/0:1\n", 12) ||
	    fake_file("proc/4243/cmdline", "", 0) ||
	    fake_file("proc/kallsyms", kallsyms, sizeof(kallsyms) - 1) ||
	    fake_file("sys/kernel/notes", knotes, sizeof(knotes)) ||
	    fake_file("sys/module/ext4/notes/.note.gnu.build-id", mnotes, sizeof(mnotes)))
		return -EIO;
	snprintf(path, sizeof(path), "%s/proc/4242/root", fake_root);
	if (symlink("/", path))
		return -errno;
	snprintf(path, sizeof(path), "%s/proc/4242/exe", fake_root);
	snprintf(line, sizeof(line), "%s/fx_pie (deleted)", fixture_dir);
	if (symlink(line, path))
		return -errno;
	return 0;
}

static void remove_fake_root(void)
{
	char cmd[256];

	if (!fake_root[0] || strncmp(fake_root, "/tmp/profcap-fake-", 18))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fake_root);
	if (system(cmd))
		printf("  (could not remove %s)\n", fake_root);
}

static void append_maps(const char *extra)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/4242/maps", fake_root);
	f = fopen(path, "a");
	if (!f)
		return;
	fputs(extra, f);
	fclose(f);
}

/* A process whose maps are gone when it is added (it exited after its
 * snapshot) is described from the snapshot alone, its container too:
 * nothing more is read from /proc for it, and it is remembered as tried,
 * so a drain that meets its records does not look for it again. */
TEST(gone_process_reads_nothing_more)
{
	static const char cg_snap[] = "0::/system.slice/docker-4f1a2b3c4d5e6f708192a3b4c5d6e7f8"
				      "091a2b3c4d5e6f708192a3b4c5d6e7f8.scope\n";
	static const char cg_proc[] = "0::/system.slice/docker-99999999999999999999999999999999"
				      "99999999999999999999999999999999.scope\n";
	const struct profile_process_desc *pd;
	struct symbolizer *s = NULL;
	struct procsnap *snap = NULL;

	CHECK(!build_fake_root(0x560000000000ull, 0x7f1000000000ull));
	CHECK(!fake_file("proc/4242/cgroup", cg_snap, strlen(cg_snap)));
	CHECK(!procsnap__read(fake_proc, 4242, &snap));
	CHECK_STR(snap->container_id, "4f1a2b3c4d5e6f708192a3b4c5d6e7f8"
				      "091a2b3c4d5e6f708192a3b4c5d6e7f8");
	/* 4244: only a command line and a cgroup left, not its maps */
	CHECK(!make_dir("%s/proc/4244", ""));
	CHECK(!fake_file("proc/4244/cmdline", "from\0proc\0", 10));
	CHECK(!fake_file("proc/4244/cgroup", cg_proc, strlen(cg_proc)));
	snap->pid = 4244;
	snap->at_ns -= 2 * SYMBOLIZER_SNAP_FRESH_NS; /* not fresh: /proc is asked first */
	s = symbolizer__new(fake_proc);
	CHECK(s);
	CHECK(!symbolizer__tried(s, 4244));
	CHECK(!symbolizer__add_process_snap(s, 4244, snap));
	pd = symbolizer__process(s, 4244);
	CHECK(pd);
	CHECK_STR(pd->cmdline, "a b c d"); /* the snapshot's, not "from proc" */
	CHECK_STR(pd->container_id, snap->container_id);
	/* never added; added and gone */
	CHECK(!symbolizer__tried(s, 4245));
	CHECK_EQ_U64(symbolizer__add_process(s, 4245), -ESRCH);
	CHECK(symbolizer__tried(s, 4245));
	CHECK(!symbolizer__process(s, 4245));
	symbolizer__free(s);
	procsnap__free(snap);
	remove_fake_root();
}

TEST(fake_proc_root)
{
	const unsigned long long pie_bias = 0x560000000000ull, lib_bias = 0x7f1000000000ull;
	const struct profile_mapping_desc *pie_map;
	const struct profile_process_desc *pd;
	struct symbolizer *s = NULL;
	struct symbolizer_stats st;
	struct profile_frame fr;
	char want[128];

	CHECK(!build_fake_root(pie_bias, lib_bias));
	s = symbolizer__new(fake_proc);
	CHECK(s);
	symbolizer__set_clock(s, &fake_clock);
	CHECK(!symbolizer__add_process(s, 4242));
	pd = symbolizer__process(s, 4242);
	CHECK(pd);
	CHECK_STR(pd->exe_name, "fx_pie");
	CHECK(ends_with(pd->exe_path, "/fixtures/fx_pie")); /* " (deleted)" stripped */
	CHECK_STR(pd->cmdline, "a b c d");
	/* PIE at a bias, opened through root/ (there is no map_files here). */
	symbolizer__resolve_user(s, 4242, pie_bias + nm_addr("fx_pie", "fx_beta"), true, &fr);
	CHECK_STR(fr.function, "fx_beta");
	CHECK(ends_with(fr.mapping->path, "/fixtures/fx_pie"));
	CHECK(!fixtures__read_line("fx_pie", "buildid", want, sizeof(want)));
	CHECK_STR(fr.mapping->build_id, want);
	pie_map = fr.mapping;
	/* A library at a path with spaces. */
	symbolizer__resolve_user(s, 4242, lib_bias + nm_addr("libfx.so", "fx_lib_other") + 2, true,
				 &fr);
	CHECK_STR(fr.function, "fx_lib_other");
	CHECK(ends_with(fr.mapping->path, "/with space/lib fx.so"));
	/* A deleted file without map_files: mapping known, no symbols. */
	symbolizer__resolve_user(s, 4242, 0x7f0000100010ull, true, &fr);
	CHECK(fr.mapping);
	CHECK_STR(fr.mapping->path, "/nonexistent/gone.so");
	CHECK(!fr.mapping->build_id && !fr.function);
	/* Anonymous executable memory (JIT). */
	symbolizer__resolve_user(s, 4242, 0x7f0000200010ull, true, &fr);
	CHECK_STR(fr.mapping->path, "[anon]");
	CHECK(!fr.function);
	/* Non-executable mappings are not frames' mappings. */
	symbolizer__resolve_user(s, 4242, 0x7f0000300010ull, true, &fr);
	CHECK(!fr.mapping);
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.elf_files_parsed, 2);
	CHECK_EQ_U64(st.elf_errors, 1);

	/* An explicit re-add refreshes: unchanged mappings keep their desc. */
	append_maps("7f0000400000-7f0000401000 r-xp 00000000 00:00 0 [anon:jit]\n");
	CHECK(!symbolizer__add_process(s, 4242));
	symbolizer__resolve_user(s, 4242, pie_bias + nm_addr("fx_pie", "fx_beta"), true, &fr);
	CHECK(fr.mapping == pie_map);
	symbolizer__resolve_user(s, 4242, 0x7f0000400000ull, true, &fr);
	CHECK_STR(fr.mapping->path, "[anon:jit]");
	/* A miss re-reads the maps, rate-limited. */
	append_maps("7f0000500000-7f0000501000 r-xp 00000000 00:00 0 [anon:late]\n");
	symbolizer__resolve_user(s, 4242, 0x7f0000500000ull, true, &fr);
	CHECK(!fr.mapping); /* refreshed less than a second ago */
	fake_sleep_ns(&fake_now, SYMBOLIZER_REFRESH_NS - 1);
	symbolizer__resolve_user(s, 4242, 0x7f0000500000ull, true, &fr);
	CHECK(!fr.mapping); /* one nanosecond short */
	fake_sleep_ns(&fake_now, 1);
	symbolizer__resolve_user(s, 4242, 0x7f0000500000ull, true, &fr);
	CHECK(fr.mapping);
	CHECK_STR(fr.mapping->path, "[anon:late]");
	CHECK(ends_with(pie_map->path, "/fixtures/fx_pie")); /* still valid */
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.maps_refreshes, 2);
	CHECK_EQ_U64(st.elf_files_parsed, 2);

	/* A kernel thread: no exe, so comm names it; no cmdline. */
	CHECK(!symbolizer__add_process(s, 4243));
	pd = symbolizer__process(s, 4243);
	CHECK(pd);
	CHECK_STR(pd->exe_name, "kworker/0:1");
	CHECK(!pd->exe_path);
	CHECK(!pd->cmdline);
	/* Gone: -ESRCH, remembered. */
	CHECK(symbolizer__add_process(s, 4244) == -ESRCH);
	CHECK(!symbolizer__process(s, 4244));
	symbolizer__resolve_user(s, 4244, pie_bias + 0x1000, true, &fr);
	CHECK(!fr.mapping && !fr.function);
	symbolizer__forget_process(s, 4243);
	CHECK(!symbolizer__process(s, 4243));
	symbolizer__forget_process(s, 9999);

	/* 4242 exits: forgetting the gone processes frees the files nobody maps. */
	{
		char live[512], dead[512];

		snprintf(live, sizeof(live), "%s/4242", fake_proc);
		snprintf(dead, sizeof(dead), "%s/4242.gone", fake_proc);
		CHECK(!rename(live, dead));
		symbolizer__set_file_grace(s, 0);
		CHECK_EQ_U64(symbolizer__forget_gone(s), 2); /* 4242, and 4244 found gone */
		CHECK(!symbolizer__process(s, 4242));
		symbolizer__stats(s, &st);
		CHECK_EQ_U64(st.elf_files_evicted, 2);
		/* Alive again (a new process with that PID): parsed afresh. */
		CHECK(!rename(dead, live));
		CHECK_EQ_U64(symbolizer__forget_gone(s), 0);
		CHECK(!symbolizer__add_process(s, 4242));
		symbolizer__resolve_user(s, 4242, pie_bias + nm_addr("fx_pie", "fx_beta"), true,
					 &fr);
		CHECK_STR(fr.function, "fx_beta");
		symbolizer__stats(s, &st);
		CHECK_EQ_U64(st.elf_files_parsed, 4);
		CHECK_EQ_U64(st.elf_files_evicted, 2);
	}
	/* Exiting (killed during a capture): its maps file reads empty, the
	 * address space gone. A re-add then keeps the mappings its samples
	 * were taken in (dropping them left all its frames unnamed). */
	CHECK(!fake_file("proc/4242/maps", "", 0));
	CHECK(!symbolizer__add_process(s, 4242));
	symbolizer__resolve_user(s, 4242, pie_bias + nm_addr("fx_pie", "fx_beta"), true, &fr);
	CHECK_STR(fr.function, "fx_beta");
	symbolizer__free(s);
	remove_fake_root();
}

/* A maps source as the kernel's records are: the executable mappings of
 * the fake process only (never the context's). */
static int exec_only_source(void *ctx, int pid, struct procmaps **out)
{
	char path[4200];
	struct procmaps *all = NULL;
	struct procmaps_entry e[64];
	size_t i, n = 0;
	int err;

	(void)ctx;
	snprintf(path, sizeof(path), "%s/%d/maps", fake_proc, pid);
	err = procmaps__read(path, &all);
	if (err)
		return -ENOENT;
	for (i = 0; i < procmaps__count(all) && n < 64; i++)
		if (procmaps__entry(all, i)->perms & PROCMAPS_EXEC)
			e[n++] = *procmaps__entry(all, i);
	err = procmaps__from_entries(e, n, out);
	procmaps__free(all);
	return err;
}

/* Described from executable mappings alone, a process has its maps file
 * read for a process context once, SYMBOLIZER_CTX_LOOK_NS later, while
 * alive; described from its maps file, never again. */
TEST(context_looked_for_later)
{
	const struct procmaps_source src = {.fn = exec_only_source};
	struct symbolizer *s = NULL;
	struct symbolizer_stats st;

	CHECK(!build_fake_root(0x560000000000ull, 0x7f1000000000ull));
	append_maps("7f0000500000-7f0000501000 rw-p 00000000 00:00 0 [anon:OTEL_CTX]\n");
	s = symbolizer__new(fake_proc);
	CHECK(s);
	symbolizer__set_clock(s, &fake_clock);
	symbolizer__set_maps_source(s, &src);
	CHECK(!symbolizer__add_process(s, 4242));
	symbolizer__check_contexts(s);
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.maps_from_source, 1);
	CHECK_EQ_U64(st.ctx_looks, 0); /* not yet */
	fake_now += SYMBOLIZER_CTX_LOOK_NS;
	symbolizer__check_contexts(s);
	symbolizer__check_contexts(s); /* once */
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.ctx_looks, 1);
	symbolizer__free(s);

	/* From the maps file: the context mapping is seen there, no look. */
	s = symbolizer__new(fake_proc);
	CHECK(s);
	symbolizer__set_clock(s, &fake_clock);
	CHECK(!symbolizer__add_process(s, 4242));
	fake_now += SYMBOLIZER_CTX_LOOK_NS;
	symbolizer__check_contexts(s);
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.ctx_looks, 0);
	symbolizer__free(s);
}

TEST(fake_kernel)
{
	const struct profile_mapping_desc *kd;
	struct symbolizer *s = NULL;
	struct symbolizer_stats st;
	struct profile_frame fr;
	char path[4200];

	CHECK(!build_fake_root(0x560000000000ull, 0x7f1000000000ull));
	s = symbolizer__new(fake_proc);
	CHECK(s);
	CHECK(symbolizer__resolve_kernel(s, 0xffffffff81000110ull, &fr));
	CHECK(!fr.function && !fr.mapping); /* not loaded: final, unnamed */
	CHECK(fr.type == PROFILE_FRAME_KERNEL);
	CHECK(!symbolizer__resolve_kernel_batch(s)); /* nothing queued */
	CHECK(!symbolizer__load_kernel(s));
	CHECK(!symbolizer__load_kernel(s));
	CHECK(!symbolizer__kernel_mapping(s)); /* its range comes with the first pass */
	CHECK_EQ_U64(symbolizer__kernel_queue_room(s), SYMBOLIZER_KERNEL_BATCH);
	/* Unknown addresses wait for a pass. */
	CHECK(!symbolizer__resolve_kernel(s, 0xffffffff81000110ull, &fr));
	CHECK(!fr.function && !fr.mapping);
	CHECK_EQ_U64(fr.address, 0xffffffff81000110ull);
	CHECK(!symbolizer__resolve_kernel(s, 0xffffffffc0200010ull, &fr));
	CHECK(!symbolizer__resolve_kernel(s, 0x1000, &fr));
	CHECK(!symbolizer__resolve_kernel(s, 0xffffffff81000110ull, &fr)); /* queued twice */
	CHECK_EQ_U64(symbolizer__kernel_queue_room(s), SYMBOLIZER_KERNEL_BATCH - 4);
	CHECK(!symbolizer__resolve_kernel_batch(s));
	CHECK_EQ_U64(symbolizer__kernel_queue_room(s), SYMBOLIZER_KERNEL_BATCH);
	kd = symbolizer__kernel_mapping(s);
	CHECK(kd);
	CHECK_STR(kd->path, "[kernel.kallsyms]");
	CHECK_EQ_U64(kd->start, 0xffffffff81000000ull);
	/* Past _etext: the last core symbol's span (init text) is covered. */
	CHECK_EQ_U64(kd->limit, 0xffffffff81140000ull);
	CHECK_STR(kd->build_id, "cafebabe");
	CHECK(symbolizer__resolve_kernel(s, 0xffffffff81000110ull, &fr));
	CHECK_STR(fr.function, "vfs_read");
	CHECK(fr.mapping == kd);
	CHECK(fr.type == PROFILE_FRAME_KERNEL);
	CHECK_EQ_U64(fr.address, 0xffffffff81000110ull);
	CHECK(symbolizer__resolve_kernel(s, 0xffffffffc0200010ull, &fr));
	CHECK_STR(fr.function, "ext4_file_read_iter");
	CHECK(fr.mapping);
	CHECK_STR(fr.mapping->path, "[ext4]");
	CHECK_STR(fr.mapping->build_id, "e404");
	CHECK(symbolizer__resolve_kernel(s, 0x1000, &fr));
	CHECK(!fr.function && !fr.mapping);
	/* Another address of a function already seen: named without a pass. */
	CHECK(symbolizer__resolve_kernel(s, 0xffffffff81000180ull, &fr));
	CHECK_STR(fr.function, "vfs_read");
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.kernel_passes, 1);
	CHECK(!symbolizer__resolve_kernel_batch(s)); /* nothing queued: no pass */
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.kernel_passes, 1);
	/* kallsyms changed (ext4 unloaded, xfs loaded just below where it
	 * was): a new address is named from the file as it is now, and the
	 * cached extents the new symbol overlaps go. */
	snprintf(path, sizeof(path), "%s/kallsyms", fake_proc);
	{
		static const char k2[] = "ffffffff81000000 T _stext\n"
					 "ffffffff81000100 T vfs_read\n"
					 "ffffffff81100000 T _etext\n"
					 "ffffffffc01f0000 t xfs_a\t[xfs]\n";

		CHECK(!write_file(path, k2, sizeof(k2) - 1));
	}
	CHECK(symbolizer__resolve_kernel(s, 0xffffffffc0200010ull, &fr)); /* cached */
	CHECK_STR(fr.function, "ext4_file_read_iter");
	CHECK(!symbolizer__resolve_kernel(s, 0xffffffffc01f0010ull, &fr));
	CHECK(!symbolizer__resolve_kernel_batch(s));
	CHECK(symbolizer__resolve_kernel(s, 0xffffffffc01f0010ull, &fr));
	CHECK_STR(fr.function, "xfs_a");
	CHECK_STR(fr.mapping->path, "[xfs]");
	CHECK(symbolizer__resolve_kernel(s, 0xffffffffc0200010ull, &fr));
	CHECK_STR(fr.function, "xfs_a");
	symbolizer__free(s);
	remove_fake_root();
}

/* The queue is bounded: past SYMBOLIZER_KERNEL_BATCH addresses a resolve
 * gives up (unnamed, final) instead of growing; a pass empties it. The
 * cache keeps at most SYMBOLIZER_KERNEL_CACHE entries: when a pass needs
 * room, what was neither found nor hit since the previous pass goes. */
#define KQ_FUNCS 18000u
#define KQ_PASS 6000u

static __u64 kq_addr(unsigned i)
{
	return 0xffffffff81000000ull + (__u64)i * 0x100 + 0x10;
}

TEST(kernel_queue_bounds)
{
	struct symbolizer *s = NULL;
	struct symbolizer_stats st;
	struct profile_frame fr;
	size_t cap = (size_t)KQ_FUNCS * 32, len = 0;
	char *text = malloc(cap), path[4200];
	unsigned i;

	CHECK(text);
	for (i = 0; i < KQ_FUNCS; i++)
		len += (size_t)snprintf(text + len, cap - len, "%llx t fn_%u\n",
					(unsigned long long)(kq_addr(i) - 0x10), i);
	CHECK(!build_fake_root(0x560000000000ull, 0x7f1000000000ull));
	snprintf(path, sizeof(path), "%s/kallsyms", fake_proc);
	CHECK(!write_file(path, text, len));
	free(text);
	s = symbolizer__new(fake_proc);
	CHECK(s);
	CHECK(!symbolizer__load_kernel(s));
	for (i = 0; i < SYMBOLIZER_KERNEL_BATCH; i++)
		CHECK(!symbolizer__resolve_kernel(s, kq_addr(i), &fr));
	CHECK_EQ_U64(symbolizer__kernel_queue_room(s), 0);
	CHECK(symbolizer__resolve_kernel(s, kq_addr(KQ_FUNCS - 1), &fr)); /* full: given up */
	CHECK(!fr.function);
	CHECK(!symbolizer__resolve_kernel_batch(s));
	CHECK(symbolizer__resolve_kernel(s, kq_addr(SYMBOLIZER_KERNEL_BATCH - 1), &fr));
	CHECK(fr.function);
	CHECK(!symbolizer__resolve_kernel(s, kq_addr(SYMBOLIZER_KERNEL_BATCH), &fr));
	CHECK(!symbolizer__resolve_kernel_batch(s));

	/* A fresh symbolizer: three passes of KQ_PASS functions each. */
	symbolizer__free(s);
	s = symbolizer__new(fake_proc);
	CHECK(s && !symbolizer__load_kernel(s));
	for (i = 0; i < 2 * KQ_PASS; i++) {
		if (i == KQ_PASS)
			CHECK(!symbolizer__resolve_kernel_batch(s));
		CHECK(!symbolizer__resolve_kernel(s, kq_addr(i), &fr));
	}
	CHECK(!symbolizer__resolve_kernel_batch(s));
	CHECK(symbolizer__resolve_kernel(s, kq_addr(7), &fr)); /* first pass, hit now */
	CHECK_STR(fr.function, "fn_7");
	for (i = 2 * KQ_PASS; i < 3 * KQ_PASS; i++)
		CHECK(!symbolizer__resolve_kernel(s, kq_addr(i), &fr));
	CHECK(!symbolizer__resolve_kernel_batch(s));
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.kernel_passes, 3);
	CHECK(symbolizer__resolve_kernel(s, kq_addr(7), &fr));
	CHECK_STR(fr.function, "fn_7");
	CHECK(symbolizer__resolve_kernel(s, kq_addr(KQ_PASS + 5), &fr)); /* second pass */
	CHECK_STR(fr.function, "fn_6005");
	CHECK(symbolizer__resolve_kernel(s, kq_addr(3 * KQ_PASS - 1), &fr));
	CHECK_STR(fr.function, "fn_17999");
	CHECK(!symbolizer__resolve_kernel(s, kq_addr(8), &fr)); /* first pass: evicted */
	symbolizer__free(s);
	remove_fake_root();
}

/* Batched user resolves: lines not cached are queued (no DWARF begun),
 * the batch looks them up file by file, keeping each file's DWARF begun
 * for the next batch (small files: within SYMBOLIZER_DWARF_KEEP); the
 * lines then come from the cache, equal to a direct lookup's. */
TEST(lines_batched)
{
	const unsigned long long pie_bias = 0x560000000000ull, lib_bias = 0x7f1000000000ull;
	struct symbolizer *s = NULL, *t = NULL;
	struct symbolizer_stats st;
	struct profile_frame fr, want;
	__u64 a1, a2;

	CHECK(!build_fake_root(pie_bias, lib_bias));
	a1 = pie_bias + nm_addr("fx_pie", "fx_beta");
	a2 = lib_bias + nm_addr("libfx.so", "fx_lib_other") + 2;
	s = symbolizer__new(fake_proc);
	t = symbolizer__new(fake_proc);
	CHECK(s && t);
	CHECK(!symbolizer__add_process(s, 4242) && !symbolizer__add_process(t, 4242));
	CHECK(!symbolizer__resolve_user_batched(s, 4242, a1, true, &fr));
	CHECK_STR(fr.function, "fx_beta"); /* all but the lines */
	CHECK(!fr.nlines);
	CHECK(!symbolizer__resolve_user_batched(s, 4242, a2, true, &fr));
	CHECK(!symbolizer__resolve_user_batched(s, 4242, a1, true, &fr)); /* queued again */
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.dwarf_releases, 0);
	symbolizer__resolve_lines_batch(s);
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.dwarf_releases, 0); /* each file begun once, and kept */
	CHECK_EQ_U64(st.dwarf_kept, 2);
	CHECK(symbolizer__resolve_user_batched(s, 4242, a1, true, &fr));
	symbolizer__resolve_user(t, 4242, a1, true, &want);
	CHECK(want.nlines > 0);
	CHECK_EQ_U64(fr.nlines, want.nlines);
	if (fr.nlines && want.nlines) {
		CHECK_STR(fr.lines[fr.nlines - 1].function, "fx_beta");
		CHECK_EQ_U64(fr.lines[0].line, want.lines[0].line);
		CHECK_STR(fr.lines[0].filename, want.lines[0].filename);
	}
	CHECK(symbolizer__resolve_user_batched(s, 4242, a2, true, &fr));
	CHECK(fr.nlines > 0);
	symbolizer__resolve_lines_batch(s); /* nothing queued */
	symbolizer__release_dwarf(s);	    /* both used by the last batch */
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.dwarf_releases, 0);
	symbolizer__release_all_dwarf(s);
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.dwarf_releases, 2);
	symbolizer__release_all_dwarf(s); /* nothing begun */
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.dwarf_releases, 2);
	symbolizer__free(s);
	symbolizer__free(t);
	remove_fake_root();
}

/* DWARF kept between batches goes when a batch does not need it (before
 * that batch begins anything) and when no batch has used it for
 * SYMBOLIZER_DWARF_KEEP_NS; a file kept is not begun again. */
TEST(lines_kept_between_batches)
{
	const unsigned long long pie_bias = 0x560000000000ull, lib_bias = 0x7f1000000000ull;
	struct symbolizer *s = NULL;
	struct symbolizer_stats st;
	struct profile_frame fr;
	__u64 a1, a2, b1;

	CHECK(!build_fake_root(pie_bias, lib_bias));
	a1 = pie_bias + nm_addr("fx_pie", "fx_beta");
	b1 = pie_bias + nm_addr("fx_pie", "fx_alpha");
	a2 = lib_bias + nm_addr("libfx.so", "fx_lib_other") + 2;
	s = symbolizer__new(fake_proc);
	CHECK(s);
	symbolizer__set_clock(s, &fake_clock);
	CHECK(!symbolizer__add_process(s, 4242));
	CHECK(!symbolizer__resolve_user_batched(s, 4242, a1, true, &fr));
	CHECK(!symbolizer__resolve_user_batched(s, 4242, a2, true, &fr));
	symbolizer__resolve_lines_batch(s);
	symbolizer__release_dwarf(s); /* a drain's end: both kept */
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.dwarf_kept, 2);
	CHECK_EQ_U64(st.dwarf_releases, 0);
	/* The next batch wants the executable only: the library's goes. */
	CHECK(!symbolizer__resolve_user_batched(s, 4242, b1, true, &fr));
	symbolizer__resolve_lines_batch(s);
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.dwarf_releases, 1);
	CHECK_EQ_U64(st.dwarf_kept, 3);
	CHECK(symbolizer__resolve_user_batched(s, 4242, b1, true, &fr));
	CHECK(fr.nlines > 0);
	if (fr.nlines)
		CHECK_STR(fr.lines[fr.nlines - 1].function, "fx_alpha");
	/* Within the keep time a drain's end keeps it; past it, it goes. */
	fake_now += SYMBOLIZER_DWARF_KEEP_NS - 1;
	symbolizer__release_dwarf(s);
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.dwarf_releases, 1);
	fake_now += 1;
	symbolizer__release_dwarf(s);
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.dwarf_releases, 2);
	symbolizer__free(s);
	remove_fake_root();
}

TEST(kptr_restricted_kernel)
{
	static const char zeroed[] = "0000000000000000 T _stext\n0000000000000000 t x\n";
	struct symbolizer *s = NULL;
	char path[256];

	strcpy(fake_root, "/tmp/profcap-fake-XXXXXX");
	CHECK(mkdtemp(fake_root));
	snprintf(path, sizeof(path), "%s/kallsyms", fake_root);
	CHECK(!write_file(path, zeroed, sizeof(zeroed) - 1));
	s = symbolizer__new(fake_root);
	CHECK(s);
	CHECK(symbolizer__load_kernel(s) == -EPERM);
	CHECK(!symbolizer__kernel_mapping(s));
	symbolizer__free(s);
	remove_fake_root();
}

/* A fake /proc/PID with a status, an exe link, anonymous executable memory
 * and root/tmp/perf-@nspid.map holding @perfmap (NULL: no map). */
static const char jit_maps[] =
	"7f0000200000-7f0000210000 rwxp 00000000 00:00 0 \n"
	"7f0000300000-7f0000301000 r-xp 00000000 00:00 0          [anon:jit]\n"
	"7f0000400000-7f0000401000 r-xp 00000000 00:01 1234       /memfd:v8 (deleted)\n";

static int fake_jit_proc(int pid, const char *exe, const char *nspid_line, const char *perfmap,
			 int nspid)
{
	char rel[256], path[4200], status[512];
	int n;

	snprintf(rel, sizeof(rel), "%d", pid);
	if (make_dir("%s/proc/%s", rel) || make_dir("%s/proc/%s/root", rel) ||
	    make_dir("%s/proc/%s/root/tmp", rel))
		return -EIO;
	n = snprintf(status, sizeof(status),
		     "Name:\tjit\nUmask:\t0022\nState:\tR (running)\nTgid:\t%d\n"
		     "Uid:\t%u\t%u\t%u\t%u\nGid:\t0\t0\t0\t0\n%s",
		     pid, 4321, getuid(), getuid(), getuid(), nspid_line);
	snprintf(rel, sizeof(rel), "proc/%d/status", pid);
	if (fake_file(rel, status, (size_t)n))
		return -EIO;
	snprintf(rel, sizeof(rel), "proc/%d/maps", pid);
	if (fake_file(rel, jit_maps, strlen(jit_maps)))
		return -EIO;
	snprintf(rel, sizeof(rel), "proc/%d/comm", pid);
	if (fake_file(rel, "jit\n", 4))
		return -EIO;
	snprintf(path, sizeof(path), "%s/proc/%d/exe", fake_root, pid);
	if (symlink(exe, path))
		return -errno;
	if (!perfmap)
		return 0;
	snprintf(rel, sizeof(rel), "proc/%d/root/tmp/perf-%d.map", pid, nspid);
	return fake_file(rel, perfmap, strlen(perfmap));
}

static int append_perfmap(int pid, int nspid, const char *text)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/%d/root/tmp/perf-%d.map", fake_root, pid, nspid);
	f = fopen(path, "a");
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -EIO : 0;
}

TEST(perf_maps)
{
	static const char node_map[] = "7f0000200100 80 LazyCompile:*hot /srv/app.js:3\n"
				       "7f0000300000 40 Builtin:ArrayMap\n"
				       "7f0000900000 40 JS:*gone /srv/app.js:9\n"
				       "7f0000400000 10 memfd_code\n";
	char path[4200], target[4200];
	struct symbolizer *s = NULL;
	struct symbolizer_stats st;
	struct profile_frame fr;

	strcpy(fake_root, "/tmp/profcap-fake-XXXXXX");
	CHECK(mkdtemp(fake_root));
	snprintf(fake_proc, sizeof(fake_proc), "%s/proc", fake_root);
	CHECK(!make_dir("%s/proc", ""));
	/* node in a container: NSpid ends with 7, the map is perf-7.map in its root. */
	CHECK(!fake_jit_proc(5000, "/usr/bin/node", "NSpid:\t5000\t7\n", node_map, 7));
	/* python -X perf, no NSpid line (old kernel): perf-<pid>.map. */
	CHECK(!fake_jit_proc(5001, "/usr/bin/python3.12", "",
			     "7f0000200000 100 py::compute:/srv/x.py\n", 5001));
	/* An unknown runtime. */
	CHECK(!fake_jit_proc(5002, "/opt/myjit", "NSpid:\t5002\n", "7f0000200000 100 blob\n",
			     5002));
	/* The map is a symlink to a file outside the process root. */
	CHECK(!fake_jit_proc(5003, "/usr/bin/node", "NSpid:\t5003\t1\n", NULL, 1));
	CHECK(!fake_file("secret.map", "7f0000200000 100 host-secret\n", 29));
	snprintf(path, sizeof(path), "%s/proc/5003/root/tmp/perf-1.map", fake_root);
	snprintf(target, sizeof(target), "%s/secret.map", fake_root);
	CHECK(!symlink(target, path));
	/* No map at all; java, named by its libjvm.so mapping. */
	CHECK(!fake_jit_proc(5004, "/usr/bin/java", "NSpid:\t5004\n", NULL, 5004));
	CHECK(!fake_jit_proc(5005, "/opt/jdk/bin/launcher", "NSpid:\t5005\n",
			     "7f0000300000 10 Interpreter\n", 5005));
	CHECK(!fake_file(
		"proc/5005/maps",
		"7f0000300000-7f0000301000 r-xp 00000000 00:00 0 \n"
		"7f1000000000-7f1000001000 r-xp 00000000 fd:01 99 /nonexistent/libjvm.so\n",
		strlen("7f0000300000-7f0000301000 r-xp 00000000 00:00 0 \n"
		       "7f1000000000-7f1000001000 r-xp 00000000 fd:01 99 "
		       "/nonexistent/libjvm.so\n")));

	s = symbolizer__new(fake_proc);
	CHECK(s);
	symbolizer__set_clock(s, &fake_clock);
	CHECK(!symbolizer__add_process(s, 5000));
	/* A leaf in an anonymous mapping, named by the map, typed by runtime. */
	symbolizer__resolve_user(s, 5000, 0x7f0000200110ull, true, &fr);
	CHECK_STR(fr.function, "LazyCompile:*hot /srv/app.js:3");
	CHECK_STR(fr.type_name, "v8js");
	CHECK_STR(fr.mapping->path, "[anon]");
	CHECK_EQ_U64(fr.mapping->start, 0x7f0000200000ull);
	/* A return address just past the end belongs to the entry. */
	symbolizer__resolve_user(s, 5000, 0x7f0000200180ull, false, &fr);
	CHECK_STR(fr.function, "LazyCompile:*hot /srv/app.js:3");
	CHECK_EQ_U64(fr.address, 0x7f0000200180ull);
	symbolizer__resolve_user(s, 5000, 0x7f0000200180ull, true, &fr);
	CHECK(!fr.function && !fr.type_name);
	CHECK(fr.type == PROFILE_FRAME_NATIVE);
	/* A named anonymous mapping ([anon:jit]). */
	symbolizer__resolve_user(s, 5000, 0x7f0000300010ull, true, &fr);
	CHECK_STR(fr.function, "Builtin:ArrayMap");
	CHECK_STR(fr.mapping->path, "[anon:jit]");
	/* Code in a memfd (a double-mapped JIT heap), no ELF behind it. */
	symbolizer__resolve_user(s, 5000, 0x7f0000400004ull, true, &fr);
	CHECK_STR(fr.function, "memfd_code");
	CHECK_STR(fr.mapping->path, "/memfd:v8");
	/* Code already unmapped: still named, with no mapping. */
	symbolizer__resolve_user(s, 5000, 0x7f0000900000ull, true, &fr);
	CHECK_STR(fr.function, "JS:*gone /srv/app.js:9");
	CHECK(!fr.mapping);
	/* Lines appended later are read on a miss, rate-limited. */
	CHECK(!append_perfmap(5000, 7, "7f0000201000 20 LazyCompile:*late /srv/app.js:20\n"));
	fake_sleep_ns(&fake_now, SYMBOLIZER_PERFMAP_REFRESH_NS);
	symbolizer__resolve_user(s, 5000, 0x7f0000201004ull, true, &fr);
	CHECK_STR(fr.function, "LazyCompile:*late /srv/app.js:20");
	CHECK(!append_perfmap(5000, 7, "7f0000202000 20 LazyCompile:*later /srv/app.js:30\n"));
	symbolizer__resolve_user(s, 5000, 0x7f0000202004ull, true, &fr);
	CHECK(!fr.function); /* read less than 250 ms ago */
	fake_sleep_ns(&fake_now, SYMBOLIZER_PERFMAP_REFRESH_NS - 1);
	symbolizer__resolve_user(s, 5000, 0x7f0000202004ull, true, &fr);
	CHECK(!fr.function); /* one nanosecond short */
	fake_sleep_ns(&fake_now, 1);
	symbolizer__resolve_user(s, 5000, 0x7f0000202004ull, true, &fr);
	CHECK_STR(fr.function, "LazyCompile:*later /srv/app.js:30");
	/* Rewritten code: the newer name wins. */
	CHECK(!append_perfmap(5000, 7, "7f0000200100 40 LazyCompile:*hot2 /srv/app.js:3\n"));
	CHECK(!symbolizer__add_process(s, 5000)); /* an explicit re-add reads it too */
	symbolizer__resolve_user(s, 5000, 0x7f0000200110ull, true, &fr);
	CHECK_STR(fr.function, "LazyCompile:*hot2 /srv/app.js:3");
	symbolizer__resolve_user(s, 5000, 0x7f0000200150ull, true, &fr);
	CHECK_STR(fr.function, "LazyCompile:*hot /srv/app.js:3");

	/* python -X perf entries are cpython frames. */
	symbolizer__resolve_user(s, 5001, 0x7f0000200010ull, true, &fr);
	CHECK_STR(fr.function, "py::compute:/srv/x.py");
	CHECK_STR(fr.type_name, "cpython");
	/* Unknown runtime: named, native. */
	symbolizer__resolve_user(s, 5002, 0x7f0000200010ull, true, &fr);
	CHECK_STR(fr.function, "blob");
	CHECK(!fr.type_name && fr.type == PROFILE_FRAME_NATIVE);
	/* A symlinked map is refused (warned once); nothing is read. */
	symbolizer__resolve_user(s, 5003, 0x7f0000200010ull, true, &fr);
	CHECK(!fr.function);
	CHECK_STR(fr.mapping->path, "[anon]");
	/* No map: anonymous frames stay unnamed native frames. */
	symbolizer__resolve_user(s, 5004, 0x7f0000200010ull, true, &fr);
	CHECK(!fr.function && !fr.type_name);
	/* Runtime from a mapped library. */
	symbolizer__resolve_user(s, 5005, 0x7f0000300004ull, true, &fr);
	CHECK_STR(fr.function, "Interpreter");
	CHECK_STR(fr.type_name, "jvm");
	symbolizer__stats(s, &st);
	CHECK_EQ_U64(st.perfmaps, 4);
	CHECK(st.perfmap_errors >= 1);
	symbolizer__free(s);
	remove_fake_root();
}

TEST(idle_and_bad_pids)
{
	struct symbolizer *s = symbolizer__new("/proc");
	struct profile_frame fr;

	CHECK(s);
	symbolizer__resolve_user(s, 0, 0x401000, true, &fr);
	CHECK(!fr.mapping && !fr.function);
	CHECK(!symbolizer__add_process(s, 0));
	CHECK_STR(symbolizer__process(s, 0)->exe_name, "swapper");
	CHECK(symbolizer__add_process(s, -5) == -EINVAL);
	CHECK(!symbolizer__process(s, 12345678));
	/* Without root, pid 1's maps are closed but its metadata is kept. */
	if (geteuid() != 0 && symbolizer__add_process(s, 1) == -EACCES) {
		CHECK(symbolizer__process(s, 1));
		CHECK(symbolizer__process(s, 1)->exe_name);
		symbolizer__resolve_user(s, 1, 0x401000, true, &fr);
		CHECK(!fr.mapping);
	}
	symbolizer__free(s);
	symbolizer__free(NULL);
}

/* Every process this user can see, timed: the capture's end-of-run cost. */
TEST(system_wide)
{
	struct symbolizer *s = symbolizer__new("/proc");
	struct symbolizer_stats st;
	struct timespec t0, t1;
	struct dirent *de;
	int nok = 0, n = 0;
	double ms;
	DIR *d;

	CHECK(s);
	d = opendir("/proc");
	CHECK(d);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((de = readdir(d))) {
		int pid = atoi(de->d_name);

		if (pid <= 0)
			continue;
		n++;
		nok += !symbolizer__add_process(s, pid);
	}
	closedir(d);
	symbolizer__load_kernel(s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	symbolizer__stats(s, &st);
	printf("  %d/%d processes in %.1f ms: %llu files parsed, %llu cache hits, %llu errors\n",
	       nok, n, ms, (unsigned long long)st.elf_files_parsed,
	       (unsigned long long)st.elf_cache_hits, (unsigned long long)st.elf_errors);
	CHECK(nok > 0);
	CHECK(ms < 10000);
	symbolizer__free(s);
}

int main(void)
{
	fixtures__init();
	RUN(self_process);
	RUN(self_vdso);
	RUN(same_binary_parsed_once);
	RUN(exec_is_a_new_program);
	RUN(gone_process_from_its_snapshot);
	RUN(fresh_snapshot_stands_for_proc);
	RUN(live_pie_nopie_and_library);
	RUN(live_stripped_dynsym);
	RUN(live_deleted_binary);
	RUN(gone_process_reads_nothing_more);
	RUN(fake_proc_root);
	RUN(context_looked_for_later);
	RUN(fake_kernel);
	RUN(kernel_queue_bounds);
	RUN(lines_batched);
	RUN(lines_kept_between_batches);
	RUN(kptr_restricted_kernel);
	RUN(perf_maps);
	RUN(idle_and_bad_pids);
	RUN(system_wide);
	return TEST_DONE();
}
