/*
 * warp.c - OpenCV-exact warpAffine and warpPerspective of 8-bit BGR images,
 * INTER_LINEAR, BORDER_CONSTANT.
 *
 * The arithmetic is OpenCV 4.6's (the fixed-point path of 4.6-4.10, see
 * shared/ref/opencv-exact.md, 4), as measured against Debian's build:
 *
 *   - the forward matrix is inverted in double (warpAffine's 2x3 closed
 *     form; cv::invert's 3x3 closed form with det3 for warpPerspective, all
 *     zeros when the determinant is 0);
 *   - affine positions: per column adelta = cvRound(M0 * x * 1024) and
 *     bdelta = cvRound(M3 * x * 1024); per row X0 = cvRound((M1 * y + M2) *
 *     1024) + 16, likewise Y0; per pixel X = (X0 + adelta) >> 5 in wrapping
 *     int32. cvRound is SSE2's conversion: half to even, and INT_MIN for
 *     anything out of int32 range or NaN;
 *   - perspective positions: in double, per pixel, but with OpenCV's
 *     grouping of the sums: the destination is cut into blocks of bw0
 *     columns (bh0 = min(16, H), bw0 = min(1024 / bh0, W)), each block's
 *     row start X0 = M0 * xb + M1 * y + M2 (likewise Y0, W0) is computed
 *     once and the pixel x = xb + i adds M0 * i to it:
 *         W = W0 + M6 * i;  W = W ? 32 / W : 0
 *         X = cvRound(clamp((X0 + M0 * i) * W, INT_MIN, INT_MAX))
 *     The grouping changes the last bit of some sums, and with it some
 *     positions: evaluating M0 * x + M1 * y + M2 per pixel differs from
 *     OpenCV on real matrices. A NaN product (0 * inf) becomes INT_MIN
 *     here; OpenCV gives INT_MIN in its SSE4.1 loop and INT_MAX in its
 *     scalar tail, but both are outside every source it accepts (below
 *     32767 pixels a side), so the output is the same;
 *   - sources of 32767 pixels or more a side are refused, as OpenCV's
 *     remap() refuses them (its positions are int16);
 *   - the 1/32 positions are sampled as OpenCV's remap() samples them
 *     (warp_px.h).
 *
 * The destination is produced row by row: the positions of a row go to two
 * int32 arrays, then a row sampler (portable here, AVX2 in warp_avx2.c)
 * turns them into pixels, with a fast path for pixels whose four taps are
 * inside the source.
 *
 * Signed overflow never happens: the wrapping adds go through uint32, and
 * every double is range-checked before it is converted.
 */
#include "warp_px.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* OpenCV's AB_BITS: affine positions are first computed in 1/1024 pixel;
 * half of 1/32 in those units is added before the shift to 1/32. */
#define AB_BITS     10
#define AB_SCALE    1024.0
#define ROUND_DELTA 16

/* OpenCV's remap() asserts src.cols < SHRT_MAX and src.rows < SHRT_MAX. */
#define MAX_SRC_SIDE 32767

/* OpenCV's cvRound(double) on x86-64 (cvtsd2si): round half to even; a
 * result outside int32, or NaN, gives INT_MIN. The bounds are those of the
 * value before rounding: -2^31 - 0.5 rounds (to even) to -2^31, 2^31 - 0.5
 * rounds to 2^31, which is out of range. */
static int32_t cv_round(double v)
{
    if (!(v >= -2147483648.5 && v < 2147483647.5))
        return INT32_MIN;
    return (int32_t)rint(v);
}

/* a + b with int32 wrap-around, as OpenCV's int additions behave. */
static int32_t add_wrap(int32_t a, int32_t b)
{
    uint32_t u = (uint32_t)a + (uint32_t)b;
    return u <= INT32_MAX ? (int32_t)u : (int32_t)(u - 2147483648u) + INT32_MIN;
}

/* Half to even for |v| <= 2^31 without a library call (rint() is one on
 * baseline x86-64): adding 1.5 * 2^52 leaves no fraction bits and rounds as
 * the FP environment does (to nearest, ties to even); the subtraction is
 * exact. */
static inline double round_even(double v)
{
    const double magic = 0x1.8p52;
    return (v + magic) - magic;
}

/* ---- the portable row sampler -------------------------------------------- */

/* Two passes per row so that the arithmetic vectorises: first each pixel's
 * four taps and two fractions are copied into per-channel arrays in output
 * order (the gather, the border rule and the only branches), then one
 * straight loop over the row's bytes blends them (warp_px.h). */

static inline void put3(uint8_t *d, const uint8_t *s)
{
    d[0] = s[0];
    d[1] = s[1];
    d[2] = s[2];
}

/* Copies 4 bytes where 3 are needed: the fourth is overwritten by the next
 * pixel's (the arrays have one byte to spare at the end). */
static inline void put4(uint8_t *d, const uint8_t *s)
{
    memcpy(d, s, 4);
}

static inline void fill4(uint8_t *d, int32_t v)
{
    uint32_t u = (uint32_t)v * 0x01010101u;
    memcpy(d, &u, 4);
}

/* The tap at (x, y), or the border value outside the source. */
static inline const uint8_t *tap(const detfeed__warp_src *s, int32_t x, int32_t y)
{
    if (x < 0 || x >= s->width || y < 0 || y >= s->height)
        return s->border;
    return s->px + (size_t)y * s->stride + (size_t)x * 3;
}

/* The blend of warp_px.h in 16-bit lanes: v = (32-fy) top + fy bot needs
 * 18 bits, so it is split on top = 32 th + tl, bot = 32 bh + bl:
 *     v + 512 = 32 A + B,  A = (32-fy) th + fy bh <= 8160,
 *                          B = (32-fy) tl + fy bl + 512 <= 1504
 * and (32 A + B) >> 10 = (A + (B >> 5)) >> 5 (the bits B loses in >> 5 are
 * below 32, so they cannot carry into bit 10). */
static void blend_row(const uint8_t *restrict t00, const uint8_t *restrict t01,
                      const uint8_t *restrict t10, const uint8_t *restrict t11,
                      const uint8_t *restrict fx, const uint8_t *restrict fy,
                      uint8_t *restrict d, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        uint16_t ax = fx[j], ay = fy[j];
        uint16_t rx = (uint16_t)(32 - ax), ry = (uint16_t)(32 - ay);
        uint16_t top = (uint16_t)(rx * t00[j] + ax * t01[j]);
        uint16_t bot = (uint16_t)(rx * t10[j] + ax * t11[j]);
        uint16_t A = (uint16_t)(ry * (top >> 5) + ay * (bot >> 5));
        uint16_t B = (uint16_t)(ry * (top & 31) + ay * (bot & 31) + 512);
        d[j] = (uint8_t)((uint16_t)(A + (B >> 5)) >> 5);
    }
}

void detfeed__warp_row_portable(const detfeed__warp_src *s, const int32_t *xs,
                                const int32_t *ys, uint8_t *d, int n)
{
    const size_t len = (size_t)n * 3, cap = s->scratch_cap;
    uint8_t *t00 = s->scratch, *t01 = t00 + cap, *t10 = t01 + cap, *t11 = t10 + cap;
    uint8_t *fx = t11 + cap, *fy = fx + cap;
    /* Pixels with 0 <= sx < W - 2 and 0 <= sy < H - 1 have all four taps
     * inside and a byte to spare after them; pixels with all four taps
     * outside take the border value four times; the others, the last column
     * included, take the taps one by one. The tests can be made before the
     * int16 saturation, which moves no position across them (every side is
     * below 32767). */
    const uint32_t wlim = s->width > 2 ? (uint32_t)s->width - 2 : 0;
    const uint32_t hlim = (uint32_t)s->height - 1;
    const uint8_t b4[4] = {s->border[0], s->border[1], s->border[2], 0};
    const size_t stride = s->stride;
    for (int i = 0; i < n; i++) {
        int32_t X = xs[i], Y = ys[i];
        int32_t rx = detfeed__warp_asr(X, DETFEED__WARP_FRAC_BITS);
        int32_t ry = detfeed__warp_asr(Y, DETFEED__WARP_FRAC_BITS);
        size_t e = (size_t)i * 3;
        if ((uint32_t)rx < wlim && (uint32_t)ry < hlim) {
            const uint8_t *p = s->px + (size_t)ry * stride + (size_t)rx * 3;
            put4(t00 + e, p);
            put4(t01 + e, p + 3);
            put4(t10 + e, p + stride);
            put4(t11 + e, p + stride + 3);
        } else if (rx >= s->width || rx < -1 || ry >= s->height || ry < -1) {
            put4(t00 + e, b4);
            put4(t01 + e, b4);
            put4(t10 + e, b4);
            put4(t11 + e, b4);
        } else {
            int32_t sx = detfeed__warp_pixel(X), sy = detfeed__warp_pixel(Y);
            put3(t00 + e, tap(s, sx, sy));
            put3(t01 + e, tap(s, sx + 1, sy));
            put3(t10 + e, tap(s, sx, sy + 1));
            put3(t11 + e, tap(s, sx + 1, sy + 1));
        }
        fill4(fx + e, X & DETFEED__WARP_FRAC_MASK);
        fill4(fy + e, Y & DETFEED__WARP_FRAC_MASK);
    }
    blend_row(t00, t01, t10, t11, fx, fy, d, len);
}

/* ---- arguments, buffers, the sampler choice ------------------------------ */

/* The bytes a BGR image of this geometry spans, or 0 when the geometry is
 * bad (NULL, non-positive size, stride below the row, or a span size_t
 * cannot hold, which no real buffer has). */
static size_t image_bytes(const void *p, size_t stride, int width, int height)
{
    if (!detfeed__bgr_geometry_ok(p, stride, width, height))
        return 0;
    return detfeed__image_span(stride, (size_t)width * 3, height);
}

/* Any shared byte, the same start included. */
static bool ranges_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + nb && pb < pa + na;
}

int detfeed__warp_check(const uint8_t *src, size_t src_stride, int sw, int sh,
                        const uint8_t *dst, size_t dst_stride, int dw, int dh,
                        const double *M, const uint8_t *border, size_t *src_bytes)
{
    size_t ns = image_bytes(src, src_stride, sw, sh);
    size_t nd = image_bytes(dst, dst_stride, dw, dh);
    if (ns == 0 || nd == 0 || M == NULL || border == NULL || sw >= MAX_SRC_SIDE ||
        sh >= MAX_SRC_SIDE || ranges_overlap(src, ns, dst, nd))
        return DETFEED_EINVAL;
    *src_bytes = ns;
    return DETFEED_OK;
}

/* One call's state: the source, the destination, the chosen sampler and
 * the buffers (one allocation). */
typedef struct warp_job {
    detfeed__warp_src src;
    uint8_t *dst;
    size_t dst_stride;
    int dst_width, dst_height;
    int isa;                      /* resolved: PORTABLE or AVX2 */
    detfeed__warp_row_fn row;     /* the sampler */
    detfeed__warp_persp_fn persp; /* perspective only: positions of a block */
    int32_t *xs, *ys;             /* positions of the current row */
    int32_t *adelta, *bdelta;     /* affine only: per-column terms */
    void *block;
} warp_job;

/* The code path `isa` resolves to: PORTABLE or AVX2; AUTO picks AVX2 where
 * it runs. -1 when the path cannot run here (there is no AVX-512 one). */
static int resolve_isa(detfeed_isa isa)
{
    if (isa == DETFEED_ISA_AUTO)
        isa = detfeed_isa_available(DETFEED_ISA_AVX2) ? DETFEED_ISA_AVX2
                                                      : DETFEED_ISA_PORTABLE;
    if (isa == DETFEED_ISA_PORTABLE)
        return DETFEED_ISA_PORTABLE;
#ifdef DETFEED_HAVE_AVX2
    if (isa == DETFEED_ISA_AVX2 && detfeed_isa_available(DETFEED_ISA_AVX2))
        return DETFEED_ISA_AVX2;
#endif
    return -1;
}

/* Checks the arguments and sets up the job: `arrays` int32 arrays of
 * dst_width each (2 for perspective, 4 for affine) and the sampler's
 * scratch. */
static int job_begin(warp_job *job, const uint8_t *src, size_t src_stride, int sw,
                     int sh, uint8_t *dst, size_t dst_stride, int dw, int dh,
                     const double *M, const uint8_t border[3], detfeed_isa isa,
                     int arrays)
{
    memset(job, 0, sizeof *job);
    size_t ns = 0;
    if (detfeed__warp_check(src, src_stride, sw, sh, dst, dst_stride, dw, dh, M, border,
                            &ns) != DETFEED_OK ||
        (unsigned)isa > DETFEED_ISA_AVX512)
        return DETFEED_EINVAL;
    job->isa = resolve_isa(isa);
    if (job->isa < 0)
        return DETFEED_ENOTSUPPORTED;
    job->row = detfeed__warp_row_portable;
#ifdef DETFEED_HAVE_AVX2
    if (job->isa == DETFEED_ISA_AVX2)
        job->row = detfeed__warp_row_avx2;
#endif

    /* int32 arrays first, then the sampler's 6 scratch arrays of 3 * dw + 1
     * bytes. */
    size_t per_col = (size_t)arrays * sizeof(int32_t) + 6 * 3, bytes;
    if (!detfeed__mul_size((size_t)dw, per_col, &bytes) || bytes > SIZE_MAX - 6)
        return DETFEED_ENOMEM;
    bytes += 6;
    job->block = malloc(bytes);
    if (job->block == NULL)
        return DETFEED_ENOMEM;
    int32_t *arr = job->block;
    job->xs = arr;
    job->ys = arr + dw;
    if (arrays == 4) {
        job->adelta = arr + 2 * (size_t)dw;
        job->bdelta = arr + 3 * (size_t)dw;
    }
    job->src = (detfeed__warp_src){.px = src,
                                   .stride = src_stride,
                                   .width = sw,
                                   .height = sh,
                                   .border = {border[0], border[1], border[2]},
                                   .offsets32 = ns < ((size_t)1 << 31),
                                   .scratch = (uint8_t *)(arr + (size_t)arrays * dw),
                                   .scratch_cap = (size_t)dw * 3 + 1};
    job->dst = dst;
    job->dst_stride = dst_stride;
    job->dst_width = dw;
    job->dst_height = dh;
    return DETFEED_OK;
}

static void job_row(const warp_job *job, int y)
{
    job->row(&job->src, job->xs, job->ys, job->dst + (size_t)y * job->dst_stride,
             job->dst_width);
}

/* ---- warpAffine ---------------------------------------------------------- */

/* cv::warpAffine's inversion of the forward matrix, in this order, with
 * the new M0, M1, M3, M4 used for the translation (OpenCV 5 kept it). */
void detfeed__warp_invert_affine(const double m[6], double inv[6])
{
    double D = m[0] * m[4] - m[1] * m[3];
    D = D != 0.0 ? 1.0 / D : 0.0;
    double a11 = m[4] * D, a22 = m[0] * D;
    inv[0] = a11;
    inv[1] = m[1] * -D;
    inv[3] = m[3] * -D;
    inv[4] = a22;
    inv[2] = -inv[0] * m[2] - inv[1] * m[5];
    inv[5] = -inv[3] * m[2] - inv[4] * m[5];
}

static void affine_rows(warp_job *job, const double inv[6])
{
    const int dw = job->dst_width;
    int32_t *xs = job->xs, *ys = job->ys, *ad = job->adelta, *bd = job->bdelta;
    for (int x = 0; x < dw; x++) {
        ad[x] = cv_round(inv[0] * x * AB_SCALE);
        bd[x] = cv_round(inv[3] * x * AB_SCALE);
    }
    for (int y = 0; y < job->dst_height; y++) {
        int32_t X0 = add_wrap(cv_round((inv[1] * y + inv[2]) * AB_SCALE), ROUND_DELTA);
        int32_t Y0 = add_wrap(cv_round((inv[4] * y + inv[5]) * AB_SCALE), ROUND_DELTA);
        for (int x = 0; x < dw; x++) { /* vectorised by the compiler */
            xs[x] = detfeed__warp_asr(add_wrap(X0, ad[x]),
                                      AB_BITS - DETFEED__WARP_FRAC_BITS);
            ys[x] = detfeed__warp_asr(add_wrap(Y0, bd[x]),
                                      AB_BITS - DETFEED__WARP_FRAC_BITS);
        }
        job_row(job, y);
    }
}

int detfeed__warp_affine_isa(const uint8_t *src, size_t src_stride, int src_width,
                             int src_height, uint8_t *dst, size_t dst_stride,
                             int dst_width, int dst_height, const double M[6],
                             const uint8_t border[3], detfeed_isa isa)
{
    warp_job job;
    int rc = job_begin(&job, src, src_stride, src_width, src_height, dst, dst_stride,
                       dst_width, dst_height, M, border, isa, 4);
    if (rc == DETFEED_OK) {
        double inv[6];
        detfeed__warp_invert_affine(M, inv);
        affine_rows(&job, inv);
    }
    free(job.block);
    return rc;
}

int detfeed_warp_affine(const uint8_t *src, size_t src_stride, int src_width,
                        int src_height, uint8_t *dst, size_t dst_stride, int dst_width,
                        int dst_height, const double M[6], const uint8_t border[3])
{
    return detfeed__warp_affine_isa(src, src_stride, src_width, src_height, dst,
                                    dst_stride, dst_width, dst_height, M, border,
                                    DETFEED_ISA_AUTO);
}

/* ---- warpPerspective ----------------------------------------------------- */

/* cv::invert(DECOMP_LU) of a 3x3 double matrix: the closed form with the
 * determinant expanded along the first row, 1 / det, and each cofactor
 * difference multiplied by it. A zero determinant gives all zeros. */
void detfeed__warp_invert_3x3(const double m[9], double t[9])
{
#define A(i, j) m[(i)*3 + (j)]
    double d = A(0, 0) * (A(1, 1) * A(2, 2) - A(1, 2) * A(2, 1)) -
               A(0, 1) * (A(1, 0) * A(2, 2) - A(1, 2) * A(2, 0)) +
               A(0, 2) * (A(1, 0) * A(2, 1) - A(1, 1) * A(2, 0));
    if (d == 0.0) {
        for (int i = 0; i < 9; i++)
            t[i] = 0.0;
        return;
    }
    d = 1.0 / d;
    t[0] = (A(1, 1) * A(2, 2) - A(1, 2) * A(2, 1)) * d;
    t[1] = (A(0, 2) * A(2, 1) - A(0, 1) * A(2, 2)) * d;
    t[2] = (A(0, 1) * A(1, 2) - A(0, 2) * A(1, 1)) * d;
    t[3] = (A(1, 2) * A(2, 0) - A(1, 0) * A(2, 2)) * d;
    t[4] = (A(0, 0) * A(2, 2) - A(0, 2) * A(2, 0)) * d;
    t[5] = (A(0, 2) * A(1, 0) - A(0, 0) * A(1, 2)) * d;
    t[6] = (A(1, 0) * A(2, 1) - A(1, 1) * A(2, 0)) * d;
    t[7] = (A(0, 1) * A(2, 0) - A(0, 0) * A(2, 1)) * d;
    t[8] = (A(0, 0) * A(1, 1) - A(0, 1) * A(1, 0)) * d;
#undef A
}

/* The width of OpenCV's column blocks (WarpPerspectiveInvoker, blocks of
 * at most 32 * 32 pixels, 16 rows high when there are 16 rows). */
static int block_width(int dw, int dh)
{
    int bh0 = dh < 16 ? dh : 16;
    int bw0 = 1024 / bh0;
    return bw0 < dw ? bw0 : dw;
}

/* clamp(v, INT_MIN, INT_MAX) and cvRound; a NaN gives INT_MIN. */
static int32_t persp_fix(double v)
{
    if (v != v)
        return INT32_MIN;
    v = v < -2147483648.0 ? -2147483648.0 : v;
    v = v > 2147483647.0 ? 2147483647.0 : v;
    return (int32_t)round_even(v);
}

void detfeed__warp_persp_portable(const double t[9], int xb, int y, int i0, int n,
                                  int32_t *xs, int32_t *ys)
{
    const double X0 = t[0] * xb + t[1] * y + t[2];
    const double Y0 = t[3] * xb + t[4] * y + t[5];
    const double W0 = t[6] * xb + t[7] * y + t[8];
    for (int i = i0; i < n; i++) {
        double W = W0 + t[6] * i;
        W = W != 0.0 ? 32.0 / W : 0.0;
        xs[i] = persp_fix((X0 + t[0] * i) * W);
        ys[i] = persp_fix((Y0 + t[3] * i) * W);
    }
}

static void persp_block_portable(const double t[9], int xb, int y, int n, int32_t *xs,
                                 int32_t *ys)
{
    detfeed__warp_persp_portable(t, xb, y, 0, n, xs, ys);
}

static void perspective_rows(warp_job *job, const double t[9])
{
    const int dw = job->dst_width, bw0 = block_width(dw, job->dst_height);
    for (int y = 0; y < job->dst_height; y++) {
        for (int xb = 0; xb < dw; xb += bw0) {
            int n = dw - xb < bw0 ? dw - xb : bw0;
            job->persp(t, xb, y, n, job->xs + xb, job->ys + xb);
        }
        job_row(job, y);
    }
}

int detfeed__warp_perspective_isa(const uint8_t *src, size_t src_stride, int src_width,
                                  int src_height, uint8_t *dst, size_t dst_stride,
                                  int dst_width, int dst_height, const double M[9],
                                  const uint8_t border[3], detfeed_isa isa)
{
    warp_job job;
    int rc = job_begin(&job, src, src_stride, src_width, src_height, dst, dst_stride,
                       dst_width, dst_height, M, border, isa, 2);
    if (rc == DETFEED_OK) {
        double t[9];
        detfeed__warp_invert_3x3(M, t);
        job.persp = persp_block_portable;
#ifdef DETFEED_HAVE_AVX2
        if (job.isa == DETFEED_ISA_AVX2)
            job.persp = detfeed__warp_persp_avx2;
#endif
        perspective_rows(&job, t);
    }
    free(job.block);
    return rc;
}

int detfeed_warp_perspective(const uint8_t *src, size_t src_stride, int src_width,
                             int src_height, uint8_t *dst, size_t dst_stride,
                             int dst_width, int dst_height, const double M[9],
                             const uint8_t border[3])
{
    return detfeed__warp_perspective_isa(src, src_stride, src_width, src_height, dst,
                                         dst_stride, dst_width, dst_height, M, border,
                                         DETFEED_ISA_AUTO);
}
