/*
 * disk_cache.h - the disk cache as the RAM cache uses it (internal): look
 * an image up in the file, offer it what was decoded. The loader's call
 * (detfeed__disk_sync) is in dataset_access.h.
 */
#ifndef DETFEED_DISK_CACHE_H
#define DETFEED_DISK_CACHE_H

#include "dataset_internal.h"

#include "core/clock.h"

/* The dataset and imgsz a disk cache was opened for. */
const detfeed_dataset *detfeed__disk_dataset(const detfeed_disk_cache *dc, int *imgsz);

/* Image i from the file into dst, which holds width * height * 3 bytes
 * (its load size): true when the file holds it at that size and it was
 * read whole with its checksum matching (counted as a hit). False when the
 * file does not hold it (yet), or when it was found damaged now: cut
 * short, changed or unreadable (counted, with a line for
 * detfeed_disk_cache_damage; this process then decodes it instead). */
bool detfeed__disk_read(detfeed_disk_cache *dc, size_t i, uint8_t *dst, int width,
                        int height, int *ow, int *oh);

/* Image i from the file as detfeed__disk_read reads it, into a new buffer
 * *pixels (released with free) with its sizes; the read and the check are
 * timed on `clock` (NULL: not timed). */
bool detfeed__disk_lookup(detfeed_disk_cache *dc, size_t i, uint8_t **pixels, int *w,
                          int *h, int *ow, int *oh, detfeed__clock *clock);

/* Whether the file holds image i (not counted as a hit, nothing read): it
 * decoded under the dataset's limits when written, its record has not
 * changed since, and this process has not found its pixels damaged. */
bool detfeed__disk_holds(const detfeed_disk_cache *dc, size_t i);

/* Image i as this process decoded it (counted as decoded): written into the
 * file when this process writes it and no other thread has; sizes that
 * differ from the index's leave it out. */
void detfeed__disk_offer(detfeed_disk_cache *dc, size_t i, const uint8_t *pixels, int w,
                         int h, int ow, int oh);

/* Image i failed to decode with status rc: a file being written leaves it
 * out (except for ENOMEM, which may pass). */
void detfeed__disk_failed(detfeed_disk_cache *dc, size_t i, int rc);

#endif /* DETFEED_DISK_CACHE_H */
