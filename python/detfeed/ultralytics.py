"""Training an Ultralytics model with detfeed's loader.

    from ultralytics import YOLO
    import detfeed.ultralytics

    trainer = detfeed.ultralytics.trainer(color="device")   # or "worker"
    YOLO("yolov8n-seg.yaml").train(data="coco8-seg.yaml", epochs=3, trainer=trainer)

trainer() returns a trainer class for model.train(trainer=...). It follows
the model's task (detect, segment, pose) and extends that task's Ultralytics
trainer; the training batches come from detfeed.Loader, the validation
batches from Ultralytics' own loader, so the metrics are computed as always.

The data is what Ultralytics resolves (its check_det_dataset: the datasets
folder, `path`, downloads), and every train argument that shapes the
training data is either honoured with Ultralytics' meaning or refused
before training with a message naming it (the README's table says which).
The model receives the floats Ultralytics' preprocess_batch gives for the
same 8-bit batch on that device: detfeed converts with the matching table
(on CUDA PyTorch's `img.float() / 255` multiplies by the reciprocal of 255,
on the CPU it divides), and Ultralytics' own preprocess_batch still runs
(device moves, multi_scale).
Ultralytics is imported when trainer() is called, never before.
"""
import os
import tempfile

from ._lib import TASKS, lib
from .loader import Loader

# The train arguments that are detfeed hyperparameters (same names).
HYPERPARAMETERS = ("hsv_h", "hsv_s", "hsv_v", "degrees", "translate", "scale", "shear",
                   "perspective", "flipud", "fliplr", "mosaic", "mixup")


# Loader settings the trainer takes from the train arguments and the device.
_FROM_TRAIN_ARGS = set(HYPERPARAMETERS) | {
    "imgsz", "batch", "workers", "seed", "epochs", "close_mosaic", "split", "tensors",
    "device", "value_scale", "cache", "single_cls", "fraction", "classes", "drop_last",
    "augment", "rank", "world_size"}


class TrainArgumentError(ValueError):
    """A train argument detfeed does not support, named in the message."""


def trainer(color="worker", dtype="float32", **loader_options):
    """A trainer class for model.train(trainer=...) whose training batches
    come from detfeed. color: "worker" or "device" (the CUDA kernel colours
    and converts the batch); dtype: "float32" (the floats Ultralytics'
    preprocess_batch makes) or "uint8" (codes; Ultralytics divides); further
    keywords go to detfeed.Loader (e.g. prefetch)."""
    if color not in ("worker", "device"):
        raise ValueError("color must be 'worker' or 'device', not %r" % (color,))
    if str(dtype).replace("torch.", "") not in ("float32", "uint8"):
        raise ValueError("dtype must be 'float32' or 'uint8': the model receives float32 "
                         "as Ultralytics gives it, not %r" % (dtype,))
    taken = sorted(set(loader_options) & _FROM_TRAIN_ARGS)
    if taken:
        raise TypeError("trainer() got %s: the trainer sets %s from the train arguments "
                        "(give them to model.train)" % (", ".join(taken),
                                                        "it" if len(taken) == 1 else "them"))
    options = dict(loader_options, color=color, dtype=str(dtype).replace("torch.", ""))
    from ultralytics.utils import DEFAULT_CFG

    class DetfeedTrainer:
        """Makes the Ultralytics trainer of the model's task, with detfeed's
        training loader."""

        def __new__(cls, cfg=DEFAULT_CFG, overrides=None, _callbacks=None):
            from ultralytics.cfg import get_cfg
            task = (overrides or {}).get("task") or get_cfg(cfg).task
            return _task_class(task)(options, cfg, overrides, _callbacks)

    return DetfeedTrainer


def _task_class(task):
    if task not in TASKS:
        raise TrainArgumentError(
            "detfeed: task=%r is not supported (detfeed trains %s); train it without "
            "detfeed's trainer" % (task, ", ".join(TASKS)))
    from ultralytics.models import yolo
    base = {"detect": yolo.detect.DetectionTrainer, "segment": yolo.segment.SegmentationTrainer,
            "pose": yolo.pose.PoseTrainer}[task]
    return type("Detfeed" + base.__name__, (_DetfeedMixin, base), {})


class _Prescaled:
    """The batch's images already as Ultralytics' `img.float() / 255`: lets
    Ultralytics' own preprocess_batch run (device moves, multi_scale) without
    converting twice."""

    def __init__(self, img):
        self.img = img

    def float(self):
        return self

    def __truediv__(self, divisor):
        if divisor != 255:
            raise RuntimeError("detfeed: preprocess_batch divided by %r, not 255: this "
                               "Ultralytics version is not supported" % (divisor,))
        return self.img


class _DetfeedMixin:
    """The detfeed parts of a task trainer (mixed in before Ultralytics' class)."""

    def __init__(self, options, cfg, overrides, _callbacks):
        self._detfeed_options = options
        super().__init__(cfg, overrides, _callbacks)
        check_train_arguments(self.args)
        self.add_callback("on_train_epoch_start", _sync_epoch)

    def get_dataloader(self, dataset_path, batch_size=16, rank=0, mode="train"):
        if mode != "train":
            return super().get_dataloader(dataset_path, batch_size, rank, mode)
        loader, source = build_loader(self.args, self.data, dataset_path, batch_size,
                                      self.device, self._detfeed_options)
        if rank in (-1, 0):
            log_loader(loader, {source: str(self.args.data)})
        return loader

    def preprocess_batch(self, batch):
        img = batch["img"]
        if not isinstance(getattr(self, "train_loader", None), Loader):
            return super().preprocess_batch(batch)
        if self.args.task == "detect":
            batch.pop("masks", None)  # a segment dataset's masks: Ultralytics' detect has none
        if not img.is_floating_point():
            return super().preprocess_batch(batch)  # dtype uint8: Ultralytics converts
        batch["img"] = _Prescaled(img.to(self.device, non_blocking=self.device.type == "cuda"))
        batch = super().preprocess_batch(batch)
        if isinstance(batch["img"], _Prescaled):
            raise RuntimeError("detfeed: preprocess_batch did not convert the images as "
                               "expected: this Ultralytics version is not supported")
        return batch

    def plot_training_samples(self, batch, ni):
        # Ultralytics draws in a thread while training goes on and the loader
        # reuses the batch's buffer: the plot gets a copy of its own.
        batch = {k: v.clone() if hasattr(v, "clone") else v for k, v in batch.items()}
        return super().plot_training_samples(batch, ni)


def check_train_arguments(args):
    """Raises TrainArgumentError for a train argument detfeed does not honour."""
    refused = []

    def nonzero(name):
        v = getattr(args, name, 0)
        if v:
            refused.append("%s=%r (detfeed supports %s=0 only)" % (name, v, name))

    for name in ("bgr", "cutmix", "copy_paste"):
        nonzero(name)
    if getattr(args, "rect", False):
        refused.append("rect=True (rectangular training batches are not supported)")
    if getattr(args, "time", None):
        refused.append("time=%r (it changes the epoch count during training; give epochs)"
                       % (args.time,))
    if isinstance(getattr(args, "scale", 0.5), (list, tuple)):
        refused.append("scale=%r (a number only)" % (args.scale,))
    if args.task == "segment":
        if getattr(args, "mask_ratio", 4) != 4:
            refused.append("mask_ratio=%r (4 only)" % (args.mask_ratio,))
        if not getattr(args, "overlap_mask", True):
            refused.append("overlap_mask=False (overlapping masks only)")
    if refused:
        raise TrainArgumentError("detfeed: train arguments not supported: " + "; ".join(refused))


def _threads(args, device):
    """Ultralytics' number of DataLoader workers, as threads (at least one)."""
    nd = 0
    if device.type == "cuda":
        import torch
        nd = torch.cuda.device_count()
    return max(min((os.cpu_count() or 1) // max(nd, 1), int(args.workers)), 1)


def _cache(args):
    c = args.cache
    if c is True or str(c).lower() in ("true", "ram"):
        return "ram"
    if str(c).lower() == "disk":
        return "disk"  # detfeed's disk cache: one file beside the labels
    return "none"


def build_loader(args, data, dataset_path, batch_size, device, options):
    """detfeed.Loader for the trainer's training split, with its arguments,
    and the path of the dataset YAML it was given (removed since)."""
    hyp = {k: getattr(args, k) for k in HYPERPARAMETERS}
    cuda = device.type == "cuda"
    settings = dict(imgsz=args.imgsz, batch=batch_size, workers=_threads(args, device),
                    seed=args.seed, epochs=args.epochs, close_mosaic=args.close_mosaic,
                    split="train", tensors="torch", device=str(device) if cuda else "cpu",
                    value_scale="reciprocal" if cuda else "quotient", cache=_cache(args),
                    **_dataset_args(args, data),
                    drop_last=bool(args.compile), **hyp)
    if settings["cache"] != "ram":
        # Ultralytics without cache="ram" draws mosaic partners from a buffer
        # of its recent images (min(n, batch * 8, 1000)): the same window.
        settings["partner_window"] = min(batch_size * 8, 1000)
    settings.update(options)
    source = _write_data_yaml(data, dataset_path, args)
    try:
        loader = Loader(source, **settings)
        if settings["drop_last"] and len(loader) == 0:
            # Ultralytics drops a short last batch only when there are more
            # samples than one batch.
            loader.close()
            loader = Loader(source, **dict(settings, drop_last=False))
    finally:
        os.unlink(source)
    return loader, source


def _write_data_yaml(data, dataset_path, args):
    """The training split as Ultralytics resolved it, in a dataset YAML of
    absolute paths (removed once the loader has indexed it)."""
    import json
    paths = dataset_path if isinstance(dataset_path, (list, tuple)) else [dataset_path]
    lines = ["path: " + json.dumps(os.path.abspath(str(data.get("path", "."))), ensure_ascii=False),
             "train: [" + ", ".join(json.dumps(os.path.abspath(str(p)), ensure_ascii=False)
                                    for p in paths) + "]"]
    names = data["names"]  # single_cls: {0: "item"} (the library checks no id then)
    names = names if isinstance(names, dict) else dict(enumerate(names))
    lines.append("names:")
    lines += ["  %d: %s" % (int(k), json.dumps(str(v), ensure_ascii=False))
              for k, v in sorted(names.items())]
    if args.task == "pose":
        lines.append("kpt_shape: %s" % json.dumps(list(data["kpt_shape"])))
        if data.get("flip_idx") is not None:
            lines.append("flip_idx: %s" % json.dumps(list(data["flip_idx"])))
    fd, path = tempfile.mkstemp(prefix="detfeed-data-", suffix=".yaml")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def log_loader(loader, aliases):
    """One line for detfeed (route, worker threads, cache) and one for its
    dataset scan, with each problem it found, as Ultralytics logs its own
    (the YAML written for the loader named as the user's data)."""
    from ultralytics.utils import LOGGER, colorstr
    prefix = colorstr("train: ")
    LOGGER.info("%sdetfeed %s: batches in %s memory, colour in the %s, %d worker threads, %s"
                % (prefix, lib.version(), loader.device, loader.color,
                   loader.num_workers, _cache_summary(loader.cache_stats())))
    if loader.route_note:
        LOGGER.info("%sdetfeed: %s" % (prefix, loader.route_note))
    st = loader.dataset.stats()
    extra = (("rejected_lines", "label lines rejected"), ("duplicates", "duplicate labels removed"),
             ("unsupported", "images in formats detfeed cannot read"),
             ("left_out", "images left out by fraction"),
             ("class_filtered", "instances of other classes removed"))
    LOGGER.info("%sdetfeed indexed %d images, %d backgrounds, %d corrupt%s; %s"
                % (prefix, st["usable"], st["backgrounds"], st["corrupt"],
                   "".join(", %d %s" % (st[k], what) for k, what in extra if st[k]),
                   _verify_summary(loader.verify_stats())))
    for line in loader.dataset.problems():
        for path, name in aliases.items():
            line = line.replace(path, name)
        LOGGER.warning("%s%s" % (prefix, line))


def _verify_summary(v):
    """What the check of every image when the loader opened took from where,
    and where its verdicts are kept."""
    text = ("checked %d images (%d decoded, %d verdicts from the record, %d from the cache)"
            % (v["images"], v["decoded"], v["reused"], v["cached"]))
    if v["record"] == "none":
        return text + ", nothing recorded (verify_record='none')"
    if v["record"] == "unwritten":
        return text + ", " + v["note"]
    return text + ", record %s %s" % (v["path"], v["record"])


def _cache_summary(c):
    if c.get("disk"):
        d = c["disk"]
        return "disk cache %s (%s: %d of %d images)" % (d["path"], d["state"], d["images"],
                                                       d["expected"])
    if c["budget"] == 0:
        return "no image cache (images decoded when used)"
    text = "RAM cache of %d images (%.1f MB)" % (c["images"], c["bytes"] / 1e6)
    return text + (", %d decoded when used" % c["on_demand"] if c["on_demand"] else "")


def _sync_epoch(tr):
    """Each epoch's batches are the trainer's epoch (resumed runs included)."""
    if isinstance(getattr(tr, "train_loader", None), Loader):
        tr.train_loader.set_epoch(tr.epoch)


def _dataset_args(args, data):
    """single_cls, classes and fraction as Ultralytics' dataset takes them."""
    from ultralytics.data.utils import get_split_fraction
    fraction = 1.0 if data.get("complete") else get_split_fraction(args.fraction, "train")
    out = {"single_cls": int(bool(args.single_cls)),
           "fraction": str(fraction) if isinstance(fraction, int) else repr(float(fraction))}
    if args.classes is not None:
        classes = args.classes if isinstance(args.classes, (list, tuple)) else [args.classes]
        out["classes"] = ",".join(str(int(c)) for c in classes)
    return out
