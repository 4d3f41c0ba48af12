/*
 * test_cuda_faults.c - the CUDA part's host code under failures, without a
 * GPU.
 *
 * The program is linked with the library's own objects (the .cu files of
 * src/cuda as nvcc compiled them for the library) and a fake CUDA runtime
 * (fake_cudart.cpp) instead of libcudart: device memory is host memory, no
 * kernel runs, and the test makes chosen CUDA calls fail. Loaders with CUDA
 * output (the device colour route, the recipe route with its arena copied
 * or mapped) are opened, run and destroyed on coco8 (DETFEED_TEST_DATA;
 * without it those parts are skipped, exit 77), and the fake checks:
 *   - no leaks: after detfeed_loader_destroy nothing the fake handed out is
 *     held (device and page-locked memory, events, streams, registrations),
 *     with each CUDA call of the open failing in turn (cudaMalloc at its 1st,
 *     2nd, ... call: the loader falls back, with its reason) and with the
 *     batches' calls failing; and no call used a handle it should not have;
 *   - detfeed_loader_device_bytes is the device memory the open took;
 *   - the happy path: every batch of an epoch in device memory, then the end.
 * Then the failures a review of the CUDA route found (each of these parts
 * failed before its fix; each part prints its verdict): a batch past one
 * launch, a refused release, slots partly page-locked, recipe_cache auto
 * when the copy fails, a failed submit, a device that does not exist, the
 * caller's device not made current again.
 */
#include "fake_cudart.h"
#include "testutil.h"

#include <cuda_runtime_api.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- loaders ---------------------------------------------------------------- */

/* What a case asks of its loader. */
typedef struct setup {
    const char *data;
    detfeed_route colour;
    detfeed_dtype dtype;
    int batch, prefetch, imgsz;
    const char *recipe_cache; /* NULL: the default (auto) */
    int device;
    int cache;   /* the RAM cache (the recipe route needs it) */
    int devices; /* the fake's devices at open (0: as it is) */
} setup;

static setup colour_route(const char *data)
{
    return (setup){.data = data,
                   .colour = DETFEED_ROUTE_DEVICE,
                   .dtype = DETFEED_DTYPE_F32,
                   .batch = 2,
                   .prefetch = 2,
                   .imgsz = 320,
                   .cache = 1};
}

static setup recipe_route(const char *data, const char *recipe_cache)
{
    setup s = colour_route(data);
    s.colour = DETFEED_ROUTE_RECIPE;
    s.recipe_cache = recipe_cache;
    return s;
}

/* The three CUDA routes on `data`: the device colour route, and the recipe
 * route with its arena copied to the device and mapped in place. */
typedef struct routes {
    setup colour, copied, mapped;
} routes;

static routes routes_on(const char *data)
{
    return (routes){colour_route(data), recipe_route(data, "device"),
                    recipe_route(data, "host")};
}

/* A loader with CUDA output, set up as `s` asks, not yet opened. */
static detfeed_loader *create(const setup *s)
{
    detfeed_loader *l = NULL;
    CHECK_INT(detfeed_loader_create(&l, 0), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, s->imgsz), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, s->batch), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_PREFETCH, s->prefetch), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_WORKERS, 2), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_SEED, 7), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_DTYPE, s->dtype), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_OUTPUT, DETFEED_OUTPUT_CUDA), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_COLOR, s->colour), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_CUDA_DEVICE, s->device), 0);
    CHECK_INT(
        detfeed_loader_set_int(l, DETFEED_LOADER_CACHE_BYTES, s->cache ? 1 << 30 : 0),
        0);
    CHECK_INT(detfeed_loader_set(l, "verify_record", "none"), 0);
    if (s->recipe_cache)
        CHECK_INT(detfeed_loader_set(l, "recipe_cache", s->recipe_cache), 0);
    return l;
}

/* create, then detfeed_loader_open: its status into *rc. */
static detfeed_loader *open_loader(const setup *s, int *rc)
{
    detfeed_loader *l = create(s);
    if (s->devices)
        fake_cuda_set_devices(s->devices);
    *rc = detfeed_loader_open(l, s->data);
    return l;
}

/* A fresh fake and the colour route on `data`, batch `batch`, prefetch
 * `prefetch`, opened (checked). */
static detfeed_loader *opened_colour(const char *data, int batch, int prefetch)
{
    fake_cuda_reset();
    setup s = colour_route(data);
    s.batch = batch;
    s.prefetch = prefetch;
    int rc;
    detfeed_loader *l = open_loader(&s, &rc);
    CHECK_INT(rc, 0);
    return l;
}

typedef struct route_info {
    detfeed_output output;
    detfeed_route route;
    const char *why;
} route_info;

static route_info route_of(const detfeed_loader *l)
{
    route_info r = {DETFEED_OUTPUT_HOST, DETFEED_ROUTE_WORKER, NULL};
    CHECK_INT(detfeed_loader_route(l, &r.output, &r.route, &r.why), 0);
    return r;
}

/* Whether `text` holds `word`; says what it holds when not. */
static bool mentions(const char *text, const char *word)
{
    if (text != NULL && strstr(text, word) != NULL)
        return true;
    fprintf(stderr, "  \"%s\" does not mention \"%s\"\n", text ? text : "(null)", word);
    return false;
}

/* Epoch 0 to its end, each batch released at once: the batches that came.
 * A failed next is tolerated (the cases make CUDA fail) until `failures`
 * have come; then the epoch is left. */
static int run_epoch(detfeed_loader *l, int failures)
{
    if (detfeed_loader_start(l, 0) != 0)
        return 0;
    int batches = 0;
    for (size_t k = 0; k < detfeed_loader_batch_count(l) + 2; k++) {
        const detfeed_batch *b = NULL;
        int rc = detfeed_loader_next(l, &b);
        if (rc == DETFEED_NEXT_END)
            break;
        if (rc != 0) {
            if (failures-- <= 0)
                break;
            continue;
        }
        batches++;
        (void)detfeed_loader_release(l, b);
    }
    return batches;
}

/* After a case's loader is destroyed: nothing of the fake is held, and no
 * call used what it should not have. A leak is reported once: the fake
 * then forgets it. */
static void check_clean(const char *what)
{
    const char *misuse = NULL;
    bool released = CHECK_INT(fake_cuda_live_total(), 0);
    bool used = CHECK_INT(fake_cuda_misuse(&misuse), 0);
    if (!released || !used)
        fprintf(stderr, "  after %s%s%s\n", what, misuse ? ": " : "",
                misuse ? misuse : "");
    if (!released) {
        fake_cuda_print(what);
        fake_cuda_forget();
    }
}

/* ---- 0. the fake itself -------------------------------------------------------- */

/* The fake counts what it holds, fails what it is told to, and sees a
 * double free: the checks below are not vacuous. */
static void test_fake(const char *data)
{
    (void)data;
    fake_cuda_reset();
    void *p = NULL, *q = NULL;
    CHECK_INT(cudaMalloc(&p, 100), cudaSuccess);
    CHECK(fake_cuda_is_device(p) && fake_cuda_is_device((char *)p + 99));
    CHECK(!fake_cuda_is_device((char *)p + 100));
    CHECK_INT(fake_cuda_live(FAKE_CUDA_DEVICE_ALLOCS), 1);
    CHECK_INT((long long)fake_cuda_device_bytes(), 100);
    fake_cuda_fail_next("cudaMalloc", 2);
    CHECK_INT(cudaMalloc(&q, 1), cudaSuccess);
    CHECK_INT(cudaMalloc(&q, 1), cudaErrorMemoryAllocation);
    CHECK_INT(cudaGetLastError(), cudaErrorMemoryAllocation);
    CHECK_INT(cudaGetLastError(), cudaSuccess);
    CHECK_INT(fake_cuda_calls("cudaMalloc"), 3);
    CHECK_INT(fake_cuda_live_total(), 2);
    cudaStream_t own = NULL;
    cudaEvent_t ev = NULL;
    CHECK_INT(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking), cudaSuccess);
    CHECK_INT(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), cudaSuccess);
    fake_cuda_fail(
        (fake_cuda_fault){.fn = "cudaEventRecord", .nth = 1, .foreign = true});
    CHECK_INT(cudaEventRecord(ev, own), cudaSuccess);
    CHECK_INT(cudaEventRecord(ev, fake_cuda_consumer_stream(1)),
              cudaErrorInvalidResourceHandle);
    CHECK_INT(cudaEventRecord(ev, NULL), cudaSuccess);
    CHECK_INT(fake_cuda_foreign_calls("cudaEventRecord"), 2);
    CHECK_INT(cudaEventDestroy(ev), cudaSuccess);
    CHECK_INT(cudaStreamDestroy(own), cudaSuccess);
    CHECK_INT(cudaFree(q), cudaSuccess);
    CHECK_INT(cudaFree(p), cudaSuccess);
    CHECK_INT(fake_cuda_misuse(NULL), 0);
    fprintf(stderr, "(a misuse on purpose follows)\n");
    CHECK_INT(cudaFree(p), cudaErrorInvalidValue);
    const char *what = NULL;
    CHECK_INT(fake_cuda_misuse(&what), 1);
    CHECK(what != NULL && strstr(what, "cudaFree") != NULL);
    CHECK_INT(fake_cuda_live_total(), 0);
    fake_cuda_reset();
}

/* ---- 1. no leaks --------------------------------------------------------------- */

/* The loader opens (falling back where CUDA failed, with a reason), runs an
 * epoch and is destroyed with nothing held. */
static void open_run_destroy(const setup *s, const char *what)
{
    int rc;
    detfeed_loader *l = open_loader(s, &rc);
    if (CHECK_INT(rc, 0)) {
        route_info r = route_of(l);
        if (r.output != DETFEED_OUTPUT_CUDA || r.route != s->colour)
            if (!CHECK(r.why != NULL && strlen(r.why) > 10))
                fprintf(stderr, "  %s: a fallback without a reason\n", what);
        run_epoch(l, 8);
    } else {
        fprintf(stderr, "  %s: open failed: %s\n", what, detfeed_loader_last_error(l));
    }
    detfeed_loader_destroy(l);
    check_clean(what);
}

/* Calls of fn a clean open of `s` makes. */
static long calls_at_open(const setup *s, const char *fn)
{
    fake_cuda_reset();
    int rc;
    detfeed_loader *l = open_loader(s, &rc);
    CHECK_INT(rc, 0);
    long n = fake_cuda_calls(fn);
    detfeed_loader_destroy(l);
    check_clean("a clean open");
    return n;
}

/* Each call of fn that the open makes fails in turn. */
static void each_call_of_open_fails(const setup *s, const char *name, const char *fn)
{
    long n = calls_at_open(s, fn);
    CHECK(n > 0 || strcmp(fn, "cudaMalloc") != 0);
    if (n > 0)
        printf("  %s: %s fails at each of its %ld calls of the open\n", name, fn, n);
    for (long k = 1; k <= n; k++) {
        char what[160];
        snprintf(what, sizeof what, "%s, %s failing at its call %ld of %ld", name, fn,
                 k, n);
        fake_cuda_reset();
        fake_cuda_fail_next(fn, (int)k);
        open_run_destroy(s, what);
    }
}

/* cudaMalloc failing while the device colour route is created: host
 * output, with the reason. */
static void malloc_fails_falls_back(const setup *s)
{
    long n = calls_at_open(s, "cudaMalloc");
    for (long k = 1; k <= n; k++) {
        fake_cuda_reset();
        fake_cuda_fail_next("cudaMalloc", (int)k);
        int rc;
        detfeed_loader *l = open_loader(s, &rc);
        if (CHECK_INT(rc, 0)) {
            route_info r = route_of(l);
            CHECK_INT(r.output, DETFEED_OUTPUT_HOST);
            CHECK(r.why != NULL && strlen(r.why) > 10);
            CHECK_INT((long long)detfeed_loader_device_bytes(l), 0);
        }
        detfeed_loader_destroy(l);
        check_clean("cudaMalloc failing in the device colour route's open");
    }
}

/* A case of the batches' calls: `f` fails, and must have come; `with`,
 * when it names a function, is in force too; `prefetch` (0: the setup's). */
typedef struct batch_case {
    fake_cuda_fault f, with;
    int prefetch;
} batch_case;

static void batch_call_fails(const setup *setup_of, const char *name,
                             const batch_case *c)
{
    setup one = *setup_of;
    const setup *s = &one;
    one.prefetch = c->prefetch ? c->prefetch : one.prefetch;
    const fake_cuda_fault *f = &c->f;
    char what[200];
    snprintf(what, sizeof what, "%s, %s failing at its call %d%s%s%s", name, f->fn,
             f->nth, f->foreign ? " on the consumer's stream" : "",
             c->with.fn ? ", with " : "", c->with.fn ? c->with.fn : "");
    fake_cuda_reset();
    fake_cuda_fail(*f);
    if (c->with.fn)
        fake_cuda_fail(c->with);
    open_run_destroy(s, what);
    long reached = f->foreign ? fake_cuda_foreign_calls(f->fn) : fake_cuda_calls(f->fn);
    if (!CHECK(reached >= f->nth))
        fprintf(stderr, "  %s: the call never came\n", what);
}

static void test_no_leaks(const char *data)
{
    routes rt = routes_on(data);
    setup second = recipe_route(data, "device"); /* each call switches devices */
    second.devices = 2;
    second.device = 1;
    const setup *setups[] = {&rt.colour, &rt.copied, &rt.mapped, &second};
    const char *names[] = {"device colour", "recipe, arena copied",
                           "recipe, arena mapped", "recipe on device 1 of 2"};
    int n = (int)(sizeof setups / sizeof setups[0]);
    const char *open_calls[] = {"cudaMalloc",
                                "cudaEventCreateWithFlags",
                                "cudaStreamCreateWithFlags",
                                "cudaSetDevice",
                                "cudaGetDevice",
                                "cudaMemcpy",
                                "cudaHostRegister",
                                "cudaHostGetDevicePointer"};
    for (int i = 0; i < n; i++) {
        fake_cuda_reset();
        open_run_destroy(setups[i], names[i]);
        for (size_t c = 0; c < sizeof open_calls / sizeof open_calls[0]; c++)
            each_call_of_open_fails(setups[i], names[i], open_calls[c]);
    }
    malloc_fails_falls_back(&rt.colour);
    /* The batches' calls. */
    /* Copies that never finish by themselves: with one slot the loader
     * waits for them (cudaEventSynchronize) at the second batch. */
    const fake_cuda_fault running = {.fn = "cudaEventQuery",
                                     .nth = 1,
                                     .times = FAKE_CUDA_ALWAYS,
                                     .error = cudaErrorNotReady};
    const batch_case cases[] = {
        {.f = {.fn = "cudaHostAlloc", .nth = 1}},
        {.f = {.fn = "cudaHostAlloc", .nth = 2}},
        {.f = {.fn = "cudaMemcpyAsync", .nth = 1}},
        {.f = {.fn = "cudaMemcpyAsync", .nth = 2, .times = FAKE_CUDA_ALWAYS}},
        {.f = {.fn = "__cudaLaunchKernel", .nth = 1}},
        {.f = {.fn = "cudaStreamWaitEvent", .nth = 1}},
        {.f = {.fn = "cudaStreamWaitEvent", .nth = 2, .foreign = true}},
        {.f = {.fn = "cudaEventRecord", .nth = 1}},
        {.f = {.fn = "cudaEventRecord", .nth = 1, .foreign = true}},
        {.f = {.fn = "cudaEventQuery", .nth = 1}},
        {.f = running},
        {.f = {.fn = "cudaEventSynchronize", .nth = 1}, .with = running, .prefetch = 1},
        {.f = running, .prefetch = 1},
        {.f = {.fn = "cudaStreamSynchronize", .nth = 1}},
        {.f = {.fn = "cudaGetDevice", .nth = 1, .times = 3}},
        {.f = {.fn = "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
               .nth = 1}},
    };
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            batch_call_fails(setups[i], names[i], &cases[k]);
}

/* ---- 2. device bytes ------------------------------------------------------------ */

/* detfeed_loader_device_bytes is what the open holds in the fake. */
static void check_device_bytes(const setup *s, const char *what, detfeed_output output,
                               detfeed_route route)
{
    uint64_t before = fake_cuda_device_bytes();
    int rc;
    detfeed_loader *l = open_loader(s, &rc);
    if (CHECK_INT(rc, 0)) {
        uint64_t took = fake_cuda_device_bytes() - before;
        route_info r = route_of(l);
        CHECK_INT(r.output, output);
        CHECK_INT(r.route, route);
        if (!CHECK_INT((long long)detfeed_loader_device_bytes(l), (long long)took))
            fprintf(stderr, "  %s\n", what);
        CHECK(output == DETFEED_OUTPUT_HOST || took > 0);
    }
    detfeed_loader_destroy(l);
    check_clean(what);
}

static void test_device_bytes(const char *data)
{
    routes rt = routes_on(data);
    fake_cuda_reset();
    check_device_bytes(&rt.colour, "the device colour route", DETFEED_OUTPUT_CUDA,
                       DETFEED_ROUTE_DEVICE);
    check_device_bytes(&rt.copied, "the recipe route, arena copied",
                       DETFEED_OUTPUT_CUDA, DETFEED_ROUTE_RECIPE);
    check_device_bytes(&rt.mapped, "the recipe route, arena mapped",
                       DETFEED_OUTPUT_CUDA, DETFEED_ROUTE_RECIPE);
    fake_cuda_fail_next("cudaHostRegister", 1);
    check_device_bytes(&rt.mapped,
                       "the recipe route falling back (registration failed)",
                       DETFEED_OUTPUT_CUDA, DETFEED_ROUTE_DEVICE);
    fake_cuda_reset();
    fake_cuda_fail_next("cudaMemcpy", 1);
    check_device_bytes(&rt.copied, "the recipe route falling back (arena copy failed)",
                       DETFEED_OUTPUT_CUDA, DETFEED_ROUTE_DEVICE);
    fake_cuda_reset();
    fake_cuda_fail_next("cudaMalloc", 1);
    check_device_bytes(&rt.colour, "host output (cudaMalloc failed)",
                       DETFEED_OUTPUT_HOST, DETFEED_ROUTE_WORKER);
}

/* ---- 3. the happy path ----------------------------------------------------------- */

/* Every batch of epoch 0 in device memory, released; then the end. */
static void happy_epoch(const setup *s, const char *what)
{
    fake_cuda_reset();
    int rc;
    detfeed_loader *l = open_loader(s, &rc);
    if (!CHECK_INT(rc, 0)) {
        detfeed_loader_destroy(l);
        return;
    }
    route_info r = route_of(l);
    CHECK_INT(r.output, DETFEED_OUTPUT_CUDA);
    CHECK_INT(r.route, s->colour);
    CHECK(r.why == NULL);
    CHECK_INT(detfeed_loader_start(l, 0), 0);
    size_t n = detfeed_loader_batch_count(l);
    CHECK(n >= 2);
    for (size_t k = 0; k < n; k++) {
        const detfeed_batch *b = NULL;
        if (!CHECK_INT(detfeed_loader_next(l, &b), 0))
            break;
        size_t bytes = 0;
        const void *dev = detfeed_batch_cuda_images(b, &bytes);
        CHECK(dev != NULL && fake_cuda_is_device(dev));
        CHECK(bytes > 0);
        CHECK(detfeed_batch_images(b, NULL) == NULL);
        CHECK(detfeed_batch_cuda_event(b) != NULL);
        CHECK_INT((long long)detfeed_batch_index(b), (long long)k);
        CHECK_INT(detfeed_loader_release(l, b), 0);
    }
    const detfeed_batch *b = NULL;
    CHECK_INT(detfeed_loader_next(l, &b), DETFEED_NEXT_END);
    CHECK_INT(fake_cuda_calls("__cudaLaunchKernel"), (long long)n);
    CHECK_INT(fake_cuda_calls("cudaMemcpyAsync"), (long long)n);
    const char *why = NULL;
    CHECK_INT(detfeed_loader_pinned(l, &why), 1);
    detfeed_loader_destroy(l);
    check_clean(what);
}

static void test_happy_path(const char *data)
{
    routes rt = routes_on(data);
    happy_epoch(&rt.colour, "the device colour route's epoch");
    happy_epoch(&rt.copied, "the recipe route's epoch, arena copied");
    happy_epoch(&rt.mapped, "the recipe route's epoch, arena mapped");
}

/* ================================================================================
 * The failures a review of the CUDA route found: each part below failed
 * before its fix.
 * ================================================================================ */

/* ---- 4. a batch larger than one launch takes ----------------------------------- */

/* A list naming one tiny PNG `n` times, in a new folder *root; the list's
 * path into list. */
static bool one_image_list(char *root, size_t root_size, char *list, size_t list_size,
                           int n)
{
    if (tu_temp_dir(root, root_size, "cuda-faults") == NULL)
        return false;
    char p[512];
    snprintf(p, sizeof p, "%s/images", root);
    CHECK_INT(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/labels", root);
    CHECK_INT(mkdir(p, 0755), 0);
    uint8_t px[16 * 16 * 3];
    for (size_t k = 0; k < sizeof px; k++)
        px[k] = (uint8_t)(k * 37);
    detfeed_codec *codec = NULL;
    CHECK_INT(detfeed_codec_create(&codec, 0), 0);
    CHECK_INT(detfeed_codec_write_png(codec, tu_at(root, "images/one.png"), px, 16 * 3,
                                      16, 16),
              0);
    detfeed_codec_destroy(codec);
    tu_write_text(tu_at(root, "labels/one.txt"), "0 0.5 0.5 0.25 0.25\n");
    snprintf(list, list_size, "%s/list.txt", root);
    FILE *f = fopen(list, "w");
    if (!CHECK(f != NULL))
        return false;
    for (int k = 0; k < n; k++)
        fputs("./images/one.png\n", f);
    return CHECK_INT(fclose(f), 0);
}

static void test_batch_65536(void)
{
    char root[256], list[512];
    if (!one_image_list(root, sizeof root, list, sizeof list, 65536))
        return;
    fake_cuda_reset();
    setup s = {.data = list,
               .colour = DETFEED_ROUTE_WORKER,
               .dtype = DETFEED_DTYPE_U8,
               .batch = 65536,
               .prefetch = 1,
               .imgsz = 32};
    int rc;
    detfeed_loader *l = open_loader(&s, &rc);
    if (CHECK_INT(rc, 0)) {
        CHECK_INT((long long)detfeed_loader_batch_count(l), 1);
        route_info r = route_of(l);
        CHECK_INT(r.output, DETFEED_OUTPUT_HOST);
        CHECK(mentions(r.why, "65535"));
        CHECK_INT((long long)detfeed_loader_device_bytes(l), 0);
    } else {
        fprintf(stderr, "  open: %s\n", detfeed_loader_last_error(l));
    }
    detfeed_loader_destroy(l);
    check_clean("batch 65536");
    CHECK(tu_remove_tree(root));
}

/* ---- 5. the consumer's stream refuses the release's record ------------------------
 */

static void test_release_record_fails(const char *data)
{
    detfeed_loader *l = opened_colour(data, 1, 2);
    void *consumer = fake_cuda_consumer_stream(0);
    CHECK_INT(detfeed_loader_set_cuda_stream(l, consumer), 0);
    CHECK_INT(detfeed_loader_start(l, 0), 0);
    const detfeed_batch *b = NULL;
    if (CHECK_INT(detfeed_loader_next(l, &b), 0)) {
        long synced = fake_cuda_foreign_calls("cudaStreamSynchronize");
        long recorded = fake_cuda_foreign_calls("cudaEventRecord");
        fake_cuda_fail(
            (fake_cuda_fault){.fn = "cudaEventRecord", .nth = 1, .foreign = true});
        CHECK_INT(detfeed_loader_release(l, b), DETFEED_ECUDA);
        CHECK(mentions(detfeed_loader_last_error(l), "release"));
        CHECK_INT(fake_cuda_foreign_calls("cudaEventRecord"),
                  recorded + 1); /* failed */
        CHECK(fake_cuda_foreign_calls("cudaStreamSynchronize") > synced);
        if (CHECK_INT(detfeed_loader_next(l, &b), 0)) {
            CHECK(detfeed_batch_cuda_images(b, NULL) != NULL);
            CHECK_INT(detfeed_loader_release(l, b), 0);
        }
    }
    detfeed_loader_destroy(l);
    check_clean("a refused release");
}

/* ---- 6. pinned only when every slot is ---------------------------------------------
 */

static void test_pinned_partial(const char *data)
{
    detfeed_loader *l = opened_colour(data, 2, 3);
    fake_cuda_fail_next("cudaHostAlloc", 2);
    CHECK_INT(detfeed_loader_start(l, 0), 0);
    CHECK(fake_cuda_calls("cudaHostAlloc") >= 2);
    const char *why = NULL;
    CHECK_INT(detfeed_loader_pinned(l, &why), 0);
    CHECK(why != NULL);
    run_epoch(l, 0);
    detfeed_loader_destroy(l);
    check_clean("a slot not pinned");
}

/* ---- 6b. host output page-locks only with pin_memory 1 -----------------------------
 */

static void test_pin_memory(const char *data)
{
    for (int pin = 0; pin <= 1; pin++) {
        fake_cuda_reset();
        setup s = colour_route(data);
        s.colour = DETFEED_ROUTE_WORKER;
        detfeed_loader *l = create(&s);
        CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_OUTPUT, DETFEED_OUTPUT_HOST),
                  0);
        CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_PIN_MEMORY, pin), 0);
        CHECK_INT(detfeed_loader_open(l, data), 0);
        CHECK(run_epoch(l, 0) >= 2);
        const char *why = NULL;
        CHECK_INT(detfeed_loader_pinned(l, &why), pin);
        CHECK_INT(fake_cuda_calls("cudaHostAlloc"), pin ? s.prefetch : 0);
        if (pin == 0) {
            CHECK(mentions(why, "pin_memory"));
            CHECK_INT(fake_cuda_calls(NULL), 0); /* not one CUDA call */
        }
        detfeed_loader_destroy(l);
        check_clean(pin ? "host output, pin_memory 1" : "host output, pin_memory 0");
    }
}

/* ---- 7. recipe_cache auto: the copy fails, the arena is mapped ----------------------
 */

static void test_recipe_auto_maps(const char *data)
{
    setup s = recipe_route(data, "auto");
    long n = calls_at_open(&s, "cudaMalloc"); /* the last one: the arena's copy */
    fake_cuda_reset();
    fake_cuda_set_memory(1ull << 40); /* plenty free: auto chooses the copy */
    fake_cuda_fail_next("cudaMalloc", (int)n);
    uint64_t before = fake_cuda_device_bytes();
    int rc;
    detfeed_loader *l = open_loader(&s, &rc);
    if (CHECK_INT(rc, 0)) {
        route_info r = route_of(l);
        CHECK_INT(r.output, DETFEED_OUTPUT_CUDA);
        CHECK_INT(r.route, DETFEED_ROUTE_RECIPE);
        CHECK_INT(fake_cuda_calls("cudaHostRegister"), 1);
        CHECK_INT(fake_cuda_live(FAKE_CUDA_REGISTERED), 1);
        CHECK_INT((long long)detfeed_loader_device_bytes(l),
                  (long long)(fake_cuda_device_bytes() - before));
        CHECK(run_epoch(l, 0) >= 2);
    }
    detfeed_loader_destroy(l);
    check_clean("recipe_cache auto, the copy failing");
}

/* ---- 8. a failed submit ends the epoch ----------------------------------------------
 */

/* The second batch's submit fails (fn's call 2): that next and every later
 * one of the epoch fail with its status; the next epoch runs. */
static void failed_submit(const char *data, const char *fn)
{
    detfeed_loader *l = opened_colour(data, 1, 2);
    CHECK(detfeed_loader_batch_count(l) >= 3);
    fake_cuda_fail_next(fn, 2);
    CHECK_INT(detfeed_loader_start(l, 0), 0);
    const detfeed_batch *b = NULL;
    if (CHECK_INT(detfeed_loader_next(l, &b), 0))
        CHECK_INT(detfeed_loader_release(l, b), 0);
    int failed = detfeed_loader_next(l, &b);
    if (!CHECK(failed < 0))
        fprintf(stderr, "  %s failing: the batch came all the same\n", fn);
    for (size_t k = 2; k < detfeed_loader_batch_count(l) + 1; k++) {
        int rc = detfeed_loader_next(l, &b);
        if (!CHECK_INT(rc, failed))
            fprintf(stderr, "  %s failing: next call %zu of the epoch\n", fn, k + 1);
        if (rc == 0)
            detfeed_loader_release(l, b);
    }
    CHECK_INT(detfeed_loader_start(l, 1), 0);
    if (CHECK_INT(detfeed_loader_next(l, &b), 0))
        CHECK_INT(detfeed_loader_release(l, b), 0);
    detfeed_loader_destroy(l);
    check_clean("a failed submit");
}

static void test_failed_submit(const char *data)
{
    failed_submit(data, "cudaMemcpyAsync");
    failed_submit(data, "__cudaLaunchKernel");
}

/* ---- 9. a device that does not exist ------------------------------------------------
 */

static void test_missing_device(const char *data)
{
    fake_cuda_reset();
    fake_cuda_set_devices(1);
    setup s = colour_route(data);
    s.device = 3;
    int rc;
    detfeed_loader *l = open_loader(&s, &rc);
    if (CHECK_INT(rc, 0)) {
        route_info r = route_of(l);
        CHECK_INT(r.output, DETFEED_OUTPUT_HOST);
        CHECK(mentions(r.why, "3"));
        CHECK(mentions(r.why, "1"));
    }
    detfeed_loader_destroy(l);
    check_clean("cuda_device 3 of 1");
}

/* ---- 10. the caller's device put back ----------------------------------------------
 */

/* Epoch `epoch` of l: its first batch taken, then the nth cudaSetDevice
 * from `at` on fails ("next": before the next batch, "release": before the
 * first one's release); the next batch must fail, saying so, with the
 * calling thread left on device 1 (then set back to 0 here). */
static void device_not_put_back(detfeed_loader *l, uint32_t epoch, const char *at,
                                int nth)
{
    int dev = -1;
    const detfeed_batch *b = NULL;
    CHECK_INT(detfeed_loader_start(l, epoch), 0);
    if (!CHECK_INT(detfeed_loader_next(l, &b), 0))
        return;
    if (strcmp(at, "release") == 0)
        fake_cuda_fail_next("cudaSetDevice", nth);
    CHECK_INT(detfeed_loader_release(l, b), 0);
    if (strcmp(at, "next") == 0)
        fake_cuda_fail_next("cudaSetDevice", nth);
    if (!CHECK_INT(detfeed_loader_next(l, &b), DETFEED_ECUDA))
        fprintf(stderr, "  cudaSetDevice %d from the %s failing\n", nth, at);
    CHECK(mentions(detfeed_loader_last_error(l), "made current again"));
    CHECK_INT(cudaGetDevice(&dev), cudaSuccess);
    CHECK_INT(dev, 1);
    CHECK_INT(cudaSetDevice(0), cudaSuccess);
}

/* The loader on device 1 of 2, the caller on device 0: each call makes
 * device 1 current and device 0 again after. When that second cudaSetDevice
 * fails, the batch fails and says so (it was taken as done, the caller's
 * thread left on device 1): at the submit of next (its 2nd call), and, since
 * a release reports only its record of the stream, at the next submit after
 * the release's own (2nd) or its copy_done's (4th). */
static void test_device_put_back(const char *data)
{
    fake_cuda_reset();
    setup s = colour_route(data);
    s.device = 1;
    s.devices = 2;
    int rc, dev = -1;
    detfeed_loader *l = open_loader(&s, &rc);
    if (CHECK_INT(rc, 0) && CHECK_INT(route_of(l).output, DETFEED_OUTPUT_CUDA) &&
        CHECK(detfeed_loader_batch_count(l) >= 2)) {
        CHECK_INT(cudaGetDevice(&dev), cudaSuccess);
        CHECK_INT(dev, 0);
        CHECK_INT(detfeed_loader_start(l, 0), 0);
        const detfeed_batch *b = NULL;
        long set = fake_cuda_calls("cudaSetDevice");
        if (CHECK_INT(detfeed_loader_next(l, &b), 0))
            CHECK_INT(detfeed_loader_release(l, b), 0);
        CHECK(fake_cuda_calls("cudaSetDevice") >= set + 2);
        CHECK_INT(cudaGetDevice(&dev), cudaSuccess);
        CHECK_INT(dev, 0);
        device_not_put_back(l, 1, "next", 2);
        device_not_put_back(l, 2, "release", 2);
        device_not_put_back(l, 3, "release", 4);
    }
    detfeed_loader_destroy(l);
    check_clean("the caller's device not put back");
}

/* ---- main
 * ---------------------------------------------------------------------------- */

/* Runs one part and prints its verdict. */
static void part(const char *name, void (*fn)(const char *), const char *data)
{
    int before = tu_failures();
    fn(data);
    int failed = tu_failures() - before;
    printf("%-32s %s", name, failed ? "FAIL" : "ok");
    if (failed)
        printf(" (%d checks)", failed);
    printf("\n");
    fflush(stdout);
}

static void batch_65536(const char *data)
{
    (void)data;
    test_batch_65536();
}

int main(void)
{
    CHECK_INT(detfeed_cuda_built(), 1);
    const char *why = NULL;
    CHECK_INT(detfeed_cuda_device_count(&why), 1); /* the fake's */
    const char *root = getenv("DETFEED_TEST_DATA");
    char data[4096];
    snprintf(data, sizeof data, "%s/coco8/coco8.yaml", root ? root : ".");
    FILE *f = root ? fopen(data, "r") : NULL;
    if (f)
        fclose(f);
    part("the fake itself", test_fake, NULL);
    if (f) {
        part("no leaks", test_no_leaks, data);
        part("device bytes", test_device_bytes, data);
        part("happy path", test_happy_path, data);
    } else {
        tu_skip("no coco8 under DETFEED_TEST_DATA: the loaders on coco8");
    }
    printf("-- the review's failures:\n");
    part("batch 65536", batch_65536, NULL);
    if (f) {
        part("release refused", test_release_record_fails, data);
        part("pinned, a slot not", test_pinned_partial, data);
        part("pin_memory", test_pin_memory, data);
        part("recipe_cache auto maps", test_recipe_auto_maps, data);
        part("failed submit ends epoch", test_failed_submit, data);
        part("missing device", test_missing_device, data);
        part("caller's device put back", test_device_put_back, data);
    }
    return tu_finish("test_cuda_faults");
}
