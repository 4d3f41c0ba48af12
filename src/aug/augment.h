/*
 * augment.h - one sample through the Ultralytics training (or validation)
 * transforms (internal): recipe, load-size images from the cache, Mosaic or
 * LetterBox, RandomPerspective, colour (worker route), flips.
 */
#ifndef DETFEED_AUGMENT_H
#define DETFEED_AUGMENT_H

#include "core/clock.h"
#include "geometry.h"
#include "recent.h"

/* What every sample of a run shares; read-only while samples are made. */
typedef struct detfeed__augmenter {
    const detfeed_dataset *ds;
    const detfeed_cache *cache;
    detfeed__hyp hyp;
    uint64_t seed;
    bool train;           /* training transforms; false: validation letterbox only */
    detfeed__stack stack; /* the Ultralytics and OpenCV the bytes follow */
    /* Images decoded a moment ago (partners from a window); NULL: none. */
    detfeed__recent *recent;
} detfeed__augmenter;

/* Per-thread buffers, reused from sample to sample. */
typedef struct detfeed__scratch {
    detfeed_codec *codec;
    detfeed__img canvas, out;
    detfeed__inst inst;
    detfeed__img mix_out; /* the MixUp partner after its own geometry */
    detfeed__inst mix_inst;
    uint8_t *owned[4];
    const uint8_t *held[4];   /* tiles served by (or given to) the store */
    detfeed__recent *held_in; /* that store */
    /* Device colour route: leave the colour to the CUDA kernel (the recipe
     * carries the gains); false colours the pixels here. */
    bool defer_colour;
} detfeed__scratch;

int detfeed__scratch_init(detfeed__scratch *s);
void detfeed__scratch_free(detfeed__scratch *s);

/* The result of one sample: the image (HWC BGR, w x h) and its instances as
 * absolute centre x, y, w, h, valid until the next call with the scratch. */
typedef struct detfeed__sample {
    const detfeed__img *img;
    const detfeed__inst *inst;
    detfeed__recipe recipe;
    int ori_w, ori_h; /* the sample's own image before resizing */
} detfeed__sample;

/*
 * Makes sample `index` of `epoch`. `place` says where it stands in the
 * epoch when partners come from a window (NULL: uniform partners).
 * `mosaic_on` is false in the close_mosaic epochs. `out_w`, `out_h` are the
 * output size (imgsz square in training; the batch's rect shape in
 * validation). The stages are timed on `clock` (NULL: not timed), which
 * is stopped on return. Errors carry the codec's message.
 */
int detfeed__augment(const detfeed__augmenter *a, detfeed__scratch *s, uint32_t epoch,
                     uint64_t index, const detfeed__place *place, bool mosaic_on,
                     int out_w, int out_h, detfeed__clock *clock, detfeed__sample *out);

#endif /* DETFEED_AUGMENT_H */
