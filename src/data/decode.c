/*
 * decode.c - JPEG and PNG decoding with cv2.imdecode(IMREAD_COLOR) semantics.
 */
#include "data_internal.h"

int detfeed_codec_decode(detfeed_codec *codec, const void *data, size_t size,
                         const char *name, uint8_t **pixels, int *width, int *height)
{
    (void)codec;
    (void)data;
    (void)size;
    (void)name;
    (void)pixels;
    (void)width;
    (void)height;
    return DETFEED_ENOTSUPPORTED;
}
