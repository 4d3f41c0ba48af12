/*
 * resize.c - OpenCV-exact INTER_LINEAR resize of 8-bit images.
 *
 * The arithmetic is OpenCV 4.6's cv::resize(INTER_LINEAR) for CV_8U as
 * measured against Debian's build (imgproc/src/resize.cpp):
 *
 *   - per destination column and row, a source index and two 11-bit
 *     fixed-point weights (scale 2048), computed in float from a double
 *     expression and rounded half to even;
 *   - a horizontal pass into int32 rows, exact (sums of two products);
 *   - a vertical pass that rounds in three stages, >> 4, the high half of a
 *     16x16-bit product (>> 16) for each of the two rows, then (u + 2) >> 2.
 *     OpenCV's SIMD loop does this and so does its scalar loop for the rest
 *     of the row (a specialisation for uchar), so every element of every row
 *     gets it: no element is rounded exactly as (H0*b0 + H1*b1 + 2^21) >> 22;
 *   - an exact 2x shrink in both directions runs OpenCV's INTER_AREA
 *     instead, which is a rounded 2x2 mean.
 *
 * All intermediate values are non-negative and small enough for int32 (the
 * bounds are stated where they matter), so no shift here touches a negative
 * number and nothing can overflow.
 */
#include "core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* OpenCV's INTER_RESIZE_COEF_BITS: weights are multiples of 1/2048. */
#define COEF_BITS  11
#define COEF_SCALE (1 << COEF_BITS)

/* One destination column: where its taps start in a source row (in bytes,
 * already multiplied by the channel count) and their two weights. */
typedef struct col_tap {
    size_t ofs;
    int32_t a0, a1;
} col_tap;

/* One destination row: the two source rows it blends and their weights. */
typedef struct row_tap {
    int y0, y1;
    int32_t b0, b1;
} row_tap;

/* Everything one resize call needs beyond its arguments; lives on the stack,
 * its arrays on the heap. */
typedef struct plan {
    const uint8_t *src;
    size_t src_stride;
    int cn;
    int dst_width;
    int xmax;         /* columns [xmax, dst_width) repeat the last source pixel */
    size_t row_elems; /* dst_width * cn: elements of one horizontal row */
    col_tap *cols;
    row_tap *rows;
    int32_t *ring[2]; /* two horizontal rows, reused while they stay needed */
    int ring_y[2];    /* the source row each ring slot holds, -1 for none */
} plan;

/* OpenCV's saturate_cast<short>(float): round half to even (the default FP
 * rounding mode, as cvRound uses), then clamp. The weights lie in [0, 2048],
 * so the clamp never bites; it is kept so that the rule is stated whole. */
static int32_t coef_q11(float w)
{
    long r = lrintf(w * (float)COEF_SCALE);
    if (r < INT16_MIN)
        return INT16_MIN;
    if (r > INT16_MAX)
        return INT16_MAX;
    return (int32_t)r;
}

/* OpenCV divides in this order (inv = dst / src, then scale = 1 / inv), and
 * the double rounding of that quotient is part of the result. */
static double axis_scale(int src_n, int dst_n)
{
    return 1.0 / ((double)dst_n / (double)src_n);
}

/* The source coordinate of destination index d with half-pixel centres,
 * computed in double and rounded once to float, then split into an integer
 * part (floor) and a float fraction, as OpenCV does. The multiply and the
 * subtraction must stay two roundings (OpenCV's resize.cpp is built without
 * FMA); the library's -ffp-contract=off keeps them apart. */
static void map_coord(int d, double scale, int *index, float *frac)
{
    float f = (float)(((double)d + 0.5) * scale - 0.5);
    float fl = floorf(f);
    *index = (int)fl;
    *frac = f - fl;
}

/* Column taps. Columns left of the source clamp to pixel 0; columns whose
 * first tap is the last source pixel (or beyond) use that pixel alone with
 * weight 2048. The index is monotonic in d, so the clamped columns form a
 * suffix [xmax, dn): the horizontal pass never reads past the row there. */
static int plan_columns(col_tap *cols, int src_n, int dst_n, int cn)
{
    double scale = axis_scale(src_n, dst_n);
    int xmax = dst_n;
    for (int d = 0; d < dst_n; d++) {
        int s;
        float f;
        map_coord(d, scale, &s, &f);
        if (s < 0) {
            s = 0;
            f = 0.0f;
        }
        if (s >= src_n - 1) {
            s = src_n - 1;
            f = 0.0f;
            if (xmax == dst_n)
                xmax = d;
        }
        cols[d].ofs = (size_t)s * (size_t)cn;
        cols[d].a0 = coef_q11(1.0f - f);
        cols[d].a1 = coef_q11(f);
    }
    return xmax;
}

static int clamp_row(int y, int n)
{
    return y < 0 ? 0 : y >= n ? n - 1 : y;
}

/* Row taps. Unlike columns, the weights are not reset at the edges: the
 * source rows are clamped instead, so an edge row blends a row with itself
 * using the unclamped weights, and the staged rounding of the vertical pass
 * can then differ from the row itself. */
static void plan_rows(row_tap *rows, int src_n, int dst_n)
{
    double scale = axis_scale(src_n, dst_n);
    for (int d = 0; d < dst_n; d++) {
        int s;
        float f;
        map_coord(d, scale, &s, &f);
        rows[d].y0 = clamp_row(s, src_n);
        rows[d].y1 = clamp_row(s + 1, src_n);
        rows[d].b0 = coef_q11(1.0f - f);
        rows[d].b1 = coef_q11(f);
    }
}

/* The horizontal pass of one source row, exact in int32: a value is at most
 * 255 * (a0 + a1) <= 255 * 2049 = 522495 (the two rounded weights of a
 * column sum to 2047..2049). `cn` is a literal at each call site so that the
 * compiler specialises the channel loops. */
static inline void hpass(const plan *p, const uint8_t *s, int32_t *h, const int cn)
{
    const col_tap *cols = p->cols;
    int32_t *out = h;
    for (int dx = 0; dx < p->xmax; dx++, out += cn) {
        const uint8_t *t = s + cols[dx].ofs;
        int32_t a0 = cols[dx].a0, a1 = cols[dx].a1;
        for (int c = 0; c < cn; c++)
            out[c] = t[c] * a0 + t[c + cn] * a1;
    }
    for (int dx = p->xmax; dx < p->dst_width; dx++, out += cn) {
        const uint8_t *t = s + cols[dx].ofs;
        for (int c = 0; c < cn; c++)
            out[c] = t[c] * COEF_SCALE;
    }
}

static void hpass_row(const plan *p, int y, int32_t *h)
{
    const uint8_t *s = p->src + (size_t)y * p->src_stride;
    if (p->cn == 3)
        hpass(p, s, h, 3);
    else
        hpass(p, s, h, 1);
}

/* The horizontal row of source row y, from the ring when one slot already
 * holds it, else computed into the slot that does not hold `keep` (the other
 * row the current output row needs). Source rows are visited in increasing
 * order, so each one is computed once. */
static const int32_t *ring_row(plan *p, int y, int keep)
{
    for (int i = 0; i < 2; i++)
        if (p->ring_y[i] == y)
            return p->ring[i];
    int i = p->ring_y[0] == keep ? 1 : 0;
    hpass_row(p, y, p->ring[i]);
    p->ring_y[i] = y;
    return p->ring[i];
}

/* The vertical blend as OpenCV computes it for 8-bit output: each
 * horizontal value is shifted right by 4 to fit int16 (522495 >> 4 = 32655),
 * multiplied by its 11-bit weight keeping the high 16 bits of the 32-bit
 * product, the two halves are added and rounded by (u + 2) >> 2. The sum is
 * at most (32655 * 2049) >> 16 = 1020, so the result fits a byte; the clamp
 * states OpenCV's saturating pack, it never bites. Every value fits int16,
 * and the loop is written in int16 so that compilers vectorise it in 16-bit
 * lanes (a high-half multiply), about twice as fast as in int32. */
static void vpass(const int32_t *h0, const int32_t *h1, int32_t b0, int32_t b1,
                  uint8_t *d, size_t n)
{
    const int16_t w0 = (int16_t)b0, w1 = (int16_t)b1;
    for (size_t e = 0; e < n; e++) {
        int16_t t0 = (int16_t)(h0[e] >> 4), t1 = (int16_t)(h1[e] >> 4);
        int16_t m0 = (int16_t)((t0 * w0) >> 16), m1 = (int16_t)((t1 * w1) >> 16);
        int16_t u = (int16_t)(m0 + m1 + 2);
        int16_t v = (int16_t)(u >> 2);
        d[e] = (uint8_t)(v > 255 ? 255 : v);
    }
}

/* OpenCV's INTER_AREA for an exact 2x shrink: the 2x2 mean rounded half up.
 * Rows and columns pair up exactly (src = 2 * dst), so there is no edge. For
 * 8-bit input this is also what the bilinear arithmetic gives at ratio 2
 * (weights 1024 each, no bit lost in the staged rounding); it is written as
 * OpenCV runs it, and it is the faster of the two. `cn` is a literal at each
 * call site, as in hpass(). */
static inline void area_2x_row(const uint8_t *s0, const uint8_t *s1, uint8_t *d, int dw,
                               const int cn)
{
    for (int x = 0; x < dw; x++, d += cn, s0 += 2 * cn, s1 += 2 * cn)
        for (int c = 0; c < cn; c++)
            d[c] = (uint8_t)((s0[c] + s0[c + cn] + s1[c] + s1[c + cn] + 2) >> 2);
}

static void area_2x(const uint8_t *src, size_t src_stride, uint8_t *dst,
                    size_t dst_stride, int dw, int dh, int cn)
{
    for (int y = 0; y < dh; y++) {
        const uint8_t *s0 = src + 2 * (size_t)y * src_stride;
        uint8_t *d = dst + (size_t)y * dst_stride;
        if (cn == 3)
            area_2x_row(s0, s0 + src_stride, d, dw, 3);
        else
            area_2x_row(s0, s0 + src_stride, d, dw, 1);
    }
}

static void copy_rows(const uint8_t *src, size_t src_stride, uint8_t *dst,
                      size_t dst_stride, size_t row_bytes, int h)
{
    for (int y = 0; y < h; y++)
        memcpy(dst + (size_t)y * dst_stride, src + (size_t)y * src_stride, row_bytes);
}

/* The bytes an image of this geometry spans, or 0 when the geometry is bad
 * (NULL, non-positive size, stride below the row, or a span size_t cannot
 * hold, which no real buffer has). *row_bytes receives width * channels. */
static size_t image_bytes(const void *p, size_t stride, int width, int height, int cn,
                          size_t *row_bytes)
{
    if (p == NULL || width <= 0 || height <= 0 ||
        !detfeed__mul_size((size_t)width, (size_t)cn, row_bytes) || stride < *row_bytes)
        return 0;
    return detfeed__image_span(stride, *row_bytes, height);
}

static void plan_free(plan *p)
{
    free(p->cols);
    free(p->rows);
    free(p->ring[0]);
    free(p->ring[1]);
}

/* Allocates the tables and the two ring rows. A size that does not fit
 * size_t cannot be allocated either, so it reports DETFEED_ENOMEM too. */
static int plan_alloc(plan *p, int dw, int dh)
{
    size_t ncols, nrows, nring;
    p->ring_y[0] = p->ring_y[1] = -1;
    if (!detfeed__mul_size((size_t)dw, sizeof(col_tap), &ncols) ||
        !detfeed__mul_size((size_t)dh, sizeof(row_tap), &nrows) ||
        !detfeed__mul_size(p->row_elems, sizeof(int32_t), &nring))
        return DETFEED_ENOMEM;
    p->cols = malloc(ncols);
    p->rows = malloc(nrows);
    p->ring[0] = malloc(nring);
    p->ring[1] = malloc(nring);
    if (!p->cols || !p->rows || !p->ring[0] || !p->ring[1])
        return DETFEED_ENOMEM;
    return DETFEED_OK;
}

static int resize_bilinear(const uint8_t *src, size_t src_stride, int sw, int sh,
                           uint8_t *dst, size_t dst_stride, int dw, int dh, int cn)
{
    plan p = {.src = src, .src_stride = src_stride, .cn = cn, .dst_width = dw};
    p.row_elems = (size_t)dw * (size_t)cn; /* checked by image_bytes */
    int rc = plan_alloc(&p, dw, dh);
    if (rc == DETFEED_OK) {
        p.xmax = plan_columns(p.cols, sw, dw, cn);
        plan_rows(p.rows, sh, dh);
        for (int y = 0; y < dh; y++) {
            const row_tap *r = &p.rows[y];
            const int32_t *h0 = ring_row(&p, r->y0, r->y1);
            const int32_t *h1 = ring_row(&p, r->y1, r->y0);
            vpass(h0, h1, r->b0, r->b1, dst + (size_t)y * dst_stride, p.row_elems);
        }
    }
    plan_free(&p);
    return rc;
}

int detfeed_resize_linear(const uint8_t *src, size_t src_stride, int src_width,
                          int src_height, uint8_t *dst, size_t dst_stride,
                          int dst_width, int dst_height, int channels)
{
    if (channels != 1 && channels != 3)
        return DETFEED_EINVAL;
    size_t src_row = 0, dst_row = 0;
    size_t ns = image_bytes(src, src_stride, src_width, src_height, channels, &src_row);
    size_t nd = image_bytes(dst, dst_stride, dst_width, dst_height, channels, &dst_row);
    if (ns == 0 || nd == 0 || detfeed__overlap(src, ns, dst, nd))
        return DETFEED_EINVAL;
    if (src_width == dst_width && src_height == dst_height) {
        copy_rows(src, src_stride, dst, dst_stride, src_row, src_height);
        return DETFEED_OK;
    }
    /* OpenCV swaps INTER_LINEAR for INTER_AREA when both ratios are exactly
     * 2 (its test is on the double ratios, which are exactly 2 only here). */
    if (src_width == 2 * (int64_t)dst_width && src_height == 2 * (int64_t)dst_height) {
        area_2x(src, src_stride, dst, dst_stride, dst_width, dst_height, channels);
        return DETFEED_OK;
    }
    return resize_bilinear(src, src_stride, src_width, src_height, dst, dst_stride,
                           dst_width, dst_height, channels);
}

void detfeed_load_size(int width, int height, int imgsz, int *out_width,
                       int *out_height)
{
    if (out_width == NULL || out_height == NULL)
        return;
    if (width < 1 || height < 1 || imgsz < 1) { /* no image, or no size: none */
        *out_width = *out_height = 0;
        return;
    }
    double r = (double)imgsz / (double)(width > height ? width : height);
    if (r == 1.0) {
        *out_width = width;
        *out_height = height;
        return;
    }
    double w = ceil((double)width * r), h = ceil((double)height * r);
    *out_width = w < imgsz ? (int)w : imgsz;
    *out_height = h < imgsz ? (int)h : imgsz;
}
