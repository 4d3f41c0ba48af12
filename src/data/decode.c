/*
 * decode.c - JPEG and PNG decoding with cv2.imdecode(IMREAD_COLOR) semantics.
 *
 * What OpenCV 4.6 does, and so what this file does (each point measured
 * against cv2 by tests/oracle/test_decode_oracle.py):
 *
 *   JPEG  libjpeg(-turbo) with its defaults: accurate integer IDCT, fancy
 *         upsampling, output converted to BGR by the library (grayscale
 *         replicated). The orientation comes from the FIRST APP1 segment
 *         before the first SOS, whatever its identifier: its first 6 bytes
 *         are skipped and the rest read as a TIFF block (see
 *         exif_orientation). 4-component (CMYK, YCCK) images are refused.
 *         Where libjpeg only warns (truncated data, corrupt entropy data)
 *         OpenCV returns the damaged image; detfeed refuses it.
 *   PNG   libpng reduces 16-bit samples to their high byte, scales 1/2/4-bit
 *         gray to 8 bits (v * 255 / (2^d - 1)), expands the palette (tRNS
 *         ignored), drops alpha and applies no gamma, background or sBIT.
 *         The orientation comes from the first acceptable eXIf chunk,
 *         before or after the image data (see png_exif). The chunk
 *         structure is judged with libpng's rules (see png_scan); ancillary
 *         chunks, of which libpng at most warns, are not given to libspng.
 *   Orientation 1..8 as EXIF defines it (2 mirror, 3 rotate 180, 4 flip,
 *         5 transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate 90
 *         counter-clockwise); any other value leaves the image as it is.
 */
#include "data_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <spng.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Byte sources: the whole input in memory, or a file read piece by piece  */
/* ------------------------------------------------------------------------ */

typedef struct src {
    const uint8_t *mem; /* the input, when it is in memory */
    uint64_t size;      /* its size in bytes */
    int fd;             /* otherwise the file, read with pread */
    uint8_t *buf;       /* file: the bytes of the last src_at() */
    size_t cap;
    int io_errno; /* file: errno of a failed read, else 0 */
} src;

/* Bytes [off, off + len) of the input, or NULL when they are not all there
 * (or a read failed: io_errno is set). A file source overwrites the bytes
 * of the previous call. */
static const uint8_t *src_at(src *s, uint64_t off, uint64_t len)
{
    if (off > s->size || len > s->size - off)
        return NULL;
    if (s->mem)
        return s->mem + off;
    if (len > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < len)
            cap *= 2;
        uint8_t *p = realloc(s->buf, cap);
        if (p == NULL) {
            s->io_errno = ENOMEM;
            return NULL;
        }
        s->buf = p;
        s->cap = cap;
    }
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(s->fd, s->buf + got, (size_t)len - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            s->io_errno = r < 0 ? errno : EIO;
            return NULL;
        }
        got += (size_t)r;
    }
    return s->buf;
}

/* The failure of a source that could not give its bytes. */
static int src_fail(detfeed_codec *c, const char *name, const src *s)
{
    if (s->io_errno == ENOMEM)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory", name);
    return detfeed__fail(&c->msg, DETFEED_EIO, "%s: read failed: %s", name,
                         strerror(s->io_errno ? s->io_errno : EIO));
}

static uint32_t be16(const uint8_t *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ------------------------------------------------------------------------ */
/* EXIF orientation                                                         */
/* ------------------------------------------------------------------------ */

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
    return t->le ? (uint32_t)q[1] << 8 | q[0] : be16(q);
}

static uint32_t tiff32(const tiff *t, uint64_t off)
{
    const uint8_t *q = t->p + off;
    return t->le ? (uint32_t)q[3] << 24 | (uint32_t)q[2] << 16 | (uint32_t)q[1] << 8 |
                       q[0]
                 : be32(q);
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

/* The orientation (1..8) a TIFF block gives as OpenCV reads it: byte order
 * "II" or "MM", the magic 42, IFD0 at the offset the header names; the
 * first 0x0112 entry's 16-bit value (read as SHORT whatever the type says).
 * 1 when absent, unreadable or out of range. */
static int exif_orientation(const uint8_t *p, uint64_t n)
{
    tiff t = {p, n, true};
    if (n < 8 || p[0] != p[1] || (p[0] != 'I' && p[0] != 'M'))
        return 1;
    t.le = p[0] == 'I';
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

/* ------------------------------------------------------------------------ */
/* Headers                                                                  */
/* ------------------------------------------------------------------------ */

typedef enum { FMT_NONE, FMT_JPEG, FMT_PNG } img_format;

static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

static img_format sniff(const uint8_t *p, uint64_t n)
{
    /* The signatures OpenCV's decoders check: FF D8 FF and the PNG one. */
    if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff)
        return FMT_JPEG;
    if (n >= 8 && memcmp(p, png_magic, 8) == 0)
        return FMT_PNG;
    return FMT_NONE;
}

/* What the marker walk of a JPEG found before the first SOS. */
typedef struct jpeg_head {
    bool sof;            /* a frame header was read */
    unsigned sof_marker; /* 0xc0..0xcf */
    unsigned precision, ncomp;
    uint32_t width, height;
    uint64_t end; /* offset just past the SOS segment; 0 if not reached */
    int orientation;
} jpeg_head;

/*
 * Walks the markers from SOI to the first SOS as libjpeg reads them (fill
 * bytes 0xFF allowed, standalone RSTn and TEM, every other marker with a
 * length), noting the first frame header and the orientation of the first
 * APP1. Anything it does not understand ends the walk quietly: libjpeg then
 * reports the damage in its own words.
 */
static void jpeg_scan(src *s, jpeg_head *h)
{
    memset(h, 0, sizeof *h);
    h->orientation = 1;
    bool app1 = false;
    uint64_t pos = 2;
    for (;;) {
        const uint8_t *q = src_at(s, pos, 2);
        if (q == NULL || q[0] != 0xff)
            return;
        pos++;
        unsigned m;
        do {
            if ((q = src_at(s, pos++, 1)) == NULL)
                return;
            m = q[0];
        } while (m == 0xff);
        if (m == 0x01 || (m >= 0xd0 && m <= 0xd7))
            continue;
        if (m == 0x00 || m == 0xd8 || m == 0xd9 || (q = src_at(s, pos, 2)) == NULL)
            return;
        uint32_t len = be16(q);
        if (len < 2 || (q = src_at(s, pos + 2, len - 2)) == NULL)
            return;
        if (m == 0xda) {
            h->end = pos + len;
            return;
        }
        if (m == 0xe1 && !app1) {
            app1 = true;
            if (len - 2 > 6)
                h->orientation = exif_orientation(q + 6, len - 2 - 6);
        } else if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc &&
                   !h->sof && len >= 8) {
            h->sof = true;
            h->sof_marker = m;
            h->precision = q[0];
            h->height = be16(q + 1);
            h->width = be16(q + 3);
            h->ncomp = q[5];
        }
        pos += len;
    }
}

/* CRC-32 of PNG chunks (ISO 3309), four bits at a time. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *p, uint64_t n)
{
    static const uint32_t t[16] = {0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
                                   0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
                                   0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
                                   0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c};
    for (uint64_t i = 0; i < n; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ t[crc & 15];
        crc = (crc >> 4) ^ t[crc & 15];
    }
    return crc;
}

/*
 * What the chunk walk of a PNG found, and the stream handed to libspng: the
 * signature and IHDR, the palette (palette images only, cut to 2^depth
 * entries), the first run of IDAT chunks and an IEND. libspng judges some
 * ancillary chunks more strictly than libpng, which only warns about them;
 * since none of them changes what OpenCV decodes (no tRNS, gamma, sBIT or
 * background is applied) they are left out, eXIf read here.
 */
typedef struct png_head {
    uint32_t width, height;
    unsigned depth, ctype;
    int orientation;
    uint64_t idat_off, idat_end; /* the first run of IDAT chunks */
    size_t plte_size;            /* bytes of plte (a whole chunk), or 0 */
    uint8_t plte[12 + 768];
} png_head;

static const uint8_t png_iend[12] = {0,   0,   0,    0,    'I',  'E',
                                     'N', 'D', 0xae, 0x42, 0x60, 0x82};

static bool png_crc_ok(src *s, uint64_t pos, uint32_t len)
{
    const uint8_t *q = src_at(s, pos + 4, (uint64_t)len + 8);
    return q && (crc32_update(0xffffffffu, q, (uint64_t)len + 4) ^ 0xffffffffu) ==
                    be32(q + 4 + len);
}

/* libpng's eXIf rules: at least 2 bytes, starting "II" or "MM", with a
 * good CRC (its size limit only warns); the first such chunk is the one.
 * Returns the orientation, or 0 when the chunk is not taken. */
static int png_exif(src *s, uint64_t pos, uint32_t len)
{
    if (len < 2 || !png_crc_ok(s, pos, len))
        return 0;
    const uint8_t *q = src_at(s, pos + 8, len);
    if (q == NULL || q[0] != q[1] || (q[0] != 'I' && q[0] != 'M'))
        return 0;
    return exif_orientation(q, len);
}

static bool png_chunk_name_ok(const uint8_t *t)
{
    for (int i = 0; i < 4; i++)
        if (!((t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z')))
            return false;
    return true;
}

/*
 * Walks the chunks from IHDR to IEND with libpng's rules, measured against
 * OpenCV: a bad CRC, a truncated chunk, a bad chunk name, an unknown
 * critical chunk, a second IHDR or PLTE, a palette image without PLTE
 * before its data, IEND before any data or no IEND at all are errors;
 * anything after IEND and IDAT chunks after the first run (if intact) are
 * ignored; ancillary chunks never fail.
 */
static int png_scan(detfeed_codec *c, const char *name, src *s, png_head *h)
{
    memset(h, 0, sizeof *h);
    h->orientation = 1;
    const char *why = NULL;
    const uint8_t *q = src_at(s, 8, 8 + 13);
    if (q == NULL || be32(q) != 13 || memcmp(q + 4, "IHDR", 4) != 0) {
        why = "no IHDR chunk first";
        goto fail;
    }
    h->width = be32(q + 8);
    h->height = be32(q + 12);
    h->depth = q[16];
    h->ctype = q[17];
    bool exif = false, plte = false, run_closed = false;
    for (uint64_t pos = 8 + 25, next; !s->io_errno; pos = next) {
        if ((q = src_at(s, pos, 8)) == NULL) {
            why = "truncated (no IEND chunk)";
            break;
        }
        uint32_t len = be32(q);
        uint8_t t[4];
        memcpy(t, q + 4, 4);
        next = pos + 12 + len;
        if (len > 0x7fffffffu || !png_chunk_name_ok(t)) {
            why =
                len > 0x7fffffffu ? "chunk length out of range" : "invalid chunk type";
            break;
        }
        if (next > s->size) {
            why = "truncated chunk";
            break;
        }
        bool critical = t[0] <= 'Z', idat = memcmp(t, "IDAT", 4) == 0;
        if (idat && !run_closed) {
            if (h->ctype == 3 && !plte) {
                why = "palette image without PLTE before IDAT";
                break;
            }
            if (h->idat_off == 0)
                h->idat_off = pos;
            h->idat_end = pos + 12 + len;
        } else {
            run_closed = run_closed || h->idat_off != 0;
            if (critical && !png_crc_ok(s, pos, len)) {
                why = "CRC error in a critical chunk";
                break;
            }
        }
        if (memcmp(t, "eXIf", 4) == 0 && !exif) {
            int o = png_exif(s, pos, len);
            exif = o != 0;
            h->orientation = o ? o : 1;
        }
        if (!critical || idat)
            continue;
        if (memcmp(t, "IEND", 4) == 0) {
            if (h->idat_off == 0)
                why = "IEND before any IDAT";
            break;
        }
        if (memcmp(t, "PLTE", 4) != 0) {
            why = memcmp(t, "IHDR", 4) == 0 ? "second IHDR" : "unknown critical chunk";
            break;
        }
        if (plte) {
            why = "second PLTE";
            break;
        }
        plte = true;
        if (h->ctype != 3)
            continue;
        if (len == 0 || len % 3 || len > 768) {
            why = "invalid PLTE";
            break;
        }
        /* More entries than 2^depth: libpng reads the image all the same. */
        uint32_t keep = len;
        if (h->depth < 8 && keep > 3u << h->depth)
            keep = 3u << h->depth;
        if ((q = src_at(s, pos + 4, 4 + keep)) == NULL)
            break;
        uint8_t *p = h->plte;
        p[0] = p[1] = 0;
        p[2] = (uint8_t)(keep >> 8);
        p[3] = (uint8_t)keep;
        memcpy(p + 4, q, 4 + keep);
        uint32_t crc = crc32_update(0xffffffffu, p + 4, 4 + keep) ^ 0xffffffffu;
        p[8 + keep] = (uint8_t)(crc >> 24);
        p[9 + keep] = (uint8_t)(crc >> 16);
        p[10 + keep] = (uint8_t)(crc >> 8);
        p[11 + keep] = (uint8_t)crc;
        h->plte_size = 12 + keep;
    }
    if (why == NULL && !s->io_errno)
        return DETFEED_OK;
fail:
    if (s->io_errno)
        return src_fail(c, name, s);
    return detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: PNG: %s", name,
                         why ? why : "unreadable");
}

/* ------------------------------------------------------------------------ */
/* Pixels                                                                   */
/* ------------------------------------------------------------------------ */

void detfeed__swap_rb(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++, p += 3) {
        uint8_t t = p[0];
        p[0] = p[2];
        p[2] = t;
    }
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
static bool orient(uint8_t **img, size_t w, size_t h, int o)
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
static void oriented_size(uint32_t w, uint32_t h, int o, int *ow, int *oh)
{
    bool swap = o >= 5 && o <= 8;
    *ow = (int)(swap ? h : w);
    *oh = (int)(swap ? w : h);
}

/* Checks the limits and the size of the output buffer. */
static int check_size(detfeed_codec *c, const char *name, uint32_t w, uint32_t h,
                      size_t *bytes)
{
    int rc = detfeed__check_dims(&c->limits, name, w, h, &c->msg);
    if (rc != DETFEED_OK)
        return rc;
    size_t px;
    if (w > INT32_MAX || h > INT32_MAX || !detfeed__mul_size(w, h, &px) ||
        !detfeed__mul_size(px, 3, bytes))
        return detfeed__fail(&c->msg, DETFEED_EOVERFLOW,
                             "%s: %ux%u is too large to address", name, (unsigned)w,
                             (unsigned)h);
    return DETFEED_OK;
}

/* ------------------------------------------------------------------------ */
/* JPEG                                                                     */
/* ------------------------------------------------------------------------ */

void detfeed__decode_release(detfeed_codec *c)
{
    if (c->tj != NULL)
        tjDestroy(c->tj);
    c->tj = NULL;
}

/* The codec's TurboJPEG handle, created on first use. */
static int tj_handle(detfeed_codec *c, const char *name, tjhandle *out)
{
    if (c->tj == NULL && (c->tj = tjInitDecompress()) == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM,
                             "%s: cannot create a JPEG decompressor", name);
    *out = c->tj;
    return DETFEED_OK;
}

/* A TurboJPEG failure: the message, and a fresh handle next time. */
static int tj_fail(detfeed_codec *c, const char *name, const char *what)
{
    int rc = detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: JPEG %s: %s", name, what,
                           tjGetErrorStr2(c->tj));
    detfeed__decode_release(c);
    return rc;
}

/*
 * Reads the header of the JPEG in data[0, n) (at least up to the end of its
 * SOS segment) with the marker walk's findings `jh`: the stored size, after
 * refusing what libjpeg cannot give as BGR. The walk answers for frames
 * TurboJPEG's header reader does not classify (unusual sampling factors),
 * which libjpeg decodes all the same.
 */
static int jpeg_header(detfeed_codec *c, const char *name, const uint8_t *data,
                       uint64_t n, const jpeg_head *jh, uint32_t *w, uint32_t *h)
{
    if (jh->sof && jh->ncomp == 4)
        return detfeed__fail(&c->msg, DETFEED_ENOTSUPPORTED,
                             "%s: JPEG is CMYK (4 components); not supported", name);
    if (jh->sof && jh->ncomp != 1 && jh->ncomp != 3)
        return detfeed__fail(&c->msg, DETFEED_ENOTSUPPORTED,
                             "%s: JPEG has %u components; not supported", name,
                             jh->ncomp);
    if (jh->sof && jh->precision != 8)
        return detfeed__fail(&c->msg, DETFEED_ENOTSUPPORTED,
                             "%s: JPEG has %u-bit samples; only 8-bit is supported",
                             name, jh->precision);
    unsigned m = jh->sof_marker;
    if (jh->sof && (m == 0xc3 || m == 0xc5 || m == 0xc6 || m == 0xc7 || m == 0xcb ||
                    m == 0xcd || m == 0xce || m == 0xcf))
        return detfeed__fail(&c->msg, DETFEED_ENOTSUPPORTED,
                             "%s: JPEG is lossless or hierarchical (SOF 0x%02x); "
                             "not supported",
                             name, m);
    tjhandle tj = NULL;
    int rc = tj_handle(c, name, &tj);
    if (rc != DETFEED_OK)
        return rc;
    int tw = 0, th = 0, sub = 0, cs = 0;
    if (tjDecompressHeader3(tj, data, (unsigned long)n, &tw, &th, &sub, &cs) != 0) {
        bool sampling = tjGetErrorCode(tj) == TJERR_FATAL &&
                        strstr(tjGetErrorStr2(tj), "subsampling") != NULL;
        if (!(sampling && jh->sof && (jh->ncomp == 1 || jh->ncomp == 3) &&
              jh->end != 0))
            return tj_fail(c, name, "header");
        tw = (int)jh->width;
        th = (int)jh->height;
        cs = TJCS_YCbCr;
    }
    if (tw < 1 || th < 1) /* tables only: libjpeg found no frame */
        return detfeed__fail(&c->msg, DETFEED_ECORRUPT,
                             "%s: JPEG header: no image (truncated or tables only)",
                             name);
    if (cs == TJCS_CMYK || cs == TJCS_YCCK)
        return detfeed__fail(&c->msg, DETFEED_ENOTSUPPORTED,
                             "%s: JPEG is %s; CMYK is not supported", name,
                             cs == TJCS_CMYK ? "CMYK" : "YCCK (CMYK)");
    *w = (uint32_t)tw;
    *h = (uint32_t)th;
    return DETFEED_OK;
}

static int decode_jpeg(detfeed_codec *c, const char *name, const uint8_t *data,
                       size_t size, uint8_t **pixels, int *width, int *height)
{
    src s = {.mem = data, .size = size, .fd = -1};
    jpeg_head jh;
    jpeg_scan(&s, &jh);
    uint32_t w, h;
    size_t bytes = 0;
    int rc = jpeg_header(c, name, data, size, &jh, &w, &h);
    if (rc == DETFEED_OK)
        rc = check_size(c, name, w, h, &bytes);
    if (rc != DETFEED_OK)
        return rc;
    uint8_t *img = malloc(bytes);
    if (img == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM,
                             "%s: out of memory for a %ux%u image", name, (unsigned)w,
                             (unsigned)h);
    /* Defaults are libjpeg's (accurate IDCT, fancy upsampling) as OpenCV
     * uses them; any libjpeg warning (damaged data) is an error. */
    int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;
    if (tjDecompress2(c->tj, data, (unsigned long)size, img, (int)w, (int)w * 3, (int)h,
                      TJPF_BGR, flags) != 0) {
        free(img);
        return tj_fail(c, name, "data");
    }
    if (!orient(&img, w, h, jh.orientation)) {
        free(img);
        return detfeed__fail(&c->msg, DETFEED_ENOMEM,
                             "%s: out of memory to orient a %ux%u image", name,
                             (unsigned)w, (unsigned)h);
    }
    *pixels = img;
    oriented_size(w, h, jh.orientation, width, height);
    return DETFEED_OK;
}

/* ------------------------------------------------------------------------ */
/* PNG                                                                      */
/* ------------------------------------------------------------------------ */

/* A libspng context over data[0, n), its IHDR read and validated. */
static int png_begin(detfeed_codec *c, const char *name, const uint8_t *data, size_t n,
                     spng_ctx **out, struct spng_ihdr *ihdr)
{
    spng_ctx *ctx = *out = spng_ctx_new(0);
    if (ctx == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory", name);
    int e = spng_set_png_buffer(ctx, data, n);
    if (!e)
        e = spng_get_ihdr(ctx, ihdr);
    if (e)
        return detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: PNG header: %s", name,
                             spng_strerror(e));
    return DETFEED_OK;
}

/* The header (signature and IHDR, n <= 33 bytes), validated by libspng,
 * and the limits. */
static int png_header(detfeed_codec *c, const char *name, const uint8_t *head, size_t n,
                      struct spng_ihdr *ihdr, size_t *bytes)
{
    spng_ctx *ctx;
    int rc = png_begin(c, name, head, n, &ctx, ihdr);
    spng_ctx_free(ctx);
    return rc == DETFEED_OK ? check_size(c, name, ihdr->width, ihdr->height, bytes)
                            : rc;
}

static int decode_png(detfeed_codec *c, const char *name, const uint8_t *data,
                      size_t size, uint8_t **pixels, int *width, int *height)
{
    src s = {.mem = data, .size = size, .fd = -1};
    struct spng_ihdr ihdr;
    png_head ph;
    size_t bytes = 0, need = 0;
    int rc = png_header(c, name, data, size < 33 ? size : 33, &ihdr, &bytes);
    if (rc == DETFEED_OK)
        rc = png_scan(c, name, &s, &ph);
    if (rc != DETFEED_OK)
        return rc;
    /* The stream libspng decodes (see png_head). */
    size_t run = (size_t)(ph.idat_end - ph.idat_off);
    size_t n = 33 + ph.plte_size + run + sizeof png_iend;
    uint8_t *stream = malloc(n), *img = NULL;
    if (stream == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory (%zu bytes)",
                             name, n);
    memcpy(stream, data, 33);
    memcpy(stream + 33, ph.plte, ph.plte_size);
    memcpy(stream + 33 + ph.plte_size, data + ph.idat_off, run);
    memcpy(stream + n - sizeof png_iend, png_iend, sizeof png_iend);
    spng_ctx *ctx;
    rc = png_begin(c, name, stream, n, &ctx, &ihdr);
    int e = 0;
    if (rc == DETFEED_OK &&
        ((e = spng_decoded_image_size(ctx, SPNG_FMT_RGB8, &need)) || need != bytes))
        rc = detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: PNG: %s", name,
                           e ? spng_strerror(e) : "unexpected decoded size");
    if (rc == DETFEED_OK && (img = malloc(bytes)) == NULL)
        rc = detfeed__fail(&c->msg, DETFEED_ENOMEM,
                           "%s: out of memory for a %ux%u image", name,
                           (unsigned)ihdr.width, (unsigned)ihdr.height);
    /* RGB8: 16-bit samples reduced to the high byte, low depths scaled,
     * palette expanded; no alpha, tRNS, gamma or background. Then the rest
     * of the stream: trailing IDAT chunks and their CRCs. */
    if (rc == DETFEED_OK &&
        ((e = spng_decode_image(ctx, img, bytes, SPNG_FMT_RGB8, 0)) ||
         (e = spng_decode_chunks(ctx))))
        rc = detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: PNG data: %s", name,
                           spng_strerror(e));
    spng_ctx_free(ctx);
    free(stream);
    if (rc == DETFEED_OK) {
        detfeed__swap_rb(img, (size_t)ihdr.width * ihdr.height);
        if (!orient(&img, ihdr.width, ihdr.height, ph.orientation))
            rc = detfeed__fail(&c->msg, DETFEED_ENOMEM,
                               "%s: out of memory to orient a %ux%u image", name,
                               (unsigned)ihdr.width, (unsigned)ihdr.height);
    }
    if (rc != DETFEED_OK) {
        free(img);
        return rc;
    }
    *pixels = img;
    oriented_size(ihdr.width, ihdr.height, ph.orientation, width, height);
    return DETFEED_OK;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */
/* ------------------------------------------------------------------------ */

static int not_image(detfeed_codec *c, const char *name)
{
    return detfeed__fail(&c->msg, DETFEED_EFORMAT, "%s: not a JPEG or PNG image", name);
}

int detfeed_codec_decode(detfeed_codec *codec, const void *data, size_t size,
                         const char *name, uint8_t **pixels, int *width, int *height)
{
    if (pixels != NULL)
        *pixels = NULL;
    if (name == NULL)
        name = "(memory)";
    if (codec == NULL)
        return DETFEED_EINVAL;
    if (pixels == NULL || width == NULL || height == NULL ||
        (data == NULL && size != 0))
        return detfeed__fail(&codec->msg, DETFEED_EINVAL, "%s: invalid argument", name);
    detfeed__msg_clear(&codec->msg);
    if (size == 0)
        return detfeed__fail(&codec->msg, DETFEED_ECORRUPT, "%s: empty data", name);
    if (size > codec->limits.max_file)
        return detfeed__fail(&codec->msg, DETFEED_ELIMIT,
                             "%s: %zu bytes exceeds the file size limit %llu", name,
                             size, (unsigned long long)codec->limits.max_file);
    switch (sniff(data, size)) {
    case FMT_JPEG:
        return decode_jpeg(codec, name, data, size, pixels, width, height);
    case FMT_PNG:
        return decode_png(codec, name, data, size, pixels, width, height);
    default:
        return not_image(codec, name);
    }
}

int detfeed_codec_decode_file(detfeed_codec *codec, const char *path, uint8_t **pixels,
                              int *width, int *height)
{
    if (pixels != NULL)
        *pixels = NULL;
    if (codec == NULL)
        return DETFEED_EINVAL;
    if (path == NULL || pixels == NULL || width == NULL || height == NULL)
        return detfeed__fail(&codec->msg, DETFEED_EINVAL, "%s: invalid argument",
                             path ? path : "(no path)");
    detfeed__msg_clear(&codec->msg);
    uint8_t *data;
    size_t size;
    int rc =
        detfeed__read_file(path, codec->limits.max_file, &data, &size, &codec->msg);
    if (rc == DETFEED_OK)
        rc = detfeed_codec_decode(codec, data, size, path, pixels, width, height);
    free(data);
    return rc;
}

/* Opens `path` for probing with the checks of detfeed__read_file. */
static int probe_open(detfeed_codec *c, const char *path, src *s)
{
    s->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0)
        return detfeed__fail(&c->msg, DETFEED_EIO, "%s: cannot open: %s", path,
                             strerror(errno));
    struct stat st;
    if (fstat(s->fd, &st) != 0)
        return detfeed__fail(&c->msg, DETFEED_EIO, "%s: cannot stat: %s", path,
                             strerror(errno));
    if (!S_ISREG(st.st_mode))
        return detfeed__fail(&c->msg, DETFEED_EIO, "%s: not a regular file", path);
    if ((uint64_t)st.st_size > c->limits.max_file)
        return detfeed__fail(
            &c->msg, DETFEED_ELIMIT, "%s: %lld bytes exceeds the file size limit %llu",
            path, (long long)st.st_size, (unsigned long long)c->limits.max_file);
    if (st.st_size == 0)
        return detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: empty file", path);
    s->size = (uint64_t)st.st_size;
    return DETFEED_OK;
}

/* The stored size and orientation from the header of the file behind s. */
static int probe_src(detfeed_codec *c, const char *path, src *s, uint32_t *w,
                     uint32_t *h, int *o)
{
    const uint8_t *q = src_at(s, 0, s->size < 8 ? s->size : 8);
    if (q == NULL)
        goto io;
    img_format f = sniff(q, s->size < 8 ? s->size : 8);
    if (f == FMT_JPEG) {
        jpeg_head jh;
        jpeg_scan(s, &jh);
        if (s->io_errno)
            goto io;
        /* The header as far as the SOS segment (the whole file when the
         * walk did not reach it, for libjpeg's account of why). */
        uint64_t n = jh.end ? jh.end : s->size;
        if ((q = src_at(s, 0, n)) == NULL)
            goto io;
        *o = jh.orientation;
        return jpeg_header(c, path, q, n, &jh, w, h);
    }
    if (f == FMT_PNG) {
        struct spng_ihdr ihdr;
        png_head ph;
        size_t bytes;
        uint64_t n = s->size < 33 ? s->size : 33;
        if ((q = src_at(s, 0, n)) == NULL)
            goto io;
        int rc = png_header(c, path, q, (size_t)n, &ihdr, &bytes);
        if (rc == DETFEED_OK)
            rc = png_scan(c, path, s, &ph);
        *w = ihdr.width;
        *h = ihdr.height;
        *o = ph.orientation;
        return rc;
    }
    return not_image(c, path);
io:
    return src_fail(c, path, s);
}

int detfeed_codec_probe_file(detfeed_codec *codec, const char *path, int *width,
                             int *height)
{
    if (codec == NULL)
        return DETFEED_EINVAL;
    if (path == NULL || width == NULL || height == NULL)
        return detfeed__fail(&codec->msg, DETFEED_EINVAL, "%s: invalid argument",
                             path ? path : "(no path)");
    detfeed__msg_clear(&codec->msg);
    src s = {.fd = -1};
    uint32_t w = 0, h = 0;
    int o = 1;
    size_t bytes = 0;
    int rc = probe_open(codec, path, &s);
    if (rc == DETFEED_OK)
        rc = probe_src(codec, path, &s, &w, &h, &o);
    if (rc == DETFEED_OK)
        rc = check_size(codec, path, w, h, &bytes);
    if (s.fd >= 0)
        close(s.fd);
    free(s.buf);
    if (rc == DETFEED_OK)
        oriented_size(w, h, o, width, height);
    return rc;
}
