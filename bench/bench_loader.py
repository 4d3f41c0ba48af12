"""Benchmark: detfeed's loader against a Python pipeline doing the same
Ultralytics training steps with cv2 and NumPy, in the same number of
processes, on the same images (RAM-cached at their load size) with the same
recipes (read from detfeed): Mosaic, RandomPerspective, RandomHSV, flips,
Format (CHW RGB), collation into batches of `batch`, and the float32
conversion (/ 255).

The Python side is the reference implementation of tests/oracle/
test_augment_oracle.py (which produces detfeed's bytes exactly). Its workers
build whole batches and hand back only a checksum: the cost of moving a
batch to a consumer is left out on that side, which favours it. detfeed runs
its own loader (`detfeed_loader_start/next/release`) with the same number of
worker threads. Epochs alternate between the two; the first epoch of each is
a warm-up; medians of images/s are reported, and the ratio.

    /usr/bin/python3 bench/bench_loader.py --lib build/libdetfeed.so \
        --data ../shared/data/coco128 --workers 2 --out bench/results
"""
import argparse
import ctypes
import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "oracle"))
import bench_util as bu  # noqa: E402

_REF = None  # the per-process reference pipeline, with its image cache


def _init_worker(paths, imgsz):
    global _REF
    import cv2
    import numpy as np
    import test_augment_oracle as tao
    cv2.setNumThreads(1)

    class Cached(tao.Ref):
        def __init__(self):
            super().__init__(cv2, np, imgsz)
            self.cache = {p: tao.Ref.load(self, p) for p in paths}

        def load(self, path):
            img, (c, b, kp) = self.cache[path]
            return img, (c.copy(), b.copy(), kp)

    _REF = (Cached(), paths, np)


def _python_batch(recipes):
    ref, paths, np = _REF
    imgs = []
    for rec in recipes:
        img, c, b, kp = ref.sample(paths, rec, True)
        imgs.append(np.ascontiguousarray(img[:, :, ::-1].transpose(2, 0, 1)))  # Format
    batch = np.stack(imgs).astype(np.float32) / 255  # collate, then the f32 images
    return float(batch[:, :, ::97, ::89].sum())


class Detfeed:
    def __init__(self, lib, data, imgsz, batch, workers, seed):
        self.lib = lib = bu.load_library(lib)
        self.l = ctypes.c_void_p()
        lib.detfeed_loader_create(ctypes.byref(self.l), 0)
        for name, v in (("imgsz", imgsz), ("seed", seed), ("epochs", 100),
                        ("cache_bytes", 1 << 40), ("workers", workers), ("batch", batch),
                        ("dtype", "f32")):
            lib.loader_set(self.l, name, v)
        assert lib.detfeed_loader_open(self.l, data.encode()) == 0
        ds = lib.detfeed_loader_dataset(self.l)
        self.n = lib.detfeed_dataset_size(ds)
        self.paths = [lib.detfeed_dataset_image_path(ds, i).decode() for i in range(self.n)]
        self.seed = seed

    def epoch(self, e):
        lib, b, images = self.lib, ctypes.c_void_p(), 0
        t0 = time.perf_counter()
        lib.detfeed_loader_start(self.l, e)
        while lib.detfeed_loader_next(self.l, ctypes.byref(b)) == 0:
            images += lib.detfeed_batch_size(b, None, None)
            lib.detfeed_loader_release(self.l, b)
        return images / (time.perf_counter() - t0)

    def recipes(self, e):
        order = (ctypes.c_uint64 * self.n)()
        self.lib.detfeed_epoch_order(self.seed, e, self.n, order)
        return [self.lib.recipe(self.l, e, i) for i in order]


def main():
    ap = argparse.ArgumentParser()
    bu.add_lib_argument(ap)
    ap.add_argument("--data", required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--imgsz", type=int, default=640)
    ap.add_argument("--epochs", type=int, default=5, help="timed epochs per side")
    ap.add_argument("--out")
    args = ap.parse_args()
    import cv2
    import numpy as np
    d = Detfeed(args.lib, args.data, args.imgsz, args.batch, args.workers, 0)
    pool = mp.get_context("fork").Pool(args.workers, _init_worker, (d.paths, args.imgsz))
    rates = {"detfeed": [], "python": []}
    for e in range(args.epochs + 1):
        recs = d.recipes(e)
        batches = [recs[i:i + args.batch] for i in range(0, len(recs), args.batch)]
        t0 = time.perf_counter()
        list(pool.imap(_python_batch, batches))
        py = len(recs) / (time.perf_counter() - t0)
        df = d.epoch(e)
        if e:
            rates["python"].append(py)
            rates["detfeed"].append(df)
    pool.close()
    ratios = [a / b for a, b in zip(rates["detfeed"], rates["python"])]
    res = {
        "benchmark": "loader images/s, %d workers, batch %d, imgsz %d, f32, RAM cache"
                     % (args.workers, args.batch, args.imgsz),
        "epochs": args.epochs, "images_per_epoch": d.n,
        "python_images_per_s": bu.median(rates["python"]),
        "detfeed_images_per_s": bu.median(rates["detfeed"]),
        "python_range": [min(rates["python"]), max(rates["python"])],
        "detfeed_range": [min(rates["detfeed"]), max(rates["detfeed"])],
        "speedup_median": bu.median(ratios), "speedup_range": [min(ratios), max(ratios)],
        "machine": bu.machine_info({"opencv": cv2.__version__, "numpy": np.__version__}),
        "command": "/usr/bin/python3 bench/bench_loader.py --lib build/libdetfeed.so --data %s"
                   " --workers %d --batch %d --imgsz %d --epochs %d"
                   % (args.data, args.workers, args.batch, args.imgsz, args.epochs),
    }
    bu.finish(res, args.out, "loader")


if __name__ == "__main__":
    main()
