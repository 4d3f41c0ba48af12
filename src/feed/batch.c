/*
 * batch.c - batches: the epoch's sample order and shard, samples made on the
 * ring's worker threads straight into their batch slot (the image converted
 * to the consumer's layout and dtype in the same pass), and the Ultralytics
 * label arrays assembled when the consumer takes the batch.
 */
#include "loader_internal.h"

#include "aug/masks.h"
#include "cuda/cuda_host.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* One sample's labels and shapes in its batch slot. */
typedef struct sample_rec {
    uint64_t ds_index;
    int ori_h, ori_w, res_h, res_w;
    int n, cap;
    float *cls, *box, *kpt;
    detfeed_mask_type mask_type; /* segment datasets: its mask's element type */
    int32_t *wide;               /* its int32 mask (more than 255 instances) */
    size_t wide_cap;             /* elements allocated at wide */
} sample_rec;

struct detfeed_batch {
    int n, h, w;
    uint64_t index;
    uint8_t *images;
    size_t image_bytes, image_cap;
    bool pinned; /* images in page-locked memory (cudaHostAlloc) */
    /* CUDA output: `images` holds the colour parameters of `batch` images,
     * then the 8-bit HWC BGR images; the tensor is at dev_images once
     * `event` completes. */
    const void *dev_images;
    void *event;
    detfeed__cuda_route *route;
    int slot;
    uint8_t *masks; /* segment datasets: B x (h / 4) x (w / 4) overlap masks */
    /* The batch's masks as int32 when a sample's is (built when the
     * consumer takes it), and which of the two the batch has. */
    int32_t *wide_masks;
    size_t wide_cap;
    detfeed_mask_type mask_type;
    sample_rec *s;
    const detfeed_dataset *ds;
    /* the consumer's arrays, built by detfeed_loader_next */
    int total, cap, nkpt;
    float *cls, *box, *idx, *kpt;
};

struct detfeed__batches {
    detfeed__ring *ring;
    detfeed_batch *slots;
    detfeed__scratch *scratch; /* one per worker */
    int workers;
    uint64_t *order, *epoch_order;
    uint64_t total;
    uint32_t epoch;
    atomic_int failed_worker;   /* the first worker whose sample failed, or -1 */
    detfeed__cuda_route *route; /* CUDA output */
    detfeed__msg err;
};

static int grow(float **p, size_t n)
{
    float *g = realloc(*p, (n ? n : 1) * sizeof **p);
    if (g == NULL)
        return DETFEED_ENOMEM;
    *p = g;
    return DETFEED_OK;
}

/* The shape (h, w) of the images of the batch that starts at `seq`. */
static void batch_shape(const detfeed_loader *l, uint64_t seq, int *h, int *w)
{
    detfeed_loader_sample_size(l, l->batches->order[seq], w, h);
}

static int record_labels(sample_rec *r, const detfeed__sample *s,
                         const detfeed__stack *st, int nkpt)
{
    int n = s->inst->n;
    if (n > r->cap) {
        int cap = n + n / 2 + 8;
        if (grow(&r->cls, (size_t)cap) || grow(&r->box, (size_t)cap * 4) ||
            (nkpt && grow(&r->kpt, (size_t)cap * nkpt * 3)))
            return DETFEED_ENOMEM;
        r->cap = cap;
    }
    detfeed__format(s->inst, s->img->w, s->img->h, st, r->cls, r->box,
                    nkpt ? r->kpt : NULL);
    r->n = n;
    return DETFEED_OK;
}

/* Errors that mean "this image cannot be used", as opposed to a bug or a
 * lack of memory. */
static bool skippable(int rc)
{
    return rc == DETFEED_ECORRUPT || rc == DETFEED_EFORMAT || rc == DETFEED_EIO ||
           rc == DETFEED_ENOTSUPPORTED || rc == DETFEED_ELIMIT;
}

/* Counts a replaced sample and keeps the first one's message. */
static void note_skip(detfeed_loader *l, const detfeed__scratch *sc)
{
    atomic_fetch_add_explicit(&l->skipped, 1, memory_order_relaxed);
    int none = 0;
    if (atomic_compare_exchange_strong(&l->skip_state, &none, 1)) {
        detfeed__fail(&l->skip_msg, DETFEED_OK, "%s",
                      detfeed_codec_last_error(sc->codec));
        atomic_store_explicit(&l->skip_state, 2, memory_order_release);
    }
}

/* The sample at *index; under the skip policy an image that cannot be read
 * (its own or a mosaic or mixup partner's) makes the sample the next
 * dataset image that can, in dataset order, and is counted. */
static int augment_or_skip(detfeed_loader *l, detfeed__scratch *sc, uint64_t seq,
                           uint64_t *index, int w, int h, detfeed__sample *s)
{
    detfeed__batches *b = l->batches;
    uint64_t n = detfeed_dataset_size(l->ds);
    /* This rank's seq-th sample is position rank + seq * world_size of the
     * epoch's order padded by repeating it (detfeed_shard). */
    detfeed__place place;
    const detfeed__place *pl = detfeed__loader_place(
        l, b->epoch_order, ((uint64_t)l->rank + seq * (uint64_t)l->world_size) % n,
        &place);
    for (uint64_t tries = 0;; tries++) {
        int rc = detfeed__augment(&l->aug, sc, b->epoch, *index, pl,
                                  detfeed__loader_mosaic_on(l, b->epoch), w, h, s);
        if (rc == DETFEED_OK || l->policy != DETFEED_POLICY_SKIP || !skippable(rc) ||
            tries + 1 >= n)
            return rc;
        note_skip(l, sc);
        *index = (*index + 1) % n;
    }
}

/* Format's overlap mask of the sample at `pos`: 8-bit into the slot's
 * masks; int32 (more than 255 instances) into the sample's own buffer,
 * which the slot's 8-bit masks cannot hold (assemble_masks gathers it). */
static int pack_masks(const detfeed_loader *l, detfeed_batch *bt, detfeed__inst *inst,
                      int pos, int w, int h)
{
    sample_rec *r = &bt->s[pos];
    size_t size = (size_t)(w / 4) * (size_t)(h / 4);
    r->mask_type = detfeed__mask_type(inst->n);
    void *dst = bt->masks + (size_t)pos * size;
    if (r->mask_type == DETFEED_MASK_I32) {
        if (size > r->wide_cap) {
            int32_t *g = realloc(r->wide, size * sizeof *g);
            if (g == NULL)
                return DETFEED_ENOMEM;
            r->wide = g;
            r->wide_cap = size;
        }
        dst = r->wide;
    }
    return detfeed__format_masks(inst, w, h, l->aug.stack.ultralytics, dst);
}

/* CUDA output: bytes of a slot's colour parameters, which come first. */
static size_t param_bytes(const detfeed_loader *l)
{
    return (size_t)l->batch * DETFEED_CUDA_PARAM_STRIDE;
}

/* CUDA output: the sample's 8-bit image into the slot as it is, and its
 * colour parameters: on the device route the tables of its gains, flagged
 * when colour applies (the worker left it undone); else no colour. */
static int stage_for_device(const detfeed_loader *l, detfeed_batch *bt, int pos,
                            const detfeed__sample *s)
{
    size_t bytes = (size_t)s->img->w * s->img->h * 3;
    memcpy(bt->images + param_bytes(l) + (size_t)pos * bytes, s->img->px, bytes);
    uint8_t *p = bt->images + (size_t)pos * DETFEED_CUDA_PARAM_STRIDE;
    p[DETFEED_CUDA_PARAM_FLAG] = 0;
    if (l->eff_route != DETFEED_ROUTE_DEVICE || !s->recipe.hsv)
        return DETFEED_OK;
    /* Colour comes before the flips in Ultralytics; the worker has flipped
     * the image already, which moves the columns that OpenCV's row tail
     * covers when the image is mirrored left-right. */
    p[DETFEED_CUDA_PARAM_FLAG] = s->recipe.fliplr ? 3 : 1;
    return detfeed_hsv_lut(s->recipe.gains[0], s->recipe.gains[1], s->recipe.gains[2],
                           (uint8_t(*)[256])p);
}

/* Ring callback: sample `seq` of the epoch into position `pos` of `slot`. */
static int produce(void *ctx, int worker, uint64_t seq, int slot, int pos)
{
    detfeed_loader *l = ctx;
    detfeed__batches *b = l->batches;
    detfeed_batch *bt = &b->slots[slot];
    uint64_t index = b->order[seq];
    int h, w, nkpt;
    batch_shape(l, seq - (uint64_t)pos, &h, &w);
    detfeed_dataset_kpt_shape(l->ds, &nkpt, NULL);
    detfeed__scratch *sc = &b->scratch[worker];
    detfeed__sample s;
    int rc = augment_or_skip(l, sc, seq, &index, w, h, &s);
    size_t esize = detfeed_dtype_size(l->dtype), plane = (size_t)w * h * esize;
    if (rc == DETFEED_OK && (s.img->w != w || s.img->h != h))
        rc = DETFEED_EBADSTATE; /* a batch mixes shapes: cannot happen by design */
    uint64_t t0 = detfeed__now_ns();
    if (rc == DETFEED_OK && l->eff_output == DETFEED_OUTPUT_CUDA)
        rc = stage_for_device(l, bt, pos, &s);
    else if (rc == DETFEED_OK)
        rc = detfeed_convert_chw(s.img->px, (size_t)w * 3, w, h,
                                 bt->images + (size_t)pos * 3 * plane, plane, l->dtype,
                                 l->scale);
    detfeed__stage_add(sc, DETFEED_STAGE_CONVERT, &t0);
    sample_rec *r = &bt->s[pos];
    if (rc == DETFEED_OK && bt->masks) /* Format: masks, instances in their order */
        rc = pack_masks(l, bt, &sc->inst, pos, w, h);
    if (rc == DETFEED_OK)
        rc = record_labels(r, &s, &l->aug.stack, nkpt);
    detfeed__stage_add(sc, DETFEED_STAGE_PACK, &t0);
    if (rc == DETFEED_OK) {
        /* resized_shape: the augmented image in training (RandomPerspective
         * sets it); in validation the batch's rectangle from 8.4 on
         * (LetterBox sets it), the load size in 8.3 (load_image set it). */
        r->ds_index = index;
        r->ori_h = s.ori_h, r->ori_w = s.ori_w, r->res_h = h, r->res_w = w;
        if (!l->augment && l->ultralytics < 804)
            detfeed_load_size(s.ori_w, s.ori_h, l->imgsz, &r->res_w, &r->res_h);
        return DETFEED_OK;
    }
    int none = -1;
    if (atomic_compare_exchange_strong(&b->failed_worker, &none, worker))
        detfeed__fail(&b->err, rc, "sample %llu (%s): %s", (unsigned long long)index,
                      detfeed_dataset_image_path(l->ds, (size_t)index),
                      detfeed_codec_last_error(sc->codec)[0]
                          ? detfeed_codec_last_error(sc->codec)
                          : detfeed_strerror(rc));
    return rc;
}

static void free_slot(detfeed_batch *bt, int batch)
{
    for (int i = 0; bt->s && i < batch; i++) {
        free(bt->s[i].cls);
        free(bt->s[i].box);
        free(bt->s[i].kpt);
        free(bt->s[i].wide);
    }
    free(bt->s);
    if (bt->pinned)
        detfeed__cuda_host_free(bt->images);
    else
        free(bt->images);
    free(bt->masks);
    free(bt->wide_masks);
    free(bt->cls);
    free(bt->box);
    free(bt->idx);
    free(bt->kpt);
}

void detfeed__batches_free(detfeed_loader *l)
{
    detfeed__batches *b = l->batches;
    if (b == NULL)
        return;
    detfeed__ring_destroy(b->ring);        /* first: no worker may touch what follows */
    detfeed__cuda_route_destroy(b->route); /* then no copy may */
    for (int i = 0; b->slots && i < l->prefetch; i++)
        free_slot(&b->slots[i], l->batch);
    for (int i = 0; b->scratch && i < b->workers; i++)
        detfeed__scratch_free(&b->scratch[i]);
    free(b->slots);
    free(b->scratch);
    free(b->order);
    free(b->epoch_order);
    free(b);
    l->batches = NULL;
}

/* The largest image side a batch can hold. */
static int max_side(const detfeed_loader *l)
{
    return l->augment ? l->imgsz : l->imgsz + 32;
}

/* Bytes of a batch's image tensor at most. */
static size_t tensor_bytes(const detfeed_loader *l)
{
    size_t side = (size_t)max_side(l);
    return side * side * 3 * detfeed_dtype_size(l->dtype) * (size_t)l->batch;
}

/* CUDA output: bytes of what one copy takes to the device, the colour
 * parameters and the 8-bit HWC images. */
static size_t staged_bytes(const detfeed_loader *l)
{
    size_t side = (size_t)max_side(l);
    return param_bytes(l) + side * side * 3 * (size_t)l->batch;
}

/* Bytes of a slot in host memory: the tensor, or with CUDA output what is
 * staged for the device. */
static size_t slot_bytes(const detfeed_loader *l)
{
    return l->eff_output == DETFEED_OUTPUT_CUDA ? staged_bytes(l) : tensor_bytes(l);
}

/* Decides the output and colour route in effect (DESIGN §2.5) and, for
 * CUDA output, sets up the device side. */
static int open_route(detfeed_loader *l, detfeed__batches *b)
{
    l->eff_output = DETFEED_OUTPUT_HOST;
    l->eff_route = DETFEED_ROUTE_WORKER;
    l->route_why = NULL;
    if (l->output == DETFEED_OUTPUT_CUDA) {
        int rc = detfeed__cuda_route_create(&b->route, l->cuda_device, l->prefetch,
                                            staged_bytes(l), tensor_bytes(l),
                                            &l->aug.stack.cv, &l->route_why);
        if (rc == DETFEED_ENOMEM)
            return rc;
        if (rc == DETFEED_OK) /* otherwise the same bytes, in host memory */
            l->eff_output = DETFEED_OUTPUT_CUDA;
    }
    if (l->colour != DETFEED_ROUTE_DEVICE || l->route_why != NULL)
        return DETFEED_OK;
    if (l->eff_output != DETFEED_OUTPUT_CUDA)
        l->route_why = "the device colour route needs CUDA output";
    else if (l->dtype == DETFEED_DTYPE_U8)
        l->route_why = "the device colour route needs a float dtype (u8 output is "
                       "coloured in the workers)";
    else if (!l->augment)
        l->route_why = "validation samples take no colour";
    else
        l->eff_route = DETFEED_ROUTE_DEVICE;
    return DETFEED_OK;
}

/* Slots sized for the largest image a batch can hold. */
static int alloc_slots(detfeed_loader *l, detfeed__batches *b)
{
    int side = max_side(l);
    b->slots = calloc((size_t)l->prefetch, sizeof *b->slots);
    if (b->slots == NULL)
        return DETFEED_ENOMEM;
    for (int i = 0; i < l->prefetch; i++) {
        detfeed_batch *bt = &b->slots[i];
        bt->ds = l->ds;
        bt->route = b->route;
        bt->slot = i;
        bt->image_cap = slot_bytes(l);
        /* Page-locked when a CUDA device is there (asynchronous copies),
         * else pageable; the loader reports which (detfeed_loader_pinned). */
        void *p = NULL;
        bt->pinned = detfeed__cuda_host_alloc(&p, bt->image_cap, &l->pinned_why) == 0;
        bt->images = bt->pinned ? p : malloc(bt->image_cap);
        bt->s = calloc((size_t)l->batch, sizeof *bt->s);
        if (detfeed_dataset_task(l->ds) == DETFEED_TASK_SEGMENT)
            bt->masks =
                malloc((size_t)(side / 4) * (size_t)(side / 4) * (size_t)l->batch);
        if (bt->images == NULL || bt->s == NULL ||
            (detfeed_dataset_task(l->ds) == DETFEED_TASK_SEGMENT && bt->masks == NULL))
            return DETFEED_ENOMEM;
    }
    return DETFEED_OK;
}

static int batches_init(detfeed_loader *l)
{
    detfeed__batches *b = calloc(1, sizeof *b);
    if (b == NULL)
        return DETFEED_ENOMEM;
    l->batches = b;
    size_t n = detfeed_dataset_size(l->ds);
    b->workers = l->workers;
    b->scratch = calloc((size_t)b->workers, sizeof *b->scratch);
    b->order = malloc((n ? n : 1) * sizeof *b->order);
    b->epoch_order = malloc((n ? n : 1) * sizeof *b->epoch_order);
    int rc =
        b->scratch && b->order && b->epoch_order ? open_route(l, b) : DETFEED_ENOMEM;
    if (rc == DETFEED_OK)
        rc = alloc_slots(l, b);
    for (int i = 0; rc == DETFEED_OK && i < b->workers; i++) {
        rc = detfeed__scratch_init(&b->scratch[i]);
        b->scratch[i].defer_colour = l->eff_route == DETFEED_ROUTE_DEVICE;
    }
    if (rc == DETFEED_OK)
        rc = detfeed__ring_create(&b->ring, l->workers, l->prefetch, l->batch, produce,
                                  l);
    if (rc != DETFEED_OK)
        detfeed__batches_free(l);
    return rc;
}

size_t detfeed_loader_batch_count(const detfeed_loader *l)
{
    if (l == NULL || l->ds == NULL)
        return 0;
    size_t per =
        detfeed_shard_size(detfeed_dataset_size(l->ds), l->rank, l->world_size);
    return l->drop_last ? per / (size_t)l->batch
                        : (per + (size_t)l->batch - 1) / (size_t)l->batch;
}

int detfeed_loader_start(detfeed_loader *l, uint32_t epoch)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (l->ds == NULL || l->cache == NULL)
        return DETFEED_EBADSTATE;
    if (l->shut_down)
        return detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                             "the loader is shut down (detfeed_loader_shutdown): "
                             "no more epochs");
    if (!l->augment && l->world_size > 1)
        return detfeed__fail(&l->msg, DETFEED_ENOTSUPPORTED,
                             "validation batches (rect shapes) need world_size 1");
    if (l->batches == NULL && batches_init(l) != DETFEED_OK)
        return detfeed__fail(&l->msg, DETFEED_ENOMEM,
                             "out of memory for %d batch slots", l->prefetch);
    detfeed__batches *b = l->batches;
    detfeed__ring_stop(b->ring);
    /* Batches still held from an earlier epoch: their copies must be done
     * before the workers refill the slots. */
    if (b->route && detfeed__cuda_route_sync(b->route) != DETFEED_OK)
        return detfeed__fail(&l->msg, DETFEED_ECUDA, "CUDA: %s",
                             detfeed__cuda_route_error(b->route));
    size_t n = detfeed_dataset_size(l->ds);
    if (l->augment)
        detfeed_epoch_order(l->seed, epoch, n, b->epoch_order);
    else
        memcpy(b->epoch_order, l->rect_order, n * sizeof *b->epoch_order);
    size_t per = detfeed_shard_size(n, l->rank, l->world_size);
    free(b->order);
    b->order = malloc((per ? per : 1) * sizeof *b->order);
    if (b->order == NULL)
        return detfeed__fail(&l->msg, DETFEED_ENOMEM, "out of memory");
    detfeed_shard(b->epoch_order, n, l->rank, l->world_size, b->order);
    b->total = detfeed_loader_batch_count(l) * (size_t)l->batch;
    if (b->total > per)
        b->total = per;
    b->epoch = epoch;
    atomic_store(&b->failed_worker, -1);
    detfeed__msg_clear(&b->err);
    return detfeed__ring_start(b->ring, b->total);
}

/* The consumer's label arrays: each sample's in order, with batch_idx. */
static int assemble(detfeed_batch *bt)
{
    int total = 0;
    for (int i = 0; i < bt->n; i++)
        total += bt->s[i].n;
    if (total > bt->cap) {
        int cap = total + total / 2 + 16;
        if (grow(&bt->cls, (size_t)cap) || grow(&bt->box, (size_t)cap * 4) ||
            grow(&bt->idx, (size_t)cap) ||
            (bt->nkpt && grow(&bt->kpt, (size_t)cap * bt->nkpt * 3)))
            return DETFEED_ENOMEM;
        bt->cap = cap;
    }
    int k = 0;
    for (int i = 0; i < bt->n; i++) {
        const sample_rec *r = &bt->s[i];
        if (r->n == 0)
            continue; /* its arrays may not exist yet */
        memcpy(bt->cls + k, r->cls, (size_t)r->n * sizeof *bt->cls);
        memcpy(bt->box + 4 * (size_t)k, r->box, (size_t)r->n * 4 * sizeof *bt->box);
        if (bt->nkpt)
            memcpy(bt->kpt + (size_t)k * bt->nkpt * 3, r->kpt,
                   (size_t)r->n * bt->nkpt * 3 * sizeof *bt->kpt);
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
            memcpy(dst, bt->s[i].wide, size * sizeof *dst);
        else
            for (size_t p = 0; p < size; p++)
                dst[p] = narrow[p];
    }
    return DETFEED_OK;
}

int detfeed_loader_next(detfeed_loader *l, const detfeed_batch **out)
{
    return detfeed_loader_next_timed(l, out, -1);
}

int detfeed_loader_next_timed(detfeed_loader *l, const detfeed_batch **out,
                              int timeout_ms)
{
    if (l == NULL || out == NULL)
        return DETFEED_EINVAL;
    *out = NULL;
    if (l->shut_down)
        return detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                             "the loader is shut down (detfeed_loader_shutdown): "
                             "no more batches");
    if (l->batches == NULL)
        return DETFEED_EBADSTATE;
    detfeed__batches *b = l->batches;
    int slot, count;
    uint64_t index;
    uint64_t t0 = detfeed__now_ns();
    int rc = detfeed__ring_take_timed(b->ring, &slot, &count, &index, timeout_ms);
    atomic_fetch_add_explicit(&l->wait_ns, detfeed__now_ns() - t0,
                              memory_order_relaxed);
    if (rc == DETFEED__RING_TIMEOUT)
        return DETFEED_NEXT_TIMEOUT;
    if (rc == 1)
        return DETFEED_NEXT_END;
    if (rc != DETFEED_OK)
        return detfeed__fail(&l->msg, rc, "%s",
                             b->err.text[0] ? b->err.text : detfeed_strerror(rc));
    detfeed_batch *bt = &b->slots[slot];
    bt->n = count;
    bt->index = index;
    batch_shape(l, index * (uint64_t)l->batch, &bt->h, &bt->w);
    bt->image_bytes =
        (size_t)count * 3 * (size_t)bt->h * bt->w * detfeed_dtype_size(l->dtype);
    detfeed_dataset_kpt_shape(l->ds, &bt->nkpt, NULL);
    if (assemble(bt) != DETFEED_OK || assemble_masks(bt) != DETFEED_OK) {
        detfeed__ring_release(b->ring, slot);
        return detfeed__fail(&l->msg, DETFEED_ENOMEM,
                             "out of memory for labels or masks");
    }
    if (l->eff_output == DETFEED_OUTPUT_CUDA) {
        size_t bytes = param_bytes(l) + (size_t)count * bt->h * bt->w * 3;
        void *dev = NULL;
        rc = detfeed__cuda_route_submit(b->route, slot, bt->images, bytes, l->batch,
                                        count, bt->h, bt->w, l->dtype, l->scale,
                                        l->cuda_stream, &dev, &bt->event);
        if (rc != DETFEED_OK) {
            detfeed__ring_release(b->ring, slot);
            return detfeed__fail(&l->msg, rc, "batch %llu to the CUDA device: %s",
                                 (unsigned long long)index,
                                 detfeed__cuda_route_error(b->route));
        }
        bt->dev_images = dev;
    }
    *out = bt;
    return DETFEED_OK;
}

int detfeed_loader_shutdown(detfeed_loader *l)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    l->shut_down = true;
    if (l->batches != NULL)
        detfeed__ring_quit(l->batches->ring);
    return DETFEED_OK;
}

void detfeed_loader_release(detfeed_loader *l, const detfeed_batch *bt)
{
    if (l == NULL || bt == NULL || l->batches == NULL)
        return;
    int slot = (int)(bt - l->batches->slots);
    /* The copy must have read the slot before the workers refill it; an
     * error here is sticky and surfaces at the next submit. */
    if (l->eff_output == DETFEED_OUTPUT_CUDA)
        (void)detfeed__cuda_route_release(l->batches->route, slot, l->cuda_stream);
    detfeed__ring_release(l->batches->ring, slot);
}

int detfeed_loader_route(const detfeed_loader *l, detfeed_output *output,
                         detfeed_route *route, const char **why)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (l->batches == NULL)
        return DETFEED_EBADSTATE;
    if (output)
        *output = l->eff_output;
    if (route)
        *route = l->eff_route;
    if (why)
        *why = l->route_why;
    return DETFEED_OK;
}

uint64_t detfeed_loader_device_bytes(const detfeed_loader *l)
{
    if (l == NULL || l->batches == NULL || l->eff_output != DETFEED_OUTPUT_CUDA)
        return 0;
    return (uint64_t)staged_bytes(l) + (uint64_t)l->prefetch * tensor_bytes(l);
}

int detfeed_loader_set_cuda_stream(detfeed_loader *l, void *stream)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    l->cuda_stream = stream;
    return DETFEED_OK;
}

int detfeed_batch_size(const detfeed_batch *b, int *height, int *width)
{
    if (height)
        *height = b->h;
    if (width)
        *width = b->w;
    return b->n;
}

uint64_t detfeed_batch_index(const detfeed_batch *b)
{
    return b->index;
}

const void *detfeed_batch_images(const detfeed_batch *b, size_t *bytes)
{
    if (bytes)
        *bytes = b->image_bytes;
    return b->dev_images ? NULL : b->images;
}

const void *detfeed_batch_cuda_images(const detfeed_batch *b, size_t *bytes)
{
    if (bytes)
        *bytes = b->image_bytes;
    return b->dev_images;
}

void *detfeed_batch_cuda_event(const detfeed_batch *b)
{
    return b->dev_images ? b->event : NULL;
}

int detfeed_batch_copy_images(const detfeed_batch *b, void *dst, size_t bytes)
{
    if (b == NULL || dst == NULL || bytes < b->image_bytes)
        return DETFEED_EINVAL;
    if (b->dev_images == NULL) {
        memcpy(dst, b->images, b->image_bytes);
        return DETFEED_OK;
    }
    return detfeed__cuda_route_to_host(b->route, b->slot, dst, b->image_bytes);
}

int detfeed_batch_instances(const detfeed_batch *b)
{
    return b->total;
}

const float *detfeed_batch_cls(const detfeed_batch *b)
{
    return b->cls;
}

const float *detfeed_batch_bboxes(const detfeed_batch *b)
{
    return b->box;
}

const float *detfeed_batch_batch_idx(const detfeed_batch *b)
{
    return b->idx;
}

const float *detfeed_batch_keypoints(const detfeed_batch *b)
{
    return b->nkpt ? b->kpt : NULL;
}

const char *detfeed_batch_im_file(const detfeed_batch *b, int i)
{
    return i >= 0 && i < b->n ? detfeed_dataset_image_path(b->ds, b->s[i].ds_index)
                              : NULL;
}

void detfeed_batch_shapes(const detfeed_batch *b, int i, int ori_hw[2],
                          int resized_hw[2])
{
    if (i < 0 || i >= b->n)
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

const void *detfeed_batch_mask_data(const detfeed_batch *b, int *height, int *width,
                                    detfeed_mask_type *type)
{
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
    bool narrow = b->mask_type != DETFEED_MASK_I32;
    if (height)
        *height = narrow && b->masks ? b->h / 4 : 0;
    if (width)
        *width = narrow && b->masks ? b->w / 4 : 0;
    return narrow ? b->masks : NULL;
}

double detfeed_loader_stage_seconds(const detfeed_loader *l, detfeed_stage stage)
{
    if (l == NULL || (unsigned)stage >= DETFEED_STAGE_COUNT)
        return 0.0;
    if (stage == DETFEED_STAGE_WAIT)
        return (double)atomic_load_explicit(&l->wait_ns, memory_order_relaxed) * 1e-9;
    uint64_t ns = atomic_load_explicit(&l->scratch.ns[stage], memory_order_relaxed);
    for (int i = 0; l->batches && i < l->batches->workers; i++)
        ns += atomic_load_explicit(&l->batches->scratch[i].ns[stage],
                                   memory_order_relaxed);
    return (double)ns * 1e-9;
}

int64_t detfeed_loader_skipped(const detfeed_loader *l, const char **first)
{
    if (l == NULL)
        return -1;
    if (first)
        *first = atomic_load_explicit(&l->skip_state, memory_order_acquire) == 2
                     ? l->skip_msg.text
                     : NULL;
    return (int64_t)atomic_load_explicit(&l->skipped, memory_order_relaxed);
}

int detfeed_loader_pinned(const detfeed_loader *l, const char **why)
{
    if (l == NULL || l->batches == NULL) {
        if (why)
            *why = "no batches have been made yet";
        return 0;
    }
    int pinned = l->batches->slots[0].pinned;
    if (why)
        *why = pinned ? NULL : l->pinned_why;
    return pinned;
}
