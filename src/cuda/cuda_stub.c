/*
 * cuda_stub.c - linked instead of the CUDA part when the build has no nvcc.
 * Every entry point reports that CUDA is not built; none pretends to work.
 */
#include "cuda_host.h"
#include "detfeed.h"

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
