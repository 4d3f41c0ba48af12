/*
 * test_avif.c - the AVIF reader (src/data/avif.c, avif_rgb.c) on the decode
 * fuzzer's AVIF seeds (small files of Pillow's and avifenc's): sizes and
 * orientations, gray, 10 and 12 bits, the refusals with their reasons, the
 * name rules, the limits, the probe, libyuv's arithmetic on known values,
 * and cuts and mutations (a status or an image, never a crash). The bytes
 * themselves are held to Pillow 13 by tests/oracle/test_avif_oracle.py.
 */
#include "testutil.h"

#include "data/avif_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[512];

typedef struct {
    uint8_t *p;
    size_t n;
} buf;

static buf seed(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/avif-%s", DETFEED_CORPUS, name);
    buf b = {0};
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (f == NULL)
        return b;
    b.p = malloc(1 << 16);
    b.n = fread(b.p, 1, 1 << 16, f);
    fclose(f);
    return b;
}

static int decode(detfeed_codec *c, const char *file, const char *name, int *w, int *h,
                  uint8_t **px)
{
    buf b = seed(file);
    int rc = detfeed_codec_decode(c, b.p, b.n, name, px, w, h);
    free(b.p);
    return rc;
}

static void expect_size(detfeed_codec *c, const char *file, int ww, int wh)
{
    uint8_t *px = NULL;
    int w = 0, h = 0;
    CHECK_INT(decode(c, file, "a.AVIF", &w, &h, &px), 0);
    CHECK_INT(w, ww);
    CHECK_INT(h, wh);
    detfeed_free(px);
}

static void test_reads(detfeed_codec *c)
{
    expect_size(c, "pil420", 24, 16);
    expect_size(c, "pil422_odd", 24, 16);
    expect_size(c, "pil_alpha", 24, 16);
    expect_size(c, "enc_identity", 24, 16);
    expect_size(c, "enc_exif_irot", 16, 24); /* avifenc made EXIF 6 an irot */
    expect_size(c, "pil_exif6", 16, 24);     /* Pillow wrote orientation 6 as irot */
    expect_size(c, "enc_rotmir", 16, 24);    /* irot 1 with imir: 7 */
    uint8_t *px = NULL;
    int w, h, gray = 1;
    CHECK_INT(decode(c, "enc400_d10", "g.avif", &w, &h, &px), 0);
    for (int i = 0; px && i < w * h; i++)
        gray &= px[3 * i] == px[3 * i + 1] && px[3 * i] == px[3 * i + 2];
    CHECK(gray);
    detfeed_free(px);
}

static void expect_refused(detfeed_codec *c, const char *file, const char *name,
                           int status, const char *words)
{
    uint8_t *px = (uint8_t *)1;
    int w, h;
    CHECK_INT(decode(c, file, name, &w, &h, &px), status);
    CHECK(px == NULL);
    const char *m = detfeed_codec_last_error(c);
    CHECK(strstr(m, name) != NULL);
    if (!CHECK(strstr(m, words) != NULL))
        fprintf(stderr, "  %s as %s: %s\n", file, name, m);
}

static void test_refusals(detfeed_codec *c)
{
    expect_refused(c, "enc_premul", "p.avif", DETFEED_EFORMAT, "premultiplied alpha");
    /* an XMP orientation without irot: Pillow would apply it */
    expect_refused(c, "enc_xmp", "x.avif", DETFEED_EFORMAT, "XMP");
    expect_refused(c, "pil420", "a.jpg", DETFEED_EFORMAT, "name other than .avif");
    expect_refused(c, "pil420", "(memory)", DETFEED_EFORMAT, "name other than .avif");
    static const uint8_t jpeg[] = {0xff, 0xd8, 0xff, 0xe0, 0, 16};
    uint8_t *px;
    int w, h;
    CHECK_INT(detfeed_codec_decode(c, jpeg, sizeof jpeg, "j.avif", &px, &w, &h),
              DETFEED_EFORMAT);
    CHECK(strstr(detfeed_codec_last_error(c), "named .avif but not AVIF") != NULL);
    static const char text[] = "avif";
    CHECK_INT(detfeed_codec_decode(c, text, 4, "t.avif", &px, &w, &h), DETFEED_EFORMAT);
}

static void test_limits_and_probe(detfeed_codec *c)
{
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_WIDTH, 20), 0);
    expect_refused(c, "pil420", "wide.avif", DETFEED_ELIMIT, "wide.avif");
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_WIDTH, 32768), 0);
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_PIXELS, 100), 0);
    expect_refused(c, "pil420", "many.avif", DETFEED_ELIMIT, "pixel");
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_PIXELS, 1u << 26), 0);
    int w, h;
    char path[700];
    snprintf(path, sizeof path, "%s/r.avif", dir);
    buf b = seed("enc_rotmir");
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL && fwrite(b.p, 1, b.n, f) == b.n);
    if (f)
        fclose(f);
    free(b.p);
    CHECK_INT(detfeed_codec_probe_file(c, path, &w, &h), 0);
    CHECK(w == 16 && h == 24);
}

/* libyuv's fixed point on known values: mid gray stays 128 in every matrix
 * and range; full-range BT.601 (kYuvJPEG) of Y 76, U 85, V 255 is red. */
static void test_arithmetic(void)
{
    uint8_t y[4] = {128, 128, 128, 128}, u[4] = {128, 128, 128, 128},
            v[4] = {128, 128, 128, 128}, bgr[12];
    detfeed__yuv in = {.plane = {y, u, v},
                       .stride = {2, 2, 2},
                       .width = 2,
                       .height = 2,
                       .depth = 8,
                       .layout = DETFEED_YUV444,
                       .full_range = 1};
    CHECK(detfeed__yuv_to_bgr(&in, bgr));
    CHECK(bgr[0] == 128 && bgr[1] == 128 && bgr[2] == 128 && bgr[11] == 128);
    y[0] = 76, u[0] = 85, v[0] = 255;
    CHECK(detfeed__yuv_to_bgr(&in, bgr));
    /* y1 = (76 * 257 * 16320 >> 16) + 32 = 4895; b = (4895 - 43 * 113) >> 6
     * = 0, g = (4895 - (-43 * 22 + 127 * 46)) >> 6 = 0, r = (4895 + 127 *
     * 90) >> 6 = 255 (clamped from 255.0). */
    CHECK_INT(bgr[0], 0);
    CHECK_INT(bgr[1], 0);
    CHECK_INT(bgr[2], 255);
    in.full_range = 0, in.layout = DETFEED_YUV420;
    y[0] = 128, u[0] = 128, v[0] = 128;
    CHECK(detfeed__yuv_to_bgr(&in, bgr));
    /* limited: (128 * 257 * 18997 >> 16) - 1160 = 8375, >> 6 = 130 */
    CHECK_INT(bgr[0], 130);
}

static void test_damage(detfeed_codec *c)
{
    static const char *const names[2] = {"d.avif", "e.avif"};
    int counts[2] = {0, 0};
    uint64_t rng = 7;
    const char *files[] = {"pil420", "enc_rotmir", "pil_alpha"};
    for (int k = 0; k < 3; k++) {
        buf b = seed(files[k]);
        tu_decode_damaged(c, b.p, b.n, TU_SANITIZED ? 5 : 1, TU_SANITIZED ? 150 : 600,
                          names, &rng, counts);
        free(b.p);
    }
    CHECK(counts[0] > 0 && counts[1] > 0);
}

int main(void)
{
    if (!tu_temp_dir(dir, sizeof dir, "avif"))
        return tu_finish("test_avif");
    detfeed_codec *c = NULL;
    CHECK_INT(detfeed_codec_create(&c, 0), 0);
    test_reads(c);
    test_refusals(c);
    test_limits_and_probe(c);
    test_arithmetic();
    test_damage(c);
    detfeed_codec_destroy(c);
    CHECK(tu_remove_tree(dir));
    return tu_finish("test_avif");
}
