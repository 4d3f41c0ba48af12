"""detfeed.Loader: batches of a YOLO dataset as PyTorch tensors (or NumPy
arrays), made by libdetfeed's worker threads."""
import ctypes
import math
import os

import numpy as np

from . import stack as _stack_mod
from ._lib import DetfeedError, lib

try:  # PyTorch is optional: without it batches are NumPy arrays
    import torch
except ImportError:  # pragma: no cover - exercised where torch is missing
    torch = None

_DTYPES = {"uint8": 0, "u8": 0, "float32": 1, "f32": 1, "float16": 2, "f16": 2, "half": 2,
           "bfloat16": 3, "bf16": 3}
_DTYPE_NAMES = {0: "u8", 1: "f32", 2: "f16", 3: "bf16"}
_NP = {0: np.uint8, 1: np.float32, 2: np.float16, 3: np.uint16}  # bf16 bits as uint16
_TYPESTR = {0: "|u1", 1: "<f4", 2: "<f2", 3: "<u2"}
_TASKS = {0: "detect", 1: "segment", 2: "pose"}


def _torch_dtype(code):
    return {0: torch.uint8, 1: torch.float32, 2: torch.float16, 3: torch.bfloat16}[code]


class _CudaImages:
    """A batch's image tensor in device memory, for __cuda_array_interface__
    consumers (CuPy, Numba, torch.as_tensor). bf16 is exposed as uint16 bits."""

    def __init__(self, ptr, shape, code):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": _TYPESTR[code],
                                         "data": (ptr, False), "version": 3, "strides": None,
                                         "stream": None}


_STACK_KEYS = ("ultralytics", "numpy", "opencv", "opencv_cpu", "opencv_ipp")


def _stack(opencv, opencv_cpu, opencv_ipp, ultralytics, numpy):
    """The reference stack's settings: those given, and for the others what
    the installed cv2 and ultralytics packages are (the library's defaults,
    OpenCV 5.1 and Ultralytics 8.4, where a package is not installed)."""
    given = {"opencv": opencv, "opencv_cpu": opencv_cpu, "opencv_ipp": opencv_ipp,
             "ultralytics": ultralytics, "numpy": numpy}
    found = _stack_mod.detect() if any(v is None for v in given.values()) else {}
    out = {k: v for k, v in found.items() if given[k] is None}
    out.update({k: v for k, v in given.items() if v is not None})
    return out


def _ratio_pad(ori, rect, imgsz, ultralytics):
    """A validation image's ratio_pad as Ultralytics' LetterBox leaves it:
    load_image's (h, w) gains, times the letterbox ratio from 8.4 on, and
    the (left, top) padding, all in Python floats as Ultralytics has them."""
    h0, w0 = ori
    r = imgsz / max(h0, w0)
    h, w = h0, w0
    if r != 1:
        w, h = min(math.ceil(w0 * r), imgsz), min(math.ceil(h0 * r), imgsz)
    gain = (h / h0, w / w0)
    lr = min(min(rect[0] / h, rect[1] / w), 1.0)  # LetterBox with scaleup off
    unpad_w, unpad_h = max(round(w * lr), 1), max(round(h * lr), 1)
    left, top = round((rect[1] - unpad_w) / 2 - 0.1), round((rect[0] - unpad_h) / 2 - 0.1)
    if ultralytics == "8.3":
        return gain, (left, top)
    return (gain[0] * lr, gain[1] * lr), (left, top)


class _Sampler:
    """What the Ultralytics trainer asks of a DataLoader's sampler."""

    def __init__(self, loader):
        self._loader = loader

    def __len__(self):
        return self._loader._shard_size

    def set_epoch(self, epoch):
        self._loader.set_epoch(epoch)


class Dataset:
    """The dataset a loader reads, as the Ultralytics trainer looks at it:
    len(), im_files, and labels (per image: cls (n, 1), bboxes (n, 4)
    normalized xywh, and keypoints (n, K, 3) for pose: x, y and visibility,
    which Ultralytics adds as 0 or 1 for kpt_shape [K, 2] datasets), read
    from libdetfeed's index. kpt_shape is the YAML's (K, 2) or (K, 3)."""

    def __init__(self, ds):
        self._ds = ds
        self._labels = None
        n = lib.detfeed_dataset_class_count(ds)
        self.names = {k: lib.detfeed_dataset_class_name(ds, k).decode() for k in range(n)}
        self.task = _TASKS.get(lib.detfeed_dataset_task(ds), "detect")
        k, d = ctypes.c_int(0), ctypes.c_int(0)
        lib.detfeed_dataset_kpt_shape(ds, ctypes.byref(k), ctypes.byref(d))
        self.kpt_shape = (k.value, d.value) if k.value else None
        self.im_files = [lib.detfeed_dataset_image_path(ds, i).decode() for i in range(len(self))]

    def __len__(self):
        return lib.detfeed_dataset_size(self._ds)

    @property
    def labels(self):
        if self._labels is None:
            self._labels = [self._image_labels(i) for i in range(len(self))]
        return self._labels

    def _image_labels(self, i):
        n = max(lib.detfeed_dataset_instance_count(self._ds, i), 0)
        cls = np.zeros((n, 1), np.float32)
        box = np.zeros((n, 4), np.float32)
        # The library writes K x 3 (x, y, visibility) for K x 2 datasets too.
        kpt = np.zeros((n, self.kpt_shape[0], 3), np.float32) if self.kpt_shape else None
        lib.detfeed_dataset_labels(self._ds, i, cls.ctypes.data, box.ctypes.data,
                                   kpt.ctypes.data if kpt is not None else None)
        lab = {"im_file": self.im_files[i], "cls": cls, "bboxes": box, "normalized": True,
               "bbox_format": "xywh"}
        if kpt is not None:
            lab["keypoints"] = kpt
        return lab


class Loader:
    """Batches of a YOLO dataset, augmented as Ultralytics trains (mosaic,
    random affine, HSV colour, flips), with deterministic randomness.

    Loader(data, imgsz=640, batch=16, workers=None, color="worker",
           device="cpu", dtype="float32", seed=0, cache="ram", rank=None,
           world_size=None, augment=True, epochs=100, close_mosaic=10,
           prefetch=4, drop_last=False, split=None, policy="skip",
           value_scale="quotient", tensors=None, **hyperparameters)

    data: a dataset YAML, an images/ + labels/ folder, or a text file of
    image paths. workers: threads (default: the CPUs this process may use).
    color: "worker" colours in the worker threads; "device" leaves it to the
    CUDA kernel that converts the batch (CUDA output of a float dtype in
    training; otherwise the worker route runs and `route_note` says why).
    device: "cpu" (host memory), "cuda" or "cuda:N" (device memory; falls
    back to host memory with a warning where there is no CUDA device).
    dtype: uint8 (codes), float32, float16 or bfloat16 (code / 255).
    cache: "ram" (every image decoded once), "none", or a byte budget.
    rank, world_size: this process's shard (DistributedSampler semantics);
    taken from torch.distributed when a process group is up, else 0 and 1.
    augment: False gives validation batches (letterbox, rect shapes).
    split: "train", "val" or "test" of a YAML (default: train, or val when
    augment is False). tensors: "torch" or "numpy" (default: torch when it
    can be imported). Further keywords are Ultralytics hyperparameters
    (hsv_h, hsv_s, hsv_v, degrees, translate, scale, shear, perspective,
    flipud, fliplr, mosaic, mixup, bgr).

    Iterating gives one epoch: dicts with Ultralytics' batch keys: img
    (B x 3 x H x W, RGB), cls (N x 1), bboxes (N x 4, normalized xywh),
    batch_idx (N), im_file, ori_shape, resized_shape, and keypoints
    (N x K x 3, also for kpt_shape [K, 2] datasets, as Ultralytics carries
    them) or masks (B x H/4 x W/4) where the task has them. img is not
    a copy: it is the loader's buffer, valid until the next batch is taken
    (clone it to keep it). On CUDA it is ordered before the work later queued
    on the stream that was current when the batch was taken. Epochs count
    up from 0 by themselves; set_epoch() sets the next one.
    """

    def __init__(self, data, imgsz=640, batch=16, workers=None, color="worker", device="cpu",
                 dtype="float32", seed=0, cache="ram", rank=None, world_size=None, augment=True,
                 epochs=100, close_mosaic=10, prefetch=4, drop_last=False, split=None,
                 policy="skip", value_scale="quotient", tensors=None, opencv=None,
                 opencv_cpu=None, opencv_ipp=None, ultralytics=None, numpy=None, **hyp):
        self._h = ctypes.c_void_p()
        self._held = None
        self._status(lib.detfeed_loader_create(ctypes.byref(self._h), 0), "create")
        if tensors is None:
            tensors = "torch" if torch is not None else "numpy"
        if tensors not in ("torch", "numpy") or (tensors == "torch" and torch is None):
            raise ValueError("tensors must be 'numpy', or 'torch' with PyTorch installed")
        self.tensors = tensors
        if dtype not in _DTYPES and not (torch is not None and isinstance(dtype, torch.dtype)):
            raise ValueError("dtype must be one of %s" % ", ".join(sorted(_DTYPES)))
        self._dtype = _DTYPES[str(dtype).replace("torch.", "")]
        cuda, index = _parse_device(device)
        if rank is None and world_size is None:
            rank, world_size = _dist_rank()
        rank, world_size = int(rank or 0), int(world_size or 1)
        if not 0 <= rank < world_size:
            raise ValueError("rank %d is not in [0, world_size %d)" % (rank, world_size))
        if color not in ("worker", "device"):
            raise ValueError("color must be 'worker' or 'device'")
        if value_scale not in ("quotient", "reciprocal"):
            raise ValueError("value_scale must be 'quotient' or 'reciprocal'")
        if policy not in ("skip", "fail"):
            raise ValueError("policy must be 'skip' or 'fail'")
        self.batch_size, self.drop_last, self.rank, self.world_size = batch, drop_last, rank, world_size
        self._epochs = epochs
        self.num_workers = workers or len(os.sched_getaffinity(0))
        settings = {"imgsz": imgsz, "batch": batch, "workers": self.num_workers, "seed": seed,
                    "epochs": epochs, "close_mosaic": close_mosaic, "prefetch": prefetch,
                    "drop_last": int(drop_last), "augment": int(augment), "rank": rank,
                    "world_size": world_size, "dtype": _DTYPE_NAMES[self._dtype],
                    "value_scale": value_scale, "output": "cuda" if cuda else "host",
                    "color": color, "cuda_device": index,
                    "cache_bytes": _cache_bytes(cache)}
        settings.update(_stack(opencv, opencv_cpu, opencv_ipp, ultralytics, numpy))
        self._imgsz, self._augment = imgsz, bool(augment)
        self._ultralytics = str(settings.get("ultralytics", "8.4"))
        # The reference stack in effect: what was given or found installed
        # (settings not listed keep the library's defaults).
        self.stack = {k: str(settings[k]) for k in _STACK_KEYS if k in settings}
        for name, value in list(settings.items()) + list(hyp.items()):
            self._set(name, value)
        split = split or ("train" if augment else "val")
        self._status(lib.detfeed_loader_set_split(self._h, split.encode()), "split")
        self._status(lib.detfeed_loader_set_policy(self._h, int(policy == "fail")), "policy")
        self._status(lib.detfeed_loader_open(self._h, os.fsencode(data)), "open")
        ds = lib.detfeed_loader_dataset(self._h)
        self.dataset = Dataset(ds)
        if not augment:
            self._set_rect_order(ds)
        self._shard_size = lib.detfeed_shard_size(len(self.dataset), rank, world_size)
        self.sampler = _Sampler(self)
        self.epoch, self._epoch_set = 0, False
        self._cuda_index = index if cuda else None
        # The route is known once the batches exist: start epoch 0 now, so
        # that a fallback is reported before the first batch.
        self._status(lib.detfeed_loader_start(self._h, 0), "start")
        self._started = 0
        out, route, why = ctypes.c_int(), ctypes.c_int(), ctypes.c_char_p()
        lib.detfeed_loader_route(self._h, ctypes.byref(out), ctypes.byref(route),
                                 ctypes.byref(why))
        self.device = "cuda:%d" % index if out.value == 1 else "cpu"
        self.color = "device" if route.value == 1 else "worker"
        self.route_note = why.value.decode() if why.value else None
        if self.route_note and (cuda or color == "device"):
            import warnings
            warnings.warn("detfeed: %s: batches in %s memory, colour in the %s" % (
                self.route_note, "device" if out.value else "host", self.color), stacklevel=2)

    # -- settings and errors -------------------------------------------------
    def _status(self, rc, what):
        if rc < 0:
            msg = lib.detfeed_loader_last_error(self._h).decode() if self._h else ""
            raise DetfeedError(rc, "detfeed %s: %s" % (what, msg or lib.detfeed_strerror(rc).decode()))
        return rc

    def _set(self, name, value):
        param = ctypes.c_int()
        if lib.detfeed_loader_param_parse(name.encode(), ctypes.byref(param)) != 0:
            raise TypeError("Loader got an unknown setting %r" % name)
        if isinstance(value, bool):
            value = int(value)
        if lib.detfeed_loader_set(self._h, name.encode(), str(value).encode()) < 0:
            raise ValueError("detfeed: %s" % lib.detfeed_loader_last_error(self._h).decode())

    def _set_rect_order(self, ds):
        """Validation: the order Ultralytics' NumPy argsort gives (ties among
        equal aspect ratios are not in dataset order there)."""
        n = lib.detfeed_dataset_size(ds)
        h, w = ctypes.c_int(), ctypes.c_int()
        hs, ws = np.empty(n, np.int64), np.empty(n, np.int64)
        for i in range(n):
            lib.detfeed_dataset_image_size(ds, i, ctypes.byref(w), ctypes.byref(h))
            hs[i], ws[i] = h.value, w.value
        order = np.ascontiguousarray(_stack_mod.rect_order(hs, ws))
        self._status(lib.detfeed_loader_set_rect_order(self._h, order.ctypes.data, n),
                     "validation order")

    # -- the DataLoader surface ---------------------------------------------
    def __len__(self):
        return lib.detfeed_loader_batch_count(self._h)

    def set_epoch(self, epoch):
        """Sets the epoch the next iteration runs (its order, recipes, and
        whether mosaic is on: off in the last close_mosaic epochs)."""
        self.epoch, self._epoch_set = int(epoch), True

    def reset(self):
        """For the Ultralytics trainer: nothing to rebuild (mosaic closes by
        itself in the last close_mosaic epochs)."""

    def __iter__(self):
        self._check_open()
        self._release_held()
        epoch = self.epoch
        if self._started != epoch:
            self._status(lib.detfeed_loader_start(self._h, epoch), "start")
        self._started = None  # an epoch runs once per start
        self._epoch_set = False
        b = ctypes.c_void_p()
        while True:
            self._release_held()
            self._set_stream()
            rc = lib.detfeed_loader_next(self._h, ctypes.byref(b))
            if rc == 1:
                break
            self._status(rc, "batch")
            self._held = b.value
            yield self._batch(b.value)
        if not self._epoch_set:
            self.epoch = epoch + 1
        if self.epoch < self._epochs:  # the workers start on it while the consumer validates
            self._status(lib.detfeed_loader_start(self._h, self.epoch), "start")
            self._started = self.epoch

    def close(self):
        """Frees the loader (threads, slots, device buffers). Batches taken
        from it must not be used afterwards."""
        if getattr(self, "_h", None) and self._h.value:
            lib.detfeed_loader_destroy(self._h)
            self._h = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    @property
    def skipped(self):
        """Samples replaced under the skip policy so far, and the first one's message."""
        first = ctypes.c_char_p()
        n = lib.detfeed_loader_skipped(self._h, ctypes.byref(first))
        return n, first.value.decode() if first.value else None

    # -- batches --------------------------------------------------------------
    def _check_open(self):
        if not self._h.value:
            raise DetfeedError(-9, "detfeed: the loader is closed")

    def _release_held(self):
        if self._held is not None:
            self._set_stream()  # its buffer is reused after the work queued so far
            lib.detfeed_loader_release(self._h, self._held)
            self._held = None

    def _set_stream(self):
        if self._cuda_index is not None and torch is not None and torch.cuda.is_available():
            s = torch.cuda.current_stream(self._cuda_index).cuda_stream
            lib.detfeed_loader_set_cuda_stream(self._h, s)

    def _batch(self, b):
        h, w = ctypes.c_int(), ctypes.c_int()
        n = lib.detfeed_batch_size(b, ctypes.byref(h), ctypes.byref(w))
        shape = (n, 3, h.value, w.value)
        out = {"img": self._images(b, shape)}
        k = lib.detfeed_batch_instances(b)
        out["cls"] = self._floats(lib.detfeed_batch_cls(b), (k, 1))
        out["bboxes"] = self._floats(lib.detfeed_batch_bboxes(b), (k, 4))
        out["batch_idx"] = self._floats(lib.detfeed_batch_batch_idx(b), (k,))
        if self.dataset.kpt_shape:  # x, y, visibility: K x 3 whatever the YAML's ndim
            out["keypoints"] = self._floats(lib.detfeed_batch_keypoints(b),
                                            (k, self.dataset.kpt_shape[0], 3))
        mh, mw = ctypes.c_int(), ctypes.c_int()
        masks = lib.detfeed_batch_masks(b, ctypes.byref(mh), ctypes.byref(mw))
        if masks:
            out["masks"] = self._array(masks, (n, mh.value, mw.value), np.uint8)
        out["im_file"] = tuple(lib.detfeed_batch_im_file(b, i).decode() for i in range(n))
        ori, res = (ctypes.c_int * 2)(), (ctypes.c_int * 2)()
        shapes = []
        for i in range(n):
            lib.detfeed_batch_shapes(b, i, ori, res)
            shapes.append(((ori[0], ori[1]), (res[0], res[1])))
        out["ori_shape"] = tuple(s[0] for s in shapes)
        out["resized_shape"] = tuple(s[1] for s in shapes)
        if not self._augment:  # what Ultralytics' validators read
            out["ratio_pad"] = tuple(_ratio_pad(o, (h.value, w.value), self._imgsz,
                                                self._ultralytics) for o, _ in shapes)
        return out

    def _images(self, b, shape):
        size = ctypes.c_size_t()
        dev = lib.detfeed_batch_cuda_images(b, ctypes.byref(size))
        if dev:
            cai = _CudaImages(dev, shape, self._dtype)
            if self.tensors == "numpy" or torch is None:
                return cai
            t = torch.as_tensor(cai, device="cuda:%d" % self._cuda_index)
            return t.view(torch.bfloat16) if self._dtype == 3 else t
        host = lib.detfeed_batch_images(b, ctypes.byref(size))
        arr = np.ctypeslib.as_array((ctypes.c_uint8 * size.value).from_address(host))
        arr = arr.view(_NP[self._dtype]).reshape(shape)
        if self.tensors == "numpy":
            return arr
        t = torch.from_numpy(arr)
        return t.view(torch.bfloat16) if self._dtype == 3 else t

    def _array(self, ptr, shape, dtype):
        count = int(np.prod(shape))
        if count == 0:
            a = np.zeros(shape, dtype)
        else:
            c = np.ctypeslib.as_array(
                (ctypes.c_uint8 * (count * np.dtype(dtype).itemsize)).from_address(ptr))
            a = c.view(dtype).reshape(shape).copy()  # labels are small: a copy of its own
        return torch.from_numpy(a) if self.tensors == "torch" else a

    def _floats(self, ptr, shape):
        return self._array(ptr, shape, np.float32)


def _parse_device(device):
    """(cuda?, index) from "cpu", "cuda", "cuda:N", an int or a torch.device."""
    if torch is not None and isinstance(device, torch.device):
        device = str(device)
    if isinstance(device, int):
        return True, device
    device = str(device)
    if device == "cpu":
        return False, 0
    if device == "cuda":
        if torch is not None and torch.cuda.is_available():
            return True, torch.cuda.current_device()
        return True, 0
    if device.startswith("cuda:") and device[5:].isdigit():
        return True, int(device[5:])
    raise ValueError("device must be 'cpu', 'cuda' or 'cuda:N', not %r" % device)


def _dist_rank():
    """(rank, world_size) of a torch.distributed process group that is up."""
    if torch is not None and torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


def _cache_bytes(cache):
    if cache in ("ram", True):
        return 1 << 50
    if cache in ("none", None, False):
        return 0
    if isinstance(cache, int) and cache >= 0:
        return cache
    raise ValueError("cache must be 'ram', 'none' or a byte count")
