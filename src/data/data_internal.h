/*
 * data_internal.h - internals of the data layer (files, decoding).
 */
#ifndef DETFEED_DATA_INTERNAL_H
#define DETFEED_DATA_INTERNAL_H

#include "core/internal.h"
#include "core/progress.h"

#include <sys/stat.h>

/* Opens the regular file `path` for reading into *fd, with its stat in *st.
 * Anything else (folder, FIFO, socket, device) is refused with
 * DETFEED_EIO before it is opened (a FIFO would block open()), and msg says
 * what it is ("PATH: a FIFO, not a regular file"); so are dangling links
 * and link loops, in those words. */
int detfeed__open_regular(const char *path, int *fd, struct stat *st,
                          detfeed__msg *msg);

/* The checks of detfeed__open_regular without opening: DETFEED_OK when
 * `path` is a regular file (its stat in *st), else DETFEED_EIO with msg. */
int detfeed__stat_regular(const char *path, struct stat *st, detfeed__msg *msg);

/* "a regular file", "a folder", "a FIFO", "a socket", "a device". */
const char *detfeed__file_kind(mode_t mode);

/* Reads the whole regular file `path` into a malloc'd buffer, opened with
 * detfeed__open_regular. Refuses empty files (DETFEED_ECORRUPT) and files
 * over max_bytes (DETFEED_ELIMIT) before allocating. On failure *data is
 * NULL and msg names the file. */
int detfeed__read_file(const char *path, uint64_t max_bytes, uint8_t **data,
                       size_t *size, detfeed__msg *msg);

/* detfeed__read_file's reading of `path`, opened as fd with its stat st;
 * closes fd. */
int detfeed__read_opened(const char *path, int fd, const struct stat *st,
                         uint64_t max_bytes, uint8_t **data, size_t *size,
                         detfeed__msg *msg);

/* The limits a codec applies to untrusted input (detfeed_codec_limit). */
typedef struct detfeed__limits {
    uint64_t max_width, max_height, max_pixels, max_file, max_image_bytes;
    /* which OpenCV's decoding where versions decode differently (a
     * detfeed_cv_version): BMP's 32-bit bit fields, WebP animations and
     * orientation, TIFF (decode.c, tiff.c) */
    int opencv;
} detfeed__limits;

/* The defaults documented with detfeed_codec_limit (limits.c). */
void detfeed__limits_default(detfeed__limits *lim);
/* Sets one limit; DETFEED_EINVAL for an unknown limit or 0. */
int detfeed__limits_set(detfeed__limits *lim, detfeed_codec_limit limit,
                        uint64_t value);
/* "max_width", "max_height", "max_pixels", "max_file", "max_image_bytes";
 * NULL for a value that is no limit. */
const char *detfeed__limit_name(detfeed_codec_limit limit);

/* detfeed_codec_decode_file under the limits `lim` instead of the codec's
 * own (which are left as they were): how a dataset's images are decoded,
 * whatever codec the thread holds. */
int detfeed__decode_file_limited(detfeed_codec *codec, const detfeed__limits *lim,
                                 const char *path, uint8_t **pixels, int *width,
                                 int *height);

/* The codec handle: limits, the message of its last failure and the JPEG
 * decompressor it reuses (created on first use, see jpeg.c). */
struct detfeed_codec {
    detfeed__limits limits;
    detfeed__msg msg;
    void *tj;
};

/* Releases the decoders' state the codec holds (decode.c); a later decode
 * makes it again. */
void detfeed__decode_release(detfeed_codec *codec);

/* Checks width x height against the limits, with the file named in msg
 * (limits.c). */
int detfeed__check_dims(const detfeed__limits *lim, const char *path, uint64_t width,
                        uint64_t height, detfeed__msg *msg);

#endif /* DETFEED_DATA_INTERNAL_H */
