/*
 * test_determinism.c - a sample's bytes depend only on (dataset, settings,
 * seed, epoch, index): not on the order samples are made in, on repeating
 * them, on the thread that makes them, or on what the RAM cache holds. Each
 * sample's image and labels are hashed; every way of producing them must
 * give the same hashes. Under TSan this also checks that loaders on several
 * threads share nothing mutable.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { NIMG = 12, S = 160, NS = 36, CAP = 128 };

static char root[64];

/* Five boxes of classes 0 .. 4 at places drawn from the image's number. */
static void five_boxes(FILE *f, int i)
{
    uint64_t rng = 1000 + (uint64_t)i;
    for (int k = 0; k < 5; k++)
        fprintf(f, "%d %.6f %.6f %.6f %.6f\n", k, tu_uniform(&rng, 0.2, 0.8),
                tu_uniform(&rng, 0.2, 0.8), tu_uniform(&rng, 0.05, 0.3),
                tu_uniform(&rng, 0.05, 0.3));
}

static detfeed_loader *open_loader(int64_t cache_bytes)
{
    char src[128];
    snprintf(src, sizeof src, "%s/images", root);
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, S);
    detfeed_loader_set_int(l, DETFEED_LOADER_SEED, 12345);
    detfeed_loader_set_int(l, DETFEED_LOADER_EPOCHS, 3);
    detfeed_loader_set_int(l, DETFEED_LOADER_CLOSE_MOSAIC, 1);
    detfeed_loader_set_int(l, DETFEED_LOADER_CACHE_BYTES, cache_bytes);
    detfeed_loader_set_int(l, DETFEED_LOADER_WORKERS, 2);
    detfeed_loader_set_float(l, DETFEED_LOADER_DEGREES, 15);
    if (!CHECK_INT(detfeed_loader_open(l, src), 0))
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    return l;
}

/* The hash of sample k of the test: (epoch k / NIMG, index k % NIMG); epoch 2
 * is a close_mosaic epoch. */
static void sample_hash(detfeed_loader *l, int k, char hex[65])
{
    static const int zero = 0;
    uint8_t *img = malloc((size_t)S * S * 3);
    float cls[CAP], box[CAP * 4];
    int n = 0;
    CHECK_INT(detfeed_loader_sample(l, (uint32_t)(k / NIMG), (uint64_t)(k % NIMG), img,
                                    CAP, &n, cls, box, NULL),
              0);
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    detfeed_sha256_update(&ctx, img, (size_t)S * S * 3);
    detfeed_sha256_update(&ctx, n ? (const void *)cls : (const void *)&zero,
                          (size_t)n * sizeof *cls);
    detfeed_sha256_update(&ctx, n ? (const void *)box : (const void *)&zero,
                          (size_t)n * 4 * sizeof *box);
    detfeed_sha256_hex(&ctx, hex);
    free(img);
}

typedef struct job {
    int first, step;
    char (*hex)[65];
} job;

static void *worker(void *arg)
{
    job *j = arg;
    detfeed_loader *l = open_loader(1 << 24);
    for (int k = j->first; k < NS; k += j->step)
        sample_hash(l, k, j->hex[k]);
    detfeed_loader_destroy(l);
    return NULL;
}

int main(void)
{
    if (!tu_temp_dir(root, sizeof root, "det"))
        return tu_finish("test_determinism");
    tu_noise_dataset(root, NIMG, 100, 300, 99, five_boxes);
    static char ref[NS][65], other[NS][65];
    /* In order, everything cached. */
    detfeed_loader *l = open_loader(1 << 24);
    for (int k = 0; k < NS; k++)
        sample_hash(l, k, ref[k]);
    /* Backwards, twice, on the same loader. */
    for (int pass = 0; pass < 2; pass++) {
        for (int k = NS - 1; k >= 0; k--)
            sample_hash(l, k, other[k]);
        for (int k = 0; k < NS; k++)
            CHECK_STR(other[k], ref[k]);
    }
    detfeed_loader_destroy(l);
    /* No cache (every image decoded on demand), interleaved order. */
    l = open_loader(0);
    for (int k = 0; k < NS; k++)
        sample_hash(l, (k * 7) % NS, other[(k * 7) % NS]);
    for (int k = 0; k < NS; k++)
        CHECK_STR(other[k], ref[k]);
    detfeed_loader_destroy(l);
    /* Three threads, each its own loader, taking every third sample. */
    memset(other, 0, sizeof other);
    pthread_t t[3];
    job jobs[3];
    for (int i = 0; i < 3; i++) {
        jobs[i] = (job){.first = i, .step = 3, .hex = other};
        pthread_create(&t[i], NULL, worker, &jobs[i]);
    }
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    for (int k = 0; k < NS; k++)
        CHECK_STR(other[k], ref[k]);
    /* Different epochs and seeds do change the samples. */
    int distinct = 0;
    for (int k = 1; k < NS; k++)
        distinct += strcmp(ref[k], ref[0]) != 0;
    CHECK_INT(distinct, NS - 1);
    CHECK(tu_remove_tree(root));
    return tu_finish("test_determinism");
}
