/*
 * convert.c - consumer dtypes: the 256-entry value tables and the CPU
 * conversion of HWC BGR codes to planar RGB (detfeed_dtype and detfeed_scale
 * in detfeed.h: f32 is code / 255, f16 and bf16 that value rounded to
 * nearest even).
 *
 * Every output value is a table lookup of the code, so the CPU route, the
 * GPU route and any consumer that uses the same table agree by construction.
 */
#include "convert_px.h"

#include <string.h>

/* binary32 -> binary16, round to nearest, ties to even; handles the whole
 * float range (subnormals, overflow to infinity, NaN stays NaN). */
static uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u, e = (x >> 23) & 0xffu, m = x & 0x7fffffu;
    if (e == 0xffu)
        return (uint16_t)(sign | 0x7c00u | (m ? 0x200u : 0u));
    int32_t he = (int32_t)e - 127 + 15;
    if (he >= 0x1f)
        return (uint16_t)(sign | 0x7c00u);
    if (he <= 0) {
        if (he < -10)
            return (uint16_t)sign;
        m |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - he);
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u),
                 half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t h = sign | ((uint32_t)he << 10) | (m >> 13), rem = m & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++; /* a carry into the exponent is the correct rounding */
    return (uint16_t)h;
}

/* binary32 -> bfloat16, round to nearest, ties to even; NaN stays NaN. */
static uint16_t f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static float code_value(int c, detfeed_scale scale)
{
    if (scale == DETFEED_SCALE_RECIPROCAL)
        return (float)c * (1.0f / 255.0f);
    return (float)c / 255.0f;
}

size_t detfeed_dtype_size(detfeed_dtype dtype)
{
    return detfeed__dtype_size(dtype);
}

const char *detfeed_dtype_name(detfeed_dtype dtype)
{
    static const char *const names[] = {"u8", "f32", "f16", "bf16"};
    return (unsigned)dtype < 4 ? names[dtype] : NULL;
}

int detfeed_dtype_parse(const char *name, detfeed_dtype *out)
{
    static const detfeed__named names[] = {
        {"u8", DETFEED_DTYPE_U8},         {"uint8", DETFEED_DTYPE_U8},
        {"f32", DETFEED_DTYPE_F32},       {"float32", DETFEED_DTYPE_F32},
        {"f16", DETFEED_DTYPE_F16},       {"float16", DETFEED_DTYPE_F16},
        {"half", DETFEED_DTYPE_F16},      {"bf16", DETFEED_DTYPE_BF16},
        {"bfloat16", DETFEED_DTYPE_BF16},
    };
    int v = 0;
    if (out == NULL)
        return DETFEED_EINVAL;
    int rc = detfeed__lookup(names, sizeof names / sizeof names[0], name, &v);
    if (rc == DETFEED_OK)
        *out = (detfeed_dtype)v;
    return rc;
}

int detfeed_dtype_table(detfeed_dtype dtype, detfeed_scale scale, void *table)
{
    if (table == NULL || detfeed_dtype_size(dtype) == 0 ||
        (unsigned)scale > DETFEED_SCALE_RECIPROCAL)
        return DETFEED_EINVAL;
    for (int c = 0; c < 256; c++) {
        float f = code_value(c, scale);
        switch (dtype) {
        case DETFEED_DTYPE_U8:
            ((uint8_t *)table)[c] = (uint8_t)c;
            break;
        case DETFEED_DTYPE_F32:
            ((float *)table)[c] = f;
            break;
        case DETFEED_DTYPE_F16:
            ((uint16_t *)table)[c] = f32_to_f16(f);
            break;
        case DETFEED_DTYPE_BF16:
            ((uint16_t *)table)[c] = f32_to_bf16(f);
            break;
        }
    }
    return DETFEED_OK;
}

/* One loop per element width; the table already holds the dtype's bits. */
#define DETFEED__CONVERT_LOOP(T)                                                       \
    do {                                                                               \
        const T *tab = (const T *)table;                                               \
        for (int y = 0; y < height; y++) {                                             \
            const uint8_t *s = src + (size_t)y * src_stride;                           \
            T *r = (T *)((uint8_t *)dst) + (size_t)y * width;                          \
            T *g = (T *)((uint8_t *)dst + plane_stride) + (size_t)y * width;           \
            T *b = (T *)((uint8_t *)dst + 2 * plane_stride) + (size_t)y * width;       \
            s += (size_t)x0 * 3;                                                       \
            for (int x = x0; x < width; x++, s += 3) {                                 \
                b[x] = tab[s[0]];                                                      \
                g[x] = tab[s[1]];                                                      \
                r[x] = tab[s[2]];                                                      \
            }                                                                          \
        }                                                                              \
    } while (0)

/* The variants of the conversion (core/internal.h): the portable table
 * loop, and AVX2 rows that leave it the last width % 16 columns. */
#define CONVERT_VARIANTS                                                               \
    (DETFEED__ISA_BIT(DETFEED_ISA_PORTABLE) | DETFEED__ISA_BUILT_AVX2)

int detfeed__convert_chw_isa(const uint8_t *src, size_t src_stride, int width,
                             int height, void *dst, size_t plane_stride,
                             detfeed_dtype dtype, detfeed_scale scale, detfeed_isa isa)
{
    size_t esize = detfeed_dtype_size(dtype), plane;
    if (!detfeed__bgr_geometry_ok(src, src_stride, width, height) || dst == NULL ||
        esize == 0)
        return DETFEED_EINVAL;
    if (!detfeed__mul_size((size_t)width, (size_t)height, &plane) ||
        !detfeed__mul_size(plane, esize, &plane) || plane_stride > SIZE_MAX / 3)
        return DETFEED_EOVERFLOW;
    if (plane_stride < plane || plane_stride % esize != 0 ||
        (uintptr_t)dst % esize != 0 ||
        detfeed__overlap(src,
                         detfeed__image_span(src_stride, (size_t)width * 3, height),
                         dst, 2 * plane_stride + plane))
        return DETFEED_EINVAL;
    int variant = detfeed__isa_pick(isa, CONVERT_VARIANTS);
    if (variant < 0)
        return (unsigned)isa > DETFEED_ISA_AVX512 ? DETFEED_EINVAL
                                                  : DETFEED_ENOTSUPPORTED;
    _Alignas(16) uint8_t table[256 * 4];
    int rc = detfeed_dtype_table(dtype, scale, table);
    if (rc != DETFEED_OK)
        return rc;
    int x0 = 0; /* the table loop's first column: after the vector kernel's */
    switch (variant) {
#ifdef DETFEED_HAVE_AVX2
    case DETFEED_ISA_AVX2:
        x0 = detfeed__convert_rows_avx2(src, src_stride, width, height, dst,
                                        plane_stride, dtype, scale);
        break;
#endif
    default:
        break;
    }
    switch (esize) {
    case 1:
        DETFEED__CONVERT_LOOP(uint8_t);
        break;
    case 2:
        DETFEED__CONVERT_LOOP(uint16_t);
        break;
    default:
        DETFEED__CONVERT_LOOP(uint32_t);
        break;
    }
    return DETFEED_OK;
}

int detfeed_convert_chw(const uint8_t *src, size_t src_stride, int width, int height,
                        void *dst, size_t plane_stride, detfeed_dtype dtype,
                        detfeed_scale scale)
{
    return detfeed__convert_chw_isa(src, src_stride, width, height, dst, plane_stride,
                                    dtype, scale, DETFEED_ISA_AUTO);
}
