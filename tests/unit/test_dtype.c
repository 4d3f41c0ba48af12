/*
 * test_dtype.c - consumer dtype tables against exact references, and the
 * CPU conversion to planar RGB.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* True when f is the correctly rounded value of c / 255: with f = M * 2^E
 * (frexpf, M a 24-bit integer), |M - c * 2^-E / 255| < 1/2, checked in exact
 * integer arithmetic as |255 M - c 2^-E| * 2 < 255. */
static int is_quotient(float f, int c)
{
    if (c == 0)
        return f == 0.0f;
    int e;
    float m = frexpf(f, &e); /* f = m * 2^e, m in [0.5, 1) */
    long long M = (long long)ldexpf(m, 24);
    int E = e - 24; /* f = M * 2^E, E < 0 here */
    long long N = (long long)c << -E;
    long long d = 255 * M - N;
    return 2 * llabs(d) < 255;
}

static float half_to_float(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0    ? ldexpf((float)m, -24)
              : e == 31 ? (m ? NAN : INFINITY)
                        : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

static float bf16_to_float(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* The nearest finite pattern to f by brute force; ties to the even pattern. */
static uint16_t nearest(float f, float (*decode)(uint16_t))
{
    uint16_t best = 0;
    double bd = INFINITY;
    for (uint32_t p = 0; p < 65536; p++) {
        float v = decode((uint16_t)p);
        if (!isfinite(v) || signbit(v))
            continue;
        double d = fabs((double)v - (double)f);
        if (d < bd || (d == bd && (p & 1) == 0)) {
            bd = d;
            best = (uint16_t)p;
        }
    }
    return best;
}

static void test_tables(void)
{
    float q[256], r[256];
    uint16_t h[256], b[256];
    uint8_t u[256];
    CHECK_INT(detfeed_dtype_table(DETFEED_DTYPE_F32, DETFEED_SCALE_QUOTIENT, q), 0);
    CHECK_INT(detfeed_dtype_table(DETFEED_DTYPE_F32, DETFEED_SCALE_RECIPROCAL, r), 0);
    CHECK_INT(detfeed_dtype_table(DETFEED_DTYPE_U8, DETFEED_SCALE_QUOTIENT, u), 0);
    int differ = 0;
    for (int c = 0; c < 256; c++) {
        CHECK(is_quotient(q[c], c));
        CHECK(r[c] == (float)c * (1.0f / 255.0f));
        CHECK_INT(u[c], c);
        differ += q[c] != r[c];
    }
    CHECK_INT(differ, 126); /* DESIGN §2.1 */
    for (int s = 0; s <= 1; s++) {
        float *f = s ? r : q;
        CHECK_INT(detfeed_dtype_table(DETFEED_DTYPE_F16, (detfeed_scale)s, h), 0);
        CHECK_INT(detfeed_dtype_table(DETFEED_DTYPE_BF16, (detfeed_scale)s, b), 0);
        for (int c = 0; c < 256; c++) {
            CHECK_INT(h[c], nearest(f[c], half_to_float));
            CHECK_INT(b[c], nearest(f[c], bf16_to_float));
        }
    }
    CHECK_INT(detfeed_dtype_table((detfeed_dtype)4, 0, q), DETFEED_EINVAL);
    CHECK_INT(detfeed_dtype_table(DETFEED_DTYPE_F32, (detfeed_scale)2, q),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_dtype_table(DETFEED_DTYPE_F32, 0, NULL), DETFEED_EINVAL);
}

static void test_names(void)
{
    const char *names[] = {"u8", "f32", "f16", "bf16"};
    size_t sizes[] = {1, 4, 2, 2};
    for (int d = 0; d < 4; d++) {
        detfeed_dtype got;
        CHECK_STR(detfeed_dtype_name((detfeed_dtype)d), names[d]);
        CHECK_INT(detfeed_dtype_size((detfeed_dtype)d), sizes[d]);
        CHECK(detfeed_dtype_parse(names[d], &got) == 0 && got == (detfeed_dtype)d);
    }
    detfeed_dtype got;
    CHECK(detfeed_dtype_parse("bfloat16", &got) == 0 && got == DETFEED_DTYPE_BF16);
    CHECK(detfeed_dtype_parse("half", &got) == 0 && got == DETFEED_DTYPE_F16);
    CHECK_INT(detfeed_dtype_parse("f64", &got), DETFEED_EINVAL);
    CHECK_INT(detfeed_dtype_parse(NULL, &got), DETFEED_EINVAL);
    CHECK_INT(detfeed_dtype_parse("u8", NULL), DETFEED_EINVAL);
    CHECK(detfeed_dtype_name((detfeed_dtype)7) == NULL);
    CHECK_INT(detfeed_dtype_size((detfeed_dtype)7), 0);
}

/* Elements of the converted planes (planes of plane_stride bytes, R G B)
 * that differ from the table's value of their source code. */
static int wrong_values(const uint8_t *src, size_t stride, int w, int h,
                        const uint8_t *dst, size_t plane, size_t es,
                        const uint8_t *table)
{
    int bad = 0;
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                bad += memcmp(dst + c * plane + ((size_t)y * w + x) * es,
                              table + src[y * stride + x * 3 + 2 - c] * es, es) != 0;
    return bad;
}

/* Many widths (the 16-pixel vector body and every tail) and random codes,
 * each dtype and scale, against the table. */
static void test_convert_widths(void)
{
    uint64_t rng = 7;
    static const int widths[] = {1, 2, 15, 16, 17, 31, 32, 33, 47, 64, 100, 640};
    for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++) {
        int w = widths[k], h = 3;
        size_t stride = (size_t)w * 3 + 5;
        uint8_t *src = malloc(stride * h), *dst = malloc((size_t)w * h * 3 * 4);
        for (size_t i = 0; i < stride * h; i++)
            src[i] = (uint8_t)tu_rand(&rng);
        for (int d = 0; d < 4; d++) {
            for (int sc = 0; sc <= 1; sc++) {
                size_t es = detfeed_dtype_size((detfeed_dtype)d),
                       plane = (size_t)w * h * es;
                uint8_t table[1024];
                detfeed_dtype_table((detfeed_dtype)d, (detfeed_scale)sc, table);
                CHECK_INT(detfeed_convert_chw(src, stride, w, h, dst, plane,
                                              (detfeed_dtype)d, (detfeed_scale)sc),
                          0);
                CHECK_INT(wrong_values(src, stride, w, h, dst, plane, es, table), 0);
            }
        }
        free(src);
        free(dst);
    }
}

static void test_convert(void)
{
    enum { W = 37, H = 5, PAD = 16 };
    uint64_t rng = 99;
    uint8_t src[H][W * 3 + 2];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W * 3 + 2; x++)
            src[y][x] = (uint8_t)tu_rand(&rng);
    for (int d = 0; d < 4; d++) {
        for (int s = 0; s <= 1; s++) {
            size_t es = detfeed_dtype_size((detfeed_dtype)d);
            size_t plane = (size_t)W * H * es + PAD * es;
            uint8_t *dst = malloc(3 * plane), table[1024];
            memset(dst, 0xA5, 3 * plane);
            detfeed_dtype_table((detfeed_dtype)d, (detfeed_scale)s, table);
            CHECK_INT(detfeed_convert_chw(&src[0][0], sizeof src[0], W, H, dst, plane,
                                          (detfeed_dtype)d, (detfeed_scale)s),
                      0);
            int bad =
                wrong_values(&src[0][0], sizeof src[0], W, H, dst, plane, es, table);
            for (int c = 0; c < 3; c++)
                for (size_t i = (size_t)W * H * es; i < plane; i++)
                    bad += dst[c * plane + i] != 0xA5;
            CHECK_INT(bad, 0);
            free(dst);
        }
    }
    float out[3 * W * H + 1];
    uint8_t *mis = (uint8_t *)out + 1;
    CHECK_INT(detfeed_convert_chw(&src[0][0], sizeof src[0], W, H, mis, W * H * 4,
                                  DETFEED_DTYPE_F32, 0),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_convert_chw(&src[0][0], sizeof src[0], W, H, out, W * H * 4 - 4,
                                  DETFEED_DTYPE_F32, 0),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_convert_chw(&src[0][0], sizeof src[0], W, H, out, W * H * 4,
                                  (detfeed_dtype)5, 0),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_convert_chw(NULL, sizeof src[0], W, H, out, W * H * 4,
                                  DETFEED_DTYPE_F32, 0),
              DETFEED_EINVAL);
    /* in place, or the planes over the source: refused */
    uint8_t *both = calloc(3 * W * H * 4 + (size_t)W * H * 3, 1);
    CHECK_INT(detfeed_convert_chw(both, (size_t)W * 3, W, H, both, W * H,
                                  DETFEED_DTYPE_U8, 0),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_convert_chw(both + 8, (size_t)W * 3, W, H, both, W * H,
                                  DETFEED_DTYPE_U8, 0),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_convert_chw(both + 3 * W * H, (size_t)W * 3, W, H, both, W * H,
                                  DETFEED_DTYPE_U8, 0),
              0); /* just after the third plane */
    free(both);
}

int main(void)
{
    test_tables();
    test_names();
    test_convert();
    test_convert_widths();
    return tu_finish("test_dtype");
}
