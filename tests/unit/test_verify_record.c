/*
 * test_verify_record.c - the verification record: the verdicts of the
 * check detfeed_loader_open makes by decoding are kept, and a later open
 * reuses them instead of decoding every image again:
 * - a second open decodes nothing and gives the same index, problems and
 *   batches (digests) as the first, with or without a RAM cache;
 * - a corrupt image stays left out with the message `detfeed check` gives,
 *   also from another working folder and under the fail policy;
 * - touching one image (its mtime), adding one or changing the image limits
 *   decodes again (only that image; every image for the limits); removing
 *   one rewrites the record without decoding;
 * - an image whose file was replaced behind the record's back (same size
 *   and time) still fails where the RAM cache's fill decodes it;
 * - a truncated, bit-flipped or empty record is not used and is rewritten;
 *   a file there that is not a record (no magic) is not written over: the
 *   open verifies every image and records nothing, saying why; so is a
 *   symbolic link planted at the record or its lock (never followed);
 * - verify_record none decodes every image and reads and writes nothing;
 *   an explicit path is used;
 * - a dataset folder that cannot be written: the record goes to the user's
 *   cache folder (also for root when the folder's mode lets nobody write),
 *   and where nothing can be written the open still verifies, unrecorded;
 * - processes opening at once: together they decode every image once, and
 *   each gets the same index and batches;
 * - the setting's texts and messages.
 * Generated PNGs; the real JPEGs of coco8 (DETFEED_TEST_DATA) when present,
 * else exit 77 after the generated checks.
 */
#include "testutil.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { NIMG = 12, BAD = 5 }; /* images/05.png is cut short */

static char root[64];

/* ---- data ---------------------------------------------------------------- */

static void labels(FILE *f, int i)
{
    for (int k = 0; k < i % 3; k++)
        fprintf(f, "%d 0.5 0.5 %.3f %.3f\n", k, 0.2 + 0.1 * k, 0.3);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Keeps the first `keep` bytes of `path`. */
static void cut(const char *path, long keep)
{
    CHECK_INT(truncate(path, keep), 0);
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
    }
    return ~c;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Overwrites 16 bytes in the middle of the first IDAT chunk of the PNG
 * `path` and mends the chunk's CRC: the chunks are intact (the image is
 * indexed from its header), the pixels do not decode. The size stays. */
static void damage_png(const char *path)
{
    long size = file_size(path);
    uint8_t *b = malloc((size_t)size);
    FILE *f = fopen(path, "r+b");
    if (!CHECK(f && b && fread(b, 1, (size_t)size, f) == (size_t)size)) {
        if (f)
            fclose(f);
        free(b);
        return;
    }
    bool done = false;
    for (long at = 8; !done && at + 12 <= size;) {
        uint32_t len = be32(b + at);
        if (memcmp(b + at + 4, "IDAT", 4) == 0 && len >= 64) {
            memset(b + at + 8 + len / 2, 0x5a, 16);
            uint32_t crc = crc32_of(b + at + 4, (size_t)len + 4);
            uint8_t *q = b + at + 8 + len;
            q[0] = (uint8_t)(crc >> 24), q[1] = (uint8_t)(crc >> 16);
            q[2] = (uint8_t)(crc >> 8), q[3] = (uint8_t)crc;
            done = true;
        }
        at += 12 + (long)len;
    }
    CHECK(done);
    rewind(f);
    CHECK(fwrite(b, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    free(b);
}

/* `dir`/images: NIMG noise PNGs, one of them damaged (indexed from its
 * header, failing to decode). */
static void make_dataset(const char *dir, uint64_t seed)
{
    mkdir(dir, 0755);
    tu_noise_dataset(dir, NIMG, 40, 60, seed, labels);
    damage_png(tu_at(dir, "images/05.png"));
}

/* Sets a file's modification time `delta_s` seconds from what it was. */
static void shift_mtime(const char *path, long delta_s)
{
    struct stat st;
    CHECK_INT(stat(path, &st), 0);
    struct timespec t[2] = {st.st_atim, st.st_mtim};
    t[1].tv_sec += delta_s;
    CHECK_INT(utimensat(AT_FDCWD, path, t, 0), 0);
}

/* ---- loaders ------------------------------------------------------------- */

/* A loader over `src` with name/value settings (NULL-terminated), opened;
 * its status to *rc. */
static detfeed_loader *open_loader(const char *src, const char *const *kv, int *rc)
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, 96);
    detfeed_loader_set_int(l, DETFEED_LOADER_BATCH, 4);
    detfeed_loader_set_int(l, DETFEED_LOADER_WORKERS, 2);
    detfeed_loader_set_int(l, DETFEED_LOADER_EPOCHS, 2);
    detfeed_loader_set_int(l, DETFEED_LOADER_CLOSE_MOSAIC, 1);
    detfeed_loader_set_int(l, DETFEED_LOADER_SEED, 11);
    detfeed_loader_set_float(l, DETFEED_LOADER_MIXUP, 0.3);
    for (int k = 0; kv && kv[k]; k += 2)
        if (!CHECK_INT(detfeed_loader_set(l, kv[k], kv[k + 1]), 0))
            fprintf(stderr, "  %s=%s: %s\n", kv[k], kv[k + 1],
                    detfeed_loader_last_error(l));
    *rc = detfeed_loader_open(l, src);
    return l;
}

static detfeed_loader *open_ok(const char *src, const char *const *kv)
{
    int rc;
    detfeed_loader *l = open_loader(src, kv, &rc);
    if (!CHECK_INT(rc, 0))
        fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    return l;
}

static int64_t vstat(const detfeed_loader *l, detfeed_verify_stat s)
{
    return detfeed_loader_verify_stat(l, s);
}

/* The digest of the index (paths, counts, problems) and of every batch of
 * two epochs (the second without mosaic). */
static void digest(detfeed_loader *l, char hex[65])
{
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    const detfeed_dataset *ds = detfeed_loader_dataset(l);
    for (size_t i = 0; i < detfeed_dataset_size(ds); i++) {
        const char *p = detfeed_dataset_image_path(ds, i);
        detfeed_sha256_update(&ctx, p, strlen(p) + 1);
    }
    for (int k = DETFEED_STAT_IMAGES; k <= DETFEED_STAT_LEFT_OUT; k++) {
        int64_t v = detfeed_dataset_stat_get(ds, (detfeed_dataset_stat)k);
        detfeed_sha256_update(&ctx, &v, sizeof v);
    }
    for (size_t i = 0; i < detfeed_dataset_problem_count(ds); i++) {
        const char *file, *reason;
        int line;
        detfeed_dataset_problem(ds, i, &file, &line, &reason);
        detfeed_sha256_update(&ctx, file, strlen(file) + 1);
        detfeed_sha256_update(&ctx, reason, strlen(reason) + 1);
    }
    tu_digest_batches(l, 2, &ctx);
    detfeed_sha256_hex(&ctx, hex);
}

/* The reason the dataset gives for the file whose name ends in `tail`. */
static const char *reason_for(const detfeed_dataset *ds, const char *tail)
{
    size_t n = strlen(tail);
    for (size_t i = 0; i < detfeed_dataset_problem_count(ds); i++) {
        const char *file, *reason;
        int line;
        detfeed_dataset_problem(ds, i, &file, &line, &reason);
        size_t f = strlen(file);
        if (f >= n && strcmp(file + f - n, tail) == 0)
            return reason;
    }
    return NULL;
}

/* What `detfeed check` (the dataset decoding every image) says of `tail`,
 * copied into buf. */
static void check_says(const char *src, const char *tail, char *buf, size_t size)
{
    detfeed_dataset *ds;
    detfeed_dataset_create(&ds, 0);
    detfeed_dataset_set_int(ds, DETFEED_DATASET_VERIFY, DETFEED_VERIFY_DECODE);
    CHECK_INT(detfeed_dataset_open(ds, src), 0);
    const char *r = reason_for(ds, tail);
    CHECK(r != NULL);
    snprintf(buf, size, "%s", r ? r : "");
    detfeed_dataset_destroy(ds);
}

/* Opens, checks what the check did, returns the digest; the loader is
 * destroyed. `state` -1: not checked; `decoded` -1: not checked. */
static void run(const char *src, const char *const *kv, int64_t decoded, int state,
                char hex[65], const char *what)
{
    detfeed_loader *l = open_ok(src, kv);
    bool ok = true;
    if (decoded >= 0)
        ok &= CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_DECODED), decoded);
    if (state >= 0)
        ok &= CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_RECORD), state);
    if (!ok)
        fprintf(stderr, "  (%s: %s)\n", what, detfeed_loader_verify_note(l));
    if (hex)
        digest(l, hex);
    detfeed_loader_destroy(l);
}

/* ---- the record reused --------------------------------------------------- */

static void test_reuse(const char *src)
{
    char ref[65], hex[65], want[256];
    check_says(src, "05.png", want, sizeof want);
    /* first open: every image decoded, the verdicts written */
    detfeed_loader *l = open_ok(src, NULL);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_IMAGES), NIMG);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_DECODED), NIMG);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_REUSED), 0);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_FAILED), 1);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_RECORD), DETFEED_RECORD_WRITTEN);
    const char *path = detfeed_loader_verify_path(l);
    if (CHECK(path != NULL)) {
        CHECK(access(path, R_OK) == 0);
        CHECK(strstr(path, ".detfeed-verified") != NULL);
    }
    CHECK(strstr(detfeed_loader_verify_note(l), "no record") != NULL);
    const detfeed_dataset *ds = detfeed_loader_dataset(l);
    CHECK_INT(detfeed_dataset_size(ds), NIMG - 1);
    CHECK_INT(detfeed_dataset_stat_get(ds, DETFEED_STAT_CORRUPT), 1);
    const char *got = reason_for(ds, "05.png");
    CHECK(got && strcmp(got, want) == 0);
    digest(l, ref);
    detfeed_loader_destroy(l);
    /* second open: nothing decoded, the same index, problems and batches */
    l = open_ok(src, NULL);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_DECODED), 0);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_REUSED), NIMG);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_FAILED), 1);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_RECORD), DETFEED_RECORD_REUSED);
    CHECK(strstr(detfeed_loader_verify_note(l), "reused") != NULL);
    ds = detfeed_loader_dataset(l);
    got = reason_for(ds, "05.png");
    if (!CHECK(got && strcmp(got, want) == 0))
        fprintf(stderr, "  reused reason '%s', check says '%s'\n", got ? got : "-",
                want);
    digest(l, hex);
    CHECK_STR(hex, ref);
    detfeed_loader_destroy(l);
    /* with a RAM cache: its fill decodes the images it holds; the damaged
     * one's verdict still comes from the record */
    static const char *const ram[] = {"cache_bytes", "ram", NULL};
    l = open_ok(src, ram);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_DECODED), 0);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_CACHED), NIMG - 1);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_REUSED), 1);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_RECORD), DETFEED_RECORD_REUSED);
    digest(l, hex);
    CHECK_STR(hex, ref);
    detfeed_loader_destroy(l);
}

/* The recorded message names the image as this open's index does: the
 * dataset opened by a relative path from its parent folder. */
static void test_relative(const char *dir)
{
    char cwd[512], want[256];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    check_says(tu_at(dir, "images"), "05.png", want, sizeof want);
    CHECK_INT(chdir(root), 0); /* "ds/images/...": labels in ds/labels */
    detfeed_loader *l = open_ok("ds/images", NULL);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_DECODED), 0);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_RECORD), DETFEED_RECORD_REUSED);
    const detfeed_dataset *ds = detfeed_loader_dataset(l);
    const char *file = NULL, *reason = NULL;
    int line;
    CHECK_INT(detfeed_dataset_problem(ds, 0, &file, &line, &reason), 0);
    CHECK(file && strcmp(file, "ds/images/05.png") == 0);
    CHECK(reason && strcmp(reason, want) == 0);
    detfeed_loader_destroy(l);
    /* the fail policy: the same error as when it was decoded */
    int rc[2];
    char err[2][512];
    int64_t decoded[2];
    for (int k = 0; k < 2; k++) {
        detfeed_loader_create(&l, 0);
        detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, 96);
        detfeed_loader_set_policy(l, DETFEED_POLICY_FAIL);
        CHECK_INT(detfeed_loader_set(l, "verify_record", k ? "none" : "auto"), 0);
        rc[k] = detfeed_loader_open(l, "ds/images");
        snprintf(err[k], sizeof err[k], "%s", detfeed_loader_last_error(l));
        decoded[k] = vstat(l, DETFEED_VERIFY_STAT_DECODED);
        detfeed_loader_destroy(l);
    }
    CHECK(rc[0] < 0);
    CHECK_INT(rc[0], rc[1]);
    CHECK_STR(err[0], err[1]);
    CHECK(strstr(err[0], "ds/images/05.png") != NULL);
    CHECK_INT(decoded[0], 0);
    CHECK_INT(decoded[1], NIMG);
    CHECK_INT(chdir(cwd), 0);
}

/* ---- what makes it decode again ------------------------------------------ */

static void test_changes(const char *dir)
{
    char src[512];
    snprintf(src, sizeof src, "%s/images", dir);
    char ref[65], hex[65];
    run(src, NULL, 0, DETFEED_RECORD_REUSED, ref, "before");
    /* one image touched: that one decoded, the rest reused */
    shift_mtime(tu_at(dir, "images/03.png"), 7);
    run(src, NULL, 1, DETFEED_RECORD_WRITTEN, hex, "touched");
    CHECK_STR(hex, ref);
    run(src, NULL, 0, DETFEED_RECORD_REUSED, NULL, "after touched");
    /* the damaged image touched: decoded again, failing again */
    shift_mtime(tu_at(dir, "images/05.png"), 9);
    run(src, NULL, 1, DETFEED_RECORD_WRITTEN, hex, "damaged touched");
    CHECK_STR(hex, ref);
    /* other limits: every image decoded */
    static const char *const lim[] = {"max_pixels", "178956969", NULL};
    run(src, lim, NIMG, DETFEED_RECORD_WRITTEN, hex, "limits");
    CHECK_STR(hex, ref);
    run(src, lim, 0, DETFEED_RECORD_REUSED, NULL, "same limits");
    run(src, NULL, NIMG, DETFEED_RECORD_WRITTEN, NULL, "default limits");
    /* an image added: that one decoded; removed: nothing decoded, rewritten */
    char from[512], to[512];
    snprintf(from, sizeof from, "%s", tu_at(dir, "images/00.png"));
    snprintf(to, sizeof to, "%s", tu_at(dir, "images/99.png"));
    CHECK(tu_copy_tree(from, to));
    run(src, NULL, 1, DETFEED_RECORD_WRITTEN, NULL, "added");
    run(src, NULL, 0, DETFEED_RECORD_REUSED, NULL, "after added");
    CHECK_INT(unlink(to), 0);
    run(src, NULL, 0, DETFEED_RECORD_WRITTEN, hex, "removed");
    CHECK_STR(hex, ref);
    run(src, NULL, 0, DETFEED_RECORD_REUSED, NULL, "after removed");
}

/* An image replaced behind the record's back (another damaged file of the
 * same size, its time put back): where the RAM cache's fill decodes it, it
 * fails there and is left out as check leaves it out. */
static void test_fill_failed(const char *dir)
{
    char src[512];
    snprintf(src, sizeof src, "%s/images", dir);
    char img[512];
    snprintf(img, sizeof img, "%s/images/08.png", dir);
    char want[256];
    run(src, NULL, -1, -1, NULL, "before");
    struct stat st;
    CHECK_INT(stat(img, &st), 0);
    damage_png(img);
    struct timespec t[2] = {st.st_atim, st.st_mtim};
    CHECK_INT(utimensat(AT_FDCWD, img, t, 0), 0);
    check_says(src, "08.png", want, sizeof want);
    static const char *const ram[] = {"cache_bytes", "ram", NULL};
    detfeed_loader *l = open_ok(src, ram);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_DECODED), 1);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_FAILED), 2);
    const char *got = reason_for(detfeed_loader_dataset(l), "08.png");
    CHECK(got && strcmp(got, want) == 0);
    detfeed_loader_destroy(l);
}

/* ---- damaged records ------------------------------------------------------ */

static void flip(const char *path, long at)
{
    int fd = open(path, O_RDWR);
    unsigned char c = 0;
    if (!CHECK(fd >= 0))
        return;
    if (at < 0)
        at += (long)lseek(fd, 0, SEEK_END);
    CHECK_INT((long)pread(fd, &c, 1, at), 1);
    c ^= 0x10;
    CHECK_INT((long)pwrite(fd, &c, 1, at), 1);
    close(fd);
}

static void test_damaged_record(const char *src)
{
    char ref[65], hex[65], path[512];
    detfeed_loader *l = open_ok(src, NULL);
    snprintf(path, sizeof path, "%s", detfeed_loader_verify_path(l));
    digest(l, ref);
    detfeed_loader_destroy(l);
    long size = file_size(path);
    const struct {
        const char *what, *note;
    } cases[] = {{"cut in half", "truncated"},
                 {"cut to a few bytes", "truncated"},
                 {"a bit of an entry", "damaged"},
                 {"a bit of the header", "damaged"},
                 {"a bit of a verdict", "damaged"},
                 {"bytes after its end", "longer"},
                 {"empty", "empty"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        switch (k) {
        case 0:
            cut(path, size / 2);
            break;
        case 1:
            cut(path, 10);
            break;
        case 2:
            flip(path, -1);
            break;
        case 3:
            flip(path, 40);
            break;
        case 4: /* the flags of the first entry (the header is 288 bytes) */
            flip(path, 288 + 24);
            break;
        case 5:
            cut(path, size + 8);
            break;
        default:
            tu_write_text(path, "");
        }
        l = open_ok(src, NULL);
        bool ok = CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_DECODED), NIMG);
        ok &= CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_RECORD), DETFEED_RECORD_WRITTEN);
        ok &= CHECK(strstr(detfeed_loader_verify_note(l), cases[k].note) != NULL);
        if (!ok)
            fprintf(stderr, "  (%s: %s)\n", cases[k].what,
                    detfeed_loader_verify_note(l));
        digest(l, hex);
        CHECK_STR(hex, ref);
        detfeed_loader_destroy(l);
        CHECK_INT(file_size(path), size); /* rewritten whole */
        run(src, NULL, 0, DETFEED_RECORD_REUSED, NULL, cases[k].what);
    }
    /* a file of the user's there is not written over */
    const char yaml[] = "train: images\nval: images\nnames: [a, b]\n";
    tu_write_text(path, yaml);
    l = open_ok(src, NULL);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_DECODED), NIMG);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_RECORD), DETFEED_RECORD_UNWRITTEN);
    CHECK(strstr(detfeed_loader_verify_note(l), "does not start with DFVERIFY") !=
          NULL);
    digest(l, hex);
    CHECK_STR(hex, ref);
    detfeed_loader_destroy(l);
    char back[sizeof yaml] = {0};
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL && fread(back, 1, sizeof back, f) == sizeof yaml - 1);
    if (f)
        fclose(f);
    CHECK_STR(back, yaml);
    unlink(path);
    run(src, NULL, NIMG, DETFEED_RECORD_WRITTEN, NULL, "the user's file removed");
}

/* Links planted where the record and its lock go are refused by name and
 * never followed: a symbolic link at the record (to a file of the user's)
 * is neither read nor replaced, a dangling one at its lock is not created;
 * the open still verifies every image and records nothing, saying why. */
static void test_links(const char *src)
{
    char path[512], lock[600], victim[512], absent[512], hex[65], ref[65];
    detfeed_loader *l = open_ok(src, NULL);
    snprintf(path, sizeof path, "%s", detfeed_loader_verify_path(l));
    digest(l, ref);
    detfeed_loader_destroy(l);
    snprintf(lock, sizeof lock, "%s.lock", path);
    snprintf(victim, sizeof victim, "%s/victim.txt", root);
    snprintf(absent, sizeof absent, "%s/made-through-a-link", root);
    const char text[] = "a file of the user's";
    tu_write_text(victim, text);
    const char *planted[] = {path, lock};
    const char *target[] = {victim, absent};
    for (int k = 0; k < 2; k++) {
        unlink(planted[k]);
        CHECK(symlink(target[k], planted[k]) == 0);
        l = open_ok(src, NULL);
        bool ok = CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_DECODED), NIMG);
        ok &= CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_RECORD), DETFEED_RECORD_UNWRITTEN);
        const char *note = detfeed_loader_verify_note(l);
        ok &= CHECK(strstr(note, planted[k]) != NULL &&
                    strstr(note, "is a symbolic link") != NULL);
        if (!ok)
            fprintf(stderr, "  (a link at %s: %s)\n", planted[k], note);
        digest(l, hex);
        CHECK_STR(hex, ref);
        detfeed_loader_destroy(l);
        unlink(planted[k]);
    }
    char back[64] = {0};
    FILE *f = fopen(victim, "rb");
    CHECK(f != NULL && fread(back, 1, sizeof back, f) == sizeof text - 1);
    if (f)
        fclose(f);
    CHECK_STR(back, text);
    CHECK(access(absent, F_OK) != 0);
    unlink(victim);
    run(src, NULL, NIMG, DETFEED_RECORD_WRITTEN, NULL, "the links removed");
}

/* ---- none and a path ----------------------------------------------------- */

static bool same_file(const char *path, const uint8_t *bytes, long size,
                      const struct timespec *mtime)
{
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size != size ||
        st.st_mtim.tv_sec != mtime->tv_sec || st.st_mtim.tv_nsec != mtime->tv_nsec)
        return false;
    FILE *f = fopen(path, "rb");
    uint8_t *now = malloc((size_t)size + 1);
    bool same = f && now && fread(now, 1, (size_t)size, f) == (size_t)size &&
                memcmp(now, bytes, (size_t)size) == 0;
    if (f)
        fclose(f);
    free(now);
    return same;
}

static void test_none_and_path(const char *dir)
{
    char src[512];
    snprintf(src, sizeof src, "%s/images", dir);
    static const char *const none[] = {"verify_record", "none", NULL};
    detfeed_loader *l = open_ok(src, NULL);
    char path[512], ref[65], hex[65];
    snprintf(path, sizeof path, "%s", detfeed_loader_verify_path(l));
    digest(l, ref);
    detfeed_loader_destroy(l);
    /* a record there is neither read nor written */
    struct stat st;
    CHECK_INT(stat(path, &st), 0);
    long size = (long)st.st_size;
    uint8_t *bytes = malloc((size_t)size);
    FILE *f = fopen(path, "rb");
    CHECK(f && fread(bytes, 1, (size_t)size, f) == (size_t)size);
    if (f)
        fclose(f);
    shift_mtime(tu_at(dir, "images/02.png"), 3); /* the record is stale now */
    CHECK_INT(stat(path, &st), 0);
    l = open_ok(src, none);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_DECODED), NIMG);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_REUSED), 0);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_RECORD), DETFEED_RECORD_NONE);
    CHECK(detfeed_loader_verify_path(l) == NULL);
    digest(l, hex);
    CHECK_STR(hex, ref);
    detfeed_loader_destroy(l);
    CHECK(same_file(path, bytes, size, &st.st_mtim));
    free(bytes);
    /* no record: none writes none (nor a lock) */
    char lock[600];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(path);
    unlink(lock);
    run(src, none, NIMG, DETFEED_RECORD_NONE, NULL, "none");
    CHECK(access(path, F_OK) != 0);
    CHECK(access(lock, F_OK) != 0);
    /* an explicit path */
    char mine[512], cwd[512];
    snprintf(mine, sizeof mine, "%s/mine.rec", root);
    const char *const at[] = {"verify_record", mine, NULL};
    run(src, at, NIMG, DETFEED_RECORD_WRITTEN, NULL, "path");
    CHECK(access(mine, R_OK) == 0);
    CHECK(access(path, F_OK) != 0);
    run(src, at, 0, DETFEED_RECORD_REUSED, NULL, "path again");
    /* relative to the working folder */
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK_INT(chdir(root), 0);
    static const char *const rel[] = {"verify_record", "./mine.rec", NULL};
    run(src, rel, 0, DETFEED_RECORD_REUSED, NULL, "relative path");
    CHECK_INT(chdir(cwd), 0);
}

/* ---- folders that cannot be written --------------------------------------- */

/* Opens `src` twice with the user's cache folder `user`: written there,
 * then reused from there. */
static void falls_back(const char *src, const char *user)
{
    setenv("XDG_CACHE_HOME", user, 1);
    detfeed_loader *l = open_ok(src, NULL);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_RECORD), DETFEED_RECORD_WRITTEN);
    const char *path = detfeed_loader_verify_path(l);
    if (!CHECK(path && strncmp(path, user, strlen(user)) == 0))
        fprintf(stderr, "  record at %s\n", path ? path : "(none)");
    if (!CHECK(strstr(detfeed_loader_verify_note(l), "user's cache folder") != NULL))
        fprintf(stderr, "  %s\n", detfeed_loader_verify_note(l));
    detfeed_loader_destroy(l);
    run(src, NULL, 0, DETFEED_RECORD_REUSED, NULL, "fallback reused");
}

/* Where nothing can be written: verified all the same, not recorded. */
static void unrecorded(const char *ro)
{
    char src[512];
    snprintf(src, sizeof src, "%s/images", ro);
    setenv("XDG_CACHE_HOME", "/proc/no-such-folder", 1);
    detfeed_loader *l = open_ok(src, NULL);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_RECORD), DETFEED_RECORD_UNWRITTEN);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_DECODED), NIMG);
    CHECK_INT(detfeed_dataset_size(detfeed_loader_dataset(l)), NIMG - 1);
    if (!CHECK(strstr(detfeed_loader_verify_note(l), "not recorded") != NULL))
        fprintf(stderr, "  %s\n", detfeed_loader_verify_note(l));
    detfeed_loader_destroy(l);
    /* an explicit path in a folder that cannot be written */
    char rec[512];
    snprintf(rec, sizeof rec, "%s/new.rec", ro);
    const char *const at[] = {"verify_record", rec, NULL};
    run(src, at, NIMG, DETFEED_RECORD_UNWRITTEN, NULL, "explicit, read-only");
}

static int readonly_child(const char *ro, const char *user)
{
    falls_back(tu_at(ro, "images"), user);
    unrecorded(ro);
    return tu_finish("test_verify_record (read-only child)");
}

static void test_readonly(const char *dir)
{
    char ro[128], user[128], user2[128];
    snprintf(ro, sizeof ro, "%s/ro", root);
    snprintf(user, sizeof user, "%s/user", root);
    snprintf(user2, sizeof user2, "%s/user2", root);
    CHECK(tu_copy_tree(dir, ro));
    mkdir(user, 0777);
    mkdir(user2, 0777);
    chmod(user, 0777);
    chmod(user2, 0777);
    char rec[512];
    snprintf(rec, sizeof rec, "%s/labels.detfeed-verified", ro);
    unlink(rec);
    /* a folder whose mode lets nobody write: left alone, even by root */
    CHECK(tu_chmod_tree(ro, 0222, 0));
    char *home = getenv("XDG_CACHE_HOME");
    falls_back(tu_at(ro, "images"), user);
    CHECK(access(rec, F_OK) != 0);
    /* the same as an ordinary user, whom the permissions stop */
    CHECK(tu_run_unprivileged(readonly_child, ro, user2));
    CHECK(tu_chmod_tree(ro, 0, S_IWUSR));
    if (home)
        setenv("XDG_CACHE_HOME", home, 1);
    else
        unsetenv("XDG_CACHE_HOME");
}

/* ---- processes at once ---------------------------------------------------- */

typedef struct child_result {
    int64_t decoded, failed;
    char hex[65];
} child_result;

static void test_processes(const char *dir)
{
    enum { K = 3 };
    char src[512];
    snprintf(src, sizeof src, "%s/images", dir);
    char ref[65], rec[512];
    run(src, NULL, -1, -1, ref, "reference");
    detfeed_loader *l = open_ok(src, NULL);
    snprintf(rec, sizeof rec, "%s", detfeed_loader_verify_path(l));
    detfeed_loader_destroy(l);
    unlink(rec);
    int go[2], out[K][2];
    CHECK_INT(pipe(go), 0);
    pid_t pid[K];
    for (int k = 0; k < K; k++) {
        CHECK_INT(pipe(out[k]), 0);
        if ((pid[k] = fork()) == 0) {
            char c;
            close(go[1]);
            while (read(go[0], &c, 1) > 0) /* until the parent closes it: all start */
                ;
            child_result r = {0};
            detfeed_loader *cl = open_ok(src, NULL);
            r.decoded = vstat(cl, DETFEED_VERIFY_STAT_DECODED);
            r.failed = vstat(cl, DETFEED_VERIFY_STAT_FAILED);
            digest(cl, r.hex);
            detfeed_loader_destroy(cl);
            bool sent = write(out[k][1], &r, sizeof r) == (ssize_t)sizeof r;
            _exit(sent && tu_finish("test_verify_record (process)") == 0 ? 0 : 1);
        }
        close(out[k][1]);
    }
    close(go[0]);
    close(go[1]);
    int64_t decoded = 0;
    for (int k = 0; k < K; k++) {
        child_result r = {0};
        CHECK_INT((long)read(out[k][0], &r, sizeof r), (long)sizeof r);
        close(out[k][0]);
        int status;
        waitpid(pid[k], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        CHECK_INT(r.failed, 1);
        CHECK_STR(r.hex, ref);
        decoded += r.decoded;
    }
    /* one of them decoded, the others waited for its verdicts */
    CHECK_INT(decoded, NIMG);
    run(src, NULL, 0, DETFEED_RECORD_REUSED, NULL, "after the processes");
}

/* ---- the setting ---------------------------------------------------------- */

static void test_settings(const char *src)
{
    detfeed_loader *l;
    detfeed_loader_create(&l, 0);
    detfeed_loader_param p;
    CHECK_INT(detfeed_loader_param_parse("verify_record", &p), 0);
    CHECK_INT(p, DETFEED_LOADER_VERIFY_RECORD);
    CHECK_INT(detfeed_loader_set(l, "verify_record", "auto"), 0);
    CHECK_INT(detfeed_loader_set(l, "verify_record", "none"), 0);
    CHECK_INT(detfeed_loader_set(l, "verify_record", "./x.rec"), 0);
    CHECK_INT(detfeed_loader_set_verify_record(l, NULL), 0);
    static const char *const refused[] = {"off", "", "Auto", "x.rec"};
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        CHECK_INT(detfeed_loader_set(l, "verify_record", refused[k]), DETFEED_EINVAL);
        if (!CHECK(strstr(detfeed_loader_last_error(l), "auto, none or a file path") !=
                   NULL))
            fprintf(stderr, "  %s\n", detfeed_loader_last_error(l));
    }
    CHECK_INT(detfeed_loader_set(l, "verify_record", "/tmp/"), DETFEED_EINVAL);
    CHECK(strstr(detfeed_loader_last_error(l), "folder") != NULL);
    CHECK_INT(detfeed_loader_set_int(l, DETFEED_LOADER_VERIFY_RECORD, 1),
              DETFEED_EINVAL);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_DECODED), 0);
    CHECK_STR(detfeed_loader_verify_note(l), "");
    detfeed_loader_set_int(l, DETFEED_LOADER_IMGSZ, 96);
    CHECK_INT(detfeed_loader_open(l, src), 0);
    CHECK_INT(detfeed_loader_set(l, "verify_record", "none"), DETFEED_EBADSTATE);
    CHECK_INT(detfeed_loader_set_verify_record(l, "none"), DETFEED_EBADSTATE);
    CHECK_INT(vstat(l, (detfeed_verify_stat)99), -1);
    CHECK_INT(detfeed_loader_verify_stat(NULL, DETFEED_VERIFY_STAT_DECODED), -1);
    CHECK(detfeed_loader_verify_path(NULL) == NULL);
    detfeed_loader_destroy(l);
}

/* ---- real JPEGs ----------------------------------------------------------- */

/* coco8's train images with one JPEG cut after its header: the reused
 * message is the one decoding gives. */
static bool test_coco8(void)
{
    const char *data = getenv("DETFEED_TEST_DATA");
    char src[512], dir[128], img[600], want[256], ref[65], hex[65];
    snprintf(src, sizeof src, "%s/coco8/images/train", data ? data : "../shared/data");
    if (access(src, R_OK) != 0)
        return false;
    snprintf(dir, sizeof dir, "%s/coco8", root);
    CHECK_INT(mkdir(dir, 0755), 0);
    CHECK(tu_copy_tree(src, tu_at(dir, "images")));
    CHECK(tu_copy_tree(tu_at(src, "../../labels/train"), tu_at(dir, "labels")));
    snprintf(img, sizeof img, "%s/images/000000000034.jpg", dir);
    cut(img, 4000);
    char images[512];
    snprintf(images, sizeof images, "%s/images", dir);
    check_says(images, "000000000034.jpg", want, sizeof want);
    detfeed_loader *l = open_ok(images, NULL);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_FAILED), 1);
    const char *got = reason_for(detfeed_loader_dataset(l), "000000000034.jpg");
    CHECK(got && strcmp(got, want) == 0);
    digest(l, ref);
    detfeed_loader_destroy(l);
    l = open_ok(images, NULL);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_DECODED), 0);
    CHECK_INT(vstat(l, DETFEED_VERIFY_STAT_FAILED), 1);
    got = reason_for(detfeed_loader_dataset(l), "000000000034.jpg");
    if (!CHECK(got && strcmp(got, want) == 0))
        fprintf(stderr, "  reused '%s', check says '%s'\n", got ? got : "-", want);
    digest(l, hex);
    CHECK_STR(hex, ref);
    detfeed_loader_destroy(l);
    return true;
}

int main(void)
{
    if (!tu_temp_dir(root, sizeof root, "vrec"))
        return tu_finish("test_verify_record");
    chmod(root, 0755); /* the read-only checks run as another user */
    setenv("XDG_CACHE_HOME", tu_at(root, "cache"), 1);
    char dir[128];
    snprintf(dir, sizeof dir, "%s/ds", root);
    make_dataset(dir, 7);
    char src[512];
    snprintf(src, sizeof src, "%s/images", dir);
    test_settings(src);
    unlink(tu_at(dir, "labels.detfeed-verified"));
    test_reuse(tu_at(dir, "images"));
    test_relative(dir);
    test_changes(dir);
    test_damaged_record(tu_at(dir, "images"));
    test_links(tu_at(dir, "images"));
    test_none_and_path(dir);
    test_processes(dir);
    test_readonly(dir);
    test_fill_failed(dir);
    bool real = test_coco8();
    if (!real)
        fprintf(stderr, "no coco8 under DETFEED_TEST_DATA: real JPEGs not checked\n");
    tu_chmod_tree(root, 0, S_IWUSR); /* what the read-only checks left */
    if (!tu_remove_tree(root))
        fprintf(stderr, "could not remove %s\n", root);
    int rc = tu_finish("test_verify_record");
    return rc == 0 && !real ? 77 : rc;
}
