#!/usr/bin/env bash
# Checks what `cmake --install` gives C users, on an already built tree:
#
#   tests/install/run.sh BUILD_DIR
#
# installs BUILD_DIR into a temporary prefix, checks the files are there,
# builds tests/install/consumer.c against the install three ways (pkg-config
# with the shared library, pkg-config --static with libdetfeed.a, and the
# CMake project beside this script through find_package), runs each program
# and the installed tool. One line per check; exits 1 when any check fails.
# Everything it makes goes into a temporary folder, removed at exit (the
# install leaves only install_manifest.txt in BUILD_DIR, as every
# `cmake --install` does). CC picks the C compiler (default cc).
set -uo pipefail

if [ $# -ne 1 ] || [ ! -f "$1/CMakeCache.txt" ]; then
  echo "usage: $0 BUILD_DIR (a configured and built detfeed build folder)" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/detfeed-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
failures=0

# check NAME COMMAND...: runs COMMAND with its output in a log, prints one
# line, and on failure the start of the log. Returns COMMAND's status.
check() {
  local name=$1
  shift
  if "$@" >"$tmp/log" 2>&1; then
    echo "ok   $name"
  else
    echo "FAIL $name"
    head -n 40 "$tmp/log" | sed 's/^/     | /'
    failures=$((failures + 1))
    return 1
  fi
}

# The folders the build installs into, relative to the prefix (GNUInstallDirs
# may choose lib64 or a multiarch folder for lib).
cache_var() {
  sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"
}
libdir=$prefix/$(cache_var CMAKE_INSTALL_LIBDIR)
includedir=$prefix/$(cache_var CMAKE_INSTALL_INCLUDEDIR)
bindir=$prefix/$(cache_var CMAKE_INSTALL_BINDIR)

if ! check "cmake --install into a temporary prefix" \
  cmake --install "$build" --prefix "$prefix"; then
  exit 1
fi

export PKG_CONFIG_PATH=$libdir/pkgconfig
version=$(pkg-config --modversion detfeed 2>/dev/null)
major=${version%%.*}

files_present() {
  local f ok=0
  for f in "$includedir"/detfeed.h "$includedir"/detfeed_img.h "$includedir"/detfeed_cuda.h \
    "$libdir/libdetfeed.so" "$libdir/libdetfeed.so.$major" "$libdir/libdetfeed.so.$version" \
    "$libdir/libdetfeed.a" "$libdir/pkgconfig/detfeed.pc" \
    "$libdir/cmake/detfeed/detfeedConfig.cmake" \
    "$libdir/cmake/detfeed/detfeedConfigVersion.cmake" \
    "$libdir/cmake/detfeed/detfeedTargets.cmake" "$bindir/detfeed"; do
    [ -e "$f" ] || { echo "missing: ${f#"$prefix"/}"; ok=1; }
  done
  return $ok
}
check "installed files (headers, libdetfeed.so.$version and links, .a, .pc, CMake package, bin/detfeed)" \
  files_present

soname_is() {
  readelf -d "$libdir/libdetfeed.so.$version" | grep -F "(SONAME)" | tee /dev/stderr |
    grep -qF "[libdetfeed.so.$major]"
}
check "libdetfeed.so's SONAME is libdetfeed.so.$major" soname_is

# Each public header on its own, as a user may include any one of them first.
headers_alone() {
  local h
  for h in detfeed.h detfeed_img.h detfeed_cuda.h; do
    printf '#include <%s>\n' "$h" |
      "$cc" -std=c11 -Wall -Wextra -Werror -pedantic -I"$includedir" -fsyntax-only -x c - ||
      return 1
  done
}
check "each installed header compiles alone (C11, -pedantic)" headers_alone

check "pkg-config --validate detfeed" pkg-config --validate detfeed

# The CUDA part is expected exactly when the .pc declares the static CUDA
# runtime: the consumer checks that the library agrees.
cuda=0
pkg-config --static --libs detfeed | grep -q -- -lcudart_static && cuda=1
echo "     (version $version, CUDA part $cuda by detfeed.pc)"

# needs PROGRAM: the shared libraries PROGRAM names (DT_NEEDED), one a line.
needs() {
  readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}
uses_installed_so() {
  needs "$1" | grep -qx "libdetfeed.so.$major" &&
    ldd "$1" | grep -F "libdetfeed.so.$major" | tee /dev/stderr | grep -qF "$libdir/"
}
static_only() {
  if needs "$1" | grep -q '^libdetfeed\.so'; then
    needs "$1"
    return 1
  fi
}

flags=(-std=c11 -Wall -Wextra -Werror)
# (a) the shared library; an rpath finds it in the temporary prefix.
# shellcheck disable=SC2046 # pkg-config's output is a list of words
if check "pkg-config: build against libdetfeed.so" \
  "$cc" "${flags[@]}" "$here/consumer.c" -o "$tmp/consumer_pc_shared" \
  $(pkg-config --cflags --libs detfeed) -Wl,-rpath,"$libdir"; then
  check "pkg-config shared: needs the installed libdetfeed.so.$major" \
    uses_installed_so "$tmp/consumer_pc_shared"
  check "pkg-config shared: runs" "$tmp/consumer_pc_shared" $cuda
fi

# (b) libdetfeed.a: only the private libraries of `pkg-config --static`
# beside it. libdetfeed.so lies in the same folder, so the linker is told to
# take the archive for -ldetfeed, as a user who wants it static would.
static_libs=$(pkg-config --static --libs detfeed | sed 's/\(^\| \)-ldetfeed\( \|$\)/ -Wl,-Bstatic -ldetfeed -Wl,-Bdynamic /')
# shellcheck disable=SC2046,SC2086
if check "pkg-config --static: build against libdetfeed.a" \
  "$cc" "${flags[@]}" "$here/consumer.c" -o "$tmp/consumer_pc_static" \
  $(pkg-config --cflags detfeed) $static_libs; then
  check "pkg-config static: does not need libdetfeed.so" static_only "$tmp/consumer_pc_static"
  check "pkg-config static: runs" "$tmp/consumer_pc_static" $cuda
fi

# (c) find_package(detfeed) with the prefix in CMAKE_PREFIX_PATH, which is
# searched before the system's prefixes; the user package registry is left
# out, and the folder it found checked, in case another detfeed is installed.
found_here() {
  grep -x "detfeed_DIR:PATH=$libdir/cmake/detfeed" "$tmp/cmake/CMakeCache.txt"
}
if check "find_package(detfeed): configure the consumer project" \
  cmake -S "$here" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF &&
  check "find_package(detfeed): found in the temporary prefix" found_here &&
  check "find_package(detfeed): build detfeed::detfeed and detfeed::detfeed_static" \
    cmake --build "$tmp/cmake" -j2; then
  check "detfeed::detfeed: needs the installed libdetfeed.so.$major" \
    uses_installed_so "$tmp/cmake/consumer_shared"
  check "detfeed::detfeed: runs" "$tmp/cmake/consumer_shared" $cuda
  check "detfeed::detfeed_static: does not need libdetfeed.so" \
    static_only "$tmp/cmake/consumer_static"
  check "detfeed::detfeed_static: runs" "$tmp/cmake/consumer_static" $cuda
fi

check "bin/detfeed --help" "$bindir/detfeed" --help
version_line() {
  "$bindir/detfeed" version | tee /dev/stderr | head -n 1 | grep -qx "detfeed $version"
}
check "bin/detfeed version says $version" version_line

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all install checks passed"
