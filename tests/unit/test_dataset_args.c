/*
 * test_dataset_args.c - Ultralytics' dataset train arguments: fraction
 * (ratios rounded half to even, counts, files of every IMG_FORMATS suffix
 * in the list, 0 refused), classes (instances filtered with their boxes,
 * polygons and keypoints; images becoming backgrounds; bad ids refused),
 * single_cls, and the RAM cache budget of cache_bytes "ram". The expected
 * fraction counts were computed with Python's max(1, round(n * f)).
 */
#include "testutil.h"

#include "data/dataset_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static const char *at(const char *rel)
{
    return tu_at(root, rel);
}

static void write_text(const char *rel, const char *text)
{
    tu_write_text(at(rel), text);
}

static void write_image(detfeed_codec *c, const char *rel, int w, int h)
{
    uint8_t *px = malloc((size_t)w * h * 3);
    for (int i = 0; i < w * h * 3; i++)
        px[i] = (uint8_t)(i * 7 + w);
    CHECK_INT(detfeed_codec_write_png(c, at(rel), px, (size_t)w * 3, w, h), 0);
    free(px);
}

/*
 * det: 9 image files in Ultralytics' sorted order (a.pfm and notes.txt are
 * not images to Ultralytics 8.4):
 *   im0.png [0, 1, 2]  im1.png [1]  im2.avif (damaged: text)  im3.png [2, 0]  im4.heic
 *   im5.png (no labels)  im6.png [0]  im7.png [1, 1]  im8.heif
 * (im2.avif, im4.heic and im8.heif hold no image: corrupt)
 * seg: one image with polygons of classes 0, 1, 0; pose: one with
 * instances of classes 0, 1, 0 and two keypoints each.
 */
static void make_tree(void)
{
    detfeed_codec *c;
    detfeed_codec_create(&c, 0);
    const char *dirs[] = {"det",         "det/images",       "det/images/train",
                          "det/labels",  "det/labels/train", "seg",
                          "seg/images",  "seg/labels",       "pose",
                          "pose/images", "pose/labels"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        mkdir(at(dirs[i]), 0755);
    const char *png[] = {"im0", "im1", "im3", "im5", "im6", "im7"};
    for (int i = 0; i < 6; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "det/images/train/%s.png", png[i]);
        write_image(c, rel, 40 + 8 * i, 30 + 4 * i);
    }
    write_text("det/images/train/im2.avif", "avif");
    write_text("det/images/train/im4.heic", "II*");
    write_text("det/images/train/im8.heif", "heif");
    write_text("det/images/train/a.pfm", "PF");
    write_text("det/images/train/notes.txt", "not an image");
    write_text("det/labels/train/im0.txt", "0 0.5 0.5 0.2 0.2\n1 0.3 0.3 0.1 0.1\n"
                                           "2 0.7 0.7 0.1 0.2\n");
    write_text("det/labels/train/im1.txt", "1 0.5 0.5 0.4 0.4\n");
    write_text("det/labels/train/im3.txt", "2 0.2 0.2 0.1 0.1\n0 0.6 0.6 0.3 0.3\n");
    write_text("det/labels/train/im6.txt", "0 0.4 0.4 0.2 0.2\n");
    write_text("det/labels/train/im7.txt", "1 0.5 0.5 0.2 0.2\n1 0.25 0.25 0.1 0.1\n");
    write_text("det/labels/train/zz.txt", "0 0.5 0.5 0.2 0.2\n"); /* an orphan */
    write_text("det/data.yaml", "train: images/train\nnames: [a, b, c]\n");
    write_text("det/one.yaml", "train: images/train\nnames: [a]\n");
    write_text("det/list.txt", "images/train/im3.png\nimages/train/notes.txt\n"
                               "images/train/im0.png\nimages/train/im1.png\n");

    write_image(c, "seg/images/s0.png", 32, 32);
    write_text("seg/labels/s0.txt", "0 0.1 0.1 0.3 0.1 0.3 0.3\n"
                                    "1 0.5 0.5 0.9 0.5 0.9 0.9 0.5 0.9\n"
                                    "0 0.2 0.6 0.4 0.6 0.3 0.8\n");
    write_text("seg/data.yaml", "train: images\nnames: [a, b]\n");

    write_image(c, "pose/images/p0.png", 32, 32);
    write_text("pose/labels/p0.txt", "0 0.5 0.5 0.2 0.2 0.4 0.4 2 0.6 0.6 1\n"
                                     "1 0.3 0.3 0.1 0.1 0.25 0.25 2 0.35 0.35 2\n"
                                     "0 0.7 0.7 0.1 0.1 0.65 0.65 1 0.75 0.75 0\n");
    write_text("pose/data.yaml", "train: images\nkpt_shape: [2, 3]\nflip_idx: [1, 0]\n"
                                 "names: [person, dog]\n");
    detfeed_codec_destroy(c);
}

#define STAT(ds, s) detfeed_dataset_stat_get(ds, DETFEED_STAT_##s)

/* The arguments of one dataset (count 0 / ratio 0: no fraction). */
typedef struct args {
    int64_t count;
    double ratio;
    const int *classes;
    size_t nclasses;
    int single_cls;
} args;

static detfeed_dataset *open_with(const char *source, args a, int want_rc)
{
    detfeed_dataset *ds;
    CHECK_INT(detfeed_dataset_create(&ds, 0), 0);
    if (a.count)
        CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_FRACTION, a.count), 0);
    if (a.ratio)
        CHECK_INT(detfeed_dataset_set_float(ds, DETFEED_DATASET_FRACTION, a.ratio), 0);
    CHECK_INT(detfeed_dataset_set_classes(ds, a.classes, a.nclasses), 0);
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_SINGLE_CLS, a.single_cls), 0);
    int rc = detfeed_dataset_open(ds, source);
    if (!CHECK_INT(rc, want_rc))
        fprintf(stderr, "  open %s: %s\n", source, detfeed_dataset_last_error(ds));
    return ds;
}

/* The base names of the index, joined by spaces. */
static const char *names_of(const detfeed_dataset *ds)
{
    static char buf[512];
    buf[0] = '\0';
    for (size_t i = 0; i < detfeed_dataset_size(ds); i++) {
        const char *p = strrchr(detfeed_dataset_image_path(ds, i), '/');
        strcat(buf, i ? " " : "");
        strncat(buf, p + 1, sizeof buf - strlen(buf) - 1);
    }
    return buf;
}

static bool has_note(const detfeed_dataset *ds, const char *words)
{
    for (size_t i = 0; i < detfeed_dataset_problem_count(ds); i++) {
        const char *r;
        detfeed_dataset_problem(ds, i, NULL, NULL, &r);
        if (strstr(r, words))
            return true;
    }
    fprintf(stderr, "  no problem \"%s\"\n", words);
    return false;
}

/* ---- fraction --------------------------------------------------------------- */

static void test_fraction_rounding(void)
{
    static const struct {
        size_t n;
        double f;
        size_t want;
    } cases[] = {
        {1, 0.5, 1},         {2, 0.25, 1},       {2, 0.75, 2},     {3, 0.5, 2},
        {5, 0.1, 1},         {5, 0.5, 2},        {7, 0.5, 4},      {8, 0.3125, 2},
        {8, 0.0625, 1},      {9, 0.5, 4},        {10, 0.05, 1},    {10, 0.15, 2},
        {10, 0.25, 2},       {10, 0.35, 4},      {10, 0.45, 4},    {10, 0.55, 6},
        {10, 0.65, 6},       {10, 0.75, 8},      {10, 0.85, 8},    {10, 0.95, 10},
        {11, 0.5, 6},        {13, 0.5, 6},       {25, 0.1, 2},     {25, 0.5, 12},
        {1000, 0.3125, 312}, {1000, 0.0625, 62}, {1001, 0.5, 500}, {3, 0.25, 1},
        {13, 2.0 / 3, 9},    {1001, 0.85, 851},  {1001, 0.05, 50}, {2, 0.05, 1},
        {7, 0.25, 2},        {2, 0.999, 2},      {11, 0.85, 9},    {1000, 0.999, 999},
        {10, 0.999, 10},     {11, 0.3125, 3},    {128, 0.25, 32},  {1001, 0.45, 450},
        {2, 0.65, 1},        {11, 0.65, 7},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        detfeed__fraction f = {.count = 0, .ratio = cases[i].f};
        size_t got = detfeed__fraction_keep(&f, cases[i].n);
        if (got != cases[i].want) {
            fprintf(stderr, "  %zu * %.17g: %zu, Python %zu\n", cases[i].n, cases[i].f,
                    got, cases[i].want);
            bad++;
        }
    }
    CHECK_INT(bad, 0);
    detfeed__fraction one = {.count = 1, .ratio = 1}, five = {.count = 5, .ratio = 1};
    CHECK_INT(detfeed__fraction_keep(&one, 9), 9); /* 1 is all */
    CHECK_INT(detfeed__fraction_keep(&five, 9), 5);
    CHECK_INT(detfeed__fraction_keep(&five, 3), 3);
}

static void test_fraction_files(void)
{
    const char *yaml = at("det/data.yaml");
    /* 9 * 0.5 = 4.5 rounds to 4: im0 im1 im2.avif im3 (half up would add
     * im4.heic; a list without heic/avif/heif, or with a.pfm, another four).
     * im2.avif is decoded and found damaged. */
    detfeed_dataset *ds = open_with(yaml, (args){.ratio = 0.5}, 0);
    CHECK_STR(names_of(ds), "im0.png im1.png im3.png");
    CHECK_INT(STAT(ds, IMAGES), 4);
    CHECK_INT(STAT(ds, UNSUPPORTED), 0);
    CHECK_INT(STAT(ds, CORRUPT), 1);
    CHECK(tu_has_problem(ds, "det/images/train/im2.avif", 0, "AVIF"));
    CHECK_INT(STAT(ds, LEFT_OUT), 5);
    CHECK_INT(STAT(ds, ORPHAN_LABELS), 1); /* zz.txt; im6, im7's are expected */
    CHECK(has_note(ds, "the first 4 of 9 image files kept"));
    detfeed_dataset_destroy(ds);

    ds = open_with(yaml, (args){.count = 5}, 0);
    CHECK_STR(names_of(ds), "im0.png im1.png im3.png");
    CHECK_INT(STAT(ds, UNSUPPORTED), 0);
    CHECK_INT(STAT(ds, CORRUPT), 2); /* im2.avif, im4.heic: no image */
    CHECK_INT(STAT(ds, LEFT_OUT), 4);
    detfeed_dataset_destroy(ds);

    ds = open_with(yaml, (args){.count = 6}, 0);
    CHECK_STR(names_of(ds), "im0.png im1.png im3.png im5.png");
    detfeed_dataset_destroy(ds);

    ds = open_with(yaml, (args){.ratio = 1.0 / 18}, 0); /* max(1, round(0.5)) */
    CHECK_STR(names_of(ds), "im0.png");
    CHECK_INT(STAT(ds, LEFT_OUT), 8);
    CHECK_INT(STAT(ds, ORPHAN_LABELS), 1);
    detfeed_dataset_destroy(ds);

    const args all[] = {{.count = 1}, {.count = 100}, {.ratio = 1.0}, {0}};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        ds = open_with(yaml, all[i], 0);
        CHECK_STR(names_of(ds), "im0.png im1.png im3.png im5.png im6.png im7.png");
        CHECK_INT(STAT(ds, LEFT_OUT), 0);
        CHECK_INT(STAT(ds, UNSUPPORTED), 0);
        CHECK_INT(STAT(ds, CORRUPT), 3); /* im2.avif, im4.heic, im8.heif: no image */
        CHECK_INT(STAT(ds, ORPHAN_LABELS), 1);
        detfeed_dataset_destroy(ds);
    }

    /* A list: its image lines sorted (im0 im1 im3), 3 * 0.5 = 1.5 -> 2; the
     * notes.txt line takes no part in the count and is still reported. */
    ds = open_with(at("det/list.txt"), (args){.ratio = 0.5}, 0);
    CHECK_STR(names_of(ds), "im0.png im1.png");
    CHECK_INT(STAT(ds, LEFT_OUT), 1);
    CHECK_INT(STAT(ds, UNSUPPORTED), 0); /* not an image: a note of the list */
    CHECK(tu_has_problem(ds, "det/list.txt", 2, "names no image file"));
    detfeed_dataset_destroy(ds);
}

static void test_fraction_refused(void)
{
    detfeed_dataset *ds;
    detfeed_dataset_create(&ds, 0);
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_FRACTION, 0), DETFEED_EINVAL);
    CHECK(strstr(detfeed_dataset_last_error(ds), "fraction") != NULL &&
          strstr(detfeed_dataset_last_error(ds), "(0, 1]") != NULL);
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_FRACTION, -3),
              DETFEED_EINVAL);
    const double bad[] = {0.0, -0.5, 1.5, 2.0, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_INT(detfeed_dataset_set_float(ds, DETFEED_DATASET_FRACTION, bad[i]),
                  DETFEED_EINVAL);
    CHECK(strstr(detfeed_dataset_last_error(ds), "is not a ratio it accepts") != NULL);
    CHECK_INT(detfeed_dataset_set_float(ds, DETFEED_DATASET_NC, 1.0), DETFEED_EINVAL);
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_SINGLE_CLS, 2),
              DETFEED_EINVAL);
    CHECK(strstr(detfeed_dataset_last_error(ds), "single_cls") != NULL);
    int neg[] = {0, -1};
    CHECK_INT(detfeed_dataset_set_classes(ds, neg, 2), DETFEED_EINVAL);
    CHECK(strstr(detfeed_dataset_last_error(ds), "classes: -1 is negative") != NULL);
    CHECK_INT(detfeed_dataset_set_classes(ds, NULL, 1), DETFEED_EINVAL);
    detfeed_dataset_destroy(ds);
}

/* Whether the dataset's message holds `words`; prints it when not. */
static bool ds_says(const detfeed_dataset *ds, const char *words)
{
    const char *msg = detfeed_dataset_last_error(ds);
    if (strstr(msg, words) != NULL)
        return true;
    fprintf(stderr, "  message: \"%s\" (wanted \"%s\")\n", msg, words);
    return false;
}

/* A failure with a message, for the checks that a success clears it. */
static void fail_once(detfeed_dataset *ds)
{
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_FRACTION, 0), DETFEED_EINVAL);
    CHECK(ds_says(ds, "fraction"));
}

/* Every refusal of the dataset's setters and open names what failed; a
 * success leaves "" (the header's promise), whatever failed before. */
static void test_dataset_messages(void)
{
    detfeed_dataset *ds;
    detfeed_dataset_create(&ds, 0);
    CHECK_INT(detfeed_dataset_set_classes(ds, NULL, 3), DETFEED_EINVAL);
    CHECK(ds_says(ds, "classes: ids is NULL with n = 3"));
    fail_once(ds);
    CHECK_INT(detfeed_dataset_set_classes(ds, NULL, 0), 0);
    CHECK_STR(detfeed_dataset_last_error(ds), "");
    CHECK_INT(detfeed_dataset_set_split(ds, "bogus"), DETFEED_EINVAL);
    CHECK(ds_says(ds, "split: 'bogus' is not one of train, val, test"));
    fail_once(ds);
    CHECK_INT(detfeed_dataset_set_split(ds, "val"), 0);
    CHECK_STR(detfeed_dataset_last_error(ds), "");
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_MAX_LABELS, 0),
              DETFEED_EINVAL);
    CHECK(ds_says(ds, "max_labels: 0 is not a value it accepts (an integer from 1 to "
                      "10000000)"));
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_POLICY, 7), DETFEED_EINVAL);
    CHECK(ds_says(ds, "policy: 7"));
    CHECK_INT(detfeed_dataset_set_int(ds, (detfeed_dataset_param)99, 1),
              DETFEED_EINVAL);
    CHECK(ds_says(ds, "dataset parameter 99"));
    fail_once(ds);
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_NC, 3), 0);
    CHECK_STR(detfeed_dataset_last_error(ds), "");
    CHECK_INT(detfeed_dataset_set_float(ds, DETFEED_DATASET_FRACTION, 2.0),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_dataset_set_float(ds, DETFEED_DATASET_FRACTION, 0.5), 0);
    CHECK_STR(detfeed_dataset_last_error(ds), "");
    CHECK_INT(detfeed_dataset_set_limit(ds, (detfeed_codec_limit)9, 1), DETFEED_EINVAL);
    CHECK(ds_says(ds, "limit 9 is not a codec limit"));
    CHECK_INT(detfeed_dataset_set_limit(ds, DETFEED_LIMIT_MAX_WIDTH, 0),
              DETFEED_EINVAL);
    CHECK(ds_says(ds, "max_width: 0"));
    CHECK_INT(detfeed_dataset_set_limit(ds, DETFEED_LIMIT_MAX_WIDTH, 4096), 0);
    CHECK_STR(detfeed_dataset_last_error(ds), "");
    CHECK_INT(detfeed_dataset_set_split(ds, NULL), DETFEED_EINVAL);
    CHECK(ds_says(ds, "split: '(NULL)'"));
    CHECK_INT(detfeed_dataset_set_root(ds, NULL), 0);
    CHECK_STR(detfeed_dataset_last_error(ds), "");
    CHECK_INT(detfeed_dataset_open(ds, NULL), DETFEED_EINVAL);
    CHECK(ds_says(ds, "open: source is NULL"));
    /* Once opened (here, failing), every setting is fixed, by name. */
    CHECK(detfeed_dataset_open(ds, at("no-such-folder")) < 0);
    CHECK_INT(detfeed_dataset_open(ds, at("no-such-folder")), DETFEED_EBADSTATE);
    CHECK(ds_says(ds, "already open"));
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_VERIFY, 1),
              DETFEED_EBADSTATE);
    CHECK(ds_says(ds, "verify: settings are fixed once the dataset is open"));
    CHECK_INT(detfeed_dataset_set_split(ds, "train"), DETFEED_EBADSTATE);
    CHECK(ds_says(ds, "split: settings are fixed"));
    detfeed_dataset_destroy(ds);
}

/* ---- classes and single_cls ------------------------------------------------- */

/* Image `name`'s classes as "0 2" and its first box's x. */
static const char *classes_of(const detfeed_dataset *ds, const char *name, float *x0)
{
    static char buf[128];
    buf[0] = '\0';
    for (size_t i = 0; i < detfeed_dataset_size(ds); i++) {
        if (strstr(detfeed_dataset_image_path(ds, i), name) == NULL)
            continue;
        float cls[16], boxes[64];
        int n = detfeed_dataset_instance_count(ds, i);
        detfeed_dataset_labels(ds, i, cls, boxes, NULL);
        for (int k = 0; k < n && k < 16; k++)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%g", k ? " " : "",
                     (double)cls[k]);
        if (x0)
            *x0 = n ? boxes[0] : -1;
        return buf;
    }
    return "(not in the index)";
}

static void test_classes(void)
{
    const char *yaml = at("det/data.yaml");
    const int keep[] = {0, 2};
    detfeed_dataset *ds = open_with(yaml, (args){.classes = keep, .nclasses = 2}, 0);
    float x;
    CHECK_STR(classes_of(ds, "im0.png", &x), "0 2");
    CHECK(x == 0.5f);
    CHECK_STR(classes_of(ds, "im1.png", NULL), "");  /* now a background */
    CHECK_STR(classes_of(ds, "im3.png", &x), "2 0"); /* file order kept */
    CHECK(x == 0.2f);
    CHECK_STR(classes_of(ds, "im6.png", NULL), "0");
    CHECK_STR(classes_of(ds, "im7.png", NULL), "");
    CHECK_INT(STAT(ds, USABLE), 6); /* images stay */
    CHECK_INT(STAT(ds, INSTANCES), 5);
    CHECK_INT(STAT(ds, CLASS_FILTERED), 4);
    CHECK_INT(STAT(ds, LABELLED), 3);
    CHECK_INT(STAT(ds, BACKGROUNDS), 3);
    CHECK_INT(STAT(ds, MISSING_LABELS), 1); /* label files: unchanged */
    CHECK_INT(STAT(ds, EMPTY_LABELS), 0);
    CHECK(has_note(ds, "classes: 4 instances of other classes removed"));
    CHECK_INT(detfeed_dataset_class_count(ds), 3);
    detfeed_dataset_destroy(ds);

    /* An id the YAML does not have: refused when opening. */
    const int three[] = {0, 3};
    ds = open_with(yaml, (args){.classes = three, .nclasses = 2}, DETFEED_EINVAL);
    CHECK(strstr(detfeed_dataset_last_error(ds), "classes: 3 is not a class") != NULL);
    detfeed_dataset_destroy(ds);
    /* Without a YAML nc is unknown: any id >= 0 is taken. */
    const int seven[] = {7};
    ds = open_with(at("det/images/train"), (args){.classes = seven, .nclasses = 1}, 0);
    CHECK_INT(STAT(ds, INSTANCES), 0);
    CHECK_INT(STAT(ds, CLASS_FILTERED), 9);
    CHECK_INT(STAT(ds, BACKGROUNDS), 6);
    detfeed_dataset_destroy(ds);
}

static void test_single_cls(void)
{
    const char *yaml = at("det/data.yaml");
    detfeed_dataset *ds = open_with(yaml, (args){.single_cls = 1}, 0);
    CHECK_STR(classes_of(ds, "im0.png", NULL), "0 0 0");
    CHECK_STR(classes_of(ds, "im3.png", NULL), "0 0");
    CHECK_INT(STAT(ds, INSTANCES), 9);
    CHECK_INT(detfeed_dataset_class_count(ds), 1);
    CHECK_STR(detfeed_dataset_class_name(ds, 0), "item");
    CHECK(detfeed_dataset_class_name(ds, 1) == NULL);
    detfeed_dataset_destroy(ds);

    /* The classes filter uses the ids before single_cls makes them 0. */
    const int one[] = {1};
    ds = open_with(yaml, (args){.classes = one, .nclasses = 1, .single_cls = 1}, 0);
    float x;
    CHECK_STR(classes_of(ds, "im0.png", &x), "0");
    CHECK(x == 0.3f);
    CHECK_STR(classes_of(ds, "im7.png", NULL), "0 0");
    CHECK_STR(classes_of(ds, "im3.png", NULL), "");
    CHECK_INT(STAT(ds, INSTANCES), 4); /* im0's, im1's and im7's two */
    detfeed_dataset_destroy(ds);

    /* A one-class YAML: ids 1 and 2 are rejected, unless single_cls (which
     * Ultralytics does not check against nc). */
    ds = open_with(at("det/one.yaml"), (args){0}, 0);
    CHECK_INT(STAT(ds, CORRUPT),
              7); /* im0, im1, im3, im7 have ids >= 1; im2, im4, im8 */
    CHECK_INT(STAT(ds, USABLE), 2);
    detfeed_dataset_destroy(ds);
    ds = open_with(at("det/one.yaml"), (args){.single_cls = 1}, 0);
    CHECK_INT(STAT(ds, CORRUPT), 3); /* im2.avif, im4.heic, im8.heif */
    CHECK_INT(STAT(ds, USABLE), 6);
    detfeed_dataset_destroy(ds);
}

static void test_segments_and_keypoints(void)
{
    const int zero[] = {0}, one[] = {1};
    detfeed_dataset *ds =
        open_with(at("seg/data.yaml"), (args){.classes = zero, .nclasses = 1}, 0);
    CHECK_INT(detfeed_dataset_task(ds), DETFEED_TASK_SEGMENT);
    const detfeed__labels *l = &detfeed__dataset_image(ds, 0)->labels;
    if (CHECK_INT(l->n, 2) && CHECK(l->seg_start != NULL)) {
        CHECK(l->seg_start[0] == 0 && l->seg_start[1] == 3 && l->seg_start[2] == 6);
        const float want[12] = {0.1f, 0.1f, 0.3f, 0.1f, 0.3f, 0.3f,
                                0.2f, 0.6f, 0.4f, 0.6f, 0.3f, 0.8f};
        CHECK(memcmp(l->seg_xy, want, sizeof want) == 0);
        /* the second's box, as segments2boxes computes it in float32 */
        CHECK(l->boxes[4] == (0.2f + 0.4f) / 2 && l->boxes[5] == (0.6f + 0.8f) / 2);
    }
    detfeed_dataset_destroy(ds);
    ds = open_with(at("seg/data.yaml"), (args){.classes = one, .nclasses = 1}, 0);
    l = &detfeed__dataset_image(ds, 0)->labels;
    if (CHECK_INT(l->n, 1) && CHECK(l->seg_start != NULL)) {
        CHECK(l->seg_start[0] == 0 && l->seg_start[1] == 4);
        CHECK(l->seg_xy[0] == 0.5f && l->seg_xy[7] == 0.9f);
        CHECK(l->cls[0] == 1 && l->boxes[0] == (0.5f + 0.9f) / 2);
    }
    detfeed_dataset_destroy(ds);
    const int none[] = {5};
    ds = open_with(at("seg/images"), (args){.classes = none, .nclasses = 1}, 0);
    CHECK_INT(detfeed_dataset_task(ds), DETFEED_TASK_SEGMENT);
    CHECK_INT(detfeed_dataset_instance_count(ds, 0), 0);
    CHECK(detfeed__dataset_image(ds, 0)->labels.seg_start == NULL);
    detfeed_dataset_destroy(ds);

    ds = open_with(at("pose/data.yaml"), (args){.classes = zero, .nclasses = 1}, 0);
    CHECK_INT(detfeed_dataset_task(ds), DETFEED_TASK_POSE);
    float cls[3], boxes[12], kpts[3 * 2 * 3];
    if (CHECK_INT(detfeed_dataset_instance_count(ds, 0), 2)) {
        detfeed_dataset_labels(ds, 0, cls, boxes, kpts);
        const float want[12] = {0.4f,  0.4f,  2, 0.6f,  0.6f,  1,
                                0.65f, 0.65f, 1, 0.75f, 0.75f, 0};
        CHECK(memcmp(kpts, want, sizeof want) == 0);
        CHECK(cls[0] == 0 && cls[1] == 0 && boxes[4] == 0.7f);
    }
    detfeed_dataset_destroy(ds);
    ds = open_with(at("pose/data.yaml"), (args){.classes = one, .nclasses = 1}, 0);
    if (CHECK_INT(detfeed_dataset_instance_count(ds, 0), 1)) {
        detfeed_dataset_labels(ds, 0, cls, boxes, kpts);
        CHECK(kpts[0] == 0.25f && kpts[3] == 0.35f && kpts[5] == 2 && cls[0] == 1);
    }
    detfeed_dataset_destroy(ds);
}

/* The view the augmenter reads (dataset_access.h) is the index's labels. */
static void test_label_view(void)
{
    const char *sources[] = {"seg/data.yaml", "pose/data.yaml", "det/one.yaml"};
    for (size_t k = 0; k < sizeof sources / sizeof sources[0]; k++) {
        detfeed_dataset *ds = open_with(at(sources[k]), (args){0}, 0);
        size_t n = detfeed_dataset_size(ds);
        for (size_t i = 0; i < n; i++) {
            const detfeed__labels *l = &detfeed__dataset_image(ds, i)->labels;
            detfeed__label_view v = detfeed__dataset_label_view(ds, i);
            CHECK(v.n == l->n && v.nkpt == l->nkpt && v.cls == l->cls &&
                  v.boxes == l->boxes && v.kpts == l->kpts &&
                  v.seg_start == l->seg_start && v.seg_xy == l->seg_xy);
        }
        detfeed__label_view past = detfeed__dataset_label_view(ds, n);
        CHECK(past.n == 0 && past.cls == NULL && past.boxes == NULL &&
              past.seg_start == NULL);
        detfeed_dataset_destroy(ds);
    }
}

/* ---- the RAM cache budget --------------------------------------------------- */

static void test_ram_budget(void)
{
    /* 8.4: need * 2 <= available caches everything (Ultralytics refuses
     * only when need * 2 > available); else floor(available / 2). */
    CHECK_INT(detfeed__cache_ram_budget(100, 200, 100), 100);
    CHECK_INT(detfeed__cache_ram_budget(100, 199, 100), 99);
    CHECK_INT(detfeed__cache_ram_budget(100, 1, 100), 0);
    CHECK_INT(detfeed__cache_ram_budget(0, 0, 100), 0);
    /* 8.3: need * 1.5 <= available; else floor(available / 1.5). */
    CHECK_INT(detfeed__cache_ram_budget(100, 150, 50), 100);
    CHECK_INT(detfeed__cache_ram_budget(100, 149, 50), 99);
    CHECK_INT(detfeed__cache_ram_budget(1000, 1000, 50), 666);
    /* No overflow at the extremes. */
    CHECK(detfeed__cache_ram_budget(UINT64_MAX, UINT64_MAX, 100) == UINT64_MAX / 2);
    CHECK(detfeed__cache_ram_budget(UINT64_MAX, UINT64_MAX, 50) ==
          UINT64_MAX / 3 * 2 + (UINT64_MAX % 3) * 2 / 3);
    CHECK_INT(detfeed__cache_ram_budget(5, UINT64_MAX, 100), 5);

    uint64_t b = 0;
    CHECK(detfeed__meminfo_available("MemTotal:       16000000 kB\n"
                                     "MemFree:         1000000 kB\n"
                                     "MemAvailable:    8000000 kB\n"
                                     "Buffers:          100000 kB\n",
                                     &b) &&
          b == 8000000ull * 1024);
    CHECK(!detfeed__meminfo_available("MemTotal: 1 kB\nMemFree: 1 kB\n", &b));
    CHECK(!detfeed__meminfo_available("MemAvailable: 12 MB\n", &b));
    CHECK(!detfeed__meminfo_available("", &b));
    detfeed__msg msg;
    CHECK(detfeed__mem_available(&b, &msg) == DETFEED_OK && b > 0);
}

static detfeed_loader *loader_with(const char *const *kv, size_t n, int want_rc)
{
    detfeed_loader *l;
    CHECK_INT(detfeed_loader_create(&l, 0), 0);
    CHECK_INT(detfeed_loader_set(l, "imgsz", "64"), 0);
    CHECK_INT(detfeed_loader_set(l, "augment", "0"), 0);
    CHECK_INT(detfeed_loader_set(l, "batch", "4"), 0);
    for (size_t i = 0; i + 1 < n; i += 2)
        if (!CHECK_INT(detfeed_loader_set(l, kv[i], kv[i + 1]), 0))
            fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    CHECK(detfeed_loader_cache(l) == NULL);
    int rc = detfeed_loader_open(l, at("det/data.yaml"));
    if (!CHECK_INT(rc, want_rc))
        fprintf(stderr, "  open: %s\n", detfeed_loader_last_error(l));
    return l;
}

#define CSTAT(l, s) detfeed_cache_stat_get(detfeed_loader_cache(l), DETFEED_CACHE_##s)

static void test_cache_ram(void)
{
    const char *ram[] = {"cache_bytes", "ram"};
    detfeed_loader *l = loader_with(ram, 2, 0);
    const detfeed_dataset *ds = detfeed_loader_dataset(l);
    uint64_t need;
    int64_t images;
    detfeed__cache_plan(ds, 64, UINT64_MAX, &need, &images);
    CHECK_INT(images, 6);
    CHECK_INT(CSTAT(l, IMAGES), 6); /* everything, on any machine with 2 KiB free */
    CHECK_INT(CSTAT(l, BYTES), (int64_t)need);
    CHECK_INT(CSTAT(l, BUDGET), (int64_t)need);
    CHECK_INT(CSTAT(l, ON_DEMAND), 0);
    detfeed_loader_destroy(l);

    /* The plan's first fit: one byte short of everything leaves out one
     * image, and the budget of a numeric setting is kept as given. */
    const char *short_of[] = {"cache_bytes", NULL};
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)need - 1);
    short_of[1] = text;
    l = loader_with(short_of, 2, 0);
    CHECK_INT(CSTAT(l, BUDGET), (int64_t)need - 1);
    CHECK_INT(CSTAT(l, ON_DEMAND), 1);
    detfeed_loader_destroy(l);
    const char *none[] = {"cache_bytes", "0"};
    l = loader_with(none, 2, 0);
    CHECK_INT(CSTAT(l, IMAGES), 0);
    CHECK_INT(CSTAT(l, BUDGET), 0);
    detfeed_loader_destroy(l);

    detfeed_loader_create(&l, 0);
    CHECK_INT(
        detfeed_loader_set_int(l, DETFEED_LOADER_CACHE_BYTES, DETFEED_CACHE_BYTES_RAM),
        0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_CACHE_BYTES, -2),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set(l, "cache_bytes", "-2"), DETFEED_EINVAL);
    CHECK(strstr(detfeed_loader_last_error(l), "a byte count >= 0, or ram") != NULL);
    CHECK_INT(detfeed_loader_set(l, "cache_bytes", "all"), DETFEED_EINVAL);
    detfeed_loader_destroy(l);
}

/* ---- the loader settings ---------------------------------------------------- */

static void test_loader_settings(void)
{
    const char *half[] = {"fraction", "0.5"};
    detfeed_loader *l = loader_with(half, 2, 0);
    CHECK_STR(names_of(detfeed_loader_dataset(l)), "im0.png im1.png im3.png");
    detfeed_loader_destroy(l);
    const char *count[] = {"fraction", "6"};
    l = loader_with(count, 2, 0);
    CHECK_STR(names_of(detfeed_loader_dataset(l)), "im0.png im1.png im3.png im5.png");
    detfeed_loader_destroy(l);
    const char *all[] = {"fraction", "1"};
    l = loader_with(all, 2, 0);
    CHECK_INT(detfeed_dataset_size(detfeed_loader_dataset(l)), 6);
    detfeed_loader_destroy(l);

    const char *cls[] = {"classes", " 0, 2 "};
    l = loader_with(cls, 2, 0);
    CHECK_INT(STAT(detfeed_loader_dataset(l), INSTANCES), 5);
    detfeed_loader_destroy(l);
    const char *every[] = {"classes", "0", "classes", ""};
    l = loader_with(every, 4, 0);
    CHECK_INT(STAT(detfeed_loader_dataset(l), INSTANCES), 9);
    detfeed_loader_destroy(l);
    const char *beyond[] = {"classes", "0,5"};
    l = loader_with(beyond, 2, DETFEED_EINVAL);
    CHECK(strstr(detfeed_loader_last_error(l), "classes: 5 is not a class") != NULL);
    detfeed_loader_destroy(l);

    /* single_cls: every label of samples and batches is class 0. */
    const char *one[] = {"single_cls", "1", "classes", "1,2"};
    l = loader_with(one, 4, 0);
    CHECK_INT(STAT(detfeed_loader_dataset(l), INSTANCES), 6);
    int zeros = 0, seen = 0;
    for (uint64_t i = 0; i < 6; i++) {
        int w, h, n = 0;
        float c[8], b[32];
        detfeed_loader_sample_size(l, i, &w, &h);
        uint8_t *img = malloc((size_t)w * h * 3);
        CHECK_INT(detfeed_loader_sample(l, 0, i, img, 8, &n, c, b, NULL), 0);
        for (int k = 0; k < n; k++, seen++)
            zeros += c[k] == 0;
        free(img);
    }
    CHECK_INT(seen, 6);
    CHECK_INT(zeros, 6);
    int sw, sh;
    uint64_t size = detfeed_dataset_size(detfeed_loader_dataset(l));
    CHECK_INT(detfeed_loader_sample_size(l, size - 1, &sw, &sh), 0);
    CHECK_INT(detfeed_loader_sample_size(l, size, &sw, &sh), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_sample_size(l, 0, NULL, &sh), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_sample_size(NULL, 0, &sw, &sh), DETFEED_EINVAL);
    const detfeed_batch *batch;
    CHECK_INT(detfeed_loader_start(l, 0), 0);
    int instances = 0, nonzero = 0;
    while (detfeed_loader_next(l, &batch) == DETFEED_OK) {
        const float *c = detfeed_batch_cls(batch);
        for (int k = 0; k < detfeed_batch_instances(batch); k++, instances++)
            nonzero += c[k] != 0;
        detfeed_loader_release(l, batch);
    }
    CHECK_INT(instances, 6);
    CHECK_INT(nonzero, 0);
    detfeed_loader_destroy(l);

    static const struct {
        const char *name, *value, *words;
    } bad[] = {
        {"fraction", "0", "fraction: '0' is not a value it accepts (a ratio in (0, 1]"},
        {"fraction", "0.0", "a whole count >= 1"},
        {"fraction", "1.5", "1 means all"},
        {"fraction", "-2", "fraction: '-2'"},
        {"fraction", "half", "fraction: 'half'"},
        {"classes", "0,-1", "classes: -1 is negative"},
        {"classes", "0,,2", "classes: '0,,2' is not a value it accepts (class ids"},
        {"classes", "a", "empty for all classes"},
        {"classes", "0,", "classes: '0,'"},
        {"single_cls", "2", "an integer from 0 to 1"},
    };
    detfeed_loader_create(&l, 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_INT(detfeed_loader_set(l, bad[i].name, bad[i].value), DETFEED_EINVAL);
        if (!CHECK(strstr(detfeed_loader_last_error(l), bad[i].words) != NULL))
            fprintf(stderr, "  %s=%s: %s\n", bad[i].name, bad[i].value,
                    detfeed_loader_last_error(l));
    }
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_FRACTION, 4), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_FRACTION, 0), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set_float(l, DETFEED_LOADER_FRACTION, 0.25), 0);
    CHECK_INT(detfeed_loader_set_float(l, DETFEED_LOADER_FRACTION, 1.01),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_CLASSES, 1), DETFEED_EINVAL);
    const int ids[] = {2, 0};
    CHECK_INT(detfeed_loader_set_classes(l, ids, 2), 0);
    CHECK_INT(detfeed_loader_set_classes(l, NULL, 0), 0);
    detfeed_loader_param p;
    CHECK(detfeed_loader_param_parse("single_cls", &p) == 0 &&
          p == DETFEED_LOADER_SINGLE_CLS);
    CHECK(detfeed_loader_param_parse("fraction", &p) == 0 &&
          p == DETFEED_LOADER_FRACTION);
    CHECK(detfeed_loader_param_parse("classes", &p) == 0 &&
          p == DETFEED_LOADER_CLASSES);
    detfeed_loader_destroy(l);
}

int main(void)
{
    if (!tu_temp_dir(root, sizeof root, "args"))
        return tu_finish("test_dataset_args");
    make_tree();
    test_fraction_rounding();
    test_fraction_files();
    test_fraction_refused();
    test_dataset_messages();
    test_classes();
    test_single_cls();
    test_segments_and_keypoints();
    test_label_view();
    test_ram_budget();
    test_cache_ram();
    test_loader_settings();
    CHECK(tu_remove_tree(root));
    return tu_finish("test_dataset_args");
}
