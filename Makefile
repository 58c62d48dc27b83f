# atomtab - plain GNU make build (no meson needed; this is how embedders
# vendor it). Sources, tests and the version come from the same files
# meson.build reads: VERSION, src/sources.txt, test/tests.txt.
#
# Front door:  make | make test | make report | make bench | make install
# Knobs:       ALLOCATOR=jemalloc|system  O=build-dir  PREFIX=/usr/local

VERSION   := $(shell cat VERSION)
SOMAJOR   := $(firstword $(subst ., ,$(VERSION)))
LIB_SRCS  := $(addprefix src/,$(shell cat src/sources.txt))
TESTS     := $(shell cat test/tests.txt)

O         ?= build/make
ALLOCATOR ?= jemalloc
PREFIX    ?= /usr/local
LIBDIR    ?= $(PREFIX)/lib
INCDIR    ?= $(PREFIX)/include
BINDIR    ?= $(PREFIX)/bin

CC        ?= cc
OPT       ?= -O2 -g
WARN      := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS    ?=
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -Iinclude -I$(O)/gen -pthread $(CFLAGS) \
             -DATAB_VERSION_STRING='"$(VERSION)"'
LIB_CFLAGS = $(ALL_CFLAGS) -fPIC -fvisibility=hidden
LDLIBS    := -lxxhash -pthread
ifeq ($(ALLOCATOR),jemalloc)
  LIB_CFLAGS += -DATAB_WITH_JEMALLOC
  LDLIBS     += -ljemalloc
endif

LIB_OBJS  := $(LIB_SRCS:src/%.c=$(O)/obj/%.o)
STATIC    := $(O)/libatomtab.a
SHARED    := $(O)/libatomtab.so.$(VERSION)
TEST_BINS := $(TESTS:%=$(O)/test/%)

.PHONY: all lib tests test report bench install uninstall clean deps-build deps-test

all: lib

# One apt-get at a time: under make -j the test deps wait for the build deps
# (deps.sh also takes a lock, for runs from separate makes).
deps-build:
	@sh tools/deps.sh build
deps-test: deps-build
	@sh tools/deps.sh test

lib: deps-build
	@$(MAKE) --no-print-directory $(STATIC) $(SHARED)

$(O)/obj/%.o: src/%.c src/atab_int.h include/atomtab.h
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(STATIC): $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(SHARED): $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,libatomtab.so.$(SOMAJOR) -o $@ $^ $(LDLIBS)
	ln -sf libatomtab.so.$(VERSION) $(O)/libatomtab.so.$(SOMAJOR)
	ln -sf libatomtab.so.$(SOMAJOR) $(O)/libatomtab.so

# Tests link the static library so they can run from the build tree.
$(O)/test/%: test/%.c test/*.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc $< -o $@ $(STATIC) -lcmocka $(LDLIBS)

# The README's usage example, compiled and run as a test.
$(O)/test/readme_example.c: README.md tools/readme-example.sh
	@mkdir -p $(dir $@)
	sh tools/readme-example.sh README.md > $@
$(O)/test/readme_example: $(O)/test/readme_example.c $(STATIC)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDLIBS)

tests: deps-test lib
	@$(MAKE) --no-print-directory $(TEST_BINS) $(O)/test/readme_example

test: tests
	@set -e; fail=0; \
	for t in $(TEST_BINS); do echo "== $$t"; $$t || fail=1; done; \
	echo "== $(O)/test/readme_example"; $(O)/test/readme_example || fail=1; \
	exit $$fail

install: lib
	install -d $(DESTDIR)$(INCDIR) $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 include/atomtab.h $(DESTDIR)$(INCDIR)/
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libatomtab.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libatomtab.so.$(SOMAJOR)
	ln -sf libatomtab.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libatomtab.so
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCDIR@|$(INCDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|; s|@PRIVATE_LIBS@|$(LDLIBS)|' \
	    tools/atomtab.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/atomtab.pc

uninstall:
	rm -f $(DESTDIR)$(INCDIR)/atomtab.h $(DESTDIR)$(LIBDIR)/libatomtab.* \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/atomtab.pc

clean:
	rm -rf $(O)

# ---- memory reporter: tools/atomtab-report over the bundled corpus ----
# The corpus ships gzip'd (corpus/README.md says where it came from) and is
# unpacked next to the tool, where the tool looks for it by default.
DATADIR    ?= $(PREFIX)/share
REPORT_BIN := $(O)/atomtab-report
CORPUS     := $(O)/nodejs-api-docs.atoms

$(CORPUS): corpus/nodejs-api-docs.atoms.gz
	@mkdir -p $(dir $@)
	gzip -dc $< > $@.tmp && mv $@.tmp $@

$(REPORT_BIN): tools/atomtab-report.c include/atomtab.h $(STATIC)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDLIBS)

.PHONY: report-tool install-report uninstall-report
all: report-tool
report-tool: lib
	@$(MAKE) --no-print-directory $(REPORT_BIN) $(CORPUS)

report: report-tool
	$(REPORT_BIN)

install: install-report
install-report: report-tool
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/atomtab
	install -m 755 $(REPORT_BIN) $(DESTDIR)$(BINDIR)/
	install -m 644 $(CORPUS) $(DESTDIR)$(DATADIR)/atomtab/

uninstall: uninstall-report
uninstall-report:
	rm -f $(DESTDIR)$(BINDIR)/atomtab-report $(DESTDIR)$(DATADIR)/atomtab/nodejs-api-docs.atoms
	-rmdir $(DESTDIR)$(DATADIR)/atomtab 2>/dev/null

# ---- bench/membytes: bytes per atom for atomtab, GLib and libxml2 ----
# Always links jemalloc: its stats.allocated is the common measure.
MEMBYTES := $(O)/bench/membytes
$(MEMBYTES): bench/membytes.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc $$(pkg-config --cflags glib-2.0 libxml-2.0) $< -o $@ \
	    $(STATIC) $$(pkg-config --libs glib-2.0 libxml-2.0) -lxxhash -ljemalloc -pthread

.PHONY: membytes
membytes: report-tool
	@sh tools/deps.sh bench
	@$(MAKE) --no-print-directory $(MEMBYTES)
	$(MEMBYTES) $(CORPUS)

# ---- external strings: bench/idread (C) and the Node-API addon ----
IDREAD := $(O)/bench/idread
$(IDREAD): bench/idread.c include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDLIBS)

.PHONY: bench-idread
bench: bench-idread
bench-idread: lib
	@$(MAKE) --no-print-directory $(IDREAD)
	$(IDREAD)

# The addon: a shared object linked with a static library of -fPIC objects
# built with the C library's allocator (jemalloc cannot be dlopen'd into
# node: its initial-exec TLS does not fit glibc's static TLS surplus).
# Linked -z nodelete: node dlcloses an addon a worker loaded, and the
# library's thread-exit destructor (thread.c) must stay mapped.
# Built and tested only where node and its headers are present.
NODE      ?= node
NODE_INC  ?= /usr/include/node
ADDON     := $(O)/atomtab.node
ifeq ($(ALLOCATOR),system)
  ADDON_LIB := $(STATIC)
else
  ADDON_LIB := $(O)/node/libatomtab-system.a
endif
ADDON_OBJS := $(LIB_SRCS:src/%.c=$(O)/node/obj/%.o)
ADDON_CFLAGS = $(filter-out -Wmissing-prototypes,$(ALL_CFLAGS)) -fPIC -I$(NODE_INC) \
               -DNODE_GYP_MODULE_NAME=atomtab
HAVE_NODE = command -v $(NODE) >/dev/null 2>&1 && test -f $(NODE_INC)/node_api.h

$(O)/node/obj/%.o: src/%.c src/atab_int.h include/atomtab.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@
$(O)/node/libatomtab-system.a: $(ADDON_OBJS)
	rm -f $@ && ar rcs $@ $^
$(ADDON): bindings/node/atomtab_node.c include/atomtab.h $(ADDON_LIB)
	$(CC) $(ADDON_CFLAGS) -shared -Wl,-z,nodelete $< -o $@ $(ADDON_LIB) -lxxhash -pthread

.PHONY: node-addon test-node bench-node
node-addon: deps-build
	@if $(HAVE_NODE); then $(MAKE) --no-print-directory $(ADDON); \
	else echo "node-addon: skipped (no $(NODE) or no $(NODE_INC)/node_api.h)"; fi
test: test-node
test-node: node-addon
	@if $(HAVE_NODE); then echo "== bindings/node (node --test)"; \
	  ATOMTAB_NODE=$(abspath $(ADDON)) $(NODE) --expose-gc --test bindings/node/test/; \
	else echo "test-node: skipped (no $(NODE) or no $(NODE_INC)/node_api.h)"; fi
bench: bench-node
bench-node: node-addon
	@if $(HAVE_NODE); then ATOMTAB_NODE=$(abspath $(ADDON)) $(NODE) bindings/node/bench.js; \
	else echo "bench-node: skipped (no $(NODE) or no $(NODE_INC)/node_api.h)"; fi
