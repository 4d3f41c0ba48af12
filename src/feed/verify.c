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
 *
 * The verdicts are kept in the verification record (data/verify_record.h,
 * the loader's verify_record setting): an image whose file the record
 * describes as it is now, under the same limits and decoders, takes its
 * verdict from there instead of being decoded. Before decoding the others
 * the record's lock is taken (other processes opening the same dataset
 * wait for this one's verdicts instead of decoding too), and afterwards the
 * record is rewritten unless it already said exactly that.
 */
#include "loader_internal.h"

#include "data/dataset_access.h"
#include "data/verify_record.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct verifier {
    const detfeed_dataset *ds;
    const detfeed_cache *cache;
    bool fill_disk; /* the disk cache is being written: decode into it */
    char **why;     /* [n]: the codec's message for an image that failed */
    bool *need;     /* [n]: to decode (no verdict from a cache or the record) */
    atomic_size_t next;
    atomic_int status; /* the first failure that is not the image's fault */
    detfeed__progress *progress;
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
    if (!v->need[i])
        return; /* decoded by the fill, held by the disk cache, or recorded */
    detfeed__progress_add(v->progress, 1);
    uint8_t *px = NULL;
    int w, h, rc;
    if (v->fill_disk) { /* decoded once: verified and written into the file */
        const uint8_t *pixels;
        rc = detfeed_cache_get(v->cache, i, codec, &pixels, &w, &h, NULL, NULL, &px);
    } else {
        rc = detfeed__decode_image(v->ds, i, codec, &px, &w, &h);
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

/* Decodes the `n` images marked in need[] on up to `threads` threads;
 * why[i] receives the message of each that fails. */
static int verify_all(verifier *v, int threads, int64_t n)
{
    if (n == 0)
        return DETFEED_OK;
    if (threads > n)
        threads = (int)n;
    detfeed__run_threads(threads, "detfeed-verify", verify_thread, v);
    return atomic_load(&v->status);
}

/* What each image needs: a verdict from the caches (the RAM cache's fill
 * decoded it, or the disk cache holds it), from the record (why[i] gets
 * the message of one that failed), or decoding here (need[i]). Counts
 * into c: decoded here, from the record, from the caches. */
static void plan(detfeed_loader *l, verifier *v, int64_t c[3])
{
    size_t n = detfeed_dataset_size(l->ds);
    c[0] = c[1] = c[2] = 0;
    for (size_t i = 0; i < n; i++) {
        free(v->why[i]);
        v->why[i] = NULL;
        v->need[i] = false;
        if (detfeed__cache_holds(l->cache, i)) {
            c[2]++;
            continue;
        }
        char *msg = NULL;
        detfeed__verdict d = l->vrec && !v->fill_disk
                                 ? detfeed__vrec_verdict(l->vrec, i, &msg)
                                 : DETFEED__VERDICT_UNKNOWN;
        /* a fill that failed says the file is not what the record saw */
        if (d == DETFEED__VERDICT_OK && detfeed__cache_fill_failed(l->cache, i))
            d = DETFEED__VERDICT_UNKNOWN;
        v->why[i] = msg;
        v->need[i] = d == DETFEED__VERDICT_UNKNOWN;
        c[v->need[i] ? 0 : 1]++;
    }
}

/* The verdicts into the record, its state, path and note into the loader,
 * after a pass that succeeded. */
static void record(detfeed_loader *l, char *const *why)
{
    int64_t *c = l->verify_stats;
    int64_t counts[3] = {c[DETFEED_VERIFY_STAT_DECODED], c[DETFEED_VERIFY_STAT_REUSED],
                         c[DETFEED_VERIFY_STAT_CACHED]};
    c[DETFEED_VERIFY_STAT_RECORD] = detfeed__vrec_finish(l->vrec, why, counts);
    const char *path = detfeed__vrec_path(l->vrec);
    free(l->verify_used);
    l->verify_used = path ? malloc(strlen(path) + 1) : NULL;
    if (l->verify_used)
        strcpy(l->verify_used, path);
    snprintf(l->verify_note, sizeof l->verify_note, "%s", detfeed__vrec_note(l->vrec));
}

int detfeed__loader_verify_prepare(detfeed_loader *l)
{
    if (l->verify_mode == DETFEED__RECORD_NONE) {
        snprintf(l->verify_note, sizeof l->verify_note,
                 "verify_record none: every image decoded, nothing recorded");
        return DETFEED_OK;
    }
    if (detfeed_dataset_size(l->ds) == 0)
        return DETFEED_OK;
    int rc = detfeed__vrec_open(&l->vrec, l->ds, l->verify_path);
    return rc == DETFEED_OK ? rc : detfeed__fail(&l->msg, rc, "out of memory");
}

/* Decodes what has no verdict, taking the record's lock first (and the
 * verdicts another process recorded meanwhile). */
static int decode_unknown(detfeed_loader *l, verifier *v)
{
    int64_t *c = l->verify_stats;
    int64_t counts[3];
    plan(l, v, counts);
    if (l->vrec && counts[0] > 0 && !v->fill_disk) {
        detfeed__vrec_lock(l->vrec);
        plan(l, v, counts);
    }
    c[DETFEED_VERIFY_STAT_DECODED] = counts[0];
    c[DETFEED_VERIFY_STAT_REUSED] = counts[1];
    c[DETFEED_VERIFY_STAT_CACHED] = counts[2];
    detfeed__progress_begin(&l->progress, "check", (uint64_t)counts[0]);
    int rc = verify_all(v, l->workers, counts[0]);
    detfeed__progress_end(&l->progress);
    return rc;
}

int detfeed__loader_verify(detfeed_loader *l)
{
    size_t n = detfeed_dataset_size(l->ds), bad = 0;
    verifier v = {.ds = l->ds,
                  .progress = &l->progress,
                  .cache = l->cache,
                  .fill_disk = l->disk &&
                               detfeed_disk_cache_stat_get(
                                   l->disk, DETFEED_DISK_STATE) == DETFEED_DISK_WRITING,
                  .why = calloc(n ? n : 1, sizeof(char *)),
                  .need = calloc(n ? n : 1, sizeof(bool))};
    if (v.why == NULL || v.need == NULL) {
        free(v.why);
        free(v.need);
        return detfeed__fail(&l->msg, DETFEED_ENOMEM, "out of memory");
    }
    atomic_init(&v.next, 0);
    atomic_init(&v.status, DETFEED_OK);
    l->verify_stats[DETFEED_VERIFY_STAT_IMAGES] = (int64_t)n;
    int rc = decode_unknown(l, &v);
    for (size_t i = 0; i < n; i++)
        bad += v.why[i] != NULL;
    l->verify_stats[DETFEED_VERIFY_STAT_FAILED] = (int64_t)bad;
    if (rc == DETFEED_OK && l->vrec)
        record(l, v.why);
    detfeed__vrec_destroy(l->vrec); /* and its lock, whatever happened */
    l->vrec = NULL;
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
    free(v.need);
    return rc;
}

/* ---- the setting and what the loader reports ----------------------------- */

int detfeed_loader_set_verify_record(detfeed_loader *l, const char *value)
{
    if (l == NULL)
        return DETFEED_EINVAL;
    if (l->opened)
        return detfeed__fail(
            &l->msg, DETFEED_EBADSTATE,
            "verify_record: settings are fixed once the loader is open");
    int mode = value == NULL || strcmp(value, "auto") == 0 ? DETFEED__RECORD_AUTO
               : strcmp(value, "none") == 0                ? DETFEED__RECORD_NONE
                                                           : DETFEED__RECORD_PATH;
    if (mode == DETFEED__RECORD_PATH && strchr(value, '/') == NULL)
        return detfeed__fail(&l->msg, DETFEED_EINVAL,
                             "verify_record: '%s' is not auto, none or a file path (a "
                             "path holds a '/': ./%s in the working folder)",
                             value, value);
    if (mode == DETFEED__RECORD_PATH && value[strlen(value) - 1] == '/')
        return detfeed__fail(&l->msg, DETFEED_EINVAL,
                             "verify_record: '%s' names a folder; name a file in it",
                             value);
    char *copy = NULL;
    if (mode == DETFEED__RECORD_PATH && (copy = malloc(strlen(value) + 1)) == NULL)
        return detfeed__fail(&l->msg, DETFEED_ENOMEM, "out of memory");
    if (copy)
        strcpy(copy, value);
    free(l->verify_path);
    l->verify_path = copy;
    l->verify_mode = mode;
    return DETFEED_OK;
}

int64_t detfeed_loader_verify_stat(const detfeed_loader *l, detfeed_verify_stat stat)
{
    if (l == NULL || (unsigned)stat > DETFEED_VERIFY_STAT_FAILED)
        return -1;
    return l->verify_stats[stat];
}

const char *detfeed_loader_verify_path(const detfeed_loader *l)
{
    return l ? l->verify_used : NULL;
}

const char *detfeed_loader_verify_note(const detfeed_loader *l)
{
    return l ? l->verify_note : "";
}

void detfeed__loader_verify_free(detfeed_loader *l)
{
    detfeed__vrec_destroy(l->vrec);
    free(l->verify_path);
    free(l->verify_used);
}
