"""HEIC files for tests/oracle/test_heif_oracle.py, written from the shared
data's images with pillow-heif's encoder (libheif and x265) and, where the
system has it, libheif's heif-enc. Runs with pillow-heif importable
(scripts/oracle_env.sh's build-py/heif in front):

    heif_gen.py OUT_DIR SIDE IMAGE...

(each image scaled to SIDE pixels on its long side, 0 to keep its size)

writes OUT_DIR/NAME.heic (and a few other names) and OUT_DIR/cases.json:
[[file, case, expect], ...], expect "read" (the reference reads it and
detfeed must give the same bytes), "refuse" (detfeed refuses it by design
while the reference reads it), "either" (damaged: the two libheif
versions may part; when both read it the bytes must agree) or "none"
(neither reads it).
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pillow_heif
from PIL import Image

# name: (save keyword arguments, how the picture is prepared)
VARIANTS = {
    "q80_420": dict(quality=80, chroma=420),
    "q50_422": dict(quality=50, chroma=422),
    "q90_444": dict(quality=90, chroma=444),
    "lossless": dict(quality=-1, chroma=444),
    "limited_420": dict(quality=70, full_range_flag=0),
    "limited_422": dict(quality=70, chroma=422, full_range_flag=0),
    "bt709": dict(quality=70, matrix_coefficients=1),
    "bt709_limited": dict(quality=70, matrix_coefficients=1, full_range_flag=0),
    "bt601_5": dict(quality=70, matrix_coefficients=5),
    "unspecified": dict(quality=70, matrix_coefficients=2),
    "bt2020": dict(quality=70, matrix_coefficients=9, color_primaries=9),
    "fcc": dict(quality=70, matrix_coefficients=4),
    "smpte240": dict(quality=70, matrix_coefficients=7),
    "grid": dict(quality=70, tile_size=64),
    "grid_444": dict(quality=70, tile_size=64, chroma=444),
}


def rgb16(im):
    return pillow_heif.from_bytes(mode="RGB;16", size=im.size,
                                  data=(np.asarray(im).astype(np.uint16) * 257).tobytes())


def write_variants(out, stem, im, cases):
    for name, kw in VARIANTS.items():
        path = os.path.join(out, f"{stem}_{name}.heic")
        pillow_heif.from_pillow(im).save(path, **kw)
        cases.append([os.path.basename(path), name, "read"])
    deep = {"10bit_420": dict(quality=70), "10bit_444": dict(quality=70, chroma=444),
            "10bit_422_limited": dict(quality=70, chroma=422, full_range_flag=0),
            "10bit_420_limited": dict(quality=70, full_range_flag=0)}
    for name, kw in deep.items():
        path = os.path.join(out, f"{stem}_{name}.heic")
        rgb16(im).save(path, **kw)
        cases.append([os.path.basename(path), name, "read"])
    pillow_heif.options.SAVE_HDR_TO_12_BIT = True
    rgb16(im).save(os.path.join(out, f"{stem}_12bit_420.heic"), quality=70)
    pillow_heif.options.SAVE_HDR_TO_12_BIT = False
    cases.append([f"{stem}_12bit_420.heic", "12bit_420", "read"])


def write_shapes(out, stem, im, cases):
    """Alpha, gray, odd sizes (a clean aperture), EXIF orientations (irot
    and imir), several images."""
    w, h = im.size
    a = np.asarray(im.convert("RGBA")).copy()
    a[..., 3] = (np.arange(w, dtype=np.uint32)[None, :] * 7 + np.arange(h)[:, None]) % 256
    shots = {
        "alpha": lambda p: pillow_heif.from_pillow(Image.fromarray(a)).save(p, quality=70),
        "gray": lambda p: pillow_heif.from_pillow(im.convert("L")).save(p, quality=70),
        "gray16": lambda p: pillow_heif.from_bytes(
            mode="L;16", size=im.size,
            data=(np.asarray(im.convert("L")).astype(np.uint16) * 257).tobytes()).save(
                p, quality=70),
        "alpha10": lambda p: pillow_heif.from_bytes(
            mode="RGBA;16", size=im.size,
            data=(a.astype(np.uint16) * 257).tobytes()).save(p, quality=70),
        "odd": lambda p: pillow_heif.from_pillow(im.crop((1, 0, w, h - 3))).save(
            p, quality=70),
        "odd_444": lambda p: pillow_heif.from_pillow(im.crop((0, 1, w - 1, h))).save(
            p, quality=70, chroma=444),
        "multi": lambda p: save_multi(p, im),
    }
    even = im.crop((0, 0, w & ~1, h & ~1))
    for o in range(1, 9):
        shots[f"exif{o}"] = lambda p, o=o: save_oriented(p, even, o)
    shots["grid_exif6"] = lambda p: save_oriented(p, even, 6, tile_size=64)
    shots["grid_exif3"] = lambda p: save_oriented(p, even, 3, tile_size=64, chroma=444)
    for name, save in shots.items():
        path = os.path.join(out, f"{stem}_{name}.heic")
        save(path)
        cases.append([os.path.basename(path), name, "read"])
    # libheif 1.23 upsamples 4:2:0 bilinearly before turning it where a
    # flip meets an odd size: refused
    path = os.path.join(out, f"{stem}_exif6_odd.heic")
    save_oriented(path, im.crop((0, 0, (w - 1) | 1, (h - 1) | 1)), 6)
    cases.append([os.path.basename(path), "exif6_odd", "refuse"])


def save_multi(path, im):
    heif = pillow_heif.from_pillow(im)
    heif.add_from_pillow(im.transpose(Image.Transpose.ROTATE_90))
    heif.save(path, quality=60, primary_index=1)


def save_oriented(path, im, o, **kw):
    exif = Image.Exif()
    exif[0x0112] = o
    pillow_heif.from_pillow(im).save(path, quality=70, exif=exif.tobytes(), **kw)


def write_heif_enc(out, stem, im, cases):
    """Debian's heif-enc (libheif 1.15 with x265), where it is installed."""
    if shutil.which("heif-enc") is None:
        return
    png = os.path.join(out, stem + ".png")
    im.save(png)
    rgba = os.path.join(out, stem + "_rgba.png")
    im.convert("RGBA").save(rgba)
    runs = {"enc_q50": ["-q", "50"], "enc_444": ["-q", "60", "-p", "chroma=444"],
            "enc_lossless": ["-L", "-p", "chroma=444", "--matrix_coefficients=0"],
            "enc_thumb": ["-q", "60", "-t", "96"],
            "enc_709_limited": ["-q", "60", "--matrix_coefficients=1",
                                "--full_range_flag=0"]}
    for name, opts in runs.items():
        path = os.path.join(out, f"{stem}_{name}.heic")
        subprocess.run(["heif-enc", *opts, png, "-o", path], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cases.append([os.path.basename(path), name, "read"])
    path = os.path.join(out, f"{stem}_enc_premultiplied.heic")
    subprocess.run(["heif-enc", "-q", "60", "--premultiplied-alpha", rgba, "-o", path],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cases.append([os.path.basename(path), "enc_premultiplied", "refuse"])
    os.remove(png)
    os.remove(rgba)


def write_odd_ones(out, stem, src, cases):
    """Damaged files, an XMP orientation, a HEIF under another name, a JPEG
    under .heic."""
    good = open(os.path.join(out, f"{stem}_q80_420.heic"), "rb").read()
    for k, n in enumerate((0, 12, 100, len(good) // 3, len(good) - 700, len(good) - 1)):
        with open(os.path.join(out, f"{stem}_cut{k}.heic"), "wb") as f:
            f.write(good[:n])
        cases.append([f"{stem}_cut{k}.heic", "cut", "either" if n else "none"])
    for k, at in enumerate((20, 200, len(good) // 2, len(good) - 40)):
        bad = bytearray(good)
        bad[at] ^= 0x5A
        with open(os.path.join(out, f"{stem}_flip{k}.heic"), "wb") as f:
            f.write(bad)
        cases.append([f"{stem}_flip{k}.heic", "flip", "either"])
    shutil.copy(os.path.join(out, f"{stem}_q80_420.heic"), os.path.join(out, f"{stem}_heif.jpg"))
    cases.append([f"{stem}_heif.jpg", "heif_as_jpg", "none"])
    shutil.copy(src, os.path.join(out, f"{stem}_jpeg.heic"))
    cases.append([f"{stem}_jpeg.heic", "jpeg_as_heic", "refuse"])
    im = Image.open(src)
    xmp = (b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description '
           b'tiff:Orientation="6"/></rdf:RDF></x:xmpmeta>')
    pillow_heif.from_pillow(im).save(os.path.join(out, f"{stem}_xmp6.heic"), quality=60,
                                     xmp=xmp)
    cases.append([f"{stem}_xmp6.heic", "xmp6", "read"])


def main():
    out, side, sources = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    cases = []
    for i, src in enumerate(sources):
        stem = os.path.splitext(os.path.basename(src))[0]
        im = Image.open(src).convert("RGB")
        if side:
            k = side / max(im.size)
            im = im.resize((max(1, round(im.width * k)), max(1, round(im.height * k))))
        write_variants(out, stem, im, cases)
        write_shapes(out, stem, im, cases)
        write_heif_enc(out, stem, im, cases)
        if i == 0:
            write_odd_ones(out, stem, src, cases)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f)


if __name__ == "__main__":
    main()
