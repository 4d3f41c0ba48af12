/*
 * fuzz_decode.c - libFuzzer target for the image decoding wrapper (JPEG and
 * PNG with EXIF orientation), under small limits so that huge declared
 * sizes are refused rather than allocated.
 */
#include "detfeed_img.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    detfeed_codec *codec;
    if (detfeed_codec_create(&codec, 0) != DETFEED_OK)
        return 0;
    detfeed_codec_set_limit(codec, DETFEED_LIMIT_MAX_PIXELS, 1u << 22);
    uint8_t *px = NULL;
    int w, h;
    if (detfeed_codec_decode(codec, data, size, "fuzz", &px, &w, &h) == DETFEED_OK) {
        volatile uint8_t sink = px[(size_t)w * (size_t)h * 3 - 1];
        (void)sink;
    }
    detfeed_free(px);
    detfeed_codec_destroy(codec);
    return 0;
}
