"""Benchmark: one training sample's geometry - Mosaic (4 tiles) + the affine
warp + the horizontal flip, 640x640 - by detfeed against cv2 doing the same
steps (a 1280x1280 canvas of 114, four tile copies, cv2.warpAffine with the
same matrix, np.fliplr) on the same images, on one core, in one process.

detfeed runs detfeed_loader_sample with colour off (hsv gains 0) and every
image in its RAM cache, so it does exactly the geometry (plus its label
work, which the cv2 arm leaves out). Both arms use the same recipes: the
cv2 arm reads them from detfeed's recipe of each sample. The outputs are
compared first (the images must be identical). Rounds alternate the arms;
the first is a warm-up; medians are reported.

    taskset -c 0 /usr/bin/python3 bench/bench_geometry.py --lib build/libdetfeed.so \
        --data ../shared/data/coco128 --out bench/results
"""
import argparse
import ctypes
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "oracle"))
import bench_util as bu  # noqa: E402
import oracle_util as ou  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    bu.add_lib_argument(ap)
    ap.add_argument("--data", required=True, help="a dataset folder (images/ and labels/)")
    ap.add_argument("--samples", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out")
    args = ap.parse_args()
    import cv2
    import numpy as np
    cv2.setNumThreads(1)
    lib = bu.load_library(args.lib)
    loader = ctypes.c_void_p()
    assert lib.detfeed_loader_create(ctypes.byref(loader), 0) == 0
    lib.loader_set(loader, "cache_bytes", 1 << 31)  # everything
    lib.loader_set(loader, "seed", 7)
    for name in ("hsv_h", "hsv_s", "hsv_v"):  # HSV gains off: geometry only
        lib.loader_set(loader, name, 0.0)
    if lib.detfeed_loader_open(loader, args.data.encode()) != 0:
        sys.exit(lib.detfeed_loader_last_error(loader).decode())
    ds = lib.detfeed_loader_dataset(loader)
    n = lib.detfeed_dataset_size(ds)

    s = 640
    tiles = []
    for i in range(n):  # the load-size images, as the RAM cache holds them
        im = cv2.imread(lib.detfeed_dataset_image_path(ds, i).decode())
        h0, w0 = im.shape[:2]
        r = s / max(h0, w0)
        if r != 1:
            im = cv2.resize(im, (min(math.ceil(w0 * r), s), min(math.ceil(h0 * r), s)),
                            interpolation=cv2.INTER_LINEAR)
        tiles.append(im)
    recipes = [lib.recipe(loader, 0, k % n) for k in range(args.samples)]

    def cv2_sample(rec):
        idx = [rec["index"]] + rec["partners"]
        img4, _ = ou.mosaic_canvas(np, [tiles[j] for j in idx], s, rec["xc"], rec["yc"])
        C = np.eye(3, dtype=np.float32)
        C[0, 2], C[1, 2] = -s, -s
        R = np.eye(3, dtype=np.float32)
        R[:2] = cv2.getRotationMatrix2D(angle=rec["angle"], center=(0, 0), scale=rec["scale"])
        T = np.eye(3, dtype=np.float32)
        T[0, 2], T[1, 2] = rec["translate"][0] * s, rec["translate"][1] * s
        M = T @ R @ C
        out = cv2.warpAffine(img4, M[:2], dsize=(s, s), borderValue=(114, 114, 114))
        if rec["fliplr"]:
            out = np.ascontiguousarray(np.fliplr(out))
        return out

    img = np.empty((s, s, 3), np.uint8)
    cap = 4096
    cls = np.empty(cap, np.float32)
    box = np.empty((cap, 4), np.float32)
    count = ctypes.c_int()

    def detfeed_sample(rec):
        rc = lib.detfeed_loader_sample(loader, 0, rec["index"], img.ctypes.data, cap,
                                       ctypes.byref(count), cls.ctypes.data, box.ctypes.data, None)
        assert rc == 0, lib.detfeed_loader_last_error(loader)
        return img

    mosaics = [r for r in recipes if r["mosaic"]]
    differ = sum(int(np.count_nonzero(detfeed_sample(r) != cv2_sample(r))) for r in mosaics)
    arms = {"cv2": cv2_sample, "detfeed": detfeed_sample}
    per = {k: [] for k in arms}
    for rnd in range(args.rounds + 1):
        for name in (["cv2", "detfeed"] if rnd % 2 == 0 else ["detfeed", "cv2"]):
            t0 = time.perf_counter()
            for r in mosaics:
                arms[name](r)
            if rnd:
                per[name].append((time.perf_counter() - t0) / len(mosaics) * 1e3)
    ratios = [a / b for a, b in zip(per["cv2"], per["detfeed"])]
    res = {
        "benchmark": "mosaic + affine + flip per 640x640 sample, one core",
        "samples": len(mosaics), "rounds": args.rounds,
        "cv2_ms_per_sample": bu.median(per["cv2"]),
        "detfeed_ms_per_sample": bu.median(per["detfeed"]),
        "cv2_ms_range": [min(per["cv2"]), max(per["cv2"])],
        "detfeed_ms_range": [min(per["detfeed"]), max(per["detfeed"])],
        "speedup_median": bu.median(ratios), "speedup_range": [min(ratios), max(ratios)],
        "image_bytes_compared": len(mosaics) * s * s * 3, "bytes_differing": differ,
        "machine": bu.machine_info({"opencv": cv2.__version__, "numpy": np.__version__}),
        "command": "taskset -c 0 /usr/bin/python3 bench/bench_geometry.py --lib build/libdetfeed.so"
                   " --data %s --samples %d --rounds %d" % (args.data, args.samples, args.rounds),
    }
    bu.finish(res, args.out, "geometry")

if __name__ == "__main__":
    main()
