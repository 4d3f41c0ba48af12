/*
 * test_convert_isa.c - the conversion's variants give the same bytes: the
 * portable table loop, forced with DETFEED_ISA_PORTABLE, against the
 * vector variant (AVX2 where this CPU and build have it) and AUTO, for
 * every dtype and scale, widths on both sides of the vector step (16
 * pixels) and padded source rows. Also the refusals of an isa the
 * conversion cannot run.
 */
#include "img/convert_px.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

/* Converts one image with `isa` into a fresh buffer (NULL on failure). */
static uint8_t *convert(const uint8_t *src, size_t stride, int w, int h,
                        detfeed_dtype dtype, detfeed_scale scale, detfeed_isa isa,
                        size_t *bytes)
{
    size_t plane = (size_t)w * (size_t)h * detfeed_dtype_size(dtype);
    *bytes = 3 * plane;
    uint8_t *dst = malloc(*bytes + 16);
    if (dst == NULL)
        return NULL;
    memset(dst, 0xa5, *bytes + 16);
    int rc = detfeed__convert_chw_isa(src, stride, w, h, dst, plane, dtype, scale, isa);
    if (!CHECK_INT(rc, DETFEED_OK)) {
        free(dst);
        return NULL;
    }
    return dst;
}

/* The variants against the forced portable one on one geometry. */
static void compare(int w, int h, int pad, uint64_t *seed)
{
    size_t stride = (size_t)w * 3 + (size_t)pad;
    uint8_t *src = malloc(stride * (size_t)h);
    if (!CHECK(src != NULL))
        return;
    for (size_t i = 0; i < stride * (size_t)h; i++)
        src[i] = (uint8_t)tu_rand(seed);
    const detfeed_isa vector[] = {DETFEED_ISA_AUTO, DETFEED_ISA_AVX2};
    for (int d = DETFEED_DTYPE_U8; d <= DETFEED_DTYPE_BF16; d++) {
        for (int sc = 0; sc <= DETFEED_SCALE_RECIPROCAL; sc++) {
            size_t nb = 0, nv = 0;
            uint8_t *ref = convert(src, stride, w, h, (detfeed_dtype)d,
                                   (detfeed_scale)sc, DETFEED_ISA_PORTABLE, &nb);
            for (size_t k = 0; ref != NULL && k < 2; k++) {
                if (!detfeed_isa_available(vector[k]))
                    continue;
                uint8_t *got = convert(src, stride, w, h, (detfeed_dtype)d,
                                       (detfeed_scale)sc, vector[k], &nv);
                if (got != NULL && !CHECK(memcmp(got, ref, nb + 16) == 0))
                    fprintf(stderr, "  w %d h %d pad %d dtype %d scale %d isa %d\n", w,
                            h, pad, d, sc, (int)vector[k]);
                free(got);
            }
            free(ref);
        }
    }
    free(src);
}

int main(void)
{
    uint64_t seed = 16;
    const int widths[] = {1, 7, 15, 16, 17, 31, 32, 33, 64, 100, 257};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        compare(widths[i], 3, 0, &seed);
        compare(widths[i], 2, 5, &seed);
    }
    compare(640, 480, 0, &seed);

    /* What the conversion cannot run is refused, not silently replaced. */
    uint8_t px[3] = {1, 2, 3}, out[3];
    CHECK_INT(detfeed__convert_chw_isa(px, 3, 1, 1, out, 1, DETFEED_DTYPE_U8,
                                       DETFEED_SCALE_QUOTIENT, DETFEED_ISA_AVX512),
              DETFEED_ENOTSUPPORTED);
    CHECK_INT(detfeed__convert_chw_isa(px, 3, 1, 1, out, 1, DETFEED_DTYPE_U8,
                                       DETFEED_SCALE_QUOTIENT, (detfeed_isa)9),
              DETFEED_EINVAL);
    CHECK_INT(detfeed__convert_chw_isa(px, 3, 1, 1, out, 1, DETFEED_DTYPE_U8,
                                       DETFEED_SCALE_QUOTIENT, DETFEED_ISA_PORTABLE),
              DETFEED_OK);
    CHECK(out[0] == 3 && out[1] == 2 && out[2] == 1);
    if (!detfeed_isa_available(DETFEED_ISA_AVX2))
        printf("note: no AVX2 here; only the portable variant and AUTO compared\n");
    return tu_finish("test_convert_isa");
}
