/*
 * route.c - the output and colour route in effect, decided when the loader
 * opens, and the staging layout of CUDA output: a slot holds `batch` blocks
 * of colour parameters (DETFEED__CUDA_PARAM_STRIDE bytes each, in the format
 * cuda/cuda_host.h defines), then the 8-bit HWC images, copied to the device
 * in one piece and converted there.
 */
#include "route.h"

#include "cuda/cuda_host.h"

#include <stdlib.h>
#include <string.h>

struct detfeed__route {
    detfeed__route_ask ask; /* its cv pointer is not kept */
    detfeed_output output;
    detfeed_route colour;
    const char *why;
    detfeed__cuda_route *cuda; /* CUDA output */
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

/* CUDA output: bytes of what one copy takes to the device. */
static size_t staged_bytes(const detfeed__route_ask *a)
{
    size_t side = (size_t)a->side;
    return param_bytes(a) + side * side * 3 * (size_t)a->batch;
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
    r->output = DETFEED_OUTPUT_HOST;
    r->colour = DETFEED_ROUTE_WORKER;
    if (ask->output == DETFEED_OUTPUT_CUDA) {
        int rc = detfeed__cuda_route_create(&r->cuda, ask->device, ask->slots,
                                            staged_bytes(ask), tensor_bytes(ask),
                                            ask->cv, &r->why);
        if (rc == DETFEED_ENOMEM) {
            *why = r->why;
            free(r);
            return rc;
        }
        if (rc == DETFEED_OK) /* otherwise the same bytes, in host memory */
            r->output = DETFEED_OUTPUT_CUDA;
    }
    decide_colour(r);
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
    return r->output == DETFEED_OUTPUT_CUDA ? staged_bytes(&r->ask)
                                            : tensor_bytes(&r->ask);
}

uint64_t detfeed__route_device_bytes(const detfeed__route *r)
{
    if (r == NULL || r->output != DETFEED_OUTPUT_CUDA)
        return 0;
    return (uint64_t)staged_bytes(&r->ask) +
           (uint64_t)r->ask.slots * tensor_bytes(&r->ask);
}

void *detfeed__route_host_alloc(size_t bytes, bool *pinned, const char **why)
{
    void *p = NULL;
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
                          int h, detfeed__pixels *out)
{
    if (r->output == DETFEED_OUTPUT_CUDA) {
        size_t bytes = (size_t)w * h * 3;
        *out =
            (detfeed__pixels){.px = images + param_bytes(&r->ask) + (size_t)pos * bytes,
                              .defer_colour = r->colour == DETFEED_ROUTE_DEVICE};
        return;
    }
    size_t plane = (size_t)w * h * detfeed_dtype_size(r->ask.dtype);
    *out = (detfeed__pixels){.px = images + (size_t)pos * 3 * plane,
                             .tensor = true,
                             .dtype = r->ask.dtype,
                             .scale = r->ask.scale};
}

int detfeed__route_stage_colour(const detfeed__route *r, uint8_t *images, int pos,
                                const detfeed__recipe *recipe)
{
    if (r->output != DETFEED_OUTPUT_CUDA)
        return DETFEED_OK;
    uint8_t *p = images + (size_t)pos * DETFEED__CUDA_PARAM_STRIDE;
    p[DETFEED__CUDA_PARAM_FLAG] = 0;
    if (r->colour != DETFEED_ROUTE_DEVICE || !recipe->hsv)
        return DETFEED_OK;
    /* Colour comes before the flips in Ultralytics; the worker has flipped
     * the image already, which moves the columns that OpenCV's row tail
     * covers when the image is mirrored left-right. */
    p[DETFEED__CUDA_PARAM_FLAG] = DETFEED__CUDA_PARAM_COLOUR |
                                  (recipe->fliplr ? DETFEED__CUDA_PARAM_MIRRORED : 0);
    return detfeed_hsv_lut(recipe->gains[0], recipe->gains[1], recipe->gains[2],
                           (uint8_t(*)[256])p);
}

int detfeed__route_submit(detfeed__route *r, int slot, const uint8_t *images, int n,
                          int h, int w, void *stream, const void **dev, void **event)
{
    size_t bytes = param_bytes(&r->ask) + (size_t)n * h * w * 3;
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
