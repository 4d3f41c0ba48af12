/*
 * fuzz_yaml.c - libFuzzer target for the dataset YAML reader: the parser
 * alone, then the whole dataset open on the same text written as a YAML
 * file (names, kpt_shape, flip_idx, path and split handling; images are not
 * verified).
 */
#include "data/yaml.h"
#include "detfeed.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    /* The whole dataset open on the same text, as a YAML file. */
    char dir[] = "/tmp/detfeed-fuzz-XXXXXX", path[64];
    if (mkdtemp(dir) == NULL)
        return 0;
    snprintf(path, sizeof path, "%s/data.yaml", dir);
    FILE *f = fopen(path, "wb");
    if (f && fwrite(data, 1, size, f) == size && fclose(f) == 0) {
        detfeed_dataset *ds;
        if (detfeed_dataset_create(&ds, 0) == DETFEED_OK) {
            detfeed_dataset_set_int(ds, DETFEED_DATASET_VERIFY, DETFEED_VERIFY_NONE);
            detfeed_dataset_open(ds, path);
            detfeed_dataset_destroy(ds);
        }
    } else if (f) {
        fclose(f);
    }
    unlink(path);
    rmdir(dir);
    return 0;
}
