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
    5.1  default (IPP)                detfeed {5.1, cpu AUTO, ipp 1}
  0 differing bytes required, except the IPP model on matrices other than
  scale and translation (IPP is closed source; the model leaves about one
  byte in a million off by one): their count is printed and must stay
  below MAX_IPP_PER_MILLION.
- Cases (border 114 unless said): 1280x1280 -> 640x640 scale and
  translation (Ultralytics' default matrices in float32, random scales
  0.5-1.5, float32-exact scales and translations); 1280 -> 640 with
  rotation and shear; perspective 1280 -> 640 and on odd sizes (rotation
  up to 0.3 rad, scale 0.5-1.5, perspective terms up to 5e-4); odd sizes
  (3..900 source, 1..700 destination) with any rotation and scale 0.3-2;
  random general 2x3 matrices; and special ones: NaN and infinite
  entries, w exactly 0 on a column, singular matrices, translations far
  outside, sources of 1 and 2 pixels a side, destination widths around
  the vector blocks of 8 and 16, random borders.
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
# Spec: 49 of 45 million bytes (about 1 per million) on such matrices.
MAX_IPP_PER_MILLION = 10.0


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


def comparisons(version):
    """(label, cv2 configuration, detfeed stack, exact) per configuration;
    exact is False for the IPP model."""
    if version == "5.0":
        return [("5.0 default (AVX2 build on this CPU)", "default", ("5.0", "auto", 0), True),
                ("5.0 setUseOptimized(False) (SSE build)", "no-opt", ("5.0", "sse", 0), True)]
    return [("5.1 ipp.setUseIPP(False) (float kernel)", "no-ipp", ("5.1", "auto", 0), True),
            ("5.1 setUseOptimized(False) (SSE build, no IPP)", "no-opt", ("5.1", "sse", 0),
             True),
            ("5.1 default (IPP)", "default", ("5.1", "auto", 1), False)]


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


def invert_affine(m):
    """cv::warpAffine's inversion (enough to tell M1 == M3 == 0)."""
    D = m[0][0] * m[1][1] - m[0][1] * m[1][0]
    D = 1.0 / D if D != 0 else 0.0
    return [m[1][1] * D, m[0][1] * -D, m[1][0] * -D, m[0][0] * D]


def ipp_exact(case):
    """The cases the IPP model reproduces exactly: affine with M1 == M3 == 0
    after inversion, and sources of 1 pixel a side (5.1 does not give them
    to IPP: its float kernel runs)."""
    if min(case.img.shape[:2]) < 2:
        return True
    if case.M.shape[0] != 2:
        return False
    inv = invert_affine([[float(v) for v in r] for r in case.M])
    return inv[1] == 0 and inv[2] == 0


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
    for label, what, stack, exact in comps:
        with configured(cv2, what):
            want = cv2_warp(cv2, case.img, case.M, case.dw, case.dh, case.border)
        for what0, want0 in wants:
            tot.add(("cross", what0, what), want.size, int(np.count_nonzero(want0 != want)))
        wants.append((what, want))
        rc, got = run_detfeed(np, lib, case, stack)
        if not t.check(rc == 0, f"{label}: case {i} ({case.group}) returned {rc}"):
            continue
        diff = int(np.count_nonzero(got != want))
        key = "exact" if exact or ipp_exact(case) else "model"
        tot.add((label, key), want.size, diff)
        if key == "exact":
            sh, sw = case.img.shape[:2]
            t.check(diff == 0, f"{label}: case {i} ({case.group}) {sw}x{sh} -> "
                               f"{case.dw}x{case.dh}, M = {case.M.ravel().tolist()}, "
                               f"border {case.border}: {diff} bytes differ from cv2")


def report(t, tot, comps):
    for label, what, stack, exact in comps:
        c = tot.get((label, "exact"))
        print(f"{label}: {c[0]} cases, {c[1]} bytes compared, {c[2]} differ"
              + (" (scale and translation, 1-pixel sources: the exact part of the IPP "
                 "model)" if not exact else ""))
        if exact:
            continue
        c = tot.get((label, "model"))
        per_m = c[2] / c[1] * 1e6 if c[1] else 0.0
        print(f"{label}: {c[0]} cases of other matrices, {c[1]} bytes compared, {c[2]} "
              f"differ ({per_m:.2f} per million; IPP model, bound {MAX_IPP_PER_MILLION:g})")
        t.check(per_m <= MAX_IPP_PER_MILLION,
                f"{label}: {per_m:.2f} differing bytes per million on non-scale matrices, "
                f"above {MAX_IPP_PER_MILLION:g}")
    for i in range(len(comps)):
        for j in range(i + 1, len(comps)):
            c = tot.get(("cross", comps[i][1], comps[j][1]))
            print(f"cv2 {comps[i][1]} vs {comps[j][1]}: {c[2]} of {c[1]} bytes differ "
                  "(information)")


def main():
    args = ou.parse_args()
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
    rng = np.random.default_rng(5)
    cases = big_cases(cv2, np, rng) + odd_cases(np, rng) + special_cases(np, rng)
    groups = {}
    for c in cases:
        groups[c.group] = groups.get(c.group, 0) + 1
    print(f"{len(cases)} cases: " + ", ".join(f"{n} {g}" for g, n in groups.items()))
    comps = comparisons(version)
    tot = Totals()
    for i, case in enumerate(cases):
        compare_case(t, cv2, np, lib, i, case, comps, tot)
    report(t, tot, comps)
    t.finish()


if __name__ == "__main__":
    main()
