/* test_pyproc.c - CPython detection and layouts: the tables against each
 * installed version's own headers, the interpreters found in live
 * children (shared libpython, Debian's static stripped python3.11), the
 * debug offsets of 3.13, and processes that are not Python. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/elfsyms.h"
#include "proc/procmaps.h"
#include "proc/procsnap.h"
#include "proc/pyproc.h"
#include "test.h"
#include "pyfixture.h"

/* tests/unit/fixtures/py_offsets.c, from this binary's folder two up
 * (build/tests/, build/asan-tests/), else from the working directory. */
static void offsets_source(char *out, size_t size)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *s;
	int i;

	if (n > 0) {
		self[n] = 0;
		for (i = 0; i < 3 && (s = strrchr(self, '/')); i++)
			*s = 0;
		snprintf(out, size, "%s/tests/unit/fixtures/py_offsets.c", self);
		if (!access(out, R_OK))
			return;
	}
	snprintf(out, size, "tests/unit/fixtures/py_offsets.c");
}

/* The include directory of interpreter @in's installation, "" if none. */
static void include_dir(const struct pyfx_interp *in, char *out, size_t size)
{
	char base[256];
	char *s;

	snprintf(base, sizeof(base), "%s", in->path);
	out[0] = 0;
	if (!(s = strstr(base, "/bin/")))
		return;
	*s = 0;
	snprintf(out, size, "%s/include/python%u.%u%s", base, in->major, in->minor,
		 in->major == 3 && in->minor < 8 ? "m" : "");
	if (access(out, R_OK))
		out[0] = 0;
}

static unsigned long field(const char *text, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\n%s ", name);
	p = strstr(text, key);
	return p ? strtoul(p + strlen(key), NULL, 10) : ~0ul;
}

static void check_layout(const struct pyfx_interp *in)
{
	const struct pyproc_layout *l = pyproc__layout(in->major, in->minor);
	char src[4200], inc[300], cmd[9000], text[4096] = "\n", bin[64];
	size_t len = 1, n;
	FILE *p;

	include_dir(in, inc, sizeof(inc));
	if (!inc[0])
		SKIP("no headers of %s installed", in->path);
	if (system("cc --version >/dev/null 2>&1"))
		SKIP("no system cc");
	offsets_source(src, sizeof(src));
	snprintf(bin, sizeof(bin), "/tmp/profcap_pyoff_%d_%s", getpid(), in->name);
	snprintf(cmd, sizeof(cmd),
		 "cc -w -DPy_BUILD_CORE -I%s -I%s/internal -o %s %s && %s; rm -f %s", inc, inc,
		 bin, src, bin, bin);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	while (len < sizeof(text) - 1 && (n = fread(text + len, 1, sizeof(text) - 1 - len, p)))
		len += n;
	text[len] = 0;
	CHECK(pclose(p) == 0);
	CHECK(l != NULL);
	CHECK_EQ_U64(field(text, "version"), l->version);
#define F(name) CHECK_EQ_U64(field(text, #name), l->name)
	F(runtime_interp_head);
	F(interp_tstate_head);
	F(tstate_next);
	F(tstate_thread_id);
	F(tstate_native_tid);
	F(tstate_frame);
	F(cframe_current_frame);
	F(frame_back);
	F(frame_code);
	F(frame_instr);
	F(frame_owner);
	F(frame_entry);
	F(owner_cstack);
	F(code_firstlineno);
	F(code_name);
	F(code_qualname);
	F(code_filename);
	F(code_linetable);
	F(code_bytecode);
	F(str_state);
	F(str_length);
	F(str_ascii_data);
	F(str_compact_data);
	F(bytes_size);
	F(bytes_data);
#undef F
}

/* Locate a live child of @in and walk its main thread to leaf(). */
static void check_locate(const struct pyfx_interp *in)
{
	struct pyfx_child c;
	struct pyproc pp;
	__u64 words[64], ts[8], tid[8] = {0}, native[8] = {0};
	char want[16];
	int err, n, nts = 0, i, pid;
	bool worker_task = false;

	err = pyfx__start(in, &c);
	if (err == -ENOENT)
		SKIP("%s not installed", in->path);
	if (err) {
		pyfx__stop(&c);
		CHECK_EQ_U64(err, 0);
	}
	pid = c.pid;
	err = pyproc__locate(NULL, c.pid, NULL, NULL, &pp);
	n = err ? 0 : pyfx__walk(c.pid, &pp, words, 64);
	/* each thread state's thread: pthread_self() and the kernel's tid */
	if (!err)
		nts = pyfx__tstates(c.pid, &pp, ts, 8);
	for (i = 0; i < nts; i++) {
		pyfx__rd(c.pid, ts[i] + pp.layout.tstate_thread_id, &tid[i], 8);
		if (pp.layout.tstate_native_tid != PYPROC_NONE)
			pyfx__rd(c.pid, ts[i] + pp.layout.tstate_native_tid, &native[i], 8);
	}
	if (nts > 0 && native[0]) {
		char task[64];

		snprintf(task, sizeof(task), "/proc/%d/task/%llu", pid,
			 (unsigned long long)native[0]);
		worker_task = !access(task, F_OK);
	}
	pyfx__stop(&c);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(pp.layout.version, (in->major << 8) | in->minor);
	snprintf(want, sizeof(want), "%u.%u", in->major, in->minor);
	CHECK(!strncmp(pp.version, want, strlen(want)));
	CHECK(pp.interp_head != 0);
	CHECK_EQ_U64(pp.neval, 1);
	CHECK(pp.eval[0].hi > pp.eval[0].lo);
	CHECK(pp.code_type != 0);
	/* <module>, middle, leaf: three frames, leaf sleeping */
	CHECK_EQ_U64(n, 6);
	CHECK(((words[1] >> 32) & 1) == ((pp.layout.flags & PYPROC_ONE_PER_CALL) ? 1 : 0));
	CHECK((words[5] >> 32) & 1); /* <module> is the first frame of its call */
	/* main (the oldest: last) and the worker, as threading names them */
	CHECK_EQ_U64(nts, 2);
	CHECK_EQ_U64(tid[1], c.ident[0]);
	CHECK_EQ_U64(tid[0], c.ident[1]);
	if (pp.layout.tstate_native_tid != PYPROC_NONE) {
		CHECK_EQ_U64(native[1], pid); /* the main thread's tid is the pid */
		CHECK(native[0] != native[1] && worker_task);
	}
	if (in->major == 3 && in->minor >= 13) {
		/* the debug offsets the interpreter publishes agree with the table */
		const struct pyproc_layout *t = pyproc__layout(3, in->minor);

		CHECK(pp.debug_offsets);
		CHECK(!memcmp(&pp.layout, t, sizeof(*t)));
	}
}

#define VERSION_TESTS(X)                                                              \
	X(0, 2_7) X(1, 3_6) X(2, 3_7) X(3, 3_8) X(4, 3_9) X(5, 3_10) X(6, 3_11) X(7, 3_12) \
		X(8, 3_13) X(9, debian_3_11)
#define DEFINE(i, name)                               \
	TEST(layout_##name)                           \
	{                                             \
		check_layout(&pyfx_interps[i]);       \
	}                                             \
	TEST(locate_##name)                           \
	{                                             \
		check_locate(&pyfx_interps[i]);       \
	}
VERSION_TESTS(DEFINE)

/* A snapshot whose maps list libpython3.so (the stable ABI's forwarder,
 * which runs nothing) before the real libpython: the real one is used. */
TEST(stable_abi_forwarder)
{
	static const char fwd[] = "1000-2000 r--p 00000000 08:01 4242 "
				  "/root/.pyenv/versions/3.11.7/lib/libpython3.so\n";
	struct procsnap snap;
	struct pyfx_child c;
	struct pyproc pp;
	char path[64], *text = NULL;
	size_t len = 0, cap = 0;
	FILE *f;
	int err;

	err = pyfx__start(&pyfx_interps[6], &c);
	if (err == -ENOENT)
		SKIP("%s not installed", pyfx_interps[6].path);
	memset(&snap, 0, sizeof(snap));
	snap.pid = c.pid;
	snprintf(path, sizeof(path), "/proc/%d/maps", c.pid);
	f = err ? NULL : fopen(path, "r");
	if (f) {
		cap = (1u << 20) + sizeof(fwd);
		text = malloc(cap);
		if (text) {
			memcpy(text, fwd, sizeof(fwd) - 1);
			len = sizeof(fwd) - 1;
			len += fread(text + len, 1, cap - len - 1, f);
		}
		fclose(f);
	}
	err = err ?: !text ? -ENOMEM : procmaps__parse(text, len, &snap.maps);
	err = err ?: pyproc__locate(NULL, c.pid, &snap, NULL, &pp);
	pyfx__stop(&c);
	procmaps__free(snap.maps);
	free(text);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(pp.layout.version, 0x030b);
}

static bool maps_mention(int pid, const char *path)
{
	char name[64], line[1024];
	bool found = false;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	f = fopen(name, "r");
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, path) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* A Python whose libpython exists only in its own mount namespace (a
 * container's): found through /proc/PID/map_files. Root only. */
TEST(other_mount_namespace)
{
	const struct pyfx_interp *in = &pyfx_interps[7];
	char dir[] = "/tmp/profcap_pyns_XXXXXX", cmd[1024], lib[128];
	const char *wrap[] = {"/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh",
			      "-c", cmd, NULL};
	struct pyfx_child c;
	struct pyproc pp;
	int err;

	if (geteuid())
		SKIP("needs root (a mount namespace)");
	if (access("/usr/bin/unshare", X_OK) || access(in->path, X_OK))
		SKIP("no unshare or no %s", in->path);
	if (!mkdtemp(dir))
		SKIP("no temporary folder");
	snprintf(lib, sizeof(lib), "%s/libpython3.12.so.1.0", dir);
	snprintf(cmd, sizeof(cmd),
		 "mount -t tmpfs none %s && cp /root/.pyenv/versions/3.12.1/lib/"
		 "libpython3.12.so.1.0 %s/ && LD_LIBRARY_PATH=%s exec \"$0\" \"$@\"",
		 dir, dir, dir);
	err = pyfx__start_wrapped(in, pyfx_script, wrap, &c);
	if (err == -EIO) {
		pyfx__stop(&c);
		rmdir(dir);
		SKIP("mount namespaces refused here");
	}
	/* mapped from the child's folder, which is empty in our namespace */
	err = err ?: maps_mention(c.pid, lib) ? 0 : -ENOENT;
	err = err ?: access(lib, F_OK) ? 0 : -EEXIST;
	err = err ?: pyproc__locate(NULL, c.pid, NULL, NULL, &pp);
	pyfx__stop(&c);
	rmdir(dir);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(pp.layout.version, 0x030c);
	CHECK(pp.interp_head != 0);
}

/* The snapshot of @pid as the kernel's records give it: its executable
 * mappings only (none at offset 0 of its file). */
static int exec_only_snapshot(int pid, struct procsnap *snap)
{
	struct procmaps *all = NULL;
	struct procmaps_entry e[512];
	size_t i, n = 0;
	int err;

	memset(snap, 0, sizeof(*snap));
	snap->pid = pid;
	err = procmaps__read_pid(NULL, "/proc", pid, &all);
	for (i = 0; !err && i < procmaps__count(all) && n < 512; i++)
		if ((procmaps__entry(all, i)->perms & PROCMAPS_EXEC) &&
		    procmaps__entry(all, i)->path[0] == '/')
			e[n++] = *procmaps__entry(all, i);
	err = err ?: procmaps__from_entries(e, n, &snap->maps);
	procmaps__free(all);
	return err;
}

/* A snapshot with executable mappings only finds the interpreter where
 * /proc/PID/maps does: the load bias from the mapping's offset and the
 * file's PT_LOAD (shared libpython and Debian's static interpreter). */
static void check_exec_snapshot(const struct pyfx_interp *in)
{
	struct procsnap snap;
	struct pyfx_child c;
	struct pyproc pp, full;
	int err, err_full;

	err = pyfx__start(in, &c);
	if (err == -ENOENT)
		SKIP("%s not installed", in->path);
	err = err ?: exec_only_snapshot(c.pid, &snap);
	err = err ?: pyproc__locate(NULL, c.pid, &snap, NULL, &pp);
	err_full = pyproc__locate(NULL, c.pid, NULL, NULL, &full);
	pyfx__stop(&c);
	procmaps__free(snap.maps);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(err_full, 0);
	CHECK_EQ_U64(pp.layout.version, (in->major << 8) | in->minor);
	CHECK(pp.interp_head != 0);
	CHECK_EQ_U64(pp.interp_head, full.interp_head);
	CHECK_EQ_U64(pp.eval[0].lo, full.eval[0].lo);
	CHECK_EQ_U64(pp.code_type, full.code_type);
}

TEST(exec_snapshot_shared)
{
	check_exec_snapshot(&pyfx_interps[7]);
}

TEST(exec_snapshot_static)
{
	check_exec_snapshot(&pyfx_interps[9]);
}

/* A copy of Debian's static python3.11 named myservice is found by what
 * it exports; the test program itself, by what it does not export, once:
 * the second time from @files. */
TEST(renamed_interpreter)
{
	char dir[] = "/tmp/profcap_pyren_XXXXXX", path[96], cmd[256];
	struct pyfx_interp in = {"renamed", path, 3, 11};
	struct pyproc_files *files = pyproc_files__new();
	struct pyfx_child c;
	struct pyproc pp;
	__u64 read, known;
	bool started;
	int err;

	CHECK(files != NULL);
	CHECK_EQ_U64(pyproc__locate(NULL, getpid(), NULL, files, &pp), -ENOENT);
	CHECK_EQ_U64(pyproc__locate(NULL, getpid(), NULL, files, &pp), -ENOENT);
	pyproc_files__stats(files, &read, &known);
	CHECK_EQ_U64(read, 1);
	CHECK_EQ_U64(known, 1);
	if (access(pyfx_interps[9].path, X_OK)) {
		pyproc_files__free(files);
		SKIP("no %s", pyfx_interps[9].path);
	}
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/myservice", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", pyfx_interps[9].path, path);
	err = system(cmd) ? -EIO : pyfx__start(&in, &c);
	started = !err;
	err = err ?: pyproc__locate(NULL, c.pid, NULL, files, &pp);
	if (started)
		pyfx__stop(&c);
	unlink(path);
	rmdir(dir);
	pyproc_files__stats(files, &read, &known);
	pyproc_files__free(files);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(pp.layout.version, 0x030b);
	CHECK(!strncmp(pp.version, "3.11.", 5));
	CHECK(pp.interp_head != 0);
	CHECK_EQ_U64(read, 2);
}

/* Write CPython version @hex into the Py_Version of the ELF file @path. */
static int set_py_version(const char *path, __u32 hex)
{
	struct elfsyms_query q = {.name = "Py_Version", .types = 1u << STT_OBJECT};
	struct elfsyms_file f;
	int fd = open(path, O_RDWR | O_CLOEXEC), err, i;

	if (fd < 0)
		return -errno;
	err = elfsyms__open(fd, &f);
	err = err ?: elfsyms__dynsym(&f, &q, 1, NULL);
	for (i = 0; !err && i < f.eh.e_phnum; i++) {
		const Elf64_Phdr *p = &f.ph[i];

		if (p->p_type != PT_LOAD || q.value < p->p_vaddr ||
		    q.value + 4 > p->p_vaddr + p->p_filesz)
			continue;
		if (pwrite(fd, &hex, 4, (off_t)(p->p_offset + q.value - p->p_vaddr)) != 4)
			err = -EIO;
		else
			err = 1;
	}
	elfsyms__close(&f);
	close(fd);
	return err == 1 ? 0 : err ? err : -ENOENT;
}

/* A renamed interpreter of a version profcap has no table for (Debian's
 * python3.11 whose Py_Version says 3.5) is read once: its next process
 * is known from @files. */
TEST(renamed_unknown_version)
{
	char dir[] = "/tmp/profcap_pyold_XXXXXX", path[96], cmd[256];
	struct pyfx_interp in = {"old", path, 3, 5};
	struct pyproc_files *files = pyproc_files__new();
	struct pyfx_child c;
	struct pyproc pp;
	__u64 read = 0, known = 0;
	int err, err2 = 0;
	bool started;

	CHECK(files != NULL);
	if (access(pyfx_interps[9].path, X_OK)) {
		pyproc_files__free(files);
		SKIP("no %s", pyfx_interps[9].path);
	}
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/oldservice", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", pyfx_interps[9].path, path);
	err = system(cmd) ? -EIO : set_py_version(path, 0x030500f0);
	err = err ?: pyfx__start(&in, &c);
	started = !err;
	err = err ?: pyproc__locate(NULL, c.pid, NULL, files, &pp);
	if (started) {
		err2 = pyproc__locate(NULL, c.pid, NULL, files, &pp);
		pyfx__stop(&c);
	}
	unlink(path);
	rmdir(dir);
	pyproc_files__stats(files, &read, &known);
	pyproc_files__free(files);
	CHECK_EQ_U64(err, -ENOTSUP);
	CHECK_EQ_U64(err2, -ENOENT);
	CHECK_EQ_U64(read, 1);
	CHECK_EQ_U64(known, 1);
}

/* Each installed interpreter's file tells its version by what it exports
 * alone (the name aside): Py_Version, else what each version added. */
TEST(file_version)
{
	char path[256];
	unsigned i, major, minor, seen = 0;
	int fd, err;

	for (i = 0; i < PYFX_N; i++) {
		const struct pyfx_interp *in = &pyfx_interps[i];
		char *s;

		snprintf(path, sizeof(path), "%s", in->path);
		if ((s = strstr(path, "/bin/")) && strstr(path, "pyenv"))
			snprintf(s, sizeof(path) - (size_t)(s - path),
				 "/lib/libpython%u.%u%s.so.1.0", in->major, in->minor,
				 in->major == 3 && in->minor < 8 ? "m" : "");
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		major = minor = 0;
		err = pyproc__file_version(fd, &major, &minor);
		close(fd);
		CHECK_EQ_U64(err, 0);
		CHECK_EQ_U64((major << 8) | minor, (in->major << 8) | in->minor);
		seen++;
	}
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ_U64(pyproc__file_version(fd, &major, &minor), -ENOENT);
	close(fd);
	if (!seen)
		SKIP("no CPython installed");
}

TEST(decode_head)
{
	/* mov 0xe08c9(%rip),%rax; ret (2.7) */
	static const unsigned char plain[] = {0x48, 0x8b, 0x05, 0xc9, 0x08, 0x0e, 0x00, 0xc3};
	/* endbr64; mov -0x10(%rip),%rax */
	static const unsigned char cet[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x8b,
					    0x05, 0xf0, 0xff, 0xff, 0xff};
	/* mov 0x18(%rdi),%rax: not a load of a static */
	static const unsigned char other[] = {0x48, 0x8b, 0x47, 0x18, 0xc3, 0x90, 0x90, 0x90};
	__u64 t = 0;

	CHECK_EQ_U64(pyproc__decode_head(plain, sizeof(plain), 0x116e00, &t), 0);
	CHECK_EQ_U64(t, 0x1f76d0);
	CHECK_EQ_U64(pyproc__decode_head(cet, sizeof(cet), 0x1000, &t), 0);
	CHECK_EQ_U64(t, 0x1000 + 11 - 0x10);
	CHECK_EQ_U64(pyproc__decode_head(other, sizeof(other), 0x1000, &t), -ENOENT);
	CHECK_EQ_U64(pyproc__decode_head(cet, 8, 0x1000, &t), -ENOENT); /* cut */
}

TEST(not_python)
{
	struct pyproc pp;

	CHECK_EQ_U64(pyproc__locate(NULL, getpid(), NULL, NULL, &pp), -ENOENT);
	CHECK(pyproc__locate(NULL, 0x3ffffff0, NULL, NULL, &pp) < 0);
	CHECK(pyproc__layout(3, 5) == NULL);
	CHECK(pyproc__layout(4, 0) == NULL);
	CHECK(pyproc__layout(3, 14) != NULL);
}

/* A hand-made _Py_DebugOffsets of 3.13: fields land where the structure
 * puts them; a bad cookie, another version, an offset past its structure
 * or a free-threaded build are refused. */
TEST(debug_offsets)
{
	struct pyproc_layout l = *pyproc__layout(3, 13), r;
	__u64 w[128] = {0};

	memcpy(w, "xdebugpy", 8);
	w[1] = 0x030d01f0;
	w[3] = 1000, w[5] = 600;		     /* runtime: size, interpreters.head */
	w[6] = 9000, w[9] = 7000;		     /* interpreter: size, threads.head */
	w[19] = 300, w[21] = 8, w[23] = 80, w[24] = 160, w[25] = 168; /* thread state */
	w[28] = 80, w[29] = 8, w[30] = 0, w[31] = 56, w[33] = 71;    /* frame */
	w[34] = 220, w[35] = 112, w[36] = 120, w[37] = 128, w[38] = 136, w[39] = 68,
	w[43] = 208;					/* code */
	w[64] = 40, w[65] = 16, w[66] = 32;		/* bytes */
	w[67] = 80, w[68] = 32, w[69] = 16, w[70] = 40; /* str */
	r = l;
	CHECK_EQ_U64(pyproc__debug_offsets(w, sizeof(w), 3, 13, &r), 0);
	CHECK_EQ_U64(r.runtime_interp_head, 600);
	CHECK_EQ_U64(r.interp_tstate_head, 7000);
	CHECK_EQ_U64(r.tstate_frame, 80);
	CHECK_EQ_U64(r.tstate_native_tid, 168);
	CHECK_EQ_U64(r.frame_owner, 71);
	CHECK_EQ_U64(r.code_bytecode, 208);
	CHECK_EQ_U64(r.str_ascii_data, 40);
	CHECK_EQ_U64(r.str_compact_data, 56);
	CHECK_EQ_U64(r.flags, l.flags);
	r = l;
	CHECK_EQ_U64(pyproc__debug_offsets(w, sizeof(w), 3, 12, &r), -EINVAL);
	CHECK_EQ_U64(pyproc__debug_offsets(w, 100, 3, 13, &r), -EINVAL);
	w[33] = 90; /* owner past the frame */
	CHECK_EQ_U64(pyproc__debug_offsets(w, sizeof(w), 3, 13, &r), -EINVAL);
	CHECK(!memcmp(&r, &l, sizeof(l))); /* untouched */
	w[33] = 71;
	w[2] = 1;
	CHECK_EQ_U64(pyproc__debug_offsets(w, sizeof(w), 3, 13, &r), -ENOTSUP);
	w[2] = 0;
	w[0] = 0;
	CHECK_EQ_U64(pyproc__debug_offsets(w, sizeof(w), 3, 13, &r), -EINVAL);
}

/* 3.14's structure: more interpreter, frame and code fields, a set
 * object; the offsets still land where they belong. */
TEST(debug_offsets_314)
{
	struct pyproc_layout r = *pyproc__layout(3, 14);
	__u64 w[128] = {0};

	CHECK(r.runtime_interp_head == PYPROC_NONE); /* from the debug offsets only */
	memcpy(w, "xdebugpy", 8);
	w[1] = 0x030e00f0;
	w[3] = 1000, w[5] = 640;
	w[6] = 9000, w[9] = 7400;
	w[22] = 300, w[24] = 8, w[26] = 64, w[27] = 144, w[28] = 152;
	w[31] = 80, w[32] = 8, w[33] = 0, w[34] = 56, w[36] = 74;
	w[39] = 220, w[40] = 112, w[41] = 120, w[42] = 128, w[43] = 136, w[44] = 68,
	w[48] = 200;
	w[74] = 40, w[75] = 16, w[76] = 32;
	w[77] = 80, w[78] = 32, w[79] = 16, w[80] = 40;
	CHECK_EQ_U64(pyproc__debug_offsets(w, sizeof(w), 3, 14, &r), 0);
	CHECK_EQ_U64(r.runtime_interp_head, 640);
	CHECK_EQ_U64(r.interp_tstate_head, 7400);
	CHECK_EQ_U64(r.tstate_frame, 64);
	CHECK_EQ_U64(r.tstate_thread_id, 144);
	CHECK_EQ_U64(r.frame_owner, 74);
	CHECK_EQ_U64(r.code_bytecode, 200);
	CHECK(r.flags & PYPROC_CODE_TAGGED);
	/* a field that moved where none does: the indices are wrong */
	w[24] = 16;
	CHECK_EQ_U64(pyproc__debug_offsets(w, sizeof(w), 3, 14, &r), -EINVAL);
}

int main(void)
{
#define RUN_BOTH(i, name) RUN(layout_##name); RUN(locate_##name);
	VERSION_TESTS(RUN_BOTH)
	RUN(stable_abi_forwarder);
	RUN(other_mount_namespace);
	RUN(exec_snapshot_shared);
	RUN(exec_snapshot_static);
	RUN(renamed_interpreter);
	RUN(renamed_unknown_version);
	RUN(file_version);
	RUN(decode_head);
	RUN(not_python);
	RUN(debug_offsets);
	RUN(debug_offsets_314);
	return TEST_DONE();
}
