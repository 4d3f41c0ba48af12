/*
 * progress.c - the counters of long work, written by the threads doing it
 * and read by another (relaxed: a reading is a report, never a decision).
 */
#include "progress.h"

#include <stddef.h>

void detfeed__progress_init(detfeed__progress *p)
{
    if (p == NULL)
        return;
    atomic_init(&p->stage, NULL);
    atomic_init(&p->done, 0);
    atomic_init(&p->total, 0);
}

void detfeed__progress_begin(detfeed__progress *p, const char *stage, uint64_t total)
{
    if (p == NULL)
        return;
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    atomic_store_explicit(&p->total, total, memory_order_relaxed);
    atomic_store_explicit(&p->stage, stage, memory_order_release);
}

void detfeed__progress_add(detfeed__progress *p, uint64_t units)
{
    if (p != NULL)
        atomic_fetch_add_explicit(&p->done, units, memory_order_relaxed);
}

void detfeed__progress_end(detfeed__progress *p)
{
    if (p != NULL)
        atomic_store_explicit(&p->stage, NULL, memory_order_release);
}

const char *detfeed__progress_read(const detfeed__progress *p, uint64_t *done,
                                   uint64_t *total)
{
    const char *stage =
        p ? atomic_load_explicit(&p->stage, memory_order_acquire) : NULL;
    uint64_t d = p ? atomic_load_explicit(&p->done, memory_order_relaxed) : 0;
    uint64_t t = p ? atomic_load_explicit(&p->total, memory_order_relaxed) : 0;
    if (done)
        *done = d < t ? d : t;
    if (total)
        *total = t;
    return stage;
}
