/*
 * warp_one.c - the host half of warp_one.h: the plan of one warp, which
 * makes the same choices as warp.c and warp5.c (argument checks, the
 * inversion of the forward matrix, the model of the chosen OpenCV) so that
 * detfeed__warp_one_px can compute any pixel on its own.
 */
#include "warp_one.h"

#include "warp_px.h"

#include <string.h>

/* OpenCV's remap() asserts src.cols < SHRT_MAX and src.rows < SHRT_MAX. */
#define MAX_SRC_SIDE 32767

/* The checks of detfeed_warp_affine_cv that do not concern buffers. */
static bool args_ok(const detfeed__warp_one *p, const double *M, const detfeed_cv *cv,
                    int sw, int sh, int dw, int dh, const uint8_t *border)
{
    return p != NULL && M != NULL && border != NULL && cv != NULL &&
           (unsigned)cv->version <= DETFEED_CV_4_DEBIAN &&
           (unsigned)cv->cpu <= DETFEED_CV_CPU_AVX512 && sw > 0 && sh > 0 &&
           sw < MAX_SRC_SIDE && sh < MAX_SRC_SIDE && dw > 0 && dh > 0;
}

/* The width of OpenCV 4.x's perspective column blocks (warp.c). */
static int cv4_block_width(int dw, int dh)
{
    int bh0 = dh < 16 ? dh : 16;
    int bw0 = 1024 / bh0;
    return bw0 < dw ? bw0 : dw;
}

/* The inverse of M as the CPU warps compute it, in 9 entries (an affine
 * inverse has 0, 0, 1 as its third row). */
static void invert(const double *M, bool perspective, double inv[9])
{
    inv[6] = inv[7] = 0.0;
    inv[8] = 1.0;
    if (perspective)
        detfeed__warp_invert_3x3(M, inv);
    else
        detfeed__warp_invert_affine(M, inv);
}

/* OpenCV 5.x's model (warp5.c, set_model): IPP for 5.1 with IPP on and a
 * source above 1 pixel a side, else the float kernel of cv's build. Both
 * fuse their lerps except on the SSE code path. */
static void plan5(detfeed__warp_one *p, const detfeed_cv *cv)
{
    const double *m = p->md;
    p->nan_byte = cv->version == DETFEED_CV_5_1 ? 255 : 0;
    p->fused = detfeed_cv_cpu_resolve(cv->cpu) != DETFEED_CV_CPU_SSE;
    if (cv->version == DETFEED_CV_5_1 && cv->ipp && p->src_w > 1 && p->src_h > 1) {
        bool scale = !p->persp &&
                     detfeed__wo_ipp_scale(m, p->src_w, p->src_h, p->dst_w, p->dst_h);
        p->kind = scale ? DETFEED__WARP_ONE_IPP_SCALE : DETFEED__WARP_ONE_IPP;
        return;
    }
    /* OpenCV has no AVX-512 build of this kernel: AVX-512 CPUs run AVX2. */
    p->kind = DETFEED__WARP_ONE_FLOAT;
    p->block = p->fused ? 16 : 8;
    p->nvec = p->dst_w - p->dst_w % p->block;
}

int detfeed__warp_one_plan(detfeed__warp_one *p, const double M[9], bool perspective,
                           const detfeed_cv *cv, int src_w, int src_h, int dst_w,
                           int dst_h, const uint8_t border[3])
{
    if (!args_ok(p, M, cv, src_w, src_h, dst_w, dst_h, border))
        return DETFEED_EINVAL;
    memset(p, 0, sizeof *p);
    p->src_w = src_w;
    p->src_h = src_h;
    p->dst_w = dst_w;
    p->dst_h = dst_h;
    p->persp = perspective;
    p->block = 1;
    p->nvec = dst_w;
    memcpy(p->border, border, 3);
    invert(M, perspective, p->md);
    for (int i = 0; i < 9; i++)
        p->mf[i] = (float)p->md[i];
    if (cv->version == DETFEED_CV_4 || cv->version == DETFEED_CV_4_DEBIAN) {
        p->kind =
            perspective ? DETFEED__WARP_ONE_CV4_PERSP : DETFEED__WARP_ONE_CV4_AFFINE;
        if (perspective)
            p->block = cv4_block_width(dst_w, dst_h);
        return DETFEED_OK;
    }
    plan5(p, cv);
    return DETFEED_OK;
}
