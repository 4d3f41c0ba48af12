/*
 * recent.c - the store of recently decoded images: a fixed table searched
 * under one mutex (a few hundred entries; a search is tiny next to the
 * decode it saves), least recently used first out among those not held.
 */
#include "recent.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct entry {
    uint64_t index, stamp;
    uint8_t *px; /* NULL: free */
    detfeed__held img;
    int refs;
} entry;

struct detfeed__recent {
    pthread_mutex_t lock;
    entry *e;
    size_t cap;
    uint64_t clock, hits, adds;
};

int detfeed__recent_create(detfeed__recent **out, size_t capacity)
{
    *out = NULL;
    if (capacity == 0)
        return DETFEED_EINVAL;
    detfeed__recent *r = calloc(1, sizeof *r);
    if (r == NULL || (r->e = calloc(capacity, sizeof *r->e)) == NULL) {
        free(r);
        return DETFEED_ENOMEM;
    }
    if (pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r->e);
        free(r);
        return DETFEED_ENOMEM;
    }
    r->cap = capacity;
    *out = r;
    return DETFEED_OK;
}

void detfeed__recent_destroy(detfeed__recent *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->cap; i++)
        free(r->e[i].px);
    pthread_mutex_destroy(&r->lock);
    free(r->e);
    free(r);
}

static entry *find(detfeed__recent *r, uint64_t index)
{
    for (size_t i = 0; i < r->cap; i++)
        if (r->e[i].px && r->e[i].index == index)
            return &r->e[i];
    return NULL;
}

/* A free entry, or the least recently used one no one holds; NULL when
 * every entry is held. */
static entry *victim(detfeed__recent *r)
{
    entry *v = NULL;
    for (size_t i = 0; i < r->cap; i++) {
        entry *e = &r->e[i];
        if (e->px == NULL)
            return e;
        if (e->refs == 0 && (v == NULL || e->stamp < v->stamp))
            v = e;
    }
    return v;
}

bool detfeed__recent_get(detfeed__recent *r, uint64_t index, detfeed__held *img)
{
    pthread_mutex_lock(&r->lock);
    entry *e = find(r, index);
    if (e) {
        e->refs++;
        e->stamp = ++r->clock;
        *img = e->img;
        r->hits++;
    }
    pthread_mutex_unlock(&r->lock);
    return e != NULL;
}

bool detfeed__recent_add(detfeed__recent *r, uint64_t index, uint8_t *px,
                         const detfeed__held *img)
{
    pthread_mutex_lock(&r->lock);
    entry *e = find(r, index) ? NULL : victim(r);
    if (e) {
        free(e->px);
        *e = (entry){
            .index = index, .stamp = ++r->clock, .px = px, .img = *img, .refs = 1};
        e->img.px = px;
        r->adds++;
    }
    pthread_mutex_unlock(&r->lock);
    return e != NULL;
}

void detfeed__recent_put(detfeed__recent *r, const uint8_t *px)
{
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->cap; i++)
        if (r->e[i].px == px && r->e[i].refs > 0) {
            r->e[i].refs--;
            break;
        }
    pthread_mutex_unlock(&r->lock);
}

void detfeed__recent_counts(detfeed__recent *r, uint64_t *hits, uint64_t *adds)
{
    pthread_mutex_lock(&r->lock);
    *hits = r->hits;
    *adds = r->adds;
    pthread_mutex_unlock(&r->lock);
}
