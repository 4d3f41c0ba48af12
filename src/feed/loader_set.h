/*
 * loader_set.h - the loader's settings (loader_set.c), for the handle
 * (internal): the table of the numeric settings gives a new loader its
 * defaults.
 */
#ifndef DETFEED_LOADER_SET_H
#define DETFEED_LOADER_SET_H

#include "detfeed.h"

/* Every setting of `l` at its default: the numeric ones from the table the
 * setters check (image limits 0: the dataset's defaults), the
 * hyperparameters detfeed__hyp_defaults()'s. The rest is the caller's. */
void detfeed__loader_defaults(detfeed_loader *l);

/* The refusal of setting `name` after detfeed_loader_open (DETFEED_EBADSTATE,
 * with its message): the settings are fixed, or, after an open that
 * failed, nothing but destroy is left. */
int detfeed__loader_refuse_set(detfeed_loader *l, const char *name);

#endif /* DETFEED_LOADER_SET_H */
