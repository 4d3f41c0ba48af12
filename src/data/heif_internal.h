/*
 * heif_internal.h - HEIC/HEIF images (heif.c, heif_meta.c, heif_color.c):
 * what decode.c calls, and what the three files share. Internal to the data
 * layer.
 */
#ifndef DETFEED_HEIF_INTERNAL_H
#define DETFEED_HEIF_INTERNAL_H

#include "decode_internal.h"

/* The colour description of an image (heif_color.c). */
typedef struct detfeed__heif_nclx detfeed__heif_nclx;

/* ---- the entry points (heif.c, libheif) ---------------------------------- */

/* Whether p[0, n) starts an ISOBMFF file of a HEIF brand pi-heif opens
 * (heic, heix, heim, heis, hevc, hevx, hevm, hevs; mif1 and msf1 unless the
 * file also names an AVIF brand, which is AVIF's). */
bool detfeed__heif_sniff(const uint8_t *p, uint64_t n);

/* Whether `name` ends in .heic or .heif (any case): the names Ultralytics'
 * imread sends to Pillow. */
bool detfeed__heif_name(const char *name);

/* Whether a file with this suffix ("avif", "heic", "heif"; others: false)
 * whose first bytes are head[0, n) holds an image of another format than
 * the one detfeed reproduces Pillow's reading of for the suffix (AVIF,
 * HEIF; decode.c): Ultralytics reads it with Pillow's decoder of that
 * format, which detfeed does not reproduce. */
bool detfeed__pillow_other(const char *suffix, const uint8_t *head, uint64_t n);

/* Decodes the HEIF data[0, size) as Ultralytics' imread reads a .heic or
 * .heif with Pillow and pi-heif 1.4.0 (see heif.c) into a new malloc'd BGR
 * image of *w x *h; the limits are checked before any pixel memory is
 * allocated. */
int detfeed__heif_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                         size_t size, uint8_t **out, uint32_t *w, uint32_t *h);

/* The size detfeed__heif_decode gives, from the file's boxes; what they
 * already refuse is refused. */
int detfeed__heif_probe(detfeed_codec *c, const char *name, const uint8_t *data,
                        size_t size, uint32_t *w, uint32_t *h);

/* ---- the decoder plugin (heif_plugin.c) ---------------------------------- */

/* The id of detfeed's libheif decoder plugin: HEVC to planes libheif does
 * not convert (see heif_plugin.c). */
#define DETFEED__HEIF_PLUGIN "detfeed-planes"

/* Registers the plugin with libheif (once per process); false when libheif
 * refused it. */
bool detfeed__heif_plugin_register(void);

/* Brackets a detfeed decode on this thread: the plugin gives its planes
 * (otherwise YCbCr as libheif's own plugin does), and notes the colour
 * description of the first picture it decodes. */
void detfeed__heif_plugin_begin(void);
void detfeed__heif_plugin_end(void);

/* That colour description (the HEVC stream's VUI); false when no picture
 * was decoded. */
bool detfeed__heif_vui(detfeed__heif_nclx *out);

/* ---- the boxes libheif does not tell about (heif_boxes.c) ---------------- */

/* What the primary image's boxes say: how it is coded, and whether
 * libheif's grid and transformations on heif_plugin.c's planes give what
 * they give on the coded ones. */
typedef struct detfeed__heif_layout {
    int chroma;    /* hvcC chroma_format_idc: 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4 */
    int bits;      /* hvcC luma bit depth */
    uint32_t tile; /* a grid's first tile; 0 when the image is no grid */
} detfeed__heif_layout;

/* Reads the primary image's item type, hvcC (of its first tile for a
 * grid) and transformations from data[0, size). NULL when detfeed reads
 * the image; otherwise why not (the file may also be one libheif refuses:
 * libheif reads it first). */
const char *detfeed__heif_layout_read(const uint8_t *data, size_t size,
                                      detfeed__heif_layout *out);

/* ---- the metadata pi-heif and Pillow read (heif_meta.c) ------------------ */

/* Whether Pillow's exif_transpose leaves the image as pi-heif gives it:
 * `exif` (the first Exif block's payload, as pi-heif cuts it; NULL when
 * none) and `xmp` (the first XMP block; NULL when none). false when the
 * orientation could be read differently by the two, which detfeed does not
 * guess at. */
bool detfeed__heif_upright(const uint8_t *exif, size_t exif_size, const uint8_t *xmp,
                           size_t xmp_size);

/* The payload pi-heif takes from an Exif metadata block of n bytes (its
 * 4-byte offset and what it skips), as an offset into it. */
size_t detfeed__heif_exif_start(const uint8_t *block, size_t n);

/* ---- YCbCr to BGR (heif_color.c) ----------------------------------------- */

/* A decoded image's planes, the chroma planes brought to the size of the
 * luma plane by repeating each sample (heif_plugin.c): the nearest
 * neighbour every conversion detfeed reproduces takes. */
typedef struct detfeed__heif_planes {
    uint32_t width, height;
    int bits;   /* of every plane: 8 to 12 */
    int chroma; /* as coded (hvcC): 0 monochrome (Y only), 1 4:2:0, 2 4:2:2, 3 4:4:4 */
    bool i16;   /* gray of more than 8 bits that Pillow gets as mode I;16 */
    const uint8_t *y, *cb, *cr; /* samples above 8 bits: uint16_t, host order */
    size_t y_stride, cb_stride, cr_stride; /* in bytes */
} detfeed__heif_planes;

/* The colour description that libheif 1.23.0 converts with: the
 * colr box's nclx, else the HEVC stream's. */
struct detfeed__heif_nclx {
    int matrix, primaries;
    bool full_range;
};

/* NULL when libheif 1.23.0's conversion of such an image to 8-bit
 * interleaved RGB is one detfeed reproduces; otherwise why not. */
const char *detfeed__heif_color_refusal(const detfeed__heif_planes *p,
                                        const detfeed__heif_nclx *nclx);

/* Converts the planes to tightly packed BGR (out: width * height * 3
 * bytes) with the arithmetic libheif 1.23.0 applies for pi-heif (see
 * heif_color.c); p and nclx passed detfeed__heif_color_refusal. */
void detfeed__heif_to_bgr(const detfeed__heif_planes *p, const detfeed__heif_nclx *nclx,
                          uint8_t *out);

#endif /* DETFEED_HEIF_INTERNAL_H */
