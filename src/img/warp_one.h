/*
 * warp_one.h - the warps of detfeed_warp_affine_cv and
 * detfeed_warp_perspective_cv as a function of ONE destination pixel (x, y),
 * for a kernel that computes one output pixel per thread (the GPU recipe),
 * reading from a canvas that is described, not materialized (the mosaic's
 * tiles and its fill).
 *
 * The CPU computes the warps row by row (warp.c, warp_rows.c for OpenCV
 * 4.x; warp5.c, warp5_rows.c for 5.x, their arithmetic in warp_px.h). This
 * header restates the same arithmetic per pixel, operation for operation,
 * so that detfeed__warp_one_px(p, c, x, y) is the byte the CPU warp writes
 * at (x, y) when it warps the materialized canvas c (tests/unit/
 * test_warp_one.c compares every byte on every stack). Everything a
 * position needs is precomputed on the host by detfeed__warp_one_plan
 * (warp_one.c) into a plain struct without pointers, which a kernel takes
 * by value.
 *
 * The functions below are DETFEED__HD: host functions here, host and device
 * functions when nvcc compiles them. Exactness rules, as for color_px.h:
 * host code is compiled with -ffp-contract=off, CUDA code with -fmad=false,
 * --prec-div=true and --ftz=false (no fast math): every fused multiply-add
 * is written as fmaf, every other + - * / rounds on its own (IEEE on both;
 * nvcc's default -fmad=true would contract float and double products into
 * fma and change bytes). Only fmaf and rint of the C library are used: CUDA
 * has both as device functions with IEEE results (rint: half to even), so
 * no host-only construct (lrint, __double2int_rn, cvRound) is needed.
 *
 * ---- The stacks (detfeed__warp_one.kind) ----------------------------------
 *
 * OpenCV 4.x (DETFEED_CV_4, DETFEED_CV_4_DEBIAN; warp.c has the details).
 * The matrix is inverted in double (md). A position is a pair of int32
 * in 1/32 pixel:
 *   CV4_AFFINE  per column  adelta = cvRound(md0 * x * 1024),
 *                           bdelta = cvRound(md3 * x * 1024);
 *               per row     X0 = cvRound((md1 * y + md2) * 1024) + 16,
 *                           Y0 = cvRound((md4 * y + md5) * 1024) + 16;
 *               per pixel   X = (X0 + adelta) >> 5, Y = (Y0 + bdelta) >> 5
 *               (int32 adds wrap; >> is floor division). cvRound is x86's
 *               conversion: half to even, INT_MIN out of int32 range or NaN.
 *   CV4_PERSP   OpenCV cuts each row into column blocks of `block` pixels
 *               (bw0 = min(1024 / min(16, dst_h), dst_w)); for column
 *               block start xb = x - x % block and i = x - xb:
 *                   X0 = md0 * xb + md1 * y + md2   (likewise Y0, W0)
 *                   W  = W0 + md6 * i;  W = W ? 32 / W : 0
 *                   X  = cvRound(clamp((X0 + md0 * i) * W, INT_MIN, INT_MAX))
 *               in double (NaN gives INT_MIN). The grouping by blocks
 *               changes the last bit of some positions: x must not be
 *               regrouped as md0 * x + md1 * y + md2.
 * Sampling (remap): sx = saturate_int16(X >> 5), fx = X & 31 (likewise y);
 * taps p00 = (sx, sy), p01 = (sx + 1, sy), p10 = (sx, sy + 1), p11 =
 * (sx + 1, sy + 1), a tap outside the source reads the border value; per
 * channel
 *     v = (32 - fy) ((32 - fx) p00 + fx p01) + fy ((32 - fx) p10 + fx p11)
 *     byte = (v + 512) >> 10
 * which is OpenCV's 15-bit weight table, its (0, 0) fix-up included
 * (warp_px.h derives it). A position with all four taps outside gives the
 * border value, as the per-tap rule does. (The int16 saturation cannot
 * change a byte for a source below 32767 pixels a side: a saturated tap is
 * outside either way. It is kept as OpenCV's rule.)
 *
 * OpenCV 5.x (DETFEED_CV_5_0, DETFEED_CV_5_1; warp5.c has the details).
 * A position is a float per axis, split into the top-left tap (floor,
 * clamped to [-2, W] resp. [-2, H]) and the fraction in [0, 1):
 *   FLOAT       5.0, and 5.1 with IPP off (or a source of 1 pixel a side):
 *               the matrix rounded to float (mf); per row
 *               Mx = y * mf1 + mf2 (two roundings, likewise My, Mw); pixels
 *               x < nvec (whole vector blocks of `block` = 16 fused, 8
 *               unfused) take sx = FMA(mf0, x, Mx), the others (the row's
 *               scalar tail) sx = FMA(x, mf0, y * mf1) + mf2 fused, or
 *               (x * mf0 + y * mf1) + mf2 unfused; perspective divides sx
 *               and sy by w computed alike. FMA is fmaf when `fused` (the
 *               AVX2 build of OpenCV), a rounded product then a rounded sum
 *               otherwise (its SSE build).
 *   IPP_SCALE   5.1 with IPP, affine with md1 == md3 == 0 where some
 *               destination column has 0 <= sx <= W - 2 and some row 0 <=
 *               sy <= H - 2: sx = md0 * x + md2, sy = md4 * y + md5 in
 *               double, floor in double, the fraction rounded to float.
 *   IPP         5.1 with IPP, any other matrix: the position in double
 *               ((md0 x + md1 y) + md2, perspective divided by w). An
 *               inner pixel, 0 <= sx < W - 1 and 0 <= sy < H - 1 in double
 *               (all four taps inside), rounds the position to float and
 *               splits it in float; any other pixel (an edge pixel) splits
 *               the double as IPP_SCALE does: floor in double, the fraction
 *               rounded to float.
 * Sampling: per channel, taps outside the source read the border value,
 *     v0 = FMA(ax, p01 - p00, p00),  v1 = FMA(ax, p11 - p10, p10)
 *     v  = FMA(ay, v1 - v0, v0),     byte = clamp(round half even(v))
 * except IPP's general kernel (kind IPP), which lerps along y first:
 *     v0 = FMA(ay, p10 - p00, p00),  v1 = FMA(ay, p11 - p01, p01)
 *     v  = FMA(ax, v1 - v0, v0)
 * and IPP_SCALE at the pixels with one x tap inside (ix == -1 or W - 1)
 * and both y taps inside (0 <= iy < H - 1), which lerp along y first too.
 * IPP_SCALE's other pixels with one y tap inside (iy == -1 or H - 1, the
 * corners included) lerp along x first and, when md4 < 0 (a flipped y
 * axis), lerp along y from the bottom row: v = FMA(1 - ay, v0 - v1, v1),
 * 1 - ay rounded to float.
 * IPP fuses the FMAs on AVX2 (and, unmeasured, AVX-512) CPUs and rounds the
 * product then the sum on SSE4.2 ones (`fused` follows the CPU setting, as
 * for the float kernel). A pixel with all four taps outside is the border.
 * Non-finite positions (NaN or infinite matrices, w == 0): IPP stores the
 * border. The float kernel stores the border in its scalar tail and in a
 * vector block whose pixels all have their four taps outside; in any other
 * vector block a non-finite pixel stores nan_byte (0 in 5.0, 255 in 5.1).
 * So that one rare case looks at the other pixels of the pixel's block.
 *
 * There is no identity shortcut on the CPU: every matrix, the identity
 * included, goes through this arithmetic (and gives a copy).
 *
 * ---- The canvas -------------------------------------------------------------
 *
 * The warp's source is a canvas of w x h pixels (BGR) made of up to four
 * tiles: tile k covers the canvas rectangle [x0, x1) x [y0, y1) and its
 * pixel (0, 0) sits at canvas (ox, oy), so canvas (cx, cy) is
 * px + (cy - oy) * stride + (cx - ox) * 3. A tap inside [0, w) x [0, h)
 * reads the first tile whose rectangle contains it, else `fill` (the
 * mosaic's 114); a tap outside reads the warp's border value. A plain image
 * is a canvas of one tile covering it (detfeed__canvas_image). The canvas
 * must be as large as the plan's source (w == src_w, h == src_h), every
 * rectangle inside the canvas and inside its tile's pixels; nothing here
 * checks that.
 *
 * ---- For a kernel ------------------------------------------------------------
 *
 * detfeed__warp_one_px recomputes per pixel what the CPU computes once per
 * row or column; a kernel may hoist those values (they are the same
 * operations, so the bytes do not change): 4.x affine X0, Y0 per row and
 * adelta, bdelta per column; 4.x perspective X0, Y0, W0 per (row, column
 * block); the float kernel's Mx, My, Mw per row; IPP_SCALE's x split per
 * column and y split per row. The loop of detfeed__wo_nan_is_border runs
 * only for non-finite positions (degenerate matrices). Pass M to the plan
 * exactly as the CPU route passes it to the warp (Ultralytics' float32
 * matrix converted to double).
 */
#ifndef DETFEED_WARP_ONE_H
#define DETFEED_WARP_ONE_H

#include "detfeed_img.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* Host and device functions under nvcc, plain functions in C (the same
 * definition as color_px.h). */
#ifdef __CUDACC__
#define DETFEED__HD __host__ __device__
#else
#define DETFEED__HD
#endif

/* The arithmetic a plan selects (detfeed__warp_one.kind). */
enum {
    DETFEED__WARP_ONE_CV4_AFFINE = 0, /* 4.x affine, fixed point */
    DETFEED__WARP_ONE_CV4_PERSP = 1,  /* 4.x perspective, double in column blocks */
    DETFEED__WARP_ONE_FLOAT = 2,      /* 5.0 / 5.1 without IPP, affine or persp */
    DETFEED__WARP_ONE_IPP_SCALE = 3,  /* 5.1 IPP, scale and translation */
    DETFEED__WARP_ONE_IPP = 4         /* 5.1 IPP, other affine or perspective */
};

/* Everything the per-pixel arithmetic needs (detfeed__warp_one_plan): plain
 * data, no pointers, the same layout for the host compiler and nvcc. */
typedef struct detfeed__warp_one {
    int32_t kind;  /* DETFEED__WARP_ONE_* */
    int32_t block; /* CV4_PERSP: column block width bw0; FLOAT: vector
                      block (16 fused, 8 unfused); others 1 */
    int32_t nvec;  /* FLOAT: first column of the scalar tail,
                      dst_w - dst_w % block; others dst_w */
    int32_t src_w, src_h;
    int32_t dst_w, dst_h;
    uint8_t persp;     /* 1: the third row of the matrix is used */
    uint8_t fused;     /* 5.x: the lerps (and FLOAT's positions) fuse */
    uint8_t nan_byte;  /* FLOAT: what a non-finite pixel in a vector block
                          with a tap inside stores (0 in 5.0, 255 in 5.1) */
    uint8_t border[3]; /* the warp's border value, BGR */
    double md[9];      /* the inverted matrix (affine: md[6..8] = 0, 0, 1) */
    float mf[9];       /* md rounded to float (FLOAT) */
} detfeed__warp_one;

/* One tile of a canvas (see the top of this file). */
typedef struct detfeed__canvas_tile {
    const uint8_t *px;  /* the tile's pixel (0, 0), BGR */
    int32_t stride;     /* bytes from one row of the tile to the next */
    int x0, y0, x1, y1; /* the canvas rectangle [x0, x1) x [y0, y1) it covers */
    int ox, oy;         /* canvas position of the tile's pixel (0, 0) */
} detfeed__canvas_tile;

/* The warp's source: w x h pixels, n tiles (0..4), fill elsewhere. */
typedef struct detfeed__canvas {
    int w, h;
    int n;
    detfeed__canvas_tile tiles[4];
    uint8_t fill[3]; /* BGR of canvas pixels no tile covers */
} detfeed__canvas;

/*
 * Plans the warp of a src_w x src_h source into dst_w x dst_h with the
 * forward matrix M as detfeed_warp_affine_cv (perspective false: M[0..5]
 * used) or detfeed_warp_perspective_cv (true: all 9) take it, on the stack
 * `cv` (cv->cpu AUTO is resolved here, on the host), border value `border`.
 * The matrix is inverted as those functions invert it. Returns DETFEED_OK;
 * DETFEED_EINVAL for a NULL pointer, a bad cv (as those functions), a
 * non-positive size or a source of 32767 pixels or more a side (their
 * checks; they have no other failure without buffers). Host only.
 */
#ifdef __cplusplus
extern "C" {
#endif
int detfeed__warp_one_plan(detfeed__warp_one *p, const double M[9], bool perspective,
                           const detfeed_cv *cv, int src_w, int src_h, int dst_w,
                           int dst_h, const uint8_t border[3]);
#ifdef __cplusplus
}
#endif

/* ---- canvas -------------------------------------------------------------- */

/* A canvas of one w x h image (stride bytes per row) covering it. */
static inline DETFEED__HD void detfeed__canvas_image(detfeed__canvas *c,
                                                     const uint8_t *px, int32_t stride,
                                                     int w, int h)
{
    c->w = w;
    c->h = h;
    c->n = 1;
    c->tiles[0].px = px;
    c->tiles[0].stride = stride;
    c->tiles[0].x0 = 0;
    c->tiles[0].y0 = 0;
    c->tiles[0].x1 = w;
    c->tiles[0].y1 = h;
    c->tiles[0].ox = 0;
    c->tiles[0].oy = 0;
    c->fill[0] = c->fill[1] = c->fill[2] = 0;
}

/* The three bytes of canvas tap (x, y): `border` outside the canvas, else
 * the first tile covering it, else the fill. */
static inline DETFEED__HD const uint8_t *detfeed__canvas_tap(const detfeed__canvas *c,
                                                             int32_t x, int32_t y,
                                                             const uint8_t *border)
{
    if ((uint32_t)x >= (uint32_t)c->w || (uint32_t)y >= (uint32_t)c->h)
        return border;
    for (int k = 0; k < c->n && k < 4; k++) {
        const detfeed__canvas_tile *t = &c->tiles[k];
        if (x >= t->x0 && x < t->x1 && y >= t->y0 && y < t->y1)
            return t->px + (int64_t)(y - t->oy) * t->stride + (int64_t)(x - t->ox) * 3;
    }
    return c->fill;
}

/* ---- OpenCV 4.x: positions in 1/32 pixel ------------------------------- */

/* cvRound(double) on x86-64 (cvtsd2si): half to even; a value outside
 * int32 (before rounding), or NaN, gives INT_MIN. */
static inline DETFEED__HD int32_t detfeed__wo_cv_round(double v)
{
    if (!(v >= -2147483648.5 && v < 2147483647.5))
        return INT32_MIN;
    return (int32_t)rint(v);
}

/* a + b with int32 wrap-around, without signed overflow. */
static inline DETFEED__HD int32_t detfeed__wo_add_wrap(int32_t a, int32_t b)
{
    uint32_t u = (uint32_t)a + (uint32_t)b;
    return u <= (uint32_t)INT32_MAX ? (int32_t)u
                                    : (int32_t)(u - 2147483648u) + INT32_MIN;
}

/* Floor division by 2^n of an int32, not relying on >> of negatives. */
static inline DETFEED__HD int32_t detfeed__wo_asr(int32_t v, int n)
{
    return v >= 0 ? v >> n : ~(~v >> n);
}

/* The affine position of destination (x, y) in 1/32 pixel. Per row: X0, Y0;
 * per column: adelta, bdelta (see the top of this file). */
static inline DETFEED__HD void detfeed__wo_cv4_affine(const detfeed__warp_one *p, int x,
                                                      int y, int32_t *X, int32_t *Y)
{
    const double *m = p->md;
    int32_t X0 =
        detfeed__wo_add_wrap(detfeed__wo_cv_round((m[1] * y + m[2]) * 1024.0), 16);
    int32_t Y0 =
        detfeed__wo_add_wrap(detfeed__wo_cv_round((m[4] * y + m[5]) * 1024.0), 16);
    int32_t ad = detfeed__wo_cv_round(m[0] * x * 1024.0);
    int32_t bd = detfeed__wo_cv_round(m[3] * x * 1024.0);
    *X = detfeed__wo_asr(detfeed__wo_add_wrap(X0, ad), 5);
    *Y = detfeed__wo_asr(detfeed__wo_add_wrap(Y0, bd), 5);
}

/* clamp(v, INT_MIN, INT_MAX), then half to even; NaN gives INT_MIN. */
static inline DETFEED__HD int32_t detfeed__wo_persp_fix(double v)
{
    if (v != v)
        return INT32_MIN;
    v = v < -2147483648.0 ? -2147483648.0 : v;
    v = v > 2147483647.0 ? 2147483647.0 : v;
    return (int32_t)rint(v);
}

/* The perspective position of destination (x, y) in 1/32 pixel, grouped
 * by OpenCV's column blocks: X0, Y0, W0 per (row, block). */
static inline DETFEED__HD void detfeed__wo_cv4_persp(const detfeed__warp_one *p, int x,
                                                     int y, int32_t *X, int32_t *Y)
{
    const double *t = p->md;
    const int xb = x - x % p->block, i = x - xb;
    const double X0 = t[0] * xb + t[1] * y + t[2];
    const double Y0 = t[3] * xb + t[4] * y + t[5];
    const double W0 = t[6] * xb + t[7] * y + t[8];
    double W = W0 + t[6] * i;
    W = W != 0.0 ? 32.0 / W : 0.0;
    *X = detfeed__wo_persp_fix((X0 + t[0] * i) * W);
    *Y = detfeed__wo_persp_fix((Y0 + t[3] * i) * W);
}

/* saturate_cast<short>(v >> 5): the integer tap of a 1/32 position. */
static inline DETFEED__HD int32_t detfeed__wo_cv4_tap(int32_t v)
{
    int32_t q = detfeed__wo_asr(v, 5);
    return q < INT16_MIN ? INT16_MIN : q > INT16_MAX ? INT16_MAX : q;
}

/* remap()'s bilinear sample of 1/32 position (X, Y) (see the top). */
static inline DETFEED__HD void detfeed__wo_cv4_sample(const detfeed__warp_one *p,
                                                      const detfeed__canvas *c,
                                                      int32_t X, int32_t Y,
                                                      uint8_t out[3])
{
    const int32_t sx = detfeed__wo_cv4_tap(X), sy = detfeed__wo_cv4_tap(Y);
    const int32_t fx = X & 31, fy = Y & 31;
    const uint8_t *t00 = detfeed__canvas_tap(c, sx, sy, p->border);
    const uint8_t *t01 = detfeed__canvas_tap(c, sx + 1, sy, p->border);
    const uint8_t *t10 = detfeed__canvas_tap(c, sx, sy + 1, p->border);
    const uint8_t *t11 = detfeed__canvas_tap(c, sx + 1, sy + 1, p->border);
    for (int k = 0; k < 3; k++) {
        int32_t top = (32 - fx) * t00[k] + fx * t01[k];
        int32_t bot = (32 - fx) * t10[k] + fx * t11[k];
        out[k] = (uint8_t)(((32 - fy) * top + fy * bot + 512) >> 10);
    }
}

/* ---- OpenCV 5.x: float positions --------------------------------------- */

/* a * b + c fused (one rounding) or not (two). */
static inline DETFEED__HD float detfeed__wo_fma(float a, float b, float c, bool fused)
{
    return fused ? fmaf(a, b, c) : a * b + c;
}

/* One axis of a 5.x position: the top-left tap and the fraction. */
typedef struct detfeed__wo_axis {
    int32_t i; /* floor, clamped to [-2, lim] */
    float a;   /* fraction; 0 for a finite position outside the clamp
                  range, NaN for a non-finite one */
} detfeed__wo_axis;

/* floor(s) and s - floor(s) in float, with the clamp of the record above
 * (warp_px.h, detfeed__warp5_split). */
static inline DETFEED__HD detfeed__wo_axis detfeed__wo_split(float s, int32_t lim)
{
    detfeed__wo_axis r;
    if (!(s >= -2.0f && s < (float)lim)) {
        r.i = s >= (float)lim ? lim : -2;
        r.a = s - s; /* 0, or NaN for NaN and infinities */
        return r;
    }
    int32_t f = (int32_t)s; /* truncation, exact in range */
    f -= (float)f > s;
    r.i = f;
    r.a = s - (float)f; /* exact */
    return r;
}

/* The same for a double position whose fraction is rounded to float (IPP:
 * scale and translation, and the edge pixels of any other matrix). */
static inline DETFEED__HD detfeed__wo_axis detfeed__wo_split_d(double s, int32_t lim)
{
    detfeed__wo_axis r;
    if (!(s >= -2.0 && s < (double)lim)) {
        r.i = s >= (double)lim ? lim : -2;
        r.a = (float)(s - s);
        return r;
    }
    int32_t f = (int32_t)s;
    f -= (double)f > s;
    r.i = f;
    r.a = (float)(s - (double)f);
    return r;
}

/* IPP's split: a non-finite position stores the border (fraction 0; the
 * tap is already outside). `to_float`: round the double position to float
 * first (IPP's inner pixels), else keep the double (IPP_SCALE, IPP's edge
 * pixels). */
static inline DETFEED__HD detfeed__wo_axis detfeed__wo_ipp_split(double s, int32_t lim,
                                                                 bool to_float)
{
    detfeed__wo_axis r =
        to_float ? detfeed__wo_split((float)s, lim) : detfeed__wo_split_d(s, lim);
    if (r.a != r.a)
        r.a = 0.0f;
    return r;
}

/* Whether IPP's general kernel treats the double position (sx, sy) in a
 * w x h source as an inner pixel: all four taps inside (NaN is not). */
static inline DETFEED__HD bool detfeed__wo_ipp_inner(double sx, double sy, int32_t w,
                                                     int32_t h)
{
    return sx >= 0.0 && sx < (double)(w - 1) && sy >= 0.0 && sy < (double)(h - 1);
}

/* The float kernel's position of row y's pixel x on the axis of matrix row
 * m (m, m + 3 or m + 6), before any division: the vector formula for
 * x < nvec, the scalar tail's after. */
static inline DETFEED__HD float detfeed__wo_float_coord(const detfeed__warp_one *p,
                                                        const float *m, int x, int y)
{
    const float xf = (float)x, yf = (float)y;
    const bool fused = p->fused != 0;
    if (x < p->nvec) {
        const float row = yf * m[1] + m[2]; /* two roundings in every build */
        return detfeed__wo_fma(m[0], xf, row, fused);
    }
    const float t = fused ? fmaf(xf, m[0], yf * m[1]) : xf * m[0] + yf * m[1];
    return t + m[2];
}

/* The 5.x position of destination (x, y), both axes (NaN fractions kept
 * for the float kernel, settled to 0 for IPP). */
static inline DETFEED__HD void detfeed__wo_pos5(const detfeed__warp_one *p, int x,
                                                int y, detfeed__wo_axis *ax,
                                                detfeed__wo_axis *ay)
{
    const double *m = p->md;
    if (p->kind == DETFEED__WARP_ONE_IPP_SCALE) {
        *ax = detfeed__wo_ipp_split(m[0] * x + m[2], p->src_w, false);
        *ay = detfeed__wo_ipp_split(m[4] * y + m[5], p->src_h, false);
        return;
    }
    if (p->kind == DETFEED__WARP_ONE_IPP) {
        double sx = m[0] * x + m[1] * y + m[2], sy = m[3] * x + m[4] * y + m[5];
        if (p->persp) {
            const double w = m[6] * x + m[7] * y + m[8];
            sx = sx / w;
            sy = sy / w;
        }
        const bool inner = detfeed__wo_ipp_inner(sx, sy, p->src_w, p->src_h);
        *ax = detfeed__wo_ipp_split(sx, p->src_w, inner);
        *ay = detfeed__wo_ipp_split(sy, p->src_h, inner);
        return;
    }
    float sx = detfeed__wo_float_coord(p, p->mf, x, y);
    float sy = detfeed__wo_float_coord(p, p->mf + 3, x, y);
    if (p->persp) {
        const float w = detfeed__wo_float_coord(p, p->mf + 6, x, y);
        sx = sx / w;
        sy = sy / w;
    }
    *ax = detfeed__wo_split(sx, p->src_w);
    *ay = detfeed__wo_split(sy, p->src_h);
}

/* All four taps of a 5.x position outside the source. */
static inline DETFEED__HD bool detfeed__wo_all_out(const detfeed__warp_one *p,
                                                   detfeed__wo_axis ax,
                                                   detfeed__wo_axis ay)
{
    return ax.i < -1 || ax.i >= p->src_w || ay.i < -1 || ay.i >= p->src_h;
}

/* The float kernel's byte for a non-finite pixel x of row y (its taps are
 * all outside): nan_byte inside a vector block that has a pixel with a tap
 * inside the source, else the border value (`*border` true). */
static inline DETFEED__HD bool detfeed__wo_nan_is_border(const detfeed__warp_one *p,
                                                         int x, int y)
{
    if (x >= p->nvec)
        return true;
    const int b = x - x % p->block;
    for (int j = b; j < b + p->block; j++) {
        detfeed__wo_axis ax, ay;
        detfeed__wo_pos5(p, j, y, &ax, &ay);
        if (!detfeed__wo_all_out(p, ax, ay))
            return false;
    }
    return true;
}

/* Round half to even and clamp to a byte (v_round and saturating packs);
 * NaN gives 0. Adding 1.5 * 2^23 leaves no fraction bits below 2^22. */
static inline DETFEED__HD uint8_t detfeed__wo_byte(float v)
{
    if (!(v > 0.0f))
        return 0;
    if (v >= 255.0f)
        return 255;
    const float magic = 0x1.8p23f;
    return (uint8_t)((v + magic) - magic);
}

/* The orders of the 5.x blend (see the top). */
enum {
    DETFEED__WO_XFIRST = 0,   /* along x, then along y from the top row */
    DETFEED__WO_YFIRST = 1,   /* along y, then along x (IPP's general kernel) */
    DETFEED__WO_XFIRST_UP = 2 /* along x, then along y from the bottom row
                                 with weight 1 - ay (IPP_SCALE, edge rows of
                                 a flipped y axis) */
};

/* The 5.x blend of one channel's taps at fractions (ax, ay) in `order`. */
static inline DETFEED__HD uint8_t detfeed__wo_blend(float p00, float p01, float p10,
                                                    float p11, float ax, float ay,
                                                    bool fused, int order)
{
    if (order == DETFEED__WO_YFIRST) {
        const float v0 = detfeed__wo_fma(ay, p10 - p00, p00, fused);
        const float v1 = detfeed__wo_fma(ay, p11 - p01, p01, fused);
        return detfeed__wo_byte(detfeed__wo_fma(ax, v1 - v0, v0, fused));
    }
    const float v0 = detfeed__wo_fma(ax, p01 - p00, p00, fused);
    const float v1 = detfeed__wo_fma(ax, p11 - p10, p10, fused);
    if (order == DETFEED__WO_XFIRST_UP)
        return detfeed__wo_byte(detfeed__wo_fma(1.0f - ay, v0 - v1, v1, fused));
    return detfeed__wo_byte(detfeed__wo_fma(ay, v1 - v0, v0, fused));
}

/* Whether IPP takes its scale kernel for the affine inverse m (md1 == md3
 * == 0): some destination column has 0 <= sx <= W - 2 and some row 0 <= sy
 * <= H - 2 (measured: else its general kernel runs, e.g. for sources of 2
 * pixels a side unless a position is 0 exactly). IPP decides a position
 * within about 1e-13 of a bound by its own rounding (measured: H - 2 +
 * 1e-13 and -9e-16 still count as inside), which this does not model. */
static inline DETFEED__HD bool detfeed__wo_ipp_scale_axis(double m, double c, int n,
                                                          int32_t size)
{
    for (int i = 0; i < n; i++) {
        const double s = m * i + c;
        if (s >= 0.0 && s <= (double)(size - 2))
            return true;
    }
    return false;
}

static inline DETFEED__HD bool detfeed__wo_ipp_scale(const double *m, int32_t src_w,
                                                     int32_t src_h, int dst_w,
                                                     int dst_h)
{
    return m[1] == 0.0 && m[3] == 0.0 &&
           detfeed__wo_ipp_scale_axis(m[0], m[2], dst_w, src_w) &&
           detfeed__wo_ipp_scale_axis(m[4], m[5], dst_h, src_h);
}

/* The order of IPP_SCALE's blend at taps (ix, iy) (see the top). */
static inline DETFEED__HD int detfeed__wo_ipp_scale_order(const double *m, int32_t ix,
                                                          int32_t iy, int32_t src_w,
                                                          int32_t src_h)
{
    const bool yin = iy >= 0 && iy < src_h - 1, yedge = iy == -1 || iy == src_h - 1;
    if ((ix == -1 || ix == src_w - 1) && yin)
        return DETFEED__WO_YFIRST;
    return yedge && m[4] < 0.0 ? DETFEED__WO_XFIRST_UP : DETFEED__WO_XFIRST;
}

/* The 5.x blend of finite position (ax, ay) (see the top). */
static inline DETFEED__HD void detfeed__wo_sample5(const detfeed__warp_one *p,
                                                   const detfeed__canvas *c,
                                                   detfeed__wo_axis ax,
                                                   detfeed__wo_axis ay, uint8_t out[3])
{
    const bool fused = p->fused != 0;
    int order =
        p->kind == DETFEED__WARP_ONE_IPP ? DETFEED__WO_YFIRST : DETFEED__WO_XFIRST;
    if (p->kind == DETFEED__WARP_ONE_IPP_SCALE)
        order = detfeed__wo_ipp_scale_order(p->md, ax.i, ay.i, p->src_w, p->src_h);
    const uint8_t *t00 = detfeed__canvas_tap(c, ax.i, ay.i, p->border);
    const uint8_t *t01 = detfeed__canvas_tap(c, ax.i + 1, ay.i, p->border);
    const uint8_t *t10 = detfeed__canvas_tap(c, ax.i, ay.i + 1, p->border);
    const uint8_t *t11 = detfeed__canvas_tap(c, ax.i + 1, ay.i + 1, p->border);
    for (int k = 0; k < 3; k++)
        out[k] =
            detfeed__wo_blend(t00[k], t01[k], t10[k], t11[k], ax.a, ay.a, fused, order);
}

/* ---- the pixel ----------------------------------------------------------- */

/*
 * Destination pixel (x, y) (0 <= x < dst_w, 0 <= y < dst_h) of the warp
 * planned in p, reading canvas c: out receives the BGR bytes
 * detfeed_warp_affine_cv / detfeed_warp_perspective_cv write there when
 * warping the materialized canvas with the plan's arguments.
 */
static inline DETFEED__HD void detfeed__warp_one_px(const detfeed__warp_one *p,
                                                    const detfeed__canvas *c, int x,
                                                    int y, uint8_t out[3])
{
    if (p->kind == DETFEED__WARP_ONE_CV4_AFFINE ||
        p->kind == DETFEED__WARP_ONE_CV4_PERSP) {
        int32_t X, Y;
        if (p->kind == DETFEED__WARP_ONE_CV4_AFFINE)
            detfeed__wo_cv4_affine(p, x, y, &X, &Y);
        else
            detfeed__wo_cv4_persp(p, x, y, &X, &Y);
        detfeed__wo_cv4_sample(p, c, X, Y, out);
        return;
    }
    detfeed__wo_axis ax, ay;
    detfeed__wo_pos5(p, x, y, &ax, &ay);
    if (detfeed__wo_all_out(p, ax, ay)) {
        const bool nan = ax.a != ax.a || ay.a != ay.a;
        const bool border = !nan || detfeed__wo_nan_is_border(p, x, y);
        for (int k = 0; k < 3; k++)
            out[k] = border ? p->border[k] : p->nan_byte;
        return;
    }
    detfeed__wo_sample5(p, c, ax, ay, out);
}

#endif /* DETFEED_WARP_ONE_H */
