/*
 * test_resolve.c - where a dataset YAML's data is, by Ultralytics 8.4's
 * rules (check_det_dataset; get_user_config_dir and SettingsManager for
 * datasets_dir): the settings file found by YOLO_CONFIG_DIR,
 * XDG_CONFIG_HOME, HOME and the temporary fallback; what of it counts; a
 * relative `path` from the working folder or under datasets_dir, never
 * from the YAML's folder; an absolute one as it is; the split entries
 * resolved; a missing dataset refused with the rule that found it. The
 * real package's answers for the same layouts are
 * tests/oracle/test_resolve_oracle.py's.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "testutil.h"

#include "data/resolve.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64], real[PATH_MAX];

static const char *at(const char *rel)
{
    return tu_at(root, rel);
}

static void write_text(const char *rel, const char *text)
{
    tu_write_text(at(rel), text);
}

static void write_image(const char *rel)
{
    tu_write_png16(at(rel));
}

/* A dataset folder rel/ with images/a.png, labels/a.txt. */
static void make_set(const char *rel)
{
    char p[256];
    mkdir(at(rel), 0755);
    snprintf(p, sizeof p, "%s/images", rel);
    mkdir(at(p), 0755);
    snprintf(p, sizeof p, "%s/labels", rel);
    mkdir(at(p), 0755);
    snprintf(p, sizeof p, "%s/images/a.png", rel);
    write_image(p);
    snprintf(p, sizeof p, "%s/labels/a.txt", rel);
    write_text(p, "0 0.5 0.5 0.2 0.2\n");
}

/* The resolved form of root/rel (the temporary folder may be behind a link). */
static const char *abs_at(const char *rel)
{
    return tu_at(real, rel);
}

/* datasets_dir and where it came from, checked against want (NULL: the
 * default, <cwd>/datasets) and a part of the from-text. */
static void expect_dir(const char *want, const char *from_part)
{
    char *dir = NULL, *from = NULL, cwd[PATH_MAX], def[PATH_MAX + 16];
    detfeed__msg msg = {{0}};
    if (!CHECK_INT(detfeed__datasets_dir(&dir, &from, &msg), 0))
        fprintf(stderr, "  %s\n", msg.text);
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    snprintf(def, sizeof def, "%s/datasets", cwd);
    CHECK_STR(dir, want ? want : def);
    if (!CHECK(from && strstr(from, from_part)))
        fprintf(stderr, "  from: '%s' lacks '%s'\n", from ? from : "", from_part);
    free(dir);
    free(from);
}

/* The settings file: which folder, and what of its JSON counts. */
static void test_settings_file(void)
{
    mkdir(at("cfg"), 0755);
    mkdir(at("cfg/Ultralytics"), 0755);
    setenv("YOLO_CONFIG_DIR", at("cfg"), 1);
    write_text("cfg/Ultralytics/settings.json",
               "{\"settings_version\": \"0.0.8\", \"datasets_dir\": \"/data/sets\", "
               "\"runs\": [1, -2.5e3, {\"a\": null}, true, \"x\\\"y\"]}");
    expect_dir("/data/sets", "from ");
    expect_dir("/data/sets", "cfg/Ultralytics/settings.json");
    /* JSON as Python reads it: escapes, the last of two keys */
    write_text(
        "cfg/Ultralytics/settings.json",
        "{\"datasets_dir\": \"/a\", \"datasets_dir\": \"/d\\u00e9\\/x\\ud83d\\ude00"
        "\\udcff\"}\n");
    expect_dir("/d\xc3\xa9/x\xf0\x9f\x98\x80\xff", "from ");
    /* what Ultralytics replaces by its defaults: not a string, no key, not
     * JSON, an object with text after it */
    const char *defaults[] = {"{\"datasets_dir\": 5}",
                              "{}",
                              "{\"datasets_dir\": \"/x\"",
                              "[\"datasets_dir\", \"/x\"]",
                              "{\"datasets_dir\": \"/x\"} {}",
                              "{\"datasets_dir\": \"/x\", \"datasets_dir\": null}"};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        write_text("cfg/Ultralytics/settings.json", defaults[i]);
        expect_dir(NULL, "Ultralytics' default: no settings file");
    }
    /* a value no path can hold */
    write_text("cfg/Ultralytics/settings.json", "{\"datasets_dir\": \"/a\\ud800\"}");
    char *dir, *from;
    detfeed__msg msg = {{0}};
    CHECK_INT(detfeed__datasets_dir(&dir, &from, &msg), DETFEED_EFORMAT);
    CHECK(strstr(msg.text, "lone UTF-16 surrogate") != NULL);
    /* no file */
    unlink(at("cfg/Ultralytics/settings.json"));
    expect_dir(NULL, "cfg/Ultralytics/settings.json gives one");
}

/* The folder: YOLO_CONFIG_DIR ("~" expanded), XDG_CONFIG_HOME, HOME; the
 * temporary fallback where it cannot be a folder. */
static void test_settings_folder(void)
{
    const char *dirs[] = {"home",
                          "home/.config",
                          "home/.config/Ultralytics",
                          "home/yc",
                          "home/yc/Ultralytics",
                          "xdg",
                          "xdg/Ultralytics",
                          "tmp"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        mkdir(at(dirs[i]), 0755);
    write_text("home/.config/Ultralytics/settings.json", "{\"datasets_dir\": \"/h\"}");
    write_text("home/yc/Ultralytics/settings.json", "{\"datasets_dir\": \"/y\"}");
    write_text("xdg/Ultralytics/settings.json", "{\"datasets_dir\": \"/x\"}");
    setenv("HOME", at("home"), 1);
    setenv("YOLO_CONFIG_DIR", "~/yc", 1);
    expect_dir("/y", "home/yc/Ultralytics/settings.json");
    setenv("YOLO_CONFIG_DIR", "", 1); /* empty: not set */
    setenv("XDG_CONFIG_HOME", at("xdg"), 1);
    expect_dir("/x", "xdg/Ultralytics/settings.json");
    unsetenv("XDG_CONFIG_HOME");
    expect_dir("/h", "home/.config/Ultralytics/settings.json");
    /* a file where the folder goes: the fallback in the temporary folder,
     * read only when it is this user's own 0700 folder */
    write_text("blocker", "a file\n");
    setenv("YOLO_CONFIG_DIR", at("blocker"), 1);
    setenv("TMPDIR", at("tmp"), 1);
    char alt[64];
    snprintf(alt, sizeof alt, "tmp/Ultralytics-%lu", (unsigned long)getuid());
    mkdir(at(alt), 0700);
    chmod(at(alt), 0700);
    char file[96];
    snprintf(file, sizeof file, "%s/settings.json", alt);
    write_text(file, "{\"datasets_dir\": \"/t\"}");
    expect_dir("/t", file);
    chmod(at(alt), 0755);
    expect_dir(NULL, "Ultralytics' default: no settings file gives one");
    unsetenv("TMPDIR");
}

/* Opens `yaml` (root-relative) for `split` with datasets_dir `dd`
 * (root-relative; NULL: the settings'); its status in *rc. */
static detfeed_dataset *open_yaml(const char *yaml, const char *dd, const char *split,
                                  int *rc)
{
    detfeed_dataset *ds;
    detfeed_dataset_create(&ds, 0);
    if (dd)
        CHECK_INT(detfeed_dataset_set_datasets_dir(ds, at(dd)), 0);
    CHECK_INT(detfeed_dataset_set_split(ds, split ? split : "train"), 0);
    *rc = detfeed_dataset_open(ds, at(yaml));
    return ds;
}

/* Opens and checks the root, the rule's words and the first image. */
static void expect_root(const char *yaml, const char *dd, const char *want_root,
                        const char *rule_part, const char *image)
{
    int rc;
    detfeed_dataset *ds = open_yaml(yaml, dd, NULL, &rc);
    if (!CHECK_INT(rc, 0))
        fprintf(stderr, "  %s: %s\n", yaml, detfeed_dataset_last_error(ds));
    CHECK_STR(detfeed_dataset_root(ds), want_root);
    const char *rule = detfeed_dataset_root_rule(ds);
    if (!CHECK(rule && strstr(rule, rule_part)))
        fprintf(stderr, "  %s: rule '%s' lacks '%s'\n", yaml, rule ? rule : "",
                rule_part);
    if (image && CHECK(detfeed_dataset_size(ds) > 0))
        CHECK_STR(detfeed_dataset_image_path(ds, 0), image);
    detfeed_dataset_destroy(ds);
}

/* Opening fails with a message holding each of the parts. */
static void expect_missing(const char *yaml, const char *dd, const char *split,
                           const char *part1, const char *part2)
{
    int rc;
    detfeed_dataset *ds = open_yaml(yaml, dd, split, &rc);
    CHECK_INT(rc, DETFEED_EIO);
    const char *msg = detfeed_dataset_last_error(ds);
    if (!CHECK(strstr(msg, part1) && strstr(msg, part2)))
        fprintf(stderr, "  '%s' lacks '%s' or '%s'\n", msg, part1, part2);
    CHECK(strstr(msg, "does not exist") && strstr(msg, "detfeed does not download"));
    detfeed_dataset_destroy(ds);
}

/* `path`: relative from the working folder or under datasets_dir, never
 * from the YAML's folder; absolute as it is; none: the YAML's folder. */
static void test_root(void)
{
    const char *dirs[] = {"dd", "work", "work/sub", "yamls", "yamls/ds"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        mkdir(at(dirs[i]), 0755);
    make_set("dd/ds");
    make_set("work/sub/ds");
    make_set("yamls/ds");
    make_set("yamls/own");
    write_text("yamls/rel.yaml", "path: ds\ntrain: images\nval: images\nnames: [a]\n");
    write_text("yamls/sub.yaml",
               "path: sub/ds\ntrain: images\nval: images\nnames: [a]\n");
    write_text("yamls/none.yaml", "train: own/images\nnames: [a]\n");
    write_text("yamls/empty.yaml", "path: \"\"\ntrain: own/images\nnames: [a]\n");
    char text[512];
    snprintf(text, sizeof text, "path: %s/\ntrain: images\nnames: [a]\n", at("dd/ds"));
    write_text("yamls/abs.yaml", text);
    snprintf(text, sizeof text, "path: %s\ntrain: images\nnames: [a]\n", at("dd/dz"));
    write_text("yamls/typo.yaml", text);
    char cwd[PATH_MAX];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    /* beside the YAML, but not from the working folder: under datasets_dir */
    CHECK_INT(chdir(at("work")), 0);
    expect_root("yamls/rel.yaml", "dd", abs_at("dd/ds"), "path: ds under datasets_dir ",
                abs_at("dd/ds/images/a.png"));
    /* there from the working folder: taken from it */
    expect_root("yamls/sub.yaml", "dd", abs_at("work/sub/ds"),
                "path: sub/ds, found from the working folder", NULL);
    /* the datasets_dir of the settings file */
    char settings[PATH_MAX + 64];
    snprintf(settings, sizeof settings, "{\"datasets_dir\": \"%s\"}", at("dd"));
    mkdir(at("cfg"), 0755);
    mkdir(at("cfg/Ultralytics"), 0755);
    write_text("cfg/Ultralytics/settings.json", settings);
    setenv("YOLO_CONFIG_DIR", at("cfg"), 1);
    expect_root("yamls/rel.yaml", NULL, abs_at("dd/ds"),
                "cfg/Ultralytics/settings.json", NULL);
    /* none, or "": the YAML's folder */
    expect_root("yamls/none.yaml", "dd", abs_at("yamls"),
                "no 'path' in the YAML: its folder", abs_at("yamls/own/images/a.png"));
    expect_root("yamls/empty.yaml", "dd", abs_at("yamls"), "its folder", NULL);
    expect_root("yamls/abs.yaml", "dd", abs_at("dd/ds"), ", absolute", NULL);
    /* a mistyped absolute path: missing, never the YAML's folder */
    expect_missing("yamls/typo.yaml", "dd", NULL, "dd/dz/images, which does not exist",
                   "absolute, not there");
    /* a relative one that is nowhere: missing under datasets_dir */
    write_text("yamls/gone.yaml", "path: gone\ntrain: images\nnames: [a]\n");
    expect_missing("yamls/gone.yaml", "dd", NULL, "yamls/gone.yaml:2: 'train' entry",
                   "path: gone under datasets_dir ");
    CHECK_INT(chdir(cwd), 0);
}

/* Split entries: resolved (links followed), "../" dropped for a lone
 * entry that is not there, not for a list's; a bare name not a file. */
static void test_entries(void)
{
    mkdir(at("ent"), 0755);
    make_set("ent/real");
    CHECK_INT(symlink(at("ent/real"), at("ent/link")), 0);
    write_text("ent/dot.yaml", "path: ent/link\ntrain: ../images\n"
                               "val: [../images]\nnames: [a]\n");
    char cwd[PATH_MAX];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK_INT(chdir(root), 0);
    /* ent/link/../images is ent/images: not there; ent/link/images is, and
     * it is the link's target that the images are found under */
    expect_root("ent/dot.yaml", NULL, abs_at("ent/real"), "found from the working",
                abs_at("ent/real/images/a.png"));
    expect_missing("ent/dot.yaml", NULL, "val", "'val' entry '../images' is ",
                   "ent/images, which");
    CHECK_INT(chdir(cwd), 0);
    detfeed_dataset *ds;
    detfeed_dataset_create(&ds, 0);
    CHECK_INT(detfeed_dataset_open(ds, "coco8-not-here.yaml"), DETFEED_EIO);
    CHECK(strstr(detfeed_dataset_last_error(ds), "packaged ones") != NULL);
    CHECK(detfeed_dataset_root(ds) == NULL);
    detfeed_dataset_destroy(ds);
}

/* Python's realpath: links followed before "..", "." dropped, the part
 * that is not there joined as it is. */
static void test_path_resolve(void)
{
    mkdir(at("rp"), 0755);
    mkdir(at("rp/a"), 0755);
    mkdir(at("rp/a/b"), 0755);
    CHECK_INT(symlink(at("rp/a/b"), at("rp/l")), 0);
    char *p = detfeed__path_resolve(at("rp/l/../x/./y//"));
    CHECK_STR(p, abs_at("rp/a/x/y"));
    free(p);
    p = detfeed__path_resolve("/../..//usr/./");
    CHECK_STR(p, "/usr");
    free(p);
    CHECK_INT(symlink(at("rp/loop"), at("rp/loop")), 0);
    p = detfeed__path_resolve(at("rp/loop/z"));
    CHECK(p && strstr(p, "loop/z") != NULL); /* left as it is */
    free(p);
}

int main(void)
{
    if (!tu_temp_dir(root, sizeof root, "resolve"))
        return tu_finish("test_resolve");
    CHECK(realpath(root, real) != NULL);
    unsetenv("XDG_CONFIG_HOME");
    test_settings_file();
    test_settings_folder();
    test_root();
    test_entries();
    test_path_resolve();
    CHECK(tu_remove_tree(root));
    return tu_finish("test_resolve");
}
