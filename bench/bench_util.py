"""Shared pieces of the benchmark scripts: the library they measure (--lib,
loaded through the package's one ctypes module), the machine description
recorded with every result, letterboxing real images, the median helper,
CPU lists, and printing and saving a result."""
import datetime
import json
import os
import platform
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The repository's Python package, whose detfeed._lib declares libdetfeed.
PYTHON_DIR = os.path.join(TOP, "python")


def add_lib_argument(ap):
    """--lib: the libdetfeed.so to measure; default DETFEED_LIBRARY, else the
    repository's build/libdetfeed.so."""
    default = os.environ.get("DETFEED_LIBRARY") or os.path.join(TOP, "build", "libdetfeed.so")
    ap.add_argument("--lib", default=default,
                    help="libdetfeed.so (default: DETFEED_LIBRARY, else build/libdetfeed.so; "
                         "now %(default)s)")


def parse_cpus(text):
    """A CPU list as taskset takes it: '0-3,6' -> {0, 1, 2, 3, 6}."""
    cpus = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def capi():
    """The package's ctypes module, detfeed._lib (from this repository):
    its enum values and names; importing it loads nothing."""
    if PYTHON_DIR not in sys.path:
        sys.path.insert(0, PYTHON_DIR)
    from detfeed import _lib
    return _lib


def load_library(path):
    """libdetfeed at `path` through detfeed._lib: its C functions as
    attributes, the names through its parse functions (_lib.Library)."""
    return capi().load(path)


def machine_info(extra=None):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "host_cpu": cpu,
        "logical_cpus": os.cpu_count(),
        "os": platform.platform(),
        "python": platform.python_version(),
    }
    try:
        info["git_commit"] = subprocess.run(["git", "-C", TOP, "rev-parse", "--short", "HEAD"],
                                            capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    try:
        info["gcc"] = subprocess.run(["gcc", "--version"], capture_output=True,
                                     text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        pass
    info.update(extra or {})
    return info


def letterbox(cv2, np, img, size):
    """Long side to `size` (INTER_LINEAR), centred on a size x size canvas of
    114, as a YOLO training canvas looks."""
    h, w = img.shape[:2]
    r = size / max(h, w)
    nw, nh = round(w * r), round(h * r)
    if (nw, nh) != (w, h):
        img = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_LINEAR)
    out = np.full((size, size, 3), 114, np.uint8)
    top, left = (size - nh) // 2, (size - nw) // 2
    out[top:top + nh, left:left + nw] = img
    return out


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def finish(res, out, name, tag=""):
    """Prints a result, writes OUT/DATE-NAME[-TAG].json when out is given, and
    exits non-zero when the outputs compared differ."""
    print(json.dumps(res, indent=1))
    if out:
        stem = "%s-%s%s" % (res["machine"]["date"][:10], name, "-" + tag if tag else "")
        with open(os.path.join(out, stem + ".json"), "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    if res.get("bytes_differing"):
        raise SystemExit("outputs differ")
