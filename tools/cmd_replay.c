/*
 * cmd_replay.c - `detfeed replay`: runs every batch of some epochs and prints
 * one SHA-256 over all consumer bytes, in order, with counts. Two runs with
 * the same data, settings and seed must print the same digest whatever the
 * worker count, prefetch depth or colour route.
 */
#include "cli.h"
#include "core/sha256.h"

#include <stdlib.h>
#include <string.h>

typedef struct replay_opts {
    long epochs, workers, prefetch, batch, imgsz, seed, close, augment, rank, world;
    const char *route, *output, *dtype, *set, *split;
    bool sha, json, quiet;
} replay_opts;

/* A host copy of each batch's images (which may be in device memory). */
typedef struct host_images {
    void *buf;
    size_t cap;
} host_images;

/* Hashes a segment batch's masks (none for other tasks): their height,
 * width and element size (detfeed_mask_type: 1 or 4) as int32, then the
 * B x H x W elements, all in host byte order. */
static void hash_masks(detfeed_sha256 *ctx, const detfeed_batch *b)
{
    int h = 0, w = 0;
    detfeed_mask_type type = DETFEED_MASK_NONE;
    const void *mask = detfeed_batch_mask_data(b, &h, &w, &type);
    if (mask == NULL)
        return;
    int32_t head[3] = {h, w, (int32_t)type};
    size_t n = (size_t)detfeed_batch_size(b, NULL, NULL);
    detfeed_sha256_update(ctx, head, sizeof head);
    detfeed_sha256_update(ctx, mask, n * (size_t)h * (size_t)w * (size_t)type);
}

/* Hashes one batch: images, then cls, bboxes, batch_idx and keypoints
 * (float32, host byte order), then the masks (hash_masks). */
static int hash_batch(detfeed_sha256 *ctx, const detfeed_batch *b, int nkpt,
                      host_images *h, long *images, long *instances)
{
    size_t bytes;
    const void *img = detfeed_batch_images(b, &bytes);
    if (img == NULL) { /* CUDA output */
        if (bytes > h->cap) {
            free(h->buf);
            h->cap = 0;
            if ((h->buf = malloc(bytes)) == NULL)
                return DETFEED_ENOMEM;
            h->cap = bytes;
        }
        int rc = detfeed_batch_copy_images(b, h->buf, h->cap);
        if (rc != DETFEED_OK)
            return rc;
        img = h->buf;
    }
    int n = detfeed_batch_instances(b);
    detfeed_sha256_update(ctx, img, bytes);
    if (n > 0) {
        detfeed_sha256_update(ctx, detfeed_batch_cls(b), (size_t)n * sizeof(float));
        detfeed_sha256_update(ctx, detfeed_batch_bboxes(b),
                              (size_t)n * 4 * sizeof(float));
        detfeed_sha256_update(ctx, detfeed_batch_batch_idx(b),
                              (size_t)n * sizeof(float));
        if (nkpt)
            detfeed_sha256_update(ctx, detfeed_batch_keypoints(b),
                                  (size_t)n * (size_t)nkpt * 3 * sizeof(float));
    }
    hash_masks(ctx, b);
    *images += detfeed_batch_size(b, NULL, NULL);
    *instances += n;
    return DETFEED_OK;
}

/* The settings replay takes through options of its own, not --set. */
static const cli_owned replay_owned[] = {
    {DETFEED_LOADER_EPOCHS, "--epochs"},
    {DETFEED_LOADER_WORKERS, "--workers"},
    {DETFEED_LOADER_PREFETCH, "--prefetch"},
    {DETFEED_LOADER_BATCH, "--batch"},
    {DETFEED_LOADER_IMGSZ, "--imgsz"},
    {DETFEED_LOADER_SEED, "--seed"},
    {DETFEED_LOADER_CLOSE_MOSAIC, "--close-mosaic"},
    {DETFEED_LOADER_AUGMENT, "--augment"},
    {DETFEED_LOADER_RANK, "--rank"},
    {DETFEED_LOADER_WORLD_SIZE, "--world-size"},
    {DETFEED_LOADER_DTYPE, "--dtype"},
    {DETFEED_LOADER_COLOR, "--route"},
    {DETFEED_LOADER_OUTPUT, "--output"}};
static const cli_set_rules replay_rules = {
    "replay", replay_owned, sizeof replay_owned / sizeof replay_owned[0], NULL};

static int configure(detfeed_loader *l, const replay_opts *o)
{
    detfeed_dtype dt;
    if (detfeed_dtype_parse(o->dtype, &dt) != DETFEED_OK) {
        cli_error("--dtype: '%s' is not u8, f32, f16 or bf16", o->dtype);
        return CLI_USAGE;
    }
    struct {
        detfeed_loader_param p;
        long v;
    } ints[] = {{DETFEED_LOADER_EPOCHS, o->epochs},
                {DETFEED_LOADER_WORKERS, o->workers},
                {DETFEED_LOADER_PREFETCH, o->prefetch},
                {DETFEED_LOADER_BATCH, o->batch},
                {DETFEED_LOADER_IMGSZ, o->imgsz},
                {DETFEED_LOADER_SEED, o->seed},
                {DETFEED_LOADER_CLOSE_MOSAIC, o->close},
                {DETFEED_LOADER_AUGMENT, o->augment},
                {DETFEED_LOADER_RANK, o->rank},
                {DETFEED_LOADER_WORLD_SIZE, o->world},
                {DETFEED_LOADER_DTYPE, dt},
                {DETFEED_LOADER_CACHE_BYTES, 1L << 40}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (detfeed_loader_set_int(l, ints[i].p, ints[i].v) != DETFEED_OK) {
            cli_error("a setting is out of range (--imgsz must be a multiple of 32)");
            return CLI_USAGE;
        }
    if (detfeed_loader_set_split(l, o->split) != DETFEED_OK) {
        cli_error("--split takes train, val or test");
        return CLI_USAGE;
    }
    if (cli_route_set(l, o->route, o->output) != CLI_OK)
        return CLI_USAGE;
    return o->set ? cli_set_hyps(l, o->set, &replay_rules) : CLI_OK;
}

static int replay(detfeed_loader *l, const replay_opts *o, host_images *h)
{
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    int nkpt;
    detfeed_dataset_kpt_shape(detfeed_loader_dataset(l), &nkpt, NULL);
    long batches = 0, images = 0, instances = 0;
    double t0 = cli_now();
    for (long e = 0; e < o->epochs; e++) {
        cli_epoch it;
        int rc = cli_epoch_begin(&it, l, e, o->epochs, "replay", o->quiet);
        if (rc != CLI_OK)
            return rc;
        const detfeed_batch *b;
        while ((rc = detfeed_loader_next(l, &b)) == DETFEED_OK) {
            int hr = hash_batch(&ctx, b, nkpt, h, &images, &instances);
            batches++;
            detfeed_loader_release(l, b);
            if (hr != DETFEED_OK)
                return cli_error("batch %ld: %s", batches - 1, detfeed_strerror(hr));
            cli_epoch_step(&it);
        }
        if ((rc = cli_epoch_end(&it, rc)) != CLI_OK)
            return rc;
    }
    double secs = cli_now() - t0;
    char hex[65];
    detfeed_sha256_hex(&ctx, hex);
    cli_skips k = cli_skips_of(l);
    cli_skips_note(&k);
    cli_verify_note(l);
    if (o->json) {
        printf("{\"epochs\":%ld,\"batches\":%ld,\"images\":%ld,\"instances\":%ld,"
               "\"seconds\":%.3f,\"route\":\"%s\",\"sha256\":\"%s\"",
               o->epochs, batches, images, instances, secs, cli_route_name(l), hex);
        cli_skips_json(stdout, &k);
        cli_verify_json(stdout, l);
        printf("}\n");
        return CLI_OK;
    }
    printf("%ld epochs, %ld batches, %ld images, %ld instances, %.2f s; ", o->epochs,
           batches, images, instances, secs);
    cli_skips_text(stdout, &k);
    printf("\n");
    if (o->sha)
        printf("%s\n", hex);
    return CLI_OK;
}

int cmd_replay(int argc, char **argv)
{
    replay_opts o = {.epochs = 1,
                     .workers = 2,
                     .prefetch = 4,
                     .batch = 16,
                     .imgsz = 640,
                     .close = 10,
                     .augment = 1,
                     .world = 1,
                     .route = "worker",
                     .dtype = "f32",
                     .split = "train"};
    const cli_opt opts[] = {
        {"epochs", CLI_INT, &o.epochs, "N", "epochs to run (default 1)", 1, 1000000},
        {"workers", CLI_INT, &o.workers, "N", "worker threads (default 2)", 1, 1024},
        {"prefetch", CLI_INT, &o.prefetch, "N", "batches ready ahead (default 4)", 1,
         1024},
        {"batch", CLI_INT, &o.batch, "N", "batch size (default 16)", 1, 65536},
        {"imgsz", CLI_INT, &o.imgsz, "N", "image size (default 640)", 32, 8192},
        {"seed", CLI_INT, &o.seed, "S", "seed (default 0)", 0, 1L << 62},
        {"close-mosaic", CLI_INT, &o.close, "N",
         "epochs without mosaic at the end (10)", 0, 1000000},
        {"augment", CLI_INT, &o.augment, "0|1", "training (1, default) or validation",
         0, 1},
        {"rank", CLI_INT, &o.rank, "R", "this process's shard (default 0)", 0, 65535},
        {"world-size", CLI_INT, &o.world, "W",
         "processes sharing each epoch (default 1)", 1, 65536},
        {"route", CLI_STRING, &o.route, "R", CLI_ROUTE_HELP, 0, 0},
        {"output", CLI_STRING, &o.output, "O", CLI_OUTPUT_HELP, 0, 0},
        {"dtype", CLI_STRING, &o.dtype, "T",
         "image dtype: f32 (default), u8, f16, bf16", 0, 0},
        {"split", CLI_STRING, &o.split, "NAME", "split of a YAML (default train)", 0,
         0},
        {"set", CLI_STRING, &o.set, "K=V,...",
         "hyperparameters, stack, caches: mosaic=0.5,opencv=4", 0, 0},
        {"sha256", CLI_FLAG, &o.sha, NULL, "print the digest of all consumer bytes", 0,
         0},
        {"json", CLI_FLAG, &o.json, NULL,
         "print one JSON object with counts and digest", 0, 0},
        {"quiet", CLI_FLAG, &o.quiet, NULL,
         "no progress line (shown on a terminal for work over a second)", 0, 0},
        {0}};
    const char *usage =
        "detfeed replay DATA [--epochs N --workers N --sha256] [options]";
    const char *about =
        "Runs every batch of DATA's epochs and prints counts and, with "
        "--sha256, one digest\nover all consumer bytes in order (per batch: images, "
        "cls, bboxes, batch_idx,\nkeypoints; for segment data then the masks' height, "
        "width and element size as\nint32 and the masks), and what was skipped: "
        "corrupt images left out when opening\n(the loader verifies as `detfeed "
        "check` does) and samples replaced since (JSON:\ncorrupt, skipped, "
        "first_skip).";
    char *pos[1];
    int rc = cli_parse_exact(argc, argv, opts, usage, about, pos, 1);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    detfeed_loader *l;
    if ((rc = detfeed_loader_create(&l, 0)) != DETFEED_OK)
        return cli_error("%s", detfeed_strerror(rc));
    rc = configure(l, &o);
    if (rc == CLI_OK && cli_open_loader(l, pos[0], o.quiet) != DETFEED_OK)
        rc = cli_error("%s", detfeed_loader_last_error(l));
    host_images h = {0};
    if (rc == CLI_OK)
        rc = replay(l, &o, &h);
    detfeed_loader_destroy(l);
    free(h.buf);
    return rc;
}
