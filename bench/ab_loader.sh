#!/usr/bin/env bash
# Two builds of the detfeed tool, A and B, alternately on the loader benchmark:
# images/s (each run's median epoch) and the convert stage's ms per image, the
# median over the runs and the pairwise ratio A/B.
#
#   bench/ab_loader.sh A_DETFEED B_DETFEED DATA [RUNS] [bench options...]
set -euo pipefail
a=$1 b=$2 data=$3 runs=${4:-7}
shift $(( $# < 4 ? $# : 4 ))
for r in $(seq "$runs"); do
  for t in "A $a" "B $b"; do
    set -- $t "$@"
    "$2" bench "$data" --json "${@:3}" 2>/dev/null | grep '^{' | sed "s/^{/{\"arm\":\"$1\",/"
    shift 2
  done
done | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
med = lambda v: sorted(v)[len(v) // 2]
for arm in "AB":
    r = [x for x in rows if x["arm"] == arm]
    ips = [x["images_per_s"] for x in r]
    conv = [x["stages"]["convert"] * 1e3 / (x["images_per_epoch"] * x["epochs"]) for x in r]
    print("%s: %.1f images/s (min %.1f, max %.1f); convert %.3f ms/image" % (arm, med(ips), min(ips), max(ips), med(conv)))
A = [x["images_per_s"] for x in rows if x["arm"] == "A"]
B = [x["images_per_s"] for x in rows if x["arm"] == "B"]
q = [x / y for x, y in zip(A, B)]
print("A/B images/s: %.3f (paired median; %.3f-%.3f, %d pairs)" % (med(q), min(q), max(q), len(q)))
'
