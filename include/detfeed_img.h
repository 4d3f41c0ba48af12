/*
 * detfeed_img.h - the bit-exact image operations of libdetfeed, and their
 * manual.
 *
 * The pixel kernels the loader (detfeed.h) is made of, each byte for byte
 * what OpenCV or NumPy computes on the reference stack it names: colour
 * (RandomHSV), the conversion to a consumer dtype, image files, resize and
 * the warps, with the choice of detfeed's own CPU code path. A program that
 * only takes batches from the loader does not need them; tests, benchmarks
 * and tools use them to check or time one step on its own. The conventions
 * of detfeed.h (status codes, messages, ownership, threads, image buffers)
 * hold here too.
 */
#ifndef DETFEED_IMG_H
#define DETFEED_IMG_H

#include "detfeed.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* CPU code paths                                                           */
/* ------------------------------------------------------------------------ */

/* Which implementation of a pixel kernel runs. All give the same bytes; the
 * choice is only about speed, and tests use it to compare them. */
typedef enum detfeed_isa {
    DETFEED_ISA_AUTO = 0,     /* the fastest one this CPU supports */
    DETFEED_ISA_PORTABLE = 1, /* plain C, any CPU */
    DETFEED_ISA_AVX2 = 2,     /* x86-64 with AVX2 and FMA */
    DETFEED_ISA_AVX512 = 3    /* x86-64 with AVX-512 F, BW and VBMI */
} detfeed_isa;

/* 1 when `isa` can run on this CPU in this build, else 0. AUTO and PORTABLE
 * are always available. */
DETFEED_API int detfeed_isa_available(detfeed_isa isa);

/* The implementation DETFEED_ISA_AUTO resolves to on this CPU. */
DETFEED_API detfeed_isa detfeed_isa_best(void);

/* ------------------------------------------------------------------------ */
/* The reference stack as one OpenCV on one CPU                             */
/* ------------------------------------------------------------------------ */

/* A detfeed_cv names one OpenCV (see "The reference stack" in detfeed.h)
 * as run on one CPU. The zero value {DETFEED_CV_4, DETFEED_CV_CPU_AUTO, 0}
 * is the OpenCV 4.x wheels on this CPU. */
typedef struct detfeed_cv {
    detfeed_cv_version version;
    detfeed_cv_cpu cpu;
    int ipp; /* 5.1 only: 1 when cv2.ipp.useIPP() is true (its default) */
} detfeed_cv;

/* ------------------------------------------------------------------------ */
/* Colour: Ultralytics RandomHSV, bit-exact with OpenCV 8-bit arithmetic      */
/* ------------------------------------------------------------------------ */
/*
 * Ultralytics' RandomHSV draws u = uniform(-1, 1) three times (h, s, v) and
 * multiplies them by the hyperparameters: dh = u0 * hsv_h, ds = u1 * hsv_s,
 * dv = u2 * hsv_v. These post-multiplied values are the "gains" below. The
 * colour operation is then
 *
 *     H, S, V = cvtColor(img, COLOR_BGR2HSV)       (OpenCV integer Q12 path)
 *     H, S, V = LUT_h[H], LUT_s[S], LUT_v[V]
 *     img     = cvtColor(HSV, COLOR_HSV2BGR)       (OpenCV float32 path)
 *
 * with OpenCV's HSV->BGR arithmetic as the reference stack (detfeed_cv)
 * computes it. OpenCV converts each row in SIMD blocks of B pixels and the
 * last width % B pixels with its scalar code, and the two round differently
 * (the block truncates c * 255, the scalar code rounds it half to even) and
 * fuse different multiply-subtracts, depending on the build:
 *
 *   code path  B                   block              scalar tail
 *   SSE        16                  trunc, unfused     round, unfused
 *   AVX2       32                  trunc, t2 t3 FMA   round, t2 FMA (Debian's
 *                                                     4.6), t2 t3 FMA (wheels)
 *   AVX-512    64 (5.1), else 32   as AVX2            as AVX2
 *
 * (t2 = v * (1 - s * f), t3 = v * (1 - s * (1 - f)); "FMA": the inner
 * 1 - s * x rounded once.) Calibrated on all 2^24 inputs against Debian's
 * OpenCV 4.6 (GCC 12) and the opencv-python-headless 4.12.0.88, 5.0.0.93
 * and 5.1.0.95 wheels. So a pixel's bytes depend on the stack, its column and
 * the image width; never on detfeed's own implementation (detfeed_isa).
 * Rows whose width is a multiple of B (640, 1280: every usual YOLO size on
 * every stack) are all block.
 *
 * Ultralytics converts whenever gains were drawn, including gains that are
 * all zero: the round trip BGR->HSV->BGR is not the identity, so detfeed
 * converts too. (Ultralytics skips the step, and draws nothing, only when the
 * three hyperparameters are 0; that decision belongs to the caller.)
 */

/* Index of each table in the lut argument below. */
enum { DETFEED_LUT_H = 0, DETFEED_LUT_S = 1, DETFEED_LUT_V = 2 };

/*
 * Builds the three 256-entry tables of RandomHSV from the gains, in float64
 * with truncation toward zero, exactly as NumPy computes them:
 *
 *     lut[H][x] = trunc(floor_mod(x + 180 * dh, 180))     (NumPy % on floats)
 *     lut[S][x] = trunc(clip(x * (1 + ds), 0, 255)),  then lut[S][0] = 0
 *     lut[V][x] = trunc(clip(x * (1 + dv), 0, 255))
 *
 * lut[H][x] can be 180 when x + 180 * dh is a tiny negative number (NumPy's
 * floor_mod rounds it up to 180.0); the HSV->BGR step treats 180 as hue 0, as
 * OpenCV does.
 *
 * Returns DETFEED_EINVAL if lut is NULL or a gain is not finite.
 */
DETFEED_API int detfeed_hsv_lut(double dh, double ds, double dv, uint8_t lut[3][256]);

/*
 * The fused colour operation: BGR->HSV, the three tables, HSV->BGR, in one
 * pass over the pixels, byte for byte what OpenCV `cv` computes (its
 * cv->cpu resolved with detfeed_cv_cpu_resolve; cv->ipp plays no part in
 * colour). `isa` picks detfeed's implementation; all give the same bytes.
 * `src` and `dst` may be the same buffer (in place, with equal strides);
 * partially overlapping buffers are not allowed. Thread-safe (no state).
 *
 * Returns DETFEED_EINVAL for NULL pointers (cv included), non-positive
 * sizes, a stride smaller than 3 * width, a partial overlap or an unknown
 * version, cpu or isa; DETFEED_ENOTSUPPORTED when `isa` cannot run on this
 * CPU.
 */
DETFEED_API int detfeed_hsv_apply_cv(const uint8_t *src, size_t src_stride,
                                     uint8_t *dst, size_t dst_stride, int width,
                                     int height, const uint8_t lut[3][256],
                                     const detfeed_cv *cv, detfeed_isa isa);

/*
 * detfeed_hsv_apply_cv with the stack {DETFEED_CV_4_DEBIAN,
 * DETFEED_CV_CPU_AUTO}: Debian 12's OpenCV 4.6 as it runs on this CPU. The bytes of the
 * last width % B pixels of each row therefore depend on the CPU (B = 32 with AVX2, 16
 * without).
 */
DETFEED_API int detfeed_hsv_apply(const uint8_t *src, size_t src_stride, uint8_t *dst,
                                  size_t dst_stride, int width, int height,
                                  const uint8_t lut[3][256], detfeed_isa isa);

/*
 * OpenCV's cvtColor(COLOR_BGR2HSV) for 8-bit images (hue 0..179). Output is
 * interleaved H, S, V bytes. Same buffer rules as detfeed_hsv_apply().
 */
DETFEED_API int detfeed_bgr_to_hsv(const uint8_t *src, size_t src_stride, uint8_t *dst,
                                   size_t dst_stride, int width, int height);

/*
 * OpenCV's cvtColor(COLOR_HSV2BGR) for 8-bit images as OpenCV `cv` computes
 * it: block and tail formulas as in the table above. Any H byte is
 * accepted (H >= 180 wraps as in OpenCV). Same buffer rules and return
 * codes as detfeed_hsv_apply_cv().
 */
DETFEED_API int detfeed_hsv_to_bgr_cv(const uint8_t *src, size_t src_stride,
                                      uint8_t *dst, size_t dst_stride, int width,
                                      int height, const detfeed_cv *cv);

/*
 * detfeed_hsv_to_bgr_cv with the stack {DETFEED_CV_4_DEBIAN, DETFEED_CV_CPU_AUTO}
 * (so the row tails depend on the CPU, as for detfeed_hsv_apply).
 */
DETFEED_API int detfeed_hsv_to_bgr(const uint8_t *src, size_t src_stride, uint8_t *dst,
                                   size_t dst_stride, int width, int height);

/* ------------------------------------------------------------------------ */
/* Conversion to the consumer's dtype                                       */
/* ------------------------------------------------------------------------ */

/*
 * Fills `table` with the 256 values a code maps to: 256 elements of
 * detfeed_dtype_size(dtype) bytes each (u8: the identity; f16 and bf16: the
 * raw 16-bit patterns in host byte order). Every conversion to a consumer
 * dtype in detfeed, CPU or GPU, is a lookup in this table.
 */
DETFEED_API int detfeed_dtype_table(detfeed_dtype dtype, detfeed_scale scale,
                                    void *table);

/*
 * Converts one HWC BGR 8-bit image into planar RGB (CHW) of `dtype`:
 * dst + c * plane_stride holds channel c (0 = R, 1 = G, 2 = B) as `height`
 * rows of `width` elements, contiguous. plane_stride is in bytes and at least
 * width * height * detfeed_dtype_size(dtype). A batch of NCHW images is this
 * call once per image at dst + n * 3 * plane_stride. DETFEED_EINVAL where
 * src and dst overlap.
 */
DETFEED_API int detfeed_convert_chw(const uint8_t *src, size_t src_stride, int width,
                                    int height, void *dst, size_t plane_stride,
                                    detfeed_dtype dtype, detfeed_scale scale);

/* ------------------------------------------------------------------------ */
/* Image files                                                              */
/* ------------------------------------------------------------------------ */

/*
 * Reads an 8-bit PNG that is grayscale or RGB, exactly, as BGR (a gray
 * sample g becomes g, g, g). Any other PNG (16-bit, palette, alpha) is
 * refused with DETFEED_EFORMAT and a message saying what it is, so that no
 * pixel is silently changed. On success *pixels is a buffer of
 * height * width * 3 bytes (stride 3 * width) to release with detfeed_free().
 */
DETFEED_API int detfeed_codec_read_png(detfeed_codec *codec, const char *path,
                                       uint8_t **pixels, int *width, int *height);

/* Writes a BGR image as an 8-bit RGB PNG (lossless): into a new file
 * beside `path` (PATH.PID.N.tmp, never through a link or an existing
 * file), renamed to `path` once complete, so that a file or link already
 * at `path` is replaced, never written into. */
DETFEED_API int detfeed_codec_write_png(detfeed_codec *codec, const char *path,
                                        const uint8_t *pixels, size_t stride, int width,
                                        int height);

/*
 * Decodes an image file as OpenCV's cv2.imdecode(buf, IMREAD_COLOR) does:
 * 3-channel BGR, 8 bits. JPEG through libjpeg-turbo (grayscale expanded;
 * CMYK refused with DETFEED_ENOTSUPPORTED; data that libjpeg only warns
 * about, such as a truncated file, refused as DETFEED_ECORRUPT where cv2
 * would return a partial image), PNG through libspng (grayscale and palette
 * expanded, 16-bit reduced to the high byte, alpha and tRNS dropped), BMP
 * as OpenCV's own reader, WebP through libwebp, TIFF through libtiff,
 * JPEG 2000 (JP2 and bare codestreams) through OpenJPEG. The
 * EXIF orientation of a JPEG (APP1) or PNG (eXIf) is applied as OpenCV 4.6
 * applies it; what differs between OpenCV versions follows the codec's
 * opencv setting (detfeed_codec_set_opencv). The format is recognised from
 * the bytes, not the name, with one exception: a TIFF whose path ends in
 * .tif or .tiff (any case) is read as Ultralytics 8.4's imread reads it
 * (cv2.imdecodemulti: the first page when every page reads and it has
 * colour, alpha dropped, 16-bit samples reduced to their high byte; else
 * cv2.imdecode), and refused with the opencv setting DETFEED_CV_4_DEBIAN
 * (OpenCV 4.6 has no imdecodemulti: that imread raises). A TIFF libtiff
 * reports damage in, and a JPEG 2000 OpenJPEG reports an error in, is
 * refused with the wheels' stacks, whose libraries are not Debian's and may
 * read the damage differently. A name ending in .avif (any case) is read as
 * imread reads it with Pillow 13 (libavif 1.4.2, libyuv): AVIF through
 * Debian's libavif (libaom decodes), converted to RGB with Pillow's arithmetic,
 * irot and imir applied as exif_transpose applies them; what detfeed has
 * not verified is refused with DETFEED_EFORMAT saying why, and so are a
 * .avif holding another format and AVIF under another name (cv2.imdecode's
 * AVIF reader gives other bytes). A path ending in .heic or .heif (any
 * case) is read as Ultralytics 8.4's imread reads it with Pillow and pi-heif
 * 1.4.0: a HEIF (HEIC) image through libheif and libde265, its primary
 * image with its grid, rotation, mirroring and crop, converted to BGR with
 * the arithmetic of pi-heif's libheif 1.23, alpha dropped; what detfeed
 * does not reproduce (an image that is neither HEVC nor a grid of it,
 * premultiplied alpha, an orientation Pillow may read otherwise, the
 * colour cases libheif 1.23 upsamples bilinearly, a stream libde265 warns
 * about) is refused with DETFEED_ENOTSUPPORTED or DETFEED_ECORRUPT, as is
 * a .heic or .heif holding another format (Pillow reads it). A HEIF under
 * any other name is refused with DETFEED_EFORMAT: Ultralytics reads it
 * with cv2.imdecode, which reads no HEIF. The limits of
 * detfeed_codec_set_limit() are checked from the header before pixel
 * memory is allocated.
 *
 * On success *pixels is height * width * 3 bytes (stride 3 * width), to be
 * released with detfeed_free(). Errors: DETFEED_EIO (cannot open or read),
 * DETFEED_EFORMAT (not a JPEG, PNG, BMP, WebP, TIFF, JPEG 2000, AVIF or HEIF, or a
 * kind of one OpenCV does not read, or detfeed does not read as OpenCV does: the
 * message says which), DETFEED_ECORRUPT (damaged or truncated data),
 * DETFEED_ELIMIT, DETFEED_ENOTSUPPORTED, DETFEED_ENOMEM; the message names
 * the file and the reason.
 */
DETFEED_API int detfeed_codec_decode_file(detfeed_codec *codec, const char *path,
                                          uint8_t **pixels, int *width, int *height);

/* The same for an image already in memory; `name` is used in messages and
 * is the path whose suffix decides how a TIFF, and whether a HEIF, is read
 * (above). */
DETFEED_API int detfeed_codec_decode(detfeed_codec *codec, const void *data,
                                     size_t size, const char *name, uint8_t **pixels,
                                     int *width, int *height);

/*
 * Reads only the header of an image file: its size after EXIF orientation
 * (what detfeed_codec_decode_file would return) without decoding pixels.
 * Same errors as decoding, except that damage after the header goes unseen.
 */
DETFEED_API int detfeed_codec_probe_file(detfeed_codec *codec, const char *path,
                                         int *width, int *height);

/* ------------------------------------------------------------------------ */
/* Resize                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * OpenCV's cv::resize(src, dst, Size(dst_width, dst_height), 0, 0,
 * INTER_LINEAR) for 8-bit images of `channels` (1 or 3) interleaved
 * channels, bit for bit as OpenCV 4.6 computes it on x86-64: 11-bit
 * fixed-point coefficients, an exact horizontal pass, and the vertical
 * pass's staged rounding ((H >> 4) * b >> 16, summed, (u + 2) >> 2) for
 * every element of a row; an exact 2x shrink in both directions runs
 * INTER_AREA as OpenCV silently does. Equal sizes copy.
 *
 * src and dst must not overlap. Returns DETFEED_EINVAL for bad geometry,
 * DETFEED_ENOMEM when its row buffers cannot be allocated.
 */
DETFEED_API int detfeed_resize_linear(const uint8_t *src, size_t src_stride,
                                      int src_width, int src_height, uint8_t *dst,
                                      size_t dst_stride, int dst_width, int dst_height,
                                      int channels);

/*
 * The load-time size Ultralytics gives an image (BaseDataset.load_image):
 * r = imgsz / max(w, h); if r != 1, each side becomes min(ceil(side * r),
 * imgsz), computed in double precision; otherwise the size is unchanged.
 * A width, height or imgsz below 1 gives 0 x 0; NULL outputs, nothing.
 */
DETFEED_API void detfeed_load_size(int width, int height, int imgsz, int *out_width,
                                   int *out_height);

/* ------------------------------------------------------------------------ */
/* Geometry                                                                 */
/* ------------------------------------------------------------------------ */
/*
 * OpenCV's cv::warpAffine and cv::warpPerspective for 8-bit BGR images with
 * INTER_LINEAR and BORDER_CONSTANT, bit for bit as OpenCV 4.6 computes them
 * on x86-64 (the fixed-point path OpenCV kept up to 4.10; 4.11 changed it):
 *
 *   - the forward matrix is inverted in double as OpenCV inverts it (the
 *     2x3 closed form of cv::warpAffine; cv::invert's 3x3 closed form for
 *     the perspective matrix). A singular matrix inverts to all zeros, as in
 *     OpenCV: every destination pixel then samples source pixel (0, 0);
 *   - each destination pixel's source position is rounded to 1/32 pixel:
 *     affine through 10-bit fixed point per column and row (cvRound, an
 *     out-of-range value becomes INT_MIN as on x86-64); perspective in
 *     double, per pixel, with OpenCV's grouping of the sums in blocks of
 *     columns (which changes the last bit of some positions);
 *   - the four source pixels are blended with OpenCV's 15-bit integer
 *     bilinear weights and rounded half up;
 *   - a position whose four taps are all outside the source gives the
 *     border value; taps outside a partly covered position count as the
 *     border value.
 *
 * M is the forward matrix as given to cv2 (destination = M * source), row
 * major, in double. Ultralytics builds it in float32; pass those values
 * converted to double exactly as cv2 does. No value of M is refused: NaN
 * and infinity behave as they do in OpenCV on x86-64. The result does not
 * depend on the CPU or the code path chosen.
 *
 * src and dst must not overlap. The source must be below 32767 pixels a
 * side, which OpenCV's remap() requires (its positions are int16); the
 * destination may be of any size. Returns DETFEED_EINVAL for NULL pointers,
 * non-positive sizes, a source of 32767 pixels or more a side, a stride
 * below 3 * width or overlapping buffers; DETFEED_ENOMEM when the per-call
 * buffers cannot be allocated.
 */

/* cv2.warpAffine(src, M, (dst_width, dst_height), flags=INTER_LINEAR,
 * borderMode=BORDER_CONSTANT, borderValue=border). M is the 2x3 forward
 * matrix (destination = M * source), row-major, in double; it is inverted
 * as OpenCV inverts it. border: the constant BGR value (e.g. 114, 114,
 * 114). src and dst must not overlap. */
DETFEED_API int detfeed_warp_affine(const uint8_t *src, size_t src_stride,
                                    int src_width, int src_height, uint8_t *dst,
                                    size_t dst_stride, int dst_width, int dst_height,
                                    const double M[6], const uint8_t border[3]);

/* The same for a 3x3 perspective matrix as given to cv2.warpPerspective
 * (destination = M * source in homogeneous coordinates), row-major. */
DETFEED_API int detfeed_warp_perspective(const uint8_t *src, size_t src_stride,
                                         int src_width, int src_height, uint8_t *dst,
                                         size_t dst_stride, int dst_width,
                                         int dst_height, const double M[9],
                                         const uint8_t border[3]);

/*
 * The same warps as a chosen OpenCV computes them (the reference stack,
 * detfeed_cv), bit for bit as its x86-64 builds (the opencv-python wheels)
 * compute them. The matrix is inverted in double as above in every
 * version; then:
 *
 *   DETFEED_CV_4        detfeed_warp_affine / detfeed_warp_perspective:
 *                       the same bytes, whatever cv->cpu says.
 *   DETFEED_CV_5_0,     OpenCV 5's float32 kernel. The inverse is rounded
 *   DETFEED_CV_5_1      to float; per row Mx = y M1 + M2 (rounded twice);
 *   with ipp == 0       per pixel sx = fma(M0, x, Mx), likewise sy (and w,
 *                       then sx / w, sy / w for perspective), except in the
 *                       scalar tail after the row's last whole vector block,
 *                       where sx = (x M0 + y M1) + M2. The top-left tap
 *                       is (floor(sx), floor(sy)); taps outside the source
 *                       read as the border value; the fractions
 *                       weight three float lerps, fma(a, q - p, p), and the
 *                       result is rounded half to even. cv->cpu picks the
 *                       build OpenCV dispatches to (detfeed_cv_cpu_resolve):
 *                       DETFEED_CV_CPU_AVX2 and _AVX512 (OpenCV has no
 *                       AVX-512 build of this kernel) fuse every fma, with
 *                       vector blocks of 16 pixels and the first product
 *                       of the tail fused; DETFEED_CV_CPU_SSE (also what
 *                       cv2.setUseOptimized(False) runs) rounds the
 *                       product before the add, blocks of 8. The two differ
 *                       by 1 on about 0.05 % of bytes.
 *   DETFEED_CV_5_1      Intel IPP, which OpenCV 5.1 uses by default, as
 *   with ipp != 0       modelled from measurements (IPP is closed source;
 *                       0 bytes differ from cv2 5.1 over every case the
 *                       oracle and the conformance suite measure). The
 *                       position in double. A "scale" kernel where the
 *                       inverse has M1 == M3 == 0 (scale and translation)
 *                       and some destination pixel maps inside the source
 *                       (0 <= sx <= W - 2, 0 <= sy <= H - 2): the position
 *                       floored in double, its fraction rounded to float,
 *                       lerps along x then y (y first for a pixel with one
 *                       x tap inside; from the bottom row when the y axis
 *                       is flipped and one y tap is inside). A "general"
 *                       kernel for every other matrix: a pixel whose four
 *                       taps are inside rounds the position to float and
 *                       splits it in float, others as the scale kernel;
 *                       lerps along y then x. The lerps are fused unless
 *                       cv->cpu is DETFEED_CV_CPU_SSE (IPP's SSE4.2 code).
 *                       Not matched: a position within about 1e-13 of an
 *                       edge of that inside test, where IPP decides with
 *                       its own rounding (no Ultralytics warp comes near).
 *                       Sources of 1 pixel a side do not go to IPP: they
 *                       get the float kernel, as with ipp == 0.
 *
 * A non-finite position (a NaN or infinite matrix, w == 0) gives the border
 * value, except inside one of the float kernel's vector blocks that has a
 * pixel with a tap inside the source, where OpenCV stores 0 for it (5.0) or
 * 255 (5.1) (measured).
 *
 * The bytes do not depend on the CPU detfeed runs on, only on `cv`: the
 * AVX2 emulation runs on an SSE-only CPU too (more slowly). Arguments and
 * errors are those of detfeed_warp_affine, and DETFEED_EINVAL for a NULL
 * `cv`, an unknown cv->version or an unknown cv->cpu. (OpenCV 5 also
 * accepts sources of 32767 pixels a side; detfeed refuses them in every
 * stack.) Thread-safe: no state is kept between calls.
 */
DETFEED_API int detfeed_warp_affine_cv(const uint8_t *src, size_t src_stride,
                                       int src_width, int src_height, uint8_t *dst,
                                       size_t dst_stride, int dst_width, int dst_height,
                                       const double M[6], const uint8_t border[3],
                                       const detfeed_cv *cv);

/* The same for a 3x3 perspective matrix (destination = M * source in
 * homogeneous coordinates), row-major. */
DETFEED_API int detfeed_warp_perspective_cv(const uint8_t *src, size_t src_stride,
                                            int src_width, int src_height, uint8_t *dst,
                                            size_t dst_stride, int dst_width,
                                            int dst_height, const double M[9],
                                            const uint8_t border[3],
                                            const detfeed_cv *cv);

#ifdef __cplusplus
}
#endif

#endif /* DETFEED_IMG_H */
