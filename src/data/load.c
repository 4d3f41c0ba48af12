/*
 * load.c - one image of a dataset: decoded under the dataset's limits, and
 * at its load size (resized with INTER_LINEAR to the long side imgsz), the
 * decode and the resize timed on the caller's stage clock.
 */
#include "load.h"

#include "dataset_internal.h"

#include <stdlib.h>
#include <string.h>

int detfeed__decode_image(const detfeed_dataset *ds, size_t i, detfeed_codec *codec,
                          uint8_t **pixels, int *width, int *height)
{
    return detfeed__decode_file_limited(codec, detfeed__dataset_limits(ds),
                                        detfeed__dataset_image(ds, i)->path, pixels,
                                        width, height);
}

/* px (ow x oh, decoded) at its load size w x h: into dst, else a new buffer
 * in *out; px is freed. */
static int resize(detfeed_codec *codec, const char *path, uint8_t *px, int ow, int oh,
                  uint8_t *dst, int w, int h, uint8_t **out)
{
    if (w == ow && h == oh && dst == NULL) {
        *out = px;
        return DETFEED_OK;
    }
    size_t bytes = (size_t)w * (size_t)h * 3;
    uint8_t *target = dst ? dst : malloc(bytes);
    int rc = DETFEED_OK;
    if (target == NULL)
        rc = detfeed__fail(&codec->msg, DETFEED_ENOMEM, "%s: out of memory", path);
    else if (w == ow && h == oh)
        memcpy(target, px, bytes);
    else if ((rc = detfeed_resize_linear(px, (size_t)ow * 3, ow, oh, target,
                                         (size_t)w * 3, w, h, 3)) != DETFEED_OK)
        detfeed__fail(&codec->msg, rc, "%s: resize failed: %s", path,
                      detfeed_strerror(rc));
    detfeed_free(px);
    if (rc != DETFEED_OK && dst == NULL)
        free(target);
    if (rc == DETFEED_OK && dst == NULL)
        *out = target;
    return rc;
}

int detfeed__load_image(detfeed_codec *codec, const detfeed_dataset *ds, size_t i,
                        int imgsz, uint8_t *dst, int want_w, int want_h, uint8_t **out,
                        int *w, int *h, int *ow, int *oh, detfeed__clock *clock)
{
    const char *path = detfeed__dataset_image(ds, i)->path;
    uint8_t *px;
    int was = detfeed__clock_enter(clock, DETFEED_STAGE_DECODE);
    int rc = detfeed__decode_image(ds, i, codec, &px, ow, oh);
    if (rc == DETFEED_OK) {
        detfeed_load_size(*ow, *oh, imgsz, w, h);
        if (dst && (*w != want_w || *h != want_h)) {
            detfeed_free(px);
            rc = detfeed__fail(&codec->msg, DETFEED_ECORRUPT,
                               "%s: image changed since the dataset was indexed", path);
        }
    }
    if (rc == DETFEED_OK) {
        detfeed__clock_enter(clock, DETFEED_STAGE_RESIZE);
        rc = resize(codec, path, px, *ow, *oh, dst, *w, *h, out);
    }
    detfeed__clock_enter(clock, was);
    return rc;
}
