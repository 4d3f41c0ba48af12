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

/* A malloc'd copy of s; NULL when out of memory. */
char *detfeed__str_dup(const char *s);

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

/* Suffixes (detfeed__path_suffix) of what a dataset holds: the images
 * Ultralytics 8.4 accepts (IMG_FORMATS), the ones detfeed decodes (all but
 * avif), and label files and image lists (txt). */
bool detfeed__is_image_suffix(const char *suffix);
bool detfeed__is_decodable_suffix(const char *suffix);
bool detfeed__is_txt_suffix(const char *suffix);

typedef enum detfeed__ftype {
    DETFEED__F_NONE,  /* nothing there */
    DETFEED__F_FILE,  /* a regular file */
    DETFEED__F_DIR,   /* a folder */
    DETFEED__F_OTHER, /* a FIFO, socket or device */
    DETFEED__F_BROKEN /* a symbolic link that leads nowhere: dangling, a loop */
} detfeed__ftype;
/* What a path is, following symbolic links. */
detfeed__ftype detfeed__path_type(const char *path);

/* Folders nested deeper than this below a walk's start stop it. */
#define DETFEED__WALK_DEPTH 128

typedef struct detfeed__walk_opts {
    bool recursive;                   /* into subfolders */
    bool (*keep)(const char *suffix); /* which names to collect */
    /* A folder link that leads back to a folder being walked (`target`, the
     * start or one on the way down): called, and never followed. A status
     * other than DETFEED_OK stops the walk with it. NULL: ignored. */
    int (*loop)(void *ctx, const char *path, const char *target);
    void *ctx;
} detfeed__walk_opts;

/*
 * Collects the entries below dir whose suffix passes `keep` into out, as
 * Python's recursive glob of "**" and "*.*" finds them: names starting
 * with '.' are skipped; folder links are followed (loops excepted, see
 * above); what is not a folder is collected whatever it is (regular
 * files, FIFOs, dangling links: the caller checks and reports them).
 * Returns DETFEED_OK, DETFEED_EIO (with msg), DETFEED_ELIMIT (deeper than
 * DETFEED__WALK_DEPTH), ENOMEM, or the loop callback's status.
 */
int detfeed__walk(const char *dir, const detfeed__walk_opts *opts,
                  detfeed__strlist *out, detfeed__msg *msg);

/* Reads a whole small text file (at most max bytes) into a NUL-terminated
 * malloc'd buffer. */
int detfeed__read_text(const char *path, size_t max, char **text, size_t *len,
                       detfeed__msg *msg);

/*
 * Text as Python reads it (Ultralytics reads label and list files with
 * str.splitlines() and splits lines with str.split()), on UTF-8 bytes:
 *
 * detfeed__line_break: the length of the line break at s (0: none): "\r\n"
 * (2), "\r", "\n", "\v", "\f", "\x1c", "\x1d", "\x1e" (1), U+0085 (2), U+2028
 * and U+2029 (3): every break str.splitlines() knows.
 * detfeed__line_length: the bytes before the next break (or the end), with
 * the break's length in *brk (0 at the end).
 * detfeed__py_space: the length of the whitespace character at s that
 * str.split() splits at (0: none): the breaks, ' ', '\t', '\x1f', U+00A0,
 * U+1680, U+2000 to U+200A, U+202F, U+205F and U+3000.
 */
size_t detfeed__line_break(const char *s, const char *end);
size_t detfeed__line_length(const char *s, const char *end, size_t *brk);
size_t detfeed__py_space(const char *s, const char *end);

#endif /* DETFEED_PATH_H */
