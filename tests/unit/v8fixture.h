/* v8fixture.h - Node.js as a test fixture: a child running a known
 * JavaScript workload (test_v8proc, test_v8frames), and a reference
 * walker that stops it (ptrace), walks its frame-pointer chain and records
 * each JavaScript frame as the BPF walker will (bpf/v8.h, docs/v8.md).
 * Header-only because each test is one binary; test code only.
 */
#ifndef PROFCAP_TEST_V8FIXTURE_H
#define PROFCAP_TEST_V8FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "proc/pyproc.h"
#include "proc/v8proc.h"
#include "symbolize/v8frames.h"

#define V8FX_NODE "/usr/bin/node"

/* The workload: an anonymous loop calls Worker.method (never optimized),
 * which calls hot (optimized by TurboFan at once) and interp (never
 * optimized; no baseline code either: interpreted), which calls step.
 * Lines as numbered; natives syntax and --no-sparkplug pin the tiers. */
#define V8FX_STEP_LINE 2
#define V8FX_INTERP_START 3
#define V8FX_INTERP_LINE 5
#define V8FX_HOT_START 8
#define V8FX_METHOD_LINE 14
#define V8FX_LOOP_LINE 20
static const char v8fx_script[] =
	"'use strict';\n"						 /* 1 */
	"function step(i) { return (i * 7) % 13; }\n"			 /* 2 */
	"function interp(n) {\n"					 /* 3 */
	"  let s = 0;\n"						 /* 4 */
	"  for (let i = 0; i < n; i++) s += step(i);\n"			 /* 5 */
	"  return s;\n"							 /* 6 */
	"}\n"								 /* 7 */
	"function hot(n) {\n"						 /* 8 */
	"  let s = 0;\n"						 /* 9 */
	"  for (let i = 0; i < n; i++) s += Math.sqrt(i) * 1.5;\n"	 /* 10 */
	"  return s;\n"							 /* 11 */
	"}\n"								 /* 12 */
	"class Worker {\n"						 /* 13 */
	"  method(n) { return hot(n) + interp(n >> 3); }\n"		 /* 14 */
	"}\n"								 /* 15 */
	"%NeverOptimizeFunction(interp); %NeverOptimizeFunction(step);\n" /* 16 */
	"%NeverOptimizeFunction(Worker.prototype.method);\n"		 /* 17 */
	"%PrepareFunctionForOptimization(hot); hot(9); hot(9);\n"	 /* 18 */
	"%OptimizeFunctionOnNextCall(hot); hot(9); const w = new Worker();\n" /* 19 */
	"(function () { process.stdout.write('ready\\n'); for (;;) w.method(200000); })();\n";

struct v8fx_child {
	int pid;
	char dir[64];
	char script[96];
	char hidden[96]; /* with @ns: where node runs from, seen only by the child */
};

/* In the child, with @ns: a mount namespace of its own where a tmpfs on
 * @c->hidden's directory holds node bound at @c->hidden, a path that
 * does not exist outside (the directory is empty there). */
static inline void v8fx__child(const struct v8fx_child *c, int fd, bool ns)
{
	const char *prog = V8FX_NODE;
	char dir[96];
	int f;

	dup2(fd, 1);
	if (ns) {
		snprintf(dir, sizeof(dir), "%s/ns", c->dir);
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("none", dir, "tmpfs", 0, NULL))
			_exit(126);
		f = open(c->hidden, O_CREAT | O_WRONLY, 0755);
		if (f < 0 || close(f) || mount(V8FX_NODE, c->hidden, NULL, MS_BIND, NULL))
			_exit(126);
		prog = c->hidden;
	}
	execl(prog, "node", "--allow-natives-syntax", "--no-sparkplug", c->script, (char *)NULL);
	_exit(127);
}

/* Start node on the workload (@ns: from a path only its own mount
 * namespace has); 0 once it said "ready", -ENOENT without node, -EPERM
 * when the namespace was refused, else -errno. */
static inline int v8fx__start_in(struct v8fx_child *c, bool ns)
{
	char line[32] = "", dir[96];
	int fds[2], status;
	FILE *f;

	memset(c, 0, sizeof(*c));
	if (access(V8FX_NODE, X_OK))
		return -ENOENT;
	snprintf(c->dir, sizeof(c->dir), "/tmp/v8fx.XXXXXX");
	if (!mkdtemp(c->dir))
		return -errno;
	snprintf(c->script, sizeof(c->script), "%s/work.js", c->dir);
	snprintf(c->hidden, sizeof(c->hidden), "%s/ns/node", c->dir);
	snprintf(dir, sizeof(dir), "%s/ns", c->dir);
	if (ns && mkdir(dir, 0755))
		return -errno;
	f = fopen(c->script, "w");
	if (!f || fputs(v8fx_script, f) < 0 || fclose(f))
		return -EIO;
	if (pipe(fds))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (!c->pid) {
		close(fds[0]);
		v8fx__child(c, fds[1], ns);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || strcmp(line, "ready\n")) {
		if (f)
			fclose(f);
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &status, 0);
		c->pid = 0;
		return WIFEXITED(status) && WEXITSTATUS(status) == 126 ? -EPERM : -EIO;
	}
	fclose(f); /* its later writes (none) would get EPIPE */
	return 0;
}

static inline int v8fx__start(struct v8fx_child *c)
{
	return v8fx__start_in(c, false);
}

static inline void v8fx__stop(struct v8fx_child *c)
{
	int status;

	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &status, 0);
	}
	if (c->script[0])
		unlink(c->script);
	if (c->hidden[0]) {
		char dir[96];

		snprintf(dir, sizeof(dir), "%s/ns", c->dir);
		rmdir(dir);
	}
	if (c->dir[0])
		rmdir(c->dir);
	c->pid = 0;
}

/* ---- the reference walker ---- */

struct v8fx_walk {
	__u64 pcs[64]; /* every frame of the fp chain, leaf first */
	size_t npcs;
	__u64 words[3 * 64]; /* JavaScript frames as bpf/v8.h stores them */
	size_t nwords;
	size_t ninterp, njit, nbuiltin;
};

static inline int v8fx__rd(int pid, __u64 addr, void *buf, size_t len)
{
	return pyproc__read_mem(NULL, pid, addr, buf, len);
}

/* The instance type of tagged object @v, as the walker reads it. */
static inline int v8fx__type(int pid, const struct v8proc_layout *l, __u64 v, __u16 *type)
{
	__u64 map;

	if ((v & l->heap_tag_mask) != l->heap_tag ||
	    v8fx__rd(pid, (v & ~(__u64)l->heap_tag_mask) + l->obj_map, &map, 8) ||
	    (map & l->heap_tag_mask) != l->heap_tag)
		return -EINVAL;
	return v8fx__rd(pid, (map & ~(__u64)l->heap_tag_mask) + l->map_instance_type, type, 2);
}

/* The bytecode offset of an interpreted frame whose array is @bc, from
 * the Smi @smi of its frame slot, relative to the first bytecode;
 * V8FRAMES_NO_OFFSET when out of range. */
static inline __u32 v8fx__bc_offset(int pid, const struct v8proc_layout *l, __u64 bc, __u64 smi)
{
	__u64 len;
	__s64 off;

	if (smi & 1 || v8fx__rd(pid, (bc & ~3ull) + l->fixed_length, &len, 8))
		return V8FRAMES_NO_OFFSET;
	off = (__s64)(__s32)(smi >> 32) - (l->bytecode_data - l->heap_tag);
	return off >= 0 && off < (__s64)(__s32)(len >> 32) ? (__u32)off : V8FRAMES_NO_OFFSET;
}

/* Record the JS frame at @fp running @pc, when it is one: what the BPF
 * walker reads (docs/v8.md "Per frame"). */
static inline void v8fx__frame(int pid, const struct v8proc *vp, __u64 pc, __u64 fp,
			       struct v8fx_walk *w)
{
	const struct v8proc_layout *l = &vp->layout;
	unsigned char sfi_head[64];
	__u64 slot_marker, func, shared, bc, bco, script;
	__u16 type, len, params, token;
	__u32 offset = V8FRAMES_NO_OFFSET, kind;
	bool has_bc;

	if (v8fx__rd(pid, fp + l->fp_marker, &slot_marker, 8) ||
	    v8fx__rd(pid, fp + l->fp_function, &func, 8))
		return;
	if (!(slot_marker & 1))
		return; /* a typed frame: its marker is a Smi-like type << 1 */
	if ((func & l->heap_tag_mask) != l->heap_tag ||
	    v8fx__rd(pid, (func & ~3ull) + l->jsfunc_shared, &shared, 8) ||
	    v8fx__type(pid, l, shared, &type) || type != l->type_sfi)
		return; /* a native frame */
	if (v8fx__rd(pid, shared & ~3ull, sfi_head, sizeof(sfi_head)))
		return;
	memcpy(&len, sfi_head + l->sfi_length, 2);
	memcpy(&params, sfi_head + l->sfi_param_count, 2);
	memcpy(&token, sfi_head + l->sfi_token_offset, 2);
	memcpy(&script, sfi_head + l->sfi_script, 8);
	has_bc = !v8fx__rd(pid, fp + l->fp_bytecode_array, &bc, 8) &&
		 !v8fx__rd(pid, fp + l->fp_bytecode_offset, &bco, 8) &&
		 !v8fx__type(pid, l, bc, &type) && type == l->type_bytecode;
	if (has_bc && !(bco & 1)) {
		kind = V8FRAMES_KIND_INTERPRETED;
		offset = v8fx__bc_offset(pid, l, bc, bco);
		w->ninterp++;
	} else if (v8proc__in_jit(vp, pc)) {
		kind = V8FRAMES_KIND_JIT; /* baseline: the slot holds the feedback vector */
		w->njit++;
	} else if (has_bc) {
		/* the interpreter writes the slot before a call: until the
		 * first one it holds the feedback vector */
		kind = V8FRAMES_KIND_INTERPRETED;
		w->ninterp++;
	} else {
		kind = V8FRAMES_KIND_BUILTIN;
		w->nbuiltin++;
	}
	if (w->nwords + 3 > sizeof(w->words) / sizeof(w->words[0]))
		return;
	w->words[w->nwords++] = ((shared & ~3ull) & ((1ull << 48) - 1)) |
				(__u64)v8frames__fingerprint(len, params, token, script) << 48;
	w->words[w->nwords++] = pc;
	w->words[w->nwords++] = offset | (__u64)kind << 32;
}

/* Stop @pid (its main thread), walk its frame pointers, let it go. */
static inline int v8fx__walk(int pid, const struct v8proc *vp, struct v8fx_walk *w)
{
	struct user_regs_struct regs;
	__u64 pc, fp, next[2];
	int status, err = 0;

	memset(w, 0, sizeof(*w));
	if (ptrace(PTRACE_SEIZE, pid, 0, 0))
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) || waitpid(pid, &status, __WALL) != pid) {
		err = -errno;
		goto out;
	}
	if (ptrace(PTRACE_GETREGS, pid, 0, &regs)) {
		err = -errno;
		goto out;
	}
	pc = regs.rip;
	fp = regs.rbp;
	while (w->npcs < 64 && pc) {
		w->pcs[w->npcs++] = pc;
		v8fx__frame(pid, vp, pc, fp, w);
		if (!fp || fp & 7 || v8fx__rd(pid, fp, next, sizeof(next)) || next[0] <= fp)
			break;
		fp = next[0];
		pc = next[1];
	}
out:
	ptrace(PTRACE_DETACH, pid, 0, 0);
	return err;
}

static inline void v8fx__sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

#endif
