/*
 * route.c - the output and colour route in effect, decided when the loader
 * opens, and the staging layout of CUDA output: a slot holds `batch` blocks
 * of colour parameters (DETFEED__CUDA_PARAM_STRIDE bytes each, in the format
 * cuda/cuda_host.h defines), then the 8-bit HWC images, copied to the device
 * in one piece and converted there.
 */
#include "route.h"

#include "cuda/cuda_host.h"
#include "data/dataset_access.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct detfeed__route {
    detfeed__route_ask ask; /* its cv pointer is not kept */
    detfeed_cv cv;          /* the OpenCV of the recipe route's warps */
    detfeed_output output;
    detfeed_route colour;
    detfeed_route staging; /* the layout the device input buffer is sized for */
    const char *why;       /* static, or why_text */
    char why_text[200];
    detfeed__cuda_route *cuda; /* CUDA output */
    _Atomic uint64_t made;     /* samples the recipe kernel made */
};

/* Bytes of a batch's image tensor at most. */
static size_t tensor_bytes(const detfeed__route_ask *a)
{
    size_t side = (size_t)a->side;
    return side * side * 3 * detfeed_dtype_size(a->dtype) * (size_t)a->batch;
}

/* CUDA output: bytes of a slot's colour parameters, which come first. */
static size_t param_bytes(const detfeed__route_ask *a)
{
    return (size_t)a->batch * DETFEED__CUDA_PARAM_STRIDE;
}

/* The recipe route: bytes of a slot's recipes, which come next. */
static size_t recipe_bytes(const detfeed__route_ask *a, detfeed_route colour)
{
    return colour == DETFEED_ROUTE_RECIPE
               ? (size_t)a->batch * sizeof(detfeed__cuda_recipe)
               : 0;
}

/* CUDA output: bytes of what one copy takes to the device at most. */
static size_t staged_bytes(const detfeed__route_ask *a, detfeed_route colour)
{
    size_t side = (size_t)a->side;
    return param_bytes(a) + recipe_bytes(a, colour) +
           side * side * 3 * (size_t)a->batch;
}

/* Where a slot's 8-bit images start. */
static size_t images_offset(const detfeed__route *r)
{
    return param_bytes(&r->ask) + recipe_bytes(&r->ask, r->colour);
}

/* The colour route: the device's only with CUDA output of a float dtype in
 * training; otherwise the reason it stays in the workers. */
static void decide_colour(detfeed__route *r)
{
    if (r->ask.colour != DETFEED_ROUTE_DEVICE || r->why != NULL)
        return;
    if (r->output != DETFEED_OUTPUT_CUDA)
        r->why = "the device colour route needs CUDA output";
    else if (r->ask.dtype == DETFEED_DTYPE_U8)
        r->why = "the device colour route needs a float dtype (u8 output is "
                 "coloured in the workers)";
    else if (!r->ask.augment)
        r->why = "validation samples take no colour";
    else
        r->colour = DETFEED_ROUTE_DEVICE;
}

/* Why CUDA output cannot be had on the device asked for before any of it is
 * taken (into r->why_text), or NULL; the CUDA part's own reasons otherwise. */
static const char *cuda_refusal(detfeed__route *r)
{
    const char *why = NULL;
    int n = detfeed_cuda_device_count(&why);
    if (n <= 0)
        return NULL; /* no CUDA at all: its own reason */
    if (r->ask.batch > DETFEED_CUDA_MAX_IMAGES)
        snprintf(r->why_text, sizeof r->why_text,
                 "CUDA output takes batches of at most %d images (batch %d)",
                 DETFEED_CUDA_MAX_IMAGES, r->ask.batch);
    else if (r->ask.device >= n)
        snprintf(r->why_text, sizeof r->why_text,
                 "cuda_device %d does not exist (this machine has %d CUDA device%s)",
                 r->ask.device, n, n == 1 ? "" : "s");
    else
        return NULL;
    return r->why_text;
}

/* CUDA output's device side: created, or the reason it was not (the same
 * bytes come in host memory then); DETFEED_ENOMEM only for host memory. */
static int open_cuda(detfeed__route *r, const detfeed__route_ask *ask)
{
    const char *refused = cuda_refusal(r);
    if (refused != NULL) {
        r->why = refused;
        return DETFEED_OK;
    }
    size_t in = staged_bytes(ask, r->staging), out = tensor_bytes(ask);
    int rc = detfeed__cuda_route_create(&r->cuda, ask->device, ask->slots, in, out,
                                        ask->cv, &r->why);
    if (rc == DETFEED_ECUDA) { /* what it asked for, with the device's reason */
        snprintf(r->why_text, sizeof r->why_text,
                 "%s (CUDA device %d: %llu bytes for the input and %d batch slots)",
                 r->why, ask->device,
                 (unsigned long long)in + (unsigned long long)ask->slots * out,
                 ask->slots);
        r->why = r->why_text;
    }
    if (rc == DETFEED_OK)
        r->output = DETFEED_OUTPUT_CUDA;
    return rc == DETFEED_ENOMEM ? rc : DETFEED_OK;
}

/* Why the recipe route cannot be had before any device memory is taken,
 * or NULL. */
static const char *recipe_refusal(const detfeed__route_ask *a)
{
    uint64_t bytes = 0;
    if (a->output != DETFEED_OUTPUT_CUDA)
        return "the device recipe route needs CUDA output";
    if (!a->augment)
        return "the device recipe route makes training samples only (validation "
               "letterboxes in the workers)";
    if (a->cache == NULL || detfeed__cache_arena(a->cache, &bytes) == NULL)
        return "the device recipe route needs the RAM cache (cache=ram) holding "
               "images";
    return NULL;
}

/* The recipe route: the cache's arena copied to the device, or the reason
 * it was not (the loader then runs the device colour route). */
static int open_recipe(detfeed__route *r, const char **why)
{
    uint64_t bytes = 0;
    const uint8_t *arena = detfeed__cache_arena(r->ask.cache, &bytes);
    int rc = detfeed__cuda_route_arena(r->cuda, arena, bytes, r->ask.recipe_cache, why);
    if (rc == DETFEED_OK)
        r->colour = DETFEED_ROUTE_RECIPE;
    return rc;
}

int detfeed__route_open(detfeed__route **out, const detfeed__route_ask *ask,
                        const char **why)
{
    *out = NULL;
    detfeed__route *r = calloc(1, sizeof *r);
    if (r == NULL) {
        *why = "out of memory";
        return DETFEED_ENOMEM;
    }
    r->ask = *ask;
    r->ask.cv = NULL;
    r->cv = *ask->cv;
    r->output = DETFEED_OUTPUT_HOST;
    r->colour = DETFEED_ROUTE_WORKER;
    bool recipe = ask->colour == DETFEED_ROUTE_RECIPE;
    if (recipe && (r->why = recipe_refusal(ask)) != NULL)
        recipe = false;
    r->staging = recipe ? DETFEED_ROUTE_RECIPE : DETFEED_ROUTE_WORKER;
    if (ask->output == DETFEED_OUTPUT_CUDA &&
        open_cuda(r, ask) == DETFEED_ENOMEM) { /* otherwise host output */
        *why = r->why;
        free(r);
        return DETFEED_ENOMEM;
    }
    if (recipe && r->output == DETFEED_OUTPUT_CUDA)
        open_recipe(r, &r->why);
    if (r->colour != DETFEED_ROUTE_RECIPE && r->ask.colour == DETFEED_ROUTE_RECIPE &&
        r->ask.dtype != DETFEED_DTYPE_U8)
        r->ask.colour = DETFEED_ROUTE_DEVICE; /* the next best, its reason kept */
    if (r->colour != DETFEED_ROUTE_RECIPE) {  /* the recipe's reason comes first */
        const char *recipe_why = r->why;
        r->why = r->output == DETFEED_OUTPUT_CUDA ? NULL : recipe_why;
        decide_colour(r);
        if (recipe_why)
            r->why = recipe_why;
    }
    *out = r;
    return DETFEED_OK;
}

void detfeed__route_close(detfeed__route *r)
{
    if (r == NULL)
        return;
    detfeed__cuda_route_destroy(r->cuda);
    free(r);
}

detfeed_output detfeed__route_output(const detfeed__route *r)
{
    return r->output;
}

detfeed_route detfeed__route_colour(const detfeed__route *r)
{
    return r->colour;
}

const char *detfeed__route_why(const detfeed__route *r)
{
    return r->why;
}

size_t detfeed__route_slot_bytes(const detfeed__route *r)
{
    return r->output == DETFEED_OUTPUT_CUDA ? staged_bytes(&r->ask, r->colour)
                                            : tensor_bytes(&r->ask);
}

uint64_t detfeed__route_device_bytes(const detfeed__route *r)
{
    if (r == NULL || r->output != DETFEED_OUTPUT_CUDA)
        return 0;
    return (uint64_t)staged_bytes(&r->ask, r->staging) +
           (uint64_t)r->ask.slots * tensor_bytes(&r->ask) +
           detfeed__cuda_route_arena_bytes(r->cuda);
}

void *detfeed__route_host_alloc(const detfeed__route *r, size_t bytes, bool *pinned,
                                const char **why)
{
    void *p = NULL;
    if (!r->ask.pin) {
        *pinned = false;
        *why = "pin_memory is 0";
        return malloc(bytes);
    }
    *pinned = detfeed__cuda_host_alloc(&p, bytes, why) == 0;
    return *pinned ? p : malloc(bytes);
}

void detfeed__route_host_free(void *p, bool pinned)
{
    if (pinned)
        detfeed__cuda_host_free(p);
    else
        free(p);
}

void detfeed__route_place(const detfeed__route *r, uint8_t *images, int pos, int w,
                          int h, detfeed__render *render, detfeed__pixels *out)
{
    if (r->output == DETFEED_OUTPUT_CUDA) {
        size_t bytes = (size_t)w * h * 3;
        *out = (detfeed__pixels){.px = images + images_offset(r) + (size_t)pos * bytes,
                                 .defer_colour = r->colour != DETFEED_ROUTE_WORKER,
                                 .render =
                                     r->colour == DETFEED_ROUTE_RECIPE ? render : NULL};
        return;
    }
    size_t plane = (size_t)w * h * detfeed_dtype_size(r->ask.dtype);
    *out = (detfeed__pixels){.px = images + (size_t)pos * 3 * plane,
                             .tensor = true,
                             .dtype = r->ask.dtype,
                             .scale = r->ask.scale};
}

/* One canvas and its warp as the kernel takes them; false when a tile is
 * not in the arena. */
static bool stage_part(const detfeed__render_image *im, int out_w, int out_h,
                       const detfeed_cache *cache, const detfeed_cv *cv,
                       detfeed__cuda_part *p)
{
    static const uint8_t fill[3] = {DETFEED__RENDER_FILL, DETFEED__RENDER_FILL,
                                    DETFEED__RENDER_FILL};
    static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    bool persp = im->warp == DETFEED__RENDER_PERSPECTIVE;
    const double *M = im->warp == DETFEED__RENDER_COPY ? identity : im->M;
    if (im->ntiles < 0 || im->ntiles > 4 ||
        detfeed__warp_one_plan(&p->warp, M, persp, cv, im->canvas_w, im->canvas_h,
                               out_w, out_h, fill) != DETFEED_OK)
        return false;
    p->canvas_w = im->canvas_w, p->canvas_h = im->canvas_h;
    p->ntiles = im->ntiles;
    memcpy(p->fill, fill, sizeof fill);
    for (int k = 0; k < im->ntiles; k++) {
        const detfeed__render_tile *t = &im->tiles[k];
        uint64_t offset;
        int w, h;
        if (!detfeed__cache_place(cache, (size_t)t->index, &offset, &w, &h) ||
            w != t->w || h != t->h)
            return false;
        p->tiles[k] = (detfeed__cuda_tile){.offset = offset,
                                           .stride = 3 * w,
                                           .x0 = t->x0,
                                           .y0 = t->y0,
                                           .x1 = t->x1,
                                           .y1 = t->y1,
                                           .ox = t->ox,
                                           .oy = t->oy};
    }
    return true;
}

int detfeed__recipe_stage(const detfeed__render *render, const detfeed_cache *cache,
                          const detfeed_cv *cv, detfeed__cuda_recipe *c)
{
    memset(c, 0, sizeof *c);
    if (render == NULL || render->status != DETFEED__RENDER_DESCRIBED)
        return DETFEED_OK; /* the worker made it */
    c->flags = DETFEED__CUDA_RECIPE_MADE |
               (render->mixup ? DETFEED__CUDA_RECIPE_MIX : 0) |
               (render->flipud ? DETFEED__CUDA_RECIPE_FLIPUD : 0) |
               (render->fliplr ? DETFEED__CUDA_RECIPE_FLIPLR : 0);
    c->mix_w0 = render->mix_ratio;
    c->mix_w1 = 1 - render->mix_ratio;
    for (int k = 0; k < (render->mixup ? 2 : 1); k++)
        if (!stage_part(&render->image[k], render->out_w, render->out_h, cache, cv,
                        &c->part[k])) {
            c->flags = 0;
            return DETFEED_EBADSTATE;
        }
    return DETFEED_OK;
}

int detfeed__route_stage_render(const detfeed__route *r, uint8_t *images, int pos,
                                const detfeed__render *render)
{
    if (r->colour != DETFEED_ROUTE_RECIPE)
        return DETFEED_OK;
    detfeed__cuda_recipe *c =
        (detfeed__cuda_recipe *)(images + param_bytes(&r->ask)) + pos;
    return detfeed__recipe_stage(render, r->ask.cache, &r->cv, c);
}

int detfeed__route_stage_colour(const detfeed__route *r, uint8_t *images, int pos,
                                const detfeed__recipe *recipe)
{
    if (r->output != DETFEED_OUTPUT_CUDA)
        return DETFEED_OK;
    uint8_t *p = images + (size_t)pos * DETFEED__CUDA_PARAM_STRIDE;
    uint8_t order = recipe->to_rgb ? 0 : DETFEED__CUDA_PARAM_BGR;
    p[DETFEED__CUDA_PARAM_FLAG] = order;
    if (r->colour == DETFEED_ROUTE_WORKER || !recipe->hsv)
        return DETFEED_OK;
    /* Colour comes before the flips in Ultralytics; the image is flipped
     * already (by the worker, or at the kernel's pixel), which moves the
     * columns that OpenCV's row tail covers when it is mirrored left-right. */
    p[DETFEED__CUDA_PARAM_FLAG] = order | DETFEED__CUDA_PARAM_COLOUR |
                                  (recipe->fliplr ? DETFEED__CUDA_PARAM_MIRRORED : 0);
    return detfeed_hsv_lut(recipe->gains[0], recipe->gains[1], recipe->gains[2],
                           (uint8_t(*)[256])p);
}

/* Images the copy must take: on the recipe route up to the last one the
 * workers made (the kernel makes the others, counted), else all n. */
static int staged_images(detfeed__route *r, const uint8_t *images, int n)
{
    if (r->colour != DETFEED_ROUTE_RECIPE)
        return n;
    const detfeed__cuda_recipe *c =
        (const detfeed__cuda_recipe *)(images + param_bytes(&r->ask));
    int last = 0;
    uint64_t made = 0;
    for (int i = 0; i < n; i++) {
        bool by_kernel = (c[i].flags & DETFEED__CUDA_RECIPE_MADE) != 0;
        made += by_kernel;
        if (!by_kernel)
            last = i + 1;
    }
    atomic_fetch_add_explicit(&r->made, made, memory_order_relaxed);
    return last;
}

int detfeed__route_submit(detfeed__route *r, int slot, const uint8_t *images, int n,
                          int h, int w, void *stream, const void **dev, void **event)
{
    size_t bytes = images_offset(r) + (size_t)staged_images(r, images, n) * h * w * 3;
    void *d = NULL;
    int rc =
        detfeed__cuda_route_submit(r->cuda, slot, images, bytes, r->ask.batch, n, h, w,
                                   r->ask.dtype, r->ask.scale, stream, &d, event);
    *dev = d;
    return rc;
}

int detfeed__route_release(detfeed__route *r, int slot, void *stream)
{
    return r->output == DETFEED_OUTPUT_CUDA
               ? detfeed__cuda_route_release(r->cuda, slot, stream)
               : DETFEED_OK;
}

int detfeed__route_copy_done(detfeed__route *r, int slot, bool wait)
{
    return r->output == DETFEED_OUTPUT_CUDA
               ? detfeed__cuda_route_copy_done(r->cuda, slot, wait) != 0
               : 1;
}

int detfeed__route_sync(detfeed__route *r)
{
    return r->cuda ? detfeed__cuda_route_sync(r->cuda) : DETFEED_OK;
}

int detfeed__route_to_host(detfeed__route *r, int slot, void *dst, size_t bytes)
{
    return detfeed__cuda_route_to_host(r->cuda, slot, dst, bytes);
}

const char *detfeed__route_error(const detfeed__route *r)
{
    return r->cuda ? detfeed__cuda_route_error(r->cuda) : "no CUDA output";
}

uint64_t detfeed__route_made(const detfeed__route *r)
{
    return atomic_load_explicit(&r->made, memory_order_relaxed);
}
