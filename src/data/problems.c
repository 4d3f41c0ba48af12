/*
 * problems.c - the dataset's problem report: what was skipped or noted
 * while indexing, and which problems fail the open under
 * DETFEED_POLICY_FAIL.
 */
#include "dataset_internal.h"

#include <stdlib.h>
#include <string.h>

/* Records a problem. Notes never stop the open; a problem that is not a
 * note fails it under DETFEED_POLICY_FAIL (the return value, with the
 * message set). */
int detfeed__problem_add(detfeed_dataset *ds, const char *file, int line,
                         const char *reason, bool note)
{
    if (ds->nproblems < ds->max_problems) {
        if (ds->nproblems == ds->cap_problems) {
            size_t cap = ds->cap_problems ? ds->cap_problems * 2 : 64;
            detfeed__problem *p = realloc(ds->problems, cap * sizeof *p);
            if (p == NULL)
                return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
            ds->problems = p;
            ds->cap_problems = cap;
        }
        detfeed__problem *p = &ds->problems[ds->nproblems];
        p->file = detfeed__str_dup(file);
        p->reason = detfeed__str_dup(reason);
        p->line = line;
        p->note = note;
        p->setting = false;
        if (p->file == NULL || p->reason == NULL) {
            free(p->file);
            free(p->reason);
            return detfeed__fail(&ds->msg, DETFEED_ENOMEM, "out of memory");
        }
        ds->nproblems++;
    }
    if (note || ds->policy != DETFEED_POLICY_FAIL)
        return DETFEED_OK;
    if (line > 0)
        return detfeed__fail(&ds->msg, DETFEED_ELABEL, "%s:%d: %s", file, line, reason);
    return detfeed__fail(&ds->msg, DETFEED_ECORRUPT, "%s: %s", file, reason);
}

int detfeed__setting_note(detfeed_dataset *ds, const char *source, const char *note)
{
    size_t before = ds->nproblems;
    int rc = detfeed__problem_add(ds, source, 0, note, true);
    if (ds->nproblems > before)
        ds->problems[before].setting = true;
    return rc;
}

/* A codec message is "path: reason"; the reason alone for the report. */
const char *detfeed__reason_of(const char *msg, const char *path)
{
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        return msg + n + 2;
    return msg;
}
