/*
 * test_yaml.c - the dataset YAML reader: the constructs dataset files use,
 * and clear, line-numbered errors for everything else.
 */
#include "data/yaml.h"
#include "testutil.h"

#include <string.h>

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
    char doc[420] = "a: ";
    memset(doc + 3, '[', 200);
    memset(doc + 203, ']', 200);
    doc[403] = '\0';
    parse_bad(doc, 1, "nesting");
}

int main(void)
{
    test_dataset_yaml();
    test_sequences();
    test_errors();
    return tu_finish("test_yaml");
}
