/*
 * warp5_avx2.c - the OpenCV 5.x warp (warp5.c) for x86-64 with AVX2 and FMA:
 * the positions of the float kernel and of IPP's general kernel, and the
 * row samplers, 8 pixels per step.
 * Compiled with -mavx2 -mfma -ffp-contract=off and only called after
 * detfeed_isa_available(DETFEED_ISA_AVX2) said yes.
 *
 * Every operation is the IEEE operation the portable code performs: fused
 * multiply-adds where the emulated OpenCV build fuses (_mm256_fmadd_ps, and
 * fmaf, which is one instruction here), a multiply then an add where it
 * does not, true division, and cvtps2dq for the rounding (to nearest, ties
 * to even, as OpenCV's v_round). So the bytes are the portable code's
 * whichever OpenCV build is emulated.
 *
 * The sampler computes a step of 8 pixels here when all four taps of each
 * are inside the source: each tap pair is gathered as two dwords (the bytes
 * at the pixel's offset and 2 bytes further), which stay within the pair's
 * 6 bytes. A step whose pixels all lie wholly outside (and have finite
 * fractions) is the border value; any other step, and the row's last n % 8
 * pixels, go pixel by pixel through the portable rule (warp_px.h).
 */
#include "warp_px.h"

#include <immintrin.h>
#include <string.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* ---- positions ------------------------------------------------------------ */

/* detfeed__warp5_split for 8 positions: floor, clamp to [-2, lim] (NaN to
 * -2, as the scalar one), and the fraction: s - floor(s) inside the clamp
 * range, s - s (0, or NaN for a non-finite s) outside. */
static ALWAYS_INLINE void split8(__m256 s, __m256 lim, int32_t *ip, float *ap)
{
    const __m256 m2 = _mm256_set1_ps(-2.0f);
    __m256 f = _mm256_floor_ps(s);
    /* max_ps returns its second operand when one is NaN. */
    __m256 c = _mm256_min_ps(_mm256_max_ps(f, m2), lim);
    __m256 in = _mm256_and_ps(_mm256_cmp_ps(s, m2, _CMP_GE_OQ),
                              _mm256_cmp_ps(s, lim, _CMP_LT_OQ));
    __m256 a = _mm256_blendv_ps(_mm256_sub_ps(s, s), _mm256_sub_ps(s, f), in);
    _mm256_storeu_si256((__m256i *)ip, _mm256_cvttps_epi32(c));
    _mm256_storeu_ps(ap, a);
}

static ALWAYS_INLINE __m256 fma8(__m256 a, __m256 b, __m256 c, bool fused)
{
    return fused ? _mm256_fmadd_ps(a, b, c) : _mm256_add_ps(_mm256_mul_ps(a, b), c);
}

bool detfeed__warp5_float_pos_avx2(const detfeed__warp5 *w, int y, int n,
                                   const detfeed__warp5_pos *p)
{
    const float *m = w->mf;
    const bool fused = w->fused;
    const float yf = (float)y;
    const __m256 mx = _mm256_set1_ps(yf * m[1] + m[2]);
    const __m256 my = _mm256_set1_ps(yf * m[4] + m[5]);
    const __m256 mw = _mm256_set1_ps(yf * m[7] + m[8]);
    const __m256 m0 = _mm256_set1_ps(m[0]), m3 = _mm256_set1_ps(m[3]);
    const __m256 m6 = _mm256_set1_ps(m[6]);
    const __m256 wl = _mm256_set1_ps((float)w->src_width);
    const __m256 hl = _mm256_set1_ps((float)w->src_height);
    const int nvec = n - n % w->block; /* a multiple of 8 */
    __m256i xi = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256 nan = _mm256_setzero_ps();
    for (int x = 0; x < nvec; x += 8) {
        /* (float)x, as the lanes' x in OpenCV (exact below 2^24) */
        __m256 xf = _mm256_cvtepi32_ps(xi);
        __m256 sx = fma8(m0, xf, mx, fused), sy = fma8(m3, xf, my, fused);
        if (w->persp) {
            __m256 ww = fma8(m6, xf, mw, fused);
            sx = _mm256_div_ps(sx, ww);
            sy = _mm256_div_ps(sy, ww);
        }
        split8(sx, wl, p->ix + x, p->ax + x);
        split8(sy, hl, p->iy + x, p->ay + x);
        nan =
            _mm256_or_ps(nan, _mm256_cmp_ps(_mm256_loadu_ps(p->ax + x),
                                            _mm256_loadu_ps(p->ay + x), _CMP_UNORD_Q));
        xi = _mm256_add_epi32(xi, _mm256_set1_epi32(8));
    }
    bool nonfinite = _mm256_movemask_ps(nan) != 0;
    if (nvec < n)
        nonfinite |= detfeed__warp5_float_pos(w, y, nvec, n, p);
    return nonfinite;
}

/* IPP, general matrix: 4 double positions s of one axis split as an edge
 * pixel is (detfeed__warp5_ipp_split in double): floor clamped to [-2,
 * lim] (NaN to -2) and the fraction s - floor(s) rounded to float inside
 * the clamp range, 0 outside (the settled border). */
static ALWAYS_INLINE void split4d(__m256d s, __m256d lim, __m128i *ip, __m128 *ap)
{
    const __m256d m2 = _mm256_set1_pd(-2.0);
    __m256d f = _mm256_floor_pd(s);
    /* max_pd returns its second operand when one is NaN. */
    __m256d c = _mm256_min_pd(_mm256_max_pd(f, m2), lim);
    __m256d in = _mm256_and_pd(_mm256_cmp_pd(s, m2, _CMP_GE_OQ),
                               _mm256_cmp_pd(s, lim, _CMP_LT_OQ));
    *ip = _mm256_cvttpd_epi32(c);
    *ap = _mm256_cvtpd_ps(_mm256_and_pd(_mm256_sub_pd(s, f), in));
}

/* The low dword of each qword of two 4-lane double masks, as 8 lanes. */
static ALWAYS_INLINE __m256i mask8(__m256d a, __m256d b)
{
    const __m256i lo = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    __m256i pa = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(a), lo);
    __m256i pb = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(b), lo);
    return _mm256_permute2x128_si256(pa, pb, 0x20);
}

/* One axis of 8 IPP positions (lanes 0-3 in a, 4-7 in b): an inner pixel
 * (mask `inner`) splits the position rounded to float, any other the
 * double. */
static ALWAYS_INLINE void ipp_axis8(__m256d a, __m256d b, __m256i inner, float lim,
                                    int32_t *ip, float *ap)
{
    const __m256d limd = _mm256_set1_pd((double)lim);
    __m128i ia, ib;
    __m128 fa, fb;
    split4d(a, limd, &ia, &fa);
    split4d(b, limd, &ib, &fb);
    __m256i id = _mm256_set_m128i(ib, ia);
    __m256 ad = _mm256_set_m128(fb, fa);
    int32_t fi[8];
    float fr[8];
    split8(_mm256_set_m128(_mm256_cvtpd_ps(b), _mm256_cvtpd_ps(a)), _mm256_set1_ps(lim),
           fi, fr);
    __m256i i = _mm256_blendv_epi8(id, _mm256_loadu_si256((const __m256i *)fi), inner);
    __m256 f = _mm256_blendv_ps(ad, _mm256_loadu_ps(fr), _mm256_castsi256_ps(inner));
    _mm256_storeu_si256((__m256i *)ip, i);
    _mm256_storeu_ps(ap, f);
}

/* Whether 4 double positions are inner pixels: 0 <= sx < wl, 0 <= sy < hl
 * (wl = W - 1, hl = H - 1; NaN is not). */
static ALWAYS_INLINE __m256d inner4(__m256d sx, __m256d sy, __m256d wl, __m256d hl)
{
    const __m256d z = _mm256_setzero_pd();
    __m256d x = _mm256_and_pd(_mm256_cmp_pd(sx, z, _CMP_GE_OQ),
                              _mm256_cmp_pd(sx, wl, _CMP_LT_OQ));
    __m256d y = _mm256_and_pd(_mm256_cmp_pd(sy, z, _CMP_GE_OQ),
                              _mm256_cmp_pd(sy, hl, _CMP_LT_OQ));
    return _mm256_and_pd(x, y);
}

/* 4 positions of one axis in double, (m0 x + m1 y) + m2, divided by w when
 * ww is not NULL. */
static ALWAYS_INLINE __m256d ipp4(const double *m, __m256d y, __m256d x,
                                  const __m256d *ww)
{
    __m256d m1y = _mm256_mul_pd(_mm256_set1_pd(m[1]), y);
    __m256d a =
        _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(m[0]), x), m1y),
                      _mm256_set1_pd(m[2]));
    return ww != NULL ? _mm256_div_pd(a, *ww) : a;
}

void detfeed__warp5_ipp_pos_avx2(const detfeed__warp5 *w, int y, int n,
                                 const detfeed__warp5_pos *p)
{
    const __m256d yd = _mm256_set1_pd((double)y), four = _mm256_set1_pd(4.0);
    const __m256d wl = _mm256_set1_pd((double)(w->src_width - 1));
    const __m256d hl = _mm256_set1_pd((double)(w->src_height - 1));
    const double *m = w->md;
    const int n8 = n - n % 8;
    __m256d xa = _mm256_setr_pd(0.0, 1.0, 2.0, 3.0);
    for (int x = 0; x < n8; x += 8) {
        __m256d xb = _mm256_add_pd(xa, four), wa, wb;
        const __m256d *pa = NULL, *pb = NULL;
        if (w->persp) {
            wa = ipp4(m + 6, yd, xa, NULL);
            wb = ipp4(m + 6, yd, xb, NULL);
            pa = &wa;
            pb = &wb;
        }
        __m256d sxa = ipp4(m, yd, xa, pa), sxb = ipp4(m, yd, xb, pb);
        __m256d sya = ipp4(m + 3, yd, xa, pa), syb = ipp4(m + 3, yd, xb, pb);
        __m256i inner = mask8(inner4(sxa, sya, wl, hl), inner4(sxb, syb, wl, hl));
        ipp_axis8(sxa, sxb, inner, (float)w->src_width, p->ix + x, p->ax + x);
        ipp_axis8(sya, syb, inner, (float)w->src_height, p->iy + x, p->ay + x);
        xa = _mm256_add_pd(xb, four);
    }
    detfeed__warp5_ipp_pos(w, y, n8, n, p);
}

/* ---- the row samplers ------------------------------------------------------ */

/* Channel c (byte c of each dword) of 8 gathered dwords, as float. */
static ALWAYS_INLINE __m256 channel(__m256i v, int shift)
{
    return _mm256_cvtepi32_ps(
        _mm256_and_si256(_mm256_srli_epi32(v, shift), _mm256_set1_epi32(0xFF)));
}

/* p + a (q - p), fused or not, q - p exact (small integers or the rounded
 * difference OpenCV takes). */
static ALWAYS_INLINE __m256 lerp8(__m256 a, __m256 p, __m256 q, bool fused)
{
    return fma8(a, _mm256_sub_ps(q, p), p, fused);
}

/* 8 pixels with all taps inside, at byte offsets ofs: dwords B | G << 8 |
 * R << 16. The dword at ofs holds B G R of p00 (and a byte of p01); the
 * one 2 bytes further holds B G R of p01 in its upper three bytes. Lerps
 * along x then y, or along y then x (`yfirst`). */
static ALWAYS_INLINE __m256i blend8(const uint8_t *px, size_t stride, __m256i ofs,
                                    __m256 ax, __m256 ay, bool fused, bool yfirst)
{
    const int *r0 = (const int *)(const void *)px;
    const int *r0b = (const int *)(const void *)(px + 2);
    const int *r1 = (const int *)(const void *)(px + stride);
    const int *r1b = (const int *)(const void *)(px + stride + 2);
    const __m256i t0 = _mm256_i32gather_epi32(r0, ofs, 1);
    const __m256i t1 = _mm256_i32gather_epi32(r0b, ofs, 1);
    const __m256i b0 = _mm256_i32gather_epi32(r1, ofs, 1);
    const __m256i b1 = _mm256_i32gather_epi32(r1b, ofs, 1);
    const __m256i lo = _mm256_setzero_si256(), hi = _mm256_set1_epi32(255);
    __m256i out = _mm256_setzero_si256();
    for (int c = 0; c < 3; c++) {
        const __m256 p00 = channel(t0, 8 * c), p01 = channel(t1, 8 * c + 8);
        const __m256 p10 = channel(b0, 8 * c), p11 = channel(b1, 8 * c + 8);
        __m256 v;
        if (yfirst)
            v = lerp8(ax, lerp8(ay, p00, p10, fused), lerp8(ay, p01, p11, fused),
                      fused);
        else
            v = lerp8(ay, lerp8(ax, p00, p01, fused), lerp8(ax, p10, p11, fused),
                      fused);
        __m256i r = _mm256_cvtps_epi32(v);
        r = _mm256_min_epi32(_mm256_max_epi32(r, lo), hi);
        out = _mm256_or_si256(out, _mm256_slli_epi32(r, 8 * c));
    }
    return out;
}

/* Stores 8 dwords B G R 0 as 24 bytes. */
static ALWAYS_INLINE void store24(uint8_t *d, __m256i v)
{
    const __m256i pack =
        _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, 0, 1,
                         2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
    v = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, pack), join);
    _mm_storeu_si128((__m128i *)d, _mm256_castsi256_si128(v));
    _mm_storel_epi64((__m128i *)(d + 16), _mm256_extracti128_si256(v, 1));
}

/* The pixels [i, i + k) one by one. */
static void pixels(const detfeed__warp_src *s, const detfeed__warp5 *w,
                   const detfeed__warp5_pos *p, uint8_t *d, int i, int k)
{
    for (int j = i; j < i + k; j++)
        detfeed__warp5_pixel(s, w, p->ix[j], p->iy[j], p->ax[j], p->ay[j],
                             d + (size_t)(j - i) * 3);
}

static ALWAYS_INLINE void row(const detfeed__warp_src *s, const detfeed__warp5 *w,
                              const detfeed__warp5_pos *p, bool fused, bool yfirst,
                              uint8_t *d, int n)
{
    int i = 0;
    if (s->offsets32 && s->width >= 2 && s->height >= 2) {
        const __m256i zero = _mm256_setzero_si256(), m2 = _mm256_set1_epi32(-2);
        const __m256i wi = _mm256_set1_epi32(s->width - 2);
        const __m256i hi = _mm256_set1_epi32(s->height - 2);
        const __m256i wo = _mm256_set1_epi32(s->width - 1);
        const __m256i ho = _mm256_set1_epi32(s->height - 1);
        const __m256i vstride = _mm256_set1_epi32((int32_t)s->stride);
        uint8_t fill[24];
        for (int k = 0; k < 24; k++)
            fill[k] = s->border[k % 3];
        for (; i + 8 <= n; i += 8, d += 24) {
            __m256i ix = _mm256_loadu_si256((const __m256i *)(p->ix + i));
            __m256i iy = _mm256_loadu_si256((const __m256i *)(p->iy + i));
            __m256 ax = _mm256_loadu_ps(p->ax + i), ay = _mm256_loadu_ps(p->ay + i);
            /* 0 <= ix <= W - 2 and 0 <= iy <= H - 2 */
            __m256i out =
                _mm256_or_si256(_mm256_or_si256(_mm256_cmpgt_epi32(ix, wi),
                                                _mm256_cmpgt_epi32(zero, ix)),
                                _mm256_or_si256(_mm256_cmpgt_epi32(iy, hi),
                                                _mm256_cmpgt_epi32(zero, iy)));
            if (!_mm256_testz_si256(out, out)) {
                /* ix > W - 1, ix < -1, iy > H - 1 or iy < -1, fractions
                 * not NaN */
                __m256i gone =
                    _mm256_or_si256(_mm256_or_si256(_mm256_cmpgt_epi32(ix, wo),
                                                    _mm256_cmpeq_epi32(ix, m2)),
                                    _mm256_or_si256(_mm256_cmpgt_epi32(iy, ho),
                                                    _mm256_cmpeq_epi32(iy, m2)));
                __m256 ord = _mm256_cmp_ps(ax, ay, _CMP_ORD_Q);
                gone = _mm256_and_si256(gone, _mm256_castps_si256(ord));
                if (_mm256_movemask_ps(_mm256_castsi256_ps(gone)) == 0xFF)
                    memcpy(d, fill, 24);
                else
                    pixels(s, w, p, d, i, 8);
                continue;
            }
            __m256i ofs =
                _mm256_add_epi32(_mm256_mullo_epi32(iy, vstride),
                                 _mm256_add_epi32(ix, _mm256_add_epi32(ix, ix)));
            store24(d, blend8(s->px, s->stride, ofs, ax, ay, fused, yfirst));
        }
    }
    pixels(s, w, p, d, i, n - i);
}

/* 8 columns x .. x + 7 with both taps inside of the source row `row`,
 * lerped into the three planes of h. */
static ALWAYS_INLINE void hblock(const uint8_t *row, const int32_t *ix, const float *ax,
                                 bool fused, float *h, size_t n)
{
    __m256i i = _mm256_loadu_si256((const __m256i *)ix);
    __m256i ofs = _mm256_add_epi32(i, _mm256_add_epi32(i, i));
    const __m256i t0 = _mm256_i32gather_epi32((const int *)(const void *)row, ofs, 1);
    const __m256i t1 =
        _mm256_i32gather_epi32((const int *)(const void *)(row + 2), ofs, 1);
    const __m256 a = _mm256_loadu_ps(ax);
    for (int c = 0; c < 3; c++)
        _mm256_storeu_ps(h + (size_t)c * n,
                         lerp8(a, channel(t0, 8 * c), channel(t1, 8 * c + 8), fused));
}

static ALWAYS_INLINE void hrow(const detfeed__warp_src *s, const detfeed__warp5_pos *p,
                               int r, bool fused, float *h, int n)
{
    if (r < 0 || r >= s->height) {
        /* a lerp of border values (finite fractions) is the border value */
        for (int c = 0; c < 3; c++)
            for (int x = 0; x < n; x++)
                h[(size_t)c * n + x] = s->border[c];
        return;
    }
    const uint8_t *row = s->px + (size_t)r * s->stride;
    const __m256i zero = _mm256_setzero_si256();
    const __m256i wi = _mm256_set1_epi32(s->width - 2);
    int x = 0;
    for (; x + 8 <= n; x += 8) {
        __m256i ix = _mm256_loadu_si256((const __m256i *)(p->ix + x));
        __m256i out =
            _mm256_or_si256(_mm256_cmpgt_epi32(ix, wi), _mm256_cmpgt_epi32(zero, ix));
        if (_mm256_testz_si256(out, out)) {
            hblock(row, p->ix + x, p->ax + x, fused, h + x, (size_t)n);
            continue;
        }
        for (int k = x; k < x + 8; k++)
            for (int c = 0; c < 3; c++)
                h[(size_t)c * n + k] =
                    detfeed__warp5_hpx(s, row, p->ix[k], p->ax[k], c, fused);
    }
    for (; x < n; x++)
        for (int c = 0; c < 3; c++)
            h[(size_t)c * n + x] =
                detfeed__warp5_hpx(s, row, p->ix[x], p->ax[x], c, fused);
}

void detfeed__warp5_hrow_avx2(const detfeed__warp_src *s, const detfeed__warp5 *w,
                              const detfeed__warp5_pos *p, int r, int n, float *h)
{
    if (w->fused)
        hrow(s, p, r, true, h, n);
    else
        hrow(s, p, r, false, h, n);
}

static ALWAYS_INLINE void vrow(const float *h0, const float *h1, float ay, bool fused,
                               uint8_t *d, int n)
{
    const __m256 a = _mm256_set1_ps(ay);
    const __m256i lo = _mm256_setzero_si256(), hi = _mm256_set1_epi32(255);
    const size_t sn = (size_t)n;
    int x = 0;
    for (; x + 8 <= n; x += 8, d += 24) {
        __m256i out = _mm256_setzero_si256();
        for (int c = 0; c < 3; c++) {
            __m256 v0 = _mm256_loadu_ps(h0 + c * sn + x);
            __m256 v1 = _mm256_loadu_ps(h1 + c * sn + x);
            __m256i r = _mm256_cvtps_epi32(lerp8(a, v0, v1, fused));
            r = _mm256_min_epi32(_mm256_max_epi32(r, lo), hi);
            out = _mm256_or_si256(out, _mm256_slli_epi32(r, 8 * c));
        }
        store24(d, out);
    }
    for (; x < n; x++, d += 3)
        for (int c = 0; c < 3; c++) {
            const float v0 = h0[c * sn + x], v1 = h1[c * sn + x];
            d[c] = detfeed__wo_byte(detfeed__wo_fma(ay, v1 - v0, v0, fused));
        }
}

void detfeed__warp5_vrow_avx2(const detfeed__warp5 *w, const float *h0, const float *h1,
                              float ay, uint8_t *d, int n)
{
    if (w->fused)
        vrow(h0, h1, ay, true, d, n);
    else
        vrow(h0, h1, ay, false, d, n);
}

void detfeed__warp5_row_avx2(const detfeed__warp_src *s, const detfeed__warp5 *w,
                             const detfeed__warp5_pos *p, uint8_t *d, int n)
{
    if (w->yfirst) {
        if (w->fused)
            row(s, w, p, true, true, d, n);
        else
            row(s, w, p, false, true, d, n);
    } else if (w->fused) {
        row(s, w, p, true, false, d, n);
    } else {
        row(s, w, p, false, false, d, n);
    }
}
