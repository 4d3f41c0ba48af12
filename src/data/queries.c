/*
 * queries.c - what an open dataset answers: counts, problems, images,
 * labels, classes; and the internal views the cache and the layers above
 * read (dataset_internal.h, dataset_access.h).
 */
#include "dataset_internal.h"

#include <string.h>

int64_t detfeed_dataset_stat_get(const detfeed_dataset *ds, detfeed_dataset_stat stat)
{
    if (ds == NULL || (unsigned)stat >= DETFEED__NSTATS)
        return -1;
    return ds->stats[stat];
}

size_t detfeed_dataset_problem_count(const detfeed_dataset *ds)
{
    return ds ? ds->nproblems : 0;
}

int detfeed_dataset_problem(const detfeed_dataset *ds, size_t index, const char **file,
                            int *line, const char **reason)
{
    if (ds == NULL || index >= ds->nproblems)
        return DETFEED_EINVAL;
    if (file)
        *file = ds->problems[index].file;
    if (line)
        *line = ds->problems[index].line;
    if (reason)
        *reason = ds->problems[index].reason;
    return DETFEED_OK;
}

detfeed_problem_kind detfeed_dataset_problem_kind(const detfeed_dataset *ds,
                                                  size_t index)
{
    if (ds == NULL || index >= ds->nproblems)
        return DETFEED_PROBLEM_NONE;
    const detfeed__problem *p = &ds->problems[index];
    return p->setting ? DETFEED_PROBLEM_SETTING
           : p->note  ? DETFEED_PROBLEM_NOTE
                      : DETFEED_PROBLEM_SKIP;
}

size_t detfeed_dataset_size(const detfeed_dataset *ds)
{
    return ds ? ds->n : 0;
}

const char *detfeed_dataset_image_path(const detfeed_dataset *ds, size_t i)
{
    return ds && i < ds->n ? ds->images[i].path : NULL;
}

int detfeed_dataset_image_size(const detfeed_dataset *ds, size_t i, int *width,
                               int *height)
{
    if (ds == NULL || i >= ds->n || width == NULL || height == NULL)
        return DETFEED_EINVAL;
    *width = ds->images[i].width;
    *height = ds->images[i].height;
    return DETFEED_OK;
}

int detfeed_dataset_instance_count(const detfeed_dataset *ds, size_t i)
{
    return ds && i < ds->n ? ds->images[i].labels.n : -1;
}

int detfeed_dataset_labels(const detfeed_dataset *ds, size_t i, float *cls,
                           float *boxes, float *keypoints)
{
    if (ds == NULL || i >= ds->n)
        return DETFEED_EINVAL;
    const detfeed__labels *l = &ds->images[i].labels;
    size_t n = (size_t)l->n;
    if (cls && n)
        memcpy(cls, l->cls, n * sizeof *cls);
    if (boxes && n)
        memcpy(boxes, l->boxes, n * 4 * sizeof *boxes);
    if (keypoints && n && l->kpts)
        memcpy(keypoints, l->kpts, n * (size_t)l->nkpt * 3 * sizeof *keypoints);
    return DETFEED_OK;
}

detfeed_task detfeed_dataset_task(const detfeed_dataset *ds)
{
    return ds ? ds->task : DETFEED_TASK_DETECT;
}

int detfeed_dataset_class_count(const detfeed_dataset *ds)
{
    if (ds && ds->single_cls)
        return 1; /* the trainer's data["nc"] = 1 */
    return ds ? ds->nc : 0;
}

const char *detfeed_dataset_class_name(const detfeed_dataset *ds, int k)
{
    if (ds && ds->single_cls)
        return k == 0 ? "item" : NULL; /* the trainer's names {0: "item"} */
    return ds && ds->names && k >= 0 && k < ds->nc ? ds->names[k] : NULL;
}

void detfeed_dataset_kpt_shape(const detfeed_dataset *ds, int *nkpt, int *ndim)
{
    if (nkpt)
        *nkpt = ds ? ds->nkpt : 0;
    if (ndim)
        *ndim = ds ? ds->kdim : 0;
}

const int *detfeed_dataset_flip_idx(const detfeed_dataset *ds)
{
    return ds ? ds->flip_idx : NULL;
}

const detfeed__limits *detfeed__dataset_limits(const detfeed_dataset *ds)
{
    return &ds->codec->limits;
}

const detfeed__image *detfeed__dataset_image(const detfeed_dataset *ds, size_t i)
{
    return i < ds->n ? &ds->images[i] : NULL;
}

detfeed__label_view detfeed__dataset_label_view(const detfeed_dataset *ds, size_t i)
{
    if (ds == NULL || i >= ds->n)
        return (detfeed__label_view){0};
    const detfeed__labels *l = &ds->images[i].labels;
    return (detfeed__label_view){.n = l->n,
                                 .nkpt = l->nkpt,
                                 .cls = l->cls,
                                 .boxes = l->boxes,
                                 .kpts = l->kpts,
                                 .seg_start = l->seg_start,
                                 .seg_xy = l->seg_xy};
}
