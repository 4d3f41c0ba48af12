/*
 * loader_set.c - the loader's settings: the table of the numeric ones
 * (where each lives, what it accepts, its default), which the setters, the
 * getters, the bounds query and the defaults of a new loader all read, and
 * the settings by name with their values as text (detfeed_loader_set), for
 * the CLI's --set and the Python package.
 */
#include "loader_set.h"
#include "loader_internal.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the numeric settings ---- */

/* How a setting is kept in struct detfeed_loader. */
typedef enum store {
    STORE_INT,      /* an int field at `at` */
    STORE_BOOL,     /* a bool field at `at` */
    STORE_ENUM,     /* an enum field at `at` (detfeed_dtype, detfeed_scale) */
    STORE_I64,      /* an int64_t field at `at` */
    STORE_U64,      /* a uint64_t field at `at`, set and read as int64_t */
    STORE_LIMIT,    /* limits[at] (0: the default) */
    STORE_HYP,      /* a double of the hyperparameters at `at` in detfeed__hyp */
    STORE_FRACTION, /* fraction_count (an integer) or fraction_ratio (a float) */
} store;

_Static_assert(sizeof(detfeed_dtype) == sizeof(int) &&
                   sizeof(detfeed_scale) == sizeof(int),
               "enum settings are kept as int");

/*
 * One numeric setting. Integers: set_int accepts min <= v <= max with
 * (v - min) % step == 0. Floats: set_float accepts finite v from fmin to
 * fmax, each bound excluded when its *_open flag is set. A setting that is
 * a float has no integer range (step 0) and the other way round; fraction
 * has both. Defaults: `def` for integers, `fdef` for floats, except the
 * hyperparameters', which are detfeed__hyp_defaults()'s. `words` describes
 * what it accepts in messages where the range alone would not.
 */
typedef struct param_spec {
    detfeed_loader_param param;
    store store;
    size_t at;
    int64_t min, max, step, def;
    double fmin, fmax;
    bool fmin_open, fmax_open;
    double fdef;
    const char *words;
} param_spec;

#define INT_AT(p, field, lo, hi, d)                                                    \
    {                                                                                  \
        .param = p, .store = STORE_INT, .at = offsetof(detfeed_loader, field),         \
        .min = lo, .max = hi, .step = 1, .def = d                                      \
    }
#define BOOL_AT(p, field, d)                                                           \
    {                                                                                  \
        .param = p, .store = STORE_BOOL, .at = offsetof(detfeed_loader, field),        \
        .min = 0, .max = 1, .step = 1, .def = d, .words = "0 or 1"                     \
    }
#define ENUM_AT(p, field, hi, d)                                                       \
    {                                                                                  \
        .param = p, .store = STORE_ENUM, .at = offsetof(detfeed_loader, field),        \
        .min = 0, .max = hi, .step = 1, .def = d                                       \
    }
#define LIMIT(p, limit, d, what)                                                       \
    {                                                                                  \
        .param = p, .store = STORE_LIMIT, .at = limit, .min = 1, .max = INT64_MAX,     \
        .step = 1, .def = d, .words = what                                             \
    }
#define HYP(p, field, hi)                                                              \
    {                                                                                  \
        .param = p, .store = STORE_HYP, .at = offsetof(detfeed__hyp, field),           \
        .fmin = 0, .fmax = hi                                                          \
    }
#define PROBABILITY(p, field)                                                          \
    {                                                                                  \
        .param = p, .store = STORE_HYP, .at = offsetof(detfeed__hyp, field),           \
        .fmin = 0, .fmax = 1, .words = "a probability from 0 to 1"                     \
    }

static const param_spec specs[] = {
    {.param = DETFEED_LOADER_IMGSZ,
     .store = STORE_INT,
     .at = offsetof(detfeed_loader, imgsz),
     .min = 32,
     .max = 8192,
     .step = 32,
     .def = 640},
    {.param = DETFEED_LOADER_SEED,
     .store = STORE_U64,
     .at = offsetof(detfeed_loader, seed),
     .min = INT64_MIN,
     .max = INT64_MAX,
     .step = 1,
     .def = 0,
     .words = "a signed 64-bit integer, -2^63 to 2^63 - 1"},
    INT_AT(DETFEED_LOADER_EPOCHS, epochs, 1, 1000000, 100),
    INT_AT(DETFEED_LOADER_CLOSE_MOSAIC, close_mosaic, 0, 1000000, 10),
    {.param = DETFEED_LOADER_CACHE_BYTES,
     .store = STORE_I64,
     .at = offsetof(detfeed_loader, cache_bytes),
     .min = DETFEED_CACHE_BYTES_RAM,
     .max = INT64_MAX,
     .step = 1,
     .def = 0,
     .words = "a byte count >= 0, or ram"},
    BOOL_AT(DETFEED_LOADER_AUGMENT, augment, 1),
    BOOL_AT(DETFEED_LOADER_RECT, rect_train, 0),
    INT_AT(DETFEED_LOADER_WORKERS, workers, 1, 1024, 1),
    INT_AT(DETFEED_LOADER_BATCH, batch, 1, 65536, 16),
    INT_AT(DETFEED_LOADER_PREFETCH, prefetch, 1, 1024, 4),
    INT_AT(DETFEED_LOADER_RANK, rank, 0, 65535, 0),
    INT_AT(DETFEED_LOADER_WORLD_SIZE, world_size, 1, 65536, 1),
    BOOL_AT(DETFEED_LOADER_DROP_LAST, drop_last, 0),
    BOOL_AT(DETFEED_LOADER_PIN_MEMORY, pin_memory, 1),
    ENUM_AT(DETFEED_LOADER_DTYPE, dtype, DETFEED_DTYPE_BF16, DETFEED_DTYPE_F32),
    ENUM_AT(DETFEED_LOADER_VALUE_SCALE, scale, DETFEED_SCALE_RECIPROCAL,
            DETFEED_SCALE_QUOTIENT),
    INT_AT(DETFEED_LOADER_OUTPUT, output, 0, DETFEED_OUTPUT_CUDA, DETFEED_OUTPUT_HOST),
    INT_AT(DETFEED_LOADER_COLOR, colour, 0, DETFEED_ROUTE_RECIPE, DETFEED_ROUTE_WORKER),
    INT_AT(DETFEED_LOADER_CUDA_DEVICE, cuda_device, 0, 1023, 0),
    INT_AT(DETFEED_LOADER_RECIPE_CACHE, recipe_cache, 0, DETFEED_RECIPE_CACHE_HOST,
           DETFEED_RECIPE_CACHE_AUTO),
    INT_AT(DETFEED_LOADER_ULTRALYTICS, ultralytics, 803, 804, 804),
    INT_AT(DETFEED_LOADER_OPENCV, opencv, 0, DETFEED_CV_4_DEBIAN, DETFEED_CV_5_1),
    INT_AT(DETFEED_LOADER_OPENCV_CPU, opencv_cpu, 0, DETFEED_CV_CPU_AVX512,
           DETFEED_CV_CPU_AUTO),
    INT_AT(DETFEED_LOADER_OPENCV_IPP, opencv_ipp, 0, 1, 1),
    INT_AT(DETFEED_LOADER_NUMPY, numpy, 1, 2, 2),
    INT_AT(DETFEED_LOADER_NUMPY_SORT, numpy_sort, 0, DETFEED_NUMPY_SORT_AVX512,
           DETFEED_NUMPY_SORT_SCALAR),
    INT_AT(DETFEED_LOADER_SINGLE_CLS, single_cls, 0, 1, 0),
    INT_AT(DETFEED_LOADER_NC, nc, 0, 1000000, 0),
    {.param = DETFEED_LOADER_FRACTION,
     .store = STORE_FRACTION,
     .min = 1,
     .max = INT64_MAX,
     .step = 1,
     .def = 0,
     .fmin = 0,
     .fmin_open = true,
     .fmax = 1,
     .fdef = 1.0,
     .words = "a ratio in (0, 1] such as 0.5, or a whole count >= 1 such as 4; 1 "
              "means all"},
    INT_AT(DETFEED_LOADER_CACHE, cache_mode, 0, DETFEED_CACHE_MODE_DISK,
           DETFEED_CACHE_MODE_RAM),
    INT_AT(DETFEED_LOADER_PARTNER_WINDOW, partner_window, 0, 1 << 20, 0),
    INT_AT(DETFEED_LOADER_MAX_LABELS, max_labels, 1, 10000000, 1000000),
    INT_AT(DETFEED_LOADER_MAX_LABEL_LINE, max_label_line, 16, 1 << 30, 65536),
    LIMIT(DETFEED_LOADER_MAX_WIDTH, DETFEED_LIMIT_MAX_WIDTH, DETFEED_DEFAULT_MAX_WIDTH,
          "a number of pixels"),
    LIMIT(DETFEED_LOADER_MAX_HEIGHT, DETFEED_LIMIT_MAX_HEIGHT,
          DETFEED_DEFAULT_MAX_HEIGHT, "a number of pixels"),
    LIMIT(DETFEED_LOADER_MAX_PIXELS, DETFEED_LIMIT_MAX_PIXELS,
          DETFEED_DEFAULT_MAX_PIXELS, "width x height"),
    LIMIT(DETFEED_LOADER_MAX_IMAGE_BYTES, DETFEED_LIMIT_MAX_IMAGE_BYTES,
          DETFEED_DEFAULT_MAX_IMAGE_BYTES, "decoded bytes"),
    HYP(DETFEED_LOADER_HSV_H, hsv_h, DBL_MAX),
    HYP(DETFEED_LOADER_HSV_S, hsv_s, DBL_MAX),
    HYP(DETFEED_LOADER_HSV_V, hsv_v, DBL_MAX),
    HYP(DETFEED_LOADER_DEGREES, degrees, 360),
    HYP(DETFEED_LOADER_TRANSLATE, translate, 0.5),
    HYP(DETFEED_LOADER_SCALE, scale, 1),
    {.param = DETFEED_LOADER_SHEAR,
     .store = STORE_HYP,
     .at = offsetof(detfeed__hyp, shear),
     .fmin = 0,
     .fmax = 90,
     .fmax_open = true},
    HYP(DETFEED_LOADER_PERSPECTIVE, perspective, DBL_MAX),
    PROBABILITY(DETFEED_LOADER_FLIPUD, flipud),
    PROBABILITY(DETFEED_LOADER_FLIPLR, fliplr),
    PROBABILITY(DETFEED_LOADER_MOSAIC, mosaic),
    PROBABILITY(DETFEED_LOADER_MIXUP, mixup),
    PROBABILITY(DETFEED_LOADER_CUTMIX, cutmix),
    PROBABILITY(DETFEED_LOADER_BGR, bgr),
    PROBABILITY(DETFEED_LOADER_COPY_PASTE, copy_paste),
    INT_AT(DETFEED_LOADER_COPY_PASTE_MODE, hyp.copy_paste_mode, 0, DETFEED_PASTE_MIXUP,
           DETFEED_PASTE_FLIP),
};
#undef INT_AT
#undef BOOL_AT
#undef ENUM_AT
#undef LIMIT
#undef HYP
#undef PROBABILITY

/* Every setting by name (Ultralytics' names for the hyperparameters). */
static const detfeed__named param_names[] = {
    {"imgsz", DETFEED_LOADER_IMGSZ},
    {"seed", DETFEED_LOADER_SEED},
    {"epochs", DETFEED_LOADER_EPOCHS},
    {"close_mosaic", DETFEED_LOADER_CLOSE_MOSAIC},
    {"cache_bytes", DETFEED_LOADER_CACHE_BYTES},
    {"augment", DETFEED_LOADER_AUGMENT},
    {"rect", DETFEED_LOADER_RECT},
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
    {"recipe_cache", DETFEED_LOADER_RECIPE_CACHE},
    {"pin_memory", DETFEED_LOADER_PIN_MEMORY},
    {"ultralytics", DETFEED_LOADER_ULTRALYTICS},
    {"opencv", DETFEED_LOADER_OPENCV},
    {"opencv_cpu", DETFEED_LOADER_OPENCV_CPU},
    {"opencv_ipp", DETFEED_LOADER_OPENCV_IPP},
    {"nc", DETFEED_LOADER_NC},
    {"numpy", DETFEED_LOADER_NUMPY},
    {"numpy_sort", DETFEED_LOADER_NUMPY_SORT},
    {"single_cls", DETFEED_LOADER_SINGLE_CLS},
    {"partner_window", DETFEED_LOADER_PARTNER_WINDOW},
    {"cache", DETFEED_LOADER_CACHE},
    {"cache_path", DETFEED_LOADER_CACHE_PATH},
    {"verify_record", DETFEED_LOADER_VERIFY_RECORD},
    {"datasets_dir", DETFEED_LOADER_DATASETS_DIR},
    {"max_width", DETFEED_LOADER_MAX_WIDTH},
    {"max_height", DETFEED_LOADER_MAX_HEIGHT},
    {"max_pixels", DETFEED_LOADER_MAX_PIXELS},
    {"max_image_bytes", DETFEED_LOADER_MAX_IMAGE_BYTES},
    {"max_labels", DETFEED_LOADER_MAX_LABELS},
    {"max_label_line", DETFEED_LOADER_MAX_LABEL_LINE},
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
    {"copy_paste", DETFEED_LOADER_COPY_PASTE},
    {"copy_paste_mode", DETFEED_LOADER_COPY_PASTE_MODE},
};

static const param_spec *spec_of(detfeed_loader_param p)
{
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        if (specs[i].param == p)
            return &specs[i];
    return NULL;
}

static bool takes_int(const param_spec *s)
{
    return s != NULL && s->step > 0;
}

static bool takes_float(const param_spec *s)
{
    return s != NULL && (s->store == STORE_HYP || s->store == STORE_FRACTION);
}

/* The field of `s` in `l`. */
static void *field(const detfeed_loader *l, const param_spec *s)
{
    const char *base = s->store == STORE_HYP ? (const char *)&l->hyp : (const char *)l;
    return (void *)(base + s->at);
}

/* Whether set_float's bounds take v. */
static bool float_in_range(const param_spec *s, double v)
{
    return isfinite(v) && (s->fmin_open ? v > s->fmin : v >= s->fmin) &&
           (s->fmax_open ? v < s->fmax : v <= s->fmax);
}

static void put_int(detfeed_loader *l, const param_spec *s, int64_t v)
{
    void *f = field(l, s);
    switch (s->store) {
    case STORE_INT:
    case STORE_ENUM:
        *(int *)f = (int)v;
        break;
    case STORE_BOOL:
        *(bool *)f = v != 0;
        break;
    case STORE_I64:
        *(int64_t *)f = v;
        break;
    case STORE_U64:
        *(uint64_t *)f = (uint64_t)v;
        break;
    case STORE_LIMIT:
        l->limits[s->at] = (uint64_t)v;
        break;
    case STORE_FRACTION: /* a count (1: all) */
        l->fraction_count = v;
        l->fraction_ratio = 1.0;
        break;
    case STORE_HYP:
        break;
    }
}

static int64_t read_int(const detfeed_loader *l, const param_spec *s)
{
    const void *f = field(l, s);
    switch (s->store) {
    case STORE_INT:
    case STORE_ENUM:
        return *(const int *)f;
    case STORE_BOOL:
        return *(const bool *)f;
    case STORE_I64:
        return *(const int64_t *)f;
    case STORE_U64:
        return (int64_t) * (const uint64_t *)f;
    case STORE_LIMIT:
        return l->limits[s->at] ? (int64_t)l->limits[s->at] : s->def;
    case STORE_FRACTION:
        return l->fraction_count;
    case STORE_HYP:
        break;
    }
    return 0;
}

static void put_float(detfeed_loader *l, const param_spec *s, double v)
{
    if (s->store == STORE_FRACTION) { /* a ratio */
        l->fraction_count = 0;
        l->fraction_ratio = v;
    } else {
        *(double *)field(l, s) = v;
    }
}

static double read_float(const detfeed_loader *l, const param_spec *s)
{
    if (s->store == STORE_FRACTION)
        return l->fraction_count ? 0.0 : l->fraction_ratio;
    return *(const double *)field(l, s);
}

void detfeed__loader_defaults(detfeed_loader *l)
{
    l->hyp = detfeed__hyp_defaults();
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        const param_spec *s = &specs[i];
        if (s->store == STORE_LIMIT || s->store == STORE_HYP)
            continue; /* limits: 0 is the default; the hyperparameters' above */
        if (s->store == STORE_FRACTION)
            put_float(l, s, s->fdef);
        else
            put_int(l, s, s->def);
    }
}

/* The name of setting `p` ("imgsz"), or NULL when there is none. */
static const char *param_name(detfeed_loader_param p)
{
    for (size_t i = 0; i < sizeof param_names / sizeof param_names[0]; i++)
        if (param_names[i].value == (int)p)
            return param_names[i].name;
    return NULL;
}

/* How messages name setting `p`: its name, or "setting N" (in buf). */
static const char *param_label(detfeed_loader_param p, char *buf, size_t size)
{
    const char *name = param_name(p);
    if (name == NULL)
        snprintf(buf, size, "setting %d", (int)p);
    return name ? name : buf;
}

int detfeed__loader_refuse_set(detfeed_loader *l, const char *name)
{
    if (l->open_failed)
        return detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                             "%s: the loader failed to open (%s): it cannot be set "
                             "again; only detfeed_loader_destroy is left",
                             name, l->open_msg.text);
    return detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                         "%s: settings are fixed once the loader is open", name);
}

/* The refusal of a setting the setter `setter` does not set (an unknown
 * one, or one of the other kind). */
static int refuse_kind(detfeed_loader *l, detfeed_loader_param p, const char *name,
                       const char *setter)
{
    char range[128];
    if (param_name(p) == NULL)
        return detfeed__fail(&l->msg, DETFEED_EINVAL, "%s is not a loader setting",
                             name);
    detfeed__loader_param_range(p, range, sizeof range);
    return detfeed__fail(&l->msg, DETFEED_EINVAL,
                         "%s: %s does not set it (it takes %s)", name, setter, range);
}

/* The refusal of `value` for setting `p`, with what it accepts; a value
 * given as text is shown quoted. */
static int refuse_value(detfeed_loader *l, detfeed_loader_param p, const char *name,
                        const char *value, bool text)
{
    char range[128];
    detfeed__loader_param_range(p, range, sizeof range);
    return detfeed__fail(&l->msg, DETFEED_EINVAL,
                         text ? "%s: '%s' is not a value it accepts (%s)"
                              : "%s: %s is not a value it accepts (%s)",
                         name, value, range);
}

/* v as the shortest decimal that reads back as v. */
static void format_double(double v, char *buf, size_t size)
{
    snprintf(buf, size, "%.15g", v);
    if (isfinite(v) && strtod(buf, NULL) != v)
        snprintf(buf, size, "%.17g", v);
}

int detfeed_loader_set_int(detfeed_loader *l, detfeed_loader_param p, int64_t v)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    char buf[32];
    const char *name = param_label(p, buf, sizeof buf);
    if (l->opened)
        return detfeed__loader_refuse_set(l, name);
    const param_spec *s = spec_of(p);
    if (!takes_int(s))
        return refuse_kind(l, p, name, "detfeed_loader_set_int");
    /* (v - min) % step in unsigned arithmetic: the difference can pass
     * INT64_MAX (seed's range is every int64_t). */
    if (v < s->min || v > s->max ||
        ((uint64_t)v - (uint64_t)s->min) % (uint64_t)s->step != 0) {
        char value[32];
        snprintf(value, sizeof value, "%lld", (long long)v);
        return refuse_value(l, p, name, value, false);
    }
    put_int(l, s, v);
    return DETFEED_OK;
}

int detfeed_loader_set_float(detfeed_loader *l, detfeed_loader_param p, double v)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    char buf[32];
    const char *name = param_label(p, buf, sizeof buf);
    if (l->opened)
        return detfeed__loader_refuse_set(l, name);
    const param_spec *s = spec_of(p);
    if (!takes_float(s))
        return refuse_kind(l, p, name, "detfeed_loader_set_float");
    if (!float_in_range(s, v)) {
        char value[32];
        format_double(v, value, sizeof value);
        return refuse_value(l, p, name, value, false);
    }
    put_float(l, s, v);
    return DETFEED_OK;
}

int detfeed_loader_get_int(const detfeed_loader *l, detfeed_loader_param p,
                           int64_t *out)
{
    const param_spec *s = spec_of(p);
    if (l == NULL || out == NULL || !takes_int(s))
        return DETFEED_EINVAL;
    *out = read_int(l, s);
    return DETFEED_OK;
}

int detfeed_loader_get_float(const detfeed_loader *l, detfeed_loader_param p,
                             double *out)
{
    const param_spec *s = spec_of(p);
    if (l == NULL || out == NULL || !takes_float(s))
        return DETFEED_EINVAL;
    *out = read_float(l, s);
    return DETFEED_OK;
}

int detfeed_loader_param_bounds_int(detfeed_loader_param p, int64_t *min, int64_t *max,
                                    int64_t *step, int64_t *default_value)
{
    const param_spec *s = spec_of(p);
    if (!takes_int(s))
        return DETFEED_EINVAL;
    if (min)
        *min = s->min;
    if (max)
        *max = s->max;
    if (step)
        *step = s->step;
    if (default_value)
        *default_value = s->def;
    return DETFEED_OK;
}

int detfeed_loader_param_bounds_float(detfeed_loader_param p, double *min, double *max,
                                      double *default_value)
{
    const param_spec *s = spec_of(p);
    if (!takes_float(s))
        return DETFEED_EINVAL;
    if (min) /* the smallest and largest values accepted */
        *min = s->fmin_open ? nextafter(s->fmin, INFINITY) : s->fmin;
    if (max)
        *max = s->fmax_open ? nextafter(s->fmax, -INFINITY) : s->fmax;
    if (default_value) {
        detfeed__hyp h = detfeed__hyp_defaults();
        *default_value = s->store == STORE_HYP
                             ? *(const double *)((const char *)&h + s->at)
                             : s->fdef;
    }
    return DETFEED_OK;
}

/* What the numeric setting `s` accepts, in words. */
static void range_words(const param_spec *s, char *buf, size_t size)
{
    if (s->store == STORE_LIMIT)
        snprintf(buf, size, "%s >= %lld (default %lld)", s->words, (long long)s->min,
                 (long long)s->def);
    else if (s->words)
        snprintf(buf, size, "%s", s->words);
    else if (takes_int(s) && s->step > 1)
        snprintf(buf, size, "an integer from %lld to %lld, a multiple of %lld",
                 (long long)s->min, (long long)s->max, (long long)s->step);
    else if (takes_int(s))
        snprintf(buf, size, "an integer from %lld to %lld", (long long)s->min,
                 (long long)s->max);
    else if (s->fmax == DBL_MAX)
        snprintf(buf, size, "a number >= %g", s->fmin);
    else
        snprintf(buf, size, "a number from %g to %s%g", s->fmin,
                 s->fmax_open ? "below " : "", s->fmax);
}

void detfeed__loader_param_range(detfeed_loader_param p, char *buf, size_t size)
{
    const param_spec *s = spec_of(p);
    if (s != NULL)
        range_words(s, buf, size);
    else if (p == DETFEED_LOADER_CLASSES)
        snprintf(buf, size,
                 "class ids >= 0 separated by commas, such as 0,2,5; "
                 "empty for all classes");
    else
        snprintf(buf, size, "text");
}

int detfeed_loader_param_parse(const char *name, detfeed_loader_param *out)
{
    int v = 0;
    if (out == NULL)
        return DETFEED_EINVAL;
    int rc = detfeed__lookup(param_names, sizeof param_names / sizeof param_names[0],
                             name, &v);
    if (rc == DETFEED_OK)
        *out = (detfeed_loader_param)v;
    return rc;
}

/* ---- settings by name, their values as text ---- */

/* The settings whose values are names, with the names they accept. */
static const detfeed__named scale_names[] = {{"quotient", DETFEED_SCALE_QUOTIENT},
                                             {"reciprocal", DETFEED_SCALE_RECIPROCAL}};
static const detfeed__named output_names[] = {{"host", DETFEED_OUTPUT_HOST},
                                              {"cuda", DETFEED_OUTPUT_CUDA}};
static const detfeed__named route_names[] = {{"worker", DETFEED_ROUTE_WORKER},
                                             {"device", DETFEED_ROUTE_DEVICE},
                                             {"recipe", DETFEED_ROUTE_RECIPE}};
static const detfeed__named recipe_cache_names[] = {
    {"auto", DETFEED_RECIPE_CACHE_AUTO},
    {"device", DETFEED_RECIPE_CACHE_DEVICE},
    {"host", DETFEED_RECIPE_CACHE_HOST}};
static const detfeed__named ultralytics_names[] = {{"8.3", 803}, {"8.4", 804}};
static const detfeed__named numpy_sort_names[] = {
    {"scalar", DETFEED_NUMPY_SORT_SCALAR},
    {"avx2", DETFEED_NUMPY_SORT_AVX2},
    {"avx512", DETFEED_NUMPY_SORT_AVX512}};
static const detfeed__named dtype_names[] = {{"u8", DETFEED_DTYPE_U8},
                                             {"f32", DETFEED_DTYPE_F32},
                                             {"f16", DETFEED_DTYPE_F16},
                                             {"bf16", DETFEED_DTYPE_BF16}};
static const detfeed__named opencv_names[] = {{"4", DETFEED_CV_4},
                                              {"4-debian", DETFEED_CV_4_DEBIAN},
                                              {"5.0", DETFEED_CV_5_0},
                                              {"5.1", DETFEED_CV_5_1}};
static const detfeed__named cache_names[] = {{"none", DETFEED_CACHE_MODE_NONE},
                                             {"ram", DETFEED_CACHE_MODE_RAM},
                                             {"disk", DETFEED_CACHE_MODE_DISK}};
static const detfeed__named paste_names[] = {{"flip", DETFEED_PASTE_FLIP},
                                             {"mixup", DETFEED_PASTE_MIXUP}};
static const detfeed__named cpu_names[] = {{"auto", DETFEED_CV_CPU_AUTO},
                                           {"sse", DETFEED_CV_CPU_SSE},
                                           {"avx2", DETFEED_CV_CPU_AVX2},
                                           {"avx512", DETFEED_CV_CPU_AVX512}};

typedef struct named_setting {
    detfeed_loader_param param;
    const detfeed__named *names;
    size_t n;
} named_setting;

#define NAMED(p, t)                                                                    \
    {                                                                                  \
        p, t, sizeof t / sizeof t[0]                                                   \
    }
static const named_setting named_settings[] = {
    NAMED(DETFEED_LOADER_DTYPE, dtype_names),
    NAMED(DETFEED_LOADER_VALUE_SCALE, scale_names),
    NAMED(DETFEED_LOADER_OUTPUT, output_names),
    NAMED(DETFEED_LOADER_COLOR, route_names),
    NAMED(DETFEED_LOADER_RECIPE_CACHE, recipe_cache_names),
    NAMED(DETFEED_LOADER_ULTRALYTICS, ultralytics_names),
    NAMED(DETFEED_LOADER_OPENCV, opencv_names),
    NAMED(DETFEED_LOADER_OPENCV_CPU, cpu_names),
    NAMED(DETFEED_LOADER_NUMPY_SORT, numpy_sort_names),
    NAMED(DETFEED_LOADER_CACHE, cache_names),
    NAMED(DETFEED_LOADER_COPY_PASTE_MODE, paste_names),
};
#undef NAMED

static const named_setting *named_setting_of(detfeed_loader_param p)
{
    for (size_t i = 0; i < sizeof named_settings / sizeof named_settings[0]; i++)
        if (named_settings[i].param == p)
            return &named_settings[i];
    return NULL;
}

/* "a, b, c" of a setting's names, for messages. */
static void list_names(const named_setting *s, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < s->n && used < size; i++) {
        int k =
            snprintf(buf + used, size - used, "%s%s", i ? ", " : "", s->names[i].name);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

static int set_named(detfeed_loader *l, const char *name, const named_setting *s,
                     const char *value)
{
    int v = 0;
    if (detfeed__lookup(s->names, s->n, value, &v) == DETFEED_OK)
        return detfeed_loader_set_int(l, s->param, v);
    char accepted[128];
    list_names(s, accepted, sizeof accepted);
    return detfeed__fail(&l->msg, DETFEED_EINVAL, "%s: '%s' is not one of %s", name,
                         value, accepted);
}

/* The whole of `text` as a number (in C syntax with base 0, or decimal
 * with base 10), or false. */
static bool parse_int(const char *text, int base, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, base);
    if (errno || end == text || *end != '\0')
        return false;
    *out = v;
    return true;
}

/* The whole of `text` as a finite double, or false; a value too small for
 * a normal double (1e-320) is what strtod rounds it to, as Python's float()
 * takes it, not an error. */
static bool parse_double(const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    bool underflow = errno == ERANGE && fabs(v) <= DBL_MIN;
    if ((errno && !underflow) || end == text || *end != '\0' || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static int set_number(detfeed_loader *l, const char *name, detfeed_loader_param p,
                      const char *value)
{
    int rc = DETFEED_EINVAL;
    if (!takes_int(spec_of(p))) {
        double d;
        if (parse_double(value, &d))
            rc = detfeed_loader_set_float(l, p, d);
    } else {
        int64_t v;
        if (parse_int(value, 0, &v))
            rc = detfeed_loader_set_int(l, p, v);
    }
    return rc == DETFEED_EINVAL ? refuse_value(l, p, name, value, true) : rc;
}

/* fraction: an integer is a count, anything else a ratio (Python's int and
 * float, as Ultralytics tells them apart). */
static int set_fraction(detfeed_loader *l, const char *name, detfeed_loader_param p,
                        const char *value)
{
    int64_t count;
    double ratio;
    int rc = DETFEED_EINVAL;
    if (parse_int(value, 10, &count))
        rc = detfeed_loader_set_int(l, p, count);
    else if (parse_double(value, &ratio))
        rc = detfeed_loader_set_float(l, p, ratio);
    return rc == DETFEED_EINVAL ? refuse_value(l, p, name, value, true) : rc;
}

/* One class id of a "0,2,5" list at *s (spaces around it), moving *s past
 * it and its comma; false when there is none. */
static bool next_class(const char **s, int *id, bool *last)
{
    const char *p = *s;
    while (isspace((unsigned char)*p))
        p++;
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (end == p || errno || v < INT_MIN || v > INT_MAX)
        return false;
    for (p = end; isspace((unsigned char)*p);)
        p++;
    if (*p != ',' && *p != '\0')
        return false;
    *id = (int)v;
    *last = *p == '\0';
    *s = *last ? p : p + 1;
    return true;
}

/* classes: "0,2,5"; empty (or only spaces): all classes. */
static int set_classes(detfeed_loader *l, const char *name, detfeed_loader_param p,
                       const char *value)
{
    size_t cap = strlen(value) / 2 + 1, n = 0;
    const char *s = value;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return detfeed_loader_set_classes(l, NULL, 0);
    int *ids = malloc(cap * sizeof *ids);
    if (ids == NULL)
        return detfeed__fail(&l->msg, DETFEED_ENOMEM, "out of memory");
    bool last = false, ok = true;
    while (ok && !last && n < cap)
        ok = next_class(&s, &ids[n++], &last);
    int rc = ok && last ? detfeed_loader_set_classes(l, ids, n)
                        : refuse_value(l, p, name, value, true);
    free(ids);
    return rc;
}

/* cache_bytes: a byte count, or "ram" (DETFEED_CACHE_BYTES_RAM). */
static int set_cache_bytes(detfeed_loader *l, const char *name, detfeed_loader_param p,
                           const char *value)
{
    if (strcmp(value, "ram") == 0)
        return detfeed_loader_set_int(l, p, DETFEED_CACHE_BYTES_RAM);
    return set_number(l, name, p, value);
}

/* cache_path: a file, or "" for the default place. */
static int set_cache_path(detfeed_loader *l, const char *name, detfeed_loader_param p,
                          const char *value)
{
    (void)name;
    (void)p;
    return detfeed_loader_set_cache_path(l, value);
}

/* verify_record: "auto", "none" or a file path. */
static int set_verify_record(detfeed_loader *l, const char *name,
                             detfeed_loader_param p, const char *value)
{
    (void)name;
    (void)p;
    return detfeed_loader_set_verify_record(l, value);
}

/* datasets_dir: a folder, or "" for the one Ultralytics' settings give. */
static int set_datasets_dir(detfeed_loader *l, const char *name, detfeed_loader_param p,
                            const char *value)
{
    (void)p;
    if (l->opened)
        return detfeed__loader_refuse_set(l, name);
    char *copy = value[0] ? malloc(strlen(value) + 1) : NULL;
    if (value[0] && copy == NULL)
        return detfeed__fail(&l->msg, DETFEED_ENOMEM, "out of memory");
    if (copy)
        strcpy(copy, value);
    free(l->datasets_dir);
    l->datasets_dir = copy;
    return DETFEED_OK;
}

/* The settings whose text is read by a function of their own. */
typedef int (*text_setter)(detfeed_loader *l, const char *name, detfeed_loader_param p,
                           const char *value);
static const struct {
    detfeed_loader_param param;
    text_setter set;
} text_settings[] = {
    {DETFEED_LOADER_FRACTION, set_fraction},
    {DETFEED_LOADER_CLASSES, set_classes},
    {DETFEED_LOADER_CACHE_BYTES, set_cache_bytes},
    {DETFEED_LOADER_CACHE_PATH, set_cache_path},
    {DETFEED_LOADER_VERIFY_RECORD, set_verify_record},
    {DETFEED_LOADER_DATASETS_DIR, set_datasets_dir},
};

static text_setter text_setter_of(detfeed_loader_param p)
{
    for (size_t i = 0; i < sizeof text_settings / sizeof text_settings[0]; i++)
        if (text_settings[i].param == p)
            return text_settings[i].set;
    return NULL;
}

int detfeed_loader_set(detfeed_loader *l, const char *name, const char *value)
{
    if (l == NULL || name == NULL || value == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&l->msg);
    if (l->opened)
        return detfeed__loader_refuse_set(l, name);
    detfeed_loader_param p;
    if (detfeed_loader_param_parse(name, &p) != DETFEED_OK)
        return detfeed__fail(&l->msg, DETFEED_EINVAL, "'%s' is not a loader setting",
                             name);
    const named_setting *s = named_setting_of(p);
    text_setter set = text_setter_of(p);
    if (s)
        return set_named(l, name, s, value);
    return set ? set(l, name, p, value) : set_number(l, name, p, value);
}
