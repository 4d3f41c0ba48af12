/*
 * fuzz_yaml.c - libFuzzer target for the dataset YAML reader: the parser
 * alone, then what a dataset makes of the same text (names, nc, kpt_shape,
 * flip_idx and the split's entries) through detfeed__dataset_yaml_meta.
 * Hermetic: nothing is written, opened, listed or walked, so a `train: [..]`
 * or `path: /` in the input reads no folder of the host.
 */
#include "data/dataset_internal.h"
#include "data/yaml.h"
#include "detfeed.h"

#include <stdint.h>
#include <string.h>

static void walk(const detfeed__ynode *n, int depth)
{
    if (n == NULL || depth > 100)
        return;
    for (size_t i = 0; i < n->n; i++)
        walk(n->items[i], depth + 1);
    (void)detfeed__yaml_is_null(n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    detfeed__ynode *root;
    char err[160];
    int line;
    if (detfeed__yaml_parse((const char *)data, size, &root, &line, err, sizeof err) ==
        0) {
        walk(root, 0);
        (void)detfeed__yaml_get(root, "names");
        detfeed__yaml_free(root);
    }
    detfeed_dataset *ds;
    if (detfeed_dataset_create(&ds, 0) != DETFEED_OK)
        return 0;
    if (detfeed__dataset_yaml_meta(ds, "fuzz.yaml", (const char *)data, size) ==
        DETFEED_OK) {
        int nc = detfeed_dataset_class_count(ds), nkpt, ndim;
        for (int k = 0; k < nc; k++)
            (void)strlen(detfeed_dataset_class_name(ds, k));
        detfeed_dataset_kpt_shape(ds, &nkpt, &ndim);
        const int *flip = detfeed_dataset_flip_idx(ds);
        for (int k = 0; flip && k < nkpt; k++)
            (void)flip[k];
    }
    (void)strlen(detfeed_dataset_last_error(ds));
    detfeed_dataset_destroy(ds);
    return 0;
}
