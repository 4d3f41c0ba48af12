/*
 * cache_files.h - what the files detfeed keeps between runs (the disk cache
 * of decoded images, the verification record) share (internal): where they
 * go by default, what decoding an image depends on, and the small file
 * helpers both write with.
 */
#ifndef DETFEED_CACHE_FILES_H
#define DETFEED_CACHE_FILES_H

#include "dataset_internal.h"

#include <stdbool.h>
#include <sys/stat.h>

/* A printf into a new string; NULL when out of memory. */
char *detfeed__strdup_printf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* `path` made absolute with the working folder (not resolved: links stay);
 * malloc'd, NULL when out of memory. */
char *detfeed__absolute_path(const char *path);

/* A file's modification time in nanoseconds. */
int64_t detfeed__mtime_ns(const struct stat *st);

/* Writes all `bytes` at `offset` (pwrite, restarted after EINTR and short
 * writes): 0, or the errno that stopped it. */
int detfeed__write_all(int fd, const void *data, size_t bytes, uint64_t offset);

/* fsync of the folder that holds `path` (after a rename into it). */
void detfeed__sync_folder(const char *path);

/* Creates `dir` and the folders above it that are missing (mode 0777 less
 * the umask); failures show when the folder is used. `dir` is modified
 * while it runs and restored. */
void detfeed__make_folders(char *dir);

/* The default place of a file kept for `ds`: beside the label folder of its
 * first image, as Ultralytics keeps its labels cache: that folder's
 * absolute path followed by `suffix` (images in coco/images/train2017 and
 * the suffix ".x" give coco/labels/train2017.x). malloc'd, NULL when out of
 * memory. */
char *detfeed__cache_default_path(const detfeed_dataset *ds, const char *suffix);

/* Where a file whose default place is `primary` goes when that folder
 * cannot be written: the user's cache folder, $XDG_CACHE_HOME/detfeed (an
 * absolute XDG_CACHE_HOME) or else $HOME/.cache/detfeed, the file named
 * after `primary`'s with a hash of its whole path before it. malloc'd; NULL
 * when there is no such folder or when out of memory. */
char *detfeed__cache_fallback_path(const char *primary);

/* Whether the folder of `path` may be written: by access(2), which allows
 * root everything but a read-only mount, and by its mode, so that a folder
 * nobody may write (a dataset made read-only for all) is left alone by root
 * as well. */
bool detfeed__folder_writable(const char *path);

/*
 * Files of detfeed's own (the disk cache, the verification record, their
 * .part, temporary and .lock files) are opened without following a link:
 * a symbolic link where one is expected could send a write anywhere its
 * planter chose. Each of these returns a descriptor, or -1 with *err an
 * errno and `why` (wn bytes) the reason in words: a link is ELOOP with "is
 * a symbolic link, which detfeed does not follow for its own files",
 * anything else that is not a regular file EINVAL with what it is.
 */

/* Opens the lock file `path` for flock, creating it (mode 0666 less the
 * umask) when missing; never blocks (a FIFO is refused). */
int detfeed__own_lock(const char *path, int *err, char *why, size_t wn);

/* Takes an exclusive flock on the lock file `path` (opened as
 * detfeed__own_lock opens it), waiting for another holder when `wait`
 * (*waited then says whether it had to). Returns the descriptor, or -1 with
 * *err and `why`: what detfeed__own_lock refuses, EWOULDBLOCK when
 * another process holds it and `wait` is false, ENOLCK when flock fails. The lock is
 * the file at `path` when it is taken: a holder releases it by removing the file
 * (detfeed__lock_release), and one who locked the removed file takes the
 * new one instead. */
int detfeed__lock_take(const char *path, bool wait, bool *waited, int *err, char *why,
                       size_t wn);
/* Releases a lock taken with detfeed__lock_take on `path`: removes the file
 * while holding it (no empty lock file stays beside the user's data), then
 * closes fd. fd < 0: nothing. */
void detfeed__lock_release(int fd, const char *path);

/* Creates `path` new and empty for reading and writing (O_EXCL): a regular
 * file already there is left by an interrupted write and is unlinked first
 * (the caller holds the writer's lock), never truncated or written
 * through, so a hard link to another file leaves that file as it was. */
int detfeed__own_create(const char *path, int *err, char *why, size_t wn);

/* Opens `path` for reading, with its stat in *st: ENOENT when missing. */
int detfeed__own_read(const char *path, struct stat *st, int *err, char *why,
                      size_t wn);

/* detfeed__own_read, with `why` for a reader's note: `none` ("no file")
 * when missing, the refusal of a link or what is not a file, else "cannot
 * read it: " and the error. */
int detfeed__own_read_or(const char *path, struct stat *st, const char *none, char *why,
                         size_t wn);

/* Whether `path` holds what a file of detfeed's must not replace: a
 * symbolic link, a folder or other non-regular file, or a non-empty file
 * that does not start with `magic` (8 bytes; a stale or damaged file of
 * detfeed's starts with it, an empty one holds nothing). When it does,
 * what it is goes to `why` ("is a folder", "does not start with
 * DFDCACHE"); a path that cannot be looked at is not foreign here (opening
 * or writing it reports why). */
bool detfeed__foreign_file(const char *path, const char magic[8], char *why, size_t wn);

/* What decoding the images of a dataset gives, besides their bytes: the
 * JPEG, PNG and TIFF decoders' versions, the OpenCV stack whose decoding
 * the images get and the image limits `lim`, as one line of text into buf
 * ("libjpeg-turbo 3000004, spng 0.7.4, libtiff 20221213, opencv 5.1,
 * limits ..."). */
void detfeed__decode_provenance(const detfeed__limits *lim, char *buf, size_t size);

#endif /* DETFEED_CACHE_FILES_H */
