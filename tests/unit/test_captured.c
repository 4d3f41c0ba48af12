/*
 * test_captured.c - captured pixels where the exact float arithmetic of
 * OpenCV's HSV->BGR shows: each output below changes when
 *   - t2 = v * (1 - s * f) is not fused          (pixel A),
 *   - t3 = v * (1 - s * (1 - f)) is not fused    (pixel B),
 *   - c * 255 is rounded instead of truncated    (A and B),
 *   - the hue position is h / 30 instead of h * (6.0f / 180) (A),
 *   - s is S / 255 instead of S * (1.0f / 255)               (A and B),
 *   - v is V / 255 instead of V * (1.0f / 255)               (A and B).
 * Gains (0.01, -0.3, 0.2). The expected bytes are OpenCV 4.6's RandomHSV
 * output for these pixels (tests/oracle/test_color_oracle.py re-checks them
 * against cv2), found by a search over all 2^24 pixels with each mutation
 * (tests/mutation/find_captured.c). tests/mutation/run.sh builds the colour
 * core with each mutation and requires this test to fail.
 *
 * `out` is the pixel inside OpenCV's SIMD block (a row of 64 on an AVX2
 * code path); `alone` the pixel as a 1-pixel image, which OpenCV converts
 * with its scalar code (rounding; the same bytes in 4.6, 5.0 and 5.1);
 * `sse` the pixel inside the SIMD block of the SSE code path (unfused;
 * cv2.setUseOptimized(False) in 4.6 and 5.1).
 */
#include "testutil.h"

#include <string.h>

static const struct {
    uint8_t in[3], out[3], alone[3], sse[3];
} captured[] = {
    {{62, 188, 73}, {120, 225, 126}, {120, 225, 127}, {120, 225, 127}}, /* A */
    {{80, 82, 188}, {135, 140, 225}, {135, 141, 225}, {135, 141, 225}}, /* B */
};

/* The stacks these bytes are from: OpenCV 4.x on an AVX2 CPU, and on its
 * SSE code path. */
static const detfeed_cv cv = {DETFEED_CV_4_DEBIAN, DETFEED_CV_CPU_AVX2, 0};
static const detfeed_cv cv_sse = {DETFEED_CV_4_DEBIAN, DETFEED_CV_CPU_SSE, 0};

int main(void)
{
    uint8_t lut[3][256];
    CHECK_INT(detfeed_hsv_lut(0.01, -0.3, 0.2, lut), 0);
    for (int isa = DETFEED_ISA_PORTABLE; isa <= DETFEED_ISA_AVX512; isa++) {
        if (!detfeed_isa_available((detfeed_isa)isa))
            continue;
        /* A row of 64 (one AVX-512 step) alternating A and B, so the vector
         * body of each implementation sees them, and one pixel alone for the
         * scalar tails. */
        uint8_t row[64 * 3];
        for (int i = 0; i < 64; i++)
            memcpy(row + 3 * i, captured[i % 2].in, 3);
        CHECK_INT(detfeed_hsv_apply_cv(row, sizeof row, row, sizeof row, 64, 1, lut,
                                       &cv, (detfeed_isa)isa),
                  0);
        for (int i = 0; i < 64; i++)
            CHECK(memcmp(row + 3 * i, captured[i % 2].out, 3) == 0);
        for (int i = 0; i < 64; i++)
            memcpy(row + 3 * i, captured[i % 2].in, 3);
        CHECK_INT(detfeed_hsv_apply_cv(row, sizeof row, row, sizeof row, 64, 1, lut,
                                       &cv_sse, (detfeed_isa)isa),
                  0);
        for (int i = 0; i < 64; i++)
            CHECK(memcmp(row + 3 * i, captured[i % 2].sse, 3) == 0);
        /* A row of 24, alternating A and B: narrower than the stack's
         * 32-pixel block, so all of it is OpenCV's scalar code, which the
         * vector kernels compute for the tails of wider rows. */
        for (int i = 0; i < 24; i++)
            memcpy(row + 3 * i, captured[i % 2].in, 3);
        CHECK_INT(detfeed_hsv_apply_cv(row, 24 * 3, row, 24 * 3, 24, 1, lut, &cv,
                                       (detfeed_isa)isa),
                  0);
        for (int i = 0; i < 24; i++)
            CHECK(memcmp(row + 3 * i, captured[i % 2].alone, 3) == 0);
        for (int k = 0; k < 2; k++) {
            uint8_t px[3];
            memcpy(px, captured[k].in, 3);
            CHECK_INT(
                detfeed_hsv_apply_cv(px, 3, px, 3, 1, 1, lut, &cv, (detfeed_isa)isa),
                0);
            CHECK(memcmp(px, captured[k].alone, 3) == 0);
        }
    }
    return tu_finish("test_captured");
}
