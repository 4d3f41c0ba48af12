#!/usr/bin/env bash
# Installs what is missing, then builds and runs every test:
#   1. formatting (clang-format) of the C sources;
#   2. a Release build with -Werror (and the CUDA part when nvcc is present),
#      all unit, oracle and mutation tests; its install (tests/install/run.sh)
#      and C programs built against it with pkg-config and find_package;
#   3. an ASan+UBSan build, the same tests;
#   4. a TSan build of the tests that run threads;
#   5. a clang build of the libFuzzer targets, each fuzzing for a while
#      (FUZZ_SECONDS, default 10) from the seed corpus;
#   6. the manylinux wheel (scripts/wheel.sh), built without changing the
#      source tree (its CUDA part for one GPU generation, WHEEL_CUDA_ARCHS,
#      default 90-real: no test here runs a GPU, and the seven of a release
#      wheel take a minute more to compile), checked by
#      scripts/wheel_check.sh (auditwheel, a fresh venv without compilers,
#      `detfeed --help`, the tests without PyTorch), then installed into a
#      virtual environment (build-py/venv, with PyTorch from PyPI for the
#      torch.distributed run) for the whole pytest suite;
#   7. the Python binding's safety tests under Debian's python3 against the
#      ASan+UBSan build's library (step 3).
# The oracle tests read ../shared/data beside the checkout; the real
# Ultralytics package and the OpenCV 5.0 / 5.1 wheels they compare against
# are installed by scripts/oracle_env.sh (into build-py/). Every ctest run
# fails when it finds no test (a build configured without tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
scripts/oracle_env.sh
jobs=$(nproc)
# What the tests leave in "the user's cache folder" (verification records and
# disk caches of read-only datasets) goes into the build tree, not $HOME.
export XDG_CACHE_HOME="$PWD/build/xdg-cache"
# Each step's header says when it started (seconds since this script began).
section() { echo "== $* (at ${SECONDS} s)"; }

section "format"
files=$(git ls-files 'include/*.h' 'src/*.c' 'src/*.h' 'src/*.cu' 'tools/*.c' 'tools/*.h' 'tests/*.c' 'tests/*.h' | grep -v hsv_tables.h)
clang-format --dry-run -Werror $files

# nvcc where the CUDA toolkit puts it, when it is not on PATH already.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
cuda=OFF
command -v nvcc >/dev/null && cuda=ON

section "release build, -Werror, CUDA part $cuda"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDETFEED_WERROR=ON -DDETFEED_CUDA=$cuda \
  -DDETFEED_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$jobs" >/dev/null
(cd build && ctest -j"$jobs" --no-tests=error --output-on-failure)

section "cmake --install and C consumers (pkg-config shared and static, find_package)"
bash tests/install/run.sh build

section "ASan+UBSan build"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDETFEED_WERROR=ON \
  -DDETFEED_SANITIZE=address -DDETFEED_CUDA=OFF -DDETFEED_BUILD_TESTS=ON >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
# The oracles against other OpenCV builds and the real Ultralytics load the
# library into Python, which a sanitized build cannot do: the Release run
# above has them.
(cd build-asan && ctest -j"$jobs" --no-tests=error --output-on-failure \
  -E 'test_mutation|_[0-9][0-9.]*$|^conformance')

section "TSan build (threaded tests)"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDETFEED_WERROR=ON \
  -DDETFEED_SANITIZE=thread -DDETFEED_CUDA=OFF -DDETFEED_BUILD_TESTS=ON >/dev/null
cmake --build build-tsan -j"$jobs" --target test_cache test_disk_cache test_determinism test_ring test_batches test_route test_partners test_verify_record >/dev/null
(cd build-tsan && ctest --no-tests=error --output-on-failure \
  -R 'test_cache|test_disk_cache|test_determinism|test_ring|test_batches|test_route|test_partners|test_verify_record')

section "libFuzzer targets (clang, ASan+UBSan)"
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDETFEED_FUZZ=ON -DDETFEED_BUILD_TESTS=ON \
  -DDETFEED_CUDA=OFF -DDETFEED_WERROR=ON -DDETFEED_FUZZ_SECONDS="${FUZZ_SECONDS:-10}" >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_labels fuzz_yaml fuzz_decode fuzz_disk_cache >/dev/null
(cd build-fuzz && ctest -j"$jobs" --no-tests=error --output-on-failure -R '^fuzz_')

section "the wheel (scripts/wheel.sh), the source tree unchanged by its build"
tree() { git status --porcelain --ignored | grep -v '^!! build[^/]*/$' || true; }
before=$(tree)
WHEEL_CUDA_ARCHS=${WHEEL_CUDA_ARCHS:-90-real} scripts/wheel.sh build-wheel/dist >/dev/null
after=$(tree)
if [ "$before" != "$after" ]; then
  echo "building the wheel changed the source tree:"; diff <(echo "$before") <(echo "$after") || true
  exit 1
fi
if [ -n "${CI:-}" ] && [ -n "$(git status --porcelain)" ]; then
  echo "the clean clone is not clean after the wheel's build:"; git status --porcelain; exit 1
fi
wheel=$(ls build-wheel/dist/detfeed-*manylinux*.whl)
section "a source build without pkg-config fails with one line naming what is missing"
hide=$(mktemp -d)
printf '#!/bin/sh\nexit 127\n' >"$hide/pkg-config" && chmod +x "$hide/pkg-config"
out=$(PATH="$hide:$PATH" build-wheel/tools/bin/pip wheel --no-deps -w "$hide" ./python 2>&1 || true)
rm -rf "$hide"
echo "$out" | grep -E '^ *detfeed: building from source needs pkg-config, libspng, libturbojpeg, zlib, xxhash, libwebp, libtiff, openjpeg, libavif, libheif, libde265: install with `sudo apt-get install pkg-config libspng-dev libturbojpeg0-dev zlib1g-dev libxxhash-dev libwebp-dev libtiff-dev libopenjp2-7-dev libavif-dev libheif-dev libde265-dev`' ||
  { echo "$out"; echo "no such line"; exit 1; }
section "the wheel in a fresh venv without compilers (scripts/wheel_check.sh)"
scripts/wheel_check.sh "$wheel" | grep -v '^\s*$' | tail -8

section "Python binding (the wheel, pytest)"
py=build-py/venv # made by scripts/oracle_env.sh, with PyTorch
"$py/bin/pip" install -q --no-deps --force-reinstall "$wheel"
(cd python/tests && DETFEED_CLI="$PWD/../../$py/bin/detfeed" \
  DETFEED_TEST_DATA="$PWD/../../../shared/data" "../../$py/bin/python" -m pytest -q -p no:cacheprovider .)
# The NumPy path without PyTorch: Debian's python3 (no torch) on the same package.
(cd python/tests && DETFEED_CLI="$PWD/../../build/detfeed" DETFEED_TEST_DATA="$PWD/../../../shared/data" \
  DETFEED_LIBRARY="$PWD/../../build/libdetfeed.so" PYTHONPATH="$PWD/.." \
  /usr/bin/python3 -c 'import sys, pytest; import detfeed.loader as m; assert m.torch is None, "torch is importable here"; sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "test_loader.py"]))')

section "Python binding against the ASan+UBSan build (Debian's python3)"
# The safety tests (batches held across close() or the Loader's end, the
# dataset after close, fork, two iterators, K x 2 and K x 3 pose, Ctrl-C)
# with build-asan's library: ASan's runtime has to come first in the process
# (LD_PRELOAD), Python leaks by design (detect_leaks=0), and -s lets a report
# reach the terminal instead of pytest's capture. A report fails the run.
(cd python/tests && DETFEED_TEST_DATA="$PWD/../../../shared/data" \
  DETFEED_LIBRARY="$PWD/../../build-asan/libdetfeed.so" PYTHONPATH="$PWD/.." \
  LD_PRELOAD="$(gcc -print-file-name=libasan.so)" ASAN_OPTIONS=detect_leaks=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  /usr/bin/python3 -m pytest -q -s -p no:cacheprovider test_safety.py)
