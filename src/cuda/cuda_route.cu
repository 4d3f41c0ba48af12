/*
 * cuda_route.cu - the device side of a loader's CUDA output (see
 * cuda_host.h): its stream, buffers and the events that order the copy, the
 * kernel and the consumer's stream. Nothing is allocated per batch.
 */
#include "color_kernel.cuh"
#include "cuda_host.h"

#include <cuda_runtime.h>
#include <stdlib.h>

typedef struct route_slot {
    void *out;
    cudaEvent_t copied, ready, consumed;
    bool submitted;
} route_slot;

struct detfeed__cuda_route {
    int device, slots;
    size_t in_bytes, out_bytes;
    detfeed__hsv_stack stack; /* the reference stack of the colour kernel */
    /* The kernel's one-wave block count for `wave_dtype`, asked at the first
     * submit (0: not yet), not at every launch. */
    int64_t wave;
    detfeed_dtype wave_dtype;
    cudaStream_t stream;
    uint8_t *in;
    /* The recipe route: the RAM cache's arena in device memory (NULL: the
     * colour route), and the recipe kernel's wave, as above. */
    uint8_t *arena;
    uint64_t arena_bytes; /* of a device copy (0: mapped host memory) */
    void *registered;     /* the host arena when mapped, unregistered at destroy */
    int64_t recipe_wave;
    detfeed_dtype recipe_wave_dtype;
    route_slot *slot;
    const char *error;
    /* A release or copy_done whose way back to the caller's device failed:
     * the next submit, sync or copy to the host reports it. */
    bool stranded;
};

/* Makes r's device current for the scope of one call. */
typedef struct device_scope {
    int previous;
    bool restore;
} device_scope;

static cudaError_t enter(const detfeed__cuda_route *r, device_scope *d)
{
    d->restore = false;
    cudaError_t e = cudaGetDevice(&d->previous);
    if (e != cudaSuccess || d->previous == r->device)
        return e; /* no device current: the calls would go to another one */
    e = cudaSetDevice(r->device);
    d->restore = e == cudaSuccess;
    return e;
}

/* Makes the caller's device current again; false when that failed (the
 * calling thread is left on r's device; the failure is cleared from the
 * thread's last error, where the next launch's check would find it). */
static bool leave(const device_scope *d)
{
    if (!d->restore || cudaSetDevice(d->previous) == cudaSuccess)
        return true;
    (void)cudaGetLastError();
    return false;
}

/* Records a failed CUDA call's reason; returns DETFEED_ECUDA. */
static int failed(detfeed__cuda_route *r, cudaError_t e)
{
    (void)cudaGetLastError(); /* clear a non-sticky error */
    r->error = cudaGetErrorString(e);
    return DETFEED_ECUDA;
}

/* Why a call failed whose work was done but after which the caller's device
 * could not be made current again. */
static const char not_back_why[] =
    "the calling thread's CUDA device could not be made current again (cudaSetDevice "
    "failed)";

/* Records that reason; returns DETFEED_ECUDA (leave cleared the failure
 * from the thread's last error). */
static int not_back(detfeed__cuda_route *r)
{
    r->error = not_back_why;
    return DETFEED_ECUDA;
}

/* leave(d) for a submit, sync or copy to the host: false when the caller's
 * device could not be made current again, now or at a release or copy_done
 * since the last of these. */
static bool back_home(detfeed__cuda_route *r, const device_scope *d)
{
    bool back = leave(d) && !r->stranded;
    r->stranded = false;
    return back;
}

extern "C" const char *detfeed__cuda_route_error(const detfeed__cuda_route *r)
{
    return r && r->error ? r->error : "no CUDA error";
}

static cudaError_t slot_init(route_slot *s, size_t out_bytes)
{
    cudaError_t e = cudaMalloc(&s->out, out_bytes);
    unsigned flags = cudaEventDisableTiming;
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&s->copied, flags);
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&s->ready, flags);
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&s->consumed, flags);
    return e;
}

static void slot_free(route_slot *s)
{
    if (s->out)
        cudaFree(s->out);
    if (s->copied)
        cudaEventDestroy(s->copied);
    if (s->ready)
        cudaEventDestroy(s->ready);
    if (s->consumed)
        cudaEventDestroy(s->consumed);
}

extern "C" void detfeed__cuda_route_destroy(detfeed__cuda_route *r)
{
    if (r == nullptr)
        return;
    device_scope d;
    enter(r, &d);
    if (r->stream)
        cudaStreamSynchronize(r->stream);
    for (int i = 0; r->slot && i < r->slots; i++)
        slot_free(&r->slot[i]);
    if (r->in)
        cudaFree(r->in);
    if (r->registered)
        cudaHostUnregister(r->registered);
    else if (r->arena)
        cudaFree(r->arena);
    if (r->stream)
        cudaStreamDestroy(r->stream);
    (void)leave(&d); /* nothing to report it to */
    free(r->slot);
    free(r);
}

/* Whether `device` names a usable device; *why says why not. */
static bool device_ok(int device, const char **why)
{
    int n = detfeed_cuda_device_count(why);
    if (n == 0)
        return false;
    if (device < 0 || device >= n) {
        *why = "the CUDA device asked for does not exist";
        return false;
    }
    return true;
}

extern "C" int detfeed__cuda_route_create(detfeed__cuda_route **out, int device,
                                          int slots, size_t in_bytes, size_t out_bytes,
                                          const detfeed_cv *cv, const char **why)
{
    *out = nullptr;
    detfeed__hsv_stack stack;
    if (detfeed__hsv_stack_of(cv, &stack) != DETFEED_OK) {
        *why = "unknown OpenCV reference stack";
        return DETFEED_EINVAL;
    }
    if (!device_ok(device, why))
        return DETFEED_ENOTSUPPORTED;
    detfeed__cuda_route *r = (detfeed__cuda_route *)calloc(1, sizeof *r);
    route_slot *sl = (route_slot *)calloc((size_t)slots, sizeof *sl);
    if (r == nullptr || sl == nullptr) {
        free(r);
        free(sl);
        *why = "out of memory";
        return DETFEED_ENOMEM;
    }
    r->device = device;
    r->slots = slots;
    r->in_bytes = in_bytes;
    r->out_bytes = out_bytes;
    r->stack = stack;
    r->slot = sl;
    device_scope d;
    cudaError_t e = enter(r, &d);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaMalloc(&r->in, in_bytes);
    for (int i = 0; e == cudaSuccess && i < slots; i++)
        e = slot_init(&r->slot[i], out_bytes);
    bool back = leave(&d);
    if (e != cudaSuccess || !back) {
        (void)cudaGetLastError();
        *why = e == cudaSuccess                 ? not_back_why
               : e == cudaErrorMemoryAllocation ? "out of CUDA device memory"
                                                : cudaGetErrorString(e);
        detfeed__cuda_route_destroy(r);
        return DETFEED_ECUDA;
    }
    *out = r;
    return DETFEED_OK;
}

/* Asks the wave of the kernel `ask` once per dtype into *wave. */
static int wave_for(int (*ask)(detfeed_dtype, int64_t *), detfeed_dtype dtype,
                    int64_t *wave, detfeed_dtype *wave_dtype)
{
    if (*wave != 0 && *wave_dtype == dtype)
        return DETFEED_OK;
    int rc = ask(dtype, wave);
    *wave_dtype = dtype;
    if (rc != DETFEED_OK)
        *wave = 0; /* asked again at the next submit */
    return rc;
}

/* The colour route's kernel over the staged input (parameters, images). */
static int convert_colour(detfeed__cuda_route *r, int capacity, int n, int h, int w,
                          detfeed_dtype dtype, detfeed_scale scale, void *out)
{
    size_t params = (size_t)capacity * DETFEED__CUDA_PARAM_STRIDE;
    int rc = wave_for(detfeed__cuda_color_wave, dtype, &r->wave, &r->wave_dtype);
    return rc != DETFEED_OK
               ? rc
               : detfeed__cuda_color_convert_stack(r->in + params, n, w, h, r->in,
                                                   &r->stack, out, dtype, scale,
                                                   r->wave, r->stream);
}

/* The recipe route's kernel over the staged input (parameters, recipes,
 * images the workers made). */
static int convert_recipes(detfeed__cuda_route *r, int capacity, int n, int h, int w,
                           detfeed_dtype dtype, detfeed_scale scale, void *out)
{
    size_t params = (size_t)capacity * DETFEED__CUDA_PARAM_STRIDE;
    size_t recipes = (size_t)capacity * sizeof(detfeed__cuda_recipe);
    int rc = wave_for(detfeed__cuda_recipe_wave, dtype, &r->recipe_wave,
                      &r->recipe_wave_dtype);
    return rc != DETFEED_OK
               ? rc
               : detfeed__cuda_recipe_convert_stack(
                     r->in + params + recipes, n, w, h, r->in,
                     (const detfeed__cuda_recipe *)(r->in + params), r->arena,
                     &r->stack, out, dtype, scale, r->recipe_wave, r->stream);
}

/* The arena copied into device memory. */
static cudaError_t arena_copy(detfeed__cuda_route *r, const void *host, size_t bytes)
{
    cudaError_t e = cudaMalloc(&r->arena, bytes);
    if (e == cudaSuccess)
        e = cudaMemcpy(r->arena, host, bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess && r->arena) {
        cudaFree(r->arena);
        r->arena = nullptr;
    }
    if (e == cudaSuccess)
        r->arena_bytes = bytes;
    return e;
}

/* The arena page-locked and mapped in place: the kernel reads host memory. */
static cudaError_t arena_map(detfeed__cuda_route *r, const void *host, size_t bytes)
{
    void *p = const_cast<void *>(host);
    cudaError_t e =
        cudaHostRegister(p, bytes, cudaHostRegisterMapped | cudaHostRegisterReadOnly);
    void *dev = nullptr;
    if (e == cudaSuccess && (e = cudaHostGetDevicePointer(&dev, p, 0)) != cudaSuccess)
        cudaHostUnregister(p);
    if (e == cudaSuccess) {
        r->arena = (uint8_t *)dev;
        r->registered = p;
    }
    return e;
}

/* AUTO's rule: the copy when it takes at most half of the free memory. */
static bool copy_fits(size_t bytes)
{
    size_t free_bytes = 0, total = 0;
    return cudaMemGetInfo(&free_bytes, &total) == cudaSuccess &&
           bytes <= free_bytes / 2;
}

extern "C" int detfeed__cuda_route_arena(detfeed__cuda_route *r, const void *host,
                                         uint64_t bytes, int where, const char **why)
{
    if (r->arena || host == nullptr || bytes == 0 || bytes > SIZE_MAX) {
        *why = "no image cache for the device recipe route";
        return DETFEED_EINVAL;
    }
    device_scope d;
    cudaError_t e = enter(r, &d);
    bool automatic = where == DETFEED_RECIPE_CACHE_AUTO;
    bool copy =
        where == DETFEED_RECIPE_CACHE_DEVICE || (automatic && copy_fits((size_t)bytes));
    if (e == cudaSuccess)
        e = copy ? arena_copy(r, host, (size_t)bytes)
                 : arena_map(r, host, (size_t)bytes);
    if (e == cudaErrorMemoryAllocation && copy && automatic) {
        (void)cudaGetLastError(); /* the free memory went meanwhile: read in place */
        copy = false;
        e = arena_map(r, host, (size_t)bytes);
    }
    bool back = leave(&d);
    if (e == cudaSuccess && back)
        return DETFEED_OK;
    (void)cudaGetLastError();
    *why = e == cudaSuccess ? not_back_why
           : !copy ? (automatic ? "the image cache could not be page-locked for the "
                                  "device (recipe_cache auto)"
                                : "the image cache could not be page-locked for the "
                                  "device (recipe_cache host)")
           : e == cudaErrorMemoryAllocation
               ? "the image cache does not fit in CUDA device memory (recipe_cache "
                 "device)"
               : cudaGetErrorString(e);
    return e == cudaErrorMemoryAllocation ? DETFEED_ENOMEM : DETFEED_ECUDA;
}

extern "C" uint64_t detfeed__cuda_route_arena_bytes(const detfeed__cuda_route *r)
{
    return r ? r->arena_bytes : 0;
}

extern "C" int detfeed__cuda_route_submit(detfeed__cuda_route *r, int slot,
                                          const void *host, size_t bytes, int capacity,
                                          int n, int h, int w, detfeed_dtype dtype,
                                          detfeed_scale scale, void *consumer,
                                          void **dev, void **ready)
{
    size_t head = (size_t)capacity * DETFEED__CUDA_PARAM_STRIDE +
                  (r->arena ? (size_t)capacity * sizeof(detfeed__cuda_recipe) : 0);
    if (slot < 0 || slot >= r->slots || bytes > r->in_bytes || bytes < head) {
        r->error = "the batch does not fit the route's buffers";
        return DETFEED_EINVAL;
    }
    route_slot *s = &r->slot[slot];
    device_scope d;
    cudaError_t e = enter(r, &d);
    if (e == cudaSuccess) /* the consumer is done with this output buffer */
        e = cudaStreamWaitEvent(r->stream, s->consumed, 0);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(r->in, host, bytes, cudaMemcpyHostToDevice, r->stream);
    if (e == cudaSuccess)
        e = cudaEventRecord(s->copied, r->stream);
    int rc = e == cudaSuccess ? DETFEED_OK : DETFEED_ECUDA;
    if (rc == DETFEED_OK)
        rc = r->arena ? convert_recipes(r, capacity, n, h, w, dtype, scale, s->out)
                      : convert_colour(r, capacity, n, h, w, dtype, scale, s->out);
    if (rc == DETFEED_OK)
        e = cudaEventRecord(s->ready, r->stream);
    if (rc == DETFEED_OK && e == cudaSuccess)
        e = cudaStreamWaitEvent((cudaStream_t)consumer, s->ready, 0);
    bool back = back_home(r, &d);
    if (e != cudaSuccess)
        return failed(r, e);
    if (rc != DETFEED_OK) {
        r->error = rc == DETFEED_ECUDA
                       ? "the kernel could not be launched"
                       : "the kernel refused the batch's size or buffers";
        return rc;
    }
    if (!back)
        return not_back(r);
    s->submitted = true;
    *dev = s->out;
    *ready = (void *)s->ready;
    return DETFEED_OK;
}

/* The consumer's work done, waited for on the host: its stream's, or the
 * whole current device's when the stream cannot be waited for. */
static void wait_for_consumer(void *consumer)
{
    (void)cudaGetLastError();
    if (cudaStreamSynchronize((cudaStream_t)consumer) != cudaSuccess) {
        (void)cudaGetLastError();
        (void)cudaDeviceSynchronize();
    }
}

extern "C" int detfeed__cuda_route_release(detfeed__cuda_route *r, int slot,
                                           void *consumer)
{
    route_slot *s = &r->slot[slot];
    if (!s->submitted)
        return DETFEED_OK;
    s->submitted = false;
    device_scope d;
    cudaError_t e = enter(r, &d);
    if (e == cudaSuccess)
        e = cudaEventRecord(s->consumed, (cudaStream_t)consumer);
    if (e != cudaSuccess) /* the reuse cannot wait on the device: wait here */
        wait_for_consumer(consumer);
    if (!leave(&d)) /* its status is about the record: reported later */
        r->stranded = true;
    return e == cudaSuccess ? DETFEED_OK : failed(r, e);
}

extern "C" int detfeed__cuda_route_copy_done(detfeed__cuda_route *r, int slot,
                                             bool wait)
{
    device_scope d;
    cudaError_t e = enter(r, &d);
    if (e == cudaSuccess)
        e = wait ? cudaEventSynchronize(r->slot[slot].copied)
                 : cudaEventQuery(r->slot[slot].copied);
    if (!leave(&d)) /* its answer is whether the copy is done: reported later */
        r->stranded = true;
    if (e == cudaErrorNotReady) {
        (void)cudaGetLastError(); /* not an error: the copy runs */
        return 0;
    }
    return e == cudaSuccess ? 1 : failed(r, e);
}

extern "C" int detfeed__cuda_route_sync(detfeed__cuda_route *r)
{
    device_scope d;
    cudaError_t e = enter(r, &d);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(r->stream);
    bool back = back_home(r, &d);
    for (int i = 0; i < r->slots; i++)
        r->slot[i].submitted = false;
    return e != cudaSuccess ? failed(r, e) : back ? DETFEED_OK : not_back(r);
}

extern "C" int detfeed__cuda_route_to_host(detfeed__cuda_route *r, int slot, void *dst,
                                           size_t bytes)
{
    if (bytes > r->out_bytes)
        return DETFEED_EINVAL;
    route_slot *s = &r->slot[slot];
    device_scope d;
    cudaError_t e = enter(r, &d);
    if (e == cudaSuccess)
        e = cudaEventSynchronize(s->ready);
    if (e == cudaSuccess)
        e = cudaMemcpy(dst, s->out, bytes, cudaMemcpyDeviceToHost);
    bool back = back_home(r, &d);
    return e != cudaSuccess ? failed(r, e) : back ? DETFEED_OK : not_back(r);
}
