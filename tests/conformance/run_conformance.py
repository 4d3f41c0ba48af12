#!/usr/bin/env python3
"""Conformance of detfeed with the real Ultralytics package.

For each configuration the suite builds Ultralytics' YOLODataset as its
trainer does (build_yolo_dataset with the default cfg and the
configuration's overrides, cache="ram"), forces every random draw of its
transforms to detfeed's recipe (forced_draws.py), and compares, sample by
sample and batch by batch, what Ultralytics gives with what libdetfeed gives
for the same (epoch, index):

  * the image bytes (Ultralytics: CHW RGB after Format; detfeed: its HWC BGR
    sample, put in the same layout and channel order),
  * cls, bboxes, keypoints as float32, bit for bit, and the segment masks,
  * detfeed's recipe against the parameters Ultralytics used,
  * packed batches (collate_fn against detfeed_loader_next, dtype u8),
  * in validation: the rect shape of each image, the batch it lands in,
    its letterboxed image and labels.

The reference stack detfeed is asked for follows the process: ultralytics
"8.4", opencv from the imported cv2 ("4", "4-debian", "5.0", "5.1"), opencv_ipp from
cv2.ipp.useIPP(). Run it under each OpenCV (see README.md).

Exit status: 0 when every check passes, 1 otherwise, 77 (skip) when
ultralytics, cv2 or the data is missing. The last line is
"N passed, M failed".
"""
import argparse
import contextlib
import copy
import fnmatch
import glob
import io
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "oracle"))
import oracle_util as ou  # noqa: E402

SKIP = ou.SKIP
ULTRALYTICS_VERSION = "8.4.190"
# OpenCV 5.1 hands 8-bit bilinear warps to IPP (closed source); detfeed's
# model of it is exact, so 5.1 is held to 0 differing bytes like the other
# versions, rotated, sheared and projective warps included.
DETAILS = 5  # differences described per check

DATASETS = {
    # name: (folder under --data, task, train splits, val splits)
    "coco128": ("coco128", "detect", ["images/train2017"], ["images/train2017"]),
    "coco8-seg": ("coco8-seg", "segment", ["images/train", "images/val"],
                  ["images/train", "images/val"]),
    "coco8-pose": ("coco8-pose", "pose", ["images/train", "images/val"],
                   ["images/train", "images/val"]),
    # coco8 with its images in the other formats (made by make_formats)
    "coco8-formats": ("coco8", "detect", ["images/train", "images/val"],
                      ["images/train", "images/val"]),
}
# How make_formats writes coco8's eight images, in sorted order: a BMP
# (PIL's 8-bit palette), an MPO (PIL's, two pictures: cv2 reads the first, a
# JPEG), TIFFs (PIL's LZW RGB and cv2's 16-bit RGB, LZW with the predictor,
# its low bytes noise, as imread keeps the high ones), WebPs (PIL's lossy
# and with alpha), a JPEG 2000 (cv2's) and a gray PNG. With a cv2 that has
# no imdecodemulti (Debian's 4.6), where Ultralytics 8.4's imread raises on a
# .tif, the TIFFs are written as PNGs (said on stdout).
FORMATS = ("bmp:P", "mpo:PIL", "tif:LZW", "webp:lossy", "jp2:cv2", "tif:16",
           "webp:RGBA", "png:L")
# And two of coco128's images in the training split: a JPEG as it is, and a
# TIFF named .dng (Ultralytics' imread reads every name but *.tif through
# cv2.imdecode, which knows a TIFF by its signature, as a DNG is one).
EXTRA = (("000000000071", "jpg"), ("000000000072", "dng"))
GEOMETRY = {"degrees": 10.0, "shear": 5.0, "perspective": 0.0005, "flipud": 0.5,
            "translate": 0.2, "scale": 0.6}
NO_HSV = {"hsv_h": 0.0, "hsv_s": 0.0, "hsv_v": 0.0}
AFFINE = {"degrees": 10.0, "shear": 5.0, "flipud": 0.5, "translate": 0.2, "scale": 0.6}
EPOCHS, CLOSE_MOSAIC = 3, 1  # detfeed: epoch 0 has mosaic, epoch 2 is a close_mosaic epoch
MOSAIC_EPOCH, CLOSED_EPOCH = 0, 2


class Config:
    """One comparison: a dataset, training or validation, hyperparameters,
    the epoch, how many samples and batches."""

    def __init__(self, dataset, name, hyp=None, closed=False, val=False, samples=None,
                 batch=16, batches=2, rotates=False):
        self.dataset, self.name = dataset, "%s/%s" % (dataset, name)
        self.hyp = dict(hyp or {})
        self.closed, self.val = closed, val
        self.samples = samples  # None: every image; else the first k of the epoch order
        self.batch, self.batches = batch, batches
        self.rotates = rotates  # warps with rotation, shear or perspective
        self.epoch = CLOSED_EPOCH if closed else MOSAIC_EPOCH


def all_configs():
    out = []
    for ds, per, b in (("coco128", 32, 16), ("coco8-seg", None, 4), ("coco8-pose", None, 4)):
        out += [
            Config(ds, "mosaic", batch=b),
            Config(ds, "close_mosaic", closed=True, batch=b),
            Config(ds, "mixup", {"mixup": 0.5}, samples=per, batch=b),
            Config(ds, "geometry", GEOMETRY, samples=per, batch=b, rotates=True),
            Config(ds, "affine", AFFINE, samples=per, batch=b, rotates=True),
            Config(ds, "bgr", {"bgr": 0.5}, samples=per, batch=b),
            Config(ds, "rect", dict(GEOMETRY, rect=True), batch=b, rotates=True),
            # CutMix needs an area free of boxes: mosaics rarely have one
            Config(ds, "cutmix", {"cutmix": 1.0, "mosaic": 0.0, "scale": 0.9}, batch=b),
            Config(ds, "cutmix_mixup", dict(GEOMETRY, cutmix=1.0, mixup=0.5, mosaic=0.2,
                                            scale=0.9), batch=b, rotates=True),
            Config(ds, "val", val=True, batch=b),
        ]
        if ds == "coco8-seg":  # CopyPaste pastes polygons
            out.insert(-1, Config(ds, "copy_paste", {"copy_paste": 1.0}, batch=b))
            out.insert(-1, Config(ds, "copy_paste_half", dict(GEOMETRY, copy_paste=0.5),
                                  batch=b, rotates=True))
            out.insert(-1, Config(ds, "copy_paste_mixup", {"copy_paste": 0.8,
                                                           "copy_paste_mode": "mixup"}, batch=b))
            out.insert(-1, Config(ds, "rect_copy_paste", {"rect": True, "copy_paste": 0.5},
                                  batch=b))
            out.insert(-1, Config(ds, "copy_paste_mixup_all", dict(
                GEOMETRY, copy_paste=0.6, copy_paste_mode="mixup", mixup=0.5, mosaic=0.5,
                scale=0.9), batch=b, rotates=True))
        if ds == "coco128":
            # Diagnostics that separate causes: mixup in close_mosaic epochs,
            # and the geometry without the colour step.
            out.insert(-1, Config(ds, "mixup_close", {"mixup": 0.5}, closed=True, samples=16,
                                  batch=b, batches=1))
            out.insert(-1, Config(ds, "mosaic_nohsv", NO_HSV, samples=16, batch=b, batches=1))
            out.insert(-1, Config(ds, "close_nohsv", NO_HSV, closed=True, samples=16, batch=b,
                                  batches=1))
            out.insert(-1, Config(ds, "geometry_nohsv", dict(GEOMETRY, **NO_HSV), samples=16,
                                  batch=b, batches=1, rotates=True))
    out += [Config("coco8-formats", "mosaic", batch=4),
            Config("coco8-formats", "geometry", GEOMETRY, batch=4, rotates=True),
            Config("coco8-formats", "val", val=True, batch=4),
            # Format's bgr affects training only: validation ignores it
            Config("coco8-pose", "val_bgr", {"bgr": 0.5}, val=True, batch=4)]
    return out


# ---------------------------------------------------------------------------
# Checks and the report
# ---------------------------------------------------------------------------
class Checks:
    """Pass/fail checks with their messages; prints as it goes."""

    def __init__(self):
        self.passed, self.failed = 0, 0
        self.failures = []

    def check(self, ok, what, details=()):
        if ok:
            self.passed += 1
            print("  ok    %s" % what, flush=True)
        else:
            self.failed += 1
            self.failures.append(what)
            print("  FAIL  %s" % what, flush=True)
            for d in details:
                print("          %s" % d, flush=True)
        return ok


class ImageTally:
    """Bytes compared and differing over a configuration."""

    def __init__(self):
        self.samples = self.bytes = self.differing = self.maxdiff = 0
        self.differing_samples = 0
        self.by_kind = {}  # kind -> [samples, differing samples]
        self.details = []

    def add(self, label, kind, ul, det):
        """Compares two uint8 arrays of one image (or a batch)."""
        import numpy as np
        self.samples += 1
        k = self.by_kind.setdefault(kind, [0, 0])
        k[0] += 1
        self.bytes += ul.size
        if ul.shape != det.shape:
            self.differing += ul.size
            self.differing_samples += 1
            k[1] += 1
            self._detail("%s [%s]: shape Ultralytics %s, detfeed %s" % (label, kind, ul.shape,
                                                                         det.shape))
            return
        d = np.abs(ul.astype(np.int16) - det.astype(np.int16))
        real = int(np.count_nonzero(d))
        if real == 0:
            return
        self.maxdiff = max(self.maxdiff, int(d.max()))
        self.differing += real
        self.differing_samples += 1
        k[1] += 1
        pos = tuple(int(x) for x in np.argwhere(d > 0)[0])
        self._detail("%s [%s]: %d bytes differ (max %d, %d off by 1); first at %s: "
                     "Ultralytics %d, detfeed %d" % (
                         label, kind, real, int(d.max()), int(np.count_nonzero(d == 1)),
                         pos, int(ul[pos]), int(det[pos])))

    def _detail(self, text):
        if len(self.details) < DETAILS:
            self.details.append(text)


class LabelTally:
    """Label arrays compared and differing, per field."""

    def __init__(self):
        self.compared, self.differing = {}, {}
        self.details = []
        self.missing_keys = set()  # keys of Ultralytics' batches that detfeed's lack

    def add(self, label, kind, field, ul, det):
        import numpy as np
        self.compared[field] = self.compared.get(field, 0) + 1
        why = compare_array(field, ul, det)
        if why is None:
            return True
        self.differing[field] = self.differing.get(field, 0) + 1
        if len(self.details) < DETAILS:
            self.details.append("%s [%s] %s: %s" % (label, kind, field, why))
        return False

    def total(self):
        return sum(self.compared.values()), sum(self.differing.values())

    def summary(self):
        return ", ".join("%s %d/%d" % (f, self.differing.get(f, 0), n)
                         for f, n in sorted(self.compared.items()))


def f32hex(x):
    import numpy as np
    return "%r (0x%08x)" % (float(x), int(np.float32(x).view(np.uint32)))


def compare_array(field, ul, det):
    """None when equal (float32 bit for bit; masks by value), else a short
    description of the first difference."""
    import numpy as np
    ul, det = np.asarray(ul), np.asarray(det)
    if ul.size == 0 and det.size == 0:
        return None
    if ul.shape != det.shape:
        n_ul = ul.shape[0] if ul.ndim else 0
        n_det = det.shape[0] if det.ndim else 0
        extra = ""
        if field in ("cls", "bboxes") and ul.ndim == 2 and det.ndim == 2:
            extra = "; Ultralytics %s; detfeed %s" % (rows(ul), rows(det))
        return "shape Ultralytics %s, detfeed %s (%d vs %d instances)%s" % (
            ul.shape, det.shape, n_ul, n_det, extra)
    if ul.dtype == np.float32 and det.dtype == np.float32:
        a, b = ul.view(np.uint32), det.view(np.uint32)
        bad = np.argwhere(a != b)
        if len(bad) == 0:
            return None
        i = tuple(int(x) for x in bad[0])
        ulp = abs(int(a[i].astype(np.int64)) - int(b[i].astype(np.int64)))
        return "%d of %d values differ; first at %s: Ultralytics %s, detfeed %s (%d ulp)" % (
            len(bad), ul.size, i, f32hex(ul[i]), f32hex(det[i]), ulp)
    bad = np.argwhere(ul.astype(np.int64) != det.astype(np.int64))
    if len(bad) == 0:
        return None
    i = tuple(int(x) for x in bad[0])
    return "%d of %d values differ; first at %s: Ultralytics %s, detfeed %s" % (
        len(bad), ul.size, i, ul[i], det[i])


def rows(a, k=3):
    return "[" + ", ".join("(" + ", ".join("%.6g" % v for v in r) + ")" for r in a[:k]) + \
        (", ..." if len(a) > k else "") + "]"


# ---------------------------------------------------------------------------
# The two sides
# ---------------------------------------------------------------------------
def write_yaml(path, root, task, train, val, meta):
    """A dataset YAML (the subset both readers need), in block style."""
    lines = ["path: %s" % root, "train:"] + ["  - %s" % t for t in train] + \
        ["val:"] + ["  - %s" % v for v in val]
    if task == "pose":
        lines.append("kpt_shape: [%d, %d]" % tuple(meta["kpt_shape"]))
        lines.append("flip_idx: [%s]" % ", ".join(str(i) for i in meta["flip_idx"]))
    lines.append("names:")
    for k in sorted(meta["names"]):
        lines.append("  %d: %s" % (k, meta["names"][k]))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def make_formats(src, dst):
    """coco8 (images and labels) with each image written in the format
    FORMATS names for it, and EXTRA's images from coco128 beside it; its
    YAML copied. Returns dst."""
    import cv2
    import numpy as np
    from PIL import Image
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.cache", "*.npy", "images"))
    images = sorted(glob.glob(os.path.join(src, "images", "*", "*.jpg")))
    for path, fmt in zip(images, FORMATS):
        kind, how = fmt.split(":")
        if kind == "tif" and not hasattr(cv2, "imdecodemulti"):
            print("note: cv2 %s has no imdecodemulti (Ultralytics' imread raises on .tif): "
                  "%s written as PNG" % (cv2.__version__, os.path.basename(path)))
            kind, how = "png", "PIL"
        out = os.path.join(dst, os.path.relpath(path, src))[:-4] + "." + kind
        os.makedirs(os.path.dirname(out), exist_ok=True)
        img = Image.open(path).convert("RGB")
        if kind == "tif" and how == "16":
            rng = np.random.default_rng(len(images))
            high = cv2.imread(path).astype(np.uint16) << 8
            low = rng.integers(0, 256, high.shape, dtype=np.uint16)
            assert cv2.imwrite(out, high | low), out
        elif kind == "tif":
            img.save(out, compression="tiff_lzw")
        elif kind == "png":
            (img.convert("L") if how == "L" else img).save(out)
        elif how == "cv2":
            assert cv2.imwrite(out, cv2.imread(path)), out
        elif kind == "mpo":
            img.save(out, "MPO", save_all=True, append_images=[img.rotate(90)], quality=85)
        elif how in ("lossy", "lossless"):
            img.save(out, quality=80, lossless=how == "lossless")
        elif how == "RGBA" and kind == "webp":
            rgba = img.convert("RGBA")
            rgba.putalpha(img.convert("L"))
            rgba.save(out, quality=85)
        else:
            (img.quantize(256) if how == "P" else img.convert(how)).save(out)
    more = os.path.join(os.path.dirname(os.path.abspath(src)), "coco128")
    for stem, kind in EXTRA:
        path = os.path.join(more, "images", "train2017", stem + ".jpg")
        out = os.path.join(dst, "images", "train", stem + "." + kind)
        if kind == "jpg":
            shutil.copyfile(path, out)
        else:
            Image.open(path).convert("RGB").save(out, "TIFF", compression="tiff_adobe_deflate")
        shutil.copyfile(os.path.join(more, "labels", "train2017", stem + ".txt"),
                        os.path.join(dst, "labels", "train", stem + ".txt"))
    return dst


def write_formats(data, dst):
    """--make-formats: coco8-formats in dst (which must not exist) and its
    YAML dst/data.yaml, for other tools (the GPU replays)."""
    import yaml
    folder, task, train, val = DATASETS["coco8-formats"]
    src = os.path.join(data, folder)
    if not os.path.isdir(src):
        print("SKIP: %s is missing" % src)
        return SKIP
    if os.path.lexists(dst):
        print("FAIL: %s exists (--make-formats writes a new folder)" % dst)
        return 1
    make_formats(src, dst)
    with open(os.path.join(src, folder + ".yaml")) as f:
        meta = yaml.safe_load(f)
    names = meta["names"]
    meta["names"] = dict(enumerate(names)) if isinstance(names, list) else names
    write_yaml(os.path.join(dst, "data.yaml"), os.path.abspath(dst), task, train, val, meta)
    print(os.path.join(dst, "data.yaml"))
    return 0


class Side:
    """Paths and YAMLs of one dataset for both readers: Ultralytics reads a
    copy in the temporary folder (it writes labels/*.cache beside the
    labels); detfeed reads the shared folder in place."""

    def __init__(self, name, data_dir, tmp):
        import yaml
        folder, self.task, self.train, self.val = DATASETS[name]
        self.name = name
        self.src = os.path.join(data_dir, folder)
        if name == "coco8-formats":  # made here; detfeed reads it in place too
            self.src = make_formats(self.src, os.path.join(tmp, "made", name))
        src_yaml = [f for f in os.listdir(self.src) if f.endswith(".yaml")][0]
        with open(os.path.join(self.src, src_yaml)) as f:
            meta = yaml.safe_load(f)
        names = meta["names"]
        if isinstance(names, list):
            names = dict(enumerate(names))
        self.meta = {"names": names, "kpt_shape": meta.get("kpt_shape"),
                     "flip_idx": meta.get("flip_idx")}
        self.copy = os.path.join(tmp, "data", folder)
        shutil.copytree(self.src, self.copy, ignore=shutil.ignore_patterns("*.cache", "*.npy"))
        self.ul_yaml = os.path.join(tmp, "%s-ultralytics.yaml" % name)
        self.det_yaml = os.path.join(tmp, "%s-detfeed.yaml" % name)
        write_yaml(self.ul_yaml, self.copy, self.task, self.train, self.val, self.meta)
        write_yaml(self.det_yaml, self.src, self.task, self.train, self.val, self.meta)

    def data_dict(self):
        """The dataset dict the trainer passes on (check_det_dataset's
        result for this YAML, built here so that nothing is downloaded)."""
        d = {"path": self.copy, "names": dict(self.meta["names"]),
             "nc": len(self.meta["names"]), "channels": 3, "yaml_file": self.ul_yaml,
             "train": [os.path.join(self.copy, t) for t in self.train],
             "val": [os.path.join(self.copy, v) for v in self.val]}
        if self.task == "pose":
            d["kpt_shape"] = list(self.meta["kpt_shape"])
            d["flip_idx"] = list(self.meta["flip_idx"])
        return d

    def rel(self, path):
        """An image path relative to its dataset root, for either copy (and
        either spelling: detfeed resolves links in a dataset's paths as
        check_det_dataset does, this suite's YOLODataset is given them as
        they are)."""
        for root in (self.copy, self.src, os.path.realpath(self.copy),
                     os.path.realpath(self.src)):
            if path.startswith(root + os.sep):
                return path[len(root) + 1:]
        return path


def ultralytics_dataset(side, cfg_overrides, val, batch):
    """YOLODataset as DetectionTrainer.build_dataset makes it."""
    from ultralytics.cfg import get_cfg
    from ultralytics.data.build import build_yolo_dataset
    from ultralytics.utils import DEFAULT_CFG
    over = {"imgsz": 640, "cache": "ram", "task": side.task, "data": side.ul_yaml}
    over.update(cfg_overrides)
    cfg = get_cfg(DEFAULT_CFG, over)
    data = side.data_dict()
    err = io.StringIO()  # progress bars and notes, shown only when it fails
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
        try:
            if val:
                ds = build_yolo_dataset(cfg, data["val"], batch, data, mode="val", rect=True,
                                        stride=32)
            else:
                ds = build_yolo_dataset(cfg, data["train"], batch, data, mode="train")
        except Exception:
            sys.stderr.write(err.getvalue())
            raise
    return ds, cfg


def detfeed_loader(L, side, cfg, conf, stack):
    """A loader with the configuration's settings, taken from the same cfg
    namespace Ultralytics runs with."""
    from detfeed_lib import Loader
    ld = Loader(L)
    settings = [("imgsz", cfg.imgsz), ("seed", conf["seed"]), ("epochs", EPOCHS),
                ("close_mosaic", CLOSE_MOSAIC), ("cache_bytes", 1 << 40),
                ("augment", 0 if conf["val"] else 1), ("workers", 1),
                ("batch", conf["batch"]), ("prefetch", 2), ("dtype", "u8")]
    for k in ("hsv_h", "hsv_s", "hsv_v", "degrees", "translate", "scale", "shear",
              "perspective", "flipud", "fliplr", "mosaic", "mixup", "cutmix", "bgr"):
        settings.append((k, repr(float(getattr(cfg, k)))))
    settings += [("copy_paste", repr(float(cfg.copy_paste))),
                 ("copy_paste_mode", cfg.copy_paste_mode),
                 ("rect", "1" if cfg.rect and not conf["val"] else "0")]
    settings += [("ultralytics", "8.4"), ("opencv", stack["opencv"]),
                 ("opencv_cpu", stack["opencv_cpu"]), ("opencv_ipp", stack["opencv_ipp"]),
                 ("numpy", stack["numpy"]), ("numpy_sort", stack["numpy_sort"])]
    for name, value in settings:
        ld.set(name, value)
    ld.set_split("val" if conf["val"] else "train")
    ld.open(side.det_yaml)
    return ld


# ---------------------------------------------------------------------------
# Comparing
# ---------------------------------------------------------------------------
def ul_sample(ds, queue, index, label, calls):
    """dataset[index] under the forced draws; the draw errors and any use of
    the global generators raise DrawMismatch naming `label`."""
    import forced_draws as fd
    guard = fd.GlobalRngGuard()
    queue.begin(label, calls)
    with fd.forced(queue):
        try:
            out = ds[index]
        except fd.DrawMismatch:
            queue.end()
            raise
    queue.end()
    moved = guard.changed()
    if moved:
        raise fd.DrawMismatch("%s: the global generator(s) %s were drawn from" % (
            label, ", ".join(moved)))
    return out


def to_numpy(x):
    import numpy as np
    import torch
    if isinstance(x, torch.Tensor):
        return x.numpy()
    return np.asarray(x)


def compare_recipe(plan_values, rgb, r, closed):
    """Differences between the parameters Ultralytics used (and its bgr
    gate's outcome `rgb`) and detfeed's recipe `r` (a dict,
    detfeed_lib.Loader.recipe; None when they agree)."""
    out = []

    def cmp(name, a, b):
        if a != b:
            out.append("%s: Ultralytics %r, detfeed %r" % (name, a, b))

    def pre(prefix, v, d):
        cmp(prefix + "mosaic", v["mosaic"], d["mosaic"])
        if v["mosaic"] and d["mosaic"]:
            cmp(prefix + "partners", v["partners"], d["partners"])
            cmp(prefix + "yc", v["yc"], d["yc"])
            cmp(prefix + "xc", v["xc"], d["xc"])
        for k in ("perspective", "angle", "scale", "shear", "translate"):
            cmp(prefix + k, v[k], d[k])

    pre("", plan_values, r)
    cmp("mixup", plan_values["mixup"], r["mixup"])
    if plan_values["mixup"] and r["mixup"]:
        cmp("mix_partner", plan_values["mix_partner"], r["mix_partner"])
        cmp("mix_ratio", plan_values["mix_ratio"], r["mix_ratio"])
        pre("mix_recipe.", plan_values["mix_recipe"], r["mix_recipe"])
    cmp("hsv", plan_values["hsv"], r["hsv"])
    if plan_values["hsv"]:
        cmp("gains", plan_values["gains"], r["gains"])
    cmp("flipud", plan_values["flipud"], r["flipud"])
    cmp("fliplr", plan_values["fliplr"], r["fliplr"])
    cmp("bgr", not rgb, r["bgr"])
    if "copy_paste" in plan_values:  # mode mixup
        cmp("copy_paste", plan_values["copy_paste"], r["copy_paste"])
        if plan_values["copy_paste"] and r["copy_paste"]:
            cmp("cp_partner", plan_values["cp_partner"], r["cp_partner"])
            pre("cp_recipe.", plan_values["cp_recipe"], r["cp_recipe"])
    cmp("cutmix", plan_values["cutmix"], r["cutmix"])
    if plan_values["cutmix"] and r["cutmix"]:
        cmp("cut_partner", plan_values["cut_partner"], r["cut_partner"])
        pre("cut_recipe.", plan_values["cut_recipe"], r["cut_recipe"])
    return out or None


def ul_batch(samples):
    """collate_fn over copies of the sample dicts (it adds to batch_idx in
    place)."""
    import torch
    from ultralytics.data.dataset import YOLODataset
    fresh = [{k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in s.items()}
             for s in samples]
    return YOLODataset.collate_fn(fresh)


def nested(value):
    """Nested tuples and lists (of arrays' scalars too) as tuples of Python
    numbers, for an exact comparison."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (tuple, list)):
        return tuple(nested(v) for v in value)
    return value


def compare_batch(side, b, ulb, detb, img_tally, lab_tally, kinds):
    """One packed batch: images, label arrays, files and shapes."""
    import numpy as np
    label = "batch %d" % b
    lab_tally.missing_keys.update(k for k in ulb if k not in detb)
    ul_img, det_img = to_numpy(ulb["img"]), detb["img"]
    img_tally.add(label, "batch of " + "/".join(sorted(set(kinds))), ul_img, det_img)
    for field in ("cls", "bboxes", "batch_idx", "keypoints"):
        if field in ulb or field in detb:
            lab_tally.add(label, "batch", field,
                          to_numpy(ulb.get(field, np.zeros(0, np.float32))),
                          detb.get(field, np.zeros(0, np.float32)))
    for field in ("masks", "sem_masks"):
        if field in ulb or field in detb:
            lab_tally.add(label, "batch", field, to_numpy(ulb.get(field, np.zeros(0))),
                          detb.get(field, np.zeros(0)))
    files_ul = tuple(side.rel(f) for f in ulb["im_file"])
    files_det = tuple(side.rel(f) for f in detb["im_file"])
    lab_tally.compared["im_file"] = lab_tally.compared.get("im_file", 0) + 1
    if files_ul != files_det:
        lab_tally.differing["im_file"] = lab_tally.differing.get("im_file", 0) + 1
        if len(lab_tally.details) < DETAILS:
            lab_tally.details.append("%s im_file: Ultralytics %s, detfeed %s" % (
                label, files_ul[:4], files_det[:4]))
    for field in ("ratio_pad", "rect_shape"):
        if field not in ulb or field not in detb:
            continue
        lab_tally.compared[field] = lab_tally.compared.get(field, 0) + 1
        if nested(ulb[field]) != nested(detb[field]) or \
                {type(v) for v in ulb[field]} != {type(v) for v in detb[field]}:
            lab_tally.differing[field] = lab_tally.differing.get(field, 0) + 1
            if len(lab_tally.details) < DETAILS:
                lab_tally.details.append("%s %s: Ultralytics %r, detfeed %r" % (
                    label, field, ulb[field][:2], detb[field][:2]))
    for field in ("ori_shape", "resized_shape"):
        a = tuple(tuple(int(v) for v in s) for s in ulb[field])
        d = tuple(tuple(int(v) for v in s) for s in detb[field])
        lab_tally.compared[field] = lab_tally.compared.get(field, 0) + 1
        if a != d:
            lab_tally.differing[field] = lab_tally.differing.get(field, 0) + 1
            if len(lab_tally.details) < DETAILS:
                k = next(i for i in range(len(a)) if a[i] != d[i]) if len(a) == len(d) else 0
                lab_tally.details.append("%s %s: image %d (%s): Ultralytics %s, detfeed %s" % (
                    label, field, k, files_ul[k] if k < len(files_ul) else "?",
                    a[k] if k < len(a) else None, d[k] if k < len(d) else None))


def add_package_keys(detb, imgsz, stack, train):
    """The keys the Python package adds to a batch (the C library has no
    such arrays): ratio_pad and, for segment data, sem_masks, from the
    package's own code (which runs on the library detfeed_lib loaded)."""
    import detfeed_lib  # noqa: F401  (the package on sys.path, its library loaded)
    from detfeed.loader import _batch_ratio_pad, _rect_shapes, sem_masks
    detb["ratio_pad"] = _batch_ratio_pad(detb["ori_shape"], detb["resized_shape"], imgsz,
                                         stack.get("ultralytics", "8.4"), train)
    if train == "rect":
        detb["rect_shape"] = _rect_shapes(detb["resized_shape"])
    if "masks" in detb:
        detb["sem_masks"] = sem_masks(detb["masks"], detb["cls"], detb["batch_idx"])


def chw(det_img, rgb):
    """detfeed's HWC BGR sample as Format lays it out: CHW, RGB when the bgr
    gate says so."""
    import numpy as np
    img = det_img.transpose(2, 0, 1)
    return np.ascontiguousarray(img[::-1] if rgb else img)


def compare_sample(side, label, kind, ul, det, det_mask, img_tally, lab_tally, rgb):
    """One sample: image and label arrays."""
    import numpy as np
    img_tally.add(label, kind, to_numpy(ul["img"]), chw(det["img"], rgb))
    for field in ("cls", "bboxes", "keypoints"):
        if field in ul or field in det:
            lab_tally.add(label, kind, field, to_numpy(ul.get(field, np.zeros(0, np.float32))),
                          det.get(field, np.zeros(0, np.float32)))
    if det_mask is not None or "masks" in ul:
        m = to_numpy(ul.get("masks", np.zeros(0)))
        if m.ndim == 3 and m.shape[0] == 1:
            m = m[0]
        lab_tally.add(label, kind, "masks", m,
                      det_mask if det_mask is not None else np.zeros(0, np.uint8))


def run_config(conf, side, L, stack, args, checks, report, mixed):
    """Runs one configuration; adds its checks and its report row."""
    import numpy as np
    import forced_draws as fd
    t0 = time.time()
    print("\n== %s (opencv %s) ==" % (conf.name, stack["opencv"]), flush=True)
    overrides = dict(conf.hyp)
    ds, cfg = ultralytics_dataset(side, overrides, conf.val, conf.batch)
    if ds.cache != "ram":
        checks.check(False, "%s: Ultralytics cache is %r, not 'ram' (Mosaic would draw from "
                     "its buffer)" % (conf.name, ds.cache))
        return
    if conf.closed:
        ds.close_mosaic(hyp=copy.copy(cfg))  # as the trainer's _close_dataloader_mosaic
    hyp = fd.Hyp.from_transforms(ds)
    ld = detfeed_loader(L, side, cfg, {"seed": args.seed, "val": conf.val,
                                       "batch": conf.batch}, stack)
    try:
        with MixCounter() as made:
            _run(conf, side, L, ld, ds, hyp, stack, args, checks, report, t0)
    finally:
        ld.close()
    # What the mix transforms changed, per dataset (mix_checks checks it).
    for name in ("cutmix", "copy_paste"):
        if conf.hyp.get(name) and not conf.closed and not conf.val:
            key = (conf.dataset, name)
            changed, gated, names = mixed.get(key, (0, 0, []))
            mixed[key] = (changed + made.count[name], gated + made.gated[name],
                          names + [conf.name])
            print("  info  %s changed %d of the %d images it was applied to" % (
                name, made.count[name], made.gated[name]))


def mix_checks(mixed, checks):
    """Each dataset's configurations with CutMix or CopyPaste exercise it:
    it changed some image, not only drew its gate."""
    for (dataset, name), (changed, gated, names) in sorted(mixed.items()):
        checks.check(changed > 0, "%s: %s changed %d of the %d images it was applied to "
                     "(%s)" % (dataset, name, changed, gated, ", ".join(names)))


class MixCounter:
    """Counts, while active, the Ultralytics images CutMix and CopyPaste
    actually changed (CutMix: its gate passed and it found an area and
    instances; CopyPaste: it pasted some object) and those they were
    applied to."""

    def __init__(self):
        self.count, self.gated = {"cutmix": 0, "copy_paste": 0}, {"cutmix": 0, "copy_paste": 0}

    def __enter__(self):
        import ultralytics.data.augment as A
        self._saved = (A.CutMix.apply_image, A.CopyPaste.apply_image)
        counter = self

        def cutmix_image(this, labels, params=None):
            counter.gated["cutmix"] += 1
            counter.count["cutmix"] += not params.get("skip")
            return counter._saved[0](this, labels, params)

        def paste_image(this, labels, params=None):
            counter.gated["copy_paste"] += 1
            counter.count["copy_paste"] += len(params["selected"]) > 0
            return counter._saved[1](this, labels, params)

        A.CutMix.apply_image, A.CopyPaste.apply_image = cutmix_image, paste_image
        return self

    def __exit__(self, *exc):
        import ultralytics.data.augment as A
        A.CutMix.apply_image, A.CopyPaste.apply_image = self._saved
        return False


def _run(conf, side, L, ld, ds, hyp, stack, args, checks, report, t0):
    import forced_draws as fd
    n = ld.size()
    # The two readers must see the same images in the same order (training)
    # or the same set (validation, where Ultralytics reorders by ratio).
    ul_files = [side.rel(f) for f in ds.im_files]
    det_files = [side.rel(ld.image_path(i)) for i in range(n)]
    if conf.val or conf.hyp.get("rect"):
        same = sorted(ul_files) == sorted(det_files)
    else:
        same = ul_files == det_files
    if not checks.check(same and len(ds) == n, "%s: same images (%d Ultralytics, %d detfeed)" % (
            conf.name, len(ds), n), ["first Ultralytics %s, detfeed %s" % (
                ul_files[:3], det_files[:3])]):
        return
    img_t, lab_t = ImageTally(), LabelTally()
    bimg_t, blab_t = ImageTally(), LabelTally()
    draw_fail, recipe_fail = [], []
    queue = fd.DrawQueue()
    epoch = conf.epoch
    u_of = lambda idx: (lambda slot: L.uniform(args.seed, slot, epoch, idx))  # noqa: E731

    def ul_get(ul_index, det_index, train):
        """Ultralytics' sample with the draws of detfeed's (epoch, det_index)."""
        calls, info = fd.sample_plan(u_of(det_index), hyp, n, train=train)
        label = "%s epoch %d index %d" % (conf.name, epoch, det_index)
        if ul_index != det_index:
            label += " (Ultralytics' index %d)" % ul_index
        out = ul_sample(ds, queue, ul_index, label, calls)
        return out, info

    if conf.hyp.get("rect"):
        rect_training(conf, side, L, ld, ds, stack, args, checks, ul_get, ul_files,
                      det_files, img_t, lab_t, bimg_t, blab_t, draw_fail, recipe_fail)
    elif not conf.val:
        order = L.epoch_order(args.seed, epoch, n)
        count = n if conf.samples is None else min(conf.samples, n)
        indices = order[:count] if conf.samples is not None else list(range(n))
        ul_cache, infos = {}, {}
        for idx in indices:
            try:
                out, info = ul_get(idx, idx, True)
            except fd.DrawMismatch as e:
                draw_fail.append(str(e))
                continue
            ul_cache[idx], infos[idx] = out, info
            why = compare_recipe(info.values, info.rgb, ld.recipe(epoch, idx), conf.closed)
            if why:
                recipe_fail.append("epoch %d index %d [%s]: %s" % (
                    epoch, idx, info.kind(), "; ".join(why)))
            det = ld.sample(epoch, idx)
            mask = ld.sample_masks(epoch, idx) if side.task == "segment" else None
            compare_sample(side, "epoch %d index %d" % (epoch, idx), info.kind(), out, det, mask,
                           img_t, lab_t, info.rgb)
        # Batches: the epoch's first batches in detfeed's order.
        dets = ld.batches(epoch, conf.batches)
        for b, detb in enumerate(dets):
            pos = order[b * conf.batch:(b + 1) * conf.batch]
            samples, kinds = [], []
            for idx in pos:
                if idx not in ul_cache:
                    try:
                        ul_cache[idx], infos[idx] = ul_get(idx, idx, True)
                    except fd.DrawMismatch as e:
                        draw_fail.append(str(e))
                        break
                samples.append(ul_cache[idx])
                kinds.append(infos[idx].kind())
            if len(samples) != len(pos):
                continue
            add_package_keys(detb, ds.imgsz, stack, True)
            compare_batch(side, b, ul_batch(samples), detb, bimg_t, blab_t, kinds)
    else:
        # Validation: Ultralytics' index k is its k-th image in ratio order.
        pos_of = {f: i for i, f in enumerate(det_files)}
        order = [pos_of[f] for f in ul_files]
        # detfeed's own order first (the library's np.argsort of the ratios
        # under the stack's numpy_sort), then the reference's order handed
        # over (the rest of the comparison does not depend on the first).
        own = [pos_of[side.rel(f)] for bt in ld.batches(0) for f in bt["im_file"]]
        own_pos = {idx: p for p, idx in enumerate(own)}
        moved = sum(1 for k in range(n) if own_pos[order[k]] // conf.batch != k // conf.batch)
        placed = sum(1 for k in range(n) if own[k] != order[k])
        checks.check(placed == 0, "%s: detfeed's own rect order (without set_rect_order) is "
                     "Ultralytics' (NumPy argsort): %d of %d images at another position, %d in "
                     "another batch" % (conf.name, placed, n, moved))
        ld.close()
        ld2 = detfeed_loader(L, side, ds_cfg_of(ds, conf), {"seed": args.seed, "val": True,
                                                            "batch": conf.batch}, stack)
        ld2.set_rect_order(order)
        try:
            check_rect_shapes(conf, ds, ld2, order, ul_files, checks)
            ul_samples = []
            for k in range(n):
                out, info = ul_or_fail(ul_get, k, order[k], False, draw_fail)
                ul_samples.append(out)
                if out is None:
                    continue
                det = ld2.sample(0, order[k])
                mask = ld2.sample_masks(0, order[k]) if side.task == "segment" else None
                compare_sample(side, "image %d (%s)" % (k, ul_files[k]), "letterbox", out, det,
                               mask, img_t, lab_t, info.rgb)
            dets = ld2.batches(0)
            checks.check(len(dets) == int(ds.batch[-1]) + 1, "%s: batch count (%d Ultralytics, "
                         "%d detfeed)" % (conf.name, int(ds.batch[-1]) + 1, len(dets)))
            for b, detb in enumerate(dets):
                add_package_keys(detb, ds.imgsz, stack, False)
                chunk = ul_samples[b * conf.batch:(b + 1) * conf.batch]
                if any(s is None for s in chunk) or not chunk:
                    continue
                compare_batch(side, b, ul_batch(chunk), detb, bimg_t, blab_t,
                              ["letterbox"])
        finally:
            ld2.close()
    finalize(conf, stack, checks, report, img_t, lab_t, bimg_t, blab_t, draw_fail, recipe_fail,
             time.time() - t0)


def ul_or_fail(ul_get, k, det_index, train, draw_fail):
    """Ultralytics' sample k with the draws of detfeed's det_index, or
    (None, None) with the draw mismatch noted in draw_fail."""
    import forced_draws as fd
    try:
        return ul_get(k, det_index, train)
    except fd.DrawMismatch as e:
        draw_fail.append(str(e))
        return None, None


def check_rect_shapes(conf, ds, ld, order, ul_files, checks):
    """Each image's rect shape: Ultralytics' batch shape for its k-th image
    against the size detfeed gives image order[k]."""
    bad = []
    for k, f in enumerate(ul_files):
        want = tuple(int(x) for x in ds.batch_shapes[ds.batch[k]])
        got = ld.sample_size(order[k])
        if want != got:
            bad.append("%s: Ultralytics rect %s, detfeed %s" % (f, want, got))
    checks.check(not bad, "%s: rect shape of every image (%d images)" % (conf.name, len(ul_files)),
                 bad[:DETAILS])


def rect_training(conf, side, L, ld, ds, stack, args, checks, ul_get, ul_files, det_files,
                  img_t, lab_t, bimg_t, blab_t, draw_fail, recipe_fail):
    """rect=True training: Ultralytics' index k is its k-th image in ratio
    order, detfeed gets that order; samples with the draws of detfeed's
    (epoch, index), then the epoch's first batches."""
    import forced_draws as fd
    n, epoch = len(det_files), conf.epoch
    pos_of = {f: i for i, f in enumerate(det_files)}
    order = [pos_of[f] for f in ul_files]
    ld.set_rect_order(order)
    check_rect_shapes(conf, ds, ld, order, ul_files, checks)
    count = n if conf.samples is None else min(conf.samples, n)
    ul_samples = []
    for k in range(count):
        out, info = ul_or_fail(ul_get, k, order[k], True, draw_fail)
        ul_samples.append(out)
        if out is None:
            continue
        why = compare_recipe(info.values, info.rgb, ld.recipe(epoch, order[k]), conf.closed)
        if why:
            recipe_fail.append("epoch %d index %d: %s" % (epoch, order[k], "; ".join(why)))
        det = ld.sample(epoch, order[k])
        mask = ld.sample_masks(epoch, order[k]) if side.task == "segment" else None
        compare_sample(side, "image %d (%s)" % (k, ul_files[k]), info.kind(), out, det, mask,
                       img_t, lab_t, info.rgb)
    for b, detb in enumerate(ld.batches(epoch, conf.batches)):
        chunk = ul_samples[b * conf.batch:(b + 1) * conf.batch]
        if not chunk or any(s is None for s in chunk) or len(chunk) != len(detb["im_file"]):
            continue
        add_package_keys(detb, ds.imgsz, stack, "rect")
        compare_batch(side, b, ul_batch(chunk), detb, bimg_t, blab_t, ["rect"])


def ds_cfg_of(ds, conf):
    """The cfg values detfeed's validation loader needs (imgsz, hyp)."""
    from ultralytics.cfg import get_cfg
    from ultralytics.utils import DEFAULT_CFG
    return get_cfg(DEFAULT_CFG, dict(conf.hyp, imgsz=ds.imgsz))


def finalize(conf, stack, checks, report, img_t, lab_t, bimg_t, blab_t, draw_fail, recipe_fail,
             seconds):
    name = conf.name
    checks.check(not draw_fail, "%s: forced draws (%d mismatches)" % (name, len(draw_fail)),
                 draw_fail[:DETAILS])
    if not conf.val:
        checks.check(not recipe_fail, "%s: detfeed's recipe = Ultralytics' parameters (%d "
                     "samples differ)" % (name, len(recipe_fail)), recipe_fail[:DETAILS])
    kinds = "; ".join("%s %d/%d" % (k, v[1], v[0]) for k, v in sorted(img_t.by_kind.items()))
    checks.check(img_t.differing == 0, "%s: sample images: %d samples, %d bytes, %d differ "
                 "(max |diff| %d) in %d samples [differing/samples by kind: %s]" % (
                     name, img_t.samples, img_t.bytes, img_t.differing, img_t.maxdiff,
                     img_t.differing_samples, kinds), img_t.details)
    lc, ld_ = lab_t.total()
    checks.check(ld_ == 0, "%s: sample labels: %d arrays, %d differ (%s)" % (
        name, lc, ld_, lab_t.summary()), lab_t.details)
    checks.check(bimg_t.differing == 0 and bimg_t.samples > 0, "%s: batch images: %d batches, "
                 "%d bytes, %d differ (max |diff| %d)" % (
                     name, bimg_t.samples, bimg_t.bytes, bimg_t.differing, bimg_t.maxdiff),
                 bimg_t.details)
    bc, bd = blab_t.total()
    checks.check(bd == 0, "%s: batch labels: %d arrays, %d differ (%s)" % (
        name, bc, bd, blab_t.summary()), blab_t.details)
    # Every key of Ultralytics' batch (collate_fn's) is in detfeed's.
    missing = sorted(blab_t.missing_keys)
    checks.check(not missing, "%s: the keys of Ultralytics' batch (missing: %s)" % (
        name, ", ".join(missing) or "none"))
    report.append({"config": name, "opencv": stack["opencv"], "samples": img_t.samples,
                   "bytes": img_t.bytes, "differing": img_t.differing, "max": img_t.maxdiff,
                   "diff_samples": img_t.differing_samples, "labels": (lc, ld_),
                   "batches": bimg_t.samples, "batch_bytes": bimg_t.bytes,
                   "batch_differing": bimg_t.differing, "batch_labels": (bc, bd),
                   "draw_fail": len(draw_fail), "recipe_fail": len(recipe_fail),
                   "seconds": seconds})
    print("  time  %.1f s" % seconds, flush=True)


def print_report(report, stack):
    print("\n== Summary (opencv %s, ipp %s, cpu %s) ==" % (stack["opencv"], stack["opencv_ipp"],
                                                          stack["opencv_cpu"]))
    head = "%-26s %7s %11s %9s %4s %11s %11s %11s %6s %6s %6s" % (
        "config", "samples", "img bytes", "differ", "max", "labels d/n",
        "batch bytes", "b.differ", "b.lab", "draws", "recipe")
    print(head)
    for r in report:
        print("%-26s %7d %11d %9d %4d %11s %11d %11d %6s %6d %6d" % (
            r["config"], r["samples"], r["bytes"], r["differing"], r["max"],
            "%d/%d" % (r["labels"][1], r["labels"][0]), r["batch_bytes"],
            r["batch_differing"], "%d/%d" % (r["batch_labels"][1], r["batch_labels"][0]),
            r["draw_fail"], r["recipe_fail"]))


def self_test(side, L, args, checks):
    """The forced draws must catch what they are there to catch: a draw the
    plan lacks, a planned draw not made, other arguments, and a draw from a
    global generator elsewhere in the sample path."""
    import random
    import forced_draws as fd
    ds, _ = ultralytics_dataset(side, {}, False, 4)
    hyp = fd.Hyp.from_transforms(ds)
    u = lambda slot: L.uniform(args.seed, slot, 0, 0)  # noqa: E731
    calls, _ = fd.sample_plan(u, hyp, len(ds), train=True)
    q = fd.DrawQueue()

    def caught(plan, what):
        try:
            ul_sample(ds, q, 0, "self-test (%s)" % what, plan)
        except fd.DrawMismatch as e:
            return str(e)
        return None

    ok = caught(calls, "the right plan") is None
    checks.check(ok, "self-test: the plan of a sample is accepted")
    cases = [
        ([c for c in calls if c.name != "np.random.uniform"], "HSV draw left out"),
        (calls + [fd.Call("random.random", (), 0.5, "extra")], "one call too many"),
        ([fd.Call(c.name, (0, 2) if c.args == (0, 1) else c.args, c.value, c.source)
          for c in calls], "other arguments"),
    ]
    for plan, what in cases:
        msg = caught(plan, what)
        checks.check(msg is not None, "self-test: %s is caught" % what,
                     [] if msg else ["no DrawMismatch"])
    saved = ds.transforms
    ds.transforms = lambda labels: (random.random(), saved(labels))[1]
    try:
        msg = caught(calls, "global random")
    finally:
        ds.transforms = saved
    checks.check(msg is not None and "global generator" in msg,
                 "self-test: a draw from the global random module is caught")


def cv_stack(cv2):
    """The reference stack settings for the imported cv2 and NumPy (numpy:
    how this NumPy's BLAS multiplies Ultralytics' float32 matrices, measured
    as the package measures it; not its version, since the 1.26 wheels fuse
    as NumPy 2 does and Debian's 1.24 rounds; None when neither. numpy_sort:
    the argsort it runs, which orders masks of equal area; None when it is
    none that detfeed knows)."""
    import numpy
    import detfeed_lib  # noqa: F401  (puts the package on sys.path)
    from detfeed.stack import numpy_matmul, numpy_sort
    v = cv2.__version__
    major, minor = (int(x) for x in v.split(".")[:2])
    if major == 4:  # Debian's own build rounds one HSV step the wheels fuse
        debian = os.path.abspath(cv2.__file__).startswith("/usr/lib/python3/dist-packages/")
        name = "4-debian" if debian else "4"
    elif (major, minor) in ((5, 0), (5, 1)):
        name = "%d.%d" % (major, minor)
    else:
        return None, v
    return {"opencv": name, "opencv_ipp": "1" if cv2.ipp.useIPP() else "0",
            "opencv_cpu": "auto" if cv2.useOptimized() else "sse", "cv2": v,
            "numpy": numpy_matmul(numpy), "numpy_sort": numpy_sort(numpy)}, v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", required=True, help="libdetfeed.so to test")
    ap.add_argument("--data", required=True, help="the shared data folder (coco128, ...)")
    ap.add_argument("--config", action="append", default=[],
                    help="run only configurations matching this glob (repeatable), "
                         "e.g. 'coco128/mosaic' or 'coco8-*/val'")
    ap.add_argument("--expect-opencv", choices=("4", "4-debian", "5.0", "5.1"),
                    help="skip (77) unless the imported cv2 is this one (ctest names a "
                         "version per test; a missing wheel folder would fall back to "
                         "another cv2)")
    ap.add_argument("--no-ipp", action="store_true",
                    help="cv2.ipp.setUseIPP(False) first (detfeed gets opencv_ipp=0)")
    ap.add_argument("--no-optimized", action="store_true",
                    help="cv2.setUseOptimized(False) first (detfeed gets opencv_cpu=sse)")
    ap.add_argument("--list", action="store_true", help="list the configurations and exit")
    ap.add_argument("--make-formats", metavar="DIR",
                    help="write coco8-formats (coco8 in the other image formats) with its "
                         "YAML DIR/data.yaml into DIR, a new folder, and exit")
    ap.add_argument("--seed", type=int, default=7, help="detfeed seed (default 7)")
    ap.add_argument("--samples", type=int, default=None,
                    help="cap the samples of every configuration (quick runs)")
    ap.add_argument("--imgsz", type=int, default=640,
                    help="image size (default 640; smaller only for quick runs)")
    args = ap.parse_args()
    args.data = os.path.abspath(args.data)  # the temporary YAMLs name it from elsewhere

    configs = all_configs()
    if args.config:
        configs = [c for c in configs if any(fnmatch.fnmatch(c.name, g) for g in args.config)]
    if args.list:
        for c in configs:
            print(c.name)
        return 0
    if args.make_formats:
        return write_formats(args.data, args.make_formats)

    tmp = tempfile.mkdtemp(prefix="detfeed-conformance-")
    os.environ.setdefault("YOLO_CONFIG_DIR", os.path.join(tmp, "settings"))
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_VERBOSE", "False")
    try:
        cv2, numpy, torch, ultralytics = ou.require(
            ("cv2", "numpy", "torch", "ultralytics"), "scripts/oracle_env.sh installs them")
        missing = [d for d in DATASETS.values() if not os.path.isdir(os.path.join(args.data, d[0]))]
        if missing:
            print("SKIP: data missing under %s: %s" % (args.data, ", ".join(d[0] for d in missing)))
            return SKIP
        if args.no_ipp:
            cv2.ipp.setUseIPP(False)
        if args.no_optimized:
            cv2.setUseOptimized(False)
        stack, v = cv_stack(cv2)
        if stack is None:
            print("FAIL: cv2 %s is not a stack detfeed names (4.x, 5.0, 5.1)" % v)
            return 1
        if args.expect_opencv and stack["opencv"] != args.expect_opencv:
            print("SKIP: expected OpenCV %s but cv2 is %s (%s); run scripts/oracle_env.sh" % (
                args.expect_opencv, v, cv2.__file__))
            return SKIP
        from detfeed_lib import Library
        L = Library(args.lib)
        if stack["numpy"] is None:
            print("FAIL: NumPy %s multiplies float32 matrices neither fused nor rounded "
                  "step by step" % numpy.__version__)
            return 1
        if stack["numpy_sort"] is None:
            print("FAIL: NumPy %s runs an argsort detfeed does not know" % numpy.__version__)
            return 1
        print("detfeed %s (%s); ultralytics %s; cv2 %s (%s) -> opencv=%s opencv_ipp=%s "
              "opencv_cpu=%s; numpy %s (%s) -> numpy=%s numpy_sort=%s; torch %s" % (
                  L.version(), args.lib, ultralytics.__version__, v, cv2.__file__,
                  stack["opencv"], stack["opencv_ipp"], stack["opencv_cpu"],
                  numpy.__version__, numpy.__file__, stack["numpy"], stack["numpy_sort"],
                  torch.__version__))
        checks = Checks()
        if ultralytics.__version__ != ULTRALYTICS_VERSION:
            print("note: the suite is written for ultralytics %s" % ULTRALYTICS_VERSION)
        sides, report = {}, []
        t0 = time.time()
        sides["coco8-pose"] = Side("coco8-pose", args.data, tmp)
        self_test(sides["coco8-pose"], L, args, checks)
        mixed = {}  # (dataset, transform): changed, applied, configurations
        for conf in configs:
            if args.samples is not None:
                conf.samples = args.samples if conf.samples is None else min(conf.samples,
                                                                             args.samples)
                if conf.val:
                    conf.samples = None
            if args.imgsz != 640:
                conf.hyp["imgsz"] = args.imgsz
            if conf.dataset not in sides:
                sides[conf.dataset] = Side(conf.dataset, args.data, tmp)
            try:
                run_config(conf, sides[conf.dataset], L, stack, args, checks, report, mixed)
            except Exception as e:  # a crash in one configuration is its failure
                import traceback
                traceback.print_exc()
                checks.check(False, "%s: %s: %s" % (conf.name, type(e).__name__, e))
        mix_checks(mixed, checks)
        print_report(report, stack)
        print("total time %.1f s" % (time.time() - t0))
        print("%d passed, %d failed" % (checks.passed, checks.failed))
        return 0 if checks.failed == 0 else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
