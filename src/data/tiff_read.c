/*
 * tiff_read.c - OpenCV's TiffDecoder::readData on libtiff, for one page
 * (directory) read into a Mat of a given type; the same libtiff calls in
 * the same order with the same buffers, so that the bytes and the failures
 * are libtiff's own (measured against Debian's OpenCV 4.6 and the wheels'
 * 4.12, 5.0 and 5.1 by tests/oracle/test_formats_oracle.py):
 *
 * - the page's layout: photometric interpretation (required), bits and
 *   samples (bits 1 when absent), orientation, tiles (both sizes required)
 *   or rows per strip; a size of 0, and a strip of 2^32 - 1 rows, is the
 *   image's; each at most 2^24 (as an int), at most 4 samples of at most
 *   64 bits.
 * - 8-bit Mats: libtiff's RGBA interface (TIFFReadRGBAStrip per strip,
 *   TIFFReadRGBATile per tile, after TIFFRGBAImageOK), which converts
 *   every photometric interpretation and bit depth and applies the
 *   orientation's flips within each strip or tile; OpenCV writes each
 *   strip's rows bottom up (from the last row of a partial tile), at
 *   height - y - rows for orientations 3, 4, 7 and 8, then transposes
 *   for 5 and 7 and flips and transposes for 6 and 8.
 * - 16-bit Mats: TIFFReadEncodedStrip / TIFFReadEncodedTile, samples as
 *   stored (R, G, B(, A) made B, G, R(, A)), then the whole orientation
 *   as EXIF's (detfeed__orient).
 * - 32- and 64-bit Mats: the same reads (detfeed uses no such image, only
 *   whether the page reads).
 * - OpenCV's limits: a buffer of 1 GiB or more fails (4.6: tile x samples
 *   x bytes; later: the buffer it allocates); a strip of 0.95 GiB or more
 *   is read line by line by 4.12 and later under conditions, which
 *   detfeed refuses (it would read such an image as OpenCV does only with
 *   the limits raised far above their defaults).
 * - a compression scheme the stack's libtiff lacks fails the read.
 */
#include "tiff_internal.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TILE_MAX = 1 << 24 };
#define MAX_TILE_SIZE (1ull << 30)
#define SCANLINE_AT   (MAX_TILE_SIZE * 95 / 100)

/* One page's reads as OpenCV lays them out. */
typedef struct layout {
    bool tiled, vert_flip;
    uint16_t photometric, bpp, ncn, orientation;
    uint32_t tw0, th0; /* tile, or strip: the width x rows per strip */
    int dst_bpp;       /* bits of a sample of the Mat */
    size_t row_bytes;  /* of the read buffer (OpenCV's) */
    uint64_t buf_size; /* OpenCV's read buffer */
} layout;

int detfeed__tiff_failed(detfeed__tiff *t, const char *fmt, ...)
{
    if (t->why[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t->why, sizeof t->why, fmt, ap);
        va_end(ap);
    }
    return DETFEED__TIFF_FAILED;
}

/* libtiff's error, or `what` when it gave none. */
static int read_failed(detfeed__tiff *t, const char *what)
{
    return detfeed__tiff_failed(t, "%s", t->err[0] ? t->err : what);
}

static int depth_bits(detfeed__cv_depth d)
{
    static const int bits[] = {8, 8, 16, 16, 32, 32, 32, 64, 64, 64};
    return bits[d];
}

static bool is_float(detfeed__cv_depth d)
{
    return d == DETFEED__CV_32F || d == DETFEED__CV_64F;
}

static bool old_cv(const detfeed__tiff *t)
{
    return t->cv == DETFEED_CV_4_DEBIAN;
}

/* The photometric interpretation, bits, samples, orientation and the
 * tile or strip size, as readData reads them. */
static int read_layout(detfeed__tiff *t, const detfeed__tiff_page *p,
                       detfeed__tiff_dst dst, layout *l)
{
    TIFF *tif = t->tif;
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &l->photometric))
        return detfeed__tiff_failed(t, "no photometric interpretation");
    if (p->hdr && is_float(dst.depth) &&
        !TIFFSetField(tif, TIFFTAG_SGILOGDATAFMT, SGILOGDATAFMT_FLOAT))
        return read_failed(t, "LogLuv data cannot be read as float");
    bool gray = l->photometric == PHOTOMETRIC_MINISWHITE ||
                l->photometric == PHOTOMETRIC_MINISBLACK;
    l->bpp = 8;
    l->ncn = gray ? 1 : 3;
    if (!TIFFGetField(tif, TIFFTAG_BITSPERSAMPLE, &l->bpp))
        l->bpp = 1;
    TIFFGetField(tif, TIFFTAG_SAMPLESPERPIXEL, &l->ncn);
    l->orientation = ORIENTATION_TOPLEFT;
    TIFFGetField(tif, TIFFTAG_ORIENTATION, &l->orientation);
    l->dst_bpp = depth_bits(dst.depth);
    uint16_t o = l->orientation;
    l->vert_flip =
        l->dst_bpp == 8 && (o == ORIENTATION_BOTRIGHT || o == ORIENTATION_RIGHTBOT ||
                            o == ORIENTATION_BOTLEFT || o == ORIENTATION_LEFTBOT);
    char emsg[1024];
    if (old_cv(t) && l->dst_bpp == 8 && !TIFFRGBAImageOK(tif, emsg))
        return detfeed__tiff_failed(t, "%s", emsg);
    l->tiled = TIFFIsTiled(tif) != 0;
    l->tw0 = p->width, l->th0 = 0;
    if (l->tiled && (!TIFFGetField(tif, TIFFTAG_TILEWIDTH, &l->tw0) ||
                     !TIFFGetField(tif, TIFFTAG_TILELENGTH, &l->th0)))
        return detfeed__tiff_failed(t, "a tiled page without its tile size");
    if (!l->tiled)
        TIFFGetField(tif, TIFFTAG_ROWSPERSTRIP, &l->th0);
    if (l->tw0 == 0)
        l->tw0 = p->width;
    if (l->th0 == 0 || (!l->tiled && l->th0 == UINT32_MAX))
        l->th0 = p->height;
    if ((int32_t)l->tw0 <= 0 || l->tw0 > TILE_MAX || (int32_t)l->th0 <= 0 ||
        l->th0 > TILE_MAX)
        return detfeed__tiff_failed(t, "tiles of %ux%u", (unsigned)l->tw0,
                                    (unsigned)l->th0);
    if (l->ncn > 4 || l->bpp > 64)
        return detfeed__tiff_failed(t, "%u samples of %u bits", (unsigned)l->ncn,
                                    (unsigned)l->bpp);
    return DETFEED__TIFF_DONE;
}

/* The conditions under which OpenCV 4.12 and later read a strip of 0.95
 * GiB or more line by line. */
static int line_by_line(detfeed__tiff *t, const detfeed__tiff_page *p, const layout *l,
                        bool *lines)
{
    TIFF *tif = t->tif;
    uint16_t planar = 0, n = 0, *extra = NULL, ph = l->photometric;
    if (!TIFFGetField(tif, TIFFTAG_PLANARCONFIG, &planar))
        return read_failed(t, "no planar configuration");
    *lines = !l->tiled && (l->ncn == 1 || l->ncn == 3 || l->ncn == 4) &&
             (l->bpp == 8 || l->bpp == 16) && l->th0 == p->height &&
             (ph == PHOTOMETRIC_MINISWHITE || ph == PHOTOMETRIC_MINISBLACK ||
              ph == PHOTOMETRIC_RGB) &&
             planar != PLANARCONFIG_SEPARATE;
    if (*lines && l->ncn == 4) {
        if (!TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &n, &extra))
            return read_failed(t, "no extra samples");
        *lines = n == 1 && extra[0] == EXTRASAMPLE_ASSOCALPHA;
    }
    return DETFEED__TIFF_DONE;
}

/* OpenCV's read buffer for the page, and the checks on the way to it. */
static int plan_buffer(detfeed__tiff *t, const detfeed__tiff_page *p,
                       detfeed__tiff_dst dst, layout *l)
{
    uint64_t tile = (uint64_t)l->tw0 * l->th0;
    uint64_t bytes = l->bpp / 8 > 1 ? l->bpp / 8 : 1;
    bool lines = false;
    int rc = DETFEED__TIFF_DONE;
    if (old_cv(t) && tile * l->ncn * bytes >= MAX_TILE_SIZE)
        return detfeed__tiff_failed(t, "a tile of 1 GiB or more");
    if (!old_cv(t) && l->dst_bpp == 8 && tile * 4 >= SCANLINE_AT)
        rc = line_by_line(t, p, l, &lines);
    else if (!old_cv(t) && l->dst_bpp == 16 && tile * l->ncn * bytes >= SCANLINE_AT)
        rc = line_by_line(t, p, l, &lines);
    if (rc != DETFEED__TIFF_DONE)
        return rc;
    if (lines)
        return detfeed__fail(&t->codec->msg, DETFEED_EFORMAT,
                             "%s: a TIFF strip of %ux%u, which OpenCV reads line by "
                             "line: detfeed does not read it",
                             t->name, (unsigned)l->tw0, (unsigned)l->th0);
    char emsg[1024];
    if (l->dst_bpp == 8) {
        l->bpp = 8, l->ncn = 4;
        if (!old_cv(t) && !TIFFRGBAImageOK(t->tif, emsg))
            return detfeed__tiff_failed(t, "%s", emsg);
    } else if (l->dst_bpp >= 32 && (old_cv(t) || is_float(dst.depth))) {
        if (l->ncn != dst.channels ||
            !TIFFSetField(t->tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP))
            return detfeed__tiff_failed(t, "%u samples read as %d channels",
                                        (unsigned)l->ncn, dst.channels);
    }
    /* OpenCV multiplies in 32 bits (the sample count's type) */
    uint32_t row_bits = (uint32_t)l->ncn * l->tw0 * l->bpp;
    l->row_bytes = ((size_t)row_bits + 7) / 8;
    l->buf_size = (uint64_t)l->th0 * l->row_bytes;
    if (!old_cv(t) && l->buf_size >= MAX_TILE_SIZE)
        return detfeed__tiff_failed(t, "a read buffer of 1 GiB or more");
    return DETFEED__TIFF_DONE;
}

/* Tiles are decoded whole: a tile over the image limits is refused. */
static int check_tile(detfeed__tiff *t, const layout *l)
{
    if (!l->tiled)
        return DETFEED_OK;
    uint32_t tw = 0, th = 0;
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_TILELENGTH, &th);
    if (tw != l->tw0 || th != l->th0) /* OpenCV's buffer would be too small */
        return detfeed__fail(&t->codec->msg, DETFEED_EFORMAT,
                             "%s: TIFF tiles of %ux%u read as %ux%u: detfeed does not "
                             "read it",
                             t->name, (unsigned)tw, (unsigned)th, (unsigned)l->tw0,
                             (unsigned)l->th0);
    return detfeed__check_dims(&t->codec->limits, t->name, l->tw0, l->th0,
                               &t->codec->msg);
}

/* The rows a strip read may write: libtiff's rows per strip, at most the
 * image's. */
static uint32_t strip_rows(detfeed__tiff *t, const detfeed__tiff_page *p,
                           const layout *l)
{
    uint32_t rps = 0;
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_ROWSPERSTRIP, &rps);
    uint32_t rows = rps > l->th0 ? rps : l->th0;
    return rows < p->height ? rows : p->height;
}

/* ---- 8 bits: the RGBA interface ---------------------------------------- */

/* One strip's or tile's RGBA rows (R, G, B, A bytes) into the image as
 * OpenCV places them: row i of the tile at img_y + rows - 1 - i. */
static void put_rgba(uint8_t *img, uint32_t width, const uint8_t *src, size_t stride,
                     uint32_t x, uint32_t img_y, uint32_t cols, uint32_t rows)
{
    for (uint32_t i = 0; i < rows; i++) {
        const uint8_t *s = src + i * stride;
        uint8_t *d = img + ((size_t)(img_y + rows - 1 - i) * width + x) * 3;
        for (uint32_t k = 0; k < cols; k++, s += 4, d += 3)
            d[0] = s[2], d[1] = s[1], d[2] = s[0];
    }
}

/* 16-bit gray into RGBA as libtiff 4.7.2 (OpenCV 5.1's) puts it: each
 * row of a tile the image's right edge cuts starts where it starts (earlier
 * libtiff, Debian's among them, moved on by the cut pixels' count in bytes,
 * not their samples' bytes). */
static void put_gray16(TIFFRGBAImage *img, uint32_t *cp, uint32_t x, uint32_t y,
                       uint32_t w, uint32_t h, int32_t fromskew, int32_t toskew,
                       unsigned char *pp)
{
    size_t step = 2 * (size_t)img->samplesperpixel;
    (void)y;
    for (; h > 0; --h) {
        for (x = w; x > 0; --x, pp += step) {
            uint16_t v;
            memcpy(&v, pp, 2);
            *cp++ = img->BWmap[v >> 8][0];
        }
        cp += toskew;
        pp += (ptrdiff_t)fromskew * (ptrdiff_t)step;
    }
}

/* Whether the stack's libtiff puts 16-bit gray tiles as put_gray16 does. */
static bool fixed_gray16(const detfeed__tiff *t)
{
    return t->cv == DETFEED_CV_5_1;
}

/* TIFFReadRGBATile (stop_on_error 0) with 16-bit gray put as put_gray16
 * does; other pages as libtiff puts them. */
static int read_rgba_tile(detfeed__tiff *t, uint32_t col, uint32_t row,
                          uint32_t *raster)
{
    if (!fixed_gray16(t))
        return TIFFReadRGBATile(t->tif, col, row, raster);
    uint32_t tw = 0, th = 0;
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_TILELENGTH, &th);
    char emsg[1024] = "";
    TIFFRGBAImage img;
    if (!TIFFRGBAImageOK(t->tif, emsg) || !TIFFRGBAImageBegin(&img, t->tif, 0, emsg)) {
        detfeed__tiff_failed(t, "%s", emsg);
        return 0;
    }
    if (img.isContig && img.bitspersample == 16 &&
        (img.photometric == PHOTOMETRIC_MINISWHITE ||
         img.photometric == PHOTOMETRIC_MINISBLACK))
        img.put.contig = put_gray16;
    uint32_t rh = row + th > img.height ? img.height - row : th;
    uint32_t rw = col + tw > img.width ? img.width - col : tw;
    img.row_offset = (int)row, img.col_offset = (int)col;
    int ok = TIFFRGBAImageGet(&img, raster, rw, rh);
    TIFFRGBAImageEnd(&img);
    if (rw == tw && rh == th)
        return ok;
    /* a partial tile: its rows moved to the bottom of a whole one, the
     * rest zero */
    for (uint32_t i = 0; i < rh; i++) {
        memmove(raster + (size_t)(th - i - 1) * tw, raster + (size_t)(rh - i - 1) * rw,
                rw * sizeof *raster);
        memset(raster + (size_t)(th - i - 1) * tw + rw, 0, (tw - rw) * sizeof *raster);
    }
    for (uint32_t i = rh; i < th; i++)
        memset(raster + (size_t)(th - i - 1) * tw, 0, tw * sizeof *raster);
    return ok;
}

/* Whether the Mat's channels take RGBA as OpenCV converts it. */
static int rgba_channels_ok(detfeed__tiff *t, detfeed__tiff_dst dst)
{
    if (dst.channels == 1 || dst.channels == 3 || dst.channels == 4)
        return DETFEED__TIFF_DONE;
    return detfeed__tiff_failed(t, "an 8-bit image of %d channels", dst.channels);
}

static int read_rgba(detfeed__tiff *t, const detfeed__tiff_page *p,
                     detfeed__tiff_dst dst, const layout *l, uint8_t *img)
{
    int rc = check_tile(t, l);
    if (rc != DETFEED_OK)
        return rc;
    uint32_t rows = l->tiled ? l->th0 : strip_rows(t, p, l);
    size_t stride = (size_t)l->tw0 * 4;
    uint32_t *buf = calloc(rows, stride);
    if (buf == NULL)
        return detfeed__fail(&t->codec->msg, DETFEED_ENOMEM,
                             "%s: out of memory for a TIFF tile of %ux%u", t->name,
                             (unsigned)l->tw0, (unsigned)rows);
    rc = DETFEED__TIFF_DONE;
    for (uint32_t y = 0; y < p->height && rc == DETFEED__TIFF_DONE; y += l->th0) {
        uint32_t th = l->th0 < p->height - y ? l->th0 : p->height - y;
        uint32_t img_y = l->vert_flip ? p->height - y - th : y;
        for (uint32_t x = 0; x < p->width && rc == DETFEED__TIFF_DONE; x += l->tw0) {
            uint32_t tw = l->tw0 < p->width - x ? l->tw0 : p->width - x;
            const uint8_t *start = (const uint8_t *)buf;
            if (!l->tiled && !TIFFReadRGBAStrip(t->tif, y, buf))
                rc = read_failed(t, "TIFFReadRGBAStrip failed");
            else if (l->tiled && !read_rgba_tile(t, x, y, buf))
                rc = read_failed(t, "TIFFReadRGBATile failed");
            if (rc == DETFEED__TIFF_DONE && l->tiled)
                start += (size_t)(l->th0 - th) * stride;
            if (rc == DETFEED__TIFF_DONE)
                rc = rgba_channels_ok(t, dst);
            if (rc == DETFEED__TIFF_DONE && img != NULL && dst.channels > 1)
                put_rgba(img, p->width, start, stride, x, img_y, tw, th);
        }
    }
    free(buf);
    return rc;
}

/* ---- 16 bits and wider: the samples as stored --------------------------- */

/* One strip's or tile's 16-bit R, G, B(, A) rows into the image as B, G, R
 * high bytes, row i at y + i. */
static void put16(uint8_t *img, uint32_t width, const uint8_t *src, size_t stride,
                  int ncn, uint32_t x, uint32_t y, uint32_t cols, uint32_t rows)
{
    for (uint32_t i = 0; i < rows; i++) {
        const uint8_t *s = src + i * stride;
        uint8_t *d = img + ((size_t)(y + i) * width + x) * 3;
        for (uint32_t k = 0; k < cols; k++, s += 2 * (size_t)ncn, d += 3) {
            uint16_t v[3];
            memcpy(v, s, sizeof v);
            d[0] = (uint8_t)(v[2] >> 8), d[1] = (uint8_t)(v[1] >> 8),
            d[2] = (uint8_t)(v[0] >> 8);
        }
    }
}

/* The channel checks of OpenCV's 16-bit conversion. */
static int samples_ok(detfeed__tiff *t, detfeed__tiff_dst dst, const layout *l)
{
    int w = dst.channels;
    bool ok = w == 1 || (l->ncn == 1 && w == 3) || (l->ncn == 3 && w == 3) ||
              (l->ncn == 4 && (w == 3 || w == 4));
    return ok ? DETFEED__TIFF_DONE
              : detfeed__tiff_failed(t, "%u samples read as %d channels",
                                     (unsigned)l->ncn, w);
}

/* Whether detfeed converts this page's 16-bit samples as OpenCV does; the
 * refusal where it does not. */
static int samples_supported(detfeed__tiff *t, const layout *l)
{
    uint16_t planar = PLANARCONFIG_CONTIG;
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_PLANARCONFIG, &planar);
    if (l->bpp != 16)
        return detfeed__fail(
            &t->codec->msg, DETFEED_EFORMAT,
            "%s: a TIFF of %u-bit samples, which detfeed does not read", t->name,
            (unsigned)l->bpp);
    if (planar == PLANARCONFIG_SEPARATE)
        /* OpenCV reads the first plane's strips as if they held every
         * sample, and the rest of its buffer is uninitialised memory */
        return detfeed__fail(&t->codec->msg, DETFEED_EFORMAT,
                             "%s: a 16-bit colour TIFF in separate planes, which "
                             "OpenCV reads from uninitialised memory: detfeed does "
                             "not read it",
                             t->name);
    uint16_t spp = 0;
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    uint64_t stored = l->tiled ? (uint64_t)TIFFTileRowSize64(t->tif)
                               : (uint64_t)TIFFScanlineSize64(t->tif);
    if (spp != l->ncn || stored != l->row_bytes)
        /* OpenCV's rows would run past what libtiff decodes */
        return detfeed__fail(&t->codec->msg, DETFEED_EFORMAT,
                             "%s: a 16-bit TIFF whose rows are not %u samples of 16 "
                             "bits: detfeed does not read it",
                             t->name, (unsigned)l->ncn);
    if (l->ncn != 3 && l->ncn != 4)
        return detfeed__fail(&t->codec->msg, DETFEED_EFORMAT,
                             "%s: a 16-bit TIFF of %u samples, which detfeed does not "
                             "read",
                             t->name, (unsigned)l->ncn);
    return DETFEED_OK;
}

/* The buffer a strip or tile read decodes into: OpenCV's rows (a strip's
 * cut at the image's end) or libtiff's strip or tile, whichever is larger,
 * zeroed; *want is what OpenCV asks libtiff for. */
static uint8_t *sample_buffer(detfeed__tiff *t, const detfeed__tiff_page *p,
                              const layout *l, tmsize_t *want)
{
    uint64_t lib = l->tiled ? TIFFTileSize64(t->tif) : TIFFStripSize64(t->tif);
    uint64_t ours = (uint64_t)l->row_bytes * (l->tiled ? l->th0 : strip_rows(t, p, l));
    uint64_t size = lib > ours ? lib : ours;
    *want = (tmsize_t)(size < l->buf_size ? size : l->buf_size);
    return size < MAX_TILE_SIZE ? calloc(size ? size : 1, 1) : NULL;
}

static int read_samples(detfeed__tiff *t, const detfeed__tiff_page *p,
                        detfeed__tiff_dst dst, const layout *l, uint8_t *img)
{
    int rc = check_tile(t, l);
    if (rc == DETFEED_OK && img != NULL)
        rc = samples_supported(t, l);
    if (rc != DETFEED_OK)
        return rc;
    tmsize_t want;
    uint8_t *buf = sample_buffer(t, p, l, &want);
    if (buf == NULL)
        return detfeed__fail(&t->codec->msg, DETFEED_ENOMEM,
                             "%s: out of memory for a TIFF tile of %ux%u", t->name,
                             (unsigned)l->tw0, (unsigned)l->th0);
    uint32_t index = 0;
    rc = DETFEED__TIFF_DONE;
    for (uint32_t y = 0; y < p->height && rc == DETFEED__TIFF_DONE; y += l->th0) {
        uint32_t th = l->th0 < p->height - y ? l->th0 : p->height - y;
        for (uint32_t x = 0; x < p->width && rc == DETFEED__TIFF_DONE;
             x += l->tw0, index++) {
            uint32_t tw = l->tw0 < p->width - x ? l->tw0 : p->width - x;
            tmsize_t got = l->tiled ? TIFFReadEncodedTile(t->tif, index, buf, want)
                                    : TIFFReadEncodedStrip(t->tif, index, buf, want);
            if (got < 0)
                rc = read_failed(t, "a strip or tile cannot be read");
            if (rc == DETFEED__TIFF_DONE && l->dst_bpp == 16)
                rc = samples_ok(t, dst, l);
            if (rc == DETFEED__TIFF_DONE && img != NULL)
                put16(img, p->width, buf, l->row_bytes, l->ncn, x, y, tw, th);
        }
    }
    free(buf);
    return rc;
}

/* ---- the page ----------------------------------------------------------- */

/* OpenCV's orientation after an RGBA read (libtiff flipped within the
 * strips): a transpose for 5 and 7, a flip of both axes and a transpose
 * for 6 and 8, which are EXIF's 5 and 7. */
static int partial_orientation(uint16_t o)
{
    if (o == ORIENTATION_LEFTTOP || o == ORIENTATION_RIGHTBOT)
        return 5;
    if (o == ORIENTATION_RIGHTTOP || o == ORIENTATION_LEFTBOT)
        return 7;
    return 1;
}

static int orient(detfeed__tiff *t, const detfeed__tiff_page *p, const layout *l,
                  uint8_t **bgr, uint32_t *w, uint32_t *h)
{
    int o = l->dst_bpp == 8 ? partial_orientation(l->orientation)
                            : (l->orientation <= 8 ? l->orientation : 1);
    if (!detfeed__orient(bgr, p->width, p->height, o))
        return detfeed__fail(&t->codec->msg, DETFEED_ENOMEM,
                             "%s: out of memory to orient a %ux%u image", t->name,
                             (unsigned)p->width, (unsigned)p->height);
    int ow, oh;
    detfeed__oriented_size(p->width, p->height, o, &ow, &oh);
    *w = (uint32_t)ow, *h = (uint32_t)oh;
    return DETFEED__TIFF_DONE;
}

int detfeed__tiff_read_page(detfeed__tiff *t, const detfeed__tiff_page *p,
                            detfeed__tiff_dst dst, uint8_t **bgr, uint32_t *w,
                            uint32_t *h)
{
    layout l;
    memset(&l, 0, sizeof l);
    t->err[0] = '\0';
    int rc = read_layout(t, p, dst, &l);
    if (rc == DETFEED__TIFF_DONE)
        rc = plan_buffer(t, p, dst, &l);
    uint8_t *img = bgr ? *bgr : NULL;
    if (img != NULL && (dst.channels < 3 || l.dst_bpp > 16))
        img = NULL; /* no image detfeed gives */
    if (rc == DETFEED__TIFF_DONE && l.dst_bpp == 8)
        rc = read_rgba(t, p, dst, &l, img);
    else if (rc == DETFEED__TIFF_DONE)
        rc = read_samples(t, p, dst, &l, img);
    if (rc == DETFEED__TIFF_DONE && img != NULL)
        rc = orient(t, p, &l, bgr, w, h);
    return rc;
}
