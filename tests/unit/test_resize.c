/*
 * test_resize.c - detfeed_resize_linear and detfeed_load_size.
 *
 * - Argument errors: NULL, sizes, strides, channels, overlap.
 * - Equal sizes copy; row padding is never written.
 * - Tiny cases checked by hand (values confirmed with cv2 4.6): the staged
 *   vertical rounding also on a 1-element row, clamped edge rows, the exact
 *   2x shrink that becomes a 2x2 mean.
 * - Many random geometries (1 and 3 channels, padded strides) against a
 *   per-pixel restatement of the arithmetic written here, which shares no
 *   structure with the library's separable, ring-buffered passes. The
 *   OpenCV comparison itself is tests/oracle/test_resize_oracle.py.
 * - Ultralytics load sizes, expected values from Python's math.ceil.
 */
#include "testutil.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_arguments(void)
{
    uint8_t a[8 * 8 * 3] = {0}, b[8 * 8 * 3] = {0};
    CHECK_INT(detfeed_resize_linear(NULL, 12, 4, 4, b, 6, 2, 2, 3), DETFEED_EINVAL);
    CHECK_INT(detfeed_resize_linear(a, 12, 4, 4, NULL, 6, 2, 2, 3), DETFEED_EINVAL);
    CHECK_INT(detfeed_resize_linear(a, 12, 0, 4, b, 6, 2, 2, 3), DETFEED_EINVAL);
    CHECK_INT(detfeed_resize_linear(a, 12, 4, -1, b, 6, 2, 2, 3), DETFEED_EINVAL);
    CHECK_INT(detfeed_resize_linear(a, 12, 4, 4, b, 6, 0, 2, 3), DETFEED_EINVAL);
    CHECK_INT(detfeed_resize_linear(a, 12, 4, 4, b, 6, 2, -5, 3), DETFEED_EINVAL);
    /* Strides below width * channels. */
    CHECK_INT(detfeed_resize_linear(a, 11, 4, 4, b, 6, 2, 2, 3), DETFEED_EINVAL);
    CHECK_INT(detfeed_resize_linear(a, 12, 4, 4, b, 5, 2, 2, 3), DETFEED_EINVAL);
    CHECK_INT(detfeed_resize_linear(a, 3, 4, 4, b, 2, 2, 2, 1), DETFEED_EINVAL);
    /* Channels other than 1 and 3. */
    for (int cn = -1; cn <= 5; cn++)
        if (cn != 1 && cn != 3)
            CHECK_INT(detfeed_resize_linear(a, 32, 4, 4, b, 32, 2, 3, cn),
                      DETFEED_EINVAL);
    /* Any overlap, the same start included, even for an equal-size copy. */
    CHECK_INT(detfeed_resize_linear(a, 12, 4, 4, a, 12, 4, 4, 3), DETFEED_EINVAL);
    CHECK_INT(detfeed_resize_linear(a, 12, 4, 4, a + 47, 6, 2, 3, 3), DETFEED_EINVAL);
    CHECK_INT(detfeed_resize_linear(a + 40, 12, 4, 4, a, 6, 2, 7, 3), DETFEED_EINVAL);
    /* A span that size_t cannot hold describes no real buffer. */
    CHECK_INT(detfeed_resize_linear(a, SIZE_MAX / 2, 1, 4, b, 3, 1, 1, 3),
              DETFEED_EINVAL);
    /* Adjacent, not overlapping: accepted. */
    CHECK_INT(detfeed_resize_linear(a, 12, 4, 4, a + 48, 6, 2, 3, 3), DETFEED_OK);
    CHECK_INT(detfeed_resize_linear(a, 4, 4, 1, b, 8, 8, 2, 1), DETFEED_OK);
}

static void test_copy(void)
{
    uint64_t rng = 3;
    for (int cn = 1; cn <= 3; cn += 2) {
        int w = 13, h = 5;
        size_t ss = (size_t)w * cn + 7, ds = (size_t)w * cn + 3;
        uint8_t src[13 * 3 * 5 + 7 * 5], dst[13 * 3 * 5 + 3 * 5];
        for (size_t i = 0; i < sizeof src; i++)
            src[i] = (uint8_t)tu_rand(&rng);
        memset(dst, 0xA5, sizeof dst);
        CHECK_INT(detfeed_resize_linear(src, ss, w, h, dst, ds, w, h, cn), DETFEED_OK);
        int bad = 0;
        for (int y = 0; y < h; y++)
            for (size_t x = 0; x < ds; x++) {
                uint8_t want = x < (size_t)w * cn ? src[y * ss + x] : 0xA5;
                bad += dst[y * ds + x] != want;
            }
        CHECK_INT(bad, 0);
    }
}

static int resize_eq(const uint8_t *src, int sw, int sh, int dw, int dh, int cn,
                     const uint8_t *want)
{
    uint8_t out[64];
    size_t n = (size_t)dw * dh * cn;
    if (n > sizeof out)
        return 0;
    if (detfeed_resize_linear(src, (size_t)sw * cn, sw, sh, out, (size_t)dw * cn, dw,
                              dh, cn) != DETFEED_OK)
        return 0;
    return memcmp(out, want, n) == 0;
}

static void test_hand(void)
{
    /* Column {1, 6} to 5 rows. Row 1: fy = 1.5 * 0.4 - 0.5 = 0.1f, weights
     * round(0.9f * 2048) = 1843 and round(0.1f * 2048) = 205; horizontal
     * values 1 * 2048 and 6 * 2048. Staged: (1843 * 128) >> 16 = 3,
     * (205 * 768) >> 16 = 2, (3 + 2 + 2) >> 2 = 1. The exact rounding would
     * give round(1.5005) = 2: the staged one applies even to a row of one
     * element, far from any 16-element SIMD block. Row 0 blends row 0 with
     * itself (fy = -0.3 clamps the rows, not the weights 1638 and 410). */
    static const uint8_t col[2] = {1, 6}, col5[5] = {1, 1, 4, 5, 6};
    CHECK(resize_eq(col, 1, 2, 1, 5, 1, col5));
    /* {7, 200} to 3 rows: the edge rows reproduce the source rows. */
    static const uint8_t c2[2] = {7, 200}, c3[3] = {7, 104, 200};
    CHECK(resize_eq(c2, 1, 2, 1, 3, 1, c3));
    /* 4x2 to 2x1 is an exact 2x shrink: (10 + 21 + 50 + 61 + 2) >> 2 = 36,
     * (30 + 41 + 70 + 81 + 2) >> 2 = 56. To 3x1 it stays bilinear: weights
     * 1707 and 341 on pixels 0 and 1, rows halved: 32 = ((24231 >> 4) >> 6
     * + (106151 >> 4) >> 6 + 2) >> 2. */
    static const uint8_t b[8] = {10, 21, 30, 41, 50, 61, 70, 81};
    static const uint8_t b2[2] = {36, 56}, b3[3] = {32, 46, 59};
    CHECK(resize_eq(b, 4, 2, 2, 1, 1, b2));
    CHECK(resize_eq(b, 4, 2, 3, 1, 1, b3));
    /* Upscaling a row: the last columns repeat the last pixel. */
    static const uint8_t r[3] = {0, 255, 9}, r7[7] = {0, 36, 146, 255, 150, 44, 9};
    CHECK(resize_eq(r, 3, 1, 7, 1, 1, r7));
    /* 2x2 BGR to 1x1: the 2x2 mean per channel, rounded half up. */
    static const uint8_t q[12] = {3, 23, 43, 63, 83, 103, 123, 143, 163, 183, 203, 223};
    static const uint8_t q1[3] = {93, 113, 133};
    CHECK(resize_eq(q, 2, 2, 1, 1, 3, q1));
}

/* ---- a per-pixel restatement of OpenCV's arithmetic ---------------------- */

static int q11(float w)
{
    return (int)lrintf(w * 2048.0f);
}

/* Source index and weights of destination index d on one axis. `clamp`
 * resets the weights at the edges (columns); rows clamp only the index. */
static void ref_axis(int d, int sn, int dn, int clamp, int *i0, int *i1, int *w0,
                     int *w1)
{
    float f = (float)((d + 0.5) * (1.0 / ((double)dn / sn)) - 0.5);
    int s = (int)floorf(f);
    f -= (float)s;
    if (clamp && s < 0)
        s = 0, f = 0;
    if (clamp && s >= sn - 1)
        s = sn - 1, f = 0;
    *w0 = q11(1.0f - f);
    *w1 = q11(f);
    *i0 = s < 0 ? 0 : s > sn - 1 ? sn - 1 : s;
    *i1 = s + 1 < 0 ? 0 : s + 1 > sn - 1 ? sn - 1 : s + 1;
}

static int ref_pixel(const uint8_t *src, size_t ss, int sw, int sh, int dw, int dh,
                     int cn, int x, int y, int c)
{
    if (sw == 2 * dw && sh == 2 * dh) {
        const uint8_t *p = src + 2 * (size_t)y * ss + (size_t)2 * x * cn + c;
        return (p[0] + p[cn] + p[ss] + p[ss + cn] + 2) >> 2;
    }
    int x0, x1, a0, a1, y0, y1, b0, b1;
    ref_axis(x, sw, dw, 1, &x0, &x1, &a0, &a1);
    ref_axis(y, sh, dh, 0, &y0, &y1, &b0, &b1);
    const uint8_t *r0 = src + (size_t)y0 * ss, *r1 = src + (size_t)y1 * ss;
    int h0 = r0[x0 * cn + c] * a0 + r0[x1 * cn + c] * a1;
    int h1 = r1[x0 * cn + c] * a0 + r1[x1 * cn + c] * a1;
    return ((((h0 >> 4) * b0) >> 16) + (((h1 >> 4) * b1) >> 16) + 2) >> 2;
}

static int check_random(uint64_t *rng, int sw, int sh, int dw, int dh, int cn)
{
    size_t ss = (size_t)sw * cn + tu_rand(rng) % 9,
           ds = (size_t)dw * cn + tu_rand(rng) % 9;
    size_t ns = ss * sh, nd = ds * dh;
    uint8_t *src = malloc(ns), *dst = malloc(nd);
    int bad = 0;
    if (!src || !dst) {
        free(src);
        free(dst);
        return -1;
    }
    for (size_t i = 0; i < ns; i++)
        src[i] = (uint8_t)tu_rand(rng);
    memset(dst, 0x5A, nd);
    if (detfeed_resize_linear(src, ss, sw, sh, dst, ds, dw, dh, cn) != DETFEED_OK)
        bad = -1;
    for (int y = 0; bad >= 0 && y < dh; y++)
        for (size_t x = 0; x < ds; x++) {
            int want = x < (size_t)dw * cn ? ref_pixel(src, ss, sw, sh, dw, dh, cn,
                                                       (int)(x / cn), y, (int)(x % cn))
                                           : 0x5A;
            bad += dst[y * ds + x] != want;
        }
    if (bad)
        fprintf(stderr, "  %dx%d -> %dx%d, %d channels: %d bytes differ\n", sw, sh, dw,
                dh, cn, bad);
    free(src);
    free(dst);
    return bad;
}

static void test_random(void)
{
    uint64_t rng = 99;
    int cases = 0, failed = 0;
    for (int i = 0; i < 3000; i++) {
        int cn = i % 2 ? 3 : 1, lim = i % 3 == 0 ? 6 : 48;
        int dw = 1 + (int)(tu_rand(&rng) % lim), dh = 1 + (int)(tu_rand(&rng) % lim);
        int sw = 1 + (int)(tu_rand(&rng) % lim), sh = 1 + (int)(tu_rand(&rng) % lim);
        if (i % 10 == 1)
            sw = 2 * dw, sh = 2 * dh; /* the INTER_AREA switch */
        if (i % 10 == 2)
            sw = 2 * dw, sh = 2 * dh + 1; /* 2x one way only: bilinear */
        if (i % 10 == 3)
            sw = 3 * dw, sh = 3 * dh;
        cases++;
        failed += check_random(&rng, sw, sh, dw, dh, cn) != 0;
    }
    /* Very large ratios both ways, and real load sizes. */
    int big[][4] = {{1, 1, 300, 2},       {2, 1, 1, 250},       {700, 3, 1, 1},
                    {5, 900, 2, 3},       {500, 375, 640, 480}, {1280, 960, 640, 480},
                    {997, 613, 640, 394}, {333, 500, 427, 640}};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        for (int cn = 1; cn <= 3; cn += 2) {
            cases++;
            failed +=
                check_random(&rng, big[i][0], big[i][1], big[i][2], big[i][3], cn) != 0;
        }
    printf("random geometries: %d, failed %d\n", cases, failed);
    CHECK_INT(failed, 0);
}

static void check_load(int w, int h, int imgsz, int ew, int eh)
{
    int ow = -1, oh = -1;
    detfeed_load_size(w, h, imgsz, &ow, &oh);
    if (!CHECK(ow == ew && oh == eh))
        fprintf(stderr, "  %dx%d at %d: got %dx%d, want %dx%d\n", w, h, imgsz, ow, oh,
                ew, eh);
}

static void test_load_size(void)
{
    /* no size: 0 x 0, and NULL outputs: nothing (no write) */
    check_load(0, 0, 640, 0, 0);
    check_load(-5, 3, 640, 0, 0);
    check_load(INT_MIN, 1, 640, 0, 0);
    check_load(640, 480, 0, 0, 0);
    detfeed_load_size(100, 50, 640, NULL, NULL);
    /* Expected values: min(math.ceil(side * (imgsz / max(w, h))), imgsz). */
    check_load(640, 480, 640, 640, 480); /* r == 1: unchanged */
    check_load(480, 640, 640, 480, 640);
    check_load(1280, 960, 640, 640, 480);
    check_load(500, 375, 640, 640, 480); /* enlarged; 375 * 1.28 == 480.0 */
    check_load(333, 500, 640, 427, 640); /* 426.24 -> 427 */
    check_load(500, 333, 640, 640, 427);
    check_load(997, 613, 640, 640, 394); /* 393.50... */
    check_load(4032, 3024, 640, 640, 480);
    check_load(848, 636, 640, 640, 481); /* 480.00000000000006: ceil goes up */
    check_load(750, 525, 640, 640, 449); /* 448.00000000000006 */
    check_load(100, 3, 640, 640, 20);    /* 19.200000000000003 */
    check_load(3, 1000, 640, 2, 640);    /* 1.92 */
    check_load(1, 1000, 640, 1, 640);    /* 0.64 */
    check_load(1, 1, 640, 640, 640);
    check_load(640, 640, 320, 320, 320);
    check_load(612, 612, 640, 640, 640);
}

int main(void)
{
    test_arguments();
    test_copy();
    test_hand();
    test_random();
    test_load_size();
    return tu_finish("test_resize");
}
