/*
 * jp2.c - JPEG 2000 as OpenCV's OpenJPEG decoder reads it with
 * IMREAD_COLOR (Ultralytics' imread of a .jp2 is cv2.imdecode; the same
 * in OpenCV 4.6, 4.12, 5.0 and 5.1, measured against Debian's OpenJPEG
 * 2.5.0 and the wheels' own by tests/oracle/test_formats_oracle.py):
 *
 * - a file is a JP2 by its 12-byte signature box, a bare codestream (J2K)
 *   by FF 4F FF 51; OpenJPEG reads it from memory as OpenCV's buffer
 *   stream does (reads and skips of nothing fail, seeks are clamped).
 * - the header: 1 to 4 components, none signed, at most one alpha; the
 *   size is the image area's (x1 - x0, y1 - y0); the largest precision
 *   at least 8 bits.
 * - the whole image decoded at full resolution; every component must
 *   cover the image (no subsampling, no offset). Colour spaces: sRGB, and
 *   unknown or unspecified taken as sRGB, need three components or more
 *   (R, G, B; a fourth dropped): fewer fail; gray repeats the first
 *   component; CMYK and e-YCC fail; sYCC needs three components or more,
 *   read as Y, U, V.
 * - each sample shifted right by the largest precision less 8, its low
 *   8 bits kept; sYCC then goes through cvtColor(COLOR_YUV2BGR)'s 8-bit
 *   fixed-point arithmetic (the same bytes as OpenCV 4.6, 4.12, 5.0 and
 *   5.1 on all 2^24 triples).
 * - with the wheels' stacks, a file in which OpenJPEG reports an error
 *   while decoding is refused (their OpenJPEG is not Debian's, and the
 *   versions may part on damaged data); OpenJPEG never prints.
 */
#include "decode_internal.h"

#include <openjpeg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t jp2_magic[12] = {0,   0,   0,  0x0c, 'j',  'P',
                                      ' ', ' ', 13, 10,   0x87, 10};
static const uint8_t j2k_magic[4] = {0xff, 0x4f, 0xff, 0x51};

int detfeed__jp2_sniff(const uint8_t *p, uint64_t n)
{
    if (n >= sizeof jp2_magic && memcmp(p, jp2_magic, sizeof jp2_magic) == 0)
        return 1;
    if (n >= sizeof j2k_magic && memcmp(p, j2k_magic, sizeof j2k_magic) == 0)
        return 2;
    return 0;
}

/* The input as OpenCV's buffer stream gives it to OpenJPEG. */
typedef struct jp2_mem {
    const uint8_t *data;
    OPJ_SIZE_T size, pos;
} jp2_mem;

static OPJ_SIZE_T mem_read(void *dst, OPJ_SIZE_T n, void *user)
{
    jp2_mem *m = user;
    OPJ_SIZE_T k = m->size - m->pos < n ? m->size - m->pos : n;
    if (k == 0)
        return (OPJ_SIZE_T)-1;
    memcpy(dst, m->data + m->pos, k);
    m->pos += k;
    return k;
}

static OPJ_OFF_T mem_skip(OPJ_OFF_T n, void *user)
{
    jp2_mem *m = user;
    OPJ_SIZE_T want = (OPJ_SIZE_T)n; /* OpenCV takes the count as unsigned */
    OPJ_SIZE_T k = m->size - m->pos < want ? m->size - m->pos : want;
    if (k == 0)
        return -1;
    m->pos += k;
    return (OPJ_OFF_T)k;
}

static OPJ_BOOL mem_seek(OPJ_OFF_T n, void *user)
{
    jp2_mem *m = user;
    OPJ_SIZE_T at = (OPJ_SIZE_T)n;
    m->pos = at < m->size ? at : m->size;
    return OPJ_TRUE;
}

/* One decode: the stream, the codec, the image, OpenJPEG's first error. */
typedef struct jp2 {
    jp2_mem mem;
    opj_stream_t *stream;
    opj_codec_t *codec;
    opj_image_t *image;
    int errors;
    char err[160];
} jp2;

static void on_error(const char *msg, void *user)
{
    jp2 *j = user;
    if (j->errors++ == 0) {
        snprintf(j->err, sizeof j->err, "%s", msg);
        size_t n = strlen(j->err);
        while (n > 0 && (j->err[n - 1] == '\n' || j->err[n - 1] == ' '))
            j->err[--n] = '\0';
    }
}

static void on_warning(const char *msg, void *user)
{
    (void)msg, (void)user;
}

static void jp2_close(jp2 *j)
{
    if (j->image)
        opj_image_destroy(j->image);
    if (j->codec)
        opj_destroy_codec(j->codec);
    if (j->stream)
        opj_stream_destroy(j->stream);
}

/* The refusal of a file in which OpenJPEG reported an error, with the
 * wheels' stacks (whose OpenJPEG is not Debian's, and the versions may part
 * on damaged data). */
static int damaged(detfeed_codec *c, const char *name, const jp2 *j)
{
    return detfeed__fail(&c->msg, DETFEED_ECORRUPT,
                         "%s: a damaged JPEG 2000 (OpenJPEG: %s), which OpenJPEG "
                         "versions read differently: detfeed does not read it",
                         name, j->err);
}

static bool wheels(const detfeed_codec *c)
{
    return c->limits.opencv != DETFEED_CV_4_DEBIAN;
}

/* OpenCV's failure (imdecode gives None): `what`, and OpenJPEG's error. */
static int failed(detfeed_codec *c, const char *name, const jp2 *j, const char *what)
{
    if (j->errors > 0 && wheels(c))
        return damaged(c, name, j);
    return detfeed__fail(&c->msg, DETFEED_ECORRUPT,
                         "%s: OpenCV cannot read this JPEG 2000: %s%s%s", name, what,
                         j->err[0] ? ": " : "", j->err);
}

/* The stream, the codec and the header, as OpenCV's readHeader makes them. */
static int open_header(detfeed_codec *c, const char *name, jp2 *j, int kind)
{
    opj_dparameters_t params;
    j->stream = opj_stream_default_create(OPJ_TRUE);
    j->codec = opj_create_decompress(kind == 1 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
    if (j->stream == NULL || j->codec == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory", name);
    opj_stream_set_user_data(j->stream, &j->mem, NULL);
    opj_stream_set_user_data_length(j->stream, j->mem.size);
    opj_stream_set_read_function(j->stream, mem_read);
    opj_stream_set_skip_function(j->stream, mem_skip);
    opj_stream_set_seek_function(j->stream, mem_seek);
    opj_set_error_handler(j->codec, on_error, j);
    opj_set_warning_handler(j->codec, on_warning, j);
    opj_set_info_handler(j->codec, on_warning, j);
    opj_set_default_decoder_parameters(&params);
    if (!opj_setup_decoder(j->codec, &params) ||
        !opj_read_header(j->stream, j->codec, &j->image))
        return failed(c, name, j, "its header cannot be read");
    return DETFEED_OK;
}

/* OpenCV's checks of the header's components; the largest precision. */
static int check_components(detfeed_codec *c, const char *name, const jp2 *j,
                            uint32_t *prec)
{
    const opj_image_t *im = j->image;
    bool alpha = false;
    *prec = 0;
    if (im->numcomps < 1 || im->numcomps > 4)
        return failed(c, name, j, "a number of components other than 1 to 4");
    for (uint32_t i = 0; i < im->numcomps; i++) {
        const opj_image_comp_t *k = &im->comps[i];
        if (k->sgnd)
            return failed(c, name, j, "signed components");
        if (alpha && k->alpha)
            return failed(c, name, j, "two alpha components");
        alpha |= k->alpha != 0;
        if (k->prec > 64)
            return failed(c, name, j, "components of more than 64 bits");
        if (k->prec > 38) /* OpenJPEG's own limit: keeps the shift below 31 */
            return failed(c, name, j, "components of more than 38 bits");
        *prec = k->prec > *prec ? k->prec : *prec;
    }
    if (*prec < 8)
        return failed(c, name, j, "components of fewer than 8 bits");
    return DETFEED_OK;
}

/* The header's size (x1 - x0 by y1 - y0, as OpenCV takes it) against
 * OpenCV's own limits (which raise) and detfeed's. */
static int check_size(detfeed_codec *c, const char *name, const opj_image_t *im,
                      uint32_t *w, uint32_t *h)
{
    *w = im->x1 - im->x0, *h = im->y1 - im->y0;
    int rc = detfeed__check_dims(&c->limits, name, *w, *h, &c->msg);
    if (rc == DETFEED_OK &&
        (*w > (1u << 20) || *h > (1u << 20) || (uint64_t)*w * *h > (1ull << 30)))
        rc = detfeed__fail(&c->msg, DETFEED_ELIMIT,
                           "%s: %ux%u, which OpenCV refuses (raises)", name,
                           (unsigned)*w, (unsigned)*h);
    return rc;
}

/* How the decoded components become B, G, R (OpenCV's decode functions). */
typedef enum { AS_RGB, AS_GRAY, AS_SYCC } jp2_colour;

/* The decoded components' layout and colour space, as readData checks
 * them: the three components read, in comp[], and how. */
static int pick_components(detfeed_codec *c, const char *name, const jp2 *j, uint32_t w,
                           uint32_t h, const OPJ_INT32 *comp[3], jp2_colour *how)
{
    const opj_image_t *im = j->image;
    for (uint32_t i = 0; i < im->numcomps; i++) {
        const opj_image_comp_t *k = &im->comps[i];
        if (k->dx != 1 || k->dy != 1 || k->x0 != 0 || k->y0 != 0 || k->w != w ||
            k->h != h || k->data == NULL)
            return failed(c, name, j, "components that do not cover the image");
    }
    switch (im->color_space) {
    case OPJ_CLRSPC_UNKNOWN:
    case OPJ_CLRSPC_UNSPECIFIED:
    case OPJ_CLRSPC_SRGB:
    case OPJ_CLRSPC_SYCC:
        if (im->numcomps < 3)
            return failed(c, name, j, "fewer than 3 components in colour");
        *how = im->color_space == OPJ_CLRSPC_SYCC ? AS_SYCC : AS_RGB;
        for (int k = 0; k < 3; k++)
            comp[k] = im->comps[*how == AS_SYCC ? k : 2 - k].data;
        return DETFEED_OK;
    case OPJ_CLRSPC_GRAY:
        *how = AS_GRAY;
        comp[0] = comp[1] = comp[2] = im->comps[0].data;
        return DETFEED_OK;
    default:
        return failed(c, name, j,
                      "a colour space OpenCV does not convert (CMYK, e-YCC)");
    }
}

static uint8_t clamp8(int v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* OpenCV's 8-bit COLOR_YUV2BGR (fixed point, 14 bits) of one pixel. */
static void yuv_to_bgr(uint8_t *px)
{
    int y = px[0], u = px[1] - 128, v = px[2] - 128, half = 1 << 13;
    px[0] = clamp8(y + ((u * 33292 + half) >> 14));
    px[1] = clamp8(y + ((u * -6472 + v * -9519 + half) >> 14));
    px[2] = clamp8(y + ((v * 18678 + half) >> 14));
}

/* The samples shifted right by `shift`, their low 8 bits (OpenCV's
 * copyToMat), converted from YUV where the image is sYCC. */
static void convert(uint8_t *img, size_t n, const OPJ_INT32 *comp[3], unsigned shift,
                    jp2_colour how)
{
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++)
            img[3 * i + k] = (uint8_t)(comp[k][i] >> shift);
        if (how == AS_SYCC)
            yuv_to_bgr(img + 3 * i);
    }
}

int detfeed__jp2_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                        size_t size, uint8_t **out, uint32_t *w, uint32_t *h)
{
    jp2 j = {.mem = {data, size, 0}};
    uint32_t prec = 0;
    const OPJ_INT32 *comp[3] = {NULL, NULL, NULL};
    jp2_colour how = AS_RGB;
    uint8_t *img = NULL;
    *out = NULL;
    int rc = open_header(c, name, &j, detfeed__jp2_sniff(data, size));
    if (rc == DETFEED_OK)
        rc = check_components(c, name, &j, &prec);
    if (rc == DETFEED_OK)
        rc = check_size(c, name, j.image, w, h);
    if (rc == DETFEED_OK && !opj_decode(j.codec, j.stream, j.image))
        rc = failed(c, name, &j, "OpenJPEG cannot decode it");
    if (rc == DETFEED_OK && j.errors > 0 && wheels(c))
        rc = damaged(c, name, &j);
    if (rc == DETFEED_OK)
        rc = pick_components(c, name, &j, *w, *h, comp, &how);
    if (rc == DETFEED_OK && (img = malloc((size_t)*w * *h * 3)) == NULL)
        rc = detfeed__fail(&c->msg, DETFEED_ENOMEM,
                           "%s: out of memory for a %ux%u image", name, (unsigned)*w,
                           (unsigned)*h);
    if (rc == DETFEED_OK) {
        convert(img, (size_t)*w * *h, comp, prec - 8, how);
        *out = img;
    }
    jp2_close(&j);
    return rc;
}

int detfeed__jp2_probe(detfeed_codec *c, const char *name, const uint8_t *data,
                       size_t size, uint32_t *w, uint32_t *h)
{
    jp2 j = {.mem = {data, size, 0}};
    uint32_t prec;
    *w = *h = 0;
    int rc = open_header(c, name, &j, detfeed__jp2_sniff(data, size));
    if (rc == DETFEED_OK)
        rc = check_components(c, name, &j, &prec);
    if (rc == DETFEED_OK)
        rc = check_size(c, name, j.image, w, h);
    jp2_close(&j);
    return rc;
}
