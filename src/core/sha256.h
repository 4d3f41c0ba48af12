/*
 * sha256.h - SHA-256 (FIPS 180-4), internal: the library's cache files and
 * verification record carry digests of their headers and contents, and the
 * tools and tests digest batches with it (they link the static library).
 * Not part of the public interface; programs that use the library hash with
 * their own SHA-256 (the Python package uses hashlib).
 */
#ifndef DETFEED_SHA256_H
#define DETFEED_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* An incremental SHA-256; lives on the stack, its fields are the hash's. */
typedef struct detfeed_sha256 {
    uint32_t state[8];
    uint64_t bytes; /* hashed so far */
    uint8_t block[64];
    int hw; /* 1: the CPU's SHA instructions (init sets it where the CPU has
               them; a test sets 0 after init to run the portable code) */
} detfeed_sha256;

void detfeed_sha256_init(detfeed_sha256 *ctx);
void detfeed_sha256_update(detfeed_sha256 *ctx, const void *data, size_t size);
/* Writes the 32-byte digest; the context must be initialised again before
 * reuse. */
void detfeed_sha256_final(detfeed_sha256 *ctx, uint8_t out[32]);
/* Writes the digest of `ctx` as 64 lowercase hex characters and a NUL into
 * hex (65 bytes). Finalises the context. */
void detfeed_sha256_hex(detfeed_sha256 *ctx, char hex[65]);
/* The digest of `size` bytes at `data` in one call. */
void detfeed_sha256_of(const void *data, size_t size, uint8_t out[32]);

#endif /* DETFEED_SHA256_H */
