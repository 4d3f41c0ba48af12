/*
 * recent.h - the images decoded most recently, shared by the worker threads
 * (internal). With partners from a window of recent samples
 * (partner_window) a sample's partners are images that were decoded a
 * moment ago for the samples before it; this store keeps them, so that a
 * sample without a RAM cache decodes about one new image. It holds the
 * same load-size bytes the decoder gives, so what it serves is exact.
 */
#ifndef DETFEED_RECENT_H
#define DETFEED_RECENT_H

#include "core/internal.h"

typedef struct detfeed__recent detfeed__recent;

/* A store of at most `capacity` (>= 1) images. */
int detfeed__recent_create(detfeed__recent **out, size_t capacity);
void detfeed__recent_destroy(detfeed__recent *r);

/* A held image: its pixels (load size w x h) and its size before resizing. */
typedef struct detfeed__held {
    const uint8_t *px;
    int w, h, ow, oh;
} detfeed__held;

/* Image `index` when the store has it: true, *img filled and held until
 * detfeed__recent_put. */
bool detfeed__recent_get(detfeed__recent *r, uint64_t index, detfeed__held *img);

/* Keeps image `index`, decoded into `px` (malloc'ed; the store takes it
 * when it returns true, evicting the least recently used image that no one
 * holds, and the image is then held as by detfeed__recent_get). False when
 * every image is held or the index is there already: px stays the
 * caller's. */
bool detfeed__recent_add(detfeed__recent *r, uint64_t index, uint8_t *px,
                         const detfeed__held *img);

/* Lets go of an image held by detfeed__recent_get or _add. */
void detfeed__recent_put(detfeed__recent *r, const uint8_t *px);

/* Images served from the store and images added to it so far. */
void detfeed__recent_counts(detfeed__recent *r, uint64_t *hits, uint64_t *adds);

#endif /* DETFEED_RECENT_H */
