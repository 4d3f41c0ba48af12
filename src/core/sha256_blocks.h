/*
 * sha256_blocks.h - SHA-256's block function on the CPU's SHA instructions
 * (x86-64 SHA extensions), internal to sha256.c, which uses it where the CPU
 * has them and its portable code elsewhere: the same digests, several times
 * faster (the replay tool's digest of every batch byte is bound by it).
 */
#ifndef DETFEED_SHA256_BLOCKS_H
#define DETFEED_SHA256_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

/* Compresses the n 64-byte blocks at p into state, with round constants k.
 * Only where detfeed__cpu_has_sha() (core/internal.h) is true. */
void detfeed_sha256_blocks_hw(uint32_t state[8], const uint8_t *p, size_t n,
                              const uint32_t k[64]);

#endif /* DETFEED_SHA256_BLOCKS_H */
