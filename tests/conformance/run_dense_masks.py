#!/usr/bin/env python3
"""Segment samples with more than 255 instances against the real Ultralytics.

Ultralytics' polygons2masks_overlap makes a sample's overlap mask np.int32
when it has more than 255 segments (else np.uint8), and collate_fn's
torch.cat gives a batch the promoted type: int32 when one of its masks is.
On generated segment datasets this checks detfeed against the real
YOLODataset, with its draws forced to detfeed's recipe:

  dense-seg, exactly (run_conformance.py's comparison: image bytes, cls,
    bboxes, mask values per sample and per batch) and the masks' dtypes:
    640 x 640 images holding stacks of 305, 200, 20 and 12 rectangles that
    share a corner, each 4 pixels wider or taller than the one before, so
    that no two masks of a sample have the same area (the order of equal
    areas is NumPy's argsort's, which differs between NumPy builds); the
    200 stack gives an 8-bit mask whose values pass 128 where they
    overlap. close_mosaic with scale 0 and translate 0 (whole-pixel moves,
    which keep the areas apart) and validation (letterbox, rect batches).
  dense-mosaic, mosaics of six images of 150 small polygons each, so that a
    sample of more than 255 instances combines images of fewer: per sample
    the image bytes, the instance count, the mask's dtype and maximum, the
    pixels it covers, and the labels as a set (equal areas are common
    here); per batch the masks' dtype and shape.

The data is generated in a temporary folder (no shared data needed).
Exit status: 0 when every check passes, 1 otherwise, 77 (skip) when
ultralytics, cv2 or torch is missing.

    run_dense_masks.py --lib build/libdetfeed.so
"""
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run_conformance as rc  # noqa: E402

SKIP = rc.SKIP
SIDE = 640  # generated images are SIDE x SIDE: loaded as they are at imgsz 640
WHOLE_PIXELS = {"scale": 0.0, "translate": 0.0}


def star(rng, cx, cy, rmin, rmax):
    """A star-shaped polygon around (cx, cy), as normalized x, y pairs."""
    import numpy as np
    m = int(rng.integers(5, 9))
    a = np.sort(rng.uniform(0, 2 * np.pi, m))
    r = rng.uniform(rmin, rmax, m)
    x = np.clip(cx + r * np.cos(a), 0, SIDE - 1) / SIDE
    y = np.clip(cy + r * np.sin(a), 0, SIDE - 1) / SIDE
    return np.stack([x, y], 1).reshape(-1)


def grid(rng, cols, rows):
    cw, ch = SIDE / cols, SIDE / rows
    return [star(rng, (i + 0.5) * cw, (j + 0.5) * ch, 0.2 * min(cw, ch), 0.45 * min(cw, ch))
            for j in range(rows) for i in range(cols)]


def stack(count, x, y):
    """count rectangles with their top-left corner at (x, y) + 0.5 (whole
    pixels once cast to int32): the k-th is 4 (1 + ceil(k / 2)) wide and
    4 (1 + floor(k / 2)) tall, so each is 4 pixels wider or taller than the
    one before and their masks' areas all differ."""
    import numpy as np
    out = []
    for k in range(count):
        w, h = 4 * (1 + (k + 1) // 2), 4 * (1 + k // 2)
        x0, y0, x1, y1 = x + 0.5, y + 0.5, x + 0.5 + w, y + 0.5 + h
        assert x1 < SIDE and y1 < SIDE
        out.append(np.array([x0, y0, x1, y0, x1, y1, x0, y1]) / SIDE)
    return out


def write_image(path, rng):
    import cv2
    import numpy as np
    yy, xx = np.mgrid[0:SIDE, 0:SIDE]
    base = np.stack([xx * 255 // SIDE, yy * 255 // SIDE, (xx + yy) * 255 // (2 * SIDE)], 2)
    noise = rng.integers(-20, 21, (SIDE, SIDE, 3))
    assert cv2.imwrite(path, np.clip(base + noise, 0, 255).astype(np.uint8))


def write_dataset(root, name, images, seed):
    """root/name with images/train, labels/train and name.yaml; `images`
    holds each image's polygons."""
    import numpy as np
    rng = np.random.default_rng(seed)
    top = os.path.join(root, name)
    for d in ("images/train", "labels/train"):
        os.makedirs(os.path.join(top, d), exist_ok=True)
    for i, polys in enumerate(images):
        stem = "%02d_%d" % (i, len(polys))
        write_image(os.path.join(top, "images/train", stem + ".png"), rng)
        with open(os.path.join(top, "labels/train", stem + ".txt"), "w") as f:
            for k, p in enumerate(polys):
                f.write("%d %s\n" % (k % 3, " ".join("%.6f" % v for v in p)))
    with open(os.path.join(top, name + ".yaml"), "w") as f:
        f.write("path: %s\ntrain: images/train\nval: images/train\nnames:\n  0: a\n  1: b\n"
                "  2: c\n" % top)


def dtype_name(x):
    return str(x.dtype).replace("torch.", "")


class DtypeChecks:
    """Wraps run_conformance's compare_sample and compare_batch: the masks'
    dtypes (Ultralytics' np.uint8 / np.int32 and torch.cat's promotion)
    against detfeed's, and the samples of more than 255 instances seen."""

    def __init__(self):
        self.reset()
        self._sample, self._batch = rc.compare_sample, rc.compare_batch
        rc.compare_sample, rc.compare_batch = self.sample, self.batch

    def reset(self):
        self.samples, self.batches, self.wide, self.types = [], [], 0, {}

    def sample(self, side, label, kind, ul, det, det_mask, *args, **kwargs):
        n = len(ul["cls"])
        ul_t, det_t = dtype_name(ul["masks"]), dtype_name(det_mask)
        self.wide += n > 255
        # Ultralytics gives a sample without instances float32 zeros; the
        # rule for the others is np.int32 past 255 segments, else np.uint8.
        if n and ul_t != det_t:
            self.samples.append("%s [%s]: %d instances: Ultralytics %s, detfeed %s" % (
                label, kind, n, ul_t, det_t))
        return self._sample(side, label, kind, ul, det, det_mask, *args, **kwargs)

    def batch(self, side, b, ulb, detb, *args, **kwargs):
        ul_t, det_t = dtype_name(ulb["masks"]), dtype_name(detb["masks"])
        self.types[ul_t] = self.types.get(ul_t, 0) + 1
        if ul_t != "float32" and ul_t != det_t:  # float32: one of its samples is empty
            self.batches.append("batch %d: Ultralytics %s, detfeed %s" % (b, ul_t, det_t))
        return self._batch(side, b, ulb, detb, *args, **kwargs)


def exact(side, L, stack_, args, checks, report, dt):
    """dense-seg through run_conformance's comparison, and the dtypes."""
    for conf, wide_from in (
            (rc.Config("dense-seg", "close_mosaic", WHOLE_PIXELS, closed=True, batch=2),
             "the 305-rectangle image alone"),
            (rc.Config("dense-seg", "val", val=True, batch=2), "its letterbox")):
        dt.reset()
        try:
            rc.run_config(conf, side, L, stack_, args, checks, report, {})
        except Exception as e:  # a crash in one configuration is its failure
            import traceback
            traceback.print_exc()
            checks.check(False, "%s: %s: %s" % (conf.name, type(e).__name__, e))
            continue
        checks.check(not dt.samples, "%s: sample mask dtypes (%d differ)" % (
            conf.name, len(dt.samples)), dt.samples[:rc.DETAILS])
        checks.check(not dt.batches and dt.types.get("int32") and dt.types.get("uint8"),
                     "%s: batch mask dtypes, Ultralytics' %s (%d differ)" % (
                         conf.name, dt.types, len(dt.batches)), dt.batches[:rc.DETAILS])
        checks.check(dt.wide > 0, "%s: samples of more than 255 instances (%s): %d" % (
            conf.name, wide_from, dt.wide))


def label_rows(sample):
    """cls and bboxes as a sorted list of rows (the order of equal areas
    aside)."""
    import numpy as np
    c = rc.to_numpy(sample["cls"]).reshape(-1, 1).astype(np.float32)
    b = rc.to_numpy(sample["bboxes"]).reshape(-1, 4).astype(np.float32)
    return sorted(map(tuple, np.concatenate([c, b], 1).view(np.uint32).tolist()))


def mosaics(side, L, stack_, args, checks):
    """dense-mosaic: mosaic samples and batches, the order of equal areas
    aside."""
    import numpy as np
    import forced_draws as fd
    name, epoch, batch = "dense-mosaic/mosaic", rc.MOSAIC_EPOCH, 2
    print("\n== %s (opencv %s) ==" % (name, stack_["opencv"]), flush=True)
    ds, cfg = rc.ultralytics_dataset(side, {}, False, batch)
    hyp = fd.Hyp.from_transforms(ds)
    ld = rc.detfeed_loader(L, side, cfg, {"seed": args.seed, "val": False, "batch": batch},
                           stack_)
    try:
        n = ld.size()
        bad, wide, ul = [], 0, {}
        for idx in range(n):
            calls, info = fd.sample_plan(lambda slot: L.uniform(args.seed, slot, epoch, idx),
                                         hyp, n)
            label = "epoch %d index %d [%s]" % (epoch, idx, info.kind())
            out = ul[idx] = rc.ul_sample(ds, fd.DrawQueue(), idx, label, calls)
            det, mask = ld.sample(epoch, idx), ld.sample_masks(epoch, idx)
            um = rc.to_numpy(out["masks"])[0]
            k = len(out["cls"])
            wide += k > 255 and info.mosaic
            why = []
            if not np.array_equal(rc.to_numpy(out["img"]), rc.chw(det["img"], info.rgb)):
                why.append("image bytes differ")
            if len(det["cls"]) != k:
                why.append("%d instances, detfeed %d" % (k, len(det["cls"])))
            elif label_rows(out) != label_rows(det):
                why.append("the labels differ (as sets)")
            if dtype_name(um) != dtype_name(mask):
                why.append("mask dtype %s, detfeed %s" % (dtype_name(um), dtype_name(mask)))
            if um.shape != mask.shape or not np.array_equal(um > 0, mask > 0):
                why.append("the mask covers other pixels")
            elif int(um.max()) != int(mask.max()):
                why.append("mask maximum %d, detfeed %d" % (um.max(), mask.max()))
            if why:
                bad.append("%s, %d instances: %s" % (label, k, "; ".join(why)))
        checks.check(not bad, "%s: %d samples: image, instance count, labels as a set, mask "
                     "dtype, pixels and maximum (%d differ)" % (name, n, len(bad)),
                     bad[:rc.DETAILS])
        checks.check(wide > 0, "%s: mosaics of more than 255 instances from images of 150: "
                     "%d" % (name, wide))
        order, bad, types = L.epoch_order(args.seed, epoch, n), [], []
        for b, detb in enumerate(ld.batches(epoch)):
            ulb = rc.ul_batch([ul[i] for i in order[b * batch:(b + 1) * batch]])
            um, dm = rc.to_numpy(ulb["masks"]), detb["masks"]
            types.append(dtype_name(um))
            if dtype_name(um) != dtype_name(dm) or um.shape != dm.shape:
                bad.append("batch %d: Ultralytics %s %s, detfeed %s %s" % (
                    b, dtype_name(um), um.shape, dtype_name(dm), dm.shape))
        checks.check(not bad and "int32" in types and "uint8" in types,
                     "%s: batch mask dtypes and shapes, Ultralytics' %s (%d differ)" % (
                         name, types, len(bad)), bad[:rc.DETAILS])
    finally:
        ld.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", required=True, help="libdetfeed.so to test")
    ap.add_argument("--seed", type=int, default=7, help="detfeed seed (default 7)")
    args = ap.parse_args()
    args.samples, args.imgsz = None, 640
    tmp = tempfile.mkdtemp(prefix="detfeed-dense-")
    os.environ.setdefault("YOLO_CONFIG_DIR", os.path.join(tmp, "settings"))
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_VERBOSE", "False")
    try:
        cv2, np, _, ultralytics = rc.ou.require(
            ("cv2", "numpy", "torch", "ultralytics"), "scripts/oracle_env.sh installs them")
        stack_, v = rc.cv_stack(cv2)
        if stack_ is None:
            print("FAIL: cv2 %s is not a stack detfeed names (4.x, 5.0, 5.1)" % v)
            return 1
        if stack_["numpy"] is None:
            print("FAIL: NumPy %s multiplies float32 matrices neither fused nor rounded "
                  "step by step" % np.__version__)
            return 1
        if stack_["numpy_sort"] is None:
            print("FAIL: NumPy %s runs an argsort detfeed does not know" % np.__version__)
            return 1
        from detfeed_lib import Library
        L = Library(args.lib)
        print("detfeed %s; ultralytics %s; cv2 %s -> opencv=%s; numpy %s -> numpy=%s "
              "numpy_sort=%s" % (L.version(), ultralytics.__version__, v, stack_["opencv"],
                                 np.__version__, stack_["numpy"], stack_["numpy_sort"]))
        gen = os.path.join(tmp, "gen")
        write_dataset(gen, "dense-seg", [stack(305, 4, 4), stack(200, 8, 12),
                                         stack(20, 300, 200), stack(12, 100, 400)], 1)
        rng = np.random.default_rng(2)
        write_dataset(gen, "dense-mosaic", [grid(rng, 15, 10) for _ in range(6)], 3)
        for name in ("dense-seg", "dense-mosaic"):
            rc.DATASETS[name] = (name, "segment", ["images/train"], ["images/train"])
        checks, report = rc.Checks(), []
        exact(rc.Side("dense-seg", gen, tmp), L, stack_, args, checks, report, DtypeChecks())
        mosaics(rc.Side("dense-mosaic", gen, tmp), L, stack_, args, checks)
        rc.print_report(report, stack_)
        print("%d passed, %d failed" % (checks.passed, checks.failed))
        return 0 if checks.failed == 0 else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
