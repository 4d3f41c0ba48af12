"""Training an Ultralytics model with detfeed's loader.

    from ultralytics import YOLO
    import detfeed.ultralytics

    trainer = detfeed.ultralytics.trainer(color="device")   # or "worker", "recipe"
    YOLO("yolov8n-seg.yaml").train(data="coco8-seg.yaml", epochs=3, trainer=trainer)

trainer() returns a trainer class for model.train(trainer=...). It follows
the model's task (detect, segment, pose) and extends that task's Ultralytics
trainer; the training batches come from detfeed.Loader, and so do the
validation batches (trainer(val="detfeed"), the default): the same
letterboxed rectangles, in the same order (NumPy's argsort of the aspect
ratios), as the batches of Ultralytics' own validation loader, byte for
byte, with every key its validators read, in host memory as uint8 as
Ultralytics gives them (its validator moves and converts them). The
validator and its metrics stay Ultralytics'. trainer(val="ultralytics")
keeps Ultralytics' validation loader; it is kept also, with a log line
saying why, under DDP (detfeed's rect batches need one process), for a
model whose largest stride is above 32 (detfeed's rect shapes are
multiples of 32) and for a detect model on segment data (detfeed orders
the instances by mask area there).

The data is what Ultralytics resolves (its check_det_dataset: the datasets
folder, `path`, downloads), and every train argument that shapes the
training data is either honoured with Ultralytics' meaning or refused
before training with a message naming it (docs/guide.md's table says which).
The model receives the floats Ultralytics' preprocess_batch gives for the
same 8-bit batch on that device: detfeed converts with the matching table
(on CUDA PyTorch's `img.float() / 255` multiplies by the reciprocal of 255,
on the CPU it divides), and Ultralytics' own preprocess_batch still runs
(device moves, multi_scale).
A checkpoint of such a trainer records detfeed's settings under the key
CHECKPOINT_KEY ("detfeed": version, the Loader keywords with color and
dtype, val; plain values, so that it loads where detfeed is not
installed); a resumed run (model.train(resume=True, trainer=trainer()))
restores them, and a resumed checkpoint without the record is said in the
log to switch to detfeed's loader. validator() is the validator of a
validation of its own (model.val(validator=...), `yolo val`) with
detfeed's validation batches. `detfeed train ...` and `detfeed val ...`
(detfeed.train_cli) run both from Ultralytics' command line.
Ultralytics is imported when trainer() or validator() is called, never
before.
"""
import importlib.util
import os
import tempfile

from ._lib import TASKS, DetfeedError, lib
from .loader import Loader

# The train arguments that are detfeed hyperparameters (same names).
HYPERPARAMETERS = ("hsv_h", "hsv_s", "hsv_v", "degrees", "translate", "scale", "shear",
                   "perspective", "flipud", "fliplr", "mosaic", "mixup", "cutmix", "bgr",
                   "copy_paste", "copy_paste_mode")


# Loader settings the trainer takes from the train arguments and the device.
_FROM_TRAIN_ARGS = set(HYPERPARAMETERS) | {
    "imgsz", "batch", "workers", "seed", "epochs", "close_mosaic", "split", "tensors",
    "device", "value_scale", "cache", "single_cls", "fraction", "classes", "drop_last",
    "augment", "rank", "world_size", "rect"}


class TrainArgumentError(ValueError):
    """A train argument detfeed does not support, named in the message."""


# The checkpoint key of detfeed's settings: {"version", "loader" (the
# Loader keywords, color and dtype among them), "val"}, plain values only.
CHECKPOINT_KEY = "detfeed"


def checkpoint_record(options, val):
    """What a checkpoint records of detfeed: plain values (str, numbers,
    bools, None), so that it loads where detfeed is not installed (also
    under torch.load(weights_only=True))."""
    from ._version import __version__

    def plain(v):
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        return os.fspath(v) if isinstance(v, os.PathLike) else str(v)
    return {"version": __version__, "loader": {str(k): plain(v) for k, v in options.items()},
            "val": val}


def _settings_text(options, val):
    return ", ".join("%s=%s" % (k, options[k]) for k in sorted(options)) + ", val=%s" % val


def trainer(color="worker", dtype="float32", val="detfeed", **loader_options):
    """A trainer class for model.train(trainer=...) whose training batches
    come from detfeed. color: "worker", "device" (the CUDA kernel colours
    and converts the batch) or "recipe" (the CUDA kernel makes the whole
    image from the RAM cache held on the device); dtype: "float32" (the
    floats Ultralytics' preprocess_batch makes) or "uint8" (codes; Ultralytics divides); val:
    "detfeed" (validation batches from detfeed.Loader too) or "ultralytics"
    (Ultralytics' validation loader); further keywords go to detfeed.Loader
    (e.g. prefetch; the validation loader takes those of _VAL_OPTIONS).

    Its checkpoints record these settings (CHECKPOINT_KEY); resuming one
    (model.train(resume=True, trainer=...)) restores them, except those
    given here other than their defaults, and says so in the log; resuming
    a checkpoint without the record says that its run goes on with
    detfeed's loader."""
    if color not in ("worker", "device", "recipe"):
        raise ValueError("color must be 'worker', 'device' or 'recipe', not %r" % (color,))
    if val not in ("detfeed", "ultralytics"):
        raise ValueError("val must be 'detfeed' or 'ultralytics', not %r" % (val,))
    if str(dtype).replace("torch.", "") not in ("float32", "uint8"):
        raise ValueError("dtype must be 'float32' or 'uint8': the model receives float32 "
                         "as Ultralytics gives it, not %r" % (dtype,))
    taken = sorted(set(loader_options) & _FROM_TRAIN_ARGS)
    if taken:
        raise TypeError("trainer() got %s: the trainer sets %s from the train arguments "
                        "(give them to model.train)" % (", ".join(taken),
                                                        "it" if len(taken) == 1 else "them"))
    dtype = str(dtype).replace("torch.", "")
    # What a resumed run takes from here rather than from its checkpoint's
    # record: the keywords given other than their defaults.
    given = set(loader_options) | {k for k, v, default in (
        ("color", color, "worker"), ("dtype", dtype, "float32"), ("val", val, "detfeed"))
        if v != default}
    return _trainer({"loader": dict(loader_options, color=color, dtype=dtype), "val": val,
                     "given": given})


def _trainer(settings):
    """trainer()'s class for settings {"loader": Loader keywords (color and
    dtype among them), "val": "detfeed" or "ultralytics", "given": the names
    a resumed run keeps rather than take them from its checkpoint}."""
    from ultralytics.utils import DEFAULT_CFG

    class DetfeedTrainer:
        """Makes the Ultralytics trainer of the model's task, with detfeed's
        training loader."""

        def __new__(cls, cfg=DEFAULT_CFG, overrides=None, _callbacks=None):
            from ultralytics.cfg import get_cfg
            task = (overrides or {}).get("task") or get_cfg(cfg).task
            return _task_class(task)(settings, cfg, overrides, _callbacks)

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

    def __init__(self, settings, cfg, overrides, _callbacks):
        self._detfeed_options = dict(settings["loader"])
        self._detfeed_val = settings["val"]
        self._detfeed_given = set(settings.get("given", ()))
        super().__init__(cfg, overrides, _callbacks)
        check_train_arguments(self.args)
        check_data(self.data, str(self.args.data))
        warn_albumentations()
        self.add_callback("on_train_epoch_start", _sync_epoch)

    def setup_model(self):
        """Ultralytics' setup_model; a resumed run takes detfeed's settings
        from its checkpoint (before the loaders are made)."""
        ckpt = super().setup_model()
        if self.resume and isinstance(ckpt, dict):
            self._resume_settings(ckpt)
        return ckpt

    def _resume_settings(self, ckpt):
        from ultralytics.utils import LOGGER, RANK, colorstr
        record = ckpt.get(CHECKPOINT_KEY)
        if isinstance(record, dict) and isinstance(record.get("loader"), dict):
            options = dict(record["loader"])
            val = record.get("val", "detfeed")
            kept = {k: self._detfeed_options[k] for k in self._detfeed_given
                    if k in self._detfeed_options}
            options.update(kept)
            if "val" in self._detfeed_given:
                kept["val"] = val = self._detfeed_val
            self._detfeed_options, self._detfeed_val = options, val
            what = "resuming %s with the detfeed settings it was trained with (detfeed %s): %s" % (
                self.args.resume, record.get("version", "?"), _settings_text(options, val))
            if kept:
                what += "; given now: %s" % ", ".join("%s=%s" % kv for kv in sorted(kept.items()))
        else:
            what = ("%s was trained without detfeed (on Ultralytics' own loader): its resumed "
                    "run switches to detfeed's loader (%s)"
                    % (self.args.resume, _settings_text(self._detfeed_options, self._detfeed_val)))
        if RANK in (-1, 0):
            LOGGER.info("%sdetfeed: %s" % (colorstr("train: "), what))

    def save_model(self):
        """Ultralytics' checkpoints, with detfeed's settings under
        CHECKPOINT_KEY (plain values: a checkpoint loads without detfeed)."""
        # Ultralytics builds the checkpoint dict inside save_model and
        # serializes it once with torch.save (then writes the bytes to
        # last.pt, best.pt, epochN.pt); no hook adds a key, so torch.save is
        # wrapped for the call (this process's, on the training thread).
        import torch
        record, real, added = checkpoint_record(self._detfeed_options, self._detfeed_val), \
            torch.save, []

        def save(obj, *args, **kwargs):
            if isinstance(obj, dict) and "train_args" in obj and CHECKPOINT_KEY not in obj:
                obj = dict(obj, **{CHECKPOINT_KEY: record})
                added.append(True)
            return real(obj, *args, **kwargs)

        torch.save = save
        try:
            saved = super().save_model()
        finally:
            torch.save = real
        if not added and not getattr(self, "_detfeed_unrecorded", False):
            from ultralytics.utils import LOGGER
            self._detfeed_unrecorded = True
            LOGGER.warning("detfeed: this Ultralytics version saved its checkpoint without "
                           "torch.save of a dict: the checkpoint does not record detfeed's "
                           "settings (a resume names them again)")
        return saved

    def get_dataloader(self, dataset_path, batch_size=16, rank=0, mode="train"):
        if mode != "train":
            return self._val_loader(dataset_path, batch_size, rank, mode)
        if self.args.rect:
            why = self._no_detfeed_rect(rank)
            if why:
                raise TrainArgumentError("detfeed: train arguments not supported: rect=True "
                                         "(%s)" % why)
        loader, source = build_loader(self.args, self.data, dataset_path, batch_size,
                                      self.device, self._detfeed_options)
        if rank in (-1, 0):
            log_loader(loader, {source: str(self.args.data)}, seen=self._problems_logged())
        check_loader(loader, self.args.task, str(self.args.data))
        return loader

    def _val_loader(self, dataset_path, batch_size, rank, mode):
        """detfeed's validation loader, or Ultralytics' with trainer(val=
        "ultralytics") or where detfeed's cannot give its batches (the log
        says why)."""
        if self._detfeed_val == "ultralytics":
            return super().get_dataloader(dataset_path, batch_size, rank, mode)
        why = self._no_detfeed_val(rank)
        if why is None:
            loader, source = build_val_loader(self.args, self.data, dataset_path, batch_size,
                                              self.device, self._detfeed_options)
            why = unsupported_images(loader.loader)
            if self.args.task == "detect" and loader.dataset.task == "segment":
                why = ("detfeed orders a segment dataset's instances by mask area, Ultralytics' "
                       "detect dataset keeps the label files' order")
            if why is None:
                log_loader(loader.loader, {source: str(self.args.data)}, mode="val",
                           seen=self._problems_logged())
                return loader
            loader.close()
        from ultralytics.utils import LOGGER, colorstr
        LOGGER.info("%sdetfeed: validation through Ultralytics' loader: %s"
                    % (colorstr("val: "), why))
        return super().get_dataloader(dataset_path, batch_size, rank, mode)

    def _problems_logged(self):
        """The dataset problems this trainer has logged (each once, though
        training and validation may read the same files)."""
        if not hasattr(self, "_detfeed_problems_logged"):
            self._detfeed_problems_logged = set()
        return self._detfeed_problems_logged

    def _close_dataloader_mosaic(self):
        """Ultralytics' line at the epoch it closes mosaic; detfeed's loader
        turns Mosaic, MixUp, CutMix and CopyPaste off in those epochs by
        itself (its close_mosaic setting)."""
        if not isinstance(getattr(self, "train_loader", None), Loader):
            return super()._close_dataloader_mosaic()
        from ultralytics.utils import LOGGER
        LOGGER.info("Closing dataloader mosaic")

    def _no_detfeed_rect(self, rank):
        """Why detfeed cannot make this trainer's rect training batches, or
        None."""
        from ultralytics.utils.torch_utils import unwrap_model
        if rank != -1:
            return "under DDP: rect batches come in one aspect-ratio order for one process"
        stride = max(int(unwrap_model(self.model).stride.max()), 32)  # as build_dataset
        if stride != 32:
            return "the model's stride is %d: detfeed's rect shapes are multiples of 32" % stride
        return None

    def _no_detfeed_val(self, rank):
        """Why detfeed cannot give this trainer's validation batches, or None."""
        from ultralytics.utils.torch_utils import unwrap_model
        if rank != -1:
            return ("DDP shards validation over the processes (detfeed's rect batches need one "
                    "process)")
        stride = max(int(unwrap_model(self.model).stride.max()), 32)  # as build_dataset
        if stride != 32:
            return "the model's stride is %d (detfeed's rect shapes are multiples of 32)" % stride
        return None

    def preprocess_batch(self, batch):
        img = batch["img"]
        if not isinstance(getattr(self, "train_loader", None), Loader):
            return super().preprocess_batch(batch)
        if self.args.task == "detect":  # a segment or pose dataset's: Ultralytics' detect has none
            for key in ("masks", "sem_masks", "keypoints"):
                batch.pop(key, None)
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
    if getattr(args, "time", None):
        refused.append("time=%r (it changes the epoch count during training; give epochs)"
                       % (args.time,))
    if isinstance(getattr(args, "scale", 0.5), (list, tuple)):
        refused.append("scale=%r (a number only)" % (args.scale,))
    if getattr(args, "augmentations", None):
        refused.append("augmentations (custom Albumentations transforms are not supported)")
    if args.task == "segment":
        if getattr(args, "mask_ratio", 4) != 4:
            refused.append("mask_ratio=%r (4 only)" % (args.mask_ratio,))
        if not getattr(args, "overlap_mask", True):
            refused.append("overlap_mask=False (overlapping masks only)")
    if refused:
        raise TrainArgumentError("detfeed: train arguments not supported: " + "; ".join(refused))


def check_data(data, name):
    """Raises TrainArgumentError for what the resolved dataset (`data`, from
    the user's `name`) asks of the batches that detfeed does not make."""
    channels = data.get("channels", 3)
    if channels != 3:
        raise TrainArgumentError(
            "detfeed: %s has channels: %r: detfeed makes 3-channel (RGB) batches only"
            % (name, channels))


def warn_albumentations():
    """Where the albumentations package is installed Ultralytics' training
    transforms end with its Blur, MedianBlur, ToGray and CLAHE (p=0.01
    each), which detfeed does not apply: said once, in the log."""
    if importlib.util.find_spec("albumentations") is None:
        return
    from ultralytics.utils import LOGGER, colorstr
    LOGGER.warning("%sdetfeed: albumentations is installed, so Ultralytics' own loader would "
                   "also apply its Blur, MedianBlur, ToGray and CLAHE (p=0.01 each) to "
                   "training samples; detfeed does not: about 4%% of its samples differ from "
                   "Ultralytics' there (uninstall albumentations for the same samples)"
                   % colorstr("train: "))


def check_loader(loader, task, name):
    """Raises what Ultralytics' dataset would (a segment model on data
    without polygons), or TrainArgumentError where detfeed would train on
    other images than Ultralytics (images of formats it does not decode);
    closes the loader first."""
    why, unsupported = None, unsupported_images(loader)
    if task == "segment" and loader.dataset.task != "segment":
        why = ValueError("detfeed: a segment model needs a segment dataset: %s has no polygons "
                         "(a %s dataset)" % (name, loader.dataset.task))
    elif unsupported:
        why = TrainArgumentError(
            "detfeed: %s: %s; Ultralytics would train on them: convert them to JPEG, PNG, BMP, "
            "WebP, TIFF, JPEG 2000, AVIF or HEIF, or train with Ultralytics' loader" % (name, unsupported))
    if why is not None:
        loader.close()
        raise why


def unsupported_images(loader):
    """What the loader left out as images of formats detfeed does not decode
    (which Ultralytics reads with Pillow: a .avif, .heic or .heif holding
    another format), or None."""
    n = loader.dataset.stats()["unsupported"]
    if n == 0:
        return None
    files = [p.split(": unsupported image format")[0] for p in loader.dataset.problems()
             if ": unsupported image format" in p][:3]
    return "%d images of formats detfeed does not decode (%s%s)" % (
        n, ", ".join(os.path.basename(f) for f in files), ", ..." if n > len(files) else "")

def _threads(args, device, mode="train"):
    """Ultralytics' number of DataLoader workers, as threads (at least one);
    validation has twice the workers, as Ultralytics' trainer gives it."""
    nd = 0
    if device.type == "cuda":
        import torch
        nd = torch.cuda.device_count()
    workers = int(args.workers) * (2 if mode == "val" else 1)
    return max(min((os.cpu_count() or 1) // max(nd, 1), workers), 1)


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
    # Ultralytics' integer arguments take bools (True is 1 there); Loader
    # refuses a bool where a number is asked, so they are given as ints.
    seed, epochs, close_mosaic = (int(v) if isinstance(v, bool) else v
                                  for v in (args.seed, args.epochs, args.close_mosaic))
    settings = dict(imgsz=args.imgsz, batch=batch_size, workers=_threads(args, device),
                    seed=seed, epochs=epochs,
                    # Ultralytics closes mosaic at epoch epochs - close_mosaic: never
                    # for 0 or less, as detfeed's 0
                    close_mosaic=max(close_mosaic, 0) if isinstance(close_mosaic, int)
                    else close_mosaic,
                    split="train", tensors="torch", device=str(device) if cuda else "cpu",
                    value_scale="reciprocal" if cuda else "quotient", cache=_cache(args),
                    **_dataset_args(args, data, "train"),
                    drop_last=bool(args.compile), rect=bool(args.rect), **hyp)
    if settings["cache"] != "ram":
        # Ultralytics without cache="ram" draws mosaic partners from a buffer
        # of its recent images (min(n, batch * 8, 1000)): the same window.
        settings["partner_window"] = min(batch_size * 8, 1000)
    settings.update(options)
    source = _write_data_yaml(data, dataset_path, args, "train")
    try:
        loader = _open(source, settings, args)
        if settings["drop_last"] and len(loader) == 0:
            # Ultralytics drops a short last batch only when there are more
            # samples than one batch.
            loader.close()
            loader = _open(source, dict(settings, drop_last=False), args)
    finally:
        os.unlink(source)
    return loader, source


def _open(source, settings, args):
    """Loader(source, **settings); its error names the user's data, not the
    YAML written for the loader (removed once it is open)."""
    try:
        return Loader(source, **settings)
    except DetfeedError as e:
        raise DetfeedError(e.status, _user_message(str(e), source, args)) from None


def _user_message(text, source, args):
    """A message about the YAML written for the loader (`source`) as one
    about the user's: its name, and for "source:LINE:" the line of the
    user's YAML with the same key (train, val, names, ...), or no line where
    it has none (a packaged or downloaded dataset's YAML)."""
    import re
    name = str(args.data)
    try:
        with open(source, encoding="utf-8") as f:
            written = f.read().splitlines()
    except OSError:
        written = []
    try:
        with open(name, encoding="utf-8") as f:
            users = f.read().splitlines()
    except (OSError, UnicodeDecodeError):
        users = []

    def line_of(match):
        k = int(match.group(1))
        text = written[k - 1] if 0 < k <= len(written) else ""
        # an indented line (a names entry) belongs to the key above it
        while k > 1 and text[:1].isspace():
            k -= 1
            text = written[k - 1]
        key = text.split(":", 1)[0].strip()
        for n, line in enumerate(users, 1):
            if key and re.match(r"%s\s*:" % re.escape(key), line):
                return "%s:%d:" % (name, n)
        return "%s:" % name
    return re.sub(re.escape(source) + r":(\d+):", line_of, text).replace(source, name)


# trainer() keywords the validation loader takes too (the others concern
# training batches: colour route, dtype, disk cache file, partners).
_VAL_OPTIONS = ("prefetch", "pin_memory", "policy", "verify_record", "opencv", "opencv_cpu",
                "opencv_ipp", "ultralytics", "numpy", "numpy_sort", "nc", "max_width",
                "max_height", "max_pixels", "max_image_bytes", "max_labels",
                "max_label_line")


def build_val_loader(args, data, dataset_path, batch_size, device, options, passes=None):
    """ValidationLoader for the split Ultralytics validates on (dataset_path:
    its data[args.split]) with the batch size it gives validation, and the
    path of the dataset YAML it was given (removed since). passes: the
    validation passes it gives (default: a training run's); with passes=1
    (a validation of its own) its threads are args.workers, as Ultralytics'
    validator has them, not a trainer's twice that."""
    # The epochs of the loader are its validation passes (one per epoch with
    # val=True, else the last, and the final one): after each it starts
    # the next, as Ultralytics' workers go on to the next pass.
    if passes is None:
        passes, threads = (args.epochs if args.val else 1) + 1, _threads(args, device, "val")
    else:
        threads = _threads(args, device)
    settings = dict(imgsz=args.imgsz, batch=batch_size, workers=threads,
                    epochs=passes, augment=False, split="val", tensors="torch", device="cpu",
                    dtype="uint8", cache=_cache(args), rank=0, world_size=1,
                    **_dataset_args(args, data, "val"))
    settings.update({k: v for k, v in options.items() if k in _VAL_OPTIONS})
    source = _write_data_yaml(data, dataset_path, args, "val")
    try:
        loader = _open(source, settings, args)
    finally:
        os.unlink(source)
    return ValidationLoader(loader, args.task, device), source


def validator(val="detfeed", **loader_options):
    """A validator class for model.val(validator=...) (a validation of its
    own, as `yolo val` runs) whose batches come from detfeed.Loader: the
    letterboxed rectangles of Ultralytics' validation loader, byte for byte
    (see trainer()). val="ultralytics" keeps Ultralytics' loader; so does a
    validation detfeed cannot give the batches of, with a log line saying
    why (a model format that validates on squares, a stride above 32, a
    model of fewer classes than the data, as trainer() lists). Keywords: the
    Loader settings a validation loader takes (_VAL_OPTIONS)."""
    if val not in ("detfeed", "ultralytics"):
        raise ValueError("val must be 'detfeed' or 'ultralytics', not %r" % (val,))
    other = sorted(set(loader_options) - set(_VAL_OPTIONS))
    if other:
        raise TypeError("validator() got %s: validation batches take only %s"
                        % (", ".join(other), ", ".join(_VAL_OPTIONS)))
    settings = {"loader": dict(loader_options), "val": val}

    class DetfeedValidator:
        """Makes the Ultralytics validator of the model's task, with
        detfeed's validation loader."""

        def __new__(cls, dataloader=None, save_dir=None, args=None, _callbacks=None):
            from ultralytics.cfg import get_cfg
            task = (args or {}).get("task") or get_cfg().task
            return _validator_class(task)(settings, dataloader, save_dir, args, _callbacks)

    return DetfeedValidator


def _validator_class(task):
    if task not in TASKS:
        raise TrainArgumentError(
            "detfeed: task=%r is not supported (detfeed validates %s); validate it without "
            "detfeed's validator" % (task, ", ".join(TASKS)))
    from ultralytics.models import yolo
    base = {"detect": yolo.detect.DetectionValidator,
            "segment": yolo.segment.SegmentationValidator,
            "pose": yolo.pose.PoseValidator}[task]
    return type("Detfeed" + base.__name__, (_DetfeedValidatorMixin, base), {})


class _DetfeedValidatorMixin:
    """The detfeed parts of a task validator of its own (not a trainer's:
    that one gets the trainer's loader)."""

    def __init__(self, settings, dataloader, save_dir, args, _callbacks):
        self._detfeed_options, self._detfeed_val = settings["loader"], settings["val"]
        self._detfeed_loader = None
        super().__init__(dataloader, save_dir, args, _callbacks)

    def __call__(self, trainer=None, model=None):
        try:
            return super().__call__(trainer=trainer, model=model)
        finally:
            if self._detfeed_loader is not None:
                self._detfeed_loader.close()
                self._detfeed_loader = self.dataloader = None

    def get_dataloader(self, dataset_path, batch_size):
        from ultralytics.utils import LOGGER, colorstr
        why = "val=ultralytics" if self._detfeed_val == "ultralytics" else self._no_detfeed()
        if why is None:
            loader, source = build_val_loader(self.args, self.data, dataset_path, batch_size,
                                              self.device, self._detfeed_options, passes=1)
            why = unsupported_images(loader.loader)
            if self.args.task == "detect" and loader.dataset.task == "segment":
                why = ("detfeed orders a segment dataset's instances by mask area, Ultralytics' "
                       "detect dataset keeps the label files' order")
            if why is None:
                log_loader(loader.loader, {source: str(self.args.data)}, mode="val")
                self._detfeed_loader = loader
                return loader
            loader.close()
        LOGGER.info("%sdetfeed: validation through Ultralytics' loader: %s"
                    % (colorstr("val: "), why))
        return super().get_dataloader(dataset_path, batch_size)

    def _no_detfeed(self):
        """Why detfeed cannot give this validation's batches, or None."""
        if not self.args.rect:
            return "this model format validates on square images (rect=False)"
        stride = self.stride
        stride = max(int(stride.max() if hasattr(stride, "max") else stride), 32)
        if stride != 32:
            return "the model's stride is %d (detfeed's rect shapes are multiples of 32)" % stride
        if self.names and len(self.names) < self.data["nc"]:
            return ("the model has %d classes, the data %d (Ultralytics leaves out the labels of "
                    "the others)" % (len(self.names), self.data["nc"]))
        return None


class ValidationLoader:
    """What Ultralytics' trainer and validators use of a validation
    DataLoader, over a detfeed.Loader of validation batches (`loader`):
    len(), iteration (one pass: the batches Ultralytics' collate_fn makes,
    same keys, dtypes and bytes; for segment also sem_masks, for detect no
    keypoints), batch_size, num_workers, drop_last, sampler (the positions
    0..n-1), dataset (im_files and labels in batch order, as Ultralytics'
    rect dataset holds them) and close(). The images are the loader's
    buffer until the next batch is taken; on a CUDA device the next batch
    is taken only after the work queued on the current stream (the
    validator's copy of the images) is done."""

    def __init__(self, loader, task, device):
        self.loader = loader
        self.dataset = ValidationDataset(loader.dataset, loader.rect_order)
        self.batch_size = min(loader.batch_size, len(self.dataset))  # as build_dataloader
        self.num_workers = loader.num_workers
        self.drop_last = False
        self.sampler = range(len(self.dataset))
        self._task = task
        self._device = device if device.type == "cuda" else None

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        import torch
        epoch = iter(self.loader)
        while True:
            if self._device is not None:
                # The slots are page-locked: the validator's copy of the last
                # batch may still be running when the next one is taken
                # (which lets the workers refill its slot).
                torch.cuda.current_stream(self._device).synchronize()
            batch = next(epoch, None)
            if batch is None:
                return
            if self._task == "detect":
                batch.pop("keypoints", None)  # a pose dataset's: Ultralytics' detect has none
            yield batch

    def reset(self):
        """For the trainer: nothing to rebuild."""

    def close(self):
        """Closes the detfeed loader (its worker threads and memory)."""
        self.loader.close()


class ValidationDataset:
    """A validation loader's dataset in the order its batches take the
    images (Ultralytics' rect dataset is reordered so): len(), im_files and
    labels (the detfeed Dataset's, reordered); the rest is the detfeed
    Dataset's (names, task, kpt_shape, stats(), problems())."""

    def __init__(self, dataset, order):
        self._dataset, self._order = dataset, [int(i) for i in order]
        self.im_files = [dataset.im_files[i] for i in self._order]

    def __len__(self):
        return len(self._order)

    @property
    def labels(self):
        labels = self._dataset.labels
        return [labels[i] for i in self._order]

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_dataset", "_order"):
            raise AttributeError(name)
        return getattr(self._dataset, name)


def _write_data_yaml(data, dataset_path, args, split):
    """The split ("train" or "val") as Ultralytics resolved it, in a dataset
    YAML of absolute paths (removed once the loader has indexed it)."""
    import json
    paths = dataset_path if isinstance(dataset_path, (list, tuple)) else [dataset_path]
    lines = ["path: " + json.dumps(os.path.abspath(str(data.get("path", "."))), ensure_ascii=False),
             split + ": [" + ", ".join(json.dumps(os.path.abspath(str(p)), ensure_ascii=False)
                                       for p in paths) + "]"]
    names = data["names"]  # single_cls: {0: "item"} (the library checks no id then)
    names = names if isinstance(names, dict) else dict(enumerate(names))
    lines.append("names:")
    lines += ["  %d: %s" % (int(k), json.dumps(str(v), ensure_ascii=False))
              for k, v in sorted(names.items())]
    if data.get("kpt_shape") is not None:  # a detect model keeps the boxes of pose labels
        lines.append("kpt_shape: %s" % json.dumps(list(data["kpt_shape"])))
        if data.get("flip_idx") is not None:
            lines.append("flip_idx: %s" % json.dumps(list(data["flip_idx"])))
    fd, path = tempfile.mkstemp(prefix="detfeed-data-", suffix=".yaml")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def log_loader(loader, aliases, mode="train", seen=None):
    """One line for detfeed (route, worker threads, cache) and one for its
    dataset scan, with each problem it found, as Ultralytics logs its own
    (the YAML written for the loader named as the user's data): a warning,
    or information for what a setting of the user's did (fraction,
    classes). A line in `seen` (a set the trainer keeps: its training and
    validation data may be the same files) is not logged again."""
    from ultralytics.utils import LOGGER, colorstr
    prefix = colorstr("%s: " % mode)
    if mode == "val":
        LOGGER.info("%sdetfeed %s: validation batches (letterboxed rectangles, uint8) in %s "
                    "memory, %d worker threads, %s"
                    % (prefix, lib.version(), loader.device, loader.num_workers,
                       _cache_summary(loader.cache_stats())))
    else:
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
    seen = set() if seen is None else seen
    for line, kind in zip(loader.dataset.problems(), loader.dataset.problem_kinds()):
        for path, name in aliases.items():
            line = line.replace(path, name)
        if line in seen:
            continue
        seen.add(line)
        (LOGGER.info if kind == "setting" else LOGGER.warning)("%s%s" % (prefix, line))


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


def _dataset_args(args, data, split):
    """single_cls, classes and fraction as Ultralytics' dataset of that
    split takes them (validation: the fraction of args.split)."""
    from ultralytics.data.utils import get_split_fraction
    fraction = 1.0 if data.get("complete") else get_split_fraction(
        args.fraction, "train" if split == "train" else args.split)
    out = {"single_cls": int(bool(args.single_cls)),
           "fraction": str(fraction) if isinstance(fraction, int) else repr(float(fraction))}
    if args.classes is not None:
        classes = args.classes if isinstance(args.classes, (list, tuple)) else [args.classes]
        out["classes"] = ",".join(str(int(c)) for c in classes)
    return out
