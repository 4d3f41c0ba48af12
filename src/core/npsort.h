/*
 * npsort.h - np.argsort of the default kind as each NumPy variant computes
 * it (internal; "NumPy's argsort" in detfeed.h names the variants).
 */
#ifndef DETFEED_NPSORT_H
#define DETFEED_NPSORT_H

#include "internal.h"

/*
 * idx[0..n-1] = np.argsort(keys) for n keys of `type`, as `variant`
 * computes it: the order of equal keys is the variant's. DETFEED_EINVAL for
 * an unknown type or variant or n < 0; DETFEED_ENOMEM. Thread-safe.
 */
int detfeed__np_argsort(const void *keys, detfeed_numpy_dtype type, int n, int *idx,
                        detfeed_numpy_sort variant);

#endif /* DETFEED_NPSORT_H */
