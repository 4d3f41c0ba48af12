/*
 * dataset_access.h - what the layers above data (aug) read of an open
 * dataset and its cache, without their layouts (internal). The public
 * getters (detfeed_dataset_size, _image_path, _image_size, _flip_idx, ...)
 * answer the rest.
 */
#ifndef DETFEED_DATASET_ACCESS_H
#define DETFEED_DATASET_ACCESS_H

#include "core/internal.h"

/* One image's labels as the index holds them: normalized, boxes as centre
 * x, y, w, h; valid while the dataset is open. */
typedef struct detfeed__label_view {
    int n, nkpt;
    const float *cls, *boxes, *kpts; /* [n], [n][4], [n][nkpt][3] or NULL */
    const int *seg_start;            /* [n + 1] polygon offsets, or NULL */
    const float *seg_xy;             /* polygon points, normalized */
} detfeed__label_view;

/* Image i's labels (i < detfeed_dataset_size; else all zero). */
detfeed__label_view detfeed__dataset_label_view(const detfeed_dataset *ds, size_t i);

/* detfeed_cache_get that also adds the nanoseconds spent decoding and
 * resizing an image loaded on demand to ns[0] and ns[1] (ns may be NULL). */
int detfeed__cache_get_timed(const detfeed_cache *cache, size_t i, detfeed_codec *codec,
                             const uint8_t **pixels, int *width, int *height,
                             int *orig_width, int *orig_height, uint8_t **owned,
                             uint64_t ns[2]);

#endif /* DETFEED_DATASET_ACCESS_H */
