/*
 * recipe_px.h - one output pixel of the device recipe route (before colour),
 * from a staged detfeed__cuda_recipe (cuda_host.h): host and device
 * functions, so that the kernel (color_kernel.cu) and a CPU check compute
 * the same bytes. The warps are img/warp_one.h's; MixUp's blend is
 * detfeed__mixup_blend's (aug/geometry.c) expression in double.
 * Compile with -ffp-contract=off on the host and -fmad=false in CUDA.
 */
#ifndef DETFEED_RECIPE_PX_H
#define DETFEED_RECIPE_PX_H

#include "cuda_host.h"
#include "img/warp_one.h"

/* The canvases of r's parts (part 1 only with MIX) over `arena`, the
 * memory whose byte offsets the tiles give. */
static inline DETFEED__HD void detfeed__recipe_canvases(const detfeed__cuda_recipe *r,
                                                        const uint8_t *arena,
                                                        detfeed__canvas c[2])
{
    for (int k = 0; k < 2; k++) {
        const detfeed__cuda_part *p = &r->part[k];
        c[k].w = p->canvas_w;
        c[k].h = p->canvas_h;
        c[k].n = p->ntiles < 0 ? 0 : p->ntiles < 4 ? p->ntiles : 4;
        for (int i = 0; i < 3; i++)
            c[k].fill[i] = p->fill[i];
        for (int t = 0; t < c[k].n; t++) {
            const detfeed__cuda_tile *s = &p->tiles[t];
            detfeed__canvas_tile *d = &c[k].tiles[t];
            d->px = arena + s->offset;
            d->stride = s->stride;
            d->x0 = s->x0, d->y0 = s->y0, d->x1 = s->x1, d->y1 = s->y1;
            d->ox = s->ox, d->oy = s->oy;
        }
    }
}

/* Output pixel (x, y) of r's w x h image before colour (BGR): the flips
 * undone, part 0's warp, MixUp's blend with part 1's, truncated. */
static inline DETFEED__HD void detfeed__recipe_px(const detfeed__cuda_recipe *r,
                                                  const detfeed__canvas c[2], int w,
                                                  int h, int x, int y, uint8_t px[3])
{
    uint32_t f = r->flags;
    int sx = (f & DETFEED__CUDA_RECIPE_FLIPLR) ? w - 1 - x : x;
    int sy = (f & DETFEED__CUDA_RECIPE_FLIPUD) ? h - 1 - y : y;
    detfeed__warp_one_px(&r->part[0].warp, &c[0], sx, sy, px);
    if (f & DETFEED__CUDA_RECIPE_MIX) {
        uint8_t q[3];
        detfeed__warp_one_px(&r->part[1].warp, &c[1], sx, sy, q);
        for (int k = 0; k < 3; k++)
            px[k] = (uint8_t)(px[k] * r->mix_w0 + q[k] * r->mix_w1);
    }
}

#endif /* DETFEED_RECIPE_PX_H */
