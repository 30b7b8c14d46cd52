/* phpproc.h - is a process a PHP interpreter (the Zend Engine), which
 * version, and where is its executor's current frame: what the BPF walker
 * (bpf/php.h) and the user-space frame namer (symbolize/phpframes.h) need
 * to know of it. docs/php.md.
 *
 * Found from outside, from what a stripped build still exports (.dynsym:
 * executor_globals, execute_ex, zend_get_executed_lineno); PHP publishes
 * no description of its structures, so their offsets come from a table
 * per version, checked against the binary's own code and the live
 * process. Works through /proc/PID/root for other mount namespaces.
 */
#ifndef PROFCAP_PHPPROC_H
#define PROFCAP_PHPPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct procsnap;

/* Offsets (bytes) of one PHP version's structures (non-ZTS, x86-64). */
struct phpproc_layout {
	__u32 version;		       /* major << 8 | minor */
	__u32 call_top;		       /* ZEND_CALL_TOP in a frame's call info */
	__u16 eg_current_execute_data; /* zend_executor_globals.current_execute_data */
	__u16 ex_opline;	       /* zend_execute_data.opline */
	__u16 ex_func;		       /* .func */
	__u16 ex_call_info;	       /* .This.u1.type_info */
	__u16 ex_prev;		       /* .prev_execute_data */
	__u16 ex_size;		       /* sizeof(zend_execute_data) */
	__u16 fn_name;		       /* zend_function.common.function_name */
	__u16 fn_scope;		       /* .common.scope */
	__u16 op_last;		       /* zend_op_array.last (uint32) */
	__u16 op_opcodes;	       /* .opcodes */
	__u16 op_filename;	       /* .filename */
	__u16 op_line_start;	       /* .line_start (uint32) */
	__u16 op_line_end;	       /* .line_end (uint32) */
	__u16 op_size;		       /* sizeof(zend_op_array) */
	__u16 internal_size;	       /* sizeof(zend_internal_function) */
	__u16 zop_size;		       /* sizeof(zend_op) */
	__u16 zop_lineno;	       /* zend_op.lineno (uint32) */
	__u16 str_len;		       /* zend_string.len */
	__u16 str_val;		       /* zend_string.val */
	__u16 ce_name;		       /* zend_class_entry.name */
};

/* A process running PHP. */
struct phpproc {
	struct phpproc_layout layout;
	char version[16];	    /* "8.2.36" when known, else "8.2" */
	__u64 current_execute_data; /* address of executor_globals.current_execute_data */
	__u64 exec_lo, exec_hi;	    /* execute_ex's code, absolute: the executor's native frames */
};

/* The layout of PHP @major.@minor from the built-in table, NULL when
 * unknown. */
const struct phpproc_layout *phpproc__layout(unsigned major, unsigned minor);

/* The version a PHP file name carries: php8.2, php-fpm8.2, php-cgi8.2,
 * libphp8.2.so. 0 and *@major, *@minor; -ENOENT when it carries none
 * (php, libphp.so) or is not such a name. Pure. */
int phpproc__name_version(const char *base, unsigned *major, unsigned *minor);

/* Is @base the name of a PHP executable or library (php*, libphp*.so)?
 * Pure. */
bool phpproc__is_php_name(const char *base);

/* The version in the first @n bytes at @buf holding "X-Powered-By:
 * PHP/8.2.36" (the string every build carries): 0, "8.2.36" into @out
 * (@cap bytes) and the numbers; -ENOENT when absent. Pure. */
int phpproc__find_version(const char *buf, size_t n, char *out, size_t cap, unsigned *major,
			  unsigned *minor);

/* Does the x86-64 code at @code (@n bytes; zend_get_executed_lineno())
 * load a word at offset @off of a base register (mov disp32(%reg), %reg)?
 * The executor globals' current frame is the first thing it reads: a
 * table whose offset the code does not read is not this build's. Pure. */
bool phpproc__code_reads(const unsigned char *code, size_t n, __u32 off);

/* Find out whether process @pid (seen from @proc_root, NULL = "/proc")
 * runs PHP, from its snapshot @snap (NULL: read /proc/PID/maps): a mapped
 * libphp*.so, else the executable named php*. 0 and *@out filled; -ENOENT
 * not PHP; -ENOTSUP a PHP profcap cannot walk (an unknown version, a ZTS
 * build, a layout the binary or the process contradicts; logged once per
 * kind); other -errno when the process or its files could not be read. */
int phpproc__locate(const char *proc_root, int pid, const struct procsnap *snap,
		    struct phpproc *out);

/* The frame at @ex of process @pid checks out with @l: readable, and its
 * function (when it has one) of a known type. 0, -EINVAL, or -errno of
 * the read. */
int phpproc__check_frame(const char *proc_root, int pid, const struct phpproc_layout *l, __u64 ex);

#endif
