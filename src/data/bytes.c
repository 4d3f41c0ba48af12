/*
 * bytes.c - the byte source the decoders read: the whole input in memory,
 * or a file read piece by piece (the header probe reads only what it needs).
 */
#include "decode_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const uint8_t *detfeed__src_at(detfeed__src *s, uint64_t off, uint64_t len)
{
    if (off > s->size || len > s->size - off)
        return NULL;
    if (s->mem)
        return s->mem + off;
    if (len > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < len)
            cap *= 2;
        uint8_t *p = realloc(s->buf, cap);
        if (p == NULL) {
            s->io_errno = ENOMEM;
            return NULL;
        }
        s->buf = p;
        s->cap = cap;
    }
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(s->fd, s->buf + got, (size_t)len - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            s->io_errno = r < 0 ? errno : EIO;
            return NULL;
        }
        got += (size_t)r;
    }
    return s->buf;
}

int detfeed__src_fail(detfeed_codec *c, const char *name, const detfeed__src *s)
{
    if (s->io_errno == ENOMEM)
        return detfeed__fail(&c->msg, DETFEED_ENOMEM, "%s: out of memory", name);
    return detfeed__fail(&c->msg, DETFEED_EIO, "%s: read failed: %s", name,
                         strerror(s->io_errno ? s->io_errno : EIO));
}
