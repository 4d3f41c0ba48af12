/*
 * sample.c - single samples on the calling thread (detfeed_loader_sample and
 * its masks): the same plan and augmenter as the batches, without the ring.
 */
#include "loader_internal.h"

#include "aug/masks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Segment datasets: Format's overlap mask (into `mask` of `bytes`, or not
 * kept when NULL; its element type to *type) and the instances in its area
 * order, as Ultralytics returns them. */
static int segment_order(detfeed_loader *l, const detfeed__sample *s, void *mask,
                         size_t bytes, detfeed_mask_type *type)
{
    if (detfeed_dataset_task(l->ds) != DETFEED_TASK_SEGMENT)
        return DETFEED_OK;
    *type = detfeed__mask_type(s->inst->n);
    size_t need = (size_t)(s->img->w / 4) * (size_t)(s->img->h / 4) * (size_t)*type;
    if (mask && bytes < need)
        return detfeed__fail(&l->msg, DETFEED_ELIMIT,
                             "%d instances: the mask is %s, %zu bytes (%zu given)",
                             s->inst->n,
                             *type == DETFEED_MASK_I32
                                 ? "int32 past 255 (detfeed_loader_sample_mask_data)"
                                 : "8-bit",
                             need, bytes);
    int rc = detfeed__format_masks(&l->scratch.inst, s->img->w, s->img->h,
                                   l->aug.stack.ultralytics, mask);
    return rc == DETFEED_OK ? rc : detfeed__fail(&l->msg, rc, "out of memory");
}

/* What every single-sample function does first: the loader open, `index`
 * in range, a segment dataset when `masks` are asked for; then sample
 * `index` of `epoch` made at its size (which fixes the validation order). */
static int sample_alone(detfeed_loader *l, uint32_t epoch, uint64_t index, bool masks,
                        detfeed__sample *s)
{
    int rc = detfeed__loader_need_open(l);
    if (rc != DETFEED_OK)
        return rc;
    if (index >= detfeed_dataset_size(l->ds))
        return DETFEED_EINVAL;
    if (masks && detfeed_dataset_task(l->ds) != DETFEED_TASK_SEGMENT)
        return detfeed__fail(&l->msg, DETFEED_ENOTSUPPORTED,
                             "masks need a segment dataset (polygon labels)");
    l->samples_made = true;
    int w, h;
    detfeed__plan_size(&l->plan, index, &w, &h);
    uint64_t *order;
    detfeed__place place;
    const detfeed__place *pl;
    rc = detfeed__plan_place_of(&l->plan, epoch, index, &place, &order, &pl);
    if (rc == DETFEED_OK)
        rc = detfeed__augment(&l->aug, &l->scratch, epoch, index, pl,
                              detfeed__plan_mosaic_on(&l->plan, epoch), w, h, &l->clock,
                              s);
    free(order);
    if (rc != DETFEED_OK)
        return detfeed__fail(&l->msg, rc, "%s",
                             detfeed_codec_last_error(l->scratch.codec));
    return DETFEED_OK;
}

int detfeed_loader_sample(detfeed_loader *l, uint32_t epoch, uint64_t index,
                          uint8_t *img, int capacity, int *count, float *cls,
                          float *boxes, float *keypoints)
{
    if (l == NULL || img == NULL || count == NULL || capacity < 0 ||
        (capacity > 0 && (cls == NULL || boxes == NULL)))
        return DETFEED_EINVAL;
    detfeed__sample s;
    int rc = sample_alone(l, epoch, index, false, &s);
    if (rc != DETFEED_OK)
        return rc;
    detfeed_mask_type type = DETFEED_MASK_NONE;
    rc = segment_order(l, &s, NULL, 0, &type);
    if (rc != DETFEED_OK)
        return rc;
    *count = s.inst->n;
    if (s.inst->n > capacity)
        return detfeed__fail(&l->msg, DETFEED_ELIMIT, "%d instances do not fit in %d",
                             s.inst->n, capacity);
    memcpy(img, s.img->px, (size_t)s.img->w * s.img->h * 3);
    detfeed__format(s.inst, s.img->w, s.img->h, &l->aug.stack, cls, boxes, keypoints);
    return DETFEED_OK;
}

int detfeed_loader_sample_mask_data(detfeed_loader *l, uint32_t epoch, uint64_t index,
                                    void *mask, size_t bytes, int *mask_width,
                                    int *mask_height, detfeed_mask_type *type)
{
    if (l == NULL || mask == NULL)
        return DETFEED_EINVAL;
    detfeed__sample s;
    detfeed_mask_type t = DETFEED_MASK_NONE;
    int rc = sample_alone(l, epoch, index, true, &s);
    if (rc == DETFEED_OK)
        rc = segment_order(l, &s, mask, bytes, &t);
    if (rc != DETFEED_OK)
        return rc;
    if (mask_width)
        *mask_width = s.img->w / 4;
    if (mask_height)
        *mask_height = s.img->h / 4;
    if (type)
        *type = t;
    return DETFEED_OK;
}

int detfeed_loader_sample_masks(detfeed_loader *l, uint32_t epoch, uint64_t index,
                                uint8_t *mask, int *mask_width, int *mask_height)
{
    int w, h, rc = detfeed_loader_sample_size(l, index, &w, &h);
    if (rc != DETFEED_OK)
        return l && l->open_failed ? detfeed__loader_need_open(l) : rc;
    return detfeed_loader_sample_mask_data(l, epoch, index, mask,
                                           (size_t)(w / 4) * (size_t)(h / 4),
                                           mask_width, mask_height, NULL);
}
