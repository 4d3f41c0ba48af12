/*
 * sample.c - single samples on the calling thread (detfeed_loader_sample and
 * its masks): the same plan and augmenter as the batches, without the ring,
 * each sample made by aug straight into the caller's buffers.
 */
#include "loader_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A sample that failed: a buffer of the caller's too small (DETFEED_ELIMIT,
 * with what it needed), else the codec's message. */
static int sample_failed(detfeed_loader *l, int rc, const detfeed__dest *d,
                         const detfeed__sample *s)
{
    const detfeed__buf *mask =
        s->mask_type == DETFEED_MASK_I32 ? d->mask_i32 : d->mask_u8;
    if (rc == DETFEED_ELIMIT && d->labels && s->n > d->labels->cap)
        return detfeed__fail(&l->msg, rc, "%d instances do not fit in %d", s->n,
                             d->labels->cap);
    if (rc == DETFEED_ELIMIT && mask && s->mask_bytes > mask->bytes)
        return detfeed__fail(
            &l->msg, rc, "%d instances: the mask is %s, %zu bytes (%zu given)", s->n,
            s->mask_type == DETFEED_MASK_I32
                ? "int32 past 255 (detfeed_loader_sample_mask_data)"
                : "8-bit",
            s->mask_bytes, mask->bytes);
    const char *codec = detfeed_codec_last_error(l->scratch.codec);
    return detfeed__fail(&l->msg, rc, "%s", codec[0] ? codec : detfeed_strerror(rc));
}

/* What the single-sample call `what` needs: the loader open and `index`
 * in range; else the status, with a message. */
static int check_index(detfeed_loader *l, const char *what, uint64_t index)
{
    int rc = detfeed__loader_need_open(l, what);
    if (rc != DETFEED_OK)
        return rc;
    size_t n = detfeed_dataset_size(l->ds);
    if (index >= n)
        return detfeed__fail(&l->msg, DETFEED_EINVAL,
                             "%s: index %llu is not below the dataset's %zu images",
                             what, (unsigned long long)index, n);
    return DETFEED_OK;
}

/* What every single-sample function (`what`) does: the loader open,
 * `index` in range, a segment dataset when `masks` are asked for; then
 * sample `index` of `epoch` made at its size (which fixes the validation
 * order) into `dest`. */
static int sample_alone(detfeed_loader *l, const char *what, uint32_t epoch,
                        uint64_t index, bool masks, const detfeed__dest *dest,
                        detfeed__sample *s)
{
    memset(s, 0, sizeof *s);
    int rc = check_index(l, what, index);
    if (rc != DETFEED_OK)
        return rc;
    if (masks && detfeed_dataset_task(l->ds) != DETFEED_TASK_SEGMENT)
        return detfeed__fail(&l->msg, DETFEED_ENOTSUPPORTED,
                             "masks need a segment dataset (polygon labels)");
    l->samples_made = true;
    detfeed__sample_ask ask = {.epoch = epoch,
                               .index = index,
                               .mosaic_on = detfeed__plan_mosaic_on(&l->plan, epoch)};
    detfeed__plan_size(&l->plan, index, &ask.out_w, &ask.out_h);
    uint64_t *order;
    detfeed__place place;
    rc = detfeed__plan_place_of(&l->plan, epoch, index, &place, &order, &ask.place);
    if (rc == DETFEED_OK)
        rc = detfeed__augment(&l->aug, &l->scratch, &ask, dest, &l->clock, s);
    free(order);
    return rc == DETFEED_OK ? rc : sample_failed(l, rc, dest, s);
}

int detfeed_loader_sample(detfeed_loader *l, uint32_t epoch, uint64_t index,
                          uint8_t *img, int capacity, int *count, float *cls,
                          float *boxes, float *keypoints)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (img == NULL || count == NULL || capacity < 0 ||
        (capacity > 0 && (cls == NULL || boxes == NULL)))
        return detfeed__fail(&l->msg, DETFEED_EINVAL,
                             "sample: img and count are required, capacity >= 0 "
                             "(%d given), and cls and boxes when capacity > 0",
                             capacity);
    detfeed__label_arrays labels = {
        .cls = cls, .box = boxes, .kpt = keypoints, .cap = capacity};
    detfeed__dest dest = {.image = {.px = img}, .labels = &labels};
    detfeed__sample s;
    int rc = sample_alone(l, "sample", epoch, index, false, &dest, &s);
    if (rc == DETFEED_OK || (rc == DETFEED_ELIMIT && s.n > capacity))
        *count = s.n;
    return rc;
}

int detfeed_loader_sample_mask_data(detfeed_loader *l, uint32_t epoch, uint64_t index,
                                    void *mask, size_t bytes, int *mask_width,
                                    int *mask_height, detfeed_mask_type *type)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (mask == NULL)
        return detfeed__fail(&l->msg, DETFEED_EINVAL, "sample_mask_data: mask is NULL");
    detfeed__buf place = {.p = mask, .bytes = bytes};
    detfeed__dest dest = {.mask_u8 = &place, .mask_i32 = &place};
    detfeed__sample s;
    int rc = sample_alone(l, "sample_mask_data", epoch, index, true, &dest, &s);
    if (rc != DETFEED_OK)
        return rc;
    if (mask_width)
        *mask_width = s.img->w / 4;
    if (mask_height)
        *mask_height = s.img->h / 4;
    if (type)
        *type = s.mask_type;
    return DETFEED_OK;
}

int detfeed_loader_sample_masks(detfeed_loader *l, uint32_t epoch, uint64_t index,
                                uint8_t *mask, int *mask_width, int *mask_height)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    int w, h, rc = check_index(l, "sample_masks", index);
    if (rc != DETFEED_OK)
        return rc;
    detfeed__plan_size(&l->plan, index, &w, &h);
    return detfeed_loader_sample_mask_data(l, epoch, index, mask,
                                           (size_t)(w / 4) * (size_t)(h / 4),
                                           mask_width, mask_height, NULL);
}
