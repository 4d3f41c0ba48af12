/*
 * convert_px.h - the row kernels behind detfeed_convert_chw (internal).
 */
#ifndef DETFEED_CONVERT_PX_H
#define DETFEED_CONVERT_PX_H

#include "core/internal.h"

/* Converts the first width - width % 16 pixels of every row (the arguments
 * of detfeed_convert_chw, already checked); returns that count, the column
 * where the caller's table loop takes over. */
int detfeed__convert_rows_avx2(const uint8_t *src, size_t src_stride, int width,
                               int height, void *dst, size_t plane_stride,
                               detfeed_dtype dtype, detfeed_scale scale);

#endif /* DETFEED_CONVERT_PX_H */
