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

# ... or in a library: TLSDESC (gnu2) and general dynamic (gnu) builds of
# one SDK-like library, linked at start or dlopen()ed by the writer.
TCTX_DIR := $(BUILD)/tests/workloads
TCTX_BINS := $(addprefix $(TCTX_DIR)/,libotelctx_desc.so libotelctx_gd.so \
	threadctx_writer_desc threadctx_writer_gd threadctx_writer_dl)
$(TCTX_DIR)/libotelctx_%.so: TLS_DIALECT = $(if $(filter desc,$*),gnu2,gnu)
$(TCTX_DIR)/libotelctx_%.so: tests/workloads/lib/otelctx_lib.c tests/workloads/workloads.mk
	@mkdir -p $(@D)
	gcc -O2 -g -Wall -Wextra -Werror -fPIC -shared -mtls-dialect=$(TLS_DIALECT) \
		-Wl,-soname,libotelctx_$*.so -o $@ $<
$(TCTX_DIR)/threadctx_writer_desc $(TCTX_DIR)/threadctx_writer_gd: $(TCTX_DIR)/threadctx_writer_%: \
		tests/workloads/threadctx_writer.c tests/workloads/lib/burn.h $(TCTX_DIR)/libotelctx_%.so
	gcc $(WORKLOAD_CFLAGS) -DCTX_LINKED -o $@ $< -L$(@D) -lotelctx_$* -Wl,-rpath,'$$ORIGIN'
$(TCTX_DIR)/threadctx_writer_dl: tests/workloads/threadctx_writer.c tests/workloads/lib/burn.h
	gcc $(WORKLOAD_CFLAGS) -DCTX_DLOPEN -o $@ $< -ldl

TEST_DEPS += $(WORKLOAD_BINS) $(NOFP_BINS) $(TCTX_BINS)
$(BUILD)/tests/test_cfi: | $(NOFP_BINS)

# C++ workload (mangled names); Rust and Go workloads are built by
# tests/e2e/test_symbols.py itself (rustc may be missing; go needs a cache).
$(BUILD)/tests/workloads/cxxwork: tests/workloads/cxx/cxxwork.cpp
	@mkdir -p $(@D)
	g++ -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -o $@ $<

TEST_DEPS += $(BUILD)/tests/workloads/cxxwork
