/*
 * test_ring.c - the worker pool and batch ring: every batch arrives
 * complete and in order for any worker count, depth and batch size; a
 * failing sample reaches the consumer; a consumer that holds every slot is
 * told so; stopping and destroying mid-epoch return promptly; a timed take
 * gives up in time without taking anything, and quitting joins the workers
 * at once, keeps held batches intact and wakes a waiting consumer; worker
 * k's thread is named detfeed-wK. Run under TSan by the test script.
 */
#define _GNU_SOURCE /* pthread_getname_np */
#include "feed/ring.h"
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAXB = 8, MAXD = 5 };

typedef struct box {
    uint64_t seen[MAXD][MAXB]; /* seq + 1 written at (slot, pos) */
    uint64_t fail_at;          /* a sample that fails, or UINT64_MAX */
    atomic_int produced;
    int delay_ns;
} box;

static int produce(void *ctx, int worker, uint64_t seq, int slot, int pos)
{
    box *b = ctx;
    (void)worker;
    if (b->delay_ns) {
        struct timespec ts = {0, b->delay_ns};
        nanosleep(&ts, NULL);
    }
    atomic_fetch_add(&b->produced, 1);
    if (seq == b->fail_at)
        return DETFEED_ECORRUPT;
    b->seen[slot][pos] = seq + 1;
    return DETFEED_OK;
}

static void run_epochs(int workers, int depth, int batch, uint64_t total)
{
    box b = {.fail_at = UINT64_MAX};
    detfeed__ring *r;
    CHECK_INT(detfeed__ring_create(&r, workers, depth, batch, produce, &b), 0);
    for (int epoch = 0; epoch < 3; epoch++) {
        CHECK_INT(detfeed__ring_start(r, total), 0);
        uint64_t expect = 0;
        for (;;) {
            int slot, count;
            uint64_t bi;
            int rc = detfeed__ring_take(r, &slot, &count, &bi);
            if (rc == 1)
                break;
            if (!CHECK_INT(rc, 0))
                break;
            CHECK(bi * (uint64_t)batch == expect);
            for (int p = 0; p < count; p++)
                CHECK(b.seen[slot][p] == expect + (uint64_t)p + 1);
            memset(b.seen[slot], 0, sizeof b.seen[slot]);
            expect += (uint64_t)count;
            detfeed__ring_release(r, slot);
        }
        CHECK(expect == total);
    }
    detfeed__ring_destroy(r);
}

static void test_orders(void)
{
    for (int w = 1; w <= 4; w++)
        for (int d = 1; d <= 4; d++)
            for (int bs = 1; bs <= 7; bs += 3)
                for (uint64_t total = 0; total <= 23; total += 7)
                    run_epochs(w, d, bs, total);
    run_epochs(8, 3, 8, 1000);
}

/* Each sample checks its worker thread's name. */
static atomic_int misnamed, named;

static int produce_named(void *ctx, int worker, uint64_t seq, int slot, int pos)
{
    char want[16], got[16] = "";
    snprintf(want, sizeof want, "detfeed-w%d", worker);
    pthread_getname_np(pthread_self(), got, sizeof got);
    atomic_fetch_add(strcmp(got, want) == 0 ? &named : &misnamed, 1);
    return produce(ctx, worker, seq, slot, pos);
}

static void test_thread_names(void)
{
    box b = {.fail_at = UINT64_MAX};
    detfeed__ring *r;
    CHECK_INT(detfeed__ring_create(&r, 3, 2, 4, produce_named, &b), 0);
    CHECK_INT(detfeed__ring_start(r, 40), 0);
    int slot, count;
    uint64_t bi;
    while (detfeed__ring_take(r, &slot, &count, &bi) == 0)
        detfeed__ring_release(r, slot);
    detfeed__ring_destroy(r);
    CHECK_INT(atomic_load(&named), 40);
    CHECK_INT(atomic_load(&misnamed), 0);
}

static void test_hold_all_slots(void)
{
    box b = {.fail_at = UINT64_MAX};
    detfeed__ring *r;
    detfeed__ring_create(&r, 2, 2, 4, produce, &b);
    detfeed__ring_start(r, 40);
    int s0, s1, s2, n;
    uint64_t bi;
    CHECK_INT(detfeed__ring_take(r, &s0, &n, &bi), 0);
    CHECK_INT(detfeed__ring_take(r, &s1, &n, &bi), 0);
    CHECK_INT(detfeed__ring_take(r, &s2, &n, &bi), DETFEED_EBADSTATE);
    detfeed__ring_release(r, s0);
    CHECK_INT(detfeed__ring_take(r, &s2, &n, &bi), 0);
    CHECK(bi == 2 && s2 == s0);
    detfeed__ring_destroy(r); /* with two batches still held */
}

static void test_failure(void)
{
    box b = {.fail_at = 13};
    detfeed__ring *r;
    detfeed__ring_create(&r, 3, 2, 4, produce, &b);
    detfeed__ring_start(r, 40);
    int slot, n, rc;
    uint64_t bi, got = 0;
    while ((rc = detfeed__ring_take(r, &slot, &n, &bi)) == 0) {
        got++;
        detfeed__ring_release(r, slot);
    }
    CHECK_INT(rc, DETFEED_ECORRUPT);
    CHECK(got <= 3); /* batches 0..2 can complete; batch 3 holds sample 13 */
    /* A new epoch runs normally. */
    b.fail_at = UINT64_MAX;
    detfeed__ring_start(r, 8);
    got = 0;
    while ((rc = detfeed__ring_take(r, &slot, &n, &bi)) == 0) {
        got++;
        detfeed__ring_release(r, slot);
    }
    CHECK(rc == 1 && got == 2);
    detfeed__ring_destroy(r);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_stop(void)
{
    /* 10,000 samples of 1 ms each on 2 workers would take 5 s: stopping and
     * destroying after the first batch must not wait for them. */
    box b = {.fail_at = UINT64_MAX, .delay_ns = 1000000};
    detfeed__ring *r;
    detfeed__ring_create(&r, 2, 4, 8, produce, &b);
    detfeed__ring_start(r, 10000);
    int slot, n;
    uint64_t bi;
    CHECK_INT(detfeed__ring_take(r, &slot, &n, &bi), 0);
    double t0 = now();
    detfeed__ring_stop(r);
    CHECK_INT(detfeed__ring_take(r, &slot, &n, &bi), DETFEED_EBADSTATE);
    detfeed__ring_start(r, 10000);
    detfeed__ring_destroy(r);
    CHECK(now() - t0 < 1.0);
    CHECK(atomic_load(&b.produced) < 1000);
}

/* Timed takes: 4 samples of 20 ms per batch on one worker. */
static void test_timed_take(void)
{
    box b = {.fail_at = UINT64_MAX, .delay_ns = 20000000};
    detfeed__ring *r;
    detfeed__ring_create(&r, 1, 2, 4, produce, &b);
    detfeed__ring_start(r, 12);
    int slot, n;
    uint64_t bi;
    double t0 = now();
    CHECK_INT(detfeed__ring_take_timed(r, &slot, &n, &bi, 0), DETFEED__RING_TIMEOUT);
    CHECK_INT(detfeed__ring_take_timed(r, &slot, &n, &bi, 10), DETFEED__RING_TIMEOUT);
    double waited = now() - t0;
    CHECK(waited >= 0.009 && waited < 0.070); /* the batch takes 80 ms */
    /* Waiting in slices gives every batch, in order, as untimed takes do. */
    uint64_t expect = 0;
    int timeouts = 0, rc;
    for (;;) {
        while ((rc = detfeed__ring_take_timed(r, &slot, &n, &bi, 5)) ==
               DETFEED__RING_TIMEOUT)
            timeouts++;
        if (rc != 0)
            break;
        CHECK(bi * 4 == expect && n == 4);
        for (int p = 0; p < n; p++)
            CHECK(b.seen[slot][p] == expect + (uint64_t)p + 1);
        expect += (uint64_t)n;
        detfeed__ring_release(r, slot);
    }
    CHECK_INT(rc, 1);
    CHECK(expect == 12 && timeouts > 3);
    /* A failure: reported once the samples in production are done. */
    b.fail_at = 1;
    detfeed__ring_start(r, 12);
    while ((rc = detfeed__ring_take_timed(r, &slot, &n, &bi, 1)) ==
           DETFEED__RING_TIMEOUT)
        ;
    CHECK_INT(rc, DETFEED_ECORRUPT);
    CHECK_INT(detfeed__ring_take_timed(r, &slot, &n, &bi, 0), DETFEED_ECORRUPT);
    detfeed__ring_destroy(r);
}

/* Quitting: the workers are joined at once, a held batch keeps its
 * contents, nothing more is taken or started; releases still work. */
static void test_quit(void)
{
    box b = {.fail_at = UINT64_MAX, .delay_ns = 1000000};
    detfeed__ring *r;
    detfeed__ring_create(&r, 3, 3, 4, produce, &b);
    detfeed__ring_start(r, 10000);
    int slot, n;
    uint64_t bi, held[4];
    CHECK_INT(detfeed__ring_take(r, &slot, &n, &bi), 0);
    memcpy(held, b.seen[slot], sizeof held);
    double t0 = now();
    detfeed__ring_quit(r);
    CHECK(now() - t0 < 0.5);
    int produced = atomic_load(&b.produced);
    CHECK(produced < 100);
    CHECK(memcmp(held, b.seen[slot], sizeof held) == 0);
    int other;
    CHECK_INT(detfeed__ring_take(r, &other, &n, &bi), DETFEED_EBADSTATE);
    CHECK_INT(detfeed__ring_take_timed(r, &other, &n, &bi, 0), DETFEED_EBADSTATE);
    CHECK_INT(detfeed__ring_start(r, 8), DETFEED_EBADSTATE);
    detfeed__ring_release(r, slot);
    detfeed__ring_quit(r); /* idempotent */
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    CHECK_INT(atomic_load(&b.produced), produced); /* no worker is left */
    detfeed__ring_destroy(r);
}

typedef struct waiter {
    detfeed__ring *r;
    int rc;
} waiter;

static void *wait_for_batch(void *arg)
{
    waiter *w = arg;
    int slot, n;
    uint64_t bi;
    w->rc = detfeed__ring_take(w->r, &slot, &n, &bi);
    return NULL;
}

/* Quitting from another thread wakes a consumer waiting without a limit. */
static void test_quit_wakes_the_consumer(void)
{
    box b = {.fail_at = UINT64_MAX, .delay_ns = 50000000};
    waiter w = {.rc = 99};
    detfeed__ring_create(&w.r, 1, 2, 8, produce, &b); /* 400 ms a batch */
    detfeed__ring_start(w.r, 64);
    pthread_t t;
    pthread_create(&t, NULL, wait_for_batch, &w);
    struct timespec ts = {0, 30000000};
    nanosleep(&ts, NULL);
    double t0 = now();
    detfeed__ring_quit(w.r);
    pthread_join(t, NULL);
    CHECK(now() - t0 < 0.3); /* one sample of 50 ms, not the batch's 400 */
    CHECK_INT(w.rc, DETFEED_EBADSTATE);
    detfeed__ring_destroy(w.r);
}

int main(void)
{
    test_orders();
    test_thread_names();
    test_hold_all_slots();
    test_failure();
    test_stop();
    test_timed_take();
    test_quit();
    test_quit_wakes_the_consumer();
    return tu_finish("test_ring");
}
