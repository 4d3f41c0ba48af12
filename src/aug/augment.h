/*
 * augment.h - one sample through the Ultralytics training (or validation)
 * transforms and Format (internal): recipe, load-size images from the
 * cache, Mosaic or LetterBox, RandomPerspective, colour (worker route),
 * flips, then Format: the overlap mask (segment datasets), the label arrays
 * and the image, written where the caller says.
 */
#ifndef DETFEED_AUGMENT_H
#define DETFEED_AUGMENT_H

#include "core/clock.h"
#include "geometry.h"
#include "recent.h"
#include "render.h"

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
    /* The image made straight in the caller's 8-bit place (its px is the
     * place's, not owned): what detfeed__sample.img points to then. */
    detfeed__img view;
    detfeed__inst inst;
    detfeed__img mix_out; /* the MixUp partner after its own geometry */
    detfeed__inst mix_inst;
    /* CopyPaste's partner after its own geometry (mode mixup), or the
     * mirrored instances (mode flip). */
    detfeed__img cp_out;
    detfeed__inst cp_inst;
    uint8_t *owned[4];
    const uint8_t *held[4];   /* tiles served by (or given to) the store */
    detfeed__recent *held_in; /* that store */
} detfeed__scratch;

int detfeed__scratch_init(detfeed__scratch *s);
void detfeed__scratch_free(detfeed__scratch *s);

/* Which sample to make: sample `index` of `epoch`, at out_w x out_h (imgsz
 * square in training; the batch's rect shape in validation). */
typedef struct detfeed__sample_ask {
    uint32_t epoch;
    uint64_t index;
    /* Where it stands in the epoch when partners come from a window
     * (NULL: uniform partners). */
    const detfeed__place *place;
    bool mosaic_on; /* false in the close_mosaic epochs */
    int out_w, out_h;
} detfeed__sample_ask;

/* Where the sample's image goes and in what form. */
typedef struct detfeed__pixels {
    /* NULL: the image stays in the scratch (detfeed__sample's img) for the
     * caller to place. */
    uint8_t *px;
    /* Format's image as the consumer's tensor: CHW, RGB (BGR where the
     * recipe's bgr gate keeps the channels), in `dtype` scaled by `scale`
     * (detfeed_convert_chw); false: HWC BGR 8-bit as made. */
    bool tensor;
    detfeed_dtype dtype;
    detfeed_scale scale;
    /* RandomHSV left undone for the device (the recipe carries the gains). */
    bool defer_colour;
    /* The description mode. NULL: the image is made. Otherwise the image is
     * described in *render instead (render.h: the staged 8-bit image before
     * colour, as with defer_colour), and nothing is written to px: the
     * same recipe, the same image loads and the same labels, overlap mask
     * and label arrays, but no canvas, warp, blend, flip, colour or
     * conversion. A sample the description cannot express (render->status
     * says why: an image it reads is not in the cache, or a letterbox
     * resizes) is made as with render NULL, into px as asked. */
    detfeed__render *render;
} detfeed__pixels;

/* Format's label arrays: [cap] classes, [cap][4] boxes (normalized centre
 * x, y, w, h), [cap][nkpt][3] keypoints (normalized x, y, visibility; kpt
 * NULL: not written). With `grow` they are the caller's malloc'ed arrays,
 * reallocated (cap updated) for more instances; without, more instances
 * than cap fail with DETFEED_ELIMIT. */
typedef struct detfeed__label_arrays {
    float *cls, *box, *kpt;
    int cap;
    bool grow;
} detfeed__label_arrays;

/* `bytes` at p; with `grow`, p is the caller's malloc'ed buffer,
 * reallocated (bytes updated) when more is needed; without, needing more
 * fails with DETFEED_ELIMIT. */
typedef struct detfeed__buf {
    void *p;
    size_t bytes;
    bool grow;
} detfeed__buf;

/* The places a finished sample is written to; the caller's. */
typedef struct detfeed__dest {
    detfeed__pixels image;
    detfeed__label_arrays *labels; /* NULL: no labels written */
    /* Segment datasets: the overlap mask, (w / 4) x (h / 4) elements of its
     * type (detfeed__mask_type of the instance count) into mask_u8 or
     * mask_i32 by that type (both may be one buffer); NULL: not written,
     * the instances still take the mask's order. */
    detfeed__buf *mask_u8, *mask_i32;
} detfeed__dest;

/* What a sample came to, besides what went to the places. */
typedef struct detfeed__sample {
    /* The image as made (HWC BGR 8-bit, out_w x out_h), valid until the
     * next call with the scratch; NULL when it was described instead
     * (detfeed__pixels.render). */
    const detfeed__img *img;
    detfeed__recipe recipe;
    int n;            /* instances (labels in Format's order) */
    int ori_w, ori_h; /* the sample's own image before resizing */
    /* Ultralytics' resized_shape: the sample's size, except in validation
     * under 8.3, where it is the load size (load_image set it). */
    int res_w, res_h;
    detfeed_mask_type mask_type; /* DETFEED_MASK_NONE but for segment datasets */
    size_t mask_bytes;           /* the overlap mask's bytes */
} detfeed__sample;

/*
 * Makes the sample `ask` names, through Format, into the places of `dest`.
 * Nothing is written to them when a fixed place is too small:
 * DETFEED_ELIMIT, with out->n and out->mask_bytes saying what was needed
 * (an image over the codec's limits is DETFEED_ELIMIT too, with out->n 0
 * and the codec's message). The stages are timed on `clock` (NULL: not
 * timed), which is stopped on return. Errors carry the codec's message.
 */
int detfeed__augment(const detfeed__augmenter *a, detfeed__scratch *s,
                     const detfeed__sample_ask *ask, const detfeed__dest *dest,
                     detfeed__clock *clock, detfeed__sample *out);

#endif /* DETFEED_AUGMENT_H */
