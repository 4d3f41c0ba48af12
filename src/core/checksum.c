/*
 * checksum.c - the checksum of cached pixels (core/internal.h): XXH3-64
 * with seed 0, from xxHash's own header (Debian's libxxhash-dev) compiled
 * inline. This file is the portable variant (SSE2 on x86-64, what the
 * header picks for the build's baseline); checksum_avx2.c is the AVX2 one.
 * XXH3's definition makes every variant give the same value.
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "internal.h"

uint64_t detfeed__checksum_avx2(const void *data, size_t bytes);

uint64_t detfeed__checksum(const void *data, size_t bytes, detfeed_isa isa)
{
#ifdef DETFEED_BENCH_NO_CHECKSUM
    /* The baseline of bench/disk_checksum.sh only: a build whose caches
     * carry no checksum (every value 0), to time what checking costs. */
    (void)data, (void)bytes, (void)isa;
    return 0;
#endif
    unsigned variants =
        DETFEED__ISA_BIT(DETFEED_ISA_PORTABLE) | DETFEED__ISA_BUILT_AVX2;
    switch (detfeed__isa_pick(isa, variants)) {
#ifdef DETFEED_HAVE_AVX2
    case DETFEED_ISA_AVX2:
        return detfeed__checksum_avx2(data, bytes);
#endif
    default:
        return XXH3_64bits(data, bytes);
    }
}
