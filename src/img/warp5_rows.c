/*
 * warp5_rows.c - the portable row kernels of the 5.x warps (warp5.c): the
 * positions of a row in each model, the settling of non-finite ones, and
 * the row samplers (whole, horizontal and vertical lerps). They are the
 * portable variant and also the tails of the AVX2 variant (warp5_avx2.c),
 * which is why they live apart from the dispatcher: neither variant file
 * calls back into warp5.c. Compiled with -ffp-contract=off, as the whole
 * library: every fused multiply-add is an explicit fmaf.
 */
#include "warp_px.h"

#include <math.h>
#include <string.h>

/* ---- positions ------------------------------------------------------------ */

bool detfeed__warp5_float_pos(const detfeed__warp5 *w, int y, int x0, int n,
                              const detfeed__warp5_pos *p)
{
    const float *m = w->mf;
    const bool fused = w->fused;
    const float yf = (float)y;
    /* The row terms are two roundings in every build (measured). */
    const float mx = yf * m[1] + m[2], my = yf * m[4] + m[5], mw = yf * m[7] + m[8];
    const int nvec = n - n % w->block;
    bool nonfinite = false;
    for (int x = x0; x < n; x++) {
        const float xf = (float)x;
        float sx, sy;
        if (x < nvec) {
            sx = detfeed__wo_fma(m[0], xf, mx, fused);
            sy = detfeed__wo_fma(m[3], xf, my, fused);
            if (w->persp) {
                float ww = detfeed__wo_fma(m[6], xf, mw, fused);
                sx = sx / ww;
                sy = sy / ww;
            }
        } else {
            sx = detfeed__warp5_tail(m, xf, yf, fused);
            sy = detfeed__warp5_tail(m + 3, xf, yf, fused);
            if (w->persp) {
                float ww = detfeed__warp5_tail(m + 6, xf, yf, fused);
                sx = sx / ww;
                sy = sy / ww;
            }
        }
        detfeed__warp5_split(sx, w->src_width, &p->ix[x], &p->ax[x]);
        detfeed__warp5_split(sy, w->src_height, &p->iy[x], &p->ay[x]);
        nonfinite |= p->ax[x] != p->ax[x] || p->ay[x] != p->ay[x];
    }
    return nonfinite;
}

/* All four taps of pixel i outside the source. */
static bool all_out(const detfeed__warp5 *w, const detfeed__warp5_pos *p, int i)
{
    return p->ix[i] < -1 || p->ix[i] >= w->src_width || p->iy[i] < -1 ||
           p->iy[i] >= w->src_height;
}

static bool has_nan(const detfeed__warp5_pos *p, int i)
{
    return p->ax[i] != p->ax[i] || p->ay[i] != p->ay[i];
}

static void clear_nan(const detfeed__warp5_pos *p, int i)
{
    if (p->ax[i] != p->ax[i])
        p->ax[i] = 0.0f;
    if (p->ay[i] != p->ay[i])
        p->ay[i] = 0.0f;
}

void detfeed__warp5_settle(const detfeed__warp5 *w, int n, const detfeed__warp5_pos *p)
{
    const int nvec = n - n % w->block;
    for (int b = 0; b < nvec; b += w->block) {
        bool nan = false, out = true;
        for (int i = b; i < b + w->block; i++) {
            nan |= has_nan(p, i);
            out &= all_out(w, p, i);
        }
        if (nan && out)
            for (int i = b; i < b + w->block; i++)
                clear_nan(p, i);
    }
    for (int i = nvec; i < n; i++)
        clear_nan(p, i);
}

/* IPP, scale and translation: the column part of every row, once. */
void detfeed__warp5_ipp_scale_columns(const detfeed__warp5 *w, int n,
                                      const detfeed__warp5_pos *p)
{
    for (int x = 0; x < n; x++)
        detfeed__warp5_ipp_split(w->md[0] * x + w->md[2], w->src_width, false,
                                 &p->ix[x], &p->ax[x]);
}

static void ipp_scale_row(const detfeed__warp5 *w, int y, int n,
                          const detfeed__warp5_pos *p)
{
    int32_t iy;
    float ay;
    detfeed__warp5_ipp_split(w->md[4] * y + w->md[5], w->src_height, false, &iy, &ay);
    for (int x = 0; x < n; x++) {
        p->iy[x] = iy;
        p->ay[x] = ay;
    }
}

/* IPP, any other matrix: in double; an inner pixel rounds it to float, an
 * edge pixel rounds only its fraction. */
void detfeed__warp5_ipp_pos(const detfeed__warp5 *w, int y, int x0, int n,
                            const detfeed__warp5_pos *p)
{
    const double *m = w->md;
    for (int x = x0; x < n; x++) {
        double sx = m[0] * x + m[1] * y + m[2], sy = m[3] * x + m[4] * y + m[5];
        if (w->persp) {
            double ww = m[6] * x + m[7] * y + m[8];
            sx = sx / ww;
            sy = sy / ww;
        }
        const bool inner = detfeed__wo_ipp_inner(sx, sy, w->src_width, w->src_height);
        detfeed__warp5_ipp_split(sx, w->src_width, inner, &p->ix[x], &p->ax[x]);
        detfeed__warp5_ipp_split(sy, w->src_height, inner, &p->iy[x], &p->ay[x]);
    }
}

void detfeed__warp5_row_pos(const detfeed__warp5 *w, int y, int n,
                            const detfeed__warp5_pos *p)
{
    switch (w->model) {
    case DETFEED__WARP5_FLOAT:
        if (detfeed__warp5_float_pos(w, y, 0, n, p))
            detfeed__warp5_settle(w, n, p);
        break;
    case DETFEED__WARP5_IPP_SCALE:
        detfeed__warp5_ipp_scale_columns(w, n, p);
        ipp_scale_row(w, y, n, p);
        break;
    case DETFEED__WARP5_IPP:
        detfeed__warp5_ipp_pos(w, y, 0, n, p);
        break;
    }
}

void detfeed__warp5_ipp_scale_edges(const detfeed__warp_src *s, const detfeed__warp5 *w,
                                    const detfeed__warp5_pos *p, int32_t iy, float ay,
                                    uint8_t *d, int n)
{
    if (iy < 0 || iy >= s->height - 1)
        return;
    for (int x = 0; x < n; x++)
        if (p->ix[x] == -1 || p->ix[x] == s->width - 1)
            detfeed__warp5_pixel_order(s, w, p->ix[x], iy, p->ax[x], ay,
                                       DETFEED__WO_YFIRST, d + (size_t)x * 3);
}

/* ---- the portable row samplers -------------------------------------------- */

void detfeed__warp5_row_portable(const detfeed__warp_src *s, const detfeed__warp5 *w,
                                 const detfeed__warp5_pos *p, uint8_t *d, int n)
{
    for (int i = 0; i < n; i++)
        detfeed__warp5_pixel(s, w, p->ix[i], p->iy[i], p->ax[i], p->ay[i],
                             d + (size_t)i * 3);
}

void detfeed__warp5_hrow_portable(const detfeed__warp_src *s, const detfeed__warp5 *w,
                                  const detfeed__warp5_pos *p, int r, int n, float *h)
{
    const uint8_t *row = r >= 0 && r < s->height ? s->px + (size_t)r * s->stride : NULL;
    for (int c = 0; c < 3; c++)
        for (int x = 0; x < n; x++)
            h[(size_t)c * n + x] =
                detfeed__warp5_hpx(s, row, p->ix[x], p->ax[x], c, w->fused);
}

void detfeed__warp5_vrow_portable(const detfeed__warp5 *w, const float *h0,
                                  const float *h1, float ay, uint8_t *d, int n)
{
    for (int x = 0; x < n; x++)
        for (int c = 0; c < 3; c++) {
            const float v0 = h0[(size_t)c * n + x], v1 = h1[(size_t)c * n + x];
            d[(size_t)x * 3 + c] =
                detfeed__wo_byte(detfeed__wo_fma(ay, v1 - v0, v0, w->fused));
        }
}
