# Makefile - builds profcap as one static musl binary, and its unit tests.
#
# Needs the third-party libraries in deps/ (run ./build.sh once; it builds
# them and then runs make). Outputs go to build/ only:
#   build/gen/     nanopb code generated from nanopb_protos/**/*.proto
#   build/bpf/     BPF objects and bpftool skeletons (<name>.skel.h)
#   build/obj/     objects of src/, nanopb runtime, generated code, tests
#   build/lib/     one static archive per layer of src/ (libutil.a, ...),
#                  libpb.a (nanopb runtime + generated code); the binary,
#                  unit tests, fuzzers and benchmarks all link these
#   build/profcap  stripped binary (build/profcap.debug keeps the symbols)
#   build/tests/   unit test binaries, one per tests/unit/test_*.c
#
#   build/fuzz/    `make fuzz`: sanitizer builds (clang, glibc) of the pure
#                  layers as archives (build/fuzz/lib/) and one libFuzzer
#                  binary per scripts/fuzz/fuzz_<name>.c (build/fuzz/<name>)
#
# Targets: all (default), profcap, tests, test, fuzz, clean, distclean.
#
# Build switches (make VAR=value ...; build/config records the last ones, and
# a change rebuilds only what they select):
#   ALLOC=profcap     malloc, free, calloc, realloc, the aligned variants:
#                     util/heap.c (default), or
#   ALLOC=mimalloc    mimalloc (deps/prefix/lib/libmimalloc.a, from build.sh), or
#   ALLOC=libc        musl's own malloc
#   SORT=profcap      qsort(): util/sort.c (default), or
#   SORT=libc         musl's qsort()
#   HUGE_PAGES=off    large buffers (pages__map_huge(), pages__huge()) stay on
#                     4 KiB pages (default), or
#   HUGE_PAGES=on     ask for transparent huge pages for them (MADV_HUGEPAGE)
# What a switch does not select is neither compiled nor linked.
# scripts/bench/alloc_bench.sh compares the variants.

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:

BUILD := build
DEPS := deps
PREFIX := $(DEPS)/prefix
UAPI := $(DEPS)/uapi
NANOPB_DIR := $(PREFIX)/nanopb

CC := musl-gcc
AR := ar
CLANG := clang
LLVM_STRIP := llvm-strip
STRIP := strip
BPFTOOL := $(or $(shell command -v bpftool 2>/dev/null),/usr/sbin/bpftool)
# Debian's python3 has the protobuf module; a python3 earlier on PATH may not.
PYTHON := /usr/bin/python3
NANOPB_GEN := /usr/bin/nanopb_generator.py

CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Werror -fno-omit-frame-pointer \
	-ffunction-sections -fdata-sections -D_GNU_SOURCE -DPB_FIELD_32BIT \
	-DCURL_STATICLIB -Isrc -Ibpf -I$(BUILD)/gen -I$(BUILD)/bpf \
	-I$(PREFIX)/include -I$(NANOPB_DIR) -idirafter $(UAPI)

ALLOC ?= profcap
SORT ?= profcap
HUGE_PAGES ?= off
ifeq ($(filter $(ALLOC),profcap mimalloc libc),)
$(error ALLOC=$(ALLOC): use profcap, mimalloc or libc)
endif
ifeq ($(filter $(SORT),profcap libc),)
$(error SORT=$(SORT): use profcap or libc)
endif
ifeq ($(filter $(HUGE_PAGES),off on),)
$(error HUGE_PAGES=$(HUGE_PAGES): use off or on)
endif
# The sources each value selects; util/heap_extern.c gives heap.h's API
# over an allocator profcap does not own.
ALLOC_SRC_profcap := src/util/heap.c
ALLOC_SRC_mimalloc := src/util/heap_extern.c
ALLOC_SRC_libc := src/util/heap_extern.c
SORT_SRC_profcap := src/util/sort.c
SORT_SRC_libc :=
SWITCHED_SRCS := src/util/heap.c src/util/heap_extern.c src/util/sort.c
UNCHOSEN_SRCS := $(filter-out $(ALLOC_SRC_$(ALLOC)) $(SORT_SRC_$(SORT)),$(SWITCHED_SRCS))
ALLOC_LIB_mimalloc := $(PREFIX)/lib/libmimalloc.a
ALLOC_LIB := $(ALLOC_LIB_$(ALLOC))
BUILD_CONFIG := ALLOC=$(ALLOC) SORT=$(SORT) HUGE_PAGES=$(HUGE_PAGES)
CONFIG_STAMP := $(BUILD)/config
ifeq ($(filter clean distclean,$(MAKECMDGOALS)),)
ifneq ($(BUILD_CONFIG),$(strip $(file <$(CONFIG_STAMP))))
$(shell mkdir -p $(BUILD) && printf '%s\n' '$(BUILD_CONFIG)' >$(CONFIG_STAMP))
endif
endif

# Third-party sources (nanopb runtime) are not held to our warning policy.
THIRD_PARTY_CFLAGS := $(filter-out -Werror,$(CFLAGS))
DEPFLAGS = -MMD -MP
LDFLAGS := -static -Wl,--gc-sections
# Static libraries in link order: each uses only those after it (libbpf,
# libdw -> libelf -> zlib; libcurl -> nghttp2, OpenSSL, zlib; libssl ->
# libcrypto). libdemangle (libiberty's C++/Rust demanglers), liblzma
# (MiniDebugInfo) and libdeflate (debug section inflation) stand alone.
LIBS := $(PREFIX)/lib/libbpf.a $(PREFIX)/lib/libdw.a $(PREFIX)/lib/libelf.a \
	$(PREFIX)/lib/libdemangle.a $(PREFIX)/lib/liblzma.a $(PREFIX)/lib/libdeflate.a \
	$(PREFIX)/lib/libcurl.a \
	$(PREFIX)/lib/libnghttp2.a $(PREFIX)/lib/libssl.a $(PREFIX)/lib/libcrypto.a \
	$(PREFIX)/lib/libz.a

BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_x86 -Wall -Werror \
	-I$(PREFIX)/include -idirafter $(UAPI) -Ibpf
# Skeleton type/function prefix for bpf/<name>.bpf.c: struct <name>,
# <name>__open_and_load(), ... A BPF file must not share its name with a
# module of src/ (e.g. no bpf/profile.bpf.c: struct profile is ours).
skel_name = $(1)

# ---- sources -----------------------------------------------------------------
PROTOS := $(sort $(shell find nanopb_protos -name '*.proto' 2>/dev/null))
PROTO_OPTIONS := $(sort $(shell find nanopb_protos -name '*.options' 2>/dev/null))
PROTO_REL := $(PROTOS:nanopb_protos/%.proto=%)
PB_C := $(PROTO_REL:%=$(BUILD)/gen/%.pb.c)
PB_H := $(PROTO_REL:%=$(BUILD)/gen/%.pb.h)
PB_OBJS := $(PROTO_REL:%=$(BUILD)/obj/gen/%.pb.o)

NANOPB_RT := pb_common pb_encode pb_decode
NANOPB_OBJS := $(NANOPB_RT:%=$(BUILD)/obj/nanopb/%.o)

# bpf/<name>.bpf.c is one object, with a skeleton of that name. The units of
# bpf/cpu_sampler/ are linked into one object (bpftool gen object), skeleton
# cpu_sampler. Each unit comes after those whose maps and globals it uses:
# libbpf 1.1's linker gives a map or variable declared extern before the
# unit defining it is linked a wrong offset in the object's BTF.
CPU_SAMPLER_UNITS := stacks target threadctx v8 jvm perl unwind python php notice timestamps ruby sample offcpu memory
CPU_SAMPLER_OBJS := $(CPU_SAMPLER_UNITS:%=$(BUILD)/bpf/cpu_sampler/%.bpf.o)
$(if $(filter-out $(CPU_SAMPLER_UNITS),$(patsubst bpf/cpu_sampler/%.bpf.c,%,\
	$(wildcard bpf/cpu_sampler/*.bpf.c))),$(error a unit of bpf/cpu_sampler/ \
	is missing from CPU_SAMPLER_UNITS))
BPF_SRCS := $(sort $(wildcard bpf/*.bpf.c))
BPF_NAMES := $(BPF_SRCS:bpf/%.bpf.c=%) cpu_sampler
BPF_OBJS := $(BPF_NAMES:%=$(BUILD)/bpf/%.bpf.o) $(CPU_SAMPLER_OBJS)
SKELS := $(BPF_NAMES:%=$(BUILD)/bpf/%.skel.h)

# Layers of src/, lowest first: a layer may include only from itself and the
# layers before it (tests/check_layers.py enforces it). Each builds into
# build/lib/lib<layer>.a; links name them highest first.
LAYERS := util proc model collect symbolize formats export capture cli
LAYER_LIBS := $(LAYERS:%=$(BUILD)/lib/lib%.a)
LINK_LAYERS := $(foreach l,$(shell echo $(LAYERS) | tr ' ' '\n' | tac),$(BUILD)/lib/lib$(l).a)
PB_LIB := $(BUILD)/lib/libpb.a

SRCS := $(filter-out $(UNCHOSEN_SRCS),$(sort $(shell find src -name '*.c' 2>/dev/null)))
OBJS := $(SRCS:src/%.c=$(BUILD)/obj/%.o)
MAIN_OBJ := $(BUILD)/obj/cli/main.o
layer_objs = $(filter-out $(MAIN_OBJ),$(filter $(BUILD)/obj/$(1)/%,$(OBJS)))
# Everything a program built on profcap's code links, in link order.
PROFCAP_LIBS := $(LINK_LAYERS) $(PB_LIB) $(ALLOC_LIB) $(LIBS)

TEST_SRCS := $(sort $(wildcard tests/unit/test_*.c))
TEST_OBJS := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/obj/tests/%.o)
TEST_BINS := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

# Extra test prerequisites (fixture binaries, workloads) are appended to
# TEST_DEPS by these fragments; they must be read before the tests rule.
TEST_DEPS :=
-include tests/unit/fixtures.mk
-include tests/workloads/workloads.mk

# Keep intermediate outputs (make would delete them after the link).
.SECONDARY: $(PB_C) $(PB_H) $(BPF_OBJS) $(SKELS)

# ---- top-level targets --------------------------------------------------------
.PHONY: all profcap libs print-libs tests test fuzz clean distclean
all: profcap tests
profcap: $(BUILD)/profcap
libs: $(LAYER_LIBS) $(PB_LIB)
# For scripts that link their own programs (benchmarks): the archives, in order.
print-libs:
	@echo $(PROFCAP_LIBS)
tests: $(TEST_BINS) $(TEST_DEPS)
test: all
	./tests/run.sh
clean:
	rm -rf $(BUILD)
distclean: clean
	rm -rf $(DEPS)

$(LIBS) $(ALLOC_LIB) $(NANOPB_RT:%=$(NANOPB_DIR)/%.c):
	@echo "missing $@: run ./build.sh first to build deps/" >&2; exit 1

# ---- nanopb code generation -----------------------------------------------------
# One run writes both files. Every proto/options file is a prerequisite since
# generated code embeds sizes of imported messages.
# The output folder is made first: two generator runs creating it at once
# (parallel make) race in the generator's own makedirs().
$(BUILD)/gen/%.pb.c $(BUILD)/gen/%.pb.h: nanopb_protos/%.proto $(PROTOS) $(PROTO_OPTIONS)
	@mkdir -p $(dir $(BUILD)/gen/$*)
	$(PYTHON) $(NANOPB_GEN) -q -I nanopb_protos -D $(BUILD)/gen $*.proto

# Their field numbers alone (#define <Msg>_<field>_tag N, no nanopb types),
# for the decoders below formats/ that may not include nanopb code.
PB_TAGS := $(PROTO_REL:%=$(BUILD)/gen/%.tags.h)
.SECONDARY: $(PB_TAGS)
$(OBJS) $(TEST_OBJS): | $(PB_TAGS)
$(BUILD)/gen/%.tags.h: $(BUILD)/gen/%.pb.h
	sed -n 's/^\(#define [A-Za-z0-9_]*_tag\)  *\([0-9][0-9]*\)$$/\1 \2/p' $< > $@

# ---- BPF ----------------------------------------------------------------------------
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c Makefile
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -MMD -MP -MF $(@:.o=.d) -MT $@ -c $< -o $@
	$(LLVM_STRIP) -g $@

# Linked from its units: no dependency file of its own (one left by a tree
# that compiled it from a single source is not read).
$(BUILD)/bpf/cpu_sampler.bpf.o: $(CPU_SAMPLER_OBJS)
	$(BPFTOOL) gen object $@ $^

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(call skel_name,$*) > $@

# ---- C objects ----------------------------------------------------------------------
# Our objects wait for all generated headers so includes resolve.
$(OBJS) $(TEST_OBJS) $(PB_OBJS): | $(PB_H) $(SKELS)

$(BUILD)/obj/%.o: src/%.c Makefile
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/obj/gen/%.pb.o: $(BUILD)/gen/%.pb.c Makefile
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/obj/nanopb/%.o: $(NANOPB_DIR)/%.c Makefile
	@mkdir -p $(@D)
	$(CC) $(THIRD_PARTY_CFLAGS) $(DEPFLAGS) -c $< -o $@

# The objects whose code a build switch changes.
$(BUILD)/obj/util/pages.o: CFLAGS += -DPAGES_HUGE_DEFAULT=$(if $(filter on,$(HUGE_PAGES)),1,0)
$(BUILD)/obj/util/heap_extern.o: CFLAGS += $(if $(filter mimalloc,$(ALLOC)),-DHEAP_MIMALLOC)
$(BUILD)/obj/util/pages.o $(BUILD)/obj/util/heap_extern.o: $(CONFIG_STAMP)
$(CONFIG_STAMP):
	@mkdir -p $(@D)
	@printf '%s\n' '$(BUILD_CONFIG)' >$@
# mimalloc.h comes with the library: without it, say to run build.sh.
$(BUILD)/obj/util/heap_extern.o: | $(ALLOC_LIB)

# Test tables list the model's input structs (profile_frame, mapping descs)
# positionally: fields added at their end (system_name, htlhash, ...) are
# NULL there on purpose.
$(BUILD)/obj/tests/%.o: tests/unit/%.c Makefile
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Wno-missing-field-initializers -Itests/unit $(DEPFLAGS) -c $< -o $@

# ---- archives ------------------------------------------------------------------------
$(BUILD)/lib/lib%.a: Makefile
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $(filter %.o,$^)
$(foreach l,$(LAYERS),$(eval $(BUILD)/lib/lib$(l).a: $(call layer_objs,$(l))))
# Its members follow the switches.
$(BUILD)/lib/libutil.a: $(CONFIG_STAMP)

$(PB_LIB): $(PB_OBJS) $(NANOPB_OBJS) Makefile
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $(PB_OBJS) $(NANOPB_OBJS)

# ---- link ---------------------------------------------------------------------------
$(BUILD)/profcap.debug: $(MAIN_OBJ) $(LAYER_LIBS) $(PB_LIB) $(ALLOC_LIB) $(LIBS)
	$(CC) $(LDFLAGS) -o $@ $(MAIN_OBJ) $(PROFCAP_LIBS)

$(BUILD)/profcap: $(BUILD)/profcap.debug
	$(STRIP) -o $@ $<

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(LAYER_LIBS) $(PB_LIB) $(ALLOC_LIB) $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(PROFCAP_LIBS)

# ---- fuzzers ----------------------------------------------------------------------
# The layers below collect/'s BPF side are pure code: build them again with
# clang against glibc, instrumented for libFuzzer (fuzzer-no-link), ASan and
# UBSan, into archives of their own, and link every scripts/fuzz/fuzz_<name>.c
# against them (the linker takes only the objects a harness needs). A module
# that needs a library the fuzzers do not link (libbpf, libelf) is left out.
FUZZ := $(BUILD)/fuzz
FUZZ_CC := $(CLANG)
FUZZ_LAYERS := util proc model collect symbolize formats export cli
# libbpf is musl-only here; main() is not a harness. elfsym links the system libelf.
FUZZ_SKIP := src/collect/sampler%.c src/collect/kname.c src/collect/offcpu.c src/cli/main.c src/util/heap.c
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -g -O1 -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -DPB_FIELD_32BIT \
	-fno-omit-frame-pointer $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
	-Isrc -Ibpf -I$(BUILD)/gen -I$(NANOPB_DIR) -idirafter $(PREFIX)/include
FUZZ_SRCS := $(filter-out $(FUZZ_SKIP),$(filter $(FUZZ_LAYERS:%=src/%/%),$(SRCS)))
FUZZ_OBJS := $(FUZZ_SRCS:src/%.c=$(FUZZ)/obj/%.o)
# util/gz.c inflates with libdeflate: built from deps/src/libdeflate under
# the harnesses' sanitizers (the library's C files and x86 CPU detection).
FUZZ_DEFLATE := $(FUZZ)/libdeflate/libdeflate.a
FUZZ_DEFLATE_SRCS := $(sort $(wildcard $(DEPS)/src/libdeflate/lib/*.c)) \
	$(DEPS)/src/libdeflate/lib/x86/cpu_features.c
FUZZ_LIBS := $(foreach l,$(shell echo $(FUZZ_LAYERS) | tr ' ' '\n' | tac),$(FUZZ)/lib/lib$(l).a) \
	$(FUZZ)/lib/libpb.a $(FUZZ_DEFLATE)
FUZZ_PB_OBJS := $(PROTO_REL:%=$(FUZZ)/obj/gen/%.pb.o) $(NANOPB_RT:%=$(FUZZ)/obj/nanopb/%.o)
FUZZ_HARNESSES := $(sort $(wildcard scripts/fuzz/fuzz_*.c))
# fuzz_dwarf drives libdw itself: libelf + libdw from deps/src/elfutils,
# instrumented like the harnesses, by the same recipe build.sh uses (less
# UBSan's alignment check: libdw reads unaligned words on purpose).
FUZZ_EU := $(FUZZ)/elfutils
FUZZ_BINS := $(FUZZ_HARNESSES:scripts/fuzz/fuzz_%.c=$(FUZZ)/%)

fuzz: $(FUZZ_BINS)

$(FUZZ_OBJS) $(FUZZ_PB_OBJS): | $(PB_H) $(PB_TAGS)

$(FUZZ)/obj/%.o: src/%.c Makefile
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(FUZZ)/obj/gen/%.pb.o: $(BUILD)/gen/%.pb.c Makefile
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(FUZZ)/obj/nanopb/%.o: $(NANOPB_DIR)/%.c Makefile
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(FUZZ)/lib/lib%.a: Makefile
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $(filter %.o,$^)
$(foreach l,$(FUZZ_LAYERS),$(eval $(FUZZ)/lib/lib$(l).a: $(filter $(FUZZ)/obj/$(l)/%,$(FUZZ_OBJS))))
$(FUZZ)/lib/libpb.a: $(FUZZ_PB_OBJS)

$(FUZZ_DEFLATE): Makefile
	@mkdir -p $(@D)/obj
	cd $(@D)/obj && $(FUZZ_CC) -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
		-fno-omit-frame-pointer -I$(abspath $(DEPS)/src/libdeflate) -c $(abspath $(FUZZ_DEFLATE_SRCS))
	rm -f $@
	$(AR) rcs $@ $(@D)/obj/*.o

$(FUZZ_EU)/lib/libdw.a: third_party/elfutils.mk
	$(MAKE) -s -f third_party/elfutils.mk SRCDIR=$(DEPS)/src/elfutils OBJDIR=$(FUZZ_EU)/obj \
		PREFIX=$(FUZZ_EU) CC=$(FUZZ_CC) \
		DEPS_CFLAGS="-g -O1 $(FUZZ_SAN) -fno-sanitize=alignment -fsanitize=fuzzer-no-link \
		-fno-omit-frame-pointer" install

# The demanglers (symbolize/demangle.c calls them) the same way.
FUZZ_DEMANGLE := $(FUZZ)/libiberty/lib/libdemangle.a
$(FUZZ_DEMANGLE): third_party/libiberty.mk
	$(MAKE) -s -f third_party/libiberty.mk SRCDIR=$(DEPS)/src/libiberty \
		OBJDIR=$(FUZZ)/libiberty/obj PREFIX=$(FUZZ)/libiberty CC=$(FUZZ_CC) \
		DEPS_CFLAGS="-g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link -fno-omit-frame-pointer" \
		install

$(FUZZ)/dwarf: scripts/fuzz/fuzz_dwarf.c $(FUZZ_LIBS) $(FUZZ_EU)/lib/libdw.a $(FUZZ_DEMANGLE) \
		Makefile | $(PB_H)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(FUZZ_EU)/include -fsanitize=fuzzer -o $@ $< $(FUZZ_LIBS) \
		$(FUZZ_EU)/lib/libdw.a $(FUZZ_EU)/lib/libelf.a $(FUZZ_DEMANGLE) -lz -llzma

$(FUZZ)/%: scripts/fuzz/fuzz_%.c $(FUZZ_LIBS) $(FUZZ_DEMANGLE) Makefile | $(PB_H)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIBS) $(FUZZ_DEMANGLE) \
		-lelf -lz -llzma

-include $(OBJS:.o=.d) $(PB_OBJS:.o=.d) $(NANOPB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) \
	$(filter-out $(BUILD)/bpf/cpu_sampler.bpf.d,$(BPF_OBJS:.o=.d)) $(FUZZ_OBJS:.o=.d) \
	$(FUZZ_PB_OBJS:.o=.d)
