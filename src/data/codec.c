/*
 * codec.c - the detfeed_codec handle: its limits, its message, its
 * decoder state; decoding itself is decode.c's.
 */
#include "data_internal.h"

#include <stdlib.h>

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

int detfeed_codec_set_limit(detfeed_codec *codec, detfeed_codec_limit limit,
                            uint64_t value)
{
    if (codec == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&codec->msg);
    if (detfeed__limits_set(&codec->limits, limit, value) == DETFEED_OK)
        return DETFEED_OK;
    const char *name = detfeed__limit_name(limit);
    if (name == NULL)
        return detfeed__fail(&codec->msg, DETFEED_EINVAL,
                             "limit %d is not a codec limit (max_width, max_height, "
                             "max_pixels, max_file, max_image_bytes: 0 to 4)",
                             (int)limit);
    return detfeed__fail(&codec->msg, DETFEED_EINVAL,
                         "%s: %llu is not a limit it accepts (an integer >= 1)", name,
                         (unsigned long long)value);
}

int detfeed_codec_set_opencv(detfeed_codec *codec, detfeed_cv_version version)
{
    if (codec == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&codec->msg);
    if ((unsigned)version > DETFEED_CV_4_DEBIAN)
        return detfeed__fail(&codec->msg, DETFEED_EINVAL,
                             "opencv: %d is not a detfeed_cv_version (0 to 3)",
                             (int)version);
    codec->limits.opencv = (int)version;
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
