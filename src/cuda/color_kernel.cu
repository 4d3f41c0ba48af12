/*
 * color_kernel.cu - the device route's kernel: one launch per batch turns
 * n HWC BGR 8-bit images into NCHW RGB of the consumer's dtype, applying
 * each image's RandomHSV tables on the way.
 *
 * Exactness: the per-pixel steps are the CPU core's own (img/color_px.h,
 * compiled here as device functions), with the HSV->BGR formula of the
 * reference stack for each pixel's column (OpenCV's SIMD block columns and
 * its scalar row tail), and the dtype's value of each code is the entry
 * of the table detfeed_dtype_table builds on the host (looked up for f16
 * and bf16, computed with the same rounding for u8 and f32), so the bytes
 * are those of detfeed_hsv_apply_cv followed by detfeed_convert_chw. This file must be
 * compiled with -fmad=false and without fast math (CMakeLists.txt);
 * tests/mutation/run_cuda.sh shows the captured pixels fail otherwise.
 *
 * Work: blockIdx.y is the image; its blocks (blockIdx.x) first build the
 * image's colour plan and the dtype table in shared memory, 256 entries, one
 * per thread, then stride over the image four pixels per thread: three
 * 32-bit loads, three 4-element stores (one per plane). The next group's
 * loads are issued before the current group is computed (two groups in
 * flight a thread: the kernel waits on memory latency, not arithmetic), and
 * loads and stores are streaming (evict-first): each byte is read or
 * written once.
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

/* One block's tables. hue[h] holds the hue byte's fraction f (float bits)
 * and its sector's tap selection as a __byte_perm selector: nibble k (k = 0,
 * 1, 2 for B, G, R) picks which of the four tap codes t0..t3 becomes channel
 * k, nibble 3 picks a zero byte. val[v] holds the value byte's float (bits)
 * and OpenCV's sdiv[v]: both are indexed by the pixel's largest channel, so
 * one 8-byte load fetches them. out is the dtype table (the outputs that
 * look it up). */
template <typename T> struct block_tables {
    uint2 hue[256], val[256];
    float s[256];
    int32_t hdiv[256];
    T out[256];
};

/* The consumer's value of code c: the table detfeed_dtype_table builds on
 * the host. */
template <typename T>
__device__ __forceinline__ T out_value(const dtype_table &tab, int c)
{
    return (T)tab.v[c];
}

/* The 2-bit tap indices of OpenCV's sector table (color_px.h) as the
 * selector that picks them from a word of four codes. */
__device__ __forceinline__ uint32_t tap_selector(int32_t sel)
{
    return (uint32_t)(sel & 3) | (uint32_t)(sel >> 2 & 3) << 4 |
           (uint32_t)(sel >> 4 & 3) << 8 | 0x4000u;
}

template <typename T>
__device__ void tables_init(block_tables<T> *t, const dtype_table &tab,
                            const uint8_t *lut)
{
    int i = threadIdx.x;
    t->out[i] = out_value<T>(tab, i);
    if (lut != nullptr) {
        float f;
        int32_t sel;
        detfeed__hue_entry(lut[DETFEED_LUT_H * 256 + i], &f, &sel);
        t->hue[i] = make_uint2(__float_as_uint(f), tap_selector(sel));
        t->s[i] = detfeed__unit_entry(lut[DETFEED_LUT_S * 256 + i]);
        t->val[i] = make_uint2(
            __float_as_uint(detfeed__unit_entry(lut[DETFEED_LUT_V * 256 + i])),
            (uint32_t)detfeed__d_sdiv[i]);
        t->hdiv[i] = detfeed__d_hdiv[i];
    }
}

/* detfeed__f2code with the formula's rounding, in byte 0 of the result:
 * every tap lies in [0, v] with v <= 1, so y = c * 255 is in [0, 255] and
 * needs no clamp, and y + 1.5 * 2^23 (whose ulp is 1) holds y rounded to an
 * integer in its low mantissa bits: to nearest even, or truncated with the
 * addition rounded toward zero. An add, where a float-to-integer conversion
 * would take the slower conversion unit (test_cuda_kernel compares every
 * BGR triple under every formula with the CPU core). */
template <unsigned FORM> __device__ __forceinline__ uint32_t code_of(float c)
{
    float y = __fmul_rn(c, 255.0f);
    return __float_as_uint(FORM & DETFEED__HSV_ROUND ? __fadd_rn(y, 12582912.0f)
                                                     : __fadd_rz(y, 12582912.0f));
}

/* RandomHSV on one pixel with formula FORM (DETFEED__HSV_* flags): the
 * coloured B, G, R codes in bytes 0, 1, 2. The steps are color_px.h's
 * (detfeed__bgr2hsv_q12's range and hue, the taps of
 * detfeed__hsv2bgr_taps); the four tap codes are made and the sector's three
 * picked with one byte permute. */
template <unsigned FORM, typename T>
__device__ __forceinline__ uint32_t colour_px(const block_tables<T> &t, int32_t b,
                                              int32_t g, int32_t r)
{
    int32_t V, diff, H, S;
    detfeed__hsv_range(b, g, r, &V, &diff);
    uint2 val = t.val[V];
    detfeed__hsv_hs_q12(b, g, r, V, diff, (int32_t)val.y, t.hdiv[diff], &H, &S);
    uint2 hue = t.hue[H];
    float f = __uint_as_float(hue.x), s = t.s[S], v = __uint_as_float(val.x);
    float t1 = v * (1.0f - s);
    float t2 = FORM & DETFEED__HSV_FUSE_T2 ? detfeed__tap_fused(s, f, v)
                                           : detfeed__tap_unfused(s, f, v);
    float t3 = FORM & DETFEED__HSV_FUSE_T3 ? detfeed__tap_fused(s, 1.0f - f, v)
                                           : detfeed__tap_unfused(s, 1.0f - f, v);
    uint32_t lo = __byte_perm(code_of<FORM>(v), code_of<FORM>(t1), 0x0040u);
    uint32_t hi = __byte_perm(code_of<FORM>(t2), code_of<FORM>(t3), 0x0040u);
    return __byte_perm(__byte_perm(lo, hi, 0x5410u), 0, hue.y);
}

/* colour_px with a formula known only at run time. */
template <typename T>
__device__ uint32_t colour_px_any(const block_tables<T> &t, int32_t b, int32_t g,
                                  int32_t r, unsigned form)
{
    switch (form & 7u) {
    case 0:
        return colour_px<0>(t, b, g, r);
    case 1:
        return colour_px<1>(t, b, g, r);
    case 2:
        return colour_px<2>(t, b, g, r);
    case 3:
        return colour_px<3>(t, b, g, r);
    case 4:
        return colour_px<4>(t, b, g, r);
    case 5:
        return colour_px<5>(t, b, g, r);
    case 6:
        return colour_px<6>(t, b, g, r);
    default:
        return colour_px<7>(t, b, g, r);
    }
}

/* Byte k of w. */
__device__ __forceinline__ uint32_t byte_of(uint32_t w, int k)
{
    return __byte_perm(w, 0, 0x4440u + (uint32_t)k);
}

/* Byte k (a code c) of w as the float c * 2^-22, exactly: c's bits are the
 * denormal c * 2^-149, times 2^127. */
__device__ __forceinline__ float code_scaled(uint32_t w, int k)
{
    return __fmul_rn(__uint_as_float(byte_of(w, k)), 0x1p127f);
}

/* 1/255 as the float k255 (the CPU's 1.0f / 255) and the float k255_rest of
 * the remainder, both times 2^22 (the scale of code_scaled). */
constexpr float k255 = (1.0f / 255.0f) * 4194304.0f;
constexpr float k255_rest = (float)(1.0 / 255.0 - (double)(1.0f / 255.0f)) * 4194304.0f;

/* How byte k (a code c) of a word of codes becomes the consumer's element;
 * each gives the bits of detfeed_dtype_table's entry c. u8: the code. f32
 * with DETFEED_SCALE_QUOTIENT: c / 255 correctly rounded, as c * k255 +
 * c * k255_rest in one fma, which equals the CPU's quotient for all 256
 * codes (test_cuda_kernel compares every dtype). f32 reciprocal: c * k255,
 * the CPU's product (scaling by 2^22 changes no rounding). f16 and bf16:
 * the block's copy of the table. The arithmetic ones spare the kernel three
 * shared memory lookups a pixel, whose bank conflicts bound it. */
struct out_u8 {
    typedef uint8_t elem;
    __device__ static uint8_t of(const block_tables<elem> &, uint32_t w, int k)
    {
        return (uint8_t)byte_of(w, k);
    }
};
struct out_f32_quotient {
    typedef uint32_t elem;
    __device__ static uint32_t of(const block_tables<elem> &, uint32_t w, int k)
    {
        float c = code_scaled(w, k);
        return __float_as_uint(__fmaf_rn(c, k255, __fmul_rn(c, k255_rest)));
    }
};
struct out_f32_reciprocal {
    typedef uint32_t elem;
    __device__ static uint32_t of(const block_tables<elem> &, uint32_t w, int k)
    {
        return __float_as_uint(__fmul_rn(code_scaled(w, k), k255));
    }
};
struct out_table16 {
    typedef uint16_t elem;
    __device__ static uint16_t of(const block_tables<elem> &t, uint32_t w, int k)
    {
        return t.out[byte_of(w, k)];
    }
};

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

/* Whether the four pixels from column x lie in one row and all take the
 * SIMD block's formula. */
__device__ __forceinline__ bool group_in_block(const row_split &r, int x, bool mirrored)
{
    return x + 3 < r.width && (mirrored ? r.width - 1 - x : x + 3) < r.block_end;
}

/* Four consecutive elements of a plane (16-byte, 8-byte or 4-byte store). */
__device__ __forceinline__ void store4(uint32_t *d, uint32_t a, uint32_t b, uint32_t c,
                                       uint32_t e)
{
    __stcs(reinterpret_cast<uint4 *>(d), make_uint4(a, b, c, e));
}
__device__ __forceinline__ void store4(uint16_t *d, uint16_t a, uint16_t b, uint16_t c,
                                       uint16_t e)
{
    __stcs(reinterpret_cast<uint2 *>(d),
           make_uint2(a | (uint32_t)b << 16, c | (uint32_t)e << 16));
}
__device__ __forceinline__ void store4(uint8_t *d, uint8_t a, uint8_t b, uint8_t c,
                                       uint8_t e)
{
    __stcs(reinterpret_cast<uint32_t *>(d),
           a | (uint32_t)b << 8 | (uint32_t)c << 16 | (uint32_t)e << 24);
}

/* One image's planes and where its threads start and stride. */
template <typename T> struct planes {
    const uint8_t *in;
    T *r, *g, *b;
    int64_t first, step;
};

/* The 4-pixel groups of one image (width * height a multiple of 4: three
 * 32-bit loads per group), px[k] the BGR codes of pixel k in bytes 0-2;
 * with colour, groups inside the SIMD block take formula SIMD known at
 * compile time, the others (the row tail, a group across two rows) each
 * pixel's formula. */
template <int SIMD, typename Out, typename T = typename Out::elem>
__device__ void groups(const block_tables<T> &t, const planes<T> &p, int64_t hw,
                       const row_split &split, bool colour, bool mirrored)
{
    int w = split.width;
    int x = (int)(4 * p.first % w), inc = (int)(4 * p.step % w);
    const uint32_t *in = reinterpret_cast<const uint32_t *>(p.in);
    int64_t end = hw / 4;
    uint32_t n0 = 0, n1 = 0, n2 = 0, m0 = 0, m1 = 0, m2 = 0;
    if (p.first < end)
        n0 = __ldcs(in + 3 * p.first), n1 = __ldcs(in + 3 * p.first + 1),
        n2 = __ldcs(in + 3 * p.first + 2);
    if (p.first + p.step < end)
        m0 = __ldcs(in + 3 * (p.first + p.step)),
        m1 = __ldcs(in + 3 * (p.first + p.step) + 1),
        m2 = __ldcs(in + 3 * (p.first + p.step) + 2);
    for (int64_t q = p.first; q < end; q += p.step) {
        /* The loads of the group after next go out before this group is computed. */
        uint32_t w0 = n0, w1 = n1, w2 = n2;
        n0 = m0, n1 = m1, n2 = m2;
        int64_t next = q + 2 * p.step;
        if (next < end)
            m0 = __ldcs(in + 3 * next), m1 = __ldcs(in + 3 * next + 1),
            m2 = __ldcs(in + 3 * next + 2);
        uint32_t px[4] = {w0, __byte_perm(w0, w1, 0x0543), __byte_perm(w1, w2, 0x0432),
                          w2 >> 8};
        if (colour && SIMD >= 0 && group_in_block(split, x, mirrored)) {
            for (int k = 0; k < 4; k++)
                px[k] = colour_px<(unsigned)SIMD>(t, byte_of(px[k], 0),
                                                  byte_of(px[k], 1), byte_of(px[k], 2));
        } else if (colour) {
            for (int k = 0, xk = x; k < 4; k++, xk = xk + 1 < w ? xk + 1 : 0)
                px[k] = colour_px_any(t, byte_of(px[k], 0), byte_of(px[k], 1),
                                      byte_of(px[k], 2), form_at(split, xk, mirrored));
        }
        store4(p.b + 4 * q, Out::of(t, px[0], 0), Out::of(t, px[1], 0),
               Out::of(t, px[2], 0), Out::of(t, px[3], 0));
        store4(p.g + 4 * q, Out::of(t, px[0], 1), Out::of(t, px[1], 1),
               Out::of(t, px[2], 1), Out::of(t, px[3], 1));
        store4(p.r + 4 * q, Out::of(t, px[0], 2), Out::of(t, px[1], 2),
               Out::of(t, px[2], 2), Out::of(t, px[3], 2));
        x += inc;
        x -= x >= w ? w : 0;
    }
}

/* Asks L2 for this thread's first two 4-pixel groups of the image at `in`,
 * before its block builds the tables: their loads' latency and the tables'
 * arithmetic overlap. Float32 output only: there it saved 1.3-2.2 us a
 * launch at batches 8-64 on an H100, and cost 1-1.5 us with 8-bit output. */
__device__ __forceinline__ void prefetch_first_groups(const uint8_t *in, int64_t hw)
{
    int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    if (q < hw / 4)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(in + 12 * q));
    if (q + step < hw / 4)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(in + 12 * (q + step)));
}

/* One block per 256 threads, eight resident on an SM: the bound holds the
 * kernel to 32 registers a thread (40 without it, six blocks an SM), with
 * no spills (ptxas -v), while two groups' loads are in flight. */
template <typename Out, typename T = typename Out::elem>
__global__ void __launch_bounds__(256, 8)
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
    if (sizeof(T) == 4 && hw % 4 == 0)
        prefetch_first_groups(src + img * hw * 3, hw);
    tables_init(&t, tab, colour ? p : nullptr);
    __syncthreads();
    planes<T> pl;
    pl.in = src + img * hw * 3;
    pl.r = dst + img * 3 * hw, pl.g = pl.r + hw, pl.b = pl.g + hw;
    if (p != nullptr && (p[DETFEED__CUDA_PARAM_FLAG] & DETFEED__CUDA_PARAM_BGR) != 0) {
        T *first = pl.r; /* Format's bgr gate kept the channels */
        pl.r = pl.b, pl.b = first;
    }
    pl.step = (int64_t)gridDim.x * blockDim.x;
    pl.first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (hw % 4 == 0) { /* 4 pixels = 12 bytes, 4-byte aligned */
        switch (colour ? split.simd & 7u : 8u) {
        case 0:
            groups<0, Out>(t, pl, hw, split, colour, mirrored);
            break;
        case 1:
            groups<1, Out>(t, pl, hw, split, colour, mirrored);
            break;
        case 2:
            groups<2, Out>(t, pl, hw, split, colour, mirrored);
            break;
        case 3:
            groups<3, Out>(t, pl, hw, split, colour, mirrored);
            break;
        case 4:
            groups<4, Out>(t, pl, hw, split, colour, mirrored);
            break;
        case 5:
            groups<5, Out>(t, pl, hw, split, colour, mirrored);
            break;
        case 6:
            groups<6, Out>(t, pl, hw, split, colour, mirrored);
            break;
        case 7:
            groups<7, Out>(t, pl, hw, split, colour, mirrored);
            break;
        default:
            groups<-1, Out>(t, pl, hw, split, colour, mirrored);
            break;
        }
        return;
    }
    for (int64_t i = pl.first; i < hw; i += pl.step) {
        const uint8_t *in = pl.in + 3 * i;
        uint32_t px = in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16;
        if (colour)
            px = colour_px_any(t, in[0], in[1], in[2],
                               form_at(split, (int)(i % split.width), mirrored));
        pl.b[i] = Out::of(t, px, 0);
        pl.g[i] = Out::of(t, px, 1);
        pl.r[i] = Out::of(t, px, 2);
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
template <typename Out, typename T = typename Out::elem>
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
    if ((p[DETFEED__CUDA_PARAM_FLAG] & DETFEED__CUDA_PARAM_BGR) != 0) {
        T *first = r; /* Format's bgr gate kept the channels */
        r = b, b = first;
    }
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
        uint32_t c = px[0] | (uint32_t)px[1] << 8 | (uint32_t)px[2] << 16;
        if (colour)
            c = colour_px_any(t, px[0], px[1], px[2], form_at(split, x, mirrored));
        b[i] = Out::of(t, c, 0);
        g[i] = Out::of(t, c, 1);
        r[i] = Out::of(t, c, 2);
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

/* The 1024-pixel pieces of an image of hw pixels: the most blocks it gets. */
static int64_t pieces_of(int64_t hw)
{
    return (hw + 1023) / 1024;
}

/* Blocks per image: the batch shares `slots` blocks (a number of full waves
 * of resident blocks over the device), each image at least one block and no
 * more than it has pieces; the blocks then stride over their image. */
static unsigned blocks_per_image(int n, int64_t hw, int64_t slots)
{
    int64_t want = slots / n;
    int64_t most = pieces_of(hw);
    int64_t k = want < most ? want : most;
    return (unsigned)(k < 1 ? 1 : k > 65535 ? 65535 : k);
}

/* The colour kernel's grid for float32 output: four waves of blocks, not
 * one. With one, every block strides over its share of its image to the end
 * and the SMs' active cycles spread about -20%..+8% around their mean (a
 * profile on an H100): the launch waits for the slowest; four waves of blocks
 * with a quarter of the work each even the tail out (batch 64 float32: 80-84%
 * of copy bandwidth with one wave, 86-89% with four on an H100 and an H200).
 * Outputs of one and two bytes keep one wave: there every block's tables
 * weigh more than the tail, and four waves were slower at every batch
 * measured on both (up to 20% at batches 8-32, 0-5% at 64;
 * bench/run_kernel_variants.sh, bench/results). */
enum { COLOUR_WAVES = 4 };

/* Waves of blocks in the colour kernel's grid for n images of hw pixels in
 * output elements of `esize` bytes, `wave` blocks resident at once. Float32
 * keeps one wave where four would ask for more blocks than an image has
 * 1024-pixel pieces (blocks_per_image's cap binds: batch 8 at 640 on a 132-SM
 * device): every block would build its tables for a single piece. There one
 * wave took 17.6 us against four's 21.2 on an H200, 20.1 against 20.9 on an
 * H100. */
static int64_t colour_waves(size_t esize, int n, int64_t hw, int64_t wave)
{
    if (esize != 4)
        return 1;
    return COLOUR_WAVES * wave / n > pieces_of(hw) ? 1 : COLOUR_WAVES;
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

/* f(Out()) with Out the output of dtype and scale (a valid pair). */
template <typename F>
static cudaError_t by_output(detfeed_dtype dtype, detfeed_scale scale, F f)
{
    if (dtype == DETFEED_DTYPE_U8)
        return f(out_u8());
    if (dtype == DETFEED_DTYPE_F32)
        return scale == DETFEED_SCALE_RECIPROCAL ? f(out_f32_reciprocal())
                                                 : f(out_f32_quotient());
    return f(out_table16());
}

/* The smaller wave of the kernels of dtype's two scales, by `wave_fn`. */
template <typename W>
static int wave_of_dtype(detfeed_dtype dtype, int64_t *wave, W wave_fn)
{
    if (detfeed_dtype_size(dtype) == 0 || wave == nullptr)
        return DETFEED_EINVAL;
    int64_t w[2] = {0, 0};
    for (int scale = 0; scale < 2; scale++) {
        cudaError_t e = by_output(dtype, (detfeed_scale)scale,
                                  [&](auto out) { return wave_fn(out, &w[scale]); });
        if (e != cudaSuccess)
            return DETFEED_ECUDA;
    }
    *wave = w[0] < w[1] ? w[0] : w[1];
    return DETFEED_OK;
}

/* The checks both kernels' entry points make; esize the dtype's. */
static int check_batch(const void *src, int n, int width, int height, const void *dst,
                       size_t esize)
{
    if (src == nullptr || dst == nullptr || n < 1 || n > DETFEED_CUDA_MAX_IMAGES ||
        width < 1 || height < 1 || esize == 0 || (uintptr_t)dst % esize != 0)
        return DETFEED_EINVAL;
    return (int64_t)width * height > INT64_MAX / 12 / n ? DETFEED_EOVERFLOW
                                                        : DETFEED_OK;
}

template <typename Out, typename T = typename Out::elem>
static cudaError_t launch(const uint8_t *src, int n, int64_t hw, const uint8_t *params,
                          void *dst, const row_split &split, const dtype_table &tab,
                          int64_t wave, cudaStream_t stream)
{
    cudaError_t e = wave > 0 ? cudaSuccess : wave_of(colour_convert<Out>, &wave);
    if (e != cudaSuccess)
        return e;
    dim3 grid(blocks_per_image(n, hw, colour_waves(sizeof(T), n, hw, wave) * wave),
              (unsigned)n);
    colour_convert<Out>
        <<<grid, 256, 0, stream>>>(src, params, (T *)dst, hw, split, tab);
    return cudaGetLastError();
}

extern "C" int detfeed__cuda_color_wave(detfeed_dtype dtype, int64_t *wave)
{
    return wave_of_dtype(dtype, wave, [](auto out, int64_t *w) {
        return wave_of(colour_convert<decltype(out)>, w);
    });
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
    cudaError_t e = by_output(dtype, scale, [&](auto out) {
        return launch<decltype(out)>(src, n, hw, params, dst, split, tab, wave,
                                     (cudaStream_t)stream);
    });
    return e == cudaSuccess ? DETFEED_OK : DETFEED_ECUDA;
}

template <typename Out, typename T = typename Out::elem>
static cudaError_t
launch_recipe(const uint8_t *src, int n, int width, int64_t hw, const uint8_t *params,
              const detfeed__cuda_recipe *recipes, const uint8_t *arena, void *dst,
              const row_split &split, const dtype_table &tab, int64_t wave,
              cudaStream_t stream)
{
    cudaError_t e = wave > 0 ? cudaSuccess : wave_of(recipe_convert<Out>, &wave);
    if (e != cudaSuccess)
        return e;
    dim3 grid(blocks_per_image(n, hw, wave), (unsigned)n);
    recipe_convert<Out><<<grid, 256, 0, stream>>>(src, params, recipes, arena, (T *)dst,
                                                  width, hw, split, tab);
    return cudaGetLastError();
}

extern "C" int detfeed__cuda_recipe_wave(detfeed_dtype dtype, int64_t *wave)
{
    return wave_of_dtype(dtype, wave, [](auto out, int64_t *w) {
        return wave_of(recipe_convert<decltype(out)>, w);
    });
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
    cudaError_t e = by_output(dtype, scale, [&](auto out) {
        return launch_recipe<decltype(out)>(src, n, width, (int64_t)width * height,
                                            params, recipes, arena, dst, split, tab,
                                            wave, (cudaStream_t)stream);
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
