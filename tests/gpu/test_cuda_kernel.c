/*
 * test_cuda_kernel.c - the device route's kernel against the CPU core, on a
 * CUDA device (exit 77, skipped, without one).
 *
 *   test_cuda_kernel             captured pixels, dtype tables, all 2^24
 *                                BGR triples under several gains in all four
 *                                dtypes (plus per-image gains in one launch),
 *                                all 2^24 triples through each row-tail
 *                                formula, and images whose widths leave a
 *                                tail (480, 500, 586, ...), plain and
 *                                mirrored, under every reference stack
 *   test_cuda_kernel --captured  the first two only (tests/mutation/run_cuda.sh)
 *
 * The reference is detfeed_hsv_apply_cv with the same stack followed by
 * detfeed_convert_chw; every byte of the kernel's output is compared and the
 * differing bytes counted.
 */
#include "testutil.h"

#include "cuda/cuda_host.h"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#define CUDA_OK(call) CHECK_INT((long long)(call), (long long)cudaSuccess)

/* The captured pixels of tests/unit/test_captured.c: OpenCV's RandomHSV
 * output for gains (0.01, -0.3, 0.2), in a SIMD block (a row of 64 on an
 * AVX2 code path), alone (a 1-pixel image: OpenCV's scalar code) and in
 * the SSE code path's SIMD block (unfused; OpenCV 4.6 and 5.1 with
 * cv2.setUseOptimized(False)). */
static const struct {
    uint8_t in[3], block[3], alone[3], sse[3];
} captured[] = {
    {{62, 188, 73}, {120, 225, 126}, {120, 225, 127}, {120, 225, 127}},
    {{80, 82, 188}, {135, 140, 225}, {135, 141, 225}, {135, 141, 225}},
};

/* The stack of the tests that do not vary it: OpenCV 4.x on an AVX2 CPU,
 * whatever this host's CPU is. */
static const detfeed_cv cv_default = {DETFEED_CV_4_DEBIAN, DETFEED_CV_CPU_AVX2, 0};

/* Device buffers of one run. */
typedef struct dev_bufs {
    uint8_t *src, *params;
    void *dst;
} dev_bufs;

/* Runs the kernel on n images of w x h from host memory, with per-image
 * params (NULL: none), and copies the result into out. */
static int run_kernel(const uint8_t *src, int n, int w, int h, const uint8_t *params,
                      const detfeed_cv *cv, void *out, detfeed_dtype dt,
                      detfeed_scale scale)
{
    size_t px = (size_t)n * w * h, esize = detfeed_dtype_size(dt);
    dev_bufs d = {0};
    int rc = DETFEED_ECUDA;
    if (cudaMalloc((void **)&d.src, px * 3) == cudaSuccess &&
        cudaMalloc(&d.dst, px * 3 * esize) == cudaSuccess &&
        (params == NULL ||
         cudaMalloc((void **)&d.params, (size_t)n * DETFEED__CUDA_PARAM_STRIDE) ==
             cudaSuccess) &&
        cudaMemcpy(d.src, src, px * 3, cudaMemcpyHostToDevice) == cudaSuccess &&
        (params == NULL ||
         cudaMemcpy(d.params, params, (size_t)n * DETFEED__CUDA_PARAM_STRIDE,
                    cudaMemcpyHostToDevice) == cudaSuccess)) {
        rc = detfeed_cuda_color_convert(d.src, n, w, h, d.params, cv, d.dst, dt, scale,
                                        NULL);
        if (rc == DETFEED_OK && (cudaDeviceSynchronize() != cudaSuccess ||
                                 cudaMemcpy(out, d.dst, px * 3 * esize,
                                            cudaMemcpyDeviceToHost) != cudaSuccess))
            rc = DETFEED_ECUDA;
    }
    cudaFree(d.src);
    cudaFree(d.dst);
    cudaFree(d.params);
    return rc;
}

/* One image's params: its tables for the gains, and the flag byte
 * (DETFEED__CUDA_PARAM_COLOUR, optionally | DETFEED__CUDA_PARAM_MIRRORED,
 * or 0). */
static void make_params(uint8_t *p, const double g[3], unsigned flag)
{
    memset(p, 0, DETFEED__CUDA_PARAM_STRIDE);
    CHECK_INT(detfeed_hsv_lut(g[0], g[1], g[2], (uint8_t(*)[256])p), 0);
    p[DETFEED__CUDA_PARAM_FLAG] = (uint8_t)flag;
}

/* Flips each row of a w x h BGR image left-right, from src into dst. */
static void flip_rows(const uint8_t *src, uint8_t *dst, int w, int h)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            memcpy(dst + ((size_t)y * w + (w - 1 - x)) * 3,
                   src + ((size_t)y * w + x) * 3, 3);
}

/* The captured pixels through the kernel, as codes and as f32: a row of 64
 * (the 4-pixel path, all SIMD block) on the AVX2 and the SSE code path,
 * whose block formulas differ in their fused steps; a row of 24 (the
 * 4-pixel path, narrower than the AVX2 block: all scalar code) and a single
 * pixel (the 1-pixel path, scalar code). */
static void test_captured(void)
{
    static const double g[3] = {0.01, -0.3, 0.2};
    static const detfeed_cv cv_sse = {DETFEED_CV_4_DEBIAN, DETFEED_CV_CPU_SSE, 0};
    static const struct {
        int width;
        const detfeed_cv *cv;
        int which; /* 0: block, 1: alone, 2: sse */
    } cases[] = {{64, &cv_default, 0},
                 {64, &cv_sse, 2},
                 {24, &cv_default, 1},
                 {1, &cv_default, 1}};
    uint8_t params[DETFEED__CUDA_PARAM_STRIDE];
    make_params(params, g, DETFEED__CUDA_PARAM_COLOUR);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int width = cases[k].width;
        uint8_t row[64 * 3], codes[64 * 3];
        float vals[64 * 3];
        for (int i = 0; i < width; i++)
            memcpy(row + 3 * i, captured[i % 2].in, 3);
        CHECK_INT(run_kernel(row, 1, width, 1, params, cases[k].cv, codes,
                             DETFEED_DTYPE_U8, DETFEED_SCALE_QUOTIENT),
                  0);
        CHECK_INT(run_kernel(row, 1, width, 1, params, cases[k].cv, vals,
                             DETFEED_DTYPE_F32, DETFEED_SCALE_QUOTIENT),
                  0);
        int bad = 0;
        for (int i = 0; i < width; i++) {
            const uint8_t *out = cases[k].which == 0   ? captured[i % 2].block
                                 : cases[k].which == 1 ? captured[i % 2].alone
                                                       : captured[i % 2].sse;
            for (int c = 0; c < 3; c++) { /* plane c is R, G, B: BGR byte 2 - c */
                uint8_t want = out[2 - c];
                bad += codes[c * width + i] != want;
                bad += vals[c * width + i] != (float)want / 255.0f;
            }
        }
        printf("captured pixels, width %d, %s: %d wrong values\n", width,
               cases[k].cv == &cv_sse ? "sse" : "avx2", bad);
        CHECK_INT(bad, 0);
    }
}

/* Every code converted only: the f32 values are the quotient (or the
 * reciprocal product), f16 and bf16 the library's tables, u8 the code. */
static void test_tables(void)
{
    uint8_t img[256 * 3];
    for (int c = 0; c < 256; c++)
        img[3 * c] = img[3 * c + 1] = img[3 * c + 2] = (uint8_t)c;
    for (int scale = 0; scale <= 1; scale++) {
        float vals[256 * 3];
        CHECK_INT(run_kernel(img, 1, 16, 16, NULL, &cv_default, vals, DETFEED_DTYPE_F32,
                             (detfeed_scale)scale),
                  0);
        int bad = 0;
        for (int i = 0; i < 256 * 3; i++) {
            int c = i % 256;
            float want = scale ? (float)c * (1.0f / 255.0f) : (float)c / 255.0f;
            bad += memcmp(&vals[i], &want, 4) != 0;
        }
        printf("f32 values of all codes (%s): %d wrong\n",
               scale ? "reciprocal" : "quotient", bad);
        CHECK_INT(bad, 0);
    }
    for (int dt = DETFEED_DTYPE_U8; dt <= DETFEED_DTYPE_BF16; dt++) {
        uint8_t table[256 * 4], out[256 * 3 * 4];
        size_t es = detfeed_dtype_size((detfeed_dtype)dt);
        CHECK_INT(detfeed_dtype_table((detfeed_dtype)dt, DETFEED_SCALE_QUOTIENT, table),
                  0);
        CHECK_INT(run_kernel(img, 1, 256, 1, NULL, &cv_default, out, (detfeed_dtype)dt,
                             DETFEED_SCALE_QUOTIENT),
                  0);
        int bad = 0;
        for (int i = 0; i < 256 * 3; i++)
            bad += memcmp(out + i * es, table + (i % 256) * es, es) != 0;
        CHECK_INT(bad, 0);
    }
}

/* The reference for n images: colour (where flagged) then conversion. A
 * mirrored image was flipped after its colour step: it is flipped back,
 * coloured, and flipped again, so each pixel sees the formula of the column
 * it was coloured in. tmp holds 2 images. */
static void reference(const uint8_t *src, int n, int w, int h, const uint8_t *params,
                      const detfeed_cv *cv, uint8_t *tmp, uint8_t *out,
                      detfeed_dtype dt, detfeed_scale scale)
{
    size_t one = (size_t)w * h * 3, es = detfeed_dtype_size(dt);
    for (int i = 0; i < n; i++) {
        const uint8_t *p = params + (size_t)i * DETFEED__CUDA_PARAM_STRIDE;
        const uint8_t *img = src + i * one;
        unsigned flag = p[DETFEED__CUDA_PARAM_FLAG];
        if (flag & DETFEED__CUDA_PARAM_COLOUR) {
            uint8_t *in = (uint8_t *)img;
            if (flag & DETFEED__CUDA_PARAM_MIRRORED) {
                flip_rows(img, tmp + one, w, h);
                in = tmp + one;
            }
            CHECK_INT(detfeed_hsv_apply_cv(in, (size_t)w * 3, tmp, (size_t)w * 3, w, h,
                                           (const uint8_t(*)[256])p, cv,
                                           DETFEED_ISA_AUTO),
                      0);
            if (flag & DETFEED__CUDA_PARAM_MIRRORED) {
                flip_rows(tmp, tmp + one, w, h);
                memcpy(tmp, tmp + one, one);
            }
            img = tmp;
        }
        CHECK_INT(detfeed_convert_chw(img, (size_t)w * 3, w, h, out + i * one * es,
                                      (size_t)w * h * es, dt, scale),
                  0);
    }
}

static size_t count_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += a[i] != b[i];
    return d;
}

/* All 2^24 triples as 16 images of 1024 x 1024 (pixel k = (k >> 16,
 * (k >> 8) & 255, k & 255)) under each gain set, and once with a different
 * gain set per image (some not coloured at all). */
static void test_all_triples(void)
{
    static const double gains[][3] = {
        {0, 0, 0},            /* colour with identity tables: not a no-op */
        {0.01, -0.3, 0.2},    /* the captured case */
        {0.015, 0.7, 0.4},    /* Ultralytics' default maxima */
        {-0.015, -0.7, -0.4}, /* and minima */
        {0.0149, 0.0, 0.0},   /* hue wraps past 179 */
        {-0.0149, 0.0, 0.0},  /* hue wraps below 0 */
        {0.5, -1.0, 1.0},     /* extremes */
        {-0.5, 1.0, -1.0},
        {0.9999, 3.0, -0.999},
    };
    const int ng = sizeof gains / sizeof gains[0], n = 16, w = 1024, h = 1024;
    size_t px = (size_t)n * w * h;
    uint8_t *src = malloc(px * 3), *tmp = malloc((size_t)w * h * 3 * 2);
    uint8_t *want = malloc(px * 3 * 4), *got = malloc(px * 3 * 4);
    uint8_t *params = malloc((size_t)n * DETFEED__CUDA_PARAM_STRIDE);
    CHECK(src && tmp && want && got && params);
    if (!(src && tmp && want && got && params))
        return;
    for (size_t k = 0; k < px; k++) {
        src[3 * k] = (uint8_t)(k >> 16);
        src[3 * k + 1] = (uint8_t)(k >> 8);
        src[3 * k + 2] = (uint8_t)k;
    }
    size_t compared = 0, differ = 0;
    for (int gi = 0; gi <= ng; gi++) { /* gi == ng: mixed, per image */
        for (int i = 0; i < n; i++)
            make_params(params + (size_t)i * DETFEED__CUDA_PARAM_STRIDE,
                        gains[gi < ng ? gi : i % ng],
                        gi < ng || i % 5 != 4 ? DETFEED__CUDA_PARAM_COLOUR : 0);
        for (int dt = DETFEED_DTYPE_U8; dt <= DETFEED_DTYPE_BF16; dt++) {
            for (int scale = 0; scale <= (dt == DETFEED_DTYPE_F32); scale++) {
                size_t bytes = px * 3 * detfeed_dtype_size((detfeed_dtype)dt);
                reference(src, n, w, h, params, &cv_default, tmp, want,
                          (detfeed_dtype)dt, (detfeed_scale)scale);
                CHECK_INT(run_kernel(src, n, w, h, params, &cv_default, got,
                                     (detfeed_dtype)dt, (detfeed_scale)scale),
                          0);
                size_t d = count_diff(want, got, bytes);
                compared += bytes;
                differ += d;
                if (gi < ng)
                    printf("gains (%g, %g, %g)", gains[gi][0], gains[gi][1],
                           gains[gi][2]);
                else
                    printf("per-image gains   ");
                printf(" %-4s %-10s: %zu bytes compared, %zu differ\n",
                       detfeed_dtype_name((detfeed_dtype)dt),
                       scale ? "reciprocal" : "quotient", bytes, d);
                CHECK_INT((long long)d, 0);
            }
        }
    }
    printf("all 2^24 triples: %zu bytes compared, %zu differ\n", compared, differ);
    free(src);
    free(tmp);
    free(want);
    free(got);
    free(params);
}

/* The stacks compared below: every version on every code path, and this
 * host's own. */
static const detfeed_cv stacks[] = {TU_CV_STACKS,
                                    {DETFEED_CV_5_1, DETFEED_CV_CPU_AUTO, 1}};
#define NSTACKS ((int)(sizeof stacks / sizeof stacks[0]))

/* Compares the kernel with the reference for n images of w x h in `src`
 * under `cv`, dtype u8 and f32; returns the differing bytes. */
static size_t compare_stack(const uint8_t *src, int n, int w, int h,
                            const uint8_t *params, const detfeed_cv *cv,
                            size_t *compared)
{
    size_t px = (size_t)n * w * h, differ = 0;
    uint8_t *tmp = malloc((size_t)w * h * 3 * 2);
    uint8_t *want = malloc(px * 3 * 4), *got = malloc(px * 3 * 4);
    if (!CHECK(tmp && want && got))
        goto done;
    for (int dt = DETFEED_DTYPE_U8; dt <= DETFEED_DTYPE_F32; dt++) {
        size_t bytes = px * 3 * detfeed_dtype_size((detfeed_dtype)dt);
        reference(src, n, w, h, params, cv, tmp, want, (detfeed_dtype)dt,
                  DETFEED_SCALE_QUOTIENT);
        CHECK_INT(run_kernel(src, n, w, h, params, cv, got, (detfeed_dtype)dt,
                             DETFEED_SCALE_QUOTIENT),
                  0);
        differ += count_diff(want, got, bytes);
        *compared += bytes;
    }
done:
    free(tmp);
    free(want);
    free(got);
    return differ;
}

/* All 2^24 triples in images narrower than one SIMD block (8 pixels wide:
 * all OpenCV scalar code, on every stack), so each row-tail formula sees
 * every input. */
static void test_all_triples_tail(void)
{
    const int n = 16, w = 8, h = (1 << 20) / 8;
    size_t px = (size_t)n * w * h;
    uint8_t *src = malloc(px * 3),
            *params = malloc((size_t)n * DETFEED__CUDA_PARAM_STRIDE);
    if (!CHECK(src && params)) {
        free(src);
        free(params);
        return;
    }
    for (size_t k = 0; k < px; k++) {
        src[3 * k] = (uint8_t)(k >> 16);
        src[3 * k + 1] = (uint8_t)(k >> 8);
        src[3 * k + 2] = (uint8_t)k;
    }
    static const double g[3] = {0.01, -0.3, 0.2};
    for (int i = 0; i < n; i++)
        make_params(params + (size_t)i * DETFEED__CUDA_PARAM_STRIDE, g,
                    DETFEED__CUDA_PARAM_COLOUR);
    for (int k = 0; k < NSTACKS; k++) {
        size_t compared = 0,
               d = compare_stack(src, n, w, h, params, &stacks[k], &compared);
        printf("all 2^24 triples, row tail, stack %d: %zu bytes compared, %zu differ\n",
               k, compared, d);
        CHECK_INT((long long)d, 0);
    }
    free(src);
    free(params);
}

/* Random images whose widths leave a row tail after the SIMD blocks (and
 * some that do not), several heights so that the kernel's 4-pixel groups
 * straddle rows, per-image gains, one image mirrored (flipped after its
 * colour step), one not coloured, under every stack. */
static void test_tail_widths(void)
{
    static const int widths[] = {586, 480, 500, 613, 997, 640, 1,
                                 3,   7,   33,  63,  65,  97,  130};
    static const int heights[] = {2, 3, 5};
    const int n = 3;
    uint64_t rng = 99;
    size_t compared = 0, differ = 0;
    uint8_t *params = malloc((size_t)n * DETFEED__CUDA_PARAM_STRIDE);
    if (!CHECK(params != NULL))
        return;
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        for (size_t hi = 0; hi < sizeof heights / sizeof heights[0]; hi++) {
            int w = widths[wi], h = heights[hi];
            size_t bytes = (size_t)n * w * h * 3;
            uint8_t *src = malloc(bytes);
            if (!CHECK(src != NULL))
                break;
            for (size_t i = 0; i < bytes; i++)
                src[i] = (uint8_t)tu_rand(&rng);
            for (int i = 0; i < n; i++) {
                double g[3] = {tu_uniform(&rng, -1, 1) * 0.015,
                               tu_uniform(&rng, -1, 1) * 0.7,
                               tu_uniform(&rng, -1, 1) * 0.4};
                /* image 0 mirrored, 1 coloured, 2 not coloured */
                unsigned flag =
                    i == 0   ? DETFEED__CUDA_PARAM_COLOUR | DETFEED__CUDA_PARAM_MIRRORED
                    : i == 1 ? DETFEED__CUDA_PARAM_COLOUR
                             : 0;
                make_params(params + (size_t)i * DETFEED__CUDA_PARAM_STRIDE, g, flag);
            }
            for (int k = 0; k < NSTACKS; k++) {
                size_t d = compare_stack(src, n, w, h, params, &stacks[k], &compared);
                if (d != 0)
                    printf("width %d, height %d, stack %d: %zu bytes differ\n", w, h, k,
                           d);
                differ += d;
            }
            free(src);
        }
    }
    printf("tail widths, %d stacks: %zu bytes compared, %zu differ\n", NSTACKS,
           compared, differ);
    CHECK_INT((long long)differ, 0);
    free(params);
}

int main(int argc, char **argv)
{
    const char *why = NULL;
    if (detfeed_cuda_device_count(&why) == 0) {
        printf("test_cuda_kernel: skipped: %s\n", why);
        return 77;
    }
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
        printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
    test_captured();
    test_tables();
    if (argc < 2 || strcmp(argv[1], "--captured") != 0) {
        test_all_triples();
        test_all_triples_tail();
        test_tail_widths();
    }
    return tu_finish("test_cuda_kernel");
}
