# zlcore's front door. `make demo` and `make test` work on a fresh Debian 12
# machine as root: each installs what is missing from Debian packages first.
BUILD    ?= build
SAN      ?= build-san
FUZZ_SECONDS ?= 60
PREFIX   ?= $(CURDIR)/_install
JOBS     ?= $(shell nproc)
# Unity batches compile in half the time from scratch (each header parsed
# once per batch); UNITY=OFF rebuilds one file at a time when editing.
# clang-tidy reads a per-file compile database of its own (scripts/lint.sh).
UNITY    ?= ON
# Most tests wait on the processes they start, so ctest runs twice as many
# as there are cores; the timing tests still run alone (RUN_SERIAL).
TEST_JOBS ?= $(shell expr $(JOBS) \* 2)
CMAKE_GEN = -G Ninja
ZLCORE    = $(PREFIX)/bin/zlcore

.PHONY: all deps build install demo test test-unit test-asan test-fuzz bench lint format clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
	  -DCMAKE_UNITY_BUILD=$(UNITY) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX) >/dev/null
	@echo "installed into $(PREFIX)"

# The main job on the embedded default: every backend, its devices, the plan,
# and one operator of the example suite timed on the host CPU.
demo: install
	@bash scripts/demo.sh $(ZLCORE)

# Every test (GoogleTest, Python plugin tests, end-to-end), then the C++ tests
# again under AddressSanitizer and UndefinedBehaviorSanitizer, then every
# fuzz target for FUZZ_SECONDS from its seed corpus.
test: install
	@bash scripts/install-deps.sh chromium slurm
	@cd $(BUILD) && ZL_REQUIRE_SLURM=1 ctest --output-on-failure -j $(TEST_JOBS)
	@$(MAKE) --no-print-directory test-asan
	@$(MAKE) --no-print-directory test-fuzz

# The sanitizer tree (scripts/sanitized-build.sh: clang, ASan, UBSan) serves
# both: the C++ tests labelled sanitize, then the fuzz targets.
test-asan: deps
	@SAN_BUILD=$(SAN) JOBS=$(JOBS) bash scripts/sanitized-build.sh
	@cd $(SAN) && ASAN_OPTIONS=detect_leaks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$(CURDIR)/tests/ubsan.supp \
	  ctest --output-on-failure -j $(TEST_JOBS) -L sanitize

# The libFuzzer targets of tests/fuzz, JOBS side by side (docs/fuzzing.md);
# fails on any finding.
test-fuzz: deps
	@FUZZ_BUILD=$(SAN) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(JOBS) bash scripts/fuzz.sh

# Style and static checks (scripts/lint.sh): clang-format, clang-tidy over
# core/ with a per-file compile database (BUILD/tidy-db), flake8. CI runs it
# after the tests.
lint: build
	@bash scripts/install-deps.sh lint
	@BUILD=$(BUILD) JOBS=$(JOBS) bash scripts/lint.sh

# Applies .clang-format to every tracked C/C++ file.
format:
	@bash scripts/install-deps.sh lint
	@git ls-files -z '*.c' '*.h' '*.cpp' '*.hpp' | xargs -0 clang-format-14 -i

bench: install
	@bash scripts/bench.sh $(PREFIX)

clean:
	rm -rf $(BUILD) $(SAN) $(PREFIX)
