/*
 * cutmix.c - CutMix as Ultralytics 8.4 computes it (CutMix.get_params,
 * apply_image, apply_instances): float32 intersections over box areas,
 * the chosen area's pixels from the partner, the partner's instances
 * there clipped to it.
 */
#include "cutmix.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* bbox_ioa of area a over box b, in float32: the intersection (each side
 * clipped at 0) over b's area + 1e-7. */
static float ioa(const float a[4], const float *b)
{
    float w = fminf(a[2], b[2]) - fmaxf(a[0], b[0]);
    float h = fminf(a[3], b[3]) - fmaxf(a[1], b[1]);
    float inter = fmaxf(w, 0.0f) * fmaxf(h, 0.0f);
    float area = (b[2] - b[0]) * (b[3] - b[1]);
    return inter / (area + 1e-7f);
}

/* Whether area a overlaps none of inst's boxes (ioa1.sum(axis=1) <= 0). */
static bool area_free(const float a[4], const detfeed__inst *inst)
{
    float sum = 0.0f;
    for (int i = 0; i < inst->n; i++)
        sum += ioa(a, inst->box + 4 * (size_t)i);
    return sum <= 0.0f;
}

/* The area picked: np.random.choice over the free ones, in order; -1 when
 * none is free. */
static int pick_area(const detfeed__recipe *r, const detfeed__inst *inst)
{
    int free_k[DETFEED__CUT_AREAS], nfree = 0;
    for (int k = 0; k < DETFEED__CUT_AREAS; k++) {
        float a[4];
        for (int j = 0; j < 4; j++)
            a[j] = (float)r->cut_area[k][j];
        if (area_free(a, inst))
            free_k[nfree++] = k;
    }
    if (nfree == 0)
        return -1;
    int j = (int)(r->cut_choice * nfree);
    return free_k[j < nfree ? j : nfree - 1];
}

/* Adds (dx, dy) to every coordinate of inst, in float32 (add_padding). */
static void shift(detfeed__inst *inst, int dx, int dy)
{
    float fx = (float)dx, fy = (float)dy;
    for (int i = 0; i < inst->n; i++) {
        float *b = inst->box + 4 * (size_t)i;
        b[0] += fx, b[1] += fy, b[2] += fx, b[3] += fy;
        float *p = inst->npt ? inst->seg + (size_t)i * inst->npt * 2 : NULL;
        for (int k = 0; p && k < inst->npt; k++)
            p[2 * k] += fx, p[2 * k + 1] += fy;
        float *q = inst->nkpt ? inst->kpt + (size_t)i * inst->nkpt * 3 : NULL;
        for (int k = 0; q && k < inst->nkpt; k++)
            q[3 * k] += fx, q[3 * k + 1] += fy;
    }
}

/* The partner's instances the area covers enough (indexes2), kept in
 * pinst; whether there is any. */
static int covered(detfeed__inst *pinst, const float a[4], float thr, bool *any)
{
    bool *keep = malloc((size_t)(pinst->n ? pinst->n : 1));
    if (keep == NULL)
        return DETFEED_ENOMEM;
    for (int i = 0; i < pinst->n; i++)
        keep[i] = ioa(a, pinst->box + 4 * (size_t)i) >= thr;
    detfeed__inst_keep(pinst, keep);
    free(keep);
    *any = pinst->n > 0;
    return DETFEED_OK;
}

/* The area's rows of the partner's pixels into img. */
static void paste(detfeed__img *img, const detfeed__img *pimg, const int a[4])
{
    size_t row = (size_t)img->w * 3, bytes = (size_t)(a[2] - a[0]) * 3;
    for (int y = a[1]; y < a[3]; y++)
        memcpy(img->px + y * row + (size_t)a[0] * 3, pimg->px + y * row + (size_t)a[0] * 3,
               bytes);
}

int detfeed__cutmix(detfeed__img *img, detfeed__inst *inst, const detfeed__img *pimg,
                    detfeed__inst *pinst, const detfeed__recipe *r,
                    const detfeed__stack *st, bool *applied)
{
    *applied = false;
    if (pimg->w != img->w || pimg->h != img->h)
        return DETFEED_EINVAL;
    int k = pick_area(r, inst);
    if (k < 0)
        return DETFEED_OK;
    const int *a = r->cut_area[k];
    float af[4] = {(float)a[0], (float)a[1], (float)a[2], (float)a[3]};
    float thr = inst->n > 0 && inst->npt > 0 ? 0.01f : 0.1f;
    bool any = false;
    int rc = covered(pinst, af, thr, &any);
    if (rc != DETFEED_OK || !any)
        return rc;
    shift(pinst, -a[0], -a[1]);
    detfeed__inst_clip(pinst, (float)(a[2] - a[0]), (float)(a[3] - a[1]), st);
    shift(pinst, a[0], a[1]);
    rc = detfeed__inst_append(inst, pinst);
    if (rc == DETFEED_OK) {
        paste(img, pimg, a);
        *applied = true;
    }
    return rc;
}
