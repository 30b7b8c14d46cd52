/* symbolize_opt.c - --symbolize / --debug-dir (see symbolize_opt.h). */
#include <errno.h>
#include <string.h>

#include "util/log.h"
#include "model/profile.h"
#include "formats/format.h"
#include "formats/otlp_read.h"
#include "symbolize/resymbolize.h"
#include "cli/args.h"
#include "cli/input.h"
#include "cli/symbolize_opt.h"

int symbolize_opt__add_dir(struct symbolize_opt *o, const char *dir)
{
	if (o->ndirs >= SYMBOLIZE_OPT_MAX_DIRS)
		return -E2BIG;
	o->dirs[o->ndirs++] = dir;
	o->on = true;
	return 0;
}

int symbolize_opt__parse(struct symbolize_opt *o, const char *cmd, int c, const char *arg,
			  char **argv)
{
	if (c == SYMBOLIZE_OPT_ON) {
		o->on = true;
		return 0;
	}
	if (c != SYMBOLIZE_OPT_DIR)
		return args__bad_option(cmd, c, argv);
	if (symbolize_opt__add_dir(o, arg))
		return log__usage_error(cmd, "at most %d --debug-dir", SYMBOLIZE_OPT_MAX_DIRS);
	return 0;
}

int symbolize_opt__apply(const struct symbolize_opt *o, const char *what, struct profile **p)
{
	struct resymbolize_stats st;
	struct profile *n = NULL;
	int err;

	if (!o->on)
		return 0;
	err = resymbolize__profile(*p, o->dirs, o->ndirs, &n, &st);
	if (err) {
		pr_err("%s: cannot symbolize: %s", what, strerror(-err));
		return err;
	}
	profile__free(*p);
	*p = n;
	if (st.mappings && !st.files_found)
		pr_warn("%s: --symbolize found none of the %llu files by build-id; install their "
			"debug packages or give --debug-dir DIR",
			what, (unsigned long long)st.mappings);
	else
		pr_info("%s: symbolized with %llu of %llu files: %llu frames named, %llu with "
			"lines",
			what, (unsigned long long)st.files_found, (unsigned long long)st.mappings,
			(unsigned long long)st.frames_named, (unsigned long long)st.frames_lined);
	return 0;
}

int symbolize_opt__load(const struct symbolize_opt *o, const char *path, const char *type,
			struct profile **out)
{
	struct profile *p = NULL, *sel = NULL;
	int err;

	*out = NULL;
	err = input__load(path, &(struct input_opts){0}, &p);
	if (err)
		return err; /* logged */
	err = symbolize_opt__apply(o, path, &p);
	if (!err)
		err = format__pick_type(p, type, true, &sel);
	if (err) {
		profile__free(p);
		return err;
	}
	if (sel) {
		profile__free(p);
		p = sel;
	}
	*out = p;
	return 0;
}
