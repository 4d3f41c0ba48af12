/*
 * cuda_host.h - the CUDA part's plain C entry points used by the rest of the
 * library (internal). Built from the .cu files with CUDA, or from
 * cuda_stub.c without it, where every one reports DETFEED_ENOTSUPPORTED.
 */
#ifndef DETFEED_CUDA_HOST_H
#define DETFEED_CUDA_HOST_H

#include "detfeed_cuda.h"
#include "img/warp_one.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The staging format of the colour parameters (the `params` of
 * detfeed_cuda_color_convert in detfeed_cuda.h, and the first part of what
 * feed/route.c stages for CUDA output): DETFEED__CUDA_PARAM_STRIDE bytes per
 * image, its three RandomHSV tables as detfeed_hsv_lut writes them (H, S, V,
 * 256 bytes each), then at DETFEED__CUDA_PARAM_FLAG one byte: bit 0
 * (DETFEED__CUDA_PARAM_COLOUR) set to colour the image, clear to convert it
 * only; bit 1 (DETFEED__CUDA_PARAM_MIRRORED) set when the image was flipped
 * left-right after its colour step, so that column x takes the HSV->BGR
 * formula of column width - 1 - x; bit 2 (DETFEED__CUDA_PARAM_BGR) set
 * when Format's bgr gate keeps the channels, so that the planes come out
 * B, G, R instead of R, G, B. Private: tests and benchmarks of the
 * library's own source use it.
 */
#define DETFEED__CUDA_PARAM_STRIDE   1024
#define DETFEED__CUDA_PARAM_FLAG     768
#define DETFEED__CUDA_PARAM_COLOUR   1u
#define DETFEED__CUDA_PARAM_MIRRORED 2u
#define DETFEED__CUDA_PARAM_BGR      4u

/*
 * The device recipe route's staging of one sample (after the batch's colour
 * parameters): how the kernel makes the sample's 8-bit image itself from
 * the cache images held in device memory (the mirror of the RAM cache's
 * arena), or that the worker staged the image (flags without
 * DETFEED__CUDA_RECIPE_MADE). The image before colour is, at each output
 * pixel (x, y), the pixel (x', y') of the warp of part 0's canvas, where
 * x' = w - 1 - x with FLIPLR (else x) and y' likewise with FLIPUD; with MIX,
 * blended with part 1's as (uint8)(p0 * mix_w0 + p1 * mix_w1) in double.
 */
#define DETFEED__CUDA_RECIPE_MADE   1u /* made by the kernel from the parts */
#define DETFEED__CUDA_RECIPE_MIX    2u /* MixUp: part 1 blended in */
#define DETFEED__CUDA_RECIPE_FLIPUD 4u
#define DETFEED__CUDA_RECIPE_FLIPLR 8u

/* A canvas tile: an image of the arena. */
typedef struct detfeed__cuda_tile {
    uint64_t offset; /* byte offset of the tile's pixel (0, 0) in the arena */
    int32_t stride;  /* bytes per row */
    int32_t x0, y0, x1, y1, ox, oy; /* as detfeed__canvas_tile (warp_one.h) */
} detfeed__cuda_tile;

/* One warp of a canvas of up to four tiles. */
typedef struct detfeed__cuda_part {
    detfeed__warp_one warp;
    int32_t canvas_w, canvas_h, ntiles;
    uint8_t fill[3];
    detfeed__cuda_tile tiles[4];
} detfeed__cuda_part;

typedef struct detfeed__cuda_recipe {
    uint32_t flags; /* DETFEED__CUDA_RECIPE_* */
    double mix_w0, mix_w1;
    detfeed__cuda_part part[2];
} detfeed__cuda_recipe;

/* Page-locked host memory for batch slots (cudaHostAlloc); *why receives a
 * static reason when it fails (no CUDA build, no device, out of memory). */
int detfeed__cuda_host_alloc(void **out, size_t bytes, const char **why);
void detfeed__cuda_host_free(void *p);

/*
 * The device side of a loader's CUDA output: its own stream, one device
 * input buffer (a batch's colour parameters and 8-bit images, as one copy),
 * and per batch slot an output buffer and three events (copied, ready,
 * consumed). Every function makes `device` current for its calls and puts
 * the caller's current device back.
 */
typedef struct detfeed__cuda_route detfeed__cuda_route;

/* Creates it on `device` for `slots` slots of in_bytes in and out_bytes out;
 * its kernel colours as OpenCV `cv` does (resolved here, once). On failure
 * *why (static) says why: no CUDA build, no such device, an unknown stack,
 * out of device memory. */
int detfeed__cuda_route_create(detfeed__cuda_route **out, int device, int slots,
                               size_t in_bytes, size_t out_bytes, const detfeed_cv *cv,
                               const char **why);
void detfeed__cuda_route_destroy(detfeed__cuda_route *r);

/* The recipe route: gives the kernel the RAM cache's arena (`bytes` at
 * `host`, which must outlive the route), once, at open, `where` a
 * detfeed_recipe_cache: copied into device memory, or page-locked and
 * mapped in place; from then on submit reads a slot as colour parameters,
 * then `capacity` detfeed__cuda_recipe, then the images the workers made,
 * and its kernel makes the other images from the arena. Fails (*why,
 * static, says why) when the device copy does not fit (DETFEED_ENOMEM) or
 * the memory cannot be registered (DETFEED_ECUDA). */
int detfeed__cuda_route_arena(detfeed__cuda_route *r, const void *host, uint64_t bytes,
                              int where, const char **why);

/* Bytes of device memory the arena's copy holds (0: none, or mapped). */
uint64_t detfeed__cuda_route_arena_bytes(const detfeed__cuda_route *r);

/* Batch `slot`: one asynchronous copy of `bytes` from the page-locked host
 * memory `host` (colour parameters for up to `capacity` images, then the n
 * images of h x w, HWC BGR), the kernel into the slot's output buffer
 * (waiting for the consumer's release of it first), the events; `consumer`
 * (a cudaStream_t, NULL: the legacy default stream) waits for the result.
 * *dev receives the output, *ready the event that marks it done. */
int detfeed__cuda_route_submit(detfeed__cuda_route *r, int slot, const void *host,
                               size_t bytes, int capacity, int n, int h, int w,
                               detfeed_dtype dtype, detfeed_scale scale, void *consumer,
                               void **dev, void **ready);

/* Records, on `consumer`, that the slot's output may be overwritten once
 * the work submitted there so far is done. Never blocks the caller (the
 * slot's host memory may still be read by its copy: see
 * detfeed__cuda_route_copy_done), except where CUDA refuses the record (a
 * stream of another device, a destroyed one): then it waits for that work
 * on the host (the stream's, or the device's), the slot is released all the
 * same, and it returns DETFEED_ECUDA with the reason. */
int detfeed__cuda_route_release(detfeed__cuda_route *r, int slot, void *consumer);

/* Whether the slot's last copy has read its host memory (1) or not yet (0),
 * without blocking (cudaEventQuery); with `wait`, blocks until it has. A
 * slot never submitted is done. A failure is recorded as the route's error
 * and counts as done (DETFEED_ECUDA, non-zero). Consumer's thread only. */
int detfeed__cuda_route_copy_done(detfeed__cuda_route *r, int slot, bool wait);

/* Waits for everything submitted (a new epoch refills every slot). */
int detfeed__cuda_route_sync(detfeed__cuda_route *r);

/* Copies `bytes` of slot's output to host memory `dst`, once it is ready. */
int detfeed__cuda_route_to_host(detfeed__cuda_route *r, int slot, void *dst,
                                size_t bytes);

/* The reason of the last failed call (static), for error messages. */
const char *detfeed__cuda_route_error(const detfeed__cuda_route *r);

#ifdef __cplusplus
}
#endif

#endif /* DETFEED_CUDA_HOST_H */
