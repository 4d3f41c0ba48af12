"""BMP files of every kind OpenCV's decoder reads (and some it refuses),
written byte by byte from a seeded generator, for the format oracle:

- 1, 4 and 8 bits a pixel with colour and gray palettes, full or short
  (clrused), uncompressed, RLE8 and RLE4 (encoded runs, absolute runs,
  end of line, delta, end of bitmap);
- 16 bits (5-5-5 as BI_RGB, 5-5-5 and 5-6-5 as BI_BITFIELDS, other masks),
  24 bits, 32 bits (BI_RGB and BI_BITFIELDS with any masks, in headers
  of 52 bytes (masks ignored), 56 and 108 (masks applied since OpenCV
  4.8: narrow, wide, single-bit, non-contiguous and zero masks));
- bottom-up and top-down rows, odd widths, the OS/2 header (12 bytes) and
  the V4 and V5 headers (108, 124 bytes).

Each case is (name, bytes). Nothing here reads a file or imports cv2."""
import random
import struct

BI_RGB, BI_RLE8, BI_RLE4, BI_BITFIELDS = 0, 1, 2, 3


def _rows(pixels_per_row, bits, width, height, rng):
    """Packed rows of random indices or values, each padded to 4 bytes."""
    pitch = ((width * bits + 7) // 8 + 3) & ~3
    out = bytearray()
    for _ in range(height):
        row = bytearray(rng.randrange(256) for _ in range(pitch))
        out += row
    return bytes(out)


def _palette(n, gray, rng, quad=True):
    entries = []
    for k in range(n):
        if gray:
            v = k * 255 // max(n - 1, 1)
            b = g = r = v
        else:
            b, g, r = rng.randrange(256), rng.randrange(256), rng.randrange(256)
        entries.append(bytes([b, g, r, 0]) if quad else bytes([b, g, r]))
    return b"".join(entries)


def bmp(width, height, bits, compression, pixels, palette=b"", masks=b"",
        header=40, clrused=0):
    """A BMP with a BITMAPINFOHEADER (header 40), V4 (108), V5 (124) or the
    OS/2 core header (12)."""
    if header == 12:
        info = struct.pack("<IHHHH", 12, width, height, 1, bits)
    else:
        info = struct.pack("<IiiHHIIiiII", header, width, height, 1, bits, compression,
                           len(pixels), 2835, 2835, clrused, 0)
        info += masks
        info += bytes(header - len(info)) if header > len(info) else b""
    offset = 14 + len(info) + len(palette)
    head = b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset)
    return head + info + palette + pixels


def _rle(width, height, rng, bits):
    """An RLE8 (bits 8) or RLE4 (bits 4) stream: encoded runs, absolute runs
    (padded to 16 bits), end of line, end of bitmap, covering every pixel."""
    longest = 8 if bits == 8 else 9  # encoded runs of 1 .. longest - 1
    out = bytearray()
    for y in range(height):
        x = 0
        while x < width:
            left = width - x
            kind = rng.randrange(3)
            if kind == 0 or left < 3:
                n = min(left, rng.randrange(1, longest))
                out += bytes([n, rng.randrange(256)])
            else:
                n = min(left, rng.randrange(3, 12))
                data = bytes(rng.randrange(256) for _ in range(n if bits == 8 else (n + 1) // 2))
                out += bytes([0, n]) + data
                if len(data) & 1:
                    out += b"\x00"
            x += n
        out += b"\x00\x00"  # end of line
    out += b"\x00\x01"
    return bytes(out)


def cases(seed=7):
    rng = random.Random(seed)
    out = []
    sizes = [(1, 1), (7, 5), (16, 9), (33, 17), (64, 48)]
    for w, h in sizes:
        for bits in (1, 4, 8):
            for gray in (False, True):
                for short in (False, True):
                    n = 1 << bits
                    used = max(2, n // 3) if short else 0
                    pal = _palette(used or n, gray, rng)
                    px = _rows(w, bits, w, h, rng)
                    for hh in (h, -h):
                        out.append(("pal%d-%s%s-%dx%d%s" % (bits, "gray" if gray else "color",
                                                         "-short" if short else "", w, h,
                                                         "-topdown" if hh < 0 else ""),
                                    bmp(w, hh, bits, BI_RGB, px, pal, clrused=used)))
            out.append(("os2-pal%d-%dx%d" % (bits, w, h),
                        bmp(w, h, bits, BI_RGB, _rows(w, bits, w, h, rng),
                            _palette(1 << bits, False, rng, quad=False), header=12)))
        pal = _palette(256, False, rng)
        out.append(("rle8-%dx%d" % (w, h), bmp(w, h, 8, BI_RLE8, _rle(w, h, rng, 8), pal)))
        pal = _palette(16, False, rng)
        out.append(("rle4-%dx%d" % (w, h), bmp(w, h, 4, BI_RLE4, _rle(w, h, rng, 4), pal)))
        px16 = _rows(w, 16, w, h, rng)
        out.append(("rgb16-%dx%d" % (w, h), bmp(w, h, 16, BI_RGB, px16)))
        out.append(("bf555-%dx%d" % (w, h), bmp(w, h, 16, BI_BITFIELDS, px16,
                                                  masks=struct.pack("<III", 0x7c00, 0x3e0, 0x1f))))
        out.append(("bf565-%dx%d" % (w, h), bmp(w, h, 16, BI_BITFIELDS, px16,
                                                  masks=struct.pack("<III", 0xf800, 0x7e0, 0x1f))))
        out.append(("bf-odd16-%dx%d" % (w, h), bmp(w, h, 16, BI_BITFIELDS, px16,
                                                     masks=struct.pack("<III", 0xf, 0xf0, 0xf00))))
        for hh in (h, -h):
            out.append(("rgb24-%dx%d%s" % (w, h, "-topdown" if hh < 0 else ""),
                        bmp(w, hh, 24, BI_RGB, _rows(w, 24, w, h, rng))))
        px32 = _rows(w, 32, w, h, rng)
        out.append(("rgb32-%dx%d" % (w, h), bmp(w, h, 32, BI_RGB, px32)))
        out.append(("bf32-bgra-%dx%d" % (w, h),
                    bmp(w, h, 32, BI_BITFIELDS, px32,
                        masks=struct.pack("<III", 0xff0000, 0xff00, 0xff))))
        out.append(("bf32-rgba-%dx%d" % (w, h),
                    bmp(w, h, 32, BI_BITFIELDS, px32,
                        masks=struct.pack("<III", 0xff, 0xff00, 0xff0000))))
        for k, m in enumerate(((0xff, 0xff00, 0xff0000, 0), (0x7c00, 0x3e0, 0x1f, 0x8000),
                               (0xffff0000, 0xffff, 0x3, 0), (0x7fffffff, 0x80000000, 0x3f, 0),
                               (1, 2, 0x80000000, 0), (0xfff, 0xf0f000, 0, 0),
                               (0xff00, 0xff0000, 0xff000000, 0xff))):
            for header in (52, 56, 108):
                out.append(("masks%d-h%d-%dx%d" % (k, header, w, h),
                            bmp(w, h, 32, BI_BITFIELDS, px32, masks=struct.pack("<IIII", *m),
                                header=header)))
        for header in (108, 124):
            masks = struct.pack("<IIII", 0xff0000, 0xff00, 0xff, 0xff000000)
            out.append(("v%d-rgb32-%dx%d" % (header // 27, w, h),
                        bmp(w, h, 32, BI_BITFIELDS, px32, masks=masks, header=header)))
            out.append(("v%d-rgb24-%dx%d" % (header // 27, w, h),
                        bmp(w, h, 24, BI_RGB, _rows(w, 24, w, h, rng), header=header)))
    return out
