/*
 * cache_files.c - the places and helpers the disk cache and the
 * verification record share (cache_files.h).
 */
#include "cache_files.h"

#include "core/sha256.h"

#include <avif/avif.h>
#include <errno.h>
#include <fcntl.h>
#include <openjpeg.h>
#include <spng.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <tiffvers.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<jconfig.h>)
#include <jconfig.h>
#endif
#endif
#ifndef LIBJPEG_TURBO_VERSION_NUMBER
#define LIBJPEG_TURBO_VERSION_NUMBER 0
#endif

char *detfeed__strdup_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = k >= 0 ? malloc((size_t)k + 1) : NULL;
    if (s) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)k + 1, fmt, ap);
        va_end(ap);
    }
    return s;
}

char *detfeed__absolute_path(const char *path)
{
    if (path[0] == '/')
        return detfeed__strdup_printf("%s", path);
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) == NULL)
        return detfeed__strdup_printf("%s", path);
    return detfeed__strdup_printf("%s/%s", cwd, path);
}

int64_t detfeed__mtime_ns(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

int detfeed__write_all(int fd, const void *data, size_t bytes, uint64_t offset)
{
    const uint8_t *p = data;
    while (bytes > 0) {
        size_t chunk = bytes < (1u << 30) ? bytes : (1u << 30);
        ssize_t k = pwrite(fd, p, chunk, (off_t)offset);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : EIO;
        p += k, bytes -= (size_t)k, offset += (uint64_t)k;
    }
    return 0;
}

void detfeed__sync_folder(const char *path)
{
    char *dir = detfeed__path_dir(path);
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

void detfeed__make_folders(char *dir)
{
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0777);
            *p = '/';
        }
    mkdir(dir, 0777);
}

char *detfeed__cache_default_path(const detfeed_dataset *ds, const char *suffix)
{
    char *label = detfeed__label_path(detfeed__dataset_image(ds, 0)->path);
    char *dir = label ? detfeed__path_dir(label) : NULL;
    char *abs = dir ? detfeed__absolute_path(dir) : NULL;
    char *p = abs ? detfeed__strdup_printf("%s%s", abs, suffix) : NULL;
    free(label);
    free(dir);
    free(abs);
    return p;
}

char *detfeed__cache_fallback_path(const char *primary)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char *dir = xdg && xdg[0] == '/' ? detfeed__strdup_printf("%s/detfeed", xdg)
                : home && home[0]    ? detfeed__strdup_printf("%s/.cache/detfeed", home)
                                     : NULL;
    if (dir == NULL)
        return NULL;
    uint8_t sha[32];
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    detfeed_sha256_update(&ctx, primary, strlen(primary));
    detfeed_sha256_final(&ctx, sha);
    const char *name = strrchr(primary, '/');
    char *p = detfeed__strdup_printf("%s/%02x%02x%02x%02x%02x%02x%02x%02x-%s", dir,
                                     sha[0], sha[1], sha[2], sha[3], sha[4], sha[5],
                                     sha[6], sha[7], name ? name + 1 : primary);
    free(dir);
    return p;
}

bool detfeed__folder_writable(const char *path)
{
    char *dir = detfeed__path_dir(path);
    struct stat st;
    bool ok = dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
              (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) && access(dir, W_OK) == 0;
    free(dir);
    return ok;
}

/* ---- files of detfeed's own ----------------------------------------------- */

static const char link_words[] =
    "is a symbolic link, which detfeed does not follow for its own files";

/* -1 with *err and `why` for what `fd` (or, when it could not be opened,
 * `path`) is; `fd` is closed. */
static int refuse_own(const char *path, int fd, int e, int *err, char *why, size_t wn)
{
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(why, wn, "is %s, not a regular file", detfeed__file_kind(st.st_mode));
        e = EINVAL;
    } else if (e == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        snprintf(why, wn, "%s", link_words);
    } else {
        snprintf(why, wn, "%s", strerror(e));
    }
    if (fd >= 0)
        close(fd);
    *err = e;
    return -1;
}

/* fd when it is a regular file (its stat in *st, when not NULL), else its
 * refusal. */
static int regular_or_refuse(const char *path, int fd, struct stat *st, int *err,
                             char *why, size_t wn)
{
    struct stat own;
    if (st == NULL)
        st = &own;
    if (fd < 0)
        return refuse_own(path, fd, errno, err, why, wn);
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))
        return refuse_own(path, fd, errno, err, why, wn);
    return fd;
}

int detfeed__own_lock(const char *path, int *err, char *why, size_t wn)
{
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
    return regular_or_refuse(path, fd, NULL, err, why, wn);
}

/* Whether the flocked fd is the file at `path` still (not removed by a
 * holder that released it meanwhile). */
static bool lock_current(int fd, const char *path)
{
    struct stat held, now;
    return fstat(fd, &held) == 0 && lstat(path, &now) == 0 &&
           held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

int detfeed__lock_take(const char *path, bool wait, bool *waited, int *err, char *why,
                       size_t wn)
{
    if (waited)
        *waited = false;
    for (;;) {
        int fd = detfeed__own_lock(path, err, why, wn);
        if (fd < 0)
            return -1;
        int rc = flock(fd, LOCK_EX | LOCK_NB);
        if (rc != 0 && errno == EWOULDBLOCK && wait) {
            if (waited)
                *waited = true;
            while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
                ;
        }
        if (rc != 0) {
            *err = errno == EWOULDBLOCK ? EWOULDBLOCK : ENOLCK;
            if (*err == ENOLCK)
                snprintf(why, wn, "cannot lock it: %s", strerror(errno));
            close(fd);
            return -1;
        }
        if (lock_current(fd, path))
            return fd;
        close(fd); /* released (removed) while this waited: the new file */
    }
}

void detfeed__lock_release(int fd, const char *path)
{
    if (fd < 0)
        return;
    if (path && lock_current(fd, path))
        unlink(path);
    close(fd);
}

int detfeed__own_create(const char *path, int *err, char *why, size_t wn)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode))
            return *err = ELOOP, snprintf(why, wn, "%s", link_words), -1;
        if (!S_ISREG(st.st_mode))
            return *err = EINVAL,
                   snprintf(why, wn, "is %s, not a regular file",
                            detfeed__file_kind(st.st_mode)),
                   -1;
        if (unlink(path) != 0 && errno != ENOENT)
            return refuse_own(path, -1, errno, err, why, wn);
    }
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST)
        return *err = EEXIST,
               snprintf(why, wn,
                        "appeared while detfeed was creating it (another "
                        "program writes there)"),
               -1;
    return regular_or_refuse(path, fd, NULL, err, why, wn);
}

int detfeed__own_read(const char *path, struct stat *st, int *err, char *why, size_t wn)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    return regular_or_refuse(path, fd, st, err, why, wn);
}

int detfeed__own_read_or(const char *path, struct stat *st, const char *none, char *why,
                         size_t wn)
{
    char refused[160];
    int err, fd = detfeed__own_read(path, st, &err, refused, sizeof refused);
    if (fd >= 0)
        return fd;
    if (err == ENOENT)
        snprintf(why, wn, "%s", none);
    else if (err == ELOOP || err == EINVAL) /* a link, or not a file */
        snprintf(why, wn, "%s", refused);
    else
        snprintf(why, wn, "cannot read it: %s", refused);
    return -1;
}

bool detfeed__foreign_file(const char *path, const char magic[8], char *why, size_t wn)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return false;
    if (S_ISLNK(st.st_mode))
        return snprintf(why, wn, "%s", link_words), true;
    if (S_ISDIR(st.st_mode))
        return snprintf(why, wn, "is a folder"), true;
    if (!S_ISREG(st.st_mode))
        return snprintf(why, wn, "is not a regular file"), true;
    if (st.st_size == 0)
        return false;
    char head[8];
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n;
    while ((n = read(fd, head, sizeof head)) < 0 && errno == EINTR)
        ;
    close(fd);
    if (n <= 0 || memcmp(head, magic, (size_t)n) == 0)
        return false;
    return snprintf(why, wn, "does not start with %.8s (not a file of detfeed's)",
                    magic),
           true;
}

void detfeed__decode_provenance(const detfeed__limits *lim, char *buf, size_t size)
{
    /* the stack decides how some files decode (BMP bit fields, WebP
     * animations, TIFF, JPEG 2000 damage), libtiff and OpenJPEG how TIFF's
     * and JPEG 2000's do */
    static const char *const stacks[] = {"4", "5.0", "5.1", "4-debian"};
    const char *cv = (unsigned)lim->opencv < 4 ? stacks[lim->opencv] : "?";
    snprintf(
        buf, size,
        "libjpeg-turbo %d, spng %s, libtiff %d, openjpeg %s, libavif %s, opencv %s, "
        "limits "
        "%llux%llu %llu px %llu file %llu bytes",
        (int)LIBJPEG_TURBO_VERSION_NUMBER, spng_version_string(), (int)TIFFLIB_VERSION,
        opj_version(), avifVersion(), cv, (unsigned long long)lim->max_width,
        (unsigned long long)lim->max_height, (unsigned long long)lim->max_pixels,
        (unsigned long long)lim->max_file, (unsigned long long)lim->max_image_bytes);
}
