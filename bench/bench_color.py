"""Benchmark: detfeed's fused colour kernel against Ultralytics' RandomHSV
procedure with cv2 (cvtColor, three LUTs, split/merge, cvtColor), on one
core, on real images letterboxed to 640x640, in the same process and run.

Both arms do the whole colour step from the drawn gains to the output image
(tables included), in place on a fresh copy of each canvas; the copy is not
timed. Rounds alternate the order of the two arms; the first round is a
warm-up. Reported: per-image median over rounds for each arm and the median
of the per-round ratios. Every output is compared byte for byte first.

    taskset -c 0 /usr/bin/python3 bench/bench_color.py --lib build/libdetfeed.so \
        --images ../shared/data/coco128/images/train2017 --out bench/results
"""
import argparse
import glob
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import bench_util as bu  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    bu.add_lib_argument(ap)
    ap.add_argument("--images", required=True, help="folder of real images")
    ap.add_argument("--imgsz", type=int, default=640)
    ap.add_argument("--rounds", type=int, default=7, help="timed rounds (after 1 warm-up)")
    ap.add_argument("--core", type=int, default=0, help="CPU core to pin to (-1: none)")
    ap.add_argument("--isa", default="auto", choices=bu.capi().ISAS)
    ap.add_argument("--out", help="folder for the JSON and Markdown result")
    ap.add_argument("--tag", default="", help="name part of the result files")
    args = ap.parse_args()

    import cv2
    import numpy as np
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "oracle"))
    import oracle_util as ou

    if args.core >= 0:
        os.sched_setaffinity(0, {args.core})
    cv2.setNumThreads(1)
    lib = bu.load_library(args.lib)
    isas = bu.capi().ISAS
    isa = isas.index(args.isa)
    resolved = isas[lib.detfeed_isa_best()] if args.isa == "auto" else args.isa
    lut = np.zeros((3, 256), np.uint8)

    def detfeed_hsv(img, r):
        lib.detfeed_hsv_lut(r[0], r[1], r[2], lut.ctypes.data)
        rc = lib.detfeed_hsv_apply(img.ctypes.data, img.strides[0], img.ctypes.data,
                                   img.strides[0], img.shape[1], img.shape[0],
                                   lut.ctypes.data, isa)
        assert rc == 0, rc

    paths = sorted(glob.glob(os.path.join(args.images, "*.jpg")))
    canvases = [bu.letterbox(cv2, np, cv2.imread(p), args.imgsz) for p in paths]
    rng = np.random.default_rng(0)
    gains = [tuple(rng.uniform(-1, 1, 3) * [0.015, 0.7, 0.4]) for _ in canvases]

    differ = 0
    for c, r in zip(canvases, gains):
        a, b = c.copy(), c.copy()
        ou.random_hsv(a, r)
        detfeed_hsv(b, r)
        differ += int(np.count_nonzero(a != b))
    compared = sum(c.size for c in canvases)

    arms = {"cv2": lambda img, r: ou.random_hsv(img, r), "detfeed": detfeed_hsv}
    per_round = {k: [] for k in arms}
    for rnd in range(args.rounds + 1):
        order = ["cv2", "detfeed"] if rnd % 2 == 0 else ["detfeed", "cv2"]
        for name in order:
            total = 0.0
            for c, r in zip(canvases, gains):
                buf = c.copy()
                t0 = time.perf_counter()
                arms[name](buf, r)
                total += time.perf_counter() - t0
            if rnd > 0:
                per_round[name].append(total / len(canvases) * 1e3)
    ratios = [a / b for a, b in zip(per_round["cv2"], per_round["detfeed"])]
    res = {
        "benchmark": "colour step, one core, %dx%d real images" % (args.imgsz, args.imgsz),
        "images": len(canvases),
        "rounds": args.rounds,
        "isa": resolved,
        "cv2_ms_per_image": bu.median(per_round["cv2"]),
        "detfeed_ms_per_image": bu.median(per_round["detfeed"]),
        "cv2_ms_range": [min(per_round["cv2"]), max(per_round["cv2"])],
        "detfeed_ms_range": [min(per_round["detfeed"]), max(per_round["detfeed"])],
        "speedup_median": bu.median(ratios),
        "speedup_range": [min(ratios), max(ratios)],
        "bytes_compared": compared,
        "bytes_differing": differ,
        "machine": bu.machine_info({"opencv": cv2.__version__, "numpy": np.__version__,
                                    "pinned_core": args.core}),
        "command": "taskset -c 0 /usr/bin/python3 bench/bench_color.py --lib %s --images %s"
                   " --isa %s --rounds %d --core -1" % (os.path.relpath(args.lib), args.images,
                                                        args.isa, args.rounds),
    }
    bu.finish(res, args.out, "color", args.tag)

if __name__ == "__main__":
    main()
