# mimalloc.mk - build libmimalloc.a (malloc, free, calloc, realloc and the
# aligned and POSIX variants, for `make ALLOC=mimalloc`) from Debian's
# mimalloc source, for musl.
#
# mimalloc's src/static.c includes every other source of the library: one
# object. The flags are those of its CMake release build with MI_OVERRIDE
# on (the standard entry points defined, not only the mi_* ones), without
# CMake: NDEBUG (no internal assertions), initial-exec TLS (a static
# binary), no builtin malloc (gcc must not fold its own calls). Its
# aligned_alloc() is defined only under glibc's __USE_ISOC11, which musl's
# headers never set: set here, or musl's aligned_alloc() (and with it
# musl's whole allocator) would be linked beside mimalloc.
# Called by build.sh:
#   make -f third_party/mimalloc.mk SRCDIR=deps/src/mimalloc OBJDIR=... \
#        PREFIX=deps/prefix install

CC := musl-gcc
AR ?= ar
DEPS_CFLAGS ?= -O2 -g
SRCDIR ?= $(error SRCDIR not set)
OBJDIR ?= $(error OBJDIR not set)
PREFIX ?= $(error PREFIX not set)

MIMALLOC_CFLAGS := $(DEPS_CFLAGS) -std=gnu11 -DNDEBUG -DMI_MALLOC_OVERRIDE \
	-DMI_STATIC_LIB -D__USE_ISOC11=1 -fvisibility=hidden -ftls-model=initial-exec \
	-fno-builtin-malloc -I$(SRCDIR)/include

.PHONY: all install
all: $(OBJDIR)/libmimalloc.a

$(OBJDIR)/static.o: $(SRCDIR)/src/static.c
	@mkdir -p $(@D)
	$(CC) $(MIMALLOC_CFLAGS) -c $< -o $@

$(OBJDIR)/libmimalloc.a: $(OBJDIR)/static.o
	rm -f $@
	$(AR) rcs $@ $^

install: $(OBJDIR)/libmimalloc.a
	mkdir -p $(PREFIX)/lib $(PREFIX)/include
	install -m 644 $(OBJDIR)/libmimalloc.a $(PREFIX)/lib/libmimalloc.a
	install -m 644 $(SRCDIR)/include/mimalloc.h $(PREFIX)/include/mimalloc.h
