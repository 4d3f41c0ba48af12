/*
 * test_consistency.c - labels move with the pixels. A generated dataset
 * draws every box as a filled rectangle of its class's own colour (and
 * every keypoint as a dot of its own colour); after random recipes (mosaic,
 * rotation, shear, perspective, scale, translation, flips; colour off so
 * that the colours survive) every pixel that still has a rectangle's exact
 * colour must lie inside a box of that class, and every visible keypoint on
 * its dot, within the tolerance bilinear sampling and the flips' pixel
 * mirroring need (1.5 pixels).
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { NIMG = 24, NRECT = 3, NKPT = 2, SIDE = 200 };
#define TOL 1.5f

static char root[64];

/* Class k's colour; the class ids run over all images, so a colour names
 * one rectangle (or its copy when a mosaic repeats an image). */
static void colour(int k, uint8_t c[3])
{
    c[0] = (uint8_t)(20 + (k * 37) % 200);
    c[1] = (uint8_t)(10 + (k * 89) % 230);
    c[2] = (uint8_t)(k < 40 ? 250 : 5);
}

static void kpt_colour(int k, int j, uint8_t c[3])
{
    c[0] = (uint8_t)(3 + k), c[1] = (uint8_t)(200 + j * 20), c[2] = 128;
}

static bool overlaps(int placed[][4], int count, int x0, int y0, int x1, int y1)
{
    for (int i = 0; i < count; i++)
        if (x0 < placed[i][2] && placed[i][0] < x1 && y0 < placed[i][3] &&
            placed[i][1] < y1)
            return true;
    return false;
}

static void make_dataset(uint64_t *rng)
{
    /* seg/ holds the same images (a link) with polygon labels. */
    char seg[256], link[256];
    snprintf(seg, sizeof seg, "%s/seg", root);
    mkdir(seg, 0755);
    snprintf(seg, sizeof seg, "%s/seg/labels", root);
    mkdir(seg, 0755);
    snprintf(seg, sizeof seg, "%s/images", root);
    snprintf(link, sizeof link, "%s/seg/images", root);
    CHECK_INT(symlink(seg, link), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/images", root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/labels", root);
    mkdir(p, 0755);
    detfeed_codec *codec;
    detfeed_codec_create(&codec, 0);
    for (int i = 0; i < NIMG; i++) {
        int w = SIDE + (int)(tu_rand(rng) % 200), h = SIDE + (int)(tu_rand(rng) % 200);
        uint8_t *px = malloc((size_t)w * h * 3);
        memset(px, 60, (size_t)w * h * 3);
        snprintf(p, sizeof p, "%s/labels/im%02d.txt", root, i);
        FILE *lf = fopen(p, "w");
        snprintf(p, sizeof p, "%s/seg/labels/im%02d.txt", root, i);
        FILE *sf = fopen(p, "w"); /* the same rectangles as polygons */
        int placed[NRECT][4];
        for (int r = 0; r < NRECT; r++) {
            int k = i * NRECT + r;
            /* Rectangles do not overlap, so no dot is painted over. */
            int x0, y0, x1, y1;
            do {
                x0 = (int)(tu_rand(rng) % (unsigned)(w - 60));
                y0 = (int)(tu_rand(rng) % (unsigned)(h - 60));
                x1 = x0 + 30 + (int)(tu_rand(rng) % 30);
                y1 = y0 + 30 + (int)(tu_rand(rng) % 30);
            } while (overlaps(placed, r, x0, y0, x1, y1));
            placed[r][0] = x0, placed[r][1] = y0, placed[r][2] = x1, placed[r][3] = y1;
            uint8_t c[3];
            colour(k, c);
            for (int y = y0; y < y1; y++)
                for (int x = x0; x < x1; x++)
                    memcpy(px + ((size_t)y * w + x) * 3, c, 3);
            /* Two keypoints: 9x9 dots (pure pixels survive a 0.5 scale) inside
             * the rectangle, centred on the keypoint. */
            double kx[NKPT] = {x0 + 8.5, x1 - 8.5}, ky[NKPT] = {y0 + 8.5, y1 - 8.5};
            for (int j = 0; j < NKPT; j++) {
                kpt_colour(k, j, c);
                for (int dy = -4; dy <= 4; dy++)
                    for (int dx = -4; dx <= 4; dx++)
                        memcpy(px + ((size_t)((int)ky[j] + dy) * w + (int)kx[j] + dx) *
                                        3,
                               c, 3);
            }
            fprintf(lf, "%d %.9f %.9f %.9f %.9f", k, (x0 + x1) / 2.0 / w,
                    (y0 + y1) / 2.0 / h, (double)(x1 - x0) / w, (double)(y1 - y0) / h);
            for (int j = 0; j < NKPT; j++)
                fprintf(lf, " %.9f %.9f 2", kx[j] / w, ky[j] / h);
            fprintf(lf, "\n");
            fprintf(sf, "%d %.9f %.9f %.9f %.9f %.9f %.9f %.9f %.9f\n", k,
                    (double)x0 / w, (double)y0 / h, (double)x1 / w, (double)y0 / h,
                    (double)x1 / w, (double)y1 / h, (double)x0 / w, (double)y1 / h);
        }
        fclose(lf);
        fclose(sf);
        snprintf(p, sizeof p, "%s/images/im%02d.png", root, i);
        CHECK_INT(detfeed_codec_write_png(codec, p, px, (size_t)w * 3, w, h), 0);
        free(px);
    }
    detfeed_codec_destroy(codec);
    snprintf(p, sizeof p, "%s/data.yaml", root);
    FILE *y = fopen(p, "w");
    fprintf(y, "path: .\ntrain: images\nkpt_shape: [%d, 3]\nflip_idx: [1, 0]\nnc: %d\n",
            NKPT, NIMG * NRECT);
    fclose(y);
    snprintf(p, sizeof p, "%s/seg/data.yaml", root);
    y = fopen(p, "w");
    fprintf(y, "path: .\ntrain: images\nnc: %d\n", NIMG * NRECT);
    fclose(y);
}

typedef struct result {
    long pixels, outside, kpts, kpt_missed;
} result;

/* Checks one sample: its pixels of each class colour against its boxes.
 * `swap` says that keypoints 0 and 1 traded places (one flip, flip_idx). */
static void check_sample(const uint8_t *img, int s, int n, const float *cls,
                         const float *box, const float *kpt, bool swap, result *res)
{
    for (int y = 0; y < s; y++) {
        for (int x = 0; x < s; x++) {
            const uint8_t *p = img + ((size_t)y * s + x) * 3;
            int k = -1;
            for (int c = 0; c < NIMG * NRECT && k < 0; c++) {
                uint8_t col[3];
                colour(c, col);
                if (memcmp(p, col, 3) == 0)
                    k = c;
            }
            if (k < 0)
                continue;
            bool inside = false, listed = false;
            for (int i = 0; i < n; i++) {
                if ((int)cls[i] != k)
                    continue;
                listed = true;
                const float *b = box + 4 * i;
                float x1 = (b[0] - b[2] / 2) * s, x2 = (b[0] + b[2] / 2) * s;
                float y1 = (b[1] - b[3] / 2) * s, y2 = (b[1] + b[3] / 2) * s;
                inside |=
                    x >= x1 - TOL && x <= x2 + TOL && y >= y1 - TOL && y <= y2 + TOL;
            }
            if (!listed)
                continue; /* the box was dropped by box_candidates */
            res->pixels++;
            res->outside += !inside;
        }
    }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < NKPT; j++) {
            const float *q = kpt + ((size_t)i * NKPT + j) * 3;
            if (q[2] == 0)
                continue;
            float kx = q[0] * s, ky = q[1] * s;
            bool found = false;
            uint8_t want[3];
            kpt_colour((int)cls[i], swap ? 1 - j : j, want);
            for (int dy = -2; dy <= 2 && !found; dy++) {
                for (int dx = -2; dx <= 2 && !found; dx++) {
                    int x = (int)floorf(kx) + dx, y = (int)floorf(ky) + dy;
                    if (x >= 0 && y >= 0 && x < s && y < s)
                        found = memcmp(img + ((size_t)y * s + x) * 3, want, 3) == 0;
                }
            }
            res->kpts++;
            res->kpt_missed += !found;
        }
    }
}

/* True when a mosaic recipe uses some image twice. */
static bool repeats_an_image(const char *recipe, uint64_t index)
{
    unsigned long long p[3];
    /* The sample's own fields come before its mixup partner's. */
    const char *at = strstr(recipe, "\"partners\":["),
               *m = strstr(recipe, "\"mosaic\":");
    if (m == NULL || strncmp(m, "\"mosaic\":true", 13) != 0 || at == NULL ||
        sscanf(at, "\"partners\":[%llu,%llu,%llu]", &p[0], &p[1], &p[2]) != 3)
        return false;
    return p[0] == index || p[1] == index || p[2] == index || p[0] == p[1] ||
           p[0] == p[2] || p[1] == p[2];
}

static void run(const char *set_name, double degrees, double shear, double persp)
{
    enum { S = 320, CAP = 64 };
    char src[128];
    snprintf(src, sizeof src, "%s/data.yaml", root);
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, S);
    detfeed_loader_set_float(l, DETFEED_LOADER_HSV_H, 0);
    detfeed_loader_set_float(l, DETFEED_LOADER_HSV_S, 0);
    detfeed_loader_set_float(l, DETFEED_LOADER_HSV_V, 0);
    detfeed_loader_set_float(l, DETFEED_LOADER_DEGREES, degrees);
    detfeed_loader_set_float(l, DETFEED_LOADER_SHEAR, shear);
    detfeed_loader_set_float(l, DETFEED_LOADER_PERSPECTIVE, persp);
    detfeed_loader_set_float(l, DETFEED_LOADER_FLIPUD, 0.5);
    detfeed_loader_set_float(l, DETFEED_LOADER_MOSAIC, 0.7);
    if (!CHECK_INT(detfeed_loader_open(l, src), 0)) {
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
        detfeed_loader_destroy(l);
        return;
    }
    uint8_t *img = malloc((size_t)S * S * 3);
    float cls[CAP], box[CAP * 4], kpt[CAP * NKPT * 3];
    result res = {0};
    int boxes = 0;
    int skipped = 0;
    for (int k = 0; k < 60; k++) {
        int n;
        uint64_t index = (uint64_t)(k * 7) % NIMG;
        char recipe[1024];
        detfeed_loader_recipe_json(l, (uint32_t)k, index, recipe, sizeof recipe);
        if (repeats_an_image(recipe, index)) {
            skipped++; /* a colour twice: a dropped copy would look misplaced */
            continue;
        }
        if (!CHECK_INT(detfeed_loader_sample(l, (uint32_t)k, index, img, CAP, &n, cls,
                                             box, kpt),
                       0))
            break;
        boxes += n;
        bool swap = (strstr(recipe, "\"flipud\":true") != NULL) !=
                    (strstr(recipe, "\"fliplr\":true") != NULL);
        check_sample(img, S, n, cls, box, kpt, swap, &res);
    }
    printf("%s: %d samples with repeated tiles skipped; %d boxes, %ld box pixels (%ld "
           "outside), %ld keypoints (%ld missed)\n",
           set_name, skipped, boxes, res.pixels, res.outside, res.kpts, res.kpt_missed);
    CHECK(boxes > 100 && res.pixels > 10000 && res.kpts > 100);
    CHECK_INT(res.outside, 0);
    CHECK_INT(res.kpt_missed, 0);
    free(img);
    detfeed_loader_destroy(l);
}

/* Segment masks move with the pixels: every pixel of a rectangle's colour
 * has its instance's mask value (k + 1 for the k-th label) in the 3 x 3
 * mask cells around it (masks are at a quarter of the resolution). */
static void run_masks(double degrees)
{
    enum { S = 320, M = S / 4, CAP = 64 };
    char src[128];
    snprintf(src, sizeof src, "%s/seg/data.yaml", root);
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, S);
    detfeed_loader_set_float(l, DETFEED_LOADER_HSV_H, 0);
    detfeed_loader_set_float(l, DETFEED_LOADER_HSV_S, 0);
    detfeed_loader_set_float(l, DETFEED_LOADER_HSV_V, 0);
    detfeed_loader_set_float(l, DETFEED_LOADER_DEGREES, degrees);
    detfeed_loader_set_float(l, DETFEED_LOADER_FLIPUD, 0.5);
    if (!CHECK_INT(detfeed_loader_open(l, src), 0)) {
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
        detfeed_loader_destroy(l);
        return;
    }
    uint8_t *img = malloc((size_t)S * S * 3), mask[M * M];
    float cls[CAP], box[CAP * 4];
    long pixels = 0, off = 0;
    for (int k = 0; k < 40; k++) {
        int n;
        uint64_t index = (uint64_t)(k * 5) % NIMG;
        char recipe[1024];
        detfeed_loader_recipe_json(l, (uint32_t)k, index, recipe, sizeof recipe);
        if (repeats_an_image(recipe, index))
            continue;
        if (!CHECK_INT(detfeed_loader_sample(l, (uint32_t)k, index, img, CAP, &n, cls,
                                             box, NULL),
                       0) ||
            !CHECK_INT(
                detfeed_loader_sample_masks(l, (uint32_t)k, index, mask, NULL, NULL),
                0))
            break;
        for (int y = 0; y < S; y++) {
            for (int x = 0; x < S; x++) {
                const uint8_t *p = img + ((size_t)y * S + x) * 3;
                int c = -1;
                for (int q = 0; q < NIMG * NRECT && c < 0; q++) {
                    uint8_t col[3];
                    colour(q, col);
                    if (memcmp(p, col, 3) == 0)
                        c = q;
                }
                int j = -1;
                for (int i = 0; i < n && c >= 0; i++)
                    if ((int)cls[i] == c)
                        j = i;
                if (j < 0)
                    continue; /* not a rectangle, or its instance was dropped */
                bool found = false;
                for (int dy = -1; dy <= 1 && !found; dy++)
                    for (int dx = -1; dx <= 1 && !found; dx++) {
                        int mx = x / 4 + dx, my = y / 4 + dy;
                        found = mx >= 0 && my >= 0 && mx < M && my < M &&
                                mask[my * M + mx] == j + 1;
                    }
                pixels++;
                off += !found;
            }
        }
    }
    printf("masks, degrees %g: %ld rectangle pixels, %ld away from their mask\n",
           degrees, pixels, off);
    CHECK(pixels > 10000);
    CHECK_INT(off, 0);
    free(img);
    detfeed_loader_destroy(l);
}

int main(void)
{
    if (!tu_temp_dir(root, sizeof root, "consist"))
        return tu_finish("test_consistency");
    uint64_t rng = 2024;
    make_dataset(&rng);
    run("scale and translate", 0, 0, 0);
    run("rotation and shear", 30, 8, 0);
    run("perspective", 10, 0, 0.0007);
    run_masks(0);
    run_masks(25);
    CHECK(tu_remove_tree(root));
    return tu_finish("test_consistency");
}
