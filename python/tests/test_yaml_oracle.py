"""Dataset YAML text as PyYAML (the reader Ultralytics uses) reads it: class
names in double quotes with YAML's escapes, compared name by name with
yaml.safe_load over many random names, and the escapes PyYAML refuses are
refused too."""
import os
import random

import pytest

import detfeed
from test_loader import data

yaml = pytest.importorskip("yaml")

ESCAPES = ["\\x41", "\\x7e", "\\u00e9", "\\u4e2d", "\\U0001F600", "\\t", "\\n", "\\\\",
           '\\"', "\\/", "\\N", "\\_", "\\L", "\\P", "\\a", "\\b", "\\e", "\\ ", "\\r",
           "\\v", "\\f", "\\xA0", "\\uFFFD"]
PLAIN = "abcXYZ019 -_.:/#'"


def dataset_with(folder, body):
    """A dataset YAML of coco8's images whose text ends in `body`."""
    path = os.path.join(str(folder), "names.yaml")
    with open(path, "w") as f:
        f.write("path: %s\ntrain: images/train\nval: images/val\n%s"
                % (os.path.dirname(data("detect")), body))
    return path


def pyyaml_names(path, n=80):
    """The first n names as yaml.safe_load reads them (a map's by id)."""
    with open(path, encoding="utf-8") as f:
        names = yaml.safe_load(f)["names"]
    return [names[k] for k in range(n)]


def detfeed_names(path, n=80):
    with detfeed.Loader(path, imgsz=64, batch=2, workers=1, cache="none",
                        verify_record="none", tensors="numpy") as loader:
        return [loader.dataset.names[k] for k in range(n)]


def dataset_yaml(folder, names):
    return dataset_with(folder, "names:\n" + "".join('  - "%s"\n' % n for n in names))


def random_name(rng):
    return "".join(rng.choice(ESCAPES) if rng.random() < 0.4 else rng.choice(PLAIN)
                   for _ in range(rng.randint(1, 12)))


@pytest.mark.parametrize("seed", range(12))
def test_escaped_names_read_as_pyyaml_reads_them(tmp_path, seed):
    rng = random.Random(seed)
    names = [random_name(rng) for _ in range(80)]  # coco8's ids are below 80
    path = dataset_yaml(tmp_path, names)
    assert detfeed_names(path) == pyyaml_names(path)


@pytest.mark.parametrize("escape", ["\\q", "\\x4", "\\u12", "\\0", "\\ud800"])
def test_escapes_pyyaml_refuses_or_that_hold_no_character_are_refused(tmp_path, escape):
    path = dataset_yaml(tmp_path, ["ok"] * 79 + ["bad%s" % escape])
    if escape not in ("\\0", "\\ud800"):  # PyYAML gives a NUL, a lone surrogate
        with pytest.raises(yaml.YAMLError):
            pyyaml_names(path)
    with pytest.raises(detfeed.DetfeedError, match="is not an escape"):
        detfeed.Loader(path, imgsz=64, batch=2, workers=1, tensors="numpy")


WORDS = ["a", "b c", "x]y", "p{q", "#h", "d # e", "f,g", "k: v", "it's", 'say "hi"']


def quoted(rng, word):
    """`word` in double or single quotes, its spaces sometimes line breaks
    (with trailing blanks, empty lines; in double quotes an escaped break, or
    an escaped space or tab before the break)."""
    double = rng.random() < 0.6
    text = word.replace("\\", "\\\\").replace('"', '\\"') if double else word.replace("'", "''")
    q = '"' if double else "'"
    out = []
    for ch in text:
        if ch == " " and double and rng.random() < 0.2:  # an escaped space kept before a fold
            out.append("\\" + rng.choice([" ", "\t"]) + rng.choice(["", "  "]) + "\n  ")
        elif ch == " " and rng.random() < 0.7:
            out.append(rng.choice([" ", "", "  "]) + "\n" + "\n" * rng.randint(0, 2) + "    ")
        elif double and ch.isalnum() and rng.random() < 0.1:  # not inside an escape
            out.append(ch + rng.choice([" ", ""]) + "\\\n" + "\n" * rng.randint(0, 1) + "  ")
        else:
            out.append(ch)
    return q + "".join(out) + q


def flow_names(rng, n):
    """A flow list of n names over many lines, with comments between them."""
    items = []
    for k in range(n):
        word = rng.choice(WORDS) + str(k)
        item = quoted(rng, word) if rng.random() < 0.7 or not word.replace(" ", "").isalnum() \
            else word
        items.append(item)
    text = "names: [" + items[0]
    for item in items[1:]:
        text += "," + rng.choice([" ", "\n  ", "  # note, [x]\n  ", "\n\n   # note\n  "]) + item
    return text + rng.choice(["]", "\n]", "]  # end"]) + "\n"


@pytest.mark.parametrize("seed", range(16))
def test_flow_lists_over_lines_read_as_pyyaml_reads_them(tmp_path, seed):
    """Names in a flow list over many lines: comments between items, quoted
    names folded over lines as PyYAML folds them (a break is a space, empty
    lines are line feeds, an escaped break is nothing, trailing blanks
    go), brackets, commas and # inside quotes."""
    path = dataset_with(tmp_path, flow_names(random.Random(seed), 80))
    assert detfeed_names(path) == pyyaml_names(path)


def block_names(rng, n):
    """A block map or sequence of n names, quoted ones folded over lines."""
    seq = rng.random() < 0.5
    lines = ["names:"]
    for k in range(n):
        word = quoted(rng, rng.choice(WORDS) + str(k)).replace("\n    ", "\n      ")
        lines.append(("  - %s" if seq else "  %d: %%s" % k) % word +
                     rng.choice(["", "  # note"]))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(8))
def test_quoted_names_over_lines_in_blocks_read_as_pyyaml_reads_them(tmp_path, seed):
    path = dataset_with(tmp_path, block_names(random.Random(seed), 80))
    assert detfeed_names(path) == pyyaml_names(path)


@pytest.mark.parametrize("text", ['names: ["a\n  b', "names: ['a\n\n", 'names: ["a\\\n',
                                  'names:\n  0: "a\n  b\n'])
def test_a_quoted_name_left_open_is_refused(tmp_path, text):
    path = dataset_with(tmp_path, text)
    with pytest.raises(yaml.YAMLError):
        pyyaml_names(path)
    with pytest.raises(detfeed.DetfeedError, match="unterminated .*-quoted string"):
        detfeed.Loader(path, imgsz=64, batch=2, workers=1, tensors="numpy")


@pytest.mark.parametrize("text", ['names:\n  0: "a\n---\n  b"\n', 'names: ["a\n... ", b]\n'])
def test_a_document_marker_inside_a_quoted_name_is_refused(tmp_path, text):
    path = dataset_with(tmp_path, text)
    with pytest.raises(yaml.YAMLError):
        pyyaml_names(path)
    with pytest.raises(detfeed.DetfeedError, match="document marker"):
        detfeed_names(path)


NAMES = ", ".join("n%d" % k for k in range(2, 80))


@pytest.mark.parametrize("text", [
    'download: |\n  for x in y:\n  \tprint(x)\nnames: [a, b, %s]\n' % NAMES,  # a script's tab
    'names: ["a\n\tb", c, %s]\n' % NAMES,  # a tab before a quoted name's next line
    'names: [a,\n\tb, %s]\n' % NAMES,  # a tab indenting flow items: PyYAML refuses
    'names:\n\t- a\n',  # a tab indenting a block: PyYAML refuses
])
def test_tabs_are_taken_where_pyyaml_takes_them(tmp_path, text):
    path = dataset_with(tmp_path, text)
    try:
        want = pyyaml_names(path)
    except yaml.YAMLError:
        with pytest.raises(detfeed.DetfeedError, match="tab used for indentation"):
            detfeed_names(path)
        return
    assert detfeed_names(path) == want
