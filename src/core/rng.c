/*
 * rng.c - the counter-based generator every random value of detfeed comes
 * from ("Randomness" in detfeed.h): Philox4x32-10 (Salmon et al., SC'11),
 * keyed by the seed and indexed by (slot, epoch, sample index), so that any
 * value can be recomputed from those alone, by any thread, in any order.
 */
#include "internal.h"

#include <stdlib.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u /* golden ratio */
#define PHILOX_W1 0xBB67AE85u /* sqrt(3) - 1 */

static void philox_round(uint32_t c[4], const uint32_t k[2])
{
    uint64_t p0 = (uint64_t)PHILOX_M0 * c[0], p1 = (uint64_t)PHILOX_M1 * c[2];
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    uint32_t r0 = hi1 ^ c[1] ^ k[0], r2 = hi0 ^ c[3] ^ k[1];
    c[0] = r0;
    c[1] = lo1;
    c[2] = r2;
    c[3] = lo0;
}

void detfeed_philox4x32(const uint32_t counter[4], const uint32_t key[2],
                        uint32_t out[4])
{
    uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int r = 0; r < 10; r++) {
        philox_round(c, k);
        k[0] += PHILOX_W0;
        k[1] += PHILOX_W1;
    }
    out[0] = c[0];
    out[1] = c[1];
    out[2] = c[2];
    out[3] = c[3];
}

double detfeed__uniform_words(uint32_t a, uint32_t b)
{
    /* CPython's random() and NumPy's double from two 32-bit words. */
    return ((double)(a >> 5) * 67108864.0 + (double)(b >> 6)) / 9007199254740992.0;
}

double detfeed_uniform(uint64_t seed, uint32_t slot, uint32_t epoch, uint64_t index)
{
    uint32_t c[4] = {slot, epoch, (uint32_t)index, (uint32_t)(index >> 32)};
    uint32_t k[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t out[4];
    detfeed_philox4x32(c, k, out);
    return detfeed__uniform_words(out[0], out[1]);
}

int detfeed_epoch_order(uint64_t seed, uint32_t epoch, size_t n, uint64_t *order)
{
    if (order == NULL && n > 0)
        return DETFEED_EINVAL;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    /* Fisher-Yates from the last position down; position i draws j in
     * [0, i] from its own counter in the permutation domain. */
    for (size_t i = n; i-- > 1;) {
        double u = detfeed_uniform(seed, DETFEED_SLOT_PERMUTATION, epoch, i);
        size_t j = (size_t)(u * (double)(i + 1));
        uint64_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    return DETFEED_OK;
}

size_t detfeed_shard_size(size_t n, int rank, int world_size)
{
    (void)rank;
    if (world_size < 1)
        return 0;
    size_t w = (size_t)world_size; /* ceil(n / w), without n + w - 1 wrapping */
    return n / w + (n % w != 0);
}

int detfeed_shard(const uint64_t *order, size_t n, int rank, int world_size,
                  uint64_t *out)
{
    if (world_size < 1 || rank < 0 || rank >= world_size || (n > 0 && (!order || !out)))
        return DETFEED_EINVAL;
    if (n == 0)
        return DETFEED_OK;
    size_t per = detfeed_shard_size(n, rank, world_size);
    /* DistributedSampler: pad to per * world_size by repeating from the
     * start, then take every world_size-th from rank. */
    for (size_t k = 0; k < per; k++) {
        size_t pos = (size_t)rank + k * (size_t)world_size;
        out[k] = order[pos % n];
    }
    return DETFEED_OK;
}
