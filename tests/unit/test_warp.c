/*
 * test_warp.c - detfeed_warp_affine and detfeed_warp_perspective.
 *
 * - Argument errors: NULL, sizes (sources of 32767 pixels a side, which
 *   OpenCV refuses), strides, overlap, code paths.
 * - The identity copies; integer translations move pixels and fill the
 *   rest with the border; a singular matrix samples source pixel (0, 0)
 *   everywhere (OpenCV's zero inverse); translations far outside, beyond
 *   the range of OpenCV's fixed point too, give the pure border.
 * - Small cases worked out by hand (values confirmed with cv2 4.6): the
 *   1/32 quantisation, a tap outside the source, rounding ties.
 * - Many random matrices and geometries (padded strides, 1-pixel sides,
 *   heights below 16 for the perspective blocks, float32-rounded
 *   matrices, W crossing zero, translations far outside) against a
 *   per-pixel restatement of the arithmetic written here from
 *   shared/ref/opencv-exact.md, 4 (with OpenCV's 2-D weight table) and the
 *   perspective rules measured with cv2, for every code path: the public
 *   functions, the portable and the AVX2 paths each against it.
 * - Perspective matrices on which the column blocks change the output.
 * The comparison with OpenCV itself is tests/oracle/test_warp_oracle.py.
 */
#include "img/warp_px.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { AFFINE = 0, PERSPECTIVE = 1 };

static const uint8_t GREY[3] = {114, 114, 114};

static int warp_isa(int kind, const uint8_t *src, size_t ss, int sw, int sh,
                    uint8_t *dst, size_t ds, int dw, int dh, const double *M,
                    const uint8_t *border, detfeed_isa isa)
{
    if (kind == AFFINE)
        return detfeed__warp_affine_isa(src, ss, sw, sh, dst, ds, dw, dh, M, border,
                                        isa);
    return detfeed__warp_perspective_isa(src, ss, sw, sh, dst, ds, dw, dh, M, border,
                                         isa);
}

/* The code paths this CPU runs, AUTO (the public functions) first. */
static int paths(detfeed_isa out[3])
{
    int n = 0;
    out[n++] = DETFEED_ISA_AUTO;
    out[n++] = DETFEED_ISA_PORTABLE;
    if (detfeed_isa_available(DETFEED_ISA_AVX2) &&
        detfeed__warp_affine_isa(GREY, 3, 1, 1, (uint8_t[3]){0}, 3, 1, 1,
                                 (const double[6]){1, 0, 0, 0, 1, 0}, GREY,
                                 DETFEED_ISA_AVX2) == DETFEED_OK)
        out[n++] = DETFEED_ISA_AVX2;
    return n;
}

static void test_arguments(void)
{
    uint8_t a[8 * 8 * 3] = {0}, b[8 * 8 * 3] = {0};
    const double M6[6] = {1, 0, 0, 0, 1, 0}, M9[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    uint8_t *big = calloc(40000 * 3, 1);
    if (!CHECK(big != NULL))
        return;
    for (int kind = 0; kind < 2; kind++) {
        const double *M = kind == AFFINE ? M6 : M9;
        detfeed_isa auto_ = DETFEED_ISA_AUTO;
        CHECK_INT(warp_isa(kind, NULL, 12, 4, 4, b, 6, 2, 2, M, GREY, auto_),
                  DETFEED_EINVAL);
        CHECK_INT(warp_isa(kind, a, 12, 4, 4, NULL, 6, 2, 2, M, GREY, auto_),
                  DETFEED_EINVAL);
        CHECK_INT(warp_isa(kind, a, 12, 4, 4, b, 6, 2, 2, NULL, GREY, auto_),
                  DETFEED_EINVAL);
        CHECK_INT(warp_isa(kind, a, 12, 4, 4, b, 6, 2, 2, M, NULL, auto_),
                  DETFEED_EINVAL);
        CHECK_INT(warp_isa(kind, a, 12, 0, 4, b, 6, 2, 2, M, GREY, auto_),
                  DETFEED_EINVAL);
        CHECK_INT(warp_isa(kind, a, 12, 4, -1, b, 6, 2, 2, M, GREY, auto_),
                  DETFEED_EINVAL);
        CHECK_INT(warp_isa(kind, a, 12, 4, 4, b, 6, 0, 2, M, GREY, auto_),
                  DETFEED_EINVAL);
        CHECK_INT(warp_isa(kind, a, 12, 4, 4, b, 6, 2, -3, M, GREY, auto_),
                  DETFEED_EINVAL);
        /* Strides below 3 * width. */
        CHECK_INT(warp_isa(kind, a, 11, 4, 4, b, 6, 2, 2, M, GREY, auto_),
                  DETFEED_EINVAL);
        CHECK_INT(warp_isa(kind, a, 12, 4, 4, b, 5, 2, 2, M, GREY, auto_),
                  DETFEED_EINVAL);
        /* Any overlap, the same start included. */
        CHECK_INT(warp_isa(kind, a, 12, 4, 4, a, 12, 4, 4, M, GREY, auto_),
                  DETFEED_EINVAL);
        CHECK_INT(warp_isa(kind, a, 12, 4, 4, a + 47, 6, 2, 2, M, GREY, auto_),
                  DETFEED_EINVAL);
        CHECK_INT(warp_isa(kind, a + 40, 12, 4, 4, a, 6, 2, 7, M, GREY, auto_),
                  DETFEED_EINVAL);
        /* Sources of 32767 pixels a side, which OpenCV refuses; 32766
         * passes, and the destination may be larger. */
        CHECK_INT(warp_isa(kind, big, 32767 * 3, 32767, 1, b, 6, 2, 2, M, GREY, auto_),
                  DETFEED_EINVAL);
        CHECK_INT(warp_isa(kind, big, 3, 1, 32767, b, 6, 2, 2, M, GREY, auto_),
                  DETFEED_EINVAL);
        CHECK_INT(warp_isa(kind, big, 32766 * 3, 32766, 1, b, 6, 2, 2, M, GREY, auto_),
                  DETFEED_OK);
        CHECK_INT(warp_isa(kind, big, 3, 1, 32766, b, 6, 2, 2, M, GREY, auto_),
                  DETFEED_OK);
        CHECK_INT(warp_isa(kind, a, 3, 1, 1, big, 40000 * 3, 40000, 1, M, GREY, auto_),
                  DETFEED_OK);
        /* A span that size_t cannot hold describes no real buffer. */
        CHECK_INT(warp_isa(kind, a, SIZE_MAX / 2, 1, 4, b, 3, 1, 1, M, GREY, auto_),
                  DETFEED_EINVAL);
        /* Code paths: an unknown value, and AVX-512, which has no sampler. */
        CHECK_INT(warp_isa(kind, a, 12, 4, 4, b, 6, 2, 2, M, GREY, (detfeed_isa)9),
                  DETFEED_EINVAL);
        CHECK_INT(warp_isa(kind, a, 12, 4, 4, b, 6, 2, 2, M, GREY, DETFEED_ISA_AVX512),
                  DETFEED_ENOTSUPPORTED);
        CHECK_INT(warp_isa(kind, a, 12, 4, 4, b, 6, 2, 2, M, GREY, DETFEED_ISA_AVX2),
                  detfeed_isa_available(DETFEED_ISA_AVX2) ? DETFEED_OK
                                                          : DETFEED_ENOTSUPPORTED);
        /* Adjacent, not overlapping: accepted. */
        CHECK_INT(warp_isa(kind, a, 12, 4, 4, a + 48, 6, 2, 3, M, GREY, auto_),
                  DETFEED_OK);
    }
    CHECK_INT(detfeed_warp_affine(a, 12, 4, 4, b, 6, 2, 2, M6, GREY), DETFEED_OK);
    CHECK_INT(detfeed_warp_perspective(a, 12, 4, 4, b, 6, 2, 2, M9, GREY), DETFEED_OK);
    CHECK_INT(detfeed_warp_affine(a, 12, 4, 4, a, 12, 4, 4, M6, GREY), DETFEED_EINVAL);
    CHECK_INT(detfeed_warp_perspective(NULL, 12, 4, 4, b, 6, 2, 2, M9, GREY),
              DETFEED_EINVAL);
    free(big);
}

/* ---- images with padded rows --------------------------------------------- */

typedef struct img {
    uint8_t *px;
    size_t stride;
    int w, h;
} img;

#define PAD_BYTE 0xA5

static img img_new(int w, int h, size_t pad, uint64_t *rng)
{
    img m = {NULL, (size_t)w * 3 + pad, w, h};
    m.px = malloc(m.stride * (size_t)h);
    if (m.px)
        for (size_t i = 0; i < m.stride * (size_t)h; i++)
            m.px[i] = rng ? (uint8_t)tu_rand(rng) : PAD_BYTE;
    return m;
}

static const uint8_t *px_at(const img *m, int x, int y)
{
    return m->px + (size_t)y * m->stride + (size_t)x * 3;
}

/* Bytes of dst that differ from want(x, y), plus padding bytes changed. */
typedef void (*want_fn)(const void *ctx, int x, int y, uint8_t out[3]);

static long count_diff(const img *dst, want_fn want, const void *ctx)
{
    long bad = 0;
    for (int y = 0; y < dst->h; y++) {
        const uint8_t *row = dst->px + (size_t)y * dst->stride;
        for (int x = 0; x < dst->w; x++) {
            uint8_t w[3];
            want(ctx, x, y, w);
            for (int c = 0; c < 3; c++)
                bad += row[3 * x + c] != w[c];
        }
        for (size_t i = (size_t)dst->w * 3; i < dst->stride; i++)
            bad += row[i] != PAD_BYTE;
    }
    return bad;
}

/* ---- identity, integer translations, singular, all outside --------------- */

typedef struct shift_ctx {
    const img *src;
    int tx, ty;
    const uint8_t *border;
} shift_ctx;

static void want_shift(const void *ctx, int x, int y, uint8_t out[3])
{
    const shift_ctx *c = ctx;
    int sx = x - c->tx, sy = y - c->ty;
    const uint8_t *p = sx >= 0 && sx < c->src->w && sy >= 0 && sy < c->src->h
                           ? px_at(c->src, sx, sy)
                           : c->border;
    memcpy(out, p, 3);
}

static void want_const(const void *ctx, int x, int y, uint8_t out[3])
{
    (void)x, (void)y;
    memcpy(out, ctx, 3);
}

/* Runs one matrix on every path into a fresh padded destination; returns
 * the differing bytes summed over the paths (-1 on a failed call). */
static long run_paths(int kind, const img *src, int dw, int dh, const double *M,
                      const uint8_t *border, want_fn want, const void *ctx)
{
    detfeed_isa isa[3];
    int np = paths(isa);
    long bad = 0;
    for (int k = 0; k < np; k++) {
        img dst = img_new(dw, dh, 5, NULL);
        if (dst.px == NULL)
            return -1;
        int rc = warp_isa(kind, src->px, src->stride, src->w, src->h, dst.px,
                          dst.stride, dw, dh, M, border, isa[k]);
        long b = rc == DETFEED_OK ? count_diff(&dst, want, ctx) : -1;
        if (b != 0)
            fprintf(stderr, "  kind %d path %d: rc %d, %ld bytes differ\n", kind,
                    (int)isa[k], rc, b);
        bad = b < 0 || bad < 0 ? -1 : bad + b;
        free(dst.px);
    }
    return bad;
}

static void test_shifts(void)
{
    uint64_t rng = 11;
    const uint8_t odd[3] = {3, 200, 77};
    for (int kind = 0; kind < 2; kind++)
        for (int i = 0; i < 40; i++) {
            int sw = 1 + (int)(tu_rand(&rng) % 70), sh = 1 + (int)(tu_rand(&rng) % 40);
            int dw = i < 8 ? sw : 1 + (int)(tu_rand(&rng) % 70);
            int dh = i < 8 ? sh : 1 + (int)(tu_rand(&rng) % 40);
            /* The first ones are the identity, then shifts both ways. */
            int tx = i < 8 ? 0 : (int)(tu_rand(&rng) % 61) - 30;
            int ty = i < 8 ? 0 : (int)(tu_rand(&rng) % 41) - 20;
            img src = img_new(sw, sh, (size_t)(i % 4) * 3, &rng);
            if (!CHECK(src.px != NULL))
                return;
            const double M[9] = {1, 0, tx, 0, 1, ty, 0, 0, 1};
            const uint8_t *border = i % 2 ? GREY : odd;
            shift_ctx c = {&src, tx, ty, border};
            if (!CHECK_INT(run_paths(kind, &src, dw, dh, M, border, want_shift, &c), 0))
                fprintf(stderr, "  %dx%d -> %dx%d shifted by (%d, %d)\n", sw, sh, dw,
                        dh, tx, ty);
            free(src.px);
        }
}

static void test_singular_and_outside(void)
{
    uint64_t rng = 12;
    for (int kind = 0; kind < 2; kind++)
        for (int i = 0; i < 12; i++) {
            int sw = 1 + (int)(tu_rand(&rng) % 9), sh = 1 + (int)(tu_rand(&rng) % 9);
            int dw = 1 + (int)(tu_rand(&rng) % 40), dh = 1 + (int)(tu_rand(&rng) % 40);
            img src = img_new(sw, sh, 2, &rng);
            if (!CHECK(src.px != NULL))
                return;
            /* Singular: rows proportional (affine), or a zero determinant
             * of the 3x3. Every pixel is source pixel (0, 0): position 0
             * with fraction 0, weights {32767, 0, 0, 1}. */
            const double S[9] = {1, 2, 3, 2, 4, 5, 1, 2, 3};
            const double Z[9] = {0};
            uint8_t p00[3];
            memcpy(p00, src.px, 3);
            CHECK_INT(run_paths(kind, &src, dw, dh, S, GREY, want_const, p00), 0);
            CHECK_INT(run_paths(kind, &src, dw, dh, Z, GREY, want_const, p00), 0);
            /* Far outside: a few pixels, a million pixels, and beyond
             * 2^21 pixels where OpenCV's cvRound gives INT_MIN. */
            const double far[][2] = {{sw + 2.0, 0}, {-1e6, 3}, {5e6, -1e7}, {0, -3e9}};
            for (size_t f = 0; f < sizeof far / sizeof far[0]; f++) {
                const double T[9] = {1, 0, far[f][0] + dw, 0, 1, far[f][1], 0, 0, 1};
                const double U[9] = {0.5, 0, far[f][0] + dw, 0, 2, far[f][1], 0, 0, 1};
                CHECK_INT(run_paths(kind, &src, dw, dh, T, GREY, want_const, GREY), 0);
                CHECK_INT(run_paths(kind, &src, dw, dh, U, GREY, want_const, GREY), 0);
            }
            free(src.px);
        }
}

/* Small cases worked out by hand (values confirmed with cv2 4.6), border
 * 114, every source channel equal.
 *
 * (0, 255) shifted right by 0.3 pixel. Affine: X0 = cvRound(-0.3 * 1024)
 * + 16 = -291, so pixel 0 is at -291 >> 5 = -10 (pixel -1, fraction
 * 22/32) and pixel 1 at 733 >> 5 = 22 (pixel 0, fraction 22/32): (114 * 10
 * * 1024 + 16384) >> 15 = 36 and (255 * 22 * 1024 + 16384) >> 15 = 175 (a
 * float blend would give 178). The perspective route (W = 32) lands on the
 * same positions.
 *
 * (10, 200, 50) shifted by exact ties, which cvRound breaks to even.
 * Affine by 16.5 / 1024: cvRound(-16.5) = -16 (not -17), X0 = 0, every
 * pixel lands on a source pixel: the source again (-17 would give 13, ...).
 * Perspective by 1 / 64: X = 32 x - 0.5 exactly, rounded to 32 x: the
 * source again. */
static void test_hand(void)
{
    static const struct {
        uint8_t src[3], want[3];
        int w;
        double M[9];
    } cases[] = {
        {{0, 255}, {36, 175}, 2, {1, 0, 0.3, 0, 1, 0, 0, 0, 1}},
        {{10, 200, 50}, {10, 200, 50}, 3, {1, 0, 16.5 / 1024, 0, 1, 0, 0, 0, 1}},
        {{10, 200, 50}, {10, 200, 50}, 3, {1, 0, 1.0 / 64, 0, 1, 0, 0, 0, 1}},
    };
    detfeed_isa isa[3];
    int np = paths(isa);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t src[9], want[9];
        int w = cases[i].w;
        for (int x = 0; x < 3 * w; x++) {
            src[x] = cases[i].src[x / 3];
            want[x] = cases[i].want[x / 3];
        }
        for (int kind = 0; kind < 2; kind++) {
            if (i == 1 && kind == PERSPECTIVE)
                continue; /* the affine tie */
            if (i == 2 && kind == AFFINE)
                continue; /* the perspective tie */
            for (int k = 0; k < np; k++) {
                uint8_t out[9] = {0};
                CHECK_INT(warp_isa(kind, src, 9, w, 1, out, 9, w, 1, cases[i].M, GREY,
                                   isa[k]),
                          DETFEED_OK);
                if (!CHECK(memcmp(out, want, (size_t)w * 3) == 0))
                    fprintf(stderr, "  hand case %zu, kind %d, path %d\n", i, kind,
                            (int)isa[k]);
            }
        }
    }
}

/* ---- a per-pixel restatement of OpenCV's arithmetic ---------------------- */

/* cvRound(double) on x86-64: nearest, ties to even; INT_MIN when the
 * rounded value does not fit int32 or is NaN. */
static int64_t ref_round(double v)
{
    double r = nearbyint(v);
    return r >= -2147483648.0 && r <= 2147483647.0 ? (int64_t)r : INT32_MIN;
}

/* v reduced to int32 as two's complement wraps it. */
static int64_t ref_wrap(int64_t v)
{
    int64_t m = ((v % 4294967296LL) + 4294967296LL) % 4294967296LL;
    return m >= 2147483648LL ? m - 4294967296LL : m;
}

static int64_t ref_floor_div(int64_t v, int64_t d)
{
    int64_t q = v / d;
    return q * d > v ? q - 1 : q;
}

typedef struct ref_ctx {
    int kind;
    const img *src;
    double inv[9];
    int dw, dh, bw0;
    const uint8_t *border;
} ref_ctx;

static void ref_invert(int kind, const double *m, double *t)
{
    if (kind == AFFINE) { /* cv::warpAffine */
        double D = m[0] * m[4] - m[1] * m[3];
        D = D != 0 ? 1. / D : 0;
        double A11 = m[4] * D, A22 = m[0] * D;
        t[0] = A11;
        t[1] = m[1] * -D;
        t[3] = m[3] * -D;
        t[4] = A22;
        t[2] = -t[0] * m[2] - t[1] * m[5];
        t[5] = -t[3] * m[2] - t[4] * m[5];
        return;
    }
    /* cv::invert, DECOMP_LU, 3x3 double */
    double d = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
               m[2] * (m[3] * m[7] - m[4] * m[6]);
    if (d == 0) {
        memset(t, 0, 9 * sizeof *t);
        return;
    }
    d = 1. / d;
    t[0] = (m[4] * m[8] - m[5] * m[7]) * d;
    t[1] = (m[2] * m[7] - m[1] * m[8]) * d;
    t[2] = (m[1] * m[5] - m[2] * m[4]) * d;
    t[3] = (m[5] * m[6] - m[3] * m[8]) * d;
    t[4] = (m[0] * m[8] - m[2] * m[6]) * d;
    t[5] = (m[2] * m[3] - m[0] * m[5]) * d;
    t[6] = (m[3] * m[7] - m[4] * m[6]) * d;
    t[7] = (m[1] * m[6] - m[0] * m[7]) * d;
    t[8] = (m[0] * m[4] - m[1] * m[3]) * d;
}

/* Source position of destination (x, y) in 1/32 pixel. */
static void ref_position(const ref_ctx *c, int x, int y, int64_t *X, int64_t *Y)
{
    const double *t = c->inv;
    if (c->kind == AFFINE) {
        int64_t X0 = ref_wrap(ref_round((t[1] * y + t[2]) * 1024) + 16);
        int64_t Y0 = ref_wrap(ref_round((t[4] * y + t[5]) * 1024) + 16);
        *X = ref_floor_div(ref_wrap(X0 + ref_round(t[0] * x * 1024)), 32);
        *Y = ref_floor_div(ref_wrap(Y0 + ref_round(t[3] * x * 1024)), 32);
        return;
    }
    /* Column blocks of bw0 pixels; the block start in double, then the
     * offset i within the block. A NaN is INT_MIN (OpenCV's SSE4.1 loop;
     * its scalar tail gives INT_MAX, equally outside every source). */
    int xb = x - x % c->bw0, i = x % c->bw0;
    double X0 = t[0] * xb + t[1] * y + t[2];
    double Y0 = t[3] * xb + t[4] * y + t[5];
    double W0 = t[6] * xb + t[7] * y + t[8];
    double W = W0 + t[6] * i;
    W = W != 0 ? 32 / W : 0;
    double f[2] = {(X0 + t[0] * i) * W, (Y0 + t[3] * i) * W};
    int64_t out[2];
    for (int k = 0; k < 2; k++) {
        if (isnan(f[k]))
            out[k] = INT32_MIN;
        else
            out[k] = ref_round(fmin(fmax(f[k], -2147483648.0), 2147483647.0));
    }
    *X = out[0];
    *Y = out[1];
}

static int ref_sat16(int64_t v)
{
    return v < -32768 ? -32768 : v > 32767 ? 32767 : (int)v;
}

static void ref_pixel(const void *ctx, int x, int y, uint8_t out[3])
{
    const ref_ctx *c = ctx;
    int64_t X, Y;
    ref_position(c, x, y, &X, &Y);
    int sx = ref_sat16(ref_floor_div(X, 32)), sy = ref_sat16(ref_floor_div(Y, 32));
    int fx = (int)(X - ref_floor_div(X, 32) * 32),
        fy = (int)(Y - ref_floor_div(Y, 32) * 32);
    int W = c->src->w, H = c->src->h;
    if (sx >= W || sx + 1 < 0 || sy >= H || sy + 1 < 0) {
        memcpy(out, c->border, 3);
        return;
    }
    /* initInterTab2D: products of the 1-D weights times 32768, entry 0
     * saturated to 32767 and fixed up on the bottom-right weight. */
    int w[4] = {(32 - fy) * (32 - fx) * 32, (32 - fy) * fx * 32, fy * (32 - fx) * 32,
                fy * fx * 32};
    if (fx == 0 && fy == 0)
        w[0] = 32767, w[3] = 1;
    for (int ch = 0; ch < 3; ch++) {
        int sum = 0;
        for (int k = 0; k < 4; k++) {
            int tx = sx + (k & 1), ty = sy + (k >> 1);
            int v = tx >= 0 && tx < W && ty >= 0 && ty < H ? px_at(c->src, tx, ty)[ch]
                                                           : c->border[ch];
            sum += v * w[k];
        }
        int r = (sum + (1 << 14)) >> 15;
        out[ch] = (uint8_t)(r > 255 ? 255 : r);
    }
}

/* ---- random matrices ----------------------------------------------------- */

static float to_f32(double v)
{
    return (float)v;
}

/* A random forward matrix: rotation, scale, shear, translation (sometimes
 * far outside), for perspective small or large p; sometimes every entry
 * rounded to float32 as Ultralytics builds it. */
static void random_matrix(uint64_t *rng, int kind, int sw, int sh, int dw, int dh,
                          double M[9])
{
    double a = tu_uniform(rng, -3.141592653589793, 3.141592653589793),
           s = tu_uniform(rng, 0.25, 2.0);
    double shx = tu_uniform(rng, -0.3, 0.3), shy = tu_uniform(rng, -0.3, 0.3);
    double ca = cos(a) * s, sa = sin(a) * s;
    M[0] = ca + shx * sa;
    M[1] = sa + shx * ca;
    M[3] = -sa + shy * ca;
    M[4] = ca - shy * sa;
    /* Map the source centre near the destination centre, then move. */
    double cx = sw / 2.0, cy = sh / 2.0;
    M[2] = dw / 2.0 - (M[0] * cx + M[1] * cy) + tu_uniform(rng, -0.3, 0.3) * dw;
    M[5] = dh / 2.0 - (M[3] * cx + M[4] * cy) + tu_uniform(rng, -0.3, 0.3) * dh;
    uint64_t r = tu_rand(rng) % 16;
    if (r == 0)
        M[2] += tu_uniform(rng, -1, 1) * (sw + dw) * 2;
    if (r == 1)
        M[5] += tu_uniform(rng, -3e6, 3e6);
    if (r == 2) /* pure scale and translation, as Ultralytics' default */
        M[1] = M[3] = 0, M[0] = M[4] = tu_uniform(rng, 0.5, 1.5);
    M[6] = M[7] = 0;
    M[8] = 1;
    if (kind == PERSPECTIVE) {
        double p = (r % 3 == 0) ? 0.02 : 0.001;
        M[6] = tu_uniform(rng, -p, p);
        M[7] = tu_uniform(rng, -p, p);
    }
    if (kind == PERSPECTIVE && r == 5) {
        /* The inverse's W crosses zero in the middle of the destination:
         * build that inverse, and give its inverse as M. */
        double inv[9];
        memcpy(inv, M, sizeof inv);
        inv[8] = -(inv[6] * dw + inv[7] * dh) / 2;
        ref_invert(PERSPECTIVE, inv, M);
    }
    if (tu_rand(rng) % 3 == 0)
        for (int k = 0; k < 9; k++)
            M[k] = to_f32(M[k]);
}

static long check_case(uint64_t *rng, int kind, int sw, int sh, int dw, int dh,
                       const double *M, long *bytes)
{
    uint8_t border[3] = {114, 114, 114};
    if (tu_rand(rng) % 2)
        for (int c = 0; c < 3; c++)
            border[c] = (uint8_t)tu_rand(rng);
    img src = img_new(sw, sh, tu_rand(rng) % 3 ? 0 : 1 + tu_rand(rng) % 9, rng);
    if (src.px == NULL)
        return -1;
    ref_ctx c = {kind, &src, {0}, dw, dh, 0, border};
    ref_invert(kind, M, c.inv);
    int bh0 = dh < 16 ? dh : 16;
    c.bw0 = 1024 / bh0 < dw ? 1024 / bh0 : dw;
    long bad = run_paths(kind, &src, dw, dh, M, border, ref_pixel, &c);
    *bytes += (long)dw * dh * 3;
    free(src.px);
    return bad;
}

static void test_random(void)
{
    uint64_t rng = 2024;
    long cases = 0, failed = 0, bytes = 0;
    for (int i = 0; i < 4000; i++) {
        int kind = i % 2, lim = (i / 2) % 4 == 0 ? 6 : 90;
        int sw = 1 + (int)(tu_rand(&rng) % lim), sh = 1 + (int)(tu_rand(&rng) % lim);
        int dw = 1 + (int)(tu_rand(&rng) % lim), dh = 1 + (int)(tu_rand(&rng) % lim);
        if (i % 7 == 3) /* wide and low: perspective blocks wider than 64 */
            dw = 100 + (int)(tu_rand(&rng) % 900), dh = 1 + (int)(tu_rand(&rng) % 15);
        double M[9];
        random_matrix(&rng, kind, sw, sh, dw, dh, M);
        cases++;
        long bad = check_case(&rng, kind, sw, sh, dw, dh, M, &bytes);
        if (bad != 0) {
            failed++;
            fprintf(stderr, "  case %d: kind %d, %dx%d -> %dx%d: %ld\n", i, kind, sw,
                    sh, dw, dh, bad);
        }
    }
    /* Ultralytics-like: a 1280 mosaic canvas to 640, and 640x480 to 640. */
    const int big[][4] = {{1280, 1280, 640, 640}, {640, 480, 640, 640}};
    for (int i = 0; i < 8; i++) {
        int kind = i % 2;
        const int *g = big[(i / 2) % 2];
        double M[9];
        random_matrix(&rng, kind, g[0], g[1], g[2], g[3], M);
        cases++;
        failed += check_case(&rng, kind, g[0], g[1], g[2], g[3], M, &bytes) != 0;
    }
    printf(
        "random matrices: %ld cases (each on every code path), %ld bytes, %ld failed\n",
        cases, bytes, failed);
    CHECK_INT(failed, 0);
}

/* Perspective matrices whose positions depend on OpenCV's column blocks
 * (64 columns for a 640x640 destination; found by search against cv2, see
 * tests/oracle/test_warp_oracle.py): every path must match the reference
 * with blocks of 64, and the reference with blocks of 32 or one block per
 * row must differ from it, which shows that the check can tell. */
static void test_blocks(void)
{
    static const double mats[][9] = {
        {0.6, 0.2, 4.7, -0.2, 0.6, 5.1, 5e-05, -5e-05, 1.0},
        {0.5, 0.0, 2.1, -0.2, 0.5, 3.2, 8e-05, 8e-05, 1.0},
        {0.5, -0.2, 9.4, -0.30000000000000004, 0.5, 8.8, -8e-05, -4e-05, 1.0},
        {1.1, -0.2, 2.6, -0.2, 1.1, -5.1, -1e-05, 4e-05, 1.0},
    };
    uint64_t rng = 64;
    img src = img_new(700, 700, 0, &rng);
    if (!CHECK(src.px != NULL))
        return;
    long other[2] = {0, 0};
    for (size_t m = 0; m < sizeof mats / sizeof mats[0]; m++) {
        ref_ctx c = {PERSPECTIVE, &src, {0}, 640, 640, 64, GREY};
        ref_invert(PERSPECTIVE, mats[m], c.inv);
        CHECK_INT(run_paths(PERSPECTIVE, &src, 640, 640, mats[m], GREY, ref_pixel, &c),
                  0);
        img dst = img_new(640, 640, 0, NULL);
        if (!CHECK(dst.px != NULL))
            break;
        CHECK_INT(detfeed_warp_perspective(src.px, src.stride, 700, 700, dst.px,
                                           dst.stride, 640, 640, mats[m], GREY),
                  DETFEED_OK);
        const int widths[2] = {32, 640};
        for (int k = 0; k < 2; k++) {
            c.bw0 = widths[k];
            other[k] += count_diff(&dst, ref_pixel, &c);
        }
        free(dst.px);
    }
    printf("column blocks: blocks of 32 differ in %ld bytes, one block per row in "
           "%ld\n",
           other[0], other[1]);
    CHECK(other[0] > 0 && other[1] > 0);
    free(src.px);
}

/* ==== OpenCV 5.x: detfeed_warp_affine_cv, detfeed_warp_perspective_cv ==== */

/* The stacks the 5.x tests run: 5.0's AVX2 and SSE builds, 5.1 with IPP
 * (its default; IPP's AVX2 and SSE4.2 code) and without. */
static const detfeed_cv STACKS5[] = {
    {DETFEED_CV_5_0, DETFEED_CV_CPU_AVX2, 0}, {DETFEED_CV_5_0, DETFEED_CV_CPU_SSE, 0},
    {DETFEED_CV_5_1, DETFEED_CV_CPU_AVX2, 1}, {DETFEED_CV_5_1, DETFEED_CV_CPU_AVX2, 0},
    {DETFEED_CV_5_1, DETFEED_CV_CPU_SSE, 0},  {DETFEED_CV_5_1, DETFEED_CV_CPU_SSE, 1},
};
#define NSTACKS5 (int)(sizeof STACKS5 / sizeof STACKS5[0])

static int warp5_isa(int kind, const uint8_t *src, size_t ss, int sw, int sh,
                     uint8_t *dst, size_t ds, int dw, int dh, const double *M,
                     const uint8_t *border, const detfeed_cv *cv, detfeed_isa isa)
{
    if (kind == AFFINE)
        return detfeed__warp5_affine_isa(src, ss, sw, sh, dst, ds, dw, dh, M, border,
                                         cv, isa);
    return detfeed__warp5_perspective_isa(src, ss, sw, sh, dst, ds, dw, dh, M, border,
                                          cv, isa);
}

static void test_cv_arguments(void)
{
    uint8_t a[8 * 8 * 3] = {0}, b[8 * 8 * 3] = {0}, c[8 * 8 * 3] = {0};
    const double M6[6] = {1, 0, 0.5, 0, 1, 0}, M9[9] = {1, 0, 0.5, 0, 1, 0, 0, 0, 1};
    const detfeed_cv ok = {DETFEED_CV_5_1, DETFEED_CV_CPU_AUTO, 1};
    const detfeed_cv bad_version = {(detfeed_cv_version)4, DETFEED_CV_CPU_AUTO, 0};
    const detfeed_cv bad_cpu = {DETFEED_CV_5_0, (detfeed_cv_cpu)4, 0};
    const detfeed_isa auto_ = DETFEED_ISA_AUTO;
    for (int kind = 0; kind < 2; kind++) {
        const double *M = kind == AFFINE ? M6 : M9;
        CHECK_INT(warp5_isa(kind, a, 12, 4, 4, b, 6, 2, 2, M, GREY, NULL, auto_),
                  DETFEED_EINVAL);
        CHECK_INT(
            warp5_isa(kind, a, 12, 4, 4, b, 6, 2, 2, M, GREY, &bad_version, auto_),
            DETFEED_EINVAL);
        CHECK_INT(warp5_isa(kind, a, 12, 4, 4, b, 6, 2, 2, M, GREY, &bad_cpu, auto_),
                  DETFEED_EINVAL);
        /* The checks of detfeed_warp_affine, in every stack. */
        for (int s = 0; s < NSTACKS5; s++) {
            const detfeed_cv *cv = &STACKS5[s];
            CHECK_INT(warp5_isa(kind, NULL, 12, 4, 4, b, 6, 2, 2, M, GREY, cv, auto_),
                      DETFEED_EINVAL);
            CHECK_INT(warp5_isa(kind, a, 12, 4, 4, b, 6, 2, 2, NULL, GREY, cv, auto_),
                      DETFEED_EINVAL);
            CHECK_INT(warp5_isa(kind, a, 12, 4, 4, b, 6, 2, 2, M, NULL, cv, auto_),
                      DETFEED_EINVAL);
            CHECK_INT(warp5_isa(kind, a, 12, 4, 0, b, 6, 2, 2, M, GREY, cv, auto_),
                      DETFEED_EINVAL);
            CHECK_INT(warp5_isa(kind, a, 11, 4, 4, b, 6, 2, 2, M, GREY, cv, auto_),
                      DETFEED_EINVAL);
            CHECK_INT(warp5_isa(kind, a, 12, 4, 4, a + 47, 6, 2, 2, M, GREY, cv, auto_),
                      DETFEED_EINVAL);
            CHECK_INT(
                warp5_isa(kind, a, 32767 * 3, 32767, 1, b, 6, 2, 2, M, GREY, cv, auto_),
                DETFEED_EINVAL);
            CHECK_INT(warp5_isa(kind, a, 12, 4, 4, b, 6, 2, 2, M, GREY, cv,
                                DETFEED_ISA_AVX512),
                      DETFEED_ENOTSUPPORTED);
            CHECK_INT(
                warp5_isa(kind, a, 12, 4, 4, b, 6, 2, 2, M, GREY, cv, (detfeed_isa)9),
                DETFEED_EINVAL);
            CHECK_INT(warp5_isa(kind, a, 12, 4, 4, b, 6, 2, 2, M, GREY, cv, auto_),
                      DETFEED_OK);
        }
    }
    CHECK_INT(detfeed_warp_affine_cv(a, 12, 4, 4, b, 6, 2, 2, M6, GREY, &ok),
              DETFEED_OK);
    CHECK_INT(detfeed_warp_perspective_cv(a, 12, 4, 4, b, 6, 2, 2, M9, GREY, &ok),
              DETFEED_OK);
    CHECK_INT(detfeed_warp_affine_cv(a, 12, 4, 4, b, 6, 2, 2, M6, GREY, NULL),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_warp_perspective_cv(a, 12, 4, 4, b, 6, 2, 2, M9, GREY, NULL),
              DETFEED_EINVAL);

    /* DETFEED_CV_4 is the fixed-point path, whatever cpu and ipp say. */
    uint64_t rng = 40;
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = (uint8_t)tu_rand(&rng);
    const double R[9] = {0.9, 0.3, -1.2, -0.25, 1.1, 0.7, 0.01, -0.02, 1};
    const detfeed_cv v4 = {DETFEED_CV_4, DETFEED_CV_CPU_SSE, 1};
    CHECK_INT(detfeed_warp_affine(a, 24, 8, 8, b, 21, 7, 9, R, GREY), DETFEED_OK);
    CHECK_INT(detfeed_warp_affine_cv(a, 24, 8, 8, c, 21, 7, 9, R, GREY, &v4),
              DETFEED_OK);
    CHECK(memcmp(b, c, 21 * 9) == 0);
    CHECK_INT(detfeed_warp_perspective(a, 24, 8, 8, b, 21, 7, 9, R, GREY), DETFEED_OK);
    CHECK_INT(detfeed_warp_perspective_cv(a, 24, 8, 8, c, 21, 7, 9, R, GREY, &v4),
              DETFEED_OK);
    CHECK(memcmp(b, c, 21 * 9) == 0);
    /* Debian's 4.6 build warps as the 4.x wheels do. */
    const detfeed_cv deb = {DETFEED_CV_4_DEBIAN, DETFEED_CV_CPU_AVX2, 0};
    CHECK_INT(detfeed_warp_affine_cv(a, 24, 8, 8, c, 21, 7, 9, R, GREY, &deb),
              DETFEED_OK);
    CHECK_INT(detfeed_warp_affine(a, 24, 8, 8, b, 21, 7, 9, R, GREY), DETFEED_OK);
    CHECK(memcmp(b, c, 21 * 9) == 0);
}

/* Cases worked out by hand: a 2x1 source, every channel equal, shifted
 * right by 0.3 pixel, border 114. The inverse's M2 = -0.3 rounds to the
 * float -0.300000012, so pixel 0 is at -0.300000012 (tap -1, outside, and
 * tap 0; fraction 0.699999988) and pixel 1 at 0.699999988 (taps 0 and 1).
 * 1 pixel high: the lower taps are the border, the vertical lerp keeps
 * the top value (fraction 0). Both pixels lie in the scalar tail (no whole
 * vector block), in every build and stack.
 *
 * (0, 255): pixel 1 is 0.699999988 * 255 = 178.49999696, fused or not
 * rounded to the float 178.5, a tie that rounds to even: 178 (4.x: 175,
 * see test_hand). Pixel 0: 114 - 0.699999988 * 114 = 34.2000014: 34.
 * (46, 1): pixel 1 is 46 - 0.699999988 * 45: fused, 14.5000005 rounds to
 * the float 14.500000954 and then to 15; unfused, the product rounds to
 * 31.5 first, 14.5 is a tie, 14. Pixel 0: 114 - 0.699999988 * 68 =
 * 66.4000008: 66. */
static void test_cv_hand(void)
{
    static const struct {
        uint8_t src[2], fused[2], unfused[2];
    } cases[] = {{{0, 255}, {34, 178}, {34, 178}}, {{46, 1}, {66, 15}, {66, 14}}};
    const double M[9] = {1, 0, 0.3, 0, 1, 0, 0, 0, 1};
    detfeed_isa isa[3];
    int np = paths(isa);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t src[6];
        for (int x = 0; x < 6; x++)
            src[x] = cases[i].src[x / 3];
        for (int s = 0; s < NSTACKS5; s++) {
            const detfeed_cv *cv = &STACKS5[s];
            bool fused = detfeed_cv_cpu_resolve(cv->cpu) != DETFEED_CV_CPU_SSE;
            const uint8_t *want = fused ? cases[i].fused : cases[i].unfused;
            for (int kind = 0; kind < 2; kind++)
                for (int k = 0; k < np; k++) {
                    uint8_t out[6] = {0};
                    CHECK_INT(warp5_isa(kind, src, 6, 2, 1, out, 6, 2, 1, M, GREY, cv,
                                        isa[k]),
                              DETFEED_OK);
                    for (int x = 0; x < 6; x++)
                        if (!CHECK_INT(out[x], want[x / 3]))
                            fprintf(stderr, "  hand case %zu, stack %d, kind %d\n", i,
                                    s, kind);
                }
        }
    }
}

/* ---- captured from OpenCV --------------------------------------------------- */

/* Outputs of cv2.warpAffine / cv2.warpPerspective (INTER_LINEAR,
 * BORDER_CONSTANT, border 114) captured with Debian's cv2 4.6.0 and the
 * opencv-python-headless wheels 5.0.0.93 (default, and setUseOptimized
 * (False): the SSE build) and 5.1.0.95 (default: IPP; ipp.setUseIPP(False);
 * setUseOptimized(False)) on an AVX-512 CPU. The source is w x h x 3 bytes
 * of tu_rand from state 0x5eed, one byte (the low 8 bits) per call. Each
 * output is pinned by the first 16 hex digits of its sha256; `byte` is one
 * byte whose value differs between 4.x, 5.0 and 5.1 (or between builds),
 * given per stack in the order of `sha`. */
enum { CAP_4, CAP_50_AVX2, CAP_50_SSE, CAP_51_IPP, CAP_51_AVX2, CAP_51_SSE, NCAP };

static const detfeed_cv CAP_STACKS[NCAP] = {
    {DETFEED_CV_4, DETFEED_CV_CPU_AUTO, 0},   {DETFEED_CV_5_0, DETFEED_CV_CPU_AVX2, 0},
    {DETFEED_CV_5_0, DETFEED_CV_CPU_SSE, 0},  {DETFEED_CV_5_1, DETFEED_CV_CPU_AVX2, 1},
    {DETFEED_CV_5_1, DETFEED_CV_CPU_AVX2, 0}, {DETFEED_CV_5_1, DETFEED_CV_CPU_SSE, 0},
};

static const struct {
    const char *name;
    int kind, size[4]; /* source w, h, destination w, h */
    double M[9];
    const char *sha[NCAP];
    int byte[2];
    uint8_t value[2][NCAP];
} CAPTURED[] = {
    /* rotation: 4.x 228, 5.0 AVX2 229, 5.0 SSE and 5.1 IPP 230 (column 33,
     * in the scalar tail of both builds) */
    {"rotate",
     AFFINE,
     {48, 40, 37, 29},
     {0.8964, 0.1077, -2.972, -0.1077, 0.8964, 4.5},
     {"51f7c9f6fe2174b4", "da27c9729af5e5d5", "9b8acec0419a55b0", "9b8acec0419a55b0",
      "da27c9729af5e5d5", "9b8acec0419a55b0"},
     {2652, 2652},
     {{228, 229, 230, 230, 229, 230}, {228, 229, 230, 230, 229, 230}}},
    /* perspective: 4.x 107, 5.0 108, 5.1 IPP 109; and a byte where only
     * the SSE build differs */
    {"perspective",
     PERSPECTIVE,
     {48, 40, 37, 29},
     {0.8956, 0.0924, -2.996, -0.0924, 0.8956, 4.5, 0.001, -0.0007, 1.0},
     {"4dc798d3e0c34e3d", "b2cd35365fd4cf9b", "c4bb0d23d3888e6b", "f0dbd4a732c3e2dc",
      "b2cd35365fd4cf9b", "c4bb0d23d3888e6b"},
     {2796, 918},
     {{107, 108, 108, 109, 108, 108}, {131, 131, 130, 130, 131, 130}}},
    /* scale and translation (IPP's double positions): 4.x 197, 5.0 AVX2
     * 199, 5.0 SSE and 5.1 IPP 198 */
    {"scale",
     AFFINE,
     {48, 40, 37, 29},
     {0.7021, 0.0, -1.2923, 0.0, 0.7514, 2.0951},
     {"7288f773743c44aa", "16d9e953872841ee", "367152acc0f94d77", "367152acc0f94d77",
      "16d9e953872841ee", "367152acc0f94d77"},
     {1293, 1293},
     {{197, 199, 198, 198, 199, 198}, {197, 199, 198, 198, 199, 198}}},
    /* w = 1 - x / 8 is 0 in column 8: a NaN position in a vector block of
     * 16 with pixels inside stores 0 in 5.0 and 255 in 5.1; in the SSE
     * build's block [8, 16) every pixel is outside: the border; IPP: the
     * border; 4.x samples source pixel (0, 0) */
    {"w zero",
     PERSPECTIVE,
     {6, 5, 20, 3},
     {1, 0, 0, 0, 1, 0, 0.125, 0, 1},
     {"1a0970015450bc7e", "a43e4597d836e8cd", "c14ec59abddc8718", "c14ec59abddc8718",
      "71a5d89f7982d431", "c14ec59abddc8718"},
     {24, 24},
     {{180, 0, 114, 114, 255, 114}, {180, 0, 114, 114, 255, 114}}},
};

static void test_cv_captured(void)
{
    detfeed_isa isa[3];
    int np = paths(isa);
    for (size_t i = 0; i < sizeof CAPTURED / sizeof CAPTURED[0]; i++) {
        const int sw = CAPTURED[i].size[0], sh = CAPTURED[i].size[1];
        const int dw = CAPTURED[i].size[2], dh = CAPTURED[i].size[3];
        uint8_t *src = malloc((size_t)sw * sh * 3), *dst = malloc((size_t)dw * dh * 3);
        if (!CHECK(src != NULL && dst != NULL)) {
            free(src);
            free(dst);
            return;
        }
        uint64_t st = 0x5eed;
        for (size_t k = 0; k < (size_t)sw * sh * 3; k++)
            src[k] = (uint8_t)tu_rand(&st);
        for (int s = 0; s < NCAP; s++)
            for (int k = 0; k < np; k++) {
                char hex[65];
                memset(dst, 0, (size_t)dw * dh * 3);
                CHECK_INT(warp5_isa(CAPTURED[i].kind, src, (size_t)sw * 3, sw, sh, dst,
                                    (size_t)dw * 3, dw, dh, CAPTURED[i].M, GREY,
                                    &CAP_STACKS[s], isa[k]),
                          DETFEED_OK);
                tu_sha256_hex(dst, (size_t)dw * dh * 3, hex);
                bool ok = CHECK(strncmp(hex, CAPTURED[i].sha[s], 16) == 0);
                for (int b = 0; b < 2; b++)
                    ok &= CHECK_INT(dst[CAPTURED[i].byte[b]], CAPTURED[i].value[b][s]);
                if (!ok)
                    fprintf(stderr, "  captured %s, stack %d, path %d: sha %.16s\n",
                            CAPTURED[i].name, s, (int)isa[k], hex);
            }
        free(src);
        free(dst);
    }
}

/* ---- a per-pixel restatement of the 5.x arithmetic --------------------------- */

typedef struct ref5_ctx {
    int kind;
    const img *src;
    double inv[9];
    float f[9];
    int dw;
    int model; /* 0 float kernel, 1 IPP scale and translation, 2 IPP other */
    bool fused;
    bool yfirst; /* lerp along y, then x (IPP other) */
    int uf;
    uint8_t nan_byte;
    const uint8_t *border;
} ref5_ctx;

static float ref5_fma(const ref5_ctx *c, float a, float b, float d)
{
    return c->fused ? fmaf(a, b, d) : a * b + d;
}

/* The float kernel's (sx, sy) of pixel (x, y): vector blocks, then the
 * scalar tail. */
static void ref5_float_pos(const ref5_ctx *c, int x, int y, float *sx, float *sy)
{
    const float *m = c->f, xf = (float)x, yf = (float)y;
    float v[3];
    for (int r = 0; r < 3; r++) {
        const float *row = m + 3 * r;
        if (x < c->dw - c->dw % c->uf) {
            float rowterm = yf * row[1] + row[2];
            v[r] = ref5_fma(c, row[0], xf, rowterm);
        } else {
            float t =
                c->fused ? fmaf(xf, row[0], yf * row[1]) : xf * row[0] + yf * row[1];
            v[r] = t + row[2];
        }
    }
    *sx = c->kind == PERSPECTIVE ? v[0] / v[2] : v[0];
    *sy = c->kind == PERSPECTIVE ? v[1] / v[2] : v[1];
}

static void ref5_ipp_pos(const ref5_ctx *c, int x, int y, double *sx, double *sy)
{
    const double *t = c->inv;
    *sx = t[0] * x + t[1] * y + t[2];
    *sy = t[3] * x + t[4] * y + t[5];
    if (c->kind == PERSPECTIVE) {
        double w = t[6] * x + t[7] * y + t[8];
        *sx /= w;
        *sy /= w;
    }
}

/* All four taps of a position outside (or the position not finite). */
static bool ref5_outside(const ref5_ctx *c, double sx, double sy)
{
    return !(sx >= -1 && sx < c->src->w && sy >= -1 && sy < c->src->h);
}

static void ref5_pixel(const void *ctx, int x, int y, uint8_t out[3])
{
    const ref5_ctx *c = ctx;
    double sx, sy, ax, ay;
    if (c->model == 0) {
        float fx, fy;
        ref5_float_pos(c, x, y, &fx, &fy);
        sx = fx, sy = fy;
        ax = fx - floorf(fx), ay = fy - floorf(fy);
    } else {
        /* IPP's general kernel rounds the position of a pixel with all four
         * taps inside to float; the others keep the double. */
        ref5_ipp_pos(c, x, y, &sx, &sy);
        if (c->model == 2 && sx >= 0 && sx < c->src->w - 1 && sy >= 0 &&
            sy < c->src->h - 1)
            sx = (float)sx, sy = (float)sy;
        ax = (float)(sx - floor(sx)), ay = (float)(sy - floor(sy));
    }
    if (!isfinite(sx) || !isfinite(sy)) {
        /* In a vector block of the float kernel with a pixel not wholly
         * outside: OpenCV's lerp of a NaN. Otherwise the border. */
        bool mixed = false;
        int b0 = x - x % c->uf;
        if (c->model == 0 && x < c->dw - c->dw % c->uf)
            for (int k = b0; k < b0 + c->uf; k++) {
                float kx, ky;
                ref5_float_pos(c, k, y, &kx, &ky);
                mixed |= !ref5_outside(c, kx, ky);
            }
        for (int ch = 0; ch < 3; ch++)
            out[ch] = mixed ? c->nan_byte : c->border[ch];
        return;
    }
    if (ref5_outside(c, sx, sy)) {
        memcpy(out, c->border, 3);
        return;
    }
    int ix = (int)floor(sx), iy = (int)floor(sy);
    for (int ch = 0; ch < 3; ch++) {
        float p[4];
        for (int k = 0; k < 4; k++) {
            int tx = ix + (k & 1), ty = iy + (k >> 1);
            p[k] = tx >= 0 && tx < c->src->w && ty >= 0 && ty < c->src->h
                       ? px_at(c->src, tx, ty)[ch]
                       : c->border[ch];
        }
        /* IPP's scale kernel: along y first where one x tap and both y
         * taps are inside; where one y tap is inside and y is flipped,
         * along x, then along y from the bottom row at 1 - ay. */
        bool yin = iy >= 0 && iy < c->src->h - 1,
             yedge = iy == -1 || iy == c->src->h - 1;
        bool yfirst =
            c->yfirst || (c->model == 1 && (ix == -1 || ix == c->src->w - 1) && yin);
        bool up = c->model == 1 && !yfirst && yedge && c->inv[4] < 0;
        float v;
        if (yfirst) {
            float v0 = ref5_fma(c, (float)ay, p[2] - p[0], p[0]);
            float v1 = ref5_fma(c, (float)ay, p[3] - p[1], p[1]);
            v = nearbyintf(ref5_fma(c, (float)ax, v1 - v0, v0));
        } else {
            float v0 = ref5_fma(c, (float)ax, p[1] - p[0], p[0]);
            float v1 = ref5_fma(c, (float)ax, p[3] - p[2], p[2]);
            if (up)
                v = nearbyintf(ref5_fma(c, 1.0f - (float)ay, v0 - v1, v1));
            else
                v = nearbyintf(ref5_fma(c, (float)ay, v1 - v0, v0));
        }
        out[ch] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

/* Whether some destination position m * i + c (0 <= i < n) lies in [0,
 * size - 2]: IPP's scale kernel needs one per axis. */
static bool ref5_scale_axis(double m, double c, int n, int size)
{
    for (int i = 0; i < n; i++)
        if (m * i + c >= 0 && m * i + c <= size - 2)
            return true;
    return false;
}

static void ref5_setup(ref5_ctx *c, int kind, const img *src, const double *M, int dw,
                       int dh, const detfeed_cv *cv, const uint8_t *border)
{
    *c = (ref5_ctx){.kind = kind, .src = src, .dw = dw, .border = border};
    c->inv[8] = 1;
    ref_invert(kind, M, c->inv);
    for (int k = 0; k < 9; k++)
        c->f[k] = (float)c->inv[k];
    c->nan_byte = cv->version == DETFEED_CV_5_1 ? 255 : 0;
    /* OpenCV's and IPP's SSE code round product and sum */
    c->fused = detfeed_cv_cpu_resolve(cv->cpu) != DETFEED_CV_CPU_SSE;
    c->uf = c->fused ? 16 : 8;
    if (cv->version == DETFEED_CV_5_1 && cv->ipp && src->w > 1 && src->h > 1) {
        bool scale = kind == AFFINE && c->inv[1] == 0 && c->inv[3] == 0 &&
                     ref5_scale_axis(c->inv[0], c->inv[2], dw, src->w) &&
                     ref5_scale_axis(c->inv[4], c->inv[5], dh, src->h);
        c->model = scale ? 1 : 2;
        c->yfirst = !scale;
    }
}

/* One matrix, every stack, every code path against the restatement. */
static long check5_case(uint64_t *rng, int kind, int sw, int sh, int dw, int dh,
                        const double *M, long *bytes)
{
    uint8_t border[3] = {114, 114, 114};
    if (tu_rand(rng) % 2)
        for (int c = 0; c < 3; c++)
            border[c] = (uint8_t)tu_rand(rng);
    img src = img_new(sw, sh, tu_rand(rng) % 3 ? 0 : 1 + tu_rand(rng) % 9, rng);
    if (src.px == NULL)
        return -1;
    detfeed_isa isa[3];
    int np = paths(isa);
    long bad = 0;
    for (int s = 0; s < NSTACKS5; s++) {
        ref5_ctx c;
        ref5_setup(&c, kind, &src, M, dw, dh, &STACKS5[s], border);
        for (int k = 0; k < np; k++) {
            img dst = img_new(dw, dh, 5, NULL);
            if (dst.px == NULL)
                break;
            int rc = warp5_isa(kind, src.px, src.stride, sw, sh, dst.px, dst.stride, dw,
                               dh, M, border, &STACKS5[s], isa[k]);
            long b = rc == DETFEED_OK ? count_diff(&dst, ref5_pixel, &c) : -1;
            if (b != 0)
                fprintf(stderr, "  stack %d path %d: rc %d, %ld bytes differ\n", s,
                        (int)isa[k], rc, b);
            bad = b < 0 || bad < 0 ? -1 : bad + b;
            *bytes += (long)dw * dh * 3;
            free(dst.px);
        }
    }
    free(src.px);
    return bad;
}

static void test_cv_random(void)
{
    uint64_t rng = 5050;
    long cases = 0, failed = 0, bytes = 0;
    for (int i = 0; i < 600; i++) {
        int kind = i % 2, lim = (i / 2) % 4 == 0 ? 6 : 70;
        int sw = 1 + (int)(tu_rand(&rng) % lim), sh = 1 + (int)(tu_rand(&rng) % lim);
        int dw = 1 + (int)(tu_rand(&rng) % lim), dh = 1 + (int)(tu_rand(&rng) % lim);
        double M[9];
        random_matrix(&rng, kind, sw, sh, dw, dh, M);
        if (i % 5 == 2 && kind == AFFINE) /* scale and translation */
            M[1] = M[3] = 0;
        cases++;
        long bad = check5_case(&rng, kind, sw, sh, dw, dh, M, &bytes);
        if (bad != 0) {
            failed++;
            fprintf(stderr, "  5.x case %d: kind %d, %dx%d -> %dx%d: %ld\n", i, kind,
                    sw, sh, dw, dh, bad);
        }
    }
    /* Non-finite positions: NaN and infinite entries, w == 0 on a column. */
    const double special[][9] = {
        {NAN, 0, 0, 0, 1, 0, 0, 0, 1},      {1, 0, INFINITY, 0, 1, 0, 0, 0, 1},
        {1, 0, 0, 0, 1, 0, 0.125, 0, 1},    {1, 0, 0, 0, 1, 0, 0.0625, 0, 1},
        {1, 0, 0, 0, 1, 0, 0, 0.25, 1},     {1, 2, 3, 2, 4, 5, 1, 2, 3},
        {1, 0.5, 0, 0, 1, 0, 0.1, 0.05, 1}, {0, 0, 0, 0, 0, 0, 0, 0, 0},
    };
    for (size_t m = 0; m < sizeof special / sizeof special[0]; m++)
        for (int kind = 0; kind < 2; kind++) {
            int sw = 2 + (int)(tu_rand(&rng) % 40), sh = 2 + (int)(tu_rand(&rng) % 30);
            int dw = 1 + (int)(tu_rand(&rng) % 70), dh = 1 + (int)(tu_rand(&rng) % 20);
            cases++;
            failed += check5_case(&rng, kind, sw, sh, dw, dh, special[m], &bytes) != 0;
        }
    /* Ultralytics-like: a 1280 mosaic canvas to 640, and 640x480 to 640. */
    const int big[][4] = {{1280, 1280, 640, 640}, {640, 480, 640, 640}};
    for (int i = 0; i < 6; i++) {
        int kind = i % 2;
        const int *g = big[(i / 2) % 2];
        double M[9];
        random_matrix(&rng, kind, g[0], g[1], g[2], g[3], M);
        if (i >= 4) /* scale and translation */
            M[1] = M[3] = M[6] = M[7] = 0;
        cases++;
        failed += check5_case(&rng, kind, g[0], g[1], g[2], g[3], M, &bytes) != 0;
    }
    printf(
        "5.x random matrices: %ld cases (each in %d stacks, on every code path), %ld "
        "bytes, %ld failed\n",
        cases, NSTACKS5, bytes, failed);
    CHECK_INT(failed, 0);
}

int main(void)
{
    test_arguments();
    test_shifts();
    test_singular_and_outside();
    test_hand();
    test_random();
    test_blocks();
    test_cv_arguments();
    test_cv_hand();
    test_cv_captured();
    test_cv_random();
    return tu_finish("test_warp");
}
