/*
 * limits.c - the limits a codec applies to untrusted input
 * (detfeed_codec_limit): defaults, setting one, and the check of an
 * image's declared size against them.
 */
#include "data_internal.h"

void detfeed__limits_default(detfeed__limits *lim)
{
    *lim = (detfeed__limits){.max_width = DETFEED_DEFAULT_MAX_WIDTH,
                             .max_height = DETFEED_DEFAULT_MAX_HEIGHT,
                             .max_pixels = DETFEED_DEFAULT_MAX_PIXELS,
                             .max_file = DETFEED_DEFAULT_MAX_FILE,
                             .max_image_bytes = DETFEED_DEFAULT_MAX_IMAGE_BYTES,
                             .opencv = DETFEED_CV_5_1};
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

const char *detfeed__limit_name(detfeed_codec_limit limit)
{
    static const char *const names[] = {"max_width", "max_height", "max_pixels",
                                        "max_file", "max_image_bytes"};
    return (unsigned)limit < sizeof names / sizeof names[0] ? names[limit] : NULL;
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
