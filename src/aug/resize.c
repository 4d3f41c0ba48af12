/*
 * resize.c - OpenCV-exact INTER_LINEAR resize of 8-bit images.
 */
#include "core/internal.h"

#include <math.h>

int detfeed_resize_linear(const uint8_t *src, size_t src_stride, int src_width,
                          int src_height, uint8_t *dst, size_t dst_stride, int dst_width,
                          int dst_height, int channels)
{
    (void)src;
    (void)src_stride;
    (void)src_width;
    (void)src_height;
    (void)dst;
    (void)dst_stride;
    (void)dst_width;
    (void)dst_height;
    (void)channels;
    return DETFEED_ENOTSUPPORTED;
}

void detfeed_load_size(int width, int height, int imgsz, int *out_width, int *out_height)
{
    double r = (double)imgsz / (double)(width > height ? width : height);
    if (r == 1.0) {
        *out_width = width;
        *out_height = height;
        return;
    }
    double w = ceil((double)width * r), h = ceil((double)height * r);
    *out_width = w < imgsz ? (int)w : imgsz;
    *out_height = h < imgsz ? (int)h : imgsz;
}
