/*
 * cli_util.c - the option parser and helpers shared by the subcommands.
 */
#define _XOPEN_SOURCE 700 /* nftw */

#include "cli.h"

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

int cli_error(const char *fmt, ...)
{
    char msg[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fputs("detfeed: ", stderr);
    cli_text(stderr, msg);
    fputc('\n', stderr);
    return CLI_FAIL;
}

/* The length of the well-formed UTF-8 sequence at s (1 to 4) and its code
 * point, or 0 when the bytes there are not one (a stray continuation byte,
 * a truncated sequence, an overlong form, a surrogate, beyond U+10FFFF). */
static int utf8_seq(const unsigned char *s, uint32_t *cp)
{
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    int n = s[0] < 0x80                   ? 1
            : s[0] >= 0xc2 && s[0] < 0xe0 ? 2
            : s[0] >= 0xe0 && s[0] < 0xf0 ? 3
            : s[0] >= 0xf0 && s[0] < 0xf5 ? 4
                                          : 0;
    if (n == 0)
        return 0;
    uint32_t c = n == 1 ? s[0] : s[0] & (0x7f >> n);
    for (int k = 1; k < n; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0; /* also stops at the NUL */
        c = c << 6 | (s[k] & 0x3f);
    }
    if (c < min[n] || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
        return 0;
    *cp = c;
    return n;
}

/* C0 and C1 control characters and DEL: what a terminal may act on. */
static bool is_control(uint32_t c)
{
    return c < 0x20 || (c >= 0x7f && c <= 0x9f);
}

void cli_text(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        uint32_t c = 0;
        int n = utf8_seq(p, &c);
        if (n == 0 || is_control(c)) {
            for (int k = 0; k < (n ? n : 1); k++)
                fprintf(out, "\\x%02x", p[k]);
            p += n ? n : 1;
        } else {
            fwrite(p, 1, (size_t)n, out);
            p += n;
        }
    }
}

bool cli_parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
        return false;
    *out = v;
    return true;
}

bool cli_parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || v < min || v > max)
        return false;
    *out = v;
    return true;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static const char *const isa_names[] = {"auto", "portable", "avx2", "avx512"};
#define NISA (int)(sizeof isa_names / sizeof isa_names[0])

int cli_isa_option(const char *s, detfeed_isa *out)
{
    for (int i = 0; i < NISA; i++) {
        if (strcmp(s, isa_names[i]) == 0) {
            *out = (detfeed_isa)i;
            if (!detfeed_isa_available(*out))
                return cli_error("--isa %s: not available on this CPU", s);
            return CLI_OK;
        }
    }
    cli_error("--isa: '%s' is not auto, portable, avx2 or avx512", s);
    return CLI_USAGE;
}

const char *cli_isa_name(detfeed_isa isa)
{
    return (int)isa >= 0 && (int)isa < NISA ? isa_names[isa] : "?";
}

static void print_help(const cli_opt *opts, const char *usage, const char *about)
{
    printf("usage: %s\n\n%s\n\noptions:\n", usage, about);
    for (const cli_opt *o = opts; o->name; o++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
        printf("  %-22s %s\n", left, o->help);
    }
    printf("  %-22s %s\n", "--help", "show this help and exit");
}

static const cli_opt *find_opt(const cli_opt *opts, const char *name, size_t len)
{
    for (const cli_opt *o = opts; o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

static int set_opt(const cli_opt *o, const char *val)
{
    switch (o->kind) {
    case CLI_FLAG:
        *(bool *)o->value = true;
        return 0;
    case CLI_INT:
        if (!cli_parse_long(val, o->min, o->max, (long *)o->value)) {
            cli_error("--%s: '%s' is not a whole number in [%ld, %ld]", o->name, val,
                      o->min, o->max);
            return CLI_USAGE;
        }
        return 0;
    case CLI_DOUBLE:
        if (!cli_parse_double(val, (double *)o->value)) {
            cli_error("--%s: '%s' is not a finite number", o->name, val);
            return CLI_USAGE;
        }
        return 0;
    case CLI_STRING:
        *(const char **)o->value = val;
        return 0;
    }
    return CLI_USAGE;
}

/* Handles one "--name[=value]" word at argv[*i]; may consume the next. An
 * option given a second time is refused: its first value would otherwise be
 * dropped without a word (seen[] marks the options of opts given so far). */
static int parse_one(int argc, char **argv, int *i, const cli_opt *opts, bool *seen)
{
    const char *word = argv[*i] + 2, *eq = strchr(word, '=');
    size_t len = eq ? (size_t)(eq - word) : strlen(word);
    const cli_opt *o = find_opt(opts, word, len);
    if (o == NULL) {
        cli_error("unknown option '%s' (see --help)", argv[*i]);
        return CLI_USAGE;
    }
    if (seen[o - opts]) {
        cli_error("--%s given twice: give it once%s", o->name,
                  strcmp(o->name, "set") == 0 ? " (one --set takes K=V,K=V,...)" : "");
        return CLI_USAGE;
    }
    seen[o - opts] = true;
    if (o->kind == CLI_FLAG) {
        if (eq) {
            cli_error("--%s takes no value", o->name);
            return CLI_USAGE;
        }
        return set_opt(o, NULL);
    }
    if (eq)
        return set_opt(o, eq + 1);
    if (*i + 1 >= argc) {
        cli_error("--%s needs a value (%s)", o->name, o->arg);
        return CLI_USAGE;
    }
    return set_opt(o, argv[++*i]);
}

int cli_parse(int argc, char **argv, const cli_opt *opts, const char *usage,
              const char *about, char **positional, int npos_max, int *npos)
{
    bool seen[CLI_MAX_OPTS];
    return cli_parse_seen(argc, argv, opts, usage, about, positional, npos_max, npos,
                          seen);
}

int cli_parse_seen(int argc, char **argv, const cli_opt *opts, const char *usage,
                   const char *about, char **positional, int npos_max, int *npos,
                   bool *seen)
{
    *npos = 0;
    bool only_positional = false;
    memset(seen, 0, CLI_MAX_OPTS * sizeof *seen);
    size_t nopts = 0;
    while (opts[nopts].name)
        nopts++;
    if (nopts > CLI_MAX_OPTS)
        return cli_error("internal: more than %d options", CLI_MAX_OPTS), CLI_FAIL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_positional && strcmp(a, "--help") == 0) {
            print_help(opts, usage, about);
            return -1;
        }
        if (!only_positional && strcmp(a, "--") == 0) {
            only_positional = true;
        } else if (!only_positional && a[0] == '-' && a[1] == '-') {
            int rc = parse_one(argc, argv, &i, opts, seen);
            if (rc)
                return rc;
        } else if (*npos < npos_max) {
            positional[(*npos)++] = argv[i];
        } else {
            cli_error("unexpected argument '%s' (usage: %s)", a, usage);
            return CLI_USAGE;
        }
    }
    return 0;
}

int cli_parse_exact(int argc, char **argv, const cli_opt *opts, const char *usage,
                    const char *about, char **positional, int n)
{
    int got;
    int rc = cli_parse(argc, argv, opts, usage, about, positional, n, &got);
    if (rc == 0 && got != n) {
        cli_error("usage: %s", usage);
        return CLI_USAGE;
    }
    return rc;
}

int cli_png_out(const char *out)
{
    size_t n = out ? strlen(out) : 0;
    if (out && n == 0) {
        cli_error("--out takes a file name");
        return CLI_USAGE;
    }
    if (out && (n < 4 || strcasecmp(out + n - 4, ".png") != 0)) {
        cli_error("--out %s: the picture is written as PNG: give a name ending in .png",
                  out);
        return CLI_USAGE;
    }
    return CLI_OK;
}

int cli_epoch_below(const detfeed_loader *l, long epoch, const char *how)
{
    int64_t epochs = 0;
    if (detfeed_loader_get_int(l, DETFEED_LOADER_EPOCHS, &epochs) != DETFEED_OK ||
        epoch < epochs)
        return CLI_OK;
    cli_error("--epoch %ld: the run has %lld epochs, 0 to %lld (%s)", epoch,
              (long long)epochs, (long long)epochs - 1, how);
    return CLI_USAGE;
}

void cli_json_string(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    while (*p) {
        uint32_t c = 0;
        int n = utf8_seq(p, &c);
        if (n == 0)
            fputs("\\ufffd", out); /* a byte that is not UTF-8 */
        else if (c == '"' || c == '\\')
            fprintf(out, "\\%c", (int)c);
        else if (is_control(c))
            fprintf(out, "\\u%04x", (unsigned)c);
        else
            fwrite(p, 1, (size_t)n, out);
        p += n ? n : 1;
    }
    fputc('"', out);
}

int cli_route_set(detfeed_loader *l, const char *route, const char *output)
{
    static const char *const names[] = {"worker", "device", "recipe"};
    int which = -1;
    for (int k = 0; k < 3; k++)
        if (strcmp(route, names[k]) == 0)
            which = k;
    if (which < 0) {
        cli_error("--route takes worker, device or recipe");
        return CLI_USAGE;
    }
    if (output == NULL || strcmp(output, "auto") == 0)
        output = which != DETFEED_ROUTE_WORKER ? "cuda" : "host";
    bool cuda = strcmp(output, "cuda") == 0;
    if (!cuda && strcmp(output, "host") != 0) {
        cli_error("--output takes host, cuda or auto");
        return CLI_USAGE;
    }
    if (detfeed_loader_set_int(l, DETFEED_LOADER_COLOR, which) ||
        detfeed_loader_set_int(l, DETFEED_LOADER_OUTPUT,
                               cuda ? DETFEED_OUTPUT_CUDA : DETFEED_OUTPUT_HOST)) {
        cli_error("%s", detfeed_loader_last_error(l));
        return CLI_USAGE;
    }
    return CLI_OK;
}

const char *cli_route_name(const detfeed_loader *l)
{
    detfeed_output out = DETFEED_OUTPUT_HOST;
    detfeed_route route = DETFEED_ROUTE_WORKER;
    detfeed_loader_route(l, &out, &route, NULL);
    static const char *const names[3][2] = {{"worker/host", "worker/cuda"},
                                            {"device/host", "device/cuda"},
                                            {"recipe/host", "recipe/cuda"}};
    int k = route == DETFEED_ROUTE_RECIPE ? 2 : route == DETFEED_ROUTE_DEVICE;
    return names[k][out == DETFEED_OUTPUT_CUDA];
}

void cli_route_note(const detfeed_loader *l)
{
    const char *why = NULL;
    if (detfeed_loader_route(l, NULL, NULL, &why) == DETFEED_OK && why != NULL)
        fprintf(stderr, "detfeed: %s: running %s (the same bytes)\n", why,
                cli_route_name(l));
}

int cli_epoch_begin(cli_epoch *it, detfeed_loader *l, long e, long epochs,
                    const char *what, bool quiet)
{
    *it = (cli_epoch){.loader = l, .epoch = e, .epochs = epochs};
    if (detfeed_loader_start(l, (uint32_t)e) != DETFEED_OK)
        return cli_error("%s", detfeed_loader_last_error(l));
    if (e == 0)
        cli_route_note(l);
    cli_progress_init(&it->bar, what, quiet);
    it->per = (long)detfeed_loader_batch_count(l);
    return CLI_OK;
}

void cli_epoch_step(cli_epoch *it)
{
    cli_progress_update(&it->bar, it->epoch * it->per + ++it->done,
                        it->epochs * it->per);
}

int cli_epoch_end(cli_epoch *it, int rc)
{
    cli_progress_end(&it->bar);
    if (rc == CLI_INTERRUPTED)
        return rc;
    return rc == DETFEED_NEXT_END
               ? CLI_OK
               : cli_error("%s", detfeed_loader_last_error(it->loader));
}

cli_skips cli_skips_of(const detfeed_loader *l)
{
    cli_skips k = {.first = NULL};
    k.corrupt =
        detfeed_dataset_stat_get(detfeed_loader_dataset(l), DETFEED_STAT_CORRUPT);
    k.replaced = detfeed_loader_skipped(l, &k.first);
    return k;
}

void cli_skips_text(FILE *out, const cli_skips *k)
{
    fprintf(out,
            "skipped: %lld corrupt image%s left out when opening, %lld sample%s "
            "replaced",
            (long long)k->corrupt, k->corrupt == 1 ? "" : "s", (long long)k->replaced,
            k->replaced == 1 ? "" : "s");
}

void cli_skips_json(FILE *out, const cli_skips *k)
{
    fprintf(out,
            ",\"corrupt\":%lld,\"skipped\":%lld,\"first_skip\":", (long long)k->corrupt,
            (long long)k->replaced);
    if (k->first)
        cli_json_string(out, k->first);
    else
        fputs("null", out);
}

void cli_skips_note(const cli_skips *k)
{
    if (k->corrupt > 0)
        fprintf(stderr,
                "detfeed: %lld corrupt image%s left out when opening "
                "(detfeed check lists them)\n",
                (long long)k->corrupt, k->corrupt == 1 ? "" : "s");
    if (k->replaced > 0 && k->first) {
        fprintf(stderr,
                "detfeed: %lld sample%s replaced by the next readable image; the "
                "first: ",
                (long long)k->replaced, k->replaced == 1 ? "" : "s");
        cli_text(stderr, k->first);
        fputc('\n', stderr);
    }
}

static void note_line(const char *what, const char *note)
{
    if (note == NULL || note[0] == '\0')
        return;
    fprintf(stderr, "detfeed: %s: ", what);
    cli_text(stderr, note);
    fputc('\n', stderr);
}

void cli_damage_note(const detfeed_loader *l)
{
    const detfeed_disk_cache *dc = detfeed_loader_disk_cache(l);
    int64_t n = dc ? detfeed_disk_cache_stat_get(dc, DETFEED_DISK_DAMAGED) : 0;
    char line[1024];
    for (int64_t k = 0; k < n; k++) {
        if (detfeed_disk_cache_damage(dc, (size_t)k, line, sizeof line) != DETFEED_OK) {
            fprintf(stderr,
                    "detfeed: disk cache: %lld more images found damaged (decoded from "
                    "their files instead)\n",
                    (long long)(n - k));
            break;
        }
        note_line("disk cache", line);
    }
}

void cli_verify_note(const detfeed_loader *l)
{
    note_line("verification", detfeed_loader_verify_note(l));
    const detfeed_disk_cache *dc = detfeed_loader_disk_cache(l);
    if (dc)
        note_line("disk cache", detfeed_disk_cache_note(dc));
    cli_damage_note(l);
}

void cli_verify_json(FILE *out, const detfeed_loader *l)
{
    static const char *const states[] = {"none", "reused", "written", "unwritten"};
    int64_t state = detfeed_loader_verify_stat(l, DETFEED_VERIFY_STAT_RECORD);
    const char *path = detfeed_loader_verify_path(l);
    fprintf(out,
            ",\"verify_decoded\":%lld,\"verify_reused\":%lld,\"verify_record\":\"%s\","
            "\"verify_path\":",
            (long long)detfeed_loader_verify_stat(l, DETFEED_VERIFY_STAT_DECODED),
            (long long)detfeed_loader_verify_stat(l, DETFEED_VERIFY_STAT_REUSED),
            state >= 0 && state < 4 ? states[state] : "none");
    if (path)
        cli_json_string(out, path);
    else
        fputs("null", out);
}

static int remove_entry(const char *path, const struct stat *st, int type,
                        struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path) == 0 ? 0 : -1; /* unlink, or rmdir for a folder */
}

bool cli_remove_tree(const char *dir)
{
    return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0;
}
