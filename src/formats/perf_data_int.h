/* perf_data_int.h - state shared by the perf.data reader's files:
 * perf_data.c (file header, attributes, feature sections, the driver) and
 * perf_data_rec.c (the data section's records).
 */
#ifndef PROFCAP_PERF_DATA_INT_H
#define PROFCAP_PERF_DATA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>

#include "formats/perf_data.h"
#include "model/profile.h"
#include "util/intern.h"

/* perf_event_attr.sample_type bits (uapi linux/perf_event.h). */
#define PD_S_IP (1ull << 0)
#define PD_S_TID (1ull << 1)
#define PD_S_TIME (1ull << 2)
#define PD_S_ADDR (1ull << 3)
#define PD_S_READ (1ull << 4)
#define PD_S_CALLCHAIN (1ull << 5)
#define PD_S_ID (1ull << 6)
#define PD_S_CPU (1ull << 7)
#define PD_S_PERIOD (1ull << 8)
#define PD_S_STREAM_ID (1ull << 9)
#define PD_S_RAW (1ull << 10)
#define PD_S_BRANCH_STACK (1ull << 11)
#define PD_S_REGS_USER (1ull << 12)
#define PD_S_STACK_USER (1ull << 13)
#define PD_S_IDENTIFIER (1ull << 16)

/* Record types (kernel's, then perf's own from 64). */
enum {
	PD_REC_MMAP = 1,
	PD_REC_LOST = 2,
	PD_REC_COMM = 3,
	PD_REC_EXIT = 4,
	PD_REC_FORK = 7,
	PD_REC_SAMPLE = 9,
	PD_REC_MMAP2 = 10,
	PD_REC_LOST_SAMPLES = 13,
	PD_REC_HEADER_ATTR = 64,
	PD_REC_HEADER_BUILD_ID = 67,
	PD_REC_FINISHED_ROUND = 68,
	PD_REC_HEADER_FEATURE = 80,
	PD_REC_COMPRESSED = 81,
	PD_REC_COMPRESSED2 = 83,
};

#define PD_MISC_COMM_EXEC (1u << 13)
#define PD_MISC_MMAP_DATA (1u << 13)
#define PD_MISC_MMAP_BUILD_ID (1u << 14)
#define PD_MISC_BUILD_ID_SIZE (1u << 15)

/* One event. */
struct pd_attr {
	__u32 type;
	__u64 config;
	__u64 sample_type, read_format, branch_sample_type, regs_user;
	__u64 period;
	bool freq, sample_id_all;
	char name[64];
	__u32 value_type; /* in the profile */
};

/* An executable mapping of process @pid (-1: the kernel's), valid from
 * @time in generation @gen of the process. */
struct pd_map {
	__s32 pid;
	__u32 gen;
	__u64 time, start, end, pgoff;
	__u32 path;	/* string index */
	__u32 bid;	/* string index of the MMAP2 build-id + 1, 0 = none */
};

/* A thread's name from @time on; @exec: set by an exec. */
struct pd_comm {
	__s32 tid, pid;
	__u64 time;
	__u32 name; /* string index */
	bool exec;
};

/* Process @pid was forked from @ppid at @time. */
struct pd_fork {
	__s32 pid, ppid;
	__u64 time;
};

struct pd_id {
	__u64 id;
	__u32 attr;
};

struct pd {
	const __u8 *data;
	size_t len;
	const struct perf_data_unwind_ops *uw;
	struct perf_data_stats *st;
	char *err;
	size_t errlen;
	struct profile *p;
	/* events */
	struct pd_attr attrs[PERF_DATA_MAX_ATTRS];
	unsigned int nattrs;
	struct pd_id *ids;
	size_t nids, ids_cap;
	bool ids_sorted;
	bool same_layout; /* every event has attrs[0]'s sample_type */
	bool use_time;	  /* every record carries a time: match by it */
	bool time_set;	  /* use_time decided (at the first side-band record) */
	/* the data section */
	__u64 data_off, data_size;
	/* strings (NUL-terminated), side-band tables */
	struct intern *strs;
	__u32 *bid_of; /* per string index: build-id string index + 1 */
	size_t bid_cap;
	struct pd_map *maps;
	size_t nmaps, maps_cap;
	struct pd_comm *comms;
	size_t ncomms, comms_cap;
	struct pd_fork *forks;
	size_t nforks, forks_cap;
	__u64 seq; /* record number: the time of records without one */
	__u64 t_first, t_last;
	bool have_time;
	bool have_clock; /* HEADER_CLOCK_DATA read: clock_off places sample times */
	__s64 clock_off; /* wall-clock minus sample-clock nanoseconds */
	/* per sample scratch */
	__u64 *ips;
	struct profile_frame *frames;
	struct profile_mapping_desc *mdesc;
};

/* Record the failure "@what at offset @off" in @pd->err; returns -EBADMSG. */
int pd__fail(struct pd *pd, __u64 off, const char *what);

/* Intern @len bytes of @s as a NUL-terminated string: 0 and *@idx, or
 * -errno. */
int pd__str(struct pd *pd, const char *s, size_t len, __u32 *idx);
const char *pd__get(const struct pd *pd, __u32 idx);

/* The build-id of file @path (a string index) from the header, or NULL. */
const char *pd__build_id(const struct pd *pd, __u32 path);
/* Remember @hex as the build-id of @path. 0 or -errno. */
int pd__set_build_id(struct pd *pd, __u32 path, const char *hex);

/* Take one event's attribute (@size bytes at @a, the first @ids ids at
 * @idv, 8 bytes each) as event @pd->nattrs. 0 or -errno (logged in err). */
int pd__add_attr(struct pd *pd, const __u8 *a, size_t size, const __u8 *idv, size_t nids,
		 __u64 off);

/* Feature section @bit (HEADER_*), @size bytes at @p. 0 or -errno. */
int pd__feature(struct pd *pd, unsigned int bit, const __u8 *p, size_t size);

/* One HEADER_BUILD_ID entry (@size bytes at @r, an event header first). */
int pd__build_id_rec(struct pd *pd, const __u8 *r, size_t size);

/* Read the data section's records: the side-band pass, then the samples.
 * 0 or -errno. */
int pd__records(struct pd *pd);

/* Native-endian reads at any alignment (the file was checked to be
 * little-endian, as this host). */
static inline __u64 rd64(const __u8 *p)
{
	__u64 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline __u32 rd32(const __u8 *p)
{
	__u32 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

#endif
