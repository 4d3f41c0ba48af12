/*
 * detfeed.h - the public interface of libdetfeed, and its manual.
 *
 * detfeed is a training input pipeline for YOLO-style object detectors. CPU
 * worker threads decode, cache and augment samples with the Ultralytics
 * training recipe; the colour step (HSV jitter) can run either in the worker
 * or, for a whole batch at once, in a CUDA kernel. Both routes produce the same
 * bytes as Ultralytics' RandomHSV on OpenCV 8-bit images.
 *
 * Conventions that hold for every function in this header:
 *
 *   Status codes  Functions that can fail return an int: DETFEED_OK (0) on
 *                 success or a negative detfeed_status value. The numbers are
 *                 pinned and never reused; detfeed_strerror() names them.
 *   Messages      Handles keep a detailed message for their last failure
 *                 (naming the file and, for labels, the line). Functions
 *                 without a handle report only the status code.
 *   Ownership     The caller allocates outputs unless a function says it
 *                 returns memory; such memory is released with detfeed_free().
 *   Threads       The library has no mutable global state. Functions without a
 *                 handle are safe to call from any number of threads at once.
 *                 A handle is used by one thread at a time unless its section
 *                 says otherwise.
 *   Images        Pixel buffers are 8-bit, interleaved (HWC), BGR channel
 *                 order as OpenCV keeps them, rows `stride` bytes apart
 *                 (stride >= 3 * width). Width and height are > 0.
 *   Aborts        The library never exits, aborts or prints on bad input.
 */
#ifndef DETFEED_H
#define DETFEED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(DETFEED_BUILDING) && defined(__GNUC__)
#define DETFEED_API __attribute__((visibility("default")))
#else
#define DETFEED_API
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                  */
/* ------------------------------------------------------------------------ */

#define DETFEED_VERSION_MAJOR 0
#define DETFEED_VERSION_MINOR 1
#define DETFEED_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH: compare numbers, not strings. */
#define DETFEED_VERSION_NUMBER                                                         \
    (DETFEED_VERSION_MAJOR * 10000 + DETFEED_VERSION_MINOR * 100 +                     \
     DETFEED_VERSION_PATCH)

/* The version of the library actually linked (may differ from the header's
 * DETFEED_VERSION_NUMBER when a shared library is swapped underneath). */
DETFEED_API unsigned detfeed_version_number(void);
/* The same as "MAJOR.MINOR.PATCH"; a static string. */
DETFEED_API const char *detfeed_version_string(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */
/* ------------------------------------------------------------------------ */

/* Every failure is negative. Values are stable: new codes are appended. */
typedef enum detfeed_status {
    DETFEED_OK = 0,
    DETFEED_EINVAL = -1,        /* an argument is out of its documented range */
    DETFEED_ENOMEM = -2,        /* an allocation failed */
    DETFEED_EOVERFLOW = -3,     /* a size computation would overflow */
    DETFEED_EIO = -4,           /* a file could not be opened, read or written */
    DETFEED_EFORMAT = -5,       /* the data is not in a format detfeed reads */
    DETFEED_ECORRUPT = -6,      /* the data is damaged (truncated, bad CRC) */
    DETFEED_ELIMIT = -7,        /* the input exceeds a configured limit */
    DETFEED_ENOTSUPPORTED = -8, /* valid, but not supported by this build or CPU */
    DETFEED_EBADSTATE = -9,     /* the handle is in a state that refuses the call */
    DETFEED_ECUDA = -10,        /* the CUDA runtime reported an error */
    DETFEED_ELABEL = -11        /* a label line was rejected */
} detfeed_status;

/* A short static description of `status` ("invalid argument", ...). Unknown
 * values give "unknown status". Never NULL. */
DETFEED_API const char *detfeed_strerror(int status);

/* Releases memory that a detfeed function returned. NULL is a no-op. */
DETFEED_API void detfeed_free(void *ptr);

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
 * with the HSV->BGR arithmetic of OpenCV's AVX2 SIMD block for every pixel:
 * the one OpenCV uses for every pixel of rows whose width is a multiple of 32
 * (every YOLO image size). The result does not depend on the CPU, the ISA
 * chosen, or the image width.
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
 * pass over the pixels. `src` and `dst` may be the same buffer (in place,
 * with equal strides); partially overlapping buffers are not allowed.
 *
 * Returns DETFEED_EINVAL for NULL pointers, non-positive sizes, a stride
 * smaller than 3 * width or a partial overlap; DETFEED_ENOTSUPPORTED when
 * `isa` cannot run on this CPU.
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
 * OpenCV's cvtColor(COLOR_HSV2BGR) for 8-bit images, with the arithmetic
 * OpenCV's AVX2 SIMD block uses (truncation; t2 and t3 with a fused
 * multiply-add) for every pixel. Any H byte is accepted (H >= 180 wraps as
 * in OpenCV's SIMD path). Same buffer rules as detfeed_hsv_apply().
 */
DETFEED_API int detfeed_hsv_to_bgr(const uint8_t *src, size_t src_stride, uint8_t *dst,
                                   size_t dst_stride, int width, int height);

/* ------------------------------------------------------------------------ */
/* Consumer dtypes and the output conversion                                */
/* ------------------------------------------------------------------------ */

/* The element type of a batch as the consumer receives it. */
typedef enum detfeed_dtype {
    DETFEED_DTYPE_U8 = 0,  /* the 8-bit code itself */
    DETFEED_DTYPE_F32 = 1, /* code / 255 as IEEE binary32 */
    DETFEED_DTYPE_F16 = 2, /* that f32 value rounded to binary16 (nearest-even) */
    DETFEED_DTYPE_BF16 = 3 /* that f32 value rounded to bfloat16 (nearest-even) */
} detfeed_dtype;

/* How the f32 value of a code is defined; f16 and bf16 round from it. */
typedef enum detfeed_scale {
    /* (float)c / 255.0f, correctly rounded: what PyTorch's CPU `x / 255`
     * gives and what a CUDA division by a device tensor gives. Default. */
    DETFEED_SCALE_QUOTIENT = 0,
    /* (float)c * (1.0f / 255.0f): what a CUDA division by a host scalar
     * compiles to (Ultralytics' GPU preprocessing). Differs from the
     * quotient for 126 of the 256 codes, by one unit in the last place. */
    DETFEED_SCALE_RECIPROCAL = 1
} detfeed_scale;

/* Bytes per element of `dtype` (1, 4, 2, 2), or 0 for an unknown dtype. */
DETFEED_API size_t detfeed_dtype_size(detfeed_dtype dtype);

/* Short name of `dtype`: "u8", "f32", "f16", "bf16"; NULL if unknown. */
DETFEED_API const char *detfeed_dtype_name(detfeed_dtype dtype);

/* Parses "u8", "uint8", "f32", "float32", "f16", "float16", "half", "bf16",
 * "bfloat16" into *out. DETFEED_EINVAL for anything else. */
DETFEED_API int detfeed_dtype_parse(const char *name, detfeed_dtype *out);

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
 * call once per image at dst + n * 3 * plane_stride.
 */
DETFEED_API int detfeed_convert_chw(const uint8_t *src, size_t src_stride, int width,
                                    int height, void *dst, size_t plane_stride,
                                    detfeed_dtype dtype, detfeed_scale scale);

/* ------------------------------------------------------------------------ */
/* Image files                                                              */
/* ------------------------------------------------------------------------ */
/*
 * A detfeed_codec reads and writes image files. It keeps the message of its
 * last failure, naming the file. One thread at a time per codec; create one
 * per thread.
 */
typedef struct detfeed_codec detfeed_codec;

/* Creates a codec. `flags` must be 0 (reserved). On failure *out is NULL and
 * the status says why (DETFEED_ENOMEM, DETFEED_EINVAL). */
DETFEED_API int detfeed_codec_create(detfeed_codec **out, uint32_t flags);

/* Destroys a codec. NULL is a no-op. */
DETFEED_API void detfeed_codec_destroy(detfeed_codec *codec);

/* The message of the codec's last failure, or "" after a success. Valid until
 * the next call on the codec. Never NULL for a non-NULL codec. */
DETFEED_API const char *detfeed_codec_last_error(const detfeed_codec *codec);

/* Limits on untrusted input, checked before any pixel memory is allocated. */
typedef enum detfeed_codec_limit {
    DETFEED_LIMIT_MAX_WIDTH = 0,  /* default 32768 */
    DETFEED_LIMIT_MAX_HEIGHT = 1, /* default 32768 */
    DETFEED_LIMIT_MAX_PIXELS = 2, /* width * height, default 268435456 */
    DETFEED_LIMIT_MAX_FILE = 3    /* file bytes, default 1 GiB */
} detfeed_codec_limit;

/* Sets one limit (value > 0). DETFEED_EINVAL for an unknown limit or 0. */
DETFEED_API int detfeed_codec_set_limit(detfeed_codec *codec, detfeed_codec_limit limit,
                                        uint64_t value);

/*
 * Reads an 8-bit PNG that is grayscale or RGB, exactly, as BGR (a gray
 * sample g becomes g, g, g). Any other PNG (16-bit, palette, alpha) is
 * refused with DETFEED_EFORMAT and a message saying what it is, so that no
 * pixel is silently changed. On success *pixels is a buffer of
 * height * width * 3 bytes (stride 3 * width) to release with detfeed_free().
 */
DETFEED_API int detfeed_codec_read_png(detfeed_codec *codec, const char *path,
                                       uint8_t **pixels, int *width, int *height);

/* Writes a BGR image as an 8-bit RGB PNG (lossless). */
DETFEED_API int detfeed_codec_write_png(detfeed_codec *codec, const char *path,
                                        const uint8_t *pixels, size_t stride, int width,
                                        int height);

/*
 * Decodes an image file as OpenCV's cv2.imdecode(buf, IMREAD_COLOR) does:
 * 3-channel BGR, 8 bits. JPEG through libjpeg-turbo (grayscale expanded,
 * EXIF orientation applied; CMYK refused with DETFEED_ENOTSUPPORTED), PNG
 * through libspng (grayscale and palette expanded, 16-bit reduced to the
 * high byte, alpha dropped). The format is recognised from the bytes, not
 * the name. The limits of detfeed_codec_set_limit() are checked from the
 * header before pixel memory is allocated.
 *
 * On success *pixels is height * width * 3 bytes (stride 3 * width), to be
 * released with detfeed_free(). Errors: DETFEED_EIO (cannot open or read),
 * DETFEED_EFORMAT (not a JPEG or PNG), DETFEED_ECORRUPT (damaged or
 * truncated data), DETFEED_ELIMIT, DETFEED_ENOTSUPPORTED, DETFEED_ENOMEM;
 * the message names the file and the reason.
 */
DETFEED_API int detfeed_codec_decode_file(detfeed_codec *codec, const char *path,
                                          uint8_t **pixels, int *width, int *height);

/* The same for an image already in memory; `name` is used in messages. */
DETFEED_API int detfeed_codec_decode(detfeed_codec *codec, const void *data, size_t size,
                                     const char *name, uint8_t **pixels, int *width,
                                     int *height);

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
 * channels, bit for bit as OpenCV 4.6-4.12 computes it on x86-64: the 11-bit
 * fixed-point coefficients and, per row, the vectorised part's staged
 * rounding and the scalar tail's exact rounding; an exact 2x shrink in both
 * directions runs INTER_AREA as OpenCV silently does. Equal sizes copy.
 *
 * src and dst must not overlap. Returns DETFEED_EINVAL for bad geometry,
 * DETFEED_ENOMEM when its row buffers cannot be allocated.
 */
DETFEED_API int detfeed_resize_linear(const uint8_t *src, size_t src_stride, int src_width,
                                      int src_height, uint8_t *dst, size_t dst_stride,
                                      int dst_width, int dst_height, int channels);

/*
 * The load-time size Ultralytics gives an image (BaseDataset.load_image):
 * r = imgsz / max(w, h); if r != 1, each side becomes min(ceil(side * r),
 * imgsz), computed in double precision; otherwise the size is unchanged.
 */
DETFEED_API void detfeed_load_size(int width, int height, int imgsz, int *out_width,
                                   int *out_height);

/* ------------------------------------------------------------------------ */
/* SHA-256 (used for replay digests and golden tests)                       */
/* ------------------------------------------------------------------------ */

/* An incremental SHA-256. The struct is public only so that it can live on
 * the stack; its fields are private. */
typedef struct detfeed_sha256 {
    uint32_t state_[8];
    uint64_t bytes_;
    uint8_t block_[64];
} detfeed_sha256;

DETFEED_API void detfeed_sha256_init(detfeed_sha256 *ctx);
DETFEED_API void detfeed_sha256_update(detfeed_sha256 *ctx, const void *data,
                                       size_t size);
/* Writes the 32-byte digest; the context must be initialised again before
 * reuse. */
DETFEED_API void detfeed_sha256_final(detfeed_sha256 *ctx, uint8_t out[32]);
/* Writes the digest of `ctx` as 64 lowercase hex characters and a NUL into
 * hex (65 bytes). Finalises the context. */
DETFEED_API void detfeed_sha256_hex(detfeed_sha256 *ctx, char hex[65]);

/* ------------------------------------------------------------------------ */
/* CUDA                                                                     */
/* ------------------------------------------------------------------------ */

/* 1 if this build includes the CUDA part, else 0. */
DETFEED_API int detfeed_cuda_built(void);

/*
 * Number of CUDA devices usable by this process, or 0. A build without CUDA,
 * a machine without a driver or without a GPU all give 0. When `why` is not
 * NULL and the answer is 0 it receives a static one-line reason.
 */
DETFEED_API int detfeed_cuda_device_count(const char **why);

#ifdef __cplusplus
}
#endif

#endif /* DETFEED_H */
