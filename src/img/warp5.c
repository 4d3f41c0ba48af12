/*
 * warp5.c - warpAffine and warpPerspective of 8-bit BGR images, INTER_LINEAR,
 * BORDER_CONSTANT, as each OpenCV of the reference stack ("The reference
 * stack" in detfeed.h) computes them:
 *
 *   - OpenCV 4.x: the fixed-point path of warp.c, unchanged;
 *   - OpenCV 5.0, and 5.1 with IPP off: the float32 kernel. The inverted
 *     matrix is rounded to float; per row Mx = y * M1 + M2 (two roundings,
 *     never fused); per pixel of a whole vector block sx = FMA(M0, x, Mx),
 *     and in the scalar tail after the last whole block sx = (x * M0 + y *
 *     M1) + M2 with OpenCV's AVX2 build contracting the first product (the
 *     same for sy; perspective divides by w computed alike). Floor and
 *     fraction in float, three lerps, round half to even. The build OpenCV
 *     dispatches to decides two things: AVX2 (any AVX2 or AVX-512 CPU)
 *     fuses every FMA and takes blocks of 16 pixels; SSE does a rounded
 *     multiply then an add and takes blocks of 8;
 *   - OpenCV 5.1 with IPP on (its default): Intel IPP, closed source,
 *     modelled from measurements (black-box, on IPP 2026.1's AVX2 code
 *     "l9" and, with OPENCV_IPP=sse42, its SSE4.2 code "y8"). Two kernels:
 *       scale: an affine matrix whose inverse has M1 == M3 == 0 (scale and
 *         translation: every Ultralytics warp without rotation, shear or
 *         perspective) when some destination column has 0 <= sx <= W - 2
 *         and some row 0 <= sy <= H - 2 (IPP's inner region is not empty;
 *         otherwise the general kernel runs: destinations that only see
 *         the source's last row or column, most sources of 2 pixels a
 *         side). The position in double, floor in double, only the
 *         fraction rounded to float; lerps along x, then y, except: a
 *         pixel with one x tap and both y taps inside (ix == -1 or W - 1)
 *         lerps along y first; on a flipped y axis (M4 < 0) a pixel with
 *         one y tap inside (iy == -1 or H - 1) lerps along y from the
 *         bottom row with weight 1 - ay (rounded to float).
 *       general: any other affine matrix, and every perspective one (also
 *         one whose last row is 0 0 1). The position in double (divided by
 *         w in double). A pixel whose four taps are all inside, 0 <= sx <
 *         W - 1 and 0 <= sy < H - 1 in double, rounds the position to
 *         float and splits it in float; any other pixel splits the double
 *         as the scale kernel does. Then the lerps run along y first, then
 *         x (the blend's order matters: it is what rotated warps differed
 *         by). The classification is per pixel, independent of the row
 *         stripes OpenCV hands to IPP per thread (1 to 16 threads gave the
 *         same bytes).
 *     Exact on every case measured, except where the scale kernel's choice
 *     hangs on a position within rounding (~1e-14) of 0, W - 2 or H - 2:
 *     IPP decides that with its own arithmetic (likely through the forward
 *     matrix), not modelled.
 *     IPP fuses its lerps on AVX2 and rounds product and sum on SSE4.2,
 *     following the CPU setting; AVX-512 CPUs ("k0") are taken to fuse like
 *     AVX2 (not measured: no such CPU here). 5.1 keeps sources of 1 pixel a
 *     side away from IPP (measured);
 *   - non-finite positions: as measured, see warp_px.h.
 *
 * The work is split in two per destination row: the positions of the row
 * (an integer tap and a float fraction per axis and pixel, warp_px.h), then
 * a row sampler turns them into bytes. With scale and translation only
 * (Ultralytics' default warp), positions are separable: each source row is
 * lerped horizontally once and destination rows are vertical lerps of two
 * of them (warp_px.h). The portable position and row kernels are in
 * warp5_rows.c; all have AVX2 versions in warp5_avx2.c that give the
 * same bytes; detfeed's own code path and the OpenCV build it emulates are
 * independent choices.
 *
 * The file is compiled with -ffp-contract=off, as the whole library: every
 * fused multiply-add is an explicit fmaf, every other operation rounds.
 */
#include "warp_px.h"

#include <stdlib.h>
#include <string.h>

/* ---- arguments, the stack, the rows ---------------------------------------- */

/* One call's state. */
typedef struct warp5_job {
    detfeed__warp5 w;
    detfeed__warp_src src;
    uint8_t *dst;
    size_t dst_stride;
    int dw, dh;
    bool avx2; /* detfeed's AVX2 code path */
    detfeed__warp5_pos pos;
    /* Separable rows: two lerped source rows (3 * dw floats each) and the
     * source row each holds (INT_MIN: none yet; -1: any row outside). */
    float *h[2];
    int hrow[2];
    void *block;
} warp5_job;

/* The variants of the 5.x warps (core/internal.h): portable and AVX2. */
#define WARP5_VARIANTS                                                                 \
    (DETFEED__ISA_BIT(DETFEED_ISA_PORTABLE) | DETFEED__ISA_BUILT_AVX2)

static bool cv_ok(const detfeed_cv *cv)
{
    return cv != NULL && (unsigned)cv->version <= DETFEED_CV_4_DEBIAN &&
           (unsigned)cv->cpu <= DETFEED_CV_CPU_AVX512;
}

/* The model of `cv` for the inverted matrix `inv` (9 entries). */
static void set_model(detfeed__warp5 *w, const detfeed_cv *cv, const double inv[9],
                      bool persp, int dw, int dh)
{
    w->persp = persp;
    for (int i = 0; i < 9; i++) {
        w->md[i] = inv[i];
        w->mf[i] = (float)inv[i];
    }
    /* Measured: a NaN blend stores 0 in 5.0 and 255 in 5.1; 5.1 does not
     * hand sources of 1 pixel a side to IPP (its float kernel's bytes). */
    w->nan_byte = cv->version == DETFEED_CV_5_1 ? 255 : 0;
    w->fused = detfeed_cv_cpu_resolve(cv->cpu) != DETFEED_CV_CPU_SSE;
    w->yfirst = false;
    if (cv->version == DETFEED_CV_5_1 && cv->ipp && w->src_width > 1 &&
        w->src_height > 1) {
        bool scale =
            !persp && detfeed__wo_ipp_scale(inv, w->src_width, w->src_height, dw, dh);
        w->model = scale ? DETFEED__WARP5_IPP_SCALE : DETFEED__WARP5_IPP;
        w->yfirst = !scale;
        w->block = 1;
        return;
    }
    /* OpenCV has no AVX-512 build of this kernel: AVX-512 CPUs run AVX2. */
    w->model = DETFEED__WARP5_FLOAT;
    w->block = w->fused ? 16 : 8;
}

/* Checks the arguments and allocates the positions of a row (16 bytes a
 * pixel) and the two lerped rows (24 bytes a pixel). */
static int job_begin(warp5_job *job, const uint8_t *src, size_t src_stride, int sw,
                     int sh, uint8_t *dst, size_t dst_stride, int dw, int dh,
                     const double *M, const uint8_t border[3], detfeed_isa isa)
{
    memset(job, 0, sizeof *job);
    size_t ns = 0, bytes = 0;
    int rc = detfeed__warp_check(src, src_stride, sw, sh, dst, dst_stride, dw, dh, M,
                                 border, &ns);
    if (rc != DETFEED_OK || (unsigned)isa > DETFEED_ISA_AVX512)
        return DETFEED_EINVAL;
    rc = detfeed__isa_pick(isa, WARP5_VARIANTS);
    if (rc < 0)
        return DETFEED_ENOTSUPPORTED;
    job->avx2 = rc == DETFEED_ISA_AVX2;
    if (!detfeed__mul_size((size_t)dw, 10 * sizeof(float), &bytes))
        return DETFEED_ENOMEM;
    job->block = malloc(bytes);
    if (job->block == NULL)
        return DETFEED_ENOMEM;
    int32_t *ints = job->block;
    float *floats = (float *)(ints + 2 * (size_t)dw);
    job->pos = (detfeed__warp5_pos){
        .ix = ints, .iy = ints + dw, .ax = floats, .ay = floats + dw};
    job->h[0] = floats + 2 * (size_t)dw;
    job->h[1] = floats + 5 * (size_t)dw;
    job->hrow[0] = job->hrow[1] = INT32_MIN;
    job->src = (detfeed__warp_src){.px = src,
                                   .stride = src_stride,
                                   .width = sw,
                                   .height = sh,
                                   .border = {border[0], border[1], border[2]},
                                   .offsets32 = ns < ((size_t)1 << 31)};
    job->w.src_width = sw;
    job->w.src_height = sh;
    job->dst = dst;
    job->dst_stride = dst_stride;
    job->dw = dw;
    job->dh = dh;
    return DETFEED_OK;
}

static void row_positions(const warp5_job *job, int y)
{
#ifdef DETFEED_HAVE_AVX2
    if (job->avx2 && job->w.model == DETFEED__WARP5_FLOAT) {
        if (detfeed__warp5_float_pos_avx2(&job->w, y, job->dw, &job->pos))
            detfeed__warp5_settle(&job->w, job->dw, &job->pos);
        return;
    }
    if (job->avx2 && job->w.model == DETFEED__WARP5_IPP) {
        detfeed__warp5_ipp_pos_avx2(&job->w, y, job->dw, &job->pos);
        return;
    }
#endif
    detfeed__warp5_row_pos(&job->w, y, job->dw, &job->pos);
}

/* Row y's tap and fraction on the y axis when positions are separable: in
 * the float kernel sy = y * M4 + M5 in every column (FMA(0, x, My) is My,
 * and so is the tail's sum), in IPP's model the double position. */
static void sep_y(const detfeed__warp5 *w, int y, int32_t *iy, float *ay)
{
    if (w->model == DETFEED__WARP5_IPP_SCALE) {
        detfeed__warp5_ipp_split(w->md[4] * y + w->md[5], w->src_height, false, iy, ay);
        return;
    }
    const float yf = (float)y;
    detfeed__warp5_split(yf * w->mf[4] + w->mf[5], w->src_height, iy, ay);
}

/* Whether the rows are separable (see warp_px.h); if so the columns' ix
 * and ax are in job->pos. The float kernel's x positions are then the
 * same in every row (y * 0 + M2 is M2, the tail's y * 0 adds a zero). */
static bool sep_begin(warp5_job *job)
{
    const detfeed__warp5 *w = &job->w;
    if (w->model == DETFEED__WARP5_IPP_SCALE) {
        detfeed__warp5_ipp_scale_columns(w, job->dw, &job->pos);
        return true;
    }
    if (w->model != DETFEED__WARP5_FLOAT || w->persp || w->mf[1] != 0.0f ||
        w->mf[3] != 0.0f || detfeed__warp5_float_pos(w, 0, 0, job->dw, &job->pos))
        return false;
    for (int y = 0; y < job->dh; y++) {
        int32_t iy;
        float ay;
        sep_y(w, y, &iy, &ay);
        if (ay != ay)
            return false;
    }
    return true;
}

/* The lerped source row r (every row outside is the same: the border),
 * kept in the slot not holding row `keep`. */
static const float *sep_hrow(warp5_job *job, int r, int keep)
{
    if (r < 0 || r >= job->src.height)
        r = -1;
    if (keep < 0 || keep >= job->src.height)
        keep = -1;
    for (int k = 0; k < 2; k++)
        if (job->hrow[k] == r)
            return job->h[k];
    const int k = job->hrow[0] == keep ? 1 : 0;
    job->hrow[k] = r;
#ifdef DETFEED_HAVE_AVX2
    if (job->avx2) {
        detfeed__warp5_hrow_avx2(&job->src, &job->w, &job->pos, r, job->dw, job->h[k]);
        return job->h[k];
    }
#endif
    detfeed__warp5_hrow_portable(&job->src, &job->w, &job->pos, r, job->dw, job->h[k]);
    return job->h[k];
}

/* The destination row d from the lerped rows h0 and h1. */
static void sep_vrow(const warp5_job *job, const float *h0, const float *h1, float ay,
                     uint8_t *d)
{
#ifdef DETFEED_HAVE_AVX2
    if (job->avx2) {
        detfeed__warp5_vrow_avx2(&job->w, h0, h1, ay, d, job->dw);
        return;
    }
#endif
    detfeed__warp5_vrow_portable(&job->w, h0, h1, ay, d, job->dw);
}

static void sep_rows(warp5_job *job)
{
    for (int y = 0; y < job->dh; y++) {
        uint8_t *d = job->dst + (size_t)y * job->dst_stride;
        int32_t iy;
        float ay;
        sep_y(&job->w, y, &iy, &ay);
        const float *h0 = sep_hrow(job, iy, iy + 1);
        const float *h1 = sep_hrow(job, iy + 1, iy);
        if (job->w.model == DETFEED__WARP5_IPP_SCALE && job->w.md[4] < 0.0 &&
            (iy == -1 || iy == job->src.height - 1))
            sep_vrow(job, h1, h0, 1.0f - ay, d); /* from the bottom row */
        else
            sep_vrow(job, h0, h1, ay, d);
        if (job->w.model == DETFEED__WARP5_IPP_SCALE)
            detfeed__warp5_ipp_scale_edges(&job->src, &job->w, &job->pos, iy, ay, d,
                                           job->dw);
    }
}

static void run_rows(warp5_job *job)
{
    if (sep_begin(job)) {
        sep_rows(job);
        return;
    }
    for (int y = 0; y < job->dh; y++) {
        uint8_t *d = job->dst + (size_t)y * job->dst_stride;
        row_positions(job, y);
#ifdef DETFEED_HAVE_AVX2
        if (job->avx2) {
            detfeed__warp5_row_avx2(&job->src, &job->w, &job->pos, d, job->dw);
            continue;
        }
#endif
        detfeed__warp5_row_portable(&job->src, &job->w, &job->pos, d, job->dw);
    }
}

/* Both warps: `n` matrix entries (6 or 9). */
static int warp5(const uint8_t *src, size_t src_stride, int sw, int sh, uint8_t *dst,
                 size_t dst_stride, int dw, int dh, const double *M,
                 const uint8_t border[3], const detfeed_cv *cv, detfeed_isa isa, int n)
{
    warp5_job job;
    int rc = job_begin(&job, src, src_stride, sw, sh, dst, dst_stride, dw, dh, M,
                       border, isa);
    if (rc == DETFEED_OK) {
        double inv[9] = {0, 0, 0, 0, 0, 0, 0, 0, 1};
        if (n == 6)
            detfeed__warp_invert_affine(M, inv);
        else
            detfeed__warp_invert_3x3(M, inv);
        set_model(&job.w, cv, inv, n == 9, dw, dh);
        run_rows(&job);
    }
    free(job.block);
    return rc;
}

int detfeed__warp5_affine_isa(const uint8_t *src, size_t src_stride, int src_width,
                              int src_height, uint8_t *dst, size_t dst_stride,
                              int dst_width, int dst_height, const double M[6],
                              const uint8_t border[3], const detfeed_cv *cv,
                              detfeed_isa isa)
{
    if (!cv_ok(cv))
        return DETFEED_EINVAL;
    if (cv->version == DETFEED_CV_4 || cv->version == DETFEED_CV_4_DEBIAN)
        return detfeed__warp_affine_isa(src, src_stride, src_width, src_height, dst,
                                        dst_stride, dst_width, dst_height, M, border,
                                        isa);
    return warp5(src, src_stride, src_width, src_height, dst, dst_stride, dst_width,
                 dst_height, M, border, cv, isa, 6);
}

int detfeed__warp5_perspective_isa(const uint8_t *src, size_t src_stride, int src_width,
                                   int src_height, uint8_t *dst, size_t dst_stride,
                                   int dst_width, int dst_height, const double M[9],
                                   const uint8_t border[3], const detfeed_cv *cv,
                                   detfeed_isa isa)
{
    if (!cv_ok(cv))
        return DETFEED_EINVAL;
    if (cv->version == DETFEED_CV_4 || cv->version == DETFEED_CV_4_DEBIAN)
        return detfeed__warp_perspective_isa(src, src_stride, src_width, src_height,
                                             dst, dst_stride, dst_width, dst_height, M,
                                             border, isa);
    return warp5(src, src_stride, src_width, src_height, dst, dst_stride, dst_width,
                 dst_height, M, border, cv, isa, 9);
}

int detfeed_warp_affine_cv(const uint8_t *src, size_t src_stride, int src_width,
                           int src_height, uint8_t *dst, size_t dst_stride,
                           int dst_width, int dst_height, const double M[6],
                           const uint8_t border[3], const detfeed_cv *cv)
{
    return detfeed__warp5_affine_isa(src, src_stride, src_width, src_height, dst,
                                     dst_stride, dst_width, dst_height, M, border, cv,
                                     DETFEED_ISA_AUTO);
}

int detfeed_warp_perspective_cv(const uint8_t *src, size_t src_stride, int src_width,
                                int src_height, uint8_t *dst, size_t dst_stride,
                                int dst_width, int dst_height, const double M[9],
                                const uint8_t border[3], const detfeed_cv *cv)
{
    return detfeed__warp5_perspective_isa(src, src_stride, src_width, src_height, dst,
                                          dst_stride, dst_width, dst_height, M, border,
                                          cv, DETFEED_ISA_AUTO);
}
