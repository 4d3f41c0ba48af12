/*
 * avif_internal.h - the YUV to BGR conversion of avif.c (avif_rgb.c), kept
 * apart from libavif's types so that it can be tested on planes alone.
 */
#ifndef DETFEED_AVIF_INTERNAL_H
#define DETFEED_AVIF_INTERNAL_H

#include "decode_internal.h"

#include <stddef.h>
#include <stdint.h>

/* ---- the reader (avif.c), called by decode.c ---------------------------- */

/* true when p[0, n) starts with the ftyp box of an AVIF file. */
bool detfeed__avif_sniff(const uint8_t *p, uint64_t n);

/* true when `name` ends in .avif (any case): Ultralytics' imread reads it
 * with Pillow. */
bool detfeed__avif_named(const char *name);

/* The refusal of a file named .avif that holds another format. */
int detfeed__avif_foreign(detfeed_codec *c, const char *name);

/* A decoded AVIF: BGR as stored, and the orientation Pillow applies. */
typedef struct {
    uint8_t *pixels; /* malloc'd width * height * 3 */
    uint32_t width, height;
    int orientation;
} detfeed__avif_image;

/* Decodes data[0, size) as Pillow 13 reads it (see avif.c); the limits are
 * checked from the header before the planes are decoded. */
int detfeed__avif_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                         size_t size, detfeed__avif_image *out);

/* The stored size and the orientation, from the header. */
int detfeed__avif_probe(detfeed_codec *c, const char *name, const uint8_t *data,
                        size_t size, uint32_t *w, uint32_t *h, int *orientation);

/* ---- the conversion (avif_rgb.c) ---------------------------------------- */

/* The chroma layouts libavif reports. */
typedef enum {
    DETFEED_YUV444,
    DETFEED_YUV422,
    DETFEED_YUV420,
    DETFEED_YUV400
} detfeed__yuv_layout;

/* The colour matrices the conversion has constants for (see avif_rgb.c):
 * BT.601 (with 5 and unspecified), BT.709, BT.2020 NCL, identity. */
typedef enum {
    DETFEED_YUVM_601,
    DETFEED_YUVM_709,
    DETFEED_YUVM_2020,
    DETFEED_YUVM_IDENTITY
} detfeed__yuv_matrix;

/* Decoded planes: Y, U, V (U and V absent for 4:0:0), samples of `depth`
 * bits (8: one byte each; 10 or 12: two bytes, native order). */
typedef struct {
    const uint8_t *plane[3];
    size_t stride[3]; /* bytes */
    uint32_t width, height;
    int depth;
    detfeed__yuv_layout layout;
    detfeed__yuv_matrix matrix;
    int full_range;
    int has_alpha; /* Pillow asked for RGBA (libyuv's alpha functions) */
} detfeed__yuv;

/* Writes the tightly packed width x height BGR image Pillow 13 (libavif
 * 1.4.2 with libyuv) gives for y, as imread's cvtColor(RGB2BGR) orders it.
 * The caller has checked that y is a combination avif.c accepts. Returns
 * false when scratch memory cannot be had. */
int detfeed__yuv_to_bgr(const detfeed__yuv *y, uint8_t *bgr);

#endif /* DETFEED_AVIF_INTERNAL_H */
