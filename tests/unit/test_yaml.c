/*
 * test_yaml.c - the dataset YAML reader: the constructs dataset files use,
 * and clear, line-numbered errors for everything else.
 */
#include "data/yaml.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static detfeed__ynode *parse_ok(const char *text)
{
    detfeed__ynode *root = NULL;
    char err[160];
    int line = 0;
    if (detfeed__yaml_parse(text, strlen(text), &root, &line, err, sizeof err) != 0) {
        CHECK(!"parse failed");
        fprintf(stderr, "  line %d: %s\n  in: %s\n", line, err, text);
    }
    return root;
}

/* Expects a failure at `want_line` whose message contains `words`. */
static void parse_bad_n(const char *text, size_t len, int want_line, const char *words)
{
    detfeed__ynode *root = (detfeed__ynode *)1;
    char err[160] = "";
    int line = 0;
    int rc = detfeed__yaml_parse(text, len, &root, &line, err, sizeof err);
    if (!CHECK(rc != 0 && root == NULL) || !CHECK_INT(line, want_line) ||
        !CHECK(strstr(err, words) != NULL))
        fprintf(stderr, "  got line %d \"%s\" for: %s\n", line, err, text);
    if (rc == 0)
        detfeed__yaml_free(root);
}

static void parse_bad(const char *text, int want_line, const char *words)
{
    parse_bad_n(text, strlen(text), want_line, words);
}

static const char *scalar(const detfeed__ynode *map, const char *key)
{
    const detfeed__ynode *n = detfeed__yaml_get(map, key);
    return n && n->type == DETFEED__Y_SCALAR ? n->str : NULL;
}

static void test_dataset_yaml(void)
{
    const char *text = "# Ultralytics dataset\n"
                       "path: ../datasets/coco8 # dataset root dir\n"
                       "train: images/train # 4 images\n"
                       "val: 'images/val'\n"
                       "test: # test images (optional)\n"
                       "\n"
                       "kpt_shape: [17, 3] # number of keypoints\n"
                       "flip_idx: [0, 2, 1,\n"
                       "           4, 3]\n"
                       "names:\n"
                       "  0: person\n"
                       "  1: \"traffic light\"\n"
                       "  2: it's # a comment\n"
                       "download: |\n"
                       "  from x import y\n"
                       "    indented: 1\n"
                       "\n"
                       "  z = 2\n"
                       "other: done\n";
    detfeed__ynode *r = parse_ok(text);
    if (r == NULL)
        return;
    CHECK_INT(r->type, DETFEED__Y_MAP);
    CHECK_STR(scalar(r, "path"), "../datasets/coco8");
    CHECK_STR(scalar(r, "train"), "images/train");
    CHECK_STR(scalar(r, "val"), "images/val");
    CHECK(detfeed__yaml_is_null(detfeed__yaml_get(r, "test")));
    CHECK(!detfeed__yaml_is_null(detfeed__yaml_get(r, "val")));
    const detfeed__ynode *ks = detfeed__yaml_get(r, "kpt_shape");
    CHECK(ks && ks->type == DETFEED__Y_SEQ && ks->n == 2 &&
          strcmp(ks->items[0]->str, "17") == 0);
    const detfeed__ynode *fi = detfeed__yaml_get(r, "flip_idx");
    CHECK(fi && fi->type == DETFEED__Y_SEQ && fi->n == 5 &&
          strcmp(fi->items[4]->str, "3") == 0);
    const detfeed__ynode *names = detfeed__yaml_get(r, "names");
    CHECK(names && names->type == DETFEED__Y_MAP && names->n == 3);
    CHECK_STR(scalar(names, "1"), "traffic light");
    CHECK_STR(scalar(names, "2"), "it's");
    CHECK_STR(scalar(r, "download"), "from x import y\n  indented: 1\n\nz = 2\n");
    CHECK_STR(scalar(r, "other"), "done");
    CHECK_INT(detfeed__yaml_get(r, "other")->line, 19);
    detfeed__yaml_free(r);
}

static void test_sequences(void)
{
    detfeed__ynode *r = parse_ok("\xEF\xBB\xBF---\r\n"
                                 "train:\r\n"
                                 "  - images/a\r\n"
                                 "  - images/b # second\r\n"
                                 "val:\r\n"
                                 "- images/c\r\n"
                                 "names: [person, 'a, b', {x: 1}]\r\n"
                                 "map: {0: zero, 1: one}\r\n"
                                 "items:\r\n"
                                 "  - name: first\r\n"
                                 "    size: 2\r\n"
                                 "  - [1, 2]\r\n"
                                 "empty_seq: []\r\n"
                                 "url: http://x.org/a#frag\r\n");
    if (r == NULL)
        return;
    const detfeed__ynode *t = detfeed__yaml_get(r, "train");
    CHECK(t && t->type == DETFEED__Y_SEQ && t->n == 2 &&
          strcmp(t->items[1]->str, "images/b") == 0);
    const detfeed__ynode *v = detfeed__yaml_get(r, "val");
    CHECK(v && v->type == DETFEED__Y_SEQ && v->n == 1 &&
          strcmp(v->items[0]->str, "images/c") == 0);
    const detfeed__ynode *n = detfeed__yaml_get(r, "names");
    CHECK(n && n->n == 3 && strcmp(n->items[1]->str, "a, b") == 0 &&
          n->items[2]->type == DETFEED__Y_MAP);
    const detfeed__ynode *m = detfeed__yaml_get(r, "map");
    CHECK(m && m->type == DETFEED__Y_MAP && strcmp(scalar(m, "1"), "one") == 0);
    const detfeed__ynode *it = detfeed__yaml_get(r, "items");
    CHECK(it && it->n == 2 && it->items[0]->type == DETFEED__Y_MAP &&
          strcmp(scalar(it->items[0], "size"), "2") == 0 &&
          it->items[1]->type == DETFEED__Y_SEQ);
    const detfeed__ynode *e = detfeed__yaml_get(r, "empty_seq");
    CHECK(e && e->type == DETFEED__Y_SEQ && e->n == 0);
    CHECK_STR(scalar(r, "url"), "http://x.org/a#frag");
    detfeed__yaml_free(r);
    r = parse_ok("");
    CHECK(r && r->type == DETFEED__Y_SCALAR);
    detfeed__yaml_free(r);
    r = parse_ok("# only a comment\n\n");
    CHECK(r && r->type == DETFEED__Y_SCALAR);
    detfeed__yaml_free(r);
}

/* Double-quoted escapes as YAML (and PyYAML) read them, in UTF-8. */
static void test_escapes(void)
{
    detfeed__ynode *root = parse_ok("a: \"images\\x2ftrain\"\n"
                                    "b: \"caf\\u00e9 \\U0001F600\"\n"
                                    "c: \"t\\tn\\nq\\\"s\\\\/\\/e\\e_\\_L\\L\"\n"
                                    "d: ['x\\y', \"\\u00E9\"]\n");
    CHECK_STR(scalar(root, "a"), "images/train");
    CHECK_STR(scalar(root, "b"), "caf\xc3\xa9 \xf0\x9f\x98\x80");
    CHECK_STR(scalar(root, "c"), "t\tn\nq\"s\\//e\x1b_\xc2\xa0L\xe2\x80\xa8");
    const detfeed__ynode *d = detfeed__yaml_get(root, "d");
    CHECK(d && d->n == 2 && strcmp(d->items[0]->str, "x\\y") == 0 &&
          strcmp(d->items[1]->str, "\xc3\xa9") == 0);
    detfeed__yaml_free(root);
}

/* Flow collections over lines: comments between items, quoted scalars
 * folded as PyYAML folds them (a break a space, each empty line a line feed,
 * an escaped break nothing, trailing blanks dropped before a break), and
 * brackets, commas and '#' inside quotes taken as text. */
static void test_flow_over_lines(void)
{
    detfeed__ynode *r = parse_ok("names: [a, # first, [not an item]\n"
                                 "  \"b  \n"
                                 "     c\", 'd\n"
                                 "\n"
                                 "  e', \"f \\\n"
                                 "  g\",\n"
                                 "  # between\n"
                                 "  \"h]\n"
                                 "#i, {j}\"]  # end\n"
                                 "map: {k: \"v\n"
                                 "  w\", l: [1,\n"
                                 "  2]}\n"
                                 "kept: [\"e\\ \t \n"
                                 "  f\"]\n");
    if (r == NULL)
        return;
    const detfeed__ynode *n = detfeed__yaml_get(r, "names");
    const char *want[] = {"a", "b c", "d\ne", "f g", "h] #i, {j}"};
    if (CHECK(n && n->type == DETFEED__Y_SEQ && n->n == 5))
        for (size_t k = 0; k < 5; k++)
            CHECK_STR(n->items[k]->str, want[k]);
    const detfeed__ynode *m = detfeed__yaml_get(r, "map");
    CHECK(m && m->type == DETFEED__Y_MAP && strcmp(scalar(m, "k"), "v w") == 0);
    const detfeed__ynode *l = m ? detfeed__yaml_get(m, "l") : NULL;
    CHECK(l && l->type == DETFEED__Y_SEQ && l->n == 2);
    const detfeed__ynode *k = detfeed__yaml_get(r, "kept"); /* an escaped space stays */
    CHECK(k && k->n == 1 && strcmp(k->items[0]->str, "e  f") == 0);
    detfeed__yaml_free(r);
    parse_bad("a: 1\nnames: [\"open\n  b]\n", 2, "unterminated double-quoted string");
    parse_bad("names: ['open\n\n", 1, "unterminated single-quoted string");
    parse_bad("names: [\"x\\\n", 1, "unterminated double-quoted string");
    parse_bad("names: [a, # c\n", 1, "unterminated flow collection");
}

/* Quoted values over lines in block mappings and sequences, folded as
 * PyYAML folds them. */
static void test_quoted_over_lines_in_blocks(void)
{
    detfeed__ynode *r = parse_ok("quoted: \"x\n"
                                 "  y\" # c\n"
                                 "seq:\n"
                                 "  - 'a''s\n"
                                 "\n"
                                 "    b'\n"
                                 "  - \"c\\\n"
                                 "  d\"\n"
                                 "last: 1\n");
    CHECK_STR(scalar(r, "quoted"), "x y");
    const detfeed__ynode *q = detfeed__yaml_get(r, "seq");
    CHECK(q && q->n == 2 && strcmp(q->items[0]->str, "a's\nb") == 0 &&
          strcmp(q->items[1]->str, "cd") == 0);
    CHECK_STR(scalar(r, "last"), "1");
    detfeed__yaml_free(r);
    parse_bad("a: \"x\n  y\" z\n", 1, "after a quoted");
    parse_bad("a: 1\nb: 'x\n", 2, "unterminated single-quoted string");
    parse_bad("a: \"x\n---\n\"\n", 2, "document marker (---) inside a quoted string");
    parse_bad("a: [\"x\n\n... \", b]\n", 3, "document marker (...)");
    r = parse_ok("a: \"x\n ---\n---y\"\n"); /* not at the start, or not alone */
    CHECK_STR(scalar(r, "a"), "x --- ---y");
    detfeed__yaml_free(r);
}

/* Tabs where PyYAML takes them: in a block scalar's text after its
 * indentation, before a quoted scalar's next line; not indenting a block
 * or flow items. */
static void test_tabs(void)
{
    detfeed__ynode *r = parse_ok("download: |\n"
                                 "  for x in y:\n"
                                 "  \tprint(x)\n"
                                 "names: [\"a\n"
                                 "\tb\"]\n");
    CHECK_STR(scalar(r, "download"), "for x in y:\n\tprint(x)\n");
    const detfeed__ynode *n = detfeed__yaml_get(r, "names");
    CHECK(n && n->n == 1 && strcmp(n->items[0]->str, "a b") == 0);
    detfeed__yaml_free(r);
    parse_bad("names: [a,\n\tb]\n", 2, "tab used for indentation");
    parse_bad("names:\n\t- a\n", 2, "tab used for indentation");
}

static void test_errors(void)
{
    parse_bad("a: 1\n\tb: 2\n", 2, "tab");
    parse_bad("a: 'open\n", 1, "unterminated");
    parse_bad("a: [1, 2\nb: 3\n", 1, "");
    parse_bad("a: 1\na: 2\n", 2, "duplicate key 'a'");
    parse_bad("a: &anchor 1\n", 1, "anchors");
    parse_bad("a: *alias\n", 1, "aliases");
    parse_bad("a: 1\n  b: 2\n", 2, "indentation");
    parse_bad("a: 1\n---\nb: 2\n", 2, "more than one document");
    parse_bad("- a\n- b\n", 1, "mapping");
    parse_bad("just text\n", 1, "key: value");
    parse_bad("a: 'x' y\n", 1, "after a quoted");
    parse_bad("a: [1, 2] x\n", 1, "after a flow");
    parse_bad("a: {b c}\n", 1, "':'");
    parse_bad("a: [1 2]]\n", 1, "");
    parse_bad("a:\n  b: 1\n - c\n", 3, "");
    parse_bad_n("a: 1\0\n", 6, 1, "NUL");
    parse_bad("a: \"x\\qy\"\n", 1, "'\\q' is not an escape");
    parse_bad("a: \"x\\x4\"\n", 1, "'\\x' is not an escape");
    parse_bad("a: \"x\\0\"\n", 1, "'\\0' is not an escape"); /* a NUL */
    parse_bad("a: \"\\ud800\"\n", 1, "not an escape");       /* a surrogate */
    parse_bad("a: \"\\U00110000\"\n", 1, "not an escape");
    char doc[420] = "a: ";
    memset(doc + 3, '[', 200);
    memset(doc + 203, ']', 200);
    doc[403] = '\0';
    parse_bad(doc, 1, "nesting");
}

/* A text of n names: a block map ("  k: name_k" lines), a flow map spread
 * over lines, or a flow list; malloc'd. */
static char *many_names(int n, int style)
{
    size_t cap = (size_t)n * 32 + 64, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len, "train: images\nnames:%s",
                            style == 0   ? "\n"
                            : style == 1 ? " {\n"
                                         : " [\n");
    for (int k = 0; k < n; k++) {
        if (style == 2)
            len += (size_t)snprintf(t + len, cap - len, "  name_%d,\n", k);
        else
            len += (size_t)snprintf(t + len, cap - len, "  %d: name_%d%s\n", k, k,
                                    style == 1 ? "," : "");
    }
    if (style != 0)
        snprintf(t + len, cap - len, "  %s\n", style == 1 ? "}" : "]");
    return t;
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A names map of 100,000 classes parses in linear time (a generous bound:
 * it takes milliseconds; a quadratic check for duplicate keys took over a
 * minute), and duplicates are still found, at the later key's line. */
static void test_many_names(void)
{
    enum { N = 100000 };
    for (int style = 0; style < 3; style++) {
        char *text = many_names(N, style);
        double t0 = seconds();
        detfeed__ynode *root = parse_ok(text);
        double dt = seconds() - t0;
        const detfeed__ynode *names = detfeed__yaml_get(root, "names");
        if (CHECK(names != NULL) && CHECK_INT(names->n, N)) {
            CHECK_INT(names->type, style == 2 ? DETFEED__Y_SEQ : DETFEED__Y_MAP);
            CHECK_STR(names->items[N - 1]->str, "name_99999");
            if (style != 2)
                CHECK_STR(names->keys[N - 1], "99999");
        }
        if (!CHECK(dt < 2.0))
            fprintf(stderr, "  %d names (style %d) took %.2f s\n", N, style, dt);
        detfeed__yaml_free(root);
        free(text);
    }
    /* Key 5 again at the end (line 2 + N + 1), and one in the middle. */
    char *text = many_names(N, 0);
    size_t len = strlen(text);
    text = realloc(text, len + 32);
    snprintf(text + len, 32, "  5: again\n");
    parse_bad(text, 2 + N + 1, "duplicate key '5'");
    free(text);
    parse_bad("names:\n  0: a\n  1: b\n  0: c\n  1: d\n", 4, "duplicate key '0'");
    parse_bad("names: {0: a, 1: b, 1: c}\n", 1, "duplicate key '1'");
}

int main(void)
{
    test_dataset_yaml();
    test_sequences();
    test_escapes();
    test_flow_over_lines();
    test_quoted_over_lines_in_blocks();
    test_tabs();
    test_errors();
    test_many_names();
    return tu_finish("test_yaml");
}
