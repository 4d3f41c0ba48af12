/*
 * test_disk_cache.c - the disk cache of decoded images:
 * - batches with cache "disk" (built while the loader opens, each image
 *   decoded once for verification and file together, then reused)
 *   equal cache "ram" and cache "none" for 1 and 8 workers, and every image
 *   from the file equals decoding and resizing it;
 * - a second open reuses the file and decodes nothing (DETFEED_DISK_DECODED);
 * - a file made stale (an image's time or size, imgsz, the image list) is
 *   refused with NO_BUILD, or rebuilt, with the reason naming it;
 * - an interrupted write (a writer that dies, a truncated file, a header
 *   without its completion mark) is never used;
 * - two processes: one writes, the other decodes and then adopts the file;
 *   a third waits for it (DETFEED_DISK_WAIT);
 * - what is at the path and is not a cache (a file of the user's, a folder)
 *   is refused by name and left alone; an empty or truncated file is built
 *   over; links planted at the file, its .part and its .lock are refused by
 *   name and never followed;
 * - a folder that cannot be written: an explicit path is refused with the
 *   reason, the default place falls back to the user's cache folder, and a
 *   valid file there is still read;
 * - the loader's settings by text, with their messages.
 * Real JPEGs (a copy of coco8 from DETFEED_TEST_DATA) when present; exit 77
 * when they are missing (after the synthetic checks).
 */
#include "testutil.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { NIMG = 21, S = 96, B = 4 };

static char root[64];

static void path_of(char *buf, size_t size, const char *rel)
{
    snprintf(buf, size, "%s/%s", root, rel);
}

static void write_image(detfeed_codec *codec, const char *path, int w, int h,
                        uint64_t seed)
{
    uint8_t *px = malloc((size_t)w * h * 3);
    for (int k = 0; k < w * h * 3; k++)
        px[k] = (uint8_t)(tu_rand(&seed) >> 56);
    CHECK_INT(detfeed_codec_write_png(codec, path, px, (size_t)w * 3, w, h), 0);
    free(px);
}

/* i % 4 boxes of classes 0, 1, 2. */
static void boxes(FILE *f, int i)
{
    for (int k = 0; k < i % 4; k++)
        fprintf(f, "%d 0.5 0.5 %.3f %.3f\n", k, 0.2 + 0.1 * k, 0.3);
}

static void make_dataset(void)
{
    mkdir(tu_at(root, "data"), 0755);
    tu_noise_dataset(tu_at(root, "data"), NIMG, 40, 150, 5, boxes);
}

/* ---- loaders and digests ------------------------------------------------- */

static detfeed_loader *make_loader(const char *data, int imgsz, int workers,
                                   const char *cache, const char *cache_bytes,
                                   const char *cache_path)
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, imgsz);
    detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, B);
    detfeed_loader_set_int(l, DETFEED_LOADER_WORKERS, workers);
    detfeed_loader_set_int(l, DETFEED_LOADER_EPOCHS, 2);
    detfeed_loader_set_int(l, DETFEED_LOADER_CLOSE_MOSAIC, 1);
    detfeed_loader_set_int(l, DETFEED_LOADER_SEED, 77);
    detfeed_loader_set_float(l, DETFEED_LOADER_MIXUP, 0.3);
    CHECK_INT(detfeed_loader_set(l, "cache", cache), 0);
    CHECK_INT(detfeed_loader_set(l, "cache_bytes", cache_bytes), 0);
    if (cache_path)
        CHECK_INT(detfeed_loader_set(l, "cache_path", cache_path), 0);
    if (!CHECK_INT(detfeed_loader_open(l, data), 0))
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    return l;
}

static int64_t disk_stat(const detfeed_loader *l, detfeed_disk_stat s)
{
    return detfeed_disk_cache_stat_get(detfeed_loader_disk_cache(l), s);
}

/* Copies `from` into a new file renamed to `to`. */
static void copy_file(const char *from, const char *to)
{
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.copy", to);
    FILE *in = fopen(from, "rb"), *out = fopen(tmp, "wb");
    char buf[65536];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0)
        CHECK(fwrite(buf, 1, n, out) == n);
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    CHECK(in && out && rename(tmp, to) == 0);
}

/* What another program does to a cache file while it is read. */
enum { CUT_SHORT, FLIP_4K, ZEROED, REPLACED, NCHANGES };
static const char *const change_names[] = {"cut to half its size", "4 KB flipped",
                                           "its second half zeroed in place",
                                           "replaced by rename"};

static void change_file(const char *file, int how)
{
    struct stat st;
    CHECK_INT(stat(file, &st), 0);
    long size = (long)st.st_size, at = size / 2, n = how == FLIP_4K ? 4096 : size - at;
    if (how == CUT_SHORT) {
        CHECK_INT(truncate(file, at), 0);
    } else if (how == REPLACED) {
        copy_file(file, file); /* a new file of the same bytes, by rename */
    } else {
        uint8_t *b = malloc((size_t)n);
        int fd = open(file, O_RDWR);
        CHECK(b && fd >= 0 && pread(fd, b, (size_t)n, at) == n);
        for (long k = 0; k < n; k++)
            b[k] = how == FLIP_4K ? (uint8_t)~b[k] : 0;
        CHECK(pwrite(fd, b, (size_t)n, at) == n);
        close(fd);
        free(b);
    }
}

/* The digest of two epochs (as tu_digest_hex), with `file` changed by
 * `how` once the first batch is taken: the workers are running. */
static void digest_changed(detfeed_loader *l, const char *file, int how, char hex[65])
{
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    for (uint32_t e = 0; e < 2; e++) {
        CHECK_INT(detfeed_loader_start(l, e), 0);
        const detfeed_batch *b;
        int rc, k = 0;
        while ((rc = detfeed_loader_next(l, &b)) == DETFEED_OK) {
            if (e == 0 && k++ == 0)
                change_file(file, how);
            tu_digest_batch(&ctx, b);
            detfeed_loader_release(l, b);
        }
        CHECK_INT(rc, DETFEED_NEXT_END);
    }
    detfeed_sha256_hex(&ctx, hex);
}

/* A loader reading the disk cache while another program cuts it short,
 * flips 4 KB of it, zeroes half of it in place or replaces it by rename:
 * the process lives, every batch is the clean run's (`ref`), and each
 * image found damaged is counted with a line naming the file; a file
 * replaced by rename is not seen (the reader keeps its own). */
static void test_changed_under_loader(const char *data, int imgsz, const char *file,
                                      const char *ref)
{
    char pristine[300], hex[65], line[1024];
    snprintf(pristine, sizeof pristine, "%s.pristine", file);
    copy_file(file, pristine);
    for (int how = 0; how < NCHANGES; how++) {
        copy_file(pristine, file);
        detfeed_loader *l = make_loader(data, imgsz, 2, "disk", "0", file);
        CHECK_INT(disk_stat(l, DETFEED_DISK_STATE), DETFEED_DISK_REUSED);
        digest_changed(l, file, how, hex);
        bool ok = CHECK_STR(hex, ref);
        int64_t damaged = disk_stat(l, DETFEED_DISK_DAMAGED);
        const detfeed_disk_cache *dc = detfeed_loader_disk_cache(l);
        if (how == REPLACED) {
            ok &= CHECK_INT(damaged, 0);
        } else {
            ok &= CHECK(damaged >= 1);
            ok &= CHECK_INT(detfeed_disk_cache_damage(dc, 0, line, sizeof line), 0);
            ok &= CHECK(strstr(line, file) == line &&
                        (strstr(line, "do not match their checksum") ||
                         strstr(line, "the file ends before its pixels")));
            ok &= CHECK(strstr(line, "decoded from the image instead") != NULL);
        }
        CHECK_INT(detfeed_disk_cache_damage(dc, (size_t)damaged, line, sizeof line),
                  DETFEED_EINVAL);
        if (!ok)
            fprintf(stderr, "  %s, imgsz %d: %lld damaged; %s\n", change_names[how],
                    imgsz, (long long)damaged, line);
        detfeed_loader_destroy(l);
    }
    copy_file(pristine, file);
    unlink(pristine);
}

/* Batches with cache disk (built in the first epoch, then reused) equal
 * cache ram and cache none, for 1 and 8 workers; the reuse decodes
 * nothing. */
static void test_loader_exact(const char *data, int imgsz, const char *tag)
{
    char ref[65], hex[65], file[256];
    snprintf(file, sizeof file, "%s/%s.cache", root, tag);
    detfeed_loader *l = make_loader(data, imgsz, 1, "ram", "ram", NULL);
    CHECK(detfeed_loader_disk_cache(l) == NULL);
    tu_digest_hex(l, 2, ref);
    detfeed_loader_destroy(l);
    l = make_loader(data, imgsz, 8, "none", "0", NULL);
    tu_digest_hex(l, 2, hex);
    CHECK_STR(hex, ref);
    detfeed_loader_destroy(l);
    int workers[] = {1, 8};
    for (int k = 0; k < 2; k++) {
        unlink(file);
        l = make_loader(data, imgsz, workers[k], "disk", "0", file);
        /* the open's verification decoded each image once, into the file
         * (committed by a thread of its own: WRITING until then) */
        int64_t state = disk_stat(l, DETFEED_DISK_STATE);
        CHECK(state == DETFEED_DISK_WRITING || state == DETFEED_DISK_BUILT);
        int64_t n = disk_stat(l, DETFEED_DISK_EXPECTED);
        CHECK_INT(disk_stat(l, DETFEED_DISK_DECODED), n);
        CHECK_INT(disk_stat(l, DETFEED_DISK_IMAGES), n);
        tu_digest_hex(l, 2, hex);
        if (!CHECK_STR(hex, ref))
            fprintf(stderr, "  %s: building, %d workers\n", tag, workers[k]);
        CHECK_INT(disk_stat(l, DETFEED_DISK_DECODED), n); /* none in the epochs */
        CHECK_INT(disk_stat(l, DETFEED_DISK_WRITTEN), n);
        CHECK_INT(disk_stat(l, DETFEED_DISK_IMAGES), n);
        detfeed_loader_destroy(l); /* after the commit thread, if still busy */
        CHECK(access(file, R_OK) == 0);
        /* reused: no image decoded, every one read from the file */
        l = make_loader(data, imgsz, workers[k], "disk", "0", file);
        CHECK_INT(disk_stat(l, DETFEED_DISK_STATE), DETFEED_DISK_REUSED);
        tu_digest_hex(l, 2, hex);
        if (!CHECK_STR(hex, ref))
            fprintf(stderr, "  %s: reused, %d workers\n", tag, workers[k]);
        CHECK_INT(disk_stat(l, DETFEED_DISK_DECODED), 0);
        CHECK(disk_stat(l, DETFEED_DISK_HITS) >= n);
        CHECK_INT(disk_stat(l, DETFEED_DISK_WRITTEN), 0);
        detfeed_loader_destroy(l);
        /* a RAM cache in front of the disk cache fills from it */
        l = make_loader(data, imgsz, workers[k], "disk", "ram", file);
        CHECK_INT(detfeed_cache_stat_get(detfeed_loader_cache(l), DETFEED_CACHE_IMAGES),
                  n);
        tu_digest_hex(l, 2, hex);
        CHECK_STR(hex, ref);
        CHECK_INT(disk_stat(l, DETFEED_DISK_DECODED), 0);
        detfeed_loader_destroy(l);
    }
    test_changed_under_loader(data, imgsz, file, ref);
}

/* ---- the disk cache on its own ------------------------------------------- */

static detfeed_dataset *open_dataset(const char *src)
{
    detfeed_dataset *ds;
    detfeed_dataset_create(&ds, 0);
    if (!CHECK_INT(detfeed_dataset_open(ds, src), 0))
        fprintf(stderr, "  %s\n", detfeed_dataset_last_error(ds));
    return ds;
}

/* Opens a disk cache; the status goes to *rc. */
static detfeed_disk_cache *open_disk(const detfeed_dataset *ds, int imgsz,
                                     const char *path, uint32_t flags, int *rc)
{
    detfeed_disk_cache *dc;
    CHECK_INT(detfeed_disk_cache_create(&dc, 0), 0);
    *rc = detfeed_disk_cache_open(dc, ds, imgsz, path, flags);
    return dc;
}

static int64_t state_of(const detfeed_disk_cache *dc)
{
    return detfeed_disk_cache_stat_get(dc, DETFEED_DISK_STATE);
}

/* Builds `path` with fill; its state afterwards. */
static int64_t build(const detfeed_dataset *ds, int imgsz, const char *path)
{
    int rc;
    detfeed_disk_cache *dc = open_disk(ds, imgsz, path, 0, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(detfeed_disk_cache_fill(dc, 3), 0);
    int64_t st = state_of(dc);
    detfeed_disk_cache_destroy(dc);
    return st;
}

/* Every image from the file equals decoding and resizing it. */
static void check_images(detfeed_disk_cache *dc, const detfeed_dataset *ds, int imgsz)
{
    detfeed_codec *codec;
    detfeed_codec_create(&codec, 0);
    int64_t hits = detfeed_disk_cache_stat_get(dc, DETFEED_DISK_HITS);
    for (size_t i = 0; i < detfeed_dataset_size(ds); i++) {
        const uint8_t *px;
        uint8_t *owned, *dec;
        int w, h, ow, oh, rw, rh;
        int64_t before = detfeed_disk_cache_stat_get(dc, DETFEED_DISK_HITS);
        CHECK_INT(detfeed_disk_cache_get(dc, i, codec, &px, &w, &h, &ow, &oh, &owned),
                  0);
        CHECK(owned != NULL && px == owned); /* a copy, read from the file */
        CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_HITS), before + 1);
        CHECK_INT(detfeed_codec_decode_file(codec, detfeed_dataset_image_path(ds, i),
                                            &dec, &rw, &rh),
                  0);
        CHECK(ow == rw && oh == rh);
        int lw, lh;
        detfeed_load_size(rw, rh, imgsz, &lw, &lh);
        uint8_t *ref = malloc((size_t)lw * lh * 3);
        detfeed_resize_linear(dec, (size_t)rw * 3, rw, rh, ref, (size_t)lw * 3, lw, lh,
                              3);
        CHECK(w == lw && h == lh && memcmp(px, ref, (size_t)lw * lh * 3) == 0);
        free(ref);
        detfeed_free(dec);
        detfeed_free(owned);
    }
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_HITS) - hits,
              (int64_t)detfeed_dataset_size(ds));
    detfeed_codec_destroy(codec);
}

static void test_reuse_exact(const detfeed_dataset *ds)
{
    char file[256];
    path_of(file, sizeof file, "own.cache");
    CHECK_INT(build(ds, S, file), DETFEED_DISK_BUILT);
    char part[300];
    snprintf(part, sizeof part, "%s.part", file);
    CHECK(access(part, F_OK) != 0); /* renamed into place */
    int rc;
    detfeed_disk_cache *dc = open_disk(ds, S, file, DETFEED_DISK_NO_BUILD, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(state_of(dc), DETFEED_DISK_REUSED);
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_IMAGES), NIMG);
    CHECK(strstr(detfeed_disk_cache_note(dc), "reused") != NULL);
    CHECK_INT(detfeed_disk_cache_open(dc, ds, S, file, 0), DETFEED_EBADSTATE);
    CHECK(strstr(detfeed_disk_cache_last_error(dc), "open already") != NULL);
    CHECK_INT(detfeed_disk_cache_fill(dc, 0), DETFEED_EINVAL);
    CHECK(strstr(detfeed_disk_cache_last_error(dc), "fill: threads 0") != NULL);
    CHECK_INT(detfeed_disk_cache_fill(dc, 2), 0); /* nothing to do */
    CHECK_STR(detfeed_disk_cache_last_error(dc), "");
    check_images(dc, ds, S);
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_DECODED), 0);
    /* a RAM cache with a budget of 0 serves every image from the file */
    detfeed_cache *ram;
    detfeed_cache_create(&ram, ds, S, 0, 0);
    CHECK_INT(detfeed_cache_set_disk(ram, dc), 0);
    CHECK_INT(detfeed_cache_fill(ram, 2), 0);
    detfeed_codec *codec;
    detfeed_codec_create(&codec, 0);
    const uint8_t *px;
    uint8_t *owned;
    int w, h;
    int64_t hits = detfeed_disk_cache_stat_get(dc, DETFEED_DISK_HITS);
    CHECK_INT(detfeed_cache_get(ram, 3, codec, &px, &w, &h, NULL, NULL, &owned), 0);
    CHECK(owned != NULL && px == owned);
    detfeed_free(owned);
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_HITS), hits + 1);
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_DECODED), 0);
    detfeed_codec_destroy(codec);
    detfeed_cache_destroy(ram);
    /* a disk cache of another imgsz does not go behind this RAM cache */
    detfeed_cache_create(&ram, ds, 128, 0, 0);
    CHECK_INT(detfeed_cache_set_disk(ram, dc), DETFEED_EINVAL);
    CHECK(strstr(detfeed_cache_last_error(ram), "imgsz 96, the RAM cache for 128") !=
          NULL);
    detfeed_cache_destroy(ram);
    detfeed_disk_cache_destroy(dc);
}

/* The refusals of get and fill name what failed: a cache not open, an
 * image past the dataset (also on the caller's codec, where get's decode
 * errors are); a RAM cache refuses a disk cache that is not open. */
static void test_refusals(const detfeed_dataset *ds)
{
    detfeed_disk_cache *dc;
    detfeed_disk_cache_create(&dc, 0);
    detfeed_codec *codec;
    detfeed_codec_create(&codec, 0);
    const uint8_t *px;
    uint8_t *owned;
    int w, h;
    CHECK_INT(detfeed_disk_cache_get(dc, 0, codec, &px, &w, &h, NULL, NULL, &owned),
              DETFEED_EINVAL);
    CHECK(strstr(detfeed_codec_last_error(codec), "disk_cache_get: the disk cache "
                                                  "is not open") != NULL);
    CHECK(strcmp(detfeed_disk_cache_last_error(dc), "") == 0); /* shared: untouched */
    CHECK_INT(detfeed_disk_cache_fill(dc, 1), DETFEED_EBADSTATE);
    CHECK(strstr(detfeed_disk_cache_last_error(dc),
                 "fill: the disk cache is not open") != NULL);
    detfeed_cache *ram;
    detfeed_cache_create(&ram, ds, S, 0, 0);
    CHECK_INT(detfeed_cache_set_disk(ram, dc), DETFEED_EINVAL);
    CHECK(strstr(detfeed_cache_last_error(ram), "the disk cache is not open") != NULL);
    detfeed_cache_destroy(ram);
    char file[256];
    path_of(file, sizeof file, "own.cache");
    CHECK_INT(detfeed_disk_cache_open(dc, ds, S, file, DETFEED_DISK_NO_BUILD), 0);
    CHECK_INT(detfeed_disk_cache_get(dc, NIMG, codec, &px, &w, &h, NULL, NULL, &owned),
              DETFEED_EINVAL);
    CHECK(strstr(detfeed_codec_last_error(codec),
                 "index 21 is not below the dataset's 21 images") != NULL);
    CHECK_INT(detfeed_disk_cache_get(dc, 0, codec, &px, &w, NULL, NULL, NULL, &owned),
              DETFEED_EINVAL);
    CHECK(strstr(detfeed_codec_last_error(codec), "pixels, width, height and owned") !=
          NULL);
    CHECK_INT(detfeed_disk_cache_get(dc, 0, NULL, &px, &w, &h, NULL, NULL, &owned),
              DETFEED_EINVAL);
    CHECK(strcmp(detfeed_disk_cache_last_error(dc), "") == 0);
    detfeed_codec_destroy(codec);
    detfeed_disk_cache_destroy(dc);
}

/* Writes `text` (n bytes) as the whole of `file`. */
static void write_bytes(const char *file, const char *text, size_t n)
{
    FILE *f = fopen(file, "wb");
    CHECK(f != NULL && fwrite(text, 1, n, f) == n);
    if (f)
        fclose(f);
}

/* What is at the path and is not a disk cache (a file of the user's, a
 * folder) is refused, naming it, and left as it was; an empty file, or a
 * damaged file of detfeed's (its magic, a header cut short), is built
 * over. */
static void test_foreign(const detfeed_dataset *ds)
{
    char file[256], dir[256], back[64];
    path_of(file, sizeof file, "notes.txt");
    const char text[] = "the user's notes, not a cache";
    write_bytes(file, text, sizeof text - 1);
    int rc;
    detfeed_disk_cache *dc = open_disk(ds, S, file, 0, &rc);
    CHECK_INT(rc, DETFEED_EIO);
    const char *msg = detfeed_disk_cache_last_error(dc);
    CHECK(strstr(msg, file) != NULL && strstr(msg, "does not start with DFDCACHE"));
    detfeed_disk_cache_destroy(dc);
    FILE *f = fopen(file, "rb");
    size_t n = f ? fread(back, 1, sizeof back, f) : 0;
    if (f)
        fclose(f);
    CHECK(n == sizeof text - 1 && memcmp(back, text, n) == 0);
    path_of(dir, sizeof dir, "a-folder.cache");
    CHECK(mkdir(dir, 0755) == 0);
    dc = open_disk(ds, S, dir, 0, &rc);
    CHECK_INT(rc, DETFEED_EIO);
    CHECK(strstr(detfeed_disk_cache_last_error(dc), "is a folder") != NULL);
    detfeed_disk_cache_destroy(dc);
    rmdir(dir);
    write_bytes(file, "", 0);
    CHECK_INT(build(ds, S, file), DETFEED_DISK_BUILT);
    write_bytes(file, "DFDC", 4);
    CHECK_INT(build(ds, S, file), DETFEED_DISK_BUILT);
    unlink(file);
}

/* Whether `file` holds exactly `text`. */
static bool holds(const char *file, const char *text)
{
    char back[256];
    FILE *f = fopen(file, "rb");
    size_t n = f ? fread(back, 1, sizeof back, f) : 0;
    if (f)
        fclose(f);
    return n == strlen(text) && memcmp(back, text, n) == 0;
}

/* An open of `file` (flags) fails with DETFEED_EIO and a message that
 * names `named` and contains `want`. */
static void expect_refused(const detfeed_dataset *ds, const char *file, uint32_t flags,
                           const char *named, const char *want)
{
    int rc;
    detfeed_disk_cache *dc = open_disk(ds, S, file, flags, &rc);
    CHECK(rc == DETFEED_EIO || rc == DETFEED_ECORRUPT);
    const char *msg = detfeed_disk_cache_last_error(dc);
    if (!CHECK(strstr(msg, named) != NULL && strstr(msg, want) != NULL))
        fprintf(stderr, "  the message: %s\n", msg);
    detfeed_disk_cache_destroy(dc);
}

/* Links planted where detfeed's own files go are refused by name and
 * never followed: a symbolic link at PATH.part (to a file of the user's),
 * a dangling one at PATH.lock (its target is not created), one at PATH
 * itself (to the user's file, or to a valid cache: not read either). A
 * hard link at a stale PATH.part is unlinked, never written through. */
static void test_links(const detfeed_dataset *ds)
{
    char file[256], part[300], lock[300], victim[256], absent[256], valid[256];
    path_of(file, sizeof file, "linked.cache");
    snprintf(part, sizeof part, "%s.part", file);
    snprintf(lock, sizeof lock, "%s.lock", file);
    path_of(victim, sizeof victim, "victim.txt");
    path_of(absent, sizeof absent, "made-through-a-link");
    path_of(valid, sizeof valid, "valid.cache");
    const char text[] = "a file of the user's";
    write_bytes(victim, text, sizeof text - 1);
    CHECK(symlink(victim, part) == 0);
    expect_refused(ds, file, 0, part, "is a symbolic link");
    CHECK(holds(victim, text));
    unlink(part);
    unlink(lock);
    CHECK(symlink(absent, lock) == 0);
    expect_refused(ds, file, 0, lock, "is a symbolic link");
    CHECK(access(absent, F_OK) != 0);
    unlink(lock);
    CHECK(symlink(victim, file) == 0);
    expect_refused(ds, file, 0, file, "is a symbolic link");
    expect_refused(ds, file, DETFEED_DISK_NO_BUILD, file, "is a symbolic link");
    CHECK(holds(victim, text));
    unlink(file);
    CHECK_INT(build(ds, S, valid), DETFEED_DISK_BUILT);
    CHECK(symlink(valid, file) == 0);
    expect_refused(ds, file, DETFEED_DISK_NO_BUILD, file, "is a symbolic link");
    unlink(file);
    CHECK(link(victim, part) == 0);
    CHECK_INT(build(ds, S, file), DETFEED_DISK_BUILT);
    CHECK(holds(victim, text));
    CHECK(access(part, F_OK) != 0);
    unlink(file);
    unlink(valid);
    unlink(victim);
}

/* NO_BUILD refuses `file` with a message containing `want`; then an open
 * without it rebuilds, saying the same. */
static void expect_stale(const detfeed_dataset *ds, int imgsz, const char *file,
                         const char *want)
{
    int rc;
    detfeed_disk_cache *dc = open_disk(ds, imgsz, file, DETFEED_DISK_NO_BUILD, &rc);
    CHECK(rc == DETFEED_ECORRUPT || rc == DETFEED_EIO);
    if (!CHECK(strstr(detfeed_disk_cache_last_error(dc), want) != NULL))
        fprintf(stderr, "  '%s' lacks '%s'\n", detfeed_disk_cache_last_error(dc), want);
    detfeed_disk_cache_destroy(dc);
    dc = open_disk(ds, imgsz, file, 0, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(state_of(dc), DETFEED_DISK_WRITING);
    if (!CHECK(strstr(detfeed_disk_cache_note(dc), want) != NULL))
        fprintf(stderr, "  note '%s' lacks '%s'\n", detfeed_disk_cache_note(dc), want);
    CHECK_INT(detfeed_disk_cache_fill(dc, 2), 0);
    CHECK_INT(state_of(dc), DETFEED_DISK_BUILT);
    CHECK(strstr(detfeed_disk_cache_note(dc), want) != NULL); /* "before: ..." */
    detfeed_disk_cache_destroy(dc);
}

static void test_stale(void)
{
    char file[256], img[256], src[256];
    path_of(file, sizeof file, "stale.cache");
    path_of(src, sizeof src, "data/images");
    detfeed_dataset *ds = open_dataset(src);
    CHECK_INT(build(ds, S, file), DETFEED_DISK_BUILT);
    expect_stale(ds, 128, file, "imgsz 96 in the file, 128 asked");
    /* the file now holds imgsz 128; back to 96 */
    expect_stale(ds, S, file, "imgsz 128 in the file, 96 asked");
    detfeed_dataset_destroy(ds);
    /* an image's modification time */
    path_of(img, sizeof img, "data/images/05.png");
    struct timespec times[2] = {{.tv_sec = 1000000000, .tv_nsec = 5},
                                {.tv_sec = 1000000000, .tv_nsec = 5}};
    CHECK_INT(utimensat(AT_FDCWD, img, times, 0), 0);
    ds = open_dataset(src);
    expect_stale(ds, S, file, "05.png changed: modified at");
    detfeed_dataset_destroy(ds);
    /* an image's size (and time): rewritten with other pixels */
    detfeed_codec *codec;
    detfeed_codec_create(&codec, 0);
    write_image(codec, img, 61, 47, 999);
    detfeed_codec_destroy(codec);
    ds = open_dataset(src);
    expect_stale(ds, S, file, "05.png changed:");
    detfeed_dataset_destroy(ds);
    /* the image list: a fraction of the dataset */
    detfeed_dataset_create(&ds, 0);
    detfeed_dataset_set_int(ds, DETFEED_DATASET_FRACTION, 10);
    CHECK_INT(detfeed_dataset_open(ds, src), 0);
    expect_stale(ds, S, file, "21 images in the file, 10 in the dataset");
    detfeed_dataset_destroy(ds);
}

/* Writes `size` bytes at `offset` of `file`. */
static void poke(const char *file, long offset, const void *data, size_t size)
{
    int fd = open(file, O_WRONLY);
    CHECK(fd >= 0 && pwrite(fd, data, size, offset) == (ssize_t)size);
    close(fd);
}

static void test_interrupted(const detfeed_dataset *ds)
{
    char file[256], part[300];
    path_of(file, sizeof file, "cut.cache");
    snprintf(part, sizeof part, "%s.part", file);
    /* A writer that dies after three images: its part is never used. */
    pid_t pid = fork();
    if (pid == 0) {
        int rc;
        detfeed_disk_cache *dc = open_disk(ds, S, file, 0, &rc);
        detfeed_codec *codec;
        detfeed_codec_create(&codec, 0);
        for (size_t i = 0; i < 3; i++) {
            const uint8_t *px;
            uint8_t *owned;
            int w, h;
            detfeed_disk_cache_get(dc, i, codec, &px, &w, &h, NULL, NULL, &owned);
        }
        _exit(rc == 0 && state_of(dc) == DETFEED_DISK_WRITING ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(access(part, F_OK) == 0);
    CHECK(access(file, F_OK) != 0);
    expect_stale(ds, S, file, "no file");
    CHECK(access(part, F_OK) != 0);
    /* A file cut short. */
    struct stat st;
    stat(file, &st);
    CHECK_INT(truncate(file, st.st_size - 100), 0);
    expect_stale(ds, S, file, "truncated");
    /* A file with bytes after its end is not called truncated. */
    stat(file, &st);
    CHECK_INT(truncate(file, st.st_size + 8), 0);
    expect_stale(ds, S, file, "damaged: longer than written");
    /* A header without its completion mark (and a checksum that fits). */
    uint8_t head[328];
    FILE *f = fopen(file, "rb");
    CHECK(fread(head, 1, sizeof head, f) == sizeof head);
    fclose(f);
    memset(head + 16, 0, 4); /* the completion mark */
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    detfeed_sha256_update(&ctx, head, 296);
    detfeed_sha256_final(&ctx, head + 296);
    poke(file, 0, head, sizeof head);
    expect_stale(ds, S, file, "incomplete: no completion mark");
    /* A damaged header, and a damaged index. */
    poke(file, 20, "\x01", 1);
    expect_stale(ds, S, file, "damaged: the header's checksum");
    poke(file, 4096 + 8, "\x01\x02", 2);
    expect_stale(ds, S, file, "damaged: the index's checksum");
    /* Without the magic it is not detfeed's file: NO_BUILD says so, and it
     * is not written over (as test_foreign has it). */
    poke(file, 0, "NOTACACH", 8);
    int rc;
    detfeed_disk_cache *dc = open_disk(ds, S, file, DETFEED_DISK_NO_BUILD, &rc);
    CHECK(strstr(detfeed_disk_cache_last_error(dc), "not a detfeed disk cache") !=
          NULL);
    detfeed_disk_cache_destroy(dc);
    dc = open_disk(ds, S, file, 0, &rc);
    CHECK_INT(rc, DETFEED_EIO);
    CHECK(strstr(detfeed_disk_cache_last_error(dc), "does not start with DFDCACHE") !=
          NULL);
    detfeed_disk_cache_destroy(dc);
    unlink(file);
}

/* Where the pixels of image 0 start in a file of `ds` (version 2): the
 * first page after the header and the index (64-byte records, then the
 * paths, absolute here). */
static long first_pixels(const detfeed_dataset *ds)
{
    size_t n = detfeed_dataset_size(ds), bytes = n * 64;
    for (size_t i = 0; i < n; i++)
        bytes += strlen(detfeed_dataset_image_path(ds, i));
    return (long)((4096 + bytes + 4095) / 4096 * 4096);
}

/* Gets image i through the disk cache; true when it equals decoding it. */
static bool get_exact(detfeed_disk_cache *dc, const detfeed_dataset *ds, size_t i)
{
    detfeed_codec *codec;
    detfeed_codec_create(&codec, 0);
    const uint8_t *px;
    uint8_t *owned, *dec, *ref = NULL;
    int w, h, rw, rh, lw, lh;
    bool ok =
        detfeed_disk_cache_get(dc, i, codec, &px, &w, &h, NULL, NULL, &owned) == 0 &&
        detfeed_codec_decode_file(codec, detfeed_dataset_image_path(ds, i), &dec, &rw,
                                  &rh) == 0;
    if (ok) {
        detfeed_load_size(rw, rh, S, &lw, &lh);
        ref = malloc((size_t)lw * lh * 3);
        detfeed_resize_linear(dec, (size_t)rw * 3, rw, rh, ref, (size_t)lw * 3, lw, lh,
                              3);
        ok = w == lw && h == lh && memcmp(px, ref, (size_t)lw * lh * 3) == 0;
        detfeed_free(dec);
        detfeed_free(owned);
    }
    free(ref);
    detfeed_codec_destroy(codec);
    return ok;
}

/* Damaged pixels: a reader gets every image exact (the damaged one
 * decoded, counted and named); VERIFY with NO_BUILD refuses the file,
 * naming the image; VERIFY alone rebuilds it. A writer that finds an image
 * of its own part damaged writes it again, and the file it commits is
 * intact. */
static void test_damage(const detfeed_dataset *ds)
{
    char file[256], part[300], line[1024];
    path_of(file, sizeof file, "damaged.cache");
    snprintf(part, sizeof part, "%s.part", file);
    CHECK_INT(build(ds, S, file), DETFEED_DISK_BUILT);
    long at = first_pixels(ds);
    uint8_t junk[64];
    memset(junk, 0xa5, sizeof junk);
    poke(file, at + 100, junk, sizeof junk); /* inside image 0 */
    int rc;
    detfeed_disk_cache *dc = open_disk(ds, S, file, 0, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(state_of(dc), DETFEED_DISK_REUSED);
    for (size_t i = 0; i < NIMG; i++)
        CHECK(get_exact(dc, ds, i));
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_DAMAGED), 1);
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_DECODED), 1);
    CHECK_INT(detfeed_disk_cache_damage(dc, 0, line, sizeof line), 0);
    CHECK(strstr(line, "image 0 (") &&
          strstr(line, detfeed_dataset_image_path(ds, 0)) &&
          strstr(line, "do not match their checksum"));
    CHECK(get_exact(dc, ds, 0)); /* decoded again, not read nor counted again */
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_DAMAGED), 1);
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_HITS), NIMG - 1);
    detfeed_disk_cache_destroy(dc);
    expect_refused(ds, file, DETFEED_DISK_NO_BUILD | DETFEED_DISK_VERIFY, file,
                   "damaged: the pixels of 1 of its 21 images");
    dc = open_disk(ds, S, file, DETFEED_DISK_VERIFY, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(state_of(dc), DETFEED_DISK_WRITING);
    CHECK(strstr(detfeed_disk_cache_note(dc), "damaged") != NULL);
    CHECK_INT(detfeed_disk_cache_fill(dc, 2), 0);
    detfeed_disk_cache_destroy(dc);
    dc = open_disk(ds, S, file, DETFEED_DISK_NO_BUILD | DETFEED_DISK_VERIFY, &rc);
    CHECK_INT(rc, 0);
    detfeed_disk_cache_destroy(dc);
    /* the writer: image 0 damaged in its part before the commit */
    unlink(file);
    dc = open_disk(ds, S, file, 0, &rc);
    CHECK_INT(state_of(dc), DETFEED_DISK_WRITING);
    for (size_t i = 0; i + 1 < NIMG; i++)
        CHECK(get_exact(dc, ds, i));
    poke(part, at + 100, junk, sizeof junk);
    CHECK(get_exact(dc, ds, 0)); /* damaged: decoded, written again */
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_DAMAGED), 1);
    CHECK_INT(detfeed_disk_cache_damage(dc, 0, line, sizeof line), 0);
    CHECK(strstr(line, "writes the image again") != NULL);
    int64_t hits = detfeed_disk_cache_stat_get(dc, DETFEED_DISK_HITS);
    CHECK(get_exact(dc, ds, 0)); /* read from the part again */
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_HITS), hits + 1);
    CHECK(get_exact(dc, ds, NIMG - 1)); /* the last one: committed */
    detfeed_disk_cache_destroy(dc);
    dc = open_disk(ds, S, file, DETFEED_DISK_NO_BUILD | DETFEED_DISK_VERIFY, &rc);
    if (!CHECK_INT(rc, 0))
        fprintf(stderr, "  %s\n", detfeed_disk_cache_last_error(dc));
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_IMAGES), NIMG);
    detfeed_disk_cache_destroy(dc);
    unlink(file);
}

/* ---- processes ------------------------------------------------------------ */

static void test_processes(const detfeed_dataset *ds)
{
    char file[256];
    path_of(file, sizeof file, "shared.cache");
    int opened[2], go[2];
    CHECK(pipe(opened) == 0 && pipe(go) == 0);
    pid_t writer = fork();
    if (writer == 0) { /* the writer: opens, waits for the signal, fills */
        int rc;
        char c = 0;
        detfeed_disk_cache *dc = open_disk(ds, S, file, 0, &rc);
        int ok = rc == 0 && state_of(dc) == DETFEED_DISK_WRITING;
        CHECK(write(opened[1], "o", 1) == 1);
        CHECK(read(go[0], &c, 1) == 1);
        ok = ok && detfeed_disk_cache_fill(dc, 2) == 0 &&
             state_of(dc) == DETFEED_DISK_BUILT &&
             detfeed_disk_cache_stat_get(dc, DETFEED_DISK_WRITTEN) == NIMG;
        detfeed_disk_cache_destroy(dc);
        _exit(ok ? 0 : 1);
    }
    char c;
    CHECK(read(opened[0], &c, 1) == 1);
    /* Here: another process writes, so images are decoded here. */
    int rc;
    detfeed_disk_cache *dc = open_disk(ds, S, file, 0, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(state_of(dc), DETFEED_DISK_WAITING);
    CHECK(strstr(detfeed_disk_cache_note(dc), "another process") != NULL);
    detfeed_codec *codec;
    detfeed_codec_create(&codec, 0);
    const uint8_t *px;
    uint8_t *owned;
    int w, h;
    CHECK_INT(detfeed_disk_cache_get(dc, 0, codec, &px, &w, &h, NULL, NULL, &owned), 0);
    CHECK(owned != NULL);
    detfeed_free(owned);
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_DECODED), 1);
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_WRITTEN), 0);
    /* A third process waits for the writer (DETFEED_DISK_WAIT). */
    pid_t waiter = fork();
    if (waiter == 0) {
        detfeed_disk_cache *w3 = open_disk(ds, S, file, DETFEED_DISK_WAIT, &rc);
        int ok = rc == 0 && state_of(w3) == DETFEED_DISK_REUSED &&
                 detfeed_disk_cache_stat_get(w3, DETFEED_DISK_IMAGES) == NIMG;
        detfeed_disk_cache_destroy(w3);
        _exit(ok ? 0 : 1);
    }
    CHECK(write(go[1], "g", 1) == 1);
    int status;
    waitpid(writer, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    waitpid(waiter, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The writer's file is adopted at the next look (at most a second). */
    nanosleep(&(struct timespec){.tv_sec = 1, .tv_nsec = 200000000}, NULL);
    CHECK_INT(detfeed_disk_cache_get(dc, 1, codec, &px, &w, &h, NULL, NULL, &owned), 0);
    CHECK_INT(detfeed_disk_cache_stat_get(dc, DETFEED_DISK_HITS), 1);
    detfeed_free(owned);
    CHECK_INT(state_of(dc), DETFEED_DISK_ADOPTED);
    CHECK(strstr(detfeed_disk_cache_note(dc), "adopted") != NULL);
    check_images(dc, ds, S);
    detfeed_codec_destroy(codec);
    detfeed_disk_cache_destroy(dc);
    for (int k = 0; k < 2; k++)
        close(opened[k]), close(go[k]);
}

/* ---- folders that cannot be written --------------------------------------- */

static int readonly_child(const char *ro, const char *user)
{
    char src[256], file[256];
    snprintf(src, sizeof src, "%s/data/images", ro);
    detfeed_dataset *ds = open_dataset(src);
    int rc;
    /* an explicit path in a folder that cannot be written: refused */
    snprintf(file, sizeof file, "%s/new.cache", ro);
    detfeed_disk_cache *dc = open_disk(ds, S, file, 0, &rc);
    CHECK_INT(rc, DETFEED_EIO);
    if (!CHECK(strstr(detfeed_disk_cache_last_error(dc), "cannot be written") != NULL))
        fprintf(stderr, "  %s\n", detfeed_disk_cache_last_error(dc));
    detfeed_disk_cache_destroy(dc);
    /* a valid file there is read */
    snprintf(file, sizeof file, "%s/built.cache", ro);
    dc = open_disk(ds, S, file, 0, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(state_of(dc), DETFEED_DISK_REUSED);
    detfeed_disk_cache_destroy(dc);
    /* the default place falls back to the user's cache folder */
    setenv("XDG_CACHE_HOME", user, 1);
    dc = open_disk(ds, S, NULL, 0, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(state_of(dc), DETFEED_DISK_WRITING);
    const char *path = detfeed_disk_cache_path(dc);
    CHECK(path && strncmp(path, user, strlen(user)) == 0);
    if (!CHECK(strstr(detfeed_disk_cache_note(dc), "cannot be written") != NULL))
        fprintf(stderr, "  %s\n", detfeed_disk_cache_note(dc));
    CHECK_INT(detfeed_disk_cache_fill(dc, 2), 0);
    CHECK_INT(state_of(dc), DETFEED_DISK_BUILT);
    detfeed_disk_cache_destroy(dc);
    dc = open_disk(ds, S, NULL, DETFEED_DISK_NO_BUILD, &rc);
    CHECK_INT(rc, 0);
    CHECK_INT(state_of(dc), DETFEED_DISK_REUSED);
    detfeed_disk_cache_destroy(dc);
    detfeed_dataset_destroy(ds);
    return tu_finish("test_disk_cache (read-only child)");
}

static void test_readonly(void)
{
    char ro[128], user[128], file[256], src[256];
    snprintf(ro, sizeof ro, "%s/ro", root);
    snprintf(user, sizeof user, "%s/user", root);
    CHECK_INT(mkdir(ro, 0755), 0);
    CHECK_INT(mkdir(user, 0755), 0);
    CHECK(tu_copy_tree(tu_at(root, "data"), tu_at(ro, "data")));
    snprintf(src, sizeof src, "%s/data/images", ro);
    snprintf(file, sizeof file, "%s/built.cache", ro);
    detfeed_dataset *ds = open_dataset(src);
    CHECK_INT(build(ds, S, file), DETFEED_DISK_BUILT);
    detfeed_dataset_destroy(ds);
    CHECK(tu_chmod_tree(ro, 0222, 0));
    CHECK_INT(chmod(user, 0777), 0);
    /* a dataset folder nobody may write is left alone by root too (as the
     * verification record has it): the default place falls back */
    const char *env = getenv("XDG_CACHE_HOME");
    char *saved = env ? strdup(env) : NULL, mine[160];
    snprintf(mine, sizeof mine, "%s/user-here", root); /* not the child's */
    CHECK_INT(mkdir(mine, 0755), 0);
    setenv("XDG_CACHE_HOME", mine, 1);
    ds = open_dataset(src);
    int rc;
    detfeed_disk_cache *dc = open_disk(ds, 128, NULL, 0, &rc);
    CHECK_INT(rc, 0);
    const char *path = detfeed_disk_cache_path(dc);
    if (!CHECK(path && strncmp(path, mine, strlen(mine)) == 0))
        fprintf(stderr, "  %s\n", path ? path : "(none)");
    detfeed_disk_cache_destroy(dc);
    detfeed_dataset_destroy(ds);
    if (saved)
        setenv("XDG_CACHE_HOME", saved, 1);
    else
        unsetenv("XDG_CACHE_HOME");
    free(saved);
    /* root writes anywhere else: the checks run as an ordinary user */
    CHECK(tu_run_unprivileged(readonly_child, ro, user));
    CHECK(tu_chmod_tree(ro, 0, S_IWUSR));
}

/* ---- the loader's settings ------------------------------------------------- */

static void test_settings(const char *data)
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    CHECK_INT(detfeed_loader_set(l, "cache", "dsk"), DETFEED_EINVAL);
    CHECK(strstr(detfeed_loader_last_error(l), "none, ram, disk") != NULL);
    CHECK_INT(detfeed_loader_set(l, "cache", "disk"), 0);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_CACHE, 3), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_CACHE_PATH, 1), DETFEED_EINVAL);
    CHECK_INT(detfeed_loader_set(l, "cache_path", ""), 0);
    CHECK_INT(detfeed_loader_set(l, "cache_path", "/nonexistent-folder/x.cache"), 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, S);
    CHECK_INT(detfeed_loader_open(l, data), DETFEED_EIO);
    CHECK(strstr(detfeed_loader_last_error(l), "/nonexistent-folder/x.cache") != NULL);
    CHECK_INT(detfeed_loader_set(l, "cache", "ram"), DETFEED_EBADSTATE);
    detfeed_loader_destroy(l);
    detfeed_loader_create(&l, 0);
    detfeed_loader_set(l, "cache", "none");
    detfeed_loader_set(l, "cache_bytes", "1000");
    CHECK_INT(detfeed_loader_open(l, data), DETFEED_EINVAL);
    CHECK(strstr(detfeed_loader_last_error(l), "cache none") != NULL);
    detfeed_loader_destroy(l);
    /* a cache file without the disk cache would be ignored: refused */
    const char *modes[] = {"ram", "none"};
    for (int k = 0; k < 2; k++) {
        detfeed_loader_create(&l, 0);
        detfeed_loader_set(l, "cache", modes[k]);
        detfeed_loader_set(l, "cache_path", "/tmp/unused.cache");
        CHECK_INT(detfeed_loader_open(l, data), DETFEED_EINVAL);
        CHECK(strstr(detfeed_loader_last_error(l), "it is for cache disk") != NULL);
        detfeed_loader_destroy(l);
    }
}

static bool copy_coco8(char *yaml, size_t size)
{
    const char *data = getenv("DETFEED_TEST_DATA");
    char src[512];
    snprintf(src, sizeof src, "%s/coco8", data ? data : "../shared/data");
    if (access(src, R_OK) != 0)
        return false;
    CHECK(tu_copy_tree(src, tu_at(root, "coco8")));
    snprintf(yaml, size, "%s/coco8/coco8.yaml", root);
    return access(yaml, R_OK) == 0;
}

int main(void)
{
    if (!tu_temp_dir(root, sizeof root, "disk"))
        return tu_finish("test_disk_cache");
    chmod(root, 0755); /* the read-only checks run as another user */
    make_dataset();
    char src[256], yaml[512];
    path_of(src, sizeof src, "data/images");
    detfeed_dataset *ds = open_dataset(src);
    test_reuse_exact(ds);
    test_refusals(ds);
    test_foreign(ds);
    test_links(ds);
    test_interrupted(ds);
    test_damage(ds);
    test_processes(ds);
    detfeed_dataset_destroy(ds);
    test_stale();
    test_readonly();
    test_settings(src);
    test_loader_exact(src, S, "synthetic");
    bool real = copy_coco8(yaml, sizeof yaml);
    if (real)
        test_loader_exact(yaml, 320, "coco8");
    else
        fprintf(stderr, "no coco8 under DETFEED_TEST_DATA: real JPEGs not checked\n");
    if (!tu_remove_tree(root))
        fprintf(stderr, "could not remove %s\n", root);
    int rc = tu_finish("test_disk_cache");
    return rc == 0 && !real ? 77 : rc;
}
