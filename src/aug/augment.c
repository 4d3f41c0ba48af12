/*
 * augment.c - one sample through the transforms, in Ultralytics' order:
 * Mosaic (or LetterBox) -> RandomPerspective -> RandomHSV -> RandomFlip
 * (vertical, horizontal). Format's label conversion happens when a batch is
 * packed.
 */
#include "augment.h"

#include "data/dataset_internal.h"

#include <string.h>

int detfeed__scratch_init(detfeed__scratch *s)
{
    memset(s, 0, sizeof *s);
    return detfeed_codec_create(&s->codec, 0);
}

static void release_owned(detfeed__scratch *s)
{
    for (int k = 0; k < 4; k++) {
        detfeed_free(s->owned[k]);
        s->owned[k] = NULL;
    }
}

void detfeed__scratch_free(detfeed__scratch *s)
{
    release_owned(s);
    detfeed__img_free(&s->canvas);
    detfeed__img_free(&s->out);
    detfeed__inst_free(&s->inst);
    detfeed_codec_destroy(s->codec);
    memset(s, 0, sizeof *s);
}

/* Image `index` at its load size and its labels, as a mosaic tile. */
static int tile(const detfeed__augmenter *a, detfeed__scratch *s, int slot,
                uint64_t index, detfeed__tile *t, int *ow, int *oh)
{
    const detfeed__labels *l = &detfeed__dataset_image(a->ds, (size_t)index)->labels;
    int rc = detfeed_cache_get(a->cache, (size_t)index, s->codec, &t->px, &t->w, &t->h,
                               ow, oh, &s->owned[slot]);
    t->lab = (detfeed__src_labels){
        .n = l->n, .nkpt = l->nkpt, .cls = l->cls, .boxes = l->boxes, .kpts = l->kpts};
    return rc;
}

static int train_geometry(const detfeed__augmenter *a, detfeed__scratch *s,
                          uint64_t index, int out_w, int out_h, detfeed__sample *out)
{
    const detfeed__recipe *r = &out->recipe;
    int rc;
    if (r->mosaic) {
        detfeed__tile t[4];
        rc = tile(a, s, 0, index, &t[0], &out->ori_w, &out->ori_h);
        for (int k = 1; k < 4 && rc == DETFEED_OK; k++)
            rc = tile(a, s, k, r->partners[k - 1], &t[k], NULL, NULL);
        if (rc == DETFEED_OK)
            rc = detfeed__mosaic4(t, a->hyp.imgsz, r->xc, r->yc, &s->canvas, &s->inst);
    } else {
        detfeed__tile t;
        rc = tile(a, s, 0, index, &t, &out->ori_w, &out->ori_h);
        if (rc == DETFEED_OK)
            rc = detfeed__letterbox(t.px, t.w, t.h, &t.lab, out_w, out_h, true,
                                    &s->canvas, &s->inst, NULL, NULL);
    }
    release_owned(s);
    if (rc == DETFEED_OK)
        rc =
            detfeed__random_perspective(&s->canvas, &s->inst, r, out_w, out_h, &s->out);
    return rc;
}

int detfeed__augment(const detfeed__augmenter *a, detfeed__scratch *s, uint32_t epoch,
                     uint64_t index, bool mosaic_on, int out_w, int out_h,
                     detfeed__sample *out)
{
    uint64_t n = detfeed_dataset_size(a->ds);
    memset(out, 0, sizeof *out);
    detfeed__recipe_make(&a->hyp, a->seed, epoch, index, n, mosaic_on, 0, &out->recipe);
    const detfeed__recipe *r = &out->recipe;
    int rc;
    if (!a->train) {
        detfeed__tile t;
        rc = tile(a, s, 0, index, &t, &out->ori_w, &out->ori_h);
        if (rc == DETFEED_OK)
            rc = detfeed__letterbox(t.px, t.w, t.h, &t.lab, out_w, out_h, false,
                                    &s->out, &s->inst, NULL, NULL);
        release_owned(s);
        if (rc == DETFEED_OK)
            detfeed__flip(&s->out, &s->inst, false, false, NULL); /* to centre xywh */
    } else {
        rc = train_geometry(a, s, index, out_w, out_h, out);
        if (rc == DETFEED_OK && r->hsv && a->apply_colour) {
            uint8_t lut[3][256];
            rc = detfeed_hsv_lut(r->gains[0], r->gains[1], r->gains[2], lut);
            size_t stride = (size_t)s->out.w * 3;
            if (rc == DETFEED_OK)
                rc = detfeed_hsv_apply(s->out.px, stride, s->out.px, stride, s->out.w,
                                       s->out.h, lut, DETFEED_ISA_AUTO);
        }
        if (rc == DETFEED_OK)
            detfeed__flip(&s->out, &s->inst, r->flipud, r->fliplr,
                          detfeed_dataset_flip_idx(a->ds));
    }
    out->img = &s->out;
    out->inst = &s->inst;
    return rc;
}
