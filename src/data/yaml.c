/*
 * yaml.c - the small YAML reader of yaml.h.
 *
 * The text is split into lines with their indentation; block structure is
 * parsed by indentation (a mapping or sequence continues while lines keep its
 * column), flow collections by a recursive descent over their lines joined
 * (comments left out, quoted scalars folded over lines). All
 * errors carry the line number. Depth is bounded so that hostile nesting
 * cannot exhaust the stack.
 */
#include "yaml.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct yline {
    int indent; /* leading spaces */
    int lineno; /* 1-based */
    char *text; /* after the indentation; NUL-terminated, may be rewritten */
    bool blank; /* empty or comment only */
    bool tab;   /* not blank, and a tab right after the spaces */
} yline;

typedef struct yparser {
    yline *lines;
    size_t n, i; /* lines, cursor */
    char *buf;   /* the text copy the lines point into */
    int depth;
    int err_line;
    char *err;
    size_t errsz;
    bool failed;
} yparser;

static void fail(yparser *p, int line, const char *fmt, ...)
{
    if (p->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, p->errsz, fmt, ap);
    va_end(ap);
    p->err_line = line;
    p->failed = true;
}

static detfeed__ynode *node_new(yparser *p, detfeed__ytype type, int line)
{
    detfeed__ynode *n = calloc(1, sizeof *n);
    if (n == NULL) {
        fail(p, line, "out of memory");
        return NULL;
    }
    n->type = type;
    n->line = line;
    return n;
}

static detfeed__ynode *scalar_new(yparser *p, const char *s, size_t len, int quoted,
                                  int line)
{
    detfeed__ynode *n = node_new(p, DETFEED__Y_SCALAR, line);
    if (n == NULL)
        return NULL;
    n->str = malloc(len + 1);
    if (n->str == NULL) {
        free(n);
        fail(p, line, "out of memory");
        return NULL;
    }
    memcpy(n->str, s, len);
    n->str[len] = '\0';
    n->quoted = quoted;
    return n;
}

void detfeed__yaml_free(detfeed__ynode *node)
{
    if (node == NULL)
        return;
    for (size_t i = 0; i < node->n; i++) {
        if (node->keys)
            free(node->keys[i]);
        detfeed__yaml_free(node->items[i]);
    }
    free(node->keys);
    free(node->items);
    free(node->str);
    free(node);
}

/* The keys of a MAP being built: an open-addressing hash set of indices
 * into its keys, so that finding a duplicate is O(1), not a pass over every
 * key (a names map of 100,000 classes). */
typedef struct keyset {
    size_t *slot; /* index + 1; 0 is empty */
    size_t cap;   /* a power of two, or 0 */
} keyset;

static size_t hash_key(const char *s)
{
    size_t h = 14695981039346656037u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The slot of `key` among c's keys, or the empty slot where it would go. */
static size_t *keyset_find(const keyset *ks, const detfeed__ynode *c, const char *key)
{
    size_t i = hash_key(key) & (ks->cap - 1);
    while (ks->slot[i] && strcmp(c->keys[ks->slot[i] - 1], key) != 0)
        i = (i + 1) & (ks->cap - 1);
    return &ks->slot[i];
}

/* Room for one more key (load at most a half); false when out of memory. */
static bool keyset_reserve(keyset *ks, const detfeed__ynode *c)
{
    if ((c->n + 1) * 2 <= ks->cap)
        return true;
    keyset grown = {calloc(ks->cap ? ks->cap * 2 : 16, sizeof(size_t)),
                    ks->cap ? ks->cap * 2 : 16};
    if (grown.slot == NULL)
        return false;
    for (size_t i = 0; i < c->n; i++)
        *keyset_find(&grown, c, c->keys[i]) = i + 1;
    free(ks->slot);
    *ks = grown;
    return true;
}

/* Appends (key, value) to a SEQ (key NULL, ks NULL) or MAP (its keyset
 * ks); takes ownership. */
static bool append(yparser *p, detfeed__ynode *c, keyset *ks, char *key,
                   detfeed__ynode *value)
{
    bool grow = (c->n & (c->n - 1)) == 0; /* at powers of two */
    if (grow) {
        size_t cap = c->n ? c->n * 2 : 1;
        detfeed__ynode **items = realloc(c->items, cap * sizeof *items);
        if (items)
            c->items = items;
        char **keys =
            c->type == DETFEED__Y_MAP ? realloc(c->keys, cap * sizeof *keys) : NULL;
        if (keys)
            c->keys = keys;
        grow = items == NULL || (c->type == DETFEED__Y_MAP && keys == NULL);
    }
    if (grow || (c->type == DETFEED__Y_MAP && !keyset_reserve(ks, c))) {
        free(key);
        detfeed__yaml_free(value);
        fail(p, c->line, "out of memory");
        return false;
    }
    if (c->type == DETFEED__Y_MAP) {
        size_t *slot = keyset_find(ks, c, key);
        if (*slot) {
            fail(p, value ? value->line : c->line, "duplicate key '%s'", key);
            free(key);
            detfeed__yaml_free(value);
            return false;
        }
        *slot = c->n + 1;
        c->keys[c->n] = key;
    }
    c->items[c->n++] = value;
    return true;
}

static char *dup_range(const char *s, size_t len)
{
    char *d = malloc(len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

/* ---- lines ---------------------------------------------------------------- */

/* Whether a line's text is only spaces and tabs (or nothing). */
static bool all_space(const char *s)
{
    return s[strspn(s, " \t")] == '\0';
}

static bool is_comment_start(const char *s, const char *start)
{
    return *s == '#' && (s == start || s[-1] == ' ' || s[-1] == '\t');
}

static bool split_lines(yparser *p, const char *text, size_t len)
{
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    p->buf = malloc(len + 1);
    size_t cap = 16;
    p->lines = malloc(cap * sizeof *p->lines);
    if (p->buf == NULL || p->lines == NULL) {
        fail(p, 0, "out of memory");
        return false;
    }
    memcpy(p->buf, text, len);
    p->buf[len] = '\0';
    if (memchr(p->buf, '\0', len) != NULL) {
        fail(p, 1, "the file contains a NUL byte");
        return false;
    }
    char *s = p->buf;
    for (int lineno = 1; *s || s == p->buf; lineno++) {
        char *end = s + strcspn(s, "\r\n");
        char *next = end;
        if (*next == '\r')
            next++;
        if (*next == '\n')
            next++;
        *end = '\0';
        if (p->n == cap) {
            yline *l = realloc(p->lines, (cap *= 2) * sizeof *l);
            if (l == NULL) {
                fail(p, lineno, "out of memory");
                return false;
            }
            p->lines = l;
        }
        yline *ln = &p->lines[p->n++];
        ln->lineno = lineno;
        ln->indent = (int)strspn(s, " ");
        ln->text = s + ln->indent;
        size_t tabs = strspn(ln->text, "\t ");
        ln->blank = ln->text[tabs] == '\0' || ln->text[tabs] == '#';
        ln->tab = !ln->blank && ln->text[0] == '\t'; /* refused where it is structure */
        if (end == next)
            break;
        s = next;
    }
    return true;
}

/* The next non-blank line at or after the cursor, or NULL (also when that
 * line is indented with a tab, which fails: a block's lines and a flow
 * collection's outside quotes; a block scalar's text and a quoted scalar's
 * continuation lines are not read through here and may hold tabs, as
 * PyYAML reads them). */
static yline *peek(yparser *p)
{
    while (p->i < p->n && p->lines[p->i].blank)
        p->i++;
    if (p->i < p->n && p->lines[p->i].tab) {
        fail(p, p->lines[p->i].lineno, "tab used for indentation");
        return NULL;
    }
    return p->i < p->n ? &p->lines[p->i] : NULL;
}

static bool is_seq_item(const yline *l)
{
    return l->text[0] == '-' && (l->text[1] == '\0' || l->text[1] == ' ');
}

/* ---- scalars -------------------------------------------------------------- */

/* Code point `c` as UTF-8 at out; its length. */
static size_t utf8_put(uint32_t c, char *out)
{
    if (c < 0x80)
        return out[0] = (char)c, 1;
    if (c < 0x800)
        return out[0] = (char)(0xC0 | c >> 6), out[1] = (char)(0x80 | (c & 0x3F)), 2;
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | c >> 12);
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | c >> 18);
    out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* The character of escape letter `c` that stands for one (YAML's \a \b
 * \t \n \v \f \r \e \N \_ \L \P and the escaped \ " / space tab), or 0. */
static uint32_t escape_char(char c)
{
    static const char letters[] = "abtnvfreN_LP\\\"/ \t";
    static const uint32_t chars[] = {7,    8,   9,    10,   11,     12,
                                     13,   27,  0x85, 0xA0, 0x2028, 0x2029,
                                     '\\', '"', '/',  ' ',  '\t'};
    const char *at = c ? strchr(letters, c) : NULL;
    return at ? chars[at - letters] : 0;
}

/* The escape after a backslash at s (a double-quoted string's, as YAML and
 * PyYAML read it: the letters above, \xXX, \uXXXX, \UXXXXXXXX), written
 * as UTF-8 at out + *k; the characters it took, or 0 when it is not one
 * (or would be a NUL, or is not a Unicode scalar value). */
static size_t unescape(const char *s, char *out, size_t *k)
{
    uint32_t c = escape_char(*s);
    if (c) {
        *k += utf8_put(c, out + *k);
        return 1;
    }
    int digits = *s == 'x' ? 2 : *s == 'u' ? 4 : *s == 'U' ? 8 : 0;
    for (int i = 1; i <= digits; i++) {
        if (!isxdigit((unsigned char)s[i]))
            return 0;
        c = c * 16 + (uint32_t)(isdigit((unsigned char)s[i])
                                    ? s[i] - '0'
                                    : (s[i] | 0x20) - 'a' + 10);
    }
    if (digits == 0 || c == 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *k += utf8_put(c, out + *k);
    return (size_t)digits + 1;
}

/* Reads a quoted scalar at s (on its quote); *end gets the position after
 * the closing quote. Double quotes understand YAML's escapes (unescape);
 * single quotes understand ''. */
static detfeed__ynode *quoted_scalar(yparser *p, const char *s, const char **end,
                                     int line)
{
    char q = *s++;
    size_t len = strlen(s);
    char *out = malloc(2 * len + 1); /* an escape of 2 characters gives 3 bytes */
    if (out == NULL) {
        fail(p, line, "out of memory");
        return NULL;
    }
    size_t k = 0;
    for (;;) {
        if (*s == '\0') {
            free(out);
            fail(p, line, "unterminated %s-quoted string",
                 q == '"' ? "double" : "single");
            return NULL;
        }
        if (*s == q && q == '\'' && s[1] == '\'') {
            out[k++] = '\'';
            s += 2;
        } else if (*s == q) {
            s++;
            break;
        } else if (q == '"' && *s == '\\') {
            size_t took = unescape(s + 1, out, &k);
            if (took == 0) {
                free(out);
                fail(p, line,
                     "'\\%.1s' is not an escape YAML reads (or gives no "
                     "character a path or name can hold)",
                     s + 1);
                return NULL;
            }
            s += 1 + took;
        } else {
            out[k++] = *s++;
        }
    }
    *end = s;
    detfeed__ynode *n = scalar_new(p, out, k, 1, line);
    free(out);
    return n;
}

/* A scalar that is the rest of a line: quoted, or plain up to a comment. */
static detfeed__ynode *line_scalar(yparser *p, const char *s, int line)
{
    if (*s == '"' || *s == '\'') {
        const char *end;
        detfeed__ynode *n = quoted_scalar(p, s, &end, line);
        if (n == NULL)
            return NULL;
        end += strspn(end, " \t");
        if (*end != '\0' && *end != '#') {
            detfeed__yaml_free(n);
            fail(p, line, "text after a quoted string");
            return NULL;
        }
        return n;
    }
    if (*s == '&' || *s == '*' || *s == '!') {
        fail(p, line, "YAML anchors, aliases and tags are not supported");
        return NULL;
    }
    const char *e = s;
    while (*e && !is_comment_start(e, s))
        e++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    return scalar_new(p, s, (size_t)(e - s), 0, line);
}

/* ---- flow collections ----------------------------------------------------- */

static detfeed__ynode *flow_value(yparser *p, const char **s, int line);

static void skip_ws(const char **s)
{
    *s += strspn(*s, " \t");
}

/* A plain scalar inside a flow collection: up to , ] } or ": ". */
static detfeed__ynode *flow_plain(yparser *p, const char **s, int line)
{
    const char *b = *s, *e = b;
    while (*e && *e != ',' && *e != ']' && *e != '}' &&
           !(*e == ':' && (e[1] == ' ' || e[1] == ',' || e[1] == '}' || e[1] == '\0')))
        e++;
    *s = e;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    return scalar_new(p, b, (size_t)(e - b), 0, line);
}

static detfeed__ynode *flow_collection(yparser *p, const char **s, int line)
{
    bool is_map = **s == '{';
    char close = is_map ? '}' : ']';
    detfeed__ynode *c = node_new(p, is_map ? DETFEED__Y_MAP : DETFEED__Y_SEQ, line);
    keyset ks = {0};
    (*s)++;
    while (c && !p->failed) {
        skip_ws(s);
        if (**s == close) {
            (*s)++;
            free(ks.slot);
            return c;
        }
        char *key = NULL;
        if (is_map) {
            detfeed__ynode *k = flow_value(p, s, line);
            if (k && k->type != DETFEED__Y_SCALAR)
                fail(p, line, "a flow mapping key must be a scalar");
            skip_ws(s);
            if (!p->failed && **s != ':')
                fail(p, line, "expected ':' in a flow mapping");
            if (k && !p->failed) {
                key = k->str;
                k->str = NULL;
                (*s)++; /* the ':' */
            }
            detfeed__yaml_free(k);
        }
        detfeed__ynode *v = p->failed ? NULL : flow_value(p, s, line);
        if (p->failed) {
            free(key);
            detfeed__yaml_free(v);
            break;
        }
        if (!append(p, c, is_map ? &ks : NULL, key, v)) /* frees key and v */
            break;
        skip_ws(s);
        if (**s == ',')
            (*s)++;
        else if (**s != close)
            fail(p, line, "expected ',' or '%c' in a flow collection", close);
    }
    free(ks.slot);
    detfeed__yaml_free(c);
    return NULL;
}

static detfeed__ynode *flow_value(yparser *p, const char **s, int line)
{
    skip_ws(s);
    if (++p->depth > MAX_DEPTH) {
        fail(p, line, "nesting deeper than %d levels", MAX_DEPTH);
        return NULL;
    }
    detfeed__ynode *n;
    if (**s == '[' || **s == '{')
        n = flow_collection(p, s, line);
    else if (**s == '"' || **s == '\'')
        n = quoted_scalar(p, *s, s, line);
    else if (**s == '&' || **s == '*' || **s == '!') {
        fail(p, line, "YAML anchors, aliases and tags are not supported");
        n = NULL;
    } else if (**s == '\0') {
        fail(p, line, "unterminated flow collection");
        n = NULL;
    } else
        n = flow_plain(p, s, line);
    p->depth--;
    return n;
}

/* Flow text read line by line: the quote a line ends inside (a quoted
 * scalar may go on over lines; 0: none) and the bracket depth. */
typedef struct flow_scan {
    char quote;
    int depth;
} flow_scan;

/* One line of flow text as scanned: its length (up to a comment outside
 * quotes; without the backslash of an escaped line break), whether it ends
 * in an escaped line break, and where its last escape sequence ends (white
 * space dropped before a fold stops there: "\ " is a space kept). */
typedef struct flow_line {
    size_t len, escape_end;
    bool escaped_break;
} flow_line;

/* Scans line `s` of flow text from the state at its start. */
static flow_line scan_flow_line(const char *s, flow_scan *st)
{
    flow_line fl = {0, 0, false};
    const char *c = s;
    for (; *c; c++) {
        if (st->quote == '"' && *c == '\\') {
            if (c[1] == '\0') {
                fl.escaped_break = true;
                break;
            }
            c++;
            fl.escape_end = (size_t)(c - s) + 1;
        } else if (st->quote) {
            st->quote = *c == st->quote ? 0 : st->quote; /* '' closes and opens */
        } else if (*c == '"' || *c == '\'') {
            st->quote = *c;
        } else if (is_comment_start(c, s)) {
            break;
        } else if (*c == '[' || *c == '{') {
            st->depth++;
        } else if (*c == ']' || *c == '}') {
            st->depth--;
        }
    }
    fl.len = (size_t)(c - s);
    return fl;
}

/* Flow text joined from its lines. */
typedef struct flow_text {
    char *s;
    size_t len, cap;
} flow_text;

/* Appends n bytes of `s` (or n copies of `fill` when s is NULL); false
 * when out of memory. Doubling: a flow list over many lines is linear. */
static bool flow_put(flow_text *t, const char *s, size_t n, char fill)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->len + n + 1) * 2;
        char *grown = realloc(t->s, cap);
        if (grown == NULL)
            return false;
        t->s = grown, t->cap = cap;
    }
    if (s)
        memcpy(t->s + t->len, s, n);
    else
        memset(t->s + t->len, fill, n);
    t->len += n;
    t->s[t->len] = '\0';
    return true;
}

/* What joins a line that ends inside a quoted scalar to the next as PyYAML
 * folds it: the empty lines between them (the cursor moves past them) give
 * a line feed each; without any, an unescaped line break gives a space and
 * an escaped one nothing. False at the end of the text, and (failing) at a
 * document marker, "---" or "..." at a line's start. */
static bool fold_quoted_break(yparser *p, flow_text *t, bool escaped, bool *ok)
{
    size_t empty = 0;
    while (p->i < p->n && all_space(p->lines[p->i].text))
        empty++, p->i++;
    if (p->i == p->n)
        return false;
    const yline *l = &p->lines[p->i];
    if (l->indent == 0 &&
        (strncmp(l->text, "---", 3) == 0 || strncmp(l->text, "...", 3) == 0) &&
        (l->text[3] == '\0' || l->text[3] == ' ' || l->text[3] == '\t')) {
        fail(p, l->lineno, "a document marker (%.3s) inside a quoted string", l->text);
        return false; /* as PyYAML: the quote is not closed before it */
    }
    *ok = empty ? flow_put(t, NULL, empty, '\n') : escaped || flow_put(t, " ", 1, 0);
    return true;
}

/* A line of flow text appended: its leading white space dropped where it
 * goes on with a quoted scalar, its trailing white space where it ends
 * inside one (unless the break is escaped). */
static bool put_flow_line(flow_text *t, const char *part, flow_line fl,
                          char quote_before, const flow_scan *st)
{
    size_t n = fl.len, keep = fl.escape_end;
    if (quote_before) {
        size_t lead = strspn(part, " \t");
        lead = lead < n ? lead : n;
        part += lead, n -= lead, keep = keep > lead ? keep - lead : 0;
    }
    if (st->quote && !fl.escaped_break)
        while (n > keep && (part[n - 1] == ' ' || part[n - 1] == '\t'))
            n--;
    return flow_put(t, part, n, 0);
}

/* The text of a flow collection (or, with `scalar`, of a quoted scalar)
 * that starts at `text` on the cursor line and goes on over the following
 * lines until its brackets balance (until its quote closes), with comments
 * left out and quoted scalars over lines folded; NULL with the failure set.
 * Advances the cursor past its last line. */
static char *flow_join(yparser *p, const char *text, int line, bool scalar)
{
    flow_text t = {NULL, 0, 0};
    flow_scan st = {0, 0};
    bool ok = true;
    for (const char *part = text; ok;) {
        char before = st.quote;
        flow_line fl = scan_flow_line(part, &st);
        ok = put_flow_line(&t, part, fl, before, &st);
        p->i++;
        if (!ok || (!st.quote && (scalar || st.depth <= 0)))
            break;
        if (st.quote ? !fold_quoted_break(p, &t, fl.escaped_break, &ok)
                     : (ok = flow_put(&t, " ", 1, 0), peek(p) == NULL)) {
            fail(p, line,
                 st.quote == '"'    ? "unterminated double-quoted string"
                 : st.quote == '\'' ? "unterminated single-quoted string"
                                    : "unterminated flow collection");
            free(t.s);
            return NULL;
        }
        part = p->lines[p->i].text;
    }
    if (!ok) {
        fail(p, line, "out of memory");
        free(t.s);
        return NULL;
    }
    return t.s;
}

/* A flow collection starting at `text` on the cursor line and continuing
 * over following lines until its brackets balance. Advances the cursor. */
static detfeed__ynode *flow_block(yparser *p, const char *text)
{
    int line = p->lines[p->i].lineno;
    char *joined = flow_join(p, text, line, false);
    if (joined == NULL)
        return NULL;
    const char *s = joined;
    detfeed__ynode *n = flow_value(p, &s, line);
    skip_ws(&s);
    if (n && *s != '\0') {
        fail(p, line, "text after a flow collection");
        detfeed__yaml_free(n);
        n = NULL;
    }
    free(joined);
    return n;
}

/* ---- block structure ------------------------------------------------------ */

static detfeed__ynode *block_node(yparser *p, int min_indent);

/* | or > block scalar: the following lines indented more than `indent`. */
static detfeed__ynode *block_scalar(yparser *p, int indent, bool folded, int line)
{
    size_t cap = 64, len = 0;
    char *text = malloc(cap);
    if (text == NULL) {
        fail(p, line, "out of memory");
        return NULL;
    }
    int body = -1;
    for (p->i++; p->i < p->n; p->i++) {
        yline *l = &p->lines[p->i];
        bool empty = all_space(l->text);
        if (!empty && l->indent <= indent)
            break;
        if (body < 0 && !empty)
            body = l->indent;
        /* Keep indentation beyond the body's own column. */
        const char *t = empty               ? ""
                        : l->indent >= body ? l->text - (l->indent - body)
                                            : l->text;
        size_t n = strlen(t);
        char *g = len + n + 2 > cap ? realloc(text, cap = (len + n + 2) * 2) : text;
        if (g == NULL) {
            free(text);
            fail(p, line, "out of memory");
            return NULL;
        }
        text = g;
        memcpy(text + len, t, n);
        len += n;
        text[len++] = folded ? ' ' : '\n';
    }
    detfeed__ynode *node = scalar_new(p, text, len, 1, line);
    free(text);
    return node;
}

/* Whether the quoted scalar that starts at `text` (if one does) goes on
 * past its line. */
static bool quote_goes_on(const char *text)
{
    flow_scan st = {0, 0};
    if (*text != '"' && *text != '\'')
        return false;
    (void)scan_flow_line(text, &st);
    return st.quote != 0;
}

/* The value after "key:" (or after "- "), text being what follows on the
 * line. Advances past everything the value spans. */
static detfeed__ynode *inline_value(yparser *p, const char *text, int indent)
{
    yline *l = &p->lines[p->i];
    int line = l->lineno;
    if (*text == '[' || *text == '{')
        return flow_block(p, text);
    if ((*text == '|' || *text == '>') &&
        (text[1] == '\0' || strchr("-+ #0123456789", text[1])))
        return block_scalar(p, indent, *text == '>', line);
    if (quote_goes_on(text)) { /* a quoted scalar over lines, folded */
        char *joined = flow_join(p, text, line, true);
        detfeed__ynode *n = joined ? line_scalar(p, joined, line) : NULL;
        free(joined);
        return n;
    }
    if (*text != '\0' && *text != '#') {
        detfeed__ynode *n = line_scalar(p, text, line);
        p->i++;
        return n;
    }
    p->i++; /* empty: the value is the block below, or null */
    yline *next = peek(p);
    if (next && next->indent > indent)
        return block_node(p, indent + 1);
    if (next && next->indent == indent && is_seq_item(next))
        return block_node(p, indent);
    return scalar_new(p, "", 0, 0, line);
}

/* Splits "key: rest" at the first ':' followed by a space or the end,
 * outside quotes. Returns the key (malloc'd) and sets *rest; NULL when the
 * line is not a mapping entry. */
static char *split_key(yparser *p, char *text, char **rest, int line)
{
    char *colon = NULL, *key_end;
    const char *key_start = text;
    if (*text == '"' || *text == '\'') {
        const char *after;
        detfeed__ynode *k = quoted_scalar(p, text, &after, line);
        if (k == NULL)
            return NULL;
        after += strspn(after, " ");
        if (*after != ':' || (after[1] != ' ' && after[1] != '\0')) {
            detfeed__yaml_free(k);
            return NULL;
        }
        *rest = (char *)after + 1 + strspn(after + 1, " ");
        char *key = k->str;
        k->str = NULL;
        detfeed__yaml_free(k);
        return key;
    }
    for (char *s = text; *s && !is_comment_start(s, text); s++) {
        if (*s == ':' && (s[1] == ' ' || s[1] == '\t' || s[1] == '\0')) {
            colon = s;
            break;
        }
    }
    if (colon == NULL)
        return NULL;
    key_end = colon;
    while (key_end > key_start && (key_end[-1] == ' ' || key_end[-1] == '\t'))
        key_end--;
    *rest = colon + 1 + strspn(colon + 1, " \t");
    return dup_range(key_start, (size_t)(key_end - key_start));
}

static detfeed__ynode *block_map(yparser *p, int indent)
{
    detfeed__ynode *map = node_new(p, DETFEED__Y_MAP, p->lines[p->i].lineno);
    keyset ks = {0};
    yline *l;
    while (map && !p->failed && (l = peek(p)) != NULL && l->indent >= indent) {
        if (l->indent > indent) {
            fail(p, l->lineno, "unexpected indentation");
            break;
        }
        if (is_seq_item(l)) {
            fail(p, l->lineno, "a sequence item where a mapping key was expected");
            break;
        }
        if (strncmp(l->text, "---", 3) == 0 || strncmp(l->text, "...", 3) == 0) {
            fail(p, l->lineno, "more than one document");
            break;
        }
        if (*l->text == '?' || *l->text == '&' || *l->text == '*' || *l->text == '!') {
            fail(p, l->lineno,
                 "complex keys, anchors, aliases and tags are not supported");
            break;
        }
        char *rest, *key = split_key(p, l->text, &rest, l->lineno);
        if (key == NULL) {
            fail(p, l->lineno, "expected 'key: value'");
            break;
        }
        detfeed__ynode *v = inline_value(p, rest, indent);
        if (p->failed) {
            free(key);
            detfeed__yaml_free(v);
            break;
        }
        if (!append(p, map, &ks, key, v)) /* frees key and v */
            break;
    }
    free(ks.slot);
    if (p->failed) {
        detfeed__yaml_free(map);
        return NULL;
    }
    return map;
}

static detfeed__ynode *block_seq(yparser *p, int indent)
{
    detfeed__ynode *seq = node_new(p, DETFEED__Y_SEQ, p->lines[p->i].lineno);
    yline *l;
    while (seq && !p->failed && (l = peek(p)) != NULL && l->indent == indent &&
           is_seq_item(l)) {
        char *content = l->text + 1;
        content += strspn(content, " ");
        char *rest;
        detfeed__ynode *v;
        char *key = (*content && *content != '[' && *content != '{' &&
                     *content != '#' && !quote_goes_on(content))
                        ? split_key(p, content, &rest, l->lineno)
                        : NULL;
        if (p->failed)
            break;
        if (key != NULL) {
            /* "- key: value": a mapping that starts on the item's line. */
            free(key);
            l->indent = indent + (int)(content - l->text);
            l->text = content;
            v = block_node(p, l->indent);
        } else {
            v = inline_value(p, content, indent);
        }
        if (p->failed) {
            detfeed__yaml_free(v);
            break;
        }
        if (!append(p, seq, NULL, NULL, v))
            break;
    }
    if (p->failed) {
        detfeed__yaml_free(seq);
        return NULL;
    }
    return seq;
}

static detfeed__ynode *block_node(yparser *p, int min_indent)
{
    yline *l = peek(p);
    if (l == NULL || l->indent < min_indent)
        return scalar_new(p, "", 0, 0, l ? l->lineno : 0);
    if (++p->depth > MAX_DEPTH) {
        fail(p, l->lineno, "nesting deeper than %d levels", MAX_DEPTH);
        return NULL;
    }
    detfeed__ynode *n =
        is_seq_item(l) ? block_seq(p, l->indent) : block_map(p, l->indent);
    p->depth--;
    return n;
}

int detfeed__yaml_parse(const char *text, size_t len, detfeed__ynode **root,
                        int *err_line, char *err, size_t errsz)
{
    yparser p = {.err = err, .errsz = errsz};
    *root = NULL;
    if (errsz)
        err[0] = '\0';
    detfeed__ynode *doc = NULL;
    if (split_lines(&p, text, len)) {
        yline *first = peek(&p);
        if (first && strncmp(first->text, "---", 3) == 0 &&
            (first->text[3] == '\0' || first->text[3] == ' '))
            p.i++;
        first = peek(&p);
        if (first && first->indent != 0)
            fail(&p, first->lineno, "the document must start at column 0");
        else if (first && is_seq_item(first))
            fail(&p, first->lineno, "the document must be a mapping");
        else
            doc = block_node(&p, 0);
        yline *left = p.failed ? NULL : peek(&p);
        if (left)
            fail(&p, left->lineno,
                 strncmp(left->text, "---", 3) == 0 ? "more than one document"
                                                    : "unexpected text");
    }
    free(p.lines);
    free(p.buf);
    if (p.failed) {
        detfeed__yaml_free(doc);
        *err_line = p.err_line;
        return -1;
    }
    *root = doc;
    return 0;
}

const detfeed__ynode *detfeed__yaml_get(const detfeed__ynode *map, const char *key)
{
    if (map == NULL || map->type != DETFEED__Y_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i], key) == 0)
            return map->items[i];
    return NULL;
}

int detfeed__yaml_is_null(const detfeed__ynode *node)
{
    return node == NULL || (node->type == DETFEED__Y_SCALAR && !node->quoted &&
                            (node->str[0] == '\0' || strcmp(node->str, "~") == 0 ||
                             strcmp(node->str, "null") == 0));
}
