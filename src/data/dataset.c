/*
 * dataset.c - the dataset handle: lifetime, settings, and the open, which
 * finds the images (sources.c) and indexes them (index.c). What an open
 * dataset answers is queries.c's.
 */
#include "dataset_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- lifetime and settings ------------------------------------------------ */

const char *detfeed_dataset_progress(const detfeed_dataset *ds, uint64_t *done,
                                     uint64_t *total)
{
    return detfeed__progress_read(ds ? ds->progress : NULL, done, total);
}

void detfeed__dataset_report_to(detfeed_dataset *ds, detfeed__progress *p)
{
    ds->progress = p ? p : &ds->own_progress;
}

int detfeed_dataset_create(detfeed_dataset **out, uint32_t flags)
{
    if (out == NULL)
        return DETFEED_EINVAL;
    *out = NULL;
    if (flags != 0)
        return DETFEED_EINVAL;
    detfeed_dataset *ds = calloc(1, sizeof *ds);
    if (ds == NULL)
        return DETFEED_ENOMEM;
    int rc = detfeed_codec_create(&ds->codec, 0);
    if (rc != DETFEED_OK) {
        free(ds);
        return rc;
    }
    detfeed__progress_init(&ds->own_progress);
    ds->progress = &ds->own_progress;
    ds->policy = DETFEED_POLICY_SKIP;
    ds->verify = DETFEED_VERIFY_HEADER;
    ds->max_line = 65536;
    ds->max_labels = 1000000;
    ds->max_problems = 10000;
    ds->fraction = (detfeed__fraction){.count = 0, .ratio = 1.0};
    ds->split = detfeed__str_dup("train");
    if (ds->split == NULL) {
        detfeed_dataset_destroy(ds);
        return DETFEED_ENOMEM;
    }
    *out = ds;
    return DETFEED_OK;
}

void detfeed_dataset_destroy(detfeed_dataset *ds)
{
    if (ds == NULL)
        return;
    for (size_t i = 0; i < ds->n; i++) {
        free(ds->images[i].path);
        detfeed__labels_free(&ds->images[i].labels);
    }
    free(ds->images);
    for (size_t i = 0; i < ds->nproblems; i++) {
        free(ds->problems[i].file);
        free(ds->problems[i].reason);
    }
    free(ds->problems);
    for (int k = 0; ds->names && k < ds->nc; k++)
        free(ds->names[k]);
    free(ds->names);
    free(ds->flip_idx);
    free(ds->split);
    free(ds->root);
    free(ds->datasets_dir);
    detfeed__root_free(&ds->where);
    free(ds->classes);
    detfeed_codec_destroy(ds->codec);
    free(ds);
}

const char *detfeed_dataset_last_error(const detfeed_dataset *ds)
{
    return ds ? ds->msg.text : "no dataset";
}

/* The parameters' names, for messages ("setting" for an unknown one). */
static const char *param_name(detfeed_dataset_param param)
{
    static const char *const names[] = {"policy",         "verify",     "nc",
                                        "max_label_line", "max_labels", "max_problems",
                                        "fraction",       "single_cls", "opencv"};
    return (unsigned)param < sizeof names / sizeof names[0] ? names[param] : "setting";
}

/* The refusal of any setting once the dataset is open. */
static int refuse_opened(detfeed_dataset *ds, const char *what)
{
    return detfeed__fail(&ds->msg, DETFEED_EBADSTATE,
                         "%s: settings are fixed once the dataset is open "
                         "(detfeed_dataset_open)",
                         what);
}

/* DETFEED_OK when `value` is in lo .. hi, else its refusal (a message
 * naming the parameter and the range). */
static int in_range(detfeed_dataset *ds, detfeed_dataset_param param, int64_t value,
                    int64_t lo, int64_t hi)
{
    if (value >= lo && value <= hi)
        return DETFEED_OK;
    return detfeed__fail(&ds->msg, DETFEED_EINVAL,
                         "%s: %lld is not a value it accepts (an integer from %lld "
                         "to %lld)",
                         param_name(param), (long long)value, (long long)lo,
                         (long long)hi);
}

int detfeed_dataset_set_int(detfeed_dataset *ds, detfeed_dataset_param param,
                            int64_t value)
{
    if (ds == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&ds->msg);
    if (ds->opened)
        return refuse_opened(ds, param_name(param));
    int rc;
    switch (param) {
    case DETFEED_DATASET_POLICY:
        if ((rc = in_range(ds, param, value, DETFEED_POLICY_SKIP,
                           DETFEED_POLICY_FAIL)) == DETFEED_OK)
            ds->policy = (int)value;
        return rc;
    case DETFEED_DATASET_VERIFY:
        if ((rc = in_range(ds, param, value, DETFEED_VERIFY_HEADER,
                           DETFEED_VERIFY_NONE)) == DETFEED_OK)
            ds->verify = (int)value;
        return rc;
    case DETFEED_DATASET_NC:
        if ((rc = in_range(ds, param, value, 0, 1000000)) == DETFEED_OK)
            ds->nc_param = (int)value;
        return rc;
    case DETFEED_DATASET_MAX_LABEL_LINE:
        if ((rc = in_range(ds, param, value, 16, 1 << 30)) == DETFEED_OK)
            ds->max_line = (size_t)value;
        return rc;
    case DETFEED_DATASET_MAX_LABELS:
        if ((rc = in_range(ds, param, value, 1, 10000000)) == DETFEED_OK)
            ds->max_labels = (int)value;
        return rc;
    case DETFEED_DATASET_MAX_PROBLEMS:
        if ((rc = in_range(ds, param, value, 0, 100000000)) == DETFEED_OK)
            ds->max_problems = (size_t)value;
        return rc;
    case DETFEED_DATASET_FRACTION:
        if (value < 1)
            return detfeed__fail(&ds->msg, DETFEED_EINVAL,
                                 "fraction: %lld is not a count of images it accepts "
                                 "(a whole count >= 1, 1 meaning all, or a ratio in "
                                 "(0, 1])",
                                 (long long)value);
        ds->fraction = (detfeed__fraction){.count = value, .ratio = 1.0};
        return DETFEED_OK;
    case DETFEED_DATASET_SINGLE_CLS:
        if (value != 0 && value != 1)
            return detfeed__fail(&ds->msg, DETFEED_EINVAL,
                                 "single_cls: %lld is not 0 or 1", (long long)value);
        ds->single_cls = value == 1;
        return DETFEED_OK;
    case DETFEED_DATASET_OPENCV:
        if ((rc = in_range(ds, param, value, 0, DETFEED_CV_4_DEBIAN)) == DETFEED_OK)
            detfeed_codec_set_opencv(ds->codec, (detfeed_cv_version)value);
        return rc;
    }
    return detfeed__fail(&ds->msg, DETFEED_EINVAL,
                         "dataset parameter %d is not one detfeed_dataset_set_int "
                         "takes (DETFEED_DATASET_POLICY .. DETFEED_DATASET_OPENCV)",
                         (int)param);
}

int detfeed_dataset_set_float(detfeed_dataset *ds, detfeed_dataset_param param,
                              double value)
{
    if (ds == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&ds->msg);
    if (ds->opened)
        return refuse_opened(ds, param_name(param));
    if (param != DETFEED_DATASET_FRACTION)
        return detfeed__fail(&ds->msg, DETFEED_EINVAL,
                             "dataset parameter %d does not take a float; only the "
                             "fraction does",
                             (int)param);
    if (!(value > 0 && value <= 1)) /* NaN included */
        return detfeed__fail(&ds->msg, DETFEED_EINVAL,
                             "fraction: %g is not a ratio it accepts (a ratio in "
                             "(0, 1], or a whole count >= 1)",
                             value);
    ds->fraction = (detfeed__fraction){.count = 0, .ratio = value};
    return DETFEED_OK;
}

#define MAX_CLASS_IDS 1000000

int detfeed_dataset_set_classes(detfeed_dataset *ds, const int *ids, size_t n)
{
    if (ds == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&ds->msg);
    if (ids == NULL && n > 0)
        return detfeed__fail(&ds->msg, DETFEED_EINVAL,
                             "classes: ids is NULL with n = %zu (NULL only with n = 0, "
                             "all classes)",
                             n);
    if (ds->opened)
        return refuse_opened(ds, "classes");
    if (n > MAX_CLASS_IDS)
        return detfeed__fail(&ds->msg, DETFEED_EINVAL,
                             "classes: %zu ids; at most %d are accepted", n,
                             MAX_CLASS_IDS);
    for (size_t k = 0; k < n; k++)
        if (ids[k] < 0)
            return detfeed__fail(&ds->msg, DETFEED_EINVAL,
                                 "classes: %d is negative; class ids are >= 0", ids[k]);
    int *copy = n ? malloc(n * sizeof *copy) : NULL;
    if (n && copy == NULL)
        return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    if (n)
        memcpy(copy, ids, n * sizeof *copy);
    free(ds->classes);
    ds->classes = copy;
    ds->nclasses = n;
    return DETFEED_OK;
}

/* Sets the string setting `what` at *slot to a copy of value (or NULL);
 * ds is not NULL and its message cleared. */
static int set_string(detfeed_dataset *ds, const char *what, char **slot,
                      const char *value)
{
    if (ds->opened)
        return refuse_opened(ds, what);
    char *c = value ? detfeed__str_dup(value) : NULL;
    if (value && c == NULL)
        return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "%s: out of memory", what);
    free(*slot);
    *slot = c;
    return DETFEED_OK;
}

int detfeed_dataset_set_split(detfeed_dataset *ds, const char *split)
{
    if (ds == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&ds->msg);
    if (split == NULL ||
        (strcmp(split, "train") && strcmp(split, "val") && strcmp(split, "test")))
        return detfeed__fail(&ds->msg, DETFEED_EINVAL,
                             "split: '%s' is not one of train, val, test",
                             split ? split : "(NULL)");
    return set_string(ds, "split", &ds->split, split);
}

int detfeed_dataset_set_root(detfeed_dataset *ds, const char *root)
{
    if (ds == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&ds->msg);
    return set_string(ds, "root", &ds->root, root);
}

int detfeed_dataset_set_datasets_dir(detfeed_dataset *ds, const char *dir)
{
    if (ds == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&ds->msg);
    return set_string(ds, "datasets_dir", &ds->datasets_dir, dir);
}

const char *detfeed_dataset_root(const detfeed_dataset *ds)
{
    return ds ? ds->where.abs : NULL;
}

const char *detfeed_dataset_root_rule(const detfeed_dataset *ds)
{
    return ds ? ds->where.rule : NULL;
}

int detfeed_dataset_open(detfeed_dataset *ds, const char *source)
{
    if (ds == NULL)
        return DETFEED_EINVAL;
    if (source == NULL)
        return detfeed__fail(&ds->msg, DETFEED_EINVAL,
                             "open: source is NULL (a dataset YAML, a folder of "
                             "images or a list of them)");
    if (ds->opened)
        return detfeed__fail(&ds->msg, DETFEED_EBADSTATE,
                             "open: the dataset is already open (once per handle)");
    ds->opened = true;
    detfeed__msg_clear(&ds->msg);
    detfeed__strlist paths = {0};
    int rc = detfeed__dataset_find_images(ds, source, &paths);
    /* DETFEED_DATASET_NC where the source names no classes: class_0, ...;
     * where it names them, the same count or an error (not one of the two
     * silently). */
    if (rc == DETFEED_OK && ds->nc == 0 && ds->nc_param > 0)
        rc = detfeed__dataset_default_names(ds, ds->nc_param);
    else if (rc == DETFEED_OK && ds->nc_param > 0 && ds->nc != ds->nc_param)
        rc = detfeed__fail(&ds->msg, DETFEED_EINVAL,
                           "%s: nc %d, but it names %d classes (nc is for data that "
                           "names none)",
                           source, ds->nc_param, ds->nc);
    if (rc == DETFEED_OK)
        rc = detfeed__dataset_index(ds, &paths, source);
    detfeed__strlist_free(&paths);
    if (rc == DETFEED_ENOMEM && ds->msg.text[0] == '\0') /* a bare allocation */
        detfeed__fail(&ds->msg, rc, "%s: out of memory while indexing", source);
    return rc;
}

int detfeed_dataset_set_limit(detfeed_dataset *ds, detfeed_codec_limit limit,
                              uint64_t value)
{
    if (ds == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&ds->msg);
    if (ds->opened)
        return refuse_opened(ds, "limits");
    if (detfeed_codec_set_limit(ds->codec, limit, value) != DETFEED_OK)
        return detfeed__fail(&ds->msg, DETFEED_EINVAL, "%s",
                             detfeed_codec_last_error(ds->codec));
    return DETFEED_OK;
}
