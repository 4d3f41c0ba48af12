/*
 * disk_cache.c - the disk cache: decoded load-size images in one file,
 * validated against the dataset, written by one process at a time (flock
 * on PATH.lock) into PATH.part and renamed into place once complete. The
 * format and the rules are in detfeed.h.
 *
 * Reading never maps the file: the header and the index are read and
 * checked when it is opened (what is kept of them is a copy), and each
 * image is read with pread into the caller's memory and checked against
 * its checksum, so a file cut short or rewritten by another program gives
 * a short read or a mismatch (the image is decoded instead, with a
 * warning), never a SIGBUS.
 *
 * Within the writing process every image has an atomic state (absent,
 * being written, present, left out); the thread that moves an image from
 * absent to being written is the only one that writes its bytes (pwrite),
 * and readers read only images in the present state. When the last image
 * is present or left out, the commit thread writes the index and the
 * header, fsyncs and renames.
 */
#define _GNU_SOURCE
#include "disk_cache.h"

#include "cache_files.h"
#include "core/sha256.h"
#include "load.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define DC_MAGIC    "DFDCACHE"
#define DC_ORDER    0x01020304u
#define DC_COMPLETE 0x454e4f44u /* "DONE" */
/* Bumped whenever the load step (decode, resize) changes a byte. */
#define DC_LOAD_STEP 1
enum { DC_VERSION = 2, DC_HEADER = 4096, DC_PAGE = 4096, DC_ALIGN = 64 };
/* Damaged images this process keeps a line on (the count goes on). */
enum { DC_DAMAGE_LINES = 100 };
enum { ST_ABSENT = 0, ST_WRITING = 1, ST_PRESENT = 2, ST_LEFT_OUT = 3 };

typedef struct dc_header {
    char magic[8];
    uint32_t version, byte_order, complete;
    int32_t imgsz;
    uint64_t count, held, index_offset, index_bytes, data_offset, file_bytes;
    uint8_t index_sha[32];
    char pixels[192];
    uint8_t header_sha[32]; /* of the bytes above */
} dc_header;

typedef struct dc_record {
    uint64_t offset; /* of the pixels; 0: not held */
    uint64_t file_bytes;
    int64_t mtime_ns;
    int32_t width, height, orig_width, orig_height; /* load size, decoded size */
    uint64_t path_offset, path_bytes;               /* in the path table */
    uint64_t sum; /* the pixels' checksum (detfeed__checksum); 0: not held */
} dc_record;

_Static_assert(sizeof(dc_header) == 328, "the header's layout is the format");
_Static_assert(sizeof(dc_record) == 64, "the record's layout is the format");

/* Which file a path named when last looked at. */
typedef struct file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
} file_id;

/* Where an image's pixels are in a file, and their checksum. */
typedef struct dc_place {
    uint64_t offset, sum; /* offset 0: not held */
} dc_place;

/* An open file: a complete one (its places, from its index) or the part
 * this process writes (presence by the state array, places by the
 * index this process made and the sums it wrote). */
typedef struct dc_view {
    int fd; /* -1 while writing: the part's is dc->fd */
    uint64_t size;
    dc_place *at;
    file_id id;
    bool writing;
    /* The file's change time and size as last seen (a stamp) and a count of
     * the changes seen (gen): an image checked at the current gen is not
     * checked again while the stamp stays, see read_pixels. */
    _Atomic uint64_t stamp;
    atomic_uint gen;
} dc_view;

struct detfeed_disk_cache {
    detfeed__msg msg;
    detfeed__progress progress; /* detfeed_disk_cache_fill's */
    const detfeed_dataset *ds;
    int imgsz;
    size_t n;       /* images as indexed when opened: the file's records */
    size_t *remap;  /* after detfeed__disk_sync: dataset index -> record */
    size_t n_remap; /* the dataset's images then */
    uint32_t flags;
    bool opened;
    char *path, *part;
    /* the index this dataset and imgsz make: n records, then the paths */
    uint8_t *index;
    uint64_t index_bytes, data_offset, file_bytes, expected;
    char pixels[192];
    int fd, lock_fd;
    char *lock_path;  /* PATH.lock once taken, removed on its release */
    dc_view views[2]; /* [0] from open (a valid file or the part), [1] adopted */
    _Atomic(dc_view *) view;
    atomic_uchar *state;  /* writer: each image's ST_ */
    uint64_t *sums;       /* writer: each image's checksum, set before PRESENT */
    atomic_uchar *bad;    /* each image: found damaged here (decoded instead) */
    atomic_uint *checked; /* each image: 1 + the view's gen it was checked at */
    /* the damaged images found: their count and the first lines on them */
    pthread_mutex_t damage_mu;
    char (*damage)[DETFEED__MSG_SIZE];
    atomic_llong damaged;
    /* the file DETFEED_DISK_VERIFY found damaged (not checked again) */
    file_id refused;
    bool has_refused;
    char refused_why[384];
    atomic_size_t done; /* writer: images present or left out */
    atomic_llong hits, decoded, written, left_out, held, held_bytes;
    atomic_int st; /* detfeed_disk_state */
    /* notes, each written once before the state that shows it */
    char note_open[DETFEED__MSG_SIZE], note_end[DETFEED__MSG_SIZE];
    char why_built[384]; /* why the writer did not reuse a file */
    /* the writer's commit thread */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t committer;
    bool thread, stop, complete, ended;
    /* a waiting process: when and what it last looked at */
    _Atomic uint64_t next_look;
    pthread_mutex_t adopt_mu;
    file_id seen;
};

/* ---- small helpers ------------------------------------------------------- */

static const char *errtext(int e, char *buf, size_t size)
{
    return strerror_r(e, buf, size); /* the GNU variant */
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

static void header_sha(const dc_header *h, uint8_t out[32])
{
    detfeed_sha256_of(h, offsetof(dc_header, header_sha), out);
}

/* ---- the index this dataset makes ---------------------------------------- */

static const dc_record *records(const detfeed_disk_cache *dc)
{
    return (const dc_record *)dc->index;
}

/* Record i for image i: its file's size and time, its sizes and its place
 * at *offset (which moves past it when the size is known). */
static void make_record(detfeed_disk_cache *dc, size_t i, const char *abs,
                        uint64_t path_offset, uint64_t *offset, dc_record *r)
{
    const detfeed__image *im = detfeed__dataset_image(dc->ds, i);
    struct stat st;
    bool ok = stat(abs, &st) == 0;
    *r = (dc_record){.file_bytes = ok ? (uint64_t)st.st_size : UINT64_MAX,
                     .mtime_ns = ok ? detfeed__mtime_ns(&st) : -1,
                     .orig_width = im->width,
                     .orig_height = im->height,
                     .path_offset = path_offset,
                     .path_bytes = strlen(abs)};
    if (im->width <= 0 || im->height <= 0)
        return;
    int w, h;
    detfeed_load_size(im->width, im->height, dc->imgsz, &w, &h);
    r->width = w, r->height = h;
    r->offset = *offset;
    *offset = round_up(*offset + (uint64_t)w * (uint64_t)h * 3, DC_ALIGN);
    dc->expected++;
}

static int build_index(detfeed_disk_cache *dc)
{
    size_t n = dc->n;
    char **abs = calloc(n ? n : 1, sizeof *abs);
    uint64_t table = 0;
    for (size_t i = 0; abs && i < n; i++) {
        if ((abs[i] = detfeed__absolute_path(
                 detfeed__dataset_image(dc->ds, i)->path)) == NULL)
            break;
        table += strlen(abs[i]);
    }
    int rc = DETFEED_ENOMEM;
    dc->index_bytes = (uint64_t)n * sizeof(dc_record) + table;
    if (abs && (n == 0 || abs[n - 1]) && (dc->index = calloc(1, dc->index_bytes + 1))) {
        dc_record *r = (dc_record *)dc->index;
        char *paths = (char *)dc->index + n * sizeof(dc_record);
        dc->data_offset = round_up(DC_HEADER + dc->index_bytes, DC_PAGE);
        uint64_t offset = dc->data_offset, at = 0;
        for (size_t i = 0; i < n; i++) {
            make_record(dc, i, abs[i], at, &offset, &r[i]);
            memcpy(paths + at, abs[i], r[i].path_bytes);
            at += r[i].path_bytes;
        }
        dc->file_bytes = offset;
        rc = DETFEED_OK;
    }
    for (size_t i = 0; abs && i < n; i++)
        free(abs[i]);
    free(abs);
    return rc == DETFEED_OK ? rc : detfeed__fail(&dc->msg, rc, "out of memory");
}

/* ---- validation ---------------------------------------------------------- */

/* Whether the file's record r of image i says what ours (w) says; if not,
 * why, into `why`. */
static bool same_image(const detfeed_disk_cache *dc, size_t i, const dc_record *r,
                       const char *table, uint64_t table_bytes, size_t size, char *why,
                       size_t wn)
{
    const dc_record *w = &records(dc)[i];
    const char *mine = (const char *)dc->index + dc->n * sizeof(dc_record);
    if (r->path_offset > table_bytes || r->path_bytes > table_bytes - r->path_offset ||
        (r->offset &&
         (r->offset > size || r->width <= 0 || r->height <= 0 ||
          (uint64_t)r->width * (uint64_t)r->height * 3 > size - r->offset)))
        return snprintf(why, wn, "damaged: image %zu lies outside the file", i), false;
    if (r->offset && r->offset != w->offset)
        return snprintf(why, wn, "damaged: image %zu is not in its place", i), false;
    if (r->path_bytes != w->path_bytes ||
        memcmp(table + r->path_offset, mine + w->path_offset, w->path_bytes) != 0)
        return snprintf(
                   why, wn, "stale: image %zu is %.*s in the file, %.*s in the dataset",
                   i, (int)(r->path_bytes < 200 ? r->path_bytes : 200),
                   table + r->path_offset, (int)w->path_bytes, mine + w->path_offset),
               false;
    const char *p = mine + w->path_offset;
    int pn = (int)w->path_bytes;
    if (r->file_bytes != w->file_bytes)
        return snprintf(why, wn,
                        "stale: %.*s changed: %lld bytes in the file, %lld now", pn, p,
                        (long long)r->file_bytes, (long long)w->file_bytes),
               false;
    if (r->mtime_ns != w->mtime_ns)
        return snprintf(
                   why, wn,
                   "stale: %.*s changed: modified at %lld ns in the file, %lld ns now",
                   pn, p, (long long)r->mtime_ns, (long long)w->mtime_ns),
               false;
    if (r->orig_width != w->orig_width || r->orig_height != w->orig_height ||
        r->width != w->width || r->height != w->height)
        return snprintf(
                   why, wn,
                   "stale: %.*s is %dx%d (load %dx%d) in the file, %dx%d (load %dx%d) "
                   "in the dataset",
                   pn, p, r->orig_width, r->orig_height, r->width, r->height,
                   w->orig_width, w->orig_height, w->width, w->height),
               false;
    return true;
}

/* The header's checks, before anything is read through its offsets. */
static bool check_header(const detfeed_disk_cache *dc, const dc_header *h, size_t size,
                         char *why, size_t wn)
{
    uint8_t sha[32];
    header_sha(h, sha);
    if (memcmp(h->magic, DC_MAGIC, 8) != 0)
        return snprintf(why, wn, "not a detfeed disk cache (no magic)"), false;
    if (h->byte_order != DC_ORDER)
        return snprintf(why, wn, "written on a machine of another byte order"), false;
    if (h->version != DC_VERSION)
        return snprintf(why, wn, "format version %u, this library reads %u", h->version,
                        DC_VERSION),
               false;
    if (memcmp(sha, h->header_sha, 32) != 0)
        return snprintf(why, wn, "damaged: the header's checksum does not match"),
               false;
    if (h->complete != DC_COMPLETE)
        return snprintf(why, wn,
                        "incomplete: no completion mark (an interrupted write)"),
               false;
    if (h->file_bytes != size)
        return snprintf(why, wn, "%s: %zu of its %llu bytes",
                        size < h->file_bytes ? "truncated"
                                             : "damaged: longer than written",
                        size, (unsigned long long)h->file_bytes),
               false;
    if (h->index_offset != DC_HEADER || h->index_bytes > size - DC_HEADER ||
        h->count > h->index_bytes / sizeof(dc_record) || h->data_offset > size)
        return snprintf(why, wn, "damaged: the index lies outside the file"), false;
    if (strncmp(h->pixels, dc->pixels, sizeof h->pixels) != 0)
        return snprintf(why, wn, "stale: pixels made by '%.100s', here by '%.100s'",
                        h->pixels, dc->pixels),
               false;
    if (h->imgsz != dc->imgsz)
        return snprintf(why, wn, "stale: imgsz %d in the file, %d asked", h->imgsz,
                        dc->imgsz),
               false;
    if (h->count != dc->n)
        return snprintf(why, wn, "stale: %llu images in the file, %zu in the dataset",
                        (unsigned long long)h->count, dc->n),
               false;
    return true;
}

/* Reads `bytes` at `offset` of fd into dst (pread, restarted after EINTR
 * and short reads): 0, the errno that stopped it, or -1 when the file ends
 * first. */
static int read_at(int fd, void *dst, size_t bytes, uint64_t offset)
{
    uint8_t *p = dst;
    while (bytes > 0) {
        ssize_t k = pread(fd, p, bytes, (off_t)offset);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : -1;
        p += k, bytes -= (size_t)k, offset += (uint64_t)k;
    }
    return 0;
}

/* What changes when a file is written, truncated or renamed: its change
 * time (ns) and size, in one value; 0 when it cannot be looked at. The
 * change time alone into *ctime_ns (0 then) when ctime_ns is not NULL. */
static uint64_t stamp_of(int fd, uint64_t *ctime_ns)
{
    struct stat st;
    uint64_t ctime = 0, stamp = 0;
    if (fstat(fd, &st) == 0) {
        ctime =
            (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec;
        stamp = ctime * 0x9e3779b97f4a7c15u ^ (uint64_t)st.st_size;
    }
    if (ctime_ns != NULL)
        *ctime_ns = ctime;
    return stamp;
}

/* The wall clock (ns), as file change times are kept; 0 if unknown. */
static uint64_t wall_ns(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_REALTIME, &t) != 0 || t.tv_sec < 0)
        return 0;
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A file system keeps change times in steps (a clock tick, up to seconds on
 * some): a file changed again within the step of its last change keeps its
 * change time, and a same-size change then leaves its stamp as it was. So a
 * check of bytes read at `read_at` (wall clock) counts for later reads only
 * when the file's change time was older than the read by more than any
 * such step (git's "racy clean" rule); until then every read is checked. */
#define SETTLED_NS 2000000000u

static bool settled(uint64_t ctime_ns, uint64_t read_at)
{
    return ctime_ns != 0 && read_at > SETTLED_NS && ctime_ns < read_at - SETTLED_NS;
}

/* The records of a checked index against the dataset's: each image's place
 * into v->at, the counts into dc. */
static bool check_records(detfeed_disk_cache *dc, const uint8_t *index,
                          const dc_header *h, dc_view *v, char *why, size_t wn)
{
    const dc_record *r = (const dc_record *)index;
    const char *table = (const char *)(r + h->count);
    uint64_t table_bytes = h->index_bytes - h->count * sizeof(dc_record);
    long long held = 0, bytes = 0;
    for (size_t i = 0; i < dc->n; i++) {
        if (!same_image(dc, i, &r[i], table, table_bytes, v->size, why, wn))
            return false;
        v->at[i] = (dc_place){.offset = r[i].offset, .sum = r[i].sum};
        if (r[i].offset) {
            held++;
            bytes += (long long)r[i].width * r[i].height * 3;
        }
    }
    atomic_store(&dc->held, held);
    atomic_store(&dc->held_bytes, bytes);
    return true;
}

/* Whether the file open as v->fd (v->size bytes) is complete, intact and
 * made for this dataset and imgsz; when it is, v->at holds its places. */
static bool check_file(detfeed_disk_cache *dc, dc_view *v, char *why, size_t wn)
{
    dc_header h;
    char e[128];
    if (v->size < DC_HEADER)
        return snprintf(why, wn, "truncated: %llu bytes, less than a header",
                        (unsigned long long)v->size),
               false;
    int err = read_at(v->fd, &h, sizeof h, 0);
    if (err)
        return snprintf(why, wn, "cannot read it: %s",
                        err < 0 ? "it shrank" : errtext(err, e, sizeof e)),
               false;
    if (!check_header(dc, &h, (size_t)v->size, why, wn))
        return false;
    uint8_t *index = malloc(h.index_bytes ? h.index_bytes : 1);
    if (index == NULL || (v->at = calloc(dc->n ? dc->n : 1, sizeof *v->at)) == NULL) {
        free(index);
        return snprintf(why, wn, "out of memory for its index (%llu bytes)",
                        (unsigned long long)h.index_bytes),
               false;
    }
    bool ok = false;
    uint8_t sha[32];
    if ((err = read_at(v->fd, index, h.index_bytes, DC_HEADER)) != 0) {
        snprintf(why, wn, "cannot read it: %s",
                 err < 0 ? "it shrank" : errtext(err, e, sizeof e));
    } else {
        detfeed_sha256_of(index, h.index_bytes, sha);
        if (memcmp(sha, h.index_sha, 32) != 0)
            snprintf(why, wn, "damaged: the index's checksum does not match");
        else
            ok = check_records(dc, index, &h, v, why, wn);
    }
    free(index);
    return ok;
}

/* Opens `path` and checks it: DETFEED_OK with views[k] set, or 1 with the
 * reason in `why` ("no file" when there is none). */
static int try_reuse(detfeed_disk_cache *dc, const char *path, int k, char *why,
                     size_t wn)
{
    struct stat st;
    int fd = detfeed__own_read_or(path, &st, "no file", why, wn);
    if (fd < 0)
        return 1;
    dc_view *v = &dc->views[k];
    *v = (dc_view){.fd = fd,
                   .size = (uint64_t)st.st_size,
                   .id = {st.st_dev, st.st_ino, st.st_size, detfeed__mtime_ns(&st)}};
    atomic_init(&v->stamp, stamp_of(fd, NULL));
    if (dc->has_refused && memcmp(&v->id, &dc->refused, sizeof v->id) == 0) {
        snprintf(why, wn, "%s", dc->refused_why); /* found when opening */
        close(fd);
        *v = (dc_view){.fd = -1};
        return 1;
    }
    if (!check_file(dc, v, why, wn)) {
        close(fd);
        free(v->at);
        *v = (dc_view){.fd = -1};
        return 1;
    }
    return DETFEED_OK;
}

/* The path of record r, for messages. */
static const char *record_path(const detfeed_disk_cache *dc, size_t r, int *len)
{
    const dc_record *rec = &records(dc)[r];
    *len = rec->path_bytes < 1000 ? (int)rec->path_bytes : 1000;
    return (const char *)dc->index + dc->n * sizeof(dc_record) + rec->path_offset;
}

/* DETFEED_DISK_VERIFY: every image view k holds, read and checked against
 * its checksum; false with the reason in `why` when one is not intact. */
static bool verify_pixels(detfeed_disk_cache *dc, const dc_view *v, char *why,
                          size_t wn)
{
    size_t most = 0, bad = 0, first = 0, held = 0;
    for (size_t i = 0; i < dc->n; i++) {
        size_t b = (size_t)records(dc)[i].width * (size_t)records(dc)[i].height * 3;
        most = v->at[i].offset && b > most ? b : most;
    }
    uint8_t *buf = malloc(most ? most : 1);
    if (buf == NULL)
        return snprintf(why, wn, "out of memory to check its pixels (%zu bytes)", most),
               false;
    for (size_t i = 0; i < dc->n; i++) {
        if (v->at[i].offset == 0)
            continue;
        size_t b = (size_t)records(dc)[i].width * (size_t)records(dc)[i].height * 3;
        held++;
        if (read_at(v->fd, buf, b, v->at[i].offset) != 0 ||
            detfeed__checksum(buf, b, DETFEED_ISA_AUTO) != v->at[i].sum)
            first = bad++ ? first : i;
    }
    free(buf);
    if (bad == 0)
        return true;
    int pn;
    const char *p = record_path(dc, first, &pn);
    return snprintf(why, wn,
                    "damaged: the pixels of %zu of its %zu images do not match their "
                    "checksums or cannot be read (the first: image %zu, %.*s)",
                    bad, held, first, pn, p),
           false;
}

/* try_reuse, and with DETFEED_DISK_VERIFY the check of every image's
 * pixels: a damaged file is remembered, not checked again. */
static int reuse(detfeed_disk_cache *dc, const char *path, int k, char *why, size_t wn)
{
    if (try_reuse(dc, path, k, why, wn) != DETFEED_OK)
        return 1;
    dc_view *v = &dc->views[k];
    if (!(dc->flags & DETFEED_DISK_VERIFY) || verify_pixels(dc, v, why, wn))
        return DETFEED_OK;
    dc->refused = v->id;
    dc->has_refused = true;
    snprintf(dc->refused_why, sizeof dc->refused_why, "%s", why);
    close(v->fd);
    free(v->at);
    *v = (dc_view){.fd = -1};
    return 1;
}

/* ---- writing ------------------------------------------------------------- */

static void set_failed(detfeed_disk_cache *dc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_failed(detfeed_disk_cache *dc, const char *fmt, ...)
{
    pthread_mutex_lock(&dc->mu);
    if (!dc->ended) {
        dc->ended = true;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(dc->note_end, sizeof dc->note_end, fmt, ap);
        va_end(ap);
        atomic_store_explicit(&dc->st, DETFEED_DISK_FAILED, memory_order_release);
        pthread_cond_broadcast(&dc->cv);
    }
    pthread_mutex_unlock(&dc->mu);
}

static void mark_done(detfeed_disk_cache *dc)
{
    if (atomic_fetch_add(&dc->done, 1) + 1 != dc->n)
        return;
    pthread_mutex_lock(&dc->mu);
    dc->complete = true;
    pthread_cond_broadcast(&dc->cv);
    pthread_mutex_unlock(&dc->mu);
}

/* The index as written: records of images not present hold no offset. */
static uint8_t *final_index(detfeed_disk_cache *dc, dc_header *h)
{
    uint8_t *index = malloc(dc->index_bytes + 1);
    if (index == NULL)
        return NULL;
    memcpy(index, dc->index, dc->index_bytes);
    dc_record *r = (dc_record *)index;
    uint64_t held = 0;
    for (size_t i = 0; i < dc->n; i++) {
        if (atomic_load(&dc->state[i]) == ST_PRESENT && !atomic_load(&dc->bad[i])) {
            held++;
            r[i].sum = dc->sums[i];
        } else {
            r[i].offset = 0;
        }
    }
    atomic_store(&dc->held, (long long)held);
    *h = (dc_header){.version = DC_VERSION,
                     .byte_order = DC_ORDER,
                     .complete = DC_COMPLETE,
                     .imgsz = dc->imgsz,
                     .count = dc->n,
                     .held = held,
                     .index_offset = DC_HEADER,
                     .index_bytes = dc->index_bytes,
                     .data_offset = dc->data_offset,
                     .file_bytes = dc->file_bytes};
    memcpy(h->magic, DC_MAGIC, 8);
    memcpy(h->pixels, dc->pixels, sizeof h->pixels);
    detfeed_sha256_of(index, dc->index_bytes, h->index_sha);
    header_sha(h, h->header_sha);
    return index;
}

/* Writes the index, then (after the pixels and the index are on disk) the
 * header with its completion mark, and renames the part into place. With
 * dc->mu held, once every image is present or left out. */
static void commit(detfeed_disk_cache *dc)
{
    dc_header h;
    char e[128];
    uint8_t *index = final_index(dc, &h);
    int err =
        index ? detfeed__write_all(dc->fd, index, dc->index_bytes, DC_HEADER) : ENOMEM;
    free(index);
    if (!err && fsync(dc->fd) != 0)
        err = errno;
    if (!err)
        err = detfeed__write_all(dc->fd, &h, sizeof h, 0);
    if (!err && fsync(dc->fd) != 0)
        err = errno;
    if (!err && rename(dc->part, dc->path) != 0)
        err = errno;
    dc->ended = true;
    if (err) {
        snprintf(dc->note_end, sizeof dc->note_end,
                 "%s: committing the cache failed: %s", dc->part,
                 errtext(err, e, sizeof e));
        atomic_store_explicit(&dc->st, DETFEED_DISK_FAILED, memory_order_release);
        return;
    }
    detfeed__sync_folder(dc->path);
    snprintf(dc->note_end, sizeof dc->note_end,
             "built %s: %lld of %zu images (%lld bytes); before: %.300s", dc->path,
             atomic_load(&dc->held), dc->n, atomic_load(&dc->held_bytes),
             dc->why_built);
    atomic_store_explicit(&dc->st, DETFEED_DISK_BUILT, memory_order_release);
    detfeed__lock_release(dc->lock_fd, dc->lock_path); /* the next writer may start */
    dc->lock_fd = -1;
}

/* With dc->mu held: commits once complete, unless writing failed. */
static void commit_if_complete(detfeed_disk_cache *dc)
{
    if (dc->complete && !dc->ended)
        commit(dc);
}

static void *commit_thread(void *arg)
{
    detfeed_disk_cache *dc = arg;
    detfeed__name_thread("detfeed-commit");
    pthread_mutex_lock(&dc->mu);
    while (!dc->complete && !dc->stop && !dc->ended)
        pthread_cond_wait(&dc->cv, &dc->mu);
    commit_if_complete(dc);
    pthread_mutex_unlock(&dc->mu);
    return NULL;
}

/* Reserves the part's bytes: the whole file, or the reason it cannot. */
static int reserve(detfeed_disk_cache *dc)
{
    char e[128];
    if (fallocate(dc->fd, 0, 0, (off_t)dc->file_bytes) == 0)
        return DETFEED_OK;
    int err = errno;
    if (err == ENOSPC) {
        struct statvfs sv;
        unsigned long long avail = fstatvfs(dc->fd, &sv) == 0
                                       ? (unsigned long long)sv.f_bavail * sv.f_frsize
                                       : 0;
        return detfeed__fail(&dc->msg, DETFEED_EIO,
                             "%s: the cache needs %llu bytes, %llu are free there",
                             dc->part, (unsigned long long)dc->file_bytes, avail);
    }
    if ((err == EOPNOTSUPP || err == ENOSYS || err == EINVAL) &&
        ftruncate(dc->fd, (off_t)dc->file_bytes) == 0)
        return DETFEED_OK; /* no reservation: a full disk shows when writing */
    return detfeed__fail(&dc->msg, DETFEED_EIO, "%s: cannot size it to %llu bytes: %s",
                         dc->part, (unsigned long long)dc->file_bytes,
                         errtext(errno, e, sizeof e));
}

/* With the lock held: creates PATH.part, maps it and starts the commit
 * thread. */
static int become_writer(detfeed_disk_cache *dc)
{
    if ((dc->part = detfeed__strdup_printf("%s.part", dc->path)) == NULL ||
        (dc->state = calloc(dc->n ? dc->n : 1, sizeof *dc->state)) == NULL ||
        (dc->sums = calloc(dc->n ? dc->n : 1, sizeof *dc->sums)) == NULL)
        return detfeed__fail(&dc->msg, DETFEED_ENOMEM, "out of memory");
    char why[160];
    int err;
    if ((dc->fd = detfeed__own_create(dc->part, &err, why, sizeof why)) < 0)
        return detfeed__fail(&dc->msg, DETFEED_EIO, "%s: cannot create it: %s",
                             dc->part, why);
    int rc = reserve(dc);
    if (rc != DETFEED_OK)
        return rc;
    dc->views[0] = (dc_view){.fd = -1, .size = dc->file_bytes, .writing = true};
    atomic_init(&dc->views[0].stamp, stamp_of(dc->fd, NULL));
    size_t left = 0;
    for (size_t i = 0; i < dc->n; i++)
        if (records(dc)[i].offset == 0) {
            atomic_init(&dc->state[i], ST_LEFT_OUT);
            left++;
        }
    atomic_store(&dc->st, DETFEED_DISK_WRITING);
    atomic_store(&dc->view, &dc->views[0]);
    for (size_t k = 0; k < left; k++)
        mark_done(dc);
    if (pthread_create(&dc->committer, NULL, commit_thread, dc) != 0)
        return detfeed__fail(&dc->msg, DETFEED_ENOMEM, "cannot start a thread");
    dc->thread = true;
    return DETFEED_OK;
}

/* ---- opening ------------------------------------------------------------- */

enum { OPEN_UNWRITABLE = 1 };

static void note_reused(detfeed_disk_cache *dc, const char *how)
{
    snprintf(dc->note_open, sizeof dc->note_open, "reused %s: %lld of %zu images%s",
             dc->path, atomic_load(&dc->held), dc->n, how);
    atomic_store(&dc->st, DETFEED_DISK_REUSED);
    atomic_store(&dc->view, &dc->views[0]);
}

/* With the lock taken: a file written meanwhile, or this process builds. */
static int open_locked(detfeed_disk_cache *dc, char *why, size_t wn)
{
    if (reuse(dc, dc->path, 0, why, wn) == DETFEED_OK) {
        detfeed__lock_release(dc->lock_fd, dc->lock_path);
        dc->lock_fd = -1;
        note_reused(dc, " (written by another process meanwhile)");
        return DETFEED_OK;
    }
    snprintf(dc->note_open, sizeof dc->note_open, "building %s: %s", dc->path, why);
    snprintf(dc->why_built, sizeof dc->why_built, "%s", why);
    return become_writer(dc);
}

/* Opens the cache at dc->path: reuses a valid file, else takes the lock and
 * builds, else (another writer) waits or decodes. OPEN_UNWRITABLE when the
 * folder cannot be written and `may_fall_back`. */
static int open_at(detfeed_disk_cache *dc, bool may_fall_back, int *unwritable)
{
    char why[384];
    if (reuse(dc, dc->path, 0, why, sizeof why) == DETFEED_OK)
        return note_reused(dc, ""), DETFEED_OK;
    if (dc->flags & DETFEED_DISK_NO_BUILD)
        return detfeed__fail(&dc->msg,
                             strcmp(why, "no file") ? DETFEED_ECORRUPT : DETFEED_EIO,
                             "%s: %s", dc->path, why);
    char what[128];
    if (detfeed__foreign_file(dc->path, DC_MAGIC, what, sizeof what))
        return detfeed__fail(
            &dc->msg, DETFEED_EIO,
            "%s %s; detfeed does not write over it (remove it or give another "
            "cache path)",
            dc->path, what);
    free(dc->lock_path);
    if ((dc->lock_path = detfeed__strdup_printf("%s.lock", dc->path)) == NULL)
        return detfeed__fail(&dc->msg, DETFEED_ENOMEM, "out of memory");
    char refused[160];
    int err;
    dc->lock_fd = detfeed__lock_take(dc->lock_path, dc->flags & DETFEED_DISK_WAIT, NULL,
                                     &err, refused, sizeof refused);
    if (dc->lock_fd >= 0)
        return open_locked(dc, why, sizeof why);
    if (may_fall_back &&
        (err == EACCES || err == EROFS || err == EPERM || err == ENOENT))
        return *unwritable = err, OPEN_UNWRITABLE;
    if (err == ELOOP || err == EINVAL)
        return detfeed__fail(&dc->msg, DETFEED_EIO, "%s.lock %s; remove it", dc->path,
                             refused);
    if (err == ENOLCK)
        return detfeed__fail(&dc->msg, DETFEED_EIO, "%s.lock: %s", dc->path, refused);
    if (err != EWOULDBLOCK)
        return detfeed__fail(
            &dc->msg, DETFEED_EIO,
            "%s: %s, and its folder cannot be written to build it (%s)", dc->path, why,
            refused);
    snprintf(dc->note_open, sizeof dc->note_open,
             "another process (or loader) is writing %s (%s here): images are decoded "
             "here until it is complete",
             dc->path, why);
    atomic_store(&dc->st, DETFEED_DISK_WAITING);
    return DETFEED_OK;
}

/* The default place (cache_files.h): labels/train2017.detfeed-640.cache. */
static char *default_path(const detfeed_disk_cache *dc)
{
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".detfeed-%d.cache", dc->imgsz);
    return detfeed__cache_default_path(dc->ds, suffix);
}

/* A valid file in the default place, or else in the user's cache folder
 * (where it went when the dataset's folder could not be written). */
static bool reuse_default(detfeed_disk_cache *dc, char **fallback)
{
    char why[384];
    if (reuse(dc, dc->path, 0, why, sizeof why) == DETFEED_OK)
        return note_reused(dc, ""), true;
    if (*fallback == NULL || reuse(dc, *fallback, 0, why, sizeof why) != DETFEED_OK)
        return false;
    free(dc->path);
    dc->path = *fallback;
    *fallback = NULL;
    note_reused(dc, " (in the user's cache folder: the dataset's folder holds none)");
    return true;
}

static int open_default(detfeed_disk_cache *dc)
{
    char e[128], *fallback = NULL;
    if ((dc->path = default_path(dc)) == NULL)
        return detfeed__fail(&dc->msg, DETFEED_ENOMEM, "out of memory");
    fallback = detfeed__cache_fallback_path(dc->path);
    if (reuse_default(dc, &fallback)) {
        free(fallback);
        return DETFEED_OK;
    }
    int err = EACCES, rc = OPEN_UNWRITABLE; /* root too: as the record has it */
    if (fallback == NULL || detfeed__folder_writable(dc->path))
        rc = open_at(dc, true, &err);
    if (rc != OPEN_UNWRITABLE) {
        free(fallback);
        return rc;
    }
    char *primary = dc->path;
    if ((dc->path = fallback) == NULL) {
        rc = detfeed__fail(&dc->msg, DETFEED_EIO,
                           "%s: its folder cannot be written (%s) and there is no user "
                           "cache folder ($XDG_CACHE_HOME, $HOME); give a cache path",
                           primary, errtext(err, e, sizeof e));
        free(primary);
        return rc;
    }
    char *dir = detfeed__path_dir(fallback);
    if (dir)
        detfeed__make_folders(dir);
    free(dir);
    rc = open_at(dc, false, &err);
    char note[3 * DETFEED__MSG_SIZE];
    snprintf(note, sizeof note,
             "the dataset's folder cannot be written for %s (%s): %s", primary,
             errtext(err, e, sizeof e), dc->note_open);
    snprintf(dc->note_open, sizeof dc->note_open, "%.*s", (int)sizeof dc->note_open - 1,
             note);
    free(primary);
    return rc;
}

int detfeed_disk_cache_create(detfeed_disk_cache **out, uint32_t flags)
{
    if (out == NULL)
        return DETFEED_EINVAL;
    *out = NULL;
    if (flags != 0)
        return DETFEED_EINVAL;
    detfeed_disk_cache *dc = calloc(1, sizeof *dc);
    if (dc == NULL)
        return DETFEED_ENOMEM;
    detfeed__progress_init(&dc->progress);
    dc->fd = dc->lock_fd = dc->views[0].fd = dc->views[1].fd = -1;
    pthread_mutex_init(&dc->mu, NULL);
    pthread_mutex_init(&dc->damage_mu, NULL);
    pthread_mutex_init(&dc->adopt_mu, NULL);
    pthread_cond_init(&dc->cv, NULL);
    *out = dc;
    return DETFEED_OK;
}

int detfeed_disk_cache_open(detfeed_disk_cache *dc, const detfeed_dataset *ds,
                            int imgsz, const char *path, uint32_t flags)
{
    if (dc == NULL)
        return DETFEED_EINVAL;
    if (dc->opened)
        return detfeed__fail(&dc->msg, DETFEED_EBADSTATE,
                             "open: the disk cache is open already (once per handle)");
    if (ds == NULL || imgsz < 32 || imgsz > 16384 ||
        (flags & ~(DETFEED_DISK_NO_BUILD | DETFEED_DISK_WAIT | DETFEED_DISK_VERIFY)) ||
        detfeed_dataset_size(ds) == 0 || (path && path[0] == '\0'))
        return detfeed__fail(
            &dc->msg, DETFEED_EINVAL,
            "disk cache: a dataset with images, imgsz 32..16384, known "
            "flags and a non-empty path (or NULL)");
    dc->opened = true;
    detfeed__msg_clear(&dc->msg);
    dc->ds = ds;
    dc->imgsz = imgsz;
    dc->n = detfeed_dataset_size(ds);
    dc->flags = flags;
    char decoded[176];
    detfeed__decode_provenance(detfeed__dataset_limits(ds), decoded, sizeof decoded);
    snprintf(dc->pixels, sizeof dc->pixels,
             "detfeed load %d, %.150s, bmp bit fields %s", DC_LOAD_STEP, decoded,
             detfeed__dataset_limits(ds)->opencv == DETFEED_CV_4_DEBIAN ? "ignored"
                                                                        : "applied");
    int rc = build_index(dc);
    if (rc != DETFEED_OK)
        return rc;
    if ((dc->bad = calloc(dc->n, sizeof *dc->bad)) == NULL ||
        (dc->checked = calloc(dc->n, sizeof *dc->checked)) == NULL)
        return detfeed__fail(&dc->msg, DETFEED_ENOMEM, "out of memory");
    if (path == NULL)
        return open_default(dc);
    if ((dc->path = detfeed__strdup_printf("%s", path)) == NULL)
        return detfeed__fail(&dc->msg, DETFEED_ENOMEM, "out of memory");
    int err = 0;
    return open_at(dc, false, &err);
}

/* ---- a waiting process adopts the writer's file -------------------------- */

static void maybe_adopt(detfeed_disk_cache *dc)
{
    if (atomic_load_explicit(&dc->st, memory_order_acquire) != DETFEED_DISK_WAITING)
        return;
    uint64_t now = detfeed__now_ns(), next = atomic_load(&dc->next_look);
    if (now < next ||
        !atomic_compare_exchange_strong(&dc->next_look, &next, now + 1000000000u))
        return;
    if (pthread_mutex_trylock(&dc->adopt_mu) != 0)
        return;
    struct stat st;
    char why[384];
    if (stat(dc->path, &st) == 0) {
        file_id id = {st.st_dev, st.st_ino, st.st_size, detfeed__mtime_ns(&st)};
        if (memcmp(&id, &dc->seen, sizeof id) != 0 &&
            try_reuse(dc, dc->path, 1, why, sizeof why) == DETFEED_OK) {
            snprintf(dc->note_end, sizeof dc->note_end,
                     "adopted %s, written by another process: %lld of %zu images",
                     dc->path, atomic_load(&dc->held), dc->n);
            atomic_store_explicit(&dc->view, &dc->views[1], memory_order_release);
            atomic_store_explicit(&dc->st, DETFEED_DISK_ADOPTED, memory_order_release);
        }
        dc->seen = id;
    }
    pthread_mutex_unlock(&dc->adopt_mu);
}

/* ---- reading and offering ------------------------------------------------ */

const detfeed_dataset *detfeed__disk_dataset(const detfeed_disk_cache *dc, int *imgsz)
{
    *imgsz = dc->imgsz;
    return dc->ds;
}

/* The record of dataset image i (remapped after a sync); false when none. */
static bool record_of(const detfeed_disk_cache *dc, size_t *i)
{
    if (dc->remap == NULL)
        return *i < dc->n;
    if (*i >= dc->n_remap || dc->remap[*i] == SIZE_MAX)
        return false;
    *i = dc->remap[*i];
    return true;
}

/* The view to read, after adopting the writer's file where this process
 * waits for it; NULL when there is none yet. */
static dc_view *current_view(detfeed_disk_cache *dc)
{
    dc_view *v = atomic_load_explicit(&dc->view, memory_order_acquire);
    if (v == NULL) {
        maybe_adopt(dc);
        v = atomic_load_explicit(&dc->view, memory_order_acquire);
    }
    return v;
}

/* Where record r's pixels are in v: false when v does not hold them or
 * this process found them damaged. */
static bool place_of(const detfeed_disk_cache *dc, const dc_view *v, size_t r,
                     dc_place *p)
{
    if (atomic_load_explicit(&dc->bad[r], memory_order_acquire))
        return false;
    if (!v->writing) {
        *p = v->at[r];
        return p->offset != 0;
    }
    if (atomic_load_explicit(&dc->state[r], memory_order_acquire) != ST_PRESENT)
        return false;
    *p = (dc_place){.offset = records(dc)[r].offset, .sum = dc->sums[r]};
    return true;
}

static bool writing(const detfeed_disk_cache *dc)
{
    return atomic_load_explicit(&dc->st, memory_order_acquire) == DETFEED_DISK_WRITING;
}

/* Why record r could not be used (read_at's err: 0 for a checksum that
 * does not match), as a line kept for detfeed_disk_cache_damage; r is not
 * read from the file again (unless written again, see rewrite). Once per
 * record. */
static void damaged(detfeed_disk_cache *dc, size_t i, size_t r, int err)
{
    unsigned char no = 0;
    if (!atomic_compare_exchange_strong(&dc->bad[r], &no, 1))
        return;
    char e[128];
    const char *what =
        err == 0  ? "its pixels do not match their checksum (the file was damaged or "
                    "changed after it was written)"
        : err < 0 ? "the file ends before its pixels (it was cut short after it was "
                    "opened)"
                  : errtext(err, e, sizeof e);
    int pn;
    const char *path = record_path(dc, r, &pn);
    pthread_mutex_lock(&dc->damage_mu);
    long long k = atomic_load(&dc->damaged);
    if (k < DC_DAMAGE_LINES && dc->damage == NULL)
        dc->damage = calloc(DC_DAMAGE_LINES, sizeof *dc->damage);
    if (k < DC_DAMAGE_LINES && dc->damage)
        snprintf(dc->damage[k], sizeof dc->damage[k],
                 "%s: image %zu (%.*s): %s; decoded from the image instead%s", dc->path,
                 i, pn, path, what,
                 writing(dc)
                     ? " (this process writes the file: it writes the image again "
                       "once decoded)"
                     : "");
    atomic_store(&dc->damaged, k + 1);
    pthread_mutex_unlock(&dc->damage_mu);
}

/* Whether the file of v has changed since its stamp was taken (a write, a
 * truncation, a rename: its change time or size moved); a change moves
 * the view's gen and then the stamp, so that every image is checked
 * again, and a reader that finds the stamp moved finds gen moved too.
 * The file's change time into *ctime_ns. */
static bool file_changed(dc_view *v, int fd, uint64_t *ctime_ns)
{
    uint64_t now = stamp_of(fd, ctime_ns);
    if (now == atomic_load(&v->stamp))
        return false;
    atomic_fetch_add(&v->gen, 1); /* before the stamp: see read_pixels */
    atomic_store(&v->stamp, now);
    return true;
}

/* Record r (dataset image i) from v into dst, whole and checked: true with
 * a hit counted, else false (not held, or damaged: see damaged). Its
 * checksum is checked the first time this process reads it, and again
 * after the file changed (file_changed, looked at after each read, so
 * that a read a change may have reached is checked), and at every read
 * while the file's last change is too recent to see the next (settled):
 * an image read whole from a file that has not changed since its check
 * is the bytes checked. */
static bool read_pixels(detfeed_disk_cache *dc, dc_view *v, size_t i, size_t r,
                        uint8_t *dst, detfeed__clock *clock)
{
    dc_place p;
    if (!place_of(dc, v, r, &p))
        return false;
    const dc_record *rec = &records(dc)[r];
    size_t bytes = (size_t)rec->width * (size_t)rec->height * 3;
    int fd = v->writing ? dc->fd : v->fd;
    unsigned gen = atomic_load(&v->gen);
    bool known = atomic_load_explicit(&dc->checked[r], memory_order_relaxed) == gen + 1;
    int was = detfeed__clock_enter(clock, DETFEED_STAGE_READ);
    uint64_t read_time = wall_ns(), ctime = 0;
    int err = read_at(fd, dst, bytes, p.offset);
    /* a change seen here or by another thread since gen was read */
    if (err == 0 && (file_changed(v, fd, &ctime) || atomic_load(&v->gen) != gen))
        known = false;
    if (err == 0 && !known) {
        detfeed__clock_enter(clock, DETFEED_STAGE_CHECK);
        known = detfeed__checksum(dst, bytes, DETFEED_ISA_AUTO) == p.sum;
    }
    detfeed__clock_enter(clock, was);
    if (err == 0 && known) {
        if (settled(ctime, read_time))
            atomic_store_explicit(&dc->checked[r], gen + 1, memory_order_relaxed);
        else /* checked, but the next read must check again */
            atomic_store_explicit(&dc->checked[r], 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&dc->hits, 1, memory_order_relaxed);
        return true;
    }
    damaged(dc, i, r, err);
    return false;
}

bool detfeed__disk_read(detfeed_disk_cache *dc, size_t i, uint8_t *dst, int width,
                        int height, int *ow, int *oh)
{
    size_t r = i;
    dc_view *v;
    if (!record_of(dc, &r) || (v = current_view(dc)) == NULL)
        return false;
    const dc_record *rec = &records(dc)[r];
    if (rec->width != width || rec->height != height ||
        !read_pixels(dc, v, i, r, dst, NULL))
        return false;
    *ow = rec->orig_width, *oh = rec->orig_height;
    return true;
}

bool detfeed__disk_lookup(detfeed_disk_cache *dc, size_t i, uint8_t **pixels, int *w,
                          int *h, int *ow, int *oh, detfeed__clock *clock)
{
    size_t r = i;
    dc_view *v;
    dc_place p;
    if (!record_of(dc, &r) || (v = current_view(dc)) == NULL || !place_of(dc, v, r, &p))
        return false;
    const dc_record *rec = &records(dc)[r];
    /* aligned as the pixels in the file (64 bytes): the kernel copies
     * mutually aligned memory several times faster */
    size_t bytes = (size_t)rec->width * (size_t)rec->height * 3;
    uint8_t *px = aligned_alloc(DC_ALIGN, round_up(bytes, DC_ALIGN));
    if (px == NULL || !read_pixels(dc, v, i, r, px, clock)) {
        free(px);
        return false;
    }
    *pixels = px;
    *w = rec->width, *h = rec->height, *ow = rec->orig_width, *oh = rec->orig_height;
    return true;
}

bool detfeed__disk_holds(const detfeed_disk_cache *dc, size_t i)
{
    const dc_view *v = atomic_load_explicit(&dc->view, memory_order_acquire);
    dc_place p;
    return v && record_of(dc, &i) && place_of(dc, v, i, &p);
}

static void leave_out(detfeed_disk_cache *dc, size_t i)
{
    unsigned char absent = ST_ABSENT;
    if (atomic_compare_exchange_strong(&dc->state[i], &absent, ST_LEFT_OUT)) {
        atomic_fetch_add(&dc->left_out, 1);
        mark_done(dc);
    }
}

/* Record i, found damaged in the part this process writes and decoded
 * again: written again while the part takes writes (before the commit),
 * when the decode gives the checksum first written (the image has not
 * changed); then it is read from the file again. */
static void rewrite(detfeed_disk_cache *dc, size_t i, const uint8_t *pixels,
                    size_t bytes)
{
    if (atomic_load_explicit(&dc->state[i], memory_order_acquire) != ST_PRESENT ||
        detfeed__checksum(pixels, bytes, DETFEED_ISA_AUTO) != dc->sums[i])
        return;
    pthread_mutex_lock(&dc->mu);
    if (!dc->ended &&
        detfeed__write_all(dc->fd, pixels, bytes, records(dc)[i].offset) == 0)
        atomic_store_explicit(&dc->bad[i], 0, memory_order_release);
    pthread_mutex_unlock(&dc->mu);
}

void detfeed__disk_offer(detfeed_disk_cache *dc, size_t i, const uint8_t *pixels, int w,
                         int h, int ow, int oh)
{
    atomic_fetch_add_explicit(&dc->decoded, 1, memory_order_relaxed);
    if (!writing(dc) || !record_of(dc, &i))
        return;
    const dc_record *r = &records(dc)[i];
    if (r->width != w || r->height != h || r->orig_width != ow || r->orig_height != oh)
        return leave_out(dc, i); /* changed since indexed: the next open rebuilds */
    size_t bytes = (size_t)w * (size_t)h * 3;
    if (atomic_load_explicit(&dc->bad[i], memory_order_acquire))
        return rewrite(dc, i, pixels, bytes);
    unsigned char absent = ST_ABSENT;
    if (!atomic_compare_exchange_strong(&dc->state[i], &absent, ST_WRITING))
        return; /* another thread has it */
    dc->sums[i] = detfeed__checksum(pixels, bytes, DETFEED_ISA_AUTO);
    int err = detfeed__write_all(dc->fd, pixels, bytes, r->offset);
    if (err) {
        char e[128];
        atomic_store(&dc->state[i], ST_ABSENT);
        return set_failed(
            dc, "%s: writing image %zu failed: %s; images are decoded instead",
            dc->part, i, errtext(err, e, sizeof e));
    }
    atomic_fetch_add(&dc->written, 1);
    atomic_fetch_add(&dc->held, 1);
    atomic_fetch_add(&dc->held_bytes, (long long)bytes);
    atomic_store_explicit(&dc->state[i], ST_PRESENT, memory_order_release);
    mark_done(dc);
}

void detfeed__disk_failed(detfeed_disk_cache *dc, size_t i, int rc)
{
    if (rc != DETFEED_ENOMEM && writing(dc) && record_of(dc, &i))
        leave_out(dc, i);
}

/* Whether record r names `abs`. */
static bool names(const detfeed_disk_cache *dc, size_t r, const char *abs)
{
    const dc_record *rec = &records(dc)[r];
    const char *table = (const char *)dc->index + dc->n * sizeof(dc_record);
    return strlen(abs) == rec->path_bytes &&
           memcmp(table + rec->path_offset, abs, rec->path_bytes) == 0;
}

int detfeed__disk_sync(detfeed_disk_cache *dc)
{
    size_t m = detfeed_dataset_size(dc->ds), r = 0;
    if (m == dc->n || dc->remap)
        return DETFEED_OK;
    size_t *remap = malloc((m ? m : 1) * sizeof *remap);
    if (remap == NULL)
        return detfeed__fail(&dc->msg, DETFEED_ENOMEM, "out of memory");
    for (size_t j = 0; j < m; j++) {
        char *abs = detfeed__absolute_path(detfeed__dataset_image(dc->ds, j)->path);
        if (abs == NULL) {
            free(remap);
            return detfeed__fail(&dc->msg, DETFEED_ENOMEM, "out of memory");
        }
        for (; r < dc->n && !names(dc, r, abs); r++)
            if (dc->state)
                leave_out(dc, r); /* taken out of the dataset */
        remap[j] = r < dc->n ? r++ : SIZE_MAX;
        free(abs);
    }
    for (; r < dc->n; r++)
        if (dc->state)
            leave_out(dc, r);
    dc->remap = remap;
    dc->n_remap = m;
    return DETFEED_OK;
}

/* What detfeed_disk_cache_get needs: the cache open, its arguments, image
 * i in the dataset. The cache is shared by threads: the message goes to the
 * caller's codec, as detfeed_cache_get's does. */
static int check_get(const detfeed_disk_cache *dc, size_t i, detfeed_codec *codec,
                     const uint8_t **pixels, int *width, int *height, uint8_t **owned)
{
    if (codec == NULL)
        return DETFEED_EINVAL;
    if (!dc->opened)
        return detfeed__fail(&codec->msg, DETFEED_EINVAL,
                             "disk_cache_get: the disk cache is not open "
                             "(detfeed_disk_cache_open)");
    if (pixels == NULL || width == NULL || height == NULL || owned == NULL)
        return detfeed__fail(&codec->msg, DETFEED_EINVAL,
                             "disk_cache_get: pixels, width, height and owned are "
                             "required (not NULL)");
    size_t n = detfeed_dataset_size(dc->ds);
    if (i >= n)
        return detfeed__fail(&codec->msg, DETFEED_EINVAL,
                             "disk_cache_get: index %zu is not below the dataset's %zu "
                             "images",
                             i, n);
    return DETFEED_OK;
}

int detfeed_disk_cache_get(detfeed_disk_cache *dc, size_t i, detfeed_codec *codec,
                           const uint8_t **pixels, int *width, int *height,
                           int *orig_width, int *orig_height, uint8_t **owned)
{
    if (dc == NULL)
        return DETFEED_EINVAL;
    int rc = check_get(dc, i, codec, pixels, width, height, owned);
    if (rc != DETFEED_OK)
        return rc;
    *owned = NULL;
    int ow, oh;
    if (!detfeed__disk_lookup(dc, i, owned, width, height, &ow, &oh, NULL)) {
        rc = detfeed__load_image(codec, dc->ds, i, dc->imgsz, NULL, 0, 0, owned, width,
                                 height, &ow, &oh, NULL);
        if (rc != DETFEED_OK) {
            detfeed__disk_failed(dc, i, rc);
            return rc;
        }
        detfeed__disk_offer(dc, i, *owned, *width, *height, ow, oh);
    }
    *pixels = *owned;
    if (orig_width)
        *orig_width = ow;
    if (orig_height)
        *orig_height = oh;
    return DETFEED_OK;
}

/* ---- filling all at once ------------------------------------------------- */

typedef struct filler {
    detfeed_disk_cache *dc;
    atomic_size_t next;
} filler;

static void *fill_thread(void *arg)
{
    filler *f = arg;
    detfeed_disk_cache *dc = f->dc;
    detfeed_codec *codec;
    if (detfeed_codec_create(&codec, 0) != DETFEED_OK)
        return NULL;
    size_t m = detfeed_dataset_size(dc->ds);
    for (size_t i; (i = atomic_fetch_add(&f->next, 1)) < m && writing(dc);) {
        size_t r = i;
        detfeed__progress_add(&dc->progress, 1);
        if (!record_of(dc, &r) || atomic_load(&dc->state[r]) != ST_ABSENT)
            continue;
        const uint8_t *px;
        uint8_t *owned;
        int w, h;
        if (detfeed_disk_cache_get(dc, i, codec, &px, &w, &h, NULL, NULL, &owned) ==
            DETFEED_OK)
            detfeed_free(owned);
    }
    detfeed_codec_destroy(codec);
    return NULL;
}

const char *detfeed_disk_cache_progress(const detfeed_disk_cache *dc, uint64_t *done,
                                        uint64_t *total)
{
    return detfeed__progress_read(dc ? &dc->progress : NULL, done, total);
}

int detfeed_disk_cache_fill(detfeed_disk_cache *dc, int threads)
{
    if (dc == NULL)
        return DETFEED_EINVAL;
    detfeed__msg_clear(&dc->msg);
    if (threads < 1)
        return detfeed__fail(&dc->msg, DETFEED_EINVAL,
                             "fill: threads %d is not a count it accepts (>= 1)",
                             threads);
    if (!dc->opened)
        return detfeed__fail(
            &dc->msg, DETFEED_EBADSTATE,
            "fill: the disk cache is not open (detfeed_disk_cache_open)");
    if (writing(dc)) {
        filler f = {.dc = dc};
        atomic_init(&f.next, 0);
        detfeed__progress_begin(&dc->progress, "cache", detfeed_dataset_size(dc->ds));
        detfeed__run_threads(threads, "detfeed-disk", fill_thread, &f);
        detfeed__progress_end(&dc->progress);
        pthread_mutex_lock(&dc->mu);
        commit_if_complete(dc);
        pthread_mutex_unlock(&dc->mu);
    }
    int st = atomic_load_explicit(&dc->st, memory_order_acquire);
    if (st == DETFEED_DISK_FAILED)
        return detfeed__fail(&dc->msg, DETFEED_EIO, "%s", dc->note_end);
    if (st == DETFEED_DISK_WRITING)
        return detfeed__fail(&dc->msg, DETFEED_ENOMEM,
                             "%s: images are missing after the fill (out of memory?)",
                             dc->part);
    return DETFEED_OK;
}

/* ---- reports and the end ------------------------------------------------- */

int64_t detfeed_disk_cache_stat_get(const detfeed_disk_cache *dc,
                                    detfeed_disk_stat stat)
{
    if (dc == NULL)
        return -1;
    const dc_view *v = atomic_load_explicit(&dc->view, memory_order_acquire);
    switch (stat) {
    case DETFEED_DISK_STATE:
        return atomic_load(&dc->st);
    case DETFEED_DISK_IMAGES:
        return v ? atomic_load(&dc->held) : 0;
    case DETFEED_DISK_BYTES:
        return v ? atomic_load(&dc->held_bytes) : 0;
    case DETFEED_DISK_FILE_BYTES:
        return v ? (int64_t)v->size : 0;
    case DETFEED_DISK_DAMAGED:
        return atomic_load(&dc->damaged);
    case DETFEED_DISK_HITS:
        return atomic_load(&dc->hits);
    case DETFEED_DISK_DECODED:
        return atomic_load(&dc->decoded);
    case DETFEED_DISK_WRITTEN:
        return atomic_load(&dc->written);
    case DETFEED_DISK_EXPECTED:
        return (int64_t)dc->expected;
    }
    return -1;
}

const char *detfeed_disk_cache_path(const detfeed_disk_cache *dc)
{
    return dc && dc->opened ? dc->path : NULL;
}

const char *detfeed_disk_cache_note(const detfeed_disk_cache *dc)
{
    if (dc == NULL)
        return "no disk cache";
    int st = atomic_load_explicit(&dc->st, memory_order_acquire);
    bool end = st == DETFEED_DISK_BUILT || st == DETFEED_DISK_ADOPTED ||
               st == DETFEED_DISK_FAILED;
    return end ? dc->note_end : dc->note_open;
}

int detfeed_disk_cache_damage(const detfeed_disk_cache *dc, size_t k, char *buf,
                              size_t size)
{
    if (dc == NULL || buf == NULL || size == 0)
        return DETFEED_EINVAL;
    buf[0] = '\0';
    /* The lines are written under the lock, before the count that shows
     * them; the lock is the handle's, taken by a reader too. */
    pthread_mutex_t *mu = (pthread_mutex_t *)&dc->damage_mu;
    pthread_mutex_lock(mu);
    int rc = k < (size_t)atomic_load(&dc->damaged) && k < DC_DAMAGE_LINES && dc->damage
                 ? DETFEED_OK
                 : DETFEED_EINVAL;
    if (rc == DETFEED_OK)
        snprintf(buf, size, "%s", dc->damage[k]);
    pthread_mutex_unlock(mu);
    return rc;
}

const char *detfeed_disk_cache_last_error(const detfeed_disk_cache *dc)
{
    return dc ? dc->msg.text : "no disk cache";
}

void detfeed_disk_cache_destroy(detfeed_disk_cache *dc)
{
    if (dc == NULL)
        return;
    if (dc->thread) {
        pthread_mutex_lock(&dc->mu);
        dc->stop = true;
        pthread_cond_broadcast(&dc->cv);
        pthread_mutex_unlock(&dc->mu);
        pthread_join(dc->committer, NULL);
    }
    if (dc->part && atomic_load(&dc->st) != DETFEED_DISK_BUILT && dc->fd >= 0)
        unlink(dc->part); /* incomplete: never used, so not kept */
    for (int k = 0; k < 2; k++) {
        if (dc->views[k].fd >= 0)
            close(dc->views[k].fd);
        free(dc->views[k].at);
    }
    if (dc->fd >= 0)
        close(dc->fd);
    detfeed__lock_release(dc->lock_fd, dc->lock_path);
    free(dc->lock_path);
    pthread_cond_destroy(&dc->cv);
    pthread_mutex_destroy(&dc->mu);
    pthread_mutex_destroy(&dc->adopt_mu);
    pthread_mutex_destroy(&dc->damage_mu);
    free(dc->damage);
    free(dc->bad);
    free(dc->checked);
    free(dc->sums);
    free(dc->state);
    free(dc->remap);
    free(dc->index);
    free(dc->path);
    free(dc->part);
    free(dc);
}
