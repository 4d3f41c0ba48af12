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

/* NumPy 1.24's np.argsort (kind 'quicksort': introsort with insertion sort
 * on runs of up to 16 elements, not stable) of n unsigned 64-bit keys. */
void detfeed__argsort_u64(const uint64_t *keys, int n, int *idx);

/*
 * Ultralytics' polygons2masks_overlap((h, w), polygons, ratio): each
 * polygon (points cast to int32) filled with 1 at w x h, resized with
 * INTER_LINEAR to (w / ratio) x (h / ratio); the masks ordered by
 * np.argsort(-area) with the areas as uint64 (so empty masks, whose negated
 * area stays 0, come first), then painted in that order with value k + 1
 * as masks = clip(masks + mask * (k + 1), 0, k + 1) in uint8 arithmetic.
 * out receives (w / ratio) * (h / ratio) bytes, order[n] the instance order.
 * DETFEED_ELIMIT with more than 255 polygons (Ultralytics switches to int32).
 */
int detfeed__masks_overlap(const detfeed__inst *inst, int w, int h, int ratio,
                           uint8_t *out, int *order);

/*
 * Format's segment step (mask_ratio 4, overlap): the overlap mask of the
 * w x h sample into `mask` ((w / 4) * (h / 4) bytes; NULL: only the order)
 * and the instances reordered by it. Instances without polygons (a dataset
 * whose polygons were dropped) keep their order and leave the mask 0.
 */
int detfeed__format_masks(detfeed__inst *inst, int w, int h, uint8_t *mask);

#endif /* DETFEED_MASKS_H */
