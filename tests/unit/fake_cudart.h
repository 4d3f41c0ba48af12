/*
 * fake_cudart.h - the test side of a fake CUDA runtime (fake_cudart.cpp).
 *
 * A test program linked with the library's own objects (the nvcc-compiled
 * host code of src/cuda/ included) and fake_cudart.cpp instead of libcudart
 * runs the CUDA part's host code on a machine without a GPU: "device" and
 * page-locked memory are host memory, copies are memcpy, kernels are never
 * run (their launches are checked and counted), streams and events are
 * handles that are tracked. Every call is counted; a call chosen by the
 * test fails (fake_cuda_fail), so that the error paths run; what is still
 * allocated, created or registered is counted, so that a test can check
 * that everything was given back. One process can run many cases:
 * fake_cuda_reset between them.
 *
 * Streams: the library's own are the ones it creates (cudaStreamCreate*);
 * any other (NULL, the legacy default stream, or fake_cuda_consumer_stream)
 * is "foreign", a consumer's, and its calls are also counted apart.
 */
#ifndef DETFEED_FAKE_CUDART_H
#define DETFEED_FAKE_CUDART_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the fake counts as held until it is given back. */
typedef enum fake_cuda_kind {
    FAKE_CUDA_DEVICE_ALLOCS = 0, /* cudaMalloc, not yet cudaFree'd */
    FAKE_CUDA_HOST_ALLOCS = 1,   /* cudaHostAlloc, not yet freed */
    FAKE_CUDA_EVENTS = 2,        /* created, not yet destroyed */
    FAKE_CUDA_STREAMS = 3,       /* created, not yet destroyed */
    FAKE_CUDA_REGISTERED = 4,    /* cudaHostRegister'd, not yet unregistered */
    FAKE_CUDA_KINDS = 5
} fake_cuda_kind;

/* fake_cuda_fault.times: every matching call from the nth on fails. */
#define FAKE_CUDA_ALWAYS (-1)

/*
 * One injected fault: the matching calls nth .. nth + times - 1 of the
 * runtime function `fn` (its name, e.g. "cudaMalloc", "cudaEventRecord",
 * "__cudaLaunchKernel"), counted from the injection (nth 1: the next one),
 * fail with `error` (a cudaError_t; 0: the function's usual failure, out of
 * memory for the allocations). `foreign`: only calls on a foreign stream
 * match (functions that take a stream). A failed call changes nothing but
 * the thread's last error (cudaGetLastError); a failed launch is reported
 * there only, as CUDA does.
 */
typedef struct fake_cuda_fault {
    const char *fn;
    int nth;
    int times; /* 0 counts as 1; FAKE_CUDA_ALWAYS */
    int error;
    bool foreign;
} fake_cuda_fault;

/* Forgets the faults and the call counts, and sets the defaults: one
 * device, 64 GiB of free device memory, device 0 current and no last error
 * on the calling thread. What is held stays held (a leak of one case is
 * still seen by the next check). */
void fake_cuda_reset(void);

/* Stops tracking what is held now, without freeing it: after a leak was
 * reported, so that the next case starts from nothing. */
void fake_cuda_forget(void);

/* The devices cudaGetDeviceCount reports (0: cudaErrorNoDevice). */
void fake_cuda_set_devices(int n);

/* The device memory the fake has: cudaMemGetInfo reports it less what is
 * held; a cudaMalloc larger than that fails. */
void fake_cuda_set_memory(uint64_t bytes);

/* Adds a fault (up to 16 at once; a failed check beyond). */
void fake_cuda_fail(fake_cuda_fault f);

/* The nth call of fn from now fails, once, with its usual failure. */
void fake_cuda_fail_next(const char *fn, int nth);

/* Calls of fn since the reset (fn NULL: of every function); of those, on a
 * foreign stream. */
long fake_cuda_calls(const char *fn);
long fake_cuda_foreign_calls(const char *fn);

/* How many of `kind` are held now. */
int fake_cuda_live(fake_cuda_kind kind);

/* All of them: 0 when everything was given back. */
int fake_cuda_live_total(void);

/* Bytes of device memory held now. */
uint64_t fake_cuda_device_bytes(void);

/* Whether p is in device memory the fake handed out and still holds. */
bool fake_cuda_is_device(const void *p);

/* Calls that used what the fake never handed out, or gave back already (a
 * double free, a destroyed event), since the reset; *what (may be NULL)
 * receives the first one's description. */
long fake_cuda_misuse(const char **what);

/* A stream handle the library did not create, as a consumer's own (a
 * PyTorch stream); distinct for each k (0 .. 7). */
void *fake_cuda_consumer_stream(int k);

/* The counts above, one line each, to stderr (for a failed check). */
void fake_cuda_print(const char *title);

#ifdef __cplusplus
}
#endif

#endif /* DETFEED_FAKE_CUDART_H */
