"""The colour core against OpenCV (cv2) and NumPy, the oracle.

- detfeed_hsv_lut (through ctypes) against NumPy's float64 tables, for many
  random gains and the edges.
- `detfeed color` against Ultralytics' RandomHSV procedure run with cv2, on
  every real image of the shared data (cropped to a width that is a multiple
  of 32, as every YOLO training image is) and on random images of widths
  32..640 in steps of 32, with seeded gains: 0 differing bytes required.
- The captured pixels of tests/unit/test_captured.c against cv2.
- The cv2 build itself against the golden HSV->BGR hash, so that a different
  OpenCV arithmetic is reported as such rather than as a detfeed bug.
"""
import ctypes
import hashlib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import oracle_util as ou  # noqa: E402

GOLDEN_HSV2BGR = "5f2643cdbdd25a04cf28db7ca8d0c83ef4b76f4a625319409ce1afd55856d2db"


def check_oracle_build(t, cv2, np):
    k = np.arange(1 << 24, dtype=np.uint32)
    img = np.stack([k >> 16, (k >> 8) & 255, k & 255], axis=1).astype(np.uint8)
    out = cv2.cvtColor(img.reshape(4096, 4096, 3), cv2.COLOR_HSV2BGR)
    ok = hashlib.sha256(out.tobytes()).hexdigest() == GOLDEN_HSV2BGR
    t.check(ok, f"cv2 {cv2.__version__} HSV2BGR differs from the golden hash: "
                "this OpenCV build is not the reference arithmetic")
    return ok


def check_luts(t, lib, np):
    fn = lib.detfeed_hsv_lut
    fn.argtypes = [ctypes.c_double] * 3 + [ctypes.c_void_p]
    rng = np.random.default_rng(2024)
    gains = [(0, 0, 0), (-1e-17, 0, 0), (0.015, 0.7, 0.4), (-0.015, -0.7, -0.4)]
    gains += [tuple(rng.uniform(-1, 1, 3) * [0.015, 0.7, 0.4]) for _ in range(3000)]
    gains += [tuple(rng.uniform(-3, 3, 3)) for _ in range(500)]
    bad = 0
    out = np.zeros((3, 256), np.uint8)
    for g in gains:
        fn(*g, out.ctypes.data)
        bad += not np.array_equal(out, ou.numpy_luts(g))
    t.check(bad == 0, f"{bad} of {len(gains)} LUT sets differ from NumPy")


def run_color(detfeed, src, dst, r):
    g = ",".join(repr(float(x)) for x in r)
    return subprocess.run([detfeed, "color", "--gains", g, src, dst],
                          capture_output=True, text=True)


def compare(t, cv2, np, detfeed, img, r, label, tmp):
    src, dst = os.path.join(tmp, "in.png"), os.path.join(tmp, "out.png")
    cv2.imwrite(src, img)
    p = run_color(detfeed, src, dst, r)
    if not t.check(p.returncode == 0, f"{label}: detfeed color failed: {p.stderr}"):
        return 0, 0
    got = cv2.imread(dst, cv2.IMREAD_COLOR)
    want = ou.random_hsv(img.copy(), r)
    diff = int(np.count_nonzero(got != want))
    t.check(diff == 0, f"{label}: {diff} bytes differ from cv2 RandomHSV (gains {r})")
    return want.size, diff


def check_images(t, cv2, np, detfeed, data, tmp):
    rng = np.random.default_rng(7)
    total = differ = 0
    paths = ou.real_images(data)
    t.check(len(paths) >= 100, f"only {len(paths)} real images found under {data}")
    for path in paths:
        img = cv2.imread(path, cv2.IMREAD_COLOR)
        w = img.shape[1] // 32 * 32
        img = np.ascontiguousarray(img[:, :w])
        r = rng.uniform(-1, 1, 3) * [0.015, 0.7, 0.4]
        n, d = compare(t, cv2, np, detfeed, img, r, os.path.basename(path), tmp)
        total, differ = total + n, differ + d
    print(f"real images: {len(paths)} images, {total} bytes compared, {differ} differ")
    total = differ = 0
    extremes = [(0.015, 0.7, 0.4), (-0.015, -0.7, -0.4), (0, 0, 0), (-1e-17, 0.3, -0.2)]
    for i, w in enumerate(range(32, 641, 32)):
        h = int(rng.integers(1, 97))
        img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        r = extremes[i] if i < len(extremes) else rng.uniform(-1, 1, 3) * [0.015, 0.7, 0.4]
        n, d = compare(t, cv2, np, detfeed, img, r, f"random {w}x{h}", tmp)
        total, differ = total + n, differ + d
    print(f"random images: 20 widths, {total} bytes compared, {differ} differ")


def check_captured(t, cv2, np):
    img = np.zeros((1, 32, 3), np.uint8)
    img[0, 0::2] = (62, 188, 73)
    img[0, 1::2] = (80, 82, 188)
    out = ou.random_hsv(img, (0.01, -0.3, 0.2))
    t.check(out[0, 0].tolist() == [120, 225, 126] and out[0, 1].tolist() == [135, 140, 225],
            f"captured pixels: cv2 gives {out[0, :2].tolist()}")


def main():
    args = ou.parse_args()
    ou.require_cv2()
    import cv2
    import numpy as np
    cv2.setNumThreads(1)
    t = ou.Counter("test_color_oracle")
    print(f"oracle: OpenCV {cv2.__version__}, NumPy {np.__version__}")
    check_oracle_build(t, cv2, np)
    if args.no_ctypes:
        print("note: LUT check through ctypes skipped (sanitizer build)")
    else:
        check_luts(t, ctypes.CDLL(ou.library_path(args.detfeed)), np)
    check_captured(t, cv2, np)
    with tempfile.TemporaryDirectory() as tmp:
        check_images(t, cv2, np, args.detfeed, args.data, tmp)
    t.finish()


if __name__ == "__main__":
    main()
