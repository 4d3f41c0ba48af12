/*
 * warp_px.h - what warp.c shares with its row samplers (portable in warp.c,
 * AVX2 in warp_avx2.c), so that every code path computes the same bytes.
 *
 * A source position is a pair of int32 in 1/32 pixel (OpenCV's INTER_BITS =
 * 5), already rounded as OpenCV rounds it. A row sampler turns the positions
 * of one destination row into BGR pixels with OpenCV's remap() rules for
 * INTER_LINEAR and BORDER_CONSTANT (shared/ref/opencv-exact.md, 4c-4e):
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

#endif /* DETFEED_WARP_PX_H */
