/*
 * load.h - one image of a dataset at its load size (internal): decoded
 * under the dataset's limits, then resized so that its long side is imgsz,
 * as Ultralytics' load_image does. The RAM cache and the disk cache both
 * load through it.
 */
#ifndef DETFEED_LOAD_H
#define DETFEED_LOAD_H

#include "core/clock.h"
#include "data_internal.h"

/* Decodes image i of `ds` and resizes it to its load size at imgsz: into
 * `dst` when given (which must hold exactly want_w x want_h), else into a
 * new buffer returned in *out (the decoded one when no resize is needed).
 * The decode and the resize are timed as DETFEED_STAGE_DECODE and
 * DETFEED_STAGE_RESIZE on `clock` (NULL: not timed); the stage running
 * before gets the clock back. */
int detfeed__load_image(detfeed_codec *codec, const detfeed_dataset *ds, size_t i,
                        int imgsz, uint8_t *dst, int want_w, int want_h, uint8_t **out,
                        int *w, int *h, int *ow, int *oh, detfeed__clock *clock);

#endif /* DETFEED_LOAD_H */
