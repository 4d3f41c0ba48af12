/*
 * test_ring.c - the worker pool and batch ring: every batch arrives
 * complete and in order for any worker count, depth and batch size; a
 * failing sample reaches the consumer; a consumer that holds every slot is
 * told so; stopping and destroying mid-epoch return promptly. Run under
 * TSan by the test script.
 */
#include "feed/ring.h"
#include "testutil.h"

#include <stdatomic.h>
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

int main(void)
{
    test_orders();
    test_hold_all_slots();
    test_failure();
    test_stop();
    return tu_finish("test_ring");
}
