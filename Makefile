# shoal: top-level driver around CMake/ctest.
#
#   make deps       install missing Debian packages (apt-get; sudo when not root)
#   make configure  cmake -S . -B build (Release, -Werror)
#   make [build]    build everything into build/ (binaries in build/bin)
#   make build-tests  what make test needs: everything but the benchmark programs
#                   no test runs (target all; the benchmarks are target shoal-benchmarks)
#   make run        build, then run every bundled app (build/bin/shoal suite $(RUN_ARGS)):
#                   each validated, one summary table, about a minute and a half
#   make demo       build, then run build/bin/shoal-demo (a small validated runtime demo)
#   make test       build-tests, then ctest (one process per test case), then asan-ci
#                   (TEST_ASAN=0 skips it), then tsan-ci (TEST_TSAN=0 skips it),
#                   then fuzz-ci (TEST_FUZZ=0 skips it)
#   make fuzz       libFuzzer targets in a clang tree, build-fuzz/: every corpus file
#                   replayed, then FUZZ_SECONDS (10) of fuzzing per target
#   make fuzz-ci    the same without the command-line target, FUZZ_CI_SECONDS (5) per
#                   target (what make test runs; its cheap part, fuzz-flags, is in)
#   make test-cluster  3 emulated hosts (network namespaces, veth, tc; root):
#                   the distributed tests and the apps across them, a link pulled
#                   mid-run (tools/cluster/; CLUSTER_DELAY_US=25 delays each link,
#                   through tools/cluster/wire.cpp where the kernel has no netem)
#   make soak       SOAK_MINUTES (20) of mixed apps on 2 and 3 processes; fails on
#                   a failed run or RSS growth (tools/soak/soak.py; not in CI)
#   make bench      build, then every benchmark below (bench-micro, bench-apps,
#                   bench-one-sided, bench-queues, bench-bcl, bench-containers)
#   make bench-micro  run every build/bin/bench-* $(BENCH_ARGS)
#   make bench-one-sided  one-sided ops per --one-sided backend, 1 x 2 and 2 x 1
#                   (bench/one_sided.py -> bench/results/one_sided.txt)
#   make bench-queues  UPC queues microbenchmark: shoal::queue vs a locked buffer and a
#                   notification array at 2, 4, 8 cores (-> bench/results/upc_queues.md)
#   make bench-bcl  BCL's hash table per backend (bench/bcl.py -> bench/results/bcl.md),
#                   then each method's predicted vs measured cost (bench/bcl_costs.py)
#   make bench-containers  counting_set, array and map<string> rates, 1 x 2 and 2 x 1
#                   (bench/containers.py $(CONTAINERS_ARGS) -> bench/results/containers.md)
#   make bench-apps   bench/apps/harness.py $(HARNESS_ARGS) (installs python3, gnuplot-nox)
#   make bench-mpi  build the distributed benchmarks, then run them on MPI_NP (default 2)
#                   ranks of MPI_CORES (default 1) cores: shoal messages against plain
#                   MPI (Isend, Alltoallv) in one run, then delegates between processes,
#                   then the containers (bench-containers)
#   make test-mpich the same suite built against MPICH (installs mpich), in build-mpich/
#   make asan       Debug + AddressSanitizer/UBSan tree in build-asan/, build and ctest
#   make asan-ci    the same tree, only what the subset needs: the distributed tests at
#                   3 processes x 2 cores and the worker-stack tests (what CI runs)
#   make tsan       ThreadSanitizer tree in build-tsan/: the runtime's unit tests
#   make tsan-ci    the same tree, only test_tasks, test_messages,
#                   test_fiber_sanitizer and test_node_mailbox (what CI runs)
#   make docs       regenerate docs/layers.svg (the layer diagram) from docs/layers.dot
#   make clean      remove build/, build-asan/, build-tsan/, build-mpich/ and build-fuzz/
#
# Variables: BUILD_DIR, ASAN_DIR, TSAN_DIR, BUILD_TYPE, TEST_ASAN, TEST_TSAN, CMAKE_ARGS, JOBS, CTEST_ARGS,
# BENCH_ARGS, CONTAINERS_ARGS, RUN_ARGS, MPI_NP, MPI_CORES, BENCH_MPI_ARGS, FUZZ_DIR, FUZZ_CXX, FUZZ_SECONDS,
# FUZZ_CI_SECONDS, TEST_FUZZ, SOAK_MINUTES, SOAK_ARGS.

SHELL := /bin/bash
MAKEFLAGS += --no-print-directory
.DEFAULT_GOAL := build

BUILD_DIR  ?= build
ASAN_DIR   ?= build-asan
TSAN_DIR   ?= build-tsan
TEST_ASAN  ?= 1
TEST_TSAN  ?= 1
BUILD_TYPE ?= Release
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_JOBS ?= 2
CMAKE_ARGS ?=
CTEST_ARGS ?=
BENCH_ARGS ?=
RUN_ARGS   ?=
MPI_NP     ?= 2
MPI_CORES  ?= 1
BENCH_MPI_ARGS ?=

CMAKE ?= cmake
CTEST ?= ctest
empty :=
space := $(empty) $(empty)
# $(call cmake_list,a b c): a;b;c, a CMake list (quoted on the command line).
cmake_list = $(subst $(space),;,$(strip $(1)))
CTEST_FLAGS = --output-on-failure -j$(CTEST_JOBS) --timeout 600 $(CTEST_ARGS)

DEB_PACKAGES := cmake g++ make pkg-config \
	libboost-context-dev libcli11-dev libfmt-dev \
	libgtest-dev libgmock-dev libbenchmark-dev \
	nlohmann-json3-dev libssl-dev \
	libopenmpi-dev openmpi-bin

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Sanitizer runtime settings for `make asan` (override from the environment).
ASAN_OPTIONS  ?= detect_leaks=1:strict_init_order=1
UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
TSAN_OPTIONS  ?= halt_on_error=1:second_deadlock_stack=1

# The CI subset of `make asan` (asan-ci): every distributed gtest program at 3
# processes x 2 cores (the shape of issue 18's report), cross-process stealing
# and cascades at 3 x 2, and the worker-stack tests. Targets and a ctest regex.
# Every tests/mpi/dist_*.cpp is a program of that name, all of them in the
# subset (a listed set missed new ones, whose tests then found no program).
ASAN_CI_TARGETS := test_distributed $(notdir $(basename $(wildcard tests/mpi/dist_*.cpp))) \
	mpi_stress test_fiber_sanitizer
ASAN_CI_TESTS := ^(distributed_np3_cores2|dist_[a-z_]+_np3_cores2|mpi_steal_between_processes_np3_cores2|mpi_cascade_np3_cores2|Cores/fiber_stacks\..*)$$

# The runtime's unit tests under ThreadSanitizer (`make tsan`): every gtest case
# (a name with a dot) of these programs.
TSAN_TARGETS := test_tasks test_sync test_completion test_messages test_fiber_sanitizer test_node_mailbox
TSAN_TESTS := \.
# ThreadSanitizer counts each fiber as a thread and dies past 8128; this test
# keeps 100,000 workers suspended at once (it runs in every other build).
TSAN_EXCLUDE := suspended_workers\.HundredThousand
# The CI subset (tsan-ci, run by make test; TEST_TSAN=0 skips it): the
# scheduler, tasks, stacks, the messages between cores and the node's
# shared-memory rings between processes (test_node_mailbox), without the
# 10-million-iteration loops (6 cases, a third of the run under TSan; the
# same code runs at 100,000). Cold build 82 s + run about 75 s at -j2.
TSAN_CI_TARGETS := test_tasks test_messages test_fiber_sanitizer test_node_mailbox
TSAN_CI_EXCLUDE := parallel_for_sizes\..*_n(9999995|10000000)_

HARNESS_ARGS ?=
BENCH_PACKAGES := python3 gnuplot-nox

.PHONY: all deps configure build build-tests run demo test test-mpich bench bench-micro bench-apps bench-mpi bench-one-sided bench-queues bench-bcl \
	asan asan-configure asan-ci tsan tsan-configure tsan-ci docs clean fuzz fuzz-configure fuzz-ci test-cluster soak

all: build

deps:
	@if ! command -v dpkg-query >/dev/null 2>&1; then \
	  echo "deps: dpkg-query not found (not Debian?); install by hand: $(DEB_PACKAGES)"; \
	  exit 0; \
	fi; \
	missing=""; \
	for pkg in $(DEB_PACKAGES); do \
	  status="$$(dpkg-query -W -f='$${Status}' "$$pkg" 2>/dev/null || true)"; \
	  case "$$status" in *" installed") ;; *) missing="$$missing $$pkg" ;; esac; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  $(SUDO) apt-get update && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y --no-install-recommends $$missing; \
	fi

# cmake runs every time (cheap on an existing tree, and always applies the flags
# below even if build/ was configured differently before).
configure: deps
	$(CMAKE) -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DSHOAL_WERROR=ON $(CMAKE_ARGS)

build: configure
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS) --target all shoal-benchmarks

# make test's build: CMake's `all`, which leaves out the benchmark programs no
# test runs (bench/CMakeLists.txt; about 35 CPU-s at -O3).
build-tests: configure
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS)

run: build
	$(BUILD_DIR)/bin/shoal suite $(RUN_ARGS)

demo: build
	$(BUILD_DIR)/bin/shoal-demo $(RUN_ARGS)

test: build-tests
	$(CTEST) --test-dir $(BUILD_DIR) $(CTEST_FLAGS)
ifneq ($(TEST_ASAN),0)
	@$(MAKE) asan-ci
endif
ifneq ($(TEST_TSAN),0)
	@$(MAKE) tsan-ci
endif
ifneq ($(TEST_FUZZ),0)
	@$(MAKE) fuzz-ci
endif

# The whole suite once more against MPICH instead of OpenMPI (both can be
# installed side by side; the default `mpirun`/`mpicxx` stay OpenMPI's).
MPICH_DIR ?= build-mpich
test-mpich:
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(DEB_PACKAGES) mpich libmpich-dev"
	$(CMAKE) -S . -B $(MPICH_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DSHOAL_WERROR=ON \
	  -DMPI_CXX_COMPILER=/usr/bin/mpicxx.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich \
	  $(CMAKE_ARGS)
	$(CMAKE) --build $(MPICH_DIR) -j$(JOBS)
	$(CTEST) --test-dir $(MPICH_DIR) $(CTEST_FLAGS)

bench: bench-micro bench-apps bench-one-sided bench-queues bench-bcl bench-containers

# The UPC queues microbenchmark: shoal::queue, a lock-protected buffer and a
# notification array at 2, 4 and 8 cores, medians of interleaved rounds, to
# bench/results/upc_queues.md (issue 13).
bench-queues: configure
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS) --target queue-rate
	python3 bench/queues.py --build $(BUILD_DIR)

# The distributed containers' rates (counting_set, array, map<string>) at
# 1 x 2 and 2 x 1, medians of interleaved rounds, with packet sizes, to
# bench/results/containers.md (issue 13).
bench-containers: configure
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS) --target bench-containers
	python3 bench/containers.py --build $(BUILD_DIR) $(CONTAINERS_ARGS)

# One-sided operations per --one-sided backend at 1 x 2 and 2 x 1, medians of
# interleaved rounds, to bench/results/one_sided.txt (issue 12).
bench-one-sided: configure
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS) --target one-sided-rate
	python3 bench/one_sided.py --build $(BUILD_DIR)

# BCL's hash table per --one-sided backend at 1 x 2 and 2 x 1: buffered vs
# atomic inserts, find_only vs atomic finds, to bench/results/bcl.md; then the
# cost model, predicted vs measured and one-sided vs delegate, to
# bench/results/bcl_costs.md and the calibration file SHOAL_BCL_CALIBRATION
# reads, bench/results/bcl_calibration.txt (issue 12).
bench-bcl: configure
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS) --target bcl-rate one-sided-rate
	python3 bench/bcl.py --build $(BUILD_DIR)
	python3 bench/bcl_costs.py --build $(BUILD_DIR)

bench-apps: build
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(BENCH_PACKAGES)"
	python3 bench/apps/harness.py --build $(BUILD_DIR) $(HARNESS_ARGS)

bench-micro: build
	@found=0; \
	for exe in $(BUILD_DIR)/bin/bench-*; do \
	  [ -f "$$exe" ] && [ -x "$$exe" ] || continue; \
	  found=1; \
	  echo "== $$exe"; \
	  "$$exe" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
	    $(BENCH_ARGS) || exit 1; \
	done; \
	if [ $$found = 0 ]; then echo "bench: no $(BUILD_DIR)/bin/bench-* executables"; fi

# The plain-MPI baselines (bench/mpi/). Builds only its own target, so a broken
# tree elsewhere does not stop it. OpenMPI refuses to run as root without the two
# OMPI_ALLOW_RUN_AS_ROOT* variables.
bench-mpi: configure
	@$(CMAKE) --build $(BUILD_DIR) -j$(JOBS) --target bench-distributed-messages \
	  bench-distributed-delegates bench-containers || { \
	  echo "bench-mpi: could not build the distributed benchmarks (is MPI installed? make deps)"; \
	  exit 1; }
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	  mpirun --oversubscribe -np $(MPI_NP) $(BUILD_DIR)/bin/bench-distributed-messages \
	  --cores $(MPI_CORES) $(BENCH_MPI_ARGS)
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	  mpirun --oversubscribe -np $(MPI_NP) $(BUILD_DIR)/bin/bench-distributed-delegates \
	  --cores $(MPI_CORES)
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	  mpirun --oversubscribe -np $(MPI_NP) $(BUILD_DIR)/bin/bench-containers --cores $(MPI_CORES)

# One configuration for `make asan` and `make asan-ci`, so they share build-asan/.
asan-configure: deps
	$(CMAKE) -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug \
	  -DSHOAL_SANITIZE=address,undefined -DSHOAL_BUILD_BENCHMARKS=OFF \
	  "-DSHOAL_TARGET_GROUP=$(call cmake_list,$(ASAN_GROUP))" $(CMAKE_ARGS)

asan: asan-configure
	$(CMAKE) --build $(ASAN_DIR) -j$(JOBS)
	ASAN_OPTIONS='$(ASAN_OPTIONS)' UBSAN_OPTIONS='$(UBSAN_OPTIONS)' \
	  $(CTEST) --test-dir $(ASAN_DIR) $(CTEST_FLAGS)

# Tests whose programs are not built here are listed by ctest as <name>_NOT_BUILT
# and left out by the regex.
# The CI programs as one target (SHOAL_TARGET_GROUP, CMakeLists.txt); set for
# asan-configure only when asan-ci runs it, so that `make asan` configures a
# tree (without MPI, say) where some of these programs do not exist.
asan-ci: ASAN_GROUP = $(ASAN_CI_TARGETS)
asan-ci: asan-configure
	$(CMAKE) --build $(ASAN_DIR) -j$(JOBS) --target shoal-target-group
	ASAN_OPTIONS='$(ASAN_OPTIONS)' UBSAN_OPTIONS='$(UBSAN_OPTIONS)' \
	  $(CTEST) --test-dir $(ASAN_DIR) $(CTEST_FLAGS) -R '$(ASAN_CI_TESTS)'

# Optimised (ThreadSanitizer slows -O0 code too much), runtime unit tests only:
# OpenMPI is not built for TSan and floods it with reports of its own.
# One configuration for `make tsan` and `make tsan-ci`, so they share build-tsan/.
# -O1 -g1 (line tables) instead of RelWithDebInfo's -O2 -g: 40% less compile time
# (test_tasks.cpp: 8.1 against 13.6 CPU-s), reports still name file and line.
tsan-configure: deps
	$(CMAKE) -S . -B $(TSAN_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHOAL_SANITIZE=thread \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
	  -DSHOAL_BUILD_BENCHMARKS=OFF -DSHOAL_BUILD_APPS=OFF -DSHOAL_BUILD_EXAMPLES=OFF \
	  "-DSHOAL_TARGET_GROUP=$(call cmake_list,$(TSAN_GROUP))" $(CMAKE_ARGS)

tsan: tsan-configure
	$(CMAKE) --build $(TSAN_DIR) -j$(JOBS) --target $(TSAN_TARGETS)
	TSAN_OPTIONS='$(TSAN_OPTIONS)' \
	  $(CTEST) --test-dir $(TSAN_DIR) $(CTEST_FLAGS) -R '$(TSAN_TESTS)' -E '$(TSAN_EXCLUDE)'

# What `make test` runs: only the programs of TSAN_CI_TARGETS, selected by
# their gtest suites (ctest names carry no program, and an earlier `make tsan`
# may have left the others built, perhaps stale).
tsan-ci: TSAN_GROUP = $(TSAN_CI_TARGETS)
tsan-ci: tsan-configure
	$(CMAKE) --build $(TSAN_DIR) -j$(JOBS) --target shoal-target-group
	@suites=$$(for t in $(TSAN_CI_TARGETS); do $(TSAN_DIR)/bin/$$t --gtest_list_tests || exit 1; \
	  done | awk '/^[^ ]/ && /\.$$/ { sub(/\.$$/, "", $$1); print $$1 }' | paste -sd'|') && \
	  [ -n "$$suites" ] && \
	  echo "tsan-ci: suites $$suites" && \
	  TSAN_OPTIONS='$(TSAN_OPTIONS)' $(CTEST) --test-dir $(TSAN_DIR) $(CTEST_FLAGS) \
	    -R "^($$suites)\." -E '$(TSAN_EXCLUDE)|$(TSAN_CI_EXCLUDE)'

# libFuzzer (tests/fuzz/): a clang tree of its own with every shoal target
# instrumented (address, undefined, coverage) at -O1 -g1 (libFuzzer's advice is
# -O1; line tables keep reports' file:line); no MPI (OpenMPI is not built
# for sanitizers and the targets need none). ctest label "fuzz": each
# corpus replayed, then FUZZ_SECONDS of fuzzing per target.
FUZZ_DIR     ?= build-fuzz
FUZZ_CXX     ?= clang++
FUZZ_SECONDS ?= 10
# make test's fuzzing (fuzz-ci) is shorter: the suite has a 20-minute CI budget.
FUZZ_CI_SECONDS ?= 5
TEST_FUZZ    ?= 1
FUZZ_CI_TARGETS := fuzz-edge_list fuzz-matrix_market fuzz-pool fuzz-arrived_buffer fuzz-seq_file
# The flag parsers without the apps (tests/fuzz/fuzz_flags.cpp): the command
# line's cheap part, so that make test fuzzes it too.
FUZZ_CI_TARGETS += fuzz-flags
FUZZ_TARGETS := $(FUZZ_CI_TARGETS) fuzz-command_line
fuzz-configure:
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="clang libclang-rt-dev"
	$(CMAKE) -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
	  -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) -DSHOAL_FUZZ=ON -DSHOAL_FUZZ_SECONDS=$(FUZZ_SECONDS) \
	  -DSHOAL_SANITIZE=address,undefined,fuzzer-no-link -DSHOAL_WITH_MPI=OFF \
	  -DSHOAL_BUILD_TESTS=OFF -DSHOAL_BUILD_BENCHMARKS=OFF -DSHOAL_BUILD_EXAMPLES=OFF \
	  "-DSHOAL_TARGET_GROUP=$(call cmake_list,$(FUZZ_GROUP))" $(CMAKE_ARGS)

fuzz: fuzz-configure
	$(CMAKE) --build $(FUZZ_DIR) -j$(JOBS) --target $(FUZZ_TARGETS)
	$(CTEST) --test-dir $(FUZZ_DIR) $(CTEST_FLAGS) -L fuzz

# What `make test` runs: every target but the command line, whose build is
# every app compiled with clang (most of the 9 minutes `make fuzz` took cold here). The
# readers and the buffer check need only apps/common/plain and one source file.
fuzz-ci: FUZZ_SECONDS = $(FUZZ_CI_SECONDS)
fuzz-ci: FUZZ_GROUP = $(FUZZ_CI_TARGETS)
fuzz-ci: fuzz-configure
	$(CMAKE) --build $(FUZZ_DIR) -j$(JOBS) --target shoal-target-group
	$(CTEST) --test-dir $(FUZZ_DIR) $(CTEST_FLAGS) -L fuzz -E command_line

# Needs root (network namespaces): sudo when not root.
test-cluster: build
	$(SUDO) tools/cluster/test-cluster.sh $(BUILD_DIR)

SOAK_MINUTES ?= 20
SOAK_ARGS    ?=
soak: build
	python3 tools/soak/soak.py --build $(BUILD_DIR) --minutes $(SOAK_MINUTES) $(SOAK_ARGS)

# The layer diagram of docs/design.md: docs/layers.svg from docs/layers.dot.
docs:
	@command -v dot >/dev/null 2>&1 || { $(SUDO) apt-get update && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends graphviz; }
	dot -Tsvg docs/layers.dot -o docs/layers.svg

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) $(MPICH_DIR) $(FUZZ_DIR)
