/*
 * color_px.h - the per-pixel arithmetic of the colour core, shared by the
 * portable, AVX2 and AVX-512 implementations and by the CUDA kernel, so
 * that all compute the same thing.
 *
 * The specification is OpenCV's 8-bit cvtColor (COLOR_BGR2HSV and
 * COLOR_HSV2BGR, hue in 0..179):
 *   BGR->HSV  integer Q12 with the tables of hsv_tables.h;
 *   HSV->BGR  float32: sector and fraction f of the hue position,
 *             t1 = v * (1 - s), t2 = v * (1 - s * f),
 *             t3 = v * (1 - s * (1 - f)), then c * 255 to an 8-bit code.
 *
 * HSV->BGR comes in several "formulas" that differ in the last bits: OpenCV
 * runs its SIMD block on the first floor(width / B) * B pixels of a row
 * (truncating c * 255) and its scalar code on the rest (rounding it half to
 * even), and the compiler that built it fused some of the multiply-subtracts
 * of t2 and t3 into one rounding. Which ones, and B, depend on the OpenCV
 * build and the code path its dispatcher picks on the CPU (the "stack",
 * detfeed_cv). detfeed__hsv_stack_of() holds the calibrated table.
 *
 * Everything that depends only on the H, S or V byte is folded, per call,
 * into a 256-entry "plan" together with the RandomHSV tables. The pixel loop
 * then does the BGR->HSV integer step, three table reads and the few float
 * operations that depend on more than one channel. The plan is computed with
 * the same float operations OpenCV applies per pixel, so folding changes no
 * bit; it is the same for every formula. This file must be compiled with
 * -ffp-contract=off.
 */
#ifndef DETFEED_COLOR_PX_H
#define DETFEED_COLOR_PX_H

#include "detfeed_img.h"
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

/* The choices that make one HSV->BGR formula (bit flags):
 *   FUSE_T2  t2 = v * fmaf(-s, f, 1)      instead of v * (1 - s * f)
 *   FUSE_T3  t3 = v * fmaf(-s, 1 - f, 1)  instead of v * (1 - s * (1 - f))
 *   ROUND    code = c * 255 rounded half to even (OpenCV's scalar
 *            saturate_cast) instead of truncated (its SIMD v_trunc).
 * The fraction and the sector are the same in all: OpenCV's scalar code
 * reduces the hue position with fmodf and floor where the SIMD block uses
 * trunc, and both give the same f and sector for every hue byte. */
enum { DETFEED__HSV_FUSE_T2 = 1, DETFEED__HSV_FUSE_T3 = 2, DETFEED__HSV_ROUND = 4 };

/* The HSV->BGR arithmetic of one OpenCV build on one code path: in each
 * row, pixels [0, floor(width / block) * block) take formula `simd`, the
 * rest formula `tail`. */
typedef struct detfeed__hsv_stack {
    int block;     /* 16, 32 or 64 pixels */
    unsigned simd; /* DETFEED__HSV_* flags */
    unsigned tail;
} detfeed__hsv_stack;

/* The first pixel of a row of `width` that takes the tail formula. */
static inline DETFEED__HD int detfeed__hsv_block_end(const detfeed__hsv_stack *st,
                                                     int width)
{
    return width / st->block * st->block;
}

#ifdef __cplusplus
extern "C" {
#endif

/* The stack of `cv` (its cpu resolved on this CPU) into *out;
 * DETFEED_EINVAL for NULL or an unknown version or cpu. */
int detfeed__hsv_stack_of(const detfeed_cv *cv, detfeed__hsv_stack *out);

#ifdef __cplusplus
}
#endif

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
#ifdef __CUDA_ARCH__
    return x >> 12; /* CUDA defines >> of a negative int as arithmetic */
#else
    return x >= 0 ? x >> 12 : ~(~x >> 12);
#endif
}

/* A pixel's value v (its largest channel) and its range diff (v minus its
 * smallest): the indices of OpenCV's tables sdiv and hdiv. */
static inline DETFEED__HD void detfeed__hsv_range(int32_t b, int32_t g, int32_t r,
                                                  int32_t *v, int32_t *diff)
{
    int32_t hi = b > g ? b : g;
    hi = hi > r ? hi : r;
    int32_t lo = b < g ? b : g;
    lo = lo < r ? lo : r;
    *v = hi;
    *diff = hi - lo;
}

/* OpenCV RGB2HSV_b's hue (range 180) and saturation of a pixel from its
 * range and the table entries sdiv_v = sdiv[v], hdiv_diff = hdiv[diff]. */
static inline DETFEED__HD void detfeed__hsv_hs_q12(int32_t b, int32_t g, int32_t r,
                                                   int32_t v, int32_t diff,
                                                   int32_t sdiv_v, int32_t hdiv_diff,
                                                   int32_t *H, int32_t *S)
{
    int32_t vr = v == r ? -1 : 0;
    int32_t vg = v == g ? -1 : 0;
    int32_t h = (vr & (g - b)) +
                (~vr & ((vg & (b - r + 2 * diff)) + (~vg & (r - g + 4 * diff))));
    h = detfeed__asr12(h * hdiv_diff + 2048);
    *H = h + (h < 0 ? 180 : 0);
    *S = (diff * sdiv_v + 2048) >> 12;
}

/* OpenCV RGB2HSV_b for one pixel, hue range 180, with its tables sdiv and
 * hdiv (hsv_tables.h). */
static inline DETFEED__HD void detfeed__bgr2hsv_q12(int32_t b, int32_t g, int32_t r,
                                                    const int32_t *sdiv,
                                                    const int32_t *hdiv, int32_t *H,
                                                    int32_t *S, int32_t *V)
{
    int32_t v, diff;
    detfeed__hsv_range(b, g, r, &v, &diff);
    detfeed__hsv_hs_q12(b, g, r, v, diff, sdiv[v], hdiv[diff], H, S);
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

/* c * 255 to a code: truncated, or with DETFEED__HSV_ROUND rounded half to
 * even, then saturated (v_trunc + v_pack_u, or saturate_cast<uchar>). */
static inline DETFEED__HD uint8_t detfeed__f2code(float c, unsigned form)
{
    float y = c * 255.0f;
    int32_t q = (int32_t)(form & DETFEED__HSV_ROUND ? rintf(y) : truncf(y));
    return (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
}

/* Tap i of t0..t3 (a choice, not an array index: no stack array on a GPU). */
static inline DETFEED__HD float detfeed__tap(float t0, float t1, float t2, float t3,
                                             int32_t i)
{
    return i == 0 ? t0 : i == 1 ? t1 : i == 2 ? t2 : t3;
}

/* t2 and t3 of formula `form`; u is f for t2 and 1 - f for t3. */
static inline DETFEED__HD float detfeed__tap_fused(float s, float u, float v)
{
    return v * fmaf(-s, u, 1.0f);
}

static inline DETFEED__HD float detfeed__tap_unfused(float s, float u, float v)
{
    return v * (1.0f - s * u);
}

/* HSV->BGR for one pixel given its plan entries f, s, v and sel, with
 * formula `form` (DETFEED__HSV_* flags). */
static inline DETFEED__HD void detfeed__hsv2bgr_taps(float f, float s, float v,
                                                     int32_t sel, unsigned form,
                                                     uint8_t out[3])
{
    float t1 = v * (1.0f - s);
    float t2 = form & DETFEED__HSV_FUSE_T2 ? detfeed__tap_fused(s, f, v)
                                           : detfeed__tap_unfused(s, f, v);
    float t3 = form & DETFEED__HSV_FUSE_T3 ? detfeed__tap_fused(s, 1.0f - f, v)
                                           : detfeed__tap_unfused(s, 1.0f - f, v);
    out[0] = detfeed__f2code(detfeed__tap(v, t1, t2, t3, sel & 3), form);
    out[1] = detfeed__f2code(detfeed__tap(v, t1, t2, t3, (sel >> 2) & 3), form);
    out[2] = detfeed__f2code(detfeed__tap(v, t1, t2, t3, (sel >> 4) & 3), form);
}

#ifndef __CUDACC__
/* The same steps with the host tables and a plan. */
static inline void detfeed__bgr2hsv_px(int32_t b, int32_t g, int32_t r, int32_t *H,
                                       int32_t *S, int32_t *V)
{
    detfeed__bgr2hsv_q12(b, g, r, detfeed__sdiv, detfeed__hdiv180, H, S, V);
}

static inline void detfeed__hsv2bgr_px(const detfeed__hsv_plan *p, int32_t H, int32_t S,
                                       int32_t V, unsigned form, uint8_t out[3])
{
    detfeed__hsv2bgr_taps(p->f[H], p->s[S], p->v[V], p->sel[H], form, out);
}

/* Builds the plan for the tables `lut` (NULL: identity, i.e. plain HSV->BGR). */
void detfeed__hsv_plan_build(detfeed__hsv_plan *plan, const uint8_t lut[3][256]);

/* The fused operation on n pixels of one row (BGR in, BGR out; in place
 * allowed) with formula `form`. `readable` is the number of bytes that may
 * be read from `src` (at least 3 * n): a vector step may read a little past
 * its pixels, within the row. */
typedef void (*detfeed__hsv_span_fn)(const uint8_t *src, uint8_t *dst, int n,
                                     size_t readable, const detfeed__hsv_plan *plan,
                                     unsigned form);
void detfeed__hsv_span_portable(const uint8_t *src, uint8_t *dst, int n,
                                size_t readable, const detfeed__hsv_plan *plan,
                                unsigned form);
void detfeed__hsv_span_avx2(const uint8_t *src, uint8_t *dst, int n, size_t readable,
                            const detfeed__hsv_plan *plan, unsigned form);

/* The AVX-512 kernel keeps the tables themselves in registers: `hue_plan`
 * is the identity plan (its tap selection by hue value), `lut` the
 * RandomHSV tables. */
void detfeed__hsv_rows_avx512(const uint8_t *src, size_t src_stride, uint8_t *dst,
                              size_t dst_stride, int width, int height,
                              const detfeed__hsv_plan *hue_plan,
                              const uint8_t lut[3][256], const detfeed__hsv_stack *st);

/*
 * The fused colour operation of `st` (see detfeed_hsv_apply_cv, which
 * checks the arguments and resolves the stack, then calls this): for the
 * loader, which resolves its stack once with detfeed__hsv_stack_of and
 * checks its images itself. `isa` must be available (detfeed_isa_available).
 */
void detfeed__hsv_apply_stack(const uint8_t *src, size_t src_stride, uint8_t *dst,
                              size_t dst_stride, int width, int height,
                              const uint8_t lut[3][256], const detfeed__hsv_stack *st,
                              detfeed_isa isa);

#endif /* !__CUDACC__ */

#endif /* DETFEED_COLOR_PX_H */
