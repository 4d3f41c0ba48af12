/*
 * batch.h - batch slots (internal): what the workers fill, sample by
 * sample, and what the consumer receives as a detfeed_batch once its label
 * arrays and masks are assembled.
 */
#ifndef DETFEED_BATCH_H
#define DETFEED_BATCH_H

#include "core/internal.h"
#include "route.h"

/* What the slots are sized and filled for; fixed when they are made. */
typedef struct detfeed__slot_spec {
    const detfeed_dataset *ds;
    detfeed__route *route;
    int batch;           /* images per batch at most */
    int side;            /* the largest image side a batch holds */
    int nkpt;            /* keypoints per instance (0: none) */
    detfeed_dtype dtype; /* of the consumer's images */
    bool masks;          /* a segment dataset: overlap masks */
} detfeed__slot_spec;

/* `count` slots for `spec` (which must outlive them) into *out; *pinned_why
 * (static) says why their images are not page-locked, else NULL. */
int detfeed__slots_create(detfeed_batch **out, int count,
                          const detfeed__slot_spec *spec, const char **pinned_why);
void detfeed__slots_destroy(detfeed_batch *slots, int count);
detfeed_batch *detfeed__slot_at(detfeed_batch *slots, int i);
/* Whether the slot's images are page-locked. */
bool detfeed__batch_pinned(const detfeed_batch *bt);

/* On a worker thread, before sample `pos` of the slot (w x h) is made: its
 * places in the slot, for detfeed__augment: its image where the route puts
 * it (detfeed__route_place: the tensor, or the CUDA staging), its label
 * arrays and its overlap mask. Valid until the slot is refilled. */
void detfeed__batch_places(detfeed_batch *bt, int pos, int w, int h, detfeed__dest *d);

/* On a worker thread, once sample `s` of dataset image `index` is made into
 * the places of `pos`: its record (index, shapes, mask type) and, with CUDA
 * output, its colour parameters (detfeed__route_stage_colour). */
int detfeed__batch_put(detfeed_batch *bt, int pos, const detfeed__sample *s,
                       uint64_t index);

/* On the consumer's thread, once the slot holds `count` samples of h x w
 * (batch `index` of the epoch): the label arrays and masks assembled and,
 * with CUDA output, the images sent to the device, ordered before the work
 * on `stream`. Fails with a message in `msg`. */
int detfeed__batch_finish(detfeed_batch *bt, int count, uint64_t index, int h, int w,
                          void *stream, detfeed__msg *msg);
/* The consumer gave the batch back: with CUDA output its device tensor may
 * be overwritten after the work on `stream` so far. Never waits: the copy
 * of its images may still be reading the slot (the caller gives the slot
 * to the workers once detfeed__route_copy_done says it has finished).
 * DETFEED_ECUDA (detfeed__route_error says why) when CUDA refused to order
 * the reuse after `stream`: it waited for that work instead, and the batch
 * is released all the same. */
int detfeed__batch_release(detfeed_batch *bt, void *stream);

#endif /* DETFEED_BATCH_H */
