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
- detfeed_codec_probe_file gives the size cv2 decodes, and refuses a file
  whose pixel rows are cut short.

    test_formats_oracle.py --detfeed BIN --data DIR [--no-ctypes] [--expect-cv V]
"""
import ctypes
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import bmp_gen  # noqa: E402
import oracle_util as ou  # noqa: E402
import webp_gen  # noqa: E402

# cv2's major.minor -> detfeed_cv_version and the stack's name
STACKS = {"4.6": (3, "4-debian"), "4.12": (0, "4"), "5.0": (1, "5.0"), "5.1": (2, "5.1")}


class Codec:
    def __init__(self, lib, opencv):
        self.lib = lib
        self.codec = ctypes.c_void_p()
        assert lib.detfeed_codec_create(ctypes.byref(self.codec), 0) == 0
        assert lib.detfeed_codec_set_opencv(self.codec, opencv) == 0

    def decode(self, np, data):
        """The BGR image, or None and the message."""
        px, w, h = ctypes.c_void_p(), ctypes.c_int(), ctypes.c_int()
        rc = self.lib.detfeed_codec_decode(self.codec, data, len(data), b"case",
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


def same(t, cv2, np, codec, name, data, limits_ok=True):
    """One file: equal bytes, or both refuse (detfeed's limits aside)."""
    want = oracle(cv2, np, data)
    got, msg = codec.decode(np, data)
    if want is None or got is None:
        if want is not None and limits_ok and "exceeds the image size limit" in msg:
            return t.check(True, name)
        return t.check(want is None and got is None,
                       f"{name}: cv2 {'refuses' if want is None else want.shape}, "
                       f"detfeed {'refuses: ' + msg if got is None else got.shape}")
    diff = -1 if want.shape != got.shape else int((want != got).sum())
    return t.check(diff == 0, f"{name}: cv2 {want.shape}, detfeed {got.shape}, "
                              f"{diff} bytes differ")


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
        b = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(min(len(b), 80)) if k % 2 else rng.randrange(len(b))
            b[at] = rng.randrange(256)
        same(t, cv2, np, codec, f"{name} mutation {k}", bytes(b))
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
        b = bytearray(data)
        for _ in range(rng.randrange(1, 3)):
            at = rng.randrange(min(len(b), 64)) if k % 2 else rng.randrange(len(b))
            b[at] = rng.randrange(256)
        same(t, cv2, np, codec, f"webp {name} mutation {k}", bytes(b))
    return len(cases)


def check_probe(t, cv2, np, codec, data_dir):
    with tempfile.TemporaryDirectory() as tmp:
        files = [(n + ".bmp", d) for n, d in bmp_gen.cases()[::5]]
        files += [(n + ".webp", d) for n, d in webp_gen.cases(data_dir)[::3]]
        for name, data in files:
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            want = oracle(cv2, np, data)
            got = codec.probe(path)
            t.check((want is None and got is None) or
                    (want is not None and got == (want.shape[1], want.shape[0])),
                    f"probe {name}: {got}, cv2 {None if want is None else want.shape}")
        name, data = next(c for c in bmp_gen.cases() if c[0].startswith("rgb24-33x17"))
        path = os.path.join(tmp, "cut.bmp")
        with open(path, "wb") as f:
            f.write(data[:-3])
        t.check(codec.probe(path) is None and oracle(cv2, np, data[:-3]) is None,
                "probe of a bitmap whose last row is cut short")


def main():
    args = ou.parse_args(lambda ap: ap.add_argument(
        "--expect-cv", help="skip unless cv2 maps to this stack (4-debian, 4, 5.0, 5.1)"))
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
    check_probe(t, cv2, np, codec, args.data)
    print(f"oracle: OpenCV {cv2.__version__} (detfeed opencv {stack}): {n} BMP files, "
          f"their cuts and 1500 mutations; {nw} WebP files, their cuts and 300 mutations")
    t.finish()


if __name__ == "__main__":
    main()
