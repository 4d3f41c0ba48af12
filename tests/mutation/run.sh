#!/usr/bin/env bash
# Mutation check of the captured-pixel test: builds the colour core with one
# deliberate arithmetic change at a time and requires tests/unit/test_captured
# to FAIL with each, then requires it to pass on the unchanged code.
#
#   tests/mutation/run.sh [CC]
#
# Each mutation is "file|original text|replacement". The source tree is not
# touched: mutated copies are compiled in a temporary folder.
set -euo pipefail
cc=${1:-cc}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mutations=(
  "src/img/color_px.h|float t2 = form & DETFEED__HSV_FUSE_T2 ?|float t2 = 0 ?"
  "src/img/color_px.h|float t3 = form & DETFEED__HSV_FUSE_T3 ?|float t3 = 0 ?"
  "src/img/color_px.h|form & DETFEED__HSV_ROUND ? rintf(y) : truncf(y)|rintf(y)"
  "src/img/color_px.h|form & DETFEED__HSV_ROUND ? rintf(y) : truncf(y)|truncf(y)"
  "src/img/color_avx2.c|tap8(s, f, v, form & DETFEED__HSV_FUSE_T2)|tap8(s, f, v, 0)"
  "src/img/color_avx2.c|v, form & DETFEED__HSV_FUSE_T3)|v, 0)"
  "src/img/color_avx2.c|if (form & DETFEED__HSV_ROUND)|if (1)"
  "src/img/color_avx2.c|if (form & DETFEED__HSV_ROUND)|if (0)"
  "src/img/color_avx512.c|tap16(s, f, v, form & DETFEED__HSV_FUSE_T2)|tap16(s, f, v, 0)"
  "src/img/color_avx512.c|v, form & DETFEED__HSV_FUSE_T3)|v, 0)"
  "src/img/color_avx512.c|: _mm512_cvttps_epi32(c)|: _mm512_cvtps_epi32(c)"
  "src/img/color_avx512.c|form & DETFEED__HSV_ROUND ? round_even(c)|0 ? round_even(c)"
  "src/img/color_avx512.c|_mm512_mul_ps(_mm512_cvtepi32_ps(Hq), _mm512_set1_ps(0x1.111112p-5f))|_mm512_div_ps(_mm512_cvtepi32_ps(Hq), _mm512_set1_ps(30.0f))"
  "src/img/color_avx512.c|_mm512_mul_ps(_mm512_cvtepi32_ps(Sq), k)|_mm512_div_ps(_mm512_cvtepi32_ps(Sq), _mm512_set1_ps(255.0f))"
  "src/img/color_avx512.c|_mm512_mul_ps(_mm512_cvtepi32_ps(Vq), k)|_mm512_div_ps(_mm512_cvtepi32_ps(Vq), _mm512_set1_ps(255.0f))"
  "src/img/color_px.h|(float)hue * DETFEED__HSCALE|(float)hue / 30.0f"
  "src/img/color_px.h|(float)x * DETFEED__K255|(float)x / 255.0f"
)

build_and_run() { # $1 = source root to build from; prints the test's verdict
  local root=$1 obj=$work/obj
  rm -rf "$obj" && mkdir -p "$obj"
  local flags=(-std=c11 -O2 -D_POSIX_C_SOURCE=200809L -ffp-contract=off -fno-fast-math
               -I"$top/include" -I"$root/src" -DDETFEED_HAVE_AVX2 -DDETFEED_HAVE_AVX512)
  "$cc" "${flags[@]}" -c "$root/src/img/color.c" -o "$obj/color.o"
  "$cc" "${flags[@]}" -mavx2 -mfma -c "$root/src/img/color_avx2.c" -o "$obj/color_avx2.o"
  "$cc" "${flags[@]}" -mavx512f -mavx512bw -mavx512vbmi -mfma \
    -c "$root/src/img/color_avx512.c" -o "$obj/color_avx512.o"
  for f in src/core/status.c src/core/sha256.c src/core/sha256_x86.c src/core/cv.c src/core/cpu.c \
           tests/unit/testutil.c tests/unit/test_captured.c; do
    "$cc" "${flags[@]}" -c "$top/$f" -o "$obj/$(basename "$f" .c).o"
  done
  "$cc" "$obj"/*.o -lm -o "$obj/test_captured"
  "$obj/test_captured" >/dev/null 2>&1
}

if ! build_and_run "$top"; then
  echo "FAIL: test_captured fails on the unchanged code"; exit 1
fi
# A mutation of a kernel this CPU cannot run cannot be caught here.
runs() { # $1 = file
  case $1 in
    *avx512*) grep -qw avx512vbmi /proc/cpuinfo ;;
    *avx2*) grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo ;;
    *) true ;;
  esac
}
caught=0 missed=0 skipped=0
for m in "${mutations[@]}"; do
  IFS='|' read -r file from to <<<"$m"
  if ! runs "$file"; then
    echo "skipped (this CPU cannot run it): $file: '$from'"; skipped=$((skipped + 1)); continue
  fi
  rm -rf "$work/src" && cp -r "$top/src" "$work/src"
  python3 "$top/tests/mutation/mutate.py" "$work/$file" "$from" "$to"
  if build_and_run "$work"; then
    echo "MISSED: $file: '$from' -> '$to' (test_captured still passes)"; missed=$((missed + 1))
  else
    echo "caught: $file: '$from' -> '$to'"; caught=$((caught + 1))
  fi
done
echo "mutation: $caught passed, $missed failed, $skipped skipped"
[ "$missed" -eq 0 ]
