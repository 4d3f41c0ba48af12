#include "testutil.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

int tu_finish(const char *suite)
{
    printf("%s: %d passed, %d failed\n", suite, atomic_load(&passed),
           atomic_load(&failed));
    return failed ? 1 : 0;
}

void tu_sha256_hex(const void *data, size_t size, char hex[65])
{
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    detfeed_sha256_update(&ctx, data, size);
    detfeed_sha256_hex(&ctx, hex);
}

void tu_noise_dataset(const char *root, int n, int min_side, int span, uint64_t seed,
                      void (*labels)(FILE *f, int i))
{
    char p[512];
    snprintf(p, sizeof p, "%s/images", root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/labels", root);
    mkdir(p, 0755);
    detfeed_codec *codec;
    detfeed_codec_create(&codec, 0);
    for (int i = 0; i < n; i++) {
        int w = min_side + (int)(tu_rand(&seed) % (uint64_t)span),
            h = min_side + (int)(tu_rand(&seed) % (uint64_t)span);
        uint8_t *px = malloc((size_t)w * h * 3);
        for (int k = 0; k < w * h * 3; k++)
            px[k] = (uint8_t)(tu_rand(&seed) >> 56);
        snprintf(p, sizeof p, "%s/images/%02d.png", root, i);
        CHECK_INT(detfeed_codec_write_png(codec, p, px, (size_t)w * 3, w, h), 0);
        free(px);
        snprintf(p, sizeof p, "%s/labels/%02d.txt", root, i);
        FILE *f = fopen(p, "w");
        if (CHECK(f != NULL)) {
            labels(f, i);
            fclose(f);
        }
    }
    detfeed_codec_destroy(codec);
}
