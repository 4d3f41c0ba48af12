/*
 * testutil_data.c - test data made on the fly (with the library's PNG
 * writer; testutil.c itself needs no library, for the mutation runs), and
 * the temporary folders it lives in.
 */
#define _XOPEN_SOURCE 700 /* nftw */

#include "testutil.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void tu_make_dataset(const char *root, int n, int min_side, int span, uint64_t seed,
                     void (*make)(tu_image *im), void *ctx)
{
    char p[512];
    snprintf(p, sizeof p, "%s/images", root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/labels", root);
    mkdir(p, 0755);
    detfeed_codec *codec;
    detfeed_codec_create(&codec, 0);
    for (int i = 0; i < n; i++) {
        tu_image im = {.index = i, .rng = &seed, .ctx = ctx};
        im.w = min_side + (int)(tu_rand(&seed) % (uint64_t)span);
        im.h = min_side + (int)(tu_rand(&seed) % (uint64_t)span);
        im.px = malloc((size_t)im.w * im.h * 3);
        for (int k = 0; k < im.w * im.h * 3; k++)
            im.px[k] = (uint8_t)(tu_rand(&seed) >> 56);
        snprintf(p, sizeof p, "%s/labels/%02d.txt", root, i);
        im.labels = fopen(p, "w");
        if (CHECK(im.labels != NULL)) {
            make(&im);
            fclose(im.labels);
        }
        snprintf(p, sizeof p, "%s/images/%02d.png", root, i);
        CHECK_INT(
            detfeed_codec_write_png(codec, p, im.px, (size_t)im.w * 3, im.w, im.h), 0);
        free(im.px);
    }
    detfeed_codec_destroy(codec);
}

typedef struct noise_labels {
    void (*labels)(FILE *f, int i);
} noise_labels;

static void write_noise_labels(tu_image *im)
{
    const noise_labels *nl = im->ctx;
    nl->labels(im->labels, im->index);
}

void tu_noise_dataset(const char *root, int n, int min_side, int span, uint64_t seed,
                      void (*labels)(FILE *f, int i))
{
    noise_labels nl = {labels};
    tu_make_dataset(root, n, min_side, span, seed, write_noise_labels, &nl);
}

const char *tu_temp_dir(char *buf, size_t size, const char *name)
{
    int len = snprintf(buf, size, "/tmp/detfeed-%s-XXXXXX", name);
    if (!CHECK(len > 0 && (size_t)len < size))
        return NULL;
    if (!CHECK(mkdtemp(buf) != NULL)) {
        fprintf(stderr, "  cannot make %s: %s\n", buf, strerror(errno));
        return NULL;
    }
    return buf;
}

const char *tu_at(const char *root, const char *rel)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", root, rel);
    return buf[k];
}

void tu_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (CHECK(f != NULL)) {
        fputs(text, f);
        fclose(f);
    }
}

void tu_digest_batches(detfeed_loader *l, uint32_t epochs, detfeed_sha256 *ctx)
{
    for (uint32_t e = 0; e < epochs; e++) {
        CHECK_INT(detfeed_loader_start(l, e), 0);
        const detfeed_batch *b;
        int rc;
        while ((rc = detfeed_loader_next(l, &b)) == DETFEED_OK) {
            size_t bytes;
            const void *img = detfeed_batch_images(b, &bytes);
            int n = detfeed_batch_instances(b);
            detfeed_sha256_update(ctx, img, bytes);
            detfeed_sha256_update(ctx, &n, sizeof n);
            if (n) {
                detfeed_sha256_update(ctx, detfeed_batch_cls(b), (size_t)n * 4);
                detfeed_sha256_update(ctx, detfeed_batch_bboxes(b), (size_t)n * 16);
                detfeed_sha256_update(ctx, detfeed_batch_batch_idx(b), (size_t)n * 4);
            }
            detfeed_loader_release(l, b);
        }
        CHECK_INT(rc, DETFEED_NEXT_END);
    }
}

static int remove_entry(const char *path, const struct stat *st, int type,
                        struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

bool tu_remove_tree(const char *path)
{
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0;
}
