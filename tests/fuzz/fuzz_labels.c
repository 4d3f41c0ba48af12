/*
 * fuzz_labels.c - libFuzzer target for the label parser. The first byte
 * picks the task (detect, pose with 2 or 3 values per keypoint) and the
 * number of classes; the rest is the file's text.
 */
#include "data/labels.h"

#include <stdint.h>
#include <string.h>

static void ignore(void *ctx, const char *file, int line, const char *reason)
{
    (void)ctx;
    (void)file;
    (void)line;
    (void)reason;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    detfeed__label_rules r = {.nc = data[0] & 0x3f, .max_line = 512, .max_lines = 200};
    if (data[0] & 0x40) {
        r.nkpt = 1 + (data[0] & 3);
        r.kdim = (data[0] & 0x80) ? 3 : 2;
    }
    detfeed__labels l;
    int dups;
    int rc = detfeed__labels_parse((const char *)data + 1, size - 1, "fuzz.txt", &r, &l,
                                   &dups, ignore, NULL);
    if (rc == DETFEED_OK) {
        /* Touch every array so that a wrong size shows under ASan. */
        volatile float sink = 0;
        for (int i = 0; i < l.n; i++) {
            sink += l.cls[i] + l.boxes[4 * i + 3];
            for (int k = 0; k < l.nkpt * 3; k++)
                sink += l.kpts[i * l.nkpt * 3 + k];
            if (l.seg_start)
                for (int p = l.seg_start[i]; p < l.seg_start[i + 1]; p++)
                    sink += l.seg_xy[2 * p + 1];
        }
        (void)sink;
    }
    detfeed__labels_free(&l);
    return 0;
}
