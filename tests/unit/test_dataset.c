/*
 * test_dataset.c - the dataset index on a generated tree holding every kind
 * of bad input (each skipped and counted with its reason, or the first one
 * an error under the fail policy), and the counts of the shared COCO sets.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
    uint8_t *px = calloc((size_t)w * h * 3, 1);
    for (int i = 0; i < w * h * 3; i++)
        px[i] = (uint8_t)(i * 13);
    CHECK_INT(detfeed_codec_write_png(c, at(rel), px, (size_t)w * 3, w, h), 0);
    free(px);
}

static void make_tree(void)
{
    detfeed_codec *c;
    detfeed_codec_create(&c, 0);
    const char *dirs[] = {"images",    "images/train", "images/train/h.png",
                          "labels",    "labels/train", "images/val",
                          "labels/val"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        mkdir(at(dirs[i]), 0755);
    write_image(c, "images/train/a.png", 64, 48);   /* labelled, 2 boxes */
    write_image(c, "images/train/b.png", 32, 32);   /* no label file */
    write_image(c, "images/train/c.png", 40, 30);   /* empty label file */
    write_image(c, "images/train/d.png", 40, 30);   /* a bad label line */
    write_image(c, "images/train/e.PNG", 20, 20);   /* upper-case suffix, CRLF + BOM */
    write_image(c, "images/train/s.png", 5, 20);    /* too small */
    write_image(c, "images/train/dup.png", 16, 16); /* duplicate rows */
    write_image(c, "images/train/h.png/inner.png", 12,
                12); /* inside a folder named .png */
    write_image(c, "images/val/v.png", 16, 16);
    write_image(c, "images/train/q.png", 16, 16); /* its label "file" is a folder */
    mkdir(at("labels/train/q.txt"), 0755);
    write_text("images/train/f.heic", "heic");      /* a .heic holding no image */
    write_text("images/train/g.png", "");           /* zero bytes */
    write_text("images/train/t.jpg", "not a jpeg"); /* text named .jpg */
    write_text("images/train/.hidden.png", "");     /* skipped: hidden */
    write_text("labels/train/a.txt", "0 0.5 0.5 0.2 0.2\n2 0.1 0.1 0.1 0.1\n");
    write_text("labels/train/c.txt", "");
    write_text("labels/train/d.txt", "0 0.5 0.5 0.2 0.2\n1 0.5 nan 0.2 0.2\n");
    write_text("labels/train/e.txt", "\xEF\xBB\xBF"
                                     "1 0.5 0.5 0.2 0.2\r\n");
    write_text("labels/train/dup.txt", "1 0.5 0.5 0.2 0.2\n1 0.5 0.5 0.2 0.2\n");
    write_text("labels/train/orphan.txt", "0 0.5 0.5 0.2 0.2\n");
    write_text("labels/train/s.txt", "0 0.5 0.5 0.2 0.2\n");
    write_text("data.yaml", "# no 'path': the YAML's folder is the root\n"
                            "train: images/train\n"
                            "val: [images/val, images/missing]\n"
                            "names:\n  0: cat\n  1: dog\n  2: bird\n");
    write_text("bad.yaml", "train: images/train\nnames: [a, b\n");
    write_text("file-path.yaml",
               "path: list.txt\ntrain: images/train\nnames: [a, b, c]\n");
    write_text("list.txt", "images/train/a.png\n./images/train/b.png\n\n"
                           "images/train/h.png\nimages/train/nothere.png\n");
    detfeed_codec_destroy(c);
}

static detfeed_dataset *open_ds(const char *source, int policy, const char *split)
{
    detfeed_dataset *ds;
    CHECK_INT(detfeed_dataset_create(&ds, 0), 0);
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_POLICY, policy), 0);
    if (split)
        CHECK_INT(detfeed_dataset_set_split(ds, split), 0);
    int rc = detfeed_dataset_open(ds, source);
    if (rc != DETFEED_OK && policy == DETFEED_POLICY_SKIP)
        fprintf(stderr, "open %s: %s\n", source, detfeed_dataset_last_error(ds));
    return ds;
}

#define STAT(ds, s) detfeed_dataset_stat_get(ds, DETFEED_STAT_##s)

static void test_yaml_train(void)
{
    detfeed_dataset *ds = open_ds(at("data.yaml"), DETFEED_POLICY_SKIP, NULL);
    /* a, b, c, d, e, s, dup, inner, g, t, q: 11 jpg/jpeg/png files; f.heic */
    CHECK_INT(STAT(ds, IMAGES), 12);
    CHECK_INT(STAT(ds, UNSUPPORTED), 0);
    /* d (label line), s (small), g (empty), t (text), q (label is a folder),
     * f.heic (no image) */
    CHECK_INT(STAT(ds, CORRUPT), 6);
    CHECK_INT(STAT(ds, USABLE), 6); /* a, b, c, e, dup, inner */
    CHECK_INT(STAT(ds, LABELLED), 3);
    CHECK_INT(STAT(ds, BACKGROUNDS), 3);
    CHECK_INT(STAT(ds, MISSING_LABELS), 2); /* b, inner */
    CHECK_INT(STAT(ds, EMPTY_LABELS), 1);
    CHECK_INT(STAT(ds, INSTANCES), 4);
    CHECK_INT(STAT(ds, DUPLICATES), 1);
    CHECK_INT(STAT(ds, REJECTED_LINES), 1);
    CHECK_INT(STAT(ds, ORPHAN_LABELS), 1);
    CHECK_INT(detfeed_dataset_class_count(ds), 3);
    CHECK_STR(detfeed_dataset_class_name(ds, 1), "dog");
    CHECK(tu_has_problem(ds, "labels/train/d.txt", 2, "not finite"));
    CHECK(tu_has_problem(ds, "labels/train/q.txt", 0, "not a regular file"));
    CHECK(tu_has_problem(ds, "images/train/s.png", 0, "below 10 pixels"));
    CHECK(tu_has_problem(ds, "images/train/g.png", 0, "empty"));
    CHECK(tu_has_problem(ds, "images/train/t.jpg", 0,
                         "not an image of a format detfeed reads"));
    CHECK(tu_has_problem(ds, "images/train/f.heic", 0,
                         "not an image of a format detfeed reads"));
    CHECK(tu_has_problem(ds, "labels/train/orphan.txt", 0, "without an image"));
    uint64_t done = 0, total = 0; /* nothing running; indexing ended complete */
    CHECK(detfeed_dataset_progress(ds, &done, &total) == NULL);
    CHECK(total >= 12 && done == total);
    CHECK(tu_has_problem(ds, "labels/train/dup.txt", 0, "1 duplicate"));
    char *folder = realpath(root, NULL);
    CHECK_STR(detfeed_dataset_root(ds), folder);
    CHECK_STR(detfeed_dataset_root_rule(ds), "no 'path' in the YAML: its folder");
    free(folder);
    /* Order is the sorted paths; a.png first with its two boxes. */
    CHECK(strstr(detfeed_dataset_image_path(ds, 0), "images/train/a.png") != NULL);
    int w, h;
    CHECK(detfeed_dataset_image_size(ds, 0, &w, &h) == 0 && w == 64 && h == 48);
    float cls[2], boxes[8];
    CHECK_INT(detfeed_dataset_instance_count(ds, 0), 2);
    CHECK_INT(detfeed_dataset_labels(ds, 0, cls, boxes, NULL), 0);
    CHECK(cls[0] == 0 && cls[1] == 2 && boxes[4] == 0.1f);
    CHECK_INT(detfeed_dataset_task(ds), DETFEED_TASK_DETECT);
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_POLICY, 0),
              DETFEED_EBADSTATE);
    CHECK_INT(detfeed_dataset_open(ds, at("data.yaml")), DETFEED_EBADSTATE);
    detfeed_dataset_destroy(ds);
}

static void test_fail_policy(void)
{
    detfeed_dataset *ds = open_ds(at("data.yaml"), DETFEED_POLICY_FAIL, NULL);
    /* Sorted order: a, b, c, d -> d's label line is the first bad sample. */
    const char *msg = detfeed_dataset_last_error(ds);
    CHECK(strstr(msg, "labels/train/d.txt:2:") != NULL &&
          strstr(msg, "not finite") != NULL);
    detfeed_dataset_destroy(ds);
    /* a split entry that is not there: the dataset is missing, whatever the
     * policy (test_other_sources) */
    ds = open_ds(at("data.yaml"), DETFEED_POLICY_FAIL, "val");
    CHECK(strstr(detfeed_dataset_last_error(ds),
                 "data.yaml:3: 'val' entry 'images/missing' is ") != NULL);
    detfeed_dataset_destroy(ds);
}

static void test_other_sources(void)
{
    /* Ultralytics fails on a split entry that is not there (or downloads the
     * dataset): so does the open, under the skip policy too */
    detfeed_dataset *ds;
    detfeed_dataset_create(&ds, 0);
    CHECK_INT(detfeed_dataset_set_split(ds, "val"), 0);
    CHECK_INT(detfeed_dataset_open(ds, at("data.yaml")), DETFEED_EIO);
    const char *msg = detfeed_dataset_last_error(ds);
    CHECK(strstr(msg, "data.yaml:3: 'val' entry 'images/missing' is ") != NULL &&
          strstr(msg, "images/missing, which does not exist") != NULL &&
          strstr(msg, "no 'path' in the YAML: its folder") != NULL);
    detfeed_dataset_destroy(ds);

    ds = open_ds(at("list.txt"), DETFEED_POLICY_SKIP, NULL);
    CHECK_INT(STAT(ds, IMAGES), 4);
    CHECK_INT(STAT(ds, USABLE), 2);
    CHECK_INT(STAT(ds, CORRUPT), 2);
    CHECK(tu_has_problem(ds, "images/train/h.png", 0, "not a regular file"));
    CHECK(tu_has_problem(ds, "images/train/nothere.png", 0, "cannot open"));
    detfeed_dataset_destroy(ds);

    ds = open_ds(at("images/train"), DETFEED_POLICY_SKIP, NULL);
    CHECK_INT(STAT(ds, USABLE), 6);
    detfeed_dataset_destroy(ds);

    /* a relative path is never taken from the YAML's folder: not there from
     * the working folder, it is under datasets_dir (test_resolve.c has the
     * rules) */
    detfeed_dataset_create(&ds, 0);
    CHECK_INT(detfeed_dataset_set_datasets_dir(ds, at("dd")), 0);
    CHECK_INT(detfeed_dataset_open(ds, at("file-path.yaml")), DETFEED_EIO);
    CHECK(strstr(detfeed_dataset_last_error(ds),
                 "path: list.txt under datasets_dir ") != NULL);
    detfeed_dataset_destroy(ds);

    detfeed_dataset_create(&ds, 0);
    CHECK_INT(detfeed_dataset_open(ds, at("bad.yaml")), DETFEED_EFORMAT);
    CHECK(strstr(detfeed_dataset_last_error(ds), "bad.yaml:2: malformed YAML") != NULL);
    detfeed_dataset_destroy(ds);
    detfeed_dataset_create(&ds, 0);
    CHECK_INT(detfeed_dataset_set_split(ds, "dev"), DETFEED_EINVAL);
    CHECK_INT(detfeed_dataset_set_int(ds, (detfeed_dataset_param)99, 1),
              DETFEED_EINVAL);
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_POLICY, 7), DETFEED_EINVAL);
    CHECK_INT(detfeed_dataset_open(ds, at("nothing.yaml")), DETFEED_EIO);
    CHECK(strstr(detfeed_dataset_last_error(ds), "nothing.yaml") != NULL);
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_POLICY, 1),
              DETFEED_EBADSTATE);
    detfeed_dataset_destroy(ds);
}

/* The problems of the file whose name ends in `tail`. */
static int problems_of(const detfeed_dataset *ds, const char *tail)
{
    int n = 0;
    for (size_t i = 0; i < detfeed_dataset_problem_count(ds); i++) {
        const char *file, *reason;
        int line;
        detfeed_dataset_problem(ds, i, &file, &line, &reason);
        size_t a = strlen(file), b = strlen(tail);
        if (a >= b && strcmp(file + a - b, tail) == 0) {
            fprintf(stderr, "  %s:%d: %s\n", file, line, reason);
            n++;
        }
    }
    return n;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Writes `n` bytes of `text` repeated `times` times after `head` into `rel`. */
static void write_repeated(const char *rel, const char *head, const char *text,
                           size_t times)
{
    FILE *f = fopen(at(rel), "wb");
    CHECK(f != NULL && fputs(head, f) >= 0);
    for (size_t k = 0; f && k < times; k++)
        fputs(text, f);
    if (f)
        fclose(f);
}

/* Image lists are read a chunk at a time whatever their size: a list of
 * 1,000,000 lines opens (in seconds), a line break cut by a chunk's end
 * (U+2028, 3 bytes, across the first 1 MiB) is one break, and a line
 * longer than 64 KiB is left out as a problem at its line while the lines
 * after it are read. */
static void test_large_lists(void)
{
    FILE *f = fopen(at("million.txt"), "wb");
    CHECK(f != NULL && fputs("images/train/a.png\n", f) >= 0);
    for (int k = 1; f && k < 1000000; k++)
        fprintf(f, "images/absent/%07d.png\n", k);
    if (f)
        fclose(f);
    double t0 = now_s();
    detfeed_dataset *ds = open_ds(at("million.txt"), DETFEED_POLICY_SKIP, NULL);
    double secs = now_s() - t0;
    CHECK_INT(STAT(ds, IMAGES), 1000000);
    CHECK_INT(STAT(ds, USABLE), 1);
    CHECK_INT(STAT(ds, CORRUPT), 999999);
    fprintf(stderr, "  a list of 1,000,000 lines opened in %.2f s\n", secs);
    CHECK(secs < 60);
    detfeed_dataset_destroy(ds);
    /* 21-byte lines after a first line padded with 6 (5) spaces, which are
     * trimmed: a break's first (second) byte is the first chunk's last */
    const char line[] = "images/train/b.png\xE2\x80\xA8";
    const char *heads[] = {"images/train/b.png      \xE2\x80\xA8",
                           "images/train/b.png     \xE2\x80\xA8"};
    for (int k = 0; k < 2; k++) {
        write_repeated("breaks.txt", heads[k], line, 99999);
        ds = open_ds(at("breaks.txt"), DETFEED_POLICY_SKIP, NULL);
        CHECK_INT(STAT(ds, IMAGES), 100000);
        CHECK_INT(STAT(ds, USABLE), 100000);
        CHECK_INT(problems_of(ds, "breaks.txt"), 0);
        detfeed_dataset_destroy(ds);
    }
    char *longline = malloc(70002);
    memset(longline, 'x', 70000);
    memcpy(longline + 70000, "\n", 2);
    write_repeated("long.txt", "images/train/a.png\n", longline, 1);
    FILE *g = fopen(at("long.txt"), "ab");
    CHECK(g && fputs("images/train/b.png\nimages/train/nothere.png\n", g) >= 0);
    if (g)
        fclose(g);
    free(longline);
    ds = open_ds(at("long.txt"), DETFEED_POLICY_SKIP, NULL);
    CHECK_INT(STAT(ds, USABLE), 2);
    CHECK(
        tu_has_problem(ds, "long.txt", 2, "a line longer than 65536 bytes: left out"));
    CHECK(tu_has_problem(ds, "images/train/nothere.png", 0, "cannot open"));
    detfeed_dataset_destroy(ds);
}

/* An image with 20,000 boxes is kept (Ultralytics keeps it) with every box
 * in its validation batch; max_labels, set lower, leaves it out with a
 * problem saying why. */
static void test_many_labels(void)
{
    detfeed_codec *c;
    detfeed_codec_create(&c, 0);
    mkdir(at("many"), 0755);
    mkdir(at("many/images"), 0755);
    mkdir(at("many/labels"), 0755);
    write_image(c, "many/images/crowd.png", 400, 400);
    detfeed_codec_destroy(c);
    FILE *f = fopen(at("many/labels/crowd.txt"), "w");
    for (int k = 0; f && k < 20000; k++)
        fprintf(f, "%d %.5f %.5f 0.004 0.004\n", k % 80, 0.005 + (k % 141) * 0.007,
                0.005 + (k / 141) * 0.007);
    if (f)
        fclose(f);
    detfeed_dataset *ds = open_ds(at("many/images"), DETFEED_POLICY_SKIP, NULL);
    CHECK_INT(STAT(ds, USABLE), 1);
    CHECK_INT(STAT(ds, INSTANCES), 20000);
    detfeed_dataset_destroy(ds);
    detfeed_dataset_create(&ds, 0);
    CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_MAX_LABELS, 10000), 0);
    CHECK(detfeed_dataset_open(ds, at("many/images")) != DETFEED_OK); /* none usable */
    CHECK(tu_has_problem(ds, "crowd.txt", 0, "more than 10000 labels in the file"));
    detfeed_dataset_destroy(ds);
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_AUGMENT, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, 1);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, 416);
    CHECK_INT(detfeed_loader_set(l, "max_labels", "20000"), 0);
    CHECK_INT(detfeed_loader_open(l, at("many/images")), 0);
    CHECK_INT(detfeed_loader_start(l, 0), 0);
    const detfeed_batch *b;
    CHECK_INT(detfeed_loader_next(l, &b), 0);
    CHECK_INT(detfeed_batch_instances(b), 20000);
    detfeed_loader_release(l, b);
    detfeed_loader_destroy(l);
    detfeed_loader_create(&l, 0);
    CHECK_INT(detfeed_loader_set(l, "max_labels", "19999"), 0);
    CHECK(detfeed_loader_open(l, at("many/images")) != DETFEED_OK);
    CHECK(strstr(detfeed_loader_last_error(l), "more than 19999 labels") != NULL);
    detfeed_loader_destroy(l);
}

/* The shared COCO sets: counts computed independently from the files (and,
 * for coco128, stated in shared/data/README.md). */
static void test_shared(void)
{
    const char *data = getenv("DETFEED_TEST_DATA");
    if (data == NULL || access(data, R_OK) != 0) {
        tu_skip("DETFEED_TEST_DATA not set or unreadable: the shared data counts");
        return;
    }
    static const struct {
        const char *source, *split;
        long images, labelled, backgrounds, orphans, instances;
        int task;
    } sets[] = {
        {"coco128", NULL, 128, 126, 2, 2, 929, DETFEED_TASK_DETECT},
        {"coco128/coco128.yaml", "train", 128, 126, 2, 2, 929, DETFEED_TASK_DETECT},
        {"coco8", NULL, 8, 8, 0, 0, 30, DETFEED_TASK_DETECT},
        {"coco8/coco8.yaml", "val", 4, 4, 0, 0, 17, DETFEED_TASK_DETECT},
        {"coco8-seg/coco8-seg.yaml", "train", 4, 4, 0, 0, 13, DETFEED_TASK_SEGMENT},
        {"coco8-seg", NULL, 8, 8, 0, 0, 30, DETFEED_TASK_SEGMENT},
        {"coco8-pose/coco8-pose.yaml", "train", 4, 4, 0, 0, 7, DETFEED_TASK_POSE},
        {"coco8-pose/coco8-pose.yaml", "val", 4, 4, 0, 0, 14, DETFEED_TASK_POSE},
    };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", data, sets[i].source);
        detfeed_dataset *ds = open_ds(path, DETFEED_POLICY_FAIL, sets[i].split);
        /* Every check runs (no short circuit), so one failure shows them all. */
        int bad = !CHECK_INT(STAT(ds, IMAGES), sets[i].images);
        bad += !CHECK_INT(STAT(ds, LABELLED), sets[i].labelled);
        bad += !CHECK_INT(STAT(ds, BACKGROUNDS), sets[i].backgrounds);
        bad += !CHECK_INT(STAT(ds, ORPHAN_LABELS), sets[i].orphans);
        bad += !CHECK_INT(STAT(ds, INSTANCES), sets[i].instances);
        bad += !CHECK_INT(STAT(ds, CORRUPT), 0);
        bad += !CHECK_INT(STAT(ds, DUPLICATES), 0);
        bad += !CHECK_INT(detfeed_dataset_task(ds), sets[i].task);
        bool ok = bad == 0;
        if (!ok)
            fprintf(stderr, "  in %s (%s)\n", path, detfeed_dataset_last_error(ds));
        if (sets[i].task == DETFEED_TASK_POSE) {
            int k, d;
            detfeed_dataset_kpt_shape(ds, &k, &d);
            const int *flip = detfeed_dataset_flip_idx(ds);
            CHECK(k == 17 && d == 3 && flip && flip[1] == 2 && flip[16] == 15);
        }
        detfeed_dataset_destroy(ds);
    }
}

int main(void)
{
    if (!tu_temp_dir(root, sizeof root, "ds"))
        return tu_finish("test_dataset");
    make_tree();
    test_yaml_train();
    test_fail_policy();
    test_other_sources();
    test_large_lists();
    test_many_labels();
    test_shared();
    CHECK(tu_remove_tree(root));
    return tu_finish("test_dataset");
}
