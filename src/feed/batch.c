/*
 * batch.c - batch slots: made once for the largest batch, filled sample by
 * sample on the worker threads (each sample made by aug straight into its
 * places: the image into the consumer's tensor, or staged for the device;
 * its label arrays; its overlap mask), and finished on the consumer's
 * thread, where each sample's labels are gathered into the Ultralytics
 * label arrays; then the accessors of the detfeed_batch the consumer holds.
 */
#include "batch.h"

#include <stdlib.h>
#include <string.h>

/* One sample's places and record in its batch slot. */
typedef struct sample_rec {
    uint64_t ds_index;
    int ori_h, ori_w, res_h, res_w;
    int n;
    detfeed__label_arrays lab;   /* its label arrays (grown by aug) */
    detfeed_mask_type mask_type; /* segment datasets: its mask's element type */
    detfeed__buf narrow;         /* its place in the slot's 8-bit masks */
    detfeed__buf wide;           /* its int32 mask (more than 255 instances) */
    detfeed__render render;      /* the recipe route: its image described */
} sample_rec;

struct detfeed_batch {
    const detfeed__slot_spec *spec;
    int n, h, w;
    uint64_t index;
    uint8_t *images; /* through the route: the tensor, or staged for CUDA */
    size_t image_bytes, image_cap;
    bool pinned; /* images in page-locked memory (cudaHostAlloc) */
    /* CUDA output: the tensor is at dev_images once `event` completes. */
    const void *dev_images;
    void *event;
    int slot;
    uint8_t *masks; /* segment datasets: B x (h / 4) x (w / 4) overlap masks */
    /* The batch's masks as int32 when a sample's is (built when the
     * consumer takes it), and which of the two the batch has. */
    int32_t *wide_masks;
    size_t wide_cap;
    detfeed_mask_type mask_type;
    sample_rec *s;
    /* the consumer's arrays, built by detfeed__batch_finish */
    int total, cap;
    float *cls, *box, *idx, *kpt;
};

static int grow(float **p, size_t n)
{
    float *g = realloc(*p, (n ? n : 1) * sizeof **p);
    if (g == NULL)
        return DETFEED_ENOMEM;
    *p = g;
    return DETFEED_OK;
}

/* ---- slots ---- */

static void free_slot(detfeed_batch *bt, int batch)
{
    for (int i = 0; bt->s && i < batch; i++) {
        free(bt->s[i].lab.cls);
        free(bt->s[i].lab.box);
        free(bt->s[i].lab.kpt);
        free(bt->s[i].wide.p);
    }
    free(bt->s);
    detfeed__route_host_free(bt->images, bt->pinned);
    free(bt->masks);
    free(bt->wide_masks);
    free(bt->cls);
    free(bt->box);
    free(bt->idx);
    free(bt->kpt);
}

/* Slot i, sized for the largest image a batch can hold. */
static int init_slot(detfeed_batch *bt, int i, const detfeed__slot_spec *spec,
                     const char **pinned_why)
{
    size_t quarter = (size_t)(spec->side / 4) * (size_t)(spec->side / 4);
    bt->spec = spec;
    bt->slot = i;
    bt->image_cap = detfeed__route_slot_bytes(spec->route);
    /* Page-locked when asked for and a CUDA device is there (asynchronous
     * copies), else pageable; the loader reports which
     * (detfeed_loader_pinned). */
    bt->images =
        detfeed__route_host_alloc(spec->route, bt->image_cap, &bt->pinned, pinned_why);
    bt->s = calloc((size_t)spec->batch, sizeof *bt->s);
    for (int k = 0; bt->s && k < spec->batch; k++)
        bt->s[k].lab.grow = bt->s[k].wide.grow = true;
    if (spec->masks)
        bt->masks = malloc(quarter * (size_t)spec->batch);
    if (bt->images == NULL || bt->s == NULL || (spec->masks && bt->masks == NULL))
        return DETFEED_ENOMEM;
    return DETFEED_OK;
}

int detfeed__slots_create(detfeed_batch **out, int count,
                          const detfeed__slot_spec *spec, const char **pinned_why)
{
    *pinned_why = NULL;
    detfeed_batch *slots = calloc((size_t)count, sizeof *slots);
    if (slots == NULL)
        return DETFEED_ENOMEM;
    int rc = DETFEED_OK;
    for (int i = 0; rc == DETFEED_OK && i < count; i++)
        rc = init_slot(&slots[i], i, spec, pinned_why);
    if (rc != DETFEED_OK) {
        detfeed__slots_destroy(slots, count);
        return rc;
    }
    *out = slots;
    return DETFEED_OK;
}

void detfeed__slots_destroy(detfeed_batch *slots, int count)
{
    for (int i = 0; slots && i < count; i++)
        if (slots[i].spec) /* made, perhaps partly */
            free_slot(&slots[i], slots[i].spec->batch);
    free(slots);
}

detfeed_batch *detfeed__slot_at(detfeed_batch *slots, int i)
{
    return &slots[i];
}

bool detfeed__batch_pinned(const detfeed_batch *bt)
{
    return bt->pinned;
}

/* ---- on the workers: one sample into its position ---- */

void detfeed__batch_places(detfeed_batch *bt, int pos, int w, int h, detfeed__dest *d)
{
    const detfeed__slot_spec *spec = bt->spec;
    sample_rec *r = &bt->s[pos];
    size_t quarter = (size_t)(w / 4) * (size_t)(h / 4);
    *d = (detfeed__dest){.labels = &r->lab};
    detfeed__route_place(spec->route, bt->images, pos, w, h, &r->render, &d->image);
    if (bt->masks) {
        r->narrow =
            (detfeed__buf){.p = bt->masks + (size_t)pos * quarter, .bytes = quarter};
        d->mask_u8 = &r->narrow;
        d->mask_i32 = &r->wide;
    }
}

int detfeed__batch_put(detfeed_batch *bt, int pos, const detfeed__sample *s,
                       uint64_t index)
{
    sample_rec *r = &bt->s[pos];
    int rc = detfeed__route_stage_colour(bt->spec->route, bt->images, pos, &s->recipe);
    if (rc == DETFEED_OK)
        rc = detfeed__route_stage_render(bt->spec->route, bt->images, pos, &r->render);
    if (rc != DETFEED_OK)
        return rc;
    r->ds_index = index;
    r->n = s->n;
    r->mask_type = s->mask_type;
    r->ori_h = s->ori_h, r->ori_w = s->ori_w;
    r->res_h = s->res_h, r->res_w = s->res_w;
    return DETFEED_OK;
}

/* ---- on the consumer's thread: the batch finished ---- */

/* The consumer's label arrays: each sample's in order, with batch_idx. */
static int assemble(detfeed_batch *bt)
{
    int total = 0, nkpt = bt->spec->nkpt;
    for (int i = 0; i < bt->n; i++)
        total += bt->s[i].n;
    if (total > bt->cap) {
        int cap = total + total / 2 + 16;
        if (grow(&bt->cls, (size_t)cap) || grow(&bt->box, (size_t)cap * 4) ||
            grow(&bt->idx, (size_t)cap) ||
            (nkpt && grow(&bt->kpt, (size_t)cap * nkpt * 3)))
            return DETFEED_ENOMEM;
        bt->cap = cap;
    }
    int k = 0;
    for (int i = 0; i < bt->n; i++) {
        const sample_rec *r = &bt->s[i];
        if (r->n == 0)
            continue; /* its arrays may not exist yet */
        memcpy(bt->cls + k, r->lab.cls, (size_t)r->n * sizeof *bt->cls);
        memcpy(bt->box + 4 * (size_t)k, r->lab.box, (size_t)r->n * 4 * sizeof *bt->box);
        if (nkpt)
            memcpy(bt->kpt + (size_t)k * nkpt * 3, r->lab.kpt,
                   (size_t)r->n * nkpt * 3 * sizeof *bt->kpt);
        for (int j = 0; j < r->n; j++)
            bt->idx[k + j] = (float)i;
        k += r->n;
    }
    bt->total = total;
    return DETFEED_OK;
}

/* The batch's masks are int32 when any sample's is, as torch.cat promotes
 * them in Ultralytics' collate_fn: the 8-bit ones widened, the int32 ones
 * copied. Batches without such a sample keep the slot's 8-bit masks. */
static int assemble_masks(detfeed_batch *bt)
{
    bt->mask_type = bt->masks ? DETFEED_MASK_U8 : DETFEED_MASK_NONE;
    for (int i = 0; bt->masks && i < bt->n; i++)
        if (bt->s[i].mask_type == DETFEED_MASK_I32)
            bt->mask_type = DETFEED_MASK_I32;
    if (bt->mask_type != DETFEED_MASK_I32)
        return DETFEED_OK;
    size_t size = (size_t)(bt->h / 4) * (size_t)(bt->w / 4), total = size * bt->n;
    if (total > bt->wide_cap) {
        int32_t *g = realloc(bt->wide_masks, total * sizeof *g);
        if (g == NULL)
            return DETFEED_ENOMEM;
        bt->wide_masks = g;
        bt->wide_cap = total;
    }
    for (int i = 0; i < bt->n; i++) {
        int32_t *dst = bt->wide_masks + (size_t)i * size;
        const uint8_t *narrow = bt->masks + (size_t)i * size;
        if (bt->s[i].mask_type == DETFEED_MASK_I32)
            memcpy(dst, bt->s[i].wide.p, size * sizeof *dst);
        else
            for (size_t p = 0; p < size; p++)
                dst[p] = narrow[p];
    }
    return DETFEED_OK;
}

int detfeed__batch_finish(detfeed_batch *bt, int count, uint64_t index, int h, int w,
                          void *stream, detfeed__msg *msg)
{
    detfeed__route *route = bt->spec->route;
    bt->n = count;
    bt->index = index;
    bt->h = h;
    bt->w = w;
    bt->image_bytes =
        (size_t)count * 3 * (size_t)h * w * detfeed_dtype_size(bt->spec->dtype);
    if (assemble(bt) != DETFEED_OK || assemble_masks(bt) != DETFEED_OK)
        return detfeed__fail(msg, DETFEED_ENOMEM, "out of memory for labels or masks");
    if (detfeed__route_output(route) != DETFEED_OUTPUT_CUDA)
        return DETFEED_OK;
    int rc = detfeed__route_submit(route, bt->slot, bt->images, count, h, w, stream,
                                   &bt->dev_images, &bt->event);
    if (rc != DETFEED_OK)
        return detfeed__fail(msg, rc, "batch %llu to the CUDA device: %s",
                             (unsigned long long)index, detfeed__route_error(route));
    return DETFEED_OK;
}

int detfeed__batch_release(detfeed_batch *bt, void *stream)
{
    return detfeed__route_release(bt->spec->route, bt->slot, stream);
}

/* ---- the consumer's accessors ---- */

int detfeed_batch_size(const detfeed_batch *b, int *height, int *width)
{
    if (height)
        *height = b ? b->h : 0;
    if (width)
        *width = b ? b->w : 0;
    return b ? b->n : 0;
}

uint64_t detfeed_batch_index(const detfeed_batch *b)
{
    return b ? b->index : 0;
}

const void *detfeed_batch_images(const detfeed_batch *b, size_t *bytes)
{
    if (bytes)
        *bytes = b ? b->image_bytes : 0;
    return b == NULL || b->dev_images ? NULL : b->images;
}

const void *detfeed_batch_cuda_images(const detfeed_batch *b, size_t *bytes)
{
    if (bytes)
        *bytes = b ? b->image_bytes : 0;
    return b ? b->dev_images : NULL;
}

void *detfeed_batch_cuda_event(const detfeed_batch *b)
{
    return b && b->dev_images ? b->event : NULL;
}

int detfeed_batch_copy_images(const detfeed_batch *b, void *dst, size_t bytes)
{
    if (b == NULL || dst == NULL || bytes < b->image_bytes)
        return DETFEED_EINVAL;
    if (b->dev_images == NULL) {
        memcpy(dst, b->images, b->image_bytes);
        return DETFEED_OK;
    }
    return detfeed__route_to_host(b->spec->route, b->slot, dst, b->image_bytes);
}

int detfeed_batch_instances(const detfeed_batch *b)
{
    return b ? b->total : 0;
}

const float *detfeed_batch_cls(const detfeed_batch *b)
{
    return b ? b->cls : NULL;
}

const float *detfeed_batch_bboxes(const detfeed_batch *b)
{
    return b ? b->box : NULL;
}

const float *detfeed_batch_batch_idx(const detfeed_batch *b)
{
    return b ? b->idx : NULL;
}

const float *detfeed_batch_keypoints(const detfeed_batch *b)
{
    return b && b->spec->nkpt ? b->kpt : NULL;
}

const char *detfeed_batch_im_file(const detfeed_batch *b, int i)
{
    return b && i >= 0 && i < b->n
               ? detfeed_dataset_image_path(b->spec->ds, b->s[i].ds_index)
               : NULL;
}

void detfeed_batch_shapes(const detfeed_batch *b, int i, int ori_hw[2],
                          int resized_hw[2])
{
    if (b == NULL || i < 0 || i >= b->n)
        return;
    if (ori_hw) {
        ori_hw[0] = b->s[i].ori_h;
        ori_hw[1] = b->s[i].ori_w;
    }
    if (resized_hw) {
        resized_hw[0] = b->s[i].res_h;
        resized_hw[1] = b->s[i].res_w;
    }
}

/* What the mask accessors read for a NULL batch: no masks. */
static const detfeed_batch no_batch = {.mask_type = DETFEED_MASK_NONE};

const void *detfeed_batch_mask_data(const detfeed_batch *b, int *height, int *width,
                                    detfeed_mask_type *type)
{
    if (b == NULL)
        b = &no_batch;
    if (height)
        *height = b->masks ? b->h / 4 : 0;
    if (width)
        *width = b->masks ? b->w / 4 : 0;
    if (type)
        *type = b->mask_type;
    return b->mask_type == DETFEED_MASK_I32 ? (const void *)b->wide_masks : b->masks;
}

const uint8_t *detfeed_batch_masks(const detfeed_batch *b, int *height, int *width)
{
    if (b == NULL)
        b = &no_batch;
    bool narrow = b->mask_type != DETFEED_MASK_I32;
    if (height)
        *height = narrow && b->masks ? b->h / 4 : 0;
    if (width)
        *width = narrow && b->masks ? b->w / 4 : 0;
    return narrow ? b->masks : NULL;
}
