# workloads.mk - ground-truth workloads for the end-to-end tests, built with
# the system compiler (ordinary dynamic glibc binaries) and frame pointers.
# nofp_main and its libnofp.so are built WITHOUT frame pointers (as
# distributions build) for the table unwinder; fp_main is the same source
# with frame pointers, called back from the no-FP library.
WORKLOAD_SRCS := $(filter-out tests/workloads/nofp_main.c,$(wildcard tests/workloads/*.c))
WORKLOAD_BINS := $(WORKLOAD_SRCS:tests/workloads/%.c=$(BUILD)/tests/workloads/%)
WORKLOAD_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls -pthread -Wall -Wextra -Werror
# No frame pointers; sibling calls off so that every chain frame exists.
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -Wall -Wextra -Werror
NOFP_BINS := $(addprefix $(BUILD)/tests/workloads/,libnofp.so nofp_main fp_main)

$(BUILD)/tests/workloads/%: tests/workloads/%.c tests/workloads/lib/burn.h
	@mkdir -p $(@D)
	gcc $(WORKLOAD_CFLAGS) -o $@ $<

$(BUILD)/tests/workloads/libnofp.so: tests/workloads/lib/nofp_lib.c tests/workloads/workloads.mk
	@mkdir -p $(@D)
	gcc $(NOFP_CFLAGS) -fPIC -shared -Wl,-soname,libnofp.so -o $@ $<

$(BUILD)/tests/workloads/nofp_main: tests/workloads/nofp_main.c tests/workloads/lib/burn.h $(BUILD)/tests/workloads/libnofp.so
	gcc $(NOFP_CFLAGS) -o $@ $< -L$(@D) -lnofp -Wl,-rpath,'$$ORIGIN'

$(BUILD)/tests/workloads/fp_main: tests/workloads/nofp_main.c tests/workloads/lib/burn.h $(BUILD)/tests/workloads/libnofp.so
	gcc $(WORKLOAD_CFLAGS) -o $@ $< -L$(@D) -lnofp -Wl,-rpath,'$$ORIGIN'

# OTEP 4947: the thread-context TLS variable must be in .dynsym.
$(BUILD)/tests/workloads/threadctx_writer: WORKLOAD_CFLAGS += -Wl,--export-dynamic-symbol=otel_thread_ctx_v1

TEST_DEPS += $(WORKLOAD_BINS) $(NOFP_BINS)
$(BUILD)/tests/test_cfi: | $(NOFP_BINS)

# C++ workload (mangled names); Rust and Go workloads are built by
# tests/e2e/test_symbols.py itself (rustc may be missing; go needs a cache).
$(BUILD)/tests/workloads/cxxwork: tests/workloads/cxx/cxxwork.cpp
	@mkdir -p $(@D)
	g++ -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -o $@ $<

TEST_DEPS += $(BUILD)/tests/workloads/cxxwork
