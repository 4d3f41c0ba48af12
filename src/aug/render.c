/*
 * render.c - the CPU reference of a sample's described image: plain, not
 * fast. Each canvas is made whole (fill, then the tiles), warped as
 * RandomPerspective warps it, blended as MixUp blends, flipped as
 * RandomFlip flips.
 */
#include "render.h"

#include <stdlib.h>
#include <string.h>

/* The layout a device copy relies on: no padding, no pointers. */
_Static_assert(sizeof(detfeed__render_tile) == 40, "detfeed__render_tile layout");
_Static_assert(sizeof(detfeed__render_image) == 248, "detfeed__render_image layout");
_Static_assert(sizeof(detfeed__render) == 520, "detfeed__render layout");

const char *detfeed__render_status_name(int status)
{
    switch (status) {
    case DETFEED__RENDER_DESCRIBED:
        return "described";
    case DETFEED__RENDER_UNCACHED:
        return "an image it reads is not held in the cache";
    case DETFEED__RENDER_RESIZES:
        return "a letterbox resizes the image";
    case DETFEED__RENDER_CUTMIX:
        return "CutMix applies";
    case DETFEED__RENDER_PASTE:
        return "CopyPaste may apply";
    default:
        return "unknown status";
    }
}

/* Whether tile t's rectangle lies inside its canvas and its image. */
static bool tile_fits(const detfeed__render_tile *t, int canvas_w, int canvas_h)
{
    if (t->x1 <= t->x0 || t->y1 <= t->y0)
        return true; /* covers nothing */
    return t->x0 >= 0 && t->y0 >= 0 && t->x1 <= canvas_w && t->y1 <= canvas_h &&
           t->x0 - t->ox >= 0 && t->y0 - t->oy >= 0 && t->x1 - t->ox <= t->w &&
           t->y1 - t->oy <= t->h;
}

/* Tile t painted onto the canvas (rows 3 * canvas_w apart). */
static int paint_tile(const detfeed__render_tile *t,
                      const detfeed__render_images *images, uint8_t *canvas,
                      int canvas_w, int canvas_h)
{
    if (!tile_fits(t, canvas_w, canvas_h))
        return DETFEED_EINVAL;
    if (t->x1 <= t->x0 || t->y1 <= t->y0)
        return DETFEED_OK;
    detfeed__render_src src = {0};
    int rc = images->get(images->ctx, t->index, &src);
    if (rc != DETFEED_OK)
        return rc;
    if (src.px == NULL || src.w != t->w || src.h != t->h ||
        src.stride < (size_t)src.w * 3)
        return DETFEED_EINVAL;
    size_t bytes = (size_t)(t->x1 - t->x0) * 3;
    for (int y = t->y0; y < t->y1; y++)
        memcpy(canvas + ((size_t)y * canvas_w + t->x0) * 3,
               src.px + (size_t)(y - t->oy) * src.stride + (size_t)(t->x0 - t->ox) * 3,
               bytes);
    return DETFEED_OK;
}

/* The canvas of `im` made whole into a new buffer (*canvas, the caller's to
 * free). */
static int make_canvas(const detfeed__render_image *im,
                       const detfeed__render_images *images, uint8_t **canvas)
{
    *canvas = NULL;
    if (im->canvas_w <= 0 || im->canvas_h <= 0 || im->ntiles < 1 ||
        im->ntiles > DETFEED__RENDER_TILES)
        return DETFEED_EINVAL;
    size_t bytes = (size_t)im->canvas_w * (size_t)im->canvas_h * 3;
    uint8_t *c = malloc(bytes);
    if (c == NULL)
        return DETFEED_ENOMEM;
    memset(c, DETFEED__RENDER_FILL, bytes);
    int rc = DETFEED_OK;
    for (int k = 0; k < im->ntiles && rc == DETFEED_OK; k++)
        rc = paint_tile(&im->tiles[k], images, c, im->canvas_w, im->canvas_h);
    if (rc != DETFEED_OK) {
        free(c);
        return rc;
    }
    *canvas = c;
    return DETFEED_OK;
}

/* The canvas to the out_w x out_h output: copied or warped. */
static int warp_canvas(const detfeed__render_image *im, const uint8_t *canvas,
                       const detfeed__stack *st, int out_w, int out_h, uint8_t *out)
{
    static const uint8_t border[3] = {DETFEED__RENDER_FILL, DETFEED__RENDER_FILL,
                                      DETFEED__RENDER_FILL};
    size_t in_stride = (size_t)im->canvas_w * 3, out_stride = (size_t)out_w * 3;
    switch (im->warp) {
    case DETFEED__RENDER_COPY:
        if (im->canvas_w != out_w || im->canvas_h != out_h)
            return DETFEED_EINVAL;
        memcpy(out, canvas, out_stride * (size_t)out_h);
        return DETFEED_OK;
    case DETFEED__RENDER_AFFINE:
        return detfeed_warp_affine_cv(canvas, in_stride, im->canvas_w, im->canvas_h,
                                      out, out_stride, out_w, out_h, im->M, border,
                                      &st->cv);
    case DETFEED__RENDER_PERSPECTIVE:
        return detfeed_warp_perspective_cv(canvas, in_stride, im->canvas_w,
                                           im->canvas_h, out, out_stride, out_w, out_h,
                                           im->M, border, &st->cv);
    default:
        return DETFEED_EINVAL;
    }
}

/* One image of the description through its geometry into out. */
static int render_image(const detfeed__render_image *im,
                        const detfeed__render_images *images, const detfeed__stack *st,
                        int out_w, int out_h, uint8_t *out)
{
    uint8_t *canvas;
    int rc = make_canvas(im, images, &canvas);
    if (rc == DETFEED_OK)
        rc = warp_canvas(im, canvas, st, out_w, out_h, out);
    free(canvas);
    return rc;
}

int detfeed__render_reference(const detfeed__render *r,
                              const detfeed__render_images *images,
                              const detfeed__stack *st, uint8_t *out)
{
    if (r == NULL || images == NULL || images->get == NULL || st == NULL ||
        out == NULL || r->status != DETFEED__RENDER_DESCRIBED || r->out_w <= 0 ||
        r->out_h <= 0)
        return DETFEED_EINVAL;
    int rc = render_image(&r->image[0], images, st, r->out_w, r->out_h, out);
    size_t bytes = (size_t)r->out_w * (size_t)r->out_h * 3;
    if (rc == DETFEED_OK && r->mixup) {
        uint8_t *partner = malloc(bytes);
        rc = partner
                 ? render_image(&r->image[1], images, st, r->out_w, r->out_h, partner)
                 : DETFEED_ENOMEM;
        if (rc == DETFEED_OK)
            detfeed__mixup_blend(out, partner, bytes, r->mix_ratio);
        free(partner);
    }
    if (rc == DETFEED_OK) {
        detfeed__img im = {.px = out, .w = r->out_w, .h = r->out_h, .cap = bytes};
        detfeed__flip_pixels(&im, r->flipud, r->fliplr);
    }
    return rc;
}
