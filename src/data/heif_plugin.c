/*
 * heif_plugin.c - a libheif HEVC decoder plugin (libde265) that hands
 * libheif the decoded planes untouched by colour conversion.
 *
 * libheif 1.15 converts what its decoder plugin gives as YCbCr to RGB
 * before applying the grid, irot, imir and clap; pi-heif's libheif 1.23
 * applies them to the YCbCr planes and converts afterwards, with other
 * arithmetic. This plugin gives the planes as planar RGB (4:4:4), which
 * libheif leaves as they are: G holds Y, B holds Cb and R holds Cr, each
 * chroma sample repeated over the 2x2 (4:2:0) or 2x1 (4:2:2) pixels it
 * covers, at the stream's bit depth; monochrome stays monochrome. The
 * conversions detfeed reproduces all take the chroma sample of a pixel by
 * nearest neighbour, so libheif's grid and transformations on these planes
 * give what they give on the subsampled ones wherever heif_boxes.c lets a
 * file through (even sizes and offsets where chroma is subsampled). The
 * stream's colour description (its VUI) goes with the image as libheif's
 * own plugin sets it.
 *
 * The stream's colour description (its VUI) is also kept for the caller:
 * libheif 1.15 loses it with a grid's canvas or a crop, where libheif 1.23
 * keeps that of the coded image (a grid's first tile). libheif hands a
 * plugin no pointer of the caller's, so it is kept per thread, for the
 * first picture decoded since detfeed__heif_vui_reset (heif.c decodes with
 * libheif's own threads off, tiles in order, the alpha image last).
 *
 * libheif 1.15 decodes a grid's tiles with its preferred HEVC plugin
 * whatever the decode named, so the plugin is registered (once per
 * process) above libheif's own libde265 plugin, and gives the planes only
 * to detfeed's decodes on the calling thread (between
 * detfeed__heif_plugin_begin and _end, with libheif's own threads off);
 * any other decode in the process gets YCbCr planes as libheif's libde265
 * plugin gives them.
 */
#include "heif_internal.h"

#include <libde265/de265.h>
#include <libheif/heif.h>
#include <libheif/heif_plugin.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct plugin_decoder {
    de265_decoder_context *ctx;
} plugin_decoder;

static const char *plugin_name(void)
{
    return "detfeed planes (libde265)";
}

static void plugin_init(void)
{
    de265_init();
}

static void plugin_deinit(void)
{
    de265_free();
}

static int plugin_supports(enum heif_compression_format format)
{
    return format == heif_compression_HEVC ? 150 : 0; /* above libheif's own (100) */
}

static struct heif_error ok_error(void)
{
    return (struct heif_error){heif_error_Ok, heif_suberror_Unspecified, "Success"};
}

static struct heif_error plugin_error(const char *what)
{
    return (struct heif_error){heif_error_Decoder_plugin_error,
                               heif_suberror_Unspecified, what};
}

/* Whether this thread is in a detfeed decode, and the colour description
 * of its first picture. */
static _Thread_local struct {
    bool planes, seen;
    detfeed__heif_nclx nclx;
} first_vui;

void detfeed__heif_plugin_begin(void)
{
    first_vui.planes = true;
    first_vui.seen = false;
}

void detfeed__heif_plugin_end(void)
{
    first_vui.planes = false;
}

static struct heif_error plugin_new(void **out)
{
    plugin_decoder *d = calloc(1, sizeof *d);
    if (d == NULL)
        return (struct heif_error){heif_error_Memory_allocation_error,
                                   heif_suberror_Unspecified, "out of memory"};
    if ((d->ctx = de265_new_decoder()) == NULL) {
        free(d);
        return plugin_error("libde265 could not start");
    }
    *out = d;
    return ok_error();
}

static void plugin_free(void *raw)
{
    plugin_decoder *d = raw;
    de265_free_decoder(d->ctx);
    free(d);
}

/* The NAL units of an item, each after its 4-byte size. */
static struct heif_error plugin_push(void *raw, const void *data, size_t size)
{
    plugin_decoder *d = raw;
    const uint8_t *p = data;
    for (size_t at = 0; at < size;) {
        if (size - at < 4)
            return plugin_error("a NAL unit's size cut short");
        uint32_t n = detfeed__be32(p + at);
        at += 4;
        if (n > size - at)
            return plugin_error("a NAL unit cut short");
        if (de265_push_NAL(d->ctx, p + at, (int)n, 0, NULL) != DE265_OK)
            return plugin_error("libde265 refused a NAL unit");
        at += n;
    }
    return ok_error();
}

/* Plane `c` of `img` (0 Y, 1 Cb, 2 Cr) into the w x h plane `ch` of out,
 * each sample repeated over the pixels it covers. */
static bool copy_plane(const struct de265_image *img, int c, struct heif_image *out,
                       enum heif_channel ch, int w, int h, int bits)
{
    if (heif_image_add_plane(out, ch, w, h, bits).code != heif_error_Ok)
        return false;
    int in_stride, out_stride;
    const uint8_t *in = de265_get_image_plane(img, c, &in_stride);
    uint8_t *o = heif_image_get_plane(out, ch, &out_stride);
    int cw = de265_get_image_width(img, c), chh = de265_get_image_height(img, c);
    if (in == NULL || o == NULL || cw <= 0 || chh <= 0)
        return false;
    int sx = cw < w, sy = chh < h; /* 2x subsampled that way */
    size_t px = bits > 8 ? 2 : 1;
    for (int y = 0; y < h; y++) {
        const uint8_t *row = in + (size_t)(y >> sy) * (size_t)in_stride;
        uint8_t *dst = o + (size_t)y * (size_t)out_stride;
        for (int x = 0; x < w; x++)
            memcpy(dst + px * (size_t)x, row + px * (size_t)(x >> sx), px);
    }
    return true;
}

/* Plane `c` of `img` as it is into plane `ch` of out. */
static bool copy_native(const struct de265_image *img, int c, struct heif_image *out,
                        enum heif_channel ch, int bits)
{
    int w = de265_get_image_width(img, c), h = de265_get_image_height(img, c);
    if (w <= 0 || h <= 0 ||
        heif_image_add_plane(out, ch, w, h, bits).code != heif_error_Ok)
        return false;
    int in_stride, out_stride;
    const uint8_t *in = de265_get_image_plane(img, c, &in_stride);
    uint8_t *o = heif_image_get_plane(out, ch, &out_stride);
    if (in == NULL || o == NULL)
        return false;
    size_t row = (size_t)w * (bits > 8 ? 2 : 1);
    for (int y = 0; y < h; y++)
        memcpy(o + (size_t)y * (size_t)out_stride, in + (size_t)y * (size_t)in_stride,
               row);
    return true;
}

/* The picture as libheif's own libde265 plugin gives it (YCbCr or
 * monochrome, chroma as coded): for decodes other than detfeed's. */
static struct heif_error to_native(const struct de265_image *img,
                                   struct heif_image **out)
{
    int w = de265_get_image_width(img, 0), h = de265_get_image_height(img, 0);
    int bits = de265_get_bits_per_pixel(img, 0);
    enum de265_chroma ch = de265_get_chroma_format(img);
    bool mono = ch == de265_chroma_mono;
    struct heif_error e = heif_image_create(
        w, h, mono ? heif_colorspace_monochrome : heif_colorspace_YCbCr,
        (enum heif_chroma)ch, out);
    if (e.code != heif_error_Ok)
        return e;
    bool ok = mono ? copy_native(img, 0, *out, heif_channel_Y, bits)
                   : de265_get_bits_per_pixel(img, 1) == bits &&
                         de265_get_bits_per_pixel(img, 2) == bits &&
                         copy_native(img, 0, *out, heif_channel_Y, bits) &&
                         copy_native(img, 1, *out, heif_channel_Cb, bits) &&
                         copy_native(img, 2, *out, heif_channel_Cr, bits);
    if (!ok) {
        heif_image_release(*out);
        *out = NULL;
        return plugin_error("planes of different depths");
    }
    return ok_error();
}

static struct heif_error to_planes(const struct de265_image *img,
                                   struct heif_image **out)
{
    if (!first_vui.planes)
        return to_native(img, out);
    int w = de265_get_image_width(img, 0), h = de265_get_image_height(img, 0);
    int bits = de265_get_bits_per_pixel(img, 0);
    bool mono = de265_get_chroma_format(img) == de265_chroma_mono;
    struct heif_error e =
        heif_image_create(w, h, mono ? heif_colorspace_monochrome : heif_colorspace_RGB,
                          mono ? heif_chroma_monochrome : heif_chroma_444, out);
    if (e.code != heif_error_Ok)
        return e;
    bool ok = mono ? copy_plane(img, 0, *out, heif_channel_Y, w, h, bits)
                   : de265_get_bits_per_pixel(img, 1) == bits &&
                         de265_get_bits_per_pixel(img, 2) == bits &&
                         copy_plane(img, 0, *out, heif_channel_G, w, h, bits) &&
                         copy_plane(img, 1, *out, heif_channel_B, w, h, bits) &&
                         copy_plane(img, 2, *out, heif_channel_R, w, h, bits);
    if (!ok) {
        heif_image_release(*out);
        *out = NULL;
        return plugin_error("planes detfeed cannot take");
    }
    return ok_error();
}

bool detfeed__heif_vui(detfeed__heif_nclx *out)
{
    *out = first_vui.nclx;
    return first_vui.seen;
}

/* The stream's colour description, as libheif's own plugin attaches it. */
static void set_nclx(const struct de265_image *img, struct heif_image *out)
{
    if (first_vui.planes && !first_vui.seen) {
        first_vui.seen = true;
        first_vui.nclx.matrix = de265_get_image_matrix_coefficients(img);
        first_vui.nclx.primaries = de265_get_image_colour_primaries(img);
        first_vui.nclx.full_range = de265_get_image_full_range_flag(img) != 0;
    }
    struct heif_color_profile_nclx *n = heif_nclx_color_profile_alloc();
    if (n == NULL)
        return;
    heif_nclx_color_profile_set_color_primaries(
        n, (uint16_t)de265_get_image_colour_primaries(img));
    heif_nclx_color_profile_set_transfer_characteristics(
        n, (uint16_t)de265_get_image_transfer_characteristics(img));
    heif_nclx_color_profile_set_matrix_coefficients(
        n, (uint16_t)de265_get_image_matrix_coefficients(img));
    n->full_range_flag = (uint8_t)(de265_get_image_full_range_flag(img) != 0);
    heif_image_set_nclx_color_profile(out, n);
    heif_nclx_color_profile_free(n);
}

/* Decodes what was pushed; the last picture libde265 gives is the image. */
static struct heif_error plugin_decode(void *raw, struct heif_image **out)
{
    plugin_decoder *d = raw;
    *out = NULL;
    de265_flush_data(d->ctx);
    int more;
    do {
        more = 0;
        if (de265_decode(d->ctx, &more) != DE265_OK)
            break;
        const struct de265_image *img = de265_get_next_picture(d->ctx);
        if (img == NULL)
            continue;
        if (*out)
            heif_image_release(*out);
        struct heif_error e = to_planes(img, out);
        if (e.code != heif_error_Ok)
            return e;
        set_nclx(img, *out);
    } while (more);
    /* libde265 versions conceal damage differently: a stream it warns
     * about is refused. */
    if (*out && de265_get_warning(d->ctx) != DE265_OK) {
        heif_image_release(*out);
        *out = NULL;
        return plugin_error("a damaged HEVC stream (libde265 warned)");
    }
    return *out ? ok_error() : plugin_error("libde265 decoded no picture");
}

static void plugin_strict(void *raw, int flag)
{
    (void)raw, (void)flag;
}

static const struct heif_decoder_plugin plugin = {
    .plugin_api_version = 3,
    .get_plugin_name = plugin_name,
    .init_plugin = plugin_init,
    .deinit_plugin = plugin_deinit,
    .does_support_format = plugin_supports,
    .new_decoder = plugin_new,
    .free_decoder = plugin_free,
    .push_data = plugin_push,
    .decode_image = plugin_decode,
    .set_strict_decoding = plugin_strict,
    .id_name = DETFEED__HEIF_PLUGIN,
};

static pthread_once_t registered = PTHREAD_ONCE_INIT;
static bool register_failed;

static void register_plugin(void)
{
    register_failed = heif_register_decoder_plugin(&plugin).code != heif_error_Ok;
}

bool detfeed__heif_plugin_register(void)
{
    pthread_once(&registered, register_plugin);
    return !register_failed;
}
