/*
 * color_kernel.cu - the device route's kernel: one launch per batch turns
 * n HWC BGR 8-bit images into NCHW RGB of the consumer's dtype, applying
 * each image's RandomHSV tables on the way.
 *
 * Exactness: the per-pixel steps are the CPU core's own (img/color_px.h,
 * compiled here as device functions), with the HSV->BGR formula of the
 * reference stack for each pixel's column (OpenCV's SIMD block columns and
 * its scalar row tail), and the dtype is a lookup in the table
 * detfeed_dtype_table builds on the host, so the bytes are those of
 * detfeed_hsv_apply_cv followed by detfeed_convert_chw. This file must be
 * compiled with -fmad=false and without fast math (CMakeLists.txt);
 * tests/mutation/run_cuda.sh shows the captured pixels fail otherwise.
 *
 * Work: blockIdx.y is the image; its blocks (blockIdx.x) first build the
 * image's colour plan and the dtype table in shared memory, 256 entries, one
 * per thread, then stride over the image four pixels per thread: three
 * 32-bit loads, three 4-element stores (one per plane).
 */
#include "color_kernel.cuh"
#include "cuda_host.h"
#include "detfeed_cuda.h"
#include "img/color_px.h"
#include "img/hsv_tables.h"
#include "recipe_px.h"

#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

/* OpenCV's BGR->HSV reciprocal tables (read-only data, not state). */
__device__ const int32_t detfeed__d_sdiv[256] = DETFEED__SDIV_VALUES;
__device__ const int32_t detfeed__d_hdiv[256] = DETFEED__HDIV180_VALUES;

/* The dtype table, passed by value as a kernel parameter. */
struct dtype_table {
    uint32_t v[256];
};

/* One block's tables. */
template <typename T> struct block_tables {
    float f[256], s[256], v[256];
    int32_t sdiv[256], hdiv[256];
    int32_t sel[256];
    T out[256];
};

/* The consumer's value of code c: the table detfeed_dtype_table builds on
 * the host. */
template <typename T>
__device__ __forceinline__ T out_value(const dtype_table &tab, int c)
{
    return (T)tab.v[c];
}

template <typename T>
__device__ void tables_init(block_tables<T> *t, const dtype_table &tab,
                            const uint8_t *lut)
{
    int i = threadIdx.x;
    t->out[i] = out_value<T>(tab, i);
    if (lut != nullptr) {
        detfeed__hue_entry(lut[DETFEED_LUT_H * 256 + i], &t->f[i], &t->sel[i]);
        t->s[i] = detfeed__unit_entry(lut[DETFEED_LUT_S * 256 + i]);
        t->v[i] = detfeed__unit_entry(lut[DETFEED_LUT_V * 256 + i]);
        t->sdiv[i] = detfeed__d_sdiv[i];
        t->hdiv[i] = detfeed__d_hdiv[i];
    }
}

/* RandomHSV on one pixel, in place, with the block's plan and formula
 * `form`. */
template <typename T>
__device__ __forceinline__ void colour_px(const block_tables<T> *t, uint8_t px[3],
                                          unsigned form)
{
    int32_t H, S, V;
    detfeed__bgr2hsv_q12(px[0], px[1], px[2], t->sdiv, t->hdiv, &H, &S, &V);
    detfeed__hsv2bgr_taps(t->f[H], t->s[S], t->v[V], t->sel[H], form, px);
}

/* Where a pixel's column falls: the stack's HSV->BGR formula for it. */
struct row_split {
    int width, block_end;
    unsigned simd, tail;
};

/* `mirrored`: the image was flipped left-right after its colour step, so
 * column x had column width - 1 - x's place in OpenCV's row. */
__device__ __forceinline__ unsigned form_at(const row_split &r, int x, bool mirrored)
{
    if (mirrored)
        x = r.width - 1 - x;
    return x < r.block_end ? r.simd : r.tail;
}

/* Four consecutive elements of a plane (16-byte, 8-byte or 4-byte store). */
__device__ __forceinline__ void store4(uint32_t *d, uint32_t a, uint32_t b, uint32_t c,
                                       uint32_t e)
{
    *reinterpret_cast<uint4 *>(d) = make_uint4(a, b, c, e);
}
__device__ __forceinline__ void store4(uint16_t *d, uint16_t a, uint16_t b, uint16_t c,
                                       uint16_t e)
{
    *reinterpret_cast<uint2 *>(d) =
        make_uint2(a | (uint32_t)b << 16, c | (uint32_t)e << 16);
}
__device__ __forceinline__ void store4(uint8_t *d, uint8_t a, uint8_t b, uint8_t c,
                                       uint8_t e)
{
    *reinterpret_cast<uint32_t *>(d) =
        a | (uint32_t)b << 8 | (uint32_t)c << 16 | (uint32_t)e << 24;
}

template <typename T>
__global__ void __launch_bounds__(256)
    colour_convert(const uint8_t *__restrict__ src, const uint8_t *__restrict__ params,
                   T *__restrict__ dst, int64_t hw, row_split split, dtype_table tab)
{
    __shared__ block_tables<T> t;
    int64_t img = blockIdx.y;
    const uint8_t *p = params ? params + img * DETFEED__CUDA_PARAM_STRIDE : nullptr;
    bool colour =
        p != nullptr && (p[DETFEED__CUDA_PARAM_FLAG] & DETFEED__CUDA_PARAM_COLOUR) != 0;
    bool mirrored =
        colour && (p[DETFEED__CUDA_PARAM_FLAG] & DETFEED__CUDA_PARAM_MIRRORED) != 0;
    tables_init(&t, tab, colour ? p : nullptr);
    __syncthreads();
    const uint8_t *in = src + img * hw * 3;
    T *r = dst + img * 3 * hw, *g = r + hw, *b = g + hw;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (hw % 4 == 0) { /* 4 pixels = 12 bytes, 4-byte aligned */
        for (int64_t q = first; q < hw / 4; q += step) {
            const uint32_t *w = reinterpret_cast<const uint32_t *>(in + q * 12);
            uint32_t word[3] = {w[0], w[1], w[2]};
            uint8_t px[12];
            for (int k = 0; k < 12; k++)
                px[k] = (uint8_t)(word[k / 4] >> (8 * (k % 4)));
            if (colour) {
                int x = (int)(4 * q % split.width);
                for (int k = 0; k < 4; k++, x = x + 1 < split.width ? x + 1 : 0)
                    colour_px(&t, px + 3 * k, form_at(split, x, mirrored));
            }
            store4(b + 4 * q, t.out[px[0]], t.out[px[3]], t.out[px[6]], t.out[px[9]]);
            store4(g + 4 * q, t.out[px[1]], t.out[px[4]], t.out[px[7]], t.out[px[10]]);
            store4(r + 4 * q, t.out[px[2]], t.out[px[5]], t.out[px[8]], t.out[px[11]]);
        }
        return;
    }
    for (int64_t i = first; i < hw; i += step) {
        uint8_t px[3] = {in[3 * i], in[3 * i + 1], in[3 * i + 2]};
        if (colour)
            colour_px(&t, px, form_at(split, (int)(i % split.width), mirrored));
        b[i] = t.out[px[0]];
        g[i] = t.out[px[1]];
        r[i] = t.out[px[2]];
    }
}

/* ---- the device recipe: the sample's 8-bit image made here ---- */

/* One image's recipe and its canvases, in a block's shared memory. */
struct recipe_block {
    detfeed__cuda_recipe r;
    detfeed__canvas canvas[2];
};

/* The recipe route's kernel: per image (blockIdx.y), its 8-bit pixels from
 * its recipe (or, for an image the worker made, from the staged image),
 * then colour and conversion as colour_convert does. */
template <typename T>
__global__ void __launch_bounds__(256)
    recipe_convert(const uint8_t *__restrict__ src, const uint8_t *__restrict__ params,
                   const detfeed__cuda_recipe *__restrict__ recipes,
                   const uint8_t *__restrict__ arena, T *__restrict__ dst, int width,
                   int64_t hw, row_split split, dtype_table tab)
{
    __shared__ block_tables<T> t;
    __shared__ recipe_block rb;
    int64_t img = blockIdx.y;
    const uint8_t *p = params + img * DETFEED__CUDA_PARAM_STRIDE;
    bool colour = (p[DETFEED__CUDA_PARAM_FLAG] & DETFEED__CUDA_PARAM_COLOUR) != 0;
    bool mirrored =
        colour && (p[DETFEED__CUDA_PARAM_FLAG] & DETFEED__CUDA_PARAM_MIRRORED);
    tables_init(&t, tab, colour ? p : nullptr);
    if (threadIdx.x == 0) {
        rb.r = recipes[img];
        detfeed__recipe_canvases(&rb.r, arena, rb.canvas);
    }
    __syncthreads();
    bool made = (rb.r.flags & DETFEED__CUDA_RECIPE_MADE) != 0;
    int height = (int)(hw / width);
    const uint8_t *in = src + img * hw * 3;
    T *r = dst + img * 3 * hw, *g = r + hw, *b = g + hw;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < hw;
         i += step) {
        int x = (int)(i % width);
        uint8_t px[3];
        if (made) {
            detfeed__recipe_px(&rb.r, rb.canvas, width, height, x, (int)(i / width),
                               px);
        } else {
            px[0] = in[3 * i], px[1] = in[3 * i + 1], px[2] = in[3 * i + 2];
        }
        if (colour)
            colour_px(&t, px, form_at(split, x, mirrored));
        b[i] = t.out[px[0]];
        g[i] = t.out[px[1]];
        r[i] = t.out[px[2]];
    }
}

/* The consumer's value of every code as the kernels take it. */
static int dtype_table_of(detfeed_dtype dtype, detfeed_scale scale, dtype_table *tab)
{
    size_t esize = detfeed_dtype_size(dtype);
    unsigned char bytes[256 * 4];
    int rc = detfeed_dtype_table(dtype, scale, bytes);
    for (int c = 0; rc == DETFEED_OK && c < 256; c++) {
        uint32_t v = 0;
        memcpy(&v, bytes + (size_t)c * esize, esize); /* little-endian host */
        tab->v[c] = v;
    }
    return rc;
}

/* Blocks per image: the batch shares one full wave of resident blocks
 * (`slots` over the device), each image at least one block and no more than
 * it has 1024-pixel pieces; the blocks then stride over their image. */
static unsigned blocks_per_image(int n, int64_t hw, int64_t slots)
{
    int64_t want = slots / n;
    int64_t most = (hw + 1023) / 1024;
    int64_t k = want < most ? want : most;
    return (unsigned)(k < 1 ? 1 : k > 65535 ? 65535 : k);
}

/* Blocks of `kernel` (256 threads) resident in one wave on the current
 * device. */
template <typename K> static cudaError_t wave_of(K kernel, int64_t *wave)
{
    int dev = 0, sms = 1, per_sm = 1;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, 0);
    *wave = (int64_t)sms * (per_sm > 0 ? per_sm : 1);
    return e;
}

/* f(T()) with T the element type of a dtype of esize bytes (4, 2 or 1). */
template <typename F> static cudaError_t by_size(size_t esize, F f)
{
    return esize == 4 ? f(uint32_t()) : esize == 2 ? f(uint16_t()) : f(uint8_t());
}

/* The checks both kernels' entry points make; esize the dtype's. */
static int check_batch(const void *src, int n, int width, int height, const void *dst,
                       size_t esize)
{
    if (src == nullptr || dst == nullptr || n < 1 || n > 65535 || width < 1 ||
        height < 1 || esize == 0 || (uintptr_t)dst % esize != 0)
        return DETFEED_EINVAL;
    return (int64_t)width * height > INT64_MAX / 12 / n ? DETFEED_EOVERFLOW
                                                        : DETFEED_OK;
}

template <typename T>
static cudaError_t launch(const uint8_t *src, int n, int64_t hw, const uint8_t *params,
                          void *dst, const row_split &split, const dtype_table &tab,
                          int64_t wave, cudaStream_t stream)
{
    cudaError_t e = wave > 0 ? cudaSuccess : wave_of(colour_convert<T>, &wave);
    if (e != cudaSuccess)
        return e;
    dim3 grid(blocks_per_image(n, hw, wave), (unsigned)n);
    colour_convert<T><<<grid, 256, 0, stream>>>(src, params, (T *)dst, hw, split, tab);
    return cudaGetLastError();
}

extern "C" int detfeed__cuda_color_wave(detfeed_dtype dtype, int64_t *wave)
{
    size_t esize = detfeed_dtype_size(dtype);
    if (esize == 0 || wave == nullptr)
        return DETFEED_EINVAL;
    cudaError_t e = by_size(
        esize, [&](auto t) { return wave_of(colour_convert<decltype(t)>, wave); });
    return e == cudaSuccess ? DETFEED_OK : DETFEED_ECUDA;
}

extern "C" int detfeed__cuda_color_convert_stack(const uint8_t *src, int n, int width,
                                                 int height, const uint8_t *params,
                                                 const detfeed__hsv_stack *st,
                                                 void *dst, detfeed_dtype dtype,
                                                 detfeed_scale scale, int64_t wave,
                                                 void *stream)
{
    size_t esize = detfeed_dtype_size(dtype);
    int rc = st ? check_batch(src, n, width, height, dst, esize) : DETFEED_EINVAL;
    if (rc != DETFEED_OK)
        return rc;
    int64_t hw = (int64_t)width * height;
    if (hw % 4 == 0 && ((uintptr_t)src % 4 != 0 || (uintptr_t)dst % (4 * esize) != 0))
        return DETFEED_EINVAL; /* the vector path needs aligned buffers */
    dtype_table tab;
    if ((rc = dtype_table_of(dtype, scale, &tab)) != DETFEED_OK)
        return rc;
    row_split split = {width, detfeed__hsv_block_end(st, width), st->simd, st->tail};
    cudaError_t e = by_size(esize, [&](auto t) {
        return launch<decltype(t)>(src, n, hw, params, dst, split, tab, wave,
                                   (cudaStream_t)stream);
    });
    return e == cudaSuccess ? DETFEED_OK : DETFEED_ECUDA;
}

template <typename T>
static cudaError_t
launch_recipe(const uint8_t *src, int n, int width, int64_t hw, const uint8_t *params,
              const detfeed__cuda_recipe *recipes, const uint8_t *arena, void *dst,
              const row_split &split, const dtype_table &tab, int64_t wave,
              cudaStream_t stream)
{
    cudaError_t e = wave > 0 ? cudaSuccess : wave_of(recipe_convert<T>, &wave);
    if (e != cudaSuccess)
        return e;
    dim3 grid(blocks_per_image(n, hw, wave), (unsigned)n);
    recipe_convert<T><<<grid, 256, 0, stream>>>(src, params, recipes, arena, (T *)dst,
                                                width, hw, split, tab);
    return cudaGetLastError();
}

extern "C" int detfeed__cuda_recipe_wave(detfeed_dtype dtype, int64_t *wave)
{
    size_t esize = detfeed_dtype_size(dtype);
    if (esize == 0 || wave == nullptr)
        return DETFEED_EINVAL;
    cudaError_t e = by_size(
        esize, [&](auto t) { return wave_of(recipe_convert<decltype(t)>, wave); });
    return e == cudaSuccess ? DETFEED_OK : DETFEED_ECUDA;
}

extern "C" int detfeed__cuda_recipe_convert_stack(
    const uint8_t *src, int n, int width, int height, const uint8_t *params,
    const detfeed__cuda_recipe *recipes, const uint8_t *arena,
    const detfeed__hsv_stack *st, void *dst, detfeed_dtype dtype, detfeed_scale scale,
    int64_t wave, void *stream)
{
    size_t esize = detfeed_dtype_size(dtype);
    int rc = st && params && recipes ? check_batch(src, n, width, height, dst, esize)
                                     : DETFEED_EINVAL;
    dtype_table tab;
    if (rc != DETFEED_OK || (rc = dtype_table_of(dtype, scale, &tab)) != DETFEED_OK)
        return rc;
    row_split split = {width, detfeed__hsv_block_end(st, width), st->simd, st->tail};
    cudaError_t e = by_size(esize, [&](auto t) {
        return launch_recipe<decltype(t)>(src, n, width, (int64_t)width * height,
                                          params, recipes, arena, dst, split, tab, wave,
                                          (cudaStream_t)stream);
    });
    return e == cudaSuccess ? DETFEED_OK : DETFEED_ECUDA;
}

extern "C" int detfeed_cuda_color_convert(const uint8_t *src, int n, int width,
                                          int height, const uint8_t *params,
                                          const detfeed_cv *cv, void *dst,
                                          detfeed_dtype dtype, detfeed_scale scale,
                                          void *stream)
{
    detfeed__hsv_stack st;
    if (detfeed__hsv_stack_of(cv, &st) != DETFEED_OK)
        return DETFEED_EINVAL;
    return detfeed__cuda_color_convert_stack(src, n, width, height, params, &st, dst,
                                             dtype, scale, 0, stream);
}
