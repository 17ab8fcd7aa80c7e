#!/usr/bin/env bash
# Every test of ptocpu: the C++ suite (release, then AddressSanitizer + UBSan), the CMake consumers
# and the Python suite against the installed package, in a virtual environment made here from
# nothing (build/venv), so that a green run on this machine is a green run on a fresh one.
# Installs what it needs first: Debian packages when missing; from PyPI the package's `test` extra
# (pyproject.toml) at the exact versions of tests/constraints.txt, nothing else. A second, quick job
# (build/venv-lowest) runs the runtime dependencies at the lower bounds pyproject.toml declares.
# PYTHON=/path/to/python3.11 picks the interpreter (default: python3).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)
python=${PYTHON:-python3}
constraints=$root/tests/constraints.txt

step() { printf '\n==== [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# Nothing of the caller's Python setup reaches the environments below.
unset PYTHONPATH PYTHONHOME PYTHONUSERBASE PIP_USER PIP_TARGET PIP_PREFIX VIRTUAL_ENV
export PYTHONNOUSERSITE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

# new_venv DIR: an empty virtual environment (whatever DIR held is removed first).
new_venv() {
  rm -rf "$1"
  "$python" -m venv "$1"
}

# configure SRC BUILD ARGS...: a Ninja build tree of SRC (one made with another generator or from
# other sources is made anew).
configure() {
  local src=$1 dir=$2
  shift 2
  if [ -f "$dir/CMakeCache.txt" ] && ! { grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$dir/CMakeCache.txt" &&
      grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$(cd "$src" && pwd -P)" "$dir/CMakeCache.txt"; }; then
    rm -rf "$dir"
  fi
  cmake -S "$src" -B "$dir" -G Ninja "$@" >/dev/null
}

step "dependencies"
# Debian: GoogleTest (the C++ suite); oneDNN (matmul's GEMMs); SLEEF, OpenBLAS and Google Benchmark
# (upcoming kernels, bench/).
missing=()
command -v g++ >/dev/null || missing+=(g++)
for pkg in libgtest-dev libdnnl-dev libsleef-dev libopenblas-dev libbenchmark-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# tests/constraints.txt pins CPython 3.11 wheels: torch 2.13.0's CPU build lies on disk for it
# only (anything else would fetch a CUDA build).
if ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  echo "run_all.sh: $python is Python $("$python" -c 'import platform; print(platform.python_version())');" \
       "tests/constraints.txt is for 3.11 (set PYTHON=python3.11)" >&2
  exit 1
fi
venv=$root/build/venv
new_venv "$venv"
export PATH="$venv/bin:$PATH"  # python, pip, cmake and ninja below are the environment's
# The pins hold for every pip run from here on, the isolated build of the package included.
export PIP_CONSTRAINT=$constraints
python -m pip install -q cmake ninja

step "Python package and C++ tests (release): pip wheel . (the isolated build of pip install .)"
# One release build makes the wheel, the C++ suite and the C++ package (component cpp): the same
# build as `pip install .`, with the tests on and a build folder of its own.
rm -rf build/ci-wheel
python -m pip wheel -q --no-deps -w build/ci-wheel -C build-dir=build/ci-release \
  -C cmake.define.PTOCPU_BUILD_TESTS=ON .
wheel=$(echo "$root"/build/ci-wheel/ptocpu-*.whl)
python -m pip install -q "$wheel[test]"
# Every package in the environment is pinned (so the constraints are complete), torch is the CPU
# build, and nothing is broken.
python - "$constraints" <<'EOF'
import re
import sys
from importlib.metadata import distributions

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

pins = {}
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if line:
        name, _, version = line.partition("==")
        pins[norm(name)] = version.strip()
bad = [f"{d.metadata['Name']} {d.version} (tests/constraints.txt: {pins.get(norm(d.metadata['Name']), 'not pinned')})"
       for d in distributions() if norm(d.metadata["Name"]) not in ("ptocpu", "pip")
       and pins.get(norm(d.metadata["Name"])) != d.version.split("+")[0]]
if bad:
    sys.exit("run_all.sh: installed but not as tests/constraints.txt pins it:\n  " + "\n  ".join(bad))
import torch
if torch.version.cuda is not None:
    sys.exit(f"run_all.sh: torch {torch.__version__} is a CUDA build; the CPU build was wanted")
EOF
python -m pip check

step "C++ tests (release), the wheel's build"
ctest --test-dir build/ci-release --output-on-failure -j "$jobs"

step "C++ consumer: find_package(ptocpu) after install"
rm -rf build/ci-prefix
cmake --install build/ci-release --component cpp --prefix build/ci-prefix >/dev/null
configure examples/cpp build/ci-consumer -DCMAKE_PREFIX_PATH="$root/build/ci-prefix"
cmake --build build/ci-consumer -j "$jobs" >/dev/null
build/ci-consumer/seed_index_select

step "C++ tests (AddressSanitizer + UndefinedBehaviorSanitizer), built by a consumer's add_subdirectory"
# One unoptimised build checks how the targets fit together under add_subdirectory (the example
# program) and makes the sanitized C++ suite, and the Python extension (for the environment's
# Python) for the sanitized Python step below; the library's build folder is build/ci-asan/ptocpu.
configure examples/cpp build/ci-asan -DPTOCPU_SOURCE_DIR="$root" -DCMAKE_BUILD_TYPE=Debug -DPTOCPU_SANITIZE=ON \
  -DPTOCPU_BUILD_TESTS=ON -DPTOCPU_BUILD_PYTHON=ON -DPython_EXECUTABLE="$venv/bin/python" \
  -Dnanobind_DIR="$(python -m nanobind --cmake_dir)"
cmake --build build/ci-asan -j "$jobs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build/ci-asan/seed_index_select >/dev/null
ctest --test-dir build/ci-asan/ptocpu --output-on-failure -j "$jobs"
unset ASAN_OPTIONS UBSAN_OPTIONS

step "Python boundary, bad-argument and fuzz suites (AddressSanitizer + UndefinedBehaviorSanitizer)"
# Python is not built with ASan: its runtime is preloaded (libstdc++ too, so that ASan finds the
# real __cxa_throw). Leak checking is off: the interpreter keeps objects until exit by design.
# PYTHONPATH puts the sources and the sanitized extension before the installed package.
LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so.6)" \
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:alloc_dealloc_mismatch=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 PYTHONPATH="$root/python:$root/build/ci-asan" \
  python -m pytest -q -rs -p no:cacheprovider -n auto tests/python/test_boundary.py tests/python/test_bad_arguments.py \
  tests/python/test_fuzz.py

step "Python tests"
# From tests/ so that `import ptocpu` is the installed package, not the source folder.
(cd tests && python -m pytest -q -rs -p no:cacheprovider -n auto python)

step "Runtime dependencies at their lower bounds: ptocpu verify --quick and test_dtype.py"
# pyproject.toml's `name>=X` dependencies pinned to X; the other pins as above.
lowest=$root/build/ci-lowest-constraints.txt
python - "$constraints" >"$lowest" <<'EOF'
import re
import sys

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

deps = re.search(r"^dependencies\s*=\s*\[(.*?)\]", open("pyproject.toml").read(), re.M | re.S)[1]
low = {}
for spec in re.findall(r'"([^"]+)"', deps):
    m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)", spec)
    if not m:
        sys.exit(f"run_all.sh: no lower bound to test in the dependency {spec!r}")
    low[norm(m[1])] = m[2]
for line in open(sys.argv[1]):
    if norm(line.split("==")[0].strip()) not in low:
        print(line, end="")
for name, version in low.items():
    print(f"{name}=={version}")
EOF
new_venv build/venv-lowest
PIP_CONSTRAINT=$lowest build/venv-lowest/bin/python -m pip install -q --only-binary numpy,ml_dtypes \
  numpy ml_dtypes "$wheel" pytest hypothesis "torch==2.13.0"
build/venv-lowest/bin/python -c 'import numpy, ml_dtypes; print("numpy", numpy.__version__, "ml_dtypes", ml_dtypes.__version__)'
build/venv-lowest/bin/ptocpu verify --quick | tail -n 3
(cd tests && ../build/venv-lowest/bin/python -m pytest -q -rs -p no:cacheprovider python/test_dtype.py)

step "done"
