/*
 * avif.c - AVIF as Ultralytics' imread reads a .avif: Pillow first
 * (ImageOps.exif_transpose(Image.open(f)).convert("RGB"), then RGB to
 * BGR), as Pillow 13.0.0's wheel does it (libavif 1.4.2 with libyuv 1924
 * and dav1d 1.5.3), measured by tests/oracle/test_avif_oracle.py:
 *
 * - a file is AVIF by its ftyp box: major brand avif or avis, or mif1 or
 *   msf1 with avif or avis among the compatible brands (Pillow's plugin
 *   takes mif1 and msf1 files; libavif reads only those).
 * - Debian's libavif (0.11.1) parses with Pillow's settings (clap
 *   validation and pixi off) and decodes the first image with libaom, the
 *   AV1 reference decoder: AV1 decoding is normative, so the planes are
 *   those of Pillow's dav1d (measured), and Debian's dav1d 1.0.0, which
 *   libavif 0.11.1 gives no logger, prints to stderr on damaged data.
 *   libavif 0.11.1's own YUV to RGB is not 1.4.2's: avif_rgb.c converts.
 * - orientation: Pillow reports the irot and imir boxes as an EXIF
 *   orientation, which replaces the orientation of the file's EXIF (an
 *   EXIF orientation without irot or imir is set back to 1), and
 *   exif_transpose applies it.
 * - refused, with a message saying why (detfeed does not know these bytes
 *   to be Pillow's): premultiplied alpha; alpha with 10 or 12 bits;
 *   colour matrices libyuv has no constants for (FCC, SMPTE 240, YCgCo,
 *   BT.2020 CL, ICtCp, chroma-derived with unknown primaries), identity
 *   but for 8-bit full-range 4:4:4; EXIF whose TIFF header is not where
 *   the item says (libavif 1.4.2 refuses the file) or that Pillow cannot
 *   load; XMP that may carry an orientation Pillow would apply.
 * - a file named .avif that is no AVIF is refused: Pillow would read it
 *   with its own decoder of that format. AVIF under another name is
 *   refused too: imread hands it to cv2.imdecode, and the OpenCV wheels'
 *   AVIF reader (4.12, 5.0, 5.1) differs from Pillow's on 88 of 390
 *   measured files (OpenCV 4.6 reads no AVIF).
 */
#define _GNU_SOURCE /* memmem */
#include "avif_internal.h"
#include "decode_internal.h"

#include <avif/avif.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static bool brand_is_avif(const uint8_t *b)
{
    return memcmp(b, "avif", 4) == 0 || memcmp(b, "avis", 4) == 0;
}

bool detfeed__avif_sniff(const uint8_t *p, uint64_t n)
{
    if (n < 16 || memcmp(p + 4, "ftyp", 4) != 0)
        return false;
    if (brand_is_avif(p + 8))
        return true;
    if (memcmp(p + 8, "mif1", 4) != 0 && memcmp(p + 8, "msf1", 4) != 0)
        return false;
    uint64_t box = detfeed__be32(p);
    for (uint64_t off = 16; off + 4 <= box && off + 4 <= n; off += 4)
        if (brand_is_avif(p + off))
            return true;
    return false;
}

bool detfeed__avif_named(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n < 5 || name[n - 5] != '.')
        return false;
    const char *s = name + n - 4;
    return tolower((unsigned char)s[0]) == 'a' && tolower((unsigned char)s[1]) == 'v' &&
           tolower((unsigned char)s[2]) == 'i' && tolower((unsigned char)s[3]) == 'f';
}

int detfeed__avif_foreign(detfeed_codec *c, const char *name)
{
    return detfeed__fail(&c->msg, DETFEED_EFORMAT,
                         "%s: named .avif but not AVIF: Ultralytics reads it with "
                         "Pillow's decoder of its format, which detfeed does not "
                         "reproduce",
                         name);
}

/* ---- parsing ------------------------------------------------------------ */

static int avif_fail(detfeed_codec *c, const char *name, const char *what, avifResult r)
{
    int st = r == AVIF_RESULT_NOT_IMPLEMENTED || r == AVIF_RESULT_UNSUPPORTED_DEPTH
                 ? DETFEED_EFORMAT
             : r == AVIF_RESULT_OUT_OF_MEMORY ? DETFEED_ENOMEM
                                              : DETFEED_ECORRUPT;
    return detfeed__fail(&c->msg, st, "%s: AVIF: libavif cannot %s it: %s", name, what,
                         avifResultToString(r));
}

/* A decoder with Pillow's settings on data[0, size), parsed. */
static int avif_open(detfeed_codec *c, const char *name, const uint8_t *data,
                     size_t size, avifDecoder **out)
{
    avifDecoder *d = avifDecoderCreate();
    if (d == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory for libavif",
                             name);
    d->maxThreads = 1;
    d->codecChoice = AVIF_CODEC_CHOICE_AOM;
    d->strictFlags &=
        ~(avifStrictFlags)(AVIF_STRICT_CLAP_VALID | AVIF_STRICT_PIXI_REQUIRED);
    avifResult r = avifDecoderSetIOMemory(d, data, size);
    if (r == AVIF_RESULT_OK)
        r = avifDecoderParse(d);
    if (r != AVIF_RESULT_OK) {
        avifDecoderDestroy(d);
        return avif_fail(c, name, "parse", r);
    }
    *out = d;
    return DETFEED_OK;
}

/* Pillow's irot_imir_to_exif_orientation (imir's raw bit as `axis`). */
static int transform_orientation(const avifImage *im)
{
    static const int rot[4] = {1, 8, 3, 6};
    static const int mir[4][2] = {{4, 2}, {5, 7}, {2, 4}, {7, 5}};
    int irot = (im->transformFlags & AVIF_TRANSFORM_IROT) ? im->irot.angle & 3 : 0;
    int axis = im->imir.mode ? 1 : 0;
    if (im->transformFlags & AVIF_TRANSFORM_IMIR)
        return mir[irot][axis];
    return rot[irot];
}

static bool tiff_prefix(const uint8_t *p, size_t n)
{
    return n >= 4 && (memcmp(p, "II*\0", 4) == 0 || memcmp(p, "MM\0*", 4) == 0 ||
                      memcmp(p, "MM*\0", 4) == 0 || memcmp(p, "II\0*", 4) == 0 ||
                      memcmp(p, "MM\0+", 4) == 0 || memcmp(p, "II+\0", 4) == 0);
}

/* The EXIF payload as libavif 1.4.2 checks it (the TIFF header where the
 * item's exif_tiff_header_offset says; 0.11.1 drops that offset, so it is
 * read before the payload in the file) and as Pillow loads it. */
static bool exif_readable(const avifRWData *e, const uint8_t *data, size_t size)
{
    size_t at = 0;
    while (at + 4 < e->size && memcmp(e->data + at, "MM\0*", 4) != 0 &&
           memcmp(e->data + at, "II*\0", 4) != 0)
        at++;
    if (at + 4 >= e->size)
        return false;
    const uint8_t *hit = memmem(data, size, e->data, e->size);
    if (hit == NULL || hit - data < 4 || detfeed__be32(hit - 4) != at)
        return false;
    size_t skip = 0;
    while (e->size - skip >= 6 && memcmp(e->data + skip, "Exif\0\0", 6) == 0)
        skip += 6;
    return tiff_prefix(e->data + skip, e->size - skip);
}

/* XMP Pillow would read an orientation from (tiff:Orientation), or fail
 * to decode as UTF-8: refused unless plain ASCII without it. */
static bool xmp_harmless(const avifRWData *x)
{
    for (size_t i = 0; i < x->size; i++)
        if (x->data[i] >= 0x80)
            return false;
    return memmem(x->data, x->size, "Orientation", 11) == NULL;
}

static int refuse(detfeed_codec *c, const char *name, const char *why)
{
    return detfeed__fail(&c->msg, DETFEED_EFORMAT,
                         "%s: AVIF with %s: not verified to read as Pillow reads it",
                         name, why);
}

static int metadata_check(detfeed_codec *c, const char *name, const avifImage *im,
                          const uint8_t *data, size_t size, int orientation)
{
    if (im->exif.size > 0 && !exif_readable(&im->exif, data, size))
        return refuse(c, name, "an EXIF block libavif 1.4.2 or Pillow refuses");
    if (im->xmp.size > 0 && orientation == 1 && !xmp_harmless(&im->xmp))
        return refuse(c, name, "XMP that may carry an orientation");
    return DETFEED_OK;
}

/* ---- colour ------------------------------------------------------------- */

/* libyuv's constants for the image's matrix (avif_rgb.c), as libavif's
 * getLibYUVConstants chooses them; false where there are none. */
static bool matrix_of(const avifImage *im, detfeed__yuv_matrix *m)
{
    avifMatrixCoefficients mc = im->matrixCoefficients;
    if (mc == AVIF_MATRIX_COEFFICIENTS_IDENTITY &&
        im->yuvFormat == AVIF_PIXEL_FORMAT_YUV400)
        mc = AVIF_MATRIX_COEFFICIENTS_BT601;
    if (mc == AVIF_MATRIX_COEFFICIENTS_CHROMA_DERIVED_NCL) {
        avifColorPrimaries cp = im->colorPrimaries;
        mc = cp == AVIF_COLOR_PRIMARIES_BT709 || cp == AVIF_COLOR_PRIMARIES_UNSPECIFIED
                 ? AVIF_MATRIX_COEFFICIENTS_BT709
             : cp == AVIF_COLOR_PRIMARIES_BT470BG || cp == AVIF_COLOR_PRIMARIES_BT601
                 ? AVIF_MATRIX_COEFFICIENTS_BT601
             : cp == AVIF_COLOR_PRIMARIES_BT2020 ? AVIF_MATRIX_COEFFICIENTS_BT2020_NCL
                                                 : AVIF_MATRIX_COEFFICIENTS_FCC;
    }
    switch (mc) {
    case AVIF_MATRIX_COEFFICIENTS_BT470BG:
    case AVIF_MATRIX_COEFFICIENTS_BT601:
    case AVIF_MATRIX_COEFFICIENTS_UNSPECIFIED:
        *m = DETFEED_YUVM_601;
        return true;
    case AVIF_MATRIX_COEFFICIENTS_BT709:
        *m = DETFEED_YUVM_709;
        return true;
    case AVIF_MATRIX_COEFFICIENTS_BT2020_NCL:
        *m = DETFEED_YUVM_2020;
        return true;
    case AVIF_MATRIX_COEFFICIENTS_IDENTITY:
        *m = DETFEED_YUVM_IDENTITY;
        return true;
    default:
        return false;
    }
}

static bool layout_of(avifPixelFormat f, detfeed__yuv_layout *l)
{
    switch (f) {
    case AVIF_PIXEL_FORMAT_YUV444:
        *l = DETFEED_YUV444;
        return true;
    case AVIF_PIXEL_FORMAT_YUV422:
        *l = DETFEED_YUV422;
        return true;
    case AVIF_PIXEL_FORMAT_YUV420:
        *l = DETFEED_YUV420;
        return true;
    case AVIF_PIXEL_FORMAT_YUV400:
        *l = DETFEED_YUV400;
        return true;
    default:
        return false;
    }
}

/* The conversion's description of the image, or a refusal. */
static int describe(detfeed_codec *c, const char *name, const avifImage *im, bool alpha,
                    detfeed__yuv *y)
{
    memset(y, 0, sizeof *y);
    if (!layout_of(im->yuvFormat, &y->layout))
        return refuse(c, name, "an unknown chroma layout");
    if (im->depth != 8 && im->depth != 10 && im->depth != 12)
        return refuse(c, name, "a bit depth other than 8, 10 or 12");
    if (alpha && im->alphaPremultiplied)
        return refuse(c, name, "premultiplied alpha");
    if (alpha && im->depth != 8)
        return refuse(c, name, "alpha and more than 8 bits");
    y->full_range = im->yuvRange == AVIF_RANGE_FULL;
    y->has_alpha = alpha;
    y->depth = (int)im->depth;
    y->width = im->width, y->height = im->height;
    bool gray = y->layout == DETFEED_YUV400 && !alpha;
    if (!matrix_of(im, &y->matrix) && !gray)
        return refuse(c, name, "a colour matrix libyuv has no constants for");
    if (y->matrix == DETFEED_YUVM_IDENTITY && !gray &&
        (y->layout != DETFEED_YUV444 || y->depth != 8 || !y->full_range))
        return refuse(c, name, "the identity matrix other than 8-bit full-range 4:4:4");
    for (int i = 0; i < (y->layout == DETFEED_YUV400 ? 1 : 3); i++) {
        if (im->yuvPlanes[i] == NULL)
            return detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: AVIF without pixels",
                                 name);
        y->plane[i] = im->yuvPlanes[i];
        y->stride[i] = im->yuvRowBytes[i];
    }
    return DETFEED_OK;
}

/* ---- entry points ------------------------------------------------------- */

/* Parses, checks what Pillow would make of the header, and the limits. */
static int avif_head(detfeed_codec *c, const char *name, const uint8_t *data,
                     size_t size, avifDecoder **d, int *orientation)
{
    if (!detfeed__avif_named(name))
        return detfeed__fail(
            &c->msg, DETFEED_EFORMAT,
            "%s: AVIF under a name other than .avif: Ultralytics reads "
            "it with cv2.imdecode, whose AVIF reader (the OpenCV "
            "wheels' libavif) gives other bytes than Pillow's",
            name);
    int rc = avif_open(c, name, data, size, d);
    if (rc != DETFEED_OK)
        return rc;
    const avifImage *im = (*d)->image;
    *orientation = transform_orientation(im);
    rc = metadata_check(c, name, im, data, size, *orientation);
    if (rc == DETFEED_OK)
        rc = detfeed__check_dims(&c->limits, name, im->width, im->height, &c->msg);
    if (rc != DETFEED_OK) {
        avifDecoderDestroy(*d);
        *d = NULL;
    }
    return rc;
}

static int avif_pixels(detfeed_codec *c, const char *name, avifDecoder *d,
                       detfeed__avif_image *out)
{
    /* The header passed the limits; the AV1 decoder is held to them too
     * (Pillow's libavif refuses more than its default, and so does this). */
    if (c->limits.max_pixels < d->imageSizeLimit)
        d->imageSizeLimit = (uint32_t)c->limits.max_pixels;
    avifResult r = avifDecoderNthImage(d, 0);
    if (r != AVIF_RESULT_OK)
        return avif_fail(c, name, "decode", r);
    const avifImage *im = d->image;
    detfeed__yuv y;
    size_t px, bytes;
    int rc = describe(c, name, im, d->alphaPresent, &y);
    if (rc != DETFEED_OK)
        return rc;
    rc = detfeed__check_dims(&c->limits, name, im->width, im->height, &c->msg);
    if (rc != DETFEED_OK)
        return rc;
    if (!detfeed__mul_size(im->width, im->height, &px) ||
        !detfeed__mul_size(px, 3, &bytes))
        return detfeed__fail(&c->msg, DETFEED_EOVERFLOW, "%s: %ux%u is too large", name,
                             (unsigned)im->width, (unsigned)im->height);
    if ((out->pixels = malloc(bytes)) == NULL ||
        !detfeed__yuv_to_bgr(&y, out->pixels)) {
        free(out->pixels);
        out->pixels = NULL;
        return detfeed__fail(&c->msg, DETFEED_ENOMEM,
                             "%s: out of memory for a %ux%u AVIF", name,
                             (unsigned)im->width, (unsigned)im->height);
    }
    out->width = im->width, out->height = im->height;
    return DETFEED_OK;
}

int detfeed__avif_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                         size_t size, detfeed__avif_image *out)
{
    avifDecoder *d;
    memset(out, 0, sizeof *out);
    int rc = avif_head(c, name, data, size, &d, &out->orientation);
    if (rc != DETFEED_OK)
        return rc;
    rc = avif_pixels(c, name, d, out);
    avifDecoderDestroy(d);
    return rc;
}

int detfeed__avif_probe(detfeed_codec *c, const char *name, const uint8_t *data,
                        size_t size, uint32_t *w, uint32_t *h, int *orientation)
{
    avifDecoder *d;
    int rc = avif_head(c, name, data, size, &d, orientation);
    if (rc != DETFEED_OK)
        return rc;
    *w = d->image->width, *h = d->image->height;
    avifDecoderDestroy(d);
    return DETFEED_OK;
}
