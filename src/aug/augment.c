/*
 * augment.c - one sample through the transforms, in Ultralytics' order:
 * Mosaic (or LetterBox) -> RandomPerspective -> RandomHSV -> RandomFlip
 * (vertical, horizontal). Format's label conversion happens when a batch is
 * packed.
 */
#include "augment.h"

#include "data/dataset_access.h"

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
        if (s->held[k])
            detfeed__recent_put(s->held_in, s->held[k]);
        s->held[k] = NULL;
    }
}

/* Image `index` from the store of recent images, or decoded (and then
 * given to the store) when it is neither there nor in the cache. */
static int load(const detfeed__augmenter *a, detfeed__scratch *s, int slot,
                uint64_t index, detfeed__held *img, detfeed__clock *clock)
{
    if (a->recent && detfeed__recent_get(a->recent, index, img)) {
        s->held[slot] = img->px, s->held_in = a->recent;
        return DETFEED_OK;
    }
    int rc = detfeed__cache_get(a->cache, (size_t)index, s->codec, &img->px, &img->w,
                                &img->h, &img->ow, &img->oh, &s->owned[slot], clock);
    if (rc == DETFEED_OK && a->recent && s->owned[slot] &&
        detfeed__recent_add(a->recent, index, s->owned[slot], img)) {
        s->held[slot] = s->owned[slot], s->held_in = a->recent;
        s->owned[slot] = NULL;
    }
    return rc;
}

void detfeed__scratch_free(detfeed__scratch *s)
{
    release_owned(s);
    detfeed__img_free(&s->canvas);
    detfeed__img_free(&s->out);
    detfeed__inst_free(&s->inst);
    detfeed__img_free(&s->mix_out);
    detfeed__inst_free(&s->mix_inst);
    detfeed_codec_destroy(s->codec);
    memset(s, 0, sizeof *s);
}

/* Image `index` at its load size and its labels, as a mosaic tile. */
static int tile(const detfeed__augmenter *a, detfeed__scratch *s, int slot,
                uint64_t index, detfeed__tile *t, int *ow, int *oh,
                detfeed__clock *clock)
{
    detfeed__label_view l = detfeed__dataset_label_view(a->ds, (size_t)index);
    detfeed__held img = {0};
    int rc = load(a, s, slot, index, &img, clock);
    t->px = img.px, t->w = img.w, t->h = img.h;
    if (ow)
        *ow = img.ow;
    if (oh)
        *oh = img.oh;
    t->lab = (detfeed__src_labels){.n = l.n,
                                   .nkpt = l.nkpt,
                                   .cls = l.cls,
                                   .boxes = l.boxes,
                                   .kpts = l.kpts,
                                   .seg_start = l.seg_start,
                                   .seg_xy = l.seg_xy};
    return rc;
}

/* Mosaic (or LetterBox) then RandomPerspective for image `index` with the
 * recipe r, into out and inst. */
static int train_geometry(const detfeed__augmenter *a, detfeed__scratch *s,
                          uint64_t index, const detfeed__recipe *r, int out_w,
                          int out_h, detfeed__img *out, detfeed__inst *inst, int *ori_w,
                          int *ori_h, detfeed__clock *clock)
{
    int rc;
    detfeed__img loaded;
    const detfeed__img *in = &s->canvas; /* what RandomPerspective warps */
    if (r->mosaic) {
        detfeed__tile t[4];
        rc = tile(a, s, 0, index, &t[0], ori_w, ori_h, clock);
        for (int k = 1; k < 4 && rc == DETFEED_OK; k++)
            rc = tile(a, s, k, r->partners[k - 1], &t[k], NULL, NULL, clock);
        if (rc == DETFEED_OK) { /* the canvas only where the warp reads */
            int S = 2 * a->hyp.imgsz;
            float M[9];
            detfeed__affine_matrix(r, S, S, out_w, out_h, &a->stack, M);
            bool persp = r->perspective[0] != 0 || r->perspective[1] != 0;
            detfeed__rect need = detfeed__warp_reads(M, persp, S, S, out_w, out_h);
            rc = detfeed__mosaic4(t, a->hyp.imgsz, r->xc, r->yc, &need, &a->stack,
                                  &s->canvas, inst);
        }
    } else if (a->stack.ultralytics >= 804) {
        /* 8.4 warps the loaded image itself (released after the warp). */
        detfeed__tile t;
        rc = tile(a, s, 0, index, &t, ori_w, ori_h, clock);
        if (rc == DETFEED_OK) {
            rc = detfeed__inst_from_labels(inst, &t.lab, t.w, t.h);
            loaded = (detfeed__img){.px = (uint8_t *)t.px, .w = t.w, .h = t.h};
            in = &loaded;
        }
    } else {
        detfeed__tile t;
        rc = tile(a, s, 0, index, &t, ori_w, ori_h, clock);
        if (rc == DETFEED_OK)
            rc = detfeed__letterbox(t.px, t.w, t.h, &t.lab, out_w, out_h, true,
                                    &s->canvas, inst, NULL, NULL);
    }
    if (rc == DETFEED_OK)
        rc = detfeed__random_perspective(in, inst, r, &a->stack, out_w, out_h, out);
    release_owned(s);
    return rc;
}

/* Appends src's instances to dst (same keypoint count). */
static int concat(detfeed__inst *dst, const detfeed__inst *src)
{
    int n = dst->n, rc = detfeed__inst_reserve(dst, n + src->n, src->nkpt);
    if (rc == DETFEED_OK && src->n && src->npt) /* Instances.concatenate */
        rc = n && dst->npt != src->npt
                 ? DETFEED_ENOTSUPPORTED
                 : detfeed__inst_reserve_seg(dst, n + src->n, src->npt);
    if (rc != DETFEED_OK)
        return rc;
    if (src->n && src->npt)
        memcpy(dst->seg + (size_t)n * src->npt * 2, src->seg,
               (size_t)src->n * src->npt * 2 * sizeof *dst->seg);
    memcpy(dst->cls + n, src->cls, (size_t)src->n * sizeof *dst->cls);
    memcpy(dst->box + 4 * (size_t)n, src->box, (size_t)src->n * 4 * sizeof *dst->box);
    if (src->nkpt)
        memcpy(dst->kpt + (size_t)n * src->nkpt * 3, src->kpt,
               (size_t)src->n * src->nkpt * 3 * sizeof *dst->kpt);
    dst->n = n + src->n;
    return DETFEED_OK;
}

/* MixUp: the partner through its own pre-chain (slots + 32), then
 * img * r + partner * (1 - r) in double, truncated, and the labels joined. */
static int mixup(const detfeed__augmenter *a, detfeed__scratch *s, uint32_t epoch,
                 uint64_t index, const detfeed__place *place, bool mosaic_on, int out_w,
                 int out_h, const detfeed__recipe *r, detfeed__clock *clock)
{
    detfeed__recipe pr;
    detfeed__recipe_make(&a->hyp, a->seed, epoch, index, detfeed_dataset_size(a->ds),
                         mosaic_on, DETFEED__SLOT_PARTNER_BASE, place, &pr);
    int rc = train_geometry(a, s, r->mix_partner, &pr, out_w, out_h, &s->mix_out,
                            &s->mix_inst, NULL, NULL, clock);
    if (rc != DETFEED_OK)
        return rc;
    double w0 = r->mix_ratio, w1 = 1 - r->mix_ratio;
    size_t n = (size_t)out_w * out_h * 3;
    for (size_t i = 0; i < n; i++)
        s->out.px[i] = (uint8_t)(s->out.px[i] * w0 + s->mix_out.px[i] * w1);
    return concat(&s->inst, &s->mix_inst);
}

int detfeed__augment(const detfeed__augmenter *a, detfeed__scratch *s, uint32_t epoch,
                     uint64_t index, const detfeed__place *place, bool mosaic_on,
                     int out_w, int out_h, detfeed__clock *clock, detfeed__sample *out)
{
    uint64_t n = detfeed_dataset_size(a->ds);
    memset(out, 0, sizeof *out);
    detfeed__recipe_make(&a->hyp, a->seed, epoch, index, n, mosaic_on, 0, place,
                         &out->recipe);
    const detfeed__recipe *r = &out->recipe;
    int rc;
    /* the image loads inside the geometry time themselves (decode, resize) */
    detfeed__clock_enter(clock, DETFEED_STAGE_GEOMETRY);
    if (!a->train) {
        detfeed__tile t;
        rc = tile(a, s, 0, index, &t, &out->ori_w, &out->ori_h, clock);
        if (rc == DETFEED_OK)
            rc = detfeed__letterbox(t.px, t.w, t.h, &t.lab, out_w, out_h, false,
                                    &s->out, &s->inst, NULL, NULL);
        release_owned(s);
        if (rc == DETFEED_OK)
            detfeed__inst_to_xywh(&s->inst); /* no RandomFlip: Format's form */
    } else {
        rc = train_geometry(a, s, index, r, out_w, out_h, &s->out, &s->inst,
                            &out->ori_w, &out->ori_h, clock);
        if (rc == DETFEED_OK && r->mixup)
            rc = mixup(a, s, epoch, index, place, mosaic_on, out_w, out_h, r, clock);
        detfeed__clock_enter(clock, DETFEED_STAGE_COLOUR);
        if (rc == DETFEED_OK && r->hsv && !s->defer_colour) {
            uint8_t lut[3][256];
            rc = detfeed_hsv_lut(r->gains[0], r->gains[1], r->gains[2], lut);
            size_t stride = (size_t)s->out.w * 3;
            if (rc == DETFEED_OK)
                rc =
                    detfeed_hsv_apply_cv(s->out.px, stride, s->out.px, stride, s->out.w,
                                         s->out.h, lut, &a->stack.cv, DETFEED_ISA_AUTO);
        }
        detfeed__clock_enter(clock, DETFEED_STAGE_FLIP);
        if (rc == DETFEED_OK) {
            detfeed__inst_to_xywh(&s->inst);
            detfeed__flip(&s->out, &s->inst, r->flipud, r->fliplr,
                          detfeed_dataset_flip_idx(a->ds));
        }
    }
    detfeed__clock_enter(clock, -1);
    out->img = &s->out;
    out->inst = &s->inst;
    return rc;
}
