/*
 * test_params.c - the loader's numeric settings: for every one, its default
 * is what the getter gives on a new loader, the bounds the query gives are
 * exactly what the setter accepts (the bounds and one step inside taken,
 * one step outside refused), and the getter gives back what was set; the
 * documented values of a few; the settings that are not numbers, unknown
 * settings and the wrong kind refused; and the recipe of a sample
 * (detfeed_loader_recipe) on a small dataset.
 */
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every setting's name, as the header lists them. */
static const char *const names[] = {
    "imgsz",
    "seed",
    "epochs",
    "close_mosaic",
    "cache_bytes",
    "augment",
    "workers",
    "batch",
    "prefetch",
    "rank",
    "world_size",
    "drop_last",
    "dtype",
    "value_scale",
    "output",
    "color",
    "cuda_device",
    "ultralytics",
    "opencv",
    "opencv_cpu",
    "opencv_ipp",
    "numpy",
    "single_cls",
    "nc",
    "fraction",
    "classes",
    "cache",
    "cache_path",
    "verify_record",
    "partner_window",
    "datasets_dir",
    "max_width",
    "max_height",
    "max_pixels",
    "max_image_bytes",
    "max_labels",
    "max_label_line",
    "hsv_h",
    "hsv_s",
    "hsv_v",
    "degrees",
    "translate",
    "scale",
    "shear",
    "perspective",
    "flipud",
    "fliplr",
    "mosaic",
    "mixup",
    "cutmix",
    "bgr",
    "recipe_cache",
    "pin_memory",
    "copy_paste",
    "copy_paste_mode",
    "numpy_sort",
};

/* The settings that are not numbers. */
static bool is_text(const char *name)
{
    return strcmp(name, "classes") == 0 || strcmp(name, "cache_path") == 0 ||
           strcmp(name, "verify_record") == 0 || strcmp(name, "datasets_dir") == 0;
}

/* An integer setting: default, bounds taken, one step outside refused, the
 * getter gives back what was set, a value off the step refused. */
static void check_int(detfeed_loader_param p, const char *name)
{
    int64_t min, max, step, def, got = -7;
    if (!CHECK_INT(detfeed_loader_param_bounds_int(p, &min, &max, &step, &def), 0))
        return;
    CHECK(min <= max && step >= 1);
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    CHECK_INT(detfeed_loader_get_int(l, p, &got), 0);
    if (got != def)
        fprintf(stderr, "  %s: default %lld, getter %lld\n", name, (long long)def,
                (long long)got);
    CHECK(got == def);
    int64_t inside[] = {min, max, min + step <= max ? min + step : max};
    for (size_t k = 0; k < sizeof inside / sizeof inside[0]; k++) {
        CHECK_INT(detfeed_loader_set_int(l, p, inside[k]), 0);
        CHECK_INT(detfeed_loader_get_int(l, p, &got), 0);
        CHECK(got == inside[k]);
    }
    if (min > INT64_MIN)
        CHECK_INT(detfeed_loader_set_int(l, p, min - 1), DETFEED_EINVAL);
    if (max < INT64_MAX)
        CHECK_INT(detfeed_loader_set_int(l, p, max + 1), DETFEED_EINVAL);
    if (step > 1)
        CHECK_INT(detfeed_loader_set_int(l, p, min + step / 2), DETFEED_EINVAL);
    /* The refusals left the last value set in force. */
    CHECK_INT(detfeed_loader_get_int(l, p, &got), 0);
    CHECK(got == inside[2]);
    detfeed_loader_destroy(l);
}

/* A float setting: the same, with the doubles next to the bounds. */
static void check_float(detfeed_loader_param p, const char *name)
{
    double min, max, def, got = -7;
    if (!CHECK_INT(detfeed_loader_param_bounds_float(p, &min, &max, &def), 0))
        return;
    CHECK(min <= max && def >= min && def <= max);
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    CHECK_INT(detfeed_loader_get_float(l, p, &got), 0);
    if (got != def)
        fprintf(stderr, "  %s: default %.17g, getter %.17g\n", name, def, got);
    CHECK(got == def);
    double inside[] = {min, max, (min + max) / 2 > min ? min + (max - min) / 2 : max};
    for (size_t k = 0; k < sizeof inside / sizeof inside[0]; k++) {
        CHECK_INT(detfeed_loader_set_float(l, p, inside[k]), 0);
        CHECK_INT(detfeed_loader_get_float(l, p, &got), 0);
        CHECK(got == inside[k]);
    }
    CHECK_INT(detfeed_loader_set_float(l, p, nextafter(min, -INFINITY)),
              DETFEED_EINVAL);
    if (max < DBL_MAX)
        CHECK_INT(detfeed_loader_set_float(l, p, nextafter(max, INFINITY)),
                  DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set_float(l, p, INFINITY), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set_float(l, p, NAN), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_get_float(l, p, &got), 0);
    CHECK(got == inside[2]);
    detfeed_loader_destroy(l);
}

/* Every named setting: numbers have bounds of their kind and pass the
 * checks above; the others have none; each kind is refused by the other's
 * functions. */
static void check_every_setting(void)
{
    int numeric = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        detfeed_loader_param p;
        if (!CHECK_INT(detfeed_loader_param_parse(names[i], &p), 0))
            continue;
        int ints = detfeed_loader_param_bounds_int(p, NULL, NULL, NULL, NULL) == 0;
        int floats = detfeed_loader_param_bounds_float(p, NULL, NULL, NULL) == 0;
        if (is_text(names[i])) {
            CHECK(!ints && !floats);
            continue;
        }
        numeric++;
        /* Floats from hsv_h on; fraction is both. */
        bool fraction = p == DETFEED_LOADER_FRACTION;
        CHECK(floats == (fraction || p >= DETFEED_LOADER_HSV_H));
        CHECK(ints == (fraction || p < DETFEED_LOADER_HSV_H));
        if (ints)
            check_int(p, names[i]);
        if (floats)
            check_float(p, names[i]);
        detfeed_loader *l;
        detfeed_loader_create(&l, 0);
        int64_t iv;
        double fv;
        if (!ints) {
            CHECK_INT(detfeed_loader_set_int(l, p, 0), DETFEED_EINVAL);
            CHECK_INT(detfeed_loader_get_int(l, p, &iv), DETFEED_EINVAL);
        }
        if (!floats) {
            CHECK_INT(detfeed_loader_set_float(l, p, 1.0), DETFEED_EINVAL);
            CHECK_INT(detfeed_loader_get_float(l, p, &fv), DETFEED_EINVAL);
        }
        detfeed_loader_destroy(l);
    }
    CHECK_INT(numeric, (int)(sizeof names / sizeof names[0]) - 4);
}

/* Unknown settings, NULL arguments, the text-only ones. */
static void check_refusals(void)
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    int64_t iv;
    double fv;
    const detfeed_loader_param unknown[] = {
        (detfeed_loader_param)28, (detfeed_loader_param)99, (detfeed_loader_param)115,
        (detfeed_loader_param)-1};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        detfeed_loader_param p = unknown[i];
        CHECK_INT(detfeed_loader_param_bounds_int(p, NULL, NULL, NULL, NULL),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed_loader_param_bounds_float(p, NULL, NULL, NULL),
                  DETFEED_EINVAL);
        CHECK_INT(detfeed_loader_set_int(l, p, 1), DETFEED_EINVAL);
        CHECK_INT(detfeed_loader_set_float(l, p, 0.5), DETFEED_EINVAL);
        CHECK_INT(detfeed_loader_get_int(l, p, &iv), DETFEED_EINVAL);
        CHECK_INT(detfeed_loader_get_float(l, p, &fv), DETFEED_EINVAL);
    }
    CHECK_INT(detfeed_loader_get_int(NULL, DETFEED_LOADER_IMGSZ, &iv), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_get_int(l, DETFEED_LOADER_IMGSZ, NULL), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_get_float(NULL, DETFEED_LOADER_HSV_H, &fv),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_get_float(l, DETFEED_LOADER_HSV_H, NULL), DETFEED_EINVAL);
    detfeed_loader_destroy(l);
}

/* Values the header documents, against the table: a copy of the table
 * would pass the checks above whatever it said. */
static void check_documented(void)
{
    int64_t min, max, step, def;
    CHECK_INT(
        detfeed_loader_param_bounds_int(DETFEED_LOADER_IMGSZ, &min, &max, &step, &def),
        0);
    CHECK(min == 32 && max == 8192 && step == 32 && def == 640);
    CHECK_INT(detfeed_loader_param_bounds_int(DETFEED_LOADER_CACHE_BYTES, &min, &max,
                                              NULL, &def),
              0);
    CHECK(min == DETFEED_CACHE_BYTES_RAM && max == INT64_MAX && def == 0);
    CHECK_INT(
        detfeed_loader_param_bounds_int(DETFEED_LOADER_SEED, &min, &max, NULL, &def),
        0);
    CHECK(min == INT64_MIN && max == INT64_MAX && def == 0);
    CHECK_INT(
        detfeed_loader_param_bounds_int(DETFEED_LOADER_DTYPE, &min, &max, NULL, &def),
        0);
    CHECK(min == DETFEED_DTYPE_U8 && max == DETFEED_DTYPE_BF16 &&
          def == DETFEED_DTYPE_F32);
    CHECK_INT(detfeed_loader_param_bounds_int(DETFEED_LOADER_ULTRALYTICS, &min, &max,
                                              NULL, &def),
              0);
    CHECK(min == 803 && max == 804 && def == 804);
    CHECK_INT(detfeed_loader_param_bounds_int(DETFEED_LOADER_NUMPY_SORT, &min, &max,
                                              NULL, &def),
              0);
    CHECK(min == DETFEED_NUMPY_SORT_SCALAR && max == DETFEED_NUMPY_SORT_AVX512 &&
          def == DETFEED_NUMPY_SORT_SCALAR);
    CHECK_INT(detfeed_loader_param_bounds_int(DETFEED_LOADER_MAX_LABELS, &min, &max,
                                              NULL, &def),
              0);
    CHECK(min == 1 && max == 10000000 && def == 1000000);
    CHECK_INT(detfeed_loader_param_bounds_int(DETFEED_LOADER_MAX_LABEL_LINE, &min, &max,
                                              NULL, &def),
              0);
    CHECK(min == 16 && max == 1 << 30 && def == 65536);
    CHECK_INT(detfeed_loader_param_bounds_int(DETFEED_LOADER_MAX_PIXELS, &min, &max,
                                              NULL, &def),
              0);
    CHECK(min == 1 && def == (int64_t)DETFEED_DEFAULT_MAX_PIXELS);
    CHECK_INT(detfeed_loader_param_bounds_int(DETFEED_LOADER_MAX_WIDTH, NULL, NULL,
                                              NULL, &def),
              0);
    CHECK(def == 32768);
    CHECK_INT(detfeed_loader_param_bounds_int(DETFEED_LOADER_PIN_MEMORY, &min, &max,
                                              NULL, &def),
              0);
    CHECK(min == 0 && max == 1 && def == 1);
    double fmin, fmax, fdef;
    CHECK_INT(
        detfeed_loader_param_bounds_float(DETFEED_LOADER_SHEAR, &fmin, &fmax, &fdef),
        0);
    CHECK(fmin == 0 && fmax < 90 && nextafter(fmax, INFINITY) == 90 && fdef == 0);
    CHECK_INT(
        detfeed_loader_param_bounds_float(DETFEED_LOADER_FRACTION, &fmin, &fmax, &fdef),
        0);
    CHECK(fmin > 0 && nextafter(fmin, -INFINITY) == 0 && fmax == 1 && fdef == 1);
    CHECK_INT(
        detfeed_loader_param_bounds_float(DETFEED_LOADER_HSV_H, &fmin, &fmax, &fdef),
        0);
    CHECK(fmin == 0 && fmax == DBL_MAX && fdef == 0.015);
    CHECK_INT(detfeed_loader_param_bounds_float(DETFEED_LOADER_TRANSLATE, &fmin, &fmax,
                                                &fdef),
              0);
    CHECK(fmax == 0.5 && fdef == 0.1);
    CHECK_INT(
        detfeed_loader_param_bounds_float(DETFEED_LOADER_FLIPLR, &fmin, &fmax, &fdef),
        0);
    CHECK(fmax == 1 && fdef == 0.5);
}

/* fraction is a count or a ratio, whichever was set last; text settings go
 * through the same table (what the getters read back). */
static void check_fraction_and_text(void)
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    int64_t count = -1;
    double ratio = -1;
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_FRACTION, 4), 0);
    detfeed_loader_get_int(l, DETFEED_LOADER_FRACTION, &count);
    detfeed_loader_get_float(l, DETFEED_LOADER_FRACTION, &ratio);
    CHECK(count == 4 && ratio == 0);
    CHECK_INT(detfeed_loader_set_float(l, DETFEED_LOADER_FRACTION, 0.25), 0);
    detfeed_loader_get_int(l, DETFEED_LOADER_FRACTION, &count);
    detfeed_loader_get_float(l, DETFEED_LOADER_FRACTION, &ratio);
    CHECK(count == 0 && ratio == 0.25);
    CHECK_INT(detfeed_loader_set(l, "imgsz", "320"), 0);
    CHECK_INT(detfeed_loader_set(l, "dtype", "bf16"), 0);
    CHECK_INT(detfeed_loader_set(l, "cache_bytes", "ram"), 0);
    CHECK_INT(detfeed_loader_set(l, "degrees", "12.5"), 0);
    CHECK_INT(detfeed_loader_set(l, "seed", "-3"), 0);
    CHECK_INT(detfeed_loader_set(l, "numpy_sort", "avx2"), 0);
    CHECK_INT(detfeed_loader_set(l, "numpy_sort", "sse"), DETFEED_EINVAL);
    int64_t v = 0;
    double d = 0;
    detfeed_loader_get_int(l, DETFEED_LOADER_IMGSZ, &v);
    CHECK(v == 320);
    detfeed_loader_get_int(l, DETFEED_LOADER_DTYPE, &v);
    CHECK(v == DETFEED_DTYPE_BF16);
    detfeed_loader_get_int(l, DETFEED_LOADER_CACHE_BYTES, &v);
    CHECK(v == DETFEED_CACHE_BYTES_RAM);
    detfeed_loader_get_int(l, DETFEED_LOADER_SEED, &v);
    CHECK(v == -3);
    detfeed_loader_get_int(l, DETFEED_LOADER_NUMPY_SORT, &v);
    CHECK(v == DETFEED_NUMPY_SORT_AVX2);
    detfeed_loader_get_float(l, DETFEED_LOADER_DEGREES, &d);
    CHECK(d == 12.5);
    /* The text setter's message names the range from the same table. */
    CHECK_INT(detfeed_loader_set(l, "workers", "1025"), DETFEED_EINVAL);
    CHECK(strstr(detfeed_loader_last_error(l), "from 1 to 1024") != NULL);
    CHECK_INT(detfeed_loader_set(l, "shear", "90"), DETFEED_EINVAL);
    CHECK(strstr(detfeed_loader_last_error(l), "below 90") != NULL);
    detfeed_loader_destroy(l);
}

/* Whether the loader's message holds every one of `words` (NULL-ended);
 * prints it when not. */
static bool says(const detfeed_loader *l, const char *const *words)
{
    const char *msg = detfeed_loader_last_error(l);
    bool ok = true;
    for (; *words; words++)
        ok = ok && strstr(msg, *words) != NULL;
    if (!ok)
        fprintf(stderr, "  message: \"%s\"\n", msg);
    return ok;
}

#define SAYS(l, ...) CHECK(says(l, (const char *const[]){__VA_ARGS__, NULL}))

/* Every refusal of the numeric setters names the setting and what it
 * accepts; a successful detfeed_loader_set clears an older message. */
static void check_messages(void)
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, 33), DETFEED_EINVAL);
    SAYS(l, "imgsz: 33 is not a value it accepts", "from 32 to 8192",
         "a multiple of 32");
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_WORKERS, 0), DETFEED_EINVAL);
    SAYS(l, "workers: 0", "from 1 to 1024");
    CHECK_INT(detfeed_loader_set_float(l, DETFEED_LOADER_MIXUP, 1.5), DETFEED_EINVAL);
    SAYS(l, "mixup: 1.5", "a probability from 0 to 1");
    CHECK_INT(detfeed_loader_set_float(l, DETFEED_LOADER_TRANSLATE, 0.1 + 0.4),
              DETFEED_OK);
    CHECK_INT(detfeed_loader_set_float(l, DETFEED_LOADER_TRANSLATE, nextafter(0.5, 1)),
              DETFEED_EINVAL);
    SAYS(l, "translate: 0.50000000000000011", "from 0 to 0.5");
    CHECK_INT(detfeed_loader_set_int(l, (detfeed_loader_param)99, 1), DETFEED_EINVAL);
    SAYS(l, "setting 99 is not a loader setting");
    CHECK_INT(detfeed_loader_set_float(l, (detfeed_loader_param)99, 1), DETFEED_EINVAL);
    SAYS(l, "setting 99 is not a loader setting");
    CHECK_INT(detfeed_loader_set_float(l, DETFEED_LOADER_IMGSZ, 64), DETFEED_EINVAL);
    SAYS(l, "imgsz: detfeed_loader_set_float does not set it", "multiple of 32");
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_HSV_H, 0), DETFEED_EINVAL);
    SAYS(l, "hsv_h: detfeed_loader_set_int does not set it");
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_CLASSES, 1), DETFEED_EINVAL);
    SAYS(l, "classes: detfeed_loader_set_int does not set it", "class ids");
    /* A success by name leaves "", whatever failed before. */
    CHECK_INT(detfeed_loader_set(l, "imgsz", "33"), DETFEED_EINVAL);
    SAYS(l, "imgsz");
    CHECK_INT(detfeed_loader_set(l, "imgsz", "64"), DETFEED_OK);
    CHECK_STR(detfeed_loader_last_error(l), "");
    /* the handle's other setters and calls before open say what failed */
    CHECK_INT(detfeed_loader_set_split(l, "dev"), DETFEED_EINVAL);
    SAYS(l, "split: 'dev' is not one of train, val, test");
    CHECK_INT(detfeed_loader_set_policy(l, (detfeed_policy)7), DETFEED_EINVAL);
    SAYS(l, "policy: 7");
    CHECK_INT(detfeed_loader_set_classes(l, NULL, 3), DETFEED_EINVAL);
    SAYS(l, "classes: ids is NULL");
    CHECK_INT(detfeed_loader_start(l, 0), DETFEED_EBADSTATE);
    SAYS(l, "the loader is not open");
    const detfeed_batch *b;
    CHECK_INT(detfeed_loader_next(l, &b), DETFEED_EBADSTATE);
    SAYS(l, "next: no epoch started");
    CHECK_INT(detfeed_loader_open(l, NULL), DETFEED_EINVAL);
    SAYS(l, "open: data is NULL");
    detfeed_loader_param p;
    CHECK_INT(detfeed_loader_param_parse("imgsz", NULL), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_param_parse("imgsz", &p), 0);
    /* Samples need an open loader. */
    uint8_t img[64 * 64 * 3], mask[16 * 16];
    float cls[4], box[16];
    int n;
    CHECK_INT(detfeed_loader_sample(l, 0, 0, img, 4, &n, cls, box, NULL),
              DETFEED_EBADSTATE);
    SAYS(l, "sample: the loader is not open");
    CHECK_INT(detfeed_loader_sample_masks(l, 0, 0, mask, NULL, NULL),
              DETFEED_EBADSTATE);
    SAYS(l, "sample_masks: the loader is not open");
    /* After a failed open: no setting, and the message says why. */
    CHECK(detfeed_loader_open(l, "/nonexistent/detfeed-params") < 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, 2), DETFEED_EBADSTATE);
    SAYS(l, "batch: the loader failed to open", "/nonexistent/detfeed-params",
         "cannot be set again");
    CHECK_INT(detfeed_loader_set_float(l, DETFEED_LOADER_MIXUP, 0), DETFEED_EBADSTATE);
    SAYS(l, "mixup: the loader failed to open");
    CHECK_INT(detfeed_loader_set(l, "imgsz", "64"), DETFEED_EBADSTATE);
    SAYS(l, "imgsz: the loader failed to open", "cannot be set again");
    CHECK(strstr(detfeed_loader_last_error(l), "fixed once the loader is open") ==
          NULL);
    detfeed_loader_destroy(l);
}

static void two_boxes(FILE *f, int i)
{
    fprintf(f, "%d 0.5 0.5 0.4 0.3\n1 0.3 0.6 0.2 0.2\n", i % 3);
}

enum { N = 8 };

/* The loader of the recipe checks: mixup always, mosaic off in the last of
 * three epochs. */
static detfeed_loader *recipe_loader(const char *images)
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, 64);
    detfeed_loader_set_int(l, DETFEED_LOADER_SEED, 7);
    detfeed_loader_set_int(l, DETFEED_LOADER_EPOCHS, 3);
    detfeed_loader_set_int(l, DETFEED_LOADER_CLOSE_MOSAIC, 1);
    detfeed_loader_set_float(l, DETFEED_LOADER_MIXUP, 1.0);
    detfeed_loader_set_float(l, DETFEED_LOADER_DEGREES, 10);
    if (!CHECK_INT(detfeed_loader_open(l, images), 0))
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    return l;
}

static void check_recipe(const char *root)
{
    char images[512];
    snprintf(images, sizeof images, "%s/images", root);
    detfeed_loader *l = recipe_loader(images);
    detfeed_recipe r, again;
    CHECK_INT(detfeed_loader_recipe(l, 0, 3, &r), 0);
    CHECK(r.epoch == 0 && r.index == 3 && r.augment == 1);
    CHECK(r.geometry.mosaic == 1 && r.mixup == 1 && r.hsv == 1);
    CHECK(r.mix_partner < N && r.mix_ratio > 0 && r.mix_ratio < 1);
    for (int k = 0; k < 3; k++) {
        CHECK(r.geometry.partners[k] < N && r.mix_geometry.partners[k] < N);
        CHECK(fabs(r.gains[k]) <= (k == 0 ? 0.015 : k == 1 ? 0.7 : 0.4));
    }
    CHECK(fabs(r.geometry.angle) <= 10 && fabs(r.mix_geometry.angle) <= 10);
    CHECK(r.geometry.angle != r.mix_geometry.angle); /* the partner's own draws */
    CHECK(r.flipud == 0);                            /* flipud 0 */
    CHECK_INT(detfeed_loader_recipe(l, 0, 3, &again), 0);
    CHECK(memcmp(&r, &again, sizeof r) == 0);
    CHECK_INT(detfeed_loader_recipe(l, 1, 3, &again), 0);
    CHECK(again.epoch == 1 && again.geometry.angle != r.geometry.angle);
    /* The last epoch is close_mosaic's: no mosaic, no mixup. */
    CHECK_INT(detfeed_loader_recipe(l, 2, 3, &again), 0);
    CHECK(again.geometry.mosaic == 0 && again.mixup == 0 && again.mix_partner == 0 &&
          again.mix_ratio == 1);
    /* Refusals. */
    CHECK_INT(detfeed_loader_recipe(l, 0, N, &again), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_recipe(l, 0, 3, NULL), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_recipe(NULL, 0, 3, &again), DETFEED_EINVAL);
    /* Settings are read back after the open, and fixed. */
    int64_t v = 0;
    CHECK_INT(detfeed_loader_get_int(l, DETFEED_LOADER_IMGSZ, &v), 0);
    CHECK(v == 64);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, 96), DETFEED_EBADSTATE);
    SAYS(l, "imgsz: settings are fixed once the loader is open");
    CHECK_INT(detfeed_loader_set_float(l, DETFEED_LOADER_MIXUP, 0), DETFEED_EBADSTATE);
    SAYS(l, "mixup: settings are fixed once the loader is open");
    /* A sample past the dataset names the index and the dataset's size. */
    uint8_t img[64 * 64 * 3], mask[16 * 16];
    float cls[8], box[32];
    int n;
    CHECK_INT(detfeed_loader_sample(l, 0, N, img, 8, &n, cls, box, NULL),
              DETFEED_EINVAL);
    SAYS(l, "sample: index 8 is not below the dataset's 8 images");
    CHECK_INT(detfeed_loader_sample(l, 0, 0, NULL, 8, &n, cls, box, NULL),
              DETFEED_EINVAL);
    SAYS(l, "sample: img and count are required");
    CHECK_INT(detfeed_loader_sample_masks(l, 0, N + 4, mask, NULL, NULL),
              DETFEED_EINVAL);
    SAYS(l, "sample_masks: index 12 is not below the dataset's 8 images");
    CHECK_INT(
        detfeed_loader_sample_mask_data(l, 0, N, mask, sizeof mask, NULL, NULL, NULL),
        DETFEED_EINVAL);
    SAYS(l, "sample_mask_data: index 8");
    CHECK_INT(detfeed_loader_sample_mask_data(l, 0, 0, NULL, 0, NULL, NULL, NULL),
              DETFEED_EINVAL);
    SAYS(l, "sample_mask_data: mask is NULL");
    detfeed_loader_destroy(l);
    /* Before the open there is no dataset to draw from. */
    detfeed_loader_create(&l, 0);
    CHECK_INT(detfeed_loader_recipe(l, 0, 0, &r), DETFEED_EINVAL);
    detfeed_loader_destroy(l);
}

int main(void)
{
    check_every_setting();
    check_refusals();
    check_documented();
    check_fraction_and_text();
    check_messages();
    char root[128];
    if (!tu_temp_dir(root, sizeof root, "params"))
        return tu_finish("test_params");
    tu_noise_dataset(root, N, 80, 60, 5, two_boxes);
    check_recipe(root);
    CHECK(tu_remove_tree(root));
    return tu_finish("test_params");
}
