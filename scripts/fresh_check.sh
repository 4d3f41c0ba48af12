#!/usr/bin/env bash
# The README's two commands on fresh Debian 12 systems, in both orders:
#   sudo scripts/fresh_check.sh [WORK]     (default WORK: /tmp/detfeed-fresh)
# For each order (bench then test; test then bench): debootstrap a new
# Debian 12 (bookworm) root under WORK, clone this repository's HEAD into
# it with ../shared beside it (copied), install git (how the clone got
# there), and run scripts/bench.sh and scripts/test.sh inside it (chroot,
# a clean environment) in that order. Logs: WORK/ORDER.log. Needs root,
# debootstrap (installed when missing) and the network to Debian's and
# PyPI's registries; a TLS proxy the host trusts is trusted inside too
# (the host's CA bundle is handed to pip as PIP_CERT). Exit 0 when both
# orders pass.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/detfeed-fresh}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" -eq 0 ] || { echo "fresh_check: needs root (debootstrap, chroot)" >&2; exit 2; }
[ -d ../shared ] || { echo "fresh_check: ../shared is missing" >&2; exit 2; }
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
mkdir -p "$work"
mounted=()
cleanup() {
  for m in "${mounted[@]}"; do umount -R "$m" 2>/dev/null || true; done
}
trap cleanup EXIT

# One new root with the repository and the shared data in /root/src.
make_root() {
  local root=$1
  if grep -q " $root/" /proc/mounts; then # left by an interrupted run
    umount -R "$root/proc" "$root/dev" "$root/sys" 2>/dev/null || true
    ! grep -q " $root/" /proc/mounts || { echo "fresh_check: $root has mounts" >&2; exit 1; }
  fi
  rm -rf --one-file-system "$root"
  debootstrap bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1
  mkdir -p "$root/root/src"
  git clone -q "$PWD" "$root/root/src/main"
  cp -a ../shared "$root/root/src/shared"
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/host-ca.crt" 2>/dev/null || true
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  mount -t proc proc "$root/proc" && mounted+=("$root/proc")
  mount --rbind /dev "$root/dev" && mounted+=("$root/dev")
  mount --rbind /sys "$root/sys" && mounted+=("$root/sys")
}

# Runs the commands of one order in a new root; returns their status.
run_order() {
  local name=$1 first=$2 second=$3 root=$work/$1
  make_root "$root"
  local ca=""
  [ -f "$root/etc/host-ca.crt" ] && ca="PIP_CERT=/etc/host-ca.crt"
  echo "== $name: scripts/$first.sh, then scripts/$second.sh (log: $root.log)"
  chroot "$root" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TERM=dumb $ca bash -c "set -e
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq && apt-get install -y -qq git >/dev/null
      cd /root/src/main
      git config --global --add safe.directory /root/src/main
      scripts/$first.sh && echo 'fresh_check: $first passed'
      scripts/$second.sh && echo 'fresh_check: $second passed'" >"$root.log" 2>&1
}

status=0
for order in "bench-test bench test" "test-bench test bench"; do
  set -- $order
  if run_order "$1" "$2" "$3"; then
    echo "$1: both commands passed"
  else
    echo "$1: FAILED (last lines of $work/$1.log):"; tail -15 "$work/$1.log"; status=1
  fi
done
exit $status
