# SPDX-License-Identifier: MIT
# atomtab - plain GNU make build (no meson needed; this is how embedders
# vendor it). Sources, tests and the version come from the same files
# meson.build reads: VERSION, src/sources.txt, test/tests.txt.
#
# Front door:  make | make test | make report | make bench | make install
# Releases:    make dist | make check-abi (CHANGELOG.md)
# Knobs:       ALLOCATOR=system|jemalloc  O=build-dir  PREFIX=/usr/local
#              LIBDIR (default: what meson picks, lib/<multiarch> on Debian)
#              TOOL_MALLOC (the malloc our own tools and benches run on)
#
# ALLOCATOR: system (default) calls the C library's malloc, so the library
# never changes which malloc its host runs on, and libatomtab.so can be
# dlopen'ed anywhere. jemalloc is an explicit choice for hosts that already
# run on it: the library calls mallocx/sdallocx, and -ljemalloc on the
# host's link line makes jemalloc the whole process's malloc (and the .so
# cannot be dlopen'ed by most hosts: jemalloc's TLS is initial-exec).

VERSION   := $(shell cat VERSION)
SOMAJOR   := $(firstword $(subst ., ,$(VERSION)))
LIB_SRCS  := $(addprefix src/,$(shell cat src/sources.txt))
TESTS     := $(shell cat test/tests.txt)
HOOK_TESTS := $(shell cat test/hook_tests.txt)

O         ?= build/make
ALLOCATOR ?= system
PREFIX    ?= /usr/local
# meson's default libdir, so both builds install to the same place
LIBSUB    := $(shell a=$$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null) && \
               [ -n "$$a" ] && echo lib/$$a && exit; \
               [ -d /usr/lib64 ] && [ ! -L /usr/lib64 ] && echo lib64 || echo lib)
LIBDIR    ?= $(PREFIX)/$(LIBSUB)
INCDIR    ?= $(PREFIX)/include
BINDIR    ?= $(PREFIX)/bin

CC        ?= cc
OPT       ?= -O2 -g
WARN      := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS    ?=
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -Iinclude -I$(O)/gen -pthread $(CFLAGS) \
             -DATAB_VERSION_STRING='"$(VERSION)"'
LIB_CFLAGS = $(ALL_CFLAGS) -fPIC -fvisibility=hidden
# xxhash 0.8's forced inlining fails under gcc -Og (an always_inline
# function it calls through a pointer): no forcing in such a build
ifneq ($(filter -Og,$(OPT) $(CFLAGS)),)
  LIB_CFLAGS += -DXXH_NO_INLINE_HINTS=1
endif
LDLIBS    := -lxxhash -pthread
ifeq ($(ALLOCATOR),jemalloc)
  LIB_CFLAGS += -DATAB_WITH_JEMALLOC
  LDLIBS     += -ljemalloc -lm
  PC_REQUIRES :=
  PC_LIBS     := -pthread -ljemalloc -lm   # jemalloc.pc has no -lm for static links
else ifeq ($(ALLOCATOR),system)
  PC_REQUIRES :=
  PC_LIBS     := -pthread
else
  $(error ALLOCATOR=$(ALLOCATOR): system or jemalloc)
endif
# Our own tools and benchmarks are hosts that choose jemalloc: linked with
# -ljemalloc, the process's malloc (and so the library's, with
# ALLOCATOR=system) is jemalloc. TOOL_MALLOC= runs them on the C library's.
TOOL_MALLOC ?= -ljemalloc
TOOL_LDLIBS  = $(LDLIBS) $(TOOL_MALLOC)

LIB_OBJS  := $(LIB_SRCS:src/%.c=$(O)/obj/%.o)
STATIC    := $(O)/libatomtab.a
SHARED    := $(O)/libatomtab.so.$(VERSION)
HOOK_BINS := $(HOOK_TESTS:%=$(O)/test/%)
TEST_BINS := $(TESTS:%=$(O)/test/%) $(HOOK_BINS)

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

# The header's ATAB_VERSION_* must say what VERSION says (meson checks too).
$(O)/version.ok: VERSION include/atomtab.h
	@mkdir -p $(dir $@)
	@sh tools/check-version.sh VERSION include/atomtab.h && touch $@

$(O)/obj/%.o: src/%.c src/*.h include/atomtab.h $(O)/version.ok
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(STATIC): $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

# -z nodelete: thread.c's thread-exit destructor (a pthread key) must stay
# mapped after a host dlcloses the library; threads may outlive the unload.
$(SHARED): $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,libatomtab.so.$(SOMAJOR) -Wl,-z,nodelete -o $@ $^ $(LDLIBS)
	ln -sf libatomtab.so.$(VERSION) $(O)/libatomtab.so.$(SOMAJOR)
	ln -sf libatomtab.so.$(SOMAJOR) $(O)/libatomtab.so

# Tests link the static library so they can run from the build tree.
# test_report reads the JSON dump with jansson (a test-only dependency).
$(O)/test/%: test/%.c test/*.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc $< -o $@ $(STATIC) -lcmocka $(TEST_LIBS) $(LDLIBS)
$(O)/test/test_report: TEST_LIBS = $$(pkg-config --cflags --libs jansson)

# Race tests (list in test/hook_tests.txt, which meson reads too):
# the library's sources compiled again with -DATAB_TEST_HOOKS, so that the
# named pause points of src/hooks.h call the hook a test installs. Only these
# tests link them: libatomtab.a and .so stay hook-free.
HOOK_OBJS := $(LIB_SRCS:src/%.c=$(O)/hookobj/%.o) $(O)/hookobj/atomtab_atoms.o
$(O)/hookobj/%.o: src/%.c src/*.h include/atomtab.h $(O)/version.ok
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -DATAB_TEST_HOOKS -c $< -o $@
$(O)/hookobj/atomtab_atoms.o: $(O)/gen/atomtab_atoms.c $(O)/gen/atomtab_atoms.h include/atomtab.h
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -DATAB_TEST_HOOKS -c $< -o $@
$(O)/hookobj/static.o: $(O)/gen/atomtab_atoms.h
$(HOOK_BINS): $(O)/test/%: test/%.c test/*.h $(HOOK_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DATAB_TEST_HOOKS -Isrc $< -o $@ $(HOOK_OBJS) -lcmocka $(LDLIBS)

# The README's usage example, compiled and run as a test.
$(O)/test/readme_example.c: README.md tools/readme-example.sh
	@mkdir -p $(dir $@)
	sh tools/readme-example.sh README.md > $@
$(O)/test/readme_example: $(O)/test/readme_example.c $(STATIC)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDLIBS)

tests: deps-test lib
	@$(MAKE) --no-print-directory $(TEST_BINS) $(O)/test/readme_example

# ATAB_BIG_SHARD=1 (the default here; 0 to skip): test_limits fills one
# shard to its largest array (about 30 s, 200 MB), which the meson,
# valgrind and cross runs leave out.
test: tests
	@set -e; fail=0; \
	for t in $(TEST_BINS); do echo "== $$t"; ATAB_BIG_SHARD=$${ATAB_BIG_SHARD-1} $$t || fail=1; done; \
	echo "== $(O)/test/readme_example"; $(O)/test/readme_example || fail=1; \
	exit $$fail

# atomtab.pc and the CMake package: the same templates meson fills in
# (tools/atomtab.pc.in, cmake/*.in), so both builds install the same files.
# Both are relocatable: they find the prefix from their own directory
# (${pcfiledir}, CMAKE_CURRENT_LIST_DIR) and name every directory under
# PREFIX from it; a LIBDIR or CMAKEDIR outside PREFIX makes them use
# absolute paths instead. $(call reloc,DIR,BASE) is DIR as BASE/<DIR less
# PREFIX>; $(call updirs,DIR) is the ../.. that climbs from DIR to PREFIX.
_empty   :=
_sp      := $(_empty) $(_empty)
RELOC     = $(and $(filter $(PREFIX)/%,$(LIBDIR)),$(filter $(PREFIX)/%,$(CMAKEDIR)))
reloc     = $(if $(and $(RELOC),$(filter $(PREFIX)/%,$(1))),$(2)/$(patsubst $(PREFIX)/%,%,$(1)),$(1))
updirs    = $(subst $(_sp),/,$(foreach c,$(subst /, ,$(patsubst $(PREFIX)/%,%,$(1))),..))
PC_PREFIX = $(if $(RELOC),$${pcfiledir}/$(call updirs,$(LIBDIR)/pkgconfig),$(PREFIX))
CM_UP     = $(if $(RELOC),$(call updirs,$(CMAKEDIR)),.)
SUBST = sed -e 's|@PC_PREFIX@|$(PC_PREFIX)|g; s|@CM_UP@|$(CM_UP)|g' \
            -e 's|@PC_LIBDIR@|$(call reloc,$(LIBDIR),$${prefix})|g; s|@CM_LIBDIR@|$(call reloc,$(LIBDIR),$${atomtab_PREFIX_DIR})|g' \
            -e 's|@PC_INCDIR@|$(call reloc,$(INCDIR),$${prefix})|g; s|@CM_INCDIR@|$(call reloc,$(INCDIR),$${atomtab_PREFIX_DIR})|g' \
            -e 's|@PC_BINDIR@|$(call reloc,$(BINDIR),$${prefix})|g; s|@CM_BINDIR@|$(call reloc,$(BINDIR),$${atomtab_PREFIX_DIR})|g' \
            -e 's|@PC_DATADIR@|$(call reloc,$(DATADIR),$${prefix})|g; s|@CM_DATADIR@|$(call reloc,$(DATADIR),$${atomtab_PREFIX_DIR})|g' \
            -e 's|@VERSION@|$(VERSION)|g; s|@ALLOCATOR@|$(ALLOCATOR)|g' \
            -e 's|@PC_REQUIRES@|$(PC_REQUIRES)|g; s|@PC_LIBS@|$(PC_LIBS)|g' \
            -e 's|@SOMAJOR@|$(SOMAJOR)|g; s|@MAJOR@|$(SOMAJOR)|g; s|@MINOR@|$(word 2,$(subst ., ,$(VERSION)))|g' \
            -e 's|@SIZEOF_VOID_P@|'"$$(echo __SIZEOF_POINTER__ | $(CC) -E -P - | tail -n 1)"'|g'
CMAKEDIR ?= $(LIBDIR)/cmake/atomtab

# Embedding (tools/check-embed.sh): libatomtab.so dlopen'ed by Python's
# ctypes and Node's process.dlopen; a program linked with libatomtab.a keeps
# the C library's malloc (LD_DEBUG=bindings). The tools' read errors and the
# generator's man page (tools/check-tools.sh).
.PHONY: test-embed test-tools test-layers
test: test-embed test-tools test-layers
test-embed: tests
	sh tools/check-embed.sh $(O) $(ALLOCATOR) "$(CC)" "$(LDLIBS)"
test-tools: tests report-tool
	sh tools/check-tools.sh $(O)
# The library's files call one another in layers, never around a loop
# (tools/check-layers.sh, from the objects' symbols), and the check's own test;
# no library .c file passes 1,000 lines.
# It waits for lib, whose make builds the objects: naming them here would let
# this make compile them too, beside that one, under -j.
test-layers: lib
	sh tools/check-layers.sh --self-test "$(CC)"
	sh tools/check-layers.sh $(LIB_OBJS)
	@for f in $(LIB_SRCS); do n=$$(wc -l < $$f); [ $$n -le 1000 ] || \
	    { echo "$$f: $$n lines; a library .c file keeps to 1,000 (split it)" >&2; exit 1; }; done

install: lib
	install -d $(DESTDIR)$(INCDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(CMAKEDIR)
	install -m 644 include/atomtab.h $(DESTDIR)$(INCDIR)/
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libatomtab.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libatomtab.so.$(SOMAJOR)
	ln -sf libatomtab.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libatomtab.so
	$(SUBST) tools/atomtab.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/atomtab.pc
	$(SUBST) cmake/atomtabConfig.cmake.in > $(DESTDIR)$(CMAKEDIR)/atomtabConfig.cmake
	$(SUBST) cmake/atomtabConfigVersion.cmake.in > $(DESTDIR)$(CMAKEDIR)/atomtabConfigVersion.cmake

uninstall:
	rm -f $(DESTDIR)$(INCDIR)/atomtab.h $(DESTDIR)$(LIBDIR)/libatomtab.a \
	      $(DESTDIR)$(LIBDIR)/libatomtab.so $(DESTDIR)$(LIBDIR)/libatomtab.so.$(SOMAJOR) \
	      $(DESTDIR)$(LIBDIR)/libatomtab.so.$(VERSION) \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/atomtab.pc $(DESTDIR)$(CMAKEDIR)/atomtabConfig*.cmake
	rmdir $(DESTDIR)$(CMAKEDIR) 2>/dev/null || true

clean:
	rm -rf $(O)

# ---- license and changelog: installed with the headers ----
DOCDIR ?= $(DATADIR)/doc/atomtab
.PHONY: install-doc uninstall-doc
install: install-doc
install-doc:
	install -d $(DESTDIR)$(DOCDIR)
	install -m 644 LICENSE CHANGELOG.md $(DESTDIR)$(DOCDIR)/
uninstall: uninstall-doc
uninstall-doc:
	rm -f $(DESTDIR)$(DOCDIR)/LICENSE $(DESTDIR)$(DOCDIR)/CHANGELOG.md
	rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null || true

# ---- release: the source tarball and the ABI check ----
# make dist         meson dist: the tarball of the committed tree
#                   ($(DIST_BUILD)/meson-dist/atomtab-VERSION.tar.xz), which
#                   meson unpacks, builds, tests and installs; then the
#                   tarball's plain make build (make lib) and its LICENSE
# make check-abi    the shared library (built in $(ABI_O) with -O2 -g, system
#                   allocator) against abi/atomtab-SOMAJOR.xml: only atab_*
#                   exported, abidiff passes additions and fails the rest
#                   (tools/check-abi.sh; CHANGELOG.md says how it moves)
# make abi-baseline records that file (never over an incompatible one)
# make check-abi-guard  the check's own test: deliberate breaks in scratch
#                   copies fail it, additions pass (tools/check-abi-guard.sh)
DIST_BUILD ?= build/dist
DIST_ARGS  ?=
ABI_O      ?= build/abi
ABI_BASE   := abi/atomtab-$(SOMAJOR).xml
ABI_LIB    := $(ABI_O)/libatomtab.so.$(VERSION)

.PHONY: dist check-abi abi-baseline abi-lib check-abi-guard
dist:
	@sh tools/deps.sh build test meson
	@if [ -f $(DIST_BUILD)/build.ninja ]; then meson setup --reconfigure $(DIST_BUILD) >/dev/null; \
	else meson setup $(DIST_BUILD) >/dev/null; fi
	meson dist -C $(DIST_BUILD) --formats xztar $(DIST_ARGS)
	sh tools/check-dist.sh $(DIST_BUILD)/meson-dist/atomtab-$(VERSION).tar.xz

abi-lib:
	@sh tools/deps.sh abi
	@$(MAKE) --no-print-directory O=$(ABI_O) ALLOCATOR=system OPT="-O2 -g" CFLAGS= lib
check-abi: abi-lib
	sh tools/check-abi.sh $(ABI_LIB) $(ABI_BASE)
abi-baseline: abi-lib
	@mkdir -p abi
	sh tools/check-abi.sh --record $(ABI_LIB) $(ABI_BASE)
check-abi-guard:
	@sh tools/deps.sh build abi
	sh tools/check-abi-guard.sh $(O)/abi-guard $(ABI_BASE)

# ---- memory reporter: tools/atomtab-report over the bundled corpus ----
# The corpus ships gzip'd (corpus/README.md says where it came from) and is
# unpacked next to the tool, where the tool looks for it by default.
DATADIR    ?= $(PREFIX)/share
REPORT_BIN := $(O)/atomtab-report
CORPUS     := $(O)/nodejs-api-docs.atoms

$(CORPUS): corpus/nodejs-api-docs.atoms.gz
	@mkdir -p $(dir $@)
	gzip -dc $< > $@.tmp && mv $@.tmp $@

$(REPORT_BIN): tools/atomtab-report.c tools/datafile.h include/atomtab.h $(STATIC)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(TOOL_LDLIBS)

.PHONY: report-tool install-report uninstall-report
all: report-tool
report-tool: lib
	@$(MAKE) --no-print-directory $(REPORT_BIN) $(CORPUS)

report: report-tool
	$(REPORT_BIN)

# about:memory in a real browser: atomtab-report --json loaded in headless
# Firefox ESR (installed by tools/deps.sh firefox where missing) over
# Marionette; asserts on the rendered tree's text and saves a screenshot,
# $(O)/about-memory.png. Skips (exit 0, "skipped: why") where no browser can
# be installed or started.
.PHONY: check-aboutmemory
check-aboutmemory: report-tool
	sh tools/check-aboutmemory.sh $(O)

install: install-report
install-report: report-tool
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/atomtab $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(REPORT_BIN) $(DESTDIR)$(BINDIR)/
	install -m 644 $(CORPUS) $(DESTDIR)$(DATADIR)/atomtab/
	install -m 644 tools/atomtab-report.1 $(DESTDIR)$(MANDIR)/man1/

uninstall: uninstall-report
uninstall-report:
	rm -f $(DESTDIR)$(BINDIR)/atomtab-report $(DESTDIR)$(DATADIR)/atomtab/nodejs-api-docs.atoms \
	      $(DESTDIR)$(MANDIR)/man1/atomtab-report.1
	rmdir $(DESTDIR)$(DATADIR)/atomtab 2>/dev/null || true   # empty once both uninstalls ran

# ---- bench/membytes: bytes per atom for atomtab, GLib and libxml2 ----
# Always links jemalloc: its stats.allocated is the common measure.
MEMBYTES := $(O)/bench/membytes
$(MEMBYTES): bench/membytes.c bench/tokens.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc $$(pkg-config --cflags glib-2.0 libxml-2.0) $< -o $@ \
	    $(STATIC) $$(pkg-config --libs glib-2.0 libxml-2.0) -lxxhash -ljemalloc -pthread

# membytes-libc: the same on the C library's malloc (glibc's mallinfo2).
MEMBYTES_LIBC := $(O)/bench/membytes-libc
$(MEMBYTES_LIBC): bench/membytes.c bench/tokens.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DMEMBYTES_LIBC -Isrc $$(pkg-config --cflags glib-2.0 libxml-2.0) $< -o $@ \
	    $(STATIC) $$(pkg-config --libs glib-2.0 libxml-2.0) $(LDLIBS)

.PHONY: membytes
membytes: report-tool
	@sh tools/deps.sh bench
	@$(MAKE) --no-print-directory $(MEMBYTES) $(if $(filter system,$(ALLOCATOR)),$(MEMBYTES_LIBC))
	$(MEMBYTES) $(CORPUS)
	@echo
	$(if $(filter system,$(ALLOCATOR)),$(MEMBYTES_LIBC) $(CORPUS),@echo "membytes-libc: only with ALLOCATOR=system")

# ---- bench: the multi-backend suite, threads, callgrind, code size ----
# make bench          atombench (atomtab, GLib, libxml2, naive) on the corpus
#                     and on a large-vocabulary file generated from the C
#                     headers in /usr/include (200k distinct identifiers)
# make bench-threads  atomthreads: 1..16 threads on one shared table
# make bench-callgrind  Ir per op (exact) for every backend and workload
# make bench-size     stripped sizes of libatomtab.so and a minimal program
# make bench-ab AB_A=REV AB_B=REV  two commits in one process, rounds
#                     alternated (tools/ab.sh, bench/abtest.c): B/A per
#                     workload on AB_FILES (default the corpus); WORK names
#                     the working tree
# Knobs: BENCH_ARGS (e.g. --json, --reps 9), THREADS_ARGS (--threads 1,2 --ms 500),
#        CALLGRIND_FILES (default the corpus; add $(BIG_TOKENS): minutes),
#        AB_ROUNDS (10), AB_WORKLOADS (stream,hit,hitrel,mix,mix2; mix2: mix on
#        two threads, CPU ns per op).
# Another bench joins `make bench` with a line `bench: bench-NAME`.
BENCH_DIR    := $(O)/bench
ATOMBENCH    := $(BENCH_DIR)/atombench
ATOMTHREADS  := $(BENCH_DIR)/atomthreads
GEN_TOKENS   := $(BENCH_DIR)/gen-tokens
BIG_TOKENS   := $(BENCH_DIR)/c-headers.tokens
BENCH_ARGS   ?=
THREADS_ARGS ?=

$(ATOMBENCH): bench/suite.c bench/naive.h bench/stats.h bench/tokens.h include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $$(pkg-config --cflags glib-2.0 libxml-2.0) $< -o $@ \
	    $(STATIC) $$(pkg-config --libs glib-2.0 libxml-2.0) -lxxhash -ljemalloc -pthread
$(ATOMTHREADS): bench/threads.c bench/tokens.h include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(TOOL_LDLIBS)
$(GEN_TOKENS): tools/gen-tokens.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@
# Deterministic for a given /usr/include: files in C-locale path order.
$(BIG_TOKENS): $(GEN_TOKENS)
	find /usr/include -name '*.h' -type f | LC_ALL=C sort | $(GEN_TOKENS) -d 200000 > $@.tmp
	mv $@.tmp $@

.PHONY: bench-tools bench-suite bench-threads bench-callgrind bench-size
bench: bench-suite
bench-tools: lib
	@sh tools/deps.sh bench
	@$(MAKE) --no-print-directory $(ATOMBENCH) $(ATOMTHREADS) $(BIG_TOKENS) $(CORPUS)
bench-suite: bench-tools
	$(ATOMBENCH) $(BENCH_ARGS) $(CORPUS) $(BIG_TOKENS)
bench-threads: bench-tools
	$(ATOMTHREADS) $(THREADS_ARGS) $(CORPUS)
CALLGRIND_FILES ?= $(CORPUS)
bench-callgrind: bench-tools
	@for f in $(CALLGRIND_FILES); do sh tools/bench-callgrind.sh $(ATOMBENCH) $$f || exit 1; done
bench-size: tests
	sh tools/codesize.sh $(O)
AB_A ?= HEAD
AB_B ?= WORK
AB_FILES ?= $(CORPUS)
AB_ROUNDS ?= 10
AB_WORKLOADS ?= stream,hit,hitrel,mix,mix2
.PHONY: bench-ab
bench-ab: $(AB_FILES)
	@for f in $(AB_FILES); do sh tools/ab.sh $(AB_A) $(AB_B) $$f $(AB_ROUNDS) $(AB_WORKLOADS) || exit 1; done

# ---- reliability: fuzzing, stress, hash flooding, valgrind ----
# make fuzz [FUZZ_TIME=60]   libFuzzer + ASan + UBSan (clang), seeds in
#                            test/fuzz/corpus, new inputs in $(O)/fuzz/corpus
# make stress [STRESS_SECONDS=300]   test_stress for a long run
# make bench-flood           colliding keys: random vs fixed seed
# make check-valgrind        every test under memcheck (ALLOCATOR=system)
# The fuzz target also builds without libFuzzer ($(O)/test/fuzz_replay),
# replaying the seeds and generated inputs in every `make test`.
FUZZ_TIME   ?= 60
FUZZ_JOBS   ?= 1
FUZZ_MAXLEN ?= 1024
FUZZ_ARGS   ?=
# seconds one input may take: a hang fails the run instead of stalling it
FUZZ_TIMEOUT ?= 30
FUZZ_CC     ?= clang
FUZZ_BIN    := $(O)/fuzz/fuzz_table
FUZZ_SRCS   := $(LIB_SRCS) $(O)/gen/atomtab_atoms.c test/fuzz/fuzz_table.c
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -I$(O)/gen -Isrc -pthread \
               -DATAB_VERSION_STRING='"$(VERSION)"' -fno-sanitize-recover=undefined \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-coverage=trace-cmp
REPLAY_BIN  := $(O)/test/fuzz_replay
# fuzz_table.c's own headers, and the host static sets it #includes
FUZZ_DEPS   := test/fuzz/fuzz_report.h test/fuzz/fuzz_host.h \
               $(O)/gen/test_host_atoms.c $(O)/gen/test_host2_atoms.c

.PHONY: fuzz fuzz-bin fuzz-replay stress bench-flood check-valgrind

$(FUZZ_BIN): $(FUZZ_SRCS) $(FUZZ_DEPS) src/*.h include/atomtab.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SRCS) -o $@ -lxxhash -pthread

fuzz-bin: lib   # the generated default set, made once by lib
	@sh tools/deps.sh fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BIN)

# Runs in $(O)/fuzz, where libFuzzer leaves crash files and job logs.
fuzz: fuzz-bin
	@mkdir -p $(O)/fuzz/corpus
	cd $(O)/fuzz && ./fuzz_table -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
	    -timeout=$(FUZZ_TIMEOUT) \
	    $(if $(filter-out 1,$(FUZZ_JOBS)),-jobs=$(FUZZ_JOBS) -workers=$(FUZZ_JOBS)) \
	    -max_len=$(FUZZ_MAXLEN) $(FUZZ_ARGS) corpus "$(CURDIR)/test/fuzz/corpus"

$(REPLAY_BIN): test/fuzz/fuzz_table.c test/fuzz/replay.h $(FUZZ_DEPS) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -DFUZZ_STANDALONE $< -o $@ $(STATIC) $(LDLIBS)

tests: fuzz-replay-bin
.PHONY: fuzz-replay-bin
fuzz-replay-bin: lib
	@$(MAKE) --no-print-directory $(REPLAY_BIN)
test: fuzz-replay
fuzz-replay: fuzz-replay-bin
	$(REPLAY_BIN) test/fuzz/corpus

# make fuzz-tools [FUZZ_TIME=60]   the tools' input parsers (genstatic
# lists, report token files): test/fuzz/fuzz_tools.c, seeds in
# test/fuzz/corpus-tools, new inputs in $(O)/fuzz-tools/corpus; its replay
# driver runs the seeds in every `make test`.
FUZZ_TOOLS_BIN    := $(O)/fuzz-tools/fuzz_tools
FUZZ_TOOLS_MAXLEN ?= 4096
TOOLS_REPLAY_BIN  := $(O)/test/fuzz_tools_replay
FUZZ_TOOLS_DEPS   := test/fuzz/fuzz_tools.c test/fuzz/replay.h tools/atomtab-genstatic.c \
                     tools/atomtab-report.c tools/datafile.h src/static_hash.h include/atomtab.h

.PHONY: fuzz-tools fuzz-tools-bin fuzz-tools-replay fuzz-tools-replay-bin
$(FUZZ_TOOLS_BIN): $(FUZZ_TOOLS_DEPS) $(FUZZ_SRCS) src/*.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Wno-unused-function $(FUZZ_SRCS:test/fuzz/fuzz_table.c=) \
	    test/fuzz/fuzz_tools.c -o $@ -lxxhash -pthread

fuzz-tools-bin: lib
	@sh tools/deps.sh fuzz
	@$(MAKE) --no-print-directory $(FUZZ_TOOLS_BIN)

fuzz-tools: fuzz-tools-bin
	@mkdir -p $(O)/fuzz-tools/corpus
	cd $(O)/fuzz-tools && ./fuzz_tools -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
	    -timeout=$(FUZZ_TIMEOUT) \
	    -max_len=$(FUZZ_TOOLS_MAXLEN) $(FUZZ_ARGS) corpus "$(CURDIR)/test/fuzz/corpus-tools"

$(TOOLS_REPLAY_BIN): $(FUZZ_TOOLS_DEPS) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Wno-unused-function -Isrc -DFUZZ_STANDALONE $< -o $@ $(STATIC) $(LDLIBS)

tests: fuzz-tools-replay-bin
fuzz-tools-replay-bin: lib
	@$(MAKE) --no-print-directory $(TOOLS_REPLAY_BIN)
test: fuzz-tools-replay
fuzz-tools-replay: fuzz-tools-replay-bin
	$(TOOLS_REPLAY_BIN) test/fuzz/corpus-tools

# make stress-hostile [STRESS_TIME=60] [STRESS_SAN=none|asan|tsan]
# test/stress_hostile.c: 32+ threads of every kind on tables whose
# allocators fail, membarrier off, checked at quiescent points. STRESS_SAN
# runs it from the meson builds .ci/run uses (build/asan: ASan+UBSan,
# build/tsan: ThreadSanitizer), set up when missing.
STRESS_TIME ?= 60
STRESS_SAN  ?= none
STRESS_HOSTILE := $(O)/test/stress_hostile
MESON_SAN_asan := -Db_sanitize=address,undefined -Db_lundef=false -Dallocator=system
MESON_SAN_tsan := -Db_sanitize=thread -Db_lundef=false
SAN_ENV_asan   := UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
SAN_ENV_tsan   := TSAN_OPTIONS=halt_on_error=1

$(STRESS_HOSTILE): test/stress_hostile.c test/test_u16.h $(STATIC) src/*.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc $< -o $@ $(STATIC) $(LDLIBS)

.PHONY: stress-hostile
stress-hostile: lib
ifeq ($(STRESS_SAN),none)
	@$(MAKE) --no-print-directory $(STRESS_HOSTILE)
	STRESS_TIME=$(STRESS_TIME) $(STRESS_HOSTILE)
else
	@sh tools/deps.sh meson
	@[ -f build/$(STRESS_SAN)/build.ninja ] || \
	    meson setup build/$(STRESS_SAN) $(MESON_SAN_$(STRESS_SAN)) >/dev/null
	ninja -C build/$(STRESS_SAN) stress_hostile >/dev/null
	STRESS_TIME=$(STRESS_TIME) $(SAN_ENV_$(STRESS_SAN)) build/$(STRESS_SAN)/stress_hostile
endif

# make stress-fallback [FALLBACK_ROUNDS=20000]
# test/stress_fallback.c: rounds of a solo thread's inserts while another
# thread ends its bias with membarrier marked failed; the end must wait
# for the insert in flight (the fallback fence). Built with the race
# tests' objects, for their pause point. About 13 ms a round here.
FALLBACK_ROUNDS ?= 20000
STRESS_FALLBACK := $(O)/test/stress_fallback
$(STRESS_FALLBACK): test/stress_fallback.c $(HOOK_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DATAB_TEST_HOOKS -Isrc $< -o $@ $(HOOK_OBJS) $(LDLIBS)

.PHONY: stress-fallback
stress-fallback: lib
	@$(MAKE) --no-print-directory $(STRESS_FALLBACK)
	$(STRESS_FALLBACK) $(FALLBACK_ROUNDS)

STRESS_SECONDS ?= 300
STRESS_THREADS ?= 16
stress: tests
	ATAB_STRESS_SECONDS=$(STRESS_SECONDS) ATAB_STRESS_THREADS=$(STRESS_THREADS) \
	    $(O)/test/test_stress

# ---- static atoms: generator, default set, host sets, benches ----
# tools/atomtab-genstatic turns a list (src/default.atoms) into a .c/.h pair
# in $(O)/gen: build outputs, never committed. BUILD_CC builds the generator
# for the machine running the build.
BUILD_CC   ?= $(CC)
GENSTATIC  := $(O)/atomtab-genstatic
GEN        := $(O)/gen
DEF_ATOMS  := $(GEN)/atomtab_atoms
DEF_ATOMS_O := $(O)/obj/atomtab_atoms.o
GEN_WERROR := -std=c11 -Wall -Wextra -Wpedantic -Werror

$(GENSTATIC): tools/atomtab-genstatic.c tools/datafile.h src/static_hash.h include/atomtab.h
	@mkdir -p $(dir $@)
	$(BUILD_CC) $(ALL_CFLAGS) -Isrc $< -o $@
# The default set's list beside the generator, where it looks for it to
# refuse host lists that repeat a default atom (installed: share/atomtab/).
$(O)/default.atoms: src/default.atoms
	@mkdir -p $(dir $@)
	cp $< $@

# One run writes both files (a pattern rule with two targets); each set
# names its list and options for both.
$(GEN)/%.c $(GEN)/%.h: $(GENSTATIC) $(O)/default.atoms
	@mkdir -p $(GEN)
	$(GENSTATIC) $(GENSTATIC_ARGS) $(GEN)/$*.c $(GEN)/$*.h
.PRECIOUS: $(GEN)/%.c $(GEN)/%.h
$(DEF_ATOMS).c $(DEF_ATOMS).h: src/default.atoms
$(DEF_ATOMS).c $(DEF_ATOMS).h: GENSTATIC_ARGS = --name atab_static_default --macro ATAB_ATOM --export --no-default src/default.atoms

# The generated code compiles with -Wall -Wextra -Werror.
$(DEF_ATOMS_O): $(DEF_ATOMS).c $(DEF_ATOMS).h include/atomtab.h
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) $(GEN_WERROR) -c $< -o $@
$(O)/obj/static.o: $(DEF_ATOMS).h
$(STATIC) $(SHARED): $(DEF_ATOMS_O)

# Host sets for test_static (one overlaps the default set, one the other),
# also compiled alone with -Werror; test_static includes their .c files.
$(GEN)/test_host_atoms.c $(GEN)/test_host_atoms.h: test/host.atoms
$(GEN)/test_host_atoms.c $(GEN)/test_host_atoms.h: GENSTATIC_ARGS = --name test_host_set --no-default test/host.atoms
$(GEN)/test_host2_atoms.c $(GEN)/test_host2_atoms.h: test/host2.atoms
$(GEN)/test_host2_atoms.c $(GEN)/test_host2_atoms.h: GENSTATIC_ARGS = --name test_host2_set --macro HOST2 test/host2.atoms
$(GEN)/%.werror.o: $(GEN)/%.c $(GEN)/%.h
	$(CC) $(ALL_CFLAGS) $(GEN_WERROR) -c $< -o $@
$(O)/test/test_static: $(GEN)/test_host_atoms.werror.o $(GEN)/test_host2_atoms.werror.o
# Identifiers that match the generator's own names still give C that compiles.
$(GEN)/collide_atoms.c $(GEN)/collide_atoms.h: test/collide.atoms
$(GEN)/collide_atoms.c $(GEN)/collide_atoms.h: GENSTATIC_ARGS = --name collide --no-default test/collide.atoms
$(O)/test/test_genstatic: $(GEN)/collide_atoms.werror.o

install: install-static
uninstall: uninstall-static
.PHONY: install-static uninstall-static genstatic
genstatic: $(GENSTATIC)
MANDIR ?= $(DATADIR)/man
install-static: lib   # lib's own make builds the generator: not again beside it (-j)
	@$(MAKE) --no-print-directory $(GENSTATIC)
	install -d $(DESTDIR)$(INCDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/atomtab \
	    $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(DEF_ATOMS).h $(DESTDIR)$(INCDIR)/
	install -m 755 $(GENSTATIC) $(DESTDIR)$(BINDIR)/
	install -m 644 src/default.atoms $(DESTDIR)$(DATADIR)/atomtab/
	install -m 644 tools/atomtab-genstatic.1 $(DESTDIR)$(MANDIR)/man1/
uninstall-static:
	rm -f $(DESTDIR)$(INCDIR)/atomtab_atoms.h $(DESTDIR)$(BINDIR)/atomtab-genstatic \
	      $(DESTDIR)$(DATADIR)/atomtab/default.atoms $(DESTDIR)$(MANDIR)/man1/atomtab-genstatic.1
	rmdir $(DESTDIR)$(DATADIR)/atomtab 2>/dev/null || true   # empty once both uninstalls ran

# bench-static: table creation cost with none / default / 10k sets, the
# corpus's static-hit share, static vs dynamic hits (bench/static.sh).
BENCH10K := $(GEN)/bench10k.atoms
$(BENCH10K):
	@mkdir -p $(dir $@)
	awk 'BEGIN { for (i = 0; i < 10000; i++) printf "bench-static-%d s%d\n", i, i }' > $@
$(GEN)/bench10k_atoms.c $(GEN)/bench10k_atoms.h: $(BENCH10K)
$(GEN)/bench10k_atoms.c $(GEN)/bench10k_atoms.h: GENSTATIC_ARGS = --name bench10k $(BENCH10K)
$(O)/bench/static_new: bench/static_new.c $(GEN)/bench10k_atoms.c $(GEN)/bench10k_atoms.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< $(GEN)/bench10k_atoms.c -o $@ $(STATIC) $(TOOL_LDLIBS)
$(O)/bench/static_hits: bench/static_hits.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(TOOL_LDLIBS)

.PHONY: bench-static
bench: bench-static
bench-static: report-tool
	@sh tools/deps.sh valgrind
	@$(MAKE) --no-print-directory $(O)/bench/static_new $(O)/bench/static_hits
	sh bench/static.sh $(O) $(CORPUS)

# bench/flood: brute-forced colliding keys for a known seed vs the default
# random seed (ratios, same run), then instructions per op under callgrind
# for the four cases over the saved keys.
FLOOD      := $(O)/bench/flood
FLOOD_ARGS ?= --attack 2000 --bits 12 --many 1000000 --manybits 4
$(FLOOD): bench/flood.c $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc $< -o $@ $(STATIC) $(TOOL_LDLIBS)

bench-flood: lib
	@sh tools/deps.sh valgrind
	@$(MAKE) --no-print-directory $(FLOOD)
	$(FLOOD) $(FLOOD_ARGS) --save $(O)/bench/flood-keys.txt
	@for c in attack-fixed random-fixed attack-default random-default; do \
	    valgrind --tool=callgrind --toggle-collect='measure*' \
	        --callgrind-out-file=$(O)/bench/callgrind.flood.$$c \
	        $(FLOOD) --keys $(O)/bench/flood-keys.txt --case $$c 2>&1 | \
	    awk -v c=$$c '/^flood: case/ { ops = $$6 } /Collected/ { ir = $$4 } \
	        END { printf "callgrind %-15s %12d instructions, %8.1f per op\n", c, ir, ir / ops }'; \
	done

# Every test (and the fuzz replay, the README example) under memcheck, in a
# system-allocator build so memcheck sees every block. Smaller workloads
# under valgrind: ATAB_OOM_KEYS, ATAB_STRESS_SECONDS, FUZZ_REPLAY_RANDOM,
# ATAB_CHURN_OPS, ATAB_FORKS, ATAB_THREADS_SHORT.
VG_O     ?= $(O)-valgrind
VALGRIND ?= valgrind --error-exitcode=1 --leak-check=full --quiet
VG_ENV   ?= ATAB_OOM_KEYS=60 ATAB_STRESS_SECONDS=1 FUZZ_REPLAY_RANDOM=40 ATAB_CHURN_OPS=100000 \
           ATAB_FORKS=10 ATAB_THREADS_SHORT=60
check-valgrind:
	@sh tools/deps.sh valgrind
	@$(MAKE) --no-print-directory O=$(VG_O) ALLOCATOR=system tests
	@fail=0; \
	for t in $(TESTS:%=$(VG_O)/test/%) $(HOOK_TESTS:%=$(VG_O)/test/%) $(VG_O)/test/readme_example \
	         "$(VG_O)/test/fuzz_replay test/fuzz/corpus"; do \
	    name=$$(basename $${t%% *}); echo "== valgrind $$t"; \
	    if [ $$name = test_fork ]; then \
	        echo "   skipped: a forked child under memcheck reports the parent's thread"; \
	        echo "   stacks as lost and exits 1 (test_fork runs under ASan and TSan)"; continue; fi; \
	    if ! $(VG_ENV) $(VALGRIND) $$t > $(VG_O)/$$name.valgrind.log 2>&1; then \
	        fail=1; cat $(VG_O)/$$name.valgrind.log; fi; \
	done; \
	if [ $$fail = 0 ]; then echo "valgrind: every test clean"; fi; exit $$fail

# ---- external strings: bench/idread (C) and the Node-API addon ----
IDREAD := $(O)/bench/idread
$(IDREAD): bench/idread.c include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(TOOL_LDLIBS)

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

$(O)/node/obj/%.o: src/%.c src/*.h include/atomtab.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@
ADDON_OBJS += $(O)/node/obj/atomtab_atoms.o   # the default static set
$(O)/node/obj/atomtab_atoms.o: $(DEF_ATOMS).c $(DEF_ATOMS).h include/atomtab.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@
$(O)/node/obj/static.o: $(DEF_ATOMS).h
$(O)/node/libatomtab-system.a: $(ADDON_OBJS)
	rm -f $@ && ar rcs $@ $^
$(ADDON): bindings/node/atomtab_node.c include/atomtab.h $(ADDON_LIB)
	$(CC) $(ADDON_CFLAGS) -shared -Wl,-z,nodelete $< -o $@ $(ADDON_LIB) -lxxhash -pthread

.PHONY: node-addon test-node bench-node
node-addon: lib   # lib generates atomtab_atoms.c/.h first: no second generator run beside it
	@if $(HAVE_NODE); then $(MAKE) --no-print-directory $(ADDON); \
	else echo "node-addon: skipped (no $(NODE) or no $(NODE_INC)/node_api.h)"; fi
test: test-node
test-node: node-addon
	@if $(HAVE_NODE); then echo "== bindings/node (node --test)"; \
	  ATOMTAB_NODE="$(abspath $(ADDON))" $(NODE) --expose-gc --test bindings/node/test/; \
	else echo "test-node: skipped (no $(NODE) or no $(NODE_INC)/node_api.h)"; fi
# The npm package as a user installs it (tools/check-npm.sh): packed, then
# installed offline from the tarball into a scratch project, where node-gyp
# builds it, and its tests run there. Skipped without node, npm or headers.
# node-gyp builds it with its own flags, so only the default build's `make
# test` runs it (not ALLOCATOR=jemalloc or CFLAGS=... variants).
.PHONY: test-node-pack
ifeq ($(ALLOCATOR)$(CFLAGS),system)
test: test-node-pack
endif
test-node-pack: deps-test
	sh tools/check-npm.sh $(O)/npm-check
bench: bench-node
bench-node: node-addon
	@if $(HAVE_NODE); then ATOMTAB_NODE="$(abspath $(ADDON))" $(NODE) bench/node-idread.js; \
	else echo "bench-node: skipped (no $(NODE) or no $(NODE_INC)/node_api.h)"; fi

# ---- lifecycle benches: string_cache, reader latency, probe tails ----
# make bench-lifecycle  atomthreads and bench/sc (Servo's string_cache, Rust)
#                       on hit, same, samedyn, mix at 1, 2 and 16 threads,
#                       then atomlatency and bench/sc --latency (one reader's
#                       batches of 64 hits, alone and beside a churning
#                       thread); prints the lifecycle goals as same-run ratios
#                       (tools/bench-lifecycle.sh), keeps the JSON in
#                       $(O)/bench/lifecycle. Part of `make bench`.
# make bench-probes     bench/probes.c under callgrind: Ir per repeated hit of
#                       1,000 strings interned after the corpus warm-up
#                       (tools/probes-callgrind.sh); dumps in $(O)/bench/probes
# bench/sc (string_cache 0.11, ustr, lasso: bench/sc/Cargo.lock) is built
# by rustup's cargo, $(CARGO) (~/.cargo/bin/cargo; string_cache 0.11 needs
# rustc 1.85, so never Debian's cargo 1.63) into $(O)/bench/sc; with no
# such cargo, or when its build fails, the Rust side is skipped with a
# message. Benchmarks only: make test and CI need no Rust.
# Knobs: LC_THREADS (1,2,16), LC_MODES, LC_MS (300), LC_REPS (3), LC_ROUNDS (3),
#        LC_BATCHES (2000000), LC_CHURNERS (1), LC_PIN1 (the CPU of the pinned
#        one-thread runs; none); PROBES_ARGS (--strings N --reps N --seed N).
ATOMLATENCY := $(BENCH_DIR)/atomlatency
ATOMPROBES  := $(BENCH_DIR)/atomprobes
SC_TARGET   := $(BENCH_DIR)/sc
SC_BENCH    := $(SC_TARGET)/release/atomtab-sc-bench
CARGO       ?= $(HOME)/.cargo/bin/cargo
PROBES_ARGS ?=

$(ATOMLATENCY): bench/latency.c bench/tokens.h include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDLIBS)
# Includes <valgrind/callgrind.h> when present (deps.sh valgrind installs it).
$(ATOMPROBES): bench/probes.c bench/tokens.h include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDLIBS)

# cargo decides what to rebuild; a binary it could not rebuild is removed,
# so a stale one never runs.
.PHONY: sc-bench bench-lifecycle bench-probes
sc-bench:
	@if ! [ -x "$(CARGO)" ]; then rm -f $(SC_BENCH); \
	    echo "bench/sc: no rustup cargo at $(CARGO) (rustup.rs; CARGO=path to choose one):" \
	        "string_cache, ustr and lasso SKIPPED"; \
	elif ! CARGO_TARGET_DIR="$(abspath $(SC_TARGET))" $(CARGO) build --release --locked -q \
	    --manifest-path bench/sc/Cargo.toml; then rm -f $(SC_BENCH); \
	    echo "bench/sc: $(CARGO) could not build it: string_cache, ustr and lasso SKIPPED"; fi

# atomthreads on the C library's malloc, as bench/sc (Rust's System
# allocator) and atomlatency run: the ratios against string_cache compare
# the tables, not jemalloc with glibc's malloc
ATOMTHREADS_LIBC := $(BENCH_DIR)/atomthreads-libc
$(ATOMTHREADS_LIBC): bench/threads.c bench/tokens.h include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDLIBS)
bench: bench-lifecycle
bench-lifecycle: report-tool sc-bench
	@[ "$(ALLOCATOR)" = system ] || { echo "bench-lifecycle: ALLOCATOR=system only (string_cache runs on the C library's malloc)"; exit 1; }
	@$(MAKE) --no-print-directory $(ATOMTHREADS_LIBC) $(ATOMLATENCY)
	sh tools/bench-lifecycle.sh $(ATOMTHREADS_LIBC) $(ATOMLATENCY) \
	    "$$(test -x $(SC_BENCH) && echo $(SC_BENCH))" $(CORPUS) $(BENCH_DIR)/lifecycle

# make bench-peers  bench/peers.c (atompeers): atomtab's default build beside
#                   string_cache, ustr, lasso (bench/sc), GLib, libxml2 and
#                   naive on one thread, every backend on glibc malloc: hit,
#                   stream, hit+release, mix and overhead bytes per atom on
#                   the corpus and $(BIG_TOKENS), median of 5 repeats,
#                   versions and machine printed beside the figures.
#                   PEERS_ARGS: --quick (one short repeat), --json, --reps N.
#                   Pinned to CPU 1 (taskset) where there are two or more.
ATOMPEERS  := $(BENCH_DIR)/atompeers
PEERS_ARGS ?=
$(ATOMPEERS): bench/peers.c bench/naive.h bench/pmu.h bench/stats.h bench/tokens.h include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $$(pkg-config --cflags glib-2.0 libxml-2.0) $< -o $@ \
	    $(STATIC) $$(pkg-config --libs glib-2.0 libxml-2.0) $(LDLIBS)

.PHONY: bench-peers
bench: bench-peers
bench-peers: bench-tools sc-bench
	@[ "$(ALLOCATOR)" = system ] || { echo "bench-peers: ALLOCATOR=system only (B/atom is glibc's mallinfo2)"; exit 1; }
	@$(MAKE) --no-print-directory $(ATOMPEERS)
	$$(command -v taskset >/dev/null 2>&1 && [ "$$(nproc)" -gt 1 ] && echo taskset -c 1) \
	    $(ATOMPEERS) $(PEERS_ARGS) --sc "$$(test -x $(SC_BENCH) && echo $(SC_BENCH))" \
	    $(CORPUS) $(BIG_TOKENS)

# make device-bundle  build/device/ (DEVICE_DIR): what a bare 16-core x86-64
#                     machine with no compiler needs to measure atomtab and
#                     its peers: static binaries (the C benches linked
#                     -static on glibc's malloc, bench/sc with crt-static),
#                     both corpora, bench-lifecycle.sh and run.sh
#                     (tools/device-run.sh). `build/device/run.sh OUTDIR`
#                     writes its results there; SCALE=0.05 for a smoke run.
#                     DEVICE_AB: pairs NAME=REV_A:REV_B of builds to time
#                     against each other there (tools/ab.sh, linked
#                     -static; run.sh writes ab.txt); a pair whose commits
#                     this clone lacks is left out, with a message.
DEVICE_DIR   ?= build/device
DEVICE_BINS  := $(addprefix $(DEVICE_DIR)/,atomthreads atomlatency atompeers atomgracecount atomurcu)
DEVICE_SC    := $(DEVICE_DIR)/atomtab-sc-bench
DEVICE_RUST_TARGET ?= x86_64-unknown-linux-gnu
DEVICE_AB    ?= self=HEAD:HEAD plain=proto-xeon-plain^:proto-xeon-plain \
                nogive=proto-xeon-nogive^:proto-xeon-nogive \
                ring=proto-victim^:proto-victim-ring \
                cache2k=proto-xeon-cache2k^:proto-xeon-cache2k \
                grow=proto-xeon-grow^:proto-xeon-grow \
                queue256=proto-xeon-queue256^:proto-xeon-queue256 \
                solo=f5685d3:20df1a3
$(DEVICE_DIR)/atomthreads: bench/threads.c bench/tokens.h include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -static -s $< -o $@ $(STATIC) -lxxhash -pthread
$(DEVICE_DIR)/atomlatency: bench/latency.c bench/tokens.h include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -static -s $< -o $@ $(STATIC) -lxxhash -pthread
$(DEVICE_DIR)/atomgracecount: bench/gracecount.c include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -static -s $< -o $@ -Wl,--wrap=syscall $(STATIC) -lxxhash -pthread
$(DEVICE_DIR)/atomurcu: bench/urcu.c include/atomtab.h $(STATIC)
	@sh tools/deps.sh urcu
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -static -s $< -o $@ $(STATIC) -lxxhash -lurcu-memb -lurcu-common -pthread
# libxml2 without ICU (bench/icu-stubs.c says why): a 4 MB binary, not 35.
# libxml2's threads.o calls pthreads through weak references, which a
# static link leaves at 0 unless something pulls the functions in: -u does.
DEVICE_XML_PTHREAD := cond_destroy cond_init cond_signal cond_wait equal getspecific \
    key_create key_delete mutex_destroy mutex_init mutex_lock mutex_unlock once self setspecific
$(DEVICE_DIR)/atompeers: bench/peers.c bench/icu-stubs.c bench/naive.h bench/pmu.h bench/stats.h bench/tokens.h \
                         include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -static -s $$(pkg-config --cflags glib-2.0 libxml-2.0) $< \
	    bench/icu-stubs.c -o $@ $(STATIC) \
	    $$(pkg-config --static --libs glib-2.0 libxml-2.0 | sed 's/-licu[a-z0-9]*//g') \
	    -lxxhash -pthread $(DEVICE_XML_PTHREAD:%=-Wl,-u,pthread_%)

.PHONY: device-bundle device-sc
device-sc:
	@[ -x "$(CARGO)" ] || { echo "device-bundle: no rustup cargo at $(CARGO) (CARGO=path)"; exit 1; }
	@mkdir -p $(DEVICE_DIR)
	RUSTFLAGS="-C target-feature=+crt-static" CARGO_PROFILE_RELEASE_DEBUG=0 \
	    CARGO_TARGET_DIR="$(abspath $(O)/device-sc)" $(CARGO) build --release --locked -q \
	    --target $(DEVICE_RUST_TARGET) --manifest-path bench/sc/Cargo.toml
	cp $(O)/device-sc/$(DEVICE_RUST_TARGET)/release/atomtab-sc-bench $(DEVICE_SC)
	strip $(DEVICE_SC)

device-bundle: bench-tools device-sc
	@[ "$(ALLOCATOR)" = system ] || { echo "device-bundle: ALLOCATOR=system only"; exit 1; }
	@$(MAKE) --no-print-directory $(DEVICE_BINS)
	cp $(CORPUS) $(BIG_TOKENS) tools/bench-lifecycle.sh $(DEVICE_DIR)/
	cp tools/device-run.sh $(DEVICE_DIR)/run.sh && chmod +x $(DEVICE_DIR)/run.sh
	rm -f $(DEVICE_DIR)/ab-* $(DEVICE_DIR)/ba-*
	cp tools/ab-ratio.awk $(DEVICE_DIR)/
	@for p in $(DEVICE_AB); do n=$${p%%=*} r=$${p#*=}; a=$${r%%:*} b=$${r#*:}; \
	    if git rev-parse -q --verify "$$a^{commit}" >/dev/null && \
	       git rev-parse -q --verify "$$b^{commit}" >/dev/null; then \
	        AB_STATIC=$(DEVICE_DIR)/$$n sh tools/ab.sh "$$a" "$$b" - || exit 1; \
	    else echo "device-bundle: A/B $$n left out: no commit $$a or $$b here"; fi; done
	{ echo "atomtab $(VERSION), commit $$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
	      "$$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo '(dirty)')"; \
	  echo "built $$(date -u '+%Y-%m-%d %H:%M UTC') on $$(uname -sr), $$($(CC) --version | head -n 1)"; \
	  $(DEVICE_SC) --versions; \
	  echo "GLib $$(pkg-config --modversion glib-2.0), libxml2 $$(pkg-config --modversion libxml-2.0)" \
	       "(static); C benches -static on glibc's malloc"; } > $(DEVICE_DIR)/VERSIONS
	@for f in $(DEVICE_BINS) $(DEVICE_SC); do file $$f | grep -q 'static-pie linked\|statically linked' || \
	    { echo "device-bundle: $$f is not static"; exit 1; }; done
	@du -sh $(DEVICE_DIR)

bench-probes: report-tool
	@sh tools/deps.sh valgrind
	@$(MAKE) --no-print-directory $(ATOMPROBES) $(ATOMPROBELEN)
	sh tools/probes-callgrind.sh $(ATOMPROBES) $(CORPUS) $(BENCH_DIR)/probes -- $(PROBES_ARGS)
	$(ATOMPROBELEN) $(CORPUS)

# What one transient atom costs (new string, interned, released, its share
# of the sweep): ns here, instructions under callgrind (one run a table
# seed, SEEDS="1 2 3 4 5": the median over them is the figure).
ATOMTRANSIENT := $(BENCH_DIR)/atomtransient
$(ATOMTRANSIENT): bench/transient.c bench/tokens.h include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDLIBS)

.PHONY: bench-transient
bench: bench-transient
bench-transient: report-tool
	@sh tools/deps.sh valgrind
	@$(MAKE) --no-print-directory $(ATOMTRANSIENT)
	$(ATOMTRANSIENT) $(CORPUS)
	sh tools/transient-callgrind.sh $(ATOMTRANSIENT) $(CORPUS)

# What one membarrier (a grace period's barrier) costs on this machine,
# with no other thread running and with one.
ATOMGRACECOST := $(BENCH_DIR)/atomgracecost
$(ATOMGRACECOST): bench/gracecost.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ -pthread

.PHONY: bench-grace
bench: bench-grace
bench-grace: $(ATOMGRACECOST)
	$(ATOMGRACECOST)

# Grace periods (membarrier calls) per 1,000 transient atoms at 1, 2 and
# 16 threads, counted by wrapping the library's syscall() at link time
# (bench/gracecount.c); the library's code is the one every build runs.
ATOMGRACECOUNT := $(BENCH_DIR)/atomgracecount
GRACECOUNT_ARGS ?=
$(ATOMGRACECOUNT): bench/gracecount.c include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ -Wl,--wrap=syscall $(STATIC) $(LDLIBS)

.PHONY: bench-gracecount
bench: bench-gracecount
bench-gracecount: lib
	@$(MAKE) --no-print-directory $(ATOMGRACECOUNT)
	$(ATOMGRACECOUNT) $(GRACECOUNT_ARGS)

# Atomic read-modify-writes per transient atom, exactly: callgrind's
# per-instruction counts joined with objdump's lock-prefixed instructions
# (tools/atomics-callgrind.sh), over atomgracecount's workload linked
# -no-pie, at 1 and 2 threads (ATOMICS_THREADS).
ATOMGRACECOUNT_NOPIE := $(BENCH_DIR)/atomgracecount-nopie
ATOMICS_THREADS ?= 1 2
$(ATOMGRACECOUNT_NOPIE): bench/gracecount.c include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -no-pie $< -o $@ -Wl,--wrap=syscall $(STATIC) $(LDLIBS)

.PHONY: bench-atomics
bench: bench-atomics
bench-atomics: lib
	@sh tools/deps.sh valgrind
	@$(MAKE) --no-print-directory $(ATOMGRACECOUNT_NOPIE)
	@for n in $(ATOMICS_THREADS); do \
	    sh tools/atomics-callgrind.sh $(ATOMGRACECOUNT_NOPIE) $$n 100000 || exit 1; done

# One grace period of ours (atab__synchronize, from the static library)
# against liburcu-memb's synchronize_rcu and call_rcu, with 1, 2 and 16
# readers in sections (bench/urcu.c; liburcu-dev from Debian, bench only:
# the library does not link it).
ATOMURCU := $(BENCH_DIR)/atomurcu
URCU_ARGS ?=
$(ATOMURCU): bench/urcu.c include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(STATIC) $(LDLIBS) -lurcu-memb -lurcu-common

.PHONY: bench-urcu
bench: bench-urcu
bench-urcu: lib
	@sh tools/deps.sh urcu
	@$(MAKE) --no-print-directory $(ATOMURCU)
	$(ATOMURCU) $(URCU_ARGS)

# Where keys sit (groups a hit reads), from the table's internals.
ATOMPROBELEN := $(BENCH_DIR)/atomprobelen
$(ATOMPROBELEN): bench/probelen.c bench/tokens.h src/*.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc $< -o $@ $(STATIC) $(LDLIBS)

# ---- C++: include/atomtab.hpp (installed) and its test, -std=c++17 with
# -Wall -Wextra -pedantic as errors ----
CXX_TEST       := $(O)/test/test_cpp
CXX_TEST_FLAGS := -std=c++17 -Wall -Wextra -pedantic -Werror -D_GNU_SOURCE $(OPT) -Iinclude -pthread
$(CXX_TEST): test/test_cpp.cpp include/atomtab.hpp include/atomtab.h $(STATIC)
	@mkdir -p $(dir $@)
	$(CXX) $(CXX_TEST_FLAGS) $(CXXFLAGS) $< -o $@ $(STATIC) -lcmocka $(LDLIBS)

.PHONY: cxx-test-bin test-cxx install-hpp uninstall-hpp
tests: cxx-test-bin
cxx-test-bin: deps-test lib
	@$(MAKE) --no-print-directory $(CXX_TEST)
test: test-cxx
test-cxx: cxx-test-bin
	@echo "== $(CXX_TEST)"; $(CXX_TEST)
install: install-hpp
install-hpp:
	install -d $(DESTDIR)$(INCDIR)
	install -m 644 include/atomtab.hpp $(DESTDIR)$(INCDIR)/
uninstall: uninstall-hpp
uninstall-hpp:
	rm -f $(DESTDIR)$(INCDIR)/atomtab.hpp

# ---- charts: docs/plots/*.svg from the benchmarks' --json ----
# make bench-plots       runs idread, node-idread (when node is there),
#                        atombench, atompeers, atomthreads and bench/sc (when
#                        rustup's cargo built it), membytes and membytes-libc
#                        with modest settings (about three minutes on a
#                        2-core machine;
#                        tools/bench-plots.sh: PLOTS_* knobs lengthen them),
#                        keeps their JSON in $(PLOTS_JSON) and a copy beside
#                        the charts, $(PLOTS_OUT)/data, then draws the charts
# make bench-plots-draw  draws them again from $(PLOTS_DATA), running nothing
# make test-plots        draws test/plots' tiny fixture (part of make test)
# Drawing is tools/bench-plots.py: python3 reads the JSON, gnuplot draws
# (tools/plots/*.gp); tools/deps.sh plots installs both.
PLOTS_JSON ?= $(BENCH_DIR)/plots
PLOTS_OUT  ?= docs/plots
PLOTS_DATA ?= $(PLOTS_OUT)/data

.PHONY: bench-plots bench-plots-draw test-plots
bench-plots: bench-tools sc-bench node-addon
	@sh tools/deps.sh plots
	@$(MAKE) --no-print-directory $(IDREAD) $(MEMBYTES) $(ATOMPEERS) \
	    $(if $(filter system,$(ALLOCATOR)),$(MEMBYTES_LIBC))
	IDREAD=$(IDREAD) ATOMBENCH=$(ATOMBENCH) ATOMPEERS=$(ATOMPEERS) ATOMTHREADS=$(ATOMTHREADS) \
	    MEMBYTES=$(MEMBYTES) \
	    MEMBYTES_LIBC=$(if $(filter system,$(ALLOCATOR)),$(MEMBYTES_LIBC)) \
	    SC_BENCH="$$(test -x $(SC_BENCH) && echo $(SC_BENCH))" \
	    NODE_ADDON="$$($(HAVE_NODE) && echo $(ADDON))" NODE=$(NODE) CC="$(CC)" \
	    CORPUS=$(CORPUS) BIG_TOKENS=$(BIG_TOKENS) sh tools/bench-plots.sh $(PLOTS_JSON)
	mkdir -p $(PLOTS_OUT)/data && rm -f $(PLOTS_OUT)/data/*.json
	cp $(PLOTS_JSON)/*.json $(PLOTS_OUT)/data/
	python3 tools/bench-plots.py $(PLOTS_OUT)/data $(PLOTS_OUT)

bench-plots-draw:
	@sh tools/deps.sh plots
	python3 tools/bench-plots.py $(PLOTS_DATA) $(PLOTS_OUT)

# Seconds; skipped with a message where gnuplot cannot be installed.
test: test-plots
test-plots: deps-test
	@if sh tools/deps.sh plots; then sh tools/check-plots.sh test/plots $(O)/test/plots; \
	else echo "test-plots: SKIPPED (gnuplot or python3 could not be installed)"; fi
