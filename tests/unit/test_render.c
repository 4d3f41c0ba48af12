/*
 * test_render.c - a sample's image described instead of made
 * (detfeed__pixels.render, aug/render.h) means the image the CPU route
 * stages: for each sample, the image made with colour deferred (what the
 * device colour route stages) equals detfeed__render_reference's build of
 * the description byte for byte, and the description mode's labels, label
 * arrays and overlap masks equal the normal mode's.
 * - coco128 (DETFEED_TEST_DATA, else ../shared/data beside the source
 *   tree; skipped when missing), 3 epochs with
 *   close_mosaic 1, the conformance suite's hyperparameter sets (mosaic,
 *   mixup, geometry with perspective, affine, no mosaic, mixup without
 *   mosaic), Ultralytics 8.3 (NumPy 1) and 8.4 (NumPy 2), OpenCV 4.x, 5.0
 *   and 5.1 (the CPU paths in turn), and validation's letterbox at the rect
 *   shapes: no sample falls back; coco8-seg (masks) and coco8-pose
 *   (keypoints, flip_idx) alike;
 * - generated noise datasets (boxes; polygons) of odd sizes at a small
 *   imgsz, all cached; and a cache that holds half the images: the samples
 *   that read an uncached image fall back, made as without the mode;
 *   letterboxes that resize (8.3 without mosaic, validation, at sizes that
 *   do not fit) fall back too;
 * - in the mode nothing is written to the image's place, and
 *   detfeed__render_reference refuses what is not a description.
 * Prints samples, bytes compared and fallbacks per dataset.
 */
#include "aug/augment.h"
#include "aug/render.h"
#include "cuda/recipe_px.h"
#include "data/dataset_access.h"
#include "feed/route.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EPOCHS = 3, CLOSE_MOSAIC = 1, SENTINEL = 0xA5 };

/* ---- what is compared, and the counts ---- */

typedef struct tally {
    long samples, described, bytes, staged_bytes, fallback[3];
} tally;

/* One mode's places: the image, the label arrays, one mask buffer. */
typedef struct places {
    uint8_t *img;
    size_t img_bytes;
    detfeed__label_arrays lab;
    detfeed__buf mask;
} places;

static void places_free(places *p)
{
    free(p->img);
    free(p->lab.cls);
    free(p->lab.box);
    free(p->lab.kpt);
    free(p->mask.p);
    memset(p, 0, sizeof *p);
}

static bool places_image(places *p, size_t bytes)
{
    if (bytes > p->img_bytes) {
        uint8_t *g = realloc(p->img, bytes);
        if (!CHECK(g != NULL))
            return false;
        p->img = g;
        p->img_bytes = bytes;
    }
    return true;
}

static detfeed__dest dest_of(places *p, detfeed__render *render)
{
    p->lab.grow = p->mask.grow = true;
    return (detfeed__dest){
        .image = {.px = p->img, .defer_colour = true, .render = render},
        .labels = &p->lab,
        .mask_u8 = &p->mask,
        .mask_i32 = &p->mask};
}

/* The reference's images: the cache's, by dataset index. */
typedef struct lookup {
    const detfeed_cache *cache;
    detfeed_codec *codec;
} lookup;

static int get_image(void *ctx, uint64_t index, detfeed__render_src *src)
{
    const lookup *lk = ctx;
    uint8_t *owned = NULL;
    int rc = detfeed_cache_get(lk->cache, (size_t)index, lk->codec, &src->px, &src->w,
                               &src->h, NULL, NULL, &owned);
    if (owned) { /* a description names cached images only */
        detfeed_free(owned);
        return DETFEED_EBADSTATE;
    }
    src->stride = (size_t)src->w * 3;
    return rc;
}

typedef struct run {
    const detfeed__augmenter *a;
    detfeed__scratch s;
    places made, desc;
    uint8_t *ref;
    size_t ref_bytes;
    lookup lk;
    tally *t;
    int failures; /* samples that differed (the first few are printed) */
} run;

/* Whether both modes gave the same labels, label arrays and masks. */
static bool same_labels(const run *R, const detfeed__sample *x,
                        const detfeed__sample *y)
{
    int nkpt;
    detfeed_dataset_kpt_shape(R->a->ds, &nkpt, NULL);
    size_t n = (size_t)x->n;
    bool ok = x->n == y->n && x->mask_type == y->mask_type &&
              x->mask_bytes == y->mask_bytes && x->ori_w == y->ori_w &&
              x->ori_h == y->ori_h && x->res_w == y->res_w && x->res_h == y->res_h;
    ok = ok && (n == 0 || (memcmp(R->made.lab.cls, R->desc.lab.cls, n * 4) == 0 &&
                           memcmp(R->made.lab.box, R->desc.lab.box, n * 16) == 0));
    ok = ok && (n == 0 || nkpt == 0 ||
                memcmp(R->made.lab.kpt, R->desc.lab.kpt, n * (size_t)nkpt * 12) == 0);
    return ok && (x->mask_bytes == 0 ||
                  memcmp(R->made.mask.p, R->desc.mask.p, x->mask_bytes) == 0);
}

static bool untouched(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != SENTINEL)
            return false;
    return true;
}

/* The description's image built by the reference, compared with the made
 * one. */
static bool same_image(run *R, const detfeed__render *d, size_t bytes)
{
    if (bytes > R->ref_bytes) {
        uint8_t *g = realloc(R->ref, bytes);
        if (!CHECK(g != NULL))
            return false;
        R->ref = g;
        R->ref_bytes = bytes;
    }
    int rc = detfeed__render_reference(d, &(detfeed__render_images){get_image, &R->lk},
                                       &R->a->stack, R->ref);
    return CHECK_INT(rc, 0) && memcmp(R->ref, R->made.img, bytes) == 0;
}

/* The description as the device recipe route stages it (feed/route.c),
 * built pixel by pixel with the kernel's own functions (cuda/recipe_px.h)
 * over the RAM cache's arena, compared with the made image. */
static bool same_staged(run *R, const detfeed__render *d, size_t bytes)
{
    uint64_t arena_bytes = 0;
    const uint8_t *arena = detfeed__cache_arena(R->a->cache, &arena_bytes);
    detfeed__cuda_recipe c;
    if (!CHECK(arena != NULL) ||
        !CHECK_INT(detfeed__recipe_stage(d, R->a->cache, &R->a->stack.cv, &c), 0) ||
        !CHECK(c.flags & DETFEED__CUDA_RECIPE_MADE))
        return false;
    detfeed__canvas canvas[2];
    detfeed__recipe_canvases(&c, arena, canvas);
    const uint8_t *made = R->made.img;
    for (int y = 0; y < d->out_h; y++)
        for (int x = 0; x < d->out_w; x++) {
            uint8_t px[3];
            detfeed__recipe_px(&c, canvas, d->out_w, d->out_h, x, y, px);
            if (memcmp(px, made + ((size_t)y * d->out_w + x) * 3, 3) != 0)
                return false;
        }
    R->t->staged_bytes += (long)bytes;
    return true;
}

/* One sample made, then described; everything compared. */
static void check_sample(run *R, const detfeed__sample_ask *ask)
{
    size_t bytes = (size_t)ask->out_w * (size_t)ask->out_h * 3;
    if (!places_image(&R->made, bytes) || !places_image(&R->desc, bytes))
        return;
    detfeed__render d;
    memset(R->desc.img, SENTINEL, bytes);
    detfeed__dest dm = dest_of(&R->made, NULL), dd = dest_of(&R->desc, &d);
    detfeed__sample x, y;
    int rc_m = detfeed__augment(R->a, &R->s, ask, &dm, NULL, &x);
    int rc_d = detfeed__augment(R->a, &R->s, ask, &dd, NULL, &y);
    if (!CHECK_INT(rc_m, 0) || !CHECK_INT(rc_d, 0))
        return;
    R->t->samples++;
    bool labels = same_labels(R, &x, &y), image;
    if (d.status == DETFEED__RENDER_DESCRIBED) {
        R->t->described++;
        image = untouched(R->desc.img, bytes) && y.img == NULL &&
                same_image(R, &d, bytes) && same_staged(R, &d, bytes);
    } else {
        if (d.status >= 0 && d.status < 3)
            R->t->fallback[d.status]++;
        image = y.img != NULL && memcmp(R->desc.img, R->made.img, bytes) == 0;
    }
    R->t->bytes += (long)bytes;
    if (!CHECK(labels && image) && R->failures++ < 5)
        fprintf(stderr,
                "  epoch %u index %llu %dx%d: labels %s, image %s (%s; mosaic %d "
                "mixup %d)\n",
                ask->epoch, (unsigned long long)ask->index, ask->out_w, ask->out_h,
                labels ? "same" : "differ", image ? "same" : "differ",
                detfeed__render_status_name(d.status), x.recipe.mosaic, x.recipe.mixup);
}

static void run_init(run *R, const detfeed__augmenter *a, tally *t)
{
    memset(R, 0, sizeof *R);
    R->a = a, R->t = t;
    CHECK_INT(detfeed__scratch_init(&R->s), 0);
    R->lk.cache = a->cache;
    CHECK_INT(detfeed_codec_create(&R->lk.codec, 0), 0);
}

static void run_free(run *R)
{
    detfeed__scratch_free(&R->s);
    places_free(&R->made);
    places_free(&R->desc);
    free(R->ref);
    detfeed_codec_destroy(R->lk.codec);
}

/* ---- the settings compared ---- */

typedef struct hyp_set {
    const char *name;
    double mosaic, mixup, degrees, shear, perspective, translate, scale, flipud;
    int first; /* samples per epoch (0: every image) */
} hyp_set;

/* The conformance suite's sets (tests/conformance/run_conformance.py),
 * with mosaic off alone and with mixup. */
static const hyp_set SETS[] = {
    {"default", 1.0, 0, 0, 0, 0, 0.1, 0.5, 0, 32},
    {"mixup", 1.0, 0.5, 0, 0, 0, 0.1, 0.5, 0, 16},
    {"geometry", 1.0, 0, 10, 5, 0.0005, 0.2, 0.6, 0.5, 16},
    {"affine", 1.0, 0, 10, 5, 0, 0.2, 0.6, 0.5, 16},
    {"no_mosaic", 0.0, 0, 0, 0, 0, 0.1, 0.5, 0, 16},
    {"mixup_no_mosaic", 0.0, 0.5, 10, 5, 0.0005, 0.2, 0.6, 0.5, 16},
};
enum { NSETS = sizeof SETS / sizeof SETS[0] };

static detfeed__hyp hyp_of(const hyp_set *h, int imgsz)
{
    detfeed__hyp y = detfeed__hyp_defaults();
    y.mosaic = h->mosaic, y.mixup = h->mixup, y.degrees = h->degrees;
    y.shear = h->shear, y.perspective = h->perspective, y.translate = h->translate;
    y.scale = h->scale, y.flipud = h->flipud;
    y.imgsz = imgsz;
    return y;
}

/* Ultralytics 8.3 on NumPy 1 and 8.4 on NumPy 2; OpenCV 4.x, 5.0, 5.1. */
static const int ULTRALYTICS[2][2] = {{803, 1}, {804, 2}};
static const detfeed_cv_version CVS[] = {DETFEED_CV_4, DETFEED_CV_5_0, DETFEED_CV_5_1};
static const detfeed_cv_cpu CPUS[] = {DETFEED_CV_CPU_SSE, DETFEED_CV_CPU_AVX2,
                                      DETFEED_CV_CPU_AVX512};

static detfeed__stack stack_of(int u, int v, int turn)
{
    return (detfeed__stack){
        .ultralytics = ULTRALYTICS[u][0],
        .numpy = ULTRALYTICS[u][1],
        .cv = {CVS[v], CPUS[turn % 3], CVS[v] == DETFEED_CV_5_1 ? 1 : 0}};
}

/* A dataset opened through a loader (its index and cache). */
typedef struct source {
    detfeed_loader *l;
    const detfeed_dataset *ds;
    const detfeed_cache *cache;
    int imgsz;
} source;

static bool source_open(source *src, const char *path, int imgsz, int64_t cache_bytes,
                        int augment)
{
    memset(src, 0, sizeof *src);
    src->imgsz = imgsz;
    detfeed_loader_create(&src->l, 0);
    detfeed_loader_set_int(src->l, DETFEED_LOADER_IMGSZ, imgsz);
    detfeed_loader_set_int(src->l, DETFEED_LOADER_AUGMENT, augment);
    detfeed_loader_set_int(src->l, DETFEED_LOADER_WORKERS, 2);
    detfeed_loader_set_int(src->l, DETFEED_LOADER_CACHE_BYTES, cache_bytes);
    if (!CHECK_INT(detfeed_loader_open(src->l, path), 0)) {
        fprintf(stderr, "  %s: %s\n", path, detfeed_loader_last_error(src->l));
        return false;
    }
    src->ds = detfeed_loader_dataset(src->l);
    src->cache = detfeed_loader_cache(src->l);
    return true;
}

/* Training samples of hyperparameter set h under every stack: EPOCHS
 * epochs, the last CLOSE_MOSAIC without mosaic, at out_w x out_h (0: imgsz
 * square). In the Release build every OpenCV and the first h->first
 * samples an epoch (32 of the default set, 16 of the others; each mosaic
 * reads three more images, so most of coco128 is drawn); under a
 * sanitizer (TU_SANITIZED) 8 samples an epoch and one OpenCV per
 * Ultralytics version. */
static void train_set(const source *src, const hyp_set *h, int si, int out_w, int out_h,
                      tally *t)
{
    int nkpt;
    detfeed_dataset_kpt_shape(src->ds, &nkpt, NULL);
    detfeed__hyp hyp = hyp_of(h, src->imgsz);
    if (nkpt > 0 && detfeed_dataset_flip_idx(src->ds) == NULL)
        hyp.fliplr = hyp.flipud = 0; /* as the loader's open */
    uint64_t n = detfeed_dataset_size(src->ds);
    uint64_t first = h->first && (uint64_t)h->first < n ? (uint64_t)h->first : n;
    if (TU_SANITIZED && first > 8)
        first = 8;
    for (int u = 0; u < 2; u++)
        for (int v = TU_SANITIZED ? (si + u) % 3 : 0; v < 3;
             v += TU_SANITIZED ? 3 : 1) {
            detfeed__augmenter a = {.ds = src->ds,
                                    .cache = src->cache,
                                    .hyp = hyp,
                                    .seed = 7 + (uint64_t)si,
                                    .train = true,
                                    .stack = stack_of(u, v, si + u)};
            run R;
            run_init(&R, &a, t);
            for (uint32_t e = 0; e < EPOCHS; e++)
                for (uint64_t i = 0; i < first; i++) {
                    detfeed__sample_ask ask = {.epoch = e,
                                               .index = i,
                                               .mosaic_on = e < EPOCHS - CLOSE_MOSAIC,
                                               .out_w = out_w ? out_w : src->imgsz,
                                               .out_h = out_h ? out_h : src->imgsz};
                    check_sample(&R, &ask);
                }
            if (R.failures)
                fprintf(
                    stderr, "  set %s, Ultralytics %d, OpenCV %d: %d samples differ\n",
                    h->name, a.stack.ultralytics, (int)a.stack.cv.version, R.failures);
            run_free(&R);
        }
}

/* Validation samples under both Ultralytics, at the sizes `sizes` gives
 * (the rect shapes of its loader; NULL: fixed w x h). */
static void val_set(const source *src, const detfeed_loader *sizes, int w, int h,
                    tally *t)
{
    for (int u = 0; u < 2; u++) {
        detfeed__augmenter a = {.ds = src->ds,
                                .cache = src->cache,
                                .hyp = hyp_of(&SETS[0], src->imgsz),
                                .train = false,
                                .stack = stack_of(u, 0, 0)};
        run R;
        run_init(&R, &a, t);
        uint64_t n = detfeed_dataset_size(src->ds);
        for (uint64_t i = 0; i < n; i++) {
            detfeed__sample_ask ask = {.index = i, .out_w = w, .out_h = h};
            if (sizes)
                detfeed_loader_sample_size(sizes, i, &ask.out_w, &ask.out_h);
            check_sample(&R, &ask);
        }
        run_free(&R);
    }
}

static void print_tally(const char *what, const tally *t)
{
    printf("%-34s %6ld samples, %11ld bytes compared (%ld as staged for the kernel), "
           "%5ld described, fallback: %ld uncached, %ld resized\n",
           what, t->samples, t->bytes, t->staged_bytes, t->described, t->fallback[1],
           t->fallback[2]);
}

/* ---- real data ---- */

/* DETFEED_TEST_DATA, else ../shared/data beside the source tree (this
 * file is tests/unit/test_render.c of it); NULL when coco128 is not there. */
static const char *data_root(void)
{
    static char dir[1024];
    const char *env = getenv("DETFEED_TEST_DATA");
    if (env)
        return env;
    const char *f = __FILE__, *end = strstr(f, "tests/unit/test_render.c");
    if (end == NULL || (size_t)(end - f) + 32 >= sizeof dir)
        return NULL;
    snprintf(dir, sizeof dir, "%.*s../shared/data", (int)(end - f), f);
    return access(tu_at(dir, "coco128/coco128.yaml"), R_OK) == 0 ? dir : NULL;
}

static void test_coco128(const char *data)
{
    source src, val;
    if (!source_open(&src, tu_at(data, "coco128/coco128.yaml"), 640, 1LL << 40, 1) ||
        !source_open(&val, tu_at(data, "coco128/coco128.yaml"), 640, 0, 0)) {
        detfeed_loader_destroy(src.l);
        return;
    }
    CHECK_INT(detfeed_cache_stat_get(src.cache, DETFEED_CACHE_IMAGES), 128);
    for (int si = 0; si < NSETS; si++) {
        tally t = {0};
        train_set(&src, &SETS[si], si, 0, 0, &t);
        char what[64];
        snprintf(what, sizeof what, "coco128 %s", SETS[si].name);
        print_tally(what, &t);
        CHECK(t.samples > 0 && t.described == t.samples); /* no fallback */
    }
    tally t = {0};
    val_set(&src, val.l, 0, 0, &t);
    print_tally("coco128 validation (rect shapes)", &t);
    CHECK(t.samples == 256 && t.described == t.samples);
    detfeed_loader_destroy(val.l);
    detfeed_loader_destroy(src.l);
}

/* coco8-seg (overlap masks) and coco8-pose (keypoints, flip_idx): every
 * set, no fallback. */
static void test_coco8(const char *data, const char *yaml)
{
    source src;
    if (!source_open(&src, tu_at(data, yaml), 320, 1LL << 40, 1)) {
        detfeed_loader_destroy(src.l);
        return;
    }
    tally t = {0};
    for (int si = 0; si < NSETS; si++)
        train_set(&src, &SETS[si], si, 0, 0, &t);
    print_tally(yaml, &t);
    CHECK(t.samples > 0 && t.described == t.samples);
    detfeed_loader_destroy(src.l);
}

/* ---- generated data ---- */

enum { NIMG = 14, SIDE = 128 };

static void boxes(FILE *f, int i)
{
    uint64_t rng = 500 + (uint64_t)i;
    for (int k = 0; k < 1 + i % 4; k++)
        fprintf(f, "%d %.6f %.6f %.6f %.6f\n", k % 3, tu_uniform(&rng, 0.2, 0.8),
                tu_uniform(&rng, 0.2, 0.8), tu_uniform(&rng, 0.05, 0.4),
                tu_uniform(&rng, 0.05, 0.4));
}

static void polygons(FILE *f, int i)
{
    uint64_t rng = 900 + (uint64_t)i;
    for (int k = 0; k < 1 + i % 3; k++) {
        double cx = tu_uniform(&rng, 0.25, 0.75), cy = tu_uniform(&rng, 0.25, 0.75);
        int m = 4 + (int)(tu_rand(&rng) % 5);
        fprintf(f, "%d", k % 2);
        for (int p = 0; p < m; p++) {
            double ang = 6.283185307179586 * p / m, r = tu_uniform(&rng, 0.05, 0.2);
            fprintf(f, " %.6f %.6f", cx + r * cos(ang), cy + r * sin(ang));
        }
        fprintf(f, "\n");
    }
}

/* Every set on a generated dataset, all cached: no fallback; then at a
 * size that makes 8.3's letterbox resize (without mosaic only). */
static void test_noise(const char *dir)
{
    source src;
    if (!source_open(&src, dir, SIDE, 1LL << 40, 1)) {
        detfeed_loader_destroy(src.l);
        return;
    }
    tally t = {0};
    for (int si = 0; si < NSETS; si++)
        train_set(&src, &SETS[si], si, 0, 0, &t);
    val_set(&src, NULL, SIDE, SIDE, &t);
    print_tally(dir, &t);
    CHECK(t.samples > 0 && t.described == t.samples);
    /* A square smaller than the load size: the letterboxes of 8.3 (training
     * without mosaic) and of validation resize; Mosaic and 8.4 do not. */
    tally r = {0};
    train_set(&src, &SETS[4], 4, SIDE - 32, SIDE - 32, &r);
    val_set(&src, NULL, SIDE - 32, SIDE - 48, &r);
    print_tally("  at a smaller size", &r);
    CHECK(r.fallback[DETFEED__RENDER_RESIZES] > 0 && r.described > 0);
    CHECK_INT(r.fallback[DETFEED__RENDER_UNCACHED], 0);
    detfeed_loader_destroy(src.l);
}

/* A cache that holds half the images: samples that read the others fall
 * back (made as without the mode), the rest are described. */
static void test_partly_cached(const char *dir)
{
    detfeed_dataset *probe = NULL;
    source src;
    /* the budget of the first half: each image's load size, first fit */
    uint64_t budget = 0;
    detfeed_dataset_create(&probe, 0);
    if (CHECK_INT(detfeed_dataset_open(probe, dir), 0))
        for (size_t i = 0; i < NIMG / 2; i++) {
            int w, h, lw, lh;
            detfeed_dataset_image_size(probe, i, &w, &h);
            detfeed_load_size(w, h, SIDE, &lw, &lh);
            budget += (uint64_t)lw * lh * 3;
        }
    detfeed_dataset_destroy(probe);
    if (!source_open(&src, dir, SIDE, (int64_t)budget, 1)) {
        detfeed_loader_destroy(src.l);
        return;
    }
    int64_t held = detfeed_cache_stat_get(src.cache, DETFEED_CACHE_IMAGES);
    CHECK(held > 0 && held < NIMG);
    tally t = {0};
    train_set(&src, &SETS[0], 0, 0, 0, &t);
    train_set(&src, &SETS[4], 4, 0, 0, &t);
    print_tally("  half cached", &t);
    CHECK(t.fallback[DETFEED__RENDER_UNCACHED] > 0 && t.described > 0);
    detfeed_loader_destroy(src.l);
}

/* ---- the reference's refusals ---- */

static int no_image(void *ctx, uint64_t index, detfeed__render_src *src)
{
    (void)ctx, (void)index;
    static uint8_t px[4 * 4 * 3];
    *src = (detfeed__render_src){px, 4, 4, 12};
    return DETFEED_OK;
}

static void test_refusals(void)
{
    detfeed__render d = {.status = DETFEED__RENDER_DESCRIBED, .out_w = 8, .out_h = 8};
    d.image[0] = (detfeed__render_image){.M = {1, 0, 0, 0, 1, 0, 0, 0, 1},
                                         .warp = DETFEED__RENDER_COPY,
                                         .canvas_w = 8,
                                         .canvas_h = 8,
                                         .ntiles = 1,
                                         .tiles = {{0, 4, 4, 2, 2, 6, 6, 2, 2}}};
    detfeed__stack st = stack_of(1, 0, 0);
    detfeed__render_images im = {no_image, NULL};
    uint8_t out[8 * 8 * 3];
    CHECK_INT(detfeed__render_reference(&d, &im, &st, out), 0);
    CHECK(out[0] == DETFEED__RENDER_FILL && out[(2 * 8 + 2) * 3] == 0);
    detfeed__render bad = d;
    bad.status = DETFEED__RENDER_UNCACHED;
    CHECK_INT(detfeed__render_reference(&bad, &im, &st, out), DETFEED_EINVAL);
    bad = d, bad.image[0].tiles[0].x1 = 7; /* past the tile's image */
    CHECK_INT(detfeed__render_reference(&bad, &im, &st, out), DETFEED_EINVAL);
    bad = d, bad.image[0].tiles[0].w = 5; /* not the image's size */
    CHECK_INT(detfeed__render_reference(&bad, &im, &st, out), DETFEED_EINVAL);
    bad = d, bad.image[0].canvas_w = 9; /* a copy of another size */
    CHECK_INT(detfeed__render_reference(&bad, &im, &st, out), DETFEED_EINVAL);
    CHECK_STR(detfeed__render_status_name(DETFEED__RENDER_RESIZES),
              "a letterbox resizes the image");
}

int main(void)
{
    test_refusals();
    char root[64], box_dir[128], poly_dir[128];
    if (tu_temp_dir(root, sizeof root, "render")) {
        snprintf(box_dir, sizeof box_dir, "%s/boxes", root);
        snprintf(poly_dir, sizeof poly_dir, "%s/polygons", root);
        mkdir(box_dir, 0755);
        mkdir(poly_dir, 0755);
        tu_noise_dataset(box_dir, NIMG, 20, 260, 41, boxes);
        tu_noise_dataset(poly_dir, NIMG, 30, 200, 43, polygons);
        test_noise(box_dir);
        test_noise(poly_dir);
        test_partly_cached(box_dir);
        CHECK(tu_remove_tree(root));
    }
    const char *data = data_root();
    if (data == NULL) {
        tu_skip("no DETFEED_TEST_DATA (nor ../shared/data beside the sources): "
                "coco128, coco8-seg, coco8-pose");
        return tu_finish("test_render");
    }
    test_coco8(data, "coco8-seg/coco8-seg.yaml");
    test_coco8(data, "coco8-pose/coco8-pose.yaml");
    test_coco128(data);
    return tu_finish("test_render");
}
