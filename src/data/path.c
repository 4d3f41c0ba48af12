/*
 * path.c - string lists, path helpers and directory walks.
 */
#include "path.h"

#include "data_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool detfeed__strlist_take(detfeed__strlist *l, char *s)
{
    if (s == NULL)
        return false;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **v = realloc(l->v, cap * sizeof *v);
        if (v == NULL) {
            free(s);
            return false;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
    return true;
}

char *detfeed__str_dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

bool detfeed__strlist_add(detfeed__strlist *l, const char *s)
{
    return detfeed__strlist_take(l, detfeed__str_dup(s));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void detfeed__strlist_sort(detfeed__strlist *l)
{
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, cmp_str);
}

long detfeed__strlist_find(const detfeed__strlist *l, const char *s)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(l->v[mid], s);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

void detfeed__strlist_free(detfeed__strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

char *detfeed__path_join(const char *a, const char *b)
{
    if (b[0] == '/' || a[0] == '\0') {
        size_t n = strlen(b) + 1;
        char *c = malloc(n);
        if (c)
            memcpy(c, b, n);
        return c;
    }
    while (b[0] == '.' && b[1] == '/') /* "./x" is "x" */
        b += 2;
    size_t na = strlen(a), nb = strlen(b);
    bool slash = na > 0 && a[na - 1] == '/';
    char *c = malloc(na + nb + 2);
    if (c) {
        memcpy(c, a, na);
        if (!slash)
            c[na++] = '/';
        memcpy(c + na, b, nb + 1);
    }
    return c;
}

char *detfeed__path_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (slash == path)
        n = 1; /* "/x" -> "/" */
    char *c = malloc(n + 2);
    if (c == NULL)
        return NULL;
    if (slash == NULL) {
        strcpy(c, ".");
    } else {
        memcpy(c, path, n);
        c[n] = '\0';
    }
    return c;
}

void detfeed__path_suffix(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t k = 0;
    if (dot)
        for (dot++; *dot && k + 1 < size; dot++)
            out[k++] = (char)tolower((unsigned char)*dot);
    out[k] = '\0';
}

char *detfeed__label_path(const char *image_path)
{
    size_t n = strlen(image_path);
    char *out = malloc(n + 8);
    if (out == NULL)
        return NULL;
    memcpy(out, image_path, n + 1);
    /* The last "/images/" (Ultralytics: rsplit once, then join with /labels/). */
    char *last = NULL;
    for (char *p = strstr(out, "/images/"); p; p = strstr(p + 1, "/images/"))
        last = p;
    if (last)
        memcpy(last, "/labels/", 8);
    char *base = strrchr(out, '/');
    char *dot = strrchr(base ? base : out, '.');
    if (dot)
        *dot = '\0';
    strcat(out, ".txt");
    return out;
}

detfeed__ftype detfeed__path_type(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return lstat(path, &st) == 0 ? DETFEED__F_BROKEN : DETFEED__F_NONE;
    if (S_ISREG(st.st_mode))
        return DETFEED__F_FILE;
    return S_ISDIR(st.st_mode) ? DETFEED__F_DIR : DETFEED__F_OTHER;
}

/* A folder on the path from the walk's start to the folder being read. */
typedef struct walk_dir {
    dev_t dev;
    ino_t ino;
    const char *path;
} walk_dir;

static int walk(const char *dir, const detfeed__walk_opts *o, detfeed__strlist *out,
                detfeed__msg *msg, walk_dir *up, int depth);

/* Entry `p` of a walked folder, its stat in st (when stat succeeded). */
static int walk_entry(const char *p, bool is_dir, const struct stat *st,
                      const detfeed__walk_opts *o, detfeed__strlist *out,
                      detfeed__msg *msg, walk_dir *up, int depth)
{
    if (!is_dir) { /* files, and what glob lists too: FIFOs, broken links */
        char suffix[16];
        detfeed__path_suffix(p, suffix, sizeof suffix);
        if (o->keep(suffix) && !detfeed__strlist_add(out, p))
            return DETFEED_ENOMEM;
        return DETFEED_OK;
    }
    if (!o->recursive)
        return DETFEED_OK;
    for (int k = 0; k <= depth; k++)
        if (up[k].dev == st->st_dev && up[k].ino == st->st_ino)
            return o->loop ? o->loop(o->ctx, p, up[k].path) : DETFEED_OK;
    if (depth + 1 >= DETFEED__WALK_DEPTH)
        return detfeed__fail(msg, DETFEED_ELIMIT, "%s: folders nested deeper than %d",
                             p, DETFEED__WALK_DEPTH);
    up[depth + 1] = (walk_dir){st->st_dev, st->st_ino, p};
    return walk(p, o, out, msg, up, depth + 1);
}

static int walk(const char *dir, const detfeed__walk_opts *o, detfeed__strlist *out,
                detfeed__msg *msg, walk_dir *up, int depth)
{
    DIR *d = opendir(dir);
    if (d == NULL && errno == ENOMEM)
        return detfeed__fail(msg, DETFEED_ENOMEM,
                             "%s: out of memory opening the folder", dir);
    if (d == NULL)
        return detfeed__fail(msg, DETFEED_EIO, "%s: cannot open folder: %s", dir,
                             strerror(errno));
    int rc = DETFEED_OK;
    struct dirent *e;
    while (rc == DETFEED_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *p = detfeed__path_join(dir, e->d_name);
        if (p == NULL) {
            rc = DETFEED_ENOMEM;
            break;
        }
        struct stat st;
        int got = stat(p, &st);
        bool is_dir = got == 0 && S_ISDIR(st.st_mode);
        rc = got != 0 && errno == ENOMEM
                 ? detfeed__fail(msg, DETFEED_ENOMEM, "%s: out of memory", p)
                 : walk_entry(p, is_dir, &st, o, out, msg, up, depth);
        free(p);
    }
    closedir(d);
    if (rc == DETFEED_ENOMEM && msg->text[0] == '\0')
        detfeed__fail(msg, rc, "%s: out of memory", dir);
    return rc;
}

int detfeed__walk(const char *dir, const detfeed__walk_opts *opts,
                  detfeed__strlist *out, detfeed__msg *msg)
{
    walk_dir up[DETFEED__WALK_DEPTH];
    struct stat st;
    if (stat(dir, &st) != 0)
        return detfeed__fail(msg, DETFEED_EIO, "%s: cannot open folder: %s", dir,
                             strerror(errno));
    up[0] = (walk_dir){st.st_dev, st.st_ino, dir};
    return walk(dir, opts, out, msg, up, 0);
}

int detfeed__read_text(const char *path, size_t max, char **text, size_t *len,
                       detfeed__msg *msg)
{
    uint8_t *data;
    size_t n;
    int rc = detfeed__read_file(path, max, &data, &n, msg);
    if (rc == DETFEED_ECORRUPT) { /* an empty text file is just empty */
        data = NULL;
        n = 0;
        if (detfeed__path_type(path) == DETFEED__F_FILE)
            rc = DETFEED_OK;
    }
    if (rc != DETFEED_OK)
        return rc;
    char *t = realloc(data, n + 1);
    if (t == NULL) {
        free(data);
        return detfeed__fail(msg, DETFEED_ENOMEM, "%s: out of memory", path);
    }
    t[n] = '\0';
    *text = t;
    *len = n;
    return DETFEED_OK;
}

/* ---- text ------------------------------------------------------------------ */

static bool at_bytes(const char *s, const char *end, const char *bytes, size_t n)
{
    return (size_t)(end - s) >= n && memcmp(s, bytes, n) == 0;
}

size_t detfeed__line_break(const char *s, const char *end)
{
    unsigned char c = (unsigned char)*s;
    if (c == '\r')
        return at_bytes(s, end, "\r\n", 2) ? 2 : 1;
    if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e))
        return 1;
    if (c == 0xC2)
        return at_bytes(s, end, "\xC2\x85", 2) ? 2 : 0; /* U+0085 */
    if (c == 0xE2)                                      /* U+2028, U+2029 */
        return at_bytes(s, end, "\xE2\x80\xA8", 3) ||
                       at_bytes(s, end, "\xE2\x80\xA9", 3)
                   ? 3
                   : 0;
    return 0;
}

size_t detfeed__line_length(const char *s, const char *end, size_t *brk)
{
    const char *p = s;
    *brk = 0;
    for (; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if ((c < 0x20 || c == 0xC2 || c == 0xE2) &&
            (*brk = detfeed__line_break(p, end)))
            break;
    }
    return (size_t)(p - s);
}

size_t detfeed__py_space(const char *s, const char *end)
{
    unsigned char c = (unsigned char)*s;
    if (c == ' ' || c == '\t' || c == 0x1f)
        return 1;
    size_t n = detfeed__line_break(s, end);
    if (n > 0 || c < 0xC2)
        return n == 2 && c == '\r' ? 1 : n; /* "\r\n" is two spaces */
    if (at_bytes(s, end, "\xC2\xA0", 2))
        return 2; /* U+00A0 */
    if (at_bytes(s, end, "\xE1\x9A\x80", 3) || at_bytes(s, end, "\xE2\x80\xAF", 3) ||
        at_bytes(s, end, "\xE2\x81\x9F", 3) || at_bytes(s, end, "\xE3\x80\x80", 3))
        return 3; /* U+1680, U+202F, U+205F, U+3000 */
    if (at_bytes(s, end, "\xE2\x80", 2) && (size_t)(end - s) >= 3 &&
        (unsigned char)s[2] >= 0x80 && (unsigned char)s[2] <= 0x8A)
        return 3; /* U+2000 .. U+200A */
    return 0;
}

/* Suffixes Ultralytics 8.4 accepts as images (IMG_FORMATS), and the ones
 * detfeed decodes. */
bool detfeed__is_image_suffix(const char *s)
{
    static const char *const all[] = {"avif", "bmp",  "dng", "heic", "heif",
                                      "jp2",  "jpeg", "jpg", "mpo",  "png",
                                      "tif",  "tiff", "webp"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(s, all[i]) == 0)
            return true;
    return false;
}

bool detfeed__is_txt_suffix(const char *s)
{
    return strcmp(s, "txt") == 0;
}

/* Ultralytics' imread reads every suffix but avif, heic and heif through
 * cv2.imdecode, which knows the format by its signature (a .dng is a TIFF);
 * those three go to Pillow first, which detfeed reproduces: AVIF in a .avif
 * (avif.c), HEIF in a .heic or .heif (heif.c); index.c refuses such a file
 * holding another format. */
bool detfeed__is_decodable_suffix(const char *s)
{
    return detfeed__is_image_suffix(s);
}
