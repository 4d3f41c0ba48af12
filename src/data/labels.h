/*
 * labels.h - YOLO label files (internal).
 *
 * One text file per image, one instance per line, whitespace separated,
 * coordinates normalized to [0, 1]:
 *   detect   cls xc yc w h
 *   segment  cls x1 y1 ... xn yn    (any line with more than 6 fields makes the
 *                                    whole file polygons; boxes are derived)
 *   pose     cls xc yc w h  x1 y1 [v1] ... xK yK [vK]   (K, D from kpt_shape)
 * Lines end as Python's str.splitlines() ends them (\n, \r, \r\n and the
 * others of path.h's detfeed__line_break); values are separated by what
 * str.split() splits at (detfeed__py_space).
 * Validated as Ultralytics' verify_image_label does, but line by line: every
 * rejected line is reported with its number and reason, and a file with any
 * rejected line is rejected as a whole (its image is skipped, so no object
 * silently becomes background). Duplicate rows are removed and counted, and
 * then - as NumPy's unique does - the rows are in sorted order.
 */
#ifndef DETFEED_LABELS_H
#define DETFEED_LABELS_H

#include "core/internal.h"

typedef struct detfeed__labels {
    int n;          /* instances */
    float *cls;     /* [n] class ids (integers) */
    float *boxes;   /* [n][4] centre x, centre y, width, height, normalized */
    int nkpt;       /* keypoints per instance (pose), else 0 */
    float *kpts;    /* [n][nkpt][3] x, y, visibility */
    int *seg_start; /* [n + 1] polygon point offsets; NULL without polygons */
    float *seg_xy;  /* [seg_start[n]][2] polygon points */
    void *block_;   /* the one allocation holding the arrays */
} detfeed__labels;

/* The most classes a dataset may have: class ids are below it even when
 * the number of classes is not known. */
#define DETFEED__MAX_CLASSES 1000000

typedef struct detfeed__label_rules {
    int nc;          /* classes; class ids must be < nc (0: unknown, ids must
                        be < DETFEED__MAX_CLASSES) */
    int nkpt, kdim;  /* pose: keypoints and values per keypoint (2 or 3); else 0 */
    size_t max_line; /* longest accepted line in bytes */
    int max_lines;   /* most instances accepted in one file */
} detfeed__label_rules;

/* Receives each rejected line: file, 1-based line (0: the whole file), reason. */
typedef void (*detfeed__problem_fn)(void *ctx, const char *file, int line,
                                    const char *reason);

/*
 * Parses the text of one label file. Returns DETFEED_OK with out->n >= 0
 * (0: background), DETFEED_ELABEL when any line was rejected (each one
 * reported through `report`; out is empty), or DETFEED_ENOMEM.
 * *duplicates receives the number of duplicate rows removed.
 */
int detfeed__labels_parse(const char *text, size_t len, const char *file,
                          const detfeed__label_rules *rules, detfeed__labels *out,
                          int *duplicates, detfeed__problem_fn report, void *ctx);

void detfeed__labels_free(detfeed__labels *labels);

/*
 * Ultralytics' update_labels with `classes`: keeps only the instances whose
 * class id is one of ids[0..n-1], with their boxes, keypoints and polygons,
 * in their order. Labels left without instances are freed (as an empty
 * file's). Returns the number of instances removed.
 */
int detfeed__labels_keep_classes(detfeed__labels *labels, const int *ids, size_t n);

#endif /* DETFEED_LABELS_H */
