/*
 * cmd_sample.c - `detfeed sample`: one augmented training sample, written as
 * a PNG, with its recipe and labels as JSON. For looking at what the loader
 * does to one image, and for comparing it with a reference.
 */
#include "cli.h"
#include "detfeed_img.h"

#include <stdlib.h>
#include <string.h>

/* The end of the --set item at s: the first comma followed by NAME= (a
 * name of letters, digits and underscores, then '='), or the end of s; so
 * that a value may hold commas (classes=0,2, a path). */
static char *item_end(char *s)
{
    static const char name_chars[] = "abcdefghijklmnopqrstuvwxyz"
                                     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
    for (char *c = strchr(s, ','); c; c = strchr(c + 1, ',')) {
        size_t k = strspn(c + 1, name_chars);
        if (k > 0 && c[1 + k] == '=')
            return c;
    }
    return s + strlen(s);
}

/* Refuses a setting that the command takes through an option of its own
 * or does not take (rules), and one given before in the same --set
 * (seen[0..n)): either would be dropped without a word. */
static int check_item(const char *name, detfeed_loader_param p,
                      const cli_set_rules *rules, const detfeed_loader_param *seen,
                      int n)
{
    for (int k = 0; k < n; k++)
        if (seen[k] == p) {
            cli_error("--set: %s given twice: give it once", name);
            return CLI_USAGE;
        }
    for (size_t k = 0; k < rules->n; k++) {
        if (rules->owned[k].param != p)
            continue;
        if (rules->owned[k].option)
            cli_error("--set: %s: detfeed %s takes it as its option %s", name,
                      rules->command, rules->owned[k].option);
        else
            cli_error("--set: detfeed %s does not take %s (%s)", rules->command, name,
                      rules->why);
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* Applies one NAME=VALUE item (cut out of the --set list) after check_item;
 * the setting goes to seen[*n]. */
static int set_item(detfeed_loader *l, char *item, const cli_set_rules *rules,
                    detfeed_loader_param *seen, int *n)
{
    char *eq = strchr(item, '=');
    if (eq == NULL) {
        cli_error("--set: '%s' is not NAME=VALUE", item);
        return CLI_USAGE;
    }
    *eq = '\0';
    detfeed_loader_param p;
    if (detfeed_loader_param_parse(item, &p) == DETFEED_OK) {
        int rc = check_item(item, p, rules, seen, *n);
        if (rc != CLI_OK)
            return rc;
        seen[(*n)++] = p;
    }
    if (detfeed_loader_set(l, item, eq + 1) != DETFEED_OK) {
        cli_error("--set: %s", detfeed_loader_last_error(l));
        return CLI_USAGE;
    }
    return CLI_OK;
}

int cli_set_hyps(detfeed_loader *l, const char *list, const cli_set_rules *rules)
{
    char buf[512];
    detfeed_loader_param seen[sizeof buf / 2];
    int n = 0;
    if (strlen(list) >= sizeof buf) {
        cli_error("--set: too long");
        return CLI_USAGE;
    }
    strcpy(buf, list);
    for (char *item = buf;;) {
        char *end = item_end(item);
        bool last = *end == '\0';
        *end = '\0';
        int rc = set_item(l, item, rules, seen, &n);
        if (rc != CLI_OK || last)
            return rc;
        item = end + 1;
    }
}

static void print_floats(const float *v, int n)
{
    for (int i = 0; i < n; i++)
        printf("%s%.9g", i ? "," : "", (double)v[i]);
}

/* Element i of a mask of `type`. */
static long mask_at(const void *mask, detfeed_mask_type type, size_t i)
{
    return type == DETFEED_MASK_I32 ? (long)((const int32_t *)mask)[i]
                                    : (long)((const uint8_t *)mask)[i];
}

/* The segment mask as "mask":{"width","height","dtype","rle":[value, run,
 * ...]} in row-major order; dtype "uint8", or "int32" past 255 instances. */
static int print_mask(detfeed_loader *l, long epoch, long index, int w, int h)
{
    size_t bytes = (size_t)(w / 4) * (size_t)(h / 4) * 4 + 4;
    void *mask = malloc(bytes);
    int mw = 0, mh = 0;
    detfeed_mask_type type = DETFEED_MASK_NONE;
    int rc = mask ? detfeed_loader_sample_mask_data(l, (uint32_t)epoch, (uint64_t)index,
                                                    mask, bytes, &mw, &mh, &type)
                  : DETFEED_ENOMEM;
    if (rc != DETFEED_OK) {
        free(mask);
        return cli_error("masks: %s", detfeed_loader_last_error(l));
    }
    printf(",\"mask\":{\"width\":%d,\"height\":%d,\"dtype\":\"%s\",\"rle\":[", mw, mh,
           type == DETFEED_MASK_I32 ? "int32" : "uint8");
    size_t total = (size_t)mw * mh;
    for (size_t i = 0, run; i < total; i += run) {
        long v = mask_at(mask, type, i);
        for (run = 1; i + run < total && mask_at(mask, type, i + run) == v; run++)
            ;
        printf("%s%ld,%zu", i ? "," : "", v, run);
    }
    printf("]}");
    free(mask);
    return CLI_OK;
}

/* A sample's label arrays, with room for `cap` instances. */
typedef struct sample_labels {
    float *cls, *box, *kpt;
    int cap;
} sample_labels;

static void labels_free(sample_labels *s)
{
    free(s->cls);
    free(s->box);
    free(s->kpt);
    *s = (sample_labels){NULL, NULL, NULL, 0};
}

static int labels_alloc(sample_labels *s, int cap, int nkpt)
{
    labels_free(s);
    s->cls = malloc((size_t)cap * sizeof *s->cls);
    s->box = malloc((size_t)cap * 4 * sizeof *s->box);
    s->kpt = nkpt ? malloc((size_t)cap * nkpt * 3 * sizeof *s->kpt) : NULL;
    s->cap = cap;
    return s->cls && s->box && (!nkpt || s->kpt) ? DETFEED_OK : DETFEED_ENOMEM;
}

static int sample_into(detfeed_loader *l, long epoch, long index, uint8_t *img,
                       sample_labels *s, int *n)
{
    *n = 0;
    return detfeed_loader_sample(l, (uint32_t)epoch, (uint64_t)index, img, s->cap, n,
                                 s->cls, s->box, s->kpt);
}

/* Makes the sample into img and s, with room for a first guess of
 * instances; a sample with more fails with DETFEED_ELIMIT and their count
 * in *n, and is made again with room for all of them. */
static int make_sample(detfeed_loader *l, long epoch, long index, int nkpt,
                       uint8_t *img, sample_labels *s, int *n)
{
    int rc = labels_alloc(s, 1024, nkpt);
    if (rc == DETFEED_OK)
        rc = sample_into(l, epoch, index, img, s, n);
    if (rc == DETFEED_ELIMIT && *n > s->cap &&
        (rc = labels_alloc(s, *n, nkpt)) == DETFEED_OK)
        rc = sample_into(l, epoch, index, img, s, n);
    return rc;
}

static int write_sample(detfeed_loader *l, long epoch, long index, const char *out,
                        bool json)
{
    int w = 0, h = 0;
    detfeed_loader_sample_size(l, (uint64_t)index, &w, &h);
    size_t npx = (size_t)w * h * 3;
    int nkpt;
    detfeed_dataset_kpt_shape(detfeed_loader_dataset(l), &nkpt, NULL);
    uint8_t *img = malloc(npx);
    sample_labels lab = {NULL, NULL, NULL, 0};
    int n = 0, status = CLI_OK;
    detfeed_recipe recipe;
    int rc = img ? make_sample(l, epoch, index, nkpt, img, &lab, &n) : DETFEED_ENOMEM;
    float *cls = lab.cls, *box = lab.box, *kpt = lab.kpt;
    if (rc == DETFEED_OK)
        rc = detfeed_loader_recipe(l, (uint32_t)epoch, (uint64_t)index, &recipe);
    if (rc != DETFEED_OK) {
        status = cli_error("%s", detfeed_loader_last_error(l)[0]
                                     ? detfeed_loader_last_error(l)
                                     : detfeed_strerror(rc));
    } else if (out) {
        detfeed_codec *codec;
        if (detfeed_codec_create(&codec, 0) != DETFEED_OK ||
            detfeed_codec_write_png(codec, out, img, (size_t)w * 3, w, h) != DETFEED_OK)
            status = cli_error("%s", codec ? detfeed_codec_last_error(codec)
                                           : "out of memory");
        detfeed_codec_destroy(codec);
    }
    if (status == CLI_OK && !json) {
        cli_recipe_json(stdout, &recipe);
        printf("\n%d instances\n", n);
    }
    if (status == CLI_OK && json) {
        printf("{\"recipe\":");
        cli_recipe_json(stdout, &recipe);
        printf(",\"image\":");
        cli_json_string(stdout, detfeed_dataset_image_path(detfeed_loader_dataset(l),
                                                           (size_t)index));
        printf(",\"cls\":[");
        print_floats(cls, n);
        printf("],\"bboxes\":[");
        print_floats(box, 4 * n);
        printf("],\"keypoints\":[");
        if (kpt)
            print_floats(kpt, n * nkpt * 3);
        printf("]");
        if (detfeed_dataset_task(detfeed_loader_dataset(l)) == DETFEED_TASK_SEGMENT)
            status = print_mask(l, epoch, index, w, h);
        printf("}\n");
    }
    free(img);
    labels_free(&lab);
    return status;
}

/* The settings sample takes through options of its own, or not at all. */
static const cli_owned sample_owned[] = {
    {DETFEED_LOADER_IMGSZ, "--imgsz"},
    {DETFEED_LOADER_SEED, "--seed"},
    {DETFEED_LOADER_EPOCHS, "--epochs"},
    {DETFEED_LOADER_CLOSE_MOSAIC, "--close-mosaic"},
    {DETFEED_LOADER_AUGMENT, "--augment"},
    {DETFEED_LOADER_BATCH, "--batch"},
    {DETFEED_LOADER_WORKERS, NULL},
    {DETFEED_LOADER_PREFETCH, NULL},
    {DETFEED_LOADER_RANK, NULL},
    {DETFEED_LOADER_WORLD_SIZE, NULL},
    {DETFEED_LOADER_DROP_LAST, NULL},
    {DETFEED_LOADER_DTYPE, NULL},
    {DETFEED_LOADER_VALUE_SCALE, NULL},
    {DETFEED_LOADER_OUTPUT, NULL},
    {DETFEED_LOADER_COLOR, NULL},
    {DETFEED_LOADER_CUDA_DEVICE, NULL}};
static const cli_set_rules sample_rules = {
    "sample", sample_owned, sizeof sample_owned / sizeof sample_owned[0],
    "it makes one sample, 8-bit BGR, on this thread"};

int cmd_sample(int argc, char **argv)
{
    long index = 0, epoch = 0, seed = 0, imgsz = 640, epochs = 100, close = 10,
         augment = 1, batch = 16;
    const char *out = NULL, *set = NULL, *split = "train";
    bool json = false;
    const cli_opt opts[] = {
        {"index", CLI_INT, &index, "I", "image index in dataset order (default 0)", 0,
         1L << 40},
        {"epoch", CLI_INT, &epoch, "E", "epoch (default 0)", 0, 1L << 31},
        {"seed", CLI_INT, &seed, "S", "seed (default 0)", 0, 1L << 62},
        {"imgsz", CLI_INT, &imgsz, "N", "image size, a multiple of 32 (default 640)",
         32, 8192},
        {"epochs", CLI_INT, &epochs, "N", "epochs of the run (default 100)", 1,
         1000000},
        {"close-mosaic", CLI_INT, &close, "N",
         "epochs without mosaic at the end (default 10)", 0, 1000000},
        {"augment", CLI_INT, &augment, "0|1",
         "training transforms (1, default) or validation", 0, 1},
        {"batch", CLI_INT, &batch, "N",
         "batch size: validation batch shapes (default 16)", 1, 65536},
        {"split", CLI_STRING, &split, "NAME", "split of a YAML (default train)", 0, 0},
        {"set", CLI_STRING, &set, "K=V,...",
         "hyperparameters and the reference stack, e.g. degrees=10,opencv=5.0", 0, 0},
        {"out", CLI_STRING, &out, "FILE.png", "write the augmented image here", 0, 0},
        {"json", CLI_FLAG, &json, NULL,
         "print the recipe and labels as one JSON object", 0, 0},
        {0}};
    const char *usage = "detfeed sample DATA [--index I --epoch E --seed S] [options]";
    const char *about =
        "Makes one augmented sample of DATA (a dataset YAML, folder or list) "
        "and prints\nits recipe (every random parameter) and its labels.";
    char *pos[1];
    int rc = cli_parse_exact(argc, argv, opts, usage, about, pos, 1);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    if ((rc = cli_png_out(out)) != CLI_OK)
        return rc;
    detfeed_loader *l;
    if ((rc = detfeed_loader_create(&l, 0)) != DETFEED_OK)
        return cli_error("%s", detfeed_strerror(rc));
    int bad = detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, imgsz) ||
              detfeed_loader_set_int(l, DETFEED_LOADER_SEED, seed) ||
              detfeed_loader_set_int(l, DETFEED_LOADER_EPOCHS, epochs) ||
              detfeed_loader_set_int(l, DETFEED_LOADER_CLOSE_MOSAIC, close) ||
              detfeed_loader_set_int(l, DETFEED_LOADER_AUGMENT, augment) ||
              detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, batch) ||
              detfeed_loader_set_split(l, split);
    if (bad) {
        detfeed_loader_destroy(l);
        cli_error("--imgsz must be a multiple of 32; --split train, val or test");
        return CLI_USAGE;
    }
    if ((set && (rc = cli_set_hyps(l, set, &sample_rules)) != CLI_OK) ||
        (rc = cli_epoch_below(l, epoch, "--epochs sets them")) != CLI_OK) {
        detfeed_loader_destroy(l);
        return rc;
    }
    int status;
    if (detfeed_loader_open(l, pos[0]) != DETFEED_OK)
        status = cli_error("%s", detfeed_loader_last_error(l));
    else if ((size_t)index >= detfeed_dataset_size(detfeed_loader_dataset(l)))
        status = cli_error("--index %ld: the dataset has %zu usable images", index,
                           detfeed_dataset_size(detfeed_loader_dataset(l)));
    else
        status = write_sample(l, epoch, index, out, json);
    detfeed_loader_destroy(l);
    return status;
}
