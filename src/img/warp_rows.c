/*
 * warp_rows.c - the portable row kernels of the 4.x warps (warp.c): the
 * bilinear row sampler and the perspective positions of a column block.
 * They are the portable variant and also the tails of the AVX2 variant
 * (warp_avx2.c), which is why they live apart from the dispatcher: neither
 * variant file calls back into warp.c.
 */
#include "warp_px.h"

#include <string.h>

/* Half to even for |v| <= 2^31 without a library call (rint() is one on
 * baseline x86-64): adding 1.5 * 2^52 leaves no fraction bits and rounds as
 * the FP environment does (to nearest, ties to even); the subtraction is
 * exact. */
static inline double round_even(double v)
{
    const double magic = 0x1.8p52;
    return (v + magic) - magic;
}

/* ---- the portable row sampler -------------------------------------------- */

/* Two passes per row so that the arithmetic vectorises: first each pixel's
 * four taps and two fractions are copied into per-channel arrays in output
 * order (the gather, the border rule and the only branches), then one
 * straight loop over the row's bytes blends them (warp_px.h). */

static inline void put3(uint8_t *d, const uint8_t *s)
{
    d[0] = s[0];
    d[1] = s[1];
    d[2] = s[2];
}

/* Copies 4 bytes where 3 are needed: the fourth is overwritten by the next
 * pixel's (the arrays have one byte to spare at the end). */
static inline void put4(uint8_t *d, const uint8_t *s)
{
    memcpy(d, s, 4);
}

static inline void fill4(uint8_t *d, int32_t v)
{
    uint32_t u = (uint32_t)v * 0x01010101u;
    memcpy(d, &u, 4);
}

/* The tap at (x, y), or the border value outside the source. */
static inline const uint8_t *tap(const detfeed__warp_src *s, int32_t x, int32_t y)
{
    if (x < 0 || x >= s->width || y < 0 || y >= s->height)
        return s->border;
    return s->px + (size_t)y * s->stride + (size_t)x * 3;
}

/* The blend of warp_px.h in 16-bit lanes: v = (32-fy) top + fy bot needs
 * 18 bits, so it is split on top = 32 th + tl, bot = 32 bh + bl:
 *     v + 512 = 32 A + B,  A = (32-fy) th + fy bh <= 8160,
 *                          B = (32-fy) tl + fy bl + 512 <= 1504
 * and (32 A + B) >> 10 = (A + (B >> 5)) >> 5 (the bits B loses in >> 5 are
 * below 32, so they cannot carry into bit 10). */
static void blend_row(const uint8_t *restrict t00, const uint8_t *restrict t01,
                      const uint8_t *restrict t10, const uint8_t *restrict t11,
                      const uint8_t *restrict fx, const uint8_t *restrict fy,
                      uint8_t *restrict d, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        uint16_t ax = fx[j], ay = fy[j];
        uint16_t rx = (uint16_t)(32 - ax), ry = (uint16_t)(32 - ay);
        uint16_t top = (uint16_t)(rx * t00[j] + ax * t01[j]);
        uint16_t bot = (uint16_t)(rx * t10[j] + ax * t11[j]);
        uint16_t A = (uint16_t)(ry * (top >> 5) + ay * (bot >> 5));
        uint16_t B = (uint16_t)(ry * (top & 31) + ay * (bot & 31) + 512);
        d[j] = (uint8_t)((uint16_t)(A + (B >> 5)) >> 5);
    }
}

void detfeed__warp_row_portable(const detfeed__warp_src *s, const int32_t *xs,
                                const int32_t *ys, uint8_t *d, int n)
{
    const size_t len = (size_t)n * 3, cap = s->scratch_cap;
    uint8_t *t00 = s->scratch, *t01 = t00 + cap, *t10 = t01 + cap, *t11 = t10 + cap;
    uint8_t *fx = t11 + cap, *fy = fx + cap;
    /* Pixels with 0 <= sx < W - 2 and 0 <= sy < H - 1 have all four taps
     * inside and a byte to spare after them; pixels with all four taps
     * outside take the border value four times; the others, the last column
     * included, take the taps one by one. The tests can be made before the
     * int16 saturation, which moves no position across them (every side is
     * below 32767). */
    const uint32_t wlim = s->width > 2 ? (uint32_t)s->width - 2 : 0;
    const uint32_t hlim = (uint32_t)s->height - 1;
    const uint8_t b4[4] = {s->border[0], s->border[1], s->border[2], 0};
    const size_t stride = s->stride;
    for (int i = 0; i < n; i++) {
        int32_t X = xs[i], Y = ys[i];
        int32_t rx = detfeed__warp_asr(X, DETFEED__WARP_FRAC_BITS);
        int32_t ry = detfeed__warp_asr(Y, DETFEED__WARP_FRAC_BITS);
        size_t e = (size_t)i * 3;
        if ((uint32_t)rx < wlim && (uint32_t)ry < hlim) {
            const uint8_t *p = s->px + (size_t)ry * stride + (size_t)rx * 3;
            put4(t00 + e, p);
            put4(t01 + e, p + 3);
            put4(t10 + e, p + stride);
            put4(t11 + e, p + stride + 3);
        } else if (rx >= s->width || rx < -1 || ry >= s->height || ry < -1) {
            put4(t00 + e, b4);
            put4(t01 + e, b4);
            put4(t10 + e, b4);
            put4(t11 + e, b4);
        } else {
            int32_t sx = detfeed__warp_pixel(X), sy = detfeed__warp_pixel(Y);
            put3(t00 + e, tap(s, sx, sy));
            put3(t01 + e, tap(s, sx + 1, sy));
            put3(t10 + e, tap(s, sx, sy + 1));
            put3(t11 + e, tap(s, sx + 1, sy + 1));
        }
        fill4(fx + e, X & DETFEED__WARP_FRAC_MASK);
        fill4(fy + e, Y & DETFEED__WARP_FRAC_MASK);
    }
    blend_row(t00, t01, t10, t11, fx, fy, d, len);
}

/* ---- the portable perspective positions ---------------------------------- */

/* clamp(v, INT_MIN, INT_MAX) and cvRound; a NaN gives INT_MIN. */
static int32_t persp_fix(double v)
{
    if (v != v)
        return INT32_MIN;
    v = v < -2147483648.0 ? -2147483648.0 : v;
    v = v > 2147483647.0 ? 2147483647.0 : v;
    return (int32_t)round_even(v);
}

void detfeed__warp_persp_portable(const double t[9], int xb, int y, int i0, int n,
                                  int32_t *xs, int32_t *ys)
{
    const double X0 = t[0] * xb + t[1] * y + t[2];
    const double Y0 = t[3] * xb + t[4] * y + t[5];
    const double W0 = t[6] * xb + t[7] * y + t[8];
    for (int i = i0; i < n; i++) {
        double W = W0 + t[6] * i;
        W = W != 0.0 ? 32.0 / W : 0.0;
        xs[i] = persp_fix((X0 + t[0] * i) * W);
        ys[i] = persp_fix((Y0 + t[3] * i) * W);
    }
}
