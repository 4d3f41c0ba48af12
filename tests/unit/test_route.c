/*
 * test_route.c - the colour routes and outputs give the same bytes.
 *
 * A loader asked for CUDA output and the device colour route is compared,
 * batch by batch, with the plain worker route into host memory: every image
 * byte (read back with detfeed_batch_copy_images) and every label array, in
 * all four dtypes, in training and validation. Without a CUDA device this
 * checks the fallback (host output, worker colour, a reason); with one it
 * checks the kernel's route and which one ran. The route is known from
 * detfeed_loader_open on (EBADSTATE before it). Needs the shared coco8 data
 * (DETFEED_TEST_DATA); without it only the settings are checked.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

/* `tail`: imgsz 480 under OpenCV 5.1 on its AVX-512 path, whose HSV->BGR
 * blocks of 64 leave a 32-column scalar tail in every row (320 leaves
 * none), so that the device route's colour after the workers' flips is
 * checked where colour and a mirror do not commute. */
static detfeed_loader *make(const char *data, int output, int colour, detfeed_dtype dt,
                            int augment, bool tail)
{
    detfeed_loader *l = NULL;
    CHECK_INT(detfeed_loader_create(&l, 0), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, tail ? 480 : 320), 0);
    CHECK_INT(detfeed_loader_set(l, "opencv", "5.1"), 0);
    CHECK_INT(detfeed_loader_set(l, "opencv_cpu", tail ? "avx512" : "auto"), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, 3), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_WORKERS, 2), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_PREFETCH, 2), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_SEED, 7), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_DTYPE, dt), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_AUGMENT, augment), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_OUTPUT, output), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_COLOR, colour), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_CACHE_BYTES, 1 << 30), 0);
    CHECK_INT(detfeed_loader_open(l, data), 0);
    return l;
}

/* The route in effect is the one the rules give (DESIGN §2.5). */
static void check_route(const detfeed_loader *l, int have_device, detfeed_dtype dt,
                        int augment)
{
    detfeed_output out;
    detfeed_route route;
    const char *why = "unset";
    CHECK_INT(detfeed_loader_route(l, &out, &route, &why), 0);
    int want_device = have_device && dt != DETFEED_DTYPE_U8 && augment;
    CHECK_INT(out, have_device ? DETFEED_OUTPUT_CUDA : DETFEED_OUTPUT_HOST);
    CHECK_INT(route, want_device ? DETFEED_ROUTE_DEVICE : DETFEED_ROUTE_WORKER);
    CHECK(want_device ? why == NULL : why != NULL && strlen(why) > 10);
    uint64_t dev = detfeed_loader_device_bytes(l);
    CHECK(have_device ? dev > 0 : dev == 0);
}

/* Compares one batch of `a` (the reference, host output) with `b`. */
static void compare_batch(const detfeed_batch *a, const detfeed_batch *b,
                          int have_device)
{
    size_t na, nb;
    const void *ha = detfeed_batch_images(a, &na);
    const void *hb = detfeed_batch_images(b, &nb);
    CHECK_INT((long long)na, (long long)nb);
    CHECK(ha != NULL);
    CHECK(have_device ? hb == NULL && detfeed_batch_cuda_images(b, NULL) != NULL &&
                            detfeed_batch_cuda_event(b) != NULL
                      : hb != NULL && detfeed_batch_cuda_images(b, NULL) == NULL);
    uint8_t *copy = malloc(nb);
    CHECK(copy != NULL);
    CHECK_INT(detfeed_batch_copy_images(b, copy, nb - 1), DETFEED_EINVAL);
    CHECK_INT(detfeed_batch_copy_images(b, copy, nb), 0);
    CHECK(memcmp(ha, copy, na) == 0);
    free(copy);
    int n = detfeed_batch_instances(a);
    CHECK_INT(detfeed_batch_instances(b), n);
    CHECK(n == 0 || memcmp(detfeed_batch_bboxes(a), detfeed_batch_bboxes(b),
                           (size_t)n * 4 * sizeof(float)) == 0);
    CHECK(n == 0 || memcmp(detfeed_batch_cls(a), detfeed_batch_cls(b),
                           (size_t)n * sizeof(float)) == 0);
}

static void compare_epochs(const char *data, int have_device, detfeed_dtype dt,
                           int augment, bool tail)
{
    detfeed_loader *ref =
        make(data, DETFEED_OUTPUT_HOST, DETFEED_ROUTE_WORKER, dt, augment, tail);
    detfeed_loader *dev =
        make(data, DETFEED_OUTPUT_CUDA, DETFEED_ROUTE_DEVICE, dt, augment, tail);
    check_route(dev, have_device, dt, augment); /* decided by the open */
    for (uint32_t e = 0; e < 2; e++) {
        CHECK_INT(detfeed_loader_start(ref, e), 0);
        CHECK_INT(detfeed_loader_start(dev, e), 0);
        if (e == 0)
            check_route(dev, have_device, dt, augment);
        const detfeed_batch *a, *b;
        int ra, rb, batches = 0;
        while ((ra = detfeed_loader_next(ref, &a)) == DETFEED_OK) {
            rb = detfeed_loader_next(dev, &b);
            CHECK_INT(rb, 0);
            if (rb != DETFEED_OK)
                break;
            compare_batch(a, b, have_device);
            detfeed_loader_release(ref, a);
            detfeed_loader_release(dev, b);
            batches++;
        }
        CHECK_INT(ra, 1);
        CHECK_INT(detfeed_loader_next(dev, &b), 1);
        CHECK(batches > 0);
        CHECK_INT(batches, (long long)detfeed_loader_batch_count(ref));
    }
    detfeed_loader_destroy(ref);
    detfeed_loader_destroy(dev);
}

/* Settings out of range are refused; the device route asked for with host
 * output runs the worker route and says why. */
static void check_settings(const char *data)
{
    detfeed_loader *l = NULL;
    CHECK_INT(detfeed_loader_create(&l, 0), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_OUTPUT, 2), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_COLOR, -1), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_CUDA_DEVICE, -1),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set_cuda_stream(NULL, NULL), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_device_bytes(l), 0);
    detfeed_loader_destroy(l);
    /* The kernel's own checks come before any launch; the stub refuses all. */
    _Alignas(16) uint8_t px[16] = {0};
    int want = detfeed_cuda_built() ? DETFEED_EINVAL : DETFEED_ENOTSUPPORTED;
    const detfeed_cv cv = {DETFEED_CV_5_1, DETFEED_CV_CPU_AUTO, 1};
    const detfeed_cv bad_cv = {DETFEED_CV_5_1, (detfeed_cv_cpu)7, 1};
    CHECK_INT(detfeed_cuda_color_convert(NULL, 1, 2, 2, NULL, &cv, px, DETFEED_DTYPE_U8,
                                         DETFEED_SCALE_QUOTIENT, NULL),
              want);
    CHECK_INT(detfeed_cuda_color_convert(px, 0, 2, 2, NULL, &cv, px, DETFEED_DTYPE_U8,
                                         DETFEED_SCALE_QUOTIENT, NULL),
              want);
    CHECK_INT(detfeed_cuda_color_convert(px, 1, 2, 2, NULL, &cv, px, (detfeed_dtype)9,
                                         DETFEED_SCALE_QUOTIENT, NULL),
              want);
    CHECK_INT(detfeed_cuda_color_convert(px, 1, 2, 2, NULL, &cv, px + 1,
                                         DETFEED_DTYPE_U8, DETFEED_SCALE_QUOTIENT,
                                         NULL),
              want); /* 4 pixels: dst must be 4-byte aligned */
    CHECK_INT(detfeed_cuda_color_convert(px, 1, 2, 2, NULL, NULL, px, DETFEED_DTYPE_U8,
                                         DETFEED_SCALE_QUOTIENT, NULL),
              want);
    CHECK_INT(detfeed_cuda_color_convert(px, 1, 2, 2, NULL, &bad_cv, px,
                                         DETFEED_DTYPE_U8, DETFEED_SCALE_QUOTIENT,
                                         NULL),
              want);
    if (data == NULL)
        return;
    l = make(data, DETFEED_OUTPUT_HOST, DETFEED_ROUTE_DEVICE, DETFEED_DTYPE_F32, 1,
             false);
    detfeed_route route;
    const char *why = NULL;
    CHECK_INT(detfeed_loader_route(l, NULL, &route, &why), 0);
    CHECK_INT(route, DETFEED_ROUTE_WORKER);
    CHECK(why != NULL && strstr(why, "CUDA output") != NULL);
    detfeed_loader_destroy(l);
    /* A device that does not exist: host output, with the reason. */
    CHECK_INT(detfeed_loader_create(&l, 0), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_CUDA_DEVICE, 1023), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_OUTPUT, DETFEED_OUTPUT_CUDA), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, 64), 0);
    CHECK_INT(detfeed_loader_route(l, NULL, NULL, NULL), DETFEED_EBADSTATE);
    CHECK_INT(detfeed_loader_open(l, data), 0);
    detfeed_output out;
    CHECK_INT(detfeed_loader_route(l, &out, NULL, &why), 0);
    CHECK_INT(out, DETFEED_OUTPUT_HOST);
    CHECK(why != NULL);
    detfeed_loader_destroy(l);
}

int main(void)
{
    const char *why = NULL;
    int have_device = detfeed_cuda_device_count(&why) > 0;
    printf("test_route: %s\n",
           have_device ? "a CUDA device is present: the kernel's route" : why);
    const char *root = getenv("DETFEED_TEST_DATA");
    char data[4096];
    if (root)
        snprintf(data, sizeof data, "%s/coco8/coco8.yaml", root);
    check_settings(root ? data : NULL);
    if (root == NULL) {
        tu_skip("DETFEED_TEST_DATA not set: the batch comparison");
        return tu_finish("test_route");
    }
    for (int dt = DETFEED_DTYPE_U8; dt <= DETFEED_DTYPE_BF16; dt++)
        compare_epochs(data, have_device, (detfeed_dtype)dt, 1, false);
    compare_epochs(data, have_device, DETFEED_DTYPE_F32, 0, false);
    compare_epochs(data, have_device, DETFEED_DTYPE_F32, 1, true);
    return tu_finish("test_route");
}
