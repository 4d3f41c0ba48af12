/*
 * test_warp_one.c - detfeed__warp_one_px (img/warp_one.h), the warps as a
 * function of one destination pixel reading a described canvas, against
 * detfeed_warp_affine_cv / detfeed_warp_perspective_cv on the materialized
 * canvas: every byte of every destination, on every stack (4.x, 4.x Debian,
 * 5.0 with OpenCV's AVX2, AVX-512 and SSE builds, 5.1 with IPP on and off),
 * 0 differing bytes required.
 *
 * - Plan arguments: the refusals of the warps.
 * - Random single images (padded strides): Ultralytics' scale and
 *   translation 1280 -> 640, rotation and shear, perspective (terms about
 *   5e-4, some 0.02), odd sizes (1-pixel sides, widths that are not
 *   multiples of 16, 8 or the 4.x column block, heights below 16),
 *   translations far outside (negative, beyond int16 and beyond OpenCV's
 *   int32 fixed point), singular, NaN and infinite matrices, perspective w
 *   crossing zero.
 * - Canvases: four tiles placed as Ultralytics' mosaic places them around
 *   a random centre (fill 114, tiles clipped), warped as RandomPerspective
 *   warps them; random overlapping tiles (the first tile wins), 0 to 4.
 * - Non-finite positions inside a float-kernel vector block (nan_byte) and
 *   in its scalar tail (border), from a matrix whose w is exactly 0 on one
 *   column.
 * - The check can fail: a plan with another column block (4.x), another
 *   build (5.0 SSE for AVX2) or without IPP differs from the reference.
 */
#include "img/warp_one.h"
#include "img/warp_px.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const detfeed_cv STACKS[] = {
    {DETFEED_CV_4, DETFEED_CV_CPU_AUTO, 0},
    {DETFEED_CV_4_DEBIAN, DETFEED_CV_CPU_AUTO, 0},
    {DETFEED_CV_5_0, DETFEED_CV_CPU_AVX2, 0},
    {DETFEED_CV_5_0, DETFEED_CV_CPU_AVX512, 0},
    {DETFEED_CV_5_0, DETFEED_CV_CPU_SSE, 0},
    {DETFEED_CV_5_1, DETFEED_CV_CPU_AVX2, 1},
    {DETFEED_CV_5_1, DETFEED_CV_CPU_SSE, 1},
    {DETFEED_CV_5_1, DETFEED_CV_CPU_AUTO, 1},
    {DETFEED_CV_5_1, DETFEED_CV_CPU_AVX2, 0},
    {DETFEED_CV_5_1, DETFEED_CV_CPU_SSE, 0},
};
#define NSTACKS (int)(sizeof STACKS / sizeof STACKS[0])

static const uint8_t GREY[3] = {114, 114, 114};

/* ---- images and canvases --------------------------------------------------- */

typedef struct img {
    uint8_t *px;
    size_t stride;
    int w, h;
} img;

/* A w x h image with `pad` bytes after each row, every byte random. */
static img img_new(int w, int h, size_t pad, uint64_t *rng)
{
    img m = {NULL, (size_t)w * 3 + pad, w, h};
    m.px = malloc(m.stride * (size_t)h);
    if (m.px)
        for (size_t i = 0; i < m.stride * (size_t)h; i++)
            m.px[i] = (uint8_t)tu_rand(rng);
    return m;
}

static size_t random_pad(uint64_t *rng)
{
    return tu_rand(rng) % 3 ? 0 : 1 + tu_rand(rng) % 13;
}

/* A canvas and the images its tiles point into. */
typedef struct canvas {
    detfeed__canvas c;
    img tiles[4];
} canvas;

static void canvas_free(canvas *cv)
{
    for (int k = 0; k < 4; k++)
        free(cv->tiles[k].px);
}

static void set_tile(canvas *cv, int k, int x0, int y0, int x1, int y1, int ox, int oy)
{
    detfeed__canvas_tile *t = &cv->c.tiles[k];
    t->px = cv->tiles[k].px;
    t->stride = (int32_t)cv->tiles[k].stride;
    t->x0 = x0, t->y0 = y0, t->x1 = x1, t->y1 = y1;
    t->ox = ox, t->oy = oy;
}

/* The canvas as one image, written independently of detfeed__canvas_tap:
 * the fill, then the tiles from the last to the first (the first wins). */
static img materialize(const detfeed__canvas *c, uint64_t *rng)
{
    img m = img_new(c->w, c->h, random_pad(rng), rng);
    if (m.px == NULL)
        return m;
    for (int y = 0; y < c->h; y++)
        for (int x = 0; x < c->w; x++)
            memcpy(m.px + (size_t)y * m.stride + (size_t)x * 3, c->fill, 3);
    for (int k = c->n - 1; k >= 0; k--) {
        const detfeed__canvas_tile *t = &c->tiles[k];
        for (int y = t->y0; y < t->y1; y++)
            for (int x = t->x0; x < t->x1; x++)
                memcpy(m.px + (size_t)y * m.stride + (size_t)x * 3,
                       t->px + (size_t)(y - t->oy) * (size_t)t->stride +
                           (size_t)(x - t->ox) * 3,
                       3);
    }
    return m;
}

/* Ultralytics' mosaic placement of 4 tiles of up to s pixels a side on a
 * 2s x 2s canvas around (xc, yc) in [s/2, 3s/2] (load_mosaic). */
static bool mosaic(uint64_t *rng, int s, canvas *cv)
{
    memset(cv, 0, sizeof *cv);
    cv->c.w = cv->c.h = 2 * s;
    cv->c.n = 4;
    memcpy(cv->c.fill, GREY, 3);
    const int xc = s / 2 + (int)(tu_rand(rng) % (uint64_t)(s + 1));
    const int yc = s / 2 + (int)(tu_rand(rng) % (uint64_t)(s + 1));
    for (int k = 0; k < 4; k++) {
        int w = s, h = 1 + (int)(tu_rand(rng) % (uint64_t)s);
        if (tu_rand(rng) % 2)
            w = h, h = s;
        cv->tiles[k] = img_new(w, h, random_pad(rng), rng);
        if (cv->tiles[k].px == NULL)
            return false;
        int x1a, y1a, x2a, y2a, x1b, y1b;
        if (k == 0) {
            x1a = xc - w > 0 ? xc - w : 0, y1a = yc - h > 0 ? yc - h : 0;
            x2a = xc, y2a = yc;
            x1b = w - (x2a - x1a), y1b = h - (y2a - y1a);
        } else if (k == 1) {
            x1a = xc, y1a = yc - h > 0 ? yc - h : 0;
            x2a = xc + w < 2 * s ? xc + w : 2 * s, y2a = yc;
            x1b = 0, y1b = h - (y2a - y1a);
        } else if (k == 2) {
            x1a = xc - w > 0 ? xc - w : 0, y1a = yc;
            x2a = xc, y2a = yc + h < 2 * s ? yc + h : 2 * s;
            x1b = w - (x2a - x1a), y1b = 0;
        } else {
            x1a = xc, y1a = yc;
            x2a = xc + w < 2 * s ? xc + w : 2 * s,
            y2a = yc + h < 2 * s ? yc + h : 2 * s;
            x1b = 0, y1b = 0;
        }
        set_tile(cv, k, x1a, y1a, x2a, y2a, x1a - x1b, y1a - y1b);
    }
    return true;
}

/* 0 to 4 tiles at random places of a w x h canvas, overlapping, partly
 * off their images' edges (each rectangle inside both), random fill. */
static bool random_tiles(uint64_t *rng, int w, int h, canvas *cv)
{
    memset(cv, 0, sizeof *cv);
    cv->c.w = w, cv->c.h = h;
    cv->c.n = (int)(tu_rand(rng) % 5);
    for (int i = 0; i < 3; i++)
        cv->c.fill[i] = (uint8_t)tu_rand(rng);
    for (int k = 0; k < cv->c.n; k++) {
        int tw = 1 + (int)(tu_rand(rng) % (uint64_t)(w + 8));
        int th = 1 + (int)(tu_rand(rng) % (uint64_t)(h + 8));
        cv->tiles[k] = img_new(tw, th, random_pad(rng), rng);
        if (cv->tiles[k].px == NULL)
            return false;
        int ox = (int)(tu_rand(rng) % (uint64_t)(w + tw)) - tw / 2 - 4;
        int oy = (int)(tu_rand(rng) % (uint64_t)(h + th)) - th / 2 - 4;
        int x0 = ox > 0 ? ox : 0, y0 = oy > 0 ? oy : 0;
        int x1 = ox + tw < w ? ox + tw : w, y1 = oy + th < h ? oy + th : h;
        x0 += x0 < x1 ? (int)(tu_rand(rng) % 3) : 0; /* sometimes a smaller rect */
        y1 -= y0 < y1 ? (int)(tu_rand(rng) % 2) : 0;
        if (x1 < x0 || y1 < y0) /* empty */
            x1 = x0, y1 = y0;
        set_tile(cv, k, x0, y0, x1, y1, ox, oy);
    }
    return true;
}

/* ---- the comparison ---------------------------------------------------- */

/* What the comparisons covered. */
typedef struct tally {
    long cases, bytes, bad;
    long kinds[5];  /* plans of each DETFEED__WARP_ONE_* kind */
    long tail_px;   /* float-kernel pixels in a row's scalar tail */
    long nan_px;    /* pixels that store nan_byte */
    long nonfinite; /* non-finite 5.x positions */
} tally;

static tally T;

/* The warp of `src` by the public function of `cv` into a new buffer with
 * padded rows (*stride), or NULL. */
static uint8_t *reference(const detfeed_cv *cv, bool persp, const double *M,
                          const img *src, int dw, int dh, const uint8_t *border,
                          size_t *stride)
{
    *stride = (size_t)dw * 3 + 5;
    uint8_t *d = malloc(*stride * (size_t)dh);
    if (d == NULL)
        return NULL;
    int rc = persp ? detfeed_warp_perspective_cv(src->px, src->stride, src->w, src->h,
                                                 d, *stride, dw, dh, M, border, cv)
                   : detfeed_warp_affine_cv(src->px, src->stride, src->w, src->h, d,
                                            *stride, dw, dh, M, border, cv);
    if (!CHECK_INT(rc, DETFEED_OK)) {
        free(d);
        return NULL;
    }
    return d;
}

/* Coverage of pixel (x, y) of a 5.x plan. */
static void cover(const detfeed__warp_one *p, int x, int y)
{
    if (p->kind == DETFEED__WARP_ONE_FLOAT && x >= p->nvec)
        T.tail_px++;
    if (p->kind < DETFEED__WARP_ONE_FLOAT)
        return;
    detfeed__wo_axis ax, ay;
    detfeed__wo_pos5(p, x, y, &ax, &ay);
    if (ax.a != ax.a || ay.a != ay.a) {
        T.nonfinite++;
        T.nan_px += !detfeed__wo_nan_is_border(p, x, y);
    }
}

/* Bytes where warp_one_px differs from ref; prints the first. */
static long diff_plan(const detfeed__warp_one *p, const detfeed__canvas *c,
                      const uint8_t *ref, size_t stride, bool quiet)
{
    long bad = 0;
    for (int y = 0; y < p->dst_h; y++)
        for (int x = 0; x < p->dst_w; x++) {
            uint8_t o[3];
            detfeed__warp_one_px(p, c, x, y, o);
            const uint8_t *r = ref + (size_t)y * stride + (size_t)x * 3;
            long n = (o[0] != r[0]) + (o[1] != r[1]) + (o[2] != r[2]);
            if (n && !bad && !quiet)
                fprintf(stderr,
                        "  kind %d, %dx%d -> %dx%d, pixel (%d, %d): %d %d %d, want "
                        "%d %d %d\n",
                        p->kind, p->src_w, p->src_h, p->dst_w, p->dst_h, x, y, o[0],
                        o[1], o[2], r[0], r[1], r[2]);
            bad += n;
        }
    return bad;
}

/* One case on every stack: the canvas c warped by M into dw x dh. */
static void check_case(const detfeed__canvas *c, uint64_t *rng, bool persp,
                       const double *M, int dw, int dh, const uint8_t *border)
{
    img src = materialize(c, rng);
    if (!CHECK(src.px != NULL))
        return;
    for (int s = 0; s < NSTACKS; s++) {
        size_t stride;
        uint8_t *ref = reference(&STACKS[s], persp, M, &src, dw, dh, border, &stride);
        detfeed__warp_one p;
        if (ref == NULL ||
            !CHECK_INT(detfeed__warp_one_plan(&p, M, persp, &STACKS[s], c->w, c->h, dw,
                                              dh, border),
                       DETFEED_OK)) {
            free(ref);
            break;
        }
        long bad = diff_plan(&p, c, ref, stride, false);
        if (bad)
            fprintf(stderr, "  stack %d (version %d cpu %d ipp %d): %ld bytes\n", s,
                    STACKS[s].version, STACKS[s].cpu, STACKS[s].ipp, bad);
        for (int y = 0; y < dh; y++)
            for (int x = 0; x < dw; x++)
                cover(&p, x, y);
        T.cases++;
        T.bytes += (long)dw * dh * 3;
        T.bad += bad;
        T.kinds[p.kind]++;
        free(ref);
    }
    free(src.px);
}

/* A plain random image as a one-tile canvas. */
static void check_image(uint64_t *rng, int sw, int sh, bool persp, const double *M,
                        int dw, int dh, const uint8_t *border)
{
    img im = img_new(sw, sh, random_pad(rng), rng);
    if (!CHECK(im.px != NULL))
        return;
    detfeed__canvas c;
    detfeed__canvas_image(&c, im.px, (int32_t)im.stride, sw, sh);
    check_case(&c, rng, persp, M, dw, dh, border);
    free(im.px);
}

/* ---- matrices ------------------------------------------------------------ */

static void product(const double a[9], const double b[9], double out[9])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[i * 3 + j] =
                a[i * 3] * b[j] + a[i * 3 + 1] * b[3 + j] + a[i * 3 + 2] * b[6 + j];
}

/* RandomPerspective's M = T @ S @ R @ P @ C for an in_w x in_h input and
 * an out_w x out_h output (degrees, scale, shear, perspective and translate
 * as its hyperparameters), entries rounded to float32 as NumPy builds it.
 * *persp: whether it is a perspective warp. */
static void ultra_matrix(uint64_t *rng, int in_w, int in_h, int out_w, int out_h,
                         double degrees, double scale, double shear, double perspective,
                         double translate, double M[9], bool *persp)
{
    const double pi = 3.141592653589793;
    double C[9] = {1, 0, -in_w / 2.0, 0, 1, -in_h / 2.0, 0, 0, 1};
    double P[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    P[6] = tu_uniform(rng, -perspective, perspective);
    P[7] = tu_uniform(rng, -perspective, perspective);
    double a = tu_uniform(rng, -degrees, degrees) * pi / 180;
    double s = tu_uniform(rng, 1 - scale, 1 + scale);
    double R[9] = {s * cos(a), s * sin(a), 0, -s * sin(a), s * cos(a), 0, 0, 0, 1};
    double S[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    S[1] = tan(tu_uniform(rng, -shear, shear) * pi / 180);
    S[3] = tan(tu_uniform(rng, -shear, shear) * pi / 180);
    double Tm[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    Tm[2] = tu_uniform(rng, 0.5 - translate, 0.5 + translate) * out_w;
    Tm[5] = tu_uniform(rng, 0.5 - translate, 0.5 + translate) * out_h;
    double t1[9], t2[9], t3[9];
    product(P, C, t1);
    product(R, t1, t2);
    product(S, t2, t3);
    product(Tm, t3, M);
    for (int k = 0; k < 9; k++)
        M[k] = (float)M[k];
    *persp = perspective != 0;
    if (!*persp)
        M[6] = M[7] = 0, M[8] = 1;
}

/* A random forward matrix (rotation at any angle, scale, shear), for
 * perspective terms up to pmax; kind of trouble by `far`:
 *   0 none, 1 translation of a few images outside, 2 beyond int16 taps
 *   (4.x saturates), 3 beyond OpenCV's int32 fixed point (INT_MIN),
 *   4 singular, 5 a NaN entry, 6 an infinite entry, 7 w crossing zero. */
static void random_matrix(uint64_t *rng, int sw, int sh, int dw, int dh, double pmax,
                          int far, double M[9])
{
    double a = tu_uniform(rng, -3.141592653589793, 3.141592653589793);
    double s = tu_uniform(rng, 0.25, 2.0);
    double shx = tu_uniform(rng, -0.3, 0.3), shy = tu_uniform(rng, -0.3, 0.3);
    double ca = cos(a) * s, sa = sin(a) * s;
    M[0] = ca + shx * sa, M[1] = sa + shx * ca;
    M[3] = -sa + shy * ca, M[4] = ca - shy * sa;
    double cx = sw / 2.0, cy = sh / 2.0;
    M[2] = dw / 2.0 - (M[0] * cx + M[1] * cy) + tu_uniform(rng, -0.3, 0.3) * dw;
    M[5] = dh / 2.0 - (M[3] * cx + M[4] * cy) + tu_uniform(rng, -0.3, 0.3) * dh;
    M[6] = tu_uniform(rng, -pmax, pmax), M[7] = tu_uniform(rng, -pmax, pmax);
    M[8] = 1;
    const double sign = tu_rand(rng) % 2 ? 1 : -1;
    if (far == 1)
        M[2] += sign * tu_uniform(rng, 1, 3) * (sw + dw);
    if (far == 2) /* source rows 33000..60000 away: X fits int32, X >> 5 not int16 */
        M[5] += sign * tu_uniform(rng, 33000, 60000) * (fabs(M[4]) + fabs(M[3]));
    if (far == 3)
        M[5] += sign * tu_uniform(rng, 3e6, 3e7);
    if (far == 4)
        M[0] = M[1] = M[3] = M[4] = 0;
    if (far == 5)
        M[tu_rand(rng) % 9] = NAN;
    if (far == 6)
        M[tu_rand(rng) % 6] = sign * INFINITY;
    if (far == 7) { /* give the inverse a w that crosses zero mid-destination */
        double inv[9];
        memcpy(inv, M, sizeof inv);
        inv[6] = tu_uniform(rng, -0.02, 0.02), inv[7] = tu_uniform(rng, -0.02, 0.02);
        inv[8] = -(inv[6] * dw + inv[7] * dh) / 2;
        detfeed__warp_invert_3x3(inv, M);
    }
    if (tu_rand(rng) % 3 == 0)
        for (int k = 0; k < 9; k++)
            M[k] = (float)M[k];
}

/* Ultralytics' scale and translation only (degrees = shear = perspective
 * = 0): the inverse has M1 == M3 == 0 (5.1's IPP scale model). */
static void scale_matrix(uint64_t *rng, int sw, int sh, int dw, int dh, double M[9])
{
    bool persp;
    ultra_matrix(rng, sw, sh, dw, dh, 0, 0.5, 0, 0, 0.1, M, &persp);
}

static void random_border(uint64_t *rng, uint8_t border[3])
{
    memcpy(border, GREY, 3);
    if (tu_rand(rng) % 2)
        for (int i = 0; i < 3; i++)
            border[i] = (uint8_t)tu_rand(rng);
}

/* ---- the tests ------------------------------------------------------------- */

static void test_plan_arguments(void)
{
    const double M[9] = {1, 0, 0.5, 0, 1, 0, 0, 0, 1};
    const detfeed_cv ok = {DETFEED_CV_5_1, DETFEED_CV_CPU_AUTO, 1};
    const detfeed_cv bad_version = {(detfeed_cv_version)4, DETFEED_CV_CPU_AUTO, 0};
    const detfeed_cv bad_cpu = {DETFEED_CV_5_0, (detfeed_cv_cpu)4, 0};
    detfeed__warp_one p;
    for (int persp = 0; persp < 2; persp++) {
        CHECK_INT(detfeed__warp_one_plan(&p, M, persp, &ok, 4, 4, 2, 2, GREY),
                  DETFEED_OK);
        CHECK_INT(detfeed__warp_one_plan(NULL, M, persp, &ok, 4, 4, 2, 2, GREY),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed__warp_one_plan(&p, NULL, persp, &ok, 4, 4, 2, 2, GREY),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed__warp_one_plan(&p, M, persp, NULL, 4, 4, 2, 2, GREY),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed__warp_one_plan(&p, M, persp, &bad_version, 4, 4, 2, 2, GREY),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed__warp_one_plan(&p, M, persp, &bad_cpu, 4, 4, 2, 2, GREY),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed__warp_one_plan(&p, M, persp, &ok, 4, 4, 2, 2, NULL),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed__warp_one_plan(&p, M, persp, &ok, 0, 4, 2, 2, GREY),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed__warp_one_plan(&p, M, persp, &ok, 4, -1, 2, 2, GREY),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed__warp_one_plan(&p, M, persp, &ok, 4, 4, 0, 2, GREY),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed__warp_one_plan(&p, M, persp, &ok, 4, 4, 2, 0, GREY),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed__warp_one_plan(&p, M, persp, &ok, 32767, 4, 2, 2, GREY),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed__warp_one_plan(&p, M, persp, &ok, 4, 32767, 2, 2, GREY),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed__warp_one_plan(&p, M, persp, &ok, 32766, 32766, 2, 2, GREY),
                  DETFEED_OK);
    }
    /* The models the stacks choose. */
    const double S[9] = {0.5, 0, 3, 0, 0.5, 2, 0, 0, 1};
    const detfeed_cv v4 = {DETFEED_CV_4, DETFEED_CV_CPU_SSE, 1};
    const detfeed_cv sse = {DETFEED_CV_5_0, DETFEED_CV_CPU_SSE, 0};
    CHECK_INT(detfeed__warp_one_plan(&p, S, false, &ok, 40, 30, 20, 15, GREY), 0);
    CHECK_INT(p.kind, DETFEED__WARP_ONE_IPP_SCALE);
    CHECK_INT(detfeed__warp_one_plan(&p, S, true, &ok, 40, 30, 20, 15, GREY), 0);
    CHECK_INT(p.kind, DETFEED__WARP_ONE_IPP);
    CHECK_INT(detfeed__warp_one_plan(&p, S, false, &ok, 1, 30, 20, 15, GREY), 0);
    CHECK_INT(p.kind, DETFEED__WARP_ONE_FLOAT); /* 1-pixel sources skip IPP */
    CHECK_INT(p.nan_byte, 255);
    CHECK_INT(detfeed__warp_one_plan(&p, S, true, &v4, 40, 30, 700, 15, GREY), 0);
    CHECK_INT(p.kind, DETFEED__WARP_ONE_CV4_PERSP);
    CHECK_INT(p.block, 1024 / 15);
    CHECK_INT(detfeed__warp_one_plan(&p, S, false, &sse, 40, 30, 21, 15, GREY), 0);
    CHECK_INT(p.kind, DETFEED__WARP_ONE_FLOAT);
    CHECK(p.block == 8 && p.nvec == 16 && !p.fused && p.nan_byte == 0);
}

/* Random matrices on random small and odd geometries. */
static void test_random_images(void)
{
    uint64_t rng = 17;
    for (int i = 0; i < 700; i++) {
        int lim = i % 4 == 0 ? 6 : 90;
        int sw = 1 + (int)(tu_rand(&rng) % (uint64_t)lim);
        int sh = 1 + (int)(tu_rand(&rng) % (uint64_t)lim);
        int dw = 1 + (int)(tu_rand(&rng) % (uint64_t)lim);
        int dh = 1 + (int)(tu_rand(&rng) % (uint64_t)lim);
        if (i % 9 == 4) /* wide and low: 4.x column blocks wider than 64 */
            dw = 100 + (int)(tu_rand(&rng) % 900), dh = 1 + (int)(tu_rand(&rng) % 15);
        if (i % 9 == 5) /* middle sizes, widths off every block */
            sw = 100 + (int)(tu_rand(&rng) % 500),
            sh = 100 + (int)(tu_rand(&rng) % 500),
            dw = 17 + 16 * (int)(tu_rand(&rng) % 20) + (int)(tu_rand(&rng) % 15),
            dh = 20 + (int)(tu_rand(&rng) % 100);
        bool persp = i % 2;
        int far = (int)(tu_rand(&rng) % 16);
        far = far < 8 ? far : 0;
        if (!persp && far == 7)
            far = 0;
        double M[9];
        if (far == 0 && i % 5 == 0)
            scale_matrix(&rng, sw, sh, dw, dh, M);
        else
            random_matrix(&rng, sw, sh, dw, dh, i % 6 == 1 ? 0.02 : 5e-4, far, M);
        uint8_t border[3];
        random_border(&rng, border);
        check_image(&rng, sw, sh, persp, M, dw, dh, border);
    }
}

/* Ultralytics' sizes: a 1280 canvas to 640, scale only, rotated, perspective. */
static void test_ultralytics_sizes(void)
{
    uint64_t rng = 1280;
    for (int i = 0; i < 3; i++) {
        double M[9];
        bool persp = false;
        if (i == 0)
            scale_matrix(&rng, 1280, 1280, 640, 640, M);
        else
            ultra_matrix(&rng, 1280, 1280, 640, 640, 10, 0.5, 2, i == 2 ? 5e-4 : 0, 0.1,
                         M, &persp);
        check_image(&rng, 1280, 1280, persp, M, 640, 640, GREY);
    }
}

/* Mosaic canvases (2s x 2s, fill 114) warped to s x s as RandomPerspective
 * warps them, and random overlapping tiles. */
static void test_canvases(void)
{
    uint64_t rng = 4;
    for (int i = 0; i < 60; i++) {
        int s = i == 0 ? 640 : 8 + (int)(tu_rand(&rng) % 200);
        canvas cv;
        if (CHECK(mosaic(&rng, s, &cv))) {
            double M[9];
            bool persp;
            double deg = i % 3 ? 10 : 0, shear = i % 3 ? 2 : 0;
            double p = i % 3 == 2 ? 5e-4 : 0;
            ultra_matrix(&rng, 2 * s, 2 * s, s, s, deg, 0.5, shear, p, 0.1, M, &persp);
            check_case(&cv.c, &rng, persp, M, s, s, GREY);
        }
        canvas_free(&cv);
    }
    for (int i = 0; i < 200; i++) {
        int w = 1 + (int)(tu_rand(&rng) % 60), h = 1 + (int)(tu_rand(&rng) % 60);
        int dw = 1 + (int)(tu_rand(&rng) % 70), dh = 1 + (int)(tu_rand(&rng) % 40);
        canvas cv;
        if (CHECK(random_tiles(&rng, w, h, &cv))) {
            double M[9];
            bool persp = i % 2;
            random_matrix(&rng, w, h, dw, dh, 0.01, i % 10 == 9 ? 1 : 0, M);
            uint8_t border[3];
            random_border(&rng, border);
            check_case(&cv.c, &rng, persp, M, dw, dh, border);
        }
        canvas_free(&cv);
    }
}

/* A perspective whose inverse has w = x - k exactly, 0 on column k: the
 * float kernel's positions there are not finite, next to finite ones
 * inside the source; with k in a vector block the pixel is nan_byte, in
 * the scalar tail the border. */
static void test_zero_w(void)
{
    uint64_t rng = 0;
    const int ks[] = {8, 16, 32, 64};
    for (int i = 0; i < 4; i++) {
        const double k = ks[i];
        const double M[9] = {1, 0, 0, 0, 1, 0, 1 / k, 0, -1 / k};
        const int dws[] = {ks[i] + 1, ks[i] + 8, ks[i] + 16, 3 * ks[i] + 5};
        for (int j = 0; j < 4; j++)
            check_image(&rng, 3 * ks[i], 2 * ks[i], true, M, dws[j], 9, GREY);
    }
}

/* 4.x fixed point at its limits: the inverse's row term -3.1e6 pixels is
 * out of int32 in 1/1024 (cvRound gives INT_MIN), and column 1's term
 * 2^31 - 16 wraps the sum back to source column 0 (columns 2 and up: both
 * terms INT_MIN, the sum wraps to 16). OpenCV samples the source there;
 * INT_MAX instead of INT_MIN would give column 1 a border tap. */
static void test_fixed_point_wrap(void)
{
    uint64_t rng = 31;
    const double inv0 = 2097152.0 - 0x1p-6; /* inv0 * 1024 = 2^31 - 16 */
    const double M[9] = {1 / inv0, 0, 1.5, 0, 1, 0, 0, 0, 1};
    const uint8_t border[3] = {1, 2, 3};
    img im = img_new(4, 5, 0, &rng);
    if (!CHECK(im.px != NULL))
        return;
    size_t st;
    uint8_t *ref = reference(&STACKS[0], false, M, &im, 6, 5, border, &st);
    for (int y = 0; ref && y < 5; y++) {
        CHECK(memcmp(ref + (size_t)y * st, border, 3) == 0);
        for (int x = 1; x < 6; x++)
            CHECK(memcmp(ref + (size_t)y * st + (size_t)x * 3,
                         im.px + (size_t)y * im.stride, 3) == 0);
    }
    free(ref);
    detfeed__canvas c;
    detfeed__canvas_image(&c, im.px, (int32_t)im.stride, 4, 5);
    check_case(&c, &rng, false, M, 6, 5, border);
    free(im.px);
}

/* A plan made for another rule must differ from the reference: the check
 * can tell. */
static void test_discriminates(void)
{
    uint64_t rng = 99;
    img im = img_new(700, 700, 0, &rng);
    if (!CHECK(im.px != NULL))
        return;
    detfeed__canvas c;
    detfeed__canvas_image(&c, im.px, (int32_t)im.stride, 700, 700);
    size_t st;
    detfeed__warp_one p;
    long d[3] = {0, 0, 0};
    /* 4.x: one column block per row instead of OpenCV's (the matrices of
     * test_warp.c's test_blocks, whose positions depend on the blocks). */
    static const double B[][9] = {
        {0.6, 0.2, 4.7, -0.2, 0.6, 5.1, 5e-05, -5e-05, 1.0},
        {0.5, 0.0, 2.1, -0.2, 0.5, 3.2, 8e-05, 8e-05, 1.0},
        {0.5, -0.2, 9.4, -0.30000000000000004, 0.5, 8.8, -8e-05, -4e-05, 1.0},
        {1.1, -0.2, 2.6, -0.2, 1.1, -5.1, -1e-05, 4e-05, 1.0},
    };
    for (int m = 0; m < 4; m++) {
        uint8_t *ref = reference(&STACKS[0], true, B[m], &im, 640, 640, GREY, &st);
        if (ref && CHECK_INT(detfeed__warp_one_plan(&p, B[m], true, &STACKS[0], 700,
                                                    700, 640, 640, GREY),
                             DETFEED_OK)) {
            CHECK_INT(diff_plan(&p, &c, ref, st, false), 0);
            p.block = 640;
            d[0] += diff_plan(&p, &c, ref, st, true);
        }
        free(ref);
    }
    /* 5.0: the SSE build's plan against the AVX2 build's bytes. */
    uint8_t *ref;
    double R[9];
    bool persp;
    ultra_matrix(&rng, 700, 700, 637, 300, 30, 0.5, 5, 0, 0.1, R, &persp);
    const detfeed_cv sse = {DETFEED_CV_5_0, DETFEED_CV_CPU_SSE, 0};
    ref = reference(&STACKS[2], false, R, &im, 637, 300, GREY, &st);
    if (ref &&
        CHECK_INT(detfeed__warp_one_plan(&p, R, false, &sse, 700, 700, 637, 300, GREY),
                  DETFEED_OK))
        d[1] = diff_plan(&p, &c, ref, st, true);
    free(ref);
    /* 5.1: the IPP scale plan against the bytes without IPP. */
    double S[9];
    scale_matrix(&rng, 700, 700, 640, 640, S);
    const detfeed_cv ipp = {DETFEED_CV_5_1, DETFEED_CV_CPU_AVX2, 1};
    ref = reference(&STACKS[8], false, S, &im, 640, 640, GREY, &st);
    if (ref &&
        CHECK_INT(detfeed__warp_one_plan(&p, S, false, &ipp, 700, 700, 640, 640, GREY),
                  DETFEED_OK))
        d[2] = diff_plan(&p, &c, ref, st, true);
    free(ref);
    printf("wrong plans differ: 4.x one block per row %ld bytes, 5.0 SSE for AVX2 %ld, "
           "5.1 IPP for no IPP %ld\n",
           d[0], d[1], d[2]);
    CHECK(d[0] > 0 && d[1] > 0 && d[2] > 0);
    free(im.px);
}

int main(void)
{
    test_plan_arguments();
    test_discriminates();
    test_zero_w();
    test_fixed_point_wrap();
    test_random_images();
    test_ultralytics_sizes();
    test_canvases();
    printf("%ld comparisons (case x stack), %ld bytes compared, %ld differ\n", T.cases,
           T.bytes, T.bad);
    printf("plans: 4.x affine %ld, 4.x perspective %ld, float %ld, IPP scale %ld, IPP "
           "%ld; float-kernel tail pixels %ld, non-finite 5.x positions %ld, nan_byte "
           "pixels %ld\n",
           T.kinds[0], T.kinds[1], T.kinds[2], T.kinds[3], T.kinds[4], T.tail_px,
           T.nonfinite, T.nan_px);
    CHECK_INT(T.bad, 0);
    CHECK(T.bytes > 0 && T.tail_px > 0 && T.nan_px > 0);
    for (int k = 0; k < 5; k++)
        CHECK(T.kinds[k] > 0);
    return tu_finish("test_warp_one");
}
