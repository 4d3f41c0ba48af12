"""Real Ultralytics fits through detfeed.ultralytics.trainer(), on the CPU,
recording what the model was fed; run by test_ultralytics.py and
test_ultralytics_val.py in a process of their own (Ultralytics reads its
settings, the datasets folder among them, once at import).

    python ultralytics_fits.py DATA_DIR WORK_DIR OUT.json [NAME...]

DATA_DIR holds coco8, coco8-seg and coco8-pose (and coco128 for the
comparison that reads it); they are copied into WORK_DIR/datasets,
Ultralytics' datasets folder for the run, so that data="coco8.yaml"
resolves as it does for a user (the YAMLs that ship with Ultralytics).
For each fit OUT.json gets: the batches the model received (class ids,
image files, shapes, value checks), the loader's settings as detfeed
reports them, the validation loader and the metrics after each epoch,
and, for comparison, what Ultralytics' own dataset of the same arguments
holds (its image files and class ids), or the error when the arguments
are refused. Without NAMEs it runs FITS; the names of VAL_FITS and
VAL_BATCHES (Ultralytics' validation loader against detfeed's, batch by
batch and key by key) run when named.
"""
import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
import time

DATA, WORK, OUT = sys.argv[1:4]
# DETFEED_FIT_DEVICE=0 trains on that CUDA device, DETFEED_FIT_COLOR=device
# with the device colour route.
DEVICE = os.environ.get("DETFEED_FIT_DEVICE", "cpu")
COLOR = os.environ.get("DETFEED_FIT_COLOR", "worker")
ONLY = set(sys.argv[4:])
DATASETS = os.path.join(WORK, "datasets")
CONFORMANCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                           "conformance")
os.makedirs(DATASETS, exist_ok=True)
for name in ("coco8", "coco8-seg", "coco8-pose", "coco128"):
    if name == "coco128" and not any(n.endswith("coco128") for n in ONLY):
        continue  # read by one comparison only
    if not os.path.exists(os.path.join(DATASETS, name)):
        shutil.copytree(os.path.join(DATA, name), os.path.join(DATASETS, name))
        # a user's dataset folder may be written (the shared data is
        # read-only: the copy keeps its modes)
        for top, dirs, files in os.walk(os.path.join(DATASETS, name)):
            os.chmod(top, 0o755)
            for f in files:
                os.chmod(os.path.join(top, f), 0o644)
os.environ["YOLO_CONFIG_DIR"] = os.path.join(WORK, "config")
os.environ["YOLO_OFFLINE"] = "1"
# Ultralytics' settings file first, in a process of its own: the datasets
# folder is read when ultralytics is imported.
subprocess.run([sys.executable, "-c", "from ultralytics.utils import SETTINGS; "
                "SETTINGS.update(datasets_dir=%r, runs_dir=%r, sync=False)"
                % (DATASETS, os.path.join(WORK, "runs"))], check=True)

import numpy as np  # noqa: E402
import torch  # noqa: E402
from ultralytics import YOLO  # noqa: E402
from ultralytics.data import build_yolo_dataset  # noqa: E402
from ultralytics.models import yolo  # noqa: E402
from ultralytics.utils.plotting import plot_images  # noqa: E402

import detfeed  # noqa: E402
import detfeed.ultralytics as du  # noqa: E402

if DEVICE != "cpu":  # offline: Ultralytics' AMP check downloads weights
    import ultralytics.engine.trainer as _trainer_mod
    _trainer_mod.check_amp = lambda model: True
try:
    import polars  # noqa: F401  (Ultralytics' results.csv reader and metric plots)
    POLARS = True
except ImportError:  # the checkpoint's results summary and the plots need it
    import ultralytics.engine.trainer as _trainer_mod
    _trainer_mod.BaseTrainer.read_results_csv = lambda self: {}
    POLARS = False

MODELS = {"detect": "yolov8n.yaml", "segment": "yolov8n-seg.yaml", "pose": "yolov8n-pose.yaml",
          "obb": "yolov8n-obb.yaml"}
DATAS = {"detect": "coco8.yaml", "segment": "coco8-seg.yaml", "pose": "coco8-pose.yaml",
         "obb": "coco8.yaml"}
PLAINS = {"detect": yolo.detect.DetectionTrainer, "segment": yolo.segment.SegmentationTrainer,
          "pose": yolo.pose.PoseTrainer}

# Ultralytics plots training batches in a thread; a slow one (as on a busy
# machine) shows whether the plot still sees the batch it describes.
_plotted = []
_real_plot = yolo.detect.train.plot_images


def _slow_plot(*args, **kwargs):
    def later():
        time.sleep(1.0)
        _real_plot(*args, threaded=False, **kwargs)
    t = threading.Thread(target=later)
    t.start()
    _plotted.append(t)
    return t


yolo.detect.train.plot_images = _slow_plot


def record_batches(rec):
    """A callback that wraps the trainer's preprocess_batch to record what
    the model receives (and keeps copies of the plotted batches)."""
    def start(tr):
        orig = tr.preprocess_batch

        def wrapped(batch):
            given = batch["img"]
            # The floats equal Ultralytics' own conversion of the same codes
            # on this device (the CPU divides by 255; CUDA multiplies by its
            # reciprocal).
            codes = torch.round(given.float() * 255).clamp(0, 255).to(torch.uint8)
            same = given.dtype == torch.float32 and torch.equal(codes.float() / 255, given)
            out = orig(batch)
            img = out["img"]
            b = {"shape": list(img.shape), "dtype": str(img.dtype), "device": str(given.device),
                 "cls": sorted(set(out["cls"].flatten().tolist())),
                 "instances": int(out["cls"].shape[0]), "im_file": list(out["im_file"]),
                 "keys": sorted(out)}
            if "keypoints" in out:
                b["keypoints"] = list(out["keypoints"].shape)
            if "masks" in out:
                b["masks"] = list(out["masks"].shape)
                b["masks_dtype"] = str(out["masks"].dtype)
                b["most_instances"] = int(torch.bincount(out["batch_idx"].long()).max()) \
                    if len(out["batch_idx"]) else 0
            b["equals_ultralytics_floats"] = bool(same)
            b["plane_sums"] = codes.long().sum(dim=(2, 3)).tolist()  # per image, per plane
            rec["batches"].append(b)
            ni = len(rec["batches"]) - 1
            if ni in tr.plot_idx and tr.args.plots:
                rec["trained"].append({k: v.clone() if hasattr(v, "clone") else v
                                       for k, v in out.items()})
            return out
        tr.preprocess_batch = wrapped

    def train_start(tr):
        ld = tr.test_loader
        rec["val_loader"] = {"type": type(ld).__name__, "batch_size": ld.batch_size,
                             "batches": len(ld), "images": len(ld.dataset)}

    def fit_epoch_end(tr):
        rec["metrics"].append(dict(tr.metrics))

    def epoch_end(tr):
        ld = tr.train_loader
        rec["loader"] = {"type": type(ld).__name__, "workers": getattr(ld, "num_workers", None),
                         "color": getattr(ld, "color", None),
                         "images": len(ld.dataset), "device": getattr(ld, "device", None)}
        cache = getattr(ld, "cache_stats", None)
        if cache is not None:
            rec["loader"]["cache"] = cache()
        rec["dataset_cls"] = sorted({int(c) for lb in ld.dataset.labels
                                     for c in lb["cls"].flatten().tolist()})
        rec["dataset_files"] = sorted(ld.dataset.im_files)
        rec["dataset_instances"] = sum(len(lb["cls"]) for lb in ld.dataset.labels)
        rec["dataset_shapes"] = {lb["im_file"]: list(lb["shape"]) for lb in ld.dataset.labels
                                 if "shape" in lb}
    return {"on_pretrain_routine_start": start, "on_train_epoch_end": epoch_end,
            "on_train_start": train_start, "on_fit_epoch_end": fit_epoch_end}


def ultralytics_dataset(task, args, imgsz, batch):
    """What Ultralytics' own training dataset holds for these arguments."""
    tr = PLAINS[task](overrides=dict(model=MODELS[task], data=DATAS[task], task=task, imgsz=imgsz,
                                     device="cpu", **args))
    ds = build_yolo_dataset(tr.args, tr.data["train"], batch, tr.data, mode="train", stride=32)
    return {"files": sorted(ds.im_files),
            "batch_shapes": ds.batch_shapes.tolist() if ds.rect else None,
            "cls": sorted({int(c) for lb in ds.labels for c in lb["cls"].flatten().tolist()}),
            "instances": sum(len(lb["cls"]) for lb in ds.labels),
            "shapes": {lb["im_file"]: list(lb["shape"]) for lb in ds.labels
                       if "shape" in lb}}  # rect datasets drop it


def fit(name, task, epochs=1, plots=False, imgsz=64, val=False, val_loader="detfeed", model=None,
        batch=4, **args):
    """One fit (val: Ultralytics' train argument, validation after every
    epoch; val_loader: trainer(val=...), whose loader validates; model: a
    model YAML other than the task's)."""
    plots = plots and POLARS  # without polars Ultralytics cannot finish its plots
    rec = {"task": task, "args": {k: repr(v) for k, v in args.items()}, "batches": [],
           "trained": [], "metrics": []}
    model = YOLO(model or MODELS[task])
    for event, callback in record_batches(rec).items():
        model.add_callback(event, callback)
    t = time.time()
    try:
        model.train(data=DATAS[task], epochs=epochs, imgsz=imgsz, batch=batch, device=DEVICE,
                    trainer=du.trainer(color=COLOR, val=val_loader), exist_ok=True, name=name,
                    plots=plots, val=val, verbose=False, **args)
    except Exception as e:  # refused arguments: the message is the result
        rec["error"] = "%s: %s" % (type(e).__name__, e)
        rec["trained"] = []
        return rec
    rec["seconds"] = round(time.time() - t, 1)
    for th in _plotted:
        th.join()
    _plotted.clear()
    if plots:  # each plot against the batch trained on, drawn again now
        save = model.trainer.save_dir
        rec["plots"] = []
        for ni, plotted in enumerate(rec["trained"]):
            ref = os.path.join(str(save), "ref_batch%d.jpg" % ni)
            _real_plot(labels=plotted, paths=plotted["im_file"], fname=ref, threaded=False)
            rec["plots"].append([str(save / ("train_batch%d.jpg" % ni)), ref])
    rec["trained"] = len(rec["trained"])
    if task in PLAINS and "error" not in rec:
        rec["ultralytics"] = ultralytics_dataset(task, args, imgsz, batch)
    return rec


FITS = {
    "detect": dict(task="detect", epochs=3, plots=True),
    "bgr": dict(task="detect", epochs=3, bgr=0.5),  # the batches of "detect", some BGR
    # CutMix needs an area free of boxes: without Mosaic, at scales from 0.1
    "cutmix": dict(task="detect", epochs=3, close_mosaic=0, cutmix=1.0, mosaic=0.0, scale=0.9),
    "cutmix_reference": dict(task="detect", epochs=3, close_mosaic=0, mosaic=0.0, scale=0.9),
    # rect training: batches of the rect shapes (not square at 320 on coco8)
    "rect": dict(task="detect", epochs=2, imgsz=320, batch=2, rect=True),
    # CopyPaste pastes polygons: segment data
    "copy_paste": dict(task="segment", epochs=2, close_mosaic=0, copy_paste=1.0),
    "copy_paste_mixup": dict(task="segment", epochs=2, close_mosaic=0, copy_paste=1.0,
                             copy_paste_mode="mixup"),
    "copy_paste_reference": dict(task="segment", epochs=2, close_mosaic=0),
    "segment": dict(task="segment"),
    "segment_yolo26": dict(task="segment", model="yolo26n-seg.yaml"),  # reads sem_masks
    "pose": dict(task="pose"),
    "single_cls": dict(task="detect", single_cls=True),
    "classes": dict(task="detect", classes=[22, 45]),
    "fraction": dict(task="detect", fraction=0.5),
    "cache_false": dict(task="detect", cache=False),
    "cache_ram": dict(task="detect", cache="ram"),
    "cache_disk": dict(task="detect", epochs=2, cache="disk"),
    "cache_disk_again": dict(task="detect", cache="disk"),  # reuses the file
    "workers": dict(task="detect", workers=3),
    "multi_scale": dict(task="detect", epochs=3, multi_scale=0.5),
    "detect_on_segment_data": dict(task="detect", data_override="coco8-seg.yaml"),
    "detect_on_pose_data": dict(task="detect", data_override="coco8-pose.yaml"),
    # an image of 300 polygons: int32 masks, as Ultralytics' own loader gives them
    "segment_dense": dict(task="segment", data_override="dense-seg", imgsz=320, mosaic=0.0),
    # refused before training, each with a message naming it
    "mask_ratio": dict(task="segment", mask_ratio=2),
    "overlap_mask": dict(task="segment", overlap_mask=False),
    "obb": dict(task="obb"),
    "augmentations": dict(task="detect",  # custom Albumentations, as the trainer serializes them
                          augmentations=[{"transform": {"__class_fullname__": "ToGray", "p": 1}}]),
    "segment_on_detect_data": dict(task="segment", data_override="coco8.yaml"),
    "channels_1": dict(task="detect", data_override="gray8"),
    "heic_image": dict(task="detect", data_override="heic8"),
    # every format detfeed decodes, in one training split
    "formats": dict(task="detect", epochs=2, data_override="formats"),
    # Ultralytics never closes mosaic for close_mosaic 0 or less
    "close_mosaic_negative": dict(task="detect", epochs=2, close_mosaic=-1),
    "close_mosaic_zero": dict(task="detect", epochs=2, close_mosaic=0),
    # Ultralytics' integer arguments take bools, True as 1
    "int_arguments_as_bools": dict(task="detect", epochs=2, close_mosaic=True, seed=True),
    "int_arguments_as_ints": dict(task="detect", epochs=2, close_mosaic=1, seed=1),
}

# The same fits validated through detfeed's loader and through Ultralytics'
# (at 64, coco8-seg's validation images have instances of equal mask area:
# their order is NumPy's argsort's, as the numpy_sort setting reproduces).
VAL_FITS = {}
for _task in ("detect", "segment", "pose"):
    for _loader in ("detfeed", "ultralytics"):
        VAL_FITS["val_%s_%s" % (_task, _loader)] = dict(task=_task, epochs=2, val=True,
                                                       val_loader=_loader)

# Validation loaders compared batch by batch: (task, data, imgsz, batch size
# of the validation loader[, model]). The last two keep Ultralytics' loader.
VAL_BATCHES = {
    "val_batches_detect": ("detect", "coco8.yaml", 96, 2),
    "val_batches_segment": ("segment", "coco8-seg.yaml", 64, 2),
    "val_batches_pose": ("pose", "coco8-pose.yaml", 96, 2),
    "val_batches_default": ("detect", "coco8.yaml", 64, 8),  # the fits' batch 4, doubled
    "val_batches_detect_on_pose_data": ("detect", "coco8-pose.yaml", 96, 2),  # no keypoints
    "val_batches_coco128": ("detect", "coco128.yaml", 64, 16),  # equal aspect ratios
    "val_batches_detect_on_segment_data": ("detect", "coco8-seg.yaml", 64, 2),
    "val_batches_stride_64": ("detect", "coco8.yaml", 128, 2, "yolov8n-p6.yaml"),
}


def _differs(a, b):
    """Why batch values a (Ultralytics') and b (detfeed's) differ, or None."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return "types %s, %s" % (type(a).__name__, type(b).__name__)
        for what in ("dtype", "shape", "device"):
            if getattr(a, what) != getattr(b, what):
                return "%s %s, %s" % (what, getattr(a, what), getattr(b, what))
        if not torch.equal(a, b):
            return "%d of %d values differ" % (int((a != b).sum()), a.numel())
        return None
    if type(a) is not type(b):
        return "types %s, %s" % (type(a).__name__, type(b).__name__)
    if a != b:
        return "%r, %r" % (a, b)
    return None


def val_batches(task, data, imgsz, batch, model=None):
    """Ultralytics' validation loader, as its trainer's get_dataloader
    (mode="val") makes it, against detfeed's trainer's: loader, dataset
    and every batch, key by key."""
    tr = du.trainer()(overrides=dict(model=model or MODELS[task], data=data, task=task,
                                     device="cpu",
                                     imgsz=imgsz, batch=batch // 2, exist_ok=True,
                                     name="val_batches", verbose=False))
    tr.setup_model()
    path = tr.data[tr.args.split]
    ul = PLAINS[task].get_dataloader(tr, path, batch_size=batch, rank=-1, mode="val")
    dl = tr.get_dataloader(path, batch_size=batch, rank=-1, mode="val")
    rec = {"type": type(dl).__name__, "diffs": [], "batches": 0, "keys": None}
    if type(dl) is type(ul):  # detfeed's trainer kept Ultralytics' loader
        return rec
    for what in ("len", "batch_size", "images", "im_files", "sampler"):
        u, d = [{"len": len, "batch_size": lambda x: x.batch_size,
                 "images": lambda x: len(x.dataset), "im_files": lambda x: x.dataset.im_files,
                 "sampler": lambda x: list(x.sampler)}[what](x) for x in (ul, dl)]
        if u != d:
            at = next((k for k, (a, b) in enumerate(zip(u, d)) if a != b), None) \
                if isinstance(u, list) and isinstance(d, list) else None
            rec["diffs"].append("%s: %r, %r" % (what, u, d) if at is None else
                                "%s: %d and %d items, first difference at %d: %r, %r"
                                % (what, len(u), len(d), at, u[at], d[at]))
    for i, (u, d) in enumerate(zip(ul.dataset.labels, dl.dataset.labels)):
        for k in ("cls", "bboxes"):
            if not np.array_equal(u[k], d[k]):
                rec["diffs"].append("labels[%d][%s]" % (i, k))
    rec["max_instances"] = max(len(lb["cls"]) for lb in dl.dataset.labels)
    for i, (u, d) in enumerate(itertools.zip_longest(ul, dl)):
        if u is None or d is None:
            rec["diffs"].append("batch %d: only %s gives it" % (i, "detfeed" if u is None
                                                                 else "Ultralytics"))
            continue
        rec["batches"] += 1
        rec["keys"] = sorted(u)
        rec["shapes"] = rec.get("shapes", []) + [list(u["img"].shape)]
        if sorted(u) != sorted(d):
            rec["diffs"].append("batch %d keys: %s, %s" % (i, sorted(u), sorted(d)))
        for k in sorted(set(u) & set(d)):
            a, b = u[k], d[k]
            if k == "resized_shape":  # Ultralytics' are NumPy arrays
                a = tuple(tuple(int(v) for v in s) for s in a)
            why = _differs(a, b)
            if why:
                rec["diffs"].append("batch %d %s: %s" % (i, k, why))
    dl.close()
    return rec


def dense_dataset():
    """coco8-seg's training images with generated labels: the first of 300
    small polygons (a 20 x 15 grid), the others of 40; returns its YAML."""
    import math
    import random
    top = os.path.join(DATASETS, "dense-seg")
    src = os.path.join(DATASETS, "coco8-seg", "images", "train")
    rnd = random.Random(3)
    for d in ("images", "labels"):
        os.makedirs(os.path.join(top, d, "train"), exist_ok=True)
    for k, name in enumerate(sorted(os.listdir(src))[:4]):
        shutil.copy(os.path.join(src, name), os.path.join(top, "images", "train", name))
        cols, rows = (20, 15) if k == 0 else (8, 5)
        with open(os.path.join(top, "labels", "train", os.path.splitext(name)[0] + ".txt"),
                  "w") as f:
            for j in range(rows):
                for i in range(cols):
                    m, pts = rnd.randint(5, 8), []
                    for q in range(m):
                        a, r = 2 * math.pi * (q + rnd.uniform(0, 0.8)) / m, rnd.uniform(0.2, 0.45)
                        pts += [(i + 0.5 + r * math.cos(a)) / cols,
                                (j + 0.5 + r * math.sin(a)) / rows]
                    f.write("%d %s\n" % ((i + j) % 3, " ".join("%.6f" % v for v in pts)))
    yaml = os.path.join(top, "dense-seg.yaml")
    with open(yaml, "w") as f:
        f.write("path: %s\ntrain: images/train\nval: images/train\nnames:\n  0: a\n  1: b\n"
                "  2: c\n" % top)
    return yaml


def coco8_variant(name, channels=None, heic=False):
    """coco8's training images and labels as dataset `name`, with `channels`
    in its YAML, or with its first image renamed .heic (a suffix detfeed does
    not decode; its JPEG bytes, which Ultralytics reads with Pillow); returns
    its YAML."""
    top, src = os.path.join(DATASETS, name), os.path.join(DATASETS, "coco8")
    for d in ("images", "labels"):
        if not os.path.exists(os.path.join(top, d, "train")):
            shutil.copytree(os.path.join(src, d, "train"), os.path.join(top, d, "train"))
    if heic:
        first = sorted(os.listdir(os.path.join(top, "images", "train")))[0]
        path = os.path.join(top, "images", "train", first)
        if path.endswith(".jpg"):
            os.rename(path, path[:-4] + ".heic")
    yaml = os.path.join(top, name + ".yaml")
    with open(yaml, "w") as f:
        f.write("path: %s\ntrain: images/train\nval: images/train\nnc: 80\n%s"
                % (top, "channels: %d\n" % channels if channels else ""))
    return yaml


def formats_dataset():
    """coco8 in the other formats and two coco128 images (a JPEG, a TIFF
    named .dng), as the conformance suite's make_formats writes them: JPEG,
    PNG, BMP, MPO, TIFF, WebP, JPEG 2000 and DNG in one training split;
    returns its YAML."""
    top = os.path.join(DATASETS, "formats")
    if not os.path.exists(top):
        sys.path.insert(0, CONFORMANCE)
        import run_conformance
        run_conformance.make_formats(os.path.join(DATA, "coco8"), top)
    yaml = os.path.join(top, "formats.yaml")
    with open(yaml, "w") as f:
        f.write("path: %s\ntrain: [images/train, images/val]\nval: images/val\nnc: 80\n" % top)
    return yaml


results = {}
unknown = ONLY - set(FITS) - set(VAL_FITS) - set(VAL_BATCHES)
if unknown:
    raise SystemExit("unknown names: %s" % ", ".join(sorted(unknown)))
for name in sorted(ONLY & set(VAL_BATCHES)):
    results[name] = val_batches(*VAL_BATCHES[name])
    print("compared", name, len(results[name]["diffs"]), "differences", flush=True)
for name, spec in list(FITS.items()) + list(VAL_FITS.items()):
    if (ONLY and name not in ONLY) or (not ONLY and name not in FITS):
        continue
    spec = dict(spec)
    data = spec.pop("data_override", None)
    if data == "dense-seg":
        data = dense_dataset()
    elif data == "formats":
        data = formats_dataset()
    elif data in ("gray8", "heic8"):
        data = coco8_variant(data, channels=1 if data == "gray8" else None,
                             heic=data == "heic8")
    task = spec.pop("task")
    saved = DATAS[task]
    if data:
        DATAS[task] = data
    try:
        results[name] = fit(name, task, **spec)
    finally:
        DATAS[task] = saved
    print("fit", name, results[name].get("error") or "%s s" % results[name].get("seconds"),
          flush=True)
with open(OUT, "w") as f:
    json.dump(results, f, indent=1)
