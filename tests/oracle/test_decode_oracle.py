"""detfeed_codec_decode (through ctypes) against cv2.imdecode(buf, IMREAD_COLOR),
the oracle. 0 differing bytes required in every category:

- every real image of the shared data (and detfeed_codec_probe_file's size);
- generated PNGs of every colour type and bit depth (gray 1/2/4/8/16, gray +
  alpha 8/16, RGB 8/16, RGBA 8/16, palette 1/2/4/8 with and without tRNS,
  tRNS on gray and RGB), interlaced or not, with gAMA/sBIT/bKGD/iCCP chunks
  that cv2 ignores, odd sizes; eXIf orientations 1..8 before and after the
  image data, and the eXIf chunks libpng drops (bad CRC, too short, wrong
  byte order, duplicates);
- PNG structure cases where cv2 succeeds (bad CRC on an ancillary chunk,
  data after IEND, extra zlib data) or fails (bad IDAT or IEND CRC, missing
  IEND, bad Adler-32, short data): detfeed must succeed or fail alike;
- generated JPEGs: cv2 qualities, progressive, optimized, restart intervals,
  PIL 4:4:4 / 4:2:2 / 4:2:0, grayscale, odd sizes, each with EXIF
  orientations 1..8 in both byte orders spliced in as an APP1 segment;
- EXIF parsing edge cases (which APP1, identifier, magic, IFD offset,
  truncation, duplicate entries, the tags whose out-of-range values make
  OpenCV stop reading) and a seeded fuzz of IFDs built from them.

Where cv2 and detfeed differ by design (CMYK refused, libjpeg warnings such
as truncation refused) the test checks the refusal and its status instead.

The cv2 facts the implementation relies on (16-bit high byte, low-depth
scaling, the eight orientation transforms, PNG eXIf honoured) are checked
first, without the library; under a sanitizer build (--no-ctypes) only
they run.
"""
import ctypes
import io
import os
import struct
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(__file__))
import oracle_util as ou  # noqa: E402

CAPI = ou.capi()  # the status codes (detfeed._lib)


# ---- the library ------------------------------------------------------------

class Lib:
    def __init__(self, detfeed_bin):
        self.lib = lib = ou.library(detfeed_bin)
        self.codec = ctypes.c_void_p()
        assert lib.detfeed_codec_create(ctypes.byref(self.codec), 0) == 0

    def decode(self, np, data, name="mem"):
        """(status, BGR array or None, message)."""
        px, w, h = ctypes.c_void_p(), ctypes.c_int(), ctypes.c_int()
        rc = self.lib.detfeed_codec_decode(self.codec, data, len(data), name.encode(),
                                           ctypes.byref(px), ctypes.byref(w), ctypes.byref(h))
        msg = self.lib.detfeed_codec_last_error(self.codec).decode()
        if rc != 0:
            assert not px.value, "pixels not NULL after a failure"
            return rc, None, msg
        n = w.value * h.value * 3
        img = np.frombuffer(ctypes.string_at(px.value, n), np.uint8).reshape(h.value, w.value, 3)
        self.lib.detfeed_free(px)
        return rc, img, msg

    def probe(self, path):
        w, h = ctypes.c_int(), ctypes.c_int()
        rc = self.lib.detfeed_codec_probe_file(self.codec, path.encode(), ctypes.byref(w),
                                               ctypes.byref(h))
        return rc, w.value, h.value


class Tally:
    """Images, bytes compared and bytes differing for one category. With a
    folder, every input cv2 decodes is also written there and probed
    (detfeed_codec_probe_file reads files piece by piece: its own path)."""

    def __init__(self, t, cv2, np, lib, name, tmp=None):
        self.t, self.cv2, self.np, self.lib, self.name = t, cv2, np, lib, name
        self.tmp = tmp
        self.images = self.compared = self.differ = self.both_fail = self.probed = 0

    def cv2_decode(self, data):
        np = self.np
        return self.cv2.imdecode(np.frombuffer(data, np.uint8), self.cv2.IMREAD_COLOR)

    def same(self, data, label):
        """detfeed and cv2 agree: equal bytes, or both refuse."""
        want = self.cv2_decode(data)
        rc, got, msg = self.lib.decode(self.np, data, label)
        self.images += 1
        if want is None:
            self.both_fail += 1
            return self.t.check(rc < 0 and label in msg,
                                f"{self.name}/{label}: cv2 refuses, detfeed gives {rc} ({msg})")
        if not self.t.check(rc == 0, f"{self.name}/{label}: detfeed failed: {rc} {msg}"):
            return False
        if not self.t.check(got.shape == want.shape,
                            f"{self.name}/{label}: size {got.shape} != cv2 {want.shape}"):
            return False
        d = int(self.np.count_nonzero(got != want))
        self.compared += want.size
        self.differ += d
        if self.tmp:
            path = os.path.join(self.tmp, "probe.img")
            with open(path, "wb") as f:
                f.write(data)
            rc, w, h = self.lib.probe(path)
            self.probed += 1
            self.t.check(rc == 0 and (h, w) == want.shape[:2],
                         f"{self.name}/{label}: probe gives {rc} {w}x{h}, cv2 {want.shape}")
        return self.t.check(d == 0, f"{self.name}/{label}: {d} bytes differ from cv2")

    def refused(self, data, label, status, words):
        """detfeed refuses by design where cv2 decodes (or not)."""
        rc, _, msg = self.lib.decode(self.np, data, label)
        self.images += 1
        return self.t.check(rc == status and label in msg and words in msg,
                            f"{self.name}/{label}: want status {status} and '{words}', "
                            f"got {rc} ({msg})")

    def report(self):
        extra = f", {self.both_fail} refused by both" if self.both_fail else ""
        extra += f", {self.probed} probed" if self.probed else ""
        print(f"{self.name}: {self.images} images, {self.compared} bytes compared, "
              f"{self.differ} differ{extra}", flush=True)


# ---- writing test files ---------------------------------------------------------

def chunk(kind, data, crc=None):
    c = zlib.crc32(kind + data) if crc is None else crc
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", c & 0xFFFFFFFF)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2)]


def pack_rows(np, s, depth):
    """Rows of samples (h, n) as PNG scanlines with filter byte 0."""
    out = b""
    for row in s:
        if depth == 16:
            raw = row.astype(">u2").tobytes()
        elif depth == 8:
            raw = row.astype(np.uint8).tobytes()
        else:
            per = 8 // depth
            r = np.concatenate([row, np.zeros((-len(row)) % per, row.dtype)]).reshape(-1, per)
            v = np.zeros(r.shape[0], np.int64)
            for k in range(per):
                v = (v << depth) | r[:, k]
            raw = v.astype(np.uint8).tobytes()
        out += b"\0" + raw
    return out


def make_png(np, samples, depth, ctype, interlace=0, before=b"", after=b"", plte=None,
             idat_split=None):
    """A PNG of samples (h, w, channels) exactly as given; `before` goes
    after PLTE and before IDAT, `after` between IDAT and IEND."""
    h, w, ch = samples.shape
    ihdr = struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, interlace)
    if interlace:
        raw = b""
        for x0, y0, dx, dy in ADAM7:
            sub = samples[y0::dy, x0::dx]
            if sub.size:
                raw += pack_rows(np, sub.reshape(sub.shape[0], -1), depth)
    else:
        raw = pack_rows(np, samples.reshape(h, w * ch), depth)
    z = zlib.compress(raw, 6)
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
    if plte is not None:
        out += chunk(b"PLTE", plte.astype(np.uint8).tobytes())
    out += before
    if idat_split:
        out += chunk(b"IDAT", z[:idat_split]) + chunk(b"IDAT", z[idat_split:])
    else:
        out += chunk(b"IDAT", z)
    return out + after + chunk(b"IEND", b"")


def tiff_block(entries, le=True, magic=42, ifd=8, count=None, tail=b""):
    """A TIFF header and IFD0 of (tag, type, count, 4 value bytes) entries."""
    e = "<" if le else ">"
    out = (b"II" if le else b"MM") + struct.pack(e + "HI", magic, ifd)
    out += b"\xee" * (ifd - 8) if ifd > 8 else b""
    out += struct.pack(e + "H", len(entries) if count is None else count)
    for tag, typ, cnt, val in entries:
        out += struct.pack(e + "HHI", tag, typ, cnt) + val
    return out + b"\0\0\0\0" + tail


def orientation_entry(o, le=True, typ=3):
    e = "<" if le else ">"
    val = struct.pack(e + "HH", o, 0) if typ == 3 else struct.pack(e + "I", o)
    return (0x0112, typ, 1, val)


def app1(payload):
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload


def exif_app1(o, le=True):
    return app1(b"Exif\0\0" + tiff_block([orientation_entry(o, le)], le))


def dc_jpeg(rng, w, h, factors):
    """A baseline JPEG of flat 8x8 blocks (DC only, random levels) with any
    sampling factors: frames TurboJPEG's header reader cannot classify."""
    bits = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]  # the usual DC table
    codes, code, k = {}, 0, 0
    for length, n in enumerate(bits, 1):
        for _ in range(n):
            codes[k] = (code, length)
            code, k = code + 1, k + 1
        code <<= 1

    def seg(m, d):
        return b"\xff" + bytes([m]) + struct.pack(">H", len(d) + 2) + d
    nc = len(factors)
    sof = struct.pack(">BHHB", 8, h, w, nc)
    for i, (fh, fv) in enumerate(factors):
        sof += bytes([i + 1, fh << 4 | fv, 0])
    out = b"\xff\xd8" + seg(0xDB, b"\x00" + b"\x01" * 64) + seg(0xC0, sof)
    out += seg(0xC4, b"\x00" + bytes(bits) + bytes(range(12)))
    out += seg(0xC4, b"\x10" + bytes([1] + [0] * 15) + b"\x00")  # AC: EOB only
    out += seg(0xDA, bytes([nc]) + b"".join(bytes([i + 1, 0]) for i in range(nc)) +
               b"\x00\x3f\x00")
    if nc == 1:  # a one-component scan is not interleaved: MCU = one block
        factors = [(1, 1)]
    hmax, vmax = max(f[0] for f in factors), max(f[1] for f in factors)
    mcus = -(-w // (8 * hmax)) * -(-h // (8 * vmax))
    bitbuf = [0, 0]
    data = bytearray()

    def put(v, n):
        bitbuf[0], bitbuf[1] = (bitbuf[0] << n) | v, bitbuf[1] + n
        while bitbuf[1] >= 8:
            bitbuf[1] -= 8
            b = (bitbuf[0] >> bitbuf[1]) & 255
            data.append(b)
            if b == 255:
                data.append(0)
    pred = [0] * nc
    for _ in range(mcus):
        for c, (fh, fv) in enumerate(factors):
            for _ in range(fh * fv):
                dc = int(rng.integers(-1000, 1001))
                diff, pred[c] = dc - pred[c], dc
                n = abs(diff).bit_length()
                put(*codes[n])
                if n:
                    put(diff if diff >= 0 else diff - 1 + (1 << n), n)
                put(0, 1)
    if bitbuf[1]:
        put((1 << (8 - bitbuf[1])) - 1, 8 - bitbuf[1])
    return out + bytes(data) + b"\xff\xd9"


def splice(jpeg, *segments):
    """Segments inserted right after SOI."""
    return jpeg[:2] + b"".join(segments) + jpeg[2:]


# ---- the cv2 facts ----------------------------------------------------------------

def cv2_transforms(np, base):
    return {1: base, 2: base[:, ::-1], 3: base[::-1, ::-1], 4: base[::-1],
            5: base.transpose(1, 0, 2), 6: np.rot90(base, -1),
            7: np.rot90(base, 2).transpose(1, 0, 2), 8: np.rot90(base, 1)}


def check_cv2_facts(t, cv2, np):
    """What the implementation assumes of cv2 4.6, checked on cv2 alone."""
    dec = lambda b: cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR)  # noqa: E731
    rng = np.random.default_rng(11)
    s16 = rng.integers(0, 65536, (3, 5, 3))
    out = dec(make_png(np, s16, 16, 2))
    t.check(np.array_equal(out[:, :, ::-1], s16 >> 8), "cv2: 16-bit PNG is not the high byte")
    for d in (1, 2, 4):
        g = rng.integers(0, 1 << d, (3, 5, 1))
        out = dec(make_png(np, g, d, 0))
        t.check(np.array_equal(out, np.repeat(g * 255 // ((1 << d) - 1), 3, 2)),
                f"cv2: {d}-bit gray is not v * 255 / {(1 << d) - 1}")
    img = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
    jpg = cv2.imencode(".jpg", img)[1].tobytes()
    base = dec(jpg)
    tr = cv2_transforms(np, base)
    for o in range(1, 9):
        for le in (True, False):
            out = dec(splice(jpg, exif_app1(o, le)))
            t.check(out.shape == tr[o].shape and np.array_equal(out, tr[o]),
                    f"cv2: EXIF orientation {o} ({'II' if le else 'MM'}) is not the "
                    "EXIF transform")
    out = dec(make_png(np, img, 8, 2, before=chunk(b"eXIf", tiff_block([orientation_entry(6)]))))
    t.check(np.array_equal(out, np.rot90(dec(make_png(np, img, 8, 2)), -1)),
            "cv2: PNG eXIf orientation 6 not applied")
    print(f"cv2 facts: OpenCV {cv2.__version__}: 16-bit PNG -> high byte, low-depth gray "
          "scaled, EXIF orientations 1..8 (II, MM) are the EXIF transforms, PNG eXIf honoured")


# ---- categories ---------------------------------------------------------------------

def check_real(t, cv2, np, lib, data):
    tl = Tally(t, cv2, np, lib, "real images")
    paths = ou.real_images(data)
    t.check(len(paths) >= 100, f"only {len(paths)} real images found under {data}")
    for p in paths:
        raw = np.fromfile(p, np.uint8).tobytes()
        if tl.same(raw, p):
            rc, w, h = lib.probe(p)
            want = tl.cv2_decode(raw).shape
            t.check(rc == 0 and (h, w) == want[:2], f"probe {p}: {rc} {w}x{h}, cv2 {want}")
    tl.report()


def png_cases(np, rng):
    """(label, bytes) of every colour type and bit depth, plain and interlaced."""
    cases = []
    sizes = [(1, 1), (7, 5), (33, 17), (64, 3)]
    for w, h in sizes:
        for il in (0, 1):
            tag = f"{w}x{h}{'-i' if il else ''}"
            for d in (1, 2, 4, 8, 16):
                g = rng.integers(0, 1 << d, (h, w, 1))
                cases.append((f"gray{d}-{tag}", make_png(np, g, d, 0, il)))
                trns = struct.pack(">H", int(g[0, 0, 0]))
                cases.append((f"gray{d}-trns-{tag}",
                              make_png(np, g, d, 0, il, before=chunk(b"tRNS", trns))))
            for d in (8, 16):
                ga = rng.integers(0, 1 << d, (h, w, 2))
                cases.append((f"graya{d}-{tag}", make_png(np, ga, d, 4, il)))
                rgb = rng.integers(0, 1 << d, (h, w, 3))
                cases.append((f"rgb{d}-{tag}", make_png(np, rgb, d, 2, il)))
                trns = struct.pack(">HHH", *[int(v) for v in rgb[0, 0]])
                cases.append((f"rgb{d}-trns-{tag}",
                              make_png(np, rgb, d, 2, il, before=chunk(b"tRNS", trns))))
                rgba = rng.integers(0, 1 << d, (h, w, 4))
                cases.append((f"rgba{d}-{tag}", make_png(np, rgba, d, 6, il)))
            for d in (1, 2, 4, 8):
                n = 1 << d
                plte = rng.integers(0, 256, (n, 3))
                idx = rng.integers(0, n, (h, w, 1))
                cases.append((f"pal{d}-{tag}", make_png(np, idx, d, 3, il, plte=plte)))
                alpha = rng.integers(0, 256, n).astype(np.uint8).tobytes()
                cases.append((f"pal{d}-trns-{tag}",
                              make_png(np, idx, d, 3, il, plte=plte,
                                       before=chunk(b"tRNS", alpha))))
                short = rng.integers(0, 256, max(1, n // 2)).astype(np.uint8).tobytes()
                cases.append((f"pal{d}-trns-short-{tag}",
                              make_png(np, idx, d, 3, il, plte=plte,
                                       before=chunk(b"tRNS", short))))
    # Chunks cv2 does not act on: gamma, significant bits, background, ICC.
    rgb = rng.integers(0, 256, (9, 13, 3))
    extra = (chunk(b"gAMA", struct.pack(">I", 100000)) + chunk(b"sBIT", b"\x05\x06\x05") +
             chunk(b"bKGD", struct.pack(">HHH", 1, 2, 3)) +
             chunk(b"cHRM", struct.pack(">8I", *[31270, 32900, 64000, 33000, 30000, 60000,
                                                 15000, 6000])))
    cases.append(("rgb8-gama-sbit-bkgd", make_png(np, rgb, 8, 2, before=extra)))
    icc = chunk(b"iCCP", b"fake\0\0" + zlib.compress(b"\0" * 200))
    cases.append(("rgb8-iccp", make_png(np, rgb, 8, 2, before=icc)))
    srgb = chunk(b"sRGB", b"\0")
    cases.append(("rgb8-srgb", make_png(np, rgb, 8, 2, before=srgb)))
    g16 = rng.integers(0, 65536, (9, 13, 1))
    cases.append(("gray16-sbit", make_png(np, g16, 16, 0, before=chunk(b"sBIT", b"\x0c"))))
    # Palette indices beyond the palette.
    plte = rng.integers(0, 256, (4, 3))
    idx = rng.integers(0, 16, (9, 13, 1))
    cases.append(("pal4-index-beyond-plte", make_png(np, idx, 4, 3, plte=plte)))
    return cases


def png_exif_cases(np, rng):
    img = rng.integers(0, 256, (5, 9, 3))
    ex = lambda o, le=True: chunk(b"eXIf", tiff_block([orientation_entry(o, le)], le))  # noqa
    cases = []
    for o in range(0, 10):
        for le in (True, False):
            bo = "II" if le else "MM"
            cases.append((f"exif{o}-{bo}-before", make_png(np, img, 8, 2, before=ex(o, le))))
            cases.append((f"exif{o}-{bo}-after", make_png(np, img, 8, 2, after=ex(o, le))))
    g = rng.integers(0, 256, (4, 7, 1))
    for o in range(1, 9):
        cases.append((f"gray-exif{o}", make_png(np, g, 8, 0, before=ex(o))))
        cases.append((f"interlaced-exif{o}", make_png(np, img, 8, 2, 1, before=ex(o))))
    odd = [
        ("exif-prefixed", chunk(b"eXIf", b"Exif\0\0" + tiff_block([orientation_entry(6)]))),
        ("exif-bad-crc", chunk(b"eXIf", tiff_block([orientation_entry(6)]), crc=1)),
        ("exif-bad-crc-then-6", chunk(b"eXIf", tiff_block([orientation_entry(3)]), crc=1) +
         ex(6)),
        ("exif-1-then-6", ex(1) + ex(6)),
        ("exif-short-then-6", chunk(b"eXIf", b"I") + ex(6)),
        ("exif-empty-then-6", chunk(b"eXIf", b"") + ex(6)),
        ("exif-II-only-then-6", chunk(b"eXIf", b"II") + ex(6)),
        ("exif-XX-then-6", chunk(b"eXIf", b"XX*\0\x08\0\0\0") + ex(6)),
        ("exif-IM-then-6", chunk(b"eXIf", b"IM*\0\x08\0\0\0") + ex(6)),
        ("exif-bad-magic-then-6", chunk(b"eXIf", tiff_block([orientation_entry(6)], magic=43)) +
         ex(6)),
    ]
    for label, before in odd:
        cases.append((label, make_png(np, img, 8, 2, before=before)))
    cases.append(("exif-before-1-after-6", make_png(np, img, 8, 2, before=ex(1), after=ex(6))))
    cases.append(("exif-before-6-after-3", make_png(np, img, 8, 2, before=ex(6), after=ex(3))))
    cases.append(("exif-after-6-after-3", make_png(np, img, 8, 2, after=ex(6) + ex(3))))
    big = tiff_block([orientation_entry(6)])
    big += b"\0" * (8000001 - len(big))  # over libpng's chunk limit: it only warns
    cases.append(("exif-8000001-bytes-then-3", make_png(np, img, 8, 2, before=chunk(
        b"eXIf", big) + ex(3))))
    cases.append(("exif-after-bad-crc", make_png(np, img, 8, 2,
                                                 after=chunk(b"eXIf", tiff_block(
                                                     [orientation_entry(6)]), crc=7))))
    return cases


def png_structure_cases(np, rng):
    img = rng.integers(0, 256, (6, 11, 3))
    ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", 11, 6, 8, 2, 0, 0, 0))
    raw = pack_rows(np, img.reshape(6, 33), 8)
    z = zlib.compress(raw)
    sig = b"\x89PNG\r\n\x1a\n"
    iend = chunk(b"IEND", b"")
    bad_adler = bytearray(z)
    bad_adler[-1] ^= 1
    text = chunk(b"tEXt", b"k\0v")
    cases = [
        ("good", sig + ihdr + chunk(b"IDAT", z) + iend),
        ("split-idat", sig + ihdr + chunk(b"IDAT", z[:7]) + chunk(b"IDAT", z[7:]) + iend),
        ("text-bad-crc-before", sig + ihdr + chunk(b"tEXt", b"k\0v", 3) + chunk(b"IDAT", z) +
         iend),
        ("text-bad-crc-after", sig + ihdr + chunk(b"IDAT", z) + chunk(b"tEXt", b"k\0v", 3) +
         iend),
        ("text-after", sig + ihdr + chunk(b"IDAT", z) + text + iend),
        ("garbage-after-iend", sig + ihdr + chunk(b"IDAT", z) + iend + b"garbage"),
        ("empty-idat-after", sig + ihdr + chunk(b"IDAT", z) + chunk(b"IDAT", b"") + iend),
        ("extra-zlib-data", sig + ihdr + chunk(b"IDAT", z + b"junk") + iend),
        ("too-much-image-data", sig + ihdr + chunk(b"IDAT", zlib.compress(raw + b"\0" * 40)) +
         iend),
        ("idat-bad-crc", sig + ihdr + chunk(b"IDAT", z, 5) + iend),
        ("ihdr-bad-crc", sig + chunk(b"IHDR", struct.pack(">IIBBBBB", 11, 6, 8, 2, 0, 0, 0), 9) +
         chunk(b"IDAT", z) + iend),
        ("iend-bad-crc", sig + ihdr + chunk(b"IDAT", z) + chunk(b"IEND", b"", 4)),
        ("missing-iend", sig + ihdr + chunk(b"IDAT", z)),
        ("iend-cut", sig + ihdr + chunk(b"IDAT", z) + iend[:-2]),
        ("bad-adler", sig + ihdr + chunk(b"IDAT", bytes(bad_adler)) + iend),
        ("short-data", sig + ihdr + chunk(b"IDAT", zlib.compress(raw[:-1])) + iend),
        ("text-between-idat", sig + ihdr + chunk(b"IDAT", z[:7]) + text + chunk(b"IDAT", z[7:]) +
         iend),
        ("truncated-half", (sig + ihdr + chunk(b"IDAT", z) + iend)[:40]),
        ("bad-filter-type", sig + ihdr + chunk(b"IDAT", zlib.compress(b"\x07" + raw[1:])) + iend),
        ("no-idat", sig + ihdr + iend),
        ("bad-depth", sig + chunk(b"IHDR", struct.pack(">IIBBBBB", 11, 6, 3, 2, 0, 0, 0)) +
         chunk(b"IDAT", z) + iend),
        ("extra-idat-bad-crc", sig + ihdr + chunk(b"IDAT", z) + chunk(b"IDAT", b"xx", 1) + iend),
        ("late-idat", sig + ihdr + chunk(b"IDAT", z) + text + chunk(b"IDAT", b"zz") + iend),
        ("late-idat-bad-crc", sig + ihdr + chunk(b"IDAT", z) + text + chunk(b"IDAT", b"zz", 3) +
         iend),
        ("empty-idat-inside", sig + ihdr + chunk(b"IDAT", z[:5]) + chunk(b"IDAT", b"") +
         chunk(b"IDAT", z[5:]) + iend),
        ("iend-with-data", sig + ihdr + chunk(b"IDAT", z) + chunk(b"IEND", b"abc")),
        ("after-iend-bad", sig + ihdr + chunk(b"IDAT", z) + iend + chunk(b"IDAT", b"z", 1)),
        ("ancillary-cut", sig + ihdr + chunk(b"IDAT", z) + text[:-3]),
        ("signature-only", sig),
        ("ihdr-length-14", sig + chunk(b"IHDR", ihdr[8:21] + b"\0") + chunk(b"IDAT", z) + iend),
        ("ihdr-filter-1", sig + chunk(b"IHDR", struct.pack(">IIBBBBB", 11, 6, 8, 2, 0, 1, 0)) +
         chunk(b"IDAT", z) + iend),
        ("ihdr-interlace-2", sig + chunk(b"IHDR", struct.pack(">IIBBBBB", 11, 6, 8, 2, 0, 0,
                                                                2)) + chunk(b"IDAT", z) + iend),
        ("second-ihdr", sig + ihdr + ihdr + chunk(b"IDAT", z) + iend),
        ("iend-first", sig + ihdr + iend + chunk(b"IDAT", z) + iend),
        ("length-over-2^31", sig + ihdr + struct.pack(">I", 0x80000000) + b"IDAT"),
        ("unknown-critical", sig + ihdr + chunk(b"ABCD", b"xyz") + chunk(b"IDAT", z) + iend),
        ("unknown-ancillary", sig + ihdr + chunk(b"aBCD", b"xyz") + chunk(b"IDAT", z) + iend),
        ("bad-chunk-name", sig + ihdr + chunk(b"a1CD", b"xyz") + chunk(b"IDAT", z) + iend),
        ("text-8000001", sig + ihdr + chunk(b"tEXt", b"k\0" + b"a" * 7999999) +
         chunk(b"IDAT", z) + iend),
    ]
    # Ancillary chunks libpng only warns about (libspng is stricter).
    for label, kind, data in (
            ("empty-text", b"tEXt", b""), ("bad-keyword", b"tEXt", b"\0value"),
            ("gama-zero", b"gAMA", b"\0\0\0\0"), ("bad-time", b"tIME", b"\xff" * 7),
            ("bad-iccp", b"iCCP", b"x\0\0garbage"), ("bad-srgb", b"sRGB", b"\x09"),
            ("bad-sbit", b"sBIT", b"\x09\x09\x09"), ("bad-bkgd", b"bKGD", b"\x01"),
            ("bad-chrm", b"cHRM", b"\x01" * 32), ("bad-ztxt", b"zTXt", b"k\0\0garbage"),
            ("bad-itxt", b"iTXt", b"k\0\x01\0\0\0garbage"), ("bad-splt", b"sPLT", b"p\0\x09"),
            ("hist-no-plte", b"hIST", b"\0\1"), ("bad-offs", b"oFFs", b"\0" * 9 + b"\x05"),
            ("bad-trns", b"tRNS", b"\x01" * 5), ("empty-exif", b"eXIf", b"")):
        cases.append((label, sig + ihdr + chunk(kind, data) + chunk(b"IDAT", z) + iend))
        cases.append((label + "-twice", sig + ihdr + chunk(kind, data) * 2 + chunk(b"IDAT", z) +
                      iend))
        cases.append((label + "-after", sig + ihdr + chunk(b"IDAT", z) + chunk(kind, data) +
                      iend))
    return cases


def png_palette_cases(np, rng):
    """PLTE placement and validity, as libpng judges them."""
    img = rng.integers(0, 256, (5, 9, 3))
    gray = rng.integers(0, 256, (5, 9, 1))
    idx = rng.integers(0, 2, (5, 9, 1))
    p4, p4b = rng.integers(0, 256, (4, 3)), rng.integers(0, 256, (4, 3))

    def pl(p):
        return chunk(b"PLTE", p.astype(np.uint8).tobytes())
    return [
        ("rgb-plte", make_png(np, img, 8, 2, before=pl(p4))),
        ("rgb-plte-after", make_png(np, img, 8, 2, after=pl(p4))),
        ("rgb-two-plte", make_png(np, img, 8, 2, before=pl(p4) + pl(p4b))),
        ("rgb-plte-before-after", make_png(np, img, 8, 2, before=pl(p4), after=pl(p4b))),
        ("rgb-plte-len-4", make_png(np, img, 8, 2, before=chunk(b"PLTE", b"\1\2\3\4"))),
        ("rgb-plte-bad-crc", make_png(np, img, 8, 2, before=chunk(b"PLTE", b"\1\2\3", 1))),
        ("gray-plte", make_png(np, gray, 8, 0, before=pl(p4))),
        ("gray-two-plte", make_png(np, gray, 8, 0, before=pl(p4) + pl(p4b))),
        ("gray-plte-bad-crc", make_png(np, gray, 8, 0, before=chunk(b"PLTE", b"\1\2\3", 1))),
        ("pal-two-plte", make_png(np, idx, 8, 3, plte=p4, before=pl(p4b))),
        ("pal-plte-after-too", make_png(np, idx, 8, 3, plte=p4, after=pl(p4b))),
        ("pal-no-plte", make_png(np, idx, 8, 3)),
        ("pal-plte-only-after", make_png(np, idx, 8, 3, after=pl(p4))),
        ("pal1-4-entries", make_png(np, idx, 1, 3, plte=p4)),
        ("pal2-256-entries", make_png(np, rng.integers(0, 4, (5, 9, 1)), 2, 3,
                                      plte=rng.integers(0, 256, (256, 3)))),
        ("pal1-257-entries", make_png(np, idx, 1, 3, plte=rng.integers(0, 256, (257, 3)))),
        ("pal-plte-len-4", make_png(np, idx, 8, 3, before=chunk(b"PLTE", b"\1\2\3\4"))),
        ("pal-plte-empty", make_png(np, idx, 8, 3, before=chunk(b"PLTE", b""))),
        ("pal-plte-bad-crc", make_png(np, idx, 8, 3, before=chunk(b"PLTE", b"\1\2\3", 1))),
        ("pal-trns-long", make_png(np, idx, 8, 3, plte=p4, before=chunk(b"tRNS", b"\1" * 10))),
        ("big-single-idat", make_png(np, rng.integers(0, 256, (700, 900, 3)), 8, 2)),
    ]


def check_png(t, cv2, np, lib, tmp):
    rng = np.random.default_rng(5)
    for name, cases in (("generated PNGs", png_cases(np, rng)),
                        ("PNG eXIf", png_exif_cases(np, rng)),
                        ("PNG structure", png_structure_cases(np, rng)),
                        ("PNG palette rules", png_palette_cases(np, rng))):
        tl = Tally(t, cv2, np, lib, name, tmp)
        for label, data in cases:
            tl.same(data, label)
        tl.report()


def jpeg_bases(cv2, np, rng):
    """(label, bytes) of JPEGs written by cv2 and PIL."""
    from PIL import Image
    out = []
    photo = None
    real = [p for p in ou.real_images(DATA) if p.endswith(".jpg")]
    if real:
        photo = cv2.imread(real[0], cv2.IMREAD_COLOR)
    for w, h in ((1, 1), (7, 5), (17, 33), (31, 2), (101, 67)):
        if photo is not None and photo.shape[0] >= h and photo.shape[1] >= w:
            img = np.ascontiguousarray(photo[:h, :w])
        else:
            img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        noise = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        tag = f"{w}x{h}"
        for q in (30, 75, 95, 100):
            out.append((f"cv2-q{q}-{tag}", cv2.imencode(".jpg", img,
                                                       [cv2.IMWRITE_JPEG_QUALITY, q])[1]))
        out.append((f"cv2-noise-{tag}", cv2.imencode(".jpg", noise)[1]))
        out.append((f"cv2-progressive-{tag}",
                    cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1]))
        out.append((f"cv2-optimize-{tag}",
                    cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_OPTIMIZE, 1])[1]))
        out.append((f"cv2-rst-{tag}",
                    cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_RST_INTERVAL, 2])[1]))
        out.append((f"cv2-gray-{tag}",
                    cv2.imencode(".jpg", cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))[1]))
        pil = Image.fromarray(img[:, :, ::-1].copy())
        for sub, name in ((0, "444"), (1, "422"), (2, "420")):
            for q, prog in ((90, False), (60, True)):
                b = io.BytesIO()
                pil.save(b, "JPEG", quality=q, subsampling=sub, progressive=prog)
                out.append((f"pil-{name}-q{q}{'-prog' if prog else ''}-{tag}", b.getvalue()))
        b = io.BytesIO()
        pil.convert("L").save(b, "JPEG", quality=85)
        out.append((f"pil-gray-{tag}", b.getvalue()))
    return [(label, bytes(data)) for label, data in out]


def check_jpeg(t, cv2, np, lib, tmp):
    rng = np.random.default_rng(9)
    bases = jpeg_bases(cv2, np, rng)
    tl = Tally(t, cv2, np, lib, "generated JPEGs", tmp)
    for label, data in bases:
        tl.same(data, label)
    tl.report()
    tl = Tally(t, cv2, np, lib, "JPEG EXIF orientation", tmp)
    for label, data in bases:
        for o in range(0, 10):
            for le in (True, False):
                tl.same(splice(data, exif_app1(o, le)), f"{label}-o{o}-{'II' if le else 'MM'}")
    tl.report()
    tl = Tally(t, cv2, np, lib, "JPEG sampling factors", tmp)
    sampling = [[(1, 1)], [(2, 2)], [(1, 1)] * 3, [(2, 2), (1, 1), (1, 1)],
                [(2, 1), (1, 1), (1, 1)], [(1, 2), (1, 1), (1, 1)], [(4, 1), (1, 1), (1, 1)],
                [(2, 2), (2, 1), (1, 1)], [(3, 1), (1, 1), (1, 1)], [(2, 1), (1, 2), (1, 1)],
                [(1, 1), (2, 2), (1, 1)], [(3, 2), (1, 1), (1, 2)], [(4, 2), (2, 1), (1, 2)]]
    for f in sampling:
        for w, h in ((8, 8), (13, 7), (37, 29), (70, 3)):
            data = dc_jpeg(rng, w, h, f)
            name = "-".join(f"{a}x{b}" for a, b in f) + f"-{w}x{h}"
            tl.same(data, name)
            tl.same(splice(data, exif_app1(6)), name + "-o6")
    tl.report()


def exif_edge_cases(rng):
    """(label, APP1 segments) for the EXIF reading rules."""
    o6 = orientation_entry(6)
    blk = lambda *a, **k: app1(b"Exif\0\0" + tiff_block(*a, **k))  # noqa: E731
    full = tiff_block([o6])
    be_full = tiff_block([orientation_entry(6, le=False)], le=False)
    cases = [
        ("plain", [blk([o6])]),
        ("xmp-first", [app1(b"http://ns.adobe.com/xap/1.0/\0<x/>"), blk([o6])]),
        ("no-exif-id", [app1(b"Abcd\0\0" + full)]),
        ("short-id", [app1(b"Exif\0" + full)]),
        ("magic-43", [blk([o6], magic=43)]),
        ("byte-order-IM", [app1(b"Exif\0\0IM" + full[2:])]),
        # a byte order OpenCV does not know is read as big endian
        ("byte-order-XX-on-MM", [app1(b"Exif\0\0XX" + be_full[2:])]),
        ("byte-order-M?-on-MM", [app1(b"Exif\0\0M\xe6" + be_full[2:])]),
        ("byte-order-?I-on-II", [app1(b"Exif\0\0\xe6I" + full[2:])]),
        ("ifd-beyond", [blk([o6], ifd=1000)]),
        ("ifd-at-0", [app1(b"Exif\0\0" + b"II*\0\0\0\0\0" + full[8:])]),
        ("ifd-at-13", [blk([o6], ifd=13)]),
        ("count-5", [blk([o6], count=5)]),
        ("count-0", [blk([o6], count=0)]),
        ("dup-6-then-1", [blk([o6, orientation_entry(1)])]),
        ("dup-1-then-6", [blk([orientation_entry(1), o6])]),
        ("two-app1", [blk([orientation_entry(1)]), blk([o6])]),
        ("empty-app1-first", [app1(b"Exif\0\0"), blk([o6])]),
        ("tiny-app1-first", [app1(b"Ex"), blk([o6])]),
        ("header-only", [app1(b"Exif\0\0II*\0")]),
        ("long-type", [blk([orientation_entry(6, typ=4)])]),
        ("long-type-MM", [blk([orientation_entry(6, le=False, typ=4)], le=False)]),
        ("unknown-tags-first", [blk([(0x0100, 4, 1, b"\x10\0\0\0"), (0x8769, 4, 1, b"\xff" * 4),
                                     o6])]),
    ]
    for cut in range(0, 12):
        cases.append((f"cut-{cut}", [app1(b"Exif\0\0" + full[:10 + cut])]))
    # The tags whose values OpenCV follows, in and out of range, before the
    # orientation entry.
    strings = (0x010E, 0x010F, 0x0110, 0x0131, 0x0132, 0x8298)
    rationals = {0x011A: 1, 0x011B: 1, 0x013E: 2, 0x013F: 6, 0x0211: 3, 0x0214: 6}
    size = len(tiff_block([(0, 0, 0, b"\0" * 4), o6], tail=b"\0" * 40))
    for tag in strings:
        for cnt in (0, 4, 5, 20, 0xFFFFFFFF):
            for off in (size - cnt - 1, size - cnt, size - cnt + 1, 0xFFFFFFF0):
                off &= 0xFFFFFFFF
                ent = (tag, 2, cnt, struct.pack("<I", off))
                cases.append((f"str-{tag:04x}-{cnt}-{off}",
                              [blk([ent, o6], tail=b"\0" * 40)]))
    for tag, n in rationals.items():
        for off in (size - 8 * n - 1, size - 8 * n, size - 8 * n + 1, 0xFFFFFFF0):
            ent = (tag, 5, 1, struct.pack("<I", off & 0xFFFFFFFF))
            cases.append((f"rat-{tag:04x}-{off}", [blk([ent, o6], tail=b"\0" * 40)]))
            cases.append((f"rat-after-{tag:04x}-{off}", [blk([o6, ent], tail=b"\0" * 40)]))
    # Seeded fuzz: IFDs of a few entries drawn from those tags and others.
    tags = list(strings) + list(rationals) + [0x0112, 0x0112, 0x0100, 0x8769, 0x0128]
    for k in range(1500):
        le = bool(rng.integers(0, 2))
        e = "<" if le else ">"
        tail = b"\0" * int(rng.integers(0, 60))
        ents = []
        for _ in range(int(rng.integers(1, 5))):
            tag = int(rng.choice(tags))
            cnt = int(rng.choice([0, 1, 3, 4, 5, 8, 30, 0xFFFFFFFF]))
            off = int(rng.integers(0, 140)) if rng.integers(0, 4) else int(rng.integers(0, 2**32))
            val = (struct.pack(e + "HH", int(rng.integers(0, 10)), 0) if tag == 0x0112
                   else struct.pack(e + "I", off))
            ents.append((tag, int(rng.integers(0, 13)), cnt, val))
        body = tiff_block(ents, le, tail=tail)
        if rng.integers(0, 5) == 0:
            body = body[:int(rng.integers(8, len(body) + 1))]
        cases.append((f"fuzz-{k}", [app1(b"Exif\0\0" + body)]))
    return cases


def check_exif_edges(t, cv2, np, lib, tmp):
    rng = np.random.default_rng(13)
    img = rng.integers(0, 256, (3, 5, 3), dtype=np.uint8)
    jpg = cv2.imencode(".jpg", img)[1].tobytes()
    sof = jpg.find(b"\xff\xc0")
    tl = Tally(t, cv2, np, lib, "EXIF edge cases", tmp)
    for label, segs in exif_edge_cases(rng):
        tl.same(splice(jpg, *segs), label)
    # An APP1 between the frame header and the scan still counts.
    tl.same(jpg[:sof] + exif_app1(6) + jpg[sof:], "app1-after-dqt")
    sos = jpg.find(b"\xff\xda")
    tl.same(jpg[:sos] + exif_app1(6) + jpg[sos:], "app1-before-sos")
    tl.same(jpg[:2] + b"\xff\xff" + exif_app1(6) + jpg[2:], "fill-bytes")
    tl.report()


def check_refusals(t, cv2, np, lib):
    """Where detfeed refuses by design."""
    from PIL import Image
    rng = np.random.default_rng(17)
    tl = Tally(t, cv2, np, lib, "refused by design")
    img = rng.integers(0, 256, (24, 40, 3), dtype=np.uint8)
    b = io.BytesIO()
    Image.fromarray(img).convert("CMYK").save(b, "JPEG")
    cmyk = b.getvalue()
    t.check(tl.cv2_decode(cmyk) is not None, "cv2 no longer decodes CMYK JPEGs")
    tl.refused(cmyk, "cmyk.jpg", CAPI.ENOTSUPPORTED, "CMYK")
    tl.refused(splice(cmyk, exif_app1(6)), "cmyk-exif.jpg", CAPI.ENOTSUPPORTED, "CMYK")
    real = [p for p in ou.real_images(DATA) if p.endswith(".jpg")][:3]
    for p in real:
        raw = open(p, "rb").read()
        for frac in (0.3, 0.7, 0.99):
            cut = raw[:int(len(raw) * frac)]
            # cv2 returns the partial image (libjpeg only warns); detfeed refuses.
            tl.refused(cut, f"{os.path.basename(p)}-cut{frac}", CAPI.ECORRUPT, "JPEG")
    for label, data in (("text.jpg", b"hello, not an image at all"),
                        ("gif.png", b"GIF89a\x01\x00\x01\x00"),
                        ("ff-d8-only.jpg", b"\xff\xd8\x00\x00")):
        t.check(tl.cv2_decode(data) is None, f"cv2 decodes {label}")
        tl.refused(data, label, CAPI.EFORMAT, "not an image of a format detfeed reads")
    tl.report()


DATA = ""


def main():
    global DATA
    args = ou.parse_args()
    cv2, np = ou.require_cv2()
    DATA = args.data
    cv2.setNumThreads(1)
    t = ou.Counter("test_decode_oracle")
    print(f"oracle: OpenCV {cv2.__version__}, NumPy {np.__version__}")
    check_cv2_facts(t, cv2, np)
    ou.finish_if_no_ctypes(args, t, "the decode comparisons")
    lib = Lib(args.detfeed)
    check_real(t, cv2, np, lib, args.data)
    with tempfile.TemporaryDirectory() as tmp:
        check_png(t, cv2, np, lib, tmp)
        check_jpeg(t, cv2, np, lib, tmp)
        check_exif_edges(t, cv2, np, lib, tmp)
    check_refusals(t, cv2, np, lib)
    t.finish()


if __name__ == "__main__":
    main()
