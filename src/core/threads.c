/*
 * threads.c - a pass over work items shared by a few threads, and thread
 * names.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* pthread_setname_np takes at most 15 bytes and a NUL. */
static void set_name(pthread_t t, const char *name)
{
    char s[16];
    size_t n = strlen(name);
    n = n < sizeof s - 1 ? n : sizeof s - 1;
    memcpy(s, name, n);
    s[n] = '\0';
    (void)pthread_setname_np(t, s);
}

void detfeed__name_thread(const char *name)
{
    set_name(pthread_self(), name);
}

void detfeed__run_threads(int threads, const char *name, void *(*fn)(void *), void *arg)
{
    pthread_t *tid = threads > 0 ? malloc((size_t)threads * sizeof *tid) : NULL;
    int started = 0;
    for (int t = 0; tid && t < threads; t++)
        if (pthread_create(&tid[started], NULL, fn, arg) == 0)
            set_name(tid[started++], name);
    if (started == 0)
        fn(arg); /* no thread could start: the work runs on this one */
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    free(tid);
}
