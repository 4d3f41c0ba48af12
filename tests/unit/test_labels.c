/*
 * test_labels.c - label files: the three tasks, Ultralytics' rules, and each
 * kind of bad line reported with its line number and reason.
 */
#include "data/labels.h"
#include "testutil.h"

#include <string.h>

typedef struct seen {
    int n, line[16];
    char reason[16][160];
} seen;

static void collect(void *ctx, const char *file, int line, const char *reason)
{
    seen *s = ctx;
    CHECK_STR(file, "x.txt");
    if (s->n < 16) {
        s->line[s->n] = line;
        snprintf(s->reason[s->n], sizeof s->reason[0], "%s", reason);
    }
    s->n++;
}

static const detfeed__label_rules detect = {
    .nc = 80, .max_line = 4096, .max_lines = 1000};

static int parse(const char *text, const detfeed__label_rules *r, detfeed__labels *out,
                 int *dups, seen *s)
{
    memset(s, 0, sizeof *s);
    return detfeed__labels_parse(text, strlen(text), "x.txt", r, out, dups, collect, s);
}

/* One bad line among good ones: rejected with that line and words. */
static void bad(const char *text, const detfeed__label_rules *r, int line,
                const char *words)
{
    detfeed__labels l;
    seen s;
    int dups;
    int rc = parse(text, r, &l, &dups, &s);
    if (!CHECK_INT(rc, DETFEED_ELABEL) || !CHECK_INT(s.n, 1) ||
        !CHECK_INT(s.line[0], line) || !CHECK(strstr(s.reason[0], words) != NULL))
        fprintf(stderr, "  text %s -> \"%s\"\n", text, s.reason[0]);
    CHECK(l.n == 0 && l.block_ == NULL);
}

static void test_detect(void)
{
    detfeed__labels l;
    seen s;
    int dups;
    CHECK_INT(parse("\xEF\xBB\xBF"
                    "45 0.5 0.25 0.1 0.2\r\n\r\n  \n0 1 1 1.01 0\r\n",
                    &detect, &l, &dups, &s),
              0);
    CHECK(l.n == 2 && s.n == 0 && dups == 0 && l.seg_start == NULL && l.kpts == NULL);
    CHECK(l.cls[0] == 45 && l.boxes[1] == 0.25f && l.boxes[3] == 0.2f && l.cls[1] == 0);
    CHECK(l.boxes[6] == 1.01f);
    detfeed__labels_free(&l);
    CHECK_INT(parse("", &detect, &l, &dups, &s), 0);
    CHECK(l.n == 0);
    CHECK_INT(parse("\n \n", &detect, &l, &dups, &s), 0);
    CHECK(l.n == 0);
    /* Duplicates: removed, counted, and the rest in sorted order. */
    CHECK_INT(
        parse("3 0.5 0.5 0.2 0.2\n1 0.1 0.1 0.1 0.1\n3 0.5 0.5 0.2 0.2\n2 0 0 0 0\n",
              &detect, &l, &dups, &s),
        0);
    CHECK(l.n == 3 && dups == 1 && l.cls[0] == 1 && l.cls[1] == 2 && l.cls[2] == 3);
    detfeed__labels_free(&l);
    /* Without duplicates the file order stays. */
    CHECK_INT(parse("3 0.5 0.5 0.2 0.2\n1 0.1 0.1 0.1 0.1\n", &detect, &l, &dups, &s),
              0);
    CHECK(l.n == 2 && dups == 0 && l.cls[0] == 3);
    detfeed__labels_free(&l);
}

static void test_bad_lines(void)
{
    const char *ok = "1 0.5 0.5 0.2 0.2\n";
    char buf[256];
#define BAD(line2, words)                                                              \
    do {                                                                               \
        snprintf(buf, sizeof buf, "%s%s\n%s", ok, line2, ok);                          \
        bad(buf, &detect, 2, words);                                                   \
    } while (0)
    BAD("1 nan 0.5 0.2 0.2", "not finite");
    BAD("1 0.5 inf 0.2 0.2", "not finite");
    BAD("1 0.5 -Infinity 0.2 0.2", "not finite");
    BAD("1 0.5 0.5 -0.2 0.2", "below -0.01");
    BAD("-1 0.5 0.5 0.2 0.2", "negative class");
    BAD("1 0.5 1.5 0.2 0.2", "above 1.01");
    BAD("1 0.5 0.5 0.2", "expected 5 columns");
    BAD("1 0.5 0.5 0.2 0.2 0.3", "expected 5 columns");
    BAD("1 0.5 abc 0.2 0.2", "non-numeric value 'abc'");
    BAD("1 0.5 0x1p-1 0.2 0.2", "non-numeric");
    BAD("1 0.5 1e999 0.2 0.2", "float32 range");
    BAD("1 0.5 1e39 0.2 0.2", "float32 range");
    BAD("80 0.5 0.5 0.2 0.2", "not below the 80 classes");
    BAD("1.5 0.5 0.5 0.2 0.2", "not a whole number");
#undef BAD
    /* Every bad line is reported, not just the first. */
    detfeed__labels l;
    seen s;
    int dups;
    CHECK_INT(parse("1 2 0 0 0\nx\n1 0 0 0 0\n99 0 0 0 0\n", &detect, &l, &dups, &s),
              DETFEED_ELABEL);
    CHECK(s.n == 3 && s.line[0] == 1 && s.line[1] == 2 && s.line[2] == 4);
    /* Limits. */
    detfeed__label_rules small = detect;
    small.max_line = 20;
    bad("1 0.5 0.5 0.2 0.2\n1 0.500000 0.500000 0.2 0.2\n", &small, 2,
        "longer than 20");
    small = detect;
    small.max_lines = 2;
    bad("1 0 0 0 0\n1 0 0 0 0\n1 0 0 0 0\n", &small, 0, "more than 2 labels");
    bad("1 0 0 0 0\n1 0\0 0 0 0\n", &detect, 2, "");
}

static void test_segment(void)
{
    detfeed__labels l;
    seen s;
    int dups;
    /* Any line with more than 6 fields makes the whole file polygons; a 5-field
     * line is then a 2-point polygon. */
    CHECK_INT(
        parse("7 0.1 0.2 0.5 0.2 0.3 0.6\n2 0.2 0.2 0.4 0.6\n", &detect, &l, &dups, &s),
        0);
    if (CHECK(l.n == 2 && l.seg_start != NULL)) {
        CHECK(l.seg_start[0] == 0 && l.seg_start[1] == 3 && l.seg_start[2] == 5);
        CHECK(l.boxes[0] == (0.1f + 0.5f) / 2 && l.boxes[1] == (0.2f + 0.6f) / 2);
        CHECK(l.boxes[2] == 0.5f - 0.1f && l.boxes[3] == 0.6f - 0.2f);
        CHECK(l.seg_xy[2 * 4] == 0.4f && l.seg_xy[2 * 4 + 1] == 0.6f);
    }
    detfeed__labels_free(&l);
    bad("7 0.1 0.2 0.5 0.2 0.3 0.6\n2 0.2 0.2 0.4\n", &detect, 2,
        "pairs of coordinates");
    bad("7 0.1 0.2 0.5 0.2 0.3 0.6\n2 0.2 0.2 1.4 0.6 1.5 0.1\n", &detect, 2,
        "above 1.01");
}

static void test_pose(void)
{
    detfeed__label_rules pose3 = {
        .nc = 1, .nkpt = 2, .kdim = 3, .max_line = 4096, .max_lines = 100};
    detfeed__label_rules pose2 = {
        .nc = 1, .nkpt = 2, .kdim = 2, .max_line = 4096, .max_lines = 100};
    detfeed__labels l;
    seen s;
    int dups;
    CHECK_INT(parse("0 0.5 0.5 0.2 0.2 0.1 0.2 2 0.3 0.4 0\n", &pose3, &l, &dups, &s),
              0);
    CHECK(l.n == 1 && l.nkpt == 2 && l.kpts[2] == 2 && l.kpts[3] == 0.3f &&
          l.kpts[5] == 0);
    detfeed__labels_free(&l);
    /* D = 2: visibility 0 where x or y is negative, else 1. */
    CHECK_INT(parse("0 0.5 0.5 0.2 0.2 0.1 0.2 -0.005 0.4\n", &pose2, &l, &dups, &s),
              0);
    CHECK(l.n == 1 && l.kpts[2] == 1 && l.kpts[5] == 0);
    detfeed__labels_free(&l);
    bad("0 0.5 0.5 0.2 0.2 0.1 0.2 2 0.3 0.4\n", &pose3, 1, "expected 11 columns");
    bad("0 0.5 0.5 0.2 0.2 0.1 1.2 2 0.3 0.4 0\n", &pose3, 1, "above 1.01");
    /* Ultralytics bounds only the keypoints here: a box centre of 1.2 passes. */
    CHECK_INT(parse("0 1.2 0.5 0.2 0.2 0.1 0.2 2 0.3 0.4 0\n", &pose3, &l, &dups, &s),
              0);
    detfeed__labels_free(&l);
}

/* Python's str.splitlines, which Ultralytics reads label files with: \n, \r,
 * \r\n, \v, \f, \x1c-\x1e and (in UTF-8) U+0085, U+2028, U+2029 end a line. */
static void test_line_ends(void)
{
    static const char *const ends[] = {
        "\r",   "\n",   "\r\n",     "\v",           "\f",          "\x1c",
        "\x1d", "\x1e", "\xC2\x85", "\xE2\x80\xA8", "\xE2\x80\xA9"};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "0 0.5 0.5 0.2 0.2%s1 0.3 0.3 0.1 0.1%s", ends[i],
                 ends[i]);
        detfeed__labels l;
        seen s;
        int dups;
        int rc = parse(text, &detect, &l, &dups, &s);
        if (!CHECK_INT(rc, 0) || !CHECK_INT(l.n, 2))
            fprintf(stderr, "  line end %zu: \"%s\"\n", i, s.n ? s.reason[0] : "");
        else
            CHECK(l.cls[1] == 1 && l.boxes[4] == 0.3f);
        detfeed__labels_free(&l);
    }
    /* Line numbers count every kind of line end (\r\n is one). */
    bad("0 0.5 0.5 0.2 0.2\r1 0.5 0.5 0.2 0.2\r\n2 0.5 nan 0.2 0.2\r", &detect, 3,
        "not finite");
    /* Python's whitespace between values: \x1f and U+00A0 split too. */
    detfeed__labels l;
    seen s;
    int dups;
    CHECK_INT(parse("0\x1f"
                    "0.5\xC2\xA0"
                    "0.5 0.2 0.2\n",
                    &detect, &l, &dups, &s),
              0);
    CHECK_INT(l.n, 1);
    detfeed__labels_free(&l);
}

/* Class ids: whole numbers in a sane range even without nc; messages that
 * show the value that failed. */
static void test_ids_and_messages(void)
{
    const detfeed__label_rules open_nc = {.nc = 0, .max_line = 4096, .max_lines = 100};
    bad("1e20 0.5 0.5 0.2 0.2\n", &open_nc, 1, "class id 1e+20 is above 999999");
    bad("1000000 0.5 0.5 0.2 0.2\n", &open_nc, 1, "class id 1000000 is above 999999");
    /* whole numbers in plain digits, as the file has them (not 8e+01) */
    bad("80 0.5 0.5 0.2 0.2\n", &detect, 1, "class id 80 is not below the 80 classes");
    bad("-3 0.5 0.5 0.2 0.2\n", &detect, 1, "negative class id -3");
    detfeed__labels l;
    seen s;
    int dups;
    CHECK_INT(parse("999999 0.5 0.5 0.2 0.2\n", &open_nc, &l, &dups, &s), 0);
    CHECK(l.n == 1 && l.cls[0] == 999999.0f);
    detfeed__labels_free(&l);
    /* Enough digits to see why 1.0100001 is above 1.01 (the shortest text
     * that reads back as the same float32, as NumPy prints it). */
    bad("0 0.5 0.5 0.2 1.0100001\n", &detect, 1, "height 1.0100001 is above 1.01");
    bad("0 0.5 0.5 -0.0100001 0.2\n", &detect, 1, "width -0.0100001 is below -0.01");
    /* A polygon: the value checked is its box's, and the message says so. */
    bad("7 0.1 0.2 0.5 0.2 0.3 0.6\n2 0.2 0.2 1.4 0.6 1.5 0.1\n", &detect, 2,
        "box width 1.3 of the polygon's points is above 1.01");
    const detfeed__label_rules pose = {
        .nc = 1, .nkpt = 2, .kdim = 3, .max_line = 4096, .max_lines = 100};
    bad("0 0.5 0.5 0.2 0.2 0.1 0.2 2 0.3 1.2 0\n", &pose, 1,
        "keypoint 2 y 1.2 is above");
}

int main(void)
{
    test_detect();
    test_bad_lines();
    test_segment();
    test_pose();
    test_line_ends();
    test_ids_and_messages();
    return tu_finish("test_labels");
}
