#include "testutil.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Atomic: checks may run on several threads (test_determinism). */
static _Atomic int passed, failed;

bool tu_check(bool ok, const char *expr, const char *file, int line)
{
    if (ok) {
        passed++;
        return true;
    }
    failed++;
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, expr);
    return false;
}

bool tu_check_int(long long got, long long want, const char *expr, const char *file,
                  int line)
{
    if (got == want) {
        passed++;
        return true;
    }
    failed++;
    fprintf(stderr, "%s:%d: %s is %lld, expected %lld\n", file, line, expr, got, want);
    return false;
}

bool tu_check_str(const char *got, const char *want, const char *expr, const char *file,
                  int line)
{
    if (got && want && strcmp(got, want) == 0) {
        passed++;
        return true;
    }
    failed++;
    fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", file, line, expr,
            got ? got : "(null)", want ? want : "(null)");
    return false;
}

static atomic_int skipped;

void tu_skip(const char *why)
{
    printf("skipped: %s\n", why);
    atomic_fetch_add(&skipped, 1);
}

int tu_failures(void)
{
    return atomic_load(&failed);
}

int tu_finish(const char *suite)
{
    printf("%s: %d passed, %d failed%s\n", suite, atomic_load(&passed),
           atomic_load(&failed), atomic_load(&skipped) ? ", part skipped" : "");
    return failed ? 1 : atomic_load(&skipped) ? 77 : 0;
}

/* One decode of damaged input: counted, and an image or nothing. */
static void decode_one(detfeed_codec *c, const uint8_t *p, size_t n, const char *name,
                       int counts[2])
{
    uint8_t *px = NULL;
    int w, h;
    int rc = detfeed_codec_decode(c, p, n, name, &px, &w, &h);
    counts[rc == 0 ? 0 : 1]++;
    CHECK(rc == 0 ? (px != NULL && w > 0 && h > 0) : px == NULL);
    detfeed_free(px);
}

void tu_decode_damaged(detfeed_codec *c, const uint8_t *data, size_t size, size_t step,
                       int mutations, const char *const names[2], uint64_t *rng,
                       int counts[2])
{
    for (size_t n = 1; n < size; n += step)
        decode_one(c, data, n, names[n % 2], counts);
    uint8_t *copy = malloc(size ? size : 1);
    if (!CHECK(copy != NULL))
        return;
    for (int m = 0; m < mutations; m++) {
        memcpy(copy, data, size);
        for (int j = 0; j < 3 && size; j++)
            copy[tu_rand(rng) % size] = (uint8_t)tu_rand(rng);
        decode_one(c, copy, size, names[m % 2], counts);
    }
    free(copy);
}

void tu_sha256_hex(const void *data, size_t size, char hex[65])
{
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    detfeed_sha256_update(&ctx, data, size);
    detfeed_sha256_hex(&ctx, hex);
}
