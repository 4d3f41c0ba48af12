"""detfeed_warp_affine and detfeed_warp_perspective against OpenCV (cv2), the oracle.

- The cv2 build itself on a 0.3-pixel shift whose bytes are worked out by
  hand in tests/unit/test_warp.c (OpenCV 4.6-4.10's 1/32 fixed point gives
  175; a float blend, as in OpenCV 4.11, would give 178), so that a different OpenCV
  arithmetic is reported as such rather than as a detfeed bug. And the
  perspective column blocks: on matrices found by search, positions
  evaluated per pixel (M0 x + M1 y + M2) differ from cv2 while OpenCV's
  block grouping does not, so the check shows that the grouping matters.
- Through ctypes, both functions against cv2.warpAffine /
  cv2.warpPerspective (INTER_LINEAR, BORDER_CONSTANT) on:
  Ultralytics' RandomPerspective matrices (M = T S R P C built in float32
  as Ultralytics builds it, cv2 given the float32 M[:2] or M, detfeed the
  same values as double) on 1280x1280 mosaic canvases to 640x640, 640x640
  and 640x480 images to 640x640 (and 640x480), with the default hyperparameters
  and with rotation, shear and perspective; random matrices (rotation
  +-180, scale 0.25..2, shear, translation up to far outside, arbitrary
  doubles and float32-rounded ones) on random sizes (odd, 1-pixel sides,
  padded strides on both sides, whose padding must stay untouched);
  perspective with |p| from 1e-5 to 0.1, W crossing zero, W exactly zero
  on a column, heights below 16 (wider column blocks); identity, integer
  translations, singular matrices, NaN and infinite entries, translations
  beyond OpenCV's fixed-point range, exact rounding ties; every real image
  of the shared data;
  border 114 and random borders; random and real-image content. 0
  differing bytes required.
- Sources of 32767 pixels a side: cv2 refuses them, detfeed returns
  DETFEED_EINVAL.
- For information, the time of one 1280x1280 -> 640x640 warp with a default
  Ultralytics matrix, detfeed (ctypes) and cv2 on one thread, median of
  many runs.

Under a sanitizer build (--no-ctypes) the library cannot be loaded, so only
the cv2 build checks run.
"""
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import oracle_util as ou  # noqa: E402

BORDER = (114, 114, 114)


class Lib:
    def __init__(self, detfeed_bin):
        lib = ou.library(detfeed_bin)
        self.affine = lib.detfeed_warp_affine
        self.perspective = lib.detfeed_warp_perspective


def cv2_warp(cv2, img, M, dw, dh, border):
    """What Ultralytics calls: M as given (float32 or float64), INTER_LINEAR,
    BORDER_CONSTANT."""
    if M.shape[0] == 2:
        return cv2.warpAffine(img, M, (dw, dh), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=border)
    return cv2.warpPerspective(img, M, (dw, dh), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=border)


class Parity:
    """Runs one warp through both and keeps the totals per kind."""

    def __init__(self, t, cv2, np, lib):
        self.t, self.cv2, self.np, self.lib = t, cv2, np, lib
        self.now = {"affine": [0, 0, 0], "perspective": [0, 0, 0]}
        self.all = {"affine": [0, 0, 0], "perspective": [0, 0, 0]}

    def run(self, img, M, dw, dh, label, border=BORDER, pad_src=0, pad_dst=0):
        """img: HxWx3 uint8; M: 2x3 or 3x3, float32 or float64, as cv2 gets
        it (detfeed gets the same values as double)."""
        np, cv2 = self.np, self.cv2
        sh, sw = img.shape[:2]
        kind = "affine" if M.shape[0] == 2 else "perspective"
        if pad_src:
            big = np.zeros((sh, sw * 3 + pad_src), np.uint8)
            big[:, :sw * 3] = img.reshape(sh, sw * 3)
            src = big
        else:
            src = np.ascontiguousarray(img).reshape(sh, sw * 3)
        ds = dw * 3 + pad_dst
        out = np.full((dh, ds), 0xA5, np.uint8)
        md = np.ascontiguousarray(M, np.float64)
        bd = np.array(border, np.uint8)
        fn = self.lib.affine if kind == "affine" else self.lib.perspective
        rc = fn(src.ctypes.data, src.strides[0], sw, sh, out.ctypes.data, ds, dw, dh,
                md.ctypes.data, bd.ctypes.data)
        if not self.t.check(rc == 0, f"{label}: detfeed_warp_{kind} returned {rc}"):
            return
        want = cv2_warp(cv2, img, M, dw, dh, tuple(int(v) for v in border))
        want = want.reshape(dh, dw * 3)
        diff = int(np.count_nonzero(out[:, :dw * 3] != want))
        diff += int(np.count_nonzero(out[:, dw * 3:] != 0xA5))
        c = self.now[kind]
        c[0] += 1
        c[1] += want.size
        c[2] += diff
        self.t.check(diff == 0, f"{label}: {kind} {sw}x{sh} -> {dw}x{dh}, M = "
                                f"{md.ravel().tolist()}, border {tuple(border)}: "
                                f"{diff} bytes differ from cv2")

    def report(self, what):
        for kind, c in self.now.items():
            if c[0]:
                print(f"{what}, {kind}: {c[0]} cases, {c[1]} bytes compared, "
                      f"{c[2]} differ", flush=True)
            a = self.all[kind]
            for i in range(3):
                a[i] += c[i]
        self.now = {"affine": [0, 0, 0], "perspective": [0, 0, 0]}

    def total(self):
        for kind, a in self.all.items():
            print(f"total {kind}: {a[0]} cases, {a[1]} bytes compared, {a[2]} differ")
        bad = sum(a[2] for a in self.all.values())
        self.t.check(bad == 0, f"{bad} bytes differ in all")


# ---- matrices -----------------------------------------------------------------

def ultralytics_matrix(cv2, np, rng, w, h, size, degrees=0.0, translate=0.1, scale=0.5,
                       shear=0.0, perspective=0.0):
    """RandomPerspective.affine_transform's M (float32, evaluated left to
    right), for an input of w x h warped to size = (W, H)."""
    C = np.eye(3, dtype=np.float32)
    C[0, 2] = -w / 2
    C[1, 2] = -h / 2
    P = np.eye(3, dtype=np.float32)
    P[2, 0] = rng.uniform(-perspective, perspective)
    P[2, 1] = rng.uniform(-perspective, perspective)
    R = np.eye(3, dtype=np.float32)
    a = rng.uniform(-degrees, degrees)
    s = rng.uniform(1 - scale, 1 + scale)
    R[:2] = cv2.getRotationMatrix2D(angle=a, center=(0, 0), scale=s)
    S = np.eye(3, dtype=np.float32)
    S[0, 1] = math.tan(rng.uniform(-shear, shear) * math.pi / 180)
    S[1, 0] = math.tan(rng.uniform(-shear, shear) * math.pi / 180)
    T = np.eye(3, dtype=np.float32)
    T[0, 2] = rng.uniform(0.5 - translate, 0.5 + translate) * size[0]
    T[1, 2] = rng.uniform(0.5 - translate, 0.5 + translate) * size[1]
    M = T @ S @ R @ P @ C
    return M if perspective else M[:2]


def random_matrix(np, rng, sw, sh, dw, dh, kind, far=False, f32=False, p=1e-3):
    """Rotation +-180, scale 0.25..2, shear, translation that maps the source
    centre near the destination centre (or far from it)."""
    a = rng.uniform(-math.pi, math.pi)
    s = rng.uniform(0.25, 2.0)
    shx, shy = rng.uniform(-0.4, 0.4, 2)
    ca, sa = math.cos(a) * s, math.sin(a) * s
    M = np.array([[ca + shx * sa, sa + shx * ca, 0.0],
                  [-sa + shy * ca, ca - shy * sa, 0.0],
                  [0.0, 0.0, 1.0]])
    M[0, 2] = dw / 2 - (M[0, 0] * sw / 2 + M[0, 1] * sh / 2) + rng.uniform(-0.3, 0.3) * dw
    M[1, 2] = dh / 2 - (M[1, 0] * sw / 2 + M[1, 1] * sh / 2) + rng.uniform(-0.3, 0.3) * dh
    if far:
        M[:2, 2] += rng.choice([-1, 1], 2) * 10 ** rng.uniform(1, 10, 2)
    if kind == "perspective":
        M[2, :2] = rng.uniform(-p, p, 2)
    else:
        M = M[:2]
    return M.astype(np.float32) if f32 else M


def w_crossing_matrix(np, rng, dw, dh, exact_zero=False):
    """A forward matrix whose inverse's W is zero on a line through the
    destination. exact_zero: M = [[1,0,0],[0,1,0],[1/k,0,1]] with k a power
    of two below dw, which cv::invert turns exactly into W = 1 - x / k: W is
    exactly 0 at column k, where OpenCV divides by nothing and samples (0,
    0)."""
    if exact_zero:
        k = 2 ** int(rng.integers(0, max(1, int(math.log2(dw - 1)) + 1))) if dw > 2 else 1
        return np.array([[1.0, 0, 0], [0, 1.0, 0], [1.0 / k, 0, 1.0]])
    inv = np.array([[rng.uniform(0.5, 2), rng.uniform(-0.3, 0.3), rng.uniform(-20, 20)],
                    [rng.uniform(-0.3, 0.3), rng.uniform(0.5, 2), rng.uniform(-20, 20)],
                    [rng.uniform(-0.02, 0.02), rng.uniform(-0.02, 0.02), 0.0]])
    inv[2, 2] = -(inv[2, 0] * dw + inv[2, 1] * dh) * rng.uniform(0.2, 0.8)
    return np.linalg.inv(inv)


# Perspective matrices (640x640 output) whose positions depend on OpenCV's
# column blocks of 64: evaluated per pixel, or in blocks of 32 or 128,
# some positions move by 1/32 (found by search against cv2).
BLOCK_SENSITIVE = [
    [[0.6, 0.2, 4.7], [-0.2, 0.6, 5.1], [5e-05, -5e-05, 1.0]],
    [[0.5, 0.0, 2.1], [-0.2, 0.5, 3.2], [8e-05, 8e-05, 1.0]],
    [[0.5, -0.2, 9.4], [-0.30000000000000004, 0.5, 8.8], [-8e-05, -4e-05, 1.0]],
    [[1.1, -0.2, 2.6], [-0.2, 1.1, -5.1], [-1e-05, 4e-05, 1.0]],
    [[0.5, -0.1, -3.1], [-0.30000000000000004, 0.5, 4.5], [-1e-05, -1e-05, 1.0]],
]


# ---- a model of the perspective positions, for the block check ---------------

def invert3(np, m):
    """cv::invert(DECOMP_LU) of a 3x3 double matrix, in OpenCV's order."""
    a = [[float(v) for v in r] for r in m]
    d = (a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
         - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
         + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]))
    if d == 0:
        return [0.0] * 9
    d = 1.0 / d
    return [(a[1][1] * a[2][2] - a[1][2] * a[2][1]) * d,
            (a[0][2] * a[2][1] - a[0][1] * a[2][2]) * d,
            (a[0][1] * a[1][2] - a[0][2] * a[1][1]) * d,
            (a[1][2] * a[2][0] - a[1][0] * a[2][2]) * d,
            (a[0][0] * a[2][2] - a[0][2] * a[2][0]) * d,
            (a[0][2] * a[1][0] - a[0][0] * a[1][2]) * d,
            (a[1][0] * a[2][1] - a[1][1] * a[2][0]) * d,
            (a[0][1] * a[2][0] - a[0][0] * a[2][1]) * d,
            (a[0][0] * a[1][1] - a[0][1] * a[1][0]) * d]


def persp_positions(np, t, dw, dh, block):
    """1/32 positions (X, Y) of every destination pixel, with column blocks
    of `block` pixels (None: per pixel, M0 x + M1 y + M2). Finite cases
    only (no NaN), which is all the block check needs."""
    X = np.zeros((dh, dw), np.int64)
    Y = np.zeros((dh, dw), np.int64)
    block = block or dw
    for y in range(dh):
        for xb in range(0, dw, block):
            n = min(block, dw - xb)
            i = np.arange(n, dtype=np.float64)
            X0 = t[0] * xb + t[1] * y + t[2]
            Y0 = t[3] * xb + t[4] * y + t[5]
            W0 = t[6] * xb + t[7] * y + t[8]
            W = W0 + t[6] * i
            W = np.where(W != 0, 32.0 / np.where(W != 0, W, 1.0), 0.0)
            fx = np.clip((X0 + t[0] * i) * W, -2147483648.0, 2147483647.0)
            fy = np.clip((Y0 + t[3] * i) * W, -2147483648.0, 2147483647.0)
            X[y, xb:xb + n] = np.rint(fx).astype(np.int64)
            Y[y, xb:xb + n] = np.rint(fy).astype(np.int64)
    return X, Y


def persp_positions_per_pixel(np, t, dw, dh):
    xs = np.arange(dw, dtype=np.float64)
    X = np.zeros((dh, dw), np.int64)
    Y = np.zeros((dh, dw), np.int64)
    for y in range(dh):
        W = t[6] * xs + t[7] * y + t[8]
        W = np.where(W != 0, 32.0 / np.where(W != 0, W, 1.0), 0.0)
        X[y] = np.rint(np.clip((t[0] * xs + t[1] * y + t[2]) * W, -2.0**31, 2.0**31 - 1))
        Y[y] = np.rint(np.clip((t[3] * xs + t[4] * y + t[5]) * W, -2.0**31, 2.0**31 - 1))
    return X, Y


def sample_model(np, src, X, Y, border):
    """OpenCV's remap of 1/32 positions (opencv-exact.md 4c-4e), in NumPy."""
    H, W = src.shape[:2]
    sx = np.clip(X >> 5, -32768, 32767)
    sy = np.clip(Y >> 5, -32768, 32767)
    fx, fy = X & 31, Y & 31
    w = [(32 - fy) * (32 - fx) * 32, (32 - fy) * fx * 32, fy * (32 - fx) * 32,
         fy * fx * 32]
    zero = (fx == 0) & (fy == 0)
    w[0] = np.where(zero, 32767, w[0])
    w[3] = np.where(zero, 1, w[3])
    b = np.array(border, np.int64)
    acc = np.zeros(X.shape + (3,), np.int64)
    for k, (dx, dy) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)]):
        tx, ty = sx + dx, sy + dy
        inside = (tx >= 0) & (tx < W) & (ty >= 0) & (ty < H)
        v = np.broadcast_to(b, X.shape + (3,)).copy()
        v[inside] = src[ty[inside], tx[inside]]
        acc += v * w[k][..., None]
    out = (acc + 16384) >> 15
    outside = (sx >= W) | (sx + 1 < 0) | (sy >= H) | (sy + 1 < 0)
    out[outside] = b
    return out.astype(np.uint8)


# ---- checks -------------------------------------------------------------------

def check_oracle_build(t, cv2, np):
    src = np.array([[[0, 0, 0], [255, 255, 255]]], np.uint8)
    M = np.array([[1, 0, 0.3], [0, 1, 0]])
    got = cv2_warp(cv2, src, M, 2, 1, BORDER)[0, :, 0].tolist()
    t.check(got == [36, 175],
            f"cv2 {cv2.__version__} shifts (0, 255) by 0.3 pixel to {got}, not [36, 175]: "
            "this OpenCV build is not the reference arithmetic (4.6-4.10 fixed point)")


def check_blocks(t, cv2, np):
    """The column blocks matter: per-pixel positions disagree with cv2 on
    these matrices, OpenCV's blocks of 64 agree."""
    rng = np.random.default_rng(64)
    src = rng.integers(0, 256, (700, 700, 3), dtype=np.uint8)
    naive_diff = blocks_diff = 0
    for m in BLOCK_SENSITIVE:
        M = np.array(m)
        want = cv2_warp(cv2, src, M, 640, 640, BORDER)
        tinv = invert3(np, M)
        X, Y = persp_positions(np, tinv, 640, 640, 64)
        blocks_diff += int(np.count_nonzero(sample_model(np, src, X, Y, BORDER) != want))
        X, Y = persp_positions_per_pixel(np, tinv, 640, 640)
        naive_diff += int(np.count_nonzero(sample_model(np, src, X, Y, BORDER) != want))
    print(f"perspective column blocks: {len(BLOCK_SENSITIVE)} matrices; per-pixel "
          f"positions differ from cv2 in {naive_diff} bytes, blocks of 64 in {blocks_diff}")
    t.check(blocks_diff == 0 and naive_diff > 0,
            "cv2's perspective positions are not those of 64-column blocks")


def content(np, rng, real, w, h):
    """Random bytes, or real images tiled to w x h."""
    if real is None or rng.random() < 0.5:
        return rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    img = real[int(rng.integers(len(real)))]
    reps = (-(-h // img.shape[0]), -(-w // img.shape[1]), 1)
    off = (int(rng.integers(img.shape[0])), int(rng.integers(img.shape[1])))
    img = np.roll(np.tile(img, reps), off, axis=(0, 1))
    return np.ascontiguousarray(img[:h, :w])


def random_border(np, rng):
    return BORDER if rng.random() < 0.5 else tuple(int(v) for v in rng.integers(0, 256, 3))


def check_ultralytics(p, cv2, np, real):
    rng = np.random.default_rng(8)
    hyp = [dict(), dict(degrees=10.0, shear=2.0), dict(degrees=180.0, shear=10.0, scale=0.9),
           dict(perspective=0.0001), dict(perspective=0.001, degrees=45.0, shear=5.0)]
    for i in range(150):
        h = hyp[i % len(hyp)]
        if i % 3 == 2:  # no mosaic: 640x640 or 640x480 to 640x640, 640x480 as is
            w, hh, size = [(640, 640, (640, 640)), (640, 480, (640, 640)),
                           (640, 480, (640, 480))][(i // 3) % 3]
        else:  # mosaic canvas 1280x1280, border -320: output 640x640
            w, hh, size = 1280, 1280, (640, 640)
        img = content(np, rng, real, w, hh)
        M = ultralytics_matrix(cv2, np, rng, w, hh, size, **h)
        p.run(img, M, size[0], size[1], f"ultralytics {h}")
    p.report("Ultralytics RandomPerspective matrices (float32), mosaic 1280->640, "
             "640x640 and 640x480 to 640x640")


def check_random(p, np, real):
    rng = np.random.default_rng(2025)
    for i in range(4000):
        kind = "perspective" if i % 2 else "affine"
        lim = (4, 40, 300)[i % 3]
        sw, sh, dw, dh = (int(v) for v in rng.integers(1, lim + 1, 4))
        if i % 11 == 5:  # wide and low: perspective blocks of 1024 / H columns
            dw, dh = int(rng.integers(100, 1500)), int(rng.integers(1, 16))
        pp = [1e-5, 1e-4, 1e-3, 1e-2, 0.1][i % 5]
        M = random_matrix(np, rng, sw, sh, dw, dh, kind, far=(i % 9 == 4),
                          f32=(i % 4 == 1), p=pp)
        pad = i % 5 == 0
        p.run(content(np, rng, real, sw, sh), M, dw, dh, f"random {i}",
              random_border(np, rng), int(rng.integers(1, 30)) if pad else 0,
              int(rng.integers(1, 30)) if pad else 0)
    p.report("random matrices and sizes (odd, 1-pixel, padded strides, far outside, "
             "float32-rounded)")


def check_source_limit(t, cv2, np, lib):
    """OpenCV's remap() refuses sources of 32767 pixels a side; detfeed
    returns DETFEED_EINVAL (-1) for them and accepts 32766."""
    for sw, sh, ok in [(32767, 1, False), (1, 32767, False), (32766, 1, True),
                       (1, 32766, True)]:
        img = np.zeros((sh, sw, 3), np.uint8)
        out = np.zeros((2, 2, 3), np.uint8)
        for M in (np.array([[1.0, 0, 0.5], [0, 1.0, 0]]), np.eye(3)):
            try:
                cv2_warp(cv2, img, M, 2, 2, BORDER)
                cv2_ok = True
            except cv2.error:
                cv2_ok = False
            md = np.ascontiguousarray(M, np.float64)
            bd = np.array(BORDER, np.uint8)
            fn = lib.affine if M.shape[0] == 2 else lib.perspective
            rc = fn(img.ctypes.data, sw * 3, sw, sh, out.ctypes.data, 6, 2, 2,
                    md.ctypes.data, bd.ctypes.data)
            t.check(cv2_ok == ok and rc == (0 if ok else -1),
                    f"source {sw}x{sh}: cv2 {'accepts' if cv2_ok else 'refuses'} it, "
                    f"detfeed returns {rc}")
    print("source size limit: cv2 refuses 32767 a side, detfeed too (EINVAL)")


def check_special(p, np, real):
    rng = np.random.default_rng(77)
    sizes = [(1, 1), (1, 7), (9, 1), (2, 2), (3, 2), (17, 13), (64, 64), (640, 480)]
    for sw, sh in sizes:
        img = content(np, rng, real, sw, sh)
        for dw, dh in [(sw, sh), (1, 1), (33, 5), (70, 70)]:
            mats = [
                np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]),  # identity
                np.array([[1.0, 0, 3], [0, 1.0, -2], [0, 0, 1.0]]),  # integer shifts
                np.array([[1.0, 0, -5], [0, 1.0, 7], [0, 0, 1.0]]),
                np.array([[1.0, 2, 3], [2, 4, 5], [1, 2, 3]]),  # singular
                np.zeros((3, 3)),
                np.array([[1.0, 0, 1e7], [0, 1.0, 3e6], [0, 0, 1.0]]),  # beyond cvRound
                np.array([[1.0, 0, -5e9], [0.5, 1.0, 3e6], [0, 0, 1.0]]),
                np.array([[1e-9, 0, 5], [0, 1e-9, 5], [0, 0, 1.0]]),  # extreme scales
                np.array([[1e12, 0, 5], [0, 1e12, 5], [0, 0, 1.0]]),
                np.array([[np.nan, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]),  # NaN, infinity
                np.array([[1.0, 0, np.inf], [0, 1.0, 0], [0, 0, 1.0]]),
                np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1e308]]),
                np.array([[0.5, 0, 0.25], [0, 2.0, 0.75], [0, 0, 1.0]]),  # exact fractions
                np.array([[1.0, 0, 16.5 / 1024], [0, 1.0, -16.5 / 1024], [0, 0, 1.0]]),
                np.array([[1.0, 0, 1 / 64], [0, 1.0, 3 / 64], [0, 0, 1.0]]),  # ties
            ]
            for M in mats:
                p.run(img, M[:2].copy(), dw, dh, "special", random_border(np, rng))
                p.run(img, M, dw, dh, "special", random_border(np, rng))
    p.report("identity, integer shifts, singular, beyond fixed point, NaN and infinity, "
             "rounding ties")


def check_w_crossing(p, np, real):
    rng = np.random.default_rng(31)
    for i in range(120):
        sw, sh, dw, dh = (int(v) for v in rng.integers(2, 260, 4))
        M = w_crossing_matrix(np, rng, dw, dh, exact_zero=i % 3 == 0)
        p.run(content(np, rng, real, sw, sh), M, dw, dh, "W crossing zero",
              random_border(np, rng))
    for m in BLOCK_SENSITIVE:
        p.run(content(np, rng, real, 700, 700), np.array(m), 640, 640, "block sensitive")
    p.report("perspective with W crossing zero (and exactly zero), block-sensitive")


def check_real(p, cv2, np, paths):
    rng = np.random.default_rng(128)
    for i, path in enumerate(paths):
        img = cv2.imread(path, cv2.IMREAD_COLOR)
        h, w = img.shape[:2]
        kind = "perspective" if i % 2 else "affine"
        M = random_matrix(np, rng, w, h, w, h, kind, f32=i % 3 == 0, p=1e-3)
        p.run(img, M, w, h, os.path.basename(path), random_border(np, rng))
        M = random_matrix(np, rng, w, h, 640, 640, kind, p=1e-4)
        p.run(img, M, 640, 640, os.path.basename(path))
    p.report(f"real images ({len(paths)}), to their own size and to 640x640")


def speed(cv2, np, lib, real):
    """Median time of one default-hyperparameter mosaic warp, 1280^2 -> 640^2."""
    rng = np.random.default_rng(5)
    canvas = content(np, rng, real, 1280, 1280)
    M = ultralytics_matrix(cv2, np, rng, 1280, 1280, (640, 640))
    md = np.ascontiguousarray(M, np.float64)
    bd = np.array(BORDER, np.uint8)
    out = np.zeros((640, 640, 3), np.uint8)

    def ours():
        lib.affine(canvas.ctypes.data, canvas.strides[0], 1280, 1280, out.ctypes.data,
                   1920, 640, 640, md.ctypes.data, bd.ctypes.data)

    def theirs():
        cv2.warpAffine(canvas, M, (640, 640), borderValue=BORDER)

    res = {}
    for name, fn in (("detfeed", ours), ("cv2", theirs)):
        fn()
        ts = []
        for _ in range(100):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        res[name] = float(np.median(ts)) * 1e3
    print(f"speed (information): 1280x1280 -> 640x640 warpAffine, Ultralytics default "
          f"matrix, one thread, median of 100: detfeed {res['detfeed']:.3f} ms, "
          f"cv2 {res['cv2']:.3f} ms")


def main():
    args = ou.parse_args()
    cv2, np = ou.require_cv2()
    cv2.setNumThreads(1)
    t = ou.Counter("test_warp_oracle")
    print(f"oracle: OpenCV {cv2.__version__}, NumPy {np.__version__}")
    check_oracle_build(t, cv2, np)
    check_blocks(t, cv2, np)
    ou.finish_if_no_ctypes(args, t, "the warp checks")
    lib = Lib(args.detfeed)
    paths = ou.real_images(args.data)
    t.check(len(paths) >= 100, f"only {len(paths)} real images found under {args.data}")
    real = [cv2.imread(path, cv2.IMREAD_COLOR) for path in paths[:20]]
    check_source_limit(t, cv2, np, lib)
    p = Parity(t, cv2, np, lib)
    check_ultralytics(p, cv2, np, real)
    check_random(p, np, real)
    check_special(p, np, real)
    check_w_crossing(p, np, real)
    check_real(p, cv2, np, paths)
    p.total()
    speed(cv2, np, lib, real)
    t.finish()


if __name__ == "__main__":
    main()
