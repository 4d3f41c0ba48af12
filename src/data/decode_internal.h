/*
 * decode_internal.h - the parts of the image decoder (internal to the data
 * layer): the byte source they read, the EXIF orientation, the JPEG, PNG,
 * BMP, WebP, TIFF and JPEG 2000 readers. decode.c (the dispatch) is their only user
 * outside this group (png.c also holds the public PNG reader and writer). The
 * dependencies run one way: decode.c -> jpeg.c, png.c -> exif.c; all of them ->
 * bytes.c, limits.c.
 */
#ifndef DETFEED_DECODE_INTERNAL_H
#define DETFEED_DECODE_INTERNAL_H

#include "data_internal.h"

/* ---- the byte source (bytes.c) ------------------------------------------ */

/* The whole input in memory, or a file read piece by piece. */
typedef struct detfeed__src {
    const uint8_t *mem; /* the input, when it is in memory */
    uint64_t size;      /* its size in bytes */
    int fd;             /* otherwise the file, read with pread */
    uint8_t *buf;       /* file: the bytes of the last detfeed__src_at() */
    size_t cap;
    int io_errno; /* file: errno of a failed read, else 0 */
} detfeed__src;

/* Bytes [off, off + len) of the input, or NULL when they are not all there
 * (or a read failed: io_errno is set). A file source overwrites the bytes
 * of the previous call. */
const uint8_t *detfeed__src_at(detfeed__src *s, uint64_t off, uint64_t len);

/* The failure of a source that could not give its bytes. */
int detfeed__src_fail(detfeed_codec *c, const char *name, const detfeed__src *s);

static inline uint32_t detfeed__be16(const uint8_t *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

static inline uint32_t detfeed__be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- EXIF orientation (exif.c) ------------------------------------------ */

/* The orientation (1..8) a TIFF block p[0, n) gives as OpenCV reads it; 1
 * when absent, unreadable or out of range. */
int detfeed__exif_orientation(const uint8_t *p, uint64_t n);

/* Applies an EXIF orientation to a tightly packed w x h BGR image. 2-4 work
 * in place; 5-8 write a new h-wide, w-high image and free the old one.
 * Returns false only when that allocation fails (the image is unchanged). */
bool detfeed__orient(uint8_t **img, size_t w, size_t h, int o);

/* The size an orientation gives a w x h image. */
void detfeed__oriented_size(uint32_t w, uint32_t h, int o, int *ow, int *oh);

/* ---- JPEG (jpeg.c, libjpeg-turbo) --------------------------------------- */

/* What the marker walk of a JPEG found before the first SOS. */
typedef struct detfeed__jpeg_head {
    bool sof;            /* a frame header was read */
    unsigned sof_marker; /* 0xc0..0xcf */
    unsigned precision, ncomp;
    uint32_t width, height;
    uint64_t end; /* offset just past the SOS segment; 0 if not reached */
    int orientation;
} detfeed__jpeg_head;

/* Walks the markers from SOI to the first SOS as libjpeg reads them, noting
 * the first frame header and the orientation of the first APP1. */
void detfeed__jpeg_scan(detfeed__src *s, detfeed__jpeg_head *h);

/* The stored size of the JPEG in data[0, n) (at least up to the end of its
 * SOS segment), after refusing what libjpeg cannot give as BGR. */
int detfeed__jpeg_header(detfeed_codec *c, const char *name, const uint8_t *data,
                         uint64_t n, const detfeed__jpeg_head *jh, uint32_t *w,
                         uint32_t *h);

/* Decodes the w x h JPEG data[0, size) (its header read) into a new
 * malloc'd BGR image of `bytes` bytes, as stored (not oriented). */
int detfeed__jpeg_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                         size_t size, uint32_t w, uint32_t h, size_t bytes,
                         uint8_t **out);

/* Releases the codec's JPEG decompressor; a later decode makes a new one. */
void detfeed__jpeg_release(detfeed_codec *c);

/* ---- PNG (png.c, libspng) ----------------------------------------------- */

/* What the chunk walk of a PNG found, and what of it libspng is given (see
 * png.c): the first run of IDAT chunks and the palette. */
typedef struct detfeed__png_head {
    uint32_t width, height;
    unsigned depth, ctype;
    int orientation;
    uint64_t idat_off, idat_end; /* the first run of IDAT chunks */
    size_t plte_size;            /* bytes of plte (a whole chunk), or 0 */
    uint8_t plte[12 + 768];
} detfeed__png_head;

/* The signature and IHDR (head[0, n), n <= 33), validated by libspng: the
 * stored size. */
int detfeed__png_header(detfeed_codec *c, const char *name, const uint8_t *head,
                        size_t n, uint32_t *w, uint32_t *h);

/* Walks the chunks from IHDR to IEND with libpng's rules. */
int detfeed__png_scan(detfeed_codec *c, const char *name, detfeed__src *s,
                      detfeed__png_head *h);

/* Decodes the w x h PNG data (its header read, its chunks walked into ph)
 * into a new malloc'd BGR image of `bytes` bytes, as stored. */
int detfeed__png_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                        const detfeed__png_head *ph, uint32_t w, uint32_t h,
                        size_t bytes, uint8_t **out);

/* ---- BMP (bmp.c) --------------------------------------------------------- */

/* A bitmap's header as OpenCV reads it. */
typedef struct detfeed__bmp_head {
    uint32_t width, height;
    bool top_down;           /* rows stored top first (a negative height) */
    uint32_t bits;           /* 1, 4, 8, 15 (5-5-5), 16 (5-6-5), 24, 32 */
    uint32_t comp;           /* 0 uncompressed or bit fields, 1 RLE8, 2 RLE4 */
    uint64_t offset;         /* of the pixel data */
    uint8_t palette[256][3]; /* B, G, R; entries not in the file black */
    /* 32 bits with bit fields, OpenCV 4.8 and later: each of B, G, R is
     * (pixel & mask) >> shift, times scale (float), truncated */
    bool masked;
    uint32_t mask[3], shift[3];
    float scale[3];
} detfeed__bmp_head;

/* The header (and palette) of the BMP behind s, which starts with "BM". */
int detfeed__bmp_header(detfeed_codec *c, const char *name, detfeed__src *s,
                        detfeed__bmp_head *h);

/* Whether a file of `size` bytes holds the pixel rows h describes (RLE: its
 * stream starts in the file); a refusal naming it otherwise. */
int detfeed__bmp_check_size(detfeed_codec *c, const char *name, uint64_t size,
                            const detfeed__bmp_head *h);

/* Decodes the BMP data[0, size) (its header read into h) into a new
 * malloc'd top-down BGR image of `bytes` bytes. */
int detfeed__bmp_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                        size_t size, const detfeed__bmp_head *h, size_t bytes,
                        uint8_t **out);

/* ---- WebP (webp.c, libwebp) ---------------------------------------------- */

typedef struct detfeed__webp_head {
    uint32_t width, height;
    bool alpha, animation;
    int orientation; /* EXIF, where the codec's OpenCV applies it; else 1 */
} detfeed__webp_head;

/* Whether p[0, n) starts a WebP OpenCV recognises (its features read from
 * the first 32 bytes). */
bool detfeed__webp_sniff(const uint8_t *p, uint64_t n);

/* The header of the WebP data[0, size) as the codec's OpenCV reads it. */
int detfeed__webp_header(detfeed_codec *c, const char *name, const uint8_t *data,
                         size_t size, detfeed__webp_head *h);

/* Decodes the WebP (its header read into h) into a new malloc'd BGR image
 * of `bytes` bytes, as stored (not oriented). */
int detfeed__webp_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                         size_t size, const detfeed__webp_head *h, size_t bytes,
                         uint8_t **out);

/* ---- TIFF (tiff.c, tiff_read.c, libtiff) -------------------------------- */

/* Whether p[0, n) starts a TIFF (or BigTIFF) as OpenCV's signature test
 * sees it. */
bool detfeed__tiff_sniff(const uint8_t *p, uint64_t n);

/* Decodes the TIFF data[0, size) as Ultralytics' imread reads a file named
 * `name` with the codec's OpenCV (see tiff.c) into a new malloc'd BGR image
 * of *w x *h, oriented; the image limits are checked before any pixel
 * memory is allocated. */
int detfeed__tiff_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                         size_t size, uint8_t **out, uint32_t *w, uint32_t *h);

/* The size detfeed__tiff_decode gives the TIFF data[0, size), from its
 * first page's header; what that header already refuses is refused. */
int detfeed__tiff_probe(detfeed_codec *c, const char *name, const uint8_t *data,
                        size_t size, uint32_t *w, uint32_t *h);

/* ---- JPEG 2000 (jp2.c, OpenJPEG) ------------------------------------------ */

/* 1 when p[0, n) starts a JP2 file, 2 a bare codestream (J2K), else 0. */
int detfeed__jp2_sniff(const uint8_t *p, uint64_t n);

/* Decodes the JPEG 2000 data[0, size) as cv2.imdecode(IMREAD_COLOR) with
 * the codec's OpenCV (see jp2.c) into a new malloc'd BGR image of *w x
 * *h; the limits are checked from the header before decoding. */
int detfeed__jp2_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                        size_t size, uint8_t **out, uint32_t *w, uint32_t *h);

/* The size detfeed__jp2_decode gives, from the header; what the header
 * already refuses is refused. */
int detfeed__jp2_probe(detfeed_codec *c, const char *name, const uint8_t *data,
                       size_t size, uint32_t *w, uint32_t *h);

#endif /* DETFEED_DECODE_INTERNAL_H */
