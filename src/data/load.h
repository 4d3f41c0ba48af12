/*
 * load.h - one image at its load size (internal): decoded, then resized so
 * that its long side is imgsz, as Ultralytics' load_image does. The RAM
 * cache and the disk cache both load through it.
 */
#ifndef DETFEED_LOAD_H
#define DETFEED_LOAD_H

#include "data_internal.h"

/* Decodes image `path` and resizes it to its load size at imgsz: into `dst`
 * when given (which must hold exactly want_w x want_h), else into a new
 * buffer returned in *out (the decoded one when no resize is needed).
 * ns[0] and ns[1] (ns may be NULL) receive the decode and resize time. */
int detfeed__load_image(detfeed_codec *codec, const char *path, int imgsz, uint8_t *dst,
                        int want_w, int want_h, uint8_t **out, int *w, int *h, int *ow,
                        int *oh, uint64_t ns[2]);

#endif /* DETFEED_LOAD_H */
