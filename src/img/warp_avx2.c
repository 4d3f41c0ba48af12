/*
 * warp_avx2.c - the warp row sampler and the perspective positions for
 * x86-64 with AVX2. Compiled with -mavx2 -mfma -ffp-contract=off and only
 * called after detfeed_isa_available(DETFEED_ISA_AVX2) said yes.
 *
 * The sampler takes 8 pixels per step. A step whose 8 pixels all have 0 <=
 * sx <= W - 3 and 0 <= sy <= H - 2 is computed here; any other step goes
 * through the portable sampler. (sx <= W - 3 rather than W - 2 because each
 * tap pair is loaded as 8 bytes, two past the pair: the last pixel of a row
 * would read past the row.) The blend is the separable form of warp_px.h:
 * h_top and h_bot in one pmaddubsw (pixel bytes times weights <= 32, sums
 * <= 8160, no saturation), v in one pmaddwd (sums <= 261120), then (v +
 * 512) >> 10. All of it is integer.
 */
#include "warp_px.h"

#include <immintrin.h>
#include <string.h>

/* The two tap pairs of a pixel: 8 bytes of its row (B G R of sx, B G R of
 * sx + 1, two more) and the same 8 bytes of the row below. */
static inline __m128i load_taps(const uint8_t *p, size_t stride)
{
    uint64_t top, bot;
    memcpy(&top, p, 8);
    memcpy(&bot, p + stride, 8);
    return _mm_set_epi64x((long long)bot, (long long)top);
}

/* Pixels k (low lane) and k + 4 (high lane) of a step: taps gathered, the
 * separable blend, (v + 512) >> 10 in dwords B, G, R, 0. wx and wy hold
 * each pixel's weights in its dword (pixels 0-3 in the low lane, 4-7 in the
 * high one); `sel` broadcasts dword k of each lane. */
#define BLEND_PAIR(k, sel)                                                             \
    _mm256_srli_epi32(                                                                 \
        _mm256_add_epi32(                                                              \
            _mm256_madd_epi16(                                                         \
                _mm256_maddubs_epi16(                                                  \
                    _mm256_shuffle_epi8(                                               \
                        _mm256_inserti128_si256(                                       \
                            _mm256_castsi128_si256(load_taps(px + ofs[k], stride)),    \
                            load_taps(px + ofs[(k) + 4], stride), 1),                  \
                        gather),                                                       \
                    _mm256_shuffle_epi32(wx, sel)),                                    \
                _mm256_shuffle_epi32(wy, sel)),                                        \
            half),                                                                     \
        10)

void detfeed__warp_row_avx2(const detfeed__warp_src *s, const int32_t *xs,
                            const int32_t *ys, uint8_t *d, int n)
{
    int i = 0;
    /* Offsets are computed in int32, and positions compared before their
     * int16 saturation, which changes nothing below 32767 (every source). */
    if (s->offsets32 && s->width >= 3 && s->height >= 2) {
        const uint8_t *px = s->px;
        const size_t stride = s->stride;
        const __m256i wlim = _mm256_set1_epi32(s->width - 3);
        const __m256i hlim = _mm256_set1_epi32(s->height - 2);
        const __m256i wmax = _mm256_set1_epi32(s->width - 1);
        const __m256i hmax = _mm256_set1_epi32(s->height - 1);
        const __m256i m1 = _mm256_set1_epi32(-1);
        uint8_t fill[24]; /* 8 border pixels */
        for (int k = 0; k < 24; k++)
            fill[k] = s->border[k % 3];
        const __m256i vstride = _mm256_set1_epi32((int32_t)stride);
        const __m256i mask = _mm256_set1_epi32(DETFEED__WARP_FRAC_MASK);
        const __m256i n32 = _mm256_set1_epi32(32);
        const __m256i half = _mm256_set1_epi32(512);
        /* Bytes b0 g0 r0 b1 g1 r1 . . (top) B0 G0 R0 B1 G1 R1 . . (bottom)
         * to b0 b1 B0 B1 g0 g1 G0 G1 r0 r1 R0 R1 0 0 0 0 in each lane. */
        const __m256i gather =
            _mm256_setr_epi8(0, 3, 8, 11, 1, 4, 9, 12, 2, 5, 10, 13, -1, -1, -1, -1, 0,
                             3, 8, 11, 1, 4, 9, 12, 2, 5, 10, 13, -1, -1, -1, -1);
        /* B G R 0 of four pixels per lane to 12 bytes, then the two lanes'
         * 12 bytes side by side. */
        const __m256i pack =
            _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, 0,
                             1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
        const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
        for (; i + 8 <= n; i += 8, d += 24) {
            __m256i X = _mm256_loadu_si256((const __m256i *)(xs + i));
            __m256i Y = _mm256_loadu_si256((const __m256i *)(ys + i));
            __m256i sx = _mm256_srai_epi32(X, DETFEED__WARP_FRAC_BITS);
            __m256i sy = _mm256_srai_epi32(Y, DETFEED__WARP_FRAC_BITS);
            /* unsigned sx <= W - 3 and sy <= H - 2 */
            __m256i in =
                _mm256_and_si256(_mm256_cmpeq_epi32(_mm256_min_epu32(sx, wlim), sx),
                                 _mm256_cmpeq_epi32(_mm256_min_epu32(sy, hlim), sy));
            if (_mm256_movemask_ps(_mm256_castsi256_ps(in)) != 0xFF) {
                /* All four taps of all 8 pixels outside: sx > W - 1, sx <
                 * -1, sy > H - 1 or sy < -1. */
                __m256i out =
                    _mm256_or_si256(_mm256_or_si256(_mm256_cmpgt_epi32(sx, wmax),
                                                    _mm256_cmpgt_epi32(m1, sx)),
                                    _mm256_or_si256(_mm256_cmpgt_epi32(sy, hmax),
                                                    _mm256_cmpgt_epi32(m1, sy)));
                if (_mm256_movemask_ps(_mm256_castsi256_ps(out)) == 0xFF)
                    memcpy(d, fill, 24);
                else
                    detfeed__warp_row_portable(s, xs + i, ys + i, d, 8);
                continue;
            }
            int32_t ofs[8];
            __m256i o =
                _mm256_add_epi32(_mm256_mullo_epi32(sy, vstride),
                                 _mm256_add_epi32(sx, _mm256_add_epi32(sx, sx)));
            _mm256_storeu_si256((__m256i *)ofs, o);
            /* wx: bytes 32-fx, fx twice; wy: words 32-fy, fy. */
            __m256i fx = _mm256_and_si256(X, mask), fy = _mm256_and_si256(Y, mask);
            __m256i wx =
                _mm256_or_si256(_mm256_sub_epi32(n32, fx), _mm256_slli_epi32(fx, 8));
            wx = _mm256_or_si256(wx, _mm256_slli_epi32(wx, 16));
            __m256i wy =
                _mm256_or_si256(_mm256_sub_epi32(n32, fy), _mm256_slli_epi32(fy, 16));
            __m256i r0 = BLEND_PAIR(0, 0x00), r1 = BLEND_PAIR(1, 0x55);
            __m256i r2 = BLEND_PAIR(2, 0xAA), r3 = BLEND_PAIR(3, 0xFF);
            /* Values are <= 255: the saturating packs only narrow. */
            __m256i b = _mm256_packus_epi16(_mm256_packus_epi32(r0, r1),
                                            _mm256_packus_epi32(r2, r3));
            b = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(b, pack), join);
            _mm_storeu_si128((__m128i *)d, _mm256_castsi256_si128(b));
            _mm_storel_epi64((__m128i *)(d + 16), _mm256_extracti128_si256(b, 1));
        }
    }
    if (i < n)
        detfeed__warp_row_portable(s, xs + i, ys + i, d, n - i);
}

void detfeed__warp_persp_avx2(const double t[9], int xb, int y, int n, int32_t *xs,
                              int32_t *ys)
{
    /* As detfeed__warp_persp_portable, lane by lane: the block start in
     * the same order, then W0 + M6 i, 32 / W (0 where W == 0), the
     * numerators times it, NaN replaced, clamped, converted with the
     * default rounding (to nearest, ties to even). */
    const double X0 = t[0] * xb + t[1] * y + t[2];
    const double Y0 = t[3] * xb + t[4] * y + t[5];
    const double W0 = t[6] * xb + t[7] * y + t[8];
    const int n4 = n - n % 4;
    const __m256d vx0 = _mm256_set1_pd(X0), vy0 = _mm256_set1_pd(Y0);
    const __m256d vw0 = _mm256_set1_pd(W0), m0 = _mm256_set1_pd(t[0]);
    const __m256d m3 = _mm256_set1_pd(t[3]), m6 = _mm256_set1_pd(t[6]);
    const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
    const __m256d tab = _mm256_set1_pd(32.0), four = _mm256_set1_pd(4.0);
    const __m256d lo = _mm256_set1_pd(-2147483648.0), hi = _mm256_set1_pd(2147483647.0);
    __m256d idx = _mm256_setr_pd(0.0, 1.0, 2.0, 3.0);
    for (int i = 0; i < n4; i += 4, idx = _mm256_add_pd(idx, four)) {
        __m256d W = _mm256_add_pd(vw0, _mm256_mul_pd(m6, idx));
        __m256d nz = _mm256_cmp_pd(W, zero, _CMP_NEQ_UQ); /* C's W != 0 */
        __m256d Wi =
            _mm256_and_pd(_mm256_div_pd(tab, _mm256_blendv_pd(one, W, nz)), nz);
        __m256d fx = _mm256_mul_pd(_mm256_add_pd(vx0, _mm256_mul_pd(m0, idx)), Wi);
        __m256d fy = _mm256_mul_pd(_mm256_add_pd(vy0, _mm256_mul_pd(m3, idx)), Wi);
        fx = _mm256_blendv_pd(lo, fx, _mm256_cmp_pd(fx, fx, _CMP_ORD_Q));
        fy = _mm256_blendv_pd(lo, fy, _mm256_cmp_pd(fy, fy, _CMP_ORD_Q));
        fx = _mm256_min_pd(_mm256_max_pd(fx, lo), hi);
        fy = _mm256_min_pd(_mm256_max_pd(fy, lo), hi);
        _mm_storeu_si128((__m128i *)(xs + i), _mm256_cvtpd_epi32(fx));
        _mm_storeu_si128((__m128i *)(ys + i), _mm256_cvtpd_epi32(fy));
    }
    if (n4 < n)
        detfeed__warp_persp_portable(t, xb, y, n4, n, xs, ys);
}
