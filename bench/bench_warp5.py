"""Benchmark: one 1280x1280 -> 640x640 warpAffine (the mosaic warp of every
Ultralytics training sample), per reference stack, against detfeed's OpenCV
4.x path (detfeed_warp_affine) in the same run, on one core.

Arms, each on the same random canvas and the same matrices:
  4.x           detfeed_warp_affine (fixed point), the baseline
  5.0 avx2      detfeed_warp_affine_cv, OpenCV 5.0's float kernel as its AVX2
                build computes it (fused, blocks of 16)
  5.0 sse       the same as its SSE build computes it (unfused, blocks of 8)
  5.1 ipp       OpenCV 5.1's default (IPP model)
and, with --cv2 (PYTHONPATH naming a cv2 wheel), cv2.warpAffine on one
thread. Two matrices: Ultralytics' default (scale and translation only) and
one with rotation and shear. Every round runs all arms once per matrix in
turn; the first round is a warm-up; the medians over the other rounds are
reported, with each arm's ratio to 4.x.

    taskset -c 0 /usr/bin/python3 bench/bench_warp5.py --lib build/libdetfeed.so
    PYTHONPATH=build-py/cv/5.1.0.95 taskset -c 0 /usr/bin/python3 \\
        bench/bench_warp5.py --lib build/libdetfeed.so --cv2 --out bench/results
"""
import argparse
import ctypes
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import bench_util as bu  # noqa: E402


# The arms' stacks: OpenCV version, code path and IPP flag, by name.
STACKS = {"5.0 avx2": ("5.0", "avx2", 0), "5.0 sse": ("5.0", "sse", 0),
          "5.1 ipp": ("5.1", "avx2", 1)}


def matrices(np):
    """Ultralytics' default mosaic matrix (scale 1.2, translation) and one
    with 10 degrees of rotation and 2 of shear, both float32 as Ultralytics
    builds them."""
    out = {}
    for name, deg, shear in (("scale", 0.0, 0.0), ("rotate", 10.0, 2.0)):
        a, s = math.radians(deg), 1.2
        R = np.array([[s * math.cos(a), s * math.sin(a), 0], [-s * math.sin(a), s * math.cos(a), 0],
                      [0, 0, 1]])
        S = np.eye(3)
        S[0, 1] = S[1, 0] = math.tan(math.radians(shear))
        T = np.array([[1, 0, 330.0], [0, 1, 310.0], [0, 0, 1]])
        C = np.array([[1, 0, -640.0], [0, 1, -640.0], [0, 0, 1]])
        out[name] = (T @ S @ R @ C).astype(np.float32)[:2]
    return out


def main():
    ap = argparse.ArgumentParser()
    bu.add_lib_argument(ap)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--reps", type=int, default=20, help="warps per arm per round")
    ap.add_argument("--cv2", action="store_true", help="also time cv2.warpAffine")
    ap.add_argument("--out")
    args = ap.parse_args()
    import numpy as np
    lib = bu.load_library(args.lib)
    cv2 = None
    if args.cv2:
        import cv2
        cv2.setNumThreads(1)
    rng = np.random.default_rng(1)
    canvas = rng.integers(0, 256, (1280, 1280, 3), dtype=np.uint8)
    out = np.zeros((640, 640, 3), np.uint8)
    border = np.array([114, 114, 114], np.uint8)

    def arm(name, md, m32):
        if name == "4.x":
            return lambda: lib.detfeed_warp_affine(canvas.ctypes.data, 3840, 1280, 1280,
                                                   out.ctypes.data, 1920, 640, 640,
                                                   md.ctypes.data, border.ctypes.data)
        if name == "cv2":
            return lambda: cv2.warpAffine(canvas, m32, (640, 640), dst=out,
                                          borderValue=(114, 114, 114))
        cv = lib.cv(*STACKS[name])
        return lambda: lib.detfeed_warp_affine_cv(canvas.ctypes.data, 3840, 1280, 1280,
                                                  out.ctypes.data, 1920, 640, 640,
                                                  md.ctypes.data, border.ctypes.data,
                                                  ctypes.byref(cv))

    names = ["4.x"] + list(STACKS) + (["cv2"] if cv2 else [])
    mats = matrices(np)
    fns = {(m, n): arm(n, np.ascontiguousarray(M, np.float64), M)
           for m, M in mats.items() for n in names}
    times = {k: [] for k in fns}
    for r in range(args.rounds):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(args.reps):
                fn()
            if r:
                times[k].append((time.perf_counter() - t0) / args.reps * 1e3)
    res = {"machine": bu.machine_info({"cv2": cv2.__version__ if cv2 else None}),
           "what": "ms per 1280x1280 -> 640x640 warpAffine, one thread, median of "
                   f"{args.rounds - 1} rounds of {args.reps}",
           "results": {}}
    for m in mats:
        b = bu.median(times[(m, "4.x")])
        res["results"][m] = {n: {"ms": round(bu.median(times[(m, n)]), 3),
                                 "ratio_to_4x": round(bu.median(times[(m, n)]) / b, 2)}
                             for n in names}
    bu.finish(res, args.out, "warp5")


if __name__ == "__main__":
    main()
