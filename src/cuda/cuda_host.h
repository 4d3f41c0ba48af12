/*
 * cuda_host.h - the CUDA part's plain C entry points used by the rest of the
 * library (internal). Built from the .cu files with CUDA, or from
 * cuda_stub.c without it, where every one reports DETFEED_ENOTSUPPORTED.
 */
#ifndef DETFEED_CUDA_HOST_H
#define DETFEED_CUDA_HOST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Page-locked host memory for batch slots (cudaHostAlloc); *why receives a
 * static reason when it fails (no CUDA build, no device, out of memory). */
int detfeed__cuda_host_alloc(void **out, size_t bytes, const char **why);
void detfeed__cuda_host_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* DETFEED_CUDA_HOST_H */
