/*
 * color_kernel.cuh - the device route's kernel with a resolved reference
 * stack, for the loader's route (cuda_route.cu), which resolves its stack
 * once. detfeed_cuda_color_convert (detfeed_cuda.h) resolves a detfeed_cv and
 * calls it.
 */
#ifndef DETFEED_COLOR_KERNEL_CUH
#define DETFEED_COLOR_KERNEL_CUH

#include "cuda_host.h"
#include "detfeed_img.h"
#include "img/color_px.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's blocks for `dtype` resident in one wave on the current
 * device (SMs x blocks per SM), into *wave: what a caller that launches it
 * often asks once (three runtime queries). */
int detfeed__cuda_color_wave(detfeed_dtype dtype, int64_t *wave);

/* detfeed_cuda_color_convert with the stack `st` (detfeed__hsv_stack_of)
 * and the wave of detfeed__cuda_color_wave for `dtype` (0: queried now). */
int detfeed__cuda_color_convert_stack(const uint8_t *src, int n, int width, int height,
                                      const uint8_t *params,
                                      const detfeed__hsv_stack *st, void *dst,
                                      detfeed_dtype dtype, detfeed_scale scale,
                                      int64_t wave, void *stream);

/* detfeed__cuda_color_wave for the recipe kernel. */
int detfeed__cuda_recipe_wave(detfeed_dtype dtype, int64_t *wave);

/* The recipe route's kernel: image i of n (width x height) is made from
 * recipes[i] reading the device `arena` when its flags have
 * DETFEED__CUDA_RECIPE_MADE, else read from src (HWC BGR, staged); then
 * colour by params (as detfeed_cuda_color_convert) and conversion into
 * dst. `wave` as for detfeed__cuda_color_convert_stack. */
int detfeed__cuda_recipe_convert_stack(const uint8_t *src, int n, int width, int height,
                                       const uint8_t *params,
                                       const detfeed__cuda_recipe *recipes,
                                       const uint8_t *arena,
                                       const detfeed__hsv_stack *st, void *dst,
                                       detfeed_dtype dtype, detfeed_scale scale,
                                       int64_t wave, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* DETFEED_COLOR_KERNEL_CUH */
