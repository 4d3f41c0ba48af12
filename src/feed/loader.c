/*
 * loader.c - the detfeed_loader handle: its settings that are not numbers
 * (the numeric ones, with their defaults, are loader_set.c's), opening a
 * dataset and its cache (with the plan of its samples and the route of its
 * batches fixed there), and the batch calls, which the epochs' machinery
 * (epoch.c) serves. Single samples are in sample.c.
 */
#include "loader_internal.h"

#include "core/npsort.h"
#include "loader_set.h"

#include "data/dataset_access.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int detfeed_loader_create(detfeed_loader **out, uint32_t flags)
{
    if (out == NULL)
        return DETFEED_EINVAL;
    *out = NULL;
    if (flags != 0)
        return DETFEED_EINVAL;
    detfeed_loader *l = calloc(1, sizeof *l);
    if (l == NULL)
        return DETFEED_ENOMEM;
    detfeed__loader_defaults(l);
    detfeed__clock_init(&l->clock);
    detfeed__progress_init(&l->progress);
    strcpy(l->split, "train");
    *out = l;
    return DETFEED_OK;
}

void detfeed_loader_destroy(detfeed_loader *l)
{
    if (l == NULL)
        return;
    detfeed__epochs_destroy(l->batches);
    detfeed__route_close(l->route);
    detfeed__scratch_free(&l->scratch);
    detfeed__recent_destroy(l->aug.recent);
    free(l->rect);
    free(l->rect_order);
    free(l->classes);
    detfeed_cache_destroy(l->cache);
    detfeed_disk_cache_destroy(l->disk);
    free(l->cache_path);
    free(l->datasets_dir);
    detfeed__loader_verify_free(l);
    detfeed_dataset_destroy(l->ds);
    free(l);
}

const char *detfeed_loader_progress(const detfeed_loader *l, uint64_t *done,
                                    uint64_t *total)
{
    return detfeed__progress_read(l ? &l->progress : NULL, done, total);
}

const char *detfeed_loader_last_error(const detfeed_loader *l)
{
    return l ? l->msg.text : "no loader";
}

bool detfeed__loader_is_open(const detfeed_loader *l)
{
    return l->opened && !l->open_failed;
}

int detfeed__loader_need_open(detfeed_loader *l, const char *what)
{
    if (l->open_failed)
        return detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                             "the loader failed to open (%s): only "
                             "detfeed_loader_destroy is left",
                             l->open_msg.text);
    return detfeed__loader_is_open(l)
               ? DETFEED_OK
               : detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                               "%s: the loader is not open (detfeed_loader_open)",
                               what);
}

int detfeed_loader_set_classes(detfeed_loader *l, const int *ids, size_t n)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (ids == NULL && n > 0)
        return detfeed__fail(&l->msg, DETFEED_EINVAL,
                             "classes: ids is NULL with n = %zu", n);
    if (l->opened)
        return detfeed__loader_refuse_set(l, "classes");
    for (size_t k = 0; k < n; k++)
        if (ids[k] < 0)
            return detfeed__fail(&l->msg, DETFEED_EINVAL,
                                 "classes: %d is negative; class ids are >= 0", ids[k]);
    int *copy = n ? malloc(n * sizeof *copy) : NULL;
    if (n && copy == NULL)
        return detfeed__fail(&l->msg, DETFEED_ENOMEM, "out of memory");
    if (n)
        memcpy(copy, ids, n * sizeof *copy);
    free(l->classes);
    l->classes = copy;
    l->nclasses = n;
    return DETFEED_OK;
}

int detfeed_loader_set_split(detfeed_loader *l, const char *split)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (split == NULL ||
        (strcmp(split, "train") && strcmp(split, "val") && strcmp(split, "test")))
        return detfeed__fail(&l->msg, DETFEED_EINVAL,
                             "split: '%s' is not one of train, val, test",
                             split ? split : "(NULL)");
    if (l->opened)
        return detfeed__loader_refuse_set(l, "split");
    strcpy(l->split, split);
    return DETFEED_OK;
}

int detfeed_loader_set_cache_path(detfeed_loader *l, const char *path)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (l->opened)
        return detfeed__loader_refuse_set(l, "cache_path");
    char *copy = NULL;
    if (path && path[0] && (copy = malloc(strlen(path) + 1)) == NULL)
        return detfeed__fail(&l->msg, DETFEED_ENOMEM, "out of memory");
    if (copy)
        strcpy(copy, path);
    free(l->cache_path);
    l->cache_path = copy;
    return DETFEED_OK;
}

int detfeed_loader_set_policy(detfeed_loader *l, detfeed_policy policy)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (policy != DETFEED_POLICY_SKIP && policy != DETFEED_POLICY_FAIL)
        return detfeed__fail(&l->msg, DETFEED_EINVAL,
                             "policy: %d is not DETFEED_POLICY_SKIP (0) or "
                             "DETFEED_POLICY_FAIL (1)",
                             (int)policy);
    if (l->opened)
        return detfeed__loader_refuse_set(l, "policy");
    l->policy = policy;
    return DETFEED_OK;
}

/* Rect mode (Ultralytics' set_rectangle): images ordered by aspect ratio
 * h / w (np.argsort as the numpy_sort setting's NumPy sorts the float64
 * ratios), cut into batches; each batch's shape from its ratios.
 * detfeed_loader_set_rect_order hands over another order. */

static double aspect_ratio(const detfeed_loader *l, size_t i)
{
    int w = 1, h = 1;
    detfeed_dataset_image_size(l->ds, i, &w, &h);
    return (double)h / w;
}

/* Each image's batch shape from l->rect_order (set_rectangle's loop; pad
 * 0.5 in validation, 0 in training). */
static void rect_batches(detfeed_loader *l)
{
    size_t n = detfeed_dataset_size(l->ds);
    for (size_t b0 = 0; b0 < n; b0 += (size_t)l->batch) {
        size_t b1 = b0 + (size_t)l->batch < n ? b0 + (size_t)l->batch : n;
        double mini = aspect_ratio(l, l->rect_order[b0]), maxi = mini;
        for (size_t p = b0 + 1; p < b1; p++) {
            double ar = aspect_ratio(l, l->rect_order[p]);
            mini = ar < mini ? ar : mini;
            maxi = ar > maxi ? ar : maxi;
        }
        double shape[2] = {1, 1};
        if (maxi < 1)
            shape[0] = maxi;
        else if (mini > 1)
            shape[1] = 1 / mini;
        int hw[2];
        double pad = l->augment ? 0.0 : 0.5; /* build_yolo_dataset's */
        for (int k = 0; k < 2; k++)
            hw[k] = (int)ceil(shape[k] * l->imgsz / 32 + pad) * 32;
        for (size_t p = b0; p < b1; p++)
            memcpy(l->rect[l->rect_order[p]], hw, sizeof hw);
    }
}

static int rect_shapes(detfeed_loader *l)
{
    size_t n = detfeed_dataset_size(l->ds);
    if (n > INT_MAX)
        return detfeed__fail(&l->msg, DETFEED_ELIMIT,
                             "rect batches: %zu images, more than %d", n, INT_MAX);
    double *ar = malloc((n ? n : 1) * sizeof *ar);
    int *order = malloc((n ? n : 1) * sizeof *order);
    l->rect = malloc((n ? n : 1) * sizeof *l->rect);
    l->rect_order = malloc((n ? n : 1) * sizeof *l->rect_order);
    int rc = ar && order && l->rect && l->rect_order ? DETFEED_OK : DETFEED_ENOMEM;
    for (size_t i = 0; rc == DETFEED_OK && i < n; i++)
        ar[i] = aspect_ratio(l, i);
    if (rc == DETFEED_OK)
        rc = detfeed__np_argsort(ar, DETFEED_NUMPY_FLOAT64, (int)n, order,
                                 (detfeed_numpy_sort)l->numpy_sort);
    for (size_t p = 0; rc == DETFEED_OK && p < n; p++)
        l->rect_order[p] = (uint64_t)order[p];
    free(ar);
    free(order);
    if (rc != DETFEED_OK)
        return detfeed__fail(&l->msg, rc, "out of memory");
    rect_batches(l);
    return DETFEED_OK;
}

/* Whether every image has one rect shape (rect training then shuffles, as
 * Ultralytics' loader keeps shuffle on). */
static bool same_shapes(const detfeed_loader *l)
{
    size_t n = detfeed_dataset_size(l->ds);
    for (size_t i = 1; i < n; i++)
        if (memcmp(l->rect[i], l->rect[0], sizeof l->rect[0]) != 0)
            return false;
    return true;
}

int detfeed_loader_set_rect_order(detfeed_loader *l, const uint64_t *order, size_t n)
{
    if (l == NULL || order == NULL)
        return DETFEED_EINVAL;
    if (!detfeed__loader_is_open(l) || l->rect == NULL || l->samples_made ||
        l->batches != NULL)
        return detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                             "the rect order is set after opening a validation or rect "
                             "training loader and before its first sample or batch");
    if (n != detfeed_dataset_size(l->ds))
        return detfeed__fail(&l->msg, DETFEED_EINVAL,
                             "the order has %zu entries for %zu images", n,
                             detfeed_dataset_size(l->ds));
    uint8_t *seen = calloc(n ? n : 1, 1);
    if (seen == NULL)
        return detfeed__fail(&l->msg, DETFEED_ENOMEM, "out of memory");
    size_t bad = n;
    for (size_t p = 0; p < n && bad == n; p++) {
        if (order[p] >= n || seen[order[p]])
            bad = p;
        else
            seen[order[p]] = 1;
    }
    free(seen);
    if (bad < n)
        return detfeed__fail(&l->msg, DETFEED_EINVAL,
                             "the order is not a permutation: entry %zu is %llu", bad,
                             (unsigned long long)order[bad]);
    memcpy(l->rect_order, order, n * sizeof *order);
    rect_batches(l);
    l->plan.fixed_order = !l->augment || !same_shapes(l);
    return DETFEED_OK;
}

/* Ultralytics' dataset arguments, onto the dataset. */
static int dataset_args(detfeed_loader *l)
{
    detfeed_dataset *ds = l->ds;
    int rc =
        l->fraction_count > 0
            ? detfeed_dataset_set_int(ds, DETFEED_DATASET_FRACTION, l->fraction_count)
            : detfeed_dataset_set_float(ds, DETFEED_DATASET_FRACTION,
                                        l->fraction_ratio);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_int(ds, DETFEED_DATASET_NC, l->nc);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_datasets_dir(ds, l->datasets_dir);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_int(ds, DETFEED_DATASET_SINGLE_CLS, l->single_cls);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_classes(ds, l->classes, l->nclasses);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_int(ds, DETFEED_DATASET_MAX_LABELS, l->max_labels);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_int(ds, DETFEED_DATASET_OPENCV, l->opencv);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_int(ds, DETFEED_DATASET_MAX_LABEL_LINE,
                                     l->max_label_line);
    for (int k = 0; rc == DETFEED_OK && k <= DETFEED_LIMIT_MAX_IMAGE_BYTES; k++)
        if (l->limits[k])
            rc = detfeed_dataset_set_limit(ds, (detfeed_codec_limit)k, l->limits[k]);
    return rc;
}

static int open_dataset(detfeed_loader *l, const char *data)
{
    int rc = detfeed_dataset_create(&l->ds, 0);
    if (rc == DETFEED_OK)
        detfeed__dataset_report_to(l->ds, &l->progress);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_split(l->ds, l->split);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_int(l->ds, DETFEED_DATASET_POLICY, l->policy);
    if (rc == DETFEED_OK)
        rc = dataset_args(l);
    if (rc != DETFEED_OK)
        return detfeed__fail(&l->msg, rc, "%s",
                             l->ds && *detfeed_dataset_last_error(l->ds)
                                 ? detfeed_dataset_last_error(l->ds)
                                 : detfeed_strerror(rc));
    rc = detfeed_dataset_open(l->ds, data);
    if (rc != DETFEED_OK)
        return detfeed__fail(&l->msg, rc, "%s", detfeed_dataset_last_error(l->ds));
    return DETFEED_OK;
}

/* The RAM cache budget: cache_bytes, or for "ram" what Ultralytics'
 * check_cache_ram allows (detfeed__cache_ram_budget). */
static int cache_budget(detfeed_loader *l, uint64_t *budget)
{
    if (l->cache_bytes != DETFEED_CACHE_BYTES_RAM) {
        *budget = (uint64_t)l->cache_bytes;
        return DETFEED_OK;
    }
    uint64_t need;
    int64_t images;
    detfeed__cache_plan(l->ds, l->imgsz, UINT64_MAX, &need, &images);
    detfeed__msg why;
    int rc = detfeed__mem_available(&l->mem_available, &why);
    if (rc != DETFEED_OK)
        return detfeed__fail(&l->msg, rc, "cache_bytes ram: %s", why.text);
    *budget = detfeed__cache_ram_budget(need, l->mem_available,
                                        l->ultralytics == 803 ? 50 : 100);
    return DETFEED_OK;
}

/* A cache that could not be made: the bytes it needed, never a budget
 * that stands for "everything". */
static int cache_error(detfeed_loader *l, int rc, uint64_t budget)
{
    uint64_t bytes;
    int64_t images;
    detfeed__cache_plan(l->ds, l->imgsz, budget, &bytes, &images);
    char avail[96] = "";
    if (l->cache_bytes == DETFEED_CACHE_BYTES_RAM)
        snprintf(avail, sizeof avail, " (cache_bytes ram: %llu bytes available)",
                 (unsigned long long)l->mem_available);
    return detfeed__fail(&l->msg, rc, "RAM cache of %llu bytes for %lld images: %s%s",
                         (unsigned long long)bytes, (long long)images,
                         detfeed_strerror(rc), avail);
}

/* cache "disk": the disk cache, behind the RAM cache. */
static int open_disk(detfeed_loader *l)
{
    int rc = detfeed_disk_cache_create(&l->disk, 0);
    if (rc != DETFEED_OK)
        return detfeed__fail(&l->msg, rc, "out of memory");
    rc = detfeed_disk_cache_open(l->disk, l->ds, l->imgsz, l->cache_path, 0);
    if (rc != DETFEED_OK)
        return detfeed__fail(&l->msg, rc, "cache disk: %s",
                             detfeed_disk_cache_last_error(l->disk));
    rc = detfeed_cache_set_disk(l->cache, l->disk);
    return rc == DETFEED_OK
               ? rc
               : detfeed__fail(&l->msg, rc, "cache disk: %s", detfeed_strerror(rc));
}

static int open_cache(detfeed_loader *l)
{
    uint64_t budget;
    if (l->cache_mode == DETFEED_CACHE_MODE_NONE && l->cache_bytes != 0)
        return detfeed__fail(&l->msg, DETFEED_EINVAL,
                             "cache none: cache_bytes must be 0 (a RAM cache is cache "
                             "ram or a RAM cache in front of cache disk)");
    int rc = cache_budget(l, &budget);
    if (rc != DETFEED_OK)
        return rc;
    if ((rc = detfeed_cache_create(&l->cache, l->ds, l->imgsz, budget, 0)) !=
        DETFEED_OK)
        return cache_error(l, rc, budget);
    detfeed__cache_report_to(l->cache, &l->progress);
    return l->cache_mode == DETFEED_CACHE_MODE_DISK ? open_disk(l) : DETFEED_OK;
}

/* Partners from a window: the store of recent images holds the window and
 * what every thread (and the single-sample path) may hold at once. */
static int open_recent(detfeed_loader *l)
{
    size_t cap = (size_t)l->partner_window + 4 * (size_t)l->workers + 8;
    uint64_t n = detfeed_dataset_size(l->ds);
    if (cap > n)
        cap = n ? n : 1;
    int rc = detfeed__recent_create(&l->aug.recent, cap);
    return rc == DETFEED_OK ? rc : detfeed__fail(&l->msg, rc, "out of memory");
}

/* What the samples and batches of the opened loader depend on. */
static void make_plan(detfeed_loader *l)
{
    l->plan =
        (detfeed__plan){.ds = l->ds,
                        .seed = l->seed,
                        .imgsz = l->imgsz,
                        .epochs = l->epochs,
                        .close_mosaic = l->close_mosaic,
                        .partner_window = l->partner_window,
                        .batch = l->batch,
                        .workers = l->workers,
                        .prefetch = l->prefetch,
                        .rank = l->rank,
                        .world_size = l->world_size,
                        .augment = l->augment,
                        .drop_last = l->drop_last,
                        .policy = l->policy,
                        .dtype = l->dtype,
                        .rect = l->rect,
                        .rect_order = l->rect_order,
                        .fixed_order = !l->augment || (l->rect && !same_shapes(l))};
}

/* The output and colour route in effect (the rules of detfeed_route in
 * detfeed.h), decided here so that it is known from the open on; only a lack
 * of memory fails. */
static int open_route(detfeed_loader *l)
{
    detfeed__route_ask ask = {.output = (detfeed_output)l->output,
                              .colour = (detfeed_route)l->colour,
                              .device = l->cuda_device,
                              .slots = l->prefetch,
                              .batch = l->batch,
                              .side = detfeed__plan_side(&l->plan),
                              .dtype = l->dtype,
                              .scale = l->scale,
                              .augment = l->augment,
                              .cv = &l->aug.stack.cv,
                              .cache = l->cache,
                              .recipe_cache = l->recipe_cache,
                              .pin = l->pin_memory};
    const char *why = NULL;
    int rc = detfeed__route_open(&l->route, &ask, &why);
    return rc == DETFEED_OK ? rc
                            : detfeed__fail(&l->msg, rc, "batch output: %s",
                                            why ? why : detfeed_strerror(rc));
}

/* The augmenter every sample shares. A pose dataset without flip_idx
 * cannot be flipped (Ultralytics sets both flip probabilities to 0 with a
 * warning). */
static void make_augmenter(detfeed_loader *l)
{
    int nkpt;
    detfeed_dataset_kpt_shape(l->ds, &nkpt, NULL);
    if (nkpt > 0 && detfeed_dataset_flip_idx(l->ds) == NULL)
        l->hyp.fliplr = l->hyp.flipud = 0;
    detfeed__hyp hyp = l->hyp;
    if (!l->augment) /* Ultralytics' Format: bgr only affects training */
        hyp.bgr = 0;
    if (l->rect_train) /* build_transforms: rect and these exclude each other */
        hyp.mosaic = hyp.mixup = hyp.cutmix = 0;
    l->aug = (detfeed__augmenter){
        .ds = l->ds,
        .cache = l->cache,
        .hyp = hyp,
        .seed = l->seed,
        .train = l->augment,
        .stack = {.ultralytics = l->ultralytics,
                  .numpy = l->numpy,
                  .numpy_sort = (detfeed_numpy_sort)l->numpy_sort,
                  .cv = {(detfeed_cv_version)l->opencv, (detfeed_cv_cpu)l->opencv_cpu,
                         l->opencv_ipp}}};
}

/* The dataset indexed and verified, the caches filled. */
static int open_data(detfeed_loader *l, const char *data)
{
    int rc = open_dataset(l, data);
    if (rc == DETFEED_OK && (rc = detfeed__scratch_init(&l->scratch)) != DETFEED_OK)
        detfeed__fail(&l->msg, rc, "out of memory");
    if (rc == DETFEED_OK) /* the images as they are before any is decoded */
        rc = detfeed__loader_verify_prepare(l);
    if (rc == DETFEED_OK)
        rc = open_cache(l);
    if (rc == DETFEED_OK)
        rc = detfeed_cache_fill(l->cache, l->workers);
    if (rc == DETFEED_OK) /* decode-verified, as detfeed check verifies */
        rc = detfeed__loader_verify(l);
    if (rc == DETFEED_OK && l->disk && (rc = detfeed__disk_sync(l->disk)) != DETFEED_OK)
        detfeed__fail(&l->msg, rc, "cache disk: %s",
                      detfeed_disk_cache_last_error(l->disk));
    return rc;
}

static int open_all(detfeed_loader *l, const char *data)
{
    if (l->rank >= l->world_size)
        return detfeed__fail(&l->msg, DETFEED_EINVAL,
                             "rank %d is not below world size %d", l->rank,
                             l->world_size);
    if ((l->hyp.cutmix > 0 || l->hyp.copy_paste > 0) && l->ultralytics < 804)
        return detfeed__fail(
            &l->msg, DETFEED_ENOTSUPPORTED,
            "%s follows Ultralytics 8.4, and ultralytics is set to 8.3; "
            "set it to 0 or ultralytics to 8.4",
            l->hyp.cutmix > 0 ? "cutmix" : "copy_paste");
    if (l->cache_path && l->cache_path[0] && l->cache_mode != DETFEED_CACHE_MODE_DISK)
        return detfeed__fail(
            &l->msg, DETFEED_EINVAL,
            "cache_path '%s' is the disk cache's file: it is for cache "
            "disk, and the cache here is in RAM",
            l->cache_path);
    l->hyp.imgsz = l->imgsz;
    if (l->rect_train && l->augment && l->world_size > 1)
        return detfeed__fail(&l->msg, DETFEED_ENOTSUPPORTED,
                             "rect training with world size %d: rect batches come in "
                             "one aspect-ratio order, which ranks cannot share (each "
                             "rank's batches would mix shapes); use one rank",
                             l->world_size);
    int rc = open_data(l, data);
    if (rc == DETFEED_OK && (!l->augment || l->rect_train))
        rc = rect_shapes(l);
    if (rc != DETFEED_OK)
        return rc;
    make_augmenter(l);
    make_plan(l);
    if (l->partner_window > 0 && l->augment)
        rc = open_recent(l);
    if (rc == DETFEED_OK)
        rc = open_route(l);
    return rc;
}

int detfeed_loader_open(detfeed_loader *l, const char *data)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (data == NULL)
        return detfeed__fail(&l->msg, DETFEED_EINVAL, "open: data is NULL");
    if (l->opened)
        return l->open_failed ? detfeed__loader_need_open(l, "open")
                              : detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                                              "open: the loader is open already (once "
                                              "per handle)");
    l->opened = true;
    detfeed__msg_clear(&l->msg);
    int rc = open_all(l, data);
    if (rc != DETFEED_OK) {
        l->open_failed = true;
        l->open_msg = l->msg;
    }
    return rc;
}

const detfeed_dataset *detfeed_loader_dataset(const detfeed_loader *l)
{
    return l ? l->ds : NULL;
}

const detfeed_cache *detfeed_loader_cache(const detfeed_loader *l)
{
    return l ? l->cache : NULL;
}

const detfeed_disk_cache *detfeed_loader_disk_cache(const detfeed_loader *l)
{
    return l ? l->disk : NULL;
}

int detfeed_loader_sample_size(const detfeed_loader *l, uint64_t index, int *width,
                               int *height)
{
    if (l == NULL || width == NULL || height == NULL)
        return DETFEED_EINVAL;
    if (!detfeed__loader_is_open(l))
        return DETFEED_EBADSTATE;
    if (index >= detfeed_dataset_size(l->ds))
        return DETFEED_EINVAL;
    detfeed__plan_size(&l->plan, index, width, height);
    return DETFEED_OK;
}

/* ---- batches: the epochs' machinery behind the handle ---- */

size_t detfeed_loader_batch_count(const detfeed_loader *l)
{
    return l && detfeed__loader_is_open(l) ? detfeed__plan_batch_count(&l->plan) : 0;
}

int detfeed_loader_start(detfeed_loader *l, uint32_t epoch)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    int rc = detfeed__loader_need_open(l, "start");
    if (rc != DETFEED_OK)
        return rc;
    if (l->shut_down)
        return detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                             "the loader is shut down (detfeed_loader_shutdown): "
                             "no more epochs");
    if (!l->augment && l->world_size > 1)
        return detfeed__fail(&l->msg, DETFEED_ENOTSUPPORTED,
                             "validation batches (rect shapes) need world_size 1");
    if (l->batches == NULL) {
        detfeed__epochs *e; /* published whole: other threads read l->batches */
        if (detfeed__epochs_create(&e, &l->plan, &l->aug, l->route) != DETFEED_OK)
            return detfeed__fail(&l->msg, DETFEED_ENOMEM,
                                 "out of memory for %d batch slots", l->prefetch);
        l->batches = e;
    }
    return detfeed__epochs_start(l->batches, epoch, &l->msg);
}

int detfeed_loader_next(detfeed_loader *l, const detfeed_batch **out)
{
    return detfeed_loader_next_timed(l, out, -1);
}

int detfeed_loader_next_timed(detfeed_loader *l, const detfeed_batch **out,
                              int timeout_ms)
{
    if (l == NULL || out == NULL)
        return DETFEED_EINVAL;
    *out = NULL;
    if (l->shut_down)
        return detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                             "the loader is shut down (detfeed_loader_shutdown): "
                             "no more batches");
    if (l->batches == NULL)
        return l->open_failed ? detfeed__loader_need_open(l, "next")
                              : detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                                              "next: no epoch started "
                                              "(detfeed_loader_start)");
    int rc = detfeed__epochs_next(l->batches, timeout_ms, l->cuda_stream, out, &l->msg);
    if (rc == DETFEED_EBADSTATE && l->shut_down) /* while it waited */
        return detfeed__fail(&l->msg, rc,
                             "the loader was shut down (detfeed_loader_shutdown) while "
                             "waiting for a batch");
    return rc;
}

int detfeed_loader_shutdown(detfeed_loader *l)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    l->shut_down = true;
    if (l->batches != NULL)
        detfeed__epochs_quit(l->batches);
    return DETFEED_OK;
}

int detfeed_loader_release(detfeed_loader *l, const detfeed_batch *bt)
{
    if (l == NULL || bt == NULL)
        return DETFEED_EINVAL;
    detfeed__epochs *e = l->batches;
    if (e == NULL)
        return l->open_failed
                   ? DETFEED_OK /* documented: nothing */
                   : detfeed__fail(&l->msg, DETFEED_EINVAL,
                                   "release: this loader has handed out no batch");
    return detfeed__epochs_release(e, bt, l->cuda_stream, &l->msg);
}

int detfeed_loader_route(const detfeed_loader *l, detfeed_output *output,
                         detfeed_route *route, const char **why)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (l->route == NULL)
        return DETFEED_EBADSTATE;
    if (output)
        *output = detfeed__route_output(l->route);
    if (route)
        *route = detfeed__route_colour(l->route);
    if (why)
        *why = detfeed__route_why(l->route);
    return DETFEED_OK;
}

uint64_t detfeed_loader_device_bytes(const detfeed_loader *l)
{
    return l ? detfeed__route_device_bytes(l->route) : 0;
}

int64_t detfeed_loader_device_made(const detfeed_loader *l)
{
    return l == NULL ? -1 : l->route ? (int64_t)detfeed__route_made(l->route) : 0;
}

int detfeed_loader_set_cuda_stream(detfeed_loader *l, void *stream)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    l->cuda_stream = stream;
    return DETFEED_OK;
}

double detfeed_loader_stage_seconds(const detfeed_loader *l, detfeed_stage stage)
{
    if (l == NULL || (unsigned)stage >= DETFEED_STAGE_COUNT)
        return 0.0;
    uint64_t ns = detfeed__epochs_stage_ns(l->batches, stage);
    if (stage != DETFEED_STAGE_WAIT)
        ns += detfeed__clock_ns(&l->clock, (int)stage);
    return (double)ns * 1e-9;
}

int64_t detfeed_loader_skipped(const detfeed_loader *l, const char **first)
{
    return l ? detfeed__epochs_skipped(l->batches, first) : -1;
}

int detfeed_loader_pinned(const detfeed_loader *l, const char **why)
{
    if (l == NULL || l->batches == NULL) {
        if (why)
            *why = "no batches have been made yet";
        return 0;
    }
    return detfeed__epochs_pinned(l->batches, why);
}
