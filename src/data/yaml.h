/*
 * yaml.h - a small YAML reader for dataset files (internal).
 *
 * It reads the subset that dataset YAMLs use: block mappings and sequences
 * by indentation, flow sequences and mappings ([a, b], {k: v}) that may span
 * lines (with comments between items), plain, single- and double-quoted
 * scalars (quoted ones folded over lines as PyYAML folds them), comments,
 * block scalars (| and >, kept as text), a leading "---" and a UTF-8 byte
 * order mark.
 * Anchors, aliases, tags, complex keys, several documents and a tab that
 * indents a block or flow items (tabs in a block scalar's text or before a
 * quoted scalar's next line are taken, as PyYAML takes them) are refused
 * with a message naming the line. Every scalar stays a string; the dataset
 * code converts what it needs.
 */
#ifndef DETFEED_YAML_H
#define DETFEED_YAML_H

#include <stddef.h>

typedef enum detfeed__ytype {
    DETFEED__Y_SCALAR,
    DETFEED__Y_SEQ,
    DETFEED__Y_MAP
} detfeed__ytype;

typedef struct detfeed__ynode detfeed__ynode;
struct detfeed__ynode {
    detfeed__ytype type;
    int line;               /* 1-based line where the node starts */
    char *str;              /* SCALAR: the text ("" for an empty value) */
    int quoted;             /* SCALAR: written in quotes */
    size_t n;               /* SEQ, MAP: number of items */
    char **keys;            /* MAP: the keys */
    detfeed__ynode **items; /* SEQ, MAP: the values */
};

/* Parses `len` bytes of text. On success *root is a MAP (or SCALAR for an
 * empty document) to free with detfeed__yaml_free. On failure returns -1,
 * *root is NULL, *err_line the line and err (size errsz) the reason. */
int detfeed__yaml_parse(const char *text, size_t len, detfeed__ynode **root,
                        int *err_line, char *err, size_t errsz);

void detfeed__yaml_free(detfeed__ynode *node);

/* The value of `key` in a MAP, or NULL. */
const detfeed__ynode *detfeed__yaml_get(const detfeed__ynode *map, const char *key);

/* True for an empty plain scalar, "~" or "null" (YAML's null). */
int detfeed__yaml_is_null(const detfeed__ynode *node);

#endif /* DETFEED_YAML_H */
