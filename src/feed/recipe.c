/*
 * recipe.c - a sample's recipe (its random parameters) as the loader draws
 * it, for inspection and for the conformance suite.
 */
#include "loader_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* One recipe's fields as JSON members (no braces). */
static int recipe_fields(const detfeed__recipe *r, char *buf, size_t size)
{
    return snprintf(buf, size,
                    "\"mosaic\":%s,\"partners\":[%llu,%llu,%llu],\"yc\":%d,\"xc\":%d,"
                    "\"perspective\":[%.17g,%.17g],\"angle\":%.17g,\"scale\":%.17g,"
                    "\"shear\":[%.17g,%.17g],\"translate\":[%.17g,%.17g]",
                    r->mosaic ? "true" : "false", (unsigned long long)r->partners[0],
                    (unsigned long long)r->partners[1],
                    (unsigned long long)r->partners[2], r->yc, r->xc, r->perspective[0],
                    r->perspective[1], r->angle, r->scale, r->shear[0], r->shear[1],
                    r->translate[0], r->translate[1]);
}

int detfeed_loader_recipe_json(const detfeed_loader *l, uint32_t epoch, uint64_t index,
                               char *buf, size_t size)
{
    if (l == NULL || buf == NULL)
        return DETFEED_EINVAL;
    if (l->open_failed)
        return DETFEED_EBADSTATE;
    if (l->ds == NULL)
        return DETFEED_EINVAL;
    detfeed__recipe r, pr;
    uint64_t n = detfeed_dataset_size(l->ds), *order = NULL;
    detfeed__place place;
    const detfeed__place *pl = NULL;
    int rc = detfeed__plan_place_of(&l->plan, epoch, index, &place, &order, &pl);
    if (rc != DETFEED_OK)
        return rc;
    detfeed__recipe_make(&l->aug.hyp, l->seed, epoch, index, n,
                         detfeed__plan_mosaic_on(&l->plan, epoch), 0, pl, &r);
    detfeed__recipe_make(&l->aug.hyp, l->seed, epoch, index, n,
                         detfeed__plan_mosaic_on(&l->plan, epoch),
                         DETFEED__SLOT_PARTNER_BASE, pl, &pr);
    free(order);
    char own[512], partner[512];
    recipe_fields(&r, own, sizeof own);
    recipe_fields(&pr, partner, sizeof partner);
    int k =
        snprintf(buf, size,
                 "{\"epoch\":%u,\"index\":%llu,%s,\"mixup\":%s,\"mix_partner\":%llu,"
                 "\"mix_ratio\":%.17g,\"mix_recipe\":{%s},\"hsv\":%s,"
                 "\"gains\":[%.17g,%.17g,%.17g],\"flipud\":%s,\"fliplr\":%s,"
                 "\"augment\":%s}",
                 epoch, (unsigned long long)index, own, r.mixup ? "true" : "false",
                 (unsigned long long)r.mix_partner, r.mix_ratio, partner,
                 r.hsv ? "true" : "false", r.gains[0], r.gains[1], r.gains[2],
                 r.flipud ? "true" : "false", r.fliplr ? "true" : "false",
                 l->augment ? "true" : "false");
    return k >= 0 && (size_t)k < size ? DETFEED_OK : DETFEED_ELIMIT;
}
