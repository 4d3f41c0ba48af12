/*
 * test_dataset_faults.c - the dataset index against hostile file systems and
 * texts: FIFOs (refused without opening them), symbolic link loops and
 * dangling links (reported, each real image indexed once), CR-only and other
 * Python line ends in list files, class ids without nc, the YAML's keys read
 * without touching the file system, and segment files with more instances
 * than an 8-bit overlap mask holds.
 */
#include "data/data_internal.h"
#include "data/dataset_internal.h"
#include "testutil.h"

#include <signal.h>
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

static void write_image(const char *rel)
{
    tu_write_png16(at(rel));
}

static void mkdirs(const char *const *dirs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mkdir(at(dirs[i]), 0755);
}

static detfeed_dataset *open_ds(const char *source, int64_t nc, int *rc)
{
    detfeed_dataset *ds;
    CHECK_INT(detfeed_dataset_create(&ds, 0), 0);
    if (nc)
        CHECK_INT(detfeed_dataset_set_int(ds, DETFEED_DATASET_NC, nc), 0);
    *rc = detfeed_dataset_open(ds, source);
    return ds;
}

#define STAT(ds, s) detfeed_dataset_stat_get(ds, DETFEED_STAT_##s)

/* A FIFO blocks open() until a writer comes: every place that reads a file
 * must refuse it without opening it. A hang ends the test by SIGALRM. */
static void test_fifos(void)
{
    const char *dirs[] = {"fifo", "fifo/images", "fifo/labels"};
    mkdirs(dirs, 3);
    write_image("fifo/images/a.png");
    write_image("fifo/images/b.png");
    CHECK_INT(mkfifo(at("fifo/images/p.png"), 0644), 0);
    CHECK_INT(mkfifo(at("fifo/labels/b.txt"), 0644), 0);
    CHECK_INT(mkfifo(at("fifo/list_fifo.txt"), 0644), 0);
    CHECK_INT(mkfifo(at("fifo/data_fifo.yaml"), 0644), 0);
    write_text("fifo/list.txt", "images/a.png\nimages/p.png\n");
    write_text("fifo/data.yaml", "train: [images/a.png, list_fifo.txt]\nnames: [x]\n");
    alarm(60);

    uint8_t *data = (uint8_t *)1;
    size_t size = 1;
    detfeed__msg msg = {{0}};
    CHECK_INT(detfeed__read_file(at("fifo/list_fifo.txt"), 1000, &data, &size, &msg),
              DETFEED_EIO);
    CHECK(data == NULL && size == 0);
    CHECK(strstr(msg.text, "list_fifo.txt: a FIFO, not a regular file") != NULL);

    int rc;
    detfeed_dataset *ds = open_ds(at("fifo/list.txt"), 0, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(STAT(ds, USABLE), 1);
    CHECK_INT(STAT(ds, CORRUPT), 1);
    CHECK(tu_has_problem(ds, "fifo/images/p.png", 0, "a FIFO, not a regular file"));
    detfeed_dataset_destroy(ds);

    /* A folder: the FIFO named .png is found (as Ultralytics' glob finds it)
     * and refused; b.png's label "file" is a FIFO. */
    ds = open_ds(at("fifo/images"), 0, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(STAT(ds, IMAGES), 3);
    CHECK_INT(STAT(ds, USABLE), 1);
    CHECK_INT(STAT(ds, CORRUPT), 2);
    CHECK(tu_has_problem(ds, "fifo/images/p.png", 0, "a FIFO"));
    CHECK(tu_has_problem(ds, "fifo/labels/b.txt", 0, "a FIFO"));
    detfeed_dataset_destroy(ds);

    ds = open_ds(at("fifo/data.yaml"), 0, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(STAT(ds, USABLE), 1);
    CHECK(tu_has_problem(ds, "fifo/data.yaml", 1, "list_fifo.txt' is a FIFO"));
    detfeed_dataset_destroy(ds);

    ds = open_ds(at("fifo/data_fifo.yaml"), 0, &rc);
    CHECK_INT(rc, DETFEED_EIO);
    CHECK(strstr(detfeed_dataset_last_error(ds), "data_fifo.yaml: a FIFO") != NULL);
    detfeed_dataset_destroy(ds);

    ds = open_ds(at("fifo/list_fifo.txt"), 0, &rc);
    CHECK(rc < 0);
    CHECK(strstr(detfeed_dataset_last_error(ds), "list_fifo.txt: a FIFO") != NULL);
    detfeed_dataset_destroy(ds);
    alarm(0);
}

/* Links: a folder link back to an ancestor is a loop (reported once, not
 * followed); a link to another folder is followed, as glob follows it; a
 * dangling image link and an image link loop are found and refused; a label
 * link loop skips its image. */
static void test_links(void)
{
    const char *dirs[] = {"links",           "links/images",       "links/labels",
                          "links/other",     "links/other/images", "links/images/sub",
                          "links/labels/sub"};
    mkdirs(dirs, sizeof dirs / sizeof dirs[0]);
    write_image("links/images/a.png");
    write_image("links/images/b.png");
    write_image("links/images/sub/c.png");
    write_image("links/other/images/d.png");
    write_text("links/labels/a.txt", "0 0.5 0.5 0.2 0.2\n");
    CHECK_INT(symlink(".", at("links/images/loop")), 0);
    CHECK_INT(symlink("..", at("links/images/sub/up")), 0);
    CHECK_INT(symlink("../other/images", at("links/images/more")), 0);
    CHECK_INT(symlink("nothing.png", at("links/images/dangling.png")), 0);
    CHECK_INT(symlink("self.png", at("links/images/self.png")), 0);
    CHECK_INT(symlink("b.txt", at("links/labels/b.txt")), 0);

    int rc;
    detfeed_dataset *ds = open_ds(at("links/images"), 0, &rc);
    CHECK_INT(rc, 0);
    /* a, b, c, more/d, dangling, self */
    CHECK_INT(STAT(ds, IMAGES), 6);
    CHECK_INT(STAT(ds, USABLE), 3); /* a, c, more/d */
    CHECK_INT(STAT(ds, CORRUPT), 3);
    CHECK_INT(STAT(ds, LINK_LOOPS), 2);
    CHECK(tu_has_problem(ds, "links/images/loop", 0, "link loop"));
    CHECK(tu_has_problem(ds, "links/images/sub/up", 0, "link loop"));
    CHECK(tu_has_problem(ds, "links/images/dangling.png", 0, "dangling symbolic link"));
    CHECK(tu_has_problem(ds, "links/images/self.png", 0, "symbolic link loop"));
    CHECK(tu_has_problem(ds, "links/labels/b.txt", 0, "symbolic link loop"));
    size_t n = detfeed_dataset_size(ds), twice = 0;
    for (size_t i = 0; i < n; i++) /* each real image once */
        for (size_t k = 0; k < i; k++)
            twice += strcmp(strrchr(detfeed_dataset_image_path(ds, i), '/'),
                            strrchr(detfeed_dataset_image_path(ds, k), '/')) == 0;
    CHECK_INT(twice, 0);
    CHECK(n == 3 && strstr(detfeed_dataset_image_path(ds, 1), "images/more/d.png"));
    detfeed_dataset_destroy(ds);
}

/* List files split as Python's splitlines: \r alone ends a line too. */
static void test_list_line_ends(void)
{
    const char *dirs[] = {"cr", "cr/images"};
    mkdirs(dirs, 2);
    write_image("cr/images/a.png");
    write_image("cr/images/b.png");
    write_image("cr/images/c.png");
    write_text("cr/list.txt", "images/a.png\rimages/b.png\x0c"
                              "images/c.png\xE2\x80\xA8");
    int rc;
    detfeed_dataset *ds = open_ds(at("cr/list.txt"), 0, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(STAT(ds, USABLE), 3);
    CHECK_INT(STAT(ds, CORRUPT), 0);
    detfeed_dataset_destroy(ds);
    /* a line that names no image is the list's problem, at its line */
    write_text("cr/mixed.txt", "images/a.png\n# a comment\n\nimages\nimages/b.heic\n");
    ds = open_ds(at("cr/mixed.txt"), 0, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(STAT(ds, USABLE), 1);
    CHECK_INT(STAT(ds, CORRUPT),
              1); /* the heic image (not there); the others are no images */
    CHECK(tu_has_problem(ds, "cr/mixed.txt", 2, "'# a comment' names no image file"));
    CHECK(tu_has_problem(ds, "cr/mixed.txt", 4, "'images' names no image file"));
    CHECK(tu_has_problem(ds, "cr/images/b.heic", 0, "cannot open"));
    detfeed_dataset_destroy(ds);
}

/* Orphan label files are counted once each, and a label in use is none,
 * however the list names its image (./ relatively, absolutely). */
static void test_orphans(void)
{
    const char *dirs[] = {"orph", "orph/images", "orph/labels"};
    mkdirs(dirs, 3);
    write_image("orph/images/a.png");
    write_image("orph/images/b.png");
    const char *const labels[] = {"orph/labels/a.txt", "orph/labels/b.txt",
                                  "orph/labels/c.txt", "orph/labels/d.txt"};
    for (int k = 0; k < 4; k++)
        write_text(labels[k], "0 0.5 0.5 0.2 0.2\n");
    char list[600];
    snprintf(list, sizeof list, "./images/a.png\n%s\n", at("orph/images/b.png"));
    write_text("orph/list.txt", list);
    int rc; /* the list named relatively: its images' folder too */
    char cwd[512];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK_INT(chdir(root), 0);
    detfeed_dataset *ds = open_ds("orph/list.txt", 0, &rc);
    CHECK_INT(chdir(cwd), 0);
    CHECK_INT(rc, 0);
    CHECK_INT(STAT(ds, USABLE), 2);
    CHECK_INT(STAT(ds, LABELLED), 2);
    CHECK_INT(STAT(ds, ORPHAN_LABELS), 2); /* c and d, once each */
    CHECK(!tu_has_problem(ds, "labels/a.txt", 0, "without an image"));
    CHECK(!tu_has_problem(ds, "labels/b.txt", 0, "without an image"));
    CHECK(tu_has_problem(ds, "labels/c.txt", 0, "without an image"));
    detfeed_dataset_destroy(ds);
    /* the label of an image detfeed does not decode is no orphan: one it
     * does not read (a .heic holding a JPEG, which Ultralytics reads with
     * Pillow) or cannot (a .heic holding no image) */
    write_text("orph/images/c.heic", "\xff\xd8\xff\xe0 a JPEG's start\n");
    ds = open_ds(at("orph/images"), 0, &rc);
    CHECK_INT(STAT(ds, UNSUPPORTED), 1);
    CHECK(tu_has_problem(ds, "orph/images/c.heic", 0, "'heic' holding another format"));
    CHECK_INT(STAT(ds, ORPHAN_LABELS), 1); /* d */
    CHECK(!tu_has_problem(ds, "labels/c.txt", 0, "without an image"));
    detfeed_dataset_destroy(ds);
    /* a file where the label folder goes: said, once */
    const char *dirs2[] = {"orph2", "orph2/images"};
    mkdirs(dirs2, 2);
    write_image("orph2/images/a.png");
    write_image("orph2/images/b.png");
    write_text("orph2/labels", "not a folder\n");
    ds = open_ds(at("orph2/images"), 0, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(STAT(ds, MISSING_LABELS), 2);
    CHECK(tu_has_problem(ds, "orph2/labels", 0, "not a folder"));
    CHECK_INT((long)detfeed_dataset_problem_count(ds), 1);
    detfeed_dataset_destroy(ds);
}

/* Folder and list sources: class ids are checked against DETFEED_DATASET_NC,
 * and without it against the largest id detfeed accepts. */
static void test_class_ids(void)
{
    const char *dirs[] = {"ids", "ids/images", "ids/labels"};
    mkdirs(dirs, 3);
    write_image("ids/images/a.png");
    write_image("ids/images/b.png");
    write_text("ids/labels/a.txt", "1e20 0.5 0.5 0.2 0.2\n");
    write_text("ids/labels/b.txt", "7 0.5 0.5 0.2 0.2\n");
    int rc;
    detfeed_dataset *ds = open_ds(at("ids/images"), 0, &rc);
    CHECK_INT(STAT(ds, USABLE), 1);
    CHECK(tu_has_problem(ds, "ids/labels/a.txt", 1, "class id 1e+20 is above 999999"));
    detfeed_dataset_destroy(ds);
    ds = open_ds(at("ids/images"), 5, &rc);
    CHECK_INT(STAT(ds, USABLE), 0);
    CHECK_INT(detfeed_dataset_class_count(ds), 5);
    CHECK_STR(detfeed_dataset_class_name(ds, 4), "class_4"); /* never NULL */
    CHECK(tu_has_problem(ds, "ids/labels/b.txt", 1, "not below the 5 classes"));
    detfeed_dataset_destroy(ds);
}

/* The YAML's own keys are read without the file system; a YAML without
 * names or nc says so. */
static void test_yaml_meta(void)
{
    detfeed_dataset *ds;
    detfeed_dataset_create(&ds, 0);
    const char *text = "path: /\ntrain: [.., /, /proc]\nnames: {1: b, 0: a}\n"
                       "kpt_shape: [2, 3]\nflip_idx: [1, 0]\n";
    CHECK_INT(detfeed__dataset_yaml_meta(ds, "m.yaml", text, strlen(text)), 0);
    CHECK_INT(detfeed_dataset_class_count(ds), 2);
    CHECK_STR(detfeed_dataset_class_name(ds, 1), "b");
    CHECK(detfeed_dataset_flip_idx(ds) && detfeed_dataset_flip_idx(ds)[0] == 1);
    CHECK_INT(detfeed_dataset_size(ds), 0);
    detfeed_dataset_destroy(ds);
    detfeed_dataset_create(&ds, 0);
    text = "train: [a, {b: c}]\n";
    CHECK_INT(detfeed__dataset_yaml_meta(ds, "m.yaml", text, strlen(text)),
              DETFEED_EFORMAT);
    CHECK(strstr(detfeed_dataset_last_error(ds), "m.yaml:1: 'train' entries must be") !=
          NULL);
    detfeed_dataset_destroy(ds);

    mkdir(at("meta"), 0755);
    mkdir(at("meta/images"), 0755);
    write_image("meta/images/a.png");
    write_text("meta/nonames.yaml", "train: images\n");
    write_text("meta/nc.yaml", "train: images\nnc: 2\n");
    int rc;
    ds = open_ds(at("meta/nonames.yaml"), 0, &rc);
    CHECK_INT(rc, 0);
    CHECK(
        tu_has_problem(ds, "meta/nonames.yaml", 0, "the YAML has no 'names' or 'nc'"));
    detfeed_dataset_destroy(ds);
    ds = open_ds(at("meta/nc.yaml"), 0, &rc);
    CHECK_INT(detfeed_dataset_class_count(ds), 2); /* Ultralytics' class_0, ... */
    CHECK_STR(detfeed_dataset_class_name(ds, 1), "class_1");
    detfeed_dataset_destroy(ds);
}

/* Opening `rel` fails with a message that holds `want`. */
static void refused(const char *rel, int64_t nc, const char *want)
{
    int rc;
    detfeed_dataset *ds = open_ds(at(rel), nc, &rc);
    CHECK(rc < 0);
    if (!CHECK(strstr(detfeed_dataset_last_error(ds), want) != NULL))
        fprintf(stderr, "  '%s' lacks '%s'\n", detfeed_dataset_last_error(ds), want);
    detfeed_dataset_destroy(ds);
}

/* What a YAML or a setting says that cannot be taken as it is said is
 * refused, with the file and line: never a guess that reads other images
 * or other classes. */
static void test_refused_keys(void)
{
    write_text("meta/empty_train.yaml", "names: [a]\ntrain: \"\"\n");
    refused("meta/empty_train.yaml", 0,
            "empty_train.yaml:2: 'train' has an empty path");
    write_text("meta/empty_item.yaml", "names: [a]\ntrain:\n  - images\n  - ''\n");
    refused("meta/empty_item.yaml", 0, "empty_item.yaml:4: 'train' has an empty path");
    write_text("meta/no_names.yaml", "train: images\nnames: []\n");
    refused("meta/no_names.yaml", 0, "no_names.yaml:2: 'names' is empty");
    write_text("meta/two_paths.yaml", "path: [a, b]\ntrain: images\nnames: [a]\n");
    refused("meta/two_paths.yaml", 0, "two_paths.yaml:1: 'path' must be one folder");
    write_text("meta/no_test.yaml", "names: [a]\ntrain: images\n\ntest:\n");
    int rc;
    detfeed_dataset *ds;
    CHECK_INT(detfeed_dataset_create(&ds, 0), 0);
    CHECK_INT(detfeed_dataset_set_split(ds, "test"), 0);
    CHECK_INT(detfeed_dataset_open(ds, at("meta/no_test.yaml")), DETFEED_EFORMAT);
    CHECK(strstr(detfeed_dataset_last_error(ds), "no_test.yaml:4: no 'test' entry"));
    detfeed_dataset_destroy(ds);
    CHECK_INT(detfeed_dataset_create(&ds, 0), 0);
    CHECK_INT(detfeed_dataset_set_split(ds, "val"), 0);
    CHECK_INT(detfeed_dataset_open(ds, at("meta/no_test.yaml")), DETFEED_EFORMAT);
    const char *msg = detfeed_dataset_last_error(ds);
    CHECK(strstr(msg, "no_test.yaml: no 'val' entry") != NULL); /* no line: none */
    detfeed_dataset_destroy(ds);
    /* nc: for data that names no classes; a YAML's own count is not changed */
    write_text("meta/two.yaml", "train: images\nnames: [a, b]\n");
    refused("meta/two.yaml", 5, "nc 5, but it names 2 classes");
    ds = open_ds(at("meta/two.yaml"), 2, &rc);
    CHECK_INT(rc, 0);
    detfeed_dataset_destroy(ds);
    /* no usable image: the first problem named is why (a label's class),
     * not the YAML's note on its classes */
    mkdir(at("meta/labels"), 0755);
    write_text("meta/labels/a.txt", "45 0.5 0.5 0.1 0.1\n");
    write_text("meta/far.yaml", "train: images\nnames: [a, b]\n");
    refused("meta/far.yaml", 0, "first problem: ");
    ds = open_ds(at("meta/far.yaml"), 0, &rc);
    msg = detfeed_dataset_last_error(ds);
    CHECK(strstr(msg, "labels/a.txt:1: ") != NULL);
    detfeed_dataset_destroy(ds);
    unlink(at("meta/labels/a.txt"));
    rmdir(at("meta/labels"));
    /* a root replaces a YAML's path: other sources have none */
    CHECK_INT(detfeed_dataset_create(&ds, 0), 0);
    CHECK_INT(detfeed_dataset_set_root(ds, at("meta")), 0);
    CHECK_INT(detfeed_dataset_open(ds, at("meta/images")), DETFEED_EINVAL);
    CHECK(
        strstr(detfeed_dataset_last_error(ds), "a dataset root is for a dataset YAML"));
    detfeed_dataset_destroy(ds);
}

/* Segment files of more than 255 polygons are indexed as Ultralytics
 * indexes them (their overlap masks are int32), with no problem. */
static void test_many_polygons(void)
{
    const char *dirs[] = {"seg", "seg/images", "seg/labels"};
    mkdirs(dirs, 3);
    write_image("seg/images/a.png");
    write_image("seg/images/b.png");
    size_t cap = 256 * 64, len;
    char *text = malloc(cap);
    for (int file = 0; file < 2; file++) {
        int n = file == 0 ? 255 : 256;
        len = 0;
        for (int k = 0; k < n; k++) /* distinct boxes, no duplicates */
            len += (size_t)snprintf(text + len, cap - len,
                                    "0 0.1 0.1 0.5 0.2 0.3 0.%03d\n", k + 300);
        write_text(file == 0 ? "seg/labels/a.txt" : "seg/labels/b.txt", text);
    }
    free(text);
    int rc;
    detfeed_dataset *ds = open_ds(at("seg/images"), 0, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(detfeed_dataset_task(ds), DETFEED_TASK_SEGMENT);
    CHECK_INT(STAT(ds, USABLE), 2);
    CHECK_INT(STAT(ds, CORRUPT), 0);
    CHECK_INT(STAT(ds, INSTANCES), 255 + 256);
    CHECK_INT(detfeed_dataset_problem_count(ds), 0);
    detfeed_dataset_destroy(ds);
}

int main(void)
{
    if (!tu_temp_dir(root, sizeof root, "dsf"))
        return tu_finish("test_dataset_faults");
    test_fifos();
    test_links();
    test_list_line_ends();
    test_class_ids();
    test_orphans();
    test_yaml_meta();
    test_refused_keys();
    test_many_polygons();
    CHECK(tu_remove_tree(root));
    return tu_finish("test_dataset_faults");
}
