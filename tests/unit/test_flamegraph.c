#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "formats/flamegraph.h"
#include "model/profile.h"
#include "test.h"

static const struct profile_mapping_desc map_app = {0x400000, 0x500000, 0, "/usr/bin/app", NULL, 0};
static const struct profile_mapping_desc map_k = {0xffffffff81000000ull, 0xffffffff82000000ull, 0,
						  "[kernel.kallsyms]", NULL, 0};
static const struct profile_process_desc app = {100, "app", "/usr/bin/app", NULL, NULL};
static const struct profile_process_desc other = {200, "other", "/usr/bin/other", NULL, NULL};

static struct profile_frame fr(const char *fn, __u64 addr)
{
	struct profile_frame f = {addr, &map_app, fn, PROFILE_FRAME_NATIVE, NULL, NULL, 0};

	return f;
}

/* app: [f f g main] x3, [h main] x1, [k_func f main] x2; other: [x] x6. */
static struct profile *model(void)
{
	struct profile *p = profile__new();
	struct profile_frame s1[] = {fr("f", 0x400010), fr("f", 0x400014), fr("g", 0x400020),
				     fr("main", 0x400030)};
	struct profile_frame s2[] = {fr("h", 0x400040), fr("main", 0x400034)};
	struct profile_frame s3[] = {
		{0xffffffff81000100ull, &map_k, "k_func", PROFILE_FRAME_KERNEL, NULL, NULL, 0},
		fr("f", 0x400018),
		fr("main", 0x400038)};
	struct profile_frame s4[] = {{0x400050, &map_app, "x", PROFILE_FRAME_NATIVE, "v8js", NULL, 0}};

	if (!p)
		return NULL;
	if (profile__add_sample(p, &app, 101, "main-t", s1, 4, 3) ||
	    profile__add_sample(p, &app, 102, "work-t", s2, 2, 1) ||
	    profile__add_sample(p, &app, 101, "main-t", s3, 3, 2) ||
	    profile__add_sample(p, &other, 200, "other", s4, 1, 6)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

/* ---- a tiny XML well-formedness check --------------------------------------------- */

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == ':' || c == '.';
}

/* Character data or an attribute value up to @end: '<' never, '&' only as
 * one of the five entities. */
static bool chars_ok(const char *s, const char *end)
{
	static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
	size_t i;

	for (; s < end; s++) {
		if (*s == '<' || (unsigned char)*s < 0x09)
			return false;
		if (*s != '&')
			continue;
		for (i = 0; i < 5; i++)
			if (!strncmp(s, ent[i], strlen(ent[i])))
				break;
		if (i == 5)
			return false;
	}
	return true;
}

/* Tags balance, attributes are quoted, text is escaped; one root element. */
static bool well_formed(const char *doc)
{
	const char *stack[64], *s = doc, *e, *q;
	size_t len[64], depth = 0, n, roots = 0;

	if (!strncmp(s, "<?xml", 5))
		s = strstr(s, "?>") + 2;
	while (*s) {
		if (*s != '<') {
			e = strchr(s, '<');
			e = e ? e : s + strlen(s);
			if (!chars_ok(s, e) || (!depth && strspn(s, " \n") != (size_t)(e - s)))
				return false;
			s = e;
			continue;
		}
		if (!strncmp(s, "<![CDATA[", 9)) {
			e = strstr(s, "]]>");
			if (!e || !depth)
				return false;
			s = e + 3;
			continue;
		}
		if (s[1] == '/') {
			for (n = 0; is_name_char(s[2 + n]); n++)
				;
			if (!depth || s[2 + n] != '>' || len[depth - 1] != n ||
			    strncmp(stack[depth - 1], s + 2, n))
				return false;
			depth--;
			s += n + 3;
			continue;
		}
		for (n = 0; is_name_char(s[1 + n]); n++)
			;
		if (!n || depth == 64)
			return false;
		stack[depth] = s + 1;
		len[depth] = n;
		s += 1 + n;
		for (;;) { /* attributes */
			s += strspn(s, " \n");
			if (*s == '>' || !strncmp(s, "/>", 2))
				break;
			while (is_name_char(*s))
				s++;
			if (*s != '=' || s[1] != '"')
				return false;
			q = strchr(s + 2, '"');
			if (!q || !chars_ok(s + 2, q))
				return false;
			s = q + 1;
		}
		if (!depth)
			roots++;
		if (*s == '/') {
			s += 2;
			continue;
		}
		depth++;
		s++;
	}
	return !depth && roots == 1;
}

/* ---- frames of a rendered SVG ------------------------------------------------------ */

struct frame {
	unsigned long long x, v;
	unsigned d;
	char name[64];
	double rx, rw; /* rect x and width */
	unsigned fill[3];
};

/* The @nth frame named @name in @svg (0 = first), or false. */
static bool find_frame(const char *svg, const char *name, int nth, struct frame *f)
{
	const char *s = svg;
	char title[80];
	size_t tl;

	tl = (size_t)snprintf(title, sizeof(title), "<title>%s\n", name);
	while ((s = strstr(s, "<g class=\"f\" "))) {
		const char *t = strstr(s, "<title>");

		if (t && !strncmp(t, title, tl) && nth-- == 0) {
			memset(f, 0, sizeof(*f));
			if (sscanf(s,
				   "<g class=\"f\" data-x=\"%llu\" data-v=\"%llu\" data-d=\"%u\">",
				   &f->x, &f->v, &f->d) != 3)
				return false;
			snprintf(f->name, sizeof(f->name), "%s", name);
			t = strstr(t, "<rect x=\"");
			return t &&
			       sscanf(t,
				      "<rect x=\"%lf\" y=\"%*u\" width=\"%lf\" height=\"%*u\" "
				      "fill=\"rgb(%u,%u,%u)\"/>",
				      &f->rx, &f->rw, &f->fill[0], &f->fill[1], &f->fill[2]) == 5;
		}
		s++;
	}
	return false;
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;

	while ((s = strstr(s, needle))) {
		n++;
		s++;
	}
	return n;
}

static char *render(const struct profile *p, const struct flamegraph_opts *o)
{
	struct buf b;

	buf__init(&b, 16 << 20);
	if (flamegraph__render(p, o, &b) || buf__append(&b, "", 1)) {
		buf__release(&b);
		return NULL;
	}
	return (char *)b.data;
}

#define SCALE (1180.0 / 12) /* px per sample: 1200 px minus margins, 12 samples */

TEST(tree_and_widths)
{
	struct profile *p = model();
	struct frame f;
	char *svg;

	CHECK(p);
	svg = render(p, NULL);
	CHECK(svg);
	CHECK(well_formed(svg));
	CHECK(!strncmp(svg, "<?xml", 5));
	CHECK(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	CHECK(!strstr(svg, "href")); /* nothing external */
	CHECK(find_frame(svg, "all", 0, &f));
	CHECK(f.v == 12 && f.x == 0 && f.d == 0);
	CHECK(find_frame(svg, "app", 0, &f));
	CHECK(f.v == 6 && f.x == 0 && f.d == 1);
	CHECK(find_frame(svg, "other", 0, &f));
	CHECK(f.v == 6 && f.x == 6 && f.d == 1);
	CHECK(find_frame(svg, "main", 0, &f));
	CHECK(f.v == 6 && f.d == 2);
	/* Children of main sorted by name: f (2), g (3), h (1). */
	CHECK(find_frame(svg, "f", 0, &f));
	CHECK(f.v == 2 && f.x == 0 && f.d == 3);
	CHECK(f.rw > 2 * SCALE - 0.1 && f.rw < 2 * SCALE + 0.1);
	CHECK(find_frame(svg, "g", 0, &f));
	CHECK(f.v == 3 && f.x == 2 && f.d == 3);
	CHECK(f.rx > 10 + 2 * SCALE - 0.1 && f.rx < 10 + 2 * SCALE + 0.1);
	CHECK(f.rw > 3 * SCALE - 0.1 && f.rw < 3 * SCALE + 0.1);
	CHECK(find_frame(svg, "h", 0, &f));
	CHECK(f.v == 1 && f.x == 5);
	/* Recursion: f under g, f under that f. */
	CHECK(find_frame(svg, "f", 1, &f));
	CHECK(f.v == 3 && f.d == 4);
	CHECK(find_frame(svg, "f", 2, &f));
	CHECK(f.v == 3 && f.d == 5);
	CHECK(find_frame(svg, "k_func", 0, &f));
	CHECK(f.v == 2 && f.d == 4);
	CHECK(strstr(svg, "<title>k_func\n2 samples, 16.67% of all, type kernel</title>"));
	CHECK(count(svg, "<g class=\"f\"") == 11);
	free(svg);
	profile__free(p);
}

TEST(colours_by_type)
{
	struct profile *p = model();
	struct frame k, n, j;
	char *svg, *again;

	CHECK(p);
	svg = render(p, NULL);
	again = render(p, NULL);
	CHECK(svg && again);
	CHECK(!strcmp(svg, again)); /* deterministic */
	CHECK(find_frame(svg, "k_func", 0, &k));
	CHECK(find_frame(svg, "main", 0, &n));
	CHECK(find_frame(svg, "x", 0, &j));
	CHECK(k.fill[0] >= 230 && k.fill[1] >= 145);			 /* orange */
	CHECK(n.fill[0] >= 195 && n.fill[1] <= 100);			 /* red */
	CHECK(j.fill[0] >= 215 && j.fill[1] >= 195 && j.fill[2] <= 90);	 /* yellow */
	CHECK(strstr(svg, "type v8js</title>"));
	/* The legend names the families drawn, and no other. */
	CHECK(strstr(svg, ">kernel</text>") && strstr(svg, ">native</text>"));
	CHECK(strstr(svg, ">v8js</text>") && strstr(svg, ">process</text>"));
	CHECK(!strstr(svg, ">cpython</text>") && !strstr(svg, ">jvm</text>"));
	free(svg);
	free(again);
	profile__free(p);
}

TEST(inverted)
{
	struct profile *p = model();
	struct flamegraph_opts o = {.inverted = true};
	struct frame f;
	char *svg;

	CHECK(p);
	svg = render(p, &o);
	CHECK(svg);
	CHECK(well_formed(svg));
	/* Leaves first under the process: f (3), h (1), k_func (2). */
	CHECK(find_frame(svg, "f", 0, &f));
	CHECK(f.v == 3 && f.d == 2 && f.x == 0);
	CHECK(find_frame(svg, "h", 0, &f));
	CHECK(f.v == 1 && f.d == 2 && f.x == 3);
	CHECK(find_frame(svg, "k_func", 0, &f));
	CHECK(f.v == 2 && f.d == 2 && f.x == 4);
	/* Callers below: f <- f <- g <- main. */
	CHECK(find_frame(svg, "f", 1, &f));
	CHECK(f.v == 3 && f.d == 3);
	CHECK(find_frame(svg, "g", 0, &f));
	CHECK(f.v == 3 && f.d == 4);
	CHECK(strstr(svg, "inverted"));
	free(svg);
	profile__free(p);
}

TEST(escaping_and_title)
{
	struct profile *p = profile__new();
	struct profile_frame f[] = {fr("a<b>&\"c'\x01\xff", 0x400100), fr("ok", 0x400200)};
	struct flamegraph_opts o = {.title = "T <&> \"x\""};
	char *svg;

	CHECK(p);
	CHECK(!profile__add_sample(p, &app, 7, NULL, f, 2, 1));
	svg = render(p, &o);
	CHECK(svg);
	CHECK(well_formed(svg));
	CHECK(strstr(svg, "<title>a&lt;b&gt;&amp;&quot;c&apos;\xef\xbf\xbd\xef\xbf\xbd\n"));
	CHECK(strstr(svg, ">T &lt;&amp;&gt; &quot;x&quot;</text>"));
	free(svg);
	profile__free(p);
}

TEST(text_is_truncated_to_fit)
{
	struct profile *p = profile__new();
	struct profile_frame wide[] = {fr("a_rather_long_function_name_that_cannot_fit", 0x400100)};
	struct profile_frame thin[] = {fr("short", 0x400200)};
	struct flamegraph_opts o = {.width = 1200};
	char *svg;

	CHECK(p);
	CHECK(!profile__add_sample(p, &app, 7, NULL, wide, 1, 95));
	CHECK(!profile__add_sample(p, &app, 7, NULL, thin, 1, 5));
	svg = render(p, &o);
	CHECK(svg);
	/* 95% of 1180 px holds the name; 5% (59 px) holds 7 characters. */
	CHECK(strstr(svg, ">a_rather_long_function_name_that_cannot_fit</text>"));
	CHECK(strstr(svg, ">short</text>"));
	free(svg);
	o.width = 200; /* 180 px: 171 px and 9 px */
	svg = render(p, &o);
	CHECK(svg);
	CHECK(strstr(svg, ">a_rather_long_functi..</text>"));
	CHECK(strstr(svg, "\"></text></g>")); /* too thin for text */
	free(svg);
	profile__free(p);
}

TEST(narrow_frames_are_dropped_and_counted)
{
	struct profile *p = profile__new();
	struct profile_frame big[] = {fr("big", 0x400100), fr("main", 0x400000)};
	struct profile_frame tiny[] = {fr("tiny_leaf", 0x400300), fr("tiny", 0x400200),
				       fr("main", 0x400000)};
	char *svg;

	CHECK(p);
	CHECK(!profile__add_sample(p, &app, 7, NULL, big, 2, 200000));
	CHECK(!profile__add_sample(p, &app, 7, NULL, tiny, 3, 1));
	svg = render(p, NULL);
	CHECK(svg);
	CHECK(well_formed(svg));
	CHECK(strstr(svg, "<title>big\n"));
	CHECK(!strstr(svg, "<title>tiny"));
	CHECK(strstr(svg, "; 2 frames narrower than 0.1 px not drawn"));
	CHECK(strstr(svg, "<title>main\n200001 samples"));
	free(svg);
	profile__free(p);
}

/* A deep stack under 1 px wide does not make the graph taller: its frames
 * past the height are drawn hidden, for a zoom to show. */
TEST(height_of_the_wide_frames)
{
	struct profile *p = profile__new();
	struct profile_frame big[] = {fr("big", 0x400100), fr("main", 0x400000)};
	struct profile_frame deep[] = {fr("e", 0x400500), fr("d", 0x400400), fr("c", 0x400300),
				       fr("b", 0x400200), fr("main", 0x400000)};
	char *svg, *e;

	CHECK(p);
	CHECK(!profile__add_sample(p, &app, 7, NULL, big, 2, 9995));
	CHECK(!profile__add_sample(p, &app, 7, NULL, deep, 5, 5)); /* 0.59 px */
	svg = render(p, NULL);
	CHECK(svg);
	CHECK(well_formed(svg));
	/* all, app, main, big: 4 rows */
	CHECK(strstr(svg, "height=\"162\" viewBox"));
	CHECK(strstr(svg, "data-d=\"3\"><title>b\n")); /* at the top row, shown */
	e = strstr(svg, "data-d=\"6\" style=\"display:none\"><title>e\n");
	CHECK(e);
	free(svg);
	profile__free(p);
}

TEST(pid_filter_and_empty)
{
	struct profile *p = model();
	struct flamegraph_opts o = {.filter_pid = true, .pid = 200};
	struct frame f;
	char *svg;

	CHECK(p);
	svg = render(p, &o);
	CHECK(svg);
	CHECK(find_frame(svg, "all", 0, &f));
	CHECK(f.v == 6);
	CHECK(!strstr(svg, "<title>app"));
	CHECK(strstr(svg, "pid 200 only"));
	free(svg);
	o.pid = 999;
	svg = render(p, &o);
	CHECK(svg);
	CHECK(well_formed(svg));
	CHECK(strstr(svg, "No samples to draw"));
	CHECK(!count(svg, "<g class=\"f\""));
	free(svg);
	profile__free(p);
}

TEST(output_cap)
{
	struct profile *p = model();
	struct buf b;

	CHECK(p);
	buf__init(&b, 1000);
	CHECK(flamegraph__render(p, NULL, &b) == -E2BIG);
	buf__release(&b);
	profile__free(p);
}

/* Three "app" processes, one without a name: one "app" tower by default,
 * one tower per process with per_pid. */
TEST(processes_merge_by_executable)
{
	const struct profile_process_desc app2 = {300, "app", "/usr/bin/app", NULL, NULL};
	const struct profile_process_desc anon = {400, NULL, NULL, NULL, NULL};
	struct profile *p = model();
	struct flamegraph_opts o = {.per_pid = true};
	struct profile_frame s[] = {fr("h", 0x400040), fr("main", 0x400034)};
	struct frame f;
	char *svg;

	CHECK(p);
	CHECK(!profile__add_sample(p, &app2, 301, "w", s, 2, 4));
	CHECK(!profile__add_sample(p, &anon, 401, "w", s, 2, 1));
	svg = render(p, NULL);
	CHECK(svg);
	CHECK(find_frame(svg, "app", 0, &f));
	CHECK(f.v == 10 && f.d == 1);
	CHECK(!find_frame(svg, "app", 1, &f));
	CHECK(strstr(svg, "<title>app\n10 samples, 58.82% of all, type process, 2 processes"));
	/* Towers by name ("[pid 400]" first); h of both app processes is one
	 * frame under the one main. */
	CHECK(find_frame(svg, "h", 0, &f) && f.v == 1);
	CHECK(find_frame(svg, "h", 1, &f) && f.v == 5 && !find_frame(svg, "h", 2, &f));
	CHECK(find_frame(svg, "[pid 400]", 0, &f) && f.v == 1);
	CHECK(strstr(svg, ", 4 processes of 3 programs"));
	free(svg);
	svg = render(p, &o);
	CHECK(svg);
	CHECK(find_frame(svg, "app [100]", 0, &f) && f.v == 6);
	CHECK(find_frame(svg, "app [300]", 0, &f) && f.v == 4);
	CHECK(find_frame(svg, "other [200]", 0, &f));
	CHECK(!strstr(svg, "programs"));
	free(svg);
	profile__free(p);
}

/* Python frames (no mapping, no address; function, file and line): their
 * own colour family and legend entry, their source in the tooltip, and
 * never "0x0" or "[unknown]". */
TEST(interpreter_frames)
{
	static const struct profile_line l_handle = {"handle", NULL, "/srv/app.py", 10, 42, 0};
	static const struct profile_line l_run = {"run", NULL, "/srv/app.py", 3, 7, 0};
	static const struct profile_line l_anon = {NULL, NULL, "/srv/lib.py", 0, 9, 0};
	struct profile *p = profile__new();
	struct profile_frame s[] = {
		{0, NULL, NULL, PROFILE_FRAME_NATIVE, "cpython", NULL, &l_anon, 1},
		{0, NULL, "handle", PROFILE_FRAME_NATIVE, "cpython", NULL, &l_handle, 1},
		{0, NULL, "run", PROFILE_FRAME_NATIVE, "cpython", NULL, &l_run, 1},
		fr("main", 0x400030),
	};
	struct frame f, n;
	char *svg;

	CHECK(p);
	CHECK(!profile__add_sample(p, &app, 101, "t", s, 4, 5));
	svg = render(p, NULL);
	CHECK(svg);
	CHECK(well_formed(svg));
	CHECK(find_frame(svg, "handle", 0, &f) && f.d == 4);
	CHECK(find_frame(svg, "main", 0, &n));
	CHECK(f.fill[2] >= 205 && f.fill[0] <= 110); /* blue, not native red */
	CHECK(strstr(svg, "<title>handle\n5 samples, 100.00% of all, type cpython\n"
			  "/srv/app.py:42</title>"));
	CHECK(find_frame(svg, "/srv/lib.py:9", 0, &f) && f.d == 5);
	CHECK(strstr(svg, ">cpython</text>") && strstr(svg, ">native</text>"));
	CHECK(!strstr(svg, ">kernel</text>"));
	CHECK(!strstr(svg, "0x0") && !strstr(svg, "[unknown]"));
	/* As tall as the deepest stack: all, app, main, run, handle, lib.py. */
	CHECK(strstr(svg, "height=\"194\" viewBox"));
	free(svg);
	profile__free(p);
}

/* Without a width the script fits the window; with one it stays. */
TEST(width_follows_window_unless_given)
{
	struct profile *p = model();
	struct flamegraph_opts o = {.width = 900};
	char *svg;

	CHECK(p);
	svg = render(p, NULL);
	CHECK(svg && strstr(svg, "data-fixed=\"0\"") && strstr(svg, "width=\"1200\""));
	free(svg);
	svg = render(p, &o);
	CHECK(svg && strstr(svg, "data-fixed=\"1\"") && strstr(svg, "width=\"900\""));
	free(svg);
	profile__free(p);
}

TEST(checker_rejects_bad_xml)
{
	CHECK(well_formed("<a><b x=\"1\"/>t &amp; u</a>"));
	CHECK(!well_formed("<a><b></a>"));
	CHECK(!well_formed("<a>x < y</a>"));
	CHECK(!well_formed("<a>x & y</a>"));
	CHECK(!well_formed("<a t=\"<\"></a>"));
	CHECK(!well_formed("<a></a><b></b>"));
}

int main(void)
{
	RUN(tree_and_widths);
	RUN(colours_by_type);
	RUN(inverted);
	RUN(escaping_and_title);
	RUN(text_is_truncated_to_fit);
	RUN(narrow_frames_are_dropped_and_counted);
	RUN(height_of_the_wide_frames);
	RUN(pid_filter_and_empty);
	RUN(output_cap);
	RUN(processes_merge_by_executable);
	RUN(interpreter_frames);
	RUN(width_follows_window_unless_given);
	RUN(checker_rejects_bad_xml);
	return TEST_DONE();
}
