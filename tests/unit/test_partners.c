/*
 * test_partners.c - mosaic and mixup partners from a window of recent
 * samples (partner_window):
 * - in the recipe: every partner is one of the last W samples of this
 *   rank (positions p, p - stride, ...), the sample itself at position 0,
 *   every member of the window drawn over many seeds, and the choice is
 *   uniform's with partner_window 0;
 * - through the loader: each delivered sample's partners (its recipe) are
 *   among the last W samples this rank delivered before it, on one rank and
 *   on two; the batches are the same for 1 and 4 workers and equal the
 *   single-sample path; the window changes the batches against uniform;
 * - without a RAM cache an epoch decodes each image about once (the store
 *   of recent images serves the partners), where uniform partners decode
 *   every tile: counted as the image files opened (inotify), from outside
 *   the loader.
 */
#include "testutil.h"

#include "aug/recipe.h"

#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

enum { NIMG = 23, S = 64, B = 4, W = 5 };

static char root[64];

static void test_recipe_window(void)
{
    enum { N = 40 };
    uint64_t order[N], rng = 9;
    for (int i = 0; i < N; i++)
        order[i] = (uint64_t)i;
    for (int i = N - 1; i > 0; i--) { /* a shuffled order */
        int j = (int)(tu_rand(&rng) % (uint64_t)(i + 1));
        uint64_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    detfeed__hyp hyp = detfeed__hyp_defaults();
    hyp.mixup = 1.0;
    uint32_t strides[] = {1, 2, 3}, windows[] = {1, 4, 9};
    for (int si = 0; si < 3; si++)
        for (int wi = 0; wi < 3; wi++)
            for (uint64_t pos = 0; pos < N; pos++) {
                detfeed__place pl = {order, pos, strides[si], windows[wi]};
                uint64_t avail = pos / pl.stride + 1;
                if (avail > pl.window)
                    avail = pl.window;
                int hits[9] = {0};
                for (uint64_t seed = 0; seed < 200; seed++) {
                    detfeed__recipe r;
                    detfeed__recipe_make(&hyp, seed, 3, order[pos], N, true, 0, &pl,
                                         &r);
                    uint64_t got[4] = {r.partners[0], r.partners[1], r.partners[2],
                                       r.mix_partner};
                    for (int k = 0; k < 4; k++) {
                        uint64_t back = 0;
                        while (back < avail && order[pos - back * pl.stride] != got[k])
                            back++;
                        if (!CHECK(back < avail))
                            fprintf(stderr, "  pos %llu stride %u window %u\n",
                                    (unsigned long long)pos, pl.stride, pl.window);
                        else
                            hits[back]++;
                    }
                }
                for (uint64_t k = 0; k < avail; k++)
                    CHECK(hits[k] > 0); /* 800 draws over at most 9 choices */
            }
    /* partner_window 0 is the uniform choice, slot for slot. */
    detfeed__recipe a, b;
    detfeed__recipe_make(&hyp, 4, 1, 7, N, true, 0, NULL, &a);
    detfeed__place wide = {order, N - 1, 1, N};
    detfeed__recipe_make(&hyp, 4, 1, 7, N, true, 0, &wide, &b);
    CHECK(a.xc == b.xc && a.yc == b.yc && a.scale == b.scale);
}

static void one_box(FILE *f, int i)
{
    fprintf(f, "%d 0.5 0.5 0.4 0.3\n", i % 3);
}

static detfeed_loader *make(int workers, int window, int rank, int world)
{
    char src[128];
    snprintf(src, sizeof src, "%s/images", root);
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, S);
    detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, B);
    detfeed_loader_set_int(l, DETFEED_LOADER_WORKERS, workers);
    detfeed_loader_set_int(l, DETFEED_LOADER_RANK, rank);
    detfeed_loader_set_int(l, DETFEED_LOADER_WORLD_SIZE, world);
    detfeed_loader_set_int(l, DETFEED_LOADER_DTYPE, DETFEED_DTYPE_U8);
    detfeed_loader_set_int(l, DETFEED_LOADER_SEED, 21);
    detfeed_loader_set_float(l, DETFEED_LOADER_MIXUP, 0.5);
    detfeed_loader_set_int(l, DETFEED_LOADER_CACHE_BYTES, 0); /* decode on demand */
    if (!CHECK_INT(detfeed_loader_set(l, "partner_window", window == 0 ? "0" : "5"), 0))
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    if (!CHECK_INT(detfeed_loader_open(l, src), 0))
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    return l;
}

/* The dataset index of a batch's image i. */
static uint64_t index_of(const detfeed_batch *b, int i)
{
    return (uint64_t)atoi(strrchr(detfeed_batch_im_file(b, i), '/') + 1);
}

/* Epoch `epoch`'s samples of one loader in the order delivered, and the
 * digest of its batches. */
static int delivered(detfeed_loader *l, uint32_t epoch, uint64_t *seq, char hex[65])
{
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    CHECK_INT(detfeed_loader_start(l, epoch), 0);
    const detfeed_batch *b;
    int n = 0;
    while (detfeed_loader_next(l, &b) == 0) {
        size_t bytes;
        const void *img = detfeed_batch_images(b, &bytes);
        detfeed_sha256_update(&ctx, img, bytes);
        for (int i = 0; i < detfeed_batch_size(b, NULL, NULL); i++)
            seq[n++] = index_of(b, i);
        detfeed_loader_release(l, b);
    }
    detfeed_sha256_hex(&ctx, hex);
    return n;
}

static void test_loader_window(int rank, int world)
{
    detfeed_loader *l = make(3, W, rank, world);
    uint64_t seq[2 * NIMG];
    char hex[65];
    int n = delivered(l, 0, seq, hex), checked = 0;
    CHECK(n > 0);
    for (int q = 0; q < n; q++) {
        if ((uint64_t)rank + (uint64_t)q * (uint64_t)world >= NIMG)
            continue; /* the shard's padding: a repeat, placed where it first is */
        detfeed_recipe r;
        CHECK_INT(detfeed_loader_recipe(l, 0, seq[q], &r), 0);
        uint64_t p[4];
        int k = 0;
        for (int t = 0; r.geometry.mosaic && t < 3; t++)
            p[k++] = r.geometry.partners[t];
        if (r.mixup)
            p[k++] = r.mix_partner;
        for (int j = 0; j < k; j++) {
            int back = 0;
            while (back < W && back <= q && seq[q - back] != p[j])
                back++;
            if (!CHECK(back < W && back <= q))
                fprintf(stderr, "  rank %d sample %d (image %llu) partner %llu\n", rank,
                        q, (unsigned long long)seq[q], (unsigned long long)p[j]);
            checked++;
        }
    }
    CHECK(checked >= n); /* mosaic is on: three partners a sample */
    detfeed_loader_destroy(l);
}

static void test_loader_digests(void)
{
    uint64_t seq[NIMG];
    char one[65], four[65], uniform[65];
    detfeed_loader *a = make(1, W, 0, 1), *b = make(4, W, 0, 1), *u = make(2, 0, 0, 1);
    delivered(a, 1, seq, one);
    delivered(b, 1, seq, four);
    delivered(u, 1, seq, uniform);
    CHECK_STR(four, one);
    CHECK(strcmp(uniform, one) != 0);
    /* The batch images equal the single-sample path with the same window. */
    detfeed_loader *c = make(1, W, 0, 1);
    CHECK_INT(detfeed_loader_start(c, 1), 0);
    const detfeed_batch *bt;
    uint8_t img[S * S * 3];
    float cls[64], box[256];
    while (detfeed_loader_next(c, &bt) == 0) {
        const uint8_t *bimg = detfeed_batch_images(bt, NULL);
        for (int i = 0; i < detfeed_batch_size(bt, NULL, NULL); i++) {
            int count;
            CHECK_INT(detfeed_loader_sample(a, 1, index_of(bt, i), img, 64, &count, cls,
                                            box, NULL),
                      0);
            uint8_t chw[S * S * 3];
            detfeed_convert_chw(img, (size_t)S * 3, S, S, chw, (size_t)S * S,
                                DETFEED_DTYPE_U8, 0);
            CHECK(memcmp(chw, bimg + (size_t)i * S * S * 3, sizeof chw) == 0);
        }
        detfeed_loader_release(c, bt);
    }
    detfeed_loader_destroy(a);
    detfeed_loader_destroy(b);
    detfeed_loader_destroy(c);
    detfeed_loader_destroy(u);
}

/* The image files of the dataset opened during epoch 0 of `l` (opened
 * already): each decode opens its file once. -1 without inotify. Opens and
 * closes are both watched, so that inotify's merging of an event with an
 * identical one just before it cannot hide a second decode of a file. */
static int opened_in_epoch(detfeed_loader *l)
{
    char dir[128];
    snprintf(dir, sizeof dir, "%s/images", root);
    int fd = inotify_init1(IN_NONBLOCK);
    if (fd < 0 || inotify_add_watch(fd, dir, IN_OPEN | IN_CLOSE_NOWRITE) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    uint64_t seq[NIMG];
    char hex[65];
    CHECK_INT(delivered(l, 0, seq, hex), NIMG);
    int opens = 0;
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (ssize_t len; (len = read(fd, buf, sizeof buf)) > 0;)
        for (char *p = buf; p < buf + len;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            opens += ev->len > 0 && (ev->mask & IN_OPEN); /* a file, not the folder */
            p += sizeof *ev + ev->len;
        }
    close(fd);
    return opens;
}

/* Without a RAM cache, the partners come from the store of recent images:
 * an epoch decodes each image about once, not once per tile as uniform
 * partners do. "About": two workers that want an image the store does not
 * hold yet both decode it (the store keeps one), so a few files open twice,
 * more under a sanitizer's timing; without the store every tile decodes
 * (4-5 opens an image). */
static void test_decodes(void)
{
    detfeed_loader *l = make(2, W, 0, 1), *u = make(2, 0, 0, 1);
    int window = opened_in_epoch(l), uniform = opened_in_epoch(u);
    if (window < 0 || uniform < 0)
        tu_skip("inotify is not available: decodes not counted");
    else if (!CHECK(window >= NIMG && window <= NIMG + NIMG / 2 && uniform >= 3 * NIMG))
        fprintf(stderr, "  %d image files opened with a window, %d with uniform\n",
                window, uniform);
    detfeed_loader_destroy(l);
    detfeed_loader_destroy(u);
}

static void test_setting(void)
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    CHECK_INT(detfeed_loader_set(l, "partner_window", "-1"), DETFEED_EINVAL);
    CHECK(strstr(detfeed_loader_last_error(l), "partner_window") != NULL);
    CHECK_INT(detfeed_loader_set(l, "partner_window", "128"), 0);
    detfeed_loader_destroy(l);
}

int main(void)
{
    test_recipe_window();
    test_setting();
    if (!tu_temp_dir(root, sizeof root, "partners"))
        return tu_finish("test_partners");
    tu_noise_dataset(root, NIMG, 30, 90, 3, one_box);
    test_loader_window(0, 1);
    test_loader_window(1, 2);
    test_loader_digests();
    test_decodes();
    CHECK(tu_remove_tree(root));
    return tu_finish("test_partners");
}
