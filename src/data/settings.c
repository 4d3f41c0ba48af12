/*
 * settings.c - Ultralytics' datasets_dir, read where Ultralytics 8.4 keeps
 * it: the "datasets_dir" string of settings.json in its user config folder
 * (ultralytics/utils/__init__.py: get_user_config_dir, SettingsManager).
 * Nothing is created or written here: where Ultralytics would create the
 * folder or the file, it would hold the defaults, and the default is
 * what is used.
 */
#include "resolve.h"

#include "path.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the folder ------------------------------------------------------------ */

/* Python's os.path.expanduser: "~" and "~/..." from $HOME (the password
 * entry where HOME is unset), "~name/..." from name's entry; anything else,
 * or an unknown name, as it is. */
static char *expand_user(const char *path)
{
    if (path[0] != '~')
        return detfeed__str_dup(path);
    const char *slash = strchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : strlen(path);
    const char *home = NULL;
    if (n == 1 && (home = getenv("HOME")) == NULL) {
        struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    } else if (n > 1) {
        char name[256];
        struct passwd *pw = NULL;
        if (n - 1 < sizeof name) {
            memcpy(name, path + 1, n - 1);
            name[n - 1] = '\0';
            pw = getpwnam(name);
        }
        home = pw ? pw->pw_dir : NULL;
    }
    if (home == NULL)
        return detfeed__str_dup(path);
    size_t h = strlen(home);
    while (h > 0 && home[h - 1] == '/') /* userhome.rstrip("/") */
        h--;
    char *out = malloc(h + strlen(path + n) + 2);
    if (out) {
        memcpy(out, home, h);
        strcpy(out + h, path + n);
        if (out[0] == '\0') /* "" or "/" home: "/" */
            strcpy(out, "/");
    }
    return out;
}

/* Whether `dir` is a folder, or could be made with its parents
 * (Path.mkdir(parents=True, exist_ok=True) would succeed): the nearest
 * part of it that exists is a folder this process may write in. */
static bool could_be_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0)
        return S_ISDIR(st.st_mode);
    char *up = detfeed__path_dir(dir);
    bool ok = false;
    while (up && stat(up, &st) != 0 && strcmp(up, ".") && strcmp(up, "/")) {
        char *next = detfeed__path_dir(up);
        free(up);
        up = next;
    }
    if (up && stat(up, &st) == 0)
        ok = S_ISDIR(st.st_mode) && access(up, W_OK | X_OK) == 0;
    free(up);
    return ok;
}

/* Python's tempfile.gettempdir(): the first of $TMPDIR, $TEMP, $TMP, /tmp,
 * /var/tmp, /usr/tmp that is a folder this process may write in, else the
 * working folder ("."). */
static const char *temp_dir(void)
{
    const char *env[] = {"TMPDIR", "TEMP", "TMP"};
    for (size_t i = 0; i < 3; i++) {
        const char *d = getenv(env[i]);
        if (d && d[0] && access(d, W_OK | X_OK) == 0)
            return d;
    }
    const char *fixed[] = {"/tmp", "/var/tmp", "/usr/tmp"};
    for (size_t i = 0; i < 3; i++)
        if (access(fixed[i], W_OK | X_OK) == 0)
            return fixed[i];
    return ".";
}

/* The fallback get_user_config_dir takes where its folder cannot be made:
 * <temp>/Ultralytics-<uid>, when it is this user's own folder of mode 0700
 * (not a link); NULL otherwise (Ultralytics would make a new, empty one). */
static char *fallback_dir(void)
{
    char name[64];
    snprintf(name, sizeof name, "Ultralytics-%lu", (unsigned long)getuid());
    char *alt = detfeed__path_join(temp_dir(), name);
    struct stat st;
    if (alt && (lstat(alt, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
                (st.st_mode & 0777) != 0700)) {
        free(alt);
        alt = NULL;
    }
    return alt;
}

/* get_user_config_dir("Ultralytics"): $YOLO_CONFIG_DIR (expanded),
 * $XDG_CONFIG_HOME (as it is, "" being the working folder) or
 * ~/.config, then "Ultralytics"; the fallback where that cannot be a
 * folder. *none is set where there is no folder to read (NULL returned). */
static char *config_dir(bool *none)
{
    const char *env = getenv("YOLO_CONFIG_DIR");
    const char *xdg = getenv("XDG_CONFIG_HOME");
    char *base = env && env[0] ? expand_user(env)
                 : xdg         ? detfeed__str_dup(xdg[0] ? xdg : ".")
                               : expand_user("~/.config");
    char *dir = base ? detfeed__path_join(base, "Ultralytics") : NULL;
    free(base);
    *none = false;
    if (dir == NULL || could_be_dir(dir))
        return dir;
    free(dir);
    dir = fallback_dir();
    *none = dir == NULL;
    return dir;
}

/* ---- settings.json ------------------------------------------------------- */

/* A JSON text being read (Python's json module: strict strings, NaN and
 * Infinity taken, duplicate keys: the last one counts). */
typedef struct json {
    const char *p, *end;
    int depth;
    bool oom;
} json;

static void json_space(json *j)
{
    while (j->p < j->end &&
           (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static bool json_word(json *j, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
        return false;
    j->p += n;
    return true;
}

static bool json_digits(json *j)
{
    const char *s = j->p;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
        j->p++;
    return j->p > s;
}

static bool json_number(json *j)
{
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (json_word(j, "Infinity"))
        return true;
    if (j->p < j->end && *j->p == '0')
        j->p++;
    else if (!json_digits(j))
        return false;
    if (j->p < j->end && *j->p == '.' && (j->p++, !json_digits(j)))
        return false;
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
            j->p++;
        return json_digits(j);
    }
    return true;
}

static int hex4(const char *s, const char *end)
{
    int v = 0;
    for (int k = 0; k < 4; k++) {
        if (s + k >= end)
            return -1;
        char c = s[k];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Code point c as UTF-8 into out; a lone surrogate U+DC80..U+DCFF as the
 * byte it escapes (os.fsencode's surrogateescape); other lone surrogates
 * and NUL: *bad set (no path can hold them). */
static size_t put_utf8(char *out, long c, bool *bad)
{
    if (c == 0 || (c >= 0xD800 && c <= 0xDFFF && (c < 0xDC80 || c > 0xDCFF))) {
        *bad = true;
        return 0;
    }
    if (c >= 0xDC80 && c <= 0xDCFF) {
        out[0] = (char)(c - 0xDC00);
        return 1;
    }
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 63));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 63));
        out[2] = (char)(0x80 | (c & 63));
        return 3;
    }
    out[0] = (char)(0xF0 | (c >> 18));
    out[1] = (char)(0x80 | ((c >> 12) & 63));
    out[2] = (char)(0x80 | ((c >> 6) & 63));
    out[3] = (char)(0x80 | (c & 63));
    return 4;
}

/* A \u escape at j->p (after the backslash and 'u'), with the low half
 * of a surrogate pair that follows it, as one code point; -1 malformed. */
static long json_unicode(json *j)
{
    long c = hex4(j->p, j->end);
    if (c < 0)
        return -1;
    j->p += 4;
    if (c >= 0xD800 && c <= 0xDBFF && j->end - j->p >= 6 && j->p[0] == '\\' &&
        j->p[1] == 'u') {
        long lo = hex4(j->p + 2, j->end);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            j->p += 6;
            c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
        }
    }
    return c;
}

/* One escape after a backslash into out (at least 4 bytes). */
static bool json_escape(json *j, char *out, size_t *n, bool *bad)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (j->p >= j->end)
        return false;
    char e = *j->p++;
    const char *k = strchr(from, e);
    if (e != '\0' && k) {
        out[(*n)++] = to[k - from];
        return true;
    }
    long c = e == 'u' ? json_unicode(j) : -1;
    if (c < 0)
        return false;
    *n += put_utf8(out + *n, c, bad);
    return true;
}

/* A string at j->p (its opening quote): into *out (malloc'd) when out is
 * not NULL, with *bad set for what no path can hold. */
static bool json_string(json *j, char **out, bool *bad)
{
    if (j->p >= j->end || *j->p != '"')
        return false;
    j->p++;
    char *s = out ? malloc((size_t)(j->end - j->p) + 4) : NULL;
    char scratch[8];
    size_t n = 0;
    bool ok = out == NULL || s != NULL;
    j->oom |= !ok;
    while (ok && j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if ((unsigned char)c < 0x20) /* strict: control characters escaped */
            ok = false;
        else if (c == '\\') {
            size_t none = 0; /* a string skipped: its escapes go to scratch */
            ok = json_escape(j, s ? s : scratch, s ? &n : &none, bad);
        } else if (s)
            s[n++] = c;
    }
    ok = ok && j->p < j->end;
    j->p++;
    if (ok && s) {
        s[n] = '\0';
        *out = s;
    } else {
        free(s);
    }
    return ok;
}

static bool json_value(json *j);

/* The members of an object (from after its '{') or the items of an array
 * (from after its '['), to the closing bracket. */
static bool json_items(json *j, char close, bool keys)
{
    json_space(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return true;
    }
    for (;;) {
        bool bad = false;
        json_space(j);
        if (keys && !(json_string(j, NULL, &bad) && (json_space(j), json_word(j, ":"))))
            return false;
        if (!json_value(j))
            return false;
        json_space(j);
        if (json_word(j, ","))
            continue;
        return json_word(j, close == '}' ? "}" : "]");
    }
}

/* Any value, skipped. */
static bool json_value(json *j)
{
    json_space(j);
    if (j->p >= j->end || ++j->depth > 500)
        return false;
    bool bad = false, ok;
    if (*j->p == '{' || *j->p == '[') {
        char open = *j->p++;
        ok = json_items(j, open == '{' ? '}' : ']', open == '{');
    } else if (*j->p == '"') {
        ok = json_string(j, NULL, &bad);
    } else {
        ok = json_word(j, "true") || json_word(j, "false") || json_word(j, "null") ||
             json_word(j, "NaN") || json_number(j);
    }
    j->depth--;
    return ok;
}

/* The last "datasets_dir" member of the top-level object in `text` when it
 * is a string: 1 (*out malloc'd, *bad for what no path holds); 0 when
 * there is none, or the text is not a JSON object (Ultralytics then
 * starts from its defaults); -1 when out of memory. */
static int json_datasets_dir(const char *text, size_t len, char **out, bool *bad)
{
    json j = {text, text + len, 1, false};
    json_space(&j);
    if (!json_word(&j, "{"))
        return 0;
    json_space(&j);
    bool more = !json_word(&j, "}"), ok = true;
    *out = NULL;
    while (ok && more) {
        char *key = NULL, *val = NULL;
        bool kbad = false;
        json_space(&j);
        ok = json_string(&j, &key, &kbad) && (json_space(&j), json_word(&j, ":"));
        json_space(&j);
        if (ok && strcmp(key, "datasets_dir") == 0 && j.p < j.end && *j.p == '"') {
            bool vbad = false;
            ok = json_string(&j, &val, &vbad);
            if (ok) {
                free(*out);
                *out = val;
                *bad = vbad;
            }
        } else if (ok && strcmp(key, "datasets_dir") == 0) {
            ok = json_value(&j);
            free(*out); /* a later non-string value replaces an earlier one */
            *out = NULL;
        } else {
            ok = ok && json_value(&j);
        }
        free(key);
        json_space(&j);
        more = ok && json_word(&j, ",");
        ok = ok && (more || json_word(&j, "}"));
    }
    json_space(&j);
    if (!ok || j.p != j.end) { /* not JSON: Ultralytics starts afresh */
        free(*out);
        *out = NULL;
    }
    return j.oom ? -1 : *out != NULL;
}

/* ---- datasets_dir ---------------------------------------------------------- */

/* SettingsManager's default datasets_dir for an installed package: the
 * working folder's "datasets" (from a git checkout of Ultralytics it would
 * be beside the checkout, which only Ultralytics itself knows). */
static int default_dir(const char *file, char **dir, char **from, detfeed__msg *msg)
{
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) == NULL)
        return detfeed__fail(msg, DETFEED_EIO,
                             "datasets_dir: the working folder is unknown: %s",
                             strerror(errno));
    *dir = detfeed__path_join(cwd, "datasets");
    char text[4400];
    snprintf(text, sizeof text,
             "(Ultralytics' default: no settings file%s%s gives one)", file ? " " : "",
             file ? file : "");
    *from = detfeed__str_dup(text);
    return *dir && *from ? DETFEED_OK
                         : detfeed__fail(msg, DETFEED_ENOMEM, "out of memory");
}

/* "from FILE", malloc'd. */
static char *from_file(const char *file)
{
    char *t = malloc(strlen(file) + 6);
    if (t)
        sprintf(t, "from %s", file);
    return t;
}

int detfeed__datasets_dir(char **dir, char **from, detfeed__msg *msg)
{
    *dir = *from = NULL;
    bool none;
    char *cfg = config_dir(&none), *file = NULL, *text = NULL;
    if (cfg == NULL && !none)
        return detfeed__fail(msg, DETFEED_ENOMEM, "out of memory");
    file = cfg ? detfeed__path_join(cfg, "settings.json") : NULL;
    free(cfg);
    size_t len = 0;
    detfeed__msg ignored;
    bool bad = false;
    int found = 0;
    if (file && detfeed__path_type(file) == DETFEED__F_FILE &&
        detfeed__read_text(file, 1 << 20, &text, &len, &ignored) == DETFEED_OK)
        found = json_datasets_dir(text, len, dir, &bad);
    free(text);
    int rc = DETFEED_OK;
    if (found < 0 || (found && (*from = from_file(file)) == NULL))
        rc = detfeed__fail(msg, DETFEED_ENOMEM, "out of memory");
    else if (found && bad)
        rc = detfeed__fail(msg, DETFEED_EFORMAT,
                           "%s: its datasets_dir holds a character no path can hold "
                           "(a NUL or a lone UTF-16 surrogate)",
                           file);
    else if (!found)
        rc = default_dir(file, dir, from, msg);
    free(file);
    if (rc != DETFEED_OK) {
        free(*dir);
        free(*from);
        *dir = *from = NULL;
    }
    return rc;
}
