/*
 * warp_px.h - what warp.c shares with its row samplers (portable in warp.c,
 * AVX2 in warp_avx2.c), so that every code path computes the same bytes.
 *
 * A source position is a pair of int32 in 1/32 pixel (OpenCV's INTER_BITS =
 * 5), already rounded as OpenCV rounds it. A row sampler turns the positions
 * of one destination row into BGR pixels with OpenCV's remap() rules for
 * INTER_LINEAR and BORDER_CONSTANT (imgproc/src/imgwarp.cpp):
 *
 * Taps. sx = saturate_cast<short>(X >> 5), likewise sy; the taps are p00 =
 * (sx, sy), p01 = (sx + 1, sy), p10 = (sx, sy + 1), p11 = (sx + 1, sy + 1);
 * fx = X & 31 and fy = Y & 31.
 *
 * Blend. OpenCV weights the taps with 15-bit integers (initInterTab2D)
 *     w = 32 * {(32-fy)(32-fx), (32-fy)fx, fy(32-fx), fy fx}
 * except that w for (0, 0) is {32767, 0, 0, 1} (32768 saturates in int16,
 * and OpenCV's fix-up gives the lost 1 to the last weight), and rounds
 * (sum w p + 2^14) >> 15. The samplers compute the same number
 * separably, without a table:
 *     h_top = (32-fx) p00 + fx p01,  h_bot = (32-fx) p10 + fx p11
 *     v = (32-fy) h_top + fy h_bot,  result = (v + 2^9) >> 10
 * because sum w p = 32 v and (32 v + 2^14) >> 15 = (v + 2^9) >> 10; at
 * (0, 0) OpenCV's (32767 p00 + p11 + 2^14) >> 15 is p00 for any bytes
 * (|p11 - p00| < 2^14), and v = 1024 p00 gives p00 too. h <= 8160 fits 16
 * bits, v <= 261120 fits 18, the result is at most 255.
 *
 * Border. A position whose four taps are all outside the source (OpenCV
 * tests sx >= W, sx + 1 < 0, sy >= H, sy + 1 < 0) gives the border value;
 * otherwise each tap outside reads as the border value. Four border taps
 * blend to the border value, so the samplers need no separate case.
 */
#ifndef DETFEED_WARP_PX_H
#define DETFEED_WARP_PX_H

#include "core/internal.h"
#include "warp_one.h" /* the per-pixel arithmetic: detfeed__wo_fma, _byte */

#include <math.h>

/* The 1/32 fraction of a position. */
#define DETFEED__WARP_FRAC_BITS 5
#define DETFEED__WARP_FRAC_MASK 31

/* The source image and what every sampler needs besides the positions. */
typedef struct detfeed__warp_src {
    const uint8_t *px;
    size_t stride;
    int width, height;
    uint8_t border[3];
    /* true when byte offsets of the whole source fit in int32, which the
     * vector samplers compute their gather offsets in */
    bool offsets32;
    /* The portable sampler's row scratch: 6 arrays of scratch_cap bytes
     * (3 * the destination width + 1) for the four taps of each pixel and its
     * two fractions, per channel. */
    uint8_t *scratch;
    size_t scratch_cap;
} detfeed__warp_src;

/* OpenCV's arithmetic shift of a possibly negative int32 (floor division by
 * 2^n), written so that it does not rely on how >> treats negatives. */
static inline int32_t detfeed__warp_asr(int32_t v, int n)
{
    return v >= 0 ? v >> n : ~(~v >> n);
}

/* The integer source pixel of a 1/32 position: saturate_cast<short>(v >> 5),
 * as OpenCV stores it in its CV_16SC2 map. */
static inline int32_t detfeed__warp_pixel(int32_t v)
{
    int32_t p = detfeed__warp_asr(v, DETFEED__WARP_FRAC_BITS);
    return p < INT16_MIN ? INT16_MIN : p > INT16_MAX ? INT16_MAX : p;
}

/* Samples one destination row of n pixels from the positions xs[i], ys[i]
 * into d (3 * n bytes), n <= the destination width the scratch is for. */
typedef void (*detfeed__warp_row_fn)(const detfeed__warp_src *s, const int32_t *xs,
                                     const int32_t *ys, uint8_t *d, int n);

void detfeed__warp_row_portable(const detfeed__warp_src *s, const int32_t *xs,
                                const int32_t *ys, uint8_t *d, int n);
/* Only in builds with DETFEED_HAVE_AVX2, only called when
 * detfeed_isa_available(DETFEED_ISA_AVX2). */
void detfeed__warp_row_avx2(const detfeed__warp_src *s, const int32_t *xs,
                            const int32_t *ys, uint8_t *d, int n);

/* Perspective positions of the pixels of one of OpenCV's column blocks:
 * n pixels from column xb of row y, t the inverted matrix; xs and ys point
 * at the block's first pixel. The portable one computes pixels [i0, n). */
typedef void (*detfeed__warp_persp_fn)(const double t[9], int xb, int y, int n,
                                       int32_t *xs, int32_t *ys);
void detfeed__warp_persp_portable(const double t[9], int xb, int y, int i0, int n,
                                  int32_t *xs, int32_t *ys);
/* AVX2, four pixels per step, the same double operations in the same
 * order, no fused multiply-add; the last n % 4 pixels go to the portable
 * one. Same conditions as detfeed__warp_row_avx2. */
void detfeed__warp_persp_avx2(const double t[9], int xb, int y, int n, int32_t *xs,
                              int32_t *ys);

/* detfeed_warp_affine and detfeed_warp_perspective with the code path chosen
 * by `isa` (AUTO, PORTABLE or AVX2), for the tests that compare them.
 * DETFEED_ENOTSUPPORTED when `isa` has no sampler or cannot run here. */
int detfeed__warp_affine_isa(const uint8_t *src, size_t src_stride, int src_width,
                             int src_height, uint8_t *dst, size_t dst_stride,
                             int dst_width, int dst_height, const double M[6],
                             const uint8_t border[3], detfeed_isa isa);
int detfeed__warp_perspective_isa(const uint8_t *src, size_t src_stride, int src_width,
                                  int src_height, uint8_t *dst, size_t dst_stride,
                                  int dst_width, int dst_height, const double M[9],
                                  const uint8_t border[3], detfeed_isa isa);

/* The argument checks of every warp: DETFEED_OK, with the source's byte
 * span in *src_bytes, or DETFEED_EINVAL (see detfeed_warp_affine). */
int detfeed__warp_check(const uint8_t *src, size_t src_stride, int sw, int sh,
                        const uint8_t *dst, size_t dst_stride, int dw, int dh,
                        const double *M, const uint8_t *border, size_t *src_bytes);

/* OpenCV's inversions of the forward matrix, in double (every version). */
void detfeed__warp_invert_affine(const double m[6], double inv[6]);
void detfeed__warp_invert_3x3(const double m[9], double t[9]);

/* ---- OpenCV 5.x (warp5.c, warp5_avx2.c) ----------------------------------
 *
 * OpenCV 5 computes a float position per pixel (warp5.c describes how);
 * both of its models reduce to the same per-pixel record, which the
 * row samplers turn into bytes:
 *
 *   ix, iy  the top-left tap, floor of the position, clamped to [-2, W]
 *           and [-2, H]: every value outside keeps both taps of that axis
 *           outside, so the clamp changes no tap and keeps offsets small;
 *   ax, ay  the fractions in float, in [0, 1] for a position inside the
 *           clamp range and 0 for a finite one outside it. NaN marks a
 *           non-finite position that OpenCV blends anyway: its vector
 *           blocks lerp the border taps with a NaN (or infinite) fraction
 *           and store nan_byte (measured: 0 in 5.0, 255 in 5.1) unless
 *           the whole block is outside.
 *
 * The blend of a pixel with at least one tap inside, per channel in float,
 * taps outside read as the border value (FMA fused or a rounded multiply
 * then add, as the emulated OpenCV build does):
 *     v0 = FMA(ax, p01 - p00, p00),  v1 = FMA(ax, p11 - p10, p10)
 *     v  = FMA(ay, v1 - v0, v0),     byte = clamp(round half even(v))
 * or, for IPP's general kernel (yfirst), along y first:
 *     v0 = FMA(ay, p10 - p00, p00),  v1 = FMA(ay, p11 - p01, p01)
 *     v  = FMA(ax, v1 - v0, v0)
 * A pixel with all four taps outside is the border value (the lerp of four
 * equal values), or nan_byte when a fraction is NaN.
 */

/* One destination row's positions, n pixels. */
typedef struct detfeed__warp5_pos {
    int32_t *ix, *iy;
    float *ax, *ay;
} detfeed__warp5_pos;

/* What decides the positions: the OpenCV model and its matrix. */
typedef enum detfeed__warp5_model {
    DETFEED__WARP5_FLOAT = 0,     /* 5.0 float kernel (5.1 without IPP) */
    DETFEED__WARP5_IPP_SCALE = 1, /* 5.1 IPP, affine with M1 == M3 == 0 and a
                                     source above 2 pixels a side */
    DETFEED__WARP5_IPP = 2        /* 5.1 IPP, any other matrix */
} detfeed__warp5_model;

typedef struct detfeed__warp5 {
    detfeed__warp5_model model;
    bool persp;       /* 3x3 matrix (third row used) */
    bool fused;       /* FMA fused (OpenCV's and IPP's AVX2 code) or not (SSE) */
    bool yfirst;      /* the blend lerps along y first (IPP, general matrix) */
    int block;        /* the float kernel's vector block: 16 (AVX2) or 8 (SSE) */
    uint8_t nan_byte; /* what a NaN blend stores: 0 in 5.0, 255 in 5.1 */
    float mf[9];      /* the inverted matrix rounded to float (float kernel) */
    double md[9];     /* the inverted matrix (IPP) */
    int src_width, src_height;
} detfeed__warp5;

/* floor(s) into *i and s - floor(s) into *a, with the clamp and the
 * non-finite rule of the record above (*a is NaN for NaN or infinite s). */
static inline void detfeed__warp5_split(float s, int32_t lim, int32_t *i, float *a)
{
    if (!(s >= -2.0f && s < (float)lim)) {
        *i = s >= (float)lim ? lim : -2;
        *a = s - s;
        return;
    }
    int32_t f = (int32_t)s; /* truncation, exact in range */
    f -= (float)f > s;
    *i = f;
    *a = s - (float)f; /* exact */
}

/* The same for a double position whose fraction is rounded to float (the
 * IPP model of scale-only matrices). */
static inline void detfeed__warp5_split_d(double s, int32_t lim, int32_t *i, float *a)
{
    if (!(s >= -2.0 && s < (double)lim)) {
        *i = s >= (double)lim ? lim : -2;
        *a = (float)(s - s);
        return;
    }
    int32_t f = (int32_t)s;
    f -= (double)f > s;
    *i = f;
    *a = (float)(s - (double)f);
}

/* IPP stores the border for a non-finite position (measured on a
 * perspective whose w is 0 on a column). `round`: the position is rounded
 * to float and split in float (IPP's inner pixels), else split in double
 * with the fraction rounded to float (IPP_SCALE, IPP's edge pixels). */
static inline void detfeed__warp5_ipp_split(double s, int32_t lim, bool round,
                                            int32_t *i, float *a)
{
    if (round)
        detfeed__warp5_split((float)s, lim, i, a);
    else
        detfeed__warp5_split_d(s, lim, i, a);
    if (*a != *a)
        *a = 0.0f;
}

/* IPP, scale and translation: the column part of every row, once
 * (warp5_rows.c). */
void detfeed__warp5_ipp_scale_columns(const detfeed__warp5 *w, int n,
                                      const detfeed__warp5_pos *p);

/* One destination pixel from its record, taps one by one (any position),
 * blended in `order` (DETFEED__WO_XFIRST, ...: warp_one.h). */
static inline void detfeed__warp5_pixel_order(const detfeed__warp_src *s,
                                              const detfeed__warp5 *w, int32_t ix,
                                              int32_t iy, float ax, float ay, int order,
                                              uint8_t *d)
{
    const bool fused = w->fused;
    const uint32_t sw = (uint32_t)s->width, sh = (uint32_t)s->height;
    const bool x0 = (uint32_t)ix < sw, x1 = (uint32_t)(ix + 1) < sw;
    const bool y0 = (uint32_t)iy < sh, y1 = (uint32_t)(iy + 1) < sh;
    if (!(x0 || x1) || !(y0 || y1)) {
        const bool nan = ax != ax || ay != ay;
        for (int c = 0; c < 3; c++)
            d[c] = nan ? w->nan_byte : s->border[c];
        return;
    }
    const uint8_t *r0 = s->px + (size_t)(y0 ? iy : 0) * s->stride;
    const uint8_t *r1 = s->px + (size_t)(y1 ? iy + 1 : 0) * s->stride;
    const size_t o0 = (size_t)(x0 ? ix : 0) * 3, o1 = (size_t)(x1 ? ix + 1 : 0) * 3;
    for (int c = 0; c < 3; c++) {
        const float b = s->border[c];
        float p00 = x0 && y0 ? r0[o0 + c] : b, p01 = x1 && y0 ? r0[o1 + c] : b;
        float p10 = x0 && y1 ? r1[o0 + c] : b, p11 = x1 && y1 ? r1[o1 + c] : b;
        d[c] = detfeed__wo_blend(p00, p01, p10, p11, ax, ay, fused, order);
    }
}

/* The same in the order of the model (w->yfirst). */
static inline void detfeed__warp5_pixel(const detfeed__warp_src *s,
                                        const detfeed__warp5 *w, int32_t ix, int32_t iy,
                                        float ax, float ay, uint8_t *d)
{
    detfeed__warp5_pixel_order(s, w, ix, iy, ax, ay,
                               w->yfirst ? DETFEED__WO_YFIRST : DETFEED__WO_XFIRST, d);
}

/* Separable rows. When the positions of every row share their x part and
 * the positions of every column their y part (scale and translation: the
 * inverse has M1 == M3 == 0, and no position is NaN), the blend above is
 * v0 = h(iy), v1 = h(iy + 1), v = FMA(ay, v1 - v0, v0), where h(r) is source
 * row r lerped at each column's (ix, ax): rows outside the source give the
 * border value (a lerp of equal values), taps outside read as the border.
 * So each source row is lerped once, not once per destination row.
 * IPP's scale kernel lerps along y first at the pixels with one x tap
 * inside and both y taps inside (detfeed__warp5_ipp_scale_edges redoes
 * them after the separable row), and on a flipped y axis (md4 < 0) lerps
 * the rows with one y tap inside from the bottom row: v = FMA(1 - ay, v0 -
 * v1, v1), the separable blend of h(iy + 1) and h(iy) at 1 - ay. */

/* Channel c of column x of source row `row` (NULL: outside the source)
 * lerped horizontally. */
static inline float detfeed__warp5_hpx(const detfeed__warp_src *s, const uint8_t *row,
                                       int32_t ix, float ax, int c, bool fused)
{
    const uint32_t sw = (uint32_t)s->width;
    const float b = s->border[c];
    float p0 = row && (uint32_t)ix < sw ? row[(size_t)ix * 3 + c] : b;
    float p1 = row && (uint32_t)(ix + 1) < sw ? row[(size_t)(ix + 1) * 3 + c] : b;
    return detfeed__wo_fma(ax, p1 - p0, p0, fused);
}

/* Source row r lerped at the columns of p (ix, ax) into h: channel c of
 * column x at h[c * n + x]. */
void detfeed__warp5_hrow_portable(const detfeed__warp_src *s, const detfeed__warp5 *w,
                                  const detfeed__warp5_pos *p, int r, int n, float *h);
/* The destination row from two lerped rows and the row's fraction ay. */
void detfeed__warp5_vrow_portable(const detfeed__warp5 *w, const float *h0,
                                  const float *h1, float ay, uint8_t *d, int n);
/* IPP, scale and translation: when both y taps are inside (0 <= iy < H -
 * 1), the pixels of the row whose x taps straddle the left or right edge
 * (ix == -1 or ix == W - 1) blended again along y first. */
void detfeed__warp5_ipp_scale_edges(const detfeed__warp_src *s, const detfeed__warp5 *w,
                                    const detfeed__warp5_pos *p, int32_t iy, float ay,
                                    uint8_t *d, int n);
/* AVX2 versions, same bytes, same conditions as detfeed__warp5_row_avx2. */
void detfeed__warp5_hrow_avx2(const detfeed__warp_src *s, const detfeed__warp5 *w,
                              const detfeed__warp5_pos *p, int r, int n, float *h);
void detfeed__warp5_vrow_avx2(const detfeed__warp5 *w, const float *h0, const float *h1,
                              float ay, uint8_t *d, int n);

/* The float kernel's position of pixel x of row y in its scalar tail
 * (x beyond the last whole vector block): OpenCV's AVX2 build contracted
 * the first product into the sum, its SSE build did not. */
static inline float detfeed__warp5_tail(const float *m, float x, float y, bool fused)
{
    float t = fused ? fmaf(x, m[0], y * m[1]) : x * m[0] + y * m[1];
    return t + m[2];
}

/* Positions of row y, pixels [0, n), n the destination width (portable). */
void detfeed__warp5_row_pos(const detfeed__warp5 *w, int y, int n,
                            const detfeed__warp5_pos *p);
/* The float kernel's positions of pixels [x0, n) of row y, the tail
 * included; true when one of them is not finite, and then
 * detfeed__warp5_settle must follow. */
bool detfeed__warp5_float_pos(const detfeed__warp5 *w, int y, int x0, int n,
                              const detfeed__warp5_pos *p);
/* The IPP model's positions of pixels [x0, n) of row y for matrices other
 * than scale and translation, non-finite ones settled (border). */
void detfeed__warp5_ipp_pos(const detfeed__warp5 *w, int y, int x0, int n,
                            const detfeed__warp5_pos *p);
/* OpenCV's rule for non-finite positions of the float kernel: a vector
 * block whose pixels all have their four taps outside stores the border
 * (NaN fractions become 0); in any other block they stay NaN (the pixel
 * becomes nan_byte). Pixels of the scalar tail store the border. */
void detfeed__warp5_settle(const detfeed__warp5 *w, int n, const detfeed__warp5_pos *p);

/* Samples one row from its positions into d (3 * n bytes). */
void detfeed__warp5_row_portable(const detfeed__warp_src *s, const detfeed__warp5 *w,
                                 const detfeed__warp5_pos *p, uint8_t *d, int n);
/* AVX2 versions, same bytes. Only in builds with DETFEED_HAVE_AVX2, only
 * called when detfeed_isa_available(DETFEED_ISA_AVX2). The position one
 * covers the float kernel; it returns true when a position was not
 * finite. */
void detfeed__warp5_row_avx2(const detfeed__warp_src *s, const detfeed__warp5 *w,
                             const detfeed__warp5_pos *p, uint8_t *d, int n);
bool detfeed__warp5_float_pos_avx2(const detfeed__warp5 *w, int y, int n,
                                   const detfeed__warp5_pos *p);
/* The IPP model's positions of row y for matrices other than scale and
 * translation, non-finite ones settled (border). */
void detfeed__warp5_ipp_pos_avx2(const detfeed__warp5 *w, int y, int n,
                                 const detfeed__warp5_pos *p);

/* detfeed_warp_affine_cv and detfeed_warp_perspective_cv with detfeed's
 * own code path chosen by `isa` (AUTO, PORTABLE or AVX2), for the tests. */
int detfeed__warp5_affine_isa(const uint8_t *src, size_t src_stride, int src_width,
                              int src_height, uint8_t *dst, size_t dst_stride,
                              int dst_width, int dst_height, const double M[6],
                              const uint8_t border[3], const detfeed_cv *cv,
                              detfeed_isa isa);
int detfeed__warp5_perspective_isa(const uint8_t *src, size_t src_stride, int src_width,
                                   int src_height, uint8_t *dst, size_t dst_stride,
                                   int dst_width, int dst_height, const double M[9],
                                   const uint8_t border[3], const detfeed_cv *cv,
                                   detfeed_isa isa);

#endif /* DETFEED_WARP_PX_H */
