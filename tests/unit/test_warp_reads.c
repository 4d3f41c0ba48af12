/*
 * test_warp_reads.c - the mosaic canvas is built only where RandomPerspective's
 * warp reads it (detfeed__warp_reads): for random affine matrices (scale,
 * rotation, shear, translation, mirrored), under every OpenCV stack and CPU
 * path, a source whose pixels outside the rectangle are replaced by other
 * values warps to the same bytes; a zoom into the centre reads a small part.
 */
#include "aug/geometry.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SW = 320, SH = 288, OW = 160, OH = 144 };

static double uniform(unsigned *seed, double lo, double hi)
{
    return lo + (hi - lo) * (rand_r(seed) / (double)RAND_MAX);
}

static void random_matrix(unsigned *seed, float M[9])
{
    double s = uniform(seed, 0.25, 2.5), a = uniform(seed, -3.14159265, 3.14159265);
    double sh = uniform(seed, -0.7, 0.7), flip = rand_r(seed) % 4 == 0 ? -1 : 1;
    double m[6] = {s * cos(a) * flip, -s * sin(a) + sh, uniform(seed, -SW, OW),
                   s * sin(a),        s * cos(a),       uniform(seed, -SH, OH)};
    for (int k = 0; k < 6; k++)
        M[k] = (float)m[k];
    M[6] = M[7] = 0, M[8] = 1;
}

static bool same_warp(const float M[9], const detfeed_cv *cv, unsigned *seed)
{
    static uint8_t src[SH][SW][3], other[SH][SW][3], out1[OH][OW][3], out2[OH][OW][3];
    detfeed__rect r = detfeed__warp_reads(M, false, SW, SH, OW, OH);
    for (int y = 0; y < SH; y++)
        for (int x = 0; x < SW; x++)
            for (int c = 0; c < 3; c++) {
                src[y][x][c] = (uint8_t)rand_r(seed);
                bool in = x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1;
                other[y][x][c] = in ? src[y][x][c] : (uint8_t)(src[y][x][c] ^ 0x5A);
            }
    double Md[6];
    for (int k = 0; k < 6; k++)
        Md[k] = M[k];
    const uint8_t border[3] = {114, 114, 114};
    int rc1 = detfeed_warp_affine_cv(&src[0][0][0], SW * 3, SW, SH, &out1[0][0][0],
                                     OW * 3, OW, OH, Md, border, cv);
    int rc2 = detfeed_warp_affine_cv(&other[0][0][0], SW * 3, SW, SH, &out2[0][0][0],
                                     OW * 3, OW, OH, Md, border, cv);
    return CHECK_INT(rc1, 0) && CHECK_INT(rc2, 0) &&
           CHECK(memcmp(out1, out2, sizeof out1) == 0);
}

int main(void)
{
    const detfeed_cv_version versions[] = {DETFEED_CV_4, DETFEED_CV_5_0, DETFEED_CV_5_1,
                                           DETFEED_CV_4_DEBIAN};
    const detfeed_cv_cpu cpus[] = {DETFEED_CV_CPU_SSE, DETFEED_CV_CPU_AVX2,
                                   DETFEED_CV_CPU_AVX512};
    unsigned seed = 11;
    for (int v = 0; v < 4; v++)
        for (int c = 0; c < 3; c++)
            for (int i = 0; i < 60; i++) {
                float M[9];
                random_matrix(&seed, M);
                detfeed_cv cv = {versions[v], cpus[c], 1};
                if (!same_warp(M, &cv, &seed)) {
                    fprintf(stderr, "  stack %d cpu %d matrix %d\n", v, c, i);
                    return tu_finish("test_warp_reads");
                }
            }
    /* a 2x zoom of the centre reads about a quarter of the source */
    float zoom[9] = {2, 0, -(float)SW + OW / 2.0f, 0, 2, -(float)SH + OH / 2.0f, 0,
                     0, 1};
    detfeed__rect r = detfeed__warp_reads(zoom, false, SW, SH, OW, OH);
    CHECK((r.x1 - r.x0) < SW / 2 + 16 && (r.y1 - r.y0) < SH / 2 + 16);
    r = detfeed__warp_reads(zoom, true, SW, SH, OW, OH); /* perspective: all */
    CHECK(r.x0 == 0 && r.y0 == 0 && r.x1 == SW && r.y1 == SH);
    return tu_finish("test_warp_reads");
}
