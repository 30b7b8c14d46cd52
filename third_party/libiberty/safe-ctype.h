/* safe-ctype.h - locale-independent ASCII character classes for the
 * demanglers (profcap's own replacement for libiberty's safe-ctype).
 *
 * rust-demangle.c includes "safe-ctype.h" for ISALNUM/ISDIGIT/ISLOWER/
 * ISUPPER. libiberty's version needs safe-ctype.c, which is plain
 * LGPL-2.0+ without the linking exception that cp-demangle.c and
 * rust-demangle.c carry; these macros replace both (third_party/
 * libiberty.mk puts this directory first on the include path). They are
 * plain range tests on the character's value: no table, no locale.
 */
#ifndef PROFCAP_SAFE_CTYPE_H
#define PROFCAP_SAFE_CTYPE_H

#define PC_CH_(c) ((unsigned char)(c))
#define ISDIGIT(c) (PC_CH_(c) >= '0' && PC_CH_(c) <= '9')
#define ISLOWER(c) (PC_CH_(c) >= 'a' && PC_CH_(c) <= 'z')
#define ISUPPER(c) (PC_CH_(c) >= 'A' && PC_CH_(c) <= 'Z')
#define ISALPHA(c) (ISLOWER(c) || ISUPPER(c))
#define ISALNUM(c) (ISALPHA(c) || ISDIGIT(c))
#define ISXDIGIT(c)                                                    \
	(ISDIGIT(c) || (PC_CH_(c) >= 'a' && PC_CH_(c) <= 'f') ||       \
	 (PC_CH_(c) >= 'A' && PC_CH_(c) <= 'F'))
#define ISSPACE(c)                                                     \
	(PC_CH_(c) == ' ' || (PC_CH_(c) >= '\t' && PC_CH_(c) <= '\r'))
#define ISIDST(c) (ISALPHA(c) || PC_CH_(c) == '_')
#define ISIDNUM(c) (ISALNUM(c) || PC_CH_(c) == '_')
#define TOLOWER(c) (ISUPPER(c) ? PC_CH_(c) - 'A' + 'a' : PC_CH_(c))
#define TOUPPER(c) (ISLOWER(c) ? PC_CH_(c) - 'a' + 'A' : PC_CH_(c))

#endif
