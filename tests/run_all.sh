#!/usr/bin/env bash
# Every test of ptocpu: the C++ suite (release, then AddressSanitizer + UBSan) and the Python
# suite against the installed package. Installs what it needs first (Debian + PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

step() { printf '\n==== %s\n' "$*"; }

step "dependencies"
if ! dpkg -s libgtest-dev >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgtest-dev >/dev/null
fi
# torch only as the CPU build that lies on disk (tests compare against it).
python3 -m pip install -q --disable-pip-version-check "torch==2.13.0" pytest hypothesis numpy ml_dtypes nanobind mypy

step "C++ tests (release)"
cmake -S . -B build/ci-release -DCMAKE_BUILD_TYPE=Release -DPTOCPU_BUILD_TESTS=ON >/dev/null
cmake --build build/ci-release -j "$jobs"
ctest --test-dir build/ci-release --output-on-failure -j "$jobs"

step "C++ consumers: find_package(ptocpu) after install, and add_subdirectory"
cmake --install build/ci-release --prefix build/ci-prefix >/dev/null
cmake -S examples/cpp -B build/ci-consumer -DCMAKE_PREFIX_PATH="$PWD/build/ci-prefix" >/dev/null
cmake --build build/ci-consumer -j "$jobs" >/dev/null
build/ci-consumer/seed_index_select
cmake -S examples/cpp -B build/ci-consumer-sub -DPTOCPU_SOURCE_DIR="$PWD" >/dev/null
cmake --build build/ci-consumer-sub -j "$jobs" >/dev/null
build/ci-consumer-sub/seed_index_select >/dev/null

step "C++ tests (AddressSanitizer + UndefinedBehaviorSanitizer)"
# The same build also makes the Python extension for the sanitized Python step below.
cmake -S . -B build/ci-asan -DCMAKE_BUILD_TYPE=Debug -DPTOCPU_SANITIZE=ON -DPTOCPU_BUILD_TESTS=ON \
  -DPTOCPU_BUILD_PYTHON=ON >/dev/null
cmake --build build/ci-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/ci-asan --output-on-failure -j "$jobs"

step "Python boundary, bad-argument and fuzz suites (AddressSanitizer + UndefinedBehaviorSanitizer)"
# Python is not built with ASan: its runtime is preloaded (libstdc++ too, so that ASan finds the
# real __cxa_throw). Leak checking is off: the interpreter keeps objects until exit by design.
LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so.6)" \
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:alloc_dealloc_mismatch=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 PYTHONPATH="$PWD/python:$PWD/build/ci-asan" \
  python3 -m pytest -q -p no:cacheprovider tests/python/test_boundary.py tests/python/test_bad_arguments.py \
  tests/python/test_fuzz.py

step "Python package (pip install .)"
python3 -m pip install -q --disable-pip-version-check .

step "Python tests"
# From tests/ so that `import ptocpu` is the installed package, not the source folder.
(cd tests && python3 -m pytest -q -p no:cacheprovider python)
