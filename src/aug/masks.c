/*
 * masks.c - cv2.fillPoly as OpenCV 4.6 rasterises an 8-bit polygon with
 * line type 8 and shift 0, and Ultralytics' polygons2masks_overlap
 * (ultralytics/data/utils.py) on top of it and NumPy's argsort.
 */
#include "masks.h"

#include "core/npsort.h"

#include <stdlib.h>
#include <string.h>

#define XY_SHIFT 16
#define XY_ONE   ((int64_t)1 << XY_SHIFT)

/* ---- lines ---------------------------------------------------------------- */

/* OpenCV's clipLine to [0, w - 1] x [0, h - 1]: the y side first, then the
 * x side, each intersection in double truncated toward zero, the second
 * end computed from the already moved first end. Returns whether the
 * (possibly moved) segment is inside; a segment wholly beyond one side is
 * left as it was. */
static bool clip_line(int64_t w, int64_t h, int64_t *x1, int64_t *y1, int64_t *x2,
                      int64_t *y2)
{
    int64_t right = w - 1, bottom = h - 1;
    if (w <= 0 || h <= 0)
        return false;
    int c1 = (*x1 < 0) + (*x1 > right) * 2 + (*y1 < 0) * 4 + (*y1 > bottom) * 8;
    int c2 = (*x2 < 0) + (*x2 > right) * 2 + (*y2 < 0) * 4 + (*y2 > bottom) * 8;
    if ((c1 & c2) == 0 && (c1 | c2) != 0) {
        int64_t a;
        if (c1 & 12) {
            a = c1 < 8 ? 0 : bottom;
            *x1 += (int64_t)((double)(a - *y1) * (double)(*x2 - *x1) /
                             (double)(*y2 - *y1));
            *y1 = a;
            c1 = (*x1 < 0) + (*x1 > right) * 2;
        }
        if (c2 & 12) {
            a = c2 < 8 ? 0 : bottom;
            *x2 += (int64_t)((double)(a - *y2) * (double)(*x2 - *x1) /
                             (double)(*y2 - *y1));
            *y2 = a;
            c2 = (*x2 < 0) + (*x2 > right) * 2;
        }
        if ((c1 & c2) == 0 && (c1 | c2) != 0) {
            if (c1) {
                a = c1 == 1 ? 0 : right;
                *y1 += (int64_t)((double)(a - *x1) * (double)(*y2 - *y1) /
                                 (double)(*x2 - *x1));
                *x1 = a;
                c1 = 0;
            }
            if (c2) {
                a = c2 == 1 ? 0 : right;
                *y2 += (int64_t)((double)(a - *x2) * (double)(*y2 - *y1) /
                                 (double)(*x2 - *x1));
                *x2 = a;
                c2 = 0;
            }
        }
    }
    return (c1 | c2) == 0;
}

static bool outside(int64_t x, int64_t y, int w, int h)
{
    return x < 0 || x >= w || y < 0 || y >= h;
}

/* An 8-connected line as OpenCV's LineIterator walks it (left to right):
 * the major axis steps every pixel; the minor one when the error term,
 * started at dx - 2 dy, is negative before the update. */
static void draw_line(uint8_t *img, int w, int h, int64_t x0, int64_t y0, int64_t x1,
                      int64_t y1, uint8_t color)
{
    if ((outside(x0, y0, w, h) || outside(x1, y1, w, h)) &&
        !clip_line(w, h, &x0, &y0, &x1, &y1))
        return;
    if (x1 < x0) {
        int64_t t = x0;
        x0 = x1, x1 = t, t = y0, y0 = y1, y1 = t;
    }
    int64_t dx = x1 - x0, dy = y1 - y0, sy = 1;
    if (dy < 0)
        dy = -dy, sy = -1;
    bool vert = dy > dx;
    int64_t major = vert ? dy : dx, minor = vert ? dx : dy;
    int64_t err = major - 2 * minor, x = x0, y = y0;
    for (int64_t i = 0; i <= major; i++) {
        img[(size_t)y * (size_t)w + (size_t)x] = color;
        bool step = err < 0;
        err += -2 * minor + (step ? 2 * major : 0);
        if (vert) {
            y += sy;
            x += step;
        } else {
            x += 1;
            y += step ? sy : 0;
        }
    }
}

/* ---- the scanline fill ---------------------------------------------------- */

typedef struct poly_edge {
    int64_t x, dx; /* 16.16 fixed point, x at scanline y0 */
    int y0, y1;    /* rows y0 .. y1 - 1 */
} poly_edge;

/* One edge a -> b: the line drawn, then the edge's 16.16 start at its
 * upper end and its slope (integer division toward zero). Measured on
 * OpenCV 4.6: the edges run through the unclipped integer vertices with no
 * half-pixel offset, and a span covers ceil(x_left) .. floor(x_right).
 * Returns whether the edge is kept (not horizontal). */
static bool make_edge(uint8_t *img, int w, int h, int64_t ax, int64_t ay, int64_t bx,
                      int64_t by, uint8_t color, poly_edge *e)
{
    draw_line(img, w, h, ax, ay, bx, by, color);
    int64_t ax_c = ax * XY_ONE, ay_c = ay, bx_c = bx * XY_ONE, by_c = by;
    if (ay == by)
        return false;
    e->dx = (bx_c - ax_c) / (by_c - ay_c);
    if (ay < by) {
        e->y0 = (int)ay, e->y1 = (int)by;
        e->x = ax_c + (e->y0 - ay_c) * e->dx;
    } else {
        e->y0 = (int)by, e->y1 = (int)ay;
        e->x = bx_c + (e->y0 - by_c) * e->dx;
    }
    return true;
}

static int cmp_y0(const void *a, const void *b)
{
    const poly_edge *p = a, *q = b;
    if (p->y0 != q->y0)
        return p->y0 < q->y0 ? -1 : 1;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return (p->dx > q->dx) - (p->dx < q->dx);
}

/* Fills, row by row, between the 1st and 2nd, 3rd and 4th, ... active edge
 * in x order: columns ceil(x_a) .. floor(x_b), clamped to the image; each
 * paired edge then moves by its dx (an unpaired last edge does not). */
static void fill_edges(uint8_t *img, int w, int h, poly_edge *e, int total,
                       uint8_t color, int *active)
{
    if (total < 2)
        return;
    int y_min = INT32_MAX, y_max = INT32_MIN;
    int64_t x_min = INT64_MAX, x_max = -1;
    for (int i = 0; i < total; i++) {
        int64_t xe = e[i].x + (e[i].y1 - e[i].y0) * e[i].dx;
        y_min = e[i].y0 < y_min ? e[i].y0 : y_min;
        y_max = e[i].y1 > y_max ? e[i].y1 : y_max;
        x_min = e[i].x < x_min ? e[i].x : x_min;
        x_max = e[i].x > x_max ? e[i].x : x_max;
        x_min = xe < x_min ? xe : x_min;
        x_max = xe > x_max ? xe : x_max;
    }
    if (y_max < 0 || y_min >= h || x_max < 0 || x_min >= (int64_t)w << XY_SHIFT)
        return;
    qsort(e, (size_t)total, sizeof *e, cmp_y0);
    y_max = y_max < h ? y_max : h;
    int next = 0, na = 0;
    for (int y = e[0].y0; y < y_max; y++) {
        int k = 0; /* drop the edges that end here, keep the order */
        for (int i = 0; i < na; i++)
            if (e[active[i]].y1 != y)
                active[k++] = active[i];
        na = k;
        while (next < total && e[next].y0 == y)
            active[na++] = next++;
        /* Insertion sort by x: the list is nearly sorted from the last row. */
        for (int i = 1; i < na; i++) {
            int v = active[i], j = i;
            while (j > 0 && e[active[j - 1]].x > e[v].x) {
                active[j] = active[j - 1];
                j--;
            }
            active[j] = v;
        }
        for (int i = 0; i + 1 < na; i += 2) {
            poly_edge *a = &e[active[i]], *b = &e[active[i + 1]];
            int64_t x1 = (a->x + XY_ONE - 1) >> XY_SHIFT, x2 = b->x >> XY_SHIFT;
            if (y >= 0 && x1 < w && x2 >= 0 && x1 <= x2) {
                x1 = x1 < 0 ? 0 : x1;
                x2 = x2 >= w ? w - 1 : x2;
                memset(img + (size_t)y * (size_t)w + (size_t)x1, color,
                       (size_t)(x2 - x1 + 1));
            }
            a->x += a->dx;
            b->x += b->dx;
        }
    }
}

int detfeed__fill_poly(uint8_t *img, int w, int h, const int32_t *pts, int m,
                       uint8_t color)
{
    if (m <= 0)
        return DETFEED_OK;
    poly_edge *e = malloc((size_t)m * sizeof *e);
    int *active = malloc((size_t)m * sizeof *active);
    if (e == NULL || active == NULL) {
        free(e);
        free(active);
        return DETFEED_ENOMEM;
    }
    int total = 0;
    /* The closing edge first, from the last point to the first. */
    for (int i = 0, prev = m - 1; i < m; prev = i++)
        total += make_edge(img, w, h, pts[2 * prev], pts[2 * prev + 1], pts[2 * i],
                           pts[2 * i + 1], color, &e[total]);
    fill_edges(img, w, h, e, total, color, active);
    free(e);
    free(active);
    return DETFEED_OK;
}

/* ---- polygons2masks_overlap ----------------------------------------------- */

/* polygon2mask: the polygon cast to int32 (toward zero, as NumPy casts),
 * filled with 1 at full size, resized to the mask size. */
static int polygon_mask(const float *seg, int npt, int w, int h, int mw, int mh,
                        uint8_t *full, int32_t *pts, uint8_t *out)
{
    for (int k = 0; k < 2 * npt; k++)
        pts[k] = (int32_t)seg[k];
    memset(full, 0, (size_t)w * h);
    int rc = detfeed__fill_poly(full, w, h, pts, npt, 1);
    if (rc == DETFEED_OK)
        rc = detfeed_resize_linear(full, (size_t)w, w, h, out, (size_t)mw, mw, mh, 1);
    return rc;
}

/* Paints instance mask m (0 or 1 per pixel) with value v over the 8-bit
 * mask: 8.4's running max, or 8.3's clip(masks + m * v, 0, v), whose uint8
 * sum wraps. */
static void paint_u8(uint8_t *out, const uint8_t *m, size_t size, int v, bool sum)
{
    uint8_t c = (uint8_t)v;
    for (size_t p = 0; p < size; p++) {
        uint8_t t = (uint8_t)(m[p] * c);
        if (sum) {
            uint8_t s = (uint8_t)(out[p] + t); /* uint8 wraps */
            out[p] = s < c ? s : c;
        } else {
            out[p] = t > out[p] ? t : out[p];
        }
    }
}

/* The same in int32 (more than 255 instances), where nothing wraps. */
static void paint_i32(int32_t *out, const uint8_t *m, size_t size, int v, bool sum)
{
    for (size_t p = 0; p < size; p++) {
        int32_t t = (int32_t)m[p] * v;
        if (sum) {
            int32_t s = out[p] + t;
            out[p] = s < v ? (s > 0 ? s : 0) : v;
        } else {
            out[p] = t > out[p] ? t : out[p];
        }
    }
}

int detfeed__masks_overlap(const detfeed__inst *in, int w, int h, int ratio,
                           const detfeed__stack *st, void *out, int *order)
{
    int n = in->n, mw = w / ratio, mh = h / ratio;
    size_t msize = (size_t)mw * mh;
    detfeed_mask_type type = detfeed__mask_type(n);
    memset(out, 0, msize * (size_t)type);
    if (n == 0)
        return DETFEED_OK;
    if (in->npt == 0)
        return DETFEED_EINVAL;
    uint8_t *full = malloc((size_t)w * h), *ms = malloc(msize * (size_t)n);
    int32_t *pts = malloc((size_t)in->npt * 2 * sizeof *pts);
    uint64_t *neg = calloc((size_t)n, sizeof *neg);
    int rc = full && ms && pts && neg ? DETFEED_OK : DETFEED_ENOMEM;
    for (int i = 0; rc == DETFEED_OK && i < n; i++) {
        uint8_t *m = ms + msize * (size_t)i;
        rc = polygon_mask(in->seg + (size_t)i * in->npt * 2, in->npt, w, h, mw, mh,
                          full, pts, m);
        uint64_t area = 0;
        for (size_t p = 0; p < msize; p++)
            area += m[p];
        neg[i] = 0 - area; /* -areas on an unsigned array wraps */
    }
    if (rc == DETFEED_OK)
        rc = detfeed__np_argsort(neg, DETFEED_NUMPY_UINT64, n, order, st->numpy_sort);
    if (rc == DETFEED_OK) {
        bool sum = st->ultralytics < 804;
        for (int k = 0; k < n; k++) {
            const uint8_t *m = ms + msize * (size_t)order[k];
            if (type == DETFEED_MASK_I32)
                paint_i32(out, m, msize, k + 1, sum);
            else
                paint_u8(out, m, msize, k + 1, sum);
        }
    }
    free(full);
    free(ms);
    free(pts);
    free(neg);
    return rc;
}

int detfeed__format_masks(detfeed__inst *in, int w, int h, const detfeed__stack *st,
                          void *mask)
{
    enum { RATIO = 4 };
    size_t bytes =
        (size_t)(w / RATIO) * (size_t)(h / RATIO) * (size_t)detfeed__mask_type(in->n);
    if (in->n == 0 || in->npt == 0) {
        if (mask)
            memset(mask, 0, bytes);
        return DETFEED_OK;
    }
    void *m = mask ? mask : malloc(bytes);
    int *order = malloc((size_t)in->n * sizeof *order);
    int rc = m && order ? DETFEED_OK : DETFEED_ENOMEM;
    if (rc == DETFEED_OK)
        rc = detfeed__masks_overlap(in, w, h, RATIO, st, m, order);
    if (rc == DETFEED_OK)
        rc = detfeed__inst_permute(in, order);
    if (m != mask)
        free(m);
    free(order);
    return rc;
}
