/*
 * cmd_bench.c - `detfeed bench`: timings of detfeed's stages.
 *
 * `detfeed bench color` times the fused colour kernel on one thread over a
 * generated image (no data needed): the median of --runs timed calls after
 * --warmup untimed ones.
 */
#include "cli.h"
#include "detfeed_img.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A generated test image: smooth colour ramps plus hashed noise, so that
 * every hue sector and many saturations occur. Deterministic. */
static uint8_t *make_image(int size)
{
    uint8_t *img = malloc((size_t)size * size * 3);
    if (img == NULL)
        return NULL;
    uint32_t state = 0x9e3779b9u;
    for (int y = 0; y < size; y++) {
        for (int x = 0; x < size; x++) {
            state = state * 1664525u + 1013904223u;
            uint8_t *p = img + ((size_t)y * size + x) * 3;
            int n = (int)(state >> 28) - 8;
            p[0] = (uint8_t)((x * 255 / size + n) & 255);
            p[1] = (uint8_t)((y * 255 / size + n) & 255);
            p[2] = (uint8_t)(((x + y) * 255 / (2 * size) + 3 * n) & 255);
        }
    }
    return img;
}

typedef struct bench_result {
    double median_ms, min_ms, max_ms;
} bench_result;

static int time_color(uint8_t *img, int size, detfeed_isa isa, int warmup, int runs,
                      bench_result *res)
{
    uint8_t lut[3][256];
    size_t stride = (size_t)size * 3;
    double *ms = malloc(sizeof *ms * (size_t)runs);
    if (ms == NULL)
        return DETFEED_ENOMEM;
    int rc = detfeed_hsv_lut(0.01, -0.3, 0.2, lut);
    for (int i = 0; rc == DETFEED_OK && i < warmup + runs; i++) {
        double t0 = cli_now();
        rc = detfeed_hsv_apply(img, stride, img, stride, size, size, lut, isa);
        if (i >= warmup)
            ms[i - warmup] = (cli_now() - t0) * 1e3;
    }
    if (rc == DETFEED_OK) {
        res->median_ms = cli_median(ms, runs);
        res->min_ms = ms[0];
        res->max_ms = ms[runs - 1];
    }
    free(ms);
    return rc;
}

static int bench_color(long imgsz, long runs, long warmup, detfeed_isa isa, bool json)
{
    uint8_t *img = make_image((int)imgsz);
    if (img == NULL)
        return cli_error("out of memory for a %ldx%ld image", imgsz, imgsz);
    detfeed_isa used = isa == DETFEED_ISA_AUTO ? detfeed_isa_best() : isa;
    bench_result r;
    int rc = time_color(img, (int)imgsz, used, (int)warmup, (int)runs, &r);
    free(img);
    if (rc != DETFEED_OK)
        return cli_error("colour kernel: %s", detfeed_strerror(rc));
    printf("colour (fused BGR->HSV, LUT, HSV->BGR), %ldx%ld, 1 thread, %s\n", imgsz,
           imgsz, cli_isa_name(used));
    printf("  %.3f ms per image (median of %ld; min %.3f, max %.3f)\n", r.median_ms,
           runs, r.min_ms, r.max_ms);
    printf("  %.1f Mpixel/s\n", (double)imgsz * imgsz / (r.median_ms * 1e3));
    if (json)
        printf("{\"bench\":\"color\",\"imgsz\":%ld,\"isa\":\"%s\",\"runs\":%ld,"
               "\"ms_per_image\":%.6f,\"min_ms\":%.6f,\"max_ms\":%.6f}\n",
               imgsz, cli_isa_name(used), runs, r.median_ms, r.min_ms, r.max_ms);
    return CLI_OK;
}

/* The loader benchmark's settings. */
typedef struct loader_bench {
    long imgsz, batch, workers, epochs, prefetch, seed;
    const char *cache, *dtype, *route, *output, *set;
    const char *command; /* "bench" or "profile", for messages */
    bool json, quiet;
    const atomic_int *stop; /* nonzero: a signal asks to stop (may be NULL) */
} loader_bench;

/* The wait for a batch, in slices when a signal may ask to stop. */
static int next_batch(detfeed_loader *l, const atomic_int *stop,
                      const detfeed_batch **b)
{
    if (stop == NULL)
        return detfeed_loader_next(l, b);
    int rc;
    while ((rc = detfeed_loader_next_timed(l, b, 50)) == DETFEED_NEXT_TIMEOUT)
        if (atomic_load(stop))
            return CLI_INTERRUPTED;
    return rc;
}

/* The settings the loader benchmark takes through options of its own, or
 * not at all (its run is always 100 epochs long). */
static const cli_owned bench_owned[] = {
    {DETFEED_LOADER_IMGSZ, "--imgsz"},       {DETFEED_LOADER_BATCH, "--batch"},
    {DETFEED_LOADER_WORKERS, "--workers"},   {DETFEED_LOADER_PREFETCH, "--prefetch"},
    {DETFEED_LOADER_SEED, "--seed"},         {DETFEED_LOADER_DTYPE, "--dtype"},
    {DETFEED_LOADER_COLOR, "--route"},       {DETFEED_LOADER_OUTPUT, "--output"},
    {DETFEED_LOADER_CACHE_BYTES, "--cache"}, {DETFEED_LOADER_EPOCHS, NULL}};

static int configure(detfeed_loader *l, const loader_bench *o)
{
    const cli_set_rules rules = {o->command, bench_owned,
                                 sizeof bench_owned / sizeof bench_owned[0],
                                 "it times --epochs epochs of a 100-epoch run"};
    if (cli_route_set(l, o->route, o->output) != CLI_OK)
        return CLI_USAGE;
    detfeed_dtype dt;
    if (detfeed_dtype_parse(o->dtype, &dt) != DETFEED_OK) {
        cli_error("--dtype: '%s' is not u8, f32, f16 or bf16", o->dtype);
        return CLI_USAGE;
    }
    long cache = strcmp(o->cache, "ram") == 0    ? (1L << 40)
                 : strcmp(o->cache, "none") == 0 ? 0
                                                 : -1;
    if (cache < 0 && !cli_parse_long(o->cache, 0, 1L << 50, &cache)) {
        cli_error("--cache takes ram, none or a byte count");
        return CLI_USAGE;
    }
    if (detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, o->imgsz) ||
        detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, o->batch) ||
        detfeed_loader_set_int(l, DETFEED_LOADER_WORKERS, o->workers) ||
        /* The run is Ultralytics' default length, so the timed epochs are
         * ordinary ones (with mosaic), not close_mosaic ones. */
        detfeed_loader_set_int(l, DETFEED_LOADER_EPOCHS, 100) ||
        detfeed_loader_set_int(l, DETFEED_LOADER_PREFETCH, o->prefetch) ||
        detfeed_loader_set_int(l, DETFEED_LOADER_SEED, o->seed) ||
        detfeed_loader_set_int(l, DETFEED_LOADER_DTYPE, dt) ||
        detfeed_loader_set_int(l, DETFEED_LOADER_CACHE_BYTES, cache)) {
        cli_error("a setting is out of range (--imgsz must be a multiple of 32)");
        return CLI_USAGE;
    }
    return o->set ? cli_set_hyps(l, o->set, &rules) : CLI_OK;
}

/* The process's peak resident memory in KiB (Linux /proc), or -1. */
static long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

/* Runs the epochs; per-epoch images/s into rate[] and peak RSS into rss[]. */
static int run_epochs(detfeed_loader *l, long epochs, const atomic_int *stop,
                      bool quiet, double *rate, long *rss, long *images)
{
    for (long e = 0; e < epochs; e++) {
        double t0 = cli_now();
        long n = 0;
        cli_epoch it;
        int rc = cli_epoch_begin(&it, l, e, epochs, "bench", quiet);
        if (rc != CLI_OK)
            return rc;
        const detfeed_batch *b;
        while ((rc = next_batch(l, stop, &b)) == DETFEED_OK) {
            n += detfeed_batch_size(b, NULL, NULL);
            detfeed_loader_release(l, b);
            cli_epoch_step(&it);
        }
        if ((rc = cli_epoch_end(&it, rc)) != CLI_OK)
            return rc;
        rate[e] = n / (cli_now() - t0);
        rss[e] = peak_rss_kib();
        *images = n;
    }
    return CLI_OK;
}

static const char *const stage_names[DETFEED_STAGE_COUNT] = {
    "decode",  "resize", "geometry", "colour", "flip",
    "convert", "pack",   "wait",     "read",   "check"};

/* The stage table: seconds, ms per image and share of the worker stages
 * (wait is the consumer's and is shown apart). */
static void print_stages(const detfeed_loader *l, long images)
{
    double total = 0, sec[DETFEED_STAGE_COUNT];
    for (int k = 0; k < DETFEED_STAGE_COUNT; k++) {
        sec[k] = detfeed_loader_stage_seconds(l, (detfeed_stage)k);
        if (k != DETFEED_STAGE_WAIT)
            total += sec[k];
    }
    printf("  %-10s %10s %12s %8s\n", "stage", "seconds", "ms/image", "share");
    for (int k = 0; k < DETFEED_STAGE_COUNT; k++)
        printf("  %-10s %10.3f %12.3f %7.1f%%\n", stage_names[k], sec[k],
               images ? sec[k] * 1e3 / images : 0.0,
               k == DETFEED_STAGE_WAIT || total == 0 ? 0.0 : 100 * sec[k] / total);
    printf("  (worker stages summed over threads: %.3f s; wait is the consumer's)\n",
           total);
}

static void print_stages_json(const detfeed_loader *l)
{
    printf(",\"stages\":{");
    for (int k = 0; k < DETFEED_STAGE_COUNT; k++)
        printf("%s\"%s\":%.6f", k ? "," : "", stage_names[k],
               detfeed_loader_stage_seconds(l, (detfeed_stage)k));
    printf("}");
}

static int bench_loader(const char *data, const loader_bench *o)
{
    detfeed_loader *l;
    int rc = detfeed_loader_create(&l, 0);
    if (rc != DETFEED_OK)
        return cli_error("%s", detfeed_strerror(rc));
    double t0 = cli_now(), rate[64];
    long rss[64];
    long images = 0;
    if ((rc = configure(l, o)) == CLI_OK &&
        cli_open_loader(l, data, o->quiet) != DETFEED_OK)
        rc = cli_error("%s", detfeed_loader_last_error(l));
    double open_s = cli_now() - t0;
    if (rc == CLI_OK)
        rc = run_epochs(l, o->epochs, o->stop, o->quiet, rate, rss, &images);
    if (rc == CLI_OK) {
        double med = cli_median(rate, (int)o->epochs);
        const char *pin_why = NULL;
        int pinned = detfeed_loader_pinned(l, &pin_why) == 1;
        printf("loader: %s, imgsz %ld, batch %ld, %ld workers, dtype %s, route %s, %ld "
               "epoch(s)\n",
               data, o->imgsz, o->batch, o->workers, o->dtype, cli_route_name(l),
               o->epochs);
        printf("  device memory held by the loader: %.1f MiB\n",
               detfeed_loader_device_bytes(l) / 1048576.0);
        if (pinned)
            printf("  batch slots: page-locked\n");
        else
            printf("  batch slots: pageable (%s)\n",
                   pin_why ? pin_why : "reason unknown");
        printf("  open (index, decode, cache): %.2f s\n", open_s);
        printf("  verification: ");
        cli_text(stdout, detfeed_loader_verify_note(l));
        printf("\n");
        printf("  %.1f images/s (median over epochs; %ld images each)\n", med, images);
        printf("  peak RSS after each epoch (MiB):");
        for (long e = 0; e < o->epochs; e++)
            printf(" %.1f", rss[e] / 1024.0);
        printf("\n");
        print_stages(l, images * o->epochs);
        cli_skips k = cli_skips_of(l);
        cli_skips_note(&k);
        cli_damage_note(l);
        printf("  ");
        cli_skips_text(stdout, &k);
        printf("\n");
        if (o->json) {
            printf("{\"bench\":\"loader\",\"imgsz\":%ld,\"batch\":%ld,\"workers\":%ld,"
                   "\"dtype\":\"%s\",\"route\":\"%s\",\"device_mib\":%.1f,"
                   "\"device_made\":%lld,\"pinned\":%s,\"epochs\":%ld,"
                   "\"images_per_epoch\":%ld,\"open_s\":%.3f",
                   o->imgsz, o->batch, o->workers, o->dtype, cli_route_name(l),
                   detfeed_loader_device_bytes(l) / 1048576.0,
                   (long long)detfeed_loader_device_made(l), pinned ? "true" : "false",
                   o->epochs, images, open_s);
            print_stages_json(l);
            cli_skips_json(stdout, &k);
            cli_verify_json(stdout, l);
            printf(",\"peak_rss_mib\":[");
            for (long e = 0; e < o->epochs; e++)
                printf("%s%.1f", e ? "," : "", rss[e] / 1024.0);
            printf("],\"images_per_s\":%.3f}\n", med);
        }
    }
    detfeed_loader_destroy(l);
    return rc;
}

/* SIGINT and SIGTERM while bench_synthetic runs: blocked in every thread
 * (the loader's workers start later and inherit the mask) and taken by one
 * thread in sigwait, which only records the signal; the main path sees it
 * between images and batches, removes the generated folder and ends by the
 * same signal. No signal handler runs. */
typedef struct signal_watch {
    sigset_t set;
    pthread_t thread;
    atomic_int caught; /* the signal, or 0 */
    atomic_bool done;  /* the run is over: the next signal only ends the wait */
} signal_watch;

static void *watch_signals(void *arg)
{
    signal_watch *w = arg;
    int sig = 0;
    if (sigwait(&w->set, &sig) == 0 && !atomic_load(&w->done))
        atomic_store(&w->caught, sig);
    return NULL;
}

static bool watch_start(signal_watch *w)
{
    sigemptyset(&w->set);
    sigaddset(&w->set, SIGINT);
    sigaddset(&w->set, SIGTERM);
    atomic_init(&w->caught, 0);
    atomic_init(&w->done, false);
    return pthread_sigmask(SIG_BLOCK, &w->set, NULL) == 0 &&
           pthread_create(&w->thread, NULL, watch_signals, w) == 0;
}

/* Ends the watch; the signal caught (0: none). */
static int watch_end(signal_watch *w)
{
    atomic_store(&w->done, true);
    if (atomic_load(&w->caught) == 0)
        pthread_kill(w->thread, SIGINT); /* wakes the sigwait, recorded as nothing */
    pthread_join(w->thread, NULL);
    return atomic_load(&w->caught);
}

/* Ends the process by the signal that was caught, as if it had not been
 * blocked: default action, unblocked, raised. */
static void die_by(int sig)
{
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    signal(sig, SIG_DFL);
    raise(sig); /* pending while blocked */
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
}

/* `detfeed bench` without DATA: a synthetic dataset in a temporary folder,
 * removed afterwards, also when SIGINT or SIGTERM stops the run. */
static int bench_synthetic(const loader_bench *o)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096], data[4200];
    int n = snprintf(dir, sizeof dir, "%s/detfeed-bench-XXXXXX",
                     tmp && *tmp ? tmp : "/tmp");
    if (n < 0 || (size_t)n >= sizeof dir)
        return cli_error("TMPDIR is too long");
    signal_watch watch;
    if (!watch_start(&watch))
        return cli_error("cannot watch for signals");
    if (mkdtemp(dir) == NULL) {
        int sig = watch_end(&watch);
        if (sig != 0)
            die_by(sig);
        return cli_error("%s: cannot create a temporary folder", dir);
    }
    fputs("generating a synthetic dataset of 128 images in ", stdout);
    cli_text(stdout, dir);
    fputc('\n', stdout);
    fflush(stdout);
    loader_bench run = *o;
    run.stop = &watch.caught;
    int rc = cli_synth_until(dir, 128, o->imgsz, 0, run.stop, o->quiet);
    snprintf(data, sizeof data, "%s/data.yaml", dir);
    if (rc == CLI_OK)
        rc = bench_loader(data, &run);
    if (!cli_remove_tree(dir))
        cli_error("could not remove %s: %s", dir, strerror(errno));
    int sig = watch_end(&watch);
    if (sig != 0)
        die_by(sig);
    return rc == CLI_INTERRUPTED ? CLI_FAIL : rc;
}

/* Everything `detfeed bench` and `detfeed profile` take. */
typedef struct bench_args {
    loader_bench lb;
    long runs, warmup;
    const char *isa;
} bench_args;

/* The options of one mode only: the colour kernel's (bench color) and the
 * loader's (bench [DATA], profile DATA); --imgsz and --json are both's. */
static const char *const color_only[] = {"runs", "warmup", "isa", NULL};
static const char *const loader_only[] = {"batch",  "workers", "epochs", "prefetch",
                                          "cache",  "dtype",   "seed",   "route",
                                          "output", "set",     NULL};

static bool listed(const char *const *names, const char *name)
{
    for (; *names; names++)
        if (strcmp(*names, name) == 0)
            return true;
    return false;
}

/* Refuses an option of `names` that was given (seen) to a mode it does not
 * apply to, naming the option and the mode it belongs to. */
static int refuse_given(const cli_opt *opts, const bool *seen, const char *const *names,
                        const char *belongs, const char *here)
{
    for (int k = 0; opts[k].name; k++)
        if (seen[k] && listed(names, opts[k].name)) {
            cli_error("--%s applies to %s only, not to %s", opts[k].name, belongs,
                      here);
            return CLI_USAGE;
        }
    return CLI_OK;
}

/* The colour kernel benchmark, after the options of the loader's are refused. */
static int run_color(const bench_args *a, const cli_opt *opts, const bool *seen)
{
    int rc = refuse_given(opts, seen, loader_only,
                          "the loader benchmark (detfeed bench [DATA])",
                          "detfeed bench color");
    detfeed_isa isa;
    if (rc == CLI_OK && (rc = cli_isa_option(a->isa, &isa)) == CLI_OK)
        rc = bench_color(a->lb.imgsz, a->runs, a->warmup, isa, a->lb.json);
    return rc;
}

/* The loader benchmark on DATA (NULL: a synthetic dataset), after the
 * colour kernel's options are refused. */
static int run_loader(const bench_args *a, const cli_opt *opts, const bool *seen,
                      const char *data)
{
    char here[32];
    snprintf(here, sizeof here, "detfeed %s", a->lb.command);
    int rc = refuse_given(opts, seen, color_only, "detfeed bench color", here);
    if (rc != CLI_OK)
        return rc;
    return data ? bench_loader(data, &a->lb) : bench_synthetic(&a->lb);
}

/* `detfeed bench` (profile false) and `detfeed profile` (true): one parser,
 * so that both read option values as values, never as DATA. */
static int bench_main(int argc, char **argv, bool profile)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    bench_args a = {.lb = {.imgsz = 640,
                           .batch = 16,
                           .workers = ncpu > 0 ? ncpu : 1,
                           .epochs = 2,
                           .prefetch = 4,
                           .cache = "ram",
                           .dtype = "f32",
                           .route = "worker",
                           .command = profile ? "profile" : "bench"},
                    .runs = 50,
                    .warmup = 5,
                    .isa = "auto"};
    loader_bench *lb = &a.lb;
    const cli_opt opts[] = {
        {"imgsz", CLI_INT, &lb->imgsz, "N", "image side in pixels (default 640)", 32,
         8192},
        {"batch", CLI_INT, &lb->batch, "N", "loader: batch size (default 16)", 1,
         65536},
        {"workers", CLI_INT, &lb->workers, "N",
         "loader: worker threads (default: CPUs)", 1, 1024},
        {"epochs", CLI_INT, &lb->epochs, "N", "loader: epochs timed (default 2)", 1,
         64},
        {"prefetch", CLI_INT, &lb->prefetch, "N", "loader: batches ahead (default 4)",
         1, 1024},
        {"cache", CLI_STRING, &lb->cache, "C", "loader: ram (default), none, or bytes",
         0, 0},
        {"dtype", CLI_STRING, &lb->dtype, "T", "loader: f32 (default), u8, f16, bf16",
         0, 0},
        {"seed", CLI_INT, &lb->seed, "S", "loader: seed (default 0)", 0, 1L << 62},
        {"route", CLI_STRING, &lb->route, "R", "loader: " CLI_ROUTE_HELP, 0, 0},
        {"output", CLI_STRING, &lb->output, "O", "loader: " CLI_OUTPUT_HELP, 0, 0},
        {"set", CLI_STRING, &lb->set, "K=V,...",
         "loader: hyperparameters, stack, caches: opencv=4,recipe_cache=host", 0, 0},
        {"runs", CLI_INT, &a.runs, "N", "color: timed runs (default 50)", 1, 100000},
        {"warmup", CLI_INT, &a.warmup, "N", "color: untimed runs first (default 5)", 0,
         100000},
        {"isa", CLI_STRING, &a.isa, "NAME", "color: " CLI_ISA_HELP, 0, 0},
        {"json", CLI_FLAG, &lb->json, NULL,
         "print one JSON object with the figures as the last line", 0, 0},
        {"quiet", CLI_FLAG, &lb->quiet, NULL,
         "no progress line (shown on a terminal for work over a second)", 0, 0},
        {0}};
    const char *usage = profile ? "detfeed profile DATA [bench options]"
                                : "detfeed bench [DATA | color] [options]";
    const char *about =
        profile
            ? "Runs the loader on DATA and prints where the time goes, per stage:\n"
              "decode, resize, geometry, colour, flip, convert, pack (worker threads)\n"
              "and wait (the consumer). Options as for detfeed bench's loader."
            : "Measures detfeed. With DATA (a dataset YAML, folder or list): the "
              "loader's\nimages/s through augmentation and batching. Without: the same "
              "on a synthetic\ndataset generated in a temporary folder (nothing to "
              "download).\n  color   single-thread time per image of the fused colour "
              "kernel\nOptions marked loader: are the loader's, color: the colour "
              "kernel's.";
    char *pos[1];
    int npos;
    bool seen[CLI_MAX_OPTS];
    int rc = cli_parse_seen(argc, argv, opts, usage, about, pos, 1, &npos, seen);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    bool color = npos == 1 && strcmp(pos[0], "color") == 0;
    if (profile && color)
        cli_error("detfeed profile runs the loader on DATA; the colour kernel is "
                  "timed by detfeed bench color");
    else if (profile && npos != 1)
        cli_error("usage: %s", usage);
    if (profile && (npos != 1 || color))
        return CLI_USAGE;
    if (color)
        return run_color(&a, opts, seen);
    return run_loader(&a, opts, seen, npos == 1 ? pos[0] : NULL);
}

int cmd_bench(int argc, char **argv)
{
    return bench_main(argc, argv, false);
}

/* `detfeed profile DATA`: the loader benchmark, read for its stage table. */
int cmd_profile(int argc, char **argv)
{
    return bench_main(argc, argv, true);
}
