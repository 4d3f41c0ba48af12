/*
 * loader_internal.h - the loader handle's layout, shared by loader.c
 * (settings, single samples) and batch.c (batches through the ring).
 */
#ifndef DETFEED_LOADER_INTERNAL_H
#define DETFEED_LOADER_INTERNAL_H

#include "aug/augment.h"
#include "core/internal.h"
#include "ring.h"

typedef struct detfeed__batches detfeed__batches;
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
    /* image limits handed to the dataset, by detfeed_codec_limit (0: its
     * default) */
    uint64_t limits[DETFEED_LIMIT_MAX_IMAGE_BYTES + 1];
    bool augment, opened;
    bool samples_made; /* detfeed_loader_sample has run (rect order fixed) */
    char split[8];
    detfeed_policy policy;
    detfeed__hyp hyp;
    /* the reference stack: Ultralytics as 803/804, OpenCV as detfeed_cv's
     * fields (kept as int like every integer setting) */
    int ultralytics, numpy, opencv, opencv_cpu, opencv_ipp;
    /* state */
    detfeed_dataset *ds;
    detfeed_cache *cache;
    detfeed_disk_cache *disk; /* cache "disk", or NULL */
    /* the verification record while opening, and what it came to */
    detfeed__vrec *vrec;
    int64_t verify_stats[DETFEED_VERIFY_STAT_FAILED + 1];
    char *verify_used; /* the record's file, or NULL */
    char verify_note[DETFEED__MSG_SIZE];
    detfeed__augmenter aug;
    detfeed__scratch scratch;
    /* validation (rect mode): each image's batch shape, height and width */
    int (*rect)[2];
    uint64_t *rect_order; /* validation: dataset indices by aspect ratio */
    /* batches (batch.c) */
    int prefetch, rank, world_size;
    bool drop_last;
    detfeed_dtype dtype;
    detfeed_scale scale;
    int output, colour, cuda_device; /* detfeed_output, detfeed_route asked for */
    /* in effect (batch.c decides when the batches are first made) */
    detfeed_output eff_output;
    detfeed_route eff_route;
    const char *route_why; /* why they differ from the request, or NULL */
    void *cuda_stream;     /* the consumer's cudaStream_t */
    detfeed__batches *batches;
    _Atomic bool shut_down;   /* detfeed_loader_shutdown: no more epochs */
    _Atomic uint64_t wait_ns; /* the consumer in detfeed_loader_next */
    /* samples replaced under the skip policy, and the first one's message
     * (skip_state: 0 none, 1 being written, 2 written) */
    _Atomic uint64_t skipped;
    _Atomic int skip_state;
    detfeed__msg skip_msg;
    const char *pinned_why; /* why the batch slots are not page-locked */
};

/* What setting `p` accepts, in words, for messages (into buf); the
 * integer ranges come from the table the setter checks. */
void detfeed__loader_param_range(detfeed_loader_param p, char *buf, size_t size);

/* Where sample `pos` of the epoch's `order` stands for its partners: into
 * *place, returned; NULL when partners are uniform (partner_window 0). */
const detfeed__place *detfeed__loader_place(const detfeed_loader *l,
                                            const uint64_t *order, uint64_t pos,
                                            detfeed__place *place);

/* Whether mosaic applies in `epoch` (close_mosaic). */
bool detfeed__loader_mosaic_on(const detfeed_loader *l, uint32_t epoch);

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

/* Frees the batch machinery (batch.c). */
void detfeed__batches_free(detfeed_loader *l);

#endif /* DETFEED_LOADER_INTERNAL_H */
