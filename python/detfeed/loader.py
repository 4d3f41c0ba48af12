"""detfeed.Loader: batches of a YOLO dataset as PyTorch tensors (or NumPy
arrays), made by libdetfeed's worker threads."""
import ctypes
import importlib.util
import math
import numbers
import operator
import os
import sys
import threading
import weakref

import numpy as np

from . import _lib, _progress
from . import stack as _stack_mod
from ._lib import (EBADSTATE, MASK_I32, NEXT_END, NEXT_TIMEOUT, OUTPUT_CUDA, POLICY_FAIL,
                   POLICY_SKIP, ROUTE_DEVICE, ROUTE_RECIPE, DetfeedError, lib)

try:  # PyTorch is optional: without it batches are NumPy arrays
    import torch
except ImportError:  # pragma: no cover - exercised where torch is missing
    torch = None

# The array interface's type of each dtype (by the library's short name);
# bf16 is exposed as its uint16 bits.
_TYPESTR = {"u8": "|u1", "f32": "<f4", "f16": "<f2", "bf16": "<u2"}
# While waiting for a batch, the library is asked again every _SLICE_MS so
# that Python's signal handlers (Ctrl-C) run in between.
_SLICE_MS = 20


def _damage_line(disk, k):
    """Line k on the images the disk cache found damaged, or None."""
    buf = ctypes.create_string_buffer(4096)
    if lib.detfeed_disk_cache_damage(disk, k, buf, len(buf)) != 0:
        return None
    return buf.value.decode(errors="replace")


class _Handle:
    """The C loader. Everything that points into its memory holds this: the
    Loader until close(), a live iterator, and each batch's image array or
    tensor (through its base); the last of them to go destroys the loader.
    In a forked child it is never destroyed: the worker threads that
    destroying would join do not exist there, so the child leaks it."""

    def __init__(self):
        self.ptr = ctypes.c_void_p()
        self.pid = os.getpid()
        self.closed = False
        # held for __del__, which may run when module globals are gone
        self._destroy = lib.detfeed_loader_destroy

    def forked(self):
        return os.getpid() != self.pid

    def __del__(self, _getpid=os.getpid):
        if self.ptr.value and _getpid() == self.pid:
            self._destroy(self.ptr)
        self.ptr.value = None


class _HostImages:
    """A batch's image tensor in host memory as NumPy sees it; the base of
    the array (and of a tensor made from it), holding the loader's memory."""

    def __init__(self, ptr, shape, code, owner):
        self.__array_interface__ = {"shape": shape, "typestr": _TYPESTR[code],
                                    "data": (ptr, False), "version": 3}
        self._owner = owner


class _CudaImages:
    """A batch's image tensor in device memory, for __cuda_array_interface__
    consumers (CuPy, Numba, torch.as_tensor, which keeps this object, and so
    the loader's memory, alive). bf16 is exposed as uint16 bits."""

    def __init__(self, ptr, shape, code, owner):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": _TYPESTR[code],
                                         "data": (ptr, False), "version": 3, "strides": None,
                                         "stream": None}
        self._owner = owner


def _closed_error(what="the loader is closed"):
    return DetfeedError(EBADSTATE, "detfeed: %s" % what)


def _fork_error(handle):
    return DetfeedError(EBADSTATE, (
        "detfeed: this Loader was created in process %d and is used in process %d, a fork "
        "of it (a DataLoader worker?): its worker threads do not survive fork(), so it "
        "cannot make batches here. Iterate it in the process that created it (it has "
        "worker threads of its own: use it in place of a torch DataLoader, or wrap it with "
        "num_workers=0), or create the Loader in the process that iterates it."
    ) % (handle.pid, os.getpid()))


class _Epoch:
    """One epoch's batches: what iter(loader) returns. It starts the epoch
    at its first next() (so an iterator made and dropped unused, as the
    Ultralytics trainer does, holds nothing); from then on it is the
    loader's one live iterator until the epoch's end, its close(), or its
    garbage collection. An exception while it waits for a batch
    (KeyboardInterrupt) leaves it where it was: nothing was taken."""

    def __init__(self, loader, handle):
        self._loader, self._handle = loader, handle
        self._epoch = None  # the epoch it runs, from its first next()
        self._done = False

    def __iter__(self):
        return self

    def __next__(self):
        loader = self._loader
        if self._done or loader is None:
            raise StopIteration
        # One thread at a time takes batches (the library's consumer side
        # is one thread's): another thread's next() waits for this one.
        with loader._consumer:
            if self._done:  # ended by the thread that had the lock
                raise StopIteration
            try:
                if self._epoch is None:
                    self._epoch = loader._begin(self)
                batch = loader._next_batch(self._handle)
            except DetfeedError:
                self.close()  # the epoch failed, or the loader is closed
                raise
            if batch is None:
                self.close()
                loader._end_epoch(self._epoch)
                raise StopIteration
            return batch

    def close(self):
        """Ends the iteration; the loader's next one runs the epoch again
        (unless it was over, or set_epoch chose another)."""
        self._done = True
        self._loader = self._handle = None


_STACK_KEYS = ("ultralytics", "numpy", "numpy_sort", "opencv", "opencv_cpu", "opencv_ipp")


def _stack(opencv, opencv_cpu, opencv_ipp, ultralytics, numpy, numpy_sort):
    """The reference stack's settings: those given, and for the others what
    the installed cv2, ultralytics and numpy packages are (the library's
    defaults, OpenCV 5.1 and Ultralytics 8.4, where a package is not
    installed)."""
    given = {"opencv": opencv, "opencv_cpu": opencv_cpu, "opencv_ipp": opencv_ipp,
             "ultralytics": ultralytics, "numpy": numpy, "numpy_sort": numpy_sort}
    found = _stack_mod.detect() if any(v is None for v in given.values()) else {}
    out = {k: v for k, v in found.items() if given[k] is None}
    out.update({k: v for k, v in given.items() if v is not None})
    return out


def _load_gains(ori, imgsz):
    """load_image's size for an image of (h, w) `ori` and its (h, w) gains,
    the training ratio_pad of a Mosaic sample, in Python floats as
    Ultralytics has them."""
    h0, w0 = ori
    r = imgsz / max(h0, w0)
    h, w = h0, w0
    if r != 1:
        w, h = min(math.ceil(w0 * r), imgsz), min(math.ceil(h0 * r), imgsz)
    return (h, w), (h / h0, w / w0)


def sem_masks(masks, cls, batch_idx):
    """Per image the class of the instance each mask pixel belongs to
    (float32, B x H/4 x W/4), as Ultralytics' Format makes sem_masks from
    overlapping masks: cls[mask - 1], so that a pixel of no instance takes
    the image's last instance's class; zeros for an image without one.
    NumPy arrays or torch tensors (the result is of the same kind)."""
    is_np = isinstance(masks, np.ndarray)
    m = masks if is_np else masks.cpu().numpy()
    c = (cls if is_np else cls.cpu().numpy()).reshape(-1)
    idx = batch_idx if is_np else batch_idx.cpu().numpy()
    out = np.zeros(m.shape, np.float32)
    for i in range(m.shape[0]):
        ci = c[idx == i]
        if ci.size:
            out[i] = ci[m[i].astype(np.int64) - 1]
    return out if is_np else torch.from_numpy(out).to(masks.device)


def _batch_ratio_pad(ori_shapes, resized_shapes, imgsz, ultralytics, train):
    """A batch's ratio_pad: in training load_image's (h, w) gains, which
    Ultralytics' training transforms leave as they are; in validation the
    LetterBox's (see _ratio_pad)."""
    if train:
        return tuple(_load_gains(o, imgsz)[1] for o in ori_shapes)
    return tuple(_ratio_pad(o, r, imgsz, ultralytics)
                 for o, r in zip(ori_shapes, resized_shapes))


def _rect_shapes(resized_shapes):
    """Rect training: each image's batch shape (h, w), the int64 arrays
    Ultralytics' rect dataset adds as rect_shape (detfeed makes each
    sample at its batch's shape)."""
    return tuple(np.array(r, np.int64) for r in resized_shapes)


def _ratio_pad(ori, rect, imgsz, ultralytics):
    """A validation image's ratio_pad as Ultralytics' LetterBox (scaleup
    off) to `rect` (h, w) leaves it: load_image's (h, w) gains, times the
    letterbox ratio from 8.4 on, and the (left, top) padding, all in Python
    floats as Ultralytics has them."""
    (h, w), gain = _load_gains(ori, imgsz)
    lr = min(min(rect[0] / h, rect[1] / w), 1.0)
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
    len(), im_files, and labels (per image: shape (h, w) of the image,
    cls (n, 1), bboxes (n, 4)
    normalized xywh, and keypoints (n, K, 3) for pose: x, y and visibility,
    which Ultralytics adds as 0 or 1 for kpt_shape [K, 2] datasets), read
    from libdetfeed's index. kpt_shape is the YAML's (K, 2) or (K, 3).
    root and root_rule: a YAML's dataset root as check_det_dataset resolves
    it and the rule that found it, in words (None for a folder or list).

    The index belongs to the loader: once the loader is closed (or garbage
    collected), labels raise DetfeedError ("... the loader is closed");
    len(), im_files, names, task and kpt_shape stay (plain values)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("detfeed.Dataset is not made directly: a Loader makes it (read "
                        "loader.dataset)")

    @classmethod
    def _of(cls, ds, owner):
        """The dataset at the library's pointer `ds`, whose memory `owner`
        (the loader's handle) keeps."""
        self = cls.__new__(cls)
        self._init(ds, owner)
        return self

    def _init(self, ds, owner):
        self._ptr = ds
        self._owner = weakref.ref(owner) if owner is not None else None
        self._labels = None
        self._n = lib.detfeed_dataset_size(ds)
        n = lib.detfeed_dataset_class_count(ds)
        self.names = {k: lib.detfeed_dataset_class_name(ds, k).decode(errors="replace")
                      for k in range(n)}
        task = lib.detfeed_dataset_task(ds)
        self.task = _lib.TASKS[task] if 0 <= task < len(_lib.TASKS) else "detect"
        k, d = ctypes.c_int(0), ctypes.c_int(0)
        lib.detfeed_dataset_kpt_shape(ds, ctypes.byref(k), ctypes.byref(d))
        self.kpt_shape = (k.value, d.value) if k.value else None
        self.im_files = [os.fsdecode(lib.detfeed_dataset_image_path(ds, i))
                         for i in range(self._n)]
        # A YAML's root as check_det_dataset resolves it, and the rule that
        # found it ("path: coco8 under datasets_dir ... from ..."); None for
        # a folder or list.
        root, rule = lib.detfeed_dataset_root(ds), lib.detfeed_dataset_root_rule(ds)
        self.root = os.fsdecode(root) if root else None
        self.root_rule = os.fsdecode(rule) if rule else None

    def __reduce__(self):
        raise TypeError("detfeed.Dataset cannot be pickled: it reads the index of the "
                        "Loader that made it, in that process; pickle what you need of "
                        "it (im_files, names, labels as arrays) instead")

    def _acquire(self):
        """The loader's handle (held while the caller reads), or the closed error."""
        if self._owner is None:
            return None
        h = self._owner()
        if h is None or h.closed:
            raise _closed_error("the dataset cannot be read any more: the loader is closed")
        return h

    def __len__(self):
        return self._n

    @property
    def labels(self):
        owner = self._acquire()  # held: the memory stays while it is read
        if self._labels is None:
            self._labels = [self._image_labels(i) for i in range(self._n)]
        del owner
        return self._labels

    def stats(self):
        """The index's counts (the library's detfeed_dataset_stat names in
        lower case: images, usable, labelled, backgrounds, corrupt, ...)."""
        owner = self._acquire()  # held: the memory stays while it is read
        out = {name: lib.detfeed_dataset_stat_get(self._ptr, i)
               for i, name in enumerate(_lib.DATASET_STATS)}
        del owner
        return out

    def problems(self):
        """What was skipped or noted while indexing, one line each: file[:line]: reason."""
        owner = self._acquire()  # held: the memory stays while it is read
        ds = self._ptr
        f, r, line = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_int()
        out = []
        for i in range(lib.detfeed_dataset_problem_count(ds)):
            lib.detfeed_dataset_problem(ds, i, ctypes.byref(f), ctypes.byref(line),
                                        ctypes.byref(r))
            where = os.fsdecode(f.value or b"") + (":%d" % line.value if line.value else "")
            out.append("%s: %s" % (where, (r.value or b"").decode(errors="replace")))
        del owner
        return out

    def problem_kinds(self):
        """What each line of problems() is: "skip" (an image or a label line
        left out), "note" (about the data: an orphan label file, duplicate
        rows removed) or "setting" (what a setting of the user's did:
        fraction, classes)."""
        owner = self._acquire()  # held: the memory stays while it is read
        names = {0: "skip", 1: "note", 2: "setting"}
        out = [names.get(lib.detfeed_dataset_problem_kind(self._ptr, i), "skip")
               for i in range(lib.detfeed_dataset_problem_count(self._ptr))]
        del owner
        return out

    def _image_labels(self, i):
        ds = self._ptr
        n = max(lib.detfeed_dataset_instance_count(ds, i), 0)
        cls = np.zeros((n, 1), np.float32)
        box = np.zeros((n, 4), np.float32)
        # The library writes K x 3 (x, y, visibility) for K x 2 datasets too.
        kpt = np.zeros((n, self.kpt_shape[0], 3), np.float32) if self.kpt_shape else None
        lib.detfeed_dataset_labels(ds, i, cls.ctypes.data, box.ctypes.data,
                                   kpt.ctypes.data if kpt is not None else None)
        w, h = ctypes.c_int(), ctypes.c_int()
        lib.detfeed_dataset_image_size(ds, i, ctypes.byref(w), ctypes.byref(h))
        lab = {"im_file": self.im_files[i], "shape": (h.value, w.value), "cls": cls,
               "bboxes": box, "normalized": True, "bbox_format": "xywh"}
        if kpt is not None:
            lab["keypoints"] = kpt
        return lab


class Loader:
    """Batches of a YOLO dataset, augmented as Ultralytics trains (mosaic,
    random affine, HSV colour, flips), with deterministic randomness.

    Loader(data, imgsz=640, batch=16, workers=None, color="worker",
           device="cpu", dtype="uint8", seed=0, cache="ram", cache_path=None,
           recipe_cache="auto", verify_record="auto", rank=None, world_size=None, augment=True,
           rect=False, epochs=100, close_mosaic=10, prefetch=4, drop_last=False, split=None, policy="skip",
           value_scale="quotient", tensors=None, pin_memory=True, nc=None, max_width=None,
           max_height=None, max_pixels=None, max_image_bytes=None, max_labels=None,
           max_label_line=None, progress=True, **hyperparameters)

    progress: while the open runs (indexing, the RAM cache's fill, the
    decode check), a progress line on stderr when it is a terminal and a
    stage takes over a second; False: none.
    data: a dataset YAML, an images/ + labels/ folder, or a text file of
    image paths. A YAML's data is where Ultralytics' check_det_dataset finds
    it (a relative `path` from the working folder or under Ultralytics'
    datasets_dir; dataset.root and dataset.root_rule say where and why); a
    name that is not a file (coco8.yaml, coco8) is looked up among the
    installed Ultralytics' packaged dataset YAMLs, never downloaded, and its
    datasets_dir is then Ultralytics' own (also whenever Ultralytics is
    imported already; else the library reads its settings file; the
    datasets_dir keyword gives another). imgsz: one integer (training batches are imgsz x imgsz).
    workers: threads, at least 1 (default: the CPUs this process may use).
    color: "worker" colours in the worker threads; "device" leaves it to the
    CUDA kernel that converts the batch (CUDA output of a float dtype in
    training); "recipe" leaves the whole image to that kernel (Mosaic, the
    warp, MixUp, flips, colour: CUDA output in training with cache="ram";
    the cache is copied to the device once). Where the route asked for
    cannot run, the next one does and `route_note` says why.
    device: "cpu" (host memory), "cuda", "cuda:N", N (an int >= 0) or a
    torch.device (device memory; falls back to host memory with a warning
    where there is no such CUDA device, a batch over 65535 images included).
    pin_memory: True (default) page-locks the batches' host memory where a
    CUDA device is (fast copies to it; this makes the CUDA context of
    PyTorch's current device when there is none yet); False keeps it
    pageable, and device="cpu" then makes no CUDA call. `pinned` says which.
    (Ultralytics' own loaders pin where a CUDA device is, as the default does.)
    dtype: uint8 (codes, the default: Ultralytics' batches, which its
    trainer divides by 255), float32, float16 or bfloat16 (code / 255, made
    by the workers or, on CUDA, by the kernel that converts the batch; the
    device routes need a float dtype).
    cache: "ram" (every image decoded once, within the memory available:
    Ultralytics' check, the need and a margin), "none", a byte budget, or
    "disk": every image decoded once into one file that later runs (and the
    other processes of the node) map instead of decoding, written while
    the loader opens (the decode that verifies each image puts it in), or
    beforehand with `detfeed cache DATA`; cache_path is
    that file (default: beside the dataset's labels, or the user's cache
    folder where that is read-only). A stale file (images changed, another
    imgsz) is rebuilt; what is there and is not a detfeed disk cache (a
    non-empty file without its magic, a folder) is never written over: the
    open fails naming it. The batches are the same bytes in every mode.
    cache_stats() says what the cache holds. verify_record: where the
    verdicts of the check that opening makes (every image decoded once, as
    `detfeed check` does, so that a damaged one is left out) are kept, so
    that a later open decodes only the images that changed: "auto" (beside
    the labels, or the user's cache folder where that is read-only), "none"
    (decode every time, keep nothing) or a file path (one that holds
    something else is not written over: the note says so); verify_stats()
    says what the check did. partner_window=W draws mosaic
    and mixup partners from this rank's last W samples (Ultralytics' buffer
    of recent images; recommended without a RAM cache: a sample then decodes
    about one new image); 0, the default, draws them from the whole dataset.
    rank, world_size: this process's shard (DistributedSampler semantics:
    the epoch's order padded by repeating from its start, then every
    world_size-th sample from position rank); each one not given is
    torch.distributed's when a process group is up (when the Loader is made:
    one made before init_process_group warns at its first iteration), else
    0 and 1. A padding repeat takes its mosaic and mixup partners (with
    partner_window) from where its sample first sits in the order: the
    window of a sample among the epoch's first. drop_last: the last batch
    of this rank's shard is dropped when it is short (DataLoader's
    drop_last; the shard is still padded).
    augment: False gives validation batches (letterbox, rect shapes).
    rect: rectangular training batches, as Ultralytics' rect=True trains:
    the images in aspect-ratio order (NumPy's argsort, as Ultralytics), in
    that order every epoch unless all their shapes are equal, each warped
    into its batch's rect shape, without mosaic, mixup and cutmix; one
    process only.
    split: "train", "val" or "test" of a YAML (default: train, or val when
    augment is False). nc: the number of classes where data gives none (a
    folder or list, a YAML without names or nc): class ids not below it are
    refused (without it, ids are checked to be below 1000000). tensors:
    "torch" or "numpy" (default: torch when it can be imported).
    max_width, max_height, max_pixels, max_image_bytes: the image limits
    (defaults 32768, 32768, 178956970 = what Ultralytics' PIL check accepts,
    536870912 decoded bytes): an image over one is left out when the loader
    opens, reported in dataset.problems() with the file and the limit,
    before any pixel memory is taken (decompression bombs). max_labels,
    max_label_line: the label limits (defaults 1000000 instances in a file,
    far above any real image's, so that every image Ultralytics keeps is
    kept; 65536 bytes in a line): a label file over one is left out the
    same way. Further
    keywords are Ultralytics hyperparameters
    (hsv_h, hsv_s, hsv_v, degrees, translate, scale, shear, perspective,
    flipud, fliplr, mosaic, mixup, cutmix, bgr, copy_paste, copy_paste_mode).
    Counts, sizes, seeds and ids are
    integers (or their text); a bool there is refused (batch=True is not a
    batch of 1), while flags and hyperparameters take bools (mosaic=False
    is 0.0).

    Iterating gives one epoch: dicts with the keys and values Ultralytics'
    collate_fn gives for the task: img (B x 3 x H x W, RGB; BGR for the
    images whose bgr gate fell; uint8 by default), cls (N x 1), bboxes
    (N x 4, normalized xywh), batch_idx (N), im_file, ori_shape,
    resized_shape, ratio_pad (per image: the (h, w) gains of the load; in
    validation times the LetterBox's ratio, with its (left, top) padding),
    rect_shape (rect training: each image's batch shape), and keypoints (N x K x 3, also for kpt_shape [K, 2] datasets, as
    Ultralytics carries them) or masks (B x H/4 x W/4; uint8, or int32
    when an image of the batch has more than 255 instances) and sem_masks
    (B x H/4 x W/4 float32: per pixel the class of its instance, see
    sem_masks()) where the task has them. img is not
    a copy: it is the loader's buffer, valid until the next batch is taken
    (clone it to keep it). On CUDA it is ordered before the work later queued
    on the stream that was current when the batch was taken. Epochs count
    up from 0 by themselves; set_epoch() sets the next one. Validation
    batches take the images in the order `rect_order` holds (dataset indices, int64; None in
    training): NumPy's argsort of the aspect ratios h / w, as Ultralytics'
    rect mode orders them.

    One iterator at a time: an iterator starts the epoch at its first
    next(), which raises DetfeedError while another iterator of the loader
    that has started is live. An iterator is over at the epoch's end, with
    its close(), or once garbage collected (the next iteration then runs
    that epoch again from its start). While it waits for a batch the
    iterator lets signal handlers run every 20 ms, so Ctrl-C
    (KeyboardInterrupt) arrives at once; the iterator is then where it was.
    Threads take turns: an iterator shared by threads hands each batch to
    one of them, and a thread that iterates the loader while another does
    is refused as above. The reads (dataset, cache_stats, verify_stats,
    skipped) may come from any thread, also while another one closes the
    loader (they then raise the closed error).

    Memory: an img array or tensor keeps the loader's memory alive, so it
    never points into freed memory: after close(), or once the Loader is
    garbage collected, a batch already handed out stays readable. The last
    batch taken keeps its bytes; an earlier one shows what the workers last
    wrote into its buffer (as it does once the next batch is taken). The
    memory is freed when the last of them is gone. Labels are copies.

    Processes: the worker threads belong to the process that created the
    Loader. Used in a forked child (a torch DataLoader worker, os.fork) it
    raises DetfeedError saying so, rather than waiting for threads that are
    not there; the child never frees it. A Loader cannot be pickled.
    """

    def __init__(self, data, imgsz=640, batch=16, workers=None, color="worker", device="cpu",
                 dtype="uint8", seed=0, cache="ram", cache_path=None, recipe_cache="auto",
                 verify_record="auto", rank=None,
                 world_size=None, augment=True, rect=False, epochs=100, close_mosaic=10,
                 prefetch=4, drop_last=False, split=None,
                 policy="skip", value_scale="quotient", tensors=None, pin_memory=True, opencv=None,
                 opencv_cpu=None, opencv_ipp=None, ultralytics=None, numpy=None,
                 numpy_sort=None, nc=None,
                 max_width=None, max_height=None, max_pixels=None, max_image_bytes=None,
                 max_labels=None, max_label_line=None, progress=True, **hyp):
        self._handle = None
        self._iterator = None  # a weak reference to the live iterator
        self._held = None  # the batch handed out last (released when the next is taken)
        self._out = ctypes.c_void_p()  # where the library puts a batch it hands over
        self._consumer = threading.Lock()  # held by the thread taking a batch
        # The arguments, each checked here with a message naming it; the
        # library checks the ranges of the settings (with its own messages).
        data, datasets_dir = _ultralytics_data(_data_path(data))
        if datasets_dir is not None and "datasets_dir" not in hyp:
            hyp["datasets_dir"] = datasets_dir
        if tensors is None:
            tensors = "torch" if torch is not None else "numpy"
        if tensors not in ("torch", "numpy") or (tensors == "torch" and torch is None):
            raise ValueError("detfeed: tensors must be 'numpy', or 'torch' with PyTorch "
                             "installed, not %r" % (tensors,))
        self.tensors = tensors
        self._dtype = _dtype_name(dtype)
        cuda, index = _parse_device(device)
        # made before init_process_group: said at the first iteration
        self._before_group = rank is None and world_size is None and not _dist_up()
        rank, world_size, self._from_group = _shard_args(rank, world_size)
        for name, value, accepted in (("color", color, ("worker", "device", "recipe")),
                                      ("value_scale", value_scale, ("quotient", "reciprocal")),
                                      ("recipe_cache", recipe_cache, ("auto", "device", "host")),
                                      ("policy", policy, ("skip", "fail"))):
            _choice(name, value, accepted)
        augment, drop_last = _flag("augment", augment), _flag("drop_last", drop_last)
        rect = _flag("rect", rect)
        pin_memory = _flag("pin_memory", pin_memory)
        progress = _flag("progress", progress)
        if not augment and world_size > 1:
            raise ValueError(
                "detfeed: validation batches (augment=False) are made by one process: "
                "world_size is %d%s; give rank=0, world_size=1" % (
                    world_size, " (torch.distributed's process group)"
                    if "world_size" in self._from_group else ""))
        split = "train" if split is None and augment else "val" if split is None else split
        _choice("split", split, ("train", "val", "test"), "(a split of the dataset YAML)")
        imgsz = _imgsz(imgsz)
        batch, epochs = _integer("batch", batch), _integer("epochs", epochs)
        workers = None if workers is None else _integer("workers", workers)
        if workers is not None and workers < 1:
            raise ValueError("detfeed: workers must be at least 1 (threads of this process; "
                             "None: one per CPU it may use), not %d" % workers)
        self.batch_size, self.drop_last, self.rank, self.world_size = batch, drop_last, rank, world_size
        self._epochs = epochs
        self.num_workers = workers or len(os.sched_getaffinity(0))
        settings = {"imgsz": imgsz, "batch": batch, "workers": self.num_workers, "seed": seed,
                    "epochs": epochs, "close_mosaic": close_mosaic, "prefetch": prefetch,
                    "drop_last": int(drop_last), "augment": int(augment), "rank": rank,
                    "rect": int(rect),
                    "pin_memory": int(pin_memory),
                    "world_size": world_size, "dtype": self._dtype,
                    "value_scale": value_scale, "output": "cuda" if cuda else "host",
                    "color": color, "cuda_device": index, "recipe_cache": recipe_cache,
                    "cache_bytes": _cache_bytes(cache), "cache": _cache_mode(cache)}
        if cache_path is not None:
            if not isinstance(cache_path, (str, os.PathLike)) or not os.fspath(cache_path):
                raise ValueError("detfeed: cache_path must be a file path, not %r"
                                 % (cache_path,))
            settings["cache_path"] = os.fspath(cache_path)
        settings["verify_record"] = _verify_record(verify_record)
        settings.update(_stack(opencv, opencv_cpu, opencv_ipp, ultralytics, numpy,
                               numpy_sort))
        if nc is not None:  # the number of classes where data gives none
            settings["nc"] = _integer("nc", nc)
        for name, value in (("max_width", max_width), ("max_height", max_height),
                            ("max_pixels", max_pixels), ("max_image_bytes", max_image_bytes),
                            ("max_labels", max_labels), ("max_label_line", max_label_line)):
            if value is not None:  # image and label limits; the library checks the range
                settings[name] = _integer(name, value)
        self._imgsz, self._augment, self._rect = imgsz, augment, rect
        self._ultralytics = str(settings.get("ultralytics", "8.4"))
        # The reference stack in effect: what was given or found installed
        # (settings not listed keep the library's defaults).
        self.stack = {k: str(settings[k]) for k in _STACK_KEYS if k in settings}

        handle = _Handle()
        self._check(lib.detfeed_loader_create(ctypes.byref(handle.ptr), 0), "create", handle)
        self._handle = handle
        h = handle.ptr
        for name, value in list(settings.items()) + list(hyp.items()):
            self._set(h, name, value)
        self._check(lib.detfeed_loader_set_split(h, split.encode()), "split")
        self._check(lib.detfeed_loader_set_policy(
            h, POLICY_FAIL if policy == "fail" else POLICY_SKIP), "policy")
        with _progress.Progress(_progress.loader_reader(lib, h), progress):
            rc = lib.detfeed_loader_open(h, data)
        self._check(rc, "open")
        ds = lib.detfeed_loader_dataset(h)
        self.dataset = Dataset._of(ds, handle)
        self.rect_order = None
        if not augment or rect:
            self._set_rect_order(h, ds)
        self._shard_size = lib.detfeed_shard_size(len(self.dataset), rank, world_size)
        self._len = lib.detfeed_loader_batch_count(h)
        self.sampler = _Sampler(self)
        self.epoch, self._epoch_set = 0, False
        self._cuda_index = index if cuda else None
        self._started = None  # the epoch started ahead (by the end of the last one)
        # The route is decided by the open: a fallback is reported here,
        # before any batch is made.
        out, route, why = ctypes.c_int(), ctypes.c_int(), ctypes.c_char_p()
        self._check(lib.detfeed_loader_route(h, ctypes.byref(out), ctypes.byref(route),
                                             ctypes.byref(why)), "route")
        self.device = "cuda:%d" % index if out.value == OUTPUT_CUDA else "cpu"
        self.color = {ROUTE_DEVICE: "device", ROUTE_RECIPE: "recipe"}.get(route.value, "worker")
        self.route_note = why.value.decode(errors="replace") if why.value else None
        if self.route_note and (cuda or color != "worker"):
            import warnings
            warnings.warn("detfeed: %s: batches in %s memory, colour in the %s" % (
                self.route_note, "device" if out.value else "host", self.color), stacklevel=2)

    # -- the handle, settings and errors ---------------------------------------
    def _live(self, handle=None):
        """The handle of a loader that is open, in the process that made it."""
        h = self._handle if handle is None else handle
        if h is None or h.closed:
            raise _closed_error()
        if h.forked():
            raise _fork_error(h)
        return h


    def _check(self, rc, what, handle=None):
        if rc < 0:
            h = handle or self._handle
            msg = (lib.detfeed_loader_last_error(h.ptr).decode(errors="replace")
                   if h and h.ptr.value else "")
            lib.check(rc, what, msg)
        return rc

    @staticmethod
    def _set(h, name, value):
        param = ctypes.c_int()
        if lib.detfeed_loader_param_parse(name.encode(), ctypes.byref(param)) != 0:
            raise TypeError("Loader got an unknown setting %r" % name)
        if isinstance(value, (bool, np.bool_)):
            if not _is_flag(param):
                raise ValueError("detfeed: %s must be an integer, not %r" % (name, value))
            value = int(value)
        elif name == "classes" and isinstance(value, (list, tuple)):
            value = ",".join(str(_integer("classes", c)) for c in value)
        text = os.fsencode(value) if isinstance(value, os.PathLike) else str(value).encode(
            errors="surrogateescape")
        if b"\0" in text:
            raise ValueError("detfeed: %s=%r: embedded null byte" % (name, value))
        if lib.detfeed_loader_set(h, name.encode(), text) < 0:
            raise ValueError("detfeed: %s" % lib.detfeed_loader_last_error(h).decode(
                errors="replace"))

    def _set_rect_order(self, h, ds):
        """Validation and rect training: the order Ultralytics' NumPy argsort
        gives (ties among equal aspect ratios are not in dataset order
        there)."""
        n = lib.detfeed_dataset_size(ds)
        hh, ww = ctypes.c_int(), ctypes.c_int()
        hs, ws = np.empty(n, np.int64), np.empty(n, np.int64)
        for i in range(n):
            lib.detfeed_dataset_image_size(ds, i, ctypes.byref(ww), ctypes.byref(hh))
            hs[i], ws[i] = hh.value, ww.value
        order = np.ascontiguousarray(_stack_mod.rect_order(hs, ws))
        self._check(lib.detfeed_loader_set_rect_order(h, order.ctypes.data, n),
                    "rect order")
        self.rect_order = order.astype(np.int64)

    # -- the DataLoader surface ---------------------------------------------
    def __len__(self):
        return self._len

    def set_epoch(self, epoch):
        """Sets the epoch the next iteration runs (its order, recipes, and
        whether mosaic is on: off in the last close_mosaic epochs): an
        integer in 0 .. 2**32 - 1."""
        epoch = _integer("epoch", epoch)
        if not 0 <= epoch < 2**32:
            raise ValueError("detfeed: epoch must be in 0 .. 4294967295, not %d" % epoch)
        self.epoch, self._epoch_set = epoch, True

    def reset(self):
        """For the Ultralytics trainer: nothing to rebuild (mosaic closes by
        itself in the last close_mosaic epochs)."""

    def __iter__(self):
        return _Epoch(self, self._live())

    def _begin(self, it):
        """Starts iterator `it` (at its first next()): the loader's epoch,
        unless another iterator is live. Returns the epoch."""
        handle = self._live(it._handle)
        live = self._iterator() if self._iterator is not None else None
        if live is not None and live is not it and live._epoch is not None and not live._done:
            raise DetfeedError(EBADSTATE, (
                "detfeed: this Loader is being iterated already (another iterator of it is "
                "still live); it runs one epoch at a time: finish that iterator, call its "
                "close() or drop it before iterating again"))
        h = handle.ptr
        self._warn_group_after()
        self._release_held(h)
        if self._out.value:  # taken but never handed out (an interrupt came between)
            lib.detfeed_loader_release(h, self._out.value)
            self._out.value = None
        epoch = self.epoch
        if epoch >= 2**32:  # counted up past the last epoch the library numbers
            raise DetfeedError(EBADSTATE, "detfeed: epoch %d is past the last one (4294967295)"
                               % epoch)
        if self._started != epoch:
            self._check(lib.detfeed_loader_start(h, epoch), "start")
        self._started = None  # an epoch runs once per start
        self._epoch_set = False
        self._iterator = weakref.ref(it)
        return epoch

    def _warn_group_after(self):
        """Once: a loader made before torch.distributed's process group gives
        every rank the whole dataset (its rank and world size were 0 and 1)."""
        if self._before_group and _dist_up() and torch.distributed.get_world_size() > 1:
            import warnings
            warnings.warn("detfeed: this Loader was made before torch.distributed's process "
                          "group: it takes the whole dataset (rank 0 of 1) in each of the "
                          "%d processes; make it after init_process_group, or give rank "
                          "and world_size" % torch.distributed.get_world_size(), stacklevel=4)
        self._before_group = False

    def _next_batch(self, handle):
        """The next batch of the running epoch, or None at its end. The
        library writes the batch it hands over into self._out, and it stays
        there until it is in a dict: an interrupt at any point loses none."""
        self._live(handle)
        h, out = handle.ptr, self._out
        if not out.value:
            self._release_held(h)
            while True:  # in slices, so that signal handlers run in between
                self._set_stream(h)
                rc = lib.detfeed_loader_next_timed(h, ctypes.byref(out), _SLICE_MS)
                if rc != NEXT_TIMEOUT:
                    break
                self._live(handle)  # closed by another thread meanwhile
            if rc == NEXT_END:
                return None
            if rc < 0:
                self._live(handle)  # closed meanwhile: say so, not "shut down"
                self._check(rc, "batch", handle)
        b = out.value
        batch = self._batch(b, handle)
        self._held = b
        out.value = None
        self._warn_damage(h)
        return batch

    def _warn_damage(self, h):
        """A warning for each image found damaged in the disk cache since the
        last batch (its pixels were decoded from the image instead)."""
        disk = lib.detfeed_loader_disk_cache(h)
        if not disk:
            return
        count = lib.detfeed_disk_cache_stat_get(disk, _lib.DISK_STATS.index("damaged"))
        seen = self.__dict__.get("_damage_seen", 0)
        if count <= seen:
            return
        import warnings
        for k in range(seen, count):
            line = _damage_line(disk, k)
            if line is None:
                warnings.warn("detfeed: %d more images found damaged in the disk cache "
                              "(decoded from their files instead)" % (count - k), stacklevel=4)
                break
            warnings.warn("detfeed: " + line, stacklevel=4)
        self._damage_seen = count

    def _end_epoch(self, epoch):
        if not self._epoch_set:
            self.epoch = epoch + 1
        if self.epoch < self._epochs and self._handle is not None:
            # the workers start on it while the consumer validates
            handle = self._live()  # held: another thread may close meanwhile
            self._check(lib.detfeed_loader_start(handle.ptr, self.epoch), "start", handle)
            self._started = self.epoch

    def close(self):
        """Stops the worker threads (each finishes the sample in hand, so this
        takes at most one sample's time) and closes the loader: iterating,
        its live iterator and its dataset's labels raise DetfeedError ("...
        the loader is closed"). The memory (batch slots, device buffers) is
        freed now, or, while arrays or tensors of batches already handed out
        are left, when the last of them is gone: they stay readable, as the
        class documentation says. Closing again does nothing."""
        handle = self.__dict__.get("_handle")
        if handle is None:
            return
        self._handle = None
        self._held = None
        handle.closed = True
        if handle.ptr.value and not handle.forked():
            lib.detfeed_loader_shutdown(handle.ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown: modules may be gone
            pass

    def __reduce__(self):
        raise TypeError("detfeed.Loader cannot be pickled: it owns worker threads and memory "
                        "of the process that created it; create the Loader in the process "
                        "that iterates it")

    def cache_stats(self):
        """What the RAM cache holds: images, bytes, budget (bytes) and
        on_demand (images decoded each time they are used); with
        cache="disk", "disk": its file (path), state ("reused", "writing",
        "built", "waiting", "adopted", "failed"), images and bytes it holds,
        file_bytes, expected (images a complete file holds), this process's
        hits, decoded and written, damaged (images whose pixels in the file
        were found damaged: decoded from their files instead, each with a
        warning) and "damage" (a line on each of the first 100), and a note
        on what opening found."""
        handle = self._live()  # held: the memory stays while it is read
        h = handle.ptr
        cache = lib.detfeed_loader_cache(h)
        stats = {k: lib.detfeed_cache_stat_get(cache, _lib.CACHE_STATS.index(k))
                 if cache else 0 for k in ("images", "bytes", "budget", "on_demand")}
        disk = lib.detfeed_loader_disk_cache(h)
        stats["disk"] = None
        if disk:
            d = {k: lib.detfeed_disk_cache_stat_get(disk, i)
                 for i, k in enumerate(_lib.DISK_STATS)}
            d["state"] = _lib.DISK_STATES[d["state"]]
            d["path"] = os.fsdecode(lib.detfeed_disk_cache_path(disk))
            d["note"] = lib.detfeed_disk_cache_note(disk).decode(errors="replace")
            d["damage"] = [line for line in (_damage_line(disk, k)
                                             for k in range(d["damaged"])) if line]
            stats["disk"] = d
        del handle
        return stats

    def verify_stats(self):
        """What the check that opening makes did: record ("none", "reused",
        "written", "unwritten"), path (the record's file, or None), images
        (checked), decoded (by the check in this open), reused (verdicts
        from the record), cached (decoded by the RAM cache's fill or held by
        the disk cache), failed (left out) and a note."""
        handle = self._live()  # held: the memory stays while it is read
        h = handle.ptr
        stats = {k: lib.detfeed_loader_verify_stat(h, i)
                 for i, k in enumerate(_lib.VERIFY_STATS)}
        stats["record"] = _lib.RECORD_STATES[stats["record"]]
        path = lib.detfeed_loader_verify_path(h)
        stats["path"] = os.fsdecode(path) if path else None
        stats["note"] = lib.detfeed_loader_verify_note(h).decode(errors="replace")
        del handle
        return stats

    @property
    def skipped(self):
        """Samples replaced under the skip policy so far, and the first one's message."""
        handle = self._live()  # held: the message is the loader's memory
        first = ctypes.c_char_p()
        n = lib.detfeed_loader_skipped(handle.ptr, ctypes.byref(first))
        out = n, first.value.decode(errors="replace") if first.value else None
        del handle
        return out

    @property
    def pinned(self):
        """(True, None) when the batches' host memory is page-locked, else
        (False, why): no CUDA device, pin_memory=False, the allocation
        failed, or no batch made yet (known from the first iteration)."""
        handle = self._live()  # held: the reason is the loader's memory
        why = ctypes.c_char_p()
        pinned = bool(lib.detfeed_loader_pinned(handle.ptr, ctypes.byref(why)))
        out = pinned, why.value.decode(errors="replace") if why.value else None
        del handle
        return out

    @property
    def device_bytes(self):
        """Bytes of device memory the loader holds (CUDA output: its input
        buffer, output tensors and, on the recipe route, the cache's device
        copy; 0 for host output)."""
        handle = self._live()  # held while the library reads it
        return lib.detfeed_loader_device_bytes(handle.ptr)

    @property
    def device_made(self):
        """Training samples whose image the CUDA kernel made from its recipe
        (color="recipe"), counted since the loader opened; 0 on other routes.
        A recipe-route sample not counted was made by the workers (an image
        the RAM cache does not hold)."""
        handle = self._live()  # held while the library reads it
        return lib.detfeed_loader_device_made(handle.ptr)

    # -- batches --------------------------------------------------------------
    def _release_held(self, h):
        if self._held is not None:
            self._set_stream(h)  # its buffer is reused after the work queued so far
            held, self._held = self._held, None  # released even when the call fails
            self._check(lib.detfeed_loader_release(h, held), "release")

    def _set_stream(self, h):
        if self._cuda_index is not None and torch is not None and torch.cuda.is_available():
            s = torch.cuda.current_stream(self._cuda_index).cuda_stream
            lib.detfeed_loader_set_cuda_stream(h, s)

    def _batch(self, b, handle):
        h, w = ctypes.c_int(), ctypes.c_int()
        n = lib.detfeed_batch_size(b, ctypes.byref(h), ctypes.byref(w))
        shape = (n, 3, h.value, w.value)
        out = {"img": self._images(b, shape, handle)}
        k = lib.detfeed_batch_instances(b)
        out["cls"] = self._floats(lib.detfeed_batch_cls(b), (k, 1))
        out["bboxes"] = self._floats(lib.detfeed_batch_bboxes(b), (k, 4))
        out["batch_idx"] = self._floats(lib.detfeed_batch_batch_idx(b), (k,))
        if self.dataset.kpt_shape:  # x, y, visibility: K x 3 whatever the YAML's ndim
            out["keypoints"] = self._floats(lib.detfeed_batch_keypoints(b),
                                            (k, self.dataset.kpt_shape[0], 3))
        mh, mw, mt = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        masks = lib.detfeed_batch_mask_data(b, ctypes.byref(mh), ctypes.byref(mw),
                                            ctypes.byref(mt))
        if masks:  # int32 when a sample has more than 255 instances, as in Ultralytics
            out["masks"] = self._array(masks, (n, mh.value, mw.value),
                                       np.int32 if mt.value == MASK_I32 else np.uint8)
            out["sem_masks"] = sem_masks(out["masks"], out["cls"], out["batch_idx"])
        out["im_file"] = tuple(os.fsdecode(lib.detfeed_batch_im_file(b, i)) for i in range(n))
        ori, res = (ctypes.c_int * 2)(), (ctypes.c_int * 2)()
        shapes = []
        for i in range(n):
            lib.detfeed_batch_shapes(b, i, ori, res)
            shapes.append(((ori[0], ori[1]), (res[0], res[1])))
        out["ori_shape"] = tuple(s[0] for s in shapes)
        out["resized_shape"] = tuple(s[1] for s in shapes)
        out["ratio_pad"] = _batch_ratio_pad(out["ori_shape"], out["resized_shape"],
                                            self._imgsz, self._ultralytics, self._augment)
        if self._augment and self._rect:
            out["rect_shape"] = _rect_shapes(out["resized_shape"])
        return out

    def _images(self, b, shape, handle):
        size = ctypes.c_size_t()
        dev = lib.detfeed_batch_cuda_images(b, ctypes.byref(size))
        if dev:
            cai = _CudaImages(dev, shape, self._dtype, handle)
            if self.tensors == "numpy" or torch is None:
                return cai
            t = torch.as_tensor(cai, device="cuda:%d" % self._cuda_index)
            return t.view(torch.bfloat16) if self._dtype == "bf16" else t
        host = lib.detfeed_batch_images(b, ctypes.byref(size))
        arr = np.asarray(_HostImages(host, shape, self._dtype, handle))
        if self.tensors == "numpy":
            return arr
        t = torch.from_numpy(arr)
        return t.view(torch.bfloat16) if self._dtype == "bf16" else t

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


def _data_path(data):
    if isinstance(data, (str, bytes, os.PathLike)):
        path = os.fsencode(data)
        if b"\0" in path:
            raise ValueError("detfeed: data=%r: embedded null byte" % (data,))
        return path
    raise TypeError("detfeed: data must be the path of a dataset YAML, an images folder or a "
                    "list of images, not %r" % (data,))


def _ultralytics_data(path):
    """The dataset YAML `path` (bytes) names, and Ultralytics' datasets_dir
    (None: the library reads Ultralytics' settings file itself), as
    check_det_dataset finds them: a name that is not a file here (coco8,
    coco8.yaml) is looked up among the installed Ultralytics' packaged
    dataset YAMLs (check_file's search, never a download), and Ultralytics'
    DATASETS_DIR is taken from it where it is imported (it is imported for
    such a name only). FileNotFoundError for a name that Ultralytics does
    not find, or where it is not installed."""
    text = os.fsdecode(path)
    # An absolute path that is not there is no name to look up (Ultralytics'
    # search could not find it either): the library says it is missing.
    local = "://" in text or os.path.isabs(text) or os.path.exists(text)
    if not local and importlib.util.find_spec("ultralytics") is None:
        raise FileNotFoundError(
            "detfeed: data %r is not a file, and Ultralytics, which would look it up "
            "among its packaged dataset YAMLs, is not installed: give the YAML's path"
            % text)
    if not local:
        from ultralytics.utils.checks import check_file
        suffix = os.path.splitext(text)[1]
        if suffix not in (".yaml", ".yml"):  # 'coco8' -> 'coco8.yaml', as Ultralytics
            text = next((text + x for x in (".yaml", ".yml")
                         if check_file(text + x, download=False, hard=False)), text)
        try:
            found = check_file(text, download=False)
        except FileNotFoundError as e:  # none, or several that match
            raise FileNotFoundError(
                "detfeed: data %r is not a file here, and Ultralytics' search of its "
                "packaged dataset YAMLs says: %s" % (text, e)) from None
        path = os.fsencode(found)
    datasets_dir = None
    for name in ("ultralytics.data.utils", "ultralytics.utils"):  # what check_det_dataset uses
        module = sys.modules.get(name)
        if module is not None and getattr(module, "DATASETS_DIR", None) is not None:
            datasets_dir = os.fspath(module.DATASETS_DIR)
            break
    return path, datasets_dir


def _is_flag(param):
    """Whether a bool is a loader setting's value: for an integer 0 or 1
    and a float (a hyperparameter: True is 1.0, as Ultralytics takes it),
    not for a count, a size or an id (batch=True is a mistake). Text
    settings check their own values."""
    lo, hi = ctypes.c_int64(), ctypes.c_int64()
    if lib.detfeed_loader_param_bounds_int(param, ctypes.byref(lo), ctypes.byref(hi),
                                           None, None) != 0:
        return True
    return (lo.value, hi.value) == (0, 1)


def _integer(name, value):
    """An integer argument (an int, a NumPy integer or an integer's text;
    not a bool: batch=True is a mistake, not a batch of 1)."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError("detfeed: %s must be an integer, not %r" % (name, value))
    try:
        return operator.index(value)
    except TypeError:
        pass
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise ValueError("detfeed: %s must be an integer, not %r" % (name, value))


def _imgsz(imgsz):
    """One integer size; a one-element list as Ultralytics takes it."""
    if isinstance(imgsz, (list, tuple)):
        if len(imgsz) != 1:
            raise ValueError(
                "detfeed: imgsz=%r: detfeed takes one integer size (training batches are "
                "imgsz x imgsz, validation batches rectangles within it, as Ultralytics "
                "trains), e.g. imgsz=%s" % (imgsz, max(imgsz) if imgsz and all(
                    isinstance(v, int) for v in imgsz) else 640))
        imgsz = imgsz[0]
    return _integer("imgsz", imgsz)


def _flag(name, value):
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, numbers.Integral) and
                                                 value in (0, 1)):
        return bool(value)
    raise ValueError("detfeed: %s must be True or False, not %r" % (name, value))


def _choice(name, value, accepted, note=""):
    if not isinstance(value, str) or value not in accepted:
        raise ValueError("detfeed: %s must be %s%s, not %r" % (
            name, ", ".join(repr(a) for a in accepted[:-1]) + " or %r" % accepted[-1],
            " " + note if note else "", value))


def _dtype_name(dtype):
    """The library's short name ("u8", "f32", "f16", "bf16") of a dtype's
    name, a torch.dtype or a NumPy dtype (named through detfeed_dtype_parse)."""
    key = None
    if isinstance(dtype, str):
        key = dtype
    elif torch is not None and isinstance(dtype, torch.dtype):
        key = str(dtype).replace("torch.", "")
    elif isinstance(dtype, (type, np.dtype)):
        try:
            key = np.dtype(dtype).name
        except TypeError:
            pass
    try:
        return lib.dtype_name(lib.dtype(key if isinstance(key, str) else ""))
    except ValueError:
        raise ValueError("detfeed: dtype must be uint8, float32, float16 or bfloat16 (or u8, "
                         "f32, f16, half, bf16, or the torch dtype), not %r" % (dtype,)) from None


def _parse_device(device):
    """(cuda?, index) from "cpu", "cuda", "cuda:N", an int or a torch.device."""
    if torch is not None and isinstance(device, torch.device):
        device = str(device)
    refused = ValueError("detfeed: device must be 'cpu', 'cuda', 'cuda:N' or a CUDA device "
                         "number >= 0, not %r" % (device,))
    if isinstance(device, bool) or (isinstance(device, int) and device < 0):
        raise refused
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
    raise refused


def _shard_args(rank, world_size):
    """(rank, world_size, names taken from the process group): each one not
    given is torch.distributed's where a process group is up, else 0 and
    1; given ones are integers (see _integer) in range."""
    group = rank is None or world_size is None
    grank, gsize = _dist_rank() if group else (0, 1)
    up = group and _dist_up()
    taken = tuple(n for n, v in (("rank", rank), ("world_size", world_size))
                  if v is None and up)
    rank = grank if rank is None else _integer("rank", rank)
    given_size = world_size is not None
    world_size = gsize if world_size is None else _integer("world_size", world_size)
    if world_size < 1:
        raise ValueError("detfeed: world_size must be at least 1, not %d" % world_size)
    if not 0 <= rank < world_size:
        raise ValueError("detfeed: rank %d is not in [0, world_size %d)%s" % (
            rank, world_size, "" if given_size else
            " (world_size %s: give it too)" % (
                "from torch.distributed's process group" if up else
                "defaults to 1 without a torch.distributed process group")))
    return rank, world_size, taken


def _dist_up():
    """Whether a torch.distributed process group is up."""
    return (torch is not None and torch.distributed.is_available()
            and torch.distributed.is_initialized())


def _dist_rank():
    """(rank, world_size) of a torch.distributed process group that is up."""
    if _dist_up():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


def _cache_bytes(cache):
    if cache is True or (isinstance(cache, str) and cache == "ram"):
        return "ram"  # what fits in available memory, as Ultralytics checks it
    if cache is None or cache is False or (isinstance(cache, str) and cache in ("none", "disk")):
        return 0
    if isinstance(cache, numbers.Integral) and not isinstance(cache, bool) and cache >= 0:
        return int(cache)
    raise ValueError("detfeed: cache must be 'ram', 'disk', 'none' or a byte count, not %r"
                     % (cache,))


def _cache_mode(cache):
    """The library's cache setting: "disk" for the disk cache; a RAM budget
    (or none) otherwise."""
    return "disk" if isinstance(cache, str) and cache == "disk" else "ram"



def _verify_record(value):
    """verify_record: "auto", "none" or a file (a path object, or a string
    with a '/'; the library refuses other words)."""
    if isinstance(value, os.PathLike):
        return os.path.abspath(os.fspath(value))
    if not isinstance(value, str):
        raise ValueError("detfeed: verify_record must be 'auto', 'none' or a file path, "
                         "not %r" % (value,))
    return value
