/*
 * dataset_internal.h - the dataset handle's layout and what the files of
 * the data layer share about it (dataset.c, sources.c, index.c,
 * problems.c, queries.c, the caches). Everything above data/ (aug, feed)
 * reads a dataset through dataset_access.h instead. Never installed.
 */
#ifndef DETFEED_DATASET_INTERNAL_H
#define DETFEED_DATASET_INTERNAL_H

#include "data_internal.h"
#include "dataset_access.h"
#include "labels.h"
#include "path.h"
#include "resolve.h"

/* The largest dataset YAML read (image lists are streamed whatever their
 * size; a label file may hold max_labels lines of max_label_line bytes). */
#define DETFEED__MAX_YAML_FILE (256u << 20)

enum { DETFEED__LABEL_MISSING = 0, DETFEED__LABEL_EMPTY = 1, DETFEED__LABEL_FOUND = 2 };

/* One usable image of the index. */
typedef struct detfeed__image {
    char *path;
    int width, height; /* as decoded (0 when not verified) */
    int label_state;
    detfeed__labels labels;
} detfeed__image;

typedef struct detfeed__problem {
    char *file, *reason;
    int line;     /* 0: of the file as a whole */
    bool note;    /* a remark (nothing was skipped) */
    bool setting; /* a note on what a setting of the user's did */
} detfeed__problem;

#define DETFEED__NSTATS 15

/* Ultralytics' fraction: a count (count > 0; 1 is all) or a ratio. */
typedef struct detfeed__fraction {
    int64_t count; /* 0: the ratio applies */
    double ratio;  /* (0, 1]; 1: all */
} detfeed__fraction;

struct detfeed_dataset {
    detfeed__msg msg;
    /* indexing's progress: into own_progress, or the loader's */
    detfeed__progress own_progress, *progress;
    /* settings */
    int policy, verify, nc_param, max_labels;
    size_t max_line, max_problems;
    char *split, *root, *datasets_dir;
    detfeed__fraction fraction;
    int *classes; /* Ultralytics' classes, or NULL for all */
    size_t nclasses;
    bool single_cls;
    bool opened;
    /* what the source says */
    detfeed__root where; /* a YAML's root and the rule that found it */
    detfeed_task task;
    int nc, nkpt, kdim;
    char **names;
    int *flip_idx;
    /* the index */
    detfeed__image *images;
    size_t n;
    int64_t stats[DETFEED__NSTATS];
    detfeed__problem *problems;
    size_t nproblems, cap_problems;
    int pending; /* the first label error under DETFEED_POLICY_FAIL */
    detfeed_codec *codec;
};

/* ---- the problem report (problems.c) ---- */

/* Records a problem. Notes never stop the open; a problem that is not a
 * note fails it under DETFEED_POLICY_FAIL (the return value, with the
 * message set). */
int detfeed__problem_add(detfeed_dataset *ds, const char *file, int line,
                         const char *reason, bool note);
/* A note on what a setting of the user's did (fraction, classes) at the
 * source: DETFEED_PROBLEM_SETTING. */
int detfeed__setting_note(detfeed_dataset *ds, const char *source, const char *note);

/* A codec message is "path: reason"; the reason alone for the report. */
const char *detfeed__reason_of(const char *msg, const char *path);

/* ---- sources (sources.c) ---- */

/* The image paths `source` names (a dataset YAML, a folder, an image list
 * or an image) appended to *paths, unsorted; with what the YAML says
 * (names, keypoints) set on ds. What cannot be read is a problem. */
int detfeed__dataset_find_images(detfeed_dataset *ds, const char *source,
                                 detfeed__strlist *paths);

/* Ultralytics' names for `nc` classes without names: class_0, ... */
int detfeed__dataset_default_names(detfeed_dataset *ds, int nc);

/* ---- the index (index.c) ---- */

/* Indexes the image files of `paths` (sorted here): each one checked as
 * configured, its labels read, orphan labels noted, classes and task
 * settled, counted; `source` names the dataset in notes and errors. */
int detfeed__dataset_index(detfeed_dataset *ds, detfeed__strlist *paths,
                           const char *source);

/* How many of `files` image files Ultralytics' fraction keeps (all of
 * them when it asks for more). */
size_t detfeed__fraction_keep(const detfeed__fraction *f, size_t files);

/*
 * What detfeed_dataset_open reads from a dataset YAML's text without the
 * file system: names (or nc), kpt_shape, flip_idx and the shape of the
 * split's entries, with the same checks and messages (`file` names the text
 * in them). The handle is then used up (as after an open) with no images.
 * For the fuzz target and tests: nothing is opened, listed or walked.
 */
int detfeed__dataset_yaml_meta(detfeed_dataset *ds, const char *file, const char *text,
                               size_t len);

/* Image i of the index (i < detfeed_dataset_size). */
const detfeed__image *detfeed__dataset_image(const detfeed_dataset *ds, size_t i);

/* The limits every decode of the dataset's images applies
 * (detfeed_dataset_set_limit; read-only once open). */
const detfeed__limits *detfeed__dataset_limits(const detfeed_dataset *ds);

/* MemAvailable of a /proc/meminfo text ("MemAvailable:  N kB") in bytes;
 * false when it has none (detfeed__mem_available's parser). */
bool detfeed__meminfo_available(const char *text, uint64_t *bytes);

#endif /* DETFEED_DATASET_INTERNAL_H */
