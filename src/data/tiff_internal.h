/*
 * tiff_internal.h - what tiff.c (the file, OpenCV's header reading, the
 * Ultralytics imread flow) and tiff_read.c (OpenCV's TiffDecoder::readData
 * on libtiff) share. Private to those two files.
 */
#ifndef DETFEED_TIFF_INTERNAL_H
#define DETFEED_TIFF_INTERNAL_H

#include "decode_internal.h"

#include <tiffio.h>

/* The input as libtiff reads it: OpenCV's buffer client (reads clamped to
 * the end, seeks clamped to the size, no mapping). */
typedef struct detfeed__tiff_mem {
    const uint8_t *data;
    uint64_t size, pos;
} detfeed__tiff_mem;

/* One open TIFF: the libtiff handle on the input, the stack whose reading
 * is emulated, and why the emulated OpenCV failed (libtiff's first error,
 * or the check OpenCV makes). */
typedef struct detfeed__tiff {
    TIFF *tif;
    detfeed__tiff_mem mem;
    detfeed_codec *codec;
    const char *name;
    int cv;        /* detfeed_cv_version */
    char err[160]; /* libtiff's first error message of the current step */
    char why[224]; /* why OpenCV fails, once it does */
    int errors;    /* libtiff's errors so far */
    /* an error of libtiff's where its versions may differ (the pixels of
     * the image detfeed gives, the pages after the first): the first one */
    char damage[160];
} detfeed__tiff;

/* The depth of an OpenCV Mat type. */
typedef enum detfeed__cv_depth {
    DETFEED__CV_8U,
    DETFEED__CV_8S,
    DETFEED__CV_16U,
    DETFEED__CV_16S,
    DETFEED__CV_32U,
    DETFEED__CV_32S,
    DETFEED__CV_32F,
    DETFEED__CV_64U,
    DETFEED__CV_64S,
    DETFEED__CV_64F
} detfeed__cv_depth;

/* What OpenCV's TiffDecoder::readHeader makes of the current directory:
 * its size and its Mat type (m_type). */
typedef struct detfeed__tiff_page {
    uint32_t width, height;
    detfeed__cv_depth depth;
    int channels;
    bool hdr; /* LogLuv read as float XYZ */
} detfeed__tiff_page;

/* The Mat a page is read into: depth and channels (IMREAD_UNCHANGED: the
 * page's own type; IMREAD_COLOR: 8-bit, 3 channels). */
typedef struct detfeed__tiff_dst {
    detfeed__cv_depth depth;
    int channels;
} detfeed__tiff_dst;

/* OpenCV's outcome of a step: done, failed (why in t->why; caught by
 * OpenCV: imdecode returns an empty image), or a detfeed status (< 0,
 * the codec's message set: a refusal or out of memory). */
enum { DETFEED__TIFF_FAILED = 0, DETFEED__TIFF_DONE = 1 };

/* Records why OpenCV fails (the first reason only) and returns
 * DETFEED__TIFF_FAILED. */
int detfeed__tiff_failed(detfeed__tiff *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* OpenCV's TiffDecoder::readData of the current directory (read by
 * OpenCV's readHeader into p) into a Mat of type dst. With *bgr non-NULL
 * (a malloc'd p->width x p->height x 3 buffer) and dst of 3 or 4 channels
 * of 8 or 16 bits, writes the image as the caller uses it: B, G, R bytes
 * (alpha dropped, a 16-bit sample's high byte), oriented as OpenCV orients
 * it (*bgr may become a new buffer, the old one freed; *w x *h its size).
 * With *bgr NULL only the reads and checks are made: the page's success. */
int detfeed__tiff_read_page(detfeed__tiff *t, const detfeed__tiff_page *p,
                            detfeed__tiff_dst dst, uint8_t **bgr, uint32_t *w,
                            uint32_t *h);

#endif /* DETFEED_TIFF_INTERNAL_H */
