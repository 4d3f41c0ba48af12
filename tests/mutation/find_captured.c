/*
 * find_captured.c - searches the pixels whose RandomHSV output changes under
 * each arithmetic mutation of HSV->BGR, for given gains. Not a test: it is how
 * the pixels of tests/unit/test_captured.c were found.
 *
 *   cc -O2 -ffp-contract=off -mfma -Iinclude tests/mutation/find_captured.c \
 *      build/libdetfeed.a -lspng -lm -o find_captured && ./find_captured 0.01 -0.3 0.2
 *
 * The model below is the specification (color_px.h) with switches; M_NONE must
 * reproduce detfeed_hsv_apply exactly, which the program checks.
 */
#include "detfeed_img.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M_T2 = 1, M_T3 = 2, M_ROUND = 4, M_HDIV = 8, M_SDIV = 16, M_VDIV = 32 };
static const char *const names[] = {"t2 unfused", "t3 unfused", "round",
                                    "hue h/30",   "s = S/255",  "v = V/255"};

static uint8_t code(float c, int m)
{
    float q = c * 255.0f;
    int r = (m & M_ROUND) ? (int)rintf(q) : (int)truncf(q);
    return (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
}

static void model(int H, int S, int V, int m, uint8_t out[3])
{
    static const uint8_t taps[6][3] = {{1, 3, 0}, {1, 0, 2}, {3, 0, 1},
                                       {0, 2, 1}, {0, 1, 3}, {2, 1, 0}};
    float h = (float)H;
    float s = (m & M_SDIV) ? (float)S / 255.0f : (float)S * (1.0f / 255.0f);
    float v = (m & M_VDIV) ? (float)V / 255.0f : (float)V * (1.0f / 255.0f);
    float x = (m & M_HDIV) ? h / 30.0f : h * (6.0f / 180.0f);
    float pre = truncf(x), f = x - pre, q = truncf(pre * (1.0f / 6.0f));
    int sec = (int)(pre - q * 6.0f);
    float t[4] = {
        v, v * (1.0f - s), (m & M_T2) ? v * (1.0f - s * f) : v * fmaf(-s, f, 1.0f),
        (m & M_T3) ? v * (1.0f - s * (1.0f - f)) : v * fmaf(-s, 1.0f - f, 1.0f)};
    for (int c = 0; c < 3; c++)
        out[c] = code(t[taps[sec][c]], m);
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return fprintf(stderr, "usage: %s DH DS DV\n", argv[0]), 2;
    uint8_t lut[3][256];
    detfeed_hsv_lut(atof(argv[1]), atof(argv[2]), atof(argv[3]), lut);
    size_t n = (size_t)1 << 24;
    uint8_t *bgr = malloc(n * 3), *hsv = malloc(n * 3), *out = malloc(n * 3);
    for (size_t k = 0; k < n; k++) {
        bgr[3 * k] = (uint8_t)(k >> 16);
        bgr[3 * k + 1] = (uint8_t)(k >> 8);
        bgr[3 * k + 2] = (uint8_t)k;
    }
    detfeed_bgr_to_hsv(bgr, 4096 * 3, hsv, 4096 * 3, 4096, 4096);
    detfeed_hsv_apply(bgr, 4096 * 3, out, 4096 * 3, 4096, 4096, lut, DETFEED_ISA_AUTO);
    long count[6] = {0}, best_mask = 0;
    size_t best[64] = {0};
    for (size_t k = 0; k < n; k++) {
        const uint8_t *p = hsv + 3 * k;
        uint8_t ref[3], o[3];
        model(lut[0][p[0]], lut[1][p[1]], lut[2][p[2]], 0, ref);
        if (memcmp(ref, out + 3 * k, 3) != 0)
            return fprintf(stderr, "model differs from detfeed at pixel %zu\n", k), 1;
        int mask = 0;
        for (int i = 0; i < 6; i++) {
            model(lut[0][p[0]], lut[1][p[1]], lut[2][p[2]], 1 << i, o);
            if (memcmp(ref, o, 3) != 0) {
                mask |= 1 << i;
                count[i]++;
            }
        }
        if (!best[mask])
            best[mask] = k + 1;
        best_mask |= mask;
    }
    for (int i = 0; i < 6; i++)
        printf("%-12s changes %ld of 2^24 pixels\n", names[i], count[i]);
    for (int mask = 63; mask > 0; mask--) {
        if (!best[mask] || __builtin_popcount((unsigned)mask) < 4)
            continue;
        size_t k = best[mask] - 1;
        printf("mask %2d: bgr (%d,%d,%d) -> (%d,%d,%d)\n", mask, bgr[3 * k],
               bgr[3 * k + 1], bgr[3 * k + 2], out[3 * k], out[3 * k + 1],
               out[3 * k + 2]);
    }
    free(bgr);
    free(hsv);
    free(out);
    return 0;
}
