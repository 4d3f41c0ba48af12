#!/usr/bin/env bash
# Two builds of the detfeed tool, A and B, alternately on the loader benchmark:
# images/s (each run's median epoch) and the geometry and convert stages' ms
# per image, the median over the runs and the pairwise ratio A/B.
#
#   bench/ab_loader.sh A_DETFEED B_DETFEED DATA [RUNS] [bench options...]
#
# A_ARGS and B_ARGS (environment) add options to one arm only, e.g. the same
# build under two reference stacks:
#   A_ARGS="--set opencv=5.1" B_ARGS="--set opencv=4" \
#     bench/ab_loader.sh build/detfeed build/detfeed DATA 7 --workers 2
set -euo pipefail
a=$1 b=$2 data=$3 runs=${4:-7}
shift $(( $# < 4 ? $# : 4 ))
read -r -a a_args <<<"${A_ARGS:-}"
read -r -a b_args <<<"${B_ARGS:-}"
for r in $(seq "$runs"); do
  "$a" bench "$data" --json "$@" "${a_args[@]}" 2>/dev/null | grep '^{' | sed 's/^{/{"arm":"A",/'
  "$b" bench "$data" --json "$@" "${b_args[@]}" 2>/dev/null | grep '^{' | sed 's/^{/{"arm":"B",/'
done | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
med = lambda v: sorted(v)[len(v) // 2]
for arm in "AB":
    r = [x for x in rows if x["arm"] == arm]
    ips = [x["images_per_s"] for x in r]
    per = lambda k: med([x["stages"][k] * 1e3 / (x["images_per_epoch"] * x["epochs"]) for x in r])
    print("%s: %.1f images/s (min %.1f, max %.1f); geometry %.3f, convert %.3f ms/image" % (arm, med(ips), min(ips), max(ips), per("geometry"), per("convert")))
A = [x["images_per_s"] for x in rows if x["arm"] == "A"]
B = [x["images_per_s"] for x in rows if x["arm"] == "B"]
q = [x / y for x, y in zip(A, B)]
print("A/B images/s: %.3f (paired median; %.3f-%.3f, %d pairs)" % (med(q), min(q), max(q), len(q)))
'
