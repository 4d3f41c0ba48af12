/*
 * geometry.h - Ultralytics' geometric augmentation with labels transformed
 * alike (internal): LetterBox, Mosaic (4 tiles), RandomPerspective (affine
 * or perspective warp, box_candidates), RandomFlip, and Format's label
 * normalization. Images are BGR 8-bit, rows 3 * width bytes apart.
 *
 * The label arithmetic is Ultralytics' in float32, each operation rounded
 * (no fused multiply-adds): NumPy's element-wise float32 operations round
 * every step; small matrix products round as the stack's `numpy` says.
 */
#ifndef DETFEED_GEOMETRY_H
#define DETFEED_GEOMETRY_H

#include "core/internal.h"
#include "recipe.h"

/* The reference stack a sample follows: Ultralytics' label arithmetic
 * (803 for 8.3, 804 for 8.4), how the NumPy it runs on multiplies small
 * float32 matrices (2: with fused multiply-adds, as the NumPy 2 and 1.26
 * wheels' OpenBLAS does; 1: every product and sum rounded, as Debian 12's
 * NumPy 1.24 does), in which order its argsort leaves equal keys (the
 * order of a segment sample's masks) and the OpenCV whose warp it
 * reproduces. In
 * 8.4, Instances.clip also clips keypoints (after zeroing the visibility of
 * those outside), segment2box clips polygons to the image (their crossings
 * of the border and the image corners inside them count), and Format
 * divides boxes by w and h where 8.3 multiplied by 1 / w and 1 / h. */
typedef struct detfeed__stack {
    int ultralytics;
    int numpy; /* 1 or 2: how Ultralytics' small float32 matrix products round */
    detfeed_numpy_sort numpy_sort; /* NumPy's argsort (the order of equal keys) */
    detfeed_cv cv;
} detfeed__stack;

/* A growable 8-bit BGR image, or one in borrowed memory (never grown or
 * freed here). */
typedef struct detfeed__img {
    uint8_t *px;
    int w, h;
    size_t cap;    /* bytes allocated (borrowed: bytes available) */
    bool borrowed; /* px is the caller's */
} detfeed__img;

/* Instances in absolute pixels: boxes as x1, y1, x2, y2 through the
 * geometry, as centre x, y, w, h once detfeed__inst_to_xywh has run (where
 * Ultralytics' RandomFlip converts them; Format sees that form). */
typedef struct detfeed__inst {
    int n, cap, nkpt;
    float *cls;     /* [cap] */
    float *box;     /* [cap][4] */
    float *kpt;     /* [cap][nkpt][3]: x, y, visibility */
    int npt;        /* points per polygon (resampled); 0: no polygons */
    size_t seg_cap; /* floats allocated at seg */
    float *seg;     /* [n][npt][2]: polygon x, y */
} detfeed__inst;

/* Normalized labels of one image, as the dataset holds them. */
typedef struct detfeed__src_labels {
    int n, nkpt;
    const float *cls, *boxes, *kpts; /* boxes: centre x, y, w, h */
    const int *seg_start;            /* [n + 1] polygon offsets, or NULL */
    const float *seg_xy;             /* polygon points, normalized */
} detfeed__src_labels;

int detfeed__img_reserve(detfeed__img *im, int w, int h);
void detfeed__img_free(detfeed__img *im);
int detfeed__inst_reserve(detfeed__inst *in, int n, int nkpt);
void detfeed__inst_free(detfeed__inst *in);
/* Room for n polygons of npt points (npt fixed while instances exist). */
int detfeed__inst_reserve_seg(detfeed__inst *in, int n, int npt);

/* Where LetterBox puts a w x h image in out_w x out_h: scaled by r =
 * min(H / h, W / w) (capped at 1 without scaleup) to nw x nh (max(round(
 * side * r), 1), Python's round), its top-left corner at (left, top) =
 * round(d - 0.1) of each side's pad d = (out - n) / 2. It is resized
 * exactly when (nw, nh) differs from (w, h). */
typedef struct detfeed__fit {
    int nw, nh, left, top;
    double r;
} detfeed__fit;

detfeed__fit detfeed__letterbox_fit(int w, int h, int out_w, int out_h, bool scaleup);

/* Ultralytics' LetterBox (center, stride 32, auto off): resize by
 * r = min(H / h, W / w) (capped at 1 without scaleup) with INTER_LINEAR,
 * pad with 114 split as round(d -/+ 0.1); labels denormalized, scaled by r
 * and shifted. `pad` receives (left, top) and `ratio` r (may be NULL).
 * out NULL: the labels alone (src is not read). */
int detfeed__letterbox(const uint8_t *src, int w, int h, const detfeed__src_labels *lab,
                       int out_w, int out_h, bool scaleup, detfeed__img *out,
                       detfeed__inst *inst, int pad[2], double *ratio);

/* One tile of a mosaic: the image at its load size and its labels. */
typedef struct detfeed__tile {
    const uint8_t *px;
    int w, h;
    detfeed__src_labels lab;
} detfeed__tile;

/* A rectangle of pixels, [x0, x1) x [y0, y1). */
typedef struct detfeed__rect {
    int x0, y0, x1, y1;
} detfeed__rect;

/* Tile i (0..3: top-left, top-right, bottom-left, bottom-right) of a
 * Mosaic of side s around (xc, yc), of w x h pixels: the rectangle of the
 * 2s x 2s canvas its pixels cover (empty when none: x1 == x0 or y1 == y0)
 * and in origin the canvas position of its pixel (0, 0), so that canvas
 * pixel (x, y) of the rectangle is tile pixel (x - origin[0], y -
 * origin[1]); also the shift of its labels. */
detfeed__rect detfeed__mosaic_tile(int i, int w, int h, int s, int xc, int yc,
                                   int origin[2]);

/* Ultralytics' 4-tile Mosaic on a 2s x 2s canvas of 114 around (xc, yc):
 * tiles placed top-left, top-right, bottom-left, bottom-right
 * (detfeed__mosaic_tile, painted in that order); labels shifted, clipped
 * to the canvas, zero-area boxes dropped. Only the canvas's pixels inside
 * `need` are written (the rest keep whatever the buffer held): what the
 * warp that follows reads, from detfeed__warp_reads; NULL writes them
 * all. out NULL: the labels alone (no tile pixel is read). */
int detfeed__mosaic4(const detfeed__tile tiles[4], int s, int xc, int yc,
                     const detfeed__rect *need, const detfeed__stack *st,
                     detfeed__img *out, detfeed__inst *inst);

/* The pixels of an in_w x in_h input that warping it by M into out_w x
 * out_h can read (the affine warp's bilinear neighbours, with a margin for
 * its rounding), clipped to the input; all of it for a perspective M. */
detfeed__rect detfeed__warp_reads(const float M[9], bool persp, int in_w, int in_h,
                                  int out_w, int out_h);

/* The float32 matrix M = T S R P C of RandomPerspective for an input of
 * in_w x in_h and an output of out_w x out_h (row-major 3x3), multiplied
 * out as the stack's NumPy does. */
void detfeed__affine_matrix(const detfeed__recipe *r, int in_w, int in_h, int out_w,
                            int out_h, const detfeed__stack *st, float M[9]);

/* Whether RandomPerspective warps with warpPerspective (some perspective
 * draw is non-zero) rather than warpAffine. */
bool detfeed__is_perspective(const detfeed__recipe *r);

/* RandomPerspective: warps `in` by M (detfeed__affine_matrix of in's size)
 * into out_w x out_h (border 114; a perspective warp when
 * detfeed__is_perspective), transforms boxes and keypoints, clips, and
 * keeps the box_candidates. With polygons, the boxes come from the
 * transformed polygons (apply_segments) and the candidates' area threshold
 * is 0.01 instead of 0.1. out NULL: the labels alone (in's size is all
 * that is read of it). */
int detfeed__random_perspective(const detfeed__img *in, detfeed__inst *inst,
                                const detfeed__recipe *r, const detfeed__stack *st,
                                int out_w, int out_h, detfeed__img *out);

/* Boxes from x1, y1, x2, y2 to centre x, y, w, h (Ultralytics'
 * convert_bbox("xywh"), in float32 as it computes). */
void detfeed__inst_to_xywh(detfeed__inst *inst);

/* RandomFlip: vertical and/or horizontal, in place; keypoints permuted by
 * flip_idx (NULL: not permuted). Boxes must be centre x, y, w, h
 * (detfeed__inst_to_xywh first): their centres are mirrored.
 * detfeed__flip_labels and detfeed__flip_pixels are its two halves, for
 * labels of a w x h image and for the pixels alone. */
void detfeed__flip(detfeed__img *im, detfeed__inst *inst, bool ud, bool lr,
                   const int *flip_idx);
void detfeed__flip_labels(detfeed__inst *inst, int w, int h, bool ud, bool lr,
                          const int *flip_idx);
void detfeed__flip_pixels(detfeed__img *im, bool ud, bool lr);

/* MixUp's pixels: img[i] = (uint8_t)(img[i] * r + partner[i] * (1 - r)) in
 * double, truncated, for n bytes. */
void detfeed__mixup_blend(uint8_t *img, const uint8_t *partner, size_t n, double r);

/* Instances.clip(w, h): boxes and polygon points clamped to [0, w] x
 * [0, h]; keypoints outside get visibility 0, and from 8.4 on are clamped
 * too. */
void detfeed__inst_clip(detfeed__inst *inst, float w, float h,
                        const detfeed__stack *st);

/* Keeps instance i where keep[i] (n entries), in order. */
void detfeed__inst_keep(detfeed__inst *inst, const bool *keep);

/* Instances.concatenate: src's instances after dst's (the same keypoint
 * count; polygons of the same point count, DETFEED_ENOTSUPPORTED where
 * both hold some of different counts). */
int detfeed__inst_append(detfeed__inst *dst, const detfeed__inst *src);

/* Reorders the instances: instance k becomes old instance order[k]. */
int detfeed__inst_permute(detfeed__inst *inst, const int *order);

/* Format: boxes to normalized centre x, y, w, h and keypoints to normalized
 * x, y, written to the given arrays (n entries). */
void detfeed__format(const detfeed__inst *inst, int w, int h, const detfeed__stack *st,
                     float *cls, float *boxes, float *kpts);

/* Starts instances from an image's normalized labels in absolute pixels of
 * that w x h image, unpadded (RandomPerspective's denormalize when
 * Ultralytics 8.4 warps a loaded image without Mosaic). */
int detfeed__inst_from_labels(detfeed__inst *inst, const detfeed__src_labels *lab,
                              int w, int h);

#endif /* DETFEED_GEOMETRY_H */
