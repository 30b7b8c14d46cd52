/* id.h - random identifiers (profile ids): 16 bytes from getrandom(), never
 * all zero (OTLP reads an all-zero id as "no id").
 */
#ifndef PROFCAP_UTIL_ID_H
#define PROFCAP_UTIL_ID_H

#include <linux/types.h>

/* Fill @id with random bytes; when the kernel cannot give any, a mix of the
 * time and the pid (unique enough for one host). Never all zero. */
void id__random(__u8 id[16]);

#endif
