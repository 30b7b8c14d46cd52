/* symbolizer_jit.c - JIT code named by perf maps (see symbolizer.h). */
#include "symbolize/symbolizer_int.h"

/* ---- JIT code (perf maps) -------------------------------------------------------- */

/* profile.frame.type of the perf map entries of a process whose executable
 * or a mapped library has base name @name, or NULL when not a known runtime. */
const char *sym__runtime_of(const char *name)
{
	static const struct {
		const char *prefix; /* "x" matches "x" and "x.so..." / "x-..." versions */
		const char *type;
	} known[] = {
		{"node", "v8js"},
		{"nodejs", "v8js"},
		{"libnode.so", "v8js"},
		{"java", "jvm"},
		{"libjvm.so", "jvm"},
		{"dotnet", "dotnet"},
		{"libcoreclr.so", "dotnet"},
		{"beam.smp", "beam"},
	};
	size_t i, n;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		n = strlen(known[i].prefix);
		if (!strncmp(name, known[i].prefix, n) &&
		    (name[n] == '\0' || name[n] == '.' || name[n] == '-'))
			return known[i].type;
	}
	return NULL;
}

/* Frame type of perf map entry @name in @p: CPython's perf trampolines
 * (python -X perf) are "py::function:file"; otherwise the process's runtime. */
const char *sym__jit_type(const struct sym_proc *p, const char *name)
{
	if (!strncmp(name, "py::", 4))
		return "cpython";
	return p->runtime;
}

/* Mappings whose code a perf map may name: memory with no file behind it. */
bool sym__jit_mapping(const struct sym_map *m)
{
	return (!m->file || !m->file->elf) &&
	       (!strncmp(m->path, "[anon", 5) || !strncmp(m->path, "//anon", 6) ||
		!strncmp(m->path, "/memfd:", 7));
}

/* Number @idx (0 = first; -1 = last) on the line of PROC/PID/status text
 * @status that starts with @key, into *@val. False when absent. */
/* Read the pid @p has in its own PID namespace (the last NSpid field; the
 * pid itself on kernels without NSpid) and its effective uid. nspid stays 0
 * (no perf map) when the status is unreadable. */
static void load_ids(struct symbolizer *s, struct sym_proc *p)
{
	char path[PATH_MAX], *status;
	unsigned long long uid, nspid;
	ssize_t n;

	p->nspid = 0;
	status = scratch(s);
	if (!status)
		return;
	snprintf(path, sizeof(path), "%s/%d/status", s->proc_root, p->pid);
	n = proc_status__read(path, status, SYMBOLIZER_SCRATCH);
	/* "Uid: real effective saved fs". */
	if (n <= 0 || !proc_status__field(status, "Uid:", 1, 10, &uid))
		return;
	if (!proc_status__field(status, "NSpid:", -1, 10, &nspid))
		nspid = (unsigned long long)p->pid;
	p->euid = (unsigned int)uid;
	if (nspid > 0 && nspid <= INT_MAX)
		p->nspid = (int)nspid;
}

static void warn_perfmap(struct sym_proc *p, int err)
{
	const char *why;

	if (p->perfmap_warned)
		return;
	p->perfmap_warned = true;
	switch (err) {
	case -ELOOP:
		why = "it is a symbolic link or under one, which profcap does not follow there; "
		      "have the runtime write the file itself";
		break;
	case -EPERM:
		why = "it is owned by neither root nor the process's user";
		break;
	case -EINVAL:
		why = "it is not a regular file";
		break;
	case -E2BIG:
		why = "it is larger than profcap reads (128 MiB or 2M entries); "
		      "code compiled later stays unnamed";
		break;
	default:
		why = strerror(-err);
		break;
	}
	pr_warn("perf map /tmp/perf-%d.map of process %d (in its own root): %s; "
		"its JIT frames are %s",
		p->nspid, p->pid, why, err == -E2BIG ? "named up to that point" : "left unnamed");
}

/* Read what was appended to @p's perf map since the last read (all of it the
 * first time), through the process's own root. A missing map is normal. */
void sym__update_perfmap(struct symbolizer *s, struct sym_proc *p)
{
	char root[PATH_MAX];
	int fd = -1, err;

	p->perfmap_ns = now_ns(s);
	if (p->nspid <= 0)
		return;
	snprintf(root, sizeof(root), "%s/%d/root", s->proc_root, p->pid);
	err = perfmap__open(root, p->nspid, p->euid, &fd);
	if (err) {
		/* No map, the process gone, or its root closed to us (no
		 * ptrace access, as without CAP_SYS_PTRACE): nothing to say. */
		if (err != -ENOENT && err != -ESRCH && err != -ENOTDIR && err != -EACCES) {
			s->st.perfmap_errors++;
			warn_perfmap(p, err);
		}
		return;
	}
	if (!p->perfmap) {
		p->perfmap = perfmap__new();
		if (!p->perfmap)
			goto out;
		s->st.perfmaps++;
	}
	s->st.perfmap_reads++;
	err = perfmap__update_fd(p->perfmap, fd);
	if (err == -E2BIG)
		warn_perfmap(p, err);
	else if (err)
		s->st.perfmap_errors++;
out:
	close(fd);
}

/* True when @p maps memory a perf map may name (sym__jit_mapping()). */
static bool has_jit_mapping(const struct sym_proc *p)
{
	for (size_t i = 0; i < p->ncur; i++)
		if (sym__jit_mapping(p->cur[i]))
			return true;
	return false;
}

/* The ids and the perf map of @p, just added: only when it has JIT code
 * now. Most processes (compilers, shells) have none: reading their status
 * and looking for a perf map in their root cost two lookups in /proc and
 * two opens each; they are done at the first JIT address instead
 * (sym__jit_name()). */
void sym__begin_perfmap(struct symbolizer *s, struct sym_proc *p)
{
	p->perfmap_later = !has_jit_mapping(p);
	if (p->perfmap_later)
		return;
	load_ids(s, p);
	sym__update_perfmap(s, p);
}

/* The perf map name of (lookup) address @a in @p, re-reading the map on a
 * miss at most once per SYMBOLIZER_PERFMAP_REFRESH_NS. NULL if unnamed. */
const char *sym__jit_name(struct symbolizer *s, struct sym_proc *p, __u64 a)
{
	const struct perfmap_sym *sym = p->perfmap ? perfmap__lookup(p->perfmap, a) : NULL;

	if (!sym && p->perfmap_later) {
		p->perfmap_later = false;
		load_ids(s, p);
		sym__update_perfmap(s, p);
		sym = p->perfmap ? perfmap__lookup(p->perfmap, a) : NULL;
	} else if (!sym && now_ns(s) - p->perfmap_ns >= SYMBOLIZER_PERFMAP_REFRESH_NS) {
		sym__update_perfmap(s, p);
		sym = p->perfmap ? perfmap__lookup(p->perfmap, a) : NULL;
	}
	return sym ? sym->name : NULL;
}
