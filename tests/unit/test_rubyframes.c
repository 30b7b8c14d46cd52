/* test_rubyframes.c - CRuby frames: the BPF words and their constants
 * against bpf/ruby.h, CRuby's succinct line index (ranks against a table
 * built as iseq.c builds it), the merge with native stacks, the walker's
 * map entry and the layouts refused; and a live ruby (when installed)
 * located, its layout checked, its control frames walked from user space as
 * the BPF walker does and named: method, file, lines. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/types.h>

#include "test.h"
#include "ruby.h"
#include "collect/sampler_ruby.h"
#include "proc/pyproc.h"
#include "proc/rubyproc.h"
#include "symbolize/rubyframes.h"

#define RUBY_BIN "/usr/bin/ruby"
#define LIBRUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1"

TEST(words_and_abi)
{
	__u64 w[6];
	struct rubyframes_raw raw[4];
	__u16 fp = profcap_ruby_fingerprint(0x7f0012345678ull, 2 * 41 + 1);

	CHECK_EQ_U64(RUBYFRAMES_KIND_ISEQ, PROFCAP_RUBY_KIND_ISEQ);
	CHECK_EQ_U64(RUBYFRAMES_KIND_CFUNC, PROFCAP_RUBY_KIND_CFUNC);
	CHECK_EQ_U64(RUBYFRAMES_FRAME_FINISH, PROFCAP_RUBY_FRAME_FINISH);
	CHECK_EQ_U64(RUBYFRAMES_FRAME_NOBODY, PROFCAP_RUBY_FRAME_NOBODY);
	CHECK_EQ_U64(RUBYFRAMES_NO_PC, PROFCAP_RUBY_NO_PC);
	CHECK_EQ_U64(RUBYFRAMES_WORDS, PROFCAP_RUBY_WORDS);
	CHECK_EQ_U64(rubyframes__fingerprint(0x7f0012345678ull, 83), fp);
	CHECK(rubyframes__fingerprint(0x7f0012345678ull, 85) != fp);
	w[0] = 0x55501234abcdull | (__u64)fp << PROFCAP_RUBY_FP_SHIFT;
	w[1] = 17 | (__u64)PROFCAP_RUBY_KIND_ISEQ << 32 | (__u64)PROFCAP_RUBY_FRAME_FINISH << 40;
	w[2] = 0x7f0012345678ull;
	w[3] = 0x555000000010ull;
	w[4] = PROFCAP_RUBY_NO_PC | (__u64)PROFCAP_RUBY_KIND_CFUNC << 32;
	w[5] = 0;
	CHECK_EQ_U64(rubyframes__decode(w, 6, raw, 4), 2);
	CHECK_EQ_U64(raw[0].addr, 0x55501234abcdull);
	CHECK_EQ_U64(raw[0].fingerprint, fp);
	CHECK_EQ_U64(raw[0].pc, 17);
	CHECK_EQ_U64(raw[0].kind, RUBYFRAMES_KIND_ISEQ);
	CHECK_EQ_U64(raw[0].flags, RUBYFRAMES_FRAME_FINISH);
	CHECK_EQ_U64(raw[0].body, 0x7f0012345678ull);
	CHECK_EQ_U64(raw[1].kind, RUBYFRAMES_KIND_CFUNC);
	CHECK_EQ_U64(raw[1].pc, RUBYFRAMES_NO_PC);
	/* a partial frame's words and a full output are not decoded */
	CHECK_EQ_U64(rubyframes__decode(w, 5, raw, 4), 1);
	CHECK_EQ_U64(rubyframes__decode(w, 6, raw, 1), 1);
}

/* The succinct table as CRuby builds it (iseq.c succ_index_table_create)
 * for the @n ascending @pos of an iseq of @max_pos words, in @t. */
static size_t build_succ(const int *pos, int n, int max_pos, __u64 *t, size_t cap)
{
	size_t nwords = rubyframes__succ_bytes((__u32)max_pos) / 8, imm;
	int r = 0, i, j, k, blocks, small;

	memset(t, 0, cap * 8);
	if (nwords > cap)
		return 0;
	imm = max_pos < 54 ? (size_t)(max_pos + 8) / 9 : 6;
	for (j = 0; j < (int)imm; j++)
		for (i = 0; i < 9; i++) {
			if (r < n && pos[r] == j * 9 + i)
				r++;
			t[j] |= (__u64)r << (7 * i);
		}
	blocks = max_pos < 54 ? 0 : (max_pos - 54 + 511) / 512;
	for (k = 0; k < blocks; k++) {
		__u64 *b = t + 6 + 10 * k;

		b[0] = (__u64)r;
		small = 0;
		for (j = 0; j < 8; j++) {
			if (j)
				b[1] |= (__u64)small << (9 * (j - 1));
			for (i = 0; i < 64; i++)
				if (r < n && pos[r] == k * 512 + j * 64 + i + 54) {
					b[2 + j] |= 1ull << i;
					r++;
				}
			small += __builtin_popcountll(b[2 + j]);
		}
	}
	return nwords;
}

/* How many of @pos are at or before @x: the rank CRuby's lookup gives. */
static int count_le(const int *pos, int n, int x)
{
	int c = 0, i;

	for (i = 0; i < n && pos[i] <= x; i++)
		c++;
	return c;
}

TEST(succ_rank)
{
	static __u64 t[6 + 10 * 8];
	static int pos[1200];
	int sizes[] = {1, 9, 30, 53, 54, 55, 200, 566, 1500, 3000}, s, n, x, max_pos;
	unsigned seed = 7;
	size_t nw;

	for (s = 0; s < (int)(sizeof(sizes) / sizeof(sizes[0])); s++) {
		max_pos = sizes[s];
		n = 0;
		for (x = 0; x < max_pos && n < 1200; x++) {
			seed = seed * 1103515245 + 12345;
			if (!x || (seed >> 16) % 3 == 0)
				pos[n++] = x;
		}
		nw = build_succ(pos, n, max_pos, t, sizeof(t) / 8);
		CHECK(nw > 0);
		for (x = 0; x < max_pos; x++)
			if (rubyframes__succ_rank(t, nw, (__u32)x) != count_le(pos, n, x)) {
				printf("  size %d, pos %d: rank %d, want %d\n", max_pos, x,
				       rubyframes__succ_rank(t, nw, (__u32)x), count_le(pos, n, x));
				CHECK(0);
				break;
			}
		/* past the table: refused, never read out of bounds */
		CHECK_EQ_U64(rubyframes__succ_rank(t, nw, (__u32)(54 + 512 * 9)), (__u64)-1);
	}
	CHECK_EQ_U64(rubyframes__succ_bytes(10), 16);
	CHECK_EQ_U64(rubyframes__succ_bytes(54), 48);
	CHECK_EQ_U64(rubyframes__succ_bytes(55), 48 + 80);
	CHECK_EQ_U64(rubyframes__succ_bytes(566), 48 + 80);
	CHECK_EQ_U64(rubyframes__succ_bytes(567), 48 + 160);
}

static struct profile_frame nat(const char *name)
{
	return (struct profile_frame){.function = name};
}

static struct profile_frame rbf(const char *name)
{
	return (struct profile_frame){.function = name, .type_name = RUBYFRAMES_TYPE};
}

TEST(merge)
{
	struct rubyproc rp = {.exec_lo = 0x1000, .exec_hi = 0x2000};
	/* leaf first: a block run by rb_yield from Integer#times (C), called
	 * by a method run by the main loop call */
	__u64 pcs[] = {0x9000, 0x1100, 0x7000, 0x7100, 0x9500, 0x1200, 0x3000};
	struct profile_frame native[] = {nat("loop2"),	     nat("rb_vm_exec"), nat("rb_yield"),
					 nat("int_dotimes"), nat("loop1"),	nat("rb_vm_exec"),
					 nat("main")};
	struct profile_frame rb[] = {rbf("block in m"), (struct profile_frame){0}, rbf("m"),
				     rbf("<main>")};
	struct rubyframes_raw raw[] = {
		{.kind = RUBYFRAMES_KIND_ISEQ, .flags = RUBYFRAMES_FRAME_FINISH},
		{.kind = RUBYFRAMES_KIND_CFUNC},
		{.kind = RUBYFRAMES_KIND_ISEQ},
		{.kind = RUBYFRAMES_KIND_ISEQ, .flags = RUBYFRAMES_FRAME_FINISH},
	};
	const char *want[] = {"block in m", "rb_vm_exec", "rb_yield",	"int_dotimes",
			      "m",	    "<main>",	  "rb_vm_exec", "main"};
	struct profile_frame out[16];
	size_t n, i;

	n = rubyframes__merge(&rp, pcs, native, 7, rb, raw, 4, out, 16);
	CHECK_EQ_U64(n, 8);
	for (i = 0; i < n && i < 8; i++)
		CHECK_STR(out[i].function, want[i]);
	/* a native walk cut above the first loop frame: the Ruby frames left
	 * go at the root end, none lost */
	n = rubyframes__merge(&rp, pcs, native, 3, rb, raw, 4, out, 16);
	CHECK_EQ_U64(n, 5);
	CHECK_STR(out[0].function, "block in m");
	CHECK_STR(out[3].function, "m");
	CHECK_STR(out[4].function, "<main>");
	/* no loop frame reached (a sample in rb_vm_exec's own code): native
	 * frames kept, the Ruby ones at the root end */
	n = rubyframes__merge(&rp, pcs + 1, native + 1, 1, rb, raw, 4, out, 16);
	CHECK_EQ_U64(n, 4);
	CHECK_STR(out[0].function, "rb_vm_exec");
	/* the output's room is a hard bound */
	CHECK_EQ_U64(rubyframes__merge(&rp, pcs, native, 7, rb, raw, 4, out, 3), 3);
	/* a build whose rb_vm_exec holds the loop: that frame is replaced */
	rp.exec_is_loop = true;
	n = rubyframes__merge(&rp, pcs + 1, native + 1, 6, rb, raw, 4, out, 16);
	CHECK_EQ_U64(n, 7);
	CHECK_STR(out[0].function, "block in m");
	CHECK_STR(out[3].function, "loop1");
	CHECK_STR(out[4].function, "m");
	CHECK_STR(out[5].function, "<main>");
	CHECK_STR(out[6].function, "main");
}

TEST(decode_id_table)
{
	/* Debian's 3.1.2: rb_id2str's serial, then its tail jump to the
	 * lookup, which compares with last_id and loads ids */
	static const unsigned char fn[] = {0x48, 0x89, 0xf8, 0x48, 0xc1, 0xe8, 0x04, 0x48,
					   0x81, 0xff, 0xa9, 0x00, 0x00, 0x00, 0x0f, 0x47,
					   0xf8, 0x31, 0xf6, 0xe9, 0x78, 0xdd, 0xff, 0xff};
	static const unsigned char lookup[] = {
		0x39, 0x3d, 0x71, 0x85, 0x1a, 0x00,	  /* cmp %edi,0x1a8571(%rip) */
		0x76, 0x10,				  /* jbe */
		0x48, 0x8b, 0x3d, 0x78, 0x85, 0x1a, 0x00, /* mov 0x1a8578(%rip),%rdi */
	};
	__u64 target = 0, ids = 0;

	CHECK_EQ_U64(rubyproc__decode_jmp(fn, sizeof(fn), 0x208e80, &target), 0);
	CHECK_EQ_U64(target, 0x206c10);
	CHECK_EQ_U64(rubyproc__decode_ids(lookup, sizeof(lookup), 0x206c49, &ids), 0);
	CHECK_EQ_U64(ids, 0x3af1d0);
	/* no comparison first, or a load elsewhere: not taken */
	CHECK(rubyproc__decode_ids(lookup + 6, sizeof(lookup) - 6, 0x206c4f, &ids) < 0);
	CHECK(rubyproc__decode_jmp(fn, 19, 0x208e80, &target) < 0);
}

TEST(walker_entry)
{
	struct rubyproc rp = {.layout = *rubyproc__layout(3, 1), .vm_ptr = 0x1000};
	struct ruby_proc e;
	unsigned major = 0, minor = 0;

	CHECK(rubyproc__layout(3, 2) == NULL);
	CHECK(rubyproc__layout(2, 7) == NULL);
	CHECK_EQ_U64(rubyproc__parse_version("3.1.2", 5, &major, &minor), 0);
	CHECK_EQ_U64(major, 3);
	CHECK_EQ_U64(minor, 1);
	CHECK(rubyproc__parse_version("3.1", 3, &major, &minor) < 0);
	CHECK(rubyproc__parse_version("x.1.2", 5, &major, &minor) < 0);
	CHECK_EQ_U64(sampler__ruby_proc(&rp, &e), 0);
	CHECK_EQ_U64(e.vm_ptr, 0x1000);
	CHECK_EQ_U64(e.cfp_size, 64);
	CHECK_EQ_U64(e.ec_cfp, 16);
	CHECK_EQ_U64(e.body_first_lineno, 88);
	CHECK_EQ_U64((__u64)(__s64)e.ep_me, (__u64)-16);
	/* fields past what the walker reads at once are refused */
	rp.layout.body_first_lineno = PROFCAP_RUBY_BODY_READ;
	CHECK_EQ_U64(sampler__ruby_proc(&rp, &e), (__u64)-EINVAL);
	rp.layout = *rubyproc__layout(3, 1);
	rp.layout.cfp_ep = 60;
	CHECK_EQ_U64(sampler__ruby_proc(&rp, &e), (__u64)-EINVAL);
	rp.layout = *rubyproc__layout(3, 1);
	rp.vm_ptr = 0;
	CHECK_EQ_U64(sampler__ruby_proc(&rp, &e), (__u64)-EINVAL);
}

/* ---- a live ruby ---- */

static const char script[] = "def spin_here(n)\n"	/* 1 */
			     "  s = 0\n"		/* 2 */
			     "  while true\n"		/* 3 */
			     "    s = (s + n) % 1000\n" /* 4 */
			     "  end\n"			/* 5 */
			     "end\n"			/* 6 */
			     "class Box\n"		/* 7 */
			     "  def run\n"		/* 8 */
			     "    spin_here(3)\n"	/* 9 */
			     "  end\n"			/* 10 */
			     "end\n"			/* 11 */
			     "$stdout.sync = true\n"	/* 12 */
			     "puts 'ready'\n"		/* 13 */
			     "Box.new.run\n";		/* 14 */

static __u64 rd64(int pid, __u64 addr)
{
	__u64 v = 0;

	if (pyproc__read_mem(NULL, pid, addr, &v, sizeof(v)))
		return 0;
	return v;
}

/* Walk the main thread's control frames as the BPF walker does, into
 * @w (3 words a frame); returns the words. */
static size_t walk(int pid, const struct rubyproc *rp, __u64 *w, size_t cap)
{
	const struct rubyproc_layout *l = &rp->layout;
	__u64 vm = rd64(pid, rp->vm_ptr), th, ec, end, cfp, ep0, iseq, body, first, pc, code;
	size_t n = 0;

	th = rd64(pid, vm + l->vm_main_thread);
	ec = rd64(pid, th + l->thread_ec);
	end = rd64(pid, ec + l->ec_vm_stack) + 8 * rd64(pid, ec + l->ec_vm_stack_size);
	for (cfp = rd64(pid, ec + l->ec_cfp); cfp && cfp < end && n + 3 <= cap;
	     cfp += l->cfp_size) {
		ep0 = rd64(pid, rd64(pid, cfp + l->cfp_ep));
		if ((ep0 & PROFCAP_RUBY_VM_MAGIC_MASK) == PROFCAP_RUBY_VM_MAGIC_DUMMY ||
		    (ep0 & PROFCAP_RUBY_VM_FLAG_CFRAME))
			continue;
		iseq = rd64(pid, cfp + l->cfp_iseq);
		pc = rd64(pid, cfp + l->cfp_pc);
		body = rd64(pid, iseq + l->iseq_body);
		first = rd64(pid, body + l->body_first_lineno);
		code = rd64(pid, body + l->body_encoded);
		w[n++] = iseq | (__u64)profcap_ruby_fingerprint(body, first) << 48;
		w[n++] = ((pc - code) / 8) | (__u64)PROFCAP_RUBY_KIND_ISEQ << 32 |
			 (__u64)(ep0 & PROFCAP_RUBY_VM_FLAG_FINISH ? PROFCAP_RUBY_FRAME_FINISH : 0)
				 << 40;
		w[n++] = body;
	}
	return n;
}

/* Write @len bytes of @data to new file @path (mode @mode): 0 or -1. */
static int put_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ssize_t n = fd < 0 ? -1 : write(fd, data, len);

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

/* Copy file @from to @to (mode @mode): 0 or -1. */
static int copy_file(const char *from, const char *to, mode_t mode)
{
	struct stat st;
	char *buf;
	int fd = open(from, O_RDONLY), err = -1;

	if (fd < 0)
		return -1;
	if (!fstat(fd, &st) && (buf = malloc((size_t)st.st_size))) {
		if (read(fd, buf, (size_t)st.st_size) == st.st_size)
			err = put_file(to, buf, (size_t)st.st_size, mode);
		free(buf);
	}
	close(fd);
	return err;
}

/* A ruby running the script, in @dir: "ready" read from it. With @own_ns,
 * ruby, libruby and the script are copies on a tmpfs only the child's own
 * mount namespace has at @dir (a container's view). */
struct rb_child {
	int pid;
	FILE *out;
	char dir[40], script[64];
};

static void rb_stop(struct rb_child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	if (c->out)
		fclose(c->out);
	unlink(c->script);
	rmdir(c->dir);
}

/* 0; -EPERM when the namespace could not be made; -EIO when ruby did not
 * start. */
static int rb_start(struct rb_child *c, bool own_ns)
{
	char line[16] = "", bin[96], lib[96];
	int pipefd[2], status = 0;

	memset(c, 0, sizeof(*c));
	snprintf(c->dir, sizeof(c->dir), "/tmp/profcap_rb_XXXXXX");
	if (!mkdtemp(c->dir) || pipe(pipefd))
		return -EIO;
	snprintf(c->script, sizeof(c->script), "%s/spin.rb", c->dir);
	snprintf(bin, sizeof(bin), "%s/ruby3.1", c->dir);
	snprintf(lib, sizeof(lib), "%s/libruby-3.1.so.3.1", c->dir);
	if (!own_ns && put_file(c->script, script, sizeof(script) - 1, 0644))
		return -EIO;
	c->pid = fork();
	if (!c->pid) {
		dup2(pipefd[1], 1);
		if (!own_ns) {
			execl(RUBY_BIN, "ruby", c->script, (char *)NULL);
			_exit(127);
		}
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", c->dir, "tmpfs", 0, NULL))
			_exit(126);
		if (copy_file(RUBY_BIN, bin, 0755) || copy_file(LIBRUBY, lib, 0644) ||
		    put_file(c->script, script, sizeof(script) - 1, 0644))
			_exit(125);
		setenv("LD_LIBRARY_PATH", c->dir, 1);
		execl(bin, "ruby", c->script, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	c->out = fdopen(pipefd[0], "r");
	if (c->out && fgets(line, sizeof(line), c->out) && !strcmp(line, "ready\n"))
		return 0;
	waitpid(c->pid, &status, 0);
	c->pid = 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 126 ? -EPERM : -EIO;
}

TEST(live_ruby)
{
	struct rubyframes_raw raw[16];
	struct profile_frame out[16];
	struct rubyproc rp;
	struct rubyframes *rf;
	struct rb_child c;
	__u64 w[48];
	int pid, err, tries;
	size_t nw = 0, n = 0;
	const char *path;

	if (access(RUBY_BIN, X_OK))
		SKIP("no %s (apt-get install ruby)", RUBY_BIN);
	err = rb_start(&c, false);
	CHECK_EQ_U64(err, 0);
	if (err) {
		rb_stop(&c);
		return;
	}
	pid = c.pid;
	path = c.script;
	/* a process that is not Ruby */
	CHECK_EQ_U64(rubyproc__locate(NULL, getpid(), NULL, &rp), (__u64)-ENOENT);
	err = rubyproc__locate(NULL, pid, NULL, &rp);
	CHECK_EQ_U64(err, 0);
	CHECK(rp.checked);
	CHECK(!strncmp(rp.version, "3.1.", 4));
	CHECK(rp.exec_lo && rp.exec_hi > rp.exec_lo);
	CHECK(rp.id_table != 0);
	rf = rubyframes__new(NULL);
	CHECK(rf && !rubyframes__set_process(rf, pid, &rp));
	/* stopped at a moment its frames are those of the spin */
	for (tries = 0; tries < 20 && !err; tries++) {
		usleep(20000);
		kill(pid, SIGSTOP);
		waitpid(pid, NULL, WUNTRACED);
		nw = walk(pid, &rp, w, 48);
		n = rubyframes__decode(w, nw, raw, 16);
		rubyframes__resolve(rf, pid, raw, n, out);
		kill(pid, SIGCONT);
		if (n == 3 && out[0].nlines)
			break;
	}
	CHECK_EQ_U64(n, 3);
	if (n == 3 && out[0].nlines && out[1].nlines && out[2].nlines) {
		CHECK_STR(out[0].function, "spin_here");
		CHECK_STR(out[0].lines[0].filename, path);
		CHECK_EQ_U64(out[0].lines[0].start_line, 1);
		CHECK(out[0].lines[0].line >= 3 && out[0].lines[0].line <= 4);
		CHECK_STR(out[0].type_name, "ruby");
		CHECK_STR(out[1].function, "run");
		CHECK_EQ_U64(out[1].lines[0].line, 9);
		CHECK_EQ_U64(out[1].lines[0].start_line, 8);
		CHECK_STR(out[2].function, "<main>");
		CHECK_EQ_U64(out[2].lines[0].line, 14);
		CHECK(raw[2].flags & RUBYFRAMES_FRAME_FINISH);
	} else {
		CHECK(0);
	}
	/* a changed fingerprint or body names nothing */
	raw[0].fingerprint ^= 1;
	raw[1].body += 8;
	rubyframes__resolve(rf, pid, raw, 2, out);
	CHECK_STR(out[0].function, RUBYFRAMES_UNKNOWN);
	CHECK(!out[0].nlines);
	CHECK_STR(out[1].function, RUBYFRAMES_UNKNOWN);
	/* a forgotten process names nothing */
	rubyframes__forget(rf, pid);
	raw[0].fingerprint ^= 1;
	rubyframes__resolve(rf, pid, raw, 1, out);
	CHECK_STR(out[0].function, RUBYFRAMES_UNKNOWN);
	rubyframes__free(rf);
	rb_stop(&c);
}

/* A ruby whose program, library and script exist only in its own mount
 * namespace (a container): found through /proc/PID, its frames named with
 * the path it sees. */
TEST(other_mount_namespace)
{
	struct rubyframes_raw raw[16];
	struct profile_frame out[16];
	struct rubyproc rp;
	struct rubyframes *rf = NULL;
	struct rb_child c;
	char hidden[96];
	__u64 w[48];
	int err, tries, named = 0;
	size_t n;

	if (geteuid())
		SKIP("needs root (a mount namespace)");
	if (access(RUBY_BIN, X_OK) || access(LIBRUBY, R_OK))
		SKIP("no %s (apt-get install ruby)", RUBY_BIN);
	err = rb_start(&c, true);
	if (err == -EPERM) {
		rb_stop(&c);
		SKIP("mount namespaces refused here");
	}
	CHECK_EQ_U64(err, 0);
	snprintf(hidden, sizeof(hidden), "%s/libruby-3.1.so.3.1", c.dir);
	/* the library the process runs is not there for profcap */
	if (!err)
		err = access(hidden, F_OK) ? rubyproc__locate(NULL, c.pid, NULL, &rp) : -EEXIST;
	CHECK_EQ_U64(err, 0);
	if (!err)
		rf = rubyframes__new(NULL);
	if (rf && !rubyframes__set_process(rf, c.pid, &rp)) {
		for (tries = 0; tries < 20 && !named; tries++) {
			usleep(20000);
			kill(c.pid, SIGSTOP);
			waitpid(c.pid, NULL, WUNTRACED);
			n = rubyframes__decode(w, walk(c.pid, &rp, w, 48), raw, 16);
			rubyframes__resolve(rf, c.pid, raw, n, out);
			kill(c.pid, SIGCONT);
			named = n && out[0].nlines && !strcmp(out[0].function, "spin_here") &&
				!strcmp(out[0].lines[0].filename, c.script);
		}
	}
	CHECK(named);
	rubyframes__free(rf);
	rb_stop(&c);
}

int main(void)
{
	RUN(words_and_abi);
	RUN(succ_rank);
	RUN(merge);
	RUN(decode_id_table);
	RUN(walker_entry);
	RUN(live_ruby);
	RUN(other_mount_namespace);
	return TEST_DONE();
}
