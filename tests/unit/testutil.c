#include "testutil.h"

#include <stdatomic.h>
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

void tu_sha256_hex(const void *data, size_t size, char hex[65])
{
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    detfeed_sha256_update(&ctx, data, size);
    detfeed_sha256_hex(&ctx, hex);
}
