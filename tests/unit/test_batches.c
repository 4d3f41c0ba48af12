/*
 * test_batches.c - batches through the worker ring:
 * - the digest of every batch (images and labels, in order) over two epochs
 *   with close_mosaic between them is the same for 1, 2, 4 and 8 workers
 *   and prefetch 1 and 4;
 * - each batch image equals the single-sample path converted to the dtype,
 *   and the label arrays are the samples' in order with batch_idx;
 * - two ranks' shards are disjoint (but for the padding) and cover the
 *   epoch; validation batches follow the rect order and shapes;
 * - a sample that fails reaches the consumer with its file named;
 * - detfeed_loader_next_timed in short slices gives the same batches, and
 *   after detfeed_loader_shutdown a held batch keeps its bytes while
 *   nothing more is started or taken;
 * - batches may be released in any order (the whole epoch still comes, with
 *   the same indices); a batch released twice, one of another loader and
 *   one taken before the last start are refused with a message; all slots
 *   held: next says so; the batch accessors take NULL;
 * - after a failed detfeed_loader_open (early, or late with the dataset and
 *   cache made) every call that acts refuses with DETFEED_EBADSTATE and a
 *   message naming the open's failure, and destroy frees it.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { NIMG = 21, S = 96, B = 4 };

static char root[64];

/* i % 4 boxes of classes 0, 1, 2. */
static void boxes(FILE *f, int i)
{
    for (int k = 0; k < i % 4; k++)
        fprintf(f, "%d 0.5 0.5 %.3f %.3f\n", k, 0.2 + 0.1 * k, 0.3);
}

/* A loader over the noise dataset, opened, with Format's bgr probability. */
static detfeed_loader *make_bgr(int workers, int prefetch, int augment, int rank,
                                int world, detfeed_dtype dtype, double bgr)
{
    char src[128];
    snprintf(src, sizeof src, "%s/images", root);
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, S);
    detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, B);
    detfeed_loader_set_int(l, DETFEED_LOADER_WORKERS, workers);
    detfeed_loader_set_int(l, DETFEED_LOADER_PREFETCH, prefetch);
    detfeed_loader_set_int(l, DETFEED_LOADER_AUGMENT, augment);
    detfeed_loader_set_int(l, DETFEED_LOADER_RANK, rank);
    detfeed_loader_set_int(l, DETFEED_LOADER_WORLD_SIZE, world);
    detfeed_loader_set_int(l, DETFEED_LOADER_DTYPE, dtype);
    detfeed_loader_set_int(l, DETFEED_LOADER_EPOCHS, 2);
    detfeed_loader_set_int(l, DETFEED_LOADER_CLOSE_MOSAIC, 1);
    detfeed_loader_set_int(l, DETFEED_LOADER_CACHE_BYTES, 1 << 22);
    detfeed_loader_set_int(l, DETFEED_LOADER_SEED, 77);
    detfeed_loader_set_float(l, DETFEED_LOADER_BGR, bgr);
    if (!CHECK_INT(detfeed_loader_open(l, src), 0))
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    uint64_t done = 1, total = 0; /* nothing running; the last stage complete */
    CHECK(detfeed_loader_progress(l, &done, &total) == NULL && done == total);
    return l;
}

static detfeed_loader *make(int workers, int prefetch, int augment, int rank, int world,
                            detfeed_dtype dtype)
{
    return make_bgr(workers, prefetch, augment, rank, world, dtype, 0.0);
}

static void test_workers(void)
{
    char ref[65], hex[65];
    detfeed_loader *l = make(1, 1, 1, 0, 1, DETFEED_DTYPE_F32);
    tu_digest_hex(l, 2, ref);
    detfeed_loader_destroy(l);
    int workers[] = {1, 2, 4, 8}, prefetch[] = {1, 4};
    for (int w = 0; w < 4; w++)
        for (int p = 0; p < 2; p++) {
            l = make(workers[w], prefetch[p], 1, 0, 1, DETFEED_DTYPE_F32);
            tu_digest_hex(l, 2, hex);
            if (!CHECK_STR(hex, ref))
                fprintf(stderr, "  workers %d prefetch %d\n", workers[w], prefetch[p]);
            detfeed_loader_destroy(l);
        }
}

/* Batch contents against the single-sample path. */
static void test_contents(detfeed_dtype dtype, int augment)
{
    detfeed_loader *l = make(3, 2, augment, 0, 1, dtype),
                   *one = make(1, 1, augment, 0, 1, dtype);
    size_t es = detfeed_dtype_size(dtype);
    CHECK_INT(detfeed_loader_start(l, 0), 0);
    const detfeed_batch *b;
    int batches = 0;
    uint8_t *img = malloc((size_t)(S + 32) * (S + 32) * 3),
            *conv = malloc((size_t)(S + 32) * (S + 32) * 3 * 4);
    float cls[64], box[256];
    while (detfeed_loader_next(l, &b) == 0) {
        int h, w, n = detfeed_batch_size(b, &h, &w), k = 0;
        const uint8_t *bimg = detfeed_batch_images(b, NULL);
        for (int i = 0; i < n; i++) {
            const char *file = detfeed_batch_im_file(b, i);
            const detfeed_dataset *ds = detfeed_loader_dataset(l);
            size_t index = 0;
            while (strcmp(detfeed_dataset_image_path(ds, index), file) != 0)
                index++;
            int count, sw, sh;
            detfeed_loader_sample_size(one, index, &sw, &sh);
            CHECK(sw == w && sh == h);
            CHECK_INT(
                detfeed_loader_sample(one, 0, index, img, 64, &count, cls, box, NULL),
                0);
            size_t plane = (size_t)w * h * es;
            detfeed_convert_chw(img, (size_t)w * 3, w, h, conv, plane, dtype, 0);
            CHECK(memcmp(conv, bimg + (size_t)i * 3 * plane, 3 * plane) == 0);
            for (int j = 0; j < count; j++, k++) {
                CHECK(detfeed_batch_cls(b)[k] == cls[j]);
                CHECK(memcmp(detfeed_batch_bboxes(b) + 4 * k, box + 4 * j, 16) == 0);
                CHECK(detfeed_batch_batch_idx(b)[k] == (float)i);
            }
        }
        CHECK_INT(detfeed_batch_instances(b), k);
        batches++;
        detfeed_loader_release(l, b);
    }
    CHECK_INT(batches, (NIMG + B - 1) / B);
    CHECK_INT(detfeed_loader_batch_count(l), (NIMG + B - 1) / B);
    /* Without a CUDA device the slots are pageable, and the loader says why. */
    const char *why = NULL;
    int pinned = detfeed_loader_pinned(l, &why);
    CHECK(pinned == (detfeed_cuda_device_count(NULL) > 0));
    CHECK(pinned || (why && *why));
    free(img);
    free(conv);
    detfeed_loader_destroy(l);
    detfeed_loader_destroy(one);
}

/* bgr: each batch image is the one of bgr 0, its planes R, G, B or, where
 * the recipe's gate fell, B, G, R (both occur); validation ignores bgr. */
static void test_bgr(detfeed_dtype dtype, int augment)
{
    detfeed_loader *rgb = make(2, 2, augment, 0, 1, dtype);
    detfeed_loader *l = make_bgr(2, 2, augment, 0, 1, dtype, 0.5);
    CHECK_INT(detfeed_loader_start(l, 0), 0);
    CHECK_INT(detfeed_loader_start(rgb, 0), 0);
    const detfeed_batch *a, *b;
    int kept = 0, swapped = 0;
    while (detfeed_loader_next(l, &b) == 0 &&
           CHECK_INT(detfeed_loader_next(rgb, &a), 0)) {
        int h, w, n = detfeed_batch_size(b, &h, &w);
        size_t plane = (size_t)w * h * detfeed_dtype_size(dtype);
        const uint8_t *pb = detfeed_batch_images(b, NULL),
                      *pa = detfeed_batch_images(a, NULL);
        for (int i = 0; i < n; i++) {
            const uint8_t *x = pb + 3 * plane * i, *y = pa + 3 * plane * i;
            const detfeed_dataset *ds = detfeed_loader_dataset(l);
            size_t index = 0;
            while (strcmp(detfeed_dataset_image_path(ds, index),
                          detfeed_batch_im_file(b, i)))
                index++;
            detfeed_recipe r;
            CHECK_INT(detfeed_loader_recipe(l, 0, index, &r), 0);
            bool same = memcmp(x, y, 3 * plane) == 0;
            bool bgr = memcmp(x, y + 2 * plane, plane) == 0 &&
                       memcmp(x + plane, y + plane, plane) == 0 &&
                       memcmp(x + 2 * plane, y, plane) == 0;
            CHECK(r.bgr ? bgr : same);
            kept += !r.bgr, swapped += r.bgr;
        }
        detfeed_loader_release(l, b);
        detfeed_loader_release(rgb, a);
    }
    CHECK(kept > 0);
    CHECK(augment ? swapped > 0 : swapped == 0);
    detfeed_loader_destroy(l);
    detfeed_loader_destroy(rgb);
}

/* Rect training: each batch in its rect shape (images of one batch share
 * it), the aspect-ratio order in every epoch; refused with two ranks. */
static void test_rect_training(void)
{
    char src[128];
    snprintf(src, sizeof src, "%s/images", root);
    detfeed_loader *l;
    CHECK_INT(detfeed_loader_create(&l, 0), 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, S);
    detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, B);
    detfeed_loader_set_int(l, DETFEED_LOADER_WORKERS, 2);
    detfeed_loader_set_int(l, DETFEED_LOADER_RECT, 1);
    detfeed_loader_set_int(l, DETFEED_LOADER_CACHE_BYTES, 1 << 22);
    detfeed_loader_set_int(l, DETFEED_LOADER_EPOCHS, 2);
    if (!CHECK_INT(detfeed_loader_open(l, src), 0))
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    char first[NIMG][128];
    int seen = 0, rectangles = 0;
    for (uint32_t epoch = 0; epoch < 2; epoch++) {
        CHECK_INT(detfeed_loader_start(l, epoch), 0);
        const detfeed_batch *b;
        int k = 0;
        while (detfeed_loader_next(l, &b) == 0) {
            int h, w, n = detfeed_batch_size(b, &h, &w);
            rectangles += h != w;
            for (int i = 0; i < n; i++, k++) {
                const char *file = detfeed_batch_im_file(b, i);
                size_t index = 0;
                while (
                    strcmp(detfeed_dataset_image_path(detfeed_loader_dataset(l), index),
                           file) != 0)
                    index++;
                int sw, sh;
                detfeed_loader_sample_size(l, index, &sw, &sh);
                CHECK(sw == w && sh == h && w <= S && h <= S);
                if (epoch == 0)
                    snprintf(first[k], sizeof first[k], "%s", file);
                else
                    seen += strcmp(first[k], file) == 0;
            }
            detfeed_loader_release(l, b);
        }
        CHECK_INT(k, NIMG);
    }
    CHECK_INT(seen, NIMG);
    CHECK(rectangles > 0);
    detfeed_loader_destroy(l);
    CHECK_INT(detfeed_loader_create(&l, 0), 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_RECT, 1);
    detfeed_loader_set_int(l, DETFEED_LOADER_WORLD_SIZE, 2);
    CHECK_INT(detfeed_loader_open(l, src), DETFEED_ENOTSUPPORTED);
    CHECK(strstr(detfeed_loader_last_error(l), "rect") != NULL);
    detfeed_loader_destroy(l);
}

static void test_shards(void)
{
    int seen[NIMG] = {0}, total = 0;
    for (int rank = 0; rank < 2; rank++) {
        detfeed_loader *l = make(2, 2, 1, rank, 2, DETFEED_DTYPE_U8);
        CHECK_INT(detfeed_loader_start(l, 3), 0);
        const detfeed_batch *b;
        while (detfeed_loader_next(l, &b) == 0) {
            for (int i = 0; i < detfeed_batch_size(b, NULL, NULL); i++) {
                const char *f = detfeed_batch_im_file(b, i);
                int idx = atoi(strrchr(f, '/') + 1);
                seen[idx]++;
                total++;
            }
            detfeed_loader_release(l, b);
        }
        detfeed_loader_destroy(l);
    }
    /* 21 samples on 2 ranks: 11 each, one repeated as padding. */
    CHECK_INT(total, 22);
    int twice = 0;
    for (int i = 0; i < NIMG; i++) {
        CHECK(seen[i] >= 1);
        twice += seen[i] == 2;
    }
    CHECK_INT(twice, 1);
}

/* An image damaged after indexing: skipped (replaced and counted) by
 * default, the end of the epoch with its name under the fail policy. */
static void test_failure(void)
{
    char p[256], src[128];
    snprintf(src, sizeof src, "%s/images", root);
    snprintf(p, sizeof p, "%s/images/07.png", root);
    detfeed_loader *l[2];
    for (int k = 0; k < 2; k++) {
        detfeed_loader_create(&l[k], 0);
        detfeed_loader_set_int(l[k], DETFEED_LOADER_IMGSZ, S);
        detfeed_loader_set_int(l[k], DETFEED_LOADER_BATCH, B);
        detfeed_loader_set_int(l[k], DETFEED_LOADER_WORKERS, 2);
        detfeed_loader_set_policy(l[k], k ? DETFEED_POLICY_FAIL : DETFEED_POLICY_SKIP);
        CHECK_INT(detfeed_loader_open(l[k], src), 0); /* no cache: decoded on demand */
    }
    CHECK_INT(truncate(p, 30), 0);
    const detfeed_batch *b;
    int rc, images = 0;
    CHECK_INT(detfeed_loader_start(l[0], 0), 0);
    while ((rc = detfeed_loader_next(l[0], &b)) == 0) {
        images += detfeed_batch_size(b, NULL, NULL);
        for (int i = 0; i < detfeed_batch_size(b, NULL, NULL); i++)
            CHECK(strstr(detfeed_batch_im_file(b, i), "07.png") == NULL);
        detfeed_loader_release(l[0], b);
    }
    const char *first = NULL;
    CHECK_INT(rc, 1);
    CHECK_INT(images, NIMG);
    CHECK(detfeed_loader_skipped(l[0], &first) >= 1 && first &&
          strstr(first, "07.png"));
    CHECK_INT(detfeed_loader_start(l[1], 0), 0);
    while ((rc = detfeed_loader_next(l[1], &b)) == 0)
        detfeed_loader_release(l[1], b);
    CHECK(rc < 0);
    CHECK(strstr(detfeed_loader_last_error(l[1]), "07.png") != NULL);
    CHECK_INT(detfeed_loader_skipped(l[1], &first), 0);
    CHECK(first == NULL);
    detfeed_loader_destroy(l[0]);
    detfeed_loader_destroy(l[1]);
}

/* Destroying a loader in the middle of an epoch, with batches held and
 * more being made, returns promptly and frees everything (ASan, TSan). */
static void test_destroy_mid_epoch(void)
{
    detfeed_loader *l = make(4, 4, 1, 0, 1, DETFEED_DTYPE_F32);
    CHECK_INT(detfeed_loader_start(l, 0), 0);
    const detfeed_batch *b;
    CHECK_INT(detfeed_loader_next(l, &b), 0);
    detfeed_loader_destroy(l);
    l = make(2, 2, 1, 0, 1, DETFEED_DTYPE_U8);
    CHECK_INT(detfeed_loader_start(l, 0), 0);
    CHECK_INT(detfeed_loader_start(l, 1), 0); /* restart before taking anything */
    int n = 0;
    while (detfeed_loader_next(l, &b) == 0) {
        n++;
        detfeed_loader_release(l, b);
    }
    CHECK_INT(n, (NIMG + B - 1) / B);
    detfeed_loader_destroy(l);
}

/* The digest of two epochs taken with detfeed_loader_next_timed in slices
 * of `slice_ms`; counts the time-outs. */
static void digest_timed(detfeed_loader *l, int slice_ms, char hex[65], int *timeouts)
{
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    *timeouts = 0;
    for (uint32_t e = 0; e < 2; e++) {
        CHECK_INT(detfeed_loader_start(l, e), 0);
        const detfeed_batch *b;
        int rc;
        for (;;) {
            rc = detfeed_loader_next_timed(l, &b, slice_ms);
            if (rc == DETFEED_NEXT_TIMEOUT) {
                CHECK(b == NULL);
                ++*timeouts;
                continue;
            }
            if (rc != DETFEED_OK)
                break;
            tu_digest_batch(&ctx, b);
            detfeed_loader_release(l, b);
        }
        CHECK_INT(rc, DETFEED_NEXT_END);
    }
    detfeed_sha256_hex(&ctx, hex);
}

static void test_next_timed(void)
{
    char ref[65], hex[65];
    int timeouts;
    detfeed_loader *l = make(2, 2, 1, 0, 1, DETFEED_DTYPE_F32);
    tu_digest_hex(l, 2, ref);
    detfeed_loader_destroy(l);
    int slices[] = {0, 1, -1};
    for (int i = 0; i < 3; i++) {
        l = make(2, 2, 1, 0, 1, DETFEED_DTYPE_F32);
        digest_timed(l, slices[i], hex, &timeouts);
        if (!CHECK_STR(hex, ref))
            fprintf(stderr, "  slices of %d ms\n", slices[i]);
        if (slices[i] < 0)
            CHECK_INT(timeouts, 0);
        detfeed_loader_destroy(l);
    }
    CHECK_INT(detfeed_loader_next_timed(NULL, NULL, 0), DETFEED_EINVAL);
}

/* Shutdown: the workers stop for good; the held batch keeps its bytes and
 * labels until destroy, and may still be released. */
static void test_shutdown(void)
{
    detfeed_loader *l = make(4, 4, 1, 0, 1, DETFEED_DTYPE_U8);
    CHECK_INT(detfeed_loader_start(l, 0), 0);
    const detfeed_batch *b, *b2;
    CHECK_INT(detfeed_loader_next(l, &b), 0);
    size_t bytes;
    const uint8_t *img = detfeed_batch_images(b, &bytes);
    uint8_t *copy = malloc(bytes);
    memcpy(copy, img, bytes);
    int n = detfeed_batch_instances(b);
    float cls0 = n ? detfeed_batch_cls(b)[0] : 0;
    CHECK_INT(detfeed_loader_shutdown(l), 0);
    CHECK_INT(detfeed_loader_next(l, &b2), DETFEED_EBADSTATE);
    CHECK(strstr(detfeed_loader_last_error(l), "shut down") != NULL);
    CHECK_INT(detfeed_loader_next_timed(l, &b2, 10), DETFEED_EBADSTATE);
    CHECK_INT(detfeed_loader_start(l, 1), DETFEED_EBADSTATE);
    CHECK(strstr(detfeed_loader_last_error(l), "shut down") != NULL);
    CHECK(detfeed_batch_images(b, NULL) == img);
    CHECK(memcmp(img, copy, bytes) == 0);
    CHECK_INT(detfeed_batch_instances(b), n);
    CHECK(!n || detfeed_batch_cls(b)[0] == cls0);
    CHECK(detfeed_batch_im_file(b, 0) != NULL);
    detfeed_loader_release(l, b);
    CHECK_INT(detfeed_loader_shutdown(l), 0); /* idempotent */
    CHECK(detfeed_dataset_size(detfeed_loader_dataset(l)) == NIMG);
    free(copy);
    detfeed_loader_destroy(l);
    /* Before any batch: nothing runs yet, and nothing will. */
    l = make(1, 1, 1, 0, 1, DETFEED_DTYPE_U8);
    CHECK_INT(detfeed_loader_shutdown(l), 0);
    CHECK_INT(detfeed_loader_start(l, 0), DETFEED_EBADSTATE);
    CHECK_INT(detfeed_loader_next(l, &b2), DETFEED_EBADSTATE);
    detfeed_loader_destroy(l);
    CHECK_INT(detfeed_loader_shutdown(NULL), DETFEED_EINVAL);
}

/* Segment batches: labels in the masks' area order and the masks equal the
 * single-sample path (shared coco8-seg, when DETFEED_TEST_DATA is set). */
static void test_segment_batches(void)
{
    const char *data = getenv("DETFEED_TEST_DATA");
    char src[512];
    if (data == NULL || access(data, R_OK) != 0) {
        tu_skip("DETFEED_TEST_DATA not set or unreadable: segment batches");
        return;
    }
    snprintf(src, sizeof src, "%s/coco8-seg/coco8-seg.yaml", data);
    detfeed_loader *l[2];
    for (int k = 0; k < 2; k++) {
        detfeed_loader_create(&l[k], 0);
        detfeed_loader_set_int(l[k], DETFEED_LOADER_IMGSZ, 160);
        detfeed_loader_set_int(l[k], DETFEED_LOADER_BATCH, 2);
        detfeed_loader_set_int(l[k], DETFEED_LOADER_WORKERS, 2);
        detfeed_loader_set_float(l[k], DETFEED_LOADER_DEGREES, 10);
        CHECK_INT(detfeed_loader_open(l[k], src), 0);
    }
    CHECK_INT(detfeed_loader_start(l[0], 1), 0);
    const detfeed_batch *b;
    uint8_t img[160 * 160 * 3], mask[40 * 40];
    float cls[256], box[1024];
    int images = 0;
    while (detfeed_loader_next(l[0], &b) == 0) {
        int mh, mw, k = 0;
        const uint8_t *bm = detfeed_batch_masks(b, &mh, &mw);
        CHECK(bm != NULL && mh == 40 && mw == 40);
        for (int i = 0; i < detfeed_batch_size(b, NULL, NULL); i++, images++) {
            const detfeed_dataset *ds = detfeed_loader_dataset(l[1]);
            size_t index = 0;
            while (strcmp(detfeed_dataset_image_path(ds, index),
                          detfeed_batch_im_file(b, i)))
                index++;
            int n;
            CHECK_INT(
                detfeed_loader_sample(l[1], 1, index, img, 256, &n, cls, box, NULL), 0);
            CHECK_INT(detfeed_loader_sample_masks(l[1], 1, index, mask, NULL, NULL), 0);
            CHECK(memcmp(mask, bm + (size_t)i * 40 * 40, sizeof mask) == 0);
            for (int j = 0; j < n; j++, k++)
                CHECK(detfeed_batch_cls(b)[k] == cls[j] &&
                      memcmp(detfeed_batch_bboxes(b) + 4 * k, box + 4 * j, 16) == 0);
        }
        detfeed_loader_release(l[0], b);
    }
    CHECK_INT(images, 4);
    detfeed_loader_destroy(l[0]);
    detfeed_loader_destroy(l[1]);
}

/* What a loader whose open failed still answers: the open's message, and
 * DETFEED_EBADSTATE (with a message that names it) from every call that
 * acts. */
static void check_failed(detfeed_loader *l)
{
    char why[512];
    snprintf(why, sizeof why, "%s", detfeed_loader_last_error(l));
    CHECK(why[0] != '\0');
    char src[128];
    snprintf(src, sizeof src, "%s/images", root);
    CHECK_INT(detfeed_loader_open(l, src), DETFEED_EBADSTATE);
    CHECK(strstr(detfeed_loader_last_error(l), "failed to open") != NULL);
    CHECK(strstr(detfeed_loader_last_error(l), why) != NULL);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, 2), DETFEED_EBADSTATE);
    CHECK_INT(detfeed_loader_start(l, 0), DETFEED_EBADSTATE);
    CHECK(strstr(detfeed_loader_last_error(l), why) != NULL);
    const detfeed_batch *b = (const detfeed_batch *)l;
    CHECK_INT(detfeed_loader_next(l, &b), DETFEED_EBADSTATE);
    CHECK(b == NULL);
    CHECK_INT(detfeed_loader_next_timed(l, &b, 0), DETFEED_EBADSTATE);
    uint8_t img[S * S * 3];
    float cls[8], box[32];
    int count, w, h;
    CHECK_INT(detfeed_loader_sample(l, 0, 0, img, 8, &count, cls, box, NULL),
              DETFEED_EBADSTATE);
    CHECK(strstr(detfeed_loader_last_error(l), "failed to open") != NULL);
    CHECK_INT(detfeed_loader_sample_masks(l, 0, 0, img, &w, &h), DETFEED_EBADSTATE);
    CHECK_INT(detfeed_loader_sample_mask_data(l, 0, 0, img, sizeof img, &w, &h, NULL),
              DETFEED_EBADSTATE);
    CHECK_INT(detfeed_loader_sample_size(l, 0, &w, &h), DETFEED_EBADSTATE);
    detfeed_recipe recipe;
    CHECK_INT(detfeed_loader_recipe(l, 0, 0, &recipe), DETFEED_EBADSTATE);
    uint64_t order[1] = {0};
    CHECK_INT(detfeed_loader_set_rect_order(l, order, 1), DETFEED_EBADSTATE);
    CHECK_INT(detfeed_loader_route(l, NULL, NULL, NULL), DETFEED_EBADSTATE);
    CHECK_INT((long long)detfeed_loader_batch_count(l), 0);
    CHECK_INT((long long)detfeed_loader_device_bytes(l), 0);
    CHECK_INT(detfeed_loader_pinned(l, NULL), 0);
    CHECK_INT(detfeed_loader_skipped(l, NULL), 0);
    CHECK_INT(detfeed_loader_shutdown(l), 0);
    detfeed_loader_release(l, NULL);
    detfeed_loader_destroy(l);
}

static void test_failed_open(void)
{
    detfeed_loader *l;
    /* Early: no such dataset. */
    CHECK_INT(detfeed_loader_create(&l, 0), 0);
    CHECK(detfeed_loader_open(l, "/nonexistent/detfeed/images") < 0);
    check_failed(l);
    /* Late: 07.png is damaged (test_failure truncated it) and the policy is
     * fail: the open's check fails it with the dataset and RAM cache made. */
    char src[128];
    snprintf(src, sizeof src, "%s/images", root);
    CHECK_INT(detfeed_loader_create(&l, 0), 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, S);
    detfeed_loader_set_int(l, DETFEED_LOADER_CACHE_BYTES, 1 << 22);
    detfeed_loader_set_policy(l, DETFEED_POLICY_FAIL);
    CHECK(detfeed_loader_open(l, src) < 0);
    CHECK(strstr(detfeed_loader_last_error(l), "07.png") != NULL);
    CHECK(detfeed_loader_dataset(l) != NULL);
    check_failed(l);
}

/* The route is decided by detfeed_loader_open: known before any batch. */
static void test_route_at_open(void)
{
    detfeed_loader *l = make(2, 2, 1, 0, 1, DETFEED_DTYPE_F32);
    detfeed_output out = DETFEED_OUTPUT_CUDA;
    detfeed_route route = DETFEED_ROUTE_DEVICE;
    CHECK_INT(detfeed_loader_route(l, &out, &route, NULL), 0);
    CHECK_INT(out, DETFEED_OUTPUT_HOST);
    CHECK_INT(route, DETFEED_ROUTE_WORKER);
    CHECK_INT(detfeed_loader_pinned(l, NULL), 0); /* slots come with the first start */
    detfeed_loader_destroy(l);
}

/* Releases in any order, and what is refused. */
static void test_release(void)
{
    detfeed_loader *l = make(2, 2, 1, 0, 1, DETFEED_DTYPE_U8);
    detfeed_loader *m = make(1, 2, 1, 0, 1, DETFEED_DTYPE_U8);
    CHECK_INT(detfeed_loader_release(l, NULL), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_start(l, 0), 0);
    CHECK_INT(detfeed_loader_start(m, 0), 0);
    const detfeed_batch *b0, *b1, *b2, *x;
    CHECK_INT(detfeed_loader_next(l, &b0), 0);
    CHECK_INT(detfeed_loader_next(l, &b1), 0);
    CHECK_INT(detfeed_loader_next_timed(l, &b2, 0),
              DETFEED_EBADSTATE); /* 2 of 2 held */
    CHECK(strstr(detfeed_loader_last_error(l), "all 2 batch slots") != NULL);
    CHECK_INT(detfeed_loader_next(m, &x), 0);
    CHECK_INT(detfeed_loader_release(l, x), DETFEED_EINVAL); /* m's */
    CHECK(strstr(detfeed_loader_last_error(l), "not a batch of this loader") != NULL);
    /* out of order: b1, then b0; every batch of the epoch still comes */
    CHECK_INT(detfeed_loader_release(l, b1), 0);
    CHECK_INT(detfeed_loader_release(l, b1), DETFEED_EINVAL); /* twice */
    CHECK(strstr(detfeed_loader_last_error(l), "is not held") != NULL);
    CHECK_INT(detfeed_loader_release(l, b0), 0);
    uint64_t want = 2;
    size_t n = detfeed_loader_batch_count(l);
    while (detfeed_loader_next(l, &b2) == 0) {
        CHECK(detfeed_batch_index(b2) == want++);
        CHECK_INT(detfeed_loader_release(l, b2), 0);
    }
    CHECK(want == n);
    /* held across a start: taken back, its release refused */
    CHECK_INT(detfeed_loader_start(l, 1), 0);
    CHECK_INT(detfeed_loader_next(l, &b0), 0);
    CHECK_INT(detfeed_loader_start(l, 1), 0);
    CHECK_INT(detfeed_loader_release(l, b0), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_release(m, x), 0);
    /* the accessors take NULL */
    int h = -1, w = -1;
    detfeed_mask_type t = DETFEED_MASK_U8;
    size_t bytes = 1;
    CHECK_INT(detfeed_batch_size(NULL, &h, &w), 0);
    CHECK(h == 0 && w == 0 && detfeed_batch_index(NULL) == 0);
    CHECK(detfeed_batch_images(NULL, &bytes) == NULL && bytes == 0);
    CHECK(detfeed_batch_cuda_images(NULL, NULL) == NULL &&
          !detfeed_batch_cuda_event(NULL));
    CHECK(detfeed_batch_instances(NULL) == 0 && detfeed_batch_cls(NULL) == NULL);
    CHECK(!detfeed_batch_bboxes(NULL) && !detfeed_batch_batch_idx(NULL));
    CHECK(!detfeed_batch_keypoints(NULL) && !detfeed_batch_im_file(NULL, 0));
    detfeed_batch_shapes(NULL, 0, NULL, NULL);
    CHECK(detfeed_batch_mask_data(NULL, &h, &w, &t) == NULL && t == DETFEED_MASK_NONE);
    CHECK(detfeed_batch_masks(NULL, NULL, NULL) == NULL);
    detfeed_loader_destroy(m);
    detfeed_loader_destroy(l);
}

int main(void)
{
    if (!tu_temp_dir(root, sizeof root, "batch"))
        return tu_finish("test_batches");
    tu_noise_dataset(root, NIMG, 40, 150, 5, boxes);
    test_workers();
    test_contents(DETFEED_DTYPE_F32, 1);
    test_contents(DETFEED_DTYPE_BF16, 1);
    test_contents(DETFEED_DTYPE_U8, 0);
    test_bgr(DETFEED_DTYPE_F32, 1);
    test_bgr(DETFEED_DTYPE_U8, 1);
    test_bgr(DETFEED_DTYPE_F16, 0);
    test_rect_training();
    test_shards();
    test_segment_batches();
    test_destroy_mid_epoch();
    test_next_timed();
    test_shutdown();
    test_failure();
    test_release();
    test_failed_open();
    test_route_at_open();
    CHECK(tu_remove_tree(root));
    return tu_finish("test_batches");
}
