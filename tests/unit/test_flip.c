/*
 * test_flip.c - RandomFlip's pixels (detfeed__flip): every width from 1 to
 * past two of the mirror's chunks, odd and even, left-right and up-down,
 * against a pixel-by-pixel mirror; bytes outside the image stay untouched.
 */
#include "aug/geometry.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static void reference(const uint8_t *src, uint8_t *dst, int w, int h, bool ud, bool lr)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int sy = ud ? h - 1 - y : y, sx = lr ? w - 1 - x : x;
            memcpy(dst + 3 * ((size_t)y * w + x), src + 3 * ((size_t)sy * w + sx), 3);
        }
}

static bool one(int w, int h, bool ud, bool lr, unsigned *seed)
{
    size_t bytes = (size_t)w * h * 3;
    uint8_t *src = malloc(bytes), *want = malloc(bytes), *px = malloc(bytes + 16);
    for (size_t i = 0; i < bytes; i++)
        src[i] = (uint8_t)rand_r(seed);
    memcpy(px, src, bytes);
    memset(px + bytes, 0xA5, 16);
    reference(src, want, w, h, ud, lr);
    detfeed__img im = {.px = px, .w = w, .h = h, .cap = bytes + 16};
    detfeed__inst in = {0};
    detfeed__flip(&im, &in, ud, lr, NULL);
    bool ok = CHECK(memcmp(px, want, bytes) == 0);
    for (int i = 0; i < 16; i++)
        ok &= CHECK_INT(px[bytes + i], 0xA5);
    if (!ok)
        fprintf(stderr, "  w %d h %d ud %d lr %d\n", w, h, ud, lr);
    free(src), free(want), free(px);
    return ok;
}

int main(void)
{
    unsigned seed = 7;
    for (int w = 1; w <= 1100; w += w < 40 ? 1 : 37)
        for (int k = 0; k < 3; k++)
            if (!one(w, 1 + w % 5, k & 1, k >= 1, &seed))
                return tu_finish("test_flip");
    one(513, 512, false, true, &seed); /* one chunk on each side, one pixel between */
    one(512, 3, false, true, &seed);
    return tu_finish("test_flip");
}
