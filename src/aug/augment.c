/*
 * augment.c - one sample through the transforms, in Ultralytics' order:
 * Mosaic (or LetterBox) -> RandomPerspective -> RandomHSV -> RandomFlip
 * (vertical, horizontal) -> Format (the overlap mask, which orders the
 * instances; the label arrays; the image), into the caller's places.
 */
#include "augment.h"

#include "masks.h"
#include "mix.h"

#include "data/dataset_access.h"

#include <stdlib.h>
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
    detfeed__img_free(&s->cp_out);
    detfeed__inst_free(&s->cp_inst);
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

/* A partner's own recipe (its pre-chain's draws): MixUp's at slots + 32
 * (DETFEED__SLOT_PARTNER_BASE), CutMix's at + 128. */
static void own_recipe(const detfeed__augmenter *a, const detfeed__sample_ask *ask,
                       uint32_t base, detfeed__recipe *pr)
{
    detfeed__recipe_make(&a->hyp, a->seed, ask->epoch, ask->index,
                         detfeed_dataset_size(a->ds), ask->mosaic_on, base, ask->place,
                         pr);
}

/* The MixUp partner's own recipe. */
static void partner_recipe(const detfeed__augmenter *a, const detfeed__sample_ask *ask,
                           detfeed__recipe *pr)
{
    own_recipe(a, ask, DETFEED__SLOT_PARTNER_BASE, pr);
}

/* Whether CopyPaste in `mode` may run on the chain of recipe r. */
static bool pastes(const detfeed__augmenter *a, const detfeed__recipe *r, int mode)
{
    return r->copy_paste && a->hyp.copy_paste_mode == mode;
}

/* Mosaic's four tiles: the image and its partners. */
static int mosaic_tiles(const detfeed__augmenter *a, detfeed__scratch *s,
                        uint64_t index, const detfeed__recipe *r, detfeed__tile t[4],
                        int *ori_w, int *ori_h, detfeed__clock *clock)
{
    int rc = tile(a, s, 0, index, &t[0], ori_w, ori_h, clock);
    for (int k = 1; k < 4 && rc == DETFEED_OK; k++)
        rc = tile(a, s, k, r->partners[k - 1], &t[k], NULL, NULL, clock);
    return rc;
}

/* Mosaic's canvas (where the warp reads it; all of it for CopyPaste in
 * mode flip, which mirrors it) and labels. */
static int mosaic_canvas(const detfeed__augmenter *a, detfeed__scratch *s,
                         uint64_t index, const detfeed__recipe *r, bool whole,
                         int out_w, int out_h, detfeed__inst *inst, int *ori_w,
                         int *ori_h, detfeed__clock *clock)
{
    detfeed__tile t[4];
    int rc = mosaic_tiles(a, s, index, r, t, ori_w, ori_h, clock);
    if (rc != DETFEED_OK)
        return rc;
    int S = 2 * a->hyp.imgsz;
    float M[9];
    detfeed__affine_matrix(r, S, S, out_w, out_h, &a->stack, M);
    detfeed__rect need =
        detfeed__warp_reads(M, detfeed__is_perspective(r), S, S, out_w, out_h);
    return detfeed__mosaic4(t, a->hyp.imgsz, r->xc, r->yc, whole ? NULL : &need,
                            &a->stack, &s->canvas, inst);
}

/* 8.4 without Mosaic: the loaded image itself (*in points at it; a copy in
 * the canvas when CopyPaste in mode flip may change it) and its labels. */
static int loaded_image(const detfeed__augmenter *a, detfeed__scratch *s,
                        uint64_t index, bool copy, detfeed__img *loaded,
                        const detfeed__img **in, detfeed__inst *inst, int *ori_w,
                        int *ori_h, detfeed__clock *clock)
{
    detfeed__tile t;
    int rc = tile(a, s, 0, index, &t, ori_w, ori_h, clock);
    if (rc == DETFEED_OK)
        rc = detfeed__inst_from_labels(inst, &t.lab, t.w, t.h);
    if (rc != DETFEED_OK)
        return rc;
    *loaded = (detfeed__img){.px = (uint8_t *)t.px, .w = t.w, .h = t.h};
    *in = loaded;
    if (!copy)
        return DETFEED_OK;
    rc = detfeed__img_reserve(&s->canvas, t.w, t.h);
    if (rc == DETFEED_OK)
        memcpy(s->canvas.px, t.px, (size_t)t.w * t.h * 3);
    *in = &s->canvas;
    return rc;
}

static int train_geometry(const detfeed__augmenter *a, detfeed__scratch *s,
                          const detfeed__sample_ask *ask, uint64_t index,
                          const detfeed__recipe *r, bool paste, detfeed__img *out,
                          detfeed__inst *inst, int *ori_w, int *ori_h,
                          detfeed__clock *clock);

/* CopyPaste in mode mixup: its partner through its own Mosaic and
 * RandomPerspective (no CopyPaste there), then its objects into out. */
static int paste_partner(const detfeed__augmenter *a, detfeed__scratch *s,
                         const detfeed__sample_ask *ask, const detfeed__recipe *r,
                         detfeed__img *out, detfeed__inst *inst, detfeed__clock *clock)
{
    if (inst->n == 0 || inst->npt == 0) /* Ultralytics checks before its gate */
        return DETFEED_OK;
    detfeed__recipe pr;
    own_recipe(a, ask, r->slot_base + DETFEED__SLOT_CP_BASE, &pr);
    int rc = train_geometry(a, s, ask, r->cp_partner, &pr, false, &s->cp_out,
                            &s->cp_inst, NULL, NULL, clock);
    return rc != DETFEED_OK
               ? rc
               : detfeed__copy_paste_mix(out, inst, &s->cp_out, &s->cp_inst,
                                         a->hyp.copy_paste, &a->stack);
}

/* Mosaic (or LetterBox), CopyPaste in mode flip, RandomPerspective and
 * CopyPaste in mode mixup for image `index` with the recipe r (`paste`
 * false: without CopyPaste, as its own partner's chain), into out and
 * inst. */
static int train_geometry(const detfeed__augmenter *a, detfeed__scratch *s,
                          const detfeed__sample_ask *ask, uint64_t index,
                          const detfeed__recipe *r, bool paste, detfeed__img *out,
                          detfeed__inst *inst, int *ori_w, int *ori_h,
                          detfeed__clock *clock)
{
    int rc, out_w = ask->out_w, out_h = ask->out_h;
    detfeed__img loaded;
    const detfeed__img *in = &s->canvas; /* what RandomPerspective warps */
    bool flip = paste && pastes(a, r, DETFEED_PASTE_FLIP);
    if (r->mosaic)
        rc = mosaic_canvas(a, s, index, r, flip, out_w, out_h, inst, ori_w, ori_h,
                           clock);
    else if (a->stack.ultralytics >= 804)
        rc = loaded_image(a, s, index, flip, &loaded, &in, inst, ori_w, ori_h, clock);
    else {
        detfeed__tile t;
        rc = tile(a, s, 0, index, &t, ori_w, ori_h, clock);
        if (rc == DETFEED_OK)
            rc = detfeed__letterbox(t.px, t.w, t.h, &t.lab, out_w, out_h, true,
                                    &s->canvas, inst, NULL, NULL);
    }
    if (rc == DETFEED_OK && flip)
        rc = detfeed__copy_paste_flip(&s->canvas, inst, a->hyp.copy_paste, &a->stack,
                                      &s->cp_inst);
    if (rc == DETFEED_OK)
        rc = detfeed__random_perspective(in, inst, r, &a->stack, out_w, out_h, out);
    release_owned(s);
    if (rc == DETFEED_OK && paste && pastes(a, r, DETFEED_PASTE_MIXUP))
        rc = paste_partner(a, s, ask, r, out, inst, clock);
    return rc;
}

/* MixUp: the partner through its own pre-chain, then img * r + partner *
 * (1 - r) in double, truncated, and the labels joined. */
static int mixup(const detfeed__augmenter *a, detfeed__scratch *s,
                 const detfeed__sample_ask *ask, const detfeed__recipe *r,
                 detfeed__clock *clock)
{
    detfeed__recipe pr;
    partner_recipe(a, ask, &pr);
    int rc = train_geometry(a, s, ask, r->mix_partner, &pr, true, &s->mix_out,
                            &s->mix_inst, NULL, NULL, clock);
    if (rc != DETFEED_OK)
        return rc;
    detfeed__mixup_blend(s->out.px, s->mix_out.px, (size_t)ask->out_w * ask->out_h * 3,
                         r->mix_ratio);
    return detfeed__inst_append(&s->inst, &s->mix_inst);
}

/* CutMix: the partner through its own pre-chain (in MixUp's scratch, free
 * again), then an area of it into the sample (cutmix.h). */
static int cutmix(const detfeed__augmenter *a, detfeed__scratch *s,
                  const detfeed__sample_ask *ask, const detfeed__recipe *r,
                  detfeed__clock *clock)
{
    detfeed__recipe pr;
    own_recipe(a, ask, DETFEED__SLOT_CUT_BASE, &pr);
    int rc = train_geometry(a, s, ask, r->cut_partner, &pr, true, &s->mix_out,
                            &s->mix_inst, NULL, NULL, clock);
    bool applied;
    return rc != DETFEED_OK ? rc
                            : detfeed__cutmix(&s->out, &s->inst, &s->mix_out,
                                              &s->mix_inst, r, &a->stack, &applied);
}

/* Validation: LetterBox only, boxes into Format's form (no RandomFlip). */
static int validation(const detfeed__augmenter *a, detfeed__scratch *s,
                      const detfeed__sample_ask *ask, detfeed__sample *out,
                      detfeed__clock *clock)
{
    detfeed__tile t;
    int rc = tile(a, s, 0, ask->index, &t, &out->ori_w, &out->ori_h, clock);
    if (rc == DETFEED_OK)
        rc = detfeed__letterbox(t.px, t.w, t.h, &t.lab, ask->out_w, ask->out_h, false,
                                &s->out, &s->inst, NULL, NULL);
    release_owned(s);
    if (rc == DETFEED_OK)
        detfeed__inst_to_xywh(&s->inst);
    return rc;
}

/* Training: the geometry (and MixUp, CutMix), RandomHSV unless the device colours,
 * the boxes into centre form, RandomFlip. */
static int training(const detfeed__augmenter *a, detfeed__scratch *s,
                    const detfeed__sample_ask *ask, bool defer_colour,
                    detfeed__sample *out, detfeed__clock *clock)
{
    const detfeed__recipe *r = &out->recipe;
    int rc = train_geometry(a, s, ask, ask->index, r, true, &s->out, &s->inst,
                            &out->ori_w, &out->ori_h, clock);
    if (rc == DETFEED_OK && r->mixup)
        rc = mixup(a, s, ask, r, clock);
    if (rc == DETFEED_OK && r->cutmix)
        rc = cutmix(a, s, ask, r, clock);
    detfeed__clock_enter(clock, DETFEED_STAGE_COLOUR);
    if (rc == DETFEED_OK && r->hsv && !defer_colour) {
        uint8_t lut[3][256];
        rc = detfeed_hsv_lut(r->gains[0], r->gains[1], r->gains[2], lut);
        size_t stride = (size_t)s->out.w * 3;
        if (rc == DETFEED_OK)
            rc = detfeed_hsv_apply_cv(s->out.px, stride, s->out.px, stride, s->out.w,
                                      s->out.h, lut, &a->stack.cv, DETFEED_ISA_AUTO);
    }
    detfeed__clock_enter(clock, DETFEED_STAGE_FLIP);
    if (rc == DETFEED_OK) {
        detfeed__inst_to_xywh(&s->inst);
        detfeed__flip(&s->out, &s->inst, r->flipud, r->fliplr,
                      detfeed_dataset_flip_idx(a->ds));
    }
    return rc;
}

/* ---- the description instead of the pixels (detfeed__pixels.render) ---- */

/* Whether the cache holds image i (a description names cached images only). */
static bool held(const detfeed__augmenter *a, uint64_t i)
{
    return a->cache && detfeed__cache_holds(a->cache, (size_t)i);
}

/* Whether the cache holds image `index` and, under recipe r, its tiles. */
static bool geometry_held(const detfeed__augmenter *a, uint64_t index,
                          const detfeed__recipe *r)
{
    if (!held(a, index))
        return false;
    for (int k = 0; r->mosaic && k < 3; k++)
        if (!held(a, r->partners[k]))
            return false;
    return true;
}

/* Whether the cache holds every image the sample reads (its MixUp partner's
 * tiles through the partner's recipe). */
static bool sample_held(const detfeed__augmenter *a, const detfeed__sample_ask *ask,
                        const detfeed__recipe *r)
{
    if (!a->train)
        return held(a, ask->index);
    detfeed__recipe pr;
    if (r->mixup)
        partner_recipe(a, ask, &pr);
    return geometry_held(a, ask->index, r) &&
           (!r->mixup || geometry_held(a, r->mix_partner, &pr));
}

/* Image `index` (loaded as tile t) covering canvas rectangle c, its pixel
 * (0, 0) at (ox, oy). */
static detfeed__render_tile render_tile(uint64_t index, const detfeed__tile *t,
                                        detfeed__rect c, int ox, int oy)
{
    return (detfeed__render_tile){.index = index,
                                  .w = t->w,
                                  .h = t->h,
                                  .x0 = c.x0,
                                  .y0 = c.y0,
                                  .x1 = c.x1,
                                  .y1 = c.y1,
                                  .ox = ox,
                                  .oy = oy};
}

/* Mosaic's labels, and its canvas as 4 placed tiles. */
static int describe_mosaic(const detfeed__augmenter *a, detfeed__scratch *s,
                           uint64_t index, const detfeed__recipe *r,
                           detfeed__render_image *im, detfeed__inst *inst, int *ori_w,
                           int *ori_h, detfeed__clock *clock)
{
    detfeed__tile t[4];
    int rc = mosaic_tiles(a, s, index, r, t, ori_w, ori_h, clock);
    if (rc != DETFEED_OK)
        return rc;
    int side = a->hyp.imgsz;
    im->canvas_w = im->canvas_h = 2 * side;
    im->ntiles = 4;
    for (int k = 0; k < 4; k++) {
        int o[2];
        detfeed__rect c =
            detfeed__mosaic_tile(k, t[k].w, t[k].h, side, r->xc, r->yc, o);
        im->tiles[k] =
            render_tile(k ? r->partners[k - 1] : index, &t[k], c, o[0], o[1]);
    }
    return detfeed__mosaic4(t, side, r->xc, r->yc, NULL, &a->stack, NULL, inst);
}

/* Without Mosaic: the labels, and the canvas the warp reads (8.4: the loaded
 * image itself; 8.3: the image letterboxed, when that does not resize). */
static int describe_single(const detfeed__augmenter *a, detfeed__scratch *s,
                           uint64_t index, int out_w, int out_h,
                           detfeed__render_image *im, detfeed__inst *inst, int *ori_w,
                           int *ori_h, int32_t *status, detfeed__clock *clock)
{
    detfeed__tile t;
    int rc = tile(a, s, 0, index, &t, ori_w, ori_h, clock);
    if (rc != DETFEED_OK)
        return rc;
    im->ntiles = 1;
    if (a->stack.ultralytics >= 804) {
        im->canvas_w = t.w, im->canvas_h = t.h;
        im->tiles[0] = render_tile(index, &t, (detfeed__rect){0, 0, t.w, t.h}, 0, 0);
        return detfeed__inst_from_labels(inst, &t.lab, t.w, t.h);
    }
    detfeed__fit f = detfeed__letterbox_fit(t.w, t.h, out_w, out_h, true);
    if (f.nw != t.w || f.nh != t.h) {
        *status = DETFEED__RENDER_RESIZES;
        return DETFEED_OK;
    }
    im->canvas_w = out_w, im->canvas_h = out_h;
    detfeed__rect c = {f.left, f.top, f.left + t.w, f.top + t.h};
    im->tiles[0] = render_tile(index, &t, c, f.left, f.top);
    return detfeed__letterbox(NULL, t.w, t.h, &t.lab, out_w, out_h, true, NULL, inst,
                              NULL, NULL);
}

/* train_geometry's labels exactly as it makes them, and its pixels
 * described in im instead of made. */
static int describe_geometry(const detfeed__augmenter *a, detfeed__scratch *s,
                             uint64_t index, const detfeed__recipe *r, int out_w,
                             int out_h, detfeed__render_image *im, detfeed__inst *inst,
                             int *ori_w, int *ori_h, int32_t *status,
                             detfeed__clock *clock)
{
    memset(im, 0, sizeof *im);
    int rc = r->mosaic ? describe_mosaic(a, s, index, r, im, inst, ori_w, ori_h, clock)
                       : describe_single(a, s, index, out_w, out_h, im, inst, ori_w,
                                         ori_h, status, clock);
    release_owned(s);
    if (rc != DETFEED_OK || *status != DETFEED__RENDER_DESCRIBED)
        return rc;
    float M[9];
    detfeed__affine_matrix(r, im->canvas_w, im->canvas_h, out_w, out_h, &a->stack, M);
    for (int k = 0; k < 9; k++)
        im->M[k] = M[k];
    im->warp = detfeed__is_perspective(r) ? DETFEED__RENDER_PERSPECTIVE
                                          : DETFEED__RENDER_AFFINE;
    detfeed__img canvas = {.w = im->canvas_w, .h = im->canvas_h};
    return detfeed__random_perspective(&canvas, inst, r, &a->stack, out_w, out_h, NULL);
}

/* training()'s labels, its image described in d. */
static int describe_training(const detfeed__augmenter *a, detfeed__scratch *s,
                             const detfeed__sample_ask *ask, detfeed__sample *out,
                             detfeed__render *d, detfeed__clock *clock)
{
    const detfeed__recipe *r = &out->recipe;
    int rc =
        describe_geometry(a, s, ask->index, r, ask->out_w, ask->out_h, &d->image[0],
                          &s->inst, &out->ori_w, &out->ori_h, &d->status, clock);
    if (rc == DETFEED_OK && d->status == DETFEED__RENDER_DESCRIBED && r->mixup) {
        detfeed__recipe pr;
        partner_recipe(a, ask, &pr);
        rc = describe_geometry(a, s, r->mix_partner, &pr, ask->out_w, ask->out_h,
                               &d->image[1], &s->mix_inst, NULL, NULL, &d->status,
                               clock);
        if (rc == DETFEED_OK && d->status == DETFEED__RENDER_DESCRIBED)
            rc = detfeed__inst_append(&s->inst, &s->mix_inst);
        d->mixup = 1;
        d->mix_ratio = r->mix_ratio;
    }
    if (rc != DETFEED_OK || d->status != DETFEED__RENDER_DESCRIBED)
        return rc;
    detfeed__clock_enter(clock, DETFEED_STAGE_FLIP);
    detfeed__inst_to_xywh(&s->inst);
    detfeed__flip_labels(&s->inst, ask->out_w, ask->out_h, r->flipud, r->fliplr,
                         detfeed_dataset_flip_idx(a->ds));
    d->flipud = r->flipud, d->fliplr = r->fliplr;
    return DETFEED_OK;
}

/* validation()'s labels, its letterbox described in d as a copied canvas
 * (when it does not resize). */
static int describe_validation(const detfeed__augmenter *a, detfeed__scratch *s,
                               const detfeed__sample_ask *ask, detfeed__sample *out,
                               detfeed__render *d, detfeed__clock *clock)
{
    detfeed__tile t;
    int rc = tile(a, s, 0, ask->index, &t, &out->ori_w, &out->ori_h, clock);
    release_owned(s);
    if (rc != DETFEED_OK)
        return rc;
    detfeed__fit f = detfeed__letterbox_fit(t.w, t.h, ask->out_w, ask->out_h, false);
    if (f.nw != t.w || f.nh != t.h) {
        d->status = DETFEED__RENDER_RESIZES;
        return DETFEED_OK;
    }
    detfeed__render_image *im = &d->image[0];
    im->M[0] = im->M[4] = im->M[8] = 1;
    im->warp = DETFEED__RENDER_COPY;
    im->canvas_w = ask->out_w, im->canvas_h = ask->out_h;
    im->ntiles = 1;
    detfeed__rect c = {f.left, f.top, f.left + t.w, f.top + t.h};
    im->tiles[0] = render_tile(ask->index, &t, c, f.left, f.top);
    rc = detfeed__letterbox(NULL, t.w, t.h, &t.lab, ask->out_w, ask->out_h, false, NULL,
                            &s->inst, NULL, NULL);
    if (rc == DETFEED_OK)
        detfeed__inst_to_xywh(&s->inst);
    return rc;
}

/* The sample's labels with its image described in d, when every image it
 * reads is cached and the description can express it; otherwise d says why
 * (the rest of d zero) and nothing is made. */
static int describe(const detfeed__augmenter *a, detfeed__scratch *s,
                    const detfeed__sample_ask *ask, detfeed__sample *out,
                    detfeed__render *d, detfeed__clock *clock)
{
    memset(d, 0, sizeof *d);
    d->out_w = ask->out_w, d->out_h = ask->out_h;
    int rc = DETFEED_OK;
    if (a->train && out->recipe.cutmix)
        d->status = DETFEED__RENDER_CUTMIX;
    else if (a->train && ask->mosaic_on && a->hyp.copy_paste > 0)
        d->status = DETFEED__RENDER_PASTE;
    else if (!sample_held(a, ask, &out->recipe))
        d->status = DETFEED__RENDER_UNCACHED;
    else
        rc = a->train ? describe_training(a, s, ask, out, d, clock)
                      : describe_validation(a, s, ask, out, d, clock);
    if (d->status != DETFEED__RENDER_DESCRIBED) {
        int32_t why = d->status;
        memset(d, 0, sizeof *d);
        d->status = why;
    }
    return rc;
}

/* ---- Format, into the caller's places ---- */

static int grow_floats(float **p, size_t n)
{
    float *g = realloc(*p, (n ? n : 1) * sizeof **p);
    if (g == NULL)
        return DETFEED_ENOMEM;
    *p = g;
    return DETFEED_OK;
}

/* Room for n instances of nkpt keypoints in l. */
static int labels_room(detfeed__label_arrays *l, int n, int nkpt)
{
    if (n <= l->cap)
        return DETFEED_OK;
    if (!l->grow)
        return DETFEED_ELIMIT;
    int cap = n + n / 2 + 8;
    if (grow_floats(&l->cls, (size_t)cap) || grow_floats(&l->box, (size_t)cap * 4) ||
        (nkpt && grow_floats(&l->kpt, (size_t)cap * nkpt * 3)))
        return DETFEED_ENOMEM;
    l->cap = cap;
    return DETFEED_OK;
}

/* Room for `bytes` in b. */
static int buf_room(detfeed__buf *b, size_t bytes)
{
    if (bytes <= b->bytes)
        return DETFEED_OK;
    if (!b->grow)
        return DETFEED_ELIMIT;
    void *g = realloc(b->p, bytes);
    if (g == NULL)
        return DETFEED_ENOMEM;
    b->p = g;
    b->bytes = bytes;
    return DETFEED_OK;
}

/* The mask's place for this sample (NULL: none), and what it needs. */
static detfeed__buf *mask_place(const detfeed__augmenter *a, const detfeed__dest *d,
                                int w, int h, const detfeed__scratch *s,
                                detfeed__sample *out)
{
    out->mask_type = DETFEED_MASK_NONE;
    out->mask_bytes = 0;
    if (detfeed_dataset_task(a->ds) != DETFEED_TASK_SEGMENT)
        return NULL;
    out->mask_type = detfeed__mask_type(s->inst.n);
    out->mask_bytes = (size_t)(w / 4) * (size_t)(h / 4) * (size_t)out->mask_type;
    return out->mask_type == DETFEED_MASK_I32 ? d->mask_i32 : d->mask_u8;
}

/* Exchanges the planes a and b of `bytes` each. */
static void swap_planes(uint8_t *a, uint8_t *b, size_t bytes)
{
    uint8_t t[4096];
    for (size_t at = 0; at < bytes; at += sizeof t) {
        size_t k = bytes - at < sizeof t ? bytes - at : sizeof t;
        memcpy(t, a + at, k);
        memcpy(a + at, b + at, k);
        memcpy(b + at, t, k);
    }
}

/* The image into its place in the form asked for: as a tensor, RGB, or
 * BGR when Format's bgr gate keeps the channels (`rgb` false). */
static int put_image(const detfeed__pixels *p, const detfeed__img *im, bool rgb)
{
    if (p->px == NULL)
        return DETFEED_OK;
    if (!p->tensor) { /* made in place, or copied there */
        if (p->px != im->px)
            memcpy(p->px, im->px, (size_t)im->w * im->h * 3);
        return DETFEED_OK;
    }
    size_t plane = (size_t)im->w * im->h * detfeed_dtype_size(p->dtype);
    int rc = detfeed_convert_chw(im->px, (size_t)im->w * 3, im->w, im->h, p->px, plane,
                                 p->dtype, p->scale);
    if (rc == DETFEED_OK && !rgb) /* rare (probability bgr): swapped after */
        swap_planes(p->px, p->px + 2 * plane, plane);
    return rc;
}

/* Format: the places checked (nothing written when one is short), the
 * overlap mask (which orders the instances), the label arrays normalized,
 * then the image, when it was made (not described). */
static int format_sample(const detfeed__augmenter *a, detfeed__scratch *s,
                         const detfeed__sample_ask *ask, const detfeed__dest *d,
                         bool made, detfeed__sample *out, detfeed__clock *clock)
{
    detfeed__clock_enter(clock, DETFEED_STAGE_PACK);
    int w = ask->out_w, h = ask->out_h, nkpt;
    if (made && (s->out.w != w || s->out.h != h))
        return DETFEED_EBADSTATE; /* the places are for out_w x out_h: by design */
    detfeed_dataset_kpt_shape(a->ds, &nkpt, NULL);
    out->n = s->inst.n;
    detfeed__buf *mask = mask_place(a, d, w, h, s, out);
    int rc = mask ? buf_room(mask, out->mask_bytes) : DETFEED_OK;
    if (rc == DETFEED_OK && d->labels)
        rc = labels_room(d->labels, out->n, nkpt);
    if (rc == DETFEED_OK && out->mask_type != DETFEED_MASK_NONE)
        rc = detfeed__format_masks(&s->inst, w, h, &a->stack, mask ? mask->p : NULL);
    if (rc != DETFEED_OK)
        return rc;
    if (d->labels)
        detfeed__format(&s->inst, w, h, &a->stack, d->labels->cls, d->labels->box,
                        d->labels->kpt);
    detfeed__clock_enter(clock, DETFEED_STAGE_CONVERT);
    return made ? put_image(&d->image, &s->out, out->recipe.to_rgb) : DETFEED_OK;
}

int detfeed__augment(const detfeed__augmenter *a, detfeed__scratch *s,
                     const detfeed__sample_ask *ask, const detfeed__dest *dest,
                     detfeed__clock *clock, detfeed__sample *out)
{
    memset(out, 0, sizeof *out);
    detfeed__recipe_make(&a->hyp, a->seed, ask->epoch, ask->index,
                         detfeed_dataset_size(a->ds), ask->mosaic_on, 0, ask->place,
                         &out->recipe);
    detfeed__clock_enter(clock, DETFEED_STAGE_GEOMETRY);
    detfeed__render *d = dest->image.render;
    int rc = d ? describe(a, s, ask, out, d, clock) : DETFEED_OK;
    bool made = d == NULL || d->status != DETFEED__RENDER_DESCRIBED;
    /* An 8-bit place (the CUDA staging) is made in directly: s->out points
     * at it for the chain (it is exactly out_w x out_h x 3 bytes, so no
     * step reallocates it), its own buffer put back after. */
    bool direct = made && dest->image.px != NULL && !dest->image.tensor;
    detfeed__img own = s->out;
    if (direct)
        s->out = (detfeed__img){.px = dest->image.px,
                                .cap = (size_t)ask->out_w * ask->out_h * 3,
                                .borrowed = true};
    if (rc == DETFEED_OK && made)
        rc = a->train ? training(a, s, ask, dest->image.defer_colour, out, clock)
                      : validation(a, s, ask, out, clock);
    if (rc == DETFEED_OK)
        rc = format_sample(a, s, ask, dest, made, out, clock);
    if (direct) {
        s->view = s->out;
        s->out = own;
    }
    detfeed__clock_enter(clock, -1);
    out->img = made ? (direct ? &s->view : &s->out) : NULL;
    out->res_w = ask->out_w, out->res_h = ask->out_h;
    if (!a->train && a->stack.ultralytics < 804) /* load_image's size */
        detfeed_load_size(out->ori_w, out->ori_h, a->hyp.imgsz, &out->res_w,
                          &out->res_h);
    return rc;
}
