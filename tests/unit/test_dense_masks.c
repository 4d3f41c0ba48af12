/*
 * test_dense_masks.c - segment samples with more than 255 instances, whose
 * overlap masks are int32 as in Ultralytics (np.int32 past 255 segments),
 * on generated data: an image of 300 polygons, and images of 150 that
 * mosaics combine past 255.
 * - the image is indexed, not skipped; its sample has all 300 instances and
 *   an int32 mask whose values (above 255) each lie in the box of the
 *   instance they name; 8-bit samples stay 8-bit;
 * - detfeed_loader_sample_masks refuses the int32 mask (DETFEED_ELIMIT), as
 *   does detfeed_loader_sample_mask_data with too small a buffer;
 * - a mosaic sample's mask type follows its own instance count;
 * - a batch's masks are int32 exactly when one of its samples has more
 *   than 255 instances (torch.cat's promotion in Ultralytics' collate_fn),
 *   each image's equal to the single-sample path, widened where it is
 *   8-bit; detfeed_batch_masks gives NULL for such a batch;
 * - the batch masks are the same bytes for 1 and 3 workers.
 * The values against the real Ultralytics: tests/conformance/run_dense_masks.py.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { SIDE = 320, MAX = SIDE + 32, CAP = 4096 }; /* MAX: validation's rect sides */

static char root[64];
static int grid_cols, grid_rows, dense_image = -1; /* what labels() writes */

/* A star-shaped polygon of 5 to 8 points in each of the cols x rows cells
 * of the unit square, class k % 3. */
static void write_grid(FILE *f, int cols, int rows, uint64_t seed)
{
    for (int j = 0, k = 0; j < rows; j++)
        for (int i = 0; i < cols; i++, k++) {
            int m = 5 + (int)(tu_rand(&seed) % 4);
            double cx = (i + 0.5) / cols, cy = (j + 0.5) / rows;
            fprintf(f, "%d", k % 3);
            for (int p = 0; p < m; p++) {
                double a = 6.283185307179586 * (p + tu_uniform(&seed, 0, 0.8)) / m;
                double r = tu_uniform(&seed, 0.2, 0.45);
                double x = cx + r * cos(a) / cols, y = cy + r * sin(a) / rows;
                fprintf(f, " %.6f %.6f", x, y);
            }
            fprintf(f, "\n");
        }
}

static void labels(FILE *f, int i)
{
    if (i == dense_image)
        write_grid(f, 20, 15, 1000 + (uint64_t)i); /* 300 polygons */
    else
        write_grid(f, grid_cols, grid_rows, 1000 + (uint64_t)i);
}

static detfeed_loader *make(const char *dir, int augment, int batch, int workers,
                            int prefetch)
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, SIDE);
    detfeed_loader_set_int(l, DETFEED_LOADER_AUGMENT, augment);
    detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, batch);
    detfeed_loader_set_int(l, DETFEED_LOADER_WORKERS, workers);
    detfeed_loader_set_int(l, DETFEED_LOADER_PREFETCH, prefetch);
    detfeed_loader_set_int(l, DETFEED_LOADER_EPOCHS, 3);
    detfeed_loader_set_int(l, DETFEED_LOADER_CLOSE_MOSAIC, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_SEED, 11);
    if (!CHECK_INT(detfeed_loader_open(l, tu_at(root, dir)), 0))
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    return l;
}

static long mask_at(const void *mask, detfeed_mask_type type, size_t i)
{
    return type == DETFEED_MASK_I32 ? (long)((const int32_t *)mask)[i]
                                    : (long)((const uint8_t *)mask)[i];
}

/* Every value v > 0 of a w x h sample's mask names instance v - 1 of
 * `boxes` (label order, normalized centre x, y, w, h) and lies in its box,
 * give or take the pixels that casting and resizing move; counts the
 * pixels that do not. Returns the largest value. */
static long check_values(const void *mask, detfeed_mask_type type, int w, int h, int n,
                         const float *boxes, int *bad)
{
    long top = 0;
    int mw = w / 4, mh = h / 4;
    for (int y = 0; y < mh; y++)
        for (int x = 0; x < mw; x++) {
            long v = mask_at(mask, type, (size_t)y * mw + x);
            top = v > top ? v : top;
            if (v == 0)
                continue;
            if (v < 0 || v > n) {
                (*bad)++;
                continue;
            }
            const float *b = boxes + 4 * (v - 1);
            double px = 4 * x + 2, py = 4 * y + 2;
            if (fabs(px - b[0] * w) > b[2] * w / 2 + 4 ||
                fabs(py - b[1] * h) > b[3] * h / 2 + 4)
                (*bad)++;
        }
    return top;
}

static float cls[CAP], box[CAP * 4];

/* One sample's labels and mask (4 bytes per element): its instance count,
 * the mask's type to *type, the sample's size to *w_out, *h_out. */
static int sample(detfeed_loader *l, uint32_t epoch, uint64_t index, void *mask,
                  detfeed_mask_type *type, int *w_out, int *h_out)
{
    int w, h, n = -1, mw = 0, mh = 0;
    static uint8_t img[MAX * MAX * 3];
    detfeed_loader_sample_size(l, index, &w, &h);
    if (!CHECK_INT(detfeed_loader_sample(l, epoch, index, img, CAP, &n, cls, box, NULL),
                   0))
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    size_t bytes = (size_t)(w / 4) * (size_t)(h / 4) * 4;
    if (!CHECK_INT(detfeed_loader_sample_mask_data(l, epoch, index, mask, bytes, &mw,
                                                   &mh, type),
                   0))
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    CHECK(mw == w / 4 && mh == h / 4);
    *w_out = w, *h_out = h;
    return n;
}

/* The image of 300 polygons is indexed and sampled whole (validation:
 * letterbox only), with an int32 mask; the old 8-bit call refuses it. */
static void test_single(void)
{
    detfeed_loader *l = make("one/images", 0, 2, 1, 1);
    const detfeed_dataset *ds = detfeed_loader_dataset(l);
    CHECK_INT(detfeed_dataset_size(ds), 4);
    CHECK_INT(detfeed_dataset_problem_count(ds), 0);
    CHECK_INT(detfeed_dataset_instance_count(ds, 0), 300);
    static int32_t mask[(MAX / 4) * (MAX / 4)];
    detfeed_mask_type type = DETFEED_MASK_NONE;
    int w, h, n = sample(l, 0, 0, mask, &type, &w, &h), bad = 0;
    CHECK_INT(n, 300);
    CHECK_INT(type, DETFEED_MASK_I32);
    long top = check_values(mask, type, w, h, n, box, &bad);
    CHECK_INT(bad, 0);
    CHECK(top > 255 && top <= 300); /* values an 8-bit mask cannot hold */
    uint8_t narrow[(MAX / 4) * (MAX / 4)];
    CHECK_INT(detfeed_loader_sample_masks(l, 0, 0, narrow, NULL, NULL), DETFEED_ELIMIT);
    CHECK(strstr(detfeed_loader_last_error(l), "int32") != NULL);
    size_t msize = (size_t)(w / 4) * (size_t)(h / 4);
    CHECK_INT(
        detfeed_loader_sample_mask_data(l, 0, 0, mask, 4 * msize - 1, NULL, NULL, NULL),
        DETFEED_ELIMIT);
    /* An image of 40: 8-bit, the same bytes through both calls. */
    n = sample(l, 0, 1, mask, &type, &w, &h);
    CHECK_INT(n, 40);
    CHECK_INT(type, DETFEED_MASK_U8);
    bad = 0;
    top = check_values(mask, type, w, h, n, box, &bad);
    CHECK(bad == 0 && top > 0 && top <= 40);
    CHECK_INT(detfeed_loader_sample_masks(l, 0, 1, narrow, NULL, NULL), 0);
    CHECK(memcmp(narrow, mask, msize) == 0);
    detfeed_loader_destroy(l);
}

/* Mosaics of images of 150 polygons: the mask type follows each sample's
 * own count, and some samples pass 255. */
static void test_mosaic_samples(void)
{
    detfeed_loader *l = make("mosaic/images", 1, 2, 1, 1);
    static int32_t mask[(MAX / 4) * (MAX / 4)];
    int wide = 0, narrow = 0, bad = 0, wrong_type = 0;
    for (uint32_t e = 0; e < 3; e++)
        for (uint64_t i = 0; i < 6; i++) {
            detfeed_mask_type type = DETFEED_MASK_NONE;
            int w, h, n = sample(l, e, i, mask, &type, &w, &h);
            wrong_type += type != (n > 255 ? DETFEED_MASK_I32 : DETFEED_MASK_U8);
            wide += n > 255;
            narrow += n <= 255;
            check_values(mask, type, w, h, n, box, &bad);
        }
    CHECK_INT(wrong_type, 0);
    CHECK_INT(bad, 0);
    CHECK(wide > 0 && narrow > 0);
    printf("note: %d mosaic samples of more than 255 instances, %d of fewer\n", wide,
           narrow);
    detfeed_loader_destroy(l);
}

/* Instances of image i of a batch (batch_idx). */
static int image_instances(const detfeed_batch *b, int i)
{
    int n = 0;
    for (int k = 0; k < detfeed_batch_instances(b); k++)
        n += detfeed_batch_batch_idx(b)[k] == (float)i;
    return n;
}

/* Every batch of epochs 0 .. 2 against the single-sample path; counts the
 * int32 and 8-bit batches and digests the masks. */
static void check_batches(detfeed_loader *l, detfeed_loader *one, int counts[2],
                          char hex[65])
{
    static int32_t mask[(MAX / 4) * (MAX / 4)];
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    for (uint32_t e = 0; e < 3; e++) {
        CHECK_INT(detfeed_loader_start(l, e), 0);
        const detfeed_batch *b;
        while (detfeed_loader_next(l, &b) == 0) {
            int h, w, mh = 0, mw = 0, most = 0, nb = detfeed_batch_size(b, &h, &w);
            detfeed_mask_type type = DETFEED_MASK_NONE, st;
            const void *bm = detfeed_batch_mask_data(b, &mh, &mw, &type);
            for (int i = 0; i < nb; i++)
                most = image_instances(b, i) > most ? image_instances(b, i) : most;
            CHECK(bm != NULL && mh == h / 4 && mw == w / 4);
            CHECK_INT(type, most > 255 ? DETFEED_MASK_I32 : DETFEED_MASK_U8);
            CHECK((detfeed_batch_masks(b, NULL, NULL) == NULL) ==
                  (type == DETFEED_MASK_I32));
            counts[type == DETFEED_MASK_I32]++;
            size_t size = (size_t)mh * mw;
            for (int i = 0; i < nb; i++) {
                const char *file = detfeed_batch_im_file(b, i);
                const detfeed_dataset *ds = detfeed_loader_dataset(one);
                uint64_t index = 0;
                while (strcmp(detfeed_dataset_image_path(ds, index), file))
                    index++;
                int sw, sh;
                sample(one, e, index, mask, &st, &sw, &sh);
                CHECK(sw == w && sh == h);
                int same = 1;
                for (size_t p = 0; p < size; p++)
                    same &= mask_at(mask, st, p) == mask_at(bm, type, i * size + p);
                CHECK(same);
            }
            detfeed_sha256_update(&ctx, &type, sizeof type);
            detfeed_sha256_update(&ctx, bm, (size_t)nb * size * (size_t)type);
            detfeed_loader_release(l, b);
        }
    }
    detfeed_sha256_hex(&ctx, hex);
}

/* Batches: int32 exactly when a sample passes 255, the same bytes for any
 * number of workers. */
static void test_batches(void)
{
    detfeed_loader *one = make("mosaic/images", 1, 2, 1, 1);
    detfeed_loader *a = make("mosaic/images", 1, 2, 1, 1);
    detfeed_loader *b = make("mosaic/images", 1, 2, 3, 3);
    int ca[2] = {0, 0}, cb[2] = {0, 0};
    char ha[65], hb[65];
    check_batches(a, one, ca, ha);
    check_batches(b, one, cb, hb);
    CHECK(ca[0] > 0 && ca[1] > 0); /* both kinds occur */
    CHECK(ca[0] == cb[0] && ca[1] == cb[1]);
    CHECK_STR(ha, hb);
    detfeed_loader_destroy(one);
    detfeed_loader_destroy(a);
    detfeed_loader_destroy(b);
    /* Validation: the batch with the 300-polygon image is int32. */
    one = make("one/images", 0, 2, 1, 1);
    a = make("one/images", 0, 2, 2, 2);
    int cv[2] = {0, 0};
    check_batches(a, one, cv, ha);
    CHECK(cv[0] > 0 && cv[1] > 0);
    detfeed_loader_destroy(one);
    detfeed_loader_destroy(a);
}

int main(void)
{
    if (!tu_temp_dir(root, sizeof root, "dense"))
        return tu_finish("test_dense_masks");
    mkdir(tu_at(root, "one"), 0755);
    mkdir(tu_at(root, "mosaic"), 0755);
    dense_image = 0, grid_cols = 8, grid_rows = 5; /* 300, then 40 each */
    tu_noise_dataset(tu_at(root, "one"), 4, SIDE, 1, 3, labels);
    dense_image = -1, grid_cols = 15, grid_rows = 10; /* 150 each */
    tu_noise_dataset(tu_at(root, "mosaic"), 6, SIDE, 1, 4, labels);
    test_single();
    test_mosaic_samples();
    test_batches();
    CHECK(tu_remove_tree(root));
    return tu_finish("test_dense_masks");
}
