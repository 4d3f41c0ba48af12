/*
 * loader_set.c - loader settings by name with their values as text
 * (detfeed_loader_set), for the CLI's --set and the Python package.
 */
#include "loader_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The settings whose values are names, with the names they accept. */
static const detfeed__named scale_names[] = {{"quotient", DETFEED_SCALE_QUOTIENT},
                                             {"reciprocal", DETFEED_SCALE_RECIPROCAL}};
static const detfeed__named output_names[] = {{"host", DETFEED_OUTPUT_HOST},
                                              {"cuda", DETFEED_OUTPUT_CUDA}};
static const detfeed__named route_names[] = {{"worker", DETFEED_ROUTE_WORKER},
                                             {"device", DETFEED_ROUTE_DEVICE}};
static const detfeed__named ultralytics_names[] = {{"8.3", 803}, {"8.4", 804}};
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
    NAMED(DETFEED_LOADER_ULTRALYTICS, ultralytics_names),
    NAMED(DETFEED_LOADER_OPENCV, opencv_names),
    NAMED(DETFEED_LOADER_OPENCV_CPU, cpu_names),
    NAMED(DETFEED_LOADER_CACHE, cache_names),
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

static bool parse_double(const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end != '\0' || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* The message of a value `p` does not accept: what it accepts, from the
 * table the setters check. */
static int refuse(detfeed_loader *l, const char *name, detfeed_loader_param p,
                  const char *value)
{
    char range[128];
    detfeed__loader_param_range(p, range, sizeof range);
    return detfeed__fail(&l->msg, DETFEED_EINVAL,
                         "%s: '%s' is not a value it accepts (%s)", name, value, range);
}

static int set_number(detfeed_loader *l, const char *name, detfeed_loader_param p,
                      const char *value)
{
    int rc = DETFEED_EINVAL;
    if (p >= DETFEED_LOADER_HSV_H) {
        double d;
        if (parse_double(value, &d))
            rc = detfeed_loader_set_float(l, p, d);
    } else {
        int64_t v;
        if (parse_int(value, 0, &v))
            rc = detfeed_loader_set_int(l, p, v);
    }
    return rc == DETFEED_EINVAL ? refuse(l, name, p, value) : rc;
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
    return rc == DETFEED_EINVAL ? refuse(l, name, p, value) : rc;
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
    int rc =
        ok && last ? detfeed_loader_set_classes(l, ids, n) : refuse(l, name, p, value);
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
    if (l->opened)
        return detfeed__fail(&l->msg, DETFEED_EBADSTATE,
                             "%s: settings are fixed once the loader is open", name);
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
