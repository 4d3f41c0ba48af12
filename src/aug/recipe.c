/*
 * recipe.c - the random parameters of a sample, drawn as Ultralytics draws
 * them, in the order of the slots of "Randomness" in detfeed.h, one slot
 * per value.
 */
#include "recipe.h"

#include <math.h>
#include <stdlib.h>

detfeed__hyp detfeed__hyp_defaults(void)
{
    return (detfeed__hyp){.hsv_h = 0.015,
                          .hsv_s = 0.7,
                          .hsv_v = 0.4,
                          .degrees = 0.0,
                          .translate = 0.1,
                          .scale = 0.5,
                          .shear = 0.0,
                          .perspective = 0.0,
                          .flipud = 0.0,
                          .fliplr = 0.5,
                          .mosaic = 1.0,
                          .mixup = 0.0,
                          .cutmix = 0.0,
                          .bgr = 0.0,
                          .copy_paste = 0.0,
                          .copy_paste_mode = DETFEED_PASTE_FLIP,
                          .imgsz = 640};
}

typedef struct drawer {
    uint64_t seed, index;
    uint32_t epoch, base;
} drawer;

static double draw(const drawer *d, uint32_t slot)
{
    return detfeed_uniform(d->seed, d->base + slot, d->epoch, d->index);
}

/* Python's random.uniform(a, b) = a + (b - a) * random(). */
static double uniform(const drawer *d, uint32_t slot, double a, double b)
{
    return a + (b - a) * draw(d, slot);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Beta(32, 32), Ultralytics' MixUp ratio, from a fixed number of draws: the
 * 32nd smallest of 63 uniforms has exactly that distribution. */
static double beta32(const drawer *d)
{
    double u[63];
    for (uint32_t k = 0; k < 63; k++)
        u[k] = draw(d, DETFEED__SLOT_MIX_RATIO + k);
    qsort(u, 63, sizeof *u, cmp_double);
    return u[31];
}

/* A mosaic or mixup partner: uniformly from the n images, or from the
 * window of recent samples that `place` describes. */
static uint64_t partner(const drawer *d, uint32_t slot, uint64_t n,
                        const detfeed__place *place)
{
    double u = draw(d, slot);
    if (place == NULL) {
        uint64_t j = (uint64_t)(u * (double)n);
        return j < n ? j : n - 1;
    }
    uint64_t avail = place->pos / place->stride + 1;
    if (avail > place->window)
        avail = place->window;
    uint64_t k = (uint64_t)(u * (double)avail);
    if (k >= avail)
        k = avail - 1;
    return place->order[place->pos - k * place->stride];
}

/* np.random.randint(k): [0, k). */
static int below(const drawer *d, uint32_t slot, int k)
{
    int j = (int)(draw(d, slot) * k);
    return j < k ? j : k - 1;
}

static int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* CutMix's partner, its areas on the s x s sample (_rand_bbox: lam ~
 * Beta(1, 1), which is uniform; the cut's side int(s * sqrt(1 - lam));
 * its centre randint(s), x first) and the choice's uniform. */
static void cut_draws(const drawer *d, detfeed__recipe *r, uint64_t n,
                      const detfeed__place *place, int s)
{
    r->cut_partner = r->cutmix ? partner(d, DETFEED__SLOT_CUT_PARTNER, n, place) : 0;
    for (int k = 0; k < DETFEED__CUT_AREAS; k++) {
        uint32_t at = DETFEED__SLOT_CUT_AREA + 3 * (uint32_t)k;
        int cut = (int)(s * sqrt(1.0 - draw(d, at)));
        int cx = below(d, at + 1, s), cy = below(d, at + 2, s);
        r->cut_area[k][0] = clamp_int(cx - cut / 2, 0, s);
        r->cut_area[k][1] = clamp_int(cy - cut / 2, 0, s);
        r->cut_area[k][2] = clamp_int(cx + cut / 2, 0, s);
        r->cut_area[k][3] = clamp_int(cy + cut / 2, 0, s);
    }
    r->cut_choice = draw(d, DETFEED__SLOT_CUT_CHOICE);
}

/* CopyPaste: mode flip draws nothing; mode mixup is a mix transform with a
 * gate (after the check for polygons) and a partner. close_mosaic sets
 * copy_paste to 0, which skips it before any draw. */
static void paste_draws(const drawer *d, const detfeed__hyp *hyp, bool mosaic_on,
                        detfeed__recipe *r, uint64_t n, const detfeed__place *place)
{
    double p = mosaic_on ? hyp->copy_paste : 0.0;
    r->copy_paste = p != 0;
    if (r->copy_paste && hyp->copy_paste_mode == DETFEED_PASTE_MIXUP)
        r->copy_paste = !(uniform(d, DETFEED__SLOT_CP_GATE, 0, 1) > p);
    r->cp_partner = r->copy_paste && hyp->copy_paste_mode == DETFEED_PASTE_MIXUP
                        ? partner(d, DETFEED__SLOT_CP_PARTNER, n, place)
                        : 0;
}

void detfeed__recipe_make(const detfeed__hyp *hyp, uint64_t seed, uint32_t epoch,
                          uint64_t index, uint64_t n, bool mosaic_on,
                          uint32_t slot_base, const detfeed__place *place,
                          detfeed__recipe *r)
{
    const drawer d = {.seed = seed, .index = index, .epoch = epoch, .base = slot_base};
    int s = hyp->imgsz;
    double p_mosaic = mosaic_on ? hyp->mosaic : 0.0;
    /* Gates: the transform is skipped when uniform(0, 1) > p. */
    r->mosaic = !(uniform(&d, DETFEED__SLOT_MOSAIC, 0, 1) > p_mosaic);
    for (int k = 0; k < 3; k++)
        r->partners[k] = partner(&d, DETFEED__SLOT_PARTNER + (uint32_t)k, n, place);
    /* int(uniform(s // 2, 2 s - s // 2)), y first. */
    r->yc = (int)uniform(&d, DETFEED__SLOT_YC, s / 2, 2 * s - s / 2);
    r->xc = (int)uniform(&d, DETFEED__SLOT_XC, s / 2, 2 * s - s / 2);
    for (int k = 0; k < 2; k++)
        r->perspective[k] = uniform(&d, DETFEED__SLOT_PERSPECTIVE + (uint32_t)k,
                                    -hyp->perspective, hyp->perspective);
    r->angle = uniform(&d, DETFEED__SLOT_ANGLE, -hyp->degrees, hyp->degrees);
    r->scale = uniform(&d, DETFEED__SLOT_SCALE, 1 - hyp->scale, 1 + hyp->scale);
    for (int k = 0; k < 2; k++)
        r->shear[k] =
            uniform(&d, DETFEED__SLOT_SHEAR + (uint32_t)k, -hyp->shear, hyp->shear);
    for (int k = 0; k < 2; k++)
        r->translate[k] = uniform(&d, DETFEED__SLOT_TRANSLATE + (uint32_t)k,
                                  0.5 - hyp->translate, 0.5 + hyp->translate);
    /* close_mosaic turns mixup off with mosaic (the gate is still drawn). */
    double p_mixup = mosaic_on ? hyp->mixup : 0.0;
    r->mixup = !(uniform(&d, DETFEED__SLOT_MIXUP, 0, 1) > p_mixup);
    r->mix_partner = 0;
    r->mix_ratio = 1.0;
    if (r->mixup) {
        r->mix_partner = partner(&d, DETFEED__SLOT_MIX_PARTNER, n, place);
        r->mix_ratio = beta32(&d);
    }
    double p_cutmix = mosaic_on ? hyp->cutmix : 0.0;
    r->cutmix = !(uniform(&d, DETFEED__SLOT_CUTMIX, 0, 1) > p_cutmix);
    cut_draws(&d, r, n, place, s);
    paste_draws(&d, hyp, mosaic_on, r, n, place);
    r->slot_base = slot_base;
    /* RandomHSV draws nothing and colours nothing when all gains are 0. */
    double g[3] = {hyp->hsv_h, hyp->hsv_s, hyp->hsv_v};
    r->hsv = g[0] != 0 || g[1] != 0 || g[2] != 0;
    for (int k = 0; k < 3; k++)
        r->gains[k] = uniform(&d, DETFEED__SLOT_HSV + (uint32_t)k, -1, 1) * g[k];
    /* Flips: random() < p, each drawn even when p is 0. */
    r->flipud = draw(&d, DETFEED__SLOT_FLIPUD) < hyp->flipud;
    r->fliplr = draw(&d, DETFEED__SLOT_FLIPLR) < hyp->fliplr;
    r->to_rgb = uniform(&d, DETFEED__SLOT_BGR, 0, 1) > hyp->bgr;
}
