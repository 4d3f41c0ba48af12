/*
 * file.c - opening regular files (never blocking on a FIFO) and reading
 * whole files with limits, for the decoders and the dataset index.
 */
#include "data_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *detfeed__file_kind(mode_t mode)
{
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    return "not a file";
}

/* Why `path` cannot be stat'ed, in words: a dangling link or a link loop
 * says so. */
static int stat_fail(const char *path, int err, detfeed__msg *msg)
{
    struct stat lst;
    if (err == ENOMEM) /* the kernel's memory, not the file */
        return detfeed__fail(msg, DETFEED_ENOMEM, "%s: out of memory", path);
    if (err == ELOOP)
        return detfeed__fail(msg, DETFEED_EIO, "%s: cannot open: a symbolic link loop",
                             path);
    if (err == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
        return detfeed__fail(
            msg, DETFEED_EIO,
            "%s: cannot open: a dangling symbolic link (its target does not exist)",
            path);
    return detfeed__fail(msg, DETFEED_EIO, "%s: cannot open: %s", path, strerror(err));
}

static int not_regular(const char *path, mode_t mode, detfeed__msg *msg)
{
    return detfeed__fail(msg, DETFEED_EIO, "%s: %s, not a regular file", path,
                         detfeed__file_kind(mode));
}

int detfeed__stat_regular(const char *path, struct stat *st, detfeed__msg *msg)
{
    if (stat(path, st) != 0)
        return stat_fail(path, errno, msg);
    if (!S_ISREG(st->st_mode))
        return not_regular(path, st->st_mode, msg);
    return DETFEED_OK;
}

int detfeed__open_regular(const char *path, int *fd, struct stat *st, detfeed__msg *msg)
{
    *fd = -1;
    /* stat first: opening a FIFO blocks until a writer comes. */
    int rc = detfeed__stat_regular(path, st, msg);
    if (rc != DETFEED_OK)
        return rc;
    /* O_NONBLOCK in case the path became a FIFO since; no effect on a
     * regular file's reads. */
    int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f < 0)
        return stat_fail(path, errno, msg);
    if (fstat(f, st) != 0)
        rc = detfeed__fail(msg, DETFEED_EIO, "%s: cannot stat: %s", path,
                           strerror(errno));
    else if (!S_ISREG(st->st_mode))
        rc = not_regular(path, st->st_mode, msg);
    if (rc != DETFEED_OK) {
        close(f);
        return rc;
    }
    *fd = f;
    return DETFEED_OK;
}

int detfeed__read_opened(const char *path, int fd, const struct stat *st,
                         uint64_t max_bytes, uint8_t **data, size_t *size,
                         detfeed__msg *msg)
{
    *data = NULL;
    *size = 0;
    int rc = DETFEED_OK;
    if ((uint64_t)st->st_size > max_bytes)
        rc = detfeed__fail(msg, DETFEED_ELIMIT,
                           "%s: %lld bytes exceeds the file size limit %llu", path,
                           (long long)st->st_size, (unsigned long long)max_bytes);
    else if (st->st_size == 0)
        rc = detfeed__fail(msg, DETFEED_ECORRUPT, "%s: empty file", path);
    uint8_t *buf = NULL;
    size_t n = rc == DETFEED_OK ? (size_t)st->st_size : 0, got = 0;
    if (rc == DETFEED_OK && (buf = malloc(n)) == NULL)
        rc = detfeed__fail(msg, DETFEED_ENOMEM, "%s: out of memory for %zu bytes", path,
                           n);
    while (rc == DETFEED_OK && got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            rc = detfeed__fail(msg, DETFEED_EIO, "%s: read failed: %s", path,
                               r < 0 ? strerror(errno) : "file shrank");
        else
            got += (size_t)r;
    }
    close(fd);
    if (rc != DETFEED_OK) {
        free(buf);
        return rc;
    }
    *data = buf;
    *size = n;
    return DETFEED_OK;
}

int detfeed__read_file(const char *path, uint64_t max_bytes, uint8_t **data,
                       size_t *size, detfeed__msg *msg)
{
    *data = NULL;
    *size = 0;
    int fd;
    struct stat st;
    int rc = detfeed__open_regular(path, &fd, &st, msg);
    if (rc != DETFEED_OK)
        return rc;
    return detfeed__read_opened(path, fd, &st, max_bytes, data, size, msg);
}
