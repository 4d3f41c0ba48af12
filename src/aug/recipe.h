/*
 * recipe.h - every random parameter of a training sample, computed before
 * any pixel is touched ("Randomness" in detfeed.h: one value per seed,
 * epoch, sample index and slot). A recipe is a pure function of
 * (hyperparameters, seed, epoch, index, dataset size): the colour routes,
 * the worker count and the order of evaluation cannot change it.
 */
#ifndef DETFEED_RECIPE_H
#define DETFEED_RECIPE_H

#include "core/internal.h"

/* Ultralytics' augmentation hyperparameters (ultralytics/cfg/default.yaml). */
typedef struct detfeed__hyp {
    double hsv_h, hsv_s, hsv_v;
    double degrees, translate, scale, shear, perspective;
    double flipud, fliplr;
    double mosaic, mixup, cutmix;
    double bgr;
    double copy_paste;   /* flip: the fraction pasted; mixup: also the gate */
    int copy_paste_mode; /* DETFEED_PASTE_FLIP or DETFEED_PASTE_MIXUP */
    int imgsz;
} detfeed__hyp;

/* The defaults of Ultralytics v8 detection training at imgsz 640. */
detfeed__hyp detfeed__hyp_defaults(void);

enum {
    DETFEED__SLOT_MOSAIC = 0,
    DETFEED__SLOT_PARTNER = 1, /* 1..3 */
    DETFEED__SLOT_YC = 4,
    DETFEED__SLOT_XC = 5,
    DETFEED__SLOT_PERSPECTIVE = 6, /* 6, 7 */
    DETFEED__SLOT_ANGLE = 8,
    DETFEED__SLOT_SCALE = 9,
    DETFEED__SLOT_SHEAR = 10,     /* 10, 11 */
    DETFEED__SLOT_TRANSLATE = 12, /* 12, 13 */
    DETFEED__SLOT_MIXUP = 14,
    DETFEED__SLOT_CUTMIX = 15,
    DETFEED__SLOT_HSV = 16, /* 16..18 */
    DETFEED__SLOT_FLIPUD = 19,
    DETFEED__SLOT_FLIPLR = 20,
    DETFEED__SLOT_BGR = 21,
    DETFEED__SLOT_MIX_PARTNER = 22,
    DETFEED__SLOT_CUT_PARTNER = 23,
    DETFEED__SLOT_CP_GATE = 24,      /* CopyPaste's gate (mode mixup), per chain */
    DETFEED__SLOT_CP_PARTNER = 25,   /* its partner, per chain */
    DETFEED__SLOT_PARTNER_BASE = 32, /* the mixup partner's slots: + 32 */
    DETFEED__SLOT_MIX_RATIO = 64,    /* 64..126: Beta(32, 32) */
    DETFEED__SLOT_CUT_BASE = 128,    /* the cutmix partner's slots: + 128 */
    DETFEED__SLOT_CUT_AREA = 160,    /* 160..168: area k's lam, cx, cy at + 3k */
    DETFEED__SLOT_CUT_CHOICE = 169,  /* which free area (np.random.choice) */
    DETFEED__SLOT_CP_BASE = 256      /* a chain's CopyPaste partner: its slots
                                        + 256 (chain 0: 256.., mixup's 288..,
                                        cutmix's 384..) */
};

/* CutMix's candidate areas (num_areas in Ultralytics). */
#define DETFEED__CUT_AREAS 3

typedef struct detfeed__recipe {
    bool mosaic;           /* 4-tile mosaic applies */
    uint64_t partners[3];  /* tiles 1..3 (tile 0 is the sample itself) */
    int yc, xc;            /* mosaic centre on the 2s x 2s canvas */
    double perspective[2]; /* P[2][0], P[2][1] */
    double angle, scale;   /* rotation in degrees, scale factor */
    double shear[2];       /* shear angles in degrees (x, y) */
    double translate[2];   /* translation as a fraction of the output side */
    bool mixup, cutmix;
    uint64_t mix_partner; /* MixUp: the partner image (when mixup) */
    double mix_ratio;     /* MixUp: the main image's weight r ~ Beta(32, 32) */
    uint64_t cut_partner; /* CutMix: the partner image (when cutmix) */
    /* CutMix's candidate areas x1, y1, x2, y2 on the imgsz x imgsz sample
     * (_rand_bbox, lam ~ Beta(1, 1)), and the uniform that picks one of
     * those that overlap no box. */
    int cut_area[DETFEED__CUT_AREAS][4];
    double cut_choice;
    /* CopyPaste on this chain (the sample's, or a partner's through its
     * own pre-chain): it may apply (probability copy_paste > 0, not in a
     * close_mosaic epoch, and in mode mixup its gate passed); whether it
     * pastes anything depends on the polygons. */
    bool copy_paste;
    uint64_t cp_partner; /* mode mixup: the partner image */
    uint32_t slot_base;  /* the chain's slots (0, or a partner's base) */
    bool hsv;            /* colour applies (some HSV gain is non-zero) */
    double gains[3];     /* dh, ds, dv: u * hsv_h, u * hsv_s, u * hsv_v */
    bool flipud, fliplr;
    bool to_rgb; /* Format's BGR->RGB swap */
} detfeed__recipe;

/*
 * Where a sample stands in its epoch, for mosaic and mixup partners drawn
 * from a window of the samples before it (the loader's partner_window):
 * this rank's samples are positions pos, pos - stride, pos - 2 stride, ...
 * of the epoch's order, and a partner is one of the last `window` of them
 * (the sample itself included), uniformly: Ultralytics' buffer of recently
 * loaded images, made a function of seed, epoch and order.
 */
typedef struct detfeed__place {
    const uint64_t *order; /* the epoch's order of the n dataset indices */
    uint64_t pos;          /* the sample's position in it (< n) */
    uint32_t stride;       /* world_size */
    uint32_t window;       /* >= 1 */
} detfeed__place;

/*
 * The recipe of sample `index` of epoch `epoch` among `n` samples, with the
 * mosaic, mixup and cutmix probabilities forced to 0 when `mosaic_on` is
 * false (close_mosaic turns them off). Partners are drawn from `place`'s window,
 * or uniformly from the dataset when place is NULL (the default).
 * `slot_base` is 0 for a sample, DETFEED__SLOT_PARTNER_BASE for a mixup
 * partner's own draws and DETFEED__SLOT_CUT_BASE for a cutmix partner's.
 */
void detfeed__recipe_make(const detfeed__hyp *hyp, uint64_t seed, uint32_t epoch,
                          uint64_t index, uint64_t n, bool mosaic_on,
                          uint32_t slot_base, const detfeed__place *place,
                          detfeed__recipe *out);

#endif /* DETFEED_RECIPE_H */
