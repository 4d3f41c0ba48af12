/*
 * fuzz_disk_cache.c - libFuzzer target for the disk cache file's reader:
 * its header, its index and records, and the reads of pixels. The files
 * are made from a valid cache of a small dataset (three PNGs, built the
 * first time the target runs, in a temporary folder of its own, removed at
 * exit), changed by the input:
 *   byte 0       bit 0: leave the checksums as the patches left them (else
 *                the header's and the index's SHA-256 are made right
 *                again, so that the checks behind them are reached)
 *   bytes 1, 2   a change of the file's length, in 16-byte steps (signed)
 *   then         patches: a 16-bit offset (little-endian, taken modulo
 *                the file's length), a length byte, that many bytes
 * Each file is opened with DETFEED_DISK_NO_BUILD (nothing is written but
 * the file) and, when it opens, every image is read, then the whole file
 * checked with DETFEED_DISK_VERIFY.
 */
#define _GNU_SOURCE
#include "core/sha256.h"
#include "detfeed.h"
#include "detfeed_img.h"

#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { HEADER = 4096, HEADER_BYTES = 328, INDEX_SHA = 72, HEADER_SHA = 296 };

static char dir[64];
static char file[128];
static detfeed_dataset *ds;
static uint8_t *model; /* the valid file */
static size_t model_size;

static int remove_entry(const char *p, const struct stat *st, int type, struct FTW *f)
{
    (void)st, (void)type, (void)f;
    return remove(p);
}

static void clean_up(void)
{
    detfeed_dataset_destroy(ds);
    free(model);
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static bool write_file(const uint8_t *bytes, size_t n)
{
    FILE *f = fopen(file, "wb");
    bool ok = f && fwrite(bytes, 1, n, f) == n;
    if (f)
        fclose(f);
    return ok;
}

/* The dataset (three PNGs of 16x12, 11x20, 24x24 pixels: Ultralytics
 * skips images below 10 pixels) and its cache at imgsz 32, read back as
 * the model. */
static bool set_up(void)
{
    snprintf(dir, sizeof dir, "%s/detfeed-fuzz-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(dir) == NULL)
        return false;
    atexit(clean_up);
    char p[160];
    snprintf(p, sizeof p, "%s/images", dir);
    mkdir(p, 0755);
    detfeed_codec *codec;
    detfeed_codec_create(&codec, 0);
    const int size[3][2] = {{16, 12}, {11, 20}, {24, 24}};
    uint8_t px[24 * 24 * 3];
    for (size_t k = 0; k < sizeof px; k++)
        px[k] = (uint8_t)(k * 37);
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/images/%d.png", dir, i);
        detfeed_codec_write_png(codec, p, px, (size_t)size[i][0] * 3, size[i][0],
                                size[i][1]);
    }
    detfeed_codec_destroy(codec);
    snprintf(p, sizeof p, "%s/images", dir);
    snprintf(file, sizeof file, "%s/fuzz.cache", dir);
    detfeed_disk_cache *dc;
    if (detfeed_dataset_create(&ds, 0) != DETFEED_OK ||
        detfeed_dataset_open(ds, p) != DETFEED_OK ||
        detfeed_disk_cache_create(&dc, 0) != DETFEED_OK)
        return false;
    bool ok = detfeed_disk_cache_open(dc, ds, 32, file, 0) == DETFEED_OK &&
              detfeed_disk_cache_fill(dc, 1) == DETFEED_OK;
    detfeed_disk_cache_destroy(dc);
    FILE *f = ok ? fopen(file, "rb") : NULL;
    if (f && fseek(f, 0, SEEK_END) == 0 && (model_size = (size_t)ftell(f)) > HEADER &&
        (model = malloc(model_size)) != NULL) {
        rewind(f);
        ok = fread(model, 1, model_size, f) == model_size;
    } else {
        ok = false;
    }
    if (f)
        fclose(f);
    return ok;
}

/* The header's and the index's SHA-256 made right for what they cover. */
static void fix_checksums(uint8_t *b, size_t n)
{
    uint64_t index_bytes;
    memcpy(&index_bytes, b + 48, sizeof index_bytes);
    if (index_bytes <= n - HEADER)
        detfeed_sha256_of(b + HEADER, (size_t)index_bytes, b + INDEX_SHA);
    detfeed_sha256_of(b, HEADER_SHA, b + HEADER_SHA);
}

/* The file the input makes of the model, in a new buffer of *n bytes. */
static uint8_t *make_file(const uint8_t *data, size_t size, size_t *n)
{
    int16_t delta = size >= 3 ? (int16_t)(data[1] | data[2] << 8) : 0;
    long len = (long)model_size + 16L * delta;
    *n = len < 1 ? 1 : (size_t)len;
    uint8_t *b = calloc(*n, 1);
    if (b == NULL)
        return NULL;
    memcpy(b, model, *n < model_size ? *n : model_size);
    for (size_t at = 3; at + 3 <= size;) {
        size_t off = (size_t)(data[at] | data[at + 1] << 8) % *n, k = data[at + 2];
        at += 3;
        for (size_t j = 0; j < k && at < size; j++, at++)
            b[(off + j) % *n] = data[at];
    }
    if (size > 0 && !(data[0] & 1) && *n >= HEADER)
        fix_checksums(b, *n);
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready = -1;
    if (ready < 0)
        ready = set_up();
    size_t n;
    uint8_t *b = ready ? make_file(data, size, &n) : NULL;
    if (b == NULL || !write_file(b, n)) {
        free(b);
        return 0;
    }
    free(b);
    detfeed_disk_cache *dc;
    if (detfeed_disk_cache_create(&dc, 0) != DETFEED_OK)
        return 0;
    if (detfeed_disk_cache_open(dc, ds, 32, file, DETFEED_DISK_NO_BUILD) ==
        DETFEED_OK) {
        detfeed_codec *codec;
        detfeed_codec_create(&codec, 0);
        for (size_t i = 0; i < detfeed_dataset_size(ds); i++) {
            const uint8_t *px;
            uint8_t *owned = NULL;
            int w, h;
            if (detfeed_disk_cache_get(dc, i, codec, &px, &w, &h, NULL, NULL, &owned) ==
                DETFEED_OK) {
                volatile uint8_t last = px[(size_t)w * (size_t)h * 3 - 1];
                (void)last;
            }
            detfeed_free(owned);
        }
        char line[1024];
        for (int64_t k = 0; k < detfeed_disk_cache_stat_get(dc, DETFEED_DISK_DAMAGED);
             k++)
            detfeed_disk_cache_damage(dc, (size_t)k, line, sizeof line);
        detfeed_codec_destroy(codec);
    }
    (void)strlen(detfeed_disk_cache_last_error(dc));
    detfeed_disk_cache_destroy(dc);
    if (detfeed_disk_cache_create(&dc, 0) == DETFEED_OK) {
        detfeed_disk_cache_open(dc, ds, 32, file,
                                DETFEED_DISK_NO_BUILD | DETFEED_DISK_VERIFY);
        detfeed_disk_cache_destroy(dc);
    }
    return 0;
}
