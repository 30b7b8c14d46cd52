/* sampler_memory.c - memory profiles in the kernel (see sampler_memory.h):
 * the second instance of the sampler's object and the allocator probes
 * (the drain is sampler_memory_drain.c). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpu_sampler.skel.h"
#include "collect/sampler_times.h"
#include "memory_types.h"
#include "collect/drain.h"
#include "collect/sampler_int.h"
#include "collect/sampler_memory.h"
#include "collect/sampler_memory_int.h"
#include "proc/procmaps.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/htab.h"
#include "util/log.h"

#define MEMORY_LINKS_MAX 4096u /* uprobes, all files */
#define MEMORY_FILES_MAX 1024u /* (process, file) pairs probed */
#define MEMORY_PENDING 4096u   /* threads inside a sampled call at once */
#define MEMORY_QUICK_WAIT_MS 60000
#define MEMORY_WANT_MAX 48u /* files of a target whose tables are asked at once */

/* An allocator entry point: its symbol and what it does. */
struct mem_symbol {
	const char *name;
	enum mem_kind kind;
};

/* In a file that defines malloc. Aliases (one address, two names) are
 * probed once. */
static const struct mem_symbol mem_symbols[] = {
	{"malloc", MEM_MALLOC},
	{"calloc", MEM_CALLOC},
	{"realloc", MEM_REALLOC},
	{"free", MEM_FREE},
	{"cfree", MEM_FREE},
	{"posix_memalign", MEM_POSIX_MEMALIGN},
	{"aligned_alloc", MEM_MEMALIGN},
	{"memalign", MEM_MEMALIGN},
	{"valloc", MEM_MALLOC},
	{"pvalloc", MEM_MALLOC},
	/* jemalloc's own API */
	{"mallocx", MEM_MALLOC},
	{"rallocx", MEM_REALLOC},
	{"dallocx", MEM_FREE},
	{"sdallocx", MEM_FREE},
	/* mimalloc's */
	{"mi_malloc", MEM_MALLOC},
	{"mi_zalloc", MEM_MALLOC},
	{"mi_calloc", MEM_CALLOC},
	{"mi_realloc", MEM_REALLOC},
	{"mi_free", MEM_FREE},
	/* C++ operators where the allocator defines them (tcmalloc, jemalloc);
	 * libstdc++'s call malloc, probed there */
	{"_Znwm", MEM_MALLOC},
	{"_Znam", MEM_MALLOC},
	{"_ZnwmRKSt9nothrow_t", MEM_MALLOC},
	{"_ZnamRKSt9nothrow_t", MEM_MALLOC},
	{"_ZdlPv", MEM_FREE},
	{"_ZdaPv", MEM_FREE},
	{"_ZdlPvm", MEM_FREE},
	{"_ZdaPvm", MEM_FREE},
	{"_ZdlPvRKSt9nothrow_t", MEM_FREE},
	{"_ZdaPvRKSt9nothrow_t", MEM_FREE},
};
#define MEM_NSYMBOLS (sizeof(mem_symbols) / sizeof(mem_symbols[0]))

/* libc's anonymous mappings (with --memory-mmap); not in the allocator
 * table: glibc's malloc calls the same code for its own arenas, so these
 * are probed in libc only. */
static const struct mem_symbol mem_mmap_symbols[] = {
	{"mmap", MEM_MMAP},
	{"munmap", MEM_MUNMAP},
};

/* A (process, file) looked at: pid -1 for every process. */
struct mem_file {
	__s32 pid;
	__u32 pad;
	__u64 dev, ino;
	__u32 state; /* MEM_FILE_* (not part of the key) */
	__u32 pad2;
};

#define MEM_FILE_KEY offsetof(struct mem_file, state)
#define MEM_FILE_USDT_CHECKED 0x1 /* its notes read */
#define MEM_FILE_ALLOC 0x2	  /* allocator probes tried */

bool memsampler__candidate(const char *path, const char *exe)
{
	static const char *const prefixes[] = {"libc.so",     "libc-",	     "ld-musl-",
					       "libjemalloc", "libtcmalloc", "libmimalloc"};
	const char *base = strrchr(path, '/');
	size_t i;

	if (exe && *exe && !strcmp(path, exe))
		return true;
	base = base ? base + 1 : path;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(base, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

__u64 memsampler__keep(__u64 keep, __u64 seen, __u64 ns, __u64 max)
{
	__u64 want, k;

	if (!max || !ns)
		return MEM_FP_ONE;
	/* sampled calls allowed in @ns */
	want = max * ns / 1000000000ull;
	if (!want)
		want = 1;
	/* the demand was seen / keep: keep what fits the budget of it */
	k = seen ? keep * want / seen : MEM_FP_ONE;
	if (k > MEM_FP_ONE)
		k = MEM_FP_ONE;
	if (k < MEM_FP_ONE >> 16)
		k = MEM_FP_ONE >> 16;
	return k;
}

/* ---- loading ---- */

/* The memory maps, sized; every other map the sampler's object has. */
static int share_maps(struct memsampler *m, const struct memory_opts *o)
{
	struct cpu_sampler *main = m->s->skel;
	struct bpf_map *map;
	int err = 0;

	bpf_object__for_each_map(map, m->skel->obj)
	{
		const char *name = bpf_map__name(map);
		const struct bpf_map *mine;
		int fd;

		/* its own: the memory maps, libbpf's USDT maps and externs */
		if (!strncmp(name, "mem_", 4) || !strncmp(name, "__bpf_usdt", 10) ||
		    !strcmp(name, ".kconfig"))
			continue;
		/* with timestamps, a ring of its own sized for its budget */
		if (!strcmp(name, "times") && main->rodata->want_timestamps) {
			err = bpf_map__set_max_entries(
				map, times__ring_cap(times__mem_ring_bytes(o->max_events)));
			if (err)
				return err;
			continue;
		}
		mine = bpf_object__find_map_by_name(main->obj, name);
		fd = mine ? bpf_map__fd(mine) : -1;
		if (fd < 0)
			err = bpf_map__set_autocreate(map, false);
		else
			err = bpf_map__reuse_fd(map, fd);
		if (err)
			return err;
	}
	err = bpf_map__set_max_entries(m->skel->maps.mem_counts, MEMORY_COUNTS_MAX);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.mem_stacks, MEMORY_STACKS_MAX);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.mem_ustack_ext, MEMORY_STACKS_MAX / 4);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.mem_live, o->live_max);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.mem_live_procs, 4096);
	err = err ?: bpf_map__set_max_entries(m->skel->maps.mem_usdt_procs, 4096);
	return err ?: bpf_map__set_max_entries(m->skel->maps.mem_pending, MEMORY_PENDING);
}

int memsampler__write_config(struct memsampler *m)
{
	struct mem_config c = {
		.rate = m->o.rate,
		.live_max = m->o.live_max,
		/* a process may hold half the table: two can share it */
		.live_per_proc = m->o.system_wide || m->shared ? m->o.live_max / 2 : m->o.live_max,
		.keep = m->keep,
		.anon_mmap = m->o.anon_mmap,
	};
	__u32 zero = 0;

	return bpf_map__update_elem(m->skel->maps.mem_config, &zero, sizeof(zero), &c, sizeof(c),
				    BPF_ANY);
}

static int load(struct memsampler *m)
{
	struct bpf_program *p;
	__u64 t0;
	int err;

	m->skel = loader__open();
	if (!m->skel)
		return -errno;
	bpf_object__for_each_program(p, m->skel->obj) bpf_program__set_autoload(
		p, p == m->skel->progs.profcap_mem_alloc || p == m->skel->progs.profcap_mem_ret ||
			   p == m->skel->progs.profcap_mem_free ||
			   p == m->skel->progs.profcap_mem_usdt_alloc ||
			   p == m->skel->progs.profcap_mem_usdt_free ||
			   p == m->skel->progs.profcap_mem_exec);
	err = share_maps(m, &m->o);
	if (err)
		return err;
	t0 = clock__mono_ns();
	err = cpu_sampler__load(m->skel);
	if (err)
		return err;
	loader__verifier_report(m->skel->progs.profcap_mem_alloc, clock__mono_ns() - t0);
	if (m->s->skel->rodata->want_timestamps && !(m->times = times__new()))
		return -ENOMEM;
	m->stacks_fd = bpf_map__fd(m->skel->maps.mem_stacks);
	m->ext_fd = bpf_map__fd(m->skel->maps.mem_ustack_ext);
	err = memsampler__write_config(m);
	/* Targets' children that exec() are announced at once (system-wide,
	 * every process's allocator files are probed already). */
	if (!err && !m->o.system_wide) {
		m->exec_link = bpf_program__attach_raw_tracepoint(m->skel->progs.profcap_mem_exec,
								  "sched_process_exec");
		if (!m->exec_link)
			err = -errno;
	}
	return err;
}

/* A test switch (docs/ARCHITECTURE.md): @name in the environment when it
 * is smaller than @v. */
static __u32 env_cap(const char *name, __u32 v)
{
	const char *env = env__get(env__process(), name);
	unsigned long n = env ? strtoul(env, NULL, 10) : 0;

	return n > 0 && n < v ? (__u32)n : v;
}

int memsampler__new(struct sampler *s, const struct memory_opts *o, struct memsampler **out)
{
	struct memsampler *m;
	int err;

	*out = NULL;
	if (s->l.on && (err = quick__wait(s, MEMORY_QUICK_WAIT_MS))) {
		pr_err("--memory: the table unwinder did not load (%s)", strerror(-err));
		return err;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->s = s;
	m->o = *o;
	if (!m->o.rate)
		m->o.rate = MEMORY_RATE_DEFAULT;
	if (m->o.rate > MEM_RATE_MAX)
		m->o.rate = MEM_RATE_MAX;
	if (!m->o.live_max)
		m->o.live_max = MEMORY_LIVE_MAX;
	if (!m->o.max_events)
		m->o.max_events = MEMORY_EVENTS_DEFAULT;
	m->o.live_max = env_cap("PROFCAP_MEMORY_LIVE", m->o.live_max);
	m->o.max_events = env_cap("PROFCAP_MEMORY_EVENTS", m->o.max_events);
	m->keep = MEM_FP_ONE;
	m->last_ns = clock__mono_ns();
	err = htab__init(&m->files, sizeof(struct mem_file), MEMORY_FILES_MAX);
	err = err ?: htab__init(&m->agg, sizeof(struct mem_agg), MEMORY_AGG_MAX);
	err = err ?: htab__init(&m->refs, sizeof(__u64), MEMORY_LIVE_MAX * 2);
	err = err ?: load(m);
	if (err) {
		if (err == -EPERM || err == -EACCES)
			loader__explain(err);
		else
			pr_err("--memory: cannot load the allocator probes (%s); run with -v for "
			       "the verifier's log",
			       strerror(-err));
		memsampler__free(m);
		return err;
	}
	*out = m;
	return 0;
}

/* ---- probes ---- */

/* Addresses of the allocator symbols @file defines (0: not defined), from
 * its .symtab and .dynsym; and, with @needed, its DT_NEEDED names (each
 * @needed_len bytes, at most @nneeded; *@nneeded gets how many). 0 or
 * -errno (not an ELF file: -ENOEXEC). */
static int read_elf(const char *file, __u64 *addrs, __u64 *mmap_addrs, char (*needed)[NAME_MAX],
		    size_t *nneeded)
{
	size_t max = nneeded ? *nneeded : 0, n = 0, i, k;
	Elf_Scn *scn = NULL;
	Elf *e;
	int fd, err = 0;

	memset(addrs, 0, MEM_NSYMBOLS * sizeof(*addrs));
	memset(mmap_addrs, 0, 2 * sizeof(*mmap_addrs));
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Shdr sh;

		if (!d || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
			continue;
		if (sh.sh_type == SHT_DYNAMIC && needed) {
			for (i = 0; i < sh.sh_size / sh.sh_entsize && n < max; i++) {
				GElf_Dyn dyn;
				const char *s;

				if (gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag == DT_NEEDED &&
				    (s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val)))
					snprintf(needed[n++], NAME_MAX, "%s", s);
			}
		}
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value ||
			    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
				continue;
			s = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!s)
				continue;
			for (k = 0; k < MEM_NSYMBOLS; k++)
				if (!strcmp(s, mem_symbols[k].name))
					addrs[k] = sym.st_value;
			for (k = 0; k < 2; k++)
				if (!strcmp(s, mem_mmap_symbols[k].name))
					mmap_addrs[k] = sym.st_value;
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	if (nneeded)
		*nneeded = n;
	return err;
}

/* One probe (and for an allocation, its return probe) of @sym in @path
 * for @pid. 0 or -errno. */
static int attach_symbol(struct memsampler *m, const char *path, int pid,
			 const struct mem_symbol *sym)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = sym->name, .bpf_cookie = sym->kind);
	bool is_free = sym->kind == MEM_FREE || sym->kind == MEM_MUNMAP;
	struct bpf_program *prog =
		is_free ? m->skel->progs.profcap_mem_free : m->skel->progs.profcap_mem_alloc;
	int i, err;

	for (i = 0; i < (is_free ? 1 : 2); i++) {
		err = array__grow((void **)&m->links, &m->links_cap, m->nlinks, sizeof(*m->links),
				  64, MEMORY_LINKS_MAX);
		if (err)
			return err;
		uo.retprobe = i == 1;
		m->links[m->nlinks] = (struct mem_link){
			bpf_program__attach_uprobe_opts(i ? m->skel->progs.profcap_mem_ret : prog,
							pid, path, 0, &uo),
			pid, false};
		if (!m->links[m->nlinks].link)
			return -errno;
		m->nlinks++;
	}
	return 0;
}

/* Probe the allocator in @path (a file that defines malloc) for @pid;
 * @libc: also its anonymous mappings when asked. 1 probed, 0 not an
 * allocator, -errno. */
static int attach_file(struct memsampler *m, const char *path, int pid)
{
	__u64 addrs[MEM_NSYMBOLS], maddrs[2];
	size_t k, j;
	int err, malloc_at = -1;

	err = read_elf(path, addrs, maddrs, NULL, NULL);
	if (err)
		return err == -ENOEXEC ? 0 : err;
	for (k = 0; k < MEM_NSYMBOLS; k++)
		if (!strcmp(mem_symbols[k].name, "malloc") && addrs[k])
			malloc_at = (int)k;
	if (malloc_at < 0)
		return 0;
	for (k = 0; k < MEM_NSYMBOLS; k++) {
		if (!addrs[k])
			continue;
		for (j = 0; j < k && addrs[j] != addrs[k]; j++)
			;
		if (j < k)
			continue; /* an alias of one probed */
		err = attach_symbol(m, path, pid, &mem_symbols[k]);
		if (err)
			return err;
	}
	for (k = 0; m->o.anon_mmap && k < 2; k++)
		if (maddrs[k] && (err = attach_symbol(m, path, pid, &mem_mmap_symbols[k])))
			return err;
	pr_debug("--memory: allocator probes on %s (%s)", path,
		 pid < 0 ? "every process" : "one process");
	return 1;
}

static bool file_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return !memcmp(elem, key, MEM_FILE_KEY);
}

/* The state of @path for @pid (added when new), NULL when the file is
 * gone or the table full. */
static struct mem_file *file_of(struct memsampler *m, const char *path, int pid)
{
	struct mem_file f = {.pid = m->o.system_wide ? -1 : pid}, *slot;
	struct stat sb;
	__u64 h;

	if (stat(path, &sb))
		return NULL;
	f.dev = sb.st_dev;
	f.ino = sb.st_ino;
	h = htab__hash(&f, MEM_FILE_KEY);
	slot = htab__find(&m->files, h, &f, file_eq, NULL);
	if (slot || htab__add(&m->files, h, (void **)&slot))
		return slot;
	*slot = f;
	return slot;
}

/* Does @path define probes of the OpenTelemetry memory contract (SystemTap
 * notes of provider otel_memory)? */
static bool has_otel_notes(const char *path)
{
	static const char provider[] = "otel_memory";
	Elf_Scn *scn = NULL;
	bool found = false;
	size_t shstr;
	Elf *e;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstr))
		goto out;
	while (!found && (scn = elf_nextscn(e, scn))) {
		size_t off = 0, name_off, desc_off;
		const char *name;
		Elf_Data *d;
		GElf_Shdr sh;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(name = elf_strptr(e, shstr, sh.sh_name)) || strcmp(name, ".note.stapsdt") ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		while (!found && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			/* desc: pc, base, semaphore (8 bytes each), provider */
			if (nh.n_type == 3 && nh.n_descsz > 24 + sizeof(provider) &&
			    desc_off + 24 + sizeof(provider) <= d->d_size &&
			    !memcmp((char *)d->d_buf + desc_off + 24, provider, sizeof(provider)))
				found = true;
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

/* The contract's two probes in @path for @pid; the process's allocator
 * probes are then ignored. 0 or -errno. */
static int attach_usdt(struct memsampler *m, const char *path, int pid)
{
	static const char *const names[] = {"alloc", "free"};
	struct bpf_program *progs[] = {m->skel->progs.profcap_mem_usdt_alloc,
				       m->skel->progs.profcap_mem_usdt_free};
	__u32 key = (__u32)pid;
	__u8 one = 1;
	int i, err;

	for (i = 0; i < 2; i++) {
		err = array__grow((void **)&m->links, &m->links_cap, m->nlinks, sizeof(*m->links),
				  64, MEMORY_LINKS_MAX);
		if (err)
			return err;
		m->links[m->nlinks] =
			(struct mem_link){bpf_program__attach_usdt(progs[i], pid, path,
								   "otel_memory", names[i], NULL),
					  pid, true};
		if (!m->links[m->nlinks].link)
			return -errno;
		m->nlinks++;
	}
	if (pid > 0) {
		/* its allocator probes would only trap: gone (and ignored till
		 * then) */
		bpf_map__update_elem(m->skel->maps.mem_usdt_procs, &key, sizeof(key), &one,
				     sizeof(one), BPF_ANY);
		for (i = 0; i < (int)m->nlinks; i++) {
			if (m->links[i].pid != pid || m->links[i].usdt || !m->links[i].link)
				continue;
			bpf_link__destroy(m->links[i].link);
			m->links[i].link = NULL;
		}
	}
	m->usdt++;
	pr_debug("--memory: otel_memory probes in %s: the process's own sampler is used", path);
	return 0;
}

/* Does process @pid fire the otel_memory probes (found so far)? */
static bool uses_usdt(const struct memsampler *m, int pid)
{
	__u32 key = (__u32)pid;
	__u8 v;

	return pid > 0 && !bpf_map__lookup_elem(m->skel->maps.mem_usdt_procs, &key, sizeof(key), &v,
						sizeof(v), 0);
}

/* Look at @path for @pid unless done: its otel_memory probes, and with
 * @alloc (a file that may hold an allocator) its allocator. 0 or -errno
 * (logged once). */
static int probe(struct memsampler *m, const char *path, int pid, bool alloc)
{
	struct mem_file *f = file_of(m, path, pid);
	int err = 0;

	if (!f)
		return 0; /* gone, or too many files: not probed */
	if (!(f->state & MEM_FILE_USDT_CHECKED)) {
		f->state |= MEM_FILE_USDT_CHECKED;
		if (has_otel_notes(path))
			err = attach_usdt(m, path, f->pid);
	}
	if (!err && alloc && !(f->state & MEM_FILE_ALLOC) && !uses_usdt(m, f->pid)) {
		f->state |= MEM_FILE_ALLOC;
		err = attach_file(m, path, f->pid);
	}
	if (err > 0) {
		m->nfiles++;
		return 0;
	}
	if (err && !m->warned) {
		m->warned = true;
		pr_warn("--memory: cannot probe the allocator in %s (%s): its allocations are not "
			"seen%s",
			path, strerror(-err),
			err == -E2BIG ? "; too many probes" : "; is uprobe support built in?");
	}
	return err;
}

/* Process @pid is probed: from the second on, each gets a share of the
 * live table (written to the programs' configuration once). */
static void count_process(struct memsampler *m, int pid)
{
	if (!m->first_pid)
		m->first_pid = pid;
	else if (pid != m->first_pid && !m->shared) {
		m->shared = true;
		if (memsampler__write_config(m))
			m->shared = false;
	}
}

int memsampler__attach_pid(struct memsampler *m, int pid)
{
	char path[PATH_MAX + 64], exe[PATH_MAX];
	struct procmaps *maps = NULL;
	const char *last = "";
	size_t i, nwant = 0;
	ssize_t n;
	int err;

	count_process(m, pid);
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	err = procmaps__read(path, &maps);
	if (err)
		return err == -ENOENT || err == -ESRCH ? 0 : err;
	for (i = 0; i < procmaps__count(maps); i++) {
		const struct procmaps_entry *e = procmaps__entry(maps, i);

		if (!(e->perms & PROCMAPS_EXEC) || e->anonymous || e->deleted || *e->path != '/' ||
		    !strcmp(e->path, last))
			continue;
		last = e->path;
		/* A target's tables now (else a library's is built lazily, when
		 * a CPU sample's walk needs it): its allocations' stacks are
		 * walked from its first calls. */
		if (!m->o.system_wide && nwant++ < MEMORY_WANT_MAX)
			builder__want_file(m->s, (__u32)pid, e->start,
					   (__u64)e->dev_major << 32 | e->dev_minor, e->inode);
		/* the process's view of its files (its mount namespace) */
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, e->path);
		err = probe(m, path, pid, memsampler__candidate(e->path, exe));
		if (err)
			break;
	}
	procmaps__free(maps);
	return err;
}

/* The path of library @name as the dynamic loader finds it in the usual
 * directories into @out: 0 or -ENOENT. */
static int find_library(const char *name, char *out, size_t len)
{
	static const char *const dirs[] = {"/lib/x86_64-linux-gnu",
					   "/usr/lib/x86_64-linux-gnu",
					   "/lib64",
					   "/usr/lib64",
					   "/lib",
					   "/usr/lib",
					   "/usr/local/lib"};
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		int n = snprintf(out, len, "%s/%s", dirs[i], name);

		if (n > 0 && (size_t)n < len && !access(out, R_OK))
			return 0;
	}
	return -ENOENT;
}

int memsampler__attach_exec(struct memsampler *m, int pid, const char *exe)
{
	char needed[32][NAME_MAX], lib[PATH_MAX];
	__u64 addrs[MEM_NSYMBOLS], maddrs[2];
	size_t n = 32, i;
	int err;

	count_process(m, pid);
	if (read_elf(exe, addrs, maddrs, needed, &n))
		n = 0;
	err = probe(m, exe, pid, true);
	for (i = 0; i < n && !err; i++)
		if (!find_library(needed[i], lib, sizeof(lib)))
			err = probe(m, lib, pid, memsampler__candidate(needed[i], NULL));
	return err;
}

bool memsampler__followed(const struct memsampler *m, int pid)
{
	__u32 key = (__u32)pid;
	__u8 v;

	return m && pid > 0 &&
	       !bpf_map__lookup_elem(m->s->skel->maps.followed, &key, sizeof(key), &v, sizeof(v),
				     0);
}

/* Probes of processes that exited out (their links and files), so children
 * that come and go do not use up the caps. */
static void reclaim(struct memsampler *m)
{
	struct mem_file *f;
	size_t i, k = 0, it = 0;
	__s32 gone = 0;

	for (i = 0; i < m->nlinks; i++) {
		struct mem_link *l = &m->links[i];

		if (l->pid > 0 && (l->pid == gone || (kill(l->pid, 0) && errno == ESRCH))) {
			gone = l->pid;
			bpf_link__destroy(l->link);
			continue;
		}
		m->links[k++] = *l;
	}
	m->nlinks = k;
	while ((f = htab__next(&m->files, &it)))
		if (f->pid > 0 && kill(f->pid, 0) && errno == ESRCH)
			htab__remove(&m->files, f);
}

int memsampler__attach_child(struct memsampler *m, int pid)
{
	char path[64], exe[PATH_MAX], root[PATH_MAX + 64];
	ssize_t n;
	int err;

	if (m->nlinks > MEMORY_LINKS_MAX / 2 || htab__count(&m->files) > MEMORY_FILES_MAX / 2)
		reclaim(m);
	err = memsampler__attach_pid(m, pid);
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (err || n <= 0)
		return err;
	exe[n] = '\0';
	/* Just exec()ed, its libraries may not be mapped yet: those it needs. */
	snprintf(root, sizeof(root), "/proc/%d/root%s", pid, exe);
	return memsampler__attach_exec(m, pid, root);
}

void memsampler__stop(struct memsampler *m)
{
	size_t i;

	if (!m)
		return;
	bpf_link__destroy(m->exec_link);
	m->exec_link = NULL;
	for (i = 0; i < m->nlinks; i++) {
		bpf_link__destroy(m->links[i].link);
		m->links[i].link = NULL;
	}
}

void memsampler__free(struct memsampler *m)
{
	if (!m)
		return;
	memsampler__stop(m);
	free(m->links);
	htab__release(&m->files);
	htab__release(&m->agg);
	htab__release(&m->refs);
	times__free(m->times);
	cpu_sampler__destroy(m->skel);
	free(m);
}
