"""Shared helpers of the oracle tests (and of the conformance suite and the
bench scripts): argument parsing, skipping without a module, libdetfeed
through the package's one ctypes module, the cv2 reference of Ultralytics'
RandomHSV, and a counter that prints the closing line."""
import argparse
import importlib
import os
import sys

SKIP = 77  # ctest's skip code (SKIP_RETURN_CODE in tests/CMakeLists.txt)
# The repository's Python package, whose detfeed._lib declares libdetfeed.
PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")


def parse_args(extra=None):
    """The oracle tests' common options; `extra(ap)` may add more."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--detfeed", required=True, help="path of the detfeed binary")
    ap.add_argument("--data", required=True, help="the shared data folder")
    ap.add_argument("--no-ctypes", action="store_true",
                    help="skip the checks that load libdetfeed.so (sanitizer builds)")
    if extra:
        extra(ap)
    return ap.parse_args()


def require(modules, hint):
    """Imports each of `modules` (names) and returns them, or exits SKIP
    saying which import failed and `hint` (how to get it). Any exception
    counts: a cv2 built for another NumPy raises more than ImportError."""
    out = []
    for name in modules:
        try:
            out.append(importlib.import_module(name))
        except Exception as e:  # noqa: BLE001 - ImportError, or a broken install
            print("SKIP: %s needed (%s: %s); %s" % (", ".join(modules), type(e).__name__, e,
                                                     hint))
            sys.exit(SKIP)
    return out


def require_cv2():
    """cv2 and numpy (imported), or exits SKIP saying why."""
    return require(("cv2", "numpy"), "install python3-opencv python3-numpy")


def finish_if_no_ctypes(args, counter, what):
    """Under a sanitizer build (--no-ctypes) libdetfeed cannot be loaded
    into Python: says that `what` (the checks through ctypes) are skipped
    and ends the test with what it checked so far (counter.finish())."""
    if args.no_ctypes:
        print(f"note: {what} (through ctypes) are skipped: a sanitizer build's "
              "libdetfeed.so cannot be loaded into Python")
        counter.finish()


def capi():
    """The package's ctypes module, detfeed._lib (from this repository)."""
    path = os.path.abspath(PYTHON_DIR)
    if path not in sys.path:
        sys.path.insert(0, path)
    from detfeed import _lib
    return _lib


def random_hsv(img, r):
    """Ultralytics RandomHSV with the post-multiplied gains r = (dh, ds, dv),
    written as its source does it, in place on a BGR uint8 image."""
    import cv2
    import numpy as np
    r = np.asarray(r, dtype=np.float64)
    hue, sat, val = cv2.split(cv2.cvtColor(img, cv2.COLOR_BGR2HSV))
    x = np.arange(0, 256, dtype=r.dtype)
    lut_hue = ((x + r[0] * 180) % 180).astype(np.uint8)
    lut_sat = np.clip(x * (1 + r[1]), 0, 255).astype(np.uint8)
    lut_val = np.clip(x * (1 + r[2]), 0, 255).astype(np.uint8)
    lut_sat[0] = 0
    im_hsv = cv2.merge((cv2.LUT(hue, lut_hue), cv2.LUT(sat, lut_sat),
                        cv2.LUT(val, lut_val)))
    cv2.cvtColor(im_hsv, cv2.COLOR_HSV2BGR, dst=img)
    return img


def mosaic_canvas(np, imgs, s, xc, yc):
    """Ultralytics' 4-tile Mosaic image: a 2s x 2s canvas of 114 with the
    tiles placed around (xc, yc). Returns the canvas and each tile's
    (padw, padh) label offset."""
    img4 = np.full((s * 2, s * 2, 3), 114, dtype=np.uint8)
    pads = []
    for i, img in enumerate(imgs):
        h, w = img.shape[:2]
        if i == 0:
            x1a, y1a, x2a, y2a = max(xc - w, 0), max(yc - h, 0), xc, yc
            x1b, y1b, x2b, y2b = w - (x2a - x1a), h - (y2a - y1a), w, h
        elif i == 1:
            x1a, y1a, x2a, y2a = xc, max(yc - h, 0), min(xc + w, s * 2), yc
            x1b, y1b, x2b, y2b = 0, h - (y2a - y1a), min(w, x2a - x1a), h
        elif i == 2:
            x1a, y1a, x2a, y2a = max(xc - w, 0), yc, xc, min(s * 2, yc + h)
            x1b, y1b, x2b, y2b = w - (x2a - x1a), 0, w, min(y2a - y1a, h)
        else:
            x1a, y1a, x2a, y2a = xc, yc, min(xc + w, s * 2), min(s * 2, yc + h)
            x1b, y1b, x2b, y2b = 0, 0, min(w, x2a - x1a), min(y2a - y1a, h)
        img4[y1a:y2a, x1a:x2a] = img[y1b:y2b, x1b:x2b]
        pads.append((x1a - x1b, y1a - y1b))
    return img4, pads


def numpy_luts(r):
    import numpy as np
    r = np.asarray(r, dtype=np.float64)
    x = np.arange(0, 256, dtype=r.dtype)
    lh = ((x + r[0] * 180) % 180).astype(np.uint8)
    ls = np.clip(x * (1 + r[1]), 0, 255).astype(np.uint8)
    lv = np.clip(x * (1 + r[2]), 0, 255).astype(np.uint8)
    ls[0] = 0
    return np.stack([lh, ls, lv])


def library_path(detfeed_bin):
    """libdetfeed.so beside the detfeed binary (the build folder)."""
    return os.path.join(os.path.dirname(os.path.abspath(detfeed_bin)), "libdetfeed.so")


def library(detfeed_bin):
    """libdetfeed.so of the detfeed binary's build, loaded through
    detfeed._lib (its functions as attributes; see _lib.Library)."""
    return capi().load(library_path(detfeed_bin))


def real_images(data_dir):
    """Every image under the shared data folder, sorted."""
    out = []
    for root, _, files in os.walk(data_dir):
        out += [os.path.join(root, f) for f in files
                if f.lower().endswith((".jpg", ".jpeg", ".png"))]
    return sorted(out)


class Counter:
    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL: {what}", flush=True)
        return ok

    def finish(self):
        print(f"{self.name}: {self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)
