/*
 * progress.h - how far long work (an open's indexing, the cache's fill, the
 * decode check) has come, for another thread to read while it runs
 * (detfeed_dataset_progress, detfeed_loader_progress). Internal.
 */
#ifndef DETFEED_CORE_PROGRESS_H
#define DETFEED_CORE_PROGRESS_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct detfeed__progress {
    _Atomic(const char *) stage; /* static text; NULL: nothing running */
    atomic_uint_fast64_t done, total;
} detfeed__progress;

/* Nothing running (p may be NULL in all of these: nothing is reported). */
void detfeed__progress_init(detfeed__progress *p);
/* `stage` (static text) starts, with `total` units to do. */
void detfeed__progress_begin(detfeed__progress *p, const char *stage, uint64_t total);
/* `units` more are done (from any thread). */
void detfeed__progress_add(detfeed__progress *p, uint64_t units);
/* The stage is over. */
void detfeed__progress_end(detfeed__progress *p);
/* The stage running (NULL: none), its units done and total. */
const char *detfeed__progress_read(const detfeed__progress *p, uint64_t *done,
                                   uint64_t *total);

#endif
