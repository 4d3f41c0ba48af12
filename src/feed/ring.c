/*
 * ring.c - the worker pool and the batch ring of ring.h.
 *
 * Every shared field is guarded by one mutex. Three condition variables:
 * `work` (workers: a sample can be claimed, or the ring stops), `ready`
 * (the consumer: a batch completed, an error, or the ring stops) and
 * `space` (workers: a slot was released, or the ring stops); `idle` tells
 * a stopping thread that no sample is in production any more. The
 * condition variables run on CLOCK_MONOTONIC, for the consumer's timed
 * waits.
 */
#include "ring.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct slot {
    uint64_t batch; /* the batch the slot holds (or is filling) */
    int done;       /* samples of it completed */
} slot;

struct detfeed__ring {
    pthread_mutex_t mu;
    pthread_cond_t work, ready, space, idle;
    pthread_t *threads;
    int nthreads, depth, batch;
    detfeed__produce_fn produce;
    void *ctx;
    slot *slots;
    /* the epoch */
    uint64_t total, nbatches;
    uint64_t next_seq;  /* next sample to claim */
    uint64_t released;  /* batches given back by the consumer */
    uint64_t delivered; /* batches taken by the consumer */
    int error;          /* first failure of the epoch */
    int active;         /* samples in production */
    bool running, shutdown;
    bool joined; /* quit has joined the workers (or is joining them) */
};

static int batch_size(const detfeed__ring *r, uint64_t b)
{
    uint64_t first = b * (uint64_t)r->batch;
    uint64_t left = r->total - first;
    return left < (uint64_t)r->batch ? (int)left : r->batch;
}

/* Claims the next sample once its slot is free; false when the worker
 * should go back to waiting for work (or exit). Called with the lock held. */
static bool claim(detfeed__ring *r, uint64_t *seq)
{
    for (;;) {
        if (r->shutdown)
            return false;
        if (r->running && r->error == DETFEED_OK && r->next_seq < r->total) {
            uint64_t b = r->next_seq / (uint64_t)r->batch;
            if (b < r->released + (uint64_t)r->depth) {
                *seq = r->next_seq++;
                r->active++;
                return true;
            }
            pthread_cond_wait(&r->space, &r->mu);
        } else {
            pthread_cond_wait(&r->work, &r->mu);
        }
    }
}

static void *worker(void *arg)
{
    detfeed__ring *r = ((void **)arg)[0];
    int id = (int)(intptr_t)((void **)arg)[1];
    free(arg);
    char name[16];
    snprintf(name, sizeof name, "detfeed-w%d", id);
    detfeed__name_thread(name);
    pthread_mutex_lock(&r->mu);
    uint64_t seq;
    while (claim(r, &seq)) {
        uint64_t b = seq / (uint64_t)r->batch;
        int s = (int)(b % (uint64_t)r->depth), pos = (int)(seq % (uint64_t)r->batch);
        pthread_mutex_unlock(&r->mu);
        int rc = r->produce(r->ctx, id, seq, s, pos);
        pthread_mutex_lock(&r->mu);
        r->active--;
        if (rc != DETFEED_OK && r->error == DETFEED_OK)
            r->error = rc;
        if (rc == DETFEED_OK && ++r->slots[s].done == batch_size(r, b))
            pthread_cond_broadcast(&r->ready);
        if (rc != DETFEED_OK)
            pthread_cond_broadcast(&r->ready);
        if (r->active == 0)
            pthread_cond_broadcast(&r->idle);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static int init_sync(detfeed__ring *r)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return DETFEED_ENOMEM;
    int rc = DETFEED_OK;
    if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 ||
        pthread_mutex_init(&r->mu, NULL) != 0) {
        pthread_condattr_destroy(&attr);
        return DETFEED_ENOMEM;
    }
    pthread_cond_t *cv[] = {&r->work, &r->ready, &r->space, &r->idle};
    for (int i = 0; i < 4; i++) {
        if (pthread_cond_init(cv[i], &attr) != 0) {
            while (i-- > 0)
                pthread_cond_destroy(cv[i]);
            pthread_mutex_destroy(&r->mu);
            rc = DETFEED_ENOMEM;
            break;
        }
    }
    pthread_condattr_destroy(&attr);
    return rc;
}

/* The moment `ms` milliseconds from now on CLOCK_MONOTONIC. */
static struct timespec deadline_in(int ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* Waits on `cv` until signalled, or until `deadline` (NULL: no limit);
 * false when the deadline has passed. */
static bool wait_on(detfeed__ring *r, pthread_cond_t *cv,
                    const struct timespec *deadline)
{
    if (deadline == NULL) {
        pthread_cond_wait(cv, &r->mu);
        return true;
    }
    return pthread_cond_timedwait(cv, &r->mu, deadline) != ETIMEDOUT;
}

int detfeed__ring_create(detfeed__ring **out, int workers, int depth, int batch,
                         detfeed__produce_fn produce, void *ctx)
{
    *out = NULL;
    if (workers < 1 || depth < 1 || batch < 1 || produce == NULL)
        return DETFEED_EINVAL;
    detfeed__ring *r = calloc(1, sizeof *r);
    if (r == NULL)
        return DETFEED_ENOMEM;
    r->slots = calloc((size_t)depth, sizeof *r->slots);
    r->threads = calloc((size_t)workers, sizeof *r->threads);
    if (r->slots == NULL || r->threads == NULL || init_sync(r) != DETFEED_OK) {
        free(r->slots);
        free(r->threads);
        free(r);
        return DETFEED_ENOMEM;
    }
    r->depth = depth;
    r->batch = batch;
    r->produce = produce;
    r->ctx = ctx;
    for (int i = 0; i < workers; i++) {
        void **arg = malloc(2 * sizeof *arg);
        if (arg == NULL)
            break;
        arg[0] = r;
        arg[1] = (void *)(intptr_t)i;
        if (pthread_create(&r->threads[i], NULL, worker, arg) != 0) {
            free(arg);
            break;
        }
        r->nthreads++;
    }
    if (r->nthreads == 0) {
        detfeed__ring_destroy(r);
        return DETFEED_ENOMEM;
    }
    *out = r;
    return DETFEED_OK;
}

/* Stops the epoch with the lock held and waits for the workers' samples in
 * production to finish. */
static void stop_locked(detfeed__ring *r)
{
    r->running = false;
    pthread_cond_broadcast(&r->work);
    pthread_cond_broadcast(&r->space);
    pthread_cond_broadcast(&r->ready);
    while (r->active > 0)
        pthread_cond_wait(&r->idle, &r->mu);
}

void detfeed__ring_stop(detfeed__ring *r)
{
    pthread_mutex_lock(&r->mu);
    stop_locked(r);
    pthread_mutex_unlock(&r->mu);
}

void detfeed__ring_quit(detfeed__ring *r)
{
    pthread_mutex_lock(&r->mu);
    stop_locked(r);
    r->shutdown = true;
    pthread_cond_broadcast(&r->work);
    pthread_cond_broadcast(&r->space);
    pthread_cond_broadcast(&r->ready);
    bool join = !r->joined;
    r->joined = true;
    pthread_mutex_unlock(&r->mu);
    for (int i = 0; join && i < r->nthreads; i++)
        pthread_join(r->threads[i], NULL);
}

void detfeed__ring_destroy(detfeed__ring *r)
{
    if (r == NULL)
        return;
    detfeed__ring_quit(r);
    pthread_cond_destroy(&r->work);
    pthread_cond_destroy(&r->ready);
    pthread_cond_destroy(&r->space);
    pthread_cond_destroy(&r->idle);
    pthread_mutex_destroy(&r->mu);
    free(r->threads);
    free(r->slots);
    free(r);
}

int detfeed__ring_start(detfeed__ring *r, uint64_t total)
{
    pthread_mutex_lock(&r->mu);
    if (r->shutdown) {
        pthread_mutex_unlock(&r->mu);
        return DETFEED_EBADSTATE;
    }
    stop_locked(r);
    r->total = total;
    r->nbatches = (total + (uint64_t)r->batch - 1) / (uint64_t)r->batch;
    r->next_seq = r->released = r->delivered = 0;
    r->error = DETFEED_OK;
    for (int i = 0; i < r->depth; i++)
        r->slots[i] = (slot){.batch = (uint64_t)i, .done = 0};
    r->running = true;
    pthread_cond_broadcast(&r->work);
    pthread_mutex_unlock(&r->mu);
    return DETFEED_OK;
}

int detfeed__ring_take(detfeed__ring *r, int *slot_out, int *count, uint64_t *batch)
{
    return detfeed__ring_take_timed(r, slot_out, count, batch, -1);
}

/* Whether the consumer's next batch must still be waited for. */
static bool pending(const detfeed__ring *r, uint64_t b)
{
    const slot *s = &r->slots[b % (uint64_t)r->depth];
    return r->running && r->error == DETFEED_OK &&
           !(s->batch == b && s->done == batch_size(r, b));
}

int detfeed__ring_take_timed(detfeed__ring *r, int *slot_out, int *count,
                             uint64_t *batch, int timeout_ms)
{
    struct timespec at, *deadline = NULL;
    if (timeout_ms >= 0) {
        at = deadline_in(timeout_ms);
        deadline = &at;
    }
    pthread_mutex_lock(&r->mu);
    int rc = DETFEED_OK;
    uint64_t b = r->delivered;
    if (r->shutdown) {
        rc = DETFEED_EBADSTATE; /* quit */
    } else if (!r->running && r->error == DETFEED_OK && b < r->nbatches) {
        rc = DETFEED_EBADSTATE; /* stopped, or never started */
    } else if (b >= r->nbatches) {
        rc = 1;
    } else if (b >= r->released + (uint64_t)r->depth) {
        rc = DETFEED_EBADSTATE; /* every slot is held by the consumer */
    } else {
        while (pending(r, b))
            if (!wait_on(r, &r->ready, deadline) && pending(r, b)) {
                rc = DETFEED__RING_TIMEOUT;
                break;
            }
        if (rc == DETFEED__RING_TIMEOUT) {
            /* nothing taken */
        } else if (r->error != DETFEED_OK) {
            /* Nothing claims a sample after an error; wait for those in
             * production so that the caller may tear down what they use. */
            rc = r->error;
            while (r->active > 0)
                if (!wait_on(r, &r->idle, deadline) && r->active > 0) {
                    rc = DETFEED__RING_TIMEOUT;
                    break;
                }
        } else if (!r->running)
            rc = DETFEED_EBADSTATE;
        else {
            rc = DETFEED_OK;
            *slot_out = (int)(b % (uint64_t)r->depth);
            *count = batch_size(r, b);
            *batch = b;
            r->delivered++;
        }
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

void detfeed__ring_release(detfeed__ring *r, int slot_index)
{
    pthread_mutex_lock(&r->mu);
    /* Slots come back in the order they were taken. */
    if (r->released < r->delivered &&
        (uint64_t)slot_index == r->released % (uint64_t)r->depth) {
        slot *s = &r->slots[slot_index];
        s->done = 0;
        s->batch = r->released + (uint64_t)r->depth;
        r->released++;
        pthread_cond_broadcast(&r->space);
    }
    pthread_mutex_unlock(&r->mu);
}
