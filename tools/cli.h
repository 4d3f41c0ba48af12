/*
 * cli.h - shared pieces of the detfeed command-line tool: the subcommand
 * table, a table-driven option parser and small helpers.
 */
#ifndef DETFEED_CLI_H
#define DETFEED_CLI_H

#include "detfeed.h"
#include "detfeed_img.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

/* Exit codes: 0 success, 1 the work failed, 2 the command line is wrong.
 * CLI_INTERRUPTED is internal: a signal stopped the work (the command then
 * cleans up and ends by that signal); far from every detfeed status, so that
 * a loader error (DETFEED_ENOMEM is -2) is never taken for a signal. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_INTERRUPTED = -1000 };

typedef enum cli_kind { CLI_FLAG, CLI_INT, CLI_DOUBLE, CLI_STRING } cli_kind;

/* One option: --name (CLI_FLAG) or --name VALUE / --name=VALUE. */
typedef struct cli_opt {
    const char *name; /* without the leading dashes */
    cli_kind kind;
    void *value;     /* bool*, long*, double* or const char** */
    const char *arg; /* the value's name in --help, NULL for flags */
    const char *help;
    long min, max; /* accepted range for CLI_INT */
} cli_opt;

/* A subcommand: its name, one-line summary, usage line and entry point. */
typedef struct cli_cmd {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} cli_cmd;

/* The most options one command may have. */
#define CLI_MAX_OPTS 64

/*
 * Parses argv[1..argc) against opts (terminated by a zeroed entry; at most
 * CLI_MAX_OPTS). An option given twice is refused (CLI_USAGE). Words
 * that are not options are collected into positional[] (at most npos_max;
 * their count in *npos). "--help" prints usage and the option table to
 * stdout and returns -1 (the caller exits 0). Errors are printed to stderr
 * and return CLI_USAGE. Returns 0 on success.
 */
int cli_parse(int argc, char **argv, const cli_opt *opts, const char *usage,
              const char *about, char **positional, int npos_max, int *npos);

/* cli_parse that also tells which options were given: seen[k] (an array
 * of CLI_MAX_OPTS) is true for opts[k] on the command line. */
int cli_parse_seen(int argc, char **argv, const cli_opt *opts, const char *usage,
                   const char *about, char **positional, int npos_max, int *npos,
                   bool *seen);

/* cli_parse for a command of exactly n positional words: any other count
 * prints "usage: ..." and returns CLI_USAGE. */
int cli_parse_exact(int argc, char **argv, const cli_opt *opts, const char *usage,
                    const char *about, char **positional, int n);

/* The --out of a command that writes a PNG: NULL (not given) or a name
 * ending in .png (any case); else prints the problem and returns
 * CLI_USAGE. */
int cli_png_out(const char *out);

/* The --epoch of a command that makes one epoch's images: below the
 * loader's epochs (DETFEED_LOADER_EPOCHS); else prints the problem, with
 * `how` the run's length is set, and returns CLI_USAGE. */
int cli_epoch_below(const detfeed_loader *l, long epoch, const char *how);

/* Prints "detfeed: <message>" to stderr; returns CLI_FAIL. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Strict number parsing: the whole string, finite, in range. */
bool cli_parse_double(const char *s, double *out);
bool cli_parse_long(const char *s, long min, long max, long *out);

/* Monotonic time in seconds. */
double cli_now(void);

/* Median of n values (sorts the array in place). */
double cli_median(double *v, int n);

/* The --isa option: "auto", "portable", "avx2" or "avx512", and available on
 * this CPU. Prints the problem and returns CLI_USAGE or CLI_FAIL otherwise. */
#define CLI_ISA_HELP "implementation: auto (default), portable, avx2, avx512"
int cli_isa_option(const char *s, detfeed_isa *out);
const char *cli_isa_name(detfeed_isa isa);

/* A progress line on stderr: what, a bar, count, rate and time left,
 * shown only when stderr is a terminal, not quiet (--quiet), and the work
 * has taken more than a second; updated at most 10 times a second. */
typedef struct cli_progress {
    double start, last;
    bool tty, shown;
    const char *what;
} cli_progress;

void cli_progress_init(cli_progress *p, const char *what, bool quiet);
void cli_progress_update(cli_progress *p, long done, long total);
/* Clears the line if it was shown. */
void cli_progress_end(cli_progress *p);

/* The progress of a library call that runs on this thread (an open), shown
 * from a thread of its own that reads `read(obj, ...)` (e.g.
 * detfeed_loader_progress) ten times a second: a line per stage. Nothing
 * runs when stderr is not a terminal or quiet. cli_watch_stop clears it. */
typedef const char *(*cli_progress_read)(const void *obj, uint64_t *done,
                                         uint64_t *total);
typedef struct cli_watch {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool running, stop;
    cli_progress_read read;
    const void *obj;
} cli_watch;

void cli_watch_start(cli_watch *w, cli_progress_read read, const void *obj, bool quiet);
void cli_watch_stop(cli_watch *w);
/* detfeed_loader_open under a progress line (cli_watch). */
int cli_open_loader(detfeed_loader *l, const char *data, bool quiet);
/* The readers of the library's long calls, as cli_progress_read. */
const char *cli_loader_progress(const void *loader, uint64_t *done, uint64_t *total);
const char *cli_dataset_progress(const void *ds, uint64_t *done, uint64_t *total);
const char *cli_disk_progress(const void *dc, uint64_t *done, uint64_t *total);

/* One epoch of a loader under a progress line, for the commands that run
 * whole epochs: cli_epoch_begin starts epoch e of `epochs` (the route's
 * note after the first start; the loader's message on failure),
 * cli_epoch_step counts a batch, cli_epoch_end clears the line and turns
 * the epoch's last detfeed_loader_next status into CLI_OK (the epoch
 * ended), CLI_INTERRUPTED, or the loader's message. */
typedef struct cli_epoch {
    detfeed_loader *loader;
    cli_progress bar;
    long epoch, epochs, per, done;
} cli_epoch;

int cli_epoch_begin(cli_epoch *it, detfeed_loader *l, long e, long epochs,
                    const char *what, bool quiet);
void cli_epoch_step(cli_epoch *it);
int cli_epoch_end(cli_epoch *it, int rc);

/* The --route and --output options: sets the loader's colour route
 * ("worker" or "device") and output ("host", "cuda", or "auto": CUDA for
 * the device route, host for the worker route). Returns CLI_OK, or
 * CLI_USAGE after printing the problem. */
#define CLI_ROUTE_HELP                                                                 \
    "where images are made: worker (default), device (colour in CUDA) or recipe "      \
    "(the whole image in CUDA, with the RAM cache)"
#define CLI_OUTPUT_HELP                                                                \
    "batches in host or cuda memory (default: cuda for --route device or recipe)"
int cli_route_set(detfeed_loader *l, const char *route, const char *output);
/* After the first detfeed_loader_start: one line on stderr when the loader
 * runs another route or output than asked for, and why. */
void cli_route_note(const detfeed_loader *l);
/* "worker/host", "device/cuda", ...: the route and output in effect. */
const char *cli_route_name(const detfeed_loader *l);

/*
 * Text from the data (file names, label lines in messages) as the CLI
 * writes it, so that a terminal never receives a control sequence and JSON
 * stays valid UTF-8:
 *   cli_json_string  a JSON string literal: '"' and '\\' escaped, control
 *                    characters (C0, DEL, C1) as \\u00XX, each byte that is
 *                    not part of well-formed UTF-8 as \\ufffd (U+FFFD);
 *   cli_text         as is, except control characters (every C0, DEL and
 *                    C1, newline and tab included) and bytes that are not
 *                    well-formed UTF-8: each of their bytes as \\xHH.
 * cli_error writes its message through cli_text.
 */
void cli_json_string(FILE *out, const char *s);
void cli_text(FILE *out, const char *s);

/* A sample's recipe as one JSON object (no newline): the struct's fields
 * under their names, the mixup partner's draws as the object "mix_recipe",
 * doubles with 17 significant digits (tools/recipe_json.c). */
void cli_recipe_json(FILE *out, const detfeed_recipe *r);

/*
 * What a loader left out: images that failed verification when it opened
 * (DETFEED_STAT_CORRUPT of its dataset) and samples replaced since
 * (detfeed_loader_skipped, with the first one's message). replay, bench and
 * grid print them: cli_skips_text as part of their summary, cli_skips_json
 * as the fields "corrupt", "skipped" and "first_skip" (a string or null) of
 * their JSON object, cli_skips_note a line on stderr for each kind there is.
 */
typedef struct cli_skips {
    int64_t corrupt, replaced;
    const char *first; /* the first replacement's message, or NULL */
} cli_skips;
cli_skips cli_skips_of(const detfeed_loader *l);
void cli_skips_text(FILE *out, const cli_skips *k);
void cli_skips_json(FILE *out, const cli_skips *k);
void cli_skips_note(const cli_skips *k);

/*
 * What the loader's check did when it opened (detfeed_loader_verify_stat,
 * _path and _note): cli_verify_note a line on stderr with the note (and,
 * with cache disk, a line with what opening the disk cache found and did:
 * reused, built and why, and cli_damage_note's lines),
 * cli_verify_json the fields "verify_decoded", "verify_reused",
 * "verify_record" (none, reused, written, unwritten) and "verify_path" (a
 * string or null) of a JSON object.
 */
void cli_verify_note(const detfeed_loader *l);
/* A line on stderr for each image the loader's disk cache found damaged
 * (decoded from its file instead), after a run. */
void cli_damage_note(const detfeed_loader *l);
void cli_verify_json(FILE *out, const detfeed_loader *l);

/* Subcommands. */
int cmd_check(int argc, char **argv);
int cmd_color(int argc, char **argv);
int cmd_sample(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_grid(int argc, char **argv);
int cmd_cache(int argc, char **argv);

/* Writes the synthetic dataset of `detfeed synth` into dir. */
int cli_synth(const char *dir, long n, long imgsz, uint64_t seed, bool quiet);
/* The same, stopping with CLI_INTERRUPTED (and no message) before the next
 * image once *stop is nonzero (stop may be NULL). */
int cli_synth_until(const char *dir, long n, long imgsz, uint64_t seed,
                    const atomic_int *stop, bool quiet);

/* Removes dir and everything below it without a shell (nftw, depth first,
 * symbolic links removed, never followed); false, with errno, when
 * something could not be removed. */
bool cli_remove_tree(const char *dir);

/* A loader setting that a command's --set refuses: `option` is the
 * command's own option for it ("--imgsz"), or NULL where the command does
 * not take the setting at all. */
typedef struct cli_owned {
    detfeed_loader_param param;
    const char *option;
} cli_owned;

/* The --set rules of one command: its name ("replay"), the n settings it
 * refuses, and why it does not take those without an option (for the
 * message). */
typedef struct cli_set_rules {
    const char *command;
    const cli_owned *owned;
    size_t n;
    const char *why;
} cli_set_rules;

/*
 * Applies "name=value,..." loader settings (detfeed_loader_set: the
 * hyperparameters, the reference stack, the caches and any other setting
 * by name) for the command of `rules`. The list is split at each comma
 * followed by NAME= (letters, digits, underscores, then '='), so a value
 * may hold commas ("classes=0,2,mosaic=0.5"). A setting given twice, and a
 * setting of rules->owned, are refused (CLI_USAGE, with a message naming
 * it), as is a value the library refuses (its message).
 */
int cli_set_hyps(detfeed_loader *l, const char *list, const cli_set_rules *rules);
int cmd_bench(int argc, char **argv);

#endif /* DETFEED_CLI_H */
