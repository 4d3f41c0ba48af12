/*
 * status.c - status names, version, messages and small checked helpers.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DETFEED__STR2(x) #x
#define DETFEED__STR(x)  DETFEED__STR2(x)

unsigned detfeed_version_number(void)
{
    return DETFEED_VERSION_NUMBER;
}

const char *detfeed_version_string(void)
{
    return DETFEED__STR(DETFEED_VERSION_MAJOR) "." DETFEED__STR(
        DETFEED_VERSION_MINOR) "." DETFEED__STR(DETFEED_VERSION_PATCH);
}

/* Indexed by -status; a table rather than a switch so that adding a code is
 * one line. */
static const char *const status_names[] = {
    "success",
    "invalid argument",
    "out of memory",
    "size overflow",
    "input/output error",
    "unsupported format",
    "corrupt data",
    "limit exceeded",
    "not supported by this build or CPU",
    "handle in wrong state",
    "CUDA error",
    "label rejected",
};

const char *detfeed_strerror(int status)
{
    size_t n = sizeof status_names / sizeof status_names[0];
    if (status > 0 || (size_t)(-(long)status) >= n)
        return "unknown status";
    return status_names[-status];
}

void detfeed_free(void *ptr)
{
    free(ptr);
}

void detfeed__msg_clear(detfeed__msg *msg)
{
    msg->text[0] = '\0';
}

int detfeed__fail(detfeed__msg *msg, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg->text, sizeof msg->text, fmt, ap);
    va_end(ap);
    return status;
}

bool detfeed__overlap(const void *a, size_t na, const void *b, size_t nb)
{
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + nb && pb < pa + na;
}

bool detfeed__partial_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    return a != b && detfeed__overlap(a, na, b, nb);
}

size_t detfeed__image_span(size_t stride, size_t row_bytes, int height)
{
    size_t rows;
    if (height <= 0 || !detfeed__mul_size(stride, (size_t)(height - 1), &rows))
        return 0;
    if (rows > SIZE_MAX - row_bytes)
        return 0;
    return rows + row_bytes;
}

uint64_t detfeed__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int detfeed__lookup(const detfeed__named *table, size_t n, const char *name, int *out)
{
    if (name == NULL || out == NULL)
        return DETFEED_EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(name, table[i].name) == 0) {
            *out = table[i].value;
            return DETFEED_OK;
        }
    }
    return DETFEED_EINVAL;
}
