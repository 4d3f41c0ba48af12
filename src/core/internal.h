/*
 * internal.h - helpers shared by every part of libdetfeed. Never installed.
 *
 * Cross-file internal names start with detfeed__ (two underscores).
 */
#ifndef DETFEED_INTERNAL_H
#define DETFEED_INTERNAL_H

#include "detfeed_img.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A handle's message for its last failure. Fixed size: formatting never
 * allocates, so an out-of-memory failure can still be described. */
#define DETFEED__MSG_SIZE 512
typedef struct detfeed__msg {
    char text[DETFEED__MSG_SIZE];
} detfeed__msg;

/* Clears the message (after a successful call). */
void detfeed__msg_clear(detfeed__msg *msg);

/* Formats the message and returns `status`, so a failure is one line:
 *     return detfeed__fail(&c->msg, DETFEED_EIO, "%s: cannot open", path); */
int detfeed__fail(detfeed__msg *msg, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* *out = a * b; false (and *out untouched) when it would overflow size_t. */
static inline bool detfeed__mul_size(size_t a, size_t b, size_t *out)
{
    if (b != 0 && a > SIZE_MAX / b)
        return false;
    *out = a * b;
    return true;
}

/* Checks the geometry of an interleaved 3-channel 8-bit image. */
static inline bool detfeed__bgr_geometry_ok(const void *p, size_t stride, int width,
                                            int height)
{
    return p != NULL && width > 0 && height > 0 && (size_t)width <= SIZE_MAX / 3 &&
           stride >= (size_t)width * 3;
}

/* True when the byte ranges [a, a + na) and [b, b + nb) overlap without
 * being the same start: the one aliasing in-place kernels cannot accept. */
bool detfeed__partial_overlap(const void *a, size_t na, const void *b, size_t nb);

/* True when the byte ranges share any byte, the same start included: what
 * a kernel that reads its source after writing its destination refuses. */
bool detfeed__overlap(const void *a, size_t na, const void *b, size_t nb);

/* Runs fn(arg) on `threads` new threads, named `name` (what top -H, ps
 * and debuggers show), and joins them; fn takes its work items from `arg`
 * (an atomic counter) until none are left. When no thread can start, fn
 * runs once on the calling thread. */
void detfeed__run_threads(int threads, const char *name, void *(*fn)(void *),
                          void *arg);

/* Names the calling thread (at most 15 bytes are kept; a failure is
 * ignored: the name is only shown, never read). */
void detfeed__name_thread(const char *name);

/* A table of names and the values they stand for, and its lookup: *out
 * receives the value of `name`; DETFEED_EINVAL when it is not there (or
 * name or out is NULL). */
typedef struct detfeed__named {
    const char *name;
    int value;
} detfeed__named;
int detfeed__lookup(const detfeed__named *table, size_t n, const char *name, int *out);

/* Bytes spanned by an image of `height` rows `stride` apart whose rows hold
 * `row_bytes` bytes; 0 when it would overflow. */
size_t detfeed__image_span(size_t stride, size_t row_bytes, int height);

/* A monotonic clock in nanoseconds, for the stage timings. */
uint64_t detfeed__now_ns(void);

/* The uniform double of two 32-bit words (CPython's random()). */
double detfeed__uniform_words(uint32_t a, uint32_t b);

/* ---- CPU variants (cpu.c) -------------------------------------------------
 * Every pixel kernel (src/img) has a portable variant and may have AVX2 and
 * AVX-512 ones, each in its own file compiled for its instruction set when
 * the compiler has it (DETFEED_HAVE_AVX2, DETFEED_HAVE_AVX512). A kernel
 * names the variants it has as a mask of DETFEED__ISA_BIT()s, limited to
 * this build with DETFEED__ISA_BUILT, and resolves the caller's detfeed_isa
 * with detfeed__isa_pick(), then switches on the result. DETFEED_ISA_PORTABLE
 * forces the portable variant (tests compare the variants that way). */
#define DETFEED__ISA_BIT(isa) (1u << (unsigned)(isa))
#ifdef DETFEED_HAVE_AVX2
#define DETFEED__ISA_BUILT_AVX2 DETFEED__ISA_BIT(DETFEED_ISA_AVX2)
#else
#define DETFEED__ISA_BUILT_AVX2 0u
#endif
#ifdef DETFEED_HAVE_AVX512
#define DETFEED__ISA_BUILT_AVX512 DETFEED__ISA_BIT(DETFEED_ISA_AVX512)
#else
#define DETFEED__ISA_BUILT_AVX512 0u
#endif
/* The variants this build compiled. */
#define DETFEED__ISA_BUILT                                                             \
    (DETFEED__ISA_BIT(DETFEED_ISA_PORTABLE) | DETFEED__ISA_BUILT_AVX2 |                \
     DETFEED__ISA_BUILT_AVX512)

/* The probe: true when this CPU runs `isa` (AUTO and PORTABLE: always). */
bool detfeed__cpu_runs(detfeed_isa isa);

/* The probe for SHA-256's block function: true when this CPU has the x86
 * SHA extensions (with SSSE3 and SSE4.1), which core/sha256.c then uses. */
bool detfeed__cpu_has_sha(void);

/* The checksum of cached pixels (the disk cache's, per image): XXH3-64,
 * seed 0, of `bytes` bytes, with the variant `isa` picks (every variant
 * gives the same value). checksum.c. */
uint64_t detfeed__checksum(const void *data, size_t bytes, detfeed_isa isa);

/* The variant a kernel with `variants` (a DETFEED__ISA_BIT mask) runs for
 * `isa`: AUTO, the best of them this CPU runs (PORTABLE at least); PORTABLE,
 * itself; AVX2 or AVX512, itself when among `variants` and this CPU runs it.
 * -1 when the requested variant cannot run (or isa is not a detfeed_isa). */
int detfeed__isa_pick(detfeed_isa isa, unsigned variants);

#endif /* DETFEED_INTERNAL_H */
