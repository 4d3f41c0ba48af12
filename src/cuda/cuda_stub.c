/*
 * cuda_stub.c - linked instead of the CUDA part when the build has no nvcc.
 * Every entry point reports that CUDA is not built; none pretends to work.
 */
#include "cuda_host.h"
#include "detfeed_cuda.h"

#include <stddef.h>

int detfeed_cuda_built(void)
{
    return 0;
}

int detfeed_cuda_device_count(const char **why)
{
    if (why)
        *why = "this build of detfeed has no CUDA support";
    return 0;
}

int detfeed__cuda_host_alloc(void **out, size_t bytes, const char **why)
{
    (void)bytes;
    *out = NULL;
    if (why)
        *why = "this build of detfeed has no CUDA support";
    return DETFEED_ENOTSUPPORTED;
}

void detfeed__cuda_host_free(void *p)
{
    (void)p;
}

int detfeed_cuda_color_convert(const uint8_t *src, int n, int width, int height,
                               const uint8_t *params, const detfeed_cv *cv, void *dst,
                               detfeed_dtype dtype, detfeed_scale scale, void *stream)
{
    (void)src, (void)n, (void)width, (void)height, (void)params, (void)cv, (void)dst,
        (void)dtype, (void)scale, (void)stream;
    return DETFEED_ENOTSUPPORTED;
}

int detfeed__cuda_route_create(detfeed__cuda_route **out, int device, int slots,
                               size_t in_bytes, size_t out_bytes, const detfeed_cv *cv,
                               const char **why)
{
    (void)device, (void)slots, (void)in_bytes, (void)out_bytes, (void)cv;
    *out = NULL;
    *why = "this build of detfeed has no CUDA support";
    return DETFEED_ENOTSUPPORTED;
}

/* Unreachable without a route; present so that the library links. */
void detfeed__cuda_route_destroy(detfeed__cuda_route *r)
{
    (void)r;
}

int detfeed__cuda_route_submit(detfeed__cuda_route *r, int slot, const void *host,
                               size_t bytes, int capacity, int n, int h, int w,
                               detfeed_dtype dtype, detfeed_scale scale, void *consumer,
                               void **dev, void **ready)
{
    (void)r, (void)slot, (void)host, (void)bytes, (void)capacity, (void)n, (void)h,
        (void)w, (void)dtype, (void)scale, (void)consumer, (void)dev, (void)ready;
    return DETFEED_ENOTSUPPORTED;
}

int detfeed__cuda_route_release(detfeed__cuda_route *r, int slot, void *consumer)
{
    (void)r, (void)slot, (void)consumer;
    return DETFEED_ENOTSUPPORTED;
}

int detfeed__cuda_route_copy_done(detfeed__cuda_route *r, int slot, bool wait)
{
    (void)r, (void)slot, (void)wait;
    return 1;
}

int detfeed__cuda_route_sync(detfeed__cuda_route *r)
{
    (void)r;
    return DETFEED_ENOTSUPPORTED;
}

int detfeed__cuda_route_to_host(detfeed__cuda_route *r, int slot, void *dst,
                                size_t bytes)
{
    (void)r, (void)slot, (void)dst, (void)bytes;
    return DETFEED_ENOTSUPPORTED;
}

const char *detfeed__cuda_route_error(const detfeed__cuda_route *r)
{
    (void)r;
    return "this build of detfeed has no CUDA support";
}

int detfeed__cuda_route_arena(detfeed__cuda_route *r, const void *host, uint64_t bytes,
                              int where, const char **why)
{
    (void)r, (void)host, (void)bytes, (void)where;
    *why = "this build of detfeed has no CUDA support";
    return DETFEED_ENOTSUPPORTED;
}

uint64_t detfeed__cuda_route_arena_bytes(const detfeed__cuda_route *r)
{
    (void)r;
    return 0;
}
