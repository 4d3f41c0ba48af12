/*
 * path.h - file paths and directory walks for the dataset index (internal).
 */
#ifndef DETFEED_PATH_H
#define DETFEED_PATH_H

#include "core/internal.h"

/* A growable list of malloc'd strings. */
typedef struct detfeed__strlist {
    char **v;
    size_t n, cap;
} detfeed__strlist;

/* Appends a copy of s; false when out of memory. */
bool detfeed__strlist_add(detfeed__strlist *l, const char *s);
/* Appends s itself (ownership moves); false (and s freed) when out of memory. */
bool detfeed__strlist_take(detfeed__strlist *l, char *s);
void detfeed__strlist_sort(detfeed__strlist *l);
/* Index of s in a sorted list, or -1. */
long detfeed__strlist_find(const detfeed__strlist *l, const char *s);
void detfeed__strlist_free(detfeed__strlist *l);

/* "a" + "/" + "b" (b alone when absolute); malloc'd, NULL when out of memory. */
char *detfeed__path_join(const char *a, const char *b);
/* The folder part of a path ("." when none); malloc'd. */
char *detfeed__path_dir(const char *path);
/* Lower-case suffix after the last '.' of the last component, or "". */
void detfeed__path_suffix(const char *path, char *out, size_t size);
/* Ultralytics' img2label_paths: the last "/images/" becomes "/labels/" and
 * the suffix ".txt"; malloc'd. */
char *detfeed__label_path(const char *image_path);

typedef enum detfeed__ftype {
    DETFEED__F_NONE,
    DETFEED__F_FILE,
    DETFEED__F_DIR,
    DETFEED__F_OTHER
} detfeed__ftype;
/* What a path is, following symbolic links. */
detfeed__ftype detfeed__path_type(const char *path);

/* Collects the regular files below dir (recursively, following links up to
 * a depth of 32, skipping names that start with '.') whose suffix passes
 * `keep` into out. Returns DETFEED_OK, DETFEED_EIO (with msg) or ENOMEM. */
int detfeed__walk(const char *dir, bool recursive, bool (*keep)(const char *suffix),
                  detfeed__strlist *out, detfeed__msg *msg);

/* Reads a whole small text file (at most max bytes) into a NUL-terminated
 * malloc'd buffer. */
int detfeed__read_text(const char *path, size_t max, char **text, size_t *len,
                       detfeed__msg *msg);

#endif /* DETFEED_PATH_H */
