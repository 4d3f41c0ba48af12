/*
 * cli_progress.c - the tool's progress lines: a bar with count, rate and
 * time left on stderr, for its own loops and, from a thread of its own, for
 * the library's long calls (an open's indexing, cache fill and check).
 */
#include "cli.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>

void cli_progress_init(cli_progress *p, const char *what, bool quiet)
{
    p->start = p->last = cli_now();
    p->tty = !quiet && isatty(2);
    p->shown = false;
    p->what = what;
}

/* "1m05s" or "12s": a time left. */
static void left_text(char *out, size_t n, double s)
{
    if (s >= 60)
        snprintf(out, n, "%ldm%02lds", (long)s / 60, (long)s % 60);
    else
        snprintf(out, n, "%lds", (long)s);
}

void cli_progress_update(cli_progress *p, long done, long total)
{
    double now = cli_now();
    if (!p->tty || now - p->start < 1.0 || (now - p->last < 0.1 && done < total))
        return;
    p->last = now;
    p->shown = true;
    int width = 24,
        fill = total > 0 ? (int)(width * (done < total ? done : total) / total) : 0;
    char bar[25], left[48] = "?";
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[width] = '\0';
    double rate = done / (now - p->start);
    if (rate > 0 && total >= done)
        left_text(left, sizeof left, (total - done) / rate);
    fprintf(stderr, "\r\033[K%s [%s] %ld/%ld, %.1f/s, %s left", p->what, bar, done,
            total, rate, left);
    fflush(stderr);
}

void cli_progress_end(cli_progress *p)
{
    if (p->shown)
        fputs("\r\033[K", stderr);
    p->shown = false;
}

const char *cli_loader_progress(const void *loader, uint64_t *done, uint64_t *total)
{
    return detfeed_loader_progress(loader, done, total);
}

const char *cli_dataset_progress(const void *ds, uint64_t *done, uint64_t *total)
{
    return detfeed_dataset_progress(ds, done, total);
}

const char *cli_disk_progress(const void *dc, uint64_t *done, uint64_t *total)
{
    return detfeed_disk_cache_progress(dc, done, total);
}

int cli_open_loader(detfeed_loader *l, const char *data, bool quiet)
{
    cli_watch w;
    cli_watch_start(&w, cli_loader_progress, l, quiet);
    int rc = detfeed_loader_open(l, data);
    cli_watch_stop(&w);
    return rc;
}

/* Waits up to a tenth of a second for stop; true once it is asked. */
static bool stopped(cli_watch *w)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += 100000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->lock);
    while (!w->stop && pthread_cond_timedwait(&w->wake, &w->lock, &t) != ETIMEDOUT)
        ;
    bool stop = w->stop;
    pthread_mutex_unlock(&w->lock);
    return stop;
}

static void *watch(void *arg)
{
    cli_watch *w = arg;
    cli_progress bar = {.shown = false};
    const char *shown = NULL;
    while (!stopped(w)) {
        uint64_t done, total;
        const char *stage = w->read(w->obj, &done, &total);
        if (stage != shown) { /* a new stage: a line of its own */
            cli_progress_end(&bar);
            cli_progress_init(&bar, stage ? stage : "", false);
            shown = stage;
        }
        if (stage)
            cli_progress_update(&bar, (long)done, (long)total);
    }
    cli_progress_end(&bar);
    return NULL;
}

void cli_watch_start(cli_watch *w, cli_progress_read read, const void *obj, bool quiet)
{
    *w = (cli_watch){.read = read, .obj = obj};
    if (quiet || !isatty(2))
        return;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    w->running = pthread_create(&w->thread, NULL, watch, w) == 0;
    if (!w->running) { /* no line then: the work goes on all the same */
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
    }
}

void cli_watch_stop(cli_watch *w)
{
    if (!w->running)
        return;
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    w->running = false;
}
