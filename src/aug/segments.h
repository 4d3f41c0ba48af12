/*
 * segments.h - polygons (segment labels) as Ultralytics carries them
 * (internal): resampled to a fixed point count when the labels are loaded,
 * then moved with the boxes through the geometry (geometry.c), and painted
 * into Format's overlap mask (masks.c).
 */
#ifndef DETFEED_SEGMENTS_H
#define DETFEED_SEGMENTS_H

#include "core/internal.h"

/* Ultralytics resamples every polygon of an image to 1000 points, or to
 * (longest + 1) when the image has a polygon longer than 1000 points
 * (YOLODataset.update_labels_info). seg_start: [n + 1] point offsets. */
int detfeed__resample_count(const int *seg_start, int n);

/*
 * resample_segments for one polygon of m points (x, y pairs, float32) into
 * `count` points: a polygon of exactly `count` points is kept; otherwise it
 * is closed (its first point appended, L = m + 1 points), sampled at
 * np.linspace(0, L - 1, count - L) with the L vertex positions merged in
 * (np.insert at np.searchsorted, so each vertex precedes an equal sample)
 * when L < count, or at np.linspace(0, L - 1, count) otherwise, by
 * np.interp in double, and rounded to float32.
 */
void detfeed__resample(const float *xy, int m, int count, float *out);

#endif /* DETFEED_SEGMENTS_H */
