/*
 * test_core.c - status codes, version, SHA-256 and the checked helpers.
 */
#include "core/internal.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static void test_status(void)
{
    CHECK_STR(detfeed_strerror(DETFEED_OK), "success");
    CHECK_STR(detfeed_strerror(DETFEED_EINVAL), "invalid argument");
    CHECK_STR(detfeed_strerror(DETFEED_ELABEL), "label rejected");
    CHECK_STR(detfeed_strerror(-1000), "unknown status");
    CHECK_STR(detfeed_strerror(5), "unknown status");
    for (int s = 0; s >= DETFEED_ELABEL; s--)
        CHECK(strcmp(detfeed_strerror(s), "unknown status") != 0);
}

static void test_version(void)
{
    CHECK_INT(detfeed_version_number(), DETFEED_VERSION_NUMBER);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", DETFEED_VERSION_MAJOR,
             DETFEED_VERSION_MINOR, DETFEED_VERSION_PATCH);
    CHECK_STR(detfeed_version_string(), want);
}

static void sha_of(const char *s, char hex[65])
{
    tu_sha256_hex(s, strlen(s), hex);
}

/* FIPS 180-4 / NIST example vectors. */
static void test_sha256(void)
{
    char hex[65];
    sha_of("", hex);
    CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha_of("abc", hex);
    CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", hex);
    CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* One million 'a', fed in uneven pieces to exercise the block logic. */
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    char buf[1024];
    memset(buf, 'a', sizeof buf);
    size_t left = 1000000, step = 1;
    while (left) {
        size_t n = step < left ? step : left;
        detfeed_sha256_update(&ctx, buf, n);
        left -= n;
        step = step % 997 + 7;
    }
    detfeed_sha256_hex(&ctx, hex);
    CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* The digest of `size` bytes fed in pieces of `step` (0: one piece), by
 * the CPU's SHA instructions (hw 1, where the CPU has them) or the portable
 * code (hw 0). */
static void digest(const uint8_t *data, size_t size, size_t step, int hw, char hex[65])
{
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    ctx.hw = hw && ctx.hw;
    for (size_t at = 0; at < size;) {
        size_t n = step == 0 || step > size - at ? size - at : step;
        detfeed_sha256_update(&ctx, data + at, n);
        at += n;
    }
    detfeed_sha256_hex(&ctx, hex);
}

/* Both block functions give the same digests: every length to 4 blocks and
 * beyond, whole and in uneven pieces, and the NIST vectors by each. */
static void test_sha256_paths(void)
{
    detfeed_sha256 probe;
    detfeed_sha256_init(&probe);
    printf("test_core: SHA-256 by %s\n",
           probe.hw ? "the CPU's SHA instructions and the portable code"
                    : "the portable code only (this CPU has no SHA instructions)");
    enum { N = 1 << 20 };
    uint8_t *data = malloc(N);
    CHECK(data != NULL);
    if (!data)
        return;
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        data[i] = (uint8_t)(x >> 32);
    }
    char a[65], b[65];
    for (size_t size = 0; size <= 4 * 64 + 1; size++) {
        digest(data, size, 0, 1, a);
        digest(data, size, 0, 0, b);
        CHECK_STR(a, b);
    }
    const size_t steps[] = {0, 1, 63, 64, 65, 1000, 4096};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        digest(data, N - 3, steps[i], 1, a);
        digest(data, N - 3, steps[i], 0, b);
        CHECK_STR(a, b);
    }
    const char *abc = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    for (int hw = 0; hw <= 1; hw++) {
        digest((const uint8_t *)abc, strlen(abc), 5, hw, a);
        CHECK_STR(a,
                  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    }
    free(data);
}

static void test_helpers(void)
{
    size_t out = 7;
    CHECK(detfeed__mul_size(3, 5, &out) && out == 15);
    CHECK(!detfeed__mul_size(SIZE_MAX / 2 + 1, 2, &out));
    CHECK(out == 15);
    CHECK_INT(detfeed__image_span(30, 24, 4), 114);
    CHECK_INT(detfeed__image_span(SIZE_MAX / 2, 24, 4), 0);
    char a[16];
    CHECK(!detfeed__partial_overlap(a, 16, a, 16));
    CHECK(detfeed__partial_overlap(a, 16, a + 3, 10));
    CHECK(!detfeed__partial_overlap(a, 8, a + 8, 8));
    detfeed__msg m;
    CHECK_INT(detfeed__fail(&m, DETFEED_EIO, "%s:%d", "f.txt", 3), DETFEED_EIO);
    CHECK_STR(m.text, "f.txt:3");
    detfeed_free(NULL);
}

int main(void)
{
    test_status();
    test_version();
    test_sha256();
    test_sha256_paths();
    test_helpers();
    return tu_finish("test_core");
}
