/*
 * codec.c - the detfeed_codec handle: limits, messages, PNG read and write.
 */
#include "data_internal.h"

#include <errno.h>
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int detfeed_codec_create(detfeed_codec **out, uint32_t flags)
{
    if (out == NULL)
        return DETFEED_EINVAL;
    *out = NULL;
    if (flags != 0)
        return DETFEED_EINVAL;
    detfeed_codec *c = calloc(1, sizeof *c);
    if (c == NULL)
        return DETFEED_ENOMEM;
    detfeed__limits_default(&c->limits);
    *out = c;
    return DETFEED_OK;
}

void detfeed_codec_destroy(detfeed_codec *codec)
{
    if (codec == NULL)
        return;
    detfeed__decode_release(codec);
    free(codec);
}

const char *detfeed_codec_last_error(const detfeed_codec *codec)
{
    return codec ? codec->msg.text : "no codec";
}

void detfeed__limits_default(detfeed__limits *lim)
{
    *lim = (detfeed__limits){.max_width = 32768,
                             .max_height = 32768,
                             .max_pixels = DETFEED_DEFAULT_MAX_PIXELS,
                             .max_file = 1ull << 30,
                             .max_image_bytes = DETFEED_DEFAULT_MAX_IMAGE_BYTES};
}

int detfeed__limits_set(detfeed__limits *lim, detfeed_codec_limit limit, uint64_t value)
{
    uint64_t *slots[] = {&lim->max_width, &lim->max_height, &lim->max_pixels,
                         &lim->max_file, &lim->max_image_bytes};
    if (value == 0 || (unsigned)limit >= sizeof slots / sizeof slots[0])
        return DETFEED_EINVAL;
    *slots[limit] = value;
    return DETFEED_OK;
}

int detfeed_codec_set_limit(detfeed_codec *codec, detfeed_codec_limit limit,
                            uint64_t value)
{
    return codec ? detfeed__limits_set(&codec->limits, limit, value) : DETFEED_EINVAL;
}

const char *detfeed__limit_name(detfeed_codec_limit limit)
{
    static const char *const names[] = {"max_width", "max_height", "max_pixels",
                                        "max_file", "max_image_bytes"};
    return (unsigned)limit < sizeof names / sizeof names[0] ? names[limit] : "?";
}

/* The message of an image over `limit`: the file, its size, the limit's
 * name and value. */
static int over_limit(detfeed__msg *msg, const char *path, uint64_t width,
                      uint64_t height, detfeed_codec_limit limit, uint64_t value,
                      const char *what, uint64_t amount)
{
    return detfeed__fail(msg, DETFEED_ELIMIT,
                         "%s: %llux%llu (%llu %s) exceeds the image size limit %s = "
                         "%llu",
                         path, (unsigned long long)width, (unsigned long long)height,
                         (unsigned long long)amount, what, detfeed__limit_name(limit),
                         (unsigned long long)value);
}

int detfeed__check_dims(const detfeed__limits *lim, const char *path, uint64_t width,
                        uint64_t height, detfeed__msg *msg)
{
    if (width == 0 || height == 0)
        return detfeed__fail(msg, DETFEED_ECORRUPT, "%s: image is empty (%llux%llu)",
                             path, (unsigned long long)width,
                             (unsigned long long)height);
    /* width, height < 2^32 (the formats' fields): the products fit */
    uint64_t pixels = width * height;
    if (width > lim->max_width)
        return over_limit(msg, path, width, height, DETFEED_LIMIT_MAX_WIDTH,
                          lim->max_width, "pixels wide", width);
    if (height > lim->max_height)
        return over_limit(msg, path, width, height, DETFEED_LIMIT_MAX_HEIGHT,
                          lim->max_height, "pixels high", height);
    if (pixels > lim->max_pixels)
        return over_limit(msg, path, width, height, DETFEED_LIMIT_MAX_PIXELS,
                          lim->max_pixels, "pixels", pixels);
    if (pixels > lim->max_image_bytes / 3)
        return over_limit(msg, path, width, height, DETFEED_LIMIT_MAX_IMAGE_BYTES,
                          lim->max_image_bytes, "bytes decoded", pixels * 3);
    return DETFEED_OK;
}

int detfeed__decode_file_limited(detfeed_codec *codec, const detfeed__limits *lim,
                                 const char *path, uint8_t **pixels, int *width,
                                 int *height)
{
    if (codec == NULL || lim == NULL)
        return DETFEED_EINVAL;
    detfeed__limits own = codec->limits;
    codec->limits = *lim;
    int rc = detfeed_codec_decode_file(codec, path, pixels, width, height);
    codec->limits = own;
    return rc;
}

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
        return detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: PNG header: %s", path,
                             spng_strerror(e));
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
        return detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: PNG: %s", path,
                             spng_strerror(e));
    uint8_t *buf = malloc(need);
    if (buf == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory (%zu bytes)",
                             path, need);
    e = spng_decode_image(ctx, buf, need, SPNG_FMT_RGB8, 0);
    if (e) {
        free(buf);
        return detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: PNG data: %s", path,
                             spng_strerror(e));
    }
    detfeed__swap_rb(buf, (size_t)ihdr->width * ihdr->height);
    *pixels = buf;
    return DETFEED_OK;
}

int detfeed_codec_read_png(detfeed_codec *codec, const char *path, uint8_t **pixels,
                           int *width, int *height)
{
    if (codec == NULL || path == NULL || pixels == NULL || width == NULL ||
        height == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&codec->msg);
    *pixels = NULL;
    uint8_t *data;
    size_t size;
    int rc =
        detfeed__read_file(path, codec->limits.max_file, &data, &size, &codec->msg);
    if (rc != DETFEED_OK)
        return rc;
    spng_ctx *ctx = spng_ctx_new(0);
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
        detfeed__swap_rb(rgb + (size_t)y * row, (size_t)width);
    }
    return rgb;
}

int detfeed_codec_write_png(detfeed_codec *codec, const char *path,
                            const uint8_t *pixels, size_t stride, int width, int height)
{
    if (codec == NULL || path == NULL ||
        !detfeed__bgr_geometry_ok(pixels, stride, width, height))
        return DETFEED_EINVAL;
    detfeed__msg_clear(&codec->msg);
    size_t size;
    uint8_t *rgb = pack_rgb(pixels, stride, width, height, &size);
    if (rgb == NULL)
        return detfeed__fail(&codec->msg, DETFEED_ENOMEM,
                             "%s: out of memory for a %dx%d image", path, width,
                             height);
    FILE *fp = fopen(path, "wb");
    int open_errno = errno;
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
    if (e || closed != 0)
        return detfeed__fail(&codec->msg, DETFEED_EIO, "%s: PNG write failed: %s", path,
                             e ? spng_strerror(e) : "close failed");
    return DETFEED_OK;
}
