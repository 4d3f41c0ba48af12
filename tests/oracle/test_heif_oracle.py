"""detfeed's HEIC/HEIF decoder against Ultralytics 8.4.190's imread as
`pip install ultralytics` runs it: Pillow 13.0.0 with pi-heif 1.4.0
(libheif 1.23.0, libde265), for a .heic through _imread_pil
(exif_transpose, convert("RGB"), RGB to BGR), under each OpenCV wheel of
build-py/cv (4.12, 5.0, 5.1). 0 differing bytes required.

The files are written at test time (tests/oracle/heif_gen.py, with
pillow-heif's x265 encoder and Debian's heif-enc) from the shared data's
images: 8-bit 4:2:0, 4:2:2, 4:4:4, lossless (GBR), full and limited range,
the matrices BT.601, BT.709, BT.2020, FCC, SMPTE 240M and unspecified,
10 and 12 bits, alpha, gray (8 and 10 bits), odd sizes (a clean
aperture), EXIF orientations 1 to 8 (irot and imir), grids, several
images, an XMP orientation, heif-enc's files (thumbnails, lossless,
limited BT.709, premultiplied alpha); cut and flipped files; a HEIF named
.jpg and a JPEG named .heic. Every file is decoded by detfeed from memory
under its name (detfeed_codec_decode) and compared with the reference:
both read it and the bytes agree, or neither does (detfeed's message
names the file), or detfeed refuses it by design (the cases heif_gen.py
marks, each listed with detfeed's message); a damaged file may also be
read by one libheif and not the other. detfeed_codec_probe_file gives
the size of every file detfeed decodes.

    test_heif_oracle.py --detfeed BIN --data DIR [--images N] [--set coco8|coco128]
                        [--side PIXELS]

Skips (77) without build-py/venv's ultralytics or build-py/heif
(scripts/oracle_env.sh).
"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile

import oracle_util as ou

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WHEELS = ("4.12.0.88", "5.0.0.93", "5.1.0.95")

# The reference: Ultralytics' imread of each file, saved as .npy (or .none).
REFERENCE = r"""
import os, sys
import numpy as np
import cv2, PIL
import pi_heif
from ultralytics.utils.patches import imread
out = sys.argv[1]
print(cv2.__version__, PIL.__version__, pi_heif.__version__, pi_heif.libheif_info()["libheif"])
for i, f in enumerate(sys.argv[2:]):
    im = imread(f)
    if im is None:
        open(os.path.join(out, "%d.none" % i), "w").close()
    else:
        np.save(os.path.join(out, "%d.npy" % i), np.ascontiguousarray(im))
"""


class Codec:
    def __init__(self, lib):
        self.lib = lib
        self.codec = ctypes.c_void_p()
        assert lib.detfeed_codec_create(ctypes.byref(self.codec), 0) == 0

    def decode(self, np, path):
        """(image, rc, message) of the file read from memory under its name."""
        data = open(path, "rb").read()
        px, w, h = ctypes.c_void_p(), ctypes.c_int(), ctypes.c_int()
        rc = self.lib.detfeed_codec_decode(self.codec, data, len(data), path.encode(),
                                           ctypes.byref(px), ctypes.byref(w),
                                           ctypes.byref(h))
        if rc != 0:
            return None, rc, self.lib.detfeed_codec_last_error(self.codec).decode()
        n = w.value * h.value * 3
        img = np.frombuffer(ctypes.string_at(px.value, n), np.uint8)
        self.lib.detfeed_free(px)
        return img.reshape(h.value, w.value, 3).copy(), 0, ""

    def probe(self, path):
        w, h = ctypes.c_int(), ctypes.c_int()
        rc = self.lib.detfeed_codec_probe_file(self.codec, path.encode(), ctypes.byref(w),
                                               ctypes.byref(h))
        return (h.value, w.value) if rc == 0 else None


def sources(data, which, n):
    """The first n images of the data set's training folder."""
    images = os.path.join(data, which, "images")
    folder = os.path.join(images, sorted(d for d in os.listdir(images)
                                         if d.startswith("train"))[0])
    names = sorted(f for f in os.listdir(folder) if f.endswith(".jpg"))
    return [os.path.join(folder, f) for f in names[:n]]


def reference(np, py, wheel, files, tmp):
    """Ultralytics' imread of each file under OpenCV `wheel`: images or None."""
    out = tempfile.mkdtemp(dir=tmp)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "build-py", "heif"), os.path.join(ROOT, "build-py", "cv", wheel)]))
    r = subprocess.run([py, "-c", REFERENCE, out, *files], env=env, capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit(f"the reference failed under OpenCV {wheel}:\n{r.stderr[-3000:]}")
    stack = r.stdout.splitlines()[0]
    imgs = [np.load(os.path.join(out, f"{i}.npy"))
            if os.path.exists(os.path.join(out, f"{i}.npy")) else None
            for i in range(len(files))]
    return stack, imgs


class Tally:
    def __init__(self):
        self.files, self.bytes, self.by_case = 0, 0, {}
        self.refused, self.neither, self.damaged = [], 0, []

    def read(self, case, nbytes):
        f, b = self.by_case.get(case, (0, 0))
        self.by_case[case] = (f + 1, b + nbytes)
        self.files += 1
        self.bytes += nbytes


def compare(t, tally, np, name, case, expect, ref, got, rc, msg, path):
    """One file: the reference's image (or None) against detfeed's."""
    if ref is not None and got is not None:
        same = ref.shape == got.shape and np.array_equal(ref, got)
        if t.check(same, f"{name} ({case}): detfeed's bytes differ from the reference "
                         f"({ref.shape} vs {got.shape})"):
            tally.read(case, ref.size)
        return
    if got is not None:
        t.check(False, f"{name} ({case}): the reference cannot read it, detfeed can")
        return
    named = path in msg
    if ref is None:
        t.check(named, f"{name}: message does not name the file: {msg}")
        tally.neither += 1
        return
    if expect == "refuse" or (expect == "either" and rc == -6):
        t.check(named, f"{name}: message does not name the file: {msg}")
        (tally.refused if expect == "refuse" else tally.damaged).append(f"{name}: {msg}")
        return
    t.check(False, f"{name} ({case}): the reference reads it, detfeed refuses: {msg}")


def main():
    def extra(ap):
        ap.add_argument("--set", default="coco8", help="the data set of the sources")
        ap.add_argument("--images", type=int, default=1, help="source images (default 1)")
        ap.add_argument("--side", type=int, default=203,
                        help="long side the sources are scaled to (0: as they are)")
    args = ou.parse_args(extra)
    (np,) = ou.require(("numpy",), "install python3-numpy")
    py = os.path.join(ROOT, "build-py", "venv", "bin", "python")
    heif = os.path.join(ROOT, "build-py", "heif")
    if not os.path.exists(py) or not os.path.isdir(os.path.join(heif, "pi_heif")):
        print("SKIP: build-py/venv and build-py/heif needed (scripts/oracle_env.sh)")
        sys.exit(ou.SKIP)
    t = ou.Counter("test_heif_oracle")
    ou.finish_if_no_ctypes(args, t, "the HEIF decoder")
    codec = Codec(ou.library(args.detfeed))
    with tempfile.TemporaryDirectory() as tmp:
        gen = os.path.join(tmp, "files")
        os.mkdir(gen)
        subprocess.run([py, os.path.join(os.path.dirname(__file__), "heif_gen.py"), gen,
                        str(args.side), *sources(args.data, args.set, args.images)], check=True,
                       env=dict(os.environ, PYTHONPATH=heif))
        cases = json.load(open(os.path.join(gen, "cases.json")))
        files = [os.path.join(gen, c[0]) for c in cases]
        mine = [codec.decode(np, f) for f in files]
        for path, (img, _, _) in zip(files, mine):
            if img is not None:
                t.check(codec.probe(path) == img.shape[:2], f"{path}: probe size")
        for wheel in WHEELS:
            stack, refs = reference(np, py, wheel, files, tmp)
            tally = Tally()
            for (name, case, expect), path, ref, (got, rc, msg) in zip(cases, files, refs,
                                                                      mine):
                compare(t, tally, np, name, case, expect, ref, got, rc, msg, path)
            for line in tally.refused + tally.damaged:
                print(f"  refused ({wheel}):", line)
            per = ", ".join(f"{c} {f}/{b}" for c, (f, b) in sorted(tally.by_case.items()))
            print(f"oracle (OpenCV, Pillow, pi-heif, libheif: {stack}): {len(files)} files; "
                  f"{tally.files} decoded alike ({tally.bytes} bytes, 0 differ); "
                  f"{len(tally.refused)} refused by design, {len(tally.damaged)} damaged "
                  f"files refused that the reference reads, {tally.neither} read by "
                  f"neither. Per case (files/bytes): {per}")
    t.finish()


if __name__ == "__main__":
    main()
