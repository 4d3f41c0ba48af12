/*
 * detfeed.h - the public interface of libdetfeed, and its manual.
 *
 * detfeed is a training input pipeline for YOLO-style object detectors. CPU
 * worker threads decode, cache and augment samples with the Ultralytics
 * training recipe; the colour step (HSV jitter) can run either in the worker
 * or, for a whole batch at once, in a CUDA kernel. Both routes produce the same
 * bytes as Ultralytics' RandomHSV on OpenCV 8-bit images.
 *
 * The interface comes in three headers, by audience:
 *
 *   detfeed.h       (this one) the product: datasets, the image caches, the
 *                   loader and its batches, the randomness every sample is
 *                   a function of, and what they share (version and ABI,
 *                   status codes, the names of the reference stacks, the
 *                   consumer dtypes, the image decoder handle and its limits).
 *   detfeed_img.h   the bit-exact image operations the loader is made of
 *                   (colour, dtype conversion, image files, resize, warps),
 *                   for programs that check or time one step on its own.
 *   detfeed_cuda.h  the CUDA part: whether it is built, the devices, and
 *                   the device route's kernel on its own.
 *
 * detfeed_img.h includes this one and detfeed_cuda.h includes detfeed_img.h
 * (its kernel takes a detfeed_cv); the conventions below hold in all three.
 *
 * Conventions that hold for every function of the library:
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
 *                 says otherwise. The threads the library starts carry names
 *                 (top -H, ps -L and debuggers show them): detfeed-wK (a
 *                 loader's worker K), detfeed-fill (the RAM cache's fill),
 *                 detfeed-disk (the disk cache's fill), detfeed-commit (its
 *                 writer), detfeed-verify (the check at open).
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

/* The ABI version: a number that changes whenever a program built against an
 * older header could misread the library: a public struct's layout, an enum's
 * value or a function's signature changed, or a function was removed. Adding
 * a function, an enum value at the end or a status code does not change it.
 * It is independent of the release version above. */
#define DETFEED_ABI_VERSION 2

/* The ABI version of the library actually linked. A program (or a binding
 * such as the Python package) compares it with the DETFEED_ABI_VERSION it was
 * written for and refuses a library that differs. */
DETFEED_API int detfeed_abi_version(void);

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
/* The reference stack: which OpenCV (and Ultralytics) the bytes follow      */
/* ------------------------------------------------------------------------ */
/*
 * detfeed reproduces what Ultralytics computes with the OpenCV it runs on,
 * and OpenCV's bytes depend on its version and, for some operations, on
 * the code path its dispatcher picks on the CPU:
 *
 *   OpenCV 4.x (through 4.12)  warps in fixed point (1/32-pixel positions,
 *                              15-bit weights, rounding half up); no CPU
 *                              dependence.
 *   OpenCV 5.0                 warps in float32: positions and bilinear
 *                              lerps with fused multiply-adds on AVX2
 *                              CPUs, unfused on SSE-only CPUs (or with
 *                              cv2.setUseOptimized(False)); blocks of 16
 *                              (AVX2) or 8 (SSE) pixels, a scalar tail.
 *   OpenCV 5.1                 8-bit bilinear warps go to Intel IPP while
 *                              cv2.ipp.useIPP() is true (the default):
 *                              positions in double; with IPP off, 5.0's
 *                              float kernel. HSV->BGR runs in blocks of 64
 *                              pixels on AVX-512 CPUs (32 on AVX2, 16 on
 *                              SSE in every version), the rest of a row
 *                              through OpenCV's scalar formula.
 *
 * Ultralytics itself depends on NumPy: it builds RandomPerspective's float32
 * matrix and moves boxes, keypoints and polygons with small float32 matrix
 * products, which NumPy hands to its BLAS. The loader's `numpy` setting says
 * how they round: 2, each entry accumulated with fused multiply-adds (the
 * PyPI wheels of NumPy 2.0 to 2.4 and of NumPy 1.26, whose OpenBLAS runs
 * FMA kernels on the CPUs that have them); 1, every product and sum rounded
 * (Debian 12's NumPy 1.24 on its reference BLAS). The setting is named after
 * the version where the difference was first seen, but the BLAS decides, not
 * the version: the Python package measures it (detfeed.stack.numpy_matmul).
 *
 * Builds of one version can differ too: Debian 12's OpenCV 4.6 (GCC 12)
 * rounds one step of HSV->BGR's scalar formula that the PyPI wheels (4.12,
 * 5.x) fuse; DETFEED_CV_4_DEBIAN ("4-debian") is that build, DETFEED_CV_4
 * ("4") the wheels. Their warps are the same.
 */
typedef enum detfeed_cv_version {
    DETFEED_CV_4 = 0,       /* 4.x through 4.12 as the opencv-python wheels build it */
    DETFEED_CV_5_0 = 1,     /* 5.0 */
    DETFEED_CV_5_1 = 2,     /* 5.1 */
    DETFEED_CV_4_DEBIAN = 3 /* 4.6 as Debian 12 builds it (python3-opencv) */
} detfeed_cv_version;

/* The code path OpenCV's dispatcher runs, by the CPU features it finds. */
typedef enum detfeed_cv_cpu {
    DETFEED_CV_CPU_AUTO = 0,  /* what OpenCV would pick on this CPU */
    DETFEED_CV_CPU_SSE = 1,   /* baseline x86-64 (or setUseOptimized(False)) */
    DETFEED_CV_CPU_AVX2 = 2,  /* AVX2 with FMA */
    DETFEED_CV_CPU_AVX512 = 3 /* AVX-512 (SKX): differs from AVX2 only in 5.1 */
} detfeed_cv_cpu;

/* The stack's name ("4", "4-debian", "5.0", "5.1") into *out; DETFEED_EINVAL for an
 * unknown name. Names of later releases are not guessed: the caller maps
 * them (the Python package uses the nearest known one, with a warning). */
DETFEED_API int detfeed_cv_version_parse(const char *name, detfeed_cv_version *out);
/* "auto", "sse", "avx2", "avx512" into *out; DETFEED_EINVAL otherwise. */
DETFEED_API int detfeed_cv_cpu_parse(const char *name, detfeed_cv_cpu *out);
/* The concrete code path (never AUTO) `cpu` stands for on this CPU: AUTO
 * gives AVX512 where the CPU has AVX-512 F, BW, CD, DQ and VL, else AVX2
 * where it has AVX2 and FMA, else SSE. A value that is none of the enum's
 * is taken as AUTO. */
DETFEED_API detfeed_cv_cpu detfeed_cv_cpu_resolve(detfeed_cv_cpu cpu);

/*
 * NumPy's argsort. Ultralytics orders a segment sample's masks with
 * np.argsort(-areas) (polygons2masks_overlap: unsigned 64-bit areas) and
 * CopyPaste's candidates with np.argsort of float32 overlaps. The default
 * kind ('quicksort') is not stable, and what it makes of equal keys
 * depends on the NumPy build and the CPU, as the loader's `numpy_sort`
 * setting names it:
 *
 *   scalar  NumPy's own introsort (npysort's aquicksort: median of three,
 *           insertion sort below 17 elements, heapsort past 2 log2(n)
 *           levels). NumPy 1.24 and earlier everywhere; NumPy 1.25 to 2.x
 *           on CPUs without AVX2 (or without AVX-512, for 1.25 and 1.26),
 *           and for the dtypes NumPy does not hand to x86-simd-sort.
 *   avx2    x86-simd-sort's argsort with 4 lanes (AVX2): NumPy 2.x on x86
 *           CPUs with AVX2 (x86-64-v3) but not AVX-512, for the dtypes
 *           int32, uint32, int64, uint64, float32 and float64.
 *   avx512  the same with 8 lanes (AVX-512 F, CD, BW, DQ, VL): NumPy 2.x on
 *           AVX-512 CPUs.
 *
 * NumPy 1.25 and 1.26 on AVX-512 CPUs run an older x86-simd-sort, which is
 * none of these. The Python package tells which one the installed NumPy
 * runs (detfeed.stack.numpy_sort). Every variant puts NaNs last and treats
 * -0.0 and +0.0 as equal, as NumPy does.
 */
typedef enum detfeed_numpy_sort {
    DETFEED_NUMPY_SORT_SCALAR = 0,
    DETFEED_NUMPY_SORT_AVX2 = 1,
    DETFEED_NUMPY_SORT_AVX512 = 2
} detfeed_numpy_sort;

/* The key dtypes of detfeed_numpy_argsort. */
typedef enum detfeed_numpy_dtype {
    DETFEED_NUMPY_INT32 = 0,
    DETFEED_NUMPY_UINT32 = 1,
    DETFEED_NUMPY_INT64 = 2,
    DETFEED_NUMPY_UINT64 = 3,
    DETFEED_NUMPY_FLOAT32 = 4,
    DETFEED_NUMPY_FLOAT64 = 5
} detfeed_numpy_dtype;

/* "scalar", "avx2", "avx512" into *out; DETFEED_EINVAL otherwise. */
DETFEED_API int detfeed_numpy_sort_parse(const char *name, detfeed_numpy_sort *out);

/*
 * np.argsort(keys) of n keys of `dtype` (native byte order), as NumPy's
 * variant `sort` computes it: order[0..n-1] receives the permutation, the
 * same int64 indices NumPy returns. DETFEED_EINVAL for an unknown dtype or
 * variant, a NULL array with n > 0, or n > INT32_MAX; DETFEED_ENOMEM. Safe
 * to call from any thread.
 */
DETFEED_API int detfeed_numpy_argsort(const void *keys, detfeed_numpy_dtype dtype,
                                      size_t n, int64_t *order,
                                      detfeed_numpy_sort sort);

/* ------------------------------------------------------------------------ */
/* Consumer dtypes (the conversion itself: detfeed_img.h)                   */
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
 * "bfloat16" into *out. DETFEED_EINVAL for anything else, or a NULL out. */
DETFEED_API int detfeed_dtype_parse(const char *name, detfeed_dtype *out);

/* ------------------------------------------------------------------------ */
/* Image decoders: the codec handle and its limits                          */
/* ------------------------------------------------------------------------ */
/*
 * A detfeed_codec reads and writes image files. It keeps the message of its
 * last failure, naming the file. One thread at a time per codec; create one
 * per thread. The caches below take one to decode the images they do not
 * hold; its decode and PNG functions are in detfeed_img.h ("Image files").
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

/*
 * Limits on untrusted input, checked from the header before any pixel
 * memory is allocated, so that a decompression bomb (a small file that
 * declares a huge image: a 782 KB PNG can declare 16384 x 16384, 768 MiB
 * decoded) costs nothing. An image over a limit is DETFEED_ELIMIT with a
 * message naming the file, its size, the limit's name and its value
 * ("a.png: 16384x16384 (268435456 pixels) exceeds the image size limit
 * max_pixels = 178956970").
 *
 * The default pixel limit is what Ultralytics 8.4 accepts: it verifies
 * every training image with PIL, whose Image.open refuses an image of more
 * than 2 * Image.MAX_IMAGE_PIXELS = 178956970 pixels (DecompressionBombError;
 * Ultralytics leaves MAX_IMAGE_PIXELS at PIL's 89478485 on that path), so
 * the default refuses exactly the images Ultralytics counts as corrupt for
 * their size. A decode then holds at most 3 * 178956970 bytes (512 MiB) of
 * pixels, twice that while an EXIF orientation is applied; each worker
 * thread decodes one image at a time. Lower the limits (for a dataset:
 * detfeed_dataset_set_limit; a loader: its max_* settings) to bound memory
 * more tightly, e.g. max_pixels = 64 * imgsz^2 (26214400 at 640) when no
 * image of the dataset is larger.
 */
typedef enum detfeed_codec_limit {
    DETFEED_LIMIT_MAX_WIDTH = 0,      /* default 32768 */
    DETFEED_LIMIT_MAX_HEIGHT = 1,     /* default 32768 */
    DETFEED_LIMIT_MAX_PIXELS = 2,     /* width * height, default 178956970 */
    DETFEED_LIMIT_MAX_FILE = 3,       /* file bytes, default 1 GiB */
    DETFEED_LIMIT_MAX_IMAGE_BYTES = 4 /* decoded bytes, width * height * 3;
                                         default 536870912 (512 MiB) */
} detfeed_codec_limit;
/* The defaults above, as numbers. */
#define DETFEED_DEFAULT_MAX_WIDTH       32768ull
#define DETFEED_DEFAULT_MAX_HEIGHT      32768ull
#define DETFEED_DEFAULT_MAX_PIXELS      178956970ull
#define DETFEED_DEFAULT_MAX_FILE        1073741824ull
#define DETFEED_DEFAULT_MAX_IMAGE_BYTES 536870912ull

/* Sets one limit (value > 0). DETFEED_EINVAL for an unknown limit or 0. */
DETFEED_API int detfeed_codec_set_limit(detfeed_codec *codec, detfeed_codec_limit limit,
                                        uint64_t value);

/* Which OpenCV's bytes to give where OpenCV versions decode a file
 * differently (default DETFEED_CV_5_1): a 32-bit BMP with bit fields and an
 * info header of 56 bytes or more, whose masks OpenCV 4.6 ignores (bytes
 * B, G, R) and later versions apply (each field scaled to 0..255 in float,
 * truncated); WebP animations (refused by 4.6) and EXIF orientation (from
 * 5.0 on); TIFF: *.tif and *.tiff files, which Ultralytics 8.4 cannot read
 * with OpenCV 4.6, the compression schemes of the stack's libtiff (the
 * wheels' lack LZMA, ZSTD, JBIG and LERC, and 4.12's and 5.0's WebP),
 * 4-bit palettes (from 4.12 on), 16-bit gray tiles the image's edge cuts
 * (5.1's libtiff reads them whole). DETFEED_EINVAL for a value that is not
 * a detfeed_cv_version. */
DETFEED_API int detfeed_codec_set_opencv(detfeed_codec *codec,
                                         detfeed_cv_version version);

/* ------------------------------------------------------------------------ */
/* Randomness                                                               */
/* ------------------------------------------------------------------------ */
/*
 * Every random value in detfeed is a pure function of (seed, epoch, sample
 * index, slot): Philox4x32-10 with key = the 64-bit seed (low word first)
 * and counter = (slot, epoch, index low 32 bits, index high 32 bits). A
 * uniform double in [0, 1) takes the first two output words a, b as CPython
 * and NumPy do: ((a >> 5) * 2^26 + (b >> 6)) / 2^53.
 *
 * Slots follow Ultralytics' per-sample draw order, one value each, so that a
 * disabled transform moves no other draw and the colour route never changes
 * the geometry:
 *
 *   0 mosaic gate        1-3 mosaic partners   4 centre y   5 centre x
 *   6-7 perspective x, y 8 rotation angle      9 scale      10-11 shear x, y
 *   12-13 translate x, y 14 mixup gate         15 cutmix gate
 *   16-18 HSV gains h, s, v                    19 vertical flip
 *   20 horizontal flip   21 BGR gate           22 mixup partner
 *   23 cutmix partner    24 copy_paste gate (mode mixup)
 *   25 copy_paste partner (mode mixup)
 *   32-63 the mixup partner's own draws (its slot + 32)
 *   64-126 the mixup ratio: Beta(32, 32) as the 32nd smallest of 63 uniforms
 *   128-159 the cutmix partner's own draws (its slot + 128)
 *   160-168 cutmix's three areas: lam (Beta(1, 1)), centre x, centre y each
 *   169 cutmix's choice among the areas free of the sample's boxes
 *   b + 256 ... the copy_paste partner's draws of the chain at base b (the
 *   sample's b = 0, the mixup partner's 32, the cutmix partner's 128)
 *
 * The order of an epoch is a permutation drawn in its own domain (slot
 * DETFEED_SLOT_PERMUTATION): Fisher-Yates from the last position down,
 * position i swapping with floor(u * (i + 1)), u drawn at index i.
 */
#define DETFEED_SLOT_PERMUTATION 0x80000000u

/* One Philox4x32-10 block. Known answer: key {0, 0}, counter {0, 0, 0, 0}
 * gives 6627e8d5 e169c58d bc57ac4c 9b00dbd8. The three arrays must be
 * valid (no status: the call cannot fail otherwise); out may be counter. */
DETFEED_API void detfeed_philox4x32(const uint32_t counter[4], const uint32_t key[2],
                                    uint32_t out[4]);

/* The uniform double in [0, 1) of (seed, slot, epoch, index). */
DETFEED_API double detfeed_uniform(uint64_t seed, uint32_t slot, uint32_t epoch,
                                   uint64_t index);

/* The sample order of an epoch: a permutation of 0..n-1 into order[n]. */
DETFEED_API int detfeed_epoch_order(uint64_t seed, uint32_t epoch, size_t n,
                                    uint64_t *order);

/* Samples per rank: ceil(n / world_size) (DistributedSampler pads); 0 for
 * a world_size below 1. */
DETFEED_API size_t detfeed_shard_size(size_t n, int rank, int world_size);

/* A rank's shard of an epoch order, as PyTorch's DistributedSampler takes it:
 * the order padded to a multiple of world_size by repeating from its start,
 * then every world_size-th entry from position rank. out holds
 * detfeed_shard_size() entries. */
DETFEED_API int detfeed_shard(const uint64_t *order, size_t n, int rank, int world_size,
                              uint64_t *out);

/* ------------------------------------------------------------------------ */
/* Datasets                                                                 */
/* ------------------------------------------------------------------------ */
/*
 * A detfeed_dataset is the index of a dataset: the image files of one split,
 * their validated labels, and a report of everything that was skipped.
 *
 * Sources (detfeed_dataset_open):
 *   - an Ultralytics dataset YAML (.yaml/.yml): `path` (the root, found
 *     as Ultralytics' check_det_dataset finds it: see "Where a YAML's data
 *     is" below), `train`/`val`/`test` (a folder, a list file or an image,
 *     or a list of those, relative to the root), `names` (a list, or a map
 *     from 0..nc-1),
 *     `nc`, `kpt_shape` ([K, 2] or [K, 3]) and `flip_idx`. With `nc` and
 *     no `names` the classes are named class_0, class_1, ... (as
 *     Ultralytics names them); with neither (Ultralytics refuses such a
 *     YAML) the classes are unknown, with a note in the problems list.
 *     Refused with the file and line: empty `names`, a `path` that is not
 *     one folder, a split entry that is an empty path ("" would be the
 *     whole root, every split's images);
 *   - a folder: every image below it, recursively, as Python's
 *     glob("**" + "/" + "*.*", recursive=True) finds them: links to folders
 *     are followed, except a link back to a folder above it (a loop), which
 *     is a problem counted in DETFEED_STAT_LINK_LOOPS and not followed, so
 *     each image is indexed once (glob would follow a loop until the path is
 *     too long); entries that are not folders are found whatever they are
 *     (dangling links and FIFOs included) and refused below;
 *   - a text file listing images, one per line (relative paths are taken
 *     from the list's folder), of any size: it is read a megabyte at a
 *     time, so memory goes with the images it names (a line longer than
 *     65536 bytes is a problem at its line, left out).
 * Where a YAML's data is (Ultralytics 8.4's check_det_dataset, exactly):
 *   - the root is `path` when it is absolute (there or not: a mistyped
 *     absolute path is a missing dataset, never another folder), or
 *     relative and there from the working folder (not the YAML's); a
 *     relative `path` not there is taken under Ultralytics' datasets_dir
 *     and resolved; without `path` (or `path: ""`) the root is the YAML's
 *     folder;
 *   - datasets_dir is detfeed_dataset_set_datasets_dir's, else the
 *     "datasets_dir" string of Ultralytics' settings.json in its user
 *     config folder: $YOLO_CONFIG_DIR/Ultralytics when YOLO_CONFIG_DIR is
 *     set ("~" expanded), else $XDG_CONFIG_HOME/Ultralytics, else
 *     ~/.config/Ultralytics; where that folder cannot be made (Ultralytics
 *     then falls back), $TMPDIR/Ultralytics-<uid> when it is the user's own
 *     0700 folder. Without a settings file giving one (none there, not a
 *     JSON object, no string datasets_dir), Ultralytics' default for an
 *     installed package: "datasets" in the working folder. (Ultralytics run
 *     from a git checkout defaults to "datasets" beside the checkout, which
 *     only it knows: its settings file then says so after its first run.)
 *     It is read only when a relative `path` needs it;
 *   - each split entry is joined to the root and resolved as
 *     Path.resolve() does (absolute, symbolic links followed, so image and
 *     label paths are the resolved ones Ultralytics uses); a lone entry
 *     (not a list) that starts with "../" and is not there is taken
 *     without the "../";
 *   - an entry that is not there fails the open (DETFEED_EIO, whatever the
 *     policy) with a message naming the file and line, the resolved path,
 *     the root and the rule that found it: the dataset is missing, which
 *     Ultralytics would download (its 'download' key) or fail on; detfeed
 *     never downloads and never falls back to another folder;
 *   - the root and its rule are detfeed_dataset_root and
 *     detfeed_dataset_root_rule (`detfeed check` prints them);
 *   - a bare name (coco8.yaml) that is not a file is not looked up among
 *     Ultralytics' packaged dataset YAMLs by the library: the open fails
 *     saying so (the Python Loader asks the installed Ultralytics).
 *   detfeed_dataset_set_root replaces all this with the caller's folder.
 *
 * Nothing that is not a regular file (a FIFO, socket or device, a dangling
 * symbolic link or a link loop) is ever opened: opening a FIFO would wait
 * for a writer. Such an image, label file, list file or YAML entry is a
 * problem that says what it is; such a source fails with DETFEED_EIO.
 * Image files are those whose lower-case suffix is one Ultralytics 8.4
 * accepts (its IMG_FORMATS: avif, bmp, dng, heic, heif, jp2, jpeg, jpg, mpo,
 * png, tif, tiff, webp), in byte-wise sorted order of their paths (Python's
 * sorted() on the same paths); names starting with '.' are skipped. detfeed
 * decodes every one of them, by the file's signature, as the stack's
 * OpenCV and Ultralytics' imread decode them (see detfeed_codec_set_opencv
 * and detfeed_codec_decode_file): a .avif as Pillow 13 reads it, a .heic
 * or .heif as Ultralytics reads it with Pillow and pi-heif. A .avif, .heic
 * or .heif holding another format (which Ultralytics reads with Pillow) is
 * counted as unsupported and skipped. An image's label file is its path
 * with the last "/images/" replaced by "/labels/" and the suffix by ".txt"
 * (Ultralytics' rule). A missing or empty label file makes the image a
 * background; a label path that is anything but a regular file (a folder,
 * a FIFO, a dangling link or a link loop) skips the image as corrupt.
 *
 * Labels are validated as Ultralytics does (coordinates <= 1.01, values >=
 * -0.01, class ids whole numbers below nc, the task's column count;
 * duplicate rows removed), line by line: every rejected line is reported
 * with file and line, and its image is skipped as a whole, so no object
 * silently becomes background. Where nc is not known (a folder or list
 * without DETFEED_DATASET_NC, a YAML without names or nc), and with
 * single_cls, class ids are still checked to be whole numbers in 0 ..
 * 999999 (1000000 classes at most): a larger id (1e20) is rejected, never
 * converted. Messages show the value that failed with the digits that
 * tell it from the bound (1.0100001 is above 1.01) and name the column (a
 * polygon's box, a keypoint's x or y). Label and list files are split into
 * lines as Python's str.splitlines() splits them (\n, \r, \r\n, \v, \f,
 * \x1c, \x1d, \x1e, U+0085, U+2028, U+2029), and label values at what
 * str.split() takes for whitespace; a UTF-8 byte order mark is accepted.
 * A label file holds at most DETFEED_DATASET_MAX_LABELS instances of at
 * most DETFEED_DATASET_MAX_LABEL_LINE bytes each (one that cannot is
 * refused before it is read); a dataset YAML at most 256 MiB.
 *
 * Segment datasets: an image may have any number of polygons. A sample
 * with more than 255 instances (one such image, or a mosaic of images with
 * fewer) gets an int32 overlap mask, as in Ultralytics (detfeed_mask_type).
 *
 * Under DETFEED_POLICY_SKIP (default) each bad image, label file or YAML
 * entry is skipped and counted with its reason; under DETFEED_POLICY_FAIL
 * the first one makes detfeed_dataset_open fail with a message naming it.
 * A malformed YAML, or a source without any image, always fails.
 *
 * Ultralytics' dataset train arguments, with its semantics (8.4's
 * BaseDataset); fraction and classes leave a note in the problem list when
 * they change anything:
 *
 *   fraction    (DETFEED_DATASET_FRACTION) keeps the first `count` files of
 *               the sorted list of image files above (every IMG_FORMATS
 *               suffix, unsupported ones included), before any image or
 *               label is verified, as get_img_files does: a count given
 *               with detfeed_dataset_set_int (an integer >= 1; 1 means all,
 *               as get_split_fraction turns 1 into 1.0), or a ratio given
 *               with detfeed_dataset_set_float (0 < ratio <= 1), for which
 *               count = max(1, round(files * ratio)) with Python's round
 *               (half to even) of the double product. 0 is refused
 *               (DETFEED_EINVAL, with a message), as are negative counts
 *               and ratios outside (0, 1] (Ultralytics' argument check
 *               refuses them). The files left out are counted in
 *               DETFEED_STAT_LEFT_OUT; their label files are not orphans.
 *               Lines of a list file that are not image files take no part
 *               (Ultralytics drops them; detfeed reports them as
 *               unsupported, as without a fraction). The fraction applies
 *               to whatever split is read; Ultralytics' trainer applies a
 *               scalar fraction to its training split only.
 *   classes     (detfeed_dataset_set_classes) keeps only the instances whose
 *               class id is in the list (update_labels): boxes, polygons and
 *               keypoints alike, in file order; images stay, those left
 *               without instances as backgrounds. Ids must be >= 0, and
 *               below nc where nc is known (checked when opening:
 *               DETFEED_EINVAL with a message; Ultralytics takes such an id
 *               and matches nothing with it). Labels are validated before
 *               the filter, against every class.
 *   single_cls  (DETFEED_DATASET_SINGLE_CLS) makes every class id 0, after
 *               the classes filter (detfeed_dataset_labels, samples and
 *               batches), does not check class ids against nc (as
 *               verify_image_label with single_cls), and makes
 *               detfeed_dataset_class_count 1 with the one class named
 *               "item" (the trainer's "Overriding class names with single
 *               class"); the classes filter still uses the original ids.
 *
 * The counts after the filter: LABELLED, BACKGROUNDS and INSTANCES describe
 * the labels training sees (what Ultralytics' dataset.labels hold after
 * update_labels); DETFEED_STAT_CLASS_FILTERED counts the instances removed.
 * Ultralytics' scan line ("N images, M backgrounds, K corrupt") is printed
 * before the filter: its backgrounds are MISSING_LABELS + EMPTY_LABELS.
 *
 * Thread safety: configure and open from one thread; after a successful
 * open, every const query may be called from any number of threads.
 */
typedef struct detfeed_dataset detfeed_dataset;

typedef enum detfeed_policy {
    DETFEED_POLICY_SKIP = 0, /* skip and count bad samples (default) */
    DETFEED_POLICY_FAIL = 1  /* the first bad sample is an error */
} detfeed_policy;

typedef enum detfeed_verify {
    DETFEED_VERIFY_HEADER = 0, /* read each image's header: format, size (default) */
    DETFEED_VERIFY_DECODE = 1, /* decode every image completely (finds damaged data) */
    DETFEED_VERIFY_NONE = 2    /* trust the files; sizes unknown until decoded */
} detfeed_verify;

typedef enum detfeed_dataset_param {
    DETFEED_DATASET_POLICY = 0,         /* detfeed_policy; default SKIP */
    DETFEED_DATASET_VERIFY = 1,         /* detfeed_verify; default HEADER */
    DETFEED_DATASET_NC = 2,             /* classes when the source gives none
                                           (a folder or list, or a YAML without
                                           names or nc; another count than a
                                           YAML's fails the open); 0
                                           (default): ids are checked to be in
                                           0 .. 999999 */
    DETFEED_DATASET_MAX_LABEL_LINE = 3, /* longest label line in bytes; 65536 */
    DETFEED_DATASET_MAX_LABELS = 4,     /* most instances in one file, 1 ..
                                           10000000; 1000000 (Ultralytics has
                                           no such limit: any real image is
                                           kept) */
    DETFEED_DATASET_MAX_PROBLEMS = 5,   /* problems kept in detail; 10000 */
    DETFEED_DATASET_FRACTION = 6,       /* Ultralytics' fraction (above): an int
                                           count >= 1 or a float ratio in
                                           (0, 1]; default 1 (all) */
    DETFEED_DATASET_SINGLE_CLS = 7,     /* int 0/1: Ultralytics' single_cls
                                           (above); default 0 */
    DETFEED_DATASET_OPENCV = 8          /* detfeed_cv_version whose decoding the
                                           images get (detfeed_codec_set_opencv);
                                           default DETFEED_CV_5_1 */
} detfeed_dataset_param;

typedef enum detfeed_dataset_stat {
    DETFEED_STAT_IMAGES = 0,          /* image files of the formats detfeed
                                         decodes, of those the fraction keeps */
    DETFEED_STAT_USABLE = 1,          /* images in the index (not skipped) */
    DETFEED_STAT_LABELLED = 2,        /* usable images with at least one instance
                                         (after the classes filter) */
    DETFEED_STAT_BACKGROUNDS = 3,     /* usable images without instances (after
                                         the classes filter) */
    DETFEED_STAT_MISSING_LABELS = 4,  /* usable images without a label file */
    DETFEED_STAT_EMPTY_LABELS = 5,    /* usable images with an empty label file */
    DETFEED_STAT_ORPHAN_LABELS = 6,   /* label files without an image */
    DETFEED_STAT_INSTANCES = 7,       /* instances in the usable images (after
                                         the classes filter) */
    DETFEED_STAT_DUPLICATES = 8,      /* duplicate label rows removed */
    DETFEED_STAT_CORRUPT = 9,         /* images skipped: bad image or label file */
    DETFEED_STAT_REJECTED_LINES = 10, /* label lines rejected */
    DETFEED_STAT_UNSUPPORTED = 11,    /* image files in formats detfeed cannot read
                                         (of those the fraction keeps) */
    DETFEED_STAT_LEFT_OUT = 12,       /* image files (any format) left out by the
                                         fraction */
    DETFEED_STAT_CLASS_FILTERED = 13, /* instances removed by the classes list */
    DETFEED_STAT_LINK_LOOPS = 14      /* folder links not followed: each leads
                                         back to a folder above it */
} detfeed_dataset_stat;

typedef enum detfeed_task {
    DETFEED_TASK_DETECT = 0,  /* boxes */
    DETFEED_TASK_SEGMENT = 1, /* polygons (and the boxes derived from them) */
    DETFEED_TASK_POSE = 2     /* boxes and keypoints */
} detfeed_task;

/* Creates an empty dataset handle; flags must be 0. */
DETFEED_API int detfeed_dataset_create(detfeed_dataset **out, uint32_t flags);
DETFEED_API void detfeed_dataset_destroy(detfeed_dataset *ds);
/* Message of the last failure ("" after a success); valid until the next
 * non-const call. */
DETFEED_API const char *detfeed_dataset_last_error(const detfeed_dataset *ds);
/* How far detfeed_dataset_open has come, for another thread to show while
 * it runs (the one call that may run beside it): the stage ("index": image
 * files looked at, each checked as DETFEED_DATASET_VERIFY says) and its
 * units done and total; NULL when nothing is running (done and total then
 * say where the last stage ended). */
DETFEED_API const char *detfeed_dataset_progress(const detfeed_dataset *ds,
                                                 uint64_t *done, uint64_t *total);

/* Sets a parameter before detfeed_dataset_open (DETFEED_EBADSTATE after);
 * DETFEED_EINVAL for an unknown parameter or a value out of its range (with
 * a message for the fraction and single_cls). */
DETFEED_API int detfeed_dataset_set_int(detfeed_dataset *ds,
                                        detfeed_dataset_param param, int64_t value);
/* The float parameters: only DETFEED_DATASET_FRACTION, as a ratio in (0, 1]
 * (1.0: all); DETFEED_EINVAL, with a message, otherwise. */
DETFEED_API int detfeed_dataset_set_float(detfeed_dataset *ds,
                                          detfeed_dataset_param param, double value);
/* The image limits (detfeed_codec_limit, defaults there) that verifying,
 * caching and loading the dataset's images apply, whatever codec decodes
 * them: an image over one is skipped as a problem naming the file and the
 * limit, before any pixel memory is allocated. Before detfeed_dataset_open;
 * DETFEED_EINVAL, with a message, for 0 or an unknown limit. */
DETFEED_API int detfeed_dataset_set_limit(detfeed_dataset *ds,
                                          detfeed_codec_limit limit, uint64_t value);
/*
 * Ultralytics' classes: keep only the instances of classes ids[0..n-1]
 * (see above; duplicates are harmless). n == 0 (ids may then be NULL)
 * restores all classes, the default. (Ultralytics' classes=[] would keep
 * no instance at all; detfeed has no such setting.) DETFEED_EINVAL, with a
 * message, for a negative id or more than 1000000 ids; ids not below nc
 * make detfeed_dataset_open fail. Before detfeed_dataset_open.
 */
DETFEED_API int detfeed_dataset_set_classes(detfeed_dataset *ds, const int *ids,
                                            size_t n);
/* The split a YAML source is read for: "train" (default), "val" or "test". */
DETFEED_API int detfeed_dataset_set_split(detfeed_dataset *ds, const char *split);
/* Overrides a YAML's `path` (the dataset root), as it is (relative: from
 * the working folder). NULL restores the YAML's. Other sources have no
 * root: opening one with a root set fails (DETFEED_EINVAL). */
DETFEED_API int detfeed_dataset_set_root(detfeed_dataset *ds, const char *root);
/* Ultralytics' datasets_dir, under which a YAML's relative `path` that is
 * not there from the working folder is found (see "Where a YAML's data
 * is"), in place of the one its settings file gives. NULL (default): the
 * settings file's. Before detfeed_dataset_open. */
DETFEED_API int detfeed_dataset_set_datasets_dir(detfeed_dataset *ds, const char *dir);
/* A YAML source's dataset root, resolved (absolute), and the rule that
 * found it in words ("path: coco8 under datasets_dir /data from
 * /home/me/.config/Ultralytics/settings.json"); set by detfeed_dataset_open
 * also when it then fails (a missing dataset). NULL for other sources and
 * before an open; they live as long as the dataset. */
DETFEED_API const char *detfeed_dataset_root(const detfeed_dataset *ds);
DETFEED_API const char *detfeed_dataset_root_rule(const detfeed_dataset *ds);

/* Builds the index from `source` (see above). Once per handle. */
DETFEED_API int detfeed_dataset_open(detfeed_dataset *ds, const char *source);

/* A count (see detfeed_dataset_stat); -1 for an unknown key. */
DETFEED_API int64_t detfeed_dataset_stat_get(const detfeed_dataset *ds,
                                             detfeed_dataset_stat stat);

/* The problems found while opening (at most MAX_PROBLEMS kept; the counts
 * above include all). Each has a file, a line (0: the whole file) and a
 * reason; the strings live as long as the dataset. */
DETFEED_API size_t detfeed_dataset_problem_count(const detfeed_dataset *ds);
DETFEED_API int detfeed_dataset_problem(const detfeed_dataset *ds, size_t index,
                                        const char **file, int *line,
                                        const char **reason);
/* What a problem is: something left out (an image, a label line), a note on
 * the data (an orphan label file, duplicate rows removed), or what a
 * setting of the user's did (fraction, classes); NONE for no such index. */
typedef enum detfeed_problem_kind {
    DETFEED_PROBLEM_NONE = -1,
    DETFEED_PROBLEM_SKIP = 0,
    DETFEED_PROBLEM_NOTE = 1,
    DETFEED_PROBLEM_SETTING = 2
} detfeed_problem_kind;
DETFEED_API detfeed_problem_kind detfeed_dataset_problem_kind(const detfeed_dataset *ds,
                                                              size_t index);

/* Usable images, in order; index i in [0, detfeed_dataset_size). */
DETFEED_API size_t detfeed_dataset_size(const detfeed_dataset *ds);
DETFEED_API const char *detfeed_dataset_image_path(const detfeed_dataset *ds, size_t i);
/* Size of image i as decoded (0 x 0 under DETFEED_VERIFY_NONE). */
DETFEED_API int detfeed_dataset_image_size(const detfeed_dataset *ds, size_t i,
                                           int *width, int *height);
/* Number of instances of image i (after duplicate removal). */
DETFEED_API int detfeed_dataset_instance_count(const detfeed_dataset *ds, size_t i);
/*
 * Copies image i's labels into caller arrays sized for
 * detfeed_dataset_instance_count() = n instances: cls [n], boxes [n][4]
 * (normalized centre x, centre y, width, height) and, for pose, keypoints
 * [n][K][3] (x, y, visibility). Any pointer may be NULL to skip that array.
 */
DETFEED_API int detfeed_dataset_labels(const detfeed_dataset *ds, size_t i, float *cls,
                                       float *boxes, float *keypoints);

DETFEED_API detfeed_task detfeed_dataset_task(const detfeed_dataset *ds);
/* Number of classes (0 when unknown) and the name of class k (NULL if none;
 * class_k, as Ultralytics names them, where the number comes from `nc` or
 * DETFEED_DATASET_NC without names); with single_cls 1 and "item". */
DETFEED_API int detfeed_dataset_class_count(const detfeed_dataset *ds);
DETFEED_API const char *detfeed_dataset_class_name(const detfeed_dataset *ds, int k);
/* Pose datasets: K and D of kpt_shape (0, 0 otherwise), and flip_idx (NULL
 * when the YAML has none; K entries). */
DETFEED_API void detfeed_dataset_kpt_shape(const detfeed_dataset *ds, int *nkpt,
                                           int *ndim);
DETFEED_API const int *detfeed_dataset_flip_idx(const detfeed_dataset *ds);

/* ------------------------------------------------------------------------ */
/* RAM cache of decoded images                                              */
/* ------------------------------------------------------------------------ */
/*
 * A detfeed_cache holds a dataset's images decoded and resized to their
 * load size (detfeed_load_size in detfeed_img.h: long side imgsz,
 * INTER_LINEAR), in one arena shared by all threads. Images are admitted in
 * index order while they fit the byte budget; the others are decoded on
 * demand by detfeed_cache_get. After detfeed_cache_fill returns, the cache
 * is read-only and detfeed_cache_get may be called from any number of
 * threads at once, each with its own codec.
 */
typedef struct detfeed_cache detfeed_cache;

typedef enum detfeed_cache_stat {
    DETFEED_CACHE_IMAGES = 0,    /* images held in the arena */
    DETFEED_CACHE_BYTES = 1,     /* bytes of pixels held */
    DETFEED_CACHE_BUDGET = 2,    /* the byte budget */
    DETFEED_CACHE_ON_DEMAND = 3, /* images left to decode on demand */
    DETFEED_CACHE_FAILED = 4     /* images that failed to decode while filling */
} detfeed_cache_stat;

/* Creates a cache for `ds` (which must outlive it; an open dataset: one
 * not opened has no images, and its cache holds none) at imgsz
 * (32..16384), with a budget in bytes (0: nothing cached; every image on
 * demand). flags must be 0. */
DETFEED_API int detfeed_cache_create(detfeed_cache **out, const detfeed_dataset *ds,
                                     int imgsz, uint64_t budget, uint32_t flags);
DETFEED_API void detfeed_cache_destroy(detfeed_cache *cache);
/* Message of the cache's last failure (fill, set_disk); a failed
 * detfeed_cache_get's goes to its codec. */
DETFEED_API const char *detfeed_cache_last_error(const detfeed_cache *cache);

/* Decodes and resizes the admitted images with `threads` threads (>= 1).
 * An image that fails to decode is left out and counted (it fails again,
 * with its message, when requested). Once per cache. */
DETFEED_API int detfeed_cache_fill(detfeed_cache *cache, int threads);

/*
 * Image i at its load size. When cached, *pixels points into the arena
 * (valid until the cache is destroyed) and *owned is NULL; otherwise the
 * image is decoded and resized now with `codec`, *pixels == *owned, and the
 * caller releases it with detfeed_free(). Errors are the codec's, with its
 * message. *orig_width and *orig_height (may be NULL) receive the size
 * before resizing.
 */
DETFEED_API int detfeed_cache_get(const detfeed_cache *cache, size_t i,
                                  detfeed_codec *codec, const uint8_t **pixels,
                                  int *width, int *height, int *orig_width,
                                  int *orig_height, uint8_t **owned);

/* A count (see detfeed_cache_stat); -1 for an unknown key. */
DETFEED_API int64_t detfeed_cache_stat_get(const detfeed_cache *cache,
                                           detfeed_cache_stat stat);

/* ------------------------------------------------------------------------ */
/* Disk cache of decoded images                                             */
/* ------------------------------------------------------------------------ */
/*
 * A detfeed_disk_cache keeps the images of a dataset decoded and resized to
 * their load size (exactly the bytes the RAM cache holds) in one file, for
 * datasets larger than memory (COCO train2017 at 640 is about 100 GB).
 * Images are read from it with pread: reads are page-cache hits shared by
 * every process of a node, and no image is decoded twice. The file is
 * never mapped, so another program that cuts it short or writes into it
 * while it is read cannot kill the process (no SIGBUS): see "Integrity".
 *
 * Building. The file is written by one process at a time, the one that
 * holds an advisory lock (flock) on PATH.lock. That process writes PATH.part
 * (its full size reserved with fallocate where the filesystem supports it:
 * a disk too small is refused when opening, with the bytes needed): every
 * image it decodes goes in as it is decoded (detfeed_disk_cache_get, or the
 * loader's verification of every image while it opens), or all at once with
 * detfeed_disk_cache_fill (`detfeed cache DATA`). When every image is in,
 * a thread of the cache writes the index and the header with its
 * completion mark, fsyncs the file, renames it to PATH and fsyncs the
 * folder. An interrupted write therefore leaves at most PATH.part, which is
 * never read (a later writer unlinks it and creates its own; destroying an
 * incomplete cache removes it). PATH.lock stays (an empty file; removing
 * lock files races).
 *
 * Links. PATH, PATH.part and PATH.lock are opened without following a
 * symbolic link, and PATH.part is created new (O_EXCL): a link planted at
 * any of them is refused (DETFEED_EIO, naming it), never read, written
 * or created through, and a hard link at a stale PATH.part is unlinked,
 * not written into. The file is replaced only by rename.
 *
 * Other processes. A process that opens the cache while another one holds
 * the lock decodes the images it needs itself (writing nothing), and
 * adopts the writer's file once it appears: it looks for it at most once a
 * second, from the calls that miss. With DETFEED_DISK_WAIT it waits for the
 * writer instead (blocking in detfeed_disk_cache_open). If the writer dies,
 * the lock goes with it and the next process that opens the cache builds it.
 *
 * Validation. A file is used only when all of this holds, else it is
 * rebuilt (or, with DETFEED_DISK_NO_BUILD, refused) and
 * detfeed_disk_cache_note says which check failed (the file that changed,
 * the setting that differs): the magic, version and byte order; the
 * completion mark; the header's and the index's SHA-256; the file's size;
 * how pixels are made (this library's load step, its decoders' versions
 * (libjpeg-turbo, libspng, libtiff, OpenJPEG) and the OpenCV whose
 * decoding it gives); imgsz; the number of
 * images; and for each image its path (made absolute), its file size and modification
 * time (ns), its size and its load size. imgsz is the only setting that changes the
 * load size (the resize is OpenCV's INTER_LINEAR on every reference stack); the split,
 * fraction and the dataset source change the image list, which is checked.
 * What is at the path and is not a disk cache (a folder, a device, a file
 * that does not start with the magic "DFDCACHE"; an empty file is taken
 * as nothing) is never written over: detfeed_disk_cache_open fails with
 * DETFEED_EIO naming it.
 * Images must not change while the file is built.
 *
 * Integrity. Every image's pixels carry a checksum in the index (XXH3-64,
 * seed 0), checked the first time a process reads the image from the
 * file, and again once the file has changed: after every read the file's
 * change time and size are looked at (fstat), and a change, by whoever
 * made it, has every image checked again at its next read. While the
 * file's change time is under 2 s older than a read, that read is checked
 * whatever was checked before: file systems keep change times in steps,
 * and a change within the step of the last one leaves them as they were
 * (the check counts for later reads once the time has settled). An image
 * that does not match, or that cannot be read whole (the file was cut
 * short or changed by another program, the disk is damaged), is decoded
 * from its own file instead, so no damaged pixel reaches a sample; it is
 * counted (DETFEED_DISK_DAMAGED) with a line naming the file and the image
 * (detfeed_disk_cache_damage), and this process does not read it from the
 * file again. A process that is writing the file writes the image again
 * once decoded (before the file is committed). A complete file is never
 * written into: DETFEED_DISK_VERIFY (what `detfeed cache` opens with)
 * checks every image first and rebuilds a damaged file by rename, and
 * with DETFEED_DISK_NO_BUILD (`detfeed cache --check`) refuses it with
 * DETFEED_ECORRUPT, naming the first damaged image. A file replaced by
 * rename while it is read is not seen: the reader keeps the file it
 * opened.
 *
 * File format (version 2, host byte order, recorded): a 4096-byte header
 * (magic "DFDCACHE", version, byte-order mark 0x01020304, completion mark,
 * imgsz, image count, images held, index offset and bytes, data offset,
 * file bytes, the index's SHA-256, the pixel provenance text and the
 * header's SHA-256); the index at 4096: one 64-byte record per image in
 * dataset order (pixel offset, 0 when not held; file size; mtime in ns;
 * load width and height; decoded width and height; path offset and bytes
 * in the path table; the pixels' XXH3-64) and the path table; then the
 * pixels, page-aligned at the start and each image 64-byte aligned, in
 * index order, w * h * 3 bytes BGR HWC. A file of version 1 (no
 * checksums) is rebuilt.
 * Images of unknown size (DETFEED_VERIFY_NONE) and images that fail to
 * decode are not held: they are decoded each time (failing again with
 * their message).
 *
 * Where the file goes (detfeed_disk_cache_open with path NULL, and the
 * loader's cache "disk" without a cache_path): beside the label folder of
 * the dataset's first image, as Ultralytics keeps its labels cache:
 * images in coco/images/train2017 give coco/labels/train2017.detfeed-640.cache
 * for imgsz 640. When that folder cannot be written (read-only dataset) and
 * holds no valid file, the file goes to the user's cache folder instead,
 * $XDG_CACHE_HOME/detfeed (else $HOME/.cache/detfeed), named after the
 * label folder and a hash of its absolute path, and the note says so. An
 * explicit path whose folder cannot be written is used when it holds a
 * valid file and refused (DETFEED_EIO, with the reason) otherwise.
 *
 * Threads. After a successful open every function but _destroy may be
 * called from any number of threads at once (each with its own codec).
 */
typedef struct detfeed_disk_cache detfeed_disk_cache;

/* Flags of detfeed_disk_cache_open. VERIFY reads every image of a file it
 * finds and checks its pixels' checksums first: a damaged file is rebuilt
 * (with NO_BUILD: refused). */
#define DETFEED_DISK_NO_BUILD 1u /* use a valid file, or fail saying why */
#define DETFEED_DISK_WAIT     2u /* while another process writes it, wait */
#define DETFEED_DISK_VERIFY   4u /* check every image's pixels when opening */

/* What a disk cache is doing (DETFEED_DISK_STATE). */
typedef enum detfeed_disk_state {
    DETFEED_DISK_REUSED = 0,  /* a valid file was there and is read */
    DETFEED_DISK_WRITING = 1, /* this process writes the file as images come */
    DETFEED_DISK_BUILT = 2,   /* this process wrote the file; complete and in place */
    DETFEED_DISK_WAITING = 3, /* another process writes it; images decoded here */
    DETFEED_DISK_ADOPTED = 4, /* ... and its complete file is read since */
    DETFEED_DISK_FAILED = 5   /* writing failed (the note says why): images are
                                 decoded on demand, the partial file removed */
} detfeed_disk_state;

typedef enum detfeed_disk_stat {
    DETFEED_DISK_STATE = 0,      /* detfeed_disk_state, now */
    DETFEED_DISK_IMAGES = 1,     /* images the file holds (so far, while written) */
    DETFEED_DISK_BYTES = 2,      /* bytes of their pixels */
    DETFEED_DISK_FILE_BYTES = 3, /* bytes of the whole file */
    DETFEED_DISK_HITS = 4,       /* images this process read from the file */
    DETFEED_DISK_DECODED = 5,    /* images this process decoded (not in the file) */
    DETFEED_DISK_WRITTEN = 6,    /* images this process wrote into the file */
    DETFEED_DISK_EXPECTED = 7,   /* images a complete file holds (known sizes) */
    DETFEED_DISK_DAMAGED = 8     /* images this process found damaged in the file
                                    (see detfeed_disk_cache_damage) */
} detfeed_disk_stat;

/* Creates an unopened disk cache; flags must be 0. */
DETFEED_API int detfeed_disk_cache_create(detfeed_disk_cache **out, uint32_t flags);
/* Commits a file that is complete but not yet in place, removes an
 * incomplete PATH.part, releases the lock and the files. NULL: no-op.
 * Pixels it returned are invalid afterwards. */
DETFEED_API void detfeed_disk_cache_destroy(detfeed_disk_cache *dc);
/* The message of the last failure ("" after a success). */
DETFEED_API const char *detfeed_disk_cache_last_error(const detfeed_disk_cache *dc);

/*
 * Opens the cache of `ds` (which must outlive it) at imgsz (32..16384) in
 * file `path` (NULL: the default place, above), with flags
 * DETFEED_DISK_NO_BUILD, DETFEED_DISK_WAIT and DETFEED_DISK_VERIFY or 0:
 * opens a valid file, or becomes the writer, or (another process writing)
 * decodes until its file appears. Once per handle. Errors with the message naming the
 * file: DETFEED_EIO (a folder that cannot be written, a file that cannot be created or
 * reserved: the disk is too small), DETFEED_ECORRUPT (NO_BUILD: the file is missing,
 * stale, incomplete or damaged: which, and why), DETFEED_ENOMEM.
 */
DETFEED_API int detfeed_disk_cache_open(detfeed_disk_cache *dc,
                                        const detfeed_dataset *ds, int imgsz,
                                        const char *path, uint32_t flags);

/* Writes every image not yet in the file with `threads` threads (>= 1) and
 * commits the file before returning (what `detfeed cache` runs). A cache
 * that is not writing has nothing to do (DETFEED_OK). DETFEED_EIO, with
 * the message, when writing fails; images that fail to decode are left out
 * (as in the RAM cache) and counted in the note. */
DETFEED_API int detfeed_disk_cache_fill(detfeed_disk_cache *dc, int threads);
/* How far detfeed_disk_cache_fill has come, for another thread to show while
 * it runs (the one call that may run beside it): "cache" and the images
 * looked at and their total; NULL when it is not running. */
DETFEED_API const char *detfeed_disk_cache_progress(const detfeed_disk_cache *dc,
                                                    uint64_t *done, uint64_t *total);

/* Image i at its load size, in a new buffer (*pixels == *owned, released
 * with detfeed_free): read from the file and checked (a hit), or decoded
 * and resized now with `codec` (offered to the file when this process
 * writes it). As detfeed_cache_get otherwise: many threads may call it at
 * once, each with its own codec, and its message goes to the codec
 * (DETFEED_EINVAL without one). */
DETFEED_API int detfeed_disk_cache_get(detfeed_disk_cache *dc, size_t i,
                                       detfeed_codec *codec, const uint8_t **pixels,
                                       int *width, int *height, int *orig_width,
                                       int *orig_height, uint8_t **owned);

/* A count (see detfeed_disk_stat); -1 for an unknown key or NULL. */
DETFEED_API int64_t detfeed_disk_cache_stat_get(const detfeed_disk_cache *dc,
                                                detfeed_disk_stat stat);
/* The file's path (the final name, also while PATH.part is written), or
 * NULL before a successful open; valid until destroy. */
DETFEED_API const char *detfeed_disk_cache_path(const detfeed_disk_cache *dc);
/* One line on what opening found and did: "reused", or why the file was
 * (re)built ("no file", "stale: imgsz 320 in the file, 640 asked",
 * "stale: a.jpg changed: 1200 bytes in the file, 1260 now", ...), the
 * fallback to the user's cache folder, another process writing, a write
 * that failed. Valid until destroy; may change once (WRITING to BUILT,
 * WAITING to ADOPTED, FAILED). */
DETFEED_API const char *detfeed_disk_cache_note(const detfeed_disk_cache *dc);

/* The k-th damaged image this process found (k below DETFEED_DISK_DAMAGED;
 * lines are kept for the first 100), as one line naming the file, the
 * image's index and path and what was wrong ("its pixels do not match
 * their checksum", "the file ends before its pixels"), copied into buf
 * (size bytes, NUL-terminated). DETFEED_EINVAL (buf "") for a k without a
 * line or a NULL argument. Any thread, any time. */
DETFEED_API int detfeed_disk_cache_damage(const detfeed_disk_cache *dc, size_t k,
                                          char *buf, size_t size);

/* Puts a disk cache behind a RAM cache (before detfeed_cache_fill; both
 * for the same dataset and imgsz, else DETFEED_EINVAL): images the RAM
 * cache does not hold come from the file, the RAM cache fills from it, and
 * what either decodes is offered to it. The caller keeps ownership; the
 * disk cache must outlive the RAM cache. */
DETFEED_API int detfeed_cache_set_disk(detfeed_cache *cache, detfeed_disk_cache *disk);

/* ------------------------------------------------------------------------ */
/* Loader                                                                   */
/* ------------------------------------------------------------------------ */
/*
 * A detfeed_loader turns a dataset into augmented samples (and, later,
 * batches). Configure it with detfeed_loader_set_int / _set_float, then
 * detfeed_loader_open. Every sample is a pure function of (dataset, the
 * settings, seed, epoch, index): see "Randomness" above.
 *
 * Training samples go through Ultralytics' v8 detection transforms:
 * Mosaic (4 tiles, probability `mosaic`) or LetterBox, RandomPerspective
 * (degrees, translate, scale, shear, perspective; border 114), RandomHSV
 * (hsv_h, hsv_s, hsv_v), RandomFlip vertical (flipud) and horizontal
 * (fliplr, keypoints mirrored through the YAML's flip_idx); MixUp (probability
 * `mixup`) blends a partner that went through its own Mosaic and
 * RandomPerspective, before the colour step. Mosaic is off (and mixup with
 * it) in the last `close_mosaic` epochs (and in every epoch when there are
 * no more epochs than that). Validation samples (augment 0) are letterboxed
 * without upscaling into their batch's rectangle and get no colour and no
 * flips: as Ultralytics' rect mode, images are ordered by aspect ratio h / w
 * (np.argsort of the float64 ratios as the numpy_sort setting's NumPy sorts
 * them: the order of equal ratios depends on NumPy and the CPU; another
 * order can be handed over with detfeed_loader_set_rect_order),
 * cut into batches, and each batch's shape is
 * ceil(shape * imgsz / 32 + 0.5) * 32 with shape [max_ar, 1] when every
 * ratio is below 1, [1, 1 / min_ar] when every ratio is above 1, else [1, 1].
 * Rect training (DETFEED_LOADER_RECT) takes the same order and shapes
 * without the 0.5: each sample is warped by RandomPerspective straight into
 * its batch's shape.
 */
typedef struct detfeed_loader detfeed_loader;

/* Where batch images are delivered. */
typedef enum detfeed_output {
    DETFEED_OUTPUT_HOST = 0, /* host memory (page-locked when a CUDA device is there) */
    DETFEED_OUTPUT_CUDA = 1  /* device memory of the loader's CUDA device */
} detfeed_output;

/*
 * Where the sample's image is made: all of it in the workers, its colour
 * step (RandomHSV) in the device, or its whole recipe in the device. All
 * three give the same bytes.
 *
 * DEVICE is honoured only with CUDA output of a float dtype in training:
 * the workers then only draw the gains, and the kernel that converts the
 * batch applies them.
 *
 * RECIPE is honoured only with CUDA output in training with the RAM cache
 * (DETFEED_CACHE_MODE_RAM) filled: the cache's images are copied to the
 * device once, at open; the workers then compute each sample's recipe and
 * labels only, and the kernel builds its image from the device's copy
 * (Mosaic's tiles, RandomPerspective's warp, MixUp, the flips, the colour,
 * the conversion). A sample that reads an image the RAM cache does not hold
 * is made by the workers and converted by the same kernel. Without room on
 * the device for the cache, RECIPE runs DEVICE (float dtypes) or WORKER.
 *
 * Anything else runs the WORKER route, and detfeed_loader_route says why.
 */
typedef enum detfeed_route {
    DETFEED_ROUTE_WORKER = 0, /* in the worker threads, 8-bit, before conversion */
    DETFEED_ROUTE_DEVICE = 1, /* colour in the CUDA kernel that converts the batch */
    DETFEED_ROUTE_RECIPE = 2  /* the whole image in the CUDA kernel */
} detfeed_route;

/*
 * Where the recipe route's kernel reads the cached images
 * (DETFEED_LOADER_RECIPE_CACHE). DEVICE: a copy in device memory, made once
 * at open (the fastest reads; the cache's bytes of device memory). HOST:
 * the RAM cache itself, page-locked and mapped (cudaHostRegister), read by
 * the kernel over the bus (no device memory, no copy). AUTO: DEVICE when
 * the cache takes at most half of the device's free memory at open, else
 * HOST. detfeed_loader_device_bytes counts the device copy.
 */
typedef enum detfeed_recipe_cache {
    DETFEED_RECIPE_CACHE_AUTO = 0,
    DETFEED_RECIPE_CACHE_DEVICE = 1,
    DETFEED_RECIPE_CACHE_HOST = 2
} detfeed_recipe_cache;

typedef enum detfeed_loader_param {
    DETFEED_LOADER_IMGSZ = 0,        /* int, 32..8192, multiple of 32; default 640 */
    DETFEED_LOADER_SEED = 1,         /* int, -2^63 .. 2^63 - 1; default 0 */
    DETFEED_LOADER_EPOCHS = 2,       /* int 1 .. 1000000; default 100 */
    DETFEED_LOADER_CLOSE_MOSAIC = 3, /* int 0 .. 1000000; default 10 */
    DETFEED_LOADER_CACHE_BYTES = 4,  /* int >= 0: RAM cache budget, or
                                        DETFEED_CACHE_BYTES_RAM; default 0 */
    DETFEED_LOADER_AUGMENT = 5,      /* int 0/1: training transforms; default 1 */
    DETFEED_LOADER_RECT = 29,        /* int 0/1: rectangular training (Ultralytics'
                                        rect=True): batches of the rect shapes of
                                        images in aspect-ratio order (stride 32,
                                        no padding), in that order every epoch
                                        unless all shapes are equal, without
                                        mosaic, mixup and cutmix; one rank only.
                                        Validation is rect in any case. 0 */
    DETFEED_LOADER_WORKERS = 6,      /* int 1 .. 1024: threads (cache fill); 1 */
    DETFEED_LOADER_BATCH = 7,        /* int 1 .. 65536: batch size; default 16 */
    DETFEED_LOADER_PREFETCH = 8,     /* int 1 .. 1024: batches ready ahead; 4 */
    DETFEED_LOADER_RANK = 9,         /* int 0 .. 65535: this process's rank; 0 */
    DETFEED_LOADER_WORLD_SIZE = 10,  /* int 1 .. 65536: processes sharing it; 1 */
    DETFEED_LOADER_DROP_LAST = 11,   /* int 0/1: drop a last short batch; default 0 */
    DETFEED_LOADER_DTYPE = 12,       /* detfeed_dtype of batch images; default F32 */
    DETFEED_LOADER_VALUE_SCALE = 13, /* detfeed_scale of float images; QUOTIENT */
    DETFEED_LOADER_OUTPUT = 14,      /* detfeed_output: batch images on; HOST */
    DETFEED_LOADER_COLOR = 15, /* detfeed_route: where the image is made; WORKER */
    DETFEED_LOADER_CUDA_DEVICE = 16,  /* int 0 .. 1023: CUDA output's device; 0 */
    DETFEED_LOADER_RECIPE_CACHE = 26, /* detfeed_recipe_cache (text "auto", "device",
                                         "host"); default AUTO */
    DETFEED_LOADER_PIN_MEMORY = 27,   /* int 0/1: batch slots page-locked where a
                                         CUDA device is (detfeed_loader_pinned); 1 */
    /* The reference stack (see "The reference stack" above): */
    DETFEED_LOADER_ULTRALYTICS = 17, /* 803 or 804 (text "8.3", "8.4"); default 804 */
    DETFEED_LOADER_OPENCV = 18,      /* detfeed_cv_version; default DETFEED_CV_5_1 */
    DETFEED_LOADER_OPENCV_CPU = 19,  /* detfeed_cv_cpu; default DETFEED_CV_CPU_AUTO */
    DETFEED_LOADER_OPENCV_IPP = 20,  /* int 0/1: cv2.ipp.useIPP() (5.1); default 1 */
    DETFEED_LOADER_NUMPY = 21,       /* 1 or 2: NumPy's float32 matrix products rounded
                                        step by step (1) or fused (2); default 2 */
    DETFEED_LOADER_NUMPY_SORT = 30,  /* detfeed_numpy_sort (text "scalar", "avx2",
                                        "avx512"): NumPy's argsort, which orders a
                                        segment sample's masks; default SCALAR */
    /* Ultralytics' dataset train arguments (see "Datasets"): */
    DETFEED_LOADER_SINGLE_CLS = 22, /* int 0/1: single_cls; default 0 */
    DETFEED_LOADER_NC = 25,         /* int 0 .. 1000000: the dataset's
                                       DETFEED_DATASET_NC (classes where the
                                       source gives none); default 0 */
    DETFEED_LOADER_FRACTION = 23,   /* set_int: a count >= 1 (1: all); set_float:
                                       a ratio in (0, 1]; default all */
    DETFEED_LOADER_CLASSES = 24,    /* by text or detfeed_loader_set_classes;
                                       default all classes */
    /* The image caches (see "Caches" below): */
    DETFEED_LOADER_CACHE = 60,         /* detfeed_cache_mode; default RAM */
    DETFEED_LOADER_CACHE_PATH = 61,    /* text: the disk cache's file (default:
                                          beside the labels) */
    DETFEED_LOADER_VERIFY_RECORD = 62, /* text: "auto" (default), "none" or a
                                          file (see "Verification record") */
    /* Where a dataset YAML's data is (see "Where a YAML's data is"): */
    DETFEED_LOADER_DATASETS_DIR = 63, /* text: Ultralytics' datasets_dir
                                         (detfeed_dataset_set_datasets_dir);
                                         "" (default): its settings file's */
    /* Where mosaic and mixup partners come from (see "Partners" below): */
    DETFEED_LOADER_PARTNER_WINDOW = 40, /* int >= 0: 0 uniform (default), W a window */
    /* Image limits (detfeed_codec_limit), which the loader's dataset applies
     * to every decode of its images (detfeed_dataset_set_limit): */
    DETFEED_LOADER_MAX_WIDTH = 50,       /* int >= 1; default 32768 */
    DETFEED_LOADER_MAX_HEIGHT = 51,      /* int >= 1; default 32768 */
    DETFEED_LOADER_MAX_PIXELS = 52,      /* int >= 1; default 178956970 */
    DETFEED_LOADER_MAX_IMAGE_BYTES = 53, /* int >= 1; default 536870912 */
    DETFEED_LOADER_MAX_LABELS = 54,      /* int 1 .. 10000000: instances in one label
                                            file (DETFEED_DATASET_MAX_LABELS);
                                            default 1000000 */
    DETFEED_LOADER_MAX_LABEL_LINE = 55,  /* int 16 .. 2^30: bytes of a label line;
                                            default 65536 */
    DETFEED_LOADER_HSV_H = 100,          /* float hyperparameters, Ultralytics names */
    DETFEED_LOADER_HSV_S = 101,          /* and defaults: 0.015, 0.7, 0.4, */
    DETFEED_LOADER_HSV_V = 102,
    DETFEED_LOADER_DEGREES = 103,     /* 0.0 */
    DETFEED_LOADER_TRANSLATE = 104,   /* 0.1 */
    DETFEED_LOADER_SCALE = 105,       /* 0.5 */
    DETFEED_LOADER_SHEAR = 106,       /* 0.0 */
    DETFEED_LOADER_PERSPECTIVE = 107, /* 0.0 */
    DETFEED_LOADER_FLIPUD = 108,      /* 0.0 */
    DETFEED_LOADER_FLIPLR = 109,      /* 0.5 */
    DETFEED_LOADER_MOSAIC = 110,      /* 1.0 */
    DETFEED_LOADER_MIXUP = 111,       /* 0.0 */
    DETFEED_LOADER_CUTMIX = 112,      /* 0.0: CutMix's probability (Ultralytics
                                         8.4's; none in close_mosaic epochs) */
    DETFEED_LOADER_BGR = 113,         /* 0.0: the probability that a training
                                         image keeps OpenCV's B, G, R plane
                                         order (Format's bgr; validation: 0) */
    DETFEED_LOADER_COPY_PASTE = 114,  /* 0.0: CopyPaste (Ultralytics 8.4's, on
                                         images with polygons): the fraction
                                         of the eligible objects pasted, and
                                         in mode mixup also its probability;
                                         none in close_mosaic epochs */
    /* int: CopyPaste's mode: DETFEED_PASTE_FLIP (text "flip", default): the
     * image's own objects mirrored, before RandomPerspective;
     * DETFEED_PASTE_MIXUP ("mixup"): a partner's objects, after it. */
    DETFEED_LOADER_COPY_PASTE_MODE = 70
} detfeed_loader_param;

/* CopyPaste's modes (DETFEED_LOADER_COPY_PASTE_MODE). */
enum { DETFEED_PASTE_FLIP = 0, DETFEED_PASTE_MIXUP = 1 };

/*
 * Partners. By default (partner_window 0) a training sample's mosaic and
 * mixup partners are drawn uniformly from the whole dataset, which is what
 * Ultralytics does with cache="ram". Without a RAM cache Ultralytics draws
 * them from a buffer of the images its worker loaded most recently (at
 * most min(n, batch * 8, 1000)), so that a sample decodes about one new
 * image. partner_window W >= 1 is that, made deterministic: this rank's
 * samples of the epoch are positions p, p - world_size, p - 2 world_size,
 * ... of the epoch's order, and each partner is one of the last W of them
 * (the sample itself included; fewer at the start of the epoch), drawn
 * uniformly from the same random slot as the uniform choice. A padding
 * repeat of the shard (positions past n, which DistributedSampler fills
 * from the order's start) is placed where its sample first is: its window
 * is that of one of the epoch's first world_size positions. The partners
 * are a function of seed, epoch and order, never of threads or timing.
 * Ultralytics' buffer differs in what it holds (per worker process, the
 * partners' own loads too) and in when it is trimmed, and Ultralytics draws
 * the MixUp partner from the whole dataset (detfeed from the window too, so
 * that it decodes nothing new), so the samples are Ultralytics' in
 * distribution, not byte for byte; W = min(n, batch * 8, 1000) is its
 * size. Without a RAM cache, the images decoded most recently are kept for
 * the partners (about W + 4 per worker thread), so a sample decodes about
 * one new image. Recommended with no RAM cache or with a disk cache.
 *
 * DETFEED_LOADER_CACHE_BYTES = DETFEED_CACHE_BYTES_RAM (text "ram"): cache
 * what fits in the memory available, as Ultralytics' cache="ram" checks
 * it. When the loader opens, the exact bytes of every image at its load
 * size (`need`) are summed from the index, and the memory available now is
 * read (/proc/meminfo's MemAvailable, what psutil.virtual_memory().available
 * gives on Linux; the free pages where it is missing). Ultralytics caches
 * when need * (1 + safety margin) <= available, the margin 1.0 in 8.4 and
 * 0.5 in 8.3 (the `ultralytics` setting); then the budget is `need` and
 * every image is cached. Otherwise the budget is what fits within
 * available / (1 + margin), floor(available / (1 + margin)) bytes, and the
 * images are admitted first fit in index order as for any budget, the
 * rest decoded on demand (Ultralytics would cache none). So the budget
 * (DETFEED_CACHE_BUDGET) is min(need, floor(available / (1 + margin))): a
 * function of the index, imgsz, the stack and MemAvailable when opening.
 * Ultralytics estimates `need` from 30 random images; detfeed computes it.
 * A failed allocation names the bytes that were needed and the memory
 * that was available.
 */
#define DETFEED_CACHE_BYTES_RAM (-1)

/*
 * Caches (DETFEED_LOADER_CACHE; text "none", "ram", "disk"):
 *   ram   (the default) the RAM cache holds what cache_bytes allows (its
 *         default 0: nothing; "ram": what fits, as above); the other images
 *         are decoded each time they are used.
 *   disk  Ultralytics' cache="disk", as one file: the disk cache (see "Disk
 *         cache of decoded images") holds every image. A valid file is
 *         opened when the loader opens; else this process writes it
 *         while it opens: the decode that verifies each image (see
 *         detfeed_loader_open) puts it in the file, which is committed once
 *         every image is in (before the first epoch, or while it runs:
 *         the commit is a thread's), so building costs no decode beyond
 *         the verification's (`detfeed cache` builds it beforehand); or,
 *         while another process writes it, decodes until that file
 *         appears. A RAM cache of cache_bytes
 *         (default 0) sits in front of it and fills from it. The file is
 *         DETFEED_LOADER_CACHE_PATH (text, or detfeed_loader_set_cache_path;
 *         default: beside the labels, else the user's cache folder, as the
 *         disk cache section says). A stale or damaged file is rebuilt and
 *         detfeed_disk_cache_note says why; a file that cannot be built
 *         (its folder cannot be written, the disk is too small) fails
 *         detfeed_loader_open with the reason. A write that fails later
 *         leaves the images decoded on demand (DETFEED_DISK_FAILED). The
 *         images a valid file holds count as decoded for the check
 *         detfeed_loader_open makes (they decoded when written, and have
 *         not changed since), so an open that reuses the file decodes none.
 *   none  no cache: every image decoded when used; cache_bytes must be 0.
 * The bytes of every batch are the same in every mode (the caches hold
 * exactly what decoding and resizing give).
 */
typedef enum detfeed_cache_mode {
    DETFEED_CACHE_MODE_NONE = 0,
    DETFEED_CACHE_MODE_RAM = 1,
    DETFEED_CACHE_MODE_DISK = 2
} detfeed_cache_mode;

DETFEED_API int detfeed_loader_create(detfeed_loader **out, uint32_t flags);
DETFEED_API void detfeed_loader_destroy(detfeed_loader *loader);
/* Message of the last failure, naming what failed (the setting and its
 * range, the state, the file); valid until the next non-const call. A
 * call that fails always sets it; detfeed_loader_set and _open clear it
 * when they succeed, other successful calls may leave an older one. */
DETFEED_API const char *detfeed_loader_last_error(const detfeed_loader *loader);
/* How far detfeed_loader_open has come, for another thread to show while it
 * runs (the one call that may run beside it): the stage ("index": image
 * files looked at; "cache": images decoded into the RAM cache; "check":
 * images decoded by the open's check, which also writes a disk cache) and
 * its units done and total; NULL when none is running. */
DETFEED_API const char *detfeed_loader_progress(const detfeed_loader *loader,
                                                uint64_t *done, uint64_t *total);

/* Integer and float settings, before detfeed_loader_open (EBADSTATE after);
 * EINVAL for an unknown key or a value out of range (the ranges:
 * detfeed_loader_param_bounds_int and _float below). DETFEED_LOADER_FRACTION
 * takes both: an integer is a count, a float a ratio, as Ultralytics tells
 * them apart by type. */
DETFEED_API int detfeed_loader_set_int(detfeed_loader *loader,
                                       detfeed_loader_param param, int64_t value);
DETFEED_API int detfeed_loader_set_float(detfeed_loader *loader,
                                         detfeed_loader_param param, double value);
/* The setting named `name` (the enum's name in lower case without the
 * prefix, e.g. "imgsz", "cuda_device", "hsv_h": Ultralytics' names for the
 * hyperparameters) into *out; DETFEED_EINVAL when there is none. Settings
 * from DETFEED_LOADER_HSV_H (100) on are floats, the others integers
 * (except fraction, either, and classes, a list). */
DETFEED_API int detfeed_loader_param_parse(const char *name, detfeed_loader_param *out);

/*
 * The value of an integer (or float) setting in force: its default until
 * it is set, then what was set (any time, also after detfeed_loader_open).
 * Settings from DETFEED_LOADER_HSV_H on are floats, the others integers,
 * except fraction, either: detfeed_loader_get_int gives the count in force
 * (0 while a ratio is), detfeed_loader_get_float the ratio in force (0
 * while a count is; 1.0, all, by default). The image limits read their
 * defaults (DETFEED_DEFAULT_MAX_*) until set; seed gives the 64 bits as
 * set. DETFEED_EINVAL for NULL, a setting of the other kind, or one that is
 * not a number (classes, cache_path, verify_record, datasets_dir).
 */
DETFEED_API int detfeed_loader_get_int(const detfeed_loader *loader,
                                       detfeed_loader_param param, int64_t *out);
DETFEED_API int detfeed_loader_get_float(const detfeed_loader *loader,
                                         detfeed_loader_param param, double *out);

/*
 * What detfeed_loader_set_int accepts for an integer setting: the values v
 * with *min <= v <= *max and (v - *min) a multiple of *step (imgsz: 32;
 * every other setting: 1), and its *default_value, what
 * detfeed_loader_get_int gives on a new loader (fraction's is 0: its
 * default is the ratio 1.0). cache_bytes' minimum is DETFEED_CACHE_BYTES_RAM
 * (-1); the enum settings' range is their enum's values. Any output
 * pointer may be NULL. DETFEED_EINVAL for a setting that takes no integer.
 * The setter checks this same table, so these are exactly its bounds.
 */
DETFEED_API int detfeed_loader_param_bounds_int(detfeed_loader_param param,
                                                int64_t *min, int64_t *max,
                                                int64_t *step, int64_t *default_value);
/*
 * What detfeed_loader_set_float accepts for a float setting: every finite v
 * with *min <= v <= *max (the smallest and the largest double it takes:
 * shear's maximum is the double just below 90, fraction's minimum the
 * smallest positive one), and its *default_value (the hyperparameters'
 * Ultralytics defaults; fraction's 1.0). Settings without an upper bound
 * (hsv_h, hsv_s, hsv_v, perspective) give DBL_MAX. Any output pointer may
 * be NULL. DETFEED_EINVAL for a setting that takes no float.
 */
DETFEED_API int detfeed_loader_param_bounds_float(detfeed_loader_param param,
                                                  double *min, double *max,
                                                  double *default_value);

/*
 * Any setting by name (as detfeed_loader_param_parse) with its value as
 * text, as the CLI's --set and the Python package pass them: integers and
 * floats in C syntax, and names for the settings that have them: dtype
 * "u8", "f32", "f16", "bf16"; value_scale "quotient", "reciprocal"; output
 * "host", "cuda"; color "worker", "device", "recipe"; recipe_cache "auto",
 * "device", "host"; ultralytics "8.3", "8.4";
 * numpy "1", "2"; numpy_sort "scalar", "avx2", "avx512";
 * opencv "4", "4-debian", "5.0", "5.1"; opencv_cpu "auto", "sse", "avx2", "avx512";
 * cache_bytes a byte count or "ram" (DETFEED_CACHE_BYTES_RAM);
 * cache "none", "ram", "disk"; cache_path a file ("": the default);
 * verify_record "auto", "none" or a file path (one with a '/', such as
 * "./verified"; anything else is refused); datasets_dir a folder ("": the
 * one Ultralytics' settings file gives);
 * fraction an integer count ("4"; "1": all) or a ratio with a point or an
 * exponent ("0.5", "1.0"); classes ids separated by commas ("0,2,5"; spaces
 * allowed; "": all classes); single_cls "0", "1"; max_width, max_height,
 * max_pixels, max_image_bytes integers >= 1; max_labels, max_label_line
 * integers in their ranges.
 * DETFEED_EINVAL, with the loader's message naming the setting and what
 * it accepts, for an unknown name or a value it does not accept;
 * DETFEED_EBADSTATE after detfeed_loader_open.
 */
DETFEED_API int detfeed_loader_set(detfeed_loader *loader, const char *name,
                                   const char *value);

/*
 * Ultralytics' classes (see "Datasets"): the loader's dataset keeps only
 * the instances of classes ids[0..n-1]; n == 0 (ids may be NULL) keeps
 * all, the default. DETFEED_EINVAL with a message for a negative id; ids
 * not below the dataset's nc make detfeed_loader_open fail. fraction,
 * classes and single_cls apply to whatever split the loader reads; the
 * trainer applies a scalar fraction to its training split only.
 */
DETFEED_API int detfeed_loader_set_classes(detfeed_loader *loader, const int *ids,
                                           size_t n);

/* The dataset's split to read ("train" by default) and its policy for bad
 * samples (see detfeed_dataset). */
DETFEED_API int detfeed_loader_set_split(detfeed_loader *loader, const char *split);
DETFEED_API int detfeed_loader_set_policy(detfeed_loader *loader,
                                          detfeed_policy policy);

/* The disk cache's file (DETFEED_LOADER_CACHE_PATH; NULL or "": the
 * default place). Before detfeed_loader_open, which opens the disk cache
 * (cache "disk") and then fills the RAM cache from it; with another cache
 * setting a file given here fails the open (DETFEED_EINVAL). */
DETFEED_API int detfeed_loader_set_cache_path(detfeed_loader *loader, const char *path);

/*
 * Indexes `data` (a dataset YAML, folder or list) and fills the RAM cache.
 * The index holds what `detfeed check` finds usable (it verifies by
 * decoding): the dataset is indexed from the image headers, then every
 * image is decoded once, by the RAM cache's fill for the images it holds
 * and, on `workers` threads, right here for the others; an image that
 * fails (damaged data, a limit) leaves the index, counted in
 * DETFEED_STAT_CORRUPT and listed in the dataset's problems with check's
 * reason (under DETFEED_POLICY_FAIL it fails the open, naming the file).
 * So no sample is replaced at batch time unless a file changes after
 * opening. Without a RAM cache this costs one decode per image when
 * opening (what check costs), the first time: the verdicts are kept in the
 * verification record (below), and a later open decodes only the images
 * that changed, were added, or all when the limits changed.
 * The open also decides the output and colour route of the batches
 * (detfeed_loader_route), setting up the CUDA device's buffers for CUDA
 * output; a route that cannot be had falls back with its reason, and only
 * a lack of memory for it fails the open.
 * A loader whose open failed (any status) can only be destroyed:
 * detfeed_loader_last_error keeps the open's message, and every call that
 * opens, sets, samples, starts or takes batches again returns
 * DETFEED_EBADSTATE (detfeed_loader_open, _sample, _sample_masks,
 * _sample_mask_data, _start and _next(_timed) with the message "the loader
 * failed to open (MESSAGE): only detfeed_loader_destroy is left");
 * detfeed_loader_route gives DETFEED_EBADSTATE, detfeed_loader_batch_count,
 * _device_bytes, _pinned and _skipped 0. detfeed_loader_dataset, _cache,
 * _disk_cache and the verification's reports still give what the open got
 * to (the dataset's problems say which images failed), read only.
 * detfeed_loader_shutdown and detfeed_loader_release do nothing.
 */
DETFEED_API int detfeed_loader_open(detfeed_loader *loader, const char *data);

/* The dataset the loader reads (valid until the loader is destroyed). */
DETFEED_API const detfeed_dataset *detfeed_loader_dataset(const detfeed_loader *loader);

/* Its RAM cache (valid until the loader is destroyed; NULL until
 * detfeed_loader_open has created it), for detfeed_cache_stat_get:
 * DETFEED_CACHE_IMAGES, _BYTES, _BUDGET (the computed budget with
 * DETFEED_CACHE_BYTES_RAM), _ON_DEMAND, _FAILED. Read only; the loader's
 * threads share it. */
DETFEED_API const detfeed_cache *detfeed_loader_cache(const detfeed_loader *loader);

/* Its disk cache with cache "disk" (NULL otherwise, or before
 * detfeed_loader_open), for detfeed_disk_cache_stat_get, _path and _note:
 * whether the file was reused or is being built, what it holds, and the
 * hits and decodes of this process. Its counts may be read while batches
 * are produced. */
DETFEED_API const detfeed_disk_cache *
detfeed_loader_disk_cache(const detfeed_loader *loader);

/*
 * Verification record (DETFEED_LOADER_VERIFY_RECORD, or
 * detfeed_loader_set_verify_record). The verdicts of the check
 * detfeed_loader_open makes by decoding (which images failed, and each
 * one's message) are kept in a small file, as Ultralytics keeps its
 * labels.cache, so that the next open of the same images reuses them
 * instead of decoding every image again:
 *   auto  (the default) the file beside the label folder of the dataset's
 *         first image, where the disk cache goes: images in
 *         coco/images/train2017 give coco/labels/train2017.detfeed-verified.
 *         When that folder cannot be written (a read-only dataset; also a
 *         folder whose mode lets nobody write, which root would otherwise
 *         write) the file goes to the user's cache folder, as the disk
 *         cache's does ($XDG_CACHE_HOME/detfeed, else $HOME/.cache/detfeed,
 *         named after the label folder and a hash of its path); a valid
 *         record in either place is read.
 *   none  every image decoded at every open; nothing read or written.
 *   PATH  that file (a path with a '/': "./verified" for one in the
 *         working folder; a word without one is refused, so that a typo of
 *         auto or none is not taken for a file name).
 * What a verdict depends on is its key: the image's absolute path (not
 * resolved), file size and modification time (ns), the image limits
 * (DETFEED_LOADER_MAX_*: they decide what fails), the decoders' versions
 * (and the OpenCV whose decoding they give) and the format version. An image whose
 * entry matches takes its verdict from the record (a failed one leaves the index with
 * the recorded message, as if it had just failed); an image that is new or
 * changed is decoded; other limits or decoders make every image decoded.
 * A record that is missing, damaged, truncated or not a record (checked
 * by magic, version, byte order and the SHA-256 of its header and of its
 * entries) is not used, and is rewritten; what is at the path and is not a
 * record (a folder, a device, a non-empty file that does not start with
 * the magic) is never written over (the note says "not recorded: PATH does
 * not start with DFVERIFY ..."). The images the caches decode or
 * hold need no verdict (the RAM cache's fill decodes them; a valid disk
 * cache file holds only images that decoded); while this process writes
 * the disk cache every image is decoded into it, as before.
 * After the check the record is rewritten unless it already said exactly
 * that of exactly these images: under a temporary name in the same folder,
 * fsync, then renamed into place (and the folder fsynced), so a reader sees
 * the old record or the new one, never a part. Processes that open the
 * same dataset at once (the ranks of a node) take PATH.lock (flock) before
 * decoding: one decodes, the others wait for it and then reuse what it
 * wrote. Where no place can be written the images are still verified (the
 * open does not fail) and detfeed_loader_verify_note says that nothing was
 * recorded.
 *
 * File format (version 1, host byte order, recorded): a 288-byte header
 * (magic "DFVERIFY", version, byte-order mark 0x01020304, entry count,
 * bytes of the entries, the provenance text "detfeed verify 1,
 * libjpeg-turbo ..., spng ..., limits ...", the entries' SHA-256, the
 * header's SHA-256), then one entry per image in index order: file size,
 * mtime in ns, path bytes, reason bytes, flags (1: failed; 2: the message
 * is "PATH: reason" with the image's path as the index names it), 4 bytes
 * reserved, then the absolute path and the reason, unterminated.
 */
typedef enum detfeed_record_state {
    DETFEED_RECORD_NONE = 0,     /* verify_record none (or not opened) */
    DETFEED_RECORD_REUSED = 1,   /* the record held every verdict; left as it was */
    DETFEED_RECORD_WRITTEN = 2,  /* (re)written with this open's verdicts */
    DETFEED_RECORD_UNWRITTEN = 3 /* no place could be written: verified, not kept */
} detfeed_record_state;

/* What the check of detfeed_loader_open did (counts of images as indexed
 * before it, the failed ones included). */
typedef enum detfeed_verify_stat {
    DETFEED_VERIFY_STAT_RECORD = 0,  /* detfeed_record_state */
    DETFEED_VERIFY_STAT_IMAGES = 1,  /* images checked */
    DETFEED_VERIFY_STAT_DECODED = 2, /* decoded by the check in this open */
    DETFEED_VERIFY_STAT_REUSED = 3,  /* verdicts taken from the record */
    DETFEED_VERIFY_STAT_CACHED = 4,  /* decoded by the RAM cache's fill, or held
                                        by the disk cache */
    DETFEED_VERIFY_STAT_FAILED = 5   /* left out: failed now or in the record */
} detfeed_verify_stat;

/* The verification record: "auto" or NULL (default), "none", or a file
 * path with a '/'. DETFEED_EINVAL with the loader's message for anything
 * else; DETFEED_EBADSTATE after detfeed_loader_open. */
DETFEED_API int detfeed_loader_set_verify_record(detfeed_loader *loader,
                                                 const char *value);
/* A count of the check (above) after detfeed_loader_open (0 before); -1 for
 * an unknown key or NULL. */
DETFEED_API int64_t detfeed_loader_verify_stat(const detfeed_loader *loader,
                                               detfeed_verify_stat stat);
/* The record's file (read, written, or the place that could not be
 * written), or NULL (verify_record none, before opening). Valid until the
 * loader is destroyed. */
DETFEED_API const char *detfeed_loader_verify_path(const detfeed_loader *loader);
/* One line on what the check found and did: "reused PATH: ...", "wrote
 * PATH: N images decoded, ...; before: no record" (or why the record was
 * not used: "stale: ...", "damaged: ...", which images changed), "not
 * recorded: ...". "" before opening. */
DETFEED_API const char *detfeed_loader_verify_note(const detfeed_loader *loader);

/*
 * Validation (augment 0) and rect training: replaces the order by aspect
 * ratio with `order`,
 * a permutation of the n = detfeed_dataset_size() dataset indices, and
 * recomputes the batch shapes from it (each batch's ratios taken in that
 * order). The Python package passes NumPy's argsort of the ratios, which
 * is what Ultralytics' set_rectangle uses. After detfeed_loader_open and
 * before the first sample or batch; DETFEED_EBADSTATE otherwise (or in
 * other training), DETFEED_EINVAL when `order` is not such a permutation.
 */
DETFEED_API int detfeed_loader_set_rect_order(detfeed_loader *loader,
                                              const uint64_t *order, size_t n);

/* The size of a sample's image: imgsz x imgsz in training; the batch's
 * rectangle in validation (up to imgsz + 32 on a side) and rect training. A query of a
 * const loader, so it leaves detfeed_loader_last_error as it was; its status says all:
 * DETFEED_EINVAL for a NULL argument or an index at or past detfeed_dataset_size,
 * DETFEED_EBADSTATE before detfeed_loader_open. */
DETFEED_API int detfeed_loader_sample_size(const detfeed_loader *loader, uint64_t index,
                                           int *width, int *height);

/*
 * One sample, synchronously on the calling thread: image `index` (in
 * dataset order) of epoch `epoch`, augmented. The image (the size
 * detfeed_loader_sample_size gives, HWC BGR 8-bit, colour applied) goes to
 * img (width * height * 3 bytes). Labels
 * as Ultralytics' Format gives them: *count instances (at most `capacity`;
 * DETFEED_ELIMIT if more), cls [n], boxes [n][4] normalized centre x, y, w,
 * h, keypoints [n][K][3] normalized (NULL to skip). Safe to call only from
 * one thread at a time.
 */
DETFEED_API int detfeed_loader_sample(detfeed_loader *loader, uint32_t epoch,
                                      uint64_t index, uint8_t *img, int capacity,
                                      int *count, float *cls, float *boxes,
                                      float *keypoints);

/*
 * The segment mask of the same sample (segment datasets; else
 * DETFEED_ENOTSUPPORTED), as Ultralytics' Format builds it with
 * mask_ratio 4 and overlap_mask: every polygon (resampled to 1000 points at
 * load, moved with its box, cast to int32) filled at the sample's size,
 * resized to a quarter with INTER_LINEAR, and painted in descending order
 * of mask area (empty masks first, as NumPy orders the negated unsigned
 * areas; equal areas in the order of the numpy_sort setting's argsort)
 * with value k + 1 for the k-th, so smaller objects overwrite larger
 * ones; 0 is background. For segment datasets detfeed_loader_sample returns
 * the instances in this order, so label k is mask value k + 1. `mask`
 * receives (width / 4) * (height / 4) bytes for detfeed_loader_sample_size's
 * width and height, which *mask_width and *mask_height (may be NULL) get
 * divided by 4. Validation samples get masks too (letterboxed). The mask is
 * 8-bit only up to 255 instances: a sample with more fails with
 * DETFEED_ELIMIT here; detfeed_loader_sample_mask_data gives any sample.
 */
DETFEED_API int detfeed_loader_sample_masks(detfeed_loader *loader, uint32_t epoch,
                                            uint64_t index, uint8_t *mask,
                                            int *mask_width, int *mask_height);

/*
 * The element type of an overlap mask, as Ultralytics'
 * polygons2masks_overlap makes it: np.uint8, or np.int32 for a sample of
 * more than 255 instances. A batch's masks are int32 when any of its
 * samples' is, else 8-bit (torch.cat in its collate_fn promotes the type).
 * The value is the element size in bytes.
 */
typedef enum detfeed_mask_type {
    DETFEED_MASK_NONE = 0, /* no masks (not a segment dataset) */
    DETFEED_MASK_U8 = 1,   /* uint8_t: at most 255 instances */
    DETFEED_MASK_I32 = 4   /* int32_t: a sample of more than 255 instances */
} detfeed_mask_type;

/*
 * detfeed_loader_sample_masks for any number of instances: `mask` (`bytes`
 * long) receives (width / 4) * (height / 4) elements of the type that
 * *type (may be NULL) gets, DETFEED_MASK_I32 when the sample has more than
 * 255 instances, else DETFEED_MASK_U8; the values are the same. A buffer
 * of 4 bytes per element holds any sample; a smaller one than the sample
 * needs: DETFEED_ELIMIT, with the size in the message.
 */
DETFEED_API int detfeed_loader_sample_mask_data(detfeed_loader *loader, uint32_t epoch,
                                                uint64_t index, void *mask,
                                                size_t bytes, int *mask_width,
                                                int *mask_height,
                                                detfeed_mask_type *type);

/* ---- batches ---- */

/*
 * A batch as the consumer receives it, borrowed from the
 * loader between detfeed_loader_next and detfeed_loader_release (the
 * detfeed_batch_* accessors give 0 or NULL, and write 0, for a NULL batch):
 * images B x 3 x H x W, RGB (BGR for the training images whose bgr gate
 * fell, with the loader's bgr > 0, as Ultralytics' Format gives them),
 * contiguous, of the loader's dtype (u8 codes, or code / 255 as f32, f16,
 * bf16), and the Ultralytics label arrays.
 */
typedef struct detfeed_batch detfeed_batch;

/* Batches per epoch for this rank: ceil (or, with drop_last, floor) of
 * ceil(n / world_size) / batch. Valid after detfeed_loader_open. */
DETFEED_API size_t detfeed_loader_batch_count(const detfeed_loader *loader);

/*
 * Starts producing the batches of `epoch` on the worker threads (any epoch
 * in progress is stopped). Training epochs visit the samples in the
 * epoch's permutation (see Randomness); validation in aspect-ratio order.
 * With world_size > 1 each rank takes its DistributedSampler shard. Every
 * batch still held is taken back: its buffer is refilled by the new epoch,
 * which may hand the same batch object out again (copy what must outlive
 * the epoch); until then releasing it is an error.
 */
DETFEED_API int detfeed_loader_start(detfeed_loader *loader, uint32_t epoch);

/* What detfeed_loader_next and detfeed_loader_next_timed return besides
 * DETFEED_OK and a negative status (both positive: not failures). */
#define DETFEED_NEXT_END     1 /* the epoch is over: no batch */
#define DETFEED_NEXT_TIMEOUT 2 /* _next_timed: the batch is not ready yet */

/* The next batch of the epoch, in order; blocks until it is complete.
 * Returns DETFEED_OK with *batch set, DETFEED_NEXT_END (1) when the epoch
 * is over, or the status of a sample that failed (with its message); after
 * a failure (a sample's, or a batch's copy to the CUDA device) the epoch
 * is over: every later call fails too, until detfeed_loader_start. At
 * most prefetch - 1 batches may be held unreleased when asking for the
 * next. After detfeed_loader_shutdown: DETFEED_EBADSTATE. */
DETFEED_API int detfeed_loader_next(detfeed_loader *loader,
                                    const detfeed_batch **batch);

/*
 * detfeed_loader_next waiting at most timeout_ms milliseconds (< 0: without
 * a limit, as detfeed_loader_next; 0: only looks). DETFEED_NEXT_TIMEOUT when
 * the batch is not complete by then: nothing was taken (*batch is NULL) and
 * nothing changes, so the caller asks again; a failed sample's status is
 * reported once the samples still in production have finished, which the
 * timeout bounds too. For consumers that must stay responsive while they
 * wait: the Python package waits in slices of 20 ms so that its signal
 * handlers (Ctrl-C) run between them. The deadline is on CLOCK_MONOTONIC.
 */
DETFEED_API int detfeed_loader_next_timed(detfeed_loader *loader,
                                          const detfeed_batch **batch, int timeout_ms);

/*
 * Stops the worker threads for good, without freeing anything: the epoch
 * in progress stops, each worker finishes the sample it has in hand (so
 * this returns after at most one sample's time) and exits, and is joined.
 * Batches held stay valid with their contents until detfeed_loader_destroy
 * (the workers only ever fill slots that are not held) and may still be
 * released. Afterwards detfeed_loader_start and detfeed_loader_next(_timed)
 * fail with DETFEED_EBADSTATE and a message saying so; the batch accessors,
 * the dataset and detfeed_loader_sample keep working. Idempotent. Unlike
 * the rest of the loader, it may be called from another thread while one
 * waits in detfeed_loader_next(_timed), which then returns
 * DETFEED_EBADSTATE. The Python package calls it from Loader.close(), and
 * destroys the loader once no array of its batches is left.
 */
DETFEED_API int detfeed_loader_shutdown(detfeed_loader *loader);

/*
 * Under DETFEED_POLICY_SKIP (the default), a sample whose image cannot be
 * read when the batch is made (damaged after detfeed_loader_open verified
 * it, unreadable, or the same for a mosaic or mixup partner) becomes the
 * next readable image in dataset order; under DETFEED_POLICY_FAIL it ends
 * the epoch with its message. detfeed_loader_skipped counts the
 * replacements so far and gives the first one's message (NULL when none;
 * valid until destroy).
 */
DETFEED_API int64_t detfeed_loader_skipped(const detfeed_loader *loader,
                                           const char **first);

/* 1 when the batch slots are in page-locked (pinned) memory: a CUDA build
 * with a device (cudaHostAlloc). 0 when they are pageable, with the reason
 * in *why (no CUDA build, no device, the allocation failed, or
 * DETFEED_LOADER_PIN_MEMORY 0). Known after the first detfeed_loader_start.
 *
 * Page-locking makes the CUDA context of the calling thread's current
 * device (device 0 when none is current) if there is none yet. A consumer
 * that copies nothing to a GPU can set DETFEED_LOADER_PIN_MEMORY to 0: host
 * output then makes no CUDA call at all. With CUDA output, pageable slots
 * work too (the same bytes), with slower, synchronous copies. */
DETFEED_API int detfeed_loader_pinned(const detfeed_loader *loader, const char **why);

/*
 * The output and colour route in effect, decided by detfeed_loader_open
 * (DETFEED_EBADSTATE before it, or after an open that failed). When they
 * differ from what was asked for, *why
 * (else NULL; valid until destroy) says why in one line: no CUDA build or
 * device (CUDA output falls back to host memory, with the same bytes), u8
 * output, host output or validation (colour stays in the workers). Any
 * output pointer may be NULL.
 */
DETFEED_API int detfeed_loader_route(const detfeed_loader *loader,
                                     detfeed_output *output, detfeed_route *route,
                                     const char **why);

/*
 * CUDA output: the consumer's stream (a cudaStream_t; NULL, the default,
 * is the legacy default stream). Each batch detfeed_loader_next returns is
 * ordered before the work submitted on that stream afterwards, and
 * detfeed_loader_release lets the loader reuse the batch's device buffer
 * only after the work submitted on it before the release. May be changed
 * between batches; a consumer on other streams orders itself with
 * detfeed_batch_cuda_event.
 *
 * The calls that use the device (open, next, release, start,
 * detfeed_batch_copy_images) make the loader's device
 * (DETFEED_LOADER_CUDA_DEVICE) current on the calling thread when another
 * one is, and the caller's current again before they return. When that
 * cudaSetDevice fails, the call returns DETFEED_ECUDA with a message saying
 * so; release, whose status is about the stream, leaves it to the next of
 * the other calls; open falls back to host output with it as the reason.
 */
DETFEED_API int detfeed_loader_set_cuda_stream(detfeed_loader *loader, void *stream);

/* Bytes of device memory the loader holds from detfeed_loader_open on
 * (CUDA output: one input buffer and `prefetch` output tensors; 0
 * otherwise). */
DETFEED_API uint64_t detfeed_loader_device_bytes(const detfeed_loader *loader);

/* Training samples whose image the CUDA kernel made from its recipe (the
 * DETFEED_ROUTE_RECIPE route), counted as batches are submitted since
 * detfeed_loader_open; 0 on other routes, -1 for NULL. A sample of the
 * recipe route that is not counted was made by the workers (it reads an
 * image the RAM cache does not hold). */
DETFEED_API int64_t detfeed_loader_device_made(const detfeed_loader *loader);

/*
 * Gives a batch back, in any order: its slot goes back to the workers once
 * it and every batch taken before it are released (and, with CUDA output,
 * once the work queued on the consumer's stream has read it). DETFEED_EINVAL,
 * with a message, for NULL, a batch of another loader, or one that is not
 * held: released already, or taken before the last detfeed_loader_start
 * (which takes back every batch still held: their buffers are refilled).
 * With CUDA output, DETFEED_ECUDA, with a message, when CUDA refuses to
 * order the buffer's reuse after the stream of detfeed_loader_set_cuda_stream
 * (a stream of another device, or destroyed): the call then waits for that
 * stream's work (or the whole device's) and the batch is released all the
 * same. After a failed open it does nothing (DETFEED_OK).
 */
DETFEED_API int detfeed_loader_release(detfeed_loader *loader,
                                       const detfeed_batch *batch);

/* Images in the batch, and its image height and width. */
DETFEED_API int detfeed_batch_size(const detfeed_batch *batch, int *height, int *width);
/* The batch's position in its epoch. */
DETFEED_API uint64_t detfeed_batch_index(const detfeed_batch *batch);
/* The image tensor (B x 3 x H x W of the loader's dtype) and its bytes, in
 * host memory; NULL with CUDA output. */
DETFEED_API const void *detfeed_batch_images(const detfeed_batch *batch, size_t *bytes);
/* The same tensor in device memory with CUDA output (NULL otherwise), and
 * the cudaEvent_t recorded when it is complete. The buffer belongs to the
 * loader and is reused after detfeed_loader_release. */
DETFEED_API const void *detfeed_batch_cuda_images(const detfeed_batch *batch,
                                                  size_t *bytes);
DETFEED_API void *detfeed_batch_cuda_event(const detfeed_batch *batch);
/* Copies the image tensor, wherever it is, to host memory dst of `bytes`
 * (at least the tensor's bytes); waits for the device when needed. */
DETFEED_API int detfeed_batch_copy_images(const detfeed_batch *batch, void *dst,
                                          size_t bytes);
/* Instances in the batch (N) and their arrays: cls [N], bboxes [N][4]
 * (normalized centre x, y, w, h), batch_idx [N] (as float, Ultralytics'
 * type), keypoints [N][K][3] (NULL without keypoints). */
DETFEED_API int detfeed_batch_instances(const detfeed_batch *batch);
DETFEED_API const float *detfeed_batch_cls(const detfeed_batch *batch);
DETFEED_API const float *detfeed_batch_bboxes(const detfeed_batch *batch);
DETFEED_API const float *detfeed_batch_batch_idx(const detfeed_batch *batch);
DETFEED_API const float *detfeed_batch_keypoints(const detfeed_batch *batch);
/* Segment datasets: the overlap masks (Ultralytics' Format with mask_ratio
 * 4), B x H/4 x W/4 elements of *type (may be NULL): int32_t when a sample
 * of the batch has more than 255 instances, else uint8_t
 * (detfeed_mask_type). Instance k of image i is painted k' + 1 where k' is
 * its index within the image; the label arrays are in the same (area)
 * order. Host memory also with CUDA output (the consumer moves them). NULL
 * (and DETFEED_MASK_NONE) for other tasks. */
DETFEED_API const void *detfeed_batch_mask_data(const detfeed_batch *batch, int *height,
                                                int *width, detfeed_mask_type *type);
/* The same masks when they are 8-bit; NULL (height and width 0) for a batch
 * whose masks are int32, which only detfeed_batch_mask_data gives. */
DETFEED_API const uint8_t *detfeed_batch_masks(const detfeed_batch *batch, int *height,
                                               int *width);
/* Image i's file, its original (h, w) and Ultralytics' resized_shape (h, w):
 * the sample's size in training; in validation the batch's rectangle with
 * Ultralytics 8.4 (LetterBox sets it), the size after loading with 8.3. */
DETFEED_API const char *detfeed_batch_im_file(const detfeed_batch *batch, int i);
DETFEED_API void detfeed_batch_shapes(const detfeed_batch *batch, int i, int ori_hw[2],
                                      int resized_hw[2]);

/* Where a loader's time goes, summed over its threads since it was opened. */
typedef enum detfeed_stage {
    DETFEED_STAGE_DECODE = 0,   /* decoding images not held in the RAM cache */
    DETFEED_STAGE_RESIZE = 1,   /* resizing them to their load size */
    DETFEED_STAGE_GEOMETRY = 2, /* mosaic or letterbox, the warp, mixup, labels alike */
    DETFEED_STAGE_COLOUR = 3,   /* RandomHSV in the worker */
    DETFEED_STAGE_FLIP = 4,     /* the flips */
    DETFEED_STAGE_CONVERT = 5,  /* to the consumer's NCHW RGB dtype */
    DETFEED_STAGE_PACK = 6,     /* labels (and masks) into the batch */
    DETFEED_STAGE_WAIT = 7,     /* the consumer waiting in detfeed_loader_next */
    DETFEED_STAGE_READ = 8,     /* reading images from the disk cache (pread) */
    DETFEED_STAGE_CHECK = 9,    /* checking their checksums (first reads, changes) */
    DETFEED_STAGE_COUNT = 10
} detfeed_stage;

/* Seconds spent in `stage` so far (worker stages summed over threads); the
 * time of filling the RAM cache in detfeed_loader_open is not included.
 * May be read while batches are produced. */
DETFEED_API double detfeed_loader_stage_seconds(const detfeed_loader *loader,
                                                detfeed_stage stage);

/* ---- a sample's recipe ---- */

/*
 * The draws of one image before its transforms apply them: Mosaic's and
 * RandomPerspective's, as Ultralytics draws them (see "Randomness" for the
 * slots). A training sample has one set; with MixUp its partner has its
 * own, drawn from the partner's slots (slot + 32) of the same index.
 */
typedef struct detfeed_recipe_geometry {
    int mosaic;            /* 1: the 4-tile Mosaic applies (probability `mosaic`,
                              none in the last close_mosaic epochs); 0: LetterBox */
    uint64_t partners[3];  /* Mosaic's tiles 1..3, dataset indices (tile 0 is
                              the image itself); drawn also without Mosaic */
    int yc, xc;            /* Mosaic's centre on its 2 imgsz x 2 imgsz canvas */
    double perspective[2]; /* RandomPerspective's P[2][0], P[2][1] */
    double angle;          /* its rotation in degrees */
    double scale;          /* its scale factor */
    double shear[2];       /* its shear angles in degrees (x, y) */
    double translate[2];   /* its translation as a fraction of the output side
                              (x, y) */
} detfeed_recipe_geometry;

/*
 * A sample's recipe: every random parameter of sample `index` of `epoch`,
 * as the loader draws it (the sample follows from it, the image and the
 * settings). Validation samples (augment 0) use none of the draws, which
 * are filled all the same.
 */
typedef struct detfeed_recipe {
    uint32_t epoch;                   /* as asked */
    uint64_t index;                   /* as asked: the dataset index */
    int augment;                      /* 1: training transforms; 0: validation */
    detfeed_recipe_geometry geometry; /* the sample's own draws */
    int mixup;            /* 1: MixUp applies (probability `mixup`, none in the
                             epochs without Mosaic) */
    uint64_t mix_partner; /* MixUp's partner, a dataset index (0 without MixUp) */
    double mix_ratio;     /* MixUp: the sample's weight r ~ Beta(32, 32), the
                             partner's 1 - r (1 without MixUp) */
    detfeed_recipe_geometry mix_geometry; /* the partner's own draws */
    int hsv;              /* 1: RandomHSV applies (hsv_h, hsv_s or hsv_v is not 0) */
    double gains[3];      /* its gains dh, ds, dv: u * hsv_h, u * hsv_s, u * hsv_v
                             with u drawn in [-1, 1) for each */
    int flipud;           /* 1: RandomFlip flips it vertically */
    int fliplr;           /* 1: ... and horizontally */
    int bgr;              /* 1: Format keeps OpenCV's B, G, R plane order
                             (probability bgr; never in validation) */
    int cutmix;           /* 1: CutMix's gate (probability cutmix, none in the
                             epochs without Mosaic); whether it changes the sample
                             depends on its boxes (below) */
    uint64_t cut_partner; /* CutMix's partner, a dataset index (0 without
                             CutMix) */
    detfeed_recipe_geometry cut_geometry; /* the partner's own draws */
    int cut_areas[3][4]; /* CutMix's candidate areas x1, y1, x2, y2 on the
                            imgsz x imgsz sample: the sample takes the
                            partner's pixels in one that overlaps none of
                            its boxes, picked by cut_choice, and the
                            partner's instances it covers (by 1 % of their
                            box with polygons, else 10 %), clipped to it;
                            nothing when none is free or covers any */
    double cut_choice;   /* in [0, 1): the k-th free area of m, k =
                            floor(cut_choice * m) */
    int copy_paste;      /* 1: CopyPaste may apply to the sample (copy_paste
                            > 0, not in a close_mosaic epoch, and in mode
                            mixup its gate passed); it pastes where the
                            sample has polygons and objects are eligible */
    uint64_t cp_partner; /* mode mixup: CopyPaste's partner (0 otherwise) */
    detfeed_recipe_geometry cp_geometry; /* mode mixup: the partner's own
                                            draws */
} detfeed_recipe;

/*
 * The recipe of sample `index` (in dataset order) of `epoch` into *out,
 * after detfeed_loader_open. DETFEED_EINVAL for NULL pointers, an index
 * not below detfeed_dataset_size or a loader without a dataset;
 * DETFEED_EBADSTATE after an open that failed; DETFEED_ENOMEM when the
 * epoch's order (for windowed partners) cannot be allocated.
 */
DETFEED_API int detfeed_loader_recipe(const detfeed_loader *loader, uint32_t epoch,
                                      uint64_t index, detfeed_recipe *out);

#ifdef __cplusplus
}
#endif

#endif /* DETFEED_H */
