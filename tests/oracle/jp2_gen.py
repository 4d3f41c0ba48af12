"""JPEG 2000 files for the format oracle, written by PIL (OpenJPEG) from the
shared data's coco8 images (seeded crops) or a noise picture, and by cv2
(its OpenJPEG encoder, so those files follow the stack under test):

- JP2 files and bare codestreams (J2K); RGB, gray, RGBA, gray with alpha,
  16-bit gray (PIL) and 16-bit BGR, BGRA and gray (cv2), YCbCr (sYCC);
- lossless (5/3) and lossy (9/7) at rates and at PSNRs, one to six
  resolutions, tiles, code-block and precinct sizes, the five progression
  orders, with and without the colour transform, an image offset;
- odd sizes down to 1 x 1;
- and, where OpenJPEG's opj_compress is installed (Debian's
  libopenjp2-tools), files it writes from raw samples: 1 to 4 components of
  1 to 16 bits, unsigned and signed, subsampled components, image and tile
  offsets, code-block modes, SOP/EPH, PLT/TLM, tile-parts, guard bits, a
  comment; with their colour box's enumerated colour space rewritten (gray,
  sRGB, sYCC, e-YCC, CMYK, unknown), a component's precision rewritten in
  the SIZ marker, and a bare codestream of each kind.

Each case is (name, bytes)."""
import functools
import io
import os
import random
import shutil
import struct
import subprocess
import tempfile

import tiff_gen


def _save(im, **kw):
    b = io.BytesIO()
    im.save(b, "JPEG2000", **kw)
    return b.getvalue()


def _variants(rng):
    """Encoder settings: (name, PIL keywords)."""
    out = [("lossless", {}), ("lossy-rates", {"irreversible": True, "quality_mode": "rates",
                                              "quality_layers": [20]}),
           ("lossy-layers", {"irreversible": True, "quality_layers": [40, 20, 8]}),
           ("lossy-db", {"irreversible": True, "quality_mode": "dB", "quality_layers": [32]}),
           ("res1", {"num_resolutions": 1}), ("res6-lossy", {"num_resolutions": 6,
                                                             "irreversible": True,
                                                             "quality_layers": [12]}),
           ("tiles", {"tile_size": (32, 32)}),
           ("tiles-lossy", {"tile_size": (48, 32), "irreversible": True, "quality_layers": [15]}),
           ("cblk16", {"codeblock_size": (16, 16)}),
           ("precincts", {"precinct_size": (64, 64), "num_resolutions": 3}),
           ("nomct-lossy", {"mct": 0, "irreversible": True, "quality_layers": [10]}),
           ("offset", {"offset": (3, 5)})]
    for prog in ("RLCP", "RPCL", "PCRL", "CPRL"):
        out.append(("prog-" + prog, {"progression": prog, "irreversible": rng.random() < 0.5,
                                     "quality_layers": [25, 10]}))
    return out


def _pil_cases(pic, k, rng):
    out = []
    la = pic.convert("LA")
    la.putalpha(pic.convert("L").point(lambda v: 255 - v))
    rgba = pic.convert("RGBA")
    rgba.putalpha(pic.convert("L"))
    modes = {"RGB": pic, "L": pic.convert("L"), "RGBA": rgba, "LA": la,
             "I16": pic.convert("L").point(lambda v: v * 257 + 3, "I").convert("I;16")}
    for mode, im in modes.items():
        for vname, kw in _variants(rng):
            if mode != "RGB" and rng.random() < 0.6:
                continue  # every setting with RGB, a sample with the rest
            for j2k in (False, True):
                if j2k and rng.random() < 0.7:
                    continue
                try:
                    data = _save(im, no_jp2=j2k, **kw)
                except Exception:  # noqa: BLE001 - a setting this PIL does not have
                    continue
                out.append(("pil-%s-%s%s-%d" % (mode, vname, "-j2k" if j2k else "", k), data))
    for vname, kw in (("", {}), ("-lossy", {"irreversible": True, "quality_layers": [20]}),
                      ("-j2k", {"no_jp2": True})):
        try:
            out.append(("pil-YCbCr%s-%d" % (vname, k), _save(pic.convert("YCbCr"), **kw)))
        except Exception:  # noqa: BLE001 - a setting this PIL does not have
            pass
    for w, h in ((1, 1), (3, 2), (17, 9)):
        out.append(("pil-small-%dx%d-%d" % (w, h, k), _save(pic.resize((w, h)))))
    return out


def _cv2_cases(pic, k):
    import cv2
    import numpy as np
    out = []
    bgr = cv2.cvtColor(np.asarray(pic), cv2.COLOR_RGB2BGR)
    rng = np.random.default_rng(k)
    b16 = (bgr.astype(np.uint16) << 8) | rng.integers(0, 256, bgr.shape, dtype=np.uint16)
    bgra = cv2.cvtColor(bgr, cv2.COLOR_BGR2BGRA)
    x100 = [cv2.IMWRITE_JPEG2000_COMPRESSION_X1000, 100]
    for name, img, params in (("bgr", bgr, []), ("bgr-x100", bgr, x100), ("bgr16", b16, []),
                              ("gray16", b16[..., 0], []), ("bgra", bgra, []),
                              ("bgra16", cv2.cvtColor(b16, cv2.COLOR_BGR2BGRA), [])):
        ok, enc = cv2.imencode(".jp2", img, params)
        if ok:
            out.append(("cv2-%s-%d" % (name, k), enc.tobytes()))
    return out


def _raw(pic, comps, bits, signed, sub, rng):
    """Planar big-endian samples of `pic` (RGB; a fourth component from its
    gray) at `bits`, each component subsampled by sub[c]."""
    import numpy as np
    a = np.asarray(pic, dtype=np.int64)
    planes = [a[..., 0], a[..., 1], a[..., 2], a.sum(axis=2) // 3]
    if comps < 3:
        planes = [planes[3], planes[0]]
    out = b""
    for c in range(comps):
        dx, dy = sub[c]
        v = planes[c][::dy, ::dx]
        if bits >= 8:
            v = (v << (bits - 8)) | np.asarray([rng.randrange(1 << (bits - 8))
                                                 for _ in range(v.size)]).reshape(v.shape)
        else:
            v = v >> (8 - bits)
        if signed:
            v = v - (1 << (bits - 1))
        dt = (">i2" if signed else ">u2") if bits > 8 else ("i1" if signed else "u1")
        out += v.astype(dt).tobytes()
    return out


def _opj(tmp, pic, comps, bits, signed, sub, args, j2k, rng):
    """opj_compress's file of raw samples (see _raw) with `args`, or None
    where it refuses."""
    w, h = pic.size
    raw = os.path.join(tmp, "in.raw")
    with open(raw, "wb") as f:
        f.write(_raw(pic, comps, bits, signed, sub, rng))
    out = os.path.join(tmp, "out.j2k" if j2k else "out.jp2")
    fmt = "%d,%d,%d,%d,%s@%s" % (w, h, comps, bits, "s" if signed else "u",
                                 ":".join("%dx%d" % d for d in sub))
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run(["opj_compress", "-i", raw, "-o", out, "-F", fmt] + args,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode != 0 or not os.path.exists(out):
        return None
    with open(out, "rb") as f:
        return f.read()


_OPTIONS = [
    ("plain", []), ("lossy", ["-I", "-r", "12"]), ("res1", ["-n", "1"]), ("res6", ["-n", "6"]),
    ("tiles", ["-t", "16,12", "-n", "3"]),
    ("tiles-off", ["-t", "24,16", "-T", "5,3", "-d", "7,4", "-n", "3"]),
    ("off", ["-d", "3,1"]), ("cblk", ["-b", "8,32"]),
    ("prec", ["-c", "[32,32],[16,16]", "-n", "4"]), ("rpcl", ["-p", "RPCL", "-r", "20,5,1"]),
    ("cprl", ["-p", "CPRL", "-I", "-q", "30,40"]),
    ("pcrl", ["-p", "PCRL", "-t", "20,20", "-n", "3"]), ("rlcp", ["-p", "RLCP", "-r", "8,2"]),
    ("modes", ["-M", "63"]), ("lazy", ["-M", "1", "-I", "-r", "6"]),
    ("sop-eph", ["-SOP", "-EPH", "-r", "10,1"]),
    ("plt-tlm", ["-PLT", "-TLM", "-t", "16,16", "-n", "3"]),
    ("tp", ["-TP", "R", "-t", "20,14", "-n", "3"]), ("guard", ["-GuardBits", "0", "-I"]),
    ("comment", ["-C", "detfeed"]), ("mct0", ["-mct", "0"])]


def _box_patch(data, box, at, value):
    """`data` with the bytes at `at` into its first `box` box replaced."""
    i = data.find(box)
    if i < 0:
        return None
    b = bytearray(data)
    b[i + 4 + at:i + 4 + at + len(value)] = value
    return bytes(b)


def _siz_prec(data, comp, prec, signed=False):
    """`data` with component `comp`'s Ssiz in the SIZ marker rewritten."""
    i = data.find(b"\xff\x51")
    if i < 0 or i + 40 + 3 * comp >= len(data):
        return None
    b = bytearray(data)
    b[i + 40 + 3 * comp] = (prec - 1) | (0x80 if signed else 0)
    return bytes(b)


def _opj_cases(pic, k, rng):
    if shutil.which("opj_compress") is None:
        return []
    w, h = pic.size
    pic = pic.crop((0, 0, min(w, 48) & ~3, min(h, 36) & ~3))
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        def add(name, *a):
            data = _opj(tmp, pic, *a)
            if data is not None:
                out.append(("opj-%s-%d" % (name, k), data))
            return data
        for bits in range(1, 17):
            for comps in (1, 3):
                j2k = rng.random() < 0.25
                add("c%d-u%d%s" % (comps, bits, "-j2k" if j2k else ""), comps, bits, False,
                    [(1, 1)] * comps, [], j2k, rng)
        for comps in (2, 4):
            for bits in (4, 7, 8, 9, 12, 16):
                add("c%d-u%d" % (comps, bits), comps, bits, False, [(1, 1)] * comps, [],
                    False, rng)
        for comps, bits in ((1, 8), (3, 8), (3, 12), (1, 16), (4, 10), (3, 1)):
            add("c%d-s%d" % (comps, bits), comps, bits, True, [(1, 1)] * comps, [], False, rng)
        for sub in ([(1, 1), (2, 2), (2, 2)], [(1, 1), (2, 1), (2, 1)], [(2, 2)] * 3,
                    [(1, 1), (1, 1), (1, 1), (2, 2)], [(1, 1), (1, 2)], [(2, 1)]):
            for j2k in (False, True):
                add("sub-%s%s" % ("-".join("%dx%d" % d for d in sub), "-j2k" if j2k else ""),
                    len(sub), 8, False, sub, ["-mct", "0"], j2k, rng)
        add("whole-s2", 3, 8, False, [(1, 1)] * 3, ["-s", "2,2"], False, rng)
        for name, args in _OPTIONS:
            comps = rng.choice((1, 3, 3, 4))
            bits = rng.choice((8, 8, 10, 12, 16))
            for j2k in (False, True):
                if j2k and rng.random() < 0.5:
                    continue
                add("%s-c%d-u%d%s" % (name, comps, bits, "-j2k" if j2k else ""), comps, bits,
                    False, [(1, 1)] * comps, args, j2k, rng)
        rgb = _opj(tmp, pic, 3, 8, False, [(1, 1)] * 3, [], False, rng)
        gray = _opj(tmp, pic, 1, 8, False, [(1, 1)], [], False, rng)
        rgba = _opj(tmp, pic, 4, 12, False, [(1, 1)] * 4, [], False, rng)
        for base, bname in ((rgb, "rgb"), (gray, "gray"), (rgba, "rgba12")):
            if base is None:
                continue
            for cs in (16, 17, 18, 24, 12, 3, 99):  # colr: METH 1, its EnumCS
                data = _box_patch(base, b"colr", 3, struct.pack(">I", cs))
                if data is not None:
                    out.append(("opj-%s-cs%d-%d" % (bname, cs, k), data))
            data = _box_patch(base, b"colr", 0, bytes([2]))  # METH 2 without a profile
            if data is not None:
                out.append(("opj-%s-meth2-%d" % (bname, k), data))
            for comp, prec, sgn in ((0, 12, False), (0, 6, False), (0, 9, True),
                                    (0, 20, False), (0, 31, False), (0, 32, False),
                                    (0, 33, False), (0, 38, False), (0, 39, False)):
                data = _siz_prec(base, comp, prec, sgn)
                if data is not None:
                    out.append(("opj-%s-siz%d-p%d%s-%d" % (bname, comp, prec, "s" if sgn else "",
                                                           k), data))
            j = base.find(b"\xff\x4f\xff\x51")
            if j > 0:
                out.append(("opj-%s-codestream-%d" % (bname, k), base[j:]))
    return out


@functools.lru_cache(maxsize=4)
def _cases(data_dir, seed):
    rng = random.Random(seed)
    out = []
    for k, pic in enumerate(tiff_gen.pictures(data_dir, rng, count=2)):
        pic = pic.crop((0, 0, min(pic.size[0], 150), min(pic.size[1], 110)))
        out += _pil_cases(pic, k, rng)
        out += _cv2_cases(pic, k)
        out += _opj_cases(pic, k, rng)
    return tuple(out)


def cases(data_dir, seed=13):
    return list(_cases(data_dir, seed))
