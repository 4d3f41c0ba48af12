/*
 * exif.c - the EXIF orientation: read from a TIFF block as OpenCV 4.6 reads
 * it, and applied to a decoded image.
 *
 * Orientation 1..8 as EXIF defines it (2 mirror, 3 rotate 180, 4 flip,
 * 5 transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate 90
 * counter-clockwise); any other value leaves the image as it is.
 */
#include "decode_internal.h"

#include <stdlib.h>
#include <string.h>

/* A TIFF block, its byte order and bounds. */
typedef struct tiff {
    const uint8_t *p;
    uint64_t n;
    bool le;
} tiff;

static bool tiff_has(const tiff *t, uint64_t off, uint64_t len)
{
    return off <= t->n && len <= t->n - off;
}

/* Callers check tiff_has() first. */
static uint32_t tiff16(const tiff *t, uint64_t off)
{
    const uint8_t *q = t->p + off;
    return t->le ? (uint32_t)q[1] << 8 | q[0] : detfeed__be16(q);
}

static uint32_t tiff32(const tiff *t, uint64_t off)
{
    const uint8_t *q = t->p + off;
    return t->le ? (uint32_t)q[3] << 24 | (uint32_t)q[2] << 16 | (uint32_t)q[1] << 8 |
                       q[0]
                 : detfeed__be32(q);
}

/*
 * OpenCV reads the entries of IFD0 in order and follows the values of a few
 * tags; a value that lies outside the block ends its reading, and with it
 * any orientation entry that comes later. Measured: the string tags
 * (ImageDescription, Make, Model, Software, DateTime, Copyright) fail when
 * their count is over 4 and offset + count passes the end; the rational
 * tags when offset + 8 * (number of rationals) does, whatever the type and
 * count fields say. Every other tag is skipped. False: reading stops.
 */
static bool tiff_entry_ok(const tiff *t, uint64_t e, uint32_t tag)
{
    unsigned rationals = 0;
    switch (tag) {
    case 0x010e: /* ImageDescription */
    case 0x010f: /* Make */
    case 0x0110: /* Model */
    case 0x0131: /* Software */
    case 0x0132: /* DateTime */
    case 0x8298: /* Copyright */
        if (!tiff_has(t, e + 4, 4))
            return false;
        if (tiff32(t, e + 4) <= 4)
            return true;
        return tiff_has(t, e + 8, 4) && tiff_has(t, tiff32(t, e + 8), tiff32(t, e + 4));
    case 0x011a: /* XResolution */
    case 0x011b: /* YResolution */
        rationals = 1;
        break;
    case 0x013e: /* WhitePoint */
        rationals = 2;
        break;
    case 0x0211: /* YCbCrCoefficients */
        rationals = 3;
        break;
    case 0x013f: /* PrimaryChromaticities */
    case 0x0214: /* ReferenceBlackWhite */
        rationals = 6;
        break;
    default:
        return true;
    }
    return tiff_has(t, e + 8, 4) && tiff_has(t, tiff32(t, e + 8), 8ull * rationals);
}

/* The orientation (1..8) a TIFF block gives as OpenCV reads it: little
 * endian for "II", big endian for anything else (OpenCV reads "MM", and
 * also a byte order it does not know, "M?" or "XX", as big endian:
 * measured on 4.6, 4.12 and 5.0), the magic 42, IFD0 at the offset the
 * header names; the first 0x0112 entry's 16-bit value (read as SHORT
 * whatever the type says). 1 when absent, unreadable or out of range. */
int detfeed__exif_orientation(const uint8_t *p, uint64_t n)
{
    tiff t = {p, n, true};
    if (n < 8)
        return 1;
    t.le = p[0] == 'I' && p[1] == 'I';
    if (tiff16(&t, 2) != 42)
        return 1;
    uint64_t ifd = tiff32(&t, 4);
    if (!tiff_has(&t, ifd, 2))
        return 1;
    uint32_t entries = tiff16(&t, ifd);
    uint64_t e = ifd + 2;
    for (uint32_t i = 0; i < entries; i++, e += 12) {
        if (!tiff_has(&t, e, 2))
            return 1;
        uint32_t tag = tiff16(&t, e);
        if (tag == 0x0112) {
            if (!tiff_has(&t, e + 8, 2))
                return 1;
            uint32_t v = tiff16(&t, e + 8);
            return v >= 1 && v <= 8 ? (int)v : 1;
        }
        if (!tiff_entry_ok(&t, e, tag))
            return 1;
    }
    return 1;
}

static void swap_px(uint8_t *a, uint8_t *b)
{
    uint8_t t[3];
    memcpy(t, a, 3);
    memcpy(a, b, 3);
    memcpy(b, t, 3);
}

/*
 * Applies an EXIF orientation to a tightly packed w x h BGR image. 2-4 work
 * in place; 5-8 write a new h-wide, w-high image and free the old one.
 * Returns false only when that allocation fails (the image is unchanged).
 */
bool detfeed__orient(uint8_t **img, size_t w, size_t h, int o)
{
    uint8_t *p = *img;
    size_t row = w * 3;
    if (o == 2) {
        for (size_t y = 0; y < h; y++)
            for (size_t a = 0, b = w - 1; a < b; a++, b--)
                swap_px(p + y * row + a * 3, p + y * row + b * 3);
    } else if (o == 3) {
        size_t n = w * h;
        for (size_t a = 0, b = n - 1; n > 1 && a < b; a++, b--)
            swap_px(p + a * 3, p + b * 3);
    } else if (o == 4) {
        for (size_t a = 0, b = h - 1; h > 1 && a < b; a++, b--)
            for (size_t x = 0; x < row; x++) {
                uint8_t t = p[a * row + x];
                p[a * row + x] = p[b * row + x];
                p[b * row + x] = t;
            }
    } else if (o >= 5 && o <= 8) {
        /* Output row r, column c (h columns) takes the source pixel at
         * x = r or w-1-r, y = c or h-1-c; in 32x32 tiles for the cache. */
        uint8_t *d = malloc(w * h * 3);
        if (d == NULL)
            return false;
        bool fx = o == 7 || o == 8, fy = o == 6 || o == 7;
        enum { T = 32 };
        for (size_t r0 = 0; r0 < w; r0 += T)
            for (size_t c0 = 0; c0 < h; c0 += T) {
                size_t r1 = r0 + T < w ? r0 + T : w, c1 = c0 + T < h ? c0 + T : h;
                for (size_t r = r0; r < r1; r++) {
                    size_t sx = fx ? w - 1 - r : r;
                    uint8_t *out = d + (r * h + c0) * 3;
                    for (size_t c = c0; c < c1; c++, out += 3) {
                        size_t sy = fy ? h - 1 - c : c;
                        memcpy(out, p + sy * row + sx * 3, 3);
                    }
                }
            }
        free(p);
        *img = d;
    }
    return true;
}

/* The size an orientation gives a w x h image. */
void detfeed__oriented_size(uint32_t w, uint32_t h, int o, int *ow, int *oh)
{
    bool swap = o >= 5 && o <= 8;
    *ow = (int)(swap ? h : w);
    *oh = (int)(swap ? w : h);
}
