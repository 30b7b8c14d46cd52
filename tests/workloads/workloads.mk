# workloads.mk - ground-truth workloads for the end-to-end tests, built with
# the system compiler (ordinary dynamic glibc binaries) and frame pointers.
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOAD_BINS := $(WORKLOAD_SRCS:tests/workloads/%.c=$(BUILD)/tests/workloads/%)
WORKLOAD_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls -pthread -Wall -Wextra -Werror

$(BUILD)/tests/workloads/%: tests/workloads/%.c
	@mkdir -p $(@D)
	gcc $(WORKLOAD_CFLAGS) -o $@ $<

TEST_DEPS += $(WORKLOAD_BINS)
