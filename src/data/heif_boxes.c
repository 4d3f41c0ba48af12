/*
 * heif_boxes.c - the few boxes of a HEIF that libheif 1.15's API does not
 * tell about: the primary item's type, its HEVC configuration (hvcC: the
 * chroma format, which picks libheif 1.23's conversion) and its
 * transformative properties in order (irot, imir, clap).
 *
 * heif_plugin.c gives libheif chroma planes brought to full size; libheif's
 * grid and transformations on them give what pi-heif's libheif gives on
 * the subsampled planes when every step keeps chroma samples whole: grid
 * tiles, rotated or mirrored images of even size where chroma is
 * subsampled, and clean apertures whose exact left and top edges are
 * whole (even where subsampled: libheif 1.23 upsamples an image cut at an
 * odd edge bilinearly first) and inside the image. A 4:2:2 image turned by
 * 90 or 270 degrees is not read. Everything here is bounds-checked: the
 * file is untrusted (libheif has read it already, so a box that does not
 * parse is a refusal, not a crash).
 */
#include "heif_internal.h"

#include <string.h>

typedef struct span {
    const uint8_t *p;
    uint64_t n;
} span;

/* The box at *at in s: its type and payload; false at the end of s or
 * when the box does not fit. */
static bool next_box(span s, uint64_t *at, char type[4], span *payload)
{
    if (*at + 8 > s.n)
        return false;
    const uint8_t *b = s.p + *at;
    uint64_t size = detfeed__be32(b), head = 8;
    if (size == 1) {
        if (*at + 16 > s.n)
            return false;
        size = (uint64_t)detfeed__be32(b + 8) << 32 | detfeed__be32(b + 12);
        head = 16;
    } else if (size == 0) {
        size = s.n - *at;
    }
    if (size < head || size > s.n - *at)
        return false;
    memcpy(type, b + 4, 4);
    *payload = (span){b + head, size - head};
    *at += size;
    return true;
}

/* The first child of s (from offset `from`) of type `want`. */
static bool child(span s, uint64_t from, const char *want, span *out)
{
    char type[4];
    for (uint64_t at = from; next_box(s, &at, type, out);)
        if (memcmp(type, want, 4) == 0)
            return true;
    return false;
}

/* The k-th child (from 1) of s, with its type. */
static bool nth_child(span s, unsigned k, char type[4], span *out)
{
    uint64_t at = 0;
    for (unsigned i = 1; next_box(s, &at, type, out); i++)
        if (i == k)
            return true;
    return false;
}

/* An unsigned big-endian field of `bytes` (2 or 4) at `at`, if there. */
static bool field(span s, uint64_t at, int bytes, uint32_t *v)
{
    if (at + (uint64_t)bytes > s.n)
        return false;
    *v = bytes == 2 ? detfeed__be16(s.p + at) : detfeed__be32(s.p + at);
    return true;
}

/* The boxes of the meta box the readers below need. */
typedef struct meta {
    span iinf, iref, ipco, ipma;
    uint32_t primary;
    bool has_iref;
} meta;

static bool read_meta(span file, meta *m)
{
    span box, pitm, iprp;
    if (!child(file, 0, "meta", &box) || box.n < 4)
        return false;
    if (!child(box, 4, "pitm", &pitm) || pitm.n < 4 ||
        !field(pitm, 4, pitm.p[0] == 0 ? 2 : 4, &m->primary))
        return false;
    m->has_iref = child(box, 4, "iref", &m->iref);
    return child(box, 4, "iinf", &m->iinf) && m->iinf.n >= 4 &&
           child(box, 4, "iprp", &iprp) && child(iprp, 0, "ipco", &m->ipco) &&
           child(iprp, 0, "ipma", &m->ipma) && m->ipma.n >= 8;
}

/* The item type of `id` from its infe (version 2 or 3). */
static bool item_type(const meta *m, uint32_t id, char type[4])
{
    uint64_t at = m->iinf.p[0] == 0 ? 6 : 8;
    char t[4];
    span infe;
    while (next_box(m->iinf, &at, t, &infe)) {
        uint32_t got;
        if (memcmp(t, "infe", 4) != 0 || infe.n < 4 || infe.p[0] < 2)
            continue;
        int w = infe.p[0] == 2 ? 2 : 4;
        if (field(infe, 4, w, &got) && got == id && 4 + (uint64_t)w + 2 + 4 <= infe.n) {
            memcpy(type, infe.p + 4 + w + 2, 4);
            return true;
        }
    }
    return false;
}

#define MAX_PROPS 32

/* The property indices (into ipco, from 1) associated with `id`, in order. */
static int item_props(const meta *m, uint32_t id, unsigned *props)
{
    span s = m->ipma;
    int idw = s.p[0] < 1 ? 2 : 4, pw = (s.p[3] & 1) ? 2 : 1;
    uint32_t entries;
    uint64_t at = 8;
    if (!field(s, 4, 4, &entries))
        return -1;
    for (uint32_t e = 0; e < entries; e++) {
        uint32_t item;
        if (!field(s, at, idw, &item) || at + (uint64_t)idw + 1 > s.n)
            return -1;
        unsigned count = s.p[at + (uint64_t)idw];
        at += (uint64_t)idw + 1;
        if (at + (uint64_t)count * (uint64_t)pw > s.n)
            return -1;
        if (item == id) {
            if (count > MAX_PROPS)
                return -1;
            for (unsigned k = 0; k < count; k++, at += (uint64_t)pw)
                props[k] =
                    pw == 2 ? detfeed__be16(s.p + at) & 0x7fffu : s.p[at] & 0x7fu;
            return (int)count;
        }
        at += (uint64_t)count * (uint64_t)pw;
    }
    return 0;
}

/* The first property of `id` of type `want`. */
static bool item_prop(const meta *m, uint32_t id, const char *want, span *out)
{
    unsigned props[MAX_PROPS];
    int n = item_props(m, id, props);
    char t[4];
    for (int k = 0; k < n; k++)
        if (nth_child(m->ipco, props[k], t, out) && memcmp(t, want, 4) == 0)
            return true;
    return false;
}

/* ispe's width and height. */
static bool ispe_size(const meta *m, uint32_t id, uint32_t *w, uint32_t *h)
{
    span s;
    return item_prop(m, id, "ispe", &s) && field(s, 4, 4, w) && field(s, 8, 4, h);
}

/* The chroma format and bit depth of an hvc1 item's hvcC. */
static bool hvcc(const meta *m, uint32_t id, detfeed__heif_layout *out)
{
    char t[4];
    span s;
    if (!item_type(m, id, t) || memcmp(t, "hvc1", 4) != 0 ||
        !item_prop(m, id, "hvcC", &s) || s.n < 23)
        return false;
    out->chroma = s.p[16] & 3;
    out->bits = 8 + (s.p[17] & 7);
    return true;
}

/* The size of the image as the transformations go, and where chroma is
 * subsampled. */
typedef struct geom {
    int64_t w, h;
    bool sx, sy;
} geom;

static bool chroma_whole(const geom *g)
{
    return !(g->sx && (g->w & 1)) && !(g->sy && (g->h & 1));
}

/* Whether flipping the image left to right (x) or top to bottom (y) keeps
 * chroma samples whole: an even size where chroma is subsampled. */
static bool flips_whole(const geom *g, bool x, bool y)
{
    return !(x && g->sx && (g->w & 1)) && !(y && g->sy && (g->h & 1));
}

/* irot: turning by 90 degrees (counterclockwise) flips x, by 270 flips y,
 * by 180 both. libheif 1.23 first upsamples 4:2:2 turned by 90 or 270, or
 * by 180 with an odd height, and 4:2:0 where a flip meets an odd size. */
static const char *turn(geom *g, span s, int chroma)
{
    if (s.n < 1)
        return "a damaged irot box";
    unsigned angle = s.p[0] & 3;
    if (angle == 0)
        return NULL;
    if (chroma == 2 && (angle != 2 || (g->h & 1)))
        return "4:2:2 chroma turned by 90 or 270 degrees, or of odd height";
    if (!flips_whole(g, angle != 3, angle != 1))
        return "a rotation of an odd-sized image with subsampled chroma";
    if (angle & 1) {
        int64_t t = g->w;
        g->w = g->h, g->h = t;
    }
    return NULL;
}

/* imir: libheif 1.23 first upsamples 4:2:0 of any odd size and 4:2:2 of an
 * odd width. */
static const char *mirror(const geom *g, int chroma)
{
    bool odd = chroma == 1 ? (g->w & 1) || (g->h & 1) : chroma == 2 && (g->w & 1);
    return odd ? "a mirrored odd-sized image with subsampled chroma" : NULL;
}

/* libheif's clean aperture edge: offset + (size - 1) / 2 - (kept - 1) / 2,
 * required whole; -1 when it is not (or not inside). */
static int64_t clap_edge(int32_t off_num, uint32_t off_den, int64_t size, int64_t kept)
{
    if (off_den == 0 || off_den > INT32_MAX)
        return -1;
    int64_t num = 2 * (int64_t)off_num + (int64_t)off_den * (size - kept);
    int64_t den = 2 * (int64_t)off_den;
    if (num < 0 || num % den != 0 || num / den + kept > size)
        return -1;
    return num / den;
}

static const char *crop(geom *g, span s)
{
    uint32_t v[8];
    for (int i = 0; i < 8; i++)
        if (!field(s, 4 * (uint64_t)i, 4, &v[i]))
            return "a damaged clap box";
    if (v[1] == 0 || v[3] == 0 || v[0] % v[1] || v[2] % v[3] || v[0] / v[1] == 0 ||
        v[2] / v[3] == 0)
        return "a clean aperture of a fractional size";
    int64_t cw = v[0] / v[1], ch = v[2] / v[3];
    int64_t left = clap_edge((int32_t)v[4], v[5], g->w, cw);
    int64_t top = clap_edge((int32_t)v[6], v[7], g->h, ch);
    if (left < 0 || top < 0)
        return "a clean aperture whose edges are not whole pixels inside the image";
    if ((g->sx && (left & 1)) || (g->sy && (top & 1)))
        return "a clean aperture cut at an odd edge of subsampled chroma";
    g->w = cw, g->h = ch;
    return NULL;
}

/* Walks the transformations of image `id` (the primary image or a grid
 * tile) in their order. */
static const char *walk_transforms(const meta *m, uint32_t id, int chroma)
{
    geom g = {0, 0, chroma == 1 || chroma == 2, chroma == 1};
    uint32_t w, h;
    if (!ispe_size(m, id, &w, &h) || w >= (1u << 30) || h >= (1u << 30))
        return "no usable ispe box";
    g.w = w, g.h = h;
    unsigned props[MAX_PROPS];
    int n = item_props(m, id, props);
    if (n < 0)
        return "a damaged ipma box";
    for (int k = 0; k < n; k++) {
        char t[4];
        span s;
        const char *why = NULL;
        if (!nth_child(m->ipco, props[k], t, &s))
            return "a property that is not in its ipco box";
        if (memcmp(t, "irot", 4) == 0)
            why = turn(&g, s, chroma);
        else if (memcmp(t, "imir", 4) == 0)
            why = mirror(&g, chroma);
        else if (memcmp(t, "clap", 4) == 0)
            why = crop(&g, s);
        if (why)
            return why;
    }
    return NULL;
}

/* A grid tile: HEVC coded like the first, of a size that keeps chroma
 * samples whole, its own transformations (a clean aperture, as encoders
 * cut tiles to the grid) as for an image. */
static const char *check_tile(const meta *m, uint32_t id, const detfeed__heif_layout *l)
{
    detfeed__heif_layout t;
    uint32_t w, h;
    if (!hvcc(m, id, &t) || t.chroma != l->chroma || t.bits != l->bits)
        return "grid tiles that are not all HEVC coded alike";
    if (!ispe_size(m, id, &w, &h))
        return "a grid tile without an ispe box";
    geom g = {w, h, l->chroma == 1 || l->chroma == 2, l->chroma == 1};
    if (!chroma_whole(&g))
        return "odd-sized grid tiles with subsampled chroma";
    return walk_transforms(m, id, l->chroma);
}

/* The grid's tiles (its dimg references): each checked, the first one's
 * hvcC into l. */
static const char *grid_tiles(const meta *m, detfeed__heif_layout *l)
{
    if (!m->has_iref || m->iref.n < 4)
        return "a grid without tiles";
    int w = m->iref.p[0] == 0 ? 2 : 4;
    uint64_t at = 4;
    char t[4];
    span r;
    uint32_t from, count, tile = 0;
    while (next_box(m->iref, &at, t, &r)) {
        if (memcmp(t, "dimg", 4) != 0 || !field(r, 0, w, &from) || from != m->primary)
            continue;
        if (!field(r, (uint64_t)w, 2, &count) || count == 0 ||
            (uint64_t)w + 2 + (uint64_t)count * (uint64_t)w > r.n)
            return "a damaged iref box";
        for (uint32_t k = 0; k < count; k++) {
            field(r, (uint64_t)w + 2 + (uint64_t)k * (uint64_t)w, w, &tile);
            if (k == 0 && !hvcc(m, tile, l))
                return "a grid of tiles that are not HEVC";
            if (k == 0)
                l->tile = tile;
            const char *why = check_tile(m, tile, l);
            if (why)
                return why;
        }
        return NULL;
    }
    return "a grid without tiles";
}

const char *detfeed__heif_layout_read(const uint8_t *data, size_t size,
                                      detfeed__heif_layout *out)
{
    meta m;
    char type[4];
    if (!read_meta((span){data, size}, &m) || !item_type(&m, m.primary, type))
        return "boxes detfeed cannot walk";
    const char *why = NULL;
    out->tile = 0;
    if (memcmp(type, "grid", 4) == 0)
        why = grid_tiles(&m, out);
    else if (!hvcc(&m, m.primary, out))
        return "an image that is neither HEVC nor a grid of HEVC tiles";
    return why ? why : walk_transforms(&m, m.primary, out->chroma);
}
