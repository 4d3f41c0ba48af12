/*
 * webp.c - WebP as OpenCV's decoder reads it with IMREAD_COLOR, through
 * libwebp and libwebpdemux (the bytes are libwebp's on every reference
 * stack: Debian's 1.2.4 and the wheels' own builds decode alike, measured
 * by tests/oracle/test_formats_oracle.py):
 *
 * - a file is WebP when libwebp reads its features from its first 32 bytes
 *   (shorter files are no WebP); the size is the features' (the canvas).
 * - a still image: libwebp's BGR (with alpha: BGRA, alpha dropped).
 * - an animation: refused by OpenCV 4.6; 4.12 and later give the first
 *   frame as libwebp's animation decoder composes it (BGRA on a
 *   transparent black canvas, alpha dropped).
 * - EXIF orientation (the EXIF chunk): applied by OpenCV 5.0 and later,
 *   ignored before.
 */
#include "decode_internal.h"

#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>

enum { WEBP_SIGNATURE = 32 };

bool detfeed__webp_sniff(const uint8_t *p, uint64_t n)
{
    WebPBitstreamFeatures f;
    return n >= WEBP_SIGNATURE &&
           WebPGetFeatures(p, WEBP_SIGNATURE, &f) == VP8_STATUS_OK;
}

/* The orientation of the EXIF chunk, as OpenCV 5 reads it; 1 without. */
static int exif_of(const uint8_t *data, size_t size)
{
    WebPData wd = {.bytes = data, .size = size};
    WebPDemuxer *demux = WebPDemux(&wd);
    WebPChunkIterator it;
    int o = 1;
    if (demux && WebPDemuxGetChunk(demux, "EXIF", 1, &it)) {
        o = detfeed__exif_orientation(it.chunk.bytes, it.chunk.size);
        WebPDemuxReleaseChunkIterator(&it);
    }
    WebPDemuxDelete(demux);
    return o;
}

int detfeed__webp_header(detfeed_codec *c, const char *name, const uint8_t *data,
                         size_t size, detfeed__webp_head *h)
{
    WebPBitstreamFeatures f;
    memset(h, 0, sizeof *h);
    if (size < WEBP_SIGNATURE ||
        WebPGetFeatures(data, WEBP_SIGNATURE, &f) != VP8_STATUS_OK)
        return detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: WebP header: unreadable",
                             name);
    if (f.has_animation && c->limits.opencv == DETFEED_CV_4_DEBIAN)
        return detfeed__fail(&c->msg, DETFEED_EFORMAT,
                             "%s: an animated WebP, which OpenCV 4.6 does not read",
                             name);
    *h = (detfeed__webp_head){.width = (uint32_t)f.width,
                              .height = (uint32_t)f.height,
                              .alpha = f.has_alpha != 0,
                              .animation = f.has_animation != 0,
                              .orientation = 1};
    if (c->limits.opencv == DETFEED_CV_5_0 || c->limits.opencv == DETFEED_CV_5_1)
        h->orientation = exif_of(data, size);
    return DETFEED_OK;
}

/* BGRA rows (stride w * 4) into BGR. */
static void drop_alpha(const uint8_t *bgra, uint8_t *bgr, size_t pixels)
{
    for (size_t k = 0; k < pixels; k++)
        memcpy(bgr + 3 * k, bgra + 4 * k, 3);
}

/* The first frame of an animation as libwebp composes it. */
static bool first_frame(const uint8_t *data, size_t size, const detfeed__webp_head *h,
                        uint8_t *img)
{
    WebPAnimDecoderOptions opt;
    if (!WebPAnimDecoderOptionsInit(&opt))
        return false;
    opt.color_mode = MODE_BGRA;
    WebPData wd = {.bytes = data, .size = size};
    WebPAnimDecoder *dec = WebPAnimDecoderNew(&wd, &opt);
    WebPAnimInfo info;
    uint8_t *frame;
    int ts;
    bool ok = dec && WebPAnimDecoderGetInfo(dec, &info) &&
              info.canvas_width == h->width && info.canvas_height == h->height &&
              WebPAnimDecoderGetNext(dec, &frame, &ts);
    if (ok)
        drop_alpha(frame, img, (size_t)h->width * h->height);
    WebPAnimDecoderDelete(dec);
    return ok;
}

/* A still image into `dst` (rows of `stride` bytes) as BGR or BGRA: libwebp's
 * status (VP8_STATUS_OUT_OF_MEMORY is its allocations'). */
static VP8StatusCode still(const uint8_t *data, size_t size, WEBP_CSP_MODE mode,
                           uint8_t *dst, size_t bytes, int stride)
{
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config))
        return VP8_STATUS_INVALID_PARAM;
    config.output.colorspace = mode;
    config.output.is_external_memory = 1;
    config.output.u.RGBA =
        (WebPRGBABuffer){.rgba = dst, .stride = stride, .size = bytes};
    VP8StatusCode st = WebPDecode(data, size, &config);
    WebPFreeDecBuffer(&config.output);
    return st;
}

int detfeed__webp_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                         size_t size, const detfeed__webp_head *h, size_t bytes,
                         uint8_t **out)
{
    size_t pixels = (size_t)h->width * h->height;
    uint8_t *img = malloc(bytes), *bgra = NULL;
    VP8StatusCode st = VP8_STATUS_OUT_OF_MEMORY;
    if (img && h->animation) {
        st = first_frame(data, size, h, img) ? VP8_STATUS_OK
                                             : VP8_STATUS_BITSTREAM_ERROR;
    } else if (img && h->alpha && (bgra = malloc(pixels * 4)) != NULL) {
        st = still(data, size, MODE_BGRA, bgra, pixels * 4, (int)h->width * 4);
        if (st == VP8_STATUS_OK)
            drop_alpha(bgra, img, pixels);
    } else if (img && !h->alpha) {
        st = still(data, size, MODE_BGR, img, bytes, (int)h->width * 3);
    }
    free(bgra);
    if (st != VP8_STATUS_OK) {
        free(img);
        return st == VP8_STATUS_OUT_OF_MEMORY
                   ? detfeed__fail(&c->msg, DETFEED_ENOMEM,
                                   "%s: out of memory while decoding the WebP", name)
                   : detfeed__fail(
                         &c->msg, DETFEED_ECORRUPT,
                         "%s: WebP data: libwebp cannot decode it (status %d)", name,
                         (int)st);
    }
    *out = img;
    return DETFEED_OK;
}
