/*
 * test_verify.c - the loader verifies what it indexes, as `detfeed check`
 * does (by decoding), so that an image that cannot be decoded never enters
 * the epoch order:
 * - on a copy of coco8 with one JPEG truncated after its header, every
 *   usable image is delivered exactly once per epoch and the damaged one
 *   never, with no sample replaced, whether the images are decoded at open
 *   (no RAM cache), by the RAM cache's fill, or partly both; in training
 *   and in validation;
 * - the damaged image is counted and reported as the dataset opened with
 *   DETFEED_VERIFY_DECODE (check's default) reports it;
 * - under the fail policy, opening fails naming it;
 * - the image limits (max_pixels, max_width, max_height, max_image_bytes):
 *   an image over a limit is a counted problem naming the file and the
 *   limit, in the dataset and through the loader's settings.
 */
#include "testutil.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];
static const char *const names[] = {"000000000009", "000000000025", "000000000030",
                                    "000000000034", "000000000036", "000000000042",
                                    "000000000049", "000000000061"};
#define NIMG    8
#define DAMAGED 5 /* 000000000042.jpg */

static bool copy_file(const char *from, const char *to, long keep)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[65536];
    size_t n;
    long done = 0;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0) {
        if (keep >= 0 && done + (long)n > keep)
            n = (size_t)(keep - done);
        fwrite(buf, 1, n, out);
        done += (long)n;
        if (keep >= 0 && done >= keep)
            break;
    }
    bool ok = in && out;
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    return ok;
}

/* coco8's eight images in one images/ + labels/ folder; one JPEG cut to
 * 4000 bytes (its header and the start of its data). */
static bool make_damaged_coco8(const char *data)
{
    char from[512], to[512];
    snprintf(to, sizeof to, "%s/images", root);
    mkdir(to, 0755);
    snprintf(to, sizeof to, "%s/labels", root);
    mkdir(to, 0755);
    for (int i = 0; i < NIMG; i++) {
        const char *split = i < 4 ? "train" : "val";
        snprintf(from, sizeof from, "%s/coco8/images/%s/%s.jpg", data, split, names[i]);
        snprintf(to, sizeof to, "%s/images/%s.jpg", root, names[i]);
        if (!copy_file(from, to, i == DAMAGED ? 4000 : -1))
            return false;
        snprintf(from, sizeof from, "%s/coco8/labels/%s/%s.txt", data, split, names[i]);
        snprintf(to, sizeof to, "%s/labels/%s.txt", root, names[i]);
        if (!copy_file(from, to, -1))
            return false;
    }
    return true;
}

/* The problem the dataset reports for a file whose name contains `part`. */
static const char *reason_for(const detfeed_dataset *ds, const char *part)
{
    for (size_t i = 0; i < detfeed_dataset_problem_count(ds); i++) {
        const char *file, *reason;
        int line;
        detfeed_dataset_problem(ds, i, &file, &line, &reason);
        if (strstr(file, part))
            return reason;
    }
    return NULL;
}

/* What `detfeed check` (the dataset decoding every image) says. */
static detfeed_dataset *checked(const char *src)
{
    detfeed_dataset *ds;
    detfeed_dataset_create(&ds, 0);
    detfeed_dataset_set_int(ds, DETFEED_DATASET_VERIFY, DETFEED_VERIFY_DECODE);
    CHECK_INT(detfeed_dataset_open(ds, src), 0);
    return ds;
}

static int image_of(const char *file)
{
    for (int i = 0; i < NIMG; i++)
        if (strstr(file, names[i]))
            return i;
    return -1;
}

/* Runs `epochs` epochs and checks that each delivers every image but the
 * damaged one exactly once. */
static void check_epochs(detfeed_loader *l, int epochs, const char *what)
{
    for (int e = 0; e < epochs; e++) {
        int seen[NIMG] = {0}, other = 0, rc;
        const detfeed_batch *b;
        CHECK_INT(detfeed_loader_start(l, (uint32_t)e), 0);
        while ((rc = detfeed_loader_next(l, &b)) == 0) {
            for (int i = 0; i < detfeed_batch_size(b, NULL, NULL); i++) {
                int k = image_of(detfeed_batch_im_file(b, i));
                if (k < 0)
                    other++;
                else
                    seen[k]++;
            }
            detfeed_loader_release(l, b);
        }
        CHECK_INT(rc, DETFEED_NEXT_END);
        CHECK_INT(other, 0);
        for (int k = 0; k < NIMG; k++)
            if (!CHECK_INT(seen[k], k == DAMAGED ? 0 : 1))
                printf("  (%s, epoch %d, %s.jpg)\n", what, e, names[k]);
    }
    const char *first = NULL;
    if (!CHECK_INT(detfeed_loader_skipped(l, &first), 0))
        printf("  (%s: first replaced: %s)\n", what, first ? first : "?");
}

static detfeed_loader *make(const char *src, int64_t cache, int augment,
                            const char *what)
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, 160);
    detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, 3);
    detfeed_loader_set_int(l, DETFEED_LOADER_WORKERS, 2);
    detfeed_loader_set_int(l, DETFEED_LOADER_CACHE_BYTES, cache);
    detfeed_loader_set_int(l, DETFEED_LOADER_AUGMENT, augment);
    detfeed_loader_set_int(l, DETFEED_LOADER_EPOCHS, 3);
    detfeed_loader_set_int(l, DETFEED_LOADER_CLOSE_MOSAIC, 0);
    if (!CHECK_INT(detfeed_loader_open(l, src), 0))
        printf("  (%s: %s)\n", what, detfeed_loader_last_error(l));
    return l;
}

static void test_damaged(void)
{
    char src[128];
    snprintf(src, sizeof src, "%s/images", root);
    detfeed_dataset *ref = checked(src);
    CHECK_INT(detfeed_dataset_stat_get(ref, DETFEED_STAT_CORRUPT), 1);
    CHECK_INT(detfeed_dataset_stat_get(ref, DETFEED_STAT_USABLE), NIMG - 1);
    const char *want = reason_for(ref, names[DAMAGED]);
    CHECK(want != NULL);
    /* no cache (decoded at open), all cached (the fill decodes), a budget
     * that holds some (both), in training and validation */
    const struct {
        int64_t cache;
        int augment;
        const char *what;
    } runs[] = {{0, 1, "no cache"},
                {1 << 30, 1, "ram"},
                {60000, 1, "part"},
                {0, 0, "val, no cache"},
                {1 << 30, 0, "val, ram"}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        detfeed_loader *l = make(src, runs[r].cache, runs[r].augment, runs[r].what);
        const detfeed_dataset *ds = detfeed_loader_dataset(l);
        CHECK_INT(detfeed_dataset_size(ds), NIMG - 1);
        for (int k = DETFEED_STAT_IMAGES; k <= DETFEED_STAT_LEFT_OUT; k++)
            if (!CHECK_INT(detfeed_dataset_stat_get(ds, (detfeed_dataset_stat)k),
                           detfeed_dataset_stat_get(ref, (detfeed_dataset_stat)k)))
                printf("  (%s: stat %d)\n", runs[r].what, k);
        const char *got = reason_for(ds, names[DAMAGED]);
        if (!CHECK(got && want && strcmp(got, want) == 0))
            printf("  (%s: reason '%s', check says '%s')\n", runs[r].what,
                   got ? got : "(none)", want ? want : "(none)");
        if (runs[r].cache == 60000) {
            int64_t held =
                detfeed_cache_stat_get(detfeed_loader_cache(l), DETFEED_CACHE_IMAGES);
            CHECK(held > 0 && held < NIMG - 1);
        }
        check_epochs(l, 3, runs[r].what);
        detfeed_loader_destroy(l);
    }
    detfeed_dataset_destroy(ref);
}

static void test_fail_policy(void)
{
    char src[128];
    snprintf(src, sizeof src, "%s/images", root);
    for (int64_t cache = 0; cache <= 1 << 30; cache += 1 << 30) {
        detfeed_loader *l;
        detfeed_loader_create(&l, 0);
        detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, 160);
        detfeed_loader_set_int(l, DETFEED_LOADER_CACHE_BYTES, cache);
        detfeed_loader_set_policy(l, DETFEED_POLICY_FAIL);
        CHECK(detfeed_loader_open(l, src) < 0);
        CHECK(strstr(detfeed_loader_last_error(l), names[DAMAGED]) != NULL);
        detfeed_loader_destroy(l);
    }
}

/* An image over a limit: a problem naming the file and the limit, in the
 * dataset (detfeed_dataset_set_limit) and through the loader's settings;
 * the limits are refused where they make no sense. */

static void test_limits(void)
{
    char src[128];
    snprintf(src, sizeof src, "%s/images", root);
    /* coco8's largest image is 640 x 480 = 307200 pixels; others smaller */
    detfeed_dataset *ds;
    detfeed_dataset_create(&ds, 0);
    CHECK_INT(detfeed_dataset_set_limit(ds, DETFEED_LIMIT_MAX_PIXELS, 0),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_dataset_set_limit(ds, DETFEED_LIMIT_MAX_PIXELS, 300000), 0);
    CHECK_INT(detfeed_dataset_open(ds, src), 0);
    int64_t over = detfeed_dataset_stat_get(ds, DETFEED_STAT_CORRUPT);
    CHECK(over >= 2); /* the damaged one and at least one 640 x 480 */
    const char *r = reason_for(ds, names[0]); /* 640 x 480 */
    CHECK(r && strstr(r, "max_pixels") && strstr(r, "300000"));
    detfeed_dataset_destroy(ds);

    const struct {
        const char *name, *value;
        int over; /* an image over it */
    } lims[] = {{"max_pixels", "300000", 0},
                {"max_width", "600", 0},
                {"max_height", "490", 4},
                {"max_image_bytes", "900000", 0}};
    for (size_t k = 0; k < sizeof lims / sizeof lims[0]; k++) {
        detfeed_loader *l;
        detfeed_loader_create(&l, 0);
        detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, 160);
        CHECK_INT(detfeed_loader_set(l, lims[k].name, lims[k].value), 0);
        CHECK_INT(detfeed_loader_set(l, lims[k].name, "0"), DETFEED_EINVAL);
        CHECK(strstr(detfeed_loader_last_error(l), lims[k].name) != NULL);
        CHECK_INT(detfeed_loader_open(l, src), 0);
        const detfeed_dataset *lds = detfeed_loader_dataset(l);
        CHECK(detfeed_dataset_stat_get(lds, DETFEED_STAT_CORRUPT) >= 2);
        r = reason_for(lds, names[lims[k].over]);
        if (!CHECK(r && strstr(r, lims[k].name) && strstr(r, lims[k].value)))
            printf("  (%s: %s)\n", lims[k].name, r ? r : "(none)");
        detfeed_loader_destroy(l);
    }
}

int main(void)
{
    const char *data = getenv("DETFEED_TEST_DATA");
    char probe[512];
    snprintf(probe, sizeof probe, "%s/coco8/images/train", data ? data : ".");
    if (data == NULL || access(probe, R_OK) != 0) {
        printf("SKIP: DETFEED_TEST_DATA has no coco8\n");
        return 77;
    }
    if (!tu_temp_dir(root, sizeof root, "verify") || !CHECK(make_damaged_coco8(data)))
        return tu_finish("test_verify");
    test_damaged();
    test_fail_policy();
    test_limits();
    if (!tu_remove_tree(root))
        printf("note: %s left behind\n", root);
    return tu_finish("test_verify");
}
