/* demangle.h - readable names for C++ (Itanium ABI) and Rust symbols.
 *
 * Wraps libiberty's demanglers (built by build.sh into libdemangle.a): Rust
 * (legacy "_ZN...17h<hash>E" and v0 "_R...") is tried first, because legacy
 * Rust names are also valid Itanium C++ names and would come out with the
 * hash as a path component; then C++. Names that are neither (C functions,
 * Go "main.f") are returned as NULL so callers keep the symbol as is.
 * Names longer than DEMANGLE_MAX_INPUT are not demangled: cp-demangle keeps
 * tables proportional to the name on the stack.
 */
#ifndef PROFCAP_DEMANGLE_H
#define PROFCAP_DEMANGLE_H

#include <stddef.h>

#define DEMANGLE_MAX_INPUT 4096

/* Demangled form of @mangled as a new malloc'd string owned by the caller,
 * or NULL when @mangled is not a C++/Rust mangled name, is too long, or on
 * allocation failure. */
char *demangle__name(const char *mangled);

#endif
