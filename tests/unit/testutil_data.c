/*
 * testutil_data.c - test data made on the fly (with the library's PNG
 * writer; testutil.c itself needs no library, for the mutation runs), and
 * the temporary folders and trees it lives in, handled without a shell.
 */
#define _XOPEN_SOURCE 700 /* nftw */

#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void tu_make_dataset(const char *root, int n, int min_side, int span, uint64_t seed,
                     void (*make)(tu_image *im), void *ctx)
{
    char p[512];
    snprintf(p, sizeof p, "%s/images", root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/labels", root);
    mkdir(p, 0755);
    detfeed_codec *codec;
    detfeed_codec_create(&codec, 0);
    for (int i = 0; i < n; i++) {
        tu_image im = {.index = i, .rng = &seed, .ctx = ctx};
        im.w = min_side + (int)(tu_rand(&seed) % (uint64_t)span);
        im.h = min_side + (int)(tu_rand(&seed) % (uint64_t)span);
        im.px = malloc((size_t)im.w * im.h * 3);
        for (int k = 0; k < im.w * im.h * 3; k++)
            im.px[k] = (uint8_t)(tu_rand(&seed) >> 56);
        snprintf(p, sizeof p, "%s/labels/%02d.txt", root, i);
        im.labels = fopen(p, "w");
        if (CHECK(im.labels != NULL)) {
            make(&im);
            fclose(im.labels);
        }
        snprintf(p, sizeof p, "%s/images/%02d.png", root, i);
        CHECK_INT(
            detfeed_codec_write_png(codec, p, im.px, (size_t)im.w * 3, im.w, im.h), 0);
        free(im.px);
    }
    detfeed_codec_destroy(codec);
}

typedef struct noise_labels {
    void (*labels)(FILE *f, int i);
} noise_labels;

static void write_noise_labels(tu_image *im)
{
    const noise_labels *nl = im->ctx;
    nl->labels(im->labels, im->index);
}

void tu_noise_dataset(const char *root, int n, int min_side, int span, uint64_t seed,
                      void (*labels)(FILE *f, int i))
{
    noise_labels nl = {labels};
    tu_make_dataset(root, n, min_side, span, seed, write_noise_labels, &nl);
}

const char *tu_temp_dir(char *buf, size_t size, const char *name)
{
    int len = snprintf(buf, size, "/tmp/detfeed-%s-XXXXXX", name);
    if (!CHECK(len > 0 && (size_t)len < size))
        return NULL;
    if (!CHECK(mkdtemp(buf) != NULL)) {
        fprintf(stderr, "  cannot make %s: %s\n", buf, strerror(errno));
        return NULL;
    }
    return buf;
}

const char *tu_at(const char *root, const char *rel)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", root, rel);
    return buf[k];
}

void tu_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (CHECK(f != NULL)) {
        fputs(text, f);
        fclose(f);
    }
}

void tu_write_png16(const char *path)
{
    detfeed_codec *c;
    if (!CHECK_INT(detfeed_codec_create(&c, 0), 0))
        return;
    uint8_t px[16 * 16 * 3] = {0};
    CHECK_INT(detfeed_codec_write_png(c, path, px, 16 * 3, 16, 16), 0);
    detfeed_codec_destroy(c);
}

void tu_digest_batch(detfeed_sha256 *ctx, const detfeed_batch *b)
{
    size_t bytes;
    const void *img = detfeed_batch_images(b, &bytes);
    int n = detfeed_batch_instances(b);
    detfeed_sha256_update(ctx, img, bytes);
    detfeed_sha256_update(ctx, &n, sizeof n);
    if (n) {
        detfeed_sha256_update(ctx, detfeed_batch_cls(b), (size_t)n * 4);
        detfeed_sha256_update(ctx, detfeed_batch_bboxes(b), (size_t)n * 16);
        detfeed_sha256_update(ctx, detfeed_batch_batch_idx(b), (size_t)n * 4);
    }
}

void tu_digest_batches(detfeed_loader *l, uint32_t epochs, detfeed_sha256 *ctx)
{
    for (uint32_t e = 0; e < epochs; e++) {
        CHECK_INT(detfeed_loader_start(l, e), 0);
        const detfeed_batch *b;
        int rc;
        while ((rc = detfeed_loader_next(l, &b)) == DETFEED_OK) {
            tu_digest_batch(ctx, b);
            detfeed_loader_release(l, b);
        }
        CHECK_INT(rc, DETFEED_NEXT_END);
    }
}

void tu_digest_hex(detfeed_loader *l, uint32_t epochs, char hex[65])
{
    detfeed_sha256 ctx;
    detfeed_sha256_init(&ctx);
    tu_digest_batches(l, epochs, &ctx);
    detfeed_sha256_hex(&ctx, hex);
}

bool tu_run_unprivileged(int (*child)(const char *a, const char *b), const char *a,
                         const char *b)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(3);
        _exit(child(a, b) == 0 ? 0 : 1);
    }
    int status;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

static bool problem_matches(const char *file, int at, const char *reason,
                            const char *file_end, int line, const char *words)
{
    size_t nf = strlen(file), ne = strlen(file_end);
    return nf >= ne && strcmp(file + nf - ne, file_end) == 0 && at == line &&
           strstr(reason, words) != NULL;
}

bool tu_has_problem(const detfeed_dataset *ds, const char *file_end, int line,
                    const char *words)
{
    size_t n = detfeed_dataset_problem_count(ds);
    for (size_t i = 0; i < n; i++) {
        const char *f, *r;
        int l;
        detfeed_dataset_problem(ds, i, &f, &l, &r);
        if (problem_matches(f, l, r, file_end, line, words))
            return true;
    }
    fprintf(stderr, "  no problem %s:%d \"%s\"; the problems:\n", file_end, line,
            words);
    for (size_t i = 0; i < n; i++) {
        const char *f, *r;
        int l;
        detfeed_dataset_problem(ds, i, &f, &l, &r);
        fprintf(stderr, "    %s:%d: %s\n", f, l, r);
    }
    return false;
}

static int remove_entry(const char *path, const struct stat *st, int type,
                        struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

bool tu_remove_tree(const char *path)
{
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0;
}

/* Calls visit(path) and, below a folder, visit on each entry, parents before
 * their entries (links are not followed); goes on past a failure and is
 * false when anything failed. */
static bool walk(const char *path,
                 bool (*visit)(const char *path, const struct stat *st, void *ctx),
                 void *ctx)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !visit(path, &st, ctx))
        return false;
    if (!S_ISDIR(st.st_mode))
        return true;
    DIR *dir = opendir(path);
    if (dir == NULL)
        return false;
    bool ok = true;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char sub[PATH_MAX];
        if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub) {
            errno = ENAMETOOLONG;
            ok = false;
            continue;
        }
        ok &= walk(sub, visit, ctx);
    }
    closedir(dir);
    return ok;
}

typedef struct copy_job {
    size_t from_len;
    const char *to;
} copy_job;

/* Copies the regular file `from` to the new file `to`. */
static bool copy_file(const char *from, const char *to, mode_t mode)
{
    int in = open(from, O_RDONLY), out = -1;
    bool ok = in >= 0 && (out = open(to, O_WRONLY | O_CREAT | O_EXCL, mode)) >= 0;
    char buf[1 << 14];
    ssize_t got = 0;
    while (ok && (got = read(in, buf, sizeof buf)) > 0)
        ok = write(out, buf, (size_t)got) == got;
    ok = ok && got == 0;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        ok = false;
    return ok;
}

static bool copy_entry(const char *path, const struct stat *st, void *ctx)
{
    const copy_job *job = ctx;
    char to[PATH_MAX];
    if (snprintf(to, sizeof to, "%s%s", job->to, path + job->from_len) >=
        (int)sizeof to) {
        errno = ENAMETOOLONG;
        return false;
    }
    mode_t mode = (st->st_mode & 07777) | S_IRUSR | S_IWUSR;
    if (S_ISDIR(st->st_mode))
        return mkdir(to, mode | S_IXUSR) == 0;
    if (S_ISREG(st->st_mode))
        return copy_file(path, to, mode);
    errno = EINVAL;
    return false;
}

bool tu_copy_tree(const char *from, const char *to)
{
    copy_job job = {strlen(from), to};
    return walk(from, copy_entry, &job);
}

typedef struct chmod_job {
    mode_t clear, set;
} chmod_job;

static bool chmod_entry(const char *path, const struct stat *st, void *ctx)
{
    const chmod_job *job = ctx;
    if (S_ISLNK(st->st_mode))
        return true;
    return chmod(path, ((st->st_mode & 07777) & ~job->clear) | job->set) == 0;
}

bool tu_chmod_tree(const char *path, unsigned clear, unsigned set)
{
    chmod_job job = {(mode_t)clear, (mode_t)set};
    return walk(path, chmod_entry, &job);
}

/* One decode of damaged input: counted, and an image or nothing. */
static void decode_one(detfeed_codec *c, const uint8_t *p, size_t n, const char *name,
                       int counts[2])
{
    uint8_t *px = NULL;
    int w, h;
    int rc = detfeed_codec_decode(c, p, n, name, &px, &w, &h);
    counts[rc == 0 ? 0 : 1]++;
    CHECK(rc == 0 ? (px != NULL && w > 0 && h > 0) : px == NULL);
    detfeed_free(px);
}

void tu_decode_damaged(detfeed_codec *c, const uint8_t *data, size_t size, size_t step,
                       int mutations, const char *const names[2], uint64_t *rng,
                       int counts[2])
{
    for (size_t n = 1; n < size; n += step)
        decode_one(c, data, n, names[n % 2], counts);
    uint8_t *copy = malloc(size ? size : 1);
    if (!CHECK(copy != NULL))
        return;
    for (int m = 0; m < mutations; m++) {
        memcpy(copy, data, size);
        for (int j = 0; j < 3 && size; j++)
            copy[tu_rand(rng) % size] = (uint8_t)tu_rand(rng);
        decode_one(c, copy, size, names[m % 2], counts);
    }
    free(copy);
}
