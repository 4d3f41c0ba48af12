/*
 * verify_record.c - the verification record (verify_record.h): a header
 * with checksums, then one entry per image (its identity and, when it
 * failed, its reason). Written whole under a temporary name and renamed
 * into place; read whole and checked before anything in it is trusted.
 */
#define _GNU_SOURCE
#include "verify_record.h"

#include "cache_files.h"
#include "core/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define VR_MAGIC  "DFVERIFY"
#define VR_ORDER  0x01020304u
#define VR_SUFFIX ".detfeed-verified"
/* Bumped whenever what verification decides changes. */
#define VR_STEP 1
enum { VR_VERSION = 1, VR_FAILED = 1u, VR_PREFIXED = 2u };
enum { VR_MAX_BYTES = 1 << 30 };

typedef struct vr_header {
    char magic[8];
    uint32_t version, byte_order;
    uint64_t count, body_bytes;
    char provenance[192];
    uint8_t body_sha[32];
    uint8_t header_sha[32]; /* of the bytes above */
} vr_header;

/* One entry's fixed part; its path and its reason follow it. */
typedef struct vr_item {
    uint64_t file_bytes;
    int64_t mtime_ns;
    uint32_t path_bytes, reason_bytes, flags, reserved;
} vr_item;

_Static_assert(sizeof(vr_header) == 288, "the header's layout is the format");
_Static_assert(sizeof(vr_item) == 32, "the entry's layout is the format");

/* An entry of the record read, pointing into its bytes. */
typedef struct vr_entry {
    vr_item it;
    const char *path, *reason;
} vr_entry;

/* An image of the index as it is now. */
typedef struct vr_image {
    char *abs;
    uint64_t file_bytes;
    int64_t mtime_ns;
} vr_image;

struct detfeed__vrec {
    const detfeed_dataset *ds;
    size_t n;
    vr_image *img;
    char provenance[192];
    /* where: the file written (target) and, in the default place, the
     * dataset's place and the user's cache folder (either may be NULL) */
    char *given, *primary, *fallback;
    const char *target;
    /* the record read */
    uint8_t *data;
    vr_entry *e;
    size_t ne, matched;
    size_t *match; /* [n]: image i's entry, or SIZE_MAX */
    const char *read_from;
    char why[400];         /* why it was not used, or what it lacked */
    int lock_fd, lock_err; /* lock_err: why no lock was taken (an errno) */
    char *lock_path;       /* the lock file's name once one was taken */
    char lock_why[160];    /* ... in words */
    bool waited;           /* another process held the lock */
    char note[DETFEED__MSG_SIZE];
};

/* ---- small helpers ------------------------------------------------------- */

static const char *errtext(int e, char *buf, size_t size)
{
    return strerror_r(e, buf, size); /* the GNU variant */
}

/* An errno that says the folder cannot be written (the place to give up). */
static bool unwritable(int e)
{
    return e == EACCES || e == EROFS || e == EPERM || e == ENOENT;
}

/* The reason part of a codec message "PATH: reason" for image `path`, with
 * *prefixed saying whether it had that prefix. */
static const char *reason_of(const char *msg, const char *path, bool *prefixed)
{
    size_t n = strlen(path);
    *prefixed = strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ';
    return *prefixed ? msg + n + 2 : msg;
}

/* ---- reading ------------------------------------------------------------- */

static void forget(detfeed__vrec *r)
{
    free(r->data);
    free(r->e);
    r->data = NULL;
    r->e = NULL;
    r->ne = r->matched = 0;
    r->read_from = NULL;
    for (size_t i = 0; i < r->n; i++)
        r->match[i] = SIZE_MAX;
}

static bool check_header(const detfeed__vrec *r, const vr_header *h, size_t size,
                         char *why, size_t wn)
{
    uint8_t sha[32];
    detfeed_sha256_of(h, offsetof(vr_header, header_sha), sha);
    if (memcmp(h->magic, VR_MAGIC, 8) != 0)
        return snprintf(why, wn, "not a verification record (no magic)"), false;
    if (h->byte_order != VR_ORDER)
        return snprintf(why, wn, "written on a machine of another byte order"), false;
    if (h->version != VR_VERSION)
        return snprintf(why, wn, "format version %u, this library reads %u", h->version,
                        VR_VERSION),
               false;
    if (memcmp(sha, h->header_sha, 32) != 0)
        return snprintf(why, wn, "damaged: the header's checksum does not match"),
               false;
    if (h->body_bytes != size - sizeof *h)
        return snprintf(why, wn, "%s: %zu bytes, its header says %llu",
                        size < h->body_bytes + sizeof *h
                            ? "truncated"
                            : "damaged: longer than written",
                        size, (unsigned long long)(h->body_bytes + sizeof *h)),
               false;
    if (h->count > h->body_bytes / sizeof(vr_item))
        return snprintf(why, wn, "damaged: %llu entries cannot fit",
                        (unsigned long long)h->count),
               false;
    if (strncmp(h->provenance, r->provenance, sizeof h->provenance) != 0)
        return snprintf(why, wn, "stale: verified by '%.150s', here '%.150s'",
                        h->provenance, r->provenance),
               false;
    return true;
}

/* The entries of a checked body into r->e. */
static bool parse_entries(detfeed__vrec *r, const uint8_t *body, uint64_t bytes,
                          uint64_t count, char *why, size_t wn)
{
    if ((r->e = calloc(count ? count : 1, sizeof *r->e)) == NULL)
        return snprintf(why, wn, "out of memory for %llu entries",
                        (unsigned long long)count),
               false;
    uint64_t at = 0;
    for (uint64_t k = 0; k < count; k++) {
        vr_entry *e = &r->e[k];
        if (bytes - at < sizeof e->it)
            return snprintf(why, wn, "damaged: entry %llu lies outside the file",
                            (unsigned long long)k),
                   false;
        memcpy(&e->it, body + at, sizeof e->it);
        at += sizeof e->it;
        if ((uint64_t)e->it.path_bytes + e->it.reason_bytes > bytes - at)
            return snprintf(why, wn, "damaged: entry %llu lies outside the file",
                            (unsigned long long)k),
                   false;
        e->path = (const char *)body + at;
        e->reason = e->path + e->it.path_bytes;
        at += (uint64_t)e->it.path_bytes + e->it.reason_bytes;
    }
    r->ne = count;
    return at == bytes || (snprintf(why, wn, "damaged: %llu bytes after its last entry",
                                    (unsigned long long)(bytes - at)),
                           false);
}

/* Reads and checks the record at `path`: true with r->data and r->e set,
 * else false with the reason in `why`. */
static bool load(detfeed__vrec *r, const char *path, char *why, size_t wn)
{
    struct stat st;
    int fd = detfeed__own_read_or(path, &st, "no record", why, wn);
    if (fd < 0)
        return false;
    size_t size;
    detfeed__msg msg;
    if (detfeed__read_opened(path, fd, &st, VR_MAX_BYTES, &r->data, &size, &msg) !=
        DETFEED_OK)
        return snprintf(why, wn, "%.380s", msg.text), false;
    vr_header h;
    if (size >= 8 && memcmp(r->data, VR_MAGIC, 8) != 0)
        return snprintf(why, wn, "not a verification record (no magic)"), false;
    if (size < sizeof h)
        return snprintf(why, wn, "truncated: %zu bytes, less than a header", size),
               false;
    memcpy(&h, r->data, sizeof h);
    if (!check_header(r, &h, size, why, wn))
        return false;
    uint8_t sha[32];
    detfeed_sha256_of(r->data + sizeof h, h.body_bytes, sha);
    if (memcmp(sha, h.body_sha, 32) != 0)
        return snprintf(why, wn, "damaged: the checksum does not match"), false;
    return parse_entries(r, r->data + sizeof h, h.body_bytes, h.count, why, wn);
}

static int cmp_entry(const void *a, const void *b)
{
    const vr_entry *x = a, *y = b;
    size_t n =
        x->it.path_bytes < y->it.path_bytes ? x->it.path_bytes : y->it.path_bytes;
    int c = memcmp(x->path, y->path, n);
    if (c != 0)
        return c;
    return (x->it.path_bytes > y->it.path_bytes) -
           (x->it.path_bytes < y->it.path_bytes);
}

static bool same_path(const vr_entry *e, const char *abs)
{
    size_t n = strlen(abs);
    return e->it.path_bytes == n && memcmp(e->path, abs, n) == 0;
}

/* The entry of image i, or NULL: at its own position while the record is
 * in index order, else (sorted by path) by binary search. */
static const vr_entry *find(const detfeed__vrec *r, size_t i, bool sorted)
{
    const char *abs = r->img[i].abs;
    if (!sorted)
        return i < r->ne && same_path(&r->e[i], abs) ? &r->e[i] : NULL;
    vr_entry key = {.it.path_bytes = (uint32_t)strlen(abs), .path = abs};
    return bsearch(&key, r->e, r->ne, sizeof *r->e, cmp_entry);
}

/* Each image's entry when its file is the one the record describes. */
static void match_all(detfeed__vrec *r)
{
    bool sorted = false;
    r->matched = 0;
    for (size_t i = 0; i < r->n; i++) {
        const vr_entry *e = find(r, i, sorted);
        if (e == NULL && !sorted) {
            qsort(r->e, r->ne, sizeof *r->e, cmp_entry);
            sorted = true;
            i = (size_t)-1; /* again from the start */
            r->matched = 0;
            continue;
        }
        r->match[i] = SIZE_MAX;
        if (e && e->it.file_bytes == r->img[i].file_bytes &&
            e->it.mtime_ns == r->img[i].mtime_ns) {
            r->match[i] = (size_t)(e - r->e);
            r->matched++;
        }
    }
    if (r->matched < r->n || r->ne != r->n)
        snprintf(r->why, sizeof r->why,
                 "%s holds no verdict for %zu of the %zu images (new or changed "
                 "files), and %zu of its %zu entries are of files no longer indexed "
                 "as they were",
                 r->read_from, r->n - r->matched, r->n,
                 r->ne > r->matched ? r->ne - r->matched : 0, r->ne);
}

/* Reads the record: the target, else the other place of the default. */
static void read_record(detfeed__vrec *r)
{
    forget(r);
    const char *other = r->target == r->primary ? r->fallback : r->primary;
    char why2[sizeof r->why];
    if (load(r, r->target, r->why, sizeof r->why))
        r->read_from = r->target;
    else if (forget(r), other && load(r, other, why2, sizeof why2))
        r->read_from = other;
    if (r->read_from == NULL) {
        forget(r);
        return;
    }
    r->why[0] = '\0';
    match_all(r);
}

/* ---- opening ------------------------------------------------------------- */

/* Each image's absolute path, size and modification time. */
static int identify(detfeed__vrec *r)
{
    for (size_t i = 0; i < r->n; i++) {
        vr_image *im = &r->img[i];
        if ((im->abs = detfeed__absolute_path(
                 detfeed__dataset_image(r->ds, i)->path)) == NULL)
            return DETFEED_ENOMEM;
        struct stat st;
        bool ok = stat(im->abs, &st) == 0;
        im->file_bytes = ok ? (uint64_t)st.st_size : UINT64_MAX;
        im->mtime_ns = ok ? detfeed__mtime_ns(&st) : -1;
    }
    return DETFEED_OK;
}

/* The places: the given path, or the dataset's place when its folder can
 * be written and else the user's cache folder. */
static int place(detfeed__vrec *r, const char *path)
{
    if (path)
        return (r->target = r->given = detfeed__strdup_printf("%s", path))
                   ? DETFEED_OK
                   : DETFEED_ENOMEM;
    if ((r->primary = detfeed__cache_default_path(r->ds, VR_SUFFIX)) == NULL)
        return DETFEED_ENOMEM;
    r->fallback = detfeed__cache_fallback_path(r->primary);
    r->target =
        r->fallback && !detfeed__folder_writable(r->primary) ? r->fallback : r->primary;
    return DETFEED_OK;
}

int detfeed__vrec_open(detfeed__vrec **out, const detfeed_dataset *ds, const char *path)
{
    *out = NULL;
    detfeed__vrec *r = calloc(1, sizeof *r);
    if (r == NULL)
        return DETFEED_ENOMEM;
    r->ds = ds;
    r->n = detfeed_dataset_size(ds);
    r->lock_fd = -1;
    char decoded[176];
    detfeed__decode_provenance(detfeed__dataset_limits(ds), decoded, sizeof decoded);
    snprintf(r->provenance, sizeof r->provenance, "detfeed verify %d, %.170s", VR_STEP,
             decoded);
    r->img = calloc(r->n ? r->n : 1, sizeof *r->img);
    r->match = malloc((r->n ? r->n : 1) * sizeof *r->match);
    int rc = r->img && r->match ? identify(r) : DETFEED_ENOMEM;
    if (rc == DETFEED_OK && r->n > 0)
        rc = place(r, path);
    if (rc != DETFEED_OK) {
        detfeed__vrec_destroy(r);
        return rc;
    }
    if (r->n > 0)
        read_record(r);
    *out = r;
    return DETFEED_OK;
}

detfeed__verdict detfeed__vrec_verdict(const detfeed__vrec *r, size_t i, char **message)
{
    *message = NULL;
    if (i >= r->n || r->match[i] == SIZE_MAX)
        return DETFEED__VERDICT_UNKNOWN;
    const vr_entry *e = &r->e[r->match[i]];
    if (!(e->it.flags & VR_FAILED))
        return DETFEED__VERDICT_OK;
    int k = (int)e->it.reason_bytes;
    *message =
        e->it.flags & VR_PREFIXED
            ? detfeed__strdup_printf("%s: %.*s", detfeed__dataset_image(r->ds, i)->path,
                                     k, e->reason)
            : detfeed__strdup_printf("%.*s", k, e->reason);
    return *message ? DETFEED__VERDICT_FAILED : DETFEED__VERDICT_UNKNOWN;
}

/* ---- locking ------------------------------------------------------------- */

/* The lock beside the record at `path`, waited for (r->waited says whether
 * another process held it); r->lock_path keeps its name for the release. */
static int take_lock(detfeed__vrec *r, const char *path, int *err)
{
    free(r->lock_path);
    r->lock_path = detfeed__strdup_printf("%s.lock", path);
    if (r->lock_path == NULL)
        return *err = ENOMEM, -1;
    return detfeed__lock_take(r->lock_path, true, &r->waited, err, r->lock_why,
                              sizeof r->lock_why);
}

/* The user's cache folder is made when the record goes there. */
static void make_folder(const detfeed__vrec *r)
{
    if (r->target != r->fallback)
        return;
    char *dir = detfeed__path_dir(r->fallback);
    if (dir)
        detfeed__make_folders(dir);
    free(dir);
}

/* The default place moves to the user's cache folder. */
static bool move_to_fallback(detfeed__vrec *r)
{
    if (r->target != r->primary || r->fallback == NULL)
        return false;
    r->target = r->fallback;
    make_folder(r);
    return true;
}

void detfeed__vrec_lock(detfeed__vrec *r)
{
    if (r->lock_fd >= 0 || r->n == 0)
        return;
    int err;
    make_folder(r);
    r->lock_fd = take_lock(r, r->target, &err);
    if (r->lock_fd < 0 && unwritable(err) && move_to_fallback(r))
        r->lock_fd = take_lock(r, r->target, &err);
    if (r->lock_fd < 0) {
        r->lock_err = err; /* nothing can be written there: the note says so */
        return;
    }
    read_record(r);
}

static void unlock(detfeed__vrec *r)
{
    detfeed__lock_release(r->lock_fd, r->lock_path);
    r->lock_fd = -1;
}

/* ---- writing ------------------------------------------------------------- */

/* Whether the record read says exactly `why` of exactly these images. */
static bool exact(const detfeed__vrec *r, char *const *why)
{
    if (r->read_from == NULL || r->matched != r->n || r->ne != r->n)
        return false;
    for (size_t i = 0; i < r->n; i++) {
        const vr_entry *e = &r->e[r->match[i]];
        if ((why[i] != NULL) != ((e->it.flags & VR_FAILED) != 0))
            return false;
        if (why[i] == NULL)
            continue;
        bool prefixed;
        const char *reason =
            reason_of(why[i], detfeed__dataset_image(r->ds, i)->path, &prefixed);
        if (prefixed != ((e->it.flags & VR_PREFIXED) != 0) ||
            strlen(reason) != e->it.reason_bytes ||
            memcmp(reason, e->reason, e->it.reason_bytes) != 0)
            return false;
    }
    return true;
}

/* The record of the images as identified and their outcomes, in a new
 * buffer of *size bytes. */
static uint8_t *serialize(const detfeed__vrec *r, char *const *why, size_t *size)
{
    size_t body = 0;
    for (size_t i = 0; i < r->n; i++) {
        bool prefixed;
        body +=
            sizeof(vr_item) + strlen(r->img[i].abs) +
            (why[i] ? strlen(reason_of(why[i], detfeed__dataset_image(r->ds, i)->path,
                                       &prefixed))
                    : 0);
    }
    vr_header h = {.version = VR_VERSION,
                   .byte_order = VR_ORDER,
                   .count = r->n,
                   .body_bytes = body};
    uint8_t *buf = malloc(sizeof h + body), *p = buf + sizeof h;
    if (buf == NULL)
        return NULL;
    for (size_t i = 0; i < r->n; i++) {
        bool prefixed = false;
        const char *reason =
            why[i]
                ? reason_of(why[i], detfeed__dataset_image(r->ds, i)->path, &prefixed)
                : "";
        vr_item it = {.file_bytes = r->img[i].file_bytes,
                      .mtime_ns = r->img[i].mtime_ns,
                      .path_bytes = (uint32_t)strlen(r->img[i].abs),
                      .reason_bytes = (uint32_t)strlen(reason),
                      .flags =
                          (why[i] ? VR_FAILED : 0u) | (prefixed ? VR_PREFIXED : 0u)};
        memcpy(p, &it, sizeof it);
        memcpy(p + sizeof it, r->img[i].abs, it.path_bytes);
        memcpy(p + sizeof it + it.path_bytes, reason, it.reason_bytes);
        p += sizeof it + it.path_bytes + it.reason_bytes;
    }
    memcpy(h.magic, VR_MAGIC, 8);
    memcpy(h.provenance, r->provenance, sizeof h.provenance);
    detfeed_sha256_of(buf + sizeof h, body, h.body_sha);
    detfeed_sha256_of(&h, offsetof(vr_header, header_sha), h.header_sha);
    memcpy(buf, &h, sizeof h);
    *size = sizeof h + body;
    return buf;
}

/* Writes `path` whole: a temporary name of its own, fsync, rename, fsync of
 * the folder. 0, or the errno that stopped it. */
static int write_file(const char *path, const uint8_t *buf, size_t size)
{
    char *tmp = detfeed__strdup_printf(
        "%s.%ld.%llx.tmp", path, (long)getpid(),
        (unsigned long long)(detfeed__now_ns() ^ (uintptr_t)buf));
    if (tmp == NULL)
        return ENOMEM;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    int err = fd < 0 ? errno : detfeed__write_all(fd, buf, size, 0);
    if (!err && fsync(fd) != 0)
        err = errno;
    if (fd >= 0 && close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err && fd >= 0)
        unlink(tmp);
    if (!err)
        detfeed__sync_folder(path);
    free(tmp);
    return err;
}

/* What was found, for the note: why the record was not used, or what it
 * lacked. */
static const char *found(const detfeed__vrec *r)
{
    if (r->why[0])
        return r->why;
    return r->read_from ? "verdicts that changed" : "no record";
}

int detfeed__vrec_finish(detfeed__vrec *r, char *const *why, const int64_t counts[3])
{
    const char *moved = r->target == r->fallback && r->primary
                            ? " (the user's cache folder: the dataset's cannot be "
                              "written)"
                            : "";
    if (exact(r, why)) {
        unlock(r);
        snprintf(r->note, sizeof r->note, "reused %s: the verdicts of all %zu images%s",
                 r->read_from, r->n,
                 r->waited ? " (recorded by another process meanwhile)" : "");
        return DETFEED__VREC_REUSED;
    }
    if (r->lock_err == ELOOP || r->lock_err == EINVAL) {
        snprintf(r->note, sizeof r->note,
                 "not recorded: %s.lock %s; remove it. Every image was verified, the "
                 "next open verifies again",
                 r->target, r->lock_why);
        return DETFEED__VREC_UNWRITTEN;
    }
    char what[128];
    if (detfeed__foreign_file(r->target, VR_MAGIC, what, sizeof what)) {
        unlock(r);
        snprintf(r->note, sizeof r->note,
                 "not recorded: %s %s; detfeed does not write over it (remove it or "
                 "give another record path); every "
                 "image was verified, the next open verifies again",
                 r->target, what);
        return DETFEED__VREC_UNWRITTEN;
    }
    size_t size = 0;
    uint8_t *buf = serialize(r, why, &size);
    make_folder(r);
    int err = buf ? write_file(r->target, buf, size) : ENOMEM;
    if (err && unwritable(err) && move_to_fallback(r)) {
        err = write_file(r->target, buf, size);
        moved = " (the user's cache folder: the dataset's cannot be written)";
    }
    free(buf);
    unlock(r);
    char e[128];
    if (err) {
        bool both = r->primary && r->target == r->fallback;
        snprintf(r->note, sizeof r->note,
                 "not recorded: %s cannot be written (%s)%s%.200s; every image was "
                 "verified, the next open verifies again",
                 r->target, errtext(err, e, sizeof e),
                 both ? ", nor the dataset's folder for " : "", both ? r->primary : "");
        return DETFEED__VREC_UNWRITTEN;
    }
    snprintf(
        r->note, sizeof r->note,
        "wrote %s%s: %lld images decoded, %lld verdicts from the record, %lld from "
        "the cache; before: %.300s",
        r->target, moved, (long long)counts[0], (long long)counts[1],
        (long long)counts[2], found(r));
    return DETFEED__VREC_WRITTEN;
}

const char *detfeed__vrec_path(const detfeed__vrec *r)
{
    return r ? r->target : NULL;
}

const char *detfeed__vrec_note(const detfeed__vrec *r)
{
    return r ? r->note : "";
}

void detfeed__vrec_destroy(detfeed__vrec *r)
{
    if (r == NULL)
        return;
    unlock(r);
    free(r->lock_path);
    free(r->data);
    free(r->e);
    free(r->match);
    for (size_t i = 0; r->img && i < r->n; i++)
        free(r->img[i].abs);
    free(r->img);
    free(r->given);
    free(r->primary);
    free(r->fallback);
    free(r);
}
