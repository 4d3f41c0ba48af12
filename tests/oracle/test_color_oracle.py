"""The colour core against OpenCV (cv2) and NumPy, the oracle.

Runs under whichever cv2 the Python path gives (Debian's 4.x by default; the
5.0 and 5.1 wheels through PYTHONPATH, see tests/CMakeLists.txt) and holds
detfeed to that OpenCV's stack: --opencv 4, 5.0 or 5.1 by its version, on
two code paths: cv2's default dispatch (detfeed's --cv-cpu auto) and
cv2.setUseOptimized(False) (--cv-cpu sse).

- detfeed_hsv_lut (through ctypes) against NumPy's float64 tables, for many
  random gains and the edges.
- All 2^24 HSV triples through HSV->BGR as a 4096 x 4096 image (every pixel
  in OpenCV's SIMD block) and as a 2^21 x 8 image (every pixel in its scalar
  code), and all 2^24 BGR triples through BGR->HSV, against cv2 (ctypes).
- Random images of every width 1..130 and of 480, 500, 586, 613, 640, 997
  and 1280, random gains, through the fused operation with each of
  detfeed's implementations, and random HSV images through HSV->BGR, against
  cv2 (ctypes): the SIMD block / row tail split of every width.
- `detfeed color` against Ultralytics' RandomHSV procedure run with cv2, on
  every real image of the shared data at its own width, and on random
  images of widths that leave a row tail, with seeded gains.
- The captured pixels of tests/unit/test_captured.c and the captured rows
  of tests/unit/test_color.c against this cv2.
- The cv2 build itself against the golden HSV->BGR hashes of its SIMD block,
  so that a different OpenCV arithmetic is reported as such rather than as a
  detfeed bug.
0 differing bytes required everywhere.

    test_color_oracle.py --detfeed BIN --data DIR [--no-ctypes] [--expect-cv V]

--expect-cv 4, 5.0 or 5.1: skip (exit 77) unless the cv2 imported is that
version, so that a missing wheel is reported instead of testing the system's.
"""
import ctypes
import hashlib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import oracle_util as ou  # noqa: E402

GOLDEN_BLOCK = {"fused": "5f2643cdbdd25a04cf28db7ca8d0c83ef4b76f4a625319409ce1afd55856d2db",
                "sse": "1481eff6d9d8fb16de3fefe19ccc575fee06aeabb9df9988232d9bbdad7a5deb"}
CPUS = ("auto", "sse", "avx2", "avx512")  # detfeed's --opencv-cpu names
STACKS = ("4", "5.0", "5.1", "4-debian")  # detfeed's --opencv names
WIDTHS = list(range(1, 131)) + [480, 500, 586, 613, 640, 997, 1280]
DEFAULT_GAINS = (0.015, 0.7, 0.4)


def parse_args():
    return ou.parse_args(lambda ap: ap.add_argument(
        "--expect-cv", help="skip unless cv2 maps to this stack (4, 5.0, 5.1)"))


def stack_name(cv2):
    """detfeed's --opencv for this cv2: 4-debian for Debian's own 4.x build,
    4 for the 4.x wheels, else major.minor."""
    major, minor = cv2.__version__.split(".")[:2]
    if major == "4":
        debian = os.path.abspath(cv2.__file__).startswith("/usr/lib/python3/dist-packages/")
        return "4-debian" if debian else "4"
    return f"{major}.{minor}"


def set_mode(cv2, mode):
    """cv2's code path: its default dispatch, or the baseline (SSE) one."""
    cv2.setUseOptimized(mode == "auto")


def cv2_code_path(cv2, np):
    """The HSV->BGR code path cv2 runs now, by its SIMD block as seen on a
    row of 48: HSV (3, 187, 175) gives 46 in the block and 47 in the scalar
    code (every build), so column 20 is scalar only with 64-pixel blocks and
    column 40 with 32 or 64."""
    img = np.zeros((1, 48, 3), np.uint8)
    img[0, :] = (3, 187, 175)
    out = cv2.cvtColor(img, cv2.COLOR_HSV2BGR)
    if out[0, 20, 0] == 47:
        return "avx512"
    return "avx2" if out[0, 40, 0] == 47 else "sse"


def block_of(stack, cpu):
    return 16 if cpu == "sse" else 64 if cpu == "avx512" and stack == "5.1" else 32


def all_triples(np):
    k = np.arange(1 << 24, dtype=np.uint32)
    return np.stack([k >> 16, (k >> 8) & 255, k & 255], axis=1).astype(np.uint8)


class Lib:
    """The colour functions of libdetfeed (through detfeed._lib), with the
    reference stacks and code paths by name."""

    def __init__(self, detfeed_bin):
        self.capi = ou.capi()
        self.lib = lib = ou.library(detfeed_bin)
        self.isas = [n for n in self.capi.ISAS
                     if n != "auto" and lib.detfeed_isa_available(self.capi.ISAS.index(n))]

    def resolve(self, cpu):
        """The code path (a name) detfeed runs for `cpu` on this CPU."""
        got = self.lib.detfeed_cv_cpu_resolve(self.lib.cv_cpu(cpu))
        return next(n for n in CPUS if self.lib.cv_cpu(n) == got)

    def _call(self, fn, np, src, *extra):
        src = np.ascontiguousarray(src)
        dst = np.empty_like(src)
        h, w = src.shape[:2]
        rc = fn(src.ctypes.data, w * 3, dst.ctypes.data, w * 3, w, h, *extra)
        return rc, dst

    def apply(self, np, img, gains, stack, cpu, isa):
        lut = np.zeros((3, 256), np.uint8)
        self.lib.detfeed_hsv_lut(*[float(g) for g in gains], lut.ctypes.data)
        cv = self.lib.cv(stack, cpu, 1)
        return self._call(self.lib.detfeed_hsv_apply_cv, np, img, lut.ctypes.data,
                          ctypes.byref(cv), self.capi.ISAS.index(isa))

    def hsv_to_bgr(self, np, img, stack, cpu):
        cv = self.lib.cv(stack, cpu, 1)
        return self._call(self.lib.detfeed_hsv_to_bgr_cv, np, img, ctypes.byref(cv))

    def bgr_to_hsv(self, np, img):
        return self._call(self.lib.detfeed_bgr_to_hsv, np, img)


def check_oracle_build(t, cv2, np, mode):
    img = all_triples(np).reshape(4096, 4096, 3)
    out = cv2.cvtColor(img, cv2.COLOR_HSV2BGR)
    ok = hashlib.sha256(out.tobytes()).hexdigest() == GOLDEN_BLOCK[
        "sse" if mode == "sse" else "fused"]
    t.check(ok, f"cv2 {cv2.__version__} ({mode}) HSV2BGR differs from the golden hash "
                "of its SIMD block: this OpenCV build is not the reference arithmetic")


def check_luts(t, lib, np):
    rng = np.random.default_rng(2024)
    gains = [(0, 0, 0), (-1e-17, 0, 0), (0.015, 0.7, 0.4), (-0.015, -0.7, -0.4)]
    gains += [tuple(rng.uniform(-1, 1, 3) * [0.015, 0.7, 0.4]) for _ in range(3000)]
    gains += [tuple(rng.uniform(-3, 3, 3)) for _ in range(500)]
    bad = 0
    out = np.zeros((3, 256), np.uint8)
    for g in gains:
        lib.lib.detfeed_hsv_lut(*g, out.ctypes.data)
        bad += not np.array_equal(out, ou.numpy_luts(g))
    t.check(bad == 0, f"{bad} of {len(gains)} LUT sets differ from NumPy")


class Tally:
    """Bytes compared and differing, per check, printed as one line."""

    def __init__(self, t, what):
        self.t, self.what, self.inputs, self.total, self.differ = t, what, 0, 0, 0

    def add(self, np, got, want, label):
        d = int(np.count_nonzero(got != want))
        self.inputs += 1
        self.total += want.size
        self.differ += d
        self.t.check(d == 0, f"{self.what}: {label}: {d} bytes differ from cv2")

    def report(self):
        print(f"{self.what}: {self.inputs} inputs, {self.total} bytes compared, "
              f"{self.differ} differ")


def check_exhaustive(t, cv2, np, lib, stack, mode):
    """All 2^24 triples: HSV->BGR block and tail layouts, BGR->HSV."""
    tally = Tally(t, f"all 2^24 triples, {mode}")
    img = all_triples(np)
    for w in (4096, 8):
        x = img.reshape(-1, w, 3)
        rc, got = lib.hsv_to_bgr(np, x, stack, mode)
        t.check(rc == 0, f"detfeed_hsv_to_bgr_cv returned {rc}")
        tally.add(np, got, cv2.cvtColor(x, cv2.COLOR_HSV2BGR), f"HSV->BGR {w} wide")
        rc, got = lib.bgr_to_hsv(np, x)
        tally.add(np, got, cv2.cvtColor(x, cv2.COLOR_BGR2HSV), f"BGR->HSV {w} wide")
    tally.report()


def check_widths(t, cv2, np, lib, stack, mode):
    """Every width of WIDTHS: fused operation (each ISA) and HSV->BGR."""
    rng = np.random.default_rng(11 if mode == "auto" else 12)
    tally = Tally(t, f"widths 1..130 and wide, {mode}")
    for w, k in ((w, k) for w in WIDTHS for k in range(2)):
        h = int(rng.integers(1, 9)) if w <= 130 else 3
        img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        g = rng.uniform(-1, 1, 3) * DEFAULT_GAINS
        want = ou.random_hsv(img.copy(), g)
        for isa in lib.isas:
            rc, got = lib.apply(np, img, g, stack, mode, isa)
            t.check(rc == 0, f"detfeed_hsv_apply_cv returned {rc}")
            tally.add(np, got, want, f"fused, {w}x{h}, isa {isa}, gains {g}")
        rc, got = lib.hsv_to_bgr(np, img, stack, mode)
        tally.add(np, got, cv2.cvtColor(img, cv2.COLOR_HSV2BGR), f"HSV->BGR, {w}x{h}")
    tally.report()


def run_color(detfeed, src, dst, r, stack, mode):
    g = ",".join(repr(float(x)) for x in r)
    return subprocess.run([detfeed, "color", "--gains", g, "--opencv", stack, "--cv-cpu",
                           mode, src, dst], capture_output=True, text=True)


def compare_cli(t, cv2, np, ctx, img, r, label, tally):
    detfeed, stack, mode, tmp = ctx
    src, dst = os.path.join(tmp, "in.png"), os.path.join(tmp, "out.png")
    cv2.imwrite(src, img)
    p = run_color(detfeed, src, dst, r, stack, mode)
    if not t.check(p.returncode == 0, f"{label}: detfeed color failed: {p.stderr}"):
        return
    got = cv2.imread(dst, cv2.IMREAD_COLOR)
    tally.add(np, got, ou.random_hsv(img.copy(), r), f"{label} (gains {r})")


def check_images(t, cv2, np, ctx, data):
    """Every real image at its own width (default dispatch only)."""
    rng = np.random.default_rng(7)
    paths = ou.real_images(data)
    t.check(len(paths) >= 100, f"only {len(paths)} real images found under {data}")
    tally = Tally(t, f"detfeed color, real images, {ctx[2]}")
    for path in paths:
        img = cv2.imread(path, cv2.IMREAD_COLOR)
        r = rng.uniform(-1, 1, 3) * DEFAULT_GAINS
        compare_cli(t, cv2, np, ctx, img, r, os.path.basename(path), tally)
    tally.report()


def check_random_cli(t, cv2, np, ctx):
    """Random images whose widths leave a row tail, through the CLI."""
    rng = np.random.default_rng(8)
    tally = Tally(t, f"detfeed color, random images, {ctx[2]}")
    extremes = [DEFAULT_GAINS, (-0.015, -0.7, -0.4), (0, 0, 0), (-1e-17, 0.3, -0.2)]
    for i, w in enumerate([586, 480, 500, 613, 997, 33, 1, 640]):
        h = int(rng.integers(1, 40))
        img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        r = extremes[i] if i < len(extremes) else rng.uniform(-1, 1, 3) * DEFAULT_GAINS
        compare_cli(t, cv2, np, ctx, img, r, f"random {w}x{h}", tally)
    tally.report()


def check_captured(t, cv2, np, mode):
    """tests/unit/test_captured.c: a row of 64 (SIMD block on every code
    path), a row of 24 and a pixel alone (scalar code on AVX2 and AVX-512).
    On the SSE code path the unfused block gives the scalar code's bytes
    for these two pixels."""
    a, b = (62, 188, 73), (80, 82, 188)
    block = ([120, 225, 126], [135, 140, 225]) if mode == "auto" else \
        ([120, 225, 127], [135, 141, 225])
    alone = ([120, 225, 127], [135, 141, 225])
    for w, want in ((64, block), (24, alone), (1, alone)):
        img = np.zeros((1, w, 3), np.uint8)
        img[0, 0::2] = a
        img[0, 1::2] = b
        out = ou.random_hsv(img, (0.01, -0.3, 0.2))
        ok = out[0, 0].tolist() == want[0] and (w == 1 or out[0, 1].tolist() == want[1])
        t.check(ok, f"captured pixels, width {w}, {mode}: cv2 gives {out[0, :2].tolist()}")


# tests/unit/test_color.c's captured rows: gains (0.015, 0.7, 0.4), gray
# pixels with A and B at some columns; bytes per (cv2 version, code path)
# at each column (row 1 of 2).
A, B = (71, 72, 125), (16, 18, 37)
CAPTURED_ROWS = [
    (586, [(576, A), (580, B)]),
    (500, [(10, B), (470, A), (471, B), (490, A), (497, A), (498, B)]),
    (480, [(460, A), (461, B)]),
]
OA, OB = [46, 59, 175], [1, 9, 51]  # SIMD block (fused; SSE: B is 1, 10, 51)
TA4, TA5, TB = [47, 59, 175], [47, 60, 175], [2, 10, 51]  # scalar code
SB = [1, 10, 51]
CAPTURED_OUT = {
    ("4-debian", "avx2"): [[TA4, TB], [OB, OA, OB, TA4, TA4, TB], [OA, OB]],
    ("4-debian", "sse"): [[TA4, TB], [SB, OA, SB, OA, TA4, TB], [OA, SB]],
    ("4", "avx2"): [[TA5, TB], [OB, OA, OB, TA5, TA5, TB], [OA, OB]],
    ("4", "sse"): [[TA4, TB], [SB, OA, SB, OA, TA4, TB], [OA, SB]],
    ("5.0", "avx2"): [[TA5, TB], [OB, OA, OB, TA5, TA5, TB], [OA, OB]],
    ("5.0", "sse"): [[TA4, TB], [SB, OA, SB, OA, TA4, TB], [OA, SB]],
    ("5.1", "avx512"): [[TA5, TB], [OB, TA5, TB, TA5, TA5, TB], [TA5, TB]],
    ("5.1", "avx2"): [[TA5, TB], [OB, OA, OB, TA5, TA5, TB], [OA, OB]],
    ("5.1", "sse"): [[TA4, TB], [SB, OA, SB, OA, TA4, TB], [OA, SB]],
}


def check_captured_rows(t, cv2, np, stack, path):
    if (stack, path) not in CAPTURED_OUT:
        print(f"note: no captured rows for {stack} on the {path} code path; skipped")
        return
    for (w, px), want in zip(CAPTURED_ROWS, CAPTURED_OUT[(stack, path)]):
        img = np.full((2, w, 3), 100, np.uint8)
        for x, p in px:
            img[:, x] = p
        out = ou.random_hsv(img, DEFAULT_GAINS)
        got = [out[1, x].tolist() for x, _ in px]
        t.check(got == want, f"captured row {w}, {stack}/{path}: cv2 gives {got}, "
                             f"tests/unit/test_color.c has {want}")


def main():
    args = parse_args()
    cv2, np = ou.require_cv2()
    stack = stack_name(cv2)
    if args.expect_cv and stack != args.expect_cv:
        print(f"SKIP: cv2 {args.expect_cv} is not importable here (found "
              f"{cv2.__version__} at {os.path.dirname(cv2.__file__)})")
        sys.exit(ou.SKIP)
    if stack not in STACKS:
        print(f"SKIP: cv2 {cv2.__version__} is not a stack detfeed knows (4, 5.0, 5.1)")
        sys.exit(ou.SKIP)
    cv2.setNumThreads(1)
    t = ou.Counter("test_color_oracle")
    print(f"oracle: OpenCV {cv2.__version__} (detfeed --opencv {stack}), "
          f"NumPy {np.__version__}")
    lib = None if args.no_ctypes else Lib(args.detfeed)
    if lib is None:
        print("note: the checks through ctypes are skipped (sanitizer build)")
        resolved = "unknown"
    else:
        resolved = lib.resolve("auto")
        print(f"detfeed resolves the default dispatch to: {resolved}; "
              f"implementations compared: {lib.isas}")
        check_luts(t, lib, np)
    for dispatch in ("auto", "sse"):
        set_mode(cv2, dispatch)
        mode = cv2_code_path(cv2, np) if dispatch == "auto" else "sse"
        print(f"cv2 {'default dispatch' if dispatch == 'auto' else 'setUseOptimized(False)'}"
              f": HSV->BGR blocks of {block_of(stack, mode)} pixels (--cv-cpu {mode})")
        if dispatch == "auto" and lib is not None and "OPENCV_CPU_DISABLE" not in os.environ:
            t.check(block_of(stack, mode) == block_of(stack, resolved),
                    f"cv2's default dispatch is {mode} but detfeed's auto is {resolved}")
        check_oracle_build(t, cv2, np, mode)
        check_captured(t, cv2, np, dispatch)
        check_captured_rows(t, cv2, np, stack, mode)
        if lib is not None:
            check_exhaustive(t, cv2, np, lib, stack, mode)
            check_widths(t, cv2, np, lib, stack, mode)
        with tempfile.TemporaryDirectory() as tmp:
            ctx = (args.detfeed, stack, mode, tmp)
            check_random_cli(t, cv2, np, ctx)
            if dispatch == "auto":
                check_images(t, cv2, np, ctx, args.data)
    set_mode(cv2, "auto")
    t.finish()


if __name__ == "__main__":
    main()
