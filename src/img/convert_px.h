/*
 * convert_px.h - the row kernels behind detfeed_convert_chw (internal).
 */
#ifndef DETFEED_CONVERT_PX_H
#define DETFEED_CONVERT_PX_H

#include "core/internal.h"

/* Bytes per element of `dtype`; 0 when it is not one (detfeed_dtype_size,
 * here so that the variants need not call back into convert.c). */
static inline size_t detfeed__dtype_size(detfeed_dtype dtype)
{
    return dtype == DETFEED_DTYPE_U8                                   ? 1
           : dtype == DETFEED_DTYPE_F32                                ? 4
           : dtype == DETFEED_DTYPE_F16 || dtype == DETFEED_DTYPE_BF16 ? 2
                                                                       : 0;
}

/* detfeed_convert_chw with its variant chosen by `isa` (core/internal.h):
 * DETFEED_ISA_PORTABLE forces the table loop, so tests can compare it with
 * the vector variant. DETFEED_ENOTSUPPORTED when `isa` cannot run here (the
 * conversion has no AVX-512 variant). */
int detfeed__convert_chw_isa(const uint8_t *src, size_t src_stride, int width,
                             int height, void *dst, size_t plane_stride,
                             detfeed_dtype dtype, detfeed_scale scale, detfeed_isa isa);

/* Converts the first width - width % 16 pixels of every row (the arguments
 * of detfeed_convert_chw, already checked); returns that count, the column
 * where the caller's table loop takes over. */
int detfeed__convert_rows_avx2(const uint8_t *src, size_t src_stride, int width,
                               int height, void *dst, size_t plane_stride,
                               detfeed_dtype dtype, detfeed_scale scale);

#endif /* DETFEED_CONVERT_PX_H */
