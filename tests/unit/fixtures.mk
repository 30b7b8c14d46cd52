# fixtures.mk - ELF fixtures for the symbolization unit tests (included by the
# top Makefile). Built with the system gcc (glibc, dynamic) into
# build/tests/fixtures/, each with a GNU build-id:
#   libfx.so     shared library
#   fx_pie       PIE executable linked with libfx.so
#   fx_nopie     fixed-address executable linked with libfx.so
#   fx_stripped  PIE with -rdynamic, stripped: only .dynsym is left
#   fx_bare      PIE stripped as distributions ship programs: no _start in
#                .dynsym (no truth files: nothing is left to list)
# plus the truth the tests compare with, produced by binutils:
#   <bin>.nm       `nm -S` (or `nm -D -S` for the stripped one)
#   <bin>.buildid  build-id as printed by `readelf -n`
#   <bin>.load     PT_LOAD lines of `readelf -lW`

FIXTURE_DIR := $(BUILD)/tests/fixtures
FIXTURE_SRC := tests/unit/fixtures
FIXTURE_CC := gcc
FIXTURE_CFLAGS := -O1 -g -fno-inline -fno-omit-frame-pointer -Wall -Wl,--build-id
FIXTURE_BINS := $(addprefix $(FIXTURE_DIR)/,libfx.so fx_pie fx_nopie fx_stripped)
FIXTURE_FACTS := $(foreach b,$(FIXTURE_BINS),$(b).nm $(b).buildid $(b).load)

TEST_DEPS += $(FIXTURE_BINS) $(FIXTURE_FACTS) $(FIXTURE_DIR)/fx_bare

# Building one test binary on its own also builds the fixtures it reads.
$(BUILD)/tests/test_elfsym $(BUILD)/tests/test_elfsyms $(BUILD)/tests/test_symbolizer $(BUILD)/tests/test_debuginfo: | $(FIXTURE_BINS) $(FIXTURE_FACTS)
$(BUILD)/tests/test_elfsym: | $(FIXTURE_DIR)/fx_bare

$(FIXTURE_DIR)/libfx.so: $(FIXTURE_SRC)/fx_lib.c tests/unit/fixtures.mk
	@mkdir -p $(@D)
	$(FIXTURE_CC) $(FIXTURE_CFLAGS) -fPIC -shared -Wl,-soname,libfx.so -o $@ $<

$(FIXTURE_DIR)/fx_pie: $(FIXTURE_SRC)/fx_prog.c $(FIXTURE_DIR)/libfx.so
	$(FIXTURE_CC) $(FIXTURE_CFLAGS) -fPIE -pie -o $@ $< -L$(FIXTURE_DIR) -lfx \
		-Wl,-rpath,'$$ORIGIN'

$(FIXTURE_DIR)/fx_nopie: $(FIXTURE_SRC)/fx_prog.c $(FIXTURE_DIR)/libfx.so
	$(FIXTURE_CC) $(FIXTURE_CFLAGS) -fno-pie -no-pie -o $@ $< -L$(FIXTURE_DIR) -lfx \
		-Wl,-rpath,'$$ORIGIN'

$(FIXTURE_DIR)/fx_stripped: $(FIXTURE_SRC)/fx_prog.c $(FIXTURE_DIR)/libfx.so
	$(FIXTURE_CC) $(FIXTURE_CFLAGS) -fPIE -pie -rdynamic -o $@.tmp $< -L$(FIXTURE_DIR) -lfx \
		-Wl,-rpath,'$$ORIGIN'
	strip --strip-all -o $@ $@.tmp
	rm -f $@.tmp

$(FIXTURE_DIR)/fx_bare: $(FIXTURE_SRC)/fx_prog.c $(FIXTURE_DIR)/libfx.so
	$(FIXTURE_CC) $(FIXTURE_CFLAGS) -fPIE -pie -o $@.tmp $< -L$(FIXTURE_DIR) -lfx \
		-Wl,-rpath,'$$ORIGIN'
	strip --strip-all -o $@ $@.tmp
	rm -f $@.tmp

$(FIXTURE_DIR)/fx_stripped.nm: $(FIXTURE_DIR)/fx_stripped
	nm -D -S --defined-only $< > $@

$(FIXTURE_DIR)/%.nm: $(FIXTURE_DIR)/%
	nm -S --defined-only $< > $@

$(FIXTURE_DIR)/%.buildid: $(FIXTURE_DIR)/%
	readelf -n $< | sed -n 's/^ *Build ID: *//p' > $@
	test -s $@

$(FIXTURE_DIR)/%.load: $(FIXTURE_DIR)/%
	readelf -lW $< | grep '^ *LOAD' > $@
