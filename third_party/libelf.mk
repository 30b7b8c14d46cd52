# libelf.mk - build libelf.a alone from an unpacked elfutils source tree.
#
# elfutils' configure fails under musl, so this compiles exactly the files
# listed in libelf_a_SOURCES of libelf/Makefile.am (read from the source
# tree, so the list follows the Debian version) with the hand-written
# third_party/libelf/config.h. Called by build.sh:
#   make -f third_party/libelf.mk SRCDIR=deps/src/elfutils OBJDIR=... \
#        PREFIX=deps/prefix UAPI=deps/uapi CONFIG_H_DIR=third_party/libelf install

CC ?= musl-gcc
AR ?= ar
DEPS_CFLAGS ?= -O2 -g
SRCDIR ?= $(error SRCDIR not set)
OBJDIR ?= $(error OBJDIR not set)
PREFIX ?= $(error PREFIX not set)
CONFIG_H_DIR ?= $(dir $(lastword $(MAKEFILE_LIST)))libelf
UAPI ?=

LIBELF_SRCS := $(shell sed -n '/^libelf_a_SOURCES[ \t]*=/,/[^\\]$$/p' \
	$(SRCDIR)/libelf/Makefile.am | sed 's/^[^=]*=//; s/\\//g')
ifeq ($(strip $(LIBELF_SRCS)),)
$(error no libelf_a_SOURCES found in $(SRCDIR)/libelf/Makefile.am)
endif

LIBELF_OBJS := $(addprefix $(OBJDIR)/,$(LIBELF_SRCS:.c=.o))

LIBELF_CFLAGS := $(DEPS_CFLAGS) -std=gnu99 -D_GNU_SOURCE -DHAVE_CONFIG_H \
	-Wno-unused-parameter \
	-I$(CONFIG_H_DIR) -I$(SRCDIR)/libelf -I$(SRCDIR)/lib -I$(SRCDIR) \
	-I$(PREFIX)/include $(if $(UAPI),-idirafter $(UAPI))

.PHONY: all install
all: $(OBJDIR)/libelf.a

$(OBJDIR)/%.o: $(SRCDIR)/libelf/%.c $(CONFIG_H_DIR)/config.h | $(OBJDIR)
	$(CC) $(LIBELF_CFLAGS) -c $< -o $@

$(OBJDIR):
	mkdir -p $@

$(OBJDIR)/libelf.a: $(LIBELF_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

install: $(OBJDIR)/libelf.a
	mkdir -p $(PREFIX)/lib $(PREFIX)/include
	install -m 644 $(OBJDIR)/libelf.a $(PREFIX)/lib/libelf.a
	install -m 644 $(SRCDIR)/libelf/libelf.h $(SRCDIR)/libelf/gelf.h \
		$(SRCDIR)/libelf/nlist.h $(PREFIX)/include/
