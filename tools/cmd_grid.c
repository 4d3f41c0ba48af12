/*
 * cmd_grid.c - `detfeed grid`: one augmented batch drawn as a picture, with
 * its boxes, class names and keypoints, like the train-batch images people
 * look at to check their labels.
 */
#include "cli.h"
#include "detfeed_img.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A 5x7 font: digits, capitals and a little punctuation; each glyph is
 * seven rows of five bits, the leftmost pixel in bit 4. Lower case is drawn
 * in capitals; anything else as '?'. */
static const struct {
    char c;
    uint8_t rows[7];
} font[] = {
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}},
    {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}},
    {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}},
    {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}},
    {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}},
    {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'A', {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'B', {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E}},
    {'C', {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}},
    {'D', {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C}},
    {'E', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}},
    {'F', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10}},
    {'G', {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}},
    {'H', {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'I', {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}},
    {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}},
    {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}},
    {'M', {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}},
    {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
    {'O', {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
    {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
    {'Q', {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}},
    {'R', {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}},
    {'S', {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}},
    {'T', {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
    {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04}},
    {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}},
    {'X', {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11}},
    {'Y', {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}},
    {'Z', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F}},
    {' ', {0, 0, 0, 0, 0, 0, 0}},
    {'-', {0, 0, 0, 0x1F, 0, 0, 0}},
    {'_', {0, 0, 0, 0, 0, 0, 0x1F}},
    {'.', {0, 0, 0, 0, 0, 0x0C, 0x0C}},
    {':', {0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0}},
    {'(', {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}},
    {')', {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}},
    {'/', {0, 0x01, 0x02, 0x04, 0x08, 0x10, 0}},
    {'?', {0x0E, 0x11, 0x01, 0x02, 0x04, 0, 0x04}},
};

typedef struct canvas {
    uint8_t *px; /* BGR */
    int w, h;
} canvas;

static void put(canvas *c, int x, int y, const uint8_t bgr[3])
{
    if (x >= 0 && y >= 0 && x < c->w && y < c->h)
        memcpy(c->px + ((size_t)y * c->w + x) * 3, bgr, 3);
}

static void fill(canvas *c, int x0, int y0, int x1, int y1, const uint8_t bgr[3])
{
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++)
            put(c, x, y, bgr);
}

static void rect(canvas *c, int x0, int y0, int x1, int y1, int t, const uint8_t bgr[3])
{
    fill(c, x0, y0, x1 + 1, y0 + t, bgr);
    fill(c, x0, y1 - t + 1, x1 + 1, y1 + 1, bgr);
    fill(c, x0, y0, x0 + t, y1 + 1, bgr);
    fill(c, x1 - t + 1, y0, x1 + 1, y1 + 1, bgr);
}

static const uint8_t *glyph(char ch)
{
    ch = (char)toupper((unsigned char)ch);
    for (size_t i = 0; i < sizeof font / sizeof font[0]; i++)
        if (font[i].c == ch)
            return font[i].rows;
    return glyph('?');
}

/* Text on a filled background, `s` pixels per font pixel, at (x, y). */
static void text(canvas *c, int x, int y, const char *str, int s, const uint8_t bg[3])
{
    static const uint8_t white[3] = {255, 255, 255};
    int n = (int)strlen(str);
    fill(c, x, y, x + n * 6 * s + s, y + 9 * s, bg);
    for (int i = 0; i < n; i++) {
        const uint8_t *g = glyph(str[i]);
        for (int r = 0; r < 7; r++)
            for (int b = 0; b < 5; b++)
                if (g[r] >> (4 - b) & 1)
                    fill(c, x + s + (i * 6 + b) * s, y + s + r * s,
                         x + s + (i * 6 + b + 1) * s, y + s + (r + 1) * s, white);
    }
}

/* A colour per class, from a fixed palette. */
static void class_colour(int k, uint8_t bgr[3])
{
    static const uint8_t pal[10][3] = {
        {56, 56, 255}, {151, 157, 255}, {31, 112, 255}, {29, 178, 255}, {49, 210, 207},
        {10, 249, 72}, {23, 204, 146},  {134, 219, 61}, {211, 188, 52}, {255, 149, 0}};
    memcpy(bgr, pal[(k < 0 ? -k : k) % 10], 3);
}

/* Image i of a u8 batch (planar RGB), resized by f, at (ox, oy). */
static int paste(canvas *c, const uint8_t *planes, int w, int h, int tw, int th, int ox,
                 int oy)
{
    uint8_t *hwc = malloc((size_t)w * h * 3), *small = malloc((size_t)tw * th * 3);
    if (hwc == NULL || small == NULL) {
        free(hwc);
        free(small);
        return DETFEED_ENOMEM;
    }
    size_t plane = (size_t)w * h;
    for (size_t p = 0; p < plane; p++) {
        hwc[3 * p] = planes[2 * plane + p]; /* B from the third plane */
        hwc[3 * p + 1] = planes[plane + p];
        hwc[3 * p + 2] = planes[p];
    }
    int rc = detfeed_resize_linear(hwc, (size_t)w * 3, w, h, small, (size_t)tw * 3, tw,
                                   th, 3);
    for (int y = 0; rc == DETFEED_OK && y < th; y++)
        memcpy(c->px + ((size_t)(oy + y) * c->w + ox) * 3, small + (size_t)y * tw * 3,
               (size_t)tw * 3);
    free(hwc);
    free(small);
    return rc;
}

static void draw_labels(canvas *c, const detfeed_batch *b, const detfeed_dataset *ds,
                        int i, int tw, int th, int ox, int oy, int nkpt)
{
    int n = detfeed_batch_instances(b);
    const float *cls = detfeed_batch_cls(b), *box = detfeed_batch_bboxes(b);
    const float *idx = detfeed_batch_batch_idx(b), *kpt = detfeed_batch_keypoints(b);
    int s = tw >= 400 ? 2 : 1;
    for (int k = 0; k < n; k++) {
        if ((int)idx[k] != i)
            continue;
        uint8_t col[3];
        class_colour((int)cls[k], col);
        const float *q = box + 4 * k;
        int x0 = ox + (int)lrintf((q[0] - q[2] / 2) * tw),
            x1 = ox + (int)lrintf((q[0] + q[2] / 2) * tw);
        int y0 = oy + (int)lrintf((q[1] - q[3] / 2) * th),
            y1 = oy + (int)lrintf((q[1] + q[3] / 2) * th);
        rect(c, x0, y0, x1, y1, s, col);
        const char *name = detfeed_dataset_class_name(ds, (int)cls[k]);
        char label[48];
        if (name)
            snprintf(label, sizeof label, "%s", name);
        else
            snprintf(label, sizeof label, "%d", (int)cls[k]);
        text(c, x0, y0 - 9 * s >= oy ? y0 - 9 * s : y0, label, s, col);
        for (int j = 0; kpt && j < nkpt; j++) {
            const float *p = kpt + ((size_t)k * nkpt + j) * 3;
            int px = ox + (int)lrintf(p[0] * tw), py = oy + (int)lrintf(p[1] * th);
            if (p[2] > 0)
                fill(c, px - 2 * s, py - 2 * s, px + 2 * s + 1, py + 2 * s + 1, col);
        }
    }
}

static int draw_batch(detfeed_loader *l, const detfeed_batch *b, long max_side,
                      const char *out)
{
    int h, w, n = detfeed_batch_size(b, &h, &w), nkpt;
    int cols = (int)ceil(sqrt((double)n)), rows = (n + cols - 1) / cols;
    double f = fmin(1.0, (double)max_side / (cols * w));
    int tw = (int)(w * f), th = (int)(h * f), gap = 2;
    canvas c = {.w = cols * (tw + gap) + gap, .h = rows * (th + gap) + gap};
    c.px = malloc((size_t)c.w * c.h * 3);
    if (c.px == NULL)
        return cli_error("out of memory for a %dx%d picture", c.w, c.h);
    memset(c.px, 255, (size_t)c.w * c.h * 3);
    const detfeed_dataset *ds = detfeed_loader_dataset(l);
    detfeed_dataset_kpt_shape(ds, &nkpt, NULL);
    size_t bytes;
    detfeed_batch_images(b, &bytes);
    uint8_t *img = malloc(bytes); /* the batch may be in device memory */
    int rc = img ? detfeed_batch_copy_images(b, img, bytes) : DETFEED_ENOMEM;
    for (int i = 0; i < n && rc == DETFEED_OK; i++) {
        int ox = gap + (i % cols) * (tw + gap), oy = gap + (i / cols) * (th + gap);
        rc = paste(&c, img + (size_t)i * 3 * w * h, w, h, tw, th, ox, oy);
        if (rc == DETFEED_OK)
            draw_labels(&c, b, ds, i, tw, th, ox, oy, nkpt);
    }
    detfeed_codec *codec = NULL;
    if (rc == DETFEED_OK && (rc = detfeed_codec_create(&codec, 0)) == DETFEED_OK)
        rc = detfeed_codec_write_png(codec, out, c.px, (size_t)c.w * 3, c.w, c.h);
    int status = rc == DETFEED_OK
                     ? CLI_OK
                     : cli_error("%s", codec ? detfeed_codec_last_error(codec)
                                             : detfeed_strerror(rc));
    if (status == CLI_OK) {
        cli_skips k = cli_skips_of(l);
        cli_skips_note(&k);
        cli_verify_note(l);
        printf("wrote %s: %d images, %d instances, %dx%d; ", out, n,
               detfeed_batch_instances(b), c.w, c.h);
        cli_skips_text(stdout, &k);
        printf("\n");
    }
    detfeed_codec_destroy(codec);
    free(c.px);
    free(img);
    return status;
}

/* The settings grid takes through options of its own, or not at all. */
static const cli_owned grid_owned[] = {{DETFEED_LOADER_BATCH, "--batch"},
                                       {DETFEED_LOADER_SEED, "--seed"},
                                       {DETFEED_LOADER_IMGSZ, "--imgsz"},
                                       {DETFEED_LOADER_WORKERS, "--workers"},
                                       {DETFEED_LOADER_PREFETCH, "--prefetch"},
                                       {DETFEED_LOADER_COLOR, "--route"},
                                       {DETFEED_LOADER_OUTPUT, "--output"},
                                       {DETFEED_LOADER_AUGMENT, "--augment"},
                                       {DETFEED_LOADER_DTYPE, NULL},
                                       {DETFEED_LOADER_VALUE_SCALE, NULL}};
static const cli_set_rules grid_rules = {"grid", grid_owned,
                                         sizeof grid_owned / sizeof grid_owned[0],
                                         "it draws 8-bit images"};

int cmd_grid(int argc, char **argv)
{
    long batch = 16, imgsz = 640, seed = 0, epoch = 0, workers = 2, prefetch = 2,
         augment = 1, max_side = 1920, index = 0;
    const char *out = NULL, *set = NULL, *split = "train", *route = "worker",
               *output = NULL;
    const cli_opt opts[] = {
        {"out", CLI_STRING, &out, "FILE.png", "the picture to write (required)", 0, 0},
        {"batch", CLI_INT, &batch, "N", "images in the batch (default 16)", 1, 1024},
        {"index", CLI_INT, &index, "K", "which batch of the epoch (default 0)", 0,
         1L << 40},
        {"epoch", CLI_INT, &epoch, "E", "epoch (default 0)", 0, 1L << 31},
        {"seed", CLI_INT, &seed, "S", "seed (default 0)", 0, 1L << 62},
        {"imgsz", CLI_INT, &imgsz, "N", "image size (default 640)", 32, 8192},
        {"workers", CLI_INT, &workers, "N", "worker threads (default 2)", 1, 1024},
        {"prefetch", CLI_INT, &prefetch, "N", "batches ahead (default 2)", 1, 1024},
        {"route", CLI_STRING, &route, "R", CLI_ROUTE_HELP, 0, 0},
        {"output", CLI_STRING, &output, "O", CLI_OUTPUT_HELP, 0, 0},
        {"augment", CLI_INT, &augment, "0|1", "training (1) or validation (0)", 0, 1},
        {"split", CLI_STRING, &split, "NAME", "split of a YAML (default train)", 0, 0},
        {"set", CLI_STRING, &set, "K=V,...",
         "hyperparameters, stack, caches: mosaic=0.5,opencv=4", 0, 0},
        {"max-side", CLI_INT, &max_side, "PX", "widest picture (default 1920)", 64,
         65536},
        {0}};
    const char *usage = "detfeed grid DATA --out FILE.png [options]";
    const char *about =
        "Draws one augmented batch of DATA as a grid of images with boxes, "
        "class names and\nkeypoints, and prints what was skipped: corrupt images "
        "left out when opening and\nsamples replaced.";
    char *pos[1];
    int npos;
    int rc = cli_parse(argc, argv, opts, usage, about, pos, 1, &npos);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    if (npos != 1 || out == NULL) {
        cli_error("usage: %s", usage);
        return CLI_USAGE;
    }
    if ((rc = cli_png_out(out)) != CLI_OK)
        return rc;
    detfeed_loader *l;
    if ((rc = detfeed_loader_create(&l, 0)) != DETFEED_OK)
        return cli_error("%s", detfeed_strerror(rc));
    if (cli_route_set(l, route, output) != CLI_OK) {
        detfeed_loader_destroy(l);
        return CLI_USAGE;
    }
    int bad = detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, batch) ||
              detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, imgsz) ||
              detfeed_loader_set_int(l, DETFEED_LOADER_SEED, seed) ||
              detfeed_loader_set_int(l, DETFEED_LOADER_WORKERS, workers) ||
              detfeed_loader_set_int(l, DETFEED_LOADER_PREFETCH, prefetch) ||
              detfeed_loader_set_int(l, DETFEED_LOADER_AUGMENT, augment) ||
              detfeed_loader_set_int(l, DETFEED_LOADER_DTYPE, DETFEED_DTYPE_U8) ||
              detfeed_loader_set_split(l, split);
    int status = CLI_OK;
    if (bad) {
        cli_error("a setting is out of range (--imgsz must be a multiple of 32)");
        status = CLI_USAGE;
    }
    if (status == CLI_OK && set)
        status = cli_set_hyps(l, set, &grid_rules);
    if (status == CLI_OK)
        status = cli_epoch_below(l, epoch, "--set epochs=N sets them");
    if (status == CLI_OK && (detfeed_loader_open(l, pos[0]) != DETFEED_OK ||
                             detfeed_loader_start(l, (uint32_t)epoch) != DETFEED_OK))
        status = cli_error("%s", detfeed_loader_last_error(l));
    if (status == CLI_OK)
        cli_route_note(l);
    const detfeed_batch *b = NULL;
    for (long k = 0; status == CLI_OK && k <= index; k++) {
        if (b)
            detfeed_loader_release(l, b);
        rc = detfeed_loader_next(l, &b);
        if (rc == 1)
            status = cli_error("--index %ld: the epoch has %zu batches", index,
                               detfeed_loader_batch_count(l));
        else if (rc != DETFEED_OK)
            status = cli_error("%s", detfeed_loader_last_error(l));
    }
    if (status == CLI_OK)
        status = draw_batch(l, b, max_side, out);
    detfeed_loader_destroy(l);
    return status;
}
