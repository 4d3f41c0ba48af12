/*
 * bmp.c - Windows bitmaps as OpenCV's own BMP decoder reads them with
 * IMREAD_COLOR (the same in OpenCV 4.6, 4.12, 5.0 and 5.1: measured by
 * tests/oracle/test_formats_oracle.py):
 *
 * - the header: after "BM", the pixel offset (bytes 10-13) and the info
 *   header's size; 36 bytes or more is a Windows header (width, height,
 *   bits a pixel, compression, colours used), exactly 12 the OS/2 one
 *   (16-bit width and height, 3-byte palette entries), anything else no
 *   bitmap. Read: 1, 4, 8, 24 and 32 bits uncompressed, 16 and 32 bits
 *   uncompressed or BI_BITFIELDS, 8 bits RLE8 and 4 bits RLE4; a width of
 *   at least 1 and a height other than 0 (negative: rows top-down).
 * - the palette (1, 4 and 8 bits) follows the info header: `colours used`
 *   entries (0: all 2^bits, at most 256), the rest black.
 * - 16 bits: BI_RGB and masks 7c00/3e0/1f are 5-5-5, masks f800/7e0/1f
 *   5-6-5, other masks refused; each field shifted to the top of its byte,
 *   low bits 0 (not replicated). 32 bits: the bytes B, G, R, A (alpha
 *   dropped), except with bit fields and an info header of 56 bytes or
 *   more in OpenCV 4.8 and later (the codec's opencv setting): there the
 *   red, green, blue masks of the header (bytes 54-65) are applied when
 *   none is 0, each channel (pixel & mask) >> its lowest bit, times the
 *   float 255.0f / (mask >> that bit), truncated to a byte.
 * - rows of ((width * bits + 7) / 8 + 3) & ~3 bytes from the pixel offset;
 *   a file that ends before the last row's padding is refused.
 * - RLE: OpenCV's state machine, with its quirks kept: RLE8 runs wrap at
 *   the end of a row, RLE4 runs do not (a run past the row's end refuses
 *   the image); escapes fill what they skip with palette entry 0 (end of
 *   line: the rest of the row; RLE8's end of bitmap and delta: the rest of
 *   the image, or dx and dy rows; RLE4's end of bitmap and delta only the
 *   rest of the row or dx pixels); the stream ends when the last row is
 *   filled, and a stream that ends first refuses the image.
 * BMP carries no orientation.
 */
#include "decode_internal.h"

#include <stdlib.h>
#include <string.h>

enum { BI_RGB = 0, BI_RLE8 = 1, BI_RLE4 = 2, BI_BITFIELDS = 3 };

static uint32_t le16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
    return le16(p) | le16(p + 2) << 16;
}

/* Whether bits and compression make a bitmap OpenCV reads. */
static bool readable(uint32_t bits, uint32_t comp)
{
    bool plain = bits == 1 || bits == 4 || bits == 8 || bits == 24 || bits == 32;
    return (plain && comp == BI_RGB) ||
           ((bits == 16 || bits == 32) && (comp == BI_RGB || comp == BI_BITFIELDS)) ||
           (bits == 4 && comp == BI_RLE4) || (bits == 8 && comp == BI_RLE8);
}

static int truncated(detfeed_codec *c, const char *name, const char *what)
{
    return detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: BMP %s: the file ends first",
                         name, what);
}

/* A part of the file that could not be had: a read error, or its end. */
static int unread(detfeed_codec *c, const char *name, detfeed__src *s, const char *what)
{
    return s->io_errno ? detfeed__src_fail(c, name, s) : truncated(c, name, what);
}

/* The palette of h->bits (entries of `quad` bytes, at `at`). */
static int read_palette(detfeed_codec *c, const char *name, detfeed__src *s,
                        uint64_t at, uint32_t used, bool quad, detfeed__bmp_head *h)
{
    uint32_t n = used ? used : 1u << h->bits, size = quad ? 4 : 3;
    const uint8_t *p = detfeed__src_at(s, at, (uint64_t)n * size);
    if (p == NULL)
        return unread(c, name, s, "palette");
    memset(h->palette, 0, sizeof h->palette);
    for (uint32_t k = 0; k < n; k++)
        memcpy(h->palette[k], p + (size_t)k * size, 3);
    return DETFEED_OK;
}

/* 16 bits with BI_BITFIELDS: the masks after the info header. */
static int read_masks(detfeed_codec *c, const char *name, detfeed__src *s, uint64_t at,
                      detfeed__bmp_head *h)
{
    const uint8_t *p = detfeed__src_at(s, at, 12);
    if (p == NULL)
        return unread(c, name, s, "masks");
    uint32_t r = le32(p), g = le32(p + 4), b = le32(p + 8);
    if (b == 0x1f && g == 0x3e0 && r == 0x7c00)
        h->bits = 15;
    else if (!(b == 0x1f && g == 0x7e0 && r == 0xf800))
        return detfeed__fail(&c->msg, DETFEED_EFORMAT,
                             "%s: BMP of 16 bits with masks %x, %x, %x: only 5-5-5 and "
                             "5-6-5 are read",
                             name, (unsigned)r, (unsigned)g, (unsigned)b);
    return DETFEED_OK;
}

/* The masks of a 32-bit bitmap with bit fields in a header of 56 bytes or
 * more (R, G, B at 54), as OpenCV 4.8 and later read them. */
static int read_32bit_masks(detfeed_codec *c, const char *name, detfeed__src *s,
                            detfeed__bmp_head *h)
{
    const uint8_t *p = detfeed__src_at(s, 54, 16);
    if (p == NULL)
        return unread(c, name, s, "masks");
    h->masked = true;
    for (int k = 0; k < 3; k++) { /* stored R, G, B; kept B, G, R */
        uint32_t m = le32(p + 4 * (2 - k)), shift = 0;
        h->masked &= m != 0;
        while (m && !(m >> shift & 1))
            shift++;
        h->mask[k] = m, h->shift[k] = shift;
        h->scale[k] = m ? 255.0f / (float)(m >> shift) : 1.0f;
    }
    return DETFEED_OK;
}

/* A Windows info header of `size` bytes (>= 36) at 14. */
static int windows_header(detfeed_codec *c, const char *name, detfeed__src *s,
                          uint32_t size, detfeed__bmp_head *h)
{
    const uint8_t *p = detfeed__src_at(s, 18, 32);
    if (p == NULL)
        return unread(c, name, s, "header");
    int32_t w = (int32_t)le32(p), ht = (int32_t)le32(p + 4);
    uint32_t bits = le16(p + 10), comp = le32(p + 12);
    int32_t used = (int32_t)le32(p + 28);
    if (w <= 0 || ht == 0 || ht == INT32_MIN || !readable(bits, comp))
        return detfeed__fail(&c->msg, DETFEED_EFORMAT,
                             "%s: BMP of %dx%d pixels, %u bits, compression %u: not a "
                             "kind OpenCV reads",
                             name, (int)w, (int)ht, (unsigned)bits, (unsigned)comp);
    h->width = (uint32_t)w;
    h->height = (uint32_t)(ht < 0 ? -ht : ht);
    h->top_down = ht < 0;
    h->bits = bits;
    h->comp = comp;
    if (bits <= 8) {
        if (used < 0 || used > 256)
            return detfeed__fail(&c->msg, DETFEED_ECORRUPT,
                                 "%s: BMP palette of %d colours", name, (int)used);
        return read_palette(c, name, s, 14 + (uint64_t)size, (uint32_t)used, true, h);
    }
    if (bits == 16 && comp == BI_BITFIELDS)
        return read_masks(c, name, s, 14 + (uint64_t)size, h);
    if (bits == 32 && comp == BI_BITFIELDS && size >= 56 &&
        c->limits.opencv != DETFEED_CV_4_DEBIAN)
        return read_32bit_masks(c, name, s, h);
    if (bits == 16)
        h->bits = 15;
    return DETFEED_OK;
}

/* The OS/2 info header (12 bytes) at 14. */
static int os2_header(detfeed_codec *c, const char *name, detfeed__src *s,
                      detfeed__bmp_head *h)
{
    const uint8_t *p = detfeed__src_at(s, 18, 8);
    if (p == NULL)
        return unread(c, name, s, "header");
    uint32_t w = le16(p), ht = le16(p + 2), bits = le16(p + 6);
    if (w == 0 || ht == 0 || bits == 16 || !readable(bits, BI_RGB))
        return detfeed__fail(&c->msg, DETFEED_EFORMAT,
                             "%s: OS/2 BMP of %ux%u pixels, %u bits: not a kind OpenCV "
                             "reads",
                             name, (unsigned)w, (unsigned)ht, (unsigned)bits);
    *h = (detfeed__bmp_head){.width = w, .height = ht, .bits = bits, .comp = BI_RGB};
    return bits <= 8 ? read_palette(c, name, s, 26, 0, false, h) : DETFEED_OK;
}

int detfeed__bmp_header(detfeed_codec *c, const char *name, detfeed__src *s,
                        detfeed__bmp_head *h)
{
    const uint8_t *p = detfeed__src_at(s, 0, 18);
    if (p == NULL)
        return unread(c, name, s, "header");
    memset(h, 0, sizeof *h);
    uint32_t offset = le32(p + 10), size = le32(p + 14);
    int rc;
    if (size >= 36 && size <= INT32_MAX)
        rc = windows_header(c, name, s, size, h);
    else if (size == 12)
        rc = os2_header(c, name, s, h);
    else
        rc = detfeed__fail(&c->msg, DETFEED_EFORMAT,
                           "%s: BMP with an info header of %u bytes: not one OpenCV "
                           "reads (12, or 36 and more)",
                           name, (unsigned)size);
    h->offset = offset;
    return rc;
}

/* ---- pixels --------------------------------------------------------------- */

/* Bytes of one stored row of h (a multiple of 4). */
static uint64_t row_pitch(const detfeed__bmp_head *h)
{
    uint64_t bits = h->bits == 15 ? 16 : h->bits;
    return ((h->width * bits + 7) / 8 + 3) & ~(uint64_t)3;
}

/* Palette entry k into the BGR pixel at dst. */
static void put(uint8_t *dst, const detfeed__bmp_head *h, unsigned k)
{
    memcpy(dst, h->palette[k], 3);
}

/* One uncompressed stored row `src` into `dst` (width BGR pixels). */
static void plain_row(const detfeed__bmp_head *h, const uint8_t *src, uint8_t *dst)
{
    for (uint32_t x = 0; x < h->width; x++, dst += 3) {
        uint32_t v;
        switch (h->bits) {
        case 1:
            put(dst, h, src[x >> 3] >> (7 - (x & 7)) & 1);
            break;
        case 4:
            put(dst, h, x & 1 ? src[x >> 1] & 15 : src[x >> 1] >> 4);
            break;
        case 8:
            put(dst, h, src[x]);
            break;
        case 15:
            v = le16(src + 2 * (size_t)x);
            dst[0] = (uint8_t)(v << 3), dst[1] = (uint8_t)(v >> 2 & 0xf8);
            dst[2] = (uint8_t)(v >> 7 & 0xf8);
            break;
        case 16:
            v = le16(src + 2 * (size_t)x);
            dst[0] = (uint8_t)(v << 3), dst[1] = (uint8_t)(v >> 3 & 0xfc);
            dst[2] = (uint8_t)(v >> 8 & 0xf8);
            break;
        case 24:
            memcpy(dst, src + 3 * (size_t)x, 3);
            break;
        default: /* 32: B, G, R, A, or by masks */
            if (!h->masked) {
                memcpy(dst, src + 4 * (size_t)x, 3);
                break;
            }
            v = le32(src + 4 * (size_t)x);
            for (int k = 0; k < 3; k++)
                dst[k] =
                    (uint8_t)((float)((v & h->mask[k]) >> h->shift[k]) * h->scale[k]);
            break;
        }
    }
}

/* The RLE decoder's place in the image (rows in stored order). */
typedef struct rle {
    const uint8_t *data;
    size_t size, at; /* the stream: the file, and where the next byte is */
    uint8_t *img;
    size_t row3;      /* bytes of an image row */
    size_t pos, end;  /* the next pixel byte and its row's end, in img */
    uint32_t y, rows; /* rows filled, of all */
    const detfeed__bmp_head *h;
} rle;

static bool next_byte(rle *r, unsigned *v)
{
    if (r->at >= r->size)
        return false;
    *v = r->data[r->at++];
    return true;
}

/* OpenCV's FillUniColor: `count` pixel bytes of palette entry 0 from pos,
 * moving to the next row at a row's end; stops after the last row. */
static void fill_entry0(rle *r, size_t count)
{
    do {
        size_t stop = r->pos + count < r->end ? r->pos + count : r->end;
        count -= stop - r->pos;
        for (; r->pos < stop; r->pos += 3)
            put(r->img + r->pos, r->h, 0);
        if (r->pos >= r->end) {
            r->end += r->row3;
            r->pos = r->end - r->row3;
            if (++r->y >= r->rows)
                break;
        }
    } while (count > 0);
}

/* An absolute run of n indices (bits 4 or 8) from the stream, padded to an
 * even byte count. */
static bool absolute_run(rle *r, unsigned n, int bits)
{
    size_t bytes = bits == 8 ? (n + 1) & ~1u : (((n + 1) >> 1) + 1) & ~1u;
    if (r->pos + 3 * (size_t)n > r->end || r->size - r->at < bytes)
        return false;
    const uint8_t *src = r->data + r->at;
    for (unsigned k = 0; k < n; k++, r->pos += 3)
        put(r->img + r->pos, r->h,
            bits == 8 ? src[k] : (k & 1 ? src[k >> 1] & 15 : src[k >> 1] >> 4));
    r->at += bytes;
    return true;
}

/* An escape (0 end of line, 1 end of bitmap, 2 delta) of RLE4. */
static bool rle4_escape(rle *r, unsigned code)
{
    size_t skip = r->end - r->pos;
    if (code == 2) {
        unsigned dx, dy;
        if (!next_byte(r, &dx) || !next_byte(r, &dy))
            return false;
        skip = 3 * (size_t)dx; /* OpenCV 's RLE4 moves by dx only */
    }
    fill_entry0(r, skip);
    return true;
}

static bool rle4(rle *r)
{
    while (r->y < r->rows) {
        unsigned len, code;
        if (!next_byte(r, &len) || !next_byte(r, &code))
            return false;
        if (len) { /* a run of two alternating entries, within the row */
            if (r->pos + 3 * (size_t)len > r->end)
                return false;
            for (unsigned k = 0; k < len; k++, r->pos += 3)
                put(r->img + r->pos, r->h, k & 1 ? code & 15 : code >> 4);
        } else if (code > 2) {
            if (!absolute_run(r, code, 4))
                return false;
        } else if (!rle4_escape(r, code)) {
            return false;
        }
    }
    return true;
}

/* An escape of RLE8; `wrapped`: the last run ended a row, so that an end of
 * line right after it is no second one. */
static bool rle8_escape(rle *r, unsigned code, bool wrapped)
{
    size_t skip = r->end - r->pos, rows_left = r->rows - r->y;
    if (!(code || !wrapped || skip < r->row3))
        return true;
    if (code == 2) {
        unsigned dx, dy;
        if (!next_byte(r, &dx) || !next_byte(r, &dy))
            return false;
        skip = 3 * (size_t)dx, rows_left = dy;
    }
    if (code != 0)
        skip += rows_left * r->row3;
    fill_entry0(r, skip);
    return true;
}

static bool rle8(rle *r)
{
    bool wrapped = false;
    while (r->y < r->rows) {
        unsigned len, code;
        if (!next_byte(r, &len) || !next_byte(r, &code))
            return false;
        uint32_t y = r->y;
        if (len) { /* a run of one entry, wrapping at the row's end */
            if (r->pos + 3 * (size_t)len > r->end)
                return false;
            for (unsigned k = 0; k < len; k++) {
                put(r->img + r->pos, r->h, code);
                r->pos += 3;
                if (r->pos >= r->end) {
                    r->end += r->row3;
                    r->pos = r->end - r->row3;
                    if (++r->y >= r->rows)
                        break;
                }
            }
            wrapped = r->y != y;
        } else if (code > 2) {
            if (!absolute_run(r, code, 8))
                return false;
            wrapped = false;
        } else {
            if (!rle8_escape(r, code, wrapped))
                return false;
            wrapped = false;
        }
    }
    return true;
}

/* Rows in stored order into img, from the pixel offset. */
static int stored_rows(detfeed_codec *c, const char *name, const uint8_t *data,
                       size_t size, const detfeed__bmp_head *h, uint8_t *img)
{
    size_t row3 = (size_t)h->width * 3;
    if (h->comp == BI_RLE8 || h->comp == BI_RLE4) {
        rle r = {.data = data,
                 .size = size,
                 .at = h->offset,
                 .img = img,
                 .row3 = row3,
                 .end = row3,
                 .rows = h->height,
                 .h = h};
        if (h->offset > size || !(h->comp == BI_RLE8 ? rle8(&r) : rle4(&r)))
            return detfeed__fail(&c->msg, DETFEED_ECORRUPT,
                                 "%s: BMP %s data: the stream ends before the last row "
                                 "or a run leaves its row",
                                 name, h->comp == BI_RLE8 ? "RLE8" : "RLE4");
        return DETFEED_OK;
    }
    uint64_t pitch = row_pitch(h);
    if (h->offset > size || (size - h->offset) / pitch < h->height)
        return truncated(c, name, "pixels");
    for (uint32_t y = 0; y < h->height; y++)
        plain_row(h, data + h->offset + y * pitch, img + y * row3);
    return DETFEED_OK;
}

/* The rows of a bottom-up bitmap, reversed in place. */
static void flip_rows(uint8_t *img, size_t row3, uint32_t rows)
{
    uint8_t tmp[768];
    for (uint32_t a = 0, b = rows - 1; a < b; a++, b--)
        for (size_t k = 0; k < row3; k += sizeof tmp) {
            size_t n = row3 - k < sizeof tmp ? row3 - k : sizeof tmp;
            memcpy(tmp, img + a * row3 + k, n);
            memcpy(img + a * row3 + k, img + b * row3 + k, n);
            memcpy(img + b * row3 + k, tmp, n);
        }
}

int detfeed__bmp_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                        size_t size, const detfeed__bmp_head *h, size_t bytes,
                        uint8_t **out)
{
    uint8_t *img = malloc(bytes);
    if (img == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM,
                             "%s: out of memory for a %ux%u image", name,
                             (unsigned)h->width, (unsigned)h->height);
    int rc = stored_rows(c, name, data, size, h, img);
    if (rc != DETFEED_OK) {
        free(img);
        return rc;
    }
    if (!h->top_down)
        flip_rows(img, (size_t)h->width * 3, h->height);
    *out = img;
    return DETFEED_OK;
}

int detfeed__bmp_check_size(detfeed_codec *c, const char *name, uint64_t size,
                            const detfeed__bmp_head *h)
{
    if (h->comp == BI_RLE8 || h->comp == BI_RLE4)
        return h->offset <= size ? DETFEED_OK : truncated(c, name, "RLE data");
    uint64_t pitch = row_pitch(h);
    return h->offset <= size && (size - h->offset) / pitch >= h->height
               ? DETFEED_OK
               : truncated(c, name, "pixels");
}
