/*
 * clock.h - a stage clock (internal): the time one thread spends in each
 * stage of its work (detfeed_stage), summed over its samples, readable by
 * other threads while it runs. Code that begins a stage enters it; the
 * stage that was running gets the time since it was entered. A NULL clock
 * times nothing, so every function that takes one may be given NULL.
 */
#ifndef DETFEED_CLOCK_H
#define DETFEED_CLOCK_H

#include "internal.h"

#include <stdatomic.h>

typedef struct detfeed__clock {
    /* Nanoseconds per stage: written by the owning thread only, read by
     * any (hence atomic, relaxed). */
    _Atomic uint64_t ns[DETFEED_STAGE_COUNT];
    /* The owning thread's: the stage running (-1: none) and since when. */
    int stage;
    uint64_t since;
} detfeed__clock;

/* No time in any stage and none running. */
static inline void detfeed__clock_init(detfeed__clock *c)
{
    for (int s = 0; s < DETFEED_STAGE_COUNT; s++)
        atomic_init(&c->ns[s], 0);
    c->stage = -1;
    c->since = 0;
}

/* Ends the running stage (adding its time since it was entered) and
 * begins `stage` (-1: none). Returns the stage that was running, so that
 * a nested stage can hand the time back: `int was = enter(c, DECODE); ...;
 * enter(c, was);`. NULL: nothing, and -1. */
static inline int detfeed__clock_enter(detfeed__clock *c, int stage)
{
    if (c == NULL)
        return -1;
    uint64_t now = detfeed__now_ns();
    int was = c->stage;
    if (was >= 0)
        atomic_fetch_add_explicit(&c->ns[was], now - c->since, memory_order_relaxed);
    c->stage = stage;
    c->since = now;
    return was;
}

/* Nanoseconds spent in `stage` so far (stages that ended); any thread. */
static inline uint64_t detfeed__clock_ns(const detfeed__clock *c, int stage)
{
    return atomic_load_explicit(&c->ns[stage], memory_order_relaxed);
}

#endif /* DETFEED_CLOCK_H */
