/*
 * test_codec.c - PNG read and write through detfeed_codec, and every kind of
 * bad input the colour command can meet: missing, unreadable, directory,
 * empty, not a PNG, truncated, bad CRC, 16-bit, alpha, palette, over limits.
 */
#include "testutil.h"

#include <spng.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static const char *path_of(const char *name)
{
    static char buf[2][256];
    static int k;
    k ^= 1;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* Writes a PNG of any format with libspng directly (the codec only writes
 * 8-bit RGB). `raw` holds the samples in the encoder's layout. */
static void write_png_raw(const char *name, int w, int h, int depth, int ctype,
                          const void *raw, size_t n)
{
    FILE *fp = fopen(path_of(name), "wb");
    spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
    struct spng_ihdr ihdr = {.width = (uint32_t)w,
                             .height = (uint32_t)h,
                             .bit_depth = (uint8_t)depth,
                             .color_type = (uint8_t)ctype};
    spng_set_png_file(ctx, fp);
    spng_set_ihdr(ctx, &ihdr);
    if (ctype == SPNG_COLOR_TYPE_INDEXED) {
        struct spng_plte plte = {.n_entries = 2};
        plte.entries[1].red = 255;
        spng_set_plte(ctx, &plte);
    }
    CHECK_INT(spng_encode_image(ctx, raw, n, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE), 0);
    spng_ctx_free(ctx);
    fclose(fp);
}

static void write_bytes(const char *name, const void *data, size_t n)
{
    FILE *fp = fopen(path_of(name), "wb");
    if (n)
        fwrite(data, 1, n, fp);
    fclose(fp);
}

static uint8_t *read_bytes(const char *name, size_t *n)
{
    FILE *fp = fopen(path_of(name), "rb");
    fseek(fp, 0, SEEK_END);
    *n = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *b = malloc(*n);
    if (fread(b, 1, *n, fp) != *n)
        *n = 0;
    fclose(fp);
    return b;
}

static void test_roundtrip(detfeed_codec *c)
{
    enum { W = 33, H = 7 };
    uint8_t img[H][W * 3 + 5];
    uint64_t rng = 5;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W * 3 + 5; x++)
            img[y][x] = (uint8_t)tu_rand(&rng);
    CHECK_INT(
        detfeed_codec_write_png(c, path_of("rt.png"), &img[0][0], sizeof img[0], W, H),
        0);
    uint8_t *px = NULL;
    int w = 0, h = 0;
    CHECK_INT(detfeed_codec_read_png(c, path_of("rt.png"), &px, &w, &h), 0);
    CHECK(w == W && h == H && px != NULL);
    int bad = 0;
    for (int y = 0; px && y < H; y++)
        bad += memcmp(px + (size_t)y * W * 3, img[y], W * 3) != 0;
    CHECK_INT(bad, 0);
    CHECK_STR(detfeed_codec_last_error(c), "");
    detfeed_free(px);

    /* Grayscale g becomes (g, g, g). */
    uint8_t gray[2 * 3] = {0, 17, 255, 128, 1, 2};
    write_png_raw("gray.png", 3, 2, 8, SPNG_COLOR_TYPE_GRAYSCALE, gray, sizeof gray);
    CHECK_INT(detfeed_codec_read_png(c, path_of("gray.png"), &px, &w, &h), 0);
    CHECK(w == 3 && h == 2);
    for (int i = 0; px && i < 6; i++)
        CHECK(px[3 * i] == gray[i] && px[3 * i + 1] == gray[i] &&
              px[3 * i + 2] == gray[i]);
    detfeed_free(px);

    /* RGB on disk is BGR in memory. */
    uint8_t rgb[3] = {10, 20, 30};
    write_png_raw("rgb1.png", 1, 1, 8, SPNG_COLOR_TYPE_TRUECOLOR, rgb, 3);
    CHECK_INT(detfeed_codec_read_png(c, path_of("rgb1.png"), &px, &w, &h), 0);
    CHECK(px && px[0] == 30 && px[1] == 20 && px[2] == 10);
    detfeed_free(px);
}

/* Expects failure with `status` and a message that names the file and
 * contains `words`. */
static void expect_fail(detfeed_codec *c, const char *name, int status,
                        const char *words)
{
    uint8_t *px = (uint8_t *)1;
    int w, h;
    const char *p = path_of(name);
    int rc = detfeed_codec_read_png(c, p, &px, &w, &h);
    const char *msg = detfeed_codec_last_error(c);
    if (!CHECK_INT(rc, status) || !CHECK(strstr(msg, p) != NULL) ||
        !CHECK(strstr(msg, words) != NULL))
        fprintf(stderr, "  %s: \"%s\"\n", name, msg);
    CHECK(px == NULL);
}

static void test_bad_input(detfeed_codec *c)
{
    expect_fail(c, "missing.png", DETFEED_EIO, "cannot open");
    mkdir(path_of("dir.png"), 0700);
    expect_fail(c, "dir.png", DETFEED_EIO, "not a regular file");
    write_bytes("empty.png", "", 0);
    expect_fail(c, "empty.png", DETFEED_ECORRUPT, "empty file");
    write_bytes("text.png", "hello, this is not a png file", 29);
    expect_fail(c, "text.png", DETFEED_EFORMAT, "not a PNG");

    uint16_t deep[4] = {1, 2, 3, 4};
    write_png_raw("gray16.png", 2, 2, 16, SPNG_COLOR_TYPE_GRAYSCALE, deep, sizeof deep);
    expect_fail(c, "gray16.png", DETFEED_EFORMAT, "16-bit grayscale");
    uint8_t rgba[4 * 4] = {0};
    write_png_raw("rgba.png", 2, 2, 8, SPNG_COLOR_TYPE_TRUECOLOR_ALPHA, rgba,
                  sizeof rgba);
    expect_fail(c, "rgba.png", DETFEED_EFORMAT, "8-bit RGBA");
    uint8_t idx[2] = {0x40, 0x80}; /* 2x2 at 1 bit per pixel, one byte a row */
    write_png_raw("pal.png", 2, 2, 1, SPNG_COLOR_TYPE_INDEXED, idx, sizeof idx);
    expect_fail(c, "pal.png", DETFEED_EFORMAT, "palette");

    /* Damaged copies of a good file: truncated, and a flipped IDAT byte. */
    uint8_t img[16 * 16 * 3];
    for (size_t i = 0; i < sizeof img; i++)
        img[i] = (uint8_t)(i * 7);
    detfeed_codec_write_png(c, path_of("good.png"), img, 48, 16, 16);
    size_t n;
    uint8_t *bytes = read_bytes("good.png", &n);
    write_bytes("trunc.png", bytes, n / 2);
    expect_fail(c, "trunc.png", DETFEED_ECORRUPT, "PNG");
    uint8_t *idat = NULL;
    for (size_t i = 0; i + 4 < n && !idat; i++)
        if (memcmp(bytes + i, "IDAT", 4) == 0)
            idat = bytes + i;
    if (CHECK(idat != NULL)) {
        idat[6] ^= 0x10;
        write_bytes("crc.png", bytes, n);
        expect_fail(c, "crc.png", DETFEED_ECORRUPT, "PNG");
    }
    free(bytes);

    /* Limits are checked from the header, before decoding. */
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_PIXELS, 100), 0);
    expect_fail(c, "good.png", DETFEED_ELIMIT, "limit");
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_PIXELS, 1u << 28), 0);
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_WIDTH, 8), 0);
    expect_fail(c, "good.png", DETFEED_ELIMIT, "16x16");
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_WIDTH, 32768), 0);
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_FILE, 10), 0);
    expect_fail(c, "good.png", DETFEED_ELIMIT, "file size limit");
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_FILE, 1u << 30), 0);
    CHECK_INT(detfeed_codec_set_limit(c, (detfeed_codec_limit)9, 1), DETFEED_EINVAL);
    CHECK(strstr(detfeed_codec_last_error(c), "limit 9 is not a codec limit") != NULL);
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_FILE, 0), DETFEED_EINVAL);
    CHECK(strstr(detfeed_codec_last_error(c), "max_file: 0 is not a limit") != NULL);
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_FILE, 1u << 30), 0);
    CHECK_STR(detfeed_codec_last_error(c), "");

    /* Arguments the PNG functions refuse, by name. */
    uint8_t *none = NULL;
    int w, h;
    CHECK_INT(detfeed_codec_read_png(c, NULL, &none, &w, &h), DETFEED_EINVAL);
    CHECK(strstr(detfeed_codec_last_error(c), "read_png: (no path)") != NULL);
    CHECK_INT(detfeed_codec_read_png(c, path_of("good.png"), NULL, &w, &h),
              DETFEED_EINVAL);
    CHECK(strstr(detfeed_codec_last_error(c), "good.png") != NULL &&
          strstr(detfeed_codec_last_error(c), "pixels") != NULL);
    CHECK_INT(detfeed_codec_write_png(c, path_of("w.png"), NULL, 48, 16, 16),
              DETFEED_EINVAL);
    CHECK(strstr(detfeed_codec_last_error(c), "write_png") != NULL &&
          strstr(detfeed_codec_last_error(c), "w.png") != NULL);
    CHECK_INT(detfeed_codec_write_png(c, path_of("w.png"), img, 47, 16, 16),
              DETFEED_EINVAL);
    CHECK(strstr(detfeed_codec_last_error(c), "stride 47") != NULL);
    CHECK_INT(detfeed_codec_write_png(c, NULL, img, 48, 16, 16), DETFEED_EINVAL);
    CHECK(strstr(detfeed_codec_last_error(c), "write_png: (no path)") != NULL);

    /* Unreadable file (skipped when running as root, which reads anyway). */
    if (geteuid() != 0) {
        write_bytes("noperm.png", "x", 1);
        chmod(path_of("noperm.png"), 0);
        expect_fail(c, "noperm.png", DETFEED_EIO, "cannot open");
    }
    /* Writing where no file can be created. */
    CHECK_INT(detfeed_codec_write_png(c, path_of("no/such/dir.png"), img, 48, 16, 16),
              DETFEED_EIO);
    CHECK(strstr(detfeed_codec_last_error(c), "no/such/dir.png") != NULL);
}

int main(void)
{
    if (!tu_temp_dir(dir, sizeof dir, "codec"))
        return tu_finish("test_codec");
    detfeed_codec *c = NULL;
    CHECK_INT(detfeed_codec_create(&c, 1), DETFEED_EINVAL);
    CHECK(c == NULL);
    CHECK_INT(detfeed_codec_create(NULL, 0), DETFEED_EINVAL);
    CHECK_INT(detfeed_codec_create(&c, 0), 0);
    test_roundtrip(c);
    test_bad_input(c);
    detfeed_codec_destroy(c);
    detfeed_codec_destroy(NULL);
    CHECK(tu_remove_tree(dir));
    return tu_finish("test_codec");
}
