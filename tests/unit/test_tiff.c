/*
 * test_tiff.c - the TIFF decoder on files written here byte by byte: what a
 * name ending in .tif changes (Ultralytics' imread: 16-bit colour to its
 * high bytes, a later page's header that raises), the stacks (4.6 refuses
 * *.tif; a compression the wheels' libtiff may lack), orientation, the
 * limits, the probe; and, for the sanitizers, every cut of a few files and
 * seeded mutations of them (refused or decoded, never a crash). The bytes
 * against cv2 and Ultralytics: tests/oracle/test_formats_oracle.py.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char dir[512];

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

/* One page: w x h pixels of spp samples of bps bits (8 or 16, stored as
 * given, little endian), uncompressed, one strip. */
typedef struct page {
    uint32_t w, h;
    uint16_t spp, bps, photometric, orientation, compression, sample_format;
    const void *data; /* w * h * spp samples */
} page;

static void put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void put16(buf *b, uint32_t v)
{
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put(b, x, 2);
}

static void put32(buf *b, uint32_t v)
{
    put16(b, v & 0xffff);
    put16(b, v >> 16);
}

static void entry(buf *b, uint16_t tag, uint16_t type, uint32_t count, uint32_t value)
{
    put16(b, tag);
    put16(b, type);
    put32(b, count);
    if (type == 3 && count == 1) {
        put16(b, value);
        put16(b, 0);
    } else {
        put32(b, value);
    }
}

/* A little-endian TIFF of `n` pages. */
static buf make_tiff(const page *pages, int n)
{
    buf b = {0};
    put(&b, "II*\0", 4);
    size_t link = b.n;
    put32(&b, 0);
    for (int k = 0; k < n; k++) {
        const page *pg = &pages[k];
        size_t bytes = (size_t)pg->w * pg->h * pg->spp * (pg->bps / 8);
        uint32_t data_at = (uint32_t)b.n;
        put(&b, pg->data, bytes);
        uint32_t bps_at = (uint32_t)b.n;
        for (int s = 0; s < pg->spp; s++)
            put16(&b, pg->bps);
        uint32_t ifd = (uint32_t)b.n;
        memcpy(b.p + link, &ifd, 4); /* little-endian host */
        int entries =
            12 + (pg->orientation != 0) + (pg->spp == 4) + (pg->sample_format != 0);
        put16(&b, (uint16_t)entries);
        entry(&b, 256, 4, 1, pg->w);
        entry(&b, 257, 4, 1, pg->h);
        entry(&b, 258, 3, pg->spp, pg->spp > 2 ? bps_at : pg->bps);
        entry(&b, 259, 3, 1, pg->compression ? pg->compression : 1);
        entry(&b, 262, 3, 1, pg->photometric);
        entry(&b, 273, 4, 1, data_at);
        if (pg->orientation)
            entry(&b, 274, 3, 1, pg->orientation);
        entry(&b, 277, 3, 1, pg->spp);
        entry(&b, 278, 4, 1, pg->h);
        entry(&b, 279, 4, 1, (uint32_t)bytes);
        entry(&b, 282, 4, 1, 0); /* resolutions: a RATIONAL offset, unread */
        entry(&b, 283, 4, 1, 0);
        entry(&b, 284, 3, 1, 1);
        if (pg->spp == 4)
            entry(&b, 338, 3, 1, 2);
        if (pg->sample_format)
            entry(&b, 339, 3, 1, pg->sample_format);
        link = b.n;
        put32(&b, 0);
    }
    return b;
}

static int decode(detfeed_codec *c, const buf *b, const char *name, uint8_t **px,
                  int *w, int *h)
{
    *px = NULL;
    return detfeed_codec_decode(c, b->p, b->n, name, px, w, h);
}

/* Decodes and expects `status` and a message naming the file with `words`. */
static void expect_fail(detfeed_codec *c, const buf *b, const char *name, int status,
                        const char *words)
{
    uint8_t *px;
    int w, h;
    int rc = decode(c, b, name, &px, &w, &h);
    const char *msg = detfeed_codec_last_error(c);
    if (!CHECK_INT(rc, status) || !CHECK(strstr(msg, name) != NULL) ||
        !CHECK(strstr(msg, words) != NULL))
        fprintf(stderr, "  %s: \"%s\"\n", name, msg);
    CHECK(px == NULL);
}

enum { W = 5, H = 3 };

static uint8_t rgb8[H][W][3];
static uint16_t rgb16[H][W][3];
static uint8_t rgba8[H][W][4];

static void fill(void)
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int s = 0; s < 3; s++) {
                rgb8[y][x][s] = (uint8_t)(40 * y + 17 * x + 90 * s);
                rgb16[y][x][s] = (uint16_t)(9001 * y + 3203 * x + 20011 * s + 127);
            }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int s = 0; s < 4; s++)
                rgba8[y][x][s] = (uint8_t)(31 * y + 7 * x + 60 * s);
}

static const detfeed_cv_version wheels[] = {DETFEED_CV_4, DETFEED_CV_5_0,
                                            DETFEED_CV_5_1};

/* 8-bit RGB: B, G, R whatever the name, on every stack; *.tif refused on
 * Debian's 4.6. */
static void test_rgb8(detfeed_codec *c)
{
    page pg = {W, H, 3, 8, 2, 0, 0, 0, rgb8};
    buf b = make_tiff(&pg, 1);
    for (size_t k = 0; k < 3; k++) {
        CHECK_INT(detfeed_codec_set_opencv(c, wheels[k]), 0);
        for (int named = 0; named < 2; named++) {
            uint8_t *px;
            int w, h;
            if (!CHECK_INT(decode(c, &b, named ? "a.TIF" : "a.png", &px, &w, &h), 0))
                continue;
            CHECK(w == W && h == H);
            int bad = 0;
            for (int i = 0; i < W * H; i++)
                bad += px[3 * i] != rgb8[i / W][i % W][2] ||
                       px[3 * i + 2] != rgb8[i / W][i % W][0];
            CHECK_INT(bad, 0);
            detfeed_free(px);
        }
    }
    CHECK_INT(detfeed_codec_set_opencv(c, DETFEED_CV_4_DEBIAN), 0);
    expect_fail(c, &b, "a.tiff", DETFEED_EFORMAT, "imdecodemulti");
    uint8_t *px;
    int w, h;
    CHECK_INT(decode(c, &b, "a.dat", &px, &w, &h), 0);
    detfeed_free(px);
    CHECK_INT(detfeed_codec_set_opencv(c, DETFEED_CV_5_1), 0);
    free(b.p);
}

/* 16-bit RGB: imread's high bytes for *.tif, libtiff's RGBA conversion
 * ((v + 128) / 257) for other names. */
static void test_rgb16(detfeed_codec *c)
{
    page pg = {W, H, 3, 16, 2, 0, 0, 0, rgb16};
    buf b = make_tiff(&pg, 1);
    for (int named = 0; named < 2; named++) {
        uint8_t *px;
        int w, h;
        if (!CHECK_INT(decode(c, &b, named ? "a.tif" : "a", &px, &w, &h), 0))
            continue;
        int bad = 0;
        for (int i = 0; i < W * H; i++)
            for (int s = 0; s < 3; s++) {
                unsigned v = rgb16[i / W][i % W][2 - s];
                bad += px[3 * i + s] != (named ? v >> 8 : (v + 128) / 257);
            }
        CHECK_INT(bad, 0);
        detfeed_free(px);
    }
    free(b.p);
}

/* The orientation tag: 6 gives a tall image; gray is expanded. */
static void test_orientation(detfeed_codec *c)
{
    for (int o = 1; o <= 8; o++) {
        page pg = {W, H, 3, 8, 2, (uint16_t)o, 0, 0, rgb8};
        buf b = make_tiff(&pg, 1);
        uint8_t *px;
        int w, h;
        if (CHECK_INT(decode(c, &b, "o.tif", &px, &w, &h), 0))
            CHECK(o >= 5 ? (w == H && h == W) : (w == W && h == H));
        detfeed_free(px);
        free(b.p);
    }
    uint8_t gray[H][W];
    memset(gray, 77, sizeof gray);
    page pg = {W, H, 1, 8, 1, 0, 0, 0, gray};
    buf b = make_tiff(&pg, 1);
    uint8_t *px;
    int w, h;
    if (CHECK_INT(decode(c, &b, "g.tif", &px, &w, &h), 0))
        CHECK(px[0] == 77 && px[1] == 77 && px[3 * W * H - 1] == 77);
    detfeed_free(px);
    free(b.p);
}

/* Pages: a second page whose header OpenCV cannot read makes imread raise
 * (refused for *.tif); imdecode reads the first page. Samples imread hands
 * on unconverted are refused. */
static void test_pages(detfeed_codec *c)
{
    page pages[2] = {{W, H, 3, 16, 2, 0, 0, 0, rgb16}, {W, H, 3, 8, 2, 0, 0, 0, rgb8}};
    buf b = make_tiff(pages, 2);
    uint8_t *px;
    int w, h;
    CHECK_INT(decode(c, &b, "two.tif", &px, &w, &h), 0);
    CHECK(px != NULL && px[0] == rgb16[0][0][2] >> 8);
    detfeed_free(px);
    free(b.p);
    pages[1].bps = 8, pages[1].spp = 3, pages[1].sample_format = 3; /* 8-bit float */
    b = make_tiff(pages, 2);
    expect_fail(c, &b, "raises.tif", DETFEED_ECORRUPT, "raises");
    CHECK_INT(decode(c, &b, "raises.bin", &px, &w, &h), 0);
    detfeed_free(px);
    free(b.p);
    float f[H][W][3] = {{{0}}};
    page fp = {W, H, 3, 32, 2, 0, 0, 3, f};
    b = make_tiff(&fp, 1);
    expect_fail(c, &b, "float.tif", DETFEED_EFORMAT, "unconverted");
    free(b.p);
}

/* Limits before pixels; a compression the wheels' libtiff may lack; the
 * probe. */
static void test_limits_and_probe(detfeed_codec *c)
{
    page pg = {W, H, 3, 8, 2, 6, 0, 0, rgb8};
    buf b = make_tiff(&pg, 1);
    memcpy(b.p + b.n - 4 - 13 * 12 + 8, &(uint32_t){40000}, 4); /* the width */
    expect_fail(c, &b, "wide.tif", DETFEED_ELIMIT, "max_width");
    free(b.p);
    pg.compression = 32809; /* ThunderScan */
    b = make_tiff(&pg, 1);
    expect_fail(c, &b, "thunder.tif", DETFEED_EFORMAT, "compression 32809");
    free(b.p);
    pg.compression = 0;
    b = make_tiff(&pg, 1);
    char path[600];
    snprintf(path, sizeof path, "%s/six.tif", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL && fwrite(b.p, 1, b.n, f) == b.n);
    if (f)
        fclose(f);
    int w = 0, h = 0;
    CHECK_INT(detfeed_codec_probe_file(c, path, &w, &h), 0);
    CHECK(w == H && h == W);
    free(b.p);
}

/* Every cut of two files and seeded mutations of them, under every
 * stack: a status and a message, or an image; never a crash. */
static void test_damage(detfeed_codec *c)
{
    page pages[2] = {{W, H, 3, 16, 2, 3, 0, 0, rgb16}, {W, H, 4, 8, 2, 0, 0, 0, rgba8}};
    buf files[2] = {make_tiff(pages, 2), make_tiff(&pages[1], 1)};
    uint64_t rng = 7;
    int counts[2] = {0, 0};
    const char *const names[2] = {"cut", "cut.tif"}; /* as imdecode, as imread */
    for (int v = 0; v < 4; v++) {
        CHECK_INT(detfeed_codec_set_opencv(c, (detfeed_cv_version)v), 0);
        for (int k = 0; k < 2; k++)
            tu_decode_damaged(c, files[k].p, files[k].n, TU_SANITIZED ? 7 : 1,
                              TU_SANITIZED ? 200 : 1000, names, &rng, counts);
    }
    CHECK(counts[0] > 0 && counts[1] > 0);
    CHECK_INT(detfeed_codec_set_opencv(c, DETFEED_CV_5_1), 0);
    free(files[0].p);
    free(files[1].p);
}

int main(void)
{
    if (!tu_temp_dir(dir, sizeof dir, "tiff"))
        return tu_finish("test_tiff");
    fill();
    detfeed_codec *c = NULL;
    CHECK_INT(detfeed_codec_create(&c, 0), 0);
    test_rgb8(c);
    test_rgb16(c);
    test_orientation(c);
    test_pages(c);
    test_limits_and_probe(c);
    test_damage(c);
    detfeed_codec_destroy(c);
    CHECK(tu_remove_tree(dir));
    return tu_finish("test_tiff");
}
