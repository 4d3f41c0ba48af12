/*
 * color.c - the colour core: RandomHSV tables, OpenCV-exact BGR<->HSV and
 * the fused colour operation, with the choice between implementations.
 */
#include "color_px.h"
#include "core/internal.h"

#include <math.h>
#include <string.h>

/* NumPy's float remainder (npy_divmod): fmod, then moved into the sign of
 * the divisor; a zero result is +0. */
static double floor_mod(double a, double b)
{
    double m = fmod(a, b);
    if (m != 0.0) {
        if ((b < 0) != (m < 0))
            m += b;
    } else {
        m = copysign(0.0, b);
    }
    return m;
}

/* NumPy's astype(uint8) of an in-range float64: truncation toward zero. */
static uint8_t trunc_u8(double x)
{
    return (uint8_t)(int)x;
}

static double clip255(double x)
{
    return x < 0.0 ? 0.0 : x > 255.0 ? 255.0 : x;
}

int detfeed_hsv_lut(double dh, double ds, double dv, uint8_t lut[3][256])
{
    if (lut == NULL || !isfinite(dh) || !isfinite(ds) || !isfinite(dv))
        return DETFEED_EINVAL;
    double shift = dh * 180.0, gs = 1.0 + ds, gv = 1.0 + dv;
    for (int i = 0; i < 256; i++) {
        double x = (double)i;
        lut[DETFEED_LUT_H][i] = trunc_u8(floor_mod(x + shift, 180.0));
        lut[DETFEED_LUT_S][i] = trunc_u8(clip255(x * gs));
        lut[DETFEED_LUT_V][i] = trunc_u8(clip255(x * gv));
    }
    lut[DETFEED_LUT_S][0] = 0;
    return DETFEED_OK;
}

void detfeed__hsv_plan_build(detfeed__hsv_plan *plan, const uint8_t lut[3][256])
{
    for (int i = 0; i < 256; i++) {
        int h = lut ? lut[DETFEED_LUT_H][i] : i;
        int s = lut ? lut[DETFEED_LUT_S][i] : i;
        int v = lut ? lut[DETFEED_LUT_V][i] : i;
        detfeed__hue_entry(h, &plan->f[i], &plan->sel[i]);
        plan->s[i] = detfeed__unit_entry(s);
        plan->v[i] = detfeed__unit_entry(v);
    }
}

/*
 * OpenCV's HSV->BGR per stack, calibrated on all 2^24 HSV triples laid out
 * as a 4096 x 4096 image (every pixel in the SIMD block) and as a 2^21 x 8
 * image (every pixel in the scalar code), 0 differing inputs for each row of
 * this table:
 *
 *   code path    block  SIMD block          scalar tail
 *   SSE          16     trunc, unfused      round, unfused
 *   AVX2         32     trunc, t2 t3 fused  round, t2 fused (Debian's 4.6)
 *                                           round, t2 t3 fused (the wheels)
 *   AVX-512      64 in 5.1, else as AVX2    as AVX2
 *
 * Measured builds: Debian's OpenCV 4.6.0 (GCC 12.2) and the
 * opencv-python-headless 4.12.0.88, 5.0.0.93 and 5.1.0.95 wheels, on an
 * AVX-512 CPU with the default dispatch (AVX2 in 4.6 and 5.0, AVX512_SKX in
 * 5.1), with OPENCV_CPU_DISABLE=AVX512-SKX (5.1: AVX2), and with
 * cv2.setUseOptimized(False) or OPENCV_CPU_DISABLE=AVX2 (baseline and SSE4.1
 * variants, which agree). The fusions are the compiler's doing (GCC
 * contracts the vector and scalar multiply-subtracts of the FMA-enabled
 * variants), which is why they differ between Debian's build and the
 * wheels.
 */
int detfeed__hsv_stack_of(const detfeed_cv *cv, detfeed__hsv_stack *out)
{
    if (cv == NULL || out == NULL || (unsigned)cv->version > DETFEED_CV_4_DEBIAN ||
        (unsigned)cv->cpu > DETFEED_CV_CPU_AVX512)
        return DETFEED_EINVAL;
    detfeed_cv_cpu cpu = detfeed_cv_cpu_resolve(cv->cpu);
    if (cpu == DETFEED_CV_CPU_SSE) {
        out->block = 16;
        out->simd = 0;
        out->tail = DETFEED__HSV_ROUND;
        return DETFEED_OK;
    }
    const unsigned fused = DETFEED__HSV_FUSE_T2 | DETFEED__HSV_FUSE_T3;
    out->block =
        cpu == DETFEED_CV_CPU_AVX512 && cv->version == DETFEED_CV_5_1 ? 64 : 32;
    out->simd = fused;
    out->tail = DETFEED__HSV_ROUND |
                (cv->version == DETFEED_CV_4_DEBIAN ? DETFEED__HSV_FUSE_T2 : fused);
    return DETFEED_OK;
}

/* One pixel of the two conversions, for for_each_pixel(). */
typedef void (*pixel_fn)(const uint8_t *s, uint8_t *d, const detfeed__hsv_plan *plan,
                         unsigned form);

static void px_bgr2hsv(const uint8_t *s, uint8_t *d, const detfeed__hsv_plan *plan,
                       unsigned form)
{
    (void)plan, (void)form;
    int32_t H, S, V;
    detfeed__bgr2hsv_px(s[0], s[1], s[2], &H, &S, &V);
    d[0] = (uint8_t)H;
    d[1] = (uint8_t)S;
    d[2] = (uint8_t)V;
}

static void px_hsv2bgr(const uint8_t *s, uint8_t *d, const detfeed__hsv_plan *plan,
                       unsigned form)
{
    detfeed__hsv2bgr_px(plan, s[0], s[1], s[2], form, d);
}

/* Applies fn to n pixels; each call reads its source pixel before it
 * writes, so in place works. */
static void pixels(const uint8_t *s, uint8_t *d, int n, pixel_fn fn,
                   const detfeed__hsv_plan *plan, unsigned form)
{
    for (int x = 0; x < n; x++, s += 3, d += 3)
        fn(s, d, plan, form);
}

/* Applies fn to every pixel, with the stack's formula for each column (or
 * none: st NULL). */
static void for_each_pixel(const uint8_t *src, size_t src_stride, uint8_t *dst,
                           size_t dst_stride, int width, int height, pixel_fn fn,
                           const detfeed__hsv_plan *plan, const detfeed__hsv_stack *st)
{
    int nb = st ? detfeed__hsv_block_end(st, width) : width;
    for (int y = 0; y < height; y++) {
        const uint8_t *s = src + (size_t)y * src_stride;
        uint8_t *d = dst + (size_t)y * dst_stride;
        pixels(s, d, nb, fn, plan, st ? st->simd : 0);
        pixels(s + (size_t)nb * 3, d + (size_t)nb * 3, width - nb, fn, plan,
               st ? st->tail : 0);
    }
}

/* The fused operation on n pixels, `form` a constant where inlined. */
static inline __attribute__((always_inline)) void
fused_pixels(const uint8_t *s, uint8_t *d, int n, const detfeed__hsv_plan *plan,
             unsigned form)
{
    for (int x = 0; x < n; x++, s += 3, d += 3) {
        int32_t H, S, V;
        detfeed__bgr2hsv_px(s[0], s[1], s[2], &H, &S, &V);
        detfeed__hsv2bgr_px(plan, H, S, V, form, d);
    }
}

/* One copy of the loop for the SIMD block formulas, whose pixels are most
 * of an image, so that their choices are made at compile time. */
void detfeed__hsv_span_portable(const uint8_t *src, uint8_t *dst, int n,
                                size_t readable, const detfeed__hsv_plan *plan,
                                unsigned form)
{
    (void)readable;
    switch (form) {
    case DETFEED__HSV_FUSE_T2 | DETFEED__HSV_FUSE_T3:
        fused_pixels(src, dst, n, plan, DETFEED__HSV_FUSE_T2 | DETFEED__HSV_FUSE_T3);
        break;
    case 0:
        fused_pixels(src, dst, n, plan, 0);
        break;
    default:
        fused_pixels(src, dst, n, plan, form);
        break;
    }
}

/* Rows through a span kernel: the block columns, then the tail. */
static void rows_by_span(const uint8_t *src, size_t src_stride, uint8_t *dst,
                         size_t dst_stride, int width, int height,
                         const detfeed__hsv_plan *plan, const detfeed__hsv_stack *st,
                         detfeed__hsv_span_fn span)
{
    int nb = detfeed__hsv_block_end(st, width);
    size_t row = (size_t)width * 3, head = (size_t)nb * 3;
    for (int y = 0; y < height; y++) {
        const uint8_t *s = src + (size_t)y * src_stride;
        uint8_t *d = dst + (size_t)y * dst_stride;
        span(s, d, nb, row, plan, st->simd);
        span(s + head, d + head, width - nb, row - head, plan, st->tail);
    }
}

/* The variants of the fused operation (core/internal.h). */
#define HSV_VARIANTS DETFEED__ISA_BUILT

/* Checks the arguments shared by the three image functions. */
static int check_images(const uint8_t *src, size_t src_stride, const uint8_t *dst,
                        size_t dst_stride, int width, int height)
{
    if (!detfeed__bgr_geometry_ok(src, src_stride, width, height) ||
        !detfeed__bgr_geometry_ok(dst, dst_stride, width, height))
        return DETFEED_EINVAL;
    size_t row = (size_t)width * 3;
    size_t ns = detfeed__image_span(src_stride, row, height);
    size_t nd = detfeed__image_span(dst_stride, row, height);
    if (ns == 0 || nd == 0)
        return DETFEED_EOVERFLOW;
    if (detfeed__partial_overlap(src, ns, dst, nd) ||
        (src == dst && src_stride != dst_stride))
        return DETFEED_EINVAL;
    return DETFEED_OK;
}

void detfeed__hsv_apply_stack(const uint8_t *src, size_t src_stride, uint8_t *dst,
                              size_t dst_stride, int width, int height,
                              const uint8_t lut[3][256], const detfeed__hsv_stack *st,
                              detfeed_isa isa)
{
    detfeed__hsv_span_fn span = detfeed__hsv_span_portable;
    switch (detfeed__isa_pick(isa, HSV_VARIANTS)) {
#ifdef DETFEED_HAVE_AVX512
    case DETFEED_ISA_AVX512: {
        detfeed__hsv_plan hue_plan;
        detfeed__hsv_plan_build(&hue_plan, NULL);
        detfeed__hsv_rows_avx512(src, src_stride, dst, dst_stride, width, height,
                                 &hue_plan, lut, st);
        return;
    }
#endif
#ifdef DETFEED_HAVE_AVX2
    case DETFEED_ISA_AVX2:
        span = detfeed__hsv_span_avx2;
        break;
#endif
    default:
        break;
    }
    detfeed__hsv_plan plan;
    detfeed__hsv_plan_build(&plan, lut);
    rows_by_span(src, src_stride, dst, dst_stride, width, height, &plan, st, span);
}

int detfeed_hsv_apply_cv(const uint8_t *src, size_t src_stride, uint8_t *dst,
                         size_t dst_stride, int width, int height,
                         const uint8_t lut[3][256], const detfeed_cv *cv,
                         detfeed_isa isa)
{
    int rc = check_images(src, src_stride, dst, dst_stride, width, height);
    if (rc != DETFEED_OK)
        return rc;
    detfeed__hsv_stack st;
    if (lut == NULL || (unsigned)isa > DETFEED_ISA_AVX512 ||
        detfeed__hsv_stack_of(cv, &st) != DETFEED_OK)
        return DETFEED_EINVAL;
    if (detfeed__isa_pick(isa, HSV_VARIANTS) < 0)
        return DETFEED_ENOTSUPPORTED;
    detfeed__hsv_apply_stack(src, src_stride, dst, dst_stride, width, height, lut, &st,
                             isa);
    return DETFEED_OK;
}

/* The stack of the functions without one: Debian 12's OpenCV 4.6 on this
 * CPU (what they followed before stacks existed). */
static const detfeed_cv default_cv = {DETFEED_CV_4_DEBIAN, DETFEED_CV_CPU_AUTO, 0};

int detfeed_hsv_apply(const uint8_t *src, size_t src_stride, uint8_t *dst,
                      size_t dst_stride, int width, int height,
                      const uint8_t lut[3][256], detfeed_isa isa)
{
    return detfeed_hsv_apply_cv(src, src_stride, dst, dst_stride, width, height, lut,
                                &default_cv, isa);
}

int detfeed_bgr_to_hsv(const uint8_t *src, size_t src_stride, uint8_t *dst,
                       size_t dst_stride, int width, int height)
{
    int rc = check_images(src, src_stride, dst, dst_stride, width, height);
    if (rc == DETFEED_OK)
        for_each_pixel(src, src_stride, dst, dst_stride, width, height, px_bgr2hsv,
                       NULL, NULL);
    return rc;
}

int detfeed_hsv_to_bgr_cv(const uint8_t *src, size_t src_stride, uint8_t *dst,
                          size_t dst_stride, int width, int height,
                          const detfeed_cv *cv)
{
    int rc = check_images(src, src_stride, dst, dst_stride, width, height);
    if (rc != DETFEED_OK)
        return rc;
    detfeed__hsv_stack st;
    if (detfeed__hsv_stack_of(cv, &st) != DETFEED_OK)
        return DETFEED_EINVAL;
    detfeed__hsv_plan plan;
    detfeed__hsv_plan_build(&plan, NULL);
    for_each_pixel(src, src_stride, dst, dst_stride, width, height, px_hsv2bgr, &plan,
                   &st);
    return DETFEED_OK;
}

int detfeed_hsv_to_bgr(const uint8_t *src, size_t src_stride, uint8_t *dst,
                       size_t dst_stride, int width, int height)
{
    return detfeed_hsv_to_bgr_cv(src, src_stride, dst, dst_stride, width, height,
                                 &default_cv);
}
