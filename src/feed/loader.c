/*
 * loader.c - the detfeed_loader handle: settings, opening a dataset and its
 * cache, and single samples.
 */
#include "loader_internal.h"

#include "aug/masks.h"
#include "data/dataset_internal.h"
#include "data/disk_cache.h"

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
    l->hyp = detfeed__hyp_defaults();
    l->imgsz = 640;
    l->epochs = 100;
    l->close_mosaic = 10;
    l->workers = 1;
    l->batch = 16;
    l->prefetch = 4;
    l->world_size = 1;
    l->dtype = DETFEED_DTYPE_F32;
    l->scale = DETFEED_SCALE_QUOTIENT;
    l->augment = true;
    l->ultralytics = 804;
    l->numpy = 2;
    l->opencv = DETFEED_CV_5_1;
    l->opencv_cpu = DETFEED_CV_CPU_AUTO;
    l->opencv_ipp = 1;
    l->fraction_ratio = 1.0;
    l->cache_mode = DETFEED_CACHE_MODE_RAM;
    strcpy(l->split, "train");
    *out = l;
    return DETFEED_OK;
}

void detfeed_loader_destroy(detfeed_loader *l)
{
    if (l == NULL)
        return;
    detfeed__batches_free(l);
    detfeed__scratch_free(&l->scratch);
    detfeed__recent_destroy(l->aug.recent);
    free(l->rect);
    free(l->rect_order);
    free(l->classes);
    detfeed_cache_destroy(l->cache);
    detfeed_disk_cache_destroy(l->disk);
    free(l->cache_path);
    detfeed__loader_verify_free(l);
    detfeed_dataset_destroy(l->ds);
    free(l);
}

const char *detfeed_loader_last_error(const detfeed_loader *l)
{
    return l ? l->msg.text : "no loader";
}

/* The plain integer settings: where each lives and its accepted range. */
typedef struct int_setting {
    detfeed_loader_param param;
    size_t offset; /* of an int field of struct detfeed_loader */
    int64_t min, max;
} int_setting;

static const int_setting int_settings[] = {
    {DETFEED_LOADER_EPOCHS, offsetof(detfeed_loader, epochs), 1, 1000000},
    {DETFEED_LOADER_CLOSE_MOSAIC, offsetof(detfeed_loader, close_mosaic), 0, 1000000},
    {DETFEED_LOADER_WORKERS, offsetof(detfeed_loader, workers), 1, 1024},
    {DETFEED_LOADER_BATCH, offsetof(detfeed_loader, batch), 1, 65536},
    {DETFEED_LOADER_PREFETCH, offsetof(detfeed_loader, prefetch), 1, 1024},
    {DETFEED_LOADER_RANK, offsetof(detfeed_loader, rank), 0, 65535},
    {DETFEED_LOADER_WORLD_SIZE, offsetof(detfeed_loader, world_size), 1, 65536},
    {DETFEED_LOADER_OUTPUT, offsetof(detfeed_loader, output), 0, DETFEED_OUTPUT_CUDA},
    {DETFEED_LOADER_COLOR, offsetof(detfeed_loader, colour), 0, DETFEED_ROUTE_DEVICE},
    {DETFEED_LOADER_CUDA_DEVICE, offsetof(detfeed_loader, cuda_device), 0, 1023},
    {DETFEED_LOADER_OPENCV, offsetof(detfeed_loader, opencv), 0, DETFEED_CV_4_DEBIAN},
    {DETFEED_LOADER_OPENCV_CPU, offsetof(detfeed_loader, opencv_cpu), 0,
     DETFEED_CV_CPU_AVX512},
    {DETFEED_LOADER_OPENCV_IPP, offsetof(detfeed_loader, opencv_ipp), 0, 1},
    {DETFEED_LOADER_NC, offsetof(detfeed_loader, nc), 0, 1000000},
    {DETFEED_LOADER_NUMPY, offsetof(detfeed_loader, numpy), 1, 2},
    {DETFEED_LOADER_SINGLE_CLS, offsetof(detfeed_loader, single_cls), 0, 1},
    {DETFEED_LOADER_PARTNER_WINDOW, offsetof(detfeed_loader, partner_window), 0,
     1 << 20},
    {DETFEED_LOADER_CACHE, offsetof(detfeed_loader, cache_mode), 0,
     DETFEED_CACHE_MODE_DISK},
};

/* The image limits: each loader setting and the codec limit it sets. */
static const struct {
    detfeed_loader_param param;
    detfeed_codec_limit limit;
} limit_settings[] = {{DETFEED_LOADER_MAX_WIDTH, DETFEED_LIMIT_MAX_WIDTH},
                      {DETFEED_LOADER_MAX_HEIGHT, DETFEED_LIMIT_MAX_HEIGHT},
                      {DETFEED_LOADER_MAX_PIXELS, DETFEED_LIMIT_MAX_PIXELS},
                      {DETFEED_LOADER_MAX_IMAGE_BYTES, DETFEED_LIMIT_MAX_IMAGE_BYTES}};

static int set_limit(detfeed_loader *l, detfeed_loader_param p, int64_t v)
{
    for (size_t i = 0; i < sizeof limit_settings / sizeof limit_settings[0]; i++)
        if (limit_settings[i].param == p) {
            if (v < 1)
                return DETFEED_EINVAL;
            l->limits[limit_settings[i].limit] = (uint64_t)v;
            return DETFEED_OK;
        }
    return DETFEED_EINVAL;
}

/* The settings that are not plain integers. */
static int set_special(detfeed_loader *l, detfeed_loader_param p, int64_t v)
{
    switch (p) {
    case DETFEED_LOADER_IMGSZ:
        if (v < 32 || v > 8192 || v % 32)
            return DETFEED_EINVAL;
        l->imgsz = (int)v;
        return DETFEED_OK;
    case DETFEED_LOADER_SEED:
        l->seed = (uint64_t)v;
        return DETFEED_OK;
    case DETFEED_LOADER_CACHE_BYTES:
        if (v < 0 && v != DETFEED_CACHE_BYTES_RAM)
            return DETFEED_EINVAL;
        l->cache_bytes = v;
        return DETFEED_OK;
    case DETFEED_LOADER_FRACTION: /* a count (1: all) */
        if (v < 1)
            return DETFEED_EINVAL;
        l->fraction_count = v;
        l->fraction_ratio = 1.0;
        return DETFEED_OK;
    case DETFEED_LOADER_AUGMENT:
    case DETFEED_LOADER_DROP_LAST:
        if (v != 0 && v != 1)
            return DETFEED_EINVAL;
        *(p == DETFEED_LOADER_AUGMENT ? &l->augment : &l->drop_last) = v == 1;
        return DETFEED_OK;
    case DETFEED_LOADER_DTYPE:
        if (detfeed_dtype_size((detfeed_dtype)v) == 0)
            return DETFEED_EINVAL;
        l->dtype = (detfeed_dtype)v;
        return DETFEED_OK;
    case DETFEED_LOADER_ULTRALYTICS:
        if (v != 803 && v != 804)
            return DETFEED_EINVAL;
        l->ultralytics = (int)v;
        return DETFEED_OK;
    case DETFEED_LOADER_VALUE_SCALE:
        if (v != DETFEED_SCALE_QUOTIENT && v != DETFEED_SCALE_RECIPROCAL)
            return DETFEED_EINVAL;
        l->scale = (detfeed_scale)v;
        return DETFEED_OK;
    default:
        return set_limit(l, p, v);
    }
}

int detfeed_loader_set_int(detfeed_loader *l, detfeed_loader_param p, int64_t v)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (l->opened)
        return DETFEED_EBADSTATE;
    for (size_t i = 0; i < sizeof int_settings / sizeof int_settings[0]; i++) {
        const int_setting *s = &int_settings[i];
        if (s->param != p)
            continue;
        if (v < s->min || v > s->max)
            return DETFEED_EINVAL;
        *(int *)((char *)l + s->offset) = (int)v;
        return DETFEED_OK;
    }
    return set_special(l, p, v);
}

/* The float hyperparameters, in the order of their keys (100...). */
static double *hyp_slot(detfeed__hyp *h, detfeed_loader_param p)
{
    double *slots[] = {&h->hsv_h,     &h->hsv_s,  &h->hsv_v,  &h->degrees,
                       &h->translate, &h->scale,  &h->shear,  &h->perspective,
                       &h->flipud,    &h->fliplr, &h->mosaic, &h->mixup,
                       &h->cutmix,    &h->bgr};
    int k = (int)p - DETFEED_LOADER_HSV_H;
    return k >= 0 && k < (int)(sizeof slots / sizeof slots[0]) ? slots[k] : NULL;
}

int detfeed_loader_set_float(detfeed_loader *l, detfeed_loader_param p, double v)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (l->opened)
        return DETFEED_EBADSTATE;
    if (p == DETFEED_LOADER_FRACTION) { /* a ratio */
        if (!(v > 0 && v <= 1))
            return DETFEED_EINVAL;
        l->fraction_count = 0;
        l->fraction_ratio = v;
        return DETFEED_OK;
    }
    double *slot = hyp_slot(&l->hyp, p);
    if (slot == NULL || !isfinite(v) || v < 0)
        return DETFEED_EINVAL;
    bool probability = p >= DETFEED_LOADER_FLIPUD;
    if ((probability && v > 1) || (p == DETFEED_LOADER_SCALE && v > 1) ||
        (p == DETFEED_LOADER_TRANSLATE && v > 0.5) ||
        (p == DETFEED_LOADER_DEGREES && v > 360) ||
        (p == DETFEED_LOADER_SHEAR && v >= 90))
        return DETFEED_EINVAL;
    *slot = v;
    return DETFEED_OK;
}

void detfeed__loader_param_range(detfeed_loader_param p, char *buf, size_t size)
{
    for (size_t i = 0; i < sizeof int_settings / sizeof int_settings[0]; i++)
        if (int_settings[i].param == p) {
            snprintf(buf, size, "an integer from %lld to %lld",
                     (long long)int_settings[i].min, (long long)int_settings[i].max);
            return;
        }
    static const struct {
        detfeed_loader_param param;
        const char *text;
    } ranges[] = {
        {DETFEED_LOADER_IMGSZ, "an integer from 32 to 8192, a multiple of 32"},
        {DETFEED_LOADER_SEED, "any 64-bit integer"},
        {DETFEED_LOADER_CACHE_BYTES, "a byte count >= 0, or ram"},
        {DETFEED_LOADER_FRACTION, "a ratio in (0, 1] such as 0.5, or a whole count "
                                  ">= 1 such as 4; 1 means all"},
        {DETFEED_LOADER_CLASSES, "class ids >= 0 separated by commas, such as "
                                 "0,2,5; empty for all classes"},
        {DETFEED_LOADER_AUGMENT, "0 or 1"},
        {DETFEED_LOADER_DROP_LAST, "0 or 1"},
        {DETFEED_LOADER_TRANSLATE, "a number from 0 to 0.5"},
        {DETFEED_LOADER_SCALE, "a number from 0 to 1"},
        {DETFEED_LOADER_DEGREES, "a number from 0 to 360"},
        {DETFEED_LOADER_SHEAR, "a number from 0 to below 90"},
        {DETFEED_LOADER_MAX_WIDTH, "a number of pixels >= 1 (default 32768)"},
        {DETFEED_LOADER_MAX_HEIGHT, "a number of pixels >= 1 (default 32768)"},
        {DETFEED_LOADER_MAX_PIXELS, "width x height >= 1 (default 178956970)"},
        {DETFEED_LOADER_MAX_IMAGE_BYTES, "decoded bytes >= 1 (default 536870912)"},
    };
    const char *text = "see detfeed.h";
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (ranges[i].param == p)
            text = ranges[i].text;
    if (p >= DETFEED_LOADER_FLIPUD && p <= DETFEED_LOADER_BGR)
        text = "a probability from 0 to 1";
    if (p >= DETFEED_LOADER_HSV_H && p <= DETFEED_LOADER_HSV_V)
        text = "a number >= 0";
    snprintf(buf, size, "%s", text);
}

int detfeed_loader_param_parse(const char *name, detfeed_loader_param *out)
{
    static const detfeed__named names[] = {
        {"imgsz", DETFEED_LOADER_IMGSZ},
        {"seed", DETFEED_LOADER_SEED},
        {"epochs", DETFEED_LOADER_EPOCHS},
        {"close_mosaic", DETFEED_LOADER_CLOSE_MOSAIC},
        {"cache_bytes", DETFEED_LOADER_CACHE_BYTES},
        {"augment", DETFEED_LOADER_AUGMENT},
        {"workers", DETFEED_LOADER_WORKERS},
        {"batch", DETFEED_LOADER_BATCH},
        {"prefetch", DETFEED_LOADER_PREFETCH},
        {"rank", DETFEED_LOADER_RANK},
        {"world_size", DETFEED_LOADER_WORLD_SIZE},
        {"drop_last", DETFEED_LOADER_DROP_LAST},
        {"dtype", DETFEED_LOADER_DTYPE},
        {"value_scale", DETFEED_LOADER_VALUE_SCALE},
        {"output", DETFEED_LOADER_OUTPUT},
        {"color", DETFEED_LOADER_COLOR},
        {"cuda_device", DETFEED_LOADER_CUDA_DEVICE},
        {"ultralytics", DETFEED_LOADER_ULTRALYTICS},
        {"opencv", DETFEED_LOADER_OPENCV},
        {"opencv_cpu", DETFEED_LOADER_OPENCV_CPU},
        {"opencv_ipp", DETFEED_LOADER_OPENCV_IPP},
        {"nc", DETFEED_LOADER_NC},
        {"numpy", DETFEED_LOADER_NUMPY},
        {"single_cls", DETFEED_LOADER_SINGLE_CLS},
        {"partner_window", DETFEED_LOADER_PARTNER_WINDOW},
        {"cache", DETFEED_LOADER_CACHE},
        {"cache_path", DETFEED_LOADER_CACHE_PATH},
        {"verify_record", DETFEED_LOADER_VERIFY_RECORD},
        {"max_width", DETFEED_LOADER_MAX_WIDTH},
        {"max_height", DETFEED_LOADER_MAX_HEIGHT},
        {"max_pixels", DETFEED_LOADER_MAX_PIXELS},
        {"max_image_bytes", DETFEED_LOADER_MAX_IMAGE_BYTES},
        {"fraction", DETFEED_LOADER_FRACTION},
        {"classes", DETFEED_LOADER_CLASSES},
        {"hsv_h", DETFEED_LOADER_HSV_H},
        {"hsv_s", DETFEED_LOADER_HSV_S},
        {"hsv_v", DETFEED_LOADER_HSV_V},
        {"degrees", DETFEED_LOADER_DEGREES},
        {"translate", DETFEED_LOADER_TRANSLATE},
        {"scale", DETFEED_LOADER_SCALE},
        {"shear", DETFEED_LOADER_SHEAR},
        {"perspective", DETFEED_LOADER_PERSPECTIVE},
        {"flipud", DETFEED_LOADER_FLIPUD},
        {"fliplr", DETFEED_LOADER_FLIPLR},
        {"mosaic", DETFEED_LOADER_MOSAIC},
        {"mixup", DETFEED_LOADER_MIXUP},
        {"cutmix", DETFEED_LOADER_CUTMIX},
        {"bgr", DETFEED_LOADER_BGR},
    };
    int v = 0;
    int rc = detfeed__lookup(names, sizeof names / sizeof names[0], name, &v);
    if (rc == DETFEED_OK)
        *out = (detfeed_loader_param)v;
    return rc;
}

int detfeed_loader_set_classes(detfeed_loader *l, const int *ids, size_t n)
{
    if (l == NULL || (ids == NULL && n > 0))
        return DETFEED_EINVAL;
    if (l->opened)
        return detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                             "classes: settings are fixed once the loader is open");
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
    if (l == NULL || split == NULL ||
        (strcmp(split, "train") && strcmp(split, "val") && strcmp(split, "test")))
        return DETFEED_EINVAL;
    if (l->opened)
        return DETFEED_EBADSTATE;
    strcpy(l->split, split);
    return DETFEED_OK;
}

int detfeed_loader_set_cache_path(detfeed_loader *l, const char *path)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (l->opened)
        return detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                             "cache_path: settings are fixed once the loader is open");
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
    if (l == NULL || (policy != DETFEED_POLICY_SKIP && policy != DETFEED_POLICY_FAIL))
        return DETFEED_EINVAL;
    if (l->opened)
        return DETFEED_EBADSTATE;
    l->policy = policy;
    return DETFEED_OK;
}

/* Rect mode (Ultralytics' set_rectangle): images ordered by aspect ratio
 * h / w, cut into batches; each batch's shape from its ratios. The default
 * order is a stable sort; detfeed_loader_set_rect_order hands over
 * another one (NumPy's). */
typedef struct by_ratio {
    double ar;
    size_t index;
} by_ratio;

static int cmp_ratio(const void *a, const void *b)
{
    const by_ratio *x = a, *y = b;
    if (x->ar != y->ar)
        return x->ar < y->ar ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static double aspect_ratio(const detfeed_loader *l, size_t i)
{
    int w = 1, h = 1;
    detfeed_dataset_image_size(l->ds, i, &w, &h);
    return (double)h / w;
}

/* Each image's batch shape from l->rect_order (set_rectangle's loop). */
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
        for (int k = 0; k < 2; k++)
            hw[k] = (int)ceil(shape[k] * l->imgsz / 32 + 0.5) * 32;
        for (size_t p = b0; p < b1; p++)
            memcpy(l->rect[l->rect_order[p]], hw, sizeof hw);
    }
}

static int rect_shapes(detfeed_loader *l)
{
    size_t n = detfeed_dataset_size(l->ds);
    by_ratio *v = malloc((n ? n : 1) * sizeof *v);
    l->rect = malloc((n ? n : 1) * sizeof *l->rect);
    l->rect_order = malloc((n ? n : 1) * sizeof *l->rect_order);
    if (v == NULL || l->rect == NULL || l->rect_order == NULL) {
        free(v);
        return detfeed__fail(&l->msg, DETFEED_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (by_ratio){.ar = aspect_ratio(l, i), .index = i};
    qsort(v, n, sizeof *v, cmp_ratio);
    for (size_t p = 0; p < n; p++)
        l->rect_order[p] = v[p].index;
    free(v);
    rect_batches(l);
    return DETFEED_OK;
}

int detfeed_loader_set_rect_order(detfeed_loader *l, const uint64_t *order, size_t n)
{
    if (l == NULL || order == NULL)
        return DETFEED_EINVAL;
    if (l->rect == NULL || l->samples_made || l->batches != NULL)
        return detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                             "the validation order is set after opening a validation "
                             "loader and before its first sample or batch");
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
        rc = detfeed_dataset_set_int(ds, DETFEED_DATASET_SINGLE_CLS, l->single_cls);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_classes(ds, l->classes, l->nclasses);
    for (int k = 0; rc == DETFEED_OK && k <= DETFEED_LIMIT_MAX_IMAGE_BYTES; k++)
        if (l->limits[k])
            rc = detfeed_dataset_set_limit(ds, (detfeed_codec_limit)k, l->limits[k]);
    return rc;
}

static int open_dataset(detfeed_loader *l, const char *data)
{
    int rc = detfeed_dataset_create(&l->ds, 0);
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
    if (rc == DETFEED_OK && (rc = detfeed_cache_create(&l->cache, l->ds, l->imgsz,
                                                       budget, 0)) != DETFEED_OK)
        return cache_error(l, rc, budget);
    if (rc == DETFEED_OK && l->cache_mode == DETFEED_CACHE_MODE_DISK)
        rc = open_disk(l);
    return rc;
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

int detfeed_loader_open(detfeed_loader *l, const char *data)
{
    if (l == NULL || data == NULL)
        return DETFEED_EINVAL;
    if (l->opened)
        return DETFEED_EBADSTATE;
    l->opened = true;
    detfeed__msg_clear(&l->msg);
    if (l->rank >= l->world_size)
        return detfeed__fail(&l->msg, DETFEED_EINVAL,
                             "rank %d is not below world size %d", l->rank,
                             l->world_size);
    if (l->hyp.cutmix > 0)
        return detfeed__fail(&l->msg, DETFEED_ENOTSUPPORTED,
                             "cutmix is not supported yet; set it to 0");
    l->hyp.imgsz = l->imgsz;
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
    if (rc == DETFEED_OK && !l->augment)
        rc = rect_shapes(l);
    /* A pose dataset without flip_idx cannot be flipped (Ultralytics sets
     * both flip probabilities to 0 with a warning). */
    int nkpt;
    detfeed_dataset_kpt_shape(l->ds, &nkpt, NULL);
    if (rc == DETFEED_OK && nkpt > 0 && detfeed_dataset_flip_idx(l->ds) == NULL)
        l->hyp.fliplr = l->hyp.flipud = 0;
    l->aug = (detfeed__augmenter){
        .ds = l->ds,
        .cache = l->cache,
        .hyp = l->hyp,
        .seed = l->seed,
        .train = l->augment,
        .stack = {.ultralytics = l->ultralytics,
                  .numpy = l->numpy,
                  .cv = {(detfeed_cv_version)l->opencv, (detfeed_cv_cpu)l->opencv_cpu,
                         l->opencv_ipp}}};
    if (rc == DETFEED_OK && l->partner_window > 0 && l->augment)
        rc = open_recent(l);
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

/* close_mosaic: mosaic is off from the first epoch of the last
 * close_mosaic ones (all of them when epochs <= close_mosaic). */
bool detfeed__loader_mosaic_on(const detfeed_loader *l, uint32_t epoch)
{
    return l->close_mosaic == 0 ||
           (int64_t)epoch < (int64_t)l->epochs - l->close_mosaic;
}

int detfeed_loader_sample_size(const detfeed_loader *l, uint64_t index, int *width,
                               int *height)
{
    if (l == NULL || width == NULL || height == NULL)
        return DETFEED_EINVAL;
    if (l->ds == NULL || l->cache == NULL)
        return DETFEED_EBADSTATE;
    if (index >= detfeed_dataset_size(l->ds))
        return DETFEED_EINVAL;
    *width = l->rect ? l->rect[index][1] : l->imgsz;
    *height = l->rect ? l->rect[index][0] : l->imgsz;
    return DETFEED_OK;
}

/* Segment datasets: Format's overlap mask (into `mask` of `bytes`, or not
 * kept when NULL; its element type to *type) and the instances in its area
 * order, as Ultralytics returns them. */
static int segment_order(detfeed_loader *l, const detfeed__sample *s, void *mask,
                         size_t bytes, detfeed_mask_type *type)
{
    if (detfeed_dataset_task(l->ds) != DETFEED_TASK_SEGMENT)
        return DETFEED_OK;
    *type = detfeed__mask_type(s->inst->n);
    size_t need = (size_t)(s->img->w / 4) * (size_t)(s->img->h / 4) * (size_t)*type;
    if (mask && bytes < need)
        return detfeed__fail(&l->msg, DETFEED_ELIMIT,
                             "%d instances: the mask is %s, %zu bytes (%zu given)",
                             s->inst->n,
                             *type == DETFEED_MASK_I32
                                 ? "int32 past 255 (detfeed_loader_sample_mask_data)"
                                 : "8-bit",
                             need, bytes);
    int rc = detfeed__format_masks(&l->scratch.inst, s->img->w, s->img->h,
                                   l->aug.stack.ultralytics, mask);
    return rc == DETFEED_OK ? rc : detfeed__fail(&l->msg, rc, "out of memory");
}

const detfeed__place *detfeed__loader_place(const detfeed_loader *l,
                                            const uint64_t *order, uint64_t pos,
                                            detfeed__place *place)
{
    if (l->partner_window == 0 || !l->augment)
        return NULL;
    *place = (detfeed__place){.order = order,
                              .pos = pos,
                              .stride = (uint32_t)l->world_size,
                              .window = (uint32_t)l->partner_window};
    return place;
}

/* The place of image `index` in epoch `epoch`'s order (the order goes to
 * *order, to free), or *out NULL when partners are uniform. */
static int sample_place(const detfeed_loader *l, uint32_t epoch, uint64_t index,
                        detfeed__place *place, uint64_t **order,
                        const detfeed__place **out)
{
    uint64_t n = detfeed_dataset_size(l->ds), pos = 0;
    *order = NULL;
    *out = NULL;
    if (detfeed__loader_place(l, NULL, 0, place) == NULL)
        return DETFEED_OK;
    if ((*order = malloc(n * sizeof **order)) == NULL)
        return DETFEED_ENOMEM;
    detfeed_epoch_order(l->seed, epoch, n, *order);
    while (pos < n && (*order)[pos] != index)
        pos++;
    *out = detfeed__loader_place(l, *order, pos, place);
    return DETFEED_OK;
}

/* One sample on the calling thread, for the single-sample functions. */
static int augment_alone(detfeed_loader *l, uint32_t epoch, uint64_t index, int w,
                         int h, detfeed__sample *s)
{
    uint64_t *order;
    detfeed__place place;
    const detfeed__place *pl;
    int rc = sample_place(l, epoch, index, &place, &order, &pl);
    if (rc == DETFEED_OK)
        rc = detfeed__augment(&l->aug, &l->scratch, epoch, index, pl,
                              detfeed__loader_mosaic_on(l, epoch), w, h, s);
    free(order);
    if (rc != DETFEED_OK)
        return detfeed__fail(&l->msg, rc, "%s",
                             detfeed_codec_last_error(l->scratch.codec));
    return DETFEED_OK;
}

int detfeed_loader_sample(detfeed_loader *l, uint32_t epoch, uint64_t index,
                          uint8_t *img, int capacity, int *count, float *cls,
                          float *boxes, float *keypoints)
{
    if (l == NULL || img == NULL || count == NULL || capacity < 0 ||
        (capacity > 0 && (cls == NULL || boxes == NULL)))
        return DETFEED_EINVAL;
    if (l->ds == NULL || l->cache == NULL)
        return DETFEED_EBADSTATE;
    if (index >= detfeed_dataset_size(l->ds))
        return DETFEED_EINVAL;
    detfeed__sample s;
    int w, h;
    l->samples_made = true;
    detfeed_loader_sample_size(l, index, &w, &h);
    int rc = augment_alone(l, epoch, index, w, h, &s);
    if (rc != DETFEED_OK)
        return rc;
    detfeed_mask_type type = DETFEED_MASK_NONE;
    rc = segment_order(l, &s, NULL, 0, &type);
    if (rc != DETFEED_OK)
        return rc;
    *count = s.inst->n;
    if (s.inst->n > capacity)
        return detfeed__fail(&l->msg, DETFEED_ELIMIT, "%d instances do not fit in %d",
                             s.inst->n, capacity);
    memcpy(img, s.img->px, (size_t)s.img->w * s.img->h * 3);
    detfeed__format(s.inst, s.img->w, s.img->h, &l->aug.stack, cls, boxes, keypoints);
    return DETFEED_OK;
}

int detfeed_loader_sample_mask_data(detfeed_loader *l, uint32_t epoch, uint64_t index,
                                    void *mask, size_t bytes, int *mask_width,
                                    int *mask_height, detfeed_mask_type *type)
{
    if (l == NULL || mask == NULL)
        return DETFEED_EINVAL;
    if (l->ds == NULL || l->cache == NULL)
        return DETFEED_EBADSTATE;
    if (index >= detfeed_dataset_size(l->ds))
        return DETFEED_EINVAL;
    if (detfeed_dataset_task(l->ds) != DETFEED_TASK_SEGMENT)
        return detfeed__fail(&l->msg, DETFEED_ENOTSUPPORTED,
                             "masks need a segment dataset (polygon labels)");
    detfeed__sample s;
    detfeed_mask_type t = DETFEED_MASK_NONE;
    int w, h;
    l->samples_made = true;
    detfeed_loader_sample_size(l, index, &w, &h);
    int rc = augment_alone(l, epoch, index, w, h, &s);
    if (rc != DETFEED_OK)
        return rc;
    rc = segment_order(l, &s, mask, bytes, &t);
    if (rc == DETFEED_OK && mask_width)
        *mask_width = w / 4;
    if (rc == DETFEED_OK && mask_height)
        *mask_height = h / 4;
    if (rc == DETFEED_OK && type)
        *type = t;
    return rc;
}

int detfeed_loader_sample_masks(detfeed_loader *l, uint32_t epoch, uint64_t index,
                                uint8_t *mask, int *mask_width, int *mask_height)
{
    int w, h, rc = detfeed_loader_sample_size(l, index, &w, &h);
    if (rc != DETFEED_OK)
        return rc; /* the statuses detfeed_loader_sample_mask_data gives */
    return detfeed_loader_sample_mask_data(l, epoch, index, mask,
                                           (size_t)(w / 4) * (size_t)(h / 4),
                                           mask_width, mask_height, NULL);
}

/* One recipe's fields as JSON members (no braces). */
static int recipe_fields(const detfeed__recipe *r, char *buf, size_t size)
{
    return snprintf(buf, size,
                    "\"mosaic\":%s,\"partners\":[%llu,%llu,%llu],\"yc\":%d,\"xc\":%d,"
                    "\"perspective\":[%.17g,%.17g],\"angle\":%.17g,\"scale\":%.17g,"
                    "\"shear\":[%.17g,%.17g],\"translate\":[%.17g,%.17g]",
                    r->mosaic ? "true" : "false", (unsigned long long)r->partners[0],
                    (unsigned long long)r->partners[1],
                    (unsigned long long)r->partners[2], r->yc, r->xc, r->perspective[0],
                    r->perspective[1], r->angle, r->scale, r->shear[0], r->shear[1],
                    r->translate[0], r->translate[1]);
}

int detfeed_loader_recipe_json(const detfeed_loader *l, uint32_t epoch, uint64_t index,
                               char *buf, size_t size)
{
    if (l == NULL || buf == NULL || l->ds == NULL)
        return DETFEED_EINVAL;
    detfeed__recipe r, pr;
    uint64_t n = detfeed_dataset_size(l->ds), *order = NULL;
    detfeed__place place;
    const detfeed__place *pl = NULL;
    int rc = sample_place(l, epoch, index, &place, &order, &pl);
    if (rc != DETFEED_OK)
        return rc;
    detfeed__recipe_make(&l->aug.hyp, l->seed, epoch, index, n,
                         detfeed__loader_mosaic_on(l, epoch), 0, pl, &r);
    detfeed__recipe_make(&l->aug.hyp, l->seed, epoch, index, n,
                         detfeed__loader_mosaic_on(l, epoch),
                         DETFEED__SLOT_PARTNER_BASE, pl, &pr);
    free(order);
    char own[512], partner[512];
    recipe_fields(&r, own, sizeof own);
    recipe_fields(&pr, partner, sizeof partner);
    int k =
        snprintf(buf, size,
                 "{\"epoch\":%u,\"index\":%llu,%s,\"mixup\":%s,\"mix_partner\":%llu,"
                 "\"mix_ratio\":%.17g,\"mix_recipe\":{%s},\"hsv\":%s,"
                 "\"gains\":[%.17g,%.17g,%.17g],\"flipud\":%s,\"fliplr\":%s,"
                 "\"augment\":%s}",
                 epoch, (unsigned long long)index, own, r.mixup ? "true" : "false",
                 (unsigned long long)r.mix_partner, r.mix_ratio, partner,
                 r.hsv ? "true" : "false", r.gains[0], r.gains[1], r.gains[2],
                 r.flipud ? "true" : "false", r.fliplr ? "true" : "false",
                 l->augment ? "true" : "false");
    return k >= 0 && (size_t)k < size ? DETFEED_OK : DETFEED_ELIMIT;
}
