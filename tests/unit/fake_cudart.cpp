/*
 * fake_cudart.cpp - a fake CUDA runtime with fault injection, for tests of
 * the CUDA part's host code on machines without a GPU (fake_cudart.h says
 * what the test sees).
 *
 * It defines the runtime functions the library's nvcc-compiled objects
 * call (cudaMalloc, the streams and events, the copies, ...) and the ones
 * nvcc's generated code calls (__cudaRegisterFatBinary and the rest, the
 * kernel launch stubs' __cudaPushCallConfiguration .. __cudaLaunchKernel),
 * with the signatures of CUDA's own headers (cuda_runtime_api.h declares
 * them; a mismatch does not compile). A test links it instead of libcudart:
 * a runtime function missing here is a link error, never the real one.
 *
 * Device memory is zeroed host memory; copies are memcpy; kernels never
 * run, but their launch configuration is checked as CUDA checks it (a grid
 * of more than 65535 in y or z fails). Handles are checked: a call with an
 * event, stream or pointer the fake never handed out, or gave back already,
 * fails and counts as misuse. Every entry point takes one lock, so the
 * library's threads may call it; the current device and the last error are
 * per thread, as in CUDA.
 */
#include "fake_cudart.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace
{

/* ---- the state ------------------------------------------------------------ */

struct counted {
    long calls = 0, foreign = 0;
};

struct fault {
    fake_cuda_fault f;
    std::string fn;
    long seen = 0; /* matching calls since the injection */
};

/* The fake's state, made at its first use: nvcc's static constructors call
 * into the fake before this file's globals would be constructed. */
struct state {
    std::mutex lock;
    int devices = 1;
    uint64_t memory = 64ull << 30;
    std::map<std::string, counted> calls;
    std::map<uintptr_t, size_t> device;     /* base -> bytes */
    std::map<uintptr_t, size_t> pinned;     /* cudaHostAlloc'd */
    std::map<uintptr_t, size_t> registered; /* cudaHostRegister'd */
    std::set<void *> events, streams;
    fault faults[16];
    int nfaults = 0;
    long misuse = 0;
    std::string first_misuse;
    uint64_t device_held = 0;
};

state &S()
{
    static state s;
    return s;
}

thread_local int current_device = 0;
thread_local cudaError_t last_error = cudaSuccess;

/* What a consumer's streams point to: the fake never created them. */
char consumer_streams[8];

/* ---- helpers (called with the lock held) ------------------------------------ */

void note_misuse(const char *fn, const char *what)
{
    state &s = S();
    if (s.misuse++ == 0)
        s.first_misuse = std::string(fn) + ": " + what;
    std::fprintf(stderr, "[fake_cudart] misuse: %s: %s\n", fn, what);
}

bool is_consumer(const void *stream)
{
    auto p = (const char *)stream;
    return p >= consumer_streams && p < consumer_streams + sizeof consumer_streams;
}

/* NULL, the special handles, and the consumer's: not the library's own. */
bool is_foreign(cudaStream_t stream)
{
    return stream == nullptr || stream == cudaStreamLegacy ||
           stream == cudaStreamPerThread || is_consumer(stream);
}

bool stream_ok(cudaStream_t stream)
{
    return is_foreign(stream) || S().streams.count(stream) != 0;
}

cudaError_t usual_failure(const std::string &fn)
{
    static const char *const allocations[] = {
        "cudaMalloc", "cudaHostAlloc", "cudaHostRegister", "cudaEventCreateWithFlags",
        "cudaStreamCreateWithFlags"};
    for (const char *a : allocations)
        if (fn == a)
            return cudaErrorMemoryAllocation;
    if (fn == "cudaSetDevice" || fn == "cudaGetDevice")
        return cudaErrorInvalidDevice;
    if (fn == "__cudaLaunchKernel")
        return cudaErrorLaunchFailure;
    if (fn == "cudaGetDeviceCount")
        return cudaErrorNoDevice;
    return cudaErrorInvalidResourceHandle;
}

/* Counts the call; the error of a fault that fires on it, or cudaSuccess. */
cudaError_t count(const char *fn, bool foreign)
{
    state &s = S();
    counted &c = s.calls[fn];
    c.calls++;
    c.foreign += foreign;
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < s.nfaults; i++) {
        fault &f = s.faults[i];
        if (f.fn != fn || (f.f.foreign && !foreign))
            continue;
        long k = ++f.seen, times = f.f.times == 0 ? 1 : f.f.times;
        if (k >= f.f.nth && (times < 0 || k < f.f.nth + times) && e == cudaSuccess)
            e = f.f.error ? (cudaError_t)f.f.error : usual_failure(fn);
    }
    return e;
}

/* A failed call: recorded as the thread's last error, and returned. */
cudaError_t fail(cudaError_t e)
{
    last_error = e;
    return e;
}

/* The allocation of `m` that holds [p, p + n), or m.end(). */
std::map<uintptr_t, size_t>::const_iterator
holding(const std::map<uintptr_t, size_t> &m, const void *p, size_t n)
{
    auto a = (uintptr_t)p;
    auto it = m.upper_bound(a);
    if (it == m.begin())
        return m.end();
    --it;
    return a - it->first <= it->second && n <= it->second - (a - it->first) ? it
                                                                            : m.end();
}

bool in_device(const void *p, size_t n)
{
    return holding(S().device, p, n) != S().device.end();
}

/* Host memory of a pinned allocation or a registration, or plain. */
bool host_ok(const void *p, size_t n)
{
    return p != nullptr && !in_device(p, n);
}

void *take(std::map<uintptr_t, size_t> &m, size_t bytes)
{
    void *p = std::calloc(1, bytes ? bytes : 1);
    if (p != nullptr)
        m[(uintptr_t)p] = bytes;
    return p;
}

/* Gives back what `m` holds at p; false when it holds nothing there. */
bool give(std::map<uintptr_t, size_t> &m, void *p, size_t *bytes)
{
    auto it = m.find((uintptr_t)p);
    if (it == m.end())
        return false;
    *bytes = it->second;
    m.erase(it);
    std::free(p);
    return true;
}

/* A handle (event or stream) made or checked. */
void *new_handle(std::set<void *> &set)
{
    void *h = std::malloc(1);
    if (h != nullptr)
        set.insert(h);
    return h;
}

bool drop_handle(std::set<void *> &set, void *h)
{
    if (set.erase(h) == 0)
        return false;
    std::free(h);
    return true;
}

bool no_device()
{
    return S().devices <= 0;
}

bool copy_ok(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return in_device(dst, n) && host_ok(src, n);
    case cudaMemcpyDeviceToHost:
        return host_ok(dst, n) && in_device(src, n);
    case cudaMemcpyDeviceToDevice:
        return in_device(dst, n) && in_device(src, n);
    default:
        return dst != nullptr && src != nullptr;
    }
}

/* The launch configuration CUDA accepts. */
bool config_ok(dim3 grid, dim3 block)
{
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    return grid.x >= 1 && grid.y >= 1 && grid.z >= 1 && grid.x <= 0x7fffffffu &&
           grid.y <= 65535 && grid.z <= 65535 && threads >= 1 && threads <= 1024;
}

struct call_config {
    dim3 grid, block;
    size_t shared;
    void *stream;
};

thread_local call_config pushed[4];
thread_local int npushed = 0;

} // namespace

#define LOCK std::lock_guard<std::mutex> guard(S().lock)

/* ---- the test's side (fake_cudart.h) ----------------------------------------- */

extern "C" void fake_cuda_reset(void)
{
    LOCK;
    state &s = S();
    s.devices = 1;
    s.memory = 64ull << 30;
    s.calls.clear();
    s.nfaults = 0;
    s.misuse = 0;
    s.first_misuse.clear();
    current_device = 0; /* the calling thread's */
    last_error = cudaSuccess;
}

extern "C" void fake_cuda_forget(void)
{
    LOCK;
    state &s = S();
    s.device.clear();
    s.pinned.clear();
    s.registered.clear();
    s.events.clear();
    s.streams.clear();
    s.device_held = 0;
}

extern "C" void fake_cuda_set_devices(int n)
{
    LOCK;
    S().devices = n;
}

extern "C" void fake_cuda_set_memory(uint64_t bytes)
{
    LOCK;
    S().memory = bytes;
}

extern "C" void fake_cuda_fail(fake_cuda_fault f)
{
    LOCK;
    state &s = S();
    if (s.nfaults == (int)(sizeof s.faults / sizeof s.faults[0]) || f.fn == nullptr) {
        note_misuse("fake_cuda_fail", "too many faults, or no function named");
        return;
    }
    fault &n = s.faults[s.nfaults++];
    n.f = f;
    n.fn = f.fn;
    n.f.fn = nullptr; /* the caller's string is not kept */
    n.seen = 0;
}

extern "C" void fake_cuda_fail_next(const char *fn, int nth)
{
    fake_cuda_fault f = {};
    f.fn = fn;
    f.nth = nth;
    fake_cuda_fail(f);
}

extern "C" long fake_cuda_calls(const char *fn)
{
    LOCK;
    if (fn == NULL) {
        long all = 0;
        for (const auto &c : S().calls)
            all += c.second.calls;
        return all;
    }
    auto it = S().calls.find(fn);
    return it == S().calls.end() ? 0 : it->second.calls;
}

extern "C" long fake_cuda_foreign_calls(const char *fn)
{
    LOCK;
    auto it = S().calls.find(fn);
    return it == S().calls.end() ? 0 : it->second.foreign;
}

extern "C" int fake_cuda_live(fake_cuda_kind kind)
{
    LOCK;
    state &s = S();
    switch (kind) {
    case FAKE_CUDA_DEVICE_ALLOCS:
        return (int)s.device.size();
    case FAKE_CUDA_HOST_ALLOCS:
        return (int)s.pinned.size();
    case FAKE_CUDA_EVENTS:
        return (int)s.events.size();
    case FAKE_CUDA_STREAMS:
        return (int)s.streams.size();
    case FAKE_CUDA_REGISTERED:
        return (int)s.registered.size();
    default:
        return -1;
    }
}

extern "C" int fake_cuda_live_total(void)
{
    int n = 0;
    for (int k = 0; k < FAKE_CUDA_KINDS; k++)
        n += fake_cuda_live((fake_cuda_kind)k);
    return n;
}

extern "C" uint64_t fake_cuda_device_bytes(void)
{
    LOCK;
    return S().device_held;
}

extern "C" bool fake_cuda_is_device(const void *p)
{
    LOCK;
    return in_device(p, 1);
}

extern "C" long fake_cuda_misuse(const char **what)
{
    LOCK;
    if (what)
        *what = S().misuse ? S().first_misuse.c_str() : nullptr;
    return S().misuse;
}

extern "C" void *fake_cuda_consumer_stream(int k)
{
    return consumer_streams + (k & 7);
}

extern "C" void fake_cuda_print(const char *title)
{
    static const char *const names[] = {"device allocations", "pinned host allocations",
                                        "events", "streams", "registrations"};
    std::fprintf(stderr, "[fake_cudart] %s:", title);
    for (int k = 0; k < FAKE_CUDA_KINDS; k++)
        std::fprintf(stderr, " %s %d%s", names[k], fake_cuda_live((fake_cuda_kind)k),
                     k + 1 < FAKE_CUDA_KINDS ? "," : "\n");
    LOCK;
    for (const auto &c : S().calls)
        std::fprintf(stderr, "  %-40s %6ld calls (%ld on foreign streams)\n",
                     c.first.c_str(), c.second.calls, c.second.foreign);
}

/* ---- devices and errors ------------------------------------------------------ */

cudaError_t cudaGetDeviceCount(int *count_out)
{
    LOCK;
    cudaError_t e = count("cudaGetDeviceCount", false);
    *count_out = e == cudaSuccess && !no_device() ? S().devices : 0;
    if (e == cudaSuccess && no_device())
        e = cudaErrorNoDevice;
    return e == cudaSuccess ? e : fail(e);
}

cudaError_t cudaGetDevice(int *device)
{
    LOCK;
    cudaError_t e = count("cudaGetDevice", false);
    if (e != cudaSuccess)
        return fail(e);
    *device = current_device;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    LOCK;
    cudaError_t e = count("cudaSetDevice", false);
    if (e == cudaSuccess && (device < 0 || device >= S().devices))
        e = cudaErrorInvalidDevice;
    if (e != cudaSuccess)
        return fail(e);
    current_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return "cudaSuccess";
    case cudaErrorMemoryAllocation:
        return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice:
        return "cudaErrorInvalidDevice";
    case cudaErrorNoDevice:
        return "cudaErrorNoDevice";
    case cudaErrorInvalidResourceHandle:
        return "cudaErrorInvalidResourceHandle";
    case cudaErrorLaunchFailure:
        return "cudaErrorLaunchFailure";
    case cudaErrorInvalidConfiguration:
        return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidValue:
        return "cudaErrorInvalidValue";
    default:
        return "cudaErrorUnknown";
    }
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return "no error";
    case cudaErrorMemoryAllocation:
        return "out of memory";
    case cudaErrorInvalidDevice:
        return "invalid device ordinal";
    case cudaErrorNoDevice:
        return "no CUDA-capable device is detected";
    case cudaErrorInvalidResourceHandle:
        return "invalid resource handle";
    case cudaErrorLaunchFailure:
        return "unspecified launch failure";
    case cudaErrorInvalidConfiguration:
        return "invalid configuration argument";
    case cudaErrorInvalidValue:
        return "invalid argument";
    default:
        return "unknown error (fake_cudart)";
    }
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device)
{
    LOCK;
    cudaError_t e = count("cudaDeviceGetAttribute", false);
    if (e == cudaSuccess && (device < 0 || device >= S().devices))
        e = cudaErrorInvalidDevice;
    if (e != cudaSuccess)
        return fail(e);
    switch (attr) {
    case cudaDevAttrMultiProcessorCount:
        *value = 132;
        break;
    case cudaDevAttrMaxGridDimX:
        *value = 0x7fffffff;
        break;
    case cudaDevAttrMaxGridDimY:
    case cudaDevAttrMaxGridDimZ:
        *value = 65535;
        break;
    case cudaDevAttrMaxThreadsPerBlock:
        *value = 1024;
        break;
    default:
        *value = 1;
    }
    return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *blocks,
                                                                   const void *, int,
                                                                   size_t, unsigned)
{
    LOCK;
    cudaError_t e =
        count("cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", false);
    if (e != cudaSuccess)
        return fail(e);
    *blocks = 8;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    LOCK;
    cudaError_t e = count("cudaDeviceSynchronize", false);
    return e == cudaSuccess ? e : fail(e);
}

/* ---- memory ------------------------------------------------------------------ */

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    LOCK;
    state &s = S();
    cudaError_t e = count("cudaMalloc", false);
    if (e == cudaSuccess && no_device())
        e = cudaErrorNoDevice;
    if (e == cudaSuccess && bytes > s.memory - s.device_held)
        e = cudaErrorMemoryAllocation;
    if (e == cudaSuccess && (*p = take(s.device, bytes)) == nullptr)
        e = cudaErrorMemoryAllocation;
    if (e != cudaSuccess)
        return fail(e);
    s.device_held += bytes;
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    LOCK;
    state &s = S();
    cudaError_t e = count("cudaFree", false);
    size_t bytes = 0;
    if (e == cudaSuccess && p != nullptr && !give(s.device, p, &bytes)) {
        note_misuse("cudaFree", "not device memory the fake holds");
        e = cudaErrorInvalidValue;
    }
    if (e != cudaSuccess)
        return fail(e);
    s.device_held -= bytes;
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    LOCK;
    state &s = S();
    cudaError_t e = count("cudaMemGetInfo", false);
    if (e != cudaSuccess)
        return fail(e);
    *free_bytes = (size_t)(s.memory - s.device_held);
    *total = (size_t)s.memory;
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned)
{
    LOCK;
    cudaError_t e = count("cudaHostAlloc", false);
    if (e == cudaSuccess && no_device())
        e = cudaErrorNoDevice;
    if (e == cudaSuccess && (*p = take(S().pinned, bytes)) == nullptr)
        e = cudaErrorMemoryAllocation;
    return e == cudaSuccess ? e : fail(e);
}

cudaError_t cudaFreeHost(void *p)
{
    LOCK;
    cudaError_t e = count("cudaFreeHost", false);
    size_t bytes = 0;
    if (e == cudaSuccess && p != nullptr && !give(S().pinned, p, &bytes)) {
        note_misuse("cudaFreeHost", "not page-locked memory the fake holds");
        e = cudaErrorInvalidValue;
    }
    return e == cudaSuccess ? e : fail(e);
}

cudaError_t cudaHostRegister(void *p, size_t bytes, unsigned)
{
    LOCK;
    state &s = S();
    cudaError_t e = count("cudaHostRegister", false);
    if (e == cudaSuccess && no_device())
        e = cudaErrorNoDevice;
    if (e == cudaSuccess && (p == nullptr || bytes == 0))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess &&
        (holding(s.registered, p, 1) != s.registered.end() ||
         holding(s.registered, (char *)p + bytes - 1, 1) != s.registered.end()))
        e = cudaErrorHostMemoryAlreadyRegistered;
    if (e != cudaSuccess)
        return fail(e);
    s.registered[(uintptr_t)p] = bytes;
    return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *p)
{
    LOCK;
    cudaError_t e = count("cudaHostUnregister", false);
    if (e == cudaSuccess && S().registered.erase((uintptr_t)p) == 0) {
        note_misuse("cudaHostUnregister", "not registered");
        e = cudaErrorHostMemoryNotRegistered;
    }
    return e == cudaSuccess ? e : fail(e);
}

cudaError_t cudaHostGetDevicePointer(void **dev, void *host, unsigned)
{
    LOCK;
    state &s = S();
    cudaError_t e = count("cudaHostGetDevicePointer", false);
    if (e == cudaSuccess && holding(s.registered, host, 1) == s.registered.end() &&
        holding(s.pinned, host, 1) == s.pinned.end()) {
        note_misuse("cudaHostGetDevicePointer", "not registered or page-locked");
        e = cudaErrorInvalidValue;
    }
    if (e != cudaSuccess)
        return fail(e);
    *dev = host; /* mapped: the same address */
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    LOCK;
    cudaError_t e = count("cudaMemcpy", false);
    if (e == cudaSuccess && !copy_ok(dst, src, bytes, kind)) {
        note_misuse("cudaMemcpy", "a side is not where its kind says");
        e = cudaErrorInvalidValue;
    }
    if (e != cudaSuccess)
        return fail(e);
    std::memcpy(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind kind, cudaStream_t stream)
{
    LOCK;
    cudaError_t e = count("cudaMemcpyAsync", is_foreign(stream));
    if (e == cudaSuccess && (!stream_ok(stream) || !copy_ok(dst, src, bytes, kind))) {
        note_misuse("cudaMemcpyAsync",
                    "unknown stream, or a side not where its kind says");
        e = cudaErrorInvalidValue;
    }
    if (e != cudaSuccess)
        return fail(e);
    std::memcpy(dst, src, bytes);
    return cudaSuccess;
}

/* ---- streams and events ------------------------------------------------------ */

/* A new stream or event handle of `set` into *out. */
static cudaError_t handle_create(const char *fn, std::set<void *> &set, void **out)
{
    LOCK;
    cudaError_t e = count(fn, false);
    if (e == cudaSuccess && no_device())
        e = cudaErrorNoDevice;
    if (e == cudaSuccess && (*out = new_handle(set)) == nullptr)
        e = cudaErrorMemoryAllocation;
    return e == cudaSuccess ? e : fail(e);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned)
{
    return handle_create("cudaStreamCreateWithFlags", S().streams, (void **)stream);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    LOCK;
    cudaError_t e = count("cudaStreamDestroy", is_foreign(stream));
    if (e == cudaSuccess && !drop_handle(S().streams, stream)) {
        note_misuse("cudaStreamDestroy", "not a stream the library created");
        e = cudaErrorInvalidResourceHandle;
    }
    return e == cudaSuccess ? e : fail(e);
}

/* A call on a stream that only checks its handle. */
static cudaError_t on_stream(const char *fn, cudaStream_t stream)
{
    LOCK;
    cudaError_t e = count(fn, is_foreign(stream));
    if (e == cudaSuccess && !stream_ok(stream)) {
        note_misuse(fn, "unknown or destroyed stream");
        e = cudaErrorInvalidResourceHandle;
    }
    return e == cudaSuccess ? e : fail(e);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    return on_stream("cudaStreamSynchronize", stream);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned)
{
    return handle_create("cudaEventCreateWithFlags", S().events, (void **)event);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    LOCK;
    cudaError_t e = count("cudaEventDestroy", false);
    if (e == cudaSuccess && !drop_handle(S().events, event)) {
        note_misuse("cudaEventDestroy", "not an event the library created");
        e = cudaErrorInvalidResourceHandle;
    }
    return e == cudaSuccess ? e : fail(e);
}

/* A call on an event (and a stream): checks both handles. */
static cudaError_t on_event(const char *fn, cudaEvent_t event, cudaStream_t stream,
                            bool has_stream)
{
    LOCK;
    cudaError_t e = count(fn, has_stream && is_foreign(stream));
    if (e == cudaSuccess &&
        (S().events.count(event) == 0 || (has_stream && !stream_ok(stream)))) {
        note_misuse(fn, "unknown or destroyed event or stream");
        e = cudaErrorInvalidResourceHandle;
    }
    return e == cudaSuccess ? e : fail(e);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    return on_event("cudaEventRecord", event, stream, true);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned)
{
    return on_event("cudaStreamWaitEvent", event, stream, true);
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    return on_event("cudaEventQuery", event, nullptr, false);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    return on_event("cudaEventSynchronize", event, nullptr, false);
}

/* ---- what nvcc's generated code calls ---------------------------------------- */

/* cuda_runtime_api.h does not declare these; crt/host_runtime.h and
 * crt/device_functions.h (nvcc's own) do, with these signatures. */
extern "C" {
void **__cudaRegisterFatBinary(void *fat_cubin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaUnregisterFatBinary(void **handle);
void __cudaRegisterVar(void **handle, char *host_var, char *device_address,
                       const char *device_name, int ext, size_t size, int constant,
                       int global);
void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
                            const char *device_name, int thread_limit, uint3 *tid,
                            uint3 *bid, dim3 *block_dim, dim3 *grid_dim,
                            int *warp_size);
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared,
                                     struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared,
                                       void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *fun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                               size_t shared, cudaStream_t stream);
}

/* The registrations run in static constructors and at exit, before and
 * after the state: they touch nothing. */
void **__cudaRegisterFatBinary(void *)
{
    static void *handle;
    return &handle;
}

void __cudaRegisterFatBinaryEnd(void **) {}

void __cudaUnregisterFatBinary(void **) {}

void __cudaRegisterVar(void **, char *, char *, const char *, int, size_t, int, int) {}

void __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *,
                            uint3 *, dim3 *, dim3 *, int *)
{
}

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared,
                                     struct CUstream_st *stream)
{
    if (npushed == (int)(sizeof pushed / sizeof pushed[0]))
        return 1; /* the launch is skipped */
    pushed[npushed++] = call_config{grid, block, shared, stream};
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared,
                                       void *stream)
{
    if (npushed == 0)
        return cudaErrorInvalidConfiguration;
    const call_config &c = pushed[--npushed];
    *grid = c.grid;
    *block = c.block;
    *shared = c.shared;
    *(void **)stream = c.stream;
    return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *fun)
{
    *kernel = (cudaKernel_t) const_cast<void *>(fun);
    return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3 grid, dim3 block, void **, size_t,
                               cudaStream_t stream)
{
    LOCK;
    cudaError_t e = count("__cudaLaunchKernel", is_foreign(stream));
    if (e == cudaSuccess && !stream_ok(stream)) {
        note_misuse("__cudaLaunchKernel", "unknown or destroyed stream");
        e = cudaErrorInvalidResourceHandle;
    }
    if (e == cudaSuccess && !config_ok(grid, block))
        e = cudaErrorInvalidConfiguration;
    return e == cudaSuccess ? e : fail(e);
}
