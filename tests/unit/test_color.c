/*
 * test_color.c - the colour core against its specification.
 *
 * - OpenCV's Q12 tables against their formula.
 * - All 2^24 inputs of each conversion against the sha256 of OpenCV's output
 *   (DESIGN §2.2): the image of every byte triple as 4096x4096 (every pixel
 *   in OpenCV's SIMD block) and as 2^21 x 8 (every pixel in its scalar
 *   code), for every reference stack (OpenCV version x code path).
 * - Captured rows: pixels at columns where the stacks part (the block of 64
 *   against 32, the 4.x row tail against 5.x's, SSE against AVX2), with the
 *   bytes of the real cv2 of each build.
 * - The fused operation against the composition of the three steps, and the
 *   vector implementations against the portable one, on all 2^24 inputs for
 *   several gains (zero, defaults' extremes, the hue wrap, random), in block
 *   and tail layouts (under a sanitizer, two of the gain sets).
 * - Widths and strides that exercise every tail, in place and not, under
 *   every stack.
 * - The LUT builder against the float64 formula for many gains.
 */
#include "img/hsv_tables.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ALL  (1u << 24)
#define SIDE 4096

static const char *const GOLDEN_BGR2HSV =
    "cc4c8f3a2064ffaed3776170c4dfa02c90011b02dbc7ece07b7fced54069ad55";

/* sha256 of cv2.cvtColor(COLOR_HSV2BGR) of all 2^24 triples, by formula:
 * the SIMD block (4096x4096 image) of the AVX2/AVX-512 code paths (fused)
 * and of the SSE one; the scalar code (2^21 x 8 image) of 4.6 on AVX2, of
 * 5.0 and 5.1 on AVX2 or AVX-512, and of every version on SSE. Measured
 * with Debian's 4.6.0 and the 5.0.0.93 and 5.1.0.95 wheels, default
 * dispatch and cv2.setUseOptimized(False). */
static const char *const GOLDEN_BLOCK_FUSED =
    "5f2643cdbdd25a04cf28db7ca8d0c83ef4b76f4a625319409ce1afd55856d2db";
static const char *const GOLDEN_BLOCK_SSE =
    "1481eff6d9d8fb16de3fefe19ccc575fee06aeabb9df9988232d9bbdad7a5deb";
static const char *const GOLDEN_TAIL_4 =
    "b2d46a08e3309cc87e4743489860aa01b22e36955ceba0cefd5a7fa51c61e9a7";
static const char *const GOLDEN_TAIL_5 =
    "d896693610da41418d40d2cc69e3a9a170582ec8b91c0f7d4a7ba404413025cc";
static const char *const GOLDEN_TAIL_SSE =
    "1d83b9748c7fefee184258d93d8baa89b7cf22ffe42f4122504bc116c7f7bca8";

/* Every stack: each version on each code path. */
static const detfeed_cv STACKS[] = {TU_CV_STACKS};
#define NSTACKS ((int)(sizeof STACKS / sizeof STACKS[0]))

static const char *stack_name(const detfeed_cv *cv)
{
    static const char *const v[] = {"4", "5.0", "5.1", "4-debian"};
    static const char *const c[] = {"auto", "sse", "avx2", "avx512"};
    static char buf[4][32];
    static int next;
    char *b = buf[next++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", v[cv->version], c[cv->cpu]);
    return b;
}

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

/* HSV->BGR of all 2^24 triples laid out `w` wide under `cv`, hashed. */
static void hash_hsv2bgr(const uint8_t *all, uint8_t *out, int w, const detfeed_cv *cv,
                         char hex[65])
{
    int h = (int)(ALL / (uint32_t)w);
    CHECK_INT(detfeed_hsv_to_bgr_cv(all, (size_t)w * 3, out, (size_t)w * 3, w, h, cv),
              0);
    tu_sha256_hex(out, (size_t)ALL * 3, hex);
}

static void test_golden(const uint8_t *all, uint8_t *out)
{
    char hex[65];
    CHECK_INT(detfeed_bgr_to_hsv(all, SIDE * 3, out, SIDE * 3, SIDE, SIDE), 0);
    tu_sha256_hex(out, (size_t)ALL * 3, hex);
    CHECK_STR(hex, GOLDEN_BGR2HSV);
    CHECK_INT(detfeed_bgr_to_hsv(all, 8 * 3, out, 8 * 3, 8, ALL / 8), 0);
    tu_sha256_hex(out, (size_t)ALL * 3, hex);
    CHECK_STR(hex, GOLDEN_BGR2HSV);
    for (int k = 0; k < NSTACKS; k++) {
        const detfeed_cv *cv = &STACKS[k];
        bool sse = cv->cpu == DETFEED_CV_CPU_SSE;
        hash_hsv2bgr(all, out, SIDE, cv, hex);
        if (!CHECK_STR(hex, sse ? GOLDEN_BLOCK_SSE : GOLDEN_BLOCK_FUSED))
            fprintf(stderr, "  block, stack %s\n", stack_name(cv));
        hash_hsv2bgr(all, out, 8, cv, hex);
        const char *tail = sse                                  ? GOLDEN_TAIL_SSE
                           : cv->version == DETFEED_CV_4_DEBIAN ? GOLDEN_TAIL_4
                                                                : GOLDEN_TAIL_5;
        if (!CHECK_STR(hex, tail))
            fprintf(stderr, "  row tail, stack %s\n", stack_name(cv));
    }
    /* The functions without a stack follow 4.x on this CPU. */
    detfeed_cv here = {DETFEED_CV_4_DEBIAN, detfeed_cv_cpu_resolve(DETFEED_CV_CPU_AUTO),
                       0};
    CHECK_INT(detfeed_hsv_to_bgr(all, 8 * 3, out, 8 * 3, 8, ALL / 8), 0);
    tu_sha256_hex(out, (size_t)ALL * 3, hex);
    CHECK_STR(hex, here.cpu == DETFEED_CV_CPU_SSE ? GOLDEN_TAIL_SSE : GOLDEN_TAIL_4);
}

/* The three steps one after another, each through the public API, on all
 * 2^24 triples laid out `w` wide. */
static void composed(const uint8_t *all, uint8_t *out, const uint8_t lut[3][256], int w,
                     const detfeed_cv *cv)
{
    int h = (int)(ALL / (uint32_t)w);
    detfeed_bgr_to_hsv(all, (size_t)w * 3, out, (size_t)w * 3, w, h);
    for (size_t i = 0; i < (size_t)ALL * 3; i += 3) {
        out[i] = lut[0][out[i]];
        out[i + 1] = lut[1][out[i + 1]];
        out[i + 2] = lut[2][out[i + 2]];
    }
    detfeed_hsv_to_bgr_cv(out, (size_t)w * 3, out, (size_t)w * 3, w, h, cv);
}

static size_t count_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += a[i] != b[i];
    return d;
}

/* The fused operation of every implementation against composed() on all
 * 2^24 triples laid out `w` wide under `cv`, for gains [0, ngains). */
static void fused_against_composed(const uint8_t *all, uint8_t *out, uint8_t *ref,
                                   int w, const detfeed_cv *cv,
                                   const double (*gains)[3], int ngains)
{
    int h = (int)(ALL / (uint32_t)w);
    for (int g = 0; g < ngains; g++) {
        uint8_t lut[3][256];
        CHECK_INT(detfeed_hsv_lut(gains[g][0], gains[g][1], gains[g][2], lut), 0);
        composed(all, ref, lut, w, cv);
        for (int isa = DETFEED_ISA_PORTABLE; isa <= DETFEED_ISA_AVX512; isa++) {
            if (!detfeed_isa_available((detfeed_isa)isa))
                continue;
            memset(out, 0, (size_t)ALL * 3);
            CHECK_INT(detfeed_hsv_apply_cv(all, (size_t)w * 3, out, (size_t)w * 3, w, h,
                                           lut, cv, (detfeed_isa)isa),
                      0);
            if (!CHECK_INT(count_diff(out, ref, (size_t)ALL * 3), 0))
                fprintf(stderr, "  isa %d, gains %d, width %d, stack %s\n", isa, g, w,
                        stack_name(cv));
        }
    }
}

static void test_fused_exhaustive(const uint8_t *all, uint8_t *out, uint8_t *ref)
{
    double gains[][3] = {
        {0.01, -0.3, 0.2},    {0, 0, 0},           {0.015, 0.7, 0.4},
        {-0.015, -0.7, -0.4}, {-0.015, 0.7, -0.4}, {-1e-17, 0.0, 0.0},
        {0.5, 2.0, -1.5},     {0, 0, 0},           {0, 0, 0},
    };
    /* Under a sanitizer (TU_SANITIZED), two gain sets of the nine. */
    const int ng = TU_SANITIZED ? 2 : (int)(sizeof gains / sizeof gains[0]);
    uint64_t rng = 42;
    for (int i = 7; i < 9; i++)
        for (int c = 0; c < 3; c++)
            gains[i][c] = tu_uniform(&rng, -1, 1) * (c == 0   ? 0.015
                                                     : c == 1 ? 0.7
                                                              : 0.4);
    for (int isa = DETFEED_ISA_AVX2; isa <= DETFEED_ISA_AVX512; isa++)
        if (!detfeed_isa_available((detfeed_isa)isa))
            printf("note: ISA %d not available on this CPU, not compared\n", isa);
    /* All block, every gain set, the default stack. */
    const detfeed_cv here = {DETFEED_CV_4_DEBIAN, DETFEED_CV_CPU_AUTO, 0};
    fused_against_composed(all, out, ref, SIDE, &here, (const double(*)[3])gains, ng);
    /* Narrow rows, two gain sets: the unfused SSE block (32 wide), the
     * 4.x and 5.x row tails of the AVX2 code path (16 wide: all tail), 5.1's
     * AVX-512 row tail (32 wide: all tail) and the SSE row tail (8 wide). */
    static const struct {
        int w, stack;
    } narrow[] = {{32, 0}, {16, 1}, {16, 4}, {32, 8}, {8, 6}};
    for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; i++)
        fused_against_composed(all, out, ref, narrow[i].w, &STACKS[narrow[i].stack],
                               (const double(*)[3])gains, TU_SANITIZED ? 1 : 2);
}

/* Every width 1..150 (all tails of the 8-, 16- and 64-pixel steps and of
 * OpenCV's blocks), padded strides, in place and out of place, under every
 * stack: each ISA against the portable result. */
static void geometry_one(const detfeed_cv *cv, const uint8_t lut[3][256], int w,
                         uint64_t *rng)
{
    int h = 3, stride = w * 3 + (w % 5) * 7;
    size_t n = (size_t)stride * h;
    uint8_t *src = malloc(n), *ref = malloc(n), *out = malloc(n);
    if (!CHECK(src && ref && out))
        goto done;
    for (size_t i = 0; i < n; i++)
        src[i] = (uint8_t)tu_rand(rng);
    memcpy(ref, src, n);
    CHECK_INT(detfeed_hsv_apply_cv(src, stride, ref, stride, w, h, lut, cv,
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
        CHECK_INT(detfeed_hsv_apply_cv(out, stride, out, stride, w, h, lut, cv,
                                       (detfeed_isa)isa),
                  0);
        if (!CHECK_INT(count_diff(out, ref, n), 0))
            fprintf(stderr, "  width %d, isa %d, stack %s\n", w, isa, stack_name(cv));
    }
done:
    free(src);
    free(ref);
    free(out);
}

static void test_geometry(void)
{
    uint64_t rng = 7;
    uint8_t lut[3][256];
    detfeed_hsv_lut(0.012, 0.55, -0.31, lut);
    for (int k = 0; k < NSTACKS; k++)
        for (int w = 1; w <= 150; w++)
            geometry_one(&STACKS[k], lut, w, &rng);
    static const int wide[] = {480, 500, 586, 613, 997};
    for (int k = 0; k < NSTACKS; k++)
        for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
            geometry_one(&STACKS[k], lut, wide[i], &rng);
}

/*
 * Captured rows: gains (0.015, 0.7, 0.4); gray pixels (100, 100, 100), and
 * the pixels A = (71, 72, 125) and B = (16, 18, 37) at some columns. After
 * BGR->HSV and the tables, A is HSV (3, 187, 175) and B (5, 246, 51); each
 * gives different bytes in OpenCV's formulas:
 *   A: SIMD block 46,59,175; scalar 47,59,175 (4.x; SSE), 47,60,175 (5.x)
 *   B: SIMD block 1,9,51 (AVX2, AVX-512), 1,10,51 (SSE); scalar 2,10,51
 * so each column below tells which formula OpenCV used there. The bytes
 * are cv2's (RandomHSV as Ultralytics runs it; row 1 of 2): Debian's 4.6.0,
 * the 5.0.0.93 and 5.1.0.95 wheels, on an AVX-512 CPU with the default
 * dispatch (4.6 and 5.0 run their AVX2 code there), 5.1 with
 * OPENCV_CPU_DISABLE=AVX512-SKX (its AVX2 code), and cv2.setUseOptimized(
 * False) (SSE). The first case is the 586-wide image whose column 576 the
 * every-pixel block formula got wrong.
 */
#define NCOLS 6
typedef struct captured_row {
    int width, ncols;
    int col[NCOLS];
    char px[NCOLS]; /* 'A' or 'B' */
    /* output pixel per column, per stack: 4/AVX2, 4/SSE, 5.0/AVX2,
     * 5.0/SSE, 5.1/AVX-512, 5.1/AVX2, 5.1/SSE */
    uint8_t out[7][NCOLS][3];
} captured_row;

static const captured_row CAPTURED[] = {
    {586,
     2,
     {576, 580},
     {'A', 'B'},
     {{{47, 59, 175}, {2, 10, 51}},
      {{47, 59, 175}, {2, 10, 51}},
      {{47, 60, 175}, {2, 10, 51}},
      {{47, 59, 175}, {2, 10, 51}},
      {{47, 60, 175}, {2, 10, 51}},
      {{47, 60, 175}, {2, 10, 51}},
      {{47, 59, 175}, {2, 10, 51}}}},
    {500,
     6,
     {10, 470, 471, 490, 497, 498},
     {'B', 'A', 'B', 'A', 'A', 'B'},
     {{{1, 9, 51},
       {46, 59, 175},
       {1, 9, 51},
       {47, 59, 175},
       {47, 59, 175},
       {2, 10, 51}},
      {{1, 10, 51},
       {46, 59, 175},
       {1, 10, 51},
       {46, 59, 175},
       {47, 59, 175},
       {2, 10, 51}},
      {{1, 9, 51},
       {46, 59, 175},
       {1, 9, 51},
       {47, 60, 175},
       {47, 60, 175},
       {2, 10, 51}},
      {{1, 10, 51},
       {46, 59, 175},
       {1, 10, 51},
       {46, 59, 175},
       {47, 59, 175},
       {2, 10, 51}},
      {{1, 9, 51},
       {47, 60, 175},
       {2, 10, 51},
       {47, 60, 175},
       {47, 60, 175},
       {2, 10, 51}},
      {{1, 9, 51},
       {46, 59, 175},
       {1, 9, 51},
       {47, 60, 175},
       {47, 60, 175},
       {2, 10, 51}},
      {{1, 10, 51},
       {46, 59, 175},
       {1, 10, 51},
       {46, 59, 175},
       {47, 59, 175},
       {2, 10, 51}}}},
    {480,
     2,
     {460, 461},
     {'A', 'B'},
     {{{46, 59, 175}, {1, 9, 51}},
      {{46, 59, 175}, {1, 10, 51}},
      {{46, 59, 175}, {1, 9, 51}},
      {{46, 59, 175}, {1, 10, 51}},
      {{47, 60, 175}, {2, 10, 51}},
      {{46, 59, 175}, {1, 9, 51}},
      {{46, 59, 175}, {1, 10, 51}}}},
};

/* Which captured column set a stack's bytes are (4.x and 5.0 run their
 * AVX2 code on AVX-512 CPUs). */
static int captured_index(const detfeed_cv *cv)
{
    int sse = cv->cpu == DETFEED_CV_CPU_SSE;
    switch (cv->version) {
    case DETFEED_CV_4_DEBIAN:
        return sse ? 1 : 0;
    case DETFEED_CV_4: /* the wheels' 4.x colour is 5.0's */
    case DETFEED_CV_5_0:
        return sse ? 3 : 2;
    default:
        return sse ? 6 : cv->cpu == DETFEED_CV_CPU_AVX512 ? 4 : 5;
    }
}

/* Fills a 2-row image of the case: BGR (hsv 0) or its HSV after the
 * tables (hsv 1). */
static void captured_image(const captured_row *c, uint8_t *img, int hsv)
{
    static const uint8_t gray[2][3] = {{100, 100, 100}, {2, 0, 140}};
    static const uint8_t a[2][3] = {{71, 72, 125}, {3, 187, 175}};
    static const uint8_t b[2][3] = {{16, 18, 37}, {5, 246, 51}};
    for (int i = 0; i < 2 * c->width; i++)
        memcpy(img + 3 * i, gray[hsv], 3);
    for (int y = 0; y < 2; y++)
        for (int k = 0; k < c->ncols; k++)
            memcpy(img + 3 * ((size_t)y * c->width + c->col[k]),
                   c->px[k] == 'A' ? a[hsv] : b[hsv], 3);
}

static void check_captured(const captured_row *c, const uint8_t *img,
                           const detfeed_cv *cv, const char *what)
{
    int idx = captured_index(cv);
    for (int k = 0; k < c->ncols; k++) {
        const uint8_t *got = img + 3 * ((size_t)c->width + c->col[k]);
        if (!CHECK(memcmp(got, c->out[idx][k], 3) == 0))
            fprintf(stderr, "  %s, width %d, column %d, stack %s: %d,%d,%d\n", what,
                    c->width, c->col[k], stack_name(cv), got[0], got[1], got[2]);
    }
}

static void test_captured_rows(void)
{
    uint8_t lut[3][256], img[2 * 586 * 3];
    detfeed_hsv_lut(0.015, 0.7, 0.4, lut);
    detfeed_cv here = {DETFEED_CV_5_1, detfeed_cv_cpu_resolve(DETFEED_CV_CPU_AUTO), 1};
    for (size_t i = 0; i < sizeof CAPTURED / sizeof CAPTURED[0]; i++) {
        const captured_row *c = &CAPTURED[i];
        size_t stride = (size_t)c->width * 3;
        for (int k = 0; k <= NSTACKS; k++) {
            const detfeed_cv *cv = k < NSTACKS ? &STACKS[k] : &here;
            for (int isa = DETFEED_ISA_PORTABLE; isa <= DETFEED_ISA_AVX512; isa++) {
                if (!detfeed_isa_available((detfeed_isa)isa))
                    continue;
                captured_image(c, img, 0);
                CHECK_INT(detfeed_hsv_apply_cv(img, stride, img, stride, c->width, 2,
                                               lut, cv, (detfeed_isa)isa),
                          0);
                check_captured(c, img, cv, isa == 1 ? "portable" : "vector");
            }
            captured_image(c, img, 1);
            CHECK_INT(detfeed_hsv_to_bgr_cv(img, stride, img, stride, c->width, 2, cv),
                      0);
            check_captured(c, img, cv, "hsv_to_bgr");
        }
        /* AUTO resolves as detfeed_cv_cpu_resolve says. */
        detfeed_cv autocv = {DETFEED_CV_5_1, DETFEED_CV_CPU_AUTO, 1};
        captured_image(c, img, 0);
        CHECK_INT(detfeed_hsv_apply_cv(img, stride, img, stride, c->width, 2, lut,
                                       &autocv, DETFEED_ISA_AUTO),
                  0);
        check_captured(c, img, &here, "auto");
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
    /* The stack: required, and known. */
    const detfeed_cv ok = {DETFEED_CV_5_1, DETFEED_CV_CPU_AUTO, 1};
    const detfeed_cv bad_version = {(detfeed_cv_version)4, DETFEED_CV_CPU_AUTO, 1};
    const detfeed_cv bad_cpu = {DETFEED_CV_5_0, (detfeed_cv_cpu)4, 0};
    CHECK_INT(detfeed_hsv_apply_cv(img, 12, img, 12, 4, 4, lut, &ok, 0), 0);
    CHECK_INT(detfeed_hsv_apply_cv(img, 12, img, 12, 4, 4, lut, NULL, 0),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_apply_cv(img, 12, img, 12, 4, 4, lut, &bad_version, 0),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_apply_cv(img, 12, img, 12, 4, 4, lut, &bad_cpu, 0),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_apply_cv(img, 12, img, 12, 4, 4, NULL, &ok, 0),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_to_bgr_cv(img, 12, img, 12, 4, 4, &ok), 0);
    CHECK_INT(detfeed_hsv_to_bgr_cv(img, 12, img, 12, 4, 4, NULL), DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_to_bgr_cv(img, 12, img, 12, 4, 4, &bad_cpu), DETFEED_EINVAL);
    CHECK_INT(detfeed_hsv_to_bgr_cv(img, 12, img + 1, 12, 3, 3, &ok), DETFEED_EINVAL);
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
    test_captured_rows();
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
