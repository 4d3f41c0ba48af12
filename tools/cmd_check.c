/*
 * cmd_check.c - `detfeed check`: scans a dataset and reports what it holds
 * and everything that would be skipped, with file and line.
 */
#include "cli.h"

#include <limits.h>
#include <string.h>
#include <strings.h>

typedef struct stat_row {
    detfeed_dataset_stat stat;
    const char *key;  /* JSON key */
    const char *text; /* human label */
} stat_row;

static const stat_row rows[] = {
    {DETFEED_STAT_IMAGES, "images", "images"},
    {DETFEED_STAT_USABLE, "usable", "usable"},
    {DETFEED_STAT_LABELLED, "labelled", "labelled"},
    {DETFEED_STAT_BACKGROUNDS, "backgrounds", "backgrounds"},
    {DETFEED_STAT_MISSING_LABELS, "missing_labels", "  no label file"},
    {DETFEED_STAT_EMPTY_LABELS, "empty_labels", "  empty label file"},
    {DETFEED_STAT_ORPHAN_LABELS, "orphan_labels", "orphan label files"},
    {DETFEED_STAT_INSTANCES, "instances", "instances"},
    {DETFEED_STAT_DUPLICATES, "duplicates", "duplicate rows removed"},
    {DETFEED_STAT_CORRUPT, "corrupt", "skipped (corrupt)"},
    {DETFEED_STAT_REJECTED_LINES, "rejected_lines", "rejected label lines"},
    {DETFEED_STAT_UNSUPPORTED, "unsupported", "unsupported formats"},
    {DETFEED_STAT_LINK_LOOPS, "link_loops", "folder link loops"},
};
#define NROWS (sizeof rows / sizeof rows[0])

static const char *const task_names[] = {"detect", "segment", "pose"};

/* Whether `source` is a dataset YAML (the library's rule: its suffix). */
static bool is_yaml(const char *source)
{
    const char *dot = strrchr(source, '.');
    return dot && (strcasecmp(dot, ".yaml") == 0 || strcasecmp(dot, ".yml") == 0);
}

/* split: the YAML's split, NULL for a folder or list (no splits). */
static void print_text(const detfeed_dataset *ds, const char *source, const char *split,
                       long max_shown)
{
    int nc = detfeed_dataset_class_count(ds);
    fputs("dataset ", stdout);
    cli_text(stdout, source);
    if (split)
        printf(" (split %s)", split);
    printf(": %s, ", task_names[detfeed_dataset_task(ds)]);
    bool yaml = is_yaml(source);
    if (nc)
        printf("%d classes\n", nc);
    else
        printf("classes unknown (%s; --nc sets them)\n",
               yaml ? "the YAML has no names or nc" : "no YAML");
    if (detfeed_dataset_root(ds)) {
        fputs("data: ", stdout);
        cli_text(stdout, detfeed_dataset_root(ds));
        fputs(" (", stdout);
        cli_text(stdout, detfeed_dataset_root_rule(ds));
        fputs(")\n", stdout);
    }
    for (size_t i = 0; i < NROWS; i++)
        printf("  %-24s %lld\n", rows[i].text,
               (long long)detfeed_dataset_stat_get(ds, rows[i].stat));
    size_t n = detfeed_dataset_problem_count(ds);
    if (n)
        printf("problems (%zu%s):\n", n, (long)n > max_shown ? ", first shown" : "");
    for (size_t i = 0; i < n && (long)i < max_shown; i++) {
        const char *file, *reason;
        int line;
        detfeed_dataset_problem(ds, i, &file, &line, &reason);
        fputs("  ", stdout);
        cli_text(stdout, file);
        if (line > 0)
            printf(":%d", line);
        fputs(": ", stdout);
        cli_text(stdout, reason);
        fputc('\n', stdout);
    }
}

static void print_json(const detfeed_dataset *ds, const char *source, const char *split)
{
    printf("{\"source\":");
    cli_json_string(stdout, source);
    if (split)
        printf(",\"split\":\"%s\"", split);
    else
        printf(",\"split\":null");
    printf(",\"root\":");
    if (detfeed_dataset_root(ds)) {
        cli_json_string(stdout, detfeed_dataset_root(ds));
        printf(",\"root_rule\":");
        cli_json_string(stdout, detfeed_dataset_root_rule(ds));
    } else {
        printf("null,\"root_rule\":null");
    }
    printf(",\"task\":\"%s\",\"classes\":%d", task_names[detfeed_dataset_task(ds)],
           detfeed_dataset_class_count(ds));
    for (size_t i = 0; i < NROWS; i++)
        printf(",\"%s\":%lld", rows[i].key,
               (long long)detfeed_dataset_stat_get(ds, rows[i].stat));
    printf(",\"problems\":[");
    for (size_t i = 0; i < detfeed_dataset_problem_count(ds); i++) {
        const char *file, *reason;
        int line;
        detfeed_dataset_problem(ds, i, &file, &line, &reason);
        printf("%s{\"file\":", i ? "," : "");
        cli_json_string(stdout, file);
        printf(",\"line\":%d,\"reason\":", line);
        cli_json_string(stdout, reason);
        printf("}");
    }
    printf("]}\n");
}

static bool pick(const char *value, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(value, names[i]) == 0) {
            *out = i;
            return true;
        }
    }
    return false;
}

/* check --set's limits by name, "max_pixels=100000000,...": the image
 * limits (detfeed_codec_limit) and the label limits (-1 - the
 * detfeed_dataset_param). */
static const struct {
    const char *name;
    int limit;
} limit_names[] = {{"max_width", DETFEED_LIMIT_MAX_WIDTH},
                   {"max_height", DETFEED_LIMIT_MAX_HEIGHT},
                   {"max_pixels", DETFEED_LIMIT_MAX_PIXELS},
                   {"max_image_bytes", DETFEED_LIMIT_MAX_IMAGE_BYTES},
                   {"max_labels", -1 - DETFEED_DATASET_MAX_LABELS},
                   {"max_label_line", -1 - DETFEED_DATASET_MAX_LABEL_LINE}};

static int set_limit(detfeed_dataset *ds, int limit, long v)
{
    if (limit < 0)
        return detfeed_dataset_set_int(ds, (detfeed_dataset_param)(-1 - limit), v);
    return detfeed_dataset_set_limit(ds, (detfeed_codec_limit)limit, (uint64_t)v);
}

static int set_limits(detfeed_dataset *ds, const char *list)
{
#define names limit_names
    char buf[512], *save = NULL;
    unsigned given = 0; /* bit k: names[k] came before (a second is refused) */
    if (strlen(list) >= sizeof buf) {
        cli_error("--set: too long");
        return CLI_USAGE;
    }
    strcpy(buf, list);
    for (char *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        size_t k = 0, n = sizeof names / sizeof names[0];
        while (eq && k < n &&
               (strlen(names[k].name) != (size_t)(eq - item) ||
                strncmp(item, names[k].name, (size_t)(eq - item)) != 0))
            k++;
        long v;
        if (eq == NULL || k == n) {
            cli_error("--set: '%s' is not a limit (max_width, max_height, max_pixels, "
                      "max_image_bytes, max_labels, max_label_line)=VALUE",
                      item);
            return CLI_USAGE;
        }
        if (given & 1u << k) {
            cli_error("--set: %s given twice: give it once", names[k].name);
            return CLI_USAGE;
        }
        given |= 1u << k;
        bool image = names[k].limit >= 0;
        if (!cli_parse_long(eq + 1, image ? 1 : LONG_MIN, LONG_MAX, &v) ||
            (set_limit(ds, names[k].limit, v) != DETFEED_OK && image)) {
            cli_error("--set: %s takes a whole number >= 1, not '%s'", names[k].name,
                      eq + 1);
            return CLI_USAGE;
        }
        if (*detfeed_dataset_last_error(ds)) { /* a label limit out of its range */
            cli_error("--set: %s", detfeed_dataset_last_error(ds));
            return CLI_USAGE;
        }
    }
    return CLI_OK;
#undef names
}

/* check's exit status for a dataset that opened: 1 when it holds images
 * detfeed cannot use (corrupt, or in a format it does not read) or label
 * lines it rejected, 0 when clean. Orphans, duplicates and missing labels
 * are reported but are no failure (Ultralytics trains with them too). */
static int found_status(const detfeed_dataset *ds)
{
    const detfeed_dataset_stat bad[] = {DETFEED_STAT_CORRUPT, DETFEED_STAT_UNSUPPORTED,
                                        DETFEED_STAT_REJECTED_LINES};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (detfeed_dataset_stat_get(ds, bad[i]) > 0)
            return CLI_FAIL;
    return CLI_OK;
}

int cmd_check(int argc, char **argv)
{
    const char *split = NULL, *policy = "skip", *verify = "decode", *root = NULL,
               *limits = NULL, *datasets_dir = NULL;
    long nc = 0, shown = 50;
    bool json = false, quiet = false;
    const cli_opt opts[] = {
        {"split", CLI_STRING, &split, "NAME",
         "split of a YAML: train (default), val, test (a folder or list has none)", 0,
         0},
        {"policy", CLI_STRING, &policy, "P",
         "skip (default): count bad samples; fail: stop at the first", 0, 0},
        {"verify", CLI_STRING, &verify, "HOW",
         "decode (default): decode every image; header; none", 0, 0},
        {"root", CLI_STRING, &root, "DIR", "dataset root instead of the YAML's 'path'",
         0, 0},
        {"datasets-dir", CLI_STRING, &datasets_dir, "DIR",
         "Ultralytics' datasets_dir instead of its settings file's (where a relative "
         "'path' not found from the working folder is looked for)",
         0, 0},
        {"nc", CLI_INT, &nc, "N",
         "number of classes when DATA names none (a YAML that names them takes only "
         "its own count)",
         0, 1000000},
        {"show", CLI_INT, &shown, "N",
         "problems listed in the text report (default 50)", 0, 1000000000},
        {"json", CLI_FLAG, &json, NULL,
         "print one JSON object with the counts and problems", 0, 0},
        {"quiet", CLI_FLAG, &quiet, NULL,
         "no progress line (shown on a terminal for work over a second)", 0, 0},

        {"set", CLI_STRING, &limits, "K=V,...",
         "image limits: max_width, max_height (32768), max_pixels (178956970), "
         "max_image_bytes (536870912); label limits: max_labels (instances in a "
         "file, 1000000), max_label_line (bytes, 65536)",
         0, 0},
        {0}};
    const char *usage = "detfeed check DATA [options]";
    const char *about =
        "Scans a dataset (a dataset YAML, a folder of images/ and labels/, or a text\n"
        "file listing images) and reports images, labelled images, backgrounds,\n"
        "orphan label files, instances, duplicates, corrupt images and every\n"
        "rejected label line with file:line and the reason. Text from the data is\n"
        "escaped: control characters and bytes that are not UTF-8 as \\xHH in the\n"
        "text report; in --json control characters as \\u00XX and bytes that are\n"
        "not UTF-8 as \\ufffd (U+FFFD), so the JSON is always valid UTF-8.\n"
        "A YAML's data is where Ultralytics' check_det_dataset finds it: an absolute\n"
        "'path' as it is; a relative one from the working folder when it is there,\n"
        "else under the datasets_dir of Ultralytics' settings.json ($YOLO_CONFIG_DIR/\n"
        "Ultralytics, else ~/.config/Ultralytics; default: ./datasets); no 'path':\n"
        "the YAML's folder. The report's data: line says which rule found it; a\n"
        "split entry that is not there fails (detfeed never downloads).\n"
        "Exit status: 0 when every image is usable and every label line taken; 1\n"
        "when it found corrupt images, images of formats detfeed does not read or\n"
        "rejected label lines (or could not open DATA); 2 for a usage error.";
    char *pos[1];
    int p = 0, v = 0;
    int rc = cli_parse_exact(argc, argv, opts, usage, about, pos, 1);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    static const char *const policies[] = {"skip", "fail"};
    static const char *const verifies[] = {"header", "decode", "none"};
    if (!pick(policy, policies, 2, &p) || !pick(verify, verifies, 3, &v)) {
        cli_error("--policy takes skip or fail; --verify takes decode, header or none");
        return CLI_USAGE;
    }
    if (split && !is_yaml(pos[0])) {
        cli_error("--split is for a dataset YAML: %s is a folder or list, whose images "
                  "are all read",
                  pos[0]);
        return CLI_USAGE;
    }
    if (!split && is_yaml(pos[0]))
        split = "train";
    detfeed_dataset *ds;
    if ((rc = detfeed_dataset_create(&ds, 0)) != DETFEED_OK)
        return cli_error("%s", detfeed_strerror(rc));
    rc = detfeed_dataset_set_split(ds, split ? split : "train");
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_root(ds, root);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_datasets_dir(ds, datasets_dir);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_int(ds, DETFEED_DATASET_POLICY, p);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_int(ds, DETFEED_DATASET_VERIFY, v);
    if (rc == DETFEED_OK)
        rc = detfeed_dataset_set_int(ds, DETFEED_DATASET_NC, nc);
    if (rc != DETFEED_OK) {
        detfeed_dataset_destroy(ds);
        cli_error("--split takes train, val or test");
        return CLI_USAGE;
    }
    if (limits && (rc = set_limits(ds, limits)) != CLI_OK) {
        detfeed_dataset_destroy(ds);
        return rc;
    }
    cli_watch watch;
    cli_watch_start(&watch, cli_dataset_progress, ds, quiet);
    rc = detfeed_dataset_open(ds, pos[0]);
    cli_watch_stop(&watch);
    /* A dataset that failed after indexing (no usable image) still has its
     * report: every problem, then the error. */
    if (rc == DETFEED_OK || detfeed_dataset_problem_count(ds) > 0) {
        if (json)
            print_json(ds, pos[0], split);
        else
            print_text(ds, pos[0], split, shown);
    }
    int status = rc == DETFEED_OK ? found_status(ds)
                                  : cli_error("%s", detfeed_dataset_last_error(ds));
    detfeed_dataset_destroy(ds);
    return status;
}
