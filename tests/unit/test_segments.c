/*
 * test_segments.c - polygon resampling, cv2.fillPoly's rasterisation and
 * the overlap mask order. The exact comparisons against NumPy and OpenCV
 * 4.6 are in tests/oracle (test_augment_oracle.py); these are hand-checked
 * cases and a plain reference rasteriser.
 */
#include "aug/masks.h"
#include "aug/segments.h"
#include "core/npsort.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_resample(void)
{
    /* A unit square of 4 points to 8: closed to 5 points, 3 samples at
     * linspace(0, 4, 3) = 0, 2, 4 merged with the vertices 0..4, each vertex
     * before an equal sample. */
    const float sq[8] = {0, 0, 1, 0, 1, 1, 0, 1};
    float out[16];
    detfeed__resample(sq, 4, 8, out);
    const float want[16] = {0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0};
    CHECK(memcmp(out, want, sizeof want) == 0);
    /* A polygon of exactly `count` points is kept. */
    float same[8];
    detfeed__resample(sq, 4, 4, same);
    CHECK(memcmp(same, sq, sizeof sq) == 0);
    /* Fewer samples than points: linspace(0, 4, 3) only. */
    float few[6];
    detfeed__resample(sq, 4, 3, few);
    const float want_few[6] = {0, 0, 1, 1, 0, 0};
    CHECK(memcmp(few, want_few, sizeof want_few) == 0);
    /* Midpoints interpolate: the segment (0,0)-(1,0) at 0.5. */
    const float seg2[4] = {0, 0, 1, 0};
    float mid[10];
    detfeed__resample(seg2, 2, 5, mid); /* closed: 3 points, linspace(0, 2, 2) */
    CHECK(mid[0] == 0 && mid[2] == 0 && mid[4] == 1 && mid[6] == 0 && mid[8] == 0);
    int starts[3] = {0, 5, 1200};
    CHECK_INT(detfeed__resample_count(starts, 1), 1000);
    CHECK_INT(detfeed__resample_count(starts, 2), 1196);
}

static bool fill_equals(int w, int h, const int32_t *pts, int m, const char *want)
{
    uint8_t img[64] = {0};
    detfeed__fill_poly(img, w, h, pts, m, 1);
    for (int i = 0; i < w * h; i++)
        if (img[i] != (uint8_t)(want[i] - '0'))
            return false;
    return true;
}

static void test_fill_hand(void)
{
    /* Checked by hand against cv2.fillPoly (OpenCV 4.6). A triangle whose
     * right edge leaves column 2 at row 1: spans ceil(left)..floor(right). */
    const int32_t tri[6] = {1, 0, 2, 0, 1, 2};
    CHECK(fill_equals(3, 3, tri, 3,
                      "011"
                      "010"
                      "010"));
    /* Vertices on the far border (x = w, y = h): the edges use the
     * unclipped vertices; the lines are clipped. */
    const int32_t edge[6] = {3, 1, 0, 5, 1, 5};
    CHECK(fill_equals(3, 5, edge, 3,
                      "000"
                      "000"
                      "001"
                      "011"
                      "110"));
    /* A square includes both borders. */
    const int32_t sq[8] = {1, 1, 3, 1, 3, 3, 1, 3};
    CHECK(fill_equals(5, 4, sq, 4,
                      "00000"
                      "01110"
                      "01110"
                      "01110"));
    /* A degenerate polygon on one row is its line only. */
    const int32_t flat[4] = {0, 1, 3, 1};
    CHECK(fill_equals(4, 2, flat, 2,
                      "0000"
                      "1111"));
}

/* Point-in-polygon by crossings, in double: the straightforward reference. */
static bool inside(const double *p, int m, double x, double y)
{
    bool in = false;
    for (int i = 0, j = m - 1; i < m; j = i++) {
        double xi = p[2 * i], yi = p[2 * i + 1], xj = p[2 * j], yj = p[2 * j + 1];
        if ((yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi)
            in = !in;
    }
    return in;
}

/* Distance from (x, y) to the polygon's outline. */
static double outline_distance(const double *p, int m, double x, double y)
{
    double best = INFINITY;
    for (int i = 0, j = m - 1; i < m; j = i++) {
        double ax = p[2 * j], ay = p[2 * j + 1], dx = p[2 * i] - ax,
               dy = p[2 * i + 1] - ay;
        double l2 = dx * dx + dy * dy,
               t = l2 > 0 ? ((x - ax) * dx + (y - ay) * dy) / l2 : 0;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        double ex = ax + t * dx - x, ey = ay + t * dy - y;
        best = fmin(best, sqrt(ex * ex + ey * ey));
    }
    return best;
}

/* Random star-shaped polygons: every pixel whose point lies more than one
 * pixel inside must be filled, and none more than one pixel outside. */
static void test_fill_reference(void)
{
    enum { W = 48, H = 40 };
    uint64_t rng = 11;
    uint8_t *img = malloc(W * H);
    int bad = 0;
    for (int t = 0; t < 300; t++) {
        int m = 3 + (int)(tu_rand(&rng) % 20);
        int32_t pts[2 * 24];
        double p[2 * 24];
        for (int k = 0; k < m; k++) {
            double a = 2 * 3.141592653589793 * (k + tu_uniform(&rng, 0, 0.9)) / m;
            double r = tu_uniform(&rng, 3, 18);
            pts[2 * k] = (int32_t)fmin(fmax(W / 2.0 + r * cos(a), 0), W);
            pts[2 * k + 1] = (int32_t)fmin(fmax(H / 2.0 + r * sin(a), 0), H);
            p[2 * k] = pts[2 * k], p[2 * k + 1] = pts[2 * k + 1];
        }
        memset(img, 0, W * H);
        detfeed__fill_poly(img, W, H, pts, m, 1);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                bool in = inside(p, m, x, y);
                double d = outline_distance(p, m, x, y);
                if (d > 1.0 && img[y * W + x] != (in ? 1 : 0))
                    bad++;
            }
    }
    CHECK_INT(bad, 0);
    free(img);
}

/* The stacks of the mask tests: Ultralytics 8.4 and 8.3 with NumPy's
 * scalar argsort. */
static const detfeed__stack st84 = {.ultralytics = 804, .numpy = 2};
static const detfeed__stack st83 = {.ultralytics = 803, .numpy = 2};

/* Two nested squares and an empty polygon: the empty one first (its negated
 * unsigned area is 0), then the large, then the small one painted last. */
static void test_overlap_order(void)
{
    enum { S = 32, NPT = 4 };
    float seg[3][NPT][2] = {{{2, 2}, {29, 2}, {29, 29}, {2, 29}},
                            {{30, 30}, {30, 30}, {30, 30}, {30, 30}},
                            {{8, 8}, {15, 8}, {15, 15}, {8, 15}}};
    detfeed__inst in = {0};
    CHECK_INT(detfeed__inst_reserve(&in, 3, 0), DETFEED_OK);
    CHECK_INT(detfeed__inst_reserve_seg(&in, 3, NPT), DETFEED_OK);
    in.n = 3;
    memcpy(in.seg, seg, sizeof seg);
    for (int i = 0; i < 3; i++) {
        in.cls[i] = (float)(10 + i);
        memset(in.box + 4 * i, 0, 4 * sizeof(float));
    }
    uint8_t mask[(S / 4) * (S / 4)];
    int order[3];
    CHECK_INT(detfeed__masks_overlap(&in, S, S, 4, &st84, mask, order), DETFEED_OK);
    /* The single point (30, 30) fills one pixel, which the resize to a
     * quarter averages away: an empty mask. */
    CHECK(order[0] == 1 && order[1] == 0 && order[2] == 2);
    CHECK_INT(mask[0], 0);         /* outside everything */
    CHECK_INT(mask[1 * 8 + 1], 2); /* the big square: value 2 */
    CHECK_INT(mask[3 * 8 + 3], 3); /* the small one on top */
    CHECK_INT(detfeed__format_masks(&in, S, S, &st84, NULL), DETFEED_OK);
    CHECK(in.cls[0] == 11 && in.cls[1] == 10 && in.cls[2] == 12);
    detfeed__inst_free(&in);
}

/* Instances with n polygons of 4 points (zero boxes), for the masks. */
static void make_inst(detfeed__inst *in, int n, const float *pts)
{
    CHECK_INT(detfeed__inst_reserve(in, n, 0), DETFEED_OK);
    CHECK_INT(detfeed__inst_reserve_seg(in, n, 4), DETFEED_OK);
    in->n = n;
    memcpy(in->seg, pts, (size_t)n * 8 * sizeof *pts);
    for (int i = 0; i < n; i++) {
        in->cls[i] = (float)i;
        memset(in->box + 4 * i, 0, 4 * sizeof(float));
    }
}

/* More than 255 instances: an int32 mask (np.int32 in Ultralytics), each
 * 4 x 4 square one mask pixel valued by its place in the order. */
static void test_overlap_wide(void)
{
    enum { N = 300, W = 160, H = 120, MW = W / 4 };
    static float pts[N * 8];
    for (int i = 0; i < N; i++) {
        float x = (float)(8 * (i % 20)), y = (float)(8 * (i / 20));
        const float sq[8] = {x, y, x + 3, y, x + 3, y + 3, x, y + 3};
        memcpy(pts + 8 * i, sq, sizeof sq);
    }
    detfeed__inst in = {0};
    make_inst(&in, N, pts);
    CHECK_INT(detfeed__mask_type(N), DETFEED_MASK_I32);
    CHECK_INT(detfeed__mask_type(255), DETFEED_MASK_U8);
    static int32_t mask[MW * (H / 4)];
    int order[N], place[N], bad = 0, set = 0;
    CHECK_INT(detfeed__masks_overlap(&in, W, H, 4, &st84, mask, order), DETFEED_OK);
    for (int k = 0; k < N; k++)
        place[order[k]] = k;
    for (int i = 0; i < N; i++)
        bad += mask[(i / 20) * 2 * MW + (i % 20) * 2] != place[i] + 1;
    for (int p = 0; p < MW * (H / 4); p++)
        set += mask[p] != 0;
    CHECK_INT(bad, 0);
    CHECK_INT(set, N);
    /* The areas are all equal: their order is each argsort variant's (the
     * scalar introsort moves equal keys; x86-simd-sort leaves a sorted
     * array as it is). */
    static const uint64_t same[N];
    int want[N];
    for (int v = DETFEED_NUMPY_SORT_SCALAR; v <= DETFEED_NUMPY_SORT_AVX512; v++) {
        detfeed__stack st = {.ultralytics = 804, .numpy = 2, .numpy_sort = v};
        CHECK_INT(detfeed__masks_overlap(&in, W, H, 4, &st, mask, order), DETFEED_OK);
        CHECK_INT(
            detfeed__np_argsort(same, DETFEED_NUMPY_UINT64, N, want, st.numpy_sort),
            DETFEED_OK);
        CHECK(memcmp(order, want, sizeof order) == 0);
        CHECK((order[1] == 1) == (v != DETFEED_NUMPY_SORT_SCALAR));
    }
    detfeed__inst_free(&in);
}

/* 200 rectangles sharing a corner, each 4 pixels wider or taller than the
 * one before: the corner pixel is under all of them. Ultralytics 8.4 paints
 * with a running max (the corner gets 200); 8.3's uint8 sum wraps. */
static void test_overlap_running_max(void)
{
    enum { N = 200, S = 408 };
    static float pts[N * 8];
    for (int k = 0; k < N; k++) {
        float w = (float)(4 * (1 + (k + 1) / 2)) - 1, h = (float)(4 * (1 + k / 2)) - 1;
        const float r[8] = {0, 0, w, 0, w, h, 0, h};
        memcpy(pts + 8 * k, r, sizeof r);
    }
    detfeed__inst in = {0};
    make_inst(&in, N, pts);
    static uint8_t mask[(S / 4) * (S / 4)];
    int order[N], want83 = 0;
    for (int v = 1; v <= N; v++) { /* clip(masks + v, 0, v) in uint8 */
        int s = (want83 + v) & 255;
        want83 = s < v ? s : v;
    }
    CHECK_INT(detfeed__masks_overlap(&in, S, S, 4, &st84, mask, order), DETFEED_OK);
    CHECK_INT(mask[0], N);
    bool descending = true; /* fewer rectangles cover the pixels further out */
    for (int d = 1; d < S / 4; d++)
        descending =
            descending && mask[d * (S / 4) + d] <= mask[(d - 1) * (S / 4) + d - 1];
    CHECK(descending);
    CHECK_INT(order[0], N - 1); /* the largest first */
    CHECK_INT(detfeed__masks_overlap(&in, S, S, 4, &st83, mask, order), DETFEED_OK);
    CHECK_INT(mask[0], want83);
    CHECK(want83 != N);
    detfeed__inst_free(&in);
}

int main(void)
{
    test_resample();
    test_fill_hand();
    test_fill_reference();
    test_overlap_order();
    test_overlap_wide();
    test_overlap_running_max();
    return tu_finish("test_segments");
}
