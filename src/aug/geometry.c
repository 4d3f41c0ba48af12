/*
 * geometry.c - LetterBox, Mosaic, RandomPerspective, RandomFlip and Format's
 * labels, as Ultralytics computes them (the classes of the same names in
 * ultralytics/data/augment.py).
 */
#include "geometry.h"

#include "segments.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PAD_VALUE 114

/* ---- buffers -------------------------------------------------------------- */

int detfeed__img_reserve(detfeed__img *im, int w, int h)
{
    size_t need;
    if (w <= 0 || h <= 0 || !detfeed__mul_size((size_t)w * 3, (size_t)h, &need))
        return DETFEED_EINVAL;
    if (need > im->cap && im->borrowed)
        return DETFEED_ELIMIT; /* the caller's memory is what it is */
    if (need > im->cap) {
        uint8_t *p = realloc(im->px, need);
        if (p == NULL)
            return DETFEED_ENOMEM;
        im->px = p;
        im->cap = need;
    }
    im->w = w;
    im->h = h;
    return DETFEED_OK;
}

void detfeed__img_free(detfeed__img *im)
{
    if (!im->borrowed)
        free(im->px);
    memset(im, 0, sizeof *im);
}

int detfeed__inst_reserve(detfeed__inst *in, int n, int nkpt)
{
    if (n < 0 || nkpt < 0)
        return DETFEED_EINVAL;
    if (n > in->cap || nkpt != in->nkpt) {
        int cap = n > in->cap ? n + n / 2 + 8 : in->cap;
        float *cls = realloc(in->cls, (size_t)cap * sizeof *cls);
        if (cls)
            in->cls = cls;
        float *box = realloc(in->box, (size_t)cap * 4 * sizeof *box);
        if (box)
            in->box = box;
        float *kpt =
            nkpt ? realloc(in->kpt, (size_t)cap * (size_t)nkpt * 3 * sizeof *kpt)
                 : in->kpt;
        if (kpt)
            in->kpt = kpt;
        if (!cls || !box || (nkpt && !kpt))
            return DETFEED_ENOMEM;
        in->cap = cap;
        in->nkpt = nkpt;
    }
    return DETFEED_OK;
}

void detfeed__inst_free(detfeed__inst *in)
{
    free(in->cls);
    free(in->box);
    free(in->kpt);
    free(in->seg);
    memset(in, 0, sizeof *in);
}

int detfeed__inst_reserve_seg(detfeed__inst *in, int n, int npt)
{
    size_t need;
    if (n < 0 || npt <= 0 || (in->n > 0 && in->npt && in->npt != npt))
        return DETFEED_EINVAL;
    in->npt = npt;
    if (!detfeed__mul_size((size_t)n * 2, (size_t)npt, &need))
        return DETFEED_ENOMEM;
    if (need <= in->seg_cap)
        return DETFEED_OK;
    size_t cap = need + need / 2 + 2 * (size_t)npt * 8;
    if (!detfeed__mul_size(cap, sizeof(float), &need))
        return DETFEED_ENOMEM;
    float *seg = realloc(in->seg, need);
    if (seg == NULL)
        return DETFEED_ENOMEM;
    in->seg = seg;
    in->seg_cap = cap;
    return DETFEED_OK;
}

/* Polygon i's points. */
static float *seg_at(const detfeed__inst *in, int i)
{
    return in->seg + (size_t)i * in->npt * 2;
}

/* ---- labels --------------------------------------------------------------- */

/* Appends the polygons of `lab` resampled (as the dataset stores them) and
 * then denormalized, scaled and shifted as the boxes. Tiles whose images
 * resample to different point counts are not supported (Ultralytics
 * resamples them again when it concatenates). */
static int append_segments(detfeed__inst *in, const detfeed__src_labels *lab, int w,
                           int h, float r, bool scaled, int padw, int padh)
{
    int base = in->n, npt = detfeed__resample_count(lab->seg_start, lab->n);
    if (base > 0 && in->npt != npt)
        return in->npt ? DETFEED_ENOTSUPPORTED : DETFEED_EINVAL;
    int rc = detfeed__inst_reserve_seg(in, base + lab->n, npt);
    for (int i = 0; rc == DETFEED_OK && i < lab->n; i++) {
        float *p = seg_at(in, base + i);
        int s0 = lab->seg_start[i];
        detfeed__resample(lab->seg_xy + 2 * (size_t)s0, lab->seg_start[i + 1] - s0, npt,
                          p);
        for (int k = 0; k < npt; k++) {
            float x = p[2 * k] * (float)w, y = p[2 * k + 1] * (float)h;
            if (scaled) {
                x = x * r;
                y = y * r;
            }
            p[2 * k] = x + (float)padw;
            p[2 * k + 1] = y + (float)padh;
        }
    }
    return rc;
}

/* Appends normalized labels as absolute xyxy: Ultralytics' convert_bbox
 * ("xyxy"), denormalize(w, h), scale(r) when r is not 1, add_padding. */
static int append_labels(detfeed__inst *in, const detfeed__src_labels *lab, int w,
                         int h, float r, bool scaled, int padw, int padh)
{
    int base = in->n;
    int rc = detfeed__inst_reserve(in, base + lab->n, lab->nkpt);
    if (rc == DETFEED_OK && lab->seg_start && lab->n > 0)
        rc = append_segments(in, lab, w, h, r, scaled, padw, padh);
    if (rc != DETFEED_OK)
        return rc;
    for (int i = 0; i < lab->n; i++) {
        const float *b = lab->boxes + 4 * (size_t)i;
        float dw = b[2] / 2, dh = b[3] / 2;
        float xy[4] = {b[0] - dw, b[1] - dh, b[0] + dw, b[1] + dh};
        float *o = in->box + 4 * (size_t)(base + i);
        for (int k = 0; k < 4; k++) {
            float v = xy[k] * (float)((k & 1) ? h : w);
            if (scaled)
                v = v * r;
            o[k] = v + (float)((k & 1) ? padh : padw);
        }
        in->cls[base + i] = lab->cls[i];
        for (int k = 0; k < lab->nkpt; k++) {
            const float *p = lab->kpts + ((size_t)i * lab->nkpt + k) * 3;
            float *q = in->kpt + ((size_t)(base + i) * lab->nkpt + k) * 3;
            float x = p[0] * (float)w, y = p[1] * (float)h;
            if (scaled) {
                x = x * r;
                y = y * r;
            }
            q[0] = x + (float)padw;
            q[1] = y + (float)padh;
            q[2] = p[2];
        }
    }
    in->n = base + lab->n;
    return DETFEED_OK;
}

/* Instances.clip(w, h): boxes and polygon points clamped; keypoints
 * outside get visibility 0, and from 8.4 on are clamped too. */
void detfeed__inst_clip(detfeed__inst *in, float w, float h, const detfeed__stack *st)
{
    bool clip_kpts = st->ultralytics >= 804;
    for (int i = 0; i < in->n; i++) {
        float *b = in->box + 4 * (size_t)i;
        b[0] = fminf(fmaxf(b[0], 0), w);
        b[2] = fminf(fmaxf(b[2], 0), w);
        b[1] = fminf(fmaxf(b[1], 0), h);
        b[3] = fminf(fmaxf(b[3], 0), h);
        for (int k = 0; in->npt && k < in->npt; k++) {
            float *p = seg_at(in, i) + 2 * k;
            p[0] = fminf(fmaxf(p[0], 0), w);
            p[1] = fminf(fmaxf(p[1], 0), h);
        }
        for (int k = 0; k < in->nkpt; k++) {
            float *p = in->kpt + ((size_t)i * in->nkpt + k) * 3;
            if (p[0] < 0 || p[0] > w || p[1] < 0 || p[1] > h)
                p[2] = 0.0f;
            if (clip_kpts) { /* NumPy's clip: max then min */
                p[0] = fminf(fmaxf(p[0], 0), w);
                p[1] = fminf(fmaxf(p[1], 0), h);
            }
        }
    }
}

void detfeed__inst_keep(detfeed__inst *in, const bool *keep)
{
    int k = 0;
    for (int i = 0; i < in->n; i++) {
        if (!keep[i])
            continue;
        if (k != i) {
            in->cls[k] = in->cls[i];
            memcpy(in->box + 4 * (size_t)k, in->box + 4 * (size_t)i, 4 * sizeof(float));
            if (in->nkpt) /* kpt is NULL without keypoints */
                memcpy(in->kpt + (size_t)k * in->nkpt * 3,
                       in->kpt + (size_t)i * in->nkpt * 3,
                       (size_t)in->nkpt * 3 * sizeof(float));
            if (in->npt) /* seg is NULL without polygons */
                memcpy(seg_at(in, k), seg_at(in, i),
                       (size_t)in->npt * 2 * sizeof(float));
        }
        k++;
    }
    in->n = k;
}

int detfeed__inst_append(detfeed__inst *dst, const detfeed__inst *src)
{
    int n = dst->n, rc = detfeed__inst_reserve(dst, n + src->n, src->nkpt);
    if (rc == DETFEED_OK && src->n && src->npt) /* Instances.concatenate */
        rc = n && dst->npt != src->npt
                 ? DETFEED_ENOTSUPPORTED
                 : detfeed__inst_reserve_seg(dst, n + src->n, src->npt);
    if (rc != DETFEED_OK || src->n == 0) /* an empty source may hold no arrays */
        return rc;
    if (src->npt)
        memcpy(dst->seg + (size_t)n * src->npt * 2, src->seg,
               (size_t)src->n * src->npt * 2 * sizeof *dst->seg);
    memcpy(dst->cls + n, src->cls, (size_t)src->n * sizeof *dst->cls);
    memcpy(dst->box + 4 * (size_t)n, src->box, (size_t)src->n * 4 * sizeof *dst->box);
    if (src->nkpt)
        memcpy(dst->kpt + (size_t)n * src->nkpt * 3, src->kpt,
               (size_t)src->n * src->nkpt * 3 * sizeof *dst->kpt);
    dst->n = n + src->n;
    return DETFEED_OK;
}

/* remove_zero_area_boxes: keeps (x2 - x1) * (y2 - y1) > 0. */
static int remove_zero_area(detfeed__inst *in)
{
    bool *keep = malloc((size_t)(in->n ? in->n : 1));
    if (keep == NULL)
        return DETFEED_ENOMEM;
    for (int i = 0; i < in->n; i++) {
        const float *b = in->box + 4 * (size_t)i;
        keep[i] = (b[2] - b[0]) * (b[3] - b[1]) > 0;
    }
    detfeed__inst_keep(in, keep);
    free(keep);
    return DETFEED_OK;
}

/* ---- LetterBox ------------------------------------------------------------ */

/* Python's round(): to nearest, ties to even. */
static double round_even(double x)
{
    return nearbyint(x); /* the default rounding mode is to nearest, ties to even */
}

static void fill_pad(uint8_t *px, size_t n)
{
    memset(px, PAD_VALUE, n);
}

int detfeed__inst_from_labels(detfeed__inst *inst, const detfeed__src_labels *lab,
                              int w, int h)
{
    inst->n = 0;
    inst->npt = 0;
    return append_labels(inst, lab, w, h, 1.0f, false, 0, 0);
}

detfeed__fit detfeed__letterbox_fit(int w, int h, int out_w, int out_h, bool scaleup)
{
    double r = fmin((double)out_h / h, (double)out_w / w);
    if (!scaleup)
        r = fmin(r, 1.0);
    /* max(round(side * r), 1): a thin image keeps at least one pixel. */
    int nw = (int)fmax(round_even(w * r), 1), nh = (int)fmax(round_even(h * r), 1);
    double dw = (out_w - nw) / 2.0, dh = (out_h - nh) / 2.0;
    /* The bottom and right pads are what is left: round(d + 0.1) each, and
     * the sizes add up to the output. */
    return (detfeed__fit){.nw = nw,
                          .nh = nh,
                          .left = (int)round_even(dw - 0.1),
                          .top = (int)round_even(dh - 0.1),
                          .r = r};
}

/* The letterboxed pixels: the pad, then the image (resized when the fit
 * says so) at (left, top). */
static int letterbox_pixels(const uint8_t *src, int w, int h, const detfeed__fit *f,
                            int out_w, int out_h, detfeed__img *out)
{
    int rc = detfeed__img_reserve(out, out_w, out_h);
    if (rc != DETFEED_OK)
        return rc;
    fill_pad(out->px, (size_t)out_w * out_h * 3);
    uint8_t *dst = out->px + ((size_t)f->top * out_w + f->left) * 3;
    if (f->nw == w && f->nh == h) {
        for (int y = 0; y < h; y++)
            memcpy(dst + (size_t)y * out_w * 3, src + (size_t)y * w * 3, (size_t)w * 3);
        return DETFEED_OK;
    }
    return detfeed_resize_linear(src, (size_t)w * 3, w, h, dst, (size_t)out_w * 3,
                                 f->nw, f->nh, 3);
}

int detfeed__letterbox(const uint8_t *src, int w, int h, const detfeed__src_labels *lab,
                       int out_w, int out_h, bool scaleup, detfeed__img *out,
                       detfeed__inst *inst, int pad[2], double *ratio)
{
    detfeed__fit f = detfeed__letterbox_fit(w, h, out_w, out_h, scaleup);
    int rc = out ? letterbox_pixels(src, w, h, &f, out_w, out_h, out) : DETFEED_OK;
    if (rc != DETFEED_OK)
        return rc;
    if (pad) {
        pad[0] = f.left;
        pad[1] = f.top;
    }
    if (ratio)
        *ratio = f.r;
    inst->n = 0;
    inst->npt = 0;
    return append_labels(inst, lab, w, h, (float)f.r, true, f.left, f.top);
}

/* ---- Mosaic --------------------------------------------------------------- */

static void copy_rect(uint8_t *dst, int dst_w, int x1a, int y1a, const uint8_t *src,
                      int src_w, int x1b, int y1b, int cw, int ch)
{
    for (int y = 0; y < ch; y++)
        memcpy(dst + ((size_t)(y1a + y) * dst_w + x1a) * 3,
               src + ((size_t)(y1b + y) * src_w + x1b) * 3, (size_t)cw * 3);
}

static int imax(int a, int b)
{
    return a > b ? a : b;
}
static int imin(int a, int b)
{
    return a < b ? a : b;
}

/* The pad over `need`, row by row. */
static void fill_pad_rect(detfeed__img *im, const detfeed__rect *need)
{
    for (int y = need->y0; y < need->y1; y++)
        fill_pad(im->px + ((size_t)y * im->w + need->x0) * 3,
                 (size_t)(need->x1 - need->x0) * 3);
}

/* copy_rect of the part of the destination rectangle inside `need`. */
static void copy_rect_in(uint8_t *dst, int dst_w, int x1a, int y1a, const uint8_t *src,
                         int src_w, int x1b, int y1b, int cw, int ch,
                         const detfeed__rect *need)
{
    int dx = imax(need->x0 - x1a, 0), dy = imax(need->y0 - y1a, 0);
    cw = imin(x1a + cw, need->x1) - (x1a + dx);
    ch = imin(y1a + ch, need->y1) - (y1a + dy);
    if (cw > 0 && ch > 0)
        copy_rect(dst, dst_w, x1a + dx, y1a + dy, src, src_w, x1b + dx, y1b + dy, cw,
                  ch);
}

detfeed__rect detfeed__mosaic_tile(int i, int w, int h, int s, int xc, int yc,
                                   int origin[2])
{
    int S = 2 * s;
    int x1a, y1a, x2a, y2a, x1b, y1b;
    switch (i) {
    case 0: /* top left */
        x1a = imax(xc - w, 0), y1a = imax(yc - h, 0), x2a = xc, y2a = yc;
        x1b = w - (x2a - x1a), y1b = h - (y2a - y1a);
        break;
    case 1: /* top right */
        x1a = xc, y1a = imax(yc - h, 0), x2a = imin(xc + w, S), y2a = yc;
        x1b = 0, y1b = h - (y2a - y1a);
        break;
    case 2: /* bottom left */
        x1a = imax(xc - w, 0), y1a = yc, x2a = xc, y2a = imin(S, yc + h);
        x1b = w - (x2a - x1a), y1b = 0;
        break;
    default: /* bottom right */
        x1a = xc, y1a = yc, x2a = imin(xc + w, S), y2a = imin(S, yc + h);
        x1b = 0, y1b = 0;
        break;
    }
    origin[0] = x1a - x1b;
    origin[1] = y1a - y1b;
    /* The source rectangle is clipped to the tile as NumPy slicing does. */
    int cw = imin(x2a - x1a, w - x1b), ch = imin(y2a - y1a, h - y1b);
    return (detfeed__rect){x1a, y1a, x1a + imax(cw, 0), y1a + imax(ch, 0)};
}

int detfeed__mosaic4(const detfeed__tile tiles[4], int s, int xc, int yc,
                     const detfeed__rect *need, const detfeed__stack *st,
                     detfeed__img *out, detfeed__inst *inst)
{
    int S = 2 * s, rc;
    detfeed__rect all = {0, 0, S, S};
    if (need == NULL)
        need = &all;
    if (out) {
        if ((rc = detfeed__img_reserve(out, S, S)) != DETFEED_OK)
            return rc;
        fill_pad_rect(out, need);
    }
    inst->n = 0;
    inst->npt = 0;
    for (int i = 0; i < 4; i++) {
        int w = tiles[i].w, h = tiles[i].h, o[2];
        detfeed__rect c = detfeed__mosaic_tile(i, w, h, s, xc, yc, o);
        if (out)
            copy_rect_in(out->px, S, c.x0, c.y0, tiles[i].px, w, c.x0 - o[0],
                         c.y0 - o[1], c.x1 - c.x0, c.y1 - c.y0, need);
        rc = append_labels(inst, &tiles[i].lab, w, h, 1.0f, false, o[0], o[1]);
        if (rc != DETFEED_OK)
            return rc;
    }
    detfeed__inst_clip(inst, (float)S, (float)S, st);
    return remove_zero_area(inst);
}

/* ---- RandomPerspective ---------------------------------------------------- */

/* One entry of a float32 matrix product, a0 b0 + a1 b1 + a2 b2, as NumPy's
 * BLAS computes it: rounding every product and sum, ((a0 b0 + a1 b1) +
 * a2 b2) (Debian 12's NumPy 1.24), or accumulating with fused multiply-adds,
 * fma(a2, b2, fma(a1, b1, a0 b0)) (the NumPy 2 and 1.26 wheels' OpenBLAS
 * on FMA CPUs). */
static float dot3(float a0, float b0, float a1, float b1, float a2, float b2,
                  bool fused)
{
    if (fused)
        return fmaf(a2, b2, fmaf(a1, b1, a0 * b0));
    return (a0 * b0 + a1 * b1) + a2 * b2;
}

static void matmul3(const float a[9], const float b[9], float out[9], bool fused)
{
    float t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            t[3 * i + j] = dot3(a[3 * i], b[j], a[3 * i + 1], b[3 + j], a[3 * i + 2],
                                b[6 + j], fused);
    memcpy(out, t, sizeof t);
}

void detfeed__affine_matrix(const detfeed__recipe *r, int in_w, int in_h, int out_w,
                            int out_h, const detfeed__stack *st, float M[9])
{
    bool fused = st->numpy >= 2;
    const double pi = 3.141592653589793;
    float C[9] = {1, 0, (float)(-in_w / 2.0), 0, 1, (float)(-in_h / 2.0), 0, 0, 1};
    float P[9] = {1, 0, 0, 0, 1, 0, (float)r->perspective[0], (float)r->perspective[1],
                  1};
    /* cv2.getRotationMatrix2D(center=(0, 0), angle, scale), in double. */
    double a = r->angle * (pi / 180), alpha = cos(a) * r->scale,
           beta = sin(a) * r->scale;
    float R[9] = {(float)alpha,
                  (float)beta,
                  (float)((1 - alpha) * 0 - beta * 0),
                  (float)-beta,
                  (float)alpha,
                  (float)(beta * 0 + (1 - alpha) * 0),
                  0,
                  0,
                  1};
    float S[9] = {1, (float)tan(r->shear[0] * pi / 180),
                  0, (float)tan(r->shear[1] * pi / 180),
                  1, 0,
                  0, 0,
                  1};
    float T[9] = {1, 0, (float)(r->translate[0] * out_w),
                  0, 1, (float)(r->translate[1] * out_h),
                  0, 0, 1};
    float m[9];
    matmul3(T, S, m, fused);
    matmul3(m, R, m, fused);
    matmul3(m, P, m, fused);
    matmul3(m, C, M, fused);
}

/* A point (x, y, 1) through M (xy @ M.T), each row a NumPy dot product. */
static void transform(const float M[9], float x, float y, bool fused, float out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = dot3(x, M[3 * k], y, M[3 * k + 1], 1.0f, M[3 * k + 2], fused);
}

/* box_candidates(box1 = original * scale, box2 = new), Ultralytics' rule
 * with wh_thr 2, ar_thr 100, eps 1e-16 and area_thr (0.1, or 0.01 with
 * polygons; compared in float32 as NumPy casts the Python float). */
static bool candidate(const float b1[4], const float b2[4], float scale, float area_thr)
{
    const float eps = 1e-16f;
    float w1 = b1[2] * scale - b1[0] * scale, h1 = b1[3] * scale - b1[1] * scale;
    float w2 = b2[2] - b2[0], h2 = b2[3] - b2[1];
    float ar = fmaxf(w2 / (h2 + eps), h2 / (w2 + eps));
    return w2 > 2 && h2 > 2 && w2 * h2 / (w1 * h1 + eps) > area_thr && ar < 100;
}

static void transform_instances(detfeed__inst *in, const float M[9], bool persp,
                                bool fused)
{
    for (int i = 0; i < in->n; i++) {
        float *b = in->box + 4 * (size_t)i, c[4][3];
        /* Corners x1y1, x2y2, x1y2, x2y1 as Ultralytics orders them. */
        transform(M, b[0], b[1], fused, c[0]);
        transform(M, b[2], b[3], fused, c[1]);
        transform(M, b[0], b[3], fused, c[2]);
        transform(M, b[2], b[1], fused, c[3]);
        float x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
        for (int k = 0; k < 4; k++) {
            float x = persp ? c[k][0] / c[k][2] : c[k][0];
            float y = persp ? c[k][1] / c[k][2] : c[k][1];
            x0 = fminf(x0, x), x1 = fmaxf(x1, x), y0 = fminf(y0, y), y1 = fmaxf(y1, y);
        }
        b[0] = x0, b[1] = y0, b[2] = x1, b[3] = y1;
        for (int k = 0; k < in->nkpt; k++) {
            float *p = in->kpt + ((size_t)i * in->nkpt + k) * 3, t[3];
            transform(M, p[0], p[1], fused, t);
            p[0] = t[0] / t[2]; /* Ultralytics always divides here */
            p[1] = t[1] / t[2];
        }
    }
}

/* The running min / max of the points segment2box keeps. */
typedef struct extent {
    float x0, y0, x1, y1;
    bool any;
} extent;

static void extent_add(extent *e, float x, float y)
{
    e->x0 = fminf(e->x0, x), e->x1 = fmaxf(e->x1, x);
    e->y0 = fminf(e->y0, y), e->y1 = fmaxf(e->y1, y);
    e->any = true;
}

/* cv2.pointPolygonTest(contour, pt, measureDist=False) >= 0 for a float32
 * contour: the crossing count of OpenCV's float branch, with its
 * comparisons in float and its cross product in double; a point on an
 * edge or a vertex counts as inside. */
static bool point_in_polygon(const float *pts, int npt, float px, float py)
{
    float vx = pts[2 * (npt - 1)], vy = pts[2 * (npt - 1) + 1];
    int counter = 0;
    for (int i = 0; i < npt; i++) {
        float v0x = vx, v0y = vy;
        vx = pts[2 * i], vy = pts[2 * i + 1];
        if ((v0y <= py && vy <= py) || (v0y > py && vy > py) || (v0x < px && vx < px)) {
            if (py == vy && (px == vx || (py == v0y && ((v0x <= px && px <= vx) ||
                                                        (vx <= px && px <= v0x)))))
                return true;
            continue;
        }
        double dist = (double)(py - v0y) * (double)(vx - v0x) -
                      (double)(px - v0x) * (double)(vy - v0y);
        if (dist == 0)
            return true;
        if (vy < v0y)
            dist = -dist;
        counter += dist > 0;
    }
    return counter % 2 == 1;
}

/* 8.4's segment2box for a polygon crossing the image border: its vertices
 * inside, the points where its edges cross the four border lines within
 * the image (t = (bound - start) / delta per edge, the crossing start +
 * t * delta, all in float32 as NumPy computes them), and the image corners
 * inside it. */
static void crossing_extent(const float *pts, int npt, float W, float H, extent *e)
{
    const float bounds[4] = {0, W, 0, H}, lims[4] = {H, H, W, W};
    for (int k = 0; k < npt; k++) {
        float x = pts[2 * k], y = pts[2 * k + 1];
        if (x >= 0 && y >= 0 && x <= W && y <= H)
            extent_add(e, x, y);
    }
    for (int k = 0; k < npt; k++) {
        const float *a = pts + 2 * k, *b = pts + 2 * ((k + 1) % npt);
        float d[2] = {b[0] - a[0], b[1] - a[1]};
        for (int j = 0; j < 4; j++) {
            int axis = j / 2;
            float t = (bounds[j] - a[axis]) / d[axis];
            float ix = a[0] + t * d[0], iy = a[1] + t * d[1];
            float other = axis == 0 ? iy : ix;
            if (t >= 0 && t <= 1 && other >= 0 && other <= lims[j])
                extent_add(e, ix, iy);
        }
    }
    const float corners[4][2] = {{0, 0}, {W, 0}, {0, H}, {W, H}};
    for (int c = 0; c < 4; c++)
        if (point_in_polygon(pts, npt, corners[c][0], corners[c][1]))
            extent_add(e, corners[c][0], corners[c][1]);
}

/* segment2box(xy, W, H) of Ultralytics 8.4: the polygon's own extent when
 * it lies inside [0, W] x [0, H], zeros when its extent lies outside, else
 * the extent of its visible part (crossing_extent). */
static void segment_box84(const float *pts, int npt, float W, float H, float box[4])
{
    extent all = {INFINITY, INFINITY, -INFINITY, -INFINITY, false};
    for (int k = 0; k < npt; k++)
        extent_add(&all, pts[2 * k], pts[2 * k + 1]);
    extent e = {INFINITY, INFINITY, -INFINITY, -INFINITY, false};
    if (all.x0 >= 0 && all.y0 >= 0 && all.x1 <= W && all.y1 <= H)
        e = all;
    else if (!(all.x1 < 0 || all.y1 < 0 || all.x0 > W || all.y0 > H))
        crossing_extent(pts, npt, W, H, &e);
    if (!e.any)
        e.x0 = e.y0 = e.x1 = e.y1 = 0;
    box[0] = e.x0, box[1] = e.y0, box[2] = e.x1, box[3] = e.y1;
}

/* segment2box(xy, W, H) up to 8.3: min/max of the points inside [0, W] x
 * [0, H], all zeros when no inside point has a non-zero x (Python's any()
 * over the x values). */
static void segment_box83(const float *pts, int npt, float W, float H, float box[4])
{
    float x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    bool any = false;
    for (int k = 0; k < npt; k++) {
        float x = pts[2 * k], y = pts[2 * k + 1];
        if (!(x >= 0 && y >= 0 && x <= W && y <= H))
            continue;
        any = any || x != 0;
        x0 = fminf(x0, x), x1 = fmaxf(x1, x), y0 = fminf(y0, y), y1 = fmaxf(y1, y);
    }
    if (!any)
        x0 = y0 = x1 = y1 = 0;
    box[0] = x0, box[1] = y0, box[2] = x1, box[3] = y1;
}

/* segment2box, then the points clamped to the box (apply_segments). */
static void segment_box(float *pts, int npt, float W, float H, const detfeed__stack *st,
                        float box[4])
{
    if (st->ultralytics >= 804)
        segment_box84(pts, npt, W, H, box);
    else
        segment_box83(pts, npt, W, H, box);
    for (int k = 0; k < npt; k++) {
        pts[2 * k] = fminf(fmaxf(pts[2 * k], box[0]), box[2]);
        pts[2 * k + 1] = fminf(fmaxf(pts[2 * k + 1], box[1]), box[3]);
    }
}

/* apply_segments: every point through M and divided by its w' (always, as
 * Ultralytics does), then each box from its polygon. */
static void transform_segments(detfeed__inst *in, const float M[9], int out_w,
                               int out_h, const detfeed__stack *st)
{
    for (int i = 0; i < in->n; i++) {
        float *pts = seg_at(in, i), t[3];
        for (int k = 0; k < in->npt; k++) {
            transform(M, pts[2 * k], pts[2 * k + 1], st->numpy >= 2, t);
            pts[2 * k] = t[0] / t[2];
            pts[2 * k + 1] = t[1] / t[2];
        }
        segment_box(pts, in->npt, (float)out_w, (float)out_h, st,
                    in->box + 4 * (size_t)i);
    }
}

/* The warp of RandomPerspective with the stack's OpenCV. */
static int warp(const detfeed__img *in, const float M[9], bool persp,
                const detfeed__stack *st, int out_w, int out_h, detfeed__img *out)
{
    static const uint8_t border[3] = {PAD_VALUE, PAD_VALUE, PAD_VALUE};
    double Md[9];
    for (int k = 0; k < 9; k++)
        Md[k] = M[k];
    if (persp)
        return detfeed_warp_perspective_cv(in->px, (size_t)in->w * 3, in->w, in->h,
                                           out->px, (size_t)out_w * 3, out_w, out_h, Md,
                                           border, &st->cv);
    return detfeed_warp_affine_cv(in->px, (size_t)in->w * 3, in->w, in->h, out->px,
                                  (size_t)out_w * 3, out_w, out_h, Md, border, &st->cv);
}

/* A margin, in input pixels, around the bilinear neighbours of the mapped
 * output corners: OpenCV's fixed-point (4.x) or float (5.x) coordinates
 * differ from the exact ones by far less than a pixel. */
enum { WARP_READ_MARGIN = 3 };

detfeed__rect detfeed__warp_reads(const float M[9], bool persp, int in_w, int in_h,
                                  int out_w, int out_h)
{
    detfeed__rect all = {0, 0, in_w, in_h};
    double a = M[0], b = M[1], c = M[2], d = M[3], e = M[4], f = M[5];
    double det = a * e - b * d;
    if (persp || fabs(det) < 1e-12)
        return all;
    /* The inverse map, output to input, at the corners of the output's
     * pixel centres, one pixel out on each side. */
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int k = 0; k < 4; k++) {
        double x = (k & 1) ? out_w : -1, y = (k & 2) ? out_h : -1;
        double u = (e * (x - c) - b * (y - f)) / det;
        double v = (-d * (x - c) + a * (y - f)) / det;
        lo[0] = fmin(lo[0], u), hi[0] = fmax(hi[0], u);
        lo[1] = fmin(lo[1], v), hi[1] = fmax(hi[1], v);
    }
    double m = WARP_READ_MARGIN;
    if (!(lo[0] - m > -1e9 && hi[0] + m < 1e9 && lo[1] - m > -1e9 && hi[1] + m < 1e9))
        return all;
    detfeed__rect r = {(int)fmax(floor(lo[0]) - m, 0), (int)fmax(floor(lo[1]) - m, 0),
                       (int)fmin(ceil(hi[0]) + m + 1, in_w),
                       (int)fmin(ceil(hi[1]) + m + 1, in_h)};
    if (r.x1 <= r.x0 || r.y1 <= r.y0)
        r.x1 = r.x0, r.y1 = r.y0; /* reads nothing */
    return r;
}

bool detfeed__is_perspective(const detfeed__recipe *r)
{
    return r->perspective[0] != 0 || r->perspective[1] != 0;
}

int detfeed__random_perspective(const detfeed__img *in, detfeed__inst *inst,
                                const detfeed__recipe *r, const detfeed__stack *st,
                                int out_w, int out_h, detfeed__img *out)
{
    float M[9];
    detfeed__affine_matrix(r, in->w, in->h, out_w, out_h, st, M);
    bool persp = detfeed__is_perspective(r);
    if (out) {
        int rc = detfeed__img_reserve(out, out_w, out_h);
        if (rc == DETFEED_OK)
            rc = warp(in, M, persp, st, out_w, out_h, out);
        if (rc != DETFEED_OK)
            return rc;
    }
    /* The original boxes, for box_candidates, before they are transformed. */
    float *orig = malloc((size_t)(inst->n ? inst->n : 1) * 4 * sizeof *orig);
    bool *keep = malloc((size_t)(inst->n ? inst->n : 1));
    if (orig == NULL || keep == NULL) {
        free(orig);
        free(keep);
        return DETFEED_ENOMEM;
    }
    if (inst->n) /* box is NULL until the first instance */
        memcpy(orig, inst->box, (size_t)inst->n * 4 * sizeof *orig);
    transform_instances(inst, M, persp, st->numpy >= 2);
    bool polygons = inst->n > 0 && inst->npt > 0;
    if (polygons)
        transform_segments(inst, M, out_w, out_h, st);
    detfeed__inst_clip(inst, (float)out_w, (float)out_h, st);
    for (int i = 0; i < inst->n; i++)
        keep[i] = candidate(orig + 4 * (size_t)i, inst->box + 4 * (size_t)i,
                            (float)r->scale, polygons ? 0.01f : 0.1f);
    detfeed__inst_keep(inst, keep);
    free(orig);
    free(keep);
    return DETFEED_OK;
}

/* ---- RandomFlip and Format ------------------------------------------------ */

static void flip_rows(detfeed__img *im)
{
    size_t row = (size_t)im->w * 3;
    uint8_t tmp[3 * 1024];
    for (int y = 0; y < im->h / 2; y++) {
        uint8_t *a = im->px + (size_t)y * row,
                *b = im->px + (size_t)(im->h - 1 - y) * row;
        for (size_t o = 0; o < row; o += sizeof tmp) {
            size_t n = row - o < sizeof tmp ? row - o : sizeof tmp;
            memcpy(tmp, a + o, n);
            memcpy(a + o, b + o, n);
            memcpy(b + o, tmp, n);
        }
    }
}

/* dst's n pixels are src's in reverse order. Each pixel moves as one 4-byte
 * word (whose fourth byte the next pixel overwrites; the last moves as 3
 * bytes), so src must have one readable byte after its n pixels. */
static void mirror_pixels(uint8_t *dst, const uint8_t *src, int n)
{
    const uint8_t *s = src + 3 * (size_t)(n - 1);
    for (int x = 0; x < n - 1; x++, s -= 3) {
        uint32_t v;
        memcpy(&v, s, 4);
        memcpy(dst + 3 * (size_t)x, &v, 4);
    }
    memcpy(dst + 3 * (size_t)(n - 1), src, 3);
}

/* Mirrors each row: the row's two ends swap, a chunk of up to CHUNK pixels
 * from each end at a time, through copies on the stack. */
static void flip_cols(detfeed__img *im)
{
    enum { CHUNK = 256 };
    uint8_t left[3 * CHUNK + 1] = {0}, right[3 * CHUNK + 1] = {0};
    for (int y = 0; y < im->h; y++) {
        uint8_t *row = im->px + (size_t)y * im->w * 3;
        for (int l = 0, r = im->w; r - l >= 2;) {
            int k = imin(CHUNK, (r - l) / 2);
            memcpy(left, row + 3 * (size_t)l, 3 * (size_t)k);
            memcpy(right, row + 3 * (size_t)(r - k), 3 * (size_t)k);
            mirror_pixels(row + 3 * (size_t)l, right, k);
            mirror_pixels(row + 3 * (size_t)(r - k), left, k);
            l += k, r -= k;
        }
    }
}

static void permute_kpts(detfeed__inst *in, const int *flip_idx)
{
    float tmp[3 * 256];
    if (flip_idx == NULL || in->nkpt == 0 || in->nkpt > 256)
        return;
    for (int i = 0; i < in->n; i++) {
        float *p = in->kpt + (size_t)i * in->nkpt * 3;
        memcpy(tmp, p, (size_t)in->nkpt * 3 * sizeof *p);
        for (int k = 0; k < in->nkpt; k++)
            memcpy(p + 3 * k, tmp + 3 * flip_idx[k], 3 * sizeof *p);
    }
}

void detfeed__inst_to_xywh(detfeed__inst *in)
{
    for (int i = 0; i < in->n; i++) {
        float *b = in->box + 4 * (size_t)i;
        float xywh[4] = {(b[0] + b[2]) / 2, (b[1] + b[3]) / 2, b[2] - b[0],
                         b[3] - b[1]};
        memcpy(b, xywh, sizeof xywh);
    }
}

/* Ultralytics mirrors the centre of xywh boxes; the flags say which way. */
void detfeed__flip_labels(detfeed__inst *in, int w, int h, bool ud, bool lr,
                          const int *flip_idx)
{
    for (int i = 0; i < in->n; i++) {
        float *b = in->box + 4 * (size_t)i;
        if (ud)
            b[1] = (float)h - b[1];
        if (lr)
            b[0] = (float)w - b[0];
        for (int k = 0; k < in->nkpt; k++) {
            float *p = in->kpt + ((size_t)i * in->nkpt + k) * 3;
            if (ud)
                p[1] = (float)h - p[1];
            if (lr)
                p[0] = (float)w - p[0];
        }
        for (int k = 0; in->npt && k < in->npt; k++) {
            float *p = seg_at(in, i) + 2 * k;
            if (ud)
                p[1] = (float)h - p[1];
            if (lr)
                p[0] = (float)w - p[0];
        }
    }
    if (ud)
        permute_kpts(in, flip_idx);
    if (lr)
        permute_kpts(in, flip_idx);
}

void detfeed__flip_pixels(detfeed__img *im, bool ud, bool lr)
{
    if (ud)
        flip_rows(im);
    if (lr)
        flip_cols(im);
}

void detfeed__flip(detfeed__img *im, detfeed__inst *in, bool ud, bool lr,
                   const int *flip_idx)
{
    detfeed__flip_labels(in, im->w, im->h, ud, lr, flip_idx);
    detfeed__flip_pixels(im, ud, lr);
}

void detfeed__mixup_blend(uint8_t *img, const uint8_t *partner, size_t n, double r)
{
    double w0 = r, w1 = 1 - r;
    for (size_t i = 0; i < n; i++)
        img[i] = (uint8_t)(img[i] * w0 + partner[i] * w1);
}

int detfeed__inst_permute(detfeed__inst *in, const int *order)
{
    detfeed__inst t = {0};
    int rc = detfeed__inst_reserve(&t, in->n, in->nkpt);
    if (rc == DETFEED_OK && in->npt)
        rc = detfeed__inst_reserve_seg(&t, in->n, in->npt);
    for (int k = 0; rc == DETFEED_OK && k < in->n; k++) {
        int i = order[k];
        t.cls[k] = in->cls[i];
        memcpy(t.box + 4 * (size_t)k, in->box + 4 * (size_t)i, 4 * sizeof(float));
        if (in->nkpt)
            memcpy(t.kpt + (size_t)k * in->nkpt * 3, in->kpt + (size_t)i * in->nkpt * 3,
                   (size_t)in->nkpt * 3 * sizeof(float));
        if (in->npt)
            memcpy(seg_at(&t, k), seg_at(in, i), (size_t)in->npt * 2 * sizeof(float));
    }
    if (rc == DETFEED_OK) {
        memcpy(in->cls, t.cls, (size_t)in->n * sizeof(float));
        memcpy(in->box, t.box, (size_t)in->n * 4 * sizeof(float));
        if (in->nkpt)
            memcpy(in->kpt, t.kpt, (size_t)in->n * in->nkpt * 3 * sizeof(float));
        if (in->npt)
            memcpy(in->seg, t.seg, (size_t)in->n * in->npt * 2 * sizeof(float));
    }
    detfeed__inst_free(&t);
    return rc;
}

/* One normalized box coordinate: 8.4 divides in float32, 8.3 multiplied
 * by the float32 reciprocal (Bboxes.mul((1 / w, 1 / h, ...))). */
static float normalized(float v, int side, float reciprocal, bool divide)
{
    return divide ? v / (float)side : v * reciprocal;
}

void detfeed__format(const detfeed__inst *in, int w, int h, const detfeed__stack *st,
                     float *cls, float *boxes, float *kpts)
{
    /* Keypoints are divided in every version. */
    float rw = (float)(1.0 / w), rh = (float)(1.0 / h);
    bool divide = st->ultralytics >= 804;
    for (int i = 0; i < in->n; i++) {
        const float *b = in->box + 4 * (size_t)i;
        cls[i] = in->cls[i];
        boxes[4 * i] = normalized(b[0], w, rw, divide);
        boxes[4 * i + 1] = normalized(b[1], h, rh, divide);
        boxes[4 * i + 2] = normalized(b[2], w, rw, divide);
        boxes[4 * i + 3] = normalized(b[3], h, rh, divide);
        for (int k = 0; kpts && k < in->nkpt; k++) {
            const float *p = in->kpt + ((size_t)i * in->nkpt + k) * 3;
            float *q = kpts + ((size_t)i * in->nkpt + k) * 3;
            q[0] = p[0] / (float)w;
            q[1] = p[1] / (float)h;
            q[2] = p[2];
        }
    }
}
