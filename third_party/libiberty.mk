# libiberty.mk - build libdemangle.a (C++ and Rust demanglers) from
# Debian's libiberty source.
#
# Only two files of libiberty are compiled:
#   cp-demangle.c    Itanium C++ ABI demangler (GPL-2.0+ with a linking
#                    exception: linking it into a program puts no GPL
#                    restriction on that program)
#   rust-demangle.c  Rust legacy and v0 demangler (LGPL-2.0+ with the same
#                    exception)
# safe-ctype.c (plain LGPL-2.0+, no exception) is NOT used: the character
# class macros come from third_party/libiberty/safe-ctype.h, ours.
# Called by build.sh:
#   make -f third_party/libiberty.mk SRCDIR=deps/src/libiberty OBJDIR=... \
#        PREFIX=deps/prefix install

CC := musl-gcc
AR ?= ar
DEPS_CFLAGS ?= -O2 -g
SRCDIR ?= $(error SRCDIR not set)
OBJDIR ?= $(error OBJDIR not set)
PREFIX ?= $(error PREFIX not set)
SHIM_DIR := $(dir $(lastword $(MAKEFILE_LIST)))libiberty

DEMANGLE_SRCS := cp-demangle.c rust-demangle.c
DEMANGLE_OBJS := $(addprefix $(OBJDIR)/,$(DEMANGLE_SRCS:.c=.o))
# What libiberty's configure would find on musl. cp-demangle keeps its
# tables on the stack (VLAs, about 80 bytes per input character): callers
# cap the length of the names they pass.
DEMANGLE_CFLAGS := $(DEPS_CFLAGS) -std=gnu99 -DHAVE_STRING_H -DHAVE_STDLIB_H \
	-DHAVE_LIMITS_H -DHAVE_ALLOCA_H -DHAVE_DECL_BASENAME=1 \
	-I$(SHIM_DIR) -I$(SRCDIR)/include

.PHONY: all install
all: $(OBJDIR)/libdemangle.a

$(OBJDIR)/%.o: $(SRCDIR)/libiberty/%.c $(SHIM_DIR)/safe-ctype.h
	@mkdir -p $(@D)
	$(CC) $(DEMANGLE_CFLAGS) -c $< -o $@

$(OBJDIR)/libdemangle.a: $(DEMANGLE_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

install: $(OBJDIR)/libdemangle.a
	mkdir -p $(PREFIX)/lib $(PREFIX)/include/libiberty
	install -m 644 $(OBJDIR)/libdemangle.a $(PREFIX)/lib/libdemangle.a
	install -m 644 $(SRCDIR)/include/demangle.h $(SRCDIR)/include/libiberty.h \
		$(SRCDIR)/include/ansidecl.h $(PREFIX)/include/libiberty/
