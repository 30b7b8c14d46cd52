/* symbolizer_procs.c - processes: their mappings, descriptions and
 * contexts (see symbolizer.h). */
#include "symbolize/symbolizer_int.h"

static void free_maps(struct sym_proc *p)
{
	struct sym_map *m, *next;

	for (m = p->all; m; m = next) {
		next = m->next_all;
		if (m->file && m->file->refs)
			m->file->refs--;
		free(m->path);
		free(m);
	}
	p->all = NULL;
	p->nall = 0;
	free(p->cur);
	free(p->cur_starts);
	p->cur = NULL;
	p->cur_starts = NULL;
	p->ncur = 0;
	perfmap__free(p->perfmap);
	p->perfmap = NULL;
}

static void free_ctx(struct sym_proc *p)
{
	struct sym_ctx *c, *prev;

	for (c = p->ctx; c; c = prev) {
		prev = c->prev;
		procctx__clear(&c->c);
		free(c);
	}
	p->ctx = NULL;
	p->nctx = 0;
	p->ctx_start = p->ctx_end = 0;
	p->ctx_bad_ns = 0;
	p->ctx_failed = false;
	p->desc.attrs = NULL;
	p->desc.nattrs = 0;
}

void sym__free_proc(struct sym_proc *p)
{
	if (!p)
		return;
	free_ctx(p);
	free_maps(p);
	free(p->exe_name);
	free(p->exe_path);
	free(p->cmdline);
	free(p);
}

/* ---- processes ----------------------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static void strip_deleted(char *path)
{
	static const char suffix[] = PROCMAPS_DELETED_SUFFIX;
	size_t len = strlen(path), slen = sizeof(suffix) - 1;

	if (len > slen && !strcmp(path + len - slen, suffix))
		path[len - slen] = '\0';
}

static bool proc_eq(const void *elem, const void *key, void *ctx)
{
	(void)ctx;
	return (*(struct sym_proc *const *)elem)->pid == *(const int *)key;
}

static struct sym_proc **find_proc_elem(const struct symbolizer *s, int pid)
{
	return htab__find(&s->procs, htab__hash_u64((__u64)pid, 0), &pid, proc_eq, NULL);
}

struct sym_proc *sym__find_proc(const struct symbolizer *s, int pid)
{
	struct sym_proc **pp = find_proc_elem(s, pid);

	return pp ? *pp : NULL;
}

static bool same_map(const struct sym_map *m, const struct procmaps_entry *e)
{
	return m->desc.start == e->start && m->desc.limit == e->end &&
	       m->desc.file_offset == e->offset && m->inode == e->inode &&
	       m->dev_major == e->dev_major && m->dev_minor == e->dev_minor &&
	       !strcmp(m->path, e->anonymous ? "[anon]" : e->path);
}

static struct sym_map *new_map(struct symbolizer *s, struct sym_proc *p,
			       const struct procmaps_entry *e)
{
	struct sym_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->path = strdup(e->anonymous ? "[anon]" : e->path);
	if (!m->path) {
		free(m);
		return NULL;
	}
	m->inode = e->inode;
	m->dev_major = e->dev_major;
	m->dev_minor = e->dev_minor;
	if (!strcmp(e->path, "[vdso]"))
		m->file = sym__vdso_file(s);
	else if (!e->anonymous && e->inode && e->path[0] != '[')
		m->file = sym__get_file(s, p->pid, e);
	if (m->file && m->file != s->vdso) {
		m->file->refs++;
		m->file->idle_since_ns = 0;
	}
	m->desc.start = e->start;
	m->desc.limit = e->end;
	m->desc.file_offset = e->offset;
	m->desc.path = m->path;
	m->desc.build_id = m->file && m->file->elf ? elfsym__build_id(m->file->elf) : NULL;
	m->desc.flags = sym__file_flags(m->file);
	m->desc.go_build_id = m->file && m->file->elf ? elfsym__go_build_id(m->file->elf) : NULL;
	m->desc.htlhash = m->file && m->file->htlhash[0] ? m->file->htlhash : NULL;
	if (!p->runtime && e->path[0] == '/')
		p->runtime = sym__runtime_of(base_name(e->path));
	m->next_all = p->all;
	p->all = m;
	p->nall++;
	return m;
}

/* Read the process context of @p when its mapping is known and its publish
 * timestamp is new: the cost of a process without one is the name check
 * in sym__load_maps(). A context that fails to read is logged once per
 * timestamp and left out (the process keeps its last good one). */
static void update_ctx(struct symbolizer *s, struct sym_proc *p)
{
	struct sym_ctx *c = NULL;
	char path[PATH_MAX];
	int fd = -1, err;
	__u64 ts;
	size_t i;

	if (!p->ctx_start || p->nctx >= SYMBOLIZER_MAX_CTX_UPDATES)
		return;
	snprintf(path, sizeof(path), "%s/%d/mem", s->proc_root, p->pid);
	fd = fdio__open(path, O_RDONLY);
	if (fd < 0)
		return;
	ts = procctx__published_at(fd, p->ctx_start, p->ctx_end);
	if (ts && p->ctx && ts == p->ctx->c.published_at_ns)
		goto out; /* unchanged: the common case after the first read */
	if (p->ctx_failed && ts == p->ctx_bad_ns)
		goto out; /* the same broken context: do not retry */
	c = calloc(1, sizeof(*c));
	if (!c)
		goto out;
	err = procctx__read(fd, p->ctx_start, p->ctx_end, &c->c);
	if (err) {
		if (err != -EAGAIN) {
			s->st.process_context_errors++;
			pr_debug("pid %d: OpenTelemetry process context unreadable: %s (ignored)",
				 p->pid, strerror(-err));
			p->ctx_failed = true;
			p->ctx_bad_ns = ts;
		}
		free(c);
		goto out;
	}
	for (i = 0; i < c->c.n; i++) {
		c->kv[i].key = c->c.kv[i].key;
		c->kv[i].value = c->c.kv[i].value;
	}
	c->prev = p->ctx;
	p->ctx = c;
	p->nctx++;
	p->desc.attrs = c->kv;
	p->desc.nattrs = c->c.n;
	s->st.process_contexts++;
out:
	close(fd);
}

/* Look for @p's context mapping in its maps file later (its mappings came
 * from the kernel's records), once, unless it has one already. */
static void want_ctx_look(struct symbolizer *s, struct sym_proc *p)
{
	if (p->ctx_start || p->ctx_look_ns || s->nctx_looks >= SYMBOLIZER_CTX_LOOKS)
		return;
	if (!s->ctx_looks) {
		s->ctx_looks = calloc(SYMBOLIZER_CTX_LOOKS, sizeof(*s->ctx_looks));
		if (!s->ctx_looks)
			return;
	}
	p->ctx_look_ns = now_ns(s) + SYMBOLIZER_CTX_LOOK_NS;
	s->ctx_looks[s->nctx_looks++] = p->pid;
}

/* Is @path the program @exe (either maybe with the " (deleted)" suffix)? */
static bool is_program(const char *path, const char *exe)
{
	static const char suffix[] = PROCMAPS_DELETED_SUFFIX;
	size_t n = strlen(exe), slen = sizeof(suffix) - 1;

	if (n > slen && !strcmp(exe + n - slen, suffix))
		n -= slen;
	return !strncmp(path, exe, n) && (!path[n] || !strcmp(path + n, suffix));
}

/* Is program @exe among the executable file mappings @pm? */
static bool maps_program(const struct procmaps *pm, const char *exe)
{
	size_t i, n = procmaps__count(pm);

	for (i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(pm, i);

		if ((e->perms & PROCMAPS_EXEC) && !e->anonymous && is_program(e->path, exe))
			return true;
	}
	return false;
}

/* Do mappings @pm belong to another program than @p's current mappings
 * (it exec()ed, and is not described as the new program yet)? */
static bool other_program(const struct sym_proc *p, const struct procmaps *pm)
{
	bool mapped = false;
	size_t i;

	if (!p->exe_path || !*p->exe_path)
		return false;
	for (i = 0; i < p->ncur && !mapped; i++)
		mapped = is_program(p->cur[i]->path, p->exe_path);
	return mapped && !maps_program(pm, p->exe_path);
}

/* Re-read PROC/PID/maps and rebuild the current mapping list, reusing the
 * descs of unchanged mappings. On error the old list stays, and so it does
 * when the maps are another program's: a process is described as its new
 * program (and takes its mappings) only after an exec is seen
 * (reload_after_exec()), so that the samples of its old program, named
 * until then, keep the old program's mappings. */
/* The mappings to describe @p with into *@pm (borrowed from s->snap when
 * it is that, see sym__load_maps()'s end), *@exec_only when they list
 * executable mappings only: the maps source first (it has what the process
 * mapped since its snapshot, and costs no read of /proc), a fresh snapshot,
 * the maps file, a snapshot of the process gone since. 0 or -errno (-ESRCH:
 * gone). */
static int read_maps(struct symbolizer *s, struct sym_proc *p, struct procmaps **pm,
		     bool *exec_only)
{
	const struct procsnap *snap = s->snap && s->snap->pid == p->pid ? s->snap : NULL;
	char path[PATH_MAX];
	int err;

	*exec_only = false;
	snprintf(path, sizeof(path), "%s/%d/maps", s->proc_root, p->pid);
	if (s->maps_src.fn && !s->maps_src.fn(s->maps_src.ctx, p->pid, pm)) {
		err = 0;
		s->st.maps_from_source++;
		*exec_only = true;
	} else if (fresh_snap(s, p->pid) && s->snap->maps) {
		*pm = s->snap->maps; /* borrowed: just read */
		err = 0;
		s->st.snapshots_fresh++;
		*exec_only = s->snap->lasting;
	} else {
		err = procmaps__read(path, pm);
	}
	if (err && snap && snap->maps) {
		*pm = snap->maps; /* borrowed: gone since its snapshot */
		err = 0;
		s->st.snapshots_used++;
		s->snap_gone = true;
	}
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	/* The source may know the program the process exec()ed since its
	 * snapshot: the process is described as the snapshot's, and so are
	 * its mappings (the next notice describes the new one). */
	if (snap && snap->maps && *pm != snap->maps && snap->exe && !maps_program(*pm, snap->exe) &&
	    maps_program(snap->maps, snap->exe)) {
		procmaps__free(*pm);
		*pm = snap->maps; /* borrowed */
		*exec_only = snap->lasting;
	}
	return 0;
}

int sym__load_maps(struct symbolizer *s, struct sym_proc *p)
{
	struct procmaps *pm = NULL;
	struct sym_map **cur = NULL;
	__u64 *starts = NULL;
	size_t i, n, nx = 0, oi = 0;
	bool exec_only; /* pm lists executable mappings only */
	int err;

	err = read_maps(s, p, &pm, &exec_only);
	if (err)
		return err;
	n = procmaps__count(pm);
	if (exec_only)
		want_ctx_look(s, p); /* keeps the context mapping known */
	else
		p->ctx_start = p->ctx_end = 0;
	for (i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(pm, i);

		nx += !!(e->perms & PROCMAPS_EXEC);
		if (!exec_only && !p->ctx_start && procctx__is_mapping(e)) {
			p->ctx_start = e->start;
			p->ctx_end = e->end;
		}
	}
	/* No executable mapping at all: the address space is gone (a process
	 * exiting, or a zombie, reads an empty maps file), nothing was
	 * unmapped. Keep the mappings its samples were taken in: dropping them
	 * left every frame of a process killed during a capture unnamed. */
	if (!nx && p->ncur)
		goto out;
	if (other_program(p, pm))
		goto out;
	if (nx > SYMBOLIZER_MAX_PROC_MAPS - p->nall) {
		err = -E2BIG;
		goto out;
	}
	cur = calloc(nx ? nx : 1, sizeof(*cur));
	starts = calloc(nx ? nx : 1, sizeof(*starts));
	if (!cur || !starts) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0, nx = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps__entry(pm, i);
		struct sym_map *m = NULL;

		if (!(e->perms & PROCMAPS_EXEC))
			continue;
		/* Both lists are sorted by start: walk the old one alongside. */
		while (oi < p->ncur && p->cur[oi]->desc.start < e->start)
			oi++;
		if (oi < p->ncur && same_map(p->cur[oi], e))
			m = p->cur[oi];
		else
			m = new_map(s, p, e);
		if (!m) {
			err = -ENOMEM;
			goto out;
		}
		starts[nx] = m->desc.start;
		cur[nx++] = m;
	}
	free(p->cur);
	free(p->cur_starts);
	p->cur = cur;
	p->cur_starts = starts;
	p->ncur = nx;
	cur = NULL;
	starts = NULL;
	update_ctx(s, p);
out:
	free(cur);
	free(starts);
	if (!s->snap || pm != s->snap->maps)
		procmaps__free(pm);
	p->last_refresh_ns = now_ns(s);
	return err;
}

/* Fill exe_path/exe_name/cmdline of @p from PROC/PID/{exe,comm,cmdline}. */
static int load_desc(struct symbolizer *s, struct sym_proc *p)
{
	char path[PATH_MAX], target[PATH_MAX], comm[64];
	char *cmd = NULL;
	ssize_t n;
	size_t i;

	const struct procsnap *snap = s->snap && s->snap->pid == p->pid ? s->snap : NULL;
	/* Its maps were gone already (sym__load_maps()): so are the rest, read
	 * everything from the snapshot. */
	const struct procsnap *fresh = snap && s->snap_gone ? snap : fresh_snap(s, p->pid);

	snprintf(path, sizeof(path), "%s/%d/exe", s->proc_root, p->pid);
	n = fresh && fresh->exe ? -1 : readlink(path, target, sizeof(target) - 1);
	if (n <= 0 && snap && snap->exe) /* gone, or just read: from its snapshot */
		n = (ssize_t)snprintf(target, sizeof(target), "%s", snap->exe);
	if (n > 0 && (size_t)n < sizeof(target)) {
		target[n] = '\0';
		strip_deleted(target);
		p->exe_path = strdup(target);
		p->exe_name = strdup(base_name(target));
		if (!p->exe_path || !p->exe_name)
			return -ENOMEM;
	} else {
		snprintf(path, sizeof(path), "%s/%d/comm", s->proc_root, p->pid);
		n = fdio__read_proc(path, comm, sizeof(comm) - 1);
		if (n <= 0 && snap && snap->comm[0])
			n = (ssize_t)snprintf(comm, sizeof(comm), "%s", snap->comm);
		if (n > 0) {
			comm[n] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
			p->exe_name = strdup(comm);
			if (!p->exe_name)
				return -ENOMEM;
		}
	}
	cmd = scratch(s);
	if (!cmd)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/%d/cmdline", s->proc_root, p->pid);
	n = fresh && fresh->cmdline_len ? -1 : fdio__read_proc(path, cmd, SYMBOLIZER_MAX_CMDLINE);
	if (n <= 0 && snap && snap->cmdline_len) {
		n = (ssize_t)(snap->cmdline_len < SYMBOLIZER_MAX_CMDLINE ? snap->cmdline_len
									 : SYMBOLIZER_MAX_CMDLINE);
		memcpy(cmd, snap->cmdline, (size_t)n);
	}
	if (n < 0)
		n = 0;
	while (n > 0 && (cmd[n - 1] == '\0' || cmd[n - 1] == ' '))
		n--;
	for (i = 0; i < (size_t)n; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	cmd[n] = '\0';
	if (n > 0) {
		p->cmdline = strdup(cmd);
		if (!p->cmdline)
			return -ENOMEM;
	}
	/* A process's container is fixed once it runs its program: the
	 * snapshot's holds at any age. */
	if (snap)
		memcpy(p->container_id, snap->container_id, sizeof(p->container_id));
	else if (container__id_of(s->proc_root, p->pid, p->container_id, sizeof(p->container_id)))
		p->container_id[0] = '\0';
	return 0;
}

static int new_proc(struct symbolizer *s, int pid, struct sym_proc **out)
{
	struct sym_proc *p, **elem;
	int err;

	*out = NULL;
	if (htab__count(&s->procs) >= SYMBOLIZER_MAX_PROCESSES)
		return -E2BIG;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	err = htab__add(&s->procs, htab__hash_u64((__u64)pid, 0), (void **)&elem);
	if (err) {
		free(p);
		return err;
	}
	*elem = p;
	*out = p;
	return 0;
}

/* @p, a live process known before, may have exec()ed another program
 * since (its executable changed): then describe it again, as the next
 * generation (a resource of its own in the profile). 0 or -ENOMEM. */
static int add_process(struct symbolizer *s, int pid);

static int reload_after_exec(struct symbolizer *s, struct sym_proc *p)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/exe", s->proc_root, p->pid);
	n = fresh_snap(s, p->pid) && s->snap->exe ? -1 : readlink(path, target, sizeof(target) - 1);
	if (n <= 0 && s->snap && s->snap->pid == p->pid && s->snap->exe) /* gone, or just read */
		n = (ssize_t)snprintf(target, sizeof(target), "%s", s->snap->exe);
	if (n <= 0 || (size_t)n >= sizeof(target))
		return 0; /* gone, or not ours to read: keep what we have */
	target[n] = '\0';
	strip_deleted(target);
	if (p->exe_path && !strcmp(p->exe_path, target))
		return 0;
	if (p->exe_path)
		p->desc.generation++; /* else it was not readable: the same program */
	free_ctx(p);
	free(p->exe_name);
	free(p->exe_path);
	free(p->cmdline);
	p->exe_name = p->exe_path = p->cmdline = NULL;
	p->runtime = NULL;
	if (load_desc(s, p))
		return -ENOMEM;
	if (p->exe_name)
		p->runtime = sym__runtime_of(p->exe_name);
	p->desc.exe_name = p->exe_name;
	p->desc.exe_path = p->exe_path;
	p->desc.cmdline = p->cmdline;
	s->st.execs++;
	return 0;
}

int symbolizer__add_process(struct symbolizer *s, int pid)
{
	return symbolizer__add_process_snap(s, pid, NULL);
}

int symbolizer__add_process_snap(struct symbolizer *s, int pid, const struct procsnap *snap)
{
	int err;

	s->snap = snap;
	s->snap_gone = false; /* read only with s->snap set */
	err = add_process(s, pid);
	s->snap = NULL;
	return err;
}

static int add_process(struct symbolizer *s, int pid)
{
	struct sym_proc *p;
	int err = 0;

	if (pid < 0)
		return -EINVAL;
	p = sym__find_proc(s, pid);
	if (p && !p->gone) {
		if (pid == 0)
			return 0;
		s->st.maps_refreshes++;
		err = reload_after_exec(s, p);
		if (err)
			return err;
		err = sym__load_maps(s, p);
		if (p->perfmap_later)
			sym__begin_perfmap(s, p); /* JIT code since? */
		else
			sym__update_perfmap(s, p);
		return err;
	}
	if (!p) {
		err = new_proc(s, pid, &p);
		if (err)
			return err;
	}
	/* New, or a process that was gone when last added (it never handed out
	 * pointers): start from scratch. */
	free_ctx(p);
	p->ctx_look_ns = 0;
	free_maps(p);
	free(p->exe_name);
	free(p->exe_path);
	free(p->cmdline);
	p->exe_name = p->exe_path = p->cmdline = NULL;
	p->runtime = NULL;
	p->perfmap_warned = false;
	p->gone = true;
	if (pid == 0) {
		/* The idle task: no user space, no /proc entry. */
		p->exe_name = strdup("swapper");
		if (!p->exe_name)
			return -ENOMEM;
	} else {
		/* Gone: stay marked so resolves do not retry it. Maps may also be
		 * unreadable (-EACCES) while comm and cmdline are not: keep the
		 * process without mappings and report that error. */
		err = sym__load_maps(s, p);
		if (err == -ESRCH)
			return err;
		if (load_desc(s, p)) {
			free_maps(p);
			return -ENOMEM;
		}
		if (!p->runtime && p->exe_name)
			p->runtime = sym__runtime_of(p->exe_name);
		sym__begin_perfmap(s, p);
	}
	p->gone = false;
	p->desc.pid = pid;
	p->desc.exe_name = p->exe_name;
	p->desc.exe_path = p->exe_path;
	p->desc.cmdline = p->cmdline;
	p->desc.container_id = p->container_id[0] ? p->container_id : NULL;
	s->st.processes++;
	return err;
}

void symbolizer__forget_process(struct symbolizer *s, int pid)
{
	struct sym_proc **pp = find_proc_elem(s, pid), *p;

	if (!pp)
		return;
	p = *pp;
	htab__remove(&s->procs, pp);
	sym__free_proc(p);
}

void symbolizer__refresh_contexts(struct symbolizer *s)
{
	struct sym_proc **pp;
	size_t it = 0;

	while ((pp = htab__next(&s->procs, &it)))
		if (!(*pp)->gone && (*pp)->ctx_start)
			update_ctx(s, *pp);
}

void symbolizer__check_contexts(struct symbolizer *s)
{
	__u64 now = now_ns(s);
	size_t i, k = 0;

	for (i = 0; i < s->nctx_looks; i++) {
		struct sym_proc *p = sym__find_proc(s, s->ctx_looks[i]);
		struct procmaps *pm = NULL;
		char path[PATH_MAX];
		size_t j;

		if (p && p->ctx_look_ns > now) {
			s->ctx_looks[k++] = s->ctx_looks[i]; /* not yet */
			continue;
		}
		/* Gone (most short-lived processes): a signal 0 says so far
		 * cheaper than a failed open of its maps file. */
		if (!p || p->gone || p->ctx_start || !p->ctx_look_ns ||
		    (!strcmp(s->proc_root, "/proc") && kill(p->pid, 0) && errno == ESRCH))
			continue;
		snprintf(path, sizeof(path), "%s/%d/maps", s->proc_root, p->pid);
		if (!procmaps__read(path, &pm)) {
			for (j = 0; j < procmaps__count(pm) && !p->ctx_start; j++) {
				const struct procmaps_entry *e = procmaps__entry(pm, j);

				if (procctx__is_mapping(e)) {
					p->ctx_start = e->start;
					p->ctx_end = e->end;
				}
			}
			procmaps__free(pm);
			s->st.ctx_looks++;
			update_ctx(s, p);
		}
	}
	s->nctx_looks = k;
}

void symbolizer__refresh_context(struct symbolizer *s, int pid)
{
	struct sym_proc *p = sym__find_proc(s, pid);

	if (p && !p->gone && p->ctx_start)
		update_ctx(s, p);
}

size_t symbolizer__thread_keys(const struct symbolizer *s, int pid, const char *const **keys)
{
	const struct sym_proc *p = sym__find_proc(s, pid);

	*keys = NULL;
	if (!p || !p->ctx || !p->ctx->c.nthread_keys)
		return 0;
	*keys = (const char *const *)p->ctx->c.thread_keys;
	return p->ctx->c.nthread_keys;
}

bool symbolizer__thread_ctx(const struct symbolizer *s, int pid)
{
	const struct sym_proc *p = sym__find_proc(s, pid);

	return p && p->ctx && p->ctx->c.thread_ctx;
}

void symbolizer__set_clock(struct symbolizer *s, const struct clock *c)
{
	s->clock = c ? c : &clock__system;
}

size_t symbolizer__forget_gone(struct symbolizer *s)
{
	char path[PATH_MAX];
	struct sym_proc **pp, *p;
	size_t it = 0, n = 0;

	while ((pp = htab__next(&s->procs, &it))) {
		p = *pp;
		if (p->pid == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%d", s->proc_root, p->pid);
		if (!access(path, F_OK))
			continue;
		htab__remove(&s->procs, pp);
		sym__free_proc(p);
		n++;
	}
	sym__evict_files(s);
	return n;
}
