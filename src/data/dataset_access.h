/*
 * dataset_access.h - what the layers above data (aug, feed) use of an open
 * dataset and its caches, without their layouts (internal): aug reads an
 * image's labels and pixels, the loader plans the RAM cache, verifies the
 * index by decoding and drops what fails. The public getters
 * (detfeed_dataset_size, _image_path, _image_size, _flip_idx, ...) answer
 * the rest.
 */
#ifndef DETFEED_DATASET_ACCESS_H
#define DETFEED_DATASET_ACCESS_H

#include "core/clock.h"
#include "core/internal.h"
#include "core/progress.h"

/* ---- an image's labels and pixels (aug) ---- */

/* One image's labels as the index holds them: normalized, boxes as centre
 * x, y, w, h; valid while the dataset is open. */
typedef struct detfeed__label_view {
    int n, nkpt;
    const float *cls, *boxes, *kpts; /* [n], [n][4], [n][nkpt][3] or NULL */
    const int *seg_start;            /* [n + 1] polygon offsets, or NULL */
    const float *seg_xy;             /* polygon points, normalized */
} detfeed__label_view;

/* Image i's labels (i < detfeed_dataset_size; else all zero). */
detfeed__label_view detfeed__dataset_label_view(const detfeed_dataset *ds, size_t i);

/* detfeed_cache_get with an image loaded on demand timed on `clock`
 * (DETFEED_STAGE_DECODE and DETFEED_STAGE_RESIZE; NULL: not timed). */
int detfeed__cache_get(const detfeed_cache *cache, size_t i, detfeed_codec *codec,
                       const uint8_t **pixels, int *width, int *height, int *orig_width,
                       int *orig_height, uint8_t **owned, detfeed__clock *clock);

/* ---- the RAM cache's budget (the loader's open) ---- */

/* What detfeed_cache_create would admit under `budget`: the bytes and the
 * number of images (first fit in index order; images of unknown size are
 * never admitted). UINT64_MAX gives all that can be cached. */
void detfeed__cache_plan(const detfeed_dataset *ds, int imgsz, uint64_t budget,
                         uint64_t *bytes, int64_t *images);

/*
 * The budget of cache_bytes "ram": Ultralytics' check_cache_ram caches when
 * need * (1 + margin_percent / 100) <= available (margin 100 in 8.4, 50 in
 * 8.3); then the budget is `need` (all), else what fits in available / (1 +
 * margin), floor(available * 100 / (100 + margin)), filled first fit.
 * Both are min(need, that floor). Exact in integers, no overflow.
 */
uint64_t detfeed__cache_ram_budget(uint64_t need, uint64_t available,
                                   unsigned margin_percent);

/* The memory available now, as psutil.virtual_memory().available reads it
 * on Linux: /proc/meminfo's MemAvailable; where that is missing, the free
 * pages (sysconf). DETFEED_ENOTSUPPORTED, with msg, when neither is known. */
int detfeed__mem_available(uint64_t *bytes, detfeed__msg *msg);

/* ---- verification by decoding (the loader's open) ---- */

/* Image i of `ds` decoded as its file holds it (oriented, not resized),
 * under the dataset's limits whatever the codec's own are; the codec's
 * message names the file on failure. *pixels is the caller's
 * (detfeed_free). */
int detfeed__decode_image(const detfeed_dataset *ds, size_t i, detfeed_codec *codec,
                          uint8_t **pixels, int *width, int *height);

/* Whether image i is held in the cache's arena (filled, not on demand) or
 * in the disk cache behind it. */
bool detfeed__cache_holds(const detfeed_cache *cache, size_t i);

/* The RAM cache's arena, read-only once filled (detfeed_cache_fill): its
 * first byte and size; NULL and 0 before the fill or when it holds nothing.
 * The device recipe route mirrors it in device memory. */
const uint8_t *detfeed__cache_arena(const detfeed_cache *cache, uint64_t *bytes);

/* Image i's place in the arena (its byte offset and load size) when the
 * fill cached it; false otherwise (on demand, failed, or in a disk cache
 * only). */
bool detfeed__cache_place(const detfeed_cache *cache, size_t i, uint64_t *offset,
                          int *width, int *height);

/* Whether the cache's fill tried image i and failed (it is then decoded on
 * demand, failing again). */
bool detfeed__cache_fill_failed(const detfeed_cache *cache, size_t i);

/*
 * Takes out of an open index the images that could not be decoded, as
 * verification by decoding would have skipped them: image i goes when
 * why[i] is not NULL (the codec's message, "path: reason"), counted in
 * DETFEED_STAT_CORRUPT with a problem (the file, line 0, the reason, as
 * `detfeed check` reports it; under DETFEED_POLICY_FAIL the first one is
 * the error returned, with its message). The images after it move down;
 * the counts of the usable images are recounted. DETFEED_EFORMAT, with a
 * message, when none is left.
 */
int detfeed__dataset_drop(detfeed_dataset *ds, char *const *why);

/* Where detfeed_dataset_open reports its progress (NULL: the dataset's
 * own, which detfeed_dataset_progress reads), e.g. a loader's. */
void detfeed__dataset_report_to(detfeed_dataset *ds, detfeed__progress *p);
/* Where detfeed_cache_fill reports its progress (NULL: nowhere). */
void detfeed__cache_report_to(detfeed_cache *cache, detfeed__progress *p);

/* After detfeed__dataset_drop(ds, drop) on the cache's dataset: the same
 * images leave the cache (drop[i] != NULL), the others move down with it.
 * DETFEED_CACHE_FAILED still counts the fill's failures. */
void detfeed__cache_drop(detfeed_cache *cache, char *const *drop);

/* After the dataset lost images (detfeed__dataset_drop, in order), before
 * any thread uses the cache: dataset indices map to the file's records by
 * path, and a file being written leaves the lost images out. The file
 * still describes the dataset as indexed, so that the next open, which
 * indexes the same images, finds it valid. */
int detfeed__disk_sync(detfeed_disk_cache *dc);

#endif /* DETFEED_DATASET_ACCESS_H */
