/*
 * dataset.c - the dataset index: sources (YAML, folder, list), image
 * verification, label files, orphans, counts and the problem report.
 */
#include "dataset_internal.h"

#include "yaml.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_TEXT_FILE (16u << 20)

/* ---- problems ------------------------------------------------------------- */

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

/* Records a problem. Notes never stop the open; a problem that is not a
 * note fails it under DETFEED_POLICY_FAIL (the return value, with the
 * message set). */
static int problem(detfeed_dataset *ds, const char *file, int line, const char *reason,
                   bool note)
{
    if (ds->nproblems < ds->max_problems) {
        if (ds->nproblems == ds->cap_problems) {
            size_t cap = ds->cap_problems ? ds->cap_problems * 2 : 64;
            detfeed__problem *p = realloc(ds->problems, cap * sizeof *p);
            if (p == NULL)
                return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
            ds->problems = p;
            ds->cap_problems = cap;
        }
        detfeed__problem *p = &ds->problems[ds->nproblems];
        p->file = dup_str(file);
        p->reason = dup_str(reason);
        p->line = line;
        if (p->file == NULL || p->reason == NULL) {
            free(p->file);
            free(p->reason);
            return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
        }
        ds->nproblems++;
    }
    if (note || ds->policy != DETFEED_POLICY_FAIL)
        return DETFEED_OK;
    if (line > 0)
        return detfeed__fail(&ds->msg, DETFEED_ELABEL, "%s:%d: %s", file, line, reason);
    return detfeed__fail(&ds->msg, DETFEED_ECORRUPT, "%s: %s", file, reason);
}

/* Label-parser callback: every rejected line is a problem. */
static void label_problem(void *ctx, const char *file, int line, const char *reason)
{
    detfeed_dataset *ds = ctx;
    ds->stats[DETFEED_STAT_REJECTED_LINES]++;
    int rc = problem(ds, file, line, reason, false);
    if (rc != DETFEED_OK && ds->pending == DETFEED_OK)
        ds->pending = rc; /* the first one is the error under FAIL */
}

/* A codec message is "path: reason"; the reason alone for the report. */
static const char *reason_of(const char *msg, const char *path)
{
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        return msg + n + 2;
    return msg;
}

/* ---- lifetime and settings ------------------------------------------------ */

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
    ds->policy = DETFEED_POLICY_SKIP;
    ds->verify = DETFEED_VERIFY_HEADER;
    ds->max_line = 65536;
    ds->max_labels = 10000;
    ds->max_problems = 10000;
    ds->fraction = (detfeed__fraction){.count = 0, .ratio = 1.0};
    ds->split = dup_str("train");
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
    free(ds->classes);
    detfeed_codec_destroy(ds->codec);
    free(ds);
}

const char *detfeed_dataset_last_error(const detfeed_dataset *ds)
{
    return ds ? ds->msg.text : "no dataset";
}

int detfeed_dataset_set_int(detfeed_dataset *ds, detfeed_dataset_param param,
                            int64_t value)
{
    if (ds == NULL)
        return DETFEED_EINVAL;
    if (ds->opened)
        return DETFEED_EBADSTATE;
    switch (param) {
    case DETFEED_DATASET_POLICY:
        if (value != DETFEED_POLICY_SKIP && value != DETFEED_POLICY_FAIL)
            return DETFEED_EINVAL;
        ds->policy = (int)value;
        return DETFEED_OK;
    case DETFEED_DATASET_VERIFY:
        if (value < DETFEED_VERIFY_HEADER || value > DETFEED_VERIFY_NONE)
            return DETFEED_EINVAL;
        ds->verify = (int)value;
        return DETFEED_OK;
    case DETFEED_DATASET_NC:
        if (value < 0 || value > 1000000)
            return DETFEED_EINVAL;
        ds->nc_param = (int)value;
        return DETFEED_OK;
    case DETFEED_DATASET_MAX_LABEL_LINE:
        if (value < 16 || value > (1 << 30))
            return DETFEED_EINVAL;
        ds->max_line = (size_t)value;
        return DETFEED_OK;
    case DETFEED_DATASET_MAX_LABELS:
        if (value < 1 || value > 10000000)
            return DETFEED_EINVAL;
        ds->max_labels = (int)value;
        return DETFEED_OK;
    case DETFEED_DATASET_MAX_PROBLEMS:
        if (value < 0 || value > 100000000)
            return DETFEED_EINVAL;
        ds->max_problems = (size_t)value;
        return DETFEED_OK;
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
    }
    return DETFEED_EINVAL;
}

int detfeed_dataset_set_float(detfeed_dataset *ds, detfeed_dataset_param param,
                              double value)
{
    if (ds == NULL)
        return DETFEED_EINVAL;
    if (ds->opened)
        return DETFEED_EBADSTATE;
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
    if (ds == NULL || (ids == NULL && n > 0))
        return DETFEED_EINVAL;
    if (ds->opened)
        return DETFEED_EBADSTATE;
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

static int set_string(detfeed_dataset *ds, char **slot, const char *value)
{
    if (ds == NULL)
        return DETFEED_EINVAL;
    if (ds->opened)
        return DETFEED_EBADSTATE;
    char *c = value ? dup_str(value) : NULL;
    if (value && c == NULL)
        return DETFEED_ENOMEM;
    free(*slot);
    *slot = c;
    return DETFEED_OK;
}

int detfeed_dataset_set_split(detfeed_dataset *ds, const char *split)
{
    if (split == NULL ||
        (strcmp(split, "train") && strcmp(split, "val") && strcmp(split, "test")))
        return DETFEED_EINVAL;
    return set_string(ds, &ds->split, split);
}

int detfeed_dataset_set_root(detfeed_dataset *ds, const char *root)
{
    return set_string(ds, &ds->root, root);
}

/* ---- collecting image paths ----------------------------------------------- */

/* Suffixes Ultralytics 8.4 accepts as images (IMG_FORMATS), and the ones
 * detfeed decodes. */
static bool is_image_suffix(const char *s)
{
    static const char *const all[] = {"avif", "bmp",  "dng", "heic", "heif",
                                      "jp2",  "jpeg", "jpg", "mpo",  "png",
                                      "tif",  "tiff", "webp"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(s, all[i]) == 0)
            return true;
    return false;
}

static bool is_txt_suffix(const char *s)
{
    return strcmp(s, "txt") == 0;
}

static bool is_decodable_suffix(const char *s)
{
    return strcmp(s, "jpg") == 0 || strcmp(s, "jpeg") == 0 || strcmp(s, "png") == 0;
}

/* One line of a list file (trimmed of spaces and tabs) into out. */
static int add_list_line(detfeed_dataset *ds, const char *dir, char *ln, size_t n,
                         detfeed__strlist *out)
{
    while (n > 0 && (*ln == ' ' || *ln == '\t')) {
        ln++;
        n--;
    }
    while (n > 0 && (ln[n - 1] == ' ' || ln[n - 1] == '\t'))
        n--;
    if (n == 0)
        return DETFEED_OK;
    ln[n] = '\0';
    if (!detfeed__strlist_take(out, detfeed__path_join(dir, ln)))
        return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    return DETFEED_OK;
}

/* A list file's lines, split as Python's str.splitlines() splits them. */
static int add_list_file(detfeed_dataset *ds, const char *list, detfeed__strlist *out)
{
    char *text;
    size_t len;
    int rc = detfeed__read_text(list, MAX_TEXT_FILE, &text, &len, &ds->msg);
    if (rc == DETFEED_ENOMEM)
        return rc;
    if (rc != DETFEED_OK)
        return problem(ds, list, 0, reason_of(ds->msg.text, list), false);
    char *dir = detfeed__path_dir(list), *end = text + len;
    if (dir == NULL)
        rc = detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    for (char *ln = text; rc == DETFEED_OK && ln < end;) {
        size_t brk, n = detfeed__line_length(ln, end, &brk);
        rc = add_list_line(ds, dir, ln, n, out);
        ln += n + brk;
    }
    free(dir);
    free(text);
    return rc;
}

/* The walk's loop callback: a problem, counted. */
static int link_loop(void *ctx, const char *path, const char *target)
{
    detfeed_dataset *ds = ctx;
    char reason[600];
    snprintf(reason, sizeof reason,
             "a folder link loop: it leads back to '%s', which is being indexed; "
             "not followed",
             target);
    ds->stats[DETFEED_STAT_LINK_LOOPS]++;
    return problem(ds, path, 0, reason, false);
}

/* Why `path` is not a file or folder to read, for the report. */
static const char *not_file_reason(detfeed_dataset *ds, const char *path)
{
    struct stat st;
    if (detfeed__stat_regular(path, &st, &ds->msg) == DETFEED_OK)
        return "a regular file"; /* changed since it was looked at */
    return reason_of(ds->msg.text, path);
}

/* One source entry: a folder, a list file or an image. `where` and `line`
 * name what referred to it (a YAML) for the report. */
static int add_source(detfeed_dataset *ds, const char *path, const char *where,
                      int line, detfeed__strlist *out)
{
    char suffix[16], reason[512];
    detfeed__path_suffix(path, suffix, sizeof suffix);
    switch (detfeed__path_type(path)) {
    case DETFEED__F_DIR: {
        detfeed__walk_opts walk = {
            .recursive = true, .keep = is_image_suffix, .loop = link_loop, .ctx = ds};
        int rc = detfeed__walk(path, &walk, out, &ds->msg);
        if (rc == DETFEED_EIO || rc == DETFEED_ELIMIT)
            return problem(ds, path, 0, reason_of(ds->msg.text, path), false);
        return rc;
    }
    case DETFEED__F_FILE:
        if (strcmp(suffix, "txt") == 0)
            return add_list_file(ds, path, out);
        if (is_image_suffix(suffix))
            return detfeed__strlist_add(out, path)
                       ? DETFEED_OK
                       : detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
        snprintf(reason, sizeof reason,
                 "'%s' is not a folder, an image list or an image", path);
        return problem(ds, where, line, reason, false);
    case DETFEED__F_NONE:
        snprintf(reason, sizeof reason, "'%s' does not exist", path);
        return problem(ds, where, line, reason, false);
    default: /* a FIFO, socket or device; a dangling link or a link loop */
        snprintf(reason, sizeof reason, "'%s' is %s", path, not_file_reason(ds, path));
        return problem(ds, where, line, reason, false);
    }
}

/* ---- the YAML source ------------------------------------------------------ */

static bool parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

static int yaml_error(detfeed_dataset *ds, const char *file, int line, const char *what)
{
    return detfeed__fail(&ds->msg, DETFEED_EFORMAT, "%s:%d: %s", file, line, what);
}

/* Ultralytics' names for a YAML with `nc` and no `names`: class_0, ... */
static int default_names(detfeed_dataset *ds, int nc)
{
    ds->names = calloc((size_t)nc, sizeof *ds->names);
    if (ds->names == NULL)
        return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    ds->nc = nc;
    for (int k = 0; k < nc; k++) {
        char name[32];
        snprintf(name, sizeof name, "class_%d", k);
        if ((ds->names[k] = dup_str(name)) == NULL)
            return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    }
    return DETFEED_OK;
}

static int yaml_names(detfeed_dataset *ds, const char *file, const detfeed__ynode *root)
{
    const detfeed__ynode *names = detfeed__yaml_get(root, "names");
    const detfeed__ynode *nc = detfeed__yaml_get(root, "nc");
    int n = 0;
    if (!detfeed__yaml_is_null(nc) &&
        (nc->type != DETFEED__Y_SCALAR ||
         !parse_int(nc->str, 1, DETFEED__MAX_CLASSES, &n)))
        return yaml_error(ds, file, nc->line, "'nc' is not a positive whole number");
    if (detfeed__yaml_is_null(names) && n > 0)
        return default_names(ds, n);
    if (detfeed__yaml_is_null(names))
        return problem(ds, file, 0,
                       "the YAML has no 'names' or 'nc' (Ultralytics requires one): "
                       "the classes are unknown, and class ids are only checked to "
                       "be whole numbers below 1000000",
                       true);
    if (names->type == DETFEED__Y_SCALAR)
        return yaml_error(ds, file, names->line, "'names' must be a list or a map");
    if (n && (size_t)n != names->n)
        return yaml_error(ds, file, names->line,
                          "'nc' and the number of 'names' differ");
    if (names->n > DETFEED__MAX_CLASSES)
        return yaml_error(ds, file, names->line, "more than 1000000 'names'");
    ds->names = calloc(names->n ? names->n : 1, sizeof *ds->names);
    if (ds->names == NULL)
        return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    ds->nc = (int)names->n;
    for (size_t i = 0; i < names->n; i++) {
        int k = (int)i;
        if (names->type == DETFEED__Y_MAP &&
            (!parse_int(names->keys[i], 0, (long)names->n - 1, &k) || ds->names[k]))
            return yaml_error(
                ds, file, names->items[i]->line,
                "'names' keys must be the class ids 0 .. nc-1, each once");
        if (names->items[i]->type != DETFEED__Y_SCALAR)
            return yaml_error(ds, file, names->items[i]->line,
                              "a class name must be text");
        if ((ds->names[k] = dup_str(names->items[i]->str)) == NULL)
            return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    }
    return DETFEED_OK;
}

static int yaml_pose(detfeed_dataset *ds, const char *file, const detfeed__ynode *root)
{
    const detfeed__ynode *ks = detfeed__yaml_get(root, "kpt_shape");
    const detfeed__ynode *fi = detfeed__yaml_get(root, "flip_idx");
    if (detfeed__yaml_is_null(ks))
        return DETFEED_OK;
    if (ks->type != DETFEED__Y_SEQ || ks->n != 2 ||
        ks->items[0]->type != DETFEED__Y_SCALAR ||
        ks->items[1]->type != DETFEED__Y_SCALAR ||
        !parse_int(ks->items[0]->str, 1, 10000, &ds->nkpt) ||
        !parse_int(ks->items[1]->str, 2, 3, &ds->kdim))
        return yaml_error(ds, file, ks->line, "'kpt_shape' must be [K, 2] or [K, 3]");
    if (detfeed__yaml_is_null(fi))
        return DETFEED_OK;
    if (fi->type != DETFEED__Y_SEQ || fi->n != (size_t)ds->nkpt)
        return yaml_error(ds, file, fi->line,
                          "'flip_idx' must list one index per keypoint");
    ds->flip_idx = malloc((size_t)ds->nkpt * sizeof *ds->flip_idx);
    if (ds->flip_idx == NULL)
        return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    for (int k = 0; k < ds->nkpt; k++)
        if (fi->items[k]->type != DETFEED__Y_SCALAR ||
            !parse_int(fi->items[k]->str, 0, ds->nkpt - 1, &ds->flip_idx[k]))
            return yaml_error(ds, file, fi->line,
                              "'flip_idx' entries must be in 0 .. K-1");
    return DETFEED_OK;
}

/* The dataset root: the override, else `path` from the YAML's folder, else
 * (when that does not exist) the YAML's folder. */
static int yaml_root(detfeed_dataset *ds, const char *file, const detfeed__ynode *root,
                     char **out)
{
    char *dir = detfeed__path_dir(file);
    if (dir == NULL)
        return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    const detfeed__ynode *p = detfeed__yaml_get(root, "path");
    if (ds->root || detfeed__yaml_is_null(p) || p->type != DETFEED__Y_SCALAR) {
        /* An override is the caller's path, relative to the working folder. */
        *out = ds->root ? dup_str(ds->root) : dir;
        if (ds->root)
            free(dir);
    } else {
        *out = detfeed__path_join(dir, p->str);
        if (*out && detfeed__path_type(*out) != DETFEED__F_DIR) {
            char note[512];
            snprintf(note, sizeof note,
                     "path '%s' does not exist here; using the YAML's "
                     "folder as the dataset root",
                     p->str);
            free(*out);
            *out = dir;
            return problem(ds, file, p->line, note, true);
        }
        free(dir);
    }
    return *out ? DETFEED_OK : detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
}

/* The split's entries: a path, or a list of paths. */
static int yaml_split_entries(detfeed_dataset *ds, const char *file,
                              const detfeed__ynode *root, const detfeed__ynode **sp)
{
    char what[128];
    *sp = detfeed__yaml_get(root, ds->split);
    if (detfeed__yaml_is_null(*sp)) {
        snprintf(what, sizeof what, "no '%s' entry", ds->split);
        return yaml_error(ds, file, root->line, what);
    }
    size_t n = (*sp)->type == DETFEED__Y_SEQ ? (*sp)->n : 1;
    for (size_t i = 0; i < n; i++) {
        const detfeed__ynode *e = (*sp)->type == DETFEED__Y_SEQ ? (*sp)->items[i] : *sp;
        if (e->type != DETFEED__Y_SCALAR) {
            snprintf(what, sizeof what, "'%s' entries must be paths", ds->split);
            return yaml_error(ds, file, e->line, what);
        }
    }
    return DETFEED_OK;
}

static int yaml_split(detfeed_dataset *ds, const char *file, const detfeed__ynode *sp,
                      const char *base, detfeed__strlist *out)
{
    size_t n = sp->type == DETFEED__Y_SEQ ? sp->n : 1;
    int rc = DETFEED_OK;
    for (size_t i = 0; i < n && rc == DETFEED_OK; i++) {
        const detfeed__ynode *e = sp->type == DETFEED__Y_SEQ ? sp->items[i] : sp;
        char *p = detfeed__path_join(base, e->str);
        rc = p ? add_source(ds, p, file, e->line, out)
               : detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
        free(p);
    }
    return rc;
}

/* Parses the YAML text and reads the keys that need no file system: names,
 * nc, kpt_shape, flip_idx, and the split's entries (*sp). */
static int yaml_document(detfeed_dataset *ds, const char *file, const char *text,
                         size_t len, detfeed__ynode **root, const detfeed__ynode **sp)
{
    char err[160];
    int line = 0, rc = DETFEED_OK;
    if (detfeed__yaml_parse(text, len, root, &line, err, sizeof err) != 0)
        return detfeed__fail(&ds->msg, DETFEED_EFORMAT, "%s:%d: malformed YAML: %s",
                             file, line, err);
    if ((*root)->type != DETFEED__Y_MAP)
        rc = yaml_error(ds, file, 1, "the YAML is not a mapping of dataset keys");
    if (rc == DETFEED_OK)
        rc = yaml_names(ds, file, *root);
    if (rc == DETFEED_OK)
        rc = yaml_pose(ds, file, *root);
    if (rc == DETFEED_OK)
        rc = yaml_split_entries(ds, file, *root, sp);
    return rc;
}

int detfeed__dataset_yaml_meta(detfeed_dataset *ds, const char *file, const char *text,
                               size_t len)
{
    if (ds == NULL || file == NULL || text == NULL || ds->opened)
        return DETFEED_EINVAL;
    ds->opened = true;
    detfeed__ynode *root = NULL;
    const detfeed__ynode *sp;
    int rc = yaml_document(ds, file, text, len, &root, &sp);
    detfeed__yaml_free(root);
    return rc;
}

static int open_yaml(detfeed_dataset *ds, const char *file, detfeed__strlist *out)
{
    char *text, *base = NULL;
    size_t len;
    int rc = detfeed__read_text(file, MAX_TEXT_FILE, &text, &len, &ds->msg);
    if (rc != DETFEED_OK)
        return rc;
    detfeed__ynode *root = NULL;
    const detfeed__ynode *sp = NULL;
    rc = yaml_document(ds, file, text, len, &root, &sp);
    if (rc == DETFEED_OK)
        rc = yaml_root(ds, file, root, &base);
    if (rc == DETFEED_OK)
        rc = yaml_split(ds, file, sp, base, out);
    free(base);
    detfeed__yaml_free(root);
    free(text);
    return rc;
}

/* ---- images and labels ---------------------------------------------------- */

/* Refuses what is not a regular file (a FIFO, a dangling link, a link
 * loop, ...) without opening it; on a problem returns it and sets *skip. */
static int check_file(detfeed_dataset *ds, const char *path, bool *skip)
{
    struct stat st;
    *skip = detfeed__stat_regular(path, &st, &ds->msg) != DETFEED_OK;
    return *skip ? problem(ds, path, 0, reason_of(ds->msg.text, path), false)
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
        return problem(ds, im->path, 0,
                       reason_of(detfeed_codec_last_error(ds->codec), im->path), false);
    if (ds->verify != DETFEED_VERIFY_NONE && (im->width < 10 || im->height < 10)) {
        char reason[96];
        snprintf(reason, sizeof reason, "image size %dx%d is below 10 pixels",
                 im->width, im->height);
        return problem(ds, im->path, 0, reason, false);
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
    int rc = detfeed__read_text(label_path, MAX_TEXT_FILE, &text, &len, &ds->msg);
    if (rc == DETFEED_ENOMEM)
        return rc;
    if (rc != DETFEED_OK) {
        *skip = true;
        return problem(ds, label_path, 0, reason_of(ds->msg.text, label_path), false);
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
        rc = problem(ds, label_path, 0, note, true);
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

/* Adds one image path to the index, or counts why it is skipped. */
static int add_image(detfeed_dataset *ds, const char *path,
                     detfeed__strlist *label_dirs, detfeed__strlist *label_files)
{
    char suffix[16];
    detfeed__path_suffix(path, suffix, sizeof suffix);
    if (!is_decodable_suffix(suffix)) {
        ds->stats[DETFEED_STAT_UNSUPPORTED]++;
        char reason[64];
        snprintf(reason, sizeof reason, "unsupported image format '%s'", suffix);
        return problem(ds, path, 0, reason, false);
    }
    ds->stats[DETFEED_STAT_IMAGES]++;
    detfeed__image *im = &ds->images[ds->n];
    memset(im, 0, sizeof *im);
    char *label_path;
    int rc = expect_label(ds, path, label_dirs, label_files, &label_path);
    if (rc != DETFEED_OK)
        return rc;
    if ((im->path = dup_str(path)) == NULL) {
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

/* Label files in the label folders that no image refers to. */
static int find_orphans(detfeed_dataset *ds, detfeed__strlist *dirs,
                        detfeed__strlist *expected)
{
    detfeed__strlist_sort(dirs);
    detfeed__strlist_sort(expected);
    int rc = DETFEED_OK;
    for (size_t i = 0; i < dirs->n && rc == DETFEED_OK; i++) {
        if ((i > 0 && strcmp(dirs->v[i], dirs->v[i - 1]) == 0) ||
            detfeed__path_type(dirs->v[i]) != DETFEED__F_DIR)
            continue;
        detfeed__strlist found = {0};
        detfeed__msg ignore;
        detfeed__walk_opts walk = {.recursive = false, .keep = is_txt_suffix};
        rc = detfeed__walk(dirs->v[i], &walk, &found, &ignore);
        if (rc == DETFEED_EIO)
            rc = DETFEED_OK; /* an unreadable label folder has been reported */
        detfeed__strlist_sort(&found);
        for (size_t k = 0; k < found.n && rc == DETFEED_OK; k++) {
            if (detfeed__strlist_find(expected, found.v[k]) >= 0)
                continue;
            ds->stats[DETFEED_STAT_ORPHAN_LABELS]++;
            rc = problem(ds, found.v[k], 0, "label file without an image", true);
        }
        detfeed__strlist_free(&found);
    }
    return rc;
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
    return problem(ds, source, 0,
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
    return problem(ds, source, 0, note, true);
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
        n += is_image_suffix(suffix);
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
    for (size_t i = 0; i < paths->n && rc == DETFEED_OK; i++) {
        char suffix[16], *label_path = NULL;
        detfeed__path_suffix(paths->v[i], suffix, sizeof suffix);
        if (!is_image_suffix(suffix) || seen++ < keep) {
            rc = add_image(ds, paths->v[i], dirs, expected);
            continue;
        }
        ds->stats[DETFEED_STAT_LEFT_OUT]++;
        rc = expect_label(ds, paths->v[i], dirs, expected, &label_path);
        free(label_path);
    }
    if (rc != DETFEED_OK || keep == files)
        return rc;
    char note[160];
    snprintf(note, sizeof note,
             "fraction: the first %zu of %zu image files kept, in sorted order as "
             "Ultralytics takes them",
             keep, files);
    return problem(ds, source, 0, note, true);
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

static int build_index(detfeed_dataset *ds, detfeed__strlist *paths, const char *source)
{
    detfeed__strlist_sort(paths);
    ds->images = calloc(paths->n ? paths->n : 1, sizeof *ds->images);
    if (ds->images == NULL)
        return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    detfeed__strlist dirs = {0}, expected = {0};
    int rc =
        ds->nc == 0 && ds->nc_param > 0 ? default_names(ds, ds->nc_param) : DETFEED_OK;
    if (rc == DETFEED_OK)
        rc = check_classes(ds, source);
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
    if (rc == DETFEED_OK && ds->n == 0 && ds->nproblems == 0)
        rc = detfeed__fail(&ds->msg, DETFEED_EFORMAT,
                           "%s: no usable images (%lld found)", source,
                           (long long)ds->stats[DETFEED_STAT_IMAGES]);
    else if (rc == DETFEED_OK && ds->n == 0) /* say why, with the first problem */
        rc = detfeed__fail(
            &ds->msg, DETFEED_EFORMAT,
            "%s: no usable images (%lld found); first problem: %s:%d: %s", source,
            (long long)ds->stats[DETFEED_STAT_IMAGES], ds->problems[0].file,
            ds->problems[0].line, ds->problems[0].reason);
    return rc;
}

int detfeed_dataset_open(detfeed_dataset *ds, const char *source)
{
    if (ds == NULL || source == NULL)
        return DETFEED_EINVAL;
    if (ds->opened)
        return DETFEED_EBADSTATE;
    ds->opened = true;
    detfeed__msg_clear(&ds->msg);
    detfeed__strlist paths = {0};
    char suffix[16];
    detfeed__path_suffix(source, suffix, sizeof suffix);
    detfeed__ftype t = detfeed__path_type(source);
    int rc;
    if (t == DETFEED__F_FILE &&
        (strcmp(suffix, "yaml") == 0 || strcmp(suffix, "yml") == 0))
        rc = open_yaml(ds, source, &paths);
    else if (t == DETFEED__F_NONE)
        rc = detfeed__fail(&ds->msg, DETFEED_EIO, "%s: no such file or folder", source);
    else if (t == DETFEED__F_OTHER || t == DETFEED__F_BROKEN) /* never opened */
        rc = detfeed__stat_regular(source, &(struct stat){0}, &ds->msg);
    else
        rc = add_source(ds, source, source, 0, &paths);
    if (rc == DETFEED_OK)
        rc = build_index(ds, &paths, source);
    detfeed__strlist_free(&paths);
    return rc;
}

/* ---- images the loader could not decode ---------------------------------- */

int detfeed_dataset_set_limit(detfeed_dataset *ds, detfeed_codec_limit limit,
                              uint64_t value)
{
    if (ds == NULL)
        return DETFEED_EINVAL;
    if (ds->opened)
        return DETFEED_EBADSTATE;
    if (detfeed_codec_set_limit(ds->codec, limit, value) != DETFEED_OK)
        return detfeed__fail(&ds->msg, DETFEED_EINVAL,
                             "%s: %llu is not a limit it accepts (an integer >= 1)",
                             detfeed__limit_name(limit), (unsigned long long)value);
    return DETFEED_OK;
}

const detfeed__limits *detfeed__dataset_limits(const detfeed_dataset *ds)
{
    return &ds->codec->limits;
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
        int r = problem(ds, im->path, 0, reason_of(why[i], im->path), false);
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
    if (rc == DETFEED_OK && ds->n == 0)
        rc = detfeed__fail(&ds->msg, DETFEED_EFORMAT,
                           "no usable images (%lld found); first problem: %s:%d: %s",
                           (long long)ds->stats[DETFEED_STAT_IMAGES],
                           ds->problems[0].file, ds->problems[0].line,
                           ds->problems[0].reason);
    return rc;
}

/* ---- queries -------------------------------------------------------------- */

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

const detfeed__image *detfeed__dataset_image(const detfeed_dataset *ds, size_t i)
{
    return i < ds->n ? &ds->images[i] : NULL;
}
