"""detfeed's AVIF reader against the real Ultralytics 8.4.190 imread with
Pillow 13 (its wheel decodes AVIF with libavif 1.4.2 and libyuv), under each
OpenCV wheel (4.12, 5.0, 5.1: imread's RGB to BGR and its cv2.imdecode
fallback). 0 differing bytes required.

The files are written at test time into --work from COCO images of --data:
Pillow 13's encoder (4:2:0, 4:2:2, 4:4:4 at two qualities, gray, odd sizes,
limited range, alpha, EXIF orientations 1-8, which Pillow writes as irot and
imir, premultiplied alpha) and Debian's avifenc (4:2:0, 4:2:2, 4:4:4, 4:0:0
x full and limited range x matrices BT.709, BT.470BG, BT.601, BT.2020 NCL,
unspecified, chroma-derived, identity x 8, 10 and 12 bits; irot and imir;
alpha; EXIF orientation without irot; XMP orientation; FCC and YCgCo). For
each file: detfeed's bytes equal imread's, or detfeed refuses it with
DETFEED_EFORMAT naming the file and saying why (counted and printed: the
kinds it has not verified). Cuts of every file: where imread gives None,
detfeed fails with a message naming the file. A .jpg holding AVIF and a
.avif holding a JPEG are refused with their reasons.

    test_avif_oracle.py --detfeed BIN --data DIR --work DIR [--full]

--full writes a larger set (more images and sizes); the CI runs the default.
Needs Pillow with AVIF (scripts/oracle_env.sh puts 13.0.0 in
build-py/heif), ultralytics, the OpenCV wheels and avifenc; skips (77)
without them.
"""
import argparse
import concurrent.futures
import ctypes
import glob
import json
import os
import shutil
import subprocess
import sys
import time

SKIP = 77
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WHEELS = ("4.12.0.88", "5.0.0.93", "5.1.0.95")


def pictures(data, full):
    """(name, RGB PIL image) crops of coco8 (and coco128 with --full)."""
    from PIL import Image
    files = sorted(glob.glob(os.path.join(data, "coco8/images/*/*.jpg")))[:2]
    sizes = [(203, 151), (64, 33)]
    if full:
        files += sorted(glob.glob(os.path.join(data, "coco128/images/*/*.jpg")))[:14]
        sizes += [(640, 480), (1, 1), (2, 3), (17, 9)]
    out = []
    for i, f in enumerate(files):
        im = Image.open(f).convert("RGB")
        for k, (w, h) in enumerate(sizes if i < 2 else sizes[:1]):
            if not full and k != i:
                continue
            out.append(("%d-%dx%d" % (i, w, h), im.crop((i, i, i + w, i + h)),
                        full or (i == 0 and k == 0)))
    return out


def write_pillow(work, name, im):
    import numpy as np
    from PIL import Image
    made = []

    def save(case, img, **kw):
        p = os.path.join(work, "pil_%s-%s.avif" % (case, name))
        img.save(p, speed=9, **kw)
        made.append(p)
    for ss in ("4:2:0", "4:2:2", "4:4:4"):
        for q in (30, 90):
            save("%s_q%d" % (ss.replace(":", ""), q), im, subsampling=ss, quality=q)
    save("gray", im.convert("L"))
    save("limited", im, range="limited")
    a = np.array(im.convert("RGBA"))
    a[..., 3] = (np.arange(a.shape[1]) * 255 // max(1, a.shape[1])).astype(np.uint8)
    save("alpha", Image.fromarray(a))
    save("alpha_premultiplied", Image.fromarray(a), alpha_premultiplied=True)
    for o in range(1, 9):
        e = Image.Exif()
        e[0x0112] = o
        save("exif%d" % o, im, exif=e.tobytes())
    return made


def write_avifenc(work, name, im, every):
    from PIL import Image
    import numpy as np
    png = os.path.join(work, "src-%s.png" % name)
    im.save(png)
    a = np.array(im.convert("RGBA"))
    a[..., 3] = (np.arange(a.shape[0]) * 255 // max(1, a.shape[0])).astype(np.uint8)[:, None]
    apng = os.path.join(work, "srca-%s.png" % name)
    Image.fromarray(a).save(apng)
    exif = os.path.join(work, "exif6.bin")
    e = Image.Exif()
    e[0x0112] = 6
    open(exif, "wb").write(e.tobytes())
    xmp = os.path.join(work, "xmp.xml")
    open(xmp, "w").write('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.'
                         'w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:tiff="http:'
                         '//ns.adobe.com/tiff/1.0/" tiff:Orientation="6"/></rdf:RDF></x:xmpmeta>')
    jobs = []
    for y in ("420", "422", "444", "400"):
        for r in ("full", "limited"):
            for m in (1, 5, 6, 9, 2, 12, 0):
                for d in (8, 10, 12):
                    if m == 0 and y != "444" or not every and (m not in (1, 6) or d == 12):
                        continue
                    jobs.append(("enc%s_%s_m%d_d%d" % (y, r, m, d),
                                 ["-y", y, "-r", r, "-d", str(d), "--cicp", "1/13/%d" % m], png))
    for k in range(4):
        jobs.append(("irot%d" % k, ["--irot", str(k)], png))
    for k in range(2):
        jobs.append(("imir%d" % k, ["--imir", str(k)], png))
        jobs.append(("irot1_imir%d" % k, ["--irot", "1", "--imir", str(k)], png))
        jobs.append(("irot3_imir%d" % k, ["--irot", "3", "--imir", str(k)], png))
    for y in ("420", "444", "400"):
        jobs.append(("alpha%s" % y, ["-y", y], apng))
    jobs.append(("alpha_premultiplied", ["-p"], apng))
    jobs.append(("alpha10", ["-d", "10"], apng))
    jobs.append(("exif6_no_irot", ["--exif", exif], png))
    jobs.append(("exif6_irot1", ["--exif", exif, "--irot", "1"], png))
    jobs.append(("xmp_orientation", ["--xmp", xmp], png))
    jobs.append(("fcc", ["--cicp", "1/13/4"], png))
    jobs.append(("ycgco", ["--cicp", "1/13/8"], png))
    jobs.append(("clap", ["--crop", "2,2,20,16"], png))
    def run(job):
        case, opts, src = job
        p = os.path.join(work, "enc_%s-%s.avif" % (case, name))
        r = subprocess.run(["avifenc", "-s", "10", "-j", "1"] + opts + [src, p],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return p if r.returncode == 0 else None
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        return [p for p in pool.map(run, jobs) if p]


def generate(work, data, full):
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    files = []
    for name, im, every in pictures(data, full):
        files += write_pillow(work, name, im)
        files += write_avifenc(work, name, im, every)
    return sorted(files)


def cuts(work, files):
    """Each file cut at a spread of lengths (the first two per case kind)."""
    out = []
    for f in files[::7]:
        b = open(f, "rb").read()
        for k, n in enumerate(sorted({12, 40, len(b) // 3, len(b) // 2, len(b) - 1})):
            p = os.path.join(work, "cut%d_%s" % (k, os.path.basename(f)))
            open(p, "wb").write(b[:n])
            out.append(p)
    return out


# ---- the comparison (run once per OpenCV wheel, in a child) ---------------

class Lib:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.detfeed_codec_last_error.restype = ctypes.c_char_p
        self.codec = ctypes.c_void_p()
        assert self.lib.detfeed_codec_create(ctypes.byref(self.codec), 0) == 0

    def decode(self, np, path):
        px, w, h = ctypes.c_void_p(), ctypes.c_int(), ctypes.c_int()
        rc = self.lib.detfeed_codec_decode_file(self.codec, path.encode(), ctypes.byref(px),
                                                ctypes.byref(w), ctypes.byref(h))
        if rc != 0:
            return None, rc, self.lib.detfeed_codec_last_error(self.codec).decode()
        n = w.value * h.value * 3
        out = np.frombuffer(ctypes.string_at(px.value, n), np.uint8).reshape(h.value, w.value, 3)
        self.lib.detfeed_free(px)
        return out.copy(), 0, ""


def compare(args):
    import numpy as np
    import cv2
    from ultralytics.utils.patches import imread
    lib = Lib(args.lib)
    files = json.load(open(os.path.join(args.work, "files.json")))
    stats, bad, refused = {}, [], {}
    for f in files["avif"]:
        ref = imread(f)
        got, rc, msg = lib.decode(np, f)
        case = os.path.basename(f).split("-")[0]
        s = stats.setdefault(case, [0, 0, 0])
        if got is None:
            if f not in msg or (ref is not None and "not verified" not in msg):
                bad.append("%s: refused (%s) where imread reads it" % (f, msg))
            why = msg.split(": ", 1)[-1]
            refused[why] = refused.get(why, 0) + 1
            continue
        if ref is None or ref.shape != got.shape:
            bad.append("%s: imread %s, detfeed %s" % (f, None if ref is None else ref.shape,
                                                       got.shape))
            continue
        d = int((ref != got).sum())
        s[0] += 1
        s[1] += got.size
        s[2] += d
        if d:
            bad.append("%s: %d bytes differ" % (f, d))
    damaged = [0, 0]
    for f in files["cuts"]:
        ref = imread(f)
        got, rc, msg = lib.decode(np, f)
        damaged[0] += 1
        if got is None:
            damaged[1] += 1
            if f not in msg:
                bad.append("%s: message does not name the file: %s" % (f, msg))
        elif ref is None or ref.shape != got.shape or (ref != got).any():
            bad.append("%s: cut decoded where imread gives %s" % (
                f, None if ref is None else "other bytes"))
    for f, want in files["foreign"]:
        got, rc, msg = lib.decode(np, f)
        if got is not None or f not in msg or want not in msg:
            bad.append("%s: not refused as '%s' (%s)" % (f, want, msg))
    print("OpenCV %s, Pillow %s:" % (cv2.__version__, __import__("PIL").__version__))
    for case in sorted(stats):
        n, b, d = stats[case]
        if n:
            print("  %-32s %4d files %10d bytes %d differ" % (case, n, b, d))
    tot = [sum(v[i] for v in stats.values()) for i in range(3)]
    print("  all: %d files, %d bytes, %d differ" % tuple(tot))
    for why, n in sorted(refused.items()):
        print("  refused %3d: %s" % (n, why))
    print("  cuts: %d, %d refused naming the file; %d foreign files refused" % (
        damaged[0], damaged[1], len(files["foreign"])))
    for b in bad[:20]:
        print("FAIL", b)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--compare", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.compare:
        return compare(args)
    try:
        from PIL import features
        assert features.check("avif")
        import ultralytics  # noqa: F401
    except Exception as e:
        print("skipped: Pillow with AVIF and ultralytics needed (scripts/oracle_env.sh):", e)
        return SKIP
    if shutil.which("avifenc") is None:
        print("skipped: avifenc needed (scripts/deps.sh test: libavif-bin)")
        return SKIP
    if not os.path.isdir(os.path.join(args.data, "coco8")):
        print("skipped: no coco8 under", args.data)
        return SKIP
    t0 = time.time()
    files = generate(args.work, args.data, args.full)
    print("%d files written in %.1f s" % (len(files), time.time() - t0))
    foreign = []
    jpg = os.path.join(args.work, "avif_named.jpg")
    shutil.copyfile(files[0], jpg)
    foreign.append((jpg, "name other than .avif"))
    fake = os.path.join(args.work, "jpeg_named.avif")
    shutil.copyfile(sorted(glob.glob(os.path.join(args.data, "coco8/images/*/*.jpg")))[0], fake)
    foreign.append((fake, "named .avif but not AVIF"))
    json.dump({"avif": files, "cuts": cuts(args.work, files), "foreign": foreign},
              open(os.path.join(args.work, "files.json"), "w"))
    pil = os.environ.get("PYTHONPATH", "")
    rc = 0
    for v in WHEELS:
        cv = os.path.join(ROOT, "build-py/cv", v)
        if not os.path.isdir(cv):
            print("skipped: no OpenCV wheel", cv)
            return SKIP
        # Ultralytics' Image.open tries to install pi-heif when Pillow cannot
        # identify a (cut) file: never here; OpenCV's fallback stays quiet.
        env = dict(os.environ, PYTHONPATH=pil + ":" + cv if pil else cv,
                   YOLO_AUTOINSTALL="False", YOLO_OFFLINE="1", YOLO_VERBOSE="False",
                   OPENCV_LOG_LEVEL="OFF")
        r = subprocess.run([sys.executable, __file__, "--compare", "--lib", args.lib,
                            "--data", args.data, "--work", args.work], env=env)
        rc |= r.returncode
    print("compared in %.1f s" % (time.time() - t0))
    return rc


if __name__ == "__main__":
    sys.exit(main())
