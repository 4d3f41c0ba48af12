/*
 * color_avx2.c - the fused colour operation for x86-64 with AVX2 and FMA,
 * 8 pixels per step. Compiled with -mavx2 -mfma -ffp-contract=off and only
 * called after detfeed_isa_available(DETFEED_ISA_AVX2) said yes.
 *
 * It computes exactly what detfeed__bgr2hsv_px and detfeed__hsv2bgr_px
 * compute (color_px.h): the same integer steps lane by lane, the same plan
 * tables (gathered), the same float operations for each formula (a fused
 * multiply-subtract written as _mm256_fnmadd_ps; truncation or rounding
 * half to even of c * 255). Pixels that do not fill a step go through those
 * scalar functions.
 */
#include "color_px.h"

#include <immintrin.h>
#include <string.h>

/* Loads 8 BGR pixels (24 bytes) as two 128-bit lanes: pixels 0-3 in the low
 * lane, 4-7 in the high one. Reads 4 bytes past the 24. */
static inline __m256i load8(const uint8_t *p)
{
    __m128i lo = _mm_loadu_si128((const __m128i *)p);
    __m128i hi = _mm_loadu_si128((const __m128i *)(p + 12));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* Byte shuffle that widens channel c of the 4 pixels of a lane to int32. */
static inline __m256i channel_mask(int c)
{
    return _mm256_setr_epi8((char)c, -1, -1, -1, (char)(c + 3), -1, -1, -1,
                            (char)(c + 6), -1, -1, -1, (char)(c + 9), -1, -1, -1,
                            (char)c, -1, -1, -1, (char)(c + 3), -1, -1, -1,
                            (char)(c + 6), -1, -1, -1, (char)(c + 9), -1, -1, -1);
}

/* Stores 8 pixels packed as int32 lanes b | g << 8 | r << 16: 24 bytes. */
static inline void store8(uint8_t *d, __m256i bgr)
{
    const __m256i pack =
        _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, 0, 1,
                         2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    __m256i p = _mm256_shuffle_epi8(bgr, pack);
    __m128i lo = _mm256_castsi256_si128(p);
    __m128i hi = _mm256_extracti128_si256(p, 1);
    /* 16 bytes, of which the last 4 are overwritten by the high lane next. */
    _mm_storeu_si128((__m128i *)d, lo);
    _mm_storel_epi64((__m128i *)(d + 12), hi);
    uint32_t tail = (uint32_t)_mm_extract_epi32(hi, 2);
    memcpy(d + 20, &tail, 4);
}

/* OpenCV's integer BGR->HSV, lane by lane (see detfeed__bgr2hsv_px). */
static inline void bgr2hsv8(__m256i b, __m256i g, __m256i r, __m256i *H, __m256i *S,
                            __m256i *V)
{
    __m256i v = _mm256_max_epi32(_mm256_max_epi32(b, g), r);
    __m256i vmin = _mm256_min_epi32(_mm256_min_epi32(b, g), r);
    __m256i diff = _mm256_sub_epi32(v, vmin);
    __m256i vr = _mm256_cmpeq_epi32(v, r);
    __m256i vg = _mm256_cmpeq_epi32(v, g);
    __m256i round = _mm256_set1_epi32(2048);
    __m256i sdiv = _mm256_i32gather_epi32(detfeed__sdiv, v, 4);
    __m256i s =
        _mm256_srli_epi32(_mm256_add_epi32(_mm256_mullo_epi32(diff, sdiv), round), 12);
    __m256i d2 = _mm256_add_epi32(diff, diff);
    __m256i hr = _mm256_sub_epi32(g, b);
    __m256i hg = _mm256_add_epi32(_mm256_sub_epi32(b, r), d2);
    __m256i hb = _mm256_add_epi32(_mm256_sub_epi32(r, g), _mm256_add_epi32(d2, d2));
    __m256i h = _mm256_blendv_epi8(_mm256_blendv_epi8(hb, hg, vg), hr, vr);
    __m256i hdiv = _mm256_i32gather_epi32(detfeed__hdiv180, diff, 4);
    h = _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(h, hdiv), round), 12);
    __m256i neg = _mm256_cmpgt_epi32(_mm256_setzero_si256(), h);
    *H = _mm256_add_epi32(h, _mm256_and_si256(neg, _mm256_set1_epi32(180)));
    *S = s;
    *V = v;
}

/* One of t0..t3 per lane, chosen by two bits of sel: bit k (as mask m0, in
 * the sign position) picks odd taps, bit k+1 (m1) picks t2/t3. */
static inline __m256 pick(__m256 t0, __m256 t1, __m256 t2, __m256 t3, __m256 m0,
                          __m256 m1)
{
    __m256 lo = _mm256_blendv_ps(t0, t1, m0);
    __m256 hi = _mm256_blendv_ps(t2, t3, m0);
    return _mm256_blendv_ps(lo, hi, m1);
}

/* c * 255 truncated (or rounded half to even, with DETFEED__HSV_ROUND) and
 * saturated to 0..255, as int32 lanes. */
static inline __m256i code8(__m256 c, unsigned form)
{
    __m256 y = _mm256_mul_ps(c, _mm256_set1_ps(255.0f));
    if (form & DETFEED__HSV_ROUND)
        y = _mm256_round_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256i q = _mm256_cvttps_epi32(y);
    q = _mm256_max_epi32(q, _mm256_setzero_si256());
    return _mm256_min_epi32(q, _mm256_set1_epi32(255));
}

/* v * (1 - s * u), with one rounding for 1 - s * u when `fused`. */
static inline __m256 tap8(__m256 s, __m256 u, __m256 v, unsigned fused)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 w =
        fused ? _mm256_fnmadd_ps(s, u, one) : _mm256_sub_ps(one, _mm256_mul_ps(s, u));
    return _mm256_mul_ps(v, w);
}

/* HSV->BGR through the plan, 8 lanes, formula `form` (see
 * detfeed__hsv2bgr_px). Returns the codes packed b | g << 8 | r << 16. */
static inline __m256i hsv2bgr8(const detfeed__hsv_plan *p, __m256i H, __m256i S,
                               __m256i V, unsigned form)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 f = _mm256_i32gather_ps(p->f, H, 4);
    __m256 s = _mm256_i32gather_ps(p->s, S, 4);
    __m256 v = _mm256_i32gather_ps(p->v, V, 4);
    __m256i sel = _mm256_i32gather_epi32(p->sel, H, 4);
    __m256 t1 = _mm256_mul_ps(v, _mm256_sub_ps(one, s));
    __m256 t2 = tap8(s, f, v, form & DETFEED__HSV_FUSE_T2);
    __m256 t3 = tap8(s, _mm256_sub_ps(one, f), v, form & DETFEED__HSV_FUSE_T3);
    __m256 b = pick(v, t1, t2, t3, _mm256_castsi256_ps(_mm256_slli_epi32(sel, 31)),
                    _mm256_castsi256_ps(_mm256_slli_epi32(sel, 30)));
    __m256 g = pick(v, t1, t2, t3, _mm256_castsi256_ps(_mm256_slli_epi32(sel, 29)),
                    _mm256_castsi256_ps(_mm256_slli_epi32(sel, 28)));
    __m256 r = pick(v, t1, t2, t3, _mm256_castsi256_ps(_mm256_slli_epi32(sel, 27)),
                    _mm256_castsi256_ps(_mm256_slli_epi32(sel, 26)));
    __m256i out = code8(b, form);
    out = _mm256_or_si256(out, _mm256_slli_epi32(code8(g, form), 8));
    return _mm256_or_si256(out, _mm256_slli_epi32(code8(r, form), 16));
}

/* Loads 8 pixels and converts them to HSV. */
static inline void load_hsv8(const uint8_t *s, __m256i *H, __m256i *S, __m256i *V)
{
    const __m256i mb = channel_mask(0), mg = channel_mask(1), mr = channel_mask(2);
    __m256i in = load8(s);
    bgr2hsv8(_mm256_shuffle_epi8(in, mb), _mm256_shuffle_epi8(in, mg),
             _mm256_shuffle_epi8(in, mr), H, S, V);
}

/* The span with `form` a constant where it is inlined (see below). */
static inline __attribute__((always_inline)) void span(const uint8_t *src, uint8_t *dst,
                                                       int n, size_t readable,
                                                       const detfeed__hsv_plan *plan,
                                                       unsigned form)
{
    size_t x = 0, end = (size_t)n;
    /* Two independent 8-pixel steps per iteration, interleaved stage by
     * stage, give the out-of-order core work to overlap with the gathers'
     * latency (about 20% faster than one step at a time).
     * Both steps load before either stores, so in place is safe. A step
     * reads 28 bytes from its start; stay inside `readable`. */
    for (; x + 16 <= end && x * 3 + 24 + 28 <= readable; x += 16) {
        __m256i H0, S0, V0, H1, S1, V1;
        load_hsv8(src + x * 3, &H0, &S0, &V0);
        load_hsv8(src + x * 3 + 24, &H1, &S1, &V1);
        __m256i a = hsv2bgr8(plan, H0, S0, V0, form);
        __m256i b = hsv2bgr8(plan, H1, S1, V1, form);
        store8(dst + x * 3, a);
        store8(dst + x * 3 + 24, b);
    }
    for (; x + 8 <= end && x * 3 + 28 <= readable; x += 8) {
        __m256i H, S, V;
        load_hsv8(src + x * 3, &H, &S, &V);
        store8(dst + x * 3, hsv2bgr8(plan, H, S, V, form));
    }
    for (; x < end; x++) {
        int32_t H, S, V;
        const uint8_t *p = src + x * 3;
        detfeed__bgr2hsv_px(p[0], p[1], p[2], &H, &S, &V);
        detfeed__hsv2bgr_px(plan, H, S, V, form, dst + x * 3);
    }
}

/* One copy of the loop per formula OpenCV uses, so that the choices are
 * made at compile time rather than in every step. */
void detfeed__hsv_span_avx2(const uint8_t *src, uint8_t *dst, int n, size_t readable,
                            const detfeed__hsv_plan *plan, unsigned form)
{
    switch (form) {
    case DETFEED__HSV_FUSE_T2 | DETFEED__HSV_FUSE_T3:
        span(src, dst, n, readable, plan, DETFEED__HSV_FUSE_T2 | DETFEED__HSV_FUSE_T3);
        break;
    case 0:
        span(src, dst, n, readable, plan, 0);
        break;
    default: /* the row tails: a few pixels per row */
        span(src, dst, n, readable, plan, form);
        break;
    }
}
