/*
 * route.h - where batch images go and where colour runs (internal): the
 * output and colour route in effect, decided once when the loader opens,
 * and the CUDA staging of a slot. The only part of feed that talks to the
 * CUDA host header.
 */
#ifndef DETFEED_ROUTE_H
#define DETFEED_ROUTE_H

#include "aug/augment.h"
#include "cuda/cuda_host.h"

typedef struct detfeed__route detfeed__route;

/* What the loader asks for, and what the route's buffers are sized for. */
typedef struct detfeed__route_ask {
    detfeed_output output;
    detfeed_route colour;
    int device; /* the CUDA device of CUDA output */
    int slots;  /* batch slots (prefetch) */
    int batch;  /* images per batch at most */
    int side;   /* the largest image side a batch can hold */
    detfeed_dtype dtype;
    detfeed_scale scale;
    bool augment;         /* validation samples take no colour */
    const detfeed_cv *cv; /* the OpenCV whose colour the kernel follows */
    /* The recipe route: the filled RAM cache whose arena the device holds
     * (NULL: none, and no recipe route). */
    const detfeed_cache *cache;
    int recipe_cache; /* detfeed_recipe_cache: where the kernel reads it */
    bool pin;         /* page-lock the slots' host memory where a device is */
} detfeed__route_ask;

/* Decides the route in effect for `ask` and, for CUDA output, sets up the
 * device side (the recipe route: the cache's arena copied to the device).
 * A route that cannot be had falls back (recipe to device colour, CUDA to
 * host output, device to worker colour) with the reason in
 * detfeed__route_why; only a lack of host memory fails: DETFEED_ENOMEM,
 * with the reason in *why (static). */
int detfeed__route_open(detfeed__route **out, const detfeed__route_ask *ask,
                        const char **why);
/* Frees it; waits for no copy (the caller synchronises first). NULL: no-op. */
void detfeed__route_close(detfeed__route *r);

detfeed_output detfeed__route_output(const detfeed__route *r);
detfeed_route detfeed__route_colour(const detfeed__route *r);
/* Why the route differs from what was asked for, or NULL (static). */
const char *detfeed__route_why(const detfeed__route *r);

/* Bytes of one slot's images in host memory: the tensor, or with CUDA
 * output what is staged for the device (colour parameters, 8-bit images). */
size_t detfeed__route_slot_bytes(const detfeed__route *r);
/* Bytes of device memory held (0 without CUDA output). */
uint64_t detfeed__route_device_bytes(const detfeed__route *r);

/* Host memory for a slot: page-locked when the route asks for it and a
 * CUDA device is there (*pinned true), else pageable with the reason in
 * *why (static). NULL: out of memory. */
void *detfeed__route_host_alloc(const detfeed__route *r, size_t bytes, bool *pinned,
                                const char **why);
void detfeed__route_host_free(void *p, bool pinned);

/* Where the image at position `pos` of a slot's `images` goes, for a
 * sample of w x h: on host output the consumer's tensor (CHW, RGB, the
 * dtype and scale asked for); with CUDA output the 8-bit image, as made,
 * in the staging area, colour left undone when the device colours it. On
 * the recipe route the image is described in *render instead where it can
 * be (render.h), else made there. */
void detfeed__route_place(const detfeed__route *r, uint8_t *images, int pos, int w,
                          int h, detfeed__render *render, detfeed__pixels *out);

/* The kernel's recipe of one described image (its tiles found in `cache`'s
 * arena, its warps planned for `cv`) into *c; a NULL or undescribed render
 * stages "made by the worker" (flags 0). DETFEED_EBADSTATE (flags 0) when
 * a tile is not in the arena or a warp cannot be planned. */
int detfeed__recipe_stage(const detfeed__render *render, const detfeed_cache *cache,
                          const detfeed_cv *cv, detfeed__cuda_recipe *c);

/* The recipe route: stages the kernel's recipe of the image at `pos` from
 * its description (the image is made on the device), or marks it as made
 * by the worker when `render` is NULL or not described. DETFEED_OK on the
 * other routes (nothing to stage); DETFEED_EBADSTATE when a described image
 * is not in the arena (the description and the arena disagree). */
int detfeed__route_stage_render(const detfeed__route *r, uint8_t *images, int pos,
                                const detfeed__render *render);

/* CUDA output: the colour parameters of the image at `pos` (its recipe's
 * gains as the kernel's tables when the device colours it, else none);
 * DETFEED_OK without CUDA output. */
int detfeed__route_stage_colour(const detfeed__route *r, uint8_t *images, int pos,
                                const detfeed__recipe *recipe);

/* CUDA output: the device side of slot `slot` (the n images of h x w staged
 * in `images`), ordered before the work the consumer submits on `stream`
 * afterwards; *dev receives the tensor, *event its completion. */
int detfeed__route_submit(detfeed__route *r, int slot, const uint8_t *images, int n,
                          int h, int w, void *stream, const void **dev, void **event);
/* CUDA output: the slot's output may be reused after the work on `stream`
 * so far; never blocks (see detfeed__route_copy_done for the refill). */
int detfeed__route_release(detfeed__route *r, int slot, void *stream);
/* Whether the slot's last copy has read its staging, so that workers may
 * refill it: 1 yes (always on host output), 0 not yet; never blocks. With
 * `wait`, blocks until it has (then 1). A failed copy counts as done (the
 * error is the route's and surfaces at the next submit). */
int detfeed__route_copy_done(detfeed__route *r, int slot, bool wait);
/* CUDA output: waits for everything submitted (an epoch refills every slot). */
int detfeed__route_sync(detfeed__route *r);
/* Copies `bytes` of slot's device tensor to host memory `dst`. */
int detfeed__route_to_host(detfeed__route *r, int slot, void *dst, size_t bytes);
/* Samples the recipe route's kernel has made (submitted so far). */
uint64_t detfeed__route_made(const detfeed__route *r);
/* The reason of the last failed CUDA call (static), for messages. */
const char *detfeed__route_error(const detfeed__route *r);

#endif /* DETFEED_ROUTE_H */
