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

/* One pixel of each of the three operations, for for_each_pixel(). */
typedef void (*pixel_fn)(const uint8_t *s, uint8_t *d, const detfeed__hsv_plan *plan);

static void px_fused(const uint8_t *s, uint8_t *d, const detfeed__hsv_plan *plan)
{
    int32_t H, S, V;
    detfeed__bgr2hsv_px(s[0], s[1], s[2], &H, &S, &V);
    detfeed__hsv2bgr_px(plan, H, S, V, d);
}

static void px_bgr2hsv(const uint8_t *s, uint8_t *d, const detfeed__hsv_plan *plan)
{
    (void)plan;
    int32_t H, S, V;
    detfeed__bgr2hsv_px(s[0], s[1], s[2], &H, &S, &V);
    d[0] = (uint8_t)H;
    d[1] = (uint8_t)S;
    d[2] = (uint8_t)V;
}

static void px_hsv2bgr(const uint8_t *s, uint8_t *d, const detfeed__hsv_plan *plan)
{
    detfeed__hsv2bgr_px(plan, s[0], s[1], s[2], d);
}

/* Applies fn to every pixel; each call reads its source pixel before it
 * writes, so in place works. */
static void for_each_pixel(const uint8_t *src, size_t src_stride, uint8_t *dst,
                           size_t dst_stride, int width, int height, pixel_fn fn,
                           const detfeed__hsv_plan *plan)
{
    for (int y = 0; y < height; y++) {
        const uint8_t *s = src + (size_t)y * src_stride;
        uint8_t *d = dst + (size_t)y * dst_stride;
        for (int x = 0; x < width; x++, s += 3, d += 3)
            fn(s, d, plan);
    }
}

void detfeed__hsv_rows_portable(const uint8_t *src, size_t src_stride, uint8_t *dst,
                                size_t dst_stride, int width, int height,
                                const detfeed__hsv_plan *plan)
{
    for_each_pixel(src, src_stride, dst, dst_stride, width, height, px_fused, plan);
}

int detfeed_isa_available(detfeed_isa isa)
{
    switch (isa) {
    case DETFEED_ISA_AUTO:
    case DETFEED_ISA_PORTABLE:
        return 1;
    case DETFEED_ISA_AVX2:
#ifdef DETFEED_HAVE_AVX2
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
        return 0;
#endif
    case DETFEED_ISA_AVX512:
#ifdef DETFEED_HAVE_AVX512
        return __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("fma");
#else
        return 0;
#endif
    }
    return 0;
}

detfeed_isa detfeed_isa_best(void)
{
    if (detfeed_isa_available(DETFEED_ISA_AVX512))
        return DETFEED_ISA_AVX512;
    if (detfeed_isa_available(DETFEED_ISA_AVX2))
        return DETFEED_ISA_AVX2;
    return DETFEED_ISA_PORTABLE;
}

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

int detfeed_hsv_apply(const uint8_t *src, size_t src_stride, uint8_t *dst,
                      size_t dst_stride, int width, int height,
                      const uint8_t lut[3][256], detfeed_isa isa)
{
    int rc = check_images(src, src_stride, dst, dst_stride, width, height);
    if (rc != DETFEED_OK)
        return rc;
    if (lut == NULL || (unsigned)isa > DETFEED_ISA_AVX512)
        return DETFEED_EINVAL;
    if (!detfeed_isa_available(isa))
        return DETFEED_ENOTSUPPORTED;
    if (isa == DETFEED_ISA_AUTO)
        isa = detfeed_isa_best();
    detfeed__hsv_plan plan;
    detfeed__hsv_plan_build(&plan, lut);
#ifdef DETFEED_HAVE_AVX512
    if (isa == DETFEED_ISA_AVX512) {
        detfeed__hsv_plan hue_plan;
        detfeed__hsv_plan_build(&hue_plan, NULL);
        detfeed__hsv_rows_avx512(src, src_stride, dst, dst_stride, width, height, &plan,
                                 &hue_plan, lut);
        return DETFEED_OK;
    }
#endif
#ifdef DETFEED_HAVE_AVX2
    if (isa == DETFEED_ISA_AVX2) {
        detfeed__hsv_rows_avx2(src, src_stride, dst, dst_stride, width, height, &plan);
        return DETFEED_OK;
    }
#endif
    detfeed__hsv_rows_portable(src, src_stride, dst, dst_stride, width, height, &plan);
    return DETFEED_OK;
}

int detfeed_bgr_to_hsv(const uint8_t *src, size_t src_stride, uint8_t *dst,
                       size_t dst_stride, int width, int height)
{
    int rc = check_images(src, src_stride, dst, dst_stride, width, height);
    if (rc == DETFEED_OK)
        for_each_pixel(src, src_stride, dst, dst_stride, width, height, px_bgr2hsv,
                       NULL);
    return rc;
}

int detfeed_hsv_to_bgr(const uint8_t *src, size_t src_stride, uint8_t *dst,
                       size_t dst_stride, int width, int height)
{
    int rc = check_images(src, src_stride, dst, dst_stride, width, height);
    if (rc != DETFEED_OK)
        return rc;
    detfeed__hsv_plan plan;
    detfeed__hsv_plan_build(&plan, NULL);
    for_each_pixel(src, src_stride, dst, dst_stride, width, height, px_hsv2bgr, &plan);
    return DETFEED_OK;
}
