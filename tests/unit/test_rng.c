/*
 * test_rng.c - Philox4x32-10 against the Random123 known answers, the
 * uniform double, epoch permutations, DistributedSampler shards, and the
 * recipe's draws against the Ultralytics distributions with real
 * statistical tests (chi-square and Kolmogorov-Smirnov at alpha = 0.001).
 */
#include "aug/recipe.h"
#include "testutil.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void test_kat(void)
{
    static const uint32_t ctr[3][4] = {
        {0, 0, 0, 0},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}};
    static const uint32_t key[3][2] = {
        {0, 0}, {0xffffffff, 0xffffffff}, {0xa4093822, 0x299f31d0}};
    static const uint32_t want[3][4] = {
        {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        detfeed_philox4x32(ctr[i], key[i], out);
        CHECK(memcmp(out, want[i], sizeof out) == 0);
    }
    /* The uniform uses words 0 and 1 of counter (slot, epoch, lo, hi). */
    uint32_t c[4] = {16, 3, 0x89abcdef, 0x1}, k[2] = {42, 0}, o[4];
    detfeed_philox4x32(c, k, o);
    double want_u = ((double)(o[0] >> 5) * 67108864.0 + (double)(o[1] >> 6)) / 0x1p53;
    CHECK(detfeed_uniform(42, 16, 3, 0x189abcdefull) == want_u);
}

/* Kolmogorov-Smirnov: the largest gap between the empirical CDF of the
 * sorted sample and cdf(); critical value 1.95 / sqrt(n) at alpha 0.001. */
static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static bool ks_uniform(double *v, int n, double lo, double hi)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    double d = 0;
    for (int i = 0; i < n; i++) {
        double f = (v[i] - lo) / (hi - lo);
        d = fmax(d, fmax(fabs(f - (double)i / n), fabs(f - (double)(i + 1) / n)));
    }
    if (d >= 1.95 / sqrt(n))
        fprintf(stderr, "  KS statistic %g (n %d, critical %g)\n", d, n,
                1.95 / sqrt(n));
    return d < 1.95 / sqrt(n);
}

/* Chi-square of counts against equal expectation; crit for the df. */
static bool chi2_flat(const long *count, int bins, long total, double crit)
{
    double e = (double)total / bins, x = 0;
    for (int i = 0; i < bins; i++)
        x += (count[i] - e) * (count[i] - e) / e;
    if (x >= crit)
        fprintf(stderr, "  chi-square %g >= %g\n", x, crit);
    return x < crit;
}

static void test_uniform(void)
{
    enum { N = 200000 };
    double *v = malloc(N * sizeof *v);
    long bins[100] = {0};
    for (int i = 0; i < N; i++) {
        v[i] = detfeed_uniform(7, 9, 1, (uint64_t)i);
        CHECK(v[i] >= 0 && v[i] < 1);
        bins[(int)(v[i] * 100)]++;
    }
    CHECK(chi2_flat(bins, 100, N, 148.23)); /* 99 df, alpha 0.001 */
    CHECK(ks_uniform(v, N, 0, 1));
    /* Different slots, epochs and seeds are different streams. */
    CHECK(detfeed_uniform(7, 9, 1, 5) != detfeed_uniform(7, 10, 1, 5));
    CHECK(detfeed_uniform(7, 9, 1, 5) != detfeed_uniform(7, 9, 2, 5));
    CHECK(detfeed_uniform(7, 9, 1, 5) != detfeed_uniform(8, 9, 1, 5));
    CHECK(detfeed_uniform(7, 9, 1, 5) == detfeed_uniform(7, 9, 1, 5));
    free(v);
}

static void test_permutation(void)
{
    enum { N = 10, E = 20000 };
    uint64_t order[N];
    long where[N][N] = {{0}};
    for (uint32_t e = 0; e < E; e++) {
        CHECK_INT(detfeed_epoch_order(3, e, N, order), 0);
        bool seen[N] = {false};
        for (int i = 0; i < N; i++) {
            if (order[i] < N && !seen[order[i]])
                seen[order[i]] = true;
            else
                CHECK(!"not a permutation");
            where[order[i]][i]++;
        }
    }
    /* Each element lands on each position equally often. */
    for (int k = 0; k < N; k++)
        CHECK(chi2_flat(where[k], N, E, 27.88)); /* 9 df */
    uint64_t a[1000], b[1000];
    detfeed_epoch_order(3, 0, 1000, a);
    detfeed_epoch_order(3, 1, 1000, b);
    CHECK(memcmp(a, b, sizeof a) != 0);
    CHECK_INT(detfeed_epoch_order(3, 0, 0, NULL), 0);
    CHECK_INT(detfeed_epoch_order(3, 0, 5, NULL), DETFEED_EINVAL);
}

static void test_shards(void)
{
    CHECK(detfeed_shard_size(SIZE_MAX, 0, 2) == SIZE_MAX / 2 + 1); /* no wrap */
    CHECK(detfeed_shard_size(SIZE_MAX, 0, 1) == SIZE_MAX);
    CHECK(detfeed_shard_size(7, 0, 0) == 0);
    uint64_t order[10];
    detfeed_epoch_order(1, 0, 10, order);
    for (int ws = 1; ws <= 12; ws++) {
        size_t per = detfeed_shard_size(10, 0, ws);
        CHECK_INT(per, (10 + ws - 1) / ws);
        int hits[10] = {0};
        for (int r = 0; r < ws; r++) {
            uint64_t out[16];
            CHECK_INT(detfeed_shard(order, 10, r, ws, out), 0);
            for (size_t k = 0; k < per; k++) {
                size_t pos = (size_t)r + k * (size_t)ws;
                /* DistributedSampler: padded by repeating from the start. */
                CHECK(out[k] == order[pos % 10]);
                hits[out[k]]++;
            }
        }
        /* Every sample at least once; only the padding repeats. */
        int total = 0;
        for (int i = 0; i < 10; i++) {
            CHECK(hits[i] >= 1);
            total += hits[i];
        }
        CHECK_INT(total, (long long)per * ws);
    }
    uint64_t out[4];
    CHECK_INT(detfeed_shard(order, 10, 3, 3, out), DETFEED_EINVAL);
    CHECK_INT(detfeed_shard(order, 10, 0, 0, out), DETFEED_EINVAL);
}

/* The recipe's draws follow Ultralytics' distributions. */
static void test_recipe_stats(void)
{
    enum { N = 40000 };
    detfeed__hyp hyp = detfeed__hyp_defaults();
    hyp.degrees = 10;
    hyp.shear = 2;
    hyp.perspective = 0.001;
    hyp.flipud = 0.2;
    hyp.mosaic = 0.7;
    double *v[8];
    for (int k = 0; k < 8; k++)
        v[k] = malloc(N * sizeof(double));
    long fl = 0, fu = 0, mos = 0, part[16] = {0}, yc[64] = {0};
    for (int i = 0; i < N; i++) {
        detfeed__recipe r;
        detfeed__recipe_make(&hyp, 11, 2, (uint64_t)i, 16, true, 0, NULL, &r);
        v[0][i] = r.angle;
        v[1][i] = r.scale;
        v[2][i] = r.shear[0];
        v[3][i] = r.translate[1];
        v[4][i] = r.gains[0];
        v[5][i] = r.gains[1];
        v[6][i] = r.gains[2];
        v[7][i] = r.perspective[0];
        fl += r.fliplr;
        fu += r.flipud;
        mos += r.mosaic;
        for (int k = 0; k < 3; k++)
            part[r.partners[k]]++;
        CHECK(r.yc >= 320 && r.yc < 960 && r.xc >= 320 && r.xc < 960 && r.hsv);
        yc[(r.yc - 320) / 10]++;
        CHECK(r.to_rgb && !r.mixup && !r.cutmix);
    }
    CHECK(ks_uniform(v[0], N, -10, 10));
    CHECK(ks_uniform(v[1], N, 0.5, 1.5));
    CHECK(ks_uniform(v[2], N, -2, 2));
    CHECK(ks_uniform(v[3], N, 0.4, 0.6));
    CHECK(ks_uniform(v[4], N, -0.015, 0.015));
    CHECK(ks_uniform(v[5], N, -0.7, 0.7));
    CHECK(ks_uniform(v[6], N, -0.4, 0.4));
    CHECK(ks_uniform(v[7], N, -0.001, 0.001));
    /* Binomial proportions within 4 standard deviations. */
    CHECK(fabs(fl - 0.5 * N) < 4 * sqrt(N * 0.25));
    CHECK(fabs(fu - 0.2 * N) < 4 * sqrt(N * 0.16));
    CHECK(fabs(mos - 0.7 * N) < 4 * sqrt(N * 0.21));
    CHECK(chi2_flat(part, 16, 3L * N, 37.70)); /* 15 df */
    CHECK(chi2_flat(yc, 64, N, 103.44));       /* 63 df */
    for (int k = 0; k < 8; k++)
        free(v[k]);
    /* Disabled transforms: p = 0 gates, all-zero HSV, close_mosaic. */
    hyp = detfeed__hyp_defaults();
    hyp.hsv_h = hyp.hsv_s = hyp.hsv_v = 0;
    hyp.fliplr = 0;
    int any = 0;
    for (int i = 0; i < 2000; i++) {
        detfeed__recipe r;
        detfeed__recipe_make(&hyp, 11, 2, (uint64_t)i, 16, false, 0, NULL, &r);
        any += r.mosaic || r.hsv || r.fliplr || r.flipud || r.gains[0] != 0;
    }
    CHECK_INT(any, 0);
}

/* MixUp: the gate, a uniform partner, and the ratio's Beta(32, 32) moments
 * (mean 1/2, variance 1/260) within four standard errors. */
static void test_mixup_stats(void)
{
    enum { N = 20000 };
    detfeed__hyp hyp = detfeed__hyp_defaults();
    hyp.mixup = 0.3;
    long mixed = 0, part[10] = {0};
    double sum = 0, sum2 = 0;
    for (int i = 0; i < N; i++) {
        detfeed__recipe r;
        detfeed__recipe_make(&hyp, 5, 0, (uint64_t)i, 10, true, 0, NULL, &r);
        if (!r.mixup) {
            CHECK(r.mix_ratio == 1.0);
            continue;
        }
        mixed++;
        part[r.mix_partner]++;
        sum += r.mix_ratio;
        sum2 += r.mix_ratio * r.mix_ratio;
        CHECK(r.mix_ratio > 0 && r.mix_ratio < 1);
    }
    CHECK(fabs(mixed - 0.3 * N) < 4 * sqrt(N * 0.21));
    double mean = sum / mixed, var = sum2 / mixed - mean * mean, v = 1.0 / 260;
    CHECK(fabs(mean - 0.5) < 4 * sqrt(v / mixed));
    /* The variance of a sample variance is about 2 v^2 / n for a near-normal law. */
    CHECK(fabs(var - v) < 4 * v * sqrt(2.0 / mixed));
    CHECK(chi2_flat(part, 10, mixed, 27.88)); /* 9 df */
}

/* A disabled transform moves no other draw; partner recipes are separate. */
static void test_recipe_slots(void)
{
    detfeed__hyp a = detfeed__hyp_defaults(), b = a;
    b.degrees = 5;
    b.mosaic = 0;
    detfeed__recipe ra, rb, rp;
    detfeed__recipe_make(&a, 5, 1, 77, 100, true, 0, NULL, &ra);
    detfeed__recipe_make(&b, 5, 1, 77, 100, true, 0, NULL, &rb);
    CHECK(ra.scale == rb.scale && ra.gains[1] == rb.gains[1] && ra.fliplr == rb.fliplr);
    CHECK(ra.angle == 0 && rb.angle != 0 && ra.mosaic && !rb.mosaic);
    detfeed__recipe_make(&a, 5, 1, 77, 100, true, DETFEED__SLOT_PARTNER_BASE, NULL,
                         &rp);
    CHECK(rp.scale != ra.scale && rp.gains[0] != ra.gains[0]);
}

int main(void)
{
    test_kat();
    test_uniform();
    test_permutation();
    test_shards();
    test_recipe_stats();
    test_recipe_slots();
    test_mixup_stats();
    return tu_finish("test_rng");
}
