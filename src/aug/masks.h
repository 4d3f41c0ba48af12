/*
 * masks.h - Format's segment masks (internal): OpenCV 4.6's fillPoly
 * (8-bit, line type 8, shift 0) and Ultralytics' polygons2masks_overlap.
 */
#ifndef DETFEED_MASKS_H
#define DETFEED_MASKS_H

#include "geometry.h"

/*
 * cv2.fillPoly(img, [pts], color) for one polygon of m integer points on a
 * w x h 8-bit image: every edge drawn as an 8-connected line (clipped to
 * the image), then the even-odd scanline fill of the edges in 16.16 fixed
 * point. DETFEED_ENOMEM if the edge list cannot be allocated.
 */
int detfeed__fill_poly(uint8_t *img, int w, int h, const int32_t *pts, int m,
                       uint8_t color);

/* The overlap mask's element type for n instances: Ultralytics' np.uint8,
 * np.int32 past 255. */
static inline detfeed_mask_type detfeed__mask_type(int n)
{
    return n > 255 ? DETFEED_MASK_I32 : DETFEED_MASK_U8;
}

/*
 * Ultralytics' polygons2masks_overlap((h, w), polygons, ratio): each
 * polygon (points cast to int32) filled with 1 at w x h, resized with
 * INTER_LINEAR to (w / ratio) x (h / ratio); the masks ordered by
 * np.argsort(-area) with the areas as uint64 (so empty masks, whose negated
 * area stays 0, come first; equal areas in the order st->numpy_sort's
 * argsort leaves them), then painted in that order with value k + 1: 8.4
 * (st->ultralytics 804) as the running max masks = max(masks, mask * (k +
 * 1)), 8.3 as masks = clip(masks + mask * (k + 1), 0, k + 1) in the mask's
 * own arithmetic (uint8 wraps). out receives (w / ratio) * (h / ratio)
 * elements of detfeed__mask_type(n), order[n] the instance order.
 */
int detfeed__masks_overlap(const detfeed__inst *inst, int w, int h, int ratio,
                           const detfeed__stack *st, void *out, int *order);

/*
 * Format's segment step (mask_ratio 4, overlap): the overlap mask of the
 * w x h sample into `mask` ((w / 4) * (h / 4) elements of
 * detfeed__mask_type(inst->n); NULL: only the order) and the instances
 * reordered by it. Instances without polygons (a dataset whose polygons
 * were dropped) keep their order and leave the mask 0.
 */
int detfeed__format_masks(detfeed__inst *inst, int w, int h, const detfeed__stack *st,
                          void *mask);

#endif /* DETFEED_MASKS_H */
