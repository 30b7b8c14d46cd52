/* version.h - the profcap release number, reported by --version and in the
 * OTLP instrumentation scope. */
#ifndef PROFCAP_VERSION_H
#define PROFCAP_VERSION_H

#define PROFCAP_VERSION "0.1.0"

#endif
