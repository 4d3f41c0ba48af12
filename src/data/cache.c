/*
 * cache.c - the RAM cache: decoded images at their load size in one arena.
 *
 * Sizes come from the dataset index (header probes), so every admitted
 * image's place in the arena is known before any pixel is decoded; filling
 * is then a parallel loop where each thread claims the next image from an
 * atomic counter and writes only its own slot. After the fill the arena is
 * read-only, which makes concurrent reads safe without locks. A disk cache
 * behind it (detfeed_cache_set_disk) serves the images the arena does not
 * hold, fills the arena, and is offered whatever is decoded.
 */
#include "disk_cache.h"
#include "load.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SLOT_ON_DEMAND = 0, SLOT_ADMITTED = 1, SLOT_CACHED = 2, SLOT_FAILED = 3 };

typedef struct slot {
    uint64_t offset;
    int width, height;           /* load size */
    int orig_width, orig_height; /* decoded size */
    int state;
} slot;

struct detfeed_cache {
    const detfeed_dataset *ds;
    detfeed__progress *progress; /* the fill's, or NULL */
    int imgsz;
    uint64_t budget, bytes;
    size_t n;
    slot *slots;
    uint8_t *arena;
    detfeed_disk_cache *disk; /* or NULL */
    int64_t cached, failed, admitted;
    bool filled;
    detfeed__msg msg;
};

/* Image i's load size and bytes; false when its size is unknown (the
 * dataset did not verify it), which leaves it on demand. */
static bool load_bytes(const detfeed_dataset *ds, size_t i, int imgsz, int *w, int *h,
                       uint64_t *bytes)
{
    const detfeed__image *im = detfeed__dataset_image(ds, i);
    if (im->width <= 0 || im->height <= 0)
        return false;
    detfeed_load_size(im->width, im->height, imgsz, w, h);
    *bytes = (uint64_t)*w * (uint64_t)*h * 3;
    return true;
}

/* The admission rule: first fit in index order (an image is admitted when
 * its bytes fit in what the budget has left). With `slots`, records each
 * image's sizes and place. Returns the bytes admitted. */
static uint64_t first_fit(const detfeed_dataset *ds, int imgsz, uint64_t budget,
                          slot *slots, int64_t *admitted)
{
    uint64_t used = 0, size;
    int w, h;
    *admitted = 0;
    for (size_t i = 0; i < detfeed_dataset_size(ds); i++) {
        if (!load_bytes(ds, i, imgsz, &w, &h, &size))
            continue;
        bool fits = size <= budget - used;
        if (slots) {
            const detfeed__image *im = detfeed__dataset_image(ds, i);
            slots[i] = (slot){.offset = used,
                              .width = w,
                              .height = h,
                              .orig_width = im->width,
                              .orig_height = im->height,
                              .state = fits ? SLOT_ADMITTED : SLOT_ON_DEMAND};
        }
        if (fits) {
            used += size;
            ++*admitted;
        }
    }
    return used;
}

void detfeed__cache_plan(const detfeed_dataset *ds, int imgsz, uint64_t budget,
                         uint64_t *bytes, int64_t *images)
{
    *bytes = first_fit(ds, imgsz, budget, NULL, images);
}

uint64_t detfeed__cache_ram_budget(uint64_t need, uint64_t available,
                                   unsigned margin_percent)
{
    /* floor(available * 100 / (100 + margin)) without overflow */
    uint64_t d = 100 + (uint64_t)margin_percent;
    uint64_t cap = available / d * 100 + available % d * 100 / d;
    return need <= cap ? need : cap;
}

bool detfeed__meminfo_available(const char *text, uint64_t *bytes)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        unsigned long long kb;
        char unit[4];
        if (strncmp(p, "MemAvailable:", 13) == 0 &&
            sscanf(p + 13, "%llu %3s", &kb, unit) == 2 && strcmp(unit, "kB") == 0 &&
            kb <= UINT64_MAX / 1024) {
            *bytes = (uint64_t)kb * 1024;
            return true;
        }
    }
    return false;
}

int detfeed__mem_available(uint64_t *bytes, detfeed__msg *msg)
{
    char text[8192];
    size_t n = 0;
    FILE *f = fopen("/proc/meminfo", "r"); /* its stat size is 0: read it whole */
    if (f) {
        n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
    }
    text[n] = '\0';
    if (detfeed__meminfo_available(text, bytes))
        return DETFEED_OK;
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) {
        *bytes = (uint64_t)pages * (uint64_t)page;
        return DETFEED_OK;
    }
    return detfeed__fail(msg, DETFEED_ENOTSUPPORTED,
                         "the available memory is unknown: no MemAvailable in "
                         "/proc/meminfo and no free page count");
}

/* The arena starts and ends on a page boundary, so that it can be
 * page-locked in place for a device (the recipe route's recipe_cache host). */
enum { ARENA_ALIGN = 4096 };

static uint8_t *arena_alloc(size_t bytes)
{
    return aligned_alloc(ARENA_ALIGN,
                         (bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN);
}

int detfeed_cache_create(detfeed_cache **out, const detfeed_dataset *ds, int imgsz,
                         uint64_t budget, uint32_t flags)
{
    if (out == NULL)
        return DETFEED_EINVAL;
    *out = NULL;
    if (ds == NULL || flags != 0 || imgsz < 32 || imgsz > 16384)
        return DETFEED_EINVAL;
    detfeed_cache *c = calloc(1, sizeof *c);
    size_t n = detfeed_dataset_size(ds);
    if (c == NULL || (c->slots = calloc(n ? n : 1, sizeof *c->slots)) == NULL) {
        free(c);
        return DETFEED_ENOMEM;
    }
    c->ds = ds;
    c->imgsz = imgsz;
    c->budget = budget;
    c->n = n;
    c->bytes = first_fit(ds, imgsz, budget, c->slots, &c->admitted);
    if (c->bytes > 0 && (c->bytes > SIZE_MAX - ARENA_ALIGN ||
                         (c->arena = arena_alloc((size_t)c->bytes)) == NULL)) {
        detfeed_cache_destroy(c);
        return DETFEED_ENOMEM;
    }
    *out = c;
    return DETFEED_OK;
}

void detfeed_cache_destroy(detfeed_cache *cache)
{
    if (cache == NULL)
        return;
    free(cache->arena);
    free(cache->slots);
    free(cache);
}

const char *detfeed_cache_last_error(const detfeed_cache *cache)
{
    return cache ? cache->msg.text : "no cache";
}

typedef struct filler {
    detfeed_cache *c;
    atomic_size_t next;
    atomic_llong cached, failed;
} filler;

/* Slot i's pixels into the arena: from the disk cache when it holds them,
 * else decoded (and offered to it). */
static int fill_one(detfeed_cache *c, detfeed_codec *codec, size_t i, const slot *s)
{
    int w, h, ow, oh;
    if (c->disk && detfeed__disk_read(c->disk, i, c->arena + s->offset, s->width,
                                      s->height, &ow, &oh))
        return DETFEED_OK;
    uint8_t *unused = NULL;
    int rc = detfeed__load_image(codec, c->ds, i, c->imgsz, c->arena + s->offset,
                                 s->width, s->height, &unused, &w, &h, &ow, &oh, NULL);
    if (c->disk && rc == DETFEED_OK)
        detfeed__disk_offer(c->disk, i, c->arena + s->offset, w, h, ow, oh);
    else if (c->disk)
        detfeed__disk_failed(c->disk, i, rc);
    return rc;
}

static void *fill_thread(void *arg)
{
    filler *f = arg;
    detfeed_cache *c = f->c;
    detfeed_codec *codec;
    if (detfeed_codec_create(&codec, 0) != DETFEED_OK)
        return NULL; /* the images this thread would have taken go to others */
    for (size_t i; (i = atomic_fetch_add(&f->next, 1)) < c->n;) {
        slot *s = &c->slots[i];
        if (s->state != SLOT_ADMITTED)
            continue;
        int rc = fill_one(c, codec, i, s);
        detfeed__progress_add(c->progress, 1);
        s->state = rc == DETFEED_OK ? SLOT_CACHED : SLOT_FAILED;
        atomic_fetch_add(rc == DETFEED_OK ? &f->cached : &f->failed, 1);
    }
    detfeed_codec_destroy(codec);
    return NULL;
}

/* Why `disk` cannot go behind `cache` (a message, DETFEED_EINVAL), or
 * DETFEED_OK. */
static int check_disk(detfeed_cache *cache, const detfeed_disk_cache *disk)
{
    int imgsz = 0;
    if (detfeed_disk_cache_path(disk) == NULL)
        return detfeed__fail(&cache->msg, DETFEED_EINVAL,
                             "set_disk: the disk cache is not open");
    if (detfeed__disk_dataset(disk, &imgsz) != cache->ds)
        return detfeed__fail(&cache->msg, DETFEED_EINVAL,
                             "set_disk: the disk cache is for another dataset than "
                             "the RAM cache's");
    if (imgsz != cache->imgsz)
        return detfeed__fail(&cache->msg, DETFEED_EINVAL,
                             "set_disk: the disk cache is for imgsz %d, the RAM "
                             "cache for %d",
                             imgsz, cache->imgsz);
    return DETFEED_OK;
}

int detfeed_cache_set_disk(detfeed_cache *cache, detfeed_disk_cache *disk)
{
    if (cache == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&cache->msg);
    if (cache->filled)
        return detfeed__fail(&cache->msg, DETFEED_EBADSTATE,
                             "set_disk: the cache is filled; a disk cache goes "
                             "behind it before detfeed_cache_fill");
    int rc = disk ? check_disk(cache, disk) : DETFEED_OK;
    if (rc == DETFEED_OK)
        cache->disk = disk;
    return rc;
}

void detfeed__cache_report_to(detfeed_cache *cache, detfeed__progress *p)
{
    cache->progress = p;
}

int detfeed_cache_fill(detfeed_cache *cache, int threads)
{
    if (cache == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&cache->msg);
    if (threads < 1)
        return detfeed__fail(&cache->msg, DETFEED_EINVAL,
                             "fill: threads %d is not a count it accepts (>= 1)",
                             threads);
    if (cache->filled)
        return detfeed__fail(&cache->msg, DETFEED_EBADSTATE,
                             "fill: the cache is filled already (once per cache)");
    cache->filled = true;
    filler f = {.c = cache};
    atomic_init(&f.next, 0);
    atomic_init(&f.cached, 0);
    atomic_init(&f.failed, 0);
    if ((int64_t)threads > cache->admitted)
        threads = cache->admitted > 0 ? (int)cache->admitted : 1;
    detfeed__progress_begin(cache->progress, "cache", (uint64_t)cache->admitted);
    detfeed__run_threads(threads, "detfeed-fill", fill_thread, &f);
    detfeed__progress_end(cache->progress);
    cache->cached = atomic_load(&f.cached);
    cache->failed = atomic_load(&f.failed);
    /* Admitted slots no thread reached (a codec could not be created). */
    for (size_t i = 0; i < cache->n; i++)
        if (cache->slots[i].state == SLOT_ADMITTED)
            cache->slots[i].state = SLOT_ON_DEMAND;
    return DETFEED_OK;
}

int detfeed_cache_get(const detfeed_cache *cache, size_t i, detfeed_codec *codec,
                      const uint8_t **pixels, int *width, int *height, int *orig_width,
                      int *orig_height, uint8_t **owned)
{
    return detfeed__cache_get(cache, i, codec, pixels, width, height, orig_width,
                              orig_height, owned, NULL);
}

int detfeed__cache_get(const detfeed_cache *cache, size_t i, detfeed_codec *codec,
                       const uint8_t **pixels, int *width, int *height, int *orig_width,
                       int *orig_height, uint8_t **owned, detfeed__clock *clock)
{
    if (cache == NULL || codec == NULL)
        return DETFEED_EINVAL;
    /* The cache is shared by threads: the message goes to the caller's codec. */
    if (pixels == NULL || width == NULL || height == NULL || owned == NULL)
        return detfeed__fail(&codec->msg, DETFEED_EINVAL,
                             "cache_get: pixels, width, height and owned are "
                             "required (not NULL)");
    if (i >= cache->n)
        return detfeed__fail(&codec->msg, DETFEED_EINVAL,
                             "cache_get: index %zu is not below the cache's %zu "
                             "images",
                             i, cache->n);
    *owned = NULL;
    const slot *s = &cache->slots[i];
    int ow, oh;
    if (s->state == SLOT_CACHED) {
        *pixels = cache->arena + s->offset;
        *width = s->width;
        *height = s->height;
        ow = s->orig_width;
        oh = s->orig_height;
    } else if (cache->disk && detfeed__disk_lookup(cache->disk, i, owned, width, height,
                                                   &ow, &oh, clock)) {
        *pixels = *owned; /* read from the file */
    } else {
        int rc = detfeed__load_image(codec, cache->ds, i, cache->imgsz, NULL, 0, 0,
                                     owned, width, height, &ow, &oh, clock);
        if (cache->disk && rc != DETFEED_OK)
            detfeed__disk_failed(cache->disk, i, rc);
        if (rc != DETFEED_OK)
            return rc;
        *pixels = *owned;
        if (cache->disk)
            detfeed__disk_offer(cache->disk, i, *owned, *width, *height, ow, oh);
    }
    if (orig_width)
        *orig_width = ow;
    if (orig_height)
        *orig_height = oh;
    return DETFEED_OK;
}

int64_t detfeed_cache_stat_get(const detfeed_cache *cache, detfeed_cache_stat stat)
{
    if (cache == NULL)
        return -1;
    switch (stat) {
    case DETFEED_CACHE_IMAGES:
        return cache->cached;
    case DETFEED_CACHE_BYTES: {
        uint64_t b = 0;
        for (size_t i = 0; i < cache->n; i++)
            if (cache->slots[i].state == SLOT_CACHED)
                b += (uint64_t)cache->slots[i].width *
                     (uint64_t)cache->slots[i].height * 3;
        return (int64_t)b;
    }
    case DETFEED_CACHE_BUDGET:
        return (int64_t)cache->budget;
    case DETFEED_CACHE_ON_DEMAND:
        return (int64_t)cache->n - cache->cached;
    case DETFEED_CACHE_FAILED:
        return cache->failed;
    }
    return -1;
}

bool detfeed__cache_holds(const detfeed_cache *cache, size_t i)
{
    /* an image in the disk cache decoded when it was written */
    return i < cache->n && (cache->slots[i].state == SLOT_CACHED ||
                            (cache->disk && detfeed__disk_holds(cache->disk, i)));
}

const uint8_t *detfeed__cache_arena(const detfeed_cache *cache, uint64_t *bytes)
{
    bool any = cache->filled && cache->cached > 0;
    *bytes = any ? cache->bytes : 0;
    return any ? cache->arena : NULL;
}

bool detfeed__cache_place(const detfeed_cache *cache, size_t i, uint64_t *offset,
                          int *width, int *height)
{
    if (i >= cache->n || cache->slots[i].state != SLOT_CACHED)
        return false;
    *offset = cache->slots[i].offset;
    *width = cache->slots[i].width;
    *height = cache->slots[i].height;
    return true;
}

bool detfeed__cache_fill_failed(const detfeed_cache *cache, size_t i)
{
    return i < cache->n && cache->slots[i].state == SLOT_FAILED;
}

void detfeed__cache_drop(detfeed_cache *cache, char *const *drop)
{
    size_t kept = 0;
    for (size_t i = 0; i < cache->n; i++)
        if (drop[i] == NULL)
            cache->slots[kept++] = cache->slots[i];
    cache->n = kept;
}
