#!/usr/bin/env bash
# Installs the Debian 12 packages detfeed needs, only those that are missing.
#   scripts/deps.sh build    what building the library and the tool needs
#   scripts/deps.sh test     that, plus the test oracles (OpenCV, NumPy) and clang
set -euo pipefail
# libnuma-dev: `pkg-config --static libheif` names x265's -lnuma (a static
# consumer of libdetfeed.a links it).
want=(cmake make gcc pkg-config libspng-dev libturbojpeg0-dev zlib1g-dev libxxhash-dev libwebp-dev libtiff-dev
      libopenjp2-7-dev libavif-dev libheif-dev libde265-dev libnuma-dev)
if [ "${1:-build}" = test ]; then
  want+=(python3 python3-numpy python3-opencv python3-pil python3-venv python3-pytest clang clang-format
         libclang-rt-14-dev libopenjp2-tools libavif-bin libheif-examples)
fi
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
