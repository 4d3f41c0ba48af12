"""Ultralytics' dataset train arguments (fraction, classes, single_cls) in
detfeed's index against Ultralytics' own YOLODataset.

For each configuration the real package builds YOLODataset as
build_yolo_dataset does (hyp from get_cfg with the arguments, so that its
argument check runs too; with single_cls the trainer's data override
names={0: 'item'}, nc=1), and detfeed indexes the same folder through
libdetfeed (ctypes), once with the dataset parameters and once with the
loader's text settings. Compared: the image files (Ultralytics' list less
the files detfeed cannot decode, which detfeed reports as unsupported), and
for every image its classes, boxes, keypoints and number of polygons, bit
for bit, and the instance and background counts. One deliberate difference:
a class id that is not below the YAML's nc, which Ultralytics takes (and
matches nothing with), is refused by detfeed with a message.

The datasets are copies in a temporary folder (Ultralytics writes its label
cache beside the labels). coco8's training folder gets a .bmp, a .webp, a
.tif, a .jp2 and a .dng (TIFF bytes) image (with labels) that Ultralytics
reads and counts, a .heic (JPEG bytes, which Ultralytics reads with Pillow
and detfeed reports as unsupported), and files that are not images to
Ultralytics 8.4 (.pfm, .txt, a hidden .jpg).

    test_dataset_args_oracle.py --detfeed BIN --data DIR [--no-ctypes]

Exits 77 (skip) without ultralytics, or under a sanitizer build.
"""
import contextlib
import ctypes
import io
import os
import re
import shutil
import sys
import tempfile

import oracle_util as ou

DECODED = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".mpo", ".tif", ".tiff", ".jp2", ".dng")


class Index:
    """What detfeed's index holds: paths, labels per image, files it
    reported as unsupported, counts."""

    def __init__(self, lib, ds):
        import numpy as np
        L, capi = lib.L, lib.capi
        self.task = capi.TASKS[L.detfeed_dataset_task(ds)]
        k, d = ctypes.c_int(), ctypes.c_int()
        L.detfeed_dataset_kpt_shape(ds, ctypes.byref(k), ctypes.byref(d))
        self.paths, self.labels = [], []
        for i in range(L.detfeed_dataset_size(ds)):
            self.paths.append(os.fsdecode(L.detfeed_dataset_image_path(ds, i)))
            n = L.detfeed_dataset_instance_count(ds, i)
            cls = np.zeros(n, np.float32)
            boxes = np.zeros((n, 4), np.float32)
            kpts = np.zeros((n, k.value, 3), np.float32) if k.value else None
            L.detfeed_dataset_labels(ds, i, cls.ctypes.data, boxes.ctypes.data,
                                     kpts.ctypes.data if kpts is not None else None)
            self.labels.append((cls, boxes, kpts))
        self.unsupported = []
        f, r, line = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_int()
        for i in range(L.detfeed_dataset_problem_count(ds)):
            L.detfeed_dataset_problem(ds, i, ctypes.byref(f), ctypes.byref(line), ctypes.byref(r))
            if r.value.startswith(b"unsupported image format"):
                self.unsupported.append(os.fsdecode(f.value))
        stat = capi.DATASET_STATS.index
        self.instances = L.detfeed_dataset_stat_get(ds, stat("instances"))
        self.backgrounds = L.detfeed_dataset_stat_get(ds, stat("backgrounds"))
        self.left_out = L.detfeed_dataset_stat_get(ds, stat("left_out"))
        self.nc = L.detfeed_dataset_class_count(ds)

    def same_as(self, other):
        import numpy as np
        if self.paths != other.paths or self.unsupported != other.unsupported:
            return False
        for a, b in zip(self.labels, other.labels):
            if not all(np.array_equal(x, y) for x, y in zip(a, b) if x is not None):
                return False
        return True


class Lib:
    def __init__(self, detfeed_bin):
        self.capi = ou.capi()
        self.L = ou.library(detfeed_bin)

    def dataset(self, source, split, fraction, classes, single_cls):
        """The index through the dataset parameters (an int fraction with
        set_int, a float with set_float, as Python's types say)."""
        L, param = self.L, self.capi.DATASET_PARAMS
        ds = ctypes.c_void_p()
        assert L.detfeed_dataset_create(ctypes.byref(ds), 0) == 0
        try:
            rc = L.detfeed_dataset_set_split(ds, split.encode())
            if rc == 0 and isinstance(fraction, int):
                rc = L.detfeed_dataset_set_int(ds, param["fraction"], fraction)
            elif rc == 0:
                rc = L.detfeed_dataset_set_float(ds, param["fraction"], fraction)
            if rc == 0 and classes is not None:
                ids = (ctypes.c_int * len(classes))(*classes)
                rc = L.detfeed_dataset_set_classes(ds, ids, len(classes))
            if rc == 0:
                rc = L.detfeed_dataset_set_int(ds, param["single_cls"], int(single_cls))
            if rc == 0:
                rc = L.detfeed_dataset_open(ds, os.fsencode(source))
            if rc != 0:
                raise RuntimeError(L.detfeed_dataset_last_error(ds).decode())
            return Index(self, ds)
        finally:
            L.detfeed_dataset_destroy(ds)

    def loader(self, source, split, fraction, classes, single_cls):
        """The index of a loader given the same arguments as text."""
        L = self.L
        ld = ctypes.c_void_p()
        assert L.detfeed_loader_create(ctypes.byref(ld), 0) == 0
        try:
            sets = [("fraction", repr(fraction)), ("single_cls", str(int(single_cls)))]
            if classes is not None:
                sets.append(("classes", ",".join(str(c) for c in classes)))
            rc = L.detfeed_loader_set_split(ld, split.encode())
            for name, value in sets:
                rc = rc or L.detfeed_loader_set(ld, name.encode(), value.encode())
            rc = rc or L.detfeed_loader_open(ld, os.fsencode(source))
            if rc != 0:
                raise RuntimeError(L.detfeed_loader_last_error(ld).decode())
            return Index(self, L.detfeed_loader_dataset(ld))
        finally:
            L.detfeed_loader_destroy(ld)


def copy_sets(data, tmp):
    """The four datasets copied (without caches), coco8's training folder
    with the extra files; returns {name: (folder, yaml dict)}."""
    import cv2
    import yaml
    out = {}
    for name in ("coco8", "coco8-seg", "coco8-pose", "coco128"):
        src = os.path.join(data, name)
        if not os.path.isdir(src):
            print("SKIP: %s is missing" % src)
            sys.exit(ou.SKIP)
        dst = os.path.join(tmp, name)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.cache", "*.npy"))
        with open(os.path.join(dst, name + ".yaml")) as f:
            text = f.read()
        # The copy's root is its own folder: Ultralytics' `path: coco8` would
        # be the one under its datasets_dir (check_det_dataset), not this copy.
        text = re.sub(r"(?m)^path:.*$", "", text)
        with open(os.path.join(dst, name + ".yaml"), "w") as f:
            f.write(text)
        out[name] = (dst, yaml.safe_load(text))
    root = out["coco8"][0]
    im = os.path.join(root, "images", "train")
    lb = os.path.join(root, "labels", "train")
    for stem, ext, like in (("000000000020", ".bmp", "000000000009"),
                            ("000000000031", ".webp", "000000000030"),
                            ("000000000032", ".tif", "000000000034"),
                            ("000000000033", ".jp2", "000000000009"),
                            ("000000000035", ".dng", "000000000030")):
        pixels = cv2.imread(os.path.join(im, like + ".jpg"))
        made = os.path.join(im, stem + (".tif" if ext == ".dng" else ext))
        assert cv2.imwrite(made, pixels), ext
        os.rename(made, os.path.join(im, stem + ext))
        shutil.copy(os.path.join(lb, like + ".txt"), os.path.join(lb, stem + ".txt"))
    with open(os.path.join(im, "000000000026.pfm"), "wb") as f:
        f.write(b"PF\n1 1\n-1\n\0\0\0\0\0\0\0\0\0\0\0\0")
    with open(os.path.join(im, "readme.txt"), "w") as f:
        f.write("not an image\n")
    shutil.copy(os.path.join(im, "000000000009.jpg"), os.path.join(im, ".hidden.jpg"))
    shutil.copy(os.path.join(im, "000000000009.jpg"), os.path.join(im, "000000000027.heic"))
    shutil.copy(os.path.join(lb, "000000000009.txt"), os.path.join(lb, "000000000027.txt"))
    return out


def ultralytics_dataset(folder, meta, task, split, fraction, classes, single_cls):
    """YOLODataset as build_yolo_dataset makes it for the trainer."""
    from ultralytics.cfg import get_cfg
    from ultralytics.data.dataset import YOLODataset
    from ultralytics.data.utils import get_split_fraction
    from ultralytics.utils import DEFAULT_CFG
    over = {"task": task, "fraction": fraction, "single_cls": single_cls, "imgsz": 640}
    if classes is not None:
        over["classes"] = list(classes)
    cfg = get_cfg(DEFAULT_CFG, over)
    names = meta["names"]
    data = {"names": dict(enumerate(names)) if isinstance(names, list) else dict(names),
            "channels": 3, "path": folder}
    data["nc"] = len(data["names"])
    if "kpt_shape" in meta:
        data["kpt_shape"], data["flip_idx"] = list(meta["kpt_shape"]), list(meta["flip_idx"])
    if cfg.single_cls:  # BaseTrainer.get_dataset
        data["names"], data["nc"] = {0: "item"}, 1
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
        try:
            return YOLODataset(img_path=os.path.join(folder, meta[split]), imgsz=cfg.imgsz,
                               batch_size=16, augment=False, hyp=cfg, rect=False, cache=None,
                               single_cls=cfg.single_cls or False, stride=32, pad=0.5,
                               prefix="", task=cfg.task, classes=cfg.classes, data=data,
                               fraction=get_split_fraction(cfg.fraction, "train"))
        except Exception:
            sys.stderr.write(err.getvalue())
            raise


def compare(c, what, ul, det, task):
    """detfeed's index against Ultralytics' dataset."""
    import numpy as np
    ul_files = [str(f) for f in ul.im_files]
    decoded = [f for f in ul_files if f.lower().endswith(DECODED)]
    others = [f for f in ul_files if not f.lower().endswith(DECODED)]
    ok = c.check(det.paths == decoded, "%s: image files\n  detfeed     %s\n  ultralytics %s"
                 % (what, [os.path.basename(p) for p in det.paths],
                    [os.path.basename(p) for p in decoded]))
    c.check(sorted(det.unsupported) == sorted(others),
            "%s: unsupported %s, Ultralytics' other formats %s" % (what, det.unsupported, others))
    c.check(det.task == task, "%s: task %s" % (what, det.task))
    if not ok:
        return
    by_file = {str(lb["im_file"]): lb for lb in ul.labels}
    bad, instances, backgrounds = [], 0, 0
    for path, (cls, boxes, kpts) in zip(det.paths, det.labels):
        lb = by_file[path]
        ucls = lb["cls"].reshape(-1).astype(np.float32)
        same = np.array_equal(cls, ucls) and np.array_equal(boxes, lb["bboxes"].astype(np.float32))
        if task == "pose":
            same = same and np.array_equal(kpts, lb["keypoints"].astype(np.float32))
        if task == "segment":
            same = same and len(lb["segments"]) == len(cls)
        if not same:
            bad.append(os.path.basename(path))
        instances += len(ucls)
        backgrounds += len(ucls) == 0
    c.check(not bad, "%s: labels differ in %s" % (what, bad))
    c.check(det.instances == instances and det.backgrounds == backgrounds,
            "%s: %d instances, %d backgrounds; Ultralytics %d, %d"
            % (what, det.instances, det.backgrounds, instances, backgrounds))


# (dataset, task, split, fraction, classes, single_cls)
CONFIGS = [
    ("coco8", "detect", "train", 1.0, None, False),
    ("coco8", "detect", "train", 0.5, None, False),      # 6 files: 3
    ("coco8", "detect", "train", 0.25, None, False),     # 1.5 -> 2
    ("coco8", "detect", "train", 0.75, None, False),     # 4.5 -> 4
    ("coco8", "detect", "train", 0.1, None, False),      # max(1, round(0.6))
    ("coco8", "detect", "train", 1, None, False),        # 1: all
    ("coco8", "detect", "train", 2, None, False),
    ("coco8", "detect", "train", 3, None, False),
    ("coco8", "detect", "train", 5, None, False),
    ("coco8", "detect", "train", 100, None, False),
    ("coco8", "detect", "train", 1.0, [45, 58], False),
    ("coco8", "detect", "train", 1.0, [23], False),
    ("coco8", "detect", "train", 1.0, [0], False),
    ("coco8", "detect", "train", 1.0, None, True),
    ("coco8", "detect", "train", 0.5, [49, 22], True),
    ("coco8", "detect", "val", 0.5, None, False),
    ("coco8-seg", "segment", "train", 1.0, [58], False),
    ("coco8-seg", "segment", "train", 0.75, [45, 49, 75], False),
    ("coco8-seg", "segment", "train", 1.0, None, True),
    ("coco8-pose", "pose", "train", 1.0, [0], False),
    ("coco8-pose", "pose", "train", 1.0, [1], False),    # refused: one class
    ("coco8-pose", "pose", "val", 3, None, True),
    ("coco128", "detect", "train", 0.3, None, False),    # 38.4 -> 38
    ("coco128", "detect", "train", 0.35, None, False),   # 44.8 -> 45
    ("coco128", "detect", "train", 0.37109375, None, False),  # 47.5 -> 48
    ("coco128", "detect", "train", 0.37890625, None, False),  # 48.5 -> 48
    ("coco128", "detect", "train", 10, None, False),
    ("coco128", "detect", "train", 1.0, [0, 2, 5], False),
    ("coco128", "detect", "train", 0.25, [0], True),
]


def check_refused(c, what, call):
    """An id beyond nc: Ultralytics keeps no instance of it; detfeed
    refuses it, saying so."""
    try:
        call()
        c.check(False, "%s: not refused" % what)
    except RuntimeError as e:
        c.check("is not a class of" in str(e), "%s: refused with %s" % (what, e))


def check_mem_available(c):
    """psutil.virtual_memory().available is /proc/meminfo's MemAvailable
    (what cache_bytes "ram" reads): bracketed by two reads of the file."""
    import psutil

    def mem_available():
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
        return None

    for _ in range(5):
        a = mem_available()
        p = psutil.virtual_memory().available
        b = mem_available()
        if a is None or min(a, b) <= p <= max(a, b):
            break
    c.check(a is None or min(a, b) <= p <= max(a, b),
            "psutil's available %d is not MemAvailable (%d, %d)" % (p, a, b))


def main():
    args = ou.parse_args()
    if args.no_ctypes:
        print("SKIP: this oracle runs through ctypes (not under a sanitizer)")
        sys.exit(ou.SKIP)
    ou.require(("numpy", "yaml", "ultralytics"), "scripts/oracle_env.sh installs them")
    import logging
    from ultralytics.utils import LOGGER
    LOGGER.setLevel(logging.ERROR)  # its scan and speed notes
    lib = Lib(args.detfeed)
    c = ou.Counter("test_dataset_args_oracle")
    with tempfile.TemporaryDirectory(prefix="detfeed-args-") as tmp:
        sets = copy_sets(os.path.abspath(args.data), tmp)
        for name, task, split, fraction, classes, single_cls in CONFIGS:
            folder, meta = sets[name]
            what = "%s %s fraction=%r classes=%s single_cls=%s" % (
                name, split, fraction, classes, single_cls)
            ul = ultralytics_dataset(folder, meta, task, split, fraction, classes, single_cls)
            source = os.path.join(folder, name + ".yaml")
            run = (source, split, fraction, classes, single_cls)
            if classes and max(classes) >= len(meta["names"]):
                check_refused(c, what, lambda: lib.dataset(*run))
                check_refused(c, what + " (loader)", lambda: lib.loader(*run))
                print("%-70s refused" % what)
                continue
            det = lib.dataset(*run)
            compare(c, what, ul, det, task)
            c.check(det.nc == (1 if single_cls else len(meta["names"])),
                    "%s: %d classes" % (what, det.nc))
            via_loader = lib.loader(*run)
            c.check(via_loader.same_as(det), "%s: the loader's index differs" % what)
            print("%-70s %3d images, %3d left out, %4d instances" % (
                what, len(det.paths), det.left_out, det.instances), flush=True)
    check_mem_available(c)
    c.finish()


if __name__ == "__main__":
    main()
