"""Training an Ultralytics model with detfeed's loader.

    from ultralytics import YOLO
    import detfeed.ultralytics

    trainer = detfeed.ultralytics.trainer(color="device")   # or "worker"
    YOLO("yolov8n.yaml").train(data="coco128.yaml", epochs=3, trainer=trainer)

The training batches come from detfeed.Loader with the trainer's own
settings (data, imgsz, batch, workers, seed, epochs, close_mosaic and the
augmentation hyperparameters), on the trainer's device; validation keeps
Ultralytics' loader, so the metrics are computed as always. Images arrive as
floats already divided by 255, so preprocess_batch does not divide again.
Ultralytics is imported when trainer() is called, never before.
"""
from .loader import Loader

# The trainer arguments that are detfeed hyperparameters (same names).
HYPERPARAMETERS = ("hsv_h", "hsv_s", "hsv_v", "degrees", "translate", "scale", "shear",
                   "perspective", "flipud", "fliplr", "mosaic", "mixup", "bgr")


def trainer(color="worker", dtype="float32", cache="ram", base=None, **loader_options):
    """An Ultralytics trainer class (for model.train(trainer=...)) whose training
    batches come from detfeed. color: "worker" or "device"; dtype: the image
    dtype handed to the model (float32, float16, bfloat16); cache: "ram",
    "none" or bytes; base: the trainer class to extend (default: the
    detection trainer); further keywords go to detfeed.Loader."""
    if base is None:
        from ultralytics.models.yolo.detect import DetectionTrainer as base
    import torch

    class DetfeedTrainer(base):
        """{base} with detfeed's training loader."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.add_callback("on_train_epoch_start", _sync_epoch)

        def get_dataloader(self, dataset_path, batch_size=16, rank=0, mode="train"):
            if mode != "train":
                return super().get_dataloader(dataset_path, batch_size, rank, mode)
            a = self.args
            if getattr(a, "multi_scale", 0):
                raise ValueError("detfeed: multi_scale is not supported")
            hyp = {k: getattr(a, k) for k in HYPERPARAMETERS if hasattr(a, k)}
            device = str(self.device) if self.device.type == "cuda" else "cpu"
            # Detection reads the split as Ultralytics resolved it; pose and
            # segment need the YAML (kpt_shape, flip_idx).
            source = dataset_path if a.task == "detect" else str(a.data)
            return Loader(source, imgsz=a.imgsz, batch=batch_size, workers=a.workers or None,
                          seed=a.seed, epochs=self.epochs, close_mosaic=a.close_mosaic,
                          device=device, color=color, dtype=dtype, cache=cache, split="train",
                          tensors="torch", **hyp, **loader_options)

        def preprocess_batch(self, batch):
            img = batch["img"]
            if not isinstance(img, torch.Tensor) or not img.is_floating_point():
                return super().preprocess_batch(batch)  # Ultralytics' own batches
            cuda = self.device.type == "cuda"
            for k, v in batch.items():
                if isinstance(v, torch.Tensor):
                    batch[k] = v.to(self.device, non_blocking=cuda)
            batch["img"] = batch["img"].float()  # already code / 255
            return batch

    DetfeedTrainer.__doc__ = DetfeedTrainer.__doc__.format(base=base.__name__)
    return DetfeedTrainer


def _sync_epoch(tr):
    """Each epoch's batches are the trainer's epoch (resumed runs included)."""
    if isinstance(getattr(tr, "train_loader", None), Loader):
        tr.train_loader.set_epoch(tr.epoch)
