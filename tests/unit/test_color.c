/*
 * test_color.c - the colour core against its specification.
 *
 * - OpenCV's Q12 tables against their formula.
 * - All 2^24 inputs of each conversion against the golden sha256 of OpenCV's
 *   output (DESIGN §2.2): the image of every byte triple, 4096x4096.
 * - The fused operation against the composition of the three steps, and the
 *   AVX2 implementation against the portable one, on all 2^24 inputs for
 *   several gains (zero, defaults' extremes, the hue wrap, random).
 * - Widths and strides that exercise every tail, in place and not.
 * - The LUT builder against the float64 formula for many gains.
 */
#include "aug/hsv_tables.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ALL  (1u << 24)
#define SIDE 4096

static const char *const GOLDEN_HSV2BGR =
    "5f2643cdbdd25a04cf28db7ca8d0c83ef4b76f4a625319409ce1afd55856d2db";
static const char *const GOLDEN_BGR2HSV =
    "cc4c8f3a2064ffaed3776170c4dfa02c90011b02dbc7ece07b7fced54069ad55";

static uint8_t *all_triples(void)
{
    uint8_t *img = malloc((size_t)ALL * 3);
    for (uint32_t k = 0; img && k < ALL; k++) {
        img[3 * k] = (uint8_t)(k >> 16);
        img[3 * k + 1] = (uint8_t)(k >> 8);
        img[3 * k + 2] = (uint8_t)k;
    }
    return img;
}

static void test_tables(void)
{
    CHECK_INT(detfeed__sdiv[0], 0);
    CHECK_INT(detfeed__hdiv180[0], 0);
    for (int i = 1; i < 256; i++) {
        CHECK_INT(detfeed__sdiv[i], (long long)rint((255 << 12) / (double)i));
        CHECK_INT(detfeed__hdiv180[i], (long long)rint((180 << 12) / (6.0 * i)));
    }
}

static void test_golden(const uint8_t *all, uint8_t *out)
{
    char hex[65];
    CHECK_INT(detfeed_bgr_to_hsv(all, SIDE * 3, out, SIDE * 3, SIDE, SIDE), 0);
    tu_sha256_hex(out, (size_t)ALL * 3, hex);
    CHECK_STR(hex, GOLDEN_BGR2HSV);
    CHECK_INT(detfeed_hsv_to_bgr(all, SIDE * 3, out, SIDE * 3, SIDE, SIDE), 0);
    tu_sha256_hex(out, (size_t)ALL * 3, hex);
    CHECK_STR(hex, GOLDEN_HSV2BGR);
}

/* The three steps one after another, each through the public API. */
static void composed(const uint8_t *all, uint8_t *out, const uint8_t lut[3][256])
{
    detfeed_bgr_to_hsv(all, SIDE * 3, out, SIDE * 3, SIDE, SIDE);
    for (size_t i = 0; i < (size_t)ALL * 3; i += 3) {
        out[i] = lut[0][out[i]];
        out[i + 1] = lut[1][out[i + 1]];
        out[i + 2] = lut[2][out[i + 2]];
    }
    detfeed_hsv_to_bgr(out, SIDE * 3, out, SIDE * 3, SIDE, SIDE);
}

static size_t count_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += a[i] != b[i];
    return d;
}

static void test_fused_exhaustive(const uint8_t *all, uint8_t *out, uint8_t *ref)
{
    double gains[][3] = {
        {0, 0, 0},           {0.01, -0.3, 0.2},
        {0.015, 0.7, 0.4},   {-0.015, -0.7, -0.4},
        {-0.015, 0.7, -0.4}, {-1e-17, 0.0, 0.0},
        {0.5, 2.0, -1.5},    {0, 0, 0},
        {0, 0, 0},
    };
    uint64_t rng = 42;
    for (int i = 7; i < 9; i++)
        for (int c = 0; c < 3; c++)
            gains[i][c] = tu_uniform(&rng, -1, 1) * (c == 0   ? 0.015
                                                     : c == 1 ? 0.7
                                                              : 0.4);
    for (int isa = DETFEED_ISA_AVX2; isa <= DETFEED_ISA_AVX512; isa++)
        if (!detfeed_isa_available((detfeed_isa)isa))
            printf("note: ISA %d not available on this CPU, not compared\n", isa);
    for (size_t g = 0; g < sizeof gains / sizeof gains[0]; g++) {
        uint8_t lut[3][256];
        CHECK_INT(detfeed_hsv_lut(gains[g][0], gains[g][1], gains[g][2], lut), 0);
        composed(all, ref, lut);
        for (int isa = DETFEED_ISA_PORTABLE; isa <= DETFEED_ISA_AVX512; isa++) {
            if (!detfeed_isa_available((detfeed_isa)isa))
                continue;
            memset(out, 0, (size_t)ALL * 3);
            CHECK_INT(detfeed_hsv_apply(all, SIDE * 3, out, SIDE * 3, SIDE, SIDE, lut,
                                        (detfeed_isa)isa),
                      0);
            if (!CHECK_INT(count_diff(out, ref, (size_t)ALL * 3), 0))
                fprintf(stderr, "  isa %d, gains %zu\n", isa, g);
        }
    }
}

/* Every width 1..150 (all tails of the 8-, 16- and 64-pixel steps), padded
 * strides, in place and out of place, each ISA against the portable result. */
static void test_geometry(void)
{
    uint64_t rng = 7;
    uint8_t lut[3][256];
    detfeed_hsv_lut(0.012, 0.55, -0.31, lut);
    for (int w = 1; w <= 150; w++) {
        int h = 3, stride = w * 3 + (w % 5) * 7;
        size_t n = (size_t)stride * h;
        uint8_t *src = malloc(n), *ref = malloc(n), *out = malloc(n);
        for (size_t i = 0; i < n; i++)
            src[i] = (uint8_t)tu_rand(&rng);
        memcpy(ref, src, n);
        memcpy(out, src, n);
        CHECK_INT(detfeed_hsv_apply(src, stride, ref, stride, w, h, lut,
                                    DETFEED_ISA_PORTABLE),
                  0);
        /* Padding bytes between rows are never written. */
        for (int y = 0; y < h; y++)
            for (int x = w * 3; x < stride; x++)
                CHECK(ref[(size_t)y * stride + x] == src[(size_t)y * stride + x]);
        for (int isa = DETFEED_ISA_AUTO; isa <= DETFEED_ISA_AVX512; isa++) {
            if (!detfeed_isa_available((detfeed_isa)isa))
                continue;
            memcpy(out, src, n);
            CHECK_INT(detfeed_hsv_apply(out, stride, out, stride, w, h, lut,
                                        (detfeed_isa)isa),
                      0);
            CHECK_INT(count_diff(out, ref, n), 0);
        }
        free(src);
        free(ref);
        free(out);
    }
}

static void test_arguments(void)
{
    uint8_t img[4 * 4 * 3] = {0}, lut[3][256];
    detfeed_hsv_lut(0, 0, 0, lut);
    CHECK_INT(detfeed_hsv_apply(NULL, 12, img, 12, 4, 4, lut, 0), DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_apply(img, 12, NULL, 12, 4, 4, lut, 0), DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_apply(img, 12, img, 12, 4, 4, NULL, 0), DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_apply(img, 12, img, 12, 0, 4, lut, 0), DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_apply(img, 12, img, 12, 4, -1, lut, 0), DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_apply(img, 11, img, 11, 4, 4, lut, 0), DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_apply(img, 12, img, 12, 4, 4, lut, (detfeed_isa)9),
              DETFEED_EINVAL);
    /* Partial overlap, and in place with different strides. */
    CHECK_INT(detfeed_hsv_apply(img, 12, img + 3, 12, 3, 3, lut, 0), DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_apply(img, 12, img, 9, 3, 3, lut, 0), DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_apply(img, SIZE_MAX / 2, img + 1, 3, 1, 4, lut, 0),
              DETFEED_EOVERFLOW);
    for (int isa = DETFEED_ISA_AVX2; isa <= DETFEED_ISA_AVX512; isa++)
        if (!detfeed_isa_available((detfeed_isa)isa))
            CHECK_INT(detfeed_hsv_apply(img, 12, img, 12, 4, 4, lut, (detfeed_isa)isa),
                      DETFEED_ENOTSUPPORTED);
    CHECK_INT(detfeed_bgr_to_hsv(img, 12, img + 1, 12, 3, 3), DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_to_bgr(img, 12, NULL, 12, 3, 3), DETFEED_EINVAL);
    CHECK(detfeed_isa_available(DETFEED_ISA_PORTABLE));
    CHECK(detfeed_isa_available(detfeed_isa_best()));
}

/* NumPy's float % written independently: a - 180 * floor(a / 180). For the
 * values x + 180 * dh takes here (|a| < 2^10, a multiple of 2^-42), both the
 * product and the difference are exact, so this equals fmod-based npy_divmod,
 * including the tiny-negative case that rounds up to 180. */
static double ref_mod180(double a)
{
    return a - 180.0 * floor(a / 180.0);
}

static void check_lut(double dh, double ds, double dv)
{
    uint8_t lut[3][256];
    if (!CHECK_INT(detfeed_hsv_lut(dh, ds, dv, lut), 0))
        return;
    for (int x = 0; x < 256; x++) {
        double h = ref_mod180((double)x + dh * 180.0);
        double s = fmin(fmax((double)x * (1.0 + ds), 0.0), 255.0);
        double v = fmin(fmax((double)x * (1.0 + dv), 0.0), 255.0);
        int ok = lut[0][x] == (uint8_t)(int)h && lut[2][x] == (uint8_t)(int)v &&
                 lut[1][x] == (x == 0 ? 0 : (uint8_t)(int)s);
        if (!CHECK(ok)) {
            fprintf(stderr, "  gains %.17g %.17g %.17g, x = %d\n", dh, ds, dv, x);
            return;
        }
    }
}

static void test_lut(void)
{
    double edges[] = {-1, 1, 0, -0.5, 0.5, 1e-17, -1e-17, -1e-300, 0.999999999};
    size_t ne = sizeof edges / sizeof edges[0];
    for (size_t i = 0; i < ne; i++)
        for (size_t j = 0; j < ne; j++)
            check_lut(edges[i] * 0.015, edges[j] * 0.7, edges[(i + j) % ne] * 0.4);
    uint64_t rng = 1234;
    for (int i = 0; i < 20000; i++)
        check_lut(tu_uniform(&rng, -1, 1) * 0.015, tu_uniform(&rng, -1, 1) * 0.7,
                  tu_uniform(&rng, -1, 1) * 0.4);
    for (int i = 0; i < 2000; i++)
        check_lut(tu_uniform(&rng, -3, 3), tu_uniform(&rng, -2, 2),
                  tu_uniform(&rng, -2, 2));
    uint8_t lut[3][256];
    /* The documented special values. */
    detfeed_hsv_lut(-1e-17, 0.5, 0.5, lut);
    CHECK_INT(lut[0][0], 180); /* -1.8e-15 % 180 rounds up to 180.0 */
    CHECK_INT(lut[0][1], 0);   /* 1 - 1.8e-15 truncates to 0 */
    CHECK_INT(lut[0][2], 1);
    CHECK_INT(lut[1][0], 0);
    detfeed_hsv_lut(0, 0, 0, lut);
    for (int x = 0; x < 256; x++)
        CHECK(lut[0][x] == (x < 180 ? x : x - 180) && lut[1][x] == x && lut[2][x] == x);
    detfeed_hsv_lut(-0.015, 0, 0, lut); /* -2.7: hue 0..2 wrap to 177..179 */
    CHECK_INT(lut[0][0], 177);
    CHECK_INT(lut[0][2], 179);
    CHECK_INT(lut[0][3], 0);
    CHECK_INT(detfeed_hsv_lut(NAN, 0, 0, lut), DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_lut(0, INFINITY, 0, lut), DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_lut(0, 0, 0, NULL), DETFEED_EINVAL);
}

int main(void)
{
    test_tables();
    test_lut();
    test_arguments();
    test_geometry();
    uint8_t *all = all_triples(), *out = malloc((size_t)ALL * 3),
            *ref = malloc((size_t)ALL * 3);
    if (!CHECK(all && out && ref))
        return tu_finish("test_color");
    test_golden(all, out);
    test_fused_exhaustive(all, out, ref);
    free(all);
    free(out);
    free(ref);
    return tu_finish("test_color");
}
