/*
 * hash_speed.c - the two checksums the disk cache could carry per image,
 * timed on an image's bytes: XXH3-64 (xxHash's header, with the vector
 * code the compiler flags select, as src/core/checksum*.c build it) and
 * CRC32C with the SSE4.2 instruction (one stream, and three interleaved
 * streams, which is how fast CRC32C code runs; the streams' combination is
 * left out, so that figure is an upper bound).
 *
 *   cc -O2 -msse4.2 -o hash_speed bench/hash_speed.c             (SSE2 XXH3)
 *   cc -O2 -msse4.2 -mavx2 -o hash_speed_avx2 bench/hash_speed.c (AVX2 XXH3)
 *   ./hash_speed [BYTES] [ROUNDS]
 *
 * Prints GB/s per checksum, the median of ROUNDS after one warm-up round.
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t xxh3(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}

static uint64_t crc32c_1(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t c = 0xffffffffu;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, b + i, 8);
        c = _mm_crc32_u64(c, v);
    }
    for (; i < n; i++)
        c = _mm_crc32_u8((uint32_t)c, b[i]);
    return c ^ 0xffffffffu;
}

static uint64_t crc32c_3(const void *p, size_t n)
{
    const uint8_t *b = p;
    size_t third = n / 24 * 8;
    uint64_t c0 = 0xffffffffu, c1 = 0, c2 = 0;
    for (size_t i = 0; i < third; i += 8) {
        uint64_t v0, v1, v2;
        memcpy(&v0, b + i, 8);
        memcpy(&v1, b + third + i, 8);
        memcpy(&v2, b + 2 * third + i, 8);
        c0 = _mm_crc32_u64(c0, v0);
        c1 = _mm_crc32_u64(c1, v1);
        c2 = _mm_crc32_u64(c2, v2);
    }
    return c0 ^ c1 ^ c2 ^ crc32c_1(b + 3 * third, n - 3 * third);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 640 * 480 * 3;
    int rounds = argc > 2 ? atoi(argv[2]) : 15;
    if (rounds < 1 || rounds > 1000 || n == 0)
        return fprintf(stderr, "usage: hash_speed [BYTES] [ROUNDS (1-1000)]\n"), 2;
    uint8_t *buf = aligned_alloc(64, (n + 63) / 64 * 64);
    if (buf == NULL)
        return fprintf(stderr, "hash_speed: out of memory\n"), 1;
    for (size_t i = 0; i < n; i++)
        buf[i] = (uint8_t)(i * 2654435761u >> 13);
    struct {
        const char *name;
        uint64_t (*f)(const void *, size_t);
    } fs[] = {{XXH_VECTOR == XXH_AVX2 ? "xxh3-64 (avx2)" : "xxh3-64 (sse2)", xxh3},
              {"crc32c (sse4.2, 1 stream)", crc32c_1},
              {"crc32c (sse4.2, 3 streams, bound)", crc32c_3}};
    int reps = (int)(256e6 / n) + 1; /* about 256 MB a round */
    double *t = malloc(sizeof *t * (size_t)rounds);
    uint64_t sink = 0;
    printf("%zu bytes, %d rounds of %d\n", n, rounds, reps);
    for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
        for (int r = -1; r < rounds; r++) {
            double t0 = now();
            for (int i = 0; i < reps; i++)
                sink += fs[k].f(buf, n);
            if (r >= 0)
                t[r] = now() - t0;
        }
        qsort(t, (size_t)rounds, sizeof *t, cmp);
        printf("%-36s %6.2f GB/s\n", fs[k].name,
               (double)n * reps / t[rounds / 2] / 1e9);
    }
    free(t);
    free(buf);
    return sink == 42; /* keeps the sums */
}
