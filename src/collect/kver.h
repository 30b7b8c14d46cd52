/* kver.h - the running kernel's version, for the feature checks the
 * collectors make before they load or attach BPF programs.
 */
#ifndef PROFCAP_COLLECT_KVER_H
#define PROFCAP_COLLECT_KVER_H

#include <stdbool.h>

/* True when uname(2) reports a release of at least @major.@minor; false
 * when it does not, or when the release string cannot be read. */
bool kver__at_least(int major, int minor);

#endif
