# elfutils.mk - build libelf.a and libdw.a from an unpacked elfutils tree.
#
# elfutils' configure fails under musl (it wants argp, fts and obstack for
# the tools), so this compiles the library sources listed in the tree's own
# Makefile.am files (so the lists follow the version) with the hand-written
# third_party/elfutils/config.h:
#   libelf.a  libelf_a_SOURCES + lib/eu-search.c (libelf's tsearch wrappers)
#   libdw.a   libdw_a_SOURCES + libdwelf_a_SOURCES (less dwelf_elf_begin.c,
#             which needs libdwfl) + the lib/ helpers libdw calls (xmalloc,
#             next_prime, ...). libdwfl, libebl and the backends are left
#             out: nothing here needs them (libdw's CFI code calls libebl;
#             linking dwarf_getcfi_elf & co. would fail, on purpose).
# Called by build.sh:
#   make -f third_party/elfutils.mk SRCDIR=deps/src/elfutils OBJDIR=... \
#        PREFIX=deps/prefix UAPI=deps/uapi CONFIG_H_DIR=third_party/elfutils install

CC := musl-gcc
AR ?= ar
DEPS_CFLAGS ?= -O2 -g
SRCDIR ?= $(error SRCDIR not set)
OBJDIR ?= $(error OBJDIR not set)
PREFIX ?= $(error PREFIX not set)
CONFIG_H_DIR ?= $(dir $(lastword $(MAKEFILE_LIST)))elfutils
UAPI ?=

# am_sources DIR VAR: the files of VAR = ... (with continuations) in
# DIR/Makefile.am.
am_sources = $(shell sed -n '/^$(2)[ \t]*=/,/[^\\]$$/p' $(SRCDIR)/$(1)/Makefile.am | \
	sed 's/^[^=]*=//; s/\\//g')

LIBELF_SRCS := $(call am_sources,libelf,libelf_a_SOURCES)
LIBDW_SRCS := $(call am_sources,libdw,libdw_a_SOURCES)
LIBDWELF_SRCS := $(filter-out dwelf_elf_begin.c,$(call am_sources,libdwelf,libdwelf_a_SOURCES))
LIBEU_DW := xmalloc.c xstrdup.c xstrndup.c xasprintf.c next_prime.c
ifeq ($(strip $(LIBELF_SRCS)),)
$(error no libelf_a_SOURCES found in $(SRCDIR)/libelf/Makefile.am)
endif
ifeq ($(strip $(LIBDW_SRCS)),)
$(error no libdw_a_SOURCES found in $(SRCDIR)/libdw/Makefile.am)
endif

LIBELF_OBJS := $(addprefix $(OBJDIR)/libelf/,$(LIBELF_SRCS:.c=.o) eu-search.o)
LIBDW_OBJS := $(addprefix $(OBJDIR)/libdw/,$(LIBDW_SRCS:.c=.o)) \
	$(addprefix $(OBJDIR)/libdwelf/,$(LIBDWELF_SRCS:.c=.o)) \
	$(addprefix $(OBJDIR)/libeu/,$(LIBEU_DW:.c=.o))

EU_CFLAGS := $(DEPS_CFLAGS) -std=gnu99 -D_GNU_SOURCE -DHAVE_CONFIG_H \
	-Wno-unused-parameter \
	-I$(CONFIG_H_DIR) -I$(SRCDIR)/libelf -I$(SRCDIR)/libdw \
	-I$(SRCDIR)/libdwelf -I$(SRCDIR)/libebl -I$(SRCDIR)/libdwfl -I$(SRCDIR)/lib -I$(SRCDIR) \
	-I$(PREFIX)/include $(if $(UAPI),-idirafter $(UAPI))

.PHONY: all install
all: $(OBJDIR)/libelf.a $(OBJDIR)/libdw.a

$(OBJDIR)/libelf/%.o: $(SRCDIR)/libelf/%.c $(CONFIG_H_DIR)/config.h
	@mkdir -p $(@D)
	$(CC) $(EU_CFLAGS) -c $< -o $@
$(OBJDIR)/libelf/eu-search.o: $(SRCDIR)/lib/eu-search.c $(CONFIG_H_DIR)/config.h
	@mkdir -p $(@D)
	$(CC) $(EU_CFLAGS) -c $< -o $@
$(OBJDIR)/libdw/%.o: $(SRCDIR)/libdw/%.c $(CONFIG_H_DIR)/config.h
	@mkdir -p $(@D)
	$(CC) $(EU_CFLAGS) -c $< -o $@
$(OBJDIR)/libdwelf/%.o: $(SRCDIR)/libdwelf/%.c $(CONFIG_H_DIR)/config.h
	@mkdir -p $(@D)
	$(CC) $(EU_CFLAGS) -c $< -o $@
$(OBJDIR)/libeu/%.o: $(SRCDIR)/lib/%.c $(CONFIG_H_DIR)/config.h
	@mkdir -p $(@D)
	$(CC) $(EU_CFLAGS) -c $< -o $@

$(OBJDIR)/libelf.a: $(LIBELF_OBJS)
	rm -f $@
	$(AR) rcs $@ $^
$(OBJDIR)/libdw.a: $(LIBDW_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

install: $(OBJDIR)/libelf.a $(OBJDIR)/libdw.a
	mkdir -p $(PREFIX)/lib $(PREFIX)/include/elfutils
	install -m 644 $(OBJDIR)/libelf.a $(PREFIX)/lib/libelf.a
	install -m 644 $(OBJDIR)/libdw.a $(PREFIX)/lib/libdw.a
	install -m 644 $(SRCDIR)/libelf/libelf.h $(SRCDIR)/libelf/gelf.h \
		$(SRCDIR)/libelf/nlist.h $(PREFIX)/include/
	install -m 644 $(SRCDIR)/libdw/libdw.h $(SRCDIR)/libdw/known-dwarf.h \
		$(SRCDIR)/libdwelf/libdwelf.h $(PREFIX)/include/elfutils/
	install -m 644 $(SRCDIR)/libdw/dwarf.h $(PREFIX)/include/dwarf.h
