/*
 * heif.c - HEIC/HEIF images as Ultralytics 8.4.190's imread reads a .heic
 * or .heif: with Pillow, through pi-heif 1.4.0 (its PyPI wheel: libheif
 * 1.23.0 and libde265), then exif_transpose, convert("RGB") and RGB to BGR.
 *
 * What pi-heif does, and so what these files do (measured against the real
 * stack by tests/oracle/test_heif_oracle.py):
 * - the file's primary image; libheif applies its transformations (irot,
 *   imir, clap) and grids, then converts to 8-bit RGB (RGBA when there is
 *   alpha: convert("RGB") drops it). The HEVC decoding is normative, so
 *   libheif and libde265 of this system give the same YCbCr planes
 *   (requested natively, untouched by conversion); heif_color.c converts
 *   them with the arithmetic of libheif 1.23.0.
 * - pi-heif resets the EXIF (and XMP) orientation to 1, since libheif has
 *   already turned the image: exif_transpose leaves it as it is
 *   (heif_meta.c refuses the files where Pillow could read another).
 * - a HEIF under another suffix goes to cv2.imdecode, which reads no HEIF
 *   (OpenCV 4.12, 5.0, 5.1 wheels and Debian's 4.6): decode.c refuses it,
 *   as something Ultralytics cannot read either.
 * What is not reproduced is refused with a message naming the file: an
 * image item that is not HEVC, premultiplied alpha, monochrome of more than
 * 8 bits, and the colour cases heif_color.c lists.
 */
#include "heif_internal.h"

#include <ctype.h>
#include <libheif/heif.h>
#include <stdlib.h>
#include <string.h>

static const char heif_brands[][5] = {"heic", "heix", "heim", "heis",
                                      "hevc", "hevx", "hevm", "hevs"};

/* Whether the ftyp box p[0, n) (its size field read) lists `brand`. */
static bool lists_brand(const uint8_t *p, uint64_t n, const char *brand)
{
    uint64_t end = detfeed__be32(p);
    if (end > n)
        end = n;
    for (uint64_t at = 16; at + 4 <= end; at += 4)
        if (memcmp(p + at, brand, 4) == 0)
            return true;
    return false;
}

bool detfeed__heif_sniff(const uint8_t *p, uint64_t n)
{
    if (n < 12 || memcmp(p + 4, "ftyp", 4) != 0)
        return false;
    for (size_t i = 0; i < sizeof heif_brands / sizeof heif_brands[0]; i++)
        if (memcmp(p + 8, heif_brands[i], 4) == 0)
            return true;
    if (memcmp(p + 8, "mif1", 4) != 0 && memcmp(p + 8, "msf1", 4) != 0)
        return false;
    return !lists_brand(p, n, "avif") && !lists_brand(p, n, "avis");
}

bool detfeed__heif_name(const char *name)
{
    size_t n = strlen(name);
    if (n < 5 || name[n - 5] != '.')
        return false;
    char s[5];
    for (size_t i = 0; i < 4; i++)
        s[i] = (char)tolower((unsigned char)name[n - 4 + i]);
    s[4] = '\0';
    return strcmp(s, "heic") == 0 || strcmp(s, "heif") == 0;
}

/* One decode: libheif's context, the primary image's handle, its pixels. */
typedef struct heif {
    struct heif_context *ctx;
    struct heif_image_handle *handle;
    struct heif_image *image;
} heif;

static void heif_close(heif *f)
{
    if (f->image)
        heif_image_release(f->image);
    if (f->handle)
        heif_image_handle_release(f->handle);
    if (f->ctx)
        heif_context_free(f->ctx);
}

static int damaged(detfeed_codec *c, const char *name, struct heif_error e)
{
    if (e.code == heif_error_Memory_allocation_error)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory in libheif",
                             name);
    if (e.subcode == heif_suberror_Security_limit_exceeded)
        return detfeed__fail(&c->msg, DETFEED_ELIMIT,
                             "%s: HEIF exceeds the image limits (libheif: %s)", name,
                             e.message);
    return detfeed__fail(&c->msg, DETFEED_ECORRUPT,
                         "%s: libheif cannot read this HEIF: %s", name, e.message);
}

static int refused(detfeed_codec *c, const char *name, const char *why)
{
    return detfeed__fail(&c->msg, DETFEED_ENOTSUPPORTED,
                         "%s: a HEIF image with %s, which detfeed does not read "
                         "(it does not reproduce pi-heif there)",
                         name, why);
}

/* The larger side libheif may read: the codec's limits, which are checked
 * again with detfeed's message below. */
static int side_limit(const detfeed__limits *lim)
{
    uint64_t m = lim->max_width > lim->max_height ? lim->max_width : lim->max_height;
    return m > (uint64_t)INT32_MAX ? INT32_MAX : (int)m;
}

/* pi-heif lists every top-level image (a failing one makes it fail as a
 * whole, or shifts which image is primary) and takes the primary one, or
 * the first when the primary item is none of them: each must open here
 * too, and the primary item must be one of them. */
static int check_top_level(detfeed_codec *c, const char *name, heif *f)
{
    heif_item_id primary;
    struct heif_error e = heif_context_get_primary_image_ID(f->ctx, &primary);
    if (e.code != heif_error_Ok)
        return damaged(c, name, e);
    int n = heif_context_get_number_of_top_level_images(f->ctx);
    if (n <= 0)
        return detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: a HEIF without images",
                             name);
    heif_item_id *ids = malloc((size_t)n * sizeof *ids);
    if (ids == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory", name);
    n = heif_context_get_list_of_top_level_image_IDs(f->ctx, ids, n);
    int rc = DETFEED_OK;
    bool listed = false;
    for (int i = 0; i < n && rc == DETFEED_OK; i++) {
        struct heif_image_handle *h;
        listed |= ids[i] == primary;
        e = heif_context_get_image_handle(f->ctx, ids[i], &h);
        if (e.code != heif_error_Ok)
            rc = damaged(c, name, e);
        else
            heif_image_handle_release(h);
    }
    free(ids);
    if (rc == DETFEED_OK && !listed)
        rc = refused(c, name, "a primary item that is not one of its images");
    return rc;
}

static int heif_open(detfeed_codec *c, const char *name, const uint8_t *data,
                     size_t size, heif *f)
{
    if ((f->ctx = heif_context_alloc()) == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory", name);
    heif_context_set_maximum_image_size_limit(f->ctx, side_limit(&c->limits));
    heif_context_set_max_decoding_threads(f->ctx, 0); /* tiles in order, here */
    struct heif_error e =
        heif_context_read_from_memory_without_copy(f->ctx, data, size, NULL);
    if (e.code != heif_error_Ok)
        return damaged(c, name, e);
    int rc = check_top_level(c, name, f);
    if (rc != DETFEED_OK)
        return rc;
    e = heif_context_get_primary_image_handle(f->ctx, &f->handle);
    return e.code == heif_error_Ok ? DETFEED_OK : damaged(c, name, e);
}

/* The coded size (before rotation and cropping) against the limits. */
static int check_coded(detfeed_codec *c, const char *name, const heif *f)
{
    int w = heif_image_handle_get_ispe_width(f->handle);
    int h = heif_image_handle_get_ispe_height(f->handle);
    if (w <= 0 || h <= 0)
        return DETFEED_OK; /* no ispe: libheif checks the decoded size */
    uint64_t lo = (uint64_t)(w < h ? w : h), hi = (uint64_t)(w < h ? h : w);
    const detfeed__limits *lim = &c->limits;
    uint64_t lo_limit =
        lim->max_width < lim->max_height ? lim->max_width : lim->max_height;
    if (hi > (uint64_t)side_limit(lim) || lo > lo_limit || lo * hi > lim->max_pixels ||
        lo * hi > lim->max_image_bytes / 3)
        return detfeed__fail(&c->msg, DETFEED_ELIMIT,
                             "%s: HEIF coded at %dx%d exceeds the image limits", name,
                             w, h);
    return DETFEED_OK;
}

/* The primary image's size and the checks made before decoding it. */
static int check_handle(detfeed_codec *c, const char *name, const heif *f, uint32_t *w,
                        uint32_t *h)
{
    int iw = heif_image_handle_get_width(f->handle);
    int ih = heif_image_handle_get_height(f->handle);
    *w = iw > 0 ? (uint32_t)iw : 0, *h = ih > 0 ? (uint32_t)ih : 0;
    int rc = detfeed__check_dims(&c->limits, name, *w, *h, &c->msg);
    if (rc == DETFEED_OK)
        rc = check_coded(c, name, f);
    if (rc != DETFEED_OK)
        return rc;
    if (heif_image_handle_has_alpha_channel(f->handle) &&
        heif_image_handle_is_premultiplied_alpha(f->handle))
        return refused(c, name, "premultiplied alpha");
    return DETFEED_OK;
}

/* One metadata block of the primary image, malloc'd. */
static int metadata_block(detfeed_codec *c, const char *name, const heif *f,
                          heif_item_id id, uint8_t **out, size_t *n)
{
    *n = heif_image_handle_get_metadata_size(f->handle, id);
    if ((*out = malloc(*n ? *n : 1)) == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory", name);
    struct heif_error e = heif_image_handle_get_metadata(f->handle, id, *out);
    return e.code == heif_error_Ok ? DETFEED_OK : damaged(c, name, e);
}

/* The first Exif block with a payload and the first XMP ('mime') block,
 * as pi-heif keeps them. */
typedef struct heif_meta {
    uint8_t *exif, *xmp;
    size_t exif_start, exif_size, xmp_size;
} heif_meta;

static int take_block(detfeed_codec *c, const char *name, const heif *f,
                      heif_item_id id, heif_meta *m)
{
    const char *type = heif_image_handle_get_metadata_type(f->handle, id);
    uint8_t *b;
    size_t n;
    int rc = metadata_block(c, name, f, id, &b, &n);
    if (rc == DETFEED_OK && type && strcmp(type, "Exif") == 0 && m->exif == NULL) {
        size_t at = detfeed__heif_exif_start(b, n);
        if (at < n)
            m->exif = b, m->exif_start = at, m->exif_size = n - at, b = NULL;
    } else if (rc == DETFEED_OK && type && strcmp(type, "mime") == 0 &&
               m->xmp == NULL) {
        m->xmp = b, m->xmp_size = n, b = NULL;
    }
    free(b);
    return rc;
}

/* Reads every metadata block (pi-heif fails on one libheif cannot give)
 * and checks that the orientation leaves the image upright. */
static int check_metadata(detfeed_codec *c, const char *name, const heif *f)
{
    int n = heif_image_handle_get_number_of_metadata_blocks(f->handle, NULL);
    if (n <= 0)
        return DETFEED_OK;
    heif_item_id *ids = malloc((size_t)n * sizeof *ids);
    if (ids == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory", name);
    n = heif_image_handle_get_list_of_metadata_block_IDs(f->handle, NULL, ids, n);
    heif_meta m = {0};
    int rc = DETFEED_OK;
    for (int i = 0; i < n && rc == DETFEED_OK; i++)
        rc = take_block(c, name, f, ids[i], &m);
    if (rc == DETFEED_OK &&
        !detfeed__heif_upright(m.exif ? m.exif + m.exif_start : NULL, m.exif_size,
                               m.xmp, m.xmp_size))
        rc = refused(c, name, "an EXIF or XMP orientation Pillow may read otherwise");
    free(ids);
    free(m.exif);
    free(m.xmp);
    return rc;
}

/* The colour description libheif 1.23.0 converts with: the colr box's nclx
 * unless it is all unspecified (2, 2, 2, full range), else that of the
 * HEVC stream of the coded image (the first tile of a grid). */
static int get_nclx(detfeed_codec *c, const char *name, const heif *f,
                    detfeed__heif_nclx *out)
{
    struct heif_color_profile_nclx *p = NULL;
    struct heif_error e = heif_image_handle_get_nclx_color_profile(f->handle, &p);
    bool undefined = true;
    if (e.code == heif_error_Ok && p != NULL) {
        out->matrix = (int)p->matrix_coefficients;
        out->primaries = (int)p->color_primaries;
        out->full_range = p->full_range_flag != 0;
        undefined = out->matrix == 2 && out->primaries == 2 &&
                    p->transfer_characteristics == 2 && out->full_range;
    }
    if (p != NULL) /* given also with an error (a value libheif does not know) */
        heif_nclx_color_profile_free(p);
    if (e.code != heif_error_Ok && e.code != heif_error_Color_profile_does_not_exist)
        return refused(c, name, "a colr box libheif cannot read");
    if (!undefined)
        return DETFEED_OK;
    return detfeed__heif_vui(out)
               ? DETFEED_OK
               : refused(c, name, "no colour description in its stream");
}

/* Decodes the image of handle `h` with heif_plugin.c (planes libheif does
 * not convert), its grid and, when `transform`, its transformations applied
 * by libheif. */
static int decode_with_plugin(detfeed_codec *c, const char *name,
                              struct heif_image_handle *h, bool transform,
                              struct heif_image **out)
{
    if (!detfeed__heif_plugin_register())
        return detfeed__fail(&c->msg, DETFEED_ENOTSUPPORTED,
                             "%s: libheif refused detfeed's HEVC decoder plugin", name);
    struct heif_decoding_options *o = heif_decoding_options_alloc();
    if (o == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory", name);
    o->decoder_id = DETFEED__HEIF_PLUGIN;
    o->ignore_transformations = !transform;
    detfeed__heif_plugin_begin();
    struct heif_error e =
        heif_decode_image(h, out, heif_colorspace_undefined, heif_chroma_undefined, o);
    detfeed__heif_plugin_end();
    heif_decoding_options_free(o);
    if (e.code == heif_error_Unsupported_filetype ||
        e.code == heif_error_Unsupported_feature)
        return refused(c, name, "a feature libheif lacks");
    return e.code == heif_error_Ok ? DETFEED_OK : damaged(c, name, e);
}

/* Whether the R, G and B planes are the same: the gray libheif 1.15 makes
 * of a grid of monochrome tiles. */
static bool gray_rgb(const detfeed__heif_planes *p)
{
    size_t row = (size_t)p->width * (p->bits > 8 ? 2 : 1);
    for (uint32_t y = 0; y < p->height; y++) {
        const uint8_t *g = p->y + y * p->y_stride;
        if (memcmp(g, p->cb + y * p->cb_stride, row) != 0 ||
            memcmp(g, p->cr + y * p->cr_stride, row) != 0)
            return false;
    }
    return true;
}

/* The planes heif_plugin.c gave (G holds Y, B Cb, R Cr; or Y alone) after
 * libheif's grid and transformations. */
static int take_planes(detfeed_codec *c, const char *name, const heif *f,
                       detfeed__heif_planes *p)
{
    enum heif_colorspace cs = heif_image_get_colorspace(f->image);
    enum heif_channel luma =
        cs == heif_colorspace_RGB ? heif_channel_G : heif_channel_Y;
    if (cs != heif_colorspace_RGB && cs != heif_colorspace_monochrome)
        return refused(c, name, "a colour space libheif did not leave as decoded");
    int iw = heif_image_get_width(f->image, luma);
    int ih = heif_image_get_height(f->image, luma);
    if (iw < 0 || ih < 0 || (uint32_t)iw != p->width || (uint32_t)ih != p->height)
        return detfeed__fail(&c->msg, DETFEED_ECORRUPT,
                             "%s: HEIF decoded at %dx%d, not the %ux%u of its header",
                             name, iw, ih, (unsigned)p->width, (unsigned)p->height);
    p->bits = heif_image_get_bits_per_pixel_range(f->image, luma);
    int stride;
    p->y = heif_image_get_plane_readonly(f->image, luma, &stride);
    p->y_stride = (size_t)stride;
    if (cs == heif_colorspace_RGB) {
        p->cb = heif_image_get_plane_readonly(f->image, heif_channel_B, &stride);
        p->cb_stride = (size_t)stride;
        p->cr = heif_image_get_plane_readonly(f->image, heif_channel_R, &stride);
        p->cr_stride = (size_t)stride;
    }
    if (!p->y || (cs == heif_colorspace_RGB && (!p->cb || !p->cr)))
        return refused(c, name, "a missing plane");
    return DETFEED_OK;
}

/* The decoded planes, checked against the size the handle promised and the
 * coding the boxes told: a monochrome stream decodes to gray whatever its
 * hvcC says (libheif 1.23 turns it to RGB by repeating Y); libheif 1.15
 * gives a grid of monochrome tiles as equal R, G and B. */
static int get_planes(detfeed_codec *c, const char *name, const heif *f, uint32_t w,
                      uint32_t h, const detfeed__heif_layout *l,
                      detfeed__heif_planes *p)
{
    memset(p, 0, sizeof *p);
    p->width = w, p->height = h;
    int rc = take_planes(c, name, f, p);
    if (rc != DETFEED_OK)
        return rc;
    bool rgb = p->cb != NULL;
    if (rgb && l->chroma == 0 && !gray_rgb(p))
        return refused(c, name, "colour planes where its hvcC box says monochrome");
    p->chroma = rgb ? l->chroma : 0;
    p->i16 = l->chroma == 0 && p->bits > 8 &&
             !heif_image_handle_has_alpha_channel(f->handle);
    if (p->bits != l->bits)
        return refused(c, name, "a bit depth other than its hvcC box says");
    return DETFEED_OK;
}

/* Everything before decoding: the file, the primary image, its limits and
 * metadata; the size decoding will give. */
static int heif_head(detfeed_codec *c, const char *name, const uint8_t *data,
                     size_t size, heif *f, uint32_t *w, uint32_t *h,
                     detfeed__heif_layout *l)
{
    int rc = heif_open(c, name, data, size, f);
    if (rc == DETFEED_OK)
        rc = check_handle(c, name, f, w, h);
    if (rc == DETFEED_OK)
        rc = check_metadata(c, name, f);
    const char *why =
        rc == DETFEED_OK ? detfeed__heif_layout_read(data, size, l) : NULL;
    return why ? refused(c, name, why) : rc;
}

static int convert(detfeed_codec *c, const char *name, const heif *f, uint32_t w,
                   uint32_t h, const detfeed__heif_layout *l, uint8_t **out)
{
    detfeed__heif_planes p;
    detfeed__heif_nclx n = {2, 2, true};
    int rc = get_planes(c, name, f, w, h, l, &p);
    if (rc == DETFEED_OK && p.chroma != 0)
        rc = get_nclx(c, name, f, &n);
    if (rc != DETFEED_OK)
        return rc;
    const char *why = detfeed__heif_color_refusal(&p, &n);
    if (why != NULL)
        return refused(c, name, why);
    if ((*out = malloc((size_t)w * h * 3)) == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM,
                             "%s: out of memory for a %ux%u image", name, (unsigned)w,
                             (unsigned)h);
    detfeed__heif_to_bgr(&p, &n, *out);
    return DETFEED_OK;
}

int detfeed__heif_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                         size_t size, uint8_t **out, uint32_t *w, uint32_t *h)
{
    heif f = {0};
    detfeed__heif_layout l;
    *out = NULL;
    int rc = heif_head(c, name, data, size, &f, w, h, &l);
    if (rc == DETFEED_OK)
        rc = decode_with_plugin(c, name, f.handle, true, &f.image);
    if (rc == DETFEED_OK)
        rc = convert(c, name, &f, *w, *h, &l, out);
    heif_close(&f);
    return rc;
}

int detfeed__heif_probe(detfeed_codec *c, const char *name, const uint8_t *data,
                        size_t size, uint32_t *w, uint32_t *h)
{
    heif f = {0};
    detfeed__heif_layout l;
    int rc = heif_head(c, name, data, size, &f, w, h, &l);
    heif_close(&f);
    return rc;
}
