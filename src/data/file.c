/*
 * file.c - reading whole files with limits, for the decoders.
 */
#include "data_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int detfeed__read_file(const char *path, uint64_t max_bytes, uint8_t **data,
                       size_t *size, detfeed__msg *msg)
{
    *data = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return detfeed__fail(msg, DETFEED_EIO, "%s: cannot open: %s", path,
                             strerror(errno));
    struct stat st;
    int rc = DETFEED_OK;
    if (fstat(fd, &st) != 0)
        rc = detfeed__fail(msg, DETFEED_EIO, "%s: cannot stat: %s", path,
                           strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = detfeed__fail(msg, DETFEED_EIO, "%s: not a regular file", path);
    else if ((uint64_t)st.st_size > max_bytes)
        rc = detfeed__fail(msg, DETFEED_ELIMIT,
                           "%s: %lld bytes exceeds the file size limit %llu", path,
                           (long long)st.st_size, (unsigned long long)max_bytes);
    else if (st.st_size == 0)
        rc = detfeed__fail(msg, DETFEED_ECORRUPT, "%s: empty file", path);
    uint8_t *buf = NULL;
    size_t n = rc == DETFEED_OK ? (size_t)st.st_size : 0, got = 0;
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
