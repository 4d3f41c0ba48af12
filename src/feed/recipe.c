/*
 * recipe.c - a sample's recipe (its random parameters) as the loader draws
 * it, for inspection and for the conformance suite (detfeed_loader_recipe).
 */
#include "loader_internal.h"

#include <stdlib.h>
#include <string.h>

/* One image's draws before its transforms, in the public form. */
static void geometry_of(const detfeed__recipe *r, detfeed_recipe_geometry *g)
{
    g->mosaic = r->mosaic;
    for (int k = 0; k < 3; k++)
        g->partners[k] = r->partners[k];
    g->yc = r->yc;
    g->xc = r->xc;
    g->perspective[0] = r->perspective[0];
    g->perspective[1] = r->perspective[1];
    g->angle = r->angle;
    g->scale = r->scale;
    g->shear[0] = r->shear[0];
    g->shear[1] = r->shear[1];
    g->translate[0] = r->translate[0];
    g->translate[1] = r->translate[1];
}

/* The sample's recipe `r` and its mixup, cutmix and copy_paste partners'
 * own draws `pr`, `cr` and `pp`, in the public form. */
static void recipe_of(const detfeed_loader *l, uint32_t epoch, uint64_t index,
                      const detfeed__recipe *r, const detfeed__recipe *pr,
                      const detfeed__recipe *cr, const detfeed__recipe *pp,
                      detfeed_recipe *out)
{
    *out = (detfeed_recipe){0};
    out->epoch = epoch;
    out->index = index;
    out->augment = l->augment;
    geometry_of(r, &out->geometry);
    out->mixup = r->mixup;
    out->mix_partner = r->mix_partner;
    out->mix_ratio = r->mix_ratio;
    geometry_of(pr, &out->mix_geometry);
    out->hsv = r->hsv;
    for (int k = 0; k < 3; k++)
        out->gains[k] = r->gains[k];
    out->flipud = r->flipud;
    out->fliplr = r->fliplr;
    out->bgr = !r->to_rgb;
    out->cutmix = r->cutmix;
    out->cut_partner = r->cut_partner;
    geometry_of(cr, &out->cut_geometry);
    memcpy(out->cut_areas, r->cut_area, sizeof out->cut_areas);
    out->cut_choice = r->cut_choice;
    out->copy_paste = r->copy_paste;
    out->cp_partner = r->cp_partner;
    geometry_of(pp, &out->cp_geometry);
}

int detfeed_loader_recipe(const detfeed_loader *l, uint32_t epoch, uint64_t index,
                          detfeed_recipe *out)
{
    if (l == NULL || out == NULL)
        return DETFEED_EINVAL;
    if (l->open_failed)
        return DETFEED_EBADSTATE;
    if (l->ds == NULL)
        return DETFEED_EINVAL;
    uint64_t n = detfeed_dataset_size(l->ds), *order = NULL;
    if (index >= n)
        return DETFEED_EINVAL;
    detfeed__recipe r, pr, cr, pp;
    detfeed__place place;
    const detfeed__place *pl = NULL;
    int rc = detfeed__plan_place_of(&l->plan, epoch, index, &place, &order, &pl);
    if (rc != DETFEED_OK)
        return rc;
    bool mosaic_on = detfeed__plan_mosaic_on(&l->plan, epoch);
    detfeed__recipe_make(&l->aug.hyp, l->seed, epoch, index, n, mosaic_on, 0, pl, &r);
    detfeed__recipe_make(&l->aug.hyp, l->seed, epoch, index, n, mosaic_on,
                         DETFEED__SLOT_PARTNER_BASE, pl, &pr);
    detfeed__recipe_make(&l->aug.hyp, l->seed, epoch, index, n, mosaic_on,
                         DETFEED__SLOT_CUT_BASE, pl, &cr);
    detfeed__recipe_make(&l->aug.hyp, l->seed, epoch, index, n, mosaic_on,
                         DETFEED__SLOT_CP_BASE, pl, &pp);
    free(order);
    recipe_of(l, epoch, index, &r, &pr, &cr, &pp, out);
    return DETFEED_OK;
}
