/*
 * verify.c - the loader verifies what it indexes by decoding, as `detfeed
 * check` does, so that an image that cannot be decoded never enters the
 * epoch order (where every sample that drew it, as its own image or as a
 * mosaic or mixup partner, would be replaced).
 *
 * The dataset is indexed from the image headers; then each image is decoded
 * once: the RAM cache's fill decodes the images it holds, and this pass
 * decodes the others (those on demand, and those whose fill failed, again
 * for their message), on `workers` threads. While the disk cache is being
 * written, this pass writes each image it decodes into it, so that building
 * the file costs no decode beyond the verification's; a complete file holds
 * only images that decoded when it was written. The images that fail leave the
 * index and the cache together, reported as check reports them.
 */
#include "loader_internal.h"

#include "data/dataset_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct verifier {
    const detfeed_dataset *ds;
    const detfeed_cache *cache;
    bool fill_disk; /* the disk cache is being written: decode into it */
    char **why;     /* [n]: the codec's message for an image that failed */
    atomic_size_t next;
    atomic_int status; /* the first failure that is not the image's fault */
} verifier;

/* What makes an image unusable (its data, its file or a limit), as opposed
 * to a lack of memory. */
static bool image_fault(int rc)
{
    return rc == DETFEED_ECORRUPT || rc == DETFEED_EFORMAT || rc == DETFEED_EIO ||
           rc == DETFEED_ENOTSUPPORTED || rc == DETFEED_ELIMIT;
}

static void verify_one(verifier *v, detfeed_codec *codec, size_t i)
{
    if (detfeed__cache_holds(v->cache, i))
        return; /* decoded by the fill */
    uint8_t *px = NULL;
    int w, h, rc;
    if (v->fill_disk) { /* decoded once: verified and written into the file */
        const uint8_t *pixels;
        rc = detfeed_cache_get(v->cache, i, codec, &pixels, &w, &h, NULL, NULL, &px);
    } else {
        rc = detfeed__decode_file_limited(codec, detfeed__dataset_limits(v->ds),
                                          detfeed_dataset_image_path(v->ds, i), &px, &w,
                                          &h);
    }
    detfeed_free(px);
    if (rc == DETFEED_OK)
        return;
    int none = DETFEED_OK;
    if (!image_fault(rc)) {
        atomic_compare_exchange_strong(&v->status, &none, rc);
        return;
    }
    const char *msg = detfeed_codec_last_error(codec);
    size_t len = strlen(msg) + 1;
    if ((v->why[i] = malloc(len)) == NULL)
        atomic_compare_exchange_strong(&v->status, &none, DETFEED_ENOMEM);
    else
        memcpy(v->why[i], msg, len);
}

static void *verify_thread(void *arg)
{
    verifier *v = arg;
    detfeed_codec *codec;
    if (detfeed_codec_create(&codec, 0) != DETFEED_OK) {
        int none = DETFEED_OK;
        atomic_compare_exchange_strong(&v->status, &none, DETFEED_ENOMEM);
        return NULL;
    }
    size_t n = detfeed_dataset_size(v->ds);
    for (size_t i; atomic_load(&v->status) == DETFEED_OK &&
                   (i = atomic_fetch_add(&v->next, 1)) < n;)
        verify_one(v, codec, i);
    detfeed_codec_destroy(codec);
    return NULL;
}

/* Decodes every image the cache does not hold on up to `threads` threads;
 * why[i] receives the message of each that fails. */
static int verify_all(verifier *v, int threads)
{
    size_t n = detfeed_dataset_size(v->ds);
    if ((size_t)threads > n)
        threads = n > 0 ? (int)n : 1;
    detfeed__run_threads(threads, verify_thread, v);
    return atomic_load(&v->status);
}

int detfeed__loader_verify(detfeed_loader *l)
{
    size_t n = detfeed_dataset_size(l->ds), bad = 0;
    verifier v = {.ds = l->ds,
                  .cache = l->cache,
                  .fill_disk = l->disk &&
                               detfeed_disk_cache_stat_get(
                                   l->disk, DETFEED_DISK_STATE) == DETFEED_DISK_WRITING,
                  .why = calloc(n ? n : 1, sizeof(char *))};
    if (v.why == NULL)
        return detfeed__fail(&l->msg, DETFEED_ENOMEM, "out of memory");
    atomic_init(&v.next, 0);
    atomic_init(&v.status, DETFEED_OK);
    int rc = verify_all(&v, l->workers);
    for (size_t i = 0; i < n; i++)
        bad += v.why[i] != NULL;
    if (rc != DETFEED_OK)
        detfeed__fail(&l->msg, rc, "verifying the images: %s", detfeed_strerror(rc));
    else if (bad > 0) {
        rc = detfeed__dataset_drop(l->ds, v.why);
        detfeed__cache_drop(l->cache, v.why);
        if (rc != DETFEED_OK)
            detfeed__fail(&l->msg, rc, "%s", detfeed_dataset_last_error(l->ds));
    }
    for (size_t i = 0; i < n; i++)
        free(v.why[i]);
    free(v.why);
    return rc;
}
