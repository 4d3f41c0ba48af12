/*
 * cuda_info.cu - device discovery. The CUDA part of libdetfeed is only ever
 * reached through the plain C functions declared in detfeed_cuda.h.
 */
#include "cuda_host.h"
#include "detfeed_cuda.h"

#include <cuda_runtime.h>

extern "C" int detfeed_cuda_built(void)
{
    return 1;
}

extern "C" int detfeed_cuda_device_count(const char **why)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* clear the sticky error */
        if (why)
            *why = e == cudaErrorNoDevice ? "no CUDA device found"
                   : e == cudaErrorInsufficientDriver
                       ? "the CUDA driver is missing or too old"
                       : "the CUDA runtime could not be initialised";
        return 0;
    }
    if (n == 0 && why)
        *why = "no CUDA device found";
    return n;
}

extern "C" int detfeed__cuda_host_alloc(void **out, size_t bytes, const char **why)
{
    *out = NULL;
    if (detfeed_cuda_device_count(why) == 0)
        return DETFEED_ENOTSUPPORTED;
    cudaError_t e = cudaHostAlloc(out, bytes, cudaHostAllocPortable);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        *out = NULL;
        if (why)
            *why = "cudaHostAlloc failed (page-locked memory exhausted?)";
        return DETFEED_ECUDA;
    }
    return DETFEED_OK;
}

extern "C" void detfeed__cuda_host_free(void *p)
{
    if (p)
        cudaFreeHost(p);
}
