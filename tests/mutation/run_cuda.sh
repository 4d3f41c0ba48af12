#!/usr/bin/env bash
# Mutation check of the CUDA kernel: builds tests/gpu/test_cuda_kernel
# (captured pixels and dtype tables) against the kernel with one deliberate
# change at a time, and requires each mutant to FAIL on a CUDA device while
# the unchanged kernel passes.
#
#   tests/mutation/run_cuda.sh build BUILD OUT   compile (here; needs nvcc)
#   tests/mutation/run_cuda.sh run OUT           run them (needs a CUDA device)
#
# BUILD is a CMake build folder of detfeed with the CUDA part (its
# libdetfeed.a supplies everything but the kernel). The source tree is not
# touched: mutated copies are compiled in a temporary folder.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)

# "name|file|original text|replacement"; file "flags" changes nvcc's flags.
# Each must make the captured test fail.
mutations=(
  "hue-div|src/img/color_px.h|(float)hue * DETFEED__HSCALE|(float)hue / 30.0f"
  "unit-div|src/img/color_px.h|(float)x * DETFEED__K255|(float)x / 255.0f"
  "t2-unfused|src/img/color_px.h|float t2 = form & DETFEED__HSV_FUSE_T2 ?|float t2 = 0 ?"
  "t3-unfused|src/img/color_px.h|float t3 = form & DETFEED__HSV_FUSE_T3 ?|float t3 = 0 ?"
  "round|src/img/color_px.h|form & DETFEED__HSV_ROUND ? rintf(y) : truncf(y)|rintf(y)"
  "trunc|src/img/color_px.h|form & DETFEED__HSV_ROUND ? rintf(y) : truncf(y)|truncf(y)"
  "no-tail|src/cuda/color_kernel.cu|return x < r.block_end ? r.simd : r.tail;|return r.simd;"
  "recip255|src/cuda/color_kernel.cu|return (T)tab.v[c];|return (T)__float_as_uint((float)c * (1.0f / 255.0f));"
  "fmad|flags|-fmad=false|-fmad=true"
)
# Equivalent mutants: changes that must NOT change a byte, checked on all
# 2^24 triples. None today: -fmad=true used to be one (the kernel wrote only
# fused steps), but the unfused formulas of the SSE code path and of the
# 4.x row tail now contract to different bytes, so it is a mutation above.
equivalent=()

build() { # BUILD OUT
  local bdir=$1 out=$2 work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  mkdir -p "$out"
  local cflags=(-std=c11 -O2 -ffp-contract=off -I"$top/include" -I"$top/src" -I"$top/tests/unit")
  cc "${cflags[@]}" -I"$(dirname "$(command -v nvcc)")/../include" \
    -c "$top/tests/gpu/test_cuda_kernel.c" -o "$work/test.o"
  cc "${cflags[@]}" -c "$top/tests/unit/testutil.c" -o "$work/testutil.o"
  local libs=("$bdir/libdetfeed.a" $(pkg-config --libs libturbojpeg spng) -lm -lpthread)
  for m in "unchanged|||" "${mutations[@]}" "${equivalent[@]}"; do
    IFS='|' read -r name file from to <<<"$m"
    rm -rf "$work/src" && cp -r "$top/src" "$work/src"
    local nvflags=(-arch=sm_90 -O3 -fmad=false --prec-div=true --prec-sqrt=true --ftz=false)
    if [ "$file" = flags ]; then
      nvflags=("${nvflags[@]/$from/$to}")
    elif [ -n "$file" ]; then
      python3 "$top/tests/mutation/mutate.py" "$work/$file" "$from" "$to"
    fi
    nvcc "${nvflags[@]}" -I"$top/include" -I"$work/src" -I"$work/src/cuda" \
      -c "$work/src/cuda/color_kernel.cu" -o "$work/kernel.o"
    # The mutated kernel object comes first, so the archive's is not used.
    nvcc -arch=sm_90 "$work/test.o" "$work/testutil.o" "$work/kernel.o" "${libs[@]}" \
      -o "$out/test_cuda_kernel.$name"
    echo "built $out/test_cuda_kernel.$name"
  done
}

run() { # OUT
  local out=$1 caught=0 missed=0
  if ! "$out/test_cuda_kernel.unchanged" --captured; then
    echo "FAIL: the unchanged kernel fails the captured test"; exit 1
  fi
  for m in "${mutations[@]}"; do
    IFS='|' read -r name file from to <<<"$m"
    if "$out/test_cuda_kernel.$name" --captured >"$out/$name.log" 2>&1; then
      echo "MISSED: $name ($file: '$from' -> '$to'): the test still passes"
      missed=$((missed + 1))
    else
      echo "caught: $name ($file: '$from' -> '$to'): $(grep -E 'wrong' "$out/$name.log" | grep -v ' 0 wrong' | head -1)"
      caught=$((caught + 1))
    fi
  done
  for m in "${equivalent[@]}"; do
    IFS='|' read -r name file from to <<<"$m"
    if "$out/test_cuda_kernel.$name" >"$out/$name.log" 2>&1; then
      echo "equivalent, as expected: $name ($file: '$from' -> '$to'): $(grep '^all 2^24' "$out/$name.log")"
    else
      echo "NOT EQUIVALENT: $name ($file: '$from' -> '$to') changes bytes: see $out/$name.log"
      missed=$((missed + 1))
    fi
  done
  echo "cuda mutation: $caught caught, $missed missed or not equivalent"
  [ "$missed" -eq 0 ]
}

case ${1:-} in
  build) build "$2" "$3" ;;
  run) run "$2" ;;
  *) sed -n '2,12p' "$0"; exit 2 ;;
esac
