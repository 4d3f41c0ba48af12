/*
 * test_cache.c - the RAM cache: admission under a budget, a parallel fill,
 * cached bytes equal to decoding and resizing on demand, and images that go
 * bad after indexing counted, not crashing.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void make_images(int n)
{
    detfeed_codec *c;
    detfeed_codec_create(&c, 0);
    char p[128];
    snprintf(p, sizeof p, "%s/images", root);
    mkdir(p, 0755);
    for (int k = 0; k < n; k++) {
        int w = 40 + 37 * k, h = 30 + 23 * k; /* long side above and below 96 */
        uint8_t *px = malloc((size_t)w * h * 3);
        for (int i = 0; i < w * h * 3; i++)
            px[i] = (uint8_t)(i * 7 + k * 31 + (i / (w * 3)) * 3);
        snprintf(p, sizeof p, "%s/images/im%02d.png", root, k);
        CHECK_INT(detfeed_codec_write_png(c, p, px, (size_t)w * 3, w, h), 0);
        free(px);
    }
    detfeed_codec_destroy(c);
}

/* Image i decoded and resized by hand: the reference for the cache. */
static uint8_t *reference(const detfeed_dataset *ds, size_t i, int imgsz, int *w,
                          int *h)
{
    detfeed_codec *c;
    detfeed_codec_create(&c, 0);
    uint8_t *px;
    int ow, oh;
    CHECK_INT(
        detfeed_codec_decode_file(c, detfeed_dataset_image_path(ds, i), &px, &ow, &oh),
        0);
    detfeed_load_size(ow, oh, imgsz, w, h);
    uint8_t *out = malloc((size_t)*w * *h * 3);
    CHECK_INT(detfeed_resize_linear(px, (size_t)ow * 3, ow, oh, out, (size_t)*w * 3, *w,
                                    *h, 3),
              0);
    detfeed_free(px);
    detfeed_codec_destroy(c);
    return out;
}

static void test_fill_and_get(const detfeed_dataset *ds, int imgsz)
{
    size_t n = detfeed_dataset_size(ds);
    /* A budget of exactly the first three images: they are admitted (first
     * fit, in index order) and nothing else fits in what is left (0). */
    uint64_t budget = 0;
    for (size_t i = 0; i < 3; i++) {
        int w, h, lw, lh;
        detfeed_dataset_image_size(ds, i, &w, &h);
        detfeed_load_size(w, h, imgsz, &lw, &lh);
        budget += (uint64_t)lw * lh * 3;
    }
    detfeed_cache *cache;
    CHECK_INT(detfeed_cache_create(&cache, ds, imgsz, budget, 0), 0);
    CHECK_INT(detfeed_cache_fill(cache, 2), 0);
    CHECK_INT(detfeed_cache_fill(cache, 2), DETFEED_EBADSTATE);
    int64_t held = detfeed_cache_stat_get(cache, DETFEED_CACHE_IMAGES);
    CHECK_INT(held, 3);
    CHECK_INT(detfeed_cache_stat_get(cache, DETFEED_CACHE_BYTES), (int64_t)budget);
    CHECK_INT(detfeed_cache_stat_get(cache, DETFEED_CACHE_ON_DEMAND),
              (int64_t)n - held);
    CHECK_INT(detfeed_cache_stat_get(cache, DETFEED_CACHE_FAILED), 0);
    detfeed_codec *codec;
    detfeed_codec_create(&codec, 0);
    int cached = 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *px;
        uint8_t *owned;
        int w, h, ow, oh, rw, rh;
        CHECK_INT(detfeed_cache_get(cache, i, codec, &px, &w, &h, &ow, &oh, &owned), 0);
        uint8_t *ref = reference(ds, i, imgsz, &rw, &rh);
        CHECK(w == rw && h == rh && memcmp(px, ref, (size_t)w * h * 3) == 0);
        CHECK(w == imgsz || h == imgsz);
        cached += owned == NULL;
        detfeed_free(owned);
        free(ref);
    }
    CHECK_INT(cached, held);
    detfeed_codec_destroy(codec);
    detfeed_cache_destroy(cache);
}

static void test_bad(const detfeed_dataset *ds)
{
    detfeed_cache *cache;
    CHECK_INT(detfeed_cache_create(&cache, NULL, 640, 0, 0), DETFEED_EINVAL);
    CHECK_INT(detfeed_cache_create(&cache, ds, 16, 0, 0), DETFEED_EINVAL);
    CHECK_INT(detfeed_cache_create(&cache, ds, 640, 0, 1), DETFEED_EINVAL);
    /* Everything cached, then one file damaged after indexing. */
    CHECK_INT(detfeed_cache_create(&cache, ds, 96, UINT64_MAX / 2, 0), 0);
    char p[128];
    snprintf(p, sizeof p, "%s/images/im01.png", root);
    truncate(p, 20);
    CHECK_INT(detfeed_cache_fill(cache, 0), DETFEED_EINVAL);
    CHECK(strstr(detfeed_cache_last_error(cache), "fill: threads 0") != NULL);
    CHECK_INT(detfeed_cache_fill(cache, 3), 0);
    CHECK_INT(detfeed_cache_stat_get(cache, DETFEED_CACHE_FAILED), 1);
    CHECK_INT(detfeed_cache_fill(cache, 3), DETFEED_EBADSTATE);
    CHECK(strstr(detfeed_cache_last_error(cache), "filled already") != NULL);
    CHECK_INT(detfeed_cache_set_disk(cache, NULL), DETFEED_EBADSTATE);
    CHECK(strstr(detfeed_cache_last_error(cache), "set_disk: the cache is filled") !=
          NULL);
    detfeed_codec *codec;
    detfeed_codec_create(&codec, 0);
    const uint8_t *px;
    uint8_t *owned;
    int w, h;
    CHECK(detfeed_cache_get(cache, 1, codec, &px, &w, &h, NULL, NULL, &owned) < 0);
    CHECK(strstr(detfeed_codec_last_error(codec), "im01.png") != NULL);
    CHECK_INT(detfeed_cache_get(cache, 99, codec, &px, &w, &h, NULL, NULL, &owned),
              DETFEED_EINVAL);
    /* the cache is shared by threads: the message is the caller's codec's */
    CHECK(strstr(detfeed_codec_last_error(codec),
                 "cache_get: index 99 is not below the cache's 7 images") != NULL);
    detfeed_codec_destroy(codec);
    detfeed_cache_destroy(cache);
}

int main(void)
{
    if (!tu_temp_dir(root, sizeof root, "cache"))
        return tu_finish("test_cache");
    make_images(7);
    detfeed_dataset *ds;
    detfeed_dataset_create(&ds, 0);
    char src[128];
    snprintf(src, sizeof src, "%s/images", root);
    if (CHECK_INT(detfeed_dataset_open(ds, src), 0)) {
        test_fill_and_get(ds, 96);
        test_fill_and_get(ds, 160);
        test_bad(ds);
    }
    detfeed_dataset_destroy(ds);
    CHECK(tu_remove_tree(root));
    return tu_finish("test_cache");
}
