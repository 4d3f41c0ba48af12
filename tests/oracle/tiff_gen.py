"""TIFF files for the format oracle, written byte by byte (struct, zlib)
from a seeded generator, and by PIL and cv2 (libtiff's own writers) where
they are importable:

- 8 and 16 bits a sample; gray (min-is-black and min-is-white), RGB, RGBA
  (associated and unassociated alpha), gray with alpha, palettes of 4 and 8
  bits, 1-bit bilevel, YCbCr;
- strips (one, several, a short last one) and tiles (whole, and cut by the
  image's edge), contiguous and separate planes;
- uncompressed, LZW, Deflate (both tags), PackBits, with and without the
  horizontal predictor; JPEG-in-TIFF (PIL's YCbCr, cv2's RGB);
- little and big endian, BigTIFF, several pages, the orientation tag 1 to 8,
  odd sizes.

Each case is (name, bytes)."""
import io
import random
import struct
import zlib

# tag numbers
WIDTH, LENGTH, BPS, COMPRESSION, PHOTOMETRIC = 256, 257, 258, 259, 262
STRIP_OFFSETS, ORIENTATION, SPP, ROWS_PER_STRIP, STRIP_COUNTS = 273, 274, 277, 278, 279
PLANAR, PREDICTOR, COLORMAP = 284, 317, 320
TILE_WIDTH, TILE_LENGTH, TILE_OFFSETS, TILE_COUNTS = 322, 323, 324, 325
EXTRA_SAMPLES, SAMPLE_FORMAT, SUBFILE = 338, 339, 254
YCBCR_SUBSAMPLING = 530

NONE, LZW, JPEG, DEFLATE, ADOBE_DEFLATE, PACKBITS = 1, 5, 7, 32946, 8, 32773


def packbits(data):
    """PackBits (TIFF 6.0 section 9) of one row."""
    out, i, n = bytearray(), 0, len(data)
    while i < n:
        j = i
        while j + 1 < n and data[j + 1] == data[i] and j - i < 127:
            j += 1
        if j > i:  # a run of j - i + 1 equal bytes
            out += bytes([(257 - (j - i + 1)) & 255, data[i]])
            i = j + 1
            continue
        j = i + 1
        while j < n and j - i < 128 and not (j + 1 < n and data[j] == data[j + 1]):
            j += 1
        out += bytes([j - i - 1]) + data[i:j]
        i = j
    return bytes(out)


def lzw(data):
    """TIFF LZW with a clear code before the table needs a tenth bit, so
    every code is 9 bits (a valid stream any reader decodes)."""
    bits, nbits = [], 0
    acc = 0

    def put(code):
        nonlocal acc, nbits
        acc = (acc << 9) | code
        nbits += 9
        while nbits >= 8:
            nbits -= 8
            bits.append((acc >> nbits) & 255)

    table, nxt = {}, 258
    put(256)
    w = b""
    for c in data:
        wc = w + bytes([c])
        if wc in table or len(wc) == 1:
            w = wc
            continue
        put(table[w] if len(w) > 1 else w[0])
        table[wc] = nxt
        nxt += 1
        w = bytes([c])
        if nxt >= 510:
            put(256)
            table, nxt = {}, 258
    if w:
        put(table[w] if len(w) > 1 else w[0])
    put(257)
    if nbits:
        bits.append((acc << (8 - nbits)) & 255)
    return bytes(bits)


def _predict(row, spp, bps, le):
    """Horizontal differencing of one row of samples (predictor 2)."""
    if bps == 8:
        out = bytearray(row)
        for k in range(len(row) - 1, spp - 1, -1):
            out[k] = (row[k] - row[k - spp]) & 255
        return bytes(out)
    fmt = ("<" if le else ">") + "%dH" % (len(row) // 2)
    v = list(struct.unpack(fmt, row))
    out = v[:]
    for k in range(len(v) - 1, spp - 1, -1):
        out[k] = (v[k] - v[k - spp]) & 0xFFFF
    return struct.pack(fmt, *out)


def _encode(rows, comp, spp, bps, le, predictor):
    """A strip or tile (a list of rows of bytes) compressed."""
    if predictor == 2:
        rows = [_predict(r, spp, bps, le) for r in rows]
    if comp == PACKBITS:
        return b"".join(packbits(r) for r in rows)
    raw = b"".join(rows)
    if comp == LZW:
        return lzw(raw)
    if comp in (DEFLATE, ADOBE_DEFLATE):
        return zlib.compress(raw, 6)
    return raw


class Page:
    """One image file directory: its pixels (rows of samples as ints, each
    row width * spp long, or planes for planar 2), its tags."""

    def __init__(self, width, height, spp, bps, photometric, samples, **kw):
        self.width, self.height, self.spp, self.bps = width, height, spp, bps
        self.photometric, self.samples = photometric, samples
        self.comp = kw.get("comp", NONE)
        self.predictor = kw.get("predictor", 1)
        self.rows_per_strip = kw.get("rows_per_strip", height)
        self.tile = kw.get("tile")  # (width, length) or None
        self.planar = kw.get("planar", 1)
        self.extra = kw.get("extra")  # ExtraSamples values
        self.colormap = kw.get("colormap")
        self.orientation = kw.get("orientation")
        self.sample_format = kw.get("sample_format")
        self.more = kw.get("more", [])  # (tag, type, values) added as is


def _pack_row(vals, bps, le):
    if bps == 8:
        return bytes(vals)
    if bps == 16:
        return struct.pack(("<" if le else ">") + "%dH" % len(vals), *vals)
    # 1, 2 or 4 bits, MSB first, padded to a byte
    out, acc, n = bytearray(), 0, 0
    for v in vals:
        acc = (acc << bps) | v
        n += bps
        if n == 8:
            out.append(acc)
            acc = n = 0
    if n:
        out.append(acc << (8 - n))
    return bytes(out)


def _chunks(page, le):
    """The page's strips or tiles as encoded bytes, in file order."""
    w, h, spp = page.width, page.height, page.spp
    planes = [(0, spp)] if page.planar == 1 else [(s, 1) for s in range(spp)]
    out = []
    for first, n in planes:
        def row_vals(y, x0, x1):
            r = page.samples[y]
            vals = []
            for x in range(x0, x1):
                for s in range(first, first + n):
                    vals.append(r[x * spp + s] if x < w and y < h else 0)
            return vals
        if page.tile:
            tw, tl = page.tile
            for ty in range(0, h, tl):
                for tx in range(0, w, tw):
                    rows = [_pack_row(row_vals(y, tx, tx + tw), page.bps, le) if y < h else
                            _pack_row([0] * tw * n, page.bps, le) for y in range(ty, ty + tl)]
                    out.append(_encode(rows, page.comp, n, page.bps, le, page.predictor))
        else:
            rps = page.rows_per_strip
            for y0 in range(0, h, rps):
                rows = [_pack_row(row_vals(y, 0, w), page.bps, le)
                        for y in range(y0, min(h, y0 + rps))]
                out.append(_encode(rows, page.comp, n, page.bps, le, page.predictor))
    return out


def write(pages, le=True, bigtiff=False):
    """The TIFF file of `pages` (Page objects)."""
    e = "<" if le else ">"
    off_fmt, off_size = ("Q", 8) if bigtiff else ("I", 4)
    buf = bytearray((b"II" if le else b"MM") +
                    (struct.pack(e + "HHHQ", 43, 8, 0, 0) if bigtiff else
                     struct.pack(e + "HI", 42, 0)))
    first_ifd_at = 8 if bigtiff else 4
    prev_link = first_ifd_at
    for page in pages:
        chunks = _chunks(page, le)
        offsets = []
        for c in chunks:
            offsets.append(len(buf))
            buf += c
            if len(buf) % 2:
                buf += b"\0"
        tags = [(WIDTH, 4, [page.width]), (LENGTH, 4, [page.height]),
                (BPS, 3, [page.bps] * page.spp), (COMPRESSION, 3, [page.comp]),
                (PHOTOMETRIC, 3, [page.photometric]), (SPP, 3, [page.spp]),
                (PLANAR, 3, [page.planar])]
        if page.tile:
            tags += [(TILE_WIDTH, 3, [page.tile[0]]), (TILE_LENGTH, 3, [page.tile[1]]),
                     (TILE_OFFSETS, 4, offsets), (TILE_COUNTS, 4, [len(c) for c in chunks])]
        else:
            tags += [(STRIP_OFFSETS, 4, offsets), (ROWS_PER_STRIP, 4, [page.rows_per_strip]),
                     (STRIP_COUNTS, 4, [len(c) for c in chunks])]
        if page.predictor != 1:
            tags.append((PREDICTOR, 3, [page.predictor]))
        if page.extra is not None:
            tags.append((EXTRA_SAMPLES, 3, page.extra))
        if page.colormap is not None:
            tags.append((COLORMAP, 3, page.colormap))
        if page.orientation is not None:
            tags.append((ORIENTATION, 3, [page.orientation]))
        if page.sample_format is not None:
            tags.append((SAMPLE_FORMAT, 3, [page.sample_format] * page.spp))
        tags += page.more
        tags.sort(key=lambda t: t[0])
        buf += _ifd(tags, buf, e, bigtiff, prev_link, off_fmt, off_size)
        prev_link = len(buf) - off_size
    return bytes(buf)


def _ifd(tags, buf, e, bigtiff, prev_link, off_fmt, off_size):
    """Appends the values that do not fit their entries to buf, then returns
    the directory (and links the previous one to it)."""
    code = {3: "H", 4: "I", 1: "B", 16: "Q"}
    inline = 8 if bigtiff else 4
    entries = []
    for tag, typ, vals in tags:
        data = struct.pack(e + code[typ] * len(vals), *vals)
        if len(data) <= inline:
            entries.append((tag, typ, len(vals), data.ljust(inline, b"\0")))
        else:
            if len(buf) % 2:
                buf += b"\0"
            at = len(buf)
            buf += data
            entries.append((tag, typ, len(vals), struct.pack(e + off_fmt, at)))
    if len(buf) % 2:
        buf += b"\0"
    at = len(buf)
    struct.pack_into(e + off_fmt, buf, prev_link, at)
    if bigtiff:
        d = struct.pack(e + "Q", len(entries))
        d += b"".join(struct.pack(e + "HHQ", t, ty, n) + v for t, ty, n, v in entries)
    else:
        d = struct.pack(e + "H", len(entries))
        d += b"".join(struct.pack(e + "HHI", t, ty, n) + v for t, ty, n, v in entries)
    return d + struct.pack(e + off_fmt, 0)


# ---- pictures --------------------------------------------------------------

def _picture(width, height, spp, bps, rng):
    """Rows of smooth gradients with noise (so that compressors and JPEG
    see something like a photograph), width * spp samples each."""
    top = (1 << bps) - 1
    rows = []
    phase = [rng.random() * 6 for _ in range(spp)]
    for y in range(height):
        r = []
        for x in range(width):
            for s in range(spp):
                v = (x * 7 + y * 5 + int(phase[s] * 40)) * (top // 255 if bps > 8 else 1)
                v = (v + rng.randrange(1 + top // 16)) % (top + 1)
                r.append(v)
        rows.append(r)
    return rows


def _colormap(entries, rng):
    return ([rng.randrange(65536) for _ in range(entries)] +
            [rng.randrange(65536) for _ in range(entries)] +
            [rng.randrange(65536) for _ in range(entries)])


def _gray_map(entries):
    ramp = [k * 65535 // max(entries - 1, 1) for k in range(entries)]
    return ramp * 3


# (name, samples a pixel, bits, photometric, extra samples) of the kinds
KINDS = (("gray8", 1, 8, 1, None), ("white8", 1, 8, 0, None), ("rgb8", 3, 8, 2, None),
         ("rgba8", 4, 8, 2, [2]), ("rgbA8", 4, 8, 2, [1]), ("graya8", 2, 8, 1, [2]),
         ("rgb16", 3, 16, 2, None), ("rgba16", 4, 16, 2, [2]), ("rgbA16", 4, 16, 2, [1]),
         ("gray16", 1, 16, 1, None), ("graya16", 2, 16, 1, [2]), ("white16", 1, 16, 0, None),
         ("pal8", 1, 8, 3, None), ("pal4", 1, 4, 3, None),
         ("bw1", 1, 1, 1, None), ("gray4", 1, 4, 1, None), ("gray2", 1, 2, 1, None),
         ("rgbx8", 4, 8, 2, [0]), ("cmyk8", 4, 8, 5, None))

COMPRESSIONS = (("raw", NONE, 1), ("lzw", LZW, 1), ("lzwp", LZW, 2), ("zip", ADOBE_DEFLATE, 1),
                ("zipp", ADOBE_DEFLATE, 2), ("deflate", DEFLATE, 1), ("packbits", PACKBITS, 1))


def _page(kind, w, h, rng, **kw):
    name, spp, bps, ph, extra = kind
    samples = _picture(w, h, spp, bps if bps >= 8 else 8, rng)
    if bps < 8:
        samples = [[v >> (8 - bps) for v in r] for r in samples]
    cmap = None
    if ph == 3:
        cmap = _colormap(1 << bps, rng)
    if kw.get("predictor", 1) == 2 and bps < 8:
        kw["predictor"] = 1
    return Page(w, h, spp, bps, ph, samples, extra=extra, colormap=cmap, **kw)


def hand_cases(seed=7):
    """Files written here, byte by byte: each kind in each compression, as
    strips and tiles, little and big endian; orientations; odd layouts;
    several pages."""
    rng = random.Random(seed)
    out = []
    kinds = {k[0]: k for k in KINDS}
    for kind in KINDS:
        for cname, comp, pred in COMPRESSIONS:
            le = rng.random() < 0.6
            w, h = rng.choice(((13, 9), (37, 23), (16, 16), (1, 1), (40, 3), (3, 40)))
            lay = rng.choice(("strip", "strips", "tile", "tile32"))
            kw = {"comp": comp, "predictor": pred}
            if lay == "strips":
                kw["rows_per_strip"] = rng.choice((1, 2, 5))
            elif lay.startswith("tile"):
                kw["tile"] = (16, 16) if lay == "tile" else (32, 16)
            page = _page(kind, w, h, rng, **kw)
            out.append(("%s-%s-%s-%dx%d-%s" % (kind[0], cname, lay, w, h, "le" if le else "be"),
                        write([page], le=le)))
    for o in range(1, 10):
        for k in ("rgb8", "rgba8", "rgb16", "gray8", "gray16", "pal8", "white16"):
            for lay in ("strips", "tile"):
                kw = {"orientation": o, "comp": LZW}
                if lay == "strips":
                    kw["rows_per_strip"] = 4
                else:
                    kw["tile"] = (16, 16)
                page = _page(kinds[k], 21, 35, rng, **kw)
                out.append(("orient%d-%s-%s" % (o, k, lay), write([page], le=o % 2 == 0)))
    out += _odd_cases(kinds, rng)
    out += _multi_cases(kinds, rng)
    return out


def _odd_cases(kinds, rng):
    out = []
    k = kinds["rgb8"]
    for planar_kind in ("rgb8", "rgb16", "rgba8", "rgba16"):
        page = _page(kinds[planar_kind], 19, 11, rng, planar=2, rows_per_strip=4, comp=DEFLATE)
        out.append(("planar-%s" % planar_kind, write([page])))
        page = _page(kinds[planar_kind], 19, 11, rng, planar=2, tile=(16, 16))
        out.append(("planar-tile-%s" % planar_kind, write([page], le=False)))
    for big in (False, True):
        out.append(("bigtiff-rgb8-%s" % big, write([_page(k, 23, 17, rng, comp=LZW)], bigtiff=True,
                                                   le=big)))
        out.append(("bigtiff-rgb16-%s" % big, write([_page(kinds["rgb16"], 23, 17, rng)],
                                                    bigtiff=True, le=big)))
    for sf, bps, spp in ((2, 8, 3), (2, 16, 3), (3, 32, 3), (1, 32, 1), (3, 32, 1), (2, 16, 1),
                         (1, 12, 3), (1, 64, 1), (3, 64, 3)):
        # 16 pixels a row of bps-bit samples, written as 8-bit ones
        page = _page((None, spp, 8, 2 if spp == 3 else 1, None), 16 * bps // 8, 9, rng)
        out.append(("format%d-%dbit-%dspp" % (sf, bps, spp),
                    _retag(write([page]), {WIDTH: 16, BPS: bps, SAMPLE_FORMAT: sf})))
    # tags missing or odd
    base = write([_page(k, 17, 13, rng, rows_per_strip=5)])
    out.append(("no-photometric", _drop(base, PHOTOMETRIC)))
    out.append(("no-spp", _drop(base, SPP)))
    out.append(("no-bps", _drop(base, BPS)))
    out.append(("no-rows-per-strip", _drop(base, ROWS_PER_STRIP)))
    out.append(("rows-per-strip-huge", _retag(base, {ROWS_PER_STRIP: 100000})))
    out.append(("rows-per-strip-max", _retag(base, {ROWS_PER_STRIP: 0xFFFFFFFF})))
    out.append(("spp5", _retag(base, {SPP: 5})))
    out.append(("bps3", _retag(base, {BPS: 3})))
    out.append(("photometric-9", _retag(base, {PHOTOMETRIC: 9})))
    out.append(("compression-6", _retag(base, {COMPRESSION: 6})))
    out.append(("compression-99", _retag(base, {COMPRESSION: 99})))
    out.append(("width-0", _retag(base, {WIDTH: 0})))
    out.append(("tile-8x8", write([_page(kinds["rgba8"], 17, 13, rng, tile=(8, 8))])))
    out.append(("tile-bigger-than-image",
                write([_page(kinds["rgba8"], 17, 13, rng, tile=(256, 256), comp=DEFLATE)])))
    out.append(("orientation-0", _retag(base, {ORIENTATION: 0})))
    return out


def _multi_cases(kinds, rng):
    out = []
    combos = (("rgb8", "rgb8"), ("rgb16", "rgb16"), ("rgb16", "gray8"), ("gray8", "rgb16"),
              ("rgba16", "pal8", "gray16"), ("gray16", "gray16"), ("pal8", "rgb8"),
              ("rgb16", "rgb8-badtile"), ("rgb8", "rgb8-badtile"), ("gray8", "rgb8-badtile"),
              ("rgb16", "bps3"), ("rgb8", "bps3"), ("gray8", "bps3"), ("rgb16", "u32"),
              ("rgb16", "f32"), ("rgb16", "spp5"), ("rgb16", "wide"))
    for combo in combos:
        pages, patches = [], {}
        for i, name in enumerate(combo):
            if name == "rgb8-badtile":  # an uncompressed 3-sample tile libtiff reads wrong
                pages.append(_page(kinds["rgb8"], 13, 9, rng, tile=(16, 16)))
            elif name in ("bps3", "u32", "f32", "spp5", "wide"):
                pages.append(_page(kinds["gray8"], 13, 9, rng))
                patches[i] = {"bps3": {BPS: 3}, "u32": {BPS: 32, SAMPLE_FORMAT: 1},
                              "f32": {BPS: 32, SAMPLE_FORMAT: 3}, "spp5": {SPP: 5},
                              "wide": {WIDTH: 1 << 21}}[name]
            else:
                pages.append(_page(kinds[name], 13, 9, rng, rows_per_strip=4, comp=LZW))
        data = write(pages)
        for i, tags in patches.items():
            data = _retag(data, tags, page=i)
        out.append(("multi-" + "+".join(combo), data))
    return out


def _ifd_at(data, page):
    le = data[:2] == b"II"
    e = "<" if le else ">"
    off = struct.unpack_from(e + "I", data, 4)[0]
    for _ in range(page):
        n = struct.unpack_from(e + "H", data, off)[0]
        off = struct.unpack_from(e + "I", data, off + 2 + 12 * n)[0]
    return e, off


def _retag(data, tags, page=0):
    """Classic TIFF `data` with the values of existing one-value tags of a
    page replaced, and tags it lacks added (SHORT or LONG)."""
    e, off = _ifd_at(data, page)
    b = bytearray(data)
    n = struct.unpack_from(e + "H", b, off)[0]
    entries = [struct.unpack_from(e + "HHI4s", b, off + 2 + 12 * i) for i in range(n)]
    nxt = struct.unpack_from(e + "I", b, off + 2 + 12 * n)[0]
    out = []
    todo = dict(tags)
    for tag, typ, cnt, val in entries:
        if tag in todo:
            v = todo.pop(tag)
            typ = 4 if v > 0xFFFF or tag in (WIDTH, LENGTH, ROWS_PER_STRIP) else 3
            if tag in (BPS, SAMPLE_FORMAT) and cnt > 1 and cnt * 2 > 4:
                at = len(b)
                b += struct.pack(e + "%dH" % cnt, *([v] * cnt))
                val = struct.pack(e + "I", at)
            else:
                cnt = 1
                val = struct.pack(e + ("I" if typ == 4 else "H2x"), v)
        out.append((tag, typ, cnt, val))
    for tag, v in todo.items():
        typ = 4 if v > 0xFFFF else 3
        out.append((tag, typ, 1, struct.pack(e + ("I" if typ == 4 else "H2x"), v)))
    return _rewrite_ifd(b, e, off, out, nxt)


def _drop(data, tag, page=0):
    e, off = _ifd_at(data, page)
    b = bytearray(data)
    n = struct.unpack_from(e + "H", b, off)[0]
    entries = [struct.unpack_from(e + "HHI4s", b, off + 2 + 12 * i) for i in range(n)]
    nxt = struct.unpack_from(e + "I", b, off + 2 + 12 * n)[0]
    return _rewrite_ifd(b, e, off, [x for x in entries if x[0] != tag], nxt)


def _rewrite_ifd(b, e, off, entries, nxt):
    """The directory at `off` written anew at the end of b (the old one left
    in place, the link to it moved)."""
    entries.sort(key=lambda x: x[0])
    if len(b) % 2:
        b += b"\0"
    at = len(b)
    b += struct.pack(e + "H", len(entries))
    for tag, typ, cnt, val in entries:
        b += struct.pack(e + "HHI", tag, typ, cnt) + val
    b += struct.pack(e + "I", nxt)
    # the link that pointed at `off`
    link = 4
    while struct.unpack_from(e + "I", b, link)[0] != off:
        cur = struct.unpack_from(e + "I", b, link)[0]
        link = cur + 2 + 12 * struct.unpack_from(e + "H", b, cur)[0]
    struct.pack_into(e + "I", b, link, at)
    return bytes(b)


# ---- PIL's files (libtiff's writer) ------------------------------------------

def pictures(data_dir, rng, count=3):
    """Seeded crops of the shared data's coco8 images, or a noise picture."""
    import glob
    import os
    from PIL import Image
    paths = sorted(glob.glob(os.path.join(data_dir, "coco8", "images", "*", "*.jpg")))
    out = []
    for p in paths[:count]:
        im = Image.open(p).convert("RGB")
        w, h = im.size
        x, y = rng.randrange(w // 2), rng.randrange(h // 2)
        out.append(im.crop((x, y, x + rng.randrange(40, w // 2), y + rng.randrange(30, h // 2))))
    if not out:
        noise = bytes(rng.randrange(256) for _ in range(97 * 61 * 3))
        out.append(Image.frombytes("RGB", (97, 61), noise))
    return out


def _pil(im, **kw):
    b = io.BytesIO()
    im.save(b, "TIFF", **kw)
    return b.getvalue()


def pil_cases(data_dir, seed=9):
    """Files PIL writes through libtiff: RGB, RGBA, gray, palette, bilevel,
    16-bit gray, CMYK in each compression it has, JPEG at two qualities,
    orientations, several pages."""
    from PIL import Image
    rng = random.Random(seed)
    out = []
    for k, im in enumerate(pictures(data_dir, rng)):
        modes = {"RGB": im, "RGBA": _with_alpha(im), "L": im.convert("L"),
                 "P": im.convert("P", palette=Image.ADAPTIVE, colors=200),
                 "1": im.convert("1"), "CMYK": im.convert("CMYK"), "LA": _with_alpha(im.convert("L")),
                 "I;16": im.convert("L").point(lambda v: v * 257, "I").convert("I;16")}
        for mode, pic in modes.items():
            for comp in ("raw", "tiff_lzw", "tiff_adobe_deflate", "tiff_deflate", "packbits",
                         "lzma", "zstd", "webp", "jpeg", "group4"):
                if comp == "group4" and mode != "1":
                    continue
                if (comp == "jpeg" and mode not in ("RGB", "L")) or \
                        (comp == "webp" and mode not in ("RGB", "RGBA")):
                    continue
                try:
                    data = _pil(pic, compression=comp)
                except Exception:  # noqa: BLE001 - a combination PIL does not write
                    continue
                out.append(("pil-%s-%s-%d" % (mode.replace(";", ""), comp, k), data))
        for q in (30, 95):
            out.append(("pil-jpeg-q%d-%d" % (q, k), _pil(im, compression="jpeg", quality=q)))
        for o in range(1, 9):
            out.append(("pil-orient%d-%d" % (o, k),
                        _pil(im, compression="tiff_lzw", tiffinfo={274: o})))
        pages = [im.rotate(90 * j, expand=True) for j in range(1, 3)]
        out.append(("pil-pages3-%d" % k, _pil(im, save_all=True, append_images=pages,
                                              compression="tiff_lzw")))
        out.append(("pil-pages-gray-rgb-%d" % k,
                    _pil(im.convert("L"), save_all=True, append_images=[im])))
    return out


def _with_alpha(im):
    a = im.convert("RGBA") if im.mode == "RGB" else im.convert("LA")
    a.putalpha(im.convert("L").point(lambda v: 255 - v))
    return a


# ---- JPEG-in-TIFF written here: each strip or tile a whole JPEG -------------

def _jpeg(im, **kw):
    b = io.BytesIO()
    im.save(b, "JPEG", **kw)
    return b.getvalue()


def jpeg_cases(data_dir, seed=11):
    """JPEG-in-TIFF (compression 7) whose strips or tiles are each a whole
    JPEG (PIL's): YCbCr 4:2:0 and 4:4:4, RGB, gray; strips and tiles."""
    rng = random.Random(seed)
    out = []
    for k, im in enumerate(pictures(data_dir, rng, count=2)):
        im = im.crop((0, 0, min(im.size[0], 80), min(im.size[1], 64)))
        for name, sub, ph, mode in (("ycc420", 2, 6, "RGB"), ("ycc444", 0, 6, "RGB"),
                                    ("gray", 0, 1, "L")):
            pic = im.convert(mode)
            for lay in ("strips", "tiles"):
                out.append(("jpeg-%s-%s-%d" % (name, lay, k),
                            _jpeg_tiff(pic, sub, ph, lay == "tiles")))
    return out


def _jpeg_tiff(pic, subsampling, photometric, tiled):
    w, h = pic.size
    spp = 1 if pic.mode == "L" else 3
    step = 16
    chunks = []
    if tiled:
        for ty in range(0, h, step):
            for tx in range(0, w, step):
                tile = pic.crop((tx, ty, tx + step, ty + step))
                chunks.append(_jpeg(tile, quality=85, subsampling=subsampling))
    else:
        for y in range(0, h, step):
            strip = pic.crop((0, y, w, min(h, y + step)))
            chunks.append(_jpeg(strip, quality=85, subsampling=subsampling))
    buf = bytearray(b"II" + struct.pack("<HI", 42, 0))
    offsets = []
    for c in chunks:
        offsets.append(len(buf))
        buf += c + (b"\0" if len(c) % 2 else b"")
    tags = [(WIDTH, 4, [w]), (LENGTH, 4, [h]), (BPS, 3, [8] * spp), (COMPRESSION, 3, [JPEG]),
            (PHOTOMETRIC, 3, [photometric]), (SPP, 3, [spp]), (PLANAR, 3, [1])]
    if photometric == 6:
        tags.append((YCBCR_SUBSAMPLING, 3, [2, 2] if subsampling == 2 else [1, 1]))
    if tiled:
        tags += [(TILE_WIDTH, 3, [step]), (TILE_LENGTH, 3, [step]), (TILE_OFFSETS, 4, offsets),
                 (TILE_COUNTS, 4, [len(c) for c in chunks])]
    else:
        tags += [(STRIP_OFFSETS, 4, offsets), (ROWS_PER_STRIP, 4, [step]),
                 (STRIP_COUNTS, 4, [len(c) for c in chunks])]
    tags.sort(key=lambda t: t[0])
    buf += _ifd(tags, buf, "<", False, 4, "I", 4)
    return bytes(buf)


def cases(data_dir, seed=7):
    """Every file of this module: (name, bytes)."""
    return hand_cases(seed) + pil_cases(data_dir) + jpeg_cases(data_dir)
