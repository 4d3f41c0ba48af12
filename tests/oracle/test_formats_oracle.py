"""detfeed's decoders of the formats beyond JPEG and PNG against the oracle,
cv2.imdecode(buf, IMREAD_COLOR) of the cv2 this runs with (Debian's 4.6, or
an opencv-python wheel by PYTHONPATH), detfeed's codec set to that OpenCV
(detfeed_codec_set_opencv). 0 differing bytes required:

- BMP: every file tests/oracle/bmp_gen.py writes (palettes of 1, 4 and 8
  bits, RLE8 and RLE4, 16, 24 and 32 bits, bit fields and the masks OpenCV
  4.8+ applies, OS/2, V4 and V5 headers, bottom-up and top-down);
- each of them cut short at a spread of lengths, and seeded mutations of
  their bytes (header, palette and data): detfeed decodes exactly what cv2
  decodes and refuses what cv2 refuses (None, or cv2.error), the one
  difference by design being detfeed's image limits;
- WebP: every file tests/oracle/webp_gen.py writes (lossy, lossless, alpha,
  gray, tiny, animations, EXIF orientations), their cuts and mutations; the
  MPOs it writes (PIL's: cv2 reads the first picture, a JPEG);
- TIFF: every file tests/oracle/tiff_gen.py writes (8 and 16 bits; gray,
  RGB, RGBA, gray with alpha, palettes, bilevel, CMYK, YCbCr JPEG; strips
  and tiles, separate planes; uncompressed, LZW, Deflate, PackBits, JPEG,
  and what the stacks' libtiff lacks; orientations; big endian, BigTIFF;
  several pages; odd tags), read as a .tif against Ultralytics 8.4.190's
  imread (imread() below, checked against the real one where ultralytics
  is importable) and under another name against cv2.imdecode; cuts, and
  mutations as .tif. detfeed may refuse by design what it says it does not
  read (each message says why), and, with the wheels, a file in which
  libtiff reports damage (the wheels' libtiff is not Debian's);
- JPEG 2000: every file tests/oracle/jp2_gen.py writes (JP2 and J2K; 1 to
  4 components of 1 to 16 bits, signed, subsampled; RGB, gray, alpha,
  sYCC, CMYK, e-YCC; lossless and lossy, resolutions, tiles, code-block
  and precinct sizes and modes, progression orders, offsets; PIL's, cv2's
  and opj_compress's), cuts and 1000 mutations, against cv2.imdecode (what
  Ultralytics' imread does for a .jp2); with the wheels detfeed refuses a
  file in which OpenJPEG reports an error (their OpenJPEG is not Debian's);
- detfeed_codec_probe_file gives the size cv2 decodes, and refuses a file
  whose pixel rows are cut short; a TIFF's probe refuses no file the
  decode reads and gives the decoded size.

    test_formats_oracle.py --detfeed BIN --data DIR [--no-ctypes] [--expect-cv V]
"""
import ctypes
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import bmp_gen  # noqa: E402
import jp2_gen  # noqa: E402
import oracle_util as ou  # noqa: E402
import tiff_gen  # noqa: E402
import webp_gen  # noqa: E402

# cv2's major.minor -> detfeed_cv_version and the stack's name
STACKS = {"4.6": (3, "4-debian"), "4.12": (0, "4"), "5.0": (1, "5.0"), "5.1": (2, "5.1")}


class Codec:
    def __init__(self, lib, opencv):
        self.lib = lib
        self.codec = ctypes.c_void_p()
        assert lib.detfeed_codec_create(ctypes.byref(self.codec), 0) == 0
        assert lib.detfeed_codec_set_opencv(self.codec, opencv) == 0

    def decode(self, np, data, name="case"):
        """The BGR image of `data` read as a file named `name`, or None and
        the message."""
        px, w, h = ctypes.c_void_p(), ctypes.c_int(), ctypes.c_int()
        rc = self.lib.detfeed_codec_decode(self.codec, data, len(data), name.encode(),
                                           ctypes.byref(px), ctypes.byref(w), ctypes.byref(h))
        if rc != 0:
            return None, self.lib.detfeed_codec_last_error(self.codec).decode()
        n = w.value * h.value * 3
        out = np.frombuffer(ctypes.string_at(px.value, n), np.uint8).reshape(h.value, w.value, 3)
        self.lib.detfeed_free(px)
        return out.copy(), ""

    def probe(self, path):
        w, h = ctypes.c_int(), ctypes.c_int()
        rc = self.lib.detfeed_codec_probe_file(self.codec, path.encode(), ctypes.byref(w),
                                               ctypes.byref(h))
        return (w.value, h.value) if rc == 0 else None


def oracle(cv2, np, data):
    try:
        return cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    except cv2.error:  # sizes over OpenCV's own limits raise
        return None


def imread(cv2, np, data, name):
    """Ultralytics 8.4.190's imread (ultralytics/utils/patches.py) of a file
    named `name` holding `data`, as its source reads: a .tif or .tiff through
    cv2.imdecodemulti(IMREAD_UNCHANGED), its first page when that succeeds
    with colour (alpha dropped), else cv2.imdecode(IMREAD_COLOR); 16-bit
    images to their high bytes. None where it returns None or raises."""
    buf = np.frombuffer(data, np.uint8)
    try:
        im = None
        if name.lower().endswith((".tiff", ".tif")):
            success, frames = cv2.imdecodemulti(buf, cv2.IMREAD_UNCHANGED)
            if success and frames[0].ndim == 3:
                im = frames[0][..., :3]
        if im is None:
            im = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    except (cv2.error, AttributeError):  # 4.6 has no imdecodemulti
        return None
    if im is not None and im.dtype == np.uint16:
        im = (im >> 8).astype(np.uint8)
    return im


# Refusals by design: images cv2 gives that detfeed does not (each says why).
BY_DESIGN = ("detfeed does not read", "hands on unconverted")
DECODED = []  # bytes of each TIFF decoded alike by both


def same(t, cv2, np, codec, name, data, limits_ok=True, file_name="case", refused=None):
    """One file: equal bytes, or both refuse (detfeed's limits aside, and
    with `refused` a list, its refusals by design, noted there)."""
    want = imread(cv2, np, data, file_name)
    got, msg = codec.decode(np, data, file_name)
    if want is None or got is None:
        if want is not None and limits_ok and "exceeds the image size limit" in msg:
            return t.check(True, name)
        if want is not None and refused is not None and any(b in msg for b in BY_DESIGN):
            refused.append(f"{name}: {msg}")
            return t.check(True, name)
        return t.check(want is None and got is None,
                       f"{name}: cv2 {'refuses' if want is None else want.shape}, "
                       f"detfeed {'refuses: ' + msg if got is None else got.shape}")
    diff = -1 if want.shape != got.shape else int((want != got).sum())
    if refused is not None and diff == 0:
        DECODED.append(want.size)
    return t.check(diff == 0, f"{name}: cv2 {want.shape}, detfeed {got.shape}, "
                              f"{diff} bytes differ")


def scribble(rng, data, k, head, most=3):
    """`data` with 1 to `most` bytes set to random values: within its first
    `head` bytes for an odd k, anywhere for an even one."""
    b = bytearray(data)
    for _ in range(rng.randrange(1, most + 1)):
        at = rng.randrange(min(len(b), head)) if k % 2 else rng.randrange(len(b))
        b[at] = rng.randrange(256)
    return bytes(b)


def check_bmp(t, cv2, np, codec):
    cases = bmp_gen.cases()
    for name, data in cases:
        same(t, cv2, np, codec, name, data)
    rng = random.Random(11)
    for name, data in cases[::7]:
        for n in sorted({1, 2, 14, 17, 30, 54, len(data) // 2, len(data) - 1}):
            if n < len(data):
                same(t, cv2, np, codec, f"{name} cut to {n} bytes", data[:n])
    for k in range(1500):
        name, data = cases[rng.randrange(len(cases))]
        same(t, cv2, np, codec, f"{name} mutation {k}", scribble(rng, data, k, 80))
    return len(cases)


def check_webp(t, cv2, np, codec, data_dir):
    cases = webp_gen.cases(data_dir)
    for name, data in cases + webp_gen.mpo_cases(data_dir):
        same(t, cv2, np, codec, "webp " + name, data)
    rng = random.Random(13)
    for name, data in cases[::5]:
        for n in sorted({1, 20, 31, 32, 40, len(data) // 2, len(data) - 1}):
            if n < len(data):
                same(t, cv2, np, codec, f"webp {name} cut to {n} bytes", data[:n])
    for k in range(300):
        name, data = cases[rng.randrange(len(cases))]
        same(t, cv2, np, codec, f"webp {name} mutation {k}", scribble(rng, data, k, 64, 2))
    return len(cases)


def mutate(rng, data, k):
    """`data` with one to three bytes changed: in the first 16 bytes, in the
    last 256 (where tiff_gen puts the directories) or anywhere."""
    b = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        where = k % 3
        at = (rng.randrange(min(len(b), 16)) if where == 0 else
              len(b) - 1 - rng.randrange(min(len(b), 256)) if where == 1 else
              rng.randrange(len(b)))
        b[at] = rng.randrange(256) if rng.random() < 0.7 else b[at] ^ (1 << rng.randrange(8))
    return bytes(b)


def check_tiff(t, cv2, np, codec, data_dir, mutations, debian):
    """Every tiff_gen file read as a .tif (imread's way) and under another
    name (imdecode's), cuts of some, and mutations as .tif (with Debian's
    4.6, where Ultralytics reads no .tif, under another name)."""
    cases = tiff_gen.cases(data_dir)
    tif = ("case", "case.jpg") if debian else ("case.tif", "case.TIFF")
    refused = []
    for name, data in cases:
        for fn in ("case.tif", "case"):
            same(t, cv2, np, codec, f"tiff {name} as {fn}", data, file_name=fn,
                 refused=refused)
    rng = random.Random(17)
    for name, data in cases[::6]:
        for n in sorted({1, 4, 8, 9, 16, len(data) // 3, len(data) // 2, len(data) - 2}):
            if 0 < n < len(data):
                same(t, cv2, np, codec, f"tiff {name} cut to {n} bytes", data[:n],
                     file_name=tif[n % 2], refused=refused)
    for k in range(mutations):
        name, data = cases[rng.randrange(len(cases))]
        same(t, cv2, np, codec, f"tiff {name} mutation {k}", mutate(rng, data, k),
             file_name=tif[k % 5 == 0], refused=refused)
    return len(cases), refused


def check_jp2(t, cv2, np, codec, data_dir, mutations):
    """Every jp2_gen file (read as a .jp2: cv2.imdecode), cuts of some and
    mutations."""
    cases = jp2_gen.cases(data_dir)
    refused = []
    for name, data in cases:
        same(t, cv2, np, codec, f"jp2 {name}", data, file_name="case.jp2", refused=refused)
    rng = random.Random(19)
    for name, data in cases[::8]:
        for n in sorted({1, 4, 12, 40, len(data) // 3, len(data) // 2, len(data) - 2}):
            if 0 < n < len(data):
                same(t, cv2, np, codec, f"jp2 {name} cut to {n} bytes", data[:n],
                     file_name="case.jp2", refused=refused)
    for k in range(mutations):
        name, data = cases[rng.randrange(len(cases))]
        same(t, cv2, np, codec, f"jp2 {name} mutation {k}", scribble(rng, data, k, 200),
             file_name="case.jp2", refused=refused)
    return len(cases), refused


def check_imread_emulation(t, cv2, np, data_dir):
    """imread() above against the real Ultralytics imread, where Ultralytics
    is importable (a venv of it): the same arrays, or both None / raising."""
    try:
        from ultralytics.utils.patches import imread as real
    except Exception:  # noqa: BLE001 - no Ultralytics here
        print("note: ultralytics is not importable: imread() is not compared with it")
        return 0
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        files = [("tiff", n, d, "x.tif") for n, d in tiff_gen.cases(data_dir)[::3]]
        files += [("jp2", n, d, "x.jp2") for n, d in jp2_gen.cases(data_dir)[::4]]
        for kind, name, data, fn in files:
            path = os.path.join(tmp, fn)
            with open(path, "wb") as f:
                f.write(data)
            try:
                r = real(path)
            except Exception:  # noqa: BLE001 - imread raising is None here
                r = None
            e = imread(cv2, np, data, fn)
            t.check((r is None and e is None) or
                    (r is not None and e is not None and r.dtype == e.dtype and
                     r.shape == e.shape and r.tobytes() == e.tobytes()),
                    f"imread emulation of {kind} {name}")
            n += 1
    return n


def check_probe(t, cv2, np, codec, data_dir):
    with tempfile.TemporaryDirectory() as tmp:
        files = [(n + ".bmp", d) for n, d in bmp_gen.cases()[::5]]
        files += [(n + ".webp", d) for n, d in webp_gen.cases(data_dir)[::3]]
        for name, data in files:
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            want = imread(cv2, np, data, name)
            got = codec.probe(path)
            t.check((want is None and got is None) or
                    (want is not None and got == (want.shape[1], want.shape[0])),
                    f"probe {name}: {got}, cv2 {None if want is None else want.shape}")
        # TIFF and JPEG 2000: the header gives the size and the refusals it
        # can see; a file whose pixels fail is refused by the decode only
        later = [(n, d, (n + ".tif", n)) for n, d in tiff_gen.cases(data_dir)[::3]]
        later += [(n, d, (n + ".jp2",)) for n, d in jp2_gen.cases(data_dir)[::2]]
        for name, data, names in later:
            for fn in names:
                path = os.path.join(tmp, fn)
                with open(path, "wb") as f:
                    f.write(data)
                got, _ = codec.decode(np, data, fn)
                size = codec.probe(path)
                t.check((size is None and got is None) or
                        (size is not None and
                         (got is None or size == (got.shape[1], got.shape[0]))),
                        f"probe {fn}: {size}, decode {None if got is None else got.shape}")
        name, data = next(c for c in bmp_gen.cases() if c[0].startswith("rgb24-33x17"))
        path = os.path.join(tmp, "cut.bmp")
        with open(path, "wb") as f:
            f.write(data[:-3])
        t.check(codec.probe(path) is None and oracle(cv2, np, data[:-3]) is None,
                "probe of a bitmap whose last row is cut short")


def opencv_name(cv2):
    return STACKS[".".join(cv2.__version__.split(".")[:2])][1]


def main():
    def extra(ap):
        ap.add_argument("--expect-cv",
                        help="skip unless cv2 maps to this stack (4-debian, 4, 5.0, 5.1)")
        ap.add_argument("--tiff-mutations", type=int, default=1500,
                        help="mutated TIFF files to compare (default 1500)")
    args = ou.parse_args(extra)
    cv2, np = ou.require_cv2()
    version = ".".join(cv2.__version__.split(".")[:2])
    if version not in STACKS:
        print(f"SKIP: cv2 {cv2.__version__} is not a stack detfeed knows")
        sys.exit(ou.SKIP)
    opencv, stack = STACKS[version]
    if args.expect_cv and stack != args.expect_cv:
        print(f"SKIP: cv2 {args.expect_cv} is not importable here (found {cv2.__version__})")
        sys.exit(ou.SKIP)
    t = ou.Counter("test_formats_oracle")
    ou.finish_if_no_ctypes(args, t, "the decoders")
    codec = Codec(ou.library(args.detfeed), opencv)
    n = check_bmp(t, cv2, np, codec)
    nw = check_webp(t, cv2, np, codec, args.data)
    nt, refused = check_tiff(t, cv2, np, codec, args.data, args.tiff_mutations,
                             stack == "4-debian")
    tiff_decoded = list(DECODED)
    del DECODED[:]
    nj, jp2_refused = check_jp2(t, cv2, np, codec, args.data, 1000)
    ne = check_imread_emulation(t, cv2, np, args.data)
    check_probe(t, cv2, np, codec, args.data)
    for line in refused + jp2_refused:
        print("refused by design:", line)
    damaged = sum("a damaged TIFF" in r for r in refused)
    jp2_damaged = len(jp2_refused)  # the only JPEG 2000 refusals by design
    print(f"oracle: OpenCV {cv2.__version__} (detfeed opencv {stack}): {n} BMP files, "
          f"their cuts and 1500 mutations; {nw} WebP files, their cuts and 300 mutations; "
          f"{nt} TIFF files (as .tif and not), their cuts and {args.tiff_mutations} "
          f"mutations: {len(tiff_decoded)} decoded alike ({sum(tiff_decoded)} bytes, 0 "
          f"differ), {len(refused) - damaged} refused by design, {damaged} refused as "
          f"damaged (libtiff's errors), the rest refused by both; {nj} JPEG 2000 files, "
          f"their cuts and 1000 mutations: {len(DECODED)} decoded alike ({sum(DECODED)} "
          f"bytes, 0 differ), {jp2_damaged} refused as damaged (OpenJPEG's errors), the "
          f"rest refused by both; imread emulation checked on {ne} files")
    t.finish()


if __name__ == "__main__":
    main()
