/*
 * loader_internal.h - the loader handle's layout, shared by the files of the
 * handle itself: loader.c (settings, open, the batch calls), sample.c
 * (single samples), loader_set.c (settings by name) and verify.c (the check
 * at open). What
 * makes batches sees only the plan, the augmenter and the route (epoch.h).
 */
#ifndef DETFEED_LOADER_INTERNAL_H
#define DETFEED_LOADER_INTERNAL_H

#include "aug/augment.h"
#include "core/internal.h"
#include "core/progress.h"
#include "epoch.h"

typedef struct detfeed__vrec detfeed__vrec;

/* The verify_record setting's kinds (verify.c). */
enum { DETFEED__RECORD_AUTO = 0, DETFEED__RECORD_NONE = 1, DETFEED__RECORD_PATH = 2 };

struct detfeed_loader {
    detfeed__msg msg;
    /* settings */
    int imgsz, epochs, close_mosaic, workers, batch;
    uint64_t seed;
    int64_t cache_bytes;    /* or DETFEED_CACHE_BYTES_RAM */
    uint64_t mem_available; /* cache_bytes "ram": MemAvailable when opened */
    int cache_mode;         /* detfeed_cache_mode */
    char *cache_path;       /* the disk cache's file, or NULL: the default */
    char *datasets_dir;     /* Ultralytics' datasets_dir, or NULL: its settings' */
    int verify_mode;        /* verify_record: DETFEED__RECORD_* */
    char *verify_path;      /* verify_record's file (DETFEED__RECORD_PATH) */
    /* Ultralytics' dataset arguments, handed to the dataset */
    int64_t fraction_count; /* > 0: a count; 0: fraction_ratio applies */
    double fraction_ratio;
    int nc;       /* DETFEED_DATASET_NC: classes where the source gives none */
    int *classes; /* NULL: all */
    size_t nclasses;
    int single_cls;
    int partner_window; /* 0: uniform partners; W: from a window (recipe.h) */
    int max_labels;     /* DETFEED_DATASET_MAX_LABELS, _MAX_LABEL_LINE */
    int max_label_line;
    /* image limits handed to the dataset, by detfeed_codec_limit (0: its
     * default) */
    uint64_t limits[DETFEED_LIMIT_MAX_IMAGE_BYTES + 1];
    bool augment;
    bool rect_train;  /* rect (training): rect shapes, their order */
    bool opened;      /* detfeed_loader_open was called */
    bool open_failed; /* and failed: only destroy is left (open_msg says why) */
    detfeed__msg open_msg;
    bool samples_made; /* detfeed_loader_sample has run (rect order fixed) */
    char split[8];
    detfeed_policy policy;
    detfeed__hyp hyp;
    /* the reference stack: Ultralytics as 803/804, OpenCV as detfeed_cv's
     * fields (kept as int like every integer setting) */
    int ultralytics, numpy, numpy_sort, opencv, opencv_cpu, opencv_ipp;
    /* state */
    detfeed__progress progress; /* the open's, for detfeed_loader_progress */
    detfeed_dataset *ds;
    detfeed_cache *cache;
    detfeed_disk_cache *disk; /* cache "disk", or NULL */
    /* the verification record while opening, and what it came to */
    detfeed__vrec *vrec;
    int64_t verify_stats[DETFEED_VERIFY_STAT_FAILED + 1];
    char *verify_used; /* the record's file, or NULL */
    char verify_note[DETFEED__MSG_SIZE];
    detfeed__augmenter aug;
    /* the single-sample path's buffers and stage times (sample.c) */
    detfeed__scratch scratch;
    detfeed__clock clock;
    /* validation (rect mode): each image's batch shape, height and width */
    int (*rect)[2];
    uint64_t *rect_order; /* validation: dataset indices by aspect ratio */
    /* batches */
    int prefetch, rank, world_size;
    bool drop_last;
    detfeed_dtype dtype;
    detfeed_scale scale;
    int output, colour, cuda_device; /* detfeed_output, detfeed_route asked for */
    int recipe_cache;                /* detfeed_recipe_cache */
    bool pin_memory;                 /* page-lock the slots where a device is */
    void *cuda_stream;               /* the consumer's cudaStream_t */
    /* once open: what samples depend on, the route in effect, and the
     * epochs' machinery (made at the first detfeed_loader_start) */
    detfeed__plan plan;
    detfeed__route *route;
    /* atomic: made by the first start while other threads may read it
     * (stage times, skips, shutdown) */
    detfeed__epochs *_Atomic batches;
    _Atomic bool shut_down; /* detfeed_loader_shutdown: no more epochs */
};

/* Whether detfeed_loader_open has run and succeeded. */
bool detfeed__loader_is_open(const detfeed_loader *l);
/* For the calls that need an open loader: DETFEED_OK, or DETFEED_EBADSTATE
 * with a message: "WHAT: the loader is not open" before detfeed_loader_open,
 * the open's failure after one that failed. */
int detfeed__loader_need_open(detfeed_loader *l, const char *what);

/* What setting `p` accepts, in words, for messages (into buf); the
 * integer ranges come from the table the setter checks. */
void detfeed__loader_param_range(detfeed_loader_param p, char *buf, size_t size);

/* Decodes the images of the opened index that the RAM cache does not hold
 * and takes those that fail (and those whose fill failed) out of the index
 * and the cache, as `detfeed check` reports them (verify.c). */
int detfeed__loader_verify(detfeed_loader *l);

/* Before the caches are made (so that each image is identified before it is
 * decoded): identifies the images and reads the verification record, unless
 * verify_record is none (verify.c). */
int detfeed__loader_verify_prepare(detfeed_loader *l);

/* Frees what the verification keeps (verify.c). */
void detfeed__loader_verify_free(detfeed_loader *l);

#endif /* DETFEED_LOADER_INTERNAL_H */
