"""Benchmark: detfeed_codec_decode (libjpeg-turbo through TurboJPEG, called
with ctypes) against cv2.imdecode(buf, IMREAD_COLOR), on one core, on the
real JPEGs of a folder (coco128), in the same process and run.

The file bytes are read into memory first: both arms time decoding only,
from a bytes object to a BGR image (detfeed's buffer is released with
detfeed_free inside the timed call, as cv2's array is dropped). Rounds
alternate the order of the two arms; the first round is a warm-up. Reported:
per-image median over rounds for each arm and the median of the per-round
ratios (cv2 time / detfeed time: above 1 means detfeed is faster). Every
output is compared byte for byte with cv2's first.

    /usr/bin/python3 bench/bench_decode.py --lib build/libdetfeed.so \\
        --images ../shared/data/coco128/images/train2017 --out bench/results
"""
import argparse
import ctypes
import glob
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import bench_util as bu  # noqa: E402


def package_version(name):
    """The Debian package version of a library, or "unknown"."""
    try:
        p = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", name],
                           capture_output=True, text=True)
        return p.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def main():
    ap = argparse.ArgumentParser()
    bu.add_lib_argument(ap)
    ap.add_argument("--images", required=True, help="folder of JPEG images")
    ap.add_argument("--rounds", type=int, default=9, help="timed rounds (after 1 warm-up)")
    ap.add_argument("--core", type=int, default=0, help="CPU core to pin to (-1: none)")
    ap.add_argument("--out", help="folder for the JSON result")
    ap.add_argument("--tag", default="", help="name part of the result file")
    args = ap.parse_args()

    import cv2
    import numpy as np

    if args.core >= 0:
        os.sched_setaffinity(0, {args.core})
    cv2.setNumThreads(1)
    lib = bu.load_library(args.lib)
    codec = ctypes.c_void_p()
    assert lib.detfeed_codec_create(ctypes.byref(codec), 0) == 0
    px, w, h = ctypes.c_void_p(), ctypes.c_int(), ctypes.c_int()
    refs = (ctypes.byref(px), ctypes.byref(w), ctypes.byref(h))
    decode, free, name = lib.detfeed_codec_decode, lib.detfeed_free, b"bench"

    def detfeed_decode(data):
        rc = decode(codec, data, len(data), name, *refs)
        assert rc == 0, lib.detfeed_codec_last_error(codec)
        free(px)

    def cv2_decode(data):
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        assert img is not None

    paths = sorted(glob.glob(os.path.join(args.images, "*.jpg")))
    blobs = [open(p, "rb").read() for p in paths]

    compared = differ = pixels = 0
    for data in blobs:
        want = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        rc = decode(codec, data, len(data), name, *refs)
        assert rc == 0, lib.detfeed_codec_last_error(codec)
        got = np.frombuffer(ctypes.string_at(px.value, w.value * h.value * 3), np.uint8)
        free(px)
        compared += want.size
        pixels += want.shape[0] * want.shape[1]
        differ += want.size if (h.value, w.value) != want.shape[:2] else int(
            np.count_nonzero(got != want.reshape(-1)))

    arms = {"cv2": cv2_decode, "detfeed": detfeed_decode}
    per_round = {k: [] for k in arms}
    for rnd in range(args.rounds + 1):
        order = ["cv2", "detfeed"] if rnd % 2 == 0 else ["detfeed", "cv2"]
        for arm in order:
            fn = arms[arm]
            t0 = time.perf_counter()
            for data in blobs:
                fn(data)
            total = time.perf_counter() - t0
            if rnd > 0:
                per_round[arm].append(total / len(blobs) * 1e3)
    ratios = [a / b for a, b in zip(per_round["cv2"], per_round["detfeed"])]
    mp = pixels / len(blobs) / 1e6
    res = {
        "benchmark": "JPEG decode to BGR, one core, bytes in memory",
        "images": len(blobs),
        "megapixels_per_image": mp,
        "bytes_per_image": sum(map(len, blobs)) / len(blobs),
        "rounds": args.rounds,
        "cv2_ms_per_image": bu.median(per_round["cv2"]),
        "detfeed_ms_per_image": bu.median(per_round["detfeed"]),
        "cv2_ms_range": [min(per_round["cv2"]), max(per_round["cv2"])],
        "detfeed_ms_range": [min(per_round["detfeed"]), max(per_round["detfeed"])],
        "cv2_images_per_s": 1e3 / bu.median(per_round["cv2"]),
        "detfeed_images_per_s": 1e3 / bu.median(per_round["detfeed"]),
        "speedup_median": bu.median(ratios),
        "speedup_range": [min(ratios), max(ratios)],
        "bytes_compared": compared,
        "bytes_differing": differ,
        "machine": bu.machine_info({
            "opencv": cv2.__version__, "numpy": np.__version__,
            "libturbojpeg (detfeed)": package_version("libturbojpeg0"),
            "libjpeg62-turbo (OpenCV)": package_version("libjpeg62-turbo"),
            "pinned_core": args.core}),
        "command": "/usr/bin/python3 bench/bench_decode.py --lib %s --images %s --rounds %d"
                   " --core %d" % (os.path.relpath(args.lib), args.images, args.rounds,
                                   args.core),
    }
    bu.finish(res, args.out, "decode", args.tag)

if __name__ == "__main__":
    main()
