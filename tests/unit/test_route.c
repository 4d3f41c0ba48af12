/*
 * test_route.c - the routes and outputs give the same bytes.
 *
 * A loader asked for CUDA output and the device colour route, or the device
 * recipe route, is compared, batch by batch, with the plain worker route
 * into host memory: every image byte (read back with
 * detfeed_batch_copy_images) and every label array, in all four dtypes, in
 * training and validation; the recipe route also under every OpenCV stack,
 * both Ultralytics versions and a hyperparameter set with MixUp, rotation,
 * shear, perspective and vertical flips, on detection, segmentation and
 * pose data. Without a CUDA device this checks the fallback (host output,
 * worker colour, a reason); with one it checks the kernel's route, which one
 * ran, and that the recipe kernel made every sample. The route is known from
 * detfeed_loader_open on (EBADSTATE before it). Needs the shared data
 * (DETFEED_TEST_DATA); without it only the settings are checked.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

/* `tail`: imgsz 480 under OpenCV 5.1 on its AVX-512 path, whose HSV->BGR
 * blocks of 64 leave a 32-column scalar tail in every row (320 leaves
 * none), so that the device route's colour after the workers' flips is
 * checked where colour and a mirror do not commute. `set`: more settings,
 * name and value pairs ending in NULL (or NULL), applied last. */
static detfeed_loader *make(const char *data, int output, int colour, detfeed_dtype dt,
                            int augment, bool tail, const char *const *set)
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
    for (int k = 0; set && set[k]; k += 2)
        CHECK_INT(detfeed_loader_set(l, set[k], set[k + 1]), 0);
    CHECK_INT(detfeed_loader_open(l, data), 0);
    return l;
}

/* The route the rules give for `colour` asked with CUDA output. */
static detfeed_route route_wanted(int have_device, int colour, detfeed_dtype dt,
                                  int augment)
{
    if (!have_device || !augment)
        return DETFEED_ROUTE_WORKER;
    if (colour == DETFEED_ROUTE_RECIPE)
        return DETFEED_ROUTE_RECIPE;
    return dt != DETFEED_DTYPE_U8 ? DETFEED_ROUTE_DEVICE : DETFEED_ROUTE_WORKER;
}

/* The route in effect is the one the rules give. */
static void check_route(const detfeed_loader *l, int have_device, int colour,
                        detfeed_dtype dt, int augment)
{
    detfeed_output out;
    detfeed_route route;
    const char *why = "unset";
    CHECK_INT(detfeed_loader_route(l, &out, &route, &why), 0);
    detfeed_route want = route_wanted(have_device, colour, dt, augment);
    CHECK_INT(out, have_device ? DETFEED_OUTPUT_CUDA : DETFEED_OUTPUT_HOST);
    CHECK_INT(route, want);
    CHECK(want != DETFEED_ROUTE_WORKER ? why == NULL : why != NULL && strlen(why) > 10);
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

/* Two epochs (the second without Mosaic when `set` closes it) of the
 * route `colour` with CUDA output against the worker route's host batches. */
static void compare_epochs(const char *data, int have_device, int colour,
                           detfeed_dtype dt, int augment, bool tail,
                           const char *const *set)
{
    detfeed_loader *ref =
        make(data, DETFEED_OUTPUT_HOST, DETFEED_ROUTE_WORKER, dt, augment, tail, set);
    detfeed_loader *dev =
        make(data, DETFEED_OUTPUT_CUDA, colour, dt, augment, tail, set);
    check_route(dev, have_device, colour, dt, augment); /* decided by the open */
    int64_t samples = 0;
    for (uint32_t e = 0; e < 2; e++) {
        CHECK_INT(detfeed_loader_start(ref, e), 0);
        CHECK_INT(detfeed_loader_start(dev, e), 0);
        if (e == 0)
            check_route(dev, have_device, colour, dt, augment);
        const detfeed_batch *a, *b;
        int ra, rb, batches = 0;
        while ((ra = detfeed_loader_next(ref, &a)) == DETFEED_OK) {
            rb = detfeed_loader_next(dev, &b);
            CHECK_INT(rb, 0);
            if (rb != DETFEED_OK)
                break;
            compare_batch(a, b, have_device);
            samples += detfeed_batch_size(a, NULL, NULL);
            detfeed_loader_release(ref, a);
            detfeed_loader_release(dev, b);
            batches++;
        }
        CHECK_INT(ra, 1);
        CHECK_INT(detfeed_loader_next(dev, &b), 1);
        CHECK(batches > 0);
        CHECK_INT(batches, (long long)detfeed_loader_batch_count(ref));
    }
    /* Every image is in the RAM cache: the kernel made every sample. */
    bool recipe =
        route_wanted(have_device, colour, dt, augment) == DETFEED_ROUTE_RECIPE;
    CHECK_INT(detfeed_loader_device_made(dev), recipe ? samples : 0);
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
             false, NULL);
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

/* The recipe route against the worker route: every OpenCV stack and
 * Ultralytics version, the default and a heavy hyperparameter set, four
 * dtypes, detection, segmentation and pose data, and the refusals. */
static void recipe_routes(const char *root, int have_device)
{
    static const char *const stacks[][8] = {
        {"opencv", "4", "ultralytics", "8.3", NULL},
        {"opencv", "4", "ultralytics", "8.4", NULL},
        {"opencv", "5.0", "opencv_cpu", "avx2", NULL},
        {"opencv", "5.0", "opencv_cpu", "sse", NULL},
        {"opencv", "5.1", "opencv_ipp", "1", NULL},
        {"opencv", "5.1", "opencv_ipp", "0", NULL},
    };
    static const char *const heavy[] = {
        "mixup",  "0.7",       "degrees", "12",          "shear",
        "4",      "translate", "0.2",     "perspective", "0.0007",
        "flipud", "0.4",       "scale",   "0.7",         "close_mosaic",
        "1",      "epochs",    "2",       NULL};
    static const char *const sets[] = {"coco8/coco8.yaml", "coco8-seg/coco8-seg.yaml",
                                       "coco8-pose/coco8-pose.yaml"};
    char data[4096], *set[32];
    for (size_t d = 0; d < sizeof sets / sizeof sets[0]; d++) {
        snprintf(data, sizeof data, "%s/%s", root, sets[d]);
        for (size_t k = 0; k < sizeof stacks / sizeof stacks[0]; k++) {
            for (int h = 0; h < 2; h++) {
                int n = 0;
                for (int i = 0; stacks[k][i]; i++)
                    set[n++] = (char *)stacks[k][i];
                for (int i = 0; h && heavy[i]; i++)
                    set[n++] = (char *)heavy[i];
                set[n] = NULL;
                detfeed_dtype dt = (detfeed_dtype)((k + h) % 4);
                compare_epochs(data, have_device, DETFEED_ROUTE_RECIPE, dt, 1, h == 0,
                               (const char *const *)set);
            }
        }
    }
    snprintf(data, sizeof data, "%s/coco8/coco8.yaml", root);
    /* The cache read where it is (page-locked, mapped), and copied. */
    static const char *const in_host[] = {"recipe_cache", "host", "mixup", "0.5", NULL};
    static const char *const on_device[] = {"recipe_cache", "device", NULL};
    compare_epochs(data, have_device, DETFEED_ROUTE_RECIPE, DETFEED_DTYPE_F16, 1, false,
                   in_host);
    compare_epochs(data, have_device, DETFEED_ROUTE_RECIPE, DETFEED_DTYPE_F32, 1, true,
                   on_device);
    compare_epochs(data, have_device, DETFEED_ROUTE_RECIPE, DETFEED_DTYPE_F32, 0, false,
                   NULL); /* validation: the worker route, with a reason */
    /* Without the RAM cache: the device colour route, with the reason. */
    static const char *const no_cache[] = {"cache_bytes", "0", "cache", "none", NULL};
    detfeed_loader *l = make(data, DETFEED_OUTPUT_CUDA, DETFEED_ROUTE_RECIPE,
                             DETFEED_DTYPE_F16, 1, false, no_cache);
    detfeed_route route;
    const char *why = NULL;
    CHECK_INT(detfeed_loader_route(l, NULL, &route, &why), 0);
    CHECK_INT(route, have_device ? DETFEED_ROUTE_DEVICE : DETFEED_ROUTE_WORKER);
    CHECK(why != NULL && (!have_device || strstr(why, "RAM cache") != NULL));
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
        compare_epochs(data, have_device, DETFEED_ROUTE_DEVICE, (detfeed_dtype)dt, 1,
                       false, NULL);
    compare_epochs(data, have_device, DETFEED_ROUTE_DEVICE, DETFEED_DTYPE_F32, 0, false,
                   NULL);
    compare_epochs(data, have_device, DETFEED_ROUTE_DEVICE, DETFEED_DTYPE_F32, 1, true,
                   NULL);
    recipe_routes(root, have_device);
    return tu_finish("test_route");
}
