/*
 * mix.h - Ultralytics 8.4's CutMix and CopyPaste on a training sample
 * (internal).
 */
#ifndef DETFEED_MIX_H
#define DETFEED_MIX_H

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

/*
 * CopyPaste in mode flip, on img / inst (after Mosaic, or the loaded image
 * alone: boxes x1, y1, x2, y2 in pixels of img), when inst holds polygons
 * (else nothing): the instances mirrored left-right (keypoints mirrored,
 * not re-paired) whose box overlaps each of the image's boxes by less than
 * 30 % of that box's area are ordered by their largest overlap
 * (np.argsort as st's NumPy sorts), the first round(p * count) are pasted:
 * their mirrored polygons filled (cv2.drawContours, FILLED) take the
 * mirrored image's pixels, and they join inst. `work` is scratch.
 */
int detfeed__copy_paste_flip(detfeed__img *img, detfeed__inst *inst, double p,
                             const detfeed__stack *st, detfeed__inst *work);

/*
 * CopyPaste in mode mixup, on img / inst (after RandomPerspective) with the
 * partner pimg / pinst (after its own Mosaic and RandomPerspective, the
 * same size): as mode flip with the partner's instances and pixels instead
 * of the mirrored ones. pinst is consumed. The caller checks the polygons
 * and the gate (the recipe's copy_paste).
 */
int detfeed__copy_paste_mix(detfeed__img *img, detfeed__inst *inst,
                            const detfeed__img *pimg, detfeed__inst *pinst, double p,
                            const detfeed__stack *st);

#endif /* DETFEED_MIX_H */
