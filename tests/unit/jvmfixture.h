/* jvmfixture.h - the installed JDKs as test fixtures (test_jvmproc,
 * test_jvmframes): a Java workload compiled at test time with javac (and
 * cached next to the test binary), a child JVM running it, and a walker in
 * user space that stops one Java thread (ptrace SEIZE + INTERRUPT),
 * reads its registers and walks its Java frames the way the BPF walker
 * will (docs/jvm.md), recording per frame what bpf/jvm.h records.
 * Header-only because each test is one binary.
 */
#ifndef PROFCAP_TEST_JVMFIXTURE_H
#define PROFCAP_TEST_JVMFIXTURE_H

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/types.h>

#include "proc/jvmproc.h"
#include "proc/pyproc.h"
#include "symbolize/jvmframes.h"

struct jvmfx_jdk {
	const char *name; /* test label */
	const char *java;
	unsigned major;
};

static const struct jvmfx_jdk jvmfx_jdks[] = {
	{"jdk17", "/usr/lib/jvm/java-17-openjdk-amd64/bin/java", 17},
	{"temurin25", "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java", 25},
};
#define JVMFX_N (sizeof(jvmfx_jdks) / sizeof(jvmfx_jdks[0]))
#define JVMFX_JAVAC "/usr/lib/jvm/java-17-openjdk-amd64/bin/javac"

/* The workload: a thread "jvmfx-worker" runs outer() -> middle() ->
 * step() (small: inlined once compiled) -> a bimorphic virtual
 * Shape.area() and work() (kept out of line by the test's CompileCommand,
 * so that step() is an inlined frame with a callee) -> leaf(). Lines of
 * each method's body, for the checks. */
#define JVMFX_AREA_SQ_LINE 4
#define JVMFX_AREA_CI_LINE 7
#define JVMFX_LEAF_LINE 10
#define JVMFX_MIDDLE_FIRST 13
#define JVMFX_MIDDLE_LAST 17
#define JVMFX_STEP_LINE 20
#define JVMFX_WORK_FIRST 23
#define JVMFX_WORK_LAST 25
#define JVMFX_OUTER_FIRST 29
#define JVMFX_OUTER_LAST 31
#define JVMFX_SLEEP_LINE 40
/* A thread whose name is longer than a kernel thread name and not Latin-1
 * (a UTF-16 String): as Java source, and as profcap reads it. */
#define JVMFX_LONG_NAME "\"jvmfx-\\u03a9-thread-with-a-long-name\""
#define JVMFX_LONG_NAME_UTF8 "jvmfx-\xce\xa9-thread-with-a-long-name"
static const char jvmfx_source[] =
	"public class JvmWork {\n"						/* 1 */
	"    interface Shape { long area(long x); }\n"				/* 2 */
	"    static final class Square implements Shape {\n"			/* 3 */
	"        public long area(long x) { return x * x + (x >>> 3); }\n"	/* 4 */
	"    }\n"								/* 5 */
	"    static final class Circle implements Shape {\n"			/* 6 */
	"        public long area(long x) { return 3 * x * x + 7; }\n"		/* 7 */
	"    }\n"								/* 8 */
	"    static long leaf(long x) {\n"					/* 9 */
	"        return (x ^ (x >>> 7)) * 31 + 1;\n"				/* 10 */
	"    }\n"								/* 11 */
	"    static long middle(Shape s, long n) {\n"				/* 12 */
	"        long acc = 0;\n"						/* 13 */
	"        for (long i = 0; i < n; i++) {\n"				/* 14 */
	"            acc += step(s, acc + i);\n"				/* 15 */
	"        }\n"								/* 16 */
	"        return acc;\n"							/* 17 */
	"    }\n"								/* 18 */
	"    static long step(Shape s, long x) {\n"				/* 19 */
	"        return s.area(x) + work(x);\n"					/* 20 */
	"    }\n"								/* 21 */
	"    static long work(long x) {\n"					/* 22 */
	"        long r = x;\n"							/* 23 */
	"        for (int j = 0; j < 50; j++) r = leaf(r + j);\n"		/* 24 */
	"        return r;\n"							/* 25 */
	"    }\n"								/* 26 */
	"    static volatile long sink;\n"					/* 27 */
	"    static void outer() {\n"						/* 28 */
	"        Shape[] shapes = { new Square(), new Circle() };\n"		/* 29 */
	"        for (long k = 0; ; k++) {\n"					/* 30 */
	"            sink += middle(shapes[(int) (k & 1)], 2000);\n"		/* 31 */
	"        }\n"								/* 32 */
	"    }\n"								/* 33 */
	"    public static void main(String[] a) throws Exception {\n"		/* 34 */
	"        Thread t = new Thread(JvmWork::outer, \"jvmfx-worker\");\n"	/* 35 */
	"        t.setDaemon(true);\n"						/* 36 */
	"        t.start();\n"							/* 37 */
	"        System.out.println(\"ready\");\n"				/* 38 */
	"        System.out.flush();\n"						/* 39 */
	"        Thread.sleep(600000);\n"					/* 40 */
	"    }\n"								/* 41 */
	"    static { Thread t = new Thread(() -> { try { Thread.sleep(600000); }\n" /* 42 */
	"        catch (Exception e) {} }, " JVMFX_LONG_NAME "); t.setDaemon(true); t.start(); }\n"
	"}\n";									/* 44 */

struct jvmfx_child {
	int pid;
	int worker; /* kernel tid of jvmfx-worker */
};

/* The class directory next to the test binary, with JvmWork.class
 * compiled once (javac is slow). 0, -ENOENT when no javac, -errno. */
static int jvmfx__classes(char *dir, size_t cap)
{
	char exe[PATH_MAX - 16], src[PATH_MAX + 32], cls[PATH_MAX + 32], cmd[3 * PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	FILE *f;

	if (access(JVMFX_JAVAC, X_OK))
		return -ENOENT;
	if (n <= 0)
		return -EIO;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -EIO;
	*slash = 0;
	snprintf(dir, cap, "%s/jvmfx", exe);
	snprintf(src, sizeof(src), "%s/JvmWork.java", dir);
	snprintf(cls, sizeof(cls), "%s/JvmWork.class", dir);
	mkdir(dir, 0755);
	f = fopen(src, "r");
	if (f) {
		/* the cached class is of this very source */
		char old[sizeof(jvmfx_source) + 1];
		size_t got = fread(old, 1, sizeof(old), f);

		fclose(f);
		if (got == sizeof(jvmfx_source) - 1 && !memcmp(old, jvmfx_source, got) &&
		    !access(cls, R_OK))
			return 0;
	}
	f = fopen(src, "w");
	if (!f)
		return -errno;
	fputs(jvmfx_source, f);
	fclose(f);
	/* -g: line numbers and source file; release 17 runs on both JDKs */
	snprintf(cmd, sizeof(cmd), "%s -g --release 17 -d '%s' '%s' >/dev/null 2>&1", JVMFX_JAVAC,
		 dir, src);
	return system(cmd) ? -EIO : 0;
}

/* The tid of the thread named @name in process @pid, 0 when none. */
static int jvmfx__tid(int pid, const char *name)
{
	char path[320], comm[64];
	struct dirent *d;
	int tid = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!tid && (d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", pid, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = 0;
			if (!strcmp(comm, name))
				tid = atoi(d->d_name);
		}
		fclose(f);
	}
	closedir(dir);
	return tid;
}

static void jvmfx__stop(struct jvmfx_child *c)
{
	int status;

	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &status, 0);
	}
	c->pid = 0;
}

/* Start @jdk on the workload with the extra options @opts (NULL-ended),
 * wait for "ready" and the worker thread. 0, -ENOENT when the JDK or
 * javac is missing, or -errno. */
static int jvmfx__start(const struct jvmfx_jdk *jdk, const char *const *opts,
			struct jvmfx_child *c)
{
	char dir[PATH_MAX], line[64] = "";
	const char *argv[24];
	int fds[2], k = 0, err, i;
	FILE *f;

	memset(c, 0, sizeof(*c));
	if (access(jdk->java, X_OK))
		return -ENOENT;
	err = jvmfx__classes(dir, sizeof(dir));
	if (err)
		return err;
	if (pipe(fds))
		return -errno;
	argv[k++] = jdk->java;
	argv[k++] = "-Xss1m";
	argv[k++] = "-Xmx64m";
	argv[k++] = "-XX:+UseSerialGC";
	while (opts && *opts && k < 18)
		argv[k++] = *opts++;
	argv[k++] = "-cp";
	argv[k++] = dir;
	argv[k++] = "JvmWork";
	argv[k] = NULL;
	c->pid = fork();
	if (!c->pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || strncmp(line, "ready", 5)) {
		if (f)
			fclose(f);
		jvmfx__stop(c); /* no child left behind */
		return -EIO;
	}
	fclose(f);
	for (i = 0; i < 200 && !(c->worker = jvmfx__tid(c->pid, "jvmfx-worker")); i++)
		usleep(10000);
	if (!c->worker)
		jvmfx__stop(c);
	return c->worker ? 0 : -ESRCH;
}

/* ---- the reference walker ---- */

static int jvmfx__u64(int pid, __u64 addr, __u64 *v)
{
	return pyproc__read_mem(NULL, pid, addr, v, sizeof(*v));
}

static int jvmfx__s32(int pid, __u64 addr, __s32 *v)
{
	return pyproc__read_mem(NULL, pid, addr, v, sizeof(*v));
}

/* One interpreted frame at @fp: Method*, bci, fingerprint; the caller's
 * pc, sp (the sender sp the interpreter saved) and fp. */
static inline int jvmfx__interp(int pid, const struct jvmproc *jp, __u64 *pc, __u64 *sp, __u64 *fp,
			 struct jvmframes_raw *r)
{
	const struct jvmproc_layout *l = &jp->layout;
	__u64 method, bcp, cm, ret, sender, link;
	int err;

	err = jvmfx__u64(pid, *fp + l->interp_method, &method);
	err = err ?: jvmfx__u64(pid, *fp + l->interp_bcp, &bcp);
	err = err ?: jvmfx__u64(pid, method + l->m_const_method, &cm);
	err = err ?: jvmfx__u64(pid, *fp + 8, &ret);
	err = err ?: jvmfx__u64(pid, *fp - 8, &sender);
	err = err ?: jvmfx__u64(pid, *fp, &link);
	if (err)
		return err;
	r->kind = JVMFRAMES_KIND_INTERP;
	r->addr = method;
	r->pos = (__u32)(bcp - cm - l->cm_size);
	r->fingerprint = (__u16)(cm >> 3);
	*pc = ret;
	*sp = sender;
	*fp = link;
	return 0;
}

/* One frame of the code blob holding @pc: the caller's pc, sp and fp from
 * the blob's frame size (no frame pointer needed). -EAGAIN for a leaf
 * not yet inside its frame (the caller retries). */
static inline int jvmfx__blob(int pid, const struct jvmproc *jp, bool leaf, __u64 *pc, __u64 *sp,
		       __u64 *fp, struct jvmframes_raw *r)
{
	const struct jvmproc_layout *l = &jp->layout;
	__s32 fsize, complete = 0, cid = 0;
	__u64 blob, code;
	int err;

	err = jvmproc__find_blob(NULL, pid, jp, *pc, &blob);
	if (err || !blob)
		return err ?: -ENOENT;
	err = jvmfx__s32(pid, blob + l->blob_frame_size, &fsize);
	err = err ?: jvmfx__s32(pid, blob + l->nm_compile_id, &cid);
	if (l->flags & JVMPROC_BLOB_OFFSETS) {
		__s32 off = 0;

		err = err ?: jvmfx__s32(pid, blob + l->blob_code_begin, &off);
		code = blob + (__u64)off;
	} else {
		err = err ?: jvmfx__u64(pid, blob + l->blob_code_begin, &code);
	}
	if (!err && (l->flags & JVMPROC_FCO_S16)) {
		__s16 c16 = 0;

		err = pyproc__read_mem(NULL, pid, blob + l->blob_frame_complete, &c16, 2);
		complete = c16;
	} else {
		err = err ?: jvmfx__s32(pid, blob + l->blob_frame_complete, &complete);
	}
	if (err)
		return err;
	r->kind = JVMFRAMES_KIND_BLOB;
	r->addr = blob;
	r->pos = (__u32)(*pc - blob);
	r->fingerprint = (__u16)cid;
	if (fsize <= 0 || fsize > 1 << 16 || (leaf && complete > 0 && *pc < code + complete))
		return leaf ? -EAGAIN : -EINVAL;
	*sp += (__u64)fsize * 8;
	err = jvmfx__u64(pid, *sp - 8, pc);
	err = err ?: jvmfx__u64(pid, *sp - 16, fp);
	return err;
}

/* Walk the Java frames from registers (@pc, @sp, @fp) into @out (at most
 * @cap), leaf first, ending with the call stub's frame. The count, or
 * -EAGAIN when @pc is not in Java code. */
static inline int jvmfx__walk_from(int pid, const struct jvmproc *jp, __u64 pc, __u64 sp,
				   __u64 fp, struct jvmframes_raw *out, int cap)
{
	int n = 0, err = 0;

	while (n < cap) {
		struct jvmframes_raw *r = &out[n];

		memset(r, 0, sizeof(*r));
		if (pc < jp->code_lo || pc >= jp->code_hi) {
			err = n ? 0 : -EAGAIN; /* native code: where Java ends */
			break;
		}
		if (!n)
			r->flags |= JVMFRAMES_FRAME_LEAF;
		if (pc >= jp->interp_lo && pc < jp->interp_hi) {
			err = jvmfx__interp(pid, jp, &pc, &sp, &fp, r);
		} else {
			bool stub_end = pc == jp->call_stub_ret;

			err = jvmfx__blob(pid, jp, !n, &pc, &sp, &fp, r);
			if (stub_end) {
				n++;
				err = 0;
				break;
			}
		}
		if (err)
			break;
		n++;
	}
	return err ? err : n;
}

/* Stop thread @tid of @pid (ptrace) and walk its Java frames from its
 * registers: as jvmfx__walk_from(). */
static inline int jvmfx__walk(int pid, int tid, const struct jvmproc *jp,
			      struct jvmframes_raw *out, int cap)
{
	struct user_regs_struct regs;
	int status, n;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0))
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) || waitpid(tid, &status, __WALL) != tid ||
	    ptrace(PTRACE_GETREGS, tid, 0, &regs)) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return -EIO;
	}
	n = jvmfx__walk_from(pid, jp, regs.rip, regs.rsp, regs.rbp, out, cap);
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return n;
}

/* The Java frames of JavaThread @thread while it is outside Java (in the
 * VM or a native method: blocked, sleeping), from its frame anchor: the
 * last Java frame's sp, pc (0: the word below sp) and fp. -EAGAIN when
 * the thread is in Java (no anchor). */
static inline int jvmfx__walk_anchor(int pid, const struct jvmproc *jp, __u64 thread,
				     struct jvmframes_raw *out, int cap)
{
	const struct jvmproc_layout *l = &jp->layout;
	__u64 a = thread + l->jt_anchor, sp, pc, fp;
	int err;

	if (l->jt_anchor == JVMPROC_NONE || l->anchor_sp == JVMPROC_NONE ||
	    l->anchor_pc == JVMPROC_NONE || l->anchor_fp == JVMPROC_NONE)
		return -ENOTSUP;
	err = jvmfx__u64(pid, a + l->anchor_sp, &sp);
	err = err ?: jvmfx__u64(pid, a + l->anchor_pc, &pc);
	err = err ?: jvmfx__u64(pid, a + l->anchor_fp, &fp);
	if (err)
		return err;
	if (!sp)
		return -EAGAIN;
	if (!pc && jvmfx__u64(pid, sp - 8, &pc))
		return -EFAULT;
	return jvmfx__walk_from(pid, jp, pc, sp, fp, out, cap);
}

#endif
