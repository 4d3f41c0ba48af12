/*
 * mix.c - CutMix and CopyPaste as Ultralytics 8.4 computes them
 * (get_params, apply_image, apply_instances). CutMix: float32
 * intersections over box areas, the chosen area's pixels from the
 * partner, the partner's instances there clipped to it. CopyPaste: the
 * candidates' overlaps, their order, the filled polygons' pixels.
 */
#include "mix.h"

#include "core/npsort.h"
#include "masks.h"

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
        memcpy(img->px + y * row + (size_t)a[0] * 3,
               pimg->px + y * row + (size_t)a[0] * 3, bytes);
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

/* ---- CopyPaste ------------------------------------------------------------ */

/* Candidate i of inst2 is eligible when its box overlaps each of inst's by
 * less than 30 % of that box's area ((ioa < 0.30).all(1)); its key is the
 * largest such overlap (ioa.max(1)). Returns the eligible count, their
 * indices ascending in idx and keys in key[i]. */
static int eligible(const detfeed__inst *inst, const detfeed__inst *inst2, int *idx,
                    float *key)
{
    int m = 0;
    for (int i = 0; i < inst2->n; i++) {
        const float *a = inst2->box + 4 * (size_t)i;
        bool ok = true;
        float mx = -INFINITY;
        for (int j = 0; j < inst->n; j++) {
            float v = ioa(a, inst->box + 4 * (size_t)j);
            ok = ok && v < 0.30f;
            mx = fmaxf(mx, v);
        }
        key[i] = mx;
        if (ok)
            idx[m++] = i;
    }
    return m;
}

/* The union of the selected polygons, filled with 1 on a w x h mask
 * (cv2.drawContours of each, its points truncated to int32). */
static int fill_selected(const detfeed__inst *inst2, const int *sel, int k, int w,
                         int h, uint8_t *mask)
{
    if (inst2->npt == 0) /* Ultralytics fails on instances without polygons */
        return DETFEED_ENOTSUPPORTED;
    int32_t *pts = malloc((size_t)inst2->npt * 2 * sizeof *pts);
    if (pts == NULL)
        return DETFEED_ENOMEM;
    int rc = DETFEED_OK;
    for (int s = 0; rc == DETFEED_OK && s < k; s++) {
        const float *p = inst2->seg + (size_t)sel[s] * inst2->npt * 2;
        for (int q = 0; q < 2 * inst2->npt; q++)
            pts[q] = (int32_t)p[q];
        rc = detfeed__fill_poly(mask, w, h, pts, inst2->npt, 1);
    }
    free(pts);
    return rc;
}

/* cv2.copyTo(src, mask, img): the masked pixels from src; src NULL: from
 * img mirrored left-right (cv2.flip(img, 1), read before any change). */
static int copy_masked(detfeed__img *img, const uint8_t *src, const uint8_t *mask)
{
    size_t row = (size_t)img->w * 3;
    uint8_t *flipped = src ? NULL : malloc(row);
    if (src == NULL && flipped == NULL)
        return DETFEED_ENOMEM;
    for (int y = 0; y < img->h; y++) {
        const uint8_t *m = mask + (size_t)y * img->w;
        uint8_t *d = img->px + y * row;
        const uint8_t *s = src ? src + y * row : flipped;
        if (src == NULL)
            for (int x = 0; x < img->w; x++)
                memcpy(flipped + 3 * (size_t)x, d + 3 * (size_t)(img->w - 1 - x), 3);
        for (int x = 0; x < img->w; x++)
            if (m[x])
                memcpy(d + 3 * (size_t)x, s + 3 * (size_t)x, 3);
    }
    free(flipped);
    return DETFEED_OK;
}

/* inst2 reduced to its k selected instances, in their order. */
static int keep_selected(detfeed__inst *inst2, int *sel, int k)
{
    int *order = malloc((size_t)(inst2->n ? inst2->n : 1) * sizeof *order);
    bool *taken = calloc((size_t)(inst2->n ? inst2->n : 1), sizeof *taken);
    int rc = order && taken ? DETFEED_OK : DETFEED_ENOMEM;
    for (int s = 0; rc == DETFEED_OK && s < k; s++)
        order[s] = sel[s], taken[sel[s]] = true;
    for (int i = 0, at = k; rc == DETFEED_OK && i < inst2->n; i++)
        if (!taken[i])
            order[at++] = i;
    if (rc == DETFEED_OK)
        rc = detfeed__inst_permute(inst2, order);
    if (rc == DETFEED_OK)
        inst2->n = k;
    free(order);
    free(taken);
    return rc;
}

/* The selected candidates: eligible, ordered by key (np.argsort: ties as
 * the reference NumPy orders them), the first round(p * count) (Python's
 * round: half to even) into pos; their count in *k. */
static int select_pasted(const detfeed__inst *inst, const detfeed__inst *inst2,
                         double p, detfeed_numpy_sort variant, int *idx, int *pos,
                         float *key, float *sub, int *k)
{
    int m = eligible(inst, inst2, idx, key);
    for (int i = 0; i < m; i++)
        sub[i] = key[idx[i]];
    int rc = detfeed__np_argsort(sub, DETFEED_NUMPY_FLOAT32, m, pos, variant);
    *k = rc == DETFEED_OK ? (int)rint(p * m) : 0;
    for (int s = 0; s < *k; s++)
        pos[s] = idx[pos[s]];
    return rc;
}

/* The selection, the pixels and the instances (src NULL: mode flip). */
static int paste_objects(detfeed__img *img, detfeed__inst *inst, const uint8_t *src,
                         detfeed__inst *inst2, double p, detfeed_numpy_sort variant)
{
    size_t n2 = (size_t)(inst2->n ? inst2->n : 1);
    int *idx = malloc(n2 * sizeof *idx), *pos = malloc(n2 * sizeof *pos);
    float *key = malloc(n2 * sizeof *key), *sub = malloc(n2 * sizeof *sub);
    uint8_t *mask = NULL;
    int k = 0, rc = idx && pos && key && sub ? DETFEED_OK : DETFEED_ENOMEM;
    if (rc == DETFEED_OK)
        rc = select_pasted(inst, inst2, p, variant, idx, pos, key, sub, &k);
    if (rc == DETFEED_OK && k > 0)
        rc = (mask = calloc((size_t)img->w * img->h, 1)) != NULL
                 ? fill_selected(inst2, pos, k, img->w, img->h, mask)
                 : DETFEED_ENOMEM;
    if (rc == DETFEED_OK && k > 0)
        rc = copy_masked(img, src, mask);
    if (rc == DETFEED_OK && k > 0)
        rc = keep_selected(inst2, pos, k);
    if (rc == DETFEED_OK && k > 0)
        rc = detfeed__inst_append(inst, inst2);
    free(idx);
    free(pos);
    free(key);
    free(sub);
    free(mask);
    return rc;
}

/* Instances.fliplr(w) on x1, y1, x2, y2 boxes, in float32. */
static void mirror(detfeed__inst *in, int w)
{
    float fw = (float)w;
    for (int i = 0; i < in->n; i++) {
        float *b = in->box + 4 * (size_t)i, x1 = b[0];
        b[0] = fw - b[2];
        b[2] = fw - x1;
        float *p = in->npt ? in->seg + (size_t)i * in->npt * 2 : NULL;
        for (int k = 0; p && k < in->npt; k++)
            p[2 * k] = fw - p[2 * k];
        float *q = in->nkpt ? in->kpt + (size_t)i * in->nkpt * 3 : NULL;
        for (int k = 0; q && k < in->nkpt; k++)
            q[3 * k] = fw - q[3 * k];
    }
}

int detfeed__copy_paste_flip(detfeed__img *img, detfeed__inst *inst, double p,
                             const detfeed__stack *st, detfeed__inst *work)
{
    if (inst->n == 0 || inst->npt == 0 || p == 0)
        return DETFEED_OK;
    work->n = 0;
    int rc = detfeed__inst_append(work, inst);
    if (rc != DETFEED_OK)
        return rc;
    mirror(work, img->w);
    return paste_objects(img, inst, NULL, work, p, st->numpy_sort);
}

int detfeed__copy_paste_mix(detfeed__img *img, detfeed__inst *inst,
                            const detfeed__img *pimg, detfeed__inst *pinst, double p,
                            const detfeed__stack *st)
{
    if (pimg->w != img->w || pimg->h != img->h)
        return DETFEED_EINVAL;
    return paste_objects(img, inst, pimg->px, pinst, p, st->numpy_sort);
}
