// SPDX-License-Identifier: GPL-2.0
/* cpu_sampler_tw.bpf.c - the sampler's BPF object with off-CPU task works
 * (Linux >= 6.18, see offcpu_bpf.h): the same source, maps, programs and
 * globals as cpu_sampler.bpf.c, plus the kfunc call. Opened in its place
 * (sampler.c) only for --off-cpu on a kernel that has task works. */
#define PROFCAP_TASKWORK 1
#include "cpu_sampler.bpf.c"
