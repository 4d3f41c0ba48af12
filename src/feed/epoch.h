/*
 * epoch.h - epochs of batches (internal): what a loader's samples depend on
 * once it is open (the plan), and the machinery that makes an epoch's
 * batches on the worker threads: its order and shard, each sample made into
 * its slot, the skip policy, and the batches handed to the consumer.
 */
#ifndef DETFEED_EPOCH_H
#define DETFEED_EPOCH_H

#include "batch.h"

/* What the samples and batches depend on, fixed when the loader opens. */
typedef struct detfeed__plan {
    const detfeed_dataset *ds;
    uint64_t seed;
    int imgsz, epochs, close_mosaic, partner_window;
    int batch, workers, prefetch, rank, world_size;
    bool augment, drop_last;
    detfeed_policy policy;
    detfeed_dtype dtype;
    /* validation and rect training: each image's batch shape (h, w), and
     * the dataset indices by aspect ratio; NULL in other training */
    int (*rect)[2];
    uint64_t *rect_order;
    /* every epoch in rect_order (validation; rect training unless all its
     * shapes are equal); else in the epoch's permutation */
    bool fixed_order;
} detfeed__plan;

/* Whether mosaic applies in `epoch` (close_mosaic). */
bool detfeed__plan_mosaic_on(const detfeed__plan *p, uint32_t epoch);
/* The size of image `index`'s sample: imgsz square, or its rect shape. */
void detfeed__plan_size(const detfeed__plan *p, uint64_t index, int *width,
                        int *height);
/* The largest image side a batch can hold (a rect shape passes imgsz). */
int detfeed__plan_side(const detfeed__plan *p);
/* Batches per epoch for this rank (detfeed_loader_batch_count). */
size_t detfeed__plan_batch_count(const detfeed__plan *p);
/* Where sample `pos` of the epoch's `order` stands for its partners: into
 * *place, returned; NULL when partners are uniform (partner_window 0). */
const detfeed__place *detfeed__plan_place(const detfeed__plan *p, const uint64_t *order,
                                          uint64_t pos, detfeed__place *place);
/* The same for image `index` alone in `epoch`: the epoch's order goes to
 * *order (to free; NULL when partners are uniform). DETFEED_ENOMEM. */
int detfeed__plan_place_of(const detfeed__plan *p, uint32_t epoch, uint64_t index,
                           detfeed__place *place, uint64_t **order,
                           const detfeed__place **out);

typedef struct detfeed__epochs detfeed__epochs;

/* The worker threads and batch slots for `plan`'s batches, samples made by
 * `aug` and delivered through `route` (all three must outlive it). */
int detfeed__epochs_create(detfeed__epochs **out, const detfeed__plan *plan,
                           const detfeed__augmenter *aug, detfeed__route *route);
/* Stops the workers, waits for the device, frees the slots. NULL: no-op. */
void detfeed__epochs_destroy(detfeed__epochs *e);

/* Starts `epoch` (stopping any in progress); fails with a message in msg. */
int detfeed__epochs_start(detfeed__epochs *e, uint32_t epoch, detfeed__msg *msg);
/* The next batch as detfeed_loader_next_timed gives it; with CUDA output
 * ordered before the work on `stream`. */
int detfeed__epochs_next(detfeed__epochs *e, int timeout_ms, void *stream,
                         const detfeed_batch **out, detfeed__msg *msg);
/* Gives back a batch detfeed__epochs_next handed out (in any order);
 * DETFEED_EINVAL, with a message in msg, for a batch that is not one of
 * this loader's or is not held (released already, or taken before the
 * last start). */
int detfeed__epochs_release(detfeed__epochs *e, const detfeed_batch *bt, void *stream,
                            detfeed__msg *msg);
/* Stops the workers for good (detfeed_loader_shutdown); thread-safe. */
void detfeed__epochs_quit(detfeed__epochs *e);

/* Nanoseconds in `stage` over the workers (DETFEED_STAGE_WAIT: the
 * consumer's wait); samples replaced under the skip policy and the first
 * one's message; whether the slots are page-locked, else why. */
uint64_t detfeed__epochs_stage_ns(const detfeed__epochs *e, detfeed_stage stage);
int64_t detfeed__epochs_skipped(const detfeed__epochs *e, const char **first);
int detfeed__epochs_pinned(const detfeed__epochs *e, const char **why);

#endif /* DETFEED_EPOCH_H */
