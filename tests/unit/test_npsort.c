/*
 * test_npsort.c - np.argsort's variants (core/npsort.c) against known
 * answers: small arrays with ties, NaN and -0.0, and digests of the
 * permutations of larger tie-heavy arrays, as NumPy 1.24 (scalar), NumPy
 * 2.4.6 on AVX2 (avx2) and NumPy 2.5.2 on an AVX-512 Xeon (avx512) return
 * them; every result a permutation that sorts its keys. The oracle
 * (tests/oracle/test_npsort_oracle.py) compares with the installed NumPy.
 */
#include "core/npsort.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { NV = 3 }; /* scalar, avx2, avx512 */

static void check_small(detfeed_numpy_dtype type, const void *keys, int n,
                        const int want[NV][8])
{
    for (int v = 0; v < NV; v++) {
        int idx[8];
        CHECK_INT(detfeed__np_argsort(keys, type, n, idx, (detfeed_numpy_sort)v),
                  DETFEED_OK);
        CHECK(memcmp(idx, want[v], (size_t)n * sizeof *idx) == 0);
    }
}

static void test_small(void)
{
    /* Insertion sort (scalar) keeps these ties in order; the networks
     * (avx2, avx512) move them. */
    const uint64_t u[4] = {3, 1, 2, 1};
    const int want_u[NV][8] = {{1, 3, 2, 0}, {1, 3, 2, 0}, {1, 3, 2, 0}};
    check_small(DETFEED_NUMPY_UINT64, u, 4, want_u);
    const float f[5] = {1, 1, 0, 1, 0};
    const int want_f[NV][8] = {{2, 4, 0, 1, 3}, {2, 4, 1, 0, 3}, {2, 4, 1, 0, 3}};
    check_small(DETFEED_NUMPY_FLOAT32, f, 5, want_f);
    /* NaNs last and equal; -0.0 equal to 0.0 (x86-simd-sort hands arrays
     * with a NaN to std::sort). */
    const float g[7] = {NAN, 0, -0.0f, 1, NAN, -1, 0};
    const int want_g[NV][8] = {
        {5, 1, 2, 6, 3, 0, 4}, {5, 1, 2, 6, 3, 0, 4}, {5, 1, 2, 6, 3, 0, 4}};
    check_small(DETFEED_NUMPY_FLOAT32, g, 7, want_g);
}

/* The keys of the digest cases, as NumPy computes them from i = arange(n):
 * uint64 (i * 2654435761) % 1000003 % 50; float32 (i * 40503) % 65521 % 97
 * - 48 with the zeros of odd i negative; float64 (i * 7) % 31 with NaN where
 * i % 101 == 0; int32 (i * 40503) % 65521 % 9 - 4. */
static void *digest_keys(detfeed_numpy_dtype type, int n)
{
    void *p = malloc((size_t)n * 8);
    for (int64_t i = 0; p != NULL && i < n; i++) {
        if (type == DETFEED_NUMPY_UINT64) {
            ((uint64_t *)p)[i] = (uint64_t)(i * 2654435761 % 1000003 % 50);
        } else if (type == DETFEED_NUMPY_FLOAT32) {
            float x = (float)(i * 40503 % 65521 % 97 - 48);
            ((float *)p)[i] = x == 0 && i % 2 ? -0.0f : x;
        } else if (type == DETFEED_NUMPY_FLOAT64) {
            ((double *)p)[i] = i % 101 == 0 ? NAN : (double)(i * 7 % 31);
        } else {
            ((int32_t *)p)[i] = (int32_t)(i * 40503 % 65521 % 9 - 4);
        }
    }
    return p;
}

/* FNV-1 over the permutation, as the known answers were taken. */
static uint64_t digest(const int *idx, int n)
{
    uint64_t x = 14695981039346656037ull;
    for (int i = 0; i < n; i++)
        x = (x * 1099511628211ull) ^ (uint64_t)idx[i];
    return x;
}

static void test_digests(void)
{
    static const struct {
        detfeed_numpy_dtype type;
        int n;
        uint64_t want[NV];
    } cases[] = {
        {DETFEED_NUMPY_UINT64,
         1000,
         {0xc9527b26c3c602b7u, 0xb3c91596304a85f3u, 0xe0a99a01af7f6a95u}},
        {DETFEED_NUMPY_FLOAT32,
         1000,
         {0x0357e1aa721a9d07u, 0x8bf8b9f574140291u, 0xbb5d14c74dc80943u}},
        {DETFEED_NUMPY_FLOAT64,
         1000,
         {0xa57b19f0f5db9b67u, 0xcb40843f290aa9d3u, 0xcb40843f290aa9d3u}},
        {DETFEED_NUMPY_INT32,
         1000,
         {0x757123c93832555bu, 0x5f4dc0bceeb24b2fu, 0xd397fae5417ff2c7u}},
        {DETFEED_NUMPY_UINT64,
         100000,
         {0x6c07eeb1fbb57b41u, 0xc9cc6df8d601163bu, 0x5f2c605216b02edfu}},
        {DETFEED_NUMPY_FLOAT32,
         100000,
         {0x2a0a4fb54e17412fu, 0x841432abda8e1f0du, 0x998adcbd5021d1f1u}},
        {DETFEED_NUMPY_FLOAT64,
         100000,
         {0x39626273845fb549u, 0x414df3bb9cd45d89u, 0x414df3bb9cd45d89u}},
        {DETFEED_NUMPY_INT32,
         100000,
         {0x423dea1def12f323u, 0xd2b4ffd215b3a0ebu, 0x2d35bb4fab21bccbu}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        void *keys = digest_keys(cases[c].type, cases[c].n);
        int *idx = malloc((size_t)cases[c].n * sizeof *idx);
        CHECK(keys != NULL && idx != NULL);
        for (int v = 0; keys && idx && v < NV; v++) {
            CHECK_INT(detfeed__np_argsort(keys, cases[c].type, cases[c].n, idx,
                                          (detfeed_numpy_sort)v),
                      DETFEED_OK);
            if (!CHECK(digest(idx, cases[c].n) == cases[c].want[v]))
                printf("  case %zu variant %d: 0x%016llx\n", c, v,
                       (unsigned long long)digest(idx, cases[c].n));
        }
        free(keys);
        free(idx);
    }
}

/* a before-or-equal b in NumPy's order of doubles (NaN last). */
static bool not_after(double a, double b)
{
    return isnan(b) || (!isnan(a) && a <= b);
}

/* Key i of dtype t from r in 0 .. 6 (r - 3, the dtype's extreme for 5, NaN
 * for 6 in floats) into raw; returns it as a double for the order check. */
static double put_key(int t, int r, void *raw, int i)
{
    double d = r == 6 && t >= DETFEED_NUMPY_FLOAT32 ? NAN : r - 3;
    switch (t) {
    case DETFEED_NUMPY_INT32:
        d = r == 5 ? INT32_MAX : d;
        ((int32_t *)raw)[i] = (int32_t)d;
        return d;
    case DETFEED_NUMPY_UINT32:
        ((uint32_t *)raw)[i] = r == 5 ? UINT32_MAX : (uint32_t)r;
        return r == 5 ? (double)UINT32_MAX : r;
    case DETFEED_NUMPY_INT64:
        ((int64_t *)raw)[i] = r == 5 ? INT64_MIN : (int64_t)d;
        return r == 5 ? -1e300 : d;
    case DETFEED_NUMPY_UINT64:
        ((uint64_t *)raw)[i] = r == 5 ? UINT64_MAX : (uint64_t)r;
        return r == 5 ? 1e300 : r;
    case DETFEED_NUMPY_FLOAT32:
        ((float *)raw)[i] = (float)d;
        return d;
    default:
        ((double *)raw)[i] = d;
        return d;
    }
}

/* idx is a permutation of 0 .. n - 1 that puts d in NumPy's order. */
static bool sorts(const int *idx, const double *d, int n, char *seen)
{
    memset(seen, 0, (size_t)n);
    for (int i = 0; i < n; i++) {
        if (idx[i] < 0 || idx[i] >= n || seen[idx[i]])
            return false;
        seen[idx[i]] = 1;
        if (i > 0 && !not_after(d[idx[i - 1]], d[idx[i]]))
            return false;
    }
    return true;
}

/* Every variant on random keys of every dtype with few distinct values
 * (ties) and the dtype's extremes: a permutation, in order. */
static void test_sorted(void)
{
    enum { MAX = 4099 };
    static const int sizes[] = {0, 1, 2, 5, 16, 17, 63, 255, 256, 257, 300, 1000, MAX};
    static double d[MAX];
    static uint64_t raw[MAX];
    static int idx[MAX];
    static char seen[MAX];
    uint64_t rng = 11;
    for (int t = 0; t <= DETFEED_NUMPY_FLOAT64; t++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int n = sizes[s];
            for (int i = 0; i < n; i++)
                d[i] = put_key(t, (int)(tu_rand(&rng) % 7), raw, i);
            for (int v = 0; v < NV; v++) {
                CHECK_INT(detfeed__np_argsort(raw, (detfeed_numpy_dtype)t, n, idx,
                                              (detfeed_numpy_sort)v),
                          DETFEED_OK);
                if (!CHECK(sorts(idx, d, n, seen)))
                    printf("  dtype %d n %d variant %d\n", t, n, v);
            }
        }
    }
}

static void test_api(void)
{
    int idx[2];
    const int32_t k[2] = {1, 0};
    CHECK_INT(detfeed__np_argsort(k, (detfeed_numpy_dtype)6, 2, idx, 0),
              DETFEED_EINVAL);
    CHECK_INT(
        detfeed__np_argsort(k, DETFEED_NUMPY_INT32, 2, idx, (detfeed_numpy_sort)3),
        DETFEED_EINVAL);
    CHECK_INT(detfeed__np_argsort(k, DETFEED_NUMPY_INT32, -1, idx, 0), DETFEED_EINVAL);
    int64_t order[2] = {-1, -1};
    CHECK_INT(detfeed_numpy_argsort(k, DETFEED_NUMPY_INT32, 2, order,
                                    DETFEED_NUMPY_SORT_AVX2),
              DETFEED_OK);
    CHECK(order[0] == 1 && order[1] == 0);
    CHECK_INT(detfeed_numpy_argsort(NULL, DETFEED_NUMPY_INT32, 2, order, 0),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_numpy_argsort(NULL, DETFEED_NUMPY_INT32, 0, NULL, 0), DETFEED_OK);
    detfeed_numpy_sort s = DETFEED_NUMPY_SORT_SCALAR;
    CHECK_INT(detfeed_numpy_sort_parse("avx512", &s), DETFEED_OK);
    CHECK_INT(s, DETFEED_NUMPY_SORT_AVX512);
    CHECK_INT(detfeed_numpy_sort_parse("avx", &s), DETFEED_EINVAL);
}

int main(void)
{
    test_small();
    test_digests();
    test_sorted();
    test_api();
    return tu_finish("npsort");
}
