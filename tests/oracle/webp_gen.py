"""WebP files for the format oracle, written with PIL (libwebp) from the
shared data's coco8 images (a seeded crop of each) or, without them, from a
seeded noise picture:

- lossy at qualities 10 to 100, lossless, with alpha (lossy and lossless),
  gray, odd sizes down to 1 x 1;
- animations of two and three frames (OpenCV 4.6 refuses them, later
  versions give the first frame);
- EXIF orientations 1 to 8, the EXIF chunk with and without the "Exif\\0\\0"
  prefix (OpenCV 5 applies a readable one, 4.x none).

Each case is (name, bytes)."""
import io
import random

import tiff_gen  # pictures(): the seeded crops every generator starts from


def _save(im, **kw):
    b = io.BytesIO()
    im.save(b, "WEBP", **kw)
    return b.getvalue()


def _exif(orientation, prefix):
    from PIL import Image
    ex = Image.Exif()
    ex[0x0112] = orientation
    raw = ex.tobytes()
    if raw.startswith(b"Exif\x00\x00") and not prefix:
        raw = raw[6:]
    elif prefix and not raw.startswith(b"Exif"):
        raw = b"Exif\x00\x00" + raw
    return raw


def mpo_cases(data_dir, seed=6):
    """MPO files (PIL's: JPEG pictures one after the other, cv2 reads the
    first), with and without an EXIF orientation."""
    rng = random.Random(seed)
    out = []
    for k, im in enumerate(tiff_gen.pictures(data_dir, rng, count=4)):
        for o in (1, 6):
            b = io.BytesIO()
            im.save(b, "MPO", save_all=True, append_images=[im.rotate(90), im.rotate(180)],
                    quality=80, exif=_exif(o, True))
            out.append(("mpo-exif%d-%d" % (o, k), b.getvalue()))
    return out


def cases(data_dir, seed=5):
    rng = random.Random(seed)
    out = []
    for k, im in enumerate(tiff_gen.pictures(data_dir, rng, count=4)):
        for q in (10, 50, 80, 100):
            out.append(("lossy-q%d-%d" % (q, k), _save(im, quality=q)))
        out.append(("lossless-%d" % k, _save(im, lossless=True)))
        rgba = im.convert("RGBA")
        rgba.putalpha(im.convert("L"))
        out.append(("alpha-lossy-%d" % k, _save(rgba, quality=70)))
        out.append(("alpha-lossless-%d" % k, _save(rgba, lossless=True, exact=True)))
        out.append(("gray-%d" % k, _save(im.convert("L"), quality=60)))
        for w, h in ((1, 1), (3, 2), (17, 9)):
            out.append(("small-%dx%d-%d" % (w, h, k), _save(im.resize((w, h)), quality=90)))
        frames = [im.rotate(90 * j, expand=False) for j in range(1, 3)]
        out.append(("anim2-%d" % k, _save(im, save_all=True, append_images=frames[:1],
                                         duration=50, quality=75)))
        out.append(("anim3-alpha-%d" % k, _save(rgba, save_all=True,
                                               append_images=[f.convert("RGBA") for f in frames],
                                               duration=40, lossless=True)))
        for o in range(1, 9):
            for prefix in (False, True):
                out.append(("exif%d%s-%d" % (o, "-prefixed" if prefix else "", k),
                            _save(im, quality=75, exif=_exif(o, prefix))))
    return out
