"""The reference stack: which Ultralytics and OpenCV detfeed's bytes follow.

detfeed reproduces what Ultralytics computes with the OpenCV it runs on. The
library takes both as settings (``ultralytics``: "8.3" or "8.4"; ``opencv``:
"4", "5.0" or "5.1", with ``opencv_cpu`` and ``opencv_ipp`` for the code
path OpenCV runs; ``numpy``: "1" or "2", which rounds Ultralytics' small
float32 matrix products differently); this module reads them off the installed packages, so that
a Loader matches the Ultralytics training it stands in for.
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


def detect():
    """Settings for the installed packages: a dict with whichever of
    ``opencv``, ``opencv_cpu``, ``opencv_ipp``, ``ultralytics`` and ``numpy`` could be
    read (the library's defaults hold for the others). Warns once per
    package whose version is not one detfeed knows, naming the one used."""
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
        out["numpy"] = "2" if int(numpy.__version__.split(".")[0]) >= 2 else "1"
    except ImportError:
        pass
    return out


def rect_order(heights, widths):
    """The validation order Ultralytics' set_rectangle takes: NumPy's
    (unstable) argsort of the aspect ratios h / w, as int64."""
    import numpy as np
    s = np.stack([np.asarray(heights, dtype=np.int64), np.asarray(widths, dtype=np.int64)], 1)
    ar = s[:, 0] / s[:, 1]
    return ar.argsort().astype(np.uint64)
