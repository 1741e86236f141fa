# Thin wrapper over CMake. `make demo` and `make test` do all the set-up on a fresh
# Debian/Ubuntu machine (scripts/install-deps installs what is missing).
BUILD      ?= build
TEST_BUILD ?= build-test
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_GEN  := -G Ninja
# ccache, where installed, speeds up rebuilds; a clean machine (CI) builds without it.
CCACHE     := $(shell command -v ccache 2>/dev/null)
ifneq ($(CCACHE),)
CMAKE_GEN  += -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE)
endif

.PHONY: all deps deps-build build demo test lint tidy test-fast test-asan bench fuzz clean install uninstall deb test-deb test-arm64

all: build

# Two sets of packages: `deps-build` for building and the demo, `deps` for everything the
# tests, the benchmarks and the linters also need (scripts/install-deps).
deps-build:
	@scripts/install-deps build

deps:
	@scripts/install-deps test

# A unity build (one compile per source folder, cmake/unity.cmake) at -O2 with line tables
# (-g1): the demo on a fresh clone compiles 18 library groups instead of 190 files, and full
# debug information was a fifth of that; the package is stripped anyway (docs/install.md,
# "Build times").
$(BUILD)/build.ninja: | deps-build
	@cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DHEADROOM_UNITY=ON >/dev/null

# Without GoogleTest (the build set only) this builds the program and not its tests.
build: deps-build $(BUILD)/build.ninja
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: will a 70B QLoRA fit on this machine's live memory? On a small machine the
# verdict is "does not fit" (exit 1): the demo still succeeds.
demo: deps-build $(BUILD)/build.ninja
	@cmake --build $(BUILD) -j $(JOBS) --target headroom
	@$(BUILD)/headroom plan llama-3.1-70b --method qlora; rc=$$?; \
	  if [ $$rc -eq 0 ] || [ $$rc -eq 1 ]; then exit 0; else exit $$rc; fi

# All tests: the lint rules, the normal build, then the same tests under ASan + UBSan.
test: lint test-fast test-asan

# The g++ half builds in its own folder at -Og with line tables only: the tests' behaviour does
# not depend on -O2, and on CI's two cores that build takes about half the time of -O2 -g
# (docs/install.md, "Build times"). `make build` and `make bench` keep RelWithDebInfo.
$(TEST_BUILD)/build.ninja: | deps
	@cmake -S . -B $(TEST_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG="-Og -g1" -DHEADROOM_UNITY=ON >/dev/null

test-fast: deps $(TEST_BUILD)/build.ninja
	@cmake --build $(TEST_BUILD) -j $(JOBS)
	@cd $(TEST_BUILD) && ctest --output-on-failure -j $(JOBS)

# clang for the sanitizer build: it compiles this tree in half the time g++ takes under ASan
# (6 min against 12 on two cores), which keeps `make test` inside CI's 30 minutes; the normal
# build stays on g++, so both compilers build the tree.
$(ASAN_BUILD)/build.ninja: | deps
	@CXX=clang++ cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug -DHEADROOM_SANITIZE=ON \
	  -DHEADROOM_BENCH=OFF -DHEADROOM_UNITY=ON >/dev/null

# The tests labelled "slow" run once, in the g++ half: each has a faster test of the same code
# path that runs here (CMakeLists.txt; docs/install.md, "What the ASan half leaves out").
test-asan: deps $(ASAN_BUILD)/build.ninja
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -LE slow

# Install (PREFIX, DESTDIR as usual); uninstall removes exactly what install wrote.
PREFIX ?= /usr/local
install: build
	@DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)

uninstall:
	@test -f $(BUILD)/install_manifest.txt || { echo "nothing installed from $(BUILD)"; exit 1; }
	@sed 's|^|$(DESTDIR)|' $(BUILD)/install_manifest.txt | xargs -d '\n' rm -f --
	@echo "removed $$(wc -l < $(BUILD)/install_manifest.txt) files"

# The Debian package (CPack, prefix /usr): build/package/headroom_VERSION_ARCH.deb.
deb: build
	@cd $(BUILD) && cpack -G DEB
	@ls $(BUILD)/package/*.deb

# The package checked with dpkg: control fields, contents, install and remove in a scratch
# root (scripts/test-deb; add --system there to install on this machine for real).
test-deb: build
	@scripts/test-deb $(BUILD)

# aarch64 (DGX OS): cross-compile with Debian's g++-aarch64-linux-gnu and run the unit tests
# under qemu-user-static (scripts/install-arm64-deps; timing in docs/install.md). Not part of
# `make test`: on two cores it takes longer than CI allows.
ARM64_BUILD ?= build-arm64
test-arm64:
	@scripts/install-arm64-deps
	@cmake -S . -B $(ARM64_BUILD) $(CMAKE_GEN) -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEADROOM_BENCH=OFF >/dev/null
	@cmake --build $(ARM64_BUILD) -j $(JOBS)
	@file -L $(ARM64_BUILD)/headroom | grep -q 'ARM aarch64' || { echo "not an aarch64 binary"; exit 1; }
	@cd $(ARM64_BUILD) && ctest --output-on-failure -j $(JOBS)

bench: deps $(BUILD)/build.ninja
	@cmake -S . -B $(BUILD) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@$(BUILD)/bench/planner_accuracy bench/data/planner_truth_dev.csv
	@$(BUILD)/bench/plan_speed

fuzz: deps
	@CXX=clang++ cmake -S . -B build-fuzz $(CMAKE_GEN) -DHEADROOM_FUZZ=ON -DHEADROOM_BENCH=OFF \
	  -DHEADROOM_SANITIZE=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz

# Formatting and the layer rules a grep can check (scripts/lint); CI runs it before the tests.
lint: deps
	@scripts/lint

# clang-tidy's short list (.clang-tidy) over every library and test source, with the
# normal build's compile_commands.json. Not in `make test`: it takes about as long as a
# build on two cores; run it before a change that touches many files.
tidy: deps $(BUILD)/build.ninja
	@run-clang-tidy -p $(BUILD) -quiet 'src/' >$(BUILD)/tidy.log 2>&1 || \
	  { grep -E 'warning:|error:' $(BUILD)/tidy.log; echo "tidy: see $(BUILD)/tidy.log"; exit 1; }
	@echo "tidy: clean"
