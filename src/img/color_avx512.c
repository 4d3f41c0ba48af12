/*
 * color_avx512.c - the fused colour operation for x86-64 with AVX-512
 * (F, BW, VBMI), 64 pixels per step. Compiled with -mavx512f -mavx512bw
 * -mavx512vbmi -mfma -ffp-contract=off and only called after
 * detfeed_isa_available(DETFEED_ISA_AVX512) said yes.
 *
 * It computes what detfeed__bgr2hsv_px and detfeed__hsv2bgr_px compute
 * (color_px.h), organised so that no gather is needed:
 *
 * - Every 256-entry table lookup is a byte lookup done with two VPERMI2B
 *   (128 entries each) and a blend on the index's top bit: the RandomHSV
 *   tables, the hue -> tap selection, and OpenCV's Q12 reciprocal tables split
 *   into bytes.
 * - BGR->HSV runs in 16-bit lanes. OpenCV's (x * tab[i] + 2048) >> 12 is
 *   evaluated as x * hi + ((x * lo + 2048) >> 12) with tab[i] = hi * 4096 + lo,
 *   an identity for integers; the second term is one VPMULHRSW of x and
 *   lo * 8, which rounds exactly that way, and the first never overflows
 *   (|x * hi| <= 255 for the saturation and <= 150 for the hue, checked over
 *   the tables in tests/unit/test_color.c's exhaustive comparison).
 * - HSV->BGR runs in 32-bit float lanes with the same operations as the
 *   scalar code for each formula: a fused multiply-subtract as
 *   _mm512_fnmadd_ps, truncation or rounding half to even of c * 255.
 * - A step that has fewer than 64 pixels left in its span (the end of the
 *   SIMD block columns, the row's tail) loads and stores only those pixels'
 *   bytes, with masks; the masked-off lanes compute on zeros and are not
 *   written.
 */
#include "color_px.h"

#include <immintrin.h>
#include <string.h>

/* Per-call byte tables, each 256 entries in four 64-byte quarters. */
typedef struct tables512 {
    _Alignas(64) uint8_t lut[3][256]; /* RandomHSV: H, S, V */
    _Alignas(64) uint8_t sel[256];    /* tap selection by hue value */
    _Alignas(64) uint8_t shi[256];    /* sdiv >> 12 */
    _Alignas(64) uint8_t slo[2][256]; /* (sdiv & 4095) * 8, low and high byte */
    _Alignas(64) uint8_t hhi[256];    /* hdiv180 >> 12 */
    _Alignas(64) uint8_t hlo[2][256]; /* (hdiv180 & 4095) * 8, low, high byte */
} tables512;

static void tables_build(tables512 *t, const detfeed__hsv_plan *hue_plan,
                         const uint8_t lut[3][256])
{
    memcpy(t->lut, lut, sizeof t->lut);
    for (int i = 0; i < 256; i++) {
        int32_t s = detfeed__sdiv[i], h = detfeed__hdiv180[i];
        t->sel[i] = (uint8_t)hue_plan->sel[i];
        t->shi[i] = (uint8_t)(s >> 12);
        t->slo[0][i] = (uint8_t)((s & 4095) * 8);
        t->slo[1][i] = (uint8_t)(((s & 4095) * 8) >> 8);
        t->hhi[i] = (uint8_t)(h >> 12);
        t->hlo[0][i] = (uint8_t)((h & 4095) * 8);
        t->hlo[1][i] = (uint8_t)(((h & 4095) * 8) >> 8);
    }
}

/* A 256-entry byte table held in four registers. */
typedef struct lut512 {
    __m512i q0, q1, q2, q3;
} lut512;

static inline lut512 lut_load(const uint8_t *t)
{
    lut512 l = {_mm512_load_si512(t), _mm512_load_si512(t + 64),
                _mm512_load_si512(t + 128), _mm512_load_si512(t + 192)};
    return l;
}

/* t[idx] for 64 byte lanes. */
static inline __m512i lut_apply(const lut512 *l, __m512i idx)
{
    __m512i lo = _mm512_permutex2var_epi8(l->q0, idx, l->q1);
    __m512i hi = _mm512_permutex2var_epi8(l->q2, idx, l->q3);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi);
}

/* Byte indices that gather channel c of 64 interleaved pixels from the
 * first 128 bytes (permutex2var) and, for the lanes in the mask, from the
 * third 64 bytes (permutexvar). */
typedef struct shuffle512 {
    _Alignas(64) uint8_t ab[64];
    _Alignas(64) uint8_t c[64];
    uint64_t from_c;
} shuffle512;

static void deinterleave_index(shuffle512 *s, int ch)
{
    s->from_c = 0;
    for (int i = 0; i < 64; i++) {
        int p = 3 * i + ch;
        s->ab[i] = (uint8_t)(p < 128 ? p : 0);
        s->c[i] = (uint8_t)(p >= 128 ? p - 128 : 0);
        if (p >= 128)
            s->from_c |= 1ull << i;
    }
}

/* For output register k (bytes 64k..64k+63 of the interleaved row), the
 * indices into (B, G) and, for the R lanes in the mask, into R. */
static void interleave_index(shuffle512 *s, int k)
{
    s->from_c = 0;
    for (int j = 0; j < 64; j++) {
        int p = 64 * k + j, px = p / 3, ch = p % 3;
        s->ab[j] = (uint8_t)(ch == 1 ? px + 64 : px);
        s->c[j] = (uint8_t)px;
        if (ch == 2)
            s->from_c |= 1ull << j;
    }
}

typedef struct kernel512 {
    tables512 t;
    shuffle512 in[3], out[3];
} kernel512;

static inline __m512i gather_channel(const shuffle512 *s, __m512i a, __m512i b,
                                     __m512i c)
{
    __m512i x = _mm512_permutex2var_epi8(a, _mm512_load_si512(s->ab), b);
    return _mm512_mask_permutexvar_epi8(x, s->from_c, _mm512_load_si512(s->c), c);
}

/* Widens lanes [32 * half, 32 * half + 32) of a byte vector to 16 bits. */
static inline __m512i widen16(__m512i v, int half)
{
    return _mm512_cvtepu8_epi16(half ? _mm512_extracti64x4_epi64(v, 1)
                                     : _mm512_castsi512_si256(v));
}

/* lo | hi << 8 for 32 lanes: a 16-bit table value from its two bytes. */
static inline __m512i word16(__m512i lo, __m512i hi, int half)
{
    return _mm512_or_si512(widen16(lo, half), _mm512_slli_epi16(widen16(hi, half), 8));
}

/* OpenCV's integer BGR->HSV for 64 pixels; H and S as bytes (V is v). */
static void bgr2hsv64(const kernel512 *k, __m512i b, __m512i g, __m512i r, __m512i *H,
                      __m512i *S, __m512i *V)
{
    lut512 shi = lut_load(k->t.shi), slo0 = lut_load(k->t.slo[0]),
           slo1 = lut_load(k->t.slo[1]), hhi = lut_load(k->t.hhi),
           hlo0 = lut_load(k->t.hlo[0]), hlo1 = lut_load(k->t.hlo[1]);
    __m512i v = _mm512_max_epu8(_mm512_max_epu8(b, g), r);
    __m512i diff = _mm512_sub_epi8(v, _mm512_min_epu8(_mm512_min_epu8(b, g), r));
    __m512i sh = lut_apply(&shi, v), sl0 = lut_apply(&slo0, v),
            sl1 = lut_apply(&slo1, v);
    __m512i hh = lut_apply(&hhi, diff), hl0 = lut_apply(&hlo0, diff),
            hl1 = lut_apply(&hlo1, diff);
    __m512i s16[2], h16[2];
    for (int half = 0; half < 2; half++) {
        __m512i b16 = widen16(b, half), g16 = widen16(g, half), r16 = widen16(r, half);
        __m512i v16 = widen16(v, half), d16 = widen16(diff, half);
        s16[half] = _mm512_add_epi16(_mm512_mullo_epi16(d16, widen16(sh, half)),
                                     _mm512_mulhrs_epi16(d16, word16(sl0, sl1, half)));
        __m512i d2 = _mm512_add_epi16(d16, d16);
        __m512i hr = _mm512_sub_epi16(g16, b16);
        __m512i hg = _mm512_add_epi16(_mm512_sub_epi16(b16, r16), d2);
        __m512i hb =
            _mm512_add_epi16(_mm512_sub_epi16(r16, g16), _mm512_add_epi16(d2, d2));
        __mmask32 vr = _mm512_cmpeq_epi16_mask(v16, r16);
        __mmask32 vg = _mm512_cmpeq_epi16_mask(v16, g16);
        __m512i h =
            _mm512_mask_blend_epi16(vr, _mm512_mask_blend_epi16(vg, hb, hg), hr);
        h = _mm512_add_epi16(_mm512_mullo_epi16(h, widen16(hh, half)),
                             _mm512_mulhrs_epi16(h, word16(hl0, hl1, half)));
        __mmask32 neg = _mm512_cmplt_epi16_mask(h, _mm512_setzero_si512());
        h16[half] = _mm512_mask_add_epi16(h, neg, h, _mm512_set1_epi16(180));
    }
    *H = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi16_epi8(h16[0])),
                            _mm512_cvtepi16_epi8(h16[1]), 1);
    *S = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi16_epi8(s16[0])),
                            _mm512_cvtepi16_epi8(s16[1]), 1);
    *V = v;
}

/* Lanes [16 q, 16 q + 16) of a byte vector as 32-bit integers. (A switch,
 * because the extract needs an immediate even where the loop is not
 * unrolled.) */
static inline __m512i widen32(__m512i v, int q)
{
    __m128i part;
    switch (q) {
    case 0:
        part = _mm512_extracti32x4_epi32(v, 0);
        break;
    case 1:
        part = _mm512_extracti32x4_epi32(v, 1);
        break;
    case 2:
        part = _mm512_extracti32x4_epi32(v, 2);
        break;
    default:
        part = _mm512_extracti32x4_epi32(v, 3);
        break;
    }
    return _mm512_cvtepu8_epi32(part);
}

/* c rounded half to even to int32, whatever the MXCSR rounding mode. */
static inline __m512i round_even(__m512 c)
{
    return _mm512_cvt_roundps_epi32(c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/* One of t0..t3 per lane: bit `bit` of sel picks odd taps, bit + 1 t2/t3;
 * then its code, truncated or (DETFEED__HSV_ROUND) rounded half to even. */
static inline __m512i code_of(__m512 t0, __m512 t1, __m512 t2, __m512 t3, __m512i sel,
                              int bit, unsigned form)
{
    __mmask16 m0 = _mm512_test_epi32_mask(sel, _mm512_set1_epi32(1 << bit));
    __mmask16 m1 = _mm512_test_epi32_mask(sel, _mm512_set1_epi32(2 << bit));
    __m512 lo = _mm512_mask_blend_ps(m0, t0, t1), hi = _mm512_mask_blend_ps(m0, t2, t3);
    __m512 c = _mm512_mul_ps(_mm512_mask_blend_ps(m1, lo, hi), _mm512_set1_ps(255.0f));
    __m512i q = form & DETFEED__HSV_ROUND ? round_even(c) : _mm512_cvttps_epi32(c);
    return _mm512_min_epi32(_mm512_max_epi32(q, _mm512_setzero_si512()),
                            _mm512_set1_epi32(255));
}

/* v * (1 - s * u), with one rounding for 1 - s * u when `fused`. */
static inline __m512 tap16(__m512 s, __m512 u, __m512 v, unsigned fused)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 w =
        fused ? _mm512_fnmadd_ps(s, u, one) : _mm512_sub_ps(one, _mm512_mul_ps(s, u));
    return _mm512_mul_ps(v, w);
}

/* HSV->BGR for 16 pixels (quarter q of the 64): three 16-byte results. */
static inline void hsv2bgr16(__m512i Hq, __m512i Sq, __m512i Vq, __m512i selq,
                             unsigned form, __m128i out[3])
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(Hq), _mm512_set1_ps(0x1.111112p-5f));
    __m512 f = _mm512_sub_ps(
        x, _mm512_roundscale_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
    __m512 k = _mm512_set1_ps(0x1.010102p-8f);
    __m512 s = _mm512_mul_ps(_mm512_cvtepi32_ps(Sq), k);
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(Vq), k);
    __m512 t1 = _mm512_mul_ps(v, _mm512_sub_ps(one, s));
    __m512 t2 = tap16(s, f, v, form & DETFEED__HSV_FUSE_T2);
    __m512 t3 = tap16(s, _mm512_sub_ps(one, f), v, form & DETFEED__HSV_FUSE_T3);
    for (int c = 0; c < 3; c++)
        out[c] = _mm512_cvtepi32_epi8(code_of(v, t1, t2, t3, selq, 2 * c, form));
}

/* Byte mask of the first k bytes of a 64-byte register (k clamped). */
static inline __mmask64 first_bytes(int k)
{
    return k <= 0 ? 0 : k >= 64 ? ~0ull : (1ull << k) - 1;
}

/* n (1..64) pixels from s to d, formula `form`. */
static inline __attribute__((always_inline)) void step64(const kernel512 *k,
                                                         const lut512 luts[4],
                                                         const uint8_t *s, uint8_t *d,
                                                         int n, unsigned form)
{
    int bytes = 3 * n;
    __mmask64 m[3] = {first_bytes(bytes), first_bytes(bytes - 64),
                      first_bytes(bytes - 128)};
    __m512i a = _mm512_maskz_loadu_epi8(m[0], s),
            b = _mm512_maskz_loadu_epi8(m[1], s + 64),
            c = _mm512_maskz_loadu_epi8(m[2], s + 128);
    __m512i H, S, V;
    bgr2hsv64(k, gather_channel(&k->in[0], a, b, c), gather_channel(&k->in[1], a, b, c),
              gather_channel(&k->in[2], a, b, c), &H, &S, &V);
    H = lut_apply(&luts[0], H);
    S = lut_apply(&luts[1], S);
    V = lut_apply(&luts[2], V);
    __m512i sel = lut_apply(&luts[3], H);
    __m128i parts[3][4];
    for (int q = 0; q < 4; q++) {
        __m128i o[3];
        hsv2bgr16(widen32(H, q), widen32(S, q), widen32(V, q), widen32(sel, q), form,
                  o);
        for (int ch = 0; ch < 3; ch++)
            parts[ch][q] = o[ch];
    }
    __m512i ch[3];
    for (int i = 0; i < 3; i++) {
        __m512i z = _mm512_castsi128_si512(parts[i][0]);
        z = _mm512_inserti32x4(z, parts[i][1], 1);
        z = _mm512_inserti32x4(z, parts[i][2], 2);
        ch[i] = _mm512_inserti32x4(z, parts[i][3], 3);
    }
    for (int o = 0; o < 3; o++)
        _mm512_mask_storeu_epi8(d + 64 * o, m[o],
                                gather_channel(&k->out[o], ch[0], ch[1], ch[2]));
}

/* n pixels of one row, formula `form` (a constant where inlined). */
static inline __attribute__((always_inline)) void
span_form(const kernel512 *k, const lut512 luts[4], const uint8_t *s, uint8_t *d, int n,
          unsigned form)
{
    for (int x = 0; x < n; x += 64)
        step64(k, luts, s + (size_t)x * 3, d + (size_t)x * 3, n - x < 64 ? n - x : 64,
               form);
}

/* One copy of the loop for the SIMD block formulas OpenCV uses, so that
 * their choices are made at compile time; the row tails (a few pixels per
 * row) share a generic one. */
static void span512(const kernel512 *k, const lut512 luts[4], const uint8_t *s,
                    uint8_t *d, int n, unsigned form)
{
    switch (form) {
    case DETFEED__HSV_FUSE_T2 | DETFEED__HSV_FUSE_T3:
        span_form(k, luts, s, d, n, DETFEED__HSV_FUSE_T2 | DETFEED__HSV_FUSE_T3);
        break;
    case 0:
        span_form(k, luts, s, d, n, 0);
        break;
    default:
        span_form(k, luts, s, d, n, form);
        break;
    }
}

void detfeed__hsv_rows_avx512(const uint8_t *src, size_t src_stride, uint8_t *dst,
                              size_t dst_stride, int width, int height,
                              const detfeed__hsv_plan *hue_plan,
                              const uint8_t lut[3][256], const detfeed__hsv_stack *st)
{
    kernel512 k;
    tables_build(&k.t, hue_plan, lut);
    for (int c = 0; c < 3; c++) {
        deinterleave_index(&k.in[c], c);
        interleave_index(&k.out[c], c);
    }
    lut512 luts[4] = {lut_load(k.t.lut[0]), lut_load(k.t.lut[1]), lut_load(k.t.lut[2]),
                      lut_load(k.t.sel)};
    int nb = detfeed__hsv_block_end(st, width);
    for (int y = 0; y < height; y++) {
        const uint8_t *s = src + (size_t)y * src_stride;
        uint8_t *d = dst + (size_t)y * dst_stride;
        span512(&k, luts, s, d, nb, st->simd);
        span512(&k, luts, s + (size_t)nb * 3, d + (size_t)nb * 3, width - nb, st->tail);
    }
}
