/*
 * cmd_cache.c - `detfeed cache`: builds (or checks) the disk cache of a
 * dataset's decoded load-size images beforehand, the file the loader's
 * cache "disk" then maps.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct cache_opts {
    const char *out, *split, *fraction;
    long imgsz, workers;
    bool check, no_wait, quiet;
} cache_opts;

static const char *state_names[] = {"reused",  "writing", "built",
                                    "waiting", "adopted", "failed"};

/* The dataset as the loader indexes it: split, fraction, the skip policy. */
static int open_dataset(detfeed_dataset **out, const char *data, const cache_opts *o)
{
    detfeed_dataset *ds;
    if (detfeed_dataset_create(&ds, 0) != DETFEED_OK)
        return cli_error("out of memory");
    int rc = detfeed_dataset_set_split(ds, o->split);
    if (rc != DETFEED_OK) {
        detfeed_dataset_destroy(ds);
        cli_error("--split takes train, val or test, not '%s'", o->split);
        return CLI_USAGE;
    }
    if (o->fraction) {
        long count;
        double ratio;
        if (cli_parse_long(o->fraction, 1, 1L << 40, &count))
            rc = detfeed_dataset_set_int(ds, DETFEED_DATASET_FRACTION, count);
        else if (cli_parse_double(o->fraction, &ratio))
            rc = detfeed_dataset_set_float(ds, DETFEED_DATASET_FRACTION, ratio);
        else
            rc = DETFEED_EINVAL;
        if (rc != DETFEED_OK) {
            cli_error("--fraction takes a count >= 1 or a ratio in (0, 1], not '%s'",
                      o->fraction);
            detfeed_dataset_destroy(ds);
            return CLI_USAGE;
        }
    }
    cli_watch watch;
    cli_watch_start(&watch, cli_dataset_progress, ds, o->quiet);
    rc = detfeed_dataset_open(ds, data);
    cli_watch_stop(&watch);
    if (rc != DETFEED_OK) {
        cli_error("%s", detfeed_dataset_last_error(ds));
        detfeed_dataset_destroy(ds);
        return CLI_FAIL;
    }
    *out = ds;
    return CLI_OK;
}

static void report(const detfeed_disk_cache *dc, double seconds)
{
    int64_t st = detfeed_disk_cache_stat_get(dc, DETFEED_DISK_STATE);
    int64_t written = detfeed_disk_cache_stat_get(dc, DETFEED_DISK_WRITTEN);
    printf("%s\n%s: %lld of %lld images, %.1f MB of pixels, file %.1f MB\n",
           detfeed_disk_cache_path(dc),
           st >= 0 && st <= DETFEED_DISK_FAILED ? state_names[st] : "?",
           (long long)detfeed_disk_cache_stat_get(dc, DETFEED_DISK_IMAGES),
           (long long)detfeed_disk_cache_stat_get(dc, DETFEED_DISK_EXPECTED),
           detfeed_disk_cache_stat_get(dc, DETFEED_DISK_BYTES) / 1e6,
           detfeed_disk_cache_stat_get(dc, DETFEED_DISK_FILE_BYTES) / 1e6);
    if (written > 0)
        printf("%lld images decoded and written in %.2f s (%.1f images/s)\n",
               (long long)written, seconds, seconds > 0 ? written / seconds : 0.0);
    printf("%s\n", detfeed_disk_cache_note(dc));
}

static int run(const char *data, const cache_opts *o)
{
    detfeed_dataset *ds = NULL;
    int rc = open_dataset(&ds, data, o);
    if (rc != CLI_OK)
        return rc;
    detfeed_disk_cache *dc;
    if (detfeed_disk_cache_create(&dc, 0) != DETFEED_OK) {
        detfeed_dataset_destroy(ds);
        return cli_error("out of memory");
    }
    uint32_t flags = DETFEED_DISK_VERIFY | (o->check     ? DETFEED_DISK_NO_BUILD
                                            : o->no_wait ? 0
                                                         : DETFEED_DISK_WAIT);
    double t0 = cli_now();
    rc = detfeed_disk_cache_open(dc, ds, (int)o->imgsz, o->out, flags);
    if (rc == DETFEED_OK && !o->check) {
        cli_watch watch;
        cli_watch_start(&watch, cli_disk_progress, dc, o->quiet);
        rc = detfeed_disk_cache_fill(dc, (int)o->workers);
        cli_watch_stop(&watch);
    }
    if (rc != DETFEED_OK)
        rc = cli_error("%s", detfeed_disk_cache_last_error(dc));
    else
        report(dc, cli_now() - t0);
    detfeed_disk_cache_destroy(dc);
    detfeed_dataset_destroy(ds);
    return rc;
}

int cmd_cache(int argc, char **argv)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cache_opts o = {.split = "train", .imgsz = 640, .workers = cpus > 0 ? cpus : 1};
    const cli_opt opts[] = {
        {"out", CLI_STRING, &o.out, "FILE",
         "the cache file (default: beside the labels, as the loader's cache disk)", 0,
         0},
        {"imgsz", CLI_INT, &o.imgsz, "N", "image size: the load size (default 640)", 32,
         8192},
        {"split", CLI_STRING, &o.split, "NAME", "split of a YAML (default train)", 0,
         0},
        {"fraction", CLI_STRING, &o.fraction, "F",
         "Ultralytics' fraction: a count or a ratio (default all)", 0, 0},
        {"workers", CLI_INT, &o.workers, "N", "threads (default: every CPU)", 1, 1024},
        {"check", CLI_FLAG, &o.check, NULL,
         "only check the file, every image's pixels too: exit 1 with the reason when "
         "it is missing, stale or damaged",
         0, 0},
        {"no-wait", CLI_FLAG, &o.no_wait, NULL,
         "when another process writes the file, do not wait for it", 0, 0},
        {"quiet", CLI_FLAG, &o.quiet, NULL,
         "no progress line (shown on a terminal for work over a second)", 0, 0},
        {0}};
    const char *usage = "detfeed cache DATA [--out FILE] [--imgsz N] [--split NAME]";
    const char *about =
        "Decodes every image of DATA's split, resized to its load size at --imgsz,\n"
        "into one disk cache file, which the loader with cache=disk (and the same\n"
        "data, split, fraction and imgsz, the settings that decide the image list\n"
        "and the load size) then reads instead of decoding. A valid file is reused\n"
        "(every image's pixels checked against their checksums first); a stale or\n"
        "damaged one is rebuilt, and the last line says why. While another process\n"
        "writes the file this waits for it (unless --no-wait).";
    char *pos[1];
    int rc = cli_parse_exact(argc, argv, opts, usage, about, pos, 1);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    if (o.imgsz % 32) {
        cli_error("--imgsz must be a multiple of 32 (the loader's rule), not %ld",
                  o.imgsz);
        return CLI_USAGE;
    }
    if (o.out && o.out[0] == '\0') {
        cli_error("--out takes a file name");
        return CLI_USAGE;
    }
    return run(pos[0], &o);
}
