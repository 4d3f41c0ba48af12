/*
 * resolve.h - where a dataset YAML's data is, as Ultralytics 8.4's
 * check_det_dataset finds it (internal): its settings' datasets_dir
 * (settings.c) and the root and split entries (resolve.c).
 */
#ifndef DETFEED_RESOLVE_H
#define DETFEED_RESOLVE_H

#include "core/internal.h"

/*
 * Ultralytics' datasets_dir, as `SETTINGS["datasets_dir"]` holds it: the
 * string "datasets_dir" of the settings file (settings.json in the user
 * config folder of get_user_config_dir: $YOLO_CONFIG_DIR/Ultralytics, else
 * $XDG_CONFIG_HOME/Ultralytics, else ~/.config/Ultralytics, else, where
 * that folder cannot be made, $TMPDIR/Ultralytics-<uid>), else the default
 * SettingsManager writes there: <working folder>/datasets. *dir and *from
 * (where the value came from, for messages) are malloc'd. DETFEED_EFORMAT
 * (with msg) for a datasets_dir that cannot be a path (a NUL, a lone
 * UTF-16 surrogate), DETFEED_ENOMEM.
 */
int detfeed__datasets_dir(char **dir, char **from, detfeed__msg *msg);

/* Python's os.path.realpath(path) (Path.resolve() without strict): absolute,
 * symbolic links followed as far as the path exists, "." and ".." taken
 * after the links before them; malloc'd, NULL when out of memory (or when
 * the working folder is unknown for a relative path). */
char *detfeed__path_resolve(const char *path);

/* What a YAML's root is and why (check_det_dataset's `path`). */
typedef struct detfeed__root {
    char *path; /* as the entries are joined to it */
    char *abs;  /* resolved, for messages and detfeed_dataset_root */
    char *rule; /* the rule that found it, in words */
} detfeed__root;

/*
 * The root of a dataset YAML `file` whose `path` value is `value` (NULL or
 * "": none): `override` when not NULL (detfeed_dataset_set_root);
 * else the YAML's folder without a `path`; else `path` as it is when it
 * exists (from the working folder) or is absolute; else resolved under
 * datasets_dir (`datasets_dir` when not NULL, else detfeed__datasets_dir).
 */
int detfeed__root_find(const char *file, const char *value, const char *override,
                       const char *datasets_dir, detfeed__root *root,
                       detfeed__msg *msg);
void detfeed__root_free(detfeed__root *root);

/* A split entry under the root as check_det_dataset joins it: resolved
 * (detfeed__path_resolve), and for a lone entry ("train: x", not a list)
 * that starts with "../" and does not exist, the entry without it;
 * malloc'd, NULL when out of memory. */
char *detfeed__root_entry(const detfeed__root *root, const char *entry, bool lone);

#endif /* DETFEED_RESOLVE_H */
