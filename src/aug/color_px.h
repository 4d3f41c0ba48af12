/*
 * color_px.h - the per-pixel arithmetic of the colour core, shared by the
 * portable and the AVX2 implementations so that both compute the same thing.
 *
 * The specification is OpenCV's 8-bit cvtColor (see DESIGN §2.2):
 *   BGR->HSV  integer Q12 with the tables of hsv_tables.h;
 *   HSV->BGR  float32 as in OpenCV's AVX2 SIMD block: sector from trunc,
 *             t2 = v * fmaf(-s, f, 1), t3 = v * fmaf(-s, 1 - f, 1), and
 *             truncation of c * 255 to the 8-bit code.
 *
 * Everything that depends only on the H, S or V byte is folded, per call,
 * into a 256-entry "plan" together with the RandomHSV tables. The pixel loop
 * then does the BGR->HSV integer step, three table reads and the few float
 * operations that depend on more than one channel. The plan is computed with
 * the same float operations OpenCV applies per pixel, so folding changes no
 * bit. This file must be compiled with -ffp-contract=off.
 */
#ifndef DETFEED_COLOR_PX_H
#define DETFEED_COLOR_PX_H

#include "hsv_tables.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* The per-pixel steps below are also compiled into the CUDA kernel
 * (src/cuda), which must compute the same bytes: DETFEED__HD makes them
 * host and device functions there, and plain static inline functions here. */
#ifdef __CUDACC__
#define DETFEED__HD __host__ __device__
#else
#define DETFEED__HD
#endif

/* OpenCV's float constants, as the bit patterns it computes them to:
 * hscale = 6.0f / 180.0f, K = 1.0f / 255.0f, and 1.0f / 6.0f. */
#define DETFEED__HSCALE 0x1.111112p-5f
#define DETFEED__K255   0x1.010102p-8f
#define DETFEED__SIXTH  0x1.555556p-3f

/* OpenCV's sector table: for sectors 0..5, which of the taps t0..t3 become
 * (b, g, r), packed as two bits each (B in bits 0-1, G in 2-3, R in 4-5):
 * {1,3,0} {1,0,2} {3,0,1} {0,2,1} {0,1,3} {2,1,0}, i.e. 13, 33, 19, 24, 52
 * and 6, six bits per sector. */
#define DETFEED__SECTOR_SELS 0x1b461384dull

typedef struct detfeed__hsv_plan {
    float f[256];     /* fractional hue position f, indexed by the input H */
    float s[256];     /* saturation as float, indexed by the input S */
    float v[256];     /* value as float, indexed by the input V */
    int32_t sel[256]; /* tap selection by sector, indexed by the input H */
} detfeed__hsv_plan;

/* Floor division by 4096 of a signed value: OpenCV's arithmetic >> 12,
 * written so that it does not rely on implementation-defined shifts. */
static inline DETFEED__HD int32_t detfeed__asr12(int32_t x)
{
    return x >= 0 ? x >> 12 : ~(~x >> 12);
}

/* OpenCV RGB2HSV_b for one pixel, hue range 180, with its tables sdiv and
 * hdiv (hsv_tables.h). */
static inline DETFEED__HD void detfeed__bgr2hsv_q12(int32_t b, int32_t g, int32_t r,
                                                    const int32_t *sdiv,
                                                    const int32_t *hdiv, int32_t *H,
                                                    int32_t *S, int32_t *V)
{
    int32_t v = b > g ? b : g;
    v = v > r ? v : r;
    int32_t vmin = b < g ? b : g;
    vmin = vmin < r ? vmin : r;
    int32_t diff = v - vmin;
    int32_t vr = v == r ? -1 : 0;
    int32_t vg = v == g ? -1 : 0;
    int32_t s = (diff * sdiv[v] + 2048) >> 12;
    int32_t h = (vr & (g - b)) +
                (~vr & ((vg & (b - r + 2 * diff)) + (~vg & (r - g + 4 * diff))));
    h = detfeed__asr12(h * hdiv[diff] + 2048);
    h += h < 0 ? 180 : 0;
    *H = h;
    *S = s;
    *V = v;
}

/* Hue byte -> (f, tap selection) exactly as OpenCV's SIMD block derives
 * them from h: x = h * hscale, pre = trunc(x), f = x - pre, sector = pre -
 * trunc(pre / 6) * 6 (the division written as OpenCV writes it). */
static inline DETFEED__HD void detfeed__hue_entry(int32_t hue, float *f, int32_t *sel)
{
    float x = (float)hue * DETFEED__HSCALE;
    float pre = truncf(x);
    float q = truncf(pre * DETFEED__SIXTH);
    int32_t sector = (int32_t)(pre - q * 6.0f);
    *f = x - pre;
    *sel = (int32_t)((DETFEED__SECTOR_SELS >> (6 * sector)) & 63u);
}

/* A saturation or value byte as OpenCV's float: x * (1.0f / 255). */
static inline DETFEED__HD float detfeed__unit_entry(int32_t x)
{
    return (float)x * DETFEED__K255;
}

/* c * 255 truncated and saturated to a code, as v_trunc + v_pack_u. */
static inline DETFEED__HD uint8_t detfeed__f2code(float c)
{
    int32_t q = (int32_t)truncf(c * 255.0f);
    return (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
}

/* Tap i of t0..t3 (a choice, not an array index: no stack array on a GPU). */
static inline DETFEED__HD float detfeed__tap(float t0, float t1, float t2, float t3,
                                             int32_t i)
{
    return i == 0 ? t0 : i == 1 ? t1 : i == 2 ? t2 : t3;
}

/* HSV->BGR for one pixel given its plan entries f, s, v and sel. */
static inline DETFEED__HD void detfeed__hsv2bgr_taps(float f, float s, float v,
                                                     int32_t sel, uint8_t out[3])
{
    float t1 = v * (1.0f - s);
    float t2 = v * fmaf(-s, f, 1.0f);
    float t3 = v * fmaf(-s, 1.0f - f, 1.0f);
    out[0] = detfeed__f2code(detfeed__tap(v, t1, t2, t3, sel & 3));
    out[1] = detfeed__f2code(detfeed__tap(v, t1, t2, t3, (sel >> 2) & 3));
    out[2] = detfeed__f2code(detfeed__tap(v, t1, t2, t3, (sel >> 4) & 3));
}

#ifndef __CUDACC__
/* The same steps with the host tables and a plan. */
static inline void detfeed__bgr2hsv_px(int32_t b, int32_t g, int32_t r, int32_t *H,
                                       int32_t *S, int32_t *V)
{
    detfeed__bgr2hsv_q12(b, g, r, detfeed__sdiv, detfeed__hdiv180, H, S, V);
}

static inline void detfeed__hsv2bgr_px(const detfeed__hsv_plan *p, int32_t H, int32_t S,
                                       int32_t V, uint8_t out[3])
{
    detfeed__hsv2bgr_taps(p->f[H], p->s[S], p->v[V], p->sel[H], out);
}

/* Builds the plan for the tables `lut` (NULL: identity, i.e. plain HSV->BGR). */
void detfeed__hsv_plan_build(detfeed__hsv_plan *plan, const uint8_t lut[3][256]);

/* Row kernels: n pixels of BGR in, BGR out (fused), or HSV->BGR only. */
void detfeed__hsv_rows_portable(const uint8_t *src, size_t src_stride, uint8_t *dst,
                                size_t dst_stride, int width, int height,
                                const detfeed__hsv_plan *plan);
void detfeed__hsv_rows_avx2(const uint8_t *src, size_t src_stride, uint8_t *dst,
                            size_t dst_stride, int width, int height,
                            const detfeed__hsv_plan *plan);
/* The AVX-512 kernel also takes the identity plan (its tap selection by hue
 * value) and the tables themselves; `plan` serves the row tails. */
void detfeed__hsv_rows_avx512(const uint8_t *src, size_t src_stride, uint8_t *dst,
                              size_t dst_stride, int width, int height,
                              const detfeed__hsv_plan *plan,
                              const detfeed__hsv_plan *hue_plan,
                              const uint8_t lut[3][256]);

#endif /* !__CUDACC__ */

#endif /* DETFEED_COLOR_PX_H */
