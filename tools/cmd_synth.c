/*
 * cmd_synth.c - `detfeed synth`: writes a synthetic detection dataset in
 * YOLO layout (images/train, labels/train, data.yaml), generated from a seed
 * with nothing downloaded: each image is a textured background with a few
 * filled rectangles, and each rectangle is a labelled box of its class.
 * It is what `detfeed bench` runs on when no dataset is given.
 */
#include "cli.h"
#include "detfeed_img.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { SYNTH_CLASSES = 8 };

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int below(uint64_t *s, int n)
{
    return (int)(next(s) % (uint64_t)n);
}

static bool make_dir(const char *path)
{
    return mkdir(path, 0755) == 0 || errno == EEXIST;
}

/* A smooth two-colour gradient with noise, and 1..6 boxes. */
static void draw(uint8_t *px, int w, int h, uint64_t *rng, FILE *labels)
{
    uint8_t a[3], b[3];
    for (int c = 0; c < 3; c++) {
        a[c] = (uint8_t)below(rng, 256);
        b[c] = (uint8_t)below(rng, 256);
    }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) {
                int t = (x + y) * 255 / (w + h), n = below(rng, 17) - 8;
                int v = (a[c] * (255 - t) + b[c] * t) / 255 + n;
                px[((size_t)y * w + x) * 3 + c] = (uint8_t)(v < 0     ? 0
                                                            : v > 255 ? 255
                                                                      : v);
            }
    int boxes = 1 + below(rng, 6);
    for (int k = 0; k < boxes; k++) {
        int bw = 8 + below(rng, w / 2), bh = 8 + below(rng, h / 2);
        int x0 = below(rng, w - bw), y0 = below(rng, h - bh),
            cls = below(rng, SYNTH_CLASSES);
        uint8_t col[3] = {(uint8_t)(cls * 31), (uint8_t)(255 - cls * 29),
                          (uint8_t)(cls * 97)};
        for (int y = y0; y < y0 + bh; y++)
            for (int x = x0; x < x0 + bw; x++)
                memcpy(px + ((size_t)y * w + x) * 3, col, 3);
        fprintf(labels, "%d %.6f %.6f %.6f %.6f\n", cls, (x0 + bw / 2.0) / w,
                (y0 + bh / 2.0) / h, (double)bw / w, (double)bh / h);
    }
}

/* Writes n images of imgsz-ish sizes under dir; a message on failure. */
int cli_synth(const char *dir, long n, long imgsz, uint64_t seed, bool quiet)
{
    return cli_synth_until(dir, n, imgsz, seed, NULL, quiet);
}

int cli_synth_until(const char *dir, long n, long imgsz, uint64_t seed,
                    const atomic_int *stop, bool quiet)
{
    char p[4096];
    const char *sub[] = {"", "/images", "/images/train", "/labels", "/labels/train"};
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
        snprintf(p, sizeof p, "%s%s", dir, sub[i]);
        if (!make_dir(p))
            return cli_error("%s: cannot create folder: %s", p, strerror(errno));
    }
    detfeed_codec *codec;
    if (detfeed_codec_create(&codec, 0) != DETFEED_OK)
        return cli_error("out of memory");
    uint64_t rng = seed;
    int status = CLI_OK;
    cli_progress bar;
    cli_progress_init(&bar, "synth", quiet);
    for (long i = 0; i < n && status == CLI_OK; i++) {
        cli_progress_update(&bar, i, n);
        if (stop && atomic_load(stop)) {
            status = CLI_INTERRUPTED;
            break;
        }
        int w = (int)imgsz * 3 / 4 + below(&rng, (int)imgsz / 2);
        int h = (int)imgsz * 3 / 4 + below(&rng, (int)imgsz / 2);
        uint8_t *px = malloc((size_t)w * h * 3);
        snprintf(p, sizeof p, "%s/labels/train/%06ld.txt", dir, i);
        FILE *labels = px ? fopen(p, "wx") : NULL; /* a new file: no link followed */
        if (labels == NULL) {
            free(px);
            status = cli_error("%s: cannot write: %s", p, strerror(errno));
            break;
        }
        draw(px, w, h, &rng, labels);
        fclose(labels);
        snprintf(p, sizeof p, "%s/images/train/%06ld.png", dir, i);
        if (detfeed_codec_write_png(codec, p, px, (size_t)w * 3, w, h) != DETFEED_OK)
            status = cli_error("%s", detfeed_codec_last_error(codec));
        free(px);
    }
    cli_progress_end(&bar);
    detfeed_codec_destroy(codec);
    snprintf(p, sizeof p, "%s/data.yaml", dir);
    FILE *y = status == CLI_OK ? fopen(p, "wx") : NULL;
    if (status == CLI_OK && y == NULL)
        return cli_error("%s: cannot write: %s", p, strerror(errno));
    if (y) {
        fprintf(y,
                "# detfeed synth: %ld generated images, seed %llu\n"
                "# No 'path': the dataset root is this file's folder, for\n"
                "# Ultralytics (check_det_dataset) and detfeed alike, from any\n"
                "# working folder.\n"
                "train: images/train\nval: images/train\nnames:\n",
                n, (unsigned long long)seed);
        for (int k = 0; k < SYNTH_CLASSES; k++)
            fprintf(y, "  %d: shape%d\n", k, k);
        fclose(y);
    }
    return status;
}

/* Refuses an OUTDIR that exists and is not an empty folder: synth would
 * mix its images with the ones there and write over a data.yaml. */
static int check_outdir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return errno == ENOENT ? CLI_OK : cli_error("%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return cli_error("%s: exists and is not a folder", dir);
    DIR *d = opendir(dir);
    if (d == NULL)
        return cli_error("%s: cannot read the folder: %s", dir, strerror(errno));
    bool empty = true;
    for (struct dirent *e; empty && (e = readdir(d)) != NULL;)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty ? CLI_OK
                 : cli_error("%s: the folder is not empty (synth writes into a new or "
                             "empty folder)",
                             dir);
}

int cmd_synth(int argc, char **argv)
{
    long n = 128, imgsz = 640, seed = 0;
    bool quiet = false;
    const cli_opt opts[] = {
        {"n", CLI_INT, &n, "N", "number of images (default 128)", 1, 10000000},
        {"imgsz", CLI_INT, &imgsz, "N", "typical image side (default 640)", 32, 8192},
        {"seed", CLI_INT, &seed, "S", "generator seed (default 0)", 0, 1L << 62},
        {"quiet", CLI_FLAG, &quiet, NULL,
         "no progress line (shown on a terminal for work over a second)", 0, 0},
        {0}};
    const char *usage = "detfeed synth OUTDIR [--n N --imgsz N --seed S]";
    const char *about = "Writes a synthetic detection dataset (PNG images with filled\n"
                        "rectangles, their YOLO labels, and data.yaml) into OUTDIR, a\n"
                        "new or empty folder.";
    char *pos[1];
    int rc = cli_parse_exact(argc, argv, opts, usage, about, pos, 1);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    if ((rc = check_outdir(pos[0])) != CLI_OK)
        return rc;
    rc = cli_synth(pos[0], n, imgsz, (uint64_t)seed, quiet);
    if (rc == CLI_OK)
        printf("wrote %ld images to %s (data.yaml)\n", n, pos[0]);
    return rc;
}
