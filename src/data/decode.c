/*
 * decode.c - decoding with cv2.imdecode(IMREAD_COLOR) semantics: the entry
 * points, the format by its signature, the limits, and the orientation
 * applied to what jpeg.c or png.c decoded.
 *
 * What OpenCV 4.6 does, and so what these files do (each point measured
 * against cv2 by tests/oracle/test_decode_oracle.py): jpeg.c and png.c say
 * how each format is read and where its EXIF orientation comes from;
 * exif.c reads and applies it. The sizes checked against the limits are the
 * stored ones, before any allocation; the size returned is the oriented one.
 */
#include "avif_internal.h"
#include "decode_internal.h"
#include "heif_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum {
    FMT_NONE,
    FMT_JPEG,
    FMT_PNG,
    FMT_BMP,
    FMT_WEBP,
    FMT_TIFF,
    FMT_JP2,
    FMT_AVIF,
    FMT_HEIF
} img_format;

static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

static img_format sniff(const uint8_t *p, uint64_t n)
{
    /* The signatures OpenCV's decoders check: FF D8 FF and the PNG one. */
    if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff)
        return FMT_JPEG;
    if (n >= 8 && memcmp(p, png_magic, 8) == 0)
        return FMT_PNG;
    if (n >= 2 && p[0] == 'B' && p[1] == 'M')
        return FMT_BMP;
    if (detfeed__webp_sniff(p, n))
        return FMT_WEBP;
    if (detfeed__tiff_sniff(p, n))
        return FMT_TIFF;
    if (detfeed__jp2_sniff(p, n))
        return FMT_JP2;
    if (detfeed__avif_sniff(p, n))
        return FMT_AVIF;
    if (detfeed__heif_sniff(p, n))
        return FMT_HEIF;
    return FMT_NONE;
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

/* The decoded image (BGR, as stored) oriented into the caller's hands. */
static int finish(detfeed_codec *c, const char *name, uint8_t *img, uint32_t w,
                  uint32_t h, int orientation, uint8_t **pixels, int *width,
                  int *height)
{
    if (!detfeed__orient(&img, w, h, orientation)) {
        free(img);
        return detfeed__fail(&c->msg, DETFEED_ENOMEM,
                             "%s: out of memory to orient a %ux%u image", name,
                             (unsigned)w, (unsigned)h);
    }
    *pixels = img;
    detfeed__oriented_size(w, h, orientation, width, height);
    return DETFEED_OK;
}

static int decode_jpeg(detfeed_codec *c, const char *name, const uint8_t *data,
                       size_t size, uint8_t **pixels, int *width, int *height)
{
    detfeed__src s = {.mem = data, .size = size, .fd = -1};
    detfeed__jpeg_head jh;
    detfeed__jpeg_scan(&s, &jh);
    uint32_t w, h;
    size_t bytes = 0;
    uint8_t *img;
    int rc = detfeed__jpeg_header(c, name, data, size, &jh, &w, &h);
    if (rc == DETFEED_OK)
        rc = check_size(c, name, w, h, &bytes);
    if (rc == DETFEED_OK)
        rc = detfeed__jpeg_decode(c, name, data, size, w, h, bytes, &img);
    if (rc != DETFEED_OK)
        return rc;
    return finish(c, name, img, w, h, jh.orientation, pixels, width, height);
}

static int decode_png(detfeed_codec *c, const char *name, const uint8_t *data,
                      size_t size, uint8_t **pixels, int *width, int *height)
{
    detfeed__src s = {.mem = data, .size = size, .fd = -1};
    detfeed__png_head ph;
    uint32_t w, h;
    size_t bytes = 0;
    uint8_t *img;
    int rc = detfeed__png_header(c, name, data, size < 33 ? size : 33, &w, &h);
    if (rc == DETFEED_OK)
        rc = check_size(c, name, w, h, &bytes);
    if (rc == DETFEED_OK)
        rc = detfeed__png_scan(c, name, &s, &ph);
    if (rc == DETFEED_OK)
        rc = detfeed__png_decode(c, name, data, &ph, w, h, bytes, &img);
    if (rc != DETFEED_OK)
        return rc;
    return finish(c, name, img, w, h, ph.orientation, pixels, width, height);
}

static int decode_bmp(detfeed_codec *c, const char *name, const uint8_t *data,
                      size_t size, uint8_t **pixels, int *width, int *height)
{
    detfeed__src s = {.mem = data, .size = size, .fd = -1};
    detfeed__bmp_head bh;
    size_t bytes = 0;
    uint8_t *img;
    int rc = detfeed__bmp_header(c, name, &s, &bh);
    if (rc == DETFEED_OK)
        rc = check_size(c, name, bh.width, bh.height, &bytes);
    if (rc == DETFEED_OK)
        rc = detfeed__bmp_decode(c, name, data, size, &bh, bytes, &img);
    if (rc != DETFEED_OK)
        return rc;
    return finish(c, name, img, bh.width, bh.height, 1, pixels, width, height);
}

static int decode_webp(detfeed_codec *c, const char *name, const uint8_t *data,
                       size_t size, uint8_t **pixels, int *width, int *height)
{
    detfeed__webp_head wh;
    size_t bytes = 0;
    uint8_t *img;
    int rc = detfeed__webp_header(c, name, data, size, &wh);
    if (rc == DETFEED_OK)
        rc = check_size(c, name, wh.width, wh.height, &bytes);
    if (rc == DETFEED_OK)
        rc = detfeed__webp_decode(c, name, data, size, &wh, bytes, &img);
    if (rc != DETFEED_OK)
        return rc;
    return finish(c, name, img, wh.width, wh.height, wh.orientation, pixels, width,
                  height);
}

/* A decoder that checks the limits itself and gives the image oriented
 * (TIFF, JPEG 2000). */
typedef int (*whole_decoder)(detfeed_codec *c, const char *name, const uint8_t *data,
                             size_t size, uint8_t **out, uint32_t *w, uint32_t *h);

static int decode_whole(detfeed_codec *c, whole_decoder decode, const char *name,
                        const uint8_t *data, size_t size, uint8_t **pixels, int *width,
                        int *height)
{
    uint8_t *img;
    uint32_t w, h;
    int rc = decode(c, name, data, size, &img, &w, &h);
    if (rc != DETFEED_OK)
        return rc;
    return finish(c, name, img, w, h, 1, pixels, width, height); /* oriented */
}

static int decode_avif(detfeed_codec *c, const char *name, const uint8_t *data,
                       size_t size, uint8_t **pixels, int *width, int *height)
{
    detfeed__avif_image a;
    int rc = detfeed__avif_decode(c, name, data, size, &a);
    if (rc != DETFEED_OK)
        return rc;
    return finish(c, name, a.pixels, a.width, a.height, a.orientation, pixels, width,
                  height);
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */
/* ------------------------------------------------------------------------ */

void detfeed__decode_release(detfeed_codec *c)
{
    detfeed__jpeg_release(c);
}

static int not_image(detfeed_codec *c, const char *name)
{
    return detfeed__fail(&c->msg, DETFEED_EFORMAT,
                         "%s: not an image of a format detfeed reads (JPEG, PNG, BMP, "
                         "WebP, TIFF, JPEG 2000, AVIF, HEIF)",
                         name);
}

/* A .heic or .heif, or a HEIF under any name: Ultralytics' imread reads a
 * .heic or .heif with Pillow (pi-heif for HEIF), which heif.c reproduces
 * for HEIF only, not Pillow's other decoders; any other name goes to
 * cv2.imdecode, which reads no HEIF (none of the OpenCV builds detfeed
 * follows has a HEIF decoder). */
static bool pillow_route(img_format f, const char *name)
{
    return f == FMT_HEIF || detfeed__heif_name(name);
}

/* The refusal of what pillow_route sends elsewhere than heif.c. */
static int pillow_refusal(detfeed_codec *c, img_format f, const char *name)
{
    if (f == FMT_HEIF)
        return detfeed__fail(
            &c->msg, DETFEED_EFORMAT,
            "%s: a HEIF image under a name other than .heic or .heif, "
            "which Ultralytics reads with cv2.imdecode, and OpenCV reads "
            "no HEIF",
            name);
    if (f == FMT_NONE)
        return not_image(c, name);
    return detfeed__fail(
        &c->msg, DETFEED_ENOTSUPPORTED,
        "%s: a .heic or .heif holding another format (Ultralytics reads "
        "it with Pillow, which detfeed does not reproduce)",
        name);
}

bool detfeed__pillow_other(const char *suffix, const uint8_t *head, uint64_t n)
{
    img_format own = strcmp(suffix, "avif") == 0   ? FMT_AVIF
                     : strcmp(suffix, "heic") == 0 ? FMT_HEIF
                     : strcmp(suffix, "heif") == 0 ? FMT_HEIF
                                                   : FMT_NONE;
    img_format f = own == FMT_NONE ? FMT_NONE : sniff(head, n);
    return f != FMT_NONE && f != own;
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
    img_format f = sniff(data, size);
    if (detfeed__avif_named(name) && f != FMT_AVIF)
        return detfeed__avif_foreign(codec, name);
    if (pillow_route(f, name))
        return f == FMT_HEIF && detfeed__heif_name(name)
                   ? decode_whole(codec, detfeed__heif_decode, name, data, size, pixels,
                                  width, height)
                   : pillow_refusal(codec, f, name);
    switch (f) {
    case FMT_JPEG:
        return decode_jpeg(codec, name, data, size, pixels, width, height);
    case FMT_PNG:
        return decode_png(codec, name, data, size, pixels, width, height);
    case FMT_BMP:
        return decode_bmp(codec, name, data, size, pixels, width, height);
    case FMT_WEBP:
        return decode_webp(codec, name, data, size, pixels, width, height);
    case FMT_TIFF:
        return decode_whole(codec, detfeed__tiff_decode, name, data, size, pixels,
                            width, height);
    case FMT_JP2:
        return decode_whole(codec, detfeed__jp2_decode, name, data, size, pixels, width,
                            height);
    case FMT_AVIF:
        return decode_avif(codec, name, data, size, pixels, width, height);
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
static int probe_open(detfeed_codec *c, const char *path, detfeed__src *s)
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
static int probe_src(detfeed_codec *c, const char *path, detfeed__src *s, uint32_t *w,
                     uint32_t *h, int *o)
{
    /* an AVIF's compatible brands may run past 32 bytes */
    uint64_t want = detfeed__avif_named(path) ? 4096 : 32;
    uint64_t head = s->size < want ? s->size : want;
    const uint8_t *q = detfeed__src_at(s, 0, head);
    if (q == NULL)
        goto io;
    img_format f = sniff(q, head);
    if (detfeed__avif_named(path) && f != FMT_AVIF)
        return detfeed__avif_foreign(c, path);
    if (pillow_route(f, path)) {
        if (f != FMT_HEIF || !detfeed__heif_name(path))
            return pillow_refusal(c, f, path);
        if ((q = detfeed__src_at(s, 0, s->size)) == NULL)
            goto io;
        return detfeed__heif_probe(c, path, q, (size_t)s->size, w, h);
    }
    if (f == FMT_JPEG) {
        detfeed__jpeg_head jh;
        detfeed__jpeg_scan(s, &jh);
        if (s->io_errno)
            goto io;
        /* The header as far as the SOS segment (the whole file when the
         * walk did not reach it, for libjpeg's account of why). */
        uint64_t n = jh.end ? jh.end : s->size;
        if ((q = detfeed__src_at(s, 0, n)) == NULL)
            goto io;
        *o = jh.orientation;
        return detfeed__jpeg_header(c, path, q, n, &jh, w, h);
    }
    if (f == FMT_PNG) {
        detfeed__png_head ph;
        size_t bytes;
        uint64_t n = s->size < 33 ? s->size : 33;
        if ((q = detfeed__src_at(s, 0, n)) == NULL)
            goto io;
        int rc = detfeed__png_header(c, path, q, (size_t)n, w, h);
        if (rc == DETFEED_OK)
            rc = check_size(c, path, *w, *h, &bytes);
        if (rc == DETFEED_OK)
            rc = detfeed__png_scan(c, path, s, &ph);
        if (rc == DETFEED_OK)
            *o = ph.orientation;
        return rc;
    }
    if (f == FMT_WEBP) { /* the whole file: the EXIF chunk may be anywhere */
        detfeed__webp_head wh;
        if ((q = detfeed__src_at(s, 0, s->size)) == NULL)
            goto io;
        int rc = detfeed__webp_header(c, path, q, (size_t)s->size, &wh);
        *w = wh.width, *h = wh.height, *o = wh.orientation;
        return rc;
    }
    if (f == FMT_TIFF || f == FMT_JP2) { /* the whole file: a directory or
                                            box may be anywhere */
        if ((q = detfeed__src_at(s, 0, s->size)) == NULL)
            goto io;
        return f == FMT_TIFF ? detfeed__tiff_probe(c, path, q, (size_t)s->size, w, h)
                             : detfeed__jp2_probe(c, path, q, (size_t)s->size, w, h);
    }
    if (f == FMT_AVIF) { /* the whole file: the boxes may be anywhere */
        if ((q = detfeed__src_at(s, 0, s->size)) == NULL)
            goto io;
        return detfeed__avif_probe(c, path, q, (size_t)s->size, w, h, o);
    }
    if (f == FMT_BMP) {
        detfeed__bmp_head bh;
        int rc = detfeed__bmp_header(c, path, s, &bh);
        if (rc == DETFEED_OK)
            rc = detfeed__bmp_check_size(c, path, s->size, &bh);
        *w = bh.width, *h = bh.height;
        return rc;
    }
    return not_image(c, path);
io:
    return detfeed__src_fail(c, path, s);
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
    detfeed__src s = {.fd = -1};
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
        detfeed__oriented_size(w, h, o, width, height);
    return rc;
}
