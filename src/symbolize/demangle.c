#include <stdlib.h>
#include <string.h>

/* libiberty.h (included by demangle.h) would declare basename() itself. */
#define HAVE_DECL_BASENAME 1
#include <libiberty/demangle.h>

#include "symbolize/demangle.h"

/* "_ZN" legacy Rust / C++, "_R" Rust v0 (also "__R", "R" on some targets,
 * and "__Z" on Mach-O: not ELF, not handled). */
static int looks_mangled(const char *s)
{
	return (s[0] == '_' && (s[1] == 'Z' || s[1] == 'R')) || !strncmp(s, "__R", 3);
}

char *demangle__name(const char *mangled)
{
	char *out;

	if (!mangled || !looks_mangled(mangled) ||
	    strnlen(mangled, DEMANGLE_MAX_INPUT + 1) > DEMANGLE_MAX_INPUT)
		return NULL;
	/* rust_demangle() refuses C++ names that are not legacy Rust ones (no
	 * trailing 17h<16 hex digits>E component), so trying it first is
	 * safe. */
	out = rust_demangle(mangled, DMGL_PARAMS | DMGL_ANSI);
	if (out)
		return out;
	if (mangled[1] != 'Z')
		return NULL;
	return cplus_demangle_v3(mangled, DMGL_PARAMS | DMGL_ANSI);
}
