/*
 * test_jp2.c - the JPEG 2000 decoder on files OpenJPEG encodes here (the
 * library detfeed links): lossless RGB is the image exactly, as B, G, R;
 * gray is repeated; 12 and 16 bits are shifted to their top 8; sYCC goes
 * through OpenCV's YUV to BGR; a bare codestream (J2K) of one component
 * fails as in OpenCV; the limits come before the decode; the probe; and,
 * for the sanitizers, every cut of a few files and seeded mutations
 * (refused or decoded, never a crash). The bytes against cv2:
 * tests/oracle/test_formats_oracle.py.
 */
#include "testutil.h"

#include <openjpeg.h>
#include <stdlib.h>
#include <string.h>

static char dir[512];

typedef struct buf {
    uint8_t *p;
    size_t n, cap, pos; /* pos: the encoder's place */
} buf;

static OPJ_SIZE_T out_write(void *src, OPJ_SIZE_T n, void *user)
{
    buf *b = user;
    if (b->pos + n > b->cap) {
        b->cap = (b->pos + n) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->pos, src, n);
    b->pos += n;
    b->n = b->pos > b->n ? b->pos : b->n;
    return n;
}

static OPJ_OFF_T out_skip(OPJ_OFF_T n, void *user)
{
    uint8_t zero[64] = {0};
    for (OPJ_OFF_T k = 0; k < n; k += 64)
        out_write(zero, (OPJ_SIZE_T)(n - k < 64 ? n - k : 64), user);
    return n;
}

static OPJ_BOOL out_seek(OPJ_OFF_T n, void *user)
{
    buf *b = user;
    if ((size_t)n > b->n)
        return OPJ_FALSE;
    b->pos = (size_t)n;
    return OPJ_TRUE;
}

/* A lossless JPEG 2000 (JP2, or a bare codestream) of w x h samples of
 * `comps` components of `prec` bits, sample(c, i) as given. */
static buf encode_cs(int w, int h, int comps, int prec, bool j2k,
                     int (*sample)(int c, int i), OPJ_COLOR_SPACE cs)
{
    opj_image_cmptparm_t p[4];
    memset(p, 0, sizeof p);
    for (int c = 0; c < comps; c++)
        p[c] = (opj_image_cmptparm_t){.dx = 1,
                                      .dy = 1,
                                      .w = (OPJ_UINT32)w,
                                      .h = (OPJ_UINT32)h,
                                      .prec = (OPJ_UINT32)prec};
    opj_image_t *im = opj_image_create((OPJ_UINT32)comps, p, cs);
    im->x1 = (OPJ_UINT32)w, im->y1 = (OPJ_UINT32)h;
    for (int c = 0; c < comps; c++)
        for (int i = 0; i < w * h; i++)
            im->comps[c].data[i] = sample(c, i);
    opj_cparameters_t params;
    opj_set_default_encoder_parameters(&params);
    params.numresolution = 3;
    opj_codec_t *codec = opj_create_compress(j2k ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
    buf b = {0};
    opj_stream_t *s = opj_stream_default_create(OPJ_FALSE);
    opj_stream_set_user_data(s, &b, NULL);
    opj_stream_set_write_function(s, out_write);
    opj_stream_set_skip_function(s, out_skip);
    opj_stream_set_seek_function(s, out_seek);
    CHECK(opj_setup_encoder(codec, &params, im) && opj_start_compress(codec, im, s) &&
          opj_encode(codec, s) && opj_end_compress(codec, s));
    opj_stream_destroy(s);
    opj_destroy_codec(codec);
    opj_image_destroy(im);
    return b;
}

static buf encode(int w, int h, int comps, int prec, bool j2k,
                  int (*sample)(int c, int i))
{
    return encode_cs(w, h, comps, prec, j2k, sample,
                     comps >= 3 ? OPJ_CLRSPC_SRGB : OPJ_CLRSPC_GRAY);
}

enum { W = 19, H = 13 };

static int rgb(int c, int i)
{
    return (i * (7 + 13 * c) + 50 * c) & 255;
}

static int deep(int c, int i)
{
    return (i * 977 + 20011 * c) & 4095;
}

static int word(int c, int i)
{
    return (i * 2113 + 9001 * c) & 65535;
}

static int decode(detfeed_codec *c, const buf *b, const char *name, uint8_t **px,
                  int *w, int *h)
{
    *px = NULL;
    return detfeed_codec_decode(c, b->p, b->n, name, px, w, h);
}

static void expect(detfeed_codec *c, const buf *b, int (*sample)(int, int), int comps,
                   int shift, const char *name)
{
    uint8_t *px;
    int w, h;
    if (!CHECK_INT(decode(c, b, name, &px, &w, &h), 0)) {
        fprintf(stderr, "  %s: %s\n", name, detfeed_codec_last_error(c));
        return;
    }
    CHECK(w == W && h == H);
    int bad = 0;
    for (int i = 0; i < W * H; i++)
        for (int k = 0; k < 3; k++) {
            int comp = comps >= 3 ? 2 - k : 0;
            bad += px[3 * i + k] != (uint8_t)(sample(comp, i) >> shift);
        }
    if (!CHECK_INT(bad, 0))
        fprintf(stderr, "  %s\n", name);
    detfeed_free(px);
}

static void test_lossless(detfeed_codec *c)
{
    buf b = encode(W, H, 3, 8, false, rgb);
    expect(c, &b, rgb, 3, 0, "rgb.jp2");
    free(b.p);
    b = encode(W, H, 4, 8, true, rgb); /* a bare codestream of 4: R, G, B */
    expect(c, &b, rgb, 4, 0, "rgba.j2k");
    free(b.p);
    b = encode(W, H, 1, 8, false, rgb);
    expect(c, &b, rgb, 1, 0, "gray.jp2");
    free(b.p);
    b = encode(W, H, 3, 12, false, deep);
    expect(c, &b, deep, 3, 4, "deep.jp2");
    free(b.p);
    b = encode(W, H, 1, 16, false, word);
    expect(c, &b, word, 1, 8, "word.jp2");
    free(b.p);
    /* one component without a colour space: OpenCV's sRGB needs three */
    b = encode(W, H, 1, 8, true, rgb);
    uint8_t *px;
    int w, h;
    CHECK_INT(decode(c, &b, "gray.j2k", &px, &w, &h), DETFEED_ECORRUPT);
    CHECK(strstr(detfeed_codec_last_error(c), "fewer than 3 components") != NULL);
    free(b.p);
}

static int clamp8(int v)
{
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* sYCC: Y, U, V through OpenCV's 8-bit YUV2BGR (B = Y + 2.032 U,
 * G = Y - 0.395 U - 0.581 V, R = Y + 1.140 V in 14-bit fixed point). */
static void test_sycc(detfeed_codec *c)
{
    buf b = encode_cs(W, H, 3, 8, false, rgb, OPJ_CLRSPC_SYCC);
    uint8_t *px;
    int w, h;
    if (CHECK_INT(decode(c, &b, "sycc.jp2", &px, &w, &h), 0)) {
        int bad = 0;
        for (int i = 0; i < W * H; i++) {
            int y = rgb(0, i), u = rgb(1, i) - 128, v = rgb(2, i) - 128;
            bad += px[3 * i] != clamp8(y + ((u * 33292 + 8192) >> 14));
            bad += px[3 * i + 1] != clamp8(y + ((u * -6472 + v * -9519 + 8192) >> 14));
            bad += px[3 * i + 2] != clamp8(y + ((v * 18678 + 8192) >> 14));
        }
        CHECK_INT(bad, 0);
        detfeed_free(px);
    } else {
        fprintf(stderr, "  sycc.jp2: %s\n", detfeed_codec_last_error(c));
    }
    free(b.p);
}

static void test_limits_and_probe(detfeed_codec *c)
{
    buf b = encode(W, H, 3, 8, false, rgb);
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_WIDTH, 10), 0);
    uint8_t *px;
    int w, h;
    CHECK_INT(decode(c, &b, "wide.jp2", &px, &w, &h), DETFEED_ELIMIT);
    CHECK(px == NULL);
    CHECK_INT(detfeed_codec_set_limit(c, DETFEED_LIMIT_MAX_WIDTH, 32768), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/a.jp2", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL && fwrite(b.p, 1, b.n, f) == b.n);
    if (f)
        fclose(f);
    CHECK_INT(detfeed_codec_probe_file(c, path, &w, &h), 0);
    CHECK(w == W && h == H);
    free(b.p);
}

static void test_damage(detfeed_codec *c)
{
    buf files[2] = {encode(W, H, 3, 8, false, rgb), encode(W, H, 1, 16, true, word)};
    uint64_t rng = 11;
    int counts[2] = {0, 0};
    const char *const names[2] = {"cut.jp2", "m.jp2"};
    for (int v = 0; v < 4; v += 3) { /* a wheel's stack and Debian's */
        CHECK_INT(detfeed_codec_set_opencv(c, (detfeed_cv_version)v), 0);
        for (int k = 0; k < 2; k++)
            tu_decode_damaged(c, files[k].p, files[k].n, TU_SANITIZED ? 5 : 1,
                              TU_SANITIZED ? 150 : 600, names, &rng, counts);
    }
    CHECK(counts[0] > 0 && counts[1] > 0);
    CHECK_INT(detfeed_codec_set_opencv(c, DETFEED_CV_5_1), 0);
    free(files[0].p);
    free(files[1].p);
}

int main(void)
{
    if (!tu_temp_dir(dir, sizeof dir, "jp2"))
        return tu_finish("test_jp2");
    detfeed_codec *c = NULL;
    CHECK_INT(detfeed_codec_create(&c, 0), 0);
    test_lossless(c);
    test_sycc(c);
    test_limits_and_probe(c);
    test_damage(c);
    detfeed_codec_destroy(c);
    CHECK(tu_remove_tree(dir));
    return tu_finish("test_jp2");
}
