/*
 * warp.c - OpenCV-exact warpAffine and warpPerspective of 8-bit BGR images,
 * INTER_LINEAR, BORDER_CONSTANT.
 *
 * The arithmetic is OpenCV 4.6's (the fixed-point path of 4.6-4.10 in
 * imgproc/src/imgwarp.cpp), as measured against Debian's build:
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
 * int32 arrays, then a row sampler (portable in warp_rows.c, AVX2 in warp_avx2.c)
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

int detfeed__warp_check(const uint8_t *src, size_t src_stride, int sw, int sh,
                        const uint8_t *dst, size_t dst_stride, int dw, int dh,
                        const double *M, const uint8_t *border, size_t *src_bytes)
{
    size_t ns = image_bytes(src, src_stride, sw, sh);
    size_t nd = image_bytes(dst, dst_stride, dw, dh);
    if (ns == 0 || nd == 0 || M == NULL || border == NULL || sw >= MAX_SRC_SIDE ||
        sh >= MAX_SRC_SIDE || detfeed__overlap(src, ns, dst, nd))
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

/* The variants of the 4.x warps (core/internal.h): portable and AVX2. */
#define WARP_VARIANTS (DETFEED__ISA_BIT(DETFEED_ISA_PORTABLE) | DETFEED__ISA_BUILT_AVX2)

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
    job->isa = detfeed__isa_pick(isa, WARP_VARIANTS);
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
