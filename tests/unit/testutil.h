/*
 * testutil.h - a minimal test harness: checks are counted, failures print
 * file:line and the expression, and tu_finish() prints the closing
 * "N passed, N failed" line and returns the exit status.
 */
#ifndef DETFEED_TESTUTIL_H
#define DETFEED_TESTUTIL_H

#include "core/sha256.h"
#include "detfeed.h"
#include "detfeed_cuda.h"
#include "detfeed_img.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

bool tu_check(bool ok, const char *expr, const char *file, int line);
bool tu_check_int(long long got, long long want, const char *expr, const char *file,
                  int line);
bool tu_check_str(const char *got, const char *want, const char *expr, const char *file,
                  int line);
int tu_finish(const char *suite);
/* Checks failed so far (a suite that reports each part's verdict). */
int tu_failures(void);
/* Marks part of the suite as not run (its data is missing): says why, and
 * tu_finish then returns 77 (skipped) unless a check failed. */
void tu_skip(const char *why);

/* TU_SANITIZED is 1 in an ASan or TSan build: such a run looks for memory
 * and thread errors, not for differing bytes, and runs several times
 * slower, so the exhaustive comparisons take a sample there (the Release
 * build compares everything). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TU_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TU_SANITIZED 1
#endif
#endif
#ifndef TU_SANITIZED
#define TU_SANITIZED 0
#endif

#define CHECK(cond)          tu_check((cond), #cond, __FILE__, __LINE__)
#define CHECK_INT(got, want) tu_check_int((got), (want), #got, __FILE__, __LINE__)
#define CHECK_STR(got, want) tu_check_str((got), (want), #got, __FILE__, __LINE__)

/* Every reference stack: each OpenCV version on each of its code paths (an
 * initializer list for an array of detfeed_cv). */
/* clang-format off */
#define TU_CV_STACKS                                                              \
    {DETFEED_CV_4, DETFEED_CV_CPU_SSE, 0},   {DETFEED_CV_4, DETFEED_CV_CPU_AVX2, 0},   \
    {DETFEED_CV_4, DETFEED_CV_CPU_AVX512, 0},                                           \
    {DETFEED_CV_5_0, DETFEED_CV_CPU_SSE, 0}, {DETFEED_CV_5_0, DETFEED_CV_CPU_AVX2, 0}, \
    {DETFEED_CV_5_0, DETFEED_CV_CPU_AVX512, 0},                                         \
    {DETFEED_CV_5_1, DETFEED_CV_CPU_SSE, 1}, {DETFEED_CV_5_1, DETFEED_CV_CPU_AVX2, 1}, \
    {DETFEED_CV_5_1, DETFEED_CV_CPU_AVX512, 1},                                         \
    {DETFEED_CV_4_DEBIAN, DETFEED_CV_CPU_SSE, 0},                                       \
    {DETFEED_CV_4_DEBIAN, DETFEED_CV_CPU_AVX2, 0},                                      \
    {DETFEED_CV_4_DEBIAN, DETFEED_CV_CPU_AVX512, 0}
/* clang-format on */

/* splitmix64: a small deterministic generator for test inputs. */
static inline uint64_t tu_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform double in [lo, hi). */
static inline double tu_uniform(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * (double)(tu_rand(state) >> 11) * 0x1p-53;
}

/* One image of a dataset tu_make_dataset writes: its number, its size, its
 * pixels (RGB, w * h * 3 bytes, noise until the maker paints over them), its
 * open label file, the generator its size and noise came from (the maker may
 * draw on), and the maker's context. */
typedef struct tu_image {
    int index, w, h;
    uint8_t *px;
    FILE *labels;
    uint64_t *rng;
    void *ctx;
} tu_image;

/* A dataset of n PNGs, root/images/NN.png, and their labels,
 * root/labels/NN.txt: each image's sides (min_side to min_side + span - 1)
 * and noise pixels are drawn from `seed`, then make(im) may paint over the
 * pixels and writes the labels; the PNG is written after it (testutil_data.c). */
void tu_make_dataset(const char *root, int n, int min_side, int span, uint64_t seed,
                     void (*make)(tu_image *im), void *ctx);

/* tu_make_dataset of noise images whose labels labels(f, i) writes. */
void tu_noise_dataset(const char *root, int n, int min_side, int span, uint64_t seed,
                      void (*labels)(FILE *f, int i));

/* Makes a new folder /tmp/detfeed-<name>-XXXXXX (mkdtemp) and writes its
 * path into buf: buf, or NULL with a failed check and the reason. The test
 * removes it with tu_remove_tree. */
const char *tu_temp_dir(char *buf, size_t size, const char *name);

/* "root/rel" in one of four rotating buffers (valid for the next three
 * calls; testutil_data.c). */
const char *tu_at(const char *root, const char *rel);

/* Writes `text` to `path` (a failure is a failed check). */
void tu_write_text(const char *path, const char *text);
/* Writes a black 16 x 16 RGB PNG to `path` (a failure is a failed check). */
void tu_write_png16(const char *path);

/* Removes the folder `path` and everything below it (links are removed,
 * not followed), without a shell; false (errno set) when something stays. */
bool tu_remove_tree(const char *path);

/* Makes `to` (which must not exist) a copy of the file or folder `from` and
 * everything below it, without a shell: folders and regular files only (a
 * link or other entry is an error), each copy with its original's
 * permissions plus the owner's read and write (and search for a folder), so
 * a copy of a read-only tree can be changed and removed; false (errno set)
 * when anything was not copied. */
bool tu_copy_tree(const char *from, const char *to);

/* The permissions of `path` and everything below it become
 * (mode & ~clear) | set (chmod -R; links are not followed, not changed);
 * false (errno set) when any entry could not be changed, after trying all. */
bool tu_chmod_tree(const char *path, unsigned clear, unsigned set);

/* Runs child(a, b) in a forked process as an ordinary user: where this
 * process is root (whom file permissions do not stop), the child first takes
 * user and group 65534 (nobody). True when the child returned 0. */
bool tu_run_unprivileged(int (*child)(const char *a, const char *b), const char *a,
                         const char *b);

/* Whether the dataset reports a problem in a file whose path ends with
 * `file_end`, at `line`, whose reason contains `words`; when not, says so
 * and lists the problems it has. */
bool tu_has_problem(const detfeed_dataset *ds, const char *file_end, int line,
                    const char *words);

/* Decodes every cut of data (its first 1, 1 + step, ... bytes) and
 * `mutations` copies with 3 seeded bytes changed, under the codec's
 * settings, the name of each from names[count % 2]: each gives a status or
 * an image, never a crash. counts[0] += decoded, counts[1] += refused. */
void tu_decode_damaged(detfeed_codec *c, const uint8_t *data, size_t size, size_t step,
                       int mutations, const char *const names[2], uint64_t *rng,
                       int counts[2]);

/* sha256 of a buffer as 64 hex characters. */
void tu_sha256_hex(const void *data, size_t size, char hex[65]);

/* Runs epochs 0 .. epochs - 1 of an opened loader and digests every batch
 * into ctx (images, instance count, cls, bboxes, batch_idx); checks that
 * each epoch starts and ends (DETFEED_NEXT_END). */
void tu_digest_batches(detfeed_loader *l, uint32_t epochs, detfeed_sha256 *ctx);
/* One batch into ctx as tu_digest_batches takes it: images, instance
 * count, cls, bboxes, batch_idx. */
void tu_digest_batch(detfeed_sha256 *ctx, const detfeed_batch *b);

/* tu_digest_batches of epochs 0 .. epochs - 1 alone, as 64 hex characters. */
void tu_digest_hex(detfeed_loader *l, uint32_t epochs, char hex[65]);

#endif /* DETFEED_TESTUTIL_H */
