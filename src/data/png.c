/*
 * png.c - PNG with libspng: the decoder with cv2.imdecode's semantics, and
 * the exact 8-bit reader and the writer of detfeed_codec_read_png and
 * detfeed_codec_write_png.
 *
 * As OpenCV 4.6 decodes it (libpng): 16-bit samples reduced to their high
 * byte, 1/2/4-bit gray scaled to 8 bits (v * 255 / (2^d - 1)), the palette
 * expanded (tRNS ignored), alpha dropped, no gamma, background or sBIT. The
 * orientation comes from the first acceptable eXIf chunk, before or after
 * the image data (see png_exif). The chunk structure is judged with
 * libpng's rules (see detfeed__png_scan); ancillary chunks, of which libpng
 * at most warns, are not given to libspng.
 *
 * The stream handed to libspng: the signature and IHDR, the palette
 * (palette images only, cut to 2^depth entries), the first run of IDAT
 * chunks and an IEND. libspng judges some ancillary chunks more strictly
 * than libpng, which only warns about them; since none of them changes what
 * OpenCV decodes (no tRNS, gamma, sBIT or background is applied) they are
 * left out, eXIf read here. Chunk CRCs are zlib's crc32.
 */
#include "decode_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* RGB <-> BGR in place, n pixels of 3 bytes. */
static void swap_rb(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++, p += 3) {
        uint8_t t = p[0];
        p[0] = p[2];
        p[2] = t;
    }
}

/* ------------------------------------------------------------------------ */
/* The chunk walk                                                           */
/* ------------------------------------------------------------------------ */

/* The CRC-32 of PNG chunks (ISO 3309). */
static uint32_t chunk_crc(const uint8_t *p, uint64_t n)
{
    return (uint32_t)crc32_z(0, p, (z_size_t)n);
}

static const uint8_t png_iend[12] = {0,   0,   0,    0,    'I',  'E',
                                     'N', 'D', 0xae, 0x42, 0x60, 0x82};

static bool png_crc_ok(detfeed__src *s, uint64_t pos, uint32_t len)
{
    const uint8_t *q = detfeed__src_at(s, pos + 4, (uint64_t)len + 8);
    return q && chunk_crc(q, (uint64_t)len + 4) == detfeed__be32(q + 4 + len);
}

/* libpng's eXIf rules: at least 2 bytes, starting "II" or "MM", with a
 * good CRC (its size limit only warns); the first such chunk is the one.
 * Returns the orientation, or 0 when the chunk is not taken. */
static int png_exif(detfeed__src *s, uint64_t pos, uint32_t len)
{
    if (len < 2 || !png_crc_ok(s, pos, len))
        return 0;
    const uint8_t *q = detfeed__src_at(s, pos + 8, len);
    if (q == NULL || q[0] != q[1] || (q[0] != 'I' && q[0] != 'M'))
        return 0;
    return detfeed__exif_orientation(q, len);
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
int detfeed__png_scan(detfeed_codec *c, const char *name, detfeed__src *s,
                      detfeed__png_head *h)
{
    memset(h, 0, sizeof *h);
    h->orientation = 1;
    const char *why = NULL;
    const uint8_t *q = detfeed__src_at(s, 8, 8 + 13);
    if (q == NULL || detfeed__be32(q) != 13 || memcmp(q + 4, "IHDR", 4) != 0) {
        why = "no IHDR chunk first";
        goto fail;
    }
    h->width = detfeed__be32(q + 8);
    h->height = detfeed__be32(q + 12);
    h->depth = q[16];
    h->ctype = q[17];
    bool exif = false, plte = false, run_closed = false;
    for (uint64_t pos = 8 + 25, next; !s->io_errno; pos = next) {
        if ((q = detfeed__src_at(s, pos, 8)) == NULL) {
            why = "truncated (no IEND chunk)";
            break;
        }
        uint32_t len = detfeed__be32(q);
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
        if ((q = detfeed__src_at(s, pos + 4, 4 + keep)) == NULL)
            break;
        uint8_t *p = h->plte;
        p[0] = p[1] = 0;
        p[2] = (uint8_t)(keep >> 8);
        p[3] = (uint8_t)keep;
        memcpy(p + 4, q, 4 + keep);
        uint32_t crc = chunk_crc(p + 4, 4 + keep);
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
        return detfeed__src_fail(c, name, s);
    return detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: PNG: %s", name,
                         why ? why : "unreadable");
}

/* ------------------------------------------------------------------------ */
/* Decoding with cv2.imdecode's semantics                                   */
/* ------------------------------------------------------------------------ */

/* Whether an allocation failed in this thread's libspng context since it
 * was made (png_ctx): libspng takes allocators without a context pointer
 * (zlib's allocations go through them too), so a thread-local flag carries
 * it; a codec is used by one thread at a time. Without it a failed
 * allocation inside zlib would read as damaged data ("IDAT stream
 * error"). */
static _Thread_local bool png_alloc_failed;

static void *png_malloc(size_t n)
{
    void *p = malloc(n);
    png_alloc_failed |= p == NULL;
    return p;
}

static void *png_realloc(void *ptr, size_t n)
{
    void *p = realloc(ptr, n);
    png_alloc_failed |= p == NULL && n > 0;
    return p;
}

static void *png_calloc(size_t count, size_t size)
{
    void *p = calloc(count, size);
    png_alloc_failed |= p == NULL;
    return p;
}

/* A libspng context whose allocation failures png_error reports. */
static spng_ctx *png_ctx(int flags)
{
    struct spng_alloc alloc = {.malloc_fn = png_malloc,
                               .realloc_fn = png_realloc,
                               .calloc_fn = png_calloc,
                               .free_fn = free};
    png_alloc_failed = false;
    spng_ctx *ctx = spng_ctx_new2(&alloc, flags);
    png_alloc_failed |= ctx == NULL;
    return ctx;
}

/* libspng's error e in `what` of `name`: out of memory (DETFEED_ENOMEM)
 * when an allocation failed, else damaged data (DETFEED_ECORRUPT). */
static int png_error(detfeed_codec *c, const char *name, const char *what, int e)
{
    if (e == SPNG_EMEM || png_alloc_failed)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM,
                             "%s: out of memory while decoding the PNG (%s)", name,
                             what);
    return detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: %s: %s", name, what,
                         spng_strerror(e));
}

/* A libspng context over data[0, n), its IHDR read and validated. */
static int png_begin(detfeed_codec *c, const char *name, const uint8_t *data, size_t n,
                     spng_ctx **out, struct spng_ihdr *ihdr)
{
    spng_ctx *ctx = *out = png_ctx(0);
    if (ctx == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory", name);
    int e = spng_set_png_buffer(ctx, data, n);
    if (!e)
        e = spng_get_ihdr(ctx, ihdr);
    return e ? png_error(c, name, "PNG header", e) : DETFEED_OK;
}

int detfeed__png_header(detfeed_codec *c, const char *name, const uint8_t *head,
                        size_t n, uint32_t *w, uint32_t *h)
{
    spng_ctx *ctx;
    struct spng_ihdr ihdr = {0};
    int rc = png_begin(c, name, head, n, &ctx, &ihdr);
    spng_ctx_free(ctx);
    *w = ihdr.width;
    *h = ihdr.height;
    return rc;
}

int detfeed__png_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                        const detfeed__png_head *ph, uint32_t w, uint32_t h,
                        size_t bytes, uint8_t **out)
{
    /* The stream libspng decodes (see the top of this file). */
    size_t run = (size_t)(ph->idat_end - ph->idat_off);
    size_t n = 33 + ph->plte_size + run + sizeof png_iend;
    uint8_t *stream = malloc(n), *img = NULL;
    if (stream == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory (%zu bytes)",
                             name, n);
    memcpy(stream, data, 33);
    memcpy(stream + 33, ph->plte, ph->plte_size);
    memcpy(stream + 33 + ph->plte_size, data + ph->idat_off, run);
    memcpy(stream + n - sizeof png_iend, png_iend, sizeof png_iend);
    spng_ctx *ctx;
    struct spng_ihdr ihdr;
    size_t need = 0;
    int rc = png_begin(c, name, stream, n, &ctx, &ihdr);
    int e = 0;
    if (rc == DETFEED_OK &&
        ((e = spng_decoded_image_size(ctx, SPNG_FMT_RGB8, &need)) || need != bytes))
        rc = e ? png_error(c, name, "PNG", e)
               : detfeed__fail(&c->msg, DETFEED_ECORRUPT,
                               "%s: PNG: unexpected decoded size", name);
    if (rc == DETFEED_OK && (img = malloc(bytes)) == NULL)
        rc = detfeed__fail(&c->msg, DETFEED_ENOMEM,
                           "%s: out of memory for a %ux%u image", name, (unsigned)w,
                           (unsigned)h);
    /* RGB8: 16-bit samples reduced to the high byte, low depths scaled,
     * palette expanded; no alpha, tRNS, gamma or background. Then the rest
     * of the stream: trailing IDAT chunks and their CRCs. */
    if (rc == DETFEED_OK &&
        ((e = spng_decode_image(ctx, img, bytes, SPNG_FMT_RGB8, 0)) ||
         (e = spng_decode_chunks(ctx))))
        rc = png_error(c, name, "PNG data", e);
    spng_ctx_free(ctx);
    free(stream);
    if (rc != DETFEED_OK) {
        free(img);
        return rc;
    }
    swap_rb(img, (size_t)w * h);
    *out = img;
    return DETFEED_OK;
}

/* ------------------------------------------------------------------------ */
/* The exact reader and the writer                                          */
/* ------------------------------------------------------------------------ */

static const char *png_color_name(int color_type)
{
    switch (color_type) {
    case SPNG_COLOR_TYPE_GRAYSCALE:
        return "grayscale";
    case SPNG_COLOR_TYPE_TRUECOLOR:
        return "RGB";
    case SPNG_COLOR_TYPE_INDEXED:
        return "palette";
    case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA:
        return "grayscale+alpha";
    case SPNG_COLOR_TYPE_TRUECOLOR_ALPHA:
        return "RGBA";
    }
    return "unknown colour type";
}

/* Reads the header, applies the limits and the exact-8-bit rule. */
static int png_open(detfeed_codec *c, spng_ctx *ctx, const char *path,
                    const uint8_t *data, size_t size, struct spng_ihdr *ihdr)
{
    /* libspng's own width/height limits stay at their maximum: the limits
     * are checked below, with a message that names the declared size. */
    int e = spng_set_png_buffer(ctx, data, size);
    if (!e)
        e = spng_set_chunk_limits(ctx, 64u << 20, 64u << 20);
    if (!e)
        e = spng_get_ihdr(ctx, ihdr);
    if (e == SPNG_ESIGNATURE)
        return detfeed__fail(&c->msg, DETFEED_EFORMAT, "%s: not a PNG file", path);
    if (e)
        return png_error(c, path, "PNG header", e);
    int rc = detfeed__check_dims(&c->limits, path, ihdr->width, ihdr->height, &c->msg);
    if (rc != DETFEED_OK)
        return rc;
    if (ihdr->bit_depth != 8 || (ihdr->color_type != SPNG_COLOR_TYPE_GRAYSCALE &&
                                 ihdr->color_type != SPNG_COLOR_TYPE_TRUECOLOR))
        return detfeed__fail(&c->msg, DETFEED_EFORMAT,
                             "%s: PNG is %d-bit %s; only 8-bit grayscale or RGB "
                             "is read exactly",
                             path, ihdr->bit_depth, png_color_name(ihdr->color_type));
    return DETFEED_OK;
}

static int png_decode(detfeed_codec *c, spng_ctx *ctx, const char *path,
                      const struct spng_ihdr *ihdr, uint8_t **pixels)
{
    size_t need;
    int e = spng_decoded_image_size(ctx, SPNG_FMT_RGB8, &need);
    if (e)
        return png_error(c, path, "PNG", e);
    uint8_t *buf = malloc(need);
    if (buf == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory (%zu bytes)",
                             path, need);
    e = spng_decode_image(ctx, buf, need, SPNG_FMT_RGB8, 0);
    if (e) {
        free(buf);
        return png_error(c, path, "PNG data", e);
    }
    swap_rb(buf, (size_t)ihdr->width * ihdr->height);
    *pixels = buf;
    return DETFEED_OK;
}

int detfeed_codec_read_png(detfeed_codec *codec, const char *path, uint8_t **pixels,
                           int *width, int *height)
{
    if (codec == NULL)
        return DETFEED_EINVAL;
    if (path == NULL || pixels == NULL || width == NULL || height == NULL)
        return detfeed__fail(&codec->msg, DETFEED_EINVAL,
                             "read_png: %s: path, pixels, width and height are "
                             "required (not NULL)",
                             path ? path : "(no path)");
    detfeed__msg_clear(&codec->msg);
    *pixels = NULL;
    uint8_t *data;
    size_t size;
    int rc =
        detfeed__read_file(path, codec->limits.max_file, &data, &size, &codec->msg);
    if (rc != DETFEED_OK)
        return rc;
    spng_ctx *ctx = png_ctx(0);
    struct spng_ihdr ihdr;
    if (ctx == NULL)
        rc = detfeed__fail(&codec->msg, DETFEED_ENOMEM, "%s: out of memory", path);
    else
        rc = png_open(codec, ctx, path, data, size, &ihdr);
    if (rc == DETFEED_OK)
        rc = png_decode(codec, ctx, path, &ihdr, pixels);
    if (rc == DETFEED_OK) {
        *width = (int)ihdr.width;
        *height = (int)ihdr.height;
    }
    spng_ctx_free(ctx);
    free(data);
    return rc;
}

/* The image as tightly packed RGB rows, as the PNG encoder wants it. */
static uint8_t *pack_rgb(const uint8_t *pixels, size_t stride, int width, int height,
                         size_t *size)
{
    size_t row = (size_t)width * 3;
    if (!detfeed__mul_size(row, (size_t)height, size))
        return NULL;
    uint8_t *rgb = malloc(*size);
    if (rgb == NULL)
        return NULL;
    for (int y = 0; y < height; y++) {
        memcpy(rgb + (size_t)y * row, pixels + (size_t)y * stride, row);
        swap_rb(rgb + (size_t)y * row, (size_t)width);
    }
    return rgb;
}

int detfeed_codec_write_png(detfeed_codec *codec, const char *path,
                            const uint8_t *pixels, size_t stride, int width, int height)
{
    if (codec == NULL)
        return DETFEED_EINVAL;
    if (path == NULL || !detfeed__bgr_geometry_ok(pixels, stride, width, height))
        return detfeed__fail(&codec->msg, DETFEED_EINVAL,
                             "write_png: %s: a path and an image are required "
                             "(pixels not NULL, width %d and height %d > 0, stride "
                             "%zu >= 3 * width)",
                             path ? path : "(no path)", width, height, stride);
    detfeed__msg_clear(&codec->msg);
    size_t size;
    uint8_t *rgb = pack_rgb(pixels, stride, width, height, &size);
    if (rgb == NULL)
        return detfeed__fail(&codec->msg, DETFEED_ENOMEM,
                             "%s: out of memory for a %dx%d image", path, width,
                             height);
    char tmp[4200];
    FILE *fp = NULL;
    int n = snprintf(tmp, sizeof tmp, "%s.%ld.%llx.tmp", path, (long)getpid(),
                     (unsigned long long)(detfeed__now_ns() ^ (uintptr_t)rgb));
    int fd = n > 0 && (size_t)n < sizeof tmp
                 ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666)
                 : (errno = ENAMETOOLONG, -1);
    int open_errno = errno;
    if (fd >= 0 && (fp = fdopen(fd, "wb")) == NULL) {
        open_errno = errno;
        close(fd);
        unlink(tmp);
    }
    spng_ctx *ctx = fp ? spng_ctx_new(SPNG_CTX_ENCODER) : NULL;
    struct spng_ihdr ihdr = {.width = (uint32_t)width,
                             .height = (uint32_t)height,
                             .bit_depth = 8,
                             .color_type = SPNG_COLOR_TYPE_TRUECOLOR};
    int e = ctx ? spng_set_png_file(ctx, fp) : SPNG_EMEM;
    if (!e)
        e = spng_set_ihdr(ctx, &ihdr);
    if (!e)
        e = spng_encode_image(ctx, rgb, size, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
    spng_ctx_free(ctx);
    int closed = fp ? fclose(fp) : EOF;
    free(rgb);
    if (fp == NULL)
        return detfeed__fail(&codec->msg, DETFEED_EIO, "%s: cannot create: %s", path,
                             strerror(open_errno));
    if (!e && closed == 0 && rename(tmp, path) != 0)
        closed = errno;
    else if (e || closed != 0)
        closed = EIO;
    if (e || closed != 0) {
        unlink(tmp);
        return detfeed__fail(&codec->msg, DETFEED_EIO, "%s: PNG write failed: %s", path,
                             e ? spng_strerror(e) : strerror(closed));
    }
    return DETFEED_OK;
}
