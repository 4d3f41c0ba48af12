/*
 * resolve.c - a dataset YAML's root and split entries, as Ultralytics 8.4's
 * check_det_dataset resolves them (ultralytics/data/utils.py):
 *
 *     path = Path(data.get("path") or Path(yaml_file).parent)
 *     if not path.exists() and not path.is_absolute():
 *         path = (DATASETS_DIR / path).resolve()
 *     x = (path / data[k]).resolve()            # each entry; for a lone one:
 *     if not x.exists() and data[k].startswith("../"):
 *         x = (path / data[k][3:]).resolve()
 *
 * so a relative `path` is taken from the working folder when it exists
 * there, else under the settings' datasets_dir, never from the YAML's
 * folder; an absolute one is taken as it is, there or not.
 */
#include "resolve.h"

#include "path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- Python's realpath ------------------------------------------------------ */

/* A path being resolved. */
typedef struct rbuf {
    char *s;
    size_t n, cap;
    int links; /* links followed: more than 40 is a loop */
    bool oom;
} rbuf;

static void rb_put(rbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *t = realloc(b->s, cap);
        if (t == NULL) {
            b->oom = true;
            return;
        }
        b->s = t;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

/* ".." of an absolute path: its last name dropped ("/" stays "/"). */
static void rb_up(rbuf *b)
{
    while (b->n > 1 && b->s[b->n - 1] != '/')
        b->n--;
    if (b->n > 1)
        b->n--;
    b->s[b->n] = '\0';
}

/* The target of link `path`, malloc'd; NULL when it cannot be read. */
static char *read_link(const char *path, size_t hint)
{
    for (size_t cap = hint + 2;; cap *= 2) {
        char *t = malloc(cap);
        ssize_t k = t ? readlink(path, t, cap) : -1;
        if (k >= 0 && (size_t)k < cap) {
            t[k] = '\0';
            return t;
        }
        free(t);
        if (k < 0)
            return NULL;
    }
}

/* posixpath._joinrealpath: the names of `rest` onto b (absolute), links
 * followed; false at a link loop, with the rest joined unresolved. */
static bool rb_walk(rbuf *b, const char *rest)
{
    if (rest[0] == '/') {
        b->n = 0;
        rb_put(b, "/", 1);
    }
    while (*rest && !b->oom) {
        const char *name = rest;
        size_t k = strcspn(rest, "/");
        rest += k + (rest[k] == '/');
        if (k == 0 || (k == 1 && name[0] == '.'))
            continue;
        if (k == 2 && name[0] == '.' && name[1] == '.') {
            rb_up(b);
            continue;
        }
        size_t keep = b->n;
        if (b->n > 1)
            rb_put(b, "/", 1);
        rb_put(b, name, k);
        struct stat st;
        if (b->oom || lstat(b->s, &st) != 0 || !S_ISLNK(st.st_mode))
            continue;
        char *target = ++b->links > 40 ? NULL : read_link(b->s, (size_t)st.st_size);
        if (target == NULL) { /* a loop: the rest as it is */
            rb_put(b, "/", *rest != '\0');
            rb_put(b, rest, strlen(rest));
            return false;
        }
        b->n = keep;
        b->s[keep] = '\0';
        bool ok = rb_walk(b, target);
        free(target);
        if (!ok) {
            rb_put(b, "/", *rest != '\0');
            rb_put(b, rest, strlen(rest));
            return false;
        }
    }
    return true;
}

char *detfeed__path_resolve(const char *path)
{
    rbuf b = {0};
    if (path[0] != '/') { /* from the working folder, which has no links */
        char cwd[4096];
        if (getcwd(cwd, sizeof cwd) == NULL)
            return NULL;
        rb_put(&b, cwd, strlen(cwd));
    } else {
        rb_put(&b, "/", 1);
    }
    rb_walk(&b, path);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- the root ------------------------------------------------------------ */

void detfeed__root_free(detfeed__root *root)
{
    free(root->path);
    free(root->abs);
    free(root->rule);
    *root = (detfeed__root){0};
}

/* Whether Path(p).exists(): p, trailing slashes aside (Path drops them),
 * is there, links followed. */
static bool py_exists(const char *p)
{
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        n--;
    char *q = malloc(n + 1);
    if (q == NULL)
        return false;
    memcpy(q, p, n);
    q[n] = '\0';
    struct stat st;
    bool yes = stat(q, &st) == 0;
    free(q);
    return yes;
}

/* A rule's text, malloc'd. */
static char *rule_text(const char *fmt, const char *a, const char *b, const char *c)
{
    size_t n = strlen(fmt) + strlen(a) + strlen(b) + strlen(c) + 1;
    char *t = malloc(n);
    if (t)
        snprintf(t, n, fmt, a, b, c);
    return t;
}

/* A relative `path` that is not there from the working folder: under
 * datasets_dir, resolved. */
static int under_datasets_dir(const char *value, const char *given, detfeed__root *root,
                              detfeed__msg *msg)
{
    char *dir = NULL, *from = NULL;
    int rc = DETFEED_OK;
    if (given) {
        dir = detfeed__str_dup(given);
        from = detfeed__str_dup("(the datasets_dir setting)");
    } else {
        rc = detfeed__datasets_dir(&dir, &from, msg);
    }
    char *joined = dir ? detfeed__path_join(dir, value) : NULL;
    root->path = joined ? detfeed__path_resolve(joined) : NULL;
    root->rule = dir && from
                     ? rule_text("path: %s under datasets_dir %s %s", value, dir, from)
                     : NULL;
    free(joined);
    free(dir);
    free(from);
    return rc;
}

int detfeed__root_find(const char *file, const char *value, const char *override,
                       const char *datasets_dir, detfeed__root *root, detfeed__msg *msg)
{
    *root = (detfeed__root){0};
    int rc = DETFEED_OK;
    char cwd[4096] = "?";
    if (override) {
        root->path = detfeed__str_dup(override);
        root->rule = detfeed__str_dup("the root given in place of the YAML's 'path'");
    } else if (value == NULL || value[0] == '\0') {
        root->path = detfeed__path_dir(file);
        root->rule = detfeed__str_dup("no 'path' in the YAML: its folder");
    } else if (value[0] == '/') {
        root->path = detfeed__str_dup(value);
        root->rule = rule_text(py_exists(value) ? "path: %s, absolute%s%s"
                                                : "path: %s, absolute, not there%s%s",
                               value, "", "");
    } else if (py_exists(value)) {
        if (getcwd(cwd, sizeof cwd) == NULL)
            strcpy(cwd, "?");
        root->path = detfeed__str_dup(value);
        root->rule =
            rule_text("path: %s, found from the working folder %s%s", value, cwd, "");
    } else {
        rc = under_datasets_dir(value, datasets_dir, root, msg);
    }
    if (rc == DETFEED_OK && root->path)
        root->abs = detfeed__path_resolve(root->path);
    if (rc == DETFEED_OK &&
        (root->path == NULL || root->rule == NULL || root->abs == NULL))
        rc = detfeed__fail(msg, DETFEED_ENOMEM, "out of memory");
    if (rc != DETFEED_OK)
        detfeed__root_free(root);
    return rc;
}

char *detfeed__root_entry(const detfeed__root *root, const char *entry, bool lone)
{
    char *joined = detfeed__path_join(root->path, entry);
    char *x = joined ? detfeed__path_resolve(joined) : NULL;
    free(joined);
    if (x && lone && strncmp(entry, "../", 3) == 0 && !py_exists(x)) {
        joined = detfeed__path_join(root->path, entry + 3);
        char *y = joined ? detfeed__path_resolve(joined) : NULL;
        free(joined);
        free(x);
        x = y;
    }
    return x;
}
