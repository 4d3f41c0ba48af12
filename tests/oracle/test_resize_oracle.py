"""detfeed_resize_linear and detfeed_load_size against OpenCV (cv2), the oracle.

- The cv2 build itself on one column whose expected bytes are worked out by
  hand in tests/unit/test_resize.c (the staged vertical rounding on a row of
  one element), so that a different OpenCV arithmetic is reported as such
  rather than as a detfeed bug.
- detfeed_load_size (through ctypes) against Ultralytics' formula written in
  Python (math.ceil of the double product) for every real image at imgsz 320,
  480, 640 and 1280, and for many random sizes.
- detfeed_resize_linear (through ctypes) against cv2.resize(INTER_LINEAR),
  1 and 3 channels, on: every real image of the shared data to its load
  size at each imgsz (BGR and grey); random sizes (shrink, enlarge, mixed);
  exact 2x shrinks (OpenCV's switch to INTER_AREA) and near misses; 3x, 4x,
  5x and mixed integer shrinks; every output width 1..80 (all tails of the
  16-byte SIMD step); 1-pixel sources and destinations; very large ratios;
  padded strides on both sides (padding must stay untouched); random and
  real-image content. 0 differing bytes required.

Under a sanitizer build (--no-ctypes) the library cannot be loaded, so only
the cv2 build check runs.
"""
import ctypes
import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import oracle_util as ou  # noqa: E402

IMGSZ = (640, 320, 480, 1280)


class Lib:
    def __init__(self, detfeed_bin):
        lib = ou.library(detfeed_bin)
        self.resize = lib.detfeed_resize_linear
        self.load = lib.detfeed_load_size

    def load_size(self, w, h, imgsz):
        ow, oh = ctypes.c_int(-1), ctypes.c_int(-1)
        self.load(w, h, imgsz, ctypes.byref(ow), ctypes.byref(oh))
        return ow.value, oh.value


def ultralytics_size(w, h, imgsz):
    """BaseDataset.load_image's arithmetic."""
    r = imgsz / max(h, w)
    if r != 1:
        return min(math.ceil(w * r), imgsz), min(math.ceil(h * r), imgsz)
    return w, h


class Parity:
    """Runs one size pair through both and keeps the totals."""

    def __init__(self, t, cv2, np, lib):
        self.t, self.cv2, self.np, self.lib = t, cv2, np, lib
        self.pairs, self.compared, self.differ = set(), 0, 0
        self.all_pairs, self.all_compared, self.all_differ = set(), 0, 0

    def run(self, img, dw, dh, label, pad_src=0, pad_dst=0):
        np, cv2 = self.np, self.cv2
        sh, sw = img.shape[:2]
        cn = 1 if img.ndim == 2 else img.shape[2]
        if pad_src:
            # A view whose rows are further apart than their bytes.
            big = np.zeros((sh, sw * cn + pad_src), np.uint8)
            big[:, :sw * cn] = img.reshape(sh, sw * cn)
            src = big[:, :sw * cn]
        else:
            src = np.ascontiguousarray(img).reshape(sh, sw * cn)
        ds = dw * cn + pad_dst
        out = np.full((dh, ds), 0xA5, np.uint8)
        rc = self.lib.resize(src.ctypes.data, src.strides[0], sw, sh, out.ctypes.data, ds,
                             dw, dh, cn)
        if not self.t.check(rc == 0, f"{label}: detfeed_resize_linear returned {rc}"):
            return
        want = cv2.resize(img, (dw, dh), interpolation=cv2.INTER_LINEAR).reshape(dh, dw * cn)
        diff = int(np.count_nonzero(out[:, :dw * cn] != want))
        diff += int(np.count_nonzero(out[:, dw * cn:] != 0xA5))
        self.pairs.add((sw, sh, dw, dh, cn))
        self.compared += want.size
        self.differ += diff
        self.t.check(diff == 0, f"{label}: {sw}x{sh} -> {dw}x{dh}, {cn} channel(s): "
                                f"{diff} bytes differ from cv2.resize")

    def report(self, what):
        print(f"{what}: {len(self.pairs)} size pairs, {self.compared} bytes compared, "
              f"{self.differ} differ", flush=True)
        self.all_pairs |= self.pairs
        self.all_compared += self.compared
        self.all_differ += self.differ
        self.pairs, self.compared, self.differ = set(), 0, 0

    def total(self):
        print(f"total: {len(self.all_pairs)} distinct size pairs, {self.all_compared} "
              f"bytes compared, {self.all_differ} differ")
        self.t.check(self.all_differ == 0, f"{self.all_differ} bytes differ in all")


def check_oracle_build(t, cv2, np):
    col = np.array([[1], [6]], np.uint8)
    got = cv2.resize(col, (1, 5), interpolation=cv2.INTER_LINEAR).ravel().tolist()
    t.check(got == [1, 1, 4, 5, 6],
            f"cv2 {cv2.__version__} resizes the column (1, 6) to {got}, not "
            "[1, 1, 4, 5, 6]: this OpenCV build is not the reference arithmetic")


def check_load_size(t, lib, cv2, np, paths):
    bad, n = 0, 0
    for path in paths:
        img = cv2.imread(path, cv2.IMREAD_COLOR)
        h, w = img.shape[:2]
        for s in IMGSZ:
            n += 1
            bad += lib.load_size(w, h, s) != ultralytics_size(w, h, s)
    rng = np.random.default_rng(5)
    sizes = [(848, 636), (750, 525), (100, 3), (3, 1000), (1, 1), (1, 1000)]
    sizes += [tuple(int(v) for v in rng.integers(1, 5000, 2)) for _ in range(20000)]
    for w, h in sizes:
        for s in IMGSZ:
            n += 1
            got, want = lib.load_size(w, h, s), ultralytics_size(w, h, s)
            if got != want:
                bad += 1
                if bad < 10:
                    print(f"  load size {w}x{h} at {s}: {got}, want {want}")
    print(f"load sizes: {n} checked, {bad} differ")
    t.check(bad == 0, f"{bad} of {n} load sizes differ from Ultralytics' formula")


def check_real(p, cv2, lib, paths):
    for path in paths:
        img = cv2.imread(path, cv2.IMREAD_COLOR)
        grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        h, w = img.shape[:2]
        name = os.path.basename(path)
        for s in IMGSZ:
            dw, dh = lib.load_size(w, h, s)
            p.run(img, dw, dh, f"{name} at {s}")
            p.run(grey, dw, dh, f"{name} grey at {s}")
    p.report(f"real images ({len(paths)}) at their load sizes {IMGSZ}")


def content(np, rng, real, sw, sh, cn):
    """Random bytes, or a real image cut or tiled to sw x sh."""
    if real is None or rng.random() < 0.5:
        shape = (sh, sw) if cn == 1 else (sh, sw, 3)
        return rng.integers(0, 256, shape, dtype=np.uint8)
    img = real[int(rng.integers(len(real)))]
    reps = (-(-sh // img.shape[0]), -(-sw // img.shape[1]), 1)
    img = np.tile(img, reps)[:sh, :sw]
    return np.ascontiguousarray(img if cn == 3 else img[:, :, 1])


def check_synthetic(p, np, real):
    rng = np.random.default_rng(2025)

    def run(sw, sh, dw, dh, label, cns=(1, 3), pad=False):
        for cn in cns:
            img = content(np, rng, real, int(sw), int(sh), cn)
            ps = int(rng.integers(1, 40)) if pad else 0
            pd = int(rng.integers(1, 40)) if pad else 0
            p.run(img, int(dw), int(dh), label, ps, pd)

    for i in range(700):
        lim = (12, 120, 700)[i % 3]
        sw, sh, dw, dh = rng.integers(1, lim + 1, 4)
        if i % 4 == 1:   # shrink both ways
            dw, dh = max(1, sw // int(rng.integers(1, 6))), max(1, sh // int(rng.integers(1, 6)))
        elif i % 4 == 2:  # enlarge both ways
            sw, sh = max(1, dw // int(rng.integers(1, 6))), max(1, dh // int(rng.integers(1, 6)))
        run(sw, sh, dw, dh, "random", pad=i % 5 == 0)
    p.report("random sizes (shrink, enlarge, mixed; some padded strides)")

    for i in range(150):
        dw, dh = rng.integers(1, 400, 2) if i > 3 else (i + 1, 4 - i)
        run(2 * dw, 2 * dh, dw, dh, "exact 2x", pad=i % 4 == 0)
        if i % 3 == 0:  # near misses stay bilinear
            run(2 * dw, 2 * dh + 1, dw, dh, "2x / near 2x")
            run(2 * dw + 1, 2 * dh, dw, dh, "near 2x / 2x")
            run(2 * dw, dh, dw, dh, "2x / 1x")
            run(2 * dw, 2 * dh, dw + 1, dh, "near 2x")
    for k, m in [(3, 3), (4, 4), (5, 5), (2, 3), (3, 2), (4, 2), (2, 4), (1, 2), (6, 6)]:
        for _ in range(12):
            dw, dh = rng.integers(1, 200, 2)
            run(k * dw, m * dh, dw, dh, f"{k}x{m} integer shrink")
    p.report("integer shrinks (exact 2x, near 2x, 3x..6x, mixed)")

    for dw in range(1, 81):
        run(int(rng.integers(1, 300)), 37, dw, 29, "tail width", pad=dw % 7 == 0)
        run(int(rng.integers(1, 40)), 5, dw, 11, "tail width, enlarged")
    p.report("output widths 1..80 (every tail of the 16-byte step)")

    for i in range(120):
        a, b = (int(v) for v in rng.integers(1, 600, 2))
        run(*[(1, a, b, 1 + i % 50), (a, 1, 1 + i % 50, b), (a, b, 1, 1 + i % 7),
              (a, b, 1 + i % 7, 1), (1, 1, a, b), (a, b, 1, 1)][i % 6], "1 pixel")
    big = [(4000, 3, 1, 1), (3, 4000, 2, 1), (1, 1, 1000, 700), (2, 2, 1500, 2),
           (3000, 2000, 7, 5), (5, 7, 3000, 2000), (4032, 3024, 640, 480),
           (997, 613, 640, 394), (6000, 4, 5, 5000), (1, 3000, 3000, 1)]
    for sw, sh, dw, dh in big:
        run(sw, sh, dw, dh, "large ratio")
    p.report("1-pixel sides and very large ratios")


def main():
    args = ou.parse_args()
    cv2, np = ou.require_cv2()
    cv2.setNumThreads(1)
    t = ou.Counter("test_resize_oracle")
    print(f"oracle: OpenCV {cv2.__version__}, NumPy {np.__version__}")
    check_oracle_build(t, cv2, np)
    ou.finish_if_no_ctypes(args, t, "the resize checks")
    lib = Lib(args.detfeed)
    paths = ou.real_images(args.data)
    t.check(len(paths) >= 100, f"only {len(paths)} real images found under {args.data}")
    check_load_size(t, lib, cv2, np, paths)
    p = Parity(t, cv2, np, lib)
    check_real(p, cv2, lib, paths)
    real = [cv2.imread(path, cv2.IMREAD_COLOR) for path in paths[:20]]
    check_synthetic(p, np, real)
    p.total()
    t.finish()


if __name__ == "__main__":
    main()
