/*
 * segments.c - Ultralytics' polygon resampling (ultralytics/utils/ops.py
 * resample_segments and YOLODataset.update_labels_info), reproduced from
 * NumPy's linspace, searchsorted, insert and interp semantics.
 */
#include "segments.h"

#define RESAMPLE_POINTS 1000

int detfeed__resample_count(const int *seg_start, int n)
{
    int longest = 0;
    for (int i = 0; seg_start && i < n; i++) {
        int m = seg_start[i + 1] - seg_start[i];
        longest = m > longest ? m : longest;
    }
    return longest > RESAMPLE_POINTS ? longest + 1 : RESAMPLE_POINTS;
}

/* np.linspace(0, stop, num)[k]: k * (stop / (num - 1)) in double, the last
 * sample exactly stop; a single sample is 0. */
static double linspace_at(double stop, int num, int k)
{
    if (num == 1)
        return 0.0;
    if (k == num - 1)
        return stop;
    return (double)k * (stop / (num - 1));
}

/* np.interp(x, arange(L), fp) for 0 <= x <= L - 1: fp[j] at an exact
 * vertex, else slope * (x - j) + fp[j] with slope = fp[j + 1] - fp[j]
 * (the positions are one apart). */
static double interp(double x, const float *xy, int L, int m, int c)
{
    int j = (int)x;
    if (j >= L - 1)
        j = L - 1;
    /* Point j of the closed polygon: the last one is the first again. */
    double y0 = xy[2 * (j % m) + c];
    if ((double)j == x)
        return y0;
    double y1 = xy[2 * ((j + 1) % m) + c];
    double slope = (y1 - y0) / ((double)(j + 1) - (double)j);
    return slope * (x - (double)j) + y0;
}

void detfeed__resample(const float *xy, int m, int count, float *out)
{
    if (m == count) {
        for (int k = 0; k < 2 * m; k++)
            out[k] = xy[k];
        return;
    }
    int L = m + 1; /* closed */
    int num = L < count ? count - L : count;
    int v = 0; /* next vertex position to merge in */
    for (int k = 0, o = 0; o < count; o++) {
        double x;
        /* searchsorted(side='left') then insert: vertex v goes before the
         * first sample >= v; leftover vertices go at the end. */
        bool take_vertex =
            L < count && v < L && (k >= num || (double)v <= linspace_at(L - 1, num, k));
        if (take_vertex)
            x = (double)v++;
        else
            x = linspace_at(L - 1, num, k++);
        out[2 * o] = (float)interp(x, xy, L, m, 0);
        out[2 * o + 1] = (float)interp(x, xy, L, m, 1);
    }
}
