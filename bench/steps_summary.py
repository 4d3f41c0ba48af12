#!/usr/bin/env python3
"""Paired epoch ratios of bench/route_steps.py runs, each series and pooled.

    python3 bench/steps_summary.py STEPS_JSON...

For each JSON (one fit whose epochs alternate between routes) and each
ratio in its `paired_wall_ratio` (a route's median step against the first
route's in the neighbouring epoch): the number of pairs, their median, their
geometric mean with a 95% interval (mean of the logs +- t x standard error),
how many are above 1, each route's median step wall, trainer-thread CPU,
process CPU and `next` time (ms), and the model hash. Then the same ratios
pooled over every file.
"""
import collections
import json
import math
import statistics
import sys
from statistics import NormalDist

MEASURES = ("wall_ms", "thread_cpu_ms", "process_cpu_ms", "next_ms")


def t_quantile(p, dof):
    """Student's t quantile (Cornish-Fisher expansion: within 0.003 of the
    exact value for dof >= 5, 0.001 for dof >= 8)."""
    z = NormalDist().inv_cdf(p)
    return (z + (z**3 + z) / (4 * dof) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * dof**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * dof**3))


def ratio_line(ratios):
    """n, median, geometric mean and its 95% interval, pairs above 1."""
    logs = [math.log(r) for r in ratios]
    line = "n %d, median %.3f" % (len(ratios), statistics.median(ratios))
    if len(logs) < 2:
        return line
    mean = statistics.mean(logs)
    half = t_quantile(0.975, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return line + ", geometric mean %.3f (95%% %.3f-%.3f), above 1 in %d" % (
        math.exp(mean), math.exp(mean - half), math.exp(mean + half),
        sum(r > 1 for r in ratios))


def route_medians(run):
    """Each route's median of every measure over its measured steps."""
    out = {}
    for route in run["routes"]:
        steps = [s for s in run["steps"] if s["route"] == route and s["measured"]]
        out[route] = [statistics.median(s[m] for s in steps) if steps else float("nan")
                      for m in MEASURES]
    return out


def main(paths):
    pooled = collections.defaultdict(list)
    for path in paths:
        try:
            with open(path) as f:
                run = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit("steps_summary: %s: %s" % (path, e))
        print("%s: batch %s, imgsz %s, %s epochs, model hash %s" % (
            path, run["batch"], run["imgsz"], run["epochs"], run["hash_model"][:16]))
        for route, med in route_medians(run).items():
            print("  %-8s median step %.2f ms, thread CPU %.2f, process CPU %.2f, next %.3f"
                  % (route, *med))
        for name, ratios in run["paired_wall_ratio"].items():
            if ratios:
                print("  %s: %s" % (name, ratio_line(ratios)))
                pooled[name] += ratios
    if len(paths) > 1:
        for name, ratios in pooled.items():
            print("pooled %s: %s" % (name, ratio_line(ratios)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0)
    if len(sys.argv) < 2:
        sys.exit("usage: python3 bench/steps_summary.py STEPS_JSON... (--help)")
    sys.exit(main(sys.argv[1:]))
