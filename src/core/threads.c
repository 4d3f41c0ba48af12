/*
 * threads.c - a pass over work items shared by a few threads.
 */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>

void detfeed__run_threads(int threads, void *(*fn)(void *), void *arg)
{
    pthread_t *tid = threads > 0 ? malloc((size_t)threads * sizeof *tid) : NULL;
    int started = 0;
    for (int t = 0; tid && t < threads; t++)
        if (pthread_create(&tid[started], NULL, fn, arg) == 0)
            started++;
    if (started == 0)
        fn(arg); /* no thread could start: the work runs on this one */
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    free(tid);
}
