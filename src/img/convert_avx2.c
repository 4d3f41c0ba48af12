/*
 * convert_avx2.c - detfeed_convert_chw's rows with AVX2, 16 pixels a step:
 * three loads, byte shuffles into the B, G and R planes, and the dtype's
 * value computed the way its table is (convert.c): (float)c / 255.0f by IEEE
 * division, or c * (1.0f / 255) for the reciprocal scale; f16 and bf16
 * rounded from it to nearest-even with integer steps (every value is 0 or a
 * normal number, 1/255 being far above the smallest normal half). So the
 * bytes are the table's; tests/unit/test_dtype.c compares them on many sizes.
 * Compiled with -mavx2.
 */
#include "convert_px.h"

#include <immintrin.h>

/* The shuffle that takes channel `chan`'s bytes of 16 BGR pixels from the
 * k-th of their three 16-byte loads. */
static __m128i pick(int chan, int k)
{
    int8_t m[16];
    for (int d = 0; d < 16; d++) {
        int idx = 3 * d + chan;
        m[d] = (int8_t)(idx / 16 == k ? idx - 16 * k : -1);
    }
    return _mm_loadu_si128((const __m128i *)m);
}

typedef struct shuffles {
    __m128i m[3][3]; /* [channel][load] */
} shuffles;

/* Eight codes as f32 values. */
static inline __m256 values8(__m128i codes8, detfeed_scale scale)
{
    __m256 c = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(codes8));
    if (scale == DETFEED_SCALE_RECIPROCAL)
        return _mm256_mul_ps(c, _mm256_set1_ps(1.0f / 255.0f));
    return _mm256_div_ps(c, _mm256_set1_ps(255.0f));
}

/* f32 bits (0 or normal halves' range) to binary16, nearest-even. */
static inline __m256i half8(__m256i x)
{
    __m256i h =
        _mm256_sub_epi32(_mm256_srli_epi32(x, 13), _mm256_set1_epi32(112 << 10));
    __m256i rem = _mm256_and_si256(x, _mm256_set1_epi32(0x1fff));
    __m256i half = _mm256_set1_epi32(0x1000);
    __m256i up = _mm256_or_si256(
        _mm256_cmpgt_epi32(rem, half),
        _mm256_and_si256(_mm256_cmpeq_epi32(rem, half),
                         _mm256_cmpeq_epi32(_mm256_and_si256(h, _mm256_set1_epi32(1)),
                                            _mm256_set1_epi32(1))));
    h = _mm256_sub_epi32(h, up); /* up is -1 where rounding up */
    __m256i zero = _mm256_cmpeq_epi32(x, _mm256_setzero_si256());
    return _mm256_andnot_si256(zero, h);
}

/* f32 bits to bfloat16, nearest-even (no NaN here). */
static inline __m256i bf16x8(__m256i x)
{
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    x = _mm256_add_epi32(x, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
    return _mm256_srli_epi32(x, 16);
}

/* Two groups of eight 32-bit values with 16-bit contents, in order. */
static inline __m256i pack16(__m256i lo, __m256i hi)
{
    return _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
}

/* 32 bytes at d: a streaming store (no read of the line first, no cache
 * pollution: the batch is read later by another thread) where d is aligned. */
static inline void put32(void *d, __m256i v)
{
    if (((uintptr_t)d & 31) == 0)
        _mm256_stream_si256((__m256i *)d, v);
    else
        _mm256_storeu_si256((__m256i *)d, v);
}

/* Stores 16 codes of one plane as `dtype` at d. */
static inline void store16(void *d, __m128i codes, detfeed_dtype dtype,
                           detfeed_scale scale)
{
    if (dtype == DETFEED_DTYPE_U8) {
        if (((uintptr_t)d & 15) == 0)
            _mm_stream_si128((__m128i *)d, codes);
        else
            _mm_storeu_si128((__m128i *)d, codes);
        return;
    }
    __m256 lo = values8(codes, scale), hi = values8(_mm_srli_si128(codes, 8), scale);
    if (dtype == DETFEED_DTYPE_F32) {
        put32(d, _mm256_castps_si256(lo));
        put32((float *)d + 8, _mm256_castps_si256(hi));
        return;
    }
    __m256i bl = _mm256_castps_si256(lo), bh = _mm256_castps_si256(hi);
    put32(d, dtype == DETFEED_DTYPE_F16 ? pack16(half8(bl), half8(bh))
                                        : pack16(bf16x8(bl), bf16x8(bh)));
}

int detfeed__convert_rows_avx2(const uint8_t *src, size_t src_stride, int width,
                               int height, void *dst, size_t plane_stride,
                               detfeed_dtype dtype, detfeed_scale scale)
{
    shuffles s;
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 3; k++)
            s.m[c][k] = pick(c, k);
    size_t es = detfeed__dtype_size(dtype);
    int body = width - width % 16;
    for (int y = 0; y < height; y++) {
        const uint8_t *p = src + (size_t)y * src_stride;
        uint8_t *row = (uint8_t *)dst + (size_t)y * width * es;
        for (int x = 0; x < body; x += 16, p += 48) {
            __m128i a[3] = {_mm_loadu_si128((const __m128i *)p),
                            _mm_loadu_si128((const __m128i *)(p + 16)),
                            _mm_loadu_si128((const __m128i *)(p + 32))};
            for (int c = 0; c < 3; c++) { /* B, G, R go to planes 2, 1, 0 */
                __m128i v =
                    _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a[0], s.m[c][0]),
                                              _mm_shuffle_epi8(a[1], s.m[c][1])),
                                 _mm_shuffle_epi8(a[2], s.m[c][2]));
                store16(row + (size_t)(2 - c) * plane_stride + (size_t)x * es, v, dtype,
                        scale);
            }
        }
    }
    _mm_sfence(); /* the streaming stores are visible before the caller goes on */
    return body;
}
