/*
 * sha256_x86.c - SHA-256 blocks with the x86 SHA extensions: see
 * sha256_blocks.h. Compiled for any x86-64 target (the functions carry their
 * own target attribute); elsewhere an empty function that nothing calls
 * (detfeed__cpu_has_sha() is false there).
 */
#include "sha256_blocks.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

/* The message words of group j (words 4j .. 4j+3) from groups j-4 (oldest)
 * to j-1 (newest): the sigma0 terms by sha256msg1, words i-7 by shifting the
 * two newest groups by one word, the sigma1 terms by sha256msg2. */
SHA_TARGET static __m128i next_words(__m128i oldest, __m128i older, __m128i old,
                                     __m128i newest)
{
    __m128i t = _mm_sha256msg1_epu32(oldest, older);
    t = _mm_add_epi32(t, _mm_alignr_epi8(newest, old, 4));
    return _mm_sha256msg2_epu32(t, newest);
}

SHA_TARGET void detfeed_sha256_blocks_hw(uint32_t state[8], const uint8_t *p, size_t n,
                                         const uint32_t k[64])
{
    /* The instructions keep the state as (A, B, E, F) and (C, D, G, H). */
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i cdab = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)state), 0xB1);
    __m128i efgh =
        _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(state + 4)), 0x1B);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
    for (; n > 0; n--, p += 64) {
        __m128i abef0 = abef, cdgh0 = cdgh, w[4];
        for (int j = 0; j < 16; j++) {
            if (j < 4)
                w[j] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * j)),
                                        bswap);
            else
                w[j % 4] = next_words(w[j % 4], w[(j + 1) % 4], w[(j + 2) % 4],
                                      w[(j + 3) % 4]);
            __m128i m =
                _mm_add_epi32(w[j % 4], _mm_loadu_si128((const __m128i *)(k + 4 * j)));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m, 0x0E));
        }
        abef = _mm_add_epi32(abef, abef0);
        cdgh = _mm_add_epi32(cdgh, cdgh0);
    }
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)state, _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)(state + 4), _mm_alignr_epi8(dchg, feba, 8));
}
#else
void detfeed_sha256_blocks_hw(uint32_t state[8], const uint8_t *p, size_t n,
                              const uint32_t k[64])
{
    (void)state, (void)p, (void)n, (void)k;
}
#endif
