/* pyfixture.h - the installed CPython interpreters as test fixtures: a
 * child running a known script (test_pyproc, test_pyframes), and a walk of
 * its thread states from user space that reads the words the BPF walker
 * reads and records them as it does (bpf/python.h). Header-only because
 * each test is one binary.
 */
#ifndef PROFCAP_TEST_PYFIXTURE_H
#define PROFCAP_TEST_PYFIXTURE_H

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/types.h>

#include "proc/pyproc.h"

struct pyfx_interp {
	const char *name; /* test label */
	const char *path;
	unsigned major, minor;
};

static const struct pyfx_interp pyfx_interps[] = {
	{"2_7", "/root/.pyenv/versions/2.7.18/bin/python2.7", 2, 7},
	{"3_6", "/root/.pyenv/versions/3.6.15/bin/python3.6", 3, 6},
	{"3_7", "/root/.pyenv/versions/3.7.16/bin/python3.7", 3, 7},
	{"3_8", "/root/.pyenv/versions/3.8.18/bin/python3.8", 3, 8},
	{"3_9", "/root/.pyenv/versions/3.9.18/bin/python3.9", 3, 9},
	{"3_10", "/root/.pyenv/versions/3.10.13/bin/python3.10", 3, 10},
	{"3_11", "/root/.pyenv/versions/3.11.7/bin/python3.11", 3, 11},
	{"3_12", "/root/.pyenv/versions/3.12.1/bin/python3.12", 3, 12},
	{"3_13", "/root/.pyenv/versions/3.13.0/bin/python3.13", 3, 13},
	{"debian_3_11", "/usr/bin/python3.11", 3, 11},
};
#define PYFX_N (sizeof(pyfx_interps) / sizeof(pyfx_interps[0]))

/* The script: <module> -> Outer.middle -> leaf, which sleeps on line
 * PYFX_LEAF_LINE, and a thread in worker() on PYFX_WORKER_LINE. It says
 * "ready MAIN WORKER" with both threads' idents (pthread_self()). */
#define PYFX_LEAF_LINE 9
#define PYFX_WORKER_LINE 12
#define PYFX_MODULE_LINE 16
static const char pyfx_script[] =
	"import sys, time, threading\n"					  /* 1 */
	"class Outer(object):\n"						  /* 2 */
	"    def middle(self):\n"						  /* 3 */
	"        return leaf()\n"						  /* 4 */
	"def leaf():\n"							  /* 5 */
	"    sys.stdout.write('ready %d %d\\n' % (threading.current_thread().ident, t.ident))\n"
	"    sys.stdout.flush()\n"						  /* 7 */
	"    while True:\n"							  /* 8 */
	"        time.sleep(0.05)\n"						  /* 9 */
	"def worker():\n"							  /* 10 */
	"    while True:\n"							  /* 11 */
	"        time.sleep(0.05)\n"						  /* 12 */
	"t = threading.Thread(target=worker)\n"				  /* 13 */
	"t.daemon = True\n"							  /* 14 */
	"t.start()\n"								  /* 15 */
	"Outer().middle()\n";							  /* 16 */

/* A file name outside Latin-1: a compact str of 2-byte characters. */
#define PYFX_FILE "fxmod_\xce\xa9.py"

struct pyfx_child {
	int pid;
	unsigned long long ident[2]; /* threading idents: main, worker */
	char dir[64];
	char script[96];
};

static bool pyfx__sleeping(int pid)
{
	char path[64], buf[512] = "";
	const char *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

/* Start @in on @script, run by the command @wrap (NULL-terminated, NULL:
 * none) when given, and wait until it said "ready MAIN WORKER" and
 * sleeps. 0, -ENOENT when the interpreter is not installed, or another
 * -errno. */
static int pyfx__start_wrapped(const struct pyfx_interp *in, const char *script,
			       const char *const *wrap, struct pyfx_child *c)
{
	const char *argv[24];
	size_t k = 0;
	char line[96] = "";
	int fds[2], n = 0;
	FILE *f;

	memset(c, 0, sizeof(*c));
	if (access(in->path, X_OK))
		return -ENOENT;
	strcpy(c->dir, "/tmp/profcap_pyfx_XXXXXX");
	if (!mkdtemp(c->dir))
		return -errno;
	snprintf(c->script, sizeof(c->script), "%s/" PYFX_FILE, c->dir);
	f = fopen(c->script, "w");
	if (!f)
		return -errno;
	fputs(script, f);
	fclose(f);
	if (pipe(fds))
		return -errno;
	c->pid = fork();
	if (!c->pid) {
		dup2(fds[1], 1);
		setenv("LC_ALL", "C.UTF-8", 1);
		close(fds[0]);
		while (wrap && *wrap && k < 16)
			argv[k++] = *wrap++;
		argv[k++] = in->path;
		argv[k++] = "-S";
		argv[k++] = "-s";
		argv[k++] = c->script;
		argv[k] = NULL;
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (f && fgets(line, sizeof(line), f))
		n = 1;
	if (f)
		fclose(f);
	if (!n || sscanf(line, "ready %llu %llu", &c->ident[0], &c->ident[1]) != 2)
		return -EIO;
	/* until it sleeps on the leaf's line (state S), not still writing */
	for (n = 0; n < 400 && !pyfx__sleeping(c->pid); n++)
		usleep(5000);
	return 0;
}

/* Start @in on @script, wait until it said "ready MAIN WORKER" and
 * sleeps. 0, -ENOENT when the interpreter is not installed, or another
 * -errno. */
static int pyfx__start_script(const struct pyfx_interp *in, const char *script,
			      struct pyfx_child *c)
{
	return pyfx__start_wrapped(in, script, NULL, c);
}

/* pyfx__start_script() of the standard script: in leaf(). */
static int pyfx__start(const struct pyfx_interp *in, struct pyfx_child *c)
{
	return pyfx__start_script(in, pyfx_script, c);
}

static void pyfx__stop(struct pyfx_child *c)
{
	int status;

	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &status, 0);
	}
	if (c->script[0])
		unlink(c->script);
	if (c->dir[0])
		rmdir(c->dir);
	c->pid = 0;
}

static int pyfx__rd(int pid, __u64 addr, void *buf, size_t len)
{
	return pyproc__read_mem(NULL, pid, addr, buf, len);
}

static __u64 pyfx__ptr(int pid, __u64 addr, int *err)
{
	__u64 v = 0;

	if (!*err)
		*err = pyfx__rd(pid, addr, &v, sizeof(v));
	return *err ? 0 : v;
}

/* The thread states of the first interpreter, newest first (the last is
 * the main thread's): their addresses into @ts. Count or -errno. */
static int pyfx__tstates(int pid, const struct pyproc *pp, __u64 *ts, int cap)
{
	__u64 interp, t;
	int err = 0, n = 0;

	interp = pyfx__ptr(pid, pp->interp_head, &err);
	t = pyfx__ptr(pid, interp + pp->layout.interp_tstate_head, &err);
	for (; !err && t && n < cap; n++) {
		ts[n] = t;
		t = pyfx__ptr(pid, t + pp->layout.tstate_next, &err);
	}
	return err ? err : n;
}

/* The frames of thread state @ts as the BPF walker records them: 2 words
 * per frame, leaf first. Returns the number of words, or -errno. */
static int pyfx__walk_ts(int pid, const struct pyproc *pp, __u64 ts, __u64 *words, int cap)
{
	const struct pyproc_layout *l = &pp->layout;
	__u64 frame, code, instr = 0;
	int err = 0, n = 0, guard;
	__u32 first = 0;
	__u8 owner = 0, entry = 0;

	frame = pyfx__ptr(pid, ts + l->tstate_frame, &err);
	if (l->flags & PYPROC_CFRAME)
		frame = pyfx__ptr(pid, frame + l->cframe_current_frame, &err);
	for (guard = 0; !err && frame && n + 2 <= cap && guard < 256; guard++) {
		__u16 flags = 0;

		code = pyfx__ptr(pid, frame + l->frame_code, &err);
		if (l->flags & PYPROC_CODE_TAGGED)
			code &= ~3ull;
		if (l->flags & PYPROC_OWNER)
			err = err ?: pyfx__rd(pid, frame + l->frame_owner, &owner, 1);
		if (!err && (l->flags & PYPROC_OWNER) && owner >= l->owner_cstack) {
			/* a shim: the frame before it was the first of its call */
			if (n)
				words[n - 1] |= 1ull << 32;
			frame = pyfx__ptr(pid, frame + l->frame_back, &err);
			continue;
		}
		if (l->flags & PYPROC_INSTR_PTR) {
			instr = pyfx__ptr(pid, frame + l->frame_instr, &err) - code;
		} else {
			int lasti = 0;

			err = err ?: pyfx__rd(pid, frame + l->frame_instr, &lasti, 4);
			instr = (__u32)lasti;
		}
		if (l->flags & PYPROC_IS_ENTRY) {
			err = err ?: pyfx__rd(pid, frame + l->frame_entry, &entry, 1);
			flags |= entry ? 1 : 0;
		}
		if (l->flags & PYPROC_ONE_PER_CALL)
			flags |= 1;
		err = err ?: pyfx__rd(pid, code + l->code_firstlineno, &first, 4);
		if (err)
			break;
		words[n++] = (code & ((1ull << 48) - 1)) | ((__u64)(first & 0xffff) << 48);
		words[n++] = (instr & 0xffffffffull) | ((__u64)flags << 32);
		frame = pyfx__ptr(pid, frame + l->frame_back, &err);
	}
	return err ? err : n;
}

/* The main thread's frames (pyfx__walk_ts()). */
static int pyfx__walk(int pid, const struct pyproc *pp, __u64 *words, int cap)
{
	__u64 ts[16];
	int n = pyfx__tstates(pid, pp, ts, 16);

	if (n <= 0)
		return n ? n : -ENOENT;
	return pyfx__walk_ts(pid, pp, ts[n - 1], words, cap);
}

#endif
