/*
 * data_internal.h - internals of the data layer (files, decoding).
 */
#ifndef DETFEED_DATA_INTERNAL_H
#define DETFEED_DATA_INTERNAL_H

#include "core/internal.h"

/* Reads the whole regular file `path` into a malloc'd buffer. Refuses
 * directories and other non-regular files, empty files (DETFEED_ECORRUPT)
 * and files over max_bytes (DETFEED_ELIMIT) before allocating. On failure
 * *data is NULL and msg names the file. */
int detfeed__read_file(const char *path, uint64_t max_bytes, uint8_t **data,
                       size_t *size, detfeed__msg *msg);

/* The limits a codec applies to untrusted input. */
typedef struct detfeed__limits {
    uint64_t max_width, max_height, max_pixels, max_file;
} detfeed__limits;

/* The codec handle: limits, the message of its last failure and the JPEG
 * decompressor it reuses (created on first use, see decode.c). */
struct detfeed_codec {
    detfeed__limits limits;
    detfeed__msg msg;
    void *tj;
};

/* Releases the codec's JPEG decompressor (decode.c); a later decode makes a
 * new one. */
void detfeed__decode_release(detfeed_codec *codec);

/* RGB <-> BGR in place, n pixels of 3 bytes. */
void detfeed__swap_rb(uint8_t *p, size_t n);

/* Checks width x height against the limits, with the file named in msg. */
int detfeed__check_dims(const detfeed__limits *lim, const char *path, uint64_t width,
                        uint64_t height, detfeed__msg *msg);

#endif /* DETFEED_DATA_INTERNAL_H */
