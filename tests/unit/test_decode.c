/*
 * test_decode.c - detfeed_codec_decode, _decode_file and _probe_file: good
 * JPEGs and PNGs (made here with TurboJPEG and libspng), EXIF orientation,
 * and every kind of bad input: each failure must give the right status, a
 * message naming the file, and no pixels. The byte-for-byte comparison with
 * cv2 is tests/oracle/test_decode_oracle.py.
 */
#include "testutil.h"

#include <spng.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>

static char dir[64];

static const char *path_of(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) & 3;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_bytes(const char *name, const void *data, size_t n)
{
    FILE *fp = fopen(path_of(name), "wb");
    if (n)
        fwrite(data, 1, n, fp);
    fclose(fp);
}

/* ---- making test images ------------------------------------------------ */

typedef struct buf {
    uint8_t *p;
    size_t n;
} buf;

static void random_bgr(uint8_t *img, int w, int h, uint64_t seed)
{
    /* Smooth content with some noise, so that JPEG keeps it close. */
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++)
                img[((size_t)y * w + x) * 3 + c] =
                    (uint8_t)(16 + x * 120 / w + y * 60 / h + 20 * c +
                              (tu_rand(&seed) & 7));
}

/* A JPEG of `pf` pixels (TJPF_BGR, TJPF_GRAY or TJPF_CMYK). */
static buf make_jpeg(const uint8_t *px, int w, int h, int pf, int subsamp, int quality)
{
    tjhandle tj = tjInitCompress();
    unsigned char *out = NULL;
    unsigned long n = 0;
    int rc = tjCompress2(tj, px, w, 0, h, pf, &out, &n, subsamp, quality, 0);
    CHECK_INT(rc, 0);
    buf b = {malloc(n), n};
    memcpy(b.p, out, n);
    tjFree(out);
    tjDestroy(tj);
    return b;
}

/* TurboJPEG's own BGR decode of the same bytes: what detfeed must return
 * for orientation 1. */
static uint8_t *tj_bgr(const buf *b, int *w, int *h)
{
    tjhandle tj = tjInitDecompress();
    int sub, cs;
    uint8_t *out = NULL;
    if (tjDecompressHeader3(tj, b->p, b->n, w, h, &sub, &cs) == 0) {
        out = malloc((size_t)*w * *h * 3);
        if (tjDecompress2(tj, b->p, b->n, out, *w, 0, *h, TJPF_BGR, 0) != 0) {
            free(out);
            out = NULL;
        }
    }
    tjDestroy(tj);
    return out;
}

static void put16(uint8_t *p, unsigned v, int le)
{
    p[le ? 0 : 1] = (uint8_t)v;
    p[le ? 1 : 0] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v, int le)
{
    for (int i = 0; i < 4; i++)
        p[le ? i : 3 - i] = (uint8_t)(v >> (8 * i));
}

/* A TIFF block with one IFD0 entry: Orientation = o (SHORT). 26 bytes. */
static size_t tiff_orientation(uint8_t *t, int o, int le)
{
    memset(t, 0, 26);
    t[0] = t[1] = le ? 'I' : 'M';
    put16(t + 2, 42, le);
    put32(t + 4, 8, le);
    put16(t + 8, 1, le);
    put16(t + 10, 0x0112, le);
    put16(t + 12, 3, le);
    put32(t + 14, 1, le);
    put16(t + 18, (unsigned)o, le);
    return 26;
}

/* `jpeg` with an APP1 segment holding "Exif\0\0" + tiff right after SOI. */
static buf splice_app1(const buf *jpeg, const uint8_t *tiff, size_t n)
{
    size_t seg = 2 + 2 + 6 + n;
    buf b = {malloc(jpeg->n + seg), jpeg->n + seg};
    uint8_t *p = b.p;
    memcpy(p, jpeg->p, 2);
    p += 2;
    *p++ = 0xff;
    *p++ = 0xe1;
    *p++ = (uint8_t)((seg - 2) >> 8);
    *p++ = (uint8_t)(seg - 2);
    memcpy(p, "Exif\0\0", 6);
    memcpy(p + 6, tiff, n);
    p += 6 + n;
    memcpy(p, jpeg->p + 2, jpeg->n - 2);
    return b;
}

/* A PNG through libspng's encoder: `raw` in the PNG's own layout. */
static buf make_png(int w, int h, int depth, int ctype, const void *raw, size_t n,
                    const struct spng_plte *plte, const struct spng_exif *exif)
{
    spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
    struct spng_ihdr ihdr = {.width = (uint32_t)w,
                             .height = (uint32_t)h,
                             .bit_depth = (uint8_t)depth,
                             .color_type = (uint8_t)ctype};
    spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
    spng_set_ihdr(ctx, &ihdr);
    if (plte)
        spng_set_plte(ctx, (struct spng_plte *)plte);
    if (exif)
        CHECK_INT(spng_set_exif(ctx, (struct spng_exif *)exif), 0);
    CHECK_INT(spng_encode_image(ctx, raw, n, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE), 0);
    int e = 0;
    size_t len = 0;
    buf b = {spng_get_png_buffer(ctx, &len, &e), 0};
    b.n = len;
    CHECK(e == 0 && b.p != NULL);
    spng_ctx_free(ctx);
    return b;
}

static uint32_t crc32_png(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
    }
    return c ^ 0xffffffffu;
}

/* ---- checks ---------------------------------------------------------------- */

/* Decodes the file `name` and expects `status`, a message naming the file
 * and containing `words`, and no pixels. */
static void expect_fail(detfeed_codec *c, const char *name, int status,
                        const char *words)
{
    uint8_t *px = (uint8_t *)1;
    int w = -1, h = -1;
    const char *p = path_of(name);
    int rc = detfeed_codec_decode_file(c, p, &px, &w, &h);
    const char *msg = detfeed_codec_last_error(c);
    if (!CHECK_INT(rc, status) || !CHECK(strstr(msg, p) != NULL) ||
        !CHECK(strstr(msg, words) != NULL))
        fprintf(stderr, "  %s: \"%s\"\n", name, msg);
    CHECK(px == NULL);
}

/* The same for the probe, which sees only the header. */
static void expect_probe_fail(detfeed_codec *c, const char *name, int status,
                              const char *words)
{
    int w = -1, h = -1;
    const char *p = path_of(name);
    int rc = detfeed_codec_probe_file(c, p, &w, &h);
    const char *msg = detfeed_codec_last_error(c);
    if (!CHECK_INT(rc, status) || !CHECK(strstr(msg, p) != NULL) ||
        !CHECK(strstr(msg, words) != NULL))
        fprintf(stderr, "  probe %s: \"%s\"\n", name, msg);
}

/* The same for bytes in memory, with `name` in messages. */
static void expect_mem_fail(detfeed_codec *c, const buf *b, const char *name,
                            int status, const char *words)
{
    uint8_t *px = (uint8_t *)1;
    int w = -1, h = -1;
    int rc = detfeed_codec_decode(c, b->p, b->n, name, &px, &w, &h);
    const char *msg = detfeed_codec_last_error(c);
    if (!CHECK_INT(rc, status) || !CHECK(strstr(msg, name) != NULL) ||
        !CHECK(strstr(msg, words) != NULL))
        fprintf(stderr, "  %s: \"%s\"\n", name, msg);
    CHECK(px == NULL);
}

/* Decodes a file that must succeed; returns the pixels. */
static uint8_t *decode_ok(detfeed_codec *c, const char *name, int *w, int *h)
{
    uint8_t *px = NULL;
    int rc = detfeed_codec_decode_file(c, path_of(name), &px, w, h);
    if (!CHECK_INT(rc, 0))
        fprintf(stderr, "  %s: \"%s\"\n", name, detfeed_codec_last_error(c));
    CHECK_STR(detfeed_codec_last_error(c), "");
    return px;
}

/* dst must be src under orientation o (the EXIF definitions). */
static int orientation_mismatches(const uint8_t *src, int w, int h, const uint8_t *dst,
                                  int o)
{
    int bad = 0;
    int dw = o >= 5 && o <= 8 ? h : w;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int dx, dy;
            switch (o) {
            case 2:
                dx = w - 1 - x, dy = y;
                break;
            case 3:
                dx = w - 1 - x, dy = h - 1 - y;
                break;
            case 4:
                dx = x, dy = h - 1 - y;
                break;
            case 5:
                dx = y, dy = x;
                break;
            case 6:
                dx = h - 1 - y, dy = x;
                break;
            case 7:
                dx = h - 1 - y, dy = w - 1 - x;
                break;
            case 8:
                dx = y, dy = w - 1 - x;
                break;
            default:
                dx = x, dy = y;
                break;
            }
            bad += memcmp(src + ((size_t)y * w + x) * 3,
                          dst + ((size_t)dy * dw + dx) * 3, 3) != 0;
        }
    return bad;
}

/* ---- good input ------------------------------------------------------------- */

static void test_jpeg_good(detfeed_codec *c)
{
    enum { W = 37, H = 23 };
    uint8_t img[W * H * 3];
    random_bgr(img, W, H, 1);
    const int subs[] = {TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_440, TJSAMP_411};
    for (size_t s = 0; s < sizeof subs / sizeof subs[0]; s++) {
        buf j = make_jpeg(img, W, H, TJPF_BGR, subs[s], 90);
        write_bytes("good.jpg", j.p, j.n);
        int w = 0, h = 0, tw, th;
        uint8_t *px = decode_ok(c, "good.jpg", &w, &h);
        uint8_t *ref = tj_bgr(&j, &tw, &th);
        CHECK(w == W && h == H && ref != NULL);
        /* Exactly TurboJPEG's BGR, and close to what was encoded. */
        CHECK(px && ref && memcmp(px, ref, sizeof img) == 0);
        long err = 0;
        for (size_t i = 0; px && i < sizeof img; i++)
            err += abs(px[i] - img[i]);
        if (!CHECK(px && err < (long)sizeof img * 6))
            fprintf(stderr, "  subsampling %d: mean error %.2f\n", subs[s],
                    (double)err / sizeof img);
        CHECK_INT(detfeed_codec_probe_file(c, path_of("good.jpg"), &w, &h), 0);
        CHECK(w == W && h == H);
        /* The same bytes from memory. */
        uint8_t *mem = NULL;
        CHECK_INT(detfeed_codec_decode(c, j.p, j.n, "mem.jpg", &mem, &w, &h), 0);
        CHECK(mem && px && memcmp(mem, px, sizeof img) == 0);
        detfeed_free(mem);
        detfeed_free(px);
        free(ref);
        free(j.p);
    }

    /* Grayscale expands to B = G = R. */
    uint8_t gray[W * H];
    for (int i = 0; i < W * H; i++)
        gray[i] = (uint8_t)(i * 3);
    buf j = make_jpeg(gray, W, H, TJPF_GRAY, TJSAMP_GRAY, 95);
    write_bytes("gray.jpg", j.p, j.n);
    int w, h;
    uint8_t *px = decode_ok(c, "gray.jpg", &w, &h);
    int bad = 0;
    for (int i = 0; px && i < W * H; i++)
        bad += px[3 * i] != px[3 * i + 1] || px[3 * i] != px[3 * i + 2];
    CHECK(px && w == W && h == H && bad == 0);
    detfeed_free(px);
    free(j.p);
}

/* All eight orientations, both byte orders, colour and gray, odd sizes. */
static void test_orientation(detfeed_codec *c)
{
    const int sizes[][2] = {{37, 23}, {1, 9}, {16, 1}};
    for (size_t s = 0; s < 3; s++) {
        int W = sizes[s][0], H = sizes[s][1];
        uint8_t *img = malloc((size_t)W * H * 3);
        random_bgr(img, W, H, 7);
        for (int gray = 0; gray < 2; gray++) {
            buf j = gray ? make_jpeg(img, W, H, TJPF_GRAY, TJSAMP_GRAY, 90)
                         : make_jpeg(img, W, H, TJPF_BGR, TJSAMP_420, 90);
            int bw, bh;
            uint8_t *base = tj_bgr(&j, &bw, &bh);
            for (int le = 0; le < 2; le++)
                for (int o = 0; o <= 9; o++) {
                    uint8_t tiff[26];
                    size_t n = tiff_orientation(tiff, o, le);
                    buf e = splice_app1(&j, tiff, n);
                    write_bytes("o.jpg", e.p, e.n);
                    int w = 0, h = 0;
                    uint8_t *px = decode_ok(c, "o.jpg", &w, &h);
                    int swap = o >= 5 && o <= 8;
                    CHECK(w == (swap ? H : W) && h == (swap ? W : H));
                    if (px && base &&
                        !CHECK_INT(orientation_mismatches(base, W, H, px, o), 0))
                        fprintf(stderr, "  %dx%d gray %d le %d orientation %d\n", W, H,
                                gray, le, o);
                    int pw = 0, ph = 0;
                    CHECK_INT(detfeed_codec_probe_file(c, path_of("o.jpg"), &pw, &ph),
                              0);
                    CHECK(pw == w && ph == h);
                    detfeed_free(px);
                    free(e.p);
                }
            free(base);
            free(j.p);
        }
        free(img);
    }
}

static void test_png_good(detfeed_codec *c)
{
    int w, h;
    uint8_t *px;
    /* 16-bit gray: the high byte. */
    /* (libspng's encoder takes 16-bit samples in host byte order) */
    uint16_t g16[3 * 2] = {0x1234, 0xffff, 0x00ff, 0x8000, 0x7fff, 0x0102};
    buf b = make_png(3, 2, 16, SPNG_COLOR_TYPE_GRAYSCALE, g16, sizeof g16, NULL, NULL);
    write_bytes("g16.png", b.p, b.n);
    px = decode_ok(c, "g16.png", &w, &h);
    const uint8_t want16[6] = {0x12, 0xff, 0x00, 0x80, 0x7f, 0x01};
    for (int i = 0; px && i < 6; i++)
        CHECK(px[3 * i] == want16[i] && px[3 * i + 1] == want16[i] &&
              px[3 * i + 2] == want16[i]);
    detfeed_free(px);
    free(b.p);

    /* 2-bit gray: 0, 85, 170, 255. */
    uint8_t g2[1] = {0x1b}; /* 00 01 10 11 */
    b = make_png(4, 1, 2, SPNG_COLOR_TYPE_GRAYSCALE, g2, 1, NULL, NULL);
    write_bytes("g2.png", b.p, b.n);
    px = decode_ok(c, "g2.png", &w, &h);
    for (int i = 0; px && i < 4; i++)
        CHECK_INT(px[3 * i + 1], 85 * i);
    detfeed_free(px);
    free(b.p);

    /* RGBA 8-bit: alpha dropped, BGR order. */
    uint8_t rgba[8] = {10, 20, 30, 0, 40, 50, 60, 255};
    b = make_png(2, 1, 8, SPNG_COLOR_TYPE_TRUECOLOR_ALPHA, rgba, 8, NULL, NULL);
    write_bytes("rgba.png", b.p, b.n);
    px = decode_ok(c, "rgba.png", &w, &h);
    CHECK(px && w == 2 && h == 1 && px[0] == 30 && px[1] == 20 && px[2] == 10 &&
          px[3] == 60 && px[5] == 40);
    detfeed_free(px);
    free(b.p);

    /* Palette, 1-bit. */
    struct spng_plte plte = {.n_entries = 2};
    plte.entries[0] = (struct spng_plte_entry){1, 2, 3, 255};
    plte.entries[1] = (struct spng_plte_entry){200, 100, 50, 255};
    uint8_t idx[1] = {0x40}; /* 0 1 0 0 */
    b = make_png(3, 1, 1, SPNG_COLOR_TYPE_INDEXED, idx, 1, &plte, NULL);
    write_bytes("pal.png", b.p, b.n);
    px = decode_ok(c, "pal.png", &w, &h);
    CHECK(px && px[0] == 3 && px[2] == 1 && px[3] == 50 && px[4] == 100 &&
          px[5] == 200);
    detfeed_free(px);
    free(b.p);

    /* eXIf orientation 6: 3x2 becomes 2x3, rotated clockwise. */
    uint8_t rgb[3 * 2 * 3];
    for (int i = 0; i < 18; i++)
        rgb[i] = (uint8_t)(i * 13);
    uint8_t tiff[26];
    struct spng_exif exif = {tiff_orientation(tiff, 6, 1), (char *)tiff};
    b = make_png(3, 2, 8, SPNG_COLOR_TYPE_TRUECOLOR, rgb, sizeof rgb, NULL, &exif);
    write_bytes("exif.png", b.p, b.n);
    px = decode_ok(c, "exif.png", &w, &h);
    CHECK(w == 2 && h == 3);
    uint8_t bgr[18];
    memcpy(bgr, rgb, 18);
    for (int i = 0; i < 6; i++) {
        bgr[3 * i] = rgb[3 * i + 2];
        bgr[3 * i + 2] = rgb[3 * i];
    }
    if (px)
        CHECK_INT(orientation_mismatches(bgr, 3, 2, px, 6), 0);
    CHECK_INT(detfeed_codec_probe_file(c, path_of("exif.png"), &w, &h), 0);
    CHECK(w == 2 && h == 3);
    detfeed_free(px);
    free(b.p);
}

/* ---- bad input ---------------------------------------------------------------- */

static void test_bad_files(detfeed_codec *c)
{
    write_bytes("empty.jpg", "", 0);
    expect_fail(c, "empty.jpg", DETFEED_ECORRUPT, "empty");
    expect_probe_fail(c, "empty.jpg", DETFEED_ECORRUPT, "empty");

    mkdir(path_of("x.jpg"), 0700);
    expect_fail(c, "x.jpg", DETFEED_EIO, "not a regular file");
    expect_probe_fail(c, "x.jpg", DETFEED_EIO, "not a regular file");

    CHECK_INT(symlink(path_of("nowhere.jpg"), path_of("dangling.jpg")), 0);
    expect_fail(c, "dangling.jpg", DETFEED_EIO, "cannot open");
    expect_probe_fail(c, "dangling.jpg", DETFEED_EIO, "cannot open");

    write_bytes("text.png", "hello, this is not an image\n", 28);
    expect_fail(c, "text.png", DETFEED_EFORMAT,
                "not an image of a format detfeed reads");
    expect_probe_fail(c, "text.png", DETFEED_EFORMAT,
                      "not an image of a format detfeed reads");
    write_bytes("soi.jpg", "\xff\xd8", 2);
    expect_fail(c, "soi.jpg", DETFEED_EFORMAT,
                "not an image of a format detfeed reads");

    buf none = {(uint8_t *)"", 0};
    expect_mem_fail(c, &none, "nothing.jpg", DETFEED_ECORRUPT, "empty");
    uint8_t *px = (uint8_t *)1;
    int w, h;
    CHECK_INT(detfeed_codec_decode(NULL, "x", 1, "n", &px, &w, &h), DETFEED_EINVAL);
    CHECK(px == NULL);
    CHECK_INT(detfeed_codec_decode(c, NULL, 5, "n", &px, &w, &h), DETFEED_EINVAL);
    CHECK_INT(detfeed_codec_decode_file(c, NULL, &px, &w, &h), DETFEED_EINVAL);
    CHECK_INT(detfeed_codec_probe_file(c, path_of("good.jpg"), NULL, &h),
              DETFEED_EINVAL);
}

static void test_bad_jpeg(detfeed_codec *c)
{
    enum { W = 64, H = 48 };
    uint8_t img[W * H * 3];
    random_bgr(img, W, H, 3);
    buf j = make_jpeg(img, W, H, TJPF_BGR, TJSAMP_420, 90);

    /* Cut at several points: in the header, in the data, before EOI. */
    const size_t cuts[] = {3, 20, 200, j.n / 2, j.n * 9 / 10, j.n - 2};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "cut%zu.jpg", cuts[i]);
        write_bytes(name, j.p, cuts[i]);
        expect_fail(c, name, DETFEED_ECORRUPT, "JPEG");
        buf b = {j.p, cuts[i]};
        expect_mem_fail(c, &b, name, DETFEED_ECORRUPT, "JPEG");
    }

    /* Garbage in the entropy-coded data: a run of 0xFF 0x00 (all one bits,
     * no valid Huffman code), and a stray marker. */
    size_t sos = 0;
    for (size_t i = 2; i + 1 < j.n && !sos; i++)
        if (j.p[i] == 0xff && j.p[i + 1] == 0xda)
            sos = i;
    CHECK(sos > 0 && sos + 200 < j.n);
    uint8_t *g = malloc(j.n);
    memcpy(g, j.p, j.n);
    for (size_t i = sos + 100; i < sos + 164; i += 2) {
        g[i] = 0xff;
        g[i + 1] = 0x00;
    }
    write_bytes("garbage.jpg", g, j.n);
    expect_fail(c, "garbage.jpg", DETFEED_ECORRUPT, "Corrupt JPEG data");
    memcpy(g, j.p, j.n);
    g[sos + 120] = 0xff;
    g[sos + 121] = 0xc4;
    write_bytes("marker.jpg", g, j.n);
    expect_fail(c, "marker.jpg", DETFEED_ECORRUPT, "JPEG");
    free(g);

    /* CMYK (TurboJPEG writes it as YCCK). */
    uint8_t cmyk[W * H * 4];
    for (size_t i = 0; i < sizeof cmyk; i++)
        cmyk[i] = (uint8_t)(i * 5);
    buf k = make_jpeg(cmyk, W, H, TJPF_CMYK, TJSAMP_444, 90);
    write_bytes("cmyk.jpg", k.p, k.n);
    expect_fail(c, "cmyk.jpg", DETFEED_ENOTSUPPORTED, "CMYK");
    expect_probe_fail(c, "cmyk.jpg", DETFEED_ENOTSUPPORTED, "CMYK");
    free(k.p);

    /* A frame header declaring 65500 x 65500: refused from the header. */
    uint8_t *big = malloc(j.n);
    memcpy(big, j.p, j.n);
    size_t sof = 0;
    for (size_t i = 2; i + 8 < j.n && !sof; i++)
        if (big[i] == 0xff && big[i + 1] == 0xc0)
            sof = i;
    CHECK(sof > 0);
    big[sof + 5] = 0xff, big[sof + 6] = 0xdc; /* height 65500 */
    big[sof + 7] = 0xff, big[sof + 8] = 0xdc; /* width 65500 */
    write_bytes("huge.jpg", big, j.n);
    expect_fail(c, "huge.jpg", DETFEED_ELIMIT, "65500x65500");
    expect_probe_fail(c, "huge.jpg", DETFEED_ELIMIT, "65500x65500");
    free(big);

    /* Limits set lower than the image. */
    write_bytes("good64.jpg", j.p, j.n);
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_WIDTH, 63), 0);
    expect_fail(c, "good64.jpg", DETFEED_ELIMIT, "limit");
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_WIDTH, 32768), 0);
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_PIXELS, W * H - 1), 0);
    expect_probe_fail(c, "good64.jpg", DETFEED_ELIMIT, "limit");
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_PIXELS, 1u << 28), 0);
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_FILE, j.n - 1), 0);
    expect_fail(c, "good64.jpg", DETFEED_ELIMIT, "file size limit");
    expect_mem_fail(c, &j, "mem64.jpg", DETFEED_ELIMIT, "file size limit");
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_FILE, 1u << 30), 0);

    /* After failures the codec still decodes, and success clears the
     * message. */
    int w, h;
    uint8_t *px = decode_ok(c, "good64.jpg", &w, &h);
    CHECK(px && w == W && h == H);
    detfeed_free(px);
    free(j.p);
}

/* A PNG chunk with its CRC, appended at p; returns the bytes written. */
static size_t put_chunk(uint8_t *p, const char *type, const uint8_t *data, uint32_t n)
{
    put32(p, n, 0);
    memcpy(p + 4, type, 4);
    if (n)
        memcpy(p + 8, data, n);
    put32(p + 8 + n, crc32_png(p + 4, 4 + n), 0);
    return 12 + n;
}

static void test_bad_png(detfeed_codec *c)
{
    uint8_t rgb[16 * 16 * 3];
    for (size_t i = 0; i < sizeof rgb; i++)
        rgb[i] = (uint8_t)(i * 7);
    buf b = make_png(16, 16, 8, SPNG_COLOR_TYPE_TRUECOLOR, rgb, sizeof rgb, NULL, NULL);
    uint8_t *idat = NULL;
    for (size_t i = 0; i + 4 < b.n && !idat; i++)
        if (memcmp(b.p + i, "IDAT", 4) == 0)
            idat = b.p + i;
    CHECK(idat != NULL);
    uint8_t *bad = malloc(b.n);
    memcpy(bad, b.p, b.n);
    bad[idat - b.p + 6] ^= 0x10; /* data changed, CRC not */
    write_bytes("crc.png", bad, b.n);
    expect_fail(c, "crc.png", DETFEED_ECORRUPT, "PNG");
    memcpy(bad, b.p, b.n);
    bad[b.n - 1] ^= 1; /* IEND's CRC */
    write_bytes("iendcrc.png", bad, b.n);
    expect_fail(c, "iendcrc.png", DETFEED_ECORRUPT, "CRC");
    free(bad);
    const size_t cuts[] = {8, 20, 40, b.n / 2, b.n - 12, b.n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "cut%zu.png", cuts[i]);
        write_bytes(name, b.p, cuts[i]);
        expect_fail(c, name, DETFEED_ECORRUPT, "PNG");
    }
    free(b.p);

    /* IHDR declaring 100000 x 100000, with a correct CRC: refused from the
     * header (the file has nothing else). */
    uint8_t png[64];
    memcpy(png, "\x89PNG\r\n\x1a\n", 8);
    uint8_t ihdr[13] = {0};
    put32(ihdr, 100000, 0);
    put32(ihdr + 4, 100000, 0);
    ihdr[8] = 8;
    ihdr[9] = 2;
    size_t n = 8 + put_chunk(png + 8, "IHDR", ihdr, 13);
    write_bytes("huge.png", png, n);
    expect_fail(c, "huge.png", DETFEED_ELIMIT, "100000x100000");
    expect_probe_fail(c, "huge.png", DETFEED_ELIMIT, "100000x100000");
    /* The same header with IEND after it: still the limit first. */
    n += put_chunk(png + n, "IEND", NULL, 0);
    buf m = {png, n};
    expect_mem_fail(c, &m, "huge-mem.png", DETFEED_ELIMIT, "limit");
}

/* Random damage must never crash (run it under ASan): every outcome is
 * a success with a sane size, or a failure with no pixels and a message
 * naming the input. */
static void test_fuzz(detfeed_codec *c)
{
    enum { W = 24, H = 16 };
    uint8_t img[W * H * 3];
    random_bgr(img, W, H, 9);
    buf j = make_jpeg(img, W, H, TJPF_BGR, TJSAMP_420, 80);
    buf p = make_png(W, H, 8, SPNG_COLOR_TYPE_TRUECOLOR, img, sizeof img, NULL, NULL);
    uint64_t rng = 77;
    int insane = 0, unnamed = 0, resized = 0;
    for (int it = 0; it < 3000; it++) {
        const buf *src = it % 3 == 2 ? &p : &j;
        buf b;
        uint8_t tiff[96];
        if (it % 3 == 1) {
            /* A random TIFF block after an orientation-6 header. */
            size_t n = tiff_orientation(tiff, 6, (int)(tu_rand(&rng) & 1));
            size_t len = 8 + tu_rand(&rng) % (sizeof tiff - 8);
            for (size_t i = 8; i < len; i++)
                tiff[i] = (uint8_t)tu_rand(&rng);
            (void)n;
            b = splice_app1(src, tiff, len);
        } else {
            b.n = src->n;
            b.p = malloc(b.n);
            memcpy(b.p, src->p, b.n);
            int flips = 1 + (int)(tu_rand(&rng) % 4);
            for (int f = 0; f < flips; f++)
                b.p[tu_rand(&rng) % b.n] = (uint8_t)tu_rand(&rng);
            if (tu_rand(&rng) % 4 == 0)
                b.n = 1 + tu_rand(&rng) % b.n;
        }
        uint8_t *px = (uint8_t *)1;
        int w = 0, h = 0;
        int rc = detfeed_codec_decode(c, b.p, b.n, "fuzz-input", &px, &w, &h);
        if (rc == 0) {
            /* A damaged frame header can give another size, decoded. */
            if (!(px != NULL && w > 0 && h > 0 && w <= 65535 && h <= 65535))
                insane++;
            else if (!((w == W && h == H) || (w == H && h == W)))
                resized++;
            detfeed_free(px);
        } else {
            insane += px != NULL;
            unnamed += strstr(detfeed_codec_last_error(c), "fuzz-input") == NULL;
        }
        /* The probe reads files piece by piece: its own code path. */
        if (it % 2 == 0) {
            write_bytes("fuzz.img", b.p, b.n);
            rc = detfeed_codec_probe_file(c, path_of("fuzz.img"), &w, &h);
            if (rc == 0)
                insane += !(w > 0 && h > 0 && w <= 65535 && h <= 65535);
            else
                unnamed += strstr(detfeed_codec_last_error(c), "fuzz.img") == NULL;
        }
        free(b.p);
    }
    CHECK_INT(insane, 0);
    CHECK_INT(unnamed, 0);
    printf("fuzz: 3000 damaged inputs, %d decoded to another size\n", resized);
    free(j.p);
    free(p.p);
}

int main(void)
{
    if (!tu_temp_dir(dir, sizeof dir, "decode"))
        return tu_finish("test_decode");
    detfeed_codec *c = NULL;
    CHECK_INT(detfeed_codec_create(&c, 0), 0);
    test_jpeg_good(c);
    test_orientation(c);
    test_png_good(c);
    test_bad_files(c);
    test_bad_jpeg(c);
    test_bad_png(c);
    test_fuzz(c);
    detfeed_codec_destroy(c);
    CHECK(tu_remove_tree(dir));
    return tu_finish("test_decode");
}
