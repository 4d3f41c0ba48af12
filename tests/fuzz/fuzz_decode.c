/*
 * fuzz_decode.c - libFuzzer target for the image decoding wrapper (JPEG,
 * PNG, BMP, WebP, TIFF, JPEG 2000, AVIF, HEIF, with EXIF orientation), under small
 * limits so that huge declared sizes are refused rather than allocated. An input that
 * starts like a TIFF is decoded a second time as a *.tif file (Ultralytics' imread:
 * every page read), with the OpenCV stack its length picks; one with an ISOBMFF ftyp
 * box as a *.avif file (Pillow's reading, libavif) and as a *.heic file (libheif).
 */
#include "detfeed_img.h"

#include <stdint.h>
#include <string.h>

static void decode(detfeed_codec *codec, const uint8_t *data, size_t size,
                   const char *name)
{
    uint8_t *px = NULL;
    int w, h;
    if (detfeed_codec_decode(codec, data, size, name, &px, &w, &h) == DETFEED_OK) {
        volatile uint8_t sink = px[(size_t)w * (size_t)h * 3 - 1];
        (void)sink;
    }
    detfeed_free(px);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    detfeed_codec *codec;
    if (detfeed_codec_create(&codec, 0) != DETFEED_OK)
        return 0;
    detfeed_codec_set_limit(codec, DETFEED_LIMIT_MAX_PIXELS, 1u << 22);
    decode(codec, data, size, "fuzz");
    if (size >= 4 && (data[0] == 'I' || data[0] == 'M')) {
        detfeed_codec_set_opencv(codec, (detfeed_cv_version)(size % 4));
        decode(codec, data, size, "fuzz.tif");
    }
    if (size >= 8 && memcmp(data + 4, "ftyp", 4) == 0) {
        decode(codec, data, size, "fuzz.avif");
        decode(codec, data, size, "fuzz.heic");
    }
    detfeed_codec_destroy(codec);
    return 0;
}
