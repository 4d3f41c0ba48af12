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

/* Draws rectangle r of an image, q = {x0, y0, x1, y1}, clear of the ones
 * before it (so no dot is painted over). */
static void place(tu_image *im, int placed[][4], int r)
{
    int *q = placed[r];
    do {
        q[0] = (int)(tu_rand(im->rng) % (unsigned)(im->w - 60));
        q[1] = (int)(tu_rand(im->rng) % (unsigned)(im->h - 60));
        q[2] = q[0] + 30 + (int)(tu_rand(im->rng) % 30);
        q[3] = q[1] + 30 + (int)(tu_rand(im->rng) % 30);
    } while (overlaps(placed, r, q[0], q[1], q[2], q[3]));
}

/* Keypoint j of rectangle q: near its top-left corner, then its bottom-right. */
static void kpt_at(const int q[4], int j, double *x, double *y)
{
    *x = j == 0 ? q[0] + 8.5 : q[2] - 8.5;
    *y = j == 0 ? q[1] + 8.5 : q[3] - 8.5;
}

static void fill(tu_image *im, int x0, int y0, int x1, int y1, const uint8_t c[3])
{
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++)
            memcpy(im->px + ((size_t)y * im->w + x) * 3, c, 3);
}

/* Rectangle q in class k's colour, with its keypoints as 9 x 9 dots (pure
 * pixels survive a 0.5 scale) centred on them. */
static void paint_rect(tu_image *im, int k, const int q[4])
{
    uint8_t c[3];
    colour(k, c);
    fill(im, q[0], q[1], q[2], q[3], c);
    for (int j = 0; j < NKPT; j++) {
        double kx, ky;
        kpt_at(q, j, &kx, &ky);
        kpt_colour(k, j, c);
        fill(im, (int)kx - 4, (int)ky - 4, (int)kx + 5, (int)ky + 5, c);
    }
}

/* Rectangle q of class k as a box with its keypoints (pose labels) and as
 * a polygon (segment labels). */
static void write_rect(const tu_image *im, FILE *seg, int k, const int q[4])
{
    double w = im->w, h = im->h;
    fprintf(im->labels, "%d %.9f %.9f %.9f %.9f", k, (q[0] + q[2]) / 2.0 / w,
            (q[1] + q[3]) / 2.0 / h, (q[2] - q[0]) / w, (q[3] - q[1]) / h);
    for (int j = 0; j < NKPT; j++) {
        double kx, ky;
        kpt_at(q, j, &kx, &ky);
        fprintf(im->labels, " %.9f %.9f 2", kx / w, ky / h);
    }
    fprintf(im->labels, "\n");
    fprintf(seg, "%d %.9f %.9f %.9f %.9f %.9f %.9f %.9f %.9f\n", k, q[0] / w, q[1] / h,
            q[2] / w, q[1] / h, q[2] / w, q[3] / h, q[0] / w, q[3] / h);
}

/* Image i: NRECT rectangles of classes i * NRECT + r on a plain ground. */
static void paint(tu_image *im)
{
    memset(im->px, 60, (size_t)im->w * im->h * 3);
    char p[256];
    snprintf(p, sizeof p, "%s/seg/labels/%02d.txt", root, im->index);
    FILE *seg = fopen(p, "w");
    if (!CHECK(seg != NULL))
        return;
    int placed[NRECT][4];
    for (int r = 0; r < NRECT; r++) {
        place(im, placed, r);
        paint_rect(im, im->index * NRECT + r, placed[r]);
        write_rect(im, seg, im->index * NRECT + r, placed[r]);
    }
    fclose(seg);
}

/* root: pose labels (boxes with two keypoints); seg/: the same images (a
 * link to each: a link to the folder would be resolved, as Ultralytics
 * resolves a split entry, and lead to the pose labels) with the
 * rectangles as polygons. The YAMLs have no `path`: their folders are the
 * roots. */
static void make_dataset(void)
{
    mkdir(tu_at(root, "seg"), 0755);
    mkdir(tu_at(root, "seg/labels"), 0755);
    mkdir(tu_at(root, "seg/images"), 0755);
    tu_make_dataset(root, NIMG, SIDE, 200, 2024, paint, NULL);
    for (int i = 0; i < NIMG; i++) {
        char from[32], to[32];
        snprintf(from, sizeof from, "images/%02d.png", i);
        snprintf(to, sizeof to, "seg/images/%02d.png", i);
        char *target = strdup(tu_at(root, from));
        CHECK_INT(symlink(target, tu_at(root, to)), 0);
        free(target);
    }
    char yaml[160];
    snprintf(yaml, sizeof yaml,
             "train: images\nkpt_shape: [%d, 3]\nflip_idx: [1, 0]\nnc: %d\n", NKPT,
             NIMG * NRECT);
    tu_write_text(tu_at(root, "data.yaml"), yaml);
    snprintf(yaml, sizeof yaml, "train: images\nnc: %d\n", NIMG * NRECT);
    tu_write_text(tu_at(root, "seg/data.yaml"), yaml);
}

/* The class whose colour the pixel p has, or -1. */
static int class_of(const uint8_t *p)
{
    for (int k = 0; k < NIMG * NRECT; k++) {
        uint8_t col[3];
        colour(k, col);
        if (memcmp(p, col, 3) == 0)
            return k;
    }
    return -1;
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
            int k = class_of(img + ((size_t)y * s + x) * 3);
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
static bool repeats_an_image(const detfeed_recipe *r, uint64_t index)
{
    const uint64_t *p = r->geometry.partners;
    if (!r->geometry.mosaic)
        return false;
    return p[0] == index || p[1] == index || p[2] == index || p[0] == p[1] ||
           p[0] == p[2] || p[1] == p[2];
}

/* A loader of imgsz s with colour off (so that the colours survive),
 * `degrees` and flipud 0.5; the caller sets the rest and opens it. */
static detfeed_loader *create_loader(int s, double degrees)
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, s);
    detfeed_loader_set_float(l, DETFEED_LOADER_HSV_H, 0);
    detfeed_loader_set_float(l, DETFEED_LOADER_HSV_S, 0);
    detfeed_loader_set_float(l, DETFEED_LOADER_HSV_V, 0);
    detfeed_loader_set_float(l, DETFEED_LOADER_DEGREES, degrees);
    detfeed_loader_set_float(l, DETFEED_LOADER_FLIPUD, 0.5);
    return l;
}

/* Opens l on root/rel; a failure is a failed check, and l is destroyed. */
static bool open_loader(detfeed_loader *l, const char *rel)
{
    if (CHECK_INT(detfeed_loader_open(l, tu_at(root, rel)), 0))
        return true;
    fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    detfeed_loader_destroy(l);
    return false;
}

static void run(const char *set_name, double degrees, double shear, double persp)
{
    enum { S = 320, CAP = 64 };
    detfeed_loader *l = create_loader(S, degrees);
    detfeed_loader_set_float(l, DETFEED_LOADER_SHEAR, shear);
    detfeed_loader_set_float(l, DETFEED_LOADER_PERSPECTIVE, persp);
    detfeed_loader_set_float(l, DETFEED_LOADER_MOSAIC, 0.7);
    if (!open_loader(l, "data.yaml"))
        return;
    uint8_t *img = malloc((size_t)S * S * 3);
    float cls[CAP], box[CAP * 4], kpt[CAP * NKPT * 3];
    result res = {0};
    int boxes = 0;
    int skipped = 0;
    for (int k = 0; k < 60; k++) {
        int n;
        uint64_t index = (uint64_t)(k * 7) % NIMG;
        detfeed_recipe recipe;
        if (!CHECK_INT(detfeed_loader_recipe(l, (uint32_t)k, index, &recipe), 0))
            break;
        if (repeats_an_image(&recipe, index)) {
            skipped++; /* a colour twice: a dropped copy would look misplaced */
            continue;
        }
        if (!CHECK_INT(detfeed_loader_sample(l, (uint32_t)k, index, img, CAP, &n, cls,
                                             box, kpt),
                       0))
            break;
        boxes += n;
        bool swap = recipe.flipud != recipe.fliplr;
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
    detfeed_loader *l = create_loader(S, degrees);
    if (!open_loader(l, "seg/data.yaml"))
        return;
    uint8_t *img = malloc((size_t)S * S * 3), mask[M * M];
    float cls[CAP], box[CAP * 4];
    long pixels = 0, off = 0;
    for (int k = 0; k < 40; k++) {
        int n;
        uint64_t index = (uint64_t)(k * 5) % NIMG;
        detfeed_recipe recipe;
        if (!CHECK_INT(detfeed_loader_recipe(l, (uint32_t)k, index, &recipe), 0))
            break;
        if (repeats_an_image(&recipe, index))
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
                int c = class_of(img + ((size_t)y * S + x) * 3);
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
    make_dataset();
    run("scale and translate", 0, 0, 0);
    run("rotation and shear", 30, 8, 0);
    run("perspective", 10, 0, 0.0007);
    run_masks(0);
    run_masks(25);
    CHECK(tu_remove_tree(root));
    return tu_finish("test_consistency");
}
