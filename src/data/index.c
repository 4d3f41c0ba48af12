/*
 * index.c - the dataset index made of the image paths a source found: each
 * image checked (a regular file, its header or pixels as configured), its
 * label file read, orphan label files noted, the classes filter and
 * single_cls applied, the counts; and images the loader could not decode
 * taken out again (detfeed__dataset_drop).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "dataset_internal.h"
#include "heif_internal.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Label-parser callback: every rejected line is a problem. */
static void label_problem(void *ctx, const char *file, int line, const char *reason)
{
    detfeed_dataset *ds = ctx;
    ds->stats[DETFEED_STAT_REJECTED_LINES]++;
    int rc = detfeed__problem_add(ds, file, line, reason, false);
    if (rc != DETFEED_OK && ds->pending == DETFEED_OK)
        ds->pending = rc; /* the first one is the error under FAIL */
}

/* ---- images and labels ---------------------------------------------------- */

/* Refuses what is not a regular file (a FIFO, a dangling link, a link
 * loop, ...) without opening it; on a problem returns it and sets *skip. */
static int check_file(detfeed_dataset *ds, const char *path, bool *skip)
{
    struct stat st;
    int rc = detfeed__stat_regular(path, &st, &ds->msg);
    *skip = rc != DETFEED_OK;
    if (rc == DETFEED_ENOMEM) /* not the file's fault: the open stops */
        return rc;
    return *skip ? detfeed__problem_add(ds, path, 0,
                                        detfeed__reason_of(ds->msg.text, path), false)
                 : DETFEED_OK;
}

/* Checks the image as configured; on a problem returns it and sets *skip. */
static int verify_image(detfeed_dataset *ds, detfeed__image *im, bool *skip)
{
    int rc = DETFEED_OK;
    uint8_t *px = NULL;
    if (ds->verify == DETFEED_VERIFY_DECODE)
        rc = detfeed_codec_decode_file(ds->codec, im->path, &px, &im->width,
                                       &im->height);
    else if (ds->verify == DETFEED_VERIFY_HEADER)
        rc = detfeed_codec_probe_file(ds->codec, im->path, &im->width, &im->height);
    detfeed_free(px);
    *skip = true;
    if (rc == DETFEED_ENOMEM)
        return detfeed__fail(&ds->msg, rc, "%s", detfeed_codec_last_error(ds->codec));
    if (rc != DETFEED_OK)
        return detfeed__problem_add(
            ds, im->path, 0,
            detfeed__reason_of(detfeed_codec_last_error(ds->codec), im->path), false);
    if (ds->verify != DETFEED_VERIFY_NONE && (im->width < 10 || im->height < 10)) {
        char reason[96];
        snprintf(reason, sizeof reason, "image size %dx%d is below 10 pixels",
                 im->width, im->height);
        return detfeed__problem_add(ds, im->path, 0, reason, false);
    }
    *skip = false;
    return DETFEED_OK;
}

static int load_labels(detfeed_dataset *ds, detfeed__image *im, const char *label_path,
                       bool *skip)
{
    *skip = false;
    if (detfeed__path_type(label_path) == DETFEED__F_NONE) {
        im->label_state = DETFEED__LABEL_MISSING;
        return DETFEED_OK;
    }
    /* Anything else is read: a folder, a FIFO, a dangling link or a link
     * loop is refused (without opening it) with what it is. */
    char *text;
    size_t len;
    /* the largest file of max_labels lines within max_label_line */
    uint64_t most = (uint64_t)ds->max_labels * ((uint64_t)ds->max_line + 1);
    int rc = detfeed__read_text(label_path, most < SIZE_MAX ? (size_t)most : SIZE_MAX,
                                &text, &len, &ds->msg);
    if (rc == DETFEED_ENOMEM)
        return rc;
    if (rc != DETFEED_OK) {
        *skip = true;
        return detfeed__problem_add(
            ds, label_path, 0, detfeed__reason_of(ds->msg.text, label_path), false);
    }
    /* single_cls: Ultralytics checks no class id against nc */
    detfeed__label_rules rules = {.nc = ds->single_cls ? 0 : ds->nc,
                                  .nkpt = ds->nkpt,
                                  .kdim = ds->kdim,
                                  .max_line = ds->max_line,
                                  .max_lines = ds->max_labels};
    int dups = 0;
    ds->pending = DETFEED_OK;
    rc = detfeed__labels_parse(text, len, label_path, &rules, &im->labels, &dups,
                               label_problem, ds);
    free(text);
    if (rc == DETFEED_ENOMEM)
        return detfeed__fail(&ds->msg, rc, "%s: out of memory", label_path);
    if (rc == DETFEED_ELABEL) {
        *skip = true;
        return ds->pending;
    }
    ds->stats[DETFEED_STAT_DUPLICATES] += dups;
    if (dups > 0) {
        char note[96];
        snprintf(note, sizeof note, "%d duplicate label rows removed", dups);
        rc = detfeed__problem_add(ds, label_path, 0, note, true);
    }
    im->label_state = im->labels.n ? DETFEED__LABEL_FOUND : DETFEED__LABEL_EMPTY;
    return rc;
}

/* Notes image `path`'s label file (returned in *label_path, malloc'd) and
 * its folder, so that the orphan search expects it. */
static int expect_label(detfeed_dataset *ds, const char *path,
                        detfeed__strlist *label_dirs, detfeed__strlist *label_files,
                        char **label_path)
{
    *label_path = detfeed__label_path(path);
    char *label_dir = *label_path ? detfeed__path_dir(*label_path) : NULL;
    if (label_dir == NULL || !detfeed__strlist_add(label_files, *label_path) ||
        !detfeed__strlist_take(label_dirs, label_dir)) {
        free(*label_path);
        *label_path = NULL;
        return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    }
    return DETFEED_OK;
}

/* Whether `path` is a .avif, .heic or .heif holding an image of another
 * format (its first bytes read; a file that is not there or not regular is
 * left to check_file): Ultralytics reads it with Pillow, which detfeed
 * reproduces for AVIF in a .avif and HEIF in a .heic or .heif only. */
static bool pillow_other(const char *path, const char *suffix)
{
    if (strcmp(suffix, "avif") != 0 && strcmp(suffix, "heic") != 0 &&
        strcmp(suffix, "heif") != 0)
        return false;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    uint8_t head[32];
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
                    ? pread(fd, head, sizeof head, 0)
                    : -1;
    close(fd);
    return n > 0 && detfeed__pillow_other(suffix, head, (uint64_t)n);
}

/* Counts an image detfeed does not decode as unsupported, saying why. */
static int unsupported(detfeed_dataset *ds, const char *path, const char *suffix,
                       bool other)
{
    ds->stats[DETFEED_STAT_UNSUPPORTED]++;
    char reason[200];
    if (other)
        snprintf(reason, sizeof reason,
                 "unsupported image format '%s' holding another format (Ultralytics "
                 "reads it with Pillow, which detfeed does not reproduce)",
                 suffix);
    else
        snprintf(reason, sizeof reason,
                 "unsupported image format '%s' (Ultralytics reads it with Pillow, "
                 "which detfeed does not reproduce)",
                 suffix);
    return detfeed__problem_add(ds, path, 0, reason, false);
}

/* Adds one image path to the index, or counts why it is skipped. */
static int add_image(detfeed_dataset *ds, const char *path,
                     detfeed__strlist *label_dirs, detfeed__strlist *label_files)
{
    char suffix[16], *label_path; /* an image's label is its, decoded or not */
    detfeed__path_suffix(path, suffix, sizeof suffix);
    int rc = expect_label(ds, path, label_dirs, label_files, &label_path);
    if (rc != DETFEED_OK)
        return rc;
    bool other = pillow_other(path, suffix);
    if (!detfeed__is_decodable_suffix(suffix) || other) {
        free(label_path);
        return unsupported(ds, path, suffix, other);
    }
    ds->stats[DETFEED_STAT_IMAGES]++;
    detfeed__image *im = &ds->images[ds->n];
    memset(im, 0, sizeof *im);
    if ((im->path = detfeed__str_dup(path)) == NULL) {
        free(label_path);
        return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    }
    bool skip;
    rc = check_file(ds, im->path, &skip);
    if (rc == DETFEED_OK && !skip)
        rc = verify_image(ds, im, &skip);
    if (rc == DETFEED_OK && !skip)
        rc = load_labels(ds, im, label_path, &skip);
    free(label_path);
    if (skip || rc != DETFEED_OK) {
        detfeed__labels_free(&im->labels);
        free(im->path);
        im->path = NULL;
        if (skip)
            ds->stats[DETFEED_STAT_CORRUPT]++;
        return rc;
    }
    ds->n++;
    return DETFEED_OK;
}

/* `path`'s folder made canonical with `dirs` (sorted, each label folder
 * once) and `canon` (their realpath, or NULL where it is not a folder),
 * then its name: the same key for a file named relatively and absolutely,
 * or through a link; NULL when its folder is none (or out of memory). */
static char *label_key(const detfeed__strlist *dirs, char *const *canon,
                       const char *path)
{
    char *dir = detfeed__path_dir(path);
    long k = dir ? detfeed__strlist_find(dirs, dir) : -1;
    free(dir);
    if (k < 0 || canon[k] == NULL)
        return NULL;
    const char *slash = strrchr(path, '/');
    return detfeed__path_join(canon[k], slash ? slash + 1 : path);
}

/* The label files found in `folder` (canonical: walked once for all the
 * names it has) that no image expects: a note each, counted. */
static int orphans_in(detfeed_dataset *ds, const char *folder,
                      const detfeed__strlist *keys)
{
    detfeed__strlist found = {0};
    detfeed__msg ignore;
    detfeed__walk_opts walk = {.recursive = false, .keep = detfeed__is_txt_suffix};
    int rc = detfeed__walk(folder, &walk, &found, &ignore);
    if (rc == DETFEED_EIO)
        rc = DETFEED_OK; /* an unreadable label folder has been reported */
    detfeed__strlist_sort(&found);
    for (size_t k = 0; k < found.n && rc == DETFEED_OK; k++) {
        if (detfeed__strlist_find(keys, found.v[k]) >= 0)
            continue;
        ds->stats[DETFEED_STAT_ORPHAN_LABELS]++;
        rc = detfeed__problem_add(ds, found.v[k], 0, "label file without an image",
                                  true);
    }
    detfeed__strlist_free(&found);
    return rc;
}

/* Label files in the label folders that no image refers to. Folders and
 * files are compared by their canonical folder (realpath), so that a list
 * naming images relatively and absolutely counts each label once. */
static int find_orphans(detfeed_dataset *ds, detfeed__strlist *dirs,
                        const detfeed__strlist *expected)
{
    detfeed__strlist_sort(dirs);
    size_t n = 0;
    for (size_t i = 0; i < dirs->n; i++) /* each folder once */
        if (n == 0 || strcmp(dirs->v[i], dirs->v[n - 1]) != 0)
            dirs->v[n++] = dirs->v[i];
        else
            free(dirs->v[i]);
    dirs->n = n;
    char **canon = calloc(n ? n : 1, sizeof *canon);
    detfeed__strlist keys = {0}, walked = {0};
    int rc = canon ? DETFEED_OK : DETFEED_ENOMEM;
    for (size_t i = 0; i < n && rc == DETFEED_OK; i++) {
        detfeed__ftype t = detfeed__path_type(dirs->v[i]);
        if (t == DETFEED__F_DIR)
            canon[i] = realpath(dirs->v[i], NULL);
        else if (t != DETFEED__F_NONE) /* a file where the label folder goes */
            rc = detfeed__problem_add(ds, dirs->v[i], 0,
                                      "not a folder: the images it would label have no "
                                      "label files",
                                      true);
    }
    for (size_t k = 0; k < expected->n && rc == DETFEED_OK; k++) {
        char *key = label_key(dirs, canon, expected->v[k]);
        if (key && !detfeed__strlist_take(&keys, key))
            rc = DETFEED_ENOMEM;
    }
    detfeed__strlist_sort(&keys);
    for (size_t i = 0; i < n && rc == DETFEED_OK; i++)
        if (canon[i] && !detfeed__strlist_add(&walked, canon[i]))
            rc = DETFEED_ENOMEM;
    detfeed__strlist_sort(&walked);
    for (size_t i = 0; i < walked.n && rc == DETFEED_OK; i++)
        if (i == 0 || strcmp(walked.v[i], walked.v[i - 1]) != 0)
            rc = orphans_in(ds, walked.v[i], &keys);
    for (size_t i = 0; canon && i < n; i++)
        free(canon[i]);
    free(canon);
    detfeed__strlist_free(&keys);
    detfeed__strlist_free(&walked);
    return rc == DETFEED_ENOMEM ? detfeed__fail(&ds->msg, rc, "out of memory") : rc;
}

/* Ultralytics drops every polygon when only some instances have one. */
static int settle_task(detfeed_dataset *ds, const char *source)
{
    int64_t with = 0, total = 0;
    for (size_t i = 0; i < ds->n; i++) {
        total += ds->images[i].labels.n;
        if (ds->images[i].labels.seg_start)
            with += ds->images[i].labels.n;
    }
    ds->task = ds->nkpt ? DETFEED_TASK_POSE
               : with   ? DETFEED_TASK_SEGMENT
                        : DETFEED_TASK_DETECT;
    if (with == 0 || with == total)
        return DETFEED_OK;
    for (size_t i = 0; i < ds->n; i++)
        ds->images[i].labels.seg_start = NULL;
    ds->task = DETFEED_TASK_DETECT;
    return detfeed__problem_add(
        ds, source, 0,
        "some label files are boxes and some polygons: polygons dropped, as "
        "Ultralytics does",
        true);
}

/* Ultralytics' update_labels: the classes filter, then single_cls. */
static int apply_classes(detfeed_dataset *ds, const char *source)
{
    int64_t removed = 0;
    for (size_t i = 0; i < ds->n; i++) {
        detfeed__labels *l = &ds->images[i].labels;
        if (ds->classes)
            removed += detfeed__labels_keep_classes(l, ds->classes, ds->nclasses);
        for (int k = 0; ds->single_cls && k < l->n; k++)
            l->cls[k] = 0;
    }
    ds->stats[DETFEED_STAT_CLASS_FILTERED] = removed;
    if (removed == 0)
        return DETFEED_OK;
    char note[96];
    snprintf(note, sizeof note, "classes: %lld instances of other classes removed",
             (long long)removed);
    return detfeed__setting_note(ds, source, note);
}

/* The classes asked for against the dataset's (when known). */
static int check_classes(detfeed_dataset *ds, const char *source)
{
    for (size_t k = 0; ds->nc > 0 && k < ds->nclasses; k++)
        if (ds->classes[k] >= ds->nc)
            return detfeed__fail(&ds->msg, DETFEED_EINVAL,
                                 "classes: %d is not a class of %s (its %d classes are "
                                 "0 to %d)",
                                 ds->classes[k], source, ds->nc, ds->nc - 1);
    return DETFEED_OK;
}

static double round_half_even(double x)
{
    double f = floor(x), d = x - f;
    return d > 0.5 || (d == 0.5 && fmod(f, 2) != 0) ? f + 1 : f;
}

size_t detfeed__fraction_keep(const detfeed__fraction *f, size_t files)
{
    if (f->count == 1 || (f->count == 0 && f->ratio == 1))
        return files; /* get_split_fraction: 1 is all */
    if (f->count > 0)
        return (uint64_t)f->count < files ? (size_t)f->count : files;
    /* max(1, round(len(im_files) * fraction)) */
    double count = fmax(1, round_half_even((double)files * f->ratio));
    return count < (double)files ? (size_t)count : files;
}

/* Image files (Ultralytics' suffixes) in `paths`. */
static size_t count_image_files(const detfeed__strlist *paths)
{
    size_t n = 0;
    char suffix[16];
    for (size_t i = 0; i < paths->n; i++) {
        detfeed__path_suffix(paths->v[i], suffix, sizeof suffix);
        n += detfeed__is_image_suffix(suffix);
    }
    return n;
}

/* The files of the sorted list: image files up to the fraction's count
 * are indexed, later ones left out (their label files expected); other
 * entries (lines of a list file) are reported as always. */
static int add_files(detfeed_dataset *ds, const detfeed__strlist *paths,
                     detfeed__strlist *dirs, detfeed__strlist *expected,
                     const char *source)
{
    size_t files = count_image_files(paths);
    size_t keep = detfeed__fraction_keep(&ds->fraction, files), seen = 0;
    int rc = DETFEED_OK;
    detfeed__progress_begin(ds->progress, "index", paths->n);
    for (size_t i = 0; i < paths->n && rc == DETFEED_OK; i++) {
        char suffix[16], *label_path = NULL;
        detfeed__progress_add(ds->progress, 1);
        detfeed__path_suffix(paths->v[i], suffix, sizeof suffix);
        if (!detfeed__is_image_suffix(suffix) || seen++ < keep) {
            rc = add_image(ds, paths->v[i], dirs, expected);
            continue;
        }
        ds->stats[DETFEED_STAT_LEFT_OUT]++;
        rc = expect_label(ds, paths->v[i], dirs, expected, &label_path);
        free(label_path);
    }
    detfeed__progress_end(ds->progress);
    if (rc != DETFEED_OK || keep == files)
        return rc;
    char note[160];
    snprintf(note, sizeof note,
             "fraction: the first %zu of %zu image files kept, in sorted order as "
             "Ultralytics takes them",
             keep, files);
    return detfeed__setting_note(ds, source, note);
}

static void count(detfeed_dataset *ds)
{
    for (size_t i = 0; i < ds->n; i++) {
        const detfeed__image *im = &ds->images[i];
        ds->stats[DETFEED_STAT_INSTANCES] += im->labels.n;
        ds->stats[DETFEED_STAT_LABELLED] += im->labels.n > 0;
        ds->stats[DETFEED_STAT_MISSING_LABELS] +=
            im->label_state == DETFEED__LABEL_MISSING;
        ds->stats[DETFEED_STAT_EMPTY_LABELS] += im->label_state == DETFEED__LABEL_EMPTY;
    }
    ds->stats[DETFEED_STAT_USABLE] = (int64_t)ds->n;
    ds->stats[DETFEED_STAT_BACKGROUNDS] =
        (int64_t)ds->n - ds->stats[DETFEED_STAT_LABELLED];
}

/* The error of a dataset left without images: why, with its first problem
 * that left something out (a note, such as a YAML's missing path, is not
 * why), "file:line: reason" (no line where it is the file's as a whole). */
static int no_usable(detfeed_dataset *ds, const char *source)
{
    const detfeed__problem *p = ds->nproblems ? &ds->problems[0] : NULL;
    for (size_t k = 0; k < ds->nproblems; k++)
        if (!ds->problems[k].note) {
            p = &ds->problems[k];
            break;
        }
    char line[24] = "";
    if (p && p->line > 0)
        snprintf(line, sizeof line, ":%d", p->line);
    return detfeed__fail(
        &ds->msg, DETFEED_EFORMAT, "%s%sno usable images (%lld found)%s%s%s%s%s",
        source ? source : "", source ? ": " : "",
        (long long)ds->stats[DETFEED_STAT_IMAGES], p ? "; first problem: " : "",
        p ? p->file : "", line, p ? ": " : "", p ? p->reason : "");
}

int detfeed__dataset_index(detfeed_dataset *ds, detfeed__strlist *paths,
                           const char *source)
{
    detfeed__strlist_sort(paths);
    ds->images = calloc(paths->n ? paths->n : 1, sizeof *ds->images);
    if (ds->images == NULL)
        return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    detfeed__strlist dirs = {0}, expected = {0};
    int rc = check_classes(ds, source);
    if (rc == DETFEED_OK)
        rc = add_files(ds, paths, &dirs, &expected, source);
    if (rc == DETFEED_OK)
        rc = find_orphans(ds, &dirs, &expected);
    detfeed__strlist_free(&dirs);
    detfeed__strlist_free(&expected);
    if (rc == DETFEED_OK)
        rc = settle_task(ds, source);
    if (rc == DETFEED_OK)
        rc = apply_classes(ds, source);
    count(ds);
    return rc == DETFEED_OK && ds->n == 0 ? no_usable(ds, source) : rc;
}

int detfeed__dataset_drop(detfeed_dataset *ds, char *const *why)
{
    size_t kept = 0;
    int rc = DETFEED_OK;
    for (size_t i = 0; i < ds->n; i++) {
        detfeed__image *im = &ds->images[i];
        if (why[i] == NULL) {
            ds->images[kept++] = *im;
            continue;
        }
        ds->stats[DETFEED_STAT_CORRUPT]++;
        int r = detfeed__problem_add(ds, im->path, 0,
                                     detfeed__reason_of(why[i], im->path), false);
        rc = rc == DETFEED_OK ? r : rc;
        free(im->path);
        detfeed__labels_free(&im->labels);
    }
    ds->n = kept;
    static const detfeed_dataset_stat recount[] = {
        DETFEED_STAT_INSTANCES, DETFEED_STAT_LABELLED, DETFEED_STAT_MISSING_LABELS,
        DETFEED_STAT_EMPTY_LABELS};
    for (size_t k = 0; k < sizeof recount / sizeof recount[0]; k++)
        ds->stats[recount[k]] = 0;
    count(ds);
    return rc == DETFEED_OK && ds->n == 0 ? no_usable(ds, NULL) : rc;
}
