// SPDX-License-Identifier: GPL-2.0
/* threadctx.bpf.c - the thread-context globals and process table
 * (threadctx.bpf.h), filled by user space. */
#include "threadctx.bpf.h"

const volatile __u32 want_threadctx = 0;
__u64 tctx_fsbase_off = 0;
__u32 tctx_nprocs = 0;

struct threadctx_procs_map threadctx_procs SEC(".maps");
