/*
 * jpeg.c - JPEG with libjpeg(-turbo), as OpenCV 4.6 decodes it: the
 * library's defaults (accurate integer IDCT, fancy upsampling), output
 * converted to BGR by the library (grayscale replicated). The orientation
 * comes from the FIRST APP1 segment before the first SOS, whatever its
 * identifier: its first 6 bytes are skipped and the rest read as a TIFF
 * block (exif.c). 4-component (CMYK, YCCK) images are refused. Where
 * libjpeg only warns (truncated data, corrupt entropy data) OpenCV returns
 * the damaged image; detfeed refuses it.
 */
#include "decode_internal.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

/*
 * Walks the markers from SOI to the first SOS as libjpeg reads them (fill
 * bytes 0xFF allowed, standalone RSTn and TEM, every other marker with a
 * length), noting the first frame header and the orientation of the first
 * APP1. Anything it does not understand ends the walk quietly: libjpeg then
 * reports the damage in its own words.
 */
void detfeed__jpeg_scan(detfeed__src *s, detfeed__jpeg_head *h)
{
    memset(h, 0, sizeof *h);
    h->orientation = 1;
    bool app1 = false;
    uint64_t pos = 2;
    for (;;) {
        const uint8_t *q = detfeed__src_at(s, pos, 2);
        if (q == NULL || q[0] != 0xff)
            return;
        pos++;
        unsigned m;
        do {
            if ((q = detfeed__src_at(s, pos++, 1)) == NULL)
                return;
            m = q[0];
        } while (m == 0xff);
        if (m == 0x01 || (m >= 0xd0 && m <= 0xd7))
            continue;
        if (m == 0x00 || m == 0xd8 || m == 0xd9 ||
            (q = detfeed__src_at(s, pos, 2)) == NULL)
            return;
        uint32_t len = detfeed__be16(q);
        if (len < 2 || (q = detfeed__src_at(s, pos + 2, len - 2)) == NULL)
            return;
        if (m == 0xda) {
            h->end = pos + len;
            return;
        }
        if (m == 0xe1 && !app1) {
            app1 = true;
            if (len - 2 > 6)
                h->orientation = detfeed__exif_orientation(q + 6, len - 2 - 6);
        } else if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc &&
                   !h->sof && len >= 8) {
            h->sof = true;
            h->sof_marker = m;
            h->precision = q[0];
            h->height = detfeed__be16(q + 1);
            h->width = detfeed__be16(q + 3);
            h->ncomp = q[5];
        }
        pos += len;
    }
}

void detfeed__jpeg_release(detfeed_codec *c)
{
    if (c->tj != NULL)
        tjDestroy(c->tj);
    c->tj = NULL;
}

/* The codec's TurboJPEG handle, created on first use. */
static int tj_handle(detfeed_codec *c, const char *name, tjhandle *out)
{
    if (c->tj == NULL && (c->tj = tjInitDecompress()) == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM,
                             "%s: cannot create a JPEG decompressor", name);
    *out = c->tj;
    return DETFEED_OK;
}

/* A TurboJPEG failure: the message, and a fresh handle next time. An
 * allocation that failed inside libjpeg ("Insufficient memory") or
 * TurboJPEG ("Memory allocation failure") is out of memory
 * (DETFEED_ENOMEM), not damaged data. */
static int tj_fail(detfeed_codec *c, const char *name, const char *what)
{
    const char *e = tjGetErrorStr2(c->tj);
    bool memory = strstr(e, "Insufficient memory") || strstr(e, "emory allocation");
    int rc = memory
                 ? detfeed__fail(&c->msg, DETFEED_ENOMEM,
                                 "%s: out of memory while decoding the JPEG (%s): %s",
                                 name, what, e)
                 : detfeed__fail(&c->msg, DETFEED_ECORRUPT, "%s: JPEG %s: %s", name,
                                 what, e);
    detfeed__jpeg_release(c);
    return rc;
}

/*
 * Reads the header of the JPEG in data[0, n) (at least up to the end of its
 * SOS segment) with the marker walk's findings `jh`: the stored size, after
 * refusing what libjpeg cannot give as BGR. The walk answers for frames
 * TurboJPEG's header reader does not classify (unusual sampling factors),
 * which libjpeg decodes all the same.
 */
int detfeed__jpeg_header(detfeed_codec *c, const char *name, const uint8_t *data,
                         uint64_t n, const detfeed__jpeg_head *jh, uint32_t *w,
                         uint32_t *h)
{
    if (jh->sof && jh->ncomp == 4)
        return detfeed__fail(&c->msg, DETFEED_ENOTSUPPORTED,
                             "%s: JPEG is CMYK (4 components); not supported", name);
    if (jh->sof && jh->ncomp != 1 && jh->ncomp != 3)
        return detfeed__fail(&c->msg, DETFEED_ENOTSUPPORTED,
                             "%s: JPEG has %u components; not supported", name,
                             jh->ncomp);
    if (jh->sof && jh->precision != 8)
        return detfeed__fail(&c->msg, DETFEED_ENOTSUPPORTED,
                             "%s: JPEG has %u-bit samples; only 8-bit is supported",
                             name, jh->precision);
    unsigned m = jh->sof_marker;
    if (jh->sof && (m == 0xc3 || m == 0xc5 || m == 0xc6 || m == 0xc7 || m == 0xcb ||
                    m == 0xcd || m == 0xce || m == 0xcf))
        return detfeed__fail(&c->msg, DETFEED_ENOTSUPPORTED,
                             "%s: JPEG is lossless or hierarchical (SOF 0x%02x); "
                             "not supported",
                             name, m);
    tjhandle tj = NULL;
    int rc = tj_handle(c, name, &tj);
    if (rc != DETFEED_OK)
        return rc;
    int tw = 0, th = 0, sub = 0, cs = 0;
    if (tjDecompressHeader3(tj, data, (unsigned long)n, &tw, &th, &sub, &cs) != 0) {
        bool sampling = tjGetErrorCode(tj) == TJERR_FATAL &&
                        strstr(tjGetErrorStr2(tj), "subsampling") != NULL;
        if (!(sampling && jh->sof && (jh->ncomp == 1 || jh->ncomp == 3) &&
              jh->end != 0))
            return tj_fail(c, name, "header");
        tw = (int)jh->width;
        th = (int)jh->height;
        cs = TJCS_YCbCr;
    }
    if (tw < 1 || th < 1) /* tables only: libjpeg found no frame */
        return detfeed__fail(&c->msg, DETFEED_ECORRUPT,
                             "%s: JPEG header: no image (truncated or tables only)",
                             name);
    if (cs == TJCS_CMYK || cs == TJCS_YCCK)
        return detfeed__fail(&c->msg, DETFEED_ENOTSUPPORTED,
                             "%s: JPEG is %s; CMYK is not supported", name,
                             cs == TJCS_CMYK ? "CMYK" : "YCCK (CMYK)");
    *w = (uint32_t)tw;
    *h = (uint32_t)th;
    return DETFEED_OK;
}

int detfeed__jpeg_decode(detfeed_codec *c, const char *name, const uint8_t *data,
                         size_t size, uint32_t w, uint32_t h, size_t bytes,
                         uint8_t **out)
{
    uint8_t *img = malloc(bytes);
    if (img == NULL)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM,
                             "%s: out of memory for a %ux%u image", name, (unsigned)w,
                             (unsigned)h);
    /* Defaults are libjpeg's (accurate IDCT, fancy upsampling) as OpenCV
     * uses them; any libjpeg warning (damaged data) is an error. */
    int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;
    if (tjDecompress2(c->tj, data, (unsigned long)size, img, (int)w, (int)w * 3, (int)h,
                      TJPF_BGR, flags) != 0) {
        free(img);
        return tj_fail(c, name, "data");
    }
    *out = img;
    return DETFEED_OK;
}
