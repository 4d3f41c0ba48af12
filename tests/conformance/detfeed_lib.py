"""The parts of libdetfeed the conformance suite drives, through the
package's one ctypes module (python/detfeed/_lib.py).

The suite loads the library it is given (--lib) rather than the Python
package's copy, so that a ctest run checks the library of its own build:
detfeed._lib.load(path) makes it the process's library, the one the
package's own code (ratio_pad) then uses too. Each wrapper raises
DetfeedError with the loader's message when a call fails.
"""
import ctypes
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
import oracle_util as ou  # noqa: E402

capi = ou.capi()
DetfeedError = capi.DetfeedError
# detfeed_mask_type (its value is the element size) as NumPy dtypes.
MASK_DTYPES = {capi.MASK_U8: np.uint8, capi.MASK_I32: np.int32}


class Library:
    """libdetfeed at `path`, loaded through detfeed._lib (`lib`: its
    functions)."""

    def __init__(self, path):
        self.lib = capi.load(path)
        self.path = path

    def version(self):
        return self.lib.version()

    def uniform(self, seed, slot, epoch, index):
        """The uniform double of (seed, slot, epoch, index): the value every
        random parameter of a sample is made from."""
        return self.lib.detfeed_uniform(seed, slot, epoch, index)

    def epoch_order(self, seed, epoch, n):
        order = (ctypes.c_uint64 * n)()
        self.lib.check(self.lib.detfeed_epoch_order(seed, epoch, n, order), "epoch_order")
        return [int(x) for x in order]


class Loader:
    """One detfeed_loader: settings by name, open, samples and batches."""

    def __init__(self, lib):
        self.L = lib
        self.lib = lib.lib
        self.h = ctypes.c_void_p()
        self._check(self.lib.detfeed_loader_create(ctypes.byref(self.h), 0), "create")
        self.ds = None

    def close(self):
        if self.h.value:
            self.lib.detfeed_loader_destroy(self.h)
            self.h = ctypes.c_void_p()

    def _check(self, rc, what):
        msg = self.lib.detfeed_loader_last_error(self.h).decode() if self.h.value else ""
        return self.lib.check(rc, what, msg)

    # -- settings ------------------------------------------------------------
    def set(self, name, value):
        """Any setting by name with a text value (detfeed_loader_set)."""
        self.lib.loader_set(self.h, name, value)

    def set_split(self, split):
        self._check(self.lib.detfeed_loader_set_split(self.h, split.encode()), "split")

    def open(self, data):
        self._check(self.lib.detfeed_loader_open(self.h, data.encode()), "open")
        self.ds = self.lib.detfeed_loader_dataset(self.h)
        k, d = ctypes.c_int(), ctypes.c_int()
        self.lib.detfeed_dataset_kpt_shape(self.ds, ctypes.byref(k), ctypes.byref(d))
        self.kpt = (k.value, 3) if k.value else None  # keypoints come out as (x, y, v)
        self.task = capi.TASKS[self.lib.detfeed_dataset_task(self.ds)]

    def set_rect_order(self, order):
        """Validation: the order of the images by aspect ratio, as the
        reference sorted them."""
        arr = (ctypes.c_uint64 * len(order))(*order)
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
        """The sample's recipe as a dict (detfeed._lib.Library.recipe)."""
        return self.lib.recipe(self.h, epoch, index)

    # -- batches ---------------------------------------------------------------
    def batches(self, epoch, count=None):
        """The first `count` batches of `epoch` (all when None) as dicts of
        copies: img (B x 3 x H x W u8, RGB), cls, bboxes, batch_idx,
        keypoints, masks, im_file, ori_shape, resized_shape."""
        self._check(self.lib.detfeed_loader_start(self.h, epoch), "start")
        out = []
        b = ctypes.c_void_p()
        while count is None or len(out) < count:
            rc = self.lib.detfeed_loader_next(self.h, ctypes.byref(b))
            if rc == capi.NEXT_END:
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
