/*
 * epoch.c - epochs of batches: the epoch's sample order and this rank's
 * shard, each sample made on a ring worker straight into its batch slot
 * (under the skip policy an unreadable image is replaced), and the batches
 * taken and released by the consumer. What the plan says about a sample
 * (its size, mosaic, its partners' window) is here too, shared with the
 * loader's single-sample path.
 */
#include "epoch.h"

#include "ring.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- the plan ---- */

/* close_mosaic: mosaic is off from the first epoch of the last
 * close_mosaic ones (all of them when epochs <= close_mosaic). */
bool detfeed__plan_mosaic_on(const detfeed__plan *p, uint32_t epoch)
{
    return p->close_mosaic == 0 ||
           (int64_t)epoch < (int64_t)p->epochs - p->close_mosaic;
}

void detfeed__plan_size(const detfeed__plan *p, uint64_t index, int *width, int *height)
{
    *width = p->rect ? p->rect[index][1] : p->imgsz;
    *height = p->rect ? p->rect[index][0] : p->imgsz;
}

int detfeed__plan_side(const detfeed__plan *p)
{
    return p->augment ? p->imgsz : p->imgsz + 32;
}

size_t detfeed__plan_batch_count(const detfeed__plan *p)
{
    size_t per =
        detfeed_shard_size(detfeed_dataset_size(p->ds), p->rank, p->world_size);
    return p->drop_last ? per / (size_t)p->batch
                        : (per + (size_t)p->batch - 1) / (size_t)p->batch;
}

const detfeed__place *detfeed__plan_place(const detfeed__plan *p, const uint64_t *order,
                                          uint64_t pos, detfeed__place *place)
{
    if (p->partner_window == 0 || !p->augment)
        return NULL;
    *place = (detfeed__place){.order = order,
                              .pos = pos,
                              .stride = (uint32_t)p->world_size,
                              .window = (uint32_t)p->partner_window};
    return place;
}

int detfeed__plan_place_of(const detfeed__plan *p, uint32_t epoch, uint64_t index,
                           detfeed__place *place, uint64_t **order,
                           const detfeed__place **out)
{
    uint64_t n = detfeed_dataset_size(p->ds), pos = 0;
    *order = NULL;
    *out = NULL;
    if (detfeed__plan_place(p, NULL, 0, place) == NULL)
        return DETFEED_OK;
    if ((*order = malloc(n * sizeof **order)) == NULL)
        return DETFEED_ENOMEM;
    detfeed_epoch_order(p->seed, epoch, n, *order);
    while (pos < n && (*order)[pos] != index)
        pos++;
    *out = detfeed__plan_place(p, *order, pos, place);
    return DETFEED_OK;
}

/* ---- epochs ---- */

struct detfeed__epochs {
    const detfeed__plan *plan;
    const detfeed__augmenter *aug;
    detfeed__route *route;
    detfeed__slot_spec spec;
    detfeed__ring *ring;
    detfeed_batch *slots;
    detfeed__scratch *scratch; /* one per worker */
    detfeed__clock *clocks;    /* one per worker: its stage times */
    const char *pinned_why;    /* why the slots are not page-locked */
    uint64_t n;                /* images in the dataset */
    /* the epoch in progress: its order, this rank's shard of it, samples */
    uint64_t *order, *epoch_order;
    uint64_t total;
    uint32_t epoch;
    bool mosaic_on;
    /* The first worker whose sample failed, or -1, or CONSUMER_FAILED (a
     * batch failed on the consumer's thread): the first failure's owner
     * writes err. */
    atomic_int failed_worker;
    detfeed__msg err;
    int consumer_rc; /* the status of a failed batch whose message err holds (or 0) */
    _Atomic uint64_t wait_ns; /* the consumer in detfeed__epochs_next */
    /* The slots of the batches handed to the consumer since the epoch's
     * start and not yet given back to the workers, oldest first (taken_n
     * of them from taken_first), and which of them the consumer released
     * (given: `released` of them): a slot goes back once it and every
     * batch taken before it are released and its copy to the device has
     * read it, so batches may be released in any order (consumer's thread
     * only). */
    int *taken, taken_first, taken_n, released;
    bool *given;
    /* samples replaced under the skip policy, and the first one's message
     * (skip_state: 0 none, 1 being written, 2 written) */
    _Atomic uint64_t skipped;
    _Atomic int skip_state;
    detfeed__msg skip_msg;
};

/* Errors that mean "this image cannot be used", as opposed to a bug or a
 * lack of memory. */
static bool skippable(int rc)
{
    return rc == DETFEED_ECORRUPT || rc == DETFEED_EFORMAT || rc == DETFEED_EIO ||
           rc == DETFEED_ENOTSUPPORTED || rc == DETFEED_ELIMIT;
}

/* Counts a replaced sample and keeps the first one's message. */
static void note_skip(detfeed__epochs *e, const detfeed__scratch *sc)
{
    atomic_fetch_add_explicit(&e->skipped, 1, memory_order_relaxed);
    int none = 0;
    if (atomic_compare_exchange_strong(&e->skip_state, &none, 1)) {
        detfeed__fail(&e->skip_msg, DETFEED_OK, "%s",
                      detfeed_codec_last_error(sc->codec));
        atomic_store_explicit(&e->skip_state, 2, memory_order_release);
    }
}

/* The sample ask names, made into `dest` by worker `worker`; under the
 * skip policy an image that cannot be read (its own or a mosaic or mixup
 * partner's) makes the sample the next dataset image that can, in dataset
 * order (ask->index becomes it), and is counted. */
static int augment_or_skip(detfeed__epochs *e, int worker, uint64_t seq,
                           detfeed__sample_ask *ask, const detfeed__dest *dest,
                           detfeed__sample *s)
{
    const detfeed__plan *p = e->plan;
    detfeed__scratch *sc = &e->scratch[worker];
    uint64_t n = e->n;
    /* This rank's seq-th sample is position rank + seq * world_size of the
     * epoch's order padded by repeating it (detfeed_shard). */
    detfeed__place place;
    ask->place = detfeed__plan_place(
        p, e->epoch_order, ((uint64_t)p->rank + seq * (uint64_t)p->world_size) % n,
        &place);
    for (uint64_t tries = 0;; tries++) {
        int rc = detfeed__augment(e->aug, sc, ask, dest, &e->clocks[worker], s);
        if (rc == DETFEED_OK || p->policy != DETFEED_POLICY_SKIP || !skippable(rc) ||
            tries + 1 >= n)
            return rc;
        note_skip(e, sc);
        ask->index = (ask->index + 1) % n;
    }
}

/* Ring callback: sample `seq` of the epoch made into position `pos` of
 * `slot`. */
static int produce(void *ctx, int worker, uint64_t seq, int slot, int pos)
{
    detfeed__epochs *e = ctx;
    detfeed_batch *bt = detfeed__slot_at(e->slots, slot);
    detfeed__sample_ask ask = {
        .epoch = e->epoch, .index = e->order[seq], .mosaic_on = e->mosaic_on};
    detfeed__plan_size(e->plan, e->order[seq - (uint64_t)pos], &ask.out_w, &ask.out_h);
    detfeed__dest dest;
    detfeed__batch_places(bt, pos, ask.out_w, ask.out_h, &dest);
    detfeed__sample s;
    int rc = augment_or_skip(e, worker, seq, &ask, &dest, &s);
    if (rc == DETFEED_OK)
        rc = detfeed__batch_put(bt, pos, &s, ask.index);
    if (rc == DETFEED_OK)
        return DETFEED_OK;
    const detfeed__scratch *sc = &e->scratch[worker];
    uint64_t index = ask.index;
    int none = -1;
    if (atomic_compare_exchange_strong(&e->failed_worker, &none, worker))
        detfeed__fail(&e->err, rc, "sample %llu (%s): %s", (unsigned long long)index,
                      detfeed_dataset_image_path(e->plan->ds, (size_t)index),
                      detfeed_codec_last_error(sc->codec)[0]
                          ? detfeed_codec_last_error(sc->codec)
                          : detfeed_strerror(rc));
    return rc;
}

/* What the slots hold: the largest batch of this plan through `route`. */
static detfeed__slot_spec slot_spec(const detfeed__plan *p, detfeed__route *route)
{
    int nkpt;
    detfeed_dataset_kpt_shape(p->ds, &nkpt, NULL);
    return (detfeed__slot_spec){.ds = p->ds,
                                .route = route,
                                .batch = p->batch,
                                .side = detfeed__plan_side(p),
                                .nkpt = nkpt,
                                .dtype = p->dtype,
                                .masks = detfeed_dataset_task(p->ds) ==
                                         DETFEED_TASK_SEGMENT};
}

static int init_workers(detfeed__epochs *e)
{
    const detfeed__plan *p = e->plan;
    e->scratch = calloc((size_t)p->workers, sizeof *e->scratch);
    e->clocks = malloc((size_t)p->workers * sizeof *e->clocks);
    if (e->scratch == NULL || e->clocks == NULL)
        return DETFEED_ENOMEM;
    for (int i = 0; i < p->workers; i++) {
        detfeed__clock_init(&e->clocks[i]);
        int rc = detfeed__scratch_init(&e->scratch[i]);
        if (rc != DETFEED_OK)
            return rc;
    }
    return detfeed__ring_create(&e->ring, p->workers, p->prefetch, p->batch, produce,
                                e);
}

int detfeed__epochs_create(detfeed__epochs **out, const detfeed__plan *plan,
                           const detfeed__augmenter *aug, detfeed__route *route)
{
    *out = NULL;
    detfeed__epochs *e = calloc(1, sizeof *e);
    if (e == NULL)
        return DETFEED_ENOMEM;
    e->plan = plan;
    e->aug = aug;
    e->route = route;
    e->n = detfeed_dataset_size(plan->ds);
    e->spec = slot_spec(plan, route);
    e->epoch_order = malloc((e->n ? e->n : 1) * sizeof *e->epoch_order);
    e->taken = malloc((size_t)plan->prefetch * sizeof *e->taken);
    e->given = calloc((size_t)plan->prefetch, sizeof *e->given);
    int rc =
        e->epoch_order && e->taken && e->given
            ? detfeed__slots_create(&e->slots, plan->prefetch, &e->spec, &e->pinned_why)
            : DETFEED_ENOMEM;
    if (rc == DETFEED_OK)
        rc = init_workers(e);
    if (rc != DETFEED_OK) {
        detfeed__epochs_destroy(e);
        return rc;
    }
    *out = e;
    return DETFEED_OK;
}

void detfeed__epochs_destroy(detfeed__epochs *e)
{
    if (e == NULL)
        return;
    detfeed__ring_destroy(e->ring);      /* first: no worker may touch what follows */
    (void)detfeed__route_sync(e->route); /* then no copy may */
    detfeed__slots_destroy(e->slots, e->plan->prefetch);
    for (int i = 0; e->scratch && i < e->plan->workers; i++)
        detfeed__scratch_free(&e->scratch[i]);
    free(e->scratch);
    free(e->clocks);
    free(e->order);
    free(e->epoch_order);
    free(e->taken);
    free(e->given);
    free(e);
}

/* Gives the released slots at the front of the taken ones whose copies
 * are done back to the workers, oldest first; with `wait`, waiting for
 * their copies. */
static void give_back(detfeed__epochs *e, bool wait)
{
    int depth = e->plan->prefetch;
    while (e->taken_n > 0 && e->given[e->taken[e->taken_first]]) {
        int slot = e->taken[e->taken_first];
        if (!detfeed__route_copy_done(e->route, slot, wait))
            return;
        detfeed__ring_release(e->ring, slot);
        e->given[slot] = false;
        e->released--;
        e->taken_first = (e->taken_first + 1) % depth;
        e->taken_n--;
    }
}

/* Forgets every batch handed out (a new epoch frees every slot). */
static void forget_taken(detfeed__epochs *e)
{
    e->taken_first = e->taken_n = e->released = 0;
    memset(e->given, 0, (size_t)e->plan->prefetch * sizeof *e->given);
}

int detfeed__epochs_start(detfeed__epochs *e, uint32_t epoch, detfeed__msg *msg)
{
    const detfeed__plan *p = e->plan;
    detfeed__ring_stop(e->ring);
    /* Batches still held from an earlier epoch: their copies must be done
     * before the workers refill the slots (the new epoch frees every slot). */
    if (detfeed__route_sync(e->route) != DETFEED_OK)
        return detfeed__fail(msg, DETFEED_ECUDA, "CUDA: %s",
                             detfeed__route_error(e->route));
    forget_taken(e);
    if (!p->fixed_order)
        detfeed_epoch_order(p->seed, epoch, e->n, e->epoch_order);
    else
        memcpy(e->epoch_order, p->rect_order, e->n * sizeof *e->epoch_order);
    size_t per = detfeed_shard_size(e->n, p->rank, p->world_size);
    free(e->order);
    e->order = malloc((per ? per : 1) * sizeof *e->order);
    if (e->order == NULL)
        return detfeed__fail(msg, DETFEED_ENOMEM, "out of memory");
    detfeed_shard(e->epoch_order, e->n, p->rank, p->world_size, e->order);
    e->total = detfeed__plan_batch_count(p) * (size_t)p->batch;
    if (e->total > per)
        e->total = per;
    e->epoch = epoch;
    e->mosaic_on = detfeed__plan_mosaic_on(p, epoch);
    atomic_store(&e->failed_worker, -1);
    detfeed__msg_clear(&e->err);
    e->consumer_rc = DETFEED_OK;
    return detfeed__ring_start(e->ring, e->total);
}

enum { CONSUMER_FAILED = -2 };

/* A batch failed on the consumer's side (its labels, its copy to the
 * device): the epoch is over, as after a failed sample; its later batches
 * fail the same way until the next start. */
static int consumer_failed(detfeed__epochs *e, int rc, const detfeed__msg *msg)
{
    int none = -1; /* else a worker's failure came first: the ring reports it */
    if (atomic_compare_exchange_strong(&e->failed_worker, &none, CONSUMER_FAILED))
        e->consumer_rc = detfeed__fail(&e->err, rc, "%s", msg->text);
    return rc;
}

int detfeed__epochs_next(detfeed__epochs *e, int timeout_ms, void *stream,
                         const detfeed_batch **out, detfeed__msg *msg)
{
    if (e->consumer_rc != DETFEED_OK)
        return detfeed__fail(msg, e->consumer_rc, "%s (the epoch is over)",
                             e->err.text);
    int slot, count;
    uint64_t index;
    uint64_t t0 = detfeed__now_ns();
    give_back(e, false);
    int rc;
    if (e->released > 0) { /* the workers may be short of slots: look first */
        rc = detfeed__ring_take_timed(e->ring, &slot, &count, &index, 0);
        /* No batch ready (or every slot still held for its copy): the
         * copies hold them up; a poll (timeout 0) waits for them too when
         * no slot is left to the workers. */
        if ((rc == DETFEED__RING_TIMEOUT && timeout_ms != 0) ||
            (rc == DETFEED_EBADSTATE && e->released > 0)) {
            give_back(e, true);
            rc = detfeed__ring_take_timed(e->ring, &slot, &count, &index, timeout_ms);
        }
    } else {
        rc = detfeed__ring_take_timed(e->ring, &slot, &count, &index, timeout_ms);
    }
    atomic_fetch_add_explicit(&e->wait_ns, detfeed__now_ns() - t0,
                              memory_order_relaxed);
    if (rc == DETFEED__RING_TIMEOUT)
        return DETFEED_NEXT_TIMEOUT;
    if (rc == 1)
        return DETFEED_NEXT_END;
    if (rc == DETFEED_EBADSTATE && e->taken_n == e->plan->prefetch)
        return detfeed__fail(msg, rc,
                             "all %d batch slots (prefetch) are taken: release the "
                             "oldest batch held before taking the next",
                             e->plan->prefetch);
    if (rc != DETFEED_OK)
        return detfeed__fail(msg, rc, "%s",
                             e->err.text[0] ? e->err.text : detfeed_strerror(rc));
    detfeed_batch *bt = detfeed__slot_at(e->slots, slot);
    int h, w;
    detfeed__plan_size(e->plan, e->order[index * (uint64_t)e->plan->batch], &w, &h);
    rc = detfeed__batch_finish(bt, count, index, h, w, stream, msg);
    if (rc != DETFEED_OK) {
        detfeed__ring_release(e->ring, slot);
        return consumer_failed(e, rc, msg);
    }
    e->taken[(e->taken_first + e->taken_n) % e->plan->prefetch] = slot;
    e->taken_n++;
    *out = bt;
    return DETFEED_OK;
}

/* Whether `slot` is one of the taken batches the consumer has not released. */
static bool held(const detfeed__epochs *e, int slot)
{
    for (int k = 0; k < e->taken_n; k++)
        if (e->taken[(e->taken_first + k) % e->plan->prefetch] == slot)
            return !e->given[slot];
    return false;
}

int detfeed__epochs_release(detfeed__epochs *e, const detfeed_batch *bt, void *stream,
                            detfeed__msg *msg)
{
    int slot = -1; /* found by address: nothing read from a stranger */
    for (int k = 0; k < e->plan->prefetch && slot < 0; k++)
        if (detfeed__slot_at(e->slots, k) == bt)
            slot = k;
    if (slot < 0)
        return detfeed__fail(msg, DETFEED_EINVAL,
                             "release: not a batch of this loader");
    if (!held(e, slot))
        return detfeed__fail(msg, DETFEED_EINVAL,
                             "release: batch %llu is not held (released already, or "
                             "taken before the last detfeed_loader_start)",
                             (unsigned long long)detfeed_batch_index(bt));
    /* Never waits: the slot goes back to the workers once its copy to the
     * device has read it (at once on host output) and every batch taken
     * before it is released, here or at a later next. */
    int rc = detfeed__batch_release(detfeed__slot_at(e->slots, slot), stream);
    e->given[slot] = true;
    e->released++;
    give_back(e, false);
    if (rc != DETFEED_OK)
        return detfeed__fail(
            msg, rc,
            "release: batch %llu: CUDA refused to order its reuse after "
            "the stream given (%s); it waited for that stream instead",
            (unsigned long long)detfeed_batch_index(bt),
            detfeed__route_error(e->route));
    return DETFEED_OK;
}

void detfeed__epochs_quit(detfeed__epochs *e)
{
    detfeed__ring_quit(e->ring);
}

uint64_t detfeed__epochs_stage_ns(const detfeed__epochs *e, detfeed_stage stage)
{
    if (e == NULL)
        return 0;
    if (stage == DETFEED_STAGE_WAIT)
        return atomic_load_explicit(&e->wait_ns, memory_order_relaxed);
    uint64_t ns = 0;
    for (int i = 0; i < e->plan->workers; i++)
        ns += detfeed__clock_ns(&e->clocks[i], (int)stage);
    return ns;
}

int64_t detfeed__epochs_skipped(const detfeed__epochs *e, const char **first)
{
    bool written = e && atomic_load_explicit(&e->skip_state, memory_order_acquire) == 2;
    if (first)
        *first = written ? e->skip_msg.text : NULL;
    return e ? (int64_t)atomic_load_explicit(&e->skipped, memory_order_relaxed) : 0;
}

int detfeed__epochs_pinned(const detfeed__epochs *e, const char **why)
{
    int pinned = 1; /* each slot is allocated on its own */
    for (int i = 0; i < e->plan->prefetch; i++)
        pinned &= detfeed__batch_pinned(detfeed__slot_at(e->slots, i));
    if (why)
        *why = pinned ? NULL : e->pinned_why;
    return pinned;
}
