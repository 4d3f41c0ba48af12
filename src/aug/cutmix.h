/*
 * cutmix.h - Ultralytics 8.4's CutMix on a training sample (internal).
 */
#ifndef DETFEED_CUTMIX_H
#define DETFEED_CUTMIX_H

#include "geometry.h"
#include "recipe.h"

/*
 * CutMix on the sample img / inst (after RandomPerspective and MixUp:
 * boxes x1, y1, x2, y2 in pixels) with its partner pimg / pinst (after the
 * partner's own Mosaic and RandomPerspective, the same size). Of the
 * recipe's candidate areas, those that overlap none of the sample's boxes
 * (bbox_ioa's sum 0); r->cut_choice picks one (np.random.choice). The
 * partner's instances that it covers, by at least 1 % of the instance's box
 * area (10 % when the sample has no polygons), are clipped to the area and
 * appended to inst, and the area takes the partner's pixels. Where no area
 * is free or no instance covered, nothing changes; *applied says which.
 * pinst is consumed (left holding the appended instances). The arithmetic
 * is NumPy's float32. DETFEED_ENOMEM, or DETFEED_ENOTSUPPORTED for
 * polygons of different point counts.
 */
int detfeed__cutmix(detfeed__img *img, detfeed__inst *inst, const detfeed__img *pimg,
                    detfeed__inst *pinst, const detfeed__recipe *r,
                    const detfeed__stack *st, bool *applied);

#endif /* DETFEED_CUTMIX_H */
