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


def dataset_yaml(folder, names):
    src = os.path.dirname(data("detect"))
    body = "".join('  - "%s"\n' % n for n in names)
    path = os.path.join(folder, "escapes.yaml")
    with open(path, "w") as f:
        f.write("path: %s\ntrain: images/train\nval: images/val\nnames:\n%s" % (src, body))
    return path


def random_name(rng):
    return "".join(rng.choice(ESCAPES) if rng.random() < 0.4 else rng.choice(PLAIN)
                   for _ in range(rng.randint(1, 12)))


@pytest.mark.parametrize("seed", range(12))
def test_escaped_names_read_as_pyyaml_reads_them(tmp_path, seed):
    rng = random.Random(seed)
    names = [random_name(rng) for _ in range(80)]  # coco8's ids are below 80
    path = dataset_yaml(str(tmp_path), names)
    with open(path, encoding="utf-8") as f:
        want = yaml.safe_load(f)["names"]
    with detfeed.Loader(path, imgsz=64, batch=2, workers=1, cache="none",
                        verify_record="none", tensors="numpy") as loader:
        got = [loader.dataset.names[k] for k in range(len(want))]
    assert got == want


@pytest.mark.parametrize("escape", ["\\q", "\\x4", "\\u12", "\\0", "\\ud800"])
def test_escapes_pyyaml_refuses_or_that_hold_no_character_are_refused(tmp_path, escape):
    path = dataset_yaml(str(tmp_path), ["ok"] * 79 + ["bad%s" % escape])
    if escape not in ("\\0", "\\ud800"):  # PyYAML gives a NUL, a lone surrogate
        with pytest.raises(yaml.YAMLError), open(path, encoding="utf-8") as f:
            yaml.safe_load(f)
    with pytest.raises(detfeed.DetfeedError, match="is not an escape"):
        detfeed.Loader(path, imgsz=64, batch=2, workers=1, tensors="numpy")
