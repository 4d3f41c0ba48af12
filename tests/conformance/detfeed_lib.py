"""The parts of libdetfeed the conformance suite drives, through ctypes.

The suite loads the library it is given (--lib) rather than the Python
package's copy, so that a ctest run checks the library of its own build.
Only the functions used here are declared; each wrapper raises
DetfeedCallError with the loader's message when a call fails.
"""
import ctypes

import numpy as np

_p, _i, _u32, _u64, _sz, _d, _s = (ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32,
                                   ctypes.c_uint64, ctypes.c_size_t, ctypes.c_double,
                                   ctypes.c_char_p)
_pi = ctypes.POINTER(ctypes.c_int)

_SIGNATURES = {
    "detfeed_version_string": (_s, []),
    "detfeed_uniform": (_d, [_u64, _u32, _u32, _u64]),
    "detfeed_epoch_order": (_i, [_u64, _u32, _sz, ctypes.POINTER(_u64)]),
    "detfeed_loader_create": (_i, [ctypes.POINTER(_p), _u32]),
    "detfeed_loader_destroy": (None, [_p]),
    "detfeed_loader_last_error": (_s, [_p]),
    "detfeed_loader_set_split": (_i, [_p, _s]),
    "detfeed_loader_open": (_i, [_p, _s]),
    "detfeed_loader_dataset": (_p, [_p]),
    "detfeed_loader_sample_size": (_i, [_p, _u64, _pi, _pi]),
    "detfeed_loader_sample": (_i, [_p, _u32, _u64, _p, _i, _pi, _p, _p, _p]),
    "detfeed_loader_sample_mask_data": (_i, [_p, _u32, _u64, _p, _sz, _pi, _pi, _pi]),
    "detfeed_loader_recipe_json": (_i, [_p, _u32, _u64, _p, _sz]),
    "detfeed_loader_batch_count": (_sz, [_p]),
    "detfeed_loader_start": (_i, [_p, _u32]),
    "detfeed_loader_next": (_i, [_p, ctypes.POINTER(_p)]),
    "detfeed_loader_release": (None, [_p, _p]),
    "detfeed_dataset_size": (_sz, [_p]),
    "detfeed_dataset_task": (_i, [_p]),
    "detfeed_dataset_image_path": (_s, [_p, _sz]),
    "detfeed_dataset_kpt_shape": (None, [_p, _pi, _pi]),
    "detfeed_batch_size": (_i, [_p, _pi, _pi]),
    "detfeed_batch_images": (_p, [_p, ctypes.POINTER(_sz)]),
    "detfeed_batch_instances": (_i, [_p]),
    "detfeed_batch_cls": (_p, [_p]),
    "detfeed_batch_bboxes": (_p, [_p]),
    "detfeed_batch_batch_idx": (_p, [_p]),
    "detfeed_batch_keypoints": (_p, [_p]),
    "detfeed_batch_mask_data": (_p, [_p, _pi, _pi, _pi]),
    "detfeed_batch_im_file": (_s, [_p, _i]),
    "detfeed_batch_shapes": (None, [_p, _i, _pi, _pi]),
    "detfeed_loader_set": (_i, [_p, _s, _s]),
    "detfeed_loader_set_rect_order": (_i, [_p, ctypes.POINTER(_u64), _sz]),
}

TASKS = {0: "detect", 1: "segment", 2: "pose"}
# detfeed_mask_type (its value is the element size) as NumPy dtypes.
MASK_DTYPES = {1: np.uint8, 4: np.int32}


class DetfeedCallError(RuntimeError):
    """A libdetfeed call returned a negative status."""


class Library:
    """libdetfeed at `path` with the signatures above."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.path = path
        for name, (res, args) in _SIGNATURES.items():
            f = getattr(self.lib, name)
            f.restype, f.argtypes = res, args

    def version(self):
        return self.lib.detfeed_version_string().decode()

    def uniform(self, seed, slot, epoch, index):
        """The uniform double of (seed, slot, epoch, index): the value every
        random parameter of a sample is made from."""
        return self.lib.detfeed_uniform(seed, slot, epoch, index)

    def epoch_order(self, seed, epoch, n):
        order = (_u64 * n)()
        rc = self.lib.detfeed_epoch_order(seed, epoch, n, order)
        if rc < 0:
            raise DetfeedCallError("detfeed_epoch_order: status %d" % rc)
        return [int(x) for x in order]


class Loader:
    """One detfeed_loader: settings by name, open, samples and batches."""

    def __init__(self, lib):
        self.L = lib
        self.lib = lib.lib
        self.h = _p()
        self._check(self.lib.detfeed_loader_create(ctypes.byref(self.h), 0), "create")
        self.ds = None

    def close(self):
        if self.h.value:
            self.lib.detfeed_loader_destroy(self.h)
            self.h = _p()

    def _check(self, rc, what):
        if rc < 0:
            msg = self.lib.detfeed_loader_last_error(self.h).decode() if self.h.value else ""
            raise DetfeedCallError("detfeed %s: status %d: %s" % (what, rc, msg))
        return rc

    # -- settings ------------------------------------------------------------
    def set(self, name, value):
        """Any setting by name with a text value (detfeed_loader_set)."""
        text = str(value)
        self._check(self.lib.detfeed_loader_set(self.h, name.encode(), text.encode()),
                    "set %s=%s" % (name, text))

    def set_split(self, split):
        self._check(self.lib.detfeed_loader_set_split(self.h, split.encode()), "split")

    def open(self, data):
        self._check(self.lib.detfeed_loader_open(self.h, data.encode()), "open")
        self.ds = self.lib.detfeed_loader_dataset(self.h)
        k, d = ctypes.c_int(), ctypes.c_int()
        self.lib.detfeed_dataset_kpt_shape(self.ds, ctypes.byref(k), ctypes.byref(d))
        self.kpt = (k.value, 3) if k.value else None  # keypoints come out as (x, y, v)
        self.task = TASKS.get(self.lib.detfeed_dataset_task(self.ds), "?")

    def set_rect_order(self, order):
        """Validation: the order of the images by aspect ratio, as the
        reference sorted them."""
        arr = (_u64 * len(order))(*order)
        self._check(self.lib.detfeed_loader_set_rect_order(self.h, arr, len(order)),
                    "set_rect_order")

    # -- the dataset -----------------------------------------------------------
    def size(self):
        return self.lib.detfeed_dataset_size(self.ds)

    def image_path(self, i):
        return self.lib.detfeed_dataset_image_path(self.ds, i).decode()

    # -- one sample ------------------------------------------------------------
    def sample_size(self, index):
        w, h = ctypes.c_int(), ctypes.c_int()
        self._check(self.lib.detfeed_loader_sample_size(self.h, index, ctypes.byref(w),
                                                         ctypes.byref(h)), "sample_size")
        return h.value, w.value

    def sample(self, epoch, index, capacity=4096):
        """Sample `index` of `epoch`: the HWC BGR image before Format's channel
        swap, and the label arrays as Format gives them."""
        h, w = self.sample_size(index)
        img = np.empty((h, w, 3), np.uint8)
        cls = np.empty((capacity,), np.float32)
        box = np.empty((capacity, 4), np.float32)
        kpt = np.empty((capacity,) + self.kpt, np.float32) if self.kpt else None
        n = ctypes.c_int()
        self._check(self.lib.detfeed_loader_sample(
            self.h, epoch, index, img.ctypes.data, capacity, ctypes.byref(n), cls.ctypes.data,
            box.ctypes.data, kpt.ctypes.data if kpt is not None else None),
            "sample (epoch %d, index %d)" % (epoch, index))
        n = n.value
        out = {"img": img, "cls": cls[:n].reshape(n, 1).copy(), "bboxes": box[:n].copy()}
        if kpt is not None:
            out["keypoints"] = kpt[:n].copy()
        return out

    def sample_masks(self, epoch, index):
        """The sample's overlap mask, uint8 or (more than 255 instances) int32."""
        h, w = self.sample_size(index)
        buf = np.empty((h // 4) * (w // 4) * 4, np.uint8)  # room for either type
        mw, mh, mt = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        self._check(self.lib.detfeed_loader_sample_mask_data(
            self.h, epoch, index, buf.ctypes.data, buf.nbytes, ctypes.byref(mw),
            ctypes.byref(mh), ctypes.byref(mt)),
            "sample_masks (epoch %d, index %d)" % (epoch, index))
        n = mh.value * mw.value
        return np.frombuffer(buf, MASK_DTYPES[mt.value], count=n).reshape(
            mh.value, mw.value).copy()

    def recipe(self, epoch, index):
        buf = ctypes.create_string_buffer(8192)
        self._check(self.lib.detfeed_loader_recipe_json(self.h, epoch, index, buf, 8192),
                    "recipe_json")
        return buf.value.decode()

    # -- batches ---------------------------------------------------------------
    def batches(self, epoch, count=None):
        """The first `count` batches of `epoch` (all when None) as dicts of
        copies: img (B x 3 x H x W u8, RGB), cls, bboxes, batch_idx,
        keypoints, masks, im_file, ori_shape, resized_shape."""
        self._check(self.lib.detfeed_loader_start(self.h, epoch), "start")
        out = []
        b = _p()
        while count is None or len(out) < count:
            rc = self.lib.detfeed_loader_next(self.h, ctypes.byref(b))
            if rc == 1:
                break
            self._check(rc, "next")
            try:
                out.append(self._batch(b.value))
            finally:
                self.lib.detfeed_loader_release(self.h, b.value)
        return out

    @staticmethod
    def _copy(ptr, count, dtype):
        if count == 0 or not ptr:
            return np.zeros((count,), dtype)
        nbytes = count * np.dtype(dtype).itemsize
        return np.frombuffer((ctypes.c_uint8 * nbytes).from_address(ptr), dtype).copy()

    def _batch(self, b):
        lib = self.lib
        h, w = ctypes.c_int(), ctypes.c_int()
        n = lib.detfeed_batch_size(b, ctypes.byref(h), ctypes.byref(w))
        size = ctypes.c_size_t()
        ptr = lib.detfeed_batch_images(b, ctypes.byref(size))
        img = self._copy(ptr, size.value, np.uint8).reshape(n, 3, h.value, w.value)
        k = lib.detfeed_batch_instances(b)
        out = {"img": img,
               "cls": self._copy(lib.detfeed_batch_cls(b), k, np.float32).reshape(k, 1),
               "bboxes": self._copy(lib.detfeed_batch_bboxes(b), 4 * k,
                                    np.float32).reshape(k, 4),
               "batch_idx": self._copy(lib.detfeed_batch_batch_idx(b), k, np.float32)}
        if self.kpt:
            nk = self.kpt[0] * 3
            out["keypoints"] = self._copy(lib.detfeed_batch_keypoints(b), k * nk,
                                          np.float32).reshape((k,) + self.kpt)
        mh, mw, mt = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        mp = lib.detfeed_batch_mask_data(b, ctypes.byref(mh), ctypes.byref(mw),
                                         ctypes.byref(mt))
        if mp:
            out["masks"] = self._copy(mp, n * mh.value * mw.value,
                                      MASK_DTYPES[mt.value]).reshape(n, mh.value, mw.value)
        out["im_file"] = tuple(lib.detfeed_batch_im_file(b, i).decode() for i in range(n))
        ori, res = (ctypes.c_int * 2)(), (ctypes.c_int * 2)()
        oris, ress = [], []
        for i in range(n):
            lib.detfeed_batch_shapes(b, i, ori, res)
            oris.append((ori[0], ori[1]))
            ress.append((res[0], res[1]))
        out["ori_shape"], out["resized_shape"] = tuple(oris), tuple(ress)
        return out
