/*
 * load.c - one image of a dataset: decoded under the dataset's limits
 * (detfeed__decode_image), and at its load size: decode, then resize
 * (INTER_LINEAR) to the long side imgsz, with the decode and resize times.
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

int detfeed__load_image(detfeed_codec *codec, const char *path, int imgsz, uint8_t *dst,
                        int want_w, int want_h, uint8_t **out, int *w, int *h, int *ow,
                        int *oh, uint64_t ns[2])
{
    uint8_t *px;
    uint64_t t0 = ns ? detfeed__now_ns() : 0;
    int rc = detfeed_codec_decode_file(codec, path, &px, ow, oh);
    uint64_t t1 = ns ? detfeed__now_ns() : 0;
    if (ns)
        ns[0] += t1 - t0;
    if (rc != DETFEED_OK)
        return rc;
    detfeed_load_size(*ow, *oh, imgsz, w, h);
    if (dst && (*w != want_w || *h != want_h)) {
        detfeed_free(px);
        return detfeed__fail(&codec->msg, DETFEED_ECORRUPT,
                             "%s: image changed since the dataset was indexed", path);
    }
    if (*w == *ow && *h == *oh && dst == NULL) {
        *out = px;
        return DETFEED_OK;
    }
    size_t bytes = (size_t)*w * (size_t)*h * 3;
    uint8_t *target = dst ? dst : malloc(bytes);
    if (target == NULL) {
        detfeed_free(px);
        return detfeed__fail(&codec->msg, DETFEED_ENOMEM, "%s: out of memory", path);
    }
    if (*w == *ow && *h == *oh)
        memcpy(target, px, bytes);
    else
        rc = detfeed_resize_linear(px, (size_t)*ow * 3, *ow, *oh, target,
                                   (size_t)*w * 3, *w, *h, 3);
    if (ns)
        ns[1] += detfeed__now_ns() - t1;
    detfeed_free(px);
    if (rc != DETFEED_OK) {
        if (dst == NULL)
            free(target);
        return detfeed__fail(&codec->msg, rc, "%s: resize failed: %s", path,
                             detfeed_strerror(rc));
    }
    if (dst == NULL)
        *out = target;
    return DETFEED_OK;
}
