/*
 * tiff.c - TIFF as Ultralytics 8.4's imread reads it, through libtiff and
 * OpenCV's TiffDecoder (emulated call for call: the decoder's readHeader
 * here, its readData in tiff_read.c). Measured against Debian's OpenCV 4.6
 * and the opencv-python wheels' 4.12, 5.0 and 5.1, with Ultralytics 8.4.190,
 * by tests/oracle/test_formats_oracle.py:
 *
 * - a file is TIFF by its first four bytes (II*0, MM0*, and BigTIFF's II+0,
 *   MM0+); libtiff reads it from memory as OpenCV's buffer client does.
 * - a file named *.tif or *.tiff (any case) is read as imread reads it:
 *   cv2.imdecodemulti(IMREAD_UNCHANGED), every page in turn; when that
 *   succeeds and the first page has colour (a 3-D array), the first page,
 *   alpha dropped, a 16-bit page's high bytes; otherwise (gray, or any
 *   page failing) cv2.imdecode(IMREAD_COLOR) of the first page. A page
 *   whose header OpenCV cannot read after a page it read raises out of
 *   imdecodemulti, and so does imread: such a file is refused, as is a
 *   first page of samples other than 8- or 16-bit unsigned integers,
 *   which imread hands on unconverted. OpenCV 4.6 has no imdecodemulti
 *   (imread raises AttributeError): detfeed refuses *.tif and *.tiff files
 *   with the codec's opencv set to it.
 * - any other name is read as cv2.imdecode(IMREAD_COLOR): the first page.
 * - the compression schemes of the stack's libtiff: the wheels' has none of
 *   LZMA, ZSTD, JBIG, LERC, and WebP only from 5.1 (files with them fail
 *   there as in OpenCV); schemes not measured on a wheel (old-style JPEG,
 *   PixarLog, SGI Log, NeXT, ThunderScan, ...) are refused on the wheels'
 *   stacks. Debian's OpenCV reads with Debian's libtiff, detfeed's own.
 * - libtiff never prints: its errors are kept (the first one explains a
 *   refusal), its warnings ignored; its single allocations are bounded by
 *   the codec's limits (max_file, 3 x max_image_bytes).
 */
#include "tiff_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OpenCV's own limits on a page's size (validateInputImageSize). */
#define CV_MAX_SIDE   (1ull << 20)
#define CV_MAX_PIXELS (1ull << 30)

/* ---- the input, as OpenCV's buffer client gives it to libtiff ----------- */

static tmsize_t mem_read(thandle_t h, void *buf, tmsize_t n)
{
    detfeed__tiff_mem *m = (detfeed__tiff_mem *)h;
    if (n < 0)
        return 0;
    uint64_t left = m->size - m->pos;
    if ((uint64_t)n > left)
        n = (tmsize_t)left;
    memcpy(buf, m->data + m->pos, (size_t)n);
    m->pos += (uint64_t)n;
    return n;
}

static tmsize_t mem_write(thandle_t h, void *buf, tmsize_t n)
{
    (void)h, (void)buf, (void)n;
    return 0;
}

static toff_t mem_seek(thandle_t h, toff_t off, int whence)
{
    detfeed__tiff_mem *m = (detfeed__tiff_mem *)h;
    toff_t at = m->pos;
    if (whence == SEEK_SET)
        at = off;
    else if (whence == SEEK_CUR)
        at += off;
    else if (whence == SEEK_END)
        at = m->size + off;
    m->pos = at < m->size ? at : m->size;
    return m->pos;
}

static int mem_close(thandle_t h)
{
    (void)h;
    return 0;
}

static toff_t mem_size(thandle_t h)
{
    return ((detfeed__tiff_mem *)h)->size;
}

static int on_error(TIFF *tif, void *user, const char *module, const char *fmt,
                    va_list ap)
{
    (void)tif;
    detfeed__tiff *t = user;
    if (t->err[0] == '\0') {
        size_t n = 0;
        if (module && *module)
            n = (size_t)snprintf(t->err, sizeof t->err, "%.60s: ", module);
        vsnprintf(t->err + n, sizeof t->err - n, fmt, ap);
    }
    t->errors++;
    return 1; /* handled: libtiff's global handlers (stderr) are not called */
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt,
                      va_list ap)
{
    (void)tif, (void)user, (void)module, (void)fmt, (void)ap;
    return 1;
}

bool detfeed__tiff_sniff(const uint8_t *p, uint64_t n)
{
    return n >= 4 &&
           ((memcmp(p, "II", 2) == 0 && (p[2] == 42 || p[2] == 43) && p[3] == 0) ||
            (memcmp(p, "MM", 2) == 0 && p[2] == 0 && (p[3] == 42 || p[3] == 43)));
}

/* The refusal of a file libtiff complained about where its versions may
 * read it differently. */
static int damaged(detfeed__tiff *t)
{
    return detfeed__fail(
        &t->codec->msg, DETFEED_ECORRUPT,
        "%s: a damaged TIFF (libtiff: %s), which libtiff versions read "
        "differently: detfeed does not read it",
        t->name, t->damage);
}

/* Opens t's input with libtiff, as OpenCV does for each decode. */
static int tiff_open(detfeed__tiff *t)
{
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (opts == NULL)
        return detfeed__fail(&t->codec->msg, DETFEED_ENOMEM, "%s: out of memory",
                             t->name);
    const detfeed__limits *lim = &t->codec->limits;
    uint64_t most = lim->max_image_bytes * 3 > lim->max_file ? lim->max_image_bytes * 3
                                                             : lim->max_file;
    TIFFOpenOptionsSetMaxSingleMemAlloc(
        opts, (tmsize_t)(most < INT64_MAX ? most : INT64_MAX));
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, t);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, t);
    t->mem.pos = 0;
    t->err[0] = '\0';
    t->tif = TIFFClientOpenExt("", "r", (thandle_t)&t->mem, mem_read, mem_write,
                               mem_seek, mem_close, mem_size, NULL, NULL, opts);
    TIFFOpenOptionsFree(opts);
    if (t->tif == NULL && t->cv != DETFEED_CV_4_DEBIAN && t->err[0]) {
        /* the wheels' libtiff may read the first directory */
        snprintf(t->damage, sizeof t->damage, "%s", t->err);
        return damaged(t);
    }
    if (t->tif == NULL)
        return detfeed__tiff_failed(t, "%s",
                                    t->err[0] ? t->err : "libtiff cannot open it");
    return DETFEED__TIFF_DONE;
}

static void tiff_close(detfeed__tiff *t)
{
    if (t->tif != NULL)
        TIFFClose(t->tif);
    t->tif = NULL;
}

/* ---- OpenCV's readHeader ------------------------------------------------- */

static bool new_cv(const detfeed__tiff *t)
{
    return t->cv == DETFEED_CV_5_0 || t->cv == DETFEED_CV_5_1;
}

/* The Mat depth of `bpp`-bit samples of format sf, or -1 where readHeader
 * throws. */
static int depth_of(const detfeed__tiff *t, uint16_t bpp, uint16_t sf, uint16_t ph)
{
    bool ints = sf == SAMPLEFORMAT_UINT || sf == SAMPLEFORMAT_INT;
    bool s = sf == SAMPLEFORMAT_INT;
    switch (bpp) {
    case 1:
    case 8:
        return ints ? (s ? DETFEED__CV_8S : DETFEED__CV_8U) : -1;
    case 4: /* palettes only, and not before 4.12 */
        return ints && ph == PHOTOMETRIC_PALETTE && t->cv != DETFEED_CV_4_DEBIAN
                   ? (s ? DETFEED__CV_8S : DETFEED__CV_8U)
                   : -1;
    case 10:
    case 12:
    case 14:
    case 16:
        return ints ? (s ? DETFEED__CV_16S : DETFEED__CV_16U) : -1;
    case 32:
        if (sf == SAMPLEFORMAT_IEEEFP)
            return DETFEED__CV_32F;
        if (sf == SAMPLEFORMAT_INT)
            return DETFEED__CV_32S;
        return sf == SAMPLEFORMAT_UINT && new_cv(t) ? DETFEED__CV_32U : -1;
    case 64:
        if (sf == SAMPLEFORMAT_IEEEFP)
            return DETFEED__CV_64F;
        if (!new_cv(t))
            return -1;
        return sf == SAMPLEFORMAT_INT    ? DETFEED__CV_64S
               : sf == SAMPLEFORMAT_UINT ? DETFEED__CV_64U
                                         : -1;
    }
    return -1;
}

/* readHeader of the current directory into p: DONE, or FAILED where
 * OpenCV throws. */
static int read_head(detfeed__tiff *t, detfeed__tiff_page *p)
{
    TIFF *tif = t->tif;
    uint16_t ph = 0, bpp = 8, ncn, sf = SAMPLEFORMAT_UINT;
    memset(p, 0, sizeof *p);
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &p->width) ||
        !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &p->height) ||
        !TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &ph))
        return detfeed__tiff_failed(t, "no image size or photometric interpretation");
    bool gray = ph == PHOTOMETRIC_MINISWHITE || ph == PHOTOMETRIC_MINISBLACK;
    ncn = gray ? 1 : 3;
    if (!TIFFGetField(tif, TIFFTAG_BITSPERSAMPLE, &bpp))
        bpp = 1;
    TIFFGetField(tif, TIFFTAG_SAMPLESPERPIXEL, &ncn);
    if (t->cv != DETFEED_CV_4_DEBIAN)
        TIFFNumberOfDirectories(tif); /* the frame count 4.12 and later read */
    if (ncn == 3 && ph == PHOTOMETRIC_LOGLUV) {
        *p = (detfeed__tiff_page){p->width, p->height, DETFEED__CV_32F, 3, true};
        return DETFEED__TIFF_DONE;
    }
    if (bpp > 8 && (ph > 2 || (ncn != 1 && ncn != 3 && ncn != 4)))
        bpp = 8;
    TIFFGetField(tif, TIFFTAG_SAMPLEFORMAT, &sf);
    if (ncn < 1 || ncn > 4)
        return detfeed__tiff_failed(t, "%u samples a pixel", (unsigned)ncn);
    int depth = depth_of(t, bpp, sf, ph);
    if (depth < 0)
        return detfeed__tiff_failed(t, "%u-bit samples of format %u", (unsigned)bpp,
                                    (unsigned)sf);
    p->depth = (detfeed__cv_depth)depth;
    p->channels = bpp >= 32 ? ncn : (bpp != 4 && !gray ? ncn : 1);
    if (ph == PHOTOMETRIC_PALETTE && (bpp == 4 || bpp == 8))
        p->channels = 3;
    return DETFEED__TIFF_DONE;
}

/* A page's size against OpenCV's validateInputImageSize (which raises out
 * of imdecode) and detfeed's limits. */
static int check_page(detfeed__tiff *t, const detfeed__tiff_page *p, int page)
{
    int rc = detfeed__check_dims(&t->codec->limits, t->name, p->width, p->height,
                                 &t->codec->msg);
    if (rc == DETFEED_OK && (p->width > CV_MAX_SIDE || p->height > CV_MAX_SIDE ||
                             (uint64_t)p->width * p->height > CV_MAX_PIXELS))
        rc = detfeed__fail(&t->codec->msg, DETFEED_ELIMIT,
                           "%s: page %d is %ux%u, which OpenCV refuses (raises)",
                           t->name, page + 1, (unsigned)p->width, (unsigned)p->height);
    return rc;
}

/* check_page as a step: DONE, or the refusal. */
static int page_ok(detfeed__tiff *t, const detfeed__tiff_page *p, int page)
{
    int rc = check_page(t, p, page);
    return rc == DETFEED_OK ? DETFEED__TIFF_DONE : rc;
}

/* ---- the stack's libtiff ------------------------------------------------- */

/* Whether the wheels' libtiff decodes `scheme`: 1 yes, 0 no (measured), -1
 * not known. */
static int wheel_codec(int cv, uint16_t scheme)
{
    switch (scheme) {
    case COMPRESSION_NONE:
    case COMPRESSION_CCITTRLE:
    case COMPRESSION_CCITTFAX3:
    case COMPRESSION_CCITTFAX4:
    case COMPRESSION_LZW:
    case COMPRESSION_JPEG:
    case COMPRESSION_ADOBE_DEFLATE:
    case COMPRESSION_DEFLATE:
    case COMPRESSION_PACKBITS:
        return 1;
    case COMPRESSION_WEBP: /* 5.1's libwebp reads damaged data differently */
        return cv == DETFEED_CV_5_1 ? -1 : 0;
    case COMPRESSION_LZMA:
    case COMPRESSION_ZSTD:
    case COMPRESSION_JBIG:
    case COMPRESSION_LERC:
        return 0;
    }
    return -1;
}

/* The current page's compression as the stack's libtiff takes it: DONE
 * where it decodes it, FAILED where it lacks it, a refusal where that is
 * not known. */
static int stack_codec(detfeed__tiff *t)
{
    uint16_t scheme = COMPRESSION_NONE;
    TIFFGetFieldDefaulted(t->tif, TIFFTAG_COMPRESSION, &scheme);
    /* Debian's libtiff is detfeed's; a scheme it lacks fails everywhere */
    if (t->cv == DETFEED_CV_4_DEBIAN || !TIFFIsCODECConfigured(scheme))
        return DETFEED__TIFF_DONE;
    int has = wheel_codec(t->cv, scheme);
    if (has == 1 &&
        (scheme == COMPRESSION_ADOBE_DEFLATE || scheme == COMPRESSION_DEFLATE))
        /* the wheels' libtiff inflates with zlib, Debian's with libdeflate
         * (which differ on damaged data) */
        TIFFSetField(t->tif, TIFFTAG_DEFLATE_SUBCODEC, DEFLATE_SUBCODEC_ZLIB);
    if (has == 1)
        return DETFEED__TIFF_DONE;
    if (has == 0)
        return detfeed__tiff_failed(t,
                                    "compression %u, which this OpenCV's libtiff "
                                    "does not have",
                                    (unsigned)scheme);
    return detfeed__fail(&t->codec->msg, DETFEED_EFORMAT,
                         "%s: TIFF compression %u, which detfeed does not read with "
                         "this OpenCV (opencv-python's libtiff may lack it)",
                         t->name, (unsigned)scheme);
}

/* Notes libtiff's first error since `before` errors as damage. */
static void note_damage(detfeed__tiff *t, int before)
{
    if (t->errors > before && t->damage[0] == '\0')
        snprintf(t->damage, sizeof t->damage, "%s", t->err);
}

/* Reads the current page; errors of libtiff's on the way to the image
 * detfeed gives (`bgr`), or on a page after the first, are damage. */
static int read_page(detfeed__tiff *t, const detfeed__tiff_page *p,
                     detfeed__tiff_dst dst, uint8_t **bgr, uint32_t *w, uint32_t *h,
                     bool later)
{
    int before = t->errors;
    int rc = stack_codec(t);
    if (rc == DETFEED__TIFF_DONE)
        rc = detfeed__tiff_read_page(t, p, dst, bgr, w, h);
    if (later || (bgr != NULL && *bgr != NULL))
        note_damage(t, before);
    return rc;
}

/* ---- cv2.imdecode(IMREAD_COLOR) ----------------------------------------- */

/* A new image of p's size, or a refusal. */
static int new_image(detfeed__tiff *t, const detfeed__tiff_page *p, uint8_t **img)
{
    *img = malloc((size_t)p->width * p->height * 3);
    if (*img == NULL)
        return detfeed__fail(&t->codec->msg, DETFEED_ENOMEM,
                             "%s: out of memory for a %ux%u image", t->name,
                             (unsigned)p->width, (unsigned)p->height);
    return DETFEED__TIFF_DONE;
}

/* The first page as 8-bit BGR: DONE (the image in *img), FAILED (imdecode
 * gives None) or a refusal. */
static int imdecode_color(detfeed__tiff *t, uint8_t **img, uint32_t *w, uint32_t *h)
{
    detfeed__tiff_page p;
    *img = NULL;
    int rc = tiff_open(t);
    if (rc == DETFEED__TIFF_DONE)
        rc = read_head(t, &p);
    if (rc == DETFEED__TIFF_DONE)
        rc = page_ok(t, &p, 0);
    if (rc == DETFEED__TIFF_DONE)
        rc = new_image(t, &p, img);
    if (rc == DETFEED__TIFF_DONE)
        rc = read_page(t, &p, (detfeed__tiff_dst){DETFEED__CV_8U, 3}, img, w, h, false);
    tiff_close(t);
    if (rc != DETFEED__TIFF_DONE) {
        free(*img);
        *img = NULL;
    }
    return rc;
}

/* ---- cv2.imdecodemulti(IMREAD_UNCHANGED) --------------------------------- */

enum { MULTI_OK, MULTI_FAILED, MULTI_RAISES };

/* Whether detfeed needs the first page as imdecodemulti reads it: colour
 * of 8 or 16 bits. */
static bool wanted(const detfeed__tiff_page *p)
{
    return p->channels >= 3 &&
           (p->depth == DETFEED__CV_8U || p->depth == DETFEED__CV_16U);
}

/* The pages after the first, read (without their pixels) until one fails,
 * the last is read, or a header raises: *result. */
static int later_pages(detfeed__tiff *t, int *result)
{
    detfeed__tiff_page p;
    for (int page = 1;; page++) {
        int before = t->errors;
        bool next = TIFFReadDirectory(t->tif) != 0;
        note_damage(t, before);
        if (!next)
            return *result = MULTI_OK, DETFEED__TIFF_DONE;
        int rc = read_head(t, &p);
        if (rc == DETFEED__TIFF_FAILED)
            return *result = MULTI_RAISES, DETFEED__TIFF_DONE;
        if ((rc = check_page(t, &p, page)) != DETFEED_OK)
            return rc;
        rc = read_page(t, &p, (detfeed__tiff_dst){p.depth, p.channels}, NULL, NULL,
                       NULL, true);
        if (rc < 0)
            return rc;
        if (rc == DETFEED__TIFF_FAILED)
            return *result = MULTI_FAILED, DETFEED__TIFF_DONE;
    }
}

/* imdecodemulti of t's input, the first page (read into p0) given in *img
 * where detfeed needs it (wanted()): *result. */
static int imdecodemulti(detfeed__tiff *t, const detfeed__tiff_page *p0, uint8_t **img,
                         uint32_t *w, uint32_t *h, int *result)
{
    int rc = wanted(p0) ? new_image(t, p0, img) : DETFEED__TIFF_DONE;
    if (rc == DETFEED__TIFF_DONE)
        rc = read_page(t, p0, (detfeed__tiff_dst){p0->depth, p0->channels},
                       wanted(p0) ? img : NULL, w, h, false);
    if (rc == DETFEED__TIFF_FAILED)
        return *result = MULTI_FAILED, DETFEED__TIFF_DONE;
    return rc < 0 ? rc : later_pages(t, result);
}

static const char *depth_name(detfeed__cv_depth d)
{
    static const char *const names[] = {
        "8-bit unsigned",  "8-bit signed",  "16-bit unsigned", "16-bit signed",
        "32-bit unsigned", "32-bit signed", "32-bit float",    "64-bit unsigned",
        "64-bit signed",   "64-bit float"};
    return names[d];
}

/* What imread makes of imdecodemulti's outcome: 1 the first page it read,
 * 0 imdecode instead, or a refusal. */
static int imread_choice(detfeed__tiff *t, const detfeed__tiff_page *p0, int result)
{
    if (result == MULTI_RAISES)
        return detfeed__fail(
            &t->codec->msg, DETFEED_ECORRUPT,
            "%s: cv2.imdecodemulti raises on a later page (%s), and so "
            "does Ultralytics' imread",
            t->name, t->why);
    if (result != MULTI_OK || p0->channels < 2)
        return 0;
    if (!wanted(p0))
        return detfeed__fail(&t->codec->msg, DETFEED_EFORMAT,
                             "%s: a TIFF of %s samples, which Ultralytics' imread "
                             "hands on unconverted",
                             t->name, depth_name(p0->depth));
    return 1;
}

/* imread of a *.tif file: DONE with *img, FAILED (None) or a refusal. */
static int imread_tif(detfeed__tiff *t, uint8_t **img, uint32_t *w, uint32_t *h)
{
    detfeed__tiff_page p0 = {0};
    int result = MULTI_FAILED, rc = tiff_open(t);
    *img = NULL;
    if (rc == DETFEED__TIFF_DONE)
        rc = read_head(t, &p0); /* FAILED: imdecodemulti fails */
    if (rc == DETFEED__TIFF_DONE)
        rc = page_ok(t, &p0, 0);
    /* one page of gray or of 8-bit colour: what imdecode gives either way */
    bool single = rc == DETFEED__TIFF_DONE && TIFFLastDirectory(t->tif) &&
                  (p0.channels == 1 || p0.depth == DETFEED__CV_8U);
    if (rc == DETFEED__TIFF_DONE && !single)
        rc = imdecodemulti(t, &p0, img, w, h, &result);
    tiff_close(t);
    int choice = rc < 0 ? rc : imread_choice(t, &p0, result);
    if (choice == 1)
        return DETFEED__TIFF_DONE;
    free(*img);
    *img = NULL;
    if (choice < 0)
        return choice;
    t->why[0] = '\0';
    return imdecode_color(t, img, w, h);
}

/* ---- entry points --------------------------------------------------------- */

/* Whether `name` ends in .tif or .tiff, in any case (Ultralytics' test). */
static bool tif_name(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (dot == NULL)
        return false;
    char s[6] = {0};
    for (size_t i = 0; i < 5 && dot[i + 1]; i++)
        s[i] = (char)tolower((unsigned char)dot[i + 1]);
    return (strcmp(s, "tif") == 0 || strcmp(s, "tiff") == 0) &&
           strlen(dot + 1) == strlen(s);
}

static int refuse_old(detfeed__tiff *t)
{
    return detfeed__fail(
        &t->codec->msg, DETFEED_EFORMAT,
        "%s: Ultralytics 8.4 reads .tif files with "
        "cv2.imdecodemulti, which OpenCV 4.6 does not have (its imread "
        "raises)",
        t->name);
}

int detfeed__tiff_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                         size_t size, uint8_t **out, uint32_t *w, uint32_t *h)
{
    detfeed__tiff t = {
        .mem = {data, size, 0}, .codec = c, .name = name, .cv = c->limits.opencv};
    bool tif = tif_name(name);
    if (tif && t.cv == DETFEED_CV_4_DEBIAN)
        return refuse_old(&t);
    int rc = tif ? imread_tif(&t, out, w, h) : imdecode_color(&t, out, w, h);
    if (rc == DETFEED__TIFF_DONE && t.damage[0] && t.cv != DETFEED_CV_4_DEBIAN) {
        /* the wheels' libtiff is not Debian's: where libtiff complained, the
         * bytes of what it read are not known to be the same */
        free(*out);
        *out = NULL;
        return damaged(&t);
    }
    if (rc == DETFEED__TIFF_FAILED)
        return detfeed__fail(&c->msg, DETFEED_ECORRUPT,
                             "%s: OpenCV cannot read this TIFF: %s", name, t.why);
    return rc < 0 ? rc : DETFEED_OK;
}

int detfeed__tiff_probe(detfeed_codec *c, const char *name, const uint8_t *data,
                        size_t size, uint32_t *w, uint32_t *h)
{
    detfeed__tiff t = {
        .mem = {data, size, 0}, .codec = c, .name = name, .cv = c->limits.opencv};
    detfeed__tiff_page p;
    *w = *h = 0;
    if (tif_name(name) && t.cv == DETFEED_CV_4_DEBIAN)
        return refuse_old(&t);
    int rc = tiff_open(&t);
    if (rc == DETFEED__TIFF_DONE)
        rc = read_head(&t, &p);
    if (rc == DETFEED__TIFF_DONE)
        rc = page_ok(&t, &p, 0);
    if (rc == DETFEED__TIFF_DONE)
        rc = stack_codec(&t);
    uint16_t o = ORIENTATION_TOPLEFT;
    if (rc == DETFEED__TIFF_DONE)
        TIFFGetField(t.tif, TIFFTAG_ORIENTATION, &o);
    tiff_close(&t);
    if (rc == DETFEED__TIFF_FAILED)
        return detfeed__fail(&c->msg, DETFEED_ECORRUPT,
                             "%s: OpenCV cannot read this TIFF: %s", name, t.why);
    if (rc < 0)
        return rc;
    bool swap = o >= ORIENTATION_LEFTTOP && o <= ORIENTATION_LEFTBOT;
    *w = swap ? p.height : p.width;
    *h = swap ? p.width : p.height;
    return DETFEED_OK;
}
