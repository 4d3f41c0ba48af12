"""detfeed_warp_affine_cv and detfeed_warp_perspective_cv against the real
OpenCV 5.0 / 5.1 wheels (opencv-python-headless 5.0.0.93, 5.1.0.95), the
oracle. Which comparisons run is chosen from cv2.__version__; any other cv2
(or no cv2 or NumPy) skips with exit code 77. ctest runs it once per wheel,
with PYTHONPATH=build-py/cv/VERSION (scripts/oracle_env.sh installs them).

- The cv2 build itself, on two shifts by 0.3 pixel worked out by hand in
  tests/unit/test_warp.c: (0, 255) gives (34, 178) in 5.x (4.x: 36, 175),
  and (46, 1) gives 15 with OpenCV's fused AVX2 build and 14 with its SSE
  build (cv2.setUseOptimized(False)), so that another OpenCV arithmetic is
  reported as such rather than as a detfeed bug.
- Through ctypes, every case in each configuration of the installed cv2:
    5.0  default                      detfeed {5.0, cpu AUTO}: the AVX2
                                      build on an AVX2 CPU
    5.0  setUseOptimized(False)       detfeed {5.0, cpu SSE}
    5.1  ipp.setUseIPP(False)         detfeed {5.1, cpu AUTO, ipp 0}
    5.1  setUseOptimized(False)       detfeed {5.1, cpu SSE, ipp 0}
    5.1  default (IPP)                detfeed {5.1, cpu of IPP's code, ipp 1}
  where IPP's code is read from cv2.ipp.getIppVersion(): "AVX2 (l9)" (or
  AVX-512) is cpu AUTO, "SSE4.2 (y8)" (OPENCV_IPP=sse42, which ctest also
  runs) is cpu SSE. 0 differing bytes required in every configuration, the
  IPP model on every matrix included; the counts are printed per group.
- Cases (border 114 unless said): 1280x1280 -> 640x640 scale and
  translation (Ultralytics' default matrices in float32, random scales
  0.5-1.5, float32-exact scales and translations); 1280 -> 640 with
  rotation and shear; perspective 1280 -> 640 and on odd sizes (rotation
  up to 0.3 rad, scale 0.5-1.5, perspective terms up to 5e-4); odd sizes
  (3..900 source, 1..700 destination) with any rotation and scale 0.3-2;
  random general 2x3 matrices; special ones: NaN and infinite
  entries, w exactly 0 on a column, singular matrices, translations far
  outside, sources of 1 and 2 pixels a side, destination widths around
  the vector blocks of 8 and 16, random borders; and crafted ones for IPP's
  edge rule: small sources (4..30 px) magnified 10-50x with any rotation,
  affine and perspective (most pixels have a tap outside), sources whose
  inverse positions sweep slowly across column 0, W - 2 and W - 1 or row
  0 and H - 1 (both sides of each, within 1e-7..1e-2 pixel), shears with
  one zero term, a perspective whose last row is 0 0 1, a single bright
  pixel and gradients rotated; and for IPP's scale kernel (group
  scale-edge): small sources magnified 3-300x with either axis flipped,
  destinations running from just inside W - 2 or H - 2 into the edge band
  or staying in it (its general kernel), 2-pixel sources.
- --seed S draws other random cases (ctest: 5).
- cv2 with IPP gives the same bytes with 1, 3 and 8 threads (OpenCV hands
  IPP a stripe of rows per thread; the model has no stripe origin).
- For information: how many bytes the cv2 configurations differ from one
  another on the same cases.

Under a sanitizer build (--no-ctypes) only the cv2 build check runs.
"""
import contextlib
import ctypes
import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import oracle_util as ou  # noqa: E402
from test_warp_oracle import ultralytics_matrix  # noqa: E402

BORDER = (114, 114, 114)


class Lib:
    def __init__(self, detfeed_bin):
        self.lib = lib = ou.library(detfeed_bin)
        self.affine = lib.detfeed_warp_affine_cv
        self.perspective = lib.detfeed_warp_perspective_cv

    def stack(self, version, cpu, ipp):
        """The detfeed_cv of a stack given by names ("5.1", "sse", 0)."""
        return self.lib.cv(version, cpu, ipp)


# ---- the cv2 configurations -----------------------------------------------------

@contextlib.contextmanager
def configured(cv2, what):
    """cv2 as `what` says ("default", "no-opt", "no-ipp"), restored after."""
    if what == "no-opt":
        cv2.setUseOptimized(False)
    elif what == "no-ipp":
        cv2.ipp.setUseIPP(False)
    try:
        yield
    finally:
        cv2.setUseOptimized(True)
        cv2.ipp.setUseIPP(True)


def ipp_cpu(cv2):
    """detfeed's cpu setting for the code IPP dispatched to ("auto" for
    its AVX2 or AVX-512 code, "sse" for SSE4.2), and IPP's own name."""
    name = cv2.ipp.getIppVersion() if hasattr(cv2.ipp, "getIppVersion") else ""
    return ("sse" if "SSE4.2" in name or "(y8)" in name else "auto"), name


def comparisons(version, ipp="auto"):
    """(label, cv2 configuration, detfeed stack) per configuration."""
    if version == "5.0":
        return [("5.0 default (AVX2 build on this CPU)", "default", ("5.0", "auto", 0)),
                ("5.0 setUseOptimized(False) (SSE build)", "no-opt", ("5.0", "sse", 0))]
    return [("5.1 ipp.setUseIPP(False) (float kernel)", "no-ipp", ("5.1", "auto", 0)),
            ("5.1 setUseOptimized(False) (SSE build, no IPP)", "no-opt", ("5.1", "sse", 0)),
            ("5.1 default (IPP, cpu %s)" % ipp, "default", ("5.1", ipp, 1))]


def cv2_warp(cv2, img, M, dw, dh, border):
    f = cv2.warpAffine if M.shape[0] == 2 else cv2.warpPerspective
    return f(img, M, (dw, dh), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
             borderValue=border)


def check_oracle_build(t, cv2, np, version):
    """The hand-worked shifts of tests/unit/test_warp.c."""
    M = np.array([[1, 0, 0.3], [0, 1, 0]])
    res = {}
    for what in ("default", "no-opt"):
        with configured(cv2, what):
            for pq in ((0, 255), (46, 1)):
                src = np.array([[[pq[0]] * 3, [pq[1]] * 3]], np.uint8)
                res[what, pq] = cv2_warp(cv2, src, M, 2, 1, BORDER)[0, :, 0].tolist()
    ok = res["default", (0, 255)] == [34, 178] and res["no-opt", (46, 1)] == [66, 14]
    t.check(ok, f"cv2 {cv2.__version__}: shifts by 0.3 give {res}, not (34, 178) and, "
                "unoptimised, (66, 14): not OpenCV 5's float kernel")
    fused = res["default", (46, 1)] == [66, 15]
    print(f"cv2 {cv2.__version__} build check: (0, 255) -> {res['default', (0, 255)]}, "
          f"(46, 1) -> {res['default', (46, 1)]} by default ("
          f"{'fused: the AVX2 build' if fused else 'unfused: the SSE build'}), "
          f"{res['no-opt', (46, 1)]} with setUseOptimized(False)")


# ---- cases --------------------------------------------------------------------------

class Case:
    def __init__(self, group, img, M, dw, dh, border=BORDER):
        self.group, self.img, self.M, self.dw, self.dh = group, img, M, dw, dh
        self.border = border


def rotation(np, a, s, sw, sh, dw, dh, shift=(0.0, 0.0)):
    """Forward matrix: rotate by a, scale s about the source centre, to the
    destination centre plus shift."""
    ca, sa = math.cos(a) * s, math.sin(a) * s
    M = np.array([[ca, sa, 0.0], [-sa, ca, 0.0], [0.0, 0.0, 1.0]])
    M[0, 2] = dw / 2 - (M[0, 0] * sw / 2 + M[0, 1] * sh / 2) + shift[0]
    M[1, 2] = dh / 2 - (M[1, 0] * sw / 2 + M[1, 1] * sh / 2) + shift[1]
    return M


def random_img(np, rng, w, h):
    return rng.integers(0, 256, (h, w, 3), dtype=np.uint8)


def big_cases(cv2, np, rng):
    """1280x1280 -> 640x640: scale and translation, rotation and shear,
    perspective."""
    out = []
    canvas = [random_img(np, rng, 1280, 1280) for _ in range(3)]
    for i in range(16):  # Ultralytics' default hyperparameters: float32, scale only
        M = ultralytics_matrix(cv2, np, rng, 1280, 1280, (640, 640))
        out.append(Case("scale", canvas[i % 3], M, 640, 640))
    for i in range(16):  # random scales and translations in double
        s = rng.uniform(0.5, 1.5)
        M = np.array([[s, 0, rng.uniform(-700, 100)], [0, s * rng.uniform(0.9, 1.1),
                                                       rng.uniform(-700, 100)]])
        out.append(Case("scale", canvas[i % 3], M, 640, 640))
    for i in range(16):  # float32-exact scales and translations
        s = int(rng.integers(32, 97)) / 64
        M = np.array([[s, 0, -float(rng.integers(0, 1200)) / 4],
                      [0, s, -float(rng.integers(0, 1200)) / 4]], np.float32)
        out.append(Case("scale", canvas[i % 3], M, 640, 640))
    hyp = [dict(degrees=10.0, shear=2.0), dict(degrees=180.0, shear=10.0, scale=0.9),
           dict(degrees=3.0)]
    for i in range(24):
        M = ultralytics_matrix(cv2, np, rng, 1280, 1280, (640, 640), **hyp[i % 3])
        out.append(Case("rotate", canvas[i % 3], M, 640, 640))
    for i in range(20):
        M = rotation(np, rng.uniform(-0.3, 0.3), rng.uniform(0.5, 1.5), 1280, 1280, 640, 640,
                     rng.uniform(-100, 100, 2))
        M[2, :2] = rng.uniform(-5e-4, 5e-4, 2)
        out.append(Case("perspective", canvas[i % 3], M, 640, 640))
    return out


def odd_cases(np, rng):
    """Odd sizes, any rotation, general 2x3 matrices, perspective."""
    out = []
    for i in range(120):
        sw, sh = (int(v) for v in rng.integers(3, 901, 2))
        dw, dh = (int(v) for v in rng.integers(1, 701, 2))
        M = rotation(np, rng.uniform(-math.pi, math.pi), rng.uniform(0.3, 2.0), sw, sh, dw, dh,
                     rng.uniform(-0.2, 0.2, 2) * (dw, dh))
        if i % 4 == 3:  # scale and translation only
            M[0, 1] = M[1, 0] = 0
        if i % 3 == 1:
            M[2, :2] = rng.uniform(-5e-4, 5e-4, 2)
            out.append(Case("perspective", random_img(np, rng, sw, sh), M, dw, dh))
        else:
            out.append(Case("scale" if i % 4 == 3 else "rotate", random_img(np, rng, sw, sh),
                            M[:2].astype(np.float32) if i % 5 == 0 else M[:2], dw, dh))
    for i in range(60):  # general 2x3 matrices
        sw, sh = (int(v) for v in rng.integers(3, 500, 2))
        dw, dh = (int(v) for v in rng.integers(1, 500, 2))
        A = rng.uniform(-2.0, 2.0, (2, 2))
        t = rng.uniform(-1, 1, 2) * (dw, dh) - A @ (sw / 2, sh / 2) + (dw / 2, dh / 2)
        M = np.hstack([A, t[:, None]])
        border = tuple(int(v) for v in rng.integers(0, 256, 3)) if i % 2 else BORDER
        out.append(Case("rotate", random_img(np, rng, sw, sh), M, dw, dh, border))
    return out


def special_cases(np, rng):
    """Non-finite positions, singular matrices, far translations, 1- and
    2-pixel sources, widths around the vector blocks."""
    out = []
    mats = [[[np.nan, 0, 0], [0, 1, 0], [0, 0, 1]], [[1, 0, np.inf], [0, 1, 0], [0, 0, 1]],
            [[1, 0, 0], [0, 1, 0], [1 / 8, 0, 1]], [[1, 0, 0], [0, 1, 0], [1 / 16, 0, 1]],
            [[1, 0, 0], [0, 1, 0], [1 / 4, 0, 1]], [[1, 0, 0], [0, 1, 0], [0, 1 / 8, 1]],
            [[1, 0.5, 0], [0, 1, 0], [0.1, 0.05, 1]], [[1, 2, 3], [2, 4, 5], [1, 2, 3]],
            [[0, 0, 0], [0, 0, 0], [0, 0, 0]], [[1, 0, 1e12], [0, 1, 0], [0, 0, 1]],
            [[1e-9, 0, 5], [0, 1e-9, 5], [0, 0, 1]], [[0.5, 0, 0.25], [0, 2, 0.75], [0, 0, 1]]]
    sizes = [(60, 50), (1, 1), (2, 2), (1, 7), (9, 1), (33, 20)]
    for k, m in enumerate(mats):
        sw, sh = sizes[k % len(sizes)]
        img = random_img(np, rng, sw, sh)
        M = np.array(m, np.float64)
        for dw, dh in ((40, 3), (17, 17)):
            out.append(Case("special", img, M[:2].copy(), dw, dh))
            out.append(Case("special", img, M, dw, dh))
    for dw in (1, 7, 8, 9, 15, 16, 17, 23, 24, 31, 33, 47):  # tails of 8 and 16
        sw, sh = (int(v) for v in rng.integers(1, 60, 2))
        img = random_img(np, rng, sw, sh)
        M = rotation(np, rng.uniform(-math.pi, math.pi), rng.uniform(0.5, 2), sw, sh, dw, 9)
        border = tuple(int(v) for v in rng.integers(0, 256, 3))
        out.append(Case("rotate", img, M[:2], dw, 9, border))
        M[2, :2] = rng.uniform(-1e-2, 1e-2, 2)
        out.append(Case("perspective", img, M, dw, 9, border))
    return out


def forward(np, inv):
    """The forward matrix (3x3) whose inverse is about `inv`: cv2 and
    detfeed invert it back, so the positions are inv's to a few ulps."""
    return np.linalg.inv(np.asarray(inv, np.float64))


def crafted_cases(np, rng):
    """Cases aimed at IPP's general kernel: magnified small sources (edge
    pixels everywhere), positions sweeping slowly across the columns and
    rows where its edge rule switches, shears with one zero term, affine
    matrices handed to warpPerspective, a bright pixel and gradients."""
    out = []
    for i in range(24):  # small sources, magnified 10-50x, any rotation
        sw, sh = (int(v) for v in rng.integers(4, 31, 2))
        s = rng.uniform(0.02, 0.1)
        M = rotation(np, rng.uniform(-math.pi, math.pi), 1 / s, sw, sh, 300, 200,
                     rng.uniform(-20, 20, 2))
        group = "rotate"
        if i % 2:
            M[2, :2] = rng.uniform(-2e-4, 2e-4, 2)
            group = "perspective"
        out.append(Case(group, random_img(np, rng, sw, sh), M if i % 2 else M[:2], 300,
                        200))
    # the inverse position crosses an edge slowly along x, and fast along y:
    # axis 0 = x, 1 = y; edge e as 0, W - 2 or W - 1 (H for y)
    for i in range(20):
        sw, sh = (int(v) for v in rng.integers(260, 520, 2))
        axis, which = i % 2, (i // 2) % 5
        d = 10.0 ** rng.uniform(-7, -2)
        lim = (sw, sh)[axis]
        edge = (0, lim - 2, lim - 1, lim - 1, 0)[which]
        slow = [2 * d / 320, rng.uniform(-1e-3, 1e-3) * d, edge - d]
        fast = [rng.uniform(-0.01, 0.01), rng.uniform(0.3, 0.9), rng.uniform(0, 20)]
        if axis:  # y sweeps along x: x is the fast axis, indexed by y
            fast = [rng.uniform(0.3, 0.9), rng.uniform(-0.01, 0.01), rng.uniform(0, 20)]
        inv = [slow, fast, [0, 0, 1]] if axis == 0 else [fast, slow, [0, 0, 1]]
        M = forward(np, inv)
        group = "edge"
        if which == 4:  # a perspective
            M[2, :2] = rng.uniform(-1e-5, 1e-5, 2)
        out.append(Case(group, random_img(np, rng, sw, sh), M if which == 4 else M[:2],
                        320, 240))
    for i in range(8):  # one zero off-diagonal term; affine as a perspective
        sw, sh = (int(v) for v in rng.integers(50, 400, 2))
        dw, dh = (int(v) for v in rng.integers(50, 400, 2))
        M = rotation(np, 0.0, rng.uniform(0.5, 2.0), sw, sh, dw, dh)
        M[i % 2, 1 - i % 2] = rng.uniform(-0.3, 0.3)
        out.append(Case("rotate", random_img(np, rng, sw, sh), M if i >= 4 else M[:2],
                        dw, dh))
    one = np.zeros((40, 50, 3), np.uint8)
    one[17, 23] = (255, 200, 100)
    gx = np.broadcast_to(np.arange(256, dtype=np.uint8)[None, :, None], (64, 256, 3))
    gy = np.ascontiguousarray(np.transpose(gx, (1, 0, 2)))
    for img in (one, np.ascontiguousarray(gx), gy):
        sh, sw = img.shape[:2]
        for k in range(3):
            M = rotation(np, rng.uniform(-math.pi, math.pi), rng.uniform(0.7, 6.0), sw,
                         sh, 200, 160, rng.uniform(-10, 10, 2))
            if k == 2:
                M[2, :2] = rng.uniform(-1e-3, 1e-3, 2)
            out.append(Case("crafted", img, M if k == 2 else M[:2], 200, 160))
    return out


def scale_cases(np, rng):
    """Cases aimed at IPP's scale kernel (inverse with M1 == M3 == 0): small
    sources magnified 3-300x with either axis flipped (its edge rows and
    columns everywhere), destinations whose rows or columns run from just inside W - 2
    or H - 2 (the last position that keeps its scale kernel) into the edge
    band, or stay in the band (its general kernel), and 2-pixel
    sources with a position at 0 exactly."""
    out = []

    def case(sw, sh, dw, dh, inv):
        out.append(Case("scale-edge", random_img(np, rng, sw, sh), forward(np, inv)[:2], dw,
                        dh))

    for i in range(24):
        sw, sh = (int(v) for v in rng.integers(3, 13, 2))
        dw, dh = (int(v) for v in rng.integers(150, 400, 2))
        z = 10.0 ** rng.uniform(0.5, 2.5, 2) * rng.choice([-1.0, 1.0], 2)
        t = [sw / 2 - dw / 2 / z[0] + rng.uniform(-1, 1),
             sh / 2 - dh / 2 / z[1] + rng.uniform(-1, 1)]
        case(sw, sh, dw, dh, [[1 / z[0], 0, t[0]], [0, 1 / z[1], t[1]], [0, 0, 1]])
    for i in range(16):  # one axis from size - 2 (or 0) into the band
        sw, sh = (int(v) for v in rng.integers(20, 60, 2))
        dw, dh = 400, 300
        size, n = ((sw, dw), (sh, dh))[i % 2]
        # 1e-9 inside W - 2 (H - 2) or 0: at the bound itself IPP decides by
        # its own rounding (see warp5.c)
        a0, a1 = (size - 2 - 1e-9, size - 1e-4) if i % 4 < 2 else (1e-9, -0.9999)
        if i % 8 >= 4:
            a0, a1 = a1, a0
        if i >= 12:  # stays in the band: the general kernel
            a0, a1 = (size - 1.999, size - 1e-4) if i % 4 < 2 else (-1e-3, -0.9999)
        edge = [(a1 - a0) / (n - 1), 0, a0]
        other = [rng.uniform(-0.3, 0.3), 0, 3.0]
        other[2] = (sh, sw)[i % 2] / 2 - other[0] * (dh, dw)[i % 2] / 2
        rows = [edge, other] if i % 2 == 0 else [other, edge]
        rows[1][0], rows[1][1] = 0, rows[1][0]
        case(sw, sh, dw, dh, rows + [[0, 0, 1]])
    for k in range(4):  # 2-pixel sources, column or row 0 at position 0
        case(2, 2 + k, 300, 200, [[1.3 / 299, 0, 0.0], [0, (1.5 + k) / 199, -0.2 * k],
                                  [0, 0, 1]])
    return out


def check_threads(t, cv2, np, cases):
    """cv2's IPP warps give the same bytes whatever the number of threads
    (row stripes)."""
    n0 = cv2.getNumThreads()
    diff = 0
    try:
        for case in cases:
            want = cv2_warp(cv2, case.img, case.M, case.dw, case.dh, case.border)
            for n in (1, 3, 8):
                cv2.setNumThreads(n)
                got = cv2_warp(cv2, case.img, case.M, case.dw, case.dh, case.border)
                diff += int(np.count_nonzero(got != want))
            cv2.setNumThreads(n0)
    finally:
        cv2.setNumThreads(n0)
    print(f"cv2 {cv2.__version__} default: {len(cases)} cases with 1, 3 and 8 threads "
          f"against {n0}: {diff} bytes differ")
    t.check(diff == 0, f"cv2's warp depends on the number of threads ({diff} bytes)")


# ---- the comparison -------------------------------------------------------------------

def run_detfeed(np, lib, case, stack):
    sh, sw = case.img.shape[:2]
    src = np.ascontiguousarray(case.img)
    out = np.full((case.dh, case.dw, 3), 0xA5, np.uint8)
    md = np.ascontiguousarray(case.M, np.float64)
    bd = np.array(case.border, np.uint8)
    fn = lib.affine if case.M.shape[0] == 2 else lib.perspective
    rc = fn(src.ctypes.data, sw * 3, sw, sh, out.ctypes.data, case.dw * 3, case.dw, case.dh,
            md.ctypes.data, bd.ctypes.data, ctypes.byref(lib.stack(*stack)))
    return rc, out


class Totals:
    """cases, bytes compared, bytes differing, per comparison and group."""

    def __init__(self):
        self.n = {}

    def add(self, key, size, diff):
        c = self.n.setdefault(key, [0, 0, 0])
        c[0] += 1
        c[1] += size
        c[2] += diff

    def get(self, key):
        return self.n.get(key, [0, 0, 0])


def compare_case(t, cv2, np, lib, i, case, comps, tot):
    """One case in every configuration; cv2's configurations are also
    compared with one another (for information)."""
    wants = []
    for label, what, stack in comps:
        with configured(cv2, what):
            want = cv2_warp(cv2, case.img, case.M, case.dw, case.dh, case.border)
        for what0, want0 in wants:
            tot.add(("cross", what0, what), want.size, int(np.count_nonzero(want0 != want)))
        wants.append((what, want))
        rc, got = run_detfeed(np, lib, case, stack)
        if not t.check(rc == 0, f"{label}: case {i} ({case.group}) returned {rc}"):
            continue
        diff = int(np.count_nonzero(got != want))
        tot.add((label, case.group), want.size, diff)
        sh, sw = case.img.shape[:2]
        t.check(diff == 0, f"{label}: case {i} ({case.group}) {sw}x{sh} -> "
                           f"{case.dw}x{case.dh}, M = {case.M.ravel().tolist()}, "
                           f"border {case.border}: {diff} bytes differ from cv2")


def report(t, tot, comps, groups):
    for label, what, stack in comps:
        c = [sum(tot.get((label, g))[k] for g in groups) for k in range(3)]
        print(f"{label}: {c[0]} cases, {c[1]} bytes compared, {c[2]} differ")
        for g in groups:
            c = tot.get((label, g))
            print(f"    {g}: {c[0]} cases, {c[1]} bytes, {c[2]} differ")
    for i in range(len(comps)):
        for j in range(i + 1, len(comps)):
            c = tot.get(("cross", comps[i][1], comps[j][1]))
            print(f"cv2 {comps[i][1]} vs {comps[j][1]}: {c[2]} of {c[1]} bytes differ "
                  "(information)")


def main():
    args = ou.parse_args(lambda ap: ap.add_argument(
        "--seed", type=int, default=5, help="seed of the random cases (ctest: 5); the "
        "crafted cases take seed + 34"))
    cv2, np = ou.require_cv2()
    version = ".".join(cv2.__version__.split(".")[:2])
    if version not in ("5.0", "5.1"):
        print(f"SKIP: cv2 {cv2.__version__} is not OpenCV 5.0 or 5.1; run with "
              "PYTHONPATH=build-py/cv/5.0.0.93 or build-py/cv/5.1.0.95 "
              "(scripts/oracle_env.sh installs them)")
        sys.exit(ou.SKIP)
    t = ou.Counter(f"test_warp5_oracle ({version})")
    print(f"oracle: OpenCV {cv2.__version__}, NumPy {np.__version__}, "
          f"{cv2.getNumThreads()} threads")
    check_oracle_build(t, cv2, np, version)
    ou.finish_if_no_ctypes(args, t, "the warp checks")
    lib = Lib(args.detfeed)
    rng = np.random.default_rng(args.seed)
    cases = big_cases(cv2, np, rng) + odd_cases(np, rng) + special_cases(np, rng)
    cases += crafted_cases(np, np.random.default_rng(args.seed + 34))
    cases += scale_cases(np, np.random.default_rng(args.seed + 35))
    groups = {}
    for c in cases:
        groups[c.group] = groups.get(c.group, 0) + 1
    print(f"{len(cases)} cases: " + ", ".join(f"{n} {g}" for g, n in groups.items()))
    cpu, ipp_name = ipp_cpu(cv2)
    if version == "5.1":
        print(f"IPP: {ipp_name} (detfeed cpu {cpu})")
        check_threads(t, cv2, np, [c for c in cases if c.group in ("rotate", "perspective")
                                   and c.dw * c.dh >= 200 * 200][:12])
    comps = comparisons(version, cpu)
    tot = Totals()
    for i, case in enumerate(cases):
        compare_case(t, cv2, np, lib, i, case, comps, tot)
    report(t, tot, comps, list(groups))
    t.finish()


if __name__ == "__main__":
    main()
