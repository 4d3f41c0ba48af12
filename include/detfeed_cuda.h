/*
 * detfeed_cuda.h - the CUDA part of libdetfeed, and its manual.
 *
 * Whether this build has the CUDA part, the devices this process can use,
 * and the device route's kernel on its own, for tests and benchmarks. The
 * loader reaches the devices through its own settings (DETFEED_LOADER_OUTPUT,
 * DETFEED_LOADER_COLOR, DETFEED_LOADER_CUDA_DEVICE in detfeed.h); a build
 * without CUDA has every function here and reports that it is not built.
 */
#ifndef DETFEED_CUDA_H
#define DETFEED_CUDA_H

#include "detfeed_img.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if this build includes the CUDA part, else 0. */
DETFEED_API int detfeed_cuda_built(void);

/*
 * Number of CUDA devices usable by this process, or 0. A build without CUDA,
 * a machine without a driver or without a GPU all give 0. When `why` is not
 * NULL and the answer is 0 it receives a static one-line reason.
 */
DETFEED_API int detfeed_cuda_device_count(const char **why);

/* The most images one call of detfeed_cuda_color_convert takes (a CUDA
 * grid's y dimension holds one image each); a loader with CUDA output and a
 * larger batch keeps host output. */
#define DETFEED_CUDA_MAX_IMAGES 65535

/*
 * The device route's kernel on its own (the loader's CUDA output uses it):
 * n images (1 to DETFEED_CUDA_MAX_IMAGES) of width x height, HWC BGR 8-bit, contiguous
 * at `src` (device memory), each optionally coloured with its RandomHSV tables and
 * converted to NCHW RGB of `dtype` (scale as detfeed_scale) at `dst` (device memory, n
 * x 3 x height x width elements). `params` (device memory, or NULL for no colour at
 * all) holds one block of colour parameters per image in the loader's staging format,
 * which is private to the library (its source defines it for the library's own tests
 * and benchmarks, and may change it with the ABI version): each image's three tables as
 * detfeed_hsv_lut writes them, and three flags: colour the image (else convert it
 * only); the image was flipped left-right after the point where its colour belongs
 * (Ultralytics colours before RandomFlip), so that column x takes the
 * HSV->BGR formula of column width - 1 - x (a row's last width % B columns
 * take OpenCV's scalar formula, so colour and a mirror commute only when
 * there are none); and the planes in B, G, R order (Format's bgr gate kept
 * the channels; else R, G, B). `cv` (host memory, required) is the reference stack of
 * the colour, its cpu resolved on this host's CPU: each row's SIMD block
 * columns and tail take OpenCV's formulas as on the CPU. The result is byte
 * for byte detfeed_hsv_apply_cv with `cv` (for the images to colour; on the
 * image mirrored back and forth for those flipped) followed by
 * detfeed_convert_chw (both in detfeed_img.h). When width * height is a
 * multiple of 4, src must be 4-byte and dst (4 * element size)-byte aligned
 * (cudaMalloc's are). Enqueued on `stream` (a cudaStream_t; NULL: the legacy
 * default stream) and returns at once: DETFEED_EINVAL for bad arguments (cv
 * NULL or unknown included), DETFEED_ECUDA when the launch fails,
 * DETFEED_ENOTSUPPORTED without CUDA.
 */
DETFEED_API int detfeed_cuda_color_convert(const uint8_t *src, int n, int width,
                                           int height, const uint8_t *params,
                                           const detfeed_cv *cv, void *dst,
                                           detfeed_dtype dtype, detfeed_scale scale,
                                           void *stream);

#ifdef __cplusplus
}
#endif

#endif /* DETFEED_CUDA_H */
