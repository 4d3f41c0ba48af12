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

/* The codec handle: limits and the message of its last failure. */
struct detfeed_codec {
    detfeed__limits limits;
    detfeed__msg msg;
};

/* Checks width x height against the limits, with the file named in msg. */
int detfeed__check_dims(const detfeed__limits *lim, const char *path, uint64_t width,
                        uint64_t height, detfeed__msg *msg);

#endif /* DETFEED_DATA_INTERNAL_H */
