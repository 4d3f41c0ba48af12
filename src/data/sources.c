/*
 * sources.c - where a dataset's images are: a dataset YAML (its names,
 * keypoint shape and split entries), folders walked for image files, image
 * list files, or a single image. What it finds is a list of image paths;
 * the index (index.c) makes images and labels of them.
 */
#include "dataset_internal.h"

#include "resolve.h"
#include "yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One line (number `line`) of list file `list` in folder `dir`, trimmed of
 * spaces and tabs, into out; a line that names no image file by its suffix
 * (a folder, a comment), which Ultralytics leaves out without a word, is a
 * note at the list's line. */
static int add_list_line(detfeed_dataset *ds, const char *list, int line,
                         const char *dir, char *ln, size_t n, detfeed__strlist *out)
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
    char suffix[16];
    detfeed__path_suffix(ln, suffix, sizeof suffix);
    if (!detfeed__is_image_suffix(suffix)) {
        char reason[600];
        snprintf(reason, sizeof reason, "'%.500s' names no image file: left out", ln);
        return detfeed__problem_add(ds, list, line, reason, true);
    }
    if (!detfeed__strlist_take(out, detfeed__path_join(dir, ln)))
        return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    return DETFEED_OK;
}

enum { LIST_CHUNK = 1 << 20, LIST_LINE_MAX = 1 << 16 };

/* A list file being read a chunk at a time: the bytes not yet split. */
typedef struct list_reader {
    int fd;
    char *buf;
    size_t have; /* bytes in buf, from a line's start */
    bool eof, skipping;
    int line;
} list_reader;

/* Reads the next chunk after the bytes kept: DETFEED_OK (eof set at the
 * end), or a failure with its message. */
static int list_fill(detfeed_dataset *ds, const char *list, list_reader *r)
{
    ssize_t k;
    while ((k = read(r->fd, r->buf + r->have, LIST_CHUNK)) < 0 && errno == EINTR)
        ;
    if (k < 0)
        return detfeed__fail(&ds->msg, DETFEED_EIO, "%s: read failed: %s", list,
                             strerror(errno));
    r->eof = k == 0;
    r->have += (size_t)k;
    return DETFEED_OK;
}

/* The whole lines of what was read (split as Python's str.splitlines()
 * splits them: a break is taken only where the bytes after it are there,
 * so that "\r\n" and the 3-byte breaks are never cut), into out; the
 * rest is kept for the next chunk. A line longer than LIST_LINE_MAX is
 * left out with a problem at its line. */
static int list_lines(detfeed_dataset *ds, const char *list, const char *dir,
                      list_reader *r, detfeed__strlist *out)
{
    char *ln = r->buf, *end = r->buf + r->have;
    int rc = DETFEED_OK;
    while (rc == DETFEED_OK && ln < end) {
        size_t brk, n = detfeed__line_length(ln, end, &brk);
        bool whole = r->eof || (brk > 0 && (size_t)(end - (ln + n)) >= 3);
        if (!whole && n <= LIST_LINE_MAX)
            break;
        if (n > LIST_LINE_MAX && !r->skipping) {
            char reason[96];
            snprintf(reason, sizeof reason, "a line longer than %d bytes: left out",
                     LIST_LINE_MAX);
            rc = detfeed__problem_add(ds, list, r->line, reason, false);
        } else if (!r->skipping) {
            rc = add_list_line(ds, list, r->line, dir, ln, n, out);
        }
        if (!whole) { /* the rest of a long line: left out as it comes */
            r->skipping = true;
            ln += n;
            break;
        }
        r->skipping = false;
        r->line++;
        ln += n + brk;
    }
    r->have = (size_t)(end - ln);
    memmove(r->buf, ln, r->have);
    return rc;
}

/* A list file's lines, read a chunk at a time whatever its size: memory
 * for a chunk and the longest line, besides the paths it names. */
static int add_list_file(detfeed_dataset *ds, const char *list, detfeed__strlist *out)
{
    struct stat st;
    list_reader r = {.fd = -1, .line = 1};
    int rc = detfeed__open_regular(list, &r.fd, &st, &ds->msg);
    if (rc != DETFEED_OK)
        return detfeed__problem_add(ds, list, 0, detfeed__reason_of(ds->msg.text, list),
                                    false);
    char *dir = detfeed__path_dir(list);
    r.buf = malloc(LIST_CHUNK + LIST_LINE_MAX + 4);
    if (dir == NULL || r.buf == NULL)
        rc = detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    while (rc == DETFEED_OK && !r.eof) {
        rc = list_fill(ds, list, &r);
        if (rc == DETFEED_EIO) /* as a list that cannot be read at all */
            rc = detfeed__problem_add(ds, list, 0,
                                      detfeed__reason_of(ds->msg.text, list), false);
        else if (rc == DETFEED_OK)
            rc = list_lines(ds, list, dir, &r, out);
    }
    close(r.fd);
    free(r.buf);
    free(dir);
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
    return detfeed__problem_add(ds, path, 0, reason, false);
}

/* Why `path` is not a file or folder to read, for the report. */
static const char *not_file_reason(detfeed_dataset *ds, const char *path)
{
    struct stat st;
    if (detfeed__stat_regular(path, &st, &ds->msg) == DETFEED_OK)
        return "a regular file"; /* changed since it was looked at */
    return detfeed__reason_of(ds->msg.text, path);
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
        detfeed__walk_opts walk = {.recursive = true,
                                   .keep = detfeed__is_image_suffix,
                                   .loop = link_loop,
                                   .ctx = ds};
        int rc = detfeed__walk(path, &walk, out, &ds->msg);
        if (rc == DETFEED_EIO || rc == DETFEED_ELIMIT)
            return detfeed__problem_add(ds, path, 0,
                                        detfeed__reason_of(ds->msg.text, path), false);
        return rc;
    }
    case DETFEED__F_FILE:
        if (strcmp(suffix, "txt") == 0)
            return add_list_file(ds, path, out);
        if (detfeed__is_image_suffix(suffix))
            return detfeed__strlist_add(out, path)
                       ? DETFEED_OK
                       : detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
        snprintf(reason, sizeof reason,
                 "'%s' is not a folder, an image list or an image", path);
        return detfeed__problem_add(ds, where, line, reason, false);
    case DETFEED__F_NONE:
        snprintf(reason, sizeof reason, "'%s' does not exist", path);
        return detfeed__problem_add(ds, where, line, reason, false);
    default: /* a FIFO, socket or device; a dangling link or a link loop */
        snprintf(reason, sizeof reason, "'%s' is %s", path, not_file_reason(ds, path));
        return detfeed__problem_add(ds, where, line, reason, false);
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

/* The YAML's error at `line` (0: of the file as a whole). */
static int yaml_error(detfeed_dataset *ds, const char *file, int line, const char *what)
{
    if (line <= 0)
        return detfeed__fail(&ds->msg, DETFEED_EFORMAT, "%s: %s", file, what);
    return detfeed__fail(&ds->msg, DETFEED_EFORMAT, "%s:%d: %s", file, line, what);
}

int detfeed__dataset_default_names(detfeed_dataset *ds, int nc)
{
    ds->names = calloc((size_t)nc, sizeof *ds->names);
    if (ds->names == NULL)
        return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
    ds->nc = nc;
    for (int k = 0; k < nc; k++) {
        char name[32];
        snprintf(name, sizeof name, "class_%d", k);
        if ((ds->names[k] = detfeed__str_dup(name)) == NULL)
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
        return detfeed__dataset_default_names(ds, n);
    if (detfeed__yaml_is_null(names))
        return detfeed__problem_add(
            ds, file, 0,
            "the YAML has no 'names' or 'nc' (Ultralytics requires one): "
            "the classes are unknown, and class ids are only checked to "
            "be whole numbers below 1000000",
            true);
    if (names->type == DETFEED__Y_SCALAR)
        return yaml_error(ds, file, names->line, "'names' must be a list or a map");
    if (names->n == 0)
        return yaml_error(ds, file, names->line,
                          "'names' is empty: a dataset has at least one class (for "
                          "Ultralytics every label's class would be out of range)");
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
        if ((ds->names[k] = detfeed__str_dup(names->items[i]->str)) == NULL)
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

/* The dataset root (check_det_dataset's rule, resolve.c), kept in ds->where
 * for detfeed_dataset_root and the messages. */
static int yaml_root(detfeed_dataset *ds, const char *file, const detfeed__ynode *root)
{
    const detfeed__ynode *p = detfeed__yaml_get(root, "path");
    if (!ds->root && !detfeed__yaml_is_null(p) && p->type != DETFEED__Y_SCALAR)
        return yaml_error(ds, file, p->line, "'path' must be one folder");
    const char *value = detfeed__yaml_is_null(p) ? NULL : p->str;
    return detfeed__root_find(file, value, ds->root, ds->datasets_dir, &ds->where,
                              &ds->msg);
}

/* The split's entries: a path, or a list of paths. */
static int yaml_split_entries(detfeed_dataset *ds, const char *file,
                              const detfeed__ynode *root, const detfeed__ynode **sp)
{
    char what[128];
    *sp = detfeed__yaml_get(root, ds->split);
    if (detfeed__yaml_is_null(*sp)) {
        snprintf(what, sizeof what, "no '%s' entry", ds->split);
        return yaml_error(ds, file, *sp ? (*sp)->line : 0, what);
    }
    size_t n = (*sp)->type == DETFEED__Y_SEQ ? (*sp)->n : 1;
    for (size_t i = 0; i < n; i++) {
        const detfeed__ynode *e = (*sp)->type == DETFEED__Y_SEQ ? (*sp)->items[i] : *sp;
        if (e->type != DETFEED__Y_SCALAR) {
            snprintf(what, sizeof what, "'%s' entries must be paths", ds->split);
            return yaml_error(ds, file, e->line, what);
        }
        if (e->str[0] == '\0') { /* "" would be the dataset root, every split */
            snprintf(what, sizeof what, "'%s' has an empty path", ds->split);
            return yaml_error(ds, file, e->line, what);
        }
    }
    return DETFEED_OK;
}

/* A split entry that is not there: the dataset is missing, whatever the
 * policy (Ultralytics fails too, where it cannot download it). */
static int missing_entry(detfeed_dataset *ds, const char *file, const detfeed__ynode *e,
                         const char *p)
{
    return detfeed__fail(
        &ds->msg, DETFEED_EIO,
        "%s:%d: '%s' entry '%s' is %s, which does not exist: the dataset is not "
        "there (its root is %s: %s). Ultralytics would download it (the YAML's "
        "'download') or fail the same way; detfeed does not download",
        file, e->line, ds->split, e->str, p, ds->where.abs, ds->where.rule);
}

static int yaml_split(detfeed_dataset *ds, const char *file, const detfeed__ynode *sp,
                      detfeed__strlist *out)
{
    bool lone = sp->type != DETFEED__Y_SEQ;
    size_t n = lone ? 1 : sp->n;
    int rc = DETFEED_OK;
    for (size_t i = 0; i < n && rc == DETFEED_OK; i++) {
        const detfeed__ynode *e = lone ? sp : sp->items[i];
        char *p = detfeed__root_entry(&ds->where, e->str, lone);
        if (p == NULL)
            rc = detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
        else if (detfeed__path_type(p) == DETFEED__F_NONE)
            rc = missing_entry(ds, file, e, p);
        else
            rc = add_source(ds, p, file, e->line, out);
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
    char *text;
    size_t len;
    int rc = detfeed__read_text(file, DETFEED__MAX_YAML_FILE, &text, &len, &ds->msg);
    if (rc != DETFEED_OK)
        return rc;
    detfeed__ynode *root = NULL;
    const detfeed__ynode *sp = NULL;
    rc = yaml_document(ds, file, text, len, &root, &sp);
    if (rc == DETFEED_OK)
        rc = yaml_root(ds, file, root);
    if (rc == DETFEED_OK)
        rc = yaml_split(ds, file, sp, out);
    detfeed__yaml_free(root);
    free(text);
    return rc;
}

int detfeed__dataset_find_images(detfeed_dataset *ds, const char *source,
                                 detfeed__strlist *paths)
{
    char suffix[16];
    detfeed__path_suffix(source, suffix, sizeof suffix);
    detfeed__ftype t = detfeed__path_type(source);
    bool is_yaml = strcmp(suffix, "yaml") == 0 || strcmp(suffix, "yml") == 0;
    if (t == DETFEED__F_FILE && is_yaml)
        return open_yaml(ds, source, paths);
    if (ds->root)
        return detfeed__fail(
            &ds->msg, DETFEED_EINVAL,
            "%s: a dataset root is for a dataset YAML (it replaces its "
            "'path'), and this is not one",
            source);
    if (t == DETFEED__F_NONE && is_yaml)
        return detfeed__fail(
            &ds->msg, DETFEED_EIO,
            "%s: no such file. Ultralytics looks a dataset YAML that is not a file "
            "up among its packaged ones (ultralytics/cfg/datasets); detfeed's library "
            "does not: give the YAML's path (python3 -c \"import ultralytics, os; "
            "print(os.path.dirname(ultralytics.__file__) + '/cfg/datasets')\" prints "
            "that folder), or use the Python Loader, which asks the installed "
            "Ultralytics",
            source);
    if (t == DETFEED__F_NONE)
        return detfeed__fail(&ds->msg, DETFEED_EIO, "%s: no such file or folder",
                             source);
    if (t == DETFEED__F_OTHER || t == DETFEED__F_BROKEN) /* never opened */
        return detfeed__stat_regular(source, &(struct stat){0}, &ds->msg);
    return add_source(ds, source, source, 0, paths);
}
