/*
 * ring.h - a persistent pool of worker threads filling a bounded ring of
 * batch slots (internal).
 *
 * An epoch is a sequence of `total` samples cut into batches of `batch`
 * (the last one may be short). Workers claim samples one at a time, in
 * order, from a shared counter and produce each into its place in the slot
 * of its batch; a slot is reused for batch b + depth only after the
 * consumer has released batch b. The consumer takes batches strictly in
 * order and blocks until the next one is complete. Nothing sleeps or polls:
 * one mutex and condition variables carry every wait.
 *
 * Errors: a failing sample (the produce callback returning non-zero)
 * stops the epoch; the consumer receives that status from its next take,
 * which returns only once no sample is in production any more.
 * Stopping (a new epoch, quit or destroy) returns promptly: workers finish
 * the sample in hand and claim no more.
 */
#ifndef DETFEED_RING_H
#define DETFEED_RING_H

#include "core/internal.h"

typedef struct detfeed__ring detfeed__ring;

/* Makes sample `seq` (0-based within the epoch) into position `pos` of
 * slot `slot`. Called on worker thread `worker`, concurrently for different
 * samples; returns DETFEED_OK or a negative status. */
typedef int (*detfeed__produce_fn)(void *ctx, int worker, uint64_t seq, int slot,
                                   int pos);

int detfeed__ring_create(detfeed__ring **out, int workers, int depth, int batch,
                         detfeed__produce_fn produce, void *ctx);

/* Stops any epoch in progress, joins the workers, frees the ring. */
void detfeed__ring_destroy(detfeed__ring *ring);

/* Stops any epoch in progress and joins the workers, for good, keeping the
 * ring's memory: takes then fail with DETFEED_EBADSTATE, starts too;
 * releases still work. Idempotent; destroy is still needed. */
void detfeed__ring_quit(detfeed__ring *ring);

/* Starts an epoch of `total` samples (any running epoch is stopped first).
 * DETFEED_EBADSTATE after quit. */
int detfeed__ring_start(detfeed__ring *ring, uint64_t total);

/* Waits for the next batch in order. On success *slot is its slot, *count
 * its number of samples, and *batch its index; returns 1 when the epoch has
 * no more batches (nothing to release), or a negative status when a sample
 * failed (the epoch is over). */
int detfeed__ring_take(detfeed__ring *ring, int *slot, int *count, uint64_t *batch);

/* The same, waiting at most timeout_ms milliseconds (< 0: no limit): returns
 * DETFEED__RING_TIMEOUT when the batch is not ready by then (nothing taken;
 * a failure not yet reported stays for the next take). */
enum { DETFEED__RING_TIMEOUT = 2 };
int detfeed__ring_take_timed(detfeed__ring *ring, int *slot, int *count,
                             uint64_t *batch, int timeout_ms);

/* Gives a taken slot back to the workers. */
void detfeed__ring_release(detfeed__ring *ring, int slot);

/* Stops the epoch: workers claim nothing more; waits until they are idle. */
void detfeed__ring_stop(detfeed__ring *ring);

#endif /* DETFEED_RING_H */
