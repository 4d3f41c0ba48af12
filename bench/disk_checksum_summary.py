"""Summary of bench/disk_checksum.sh: each arm's median epoch time (images
per epoch over images/s, the median of a run's epochs) and, pair by pair,
head / unchecked (what the checksum costs) and head / mapped (the change
users see), as medians with the lowest and highest pair; then, from the
loader's own stage clocks in the same runs, the share of the workers' time
spent reading images from the file and checking their checksums.

    python3 bench/disk_checksum_summary.py runs.jsonl
"""
import json
import statistics
import sys


def main(path):
    runs = [json.loads(line) for line in open(path)]
    by = {}
    for r in runs:
        s = r["run"]["images_per_epoch"] / r["run"]["images_per_s"]
        by.setdefault(r["pair"], {})[r["arm"]] = s
    arms = ("head", "unchecked", "mapped")
    pairs = [p for p in sorted(by) if all(a in by[p] for a in arms)]
    print("pairs: %d, epochs per run: %d, workers %d, imgsz %d" % (
        len(pairs), runs[0]["run"]["epochs"], runs[0]["run"]["workers"],
        runs[0]["run"]["imgsz"]))
    print("| arm | median epoch s | min | max |")
    print("| --- | --- | --- | --- |")
    for a in arms:
        v = [by[p][a] for p in pairs]
        print("| %s | %.4f | %.4f | %.4f |" % (a, statistics.median(v), min(v), max(v)))
    print("| ratio, pair by pair | median | min | max |")
    print("| --- | --- | --- | --- |")
    for num, den in (("head", "unchecked"), ("head", "mapped"), ("unchecked", "mapped")):
        v = [by[p][num] / by[p][den] for p in pairs]
        print("| %s / %s | %.4f | %.4f | %.4f |" % (num, den, statistics.median(v),
                                                   min(v), max(v)))
    print("| arm | read share of worker time | check share |")
    print("| --- | --- | --- |")
    for a in arms:
        share = {"read": [], "check": []}
        for r in runs:
            st = r["run"]["stages"]
            if r["arm"] != a or "read" not in st:
                continue
            total = sum(v for k, v in st.items() if k != "wait")
            for k in share:
                share[k].append(st[k] / total)
        if share["read"]:
            print("| %s | %.2f%% | %.2f%% |" % (a, 100 * statistics.median(share["read"]),
                                               100 * statistics.median(share["check"])))
        else:
            print("| %s | (no such stages) | |" % a)


if __name__ == "__main__":
    main(sys.argv[1])
