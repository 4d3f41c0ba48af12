/*
 * avif_rgb.c - AVIF's decoded YUV planes to BGR with the arithmetic Pillow
 * 13's wheel applies: Pillow asks libavif 1.4.2 for 8-bit RGB (RGBA with
 * alpha, GRAY for 4:0:0 without alpha) with libavif's default chroma
 * upsampling, and libavif hands the conversion to libyuv (version 1924)
 * where libyuv has a function and constants for it:
 *
 * - 4:4:4: I444ToRGB24Matrix (I444AlphaToARGBMatrix with alpha);
 *   4:2:2: I422ToRGB24MatrixFilter, linear (ScaleRowUp2_Linear on each
 *   chroma row); 4:2:0: I420ToRGB24MatrixFilter, bilinear (the first and
 *   the last rows of an even height take the nearest chroma row linearly,
 *   every other pair of rows ScaleRowUp2_Bilinear of two chroma rows). The
 *   alpha variants upsample and convert the same way.
 * - each pixel in libyuv's fixed point (YuvPixel): y1 = (y * 0x0101 * yg)
 *   >> 16 (unsigned) + yb; b = (y1 + (u - 128) ub) >> 6, g = (y1 - ((u -
 *   128) ug + (v - 128) vg)) >> 6, r = (y1 + (v - 128) vr) >> 6, each
 *   clamped to 0..255. The constants are libyuv's kYuvJPEG (full range
 *   601), kYuvF709, kYuvV2020 and kYuvI601, kYuvH709, kYuv2020 (limited),
 *   built without LIBYUV_UNLIMITED_DATA (ub capped at 128).
 * - 10 and 12 bits: libyuv has no RGB24 function for them, so libavif
 *   first reduces each plane to 8 bits (Convert16To8Plane: (v * 2^(24 -
 *   depth)) >> 16, clamped) and then converts as above.
 * - 4:0:0 without alpha (GRAY): libyuv has no gray output, libavif's own
 *   float path runs: gray = (uint8)(0.5f + clamp((y - bias) / range, 0, 1)
 *   * 255.0f) in float, bias 16 << (depth - 8) and range 219 << (depth - 8)
 *   for limited range, 0 and 2^depth - 1 for full; Pillow's L to RGB
 *   repeats it. With alpha (RGBA): libyuv's I400ToARGBMatrix, each pixel
 *   (y * 0x0101 * yg) >> 16 + yb, >> 6, clamped.
 * - identity matrix (4:4:4, 8 bits, full range): libavif's own copy, G from
 *   Y, B from U, R from V.
 *
 * Measured against Pillow 13.0.0 by tests/oracle/test_avif_oracle.py.
 */
#include "avif_internal.h"

#include <stdlib.h>
#include <string.h>

/* libyuv's YuvConstants as its C rows read them. */
typedef struct {
    int yg, yb, ub, ug, vg, vr;
} yuv_k;

static const yuv_k k_full[3] = {
    {16320, 32, 113, 22, 46, 90},  /* kYuvJPEGConstants */
    {16320, 32, 119, 12, 30, 101}, /* kYuvF709Constants */
    {16320, 32, 120, 11, 37, 94},  /* kYuvV2020Constants */
};
static const yuv_k k_limited[3] = {
    {18997, -1160, 128, 25, 52, 102}, /* kYuvI601Constants */
    {18997, -1160, 128, 14, 34, 115}, /* kYuvH709Constants */
    {19003, -1160, 128, 12, 42, 107}, /* kYuv2020Constants */
};

static uint8_t clamp6(int32_t v)
{
    if (v < 0)
        return 0;
    v >>= 6;
    return (uint8_t)(v > 255 ? 255 : v);
}

static int32_t luma(const yuv_k *k, int y)
{
    return (int32_t)(((uint32_t)y * 0x0101u * (uint32_t)k->yg) >> 16) + k->yb;
}

/* One row of full-resolution Y, U, V to BGR (libyuv's I444ToRGB24Row). */
static void row_444(const yuv_k *k, const uint8_t *y, const uint8_t *u,
                    const uint8_t *v, uint8_t *bgr, uint32_t w)
{
    for (uint32_t i = 0; i < w; i++, bgr += 3) {
        int32_t y1 = luma(k, y[i]);
        int ui = u[i] - 128, vi = v[i] - 128;
        bgr[0] = clamp6(y1 + ui * k->ub);
        bgr[1] = clamp6(y1 - (ui * k->ug + vi * k->vg));
        bgr[2] = clamp6(y1 + vi * k->vr);
    }
}

/* ScaleRowUp2_Linear_Any: a chroma row to w samples, 3:1 weights between
 * neighbours, the first and last samples copied. */
static void up_linear(const uint8_t *s, uint8_t *d, uint32_t w)
{
    uint32_t work = (w - 1) & ~1u;
    d[0] = s[0];
    for (uint32_t x = 0; x < work / 2; x++) {
        d[2 * x + 1] = (uint8_t)((s[x] * 3 + s[x + 1] + 2) >> 2);
        d[2 * x + 2] = (uint8_t)((s[x] + s[x + 1] * 3 + 2) >> 2);
    }
    d[w - 1] = s[(w - 1) / 2];
}

/* ScaleRowUp2_Bilinear_Any: chroma rows s and t to the two rows d (nearer
 * s) and e (nearer t), 9:3:3:1 weights, the edge columns 3:1 vertically. */
static void up_bilinear(const uint8_t *s, const uint8_t *t, uint8_t *d, uint8_t *e,
                        uint32_t w)
{
    uint32_t work = (w - 1) & ~1u, l = (w - 1) / 2;
    d[0] = (uint8_t)((3 * s[0] + t[0] + 2) >> 2);
    e[0] = (uint8_t)((s[0] + 3 * t[0] + 2) >> 2);
    for (uint32_t x = 0; x < work / 2; x++) {
        int a = s[x], b = s[x + 1], c = t[x], f = t[x + 1];
        d[2 * x + 1] = (uint8_t)((a * 9 + b * 3 + c * 3 + f + 8) >> 4);
        d[2 * x + 2] = (uint8_t)((a * 3 + b * 9 + c + f * 3 + 8) >> 4);
        e[2 * x + 1] = (uint8_t)((a * 3 + b + c * 9 + f * 3 + 8) >> 4);
        e[2 * x + 2] = (uint8_t)((a + b * 3 + c * 3 + f * 9 + 8) >> 4);
    }
    d[w - 1] = (uint8_t)((3 * s[l] + t[l] + 2) >> 2);
    e[w - 1] = (uint8_t)((s[l] + 3 * t[l] + 2) >> 2);
}

/* 8-bit planes as libyuv reads them. */
typedef struct {
    const uint8_t *p[3];
    size_t stride[3];
} planes8;

static void conv_444(const yuv_k *k, const planes8 *p, uint32_t w, uint32_t h,
                     uint8_t *bgr)
{
    for (uint32_t r = 0; r < h; r++)
        row_444(k, p->p[0] + r * p->stride[0], p->p[1] + r * p->stride[1],
                p->p[2] + r * p->stride[2], bgr + (size_t)r * w * 3, w);
}

/* I422ToRGB24MatrixLinear: each row's chroma upsampled horizontally. */
static void conv_422(const yuv_k *k, const planes8 *p, uint32_t w, uint32_t h,
                     uint8_t *tmp, uint8_t *bgr)
{
    uint8_t *tu = tmp, *tv = tmp + w;
    for (uint32_t r = 0; r < h; r++) {
        up_linear(p->p[1] + r * p->stride[1], tu, w);
        up_linear(p->p[2] + r * p->stride[2], tv, w);
        row_444(k, p->p[0] + r * p->stride[0], tu, tv, bgr + (size_t)r * w * 3, w);
    }
}

/* I420ToRGB24MatrixBilinear's order of rows. */
static void conv_420(const yuv_k *k, const planes8 *p, uint32_t w, uint32_t h,
                     uint8_t *tmp, uint8_t *bgr)
{
    uint8_t *u1 = tmp, *u2 = tmp + w, *v1 = tmp + 2 * (size_t)w,
            *v2 = tmp + 3 * (size_t)w;
    const uint8_t *y = p->p[0], *u = p->p[1], *v = p->p[2];
    size_t row = (size_t)w * 3;
    up_linear(u, u1, w);
    up_linear(v, v1, w);
    row_444(k, y, u1, v1, bgr, w);
    bgr += row, y += p->stride[0];
    for (uint32_t r = 0; r + 2 < h; r += 2) {
        up_bilinear(u, u + p->stride[1], u1, u2, w);
        up_bilinear(v, v + p->stride[2], v1, v2, w);
        row_444(k, y, u1, v1, bgr, w);
        bgr += row, y += p->stride[0];
        row_444(k, y, u2, v2, bgr, w);
        bgr += row, y += p->stride[0];
        u += p->stride[1], v += p->stride[2];
    }
    if (!(h & 1)) {
        up_linear(u, u1, w);
        up_linear(v, v1, w);
        row_444(k, y, u1, v1, bgr, w);
    }
}

/* libavif's identity fast path: G = Y, B = U, R = V. */
static void conv_identity(const planes8 *p, uint32_t w, uint32_t h, uint8_t *bgr)
{
    for (uint32_t r = 0; r < h; r++)
        for (uint32_t i = 0; i < w; i++, bgr += 3) {
            bgr[0] = p->p[1][r * p->stride[1] + i];
            bgr[1] = p->p[0][r * p->stride[0] + i];
            bgr[2] = p->p[2][r * p->stride[2] + i];
        }
}

/* libyuv's I400ToARGBRow (YPixel). */
static void conv_400_yuv(const yuv_k *k, const planes8 *p, uint32_t w, uint32_t h,
                         uint8_t *bgr)
{
    for (uint32_t r = 0; r < h; r++)
        for (uint32_t i = 0; i < w; i++, bgr += 3)
            bgr[0] = bgr[1] = bgr[2] = clamp6(luma(k, p->p[0][r * p->stride[0] + i]));
}

static uint16_t sample(const detfeed__yuv *y, int c, uint32_t r, uint32_t i)
{
    const uint8_t *row = y->plane[c] + r * y->stride[c];
    if (y->depth == 8)
        return row[i];
    uint16_t v;
    memcpy(&v, row + 2 * (size_t)i, 2);
    return v;
}

/* libavif's float path for GRAY output (avifImageYUVAnyToRGBAnySlow). */
static void conv_400_gray(const detfeed__yuv *y, uint8_t *bgr)
{
    uint32_t max = (1u << y->depth) - 1;
    float bias = y->full_range ? 0.0f : (float)(16 << (y->depth - 8));
    float range = y->full_range ? (float)max : (float)(219 << (y->depth - 8));
    for (uint32_t r = 0; r < y->height; r++)
        for (uint32_t i = 0; i < y->width; i++, bgr += 3) {
            uint16_t v = sample(y, 0, r, i);
            float t = ((float)(v < max ? v : max) - bias) / range;
            t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
            bgr[0] = bgr[1] = bgr[2] = (uint8_t)(0.5f + t * 255.0f);
        }
}

static uint32_t plane_width(const detfeed__yuv *y, int c)
{
    return c == 0 || y->layout == DETFEED_YUV444 ? y->width : (y->width + 1) / 2;
}

static uint32_t plane_height(const detfeed__yuv *y, int c)
{
    return c == 0 || y->layout != DETFEED_YUV420 ? y->height : (y->height + 1) / 2;
}

/* Convert16To8Plane of every plane into `buf` (libavif's downshift). */
static void downshift(const detfeed__yuv *y, int planes, uint8_t *buf, planes8 *p)
{
    uint32_t scale = 1u << (24 - y->depth);
    for (int c = 0; c < planes; c++) {
        uint32_t pw = plane_width(y, c), ph = plane_height(y, c);
        p->p[c] = buf, p->stride[c] = pw;
        for (uint32_t r = 0; r < ph; r++)
            for (uint32_t i = 0; i < pw; i++) {
                uint32_t v = (sample(y, c, r, i) * scale) >> 16;
                *buf++ = (uint8_t)(v > 255 ? 255 : v);
            }
    }
}

static size_t plane_bytes(const detfeed__yuv *y, int planes)
{
    size_t n = 0;
    for (int c = 0; c < planes; c++)
        n += (size_t)plane_width(y, c) * plane_height(y, c);
    return n;
}

static void convert8(const detfeed__yuv *y, const planes8 *p, uint8_t *tmp,
                     uint8_t *bgr)
{
    int m = y->matrix == DETFEED_YUVM_IDENTITY ? 0 : (int)y->matrix;
    const yuv_k *k = y->full_range ? &k_full[m] : &k_limited[m];
    if (y->layout == DETFEED_YUV400)
        conv_400_yuv(k, p, y->width, y->height, bgr);
    else if (y->matrix == DETFEED_YUVM_IDENTITY)
        conv_identity(p, y->width, y->height, bgr);
    else if (y->layout == DETFEED_YUV444)
        conv_444(k, p, y->width, y->height, bgr);
    else if (y->layout == DETFEED_YUV422)
        conv_422(k, p, y->width, y->height, tmp, bgr);
    else
        conv_420(k, p, y->width, y->height, tmp, bgr);
}

int detfeed__yuv_to_bgr(const detfeed__yuv *y, uint8_t *bgr)
{
    if (y->layout == DETFEED_YUV400 && !y->has_alpha) {
        conv_400_gray(y, bgr);
        return 1;
    }
    int planes = y->layout == DETFEED_YUV400 ? 1 : 3;
    size_t rows = 4 * (size_t)y->width;
    size_t shifted = y->depth > 8 ? plane_bytes(y, planes) : 0;
    uint8_t *tmp = malloc(rows + shifted);
    if (tmp == NULL)
        return 0;
    planes8 p;
    if (y->depth > 8) {
        downshift(y, planes, tmp + rows, &p);
    } else {
        for (int c = 0; c < planes; c++)
            p.p[c] = y->plane[c], p.stride[c] = y->stride[c];
    }
    convert8(y, &p, tmp, bgr);
    free(tmp);
    return 1;
}
