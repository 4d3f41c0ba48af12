/*
 * verify_record.h - the verification record (internal): the verdicts of
 * decoding a dataset's images (which ones failed, and each one's message)
 * kept in a small file, so that a later open of the same images under the
 * same limits and decoders reuses them instead of decoding every image
 * again. The format and the rules are in detfeed.h ("Verification
 * record"); the loader's verification (src/feed/verify.c) uses it.
 */
#ifndef DETFEED_VERIFY_RECORD_H
#define DETFEED_VERIFY_RECORD_H

#include "core/internal.h"

typedef struct detfeed__vrec detfeed__vrec;

/* An image's verdict in the record. */
typedef enum detfeed__verdict {
    DETFEED__VERDICT_UNKNOWN = 0, /* none for this image as it is now: decode it */
    DETFEED__VERDICT_OK = 1,      /* it decoded */
    DETFEED__VERDICT_FAILED = 2   /* it failed, with its message */
} detfeed__verdict;

/* What detfeed__vrec_finish did (the values of DETFEED_RECORD_*). */
enum {
    DETFEED__VREC_REUSED = 1,   /* the record held every verdict: left as it was */
    DETFEED__VREC_WRITTEN = 2,  /* the verdicts were written */
    DETFEED__VREC_UNWRITTEN = 3 /* they could not be written (the note says why) */
};

/*
 * Identifies every image of the open index `ds` (absolute path, file size,
 * modification time in ns, by stat) and reads the record: at `path`, or
 * with `path` NULL at the default place (beside the labels, as the disk
 * cache: labels/train2017.detfeed-verified) or in the user's cache folder.
 * A record that is missing, damaged, truncated, foreign or made under other
 * limits or decoders is not used: every verdict is then unknown and the
 * note says why. DETFEED_ENOMEM is the only failure.
 */
int detfeed__vrec_open(detfeed__vrec **out, const detfeed_dataset *ds,
                       const char *path);

/* Image i's verdict; for FAILED, *message receives its message as the
 * codec gives it ("PATH: reason", PATH as the index names the image) in a
 * new string, or NULL when out of memory (then the verdict is UNKNOWN). */
detfeed__verdict detfeed__vrec_verdict(const detfeed__vrec *r, size_t i,
                                       char **message);

/* Before decoding the images that have no verdict: takes the lock beside
 * the place the record is written (PATH.lock, flock; waits while another
 * process holds it: it is verifying the same images) and reads the record
 * again, as that process may have written it meanwhile. Without a place
 * that can be written, nothing is locked. */
void detfeed__vrec_lock(detfeed__vrec *r);

/* After verification, with each image's outcome why[i] (NULL: it decoded,
 * else its message): DETFEED__VREC_REUSED when the record already says
 * exactly that of exactly these images; else writes it (a temporary file,
 * fsync, rename, fsync of the folder) and returns DETFEED__VREC_WRITTEN,
 * or DETFEED__VREC_UNWRITTEN where no place can be written. Releases the
 * lock. `counts` = {decoded here, verdicts from the record, from a cache}
 * for the note. */
int detfeed__vrec_finish(detfeed__vrec *r, char *const *why, const int64_t counts[3]);

/* The record's file (written, read or, failing both, the place tried), and
 * one line on what was found and done; valid until destroy. */
const char *detfeed__vrec_path(const detfeed__vrec *r);
const char *detfeed__vrec_note(const detfeed__vrec *r);

/* Releases the lock (if still held) and the memory. NULL: no-op. */
void detfeed__vrec_destroy(detfeed__vrec *r);

#endif /* DETFEED_VERIFY_RECORD_H */
