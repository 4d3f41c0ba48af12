/*
 * heif_color.c - a HEIF image's YCbCr planes to BGR, with the arithmetic
 * libheif 1.23.0 (pi-heif 1.4.0's) applies when pi-heif asks it for 8-bit
 * interleaved RGB (RGBA with alpha, whose colour bytes are the same) with
 * its default conversion options (bilinear chroma upsampling preferred, not
 * required) and convert_hdr_to_8bit.
 *
 * libheif picks the cheapest chain of conversion steps; for the images
 * detfeed reads that chain is one of (measured against pi-heif by
 * tests/oracle/test_heif_oracle.py):
 *
 * - 4:2:0, full range: more than 8 bits first shifted right to 8 (no
 *   rounding; 16-bit samples in host order), then a fixed-point step with
 *   the chroma of each 2x2 block taken as it is (nearest neighbour, no
 *   interpolation): R = Y + ((rc * Cr' + 128) >> 8) with Cr' = Cr - 128
 *   and the coefficients rounded to 1/256ths (lround(256 * c)), G and B
 *   alike, clamped to 0..255;
 * - 4:2:2, 4:4:4, or limited range: a float step at the samples' own
 *   depth (libheif ties the costs of converting first and shifting first,
 *   and its search takes the conversion), chroma nearest neighbour: y, cb,
 *   cr as floats (cb, cr less half the range); limited range first takes
 *   y = (y - 16 << (bits - 8)) * 1.1689f, cb *= 1.1429f, cr *= 1.1429f;
 *   then R = y + rc * cr, G = y + gb * cb + gc * cr (added left to right),
 *   B = y + bb * cb, each rounded as (int)(v + 0.5f) and clamped to the
 *   depth's range, then shifted right to 8 bits; all in single precision,
 *   unfused;
 * - matrix 0 (GBR, as lossless files are written), full range: G = Y,
 *   B = Cb, R = Cr;
 * - monochrome: gray, Y shifted to 8 bits; without alpha and of more than
 *   8 bits, pi-heif gives Pillow mode I;16 (samples shifted up to 16 bits)
 *   and convert("RGB") clamps each at 255.
 * The coefficients come from the nclx matrix: Kr, Kb of BT.709 (1), BT.601
 * (5, 6), FCC (4), SMPTE 240M (7) or BT.2020 (9), rc = 2 * (1 - Kr), gb =
 * 2 * Kb * (1 - Kb) / (Kb + Kr - 1), gc = 2 * Kr * (1 - Kr) / (Kb + Kr - 1),
 * bb = 2 * (1 - Kb) in float; unspecified (2) takes the constants 1.402,
 * -0.344136, -0.714136, 1.772.
 */
#include "heif_internal.h"

#include <math.h>
#include <string.h>

typedef struct coeffs {
    float r_cr, g_cb, g_cr, b_cb;
} coeffs;

static bool kr_kb(int matrix, float *kr, float *kb)
{
    switch (matrix) {
    case 1:
        *kr = 0.2126f, *kb = 0.0722f;
        return true;
    case 4:
        *kr = 0.30f, *kb = 0.11f;
        return true;
    case 5:
    case 6:
        *kr = 0.299f, *kb = 0.114f;
        return true;
    case 7:
        *kr = 0.212f, *kb = 0.087f;
        return true;
    case 9:
        *kr = 0.2627f, *kb = 0.0593f;
        return true;
    default:
        return false;
    }
}

static coeffs coefficients(int matrix)
{
    float kr, kb;
    if (!kr_kb(matrix, &kr, &kb))
        return (coeffs){1.402f, -0.344136f, -0.714136f, 1.772f};
    coeffs c;
    c.r_cr = 2.0f * (-kr + 1.0f);
    c.g_cb = 2.0f * kb * (-kb + 1.0f) / (kb + kr - 1.0f);
    c.g_cr = 2.0f * kr * (-kr + 1.0f) / (kb + kr - 1.0f);
    c.b_cb = 2.0f * (-kb + 1.0f);
    return c;
}

static bool fixed_point(const detfeed__heif_planes *p, const detfeed__heif_nclx *n)
{
    return p->chroma == 1 && n->full_range && n->matrix != 0;
}

const char *detfeed__heif_color_refusal(const detfeed__heif_planes *p,
                                        const detfeed__heif_nclx *n)
{
    if (p->bits < 8 || p->bits > 12)
        return "a bit depth other than 8 to 12";
    if (p->chroma == 0)
        return NULL;
    float kr, kb;
    if (n->matrix != 0 && n->matrix != 2 && !kr_kb(n->matrix, &kr, &kb))
        return "a colour matrix other than BT.601, BT.709, BT.2020 (non-constant "
               "luminance), FCC, SMPTE 240M, GBR or unspecified";
    if (n->matrix == 0 && !n->full_range)
        return "GBR in limited range";
    if (p->bits > 8 && n->matrix == 0)
        return "GBR of more than 8 bits";
    return NULL;
}

/* Sample (x, y) of a plane, shifted to 8 bits when `down` (else at its
 * own depth). */
static inline int sample(const uint8_t *plane, size_t stride, int bits, uint32_t x,
                         uint32_t y, bool down)
{
    const uint8_t *row = plane + (size_t)y * stride;
    if (bits == 8)
        return row[x];
    uint16_t v; /* libheif's samples above 8 bits: host order */
    memcpy(&v, row + 2 * (size_t)x, 2);
    return down ? v >> (bits - 8) : v;
}

static inline uint8_t clamp_u8(int v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* (v + 128) >> 8 with the shift rounding toward minus infinity, as the
 * arithmetic shift of libheif's build does. */
static inline int scaled(int v)
{
    v += 128;
    return v >= 0 ? v >> 8 : -((-v + 255) >> 8);
}

static void to_bgr_fixed(const detfeed__heif_planes *p, coeffs c, uint8_t *out)
{
    int rc = (int)lroundf(256.0f * c.r_cr), gc = (int)lroundf(256.0f * c.g_cr);
    int gb = (int)lroundf(256.0f * c.g_cb), bb = (int)lroundf(256.0f * c.b_cb);
    for (uint32_t y = 0; y < p->height; y++)
        for (uint32_t x = 0; x < p->width; x++, out += 3) {
            int yv = sample(p->y, p->y_stride, p->bits, x, y, true);
            int cb = sample(p->cb, p->cb_stride, p->bits, x, y, true) - 128;
            int cr = sample(p->cr, p->cr_stride, p->bits, x, y, true) - 128;
            out[2] = clamp_u8(yv + scaled(rc * cr));
            out[1] = clamp_u8(yv + scaled(gb * cb + gc * cr));
            out[0] = clamp_u8(yv + scaled(bb * cb));
        }
}

/* libheif's rounding of a float sample: (int)(v + 0.5f), clamped to
 * 0..max. */
static inline int round_float(float v, int max)
{
    int32_t x = (int32_t)(v + 0.5f);
    return x < 0 ? 0 : x > max ? max : x;
}

/* The float step at the planes' own depth (half = 2^(bits-1), the limited
 * range offset 16 << (bits - 8), clamped to 2^bits - 1), then shifted to
 * 8 bits. */
static void to_bgr_float(const detfeed__heif_planes *p, const detfeed__heif_nclx *n,
                         coeffs c, uint8_t *out)
{
    int half = 1 << (p->bits - 1), max = (1 << p->bits) - 1, down = p->bits - 8;
    float offset = (float)(16 << down);
    for (uint32_t y = 0; y < p->height; y++)
        for (uint32_t x = 0; x < p->width; x++, out += 3) {
            float yv = (float)sample(p->y, p->y_stride, p->bits, x, y, false);
            float cb =
                (float)(sample(p->cb, p->cb_stride, p->bits, x, y, false) - half);
            float cr =
                (float)(sample(p->cr, p->cr_stride, p->bits, x, y, false) - half);
            if (!n->full_range) {
                yv = (yv - offset) * 1.1689f;
                cb = cb * 1.1429f;
                cr = cr * 1.1429f;
            }
            out[2] = (uint8_t)(round_float(yv + c.r_cr * cr, max) >> down);
            out[1] =
                (uint8_t)(round_float(yv + c.g_cb * cb + c.g_cr * cr, max) >> down);
            out[0] = (uint8_t)(round_float(yv + c.b_cb * cb, max) >> down);
        }
}

static void to_bgr_gbr(const detfeed__heif_planes *p, uint8_t *out)
{
    for (uint32_t y = 0; y < p->height; y++)
        for (uint32_t x = 0; x < p->width; x++, out += 3) {
            out[0] = p->cb[(size_t)y * p->cb_stride + x];
            out[1] = p->y[(size_t)y * p->y_stride + x];
            out[2] = p->cr[(size_t)y * p->cr_stride + x];
        }
}

/* Gray: Y shifted to 8 bits; or, for Pillow's I;16 (pi-heif shifts the
 * samples up to 16 bits, convert("RGB") clamps them at 255), the sample
 * shifted up and clamped. */
static void to_bgr_gray(const detfeed__heif_planes *p, uint8_t *out)
{
    for (uint32_t y = 0; y < p->height; y++)
        for (uint32_t x = 0; x < p->width; x++, out += 3) {
            int v = sample(p->y, p->y_stride, p->bits, x, y, !p->i16);
            if (p->i16)
                v = clamp_u8(v << (16 - p->bits));
            out[0] = out[1] = out[2] = (uint8_t)v;
        }
}

void detfeed__heif_to_bgr(const detfeed__heif_planes *p, const detfeed__heif_nclx *n,
                          uint8_t *out)
{
    if (p->chroma == 0)
        to_bgr_gray(p, out);
    else if (n->matrix == 0)
        to_bgr_gbr(p, out);
    else if (fixed_point(p, n))
        to_bgr_fixed(p, coefficients(n->matrix), out);
    else
        to_bgr_float(p, n, coefficients(n->matrix), out);
}
