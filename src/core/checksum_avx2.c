/*
 * checksum_avx2.c - the AVX2 variant of detfeed__checksum (checksum.c):
 * the same XXH3-64, with the header's AVX2 code path (this file is compiled
 * with -mavx2).
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <stddef.h>
#include <stdint.h>

uint64_t detfeed__checksum_avx2(const void *data, size_t bytes);

uint64_t detfeed__checksum_avx2(const void *data, size_t bytes)
{
    return XXH3_64bits(data, bytes);
}
