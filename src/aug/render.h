/*
 * render.h - a training (or validation) sample's 8-bit image before colour,
 * described instead of computed (internal): what the CPU's chain makes of
 * the cached load-size images (the canvas of up to 4 tiles, the warp to the
 * output, MixUp's blend, the flips), as plain data that a device can build
 * the image from. detfeed__augment fills one when its destination asks for
 * it (detfeed__pixels.render); detfeed__render_reference builds the image
 * from one on the CPU, plainly: the meaning of every field, and the oracle
 * of a device kernel.
 *
 * The image a description stands for is the one the device colour route
 * stages: HWC BGR 8-bit, out_w x out_h, rows 3 * out_w bytes apart, after
 * the flips and without RandomHSV (the recipe carries the colour).
 */
#ifndef DETFEED_RENDER_H
#define DETFEED_RENDER_H

#include "geometry.h"

enum {
    DETFEED__RENDER_FILL = 114, /* the canvas's fill and the warp's border, BGR alike */
    DETFEED__RENDER_TILES = 4   /* tiles of a canvas at most (Mosaic's) */
};

/* Whether the sample is described, or why not. A sample that is not was
 * made on the CPU as without the description (detfeed__pixels.render). */
typedef enum detfeed__render_status {
    DETFEED__RENDER_DESCRIBED = 0,
    /* An image it reads (its own, a Mosaic tile, MixUp's partner or one of
     * the partner's tiles) is not held in the cache: the RAM cache's budget
     * left it out, there is no cache, or it came from the store of recent
     * images (partner_window). */
    DETFEED__RENDER_UNCACHED = 1,
    /* A LetterBox resizes the image (validation with a rect shape smaller
     * than the load size; in training the load size always fits imgsz, but
     * it is checked): the description has no resize. */
    DETFEED__RENDER_RESIZES = 2,
    /* CutMix applies: the description has no third image. */
    DETFEED__RENDER_CUTMIX = 3,
    /* CopyPaste may apply (to the sample or a partner): the description
     * has no pasted objects. */
    DETFEED__RENDER_PASTE = 4
} detfeed__render_status;

/* How an image's canvas becomes the out_w x out_h output. */
typedef enum detfeed__render_warp {
    /* The canvas is the output, copied (it is out_w x out_h): validation's
     * LetterBox. */
    DETFEED__RENDER_COPY = 0,
    /* cv2.warpAffine by M's first two rows, INTER_LINEAR, border FILL. */
    DETFEED__RENDER_AFFINE = 1,
    /* cv2.warpPerspective by M, INTER_LINEAR, border FILL. */
    DETFEED__RENDER_PERSPECTIVE = 2
} detfeed__render_warp;

/* One tile of a canvas: a cached image at its load size, placed. */
typedef struct detfeed__render_tile {
    uint64_t index; /* the dataset index of the image (looked up in a cache) */
    int32_t w, h;   /* its load size */
    /* The canvas rectangle [x0, x1) x [y0, y1) it covers (empty: x1 <= x0
     * or y1 <= y0); always inside both the canvas and the tile. */
    int32_t x0, y0, x1, y1;
    /* The canvas position of the tile's pixel (0, 0): canvas pixel (x, y)
     * of the rectangle is tile pixel (x - ox, y - oy). */
    int32_t ox, oy;
} detfeed__render_tile;

/* An image through its geometry: the canvas (canvas_w x canvas_h of FILL,
 * then tiles[0..ntiles - 1] painted in order; they do not overlap), and
 * the warp to the output. */
typedef struct detfeed__render_image {
    /* The forward matrix (destination = M * source, row-major 3x3), the
     * float32 values RandomPerspective builds (detfeed__affine_matrix of the
     * canvas size) as OpenCV receives them, converted to double; the
     * identity for DETFEED__RENDER_COPY. */
    double M[9];
    int32_t warp; /* detfeed__render_warp */
    int32_t canvas_w, canvas_h;
    int32_t ntiles; /* 1..DETFEED__RENDER_TILES */
    detfeed__render_tile tiles[DETFEED__RENDER_TILES];
} detfeed__render_image;

/*
 * One sample's image before colour. Fixed size, no pointers (it is copied
 * to a device as it is). The image is image[0] through its geometry; with
 * mixup, image[1] (the partner) through its own, and then img * mix_ratio +
 * partner * (1 - mix_ratio) in double, truncated (detfeed__mixup_blend);
 * then flipped up-down (flipud), then left-right (fliplr). Every field is
 * set when status is DETFEED__RENDER_DESCRIBED; otherwise only status (and
 * the rest is zero).
 */
typedef struct detfeed__render {
    int32_t status; /* detfeed__render_status */
    int32_t out_w, out_h;
    uint8_t mixup, flipud, fliplr, reserved; /* 0 or 1; reserved is 0 */
    double mix_ratio;                        /* MixUp's r (the sample's weight) */
    detfeed__render_image image[2];          /* [1]: MixUp's partner */
} detfeed__render;

/* The source of a tile's pixels: the image at its load size, HWC BGR, rows
 * `stride` bytes apart. */
typedef struct detfeed__render_src {
    const uint8_t *px;
    int w, h;
    size_t stride;
} detfeed__render_src;

/* How detfeed__render_reference finds an image by dataset index: get fills
 * *src and returns DETFEED_OK, or an error that the reference returns. */
typedef struct detfeed__render_images {
    int (*get)(void *ctx, uint64_t index, detfeed__render_src *src);
    void *ctx;
} detfeed__render_images;

/* A status's words ("described", "an image is not cached", ...). */
const char *detfeed__render_status_name(int status);

/*
 * Builds the image r describes into out (out_w * out_h * 3 bytes, HWC BGR,
 * rows 3 * out_w apart) on the CPU, under the OpenCV of `st`: each canvas
 * materialized whole, warped by detfeed_warp_affine_cv /
 * detfeed_warp_perspective_cv (or copied), blended (detfeed__mixup_blend)
 * and flipped (detfeed__flip_pixels). DETFEED_EINVAL when r is not
 * described or is inconsistent (a tile outside its canvas or its image, an
 * image whose size differs from its tile's, a COPY canvas not of the
 * output's size); DETFEED_ENOMEM; the lookup's and the warp's errors.
 */
int detfeed__render_reference(const detfeed__render *r,
                              const detfeed__render_images *images,
                              const detfeed__stack *st, uint8_t *out);

#endif /* DETFEED_RENDER_H */
