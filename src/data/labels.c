/*
 * labels.c - parsing and validating YOLO label files (labels.h).
 *
 * Two passes: the text is tokenised into float32 values line by line
 * (rejecting what Python's float() or NumPy's float32 cast would not turn
 * into a finite number), then each line is checked against the task's rules.
 * Only a file without rejected lines becomes labels.
 */
#include "labels.h"

#include "path.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* All numbers of a file, line by line. */
typedef struct rows {
    float *vals;
    int *start;  /* [n + 1] offsets into vals */
    int *lineno; /* [n] 1-based line numbers */
    int n, cap_rows;
    size_t nvals, cap_vals;
} rows;

/* A rejected line, held until the whole file is read so that the report
 * is in line order. */
typedef struct rejection {
    int line;
    char reason[160];
} rejection;

typedef struct ctx {
    const char *file;
    const detfeed__label_rules *rules;
    rejection *rej;
    int rejected, cap;
    bool nomem;
} ctx;

static void reject(ctx *c, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void reject(ctx *c, int line, const char *fmt, ...)
{
    if (c->rejected == c->cap) {
        int cap = c->cap ? c->cap * 2 : 8;
        rejection *r = realloc(c->rej, (size_t)cap * sizeof *r);
        if (r == NULL) {
            c->nomem = true;
            return;
        }
        c->rej = r;
        c->cap = cap;
    }
    rejection *r = &c->rej[c->rejected++];
    r->line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof r->reason, fmt, ap);
    va_end(ap);
}

static int cmp_rejection(const void *a, const void *b)
{
    const rejection *x = a, *y = b;
    return (x->line > y->line) - (x->line < y->line);
}

static void report_all(ctx *c, detfeed__problem_fn report, void *rctx)
{
    qsort(c->rej, (size_t)c->rejected, sizeof *c->rej, cmp_rejection);
    for (int i = 0; report && i < c->rejected; i++)
        report(rctx, c->file, c->rej[i].line, c->rej[i].reason);
}

static void rows_free(rows *r)
{
    free(r->vals);
    free(r->start);
    free(r->lineno);
}

static bool rows_push_val(rows *r, float v)
{
    if (r->nvals == r->cap_vals) {
        size_t cap = r->cap_vals ? r->cap_vals * 2 : 64;
        float *g = realloc(r->vals, cap * sizeof *g);
        if (g == NULL)
            return false;
        r->vals = g;
        r->cap_vals = cap;
    }
    r->vals[r->nvals++] = v;
    return true;
}

static bool rows_end_line(rows *r, int lineno)
{
    if (r->n + 1 >= r->cap_rows) {
        int cap = r->cap_rows ? r->cap_rows * 2 : 16;
        int *s = realloc(r->start, (size_t)(cap + 1) * sizeof *s);
        if (s)
            r->start = s;
        int *l = realloc(r->lineno, (size_t)cap * sizeof *l);
        if (l)
            r->lineno = l;
        if (s == NULL || l == NULL)
            return false;
        r->cap_rows = cap;
        if (r->n == 0)
            r->start[0] = 0;
    }
    r->lineno[r->n] = lineno;
    r->start[++r->n] = (int)r->nvals;
    return true;
}

/* A decimal number as Python's float() reads it (no hex, no underscores):
 * [+-] digits [. digits] [e [+-] digits], with at least one digit. */
static bool is_decimal(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    size_t a = strspn(s, "0123456789");
    s += a;
    size_t b = 0;
    if (*s == '.') {
        b = strspn(++s, "0123456789");
        s += b;
    }
    if (a + b == 0)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        size_t e = strspn(s, "0123456789");
        if (e == 0)
            return false;
        s += e;
    }
    return *s == '\0';
}

static bool is_nonfinite_word(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    static const char *const words[] = {"nan", "inf", "infinity"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i]), k = 0;
        while (k < n && s[k] && tolower((unsigned char)s[k]) == words[i][k])
            k++;
        if (k == n && s[k] == '\0')
            return true;
    }
    return false;
}

/* Tokenises one line into r; false only when out of memory. A bad token
 * rejects the line (reported) and its values are dropped. */
static bool tokenise(ctx *c, rows *r, const char *s, size_t len, int lineno)
{
    size_t mark = r->nvals;
    const char *end = s + len;
    while (s < end) {
        size_t sp;
        while (s < end && (sp = detfeed__py_space(s, end)) > 0)
            s += sp;
        const char *t = s;
        while (s < end && detfeed__py_space(s, end) == 0)
            s++;
        size_t n = (size_t)(s - t);
        if (n == 0)
            break;
        char tok[72];
        if (n >= sizeof tok) {
            reject(c, lineno, "value too long (%zu characters)", n);
            r->nvals = mark;
            return true;
        }
        memcpy(tok, t, n);
        tok[n] = '\0';
        if (!is_decimal(tok)) {
            reject(c, lineno,
                   is_nonfinite_word(tok) ? "value '%s' is not finite"
                                          : "non-numeric value '%.40s'",
                   tok);
            r->nvals = mark;
            return true;
        }
        float v = (float)strtod(tok, NULL);
        if (!isfinite(v)) {
            reject(c, lineno, "value '%s' is out of the float32 range", tok);
            r->nvals = mark;
            return true;
        }
        if (!rows_push_val(r, v))
            return false;
    }
    if (r->nvals == mark)
        return true; /* blank line */
    return rows_end_line(r, lineno);
}

static int split_into_rows(ctx *c, const char *text, size_t len, rows *r)
{
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    const char *end = text + len;
    for (int lineno = 1; text < end; lineno++) {
        size_t brk, n = detfeed__line_length(text, end, &brk);
        if (memchr(text, '\0', n)) {
            reject(c, lineno, "NUL byte in the line");
        } else if (n > c->rules->max_line) {
            reject(c, lineno, "line longer than %zu bytes", c->rules->max_line);
        } else if (!tokenise(c, r, text, n, lineno)) {
            return DETFEED_ENOMEM;
        }
        if (r->n > c->rules->max_lines) {
            reject(c, 0, "more than %d labels in the file", c->rules->max_lines);
            return DETFEED_ELABEL;
        }
        text += n + brk;
    }
    return DETFEED_OK;
}

/* ---- per-line rules ------------------------------------------------------- */

static int row_len(const rows *r, int i)
{
    return r->start[i + 1] - r->start[i];
}

static const float *row(const rows *r, int i)
{
    return r->vals + r->start[i];
}

/* The shortest text that reads back as v (as NumPy prints a float32), so
 * that 1.0100001 is not shown as 1.01 beside the bound it exceeds; a whole
 * number in plain digits. */
static const char *fmt_float(char out[32], float v)
{
    if (v == floorf(v) && fabsf(v) < 1e15f) { /* a whole number as one: 80, not 8e+01 */
        snprintf(out, 32, "%.0f", (double)v);
        return out;
    }
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(out, 32, "%.*g", digits, (double)v);
        if (strtof(out, NULL) == v)
            break;
    }
    return out;
}

static bool check_class(ctx *c, int line, float cls)
{
    char t[32];
    if (cls != floorf(cls)) {
        reject(c, line, "class id %s is not a whole number", fmt_float(t, cls));
        return false;
    }
    if (cls < 0) {
        reject(c, line, "negative class id %s", fmt_float(t, cls));
        return false;
    }
    if (c->rules->nc > 0 && cls >= (float)c->rules->nc) {
        reject(c, line, "class id %s is not below the %d classes", fmt_float(t, cls),
               c->rules->nc);
        return false;
    }
    if (cls > (float)(DETFEED__MAX_CLASSES - 1)) {
        reject(c, line,
               "class id %s is above %d, the largest class id accepted (without a "
               "number of classes to check it against)",
               fmt_float(t, cls), DETFEED__MAX_CLASSES - 1);
        return false;
    }
    return true;
}

enum { MODE_DETECT, MODE_SEGMENT, MODE_POSE };

/* The name of column k of a row for messages (a polygon's row is checked
 * as the class and box derived from its points). */
static const char *col_name(int mode, int kdim, int k, char out[48])
{
    static const char *const box[] = {"class id", "box centre x", "box centre y",
                                      "box width", "box height"};
    static const char *const kpt[] = {"x", "y", "visibility"};
    if (k < 5)
        snprintf(out, 48, "%s", box[k]);
    else if (mode == MODE_POSE)
        snprintf(out, 48, "keypoint %d %s", (k - 5) / kdim + 1, kpt[(k - 5) % kdim]);
    else
        snprintf(out, 48, "value %d", k + 1);
    return out;
}

/* Ultralytics' bounds: coordinates (columns cols[0..ncols-1]) <= 1.01 and
 * every value >= -0.01. */
static bool check_bounds(ctx *c, int line, int mode, const float *v, int n,
                         const int *cols, int ncols)
{
    const char *of = mode == MODE_SEGMENT ? " of the polygon's points" : "";
    char name[48], t[32];
    int kdim = c->rules->kdim;
    for (int i = 0; i < ncols; i++) {
        if (v[cols[i]] > 1.01f) {
            reject(c, line, "%s %s%s is above 1.01 (not normalized?)",
                   col_name(mode, kdim, cols[i], name), fmt_float(t, v[cols[i]]), of);
            return false;
        }
    }
    for (int k = 0; k < n; k++) {
        if (v[k] < -0.01f) {
            reject(c, line, "%s %s%s is below -0.01", col_name(mode, kdim, k, name),
                   fmt_float(t, v[k]), of);
            return false;
        }
    }
    return true;
}

/* Polygon -> [cls, xc, yc, w, h] in float32 as segments2boxes computes it. */
static void polygon_box(const float *xy, int npts, float out[4])
{
    float x0 = xy[0], x1 = xy[0], y0 = xy[1], y1 = xy[1];
    for (int k = 1; k < npts; k++) {
        x0 = fminf(x0, xy[2 * k]);
        x1 = fmaxf(x1, xy[2 * k]);
        y0 = fminf(y0, xy[2 * k + 1]);
        y1 = fmaxf(y1, xy[2 * k + 1]);
    }
    out[0] = (x0 + x1) / 2;
    out[1] = (y0 + y1) / 2;
    out[2] = x1 - x0;
    out[3] = y1 - y0;
}

static bool check_row(ctx *c, const rows *r, int i, int mode)
{
    const detfeed__label_rules *ru = c->rules;
    int n = row_len(r, i), line = r->lineno[i];
    const float *v = row(r, i);
    if (mode == MODE_POSE && n != 5 + ru->nkpt * ru->kdim) {
        reject(c, line, "expected %d columns (5 + %d keypoints x %d), found %d",
               5 + ru->nkpt * ru->kdim, ru->nkpt, ru->kdim, n);
        return false;
    }
    if (mode == MODE_DETECT && n != 5) {
        reject(c, line, "expected 5 columns (class x y w h), found %d", n);
        return false;
    }
    if (mode == MODE_SEGMENT && (n < 3 || (n - 1) % 2 != 0)) {
        reject(c, line,
               "a polygon needs pairs of coordinates after the class, found %d "
               "values",
               n - 1);
        return false;
    }
    if (!check_class(c, line, v[0]))
        return false;
    static const int box_cols[] = {1, 2, 3, 4};
    if (mode == MODE_SEGMENT) {
        float b[5] = {v[0]};
        polygon_box(v + 1, (n - 1) / 2, b + 1);
        return check_bounds(c, line, mode, b, 5, box_cols, 4);
    }
    if (mode == MODE_POSE) { /* Ultralytics bounds only the keypoints' x, y here */
        for (int k = 0; k < ru->nkpt; k++) {
            int cols[2] = {5 + k * ru->kdim, 6 + k * ru->kdim};
            if (!check_bounds(c, line, mode, v, 0, cols, 2))
                return false;
        }
        return check_bounds(c, line, mode, v, n, NULL, 0);
    }
    return check_bounds(c, line, mode, v, n, box_cols, 4);
}

/* ---- building the labels -------------------------------------------------- */

/* One instance's values in the row layout NumPy's unique compares:
 * [cls, xc, yc, w, h, keypoint values...]. */
typedef struct inst {
    float key[5];
    const float *kp; /* pose: the keypoint values of the row */
    int nkp;
    int row; /* index into rows */
} inst;

static int cmp_inst(const inst *a, const inst *b)
{
    for (int k = 0; k < 5; k++)
        if (a->key[k] != b->key[k])
            return a->key[k] < b->key[k] ? -1 : 1;
    for (int k = 0; k < a->nkp; k++)
        if (a->kp[k] != b->kp[k])
            return a->kp[k] < b->kp[k] ? -1 : 1;
    return 0;
}

static int cmp_inst_sort(const void *a, const void *b)
{
    int d = cmp_inst(a, b);
    if (d != 0)
        return d;
    return ((const inst *)a)->row - ((const inst *)b)->row; /* stable */
}

/* Removes duplicate rows; when any exist, the survivors are in sorted order
 * (np.unique(axis=0)), else the file order is kept. Returns the count. */
static int dedup(inst *v, int *n)
{
    inst *sorted = malloc((size_t)*n * sizeof *sorted);
    if (sorted == NULL)
        return -1;
    memcpy(sorted, v, (size_t)*n * sizeof *v);
    qsort(sorted, (size_t)*n, sizeof *sorted, cmp_inst_sort);
    int k = 0;
    for (int i = 0; i < *n; i++)
        if (k == 0 || cmp_inst(&sorted[k - 1], &sorted[i]) != 0)
            sorted[k++] = sorted[i];
    int removed = *n - k;
    if (removed > 0) {
        memcpy(v, sorted, (size_t)k * sizeof *v);
        *n = k;
    }
    free(sorted);
    return removed;
}

static bool build(const rows *r, int mode, const detfeed__label_rules *ru,
                  const inst *v, int n, detfeed__labels *out)
{
    size_t npts = 0;
    for (int i = 0; mode == MODE_SEGMENT && i < n; i++)
        npts += (size_t)(row_len(r, v[i].row) - 1) / 2;
    int nkpt = mode == MODE_POSE ? ru->nkpt : 0;
    size_t floats = (size_t)n * 5 + (size_t)n * (size_t)nkpt * 3 + npts * 2;
    size_t ints = mode == MODE_SEGMENT ? (size_t)n + 1 : 0;
    char *block = malloc(floats * sizeof(float) + ints * sizeof(int) + 1);
    if (block == NULL)
        return false;
    out->block_ = block;
    out->n = n;
    out->nkpt = nkpt;
    out->cls = (float *)block;
    out->boxes = out->cls + n;
    out->kpts = nkpt ? out->boxes + 4 * (size_t)n : NULL;
    out->seg_xy = npts || ints ? out->boxes + 4 * (size_t)n : NULL;
    out->seg_start = ints ? (int *)(block + floats * sizeof(float)) : NULL;
    size_t pt = 0;
    for (int i = 0; i < n; i++) {
        const float *x = row(r, v[i].row);
        out->cls[i] = v[i].key[0];
        memcpy(out->boxes + 4 * (size_t)i, v[i].key + 1, 4 * sizeof(float));
        for (int k = 0; k < nkpt; k++) {
            const float *p = x + 5 + k * ru->kdim;
            float *q = out->kpts + ((size_t)i * nkpt + k) * 3;
            q[0] = p[0];
            q[1] = p[1];
            q[2] = ru->kdim == 3 ? p[2] : (p[0] < 0 || p[1] < 0) ? 0.0f : 1.0f;
        }
        if (ints) {
            int m = (row_len(r, v[i].row) - 1) / 2;
            out->seg_start[i] = (int)pt;
            memcpy(out->seg_xy + 2 * pt, x + 1, (size_t)m * 2 * sizeof(float));
            pt += (size_t)m;
        }
    }
    if (ints)
        out->seg_start[n] = (int)pt;
    return true;
}

static int make_labels(const rows *r, int mode, const detfeed__label_rules *ru,
                       detfeed__labels *out, int *duplicates)
{
    inst *v = malloc((size_t)(r->n ? r->n : 1) * sizeof *v);
    if (v == NULL)
        return DETFEED_ENOMEM;
    for (int i = 0; i < r->n; i++) {
        const float *x = row(r, i);
        v[i] = (inst){.key = {x[0]}, .row = i};
        if (mode == MODE_SEGMENT)
            polygon_box(x + 1, (row_len(r, i) - 1) / 2, v[i].key + 1);
        else
            memcpy(v[i].key + 1, x + 1, 4 * sizeof(float));
        if (mode == MODE_POSE) {
            v[i].kp = x + 5;
            v[i].nkp = row_len(r, i) - 5;
        }
    }
    int n = r->n, removed = dedup(v, &n);
    int rc =
        removed < 0 || !build(r, mode, ru, v, n, out) ? DETFEED_ENOMEM : DETFEED_OK;
    *duplicates = removed > 0 ? removed : 0;
    free(v);
    return rc;
}

int detfeed__labels_parse(const char *text, size_t len, const char *file,
                          const detfeed__label_rules *rules, detfeed__labels *out,
                          int *duplicates, detfeed__problem_fn report, void *rctx)
{
    memset(out, 0, sizeof *out);
    *duplicates = 0;
    ctx c = {.file = file, .rules = rules};
    rows r = {0};
    int rc = split_into_rows(&c, text, len, &r);
    int mode = rules->nkpt > 0 ? MODE_POSE : MODE_DETECT;
    for (int i = 0; rc == DETFEED_OK && mode == MODE_DETECT && i < r.n; i++)
        if (row_len(&r, i) > 6)
            mode = MODE_SEGMENT;
    for (int i = 0; rc == DETFEED_OK && i < r.n; i++)
        check_row(&c, &r, i, mode);
    if (rc == DETFEED_OK && c.nomem)
        rc = DETFEED_ENOMEM;
    if (rc != DETFEED_ENOMEM && c.rejected) {
        report_all(&c, report, rctx);
        rc = DETFEED_ELABEL;
    }
    free(c.rej);
    if (rc == DETFEED_OK && r.n > 0)
        rc = make_labels(&r, mode, rules, out, duplicates);
    rows_free(&r);
    if (rc != DETFEED_OK)
        detfeed__labels_free(out);
    return rc;
}

void detfeed__labels_free(detfeed__labels *labels)
{
    free(labels->block_);
    memset(labels, 0, sizeof *labels);
}

/* ---- the classes filter --------------------------------------------------- */

static bool class_listed(float cls, const int *ids, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (cls == (float)ids[k])
            return true;
    return false;
}

/* Moves instance `from` to position `to` (<= from) in every array; *pt is
 * the next free polygon point, which the moved polygon starts at. */
static void move_instance(detfeed__labels *l, int to, int from, int *pt)
{
    l->cls[to] = l->cls[from];
    memmove(l->boxes + 4 * (size_t)to, l->boxes + 4 * (size_t)from, 4 * sizeof(float));
    if (l->kpts) {
        size_t per = (size_t)l->nkpt * 3;
        memmove(l->kpts + per * (size_t)to, l->kpts + per * (size_t)from,
                per * sizeof(float));
    }
    if (l->seg_start) {
        int s0 = l->seg_start[from], m = l->seg_start[from + 1] - s0;
        memmove(l->seg_xy + 2 * (size_t)*pt, l->seg_xy + 2 * (size_t)s0,
                (size_t)m * 2 * sizeof(float));
        l->seg_start[to] = *pt; /* seg_start[from + 1] is still to be read */
        *pt += m;
    }
}

int detfeed__labels_keep_classes(detfeed__labels *l, const int *ids, size_t n)
{
    int kept = 0, pt = 0;
    for (int i = 0; i < l->n; i++)
        if (class_listed(l->cls[i], ids, n))
            move_instance(l, kept++, i, &pt);
    int removed = l->n - kept;
    if (l->seg_start)
        l->seg_start[kept] = pt;
    l->n = kept;
    if (kept == 0)
        detfeed__labels_free(l);
    return removed;
}
