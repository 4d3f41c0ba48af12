"""The reference stack: which Ultralytics and OpenCV detfeed's bytes follow.

detfeed reproduces what Ultralytics computes with the OpenCV it runs on. The
library takes both as settings (``ultralytics``: "8.3" or "8.4"; ``opencv``:
"4", "5.0" or "5.1", with ``opencv_cpu`` and ``opencv_ipp`` for the code
path OpenCV runs; ``numpy``: how NumPy multiplies Ultralytics' small
float32 matrices, "1" rounding every product and sum, "2" accumulating with
fused multiply-adds; ``numpy_sort``: which argsort NumPy runs, "scalar",
"avx2" or "avx512", since the order it leaves equal keys in orders a
segment sample's masks); this module reads them off the installed
packages, so that a Loader matches the Ultralytics training it stands in
for.

The ``numpy`` setting is named after the version that first showed the
difference, but it is not the version: NumPy hands a 3 x 3 float32 product
to its BLAS, and what the BLAS kernel does on this CPU decides. The PyPI
wheels of NumPy 2 and of NumPy 1.26 (OpenBLAS, Haswell kernels and later)
fuse; Debian 12's NumPy 1.24 rounds. So it is measured (numpy_matmul).
So is ``numpy_sort`` (numpy_sort): NumPy 2 sorts 32- and 64-bit keys with
x86-simd-sort where the CPU has AVX2 or AVX-512, NumPy 1.24 and CPUs
without AVX2 with NumPy's own introsort.
"""
import importlib.metadata
import os
import warnings

KNOWN_OPENCV = ("4", "4-debian", "5.0", "5.1")
# Where Debian installs its python3-opencv; the wheels live in site-packages.
_DEBIAN_DIST = "/usr/lib/python3/dist-packages/"
KNOWN_ULTRALYTICS = ("8.3", "8.4")


def _major_minor(version):
    parts = []
    for piece in str(version).split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    while len(parts) < 2:
        parts.append(0)
    return tuple(parts)


def opencv_name(version, debian=False):
    """The stack name for an OpenCV version string (`debian`: Debian's own
    build rather than a PyPI wheel), and whether it is one detfeed knows
    (wheels 4.0-4.12, 5.0, 5.1; Debian 12's 4.6) or the nearest known one."""
    major, minor = _major_minor(version)
    if major == 4 and debian:
        return "4-debian", minor == 6
    if major == 4 and minor <= 12:
        return "4", True
    if (major, minor) == (5, 0):
        return "5.0", True
    if (major, minor) == (5, 1):
        return "5.1", True
    if major < 5:
        return "4", False
    return "5.1", False


def ultralytics_name(version):
    """The stack name for an Ultralytics version string, and whether it is
    known (8.3.x, 8.4.x) or the nearest known one."""
    major, minor = _major_minor(version)
    if (major, minor) in ((8, 3), (8, 4)):
        return "%d.%d" % (major, minor), True
    return ("8.3", False) if (major, minor) < (8, 3) else ("8.4", False)


def _opencv_cpu(cv2):
    """The code path the installed cv2 dispatches to on this CPU."""
    if not cv2.useOptimized():
        return "sse"
    have = getattr(cv2, "checkHardwareSupport", None)
    if have is None:
        return "auto"
    if have(getattr(cv2, "CPU_AVX512_SKX", 256)):
        return "avx512"
    if have(getattr(cv2, "CPU_AVX2", 11)) and have(getattr(cv2, "CPU_FMA3", 12)):
        return "avx2"
    return "sse"


def numpy_matmul(np=None):
    """How the installed NumPy multiplies small float32 matrices, as the
    ``numpy`` setting names it: "2" when each entry is accumulated with
    fused multiply-adds, fma(a2, b2, fma(a1, b1, a0 * b0)); "1" when every
    product and sum is rounded, (a0 * b0 + a1 * b1) + a2 * b2. Measured on
    one product whose entry (0, 0) tells them apart: -1 * 1 + q * q with
    q = 1 + 2**-12 is 2**-11 + 2**-24 fused and 2**-11 rounded (q * q rounds
    to 1 + 2**-11). None when it is neither (a BLAS that sums in another
    order)."""
    if np is None:
        import numpy as np
    q = 1 + 2.0 ** -12
    a = np.array([[-1, q, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
    b = np.array([[1, 0, 0], [q, 1, 0], [0, 0, 1]], dtype=np.float32)
    got = float((a @ b)[0, 0])
    if got == 2.0 ** -11 + 2.0 ** -24:
        return "2"
    if got == 2.0 ** -11:
        return "1"
    return None


# The probe of numpy_sort: 600 keys of 5 values, enough for x86-simd-sort to
# partition (more than 256) and for each variant to leave the ties in an
# order of its own; the FNV-1 digest of np.argsort's permutation names the
# variant (the oracle, tests/oracle/test_npsort_oracle.py, checks these
# digests against the library's argsort of the same keys).
_SORT_PROBE_N = 600
_SORT_DIGESTS = {0x7456ed914549a5fd: "scalar", 0x683e8069fbad8e15: "avx2",
                 0xe0f5a09632bb016f: "avx512"}


def sort_probe(np, dtype):
    """The keys numpy_sort sorts: (i * 7919 % 61) % 5 for i < 600."""
    i = np.arange(_SORT_PROBE_N, dtype=np.int64)
    return (i * 7919 % 61 % 5).astype(dtype)


def permutation_digest(order):
    """FNV-1 (64-bit) over a permutation's indices."""
    x = 14695981039346656037
    for v in order.tolist():
        x = ((x * 1099511628211) ^ v) & 0xFFFFFFFFFFFFFFFF
    return x


def numpy_sort(np=None):
    """Which argsort the installed NumPy runs for the keys Ultralytics sorts
    (uint64 mask areas, float32 CopyPaste overlaps), as the ``numpy_sort``
    setting names it: "scalar" (NumPy's own introsort: NumPy 1.24, any
    NumPy on a CPU without AVX2), "avx2" or "avx512" (x86-simd-sort, NumPy
    2 on CPUs with AVX2 or AVX-512). The order np.argsort leaves equal keys
    in tells them apart (sort_probe). None when it is none of them (NumPy
    1.25 and 1.26 on AVX-512 CPUs run an older x86-simd-sort), or when the
    two dtypes disagree."""
    if np is None:
        import numpy as np
    found = {_SORT_DIGESTS.get(permutation_digest(np.argsort(sort_probe(np, t))))
             for t in ("uint64", "float32")}
    return found.pop() if len(found) == 1 else None


def detect():
    """Settings for the installed packages: a dict with whichever of
    ``opencv``, ``opencv_cpu``, ``opencv_ipp``, ``ultralytics``, ``numpy`` and
    ``numpy_sort`` could be read (the library's defaults hold for the
    others). Warns once per package whose version is not one detfeed knows,
    naming the one used."""
    out = {}
    try:
        import cv2
    except ImportError:
        cv2 = None
    if cv2 is not None:
        debian = os.path.abspath(cv2.__file__).startswith(_DEBIAN_DIST)
        name, known = opencv_name(cv2.__version__, debian)
        if not known:
            warnings.warn("detfeed: OpenCV %s is not a version detfeed reproduces; using "
                          "OpenCV %s's arithmetic" % (cv2.__version__, name), stacklevel=3)
        out["opencv"] = name
        out["opencv_cpu"] = _opencv_cpu(cv2)
        ipp = getattr(cv2, "ipp", None)
        out["opencv_ipp"] = int(bool(ipp.useIPP())) if ipp is not None else 0
    try:
        version = importlib.metadata.version("ultralytics")
    except importlib.metadata.PackageNotFoundError:
        version = None
    if version is not None:
        name, known = ultralytics_name(version)
        if not known:
            warnings.warn("detfeed: Ultralytics %s is not a version detfeed reproduces; "
                          "using Ultralytics %s's arithmetic" % (version, name), stacklevel=3)
        out["ultralytics"] = name
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None:
        rounding = numpy_matmul(numpy)
        if rounding is None:
            warnings.warn("detfeed: NumPy %s multiplies float32 matrices in an order detfeed "
                          "does not reproduce; using fused multiply-adds (numpy=2)"
                          % numpy.__version__, stacklevel=3)
            rounding = "2"
        out["numpy"] = rounding
        sort = numpy_sort(numpy)
        if sort is None:
            warnings.warn("detfeed: NumPy %s orders equal keys in an argsort detfeed does not "
                          "reproduce; segment masks of equal area follow NumPy's own "
                          "introsort (numpy_sort=scalar)" % numpy.__version__, stacklevel=3)
            sort = "scalar"
        out["numpy_sort"] = sort
    return out


def rect_order(heights, widths):
    """The validation order Ultralytics' set_rectangle takes: NumPy's
    (unstable) argsort of the aspect ratios h / w, as int64."""
    import numpy as np
    s = np.stack([np.asarray(heights, dtype=np.int64), np.asarray(widths, dtype=np.int64)], 1)
    ar = s[:, 0] / s[:, 1]
    return ar.argsort().astype(np.uint64)
