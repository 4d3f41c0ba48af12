/*
 * test_stack.c - the reference stack: its settings by name, and one captured
 * case for each label difference between Ultralytics 8.3 and 8.4, each of
 * which fails when the other version's arithmetic is used:
 *   - Format divides boxes by w and h (8.3 multiplied by float32(1 / w));
 *   - Instances.clip clamps keypoints (8.3 only zeroed their visibility);
 *   - segment2box keeps a polygon's visible extent (8.3 kept only the
 *     vertices inside, so a polygon crossing the border lost its box).
 * and one for NumPy 2's fused float32 matrix products in RandomPerspective's
 * matrix. Validation's rect order from a caller (NumPy's argsort) is
 * checked too.
 */
#include "aug/geometry.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#define NO_MOSAIC_84 "b923b12816e91565d8437aae5b1eb5bc2067cc0d21a70f1f63c9732c49e4ca4c"

static const detfeed__stack v83 = {
    .ultralytics = 803, .numpy = 1, .cv = {DETFEED_CV_4, DETFEED_CV_CPU_AUTO, 0}};
static const detfeed__stack v84 = {
    .ultralytics = 804, .numpy = 1, .cv = {DETFEED_CV_4, DETFEED_CV_CPU_AUTO, 0}};

static void test_settings(void)
{
    detfeed_loader *l;
    CHECK_INT(detfeed_loader_create(&l, 0), 0);
    CHECK_INT(detfeed_loader_set(l, "opencv", "5.0"), 0);
    CHECK_INT(detfeed_loader_set(l, "opencv", "4"), 0);
    CHECK_INT(detfeed_loader_set(l, "opencv_cpu", "avx2"), 0);
    CHECK_INT(detfeed_loader_set(l, "opencv_ipp", "0"), 0);
    CHECK_INT(detfeed_loader_set(l, "ultralytics", "8.3"), 0);
    CHECK_INT(detfeed_loader_set(l, "numpy", "1"), 0);
    CHECK_INT(detfeed_loader_set(l, "numpy", "3"), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set(l, "degrees", "12.5"), 0);
    CHECK_INT(detfeed_loader_set(l, "dtype", "bf16"), 0);
    CHECK_INT(detfeed_loader_set(l, "opencv", "5.2"), DETFEED_EINVAL);
    CHECK(strstr(detfeed_loader_last_error(l), "4, 4-debian, 5.0, 5.1") != NULL);
    CHECK_INT(detfeed_loader_set(l, "ultralytics", "8.5"), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set(l, "imgsz", "33"), DETFEED_EINVAL);
    CHECK(strstr(detfeed_loader_last_error(l), "multiple of 32") != NULL);
    CHECK_INT(detfeed_loader_set(l, "imgsz", "64x"), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set(l, "degrees", "nan"), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set(l, "opencv_ipp", "2"), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set(l, "no_such", "1"), DETFEED_EINVAL);
    CHECK(strstr(detfeed_loader_last_error(l), "no_such") != NULL);
    CHECK_INT(detfeed_loader_set(l, "imgsz", NULL), DETFEED_EINVAL);
    detfeed_loader_destroy(l);

    detfeed_cv_version v;
    detfeed_cv_cpu c;
    CHECK_INT(detfeed_cv_version_parse("5.1", &v), 0);
    CHECK_INT(v, DETFEED_CV_5_1);
    CHECK_INT(detfeed_cv_version_parse("4.6", &v), DETFEED_EINVAL);
    CHECK_INT(detfeed_cv_cpu_parse("sse", &c), 0);
    CHECK_INT(c, DETFEED_CV_CPU_SSE);
    CHECK(detfeed_cv_cpu_resolve(DETFEED_CV_CPU_AUTO) != DETFEED_CV_CPU_AUTO);
    CHECK_INT(detfeed_cv_cpu_resolve(DETFEED_CV_CPU_AVX2), DETFEED_CV_CPU_AVX2);
}

/* 8.4 divides: for x = 9 and w = 640, x / w and x * float32(1 / w) are
 * one ulp apart in float32. */
static void test_format_division(void)
{
    float x = 9.0f, want_div = x / 640.0f, want_mul = x * (float)(1.0 / 640);
    if (!CHECK(want_div != want_mul))
        return;
    detfeed__inst in = {0};
    CHECK_INT(detfeed__inst_reserve(&in, 1, 0), 0);
    in.n = 1;
    in.cls[0] = 3;
    float box[4] = {x, 100, 20, 30};
    memcpy(in.box, box, sizeof box);
    float cls, out[4];
    detfeed__format(&in, 640, 640, &v84, &cls, out, NULL);
    CHECK(out[0] == want_div);
    detfeed__format(&in, 640, 640, &v83, &cls, out, NULL);
    CHECK(out[0] == want_mul);
    detfeed__inst_free(&in);
}

/* An identity RandomPerspective: scale 1, no rotation, shear or
 * perspective, translation to the centre of an output of the input's size. */
static detfeed__recipe identity(void)
{
    detfeed__recipe r;
    memset(&r, 0, sizeof r);
    r.scale = 1.0;
    r.translate[0] = r.translate[1] = 0.5;
    return r;
}

/* `in` through the identity RandomPerspective of a flat 100 x 100 image
 * under `st`. */
static void identity_warp(detfeed__inst *in, const detfeed__stack *st)
{
    detfeed__img im = {0}, out = {0};
    CHECK_INT(detfeed__img_reserve(&im, 100, 100), 0);
    memset(im.px, 50, 100 * 100 * 3);
    detfeed__recipe r = identity();
    CHECK_INT(detfeed__random_perspective(&im, in, &r, st, 100, 100, &out), 0);
    detfeed__img_free(&im);
    detfeed__img_free(&out);
}

/* A keypoint right of a 100-wide image: 8.4 clamps it to 100, 8.3 keeps
 * 110; both make it invisible. */
static void test_keypoint_clip(void)
{
    for (int k = 0; k < 2; k++) {
        detfeed__inst in = {0};
        CHECK_INT(detfeed__inst_reserve(&in, 1, 1), 0);
        in.n = 1;
        float box[4] = {20, 20, 80, 80}, kpt[3] = {110, 40, 2};
        memcpy(in.box, box, sizeof box);
        memcpy(in.kpt, kpt, sizeof kpt);
        identity_warp(&in, k ? &v84 : &v83);
        if (CHECK_INT(in.n, 1)) {
            CHECK(in.kpt[0] == (k ? 100.0f : 110.0f));
            CHECK(in.kpt[2] == 0.0f);
        }
        detfeed__inst_free(&in);
    }
}

/* A polygon crossing the left border: the triangle (-10, 10), (10, 10),
 * (10, 30) in a 100 x 100 image. Its visible part spans x 0..10, y 10..30
 * (8.4); 8.3 kept only the two inside vertices, a box of width 0, which
 * box_candidates then dropped. */
static void test_segment_box(void)
{
    for (int k = 0; k < 2; k++) {
        detfeed__inst in = {0};
        CHECK_INT(detfeed__inst_reserve(&in, 1, 0), 0);
        CHECK_INT(detfeed__inst_reserve_seg(&in, 1, 3), 0);
        in.n = 1;
        float box[4] = {-10, 10, 10, 30}, seg[6] = {-10, 10, 10, 10, 10, 30};
        memcpy(in.box, box, sizeof box);
        memcpy(in.seg, seg, sizeof seg);
        identity_warp(&in, k ? &v84 : &v83);
        if (k == 1 && CHECK_INT(in.n, 1)) {
            CHECK(in.box[0] == 0.0f && in.box[1] == 10.0f);
            CHECK(in.box[2] == 10.0f && in.box[3] == 30.0f);
        } else if (k == 0) {
            CHECK_INT(in.n, 0);
        }
        detfeed__inst_free(&in);
    }
}

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* M = T S R P C for angle 7.5, scale 1.2, shear (3, -2), translate (0.45,
 * 0.55), 640 x 480 into 640 x 640: entry (0, 1) is 0x3e603d02 with NumPy
 * 1.24 and 0x3e603d03 with NumPy 2.4 (captured from both). */
static void test_numpy_matrix(void)
{
    detfeed__recipe r = identity();
    r.angle = 7.5, r.scale = 1.2, r.shear[0] = 3, r.shear[1] = -2;
    r.translate[0] = 0.45, r.translate[1] = 0.55;
    detfeed__stack np1 = v84, np2 = v84;
    np2.numpy = 2;
    float M1[9], M2[9];
    detfeed__affine_matrix(&r, 640, 480, 640, 640, &np1, M1);
    detfeed__affine_matrix(&r, 640, 480, 640, 640, &np2, M2);
    CHECK_INT(bits(M1[1]), 0x3e603d02);
    CHECK_INT(bits(M2[1]), 0x3e603d03);
    CHECK_INT(bits(M1[0]), 0x3f973c37);
    CHECK_INT(bits(M2[0]), 0x3f973c37);
    CHECK_INT(bits(M2[5]), 0x4303318a);
}

/* The sha256 of sample (epoch 0, index 1) of coco8 without mosaic, image
 * and normalized boxes, under Ultralytics `ul` on OpenCV 4 and NumPy 1. */
static void no_mosaic_digest(const char *data, const char *ul, char hex[65])
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set(l, "mosaic", "0");
    detfeed_loader_set(l, "ultralytics", ul);
    detfeed_loader_set(l, "opencv", "4");
    detfeed_loader_set(l, "numpy", "1");
    hex[0] = '\0';
    if (!CHECK_INT(detfeed_loader_open(l, data), 0)) {
        detfeed_loader_destroy(l);
        return;
    }
    uint8_t *img = malloc(640 * 640 * 3);
    float cls[64], boxes[256];
    int n = 0;
    if (CHECK_INT(detfeed_loader_sample(l, 0, 1, img, 64, &n, cls, boxes, NULL), 0)) {
        detfeed_sha256 ctx;
        detfeed_sha256_init(&ctx);
        detfeed_sha256_update(&ctx, img, 640 * 640 * 3);
        detfeed_sha256_update(&ctx, boxes, (size_t)n * 4 * sizeof *boxes);
        detfeed_sha256_hex(&ctx, hex);
    }
    free(img);
    detfeed_loader_destroy(l);
}

/* 8.4 warps a sample without mosaic straight from its loaded image (8.3
 * letterboxed it to imgsz first): the 8.4 digest was taken from the code
 * the conformance suite found equal to the real Ultralytics 8.4.190 on
 * every close_mosaic sample of coco128, byte for byte; 8.3's differs (off-centre
 * letterbox padding moves the warp by half a pixel, and the labels go through another
 * chain of float32 steps). */
static void test_no_mosaic(const char *data)
{
    char h84[65], h83[65];
    no_mosaic_digest(data, "8.4", h84);
    no_mosaic_digest(data, "8.3", h83);
    CHECK_STR(h84, NO_MOSAIC_84);
    CHECK(strcmp(h83, h84) != 0);
}

/* A caller's validation order replaces the stable one, and is checked. */
static void test_rect_order(const char *data)
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_AUGMENT, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, 2);
    uint64_t order[8] = {7, 6, 5, 4, 3, 2, 1, 0};
    CHECK_INT(detfeed_loader_set_rect_order(l, order, 8), DETFEED_EBADSTATE);
    if (!CHECK_INT(detfeed_loader_open(l, data), 0)) {
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
        detfeed_loader_destroy(l);
        return;
    }
    size_t n = detfeed_dataset_size(detfeed_loader_dataset(l));
    if (!CHECK_INT((long long)n, 8)) {
        detfeed_loader_destroy(l);
        return;
    }
    uint64_t dup[8] = {0, 0, 1, 2, 3, 4, 5, 6};
    CHECK_INT(detfeed_loader_set_rect_order(l, dup, 8), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set_rect_order(l, order, 7), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set_rect_order(l, order, 8), 0);
    /* The first batch is images 7 and 6: its shape comes from their ratios. */
    int w6, h6, w7, h7, bw, bh;
    const detfeed_dataset *ds = detfeed_loader_dataset(l);
    detfeed_dataset_image_size(ds, 6, &w6, &h6);
    detfeed_dataset_image_size(ds, 7, &w7, &h7);
    CHECK_INT(detfeed_loader_sample_size(l, 7, &bw, &bh), 0);
    int bw6, bh6;
    detfeed_loader_sample_size(l, 6, &bw6, &bh6);
    CHECK(bw == bw6 && bh == bh6);
    uint8_t *img = malloc((size_t)bw * bh * 3);
    float cls[64], boxes[256];
    int count = 0;
    CHECK_INT(detfeed_loader_sample(l, 0, 7, img, 64, &count, cls, boxes, NULL), 0);
    free(img);
    CHECK_INT(detfeed_loader_set_rect_order(l, order, 8), DETFEED_EBADSTATE);
    detfeed_loader_destroy(l);
}

int main(void)
{
    test_settings();
    test_format_division();
    test_keypoint_clip();
    test_segment_box();
    test_numpy_matrix();
    const char *data = getenv("DETFEED_TEST_DATA");
    char path[512];
    if (data) {
        snprintf(path, sizeof path, "%s/coco8/images", data);
        test_rect_order(path);
        test_no_mosaic(path);
    } else {
        tu_skip("DETFEED_TEST_DATA not set: the rect order and no-mosaic tests");
    }
    return tu_finish("test_stack");
}
