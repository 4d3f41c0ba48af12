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
    const detfeed__stack *stack; /* Format's labels and masks follow it */
    int batch;                   /* images per batch at most */
    int side;                    /* the largest image side a batch holds */
    int nkpt;                    /* keypoints per instance (0: none) */
    detfeed_dtype dtype;         /* of the consumer's images */
    bool masks;                  /* a segment dataset: overlap masks */
    /* resized_shape is the size after loading (validation under
     * Ultralytics 8.3), for imgsz; else the sample's size. */
    bool load_size_shape;
    int imgsz;
} detfeed__slot_spec;

/* `count` slots for `spec` (which must outlive them) into *out; *pinned_why
 * (static) says why their images are not page-locked, else NULL. */
int detfeed__slots_create(detfeed_batch **out, int count,
                          const detfeed__slot_spec *spec, const char **pinned_why);
void detfeed__slots_destroy(detfeed_batch *slots, int count);
detfeed_batch *detfeed__slot_at(detfeed_batch *slots, int i);
/* The slot's number, and whether its images are page-locked. */
int detfeed__batch_slot(const detfeed_batch *bt);
bool detfeed__batch_pinned(const detfeed_batch *bt);

/* On a worker thread: sample `s` of dataset image `index` at position `pos`
 * of the slot: its image (through the route), its overlap mask from the
 * instances `inst` (reordered by area), its labels and shapes. Timed as
 * the CONVERT and PACK stages on `clock` (stopped on return). */
int detfeed__batch_put(detfeed_batch *bt, int pos, const detfeed__sample *s,
                       detfeed__inst *inst, uint64_t index, detfeed__clock *clock);

/* On the consumer's thread, once the slot holds `count` samples of h x w
 * (batch `index` of the epoch): the label arrays and masks assembled and,
 * with CUDA output, the images sent to the device, ordered before the work
 * on `stream`. Fails with a message in `msg`. */
int detfeed__batch_finish(detfeed_batch *bt, int count, uint64_t index, int h, int w,
                          void *stream, detfeed__msg *msg);
/* The consumer gave the batch back: with CUDA output, its copy must have
 * read the slot before it is refilled. */
void detfeed__batch_release(detfeed_batch *bt, void *stream);

#endif /* DETFEED_BATCH_H */
