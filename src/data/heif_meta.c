/*
 * heif_meta.c - the orientation a HEIF's metadata gives Pillow after
 * pi-heif 1.4.0 has read it.
 *
 * libheif turns the image by its irot and imir boxes; pi-heif therefore
 * sets the first orientation tag of the EXIF block's first directory that
 * is not 1 to 1, and removes tiff:Orientation="N" and
 * <tiff:Orientation>N</tiff:Orientation> from the XMP before its last NUL
 * byte. Pillow's exif_transpose then reads the EXIF orientation, or, when
 * the EXIF has none, the first tiff:Orientation="N or >N of the XMP. The
 * image stays as libheif gave it whenever both read the same single tag;
 * the files where they could part (an EXIF pi-heif cannot walk, two
 * orientation tags, a tag that is not one SHORT, an XMP orientation pi-heif
 * leaves in place) are refused rather than guessed at.
 */
#include "heif_internal.h"

#include <string.h>

size_t detfeed__heif_exif_start(const uint8_t *block, size_t n)
{
    /* pi-heif: a 4-byte big-endian offset to the TIFF header, counted
     * after it; an offset that leaves 4 bytes or fewer means 4; the
     * "Exif\0\0" just before the header is kept. */
    uint64_t skip = 4;
    if (n >= 4)
        skip += detfeed__be32(block);
    else
        for (size_t i = 0; i < n; i++)
            skip += (uint64_t)block[i] << (8 * (n - 1 - i));
    if (skip >= n || n - skip <= 4)
        return 4;
    if (skip >= 6 && memcmp(block + skip - 6, "Exif\0\0", 6) == 0)
        skip -= 6;
    return (size_t)skip;
}

static uint32_t rd16(const uint8_t *p, bool le)
{
    return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 : detfeed__be16(p);
}

static uint32_t rd32(const uint8_t *p, bool le)
{
    return le ? rd16(p, true) | rd16(p + 2, true) << 16 : detfeed__be32(p);
}

/* The orientation tags of the first directory: 0 or 1 (a single SHORT), or
 * -1 when the EXIF cannot be walked alike by pi-heif and Pillow. */
static int exif_orientation_tags(const uint8_t *p, size_t n)
{
    if (n >= 6 && memcmp(p, "Exif\0\0", 6) == 0)
        p += 6, n -= 6;
    if (n < 8 || (memcmp(p, "II*\0", 4) != 0 && memcmp(p, "MM\0*", 4) != 0))
        return -1;
    bool le = p[0] == 'I';
    uint64_t ifd = rd32(p + 4, le);
    if (ifd + 2 > n)
        return -1;
    uint32_t count = rd16(p + ifd, le);
    if (ifd + 2 + 12 * (uint64_t)count > n)
        return -1;
    int found = 0;
    for (uint32_t k = 0; k < count; k++) {
        const uint8_t *e = p + ifd + 2 + 12 * (uint64_t)k;
        if (rd16(e, le) != 0x0112)
            continue;
        if (found++ || rd16(e + 2, le) != 3 || rd32(e + 4, le) != 1)
            return -1;
    }
    return found;
}

static const uint8_t *find(const uint8_t *p, size_t n, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(p + i, s, k) == 0)
            return p + i;
    return NULL;
}

static bool digit_at(const uint8_t *p, const uint8_t *end)
{
    return p < end && *p >= '0' && *p <= '9';
}

/* Whether the XMP's orientation is gone (or never was) for Pillow once
 * pi-heif has removed it. */
static bool xmp_upright(const uint8_t *p, size_t n)
{
    static const char tag[] = "tiff:Orientation";
    const uint8_t *end = p + n, *at = find(p, n, tag);
    if (at == NULL)
        return true;
    const uint8_t *v = at + sizeof tag - 1;
    if (find(v, (size_t)(end - v), tag) != NULL)
        return false; /* two of them */
    bool attr = v + 1 < end && v[0] == '=' && v[1] == '"' && digit_at(v + 2, end);
    bool elem = v < end && v[0] == '>' && digit_at(v + 1, end);
    if (!attr && !elem)
        return true; /* neither reads it */
    const uint8_t *last_nul = NULL;
    for (const uint8_t *q = p; q < end; q++)
        if (*q == 0)
            last_nul = q;
    if (last_nul != NULL && at > last_nul)
        return false; /* past the part pi-heif rewrites */
    if (attr)
        return v + 3 < end && v[3] == '"';
    static const char close[] = "</tiff:Orientation>";
    return at > p && at[-1] == '<' && (size_t)(end - (v + 2)) >= sizeof close - 1 &&
           memcmp(v + 2, close, sizeof close - 1) == 0;
}

bool detfeed__heif_upright(const uint8_t *exif, size_t exif_size, const uint8_t *xmp,
                           size_t xmp_size)
{
    int tags = exif ? exif_orientation_tags(exif, exif_size) : 0;
    if (tags < 0)
        return false;
    if (tags == 1)
        return true; /* pi-heif set it to 1; Pillow reads no XMP then */
    return xmp == NULL || xmp_upright(xmp, xmp_size);
}
