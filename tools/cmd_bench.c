/*
 * cmd_bench.c - `detfeed bench`: timings of detfeed's stages.
 *
 * `detfeed bench color` times the fused colour kernel on one thread over a
 * generated image (no data needed): the median of --runs timed calls after
 * --warmup untimed ones.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

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

int cmd_bench(int argc, char **argv)
{
    long imgsz = 640, runs = 50, warmup = 5;
    bool json = false;
    const char *isa_name = "auto";
    const cli_opt opts[] = {
        {"imgsz", CLI_INT, &imgsz, "N", "image side in pixels (default 640)", 32, 8192},
        {"runs", CLI_INT, &runs, "N", "timed runs (default 50)", 1, 100000},
        {"warmup", CLI_INT, &warmup, "N", "untimed runs first (default 5)", 0, 100000},
        {"isa", CLI_STRING, &isa_name, "NAME", CLI_ISA_HELP, 0, 0},
        {"json", CLI_FLAG, &json, NULL,
         "print one JSON object with the figures as the last line", 0, 0},
        {0}};
    const char *usage = "detfeed bench [color] [options]";
    const char *about =
        "Measures detfeed on generated data (nothing to download).\n"
        "  color   single-thread time per image of the fused colour kernel\n"
        "With no stage named, runs every benchmark this build has.";
    char *pos[1];
    int npos;
    int rc = cli_parse(argc, argv, opts, usage, about, pos, 1, &npos);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    detfeed_isa isa;
    if ((rc = cli_isa_option(isa_name, &isa)) != CLI_OK)
        return rc;
    if (npos == 1 && strcmp(pos[0], "color") != 0) {
        cli_error("bench: unknown benchmark '%s' (known: color)", pos[0]);
        return CLI_USAGE;
    }
    return bench_color(imgsz, runs, warmup, isa, json);
}
