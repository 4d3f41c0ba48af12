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
    test_helpers();
    return tu_finish("test_core");
}
