#!/usr/bin/env bash
# Checks a built wheel as a user installs it:
#   scripts/wheel_check.sh WHEEL
# 1. `auditwheel show`: a manylinux tag, and every library it needs beyond
#    the policy's inside the wheel;
# 2. a fresh virtual environment (no system site packages) with the wheel,
#    NumPy and pytest from binary wheels only, installed and run with the
#    compilers, CMake, make and pkg-config hidden (PATH starts with a folder
#    whose stand-ins for them fail);
# 3. there: `detfeed --help` (the entry point), the library the package
#    loads, its version, and the image libraries the process maps (the
#    wheel's copies, not the system's), and the Python tests that need no PyTorch (those that do
#    skip; scripts/test.sh runs them all against the same wheel with
#    PyTorch and Ultralytics).
set -euo pipefail
cd "$(dirname "$0")/.."
wheel=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tools=build-wheel/tools
"$tools/bin/auditwheel" show "$wheel" | tee "$work/show.txt"
grep -q 'consistent with.*manylinux' <(tr '\n' ' ' <"$work/show.txt") ||
  { echo "wheel_check: $wheel is not a manylinux wheel"; exit 1; }

mkdir "$work/hidden"
for t in cc gcc g++ c++ clang clang++ cmake make pkg-config nvcc ld as; do
  printf '#!/bin/sh\necho "%s is hidden for this check" >&2\nexit 127\n' "$t" >"$work/hidden/$t"
  chmod +x "$work/hidden/$t"
done
/usr/bin/python3 -m venv "$work/venv"
export PATH="$work/hidden:$work/venv/bin:$PATH" CC=false CXX=false
unset DETFEED_LIBRARY PYTHONPATH LD_LIBRARY_PATH
pip=("$work/venv/bin/python" -m pip)
"${pip[@]}" install -q --only-binary=:all: "$wheel" numpy pytest
echo "== installed: $("${pip[@]}" show detfeed | grep -E '^(Name|Version)' | tr '\n' ' ')"
echo "== detfeed --help"
detfeed --help | head -3
echo "== the package's library and the image libraries it maps"
(cd "$work" && python - <<'PY'
import os, detfeed, detfeed._lib as L
pkg = os.path.dirname(os.path.dirname(detfeed.__file__))
lib = L.library()
assert lib.path.startswith(pkg), lib.path
assert lib.version() == detfeed.__version__, (lib.version(), detfeed.__version__)
maps = {line.split()[-1] for line in open("/proc/self/maps") if ".so" in line}
for name in ("libturbojpeg", "libspng", "libwebp", "libtiff", "libopenjp2", "libavif",
             "libaom", "libheif", "libde265"):
    hits = [m for m in maps if os.path.basename(m).startswith(name)]
    assert hits and all(m.startswith(pkg) for m in hits), (name, hits)
    print(name, "from", hits[0])
print("libdetfeed", lib.version(), "from", lib.path, "; CUDA devices:", detfeed.cuda_device_count())
PY
)
echo "== Python tests (without PyTorch)"
cp -r python/tests "$work/tests"
(cd "$work/tests" && DETFEED_CLI="$work/venv/bin/detfeed" DETFEED_TEST_DATA="${DETFEED_TEST_DATA:-$OLDPWD/../shared/data}" \
  python -m pytest -q -p no:cacheprovider test_lib.py test_loader.py test_safety.py \
  test_disk_cache.py test_dense_masks.py test_verify_record.py)
